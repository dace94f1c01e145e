//! Hostile or careless input against real NVCC releases: what the fake nvcc's tests in tests/wrapper/hostile.rs
//! show, checked where only the real nvcc can tell (issue 26). Needs real NVCC 12.4 and 13.5, and bash.

use crate::support::*;

/// Item 8 with the real nvcc 12.4, which ignores `NVCC_CCBIN`: nvcc alone builds with `NVCC_CCBIN=/nonexistent/g++`,
/// and so does the wrapper now ("Failed to preprocess host compiler properties" before).
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn nvcc_12_4_builds_with_an_nvcc_ccbin_naming_no_program() {
    let Some(root) = real_toolkit("12.4") else { return };
    let sb = RealSandbox::new(&root);
    sb.write("k.cu", "__global__ void k() {}\n");
    for (how, mut nvcc) in [("nvcc alone", sb.real_nvcc()), ("the wrapper", sb.nvcc())] {
        let out = nvcc.env("NVCC_CCBIN", "/nonexistent/g++").args(["-c", "k.cu", "-o", "k.o"]).output().unwrap();
        assert!(out.status.success(), "{how}: {}", stderr(&out));
        assert!(sb.file("k.o").is_file(), "{how}");
        std::fs::remove_file(sb.file("k.o")).unwrap();
    }
}

/// Item 1 with the real nvcc 13.5: under `replace`, a pipe options file builds what nvcc alone builds (the wrapper
/// cannot read it without taking it from nvcc), and the wrapper says so.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn nvcc_13_5_a_pipe_options_file_under_replace_is_said() {
    let Some(root) = real_toolkit("13.5") else { return };
    let sb = RealSandbox::new(&root);
    sb.write("k.cu", "__global__ void k() {}\n");
    let config = sb.write("r.toml", "[gpu]\ncapabilities = [\"8.6\"]\narch-flags = \"replace\"\n");
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg("nvcc -optf <(printf -- '-arch=sm_80 -c k.cu -o k.o')")
        .env("PATH", sb.path())
        .env("NVCC_WRAPPER_CONFIG", &config)
        .env("NVCC_WRAPPER_PROBE_CACHE_DIR", sb.file("probe-cache"))
        .env_remove("NVCC_PREPEND_FLAGS")
        .env_remove("NVCC_APPEND_FLAGS")
        .current_dir(sb.dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(sb.file("k.o").is_file());
    let said = warnings(&out);
    assert!(said.len() == 1 && said[0].contains("is not a regular file"), "{}", stderr(&out));
}
