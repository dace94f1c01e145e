//! K, the keeper (see `super`): its own name and session, the slots it takes, nvcc started with its threads, the
//! signals it waits for and passes on, and its end as nvcc's. It runs in the child of a fork of W, which ends
//! with the code `keep` returns.

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use nix::poll::{PollFd, PollFlags, PollTimeout};
use nix::sys::signal::{SigSet, SigmaskHow, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::unistd::Pid;

use super::guard::Guard;
use super::leftovers::{remove_leftovers, settle, signal_tree, stop_orphans};
use super::spawn::{Spawn, Unstarted};
use super::{mask, reap_all, set_of, Start, NOT_STARTED, PARENT_DIED};
use crate::exec::follow::{self, Follow};
use crate::exec::ledger::Ledger;
use crate::exec::lend::{Lend, ThreadsIn};

/// K's name, in place of W's `nvcc`: its command name (`ps -o comm`, `pkill`, `killall`) and its command line (`ps
/// -f`, `pkill -f`). A kill by nvcc's name ends W and the real nvcc, as it would end nvcc alone; K, left, lets what
/// it holds go, stops what nvcc started and gives the job slots back.
const KEEPER_NAME: &str = "wrapper-keeper";

/// K: take the lent slots, start nvcc, leave the caller's session, pass signals on, stop what is left when told to,
/// remove what a failed call left, give the slots back, and end as nvcc ended. `command` is the one W built. Slots
/// taken at the start are taken in the caller's group, as nvcc's command needs their number: a kill of that group in
/// the instant before K leaves it ends K with them, as it would any jobserver client. K's exit code (`fork_alone` ends K with it).
pub(super) fn keep(
    start: Start,
    command: Spawn,
    wrapper: Pid,
    caught: &[Signal],
    caller_mask: SigSet,
    report: OwnedFd,
) -> i32 {
    let Some((signals, pending)) = become_keeper(wrapper, caught) else { return NOT_STARTED };
    let lend = start.lend.as_ref();
    let ledger = start.ledger;
    // A file's times are taken from a coarse clock: a second earlier than the start, to miss none of nvcc's.
    let started = std::time::SystemTime::now() - std::time::Duration::from_secs(1);
    let (nvcc, listener, mut held) = match begin(&start, command, &caller_mask) {
        Ok(begun) => begun,
        Err(errno) => {
            // Four bytes fit in a pipe whole.
            let _ = nix::unistd::write(&report, &errno.to_ne_bytes());
            return NOT_STARTED;
        }
    };
    leave_the_callers_session(wrapper, pending);
    drop(report);
    // Named once nvcc runs, off the path W waits on (a `/proc` read): a kill by name before this instant finds K
    // holding only the slots it took, which its death would lose, as any jobserver client's would.
    super::name::name_process(KEEPER_NAME);
    let following = lend.zip(ledger).zip(listener);
    // Held until K ends: G then answers what outlives nvcc, or stops the call and settles the ledger if K was killed.
    let guard = following
        .as_ref()
        .and_then(|((lend, ledger), listener)| Guard::start(ledger, lend.client, listener.fd(), nvcc));
    let mut follow = following.map(|((lend, ledger), listener)| Follow::new(lend, ledger, nvcc, listener));
    let (status, stopping) = wait_for(nvcc, wrapper, caught, &signals, &mut follow);
    if let Some(mut follow) = follow.take() {
        follow.release_all();
        held.append(&mut follow.held);
    }
    let failed = !status.success();
    if stopping {
        stop_orphans(guard.as_ref().map(|g| g.pid));
    } else if failed {
        // Programs of nvcc's that a signal to its group is ending too may still write a temporary file.
        settle(start.group);
    }
    if let (Some(leftovers), true) = (&start.leftovers, failed) {
        remove_leftovers(leftovers, nvcc, started);
    }
    // Nothing of nvcc's runs any more: its threads' slots go back to the build.
    give_back(lend, ledger, &held);
    if let Some(ledger) = ledger {
        ledger.ended();
    }
    end_as_status(status)
}

/// Start nvcc with its threads: held, where its threads follow the build (a thread for each target, as many
/// running as K holds slots); else with the slots free now taken. nvcc's pid, the listener of its execs where they
/// are held, and the slots taken; or the errno of a start that failed (the slots taken then given back).
fn begin(
    start: &Start,
    command: Spawn,
    mask: &SigSet,
) -> Result<(Pid, Option<crate::exec::hold::Listener>, Vec<u8>), i32> {
    let Some(lend) = start.lend.as_ref() else {
        return command.spawn(mask, &start.defaults).map(|p| (p, None, vec![]));
    };
    // Following needs its `--threads` among the arguments, and a ledger for W and G.
    if let (true, ThreadsIn::Argv(_), Some(_)) = (lend.follow, lend.channel, start.ledger) {
        let threads = lend.most;
        tracing::debug!("threads follow the build: nvcc runs with --threads {threads}");
        let held = threaded(start, lend, threads).map_err(|_| libc::EINVAL)?;
        match held.as_ref().unwrap_or(&command).spawn_held(mask, &start.defaults) {
            Ok((pid, listener)) => return Ok((pid, Some(listener), Vec::new())),
            Err(Unstarted::Failed(errno)) => return Err(errno),
            Err(Unstarted::Refused(errno)) => tracing::debug!(
                "the kernel refused the filter that holds nvcc's programs at their exec ({}): the job slots free now are taken instead",
                io::Error::from_raw_os_error(errno)
            ),
        }
    }
    let held = take(lend, start.ledger);
    if !held.is_empty() {
        tracing::debug!("{} job slots taken: nvcc runs with --threads {}", held.len(), held.len() + 1);
    }
    let threaded = threaded(start, lend, held.len() as u32 + 1);
    let started =
        threaded.map_err(|_| libc::EINVAL).and_then(|t| t.as_ref().unwrap_or(&command).spawn(mask, &start.defaults));
    match started {
        Ok(pid) => Ok((pid, None, held)),
        Err(errno) => {
            give_back(Some(lend), start.ledger, &held);
            Err(errno)
        }
    }
}

/// K's own footing, first of all: the signals it waits for blocked (the forwarded ones, inherited blocked, with
/// SIGCHLD and W's death) and read from a signalfd (returned, with one of the forwarded ones alone), SIGTTOU blocked, W's death told by the kernel, the
/// processes nvcc starts kept below it when nvcc dies first, and K's own writes unable to end it. A W that died
/// already sent nothing: K ends.
fn become_keeper(wrapper: Pid, caught: &[Signal]) -> Option<(Signals, Signals)> {
    let waited = set_of(caught.iter().copied().chain([Signal::SIGCHLD, PARENT_DIED]));
    mask(SigmaskHow::SIG_BLOCK, &waited);
    // K writes (its debug log) while in the caller's group, which may be a background job under `stty tostop`, and
    // then from a session of its own: stopped for that, it would stop what it holds. Blocked, the write goes through;
    // nvcc gets the caller's mask.
    mask(SigmaskHow::SIG_BLOCK, &set_of([Signal::SIGTTOU]));
    // A write to a pipe whose reader left fails with EPIPE, one past the file size limit with EFBIG, one to a
    // terminal gone with EIO: the log line is lost, never K (`crate::exec::signals::OWN_WRITES` are ignored, as in W,
    // and never changed here: nvcc gets the caller's dispositions through `Start::defaults`).
    let _ = nix::sys::prctl::set_pdeathsig(PARENT_DIED);
    if nix::unistd::getppid() != wrapper {
        return None;
    }
    let _ = nix::sys::prctl::set_child_subreaper(true);
    // No descriptor (out of them): K cannot wait for nvcc as it must, and ends as if it never started it. The second
    // reads only the caught signals, for `leave_the_callers_session`.
    let (Ok(signals), Ok(pending)) = (Signals::new(&waited), Signals::new(&set_of(caught.iter().copied()))) else {
        return None;
    };
    Some((signals, pending))
}

/// Signals blocked in K, read from a descriptor it polls beside the listener of nvcc's execs.
struct Signals(SignalFd);

impl Signals {
    fn new(set: &SigSet) -> nix::Result<Signals> {
        SignalFd::with_flags(set, SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK).map(Signals)
    }

    /// The next signal waiting: its number, its code (`SI_KERNEL` for a terminal's) and its sender (0 for the
    /// kernel's).
    fn next(&self) -> Option<(Signal, libc::c_int, libc::pid_t)> {
        let info = self.0.read_signal().ok()??;
        let signal = Signal::try_from(info.ssi_signo as libc::c_int).ok()?;
        Some((signal, info.ssi_code, info.ssi_pid as libc::pid_t))
    }
}

/// Once nvcc runs in the caller's group, K leaves for a session of its own (a group of its own where the kernel
/// refuses one). Out of the caller's group, a kill of that group (`timeout -s KILL` in a make rule) leaves K to give
/// the slots back; out of its session, K, nvcc's parent, is no link that keeps the caller's group from being orphaned
/// (a group whose members' parents are all in it or in another session: `setsid make`, a container's first shell).
/// nvcc alone leaves such a group as orphaned as it found it; a parent in another group of the same session would
/// make the group orphaned anew when nvcc ends, and the kernel then sends SIGHUP and SIGCONT to the whole build if
/// anything in it is stopped.
///
/// A signal sent to the caller's group while K was in it reached K too: K drops it, as it reached nvcc (or W, which
/// passes on what it passes). What W sent, or anything after W's death, is raised again for `wait_for`.
fn leave_the_callers_session(wrapper: Pid, pending: Signals) {
    // K is no group's leader (it was forked into the caller's group).
    if nix::unistd::setsid().is_err() {
        let _ = nix::unistd::setpgid(Pid::from_raw(0), Pid::from_raw(0));
    }
    // What is pending of the caught signals (blocked in K), read and so taken.
    let mut again = Vec::new();
    while let Some((signal, _, sender)) = pending.next() {
        if sender == wrapper.as_raw() || nix::unistd::getppid() != wrapper {
            again.push(signal);
        }
    }
    for signal in again {
        // Blocked: it waits for `wait_for`.
        let _ = nix::sys::signal::raise(signal);
    }
}

/// nvcc's command with `threads`: W's command built again with `--threads N` where `lend` says it goes. `None`
/// with one thread: W's command as it is.
fn threaded(start: &Start, lend: &Lend, threads: u32) -> io::Result<Option<Spawn>> {
    if threads < 2 {
        return Ok(None);
    }
    let threads = threads.to_string();
    match lend.channel {
        ThreadsIn::Argv(at) => {
            let mut args = start.args.to_vec();
            args.splice(at..at, [OsString::from("--threads"), OsString::from(threads)]);
            Spawn::new(start.program, &args, start.env).map(Some)
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
            Spawn::new(start.program, start.args, &env).map(Some)
        }
    }
}

/// Wait for nvcc to end, following the build meanwhile (its execs, its units' ends, a tick while something waits)
/// and passing on the signals W passes and the caller did not ignore; on W's death, every process of nvcc's gets it
/// at once. How nvcc ended (`waitpid`'s status), and whether a signal told K to stop (following then lets every exec
/// go on).
fn wait_for(
    nvcc: Pid,
    wrapper: Pid,
    caught: &[Signal],
    signals: &Signals,
    follow: &mut Option<Follow>,
) -> (ExitStatus, bool) {
    let mut stopping = false;
    loop {
        let tick = follow
            .as_ref()
            .filter(|f| f.wants_ticks())
            .map_or(PollTimeout::NONE, |_| PollTimeout::try_from(follow::TICK).unwrap_or(PollTimeout::MAX));
        // The signals' descriptor first, then what following polls (the listener, then each unit's end).
        let (ready, events) = {
            let watched = follow.as_ref().map(Follow::descriptors).unwrap_or_default();
            let mut polled: Vec<PollFd> = std::iter::once(signals.0.as_fd())
                .chain(watched.iter().map(|fd| fd.as_fd()))
                .map(|fd| PollFd::new(fd, PollFlags::POLLIN))
                .collect();
            let ready = nix::poll::poll(&mut polled, tick);
            let events: Vec<(RawFd, PollFlags)> = polled
                .iter()
                .skip(1)
                .map(|p| (p.as_fd().as_raw_fd(), p.revents().unwrap_or(PollFlags::empty())))
                .collect();
            (ready, events)
        };
        if let Some(follow) = follow.as_mut() {
            match ready {
                Ok(0) => follow.tick(),
                Ok(_) => follow.on_events(&events),
                Err(_) => {}
            }
        }
        while let Some((signal, code, _)) = signals.next() {
            if signal == Signal::SIGCHLD {
                if let Some(status) = reap_all(Some(nvcc)) {
                    return (status, stopping);
                }
                continue;
            }
            let wrapper_gone = nix::unistd::getppid() != wrapper;
            if !wrapper_gone && !caught.contains(&signal) {
                // A signal the caller ignores, sent to K itself: ignored, as by nvcc alone.
                continue;
            }
            stopping = true;
            // What waits must run to hear what comes, and nothing waits any more.
            if let Some(follow) = follow.as_mut() {
                follow.release_all();
            }
            if wrapper_gone {
                // Nobody is left to hear nvcc's answer: everything stops at once.
                signal_tree(nvcc, signal);
            } else if code != libc::SI_KERNEL {
                let _ = nix::sys::signal::kill(nvcc, signal);
            }
        }
    }
}

/// Write the slots K holds back to the jobserver, crossing each out of the ledger first.
fn give_back(lend: Option<&Lend>, ledger: Option<&Ledger>, held: &[u8]) {
    let Some(lend) = lend else { return };
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

/// Take free slots for `lend`, without waiting: as many as nvcc may use, and the memory free holds, read only when a
/// slot is free. The bytes taken, to be written back as they were (and written down in `ledger`).
fn take(lend: &Lend, ledger: Option<&Ledger>) -> Vec<u8> {
    let mut held = Vec::new();
    if lend.most < 2 || !lend.client.has_free() {
        return held;
    }
    let most = crate::plan::threads::extra_threads(lend.most, (lend.memory_holds)());
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

/// End K as nvcc ended: by its signal, or with the code it returns.
fn end_as_status(status: ExitStatus) -> i32 {
    if let Some(signal) = status.signal() {
        crate::exec::signals::die_by(signal);
    }
    status.code().unwrap_or(1)
}
