//! Meson in front of the wrapper, with real nvcc 13.5, Debian's Meson and the newest from PyPI, ccache and sccache.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

use crate::launcher::{set, CacheBuild, Sccache};
use crate::support::*;

/// A Meson CUDA project: a static library (a thin archive, which cuobjdump cannot read: the tests read its object) and
/// a program that calls it. `cpp` too, since Debian's Meson 1.0 has no
/// static linker for a CUDA-only project (an AttributeError in its Ninja backend).
const MESON_BUILD: &str =
    "project('k', 'cpp', 'cuda')\nlib = static_library('k', 'k.cu')\nexecutable('hello', 'hello.cu', link_with: lib)\n";
const MESON_KERNEL: &str =
    "__global__ void k(int *p) { p[threadIdx.x] *= 2; }\nvoid launch(int *p) { k<<<1, 1>>>(p); }\n";
const MESON_MAIN: &str = "#include <cstdio>\n#include <cuda_runtime.h>\nvoid launch(int *p);\nint main() {\n  int *p = nullptr;\n  cudaError_t e = cudaMalloc(&p, 4);\n  if (e == cudaSuccess) launch(p);\n  std::printf(\"hello: %d\\n\", (int)e);\n  return 0;\n}\n";

/// The Meson builds of the tests: Debian's and the newest from PyPI.
fn mesons() -> Vec<PathBuf> {
    [real_program("meson"), pypi_tool("meson")].into_iter().flatten().collect()
}

/// Set up and build the Meson project in a fresh `build` directory; `native`: a native file naming the wrapper as
/// the `cuda` compiler, which turns Meson's automatic cache off. Returns setup's and the build's output.
fn meson_build(sb: &RealSandbox, meson: &Path, native: bool, env: &dyn Fn(&mut Command)) -> String {
    meson_build_with(sb, meson, native, env, &|| {})
}

/// `meson_build`, running `between` after setup and before the build.
fn meson_build_with(
    sb: &RealSandbox,
    meson: &Path,
    native: bool,
    env: &dyn Fn(&mut Command),
    between: &dyn Fn(),
) -> String {
    let build = sb.file("build");
    let _ = std::fs::remove_dir_all(&build);
    let mut setup = Command::new(meson);
    sb.prepare(&mut setup);
    env(&mut setup);
    setup.arg("setup").arg(&build).arg(sb.file("src"));
    if native {
        let file = sb.write("native.ini", &format!("[binaries]\ncuda = '{}'\n", sb.wrapper_bin.join("nvcc").display()));
        setup.arg("--native-file").arg(file);
    }
    let out = setup.output().unwrap();
    let mut text = stdout(&out) + &stderr(&out);
    assert!(out.status.success(), "{} setup failed:\n{text}", meson.display());
    between();
    let mut ninja = Command::new("ninja");
    sb.prepare(&mut ninja);
    env(&mut ninja);
    let out = ninja.arg("-C").arg(&build).arg("-v").output().unwrap();
    text += &(stdout(&out) + &stderr(&out));
    assert!(out.status.success(), "{} build failed:\n{text}", meson.display());
    let run = std::process::Command::new(build.join("hello")).output().unwrap();
    assert!(stdout(&run).starts_with("hello: "), "{}{}", stdout(&run), stderr(&run));
    text
}

/// `meson_build` with the native file, ccache's counters zeroed between setup and build.
fn meson_build_counted(b: &CacheBuild, meson: &Path, env: &dyn Fn(&mut Command)) -> String {
    meson_build_with(&b.sb, meson, true, env, &|| {
        b.command(&b.ccache).arg("-z").assert().success();
    })
}

/// The line where Meson names the CUDA compiler it found (`Cuda compiler for the host machine: ccache nvcc (...)`).
fn meson_cuda_line(text: &str) -> String {
    text.lines()
        .find(|l| l.starts_with("Cuda compiler for the host machine:"))
        .unwrap_or_else(|| panic!("{text}"))
        .to_string()
}

/// Meson puts ccache in front of nvcc by itself when it is on PATH: the cache then cannot see the wrapper's
/// configuration. A native file naming the wrapper as the `cuda` binary turns that off; the wrapper's `launcher`
/// then caches honestly. Both Meson versions, real nvcc 13.5.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn meson_with_a_cache_on_path_builds_honestly_through_the_wrapper_and_a_native_file() {
    let Some(b) = CacheBuild::new("13.5") else { return };
    let sb = &b.sb;
    sb.write("src/meson.build", MESON_BUILD);
    sb.write("src/k.cu", MESON_KERNEL);
    sb.write("src/hello.cu", MESON_MAIN);
    let env = |cmd: &mut Command| {
        cmd.env("NVCC_WRAPPER_CONFIG", sb.file("config.toml")).env("CCACHE_DIR", sb.file("ccache"));
    };
    // What Meson does by itself (shown with the newest, as issue 15 measured it): ccache in front, and the second
    // build's object is the first one's.
    if let Some(meson) = mesons().last() {
        b.config("[gpu]\ncapabilities = [\"8.6\"]\n");
        let text = meson_build(sb, meson, false, &env);
        assert!(meson_cuda_line(&text).contains("ccache nvcc"), "{}", meson_cuda_line(&text));
        b.config("[gpu]\ncapabilities = [\"8.9\"]\n");
        meson_build(sb, meson, false, &env);
        assert_eq!(b.embedded_in("build/libk.a.p/k.cu.o"), set(&["sm_86"]), "{}: the stale object", meson.display());
    }
    for meson in mesons() {
        // With the native file Meson runs the wrapper alone, and the wrapper runs the cache.
        let launcher = format!("launcher = \"{}\"\n", b.ccache.display());
        for capability in ["8.6", "8.9"] {
            b.config(&format!("{launcher}[gpu]\ncapabilities = [\"{capability}\"]\n"));
            let text = meson_build(sb, &meson, true, &env);
            let line = meson_cuda_line(&text);
            assert!(!line.contains("ccache"), "{}: {line}", meson.display());
            let sm = format!("sm_{}", capability.replace('.', ""));
            assert_eq!(b.embedded_in("build/libk.a.p/k.cu.o"), set(&[&sm]), "{}", meson.display());
            assert!(b.embedded_in("build/hello").contains(&sm), "{}", meson.display());
        }
    }
}

/// With sccache on PATH Meson prefers it, and sccache 0.16 in front of nvcc 13.5 fails by itself. With the native
/// file and `launcher = "sccache"`, the wrapper leaves sccache out for 13.5 and the build succeeds.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn meson_with_sccache_on_path_builds_on_13_5_through_the_wrapper() {
    let Some(b) = CacheBuild::new("13.5") else { return };
    let sb = &b.sb;
    let Some(sccache) = Sccache::new(sb.dir.path()) else { return };
    sb.write("src/meson.build", MESON_BUILD);
    sb.write("src/k.cu", MESON_KERNEL);
    sb.write("src/hello.cu", MESON_MAIN);
    let path = std::env::join_paths(
        std::iter::once(sccache.program.parent().unwrap().to_path_buf()).chain(std::env::split_paths(&sb.path())),
    )
    .unwrap();
    // The venv's directory holds Meson's own `meson` too: each build names its Meson by path.
    let env = |cmd: &mut Command| {
        sccache.env(cmd).env("PATH", &path).env("NVCC_WRAPPER_CONFIG", sb.file("config.toml"));
    };
    b.config("launcher = \"sccache\"\n[gpu]\ncapabilities = [\"8.6\"]\n");
    for meson in mesons() {
        let text = meson_build(sb, &meson, true, &env);
        assert!(!meson_cuda_line(&text).contains("sccache"), "{}", meson_cuda_line(&text));
        assert_eq!(b.embedded_in("build/libk.a.p/k.cu.o"), set(&["sm_86"]), "{}", meson.display());
    }
    let mut explain = Command::new(WRAPPER);
    sb.prepare(&mut explain);
    env(&mut explain);
    let out = explain.args(["explain", "--", "-c", "k.cu"]).output().unwrap();
    assert!(stdout(&out).contains("is left out: sccache 0.16.0 fails with nvcc 13.3 and later"), "{}", stdout(&out));
}

/// Meson's own GPU flags (`import('unstable-cuda')`'s `nvcc_arch_flags`, written as a separate `-gencode` value) are
/// kept under `respect` and replaced by the wrapper's capabilities under `replace`, with the wrapper's ccache behind
/// it: the second clean build is served from the cache, with the same code.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn mesons_own_arch_flags_are_respected_or_replaced_through_the_cache() {
    let Some(b) = CacheBuild::new("13.5") else { return };
    let sb = &b.sb;
    let own = "nvcc = meson.get_compiler('cuda')\ncuda = import('unstable-cuda')\nadd_project_arguments(cuda.nvcc_arch_flags(nvcc, '8.9'), language: 'cuda')\n";
    sb.write("src/meson.build", &MESON_BUILD.replacen('\n', &format!("\n{own}"), 1));
    sb.write("src/k.cu", MESON_KERNEL);
    sb.write("src/hello.cu", MESON_MAIN);
    let env = |cmd: &mut Command| {
        cmd.env("NVCC_WRAPPER_CONFIG", sb.file("config.toml")).env("CCACHE_DIR", sb.file("ccache"));
    };
    let launcher = format!("launcher = \"{}\"\n[gpu]\ncapabilities = [\"8.6\"]\n", b.ccache.display());
    for meson in mesons() {
        for (policy, sm) in [("respect", "sm_89"), ("replace", "sm_86")] {
            b.config(&format!("{launcher}arch-flags = \"{policy}\"\n"));
            let _ = std::fs::remove_dir_all(sb.file("ccache"));
            for want in [(0, 2), (2, 0)] {
                // Meson's configure runs test compiles through the cache too: count only the build's.
                let text = meson_build_counted(&b, &meson, &env);
                let m = meson.display();
                assert!(text.contains("-gencode arch=compute_89,code=sm_89"), "{m}: Meson's own flags:\n{text}");
                assert_eq!(b.embedded_in("build/libk.a.p/k.cu.o"), set(&[sm]), "{m} {policy}");
                assert_eq!(b.hits_and_misses(), want, "{m} {policy}: two .cu files: {:?}", b.stats());
            }
        }
    }
}
