//! The configuration places (issue 33, item 2) on the real file system: the machine's `/etc/nvcc-wrapper/config.toml`
//! (as root, a tmpfs over `/etc` in a mount namespace of its own, so the machine's own `/etc` is never touched),
//! the user's file before it, and a real nvcc 13.0 found through the file that applies. The twin of
//! tests/wrapper/config_places.rs.

use std::process::Command;

use crate::support::*;

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn issue_33_the_machines_file_in_etc_applies_when_no_nearer_one_is_there() {
    let Some(root) = real_toolkit("13.0") else { return };
    if real_program("unshare").is_none() || !as_root("mounting over /etc") {
        return;
    }
    let sb = RealSandbox::new(&root);
    // The real nvcc is off PATH: only the machine's file can name it.
    let nvcc = root.join("bin/nvcc");
    sb.write("machine.toml", &format!("nvcc = \"{}\"\n[gpu]\ncapabilities = [\"8.9\"]\n", nvcc.display()));
    sb.write(
        "home/.config/nvcc-wrapper/user.toml",
        &format!("nvcc = \"{}\"\n[gpu]\ncapabilities = [\"8.6\"]\n", nvcc.display()),
    );
    std::fs::create_dir_all(sb.file("empty")).unwrap();
    let explain = |with_user_file: bool, machine_off: bool| {
        let user = sb.file("home/.config/nvcc-wrapper/config.toml");
        if with_user_file {
            std::fs::copy(sb.file("home/.config/nvcc-wrapper/user.toml"), &user).unwrap();
        } else {
            let _ = std::fs::remove_file(&user);
        }
        let script = format!(
            "mount -t tmpfs tmpfs /etc && mkdir /etc/nvcc-wrapper && cp machine.toml /etc/nvcc-wrapper/config.toml && \
             exec {} explain -- -c k.cu",
            shlex::try_quote(WRAPPER).unwrap()
        );
        let out = Command::new("unshare")
            .args(["--mount", "--propagation", "private", "sh", "-c", &script])
            .env_clear()
            // Without the machine's file, the real nvcc is PATH's.
            .env(
                "PATH",
                format!("{}:/usr/bin:/bin", if machine_off { root.join("bin") } else { sb.file("empty") }.display()),
            )
            .env("HOME", sb.file("home"))
            .env("NVCC_WRAPPER_NO_MACHINE_CONFIG", if machine_off { "1" } else { "0" })
            .current_dir(sb.file(""))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
        stdout(&out)
    };
    let text = explain(false, false);
    assert!(text.starts_with("config file: /etc/nvcc-wrapper/config.toml (the machine's)\n"), "{text}");
    assert!(
        text.contains(&format!(
            "  looked at: {} (the user's): none there",
            sb.file("home/.config/nvcc-wrapper/config.toml").display()
        )),
        "{text}"
    );
    assert!(text.contains(&format!("real nvcc:   {}", nvcc.display())), "{text}");
    assert!(text.contains("-gencode=arch=compute_89,code=sm_89"), "{text}");
    // The user's file comes first, and the machine's is said to be ignored whole (issue 39).
    let text = explain(true, false);
    assert!(text.contains("(the user's)\n"), "{text}");
    assert!(text.contains("-gencode=arch=compute_86,code=sm_86"), "{text}");
    let ignored = "  ignored: /etc/nvcc-wrapper/config.toml (the machine's): the user's comes first, and files are never merged\n";
    assert!(text.contains(ignored), "{text}");
    // Switched off (as the test suite runs every call, issue 60), the machine's file is not read.
    let text = explain(false, true);
    assert!(text.starts_with("config file: none"), "{text}");
    let off =
        "  looked at: /etc/nvcc-wrapper/config.toml (the machine's): not read, $NVCC_WRAPPER_NO_MACHINE_CONFIG is on\n";
    assert!(text.contains(off), "{text}");
    assert!(!text.contains("compute_89"), "{text}");
    // And the machine's own /etc was never touched.
    assert!(!std::path::Path::new("/etc/nvcc-wrapper").exists());
}

/// The suite's own calls read no configuration file of the user who runs it, nor the machine's (issue 60, row 0: a
/// user who followed the README's "A first config" saw the real tests build their targets, and one fail on 11.8):
/// with a home and an `XDG_CONFIG_HOME` that each hold a config naming a target 13.0 refuses, a sandbox's call reads
/// neither, and switches the machine's place off.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn the_suites_calls_read_no_config_of_the_users_or_the_machines() {
    let Some(root) = real_toolkit("13.0") else { return };
    let sb = RealSandbox::new(&root);
    let bad = "[gpu]\ncapabilities = [\"1.0\"]\n";
    sb.write("home/.config/nvcc-wrapper/config.toml", bad);
    sb.write("xdg/nvcc-wrapper/config.toml", bad);
    for xdg in [None, Some(sb.file("xdg"))] {
        // As the caller's environment would have them, before the sandbox prepares the call.
        let mut cmd = assert_cmd::Command::new(WRAPPER);
        cmd.env("HOME", sb.file("home"));
        match &xdg {
            Some(dir) => cmd.env("XDG_CONFIG_HOME", dir),
            None => cmd.env_remove("XDG_CONFIG_HOME"),
        };
        sb.prepare(&mut cmd);
        let out = cmd.args(["explain", "--", "-c", "k.cu"]).output().unwrap();
        let text = stdout(&out);
        assert!(out.status.success(), "{text}{}", stderr(&out));
        assert!(text.starts_with("config file: none"), "with XDG_CONFIG_HOME {xdg:?}, a file was read:\n{text}");
        assert!(text.contains("(the machine's): not read, $NVCC_WRAPPER_NO_MACHINE_CONFIG is on"), "{text}");
    }
}

/// The config against the machine (issue 60, rows 1 to 3), with a real nvcc 13.0 and real GCC: a `cuda-version` the
/// toolkit contradicts, a compiler the config names that is not installed, and gcc named as nvcc. The drop-in
/// trusts the toolkit and says so, or stops with the config's line; `doctor` reports each, in the drop-in's words.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn doctor_and_the_drop_in_check_the_config_against_the_machine() {
    let Some(root) = real_toolkit("13.0") else { return };
    let Some(gcc) = real_program("gcc") else { return };
    let sb = RealSandbox::new(&root);
    sb.write("k.cu", "__global__ void k() {}\n");
    let config = |name: &str, text: &str| sb.write(name, text);
    let doctor = |config: &std::path::Path| {
        let mut cmd = assert_cmd::Command::new(WRAPPER);
        sb.prepare(&mut cmd);
        cmd.env("NVCC_WRAPPER_CONFIG", config).arg("doctor").output().unwrap()
    };

    // Row 1: an old config under an upgraded toolkit. 13.0 compiles nothing for 7.0, which 12.4 did: the wrapper
    // decides for 13.0 and says so itself, before nvcc (which said `Unsupported gpu architecture` on 2133ec2).
    let stale = config("stale.toml", "cuda-version = \"12.4\"\n[gpu]\ncapabilities = [\"7.0\"]\n");
    let out = sb.nvcc().env("NVCC_WRAPPER_CONFIG", &stale).args(["-c", "k.cu", "-o", "k.o"]).output().unwrap();
    let said = stderr(&out);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("nvcc-wrapper: error: nvcc 13.0 cannot build these GPU targets: 7.0"), "{said}");
    assert!(!said.contains("Unsupported gpu architecture"), "nvcc, not the wrapper, refused 7.0:\n{said}");
    let stale = config("stale-86.toml", "cuda-version = \"12.4\"\n[gpu]\ncapabilities = [\"8.6\"]\n");
    let out = sb.nvcc().env("NVCC_WRAPPER_CONFIG", &stale).args(["-c", "k.cu", "-o", "k.o"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let differs = format!("`cuda-version` is 12.4 ({}:1), but the nvcc that runs is 13.0.", stale.display());
    assert!(matches!(&warnings(&out)[..], [w] if w.contains(&differs)), "{}", stderr(&out));
    let out = doctor(&stale);
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    assert!(stdout(&out).contains("problem: `cuda-version` is 12.4"), "{}", stdout(&out));

    // Row 3: a stdenv compiler the config names and the machine lacks.
    let missing = config("missing.toml", "[host-compiler]\nstdenv = \"g++-no-such-version\"\n");
    let out = doctor(&missing);
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    let text = stdout(&out);
    assert!(
        text.contains("problem: the stdenv compiler is left out: ") && text.contains("g++-no-such-version"),
        "{text}"
    );
    assert!(text.contains("  help: install it, or name in the config a compiler that is there"), "{text}");

    // Row 2: gcc named as nvcc ran gcc with nvcc's arguments, which wrote nothing and exited 0.
    let wrong = config("wrong.toml", &format!("nvcc = \"{}\"\n", gcc.display()));
    let out = sb.nvcc().env("NVCC_WRAPPER_CONFIG", &wrong).args(["-c", "k.cu", "-o", "g.o"]).output().unwrap();
    let said = stderr(&out);
    assert_eq!(out.status.code(), Some(78), "{said}");
    let not_nvcc = format!("`nvcc` ({}:1) is not nvcc: `{} --version` says `gcc", wrong.display(), gcc.display());
    assert!(said.contains(&not_nvcc), "{said}");
    assert!(said.contains("help: name the `bin/nvcc` of a CUDA toolkit"), "{said}");
    assert!(!sb.file("g.o").exists());
    let out = doctor(&wrong);
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    assert!(stdout(&out).contains("is not nvcc: `"), "{}", stdout(&out));
}
