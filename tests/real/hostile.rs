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

/// Issue 30, item 9, with real nvcc 12.4 and 13.5: at the argument-length edge, what nvcc alone builds the wrapper
/// builds. nvcc hands all of a call's options to its children in one string (its `sh -c` lines, gcc's
/// `COLLECT_GCC_OPTIONS`), which the kernel limits to 128 KiB; `-objtemp` names the output in each temporary file's
/// name there, so with a 200-byte output the wrapper's reproducible-builds flags pushed a call nvcc alone just
/// builds past the limit (`cannot execute 'cc1plus': execv: Argument list too long`). Here the largest number of
/// 100-byte `-D` flags that nvcc alone builds with is found by bisection, and the wrapper must build with as many.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn at_the_argument_length_edge_what_nvcc_alone_builds_the_wrapper_builds() {
    for release in ["12.4", "13.5"] {
        let Some(root) = real_toolkit(release) else { return };
        let sb = RealSandbox::new(&root);
        sb.write("k.cu", "__global__ void k(int *p) { p[0] = 1; }\n");
        std::fs::create_dir_all(sb.file("o")).unwrap();
        let output = format!("o/{}.o", "a".repeat(198));
        let config = sb.write("config.toml", "[host-compiler]\nstdenv = \"/usr/bin/g++\"\n");
        let defines = |n: usize| -> Vec<String> { (0..n).map(|i| format!("-DX{i:05}={}", "v".repeat(92))).collect() };
        let builds = |mut nvcc: assert_cmd::Command, n: usize| {
            let _ = std::fs::remove_file(sb.file(&output));
            let out = nvcc.args(["-c", "k.cu", "-o", &output]).args(defines(n)).output().unwrap();
            out.status.success() && sb.file(&output).is_file()
        };
        let alone = |n| {
            let mut nvcc = sb.real_nvcc();
            nvcc.arg("-ccbin=/usr/bin/g++");
            builds(nvcc, n)
        };
        let (mut lo, mut hi) = (1000, 1400);
        assert!(alone(lo) && !alone(hi), "{release}: the edge is not between {lo} and {hi} flags");
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            if alone(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let mut nvcc = sb.nvcc();
        nvcc.env("NVCC_WRAPPER_CONFIG", &config);
        assert!(builds(nvcc, lo), "{release}: nvcc alone builds with {lo} flags of 100 bytes, the wrapper does not");
        eprintln!("{release}: nvcc alone and the wrapper build with {lo} flags of 100 bytes, not {hi}");
    }
}
