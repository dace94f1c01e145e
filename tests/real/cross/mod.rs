//! Cross-compiling from x86_64 against real NVCC releases, Debian 12's real cross compilers (aarch64-linux-gnu-g++
//! and powerpc64le-linux-gnu-g++, GCC 12 and 11) and the real target files that `scripts/fetch-toolkits.sh cross`
//! puts into the cache. The wrapper is configured only by `[target]` (or its `NVCC_WRAPPER_TARGET_*` overrides):
//! it must pick the cross compiler, the target directory or a separate `cuda-root`, the sysroot flags, and refuse
//! before nvcc runs what cannot work. Each program is then checked as the target would see it: an ELF for the target
//! CPU, which runs under qemu-user up to the CUDA driver probe, and embeds exactly the configured cubin.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::support::*;

struct Cpu {
    /// What `file -b` says of an executable for it.
    file: &'static str,
    qemu: &'static str,
    /// Debian's cross sysroot (the dynamic loader and libraries), for qemu's `-L`.
    sysroot: &'static str,
    /// What `-dumpmachine` of a compiler for it starts with.
    machine: &'static str,
}

const AARCH64: Cpu =
    Cpu { file: "ARM aarch64", qemu: "qemu-aarch64", sysroot: "/usr/aarch64-linux-gnu", machine: "aarch64-" };
const PPC64LE: Cpu = Cpu {
    file: "64-bit PowerPC",
    qemu: "qemu-ppc64le",
    sysroot: "/usr/powerpc64le-linux-gnu",
    machine: "powerpc64le-",
};

/// One cross build: the cached target files, how `[target]` says it, and what must come out.
struct Case {
    /// The cross target in the cache (`scripts/fetch-toolkits.sh NAME`).
    name: &'static str,
    /// The `[target]` table's keys (and any sub-table), as TOML.
    target: &'static str,
    capability: &'static str,
    /// The only machine code the program may embed.
    sm: &'static str,
    /// The compiler the wrapper must choose: the file name of its `-ccbin=`.
    cxx: &'static str,
    cpu: &'static Cpu,
}

/// examples/hello.cu, and a kernel-only file for the refusals (which must stop before nvcc makes anything).
const HELLO: &str = "hello.cu";
const KERNEL_CU: &str = "__global__ void k(int *x) { x[threadIdx.x] += 1; }\n";

/// A sandbox for cross builds through the wrapper: the config file it reads, and variables every call gets.
struct Cross {
    sb: RealSandbox,
    /// The real nvcc the config names (a toolkit's, or a host-only view's).
    nvcc: PathBuf,
    config: PathBuf,
    env: Vec<(String, String)>,
    cuobjdump: PathBuf,
}

impl Cross {
    /// `root` is a toolkit root or a host-only view of one; for the rest see `with_config`.
    fn new(root: &Path, target: &str, capability: &str) -> Option<Cross> {
        let cuobjdump = real_tool("cuobjdump")?;
        real_program("file")?;
        let sb = RealSandbox::new(root);
        sb.write(HELLO, SMOKE_CU);
        sb.write("k.cu", KERNEL_CU);
        let nvcc = root.join("bin/nvcc");
        let cross = Cross { sb, nvcc, config: PathBuf::new(), env: Vec::new(), cuobjdump };
        Some(cross.with_config(target, capability))
    }

    /// A new config file: `target` is the `[target]` table, `capability` the `[gpu]` list's only entry ("": none).
    /// It also has a native `[host-compiler]` whose stdenv compiler records its libstdc++ (as a Nix config does):
    /// that section is the native build's, and none of it may reach a cross build (issue 10).
    fn with_config(mut self, target: &str, capability: &str) -> Cross {
        let caps = if capability.is_empty() { String::new() } else { format!("{capability:?}") };
        let text = format!(
            "nvcc = {}\n\n{NATIVE_STDENV}\n{target}\n\n[gpu]\ncapabilities = [{caps}]\n",
            toml_path(&self.nvcc)
        );
        self.config = self.sb.write("wrapper.toml", &text);
        self
    }

    fn with_env(mut self, name: &str, value: &str) -> Cross {
        self.env.push((name.to_string(), value.to_string()));
        self
    }

    /// `nvcc` (the wrapper) with the config and the sandbox's variables.
    fn nvcc(&self) -> assert_cmd::Command {
        let mut cmd = self.sb.nvcc();
        cmd.env("NVCC_WRAPPER_CONFIG", &self.config);
        for (name, value) in &self.env {
            cmd.env(name, value);
        }
        cmd
    }

    /// The command the wrapper would run (`NVCC_WRAPPER_DRY_RUN=1`), as words.
    fn plan(&self, args: &[&str]) -> Vec<String> {
        let out = self.nvcc().env("NVCC_WRAPPER_DRY_RUN", "1").args(args).output().unwrap();
        assert!(out.status.success(), "dry run of {args:?} failed: {}", stderr(&out));
        let text = stdout(&out);
        let words = shlex::split(text.trim_end()).unwrap_or_else(|| panic!("not a shell command line: {text}"));
        assert_eq!(Path::new(&words[0]), self.nvcc, "{text}");
        words
    }

    /// What nvcc itself would run for the wrapper's command (`--dryrun`, given through the wrapper).
    fn nvcc_dryrun(&self, args: &[&str]) -> String {
        let out = self.nvcc().arg("--dryrun").args(args).output().unwrap();
        assert!(out.status.success(), "nvcc --dryrun {args:?} failed: {}", stderr(&out));
        stderr(&out)
    }

    fn build(&self, args: &[&str]) {
        let out = self.nvcc().args(args).output().unwrap();
        assert!(out.status.success(), "nvcc {args:?} failed ({:?}): {}", out.status.code(), stderr(&out));
    }

    /// A call the wrapper must refuse with `code` before nvcc runs; its stderr.
    fn refused(&self, code: i32, extra: &[&str]) -> String {
        let object = self.sb.file("refused.o");
        let out = self.nvcc().args(extra).args(["-c", "k.cu", "-o", "refused.o"]).output().unwrap();
        let err = stderr(&out);
        let config = std::fs::read_to_string(&self.config).unwrap();
        assert_eq!(out.status.code(), Some(code), "{config}{:?} {extra:?}: {err}", self.env);
        assert!(err.contains("nvcc-wrapper: error:"), "not the wrapper's error: {err}");
        assert!(!object.exists(), "nvcc ran although the wrapper refused: {err}");
        err
    }
}

/// The native stdenv compiler, with everything recorded: its paths all name the build machine's triple.
const NATIVE_STDENV: &str =
    "[host-compiler]\nstdenv = { path = \"/usr/bin/g++-12\", family = \"gcc\", version = \"12.2.0\", \
     target = \"x86_64-linux-gnu\", gcc-install-dir = \"/usr/lib/gcc/x86_64-linux-gnu/12\", \
     libstdcxx-dir = \"/usr/lib/x86_64-linux-gnu\" }\n";

/// A TOML string for a path.
fn toml_path(path: &Path) -> String {
    let text = path.to_str().expect("a UTF-8 path");
    assert!(!text.contains(['"', '\\']), "{text}");
    format!("\"{text}\"")
}

/// The `-ccbin=` the wrapper added: there must be exactly one.
fn ccbin(words: &[String]) -> PathBuf {
    let all: Vec<&str> = words.iter().filter_map(|w| w.strip_prefix("-ccbin=")).collect();
    assert_eq!(all.len(), 1, "expected one -ccbin=: {words:?}");
    PathBuf::from(all[0])
}

/// Whether `flag` with `value` is among the words, in any of nvcc's spellings (`-IV`, `-I V`, `-I=V`).
fn has_flag(words: &[String], flag: &str, value: &Path) -> bool {
    let value = value.to_str().unwrap();
    words.iter().enumerate().any(|(i, w)| {
        w.strip_prefix(flag).is_some_and(|rest| rest == value || rest.strip_prefix('=') == Some(value))
            || (w == flag && words.get(i + 1).is_some_and(|next| next == value))
    })
}

/// The machine a compiler builds for (`-dumpmachine`).
fn dumpmachine(compiler: &Path) -> String {
    let out = std::process::Command::new(compiler).arg("-dumpmachine").output().unwrap();
    assert!(out.status.success(), "{} -dumpmachine: {}", compiler.display(), stderr(&out));
    stdout(&out).trim().to_string()
}

/// The host compiler nvcc runs in its `--dryrun` output gets `include` (nvcc quotes some words).
fn host_compiler_gets(dryrun: &str, compiler: &Path, include: &Path) -> bool {
    let name = compiler.file_name().unwrap().to_str().unwrap();
    let include = format!("-I{}", include.display());
    dryrun.lines().filter_map(|l| l.strip_prefix("#$ ")).map(|l| l.replace('"', "")).any(|l| {
        l.split_whitespace().next().is_some_and(|first| first.ends_with(name))
            && l.split_whitespace().any(|w| w == include)
    })
}

/// The target directory nvcc used (its last `_TARGET_DIR_=` line in `--dryrun`).
fn nvcc_target_dir(dryrun: &str) -> String {
    dryrun
        .lines()
        .filter_map(|l| l.strip_prefix("#$ _TARGET_DIR_="))
        .next_back()
        .unwrap_or_else(|| panic!("no _TARGET_DIR_ in nvcc's --dryrun:\n{dryrun}"))
        .to_string()
}

/// The cubins `cuobjdump --list-elf` names (`prog.1.sm_90a.cubin` is `sm_90a`), and the PTX `--list-ptx` names.
fn listed(cuobjdump: &Path, file: &Path) -> (BTreeSet<String>, Vec<String>) {
    let elf = std::process::Command::new(cuobjdump).arg("--list-elf").arg(file).output().unwrap();
    assert!(elf.status.success(), "cuobjdump --list-elf: {}", stderr(&elf));
    let cubins = stdout(&elf)
        .lines()
        .filter(|l| l.starts_with("ELF file"))
        .map(|l| {
            let sm = l.split('.').find(|part| part.starts_with("sm_"));
            sm.unwrap_or_else(|| panic!("cuobjdump --list-elf: {l}")).to_string()
        })
        .collect();
    let ptx = std::process::Command::new(cuobjdump).arg("--list-ptx").arg(file).output().unwrap();
    assert!(ptx.status.success(), "cuobjdump --list-ptx: {}", stderr(&ptx));
    let ptx = stdout(&ptx).lines().filter(|l| l.starts_with("PTX file")).map(String::from).collect();
    (cubins, ptx)
}

/// The program is an executable for `cpu`, runs under qemu-user up to the driver probe (there is no CUDA driver in
/// the cross sysroot: error 35 or 100), and embeds exactly `sm` and no PTX.
fn check_program(cx: &Cross, cpu: &Cpu, program: &Path, sm: &str) {
    let file = stdout(&std::process::Command::new("file").arg("-b").arg(program).output().unwrap());
    assert!(file.starts_with("ELF 64-bit") && file.contains(cpu.file), "{}: {file}", program.display());
    assert!(file.contains("executable"), "{}: {file}", program.display());

    let out = std::process::Command::new(cpu.qemu).arg("-L").arg(cpu.sysroot).arg(program).output().unwrap();
    let text = stdout(&out);
    assert!(out.status.success(), "{} under {}: {text}{}", program.display(), cpu.qemu, stderr(&out));
    assert!(text.starts_with("hello: built and started"), "{} under {}: {text}", program.display(), cpu.qemu);
    assert!(text.contains("cuda error 35:") || text.contains("cuda error 100:"), "{text}");

    let want: BTreeSet<String> = [sm.to_string()].into();
    assert_eq!(embedded(&cx.cuobjdump, program), want, "{}", program.display());
    let (cubins, ptx) = listed(&cx.cuobjdump, program);
    // Every cubin is `sm`; 12.4 names the (empty) device-link cubin of an `a` target after its baseline.
    let baseline = sm.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    assert!(cubins.contains(sm), "no {sm} cubin: {cubins:?}");
    assert!(cubins.iter().all(|c| c == sm || c == baseline), "cubins other than {sm}: {cubins:?}");
    assert!(ptx.is_empty(), "PTX although forward-compat is off: {ptx:?}");
}

/// The cross build every target gets: the wrapper picks the compiler and the target directory by itself, nvcc uses
/// them, and the program is right for the target. Returns the sandbox for further checks.
fn cross_build(case: &Case) -> Option<Cross> {
    let root = real_cross_target(case.name)?;
    real_program(case.cpu.qemu)?;
    real_program(case.cxx)?;
    let cx = Cross::new(&root, case.target, case.capability)?;
    let dir = cross_target_dir(case.name);

    let words = cx.plan(&[HELLO, "-o", "hello"]);
    let compiler = ccbin(&words);
    assert_eq!(compiler.file_name().unwrap(), case.cxx, "{}: {words:?}", case.name);
    assert!(dumpmachine(&compiler).starts_with(case.cpu.machine), "{}", compiler.display());
    let target_directory = format!("--target-directory={dir}");
    assert_eq!(words.iter().filter(|w| **w == target_directory).count(), 1, "{}: {words:?}", case.name);
    let gencode = format!("-gencode=arch=compute_{0},code=sm_{0}", case.capability.replace('.', ""));
    assert!(words.contains(&gencode), "{}: {words:?}", case.name);
    // Nothing of the native section reaches the cross link, here or where the target's GCC 12 objects are linked.
    for link in [words.clone(), cx.plan(&[HELLO, "new.o", "-o", "mixed"])] {
        let native: Vec<&String> = link.iter().filter(|w| w.contains("x86_64-linux-gnu")).collect();
        assert!(native.is_empty(), "{}: native paths in a cross link: {native:?}", case.name);
    }

    // nvcc itself takes the directory and gives the cross compiler its include directory.
    let dry = cx.nvcc_dryrun(&[HELLO, "-o", "hello"]);
    assert_eq!(nvcc_target_dir(&dry), format!("targets/{dir}"), "{}", case.name);
    let include = cx.nvcc.parent().unwrap().join("../targets").join(dir).join("include");
    assert!(host_compiler_gets(&dry, &compiler, &include), "{}: no -I{}:\n{dry}", case.name, include.display());

    cx.build(&[HELLO, "-o", "hello"]);
    check_program(&cx, case.cpu, &cx.sb.file("hello"), case.sm);
    Some(cx)
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn nvcc_13_0_builds_for_arm_servers() {
    // `platform` left out: sbsa is the default for aarch64.
    cross_build(&Case {
        name: "sbsa-13.0",
        target: "[target]\nsystem = \"aarch64-linux\"",
        capability: "9.0a",
        sm: "sm_90a",
        cxx: "aarch64-linux-gnu-g++",
        cpu: &AARCH64,
    });
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn nvcc_13_5_builds_for_arm_servers_with_the_configured_cross_compiler() {
    // A GNU triple for the system, and the target's stdenv compiler named in `[target.host-compiler]`.
    cross_build(&Case {
        name: "sbsa-13.5",
        target: "[target]\nsystem = \"aarch64-linux-gnu\"\nplatform = \"sbsa\"\n\n[target.host-compiler]\n\
                 stdenv = \"/usr/bin/aarch64-linux-gnu-g++-12\"",
        capability: "9.0a",
        sm: "sm_90a",
        cxx: "aarch64-linux-gnu-g++-12",
        cpu: &AARCH64,
    });
}

/// The releases between 13.0 and 13.5, each with its real sbsa target files, and whether compat-data/platforms.toml's
/// `[[jetson-served-by]]` row says their Arm-server target also serves Jetson Orin (8.7): from 13.2 on.
const ARM_SERVERS_13_1_TO_13_4: [(&str, bool); 4] =
    [("sbsa-13.1", false), ("sbsa-13.2", true), ("sbsa-13.3", true), ("sbsa-13.4", true)];

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn nvcc_13_1_to_13_4_build_for_arm_servers_and_for_orin_from_13_2() {
    let sbsa = "[target]\nsystem = \"aarch64-linux\"\nplatform = \"sbsa\"";
    let server = |name| Case {
        name,
        target: sbsa,
        capability: "9.0a",
        sm: "sm_90a",
        cxx: "aarch64-linux-gnu-g++",
        cpu: &AARCH64,
    };
    for (name, serves_orin) in ARM_SERVERS_13_1_TO_13_4 {
        // A release not fetched (outside scripts/test.sh) is skipped with a note; the others still run.
        let Some(cx) = cross_build(&server(name)) else { continue };
        if serves_orin {
            cross_build(&Case { capability: "8.7", sm: "sm_87", ..server(name) });
        } else {
            // Refused by the wrapper (exit 65, before nvcc makes anything), naming the part and the release.
            let err = cx.with_config(sbsa, "8.7").refused(65, &[]);
            let release = cross_target_release(name);
            assert!(err.contains("8.7 is Jetson Orin") && err.contains(release), "{name}: {err}");
        }
    }
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn nvcc_12_4_builds_for_arm_servers() {
    cross_build(&Case {
        name: "sbsa-12.4",
        target: "[target]\nsystem = \"aarch64-linux\"\nplatform = \"sbsa\"",
        capability: "9.0a",
        sm: "sm_90a",
        cxx: "aarch64-linux-gnu-g++",
        cpu: &AARCH64,
    });
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn nvcc_12_4_builds_for_a_jetson_shaped_target_directory() {
    // 12.4's root holds both sbsa-linux and aarch64-linux; nvcc alone would pick sbsa-linux for the cross compiler,
    // so only the wrapper's --target-directory makes it the Jetson one (cross_build checks nvcc's _TARGET_DIR_).
    cross_build(&JETSON_12_4);
}

/// Orin (8.7) through the Jetson-shaped directory of 12.4.
const JETSON_12_4: Case = Case {
    name: "jetson-12.4",
    target: "[target]\nsystem = \"aarch64-linux\"\nplatform = \"jetson\"",
    capability: "8.7",
    sm: "sm_87",
    cxx: "aarch64-linux-gnu-g++",
    cpu: &AARCH64,
};

/// A C++ object built by GCC 12 that needs GCC 12's libstdc++: with `_GLIBCXX_ASSERTIONS`, `operator[]` calls
/// `std::__glibcxx_assert_fail`, which GCC 11's static libstdc++ lacks (as in real_host_compiler.rs).
const NEW_CXX: &str = r#"
#include <vector>
int sum_first(const std::vector<int>& v, int n) { int s = 0; for (int i = 0; i < n; ++i) s += v[i]; return s; }
"#;

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn nvcc_11_8_picks_gcc_11_for_arm_servers_and_shares_gcc_12s_libstdcxx() {
    // nvcc 11.8 rejects GCC 12, the target's default compiler: the wrapper must choose aarch64-linux-gnu-g++-11 by
    // itself. 8.6: Jetson capabilities are refused for sbsa before 13.2.
    let Some(cx) = cross_build(&Case {
        name: "sbsa-11.8",
        target: "[target]\nsystem = \"aarch64-linux\"",
        capability: "8.6",
        sm: "sm_86",
        cxx: "aarch64-linux-gnu-g++-11",
        cpu: &AARCH64,
    }) else {
        return;
    };
    let Some(gcc12) = real_program("aarch64-linux-gnu-g++") else { return };
    // GCC 12's library directory, as that compiler reports it.
    let libgcc = stdout(&std::process::Command::new(&gcc12).arg("-print-libgcc-file-name").output().unwrap());
    let gcc12_dir = Path::new(libgcc.trim()).parent().unwrap().canonicalize().unwrap();
    let words = cx.plan(&[HELLO, "new.o", "-o", "mixed"]);
    let libdirs: Vec<PathBuf> =
        words.iter().filter_map(|w| w.strip_prefix("-L")).filter_map(|d| Path::new(d).canonicalize().ok()).collect();
    assert!(libdirs.contains(&gcc12_dir), "no -L{}: {words:?}", gcc12_dir.display());

    cx.sb.write("new.cpp", NEW_CXX);
    let made = std::process::Command::new(&gcc12)
        .args(["-D_GLIBCXX_ASSERTIONS", "-O1", "-c", "new.cpp", "-o", "new.o"])
        .current_dir(cx.sb.dir.path())
        .status()
        .unwrap();
    assert!(made.success());
    let static_cxx = ["-Xcompiler", "-static-libstdc++"];
    // The failure exists: the real nvcc with GCC 11 alone cannot link GCC 12's object against GCC 11's libstdc++.
    let bare = cx
        .sb
        .real_nvcc()
        .args(["-ccbin", "aarch64-linux-gnu-g++-11", "--target-directory", "sbsa-linux", "-arch=sm_86"])
        .args([HELLO, "new.o", "-o", "bare"])
        .args(static_cxx)
        .output()
        .unwrap();
    assert!(!bare.status.success(), "expected the libstdc++ mismatch to fail the link");
    assert!(stderr(&bare).contains("__glibcxx_assert_fail"), "{}", stderr(&bare));
    // Through the wrapper it links, and runs.
    cx.build(&[HELLO, "new.o", "-o", "mixed", static_cxx[0], static_cxx[1]]);
    check_program(&cx, &AARCH64, &cx.sb.file("mixed"), "sm_86");
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn nvcc_12_4_builds_for_power() {
    cross_build(&Case {
        name: "ppc64le-12.4",
        target: "[target]\nsystem = \"powerpc64le-linux\"",
        capability: "7.0",
        sm: "sm_70",
        cxx: "powerpc64le-linux-gnu-g++",
        cpu: &PPC64LE,
    });
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn nvcc_11_8_picks_gcc_11_for_power() {
    cross_build(&Case {
        name: "ppc64le-11.8",
        target: "[target]\nsystem = \"powerpc64le-linux-gnu\"",
        capability: "7.0",
        sm: "sm_70",
        cxx: "powerpc64le-linux-gnu-g++-11",
        cpu: &PPC64LE,
    });
}

/// A sysroot made for the test: Debian's aarch64 headers and libraries by symlink, plus a header found nowhere else,
/// so that a program including it builds only when `--sysroot` reaches the cross compiler.
fn make_sysroot(at: &Path) -> PathBuf {
    let include = at.join("usr/include");
    std::fs::create_dir_all(&include).unwrap();
    for entry in std::fs::read_dir("/usr/aarch64-linux-gnu/include").unwrap() {
        let entry = entry.unwrap();
        std::os::unix::fs::symlink(entry.path(), include.join(entry.file_name())).unwrap();
    }
    std::fs::write(include.join("nvcc_wrapper_sysroot_marker.h"), "#define NVCC_WRAPPER_SYSROOT_MARKER 42\n").unwrap();
    std::os::unix::fs::symlink("/usr/aarch64-linux-gnu/lib", at.join("usr/lib")).unwrap();
    std::os::unix::fs::symlink("usr/lib", at.join("lib")).unwrap();
    at.canonicalize().unwrap()
}

const MARKER_CU: &str = "#include <nvcc_wrapper_sysroot_marker.h>\n\
                         static_assert(NVCC_WRAPPER_SYSROOT_MARKER == 42, \"the sysroot's marker header\");\n";

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn a_sysroot_reaches_the_cross_compiler() {
    let Some(root) = real_cross_target("sbsa-13.0") else { return };
    if real_program("qemu-aarch64").is_none() || real_program("aarch64-linux-gnu-g++").is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let sysroot = make_sysroot(&tmp.path().join("sysroot"));
    let target = format!("[target]\nsystem = \"aarch64-linux\"\nsysroot = {}", toml_path(&sysroot));
    let Some(cx) = Cross::new(&root, &target, "9.0a") else { return };
    cx.sb.write("marker.cu", &format!("{MARKER_CU}{SMOKE_CU}"));

    // The failure exists: without the sysroot the marker header is not found.
    let bare = cx
        .sb
        .real_nvcc()
        .args(["-ccbin", "aarch64-linux-gnu-g++", "--target-directory", "sbsa-linux", "-arch=sm_90a"])
        .args(["marker.cu", "-o", "bare"])
        .output()
        .unwrap();
    assert!(!bare.status.success(), "the marker header was found without the sysroot");
    assert!(stderr(&bare).contains("nvcc_wrapper_sysroot_marker.h"), "{}", stderr(&bare));

    let flag = format!("-Xcompiler=--sysroot={}", sysroot.display());
    let rpath_links = |words: &[String]| -> Vec<PathBuf> {
        words.iter().filter_map(|w| w.strip_prefix("-Xlinker=-rpath-link,")).map(PathBuf::from).collect()
    };
    let words = cx.plan(&["marker.cu", "-o", "marker"]);
    assert_eq!(words.iter().filter(|w| **w == flag).count(), 1, "{words:?}");
    // ld takes a colon-separated list.
    let links: Vec<PathBuf> = rpath_links(&words).iter().flat_map(|l| std::env::split_paths(l)).collect();
    assert!(!links.is_empty(), "no -Xlinker=-rpath-link, for the sysroot: {words:?}");
    for dir in &links {
        assert!(
            dir.starts_with(&sysroot) && dir.is_dir(),
            "-rpath-link,{} is no library dir of the sysroot",
            dir.display()
        );
    }
    let compile = cx.plan(&["-c", "marker.cu", "-o", "marker.o"]);
    assert!(compile.contains(&flag), "{compile:?}");
    assert!(rpath_links(&compile).is_empty(), "-rpath-link when not linking: {compile:?}");

    cx.build(&["marker.cu", "-o", "marker"]);
    check_program(&cx, &AARCH64, &cx.sb.file("marker"), "sm_90a");

    // The same sysroot from the environment, with none in the config.
    let cx = cx
        .with_config("[target]\nsystem = \"aarch64-linux\"", "9.0a")
        .with_env("NVCC_WRAPPER_TARGET_SYSROOT", sysroot.to_str().unwrap());
    let words = cx.plan(&["marker.cu", "-o", "marker"]);
    assert!(words.contains(&flag), "{words:?}");
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn a_platform_the_release_does_not_ship_is_refused() {
    let Some(root) = real_toolkit("13.0") else { return };
    // No capabilities, so that only the platform can be wrong. (the [target] table, what the message must name: the
    // release, the target, and a way out)
    let rows: [(&str, &[&str]); 2] = [
        ("[target]\nsystem = \"powerpc64le-linux\"", &["13.0", "ppc64le", "12.4"]),
        ("[target]\nsystem = \"aarch64-linux\"\nplatform = \"jetson\"", &["13.0", "aarch64-linux", "sbsa"]),
    ];
    for (target, names) in rows {
        let Some(cx) = Cross::new(&root, target, "") else { return };
        let err = cx.refused(65, &[]);
        assert!(names.iter().all(|n| err.contains(n)), "{target}: {names:?} not all in: {err}");
    }
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn capabilities_are_checked_against_the_target_platform() {
    let Some(root) = real_cross_target("jetson-12.4") else { return };
    // Orin (8.7) is Jetson: not for an Arm server with 12.4 (sbsa serves it from 13.2 on).
    let Some(cx) = Cross::new(&root, "[target]\nsystem = \"aarch64-linux\"\nplatform = \"sbsa\"", "8.7") else {
        return;
    };
    let err = cx.refused(65, &[]);
    assert!(err.contains("8.7") && err.contains("Orin"), "{err}");
    assert!(err.contains("jetson"), "the help should name platform = \"jetson\": {err}");
    // And a Jetson target takes only Jetson capabilities.
    let cx = cx.with_config("[target]\nsystem = \"aarch64-linux\"\nplatform = \"jetson\"", "9.0a");
    let err = cx.refused(65, &[]);
    assert!(err.contains("9.0a") && err.contains("Jetson"), "{err}");
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn a_compiler_for_another_machine_is_refused() {
    let Some(root) = real_cross_target("sbsa-13.0") else { return };
    let Some(gxx) = real_program("g++") else { return };
    let target =
        format!("[target]\nsystem = \"aarch64-linux\"\n\n[target.host-compiler]\nstdenv = {}", toml_path(&gxx));
    let Some(cx) = Cross::new(&root, &target, "9.0a") else { return };
    let err = cx.refused(69, &[]);
    assert!(err.contains(gxx.to_str().unwrap()) && err.contains("x86_64"), "{err}");
    assert!(err.contains("aarch64"), "{err}");
    assert!(err.contains("stdenv"), "the message should name the key to fix: {err}");
    // A user's -ccbin for the wrong machine is refused too (nvcc would fail obscurely).
    let cx = cx.with_config("[target]\nsystem = \"aarch64-linux\"", "9.0a");
    let err = cx.refused(69, &["-ccbin", gxx.to_str().unwrap()]);
    assert!(err.contains(gxx.to_str().unwrap()) && err.contains("aarch64"), "{err}");
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn no_cross_compiler_at_all_is_an_error() {
    let Some(root) = real_cross_target("sbsa-13.0") else { return };
    let Some(gxx) = real_program("g++") else { return };
    let Some(cx) = Cross::new(&root, "[target]\nsystem = \"aarch64-linux\"", "9.0a") else { return };
    // A PATH with the wrapper and a native g++ only.
    let bin = cx.sb.file("native-only/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(&gxx, bin.join("g++")).unwrap();
    let path = std::env::join_paths([&cx.sb.wrapper_bin, &bin]).unwrap();
    let cx = cx.with_env("PATH", path.to_str().unwrap());
    let err = cx.refused(69, &[]);
    assert!(err.contains("aarch64-linux-gnu-g++"), "the message should name the compiler it looked for: {err}");
    assert!(err.contains("[target.host-compiler] stdenv"), "the message should name the key that fixes it: {err}");
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn a_toolkit_without_the_target_directory_needs_cuda_root() {
    let Some((_tmp, view)) = view_of("13.0") else { return };
    let Some(cx) = Cross::new(&view, "[target]\nsystem = \"aarch64-linux\"", "9.0a") else { return };
    let err = cx.refused(65, &[]);
    assert!(err.contains("targets/sbsa-linux"), "{err}");
    assert!(err.contains("cuda-root"), "the message should name the key that fixes it: {err}");
}

/// A `[target]` path setting that does not exist: exit 78 from the config, 64 from its `NVCC_WRAPPER_TARGET_*`
/// variable, naming the path and the key or variable, before nvcc runs.
fn missing_path_is_refused(root: &Path, key: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("no-such-dir");
    let missing_text = missing.to_str().unwrap();
    let target = format!("[target]\nsystem = \"aarch64-linux\"\n{key} = {}", toml_path(&missing));
    let Some(cx) = Cross::new(root, &target, "9.0a") else { return };
    let err = cx.refused(78, &[]);
    assert!(err.contains(missing_text) && err.contains(key), "{key}: {err}");
    let var = format!("NVCC_WRAPPER_TARGET_{}", key.to_uppercase().replace('-', "_"));
    let cx = cx.with_config("[target]\nsystem = \"aarch64-linux\"", "9.0a").with_env(&var, missing_text);
    let err = cx.refused(64, &[]);
    assert!(err.contains(missing_text) && err.contains(&var), "{var}: {err}");
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn a_missing_sysroot_is_an_error() {
    let Some(root) = real_cross_target("sbsa-13.0") else { return };
    missing_path_is_refused(&root, "sysroot");
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn a_missing_cuda_root_is_an_error() {
    // Where the toolkit lacks the target directory, so that cuda-root is what the build would use.
    let Some((_tmp, view)) = view_of("13.0") else { return };
    missing_path_is_refused(&view, "cuda-root");
    // And where the toolkit has it: a configured path that does not exist is still a mistake to report (README:
    // "a configured sysroot or `cuda-root` must exist"; exit 78), not something to ignore silently.
    let Some(root) = real_cross_target("sbsa-13.0") else { return };
    missing_path_is_refused(&root, "cuda-root");
}

/// Issue 14: `[target] cuda-compat` on Jetson. The forward-compatibility libcuda must come first in the runpath of
/// what nvcc links (before the driver's directory the command line gives), on links only, and on Jetson builds only.
/// No cuda_compat package is reachable here, so the directory holds the target's real libcuda stub as
/// `libcuda.so.1`: the program then gets the stub's own error (34, cudaErrorStubLibrary) under qemu, which it can
/// only get by loading that file from that directory, where without the key it finds no libcuda at all (35).
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn cuda_compat_comes_first_in_the_runpath_of_jetson_links_only() {
    let jetson = JETSON_12_4;
    let Some(cx) = cross_build(&jetson) else { return };
    let Some(_) = real_program("readelf") else { return };
    let stub = cx.nvcc.parent().unwrap().join("../targets/aarch64-linux/lib/stubs/libcuda.so");
    let compat = cx.sb.file("cuda_compat/compat");
    std::fs::create_dir_all(&compat).unwrap();
    std::fs::copy(&stub, compat.join("libcuda.so.1")).unwrap();
    let with_compat = |target: &str| format!("{target}\ncuda-compat = {}", toml_path(&compat));
    let cx = cx.with_config(&with_compat(jetson.target), "8.7");
    let driver = "-Xlinker=-rpath,/run/opengl-driver/lib";

    cx.build(&[HELLO, driver, "-o", "compat-hello"]);
    let program = cx.sb.file("compat-hello");
    let dirs = runpath(&program);
    assert_eq!(dirs.first().map(PathBuf::from), Some(compat.clone()), "{dirs:?}");
    let driver_at = dirs.iter().position(|d| d == "/run/opengl-driver/lib");
    assert!(driver_at.is_some_and(|i| i > 0), "the driver directory must follow: {dirs:?}");
    let out = std::process::Command::new(AARCH64.qemu).arg("-L").arg(AARCH64.sysroot).arg(&program).output().unwrap();
    let text = stdout(&out);
    assert!(text.contains("cuda error 34:"), "the compat directory's libcuda was not the one loaded: {text}");
    // The same program without the key finds no libcuda at all.
    let bare = cx.sb.file("hello");
    let out = std::process::Command::new(AARCH64.qemu).arg("-L").arg(AARCH64.sysroot).arg(&bare).output().unwrap();
    assert!(stdout(&out).contains("cuda error 35:"), "{}", stdout(&out));
    let bare_dirs = runpath(&bare);
    assert!(!bare_dirs.iter().any(|d| Path::new(d) == compat), "{bare_dirs:?}");

    // Compiles, device links and static libraries link nothing: nothing is added.
    let flag = format!("-Xlinker=-rpath,{}", compat.display());
    for args in [&["-c", HELLO][..], &["-dc", HELLO], &["-dlink", "hello.o"], &["-lib", "hello.o"]] {
        assert!(!cx.plan(args).contains(&flag), "{args:?}");
    }
    assert!(cx.plan(&[HELLO, "-shared", "-Xcompiler=-fPIC", "-o", "libh.so"]).contains(&flag));

    // An Arm-server build is not a Jetson one: nothing added, for Grace Hopper; Orin on the unified toolkit (13.2
    // on, see platforms.toml) is.
    let sbsa = "[target]\nsystem = \"aarch64-linux\"\nplatform = \"sbsa\"";
    let server = Cross::new(&real_cross_target("sbsa-13.2").unwrap(), &with_compat(sbsa), "9.0a").unwrap();
    assert!(!server.plan(&[HELLO, "-o", "h"]).contains(&flag));
    let orin = server.with_config(&with_compat(sbsa), "8.7");
    assert_eq!(orin.plan(&[HELLO, "-o", "h"]).iter().filter(|w| **w == flag).count(), 1);
}

/// The `RUNPATH` (or `RPATH`) of an ELF file, as readelf shows it, split at `:`; empty when it has none.
fn runpath(file: &Path) -> Vec<String> {
    let out = std::process::Command::new("readelf").arg("-d").arg(file).output().unwrap();
    assert!(out.status.success(), "readelf -d {}: {}", file.display(), stderr(&out));
    let text = stdout(&out);
    let Some(line) = text.lines().find(|l| l.contains("(RUNPATH)") || l.contains("(RPATH)")) else { return vec![] };
    let inner = line.rsplit_once('[').and_then(|(_, rest)| rest.strip_suffix(']')).unwrap();
    inner.split(':').map(String::from).collect()
}

/// A host-only view of a toolkit, as a Nix store path would be: `bin/` of per-file symlinks (nvcc takes its `TOP`
/// from argv[0], so the view is the root nvcc sees), `nvvm` and `targets/x86_64-linux`, and no other `targets/`.
fn host_only_view(root: &Path, view: &Path) -> PathBuf {
    std::fs::create_dir_all(view.join("bin")).unwrap();
    std::fs::create_dir_all(view.join("targets")).unwrap();
    for entry in std::fs::read_dir(root.join("bin")).unwrap() {
        let entry = entry.unwrap();
        std::os::unix::fs::symlink(entry.path(), view.join("bin").join(entry.file_name())).unwrap();
    }
    std::os::unix::fs::symlink(root.join("nvvm"), view.join("nvvm")).unwrap();
    std::os::unix::fs::symlink(root.join("targets/x86_64-linux"), view.join("targets/x86_64-linux")).unwrap();
    view.to_path_buf()
}

/// The view of a toolkit that has the target files in `targets/<dir>` (so the view must hide them), in a tempdir.
fn view_of(release: &str) -> Option<(tempfile::TempDir, PathBuf)> {
    let root = real_toolkit(release)?;
    let tmp = tempfile::tempdir().unwrap();
    let view = host_only_view(&root, &tmp.path().canonicalize().unwrap().join("cuda"));
    Some((tmp, view))
}

mod nix_style;
mod readme;
