//! The memory free to this build: the kernel's `MemAvailable`, and, where the process runs in a memory cgroup with a
//! limit (a Nix builder's, a CI container's; v1 or v2, the limit of every ancestor counted), what that limit leaves.
//! Pure parsers over the files' text, and one function that reads them.

use std::path::PathBuf;

/// How much memory is free, and what said it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryFree {
    pub bytes: u64,
    /// `MemAvailable`, or the cgroup's limit (the smaller of the two counts).
    pub from: &'static str,
}

/// `MemAvailable` from `/proc/meminfo`'s text, in bytes.
pub fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The memory controller's directory of this process, from `/proc/self/cgroup`'s text: v1's `N:memory:/path` (or
/// with other controllers joined), else v2's `0::/path`; `(path, v2)`.
pub fn cgroup_path(proc_self_cgroup: &str) -> Option<(String, bool)> {
    let mut v2 = None;
    for line in proc_self_cgroup.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next()) else { continue };
        if controllers.split(',').any(|c| c == "memory") {
            return Some((path.to_string(), false));
        }
        if id == "0" && controllers.is_empty() {
            v2 = Some((path.to_string(), true));
        }
    }
    v2
}

/// What one cgroup level leaves free: its limit less its use, with the inactive page cache (which the kernel takes
/// back before it runs out) counted as free. `None` when it sets no limit.
pub fn left_under(limit: &str, usage: &str, stat: &str, v2: bool) -> Option<u64> {
    let limit: u64 = limit.trim().parse().ok()?;
    // v1 writes "no limit" as a number near 2^63.
    if limit >= 1 << 60 {
        return None;
    }
    let usage: u64 = usage.trim().parse().ok()?;
    let key = if v2 { "inactive_file" } else { "total_inactive_file" };
    let inactive =
        stat.lines().find_map(|l| l.strip_prefix(key).and_then(|rest| rest.trim().parse::<u64>().ok())).unwrap_or(0);
    Some(limit.saturating_sub(usage.saturating_sub(inactive)))
}

/// The memory free to this process now, or `None` when `/proc/meminfo` cannot be read.
pub fn free() -> Option<MemoryFree> {
    let available = mem_available(&std::fs::read_to_string("/proc/meminfo").ok()?)?;
    let mut found = MemoryFree { bytes: available, from: "MemAvailable" };
    let Some((path, v2)) = std::fs::read_to_string("/proc/self/cgroup").ok().as_deref().and_then(cgroup_path) else {
        return Some(found);
    };
    let root = if v2 {
        // A v2 hierarchy mounted alone, or beside v1 (Debian's "unified").
        ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]
            .into_iter()
            .map(PathBuf::from)
            .find(|r| r.join("cgroup.controllers").exists())
    } else {
        Some(PathBuf::from("/sys/fs/cgroup/memory"))
    };
    let Some(root) = root else { return Some(found) };
    let (limit, usage) =
        if v2 { ("memory.max", "memory.current") } else { ("memory.limit_in_bytes", "memory.usage_in_bytes") };
    // This cgroup and every ancestor: the tightest limit counts.
    let mut dir = root.join(path.trim_start_matches('/'));
    loop {
        let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
        if let (Some(l), Some(u)) = (read(limit), read(usage)) {
            if let Some(left) = left_under(&l, &u, &read("memory.stat").unwrap_or_default(), v2) {
                if left < found.bytes {
                    found = MemoryFree { bytes: left, from: "the memory cgroup's limit" };
                }
            }
        }
        if dir == root || !dir.pop() || !dir.starts_with(&root) {
            break;
        }
    }
    Some(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_available_is_read_in_bytes() {
        let meminfo = "MemTotal:       24570704 kB\nMemFree:        22065884 kB\nMemAvailable:   23406276 kB\n";
        assert_eq!(mem_available(meminfo), Some(23406276 * 1024));
        assert_eq!(mem_available("MemTotal: 1 kB\n"), None);
    }

    #[test]
    fn the_memory_controller_is_found_in_v1_then_v2() {
        // As this project's machine has it (v1 memory beside a v2 "unified" hierarchy), and a v2-only host.
        let hybrid = "9:name=systemd:/\n4:memory:/process_api/e103\n0::/\n";
        assert_eq!(cgroup_path(hybrid), Some(("/process_api/e103".into(), false)));
        assert_eq!(cgroup_path("0::/user.slice/build.scope\n"), Some(("/user.slice/build.scope".into(), true)));
        assert_eq!(cgroup_path("5:cpu,memory:/a\n"), Some(("/a".into(), false)));
        assert_eq!(cgroup_path(""), None);
    }

    #[test]
    fn a_limit_leaves_its_rest_with_inactive_cache_counted_free() {
        assert_eq!(left_under("1073741824\n", "536870912\n", "", false), Some(536870912));
        assert_eq!(left_under("1073741824", "536870912", "inactive_file 268435456\n", true), Some(805306368));
        assert_eq!(left_under("1000", "900", "total_inactive_file 100\n", false), Some(200));
        // No limit: v2 "max", v1 near 2^63.
        assert_eq!(left_under("max\n", "5", "", true), None);
        assert_eq!(left_under("9223372036854771712", "5", "", false), None);
        // Over the limit already: nothing left.
        assert_eq!(left_under("100", "200", "", false), Some(0));
    }

    #[test]
    fn this_machine_has_some_memory_free() {
        let free = free().expect("/proc/meminfo");
        assert!(free.bytes > 0, "{free:?}");
    }
}
