//! Fuzz target: see nvcc_wrapper::fuzzing::host_config.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| nvcc_wrapper::fuzzing::host_config(data));
