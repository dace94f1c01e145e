//! Fuzz target: see nvcc_wrapper::fuzzing::splitters.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| nvcc_wrapper::fuzzing::splitters(data));
