//! nvcc as a child the wrapper waits for, as safe as exec: for a call that leaves the wrapper work after nvcc ends
//! (a dependency file to complete). Exec needs none of this, since nvcc then *is* the wrapper's process.
//!
//! The wrapper (W) forks a keeper (K), a copy of itself that runs no code of the plan: K starts nvcc as its own child
//! and waits for it, and W waits for K. K exists because a process killed by SIGKILL can do nothing: the kernel tells
//! K when W dies (`PR_SET_PDEATHSIG`), and K stops what W started. K is a child subreaper, so the processes nvcc starts
//! (`sh`, `cicc`, `ptxas`, `gcc`) stay its descendants when nvcc dies before them and can be stopped too.
//!
//! Process groups: nvcc runs in the caller's process group, as it would alone, so that a terminal's job control and a
//! signal to the group (make's and Ninja's interrupt, `timeout`, `kill -- -PGID`) reach nvcc and its programs once,
//! exactly as they would reach nvcc alone. W leaves that group while nvcc runs (unless it leads it: a shell's job),
//! and K has a group of its own, so neither hears a group's signal a second time, and a kill of the whole group
//! (`timeout -s KILL` in a make rule) ends nvcc and its programs but not W or K. Job slots lent to the call (`Lend`)
//! are taken by K, once it is out of every group a kill could name, and go back to the build once nvcc and
//! everything it started have ended, however they ended.
//!
//! - A signal sent to W itself (those in `FORWARDED` that the caller did not ignore) is passed to K and by K to nvcc,
//!   which answers it as it would alone (nvcc 11.8 to 13.5 end on SIGTERM, 255, and ignore SIGINT and SIGQUIT while a
//!   program of theirs runs, as `system(3)` does). One a terminal sent to a W that leads its group reached nvcc too:
//!   it is not sent again; nor is a SIGINT or SIGQUIT to such a W (`SHARES_GROUP`).
//! - When W dies, K gets SIGTERM and sends it to nvcc and every process nvcc started, at once.
//! - After any of these, once nvcc has ended, what is left of its processes is stopped before K ends (nvcc alone
//!   leaves its `cicc` or `gcc` running when SIGTERM ends it): SIGTERM first, so that `gcc` removes its temporary
//!   files as it does when a build is interrupted, and SIGKILL for what is left after `GRACE`. No program of nvcc's
//!   writes an object after the wrapper has gone. On an ordinary end nothing is stopped (a compiler cache's server
//!   that a launcher started lives on).
//! - K ends as nvcc ended (its exit code, or the same signal), and W then does: the caller sees nvcc's status.
//! - nvcc starts with what exec would give it: argv, environment, the caller's signal mask and ignored signals, the
//!   caller's SIGPIPE disposition, its descriptors (a make jobserver's included), and the standard streams the caller
//!   closed, closed (as `super::command` gives exec). Only SIGCHLD is at its default even where the caller ignored
//!   it: nvcc waits for its own programs. K starts it with `posix_spawn`, which copies no memory.
//!
//! When `run` returns, the forwarded signals are blocked and W's handlers are gone: whatever W does next (replacing
//! a dependency file) cannot be cut in half by one, and `super::end_as` lets a pending one end the wrapper after it.

use std::ffi::{CString, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use super::follow::{self, Follow, Ledger};
use super::lend::{Lend, ThreadsIn};
use crate::context::Env;

/// Signals a caller sends to stop or poke a compiler (make and ninja on an interrupt, a CI's timeout, `kill`): sent to
/// the wrapper, they reach nvcc. Each ends a process by default.
pub const FORWARDED: [libc::c_int; 6] =
    [libc::SIGHUP, libc::SIGINT, libc::SIGQUIT, libc::SIGTERM, libc::SIGUSR1, libc::SIGUSR2];

/// What K gets when W dies.
const PARENT_DIED: libc::c_int = libc::SIGTERM;

/// K's exit code when nvcc could not be started (its errno has then been sent to W through the pipe).
const NOT_STARTED: i32 = 127;

/// K's pid, for W's handler (0: none).
static KEEPER: AtomicI32 = AtomicI32::new(0);

/// W shares nvcc's process group (it leads it, so it could not leave): a SIGINT or SIGQUIT it gets most likely went
/// to the whole group (a shell's `kill %1`, Ninja's interrupt, which signals each command's group) and reached nvcc
/// already. Passed on, it would reach nvcc twice, and nvcc answers the second otherwise (255 where alone it says 2);
/// one sent to W alone, nvcc alone would ignore while a program of its own runs. So those two are not passed on.
static SHARES_GROUP: AtomicBool = AtomicBool::new(false);

extern "C" fn forward(signal: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    let keeper = KEEPER.load(Ordering::SeqCst);
    let interactive = signal == libc::SIGINT || signal == libc::SIGQUIT;
    if interactive && SHARES_GROUP.load(Ordering::SeqCst) {
        return;
    }
    // SAFETY: the kernel hands a valid siginfo to an SA_SIGINFO handler; kill is async-signal-safe.
    unsafe {
        if keeper > 0 && (*info).si_code != libc::SI_KERNEL {
            libc::kill(keeper, signal);
        }
    }
}

/// A set of signals.
fn set_of(signals: &[libc::c_int]) -> libc::sigset_t {
    // SAFETY: sigset_t is plain data, initialised by sigemptyset before use.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for &signal in signals {
            libc::sigaddset(&mut set, signal);
        }
        set
    }
}

/// Change the signal mask (`how` with `set`); the mask before.
fn mask(how: libc::c_int, set: &libc::sigset_t) -> libc::sigset_t {
    // SAFETY: sigprocmask reads `set` and fully writes `old`.
    unsafe {
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigprocmask(how, set, &mut old);
        old
    }
}

/// The current action for `signal`.
fn action_of(signal: libc::c_int) -> libc::sigaction {
    // SAFETY: with a null new action, sigaction only writes the current one into `old`.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(signal, std::ptr::null(), &mut old);
        old
    }
}

/// Where nvcc's temporary files are, to remove what a call that failed left of them (nvcc alone leaves them when it is
/// killed, or when its programs outlive it): its own in `tmpdir` (`tmpxft_<pid, 8 hex digits>_...`), and, where the
/// wrapper added `-objtemp`, those it names after the output, beside it (`beside`: the output, whose `NAME.*` files
/// written since nvcc started are its, but for the dependency files in `keep`, which go only when nvcc left one cut
/// short). Only files that are certainly the call's: `cicc`'s bitcode, which `-objtemp` names after the output in
/// `tmpdir`, cannot be told from another build's of an output of the same name there, and stays (a directory of the
/// call's own would tell, at a tenth more of the wait for nvcc on every call: measured, and left out). Never when the
/// user keeps intermediates (`--keep`).
pub struct Leftovers {
    pub tmpdir: std::path::PathBuf,
    pub beside: Option<std::path::PathBuf>,
    pub keep: Vec<std::path::PathBuf>,
}

/// How long nvcc's programs left running after a stop get after SIGTERM before SIGKILL.
pub const GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// Run `program` (nvcc, or the launcher in front of it) with `args` and exactly `env` as described above, and wait for
/// it: how it ended, or why it could not start. With `lend`, K takes free job slots as nvcc's threads and gives them
/// back once nvcc and what it started have ended, whatever ends them, W's death included. Returns with the forwarded
/// signals blocked (see the module's header).
pub fn run(
    program: &Path,
    args: &[OsString],
    env: &Env,
    lend: Option<Lend>,
    leftovers: Option<Leftovers>,
) -> io::Result<ExitStatus> {
    // What K holds and stops, for W to put right if K is killed (`follow::Ledger`).
    let ledger = lend.as_ref().and_then(|_| Ledger::shared());
    let client = lend.as_ref().map(|l| l.client);
    let saved: Vec<(libc::c_int, libc::sigaction)> =
        FORWARDED.into_iter().map(|s| (s, action_of(s))).filter(|(_, a)| a.sa_sigaction != libc::SIG_IGN).collect();
    let caught: Vec<libc::c_int> = saved.iter().map(|(s, _)| *s).collect();
    let forwarded = set_of(&FORWARDED);
    // Held back until K's pid is known, so that none is lost; K and nvcc get the caller's mask back.
    let caller_mask = mask(libc::SIG_BLOCK, &forwarded);
    // A caller that ignores SIGCHLD would have its children reaped by the kernel, and no wait could tell how nvcc
    // ended: the default for W, K and nvcc (which waits for its own programs).
    let sigchld_ignored = action_of(libc::SIGCHLD).sa_sigaction == libc::SIG_IGN;
    // SAFETY: a handler that only reads an atomic and calls kill; SIG_DFL for SIGCHLD is always valid.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = forward as *const () as usize;
        action.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        for &signal in &caught {
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
        if sigchld_ignored {
            libc::signal(libc::SIGCHLD, libc::SIG_DFL);
        }
    }
    // Out of the caller's process group while nvcc runs in it (see the module's header): a signal sent to the group
    // then reaches nvcc once, as it would alone, and a pid's signal reaches W, which passes it on. A group's leader
    // (a shell's job) cannot leave its group, and stays.
    // SAFETY: getpid, getpgrp and setpgid take and return plain integers.
    let caller_group = unsafe { libc::getpgrp() };
    let left_group = caller_group != unsafe { libc::getpid() } && unsafe { libc::setpgid(0, 0) } == 0;
    SHARES_GROUP.store(!left_group, Ordering::SeqCst);
    let restore = || {
        mask(libc::SIG_BLOCK, &forwarded);
        if left_group {
            // Back in the caller's group, for what W says after nvcc (or the nvcc it runs instead). A group that has
            // gone meanwhile cannot be joined, and W ends soon.
            // SAFETY: as above.
            unsafe { libc::setpgid(0, caller_group) };
        }
        KEEPER.store(0, Ordering::SeqCst);
        for (signal, old) in &saved {
            // SAFETY: puts back the action read above.
            unsafe { libc::sigaction(*signal, old, std::ptr::null_mut()) };
        }
        if sigchld_ignored {
            // SAFETY: the caller's own disposition, read above.
            unsafe { libc::signal(libc::SIGCHLD, libc::SIG_IGN) };
        }
    };
    let start = Start { program, args, env, group: caller_group, lend, leftovers, ledger };
    let result = start_keeper(start, &caught, caller_mask);
    if let (Some(ledger), Some(client)) = (ledger, client) {
        let back = ledger.settle(client);
        if back > 0 {
            tracing::debug!("the keeper ended holding {back} job slots: given back");
        }
    }
    restore();
    result
}

/// Fork K, let it start nvcc, and wait for it (W's side).
fn start_keeper(start: Start, caught: &[libc::c_int], caller_mask: libc::sigset_t) -> io::Result<ExitStatus> {
    // Built before the fork, so that a command nvcc cannot be given fails here (K builds it again with threads).
    let command = Spawn::new(start.program, start.args, start.env)?;
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills `fds` with two new descriptors, closed on exec.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let [read_end, write_end] = fds;
    // SAFETY: getpid has no preconditions.
    let wrapper = unsafe { libc::getpid() };
    // SAFETY: the wrapper runs no other thread, so the child may go on running Rust code (allocating included)
    // until it ends by `_exit` or a signal, which never returns into the wrapper's code.
    let keeper = unsafe { libc::fork() };
    if keeper < 0 {
        let err = io::Error::last_os_error();
        close(read_end);
        close(write_end);
        return Err(err);
    }
    if keeper == 0 {
        close(read_end);
        keep(start, command, wrapper, caught, caller_mask, write_end);
    }
    // Out of W's group at once, as K itself does first: whichever runs first, no kill of W's group reaches K after this.
    // SAFETY: setpgid takes plain integers; K may already have done it (then this changes nothing).
    unsafe { libc::setpgid(keeper, keeper) };
    KEEPER.store(keeper, Ordering::SeqCst);
    close(write_end);
    mask(libc::SIG_SETMASK, &caller_mask);
    // K's report: nothing when nvcc started (K closes its end), else the errno of the failed start.
    let mut errno = [0u8; 4];
    let mut got = 0;
    while got < errno.len() {
        // SAFETY: reads into the part of `errno` not yet filled.
        let n = unsafe { libc::read(read_end, errno[got..].as_mut_ptr().cast(), errno.len() - got) };
        if n > 0 {
            got += n as usize;
        } else if n == 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            break;
        }
    }
    close(read_end);
    let status = wait(keeper)?;
    if got == errno.len() && status.code() == Some(NOT_STARTED) {
        return Err(io::Error::from_raw_os_error(i32::from_ne_bytes(errno)));
    }
    Ok(status)
}

fn close(fd: libc::c_int) {
    // SAFETY: closes a descriptor this module opened and owns.
    unsafe { libc::close(fd) };
}

/// Wait for `pid`, through interruptions.
fn wait(pid: libc::pid_t) -> io::Result<ExitStatus> {
    let mut status = 0;
    loop {
        // SAFETY: waitpid writes the status of our own child into `status`.
        if unsafe { libc::waitpid(pid, &mut status, 0) } == pid {
            return Ok(ExitStatus::from_raw(status));
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// What K needs to start nvcc and to leave nothing behind: the command, the caller's process group (where nvcc runs),
/// the slots lent and the temporary files to look for.
struct Start<'a> {
    program: &'a Path,
    args: &'a [OsString],
    env: &'a Env,
    group: libc::pid_t,
    lend: Option<Lend<'a>>,
    leftovers: Option<Leftovers>,
    ledger: Option<&'static Ledger>,
}

/// K: leave W's group, take the lent slots, start nvcc, pass signals on, stop what is left when told to, remove what
/// a failed call left, give the slots back, and end as nvcc ended. `command` is the one W built. Never returns.
fn keep(
    start: Start,
    command: Spawn,
    wrapper: libc::pid_t,
    caught: &[libc::c_int],
    caller_mask: libc::sigset_t,
    report: libc::c_int,
) -> ! {
    // The forwarded signals are blocked (inherited); SIGCHLD joins them, and all are taken by `sigwaitinfo`.
    let mut waited: Vec<libc::c_int> = caught.to_vec();
    waited.extend([libc::SIGCHLD, PARENT_DIED]);
    let waited = set_of(&waited);
    mask(libc::SIG_BLOCK, &waited);
    // SAFETY: setpgid and prctl with these options take plain integers. A W that died before this line sent nothing:
    // then the parent is no longer W, and nothing is started.
    unsafe {
        libc::setpgid(0, 0);
        libc::prctl(libc::PR_SET_PDEATHSIG, PARENT_DIED as libc::c_ulong, 0, 0, 0);
        if libc::getppid() != wrapper {
            libc::_exit(NOT_STARTED);
        }
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0);
    }
    let lend = &start.lend;
    let ledger = start.ledger;
    // Following needs to see nvcc's children, and a ledger for W; else the slots free now are taken at the start.
    let follows = lend
        .as_ref()
        .filter(|l| l.follow && matches!(l.channel, ThreadsIn::Argv(_)) && ledger.is_some() && Follow::possible());
    let mut held = match (follows, lend) {
        (None, Some(lend)) => take(lend, ledger),
        _ => Vec::new(),
    };
    let give_back = |held: &[u8]| {
        if let Some(lend) = lend {
            let mut lost = 0;
            for byte in held {
                if let Some(ledger) = ledger {
                    ledger.giving_back(*byte);
                }
                lost += usize::from(!lend.client.give_back(*byte));
            }
            if lost > 0 {
                tracing::debug!("{lost} job slots could not be given back: the jobserver is full or gone");
            }
        }
    };
    // With slots taken, or following, nvcc's command gets its threads: W's command is built again with them.
    let threads = match follows {
        Some(lend) => lend.most.min(follow::MOST as u32),
        None => held.len() as u32 + 1,
    };
    let command = match lend.as_ref().filter(|_| threads > 1) {
        None => Ok(command),
        Some(lend) => {
            match follows {
                Some(_) => tracing::debug!("threads follow the build: nvcc runs with --threads {threads}"),
                None => tracing::debug!("{} job slots taken: nvcc runs with --threads {threads}", held.len()),
            }
            let threads = threads.to_string();
            match lend.channel {
                ThreadsIn::Argv(at) => {
                    let mut args = start.args.to_vec();
                    args.splice(at..at, [OsString::from("--threads"), OsString::from(threads)]);
                    Spawn::new(start.program, &args, start.env)
                }
                ThreadsIn::PrependFlags => {
                    let name = crate::context::vars::NVCC_PREPEND_FLAGS;
                    let mut flags = OsString::from(format!("--threads {threads}"));
                    if let Some(given) = start.env.non_empty(name) {
                        flags.push(" ");
                        flags.push(given);
                    }
                    let mut env = start.env.clone();
                    env.set(name, flags);
                    Spawn::new(start.program, start.args, &env)
                }
            }
        }
    };
    // A file's times are taken from a coarse clock: a second earlier than the start, to miss none of nvcc's.
    let started = std::time::SystemTime::now() - std::time::Duration::from_secs(1);
    let nvcc = match command.map_err(|_| libc::EINVAL).and_then(|c| c.spawn(&caller_mask, start.group)) {
        Ok(pid) => pid,
        Err(errno) => {
            give_back(&held);
            let errno = errno.to_ne_bytes();
            // SAFETY: writes four bytes from a local array to the pipe W reads; then ends this process.
            unsafe {
                libc::write(report, errno.as_ptr().cast(), errno.len());
                libc::_exit(NOT_STARTED);
            }
        }
    };
    close(report);
    let mut follow = follows.zip(ledger).map(|(lend, ledger)| Follow::new(lend, ledger, nvcc));
    let mut stopping = false;
    let tick = libc::timespec { tv_sec: 0, tv_nsec: follow::TICK.as_nanos() as libc::c_long };
    let status = loop {
        // SAFETY: siginfo_t is plain data that sigwaitinfo fills.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `waited` is blocked in this thread, as sigwaitinfo and sigtimedwait require.
        let signal = match &follow {
            Some(_) => unsafe { libc::sigtimedwait(&waited, &mut info, &tick) },
            None => unsafe { libc::sigwaitinfo(&waited, &mut info) },
        };
        if signal < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EAGAIN) {
            if let Some(follow) = follow.as_mut() {
                follow.tick();
            }
            continue;
        }
        if signal == libc::SIGCHLD || signal < 0 {
            if let Some(status) = reap(nvcc) {
                break status;
            }
            continue;
        }
        // SAFETY: getppid has no preconditions.
        let wrapper_gone = unsafe { libc::getppid() } != wrapper;
        if !wrapper_gone && !caught.contains(&signal) {
            // A signal the caller ignores, sent to K itself: ignored, as by nvcc alone.
            continue;
        }
        stopping = true;
        // What K stopped must run to hear what comes, and nothing is stopped any more.
        if let Some(mut follow) = follow.take() {
            follow.release_all();
            held.append(&mut follow.held);
        }
        if wrapper_gone {
            // Nobody is left to hear nvcc's answer: everything stops at once.
            signal_tree(nvcc, signal);
        } else if info.si_code != libc::SI_KERNEL {
            // SAFETY: kill takes plain integers.
            unsafe { libc::kill(nvcc, signal) };
        }
    };
    if let Some(mut follow) = follow.take() {
        follow.release_all();
        held.append(&mut follow.held);
    }
    let failed = !ExitStatus::from_raw(status).success();
    if stopping {
        stop_orphans();
    } else if failed {
        // Programs of nvcc's that a signal to its group is ending too may still write a temporary file.
        settle(start.group);
    }
    if let (Some(leftovers), true) = (&start.leftovers, failed) {
        remove_leftovers(leftovers, nvcc, started);
    }
    // Nothing of nvcc's runs any more: its threads' slots go back to the build.
    give_back(&held);
    end_as_status(status)
}

/// Take free slots for `lend`, without waiting: as many as nvcc may use, and the memory free holds, read only when a
/// slot is free. The bytes taken, to be written back as they were (and written down in `ledger`).
fn take(lend: &Lend, ledger: Option<&Ledger>) -> Vec<u8> {
    let mut held = Vec::new();
    if lend.most < 2 || !lend.client.has_free() {
        return held;
    }
    let most = lend.most.min((lend.memory_holds)()).saturating_sub(1);
    while held.len() < most as usize {
        match lend.client.try_take() {
            Some(byte) => {
                if let Some(ledger) = ledger {
                    ledger.took(byte);
                }
                held.push(byte)
            }
            None => break,
        }
    }
    held
}

/// The output's directory and the prefix of the temporary files `-objtemp` names after it (`NAME.`).
fn beside_prefix(output: &Path) -> Option<(&Path, Vec<u8>)> {
    let dir = output.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = output.file_name()?;
    Some((dir, [name.as_bytes(), b"."].concat()))
}

/// Remove the regular files a failed nvcc left: its own in the temporary directory, and those named after the output
/// beside it, written since it started.
fn remove_leftovers(leftovers: &Leftovers, nvcc: libc::pid_t, started: std::time::SystemTime) {
    let remove = |dir: &Path, theirs: &dyn Fn(&std::fs::DirEntry) -> bool| {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_file()) && theirs(&entry) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    };
    let own = format!("tmpxft_{nvcc:08x}_");
    remove(&leftovers.tmpdir, &|e| e.file_name().as_bytes().starts_with(own.as_bytes()));
    // A dependency file nvcc was writing when it was stopped: cut short, it would name a path that is not one, and
    // stop the next `make` ("No rule to make target"). Whole (it ends with a newline), it stays, as nvcc left it.
    for depfile in &leftovers.keep {
        let Ok(meta) = std::fs::symlink_metadata(depfile) else { continue };
        let written = meta.modified().is_ok_and(|t| t >= started);
        if written && meta.is_file() && meta.len() <= crate::error::bounded::DEPFILE {
            let whole =
                crate::error::bounded::read(depfile, crate::error::bounded::DEPFILE).is_ok_and(|t| t.ends_with(b"\n"));
            if !whole {
                let _ = std::fs::remove_file(depfile);
            }
        }
    }
    if let Some((dir, prefix)) = leftovers.beside.as_deref().and_then(beside_prefix) {
        remove(dir, &|e| {
            e.file_name().as_bytes().starts_with(&prefix)
                && !leftovers.keep.contains(&e.path())
                && e.metadata().and_then(|m| m.modified()).is_ok_and(|t| t >= started)
        });
    }
}

/// nvcc's command, ready for `posix_spawn` (a vfork, which copies no memory): argv[0] the program's path, exactly
/// `env`, the caller's SIGPIPE disposition and its closed standard streams, as `super::command` gives exec.
struct Spawn {
    program: CString,
    /// Owners of the strings `argv` and `envp` point into.
    _strings: Vec<CString>,
    argv: Vec<*const libc::c_char>,
    envp: Vec<*const libc::c_char>,
}

impl Spawn {
    fn new(program: &Path, args: &[OsString], env: &Env) -> io::Result<Spawn> {
        let cstring = |bytes: &[u8]| CString::new(bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e));
        let program = cstring(program.as_os_str().as_bytes())?;
        let mut strings = vec![program.clone()];
        for arg in args {
            strings.push(cstring(arg.as_bytes())?);
        }
        let argc = strings.len();
        for (name, value) in env.iter() {
            strings.push(cstring(&[name.as_bytes(), b"=", value.as_bytes()].concat())?);
        }
        let pointers = |s: &[CString]| s.iter().map(|c| c.as_ptr()).chain([std::ptr::null()]).collect::<Vec<_>>();
        let argv = pointers(&strings[..argc]);
        let envp = pointers(&strings[argc..]);
        Ok(Spawn { program, _strings: strings, argv, envp })
    }

    /// Start it with `mask`, in process group `group`; its pid, or the errno of the failure.
    fn spawn(&self, mask: &libc::sigset_t, group: libc::pid_t) -> Result<libc::pid_t, i32> {
        let (sigpipe_ignored, closed) = super::caller_state();
        // SAFETY: the attribute and file-action objects are initialised before use and destroyed after; every
        // pointer handed to posix_spawn points into `self`, which outlives the call; signal() changes only this
        // process's SIGPIPE disposition, which the child inherits (an ignored signal stays ignored across exec).
        unsafe {
            libc::signal(libc::SIGPIPE, if sigpipe_ignored { libc::SIG_IGN } else { libc::SIG_DFL });
            let mut attr: libc::posix_spawnattr_t = std::mem::zeroed();
            let mut actions: libc::posix_spawn_file_actions_t = std::mem::zeroed();
            libc::posix_spawnattr_init(&mut attr);
            libc::posix_spawn_file_actions_init(&mut actions);
            libc::posix_spawnattr_setsigmask(&mut attr, mask);
            libc::posix_spawnattr_setpgroup(&mut attr, group);
            libc::posix_spawnattr_setflags(
                &mut attr,
                (libc::POSIX_SPAWN_SETSIGMASK | libc::POSIX_SPAWN_SETPGROUP) as libc::c_short,
            );
            for fd in (0..3).filter(|fd| closed & 1 << fd != 0) {
                libc::posix_spawn_file_actions_addclose(&mut actions, fd);
            }
            let mut pid = 0;
            let errno = libc::posix_spawn(
                &mut pid,
                self.program.as_ptr(),
                &actions,
                &attr,
                self.argv.as_ptr() as *const *mut libc::c_char,
                self.envp.as_ptr() as *const *mut libc::c_char,
            );
            libc::posix_spawn_file_actions_destroy(&mut actions);
            libc::posix_spawnattr_destroy(&mut attr);
            if errno == 0 {
                Ok(pid)
            } else {
                Err(errno)
            }
        }
    }
}

/// Reap K's ended children; nvcc's status once it has ended.
fn reap(nvcc: libc::pid_t) -> Option<i32> {
    let mut found = None;
    loop {
        let mut status = 0;
        // SAFETY: waitpid writes the status of one of K's own children into `status`.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid <= 0 {
            return found;
        }
        if pid == nvcc {
            found = Some(status);
        }
    }
}

/// Send `signal` to nvcc, then to every process it started that is still running.
fn signal_tree(nvcc: libc::pid_t, signal: libc::c_int) {
    // SAFETY: kill takes plain integers.
    unsafe { libc::kill(nvcc, signal) };
    for pid in descendants(nvcc) {
        // SAFETY: as above.
        unsafe { libc::kill(pid, signal) };
    }
}

/// Stop what is left of nvcc's processes (once nvcc has ended, they are K's children: K is their subreaper): SIGTERM,
/// up to `GRACE` for them to end, then SIGKILL.
fn stop_orphans() {
    // SAFETY: getpid has no preconditions.
    let me = unsafe { libc::getpid() };
    let left = descendants(me);
    if left.is_empty() {
        return;
    }
    for pid in &left {
        // SAFETY: kill takes plain integers.
        unsafe { libc::kill(*pid, libc::SIGTERM) };
    }
    let deadline = std::time::Instant::now() + GRACE;
    loop {
        let mut status = 0;
        // SAFETY: reaps K's own ended children, without waiting.
        while unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) } > 0 {}
        if descendants(me).is_empty() {
            return;
        }
        if std::time::Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    kill_orphans(me);
}

/// Wait, up to `GRACE`, for the processes below K that are in nvcc's process group to end by themselves (none is
/// stopped: a server a launcher started has a session of its own, and lives on).
fn settle(group: libc::pid_t) {
    // SAFETY: getpid has no preconditions.
    let me = unsafe { libc::getpid() };
    let deadline = std::time::Instant::now() + GRACE;
    loop {
        let mut status = 0;
        // SAFETY: reaps K's own ended children, without waiting.
        while unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) } > 0 {}
        let busy = descendants(me).into_iter().any(|pid| group_of(pid) == Some(group));
        if !busy || std::time::Instant::now() >= deadline {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// A process's group, from `/proc/PID/stat` (the field after the parent's).
fn group_of(pid: libc::pid_t) -> Option<libc::pid_t> {
    let stat = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.iter().rposition(|&b| b == b')')? + 1..];
    std::str::from_utf8(after).ok()?.split_ascii_whitespace().nth(2)?.parse().ok()
}

/// Kill what is left below K.
fn kill_orphans(me: libc::pid_t) {
    // Bounded: each round kills every child there is and reaps them; a child that forks while dying adds a round.
    for _ in 0..64 {
        let children = descendants(me);
        if children.is_empty() {
            return;
        }
        for pid in &children {
            // SAFETY: kill takes plain integers.
            unsafe { libc::kill(*pid, libc::SIGKILL) };
        }
        let mut status = 0;
        // SAFETY: waits for K's own children.
        while unsafe { libc::waitpid(-1, &mut status, 0) } > 0 {}
    }
}

/// Every process below `root`, from `/proc` (parents before children).
fn descendants(root: libc::pid_t) -> Vec<libc::pid_t> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    let mut parent_of = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<libc::pid_t>().ok()) else { continue };
        let Ok(stat) = std::fs::read(entry.path().join("stat")) else { continue };
        if let Some(parent) = parent_in_stat(&stat) {
            parent_of.push((pid, parent));
        }
    }
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(parent_of.iter().filter(|(_, p)| *p == parent).map(|(pid, _)| *pid));
        i += 1;
    }
    found.remove(0);
    found
}

/// The parent pid in a `/proc/PID/stat` line: the field after the state, which follows the last `)` (the command
/// name before it may hold anything).
fn parent_in_stat(stat: &[u8]) -> Option<libc::pid_t> {
    let after = &stat[stat.iter().rposition(|&b| b == b')')? + 1..];
    let text = std::str::from_utf8(after).ok()?;
    text.split_ascii_whitespace().nth(1)?.parse().ok()
}

/// End K as nvcc ended (`status` as `waitpid` gave it).
fn end_as_status(status: i32) -> ! {
    let status = ExitStatus::from_raw(status);
    if let Some(signal) = status.signal() {
        super::die_by(signal);
    }
    // SAFETY: ends this process at once, without running the wrapper's exit handlers or flushing its buffers (they
    // are W's, and W flushes them).
    unsafe { libc::_exit(status.code().unwrap_or(1)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parent_is_read_after_the_command_name() {
        assert_eq!(parent_in_stat(b"42 (cc1plus) S 41 42 7 0"), Some(41));
        // A name holding `) ` and digits, as a program may call itself.
        assert_eq!(parent_in_stat(b"42 (a) S 9 (b)) R 17 1 1"), Some(17));
        assert_eq!(parent_in_stat(b"garbage"), None);
    }

    #[test]
    fn descendants_of_this_process_include_a_child_and_its_child() {
        let mut sh = std::process::Command::new("sh").args(["-c", "sleep 5 & wait"]).spawn().unwrap();
        let started = std::time::Instant::now();
        let me = std::process::id() as libc::pid_t;
        let found = loop {
            let found = descendants(me);
            if found.len() >= 2 || started.elapsed().as_secs() > 5 {
                break found;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        let _ = sh.kill();
        let _ = sh.wait();
        assert!(found.contains(&(sh.id() as libc::pid_t)), "{found:?}");
        assert!(found.len() >= 2, "the shell's sleep is missing: {found:?}");
    }
}
