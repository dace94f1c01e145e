//! What a call leaves behind, and how K clears it: the programs of nvcc's still running after a stop, and the
//! temporary files of a call that failed.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use super::reap_all;
use crate::exec::procfs;

/// Where nvcc's temporary files are, to remove what a call that failed left of them (nvcc alone leaves them when it is
/// killed, or when its programs outlive it): its own in `tmpdir` (`tmpxft_<pid, 8 hex digits>_...`), and, where the
/// wrapper added `-objtemp`, those it names after the output, beside it (`beside`: the output, whose `NAME.*` files
/// written since nvcc started are its, but for the dependency files in `keep`, which go only when nvcc left one cut
/// short). Only files that are certainly the call's: `cicc`'s bitcode, which `-objtemp` names after the output in
/// `tmpdir`, cannot be told from another build's of an output of the same name there, and stays (a directory of the
/// call's own would tell, at a tenth more of the wait for nvcc on every call: measured, and left out). Never when the
/// user keeps intermediates (`--keep`).
pub struct Leftovers {
    pub tmpdir: std::path::PathBuf,
    pub beside: Option<std::path::PathBuf>,
    pub keep: Vec<std::path::PathBuf>,
}

/// How long nvcc's programs left running after a stop get after SIGTERM before SIGKILL.
pub const GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// The output's directory and the prefix of the temporary files `-objtemp` names after it (`NAME.`).
fn beside_prefix(output: &Path) -> Option<(&Path, Vec<u8>)> {
    let dir = output.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = output.file_name()?;
    Some((dir, [name.as_bytes(), b"."].concat()))
}

/// Remove the regular files a failed nvcc left: its own in the temporary directory, and those named after the output
/// beside it, written since it started.
pub(super) fn remove_leftovers(leftovers: &Leftovers, nvcc: Pid, started: std::time::SystemTime) {
    let remove = |dir: &Path, theirs: &dyn Fn(&std::fs::DirEntry) -> bool| {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_file()) && theirs(&entry) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    };
    let own = format!("tmpxft_{:08x}_", nvcc.as_raw());
    remove(&leftovers.tmpdir, &|e| e.file_name().as_bytes().starts_with(own.as_bytes()));
    // A dependency file nvcc was writing when it was stopped: cut short, it would name a path that is not one, and
    // stop the next `make` ("No rule to make target"). Whole (it ends with a newline), it stays, as nvcc left it.
    for depfile in &leftovers.keep {
        let Ok(meta) = std::fs::symlink_metadata(depfile) else { continue };
        let written = meta.modified().is_ok_and(|t| t >= started);
        if written && meta.is_file() && meta.len() <= crate::error::bounded::DEPFILE {
            let whole =
                crate::error::bounded::read(depfile, crate::error::bounded::DEPFILE).is_ok_and(|t| t.ends_with(b"\n"));
            if !whole {
                let _ = std::fs::remove_file(depfile);
            }
        }
    }
    if let Some((dir, prefix)) = leftovers.beside.as_deref().and_then(beside_prefix) {
        remove(dir, &|e| {
            e.file_name().as_bytes().starts_with(&prefix)
                && !leftovers.keep.contains(&e.path())
                && e.metadata().and_then(|m| m.modified()).is_ok_and(|t| t >= started)
        });
    }
}

/// Send `signal` to nvcc, then to every process it started that is still running.
pub(super) fn signal_tree(nvcc: Pid, signal: Signal) {
    let _ = kill(nvcc, signal);
    for pid in procfs::descendants(nvcc) {
        let _ = kill(pid, signal);
    }
}

/// Stop what is left of nvcc's processes (once nvcc has ended, they are K's children: K is their subreaper): SIGTERM,
/// up to `GRACE` for them to end, then SIGKILL. `guard` (K's guard, which ends only after K) is not nvcc's, and left.
pub(super) fn stop_orphans(guard: Option<Pid>) {
    let me = nix::unistd::getpid();
    let below = || procfs::descendants(me).into_iter().filter(|pid| Some(*pid) != guard).collect::<Vec<_>>();
    let left = below();
    if left.is_empty() {
        return;
    }
    for pid in &left {
        let _ = kill(*pid, Signal::SIGTERM);
    }
    let deadline = std::time::Instant::now() + GRACE;
    loop {
        reap_all(None);
        if below().is_empty() {
            return;
        }
        if std::time::Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    kill_orphans(below);
}

/// Wait, up to `GRACE`, for the processes below K that are in nvcc's process group to end by themselves (none is
/// stopped: a server a launcher started has a session of its own, and lives on).
pub(super) fn settle(group: Pid) {
    let me = nix::unistd::getpid();
    let deadline = std::time::Instant::now() + GRACE;
    loop {
        reap_all(None);
        let busy = procfs::descendants(me).into_iter().any(|pid| procfs::group_of(pid) == Some(group));
        if !busy || std::time::Instant::now() >= deadline {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Kill what is left below K (`below`, the guard left out).
fn kill_orphans(below: impl Fn() -> Vec<Pid>) {
    // Bounded: each round kills every process there is and reaps those that are K's children (the rest are reaped by
    // their parents, or become K's by the next round); a process that forks while dying adds a round.
    for _ in 0..64 {
        let left = below();
        if left.is_empty() {
            return;
        }
        for pid in &left {
            let _ = kill(*pid, Signal::SIGKILL);
        }
        for pid in &left {
            // One of K's own children, killed above; fails at once for one that is not K's.
            let _ = nix::sys::wait::waitpid(*pid, None);
        }
    }
}
