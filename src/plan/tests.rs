//! Plans for whole command lines, with fixed facts in place of probes: one row per situation.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::*;
use crate::config::CompilerFamily;
use crate::context::Context;
use crate::error::ErrorKind;
use crate::locate::FoundBy;
use crate::plan::host_compiler::{Known, StdenvLibstdcxx};
use crate::version::Version;

/// Facts of a Debian 12 machine like the CI one: g++-11, g++-12 (as `g++`), clang++-14/16/19.
struct FakeProbes {
    nvcc: Result<Version, String>,
    compilers: BTreeMap<PathBuf, Known>,
    probed: std::cell::RefCell<Vec<PathBuf>>,
}

impl FakeProbes {
    fn debian(nvcc: &str) -> FakeProbes {
        let k = |path: &str, family, version: &str| {
            (PathBuf::from(path), Known { path: path.into(), family, version: version.parse().unwrap(), target: None })
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
            ]
            .into_iter()
            .collect(),
            probed: Default::default(),
        }
    }
}

impl Probes for FakeProbes {
    fn nvcc_version(&self, _: &Path) -> std::result::Result<Version, String> {
        self.nvcc.clone()
    }
    fn compiler(&self, path: &Path) -> std::result::Result<Known, String> {
        self.probed.borrow_mut().push(path.to_path_buf());
        self.compilers.get(path).cloned().ok_or_else(|| format!("{} is not a compiler", path.display()))
    }
    fn libstdcxx(&self, path: &Path) -> std::result::Result<StdenvLibstdcxx, String> {
        assert!(path.starts_with("/usr/bin"), "libstdc++ of {}", path.display());
        Ok(StdenvLibstdcxx {
            gcc_install_dir: "/usr/lib/gcc/x86_64-linux-gnu/12".into(),
            runtime_dir: "/usr/lib/x86_64-linux-gnu".into(),
        })
    }
    fn resolve(&self, name: &Path) -> Option<PathBuf> {
        let path = if name.is_absolute() { name.to_path_buf() } else { Path::new("/usr/bin").join(name) };
        self.compilers.contains_key(&path).then_some(path)
    }
    fn installed_compilers(&self) -> Vec<PathBuf> {
        self.compilers.keys().cloned().collect()
    }
}

fn nvcc() -> RealNvcc {
    RealNvcc { path: "/cuda/bin/nvcc".into(), found_by: FoundBy::Path }
}

fn inv(args: &[&str], env: &[(&str, &str)]) -> Invocation {
    let ctx = Context { env: env.iter().copied().collect(), ..Context::default() };
    Invocation::parse_args(&ctx, args.iter().map(OsString::from).collect()).unwrap()
}

fn config(text: &str) -> Loaded {
    Loaded {
        config: crate::config::parse(text, Path::new("/etc/nvcc.toml")).unwrap(),
        path: Some("/etc/nvcc.toml".into()),
        overrides: Vec::new(),
    }
}

fn plan_with(args: &[&str], env: &[(&str, &str)], cfg: &str, probes: &FakeProbes) -> Result<Plan> {
    let i = inv(args, env);
    plan(Inputs { invocation: &i, config: &config(cfg), compat: &Compat::built_in(), probes, nvcc: nvcc(), depth: 0 })
}

fn added(p: &Plan) -> Vec<String> {
    p.before.iter().chain(&p.after).flat_map(|a| a.args.iter().map(|x| x.to_string_lossy().into_owned())).collect()
}

#[test]
fn user_arguments_come_through_exactly_and_depth_rises() {
    let i = inv(&["-c", "a b.cu", "", "-o", "x.o"], &[]);
    let probes = FakeProbes::debian("13.0.88");
    let p = plan(Inputs {
        invocation: &i,
        config: &Loaded::default(),
        compat: &Compat::built_in(),
        probes: &probes,
        nvcc: nvcc(),
        depth: 2,
    })
    .unwrap();
    assert_eq!(p.command(&i)[1..], i.argv[..]);
    assert_eq!(p.env, vec![(vars::DEPTH, OsString::from("3"))]);
}

#[test]
fn additions_go_before_the_user_arguments() {
    let probes = FakeProbes::debian("11.8.89");
    let i = inv(&["-c", "a.cu"], &[]);
    let p = plan(Inputs {
        invocation: &i,
        config: &Loaded::default(),
        compat: &Compat::built_in(),
        probes: &probes,
        nvcc: nvcc(),
        depth: 0,
    })
    .unwrap();
    assert_eq!(p.command(&i), ["-ccbin=/usr/bin/g++-11", "-c", "a.cu"]);
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
            assert!(!addition.reason.is_empty());
        }
    }
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
fn env_channels_count_as_given() {
    for env in [
        ("NVCC_CCBIN", "g++-11"),
        ("NVCC_PREPEND_FLAGS", "-ccbin=g++-11"),
        ("NVCC_APPEND_FLAGS", "--compiler-bindir g++-11"),
    ] {
        let probes = FakeProbes::debian("11.8.89");
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
    assert!(p.warnings[0].contains("nvcc 11.8 accepts GCC up to 11 and Clang up to 14"), "{}", p.warnings[0]);
    assert!(p.warnings[0].contains("/usr/bin/g++-12 (gcc 12.2.0)"), "{}", p.warnings[0]);
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
    assert!(p.notes.iter().any(|n| n.contains("not in the compatibility table")), "{:?}", p.notes);
    probes.nvcc = Err("nvcc --version failed".into());
    let p = plan_with(&["-c", "a.cu"], &[], "", &probes).unwrap();
    assert!(added(&p).is_empty());
    assert!(p.notes.iter().any(|n| n.contains("cuda-version")), "{:?}", p.notes);
    // Newer than the table: the newest limits, said so.
    let p = plan_with(&["-c", "a.cu"], &[], "", &FakeProbes::debian("14.0")).unwrap();
    assert_eq!(added(&p), ["-ccbin=/usr/bin/g++"]);
    assert!(p.notes.iter().any(|n| n.contains("newer than the compatibility table")), "{:?}", p.notes);
}

#[test]
fn unclear_command_lines_get_a_note_and_nothing_else() {
    let p = plan_with(&["-c", "a.cu", "-ccbin"], &[], "", &FakeProbes::debian("11.8.89")).unwrap();
    assert!(p.changes_nothing());
    assert_eq!(p.notes.len(), 1);
}
