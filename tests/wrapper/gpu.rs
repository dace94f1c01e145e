//! GPU capabilities as a user meets them, in front of the fake nvcc (the sandbox's toolkit says 13.0.88): what
//! reaches nvcc, the environment overrides, the arch-flags policies, the errors, and `nvcc-wrapper gencode`.

use crate::support::*;

const OURS: [&str; 3] = [
    "-gencode=arch=compute_86,code=sm_86",
    "-gencode=arch=compute_90a,code=sm_90a",
    "-gencode=arch=compute_90,code=compute_90",
];

fn with_gpu(sb: &Sandbox, gpu: &str) -> std::path::PathBuf {
    let base = std::fs::read_to_string(&sb.config).unwrap();
    sb.write("gpu.toml", &format!("{base}[gpu]\n{gpu}"))
}

#[test]
fn configured_capabilities_reach_nvcc_before_the_users_arguments() {
    let sb = Sandbox::new();
    let cfg = with_gpu(&sb, "capabilities = [\"9.0a\", \"8.6\"]\nforward-compat = true\n");
    sb.nvcc().env("NVCC_WRAPPER_CONFIG", &cfg).args(["-c", "a.cu", "-o", "a.o"]).assert().success();
    let mut want = vec![sb.ccbin()];
    want.extend(OURS.map(String::from));
    want.push(sb.compression());
    want.extend(["-c", "a.cu", "-o", "a.o"].map(String::from));
    assert_eq!(sb.recorded().args(), want);
}

#[test]
fn the_environment_overrides_the_config() {
    let sb = Sandbox::new();
    let cfg = with_gpu(&sb, "capabilities = [\"7.5\"]\n");
    sb.nvcc()
        .env("NVCC_WRAPPER_CONFIG", &cfg)
        .env("NVCC_WRAPPER_CAPABILITIES", "sm_86;90a-real")
        .env("NVCC_WRAPPER_FORWARD_COMPAT", "1")
        .args(["-c", "a.cu"])
        .assert()
        .success();
    assert_eq!(sb.recorded().args()[1..4], OURS);
    // Without any config file too.
    let sb = Sandbox::new();
    sb.nvcc().env("NVCC_WRAPPER_CAPABILITIES", "8.6").args(["-c", "a.cu"]).assert().success();
    assert_eq!(sb.recorded().args()[1], OURS[0]);
}

#[test]
fn bad_environment_values_exit_64_naming_them() {
    let sb = Sandbox::new();
    for (var, value) in [("NVCC_WRAPPER_CAPABILITIES", "8.6;ampere"), ("NVCC_WRAPPER_FORWARD_COMPAT", "sometimes")] {
        let out = sb.nvcc().env(var, value).args(["-c", "a.cu"]).output().unwrap();
        assert_eq!(out.status.code(), Some(64), "{var}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(var) && err.contains(value) && err.contains("help:"), "{err}");
        assert!(!sb.ran());
    }
}

#[test]
fn a_capability_this_release_cannot_build_exits_65() {
    let sb = Sandbox::new();
    for (caps, says) in [("7.0", "7.0 was last accepted by nvcc 12.9"), ("10.1", "10.1 was last accepted by nvcc 12.9")]
    {
        let out = sb.nvcc().env("NVCC_WRAPPER_CAPABILITIES", caps).args(["-c", "a.cu"]).output().unwrap();
        assert_eq!(out.status.code(), Some(65), "{caps}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains("nvcc 13.0 cannot build") && err.contains(says), "{err}");
        assert!(err.contains("help: nvcc 13.0 accepts, for x86_64-linux: 7.5, 8.0,"), "{err}");
    }
    let out = sb.nvcc().env("NVCC_WRAPPER_CAPABILITIES", "8.7").args(["-c", "a.cu"]).output().unwrap();
    assert_eq!(out.status.code(), Some(65));
    assert!(stderr(&out).contains("8.7 is Jetson Orin"), "{}", stderr(&out));
    assert!(!sb.ran());
    // Query modes are never judged.
    sb.nvcc().env("NVCC_WRAPPER_CAPABILITIES", "7.0").arg("--version").assert().success();
}

#[test]
fn replace_takes_out_the_users_targets_everywhere_and_says_so() {
    let sb = Sandbox::new();
    let cfg = with_gpu(&sb, "capabilities = [\"8.6\"]\narch-flags = \"replace\"\n");
    sb.write("targets.opt", "-gencode arch=compute_70,code=sm_70 -DFROM_FILE");
    let out = sb
        .nvcc()
        .env("NVCC_WRAPPER_CONFIG", &cfg)
        .env("NVCC_WRAPPER_LOG", "debug")
        .env("NVCC_PREPEND_FLAGS", "-arch=sm_50 -DX=\"a b\"")
        .env("NVCC_APPEND_FLAGS", "--gpu-code sm_52")
        .args(["-arch", "sm_60", "-optf", "targets.opt", "-c", "a.cu"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let record = sb.recorded();
    let args = record.args();
    // The options file lost its target: nvcc reads what remains from a new options file in its place.
    assert_eq!(args[..4], [sb.ccbin(), OURS[0].to_string(), sb.compression(), "-optf".to_string()]);
    assert_eq!(args[5..], ["-c", "a.cu"]);
    assert!(args[4].ends_with(".optf"), "{args:?}");
    assert_eq!(std::fs::read_to_string(&args[4]).unwrap(), "\"-DFROM_FILE\"\n");
    assert_eq!(record.env("NVCC_PREPEND_FLAGS").as_deref(), Some("-DX=\"a b\""));
    assert_eq!(record.env("NVCC_APPEND_FLAGS").as_deref(), Some(""));
    let err = stderr(&out);
    for removed in [
        "  - -arch=sm_50 (from $NVCC_PREPEND_FLAGS): ",
        "  - -arch sm_60 (from the command line): ",
        "  - -gencode arch=compute_70,code=sm_70 (from options file ",
        "  - --gpu-code sm_52 (from $NVCC_APPEND_FLAGS): ",
    ] {
        assert!(err.contains(removed), "{removed:?} not in:\n{err}");
    }
}

#[test]
fn respect_and_explain() {
    let sb = Sandbox::new();
    let cfg = with_gpu(&sb, "capabilities = [\"8.6\"]\n");
    sb.nvcc().env("NVCC_WRAPPER_CONFIG", &cfg).args(["-arch=sm_80", "-c", "a.cu"]).assert().success();
    assert_eq!(sb.recorded().args(), [sb.ccbin(), sb.compression(), "-arch=sm_80".into(), "-c".into(), "a.cu".into()]);
    let out = sb
        .wrapper_cli()
        .env("NVCC_WRAPPER_CONFIG", &cfg)
        .env("NVCC_WRAPPER_CAPABILITIES", "8.6")
        .args(["explain", "--", "-arch=sm_80", "-c", "a.cu"])
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(text.contains("override: `[gpu] capabilities` is \"8.6\", from $NVCC_WRAPPER_CAPABILITIES"), "{text}");
    assert!(text.contains("GPU targets are given by `-arch sm_80` in the command line: nothing is added"), "{text}");
    let replace = with_gpu(&sb, "capabilities = [\"8.6\"]\narch-flags = \"replace\"\n");
    let out = sb
        .wrapper_cli()
        .env("NVCC_WRAPPER_CONFIG", &replace)
        .env("NVCC_APPEND_FLAGS", "-arch=sm_80 -O2")
        .args(["explain", "--", "-c", "a.cu"])
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(text.contains("  - -arch=sm_80 (from $NVCC_APPEND_FLAGS): `[gpu] arch-flags = \"replace\"`"), "{text}");
    assert!(text.contains("  = NVCC_APPEND_FLAGS=-O2 (for nvcc)"), "{text}");
    assert!(text.contains("  + -gencode=arch=compute_86,code=sm_86 (before your arguments)"), "{text}");
    // The dry run shows the rewritten variable as a shell assignment.
    let out = sb
        .nvcc()
        .env("NVCC_WRAPPER_CONFIG", &replace)
        .env("NVCC_WRAPPER_DRY_RUN", "1")
        .env("NVCC_APPEND_FLAGS", "-arch=sm_80 -O2")
        .args(["-c", "a.cu"])
        .output()
        .unwrap();
    let line = stdout(&out);
    assert!(line.starts_with("NVCC_APPEND_FLAGS=-O2 /"), "{line}");
    assert!(line.ends_with(&format!("{} {} {} -c a.cu\n", sb.ccbin(), OURS[0], sb.compression())), "{line}");
}

#[test]
fn gencode_prints_the_same_expansion_in_three_forms() {
    let sb = Sandbox::new();
    let out = sb.wrapper_cli().args(["gencode", "--forward-compat", "9.0a;86-real", "sm_86"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), OURS.join("\n") + "\n");
    let out =
        sb.wrapper_cli().args(["gencode", "--format", "cmake", "--forward-compat", "8.6", "9.0a"]).output().unwrap();
    assert_eq!(stdout(&out), "86-real;90a-real;90-virtual\n");
    let out = sb
        .wrapper_cli()
        .args(["gencode", "--format", "json", "--cuda-version", "12.4", "--platform", "jetson", "8.7"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["gencode"][0], "-gencode=arch=compute_87,code=sm_87");
    assert_eq!(json["checked_against"], "12.4");
    assert_eq!(json["platform"], "aarch64-linux");
    assert_eq!(json["ptx"], serde_json::json!([]));
    assert_eq!(json["torch"], "8.7");
}

/// A `TORCH_CUDA_ARCH_LIST` with PyTorch's names reads as PyTorch's extension builder reads it (issue 50, item 9),
/// in the environment the drop-in reads as in `gencode`; a name PyTorch would refuse is refused with what to write.
#[test]
fn pytorchs_architecture_names_read_as_pytorch_reads_them() {
    let sb = Sandbox::new();
    let out = sb.wrapper_cli().args(["gencode", "--format", "torch", "Ampere Hopper"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "8.0;8.6+PTX;9.0+PTX\n");
    sb.nvcc().env("NVCC_WRAPPER_CAPABILITIES", "Turing;Ampere").args(["-c", "a.cu"]).assert().success();
    let args = sb.recorded().args();
    for flag in ["arch=compute_75,code=sm_75", "arch=compute_80,code=sm_80", "arch=compute_86,code=compute_86"] {
        assert!(args.iter().any(|a| a.ends_with(flag)), "{flag} missing from {args:?}");
    }
    let out = sb.wrapper_cli().args(["gencode", "ampere"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("PyTorch's name is `Ampere`"), "{}", stderr(&out));
}

#[test]
fn gencode_checks_what_it_is_told_to() {
    let sb = Sandbox::new();
    // No release known (no nvcc on PATH): only the table, any known capability, for this machine's x86_64.
    sb.wrapper_cli().env("PATH", "/usr/bin:/bin").args(["gencode", "3.5", "12.1f"]).assert().success();
    let rows: &[(&[&str], i32, &str)] = &[
        (&["9.5"], 65, "9.5 is not a known GPU capability"),
        // The release the drop-in would use: the sandbox's nvcc says 13.0.88 (issue 39).
        (&["7.0;8.6"], 65, "nvcc 13.0 cannot build these GPU targets: 7.0 was last accepted by nvcc 12.9"),
        (&["8.7"], 65, "8.7 is Jetson Orin, which the target x86_64-linux is not"),
        (&["--cuda-version", "11.8", "9.0a"], 65, "9.0a needs nvcc 12.0 or later"),
        (&["--cuda-version", "13.0", "7.0"], 65, "7.0 was last accepted by nvcc 12.9"),
        (&["--cuda-version", "12.4", "--system", "x86_64-linux", "8.7"], 65, "8.7 is Jetson Orin"),
        (&["Ampere+PTX"], 2, "`Ampere+PTX` is not a GPU target like 8.6"),
        (&["--cuda-version", "twelve", "8.6"], 2, "twelve"),
    ];
    for (args, code, says) in rows {
        let out = sb.wrapper_cli().arg("gencode").args(*args).output().unwrap();
        assert_eq!(out.status.code(), Some(*code), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
        assert_eq!(stdout(&out), "");
    }
}

/// `gencode` decides the release as the drop-in does (issue 59: it had a copy of the rule, which trusted the config's
/// `cuda-version` over the toolkit's version.json): a config saying 12.4 under a toolkit of 13.0 is said and overruled,
/// by both, with the same words; with no nvcc found, the config's release stands.
#[test]
fn gencode_decides_the_release_as_the_drop_in_does() {
    let sb = Sandbox::new();
    let config = sb.dir.path().join("old.toml");
    std::fs::write(&config, "cuda-version = \"12.4\"\n").unwrap();
    let warning = "`cuda-version` is 12.4 (";
    let overruled = "but the nvcc that runs is 13.0.88 (its toolkit's version.json): deciding for 13.0.88";
    let out = sb.wrapper_cli().env("NVCC_WRAPPER_CONFIG", &config).args(["gencode", "7.0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(65), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains(warning) && err.contains(overruled), "{err}");
    assert!(err.contains("7.0 was last accepted by nvcc 12.9"), "{err}");
    let explained = sb.wrapper_cli().env("NVCC_WRAPPER_CONFIG", &config).args(["explain", "--", "-c", "a.cu"]).output();
    let explained = explained.unwrap();
    assert!(stdout(&explained).contains(overruled) || stderr(&explained).contains(overruled), "{explained:?}");
    // No nvcc on PATH: nothing contradicts the config, and 12.4 accepts 7.0.
    let out = sb
        .wrapper_cli()
        .env("NVCC_WRAPPER_CONFIG", &config)
        .env("PATH", "/usr/bin:/bin")
        .args(["gencode", "7.0"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "-gencode=arch=compute_70,code=sm_70\n");
}

/// One `nvcc-wrapper: error:` line and one `help:` line, exit 65, nvcc not run.
fn refused_before_nvcc(sb: &Sandbox, out: &std::process::Output) -> (String, String) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(65), "{err}");
    assert!(!sb.ran(), "nvcc ran: {err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    let error = lines[0].strip_prefix("nvcc-wrapper: error: ").unwrap_or_else(|| panic!("{err}"));
    let help = lines[1].strip_prefix("help: ").unwrap_or_else(|| panic!("{err}"));
    (error.to_string(), help.to_string())
}

const NVCC_SAYS: &str =
    "(\"The same GPU code (`sm_100f`) generated for non family-specific and family-specific GPU arch\")";

#[test]
fn a_pair_nvcc_refuses_together_is_refused_before_nvcc_in_every_phase_and_by_gencode_and_explain() {
    let sb = Sandbox::new();
    let cfg = with_gpu(&sb, "capabilities = [\"10.0f\", \"8.6\", \"10.0\"]\n");
    let keep = "keep one of 10.0 and 10.0f: nvcc 13.0 would store both in one GPU image;";
    // A compile, and a device-LTO compile, whose objects nvcc would compile but refuse to link.
    for (args, says) in [
        (&["-c", "a.cu"][..], "nvcc 13.0 cannot build 10.0 and 10.0f together: it refuses the pair "),
        (&["-dc", "-dlto", "a.cu"][..], "nvcc 13.0 cannot build 10.0 and 10.0f together"),
        (&["-dlink", "-dlto", "a.o"][..], "nvcc 13.0 cannot build 10.0 and 10.0f together"),
    ] {
        let out = sb.nvcc().env("NVCC_WRAPPER_CONFIG", &cfg).args(args).output().unwrap();
        let (error, help) = refused_before_nvcc(&sb, &out);
        assert!(error.starts_with(says) && error.ends_with(NVCC_SAYS), "{args:?}: {error}");
        assert!(help.starts_with(keep), "{help}");
    }
    // explain and gencode say the same.
    let out = sb.wrapper_cli().env("NVCC_WRAPPER_CONFIG", &cfg).args(["explain", "--", "-c", "a.cu"]).output().unwrap();
    assert_eq!(out.status.code(), Some(65));
    assert!(stderr(&out).contains("cannot build 10.0 and 10.0f together"), "{}", stderr(&out));
    let out = sb.wrapper_cli().args(["gencode", "--cuda-version", "13.5", "10.0f", "12.0", "12.0f"]).output().unwrap();
    let (error, help) = refused_before_nvcc(&sb, &out);
    assert!(error.starts_with("nvcc 13.5 cannot build 12.0 and 12.0f together"), "{error}");
    assert!(help.starts_with("keep one of 12.0 and 12.0f: nvcc 13.5 "), "{help}");
    assert_eq!(stdout(&out), "");
    // What nvcc builds is let through: other kinds, other numbers; and 12.9, which is not measured.
    for list in [&["10.0", "10.0a", "10.3f"][..], &["10.0a", "10.0f"], &["10.0", "10.3f"]] {
        sb.wrapper_cli().args(["gencode", "--cuda-version", "13.5"]).args(list).assert().success();
    }
    sb.wrapper_cli().args(["gencode", "--cuda-version", "12.9", "10.0", "10.0f"]).assert().success();
}

#[test]
fn appended_capabilities_that_nvcc_refuses_next_to_the_users_targets_are_refused() {
    let sb = Sandbox::new();
    let append = with_gpu(&sb, "capabilities = [\"10.0f\"]\narch-flags = \"append\"\n");
    let help = "drop 10.0f from `[gpu] capabilities`, or set `[gpu] arch-flags = \"replace\"`";
    for (args, given) in [
        (&["-arch=sm_100", "-c", "a.cu"][..], "`-arch sm_100` in the command line"),
        (&["-gencode", "arch=compute_100,code=[sm_100,compute_100]", "-c", "a.cu"], "`-gencode arch=compute_100,"),
        (&["-dlink", "-dlto", "-arch=sm_100", "a.o"], "`-arch sm_100` in the command line"),
    ] {
        let out = sb.nvcc().env("NVCC_WRAPPER_CONFIG", &append).args(args).output().unwrap();
        let (error, got_help) = refused_before_nvcc(&sb, &out);
        assert!(error.starts_with("nvcc 13.0 cannot "), "{error}");
        assert!(error.contains(given) && error.contains(" with 10.0f from `[gpu] capabilities`"), "{error}");
        assert!(error.ends_with(NVCC_SAYS), "{error}");
        assert!(got_help.starts_with(help), "{got_help}");
    }
    // Built as nvcc builds them: the same target twice, a virtual architecture, another number; and under the
    // other policies, which never put the two side by side.
    for args in
        [&["-arch=sm_100f", "-c", "a.cu"][..], &["-arch=compute_100", "-c", "a.cu"], &["-arch=sm_103", "-c", "a.cu"]]
    {
        let out = sb.nvcc().env("NVCC_WRAPPER_CONFIG", &append).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    }
    for policy in ["respect", "replace"] {
        let cfg = with_gpu(&sb, &format!("capabilities = [\"10.0f\"]\narch-flags = \"{policy}\"\n"));
        let out = sb.nvcc().env("NVCC_WRAPPER_CONFIG", &cfg).args(["-arch=sm_100", "-c", "a.cu"]).output().unwrap();
        assert!(out.status.success(), "{policy}: {}", stderr(&out));
    }
}
