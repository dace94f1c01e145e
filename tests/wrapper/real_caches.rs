//! Issue 15: compiler caches and the wrapper, with real ccache, CMake, Ninja and nvcc. A cache in front of the
//! wrapper hashes the user's arguments and the wrapper's binary, never the wrapper's configuration: a change of
//! `capabilities` must still give objects for the new GPUs.

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
struct CacheBuild {
    sb: RealSandbox,
    ccache: PathBuf,
    cmake: PathBuf,
    cuobjdump: PathBuf,
}

impl CacheBuild {
    /// `None` (after a note) when a tool is missing and not required.
    fn new(release: &str) -> Option<CacheBuild> {
        let root = real_toolkit(release)?;
        let ccache = real_program("ccache")?;
        let cmake = real_program("cmake")?;
        real_program("ninja")?;
        let cuobjdump = real_tool("cuobjdump")?;
        let sb = RealSandbox::new(&root);
        sb.write("src/CMakeLists.txt", CMAKE_LISTS);
        sb.write("src/k.cu", KERNEL);
        Some(CacheBuild { sb, ccache, cmake, cuobjdump })
    }

    /// The wrapper's config file for the next builds.
    fn config(&self, text: &str) {
        self.sb.write("config.toml", text);
    }

    /// `program` with the sandbox's environment, the config file and the private ccache directory.
    fn command(&self, program: &Path) -> Command {
        let mut cmd = Command::new(program);
        self.sb.prepare(&mut cmd);
        cmd.env("NVCC_WRAPPER_CONFIG", self.sb.file("config.toml"))
            .env("CCACHE_DIR", self.sb.file("ccache"))
            .env_remove("CCACHE_DISABLE")
            .env_remove("CCACHE_RECACHE");
        cmd
    }

    /// Configure a fresh build directory and build it: a clean build, as CI does. `cmake_launcher`: CMake's own
    /// launcher in front of the wrapper (`CMAKE_CUDA_COMPILER_LAUNCHER`). The project leaves the GPU targets to the
    /// wrapper (`CMAKE_CUDA_ARCHITECTURES=OFF`: CMake passes none). Returns the build's output.
    fn clean_build(&self, cmake_launcher: Option<&Path>) -> Output {
        let build = self.sb.file("build");
        let _ = std::fs::remove_dir_all(&build);
        self.command(&self.ccache).arg("-z").assert().success();
        let mut configure = self.command(&self.cmake);
        configure.arg("-S").arg(self.sb.file("src")).arg("-B").arg(&build).args(["-G", "Ninja"]);
        configure.arg(format!("-DCMAKE_CUDA_COMPILER={}", self.sb.wrapper_bin.join("nvcc").display()));
        configure.arg("-DCMAKE_CUDA_ARCHITECTURES=OFF");
        if let Some(launcher) = cmake_launcher {
            configure.arg(format!("-DCMAKE_CUDA_COMPILER_LAUNCHER={}", launcher.display()));
        }
        let out = configure.output().unwrap();
        assert!(out.status.success(), "configure failed:\n{}{}", stdout(&out), stderr(&out));
        let out = self.command(&self.cmake).arg("--build").arg(&build).arg("-v").output().unwrap();
        assert!(out.status.success(), "build failed:\n{}{}", stdout(&out), stderr(&out));
        out
    }

    /// ccache's counters since the last `clean_build` started (`ccache --print-stats`, those that are not zero).
    fn stats(&self) -> BTreeMap<String, u64> {
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
    fn hits_and_misses(&self) -> (u64, u64) {
        let s = self.stats();
        let get = |name: &str| s.get(name).copied().unwrap_or(0);
        (get("direct_cache_hit") + get("preprocessed_cache_hit"), get("cache_miss"))
    }

    /// What the library's object embeds.
    fn embedded(&self) -> BTreeSet<String> {
        embedded(&self.cuobjdump, &self.sb.file("build/libk.a"))
    }
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// Issue 15, the stale object: two clean builds through ccache and the wrapper, `capabilities` changed between
/// them. The second build must hold code for the new capability, never a cached object for the old one.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn issue_15_a_cache_never_returns_objects_for_the_old_capabilities() {
    let Some(b) = CacheBuild::new("13.5") else { return };
    b.config("[gpu]\ncapabilities = [\"8.6\"]\n");
    b.clean_build(Some(&b.ccache));
    assert_eq!(b.hits_and_misses(), (0, 1), "{:?}", b.stats());
    assert_eq!(b.embedded(), set(&["sm_86"]));

    b.config("[gpu]\ncapabilities = [\"8.9\"]\n");
    let out = b.clean_build(Some(&b.ccache));
    assert_eq!(
        b.embedded(),
        set(&["sm_89"]),
        "capabilities 8.9, yet the object holds other code; ccache: {:?}\n{}",
        b.stats(),
        stdout(&out)
    );
    assert_eq!(b.hits_and_misses(), (0, 1), "{:?}", b.stats());
}
