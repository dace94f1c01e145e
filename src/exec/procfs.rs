//! What the keeper reads of processes in `/proc`: who is below whom, and a process's group. Only a `/proc` of the
//! wrapper's own pid namespace is read (`is_ours`): one mounted for another (after `unshare --pid --fork` without
//! `--mount-proc`, say) numbers processes otherwise, and its process N is not the wrapper's N: what is read there
//! would name strangers, to be stopped or signalled. Such a `/proc` shows nothing here.

/// Whether `/proc` is of this process's pid namespace: its `self` names this process's own pid.
pub fn is_ours() -> bool {
    // SAFETY: getpid has no preconditions.
    let me = unsafe { libc::getpid() };
    std::fs::read_link("/proc/self").is_ok_and(|link| link.as_os_str() == me.to_string().as_str())
}

/// Send `signal` to `pid` only while it is a process below this one (K, whose descendants nvcc's programs stay as
/// its subreaper): the pid was read from `/proc` a moment before, and a process that ended meanwhile may have left
/// its number to a stranger. The process is held by a pidfd first and checked after, so the signal reaches the one
/// checked; without pidfds (Linux before 5.3) it goes by pid after the same check. Whether it was sent.
pub fn signal_below_me(pid: libc::pid_t, signal: libc::c_int) -> bool {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1; getpid has no preconditions.
    let (fd, me) = unsafe { (libc::syscall(libc::SYS_pidfd_open, pid, 0) as libc::c_int, libc::getpid()) };
    let below = is_below(pid, me);
    // SAFETY: the descriptor is this function's own, closed after use; the signal goes to the process it holds.
    unsafe {
        if fd < 0 {
            return below && libc::kill(pid, signal) == 0;
        }
        let sent = below && libc::syscall(libc::SYS_pidfd_send_signal, fd, signal, std::ptr::null::<u8>(), 0) == 0;
        libc::close(fd);
        sent
    }
}

/// Whether `pid`'s parents lead to `ancestor` (from `/proc`, at most 64 steps).
fn is_below(pid: libc::pid_t, ancestor: libc::pid_t) -> bool {
    if !is_ours() {
        return false;
    }
    let mut at = pid;
    for _ in 0..64 {
        let Some(parent) = std::fs::read(format!("/proc/{at}/stat")).ok().and_then(|s| parent_in_stat(&s)) else {
            return false;
        };
        if parent == ancestor {
            return true;
        }
        if parent <= 1 {
            return false;
        }
        at = parent;
    }
    false
}

/// A process's group, from `/proc/PID/stat` (the field after the parent's).
pub fn group_of(pid: libc::pid_t) -> Option<libc::pid_t> {
    let stat = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.iter().rposition(|&b| b == b')')? + 1..];
    std::str::from_utf8(after).ok()?.split_ascii_whitespace().nth(2)?.parse().ok()
}

/// Every process below `root`, from `/proc` (parents before children).
pub fn descendants(root: libc::pid_t) -> Vec<libc::pid_t> {
    if !is_ours() {
        return Vec::new();
    }
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
pub fn parent_in_stat(stat: &[u8]) -> Option<libc::pid_t> {
    let after = &stat[stat.iter().rposition(|&b| b == b')')? + 1..];
    let text = std::str::from_utf8(after).ok()?;
    text.split_ascii_whitespace().nth(1)?.parse().ok()
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

    #[test]
    fn this_tests_proc_is_its_own() {
        assert!(is_ours());
    }

    #[test]
    fn only_a_process_below_this_one_is_signalled() {
        let mut sleeper = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let pid = sleeper.id() as libc::pid_t;
        // This process's parent is not below it: a pid read before and now another's is left alone.
        // SAFETY: getppid has no preconditions.
        assert!(!signal_below_me(unsafe { libc::getppid() }, 0));
        assert!(signal_below_me(pid, libc::SIGKILL));
        let _ = sleeper.wait();
        // Ended and reaped: its pid names nothing below this process.
        assert!(!signal_below_me(pid, libc::SIGKILL));
    }
}
