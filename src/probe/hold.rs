//! Whether this machine lets the keeper hold a program of nvcc's before it runs, where job control cannot see it
//! (`exec::hold`: a seccomp filter whose `execve` waits for the keeper's answer). Asked by the threads step only for a
//! call that would follow the build; without it, the call takes its threads when nvcc starts, and `explain` says why.
//! Reads three small files and `uname`; decides nothing.

use std::fmt;

/// The seccomp audit value of this machine's own system calls (`AUDIT_ARCH_*` of linux/audit.h): the filter holds
/// only `execve` of this architecture. `None` where the wrapper knows no value (then nothing is held).
pub const AUDIT_ARCH: Option<u32> = if cfg!(target_arch = "x86_64") {
    Some(0xc000_003e)
} else if cfg!(target_arch = "aarch64") {
    Some(0xc000_00b7)
} else if cfg!(all(target_arch = "powerpc64", target_endian = "little")) {
    Some(0xc000_0015)
} else {
    None
};

/// The oldest Linux that lets a held system call go on as it was (`SECCOMP_USER_NOTIF_FLAG_CONTINUE`, 5.5).
const OLDEST: (u32, u32) = (5, 5);

/// Why a program cannot be held at its exec here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unheld {
    /// The wrapper knows no seccomp value for this CPU.
    Arch,
    /// `/proc` is missing, or of another pid namespace (`unshare --pid --fork` without `--mount-proc`): the parents
    /// of a held program cannot be read, and what `/proc/N` says would be a stranger's.
    Proc,
    /// The kernel offers no seccomp user notification (`/proc/sys/kernel/seccomp/actions_avail` lacks `user_notif`).
    NoUserNotification,
    /// Linux older than 5.5 (the release `uname` gives).
    Kernel(String),
    /// Not asked: probes that know no machine.
    NotProbed,
}

impl fmt::Display for Unheld {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unheld::Arch => f.write_str("the wrapper holds no program on this CPU"),
            Unheld::Proc => f.write_str("`/proc` is not this process's own, so the keeper cannot see nvcc's programs"),
            Unheld::NoUserNotification => f.write_str(
                "the kernel offers no seccomp user notification (`user_notif` in /proc/sys/kernel/seccomp/actions_avail), with which the keeper holds a program at its exec",
            ),
            Unheld::Kernel(release) => write!(
                f,
                "Linux {release} cannot let a program held at its exec go on (seccomp's CONTINUE answer came in Linux 5.5)"
            ),
            Unheld::NotProbed => f.write_str("this machine was not asked whether it can hold a program"),
        }
    }
}

/// Whether a program of nvcc's can be held at its exec on this machine.
pub fn check() -> Result<(), Unheld> {
    AUDIT_ARCH.ok_or(Unheld::Arch)?;
    if !proc_is_ours() {
        return Err(Unheld::Proc);
    }
    let actions = std::fs::read_to_string("/proc/sys/kernel/seccomp/actions_avail").unwrap_or_default();
    if !offers_user_notification(&actions) {
        return Err(Unheld::NoUserNotification);
    }
    let release = kernel_release();
    match release_at_least(&release, OLDEST) {
        true => Ok(()),
        false => Err(Unheld::Kernel(release)),
    }
}

/// Whether `/proc` is of this process's pid namespace: its `self` names this process's own pid.
pub fn proc_is_ours() -> bool {
    // SAFETY: getpid has no preconditions.
    let me = unsafe { libc::getpid() };
    std::fs::read_link("/proc/self").is_ok_and(|link| link.as_os_str() == me.to_string().as_str())
}

/// Whether `actions_avail`'s text lists `user_notif`.
fn offers_user_notification(actions: &str) -> bool {
    actions.split_ascii_whitespace().any(|a| a == "user_notif")
}

/// The kernel's release, as `uname -r` prints it.
fn kernel_release() -> String {
    // SAFETY: utsname is plain data that uname fills in whole.
    let mut name: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::uname(&mut name) } != 0 {
        return String::new();
    }
    let bytes: Vec<u8> = name.release.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Whether a release such as `6.18.44-fc-v1045` is at least `(major, minor)`; one that cannot be read is not.
fn release_at_least(release: &str, (major, minor): (u32, u32)) -> bool {
    let mut numbers = release.split(|c: char| !c.is_ascii_digit()).map(|n| n.parse::<u32>().ok());
    match (numbers.next().flatten(), numbers.next().flatten()) {
        (Some(a), Some(b)) => (a, b) >= (major, minor),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_release_is_compared_by_its_first_two_numbers() {
        assert!(release_at_least("6.18.44-fc-v1045", OLDEST));
        assert!(release_at_least("5.5.0", OLDEST));
        assert!(!release_at_least("5.4.290-generic", OLDEST));
        assert!(!release_at_least("4.19.0", OLDEST));
        assert!(!release_at_least("", OLDEST));
        assert!(!release_at_least("garbage", OLDEST));
    }

    #[test]
    fn user_notification_is_read_from_the_kernels_list() {
        assert!(offers_user_notification("kill_process kill_thread trap errno user_notif trace log allow\n"));
        assert!(!offers_user_notification("kill_process kill_thread trap errno trace log allow\n"));
        assert!(!offers_user_notification(""));
    }
}
