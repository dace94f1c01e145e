//! K, the keeper (see `super`): its own name and session, the slots it takes, nvcc started with its threads, the
//! signals it waits for and passes on, and its end as nvcc's. It runs in the child of a fork of W and never returns.

use std::ffi::OsString;
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use super::guard::Guard;
use super::leftovers::{remove_leftovers, settle, signal_tree, stop_orphans};
use super::spawn::{Spawn, Unstarted};
use super::{close, mask, set_of, Start, NOT_STARTED, PARENT_DIED};
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
/// the instant before K leaves it ends K with them, as it would any jobserver client. Never returns.
pub(super) fn keep(
    start: Start,
    command: Spawn,
    wrapper: libc::pid_t,
    caught: &[libc::c_int],
    caller_mask: libc::sigset_t,
    report: libc::c_int,
) -> ! {
    let signals = become_keeper(wrapper, caught);
    let lend = start.lend.as_ref();
    let ledger = start.ledger;
    // A file's times are taken from a coarse clock: a second earlier than the start, to miss none of nvcc's.
    let started = std::time::SystemTime::now() - std::time::Duration::from_secs(1);
    let (nvcc, listener, mut held) = match begin(&start, command, &caller_mask) {
        Ok(begun) => begun,
        Err(errno) => {
            let errno = errno.to_ne_bytes();
            // SAFETY: writes four bytes from a local array to the pipe W reads; then ends this process.
            unsafe {
                libc::write(report, errno.as_ptr().cast(), errno.len());
                libc::_exit(NOT_STARTED);
            }
        }
    };
    leave_the_callers_session(wrapper, caught);
    close(report);
    // Named once nvcc runs, off the path W waits on (a `/proc` read): a kill by name before this instant finds K
    // holding only the slots it took, which its death would lose, as any jobserver client's would.
    super::name::name_process(KEEPER_NAME);
    let following = lend.zip(ledger).zip(listener);
    // Held until K ends: G then answers what outlives nvcc, or stops the call and settles the ledger if K was killed.
    let guard = following
        .as_ref()
        .and_then(|((lend, ledger), listener)| Guard::start(ledger, lend.client, listener.raw(), nvcc));
    let mut follow = following.map(|((lend, ledger), listener)| Follow::new(lend, ledger, nvcc, listener));
    let (status, stopping) = wait_for(nvcc, wrapper, caught, &signals, &mut follow);
    if let Some(mut follow) = follow.take() {
        follow.release_all();
        held.append(&mut follow.held);
    }
    let failed = !ExitStatus::from_raw(status).success();
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
    mask: &libc::sigset_t,
) -> Result<(libc::pid_t, Option<crate::exec::hold::Listener>, Vec<u8>), i32> {
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
/// SIGCHLD and W's death) and read from a signalfd (returned), SIGTTOU blocked, W's death told by the kernel, the
/// processes nvcc starts kept below it when nvcc dies first, and K's own writes unable to end it. A W that died
/// already sent nothing: K ends.
fn become_keeper(wrapper: libc::pid_t, caught: &[libc::c_int]) -> Signals {
    let mut waited: Vec<libc::c_int> = caught.to_vec();
    waited.extend([libc::SIGCHLD, PARENT_DIED]);
    let waited = set_of(&waited);
    mask(libc::SIG_BLOCK, &waited);
    // K writes (its debug log) while in the caller's group, which may be a background job under `stty tostop`, and
    // then from a session of its own: stopped for that, it would stop what it holds. Blocked, the write goes through;
    // nvcc gets the caller's mask.
    mask(libc::SIG_BLOCK, &set_of(&[libc::SIGTTOU]));
    // A write to a pipe whose reader left fails with EPIPE, one past the file size limit with EFBIG, one to a
    // terminal gone with EIO: the log line is lost, never K (`crate::exec::OWN_WRITES` are ignored, as in W, and
    // never changed here: nvcc gets the caller's dispositions through `Start::defaults`).
    // SAFETY: prctl with these options takes plain integers.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, PARENT_DIED as libc::c_ulong, 0, 0, 0);
        if libc::getppid() != wrapper {
            libc::_exit(NOT_STARTED);
        }
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0);
    }
    Signals::new(&waited)
}

/// The signals K waits for, as a descriptor it polls beside the listener of nvcc's execs.
struct Signals(std::os::fd::OwnedFd);

impl Signals {
    fn new(set: &libc::sigset_t) -> Signals {
        // SAFETY: signalfd reads the set and returns a new descriptor; the set is blocked in this, K's only thread.
        let fd = unsafe { libc::signalfd(-1, set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK) };
        if fd < 0 {
            // No descriptor (out of them): K cannot wait for nvcc as it must, and ends as if it never started it.
            // SAFETY: ends this process at once.
            unsafe { libc::_exit(NOT_STARTED) };
        }
        // SAFETY: a descriptor just opened, owned here.
        Signals(unsafe { std::os::fd::FromRawFd::from_raw_fd(fd) })
    }

    /// The next signal waiting: its number and code (`SI_KERNEL` for a terminal's).
    fn next(&self) -> Option<(libc::c_int, libc::c_int)> {
        // SAFETY: signalfd_siginfo is plain data; read fills one whole.
        let mut info: libc::signalfd_siginfo = unsafe { std::mem::zeroed() };
        let size = std::mem::size_of::<libc::signalfd_siginfo>();
        // SAFETY: reads at most `size` bytes into `info`.
        let n = unsafe {
            libc::read(
                std::os::fd::AsRawFd::as_raw_fd(&self.0),
                (&mut info as *mut libc::signalfd_siginfo).cast(),
                size,
            )
        };
        (n == size as isize).then_some((info.ssi_signo as libc::c_int, info.ssi_code))
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
fn leave_the_callers_session(wrapper: libc::pid_t, caught: &[libc::c_int]) {
    // SAFETY: setsid and setpgid take plain integers; K is no group's leader (it was forked into the caller's group).
    unsafe {
        if libc::setsid() < 0 {
            libc::setpgid(0, 0);
        }
    }
    let caught_set = set_of(caught);
    let now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    let mut again = Vec::new();
    loop {
        // SAFETY: siginfo_t is plain data that sigtimedwait fills; the set is blocked in this thread.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let signal = unsafe { libc::sigtimedwait(&caught_set, &mut info, &now) };
        if signal < 0 {
            break;
        }
        // SAFETY: si_pid is valid for signals sent by kill (and 0 for the kernel's); getppid has no preconditions.
        let (sender, parent) = unsafe { (info.si_pid(), libc::getppid()) };
        if sender == wrapper || parent != wrapper {
            again.push(signal);
        }
    }
    for signal in again {
        // SAFETY: raise takes a plain integer; the signal is blocked, and waits for `wait_for`.
        unsafe { libc::raise(signal) };
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
    nvcc: libc::pid_t,
    wrapper: libc::pid_t,
    caught: &[libc::c_int],
    signals: &Signals,
    follow: &mut Option<Follow>,
) -> (i32, bool) {
    let mut stopping = false;
    loop {
        let signal_fd = std::os::fd::AsRawFd::as_raw_fd(&signals.0);
        let mut polled = vec![libc::pollfd { fd: signal_fd, events: libc::POLLIN, revents: 0 }];
        polled.extend(follow.as_ref().map(Follow::descriptors).unwrap_or_default());
        let tick = follow.as_ref().filter(|f| f.wants_ticks()).map_or(-1, |_| follow::TICK.as_millis() as libc::c_int);
        // SAFETY: poll reads and writes the pollfds of a local vector.
        let ready = unsafe { libc::poll(polled.as_mut_ptr(), polled.len() as libc::nfds_t, tick) };
        if let Some(follow) = follow.as_mut() {
            match ready {
                0 => follow.tick(),
                1.. => follow.on_events(&polled[1..]),
                _ => {}
            }
        }
        while let Some((signal, code)) = signals.next() {
            if signal == libc::SIGCHLD {
                if let Some(status) = reap(nvcc) {
                    return (status, stopping);
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
            // What waits must run to hear what comes, and nothing waits any more.
            if let Some(follow) = follow.as_mut() {
                follow.release_all();
            }
            if wrapper_gone {
                // Nobody is left to hear nvcc's answer: everything stops at once.
                signal_tree(nvcc, signal);
            } else if code != libc::SI_KERNEL {
                // SAFETY: kill takes plain integers.
                unsafe { libc::kill(nvcc, signal) };
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

/// End K as nvcc ended (`status` as `waitpid` gave it).
fn end_as_status(status: i32) -> ! {
    let status = ExitStatus::from_raw(status);
    if let Some(signal) = status.signal() {
        crate::exec::die_by(signal);
    }
    // SAFETY: ends this process at once, without running the wrapper's exit handlers or flushing its buffers (they
    // are W's, and W flushes them).
    unsafe { libc::_exit(status.code().unwrap_or(1)) }
}
