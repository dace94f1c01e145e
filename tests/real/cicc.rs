//! `cicc`'s own deadlock in its interrupt handler, as the signal corpora (surroundings, terminal) tell it from a
//! side that hangs for another reason: a case whose `cicc` is so is run again, both sides.

use std::cell::Cell;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::running_in;

/// A `cicc` of the call's is inside its handler of SIGINT or SIGTERM (the signal is blocked, as during its handler),
/// waiting on a lock. `cicc`'s handler calls `exit`, whose handlers take a lock of `cicc`'s own: a signal that lands
/// while `cicc` holds that lock leaves it waiting for itself for ever, and nvcc waits for it (docs/nvcc-facts.md,
/// "What nvcc does on a signal", with the counts measured and what they leave open). The corpora run a case again,
/// both sides, when one is so for `STUCK`.
pub fn cicc_stuck_in_its_handler(dir: &Path) -> bool {
    running_in(dir).iter().filter_map(|p| p.strip_suffix(" cicc")).any(|pid| {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let blocked = status.lines().find_map(|l| l.strip_prefix("SigBlk:")).map(str::trim);
        let blocked = blocked.and_then(|b| u64::from_str_radix(b, 16).ok()).unwrap_or(0);
        let in_handler = blocked & (1 << (libc::SIGINT - 1) | 1 << (libc::SIGTERM - 1)) != 0;
        let wchan = std::fs::read_to_string(format!("/proc/{pid}/wchan")).unwrap_or_default();
        in_handler && wchan.starts_with("futex")
    })
}

/// How long a `cicc` stays in its handler, waiting on its lock, before it is taken for deadlocked.
pub const STUCK: Duration = Duration::from_secs(10);

/// What a corpus says of a side whose `cicc` deadlocked in its interrupt handler.
pub const CICC_STUCK: &str = "cicc deadlocked in its interrupt handler";

/// How often a corpus's case whose `cicc` deadlocked is run, both sides, before it counts as it ended.
pub const TRIES: usize = 3;

/// Whether a corpus runs a case again after try `tries` (from 1): the `cicc` of a side deadlocked (`stuck`: whether
/// nvcc alone's did, and the wrapper's) and tries are left. Says so on stderr.
pub fn run_again(tries: usize, stuck: [bool; 2]) -> bool {
    let sides: Vec<&str> =
        ["nvcc alone", "the wrapper"].into_iter().zip(stuck).filter(|(_, s)| *s).map(|(n, _)| n).collect();
    if sides.is_empty() || tries >= TRIES {
        return false;
    }
    eprintln!(
        "note: {}'s cicc deadlocked in its interrupt handler (try {tries} of {TRIES}); both sides run again",
        sides.join(" and ")
    );
    true
}

/// Whether a `cicc` under `dir` has been stuck in its handler for `STUCK`, over repeated looks.
pub struct StuckCicc<'a> {
    dir: &'a Path,
    since: Cell<Option<Instant>>,
    last: Cell<Option<Instant>>,
    found: Cell<bool>,
}

/// Looks further apart than this are no watch without a break: a stuck `cicc` seen again after it counts anew.
const BREAK: Duration = Duration::from_secs(1);

impl StuckCicc<'_> {
    pub fn new(dir: &Path) -> StuckCicc<'_> {
        StuckCicc { dir, since: Cell::new(None), last: Cell::new(None), found: Cell::new(false) }
    }

    /// Look again: true once the looks have found a `cicc` stuck, without a break, for `STUCK`.
    pub fn now(&self) -> bool {
        let watched = self.last.replace(Some(Instant::now())).is_some_and(|last| last.elapsed() < BREAK);
        let kept = self.since.get().filter(|_| watched);
        let since = if cicc_stuck_in_its_handler(self.dir) { kept.or(Some(Instant::now())) } else { None };
        self.since.set(since);
        let stuck = since.is_some_and(|since| since.elapsed() >= STUCK);
        self.found.set(self.found.get() || stuck);
        stuck
    }

    /// Whether a look has ever found it so.
    pub fn found(&self) -> bool {
        self.found.get()
    }
}
