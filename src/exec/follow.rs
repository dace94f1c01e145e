//! Threads that follow the build (issue 41; `threads-follow`): nvcc runs with a thread for each GPU target, and the
//! keeper (`super::child`) lets no more of its work run at once than the job slots it holds, the call's own
//! included. A slot that frees while nvcc runs becomes a thread at once; one the call no longer needs goes straight
//! back to the build.
//!
//! nvcc starts each step of a target's pipeline (the device preprocessing, `cicc`, `ptxas`; 13.x also runs its host
//! steps two at once) as a child of its own, through `sh` or directly: a **unit** here is one child of nvcc with
//! everything below it. Every `TICK`, K reads the units from `/proc` and:
//! - stops (SIGSTOP) the newest running units beyond the slots held, every process of them, before they grow;
//! - continues (SIGCONT) the oldest of those it stopped while it holds a slot that no unit uses, and takes a free job
//!   slot for one without waiting (never more than `most` in all), each beyond the first only when the memory free
//!   holds one more thread at the release's measured peak;
//! - gives back a slot no unit has used for two ticks in a row.
//!
//! What it stopped never stays stopped for want of it: a unit that was sent a signal that would end it (a build's
//! interrupt to the process group, which reaches a stopped process but acts only once it runs) is continued at the
//! next tick and never stopped again; a unit continued from outside (a terminal's `fg`, `kill -CONT`) is stopped again
//! only while the call holds too few slots for it; when nvcc ends, or K is told to stop, everything is continued. A
//! unit a debugger holds stopped holds no slot (it may wait, through the debugger, for one that waits for a slot).
//! While the job is stopped (a Ctrl-Z stops nvcc with its programs), K continues nothing and takes no slot. And
//! what K stops or holds is written down in a `Ledger` shared with W, so that when K is killed by SIGKILL, W continues
//! the units and gives the slots back, and K's guard (`child::guard`) does when W is killed with it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI32, AtomicU16, Ordering};
use std::time::Duration;

use super::lend::Lend;

/// How often the units are read.
pub const TICK: Duration = Duration::from_millis(20);

/// The most slots a ledger records (a quarter of the processes it does): more threads than this are never followed.
pub const MOST: usize = crate::plan::threads::MOST_FOLLOWED as usize;

/// Signals that end a process by default, and so must reach a stopped unit (bits of `/proc/PID/status`'s masks).
const ENDING: u64 = bit(libc::SIGHUP)
    | bit(libc::SIGINT)
    | bit(libc::SIGQUIT)
    | bit(libc::SIGABRT)
    | bit(libc::SIGKILL)
    | bit(libc::SIGUSR1)
    | bit(libc::SIGUSR2)
    | bit(libc::SIGPIPE)
    | bit(libc::SIGALRM)
    | bit(libc::SIGTERM)
    | bit(libc::SIGXCPU)
    | bit(libc::SIGXFSZ);

const fn bit(signal: libc::c_int) -> u64 {
    1 << (signal - 1)
}

/// What K holds and has stopped, in memory shared with W (an anonymous shared mapping made before the fork): the job
/// slots' bytes (each stored plus one; 0 is an empty place) and the stopped processes' pids. A byte is written down
/// right after it is read from the jobserver and crossed out right before it is written back, so a K killed between
/// loses at most that one slot and never makes one up.
pub struct Ledger {
    slots: [AtomicU16; MOST],
    stopped: [AtomicI32; MOST * 4],
}

impl Ledger {
    /// A ledger in memory that a forked K shares with W; `None` when the kernel gives none (then nothing follows).
    pub fn shared() -> Option<&'static Ledger> {
        let size = std::mem::size_of::<Ledger>();
        // SAFETY: a new anonymous mapping, zero-filled by the kernel (all places empty), never unmapped: it lives as
        // long as the process, in W and in K alike. Atomics of zeros are valid values.
        unsafe {
            let at = libc::mmap(
                std::ptr::null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            (at != libc::MAP_FAILED).then(|| &*(at as *const Ledger))
        }
    }

    pub fn took(&self, byte: u8) {
        if let Some(place) = self.slots.iter().find(|p| p.load(Ordering::SeqCst) == 0) {
            place.store(u16::from(byte) + 1, Ordering::SeqCst);
        }
    }

    pub fn giving_back(&self, byte: u8) {
        let held = u16::from(byte) + 1;
        if let Some(place) = self.slots.iter().find(|p| p.load(Ordering::SeqCst) == held) {
            place.store(0, Ordering::SeqCst);
        }
    }

    fn stopping(&self, pid: libc::pid_t) {
        if let Some(place) = self.stopped.iter().find(|p| p.load(Ordering::SeqCst) == 0) {
            place.store(pid, Ordering::SeqCst);
        }
    }

    fn continued(&self, pid: libc::pid_t) {
        if let Some(place) = self.stopped.iter().find(|p| p.load(Ordering::SeqCst) == pid) {
            place.store(0, Ordering::SeqCst);
        }
    }

    /// W, once K has ended: continue what K left stopped and give back the slots it left held (none, unless K was
    /// killed). How many slots went back.
    pub fn settle(&self, client: &crate::context::jobserver::Client) -> usize {
        for place in &self.stopped {
            let pid = place.swap(0, Ordering::SeqCst);
            if pid > 0 {
                // SAFETY: kill takes plain integers; a stopped process keeps its pid until it is continued and ends.
                unsafe { libc::kill(pid, libc::SIGCONT) };
            }
        }
        let mut back = 0;
        for place in &self.slots {
            let held = place.swap(0, Ordering::SeqCst);
            if held > 0 && client.give_back((held - 1) as u8) {
                back += 1;
            }
        }
        back
    }
}

/// One process of a unit, as `/proc/PID/stat` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Proc {
    pub pid: libc::pid_t,
    /// Stopped (`T`, or `t` under a tracer): it runs no code until continued.
    pub stopped: bool,
    /// Stopped under a tracer (`t`): a debugger holds it, and only the debugger lets it go.
    pub traced: bool,
}

/// One child of nvcc and everything below it (the zombies left out), oldest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    pub root: libc::pid_t,
    pub procs: Vec<Proc>,
    /// A signal that ends a process by default is pending in one of them.
    pub ending: bool,
}

impl Unit {
    fn running(&self) -> bool {
        self.procs.iter().any(|p| !p.stopped)
    }

    fn traced(&self) -> bool {
        self.procs.iter().any(|p| p.traced)
    }
}

/// What one tick decides, from the units and the slots held (`decide`): pure, so that it is tested alone.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Moves {
    /// Units to stop, every process of them.
    pub stop: Vec<libc::pid_t>,
    /// Units stopped by K to continue now, in slots held and unused, the memory free permitting.
    pub resume: Vec<libc::pid_t>,
    /// Units K stopped that run again (continued from outside, or a process started just as K stopped the rest),
    /// within the slots held: what K stopped of them is continued, at once.
    pub finish: Vec<libc::pid_t>,
    /// Units K stopped that a signal that ends them waits for: continued, and never stopped again.
    pub release: Vec<libc::pid_t>,
    /// Units still waiting for a slot, oldest first: each may take one that is free.
    pub waiting: Vec<libc::pid_t>,
    /// Slots held that no unit uses.
    pub spare: usize,
    /// Units that hold a slot before the ones continued this tick: running, released, or stopped by someone else.
    pub running: usize,
}

/// Decide a tick: `ours` are the units K stopped, `released` those it must never stop again, `slots` the slots held
/// with the call's own. Units are oldest first (nvcc starts them in the order of its targets).
pub fn decide(units: &[Unit], ours: &[libc::pid_t], released: &[libc::pid_t], slots: usize) -> Moves {
    let mut moves = Moves::default();
    let mut running = 0;
    for unit in units {
        let mine = ours.contains(&unit.root);
        if mine && unit.ending {
            moves.release.push(unit.root);
            running += 1;
        } else if released.contains(&unit.root) {
            running += 1;
        } else if unit.running() {
            if running < slots {
                running += 1;
                if mine {
                    moves.finish.push(unit.root);
                }
            } else {
                moves.stop.push(unit.root);
                moves.waiting.push(unit.root);
            }
        } else if mine {
            moves.waiting.push(unit.root);
        } else if unit.traced() {
            // Held by a debugger: it holds no slot, as it may wait for one that waits for a slot. gdb lets a vfork
            // child of nvcc's go only once the one before has called exec, and keeps nvcc's threads stopped until
            // then: with that one stopped here for want of a slot, counting the held ones would wait for ever.
        } else {
            // Stopped by someone else (a terminal's Ctrl-Z): it holds its slot, and is left alone.
            running += 1;
        }
    }
    moves.running = running;
    // Only units K stopped before this tick are continued: one found running beyond the slots (stopped this tick)
    // waits for a later one.
    let free = slots.saturating_sub(running);
    let resumable: Vec<_> = moves.waiting.iter().copied().filter(|p| ours.contains(p)).take(free).collect();
    moves.waiting.retain(|p| !resumable.contains(p));
    moves.resume = resumable;
    let used = running + moves.resume.len();
    moves.spare = if moves.waiting.is_empty() { slots.saturating_sub(used.max(1)) } else { 0 };
    moves
}

/// K's side: the units of one nvcc, what K stopped of them, and the slots it holds.
pub struct Follow<'a> {
    lend: &'a Lend<'a>,
    ledger: &'static Ledger,
    nvcc: libc::pid_t,
    /// The slots' bytes, as taken.
    pub held: Vec<u8>,
    /// Units K stopped, by root, with the processes it stopped in each.
    ours: BTreeMap<libc::pid_t, Vec<libc::pid_t>>,
    released: Vec<libc::pid_t>,
    /// What this tick continued, by root: stopped again if the job was stopped meanwhile (`tick`).
    continued: Vec<(libc::pid_t, Vec<libc::pid_t>)>,
    /// Ticks in a row with a spare slot.
    spare_ticks: u32,
    /// The threads the memory free held when last read, and when: read again only after `MEMORY_AGAIN`, so that a
    /// unit waiting for memory does not read it every tick.
    memory: Option<(std::time::Instant, u32)>,
}

/// How long what the memory free holds is taken as known.
const MEMORY_AGAIN: Duration = Duration::from_millis(500);

impl<'a> Follow<'a> {
    pub fn new(lend: &'a Lend<'a>, ledger: &'static Ledger, nvcc: libc::pid_t) -> Follow<'a> {
        let held = Vec::new();
        let (ours, released, continued) = (BTreeMap::new(), Vec::new(), Vec::new());
        Follow { lend, ledger, nvcc, held, ours, released, continued, spare_ticks: 0, memory: None }
    }

    /// Whether `/proc` shows this process's children, which following needs, in this process's own pid namespace
    /// (`procfs::is_ours`): checked before nvcc starts, so that without it the call takes its threads at the start.
    pub fn possible() -> bool {
        // SAFETY: getpid has no preconditions.
        let me = unsafe { libc::getpid() };
        super::procfs::is_ours() && std::fs::metadata(format!("/proc/{me}/task/{me}/children")).is_ok()
    }

    /// One tick: read the units, stop, continue, take and give back. Not while the job is stopped (`job_stopped`);
    /// and what this tick continued is stopped again when the job was stopped meanwhile, so that a Ctrl-Z that comes
    /// between the reading and the continuing leaves nothing of nvcc's running.
    pub fn tick(&mut self) {
        if self.job_stopped() {
            return;
        }
        self.moves();
        let continued = std::mem::take(&mut self.continued);
        if !continued.is_empty() && self.job_stopped() {
            for (root, pids) in continued {
                for &pid in &pids {
                    self.ledger.stopping(pid);
                    super::procfs::signal_below_me(pid, libc::SIGSTOP);
                }
                self.released.retain(|r| *r != root);
                self.ours.entry(root).or_default().extend(pids);
            }
        }
    }

    /// Whether nvcc itself is stopped for job control (`T`): K never stops nvcc, so someone stopped the job (a
    /// terminal's Ctrl-Z, a stop signal to the group), and with it every program of nvcc's. A slot that frees then
    /// (a program that was ending, or killed) is no reason to run what waits: nvcc alone's work would all be stopped.
    /// A tracer's stop (`t`, gdb at a breakpoint in nvcc) stops nvcc alone, not the job.
    fn job_stopped(&self) -> bool {
        state_of(self.nvcc).is_some_and(|(state, _)| state == b'T')
    }

    fn moves(&mut self) {
        let units = units(self.nvcc);
        self.ours.retain(|root, _| units.iter().any(|u| u.root == *root));
        self.released.retain(|root| units.iter().any(|u| u.root == *root));
        let ours: Vec<_> = self.ours.keys().copied().collect();
        let moves = decide(&units, &ours, &self.released, self.held.len() + 1);
        let unit = |root: libc::pid_t| units.iter().find(|u| u.root == root);
        for root in &moves.release {
            self.resume(*root);
            self.released.push(*root);
        }
        for root in &moves.finish {
            self.resume(*root);
        }
        // Beyond the slots: new units, units continued from outside, and the processes a unit K stopped started
        // just before it was stopped.
        for root in &moves.stop {
            if let Some(unit) = unit(*root) {
                self.stop(unit);
            }
        }
        let mut running_now = moves.running;
        for root in &moves.resume {
            if running_now > 0 && !self.memory_holds(running_now + 1) {
                break;
            }
            self.resume(*root);
            running_now += 1;
        }
        for root in &moves.waiting {
            if self.held.len() + 1 >= (self.lend.most as usize).min(MOST) || !self.lend.client.has_free() {
                break;
            }
            if !self.memory_holds(running_now + 1) {
                break;
            }
            let Some(byte) = self.lend.client.try_take() else { break };
            self.ledger.took(byte);
            self.held.push(byte);
            tracing::debug!("a job slot freed while nvcc runs: {} threads now", self.held.len() + 1);
            self.resume(*root);
            running_now += 1;
        }
        if moves.spare > 0 {
            self.spare_ticks += 1;
            if self.spare_ticks >= 2 {
                for _ in 0..moves.spare.min(self.held.len()) {
                    if let Some(byte) = self.held.pop() {
                        self.ledger.giving_back(byte);
                        self.lend.client.give_back(byte);
                    }
                }
                self.spare_ticks = 0;
            }
        } else {
            self.spare_ticks = 0;
        }
    }

    fn memory_holds(&mut self, threads: usize) -> bool {
        let holds = match self.memory {
            Some((at, holds)) if at.elapsed() < MEMORY_AGAIN => holds,
            _ => {
                let holds = (self.lend.memory_holds)();
                self.memory = Some((std::time::Instant::now(), holds));
                holds
            }
        };
        holds as usize >= threads
    }

    fn stop(&mut self, unit: &Unit) {
        if !self.ours.contains_key(&unit.root) {
            tracing::debug!(
                "nvcc's work beyond the {} job slots held waits: process {} stopped",
                self.held.len() + 1,
                unit.root
            );
        }
        let stopped = self.ours.entry(unit.root).or_default();
        for proc in unit.procs.iter().filter(|p| !p.stopped) {
            if !stopped.contains(&proc.pid) {
                if self.ledger.stopped.iter().all(|p| p.load(Ordering::SeqCst) != 0) {
                    // More processes than a ledger keeps: this one is left running.
                    continue;
                }
                self.ledger.stopping(proc.pid);
                stopped.push(proc.pid);
            }
            // Read from /proc this tick, below nvcc: stopped only if it still is the process read (issue 48).
            super::procfs::signal_below_me(proc.pid, libc::SIGSTOP);
        }
    }

    fn resume(&mut self, root: libc::pid_t) {
        let pids = self.ours.remove(&root).unwrap_or_default();
        for &pid in &pids {
            super::procfs::signal_below_me(pid, libc::SIGCONT);
            self.ledger.continued(pid);
        }
        self.continued.push((root, pids));
    }

    /// Continue everything K stopped and stop following (nvcc ended, or K was told to stop it).
    pub fn release_all(&mut self) {
        let roots: Vec<_> = self.ours.keys().copied().collect();
        for root in roots {
            self.resume(root);
        }
    }
}

/// The units of `nvcc`: its children with what is below each, from `/proc/PID/task/TID/children`.
fn units(nvcc: libc::pid_t) -> Vec<Unit> {
    let mut roots = children(nvcc);
    roots.sort_unstable();
    roots
        .into_iter()
        .filter_map(|root| {
            let mut procs = Vec::new();
            let mut ending = false;
            let mut todo = vec![root];
            while let Some(pid) = todo.pop() {
                let Some((state, pending)) = state_of(pid) else { continue };
                if state == b'Z' || state == b'X' {
                    continue;
                }
                ending |= pending & ENDING != 0;
                procs.push(Proc { pid, stopped: state == b'T' || state == b't', traced: state == b't' });
                todo.extend(children(pid));
            }
            (!procs.is_empty()).then_some(Unit { root, procs, ending })
        })
        .collect()
}

/// The children of every thread of `pid`.
fn children(pid: libc::pid_t) -> Vec<libc::pid_t> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return Vec::new() };
    let mut found = Vec::new();
    for task in tasks.flatten() {
        if let Ok(text) = std::fs::read_to_string(task.path().join("children")) {
            found.extend(text.split_ascii_whitespace().filter_map(|p| p.parse::<libc::pid_t>().ok()));
        }
    }
    found
}

/// A process's state letter and the signals pending for it (its own and its thread group's), from `/proc`. Only a
/// stopped process's pending signals are read: a running one acts on them itself.
fn state_of(pid: libc::pid_t) -> Option<(u8, u64)> {
    let stat = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.iter().rposition(|&b| b == b')')? + 1..];
    let state = *after.iter().find(|b| !b.is_ascii_whitespace())?;
    if state != b'T' && state != b't' {
        return Some((state, 0));
    }
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let pending = status
        .lines()
        .filter_map(|l| l.strip_prefix("SigPnd:").or_else(|| l.strip_prefix("ShdPnd:")))
        .filter_map(|v| u64::from_str_radix(v.trim(), 16).ok())
        .fold(0, |a, b| a | b);
    Some((state, pending))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(root: libc::pid_t, stopped: bool) -> Unit {
        Unit { root, procs: vec![Proc { pid: root, stopped, traced: false }], ending: false }
    }

    #[test]
    fn units_beyond_the_slots_are_stopped_newest_first() {
        let units = [unit(10, false), unit(11, false), unit(12, false), unit(13, false)];
        let moves = decide(&units, &[], &[], 2);
        assert_eq!(moves.stop, vec![12, 13]);
        assert_eq!(moves.waiting, vec![12, 13]);
        assert!(moves.resume.is_empty());
        assert_eq!(moves.spare, 0);
    }

    #[test]
    fn a_slot_no_unit_uses_continues_the_oldest_waiting_unit() {
        // 10 ended; 12 and 13 wait, stopped by K; two slots held.
        let units = [unit(11, false), unit(12, true), unit(13, true)];
        let moves = decide(&units, &[12, 13], &[], 2);
        assert_eq!(moves.resume, vec![12]);
        assert_eq!(moves.waiting, vec![13]);
        assert!(moves.stop.is_empty());
    }

    #[test]
    fn a_unit_continued_from_outside_is_stopped_again_only_beyond_the_slots() {
        let units = [unit(11, false), unit(12, false)];
        assert_eq!(decide(&units, &[12], &[], 1).stop, vec![12]);
        let moves = decide(&units, &[12], &[], 2);
        assert!(moves.stop.is_empty() && moves.waiting.is_empty(), "{moves:?}");
        assert_eq!(moves.finish, vec![12], "what K stopped of it must be continued");
    }

    #[test]
    fn a_unit_k_stopped_whose_new_process_runs_is_continued_whole_within_the_slots() {
        // K stopped 12's `sh` as it started its `gcc`, which runs: left half stopped, `sh` would never reap it.
        let half = Unit {
            root: 12,
            procs: vec![
                Proc { pid: 12, stopped: true, traced: false },
                Proc { pid: 14, stopped: false, traced: false },
            ],
            ending: false,
        };
        assert_eq!(decide(std::slice::from_ref(&half), &[12], &[], 1).finish, vec![12]);
        let moves = decide(&[unit(11, false), half], &[12], &[], 1);
        assert_eq!((moves.stop, moves.waiting), (vec![12], vec![12]));
    }

    #[test]
    fn a_unit_found_running_beyond_the_slots_waits_a_tick_before_it_is_continued() {
        let moves = decide(&[unit(11, false), unit(12, false)], &[], &[], 1);
        assert!(moves.resume.is_empty());
        assert_eq!(moves.waiting, vec![12]);
    }

    #[test]
    fn a_stopped_unit_with_an_ending_signal_pending_is_released_and_never_stopped_again() {
        let mut ending = unit(12, true);
        ending.ending = true;
        let moves = decide(&[unit(11, false), ending], &[12], &[], 1);
        assert_eq!(moves.release, vec![12]);
        assert!(moves.waiting.is_empty());
        let moves = decide(&[unit(11, false), unit(12, false)], &[], &[12], 1);
        assert!(moves.stop.is_empty(), "{moves:?}");
    }

    #[test]
    fn a_unit_a_terminal_stopped_holds_its_slot_and_is_left_alone() {
        let moves = decide(&[unit(11, true), unit(12, true)], &[12], &[], 1);
        assert!(moves.resume.is_empty() && moves.stop.is_empty());
        assert_eq!(moves.waiting, vec![12]);
    }

    #[test]
    fn a_unit_a_debugger_holds_takes_no_slot_from_one_that_waits() {
        // gdb attached to nvcc: 12 and 13 are vfork children it holds (`t`) until 11, stopped here, calls exec.
        let traced = |root| Unit { root, procs: vec![Proc { pid: root, stopped: true, traced: true }], ending: false };
        let moves = decide(&[unit(11, true), traced(12), traced(13)], &[11], &[], 2);
        assert_eq!(moves.resume, vec![11], "{moves:?}");
        assert_eq!(moves.running, 0);
    }

    #[test]
    fn slots_no_unit_uses_are_spare_and_the_calls_own_is_kept() {
        assert_eq!(decide(&[unit(11, false)], &[], &[], 4).spare, 3);
        assert_eq!(decide(&[], &[], &[], 3).spare, 2);
        assert_eq!(decide(&[unit(11, false), unit(12, true)], &[12], &[], 1).spare, 0);
    }

    #[test]
    fn the_ending_signals_are_the_ones_that_end_a_process() {
        assert_ne!(ENDING & bit(libc::SIGINT), 0);
        assert_eq!(ENDING & bit(libc::SIGCONT), 0);
        assert_eq!(ENDING & bit(libc::SIGCHLD), 0);
        assert_eq!(ENDING & bit(libc::SIGTSTP), 0);
    }
}
