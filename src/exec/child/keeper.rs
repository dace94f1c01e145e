//! K, the keeper (see `super`): its own name and session, the slots it takes, nvcc started with its threads, the
//! signals it waits for and passes on, and its end as nvcc's. It runs in the child of a fork of W and never returns.

use std::ffi::OsString;
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use super::guard::Guard;
use super::leftovers::{remove_leftovers, settle, signal_tree, stop_orphans};
use super::spawn::Spawn;
use super::{close, mask, set_of, Start, NOT_STARTED, PARENT_DIED};
use crate::exec::follow::{self, Follow, Ledger};
use crate::exec::lend::{Lend, ThreadsIn};

/// K's name, in place of W's `nvcc`: its command name (`ps -o comm`, `pkill`, `killall`) and its command line (`ps
/// -f`, `pkill -f`). A kill by nvcc's name ends W and the real nvcc, as it would end nvcc alone; K, left, continues
/// what it stopped, stops what nvcc started and gives the job slots back.
const KEEPER_NAME: &str = "wrapper-keeper";

/// Give K (or G) its own name: the command name through `prctl`, and the command line by writing the name over the
/// arguments it has from W (the memory `/proc/self/cmdline` shows, between `arg_start` and `arg_end` of
/// `/proc/self/stat`), cut to fit, the rest zeros. Neither reads an argument after the fork: W's own copy is untouched.
pub(super) fn name_process(name: &str) {
    let name = name.as_bytes();
    let mut comm = [0u8; 16];
    comm[..name.len().min(15)].copy_from_slice(&name[..name.len().min(15)]);
    // SAFETY: PR_SET_NAME reads a NUL-terminated string of at most 16 bytes from `comm`.
    unsafe { libc::prctl(libc::PR_SET_NAME, comm.as_ptr() as libc::c_ulong, 0, 0, 0) };
    let Some((start, end)) = std::fs::read("/proc/self/stat").ok().and_then(|stat| arguments_in_stat(&stat)) else {
        return;
    };
    let Some(len) = end.checked_sub(start).filter(|&len| len > 0) else { return };
    // SAFETY: [arg_start, arg_end) is this process's own argument strings, on the stack the kernel laid out at exec,
    // writable and never moved; nothing in K reads them after the fork (Rust's `std::env::args` is W's).
    unsafe {
        let at = start as *mut u8;
        std::ptr::write_bytes(at, 0, len);
        std::ptr::copy_nonoverlapping(name.as_ptr(), at, name.len().min(len - 1));
    }
}

/// Where a process's arguments lie in its memory (`arg_start`, `arg_end`: fields 48 and 49 of `/proc/PID/stat`,
/// counted from the pid; the command name before them may hold anything).
fn arguments_in_stat(stat: &[u8]) -> Option<(usize, usize)> {
    let after = &stat[stat.iter().rposition(|&b| b == b')')? + 1..];
    let mut fields = std::str::from_utf8(after).ok()?.split_ascii_whitespace().skip(45);
    Some((fields.next()?.parse().ok()?, fields.next()?.parse().ok()?))
}

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
    let waited = become_keeper(wrapper, caught);
    let lend = start.lend.as_ref();
    let ledger = start.ledger;
    // Following needs to see nvcc's children, and a ledger for W; else the slots free now are taken at the start.
    let follows =
        lend.filter(|l| l.follow && matches!(l.channel, ThreadsIn::Argv(_)) && ledger.is_some() && Follow::possible());
    let mut held = match (follows, lend) {
        (None, Some(lend)) => take(lend, ledger),
        _ => Vec::new(),
    };
    let command = match lend {
        Some(lend) => with_threads(command, &start, lend, follows.is_some(), held.len()),
        None => Ok(command),
    };
    // A file's times are taken from a coarse clock: a second earlier than the start, to miss none of nvcc's.
    let started = std::time::SystemTime::now() - std::time::Duration::from_secs(1);
    let nvcc = match command.map_err(|_| libc::EINVAL).and_then(|c| c.spawn(&caller_mask)) {
        Ok(pid) => pid,
        Err(errno) => {
            give_back(lend, ledger, &held);
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
    name_process(KEEPER_NAME);
    let mut follow = follows.zip(ledger).map(|(lend, ledger)| Follow::new(lend, ledger, nvcc));
    // Held until K ends: G then settles what a SIGKILL of K and W left.
    let guard = follows.zip(ledger).and_then(|(lend, ledger)| Guard::start(ledger, lend.client));
    let (status, stopping) = wait_for(nvcc, wrapper, caught, &waited, &mut follow, &mut held);
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
    end_as_status(status)
}

/// K's own footing, first of all: the signals it waits for blocked (the forwarded ones, inherited blocked, with
/// SIGCHLD and W's death; the set is returned), SIGTTOU blocked, W's death told by the kernel, and the processes nvcc
/// starts kept below it when nvcc dies first. A W that died already sent nothing: K ends.
fn become_keeper(wrapper: libc::pid_t, caught: &[libc::c_int]) -> libc::sigset_t {
    let mut waited: Vec<libc::c_int> = caught.to_vec();
    waited.extend([libc::SIGCHLD, PARENT_DIED]);
    let waited = set_of(&waited);
    mask(libc::SIG_BLOCK, &waited);
    // K writes (its debug log) while in the caller's group, which may be a background job under `stty tostop`, and
    // then from a session of its own: stopped for that, it would stop what it holds. Blocked, the write goes through;
    // nvcc gets the caller's mask.
    mask(libc::SIG_BLOCK, &set_of(&[libc::SIGTTOU]));
    // SAFETY: prctl with these options takes plain integers.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, PARENT_DIED as libc::c_ulong, 0, 0, 0);
        if libc::getppid() != wrapper {
            libc::_exit(NOT_STARTED);
        }
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0);
    }
    waited
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

/// nvcc's command with its threads, where the call took slots (`held`) or follows the build: W's command built again
/// with `--threads N` where `lend` says it goes. With one thread, W's command as it is.
fn with_threads(command: Spawn, start: &Start, lend: &Lend, follows: bool, held: usize) -> io::Result<Spawn> {
    let threads = match follows {
        true => lend.most.min(follow::MOST as u32),
        false => held as u32 + 1,
    };
    if threads < 2 {
        return Ok(command);
    }
    match follows {
        true => tracing::debug!("threads follow the build: nvcc runs with --threads {threads}"),
        false => tracing::debug!("{held} job slots taken: nvcc runs with --threads {threads}"),
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

/// Wait for nvcc to end, following the build meanwhile (a tick at a time) and passing on the signals W passes and
/// the caller did not ignore; on W's death, every process of nvcc's gets it at once. How nvcc ended (`waitpid`'s
/// status), and whether a signal told K to stop (what K stopped is then continued, and following ends: its slots
/// join `held`).
fn wait_for(
    nvcc: libc::pid_t,
    wrapper: libc::pid_t,
    caught: &[libc::c_int],
    waited: &libc::sigset_t,
    follow: &mut Option<Follow>,
    held: &mut Vec<u8>,
) -> (i32, bool) {
    let mut stopping = false;
    let tick = libc::timespec { tv_sec: 0, tv_nsec: follow::TICK.as_nanos() as libc::c_long };
    loop {
        // SAFETY: siginfo_t is plain data that sigwaitinfo fills.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `waited` is blocked in this thread, as sigwaitinfo and sigtimedwait require.
        let signal = match follow {
            Some(_) => unsafe { libc::sigtimedwait(waited, &mut info, &tick) },
            None => unsafe { libc::sigwaitinfo(waited, &mut info) },
        };
        if signal < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EAGAIN) {
            if let Some(follow) = follow.as_mut() {
                follow.tick();
            }
            continue;
        }
        if signal == libc::SIGCHLD || signal < 0 {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arguments_place_is_read_after_the_command_name() {
        // Fields 3 to 47 as a kernel writes them, then arg_start and arg_end, then two more.
        let middle: String = (3..48).map(|n| format!("{n} ")).collect();
        let stat = format!("42 (a) b) {middle}140737000 140737100 140737200 140737300");
        assert_eq!(arguments_in_stat(stat.as_bytes()), Some((140737000, 140737100)));
        assert_eq!(arguments_in_stat(b"42 (cc1plus) S 41 42"), None);
        let own = std::fs::read("/proc/self/stat").unwrap();
        let (start, end) = arguments_in_stat(&own).unwrap();
        let cmdline = std::fs::read("/proc/self/cmdline").unwrap();
        assert_eq!(end - start, cmdline.len(), "/proc/self/stat's arguments are not /proc/self/cmdline's");
    }
}
