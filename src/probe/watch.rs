//! When a probed program is stopped: once it has sat still for `Limits::still` (no CPU time, no wait for a CPU, no
//! page faulted in, by any process of its group), or once it has run `Limits::working` in all, busy or not.
//!
//! A wall-clock limit alone cannot tell a hung program from a slow one: on a loaded machine the first start of
//! `clang++` (its LLVM library read from a cold disk cache) has taken more than 10 s, and a probe stopped then made
//! the wrapper decide without that compiler's answer, for every call while the failure was remembered. A program that
//! waits on a lock, a network file system or a pipe does no work at all; one that is starved of CPU waits on the run
//! queue, and one that reads a slow disk faults its pages in or runs for a few microseconds between reads, so it is
//! given until `working`.
//!
//! Between two reads a reader waits for the kernel's next readahead window (up to the disk's `read_ahead_kb`, 8 MiB
//! on some virtual disks), and nothing of the process moves while it waits: a disk so slow that one window takes
//! `still` (under 1 MiB/s for 8 MiB) cannot be told from a hung network file system, and is stopped as still.

use std::time::{Duration, Instant};

/// How long a probed program may go without doing any work, and how long it may run in all.
#[derive(Clone, Copy, Debug)]
pub(super) struct Limits {
    pub still: Duration,
    pub working: Duration,
    /// How often the group's work is read (from the first look on; a probe that answers sooner never reads it).
    pub look_every: Duration,
}

/// Why a program was stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// It did no work for this long.
    Still(Duration),
    /// It was still running, working, after this long.
    Working(Duration),
}

/// Watches the process group of one probed program.
pub(super) struct Watch {
    limits: Limits,
    group: i32,
    started: Instant,
    work: Option<u64>,
    last_change: Instant,
    next_look: Instant,
}

impl Watch {
    pub fn new(limits: Limits, group: i32) -> Self {
        let now = Instant::now();
        Watch { limits, group, started: now, work: None, last_change: now, next_look: now + limits.look_every }
    }

    /// How long the caller may wait (for output, or for the program to end) before it calls `check` again.
    pub fn until_next_look(&self) -> Duration {
        self.next_look.saturating_duration_since(Instant::now())
    }

    /// Whether the program must be stopped now. Reads the group's work only when a look is due.
    pub fn check(&mut self) -> Option<Stopped> {
        let now = Instant::now();
        if now < self.next_look {
            return None;
        }
        if now.duration_since(self.started) >= self.limits.working {
            return Some(Stopped::Working(self.limits.working));
        }
        // Where /proc cannot be read, the program's own CPU time stands for its group's work (`leader_cpu`); where
        // even that cannot be read, `work` stays `None` and the program is stopped `still` after the first look.
        let work = work_done(self.group).or_else(|| leader_cpu(self.group));
        if work.is_some() && work != self.work {
            self.work = work;
            self.last_change = now;
        }
        if now.duration_since(self.last_change) >= self.limits.still {
            return Some(Stopped::Still(self.limits.still));
        }
        self.next_look = (now + self.limits.look_every).min(self.started + self.limits.working);
        None
    }
}

/// The work the processes of `group` have done so far: CPU time and time spent waiting for a CPU (in nanoseconds,
/// from `/proc/PID/schedstat`, where the kernel keeps them), and page faults and CPU ticks (from `/proc/PID/stat`),
/// those of their reaped children included. A program blocked on a slow disk still runs a few microseconds between
/// reads, and one starved of CPU waits on the run queue; one that sleeps on a lock does neither. `None` when no
/// process of the group could be read.
fn work_done(group: i32) -> Option<u64> {
    let mut total = None;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().filter(|n| n.bytes().all(|b| b.is_ascii_digit())) else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        let Some((pgrp, counters)) = parse_stat(&stat) else { continue };
        if pgrp != group {
            continue;
        }
        let scheduled = std::fs::read_to_string(format!("/proc/{pid}/schedstat")).ok();
        let scheduled = scheduled.as_deref().and_then(parse_schedstat).unwrap_or(0);
        total = Some(total.unwrap_or(0u64).wrapping_add(counters).wrapping_add(scheduled));
    }
    total
}

/// The CPU time of the group's leader (the probed program), in nanoseconds, from its CPU-time clock: readable
/// without `/proc` (issue 38: with `/proc` hidden, a compiler busy for 12 s was stopped as hung at 10 s). It misses
/// the programs the leader runs and waits for, which only `/proc` shows.
fn leader_cpu(leader: i32) -> Option<u64> {
    // SAFETY: clock_getcpuclockid writes a clock id for `leader`; clock_gettime fills `now` from it.
    unsafe {
        let mut clock: libc::clockid_t = 0;
        if libc::clock_getcpuclockid(leader, &mut clock) != 0 {
            return None;
        }
        let mut now: libc::timespec = std::mem::zeroed();
        if libc::clock_gettime(clock, &mut now) != 0 {
            return None;
        }
        Some(u64::try_from(now.tv_sec).ok()? * 1_000_000_000 + u64::try_from(now.tv_nsec).ok()?)
    }
}

/// A `/proc/PID/schedstat` line's time on a CPU plus time waiting for one, in nanoseconds.
fn parse_schedstat(line: &str) -> Option<u64> {
    let mut fields = line.split_whitespace().map(|f| f.parse::<u64>().ok());
    Some(fields.next()??.wrapping_add(fields.next()??))
}

/// A `/proc/PID/stat` line's process group, and the sum of its fault and time counters.
fn parse_stat(stat: &str) -> Option<(i32, u64)> {
    // After the command's name: state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime
    // cutime cstime ...
    let fields: Vec<&str> = super::procfs::fields_of(stat.as_bytes())?.collect();
    let pgrp = fields.get(2)?.parse().ok()?;
    let counters = fields.get(7..15)?.iter().map(|f| f.parse::<u64>().ok()).sum::<Option<u64>>()?;
    Some((pgrp, counters))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_are_read_after_the_command_name() {
        // A real line (bash, `cat /proc/$$/stat`), its name changed to hold a space and a parenthesis.
        let line = "4242 (we(ird) name) S 4200 4242 4200 34816 4250 4194560 1530 2914 3 7 2 1 11 6 20 0 1 0 \
                    8123456 9015296 1032 18446744073709551615 1 1 0 0 0 0 65536 3686404 1266761467 0 0 0 17 1 0 0";
        assert_eq!(parse_stat(line), Some((4242, 1530 + 2914 + 3 + 7 + 2 + 1 + 11 + 6)));
        for bad in ["", "4242 (sh)", "4242 (sh) S 1 x 1 0 0 0 1 2 3 4 5 6 7 8"] {
            assert_eq!(parse_stat(bad), None, "{bad:?}");
        }
        // A real schedstat line: nanoseconds on a CPU, nanoseconds waiting for one, times scheduled.
        assert_eq!(parse_schedstat("152008889 99217 9\n"), Some(152008889 + 99217));
        assert_eq!(parse_schedstat("152008889"), None);
    }

    /// `program` started in a process group of its own, and the work that group has done 200 ms apart, after 200 ms.
    fn work_of(program: &str, args: &[&str]) -> (Option<u64>, Option<u64>) {
        use std::os::unix::process::CommandExt;
        let mut child = std::process::Command::new(program).args(args).process_group(0).spawn().unwrap();
        let group = child.id() as i32;
        std::thread::sleep(Duration::from_millis(200));
        let first = work_done(group);
        std::thread::sleep(Duration::from_millis(200));
        let second = work_done(group);
        child.kill().unwrap();
        child.wait().unwrap();
        (first, second)
    }

    #[test]
    fn without_proc_the_leaders_cpu_time_tells_work_from_sleep() {
        use std::os::unix::process::CommandExt;
        for (program, args, busy) in
            [("/bin/sh", &["-c", "while :; do :; done"][..], true), ("/bin/sleep", &["30"], false)]
        {
            let mut child = std::process::Command::new(program).args(args).process_group(0).spawn().unwrap();
            let group = child.id() as i32;
            std::thread::sleep(Duration::from_millis(100));
            let first = leader_cpu(group);
            std::thread::sleep(Duration::from_millis(200));
            let second = leader_cpu(group);
            child.kill().unwrap();
            child.wait().unwrap();
            assert!(first.is_some(), "{program}");
            assert_eq!(second > first, busy, "{program}: {first:?} then {second:?}");
        }
    }

    #[test]
    fn a_busy_group_is_seen_working_and_a_sleeping_one_still() {
        // A group of its own, not the test's: other processes of the test's group may end between two reads.
        let (first, second) = work_of("/bin/sh", &["-c", "while :; do :; done"]);
        assert!(first.is_some() && second > first, "busy: {first:?} then {second:?}");
        let (first, second) = work_of("/bin/sleep", &["30"]);
        assert!(first.is_some() && second == first, "sleeping: {first:?} then {second:?}");
        assert_eq!(work_done(-1), None);
    }
}
