//! The Nix side (`nix/`), with Nix and a Nixpkgs `lib`: every file parses; makeNvccWrapper writes exactly the
//! expected config for each case, on which `nvcc-wrapper explain` shows the expected plan against the real toolkits
//! without running anything; the overlay and package.nix evaluate over stand-ins shaped as Nixpkgs'; and
//! makeNvccWrapper is realised with `nix-build` over stand-ins that are this machine's real toolkits and compilers,
//! whose `bin/nvcc` then compiles, links and runs examples/hello.cu natively and for Jetson under qemu, with nothing
//! probed, and a bad capability list fails its Nix build.
//!
//! The `lib` is the real Nixpkgs one where the user has it (`NIXPKGS_LIB`, a `lib` directory; else `<nixpkgs/lib>`
//! on `NIX_PATH`), and the project's own stand-in (tests/nix/lib) otherwise; the first Nix test to need it prints
//! which one on the runner's output. Stand-ins for the rest of Nixpkgs and the cases are Nix files in tests/nix/.
//! Missing Nix, toolkits or root (which Debian's nix-bin needs to build without a daemon) skip with a note, or fail
//! under NVCC_WRAPPER_REQUIRE_REAL=1.

// The test process reads its own environment (cache location, CI switches): that is not the wrapper reading state.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use crate::support::*;

const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// Nix settings for every call: no build users or daemon (Debian's nix-bin, as root), no sandbox (the stand-ins
/// point outside the store), no binary cache (offline).
const NIX_CONFIG: &str = "build-users-group =\nsandbox = false\nsubstituters =\n";

fn tests_nix() -> PathBuf {
    Path::new(REPO).join("tests/nix")
}

/// The Nixpkgs `lib` the tests evaluate nix/ with: the real one the user names (`NIXPKGS_LIB`) or has on
/// `NIX_PATH` (`<nixpkgs/lib>`), else the project's stand-in, tests/nix/lib. Which one is written once to the
/// runner's output (straight to stderr: the test harness would hide a passing test's `eprintln!`). `None` without
/// Nix.
fn nixpkgs_lib() -> Option<PathBuf> {
    static LIB: OnceLock<Option<PathBuf>> = OnceLock::new();
    LIB.get_or_init(|| {
        let nix = nix("nix-instantiate")?;
        let version = ok(Command::new(nix.get_program()).arg("--version"));
        let recent = version.split_whitespace().last().is_some_and(|v| at_least(v, (2, 18)));
        assert!(
            recent || !require_real(),
            "{} is {}: Nixpkgs needs Nix 2.18 or newer (scripts/install-nix.sh installs Debian 13's)",
            nix.get_program().to_string_lossy(),
            version.trim()
        );
        let (lib, which) = match real_nixpkgs_lib() {
            Some(lib) => {
                let which = format!("the real Nixpkgs lib at {}", lib.display());
                (lib, which)
            }
            None => (tests_nix().join("lib"), "the project's stand-in lib (tests/nix/lib)".to_string()),
        };
        let line = format!(
            "note: the Nix tests use {} ({}) and {which}\n",
            version.trim(),
            nix.get_program().to_string_lossy()
        );
        std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes()).unwrap();
        Some(lib)
    })
    .clone()
}

/// The real Nixpkgs `lib` directory: `NIXPKGS_LIB` when set (it must then be one), else `<nixpkgs/lib>` when
/// `NIX_PATH` finds one that this Nix can import (Nixpkgs' lib refuses a Nix older than it supports).
fn real_nixpkgs_lib() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("NIXPKGS_LIB").filter(|d| !d.is_empty()) {
        let lib = PathBuf::from(dir);
        assert!(lib.join("default.nix").is_file(), "NIXPKGS_LIB={} is not a Nixpkgs lib directory", lib.display());
        return Some(lib.canonicalize().unwrap());
    }
    let found = run(nix("nix-instantiate")?.args(["--find-file", "nixpkgs/lib"]));
    if !found.status.success() {
        return None;
    }
    let lib = PathBuf::from(stdout(&found).trim());
    let imports = run(nix("nix-instantiate")?.args(["--eval", "--expr", "(import <nixpkgs/lib>).trivial.version"]));
    if !imports.status.success() {
        let line = format!(
            "note: <nixpkgs/lib> is {} but this Nix cannot import it: {}\n",
            lib.display(),
            stderr(&imports).lines().find(|l| l.contains("error")).unwrap_or_default()
        );
        std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes()).unwrap();
        return None;
    }
    Some(lib)
}

/// Whether a Nix version ("2.26.3") is at least `min` (major, minor).
fn at_least(version: &str, min: (u32, u32)) -> bool {
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0)) >= min
}

/// The Nix program the tests run: Debian 13's, which scripts/install-nix.sh unpacks into the cache and runs offline
/// through bubblewrap (`<cache>/nix/bin/NAME`), else the one on PATH (Debian 12's is 2.8: what needs no newer Nix
/// still runs with it, and NVCC_WRAPPER_REQUIRE_REAL=1 refuses it).
fn nix_program(program: &str) -> Option<PathBuf> {
    let cached = cache_dir().join("nix/bin").join(program);
    if cached.is_file() {
        return Some(cached);
    }
    real_program(program)
}

/// `nix-instantiate`/`nix-build` with the project's settings, in tests/nix.
fn nix(program: &str) -> Option<Command> {
    let path = nix_program(program)?;
    let mut cmd = Command::new(path);
    cmd.env("NIX_CONFIG", NIX_CONFIG).current_dir(tests_nix());
    Some(cmd)
}

/// Whether this process can build into /nix/store: Debian's nix-bin has no daemon, so only root can.
fn can_build() -> bool {
    let uid = Command::new("id").arg("-u").output().map(|o| stdout(&o).trim().to_string()).unwrap_or_default();
    if uid == "0" {
        return true;
    }
    assert!(!require_real(), "nix-build needs root here (Debian's nix-bin without a daemon): run the tests as root");
    eprintln!("note: skipped, nix-build needs root here (Debian's nix-bin has no daemon)");
    false
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"))
}

fn ok(cmd: &mut Command) -> String {
    let out = run(cmd);
    assert!(out.status.success(), "{cmd:?} failed ({:?}):\n{}{}", out.status.code(), stdout(&out), stderr(&out));
    stdout(&out)
}

/// Evaluate `file` (its attribute `attr`, if any) strictly, as JSON.
fn eval_json(
    file: &str,
    attr: Option<&str>,
    args: &[(&str, &str)],
    argstrs: &[(&str, &str)],
) -> Option<serde_json::Value> {
    let mut cmd = nix("nix-instantiate")?;
    cmd.args(["--eval", "--strict", "--json", file]);
    if let Some(attr) = attr {
        cmd.args(["-A", attr]);
    }
    for (name, value) in args {
        cmd.args(["--arg", name, value]);
    }
    for (name, value) in argstrs {
        cmd.args(["--argstr", name, value]);
    }
    Some(serde_json::from_str(&ok(&mut cmd)).unwrap())
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn every_nix_file_parses() {
    if nix_program("nix-instantiate").is_none() {
        return;
    }
    let mut files = Vec::new();
    for dir in ["nix", "nix/examples", "nix/examples/hello-cmake", "tests/nix", "tests/nix/lib"] {
        for entry in std::fs::read_dir(Path::new(REPO).join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "nix") {
                files.push(path);
            }
        }
    }
    for name in ["nix/package.nix", "nix/make-nvcc-wrapper.nix", "nix/overlay.nix", "nix/overlay-backend-stdenv.nix"] {
        assert!(files.contains(&Path::new(REPO).join(name)), "{name} is missing");
    }
    for file in &files {
        ok(nix("nix-instantiate").unwrap().arg("--parse").arg(file));
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Evaluation: the config of each case, and the wrapper's plan on it.
// ---------------------------------------------------------------------------------------------------------------

/// The directory the evaluated cases' paths point into, with host-only views of the real toolkits as `cuda_nvcc-X.Y`
/// (a store-path nvcc has no targets/ of another CPU) and, once the configs are known, empty executables for every
/// compiler they name: the wrapper must never run one, since every fact about it is recorded.
struct Evaluated {
    root: PathBuf,
    configs: serde_json::Value,
}

fn evaluated() -> Option<&'static Evaluated> {
    static EVALUATED: OnceLock<Option<Evaluated>> = OnceLock::new();
    EVALUATED
        .get_or_init(|| {
            let lib = nixpkgs_lib()?;
            let toolkits = [real_toolkit("12.4")?, real_toolkit("13.0")?];
            for name in ["jetson-12.4", "sbsa-13.0", "ppc64le-12.4"] {
                real_target_root(name)?;
            }
            let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("nix-eval");
            let _ = std::fs::remove_dir_all(&root);
            std::fs::create_dir_all(&root).unwrap();
            for toolkit in &toolkits {
                let release = toolkit.file_name().unwrap().to_str().unwrap();
                host_only_view(toolkit, &root.join(format!("cuda_nvcc-{release}")));
            }
            let cache = cache_dir();
            let configs = eval_json(
                "eval.nix",
                None,
                &[("nixpkgsLib", path_str(&lib))],
                &[("root", path_str(&root)), ("cache", path_str(&cache))],
            )?;
            for (_, text) in configs.as_object().unwrap() {
                let config: toml::Value = toml::from_str(text.as_str().unwrap()).unwrap();
                for section in [config.get("host-compiler"), config.get("target").and_then(|t| t.get("host-compiler"))]
                    .into_iter()
                    .flatten()
                {
                    let compilers = section
                        .get("stdenv")
                        .into_iter()
                        .chain(section.get("candidates").and_then(|c| c.as_array()).into_iter().flatten());
                    for compiler in compilers {
                        empty_executable(Path::new(compiler["path"].as_str().unwrap()));
                    }
                }
            }
            Some(Evaluated { root, configs })
        })
        .as_ref()
}

fn empty_executable(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, "").unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

/// A toolkit as a Nix store path holds it: bin/ of per-file symlinks (nvcc takes its TOP from argv[0]), nvvm and the
/// host's targets/x86_64-linux, and no targets/ of another CPU.
fn host_only_view(toolkit: &Path, view: &Path) {
    std::fs::create_dir_all(view.join("bin")).unwrap();
    std::fs::create_dir_all(view.join("targets")).unwrap();
    for entry in std::fs::read_dir(toolkit.join("bin")).unwrap() {
        let entry = entry.unwrap();
        std::os::unix::fs::symlink(entry.path(), view.join("bin").join(entry.file_name())).unwrap();
    }
    std::os::unix::fs::symlink(toolkit.join("nvvm"), view.join("nvvm")).unwrap();
    std::os::unix::fs::symlink(toolkit.join("targets/x86_64-linux"), view.join("targets/x86_64-linux")).unwrap();
}

/// The case's config, with the test's directories written as ROOT and CACHE.
fn config_text(ev: &Evaluated, case: &str) -> String {
    let text = ev.configs[case].as_str().unwrap_or_else(|| panic!("no case {case}"));
    text.replace(path_str(&ev.root), "ROOT").replace(path_str(&cache_dir()), "CACHE")
}

/// `nvcc-wrapper explain -- hello.cu -o hello` on the case's config, traced: the command it would run, as words
/// with ROOT and CACHE, after checking that the wrapper executed nothing (the one execve is its own start).
fn explained(ev: &Evaluated, case: &str) -> Option<Vec<String>> {
    let strace = real_program("strace")?;
    let config = ev.root.join(format!("{case}.toml"));
    std::fs::write(&config, ev.configs[case].as_str().unwrap()).unwrap();
    let trace = ev.root.join(format!("{case}.strace"));
    let out = run(Command::new(&strace)
        .args(["-f", "-qq", "-e", "trace=execve,execveat", "-o"])
        .arg(&trace)
        .arg(WRAPPER)
        .args(["explain", "--", "hello.cu", "-o", "hello"])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("NVCC_WRAPPER_CONFIG", &config)
        .current_dir(&ev.root));
    let text = stdout(&out);
    assert!(out.status.success(), "{case}: explain failed: {text}{}", stderr(&out));
    assert!(!text.contains("warning") && stderr(&out).is_empty(), "{case}: {text}{}", stderr(&out));
    let execs = executed(&trace);
    assert_eq!(execs, [WRAPPER.to_string()], "{case}: the wrapper ran a program while planning:\n{text}");
    let runs = text.lines().find_map(|l| l.strip_prefix("runs:")).unwrap_or_else(|| panic!("{case}: {text}"));
    let shown = runs.trim().replace(path_str(&ev.root), "ROOT").replace(path_str(&cache_dir()), "CACHE");
    Some(shlex::split(&without_pid(&shown)).unwrap())
}

/// `text` with each `tmpxft_<8 hex digits>_` (nvcc's temporary names, after the process id of the `explain` that
/// planned them) as `tmpxft_PID_`.
fn without_pid(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("tmpxft_") {
        let (before, from) = rest.split_at(at + "tmpxft_".len());
        out.push_str(before);
        let pid = from.get(..9).filter(|p| p.ends_with('_') && p[..8].bytes().all(|b| b.is_ascii_hexdigit()));
        rest = match pid {
            Some(_) => {
                out.push_str("PID_");
                &from[9..]
            }
            None => from,
        };
    }
    out + rest
}

/// The programs a traced run executed, in order (successful execve calls only).
fn executed(trace: &Path) -> Vec<String> {
    std::fs::read_to_string(trace)
        .unwrap()
        .lines()
        .filter(|l| l.contains("execve") && l.trim_end().ends_with("= 0"))
        .map(|l| {
            let start = l.find("(\"").expect("an execve line") + 2;
            let end = start + l[start..].find('"').unwrap();
            l[start..end].to_string()
        })
        .collect()
}

fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(String::from).collect()
}

const HEADER: &str = "# Written by makeNvccWrapper: what Nixpkgs knows, recorded so that nvcc-wrapper probes nothing.
# The wrapper makes every choice from these facts at each call: see `nvcc-wrapper explain -- ARGS`.
";

fn check_case(case: &str, config: &str, runs: &str) {
    let Some(ev) = evaluated() else { return };
    assert_eq!(config_text(ev, case), format!("{HEADER}{config}"), "{case}: config.toml");
    let Some(plan) = explained(ev, case) else { return };
    assert_eq!(plan, words(runs), "{case}: the command explain shows");
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn eval_native_stdenv_in_range_records_one_compiler_and_nvcc_gets_it() {
    check_case(
        "native-in-range",
        r#"nvcc = "ROOT/cuda_nvcc-12.4/bin/nvcc"
cuda-version = "12.4"

[host-compiler]
stdenv = { path = "ROOT/gcc-wrapper-13.3.0/bin/g++", family = "gcc", gcc-install-dir = "ROOT/gcc-13.3.0/lib/gcc/x86_64-unknown-linux-gnu/13.3.0", libstdcxx-dir = "ROOT/gcc-13.3.0-lib/lib", target = "x86_64-unknown-linux-gnu", version = "13.3.0" }

[gpu]
capabilities = ["8.6", "8.9"]
forward-compat = true
arch-flags = "respect"
"#,
        "ROOT/cuda_nvcc-12.4/bin/nvcc -ccbin=ROOT/gcc-wrapper-13.3.0/bin/g++ \
         -gencode=arch=compute_86,code=sm_86 -gencode=arch=compute_89,code=sm_89 \
         -gencode=arch=compute_89,code=compute_89 -Xfatbin=-compress-all \
         -Xcompiler=-ffile-prefix-map=/tmp/tmpxft_PID_=tmpxft_ -Xcudafe=--orig_src_path_name=hello.cu \
         -Xcompiler=-frandom-seed=hello hello.cu -o hello",
    );
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn eval_gcc_14_stdenv_with_nvcc_12_4_gets_gcc_13_and_keeps_gcc_14s_libstdcxx() {
    check_case(
        "native-stdenv-too-new",
        r#"nvcc = "ROOT/cuda_nvcc-12.4/bin/nvcc"
cuda-version = "12.4"

[host-compiler]
stdenv = { path = "ROOT/gcc-wrapper-14.2.0/bin/g++", family = "gcc", gcc-install-dir = "ROOT/gcc-14.2.0/lib/gcc/x86_64-unknown-linux-gnu/14.2.0", libstdcxx-dir = "ROOT/gcc-14.2.0-lib/lib", target = "x86_64-unknown-linux-gnu", version = "14.2.0" }
candidates = [{ path = "ROOT/gcc-wrapper-13.3.0/bin/g++", family = "gcc", target = "x86_64-unknown-linux-gnu", version = "13.3.0" }]

[gpu]
capabilities = ["8.6", "9.0a"]
forward-compat = true
arch-flags = "respect"
"#,
        "ROOT/cuda_nvcc-12.4/bin/nvcc -ccbin=ROOT/gcc-wrapper-13.3.0/bin/g++ \
         -LROOT/gcc-14.2.0/lib/gcc/x86_64-unknown-linux-gnu/14.2.0 -Xlinker=-rpath,ROOT/gcc-14.2.0-lib/lib \
         -gencode=arch=compute_86,code=sm_86 -gencode=arch=compute_90a,code=sm_90a \
         -gencode=arch=compute_90,code=compute_90 -Xfatbin=-compress-all \
         -Xcompiler=-ffile-prefix-map=/tmp/tmpxft_PID_=tmpxft_ -Xcudafe=--orig_src_path_name=hello.cu \
         -Xcompiler=-frandom-seed=hello hello.cu -o hello",
    );
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn eval_clang_stdenv_gets_the_clang_nvcc_accepts_with_the_gcc_install_of_its_libstdcxx() {
    check_case(
        "clang-stdenv",
        r#"nvcc = "ROOT/cuda_nvcc-12.4/bin/nvcc"
cuda-version = "12.4"

[host-compiler]
stdenv = { path = "ROOT/clang-wrapper-19.1.7/bin/clang++", family = "clang", gcc-install-dir = "ROOT/gcc-14.2.0/lib/gcc/x86_64-unknown-linux-gnu/14.2.0", libstdcxx-dir = "ROOT/gcc-14.2.0-lib/lib", target = "x86_64-unknown-linux-gnu", version = "19.1.7" }
candidates = [{ path = "ROOT/gcc-wrapper-13.3.0/bin/g++", family = "gcc", target = "x86_64-unknown-linux-gnu", version = "13.3.0" }, { path = "ROOT/clang-wrapper-17.0.6/bin/clang++", family = "clang", target = "x86_64-unknown-linux-gnu", version = "17.0.6" }]

[gpu]
capabilities = ["8.9"]
forward-compat = false
arch-flags = "respect"
"#,
        "ROOT/cuda_nvcc-12.4/bin/nvcc -ccbin=ROOT/clang-wrapper-17.0.6/bin/clang++ \
         -Xcompiler=--gcc-install-dir=ROOT/gcc-14.2.0/lib/gcc/x86_64-unknown-linux-gnu/14.2.0 \
         -Xlinker=-rpath,ROOT/gcc-14.2.0-lib/lib -gencode=arch=compute_89,code=sm_89 \
         -Xfatbin=-compress-all \
         -Xcudafe=--orig_src_path_name=hello.cu -Xcompiler=-frandom-seed=hello hello.cu -o hello",
    );
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn eval_jetson_cross_records_the_target_its_cuda_root_and_cuda_compat() {
    check_case(
        "jetson-cross",
        r#"nvcc = "ROOT/cuda_nvcc-12.4/bin/nvcc"
cuda-version = "12.4"

[gpu]
capabilities = ["8.7"]
forward-compat = true
arch-flags = "respect"

[target]
system = "aarch64-linux"
platform = "jetson"
cuda-root = "CACHE/target-roots/jetson-12.4"
cuda-compat = "CACHE/target-roots/jetson-12.4/lib/stubs"

[target.host-compiler]
stdenv = { path = "ROOT/aarch64-unknown-linux-gnu-gcc-wrapper-14.2.0/bin/aarch64-unknown-linux-gnu-g++", family = "gcc", gcc-install-dir = "ROOT/aarch64-unknown-linux-gnu-gcc-14.2.0/lib/gcc/aarch64-unknown-linux-gnu/14.2.0", libstdcxx-dir = "ROOT/aarch64-unknown-linux-gnu-gcc-14.2.0-lib/aarch64-unknown-linux-gnu/lib", target = "aarch64-unknown-linux-gnu", version = "14.2.0" }
candidates = [{ path = "ROOT/aarch64-unknown-linux-gnu-gcc-wrapper-13.3.0/bin/aarch64-unknown-linux-gnu-g++", family = "gcc", target = "aarch64-unknown-linux-gnu", version = "13.3.0" }]
"#,
        "ROOT/cuda_nvcc-12.4/bin/nvcc -Xlinker=-rpath,CACHE/target-roots/jetson-12.4/lib/stubs \
         -ccbin=ROOT/aarch64-unknown-linux-gnu-gcc-wrapper-13.3.0/bin/aarch64-unknown-linux-gnu-g++ \
         -LROOT/aarch64-unknown-linux-gnu-gcc-14.2.0/lib/gcc/aarch64-unknown-linux-gnu/14.2.0 \
         -Xlinker=-rpath,ROOT/aarch64-unknown-linux-gnu-gcc-14.2.0-lib/aarch64-unknown-linux-gnu/lib \
         -ICACHE/target-roots/jetson-12.4/include -LCACHE/target-roots/jetson-12.4/lib \
         -gencode=arch=compute_87,code=sm_87 -gencode=arch=compute_87,code=compute_87 \
         -Xfatbin=-compress-all \
         -Xcompiler=-ffile-prefix-map=/tmp/tmpxft_PID_=tmpxft_ -Xcudafe=--orig_src_path_name=hello.cu \
         -Xcompiler=-frandom-seed=hello hello.cu -o hello",
    );
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn eval_sbsa_cross_with_nvcc_13_0_builds_grace_hopper_and_thor() {
    check_case(
        "sbsa-cross",
        r#"nvcc = "ROOT/cuda_nvcc-13.0/bin/nvcc"
cuda-version = "13.0"

[gpu]
capabilities = ["9.0a", "11.0"]
forward-compat = true
arch-flags = "respect"

[target]
system = "aarch64-linux"
platform = "sbsa"
cuda-root = "CACHE/target-roots/sbsa-13.0"

[target.host-compiler]
stdenv = { path = "ROOT/aarch64-unknown-linux-gnu-gcc-wrapper-14.2.0/bin/aarch64-unknown-linux-gnu-g++", family = "gcc", gcc-install-dir = "ROOT/aarch64-unknown-linux-gnu-gcc-14.2.0/lib/gcc/aarch64-unknown-linux-gnu/14.2.0", libstdcxx-dir = "ROOT/aarch64-unknown-linux-gnu-gcc-14.2.0-lib/aarch64-unknown-linux-gnu/lib", target = "aarch64-unknown-linux-gnu", version = "14.2.0" }
"#,
        "ROOT/cuda_nvcc-13.0/bin/nvcc \
         -ccbin=ROOT/aarch64-unknown-linux-gnu-gcc-wrapper-14.2.0/bin/aarch64-unknown-linux-gnu-g++ \
         -ICACHE/target-roots/sbsa-13.0/include -isystem=CACHE/target-roots/sbsa-13.0/include/cccl \
         -LCACHE/target-roots/sbsa-13.0/lib \
         -gencode=arch=compute_90a,code=sm_90a -gencode=arch=compute_110,code=sm_110 \
         -gencode=arch=compute_110,code=compute_110 --compress-mode=size \
         -Xcompiler=-ffile-prefix-map=/tmp/tmpxft_PID_=tmpxft_ -Xcudafe=--orig_src_path_name=hello.cu \
         --frandom-seed=hello hello.cu -o hello",
    );
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn eval_ppc64le_cross_with_nvcc_12_4_gets_the_cross_gcc_13() {
    check_case(
        "ppc64le-cross",
        r#"nvcc = "ROOT/cuda_nvcc-12.4/bin/nvcc"
cuda-version = "12.4"

[gpu]
capabilities = ["7.0"]
forward-compat = true
arch-flags = "respect"

[target]
system = "powerpc64le-linux"
cuda-root = "CACHE/target-roots/ppc64le-12.4"

[target.host-compiler]
stdenv = { path = "ROOT/powerpc64le-unknown-linux-gnu-gcc-wrapper-14.2.0/bin/powerpc64le-unknown-linux-gnu-g++", family = "gcc", gcc-install-dir = "ROOT/powerpc64le-unknown-linux-gnu-gcc-14.2.0/lib/gcc/powerpc64le-unknown-linux-gnu/14.2.0", libstdcxx-dir = "ROOT/powerpc64le-unknown-linux-gnu-gcc-14.2.0-lib/powerpc64le-unknown-linux-gnu/lib", target = "powerpc64le-unknown-linux-gnu", version = "14.2.0" }
candidates = [{ path = "ROOT/powerpc64le-unknown-linux-gnu-gcc-wrapper-13.3.0/bin/powerpc64le-unknown-linux-gnu-g++", family = "gcc", target = "powerpc64le-unknown-linux-gnu", version = "13.3.0" }]
"#,
        "ROOT/cuda_nvcc-12.4/bin/nvcc \
         -ccbin=ROOT/powerpc64le-unknown-linux-gnu-gcc-wrapper-13.3.0/bin/powerpc64le-unknown-linux-gnu-g++ \
         -LROOT/powerpc64le-unknown-linux-gnu-gcc-14.2.0/lib/gcc/powerpc64le-unknown-linux-gnu/14.2.0 \
         -Xlinker=-rpath,ROOT/powerpc64le-unknown-linux-gnu-gcc-14.2.0-lib/powerpc64le-unknown-linux-gnu/lib \
         -ICACHE/target-roots/ppc64le-12.4/include -LCACHE/target-roots/ppc64le-12.4/lib \
         -gencode=arch=compute_70,code=sm_70 -gencode=arch=compute_70,code=compute_70 \
         -Xfatbin=-compress-all \
         -Xcompiler=-ffile-prefix-map=/tmp/tmpxft_PID_=tmpxft_ -Xcudafe=--orig_src_path_name=hello.cu \
         -Xcompiler=-frandom-seed=hello hello.cu -o hello",
    );
}

// ---------------------------------------------------------------------------------------------------------------
// The overlay and package.nix over stand-ins.
// ---------------------------------------------------------------------------------------------------------------

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn overlay_adds_the_wrapped_nvcc_and_step_two_makes_backend_stdenv_plain_stdenv() {
    let Some(lib) = nixpkgs_lib() else { return };
    // (Not `refusals`, which stop the evaluation.)
    let facts = |attr| eval_json("overlay.nix", Some(attr), &[("nixpkgsLib", path_str(&lib))], &[]);
    let (Some(native), Some(modules), Some(cross)) = (facts("native"), facts("nativeModules"), facts("cross")) else {
        return;
    };
    // Both shapes of Nixpkgs' `_cuda` (with `extensions`, and without: each CUDA set extended by overrideScope)
    // give the same package sets.
    assert_eq!(modules, native);
    let native = &native;
    // Step 1: the package set's values reach makeNvccWrapper: the same file as a call by hand.
    assert_eq!(native["wrapped"], native["byHand"]);
    let wrapped = native["wrapped"].as_str().unwrap();
    assert!(wrapped.contains("stdenv = { path = \"/stand-in/gcc-wrapper-14.2.0/bin/g++\""), "{wrapped}");
    assert!(wrapped.contains("candidates = [{ path = \"/stand-in/gcc-wrapper-13.3.0/bin/g++\""), "{wrapped}");
    assert!(wrapped.contains("capabilities = [\"8.6\"]"), "{wrapped}");
    assert_eq!(native["wrappedName"], "cuda_nvcc-wrapped-12.4.131");
    assert_eq!(native["packageName"], "nvcc-wrapper-0.1.0");
    // Step 1 alone changes nothing that exists.
    assert_eq!(native["step1"]["cudaNvcc"], "cuda_nvcc-12.4.131");
    assert_eq!(native["step1"]["backendStdenvCc"], "gcc-wrapper-13.3.0");
    // Step 2: backendStdenv is the stdenv (GCC 14), keeping the attributes Nixpkgs reads from it; cuda_nvcc is the
    // wrapped one, built from the unwrapped.
    let step2 = &native["step2"];
    assert_eq!(step2["backendStdenvCc"], "gcc-wrapper-14.2.0");
    assert_eq!(step2["backendStdenvIsStdenv"], true);
    assert_eq!(step2["cudaCapabilities"], serde_json::json!(["8.6"]));
    assert_eq!(step2["hasJetsonCudaCapability"], false);
    assert_eq!(step2["nvccHostCCMatchesStdenvCC"], true);
    assert_eq!(step2["cudaNvcc"], "cuda_nvcc-wrapped-12.4.131");
    assert_eq!(step2["unwrapped"], "cuda_nvcc-12.4.131");
    // Nixpkgs' own nvcc stays exactly Nixpkgs' under both steps: the same derivation as without the overlays, its
    // nvcc.profile naming Nixpkgs' backendStdenv compiler (GCC 13), not step 2's (GCC 14).
    let unwrapped = &native["unwrapped"];
    assert!(unwrapped["nixpkgs"]["drvPath"].as_str().unwrap().ends_with("-cuda_nvcc-12.4.131.drv"), "{unwrapped}");
    assert_eq!(unwrapped["step1"], unwrapped["nixpkgs"]);
    assert_eq!(unwrapped["step2"], unwrapped["nixpkgs"]);
    assert_eq!(unwrapped["nixpkgs"]["compilerBindir"], "/stand-in/gcc-wrapper-13.3.0/bin");
    assert_eq!(unwrapped["withStep2Stdenv"], "gcc-wrapper-14.2.0");
    // The example derivation: plain stdenv, the wrapped nvcc among its build tools.
    assert_eq!(native["example"]["nativeBuildInputs"], serde_json::json!(["cmake-3.30", "cuda_nvcc-wrapped-12.4.131"]));

    // A cross derivation's nativeBuildInputs get the build-host set's nvcc-wrapped: the aarch64 set's stdenv
    // compiler, capabilities and Jetson platform, and the aarch64 set's CUDA files as the target's.
    let cross = &cross;
    let wrapped = cross["wrapped"].as_str().unwrap();
    for line in [
        "[target]\nsystem = \"aarch64-linux\"\nplatform = \"jetson\"\ncuda-root = \"/stand-in/cuda-target-root-aarch64-unknown-linux-gnu-12.4\"\n",
        "capabilities = [\"8.7\"]",
        "[target.host-compiler]\nstdenv = { path = \"/stand-in/aarch64-unknown-linux-gnu-gcc-wrapper-14.2.0/bin/aarch64-unknown-linux-gnu-g++\"",
        "candidates = [{ path = \"/stand-in/aarch64-unknown-linux-gnu-gcc-wrapper-13.3.0/bin/aarch64-unknown-linux-gnu-g++\"",
    ] {
        assert!(wrapped.contains(line), "no {line:?} in:\n{wrapped}");
    }
    assert!(!wrapped.contains("\n[host-compiler]"), "{wrapped}");
    assert_eq!(cross["wrappedName"], "aarch64-unknown-linux-gnu-cuda_nvcc-wrapped-12.4.131");
    assert_eq!(
        cross["targetCudaRoot"],
        serde_json::json!(["cuda_cudart-aarch64-unknown-linux-gnu-12.4", "cuda_cccl-aarch64-unknown-linux-gnu-12.4"])
    );
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn overlay_on_a_nixpkgs_it_cannot_extend_says_what_it_needs() {
    let Some(lib) = nixpkgs_lib() else { return };
    let mut cmd = nix("nix-instantiate").unwrap();
    cmd.args(["--eval", "--strict", "overlay.nix", "-A", "unsupported", "--arg", "nixpkgsLib", path_str(&lib)]);
    let out = run(&mut cmd);
    let err = stderr(&out);
    assert!(!out.status.success(), "{}", stdout(&out));
    assert!(
        err.contains("error: nvcc-wrapper's overlay: cudaPackages_12_4 is not a scope (no `overrideScope`) and this Nixpkgs' `_cuda` has no `extensions`"),
        "{err}"
    );
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn package_nix_builds_this_crate_from_a_source_with_only_what_the_build_needs() {
    let Some(lib) = nixpkgs_lib() else { return };
    if !can_build() {
        return;
    }
    let expr = format!(
        r#"let
          lib = import {lib};
          standIn = name: {{ type = "derivation"; inherit name; outPath = "/stand-in/${{name}}"; }};
          # rustPlatform.buildRustPackage and runCommand, recording their arguments.
          p = import ../../nix/package.nix {{
            inherit lib;
            stdenv.hostPlatform = lib.systems.elaborate "x86_64-linux";
            rustPlatform.buildRustPackage = f: let a = f (a // {{ finalPackage = standIn "nvcc-wrapper-built" // {{ meta.mainProgram = "nvcc-wrapper"; }}; }}); in a;
            glibc = standIn "glibc" // {{ static = standIn "glibc-static"; }};
            file = standIn "file";
            runCommand = name: env: script: {{ inherit name script; nativeBuildInputs = map (d: d.name) env.nativeBuildInputs; }};
            installShellFiles = standIn "install-shell-files";
          }};
        in {{
          inherit (p) pname version cargoBuildFlags cargoTestFlags;
          buildInputs = map (d: d.name) p.buildInputs;
          nativeBuildInputs = map (d: d.name) p.nativeBuildInputs;
          inherit (p) postInstall;
          inherit (p.env) RUSTFLAGS;
          staticTest = p.passthru.tests.static;
          lockFile = toString p.cargoLock.lockFile;
          src = "${{p.src}}";
          meta = {{
            inherit (p.meta) description mainProgram;
            license = map (l: l.spdxId) p.meta.license;
            linux = builtins.elem "x86_64-linux" p.meta.platforms && builtins.elem "aarch64-linux" p.meta.platforms;
          }};
        }}"#,
        lib = lib.display()
    );
    // --read-write-mode: the filtered source is copied into the store, as a build would.
    let Some(mut cmd) = nix("nix-instantiate") else { return };
    let text = ok(cmd.args(["--eval", "--strict", "--json", "--read-write-mode", "-E", &expr]));
    let p: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(p["pname"], env!("CARGO_PKG_NAME"));
    assert_eq!(p["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(p["lockFile"], format!("{REPO}/Cargo.lock"));
    assert_eq!(p["cargoBuildFlags"], serde_json::json!(["--package", "nvcc-wrapper"]));
    assert_eq!(p["cargoTestFlags"], serde_json::json!(["--package", "nvcc-wrapper"]));
    // The fast binary, as the README's install line: glibc linked in, so glibc's static library is an input; the
    // flag reaches the target's crates only (buildRustPackage passes --target).
    assert_eq!(p["RUSTFLAGS"], "-C target-feature=+crt-static");
    assert_eq!(p["buildInputs"], serde_json::json!(["glibc-static"]));
    // The man page, made from the code, goes to share/man/man1 (Nixpkgs' installManPage).
    assert_eq!(p["nativeBuildInputs"], serde_json::json!(["install-shell-files"]));
    assert_eq!(p["postInstall"], "installManPage docs/man/nvcc-wrapper.1\n");
    // passthru.tests.static runs `file` on the built binary and fails unless it says static.
    let test = &p["staticTest"];
    assert_eq!(test["name"], "nvcc-wrapper-built-test-static");
    assert_eq!(test["nativeBuildInputs"], serde_json::json!(["file"]));
    let script = test["script"].as_str().unwrap();
    assert!(script.contains("exe=/stand-in/nvcc-wrapper-built/bin/nvcc-wrapper\n"), "{script}");
    assert!(script.contains("file -L \"$exe\" | tee \"$out\"\ngrep -q 'static' \"$out\"\n"), "{script}");
    assert_eq!(p["meta"]["description"], env!("CARGO_PKG_DESCRIPTION"));
    assert_eq!(p["meta"]["mainProgram"], "nvcc-wrapper");
    assert_eq!(p["meta"]["license"], serde_json::json!(["MIT", "Apache-2.0"]));
    assert_eq!(p["meta"]["linux"], true);

    let src = PathBuf::from(p["src"].as_str().unwrap());
    // lib.fileset.toSource names its store path "source".
    assert!(src.to_str().unwrap().ends_with("-source"), "{}", src.display());
    let mut kept = BTreeSet::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(&src).unwrap().to_str().unwrap().to_string();
            if path.is_dir() {
                stack.push(path);
            }
            kept.insert(rel);
        }
    }
    for wanted in [
        "Cargo.toml",
        "Cargo.lock",
        "build.rs",
        "benches/plan.rs",
        "src/main.rs",
        "src/plan/host_compiler/mod.rs",
        "compat-data/host-compilers.toml",
        "compat-data/platforms.toml",
        "tests/fakes/Cargo.toml",
        "tests/fixtures/probe",
        // Installed, and read with the reference pages by the unit tests that check them against the code.
        "docs/man/nvcc-wrapper.1",
        "docs/reference/exit-codes.md",
        "docs/reference/config.md",
    ] {
        assert!(kept.contains(wanted), "{wanted} is not in the source: {kept:?}");
    }
    for dropped in [
        "target",
        ".git",
        "README.md",
        "CONTRIBUTING.md",
        "docs/README.md",
        "docs/guide",
        "docs/nvcc-facts.md",
        "nix",
        "scripts",
        "examples",
        "fuzz",
        "benches/fatbin-load.c",
        "tests/wrapper",
        "tests/real",
        "tests/common",
        "tests/fakes/tests",
    ] {
        assert!(!kept.iter().any(|k| k == dropped || k.starts_with(&format!("{dropped}/"))), "{dropped} is kept");
    }
    // Every source file of the crate is there.
    for entry in std::fs::read_dir(Path::new(REPO).join("src")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        assert!(kept.contains(&format!("src/{name}")), "src/{name} is not in the source");
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Realisation: nix-build over this machine's real toolchains.
// ---------------------------------------------------------------------------------------------------------------

/// What tests/nix/realise.nix gets: the Nixpkgs lib, the cache, the wrapper cargo built, and the compilers' versions.
fn realise_args() -> Option<Vec<String>> {
    let lib = nixpkgs_lib()?;
    real_toolkit("11.8")?;
    real_toolkit("12.4")?;
    real_target_root("jetson-12.4")?;
    let version = |program: &str| -> Option<String> {
        let path = real_program(program)?;
        Some(ok(Command::new(path).arg("-dumpfullversion")).trim().to_string())
    };
    let args = vec![
        "--arg".into(),
        "nixpkgsLib".into(),
        path_str(&lib).into(),
        "--argstr".into(),
        "cache".into(),
        path_str(&cache_dir()).into(),
        "--argstr".into(),
        "wrapperExe".into(),
        WRAPPER.into(),
        "--argstr".into(),
        "gcc12Version".into(),
        version("g++-12")?,
        "--argstr".into(),
        "gcc11Version".into(),
        version("g++-11")?,
        "--argstr".into(),
        "crossGcc12Version".into(),
        version("aarch64-linux-gnu-g++-12")?,
    ];
    Some(args)
}

struct Realised {
    native: PathBuf,
    jetson: PathBuf,
}

/// `native` and `jetson` of tests/nix/realise.nix, built once for all tests.
fn realised() -> Option<&'static Realised> {
    static REALISED: OnceLock<Option<Realised>> = OnceLock::new();
    REALISED
        .get_or_init(|| {
            let args = realise_args()?;
            if !can_build() {
                return None;
            }
            let mut cmd = nix("nix-build")?;
            cmd.args(["realise.nix", "-A", "native", "-A", "jetson", "--no-out-link"])
                .args(["--option", "sandbox", "false", "--option", "build-users-group", ""])
                .args(&args);
            let text = ok(&mut cmd);
            let paths: Vec<PathBuf> = text.lines().map(PathBuf::from).collect();
            assert_eq!(paths.len(), 2, "{text}");
            Some(Realised { native: paths[0].clone(), jetson: paths[1].clone() })
        })
        .as_ref()
}

/// `nix-build --check` of a package's `passthru.tests.reproducible` (an object and two programs built by the wrapped
/// nvcc, natively and cross for Jetson), after building it once: Nix builds it again in another build directory, with another TMPDIR and other
/// process ids, and compares. With the wrapper's reproducible-builds flags it passes; with `reproducible = false`
/// Nix reports the output differs.
#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn nix_build_check_of_a_cuda_derivation_passes_with_reproducible_builds_and_fails_without() {
    let Some(args) = realise_args() else { return };
    if realised().is_none() {
        return;
    }
    let build = |attr: &str, check: bool| {
        let mut cmd = nix("nix-build").unwrap();
        cmd.args(["realise.nix", "-A", &format!("{attr}.passthru.tests.reproducible"), "--no-out-link"])
            .args(["--option", "sandbox", "false", "--option", "build-users-group", ""])
            .args(&args);
        if check {
            cmd.arg("--check");
        }
        run(&mut cmd)
    };
    for attr in ["native", "jetson", "native-not-reproducible"] {
        let first = build(attr, false);
        assert!(first.status.success(), "{attr}: {}", stderr(&first));
        let out = PathBuf::from(stdout(&first).trim());
        for file in ["hello.o", "hello", "hello-one-call"] {
            assert!(out.join(file).is_file(), "{attr}: no {file} in {}", out.display());
        }
        let checked = build(attr, true);
        let err = stderr(&checked);
        if attr != "native-not-reproducible" {
            assert!(checked.status.success(), "nix-build --check of {attr}: {err}");
        } else {
            assert!(!checked.status.success(), "nix-build --check of {attr} passed: the control shows nothing");
            assert!(err.contains("may not be deterministic"), "{attr}: {err}");
        }
    }
    // What makeNvccWrapper wrote: nothing for the default (on), `reproducible = false` for the control.
    let on = std::fs::read_to_string(realised().unwrap().native.join("share/nvcc-wrapper/config.toml")).unwrap();
    assert!(!on.contains("reproducible"), "{on}");
    let off = realise_eval("native-not-reproducible.configToml");
    assert!(off.as_str().unwrap().contains("\nreproducible = false\n"), "{off}");
}

/// The attribute of realise.nix, evaluated.
fn realise_eval(attr: &str) -> serde_json::Value {
    let args = realise_args().unwrap();
    let mut cmd = nix("nix-instantiate").unwrap();
    cmd.args(["--eval", "--strict", "--json", "realise.nix", "-A", attr]).args(&args);
    serde_json::from_str(&ok(&mut cmd)).unwrap()
}

/// `bin/nvcc` of a realised package compiling examples/hello.cu, traced: the first program it executes after itself
/// must be the real nvcc (so nothing was probed), with a clean environment.
fn compile_traced(package: &Path, dir: &Path, output: &str) -> Vec<String> {
    let strace = real_program("strace").unwrap();
    std::fs::write(dir.join("hello.cu"), SMOKE_CU).unwrap();
    let trace = dir.join(format!("{output}.strace"));
    let nvcc = package.join("bin/nvcc");
    let out = run(Command::new(strace)
        .args(["-f", "-qq", "-e", "trace=execve,execveat", "-o"])
        .arg(&trace)
        .arg(&nvcc)
        .args(["hello.cu", "-o", output])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .current_dir(dir));
    assert!(out.status.success(), "{} failed: {}{}", nvcc.display(), stdout(&out), stderr(&out));
    executed(&trace)
}

/// The config the package recorded: `nvcc` and the compilers' paths.
fn recorded(package: &Path) -> toml::Value {
    toml::from_str(&std::fs::read_to_string(package.join("share/nvcc-wrapper/config.toml")).unwrap()).unwrap()
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn realised_package_has_the_wrapper_as_nvcc_its_config_and_its_setup_hook() {
    let Some(r) = realised() else { return };
    let target = std::fs::read_link(r.native.join("bin/nvcc")).unwrap();
    assert!(target.ends_with("bin/nvcc-wrapper") && target.starts_with("/nix/store"), "{}", target.display());
    // The file in the store is the text evaluation gives.
    let text = std::fs::read_to_string(r.native.join("share/nvcc-wrapper/config.toml")).unwrap();
    assert_eq!(serde_json::Value::String(text), realise_eval("native.configToml"));
    // CMake's spelling of the capabilities, from the wrapper itself; the propagated real nvcc; the hook.
    let archs = std::fs::read_to_string(r.native.join("nix-support/cmake-cuda-architectures")).unwrap();
    assert_eq!(archs, "86-real;86-virtual\n");
    let nvcc = PathBuf::from(recorded(&r.native)["nvcc"].as_str().unwrap());
    let toolkit = nvcc.parent().unwrap().parent().unwrap();
    let propagated = std::fs::read_to_string(r.native.join("nix-support/propagated-build-inputs")).unwrap();
    assert_eq!(propagated.trim(), path_str(toolkit));
    let hook = std::fs::read_to_string(r.native.join("nix-support/setup-hook")).unwrap();
    assert!(hook.contains(&format!("export CUDACXX={}/bin/nvcc\n", r.native.display())), "{hook}");
    assert!(!hook.contains("@out@") && !hook.contains("@cudaToolkitRoot@"), "{hook}");
    // bin/nvcc-wrapper finds the package's config too (for explain and doctor on it), and reads no user file: a
    // wrapper made by Nix is pure, whatever the user's ~/.config holds (issue 33).
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".config/nvcc-wrapper")).unwrap();
    std::fs::write(home.path().join(".config/nvcc-wrapper/config.toml"), "[gpu]\nbogus = 1\n").unwrap();
    let shown = ok(Command::new(r.native.join("bin/nvcc-wrapper"))
        .args(["explain", "--", "-c", "k.cu"])
        .env_clear()
        .env("HOME", home.path())
        .env("PATH", "/usr/bin:/bin"));
    let found = shown.lines().find_map(|l| l.strip_prefix("config file:")).unwrap_or_else(|| panic!("{shown}"));
    let found = found.trim().strip_suffix(" (the installation's)").unwrap_or_else(|| panic!("{shown}"));
    let config = r.native.join("share/nvcc-wrapper/config.toml");
    assert_eq!(Path::new(found).canonicalize().unwrap(), config, "{shown}");
    assert!(!shown.contains(".config/nvcc-wrapper"), "{shown}");
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn nix_build_of_the_packages_passthru_tests_compiles_hello_and_runs_it_natively() {
    let Some(args) = realise_args() else { return };
    if realised().is_none() {
        return;
    }
    // What a Nixpkgs reviewer runs: `nix-build -A <package>.passthru.tests`.
    let mut cmd = nix("nix-build").unwrap();
    cmd.args(["realise.nix", "-A", "native.passthru.tests", "-A", "jetson.passthru.tests", "--no-out-link"])
        .args(["--option", "sandbox", "false", "--option", "build-users-group", ""])
        .args(&args);
    let text = ok(&mut cmd);
    let paths: Vec<&str> = text.lines().collect();
    assert_eq!(paths.len(), 4, "{text}");
    assert!(paths[0].ends_with("-cuda_nvcc-wrapped-11.8-test-hello"), "{text}");
    assert!(paths[1].ends_with("-cuda_nvcc-wrapped-11.8-test-reproducible"), "{text}");
    assert!(paths[2].ends_with("-aarch64-unknown-linux-gnu-cuda_nvcc-wrapped-12.4-test-hello"), "{text}");
    assert!(paths[3].ends_with("-aarch64-unknown-linux-gnu-cuda_nvcc-wrapped-12.4-test-reproducible"), "{text}");
    // The native test ran the program it built; the cross one only built it.
    let ran = std::fs::read_to_string(paths[0]).unwrap();
    assert!(ran.starts_with("hello: built and started") || ran.starts_with("hello: squared"), "{ran}");
    assert_eq!(std::fs::read_to_string(paths[2]).unwrap(), "");
    // The reproducible tests hold what `nix-build --check` compares (see the test after this one).
    for dir in [paths[1], paths[3]] {
        for file in ["hello.o", "hello", "hello-one-call"] {
            assert!(Path::new(dir).join(file).is_file(), "{dir}: no {file}");
        }
    }
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn realised_native_nvcc_compiles_links_and_runs_hello_with_gcc_11_and_gcc_12s_libstdcxx() {
    let Some(r) = realised() else { return };
    let dir = tempfile::tempdir().unwrap();
    let execs = compile_traced(&r.native, dir.path(), "hello");
    let config = recorded(&r.native);
    let real = config["nvcc"].as_str().unwrap();
    let candidate = config["host-compiler"]["candidates"][0]["path"].as_str().unwrap();
    assert_eq!(execs[0], r.native.join("bin/nvcc").to_str().unwrap());
    assert_eq!(execs[1], real, "the wrapper ran something before nvcc: {execs:?}");
    // nvcc then runs the candidate nvcc 11.8 accepts (GCC 11), never the stdenv's GCC 12.
    let stdenv = config["host-compiler"]["stdenv"]["path"].as_str().unwrap();
    assert!(execs.iter().any(|e| e == candidate), "{execs:?}");
    assert!(!execs.iter().any(|e| e == stdenv), "{execs:?}");
    run_smoke(&dir.path().join("hello"));
    // Linked against the stdenv's libstdc++, as recorded.
    let dynamic = ok(Command::new("readelf").arg("-d").arg(dir.path().join("hello")));
    let libstdcxx = config["host-compiler"]["stdenv"]["libstdcxx-dir"].as_str().unwrap();
    assert!(dynamic.contains(&format!("[{libstdcxx}]")), "{dynamic}");
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn realised_jetson_nvcc_cross_compiles_hello_for_aarch64_that_runs_under_qemu() {
    let Some(r) = realised() else { return };
    let (Some(qemu), Some(cuobjdump)) = (real_program("qemu-aarch64"), real_tool("cuobjdump")) else { return };
    let dir = tempfile::tempdir().unwrap();
    let execs = compile_traced(&r.jetson, dir.path(), "hello");
    let config = recorded(&r.jetson);
    assert_eq!(execs[1], config["nvcc"].as_str().unwrap(), "the wrapper ran something before nvcc: {execs:?}");
    let cross = config["target"]["host-compiler"]["stdenv"]["path"].as_str().unwrap();
    assert!(execs.iter().any(|e| e == cross), "{execs:?}");
    let program = dir.path().join("hello");
    let file = ok(Command::new("file").arg("-b").arg(&program));
    assert!(file.starts_with("ELF 64-bit") && file.contains("ARM aarch64"), "{file}");
    let out = run(Command::new(qemu).args(["-L", "/usr/aarch64-linux-gnu"]).arg(&program));
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).starts_with("hello: built and started"), "{}", stdout(&out));
    let want: BTreeSet<String> = ["sm_87".to_string(), "ptx sm_87".to_string()].into();
    assert_eq!(embedded(&cuobjdump, &program), want);
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn a_bad_capability_list_fails_instantiation_of_the_realised_cases_before_any_build() {
    let Some(args) = realise_args() else { return };
    for (attr, gencode) in [
        ("bad-jetson-on-x86_64", ["--cuda-version", "12.4", "--system", "x86_64-linux", "--forward-compat", "8.7"]),
        (
            "bad-capability-for-release",
            ["--cuda-version", "11.8", "--system", "x86_64-linux", "--forward-compat", "9.0a"],
        ),
    ] {
        let (error, help) = binary_refusal(&gencode);
        let mut cmd = nix("nix-instantiate").unwrap();
        cmd.args(["realise.nix", "-A", attr]).args(&args);
        let out = run(&mut cmd);
        let err = stderr(&out);
        assert!(!out.status.success(), "{attr} instantiated: {}", stdout(&out));
        assert!(err.contains(&format!("makeNvccWrapper: {error}\n")), "{attr}: {err}");
        let first = help.split("; ").next().unwrap();
        assert!(err.contains(&format!("help: {first}")), "{attr}: {err}");
    }
}

/// What the binary says when it refuses a request, as (error, help) without their `nvcc-wrapper: error: ` and
/// `help: ` prefixes: from `nvcc-wrapper gencode ARGS`, or from `explain` on a config.
fn binary_refusal(gencode: &[&str]) -> (String, String) {
    let out = run(Command::new(WRAPPER).arg("gencode").args(gencode).env_clear().env("PATH", "/usr/bin:/bin"));
    refusal_lines(&out)
}

fn refusal_lines(out: &Output) -> (String, String) {
    assert!(!out.status.success(), "accepted: {}", stdout(out));
    let text = stderr(out);
    let error = text.lines().find_map(|l| l.strip_prefix("nvcc-wrapper: error: ")).unwrap_or_else(|| panic!("{text}"));
    let help = text.lines().find_map(|l| l.strip_prefix("help: ")).unwrap_or_else(|| panic!("{text}"));
    (error.to_string(), help.to_string())
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn a_request_the_wrapper_refuses_fails_evaluation_with_its_words_under_both_steps() {
    let Some(lib) = nixpkgs_lib() else { return };
    let Some(toolkit) = real_toolkit("11.8") else { return };
    // The host-compiler case as the binary sees it: the config the overlay would write (nvcc 11.8, the stdenv's
    // GCC 14, no candidate), with nothing on PATH.
    let dir = tempfile::tempdir().unwrap();
    let gcc14 = dir.path().join("gcc-wrapper-14.2.0/bin/g++");
    empty_executable(&gcc14);
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "nvcc = \"{}\"\ncuda-version = \"11.8\"\n\n[host-compiler]\nstdenv = {{ path = \"{}\", family = \"gcc\", \
             target = \"x86_64-unknown-linux-gnu\", version = \"14.2.0\" }}\n\n[gpu]\ncapabilities = [\"8.6\"]\n",
            toolkit.join("bin/nvcc").display(),
            gcc14.display()
        ),
    )
    .unwrap();
    let empty = dir.path().join("empty-path");
    std::fs::create_dir(&empty).unwrap();
    let explained = run(Command::new(WRAPPER)
        .args(["explain", "--", "-c", "k.cu"])
        .env_clear()
        .env("PATH", &empty)
        .env("NVCC_WRAPPER_CONFIG", &config));
    let (compiler_error, _) = refusal_lines(&explained);
    let compiler_error = compiler_error.replace(path_str(dir.path()), "/stand-in");

    let flags = |v: &'static str, caps: &[&'static str]| -> Vec<&'static str> {
        [&["--cuda-version", v, "--system", "x86_64-linux", "--forward-compat"][..], caps].concat()
    };
    // (case of tests/nix/overlay.nix, the binary's error, its help's first clause, whether step 2's backendStdenv
    // refuses it too: the host compiler is the wrapped nvcc's to check)
    let mut cases = Vec::new();
    for (case, args) in [
        ("unknown-capability", flags("12.4", &["8.6", "9.5"])),
        ("capability-too-new", flags("11.8", &["9.0a"])),
        ("capability-dropped", flags("13.0", &["7.0", "8.6"])),
        ("jetson-on-x86_64", flags("12.4", &["8.6", "8.7"])),
        ("baseline-with-family", flags("13.0", &["8.6", "10.0f", "10.0"])),
    ] {
        let (error, help) = binary_refusal(&args);
        cases.push((case, error, help.split("; ").next().unwrap().to_string(), true));
    }
    // A release the tables do not know: the binary names its flag, Nix its argument.
    let (error, help) = binary_refusal(&["--cuda-version", "12.7", "8.6"]);
    assert!(error.starts_with("`--cuda-version 12.7` is"), "{error}");
    cases.push((
        "unknown-release",
        error.replace("`--cuda-version 12.7`", "`cudaMajorMinorVersion` \"12.7\""),
        help,
        true,
    ));
    cases.push(("host-compiler-out-of-range", compiler_error, "give one in `extraCandidates`".into(), false));

    for ((case, error, help, refused_by_backend), shape) in
        cases.iter().flat_map(|c| ["extensions", "modules"].map(|shape| (c, shape)))
    {
        // Step 2's wrapped nvcc reads the capabilities from flags, which current Nixpkgs derives from backendStdenv:
        // either may speak first, with the same words.
        let backend = "backendStdenv (nix/overlay-backend-stdenv.nix)";
        for (attr, who) in [
            ("step1", &["makeNvccWrapper"][..]),
            ("step2.cudaNvcc", &["makeNvccWrapper", backend][..]),
            ("step2.backendStdenv", &[backend][..]),
        ] {
            let mut cmd = nix("nix-instantiate").unwrap();
            cmd.args(["--eval", "--strict", "overlay.nix", "-A", &format!("refusals.{shape}.{case}.{attr}")]).args([
                "--arg",
                "nixpkgsLib",
                path_str(&lib),
            ]);
            let out = run(&mut cmd);
            let err = stderr(&out);
            if attr == "step2.backendStdenv" && !refused_by_backend {
                assert_eq!(ok(&mut cmd).trim(), "\"gcc-wrapper-14.2.0\"", "{case}: {err}");
                continue;
            }
            assert!(!out.status.success(), "{case} {attr} evaluated: {}", stdout(&out));
            assert!(
                who.iter().any(|who| err.contains(&format!("error: {who}: {error}\n"))),
                "{case} {attr}: want {error:?} in:\n{err}"
            );
            assert!(err.contains(&format!("help: {help}")), "{case} {attr}: want {help:?} in:\n{err}");
        }
    }
}

// ---------------------------------------------------------------------------------------------------------------
// The setup hook, in a shell with Nixpkgs' hook helpers stood in, and CMake through it.
// ---------------------------------------------------------------------------------------------------------------

/// Nixpkgs' helpers the hook calls (setup.sh's addToSearchPathWithCustomDelimiter and appendToVar, for variables
/// that are strings as without structuredAttrs), and the compiler step of Nixpkgs' setup-cuda-hook as it behaves:
/// skipped under dontSetupCUDAToolkitCompilers, else it fixes the host compiler.
const HOOK_HELPERS: &str = r#"
set -eu
addToSearchPathWithCustomDelimiter() { local d="$1" v="$2" dir="$3"; [[ -d $dir ]] && export "$v=${!v:+${!v}$d}$dir"; return 0; }
appendToVar() { local v="$1"; shift; declare -g "$v=${!v:+${!v} }$*"; }
preConfigureHooks=()
setupCUDAToolkitCompilers() {
    [[ -n ${dontSetupCUDAToolkitCompilers-} ]] && return 0
    appendToVar cmakeFlags "-DCMAKE_CUDA_HOST_COMPILER=/backend/bin/c++"
    export CUDAHOSTCXX=/backend/bin/c++
}
hostOffset=-1
targetOffset=0
"#;

/// Source the hook (after `before`), run the preConfigure hooks with Nixpkgs' compiler step first, and print what a
/// configure phase sees.
fn hook_env(package: &Path, before: &str) -> String {
    let script = format!(
        "{HOOK_HELPERS}{before}\nsource {hook}\npreConfigureHooks=(setupCUDAToolkitCompilers \"${{preConfigureHooks[@]}}\")\n\
         for h in \"${{preConfigureHooks[@]}}\"; do $h; done\n\
         printf 'CUDACXX=%s\\nNVCC=%s\\nCUDAToolkit_ROOT=%s\\nCUDAHOSTCXX=%s\\ncmakeFlags=%s\\nCUDAARCHS=%s\\nNVCC_PREPEND_FLAGS=%s\\n' \
           \"${{CUDACXX-}}\" \"${{NVCC-}}\" \"${{CUDAToolkit_ROOT-}}\" \"${{CUDAHOSTCXX-unset}}\" \"${{cmakeFlags-}}\" \
           \"${{CUDAARCHS-unset}}\" \"${{NVCC_PREPEND_FLAGS-}}\"\n\
         env | grep -E '^(CUDACXX|CUDAARCHS|NVCC_PREPEND_FLAGS|NVCC_WRAPPER_COMPRESS_FATBIN)=' | sort | sed 's/^/exported /'\n",
        hook = package.join("nix-support/setup-hook").display()
    );
    ok(Command::new("bash").arg("-c").arg(script).env_clear().env("PATH", "/usr/bin:/bin"))
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn setup_hook_exports_the_wrapped_nvcc_and_keeps_nixpkgs_hook_off_the_host_compiler() {
    let Some(r) = realised() else { return };
    let config = recorded(&r.native);
    let toolkit = Path::new(config["nvcc"].as_str().unwrap()).parent().unwrap().parent().unwrap();
    let nvcc = r.native.join("bin/nvcc");
    let seen = hook_env(&r.native, "");
    let want = format!(
        "CUDACXX={nvcc}\nNVCC={nvcc}\nCUDAToolkit_ROOT={root}\nCUDAHOSTCXX=unset\n\
         cmakeFlags=-DCMAKE_CUDA_ARCHITECTURES=86-real;86-virtual\nCUDAARCHS=86-real;86-virtual\n\
         NVCC_PREPEND_FLAGS=\n\
         exported CUDAARCHS=86-real;86-virtual\nexported CUDACXX={nvcc}\n",
        nvcc = nvcc.display(),
        root = toolkit.display()
    );
    assert_eq!(seen, want);

    // A derivation that names its architectures keeps them, whichever way it says them; one that opts out of
    // compression (issue 14: the wrapper compresses, the hook adds no flag) turns the wrapper's compression off.
    for before in [
        "cmakeFlags='-DFOO=1 -DCMAKE_CUDA_ARCHITECTURES=75'",
        "cmakeFlags='-DCMAKE_CUDA_ARCHITECTURES:STRING=75'",
        "cmakeFlagsArray=(-DCMAKE_CUDA_ARCHITECTURES=75)",
        "export CUDAARCHS=75",
    ] {
        let seen = hook_env(&r.native, &format!("{before}\ndontCompressFatbin=1"));
        assert!(!seen.contains("86-real"), "{before}: {seen}");
        assert!(seen.contains("NVCC_PREPEND_FLAGS=\n"), "{before}: {seen}");
        assert!(seen.contains("exported NVCC_WRAPPER_COMPRESS_FATBIN=0\n"), "{before}: {seen}");
        assert!(seen.contains("CUDAHOSTCXX=unset"), "{before}: {seen}");
    }

    // Outside nativeBuildInputs (a buildInputs entry) it does nothing, and Nixpkgs' hook is left as it was.
    let seen = hook_env(&r.native, "hostOffset=0; targetOffset=1");
    assert!(seen.starts_with("CUDACXX=\nNVCC=\nCUDAToolkit_ROOT=\nCUDAHOSTCXX=/backend/bin/c++\n"), "{seen}");
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn setup_hook_hands_nvcc_the_library_directories_its_archiver_and_the_drafts_fatbin_opt_out() {
    let Some(r) = realised() else { return };
    let script = format!(
        "{HOOK_HELPERS}NIX_LDFLAGS='-L/lib/a -rpath /run/x -L/lib/b'\nNIX_CUDA_DONT_COMPRESS_FATBINS=1\n\
         source {hook}\nfor h in \"${{preConfigureHooks[@]}}\"; do $h; done\n\
         printf '%s\\n' \"$NVCC_APPEND_FLAGS\" \"$NVCC_WRAPPER_COMPRESS_FATBIN\" \"$PATH\"\n",
        hook = r.jetson.join("nix-support/setup-hook").display()
    );
    let seen = ok(Command::new("bash").arg("-c").arg(script).env_clear().env("PATH", "/usr/bin:/bin"));
    let lines: Vec<&str> = seen.lines().collect();
    // The -L of NIX_LDFLAGS, for nvlink; the draft's opt-out; the package's `ar` last on PATH.
    assert_eq!(lines[0], "-L/lib/a -L/lib/b", "{seen}");
    assert_eq!(lines[1], "0", "{seen}");
    let private = r.jetson.join("libexec/nvcc-wrapper/bin");
    assert_eq!(lines[2], format!("/usr/bin:/bin:{}", private.display()), "{seen}");
    // For Jetson it is the target's (aarch64) archiver, from the cross stdenv's bintools.
    let ar = private.join("ar").canonicalize().unwrap();
    assert_eq!(ar, Path::new("/usr/bin/aarch64-linux-gnu-ar").canonicalize().unwrap());
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn a_device_library_named_only_in_nix_ldflags_links_through_the_hook() {
    let Some(r) = realised() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("libdir")).unwrap();
    std::fs::write(d.join("dev.cu"), "__device__ int twice(int x) { return 2 * x; }\n").unwrap();
    std::fs::write(
        d.join("main.cu"),
        "#include <cstdio>\nextern __device__ int twice(int);\n__global__ void k(int *v) { *v = twice(*v); }\n\
         int main() { std::printf(\"linked\\n\"); return 0; }\n",
    )
    .unwrap();
    let nvcc = r.native.join("bin/nvcc");
    ok(Command::new(&nvcc)
        .args(["-rdc=true", "-lib", "dev.cu", "-o", "libdir/libdev.a"])
        .current_dir(d)
        .env_clear()
        .env("PATH", "/usr/bin:/bin"));
    // As in a Nix build: the library's directory is in NIX_LDFLAGS, which only cc-wrapper's host link reads.
    let link = |with_hook: bool| {
        let hook = if with_hook {
            format!(
                "source {}\nfor h in \"${{preConfigureHooks[@]}}\"; do $h; done\n",
                r.native.join("nix-support/setup-hook").display()
            )
        } else {
            String::new()
        };
        let script = format!(
            "{HOOK_HELPERS}NIX_LDFLAGS=-L{libdir}\n{hook}{nvcc} -rdc=true main.cu -ldev -o main && ./main\n",
            libdir = d.join("libdir").display(),
            nvcc = nvcc.display()
        );
        run(Command::new("bash").arg("-c").arg(script).current_dir(d).env_clear().env("PATH", "/usr/bin:/bin"))
    };
    // Without the hook nvlink does not find it, and says nothing of -ldev: only the missing symbol.
    let without = link(false);
    assert!(!without.status.success(), "{}", stdout(&without));
    assert!(stderr(&without).contains("nvlink error   : Undefined reference to '_Z5twicei'"), "{}", stderr(&without));
    let with = link(true);
    assert!(with.status.success(), "{}{}", stdout(&with), stderr(&with));
    assert_eq!(stdout(&with), "linked\n");
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn cmake_builds_the_example_through_the_setup_hook_with_the_wrapped_nvcc() {
    let Some(r) = realised() else { return };
    let Some(cmake) = real_program("cmake") else { return };
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::copy(Path::new(REPO).join("nix/examples/hello-cmake/CMakeLists.txt"), src.join("CMakeLists.txt")).unwrap();
    std::fs::write(src.join("hello.cu"), SMOKE_CU).unwrap();
    // The stdenv compiler (GCC 12) as CMake's C++ compiler; nvcc 11.8 rejects it as a host compiler, so the build
    // works only if the wrapper chooses GCC 11 at every nvcc call, CMake's compiler detection included.
    let cxx = recorded(&r.native)["host-compiler"]["stdenv"]["path"].as_str().unwrap().to_string();
    let script = format!(
        "{HOOK_HELPERS}\nsource {hook}\nfor h in \"${{preConfigureHooks[@]}}\"; do $h; done\n\
         {cmake} -S {src} -B {build} $cmakeFlags -DCMAKE_CXX_COMPILER={cxx} >&2\n\
         grep -E '^CMAKE_CUDA_(COMPILER|ARCHITECTURES|HOST_COMPILER)[:=]' {build}/CMakeCache.txt\n\
         {cmake} --build {build} >&2\n",
        hook = r.native.join("nix-support/setup-hook").display(),
        cmake = cmake.display(),
        src = src.display(),
        build = dir.path().join("build").display(),
    );
    let cache = ok(Command::new("bash").arg("-c").arg(script).env_clear().env("PATH", "/usr/bin:/bin"));
    assert!(cache.contains(&format!("CMAKE_CUDA_COMPILER:FILEPATH={}/bin/nvcc", r.native.display())), "{cache}");
    assert!(cache.contains("CMAKE_CUDA_ARCHITECTURES:STRING=86-real;86-virtual"), "{cache}");
    assert!(!cache.contains("CMAKE_CUDA_HOST_COMPILER:FILEPATH=/"), "{cache}");
    run_smoke(&dir.path().join("build/hello"));
}

/// Issue 31: a derivation that sets `nvccWrapperJobserver` runs its Ninja build phase under the wrapper's jobserver
/// of `$NIX_BUILD_CORES` slots (Ninja without -j, a client of it); one that does not keeps Nixpkgs' own phase.
#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn setup_hook_runs_an_opted_in_ninja_build_under_the_wrappers_jobserver() {
    let Some(r) = realised() else { return };
    let dir = tempfile::tempdir().unwrap();
    // A stand-in `ninja` that says what it was given.
    let ninja = dir.path().join("ninja");
    std::fs::write(&ninja, "#!/bin/sh\necho \"ninja $* | MAKEFLAGS=$MAKEFLAGS\"\n").unwrap();
    std::fs::set_permissions(&ninja, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let run = |opt_in: &str| {
        let script = format!(
            "{HOOK_HELPERS}runHook() {{ :; }}\necho() {{ builtin echo \"$@\"; }}\necho_cmd() {{ :; }}\n\
             echoCmd() {{ :; }}\nbuildPhase=ninjaBuildPhase\nenableParallelBuilding=1\nNIX_BUILD_CORES=6\n\
             ninjaFlags='-v'\n{opt_in}\nsource {hook}\nfor h in \"${{preConfigureHooks[@]}}\"; do $h; done\n\
             builtin echo \"buildPhase=$buildPhase\"\n\
             [[ $buildPhase == ninjaBuildPhase ]] || \"$buildPhase\"\n",
            hook = r.native.join("nix-support/setup-hook").display()
        );
        ok(Command::new("bash")
            .arg("-c")
            .arg(script)
            .env_clear()
            .env("PATH", format!("{}:/usr/bin:/bin", dir.path().display()))
            .env("TMPDIR", dir.path()))
    };
    let seen = run("");
    assert_eq!(seen, "buildPhase=ninjaBuildPhase\n");
    let seen = run("nvccWrapperJobserver=1");
    let lines: Vec<&str> = seen.lines().collect();
    assert_eq!(lines[0], "buildPhase=nvccWrapperNinjaBuildPhase", "{seen}");
    assert!(lines[1].starts_with("ninja -v | MAKEFLAGS=-j6 --jobserver-auth=fifo:"), "{seen}");
}
