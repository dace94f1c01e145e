//! What the keeper reads of processes in `/proc`: who is below whom, and a process's group. Only a `/proc` of the
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
    pub parent: libc::pid_t,
    pub group: libc::pid_t,
}

pub use crate::probe::procfs::fields_of;

/// A `/proc/PID/stat` line's `Stat`.
pub fn parse_stat(stat: &[u8]) -> Option<Stat> {
    let mut fields = fields_of(stat)?;
    let state = *fields.next()?.as_bytes().first()?;
    Some(Stat { state, parent: fields.next()?.parse().ok()?, group: fields.next()?.parse().ok()? })
}

/// A process's `Stat`, read now; `None` for one that is gone.
pub fn stat(pid: libc::pid_t) -> Option<Stat> {
    parse_stat(&std::fs::read(format!("/proc/{pid}/stat")).ok()?)
}

/// A process's state letter (`R`, `S`, `T`, `t`, `Z` ...).
pub fn state_of(pid: libc::pid_t) -> Option<u8> {
    stat(pid).map(|s| s.state)
}

/// A process's parent.
pub fn parent_of(pid: libc::pid_t) -> Option<libc::pid_t> {
    stat(pid).map(|s| s.parent)
}

/// A process's group.
pub fn group_of(pid: libc::pid_t) -> Option<libc::pid_t> {
    stat(pid).map(|s| s.group)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fields_are_read_after_the_command_name() {
        let parent = |stat: &[u8]| parse_stat(stat).map(|s| s.parent);
        assert_eq!(parse_stat(b"42 (cc1plus) S 41 42 7 0"), Some(Stat { state: b'S', parent: 41, group: 42 }));
        // A name holding `) ` and digits, as a program may call itself.
        assert_eq!(parse_stat(b"42 (a) S 9 (b)) t 17 1 1"), Some(Stat { state: b't', parent: 17, group: 1 }));
        assert_eq!(parent(b"garbage"), None);
        assert_eq!(parent(b"42 (a)"), None);
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
}
