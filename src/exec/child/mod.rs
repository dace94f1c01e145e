//! nvcc as a child the wrapper waits for, as safe as exec: for a call that leaves the wrapper work after nvcc ends
//! (a dependency file to complete). Exec needs none of this, since nvcc then *is* the wrapper's process.
//!
//! The wrapper (W) forks a keeper (K), a copy of itself that runs no code of the plan: K starts nvcc as its own child
//! and waits for it, and W waits for K. K exists because a process killed by SIGKILL can do nothing: the kernel tells
//! K when W dies (`PR_SET_PDEATHSIG`), and K stops what W started. K is a child subreaper, so the processes nvcc starts
//! (`sh`, `cicc`, `ptxas`, `gcc`) stay its descendants when nvcc dies before them and can be stopped too.
//!
//! Process groups: nvcc runs in the caller's process group, as it would alone, and so does W, so that a terminal's job
//! control (Ctrl-Z, `fg`, `bg`, `stty tostop`) stops and continues W together with nvcc and its programs wherever the
//! call sits in a job (a pipeline's head, middle or end, under make), and the shell that waits for W sees the stop.
//! K starts nvcc from the caller's group and then leaves for a session of its own, so that a kill of the whole group
//! (`timeout -s KILL` in a make rule) ends nvcc, its programs and W but not K, which then gives back the job slots
//! lent to the call (`Lend`): they go back to the build once nvcc and everything it started have ended, however they
//! ended. A session, not only a group: nvcc's parent in another group of the caller's session would link a group the
//! caller left orphaned (`setsid make`), and nvcc's end would then have the kernel hang up the whole build where
//! anything in it is stopped (`keeper::leave_the_callers_session`). K is not named `nvcc` (`KEEPER_NAME`, in `ps` and
//! to `pkill -f` too), so that a kill by nvcc's name, which ends W and the real nvcc, leaves K to do the same; and its
//! writes (the debug log) never stop it for the terminal's sake (SIGTTOU blocked).
//!
//! - A signal sent to W itself (those in `FORWARDED` that the caller did not ignore) is passed to K and by K to nvcc,
//!   which answers it as it would alone (nvcc 11.8 to 13.5 end on SIGTERM, 255). One a terminal sent reached nvcc too:
//!   it is not sent again. Nor is a SIGINT or SIGQUIT: W cannot tell one sent to its group, which reached nvcc
//!   already and which nvcc would answer otherwise the second time (255 where alone it says 2), from one sent to W
//!   alone, which nvcc alone ignores while a program of its own runs, as `system(3)` does, nearly all of a call.
//! - When W dies, K gets SIGTERM and sends it to nvcc and every process nvcc started, at once.
//! - After any of these, once nvcc has ended, what is left of its processes is stopped before K ends (nvcc alone
//!   leaves its `cicc` or `gcc` running when SIGTERM ends it): SIGTERM first, so that `gcc` removes its temporary
//!   files as it does when a build is interrupted, and SIGKILL for what is left after `GRACE`. No program of nvcc's
//!   writes an object after the wrapper has gone. On an ordinary end nothing is stopped (a compiler cache's server
//!   that a launcher started lives on).
//! - K ends as nvcc ended (its exit code, or the same signal), and W then does: the caller sees nvcc's status.
//! - nvcc starts with what exec would give it: argv, environment, the caller's signal mask and ignored signals, the
//!   caller's SIGPIPE and SIGXFSZ dispositions (W, K and G ignore both for their own writes: `super::OWN_WRITES`),
//!   its descriptors (a make jobserver's included), and the standard streams the caller closed, closed (as
//!   `super::command` gives exec). Only SIGCHLD is at its default even where the caller ignored it: nvcc waits for
//!   its own programs. K starts it with `posix_spawn`, which copies no memory; where its threads follow the build,
//!   with a child of the same kind that puts the filter of `super::hold` in nvcc's process first (`spawn`).
//! - Where threads follow the build, K's guard (`guard`) outlives K: after K's ordinary end it answers the execs of
//!   what outlives nvcc; after K's SIGKILL it ends the call as W's death does, and gives back K's slots.
//!
//! When `run` returns, the forwarded signals are blocked and W's handlers are gone: whatever W does next (replacing
//! a dependency file) cannot be cut in half by one, and `super::end_as` lets a pending one end the wrapper after it.

use std::ffi::OsString;
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicI32, Ordering};

mod guard;
mod keeper;
mod leftovers;
mod name;
mod spawn;

pub use leftovers::Leftovers;

use super::ledger::Ledger;
use super::lend::Lend;
use crate::context::Env;
use spawn::Spawn;

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

extern "C" fn forward(signal: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    let keeper = KEEPER.load(Ordering::SeqCst);
    // W shares nvcc's group (see the module's header): a SIGINT or SIGQUIT is heard, not passed on.
    if signal == libc::SIGINT || signal == libc::SIGQUIT {
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

/// The signals of `super::OWN_WRITES` that the caller left at their default action, as a set for nvcc's start.
fn callers_defaults() -> libc::sigset_t {
    set_of(&super::callers_defaults().collect::<Vec<_>>())
}

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
    // The slots K holds, for W to give back if K is killed (`exec::ledger`).
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
    // nvcc's group: the caller's, which W stays in (see the module's header).
    // SAFETY: getpgrp takes nothing and returns a plain integer.
    let caller_group = unsafe { libc::getpgrp() };
    let restore = || {
        mask(libc::SIG_BLOCK, &forwarded);
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
    let defaults = callers_defaults();
    let start = Start { program, args, env, group: caller_group, lend, leftovers, ledger, defaults };
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
        keeper::keep(start, command, wrapper, caught, caller_mask, write_end);
    }
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
    /// The signals nvcc gets at their default action though K ignores them (`super::OWN_WRITES`, unless the caller
    /// ignored them): K's own writes must not end it; nvcc's are the caller's business.
    defaults: libc::sigset_t,
}
