//! The binary's layout: link/hot-path.ld (scripts/hot-path.sh) places the code a drop-in call runs first, and the
//! read-only data it reads and the variables it touches together, each in a section of its own; the function names
//! it lists must still name this build's.
//! A list gone stale builds and runs, only slower (a third more pages of code faulted in per call,
//! docs/benchmarks.md): this test is what says so.

use std::process::Command;

/// The functions the script lists by name (Rust's, and the C `main`), as patterns (`*` for a crate's hash).
fn listed() -> Vec<String> {
    let script = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/link/hot-path.ld")).unwrap();
    script
        .lines()
        .filter_map(|line| line.trim().strip_prefix("*(.text.")?.split([' ', ')']).next().map(String::from))
        .collect()
}

/// Whether `name` matches `pattern`, whose `*` stands for any run of characters.
fn matches(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = name.strip_prefix(first) else { return false };
    let mut parts: Vec<&str> = parts.collect();
    let Some(last) = parts.pop() else { return rest.is_empty() };
    for part in parts {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

fn tool(program: &str, args: &[&str]) -> String {
    let out = Command::new(program).args(args).output().unwrap_or_else(|e| panic!("{program} (binutils): {e}"));
    assert!(out.status.success(), "{program} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_drop_in_path_is_linked_first_under_names_this_build_still_has() {
    let binary = env!("CARGO_BIN_EXE_nvcc-wrapper");
    let sections = tool("readelf", &["-SW", binary]);
    for section in [" .text.hot_path ", " .rodata.hot_path ", " .data.hot_path ", " .bss.hot_path "] {
        assert!(
            sections.contains(section),
            "the wrapper was linked without link/hot-path.ld's{section}section (build.rs passes it on Linux, but not \
             for mold or gold): {sections}"
        );
    }
    let symbols = tool("nm", &["--defined-only", binary]);
    let symbols: Vec<&str> = symbols.lines().filter_map(|line| line.split(' ').nth(2)).collect();
    let listed = listed();
    assert!(listed.len() > 100, "link/hot-path.ld lists only {} Rust functions", listed.len());
    let missing: Vec<&String> = listed.iter().filter(|p| !symbols.iter().any(|s| matches(p, s))).collect();
    assert!(
        missing.len() * 10 <= listed.len(),
        "{} of the {} functions link/hot-path.ld lists name nothing in this build: run scripts/hot-path.sh to list \
         them anew (RUSTFLAGS, when set, replaces .cargo/config.toml's v0 mangling: add -C symbol-mangling-version=v0 \
         to it). The first: {:#?}",
        missing.len(),
        listed.len(),
        &missing[..missing.len().min(5)]
    );
}

#[test]
fn a_pattern_matches_across_a_crates_hash_and_nothing_more() {
    let pattern = "_RNvNtCs*_3std3env11current_dir";
    assert!(matches(pattern, "_RNvNtCsjrHSEGnQ3l9_3std3env11current_dir"));
    assert!(matches(pattern, "_RNvNtCs1_3std3env11current_dir"));
    assert!(!matches(pattern, "_RNvNtCsjrHSEGnQ3l9_3std3env11current_dir2"));
    assert!(!matches(pattern, "_RNvNtCsjrHSEGnQ3l9_3std3env8home_dir"));
    assert!(matches("a*b*c", "a__b__c") && !matches("a*b*c", "a__c") && matches("ab", "ab") && !matches("ab", "abc"));
}
