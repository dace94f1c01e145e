//! Host-compiler selection through the built wrapper, in front of the fake nvcc: the twin of tests/real/host_compiler.rs
//! with compilers recorded in the config (empty files: recorded facts are never probed), so that the rule's every
//! outcome is seen as nvcc's arguments and exit codes without a real compiler. The real compilers, links and runs
//! are tests/real/host_compiler.rs.

use std::path::PathBuf;

use crate::support::*;

/// An empty executable at `relative` in the sandbox, for a recorded compiler.
fn compiler(sb: &Sandbox, relative: &str) -> PathBuf {
    let path = sb.write(relative, "");
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    path
}

/// The sandbox's toolkit at release `version`, and `config` as its config file.
fn setup(sb: &Sandbox, version: &str, config: &str) {
    let json = format!(r#"{{"cuda_nvcc": {{"name": "CUDA NVCC", "version": "{version}"}}}}"#);
    std::fs::write(sb.dir.path().join("cuda/version.json"), json).unwrap();
    std::fs::write(&sb.config, format!("reproducible = false\n{config}")).unwrap();
}

/// A recorded compiler, as a config writes it.
fn entry(path: &std::path::Path, family: &str, version: &str, extra: &str) -> String {
    format!("{{ path = \"{}\", family = \"{family}\", version = \"{version}\"{extra} }}", path.display())
}

/// The stdenv compiler's libstdc++, recorded as the Nix package writes it.
const GCC_12_LIBS: &str =
    ", gcc-install-dir = \"/usr/lib/gcc/x86_64-linux-gnu/12\", libstdcxx-dir = \"/usr/lib/x86_64-linux-gnu\"";

#[test]
fn nvcc_11_8_with_stdenv_gcc_12_picks_gcc_11_and_links_with_gcc_12s_libstdcxx() {
    let sb = Sandbox::new();
    let (g12, g11) = (compiler(&sb, "gcc12/g++"), compiler(&sb, "gcc11/g++"));
    let config = format!(
        "[host-compiler]\nstdenv = {}\ncandidates = [{}]\n",
        entry(&g12, "gcc", "12.2.0", GCC_12_LIBS),
        entry(&g11, "gcc", "11.4.0", "")
    );
    setup(&sb, "11.8.89", &config);
    let ccbin = format!("-ccbin={}", g11.display());
    // A compile: only the compiler; a link: GCC 12's library directory first, and the runpath to its libstdc++.
    sb.nvcc().args(["-c", "k.cu"]).assert().success();
    assert_eq!(sb.recorded().args()[..2], [ccbin.as_str(), "-Xfatbin=-compress-all"]);
    sb.nvcc().args(["k.cu", "-o", "app"]).assert().success();
    let want = [ccbin.as_str(), "-L/usr/lib/gcc/x86_64-linux-gnu/12", "-Xlinker=-rpath,/usr/lib/x86_64-linux-gnu"];
    assert_eq!(sb.recorded().args()[..3], want);
}

#[test]
fn nvcc_12_4_with_stdenv_clang_19_picks_clang_16_with_gcc_12s_libstdcxx() {
    let sb = Sandbox::new();
    let (clang19, clang16) = (compiler(&sb, "clang19/clang++"), compiler(&sb, "clang16/clang++"));
    let config = format!(
        "[host-compiler]\nstdenv = {}\ncandidates = [{}]\n",
        entry(&clang19, "clang", "19.1.7", GCC_12_LIBS),
        entry(&clang16, "clang", "16.0.6", "")
    );
    setup(&sb, "12.4.131", &config);
    sb.nvcc().args(["-c", "k.cu"]).assert().success();
    let ccbin = format!("-ccbin={}", clang16.display());
    assert_eq!(
        sb.recorded().args()[..2],
        [ccbin.as_str(), "-Xcompiler=--gcc-install-dir=/usr/lib/gcc/x86_64-linux-gnu/12"]
    );
}

#[test]
fn nvcc_13_with_stdenv_gcc_12_uses_it_unchanged() {
    let sb = Sandbox::new();
    sb.nvcc().args(["k.cu", "-o", "app"]).assert().success();
    // The sandbox's stdenv g++ 12 and nvcc 13.0: the compiler as it is, no libstdc++ flag.
    assert_eq!(sb.recorded().args(), [sb.ccbin(), sb.compression(), "k.cu".into(), "-o".into(), "app".into()]);
}

#[test]
fn no_compiler_in_range_is_a_clear_error() {
    let sb = Sandbox::new();
    let g12 = compiler(&sb, "gcc12/g++");
    setup(&sb, "11.8.89", &format!("[host-compiler]\nstdenv = {}\n", entry(&g12, "gcc", "12.2.0", "")));
    // A PATH with no other compiler to find (this machine's /usr/bin may hold a g++-11).
    let path = std::env::join_paths([&sb.wrapper_bin, &sb.cuda_bin]).unwrap();
    let out = sb.nvcc().env("PATH", &path).args(["-c", "k.cu"]).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(69), "{err}");
    assert!(err.contains("nvcc-wrapper: error:") && err.contains(&g12.display().to_string()), "{err}");
    assert!(err.contains("help: ") && err.contains("allow-unsupported"), "{err}");
    assert!(!sb.ran());
    // The escape: the stdenv compiler, unchecked, with nvcc's own switch.
    let allowed = format!("[host-compiler]\nstdenv = {}\nallow-unsupported = true\n", entry(&g12, "gcc", "12.2.0", ""));
    setup(&sb, "11.8.89", &allowed);
    sb.nvcc().env("PATH", &path).args(["-c", "k.cu"]).assert().success();
    let args = sb.recorded().args();
    assert!(args.contains(&format!("-ccbin={}", g12.display())), "{args:?}");
    assert!(args.contains(&"-allow-unsupported-compiler".to_string()), "{args:?}");
}

#[test]
fn nvcc_11_8_warns_of_a_libstdcxx_directory_with_a_space_and_the_link_succeeds() {
    let sb = Sandbox::new();
    let (g12, g11) = (compiler(&sb, "gcc12/g++"), compiler(&sb, "gcc11/g++"));
    let libs = ", gcc-install-dir = \"/opt/my gcc/lib/gcc/x/12\", libstdcxx-dir = \"/opt/my gcc/lib\"";
    let config = format!(
        "[host-compiler]\nstdenv = {}\ncandidates = [{}]\n",
        entry(&g12, "gcc", "12.2.0", libs),
        entry(&g11, "gcc", "11.4.0", "")
    );
    setup(&sb, "11.8.89", &config);
    let out = sb.nvcc().args(["k.cu", "-o", "app"]).output().unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert_eq!(err.lines().filter(|l| l.starts_with("nvcc-wrapper: warning:")).count(), 1, "{err}");
    assert!(err.contains("'/opt/my gcc/lib'") && err.contains("holds a space"), "{err}");
    let args = sb.recorded().args();
    assert_eq!(args[..2], [format!("-ccbin={}", g11.display()), "-Xfatbin=-compress-all".into()], "{args:?}");
}
