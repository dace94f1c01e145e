//! Reproducible builds: the same sources, built twice through the wrapper, give the same bytes (issue 23). Against
//! every real NVCC release 11.8 to 13.5, with GCC and with Clang host compilers, for aarch64 Arm servers, a
//! Jetson-shaped target and ppc64le (11.8 and 12.4), and device LTO. The two builds differ the way two builds of one package differ: every nvcc has another process id
//! (they differ anyway), each build has a TMPDIR of its own, and they run in two build directories with the same
//! relative paths. What nvcc itself ties to its working directory (device debug info and line tables, which name it
//! in DW_AT_comp_dir, and device-LTO intermediates) is compared between two builds in one directory, as Nix builds
//! in /build; host debug info (`-g`) gets the build's own prefix map, as the issue allows. The facts behind each
//! choice, measured with scripts/measure-reproducible.sh: docs/nvcc-facts.md, "Reproducible builds".
//!
//! Every output of every release is compared before the test fails, so that one failure lists them all, with the
//! first ELF section (or archive member header) that differs. Needs real NVCC 11.8, 12.4 and 13.0 to 13.5, g++-11,
//! g++-12, clang++-14, clang++-16, clang++-19, the aarch64 and ppc64le cross compilers and target files, sha256sum
//! and ar.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::support::*;

/// The sources: examples/hello.cu, and two files of relocatable device code with file-local device entities (whose
/// names nvcc makes unique with a module id).
const SOURCES: [(&str, &str); 3] = [
    ("hello.cu", SMOKE_CU),
    ("main.cu", include_str!("../fixtures/reproducible/main.cu")),
    ("scale.cu", include_str!("../fixtures/reproducible/scale.cu")),
];

/// An `ar` that is not deterministic by default (as GNU ar configured without --enable-deterministic-archives):
/// it adds the `U` modifier (real dates, uids, gids and modes) to nvcc's key letters. nvcc runs the `ar` that
/// `<host compiler> -print-prog-name=ar` names, for GCC a bare `ar` found on PATH.
const NONDETERMINISTIC_AR: &str = "#!/bin/sh\nkey=$1; shift\nexec /usr/bin/ar \"${key}U\" \"$@\"\n";

/// Where a step must give the same bytes: in another build directory, or (for what nvcc ties to its working
/// directory) in the same one.
#[derive(Clone, Copy, PartialEq)]
enum Place {
    Anywhere,
    SameDir,
}

/// One nvcc call of a build: its arguments (paths relative to the build directory) and the file it writes.
struct Step {
    place: Place,
    args: Vec<String>,
    output: &'static str,
    /// Run with the non-deterministic `ar` first on PATH.
    nondeterministic_ar: bool,
}

fn step(place: Place, args: &[&str], output: &'static str) -> Step {
    let mut args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    args.extend(["-o".to_string(), output.to_string()]);
    Step { place, args, output, nondeterministic_ar: false }
}

/// Every kind of output of issue 23's list, for a native build with GCC. The wrapper adds the GPU targets (two
/// capabilities) and, by default, fatbin compression: every object and fatbin here is a compressed one.
fn gcc_steps() -> Vec<Step> {
    use Place::*;
    let mut steps = vec![
        step(Anywhere, &["-c", "hello.cu"], "out/hello.o"),
        step(Anywhere, &["-dc", "main.cu"], "out/main.o"),
        step(Anywhere, &["-dc", "scale.cu"], "out/scale.o"),
        step(Anywhere, &["-dlink", "out/main.o", "out/scale.o"], "out/dlink.o"),
        step(Anywhere, &["-lib", "out/main.o", "out/scale.o"], "out/librdc.a"),
        step(Anywhere, &["-rdc=true", "out/main.o", "out/scale.o"], "out/rdc"),
        step(Anywhere, &["hello.cu"], "out/hello"),
        // -ptx and -cubin write one file, so they name their one target; the wrapper adds none.
        step(Anywhere, &["-arch=sm_86", "-ptx", "-rdc=true", "main.cu"], "out/main.ptx"),
        step(Anywhere, &["-arch=sm_86", "-cubin", "-rdc=true", "main.cu"], "out/main.cubin"),
        step(Anywhere, &["-fatbin", "hello.cu"], "out/hello.fatbin"),
        // Host debug info names the build directory (DW_AT_comp_dir): the build maps it, as the issue allows.
        step(Anywhere, &["-g", "-Xcompiler=-ffile-prefix-map=@BUILD@=.", "-c", "hello.cu"], "out/hello.g.o"),
        // nvcc's device compiler (cicc) writes its working directory into device debug info, line tables and
        // device-LTO intermediates, and has no prefix map: these must be the same in one build directory.
        step(SameDir, &["-dc", "-dlto", "main.cu"], "out/main.lto.o"),
        step(SameDir, &["-dc", "-dlto", "scale.cu"], "out/scale.lto.o"),
        step(SameDir, &["-dlink", "-dlto", "out/main.lto.o", "out/scale.lto.o"], "out/dlto.o"),
        step(SameDir, &["-G", "-dc", "main.cu"], "out/main.G.o"),
        step(SameDir, &["-lineinfo", "-c", "hello.cu"], "out/hello.lineinfo.o"),
        // Host LTO: GCC names its LTO sections with a random number unless given a seed. GCC's own LTO objects name
        // the build directory even with a prefix map, so this one is compared in one directory too.
        step(SameDir, &["-Xcompiler=-flto", "-c", "hello.cu"], "out/hello.flto.o"),
    ];
    let mut lib = step(Anywhere, &["-lib", "out/main.o", "out/scale.o"], "out/librdc-nondeterministic-ar.a");
    lib.nondeterministic_ar = true;
    steps.push(lib);
    steps
}

/// With Clang, what depends on the host compiler. Not a compile and link in one call: Clang writes the name of its
/// input (nvcc's `tmpxft_<pid>_...`) into the object's file symbol whatever prefix map it is given, and nvcc's
/// `-objtemp`, which names that input after the object, only works with `-c` and `-dc` (see docs/nvcc-facts.md).
fn clang_steps() -> Vec<Step> {
    use Place::*;
    vec![
        step(Anywhere, &["-c", "hello.cu"], "out/hello.o"),
        step(Anywhere, &["-dc", "main.cu"], "out/main.o"),
        step(Anywhere, &["-dc", "scale.cu"], "out/scale.o"),
        step(Anywhere, &["-dlink", "out/main.o", "out/scale.o"], "out/dlink.o"),
        step(Anywhere, &["-g", "-Xcompiler=-ffile-prefix-map=@BUILD@=.", "-c", "hello.cu"], "out/hello.g.o"),
    ]
}

/// A cross build: objects, a device link and a linked aarch64 or ppc64le program.
fn cross_steps() -> Vec<Step> {
    use Place::*;
    vec![
        step(Anywhere, &["-c", "hello.cu"], "out/hello.o"),
        step(Anywhere, &["-dc", "main.cu"], "out/main.o"),
        step(Anywhere, &["-dc", "scale.cu"], "out/scale.o"),
        step(Anywhere, &["-dlink", "out/main.o", "out/scale.o"], "out/dlink.o"),
        step(Anywhere, &["-rdc=true", "out/main.o", "out/scale.o"], "out/rdc"),
    ]
}

/// One configuration to build twice: the wrapper's config and the steps.
struct Setup {
    label: String,
    root: PathBuf,
    config: String,
    steps: Vec<Step>,
}

/// A build directory: a sandbox with the sources, the config and a directory of shims.
struct BuildDir {
    sb: RealSandbox,
}

impl BuildDir {
    fn new(setup: &Setup) -> BuildDir {
        let sb = RealSandbox::new(&setup.root);
        for (name, text) in SOURCES {
            let path = sb.write(name, text);
            // One modification time for every copy, as Nix's store has (1): nvcc 11.8 to 13.x write the source's
            // time into device line tables, which no flag changes (docs/nvcc-facts.md).
            let file = std::fs::File::options().write(true).open(&path).unwrap();
            file.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1)).unwrap();
        }
        sb.write("wrapper.toml", &setup.config);
        let ar = sb.write("nondeterministic-ar/ar", NONDETERMINISTIC_AR);
        std::fs::set_permissions(&ar, std::fs::Permissions::from_mode(0o755)).unwrap();
        BuildDir { sb }
    }

    /// Run the steps of `place` with TMPDIR `<build>/<tmp>` (a short path: nvcc 11.8's `-dlink -dlto` fails with
    /// a TMPDIR of 54 characters or more).
    fn build(&self, setup: &Setup, places: &[Place], tmp: &str) {
        let tmpdir = self.sb.file(tmp);
        std::fs::create_dir_all(&tmpdir).unwrap();
        std::fs::create_dir_all(self.sb.file("out")).unwrap();
        let build = self.sb.dir.path().to_str().unwrap().to_string();
        for step in setup.steps.iter().filter(|s| places.contains(&s.place)) {
            let mut cmd = self.sb.nvcc();
            cmd.env("NVCC_WRAPPER_CONFIG", self.sb.file("wrapper.toml")).env("TMPDIR", &tmpdir);
            if step.nondeterministic_ar {
                let mut path = std::ffi::OsString::from(self.sb.file("nondeterministic-ar"));
                path.push(":");
                path.push(self.sb.path());
                cmd.env("PATH", path);
            }
            let args: Vec<String> = step.args.iter().map(|a| a.replace("@BUILD@", &build)).collect();
            let out = cmd.args(&args).output().unwrap();
            assert!(
                out.status.success(),
                "{}: nvcc {} failed ({:?}):\n{}",
                setup.label,
                args.join(" "),
                out.status.code(),
                stderr(&out)
            );
            // A warning means this call decided otherwise than its twin might have (a probe stopped under load once
            // gave one build directory a plan without its host compiler): say so, not only that the bytes differ.
            let said = warnings(&out);
            assert!(said.is_empty(), "{}: nvcc {} warned:\n{}", setup.label, args.join(" "), said.join("\n"));
        }
    }

    /// Keep this build's outputs in `<build>/<name>` (for a second build in the same directory).
    fn set_aside(&self, name: &str) -> PathBuf {
        let kept = self.sb.file(name);
        std::fs::rename(self.sb.file("out"), &kept).unwrap();
        kept
    }
}

fn sha256(path: &Path) -> String {
    let out = std::process::Command::new("sha256sum").arg(path).output().unwrap();
    assert!(out.status.success(), "sha256sum {}: {}", path.display(), stderr(&out));
    stdout(&out).split_whitespace().next().unwrap().to_string()
}

/// Where two files first differ (the ELF section, the archive member's header or bytes, or the byte offset), as
/// `check-reproducible` names it.
fn first_difference(a: &Path, b: &Path) -> String {
    let (x, y) = (std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
    nvcc_wrapper::compare::first_difference(&x, &y).map_or_else(|| "nowhere: the same bytes".into(), |d| d.to_string())
}

/// Compare the outputs of `steps` of `place` between two builds; a line per difference.
fn compare(setup: &Setup, place: Place, a: &Path, b: &Path, differences: &mut Vec<String>) {
    for step in setup.steps.iter().filter(|s| s.place == place) {
        let rel = step.output.strip_prefix("out/").unwrap();
        let (x, y) = (a.join(rel), b.join(rel));
        let (hx, hy) = (sha256(&x), sha256(&y));
        if hx != hy {
            let how = match place {
                Place::Anywhere => "another build directory",
                Place::SameDir => "the same build directory",
            };
            differences.push(format!(
                "{}: nvcc {} ({how}): {} != {}, first in {}",
                setup.label,
                step.args.join(" "),
                &hx[..12],
                &hy[..12],
                first_difference(&x, &y)
            ));
        }
    }
}

/// Build `setup` three times (A in one directory, B in another, C in A's again, each with its TMPDIR) and compare
/// A with B, and A with C for the steps tied to the directory.
fn build_twice(setup: &Setup, differences: &mut Vec<String>) {
    let first = BuildDir::new(setup);
    let other = BuildDir::new(setup);
    first.build(setup, &[Place::Anywhere, Place::SameDir], "t-a");
    other.build(setup, &[Place::Anywhere], "t-b");
    let a = first.set_aside("out-a");
    first.build(setup, &[Place::SameDir], "t-c");
    compare(setup, Place::Anywhere, &a, &other.sb.file("out"), differences);
    compare(setup, Place::SameDir, &a, &first.sb.file("out"), differences);
}

/// The config of a native build: the toolkit's nvcc, one host compiler the release accepts, two capabilities (an
/// `a` one where the release has it).
fn native_config(root: &Path, compiler: &Path, family: &str, release: &str) -> String {
    let newest = if release == "11.8" { "9.0" } else { "9.0a" };
    format!(
        "nvcc = \"{}\"\n\n[host-compiler]\nstdenv = \"{}\"\nprefer = \"{family}\"\n\n[gpu]\ncapabilities = [\"8.6\", \
         \"{newest}\"]\n",
        root.join("bin/nvcc").display(),
        compiler.display()
    )
}

/// The config of a cross build: `target` is the `[target]` table's keys.
fn cross_config(root: &Path, target: &str, compiler: &str, capability: &str) -> String {
    format!(
        "nvcc = \"{}\"\n\n[target]\n{target}\n\n[target.host-compiler]\nstdenv = \"/usr/bin/{compiler}\"\n\n\
         [gpu]\ncapabilities = [\"{capability}\"]\n",
        root.join("bin/nvcc").display()
    )
}

/// The `[target]` keys of an aarch64 build for `platform`.
fn aarch64(platform: &str) -> String {
    format!("system = \"aarch64-linux\"\nplatform = \"{platform}\"")
}

/// The host compilers each release accepts here.
fn compilers(release: &str) -> (&'static str, &'static str, &'static str) {
    match release {
        "11.8" => ("g++-11", "clang++-14", "aarch64-linux-gnu-g++-11"),
        "12.4" => ("g++-12", "clang++-16", "aarch64-linux-gnu-g++"),
        _ => ("g++-12", "clang++-19", "aarch64-linux-gnu-g++"),
    }
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn every_release_builds_every_output_kind_bit_identically_twice() {
    if real_program("sha256sum").is_none() || real_program("ar").is_none() {
        return;
    }
    let mut setups = Vec::new();
    // The aarch64 cross cases on the newest release of each major (11.8 and 12.4 with their own cross compilers and
    // target files, and the newest).
    let cross_releases = newest_of_each_major();
    for &release in releases() {
        let Some(root) = real_toolkit(release) else { continue };
        let (gcc, clang, cross) = compilers(release);
        let (Some(gcc), Some(clang)) = (real_program(gcc), real_program(clang)) else { continue };
        setups.extend([
            Setup {
                label: format!("{release} {}", gcc.display()),
                config: native_config(&root, &gcc, "gcc", release),
                root: root.clone(),
                steps: gcc_steps(),
            },
            Setup {
                label: format!("{release} {}", clang.display()),
                config: native_config(&root, &clang, "clang", release),
                root: root.clone(),
                steps: clang_steps(),
            },
        ]);
        if cross_releases.contains(&release) && real_program(cross).is_some() {
            let server = if release == "11.8" { "8.6" } else { "9.0a" };
            if let Some(root) = real_cross_target(&format!("sbsa-{release}")) {
                setups.push(Setup {
                    label: format!("{release} sbsa {cross}"),
                    config: cross_config(&root, &aarch64("sbsa"), cross, server),
                    root,
                    steps: cross_steps(),
                });
            }
            // ppc64le: the last releases that ship it, with their own cross GCC.
            let ppc = if release == "11.8" { "powerpc64le-linux-gnu-g++-11" } else { "powerpc64le-linux-gnu-g++" };
            if release != "13.5" && real_program(ppc).is_some() {
                if let Some(root) = real_cross_target(&format!("ppc64le-{release}")) {
                    setups.push(Setup {
                        label: format!("{release} ppc64le {ppc}"),
                        config: cross_config(&root, "system = \"powerpc64le-linux\"", ppc, "8.6"),
                        root,
                        steps: cross_steps(),
                    });
                }
            }
            if release == "12.4" {
                if let Some(root) = real_cross_target("jetson-12.4") {
                    setups.push(Setup {
                        label: format!("{release} jetson {cross}"),
                        config: cross_config(&root, &aarch64("jetson"), cross, "8.7"),
                        root,
                        steps: cross_steps(),
                    });
                }
            }
        }
    }
    if setups.is_empty() {
        return;
    }
    // Two setups at a time (each builds one step after another): the test's wall time halves on two cores.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let found = std::sync::Mutex::new(vec![Vec::new(); setups.len()]);
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let Some(setup) = setups.get(i) else { break };
                let mut differences = Vec::new();
                build_twice(setup, &mut differences);
                found.lock().unwrap()[i] = differences;
            });
        }
    });
    let differences: Vec<String> = found.into_inner().unwrap().concat();
    assert!(
        differences.is_empty(),
        "{} outputs differ between two builds (other pids and TMPDIRs; other build directories where marked):\n{}",
        differences.len(),
        differences.join("\n")
    );
}

/// `nvcc-wrapper check-reproducible`, a user's check of one call of their build, with real nvcc 13.5: the same
/// bytes with the feature on (exit 0); with it off, exit 3 and the section where the process id shows.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn check_reproducible_says_same_or_names_the_first_differing_section() {
    let Some(root) = real_toolkit("13.5") else { return };
    let Some(gcc) = real_program("g++-12") else { return };
    let sb = RealSandbox::new(&root);
    sb.write("hello.cu", SMOKE_CU);
    let config = sb.write(
        "wrapper.toml",
        &format!("[host-compiler]\nstdenv = \"{}\"\n\n[gpu]\ncapabilities = [\"8.6\"]\n", gcc.display()),
    );
    let check = |env: &[(&str, &str)], args: &[&str]| {
        let mut cmd = assert_cmd::Command::new(WRAPPER);
        sb.prepare(&mut cmd);
        cmd.env("NVCC_WRAPPER_CONFIG", &config).envs(env.iter().copied());
        cmd.arg("check-reproducible").arg("--").args(args).output().unwrap()
    };
    for args in [&["-c", "hello.cu", "-o", "hello.o"][..], &["hello.cu", "-o", "hello"]] {
        let out = check(&[], args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}{}", stdout(&out), stderr(&out));
        assert!(stdout(&out).starts_with("reproducible: "), "{}", stdout(&out));
    }
    let out = check(&[("NVCC_WRAPPER_REPRODUCIBLE", "0")], &["-c", "hello.cu", "-o", "hello.o"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("hello.o differs between two builds") && err.contains("first in ELF section .strtab"),
        "{err}"
    );
    assert!(err.lines().nth(1).is_some_and(|l| l.starts_with("help: ")), "{err}");
}

/// Issue 30, item 8: host debug info (`-g`) names the working directory, so two build directories with the same
/// relative paths give different objects with every release here, and `explain` says so for such a call, with the
/// map that makes them the same; with that map they are. Needs real NVCC 11.8, 12.4 and 13.5, g++-11 and g++-12.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn g_objects_differ_between_build_directories_and_explain_says_so() {
    for release in newest_of_each_major() {
        let Some(root) = real_toolkit(release) else { return };
        let compiler = if release == "11.8" { "/usr/bin/g++-11" } else { "/usr/bin/g++-12" };
        let sb = RealSandbox::new(&root);
        let config = sb.write("config.toml", &format!("[host-compiler]\nstdenv = \"{compiler}\"\n"));
        let build = |dir: &str, extra: &[&str]| {
            let dir = sb.file(dir);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("k.cu"), "__global__ void k(int *p) { p[0] = 1; }\n").unwrap();
            let mut nvcc = sb.nvcc();
            nvcc.env("NVCC_WRAPPER_CONFIG", &config).current_dir(&dir).args(["-g", "-c", "k.cu", "-o", "k.o"]);
            nvcc.args(extra).assert().success();
            std::fs::read(dir.join("k.o")).unwrap()
        };
        assert_ne!(build("a/src", &[]), build("b/src", &[]), "{release}: -g objects of two build directories");
        let out = std::process::Command::new(WRAPPER)
            .args(["explain", "--", "-g", "-c", "k.cu", "-o", "k.o"])
            .env("PATH", sb.path())
            .env("NVCC_WRAPPER_CONFIG", &config)
            .env("NVCC_WRAPPER_PROBE_CACHE_DIR", sb.file("probe-cache"))
            .current_dir(sb.file("a/src"))
            .output()
            .unwrap();
        let text = stdout(&out);
        assert!(
            text.contains("host debug info (`-g`) of this call may differ from build to build (the host compiler writes the working directory into the debug info): the same only when every build runs nvcc in the same directory"),
            "{release}: {text}"
        );
        let map_a = format!("-Xcompiler=-fdebug-prefix-map={}=.", sb.file("c/src").display());
        let map_b = format!("-Xcompiler=-fdebug-prefix-map={}=.", sb.file("d/src").display());
        assert_eq!(build("c/src", &[&map_a]), build("d/src", &[&map_b]), "{release}: with the map");
    }
}
