//! The config file: every key, paths resolved against the file, errors with positions.

use super::*;
use crate::error::ErrorKind;

fn parse_ok(text: &str) -> Config {
    *parse(text, Path::new("/cfg.toml")).unwrap_or_else(|e| panic!("{e}"))
}

fn parse_err(text: &str) -> String {
    let e = parse(text, Path::new("/cfg.toml")).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config);
    e.message
}

#[test]
fn every_key_parses() {
    let c = parse_ok(
        r#"
nvcc = "/opt/cuda/bin/nvcc"
cuda-version = "12.4"
launcher = "ccache"
compat-data = "compat"
depfile-inputs = false
reproducible = false

[host-compiler]
stdenv = { path = "/usr/bin/g++-12", family = "gcc", version = "12.2.0", target = "x86_64-linux-gnu" }
candidates = ["/usr/bin/g++-11", { path = "/usr/bin/clang++-16", family = "clang" }]
prefer = "clang"
allow-unsupported = true

[gpu]
capabilities = ["8.6", "9.0a"]
forward-compat = true
arch-flags = "replace"
compress-fatbin = false

[target]
system = "aarch64-linux"
platform = "jetson"
sysroot = "/sysroot"
cuda-root = "/nix/store/x-cuda"

[target.host-compiler]
stdenv = "aarch64-unknown-linux-gnu-g++"
candidates = [{ path = "aarch64-linux-gnu-g++-11", family = "gcc", version = "11.4.0", target = "aarch64-linux-gnu" }]
"#,
    );
    assert_eq!(c.nvcc.as_deref().map(PathBuf::as_path), Some(Path::new("/opt/cuda/bin/nvcc")));
    assert_eq!(c.cuda_version.unwrap().to_string(), "12.4");
    assert_eq!(c.launcher.as_ref().map(|l| l.value.as_path()), Some(Path::new("ccache")));
    assert_eq!(c.depfile_inputs.as_deref(), Some(&false));
    assert_eq!(c.reproducible.as_deref(), Some(&false));
    let stdenv = c.host_compiler.stdenv.unwrap();
    assert_eq!(stdenv.version.unwrap().to_string(), "12.2.0");
    assert_eq!(c.host_compiler.candidates.len(), 2);
    assert_eq!(c.host_compiler.candidates[0].path, Path::new("/usr/bin/g++-11"));
    assert_eq!(c.host_compiler.candidates[1].family, Some(CompilerFamily::Clang));
    assert_eq!(c.host_compiler.prefer.as_deref(), Some(&CompilerFamily::Clang));
    assert!(*c.host_compiler.allow_unsupported);
    let caps: Vec<String> = c.gpu.capabilities.0.iter().map(|c| c.to_string()).collect();
    assert!(
        matches!(&c.gpu.capabilities.origin, Origin::File(Some(at)) if at.line > 1),
        "{:?}",
        c.gpu.capabilities.origin
    );
    assert_eq!(caps, ["8.6", "9.0a"]);
    assert_eq!(*c.gpu.arch_flags, ArchFlags::Replace);
    assert_eq!(c.gpu.compress_fatbin.as_deref(), Some(&false));
    assert_eq!(c.target.platform.as_deref(), Some(&TargetPlatform::Jetson));
    let cross = &c.target.host_compiler;
    assert_eq!(cross.stdenv.as_ref().unwrap().path, Path::new("aarch64-unknown-linux-gnu-g++"));
    assert_eq!(cross.candidates[0].target.as_deref(), Some("aarch64-linux-gnu"));
}

#[test]
fn relative_paths_are_resolved_against_the_file_once_loaded() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cfg.toml");
    std::fs::write(
        &file,
        "nvcc = \"cuda/bin/nvcc\"\ncompat-data = \"data\"\nlauncher = \"tools/sccache\"\n[host-compiler]\nstdenv = \"bin/g++\"\ncandidates = [\"g++-11\", \"/usr/bin/clang++\"]\n[target]\nsysroot = \"root\"\ncuda-root = \"/abs/cuda\"\n[target.host-compiler]\nstdenv = { path = \"./cross/g++\", gcc-install-dir = \"gcc/12\", libstdcxx-dir = \"/abs/lib\" }\n",
    )
    .unwrap();
    let ctx = Context {
        env: [(vars::CONFIG, file.as_os_str())].into_iter().collect(),
        cwd: "/elsewhere".into(),
        ..Context::default()
    };
    let loaded = load(&ctx).unwrap();
    let c = loaded.config;
    let d = dir.path();
    assert_eq!(loaded.path.as_deref(), Some(file.as_path()));
    assert_eq!(c.nvcc.unwrap().value, d.join("cuda/bin/nvcc"));
    assert_eq!(c.compat_data.unwrap().value, d.join("data"));
    let launcher = c.launcher.unwrap();
    assert_eq!(launcher.value, d.join("tools/sccache"));
    assert_eq!(launcher.origin.to_string(), format!("{}:3", file.display()), "the file and line are named");
    assert_eq!(c.gpu.capabilities.origin, Origin::Default, "not in the file");
    assert_eq!(c.host_compiler.stdenv.unwrap().path, d.join("bin/g++"));
    // A bare name is a program on PATH, as with nvcc's -ccbin; an absolute path stays as it is.
    assert_eq!(c.host_compiler.candidates[0].path, Path::new("g++-11"));
    assert_eq!(c.host_compiler.candidates[1].path, Path::new("/usr/bin/clang++"));
    assert_eq!(c.target.sysroot.unwrap().value, d.join("root"));
    assert_eq!(c.target.cuda_root.unwrap().value, Path::new("/abs/cuda"));
    let cross = c.target.host_compiler.stdenv.unwrap();
    assert_eq!(cross.path, d.join("./cross/g++"));
    assert_eq!(cross.gcc_install_dir.clone().unwrap(), d.join("gcc/12"));
    assert_eq!(cross.libstdcxx_dir.clone().unwrap(), Path::new("/abs/lib"));
}

#[test]
fn empty_file_is_all_defaults() {
    assert_eq!(parse_ok(""), Config::default());
    assert_eq!(*parse_ok("").gpu.arch_flags, ArchFlags::Respect);
    assert!(parse_ok("").gpu.compress_fatbin.is_none(), "unset, which means on");
}

#[test]
fn unknown_keys_name_the_key_file_and_position() {
    let m = parse_err("nvcc = \"x\"\n[gpu]\ncapabilites = [\"8.6\"]\n");
    assert!(m.contains("/cfg.toml:3:1"), "{m}");
    assert!(m.contains("capabilites"), "{m}");
    let m = parse_err("[host-compiler]\ncandidates = [{ path = \"g++\", verison = \"1\" }]\n");
    assert!(m.contains("verison"), "{m}");
    let m = parse_err("[hostcompiler]\n");
    assert!(m.contains("hostcompiler"), "{m}");
}

#[test]
fn bad_values_and_syntax_are_reported_with_position() {
    let m = parse_err("[gpu]\narch-flags = \"sometimes\"\n");
    assert!(m.contains(":2:14") && m.contains("sometimes"), "{m}");
    let m = parse_err("cuda-version = \"twelve\"\n");
    assert!(m.contains(":1:16") && m.contains("twelve"), "{m}");
    let m = parse_err("nvcc = \n");
    assert!(m.contains("/cfg.toml:1:"), "{m}");
    let m = parse_err("[host-compiler]\nprefer = \"icc\"\n");
    assert!(m.contains("icc"), "{m}");
    let m = parse_err("[gpu]\ncapabilities = [\"8.6\", \"9.x\"]\n");
    assert!(m.contains(":2:16") && m.contains("9.x"), "{m}");
}

/// A value of the wrong kind is said in TOML's words and the config's (issue 50, item 8): no Rust type reaches a
/// person.
#[test]
fn a_value_of_the_wrong_kind_is_said_in_the_files_words() {
    for (text, says) in [
        ("threads = \"four\"\n", "the string \"four\" is not a whole number"),
        ("threads = 2.5\n", "the number 2.5 is not a whole number"),
        ("nvcc = 3\n", "the number 3 is not a string (in quotes)"),
        ("launcher = [\"ccache\"]\n", "an array is not a string (in quotes)"),
        ("reproducible = \"yes\"\n", "the string \"yes\" is not true or false"),
        ("[host-compiler]\ncandidates = \"g++\"\n", "the string \"g++\" is not an array"),
        ("[gpu]\narch-flags = \"keep\"\n", "`keep` is not a value this key takes: it takes `respect`, `replace`"),
        ("[host-compiler]\nstdenv = { family = \"gcc\" }\n", "the key `path` is missing"),
    ] {
        let m = parse_err(text);
        assert!(m.contains(says), "{text:?} gave {m:?}, not {says:?}");
        for rust in ["i64", "u32", "sequence", "invalid type", "variant", "field", "expected"] {
            assert!(!m.contains(rust), "{text:?} gave {m:?}, with Rust's word {rust:?}");
        }
    }
}

/// TOML's trap (issue 50, item 10): a top-level key below a `[table]` line is that table's, and the help says so.
#[test]
fn a_top_level_key_below_a_table_is_explained() {
    let e = parse("[gpu]\ncapabilities = [\"8.6\"]\n\nreproducible = false\n", Path::new("/cfg.toml")).unwrap_err();
    assert!(e.message.contains("/cfg.toml:4:1: unknown key `reproducible`"), "{}", e.message);
    let help = e.help.as_deref().unwrap_or_default();
    assert!(help.contains("`reproducible` is a top-level key") && help.contains("below `[gpu]`"), "{help}");
    let e = parse("[gpu]\nreproducibel = false\n", Path::new("/cfg.toml")).unwrap_err();
    assert!(!e.help.unwrap_or_default().contains("top-level"), "a key unknown everywhere gets no such hint");
}

/// The hint's list of top-level keys is `Config`'s: the keys an unknown top-level key's message lists, but the
/// tables.
#[test]
fn the_top_level_keys_are_the_configs() {
    let m = parse_err("no-such-key = 1\n");
    let (_, listed) = m.split_once("this table's keys are ").unwrap_or_else(|| panic!("{m}"));
    let keys: Vec<&str> = listed.split(", ").map(|k| k.trim_matches('`')).collect();
    let tables = ["host-compiler", "gpu", "target"];
    let top: Vec<&str> = keys.into_iter().filter(|k| !tables.contains(k)).collect();
    assert_eq!(top, report::top_level_keys().collect::<Vec<_>>());
}

/// The places in order (issue 33): the installation's before the user's before the machine's, the first file found
/// ends the search, a named file ends it even when missing, and a Nix build skips the user's and the machine's.
#[test]
fn places_are_looked_at_in_order_and_the_first_file_applies() {
    use places::{Place, State};
    let ctx = |vars: &[(&str, &str)]| Context {
        argv0: "/opt/w/bin/nvcc".into(),
        current_exe: Some(PathBuf::from("/opt/w/libexec/nvcc-wrapper")).into(),
        cwd: PathBuf::from("/work"),
        env: vars.iter().map(|(k, v)| (*k, std::ffi::OsStr::new(v))).collect(),
        ..Context::default()
    };
    let summary = |ctx: &Context, files: &[&str]| {
        places::find(ctx, |p| if files.iter().any(|f| Path::new(f) == p) { State::Used } else { State::Missing })
            .into_iter()
            .map(|l| (l.place, l.path.display().to_string(), l.state))
            .collect::<Vec<_>>()
    };
    let home = ctx(&[("HOME", "/home/u")]);
    let installation = "/opt/w/bin/../share/nvcc-wrapper/config.toml";
    let beside_exe = "/opt/w/libexec/../share/nvcc-wrapper/config.toml";
    let user = "/home/u/.config/nvcc-wrapper/config.toml";
    let machine = "/etc/nvcc-wrapper/config.toml";
    assert_eq!(
        summary(&home, &[]),
        [
            (Place::Installation, installation.into(), State::Missing),
            (Place::Installation, beside_exe.into(), State::Missing),
            (Place::User, user.into(), State::Missing),
            (Place::Machine, machine.into(), State::Missing),
        ]
    );
    assert_eq!(summary(&home, &[machine]).last().unwrap().2, State::Used);
    let found = summary(&home, &[installation, user, machine]);
    assert_eq!(found, [(Place::Installation, installation.into(), State::Used)]);
    assert_eq!(
        summary(&home, &[user, machine]).len(),
        3,
        "the machine's file is not looked at once the user's is found"
    );
    let xdg = ctx(&[("HOME", "/home/u"), ("XDG_CONFIG_HOME", "/x")]);
    assert_eq!(summary(&xdg, &[user]).last().unwrap().1, machine, "under XDG_CONFIG_HOME, ~/.config is not read");
    assert_eq!(summary(&xdg, &["/x/nvcc-wrapper/config.toml"]).last().unwrap().2, State::Used);
    let named = ctx(&[("HOME", "/home/u"), ("NVCC_WRAPPER_CONFIG", "c.toml")]);
    assert_eq!(summary(&named, &[installation]), [(Place::Named, "/work/c.toml".into(), State::Used)]);
    let nix = ctx(&[("HOME", "/home/u"), ("NIX_BUILD_TOP", "/tmp")]);
    let states: Vec<State> = summary(&nix, &[user, machine]).into_iter().map(|l| l.2).collect();
    assert_eq!(states, [State::Missing, State::Missing, State::NixBuild, State::NixBuild]);
}
