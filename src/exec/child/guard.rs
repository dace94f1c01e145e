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

use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};

use nix::sys::signal::Signal;
use nix::unistd::Pid;

use crate::context::jobserver::Client;
use crate::exec::hold::Listener;
use crate::exec::ledger::Ledger;
use crate::exec::procfs;

/// G's name (`ps`, `pkill`): not the keeper's, so that a kill of one by name leaves the other.
pub const GUARD_NAME: &str = "wrapper-guard";

/// K's hold on G: G's pid (which K, stopping what nvcc left, leaves alone) and the pipe's write end, closed only by
/// K's end.
pub struct Guard {
    pub pid: Pid,
    _write_end: OwnedFd,
}

impl Guard {
    /// Fork G (K runs no other thread), with a copy of `listener`; `nvcc` runs. `None` when the kernel gives no pipe
    /// or process: then a K killed with W leaves its slots lost, and nvcc's next program unable to start.
    pub fn start(ledger: &'static Ledger, client: &Client, listener: BorrowedFd, nvcc: Pid) -> Option<Guard> {
        let (read_end, write_end) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).ok()?;
        let child = || guard(read_end, ledger, client, listener, nvcc);
        let (pid, write_end) = super::fork_alone(write_end, child).ok()?;
        Some(Guard { pid, _write_end: write_end })
    }
}

/// G: named, its standard streams closed (it writes nothing, and holds no reader of K's output waiting), it waits
/// for the pipe's end and does what K's end calls for (see the module's header).
fn guard(read_end: OwnedFd, ledger: &'static Ledger, client: &Client, listener: BorrowedFd, nvcc: Pid) -> i32 {
    super::name::name_process(GUARD_NAME);
    for fd in 0..3 {
        let _ = nix::unistd::close(fd);
    }
    // nvcc is K's child, not yet reaped: its pid is its own until K waits for it.
    let nvcc_fd = procfs::pidfd(nvcc);
    // Its end: nothing is ever written.
    while let Err(nix::errno::Errno::EINTR) = nix::unistd::read(&read_end, &mut [0u8]) {}
    if !ledger.keeper_ended() {
        let _ = nix::unistd::close(listener.as_raw_fd());
        // The pidfd holds nvcc itself: a pid another process has taken since is never signalled.
        if nvcc_fd.is_ok_and(|fd| !procfs::has_ended(&fd)) {
            super::leftovers::signal_tree(nvcc, Signal::SIGTERM);
        }
        ledger.settle(client);
        return 0;
    }
    ledger.settle(client);
    drop((read_end, nvcc_fd));
    // Nothing of K's is held from here but the listener: no jobserver, no pipe a reader waits on. Its copy takes the
    // lowest number free, one of those closed above: it cannot fail for want of descriptors.
    let Ok(listener) = listener.try_clone_to_owned() else { return 0 };
    for fd in open_descriptors().into_iter().filter(|fd| *fd != listener.as_raw_fd()) {
        let _ = nix::unistd::close(fd);
    }
    serve(&Listener::new(listener));
    0
}

/// Let every exec held on `listener` go on, until nothing that carries its filter is left.
fn serve(listener: &Listener) {
    use nix::poll::{PollFd, PollFlags, PollTimeout};
    loop {
        let mut polled = [PollFd::new(listener.fd(), PollFlags::POLLIN)];
        if nix::poll::poll(&mut polled, PollTimeout::NONE).is_err() {
            continue;
        }
        let events = polled[0].revents().unwrap_or(PollFlags::empty());
        if events.contains(PollFlags::POLLIN) {
            if let Ok(Some(held)) = listener.next() {
                listener.let_run(held.id);
            }
        } else if events.intersects(PollFlags::POLLHUP | PollFlags::POLLERR | PollFlags::POLLNVAL) {
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
