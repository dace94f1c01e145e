//! Fatbin compression as a user meets it, in front of the fake nvcc (the sandbox's toolkit says 13.0.88): the
//! default and its reason, the opt-outs, and a user's own choice in each channel left alone (issue 14).

use crate::support::*;

fn with_config(sb: &Sandbox, extra: &str) -> std::path::PathBuf {
    let base = std::fs::read_to_string(&sb.config).unwrap();
    sb.write("fatbin.toml", &format!("{extra}\n{base}"))
}

#[test]
fn the_default_is_added_with_its_reason_and_each_opt_out_removes_it() {
    let sb = Sandbox::new();
    let out = sb.wrapper_cli().env("NVCC_WRAPPER_CONFIG", &sb.config).args(["explain", "--", "-c", "a.cu"]).output();
    let text = stdout(&out.unwrap());
    assert!(
        text.contains("  + --compress-mode=size (before your arguments): `[gpu] compress-fatbin` (on unless set to false): the smallest fatbins nvcc 13.0 writes (compat-data/fatbin.toml)"),
        "{text}"
    );
    // The release decides the flags: 12.4 has no --compress-mode.
    let cfg = with_config(&sb, "cuda-version = \"12.4\"");
    sb.toolkit_says("12.4.131");
    sb.nvcc().env("NVCC_WRAPPER_CONFIG", &cfg).args(["-c", "a.cu"]).assert().success();
    assert_eq!(sb.recorded().args(), [sb.ccbin().as_str(), "-Xfatbin=-compress-all", "-c", "a.cu"]);
    sb.toolkit_says("13.0.88");
    // Off in the config, and from the environment (which wins over the config either way).
    let off = sb.write(
        "off.toml",
        &format!("{}[gpu]\ncompress-fatbin = false\n", std::fs::read_to_string(&sb.config).unwrap()),
    );
    for (config, env) in [(&off, None), (&sb.config, Some("0")), (&sb.config, Some("off"))] {
        let mut cmd = sb.nvcc();
        cmd.env("NVCC_WRAPPER_CONFIG", config);
        if let Some(value) = env {
            cmd.env("NVCC_WRAPPER_COMPRESS_FATBIN", value);
        }
        cmd.args(["-c", "a.cu"]).assert().success();
        assert_eq!(sb.recorded().args(), [sb.ccbin().as_str(), "-c", "a.cu"], "{env:?}");
    }
    sb.nvcc()
        .env("NVCC_WRAPPER_CONFIG", &off)
        .env("NVCC_WRAPPER_COMPRESS_FATBIN", "1")
        .args(["-c", "a.cu"])
        .assert()
        .success();
    assert_eq!(sb.recorded().args(), [sb.ccbin(), sb.compression(), "-c".into(), "a.cu".into()]);
    // A value that is not a switch is the environment's error.
    let out = sb.nvcc().env("NVCC_WRAPPER_COMPRESS_FATBIN", "smallest").args(["-c", "a.cu"]).output().unwrap();
    assert_eq!(out.status.code(), Some(64), "{}", stderr(&out));
    assert!(stderr(&out).contains("NVCC_WRAPPER_COMPRESS_FATBIN=smallest: not a switch"), "{}", stderr(&out));
}

#[test]
fn a_users_own_choice_in_any_channel_is_left_alone_and_explained() {
    let sb = Sandbox::new();
    sb.write("opts.txt", "-Xfatbin -compress-all");
    // (command line, environment, what explain says about it)
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);
    let cases: &[Case] = &[
        (&["--no-compress", "-c", "a.cu"], &[], "`--no-compress` in the command line"),
        (&["-c", "a.cu"], &[("NVCC_APPEND_FLAGS", "--compress-mode=balance")], "$NVCC_APPEND_FLAGS"),
        (&["-c", "a.cu"], &[("NVCC_PREPEND_FLAGS", "-Xfatbin=-compress-all")], "$NVCC_PREPEND_FLAGS"),
        (&["-optf", "opts.txt", "-c", "a.cu"], &[], "`-Xfatbin -compress-all` in options file"),
    ];
    for (args, env, said) in cases {
        let mut cmd = sb.nvcc();
        cmd.envs(env.iter().copied()).args(*args).assert().success();
        let mut want = vec![sb.ccbin()];
        want.extend(args.iter().map(|a| a.to_string()));
        assert_eq!(sb.recorded().args(), want, "{args:?} {env:?}");
        let mut explain = sb.wrapper_cli();
        explain.env("NVCC_WRAPPER_CONFIG", &sb.config).envs(env.iter().copied()).arg("explain").arg("--").args(*args);
        let text = stdout(&explain.output().unwrap());
        assert!(text.contains("chooses the fatbin compression: nothing is added") && text.contains(said), "{text}");
    }
    // A phase that writes no fatbin gets nothing, and says so.
    sb.nvcc().args(["-E", "a.cu"]).assert().success();
    assert_eq!(sb.recorded().args(), [sb.ccbin().as_str(), "-E", "a.cu"]);
}
