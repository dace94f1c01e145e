//! The reproducible-builds step: which rows of compat-data/reproducible.toml a call gets, filled how, and what
//! leaves a row out. nvcc's pid is 42 here (`0000002a`), its TMPDIR /tmp.
use super::*;
use crate::compat::Cause;
use crate::plan::reproducible::{Note, Reason};

const ON: &str = "reproducible = true\n";

fn ours(p: &Plan) -> Vec<String> {
    let rows = p.changes.before.iter().filter(|a| a.why.get::<Reason>().is_some());
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
    let newest = Compat::built_in().newest_release();
    let next = format!("{}.{}.0", newest.major, newest.minor + 1);
    for release in ["12.9.86", next.as_str(), "11.7.64"] {
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
        (&["-Xcompiler", "-O2,-frandom-seed=s", "-c", "a.cu", "-o", "a.o"], "--frandom-seed={output}", "-Xcompiler"),
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
            notes.iter().any(
                |n| matches!(n, Note::UsersOwn { flag: f, option: o } if f == flag && o.to_string().contains(option))
            ),
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
    assert!(said::<Note>(&p).iter().any(|n| matches!(n, Note::PidUnknown { why, .. } if why.contains("dependency"))));
    // Behind a launcher the other rows stay: they name nothing of the process.
    assert!(ours(&run("13.0.88", &["-c", "a.cu", "-o", "a.o"], "launcher = \"ccache\"\n")).contains(&"-objtemp".into()));
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
        scratch: &|| "/scratch".into(),
        nvcc_process: &NvccProcess {
            pid: Some(0xbeef),
            tmpdir: "/build/tmp".into(),
            given_bytes: 4096,
            arg_max: 2 << 20,
            nix_build: false,
        },
        jobserver: &crate::context::Jobserver::None,
        unknown_variables: &[],
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
    assert_eq!(said::<Note>(&p), [Note::TurnedOff { origin: file_line(1) }]);
    let mut off = config(ON);
    crate::config::apply_env(&mut off, &[(vars::REPRODUCIBLE, "0")].into_iter().collect()).unwrap();
    let i = inv(&["-c", "a.cu"], &[]);
    let p = plan_for(&i, &off, &probes, 0).unwrap();
    assert_eq!(said::<Note>(&p), [Note::TurnedOff { origin: crate::config::Origin::Env("NVCC_WRAPPER_REPRODUCIBLE") }]);
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
    // children's may hold; the flags would take more (`-objtemp` names the 200-byte output eight times). Quoted,
    // each flag takes 6 bytes more there.
    let defines: Vec<String> = (0..620).map(|i| format!("-DX{i:04}={}", "v".repeat(193))).collect();
    let output = format!("{}.o", "o".repeat(198));
    let mut args: Vec<&str> = vec!["-c", "k.cu", "-o", &output];
    args.extend(defines.iter().map(String::as_str));
    let p = run("13.5.37", &args, "");
    assert!(ours(&p).is_empty(), "{:?}", ours(&p));
    let notes: Vec<String> =
        said::<Note>(&p).into_iter().filter(|n| matches!(n, Note::ArgEdge { .. })).map(|n| n.to_string()).collect();
    assert!(
        notes.len() == 1 && notes[0].contains("the options come to 128") && notes[0].contains("limits to 131072 bytes"),
        "{notes:?}"
    );
    // With half as many, there is room: the flags go in.
    let p = run("13.5.37", &args[..4 + 310], "");
    assert!(ours(&p).contains(&"-objtemp".to_string()));
    // Issue 48, item 4: many short flags, which quoting lengthens most (8,760 `-DXi=1`, 80 KiB as given), with a
    // 202-byte output: nothing is added; with 6,000, there is room.
    let short: Vec<String> = (0..8760).map(|i| format!("-DX{i}=1")).collect();
    let output = format!("{}.o", "o".repeat(200));
    let mut args: Vec<&str> = vec!["-c", "k.cu", "-o", &output];
    args.extend(short.iter().map(String::as_str));
    assert!(ours(&run("13.5.37", &args, "")).is_empty());
    assert!(ours(&run("13.5.37", &args[..4 + 6000], "")).contains(&"-objtemp".to_string()));
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
    assert_eq!(limits("13.0.88", &["-Xcompiler=-flto", "-c", "a.cu", "-o", "a.o"]), [Cause::GccLtoWorkingDirectory]);
    assert_eq!(limits("13.5.37", &["-rdc=true", "-x", "cu", "-c", "-", "-o", "a.o"]), [Cause::StdinInput]);
    // Issue 30, item 8: host debug info names the working directory.
    assert_eq!(limits("12.4.131", &["-g", "-c", "a.cu", "-o", "a.o"]), [Cause::HostWorkingDirectory]);
}
