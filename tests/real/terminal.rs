//! A real terminal around a call, compared with nvcc alone (issue 48): a tmux pane running an interactive bash, whose
//! job control puts each command line in a process group of its own and waits for its processes to stop or end. The
//! same keys are typed on both sides, once with real nvcc alone first on PATH, once with the wrapper installed as
//! `nvcc` in front of it, and the pane must tell the same story: the same job notices (`[1]+  Stopped ...`), the same
//! statuses, the same object built or not, and nothing left stopped afterwards.
//!
//! The cases: Ctrl-Z and `fg`, Ctrl-Z and `bg`, Ctrl-C, each with the call at a pipeline's head, middle and end, with
//! the source on stdin, under make, with threads from make's job slots and with threads that follow the build; `stty
//! tostop` with the wrapper's debug log on; and a kill by name (`pkill -9 nvcc`) of a call whose keeper holds slots
//! and programs of nvcc's at their exec. The calls complete a dependency file (`-MD`), or take threads, so that the
//! wrapper waits for nvcc in a keeper rather than execs it: the path where job control can go wrong. The common cases
//! run on nvcc 11.8, 12.4 and 13.5; those where only the wrapper's own keeping differs on 13.5.
//!
//! Needs real NVCC 11.8, 12.4 and 13.5, g++-11, GNU make and tmux.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::cicc::{run_again, StuckCicc, CICC_STUCK, TRIES};
use crate::support::*;

/// The pane's shell variable `G`: the host compiler every release here accepts, and three GPU targets.
const G: &str = "-ccbin g++-11 -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_86,code=sm_86 \
                 -gencode=arch=compute_90,code=sm_90";

/// The makefile of the cases under make: one object, its rule marked `+` so that the call is a client of make's
/// jobserver (GNU make 4.3 closes the jobserver's descriptors for other rules).
const MAKEFILE: &str = "s.o: s.cu\n\t+nvcc $(G) -c s.cu -o s.o -MD -MF s.d\n";

/// How long one side may take for a step before it is taken for hung.
const HUNG: Duration = Duration::from_secs(120);

/// What is typed at the pane.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// A command line, typed once the previous one has given the prompt back (the shell writes the status before
    /// each prompt).
    Line(&'static str),
    /// Keys (tmux's names: `C-z`, `C-c`), sent once nvcc's compiler (`cicc`) runs, or, where the case says, once a
    /// program of nvcc's is held by the keeper.
    Keys(&'static str),
    /// `pkill -9 -x nvcc` over the pane's session, once nvcc compiles (and, where the case says, a program of nvcc's
    /// is held by the keeper for want of a slot): a kill by name, of every process called `nvcc` there.
    KillByName,
    /// A command line typed once nvcc compiles (or, where the case says, once a program of nvcc's is held): `exit`
    /// or `disown` while a build runs in the background.
    Later(&'static str),
    /// The terminal closed (tmux's server killed, so that the shell is hung up), once nvcc compiles or a program is
    /// held.
    CloseTerminal,
    /// `make` alone killed by SIGKILL (by pid), once nvcc compiles or a program is held: its compiles run on.
    KillMake,
    /// The file `go` written, once nvcc compiles or a program is held: the script `leave.sh` then exits, leaving the
    /// build it started running.
    Go,
}

struct Case {
    steps: &'static [Step],
    /// On the wrapper's side, wait for a program of nvcc's held at its exec (threads that follow the build) rather
    /// than a running `cicc`.
    until_held: bool,
    /// Variables for the wrapper's side only.
    wrapper_env: &'static [(&'static str, &'static str)],
    /// An interrupt reaches nvcc running with the threads the call took: it fails with nvcc's own code for that
    /// (`nvcc -t 2` ends SIGINT with 255 where nvcc alone ends with 2: docs/reliability.md), so only that make's rule
    /// failed is compared, not its code.
    interrupting_threads: bool,
    /// The build outlives the shell or the command that started it (a logout, a script that exits, make killed): the
    /// outcome is read from the files `rc` and `log` it writes (`(make; echo $? > rc) > log 2>&1 &`) once everything
    /// has ended, with the pane's lines while it lasts.
    outlives: bool,
}

impl Case {
    fn typing(steps: &'static [Step]) -> Case {
        Case { steps, until_held: false, wrapper_env: &[], interrupting_threads: false, outlives: false }
    }

    fn until_held(self) -> Case {
        Case { until_held: true, ..self }
    }

    fn wrapper_env(self, wrapper_env: &'static [(&'static str, &'static str)]) -> Case {
        Case { wrapper_env, ..self }
    }

    fn interrupting_threads(self) -> Case {
        Case { interrupting_threads: true, ..self }
    }

    fn outlives(self) -> Case {
        Case { outlives: true, ..self }
    }
}

/// How a side ended, as the pane and the directory show it.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    /// The pane's lines that job control and the shell's prompts write: `[N]` notices, `S=<status>` before each
    /// prompt, and make's own lines (its errors, and its count of the jobserver's slots at exit).
    said: Vec<String>,
    /// The object was built.
    object: bool,
    /// Processes of the call left stopped once everything else had ended.
    left_stopped: Vec<String>,
}

/// The tmux pane: an interactive bash in `dir`, with exactly the variables given and `PATH`.
struct Pane {
    tmux: PathBuf,
    socket: PathBuf,
}

impl Pane {
    fn new(tmux: &Path, dir: &Path, path: &str, env: &[(&str, &str)]) -> Pane {
        let pane = Pane { tmux: tmux.to_path_buf(), socket: dir.join("tmux.sock") };
        let mut shell = format!("env -i HOME={} TERM=xterm PATH={path}", dir.display());
        for (name, value) in env {
            shell += &format!(" {name}={value}");
        }
        shell += " bash --norc --noprofile -i";
        pane.run(&["-f", "/dev/null", "new-session", "-d", "-x", "250", "-y", "60", "-c"], Some((dir, &shell)));
        pane
    }

    fn run(&self, args: &[&str], last: Option<(&Path, &str)>) -> String {
        let mut cmd = std::process::Command::new(&self.tmux);
        cmd.arg("-S").arg(&self.socket).args(args);
        if let Some((dir, word)) = last {
            cmd.arg(dir).arg(word);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "tmux {args:?}: {}", stderr(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn keys(&self, keys: &[&str]) {
        self.run(&[&["send-keys", "-t", "0"], keys].concat(), None);
    }

    /// The pane's text, wrapped lines joined; nothing once the pane is gone (its shell ended, the terminal closed).
    fn screen(&self) -> String {
        let args = ["-p", "-J", "-S", "-", "-t", "0"];
        let out =
            std::process::Command::new(&self.tmux).arg("-S").arg(&self.socket).arg("capture-pane").args(args).output();
        out.ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    }

    /// Whether the pane's shell still runs (tmux's server ends with its last pane).
    fn alive(&self) -> bool {
        let mut cmd = std::process::Command::new(&self.tmux);
        cmd.arg("-S").arg(&self.socket).args(["has-session", "-t", "0"]);
        cmd.output().is_ok_and(|o| o.status.success())
    }

    /// The shell's session (its pid: it leads it).
    fn session(&self) -> String {
        self.run(&["display-message", "-p", "-t", "0", "#{pane_pid}"], None).trim().to_string()
    }

    /// Wait until the shell has given its prompt `n` times (its `PROMPT_COMMAND` writes `S=<status>` before each), or
    /// has ended (`exit`, the terminal closed); false after `HUNG`, or once a `cicc` is `stuck` in its handler.
    fn until_prompts(&self, n: usize, stuck: &StuckCicc) -> bool {
        let deadline = Instant::now() + HUNG;
        while Instant::now() < deadline && !stuck.now() {
            if self.screen().lines().filter(|l| l.starts_with("S=")).count() >= n || !self.alive() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        let _ = std::process::Command::new(&self.tmux).arg("-S").arg(&self.socket).arg("kill-server").output();
    }
}

/// Wait until a process named `cicc` runs in `dir` (or, with `held`, until the keeper holds one there for want of a
/// slot: at its exec, or stopped as the keeper of 2133ec2 and before held them, so that a case shows what it fixed);
/// false after `HUNG`.
fn until_compiling(dir: &Path, held: bool) -> bool {
    let deadline = Instant::now() + HUNG;
    while Instant::now() < deadline {
        let stopped = || process_states(dir).iter().any(|(_, name, state)| *state == 'T' && name != "bash");
        let seen = match held {
            true => !held_in(dir).is_empty() || stopped(),
            false => process_states(dir).iter().any(|(_, name, _)| name == "cicc"),
        };
        if seen {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Run `case` in a new directory, with the real toolkit's `bin` on PATH, behind the wrapper installed as `nvcc` where
/// `wrapper` says; how it ended.
fn side(case: &Case, root: &Path, tmux: &Path, wrapper: bool) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::write(dir.join("s.cu"), SLOW_CU).unwrap();
    std::fs::write(dir.join("Makefile"), MAKEFILE).unwrap();
    std::fs::write(dir.join("leave.sh"), LEAVE).unwrap();
    std::fs::set_permissions(dir.join("leave.sh"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let bin = dir.join("bin");
    std::fs::create_dir(&bin).unwrap();
    if wrapper {
        std::os::unix::fs::symlink(WRAPPER, bin.join("nvcc")).unwrap();
    }
    let path = format!("{}:{}:/usr/local/bin:/usr/bin:/bin", bin.display(), root.join("bin").display());
    let probe_cache = dir.join("probe-cache");
    let mut env = vec![
        ("G", format!("'{G}'")),
        ("PS1", "'$ '".to_string()),
        ("PROMPT_COMMAND", "'echo S=$?'".to_string()),
        ("NVCC_WRAPPER_PROBE_CACHE_DIR", probe_cache.display().to_string()),
        // No configuration file of the machine's (`isolate`); the pane's home is the case's own.
        ("NVCC_WRAPPER_NO_MACHINE_CONFIG", "1".to_string()),
    ];
    if wrapper {
        env.extend(case.wrapper_env.iter().map(|(n, v)| (*n, v.to_string())));
    }
    let env: Vec<(&str, &str)> = env.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let pane = Pane::new(tmux, dir, &path, &env);
    let shell: i32 = pane.session().parse().unwrap();
    let stuck = StuckCicc::new(dir);
    // The first prompt, then one for each line.
    let mut lines = 1;
    let mut said = Vec::new();
    for step in case.steps {
        match step {
            Step::Line(line) => {
                if !pane.until_prompts(lines, &stuck) {
                    said.push(format!("no prompt before `{line}`"));
                    break;
                }
                // The prompt itself comes right after the line its command writes.
                std::thread::sleep(Duration::from_millis(200));
                pane.keys(&[line, "Enter"]);
                lines += 1;
            }
            Step::Keys(keys) => {
                if !until_compiling(dir, case.until_held && wrapper) {
                    said.push(format!("nothing compiled before {keys}"));
                    break;
                }
                std::thread::sleep(Duration::from_millis(500));
                pane.keys(&[keys]);
            }
            Step::KillByName => {
                if !until_compiling(dir, case.until_held && wrapper) {
                    said.push("nothing held before the kill".into());
                    break;
                }
                let session = pane.session();
                let out = std::process::Command::new("pkill").args(["-9", "-x", "-s", &session, "nvcc"]).output();
                assert!(out.is_ok_and(|o| o.status.success()), "pkill found no nvcc in session {session}");
            }
            Step::Later(_) | Step::CloseTerminal | Step::KillMake | Step::Go => {
                if !until_compiling(dir, case.until_held && wrapper) {
                    said.push(format!("nothing compiled before {step:?}"));
                    break;
                }
                match step {
                    Step::Later(line) => {
                        pane.keys(&[line, "Enter"]);
                        lines += 1;
                    }
                    Step::CloseTerminal => {
                        // Only once the shell has taken the line before (its prompt is back): the CI run of
                        // 2026-12-02 closed the terminal before bash had read `disown`, and bash hung up its job.
                        if !pane.until_prompts(lines, &stuck) {
                            said.push("no prompt before the terminal closed".into());
                            break;
                        }
                        pane.run(&["kill-server"], None);
                    }
                    Step::KillMake => {
                        let make = process_states(dir).into_iter().find(|(_, name, _)| name == "make");
                        let (pid, _, _) = make.expect("no make compiling");
                        // SAFETY: kill takes plain integers; this side's make.
                        unsafe { libc::kill(pid, libc::SIGKILL) };
                    }
                    // The prompt these give back is the one their command line counted.
                    _ => std::fs::write(dir.join("go"), "").unwrap(),
                }
            }
        }
    }
    if said.is_empty() && !pane.until_prompts(lines, &stuck) {
        said.push("no prompt at the end".into());
    }
    // What the call left: wait for it to end (nvcc alone's programs outlive a kill of nvcc, and finish).
    let deadline = Instant::now() + HUNG;
    // Everything but the pane's own shell: a subshell of the case's (`(make; echo $? > rc) &`) is a bash too.
    let busy = || process_states(dir).into_iter().filter(|(pid, _, _)| *pid != shell).collect::<Vec<_>>();
    while busy().iter().any(|(_, _, state)| *state != 'T') && Instant::now() < deadline && !stuck.now() {
        std::thread::sleep(Duration::from_millis(50));
    }
    if stuck.found() {
        said.push(CICC_STUCK.into());
    }
    let left_stopped = busy().into_iter().map(|(pid, name, state)| format!("{pid} {name} {state}")).collect();
    if case.outlives {
        // What the build said of itself once its shell or its make was gone: its status, and make's own lines.
        let rc = std::fs::read_to_string(dir.join("rc")).unwrap_or_else(|_| "none".into());
        said.push(format!("rc={}", rc.trim()));
        let log = std::fs::read_to_string(dir.join("log")).unwrap_or_default();
        said.extend(log.lines().filter(|l| l.starts_with("make")).map(str::to_string));
    }
    let screen = pane.screen();
    drop(pane);
    for (pid, _, _) in process_states(dir) {
        // SAFETY: kill takes plain integers; what is left of this side's processes goes.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    let job_line = |l: &&str| {
        l.starts_with('[') && l.chars().nth(1).is_some_and(|c| c.is_ascii_digit())
            || l.starts_with("S=")
            || l.starts_with("make:")
            || l.starts_with("make[")
    };
    let words = |l: &str| {
        let words = l.split_whitespace().collect::<Vec<_>>().join(" ");
        match (case.interrupting_threads, words.rsplit_once(" Error ")) {
            (true, Some((rule, _))) => format!("{rule} Error (a failure)"),
            _ => words,
        }
    };
    said.extend(screen.lines().filter(job_line).map(words));
    Outcome { said, object: dir.join("s.o").is_file(), left_stopped }
}

/// Run `case` with nvcc `release` alone and through the wrapper: both must end alike, with nothing left stopped.
fn same_as_alone(release: &str, case: Case) {
    let Some(root) = real_toolkit(release) else { return };
    let Some(tmux) = real_program("tmux") else { return };
    if real_program("g++-11").is_none() {
        return;
    }
    // Both sides again when a `cicc` of either deadlocked in its own interrupt handler (a race inside `cicc`, on where
    // the signal lands: docs/nvcc-facts.md); a deadlock on every try fails the case, saying so.
    let stuck = |o: &Outcome| o.said.iter().any(|l| l == CICC_STUCK);
    let mut tries = 0;
    let (alone, wrapper) = loop {
        let alone = side(&case, &root, &tmux, false);
        let wrapper = side(&case, &root, &tmux, true);
        tries += 1;
        if !run_again(tries, [stuck(&alone), stuck(&wrapper)]) {
            break (alone, wrapper);
        }
    };
    assert!(
        !stuck(&alone) && !stuck(&wrapper),
        "{release}: {CICC_STUCK} on each of {TRIES} tries: nvcc alone {alone:?}, the wrapper {wrapper:?}"
    );
    assert!(alone.left_stopped.is_empty(), "{release}: nvcc alone left stopped: {alone:?}");
    // The harness's own failures (a prompt or a compile that never came) would make two sides alike for nothing.
    let harness = |l: &String| l.starts_with("no prompt") || l.starts_with("nothing ");
    assert!(!alone.said.iter().any(harness), "{release}: the case did not run with nvcc alone: {alone:?}");
    assert_eq!(wrapper, alone, "{release}: the wrapper (left) and nvcc alone (right) ended otherwise");
    eprintln!("{release}: both ended so: {alone:?}");
}

/// `terminal!(case, [nvcc_13_5, ...], Case)`: a `#[test]` for each release (`per_release!`), run by `same_as_alone`.
macro_rules! terminal {
    ($name:ident, [$($release:ident),+], $case:expr) => {
        crate::per_release!($name, [$($release),+], same_as_alone, $case);
    };
}

use Step::*;

/// A script that starts a build in the background and exits once `go` is written, leaving the build running in its
/// process group, which the script's exit leaves orphaned.
const LEAVE: &str = "#!/bin/bash\n(make -j2; echo $? > rc) > log 2>&1 &\nwhile [ ! -e go ]; do sleep 0.05; done\n";

/// A dependency file to complete: the wrapper waits for nvcc in a keeper.
const END: &str = "true | nvcc $G -c s.cu -o s.o -MD -MF s.d";
/// Threads taken from the slots free when nvcc starts, for the wrapper's side (`threads-follow = false`): the cases
/// that name no setting follow the build, as calls do by default.
const AT_START: &[(&str, &str)] = &[("NVCC_WRAPPER_THREADS_FOLLOW", "0")];

terminal!(
    ctrl_z_then_fg_at_a_pipelines_end,
    [nvcc_11_8, nvcc_12_4, nvcc_13_5],
    Case::typing(&[Line(END), Keys("C-z"), Line("fg")])
);
terminal!(ctrl_c_at_a_pipelines_end, [nvcc_11_8, nvcc_12_4, nvcc_13_5], Case::typing(&[Line(END), Keys("C-c")]));
terminal!(
    ctrl_z_then_bg_at_a_pipelines_end,
    [nvcc_13_5],
    Case::typing(&[Line(END), Keys("C-z"), Line("bg"), Line("wait %1")])
);
terminal!(
    ctrl_z_then_fg_at_a_pipelines_head,
    [nvcc_13_5],
    Case::typing(&[Line("nvcc $G -c s.cu -o s.o -MD -MF s.d | cat"), Keys("C-z"), Line("fg")])
);
terminal!(
    ctrl_z_then_fg_in_a_pipelines_middle,
    [nvcc_13_5],
    Case::typing(&[Line("true | nvcc $G -c s.cu -o s.o -MD -MF s.d | cat"), Keys("C-z"), Line("fg")])
);
terminal!(
    ctrl_z_then_fg_with_the_source_on_stdin,
    [nvcc_13_5],
    Case::typing(&[Line("cat s.cu | nvcc $G -x cu -c - -o s.o -MD -MF s.d"), Keys("C-z"), Line("fg")])
);
terminal!(ctrl_z_then_fg_under_make, [nvcc_13_5], Case::typing(&[Line("make"), Keys("C-z"), Line("fg")]));
terminal!(
    ctrl_z_then_fg_under_make_with_threads_from_its_slots,
    [nvcc_13_5],
    Case::typing(&[Line("make -j4"), Keys("C-z"), Line("fg")]).wrapper_env(AT_START)
);
terminal!(
    ctrl_c_under_make_with_threads_from_its_slots,
    [nvcc_13_5],
    Case::typing(&[Line("make -j4"), Keys("C-c")]).interrupting_threads().wrapper_env(AT_START)
);
terminal!(
    stty_tostop_and_the_debug_log_under_make_with_threads,
    [nvcc_11_8, nvcc_12_4, nvcc_13_5],
    Case::typing(&[Line("stty tostop"), Line("make -j4")])
        .wrapper_env(&[("NVCC_WRAPPER_LOG", "debug"), ("NVCC_WRAPPER_THREADS_FOLLOW", "0")])
);
terminal!(
    ctrl_z_then_fg_with_threads_that_follow_the_build,
    [nvcc_13_5],
    Case::typing(&[Line("make -j2"), Keys("C-z"), Line("fg")]).until_held()
);
terminal!(
    stty_tostop_and_the_debug_log_with_threads_that_follow_the_build,
    [nvcc_13_5],
    Case::typing(&[Line("stty tostop"), Line("make -j2")]).wrapper_env(&[("NVCC_WRAPPER_LOG", "debug")])
);
terminal!(
    a_kill_by_name_with_threads_that_follow_the_build,
    [nvcc_13_5],
    Case::typing(&[Line("make -j2"), KillByName]).until_held()
);

// Issue 57: a build that outlives what started it. When the shell exits, a script ends or make is killed, the build's
// process group loses its last parent outside it, and the kernel hangs up and continues the whole group if anything
// in it is stopped (POSIX's orphaned process group). nvcc alone never has a stopped process, and its build goes on;
// the keeper once held programs with SIGSTOP, and the build died of "Hangup". Each case waits, on the wrapper's side,
// until the keeper holds a program (make -j2: one slot free for three targets).

/// The background build the logout cases leave: its status in `rc`, its output in `log`.
const IN_THE_BACKGROUND: Step = Line("(make -j2; echo $? > rc) > log 2>&1 &");

terminal!(
    a_build_left_running_at_logout_with_disown_and_exit,
    [nvcc_11_8, nvcc_12_4, nvcc_13_5],
    Case::typing(&[IN_THE_BACKGROUND, Later("disown; exit")]).until_held().outlives()
);
terminal!(
    a_build_left_running_at_logout_with_exit,
    [nvcc_13_5],
    Case::typing(&[IN_THE_BACKGROUND, Later("exit")]).until_held().outlives()
);
terminal!(
    a_build_left_running_when_the_terminal_closes_after_disown,
    [nvcc_13_5],
    Case::typing(&[IN_THE_BACKGROUND, Later("disown"), CloseTerminal]).until_held().outlives()
);
terminal!(
    a_build_a_script_leaves_running,
    [nvcc_12_4, nvcc_13_5],
    Case::typing(&[Line("./leave.sh"), Go]).until_held().outlives()
);
terminal!(
    make_alone_killed_while_its_compile_runs,
    [nvcc_13_5],
    Case::typing(&[Line("make -j2"), KillMake]).until_held().outlives()
);
terminal!(
    the_debug_log_read_through_head,
    [nvcc_11_8, nvcc_13_5],
    Case::typing(&[Line("(NVCC_WRAPPER_LOG=debug make -j2; echo $? > rc) 2>&1 | head -1")]).outlives()
);
