//! Host-compiler selection against real NVCC releases and real compilers (Debian 12's g++-11, g++-12, clang-14,
//! clang-16, clang-19): the wrapper picks what nvcc accepts, and what it builds links and runs next to objects of the
//! newer stdenv compiler. Needs real NVCC 11.8, 12.4 and 13.0, g++-11, g++-12, clang++-16 and clang++-19.

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

/// nvcc splits the `-Xlinker` list of a link at blanks: a libstdc++ directory with a space in its name, given as an
/// rpath, would break the link (shown with nvcc alone), so the wrapper warns and adds no libstdc++ flag.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn nvcc_11_8_warns_of_a_libstdcxx_directory_with_a_space_and_the_link_succeeds() {
    let Some(root) = real_toolkit("11.8") else { return };
    if !needs(&["g++-11", "g++-12"]) {
        return;
    }
    let sb = RealSandbox::new(&root);
    sb.write("kernel.cu", KERNEL_CU.replace("sum_first(v, 3)", "(int)v.size() * 2").as_str());
    let (gcc_dir, lib_dir) = (sb.dir.path().join("gcc 12"), sb.dir.path().join("lib dir"));
    std::os::unix::fs::symlink("/usr/lib/gcc/x86_64-linux-gnu/12", &gcc_dir).unwrap();
    std::os::unix::fs::symlink("/usr/lib/x86_64-linux-gnu", &lib_dir).unwrap();
    let cfg = config(
        &sb,
        &format!(
            "[host-compiler]\nstdenv = {{ path = \"/usr/bin/g++-12\", family = \"gcc\", version = \"12.2.0\", gcc-install-dir = \"{}\", libstdcxx-dir = \"{}\" }}\n",
            gcc_dir.display(),
            lib_dir.display()
        ),
    );
    // The control: the flags as they were made before, handed to nvcc alone, fail the link.
    let mut rpath = std::ffi::OsString::from("-Xlinker=-rpath,");
    rpath.push(&lib_dir);
    let mut l = std::ffi::OsString::from("-L");
    l.push(&gcc_dir);
    let bare =
        sb.real_nvcc().args(["-ccbin", "g++-11"]).arg(l).arg(rpath).args(["kernel.cu", "-o", "bare"]).output().unwrap();
    assert!(!bare.status.success(), "expected the split rpath to fail the link");
    assert!(stderr(&bare).contains("cannot find dir"), "{}", stderr(&bare));
    // Through the wrapper: g++-11, no libstdc++ flag, one warning naming the directory; the link succeeds.
    let out = sb.nvcc().env("NVCC_WRAPPER_CONFIG", &cfg).args(["kernel.cu", "-o", "prog"]).output().unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains(&format!("'{}'", lib_dir.display())) && err.contains("holds a space"), "{err}");
    assert_eq!(err.matches("nvcc-wrapper: warning:").count(), 1, "{err}");
    assert!(run_smoke(&sb.file("prog")).contains("sum 6"));
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
        // The reproducible-builds flags (one names the process id) are reproducible.rs's to check.
        .env("NVCC_WRAPPER_REPRODUCIBLE", "0")
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

/// Issue 14: host LTO across host compilers. nvcc 11.8 does not accept the stdenv g++-12, so the wrapper compiles
/// with g++-11, whose LTO bytecode g++-12 cannot read: the failure is real (and the wrapper says so when it
/// compiles), `lto-mismatch = "error"` stops it before nvcc runs, `allow-unsupported = true` keeps g++-12 for host
/// LTO and the build links and runs, and with nvcc 12.4, which accepts g++-12, nothing needs saying.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn host_lto_objects_link_only_when_the_stdenv_compiler_built_them() {
    let (Some(root_11_8), Some(root_12_4)) = (real_toolkit("11.8"), real_toolkit("12.4")) else { return };
    if !needs(&["g++-11", "g++-12"]) {
        return;
    }
    let stdenv = "[host-compiler]\nstdenv = \"/usr/bin/g++-12\"\n";
    let build = |root: &Path, extra_config: &str| {
        let sb = RealSandbox::new(root);
        sb.write("new.cpp", NEW_CXX);
        sb.write("kernel.cu", KERNEL_CU);
        let cfg = config(&sb, &format!("{stdenv}{extra_config}"));
        let cxx = std::process::Command::new("g++-12")
            .args(["-flto", "-D_GLIBCXX_ASSERTIONS", "-O1", "-c", "new.cpp", "-o", "new.o"])
            .current_dir(sb.dir.path())
            .status()
            .unwrap();
        assert!(cxx.success());
        let compile = sb
            .nvcc()
            .env("NVCC_WRAPPER_CONFIG", &cfg)
            .args(["-Xcompiler=-flto", "-c", "kernel.cu", "-o", "kernel.o"])
            .output()
            .unwrap();
        // The link CMake makes for a CUDA executable: the host compiler (the stdenv's), host LTO on.
        let lib = format!("-L{}", root.join("targets/x86_64-linux/lib").display());
        let link = compile.status.success().then(|| {
            std::process::Command::new("g++-12")
                .args([
                    "-flto",
                    "kernel.o",
                    "new.o",
                    "-o",
                    "prog",
                    &lib,
                    "-lcudart_static",
                    "-ldl",
                    "-lrt",
                    "-lpthread",
                ])
                .current_dir(sb.dir.path())
                .output()
                .unwrap()
        });
        (sb, compile, link)
    };

    // nvcc 11.8: g++-11 compiles, said on stderr; g++-12's LTO link of its object fails.
    let (_sb, compile, link) = build(&root_11_8, "");
    let said = stderr(&compile);
    assert!(said.contains("warning: host LTO (`-Xcompiler -flto`) with /usr/bin/g++-11"), "{said}");
    assert!(said.contains("will not link with /usr/bin/g++-12"), "{said}");
    let link = link.expect("the compile succeeds");
    assert!(!link.status.success(), "the mixed-GCC LTO link was expected to fail");
    assert!(stderr(&link).contains("generated with LTO version 11"), "{}", stderr(&link));

    // Refused before nvcc runs under `lto-mismatch = "error"`.
    let (sb, compile, _) = build(&root_11_8, "lto-mismatch = \"error\"\n");
    assert_eq!(compile.status.code(), Some(69), "{}", stderr(&compile));
    assert!(stderr(&compile).contains("help: take -flto out of the CUDA compiles"), "{}", stderr(&compile));
    assert!(!sb.file("kernel.o").exists());

    // The way out: `allow-unsupported = true` keeps g++-12 for host LTO; the link reads its bytecode and runs.
    let (sb, compile, link) = build(&root_11_8, "allow-unsupported = true\n");
    assert!(!stderr(&compile).contains("host LTO"), "{}", stderr(&compile));
    let link = link.expect("the compile succeeds");
    assert!(link.status.success(), "{}", stderr(&link));
    assert!(run_smoke(&sb.file("prog")).contains("sum 6"));

    // nvcc 12.4 accepts g++-12: the stdenv compiler compiles, and the LTO link works with nothing said.
    let (sb, compile, link) = build(&root_12_4, "");
    assert!(!stderr(&compile).contains("host LTO"), "{}", stderr(&compile));
    assert!(link.expect("the compile succeeds").status.success());
    assert!(run_smoke(&sb.file("prog")).contains("sum 6"));
}
