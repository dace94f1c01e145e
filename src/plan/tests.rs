//! Plans for whole command lines, with fixed facts in place of probes: one row per situation.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::model::{Addition, Message, Removal, Said};
use super::*;
use crate::args::Channel;
use crate::compat::Version;
use crate::config::{CompilerFamily, Loaded};
use crate::context::{vars, Context};
use crate::error::ErrorKind;
use crate::plan::FoundBy;
use crate::probe::compiler::{Known, StdenvLibstdcxx};
use crate::probe::system::NvccUnknown;

/// Facts of a Debian 12 machine like the CI one: g++-11, g++-12 (as `g++`), clang++-14/16/19, and the aarch64 and
/// ppc64le cross compilers (GCC 12 as `TRIPLE-g++`, and GCC 11).
struct FakeProbes {
    nvcc: Result<Version, String>,
    compilers: BTreeMap<PathBuf, Known>,
    probed: std::cell::RefCell<Vec<PathBuf>>,
    /// Files and directories that exist (the toolkit is /cuda).
    files: std::collections::BTreeSet<PathBuf>,
    /// Outputs nvcc cannot put files beside (every other one it can).
    unusable: BTreeMap<PathBuf, crate::probe::system::OutputPlace>,
    /// Launchers whose version a probe finds.
    launchers: BTreeMap<PathBuf, Version>,
    /// What `nvidia-smi` says of this machine's GPUs.
    gpus: std::result::Result<Vec<crate::compat::Capability>, String>,
    /// Whether the keeper can hold nvcc's programs at their exec: yes, unless a test says otherwise.
    hold: std::result::Result<(), crate::probe::hold::Unheld>,
    /// The host compiler nvcc runs by itself: none known, unless a test says otherwise.
    nvcc_default: Option<crate::probe::system::NvccDefault>,
}

impl FakeProbes {
    fn debian(nvcc: &str) -> FakeProbes {
        let k = |path: &str, family, version: &str| {
            let name = Path::new(path).file_name().unwrap().to_str().unwrap();
            let target = match CROSS_TRIPLES.iter().find(|t| name.starts_with(*t)) {
                Some(triple) => triple.to_string(),
                None => "x86_64-linux-gnu".to_string(),
            };
            let known = Known { path: path.into(), family, version: version.parse().unwrap(), target: Some(target) };
            (PathBuf::from(path), known)
        };
        FakeProbes {
            nvcc: Ok(nvcc.parse().unwrap()),
            compilers: [
                k("/usr/bin/g++", CompilerFamily::Gcc, "12.2.0"),
                k("/usr/bin/g++-11", CompilerFamily::Gcc, "11.3.0"),
                k("/usr/bin/g++-12", CompilerFamily::Gcc, "12.2.0"),
                k("/usr/bin/clang++-14", CompilerFamily::Clang, "14.0.6"),
                k("/usr/bin/clang++-16", CompilerFamily::Clang, "16.0.6"),
                k("/usr/bin/clang++-19", CompilerFamily::Clang, "19.1.7"),
                k("/usr/bin/aarch64-linux-gnu-g++", CompilerFamily::Gcc, "12.2.0"),
                k("/usr/bin/aarch64-linux-gnu-g++-11", CompilerFamily::Gcc, "11.3.0"),
                k("/usr/bin/aarch64-linux-gnu-g++-12", CompilerFamily::Gcc, "12.2.0"),
                k("/usr/bin/powerpc64le-linux-gnu-g++", CompilerFamily::Gcc, "12.2.0"),
                k("/usr/bin/powerpc64le-linux-gnu-g++-11", CompilerFamily::Gcc, "11.3.0"),
            ]
            .into_iter()
            .collect(),
            probed: Default::default(),
            files: Default::default(),
            unusable: Default::default(),
            launchers: Default::default(),
            gpus: Err("no GPU here".into()),
            hold: Ok(()),
            nvcc_default: None,
        }
    }

    /// This launcher is installed, and says it is `version`.
    fn with_launcher(mut self, path: &str, version: &str) -> FakeProbes {
        self.files.insert(PathBuf::from(path));
        self.launchers.insert(PathBuf::from(path), version.parse().unwrap());
        self
    }

    /// These files and directories exist too.
    fn with_files(mut self, paths: &[&str]) -> FakeProbes {
        self.files.extend(paths.iter().map(PathBuf::from));
        self
    }

    /// Only these compilers are installed.
    fn only(mut self, names: &[&str]) -> FakeProbes {
        self.compilers.retain(|path, _| names.iter().any(|n| path.file_name().unwrap() == *n));
        self
    }
}

const CROSS_TRIPLES: [&str; 2] = ["aarch64-linux-gnu", "powerpc64le-linux-gnu"];

impl Probes for FakeProbes {
    fn hold(&self) -> std::result::Result<(), crate::probe::hold::Unheld> {
        self.hold.clone()
    }

    fn nvcc_default_compiler(&self, _: &Path) -> Option<crate::probe::system::NvccDefault> {
        self.nvcc_default.clone()
    }

    fn gpus(&self) -> std::result::Result<Vec<crate::compat::Capability>, String> {
        self.gpus.clone()
    }

    fn nvcc_version(&self, _: &Path) -> std::result::Result<(Version, &'static str), NvccUnknown> {
        self.nvcc.clone().map(|v| (v, "the toolkit's version.json")).map_err(NvccUnknown::Failed)
    }
    fn compiler(&self, path: &Path) -> std::result::Result<Known, String> {
        self.probed.borrow_mut().push(path.to_path_buf());
        self.compilers.get(path).cloned().ok_or_else(|| format!("{} is not a compiler", path.display()))
    }
    fn libstdcxx(&self, path: &Path) -> std::result::Result<StdenvLibstdcxx, String> {
        assert!(path.starts_with("/usr/bin"), "libstdc++ of {}", path.display());
        // Where Debian keeps them: the native GCC's, or a cross GCC's under gcc-cross and /usr/TRIPLE.
        let name = path.file_name().unwrap().to_string_lossy();
        Ok(match CROSS_TRIPLES.iter().find(|t| name.starts_with(*t)) {
            Some(triple) => StdenvLibstdcxx {
                gcc_install_dir: format!("/usr/lib/gcc-cross/{triple}/12").into(),
                runtime_dir: format!("/usr/{triple}/lib").into(),
            },
            None => StdenvLibstdcxx {
                gcc_install_dir: "/usr/lib/gcc/x86_64-linux-gnu/12".into(),
                runtime_dir: "/usr/lib/x86_64-linux-gnu".into(),
            },
        })
    }
    fn resolve(&self, name: &Path) -> Option<PathBuf> {
        let path = if name.is_absolute() { name.to_path_buf() } else { Path::new("/usr/bin").join(name) };
        (self.compilers.contains_key(&path) || self.files.contains(&path)).then_some(path)
    }
    fn installed_compilers(&self, triple: Option<&str>) -> Vec<PathBuf> {
        let name = |p: &PathBuf| p.file_name().unwrap().to_string_lossy().into_owned();
        let wanted = |p: &&PathBuf| match triple {
            Some(t) => name(p).starts_with(&format!("{t}-")),
            None => !CROSS_TRIPLES.iter().any(|t| name(p).starts_with(t)),
        };
        self.compilers.keys().filter(wanted).cloned().collect()
    }
    fn toolkit_root(&self, nvcc: &Path) -> std::result::Result<PathBuf, String> {
        Ok(nvcc.parent().unwrap().parent().unwrap().to_path_buf())
    }
    fn exists(&self, path: &Path) -> bool {
        self.files.contains(path)
    }
    fn output_place(&self, path: &Path) -> crate::probe::system::OutputPlace {
        self.unusable.get(path).copied().unwrap_or(crate::probe::system::OutputPlace::Usable)
    }
    fn launcher_version(&self, launcher: &Path) -> std::result::Result<Version, String> {
        self.launchers.get(launcher).copied().ok_or_else(|| format!("{} was not probed", launcher.display()))
    }
}

fn nvcc() -> RealNvcc {
    RealNvcc { path: "/cuda/bin/nvcc".into(), found_by: FoundBy::Path }
}

fn inv(args: &[&str], env: &[(&str, &str)]) -> Invocation {
    let ctx = Context { env: env.iter().copied().collect(), ..Context::default() };
    Invocation::parse_args(&ctx, args.iter().map(OsString::from).collect()).unwrap()
}

/// A config file at /etc/nvcc.toml with this text, loaded as the wrapper loads one. Unless the text names
/// `reproducible`, the reproducible-builds step is off, so that each test sees only what it is about (the `repro`
/// tests turn it on).
fn config(text: &str) -> Loaded {
    let text = if text.contains("reproducible") { text.to_string() } else { format!("reproducible = false\n{text}") };
    Loaded::from_text(&text, Path::new("/etc/nvcc.toml")).unwrap()
}

/// The origin of a key on `line` of the file `config` loads (whose first line is `reproducible = false` unless the
/// test's text names it).
fn file_line(line: u32) -> crate::config::Origin {
    crate::config::Origin::File(Some(crate::config::At { file: Path::new("/etc/nvcc.toml").into(), line }))
}

fn plan_for(i: &Invocation, config: &Loaded, probes: &FakeProbes, depth: u32) -> Result<Plan> {
    plan_for_with(i, config, probes, depth, &crate::context::Jobserver::None)
}

/// `plan_for`, with the build's job slots as `jobserver` says.
fn plan_for_with(
    i: &Invocation,
    config: &Loaded,
    probes: &FakeProbes,
    depth: u32,
    jobserver: &crate::context::Jobserver,
) -> Result<Plan> {
    let scratch = &|| "/scratch".into();
    let compat = Compat::built_in();
    let config_file = config.path.as_deref();
    plan(Inputs {
        invocation: i,
        config: &config.config,
        compat: &compat,
        probes,
        nvcc: nvcc(),
        config_file,
        depth,
        scratch,
        nvcc_process: &NVCC_PROCESS,
        jobserver,
        unknown_variables: &[],
    })
}

/// A jobserver the build shares with the call, for the plans decided under one.
static SHARED: std::sync::LazyLock<crate::context::Jobserver> =
    std::sync::LazyLock::new(crate::context::Jobserver::of_a_new_pipe);

/// The process nvcc will be in these tests: pid 0x2a (`0000002a`), `$TMPDIR` unset.
static NVCC_PROCESS: std::sync::LazyLock<NvccProcess> = std::sync::LazyLock::new(|| NvccProcess {
    pid: Some(42),
    tmpdir: "/tmp".into(),
    given_bytes: 4096,
    arg_max: 2 << 20,
    nix_build: false,
});

/// Every message of type `T` the plan holds (notes, warnings, reasons).
fn said<T: Message + Clone>(p: &Plan) -> Vec<T> {
    p.all_said::<T>().cloned().collect()
}

fn plan_with(args: &[&str], env: &[(&str, &str)], cfg: &str, probes: &FakeProbes) -> Result<Plan> {
    let i = inv(args, env);
    plan_for(&i, &config(cfg), probes, 0)
}

/// What the plan adds, less the fatbin compression flags (`fatbin_rows` checks those): every call that compiles
/// gets them, and the rows of the other steps are about what those steps add.
fn added(p: &Plan) -> Vec<String> {
    let ours = p.changes.before.iter().chain(&p.changes.after).filter(|a| !is_compression(a));
    ours.flat_map(|a| a.args.iter().map(|x| x.to_string_lossy().into_owned())).collect()
}

fn is_compression(a: &Addition) -> bool {
    a.why.get::<fatbin::Reason>().is_some()
}

/// Only the fatbin compression flags the plan adds.
fn compression(p: &Plan) -> Vec<String> {
    let ours = p.changes.before.iter().chain(&p.changes.after).filter(|a| is_compression(a));
    ours.flat_map(|a| a.args.iter().map(|x| x.to_string_lossy().into_owned())).collect()
}

#[test]
fn user_arguments_come_through_exactly_and_depth_rises() {
    let i = inv(&["-c", "a b.cu", "", "-o", "x.o"], &[]);
    let probes = FakeProbes::debian("13.0.88");
    let p = plan_for(&i, &config(""), &probes, 2).unwrap();
    assert_eq!(p.command(&i)[..2], ["-ccbin=/usr/bin/g++", "--compress-mode=size"]);
    assert_eq!(p.command(&i)[2..], i.argv[..]);
    assert_eq!(p.changes.env, vec![(vars::DEPTH, OsString::from("3"))]);
}

#[test]
fn additions_go_before_the_user_arguments() {
    let probes = FakeProbes::debian("11.8.89");
    let i = inv(&["-c", "a.cu"], &[]);
    let p = plan_for(&i, &config(""), &probes, 0).unwrap();
    assert_eq!(p.command(&i), ["-ccbin=/usr/bin/g++-11", "-Xfatbin=-compress-all", "-c", "a.cu"]);
}

#[test]
fn host_compiler_rows() {
    // (nvcc, command line, config, what is added)
    let rows: &[(&str, &[&str], &str, &[&str])] = &[
        // In range: the stdenv compiler (g++ on PATH, or the config's), no libstdc++ flags.
        ("13.0.88", &["-c", "a.cu"], "", &["-ccbin=/usr/bin/g++"]),
        ("13.0.88", &["a.cu", "-o", "a"], "[host-compiler]\nstdenv = \"/usr/bin/clang++-19\"", &["-ccbin=/usr/bin/clang++-19"]),
        // 11.8 rejects GCC 12: GCC 11, and GCC 12's libstdc++ when linking.
        ("11.8.89", &["-c", "a.cu"], "", &["-ccbin=/usr/bin/g++-11"]),
        (
            "11.8.89",
            &["a.cu", "-o", "a"],
            "",
            &["-ccbin=/usr/bin/g++-11", "-L/usr/lib/gcc/x86_64-linux-gnu/12", "-Xlinker=-rpath,/usr/lib/x86_64-linux-gnu"],
        ),
        // 12.4 rejects Clang 19: Clang 16 with the stdenv's GCC installation.
        (
            "12.4.131",
            &["-c", "a.cu"],
            "[host-compiler]\nstdenv = \"/usr/bin/clang++-19\"",
            &["-ccbin=/usr/bin/clang++-16", "-Xcompiler=--gcc-install-dir=/usr/lib/gcc/x86_64-linux-gnu/12"],
        ),
        // `prefer` picks the family.
        (
            "11.8.89",
            &["-c", "a.cu"],
            "[host-compiler]\nprefer = \"clang\"",
            &["-ccbin=/usr/bin/clang++-14", "-Xcompiler=--gcc-toolchain=/usr"],
        ),
        // Only the configured candidates are considered.
        ("11.8.89", &["-c", "a.cu"], "[host-compiler]\ncandidates = [\"/usr/bin/clang++-14\"]", &["-ccbin=/usr/bin/clang++-14", "-Xcompiler=--gcc-toolchain=/usr"]),
        // A link of objects only: the stdenv compiler links, out of range or not.
        ("11.8.89", &["a.o", "b.o", "-o", "a"], "", &["-ccbin=/usr/bin/g++"]),
        // The user's compiler, in any spelling or channel: nothing added.
        ("11.8.89", &["-ccbin", "g++-11", "-c", "a.cu"], "", &[]),
        ("11.8.89", &["--compiler-bindir=/usr/bin/g++-11", "-c", "a.cu"], "", &[]),
        // Query modes: nothing.
        ("11.8.89", &["--version"], "", &[]),
        ("11.8.89", &["--list-gpu-arch"], "", &[]),
        // The config's cuda-version wins over probing (the fake nvcc says 13.0).
        ("13.0.88", &["-c", "a.cu"], "cuda-version = \"11.8\"", &["-ccbin=/usr/bin/g++-11"]),
        // Recorded versions are used without probing.
        (
            "13.0.88",
            &["-c", "a.cu"],
            "cuda-version = \"11.8\"\n[host-compiler]\nstdenv = { path = \"/usr/bin/g++-12\", family = \"gcc\", version = \"12.2.0\" }\ncandidates = [{ path = \"/usr/bin/g++-11\", family = \"gcc\", version = \"11.4.0\" }]",
            &["-ccbin=/usr/bin/g++-11"],
        ),
    ];
    for (nvcc_version, args, cfg, want) in rows {
        let probes = FakeProbes::debian(nvcc_version);
        let p = plan_with(args, &[], cfg, &probes).unwrap_or_else(|e| panic!("{args:?}: {e}"));
        assert_eq!(added(&p), *want, "nvcc {nvcc_version} {args:?} with {cfg:?}");
        for addition in p.changes.before.iter().chain(&p.changes.after) {
            assert!(!addition.why.to_string().is_empty());
        }
    }
}

/// Issue 57, item 3: where the compiler chosen is the one nvcc runs by itself (the `g++` on PATH beside a `gcc` of the
/// same release), no `-ccbin` is added: nvcc's command lines stay as long as alone. Anything else is named: another
/// compiler, a `gcc` of another release or directory, a profile that names a `compiler-bindir`, a cross build, a
/// compiler recorded without its target.
#[test]
fn the_compiler_nvcc_runs_by_itself_is_not_named_again() {
    use crate::probe::system::NvccDefault;
    let own = NvccDefault { gcc: "/usr/bin/gcc".into(), gxx: "/usr/bin/g++".into() };
    let with_gcc = |version: &str, default: Option<NvccDefault>| {
        let mut probes = FakeProbes::debian("13.0.88");
        let gcc = Known {
            path: "/usr/bin/gcc".into(),
            family: CompilerFamily::Gcc,
            version: version.parse().unwrap(),
            target: Some("x86_64-linux-gnu".into()),
        };
        probes.compilers.insert("/usr/bin/gcc".into(), gcc);
        probes.nvcc_default = default;
        probes
    };
    let probes = with_gcc("12.2.0", Some(own.clone()));
    let p = plan_with(&["-c", "a.cu"], &[], "", &probes).unwrap();
    assert!(!added(&p).iter().any(|a| a.starts_with("-ccbin")), "{:?}", added(&p));
    let notes: Vec<String> = p.changes.notes.iter().map(|n| n.to_string()).collect();
    assert!(
        notes.iter().any(|n| n.contains("nvcc runs it by itself") && n.contains("/usr/bin/g++ (gcc 12.2.0)")),
        "{notes:?}"
    );
    assert_eq!(p.decided.host.as_ref().map(|h| h.compiler.clone()), Some("/usr/bin/g++".into()));
    let named = |probes: &FakeProbes, args: &[&str], cfg: &str, want: &str| {
        let p = plan_with(args, &[], cfg, probes).unwrap();
        assert!(added(&p).contains(&want.to_string()), "{args:?} {cfg:?}: {:?}", added(&p));
    };
    // Another compiler than nvcc's own; a `gcc` of another release; another directory; no default known (a profile
    // naming a `compiler-bindir`); the stdenv recorded without its target.
    named(&probes, &["-c", "a.cu"], "[host-compiler]\nstdenv = \"/usr/bin/g++-12\"", "-ccbin=/usr/bin/g++-12");
    named(&with_gcc("12.3.0", Some(own.clone())), &["-c", "a.cu"], "", "-ccbin=/usr/bin/g++");
    let elsewhere = NvccDefault { gcc: "/usr/local/bin/gcc".into(), gxx: "/usr/bin/g++".into() };
    named(&with_gcc("12.2.0", Some(elsewhere)), &["-c", "a.cu"], "", "-ccbin=/usr/bin/g++");
    named(&with_gcc("12.2.0", None), &["-c", "a.cu"], "", "-ccbin=/usr/bin/g++");
    let recorded = "[host-compiler]\nstdenv = { path = \"/usr/bin/g++\", family = \"gcc\", version = \"12.2.0\" }";
    named(&probes, &["-c", "a.cu"], recorded, "-ccbin=/usr/bin/g++");
}

/// Issue 14: the smallest fatbins by default, where a fatbin is written and the user chose no compression.
#[test]
fn fatbin_rows() {
    const ALL: &[&str] = &["-Xfatbin=-compress-all"];
    const SIZE: &[&str] = &["--compress-mode=size"];
    use fatbin::Note::{NotInTable, TurnedOff};
    let none = |phase: &str| format!("`{phase}` writes no fatbin: no compression flags are added");
    // As given, the value after a blank.
    let chose = |option: &str, place: &str| {
        let option = option.replacen('=', " ", 1);
        format!("`{option}` in {place} chooses the fatbin compression: nothing is added")
    };
    let query = |option: &str| format!("`{option}` only asks nvcc for information: nothing is added");
    let text = |n: fatbin::Note| n.to_string();
    // (nvcc, command line, environment, config, flags added, the note when nothing is)
    type Row<'a> = (&'a str, &'a [&'a str], &'a [(&'a str, &'a str)], &'a str, &'a [&'a str], String);
    let rows: Vec<Row> = vec![
        // Each release its own flags; every phase that writes a fatbin.
        ("11.8.89", &["-c", "a.cu"], &[], "", ALL, String::new()),
        ("12.4.131", &["-c", "a.cu"], &[], "", ALL, String::new()),
        ("12.9.86", &["-dc", "a.cu"], &[], "", ALL, String::new()),
        ("13.0.88", &["-c", "a.cu"], &[], "", SIZE, String::new()),
        ("13.5.37", &["a.cu", "-o", "a"], &[], "", SIZE, String::new()),
        ("13.0.88", &["-fatbin", "a.cu"], &[], "", SIZE, String::new()),
        ("13.0.88", &["-dlink", "a.o", "b.o", "-o", "dl.o"], &[], "", SIZE, String::new()),
        ("13.0.88", &["-lib", "a.cu", "-o", "liba.a"], &[], "", SIZE, String::new()),
        ("13.0.88", &["-dw", "a.cu"], &[], "", SIZE, String::new()),
        ("13.0.88", &["-run", "a.cu"], &[], "", SIZE, String::new()),
        ("13.0.88", &["-c", "-MD", "-MF", "a.d", "a.cu"], &[], "", SIZE, String::new()),
        ("13.0.88", &["-dlto", "-dc", "a.cu"], &[], "", SIZE, String::new()),
        // The last phase option counts, as in nvcc.
        ("13.0.88", &["-E", "-c", "a.cu"], &[], "", SIZE, String::new()),
        // Phases that write no fatbin.
        ("13.0.88", &["-E", "a.cu"], &[], "", &[], (none("-E"))),
        ("13.0.88", &["-M", "a.cu"], &[], "", &[], (none("-M"))),
        (
            "13.0.88",
            &["--generate-nonsystem-dependencies", "a.cu"],
            &[],
            "",
            &[],
            (none("--generate-nonsystem-dependencies")),
        ),
        ("13.0.88", &["-ptx", "a.cu"], &[], "", &[], (none("-ptx"))),
        ("13.0.88", &["-cubin", "-arch=sm_90", "a.cu"], &[], "", &[], (none("-cubin"))),
        ("13.0.88", &["-cuda", "a.cu"], &[], "", &[], (none("-cuda"))),
        ("13.0.88", &["-ltoir", "-arch=sm_90", "a.cu"], &[], "", &[], (none("-ltoir"))),
        ("13.0.88", &["--optix-ir", "a.cu"], &[], "", &[], (none("--optix-ir"))),
        ("13.0.88", &["-c", "-ptx", "a.cu"], &[], "", &[], (none("-ptx"))),
        // Queries: nothing at all.
        ("13.0.88", &["--version"], &[], "", &[], query("--version")),
        ("13.0.88", &["--list-gpu-code"], &[], "", &[], query("--list-gpu-code")),
        // The user's own choice, in any spelling and channel.
        ("13.0.88", &["-c", "a.cu", "--no-compress"], &[], "", &[], (chose("--no-compress", "the command line"))),
        (
            "13.0.88",
            &["-c", "a.cu", "--compress-mode=speed"],
            &[],
            "",
            &[],
            (chose("--compress-mode=speed", "the command line")),
        ),
        (
            "13.0.88",
            &["-c", "a.cu", "-compress-mode", "none"],
            &[],
            "",
            &[],
            (chose("-compress-mode=none", "the command line")),
        ),
        ("13.5.37", &["-c", "a.cu", "--concat"], &[], "", &[], (chose("--concat", "the command line"))),
        (
            "13.0.88",
            &["-c", "a.cu", "-Xfatbin=-compress-all"],
            &[],
            "",
            &[],
            (chose("-Xfatbin=-compress-all", "the command line")),
        ),
        (
            "12.4.131",
            &["-c", "a.cu", "-Xfatbin", "-compress-all"],
            &[],
            "",
            &[],
            (chose("-Xfatbin=-compress-all", "the command line")),
        ),
        (
            "12.4.131",
            &["-c", "a.cu", "--fatbin-options=-g,--compress=false"],
            &[],
            "",
            &[],
            (chose("--fatbin-options=-g,--compress=false", "the command line")),
        ),
        (
            "13.0.88",
            &["-c", "a.cu"],
            &[("NVCC_PREPEND_FLAGS", "-Xfatbin=-compress-all")],
            "",
            &[],
            (chose("-Xfatbin=-compress-all", "$NVCC_PREPEND_FLAGS")),
        ),
        (
            "13.0.88",
            &["-c", "a.cu"],
            &[("NVCC_APPEND_FLAGS", "-no-compress")],
            "",
            &[],
            (chose("-no-compress", "$NVCC_APPEND_FLAGS")),
        ),
        // Other fatbinary options are not a compression choice.
        ("13.0.88", &["-c", "a.cu", "-Xfatbin=-g"], &[], "", SIZE, String::new()),
        // Off in the config; the release from the config.
        (
            "13.0.88",
            &["-c", "a.cu"],
            &[],
            "[gpu]\ncompress-fatbin = false",
            &[],
            text(TurnedOff { origin: file_line(3) }),
        ),
        ("13.0.88", &["-c", "a.cu"], &[], "[gpu]\ncompress-fatbin = true", SIZE, String::new()),
        ("13.0.88", &["-c", "a.cu"], &[], "cuda-version = \"12.4\"", ALL, String::new()),
        // A release before the table: nothing, and a note.
        ("10.2.89", &["-c", "a.cu"], &[], "", &[], text(NotInTable { release: "10.2".parse().unwrap() })),
    ];
    for (nvcc, args, env, cfg, want, note) in &rows {
        let probes = FakeProbes::debian(nvcc);
        let p = plan_with(args, env, cfg, &probes).unwrap_or_else(|e| panic!("{args:?}: {e}"));
        assert_eq!(compression(&p), *want, "nvcc {nvcc} {args:?} {env:?} {cfg:?}: {:?}", p.changes.notes);
        if want.is_empty() {
            // The one note the fatbin step (or, for a query, the planner) gives, exactly.
            let notes: Vec<String> =
                p.changes.notes.iter().filter(|n| matches!(n.step, "fatbin" | "plan")).map(|n| n.to_string()).collect();
            assert_eq!(notes, std::slice::from_ref(note), "nvcc {nvcc} {args:?}");
        } else {
            let release = FakeProbes::debian(nvcc).nvcc.unwrap().release();
            let release = cfg.strip_prefix("cuda-version = \"").map_or(release, |r| r[..4].parse().unwrap());
            assert_eq!(said::<fatbin::Reason>(&p), [fatbin::Reason::Smallest { release }]);
        }
    }
}

#[test]
fn compression_goes_before_the_users_arguments_and_explains_itself() {
    let i = inv(&["-c", "a.cu"], &[]);
    let p = plan_for(&i, &config(""), &FakeProbes::debian("13.0.88"), 0).unwrap();
    assert_eq!(p.command(&i), ["-ccbin=/usr/bin/g++", "--compress-mode=size", "-c", "a.cu"]);
    let why = p.changes.before[1].why.get::<fatbin::Reason>();
    assert_eq!(why, Some(&fatbin::Reason::Smallest { release: Version::major_minor(13, 0) }));
    assert!(p.changes.before[1].why.to_string().contains("compress-fatbin"), "{}", p.changes.before[1].why);
    // The environment override turns it off, and says so.
    let mut off = config("");
    crate::config::apply_env(&mut off, &[(vars::COMPRESS_FATBIN, "0")].into_iter().collect()).unwrap();
    let p = plan_for(&i, &off, &FakeProbes::debian("13.0.88"), 0).unwrap();
    assert_eq!(p.command(&i), ["-ccbin=/usr/bin/g++", "-c", "a.cu"]);
}

#[test]
fn recorded_compilers_are_not_probed() {
    let probes = FakeProbes::debian("13.0.88");
    let cfg = "cuda-version = \"11.8\"\n[host-compiler]\nstdenv = { path = \"/usr/bin/g++-12\", family = \"gcc\", version = \"12.2.0\", gcc-install-dir = \"/x/lib/gcc/t/12\", libstdcxx-dir = \"/x/lib\" }\ncandidates = [{ path = \"/usr/bin/g++-11\", family = \"gcc\", version = \"11.4.0\" }]";
    let p = plan_with(&["a.cu", "-o", "a"], &[], cfg, &probes).unwrap();
    assert_eq!(added(&p), ["-ccbin=/usr/bin/g++-11", "-L/x/lib/gcc/t/12", "-Xlinker=-rpath,/x/lib"]);
    assert!(probes.probed.borrow().is_empty(), "probed {:?}", probes.probed.borrow());
}

#[test]
fn a_libstdcxx_directory_an_x_list_would_change_is_a_warning_and_no_flag() {
    let probes = FakeProbes::debian("13.0.88");
    let cfg = "cuda-version = \"11.8\"\n[host-compiler]\nstdenv = { path = \"/usr/bin/g++-12\", family = \"gcc\", version = \"12.2.0\", gcc-install-dir = \"/my gcc/lib/gcc/t/12\", libstdcxx-dir = \"/my gcc/lib\" }\ncandidates = [{ path = \"/usr/bin/g++-11\", family = \"gcc\", version = \"11.4.0\" }]";
    // A compile needs no directory; a link's rpath would be split at the space, so nothing is added but -ccbin.
    let p = plan_with(&["-c", "a.cu"], &[], cfg, &probes).unwrap();
    assert_eq!(added(&p), ["-ccbin=/usr/bin/g++-11"]);
    assert!(p.changes.warnings.is_empty(), "{:?}", p.changes.warnings);
    let p = plan_with(&["a.cu", "-o", "a"], &[], cfg, &probes).unwrap();
    assert_eq!(added(&p), ["-ccbin=/usr/bin/g++-11"]);
    let [warning] = &p.changes.warnings[..] else { panic!("{:?}", p.changes.warnings) };
    let Some(host_compiler::Note::LibstdcxxUnpassable { dir, .. }) = warning.get() else { panic!("{warning}") };
    assert_eq!(dir, Path::new("/my gcc/lib"));
    let text = warning.to_string();
    assert!(text.contains("'/my gcc/lib'") && text.contains("a space") && text.contains("libstdcxx-dir"), "{text}");
}

#[test]
fn nvcc_ccbin_is_passed_on_to_releases_that_ignore_it() {
    for (release, want) in
        [("11.8.89", &["-ccbin=g++-11"][..]), ("12.4.131", &["-ccbin=g++-11"]), ("12.5.40", &[]), ("13.0.88", &[])]
    {
        let p = plan_with(&["-c", "a.cu"], &[("NVCC_CCBIN", "g++-11")], "", &FakeProbes::debian(release)).unwrap();
        assert_eq!(added(&p), want, "{release}");
    }
}

#[test]
fn env_channels_count_as_given() {
    for env in [
        ("NVCC_CCBIN", "g++-11"),
        ("NVCC_PREPEND_FLAGS", "-ccbin=g++-11"),
        ("NVCC_APPEND_FLAGS", "--compiler-bindir g++-11"),
    ] {
        let probes = FakeProbes::debian("13.0.88");
        let p = plan_with(&["-c", "a.cu"], &[env], "", &probes).unwrap();
        assert_eq!(added(&p), Vec::<String>::new(), "{env:?}");
        assert!(p.changes.warnings.is_empty(), "{env:?}: {:?}", p.changes.warnings);
    }
}

#[test]
fn a_given_compiler_out_of_range_warns_but_is_kept() {
    let probes = FakeProbes::debian("11.8.89");
    let p = plan_with(&["-ccbin=g++-12", "-c", "a.cu"], &[], "", &probes).unwrap();
    assert!(added(&p).is_empty());
    assert_eq!(p.changes.warnings.len(), 1);
    let Some(host_compiler::Note::GivenRejected { release, compiler, how, .. }) = p.changes.warnings[0].get() else {
        panic!("{:?}", p.changes.warnings)
    };
    assert_eq!(release.to_string(), "11.8");
    assert_eq!(compiler.to_string(), "/usr/bin/g++-12 (gcc 12.2.0)");
    assert_eq!(how.to_string(), "`-ccbin` in the command line");
    assert!(
        p.changes.warnings[0].to_string().contains("nvcc 11.8 accepts GCC up to 11 and Clang up to 14"),
        "{}",
        p.changes.warnings[0]
    );
}

#[test]
fn nothing_in_range_is_an_error_naming_all_and_the_escape() {
    let probes = FakeProbes::debian("11.8.89");
    let cfg = "[host-compiler]\nstdenv = \"/usr/bin/g++-12\"\ncandidates = [\"/usr/bin/clang++-19\"]";
    let err = plan_with(&["-c", "a.cu"], &[], cfg, &probes).unwrap_err();
    assert_eq!(err.kind, ErrorKind::HostCompiler);
    assert!(err.message.contains("nvcc 11.8 accepts GCC up to 11 and Clang up to 14"), "{err}");
    assert!(err.message.contains("/usr/bin/g++-12 (gcc 12.2.0), /usr/bin/clang++-19 (clang 19.1.7)"), "{err}");
    assert!(err.help.as_deref().unwrap().contains("allow-unsupported"), "{err}");

    let p = plan_with(&["-c", "a.cu"], &[], &format!("{cfg}\nallow-unsupported = true"), &probes).unwrap();
    assert_eq!(added(&p), ["-ccbin=/usr/bin/g++-12", "-allow-unsupported-compiler"]);
    // The user's own -allow-unsupported-compiler counts too, and is not doubled.
    let p = plan_with(&["-allow-unsupported-compiler", "-c", "a.cu"], &[], cfg, &probes).unwrap();
    assert_eq!(added(&p), ["-ccbin=/usr/bin/g++-12"]);
}

#[test]
fn unknown_release_adds_nothing_and_says_why() {
    let mut probes = FakeProbes::debian("10.2");
    let p = plan_with(&["-c", "a.cu"], &[], "", &probes).unwrap();
    assert!(added(&p).is_empty());
    assert_eq!(said::<host_compiler::Note>(&p), [host_compiler::Note::NotInTable { release: "10.2".parse().unwrap() }]);
    probes.nvcc = Err("nvcc --version failed".into());
    let p = plan_with(&["-c", "a.cu"], &[], "", &probes).unwrap();
    assert!(added(&p).is_empty());
    // Issue 12: a warning on stderr, not a silent note; once, for every step.
    let unknown = facts::Note::ReleaseUnknown { why: "nvcc --version failed".into() };
    assert_eq!(p.changes.warnings, [Said::new("facts", unknown)]);
    assert!(p.changes.warnings[0].to_string().contains("set `cuda-version`"), "{}", p.changes.warnings[0]);
    // Newer than the table: the newest limits, said so.
    let p = plan_with(&["-c", "a.cu"], &[], "", &FakeProbes::debian("14.0")).unwrap();
    assert_eq!(added(&p), ["-ccbin=/usr/bin/g++"]);
    let newest = Compat::built_in().newest_release();
    assert_eq!(said::<facts::Note>(&p), [facts::Note::ReleaseNewer { version: "14.0".parse().unwrap(), newest }]);
}

#[test]
fn host_lto_with_another_compiler_than_the_stdenv_one_is_said_or_refused() {
    let probes = FakeProbes::debian("11.8.89");
    let lto =
        |p: &Plan| said::<host_compiler::Note>(p).iter().any(|n| matches!(n, host_compiler::Note::LtoMismatch { .. }));
    // (arguments, environment, config extra, LTO warned)
    type Row<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str, bool);
    let rows: &[Row] = &[
        (&["-Xcompiler=-flto", "-c", "a.cu"], &[], "", true),
        (&["-Xcompiler", "-O2,-flto=auto", "-c", "a.cu"], &[], "", true),
        (&["--compiler-options=-flto=thin", "-c", "a.cu"], &[], "", true),
        (&["-c", "a.cu"], &[("NVCC_APPEND_FLAGS", "-Xcompiler=-flto")], "", true),
        // Turned off again, or not asked for.
        (&["-Xcompiler=-flto", "-Xcompiler=-fno-lto", "-c", "a.cu"], &[], "", false),
        (&["-Xcompiler=-fltox", "-c", "a.cu"], &[], "", false),
        (&["-Xlinker=-flto", "-c", "a.cu"], &[], "", false),
        (&["-c", "a.cu"], &[], "", false),
    ];
    for (args, env, extra, warned) in rows {
        let cfg = format!("[host-compiler]\nstdenv = \"/usr/bin/g++-12\"\n{extra}");
        let p = plan_with(args, env, &cfg, &probes).unwrap();
        assert_eq!(added(&p)[0], "-ccbin=/usr/bin/g++-11", "{args:?}");
        assert_eq!(lto(&p), *warned, "{args:?} {env:?}: {:?}", p.changes.warnings);
    }
    let args = &["-Xcompiler=-flto", "-c", "a.cu"];
    // Under `lto-mismatch = "error"`: stopped, exit 69, with the ways out.
    let cfg = "[host-compiler]\nstdenv = \"/usr/bin/g++-12\"\nlto-mismatch = \"error\"";
    let err = plan_with(args, &[], cfg, &probes).unwrap_err();
    assert_eq!(err.kind, ErrorKind::HostCompiler);
    assert!(err.message.contains("host LTO (`-Xcompiler -flto`) with /usr/bin/g++-11"), "{err}");
    assert!(err.help.unwrap().contains("allow-unsupported = true"));
    // `allow-unsupported` keeps the stdenv compiler for host LTO, though another is in range; without LTO it does not.
    let cfg = "[host-compiler]\nstdenv = \"/usr/bin/g++-12\"\nallow-unsupported = true";
    let p = plan_with(args, &[], cfg, &probes).unwrap();
    assert_eq!(added(&p), ["-ccbin=/usr/bin/g++-12", "-allow-unsupported-compiler"]);
    assert!(!lto(&p));
    let p = plan_with(&["-c", "a.cu"], &[], cfg, &probes).unwrap();
    assert_eq!(added(&p), ["-ccbin=/usr/bin/g++-11"]);
    // A release that accepts the stdenv compiler uses it: nothing to say.
    let p =
        plan_with(args, &[], "[host-compiler]\nstdenv = \"/usr/bin/g++-12\"", &FakeProbes::debian("12.4.131")).unwrap();
    assert_eq!(added(&p), ["-ccbin=/usr/bin/g++-12"]);
    assert!(!lto(&p));
    // Another family is a mismatch too (Clang's IR is not GCC's).
    let cfg = "[host-compiler]\nstdenv = \"/usr/bin/g++-12\"\ncandidates = [\"/usr/bin/clang++-14\"]";
    let p = plan_with(args, &[], cfg, &probes).unwrap();
    assert_eq!(added(&p)[0], "-ccbin=/usr/bin/clang++-14");
    assert!(lto(&p), "{:?}", p.changes.warnings);
}

#[test]
fn unclear_command_lines_get_a_note_and_nothing_else() {
    let p = plan_with(&["-c", "a.cu", "-ccbin"], &[], "", &FakeProbes::debian("11.8.89")).unwrap();
    assert!(p.changes_nothing());
    assert_eq!(p.changes.notes.len(), 1);
}

mod gpu;

/// Cross builds: the target's compiler, target files and sysroot, and every way they can be missing or wrong.
mod cross;

/// Issue 12: properties over arbitrary command lines and environment channels (option-like words, values with
/// spaces, quotes, `=`, commas and newlines, empty words, bytes that are not UTF-8).
mod properties;

/// Issue 24: a call that writes a dependency file gets the files the wrapper decided from added to it.
mod threads;

mod depfile;

mod repro;

/// Issue 40: a step decides from the decisions earlier steps returned (`decide_all`).
mod steps;
