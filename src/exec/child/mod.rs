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
//! - A signal sent to W itself (those in `signals::FORWARDED` that the caller did not ignore) is passed to K and by K to nvcc,
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
//!   caller's SIGPIPE and SIGXFSZ dispositions (W, K and G ignore both for their own writes: `signals::OWN_WRITES`),
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

use nix::errno::Errno;
use nix::sys::signal::{SigSet, SigmaskHow, Signal};
use nix::unistd::{ForkResult, Pid};

mod guard;
mod keeper;
mod leftovers;
mod name;
pub(in crate::exec) mod spawn;

pub use leftovers::Leftovers;

use super::ledger::Ledger;
use super::lend::Lend;
use super::signals::{self, mask, set_of, Action, FORWARDED};
use crate::context::Env;
use spawn::Spawn;

/// What K gets when W dies.
const PARENT_DIED: Signal = Signal::SIGTERM;

/// K's exit code when nvcc could not be started (its errno has then been sent to W through the pipe).
const NOT_STARTED: i32 = 127;

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
    // The forwarded signals the caller did not ignore: W passes them on.
    let caught: Vec<Signal> = FORWARDED.into_iter().filter(|&s| !signals::is_ignored(s)).collect();
    let forwarded = set_of(FORWARDED);
    // Held back until K's pid is known, so that none is lost; K and nvcc get the caller's mask back.
    let caller_mask = mask(SigmaskHow::SIG_BLOCK, &forwarded);
    // A caller that ignores SIGCHLD would have its children reaped by the kernel, and no wait could tell how nvcc
    // ended: the default for W, K and nvcc (which waits for its own programs).
    let sigchld_ignored = signals::is_ignored(Signal::SIGCHLD);
    let mut saved: Vec<(Signal, signals::Saved)> =
        caught.iter().map(|&s| (s, signals::set(s, Action::PassOn))).collect();
    if sigchld_ignored {
        saved.push((Signal::SIGCHLD, signals::set(Signal::SIGCHLD, Action::Default)));
    }
    // nvcc's group: the caller's, which W stays in (see the module's header).
    let caller_group = nix::unistd::getpgrp();
    let restore = move || {
        mask(SigmaskHow::SIG_BLOCK, &forwarded);
        signals::pass_to(None);
        for (signal, old) in saved {
            signals::set(signal, Action::Back(old));
        }
    };
    let defaults = signals::callers_defaults();
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
fn start_keeper(start: Start, caught: &[Signal], caller_mask: SigSet) -> io::Result<ExitStatus> {
    // Built before the fork, so that a command nvcc cannot be given fails here (K builds it again with threads).
    let command = Spawn::new(start.program, start.args, start.env)?;
    let (read_end, write_end) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
    let wrapper = nix::unistd::getpid();
    // K's end of the pipe goes with it; W keeps the other.
    let (keeper, read_end) =
        fork_alone(read_end, || keeper::keep(start, command, wrapper, caught, caller_mask, write_end))?;
    signals::pass_to(Some(keeper));
    mask(SigmaskHow::SIG_SETMASK, &caller_mask);
    // K's report: nothing when nvcc started (K closes its end), else the errno of the failed start.
    let mut errno = [0u8; 4];
    let mut got = 0;
    while got < errno.len() {
        match nix::unistd::read(&read_end, &mut errno[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(Errno::EINTR) => {}
            Err(_) => break,
        }
    }
    drop(read_end);
    let status = wait(keeper)?;
    if got == errno.len() && status.code() == Some(NOT_STARTED) {
        return Err(io::Error::from_raw_os_error(i32::from_ne_bytes(errno)));
    }
    Ok(status)
}

/// Fork this process, K from W or G from K, and run `child` in the copy, which ends with the code `child` returns:
/// by `_exit`, never returning into the code that forked it, and running none of W's exit handlers and flushing none
/// of its buffers (W's, copied by the fork, which W flushes). `parents_own` is what only the parent keeps (its end of
/// a pipe): closed in the child, handed back to the parent with the child's pid. What `child` takes by value is the
/// child's: the parent's copies are dropped on return.
///
/// Each process runs one thread, the one a fork copies: no code of the wrapper's starts another
/// (`checks::layering::the_wrapper_starts_no_thread`; debug builds also count them here), so no lock can be held by a
/// thread the child lacks, and the child may run any Rust code, allocating and logging included.
fn fork_alone<P>(parents_own: P, child: impl FnOnce() -> i32) -> nix::Result<(Pid, P)> {
    // Where `/proc` can be read.
    debug_assert!(
        !matches!(crate::exec::procfs::threads(), Some(n) if n != 1),
        "the wrapper forks with threads running"
    );
    // SAFETY: this process runs one thread (above). The child ends in `_exit`, which has no preconditions (nix has no
    // call for it, and std's exit would run W's handlers), and never returns from this block.
    unsafe {
        match nix::unistd::fork()? {
            ForkResult::Child => {
                drop(parents_own);
                libc::_exit(child())
            }
            ForkResult::Parent { child } => Ok((child, parents_own)),
        }
    }
}

/// Wait for `pid`, through interruptions.
fn wait(pid: Pid) -> io::Result<ExitStatus> {
    loop {
        match wait_for_child(pid.as_raw(), 0) {
            Ok(Some((_, status))) => return Ok(status),
            Ok(None) | Err(Errno::EINTR) => {}
            Err(err) => return Err(err.into()),
        }
    }
}

/// Reap the ended children of this process without waiting, through interruptions; how `pid` ended, if it was one.
fn reap_all(pid: Option<Pid>) -> Option<ExitStatus> {
    let mut found = None;
    loop {
        match wait_for_child(-1, libc::WNOHANG) {
            Ok(Some((ended, status))) if Some(ended) == pid => found = Some(status),
            Ok(Some(_)) | Err(Errno::EINTR) => {}
            Ok(None) | Err(_) => return found,
        }
    }
}

/// `waitpid(pid, flags)`: the child that ended and how, `None` where none has (`WNOHANG`). Raw, as nix's `waitpid`
/// knows no real-time signal: a process one ended would be reaped and its status lost, nvcc's included.
fn wait_for_child(pid: libc::pid_t, flags: libc::c_int) -> Result<Option<(Pid, ExitStatus)>, Errno> {
    let mut status = 0;
    // SAFETY: waitpid writes a status into a local integer.
    match unsafe { libc::waitpid(pid, &mut status, flags) } {
        -1 => Err(Errno::last()),
        0 => Ok(None),
        ended => Ok(Some((Pid::from_raw(ended), ExitStatus::from_raw(status)))),
    }
}

/// What K needs to start nvcc and to leave nothing behind: the command, the caller's process group (where nvcc runs),
/// the slots lent and the temporary files to look for.
struct Start<'a> {
    program: &'a Path,
    args: &'a [OsString],
    env: &'a Env,
    group: Pid,
    lend: Option<Lend<'a>>,
    leftovers: Option<Leftovers>,
    ledger: Option<&'static Ledger>,
    /// The signals nvcc gets at their default action though K ignores them (`signals::OWN_WRITES`, unless the caller
    /// ignored them): K's own writes must not end it; nvcc's are the caller's business.
    defaults: SigSet,
}
