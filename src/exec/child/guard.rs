//! The guard (G): for a call whose threads follow the build, a process K forks once nvcc runs, that does nothing
//! until K ends, however K ends. Then it continues what K's ledger still says is stopped and gives back the job slots
//! it still says are held. On an ordinary end, and on any end of K's that runs its code, K has crossed everything out:
//! G finds nothing and ends. G is there for K killed by SIGKILL together with W (`kill -9` of both by pid, one OOM
//! kill after the other), when no code of either runs: the programs K stopped would stay stopped, and nvcc, which
//! waits for them, with them. W settles the same ledger when K alone dies; each entry is taken once (an atomic
//! swap), by whichever comes first. G learns of K's end from a pipe whose one writer is K: nvcc started before the
//! pipe was made, so neither it nor its programs hold an end.

use super::close;
use crate::context::jobserver::Client;
use crate::exec::follow::Ledger;

/// G's name (`ps`, `pkill`): not the keeper's, so that a kill of one by name leaves the other.
pub const GUARD_NAME: &str = "wrapper-guard";

/// K's hold on G: G's pid (which K, stopping what nvcc left, leaves alone) and the pipe's write end, closed only by
/// K's end.
pub struct Guard {
    pub pid: libc::pid_t,
    _write_end: libc::c_int,
}

impl Guard {
    /// Fork G (K runs no other thread). `None` when the kernel gives no pipe or process: then K's SIGKILL together
    /// with W's leaves what K stopped stopped, as before G.
    pub fn start(ledger: &'static Ledger, client: &Client) -> Option<Guard> {
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
                guard(read_end, ledger, client)
            }
            pid => {
                close(read_end);
                if pid < 0 {
                    close(write_end);
                    return None;
                }
                Some(Guard { pid, _write_end: write_end })
            }
        }
    }
}

/// G: named, its standard streams closed (it writes nothing, and holds no reader of K's output waiting), it waits
/// for the pipe's end, settles the ledger and ends.
fn guard(read_end: libc::c_int, ledger: &'static Ledger, client: &Client) -> ! {
    super::keeper::name_process(GUARD_NAME);
    for fd in 0..3 {
        close(fd);
    }
    let mut byte = 0u8;
    loop {
        // SAFETY: reads at most one byte into a local.
        let n = unsafe { libc::read(read_end, (&mut byte as *mut u8).cast(), 1) };
        if n >= 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            break;
        }
    }
    ledger.settle(client);
    // SAFETY: ends this process at once, running none of the wrapper's exit handlers (they are W's).
    unsafe { libc::_exit(0) }
}
