//! Dependency files in front of the fake nvcc: a call that writes one gets the files the wrapper decided from added
//! to it after nvcc ends (issue 24); the wrapper then waits for nvcc instead of replacing itself, and must still look
//! like nvcc to its caller: exit code, signals both ways, stdin, and inherited file descriptors (a make jobserver's).
//! The real builds (CMake, Meson, make) are tests/real/depfile.rs.

use std::os::unix::process::ExitStatusExt;
use std::time::{Duration, Instant};

use crate::support::*;

const DEPFILE: &str = "k.o : k.cu \\\n    /usr/include/stdc-predef.h\n";

#[test]
fn the_wrappers_inputs_join_the_dependency_file_nvcc_writes() {
    let sb = Sandbox::new();
    sb.write("k.cu", "");
    let args = ["-MD", "-MF", "k.d", "-c", "k.cu", "-o", "k.o"];
    sb.nvcc().env("FAKE_NVCC_DEPFILE", DEPFILE).args(args).assert().success();
    let text = std::fs::read_to_string(sb.dir.path().join("k.d")).unwrap();
    let want = format!(
        "k.o : k.cu \\\n    /usr/include/stdc-predef.h \\\n  {} \\\n  {} \\\n  {}\n",
        sb.config.display(),
        sb.dir.path().join("cuda/version.json").display(),
        sb.cc.display()
    );
    assert_eq!(text, want);
    // Turned off, or no dependency file: nvcc's own file, untouched.
    sb.nvcc()
        .env("FAKE_NVCC_DEPFILE", DEPFILE)
        .env("NVCC_WRAPPER_DEPFILE_INPUTS", "0")
        .args(["-MD", "-MF", "k.d", "-c", "k.cu"])
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(sb.dir.path().join("k.d")).unwrap(), DEPFILE);
}

#[test]
fn nvccs_exit_code_and_signal_are_the_wrappers() {
    let sb = Sandbox::new();
    let depfile_call = |sb: &Sandbox| {
        let mut cmd = sb.nvcc_process();
        cmd.env("FAKE_NVCC_DEPFILE", DEPFILE).args(["-MD", "-MF", "k.d", "-c", "k.cu"]);
        cmd
    };
    let status = depfile_call(&sb).env("FAKE_NVCC_EXIT", "3").status().unwrap();
    assert_eq!(status.code(), Some(3));
    // A failed compile's dependency file is nvcc's business, left as it is.
    assert_eq!(std::fs::read_to_string(sb.dir.path().join("k.d")).unwrap(), DEPFILE);
    let status = depfile_call(&sb).env("FAKE_NVCC_SIGNAL", "15").status().unwrap();
    assert_eq!(status.signal(), Some(15), "{status:?}");
}

#[test]
fn a_signal_sent_to_the_wrapper_reaches_nvcc() {
    let sb = Sandbox::new();
    let pid_file = sb.dir.path().join("nvcc.pid");
    let mut wrapper = sb
        .nvcc_process()
        .env("FAKE_NVCC_DEPFILE", DEPFILE)
        .env("FAKE_NVCC_PID", &pid_file)
        .env("FAKE_NVCC_SLEEP", "30")
        .args(["-MD", "-MF", "k.d", "-c", "k.cu"])
        .spawn()
        .unwrap();
    let started = Instant::now();
    let nvcc = loop {
        if let Ok(pid) = std::fs::read_to_string(&pid_file) {
            if !pid.is_empty() {
                break pid;
            }
        }
        assert!(started.elapsed() < Duration::from_secs(10), "nvcc did not start");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_ne!(nvcc.trim(), wrapper.id().to_string(), "nvcc runs as the wrapper's child here");
    // SIGTERM as a build's timeout or `kill` sends it, to the wrapper only.
    unsafe { libc::kill(wrapper.id() as i32, libc::SIGTERM) };
    let status = wrapper.wait().unwrap();
    assert!(started.elapsed() < Duration::from_secs(20), "the wrapper waited for nvcc's sleep");
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
    assert!(!std::path::Path::new(&format!("/proc/{}", nvcc.trim())).exists(), "nvcc {nvcc} is still running");
}

#[test]
fn stdin_and_inherited_descriptors_reach_nvcc() {
    let sb = Sandbox::new();
    sb.write("jobserver", "tokens");
    // As make hands a jobserver to its children: a descriptor left open across exec.
    let script = "exec 7<jobserver; nvcc -MD -MF k.d -c k.cu";
    let out = std::process::Command::new("bash")
        .args(["-c", script])
        .env_clear()
        .env("PATH", sb.path())
        .env("NVCC_WRAPPER_CONFIG", &sb.config)
        .env("FAKE_NVCC_DEPFILE", DEPFILE)
        .env("FAKE_NVCC_FD", "7")
        .env("FAKE_NVCC_ECHO_STDIN", "1")
        .current_dir(sb.dir.path())
        .stdin(std::fs::File::open(sb.write("input", "from stdin\n")).unwrap())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "tokensfrom stdin\n");
}
