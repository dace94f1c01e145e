//! Launcher mode in front of the fake nvcc: `launcher` / `NVCC_WRAPPER_LAUNCHER` runs `<launcher> <real nvcc>
//! <final arguments>`, so a compiler cache hashes what the wrapper added (issue 15). The real caches (ccache,
//! sccache, sccache-dist) are tests/real/launcher.rs.

use std::path::PathBuf;

use crate::support::*;

/// A launcher that records its arguments (one per line) next to the sandbox and runs them, as a cache does on a
/// miss; `--version` answers as `version` says.
fn fake_launcher(sb: &Sandbox, name: &str, version: &str) -> PathBuf {
    let log = sb.dir.path().join(format!("{name}.args"));
    let script = format!(
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo '{name} {version}'; exit 0; fi\nprintf '%s\\n' \"$@\" > '{}'\nexec \"$@\"\n",
        log.display()
    );
    let path = sb.write(&format!("launchers/{name}"), &script);
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    path
}

fn launcher_args(sb: &Sandbox, name: &str) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(sb.dir.path().join(format!("{name}.args"))).ok()?;
    Some(text.lines().map(String::from).collect())
}

/// The sandbox's config plus `extra` (top-level keys).
fn config_with(sb: &Sandbox, extra: &str) {
    let base = std::fs::read_to_string(&sb.config).unwrap();
    // The sandbox's top-level keys, then the test's text (whose tables may follow its keys), then the sandbox's tables.
    let (top, tables) = base.split_at(base.find('[').unwrap_or(base.len()));
    std::fs::write(&sb.config, format!("{top}{extra}{tables}")).unwrap();
}

#[test]
fn the_launcher_runs_the_real_nvcc_with_every_argument_the_wrapper_added() {
    let sb = Sandbox::new();
    let launcher = fake_launcher(&sb, "ccache", "4.7.5");
    config_with(&sb, &format!("launcher = \"{}\"\n[gpu]\ncapabilities = [\"8.9\"]\n", launcher.display()));
    sb.nvcc().args(["-c", "k.cu", "-o", "k.o"]).assert().success();
    let nvcc_saw = sb.recorded().args();
    let launcher_saw = launcher_args(&sb, "ccache").expect("the launcher did not run");
    // The launcher gets the real nvcc by its full path, then exactly the arguments nvcc receives.
    assert_eq!(PathBuf::from(&launcher_saw[0]), sb.cuda_bin.join("nvcc"));
    assert_eq!(launcher_saw[1..], nvcc_saw[..]);
    assert!(nvcc_saw.iter().any(|a| a.contains("sm_89")), "{nvcc_saw:?}");
    assert!(nvcc_saw.contains(&sb.ccbin()), "{nvcc_saw:?}");
}

#[test]
fn a_bare_name_is_looked_up_on_path_and_the_variable_overrides_the_file() {
    let sb = Sandbox::new();
    fake_launcher(&sb, "ccache", "4.7.5");
    let sccache = fake_launcher(&sb, "sccache", "0.16.0");
    config_with(&sb, "launcher = \"ccache\"\n");
    let path =
        std::env::join_paths(std::iter::once(sb.dir.path().join("launchers")).chain(std::env::split_paths(&sb.path())))
            .unwrap();
    sb.nvcc().env("PATH", &path).args(["-c", "k.cu"]).assert().success();
    assert!(launcher_args(&sb, "ccache").is_some(), "the bare name was not found on PATH");

    // The sandbox's release is 13.0: sccache 0.16 works with it.
    sb.nvcc().env("NVCC_WRAPPER_LAUNCHER", &sccache).args(["-c", "k.cu"]).assert().success();
    assert_eq!(launcher_args(&sb, "sccache").unwrap()[1..], sb.recorded().args()[..]);

    // A dry run and explain print the launcher in front, as it runs.
    let out =
        sb.nvcc().env("NVCC_WRAPPER_LAUNCHER", &sccache).env("NVCC_WRAPPER_DRY_RUN", "1").arg("-c").output().unwrap();
    let line = stdout(&out);
    assert!(line.starts_with(&format!("{} {} ", sccache.display(), sb.cuda_bin.join("nvcc").display())), "{line}");
    let out = sb
        .wrapper_cli()
        .env("NVCC_WRAPPER_CONFIG", &sb.config)
        .env("NVCC_WRAPPER_LAUNCHER", &sccache)
        .args(["explain", "--", "-c", "k.cu"])
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    let runs = text.lines().find(|l| l.starts_with("runs:")).unwrap_or_else(|| panic!("{text}"));
    assert!(runs.contains(&format!(" {} {} ", sccache.display(), sb.cuda_bin.join("nvcc").display())), "{runs}");
    assert!(text.contains("override: `launcher` is"), "{text}");
    assert!(text.contains("note: nvcc runs through `launcher` ("), "{text}");
}

#[test]
fn a_missing_launcher_is_an_error_with_exit_72_and_nvcc_does_not_run() {
    let sb = Sandbox::new();
    for (setting, says) in [("no-such-cache", "is not on PATH"), ("/nowhere/ccache", "is not an executable file")] {
        let out = sb.nvcc().env("NVCC_WRAPPER_LAUNCHER", setting).args(["-c", "k.cu"]).output().unwrap();
        assert_eq!(out.status.code(), Some(72), "{}", stderr(&out));
        let err = stderr(&out);
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 2, "{err}");
        assert!(lines[0].starts_with("nvcc-wrapper: error: `launcher` (") && lines[0].contains(setting), "{err}");
        assert!(lines[0].contains(says) && lines[0].contains("$NVCC_WRAPPER_LAUNCHER"), "{err}");
        assert!(lines[1].starts_with("help: "), "{err}");
        assert!(!sb.ran());
    }
    config_with(&sb, "launcher = \"no-such-cache\"\n");
    let out = sb.nvcc().args(["-c", "k.cu"]).output().unwrap();
    assert_eq!(out.status.code(), Some(72));
    assert!(stderr(&out).contains(&sb.config.display().to_string()), "names the file: {}", stderr(&out));
}

#[test]
fn queries_and_the_kill_switch_run_nvcc_directly() {
    let sb = Sandbox::new();
    let launcher = fake_launcher(&sb, "ccache", "4.7.5");
    for (var, args) in [("", &["--version"][..]), ("NVCC_WRAPPER_DISABLE", &["-c", "k.cu"])] {
        let mut cmd = sb.nvcc();
        cmd.env("NVCC_WRAPPER_LAUNCHER", &launcher).args(args);
        if !var.is_empty() {
            cmd.env(var, "1");
        }
        cmd.assert().success();
        assert!(sb.ran() && launcher_args(&sb, "ccache").is_none(), "{var} {args:?}");
    }
}

/// sccache 0.16 fails on real nvcc 13.3 and later by itself: with those the wrapper runs nvcc without it and says
/// why, rather than fail the build.
#[test]
fn a_launcher_known_to_fail_with_this_release_is_left_out_with_a_note() {
    let sb = Sandbox::new();
    let sccache = fake_launcher(&sb, "sccache", "0.16.0");
    std::fs::write(
        sb.dir.path().join("cuda/version.json"),
        r#"{"cuda_nvcc": {"name": "CUDA NVCC", "version": "13.5.44"}}"#,
    )
    .unwrap();
    let out = sb
        .nvcc()
        .env("NVCC_WRAPPER_LAUNCHER", &sccache)
        .env("NVCC_WRAPPER_LOG", "debug")
        .env("NVCC_WRAPPER_PROBE_CACHE_DIR", sb.dir.path().join("probes"))
        .args(["-c", "k.cu"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(sb.ran() && launcher_args(&sb, "sccache").is_none(), "sccache ran");
    let log = stderr(&out);
    assert!(log.contains("the launcher") && log.contains("is left out: sccache 0.16.0 fails with nvcc 13.3"), "{log}");
    let runs = log.lines().find(|l| l.contains("runs:")).unwrap_or_else(|| panic!("{log}"));
    assert!(!runs.contains("sccache"), "{runs}");

    // Another sccache release is kept.
    let newer = fake_launcher(&sb, "sccache", "0.17.0");
    sb.nvcc().env("NVCC_WRAPPER_LAUNCHER", &newer).args(["-c", "k.cu"]).assert().success();
    assert!(launcher_args(&sb, "sccache").is_some());
}

/// sccache 0.16 with nvcc 11.8 to 13.2 fails by itself on device-LTO compiles and, now and then, on `-fatbin`: those
/// calls run without it; the others of the same build keep it.
#[test]
fn a_launcher_known_to_fail_on_some_calls_is_left_out_of_those_only() {
    let sb = Sandbox::new();
    let sccache = fake_launcher(&sb, "sccache", "0.16.0");
    let cases: &[(&[&str], Option<&str>)] = &[
        (&["-c", "k.cu"], None),
        (&["-dc", "k.cu"], None),
        (&["-dlto", "k.o", "-o", "app"], None),
        (&["-dc", "-dlto", "k.cu"], Some("in a compile that writes device-LTO intermediates")),
        (&["-c", "-rdc=true", "-gencode=arch=compute_86,code=lto_86", "k.cu"], Some("device-LTO")),
        (&["-fatbin", "k.cu"], Some("in a `-fatbin` call")),
        (&["-fatbin", "-dlto", "k.cu"], Some("in a compile that writes device-LTO intermediates")),
    ];
    for (args, left_out) in cases {
        let _ = std::fs::remove_file(sb.dir.path().join("sccache.args"));
        let out = sb
            .nvcc()
            .env("NVCC_WRAPPER_LAUNCHER", &sccache)
            .env("NVCC_WRAPPER_LOG", "debug")
            .env("NVCC_WRAPPER_PROBE_CACHE_DIR", sb.dir.path().join("probes"))
            .args(*args)
            .output()
            .unwrap();
        let log = stderr(&out);
        assert!(out.status.success(), "{args:?}: {log}");
        match left_out {
            None => assert!(launcher_args(&sb, "sccache").is_some(), "{args:?}: sccache left out: {log}"),
            Some(words) => {
                assert!(launcher_args(&sb, "sccache").is_none(), "{args:?}: sccache ran");
                let said = "is left out: sccache 0.16.0 fails with nvcc 11.8 to 13.2 ";
                assert!(log.contains(said) && log.contains(words), "{args:?}: {log}");
            }
        }
    }
}

/// ccache does not read `NVCC_PREPEND_FLAGS` / `NVCC_APPEND_FLAGS`: in launcher mode their tokens go onto the command
/// line where nvcc would put them (first and last), and the variables reach nvcc empty.
#[test]
fn the_env_channels_move_onto_the_command_line_behind_a_launcher() {
    let sb = Sandbox::new();
    let launcher = fake_launcher(&sb, "ccache", "4.7.5");
    sb.nvcc()
        .env("NVCC_WRAPPER_LAUNCHER", &launcher)
        .env("NVCC_PREPEND_FLAGS", "-DFIRST  -DX=\"a b\"")
        .env("NVCC_APPEND_FLAGS", "-gencode=arch=compute_89,code=sm_89")
        .args(["-c", "k.cu"])
        .assert()
        .success();
    let record = sb.recorded();
    let args = record.args();
    assert_eq!(args[..2], ["-DFIRST", "-DX=\"a b\""], "{args:?}");
    assert_eq!(args.last().unwrap(), "-gencode=arch=compute_89,code=sm_89", "{args:?}");
    assert_eq!(launcher_args(&sb, "ccache").unwrap()[1..], args[..]);
    assert_eq!(record.env("NVCC_PREPEND_FLAGS").as_deref(), Some(""));
    assert_eq!(record.env("NVCC_APPEND_FLAGS").as_deref(), Some(""));

    // Without a launcher they stay where they were.
    sb.nvcc().env("NVCC_APPEND_FLAGS", "-DLAST").args(["-c", "k.cu"]).assert().success();
    let record = sb.recorded();
    assert!(!record.args().contains(&"-DLAST".to_string()));
    assert_eq!(record.env("NVCC_APPEND_FLAGS").as_deref(), Some("-DLAST"));
}

/// `NVCC_CCBIN` alone names the host compiler: behind a launcher the wrapper also passes it as `-ccbin=`, which the
/// cache hashes (ccache does not read the variable) and nvcc takes for the same compiler.
#[test]
fn nvcc_ccbin_is_also_passed_as_ccbin_behind_a_launcher() {
    let sb = Sandbox::new();
    let launcher = fake_launcher(&sb, "ccache", "4.7.5");
    let cc = sb.cc.display().to_string();
    sb.nvcc().env("NVCC_WRAPPER_LAUNCHER", &launcher).env("NVCC_CCBIN", &cc).args(["-c", "k.cu"]).assert().success();
    let record = sb.recorded();
    assert!(record.args().contains(&format!("-ccbin={cc}")), "{:?}", record.args());
    assert_eq!(record.env("NVCC_CCBIN").as_deref(), Some(cc.as_str()));
    // A -ccbin on the command line wins over NVCC_CCBIN for nvcc: nothing is added then.
    sb.nvcc()
        .env("NVCC_WRAPPER_LAUNCHER", &launcher)
        .env("NVCC_CCBIN", "/nowhere/g++")
        .args(["-c", "k.cu", &sb.ccbin()])
        .assert()
        .success();
    assert!(!sb.recorded().args().iter().any(|a| a.contains("/nowhere")), "{:?}", sb.recorded().args());
}

/// The known-bad launchers are compat-data/launchers.toml: a config's `compat-data` replaces the table, so a row can
/// be added (with a last NVCC release) or the built-in one dropped, and a broken file is an error naming it.
#[test]
fn a_compat_data_launchers_toml_replaces_the_known_bad_table() {
    let sb = Sandbox::new();
    let ccache = fake_launcher(&sb, "ccache", "4.7.5");
    let row = "[[known-bad]]\nlauncher = \"ccache\"\nfirst-version = \"4.7\"\nlast-version = \"4.8\"\n\
               first-cuda = \"12.0\"\nlast-cuda = \"13.0\"\nwhy = \"it says no\"\nsource = \"reported: a test\"\n";
    sb.write("data/launchers.toml", row);
    config_with(&sb, &format!("compat-data = \"{}\"\n", sb.dir.path().join("data").display()));
    let out = sb.nvcc().env("NVCC_WRAPPER_LAUNCHER", &ccache).env("NVCC_WRAPPER_LOG", "debug").arg("-c").output();
    let out = out.unwrap();
    assert!(out.status.success() && sb.ran() && launcher_args(&sb, "ccache").is_none(), "{}", stderr(&out));
    let note = "is left out: ccache 4.7.5 fails with nvcc 12.0 to 13.0, without the wrapper too: it says no \
                (reported: a test); nvcc runs without a cache";
    assert!(stderr(&out).contains(note), "{}", stderr(&out));

    // No rows: sccache 0.16 is kept on 13.5, which the built-in table leaves it out for.
    sb.write("data/launchers.toml", "known-bad = []\n");
    std::fs::write(
        sb.dir.path().join("cuda/version.json"),
        r#"{"cuda_nvcc": {"name": "CUDA NVCC", "version": "13.5.44"}}"#,
    )
    .unwrap();
    let sccache = fake_launcher(&sb, "sccache", "0.16.0");
    let probes = sb.dir.path().join("probes");
    let nvcc = || {
        let mut cmd = sb.nvcc();
        cmd.env("NVCC_WRAPPER_LAUNCHER", &sccache).env("NVCC_WRAPPER_PROBE_CACHE_DIR", &probes).args(["-c", "k.cu"]);
        cmd
    };
    nvcc().assert().success();
    assert!(launcher_args(&sb, "sccache").is_some(), "sccache was left out");

    // A row that breaks an invariant: exit 78, naming the file, and nvcc does not run.
    std::fs::remove_file(sb.dir.path().join("sccache.args")).unwrap();
    sb.write("data/launchers.toml", &row.replace("last-version = \"4.8\"", "last-version = \"4.6\""));
    let out = nvcc().output().unwrap();
    assert_eq!(out.status.code(), Some(78), "{}", stderr(&out));
    assert!(stderr(&out).contains("launchers.toml") && stderr(&out).contains("last-version"), "{}", stderr(&out));
    assert!(launcher_args(&sb, "sccache").is_none());
}

/// Issue 33, item 6: a launcher *script* that runs the wrapper again was reported as "this wrapper itself", which it
/// is not (the user would look for a link or a copy of the wrapper). It is now named for what it is, a program that
/// runs the wrapper instead of the real nvcc it is given, and the help says what a launcher must do; a launcher that
/// drops the real nvcc and runs `nvcc` (the wrapper) loops until the depth counter stops it, which now names the
/// launcher too. A launcher that is the wrapper keeps its own words (tests/wrapper/hostile.rs).
#[test]
fn issue_33_a_launcher_script_that_runs_the_wrapper_is_named_for_what_it_is() {
    let sb = Sandbox::new();
    let script = |name: &str, body: &str| {
        let path = sb.write(&format!("launchers/{name}"), &format!("#!/bin/sh\n{body}\n"));
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        path
    };
    let by_name = script("via-wrapper", &format!("exec '{WRAPPER}' \"$@\""));
    let via_path = script("via-path", "exec nvcc \"$@\"");
    for launcher in [&by_name, &via_path] {
        let out = sb.nvcc().env("NVCC_WRAPPER_LAUNCHER", launcher).args(["-c", "k.cu"]).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(125), "{}: {err}", launcher.display());
        let named = format!("`launcher` ({}, from $NVCC_WRAPPER_LAUNCHER)", launcher.display());
        assert!(err.contains(&format!("{named} is not this wrapper but runs it again")), "{err}");
        assert!(err.contains("instead of the real nvcc it is given"), "{err}");
        assert!(!err.contains("is this wrapper itself"), "{err}");
        assert!(err.contains("help: a launcher must run the command it is given"), "{err}");
        assert_eq!(err.lines().count(), 2, "{err}");
        assert!(!sb.ran());
    }
    // From the config file, by a name on PATH: the same words, naming the file.
    config_with(&sb, "launcher = \"via-path\"\n");
    let path =
        std::env::join_paths(std::iter::once(sb.dir.path().join("launchers")).chain(std::env::split_paths(&sb.path())))
            .unwrap();
    let out = sb.nvcc().env("PATH", &path).args(["-c", "k.cu"]).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(125), "{err}");
    // Named by the file and the line of the key.
    let text = std::fs::read_to_string(&sb.config).unwrap();
    let line = text.lines().position(|l| l.starts_with("launcher =")).unwrap() + 1;
    let named = format!("`launcher` (via-path, from {}:{line})", sb.config.display());
    assert!(err.contains(&format!("{named} is not this wrapper but runs it again")), "{err}");

    // A launcher that leaves out the real nvcc and runs `nvcc`: a chain, stopped at the depth limit, naming it.
    let dropped = script("drops-nvcc", "shift\nexec nvcc \"$@\"");
    let out = sb.nvcc().env("NVCC_WRAPPER_LAUNCHER", &dropped).args(["-c", "k.cu"]).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(125), "{err}");
    let through =
        format!("or `launcher` ({}, from $NVCC_WRAPPER_LAUNCHER), which it runs nvcc through, does", dropped.display());
    assert!(err.contains("started 8 times in a chain") && err.contains(&through), "{err}");
    assert!(err.contains("help: a launcher must run the command it is given"), "{err}");
    assert!(!sb.ran());
}
