use super::*;
use crate::context::Env;
use crate::error::ErrorKind;

fn ctx(env: &[(&str, &str)]) -> Context {
    Context { env: env.iter().copied().collect::<Env>(), cwd: PathBuf::from("/nonexistent"), ..Context::default() }
}

fn parse(args: &[&str], env: &[(&str, &str)]) -> Invocation {
    Invocation::parse_args(&ctx(env), args.iter().map(OsString::from).collect()).unwrap()
}

fn summary(inv: &Invocation) -> Vec<String> {
    inv.found
        .iter()
        .map(|f| match &f.value {
            Some(v) => format!("{}={}", f.spelling, v.to_string_lossy()),
            None => f.spelling.to_string(),
        })
        .collect()
}

#[test]
fn recognises_each_spelling_with_value_forms() {
    let rows: &[(&[&str], &[&str])] = &[
        (&["-ccbin", "g++-11", "a.cu"], &["-ccbin=g++-11"]),
        (&["-ccbin=g++-11"], &["-ccbin=g++-11"]),
        (&["--compiler-bindir", "/usr/bin"], &["--compiler-bindir=/usr/bin"]),
        (&["--compiler-bindir=/usr/bin"], &["--compiler-bindir=/usr/bin"]),
        (&["-arch=sm_86", "-code", "sm_86,compute_86"], &["-arch=sm_86", "-code=sm_86,compute_86"]),
        (&["--gpu-architecture", "native"], &["--gpu-architecture=native"]),
        (&["-arch=all-major"], &["-arch=all-major"]),
        (&["-gencode", "arch=compute_90a,code=sm_90a"], &["-gencode=arch=compute_90a,code=sm_90a"]),
        (
            &["--generate-code=arch=compute_80,code=[sm_80,compute_80]"],
            &["--generate-code=arch=compute_80,code=[sm_80,compute_80]"],
        ),
        (&["--target-directory", "sbsa-linux"], &["--target-directory=sbsa-linux"]),
        (&["-target-dir=aarch64-linux"], &["-target-dir=aarch64-linux"]),
        (&["-I/usr/include", "-DX=1", "-lm", "-O3"], &["-I=/usr/include", "-D=X=1", "-l=m", "-O=3"]),
        (&["-c", "-dc", "-E", "--dryrun", "-v"], &["-c", "-dc", "-E", "--dryrun", "-v"]),
    ];
    for (args, want) in rows {
        assert_eq!(summary(&parse(args, &[])), *want, "{args:?}");
    }
}

#[test]
fn values_of_other_options_are_not_read_as_options() {
    // `-Xcompiler -v` is the host compiler's -v, `-o -arch` names an output file: neither is nvcc's.
    let inv = parse(&["-Xcompiler", "-v", "-o", "-arch", "-x", "cu", "a.cu"], &[]);
    assert!(inv.gpu_targets().next().is_none());
    assert!(inv.with_role(Role::Verbose).next().is_none());
    assert_eq!(inv.inputs, vec![OsString::from("a.cu")]);
}

#[test]
fn unknown_options_and_wrong_dash_counts_pass_through_unrecognised() {
    let inv = parse(&["--ccbin=g++", "--gencode", "arch=compute_80,code=sm_80", "-fancy", "a.cu"], &[]);
    assert!(inv.host_compiler().is_none());
    assert!(inv.gpu_targets().next().is_none());
    // The value-looking token after an unknown option cannot be told apart from an input; nvcc will judge both.
    assert_eq!(inv.inputs, vec![OsString::from("arch=compute_80,code=sm_80"), OsString::from("a.cu")]);
}

#[test]
fn host_compiler_last_option_wins_then_env() {
    let inv = parse(&["-ccbin", "a", "--compiler-bindir=b"], &[("NVCC_CCBIN", "c")]);
    match inv.host_compiler() {
        Some(HostCompilerGiven::Option(f)) => assert_eq!(f.value.as_deref(), Some(OsStr::new("b"))),
        other => panic!("{other:?}"),
    }
    let inv = parse(&["a.cu"], &[("NVCC_CCBIN", "c")]);
    assert_eq!(inv.host_compiler(), Some(HostCompilerGiven::Env(OsStr::new("c"))));
    let inv = parse(&["a.cu"], &[("NVCC_CCBIN", "")]);
    assert_eq!(inv.host_compiler(), None);
}

#[test]
fn env_channels_are_read_in_nvcc_order_and_located() {
    let inv = parse(&["-c", "a.cu"], &[("NVCC_PREPEND_FLAGS", "-ccbin g++-11"), ("NVCC_APPEND_FLAGS", "-arch=sm_90a")]);
    assert_eq!(summary(&inv), ["-ccbin=g++-11", "-c", "-arch=sm_90a"]);
    assert_eq!(inv.found[0].at, Location { channel: Channel::Prepend, index: 0, tokens: 2 });
    assert_eq!(inv.found[2].at, Location { channel: Channel::Append, index: 0, tokens: 1 });
    assert_eq!(inv.phase(), Phase::Compile);
}

#[test]
fn a_value_may_follow_its_option_across_channels() {
    let inv = parse(&["g++-11", "a.cu"], &[("NVCC_PREPEND_FLAGS", "-ccbin")]);
    assert_eq!(summary(&inv), ["-ccbin=g++-11"]);
    assert_eq!(inv.found[0].at.tokens, 1);
}

#[test]
fn positions_cover_the_option_and_its_value_even_across_channels() {
    let pos = |inv: &Invocation, i: usize| inv.positions(&inv.found[i]);
    let inv = parse(&["-arch", "sm_80", "-gencode=arch=compute_86,code=sm_86", "a.cu"], &[]);
    assert_eq!(pos(&inv, 0), [(Channel::Argv, 0), (Channel::Argv, 1)]);
    assert_eq!(pos(&inv, 1), [(Channel::Argv, 2)]);
    let inv = parse(&["sm_80", "a.cu"], &[("NVCC_PREPEND_FLAGS", "-c -arch")]);
    assert_eq!(pos(&inv, 1), [(Channel::Prepend, 1), (Channel::Argv, 0)]);
    // An empty argv: the value is in the next channel that has tokens.
    let inv = parse(&[], &[("NVCC_PREPEND_FLAGS", "-code"), ("NVCC_APPEND_FLAGS", "sm_80")]);
    assert_eq!(pos(&inv, 0), [(Channel::Prepend, 0), (Channel::Append, 0)]);
    // `-MF` takes its file (CMake's depfile), which is no input.
    let inv = parse(&["-MD", "-MF", "a.d", "-MT", "a.o", "-c", "a.cu"], &[]);
    assert_eq!(inv.inputs, ["a.cu"]);
    // Glued values are one token.
    let inv = parse(&["-I/x", "-Ofc", "1"], &[]);
    assert_eq!(pos(&inv, 0), [(Channel::Argv, 0)]);
    assert_eq!(pos(&inv, 1), [(Channel::Argv, 1), (Channel::Argv, 2)]);
}

#[test]
fn query_modes_and_phases() {
    for q in ["--version", "-V", "--help", "-h", "--list-gpu-arch", "-arch-ls", "--list-gpu-code", "-code-ls"] {
        assert!(parse(&[q], &[]).query_only().is_some(), "{q}");
    }
    assert!(parse(&["-c", "a.cu"], &[]).query_only().is_none());
    let rows: &[(&[&str], Phase)] = &[
        (&["a.cu"], Phase::Link),
        (&["-c", "a.cu"], Phase::Compile),
        (&["-dc", "a.cu"], Phase::Compile),
        (&["-E", "a.cu"], Phase::Preprocess),
        (&["-M", "a.cu"], Phase::Preprocess),
        (&["-ptx", "a.cu"], Phase::DeviceOnly),
        (&["-dlink", "a.o"], Phase::DeviceLink),
        (&["-lib", "a.o"], Phase::Lib),
        (&["-run", "a.cu"], Phase::Run),
    ];
    for (args, phase) in rows {
        assert_eq!(parse(args, &[]).phase(), *phase, "{args:?}");
    }
}

#[test]
fn a_missing_value_is_not_understood_not_an_error() {
    let inv = parse(&["a.cu", "-ccbin"], &[]);
    assert_eq!(inv.not_understood.len(), 1);
    assert!(inv.not_understood[0].contains("-ccbin"));
    let inv = parse(&["--dryrun=yes"], &[]);
    assert_eq!(inv.not_understood.len(), 1);
}

#[test]
fn tokens_are_kept_byte_exact() {
    use std::os::unix::ffi::OsStringExt;
    let odd = OsString::from_vec(b"-DX=\xff".to_vec());
    let args = vec![OsString::new(), odd.clone(), OsString::from("a b\n\"c'")];
    let inv = Invocation::parse_args(&ctx(&[]), args.clone()).unwrap();
    assert_eq!(inv.argv, args);
}

mod options_files {
    use super::*;
    use std::fs;

    fn in_dir(dir: &Path, args: &[&str]) -> Result<Invocation> {
        let ctx = Context { cwd: dir.to_path_buf(), ..Context::default() };
        Invocation::parse_args(&ctx, args.iter().map(OsString::from).collect())
    }

    #[test]
    fn are_read_relative_to_cwd_with_comma_lists_and_nesting() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.opt"), "-ccbin \"/opt/my gcc/g++\"\n-optf b.opt").unwrap();
        fs::write(dir.path().join("b.opt"), "-arch=sm_80").unwrap();
        fs::write(dir.path().join("c.opt"), "-DX=1").unwrap();
        let inv = in_dir(dir.path(), &["-optf", "a.opt,c.opt", "x.cu"]).unwrap();
        assert_eq!(
            summary(&inv),
            ["-optf=a.opt,c.opt", "-ccbin=/opt/my gcc/g++", "-optf=b.opt", "-arch=sm_80", "-D=X=1"]
        );
        assert_eq!(inv.options_files.len(), 3);
        assert_eq!(inv.found[1].at.channel, Channel::OptionsFile(0));
        assert_eq!(inv.found[3].at.channel, Channel::OptionsFile(1));
        let named_by: Vec<Location> = inv.options_files.iter().map(|f| f.named_by).collect();
        assert_eq!(
            named_by,
            [
                Location { channel: Channel::Argv, index: 0, tokens: 2 },
                Location { channel: Channel::OptionsFile(0), index: 2, tokens: 2 },
                Location { channel: Channel::Argv, index: 0, tokens: 2 },
            ]
        );
        assert_eq!(inv.argv, ["-optf", "a.opt,c.opt", "x.cu"]);
    }

    #[test]
    fn missing_file_is_an_error_naming_it_and_where_it_was_named() {
        let dir = tempfile::tempdir().unwrap();
        let err = in_dir(dir.path(), &["--options-file=nope.opt"]).unwrap_err();
        assert_eq!(err.kind, ErrorKind::OptionsFile);
        assert!(err.message.contains("nope.opt"), "{err}");
        assert!(err.help.unwrap().contains("--options-file nope.opt"));
    }

    #[test]
    fn a_file_including_itself_is_an_error_naming_the_chain() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.opt"), "-optf b.opt").unwrap();
        fs::write(dir.path().join("b.opt"), "-c -optf a.opt").unwrap();
        let err = in_dir(dir.path(), &["-optf", "a.opt"]).unwrap_err();
        assert_eq!(err.kind, ErrorKind::OptionsFile);
        assert!(err.message.contains("includes itself"), "{err}");
        assert!(err.message.contains("a.opt -> ") && err.message.contains("b.opt"), "{err}");
    }

    #[test]
    fn a_file_including_itself_under_another_name_is_caught() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.opt"), "-c -optf link.opt").unwrap();
        std::os::unix::fs::symlink("a.opt", dir.path().join("link.opt")).unwrap();
        let err = in_dir(dir.path(), &["-optf", "a.opt"]).unwrap_err();
        assert!(err.message.contains("link.opt includes itself"), "{err}");
    }

    #[test]
    fn files_that_are_not_regular_are_left_to_nvcc_unread() {
        // Issue 12: a pipe (`-optf <(...)`), /dev/stdin or a FIFO can be read once; reading it would leave nvcc
        // nothing (or wait forever for a FIFO's writer). Devices and directories are nvcc's to judge too.
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("d.opt")).unwrap();
        for named in ["d.opt", "/dev/null", "/dev/stdin"] {
            let inv = in_dir(dir.path(), &["-optf", named, "-c", "x.cu"]).unwrap();
            assert!(inv.options_files.is_empty(), "{named} was read");
            assert_eq!(inv.not_understood.len(), 1, "{named}");
            assert!(inv.not_understood[0].contains("not a regular file"), "{:?}", inv.not_understood);
        }
    }

    #[test]
    fn nesting_stops_where_nvcc_stops_without_exhausting_the_stack() {
        // nvcc 13.0 keeps 15 options files open; the 16th fails. A chain of thousands used to overflow the stack.
        let dir = tempfile::tempdir().unwrap();
        let chain = |n: usize| {
            for i in 0..n {
                fs::write(dir.path().join(format!("{i}.opt")), format!("-optf {}.opt", i + 1)).unwrap();
            }
            fs::write(dir.path().join(format!("{n}.opt")), "-DLEAF").unwrap();
        };
        chain(MAX_OPTIONS_FILE_DEPTH - 1);
        let inv = in_dir(dir.path(), &["-optf", "0.opt"]).unwrap();
        assert!(inv.not_understood.is_empty(), "{:?}", inv.not_understood);
        assert_eq!(inv.options_files.len(), MAX_OPTIONS_FILE_DEPTH);
        chain(7000);
        let inv = in_dir(dir.path(), &["-optf", "0.opt"]).unwrap();
        assert_eq!(inv.options_files.len(), MAX_OPTIONS_FILE_DEPTH);
        assert!(inv.not_understood[0].contains("nested deeper than the 15 nvcc reads"), "{:?}", inv.not_understood);
    }
}
