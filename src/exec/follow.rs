//! Threads that follow the build (issue 41; `threads-follow`): nvcc runs with a thread for each GPU target, and the
//! keeper (`super::child`) lets no more of its work run at once than the job slots it holds, the call's own
//! included. A slot that frees while nvcc runs becomes a thread at once; one the call no longer needs goes straight
//! back to the build.
//!
//! nvcc starts each step of a target's pipeline (the device preprocessing, `cicc`, `ptxas`; 13.x also runs its host
//! steps two at once) as a child of its own, through `sh` or directly: a **unit** here is one child of nvcc with
//! everything below it, and it starts with that child's first exec. Every exec of nvcc's programs waits for K's
//! answer (`super::hold`: a program held so is not stopped, and job control never sees it). K:
//! - lets an exec of a unit that runs go on at once;
//! - lets the first exec of a new unit go on while the units that run are fewer than the slots held, else takes a
//!   free job slot for it without waiting (never more than `most` in all), each beyond the first only when the memory
//!   free holds one more thread at the release's measured peak; else the exec waits, oldest first, for a unit to end
//!   (K learns it at once, from a pidfd);
//! - gives back a slot no unit has used for two ticks in a row.
//!
//! A held program is nvcc's child before its exec, with nvcc's signal mask, and hears signals as it would there: one
//! the mask lets through that ends it ends it at once, wherever it waits; one the mask blocks (nvcc blocks SIGINT and
//! SIGTERM in its children until they run) waits, pending, until it runs; a stop interrupts its wait, and it asks
//! again once continued. A unit a debugger holds stopped (`t`) holds no slot (it
//! may wait, through the debugger, for one that waits for a slot: gdb lets a vfork child of nvcc's go only once the
//! one before has called exec); one stopped by someone else (a terminal's Ctrl-Z) keeps its slot. While the job is
//! stopped (a Ctrl-Z stops nvcc with its programs), K lets nothing start and takes no slot. Once K is told to stop,
//! or nvcc ends, every exec goes on at once. What K holds of the build's slots is written down in a `Ledger`
//! (`super::ledger`) shared with W and with K's guard, so that whoever outlives a K killed by SIGKILL gives them back.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};

use nix::errno::Errno;
use nix::poll::PollFlags;
use nix::unistd::Pid;
use std::time::{Duration, Instant};

use super::hold::{Held, Listener};
use super::ledger::Ledger;
use super::lend::Lend;

/// How often K looks again while an exec waits or a slot is held: the memory free, the job's stop, a spare slot.
pub const TICK: Duration = Duration::from_millis(20);

/// A unit let run, as K counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runs {
    /// Running, or stopped by someone else (a terminal's Ctrl-Z): it holds its slot.
    Holding,
    /// Stopped under a tracer (`t`): a debugger holds it, and only the debugger lets it go; it holds no slot.
    Traced,
}

/// How many slots the units let run use: a traced one uses none.
pub fn using(units: &[Runs]) -> usize {
    units.iter().filter(|u| **u == Runs::Holding).count()
}

/// Slots held that no unit uses, the call's own kept: given back when nothing waits.
pub fn spare(units: &[Runs], slots: usize, waiting: usize) -> usize {
    match waiting {
        0 => slots.saturating_sub(using(units).max(1)),
        _ => 0,
    }
}

/// A unit let run: its first process, and a pidfd that becomes readable when that process ends.
struct Unit {
    root: Pid,
    ends: Option<OwnedFd>,
}

/// An exec held for want of a slot, and the unit it starts.
struct Waiting {
    held: Held,
    root: Pid,
    /// The debug log said it waits.
    said: bool,
}

/// K's side: the execs of one nvcc's programs, the units let run, and the slots held.
pub struct Follow<'a> {
    lend: &'a Lend<'a>,
    ledger: &'static Ledger,
    nvcc: Pid,
    listener: Listener,
    /// The slots' bytes, as taken.
    pub held: Vec<u8>,
    units: Vec<Unit>,
    /// Oldest first.
    waiting: Vec<Waiting>,
    /// Told to stop, or nvcc ended: every exec goes on at once.
    released: bool,
    /// Ticks in a row with a spare slot.
    spare_ticks: u32,
    /// The threads the memory free held when last read, and when: read again only after `MEMORY_AGAIN`, so that an
    /// exec waiting for memory does not read it every tick.
    memory: Option<(Instant, u32)>,
}

/// How long what the memory free holds is taken as known.
const MEMORY_AGAIN: Duration = Duration::from_millis(500);

impl<'a> Follow<'a> {
    pub fn new(lend: &'a Lend<'a>, ledger: &'static Ledger, nvcc: Pid, listener: Listener) -> Follow<'a> {
        let (held, units, waiting) = (Vec::new(), Vec::new(), Vec::new());
        Follow { lend, ledger, nvcc, listener, held, units, waiting, released: false, spare_ticks: 0, memory: None }
    }

    /// What K polls for this follow: the listener first, then each unit's end.
    pub fn descriptors(&self) -> Vec<BorrowedFd<'_>> {
        let ends = self.units.iter().filter_map(|u| u.ends.as_ref()).map(|fd| fd.as_fd());
        std::iter::once(self.listener.fd()).chain(ends).collect()
    }

    /// Whether K should look again after `TICK` though nothing happened: an exec waits, or a slot is held.
    pub fn wants_ticks(&self) -> bool {
        !self.waiting.is_empty() || !self.held.is_empty()
    }

    /// What a poll of `descriptors` reported of each, in their order: a held exec, units that ended. Then let run what
    /// the slots allow.
    pub fn on_events(&mut self, polled: &[(RawFd, PollFlags)]) {
        let ended: Vec<RawFd> = polled
            .iter()
            .skip(1)
            .filter(|(_, events)| events.intersects(PollFlags::POLLIN | PollFlags::POLLHUP | PollFlags::POLLERR))
            .map(|(fd, _)| *fd)
            .collect();
        self.units.retain(|u| !u.ends.as_ref().is_some_and(|fd| ended.contains(&fd.as_raw_fd())));
        if polled.first().is_some_and(|(_, events)| events.contains(PollFlags::POLLIN)) {
            match self.listener.next() {
                Ok(Some(held)) => self.arrived(held),
                Ok(None) => {}
                Err(err) => tracing::debug!("the listener of nvcc's execs failed: {err}"),
            }
        }
        self.admit();
    }

    /// A tick: let run what the memory now holds, and give back a slot no unit has used for two ticks.
    pub fn tick(&mut self) {
        self.admit();
        let spare = spare(&self.states(), self.held.len() + 1, self.waiting.len());
        if spare == 0 {
            self.spare_ticks = 0;
            return;
        }
        self.spare_ticks += 1;
        if self.spare_ticks >= 2 {
            for _ in 0..spare.min(self.held.len()) {
                if let Some(byte) = self.held.pop() {
                    self.ledger.giving_back(byte);
                    self.lend.client.give_back(byte);
                }
            }
            self.spare_ticks = 0;
        }
    }

    /// An exec of nvcc's programs, held: let go at once unless it starts a unit beyond the slots.
    fn arrived(&mut self, held: Held) {
        if self.released || held.pid == self.nvcc {
            self.listener.let_run(held.id);
            return;
        }
        let root = unit_of(held.pid, self.nvcc);
        // The pid was read from `/proc` by its number: still the one held, or the answer is moot.
        if !self.listener.waits(held.id) {
            return;
        }
        let Some(root) = root.filter(|r| !self.units.iter().any(|u| u.root == *r)) else {
            // A unit that runs, or something no unit's (a program whose parent ended before it).
            self.listener.let_run(held.id);
            return;
        };
        if let Some(already) = self.waiting.iter_mut().find(|w| w.held.pid == held.pid) {
            // Asked again after a stop or a signal's handler interrupted its wait: its place in the queue is kept.
            already.held = held;
            return;
        }
        self.waiting.push(Waiting { held, root, said: false });
    }

    /// Let waiting execs go on, oldest first, within the slots held and those free now, as the memory holds them. Not
    /// while the job is stopped.
    fn admit(&mut self) {
        if self.waiting.is_empty() || self.job_stopped() {
            return;
        }
        let mut using = using(&self.states());
        let most = self.lend.most as usize;
        while !self.waiting.is_empty() {
            // Every slot held, the call's own included, is in use.
            if using > self.held.len() {
                if self.held.len() + 1 >= most || !self.lend.client.has_free() || !self.memory_holds(using + 1) {
                    break;
                }
                let Some(byte) = self.lend.client.try_take() else { break };
                self.ledger.took(byte);
                self.held.push(byte);
                tracing::debug!("a job slot freed while nvcc runs: {} threads now", self.held.len() + 1);
            } else if using > 0 && !self.memory_holds(using + 1) {
                break;
            }
            let first = self.waiting.remove(0);
            // Held by a pidfd before it runs: a unit that ends at once is never counted by a pid another has taken.
            // Without one (no descriptor left) the unit counts until nvcc ends: the call slower, never over its slots.
            let ends = super::procfs::pidfd(first.root);
            // One that ended, or whose wait a signal interrupted (it asks again once it runs), leaves its place.
            if self.listener.let_run(first.held.id) && !matches!(ends, Err(Errno::ESRCH)) {
                self.units.push(Unit { root: first.root, ends: ends.ok() });
                using += 1;
            }
        }
        for waiting in self.waiting.iter_mut().filter(|w| !w.said) {
            tracing::debug!(
                "nvcc's work beyond the {} job slots held waits: process {} held at its exec",
                self.held.len() + 1,
                waiting.held.pid
            );
            waiting.said = true;
        }
    }

    /// The units let run that have not ended, as they count.
    fn states(&self) -> Vec<Runs> {
        self.units
            .iter()
            .map(|u| match super::procfs::state_of(u.root) {
                Some(b't') => Runs::Traced,
                _ => Runs::Holding,
            })
            .collect()
    }

    /// Whether nvcc itself is stopped for job control (`T`): K never stops anything, so someone stopped the job (a
    /// terminal's Ctrl-Z, a stop signal to the group), and with it every program of nvcc's. A slot that frees then (a
    /// program that was ending, or killed) is no reason to start what waits: nvcc alone's work would all be stopped.
    /// A tracer's stop (`t`, gdb at a breakpoint in nvcc) stops nvcc alone, not the job.
    fn job_stopped(&self) -> bool {
        super::procfs::state_of(self.nvcc) == Some(b'T')
    }

    fn memory_holds(&mut self, threads: usize) -> bool {
        let holds = match self.memory {
            Some((at, holds)) if at.elapsed() < MEMORY_AGAIN => holds,
            _ => {
                let holds = (self.lend.memory_holds)();
                self.memory = Some((Instant::now(), holds));
                holds
            }
        };
        holds as usize >= threads
    }

    /// Stop following (K was told to stop, or nvcc ended): whatever waits goes on, and so does every exec after.
    pub fn release_all(&mut self) {
        self.released = true;
        for waiting in std::mem::take(&mut self.waiting) {
            self.listener.let_run(waiting.held.id);
        }
    }
}

/// The unit `pid` belongs to: its ancestor whose parent is `nvcc` (from `/proc`, at most 64 steps); `None` for a
/// process not below nvcc.
fn unit_of(pid: Pid, nvcc: Pid) -> Option<Pid> {
    let mut at = pid;
    for _ in 0..64 {
        match super::procfs::parent_of(at)? {
            parent if parent == nvcc => return Some(at),
            parent if parent.as_raw() <= 1 => return None,
            parent => at = parent,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_unit_a_debugger_holds_uses_no_slot() {
        // gdb attached to nvcc holds a unit (`t`): an exec that waits goes on in its slot.
        assert_eq!(using(&[Runs::Traced]), 0);
        assert_eq!(using(&[Runs::Traced, Runs::Holding, Runs::Holding]), 2);
    }

    #[test]
    fn slots_no_unit_uses_are_spare_and_the_calls_own_is_kept() {
        assert_eq!(spare(&[Runs::Holding], 4, 0), 3);
        assert_eq!(spare(&[], 3, 0), 2);
        assert_eq!(spare(&[Runs::Holding], 1, 1), 0);
        assert_eq!(spare(&[Runs::Holding, Runs::Holding], 3, 1), 0, "an exec waits: no slot is spare");
        assert_eq!(spare(&[Runs::Traced], 2, 0), 1);
    }
}
