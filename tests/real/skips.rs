//! A real test that cannot run here never counts as passed (issue 50, item 3): run against a cache with no toolkit,
//! one of this binary's own tests fails, naming the fetch command; with NVCC_WRAPPER_SKIP_MISSING=1 it skips, says so
//! without `--nocapture`, and the line after libtest's summary counts it.

// The test runs its own binary again: it reads where that is.
#![allow(clippy::disallowed_methods)]

use std::process::Command;

use crate::support::*;

/// A real test that needs one toolkit and nothing else.
const NEEDS_A_TOOLKIT: &str = "gpu::jetson_orin_is_refused_for_x86_and_expands_for_jetson";

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn a_test_that_cannot_run_fails_unless_skipping_was_asked_and_then_is_counted() {
    let empty = tempfile::tempdir().unwrap();
    let run = |skip: Option<&str>| {
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.args(["--include-ignored", "--exact", NEEDS_A_TOOLKIT]).env("NVCC_WRAPPER_CACHE", empty.path());
        match skip {
            Some(value) => cmd.env(SKIP_MISSING, value),
            None => cmd.env_remove(SKIP_MISSING),
        };
        cmd.output().unwrap()
    };
    let failed = run(None);
    let said = stdout(&failed) + &stderr(&failed);
    assert_eq!(failed.status.code(), Some(101), "{said}");
    assert!(said.contains("is not fetched into") && said.contains("run scripts/fetch-toolkits.sh"), "{said}");
    assert!(said.contains(&format!("or set {SKIP_MISSING}=1")), "{said}");
    assert_eq!(run(Some("0")).status.code(), Some(101), "only `1` asks to skip");

    let skipped = run(Some("1"));
    let said = stdout(&skipped) + &stderr(&skipped);
    assert!(skipped.status.success(), "{said}");
    assert!(said.contains(&format!("note: {NEEDS_A_TOOLKIT} skipped: real NVCC")), "{said}");
    assert!(stdout(&skipped).contains("test result: ok. 1 passed"), "{said}");
    // Written at exit, after libtest's summary: the last line of stderr.
    let summary = stderr(&skipped).lines().last().unwrap_or_default().to_string();
    assert!(
        summary.starts_with(&format!("note: 1 test of these skipped what this machine lacks, as {SKIP_MISSING}=1")),
        "the line after the summary: {summary:?}\n{said}"
    );
}
