//! Threads for nvcc from free job slots, in front of the fake nvcc (issue 31): a call with several GPU targets takes
//! the slots free in the build's jobserver (a FIFO here, as GNU make 4.4 and `nvcc-wrapper jobserver` make it) as
//! `--threads N`, never waits for one, and gives every slot back whatever ends the call; nothing changes without a
//! usable jobserver. These take them at the start (`threads-follow = false`); the last test follows the build, as
//! calls do by default. tests/real/threads.rs does it with real make, Ninja and nvcc.

use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::support::*;

const FOUR: [&str; 6] = [
    "-gencode=arch=compute_80,code=sm_80",
    "-gencode=arch=compute_86,code=sm_86",
    "-gencode=arch=compute_89,code=sm_89",
    "-gencode=arch=compute_90,code=sm_90",
    "-c",
    "k.cu",
];

/// A FIFO jobserver with `tokens` free slots, held open by the test (as make holds its own).
struct Slots {
    path: PathBuf,
    held: std::fs::File,
}

impl Slots {
    fn new(dir: &Path, tokens: usize) -> Slots {
        let path = dir.join("slots");
        assert!(std::process::Command::new("mkfifo").arg(&path).status().unwrap().success());
        let mut held =
            std::fs::OpenOptions::new().read(true).write(true).custom_flags(libc::O_NONBLOCK).open(&path).unwrap();
        held.write_all(&vec![b'+'; tokens]).unwrap();
        Slots { path, held }
    }

    fn makeflags(&self, jobs: usize) -> String {
        format!("-j{jobs} --jobserver-auth=fifo:{}", self.path.display())
    }

    /// The tokens in the FIFO now (read out and written back).
    fn count(&mut self) -> usize {
        let mut found = Vec::new();
        let _ = self.held.read_to_end(&mut found);
        self.held.write_all(&found).unwrap();
        found.len()
    }
}

/// `threads-follow` (on unless set false, issue 49): the tests of slots taken when nvcc starts turn it off.
const FOLLOW: &str = "NVCC_WRAPPER_THREADS_FOLLOW";

/// The wrapper as nvcc, taking its threads from the slots free when nvcc starts (`threads-follow = false`).
fn at_start(sb: &Sandbox) -> assert_cmd::Command {
    assert_cmd::Command::from_std(at_start_process(sb))
}

fn at_start_process(sb: &Sandbox) -> std::process::Command {
    let mut cmd = sb.nvcc_process();
    cmd.env(FOLLOW, "0");
    cmd
}

fn threads_given(sb: &Sandbox) -> Option<String> {
    let args = sb.recorded().args();
    args.iter().position(|a| a == "--threads").map(|i| args[i + 1].clone())
}

#[test]
fn free_slots_become_threads_and_all_come_back() {
    let sb = Sandbox::new();
    let mut slots = Slots::new(sb.dir.path(), 5);
    at_start(&sb).env("MAKEFLAGS", slots.makeflags(6)).args(FOUR).assert().success();
    // Four targets: three slots taken, the call's own thread the fourth.
    assert_eq!(threads_given(&sb).as_deref(), Some("4"));
    assert_eq!(sb.recorded().args()[..3], ["--threads".to_string(), "4".into(), sb.ccbin()][..], "first of all");
    assert_eq!(slots.count(), 5, "every slot came back");
    // `threads` caps it; one free slot gives two threads.
    at_start(&sb).env("MAKEFLAGS", slots.makeflags(6)).env("NVCC_WRAPPER_THREADS", "2").args(FOUR).assert().success();
    assert_eq!(threads_given(&sb).as_deref(), Some("2"));
    let mut one = Slots::new(&sb.dir.path().join("one").tap_mkdir(), 1);
    at_start(&sb).env("MAKEFLAGS", one.makeflags(2)).args(FOUR).assert().success();
    assert_eq!(threads_given(&sb).as_deref(), Some("2"));
    assert_eq!(one.count(), 1);
}

/// Issue 38: behind a compiler cache, `--threads N` in nvcc's arguments was part of the cache's key, so the same
/// compile missed whenever another number of slots was free. The launcher gets the same arguments whatever is free;
/// the threads reach nvcc in NVCC_PREPEND_FLAGS (which nvcc reads as if first on its command line), where the
/// user's own value is not: behind a launcher it is moved into the arguments, into the cache's key.
#[test]
fn behind_a_launcher_the_threads_go_in_nvcc_prepend_flags_and_the_arguments_stay_the_same() {
    let sb = Sandbox::new();
    let log = sb.dir.path().join("launcher.args");
    let launcher = sb.write(
        "launchers/ccache",
        &format!(
            "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'ccache 4.7.5'; exit 0; fi\nprintf '%s\\n' \"$@\" > '{}'\nexec \"$@\"\n",
            log.display()
        ),
    );
    std::fs::set_permissions(&launcher, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut seen = Vec::new();
    for (tokens, prepend, expected) in
        [(0, None, None), (3, None, Some("--threads 4")), (1, Some("-lineinfo"), Some("--threads 2"))]
    {
        let dir = sb.dir.path().join(format!("slots{tokens}")).tap_mkdir();
        let mut slots = Slots::new(&dir, tokens);
        let mut cmd = sb.nvcc();
        cmd.env("NVCC_WRAPPER_LAUNCHER", &launcher).env("MAKEFLAGS", slots.makeflags(tokens + 1)).args(FOUR);
        if let Some(value) = prepend {
            cmd.env("NVCC_PREPEND_FLAGS", value);
        }
        cmd.assert().success();
        assert_eq!(threads_given(&sb), None, "{tokens} free: --threads in nvcc's arguments");
        let flags = sb.recorded().env("NVCC_PREPEND_FLAGS").filter(|f| !f.is_empty());
        assert_eq!(flags.as_deref(), expected, "{tokens} free");
        assert_eq!(slots.count(), tokens, "every slot came back");
        let args = std::fs::read_to_string(&log).unwrap();
        assert_eq!(args.lines().nth(1) == Some("-lineinfo"), prepend.is_some(), "{args}");
        seen.push(args);
    }
    assert!(seen[0] == seen[1], "the launcher's arguments changed with the free slots: {seen:?}");
}

#[test]
fn no_free_slot_no_jobserver_or_a_broken_one_change_nothing() {
    let sb = Sandbox::new();
    let pid_file = sb.dir.path().join("pid");
    let mut none_free = Slots::new(sb.dir.path(), 0);
    let mut cmd = at_start_process(&sb);
    cmd.env("MAKEFLAGS", none_free.makeflags(4)).env("FAKE_NVCC_PID", &pid_file).args(FOUR);
    let child = cmd.spawn().unwrap();
    let wrapper = child.id();
    assert!(child.wait_with_output().unwrap().status.success());
    assert_eq!(threads_given(&sb), None);
    // Nothing was waited for: nvcc replaced the wrapper, as without a jobserver.
    assert_eq!(std::fs::read_to_string(&pid_file).unwrap(), wrapper.to_string());
    assert_eq!(none_free.count(), 0);
    for makeflags in [
        "-j4 --jobserver-auth=fifo:/nonexistent/fifo".to_string(),
        "-j4 --jobserver-auth=3,4".to_string(),
        "-j4 --jobserver-fds=7,8".to_string(),
        "--jobserver-auth=garbage".to_string(),
    ] {
        let out = at_start(&sb).env("MAKEFLAGS", &makeflags).args(FOUR).output().unwrap();
        assert!(out.status.success(), "{makeflags}: {}", stderr(&out));
        assert!(stderr(&out).is_empty(), "{makeflags}: {}", stderr(&out));
        assert_eq!(threads_given(&sb), None, "{makeflags}");
    }
    // The user's own -t: nothing added, no slot taken.
    let mut slots = Slots::new(&sb.dir.path().join("own").tap_mkdir(), 3);
    at_start(&sb).env("MAKEFLAGS", slots.makeflags(4)).args(["-t", "2"]).args(FOUR).assert().success();
    assert_eq!(sb.recorded().args().iter().filter(|a| *a == "--threads").count(), 0);
    assert_eq!(slots.count(), 3);
}

/// Issue 48: a make inside cargo's build (a build script's `make -j2`) names its own jobserver in `MAKEFLAGS`, while
/// `CARGO_MAKEFLAGS` still names cargo's: the rule's slots are make's, and cargo's are left alone.
#[test]
fn make_inside_cargo_lends_its_own_slots_not_cargos() {
    let sb = Sandbox::new();
    let mut make = Slots::new(&sb.dir.path().join("make").tap_mkdir(), 1);
    let mut cargo = Slots::new(&sb.dir.path().join("cargo").tap_mkdir(), 5);
    at_start(&sb)
        .env("MAKEFLAGS", make.makeflags(2))
        .env("CARGO_MAKEFLAGS", cargo.makeflags(6))
        .args(FOUR)
        .assert()
        .success();
    assert_eq!(threads_given(&sb).as_deref(), Some("2"), "make's one free slot and the call's own");
    assert_eq!((make.count(), cargo.count()), (1, 5));
    // Cargo's alone (a build script that runs nvcc itself): its slots.
    at_start(&sb).env_remove("MAKEFLAGS").env("CARGO_MAKEFLAGS", cargo.makeflags(6)).args(FOUR).assert().success();
    assert_eq!(threads_given(&sb).as_deref(), Some("4"));
    assert_eq!(cargo.count(), 5);
}

#[test]
fn the_slots_come_back_when_nvcc_fails_or_the_wrapper_is_killed() {
    let sb = Sandbox::new();
    let mut slots = Slots::new(sb.dir.path(), 3);
    let status = at_start_process(&sb)
        .env("MAKEFLAGS", slots.makeflags(4))
        .env("FAKE_NVCC_EXIT", "2")
        .args(FOUR)
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(2));
    assert_eq!(slots.count(), 3);
    // SIGINT to the group, as a terminal's Ctrl-C or make's interrupt sends it: one to the wrapper alone is not passed
    // on (nvcc ignores it while a program of its own runs), as the wrapper cannot tell it from one to its group.
    for (signal, group) in [(libc::SIGKILL, false), (libc::SIGTERM, false), (libc::SIGINT, true)] {
        let pid_file = sb.dir.path().join(format!("pid{signal}"));
        let mut command = at_start_process(&sb);
        command
            .env("MAKEFLAGS", slots.makeflags(4))
            .env("FAKE_NVCC_PID", &pid_file)
            .env("FAKE_NVCC_SLEEP", "30")
            .args(FOUR)
            .process_group(0);
        // A caller that ignores SIGINT (a background job of a script, as CI may start the tests) passes that on, to
        // nvcc as to nvcc alone: this call hears it.
        // SAFETY: signal() is async-signal-safe and touches no memory of ours.
        unsafe {
            command.pre_exec(|| {
                libc::signal(libc::SIGINT, libc::SIG_DFL);
                Ok(())
            });
        }
        let mut wrapper = command.spawn().unwrap();
        let started = Instant::now();
        while std::fs::read_to_string(&pid_file).map_or(true, |p| p.is_empty()) {
            assert!(started.elapsed() < Duration::from_secs(10), "nvcc did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(slots.count(), 0, "signal {signal}: the three slots are nvcc's while it runs");
        let pid = wrapper.id() as i32;
        // SAFETY: kill takes plain integers; the wrapper is our child, not yet reaped, and leads its group.
        unsafe { libc::kill(if group { -pid } else { pid }, signal) };
        wrapper.wait().unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while slots.count() < 3 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(slots.count(), 3, "signal {signal}: the slots did not come back");
        assert!(started.elapsed() < Duration::from_secs(20), "signal {signal}: waited for nvcc's sleep");
    }
}

#[test]
fn the_jobserver_subcommand_runs_a_build_under_n_slots() {
    let sb = Sandbox::new();
    let script = format!("echo \"$MAKEFLAGS\" > makeflags; nvcc {}; exit 7", FOUR.join(" "));
    let out = sb
        .wrapper_cli()
        .env("NVCC_WRAPPER_CONFIG", &sb.config)
        .env(FOLLOW, "0")
        .env("FAKE_NVCC_RECORD", &sb.record)
        .env("MAKEFLAGS", "k -j9 --jobserver-auth=3,4")
        .env("TMPDIR", sb.dir.path())
        .args(["jobserver", "-j", "3", "--", "sh", "-c", &script])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    let makeflags = std::fs::read_to_string(sb.dir.path().join("makeflags")).unwrap();
    assert!(
        makeflags.starts_with("-j3 --jobserver-auth=fifo:")
            && makeflags.contains("/slots --jobserver-a=")
            && makeflags.trim_end().ends_with(" k"),
        "{makeflags}"
    );
    // Two tokens in the FIFO (the command's first job needs none): three threads for four targets.
    assert_eq!(threads_given(&sb).as_deref(), Some("3"));
    let left: Vec<_> = std::fs::read_dir(sb.dir.path()).unwrap().flatten().map(|e| e.file_name()).collect();
    assert!(!left.iter().any(|n| n.to_string_lossy().starts_with("nvcc-wrapper-jobserver")), "{left:?}");
    let out = sb.wrapper_cli().args(["jobserver", "-j", "0", "--", "true"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    // Issue 48: more slots than a pipe holds at first (64 KiB): the FIFO is made larger; past what it can be made,
    // `-j` is refused with the most it holds.
    let out = sb
        .wrapper_cli()
        .env("TMPDIR", sb.dir.path())
        .args(["jobserver", "-j", "100000", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = sb.wrapper_cli().args(["jobserver", "-j", "4294967295", "--", "true"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("help: give `-j "), "{}", stderr(&out));
    // Issue 60, row 13: a command that is not there is said in the wrapper's words, with a shell's 127 (it was a
    // crate's `cannot find binary path`, 126).
    for (command, said) in [
        ("nosuchprog", "nvcc-wrapper: error: no program nosuchprog on PATH\n"),
        ("./nosuchprog", "nvcc-wrapper: error: no program ./nosuchprog: there is no executable file at that path\n"),
    ] {
        let out = sb.wrapper_cli().args(["jobserver", "-j", "2", "--", command]).output().unwrap();
        assert_eq!(out.status.code(), Some(127), "{}", stderr(&out));
        assert!(stderr(&out).starts_with(said), "{}", stderr(&out));
        assert!(stderr(&out).contains("help: give the build tool's name on PATH, or its path"), "{}", stderr(&out));
    }
}

/// Issue 39, item 3: a Ninja that would ignore the jobserver (before 1.13, or given `-j`) is refused before it runs,
/// with why and what to do; one whose version says nothing known runs as given.
#[test]
fn the_jobserver_subcommand_refuses_a_ninja_that_would_ignore_it() {
    let sb = Sandbox::new();
    let bin = sb.dir.path().join("tools").tap_mkdir();
    let ninja = bin.join("ninja");
    std::fs::write(
        &ninja,
        "#!/bin/sh\n[ \"$1\" = --version ] && { echo \"$FAKE_NINJA_VERSION\"; exit 0; }\ntouch ran\n",
    )
    .unwrap();
    std::fs::set_permissions(&ninja, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let serve = |version: &str, args: &[&str]| {
        let _ = std::fs::remove_file(sb.dir.path().join("ran"));
        let mut cmd = sb.wrapper_cli();
        cmd.env("FAKE_NINJA_VERSION", version).env("TMPDIR", sb.dir.path());
        let out = cmd.args(["jobserver", "-j", "4", "--"]).arg(&ninja).args(args).output().unwrap();
        (out.status.code(), stderr(&out), sb.dir.path().join("ran").exists())
    };
    let (code, said, ran) = serve("1.12.1", &[]);
    assert_eq!((code, ran), (Some(2), false), "{said}");
    let shown = ninja.display();
    assert_eq!(
        said,
        format!("nvcc-wrapper: error: {shown} is Ninja 1.12, which ignores a jobserver (Ninja 1.13 and later take part in one): it would run its own count of jobs besides the threads nvcc's calls take\nhelp: put Ninja 1.13 or later first on PATH (`pip install ninja`), or run it without `nvcc-wrapper jobserver`, as `ninja -j N`\n")
    );
    let (code, said, ran) = serve("1.13.0", &["-C", ".", "-j", "8"]);
    assert_eq!((code, ran), (Some(2), false), "{said}");
    assert!(said.contains("is given `-j`, and Ninja with a `-j` of its own ignores the jobserver"), "{said}");
    for version in ["1.13.0", "1.13.0.git.kitware.jobserver-pipe-1", "a version of its own"] {
        let (code, said, ran) = serve(version, &[]);
        assert_eq!((code, ran), (Some(0), true), "{version}: {said}");
    }
    // Issue 48: a link of another name to it is Ninja all the same.
    let old = bin.join("ninja-old");
    std::os::unix::fs::symlink(&ninja, &old).unwrap();
    let _ = std::fs::remove_file(sb.dir.path().join("ran"));
    let out = sb
        .wrapper_cli()
        .env("FAKE_NINJA_VERSION", "1.11.1")
        .env("TMPDIR", sb.dir.path())
        .args(["jobserver", "-j", "4", "--"])
        .arg(&old)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("ninja-old is Ninja 1.11"), "{}", stderr(&out));
    assert!(!sb.dir.path().join("ran").exists());
}

trait TapMkdir {
    fn tap_mkdir(self) -> Self;
}

impl TapMkdir for PathBuf {
    fn tap_mkdir(self) -> Self {
        std::fs::create_dir_all(&self).unwrap();
        self
    }
}

/// Issue 41: with `threads-follow` (on by default, issue 49), nvcc gets a thread for each target whatever is free when it starts (the keeper
/// then runs no more of its programs at once than the slots it holds: tests/real/follow.rs), takes no slot its work
/// does not wait for, and says so in `explain`; behind a launcher, or turned off, it takes its slots at the start.
#[test]
fn threads_that_follow_the_build_give_nvcc_a_thread_for_each_target() {
    let sb = Sandbox::new();
    for tokens in [0, 3] {
        let dir = sb.dir.path().join(format!("follow{tokens}")).tap_mkdir();
        let mut slots = Slots::new(&dir, tokens);
        let makeflags = slots.makeflags(tokens + 1);
        sb.nvcc().env("MAKEFLAGS", &makeflags).args(FOUR).assert().success();
        assert_eq!(threads_given(&sb).as_deref(), Some("4"), "{tokens} free");
        assert_eq!(slots.count(), tokens, "{tokens} free: every slot is there afterwards");
        let explain = sb.wrapper_cli().env("MAKEFLAGS", &makeflags).arg("explain").args(FOUR).output().unwrap();
        let text = stdout(&explain);
        assert!(text.contains("+ --threads 4 (before your arguments, following the build's job slots): `threads-follow` is true (by default; `threads-follow = false` takes them at the start)"), "{text}");
        let now = if tokens == 0 {
            "1 of nvcc's targets at once, and more as slots free"
        } else {
            "4 of nvcc's targets at once\n"
        };
        assert!(text.contains(&format!("the call would run {now}")), "{text}");
    }
    // Turned off: the slots free at the start, and `explain` says by whose setting.
    let makeflags = Slots::new(&sb.dir.path().join("off").tap_mkdir(), 3).makeflags(4);
    let explain = sb.wrapper_cli().env("MAKEFLAGS", &makeflags).env(FOLLOW, "0").arg("explain").args(FOUR).output();
    let text = stdout(&explain.unwrap());
    assert!(
        text.contains(
            "taken at the start, not following the build: `threads-follow` is false (in $NVCC_WRAPPER_THREADS_FOLLOW)"
        ),
        "{text}"
    );
    let json = sb
        .wrapper_cli()
        .env("MAKEFLAGS", Slots::new(&sb.dir.path().join("json").tap_mkdir(), 0).makeflags(1))
        .args(["explain", "--format", "json"])
        .args(FOUR)
        .output()
        .unwrap();
    let plan: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    let change = plan["changes"].as_array().unwrap().iter().find(|c| c["action"] == "take-threads").cloned();
    assert_eq!(change.as_ref().map(|c| c["follow"].clone()), Some(serde_json::Value::Bool(true)), "{plan}");
    // Behind a launcher: the slots free at the start, none here.
    let launcher = sb.write(
        "launchers/ccache",
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'ccache 4.7.5'; exit 0; fi\nexec \"$@\"\n",
    );
    std::fs::set_permissions(&launcher, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut none = Slots::new(&sb.dir.path().join("launcher").tap_mkdir(), 0);
    let mut cmd = sb.nvcc();
    cmd.env("NVCC_WRAPPER_THREADS_FOLLOW", "1").env("NVCC_WRAPPER_LAUNCHER", &launcher);
    cmd.env("MAKEFLAGS", none.makeflags(1)).args(FOUR).assert().success();
    assert_eq!(threads_given(&sb), None);
    assert_eq!(sb.recorded().env("NVCC_PREPEND_FLAGS").filter(|f| !f.is_empty()), None);
    assert_eq!(none.count(), 0);
}

/// Issue 59: over 64 GPU targets, the threads step decides 64, the most the keeper's ledger records. Following the
/// build, nvcc gets `--threads 64` and `explain` names the same; taken at the start, `explain` names 64 at most. It
/// named every target before (`--threads 72`), a number the keeper never passed.
#[test]
fn over_64_targets_nvcc_gets_the_threads_explain_names() {
    let sb = Sandbox::new();
    let many: Vec<&str> = FOUR[..4].iter().copied().cycle().take(72).chain(["-c", "k.cu"]).collect();
    for (follow, named) in [("1", "--threads 64 (before"), ("0", "--threads 2 to 64 (before")] {
        let mut slots = Slots::new(&sb.dir.path().join(format!("follow{follow}")).tap_mkdir(), 80);
        let makeflags = slots.makeflags(81);
        let mut explain = sb.wrapper_cli();
        explain.env(FOLLOW, follow).env("MAKEFLAGS", &makeflags).arg("explain").args(&many);
        let text = stdout(&explain.output().unwrap());
        assert!(text.contains(named) && !text.contains("--threads 72"), "threads-follow = {follow}: {text}");
        sb.nvcc().env(FOLLOW, follow).env("MAKEFLAGS", &makeflags).args(&many).assert().success();
        let given: u32 = threads_given(&sb).expect("--threads").parse().unwrap();
        assert!(given <= 64 && (follow == "0" || given == 64), "threads-follow = {follow}: --threads {given}");
        assert_eq!(slots.count(), 80, "threads-follow = {follow}: every slot is back");
    }
}

/// An nvcc that is a script without a `#!` line (a hand-made wrapper around the real one) runs as a shell runs it,
/// by /bin/sh, on every path the wrapper starts nvcc by: its exec; the keeper's spawn, when it waits for nvcc (a
/// dependency file) or takes slots at the start; and the held start, when threads follow the build. Before, only the
/// exec ran it (glibc's execvp falls back to the shell; posix_spawn and execve do not) and the others failed with
/// "Exec format error".
#[test]
fn an_nvcc_script_without_a_shebang_line_runs_on_every_path() {
    let sb = Sandbox::new();
    let nvcc = sb.cuda_bin.join("nvcc");
    std::fs::remove_file(&nvcc).unwrap();
    std::fs::write(&nvcc, format!("exec {} \"$@\"\n", fake_nvcc().display())).unwrap();
    std::fs::set_permissions(&nvcc, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let depfile = ["-MD", "-MF", "k.d", "-c", "k.cu"];
    let slots = Slots::new(sb.dir.path(), 3);
    let paths: [(&str, &[&str], Option<&str>); 4] = [
        ("exec", &["-c", "k.cu"], None),
        ("a dependency file", &depfile, None),
        ("slots at the start", &FOUR, Some("0")),
        ("following the build", &FOUR, Some("1")),
    ];
    for (path, args, follow) in paths {
        let _ = std::fs::remove_file(&sb.record);
        let mut cmd = sb.nvcc();
        cmd.env("FAKE_NVCC_DEPFILE", "k.o : k.cu\n").args(args);
        if let Some(follow) = follow {
            cmd.env(FOLLOW, follow).env("MAKEFLAGS", slots.makeflags(4));
        }
        cmd.assert().success();
        assert!(sb.ran(), "{path}: the script did not run nvcc");
        let recorded = sb.recorded().args();
        assert_eq!(recorded[recorded.len() - 2..], ["-c", "k.cu"], "{path}");
        if follow.is_some() {
            assert_eq!(threads_given(&sb).as_deref(), Some("4"), "{path}");
        }
    }
    // The keeper completed the dependency file nvcc wrote.
    assert!(std::fs::read_to_string(sb.dir.path().join("k.d")).unwrap().contains(&sb.config.display().to_string()));
}
