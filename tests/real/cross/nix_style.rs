//! Nix-style cross builds: nvcc from a host-only view of a toolkit (as a store path holds it), the target's files
//! in `cuda-root` outside it.

use super::*;

/// What a Nix-style aarch64 build of cross target `name` needs: the target's standalone files, a host-only view of
/// its release's toolkit (alive while the TempDir is), qemu and the cross compiler; `None` after a note.
fn nix_style_inputs(name: &str) -> Option<(PathBuf, tempfile::TempDir, PathBuf)> {
    let cuda_root = real_target_root(name)?;
    let (tmp, view) = view_of(cross_target_release(name))?;
    real_program("qemu-aarch64")?;
    real_program("aarch64-linux-gnu-g++")?;
    Some((cuda_root, tmp, view))
}

/// A Nix-style build: nvcc from a host-only view, the target's files in `cuda-root` outside it. The wrapper must
/// give nvcc the target's headers and libraries itself (no `--target-directory`: the view has none).
fn nix_style_build(name: &str, cx: Cross, cuda_root: &Path) {
    let words = cx.plan(&[HELLO, "-o", "hello"]);
    assert!(!words.iter().any(|w| w.starts_with("--target-directory")), "{name}: {words:?}");
    assert!(has_flag(&words, "-I", &cuda_root.join("include")), "{name}: {words:?}");
    assert!(has_flag(&words, "-L", &cuda_root.join("lib")), "{name}: {words:?}");
    let cccl = cuda_root.join("include/cccl");
    if cccl.is_dir() {
        assert!(has_flag(&words, "-isystem", &cccl), "{name}: {words:?}");
    } else {
        assert!(!words.iter().any(|w| w.contains("cccl")), "{name}: no include/cccl, yet {words:?}");
    }
    let compiler = ccbin(&words);
    assert!(dumpmachine(&compiler).starts_with("aarch64-"), "{}", compiler.display());
    // A compile only: the target's headers, no library directory.
    let compile = cx.plan(&["-c", HELLO, "-o", "hello.o"]);
    assert!(has_flag(&compile, "-I", &cuda_root.join("include")), "{name}: {compile:?}");
    assert!(!has_flag(&compile, "-L", &cuda_root.join("lib")), "{name}: -L when not linking: {compile:?}");

    let dry = cx.nvcc_dryrun(&[HELLO, "-o", "hello"]);
    assert!(host_compiler_gets(&dry, &compiler, &cuda_root.join("include")), "{name}:\n{dry}");
    cx.build(&[HELLO, "-o", "hello"]);
    check_program(&cx, &AARCH64, &cx.sb.file("hello"), "sm_90a");
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn nix_style_cuda_root_with_nvcc_13_0() {
    let Some((cuda_root, _tmp, view)) = nix_style_inputs("sbsa-13.0") else { return };
    let target = format!("[target]\nsystem = \"aarch64-linux\"\ncuda-root = {}", toml_path(&cuda_root));
    let Some(cx) = Cross::new(&view, &target, "9.0a") else { return };
    // The failure exists: the view's nvcc with the cross compiler alone finds no CUDA headers for the target.
    let bare = cx
        .sb
        .real_nvcc()
        .args(["-ccbin", "aarch64-linux-gnu-g++", "-arch=sm_90a", HELLO, "-o", "bare"])
        .output()
        .unwrap();
    assert!(!bare.status.success(), "the view was expected to lack the target's files");
    assert!(stderr(&bare).contains("cuda_runtime.h"), "{}", stderr(&bare));
    nix_style_build("sbsa-13.0 view", cx, &cuda_root);
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn nix_style_cuda_root_from_the_environment_with_nvcc_12_4() {
    let Some((cuda_root, _tmp, view)) = nix_style_inputs("sbsa-12.4") else { return };
    let target = "[target]\nsystem = \"aarch64-linux\"\nplatform = \"sbsa\"";
    let Some(cx) = Cross::new(&view, target, "9.0a") else { return };
    let cx = cx.with_env("NVCC_WRAPPER_TARGET_CUDA_ROOT", cuda_root.to_str().unwrap());
    nix_style_build("sbsa-12.4 view", cx, &cuda_root);
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn nix_style_target_from_the_environment_alone_with_nvcc_13_5() {
    let Some((cuda_root, _tmp, view)) = nix_style_inputs("sbsa-13.5") else { return };
    // No `[target]` at all: the system (a GNU triple), platform and cuda-root come from the variables.
    let Some(cx) = Cross::new(&view, "", "9.0a") else { return };
    let cx = cx
        .with_env("NVCC_WRAPPER_TARGET_SYSTEM", "aarch64-linux-gnu")
        .with_env("NVCC_WRAPPER_TARGET_PLATFORM", "sbsa")
        .with_env("NVCC_WRAPPER_TARGET_CUDA_ROOT", cuda_root.to_str().unwrap());
    nix_style_build("sbsa-13.5 view", cx, &cuda_root);
}
