//! The surroundings corpus's harness (`super` holds the cases): a case, its two sides run in directories of their
//! own, and what must match between them.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::cgroup::Cgroup;
use crate::cicc::{run_again, StuckCicc, CICC_STUCK};
use crate::support::*;

pub const KERNEL: &str = "__global__ void k(int *p) { p[threadIdx.x] *= 2; }\n";
/// Two GPU targets, given on the command line on both sides: threads from free slots apply to the wrapper's call.
pub const TARGETS: [&str; 2] = ["-gencode=arch=compute_80,code=sm_80", "-gencode=arch=compute_90,code=sm_90"];
/// Free slots in the jobserver the test holds.
pub const TOKENS: usize = 3;
/// How long one side may run before it is taken for hung.
const HUNG: Duration = Duration::from_secs(300);
/// How a side ends when it ran past `HUNG`.
const HUNG_WORD: &str = "hung";

/// What `MAKEFLAGS` names.
#[derive(Clone, Debug)]
pub enum Flags {
    None,
    /// A jobserver the test holds, `TOKENS` free: make's pipe (descriptors 3 and 4) or a FIFO.
    Held {
        fifo: bool,
    },
    /// This text (`{dir}` is the call's directory), with descriptors 3 and 4 as `fds` says.
    Raw(&'static str, Fds),
}

/// What descriptors 3 and 4 are in the call.
#[derive(Clone, Copy, Debug)]
pub enum Fds {
    /// Closed (as GNU make 4.3 leaves them for a rule not marked `+`).
    Closed,
    /// A regular file (`{dir}/file`), open for reading and writing, on both.
    File,
    /// The read end of one pipe and the write end of another.
    TwoPipes,
}

/// A standard stream of the call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stream {
    /// stdin: /dev/null; stdout, stderr: a pipe the test reads.
    Plain,
    /// stdin only: the kernel's source, through a pipe.
    SourcePipe,
    Closed,
    /// stdout, stderr: a pipe whose reader has gone (writes fail with EPIPE; SIGPIPE ignored, as under Python).
    NoReader,
    /// stdout: /dev/full.
    Full,
}

/// What lies at the user's config place (`$HOME/.config/nvcc-wrapper/config.toml`).
#[derive(Clone, Copy, Debug)]
pub enum Place {
    Nothing,
    DanglingLink,
    LinkLoop,
    Directory,
    Fifo,
}

/// A signal sent once nvcc's compiler (`cicc`) runs.
#[derive(Clone, Copy, Debug)]
pub enum Stop {
    /// To the call's own process.
    Process(libc::c_int),
    /// To its process group.
    Group(libc::c_int),
}

#[derive(Clone, Debug)]
pub struct Case {
    pub name: String,
    /// nvcc's arguments after `-ccbin`.
    pub args: Vec<String>,
    pub flags: Flags,
    pub stdin: Stream,
    pub stdout: Stream,
    pub stderr: Stream,
    pub place: Place,
    /// Run in a mount namespace where `/proc` is an empty tmpfs.
    pub hide_proc: bool,
    /// Run in a memory cgroup of 1.5 GiB.
    pub cgroup: bool,
    pub stop: Option<Stop>,
    /// Environment for the wrapper's side only.
    pub wrapper_env: Vec<(&'static str, &'static str)>,
    /// Compare stdout's bytes.
    pub read_stdout: bool,
    /// Compile `SLOW_CU` (for a signal mid-compile).
    pub heavy: bool,
    /// Run by a shell that waits for it (`sh -c 'nvcc ...; exit $?'`, as make runs a rule): the shell leads the call's
    /// process group, not nvcc (or the wrapper), which a shell's job or Ninja's command would.
    pub under_shell: bool,
}

pub fn case(name: &str, args: &[&str]) -> Case {
    Case {
        name: name.to_string(),
        args: args.iter().map(|a| a.to_string()).collect(),
        flags: Flags::None,
        stdin: Stream::Plain,
        stdout: Stream::Plain,
        stderr: Stream::Plain,
        place: Place::Nothing,
        hide_proc: false,
        cgroup: false,
        stop: None,
        wrapper_env: vec![(FOLLOW, "0")],
        read_stdout: false,
        heavy: false,
        under_shell: false,
    }
}

/// The setting of threads that follow the build, on unless set.
const FOLLOW: &str = "NVCC_WRAPPER_THREADS_FOLLOW";

/// A compile of the kernel for both targets.
pub fn compile(name: &str) -> Case {
    let mut args: Vec<&str> = TARGETS.to_vec();
    args.extend(["-c", "k.cu", "-o", "o/k.o"]);
    case(name, &args)
}

impl Case {
    /// `MAKEFLAGS` naming a jobserver the test holds: make's pipe, or a FIFO.
    pub fn held(mut self, fifo: bool) -> Case {
        self.flags = Flags::Held { fifo };
        self
    }

    /// `MAKEFLAGS` of this text, with descriptors 3 and 4 as `fds` says.
    pub fn claim(mut self, text: &'static str, fds: Fds) -> Case {
        self.flags = Flags::Raw(text, fds);
        self
    }

    /// `SLOW_CU` compiled for both targets with `extra` flags, and `stop` sent once `cicc` runs.
    pub fn stopped(mut self, stop: Stop, extra: &[&str]) -> Case {
        self.heavy = true;
        self.stop = Some(stop);
        self.args =
            [&TARGETS[..], extra, &["-c", "heavy.cu", "-o", "o/h.o"]].concat().iter().map(|a| a.to_string()).collect();
        self
    }

    /// Run by a shell that waits for it.
    pub fn under_shell(mut self) -> Case {
        self.under_shell = true;
        self
    }

    /// The wrapper's side with threads that follow the build (`threads-follow`, the default): the other cases take
    /// their threads at the start (`case`), as they did before following was.
    pub fn following(mut self) -> Case {
        self.wrapper_env.retain(|(var, _)| *var != FOLLOW);
        self
    }
}

/// How a call ended and what it left.
#[derive(Debug, Default)]
struct Outcome {
    /// `exit N`, `signal N`, `hung`, or `CICC_STUCK`.
    ended: String,
    names: BTreeSet<String>,
    /// `{dir}/file`'s bytes and modification time (nanoseconds).
    watched: (Vec<u8>, i64),
    stdout: Vec<u8>,
    tokens: Option<usize>,
    /// Processes still running in the call's directory a moment after it ended.
    left: Vec<String>,
    /// The names left in its TMPDIR.
    temporaries: Vec<String>,
    stderr: String,
}

/// Every name under `dir` (directories with `/`), but the test's own.
fn names(dir: &Path) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(dir.join(&rel)) else { continue };
        for entry in entries.flatten() {
            let name = rel.join(entry.file_name());
            let top = name.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
            if ["tmp", "home", "probe-cache", "bin", "slots", "empty-fifo"].contains(&top.as_str()) {
                continue;
            }
            let mut shown = name.to_string_lossy().into_owned();
            if entry.file_type().unwrap().is_dir() {
                shown.push('/');
                stack.push(name);
            }
            found.insert(shown);
        }
    }
    found
}

/// The processes of the call's tree named `name` (found by their working directory).
fn running(dir: &Path, name: &str) -> bool {
    running_in(dir).iter().any(|p| p.ends_with(&format!(" {name}")))
}

/// Lay out the call's directory.
fn lay_out(case: &Case, dir: &Path) {
    for sub in ["o", "tmp", "home", "bin"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    std::fs::write(dir.join("k.cu"), KERNEL).unwrap();
    if case.heavy {
        std::fs::write(dir.join("heavy.cu"), SLOW_CU).unwrap();
    }
    std::fs::write(dir.join("file"), "++++").unwrap();
    let old = filetime(dir.join("file"));
    assert!(old.is_some());
    assert!(Command::new("mkfifo").arg(dir.join("empty-fifo")).status().unwrap().success());
    let place = dir.join("home/.config/nvcc-wrapper/config.toml");
    std::fs::create_dir_all(place.parent().unwrap()).unwrap();
    match case.place {
        Place::Nothing => {}
        Place::DanglingLink => std::os::unix::fs::symlink("nowhere.toml", &place).unwrap(),
        Place::LinkLoop => std::os::unix::fs::symlink("config.toml", &place).unwrap(),
        Place::Directory => std::fs::create_dir(&place).unwrap(),
        Place::Fifo => assert!(Command::new("mkfifo").arg(&place).status().unwrap().success()),
    }
}

/// Set a file's modification time to an old one, so that any write shows.
fn filetime(path: PathBuf) -> Option<()> {
    Command::new("touch").args(["-d", "2020-01-01 00:00:00"]).arg(path).status().ok()?.success().then_some(())
}

/// What stdout or stderr is given for `stream`; `None` when it is closed.
fn output(stream: Stream) -> Option<Stdio> {
    match stream {
        Stream::Closed => None,
        Stream::Full => Some(std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap().into()),
        // A pipe whose reader is gone: its read end closed before the call starts.
        Stream::NoReader => {
            let mut fds = [0; 2];
            // SAFETY: pipe2 fills two descriptors; the read end is closed at once, the write end given to the call.
            unsafe {
                libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC);
                libc::close(fds[0]);
                Some(Stdio::from(<std::fs::File as std::os::unix::io::FromRawFd>::from_raw_fd(fds[1])))
            }
        }
        Stream::Plain | Stream::SourcePipe => Some(Stdio::piped()),
    }
}

/// Run one side of `case` in `dir`: `nvcc` (the real one, or the wrapper's link) found on `path`.
fn run(case: &Case, dir: &Path, wrapper: bool, path: &OsString, compiler: &str) -> Outcome {
    lay_out(case, dir);
    let mut held = match case.flags {
        Flags::Held { fifo } => Some(Held::new(dir, fifo, TOKENS)),
        _ => None,
    };
    let mut args: Vec<String> = vec![format!("-ccbin={compiler}")];
    args.extend(case.args.iter().cloned());
    let cgroup = if case.cgroup {
        let limit = (1536u64 << 20).to_string();
        Some(Cgroup::new("memory", &[("memory.limit_in_bytes", limit.clone())], &[("memory.max", limit)]))
    } else {
        None
    };
    if let Some(None) = cgroup {
        return Outcome { ended: "skipped: no cgroup".into(), ..Outcome::default() };
    }
    let mut cmd = if case.hide_proc {
        let mut cmd = Command::new("unshare");
        cmd.args(["--mount", "--propagation", "private", "sh", "-c", "mount -t tmpfs none /proc && exec \"$@\"", "sh"]);
        cmd.arg("nvcc").args(&args);
        cmd
    } else if let Some(Some(cgroup)) = &cgroup {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        cgroup.wrap(Path::new("nvcc"), &args)
    } else if case.under_shell {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "nvcc \"$@\"; status=$?; exit $status", "sh"]).args(&args);
        cmd
    } else {
        // The `nvcc` the case's PATH finds (the wrapper's link, or the toolkit's), started by that name, as a build's
        // `nvcc` is.
        let mut cmd = Command::new(which::which_in("nvcc", Some(path), dir).unwrap());
        cmd.arg0("nvcc").args(&args);
        cmd
    };
    cmd.current_dir(dir)
        .env_clear()
        .env("PATH", path)
        .env("HOME", dir.join("home"))
        .env("TMPDIR", dir.join("tmp"))
        .env("NVCC_WRAPPER_PROBE_CACHE_DIR", dir.join("probe-cache"))
        .process_group(0);
    isolate(&mut cmd, dir, false);
    if wrapper {
        cmd.envs(case.wrapper_env.iter().copied());
    }
    let dir_text = dir.display().to_string();
    match &case.flags {
        Flags::None => {}
        Flags::Held { .. } => held.as_ref().unwrap().give(&mut cmd),
        Flags::Raw(text, fds) => {
            cmd.env("MAKEFLAGS", text.replace("{dir}", &dir_text));
            let file = std::fs::OpenOptions::new().read(true).write(true).open(dir.join("file")).unwrap();
            let fds = *fds;
            let file = std::os::unix::io::IntoRawFd::into_raw_fd(file);
            // SAFETY: pipe, dup2 and close are async-signal-safe; only descriptors of the child are changed.
            unsafe {
                cmd.pre_exec(move || {
                    match fds {
                        Fds::Closed => {
                            libc::close(3);
                            libc::close(4);
                        }
                        Fds::File => {
                            libc::dup2(file, 3);
                            libc::dup2(file, 4);
                        }
                        Fds::TwoPipes => {
                            let (mut a, mut b) = ([0; 2], [0; 2]);
                            libc::pipe(a.as_mut_ptr());
                            libc::pipe(b.as_mut_ptr());
                            libc::dup2(a[0], 3);
                            libc::dup2(b[1], 4);
                        }
                    }
                    Ok(())
                });
            }
        }
    }
    // The standard streams the call gets; those closed, closed in the child.
    let mut closed = Vec::new();
    match case.stdin {
        Stream::Closed => closed.push(0),
        Stream::SourcePipe => {
            cmd.stdin(Stdio::piped());
        }
        _ => {
            cmd.stdin(Stdio::null());
        }
    }
    match output(case.stdout) {
        Some(given) => {
            cmd.stdout(given);
        }
        None => closed.push(1),
    }
    match output(case.stderr) {
        Some(given) => {
            cmd.stderr(given);
        }
        None => closed.push(2),
    }
    // SAFETY: close is async-signal-safe; `closed` was made before the fork.
    unsafe {
        cmd.pre_exec(move || {
            for fd in &closed {
                libc::close(*fd);
            }
            Ok(())
        });
    }
    if case.stdout == Stream::NoReader || case.stderr == Stream::NoReader {
        // As a Python parent's child would start: SIGPIPE ignored, so a write to the pipe fails with EPIPE.
        // SAFETY: signal is async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                libc::signal(libc::SIGPIPE, libc::SIG_IGN);
                Ok(())
            })
        };
    }
    let mut child = cmd.spawn().unwrap();
    if case.stdin == Stream::SourcePipe {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(KERNEL.as_bytes()).unwrap();
    }
    // Read stdout and stderr as they come, so that a chatty call never blocks on a full pipe.
    let readers: Vec<_> = [
        child.stdout.take().map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
        child.stderr.take().map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
    ]
    .into_iter()
    .map(|r| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut r) = r {
                let _ = std::io::Read::read_to_end(&mut r, &mut bytes);
            }
            bytes
        })
    })
    .collect();
    let started = Instant::now();
    if let Some(stop) = case.stop {
        while !running(dir, "cicc") && started.elapsed() < Duration::from_secs(120) {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(300));
        let pid = child.id() as i32;
        // SAFETY: kill takes plain integers; the call is the test's child, not yet reaped, and leads its group.
        unsafe {
            match stop {
                Stop::Process(signal) => libc::kill(pid, signal),
                Stop::Group(signal) => libc::kill(-pid, signal),
            };
        }
    }
    let stuck = StuckCicc::new(dir);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Ok(status);
        }
        let why = if started.elapsed() > HUNG {
            Some(HUNG_WORD)
        } else if case.stop.is_some() && stuck.now() {
            Some(CICC_STUCK)
        } else {
            None
        };
        if let Some(why) = why {
            // SAFETY: as above.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            break Err(why);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut ended = match status {
        Err(why) => why.to_string(),
        Ok(s) => match s.signal() {
            Some(signal) => format!("signal {signal}"),
            None => format!("exit {}", s.code().unwrap_or(-1)),
        },
    };
    // What is still running a moment later: what a build's next step would meet.
    std::thread::sleep(Duration::from_millis(200));
    let left = running_in(dir);
    // Then whatever is left ends (nvcc alone leaves its programs running after SIGTERM) before the count and before
    // the call's stdout and stderr are read to their end, which what is left may hold open. A `cicc` that deadlocked
    // in its own handler after its nvcc ended never ends (seen once, nvcc 13.5 alone, SIGTERM to the group, -MD): it
    // is killed, and the case counts as stuck (both sides run again); so is what outlives the deadline.
    let deadline = Instant::now() + Duration::from_secs(120);
    let watch = StuckCicc::new(dir);
    loop {
        let running = running_in(dir);
        if running.is_empty() {
            break;
        }
        let stuck = watch.now();
        if stuck || Instant::now() >= deadline {
            for pid in running.iter().filter_map(|p| p.split(' ').next()?.parse::<i32>().ok()) {
                // SAFETY: kill takes plain integers; each is a process whose working directory is this case's.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            if stuck {
                ended = CICC_STUCK.to_string();
            }
            std::thread::sleep(Duration::from_millis(200));
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut out: Vec<Vec<u8>> = readers.into_iter().map(|r| r.join().unwrap()).collect();
    let stderr_bytes = out.pop().unwrap();
    let stdout_bytes = out.pop().unwrap();
    let meta = std::fs::metadata(dir.join("file")).unwrap();
    Outcome {
        ended,
        names: names(dir),
        watched: (std::fs::read(dir.join("file")).unwrap(), meta.mtime() * 1_000_000_000 + meta.mtime_nsec()),
        stdout: if case.read_stdout { stdout_bytes } else { Vec::new() },
        tokens: held.as_mut().map(Held::count),
        left,
        temporaries: std::fs::read_dir(dir.join("tmp"))
            .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_default(),
        stderr: String::from_utf8_lossy(&stderr_bytes).into_owned(),
    }
}

/// How the wrapper's outcome differs from nvcc alone's, in words; empty when it does not.
fn differences(case: &Case, alone: &Outcome, wrapper: &Outcome) -> Vec<String> {
    let mut problems = Vec::new();
    // nvcc run with threads answers an interrupt otherwise than with one: `nvcc -t 2` ends SIGINT with 255 where nvcc
    // alone ends it with 2, and SIGTERM with 1 or 255 (measured on 11.8, 12.4 and 13.5). A call that took slots then
    // fails as surely, with nvcc's own code for how it ran (docs/reliability.md).
    let threads_may_differ = case.stop.is_some() && matches!(case.flags, Flags::Held { .. });
    let failed = |o: &Outcome| o.ended != "exit 0" && o.ended != HUNG_WORD && o.ended != CICC_STUCK;
    let same_end = alone.ended == wrapper.ended || (threads_may_differ && failed(alone) && failed(wrapper));
    if !same_end {
        problems.push(format!("nvcc alone ends {}, the wrapper {}", alone.ended, wrapper.ended));
    }
    if alone.names != wrapper.names {
        problems.push(format!("nvcc alone leaves {:?}, the wrapper {:?}", alone.names, wrapper.names));
    }
    if alone.watched != wrapper.watched {
        problems.push(format!(
            "the watched file: nvcc alone leaves {:?}, the wrapper {:?}",
            alone.watched, wrapper.watched
        ));
    }
    if alone.stdout != wrapper.stdout {
        problems.push(format!(
            "stdout: nvcc alone wrote {:?}, the wrapper {:?}",
            String::from_utf8_lossy(&alone.stdout),
            String::from_utf8_lossy(&wrapper.stdout)
        ));
    }
    if alone.tokens != wrapper.tokens || wrapper.tokens.is_some_and(|t| t != TOKENS) {
        problems.push(format!("tokens after: nvcc alone {:?}, the wrapper {:?}", alone.tokens, wrapper.tokens));
    }
    if wrapper.left.len() > alone.left.len() {
        problems.push(format!("left running: nvcc alone {:?}, the wrapper {:?}", alone.left, wrapper.left));
    }
    // `-objtemp` (a reproducible-builds flag) names cicc's bitcode after the output (`NAME.compute_XX-XXXXXX..lgenfe
    // .bc`), which nvcc's own clean-up of an interrupted call (by its pid) misses, and which the wrapper cannot tell
    // from another build's: one such file a target being compiled stays (docs/reliability.md).
    let counted =
        |o: &Outcome| o.temporaries.iter().filter(|n| case.stop.is_none() || !n.ends_with("..lgenfe.bc")).count();
    if counted(wrapper) > counted(alone) {
        problems.push(format!(
            "temporary files: nvcc alone {:?}, the wrapper {:?}",
            alone.temporaries, wrapper.temporaries
        ));
    }
    problems
}

/// Run `case` on `release`: nvcc alone, then the wrapper installed as `nvcc` first on PATH, each in a directory of
/// its own; fail with every way the wrapper's outcome differs. The row docs/reliability.md's table shows goes to
/// stderr.
pub fn same_as_alone(release: &str, case: Case) {
    if (case.hide_proc || case.cgroup) && !as_root("a case that hides /proc or makes a cgroup") {
        return;
    }
    if real_program("unshare").is_none() || real_program("timeout").is_none() {
        return;
    }
    let Some(root) = real_toolkit(release) else { return };
    let compiler = if release.starts_with("11.") { "/usr/bin/g++-11" } else { "/usr/bin/g++-12" };
    let scratch = tempfile::tempdir().unwrap();
    #[allow(clippy::disallowed_methods)]
    let system = std::env::var_os("PATH").unwrap_or_default();
    let path = |wrapper_bin: Option<&Path>| {
        let mut dirs: Vec<PathBuf> = wrapper_bin.into_iter().map(Path::to_path_buf).collect();
        dirs.push(root.join("bin"));
        dirs.extend(std::env::split_paths(&system));
        std::env::join_paths(dirs).unwrap()
    };
    // Both sides again, from new directories, when a `cicc` of either deadlocked in its own interrupt handler (a race
    // inside `cicc`, on where the signal lands); a deadlock on every try counts as how the case ended.
    let mut tries = 0;
    let (alone, wrapper) = loop {
        let base = scratch.path().join(tries.to_string());
        let (alone_dir, wrapper_dir) = (base.join("alone"), base.join("wrapper"));
        let alone = run(&case, &alone_dir, false, &path(None), compiler);
        std::fs::create_dir_all(wrapper_dir.join("bin")).unwrap();
        std::os::unix::fs::symlink(WRAPPER, wrapper_dir.join("bin/nvcc")).unwrap();
        let wrapper = run(&case, &wrapper_dir, true, &path(Some(&wrapper_dir.join("bin"))), compiler);
        tries += 1;
        if !run_again(tries, [alone.ended == CICC_STUCK, wrapper.ended == CICC_STUCK]) {
            break (alone, wrapper);
        }
    };
    if alone.ended.starts_with("skipped") {
        eprintln!("note: nvcc {release}, {}: {}", case.name, alone.ended);
        return;
    }
    let shown = |o: &Outcome| {
        let mut words = vec![o.ended.clone()];
        if let Some(tokens) = o.tokens {
            words.push(format!("{tokens} of {TOKENS} slots back"));
        }
        if !o.left.is_empty() {
            words.push(format!("{} left running", o.left.len()));
        }
        words.join(", ")
    };
    eprintln!("| {} | {release} | {} | {} |", case.name, shown(&alone), shown(&wrapper));
    let problems = differences(&case, &alone, &wrapper);
    assert!(
        problems.is_empty(),
        "nvcc {release}, {}: {}\n  nvcc alone said: {}\n  the wrapper said: {}",
        case.name,
        problems.join("; "),
        alone.stderr.trim(),
        wrapper.stderr.trim()
    );
}
