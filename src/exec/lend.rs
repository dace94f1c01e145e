//! What a call lends nvcc from the build's jobserver: the slots it may take, the memory check, where `--threads N`
//! goes and whether threads follow the build. The keeper in `child` takes them; `follow` keeps them while nvcc runs.

use crate::context::jobserver::Client;
use crate::plan::threads::Lent;
pub use crate::plan::threads::ThreadsIn;

/// Job slots a call may take from the build's jobserver, one thread of nvcc's each (`plan::threads`): K takes them,
/// without waiting, once it is out of every process group a kill could name, and gives nvcc `--threads N`.
pub struct Lend<'a> {
    pub client: &'a Client,
    /// The most threads in all, nvcc's own included (`ThreadsDecision::most`).
    pub most: u32,
    /// How many threads in all the memory free now holds (read only when a slot is free, by K).
    pub memory_holds: &'a dyn Fn() -> u32,
    /// Where `--threads N` goes.
    pub channel: ThreadsIn,
    /// Threads follow the build (`threads-follow`, `super::follow`): nvcc gets a thread for each target at once and
    /// K lets as many of its units run as it holds slots, taking and giving back slots while nvcc runs. Only for nvcc
    /// run directly (a compiler cache's server may run it where K cannot see it) and where `/proc` shows children.
    pub follow: bool,
}

impl<'a> Lend<'a> {
    /// What the plan lends (`plan::threads::lent`), with how to read what the memory free holds when a slot is free.
    pub fn new(lent: Lent<'a>, memory_holds: &'a dyn Fn() -> u32) -> Lend<'a> {
        let Lent { threads, client, channel } = lent;
        Lend { client, most: threads.most, memory_holds, channel, follow: threads.follow }
    }
}
