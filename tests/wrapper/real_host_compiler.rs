//! Host-compiler selection against real NVCC releases and real compilers (Debian 12's g++-11, g++-12, clang-14,
//! clang-16, clang-19): the wrapper picks what nvcc accepts, and what it builds links and runs next to objects of the
//! newer stdenv compiler.

use std::path::Path;

use crate::support::*;

/// A C++ object built by the stdenv compiler that needs its libstdc++: with `_GLIBCXX_ASSERTIONS`, GCC 12's
/// `operator[]` calls `std::__glibcxx_assert_fail`, which only GLIBCXX_3.4.30 (GCC 12's libstdc++) provides.
const NEW_CXX: &str = r#"
#include <vector>
int sum_first(const std::vector<int>& v, int n) { int s = 0; for (int i = 0; i < n; ++i) s += v[i]; return s; }
"#;

/// A CUDA file whose host code uses that object.
const KERNEL_CU: &str = r#"
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>
int sum_first(const std::vector<int>& v, int n);
__global__ void touch(int *x) { *x = 1; }
int main() {
    std::vector<int> v{1, 2, 3};
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    std::printf("hello: built and started, sum %d, cuda error %d\n", sum_first(v, 3), (int)err);
    return sum_first(v, 3) == 6 ? 0 : 1;
}
"#;

fn needs(programs: &[&str]) -> bool {
    programs.iter().all(|p| real_program(p).is_some())
}

fn config(sb: &RealSandbox, text: &str) -> std::path::PathBuf {
    sb.write("wrapper.toml", text)
}

/// The wrapper's decision for a command line, as `explain` prints it.
fn explain(sb: &RealSandbox, config: &Path, args: &[&str]) -> String {
    let out = assert_cmd::Command::new(WRAPPER)
        .env("PATH", sb.path())
        .env("NVCC_WRAPPER_CONFIG", config)
        .current_dir(sb.dir.path())
        .arg("explain")
        .arg("--")
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out)
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn nvcc_11_8_with_stdenv_gcc_12_picks_gcc_11_and_links_with_gcc_12s_libstdcxx() {
    let Some(root) = real_toolkit("11.8") else { return };
    if !needs(&["g++-11", "g++-12"]) {
        return;
    }
    let sb = RealSandbox::new(&root);
    sb.write("new.cpp", NEW_CXX);
    sb.write("kernel.cu", KERNEL_CU);
    let cfg = config(&sb, "[host-compiler]\nstdenv = \"/usr/bin/g++-12\"\n");
    let cxx = std::process::Command::new("g++-12")
        .args(["-D_GLIBCXX_ASSERTIONS", "-O1", "-c", "new.cpp", "-o", "new.o"])
        .current_dir(sb.dir.path())
        .status()
        .unwrap();
    assert!(cxx.success());

    // The failure exists: nvcc with g++-11 alone cannot link GCC 12's object against GCC 11's static libstdc++.
    let bare = sb
        .real_nvcc()
        .args(["-ccbin", "g++-11", "kernel.cu", "new.o", "-o", "bare", "-Xcompiler", "-static-libstdc++"])
        .output()
        .unwrap();
    assert!(!bare.status.success(), "expected the libstdc++ mismatch to fail the link");
    assert!(stderr(&bare).contains("__glibcxx_assert_fail"), "{}", stderr(&bare));

    // Through the wrapper: g++-11 is chosen by itself, with GCC 12's libstdc++ first.
    let plan = explain(&sb, &cfg, &["kernel.cu", "new.o", "-o", "prog"]);
    assert!(plan.contains("-ccbin=/usr/bin/g++-11"), "{plan}");
    assert!(plan.contains("-L/usr/lib/gcc/x86_64-linux-gnu/12"), "{plan}");
    for (name, extra) in [("prog-static", &["-Xcompiler", "-static-libstdc++"][..]), ("prog-shared", &[])] {
        sb.nvcc()
            .env("NVCC_WRAPPER_CONFIG", &cfg)
            .args(["kernel.cu", "new.o", "-o", name])
            .args(extra)
            .assert()
            .success();
        assert!(run_smoke(&sb.file(name)).contains("sum 6"));
    }

    // Compile and link as separate calls: the link of objects only uses the stdenv compiler (nvcc checks nothing).
    sb.nvcc().env("NVCC_WRAPPER_CONFIG", &cfg).args(["-c", "kernel.cu", "-o", "kernel.o"]).assert().success();
    let plan = explain(&sb, &cfg, &["kernel.o", "new.o", "-o", "prog2"]);
    assert!(plan.contains("-ccbin=/usr/bin/g++-12"), "{plan}");
    sb.nvcc()
        .env("NVCC_WRAPPER_CONFIG", &cfg)
        .args(["kernel.o", "new.o", "-o", "prog2", "-Xcompiler", "-static-libstdc++"])
        .assert()
        .success();
    run_smoke(&sb.file("prog2"));
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn nvcc_12_4_with_stdenv_clang_19_picks_clang_16_with_gcc_12s_libstdcxx() {
    let Some(root) = real_toolkit("12.4") else { return };
    if !needs(&["clang++-16", "clang++-19", "g++-12"]) {
        return;
    }
    let sb = RealSandbox::new(&root);
    sb.write("kernel.cu", KERNEL_CU);
    sb.write("new.cpp", NEW_CXX);
    let cfg = config(&sb, "[host-compiler]\nstdenv = \"/usr/bin/clang++-19\"\n");
    let cxx = std::process::Command::new("clang++-19")
        .args(["-O1", "-c", "new.cpp", "-o", "new.o"])
        .current_dir(sb.dir.path())
        .status()
        .unwrap();
    assert!(cxx.success());
    // Without the wrapper, nvcc 12.4 rejects Clang 19.
    let bare = sb.real_nvcc().args(["-ccbin", "clang++-19", "-c", "kernel.cu", "-o", "k.o"]).output().unwrap();
    assert!(!bare.status.success());
    assert!(stderr(&bare).contains("unsupported clang version"), "{}", stderr(&bare));

    let plan = explain(&sb, &cfg, &["kernel.cu", "new.o", "-o", "prog"]);
    assert!(plan.contains("-ccbin=/usr/bin/clang++-16"), "{plan}");
    assert!(plan.contains("--gcc-install-dir=/usr/lib/gcc/x86_64-linux-gnu/12"), "{plan}");
    sb.nvcc().env("NVCC_WRAPPER_CONFIG", &cfg).args(["kernel.cu", "new.o", "-o", "prog"]).assert().success();
    assert!(run_smoke(&sb.file("prog")).contains("sum 6"));
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn nvcc_13_with_stdenv_gcc_12_uses_it_unchanged() {
    let Some(root) = real_toolkit("13.0") else { return };
    if !needs(&["g++-12"]) {
        return;
    }
    let sb = RealSandbox::new(&root);
    sb.write("kernel.cu", KERNEL_CU);
    sb.write("new.cpp", NEW_CXX);
    let cfg = config(&sb, "[host-compiler]\nstdenv = \"/usr/bin/g++-12\"\n");
    let out = sb
        .nvcc()
        .env("NVCC_WRAPPER_CONFIG", &cfg)
        .env("NVCC_WRAPPER_DRY_RUN", "1")
        .args(["kernel.cu", "new.o", "-o", "prog"])
        .output()
        .unwrap();
    let line = stdout(&out);
    // The compression flag is nvcc 13's smallest fatbins (compat-data/fatbin.toml), added to every compile.
    let nvcc = root.join("bin/nvcc");
    let want = format!("{} -ccbin=/usr/bin/g++-12 --compress-mode=size kernel.cu new.o -o prog\n", nvcc.display());
    assert_eq!(line, want);
    assert!(std::process::Command::new("g++-12")
        .args(["-c", "new.cpp", "-o", "new.o"])
        .current_dir(sb.dir.path())
        .status()
        .unwrap()
        .success());
    sb.nvcc().env("NVCC_WRAPPER_CONFIG", &cfg).args(["kernel.cu", "new.o", "-o", "prog"]).assert().success();
    run_smoke(&sb.file("prog"));
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn a_users_host_compiler_is_respected_in_every_spelling_and_channel() {
    let Some(root) = real_toolkit("13.0") else { return };
    if !needs(&["g++-11", "g++-12"]) {
        return;
    }
    let sb = RealSandbox::new(&root);
    sb.write("kernel.cu", KERNEL_CU);
    let cfg = config(&sb, "[host-compiler]\nstdenv = \"/usr/bin/g++-12\"\n");
    // (arguments, environment variable) that name g++-11.
    type Case<'a> = (&'a [&'a str], Option<(&'a str, &'a str)>);
    let cases: &[Case] = &[
        (&["-ccbin", "g++-11"], None),
        (&["-ccbin=g++-11"], None),
        (&["--compiler-bindir", "g++-11"], None),
        (&["--compiler-bindir=g++-11"], None),
        (&[], Some(("NVCC_CCBIN", "g++-11"))),
        (&[], Some(("NVCC_PREPEND_FLAGS", "-ccbin g++-11"))),
        (&[], Some(("NVCC_APPEND_FLAGS", "--compiler-bindir=g++-11"))),
    ];
    for (args, env) in cases {
        let mut cmd = sb.nvcc();
        cmd.env("NVCC_WRAPPER_CONFIG", &cfg).args(*args).args(["--dryrun", "-c", "kernel.cu", "-o", "k.o"]);
        if let Some((k, v)) = env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{args:?} {env:?}: {}", stderr(&out));
        let err = stderr(&out);
        // nvcc warns about two different -ccbin values; the wrapper added none, so there is no such warning.
        assert!(!err.contains("incompatible redefinition"), "{args:?} {env:?}: {err}");
        assert!(
            err.contains("#$ g++-11 ") || err.contains("#$ \"g++-11\""),
            "{args:?} {env:?}: g++-11 not used:\n{err}"
        );
        assert!(!err.contains("g++-12"), "{args:?} {env:?}: {err}");
    }
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn nvcc_ccbin_reaches_releases_that_ignore_it() {
    // nvcc 12.4 ignores NVCC_CCBIN (it runs `gcc`); through the wrapper, the user's choice is honoured.
    let Some(root) = real_toolkit("12.4") else { return };
    if !needs(&["g++-11"]) {
        return;
    }
    let sb = RealSandbox::new(&root);
    sb.write("kernel.cu", KERNEL_CU);
    let bare = sb.real_nvcc().env("NVCC_CCBIN", "g++-11").args(["--dryrun", "-c", "kernel.cu"]).output().unwrap();
    assert!(!stderr(&bare).contains("g++-11"), "12.4 was expected to ignore NVCC_CCBIN:\n{}", stderr(&bare));
    let out = sb.nvcc().env("NVCC_CCBIN", "g++-11").args(["--dryrun", "-c", "kernel.cu"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("#$ g++-11 "), "{}", stderr(&out));
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn no_compiler_in_range_is_a_clear_error() {
    let Some(root) = real_toolkit("11.8") else { return };
    if !needs(&["g++-12", "clang++-19"]) {
        return;
    }
    let sb = RealSandbox::new(&root);
    sb.write("kernel.cu", KERNEL_CU);
    let cfg = config(&sb, "[host-compiler]\nstdenv = \"/usr/bin/g++-12\"\ncandidates = [\"/usr/bin/clang++-19\"]\n");
    let out = sb.nvcc().env("NVCC_WRAPPER_CONFIG", &cfg).args(["-c", "kernel.cu"]).output().unwrap();
    assert_eq!(out.status.code(), Some(69), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("nvcc 11.8 accepts GCC up to 11 and Clang up to 14"), "{err}");
    assert!(err.contains("/usr/bin/g++-12 (gcc 12.2") && err.contains("/usr/bin/clang++-19 (clang 19"), "{err}");
    assert!(err.contains("allow-unsupported"), "{err}");
}
