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
//! Missing Nix, toolkits or root (which Debian's nix-bin needs to build without a daemon) fail the test, or skip it
//! where that was asked (`cannot_run`).

// The test process reads its own environment (cache location, CI switches): that is not the wrapper reading state.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use crate::support::*;

const REPO: &str = env!("CARGO_MANIFEST_DIR");
/// makeNvccWrapper's directory, in the change set for Nixpkgs (nix/nixpkgs/, the paths it would have there).
const MAKE_NVCC_WRAPPER: &str = "nix/nixpkgs/pkgs/development/cuda-modules/packages/makeNvccWrapper";

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
        if !recent {
            let program = nix.get_program().to_string_lossy();
            let what = format!("{program} is {}: Nixpkgs needs Nix 2.18 or newer", version.trim());
            cannot_run(&format!("{what}; run scripts/install-nix.sh, which installs Debian 13's"));
            return None;
        }
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
/// is refused: `nixpkgs_lib`).
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
    cannot_run("nix-build needs root here (Debian's nix-bin has no daemon): run the tests as root");
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

/// Every `.nix` file of the repository (nix/ and tests/nix/, at any depth).
fn nix_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, files);
            } else if path.extension().is_some_and(|e| e == "nix") {
                files.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&Path::new(REPO).join("nix"), &mut files);
    walk(&tests_nix(), &mut files);
    files.sort();
    files
}

/// Every `.nix` file parses, and deadnix, the linter Nixpkgs' CI runs on the files a change touches, finds no unused
/// binding in any (issue 58: lint what can be linted here; Nixpkgs' formatter cannot be installed here, see
/// nix/nixpkgs/README.md).
#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn every_nix_file_parses_and_has_no_unused_binding() {
    if nix_program("nix-instantiate").is_none() {
        return;
    }
    let files = nix_files();
    let make_nvcc_wrapper = format!("{MAKE_NVCC_WRAPPER}/package.nix");
    for name in ["nix/package.nix", &make_nvcc_wrapper, "nix/overlay.nix", "nix/overlay-backend-stdenv.nix"] {
        assert!(files.contains(&Path::new(REPO).join(name)), "{name} is missing");
    }
    for file in &files {
        ok(nix("nix-instantiate").unwrap().arg("--parse").arg(file));
    }
    let deadnix = cache_dir().join("tools/deadnix/bin/deadnix");
    if !deadnix.is_file() {
        cannot_run(&format!("{} is not installed: run scripts/install-tools.sh", deadnix.display()));
        return;
    }
    let out = run(Command::new(&deadnix).args(["--fail", "--output-format", "json"]).args(&files));
    assert!(out.status.success(), "deadnix finds unused bindings:\n{}{}", stdout(&out), stderr(&out));
}

fn empty_executable(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, "").unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
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

mod answers;
mod eval;
mod nixpkgs;
mod overlay;
mod realise;
