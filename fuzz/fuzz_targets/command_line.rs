//! Fuzz target: see nvcc_wrapper::fuzzing::command_line.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| nvcc_wrapper::fuzzing::command_line(data));
