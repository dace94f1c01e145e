//! Where the configuration file is looked for (issue 33, item 2): the named file, the installation's, the user's
//! (`$XDG_CONFIG_HOME`, default `~/.config`), the machine's; the first found applies, whole; a Nix build reads no
//! user or machine file; `explain` and `doctor` list the places and `doctor` names files in places never read.

use std::path::{Path, PathBuf};

use crate::support::*;

/// The sandbox's own config plus one capability, so that reading the file shows in nvcc's arguments.
fn config_with(sb: &Sandbox, capability: &str) -> String {
    let base = std::fs::read_to_string(&sb.config).unwrap();
    format!("{base}\n[gpu]\ncapabilities = [\"{capability}\"]\n")
}

/// The `-gencode` the fake nvcc got, if any.
fn gencode(sb: &Sandbox) -> Vec<String> {
    sb.recorded().args().into_iter().filter(|a| a.starts_with("-gencode=")).collect()
}

fn home(sb: &Sandbox) -> PathBuf {
    let home = sb.dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    home
}

#[test]
fn the_users_file_in_dot_config_is_read_when_none_is_named_or_installed() {
    let sb = Sandbox::new();
    let home = home(&sb);
    sb.write("home/.config/nvcc-wrapper/config.toml", &config_with(&sb, "8.6"));
    sb.nvcc().env_remove("NVCC_WRAPPER_CONFIG").env("HOME", &home).args(["-c", "k.cu"]).assert().success();
    assert_eq!(gencode(&sb), ["-gencode=arch=compute_86,code=sm_86"]);
}

#[test]
fn xdg_config_home_moves_the_users_file_and_a_relative_one_is_ignored() {
    let sb = Sandbox::new();
    let home = home(&sb);
    sb.write("home/.config/nvcc-wrapper/config.toml", &config_with(&sb, "8.6"));
    let xdg = sb.dir.path().join("xdg");
    sb.write("xdg/nvcc-wrapper/config.toml", &config_with(&sb, "8.9"));
    let run = |xdg: &Path| {
        sb.nvcc()
            .env_remove("NVCC_WRAPPER_CONFIG")
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", xdg)
            .args(["-c", "k.cu"])
            .assert()
            .success();
        gencode(&sb)
    };
    assert_eq!(run(&xdg), ["-gencode=arch=compute_89,code=sm_89"]);
    // The XDG specification: a relative value is invalid and is ignored.
    assert_eq!(run(Path::new("xdg")), ["-gencode=arch=compute_86,code=sm_86"]);
}

#[test]
fn the_installations_file_comes_before_the_users_and_the_named_one_before_both() {
    let sb = Sandbox::new();
    let home = home(&sb);
    sb.write("home/.config/nvcc-wrapper/config.toml", &config_with(&sb, "8.6"));
    sb.write("wrapper/share/nvcc-wrapper/config.toml", &config_with(&sb, "9.0"));
    sb.nvcc().env_remove("NVCC_WRAPPER_CONFIG").env("HOME", &home).args(["-c", "k.cu"]).assert().success();
    assert_eq!(gencode(&sb), ["-gencode=arch=compute_90,code=sm_90"]);
    // explain names the user's file, there and ignored whole (issue 39), in text and JSON.
    let user = home.join(".config/nvcc-wrapper/config.toml");
    let explain = |format: &str| {
        let mut cmd = std::process::Command::new(sb.wrapper_bin.join("nvcc-wrapper"));
        cmd.env_clear().env("PATH", sb.path()).env("HOME", &home).current_dir(sb.dir.path());
        cmd.args(["explain", "--format", format, "--", "-c", "k.cu"]).output().unwrap()
    };
    std::os::unix::fs::symlink(WRAPPER, sb.wrapper_bin.join("nvcc-wrapper")).unwrap();
    let text = stdout(&explain("text"));
    let line = format!(
        "  ignored: {} (the user's): the installation's comes first, and files are never merged\n",
        user.display()
    );
    assert!(text.contains(&line), "{text}");
    let json: serde_json::Value = serde_json::from_slice(&explain("json").stdout).unwrap();
    assert_eq!(json["config"]["ignored"], serde_json::json!([user.to_str().unwrap()]));
    let named = sb.write("named.toml", &config_with(&sb, "8.0"));
    sb.nvcc().env("NVCC_WRAPPER_CONFIG", &named).env("HOME", &home).args(["-c", "k.cu"]).assert().success();
    assert_eq!(gencode(&sb), ["-gencode=arch=compute_80,code=sm_80"]);
}

#[test]
fn a_nix_build_reads_no_users_file_but_nix_shell_does() {
    let sb = Sandbox::new();
    let home = home(&sb);
    sb.write("home/.config/nvcc-wrapper/config.toml", "[gpu]\nbogus = 1\n");
    let top = sb.dir.path().join("build");
    std::fs::create_dir_all(&top).unwrap();
    let explain = |shell: bool| {
        let mut cmd = sb.wrapper_cli();
        cmd.env("HOME", &home).env("NIX_BUILD_TOP", &top).args(["explain", "--", "--version"]);
        if shell {
            cmd.env("IN_NIX_SHELL", "impure");
        }
        cmd.output().unwrap()
    };
    let out = explain(false);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let user = home.join(".config/nvcc-wrapper/config.toml");
    assert!(text.contains("config file: none (defaults and probing)"), "{text}");
    assert!(text.contains(&format!("  looked at: {} (the user's): not read in a Nix build", user.display())), "{text}");
    assert!(
        text.contains("  looked at: /etc/nvcc-wrapper/config.toml (the machine's): not read in a Nix build"),
        "{text}"
    );
    // In nix-shell the user's own file applies (here a bad one, so the error proves it was read).
    let out = explain(true);
    assert_eq!(out.status.code(), Some(78), "{}", stdout(&out));
    assert!(stderr(&out).contains(&format!("{}:2:1", user.display())), "{}", stderr(&out));
}

#[test]
fn explain_lists_every_place_looked_at_in_text_and_json() {
    let sb = Sandbox::new();
    let home = home(&sb);
    let user = sb.write("home/.config/nvcc-wrapper/config.toml", &config_with(&sb, "8.6"));
    // Started through a link in the wrapper's bin: the installation's place is beside that link, then beside the
    // executable itself.
    let link = sb.wrapper_bin.join("nvcc-wrapper");
    std::os::unix::fs::symlink(WRAPPER, &link).unwrap();
    let explain = |format: &[&str]| {
        let mut cmd = std::process::Command::new(&link);
        cmd.env_clear().env("PATH", sb.path()).env("HOME", &home).current_dir(sb.dir.path());
        cmd.arg("explain").args(format).args(["--", "-c", "k.cu"]).output().unwrap()
    };
    let out = explain(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let beside_link = sb.wrapper_bin.join("../share/nvcc-wrapper/config.toml");
    let beside_exe = Path::new(WRAPPER).parent().unwrap().join("../share/nvcc-wrapper/config.toml");
    let expected = format!(
        "config file: {} (the user's)\n  looked at: {} (the installation's): none there\n  looked at: {} (the installation's): none there\n",
        user.display(),
        beside_link.display(),
        beside_exe.display()
    );
    assert!(text.starts_with(&expected), "{text}");
    assert!(!text.contains("/etc/nvcc-wrapper"), "places after the one read are not looked at:\n{text}");

    let out = explain(&["--format", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let looked = json["config"]["looked-at"].as_array().unwrap();
    let summary: Vec<(&str, &str)> =
        looked.iter().map(|l| (l["place"].as_str().unwrap(), l["state"].as_str().unwrap())).collect();
    assert_eq!(summary, [("installation", "missing"), ("installation", "missing"), ("user", "used")]);
    assert_eq!(json["config"]["file"], user.to_str().unwrap());
}

#[test]
fn doctor_names_a_file_in_a_place_never_read_and_one_a_nearer_place_hides() {
    let sb = Sandbox::new();
    let home = home(&sb);
    let wrong = sb.write("home/.config/nvcc-wrapper.toml", &config_with(&sb, "8.6"));
    let doctor =
        || sb.wrapper_cli().env("NVCC_WRAPPER_CONFIG", &sb.config).env("HOME", &home).arg("doctor").output().unwrap();
    let out = doctor();
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    let text = stdout(&out);
    let right = home.join(".config/nvcc-wrapper/config.toml");
    assert!(
        text.contains(&format!(
            "problem: {} looks like a configuration file, but the wrapper never reads that place\n  help: move it to {}",
            wrong.display(),
            right.display()
        )),
        "{text}"
    );
    // Moved where it belongs, it is no problem; the named file still comes first, and doctor says so.
    std::fs::create_dir_all(right.parent().unwrap()).unwrap();
    std::fs::rename(&wrong, &right).unwrap();
    let out = doctor();
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains(&format!(
            "  ignored: {} (the user's): named by $NVCC_WRAPPER_CONFIG comes first, and files are never merged",
            right.display()
        )),
        "{text}"
    );
}

#[test]
fn a_config_beside_the_binary_instead_of_in_share_is_a_near_miss() {
    let sb = Sandbox::new();
    let wrong = sb.write("wrapper/bin/config.toml", &config_with(&sb, "8.6"));
    let link = sb.wrapper_bin.join("nvcc-wrapper");
    std::os::unix::fs::symlink(WRAPPER, &link).unwrap();
    let out = std::process::Command::new(&link)
        .env_clear()
        .env("PATH", sb.path())
        .env("NVCC_WRAPPER_CONFIG", &sb.config)
        .current_dir(sb.dir.path())
        .arg("doctor")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    let text = stdout(&out);
    let right = sb.wrapper_bin.join("../share/nvcc-wrapper/config.toml");
    assert!(text.contains(&format!("problem: {} looks like", wrong.display())), "{text}");
    assert!(text.contains(&format!("help: move it to {}", right.display())), "{text}");
}

#[test]
fn an_unreadable_found_file_is_an_error_whose_help_fits_its_place() {
    let sb = Sandbox::new();
    let home = home(&sb);
    // Larger than any config the wrapper reads (1 MiB): found, then refused when read.
    let user = sb.write("home/.config/nvcc-wrapper/config.toml", &"#".repeat(2 << 20));
    let out = sb.nvcc().env_remove("NVCC_WRAPPER_CONFIG").env("HOME", &home).arg("-c").output().unwrap();
    assert_eq!(out.status.code(), Some(78));
    let err = stderr(&out);
    assert!(err.contains(&format!("cannot read config file {}: it is larger than 1 MiB", user.display())), "{err}");
    // Not set, so not to be unset (issue 33, item 6).
    assert!(!err.contains("NVCC_WRAPPER_CONFIG"), "{err}");
    assert!(err.contains("help: it is the user's configuration file: fix it, or remove it"), "{err}");
    let out = sb.nvcc().env("NVCC_WRAPPER_CONFIG", &user).arg("-c").output().unwrap();
    assert!(stderr(&out).contains("help: fix the file, or unset $NVCC_WRAPPER_CONFIG"), "{}", stderr(&out));
}

/// Issue 38, item 8: a dangling symlink, a loop of links, a directory or a FIFO at the user's config place showed as
/// "none there", and `doctor` said "no problems found". Each is passed over (a FIFO is never opened), and said: the
/// drop-in warns once and runs nvcc, `explain` shows what is there, `doctor` fails on it; the same path named in
/// `$NVCC_WRAPPER_CONFIG` is error 78.
#[test]
fn what_is_at_a_config_place_and_cannot_be_read_is_said_and_passed_over() {
    for (what, said) in [
        ("dangling", "a symbolic link to nothing"),
        ("loop", "a loop of symbolic links"),
        ("directory", "a directory"),
        ("fifo", "a FIFO"),
    ] {
        let sb = Sandbox::new();
        let home = home(&sb);
        let place = home.join(".config/nvcc-wrapper/config.toml");
        std::fs::create_dir_all(place.parent().unwrap()).unwrap();
        match what {
            "dangling" => std::os::unix::fs::symlink("nowhere.toml", &place).unwrap(),
            "loop" => std::os::unix::fs::symlink("config.toml", &place).unwrap(),
            "directory" => std::fs::create_dir(&place).unwrap(),
            _ => assert!(std::process::Command::new("mkfifo").arg(&place).status().unwrap().success()),
        }
        let line =
            format!("{} (the user's): {said}, not a config file the wrapper can read; passed over", place.display());
        let out = sb.nvcc().env_remove("NVCC_WRAPPER_CONFIG").env("HOME", &home).args(["-c", "k.cu"]).output().unwrap();
        assert!(out.status.success(), "{what}: {}", stderr(&out));
        assert_eq!(warnings(&out), [format!("nvcc-wrapper: warning: {line}")], "{what}");
        assert!(sb.ran(), "{what}: nvcc did not run");
        let explain = sb.wrapper_cli().env("HOME", &home).args(["explain", "--", "-c", "k.cu"]).output().unwrap();
        assert!(explain.status.success(), "{what}: {}", stderr(&explain));
        assert!(stdout(&explain).contains(&format!("  looked at: {line}\n")), "{what}: {}", stdout(&explain));
        let doctor = sb.wrapper_cli().env("HOME", &home).arg("doctor").output().unwrap();
        assert_eq!(doctor.status.code(), Some(3), "{what}: {}{}", stdout(&doctor), stderr(&doctor));
        assert!(
            stderr(&doctor).contains(&line) || stdout(&doctor).contains(&line),
            "{what}: {}{}",
            stdout(&doctor),
            stderr(&doctor)
        );
        let named = sb.nvcc().env("NVCC_WRAPPER_CONFIG", &place).args(["-c", "k.cu"]).output().unwrap();
        assert_eq!(named.status.code(), Some(78), "{what}: {}", stderr(&named));
    }
}

/// `NVCC_WRAPPER_NO_MACHINE_CONFIG` (issue 60, row 0; the suite sets it on every call, so that a machine's file never
/// reaches a test): on, the machine's place is not looked at, and explain says why, in text and JSON; a value that
/// is not a switch is the environment's error, in every personality.
#[test]
fn the_machines_file_is_switched_off_by_a_variable_that_must_be_a_switch() {
    let sb = Sandbox::new();
    let explain = |value: &str, format: &[&str]| {
        let mut cmd = sb.wrapper_cli();
        cmd.env("NVCC_WRAPPER_NO_MACHINE_CONFIG", value).arg("explain").args(format).args(["--", "-c", "k.cu"]);
        cmd.output().unwrap()
    };
    let out = explain("1", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let off =
        "  looked at: /etc/nvcc-wrapper/config.toml (the machine's): not read, $NVCC_WRAPPER_NO_MACHINE_CONFIG is on\n";
    assert!(stdout(&out).starts_with("config file: none"), "{}", stdout(&out));
    assert!(stdout(&out).contains(off), "{}", stdout(&out));
    let out = explain("yes", &["--format", "json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let last = json["config"]["looked-at"].as_array().unwrap().last().unwrap().clone();
    assert_eq!((last["place"].as_str(), last["state"].as_str()), (Some("machine"), Some("switched-off")), "{json}");
    // Off (`0`), the place is looked at again.
    let out = explain("0", &[]);
    assert!(!stdout(&out).contains("NO_MACHINE_CONFIG"), "{}", stdout(&out));
    assert!(stdout(&out).contains("/etc/nvcc-wrapper/config.toml (the machine's)"), "{}", stdout(&out));
    // A typo must not silently change which file is read.
    for (mut cmd, args) in [(sb.nvcc(), &["-c", "k.cu"][..]), (sb.wrapper_cli(), &["explain", "--", "-c", "k.cu"])] {
        cmd.env_remove("NVCC_WRAPPER_CONFIG").env("NVCC_WRAPPER_NO_MACHINE_CONFIG", "sometimes");
        let out = cmd.args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(64), "{}", stderr(&out));
        assert!(!sb.ran(), "nvcc ran with a bad switch");
        assert!(stderr(&out).contains("NVCC_WRAPPER_NO_MACHINE_CONFIG=sometimes is not a switch"), "{}", stderr(&out));
    }
}
