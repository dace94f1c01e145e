//! Dependency files with real build systems: the build sees what the wrapper decides from (issue 24). A CMake +
//! Ninja, a Meson + Ninja and a Makefile project (`-MD`), each with two CUDA sources and one C++ source, built through
//! the wrapper in front of real nvcc 13.5 with the architectures left to it: each must rebuild exactly its CUDA
//! objects after the config's capabilities change, after the config's stdenv compiler changes and after the real
//! nvcc's release file changes (an upgrade in place), and rebuild nothing when nothing changed. Before the wrapper
//! added its inputs to nvcc's dependency files, every one of these builds said "no work to do" after the change and
//! kept the old GPU code. Needs real NVCC 13.5, cuobjdump, CMake, Ninja, make and Meson.
//!
//! Meson is the newest from PyPI: Debian's 1.0.1 asks nvcc for no dependency file at all (its CUDA rule has no `-MD`),
//! so it tracks neither headers nor the wrapper's inputs; 1.12.1 passes `-MD -MT -MF`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use assert_cmd::Command;

use crate::support::*;

const KERNEL: &str = "__global__ void k(int *p) { p[threadIdx.x] *= 2; }\nvoid launch(int *p) { k<<<1, 1>>>(p); }\n";
const MAIN: &str = "#include <cstdio>\n#include <cuda_runtime.h>\nvoid launch(int *p);\nint extra();\nint main() {\n  int *p = nullptr;\n  cudaError_t e = cudaMalloc(&p, 4);\n  if (e == cudaSuccess) launch(p);\n  std::printf(\"hello: %d %d\\n\", (int)e, extra());\n  return 0;\n}\n";
const EXTRA: &str = "int extra() { return 7; }\n";

const CMAKE: &str = "cmake_minimum_required(VERSION 3.24)\nproject(p LANGUAGES CXX CUDA)\nadd_executable(hello hello.cu k.cu extra.cpp)\n";
const MESON: &str = "project('p', 'cpp', 'cuda')\nexecutable('hello', 'hello.cu', 'k.cu', 'extra.cpp')\n";
const MAKEFILE: &str = "all: hello\n%.o: %.cu\n\t$(NVCC) -MD -MF $*.d -c $< -o $@\nextra.o: extra.cpp\n\tg++ -c $< -o $@\nhello: hello.o k.o extra.o\n\t$(NVCC) $^ -o $@\n-include hello.d k.d\n";

/// A build system driving the project.
#[derive(Debug, Clone, Copy)]
enum System {
    CmakeNinja,
    MesonNinja,
    Make,
}

struct Project {
    sb: RealSandbox,
    system: System,
    /// A view of the real toolkit whose `version.json` is a copy, so that an upgrade in place can be played.
    toolkit: PathBuf,
    cuobjdump: PathBuf,
    meson: Option<PathBuf>,
}

impl Project {
    fn new(system: System) -> Option<Project> {
        let real = real_toolkit("13.5")?;
        let cuobjdump = real_tool("cuobjdump")?;
        let needs: &[&str] = match system {
            System::CmakeNinja => &["cmake", "ninja"],
            System::MesonNinja => &["ninja"],
            System::Make => &["make"],
        };
        for program in needs {
            real_program(program)?;
        }
        let meson = match system {
            System::MesonNinja => Some(pypi_tool("meson")?),
            _ => None,
        };
        let sb = RealSandbox::new(&real);
        let toolkit = sb.file("toolkit");
        toolkit_view(&real, &toolkit);
        for (name, text) in [("hello.cu", MAIN), ("k.cu", KERNEL), ("extra.cpp", EXTRA)] {
            sb.write(&format!("src/{name}"), text);
        }
        match system {
            System::CmakeNinja => sb.write("src/CMakeLists.txt", CMAKE),
            System::MesonNinja => sb.write("src/meson.build", MESON),
            System::Make => sb.write("src/Makefile", MAKEFILE),
        };
        let project = Project { sb, system, toolkit, cuobjdump, meson };
        project.configure("8.6", "/usr/bin/g++-12");
        Some(project)
    }

    /// The config: capabilities and the stdenv compiler; the real nvcc is the view's, its release probed.
    fn configure(&self, capability: &str, stdenv: &str) {
        let text = format!(
            "nvcc = \"{}\"\n[host-compiler]\nstdenv = \"{stdenv}\"\n[gpu]\ncapabilities = [\"{capability}\"]\narch-flags = \"replace\"\n",
            self.toolkit.join("bin/nvcc").display()
        );
        self.sb.write("config.toml", &text);
        fresh_mtime(&self.sb.file("config.toml"));
    }

    fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(program);
        self.sb.prepare(&mut cmd);
        cmd.env("NVCC_WRAPPER_CONFIG", self.sb.file("config.toml"));
        cmd
    }

    fn run(&self, mut cmd: Command) -> String {
        let out = cmd.output().unwrap();
        let text = stdout(&out) + &stderr(&out);
        assert!(out.status.success(), "{:?} {cmd:?} failed:\n{text}", self.system);
        text
    }

    fn nvcc(&self) -> String {
        self.sb.wrapper_bin.join("nvcc").display().to_string()
    }

    /// Set the project up (CMake and Meson) and build it the first time.
    fn first_build(&self) {
        let (src, build) = (self.sb.file("src"), self.sb.file("build"));
        match self.system {
            System::CmakeNinja => {
                let mut cmd = self.command("cmake");
                cmd.arg("-S").arg(&src).arg("-B").arg(&build).args(["-G", "Ninja"]);
                cmd.arg(format!("-DCMAKE_CUDA_COMPILER={}", self.nvcc())).arg("-DCMAKE_CUDA_ARCHITECTURES=OFF");
                self.run(cmd);
            }
            System::MesonNinja => {
                // A native file naming the wrapper, which also keeps Meson from putting ccache in front of it.
                let native = self.sb.write("native.ini", &format!("[binaries]\ncuda = '{}'\n", self.nvcc()));
                let mut cmd = self.command(self.meson.as_ref().unwrap());
                cmd.arg("setup").arg(&build).arg(&src).arg("--native-file").arg(native);
                self.run(cmd);
            }
            System::Make => {
                std::fs::create_dir_all(&build).unwrap();
                for name in ["hello.cu", "k.cu", "extra.cpp", "Makefile"] {
                    std::fs::copy(src.join(name), build.join(name)).unwrap();
                }
            }
        }
        self.build();
    }

    /// An incremental build.
    fn build(&self) -> String {
        let build = self.sb.file("build");
        let cmd = match self.system {
            System::CmakeNinja | System::MesonNinja => {
                let mut cmd = self.command("ninja");
                cmd.arg("-C").arg(&build);
                cmd
            }
            System::Make => {
                let mut cmd = self.command("make");
                cmd.arg("-C").arg(&build).arg(format!("NVCC={}", self.nvcc()));
                cmd
            }
        };
        self.run(cmd)
    }

    /// The objects of the build, by source, with their modification times.
    fn objects(&self) -> BTreeMap<&'static str, SystemTime> {
        let build = self.sb.file("build");
        let mut found = BTreeMap::new();
        for entry in walk(&build) {
            let name = entry.file_name().unwrap().to_string_lossy().into_owned();
            if !name.ends_with(".o") {
                continue;
            }
            for source in ["hello.cu", "k.cu", "extra.cpp"] {
                let stem = source.split('.').next().unwrap();
                if name.starts_with(source) || name == format!("{stem}.o") {
                    found.insert(source, std::fs::metadata(&entry).unwrap().modified().unwrap());
                }
            }
        }
        assert_eq!(found.len(), 3, "{:?}: objects in {}: {found:?}", self.system, build.display());
        found
    }

    /// Which sources' objects a build remade.
    fn rebuilt(&self, change: &dyn Fn()) -> Vec<&'static str> {
        let before = self.objects();
        change();
        let log = self.build();
        let after = self.objects();
        let remade: Vec<&str> = before.keys().copied().filter(|s| before[s] != after[s]).collect();
        eprintln!("{:?}: remade {remade:?}\n{log}", self.system);
        remade
    }

    /// The GPU code in the program.
    fn program_code(&self) -> std::collections::BTreeSet<String> {
        let program = walk(&self.sb.file("build")).into_iter().find(|p| p.file_name().unwrap() == "hello").unwrap();
        embedded(&self.cuobjdump, &program)
    }
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() && !path.is_symlink() {
                stack.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files
}

/// A toolkit as an installation holds it, through symlinks to the real one, but with `version.json` its own file.
fn toolkit_view(real: &Path, view: &Path) {
    std::fs::create_dir_all(view.join("bin")).unwrap();
    for entry in std::fs::read_dir(real.join("bin")).unwrap() {
        let entry = entry.unwrap();
        std::os::unix::fs::symlink(entry.path(), view.join("bin").join(entry.file_name())).unwrap();
    }
    for dir in ["nvvm", "targets", "include", "lib64", "lib"] {
        if real.join(dir).exists() {
            std::os::unix::fs::symlink(real.join(dir), view.join(dir)).unwrap();
        }
    }
    std::fs::copy(real.join("version.json"), view.join("version.json")).unwrap();
}

/// Give `file` a modification time newer than any output so far, as an edit a little later would (file systems
/// count time in ticks, and a build is quick: wait a few ticks first).
fn fresh_mtime(file: &Path) {
    std::thread::sleep(std::time::Duration::from_millis(50));
    std::fs::File::options().write(true).open(file).unwrap().set_modified(SystemTime::now()).unwrap();
}

fn scenario(system: System) {
    let Some(p) = Project::new(system) else { return };
    p.first_build();
    let cuda = ["hello.cu", "k.cu"];
    assert_eq!(p.program_code(), set(&["sm_86"]), "{system:?}");
    assert!(p.rebuilt(&|| {}).is_empty(), "{system:?}: a second build with nothing changed remade objects");
    // The capabilities.
    assert_eq!(
        p.rebuilt(&|| p.configure("8.9", "/usr/bin/g++-12")),
        cuda,
        "{system:?}: after the capabilities changed"
    );
    assert_eq!(p.program_code(), set(&["sm_89"]), "{system:?}");
    // The stdenv compiler.
    assert_eq!(
        p.rebuilt(&|| p.configure("8.9", "/usr/bin/g++-11")),
        cuda,
        "{system:?}: after the stdenv compiler changed"
    );
    // The real nvcc's release file, as an upgrade in place rewrites it.
    let json = p.toolkit.join("version.json");
    assert_eq!(p.rebuilt(&|| fresh_mtime(&json)), cuda, "{system:?}: after the nvcc release file changed");
    assert!(p.rebuilt(&|| {}).is_empty(), "{system:?}: nothing changed, yet objects were remade");
}

fn set(items: &[&str]) -> std::collections::BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn cmake_and_ninja_rebuild_the_cuda_objects_when_the_wrappers_inputs_change() {
    scenario(System::CmakeNinja);
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn meson_and_ninja_rebuild_the_cuda_objects_when_the_wrappers_inputs_change() {
    scenario(System::MesonNinja);
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn a_makefile_with_md_rebuilds_the_cuda_objects_when_the_wrappers_inputs_change() {
    scenario(System::Make);
}

/// One byte class's case for `make_and_ninja_read_back_every_path_the_wrapper_writes`: the config in a directory
/// named with `byte`, a build of one object by `reader` (`make` or `ninja`) in front of the fake nvcc, which writes
/// a dependency file as nvcc does. What the reader did: the second build's and, after the config changed, the third
/// build's output (both must succeed).
fn read_back(sb: &Sandbox, reader: &str, byte: u8) -> (String, String, String) {
    use std::os::unix::ffi::OsStrExt;
    let dir = sb.dir.path().join(reader).join(format!("{byte:02x}"));
    let config_dir = dir.join(std::ffi::OsStr::from_bytes(&[b'c', byte, b'x']));
    std::fs::create_dir_all(&config_dir).unwrap();
    let config = config_dir.join("config.toml");
    std::fs::copy(&sb.config, &config).unwrap();
    std::fs::write(dir.join("k.cu"), "").unwrap();
    std::fs::write(dir.join("Makefile"), "k.o: k.cu\n\tnvcc -MD -MF k.d -c k.cu -o k.o && touch k.o\n-include k.d\n")
        .unwrap();
    let ninja = "rule nvcc\n  command = nvcc -MD -MF $out.d -c $in -o $out && touch $out\n  depfile = $out.d\n  deps = gcc\nbuild k.o: nvcc k.cu\n";
    std::fs::write(dir.join("build.ninja"), ninja).unwrap();
    let build = || {
        let out = std::process::Command::new(reader)
            .env_clear()
            .env("PATH", sb.path())
            .env("NVCC_WRAPPER_CONFIG", &config)
            .env("FAKE_NVCC_DEPFILE", "k.o : k.cu \\\n    /usr/include/stdc-predef.h\n")
            .current_dir(&dir)
            .output()
            .unwrap();
        let text = stdout(&out) + &stderr(&out);
        assert!(out.status.success(), "{reader}, byte 0x{byte:02x}: {text}");
        text
    };
    let said = sb
        .wrapper_cli()
        .env("NVCC_WRAPPER_CONFIG", &config)
        .current_dir(&dir)
        .args(["explain", "--", "-MD", "-MF", "k.d", "-c", "k.cu"])
        .output()
        .unwrap();
    build();
    let again = build();
    std::fs::File::options()
        .write(true)
        .open(&config)
        .unwrap()
        .set_modified(SystemTime::now() + std::time::Duration::from_secs(5))
        .unwrap();
    (again, build(), stdout(&said))
}

/// Issue 30, item 4: the wrapper's inputs are written so that GNU Make and Ninja, really reading the file back, find
/// exactly the path: for every printable byte a path can hold and samples of the others, the config in a directory named with it; a second build has
/// nothing to do, and a change of the config rebuilds the object. A path one of them cannot read back (Ninja ends a
/// path at a quote, `&`, `;` ...) is left out: the build still has nothing to do the second time (before, Ninja
/// rebuilt every object of such a build every time), and the wrapper says why. Before, `:` stopped Make ("multiple
/// target patterns") and a doubled `\` made it look for a file that does not exist. Needs make and ninja; the nvcc is
/// the fake (what nvcc writes is not in question here, and tests/real/depfile.rs's builds use the real one).
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn make_and_ninja_read_back_every_path_the_wrapper_writes() {
    if real_program("make").is_none() || real_program("ninja").is_none() {
        return;
    }
    let sb = Sandbox::new();
    let mut written = Vec::new();
    let mut left_out = Vec::new();
    // Every printable ASCII byte, and samples of the others: control bytes, DEL, UTF-8 and invalid UTF-8.
    let bytes = (0x20u8..=0x7e).filter(|&b| b != b'/').chain([0x01, 0x09, 0x0a, 0x0d, 0x1f, 0x7f, 0x80, 0xc3, 0xff]);
    for byte in bytes {
        let mut writable = None;
        for reader in ["make", "ninja"] {
            let (again, after_change, said) = read_back(&sb, reader, byte);
            // Left out exactly when `explain` says so.
            let said_left_out = said.contains("is not added to the dependency file: its path holds");
            let writable = *writable.get_or_insert(!said_left_out);
            assert_eq!(writable, !said_left_out, "byte 0x{byte:02x}");
            let nothing = if reader == "make" { "is up to date" } else { "no work to do" };
            assert!(again.contains(nothing), "{reader}, byte 0x{byte:02x}: the second build did something:\n{again}");
            let rebuilt = after_change.contains("nvcc -MD");
            assert_eq!(rebuilt, writable, "{reader}, byte 0x{byte:02x}: after the config changed:\n{after_change}");
        }
        if writable == Some(true) {
            written.push(byte)
        } else {
            left_out.push(byte)
        }
    }
    eprintln!(
        "written: {} bytes; left out: {:?}",
        written.len(),
        left_out.iter().map(|b| format!("0x{b:02x}")).collect::<Vec<_>>()
    );
    // Not vacuous: the common path bytes are written, and the known unreadable ones left out.
    for byte in [b' ', b'#', b'$', b':', b'\\', b'%', b'=', b'@', b'+', b'~', b',', b'!', 0xff] {
        assert!(written.contains(&byte), "0x{byte:02x} was left out");
    }
    for byte in [b'\'', b'"', b'&', b';', b'|', b'*', b'?', b'[', b'\t', b'\n'] {
        assert!(left_out.contains(&byte), "0x{byte:02x} was written");
    }
}

/// Issue 30, item 5, with real nvcc 13.5 and make: a Makefile that includes `-MD -MP` dependency files keeps
/// working when the config the wrapper found beside itself is removed (nvcc's own phony rules cover its headers; the wrapper's
/// inputs get theirs). Before, make stopped with "No rule to make target '.../config.toml'".
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn with_mp_a_removed_config_does_not_stop_make() {
    let Some(root) = real_toolkit("13.5") else { return };
    if real_program("make").is_none() {
        return;
    }
    let sb = RealSandbox::new(&root);
    sb.write("k.cu", KERNEL);
    sb.write("Makefile", "k.o: k.cu\n\t$(NVCC) -MD -MP -MF k.d -c $< -o $@\n-include k.d\n");
    // Where the wrapper finds its config by itself (beside the link), so that removing it leaves no config.
    let config = sb.write("wrapper/share/nvcc-wrapper/config.toml", "[host-compiler]\nstdenv = \"/usr/bin/g++\"\n");
    let make = || {
        let mut cmd = Command::new("make");
        sb.prepare(&mut cmd);
        cmd.arg(format!("NVCC={}", sb.wrapper_bin.join("nvcc").display()));
        let out = cmd.output().unwrap();
        (out.status.success(), stdout(&out) + &stderr(&out))
    };
    let (built, log) = make();
    assert!(built, "{log}");
    let text = std::fs::read_to_string(sb.file("k.d")).unwrap();
    assert!(text.contains("/share/nvcc-wrapper/config.toml:\n"), "no phony rule for the config:\n{text}");
    std::fs::remove_file(&config).unwrap();
    let (built, log) = make();
    assert!(built, "make stopped after the config was removed:\n{log}");
}

/// Issue 30, item 2, with real nvcc 13.5 and a really full file system (a 64 KiB tmpfs, as root, in a mount
/// namespace of its own): nvcc writes its dependency file into the last free pages, the wrapper cannot write the
/// completed one beside it, and nvcc's file stays whole, the call succeeds as nvcc did, and make reads the file.
/// Before, the file was rewritten in place and cut mid-path ("No rule to make target '/root/.cache/...13.'").
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn on_a_full_disk_the_dependency_file_stays_nvccs_whole() {
    let Some(root) = real_toolkit("13.5") else { return };
    if real_program("unshare").is_none() || real_program("make").is_none() {
        return;
    }
    if !as_root("mounting a small file system") {
        return;
    }
    let sb = RealSandbox::new(&root);
    sb.write("k.cu", KERNEL);
    // nvcc's own file, to learn its size; then the file system is filled to leave just that many pages.
    sb.real_nvcc().args(["-MD", "-MF", "probe.d", "-c", "k.cu", "-o", "k.o"]).assert().success();
    let size = std::fs::metadata(sb.file("probe.d")).unwrap().len();
    let pages = size.div_ceil(4096);
    std::fs::create_dir(sb.file("small")).unwrap();
    let script = format!(
        "mount -t tmpfs -o size=64k tmpfs small && head -c $((65536 - {pages} * 4096)) /dev/zero > small/fill && \
         nvcc -MD -MF small/k.d -c k.cu -o k.o; echo \"rc=$?\"; cat small/k.d > whole.d; ls -a small"
    );
    let mut cmd = Command::new("unshare");
    sb.prepare(&mut cmd);
    let out = cmd
        .env_remove("NVCC_WRAPPER_CONFIG")
        .args(["--mount", "--propagation", "private", "sh", "-c", &script])
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(text.contains("rc=0"), "{text}{}", stderr(&out));
    let whole = std::fs::read_to_string(sb.file("whole.d")).unwrap();
    let nvccs = std::fs::read_to_string(sb.file("probe.d")).unwrap();
    assert_eq!(whole, nvccs, "the dependency file is not nvcc's whole");
    assert!(!text.contains(".tmp"), "a temporary file is left: {text}");
    assert!(
        stderr(&out).contains("cannot add the wrapper's inputs to the dependency file small/k.d"),
        "{}",
        stderr(&out)
    );
    // make reads it back.
    sb.write("Makefile", "k.o: k.cu\n\ttouch k.o\n-include whole.d\n");
    let mut make = Command::new("make");
    sb.prepare(&mut make);
    let out = make.output().unwrap();
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
}

/// Issue 30, item 1, with real nvcc 13.5: `-MF /dev/stdout` into a pipe ends as nvcc alone ends (it hung).
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn a_dependency_file_on_stdout_ends_as_with_nvcc_alone() {
    let Some(root) = real_toolkit("13.5") else { return };
    let sb = RealSandbox::new(&root);
    sb.write("k.cu", KERNEL);
    let script = "nvcc -MD -MF /dev/stdout -c k.cu -o k.o | cat";
    let mut cmd = Command::from_std(in_own_dev(&["timeout", "-s", "KILL", "60", "sh", "-c", script]));
    sb.prepare(&mut cmd);
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{:?} {}", out.status, stderr(&out));
    assert!(stdout(&out).starts_with("k.o : k.cu"), "{}", stdout(&out));
}

/// Issue 39, item 8: an object written to `/dev/stdout` into a pipe fails in the GNU assembler, which then unlinks
/// its output, `/dev/stdout` itself when run as root (nvcc 12.4 and 13.5 alike; docs/nvcc-facts.md). The wrapper ends
/// as nvcc alone does, status and unlinked name included. Each run has a `/dev` of its own, never the machine's.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn an_object_on_stdout_into_a_pipe_ends_as_with_nvcc_alone() {
    // Only root's assembler can unlink /dev/stdout, which the test does in a /dev of its own.
    if !as_root("a /dev of the test's own") {
        return;
    }
    for release in ["12.4", "13.5"] {
        let Some(root) = real_toolkit(release) else { continue };
        let sb = RealSandbox::new(&root);
        sb.write("k.cu", KERNEL);
        sb.write("wrapper.toml", "[host-compiler]\nstdenv = \"/usr/bin/g++-12\"\n");
        let ends = |nvcc: &str| {
            let script = format!(
                "{nvcc} -arch=sm_80 -c k.cu -o /dev/stdout | wc -c >/dev/null; echo status=${{PIPESTATUS[0]}}; test -e /dev/stdout && echo kept || echo unlinked"
            );
            let mut cmd = Command::from_std(in_own_dev(&["bash", "-c", &script]));
            sb.prepare(&mut cmd);
            let out = cmd.env("NVCC_WRAPPER_CONFIG", sb.file("wrapper.toml")).output().unwrap();
            assert!(out.status.success(), "{}", stderr(&out));
            stdout(&out)
        };
        let alone = ends(&format!("{} -ccbin g++-12", root.join("bin/nvcc").display()));
        assert_eq!(alone, "status=1\nunlinked\n", "nvcc {release} alone no longer does what docs/nvcc-facts.md says");
        assert_eq!(ends("nvcc"), alone, "nvcc {release} through the wrapper");
        assert!(Path::new("/dev/stdout").exists(), "the machine's /dev/stdout is gone");
    }
}
