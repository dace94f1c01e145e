//! Plans for whole command lines, with fixed facts in place of probes: one row per situation.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::model::{Addition, Message, Removal, Said};
use super::*;
use crate::args::Channel;
use crate::config::{CompilerFamily, Loaded};
use crate::context::{vars, Context};
use crate::error::ErrorKind;
use crate::locate::FoundBy;
use crate::probe::compiler::{Known, StdenvLibstdcxx};
use crate::version::Version;

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
        }
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
    fn nvcc_version(&self, _: &Path) -> std::result::Result<(Version, &'static str), String> {
        self.nvcc.clone().map(|v| (v, "the toolkit's version.json"))
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

fn plan_for(i: &Invocation, config: &Loaded, probes: &FakeProbes, depth: u32) -> Result<Plan> {
    plan_for_with(i, config, probes, depth, &JobSlots::None)
}

/// `plan_for`, with the build's job slots as `jobserver` says.
fn plan_for_with(
    i: &Invocation,
    config: &Loaded,
    probes: &FakeProbes,
    depth: u32,
    jobserver: &JobSlots,
) -> Result<Plan> {
    let scratch = Path::new("/scratch");
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
    })
}

/// The process nvcc will be in these tests: pid 0x2a (`0000002a`), `$TMPDIR` unset.
static NVCC_PROCESS: std::sync::LazyLock<NvccProcess> = std::sync::LazyLock::new(|| NvccProcess {
    pid: 42,
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
    let ours = p.before.iter().chain(&p.after).filter(|a| !is_compression(a));
    ours.flat_map(|a| a.args.iter().map(|x| x.to_string_lossy().into_owned())).collect()
}

fn is_compression(a: &Addition) -> bool {
    a.why.get::<fatbin::Reason>().is_some()
}

/// Only the fatbin compression flags the plan adds.
fn compression(p: &Plan) -> Vec<String> {
    let ours = p.before.iter().chain(&p.after).filter(|a| is_compression(a));
    ours.flat_map(|a| a.args.iter().map(|x| x.to_string_lossy().into_owned())).collect()
}

#[test]
fn user_arguments_come_through_exactly_and_depth_rises() {
    let i = inv(&["-c", "a b.cu", "", "-o", "x.o"], &[]);
    let probes = FakeProbes::debian("13.0.88");
    let p = plan_for(&i, &config(""), &probes, 2).unwrap();
    assert_eq!(p.command(&i)[..2], ["-ccbin=/usr/bin/g++", "--compress-mode=size"]);
    assert_eq!(p.command(&i)[2..], i.argv[..]);
    assert_eq!(p.env, vec![(vars::DEPTH, OsString::from("3"))]);
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
        for addition in p.before.iter().chain(&p.after) {
            assert!(!addition.why.to_string().is_empty());
        }
    }
}

/// Issue 14: the smallest fatbins by default, where a fatbin is written and the user chose no compression.
#[test]
fn fatbin_rows() {
    const ALL: &[&str] = &["-Xfatbin=-compress-all"];
    const SIZE: &[&str] = &["--compress-mode=size"];
    use fatbin::Note::{NoFatbinWritten, NotInTable, TurnedOff, UserChose};
    let none = |phase: &str| NoFatbinWritten { phase: phase.into() };
    let chose = |option: &str, place: &str| UserChose { option: option.into(), place: place.into() };
    let query = |option: &str| Note::Query { option: option.into() }.to_string();
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
        ("13.0.88", &["-E", "a.cu"], &[], "", &[], text(none("-E"))),
        ("13.0.88", &["-M", "a.cu"], &[], "", &[], text(none("-M"))),
        (
            "13.0.88",
            &["--generate-nonsystem-dependencies", "a.cu"],
            &[],
            "",
            &[],
            text(none("--generate-nonsystem-dependencies")),
        ),
        ("13.0.88", &["-ptx", "a.cu"], &[], "", &[], text(none("-ptx"))),
        ("13.0.88", &["-cubin", "-arch=sm_90", "a.cu"], &[], "", &[], text(none("-cubin"))),
        ("13.0.88", &["-cuda", "a.cu"], &[], "", &[], text(none("-cuda"))),
        ("13.0.88", &["-ltoir", "-arch=sm_90", "a.cu"], &[], "", &[], text(none("-ltoir"))),
        ("13.0.88", &["--optix-ir", "a.cu"], &[], "", &[], text(none("--optix-ir"))),
        ("13.0.88", &["-c", "-ptx", "a.cu"], &[], "", &[], text(none("-ptx"))),
        // Queries: nothing at all.
        ("13.0.88", &["--version"], &[], "", &[], query("--version")),
        ("13.0.88", &["--list-gpu-code"], &[], "", &[], query("--list-gpu-code")),
        // The user's own choice, in any spelling and channel.
        ("13.0.88", &["-c", "a.cu", "--no-compress"], &[], "", &[], text(chose("--no-compress", "the command line"))),
        (
            "13.0.88",
            &["-c", "a.cu", "--compress-mode=speed"],
            &[],
            "",
            &[],
            text(chose("--compress-mode=speed", "the command line")),
        ),
        (
            "13.0.88",
            &["-c", "a.cu", "-compress-mode", "none"],
            &[],
            "",
            &[],
            text(chose("-compress-mode=none", "the command line")),
        ),
        ("13.5.37", &["-c", "a.cu", "--concat"], &[], "", &[], text(chose("--concat", "the command line"))),
        (
            "13.0.88",
            &["-c", "a.cu", "-Xfatbin=-compress-all"],
            &[],
            "",
            &[],
            text(chose("-Xfatbin=-compress-all", "the command line")),
        ),
        (
            "12.4.131",
            &["-c", "a.cu", "-Xfatbin", "-compress-all"],
            &[],
            "",
            &[],
            text(chose("-Xfatbin=-compress-all", "the command line")),
        ),
        (
            "12.4.131",
            &["-c", "a.cu", "--fatbin-options=-g,--compress=false"],
            &[],
            "",
            &[],
            text(chose("--fatbin-options=-g,--compress=false", "the command line")),
        ),
        (
            "13.0.88",
            &["-c", "a.cu"],
            &[("NVCC_PREPEND_FLAGS", "-Xfatbin=-compress-all")],
            "",
            &[],
            text(chose("-Xfatbin=-compress-all", "$NVCC_PREPEND_FLAGS")),
        ),
        (
            "13.0.88",
            &["-c", "a.cu"],
            &[("NVCC_APPEND_FLAGS", "-no-compress")],
            "",
            &[],
            text(chose("-no-compress", "$NVCC_APPEND_FLAGS")),
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
            text(TurnedOff { origin: "/etc/nvcc.toml".into() }),
        ),
        ("13.0.88", &["-c", "a.cu"], &[], "[gpu]\ncompress-fatbin = true", SIZE, String::new()),
        ("13.0.88", &["-c", "a.cu"], &[], "cuda-version = \"12.4\"", ALL, String::new()),
        // A release before the table: nothing, and a note.
        ("10.2.89", &["-c", "a.cu"], &[], "", &[], text(NotInTable { release: "10.2".parse().unwrap() })),
    ];
    for (nvcc, args, env, cfg, want, note) in &rows {
        let probes = FakeProbes::debian(nvcc);
        let p = plan_with(args, env, cfg, &probes).unwrap_or_else(|e| panic!("{args:?}: {e}"));
        assert_eq!(compression(&p), *want, "nvcc {nvcc} {args:?} {env:?} {cfg:?}: {:?}", p.notes);
        if want.is_empty() {
            // The one note the fatbin step (or, for a query, the planner) gives, exactly.
            let notes: Vec<String> =
                p.notes.iter().filter(|n| matches!(n.step, "fatbin" | "plan")).map(|n| n.to_string()).collect();
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
    let why = p.before[1].why.get::<fatbin::Reason>();
    assert_eq!(why, Some(&fatbin::Reason::Smallest { release: Version::major_minor(13, 0) }));
    assert!(p.before[1].why.to_string().contains("compress-fatbin"), "{}", p.before[1].why);
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
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    let p = plan_with(&["a.cu", "-o", "a"], &[], cfg, &probes).unwrap();
    assert_eq!(added(&p), ["-ccbin=/usr/bin/g++-11"]);
    let [warning] = &p.warnings[..] else { panic!("{:?}", p.warnings) };
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
        assert!(p.warnings.is_empty(), "{env:?}: {:?}", p.warnings);
    }
}

#[test]
fn a_given_compiler_out_of_range_warns_but_is_kept() {
    let probes = FakeProbes::debian("11.8.89");
    let p = plan_with(&["-ccbin=g++-12", "-c", "a.cu"], &[], "", &probes).unwrap();
    assert!(added(&p).is_empty());
    assert_eq!(p.warnings.len(), 1);
    let Some(host_compiler::Note::GivenRejected { release, compiler, how, .. }) = p.warnings[0].get() else {
        panic!("{:?}", p.warnings)
    };
    assert_eq!(release.to_string(), "11.8");
    assert_eq!(compiler.to_string(), "/usr/bin/g++-12 (gcc 12.2.0)");
    assert_eq!(how, "`-ccbin` in the command line");
    assert!(
        p.warnings[0].to_string().contains("nvcc 11.8 accepts GCC up to 11 and Clang up to 14"),
        "{}",
        p.warnings[0]
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
    assert_eq!(p.warnings, [Said::new("facts", unknown)]);
    assert!(p.warnings[0].to_string().contains("set `cuda-version`"), "{}", p.warnings[0]);
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
        assert_eq!(lto(&p), *warned, "{args:?} {env:?}: {:?}", p.warnings);
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
    assert!(lto(&p), "{:?}", p.warnings);
}

#[test]
fn unclear_command_lines_get_a_note_and_nothing_else() {
    let p = plan_with(&["-c", "a.cu", "-ccbin"], &[], "", &FakeProbes::debian("11.8.89")).unwrap();
    assert!(p.changes_nothing());
    assert_eq!(p.notes.len(), 1);
}

mod gpu {
    use super::*;

    const CAPS: &str = "[gpu]\ncapabilities = [\"9.0a\", \"8.6\"]\nforward-compat = true\n";
    const OURS: [&str; 3] = [
        "-gencode=arch=compute_86,code=sm_86",
        "-gencode=arch=compute_90a,code=sm_90a",
        "-gencode=arch=compute_90,code=compute_90",
    ];

    fn with_policy(policy: &str) -> String {
        format!("{CAPS}arch-flags = \"{policy}\"\n")
    }

    /// The gencode flags the plan adds, and the whole command nvcc gets.
    fn run(args: &[&str], env: &[(&str, &str)], cfg: &str) -> (Plan, Vec<String>) {
        let i = inv(args, env);
        let probes = FakeProbes::debian("13.0.88");
        let p = plan_for(&i, &config(cfg), &probes, 0).unwrap_or_else(|e| panic!("{args:?}: {e}"));
        let command = p.command(&i).iter().map(|a| a.to_string_lossy().into_owned()).collect();
        (p, command)
    }

    fn gencodes(p: &Plan) -> Vec<String> {
        added(p).into_iter().filter(|a| a.starts_with("-gencode")).collect()
    }

    #[test]
    fn no_capabilities_add_nothing() {
        let (p, _) = run(&["-c", "a.cu"], &[], "");
        assert!(gencodes(&p).is_empty());
    }

    #[test]
    fn capabilities_are_added_before_the_users_arguments_on_every_non_query_call() {
        for args in [
            &["-c", "a.cu"][..],
            &["a.cu", "-o", "a"],
            &["a.o", "b.o", "-o", "a"],
            &["-dlink", "a.o", "-o", "dl.o"],
            &["-dc", "a.cu"],
            &["-E", "a.cu"],
            &["-fatbin", "a.cu"],
            &["-lib", "a.o", "-o", "liba.a"],
        ] {
            let (p, command) = run(args, &[], CAPS);
            assert_eq!(gencodes(&p), OURS, "{args:?}");
            assert_eq!(command[command.len() - args.len()..], *args, "{args:?}: the user's come last, unchanged");
            assert!(command[..command.len() - args.len()].iter().any(|a| a == OURS[0]));
        }
        let (p, _) = run(&["--version"], &[], CAPS);
        assert!(gencodes(&p).is_empty());
    }

    #[test]
    fn respect_adds_nothing_when_any_target_is_given_in_any_spelling_or_channel() {
        type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)]);
        let cases: &[Case] = &[
            (&["-arch=sm_80", "-c", "a.cu"], &[]),
            (&["-arch", "native", "-c", "a.cu"], &[]),
            (&["--gpu-architecture=all-major", "-c", "a.cu"], &[]),
            (&["-code=sm_80", "-c", "a.cu"], &[]),
            (&["--gpu-code", "sm_80", "-c", "a.cu"], &[]),
            (&["-gencode", "arch=compute_80,code=sm_80", "-c", "a.cu"], &[]),
            (&["--generate-code=arch=compute_80,code=sm_80", "-c", "a.cu"], &[]),
            (&["-c", "a.cu"], &[("NVCC_PREPEND_FLAGS", "-arch=sm_80")]),
            (&["-c", "a.cu"], &[("NVCC_APPEND_FLAGS", "-gencode arch=compute_80,code=sm_80")]),
        ];
        for (args, env) in cases {
            for cfg in [CAPS.to_string(), with_policy("respect")] {
                let (p, command) = run(args, env, &cfg);
                assert!(gencodes(&p).is_empty(), "{args:?} {env:?}");
                assert!(p.removed.is_empty());
                assert_eq!(command[command.len() - args.len()..], **args);
                assert!(
                    matches!(said::<crate::plan::gpu::Note>(&p)[..], [crate::plan::gpu::Note::Respected { .. }]),
                    "{:?}",
                    p.notes
                );
            }
        }
    }

    #[test]
    fn append_adds_ours_before_and_keeps_theirs() {
        let (p, command) = run(&["-arch=sm_80", "-c", "a.cu"], &[], &with_policy("append"));
        assert_eq!(gencodes(&p), OURS);
        assert!(p.removed.is_empty());
        assert_eq!(command[command.len() - 3..], ["-arch=sm_80", "-c", "a.cu"]);
    }

    #[test]
    fn replace_removes_every_target_from_argv_with_its_value() {
        let args = [
            "-arch",
            "sm_50",
            "-c",
            "--gpu-code=sm_50,compute_50",
            "a.cu",
            "-gencode",
            "arch=compute_70,code=sm_70",
            "--generate-code=arch=compute_75,code=sm_75",
            "-arch=native",
            "-o",
            "a.o",
        ];
        let (p, command) = run(&args, &[], &with_policy("replace"));
        assert_eq!(p.removed.len(), 5);
        let tail: Vec<&str> = command.iter().map(String::as_str).skip_while(|a| !a.starts_with("-gencode")).collect();
        let mut want = OURS.to_vec();
        want.extend(["--compress-mode=size", "-c", "a.cu", "-o", "a.o"]);
        assert_eq!(tail, want);
        assert!(p.removed.iter().all(|r| matches!(r.why.get(), Some(crate::plan::gpu::Reason::Replaced { .. }))));
        assert_eq!(p.removed[0].tokens, ["-arch", "sm_50"]);
    }

    #[test]
    fn replace_rewrites_the_env_channels_for_nvcc_keeping_the_other_tokens_and_their_quotes() {
        let env = [
            ("NVCC_PREPEND_FLAGS", "-DX=\"a b\"  -arch sm_80\t-O2"),
            ("NVCC_APPEND_FLAGS", "-gencode=arch=compute_80,code=sm_80"),
        ];
        let (p, command) = run(&["-c", "a.cu"], &env, &with_policy("replace"));
        assert_eq!(gencodes(&p), OURS);
        let env_of = |name| p.env.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string_lossy().into_owned());
        assert_eq!(env_of("NVCC_PREPEND_FLAGS").as_deref(), Some("-DX=\"a b\" -O2"));
        assert_eq!(env_of("NVCC_APPEND_FLAGS").as_deref(), Some(""));
        assert_eq!(command[command.len() - 2..], ["-c", "a.cu"]);
        // A value split from its option across channels goes with it.
        let (p, command) =
            run(&["sm_80", "-c", "a.cu"], &[("NVCC_PREPEND_FLAGS", "-O2 -arch")], &with_policy("replace"));
        assert_eq!(env_of_plan(&p, "NVCC_PREPEND_FLAGS").as_deref(), Some("-O2"));
        assert_eq!(command[command.len() - 2..], ["-c", "a.cu"]);
    }

    fn env_of_plan(p: &Plan, name: &str) -> Option<String> {
        p.env.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string_lossy().into_owned())
    }

    fn in_dir(dir: &Path, args: &[&str], env: &[(&str, &str)], cfg: &str) -> Result<(Plan, Vec<String>)> {
        let ctx = Context { env: env.iter().copied().collect(), cwd: dir.to_path_buf(), ..Context::default() };
        let i = Invocation::parse_args(&ctx, args.iter().map(OsString::from).collect()).unwrap();
        let probes = FakeProbes::debian("13.0.88");
        let p = plan_for(&i, &config(cfg), &probes, 0)?;
        let command = p.command(&i).iter().map(|a| a.to_string_lossy().into_owned()).collect();
        Ok((p, command))
    }

    #[test]
    fn replace_rewrites_options_files_that_lose_tokens_into_a_new_one_and_leaves_others_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("outer.opt"), "-DOUTER \"-DSP=a b\" -optf inner.opt,clean.opt -O2").unwrap();
        std::fs::write(dir.path().join("inner.opt"), "-arch=sm_70 -DINNER").unwrap();
        std::fs::write(dir.path().join("clean.opt"), "-DCLEAN").unwrap();
        std::fs::write(dir.path().join("other.opt"), "-DOTHER").unwrap();
        let args = ["-optf", "outer.opt,other.opt", "-c", "--options-file=other.opt", "a.cu"];
        let (p, command) = in_dir(dir.path(), &args, &[], &with_policy("replace")).unwrap();
        assert_eq!(p.removed.len(), 1);
        // Issue 12: the remaining words go to a new options file (argv stays short, and nvcc splits them by its
        // options-file rules), one per line in double quotes; files that lose nothing stay named.
        assert_eq!(p.written.len(), 1);
        let written = &p.written[0];
        assert_eq!(
            String::from_utf8_lossy(&written.contents),
            "\"-DOUTER\"\n\"-DSP=a b\"\n\"-DINNER\"\n\"-DCLEAN\"\n\"-O2\"\n\"-DOTHER\"\n"
        );
        assert!(written.path.starts_with("/scratch") && written.path.extension().unwrap() == "optf");
        // Ours: -ccbin, the -gencode flags, the compression flag.
        let user: Vec<&str> = command.iter().map(String::as_str).skip(OURS.len() + 2).collect();
        let new = written.path.to_str().unwrap();
        assert_eq!(user, ["-optf", new, "-c", "--options-file=other.opt", "a.cu"]);
        // The same contents, the same file: a build reuses it.
        let (again, _) = in_dir(dir.path(), &args, &[], &with_policy("replace")).unwrap();
        assert_eq!(again.written, p.written);
        // Respect: the flag in the file counts as given, nothing changes.
        let (p, command) = in_dir(dir.path(), &args, &[], CAPS).unwrap();
        assert!(gencodes(&p).is_empty() && p.removed.is_empty());
        assert_eq!(command[command.len() - args.len()..], args);
    }

    #[test]
    fn replace_refuses_an_options_file_named_in_an_env_channel() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("t.opt"), "-arch=sm_70").unwrap();
        let err = in_dir(dir.path(), &["-c", "a.cu"], &[("NVCC_APPEND_FLAGS", "-optf t.opt")], &with_policy("replace"))
            .unwrap_err();
        assert_eq!(err.kind, ErrorKind::Request);
        assert!(err.message.contains("t.opt") && err.message.contains("$NVCC_APPEND_FLAGS"), "{err}");
        assert!(err.help.unwrap().contains("command line"));
        // Without a target inside, the same file is no problem.
        std::fs::write(dir.path().join("t.opt"), "-DX").unwrap();
        let (p, _) =
            in_dir(dir.path(), &["-c", "a.cu"], &[("NVCC_APPEND_FLAGS", "-optf t.opt")], &with_policy("replace"))
                .unwrap();
        assert_eq!(gencodes(&p), OURS);
    }

    #[test]
    fn device_lto_and_single_output_phases_keep_their_targets() {
        // (arguments, the code of the note or warning)
        let rows: &[(&[&str], &str)] = &[
            (&["-dlto", "-E", "a.cu"], "lto-other-phase"),
            (&["-dlto", "-arch=sm_80", "-ltoir", "a.cu"], "lto-other-phase"),
            (&["-ptx", "-arch=sm_80", "a.cu"], "one-file"),
            (&["-cubin", "a.cu"], "one-file-builds-default"),
            (&["--optix-ir", "a.cu"], "one-file-builds-default"),
        ];
        for (args, code) in rows {
            let (p, command) = run(args, &[], &with_policy("replace"));
            assert!(gencodes(&p).is_empty() && p.removed.is_empty(), "{args:?}");
            assert_eq!(command[command.len() - args.len()..], **args);
            let gpu: Vec<String> =
                p.notes.iter().chain(&p.warnings).filter(|n| n.step == "gpu").map(Said::code).collect();
            assert_eq!(gpu, [*code], "{args:?}");
            // Issue 12: with no target of its own, nvcc falls back to its default, and the user hears it.
            let own_target = args.iter().any(|a| a.starts_with("-arch")) || args.contains(&"-dlto");
            let warned = p.warnings.iter().any(|w| w.to_string().contains("nvcc builds its default, compute_75"));
            assert_eq!(warned, !own_target, "{args:?}: {:?}", p.warnings);
        }
        // One target fits them.
        let one = "[gpu]\ncapabilities = [\"8.6\"]\narch-flags = \"replace\"\n";
        let (p, _) = run(&["-cubin", "-arch=sm_80", "a.cu"], &[], one);
        assert_eq!(gencodes(&p), ["-gencode=arch=compute_86,code=sm_86"]);
        let one_fc = format!("{one}forward-compat = true\n");
        let (p, _) = run(&["-ptx", "a.cu"], &[], &one_fc);
        assert_eq!(gencodes(&p).len(), 2);
        let (p, _) = run(&["-cubin", "a.cu"], &[], &one_fc);
        assert!(gencodes(&p).is_empty());
    }

    #[test]
    fn device_lto_takes_the_form_its_phase_needs() {
        const LTO: [&str; 3] = [
            "-gencode=arch=compute_86,code=lto_86",
            "-gencode=arch=compute_90a,code=lto_90a",
            "-gencode=arch=compute_90,code=compute_90",
        ];
        const LINK: [&str; 2] = ["-gencode=arch=compute_86,code=sm_86", "-gencode=arch=compute_90a,code=sm_90a"];
        let one = "[gpu]\ncapabilities = [\"8.6\"]\n";
        // (arguments, config, added, removed tokens, in a note or warning)
        type Row<'a> = (&'a [&'a str], String, &'a [&'a str], &'a [&'a str], &'a str);
        let rows: &[Row] = &[
            // Compiling: intermediates, and the flag nvcc would refuse next to them out.
            (&["-dlto", "-c", "a.cu"], CAPS.into(), &LTO, &["-dlto"], ""),
            (&["-lto", "-dc", "a.cu", "-o", "a.o"], CAPS.into(), &LTO, &["-lto"], ""),
            (&["--dlink-time-opt", "-lib", "a.cu"], CAPS.into(), &LTO, &["--dlink-time-opt"], ""),
            // Linking: machine code from the intermediates, the flag kept (nvlink needs it).
            (&["-dlink", "-dlto", "a.o", "b.o", "-o", "d.o"], CAPS.into(), &LINK, &[], ""),
            (&["-dlto", "a.o", "b.o", "-o", "prog"], CAPS.into(), &LINK, &[], ""),
            // One call that compiles and links: nvcc's one-target form, or a warning.
            (&["-dlto", "a.cu", "-o", "prog"], one.into(), &["-arch=sm_86"], &[], ""),
            (&["-dlto", "a.cu", "-o", "prog"], CAPS.into(), &[], &[], "lto-one-call-several"),
            // Targets of the user's own, under each policy.
            (&["-dlto", "-arch=sm_80", "-c", "a.cu"], with_policy("respect"), &[], &[], "respected"),
            (&["-dlto", "-arch=sm_80", "-c", "a.cu"], with_policy("append"), &[], &[], "lto-append-refused"),
            (&["-dlto", "-arch=sm_80", "-c", "a.cu"], with_policy("replace"), &LTO, &["-arch=sm_80", "-dlto"], ""),
            (&["-dlink", "-dlto", "-arch=sm_80", "a.o"], with_policy("replace"), &LINK, &["-arch=sm_80"], ""),
            (&["-dlink", "-dlto", "-arch=sm_80", "a.o"], with_policy("append"), &LINK, &[], ""),
            // `lto_` codes given without the flag ask for device LTO too, when compiling.
            (&["-gencode=arch=compute_80,code=lto_80", "-c", "a.cu"], with_policy("append"), &LTO, &[], ""),
            (
                &["-gencode=arch=compute_80,code=lto_80", "-c", "a.cu"],
                with_policy("replace"),
                &LTO,
                &["-gencode=arch=compute_80,code=lto_80"],
                "",
            ),
        ];
        let targets = |p: &Plan| -> Vec<String> { added(p).into_iter().filter(|a| !a.starts_with("-ccbin")).collect() };
        for (args, cfg, want_added, want_removed, said) in rows {
            let (p, command) = run(args, &[], cfg);
            assert_eq!(targets(&p), *want_added, "{args:?} {cfg}");
            let removed: Vec<String> =
                p.removed.iter().flat_map(|r| r.tokens.iter().map(|t| t.to_string_lossy().into_owned())).collect();
            assert_eq!(removed, *want_removed, "{args:?} {cfg}");
            // What is not removed reaches nvcc in order, after the additions.
            let kept: Vec<&str> = args.iter().copied().filter(|a| !want_removed.contains(a)).collect();
            assert_eq!(command[command.len() - kept.len()..], kept, "{args:?} {cfg}");
            if !said.is_empty() {
                let codes: Vec<String> = p.notes.iter().chain(&p.warnings).map(Said::code).collect();
                assert!(codes.iter().any(|c| c == said), "{args:?}: {codes:?}");
            }
            if !want_removed.is_empty() {
                assert!(p.removed.iter().all(|r| r.why.step == "gpu"));
            }
        }
        // The flag in an environment channel is taken out of that channel, the rest of it kept.
        let (p, _) = run(&["-c", "a.cu"], &[("NVCC_APPEND_FLAGS", "-DX -dlto -DY")], CAPS);
        assert_eq!(targets(&p), LTO);
        assert!(p.env.contains(&("NVCC_APPEND_FLAGS", OsString::from("-DX -DY"))), "{:?}", p.env);
    }

    #[test]
    fn the_release_in_use_judges_the_capabilities() {
        let probes = FakeProbes::debian("11.8.89");
        let err = plan_with(&["-c", "a.cu"], &[], CAPS, &probes).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Request);
        assert!(err.message.contains("nvcc 11.8") && err.message.contains("9.0a needs nvcc 12.0"), "{err}");
        // Even when nothing would be added: the configuration is wrong for the whole build.
        assert!(plan_with(&["-arch=sm_80", "-c", "a.cu"], &[], CAPS, &probes).is_err());
        // cuda-version wins over the probe.
        let err =
            plan_with(&["-c", "a.cu"], &[], &format!("cuda-version = \"11.8\"\n{CAPS}"), &FakeProbes::debian("13.0"))
                .unwrap_err();
        assert!(err.message.contains("nvcc 11.8"), "{err}");
        // Unknown release: the table alone, said so (once, by the facts).
        let mut probes = FakeProbes::debian("13.0");
        probes.nvcc = Err("no version.json".into());
        let p = plan_with(&["-c", "a.cu"], &[], CAPS, &probes).unwrap();
        assert_eq!(gencodes(&p), OURS);
        assert!(p.warnings[0].to_string().contains("checked only against the tables"), "{:?}", p.warnings);
    }

    #[test]
    fn jetson_capabilities_follow_the_target() {
        let orin = "[gpu]\ncapabilities = [\"8.7\"]\n";
        let probes = FakeProbes::debian("12.4.131");
        let err = plan_with(&["-c", "a.cu"], &[], orin, &probes).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Request);
        assert!(err.message.contains("8.7 is Jetson Orin"), "{err}");
        assert!(err.help.as_deref().unwrap().contains("platform = \"jetson\""), "{err}");
        let jetson = format!("{orin}[target]\nsystem = \"aarch64-linux\"\nplatform = \"jetson\"\n");
        let probes = probes.with_files(&["/cuda/targets/aarch64-linux"]);
        let p = plan_with(&["-c", "a.cu"], &[], &jetson, &probes).unwrap();
        assert_eq!(gencodes(&p), ["-gencode=arch=compute_87,code=sm_87"]);
    }
}

/// Cross builds: the target's compiler, target files and sysroot, and every way they can be missing or wrong.
mod cross {
    use super::*;

    const SBSA: &str = "[target]\nsystem = \"aarch64-linux\"\n";
    const PPC: &str = "[target]\nsystem = \"powerpc64le-linux\"\n";

    fn toolkit_with(dirs: &[&str]) -> Vec<String> {
        dirs.iter().map(|d| format!("/cuda/targets/{d}")).collect()
    }

    fn probes(nvcc: &str, targets: &[&str]) -> FakeProbes {
        let files = toolkit_with(targets);
        FakeProbes::debian(nvcc).with_files(&files.iter().map(String::as_str).collect::<Vec<_>>())
    }

    #[test]
    fn cross_rows() {
        // (nvcc, target dirs in the toolkit, command line, config, what is added)
        type Row<'a> = (&'a str, &'a [&'a str], &'a [&'a str], &'a str, &'a [&'a str]);
        let rows: &[Row] = &[
            // The target's stdenv compiler (TRIPLE-g++, GCC 12) is accepted: it and the toolkit's target directory.
            (
                "13.0.88",
                &["sbsa-linux"],
                &["-c", "a.cu"],
                SBSA,
                &["-ccbin=/usr/bin/aarch64-linux-gnu-g++", "--target-directory=sbsa-linux"],
            ),
            // GNU triples name the system too; Jetson gets its own directory even when sbsa-linux is there.
            (
                "12.4.131",
                &["sbsa-linux", "aarch64-linux"],
                &["-c", "a.cu"],
                "[target]\nsystem = \"aarch64-unknown-linux-gnu\"\nplatform = \"jetson\"\n",
                &["-ccbin=/usr/bin/aarch64-linux-gnu-g++", "--target-directory=aarch64-linux"],
            ),
            // nvcc 11.8 takes GCC up to 11: the cross GCC 11, with the cross GCC 12's libstdc++ on links.
            (
                "11.8.89",
                &["ppc64le-linux"],
                &["a.cu", "-o", "a"],
                PPC,
                &[
                    "-ccbin=/usr/bin/powerpc64le-linux-gnu-g++-11",
                    "-L/usr/lib/gcc-cross/powerpc64le-linux-gnu/12",
                    "-Xlinker=-rpath,/usr/powerpc64le-linux-gnu/lib",
                    "--target-directory=ppc64le-linux",
                ],
            ),
            // Issue 10: a native stdenv table that records its libstdc++ is the native build's; a cross link takes
            // the target's stdenv compiler's, never a native path.
            (
                "11.8.89",
                &["ppc64le-linux"],
                &["a.cu", "-o", "a"],
                "[host-compiler]\nstdenv = { path = \"/usr/bin/g++-12\", family = \"gcc\", version = \"12.2.0\", target = \"x86_64-linux-gnu\", gcc-install-dir = \"/native/gcc/12\", libstdcxx-dir = \"/native/lib\" }\n[target]\nsystem = \"powerpc64le-linux\"\n",
                &[
                    "-ccbin=/usr/bin/powerpc64le-linux-gnu-g++-11",
                    "-L/usr/lib/gcc-cross/powerpc64le-linux-gnu/12",
                    "-Xlinker=-rpath,/usr/powerpc64le-linux-gnu/lib",
                    "--target-directory=ppc64le-linux",
                ],
            ),
            // ... while the target's own recorded table is used as it is, with nothing probed.
            (
                "11.8.89",
                &["ppc64le-linux"],
                &["a.cu", "-o", "a"],
                "[target]\nsystem = \"powerpc64le-linux\"\n[target.host-compiler]\nstdenv = { path = \"/usr/bin/powerpc64le-linux-gnu-g++\", family = \"gcc\", version = \"12.2.0\", target = \"powerpc64le-linux-gnu\", gcc-install-dir = \"/t/gcc/12\", libstdcxx-dir = \"/t/lib\" }\n",
                &[
                    "-ccbin=/usr/bin/powerpc64le-linux-gnu-g++-11",
                    "-L/t/gcc/12",
                    "-Xlinker=-rpath,/t/lib",
                    "--target-directory=ppc64le-linux",
                ],
            ),
            // The config's target compilers are used; `[host-compiler]` is for native builds only.
            (
                "13.0.88",
                &["sbsa-linux"],
                &["-c", "a.cu"],
                "[host-compiler]\nstdenv = \"/usr/bin/clang++-19\"\n[target]\nsystem = \"aarch64-linux\"\n[target.host-compiler]\nstdenv = \"aarch64-linux-gnu-g++-11\"\n",
                &["-ccbin=/usr/bin/aarch64-linux-gnu-g++-11", "--target-directory=sbsa-linux"],
            ),
            // The user's own target directory: nothing about target files is added.
            (
                "13.0.88",
                &[],
                &["-c", "a.cu", "-target-dir", "sbsa-linux"],
                SBSA,
                &["-ccbin=/usr/bin/aarch64-linux-gnu-g++"],
            ),
            // The user's own cross compiler: used, and the target directory still added.
            (
                "13.0.88",
                &["sbsa-linux"],
                &["-ccbin", "aarch64-linux-gnu-g++-12", "-c", "a.cu"],
                SBSA,
                &["--target-directory=sbsa-linux"],
            ),
            // The target of this machine is no cross build.
            ("13.0.88", &[], &["-c", "a.cu"], "[target]\nsystem = \"x86_64-linux\"\n", &["-ccbin=/usr/bin/g++"]),
        ];
        for (nvcc, targets, args, cfg, want) in rows {
            let p = plan_with(args, &[], cfg, &probes(nvcc, targets)).unwrap_or_else(|e| panic!("{args:?} {cfg}: {e}"));
            assert_eq!(added(&p), *want, "nvcc {nvcc}, {args:?}, {cfg} {:?}", p.notes);
        }
    }

    #[test]
    fn a_nix_layout_takes_the_target_files_from_cuda_root() {
        let cfg = format!("{SBSA}cuda-root = \"/store/cudart-aarch64\"\n");
        let probes = FakeProbes::debian("13.0.88")
            .with_files(&["/store/cudart-aarch64/include/cuda_runtime.h", "/store/cudart-aarch64/include/cccl"]);
        let p = plan_with(&["-c", "a.cu"], &[], &cfg, &probes).unwrap();
        assert_eq!(
            added(&p),
            [
                "-ccbin=/usr/bin/aarch64-linux-gnu-g++",
                "-I/store/cudart-aarch64/include",
                "-isystem=/store/cudart-aarch64/include/cccl"
            ]
        );
        let p = plan_with(&["a.o", "-o", "a"], &[], &cfg, &probes).unwrap();
        assert_eq!(
            added(&p)[1..],
            [
                "-I/store/cudart-aarch64/include",
                "-isystem=/store/cudart-aarch64/include/cccl",
                "-L/store/cudart-aarch64/lib"
            ]
        );
        let cross = p.cross.unwrap();
        assert_eq!(cross.files, model::TargetFiles::CudaRoot("/store/cudart-aarch64".into()));
        assert_eq!(cross.platform, "sbsa-linux");
        // A relative cuda-root is the config file's directory's.
        let p = plan_with(
            &["-c", "a.cu"],
            &[],
            &format!("{SBSA}cuda-root = \"rel\"\n"),
            &FakeProbes::debian("12.4.131").with_files(&["/etc/rel/include/cuda_runtime.h"]),
        )
        .unwrap();
        assert_eq!(added(&p)[1..], ["-I/etc/rel/include"]);
        // The toolkit's own directory wins, and the reason says so.
        let probes = probes.with_files(&["/cuda/targets/sbsa-linux"]);
        let p = plan_with(&["-c", "a.cu"], &[], &cfg, &probes).unwrap();
        assert_eq!(added(&p)[1..], ["--target-directory=sbsa-linux"]);
        let Some(crate::plan::cross::Reason::InToolkit { unused_cuda_root, .. }) = p.before[1].why.get() else {
            panic!("{p:?}")
        };
        assert_eq!(unused_cuda_root.as_deref(), Some(Path::new("/store/cudart-aarch64")));
    }

    #[test]
    fn a_sysroot_reaches_every_compile_and_the_linker() {
        let cfg = format!("{SBSA}sysroot = \"/sr\"\n");
        let probes =
            probes("13.0.88", &["sbsa-linux"]).with_files(&["/sr", "/sr/usr/lib/aarch64-linux-gnu", "/sr/lib"]);
        let p = plan_with(&["-c", "a.cu"], &[], &cfg, &probes).unwrap();
        assert_eq!(added(&p)[2..], ["-Xcompiler=--sysroot=/sr"]);
        let p = plan_with(&["a.cu", "-o", "a"], &[], &cfg, &probes).unwrap();
        assert_eq!(
            added(&p)[2..],
            ["-Xcompiler=--sysroot=/sr", "-Xlinker=-rpath-link,/sr/usr/lib/aarch64-linux-gnu:/sr/lib"]
        );
        assert_eq!(p.cross.unwrap().sysroot, Some("/sr".into()));
    }

    #[test]
    fn paths_an_x_list_would_change_are_errors_and_others_pass_byte_for_byte() {
        // A sysroot with a space: the compile's shell and the link would both split it.
        let cfg = format!("{SBSA}sysroot = \"/my root\"\n");
        let with_root = probes("13.0.88", &["sbsa-linux"]).with_files(&["/my root"]);
        let e = plan_with(&["-c", "a.cu"], &[], &cfg, &with_root).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Config);
        assert!(e.message.contains("'/my root'") && e.message.contains("a space"), "{e}");
        assert!(e.help.as_deref().is_some_and(|h| h.contains("symbolic link")), "{e:?}");
        // A CUDA root is given by nvcc's own -I and -L, which nvcc quotes: a space passes.
        let cfg = format!("{SBSA}cuda-root = \"/store/cuda root\"\n");
        let with_cuda = probes("13.0.88", &[]).with_files(&["/store/cuda root/include/cuda_runtime.h"]);
        let p = plan_with(&["a.cu", "-o", "a"], &[], &cfg, &with_cuda).unwrap();
        assert_eq!(added(&p)[1..], ["-I/store/cuda root/include", "-L/store/cuda root/lib"]);
    }

    fn error(
        nvcc: &str,
        targets: &[&str],
        args: &[&str],
        env: &[(&str, &str)],
        cfg: &str,
        probes_: Option<FakeProbes>,
    ) -> crate::error::Error {
        let probes = probes_.unwrap_or_else(|| probes(nvcc, targets));
        let i = inv(args, env);
        let mut loaded = config(cfg);
        crate::config::apply_env(&mut loaded, &i_env(env)).unwrap();
        plan_for(&i, &loaded, &probes, 0).unwrap_err()
    }

    fn i_env(env: &[(&str, &str)]) -> crate::context::Env {
        env.iter().copied().collect()
    }

    #[test]
    fn platforms_a_release_does_not_ship_are_refused() {
        for (nvcc, cfg, words) in [
            ("13.0.88", PPC, &["nvcc 13.0", "ppc64le-linux", "11.0 to 12.4"][..]),
            (
                "12.3.107",
                "[target]\nplatform = \"jetson\"\n",
                &["nvcc 12.3", "aarch64-linux", "11.8 to 12.2, 12.4 to 12.9", "sbsa"],
            ),
            ("13.0.88", "[target]\nplatform = \"jetson\"\n", &["nvcc 13.0", "aarch64-linux"]),
        ] {
            let e = error(nvcc, &["ppc64le-linux", "aarch64-linux"], &["-c", "a.cu"], &[], cfg, None);
            assert_eq!(e.kind, ErrorKind::Request, "{e}");
            let text = format!("{e}");
            for w in words {
                assert!(text.contains(w), "{w:?} not in {text}");
            }
        }
    }

    #[test]
    fn compilers_for_another_machine_are_refused_or_left_out() {
        // A configured target stdenv that builds for x86_64: an error naming it and its machine.
        let cfg = format!("{SBSA}[target.host-compiler]\nstdenv = \"/usr/bin/g++-12\"\n");
        let e = error("13.0.88", &["sbsa-linux"], &["-c", "a.cu"], &[], &cfg, None);
        assert_eq!(e.kind, ErrorKind::HostCompiler);
        assert!(
            e.message.contains("g++-12")
                && e.message.contains("x86_64-linux-gnu")
                && e.message.contains("[target.host-compiler] stdenv"),
            "{e}"
        );
        // The user's native -ccbin for a cross target: the same, naming the flag.
        let e = error("13.0.88", &["sbsa-linux"], &["-ccbin", "g++", "-c", "a.cu"], &[], SBSA, None);
        assert_eq!(e.kind, ErrorKind::HostCompiler);
        assert!(e.message.contains("`-ccbin`") && e.message.contains("sbsa-linux"), "{e}");
        // A recorded entry that says it builds for x86_64 is believed, and left out as a candidate.
        let cfg = format!("{SBSA}[target.host-compiler]\ncandidates = [{{ path = \"/usr/bin/g++-11\", family = \"gcc\", version = \"11.3.0\", target = \"x86_64-linux-gnu\" }}, \"aarch64-linux-gnu-g++-11\"]\n");
        let p = plan_with(&["-c", "a.cu"], &[], &cfg, &probes("11.8.89", &["sbsa-linux"])).unwrap();
        assert_eq!(added(&p)[0], "-ccbin=/usr/bin/aarch64-linux-gnu-g++-11");
        let left_out = said::<host_compiler::Note>(&p);
        assert!(
            matches!(&left_out[..], [host_compiler::Note::CandidateForAnotherMachine { compiler }] if compiler.path == Path::new("/usr/bin/g++-11")),
            "{left_out:?}"
        );
    }

    #[test]
    fn no_cross_compiler_names_what_to_install() {
        let only_native =
            FakeProbes::debian("13.0.88").only(&["g++", "g++-12"]).with_files(&["/cuda/targets/sbsa-linux"]);
        let e = error("13.0.88", &[], &["-c", "a.cu"], &[], SBSA, Some(only_native));
        assert_eq!(e.kind, ErrorKind::HostCompiler);
        assert!(e.message.contains("aarch64-linux-gnu-g++") && e.message.contains("sbsa-linux"), "{e}");
        assert!(e.help.unwrap().contains("g++-aarch64-linux-gnu"));
        // Only GCC 12 cross compilers for nvcc 11.8: the usual range error, with cross names in the help.
        let gcc12 =
            FakeProbes::debian("11.8.89").only(&["aarch64-linux-gnu-g++"]).with_files(&["/cuda/targets/sbsa-linux"]);
        let e = error("11.8.89", &[], &["-c", "a.cu"], &[], SBSA, Some(gcc12));
        assert_eq!(e.kind, ErrorKind::HostCompiler);
        assert!(
            e.message.contains("for sbsa-linux") && e.help.as_deref().unwrap().contains("aarch64-linux-gnu-g++-11"),
            "{e}"
        );
    }

    #[test]
    fn missing_target_files_and_sysroots_say_which_setting_to_fix() {
        let e = error("13.0.88", &[], &["-c", "a.cu"], &[], SBSA, None);
        assert_eq!(e.kind, ErrorKind::Request);
        assert!(e.message.contains("/cuda has no targets/sbsa-linux") && e.message.contains("cuda-root"), "{e}");
        let e = error("13.0.88", &[], &["-c", "a.cu"], &[], &format!("{SBSA}cuda-root = \"/nowhere\"\n"), None);
        assert_eq!(e.kind, ErrorKind::Config);
        assert!(e.message.contains("/nowhere") && e.message.contains("/etc/nvcc.toml"), "{e}");
        // Even when the toolkit's own directory would be used.
        let cfg = format!("{SBSA}cuda-root = \"/nowhere\"\n");
        let e = error("13.0.88", &["sbsa-linux"], &["-c", "a.cu"], &[], &cfg, None);
        assert_eq!(e.kind, ErrorKind::Config, "{e}");
        let e =
            error("13.0.88", &["sbsa-linux"], &["-c", "a.cu"], &[], &format!("{SBSA}sysroot = \"/nosysroot\"\n"), None);
        assert_eq!(e.kind, ErrorKind::Config);
        assert!(e.message.contains("`[target] sysroot`") && e.message.contains("/nosysroot"), "{e}");
        // From the environment: exit 64, naming the variable.
        let e = error("13.0.88", &["sbsa-linux"], &["-c", "a.cu"], &[(vars::TARGET_SYSROOT, "/envroot")], SBSA, None);
        assert_eq!(e.kind, ErrorKind::Environment);
        assert!(e.message.contains("$NVCC_WRAPPER_TARGET_SYSROOT") && e.message.contains("/envroot"), "{e}");
    }
}

/// Issue 12: properties over arbitrary command lines and environment channels (option-like words, values with
/// spaces, quotes, `=`, commas and newlines, empty words, bytes that are not UTF-8).
mod properties {
    use super::*;
    use proptest::prelude::*;
    use std::os::unix::ffi::{OsStrExt, OsStringExt};

    /// Words nvcc's command lines are made of, and arbitrary bytes (no NUL: no argument can hold one).
    fn word() -> impl Strategy<Value = Vec<u8>> {
        let options = prop::sample::select(vec![
            "-c",
            "-o",
            "out.o",
            "-ccbin",
            "-ccbin=g++-11",
            "--compiler-bindir",
            "-arch",
            "-arch=sm_80",
            "sm_86",
            "-gencode",
            "arch=compute_80,code=sm_80",
            "--generate-code=arch=compute_86,code=[sm_86,compute_86]",
            "-code",
            "-Xcompiler",
            "-Wall",
            "-I/usr/include",
            "-DX=\"a b\"",
            "-DY=a,b",
            "--version",
            "-V",
            "--help",
            "--list-gpu-arch",
            "-dlto",
            "-lto",
            "-ptx",
            "-cubin",
            "-E",
            "-dlink",
            "-lib",
            "-allow-unsupported-compiler",
            "--dryrun=x",
            "-target-dir",
            "sbsa-linux",
            "",
            "-",
            "--",
            "a.cu",
            "b.o",
            "x y.cu",
            "-x",
            "cu",
        ]);
        prop_oneof![
            3 => options.prop_map(|s| s.as_bytes().to_vec()),
            1 => prop::collection::vec(1u8..=255, 0..12),
        ]
    }

    fn line() -> impl Strategy<Value = Vec<Vec<u8>>> {
        prop::collection::vec(word(), 0..10)
    }

    /// An environment channel's text: words joined by spaces, tabs or newlines, quotes and all.
    fn channel() -> impl Strategy<Value = Option<Vec<u8>>> {
        prop::option::of(line().prop_map(|words| words.join(&b' ')))
    }

    fn context(prepend: &Option<Vec<u8>>, append: &Option<Vec<u8>>) -> Context {
        let mut env = crate::context::Env::default();
        for (name, value) in [("NVCC_PREPEND_FLAGS", prepend), ("NVCC_APPEND_FLAGS", append)] {
            if let Some(v) = value {
                env.set(name, OsString::from_vec(v.clone()));
            }
        }
        // No options file names a file that exists here.
        Context { env, cwd: "/nonexistent-dir".into(), ..Context::default() }
    }

    fn args(words: &[Vec<u8>]) -> Vec<OsString> {
        words.iter().map(|w| OsString::from_vec(w.clone())).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        #[test]
        fn parsing_and_planning_never_panic_and_the_users_words_reach_nvcc_exactly(
            words in line(), prepend in channel(), append in channel(), policy in 0usize..3
        ) {
            let ctx = context(&prepend, &append);
            let Ok(inv) = Invocation::parse_args(&ctx, args(&words)) else { return Ok(()) };
            let cfg = format!("[gpu]\ncapabilities = [\"8.6\"]\narch-flags = \"{}\"\n", ["respect", "append", "replace"][policy]);
            let probes = FakeProbes::debian("13.0.88");
            let Ok(p) = plan_for(&inv, &config(&cfg), &probes, 0) else { return Ok(()) };
            let command = p.command(&inv);
            let before: usize = p.before.iter().map(|a| a.args.len()).sum();
            let after: usize = p.after.iter().map(|a| a.args.len()).sum();
            // Ours before, theirs in the middle, ours after: the user's words, in order, less only what a
            // `replace` policy removed (options files named in argv are out of this property's reach: none exist).
            let removed: std::collections::HashSet<usize> = p.removed.iter()
                .flat_map(|r| r.positions.iter().filter(|(c, _)| *c == Channel::Argv).map(|&(_, i)| i))
                .collect();
            let kept: Vec<OsString> = args(&words).into_iter().enumerate()
                .filter(|(i, _)| !removed.contains(i)).map(|(_, w)| w).collect();
            prop_assert_eq!(&command[before..command.len() - after], &kept[..]);
            // Only `replace` removes, and device LTO its compile-time flag (which nvcc refuses next to -gencode).
            let lto_flag = |r: &Removal| r.found.spec.role == crate::args::Role::DeviceLto;
            prop_assert!(policy == 2 || p.removed.iter().all(lto_flag), "only replace removes");
            // Planning twice gives the same command and environment.
            let again = plan_for(&inv, &config(&cfg), &probes, 0).unwrap();
            prop_assert_eq!(again.command(&inv), command);
            prop_assert_eq!(again.env, p.env.clone());
            // A query gets nothing added, removed or set but the loop counter.
            if inv.query_only().is_some() {
                prop_assert!(p.changes_nothing());
                prop_assert!(p.env.iter().all(|(n, _)| *n == crate::context::vars::DEPTH));
            }
        }

        #[test]
        fn a_shell_line_of_any_words_gives_back_the_same_words_in_bash(words in prop::collection::vec(prop::collection::vec(1u8..=255, 0..8), 1..5)) {
            let os: Vec<OsString> = args(&words);
            let line = crate::shell::display(os.iter().map(OsString::as_os_str));
            let out = std::process::Command::new("bash")
                .arg("-c")
                .arg(format!("for w in {line}; do printf '%s\\0' \"$w\"; done"))
                .output()
                .unwrap();
            prop_assert!(out.status.success());
            let back: Vec<&[u8]> = out.stdout.split(|&b| b == 0).collect();
            let want: Vec<&[u8]> = os.iter().map(|w| w.as_bytes()).collect();
            prop_assert_eq!(&back[..back.len() - 1], &want[..]);
        }
    }
}

/// Issue 24: a call that writes a dependency file gets the files the wrapper decided from added to it.
mod threads;

mod depfile {
    use super::*;
    use crate::plan::depfile::Note;
    use crate::plan::model::DepfileInputs;

    fn inputs(p: &Plan) -> Option<(Vec<String>, Vec<String>)> {
        let DepfileInputs { depfiles, inputs, .. } = p.depfile.as_ref()?;
        let show = |v: &Vec<PathBuf>| v.iter().map(|p| p.display().to_string()).collect();
        Some((show(depfiles), show(inputs)))
    }

    #[test]
    fn the_config_the_release_file_and_the_chosen_compiler_join_the_dependency_file() {
        let probes = FakeProbes::debian("13.0.88").with_files(&["/cuda/version.json"]);
        let p = plan_with(&["-MD", "-MF", "a.d", "-c", "a.cu", "-o", "a.o"], &[], "", &probes).unwrap();
        let files = ["/etc/nvcc.toml", "/cuda/version.json", "/usr/bin/g++"].map(String::from).to_vec();
        assert_eq!(inputs(&p), Some((vec!["a.d".to_string()], files)));
        assert!(!p.changes_nothing());
        // A release the config states: the config stands for it. A toolkit without version.json: nvcc itself.
        let p = plan_with(&["-MD", "-c", "a.cu"], &[], "cuda-version = \"13.0\"", &probes).unwrap();
        assert_eq!(inputs(&p).unwrap().1, ["/etc/nvcc.toml", "/usr/bin/g++"]);
        let p = plan_with(&["-MD", "-c", "a.cu"], &[], "", &FakeProbes::debian("13.0.88")).unwrap();
        assert_eq!(
            inputs(&p).unwrap(),
            (vec!["a.d".into()], vec!["/etc/nvcc.toml".into(), "/cuda/bin/nvcc".into(), "/usr/bin/g++".into()])
        );
        // The user's own compiler is the user's to track.
        let p = plan_with(&["-ccbin", "g++-12", "-MD", "-c", "a.cu"], &[], "", &probes).unwrap();
        assert_eq!(inputs(&p).unwrap().1, ["/etc/nvcc.toml", "/cuda/version.json"]);
    }

    #[test]
    fn nothing_is_added_without_a_dependency_file_or_when_turned_off() {
        let probes = FakeProbes::debian("13.0.88");
        for args in [&["-c", "a.cu"][..], &["-MF", "a.d", "-c", "a.cu"], &["--version"]] {
            let p = plan_with(args, &[], "", &probes).unwrap();
            assert_eq!(p.depfile, None, "{args:?}");
        }
        let p = plan_with(&["-M", "a.cu"], &[], "", &probes).unwrap();
        assert_eq!((p.depfile.clone(), said::<Note>(&p)), (None, vec![Note::ToStdout]));
        let p = plan_with(&["-MD", "-c", "a.cu"], &[], "depfile-inputs = false", &probes).unwrap();
        assert_eq!(p.depfile, None);
        assert_eq!(said::<Note>(&p), [Note::TurnedOff { origin: "/etc/nvcc.toml".into() }]);
    }
}

mod repro {
    //! The reproducible-builds step: which rows of compat-data/reproducible.toml a call gets, filled how, and what
    //! leaves a row out. nvcc's pid is 42 here (`0000002a`), its TMPDIR /tmp.
    use super::*;
    use crate::compat::Cause;
    use crate::plan::reproducible::{Note, Reason};

    const ON: &str = "reproducible = true\n";

    fn ours(p: &Plan) -> Vec<String> {
        let rows = p.before.iter().filter(|a| a.why.get::<Reason>().is_some());
        rows.flat_map(|a| a.args.iter().map(|x| x.to_string_lossy().into_owned())).collect()
    }

    /// Plan `args` with the step on, nvcc `release`, and ccache installed as /usr/bin/ccache.
    fn run(release: &str, args: &[&str], cfg: &str) -> Plan {
        let probes = FakeProbes::debian(release).with_files(&["/usr/bin/ccache"]);
        plan_with(args, &[], &format!("{ON}{cfg}"), &probes).unwrap()
    }

    #[test]
    fn each_kind_of_call_gets_the_rows_measured_for_it() {
        // (release, call, flags)
        let rows: &[(&str, &[&str], &[&str])] = &[
            (
                "13.0.88",
                &["-c", "a.cu", "-o", "out/a.o"],
                &["-objtemp", "-Xcudafe=--orig_src_path_name=a.cu", "--frandom-seed=out/a.o"],
            ),
            (
                "13.5.37",
                &["-dc", "k.cu", "-o", "k.o"],
                &["-objtemp", "-Xcudafe=--orig_src_path_name=k.cu", "--frandom-seed=k.o"],
            ),
            // 11.8 and 12.4 have no --frandom-seed: the host compiler gets it.
            (
                "12.4.131",
                &["-c", "a.cu", "-o", "a.o"],
                &["-objtemp", "-Xcudafe=--orig_src_path_name=a.cu", "-Xcompiler=-frandom-seed=a.o"],
            ),
            // Compile and link in one: no -objtemp (nvcc takes it only with -c, -dc, -dw); GCC's file symbol
            // gets nvcc's pid mapped away.
            (
                "13.0.88",
                &["a.cu", "-o", "app"],
                &[
                    "-Xcompiler=-ffile-prefix-map=/tmp/tmpxft_0000002a_=tmpxft_",
                    "-Xcudafe=--orig_src_path_name=a.cu",
                    "--frandom-seed=app",
                ],
            ),
            ("13.0.88", &["-lib", "a.o", "b.o", "-o", "libx.a"], &["-Xarchive=-D"]),
            ("13.0.88", &["-ptx", "-arch=sm_86", "a.cu"], &["-Xcudafe=--orig_src_path_name=a.cu"]),
            // No row for these.
            ("13.0.88", &["-dlink", "a.o", "-o", "d.o"], &[]),
            ("13.0.88", &["a.o", "-o", "app"], &[]),
            ("13.0.88", &["-E", "a.cu"], &[]),
            // Several sources: no module-id flag (both would share one id), no seed (no one output to name).
            ("13.0.88", &["-c", "a.cu", "b.cu"], &["-objtemp"]),
        ];
        for (release, args, want) in rows {
            let p = run(release, args, "");
            assert_eq!(ours(&p), *want, "{release} {args:?}");
            let given: Vec<OsString> = args.iter().map(OsString::from).collect();
            assert!(p.command(&inv(args, &[])).ends_with(&given), "{args:?}: the user's arguments come last");
        }
    }

    #[test]
    fn releases_and_compilers_not_measured_get_nothing_and_a_note() {
        for release in ["12.9.86", "13.6.0", "11.7.64"] {
            let p = run(release, &["-c", "a.cu", "-o", "a.o"], "");
            assert!(ours(&p).is_empty(), "{release}");
            let release = release.parse::<Version>().unwrap().release();
            assert!(said::<Note>(&p).contains(&Note::NotMeasured { release }), "{:?}", said::<Note>(&p));
        }
        // Clang: no pid map (it does nothing there), and the limit is said.
        let p = run("13.0.88", &["-ccbin", "clang++-19", "a.cu", "-o", "app"], "");
        assert_eq!(ours(&p), ["-Xcudafe=--orig_src_path_name=a.cu", "--frandom-seed=app"]);
        assert!(said::<Note>(&p).iter().any(|n| matches!(n, Note::Limit { cause: Cause::ClangFileSymbol, .. })));
        // A compiler that cannot be told: only the rows measured with both families.
        let p = run("13.0.88", &["-ccbin", "/opt/mystery/c++", "a.cu", "-o", "app"], "");
        assert_eq!(ours(&p), ["-Xcudafe=--orig_src_path_name=a.cu", "--frandom-seed=app"]);
    }

    #[test]
    fn the_users_own_choices_win() {
        let cases: &[(&[&str], &str, &str)] = &[
            (&["--keep", "-c", "a.cu", "-o", "a.o"], "-objtemp", "`--keep` in the command line"),
            (&["-keep-dir", "kd", "-c", "a.cu", "-o", "a.o"], "-objtemp", "`-keep-dir kd` in the command line"),
            (&["-objtemp", "-c", "a.cu", "-o", "a.o"], "-objtemp", "`-objtemp` in the command line"),
            (&["--frandom-seed=x", "-c", "a.cu", "-o", "a.o"], "--frandom-seed={output}", "`--frandom-seed x`"),
            (
                &["-Xcompiler", "-O2,-frandom-seed=s", "-c", "a.cu", "-o", "a.o"],
                "--frandom-seed={output}",
                "-Xcompiler",
            ),
            (
                &["-Xcudafe", "--orig_src_path_name=/src/a.cu", "-c", "a.cu", "-o", "a.o"],
                "-Xcudafe=--orig_src_path_name={input}",
                "-Xcudafe",
            ),
        ];
        for (args, flag, option) in cases {
            let p = run("13.0.88", args, "");
            let stem = flag.split('{').next().unwrap();
            assert!(!ours(&p).iter().any(|f| f.starts_with(stem)), "{args:?}: {:?}", ours(&p));
            let notes = said::<Note>(&p);
            assert!(
                notes
                    .iter()
                    .any(|n| matches!(n, Note::UsersOwn { flag: f, option: o } if f == flag && o.contains(option))),
                "{args:?}: {notes:?}"
            );
            // The other rows still apply.
            assert!(!ours(&p).is_empty(), "{args:?}");
        }
    }

    #[test]
    fn the_pid_is_named_only_when_nvcc_will_have_the_wrappers() {
        let args = ["a.cu", "-o", "app"];
        let map = |p: &Plan| ours(p).iter().any(|f| f.contains("tmpxft_"));
        assert!(map(&run("13.0.88", &args, "")));
        let p = run("13.0.88", &args, "launcher = \"ccache\"\n");
        assert!(!map(&p));
        assert!(said::<Note>(&p).iter().any(|n| matches!(n, Note::PidUnknown { why, .. } if why.contains("launcher"))));
        let p = run("13.0.88", &["-MD", "a.cu", "-o", "app"], "");
        assert!(!map(&p));
        assert!(said::<Note>(&p)
            .iter()
            .any(|n| matches!(n, Note::PidUnknown { why, .. } if why.contains("dependency"))));
        // Behind a launcher the other rows stay: they name nothing of the process.
        assert!(
            ours(&run("13.0.88", &["-c", "a.cu", "-o", "a.o"], "launcher = \"ccache\"\n")).contains(&"-objtemp".into())
        );
        // nvcc's TMPDIR is the one it will see.
        let i = inv(&args, &[]);
        let probes = FakeProbes::debian("13.0.88");
        let mut p = plan_for(&i, &config(ON), &probes, 0).unwrap();
        assert!(ours(&p)[0].contains("/tmp/tmpxft_0000002a_"), "{:?}", ours(&p));
        p = plan(Inputs {
            invocation: &i,
            config: &config(ON).config,
            compat: &Compat::built_in(),
            probes: &probes,
            nvcc: nvcc(),
            config_file: None,
            depth: 0,
            scratch: Path::new("/scratch"),
            nvcc_process: &NvccProcess {
                pid: 0xbeef,
                tmpdir: "/build/tmp".into(),
                given_bytes: 4096,
                arg_max: 2 << 20,
                nix_build: false,
            },
            jobserver: &JobSlots::None,
        })
        .unwrap();
        assert_eq!(ours(&p)[0], "-Xcompiler=-ffile-prefix-map=/build/tmp/tmpxft_0000beef_=tmpxft_");
    }

    #[test]
    fn a_value_nvcc_would_split_leaves_its_flag_out() {
        for (args, flag) in [
            (&["-c", "a b.cu", "-o", "a.o"][..], "-Xcudafe=--orig_src_path_name={input}"),
            (&["-c", "a.cu", "-o", "my obj.o"], "--frandom-seed={output}"),
        ] {
            let p = run("13.0.88", args, "");
            let notes = said::<Note>(&p);
            assert!(notes.iter().any(|n| matches!(n, Note::NoValue { flag: f, .. } if f == flag)), "{notes:?}");
            assert!(ours(&p).contains(&"-objtemp".to_string()));
        }
    }

    #[test]
    fn turned_off_by_the_key_or_the_variable_it_adds_nothing_and_says_so() {
        let probes = FakeProbes::debian("13.0.88");
        let p = plan_with(&["-c", "a.cu", "-o", "a.o"], &[], "reproducible = false", &probes).unwrap();
        assert!(ours(&p).is_empty());
        assert_eq!(said::<Note>(&p), [Note::TurnedOff { origin: "/etc/nvcc.toml".into() }]);
        let mut off = config(ON);
        crate::config::apply_env(&mut off, &[(vars::REPRODUCIBLE, "0")].into_iter().collect()).unwrap();
        let i = inv(&["-c", "a.cu"], &[]);
        let p = plan_for(&i, &off, &probes, 0).unwrap();
        assert_eq!(said::<Note>(&p), [Note::TurnedOff { origin: "$NVCC_WRAPPER_REPRODUCIBLE".into() }]);
        // Without a config, it is on.
        let p = plan_for(&i, &Loaded::default(), &probes, 0).unwrap();
        assert!(ours(&p).contains(&"-objtemp".to_string()));
    }

    #[test]
    fn objtemp_is_left_out_where_it_would_change_how_the_call_ends() {
        use crate::probe::system::OutputPlace;
        // Issue 30, item 6, as measured with nvcc 11.8, 12.4 and 13.5: (args, the note's reason).
        let rows: &[(&[&str], &str)] = &[
            (&["-c", "k.cu", "-o", "q\"uote.o"], "the output 'q\"uote.o' holds `\"`"),
            (&["-c", "k.cu", "-o", "a,b.o"], "the output a,b.o holds `,`"),
            (&["-c", "k.cu", "-o", "a$$b.o"], "the output 'a$$b.o' holds `$`"),
            (&["-c", "k.cu", "-o", "a\nb.o"], "holds a newline"),
            (&["-c", "k.cu", "-o", "-a.o"], "the output -a.o starts with `-`"),
            (&["-c", "k\"x.cu", "-o", "k.o"], "the input 'k\"x.cu' holds `\"`"),
            (&["-c", "k.cu", "-o", "/dev/null"], "the output /dev/null is a character device"),
            (&["-c", "k.cu", "-o", "ro/k.o"], "the output ro/k.o is in a directory this user cannot add files to"),
        ];
        let mut probes = FakeProbes::debian("13.5.37");
        probes.unusable.insert("/dev/null".into(), OutputPlace::NotRegular("a character device"));
        probes.unusable.insert("ro/k.o".into(), OutputPlace::DirNotWritable);
        for (args, why) in rows {
            let p = plan_with(args, &[], ON, &probes).unwrap();
            assert!(!ours(&p).contains(&"-objtemp".to_string()), "{args:?}");
            let notes: Vec<String> = said::<Note>(&p)
                .into_iter()
                .filter(|n| matches!(n, Note::ObjtempUnsafe { .. }))
                .map(|n| n.to_string())
                .collect();
            assert!(notes.len() == 1 && notes[0].contains(why), "{args:?}: {notes:?}");
        }
        // A long output name: 227 bytes is the most the longest suffix leaves room for.
        let ok = format!("{}.o", "o".repeat(225));
        let long = format!("{}.o", "o".repeat(226));
        assert!(ours(&plan_with(&["-c", "k.cu", "-o", &ok], &[], ON, &probes).unwrap()).contains(&"-objtemp".into()));
        assert!(!ours(&plan_with(&["-c", "k.cu", "-o", &long], &[], ON, &probes).unwrap()).contains(&"-objtemp".into()));
        // Bytes nvcc's shell commands take within their quotes keep it: a space, a quote, `#`, `:`.
        for output in ["my obj.o", "o'brien.o", "a#b.o", "a:b.o", "\u{e9}.o"] {
            let p = plan_with(&["-c", "k.cu", "-o", output], &[], ON, &probes).unwrap();
            assert!(ours(&p).contains(&"-objtemp".to_string()), "{output}");
        }
    }

    #[test]
    fn at_the_kernels_argument_limit_nothing_is_added() {
        // Issue 30, item 9: 620 `-D` flags of 200 bytes leave nvcc about 4 KiB of the 128 KiB that one string of its
        // children's may hold; the flags would take more (`-objtemp` names the 200-byte output six times).
        let defines: Vec<String> = (0..620).map(|i| format!("-DX{i:04}={}", "v".repeat(193))).collect();
        let output = format!("{}.o", "o".repeat(198));
        let mut args: Vec<&str> = vec!["-c", "k.cu", "-o", &output];
        args.extend(defines.iter().map(String::as_str));
        let p = run("13.5.37", &args, "");
        assert!(ours(&p).is_empty(), "{:?}", ours(&p));
        let notes: Vec<String> =
            said::<Note>(&p).into_iter().filter(|n| matches!(n, Note::ArgEdge { .. })).map(|n| n.to_string()).collect();
        assert!(
            notes.len() == 1
                && notes[0].contains("the options come to 125")
                && notes[0].contains("limits to 131072 bytes"),
            "{notes:?}"
        );
        // With half as many, there is room: the flags go in.
        let p = run("13.5.37", &args[..4 + 310], "");
        assert!(ours(&p).contains(&"-objtemp".to_string()));
    }

    #[test]
    fn what_no_flag_fixes_is_said_for_the_outputs_the_call_writes() {
        let limits = |release: &str, args: &[&str]| -> Vec<Cause> {
            let p = run(release, args, "");
            said::<Note>(&p)
                .into_iter()
                .filter_map(|n| if let Note::Limit { cause, .. } = n { Some(cause) } else { None })
                .collect()
        };
        assert_eq!(limits("13.5.37", &["-c", "a.cu", "-o", "a.o"]), []);
        assert_eq!(limits("13.5.37", &["-G", "-dc", "a.cu", "-o", "a.o"]), [Cause::DeviceWorkingDirectory]);
        assert_eq!(
            limits("13.0.88", &["-lineinfo", "-c", "a.cu", "-o", "a.o"]),
            [Cause::DeviceWorkingDirectory, Cause::SourceMtime]
        );
        assert_eq!(
            limits("13.0.88", &["-Xcompiler=-flto", "-c", "a.cu", "-o", "a.o"]),
            [Cause::GccLtoWorkingDirectory]
        );
        assert_eq!(limits("13.5.37", &["-rdc=true", "-x", "cu", "-c", "-", "-o", "a.o"]), [Cause::StdinInput]);
        // Issue 30, item 8: host debug info names the working directory.
        assert_eq!(limits("12.4.131", &["-g", "-c", "a.cu", "-o", "a.o"]), [Cause::HostWorkingDirectory]);
    }
}
