//! The fuzz corpus in `fuzz/corpus/<target>/` (seeds, what `cargo +nightly fuzz` found worth keeping, and any input
//! that once crashed the wrapper) replayed on stable Rust through the same entry points the fuzz targets drive
//! (`nvcc_wrapper::fuzzing`), so that every CI run checks them even though fuzzing itself needs nightly.

use std::path::Path;

/// A fuzz target's entry point.
type Entry = fn(&[u8]);

fn replay(target: &str, entry: Entry) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus").join(target);
    let mut inputs = 0;
    for file in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = file.unwrap().path();
        entry(&std::fs::read(&path).unwrap());
        inputs += 1;
    }
    inputs
}

#[test]
fn every_corpus_input_of_every_fuzz_target_runs_to_completion() {
    let targets: [(&str, Entry); 4] = [
        ("command_line", nvcc_wrapper::fuzzing::command_line),
        ("splitters", nvcc_wrapper::fuzzing::splitters),
        ("config_file", nvcc_wrapper::fuzzing::config_file),
        ("host_config", nvcc_wrapper::fuzzing::host_config),
    ];
    for (target, entry) in targets {
        let n = replay(target, entry);
        assert!(n >= 1, "fuzz/corpus/{target} is empty");
    }
}
