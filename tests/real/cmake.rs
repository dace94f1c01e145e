//! CMake in front of the wrapper: Debian's 3.25 and the newest from PyPI, with the wrapper installed as `nvcc` in
//! front of real nvcc 13.5 and no host compiler given: CMake must see the real nvcc (identification, implicit
//! directories, FindCUDAToolkit), the project (tests/real/cmake-project) must build, link and run, and the GPU code
//! must be what was asked for (issue 15). And sccache behind the wrapper in a CMake build on nvcc 13.0. Needs real
//! NVCC 13.0 and 13.5, cuobjdump, CMake, Ninja, ccache and sccache.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use assert_cmd::Command;

use crate::launcher::{CacheBuild, Sccache};
use crate::support::*;

const PROJECT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/real/cmake-project");

/// The CMake builds of the tests: Debian's and the newest from PyPI.
fn cmakes() -> Vec<PathBuf> {
    [real_program("cmake"), pypi_tool("cmake")].into_iter().flatten().collect()
}

struct Project {
    sb: RealSandbox,
    cuobjdump: PathBuf,
}

impl Project {
    fn new() -> Option<Project> {
        let root = real_toolkit("13.5")?;
        let cuobjdump = real_tool("cuobjdump")?;
        real_program("ninja")?;
        let sb = RealSandbox::new(&root);
        for file in ["CMakeLists.txt", "kern.cu", "dev.cu", "main.cpp"] {
            sb.write(&format!("src/{file}"), &std::fs::read_to_string(Path::new(PROJECT).join(file)).unwrap());
        }
        sb.write("config.toml", "");
        Some(Project { sb, cuobjdump })
    }

    fn command(&self, program: &Path) -> Command {
        let mut cmd = Command::new(program);
        self.sb.prepare(&mut cmd);
        cmd.env("NVCC_WRAPPER_CONFIG", self.sb.file("config.toml"));
        cmd
    }

    /// Configure a fresh `build` (the same path each time, so that commands can be compared), with the wrapper as
    /// the CUDA compiler and `defines`; returns configure's output.
    fn configure(&self, cmake: &Path, defines: &[&str]) -> String {
        let build = self.sb.file("build");
        let _ = std::fs::remove_dir_all(&build);
        let out = self
            .command(cmake)
            .arg("-S")
            .arg(self.sb.file("src"))
            .arg("-B")
            .arg(&build)
            .args(["-G", "Ninja", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"])
            .arg(format!("-DCMAKE_CUDA_COMPILER={}", self.sb.wrapper_bin.join("nvcc").display()))
            .args(defines)
            .output()
            .unwrap();
        let text = stdout(&out) + &stderr(&out);
        assert!(out.status.success(), "{} configure {defines:?} failed:\n{text}", cmake.display());
        text
    }

    /// Build `targets` (all when empty).
    fn build(&self, cmake: &Path, targets: &[&str]) {
        let mut cmd = self.command(cmake);
        cmd.arg("--build").arg(self.sb.file("build"));
        for t in targets {
            cmd.args(["--target", t]);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{} build failed:\n{}{}", cmake.display(), stdout(&out), stderr(&out));
    }

    /// What the static library's object embeds.
    fn kern(&self) -> BTreeSet<String> {
        embedded(&self.cuobjdump, &self.sb.file("build/CMakeFiles/kern.dir/kern.cu.o"))
    }
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// The value of `key=` on the project's `probe:` lines.
fn probed(text: &str, key: &str) -> String {
    let at = format!(" {key}=");
    let line = text.lines().find(|l| l.contains("probe:") && l.contains(&at)).unwrap_or_else(|| panic!("{text}"));
    let rest = &line[line.find(&at).unwrap() + at.len()..];
    rest.split(' ').next().unwrap().to_string()
}

/// Identification, implicit directories, FindCUDAToolkit, build, link, run, a list of architectures honoured
/// under `respect`, and the same compile commands from two configures.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn cmake_sees_the_real_nvcc_builds_links_runs_and_is_deterministic() {
    let Some(p) = Project::new() else { return };
    let root = p.sb.root.display().to_string();
    for cmake in cmakes() {
        let text = p.configure(&cmake, &["-DCMAKE_CUDA_ARCHITECTURES=86;89"]);
        let c = cmake.display();
        assert_eq!(probed(&text, "id"), "NVIDIA", "{c}");
        assert!(probed(&text, "version").starts_with("13.5."), "{c}: {text}");
        assert_eq!(probed(&text, "toolkit-bin"), format!("{root}/bin"), "{c}");
        assert_eq!(probed(&text, "library-root"), root, "{c}");
        for key in ["toolkit-include", "implicit-include"] {
            assert!(probed(&text, key).starts_with(&format!("{root}/")), "{c} {key}: {text}");
        }
        assert!(probed(&text, "implicit-link").starts_with(&format!("{root}/targets/x86_64-linux/lib")), "{c}");
        let wrapper_dir = p.sb.wrapper_bin.display().to_string();
        assert!(!text.contains(&format!("={wrapper_dir}")), "{c}: CMake took the wrapper's directory:\n{text}");

        p.build(&cmake, &[]);
        let out = std::process::Command::new(p.sb.file("build/app")).output().unwrap();
        assert!(stdout(&out).starts_with("app: built and started"), "{c}: {}{}", stdout(&out), stderr(&out));
        assert_eq!(p.kern(), set(&["sm_86", "ptx sm_86", "sm_89", "ptx sm_89"]), "{c}");
        let dev = embedded(&p.cuobjdump, &p.sb.file("build/libdev.so"));
        assert!(dev.contains("sm_86") && dev.contains("sm_89"), "{c}: {dev:?}");

        let commands = std::fs::read(p.sb.file("build/compile_commands.json")).unwrap();
        p.configure(&cmake, &["-DCMAKE_CUDA_ARCHITECTURES=86;89"]);
        let again = std::fs::read(p.sb.file("build/compile_commands.json")).unwrap();
        assert!(commands == again, "{c}: two configures gave different compile commands");
    }
}

/// `respect` (the default) keeps CMake's `all-major`; `replace` swaps CMake's list for the configured capabilities.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn cmake_architectures_are_respected_or_replaced_as_configured() {
    let Some(p) = Project::new() else { return };
    for cmake in cmakes() {
        let c = cmake.display();
        p.sb.write("config.toml", "[gpu]\ncapabilities = [\"9.0\"]\n");
        p.configure(&cmake, &["-DCMAKE_CUDA_ARCHITECTURES=all-major"]);
        p.build(&cmake, &["kern"]);
        let all = p.kern();
        assert!(all.contains("sm_80") && all.contains("sm_90") && all.len() > 3, "{c}: {all:?}");

        p.sb.write("config.toml", "[gpu]\ncapabilities = [\"9.0\"]\narch-flags = \"replace\"\n");
        p.configure(&cmake, &["-DCMAKE_CUDA_ARCHITECTURES=86;89"]);
        p.build(&cmake, &["kern"]);
        assert_eq!(p.kern(), set(&["sm_90"]), "{c}");
    }
}

/// A project that sets no `CMAKE_CUDA_ARCHITECTURES`, with capabilities `8.6;9.0a` in the wrapper. Left alone, CMake
/// records what its identification compile embedded (`86;90`) and passes it as its own flags, which `respect`
/// keeps: sm_90 instead of sm_90a, and PTX. Either way the README gives builds exactly the configured targets:
/// `-DCMAKE_CUDA_ARCHITECTURES=OFF` (CMake passes none; the wrapper adds its own), or the value of
/// `nvcc-wrapper gencode --format cmake`.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn a_project_without_cuda_architectures_builds_exactly_the_configured_capabilities() {
    let Some(p) = Project::new() else { return };
    p.sb.write("config.toml", "[gpu]\ncapabilities = [\"8.6\", \"9.0a\"]\n");
    // Issue 24: `gencode` reads the config's capabilities when given none, so CMake's recorded architectures follow
    // the wrapper's config: `-DCMAKE_CUDA_ARCHITECTURES=$(nvcc-wrapper gencode --format cmake)`.
    let out = p.command(Path::new(WRAPPER)).args(["gencode", "--format", "cmake"]).output().unwrap();
    let value = stdout(&out).trim().to_string();
    assert_eq!(value, "86-real;90a-real", "{}", stderr(&out));
    for cmake in cmakes() {
        let c = cmake.display();
        let text = p.configure(&cmake, &[]);
        assert_eq!(probed(&text, "archs"), "86;90", "{c}: what CMake records by itself");
        p.build(&cmake, &["kern"]);
        assert_eq!(p.kern(), set(&["sm_86", "ptx sm_86", "sm_90", "ptx sm_90"]), "{c}: not what was configured");

        for define in ["-DCMAKE_CUDA_ARCHITECTURES=OFF".to_string(), format!("-DCMAKE_CUDA_ARCHITECTURES={value}")] {
            let text = p.configure(&cmake, &[&define]);
            if !define.ends_with("OFF") {
                assert_eq!(probed(&text, "archs"), value, "{c}: CMake records the wrapper's targets");
            }
            p.build(&cmake, &["kern", "dev"]);
            assert_eq!(p.kern(), set(&["sm_86", "sm_90a"]), "{c} {define}");
            let dev = embedded(&p.cuobjdump, &p.sb.file("build/libdev.so"));
            assert!(dev.contains("sm_90a") && !dev.contains("sm_90"), "{c} {define}: {dev:?}");
        }
    }
}

/// sccache behind the wrapper in a CMake build (CMake with no launcher of its own), real nvcc 13.0: the second clean
/// build is served from the cache, and a change of `capabilities` is a miss with the new code.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn sccache_behind_the_wrapper_serves_a_cmake_build_on_13_0() {
    let Some(mut b) = CacheBuild::new("13.0") else { return };
    let Some(sccache) = Sccache::new(b.sb.dir.path()) else { return };
    b.env = sccache.vars();
    let launcher = format!("launcher = \"{}\"\n", sccache.program.display());
    for (capability, sm, hits) in [("8.6", "sm_86", false), ("8.6", "sm_86", true), ("8.9", "sm_89", false)] {
        b.config(&format!("{launcher}[gpu]\ncapabilities = [\"{capability}\"]\n"));
        let build = b.configure_clean(None);
        sccache.zero(&b.sb);
        b.command(&b.cmake).arg("--build").arg(&build).assert().success();
        let (hit, missed, requests) = sccache.stats(&b.sb);
        assert_eq!(requests, 1, "{capability}");
        if hits {
            assert!(hit >= 4 && missed == 0, "{capability}: {hit} hits, {missed} misses");
        } else {
            // A new capability: the device steps are compiled again (a step that does not depend on it, such as
            // the host side's, may come from the cache).
            assert!(missed >= 3, "{capability}: {hit} hits, {missed} misses");
        }
        assert_eq!(b.embedded(), set(&[sm]), "{capability}");
    }
}
