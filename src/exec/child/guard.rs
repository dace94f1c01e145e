//! The guard (G): for a call whose threads follow the build, a process K forks once nvcc runs, that does nothing
//! until K ends, however K ends. G learns of K's end from a pipe whose one writer is K (nvcc started before the pipe
//! was made, so neither it nor its programs hold an end), and holds a copy of the listener that K answers nvcc's
//! execs on (`crate::exec::hold`).
//! - K ended by its own code (the ledger says so): nvcc has ended, and every slot is back. What of nvcc's programs
//!   outlives it still carries the filter (a server one of them started, which nvcc alone would leave running): G
//!   answers its execs, each at once, until none is left, holding nothing else of K's.
//! - K was killed (SIGKILL, alone or with W): the call is over for whoever waits for it, as when W dies. G closes the
//!   listener, so that nothing more of nvcc's starts, sends SIGTERM to nvcc and every program below it, and gives
//!   back the slots the ledger says K held. W settles the same ledger when it outlives K; each entry is taken once (an
//!   atomic swap), by whichever comes first.

use std::os::fd::{FromRawFd, OwnedFd, RawFd};

use super::close;
use crate::context::jobserver::Client;
use crate::exec::hold::Listener;
use crate::exec::ledger::Ledger;

/// G's name (`ps`, `pkill`): not the keeper's, so that a kill of one by name leaves the other.
pub const GUARD_NAME: &str = "wrapper-guard";

/// K's hold on G: G's pid (which K, stopping what nvcc left, leaves alone) and the pipe's write end, closed only by
/// K's end.
pub struct Guard {
    pub pid: libc::pid_t,
    _write_end: OwnedFd,
}

impl Guard {
    /// Fork G (K runs no other thread), with a copy of `listener`; `nvcc` runs. `None` when the kernel gives no pipe
    /// or process: then a K killed with W leaves its slots lost, and nvcc's next program unable to start.
    pub fn start(ledger: &'static Ledger, client: &Client, listener: RawFd, nvcc: libc::pid_t) -> Option<Guard> {
        let mut fds = [0; 2];
        // SAFETY: pipe2 fills `fds` with two new descriptors, closed on exec.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return None;
        }
        let [read_end, write_end] = fds;
        // SAFETY: K runs no other thread, so the child may run Rust code until it ends by `_exit`.
        match unsafe { libc::fork() } {
            0 => {
                close(write_end);
                guard(read_end, ledger, client, listener, nvcc)
            }
            pid => {
                close(read_end);
                // SAFETY: the pipe's write end, K's own from here.
                let write_end = unsafe { OwnedFd::from_raw_fd(write_end) };
                (pid > 0).then_some(Guard { pid, _write_end: write_end })
            }
        }
    }
}

/// G: named, its standard streams closed (it writes nothing, and holds no reader of K's output waiting), it waits
/// for the pipe's end and does what K's end calls for (see the module's header).
fn guard(read_end: RawFd, ledger: &'static Ledger, client: &Client, listener: RawFd, nvcc: libc::pid_t) -> ! {
    super::name::name_process(GUARD_NAME);
    for fd in 0..3 {
        close(fd);
    }
    // nvcc is K's child, not yet reaped: its pid is its own until K waits for it.
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let nvcc_fd = unsafe { libc::syscall(libc::SYS_pidfd_open, nvcc, 0) } as RawFd;
    let mut byte = 0u8;
    loop {
        // SAFETY: reads at most one byte into a local.
        let n = unsafe { libc::read(read_end, (&mut byte as *mut u8).cast(), 1) };
        if n >= 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            break;
        }
    }
    if !ledger.keeper_ended() {
        close(listener);
        // SAFETY: the pidfd holds nvcc itself, so the signal reaches it and no other; signal 0 asks whether it runs.
        let runs = nvcc_fd >= 0
            && unsafe { libc::syscall(libc::SYS_pidfd_send_signal, nvcc_fd, 0, std::ptr::null::<u8>(), 0) } == 0;
        if runs {
            super::leftovers::signal_tree(nvcc, libc::SIGTERM);
        }
        ledger.settle(client);
        // SAFETY: ends this process at once, running none of the wrapper's exit handlers (they are W's).
        unsafe { libc::_exit(0) }
    }
    ledger.settle(client);
    // Nothing of K's is held from here but the listener: no jobserver, no pipe a reader waits on.
    for fd in open_descriptors().into_iter().filter(|fd| *fd != listener) {
        close(fd);
    }
    // SAFETY: G's copy of the listener, owned here.
    let listener = Listener::new(unsafe { OwnedFd::from_raw_fd(listener) });
    serve(&listener);
    // SAFETY: as above.
    unsafe { libc::_exit(0) }
}

/// Let every exec held on `listener` go on, until nothing that carries its filter is left.
fn serve(listener: &Listener) {
    loop {
        let mut poll = libc::pollfd { fd: listener.raw(), events: libc::POLLIN, revents: 0 };
        // SAFETY: poll reads and writes one local pollfd.
        if unsafe { libc::poll(&mut poll, 1, -1) } < 0 {
            continue;
        }
        if poll.revents & libc::POLLIN != 0 {
            if let Ok(Some(held)) = listener.next() {
                listener.let_run(held.id);
            }
        } else if poll.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
            return;
        }
    }
}

/// This process's open descriptors, from `/proc/self/fd` (the one reading it is closed by then).
fn open_descriptors() -> Vec<RawFd> {
    let Ok(entries) = std::fs::read_dir("/proc/self/fd") else { return Vec::new() };
    let names: Vec<_> = entries.flatten().map(|e| e.file_name()).collect();
    names.iter().filter_map(|n| n.to_str()?.parse().ok()).collect()
}
