//! The keeper's crash record (`super::child`): the job slots K holds, in memory it shares with W and with its guard,
//! so that whoever outlives a K killed by SIGKILL gives them back. Threads that follow the build write into it as
//! they take and give back slots (`super::follow`); the keeper, the guard and the wrapper read it.

use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};

/// The most slots a ledger records: the most threads a call gives nvcc (the threads step decides no more).
pub const MOST: usize = crate::plan::threads::MOST_LENT as usize;

/// What K holds, in memory shared with W and with K's guard (an anonymous shared mapping made before the fork): the
/// job slots' bytes (each stored plus one; 0 is an empty place), and whether K reached its own end. A byte is written
/// down right after it is read from the jobserver and crossed out right before it is written back, so a K killed
/// between loses at most that one slot and never makes one up.
pub struct Ledger {
    slots: [AtomicU16; MOST],
    ended: AtomicBool,
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

    /// K's last word: it ran its code to its end (nothing of nvcc's runs, every slot is back).
    pub fn ended(&self) {
        self.ended.store(true, Ordering::SeqCst);
    }

    /// Whether K reached its own end, rather than being killed.
    pub fn keeper_ended(&self) -> bool {
        self.ended.load(Ordering::SeqCst)
    }

    /// Whoever outlives K: give back the slots it left held (none, unless K was killed). How many went back.
    pub fn settle(&self, client: &crate::context::jobserver::Client) -> usize {
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
