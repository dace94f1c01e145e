//! The wrapper's personalities: the drop-in, `explain`, `doctor` and `gencode` share one preparation, so they cannot
//! disagree (issue 10); and what the wrapper itself prints never panics: a reader that went away ends it quietly, a
//! full disk is a write error.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::*;

/// Each environment the drop-in refuses is a problem for `doctor` too, said with the same words.
#[test]
fn doctor_sees_what_the_drop_in_sees() {
    let sb = Sandbox::new();
    let cases: &[(&str, &str, i32, &str)] = &[
        ("NVCC_WRAPPER_CAPABILITIES", "3.0", 65, "3.0 is not a known GPU capability"),
        ("NVCC_WRAPPER_CAPABILITIES", "zzz", 64, "NVCC_WRAPPER_CAPABILITIES=zzz"),
        ("NVCC_WRAPPER_TARGET_SYSTEM", "mips", 64, "$NVCC_WRAPPER_TARGET_SYSTEM is \"mips\""),
    ];
    for &(name, value, code, says) in cases {
        let out = sb.nvcc().env(name, value).args(["-c", "k.cu"]).output().unwrap();
        assert_eq!(out.status.code(), Some(code), "{name}={value}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{name}={value}: {}", stderr(&out));
        assert!(!sb.ran());

        let out =
            sb.wrapper_cli().env("NVCC_WRAPPER_CONFIG", &sb.config).env(name, value).arg("doctor").output().unwrap();
        let text = stdout(&out);
        assert_eq!(out.status.code(), Some(3), "doctor with {name}={value}:\n{text}{}", stderr(&out));
        let problem = text.lines().find(|l| l.starts_with("problem: ")).unwrap_or_else(|| panic!("{text}"));
        assert!(problem.contains(says), "doctor with {name}={value}:\n{text}");
        assert!(text.contains("\n  help: "), "the problem says what to do:\n{text}");
        assert!(!text.contains("no problems found"), "{text}");
    }
}

/// With nothing wrong, doctor's report for its sample call is `explain`'s for the same call, line for line.
#[test]
fn doctor_shows_the_plan_explain_shows() {
    let sb = Sandbox::new();
    let cli = || {
        let mut cmd = sb.wrapper_cli();
        cmd.env("NVCC_WRAPPER_CONFIG", &sb.config).env("NVCC_WRAPPER_CAPABILITIES", "8.6");
        cmd
    };
    let explain = cli().args(["explain", "--", "doctor.cu", "-o", "doctor"]).output().unwrap();
    assert!(explain.status.success(), "{}", stderr(&explain));
    let doctor = cli().arg("doctor").output().unwrap();
    let (explain, doctor) = (stdout(&explain), stdout(&doctor));
    // The same lines, but for the label of the call: doctor's is a sample, not one the user ran.
    let sample = explain.replace("you ran:     nvcc doctor.cu", "sample call: nvcc doctor.cu");
    assert!(doctor.starts_with(&sample), "doctor:\n{doctor}\nexplain:\n{explain}");
    for want in [
        "  override: `[gpu] capabilities` is \"8.6\", from $NVCC_WRAPPER_CAPABILITIES",
        "release:     13.0.88 (from the toolkit's version.json)",
        "target:      x86_64-linux (this machine)",
        "  + -gencode=arch=compute_86,code=sm_86 (before your arguments)",
    ] {
        assert!(explain.contains(want), "{want:?} missing in:\n{explain}");
    }
    assert!(doctor.ends_with("no problems found\n"), "{doctor}");
}

/// nvcc's own default architecture is named when the wrapper adds no GPU target (a build for the wrong GPU only
/// fails when it runs).
#[test]
fn explain_names_nvccs_default_architecture_when_nothing_is_configured() {
    let sb = Sandbox::new();
    let out =
        sb.wrapper_cli().env("NVCC_WRAPPER_CONFIG", &sb.config).args(["explain", "--", "-c", "k.cu"]).output().unwrap();
    assert!(
        stdout(&out).contains("nvcc 13.0 builds for its default, 7.5 (sm_75 and compute_75 PTX)"),
        "{}",
        stdout(&out)
    );
}

/// `gencode` applies the drop-in's rules for the same release and target, and its errors name its own flags.
#[test]
fn gencode_refuses_what_the_drop_in_refuses_naming_its_flags() {
    let sb = Sandbox::new();
    // The drop-in, with nvcc 13.0 and a Jetson target, refuses: 13.0 ships no Jetson (aarch64-linux) files.
    let config = std::fs::read_to_string(&sb.config).unwrap();
    let jetson =
        sb.write("jetson.toml", &format!("{config}[target]\nplatform = \"jetson\"\n[gpu]\ncapabilities = [\"8.7\"]\n"));
    let out = sb.nvcc().env("NVCC_WRAPPER_CONFIG", &jetson).args(["-c", "k.cu"]).output().unwrap();
    assert_eq!(out.status.code(), Some(65), "{}", stderr(&out));
    assert!(stderr(&out).contains("nvcc 13.0 does not build for the target aarch64-linux"), "{}", stderr(&out));
    assert!(stderr(&out).contains("with `platform = \"sbsa\"`"), "{}", stderr(&out));

    let rows: &[(&[&str], i32, &[&str])] = &[
        (
            &["--cuda-version", "13.0", "--platform", "jetson", "8.7"],
            65,
            &["nvcc 13.0 does not build for the target aarch64-linux", "with `--platform sbsa`"],
        ),
        (&["--system", "riscv64-linux", "8.6"], 2, &["`--system` is \"riscv64-linux\", which is not a target"]),
        (&["--system", "x86_64-linux", "--platform", "jetson", "8.7"], 2, &["`--platform` is \"jetson\""]),
        (
            &["--cuda-version", "12.4", "--system", "x86_64-linux", "8.7"],
            65,
            &["8.7 is Jetson Orin", "pass `--system aarch64-linux --platform jetson`"],
        ),
        (&["--cuda-version", "twelve", "8.6"], 2, &["`--cuda-version twelve`"]),
    ];
    for (args, code, says) in rows {
        let out = sb.wrapper_cli().arg("gencode").args(*args).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(*code), "{args:?}: {err}");
        for s in *says {
            assert!(err.contains(s), "{args:?}: {s:?} missing in {err}");
        }
        assert!(!err.contains("[target]"), "{args:?} blames a config key the user never wrote: {err}");
        assert_eq!(stdout(&out), "", "{args:?}");
    }
    // What the drop-in builds, gencode prints.
    let out = sb.wrapper_cli().args(["gencode", "--cuda-version", "12.4", "--platform", "jetson", "8.7"]).output();
    assert_eq!(stdout(&out.unwrap()), "-gencode=arch=compute_87,code=sm_87\n");
}

/// Each personality that prints: `gencode`, `explain`, `doctor`.
fn printing(sb: &Sandbox) -> Vec<(&'static str, Command)> {
    let mut out = Vec::new();
    for (name, args) in
        [("gencode", &["gencode", "8.6"][..]), ("explain", &["explain", "--", "-c", "k.cu"]), ("doctor", &["doctor"])]
    {
        let mut cmd = Command::new(WRAPPER);
        cmd.env_clear().env("PATH", sb.path()).env("NVCC_WRAPPER_CONFIG", &sb.config).current_dir(sb.dir.path());
        cmd.args(args);
        out.push((name, cmd));
    }
    out
}

#[test]
fn a_reader_that_went_away_ends_the_output_quietly() {
    let sb = Sandbox::new();
    for (name, cmd) in printing(&sb) {
        // The wrapper starts only after the pipe's reading end is closed, so its first write fails with EPIPE.
        let program = cmd.get_program().to_owned();
        let args: Vec<_> = cmd.get_args().map(|a| a.to_owned()).collect();
        let mut shell = Command::new("/bin/sh");
        shell.arg("-c").arg("sleep 0.3; exec \"$@\"").arg("sh").arg(program).args(args);
        shell.env_clear().envs(cmd.get_envs().filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned()))));
        shell.current_dir(sb.dir.path());
        let mut child = shell.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{name}");
    }
}

#[test]
fn a_full_disk_is_a_write_error_not_a_crash() {
    let sb = Sandbox::new();
    for (name, mut cmd) in printing(&sb) {
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let out = cmd.stdout(full).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(74), "{name}: {err}");
        assert!(err.starts_with("nvcc-wrapper: error: cannot write to stdout: "), "{name}: {err}");
        assert!(err.contains("\nhelp: "), "{name}: {err}");
    }
}

/// Issue 22: `gencode` goes through the drop-in's preparation, so with no capabilities named it prints the config's
/// (the environment's override included), checked against the config's release: what CMake's recorded
/// architectures need to follow the wrapper (`-DCMAKE_CUDA_ARCHITECTURES=$(nvcc-wrapper gencode --format cmake)`).
#[test]
fn gencode_reads_the_configs_capabilities_when_none_are_given() {
    let sb = Sandbox::new();
    let config = std::fs::read_to_string(&sb.config).unwrap();
    let gpu = "[gpu]\ncapabilities = [\"9.0a\", \"8.6\"]\nforward-compat = true\n";
    let file = sb.write("gpu.toml", &format!("cuda-version = \"12.4\"\n{config}{gpu}"));
    let gencode = |extra: &[(&str, &str)], args: &[&str]| {
        let mut cmd = sb.wrapper_cli();
        cmd.env("NVCC_WRAPPER_CONFIG", &file).envs(extra.iter().copied()).arg("gencode").args(args);
        cmd.output().unwrap()
    };
    let out = gencode(&[], &["--format", "cmake"]);
    assert_eq!(stdout(&out), "86-real;90a-real;90-virtual\n", "{}", stderr(&out));
    let out = gencode(&[("NVCC_WRAPPER_CAPABILITIES", "8.9")], &["--format", "cmake"]);
    assert_eq!(stdout(&out), "89-real;89-virtual\n", "{}", stderr(&out));
    // Capabilities named on the command line take the place of the config's, forward-compat included.
    let out = gencode(&[], &["7.5"]);
    assert_eq!(stdout(&out), "-gencode=arch=compute_75,code=sm_75\n", "{}", stderr(&out));
    // The config's release judges them where the toolkit does not say another (as the drop-in decides it; here the
    // toolkit says 11.8 too): 11.8 has no 9.0a.
    sb.toolkit_says("11.8.89");
    let old = sb.write("old.toml", &format!("cuda-version = \"11.8\"\n{config}{gpu}"));
    let out = sb.wrapper_cli().env("NVCC_WRAPPER_CONFIG", &old).arg("gencode").output().unwrap();
    assert_eq!(out.status.code(), Some(65), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("nvcc 11.8 cannot build these GPU targets: 9.0a needs nvcc 12.0"),
        "{}",
        stderr(&out)
    );
    // Nothing to print: a usage error saying where capabilities come from.
    let out = sb.wrapper_cli().env("NVCC_WRAPPER_CONFIG", &sb.config).arg("gencode").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("help: name capabilities like 8.6 9.0a, or set `[gpu] capabilities`"),
        "{}",
        stderr(&out)
    );
}

/// Issue 22: `explain --format json` is the plan as data: every change with its step, code and reason, the notes,
/// and the command, word for word what `explain` prints (docs/reference/explain-json.md).
#[test]
fn explain_json_is_the_plan_as_data() {
    let sb = Sandbox::new();
    let cli = |format: &str| {
        let mut cmd = sb.wrapper_cli();
        cmd.env("NVCC_WRAPPER_CONFIG", &sb.config).env("NVCC_WRAPPER_CAPABILITIES", "8.6;9.0a");
        cmd.args(["explain", "--format", format, "--", "-c", "k.cu", "-DX=a b"]);
        cmd.output().unwrap()
    };
    let out = cli("json");
    assert!(out.status.success(), "{}", stderr(&out));
    let plan: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(plan["schema"], 1);
    assert_eq!(plan["config"]["file"], sb.config.to_str().unwrap());
    assert_eq!(plan["config"]["overrides"][0]["variable"], "NVCC_WRAPPER_CAPABILITIES");
    assert_eq!(plan["release"]["status"], "known");
    assert_eq!(plan["release"]["version"], "13.0.88");
    assert_eq!(plan["ran"], serde_json::json!(["-c", "k.cu", "-DX=a b"]));
    let changes = plan["changes"].as_array().unwrap();
    let step_code: Vec<(&str, &str)> =
        changes.iter().map(|c| (c["step"].as_str().unwrap(), c["code"].as_str().unwrap())).collect();
    assert_eq!(step_code, [("host-compiler", "stdenv-accepted"), ("gpu", "capabilities"), ("fatbin", "smallest")]);
    assert_eq!(
        changes[1]["args"],
        serde_json::json!(["-gencode=arch=compute_86,code=sm_86", "-gencode=arch=compute_90a,code=sm_90a"])
    );
    assert!(changes.iter().all(|c| c["action"] == "add" && c["place"] == "before" && c["text"].is_string()));
    // The command is the one `explain` prints, word for word.
    let text = stdout(&cli("text"));
    let runs = text.lines().find_map(|l| l.strip_prefix("runs:")).unwrap();
    let words: Vec<String> = shlex::split(runs.trim()).unwrap();
    assert_eq!(plan["runs"], serde_json::json!(words));
    // Each reason is the sentence `explain` prints for its change.
    for change in changes {
        assert!(text.contains(change["text"].as_str().unwrap()), "{change} not in:\n{text}");
    }
}

/// Issue 33, item 1: with the CUDA `bin` before the wrapper's directory on PATH (a common `.bashrc` order), `nvcc` is
/// the real compiler and a build gets nothing from the wrapper. `doctor` used to say "no problems found"; now it names
/// what `nvcc` is, says what to change, and exits 3. In the right order it says `nvcc` is the wrapper.
#[test]
fn doctor_fails_when_nvcc_on_path_is_not_the_wrapper() {
    let sb = Sandbox::new();
    let wrong =
        std::env::join_paths([&sb.cuda_bin, &sb.wrapper_bin, Path::new("/usr/bin"), Path::new("/bin")]).unwrap();
    let out =
        sb.wrapper_cli().env("PATH", &wrong).env("NVCC_WRAPPER_CONFIG", &sb.config).arg("doctor").output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    let real = sb.cuda_bin.join("nvcc");
    assert!(
        text.contains(&format!("problem: `nvcc` on PATH is {}, not this wrapper", real.display()))
            && text.contains(&format!(
                "help: put the directory of the wrapper's `nvcc` link before {} on PATH",
                sb.cuda_bin.display()
            )),
        "{text}"
    );
    let out = sb.wrapper_cli().env("NVCC_WRAPPER_CONFIG", &sb.config).arg("doctor").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains(&format!("PATH's nvcc: {} (this wrapper)", sb.wrapper_bin.join("nvcc").display())),
        "{}",
        stdout(&out)
    );
    // No `nvcc` at all on PATH: said too (the config names the real one, so the rest still works).
    let none = std::env::join_paths([Path::new("/usr/bin"), Path::new("/bin")]).unwrap();
    let config = sb.write(
        "named.toml",
        &format!("nvcc = \"{}\"\n{}", real.display(), std::fs::read_to_string(&sb.config).unwrap()),
    );
    let out = sb.wrapper_cli().env("PATH", &none).env("NVCC_WRAPPER_CONFIG", &config).arg("doctor").output().unwrap();
    assert!(stdout(&out).contains("problem: there is no `nvcc` on PATH"), "{}", stdout(&out));
}

/// `nvcc-wrapper` alone explains itself, as its help's first line says (issue 50, item 13): the help, on stdout,
/// with success, the same text as `--help`; nothing on stderr.
#[test]
fn the_wrapper_alone_prints_its_help() {
    let alone = Command::new(WRAPPER).output().unwrap();
    let help = Command::new(WRAPPER).arg("--help").output().unwrap();
    assert_eq!(alone.status.code(), Some(0), "{}", stderr(&alone));
    assert!(alone.stderr.is_empty(), "{}", stderr(&alone));
    assert!(stdout(&alone).starts_with("A drop-in nvcc"), "{}", stdout(&alone));
    assert!(stdout(&alone).contains("explain") && stdout(&alone).contains("Usage: nvcc-wrapper <COMMAND>"));
    assert_eq!(stdout(&alone), stdout(&help), "alone and --help differ");
}
