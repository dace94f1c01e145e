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
            assert!(p.changes.removed.is_empty());
            assert_eq!(command[command.len() - args.len()..], **args);
            assert!(
                matches!(said::<crate::plan::gpu::Note>(&p)[..], [crate::plan::gpu::Note::Respected { .. }]),
                "{:?}",
                p.changes.notes
            );
        }
    }
}

#[test]
fn append_adds_ours_before_and_keeps_theirs() {
    let (p, command) = run(&["-arch=sm_80", "-c", "a.cu"], &[], &with_policy("append"));
    assert_eq!(gencodes(&p), OURS);
    assert!(p.changes.removed.is_empty());
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
    assert_eq!(p.changes.removed.len(), 5);
    let tail: Vec<&str> = command.iter().map(String::as_str).skip_while(|a| !a.starts_with("-gencode")).collect();
    let mut want = OURS.to_vec();
    want.extend(["--compress-mode=size", "-c", "a.cu", "-o", "a.o"]);
    assert_eq!(tail, want);
    assert!(p.changes.removed.iter().all(|r| matches!(r.why.get(), Some(crate::plan::gpu::Reason::Replaced { .. }))));
    assert_eq!(p.changes.removed[0].tokens, ["-arch", "sm_50"]);
}

#[test]
fn replace_rewrites_the_env_channels_for_nvcc_keeping_the_other_tokens_and_their_quotes() {
    let env = [
        ("NVCC_PREPEND_FLAGS", "-DX=\"a b\"  -arch sm_80\t-O2"),
        ("NVCC_APPEND_FLAGS", "-gencode=arch=compute_80,code=sm_80"),
    ];
    let (p, command) = run(&["-c", "a.cu"], &env, &with_policy("replace"));
    assert_eq!(gencodes(&p), OURS);
    let env_of = |name| p.changes.env.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string_lossy().into_owned());
    assert_eq!(env_of("NVCC_PREPEND_FLAGS").as_deref(), Some("-DX=\"a b\" -O2"));
    assert_eq!(env_of("NVCC_APPEND_FLAGS").as_deref(), Some(""));
    assert_eq!(command[command.len() - 2..], ["-c", "a.cu"]);
    // A value split from its option across channels goes with it.
    let (p, command) = run(&["sm_80", "-c", "a.cu"], &[("NVCC_PREPEND_FLAGS", "-O2 -arch")], &with_policy("replace"));
    assert_eq!(env_of_plan(&p, "NVCC_PREPEND_FLAGS").as_deref(), Some("-O2"));
    assert_eq!(command[command.len() - 2..], ["-c", "a.cu"]);
}

fn env_of_plan(p: &Plan, name: &str) -> Option<String> {
    p.changes.env.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string_lossy().into_owned())
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
    assert_eq!(p.changes.removed.len(), 1);
    // Issue 12: the remaining words go to a new options file (argv stays short, and nvcc splits them by its
    // options-file rules), one per line in double quotes; files that lose nothing stay named.
    assert_eq!(p.changes.written.len(), 1);
    let written = &p.changes.written[0];
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
    assert_eq!(again.changes.written, p.changes.written);
    // Respect: the flag in the file counts as given, nothing changes.
    let (p, command) = in_dir(dir.path(), &args, &[], CAPS).unwrap();
    assert!(gencodes(&p).is_empty() && p.changes.removed.is_empty());
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
        in_dir(dir.path(), &["-c", "a.cu"], &[("NVCC_APPEND_FLAGS", "-optf t.opt")], &with_policy("replace")).unwrap();
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
        assert!(gencodes(&p).is_empty() && p.changes.removed.is_empty(), "{args:?}");
        assert_eq!(command[command.len() - args.len()..], **args);
        let gpu: Vec<String> =
            p.changes.notes.iter().chain(&p.changes.warnings).filter(|n| n.step == "gpu").map(Said::code).collect();
        assert_eq!(gpu, [*code], "{args:?}");
        // Issue 12: with no target of its own, nvcc falls back to its default, and the user hears it.
        let own_target = args.iter().any(|a| a.starts_with("-arch")) || args.contains(&"-dlto");
        let warned = p.changes.warnings.iter().any(|w| w.to_string().contains("nvcc builds its default, compute_75"));
        assert_eq!(warned, !own_target, "{args:?}: {:?}", p.changes.warnings);
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
            p.changes.removed.iter().flat_map(|r| r.tokens.iter().map(|t| t.to_string_lossy().into_owned())).collect();
        assert_eq!(removed, *want_removed, "{args:?} {cfg}");
        // What is not removed reaches nvcc in order, after the additions.
        let kept: Vec<&str> = args.iter().copied().filter(|a| !want_removed.contains(a)).collect();
        assert_eq!(command[command.len() - kept.len()..], kept, "{args:?} {cfg}");
        if !said.is_empty() {
            let codes: Vec<String> = p.changes.notes.iter().chain(&p.changes.warnings).map(Said::code).collect();
            assert!(codes.iter().any(|c| c == said), "{args:?}: {codes:?}");
        }
        if !want_removed.is_empty() {
            assert!(p.changes.removed.iter().all(|r| r.why.step == "gpu"));
        }
    }
    // The flag in an environment channel is taken out of that channel, the rest of it kept.
    let (p, _) = run(&["-c", "a.cu"], &[("NVCC_APPEND_FLAGS", "-DX -dlto -DY")], CAPS);
    assert_eq!(targets(&p), LTO);
    assert!(p.changes.env.contains(&("NVCC_APPEND_FLAGS", OsString::from("-DX -DY"))), "{:?}", p.changes.env);
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
    let err = plan_with(&["-c", "a.cu"], &[], &format!("cuda-version = \"11.8\"\n{CAPS}"), &FakeProbes::debian("13.0"))
        .unwrap_err();
    assert!(err.message.contains("nvcc 11.8"), "{err}");
    // Unknown release: the table alone, said so (once, by the facts).
    let mut probes = FakeProbes::debian("13.0");
    probes.nvcc = Err("no version.json".into());
    let p = plan_with(&["-c", "a.cu"], &[], CAPS, &probes).unwrap();
    assert_eq!(gencodes(&p), OURS);
    assert!(p.changes.warnings[0].to_string().contains("checked only against the tables"), "{:?}", p.changes.warnings);
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
