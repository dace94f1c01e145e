//! The wrapper as a transparent nvcc, against a real NVCC release: what goes through the wrapper is what nvcc itself
//! would do (`--version`, errors and exit codes, options files and the env channels), and a real compile links and
//! runs. Needs real NVCC 13.0 (scripts/fetch-toolkits.sh) and the system's g++. The fake nvcc's twin is
//! tests/wrapper/passthrough.rs.

use crate::support::*;

/// The releases every CI run has (scripts/test.sh fetches them).
const RELEASES: &[&str] = &["13.0"];

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn version_output_is_byte_identical_to_the_real_nvcc() {
    for release in RELEASES {
        let Some(root) = real_toolkit(release) else {
            continue;
        };
        let sb = RealSandbox::new(&root);
        for query in [&["--version"][..], &["-V"], &["--list-gpu-arch"], &["--help"]] {
            let real = sb.real_nvcc().args(query).output().unwrap();
            let wrapped = sb.nvcc().args(query).output().unwrap();
            assert!(real.status.success(), "{release} {query:?}");
            assert_eq!(wrapped.status.code(), real.status.code(), "{release} {query:?}");
            assert_eq!(wrapped.stdout, real.stdout, "{release} {query:?}: stdout differs");
            assert_eq!(wrapped.stderr, real.stderr, "{release} {query:?}: stderr differs");
        }
        let version = stdout(&sb.nvcc().arg("--version").output().unwrap());
        assert!(version.contains(&format!("release {release}")), "{version}");
    }
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn compiles_links_and_runs_a_cuda_program() {
    for release in RELEASES {
        let Some(root) = real_toolkit(release) else {
            continue;
        };
        let sb = RealSandbox::new(&root);
        sb.write("smoke.cu", SMOKE_CU);
        // One step, and compile then link, as build systems do.
        sb.nvcc().args(["-cudart", "static", "smoke.cu", "-o", "smoke"]).assert().success();
        run_smoke(&sb.file("smoke"));
        sb.nvcc().args(["-c", "smoke.cu", "-o", "smoke.o"]).assert().success();
        sb.nvcc().args(["smoke.o", "-o", "smoke2"]).assert().success();
        run_smoke(&sb.file("smoke2"));
    }
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn nvcc_errors_and_exit_codes_come_through() {
    for release in RELEASES {
        let Some(root) = real_toolkit(release) else {
            continue;
        };
        let sb = RealSandbox::new(&root);
        sb.write("broken.cu", "__global__ void k() { this is not C++ }\n");
        let real = sb.real_nvcc().args(["-c", "broken.cu", "-o", "b.o"]).output().unwrap();
        let wrapped = sb.nvcc().args(["-c", "broken.cu", "-o", "b.o"]).output().unwrap();
        assert_ne!(real.status.code(), Some(0));
        assert_eq!(wrapped.status.code(), real.status.code());
        assert_eq!(wrapped.stderr, real.stderr);
        let unknown = sb.nvcc().arg("--no-such-option").output().unwrap();
        assert_eq!(unknown.status.code(), Some(1));
        assert!(stderr(&unknown).contains("Unknown option '--no-such-option'"), "{}", stderr(&unknown));
    }
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn options_files_and_env_channels_reach_the_real_nvcc() {
    for release in RELEASES {
        let Some(root) = real_toolkit(release) else {
            continue;
        };
        let sb = RealSandbox::new(&root);
        sb.write("defs.cu", "#if !defined(FROM_FILE) || !defined(FROM_ENV)\n#error missing\n#endif\nint main() { return FROM_FILE - 1; }\n");
        sb.write("my opts.txt", "-DFROM_FILE=\"1\"\n");
        sb.nvcc()
            .env("NVCC_APPEND_FLAGS", "-DFROM_ENV")
            .args(["-optf", "my opts.txt", "defs.cu", "-o", "defs"])
            .assert()
            .success();
        assert!(std::process::Command::new(sb.file("defs")).status().unwrap().success());
    }
}

/// Issue 12: options files only nvcc may read. A pipe (`-optf <(...)`) is readable once: the wrapper must leave it to
/// nvcc, which then compiles exactly as without the wrapper. And a chain deeper than nvcc's 15 open options files is
/// nvcc's own error, with nvcc's own words and exit code.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn options_files_from_a_pipe_and_deep_chains_reach_nvcc_as_they_are() {
    let Some(root) = real_toolkit("13.0") else { return };
    let sb = RealSandbox::new(&root);
    sb.write("v.cu", "#if VALUE != 7\n#error VALUE is not 7\n#endif\n__global__ void k() {}\n");
    for nvcc in [root.join("bin/nvcc"), sb.wrapper_bin.join("nvcc")] {
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(r#""$0" -c v.cu -o v.o -optf <(echo -DVALUE=7)"#)
            .arg(&nvcc)
            .env("PATH", sb.path())
            .current_dir(sb.dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}: {}", nvcc.display(), stderr(&out));
    }
    for i in 0..20 {
        sb.write(&format!("n/{i}.opt"), &format!("-optf n/{}.opt", i + 1));
    }
    sb.write("n/20.opt", "-DVALUE=7");
    let real = sb.real_nvcc().args(["-c", "v.cu", "-optf", "n/0.opt"]).output().unwrap();
    let wrapped = sb.nvcc().args(["-c", "v.cu", "-optf", "n/0.opt"]).output().unwrap();
    assert_eq!(real.status.code(), Some(1), "{}", stderr(&real));
    assert!(stderr(&real).contains("Too many options file opened"), "{}", stderr(&real));
    assert_eq!((wrapped.status.code(), stderr(&wrapped)), (real.status.code(), stderr(&real)));
}
