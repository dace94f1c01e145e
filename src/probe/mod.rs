//! Probing: what the wrapper learns by asking host compilers and nvcc (`--version`, `-dumpmachine`, ...) and by
//! reading a toolkit's files. For hand use and `doctor`; the Nix package writes these facts into the config instead.
//!
//! Each submodule keeps its parsers pure (`&str` or bytes in, typed value out) and tested on outputs captured from
//! real tools (`tests/fixtures/probe/`). The few functions that run a program or read a file are thin shells around
//! them. This module must not decide anything (which compiler is acceptable is `plan`'s business), read the
//! environment, or print (the probe cache's debug log lines aside: they say why an answer was or was not reused).

pub mod cache;
pub mod compiler;
pub mod glibcxx;
pub mod gpus;
pub mod hold;
pub mod launcher;
pub mod memory;
pub mod ninja;
pub mod nvcc;
pub mod procfs;
pub mod system;
pub mod toolkit;
mod watch;

pub use watch::Stopped;

use std::fmt;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

/// The read end of a probed program's stdout or stderr.
enum Pipe {
    Out(std::process::ChildStdout),
    Err(std::process::ChildStderr),
}

impl Pipe {
    fn fd(&self) -> i32 {
        use std::os::unix::io::AsRawFd;
        match self {
            Pipe::Out(p) => p.as_raw_fd(),
            Pipe::Err(p) => p.as_raw_fd(),
        }
    }

    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Pipe::Out(p) => p.read(buf),
            Pipe::Err(p) => p.read(buf),
        }
    }
}

/// The process groups of the programs being probed, so that a signal that stops the wrapper stops them too.
mod group {
    use std::process::{Child, Command};
    use std::sync::atomic::{AtomicI32, Ordering};
    use std::sync::Once;

    /// Room for the groups of probes running at once (the wrapper runs one at a time).
    static GROUPS: [AtomicI32; 8] = [const { AtomicI32::new(0) }; 8];
    static INSTALL: Once = Once::new();
    const SIGNALS: [libc::c_int; 4] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT];

    /// Kill every process of a group.
    pub fn kill(group: i32) {
        if group > 0 {
            // SAFETY: kill with a negative pid signals that process group; no memory is involved.
            unsafe { libc::kill(-group, libc::SIGKILL) };
        }
    }

    /// A registered group, forgotten when dropped (after the program is reaped).
    pub struct Registered(Option<usize>);

    impl Drop for Registered {
        fn drop(&mut self) {
            if let Some(slot) = self.0 {
                GROUPS[slot].store(0, Ordering::SeqCst);
            }
        }
    }

    /// Start `command` (already set to run in a group of its own) and register its group. The stopping signals are
    /// held back meanwhile, so that none can stop the wrapper between the start and the registration; the program
    /// itself starts with none held back (std clears the mask in the child).
    pub fn spawn(command: &mut Command) -> std::io::Result<(Child, Registered)> {
        INSTALL.call_once(install);
        // SAFETY: sigset_t is plain data, filled by sigemptyset/sigaddset before use; pthread_sigmask only reads
        // `set` and writes `old`.
        let old = unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for sig in SIGNALS {
                libc::sigaddset(&mut set, sig);
            }
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
            old
        };
        let spawned = command.spawn();
        let registered = match &spawned {
            Ok(child) => {
                let group = child.id() as i32;
                let slot = GROUPS
                    .iter()
                    .position(|g| g.compare_exchange(0, group, Ordering::SeqCst, Ordering::SeqCst).is_ok());
                Registered(slot)
            }
            Err(_) => Registered(None),
        };
        // SAFETY: restores the mask saved above.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
        spawned.map(|child| (child, registered))
    }

    /// Catch the stopping signals the caller did not ignore (one it ignores stays ignored, for nvcc too: exec keeps
    /// an ignored signal and resets a caught one to the default).
    fn install() {
        for sig in SIGNALS {
            // SAFETY: a zeroed sigaction is a valid "no handler" value; sigaction reads `new` and writes `old`.
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, std::ptr::null(), &mut old) != 0 || old.sa_sigaction == libc::SIG_IGN {
                    continue;
                }
                let mut new: libc::sigaction = std::mem::zeroed();
                new.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
                libc::sigemptyset(&mut new.sa_mask);
                libc::sigaction(sig, &new, std::ptr::null_mut());
            }
        }
    }

    /// Kill the probes' groups, then die of the same signal, as without the handler.
    extern "C" fn on_signal(sig: libc::c_int) {
        for group in &GROUPS {
            kill(group.load(Ordering::SeqCst));
        }
        // SAFETY: signal and raise are async-signal-safe. The raised signal is held until the handler returns, and
        // then ends the process by its default action.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
    }
}

/// Whether a probed program has ended, seen without reaping it (so that its process group's id stays reserved).
struct Ended {
    pid: i32,
    /// A pidfd, readable once the program has ended; `None` where the kernel has none (before Linux 5.3).
    fd: Option<std::os::fd::OwnedFd>,
}

impl Ended {
    fn watch(pid: i32) -> Ended {
        // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor (or -1); the OwnedFd owns it.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        let fd = (fd >= 0).then(|| unsafe { std::os::fd::FromRawFd::from_raw_fd(fd as i32) });
        Ended { pid, fd }
    }

    /// Whether poll on `fd` tells of the end (else it must be asked).
    fn tells(&self) -> bool {
        self.fd.is_some()
    }

    fn fd(&self) -> i32 {
        use std::os::fd::AsRawFd;
        self.fd.as_ref().map_or(-1, |fd| fd.as_raw_fd())
    }

    /// Whether it has ended (a zombie, not yet reaped).
    fn now(&self) -> bool {
        // SAFETY: siginfo_t is plain data; waitid with WNOWAIT only reports, leaving the child to be reaped later.
        unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
            libc::waitid(libc::P_PID, self.pid as libc::id_t, &mut info, flags) == 0 && info.si_pid() != 0
        }
    }
}

/// A probe that failed: the program it ran (or the file it read), the arguments, and what went wrong.
#[derive(Debug)]
pub struct ProbeError {
    /// The program run or the file read. Empty while a pure parser's error has not yet been given its program.
    pub program: PathBuf,
    /// The arguments given to `program`; empty when a file was read.
    pub args: Vec<String>,
    pub kind: ProbeErrorKind,
}

#[derive(Debug)]
pub enum ProbeErrorKind {
    /// The program could not be started, or the file could not be read or resolved.
    Io(io::Error),
    /// The program ran and failed. `first_line` is the first line it printed (stderr first).
    Failed { status: ExitStatus, first_line: String },
    /// The output did not say what we looked for.
    Unexpected { expected: &'static str, found: String },
    /// Asked `--version` as nvcc, it said it is another program: its first line (`gcc (Debian 12.2.0-14) 12.2.0`).
    NotNvcc { says: String },
    /// The program sat still, or ran too long, and was killed with everything it started.
    TimedOut(Stopped),
    /// The program printed more than this many bytes on stdout or on stderr and was killed, with everything it
    /// started.
    TooMuchOutput(usize),
}

impl ProbeError {
    pub(crate) fn new(program: &Path, args: &[&str], kind: ProbeErrorKind) -> Self {
        ProbeError { program: program.to_path_buf(), args: args.iter().map(|a| a.to_string()).collect(), kind }
    }

    /// An error from a pure parser: it knows which arguments produced `output` but not which program printed it.
    fn unexpected(args: &[&str], expected: &'static str, output: &str) -> Self {
        let found = first_line(output).to_string();
        ProbeError::new(Path::new(""), args, ProbeErrorKind::Unexpected { expected, found })
    }

    fn io(path: &Path, err: io::Error) -> Self {
        ProbeError::new(path, &[], ProbeErrorKind::Io(err))
    }

    /// Names the program whose output a pure parser rejected.
    fn with_program(mut self, program: &Path) -> Self {
        self.program = program.to_path_buf();
        self
    }

    /// The command as a user could paste it into a shell, or the file's path.
    pub fn command(&self) -> String {
        let program = Some(self.program.as_os_str()).filter(|p| !p.is_empty());
        crate::error::shell::display(
            program.into_iter().chain(self.args.iter().map(|a| std::ffi::OsStr::new(a.as_str()))),
        )
    }
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let command = self.command();
        match &self.kind {
            ProbeErrorKind::Io(err) if self.args.is_empty() => write!(f, "{command}: {err}"),
            ProbeErrorKind::Io(err) => write!(f, "could not run `{command}`: {err}"),
            ProbeErrorKind::Failed { status, first_line } => {
                write!(f, "`{command}` failed ({status})")?;
                if !first_line.is_empty() {
                    write!(f, ": {first_line}")?;
                }
                Ok(())
            }
            ProbeErrorKind::TimedOut(Stopped::Still(limit)) => write!(
                f,
                "`{command}` did nothing for {} s (no CPU time, no page read, in any process it started) and was \
                 stopped",
                limit.as_secs()
            ),
            ProbeErrorKind::TimedOut(Stopped::Working(limit)) => {
                write!(f, "`{command}` was still running after {} s and was stopped", limit.as_secs())
            }
            ProbeErrorKind::TooMuchOutput(limit) => {
                write!(
                    f,
                    "`{command}` printed more than {} and was stopped",
                    crate::error::bounded::size(*limit as u64)
                )
            }
            ProbeErrorKind::NotNvcc { says } => write!(f, "`{command}` says `{says}`: it is not nvcc"),
            ProbeErrorKind::Unexpected { expected, found } => {
                let source = if self.args.is_empty() { "contents of" } else { "output from" };
                write!(f, "unexpected {source} `{command}`: expected {expected}, got `{found}`")
            }
        }
    }
}

impl std::error::Error for ProbeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ProbeErrorKind::Io(err) => Some(err),
            _ => None,
        }
    }
}

/// The first non-blank line of `text`, trimmed and cut to a length fit for an error message.
pub(crate) fn first_line(text: &str) -> &str {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    match line.char_indices().nth(160) {
        Some((cut, _)) => &line[..cut],
        None => line,
    }
}

/// How long a probed program may do nothing. `g++ --version` takes milliseconds and `nvcc --version` a few tens; a
/// program that has used no CPU time and read no page for this long is hung (waiting on a lock, a network file
/// system, a terminal) and is stopped, so the wrapper never hangs a build with it.
pub const TIME_LIMIT: Duration = Duration::from_secs(10);

/// How long a probed program may run in all, working or not. A loaded machine makes a compiler slow, not still: the
/// first start of `clang++` from a cold disk cache has taken more than 10 s under a build's load (and 25 s with reads
/// throttled to 8 MiB/s), and stopping it then would change what the wrapper decides. A program still busy after
/// this long is looping, and is stopped.
pub const WORKING_LIMIT: Duration = Duration::from_secs(120);

const LIMITS: watch::Limits =
    watch::Limits { still: TIME_LIMIT, working: WORKING_LIMIT, look_every: Duration::from_secs(1) };

/// The most a probed program may print on stdout, and again on stderr. `g++ --version` prints under 1 KiB; a program
/// that prints more is not answering the question (`yes`, a script gone wrong) and is stopped, so the wrapper never
/// runs out of memory reading it.
pub const OUTPUT_LIMIT: usize = 1 << 20;

/// What every program a probe starts is given, so that it cannot start the wrapper probing again (a "compiler" that is
/// a script around `nvcc`): the wrapper's loop counter at its limit, so such a wrapper stops at once (exit 125)
/// instead of recursing. `locate`'s tests check this names its counter and limit.
pub const LOOP_GUARD: (&str, &str) = ("NVCC_WRAPPER_DEPTH", "8");

/// Runs `program args` and returns its stdout.
///
/// No shell, and the environment is inherited (a compiler may be a Nix cc-wrapper or a ccache link that needs its
/// environment, and none of the lines we parse is translated by the locale) but for the loop guard. Stdin is closed so
/// that a program waiting for input fails instead of hanging. The program runs in a process group of its own, so that
/// a program that does nothing for `TIME_LIMIT` (or runs for `WORKING_LIMIT`), or prints more than `OUTPUT_LIMIT`,
/// is killed with everything it started (a compiler driver's own children included), and so is it when the wrapper
/// is stopped by a signal (`SIGTERM`, `SIGINT`, `SIGHUP`, `SIGQUIT`) while it probes.
fn run(program: &Path, args: &[&str]) -> Result<String, ProbeError> {
    run_within(program, args, LIMITS)
}

fn run_within(program: &Path, args: &[&str], limits: watch::Limits) -> Result<String, ProbeError> {
    use std::os::unix::process::CommandExt;
    let fail = |kind| ProbeError::new(program, args, kind);
    let mut command = Command::new(program);
    command
        .args(args)
        .env(LOOP_GUARD.0, LOOP_GUARD.1)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let (mut child, _registered) = group::spawn(&mut command).map_err(|err| fail(ProbeErrorKind::Io(err)))?;
    // The group's id is the program's pid. It stays reserved while the program is not reaped, and the group is only
    // ever killed before that, so the signal cannot reach another process that took the number.
    let group = child.id() as i32;
    let stopped = |child: &mut std::process::Child, kind| {
        group::kill(group);
        let _ = child.wait();
        Err(fail(kind))
    };
    let mut pipes: [Option<Pipe>; 2] = [child.stdout.take().map(Pipe::Out), child.stderr.take().map(Pipe::Err)];
    let mut output = [Vec::new(), Vec::new()];
    let mut watch = watch::Watch::new(limits, group);
    let mut chunk = vec![0u8; 64 << 10];
    // Told when the program ends (Linux 5.3 and later), else asked every few milliseconds: a probe ends when the
    // program does, not when its output closes, which a child it left in the background may hold open for ever.
    let ended = Ended::watch(group);
    let mut pause = Duration::from_millis(1);
    // Once it has ended, what a child it left keeps writing is read for a few rounds more, no longer.
    let mut rounds_after_end = 0;
    // Both pipes are read as they fill, so a chatty program never blocks on a full pipe, until both are closed or
    // the program has ended.
    loop {
        if let Some(why) = watch.check() {
            return stopped(&mut child, ProbeErrorKind::TimedOut(why));
        }
        let done = ended.now();
        let wait = if done {
            // What it wrote before it ended is in the pipes: read it, waiting for nothing more.
            0
        } else {
            let left = watch.until_next_look();
            let left = if ended.tells() { left } else { left.min(pause) };
            pause = (pause * 2).min(Duration::from_millis(20));
            i32::try_from(left.as_millis()).unwrap_or(i32::MAX).max(1)
        };
        let mut polled = [
            pipes[0].as_ref().map_or(-1, Pipe::fd),
            pipes[1].as_ref().map_or(-1, Pipe::fd),
            if done { -1 } else { ended.fd() },
        ]
        .map(|fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 });
        // SAFETY: `polled` is an array of three pollfd, valid for the duration of the call.
        let ready = unsafe { libc::poll(polled.as_mut_ptr(), 3, wait) };
        if ready < 0 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return stopped(&mut child, ProbeErrorKind::Io(err));
        }
        for (i, polled) in polled[..2].iter().enumerate() {
            let Some(pipe) = pipes[i].as_mut().filter(|_| polled.revents != 0) else { continue };
            match pipe.read(&mut chunk) {
                Ok(0) => pipes[i] = None,
                Ok(n) => output[i].extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => pipes[i] = None,
            }
            if output[i].len() > OUTPUT_LIMIT {
                return stopped(&mut child, ProbeErrorKind::TooMuchOutput(OUTPUT_LIMIT));
            }
        }
        let readable = polled[..2].iter().any(|p| p.revents != 0);
        rounds_after_end += usize::from(done);
        if pipes.iter().all(Option::is_none) || (done && (!readable || rounds_after_end > 16)) {
            break;
        }
    }
    if pipes.iter().any(Option::is_some) {
        // The program ended and something it started still holds its output: stopped with the program's group, whose
        // id stays reserved until the program is reaped below.
        group::kill(group);
    }
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|err| fail(ProbeErrorKind::Io(err)))? {
            break status;
        }
        if let Some(why) = watch.check() {
            return stopped(&mut child, ProbeErrorKind::TimedOut(why));
        }
        std::thread::sleep(pause.min(watch.until_next_look()));
        pause = (pause * 2).min(Duration::from_millis(5));
    };
    let [stdout, stderr] = output;
    let stdout = String::from_utf8_lossy(&stdout).into_owned();
    if !status.success() {
        let stderr = String::from_utf8_lossy(&stderr).into_owned();
        let said = if first_line(&stderr).is_empty() { first_line(&stdout) } else { first_line(&stderr) };
        return Err(fail(ProbeErrorKind::Failed { status, first_line: said.to_string() }));
    }
    Ok(stdout)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// Limits short enough for a test: still for 300 ms, working for `working`.
    fn limits(working: Duration) -> watch::Limits {
        watch::Limits { still: Duration::from_millis(300), working, look_every: Duration::from_millis(50) }
    }

    #[test]
    fn errors_name_the_command_and_what_it_said() {
        let err = ProbeError::unexpected(&["--version"], "a GCC or Clang version banner", "\n  icx (R) 2024.0\nmore\n")
            .with_program(Path::new("/opt/intel/bin/icx"));
        assert_eq!(
            err.to_string(),
            "unexpected output from `/opt/intel/bin/icx --version`: expected a GCC or Clang version banner, \
             got `icx (R) 2024.0`"
        );
        // Before a runner names the program, the arguments alone still say which probe it was.
        let err = ProbeError::unexpected(&["-dumpmachine"], "a target triple", "");
        assert_eq!(err.to_string(), "unexpected output from `-dumpmachine`: expected a target triple, got ``");
    }

    #[test]
    fn commands_are_shell_quoted() {
        let err = ProbeError::io(Path::new("/opt/my cuda/version.json"), io::ErrorKind::PermissionDenied.into());
        assert_eq!(err.to_string(), "'/opt/my cuda/version.json': permission denied");
    }

    #[test]
    fn a_missing_program_is_reported_as_such() {
        let err = run(Path::new("/nonexistent/g++-99"), &["--version"]).unwrap_err();
        assert!(matches!(err.kind, ProbeErrorKind::Io(_)), "{err:?}");
        assert!(err.to_string().starts_with("could not run `/nonexistent/g++-99 --version`: "), "{err}");
    }

    #[test]
    fn a_hung_program_is_stopped_and_named() {
        let started = Instant::now();
        let err = run_within(Path::new("/bin/sleep"), &["30"], limits(Duration::from_secs(20))).unwrap_err();
        assert!(matches!(err.kind, ProbeErrorKind::TimedOut(Stopped::Still(_))), "{err:?}");
        assert!(started.elapsed() < Duration::from_secs(5), "not stopped in time: {:?}", started.elapsed());
        assert_eq!(
            err.to_string(),
            "`/bin/sleep 30` did nothing for 0 s (no CPU time, no page read, in any process it started) and was stopped"
        );
    }

    /// A shell loop that keeps a CPU busy for about `seconds`, then says `done`.
    fn busy(seconds: f32) -> String {
        format!(
            "end=$(($(date +%s%N) + {})); while [ $(date +%s%N) -lt $end ]; do :; done; echo done",
            (seconds * 1e9) as u64
        )
    }

    #[test]
    fn a_slow_program_that_keeps_working_is_not_stopped() {
        // Busy for four times the still limit, in the driver and then in a child the driver waits for (as a compiler
        // driver waits for its compiler): the group's work is what counts.
        for script in [busy(1.2), format!("sh -c '{}' & wait", busy(1.2))] {
            let out = run_within(Path::new("/bin/sh"), &["-c", &script], limits(Duration::from_secs(20)));
            assert_eq!(out.unwrap_or_else(|e| panic!("{script}: {e}")), "done\n");
        }
    }

    #[test]
    fn a_program_busy_past_the_working_limit_is_stopped() {
        let started = Instant::now();
        let script = busy(30.0);
        let err = run_within(Path::new("/bin/sh"), &["-c", &script], limits(Duration::from_secs(1))).unwrap_err();
        assert!(matches!(err.kind, ProbeErrorKind::TimedOut(Stopped::Working(_))), "{err:?}");
        assert!(started.elapsed() < Duration::from_secs(5), "not stopped in time: {:?}", started.elapsed());
        assert!(err.to_string().ends_with("` was still running after 1 s and was stopped"), "{err}");
    }

    /// Whether a process is gone (or a zombie, which runs nothing).
    fn gone(pid: &str) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => super::procfs::fields_of(stat.as_bytes()).and_then(|mut f| f.next()).is_some_and(|s| s == "Z"),
        }
    }

    #[test]
    fn a_hung_program_is_stopped_with_the_programs_it_started() {
        let dir = tempfile::tempdir().unwrap();
        let pids = dir.path().join("pids");
        // A driver that starts a child of its own and waits for it, as a compiler driver does.
        let script = format!("sleep 300 & echo $! > '{}'; wait", pids.display());
        let err = run_within(Path::new("/bin/sh"), &["-c", &script], limits(Duration::from_secs(20))).unwrap_err();
        assert!(matches!(err.kind, ProbeErrorKind::TimedOut(_)), "{err:?}");
        let child = std::fs::read_to_string(&pids).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while !gone(child.trim()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(gone(child.trim()), "the driver's child {} outlived the probe", child.trim());
    }

    /// Issue 38: a compiler whose `--version` leaves a child in the background holding its output was taken for hung
    /// and stopped after 10 s. The probe ends when the program does, with what it printed; the child is stopped.
    #[test]
    fn a_probe_ends_when_the_program_ends_not_when_its_output_closes() {
        let dir = tempfile::tempdir().unwrap();
        let pid = dir.path().join("pid");
        let started = Instant::now();
        let script = format!("echo 'g++ (GCC) 12.2.0'; sleep 30 & echo $! > '{}'", pid.display());
        let out = run_within(Path::new("/bin/sh"), &["-c", &script], limits(Duration::from_secs(20)));
        assert_eq!(out.unwrap(), "g++ (GCC) 12.2.0\n");
        assert!(started.elapsed() < Duration::from_millis(250), "waited for the child: {:?}", started.elapsed());
        let child = std::fs::read_to_string(&pid).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while !gone(child.trim()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(gone(child.trim()), "the child {} that held the output outlived the probe", child.trim());
        // Its stderr, and a child that keeps writing: the probe still ends.
        let out = run_within(
            Path::new("/bin/sh"),
            &["-c", "echo x; (while :; do echo y; sleep 0.01; done) >&2 &"],
            limits(Duration::from_secs(20)),
        );
        assert_eq!(out.unwrap(), "x\n");
    }

    #[test]
    fn a_program_that_floods_its_output_is_stopped_at_the_limit() {
        let started = Instant::now();
        for stream in ["", ">&2"] {
            let err = run(Path::new("/bin/sh"), &["-c", &format!("exec yes {stream}")]).unwrap_err();
            assert!(matches!(err.kind, ProbeErrorKind::TooMuchOutput(OUTPUT_LIMIT)), "{err:?}");
            assert!(err.to_string().ends_with("printed more than 1 MiB and was stopped"), "{err}");
        }
        assert!(started.elapsed() < Duration::from_secs(5), "not stopped at once: {:?}", started.elapsed());
        // Exactly the limit is still an answer.
        let out = run(Path::new("/bin/sh"), &["-c", &format!("head -c {OUTPUT_LIMIT} /dev/zero")]).unwrap();
        assert_eq!(out.len(), OUTPUT_LIMIT);
    }

    #[test]
    fn a_probed_program_gets_the_loop_guard_and_chatty_output_whole() {
        let out =
            run(Path::new("/bin/sh"), &["-c", "echo $NVCC_WRAPPER_DEPTH; head -c 300000 /dev/zero | tr '\\0' x >&2"]);
        assert_eq!(out.unwrap(), "8\n");
    }

    #[test]
    fn a_failing_program_is_reported_with_its_first_line() {
        let err = run(Path::new("/bin/sh"), &["-c", "echo; echo '  nope: no input files ' >&2; exit 3"]).unwrap_err();
        let shown = err.to_string();
        assert!(shown.starts_with("`/bin/sh -c "), "{shown}");
        assert!(shown.ends_with("` failed (exit status: 3): nope: no input files"), "{shown}");
    }
}
