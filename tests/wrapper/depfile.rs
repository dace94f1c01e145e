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

/// The wrapper started on a call that writes a dependency file (so it waits for nvcc), nvcc sleeping 30 s; returned
/// once nvcc has started, with nvcc's pid and when the wrapper was started.
fn waiting_for_a_sleeping_nvcc(sb: &Sandbox) -> (std::process::Child, String, Instant) {
    let pid_file = sb.dir.path().join("nvcc.pid");
    let wrapper = sb
        .nvcc_process()
        .env("FAKE_NVCC_DEPFILE", DEPFILE)
        .env("FAKE_NVCC_PID", &pid_file)
        .env("FAKE_NVCC_SLEEP", "30")
        .args(["-MD", "-MF", "k.d", "-c", "k.cu"])
        .spawn()
        .unwrap();
    let started = Instant::now();
    let nvcc = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file).ok().filter(|p| !p.is_empty()) {
            break pid;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "nvcc did not start");
        std::thread::sleep(Duration::from_millis(20));
    };
    (wrapper, nvcc, started)
}

#[test]
fn a_signal_sent_to_the_wrapper_reaches_nvcc() {
    let sb = Sandbox::new();
    let (mut wrapper, nvcc, started) = waiting_for_a_sleeping_nvcc(&sb);
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

/// Issue 30, item 1: `-MF /dev/stdout` into a pipe, and a FIFO, used to hang the wrapper after nvcc ended (it read the
/// pipe it was writing to, or a FIFO with no writer left). A file that is not a regular file is left to nvcc.
#[test]
fn a_dependency_file_that_is_not_a_regular_file_is_left_as_nvcc_wrote_it() {
    let sb = Sandbox::new();
    let script = "nvcc -MD -MF /dev/stdout -c k.cu -o k.o | cat";
    let started = Instant::now();
    let out = in_own_dev(&["timeout", "-s", "KILL", "20", "bash", "-c", script])
        .env_clear()
        .env("PATH", sb.path())
        .env("NVCC_WRAPPER_CONFIG", &sb.config)
        .env("FAKE_NVCC_DEPFILE", DEPFILE)
        .current_dir(sb.dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{:?} {}", out.status, stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(15), "the wrapper hung on /dev/stdout");
    assert_eq!(stdout(&out), DEPFILE, "nvcc's own text, nothing added");
    // A FIFO with a reader: nvcc writes into it, the wrapper leaves it alone.
    let fifo = sb.dir.path().join("k.d");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let reader = std::process::Command::new("cat").arg(&fifo).stdout(std::process::Stdio::piped()).spawn().unwrap();
    let started = Instant::now();
    let mut wrapper =
        sb.nvcc_process().env("FAKE_NVCC_DEPFILE", DEPFILE).args(["-MD", "-MF", "k.d", "-c", "k.cu"]).spawn().unwrap();
    let status = loop {
        if let Some(status) = wrapper.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(15) {
            let _ = wrapper.kill();
            panic!("the wrapper hung on a FIFO");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status:?}");
    assert_eq!(String::from_utf8(reader.wait_with_output().unwrap().stdout).unwrap(), DEPFILE);
}

/// Issue 30, item 2: the completed file replaces nvcc's whole. With the disk full (here: a file size limit, its
/// signal ignored, so that the write fails with EFBIG as it would with ENOSPC) the wrapper used to leave nvcc's file
/// cut in the middle of a path and exit 74; now nvcc's file stays whole, the call succeeds as nvcc did, and a warning
/// says what was not added. tests/real/depfile.rs does it with a really full file system.
#[test]
fn a_completion_that_cannot_be_written_leaves_nvccs_file_whole() {
    let sb = Sandbox::new();
    // 1,000 bytes, under the limit of 1 KiB; with the wrapper's three inputs it is over.
    let nvcc_text = format!("k.o : k.cu \\\n    /usr/include/{}.h\n", "h".repeat(1000 - 33));
    assert_eq!(nvcc_text.len(), 1000);
    let out = std::process::Command::new("bash")
        .args(["-c", "trap '' XFSZ; ulimit -f 1; nvcc -MD -MF k.d -c k.cu"])
        .env_clear()
        .env("PATH", sb.path())
        .env("NVCC_WRAPPER_CONFIG", &sb.config)
        .env("FAKE_NVCC_DEPFILE", &nvcc_text)
        .current_dir(sb.dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{:?} {}", out.status, stderr(&out));
    assert_eq!(std::fs::read_to_string(sb.dir.path().join("k.d")).unwrap(), nvcc_text);
    let warned = warnings(&out);
    assert!(
        warned.len() == 1 && warned[0].contains("cannot add the wrapper's inputs to the dependency file k.d"),
        "{warned:?}"
    );
    let left: Vec<_> = std::fs::read_dir(sb.dir.path()).unwrap().flatten().map(|e| e.file_name()).collect();
    assert!(!left.iter().any(|n| n.to_string_lossy().ends_with(".tmp")), "a temporary file is left: {left:?}");
}

/// A dependency file that is a link is completed where it points, keeping its permissions; the link stays.
#[test]
fn a_linked_dependency_file_is_completed_in_place_with_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    let real = sb.write("deps/real.d", "");
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
    std::os::unix::fs::symlink(&real, sb.dir.path().join("k.d")).unwrap();
    sb.nvcc().env("FAKE_NVCC_DEPFILE", DEPFILE).args(["-MD", "-MF", "k.d", "-c", "k.cu"]).assert().success();
    assert!(std::fs::symlink_metadata(sb.dir.path().join("k.d")).unwrap().file_type().is_symlink());
    let text = std::fs::read_to_string(&real).unwrap();
    assert!(text.starts_with(DEPFILE.trim_end()) && text.ends_with(&format!("{}\n", sb.cc.display())), "{text}");
    assert_eq!(std::fs::metadata(&real).unwrap().permissions().mode() & 0o777, 0o640);
}

/// Issue 30, item 5: with `-MP`, nvcc writes a phony rule for every prerequisite, so that a removed header does not
/// stop make; the wrapper's inputs get theirs. tests/real/depfile.rs removes the config under a real make.
#[test]
fn with_mp_the_wrappers_inputs_get_phony_rules() {
    let sb = Sandbox::new();
    let nvcc_text = "k.o : k.cu \\\n    /usr/include/a.h\n\n/usr/include/a.h:\n";
    sb.nvcc().env("FAKE_NVCC_DEPFILE", nvcc_text).args(["-MD", "-MP", "-MF", "k.d", "-c", "k.cu"]).assert().success();
    let text = std::fs::read_to_string(sb.dir.path().join("k.d")).unwrap();
    for input in [sb.config.clone(), sb.dir.path().join("cuda/version.json"), sb.cc.clone()] {
        assert!(
            text.contains(&format!("\n\n{}:\n", input.display())),
            "no phony rule for {}:\n{text}",
            input.display()
        );
    }
}

/// Issue 30, item 4: an input whose path no reader can read back is left out, and explain says so; the others are
/// still added.
#[test]
fn an_input_no_reader_can_read_back_is_left_out_and_said() {
    let sb = Sandbox::new();
    let odd = sb.dir.path().join("o'brien/config.toml");
    std::fs::create_dir_all(odd.parent().unwrap()).unwrap();
    std::fs::copy(&sb.config, &odd).unwrap();
    sb.nvcc()
        .env("NVCC_WRAPPER_CONFIG", &odd)
        .env("FAKE_NVCC_DEPFILE", DEPFILE)
        .args(["-MD", "-MF", "k.d", "-c", "k.cu"])
        .assert()
        .success();
    let text = std::fs::read_to_string(sb.dir.path().join("k.d")).unwrap();
    assert!(!text.contains("o'brien") && text.contains(&sb.cc.display().to_string()), "{text}");
    let out = sb
        .wrapper_cli()
        .env("NVCC_WRAPPER_CONFIG", &odd)
        .args(["explain", "--", "-MD", "-c", "k.cu"])
        .output()
        .unwrap();
    assert!(
        stdout(&out).contains("brien/config.toml' is not added to the dependency file: its path holds `'`, which Ninja would not read back"),
        "{}",
        stdout(&out)
    );
}

/// Issue 30, item 3: killed with SIGKILL, the wrapper can do nothing, and the real nvcc it waited for used to be
/// adopted by init and write its object long after. Now nvcc dies with it. tests/real/kill.rs does it with real nvcc,
/// a hundred times.
#[test]
fn killing_the_wrapper_kills_nvcc() {
    let sb = Sandbox::new();
    let (mut wrapper, nvcc, _) = waiting_for_a_sleeping_nvcc(&sb);
    wrapper.kill().unwrap();
    assert_eq!(wrapper.wait().unwrap().signal(), Some(libc::SIGKILL));
    let proc_dir = format!("/proc/{}", nvcc.trim());
    let killed = Instant::now();
    while std::path::Path::new(&proc_dir).exists() && killed.elapsed() < Duration::from_secs(10) {
        // A zombie until init reaps it is dead too.
        if std::fs::read_to_string(format!("{proc_dir}/stat")).is_ok_and(|s| s.contains(") Z ")) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(killed.elapsed() < Duration::from_secs(10), "nvcc {} outlived the wrapper", nvcc.trim());
}

/// Issue 38, item 9: a dependency file with another name (a hard link), or of another user's, lost the link or its
/// owner when the wrapper replaced it whole. nvcc writes it in place and keeps both: such a file is left as nvcc wrote
/// it, with one warning. And `-MD --dryrun`, which writes nothing, no longer appends the wrapper's inputs to a stale
/// file.
#[test]
fn a_linked_or_foreign_dependency_file_and_a_dry_run_are_left_as_nvcc_leaves_them() {
    use std::os::unix::fs::MetadataExt;
    let sb = Sandbox::new();
    let d = sb.write("k.d", "stale\n");
    std::fs::hard_link(&d, sb.dir.path().join("other.d")).unwrap();
    let out = sb.nvcc().env("FAKE_NVCC_DEPFILE", DEPFILE).args(["-MD", "-MF", "k.d", "-c", "k.cu"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::metadata(&d).unwrap().nlink(), 2);
    assert_eq!(std::fs::read_to_string(sb.dir.path().join("other.d")).unwrap(), DEPFILE);
    let said = warnings(&out);
    assert!(said.len() == 1 && said[0].contains("it has other names (hard links)"), "{said:?}");
    // Another user's file (as root: the test's own user otherwise, and then nothing to show).
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        let theirs = sb.write("t.d", "");
        std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
        let out =
            sb.nvcc().env("FAKE_NVCC_DEPFILE", DEPFILE).args(["-MD", "-MF", "t.d", "-c", "k.cu"]).output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(std::fs::metadata(&theirs).unwrap().uid(), 65534);
        assert!(warnings(&out)[0].contains("it belongs to another user"), "{}", stderr(&out));
    }
    // A dry run: nvcc writes nothing, and the stale file stays as it was.
    let stale = sb.write("s.d", "s.o : s.cu\n");
    sb.nvcc().args(["-MD", "-MF", "s.d", "--dryrun", "-c", "k.cu"]).assert().success();
    assert_eq!(std::fs::read_to_string(&stale).unwrap(), "s.o : s.cu\n");
}
