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
        .env("NVCC_WRAPPER_CAPABILITIES", "sm_86;90a")
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
    let out = sb.wrapper_cli().args(["gencode", "--forward-compat", "9.0a;86", "sm_86"]).output().unwrap();
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
    assert_eq!(json["ptx"], serde_json::Value::Null);
}

#[test]
fn gencode_checks_what_it_is_told_to() {
    let sb = Sandbox::new();
    // Only the table: any known capability.
    sb.wrapper_cli().args(["gencode", "3.5", "8.7", "12.1f"]).assert().success();
    let rows: &[(&[&str], i32, &str)] = &[
        (&["9.5"], 65, "9.5 is not a known GPU capability"),
        (&["--cuda-version", "11.8", "9.0a"], 65, "9.0a needs nvcc 12.0 or later"),
        (&["--cuda-version", "13.0", "7.0"], 65, "7.0 was last accepted by nvcc 12.9"),
        (&["--cuda-version", "12.4", "--system", "x86_64-linux", "8.7"], 65, "8.7 is Jetson Orin"),
        (&["ampere"], 2, "`ampere` is not a GPU capability"),
        (&["--cuda-version", "twelve", "8.6"], 2, "twelve"),
    ];
    for (args, code, says) in rows {
        let out = sb.wrapper_cli().arg("gencode").args(*args).output().unwrap();
        assert_eq!(out.status.code(), Some(*code), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
        assert_eq!(stdout(&out), "");
    }
}
