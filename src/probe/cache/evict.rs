//! Keeping the wrapper's own directories small: the probe cache (`probe::cache`) and the options files rewritten under
//! `arch-flags = "replace"` (`exec`). Eviction is by age, never by size: each kind of file says how long it is kept
//! after it was last written or used (its modification time, which a use refreshes where it matters), and a sweep
//! removes the older ones.
//!
//! A sweep runs at most once every `SWEEP_EVERY` per directory (a `.swept` file's time says when the last one was), and
//! only as a side effect of writing into the directory, so a call that only reads costs nothing. It removes only files
//! whose names the wrapper gives (`Rules`), so a directory shared with other files (a probe cache directory set to
//! `/tmp`) loses nothing else. Every failure is ignored: a sweep is housekeeping, never a reason to fail a call.

use std::path::Path;
use std::time::{Duration, SystemTime};

/// How often a directory is swept at most.
pub const SWEEP_EVERY: Duration = Duration::from_secs(24 * 3600);

/// How long a temporary file (left by a wrapper killed while writing) may stay: no write takes this long.
pub const TEMPORARY_LIFETIME: Duration = Duration::from_secs(3600);

/// What a sweep of one directory removes.
pub struct Rules {
    /// How long an entry is kept after its modification time.
    pub keep: Duration,
    /// Whether a file name is one of the directory's entries.
    pub is_entry: fn(&str) -> bool,
    /// Whether a file name is one of its temporary files.
    pub is_temporary: fn(&str) -> bool,
}

/// Sweep `dir` unless it was swept in the last `SWEEP_EVERY`.
pub fn now_and_then(dir: &Path, rules: &Rules) {
    let stamp = dir.join(".swept");
    let now = SystemTime::now();
    let recent = std::fs::symlink_metadata(&stamp)
        .ok()
        .filter(std::fs::Metadata::is_file)
        .and_then(|m| m.modified().ok())
        .and_then(|t| now.duration_since(t).ok())
        .is_some_and(|age| age < SWEEP_EVERY);
    if recent {
        return;
    }
    // The stamp first, so that calls running at the same moment mostly leave the sweep to this one. A stamp that is
    // not a plain file is replaced.
    let _ = std::fs::remove_file(&stamp);
    if std::fs::OpenOptions::new().write(true).create_new(true).open(&stamp).is_err() {
        return;
    }
    sweep(dir, rules, now);
}

/// Remove the entries older than `rules.keep` and the temporary files older than `TEMPORARY_LIFETIME`, as of `now`.
pub fn sweep(dir: &Path, rules: &Rules, now: SystemTime) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let keep = if (rules.is_entry)(name) {
            rules.keep
        } else if (rules.is_temporary)(name) {
            TEMPORARY_LIFETIME
        } else {
            continue;
        };
        // Not followed: a link is judged, and removed, as itself.
        let Ok(meta) = std::fs::symlink_metadata(entry.path()) else { continue };
        if meta.is_dir() {
            continue;
        }
        let old = meta.modified().ok().and_then(|t| now.duration_since(t).ok()).is_some_and(|age| age > keep);
        if old {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULES: Rules = Rules {
        keep: Duration::from_secs(100),
        is_entry: |name| name.ends_with(".entry"),
        is_temporary: |name| name.ends_with(".tmp"),
    };

    fn dated(path: &Path, seconds_ago: u64) {
        std::fs::write(path, "x").unwrap();
        let file = std::fs::File::options().write(true).open(path).unwrap();
        file.set_modified(SystemTime::now() - Duration::from_secs(seconds_ago)).unwrap();
    }

    #[test]
    fn old_entries_and_temporary_files_go_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let p = |n: &str| dir.path().join(n);
        dated(&p("new.entry"), 10);
        dated(&p("old.entry"), 1000);
        dated(&p("fresh.tmp"), 1000);
        dated(&p("stale.tmp"), 2 * 3600);
        dated(&p("old-but-not-ours"), 10_000_000);
        std::os::unix::fs::symlink("/dev/zero", p("link.entry")).unwrap();
        let mut kept: Vec<String> = {
            now_and_then(dir.path(), &RULES);
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect()
        };
        kept.sort();
        // The link was made just now: it stays until it is old, like any entry.
        assert_eq!(kept, [".swept", "fresh.tmp", "link.entry", "new.entry", "old-but-not-ours"]);
        // Swept once a day at most: an entry aged since is left until the next sweep.
        dated(&p("new.entry"), 1000);
        now_and_then(dir.path(), &RULES);
        assert!(p("new.entry").exists());
        sweep(dir.path(), &RULES, SystemTime::now());
        assert!(!p("new.entry").exists());
    }
}
