//! Reproducible builds in front of the fake nvcc (the sandbox's toolkit says 13.0.88): the flags of
//! compat-data/reproducible.toml reach nvcc before the user's arguments, the process id they name is the one nvcc
//! runs under, the user's own choices win, the key and the variable turn it off, and `explain` says each flag's
//! reason and what no flag fixes. That the flags make real outputs identical is tests/real/reproducible.rs.

use crate::support::*;

/// The sandbox with the step on (its config turns it off for every other test).
fn on(cmd: &mut assert_cmd::Command) -> &mut assert_cmd::Command {
    cmd.env("NVCC_WRAPPER_REPRODUCIBLE", "1")
}

#[test]
fn a_compile_gets_its_flags_before_the_users_arguments() {
    let sb = Sandbox::new();
    std::fs::create_dir(sb.dir.path().join("out")).unwrap();
    on(&mut sb.nvcc()).args(["-c", "k.cu", "-o", "out/k.o"]).assert().success();
    let want = [
        sb.ccbin(),
        sb.compression(),
        "-objtemp".into(),
        "-Xcudafe=--orig_src_path_name=k.cu".into(),
        "--frandom-seed=out/k.o".into(),
        "-c".into(),
        "k.cu".into(),
        "-o".into(),
        "out/k.o".into(),
    ];
    assert_eq!(sb.recorded().args(), want);
}

/// Issue 39, item 7: `explain` and `doctor` describe a call that runs under a process id of its own, so the map shows
/// `<pid>`, never the process id of the `explain` that printed it.
#[test]
fn explain_and_doctor_show_a_placeholder_for_the_process_id() {
    let sb = Sandbox::new();
    let explain = on(&mut sb.wrapper_cli()).args(["explain", "--", "k.cu", "-o", "app"]).output().unwrap();
    let doctor = on(&mut sb.wrapper_cli()).arg("doctor").output().unwrap();
    for (name, out) in [("explain", &explain), ("doctor", &doctor)] {
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("'-Xcompiler=-ffile-prefix-map=/tmp/tmpxft_<pid>_=tmpxft_'"), "{name}: {text}");
        assert_eq!(text.matches("tmpxft_").count(), text.matches("tmpxft_<pid>_").count() * 2, "{name}: {text}");
    }
}

#[test]
fn the_process_id_a_one_call_program_maps_is_the_one_nvcc_runs_under() {
    let sb = Sandbox::new();
    let pid_file = sb.dir.path().join("nvcc.pid");
    let tmp = sb.dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    on(&mut sb.nvcc())
        .env("FAKE_NVCC_PID", &pid_file)
        .env("TMPDIR", &tmp)
        .args(["k.cu", "-o", "app"])
        .assert()
        .success();
    let pid: u32 = std::fs::read_to_string(&pid_file).unwrap().parse().unwrap();
    let map = format!("-Xcompiler=-ffile-prefix-map={}/tmpxft_{pid:08x}_=tmpxft_", tmp.display());
    let args = sb.recorded().args();
    assert!(args.contains(&map), "{map} not in {args:?}");
    assert!(!args.contains(&"-objtemp".to_string()), "nvcc takes -objtemp only with -c, -dc, -dw: {args:?}");
    // When the wrapper waits for nvcc (a dependency file to complete), nvcc is its child: no pid is named.
    on(&mut sb.nvcc()).args(["-MD", "k.cu", "-o", "app"]).assert().success();
    let args = sb.recorded().args();
    assert!(!args.iter().any(|a| a.contains("tmpxft_")), "{args:?}");
}

#[test]
fn the_users_own_choices_are_kept_and_win() {
    let sb = Sandbox::new();
    let given = ["--keep-dir", "kd", "--frandom-seed=mine", "-Xcudafe", "--orig_src_path_name=/src/k.cu", "-c", "k.cu"];
    on(&mut sb.nvcc()).args(given).assert().success();
    // Nothing of the step's: the user chose every one of them.
    assert_eq!(sb.recorded().args(), [&[sb.ccbin(), sb.compression()][..], &given.map(String::from)].concat());
    let out = on(&mut sb.wrapper_cli())
        .env("NVCC_WRAPPER_CONFIG", &sb.config)
        .args(["explain", "--"])
        .args(given)
        .output()
        .unwrap();
    let text = stdout(&out);
    for said in [
        "`--keep-dir kd` in the command line is the user's own choice: `-objtemp` is not added",
        "`--frandom-seed mine` in the command line is the user's own choice",
        "`-Xcudafe --orig_src_path_name=/src/k.cu` in the command line is the user's own choice",
    ] {
        assert!(text.contains(said), "{said:?} not in:\n{text}");
    }
}

#[test]
fn the_key_and_the_variable_turn_it_off_and_explain_says_why_each_flag_is_there() {
    let sb = Sandbox::new();
    // The sandbox's config says `reproducible = false`; the variable turns it back on, and off again.
    sb.nvcc().args(["-c", "k.cu"]).assert().success();
    assert!(!sb.recorded().args().contains(&"-objtemp".to_string()));
    sb.nvcc().env("NVCC_WRAPPER_REPRODUCIBLE", "0").args(["-c", "k.cu"]).assert().success();
    assert!(!sb.recorded().args().contains(&"-objtemp".to_string()));
    let out = on(&mut sb.wrapper_cli())
        .env("NVCC_WRAPPER_CONFIG", &sb.config)
        .args(["explain", "--", "-G", "-dc", "k.cu", "-o", "k.o"])
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(text.contains("override: `reproducible` is \"1\", from $NVCC_WRAPPER_REPRODUCIBLE"), "{text}");
    assert!(
        text.contains("  + -objtemp (before your arguments): `reproducible` (on unless set to false): nvcc's temporary files are named after its process id"),
        "{text}"
    );
    assert!(text.contains("device debug info (`-G`) of this call may differ from build to build"), "{text}");
    assert!(text.contains("the same only when every build runs nvcc in the same directory"), "{text}");
    let bad = sb.nvcc().env("NVCC_WRAPPER_REPRODUCIBLE", "sometimes").args(["-c", "k.cu"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(64), "{}", stderr(&bad));
    assert!(stderr(&bad).contains("NVCC_WRAPPER_REPRODUCIBLE"), "{}", stderr(&bad));
}

#[test]
fn behind_a_launcher_no_flag_names_the_process_id() {
    let sb = Sandbox::new();
    let base = std::fs::read_to_string(&sb.config).unwrap();
    // A launcher that runs nvcc as its child, as ccache does.
    let ccache = sb.write(
        "launchers/ccache",
        "#!/bin/sh\n[ \"$1\" = --version ] && { echo 'ccache version 4.7.5'; exit 0; }\nexec \"$@\"\n",
    );
    std::fs::set_permissions(&ccache, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let (top, tables) = base.split_at(base.find('[').unwrap());
    std::fs::write(&sb.config, format!("{top}launcher = \"{}\"\n{tables}", ccache.display())).unwrap();
    on(&mut sb.nvcc()).args(["k.cu", "-o", "app"]).assert().success();
    let args = sb.recorded().args();
    assert!(!args.iter().any(|a| a.contains("tmpxft_")), "{args:?}");
    assert!(args.contains(&"-Xcudafe=--orig_src_path_name=k.cu".to_string()), "{args:?}");
}
