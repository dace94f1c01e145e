//! What the keeper reads of processes in `/proc`: who is below whom, and a process's group; and pidfds, handles on
//! one process that no later one with its pid is taken for. Only a `/proc` of the
//! wrapper's own pid namespace is read (`is_ours`): one mounted for another (after `unshare --pid --fork` without
//! `--mount-proc`, say) numbers processes otherwise, and its process N is not the wrapper's N: what is read there
//! would name strangers, to be stopped or signalled. Such a `/proc` shows nothing here.

/// Whether `/proc` is of this process's pid namespace: its `self` names this process's own pid.
pub fn is_ours() -> bool {
    crate::probe::hold::proc_is_ours()
}

/// What `/proc/PID/stat` says of a process that the keeper reads: its state letter, its parent and its group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    pub state: u8,
    pub parent: Pid,
    pub group: Pid,
}

use std::os::fd::{AsFd, FromRawFd, OwnedFd, RawFd};

use nix::errno::Errno;
use nix::unistd::Pid;

pub use crate::probe::procfs::fields_of;

/// A `/proc/PID/stat` line's `Stat`.
pub fn parse_stat(stat: &[u8]) -> Option<Stat> {
    let mut fields = fields_of(stat)?;
    let state = *fields.next()?.as_bytes().first()?;
    let mut pid = || fields.next()?.parse().ok().map(Pid::from_raw);
    Some(Stat { state, parent: pid()?, group: pid()? })
}

/// A process's `Stat`, read now; `None` for one that is gone.
pub fn stat(pid: Pid) -> Option<Stat> {
    parse_stat(&std::fs::read(format!("/proc/{pid}/stat")).ok()?)
}

/// A process's state letter (`R`, `S`, `T`, `t`, `Z` ...).
pub fn state_of(pid: Pid) -> Option<u8> {
    stat(pid).map(|s| s.state)
}

/// A process's parent.
pub fn parent_of(pid: Pid) -> Option<Pid> {
    stat(pid).map(|s| s.parent)
}

/// A process's group.
pub fn group_of(pid: Pid) -> Option<Pid> {
    stat(pid).map(|s| s.group)
}

/// How many threads this process runs (`num_threads`, field 20 of `/proc/self/stat`).
pub fn threads() -> Option<u64> {
    fields_of(&std::fs::read("/proc/self/stat").ok()?)?.nth(17)?.parse().ok()
}

/// Every process below `root`, from `/proc` (parents before children).
pub fn descendants(root: Pid) -> Vec<Pid> {
    if !is_ours() {
        return Vec::new();
    }
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    let mut parent_of = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok().map(Pid::from_raw)) else { continue };
        let Ok(stat) = std::fs::read(entry.path().join("stat")) else { continue };
        if let Some(stat) = parse_stat(&stat) {
            parent_of.push((pid, stat.parent));
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

/// A pidfd for `pid` (Linux 5.3): a handle on that process, not on a later one given its pid, readable once it ends;
/// the errno where there is none (ESRCH: it has ended and been reaped already).
pub fn pidfd(pid: Pid) -> Result<OwnedFd, Errno> {
    // SAFETY: pidfd_open takes a pid and flags, and returns -1 or a new descriptor, closed on exec, that nothing else
    // owns (nix has no call for it).
    unsafe {
        let fd = libc::syscall(libc::SYS_pidfd_open, pid.as_raw(), 0);
        if fd < 0 {
            return Err(Errno::last());
        }
        Ok(OwnedFd::from_raw_fd(fd as RawFd))
    }
}

/// Whether the process `pidfd` holds has ended (a zombie has), asked without waiting.
pub fn has_ended(pidfd: &OwnedFd) -> bool {
    let mut polled = [nix::poll::PollFd::new(pidfd.as_fd(), nix::poll::PollFlags::POLLIN)];
    nix::poll::poll(&mut polled, nix::poll::PollTimeout::ZERO).is_ok_and(|ready| ready > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fields_are_read_after_the_command_name() {
        let parent = |stat: &[u8]| parse_stat(stat).map(|s| s.parent);
        let stat =
            |state, parent, group| Some(Stat { state, parent: Pid::from_raw(parent), group: Pid::from_raw(group) });
        assert_eq!(parse_stat(b"42 (cc1plus) S 41 42 7 0"), stat(b'S', 41, 42));
        // A name holding `) ` and digits, as a program may call itself.
        assert_eq!(parse_stat(b"42 (a) S 9 (b)) t 17 1 1"), stat(b't', 17, 1));
        assert_eq!(parent(b"garbage"), None);
        assert_eq!(parent(b"42 (a)"), None);
    }

    #[test]
    fn descendants_of_this_process_include_a_child_and_its_child() {
        let mut sh = std::process::Command::new("sh").args(["-c", "sleep 5 & wait"]).spawn().unwrap();
        let started = std::time::Instant::now();
        let me = nix::unistd::getpid();
        let found = loop {
            let found = descendants(me);
            if found.len() >= 2 || started.elapsed().as_secs() > 5 {
                break found;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        let _ = sh.kill();
        let _ = sh.wait();
        assert!(found.contains(&Pid::from_raw(sh.id() as i32)), "{found:?}");
        assert!(found.len() >= 2, "the shell's sleep is missing: {found:?}");
    }

    #[test]
    fn the_thread_count_is_read() {
        let (stop, wait) = std::sync::mpsc::channel::<()>();
        let other = std::thread::spawn(move || wait.recv());
        assert!(threads().is_some_and(|n| n >= 2), "{:?} with a thread started", threads());
        drop(stop);
        let _ = other.join();
    }

    #[test]
    fn this_tests_proc_is_its_own() {
        assert!(is_ours());
    }
}
