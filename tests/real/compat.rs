//! `compat scan` on every real toolkit and header set the test script fetches, and `doctor` on real toolchains.
//! Needs the host_config.h of every release (scripts/fetch-toolkits.sh headers-X.Y), real NVCC 11.8, 12.4 and 13.0,
//! g++-11 and g++-12.

use crate::support::*;

/// Every release whose real host_config.h the script can fetch (the list). A release whose row disagrees
/// with compat-data/host-compilers.toml fails, naming both.
const SCANNED: &[&str] =
    &["11.8", "12.0", "12.4", "12.5", "12.6", "12.8", "12.9", "13.0", "13.1", "13.2", "13.3", "13.4", "13.5"];

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn compat_scan_agrees_with_the_table_for_every_fetched_release() {
    let headers = cache_dir().join("headers");
    let mut scanned = 0;
    for release in SCANNED {
        let dir = headers.join(release);
        if !dir.join("include/crt/host_config.h").is_file() {
            cannot_run(&format!("{} is missing: run scripts/fetch-toolkits.sh headers-{release}", dir.display()));
            continue;
        }
        let out = assert_cmd::Command::new(WRAPPER).args(["compat", "scan"]).arg(&dir).output().unwrap();
        assert!(out.status.success(), "{release}: {}{}", stdout(&out), stderr(&out));
        let text = stdout(&out);
        assert!(text.contains(&format!("nvcc = \"{release}.")), "{release}: {text}");
        assert!(text.ends_with("# agrees with the compatibility table\n"), "{release}: {text}");
        scanned += 1;
    }
    // Full toolkits carry the same header under targets/: scan them too.
    for release in ["11.8", "12.4", "13.0"] {
        let Some(root) = real_toolkit(release) else { continue };
        assert_cmd::Command::new(WRAPPER).args(["compat", "scan"]).arg(&root).assert().success();
        scanned += 1;
    }
    eprintln!("scanned {scanned} real headers");
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn compat_scan_fails_on_a_table_that_disagrees() {
    let Some(root) = real_toolkit("11.8") else { return };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("host-compilers.toml"),
        "[[release]]\nnvcc = \"11.8\"\naccepts = { gcc = 12, clang = 14 }\nsource = \"wrong on purpose\"\n",
    )
    .unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, format!("compat-data = \"{}\"\n", dir.path().display())).unwrap();
    let out = assert_cmd::Command::new(WRAPPER)
        .env("NVCC_WRAPPER_CONFIG", &config)
        .args(["compat", "scan"])
        .arg(&root)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("says GCC up to 11 and Clang up to 14, but the table's row 11.8 says GCC up to 12"),
        "{}",
        stderr(&out)
    );
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn doctor_reports_the_choice_and_the_libstdcxx_check() {
    let Some(root) = real_toolkit("11.8") else { return };
    if real_program("g++-11").is_none() || real_program("g++-12").is_none() {
        return;
    }
    let sb = RealSandbox::new(&root);
    let good = sb.write(
        "good.toml",
        &format!("nvcc = \"{}\"\n[host-compiler]\nstdenv = \"/usr/bin/g++-12\"\n", root.join("bin/nvcc").display()),
    );
    // The wrapper's `nvcc` first on PATH, as doctor wants it (doctor_fails_when_nvcc_on_path_is_not_the_wrapper).
    let out = assert_cmd::Command::new(WRAPPER)
        .env("PATH", sb.path())
        .env("NVCC_WRAPPER_CONFIG", &good)
        .arg("doctor")
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(text.contains("release:     11.8.89"), "{text}");
    assert!(text.contains("-ccbin=/usr/bin/g++-11"), "{text}");
    assert!(text.contains("libstdc++:   ") && text.contains("provides up to GLIBCXX_3.4."), "{text}");
    assert!(text.ends_with("no problems found\n"), "{text}");

    let bad = sb.write(
        "bad.toml",
        &format!(
            "nvcc = \"{}\"\n[host-compiler]\nstdenv = \"/usr/bin/g++-12\"\ncandidates = [\"/usr/bin/g++-12\"]\n",
            root.join("bin/nvcc").display()
        ),
    );
    let out = assert_cmd::Command::new(WRAPPER)
        .env("PATH", sb.path())
        .env("NVCC_WRAPPER_CONFIG", &bad)
        .arg("doctor")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let text = stdout(&out);
    assert!(text.contains("problem: no usable host compiler: nvcc 11.8 accepts GCC up to 11"), "{text}");
    assert_eq!(text.matches("problem:").count(), 1, "{text}");
}
