//! Threads for nvcc from free job slots (issue 31): nvcc runs the pipeline of each of a call's GPU targets one after
//! another unless given `--threads N`. When a call compiles several targets, and the build's jobserver (GNU make's,
//! or `nvcc-wrapper jobserver`'s, named in `MAKEFLAGS`) has free slots when nvcc starts, the call may take some
//! without waiting, one thread each, up to one per target and `threads` in the config; the slots go back when nvcc
//! ends (`exec::child`). Never when the memory free to the build cannot hold the threads at the peak measured for the
//! release (compat-data/threads.toml); never where the user chose for themselves (`-t`, `--split-compile`,
//! `--jobserver`). This step decides the most a call may take and says why; how many slots are free, and what the
//! memory free then holds (`Memory`, judged only once a slot was taken, so that a call that finds none reads
//! nothing more), are known only when nvcc starts: `explain` shows the most, and what it would be now.

use crate::plan::model::codes;
use std::fmt;

use super::facts::{ArgEdge, Facts};
use super::model::{Changes, GpuDecision, ThreadsDecision};
use super::Step;
use crate::args::table::GpuFlag;
use crate::args::{Given, Phase, Role};
use crate::compat::Version;
use crate::config::{Config, Origin, Sourced, ThreadCount};
use crate::context::Jobserver;
use crate::error::Result;
use crate::probe::hold::Unheld;
use crate::probe::memory::MemoryFree;

pub struct Threads;

/// The most threads a call gives nvcc: what the keeper's ledger records (`exec::ledger`), so that a keeper killed by
/// SIGKILL loses no slot of a call's, and what `explain` names is what nvcc gets.
pub const MOST_LENT: u32 = 64;

/// Memory kept free for everything else on the machine, beyond the threads' own peaks.
const RESERVE: u64 = 512 << 20;

const MIB: u64 = 1 << 20;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    UsersOwn {
        option: Given,
    },
    TurnedOff {
        origin: Origin,
    },
    NotMeasured {
        release: Version,
        targets: u32,
    },
    NoJobserver {
        targets: u32,
    },
    /// `why`: what is wrong with the jobserver `MAKEFLAGS` names, as the context that read it found it.
    JobserverUnusable {
        why: crate::context::jobserver::Unusable,
        targets: u32,
    },
    ArgEdge {
        edge: ArgEdge,
    },
}

codes!(Note {
    UsersOwn => "users-own",
    TurnedOff => "turned-off",
    NotMeasured => "not-measured",
    NoJobserver => "no-jobserver",
    JobserverUnusable => "jobserver-unusable",
    ArgEdge => "arg-edge",
});

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    FromSlots { targets: u32, most: u32, per_thread_mib: u32, release: Version, instead: NotFollowing },
    Following { targets: u32, most: u32, per_thread_mib: u32, release: Version, origin: Origin },
}

/// Why a call takes its threads when nvcc starts rather than following the build (on unless one of these).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotFollowing {
    /// `threads-follow = false`, here.
    TurnedOff(Origin),
    /// A `launcher` (set here) may run nvcc where the keeper cannot see its programs.
    Launcher(Origin),
    /// This machine cannot hold a program of nvcc's where job control does not see it (`exec::hold`).
    Machine(Unheld),
}

impl fmt::Display for NotFollowing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotFollowing::TurnedOff(origin) => write!(f, "`threads-follow` is false (in {origin})"),
            NotFollowing::Launcher(origin) => write!(
                f,
                "behind a `launcher` (in {origin}), whose compiler cache may run nvcc where the keeper cannot see its programs"
            ),
            NotFollowing::Machine(why) => write!(
                f,
                "the keeper holds nvcc's programs at their exec, where job control does not see them, and here {why}"
            ),
        }
    }
}

codes!(Reason {
    FromSlots => "from-slots",
    Following => "following",
});

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::UsersOwn { option } => {
                write!(f, "{option} is the user's own choice of how nvcc runs its work at once: no threads are added")
            }
            Note::TurnedOff { origin } => {
                write!(f, "`threads` is 1 (in {origin}): nvcc runs this call's GPU targets one after another")
            }
            Note::NotMeasured { release, targets } => write!(
                f,
                "nvcc {release} is not in the threads table (compat-data/threads.toml): its {targets} GPU targets run one after another"
            ),
            Note::NoJobserver { targets } => write!(
                f,
                "no jobserver in MAKEFLAGS: nvcc runs this call's {targets} GPU targets one after another (under `make -jN`, or `nvcc-wrapper jobserver -jN -- ninja`, free job slots become threads)"
            ),
            Note::ArgEdge { edge } => {
                write!(f, "no threads are taken: {edge}, and nothing optional is added so near the limit")
            }
            Note::JobserverUnusable { why, targets } => write!(
                f,
                "MAKEFLAGS names a jobserver this call cannot use ({why}): nvcc runs its {targets} GPU targets one after another"
            ),
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::FromSlots { targets, most, per_thread_mib, release, instead } => write!(
                f,
                "`threads` (the call's GPU targets unless set): {targets} GPU targets, so up to {most} threads, one more for each job slot free when nvcc starts, as many as the memory free then holds at nvcc {release}'s {per_thread_mib} MiB a thread, 512 MiB kept (compat-data/threads.toml); taken at the start, not following the build: {instead}"
            ),
            Reason::Following { targets, most, per_thread_mib, release, origin } => write!(
                f,
                "`threads-follow` is true ({}): {targets} GPU targets, so nvcc gets {most} threads, and no more of its work runs at once than the job slots the call holds (a program beyond them waits at its exec, unseen by job control); a slot that frees while nvcc runs becomes a thread, as the memory free then holds one more at nvcc {release}'s {per_thread_mib} MiB (compat-data/threads.toml), and one it no longer uses goes back",
                match origin {
                    Origin::Default => "by default; `threads-follow = false` takes them at the start".to_string(),
                    set => format!("in {set}"),
                }
            ),
        }
    }
}

impl Step for Threads {
    const NAME: &'static str = "threads";
    /// Its two keys, `threads` (unset: as many as the call's GPU targets) and `threads-follow` (unset: on): the
    /// whole config, read for those two only.
    type Section = Config;
    /// The GPU targets the GPU step added, which it counts.
    type Needs<'d> = Option<&'d GpuDecision>;
    type Decision = Option<ThreadsDecision>;

    fn section<'c>(config: &'c Config, _: &Facts) -> &'c Self::Section {
        config
    }

    /// From the GPU targets added, which it counts.
    fn decide(
        facts: &Facts,
        config: &Self::Section,
        gpu: Option<&GpuDecision>,
        plan: &mut Changes,
    ) -> Result<Option<ThreadsDecision>> {
        let setting: &Option<Sourced<ThreadCount>> = &config.threads;
        let inv = facts.invocation;
        let compiles = match inv.phase() {
            Phase::Compile | Phase::Lib | Phase::DeviceOnly => true,
            Phase::Link | Phase::Run => inv.compiles_sources(),
            Phase::Preprocess | Phase::DeviceLink => false,
        };
        if !compiles {
            return Ok(None);
        }
        // `-arch=native` asks the driver for this machine's GPUs: only where a jobserver could lend threads.
        let targets = targets(facts, plan, gpu, matches!(facts.jobserver, Jobserver::Usable(_)));
        if targets < 2 {
            return Ok(None);
        }
        if let Some(own) = inv.with_role(Role::Parallelism).next() {
            plan.note(Note::UsersOwn { option: inv.given(&[own]) });
            return Ok(None);
        }
        let most_configured = match setting {
            Some(Sourced { value, origin }) if value.get() == 1 => {
                plan.note(Note::TurnedOff { origin: origin.clone() });
                return Ok(None);
            }
            Some(s) => s.value.get(),
            None => u32::MAX,
        };
        if let Some(edge) = facts.arg_edge {
            plan.note(Note::ArgEdge { edge });
            return Ok(None);
        }
        let Some(release) = facts.release.version() else { return Ok(None) };
        let Some(row) = facts.compat.threads.row(release) else {
            plan.note(Note::NotMeasured { release: release.release(), targets });
            return Ok(None);
        };
        match &facts.jobserver {
            Jobserver::None => {
                plan.note(Note::NoJobserver { targets });
                return Ok(None);
            }
            Jobserver::Unusable(why) => {
                plan.note(Note::JobserverUnusable { why: why.clone(), targets });
                return Ok(None);
            }
            Jobserver::Usable(_) => {}
        }
        let most = targets.min(most_configured).min(MOST_LENT);
        let per_thread_mib = row.peak_per_thread_mib;
        // Following needs a keeper that sees nvcc's work: nvcc run directly (a compiler cache's server may run it
        // elsewhere), with no more threads than the keeper follows.
        let following = following(config, facts);
        let follow = following.is_ok();
        let why = match following {
            Ok(origin) => {
                plan.said(Reason::Following { targets, most, per_thread_mib, release: release.release(), origin })
            }
            Err(instead) => {
                plan.said(Reason::FromSlots { targets, most, per_thread_mib, release: release.release(), instead })
            }
        };
        Ok(Some(ThreadsDecision { most, per_thread_mib, follow, why }))
    }
}

/// Whether the call's threads follow the build, and by whose setting; else why they are taken at the start. On
/// unless `threads-follow = false`; never behind a `launcher`, whatever the setting, nor where this machine cannot
/// hold a program without job control seeing it (asked last, only for a call that would follow).
fn following(config: &Config, facts: &Facts) -> std::result::Result<Origin, NotFollowing> {
    if let Some(launcher) = &config.launcher {
        return Err(NotFollowing::Launcher(launcher.origin.clone()));
    }
    let origin = match &config.threads_follow {
        Some(Sourced { value: false, origin }) => return Err(NotFollowing::TurnedOff(origin.clone())),
        Some(Sourced { origin, .. }) => origin.clone(),
        None => Origin::Default,
    };
    facts.probes.hold().map_err(NotFollowing::Machine)?;
    Ok(origin)
}

/// What a call lends nvcc from the build's jobserver, decided once for the drop-in and `explain`: the threads
/// decided, the jobserver's client, and where `--threads N` goes. `None` without threads or a usable jobserver.
pub struct Lent<'a> {
    pub threads: &'a ThreadsDecision,
    pub client: &'a crate::context::jobserver::Client,
    pub channel: ThreadsIn,
}

/// Where `--threads N` goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadsIn {
    /// Among the arguments, at this index (first, for nvcc run directly).
    Argv(usize),
    /// In front of `NVCC_PREPEND_FLAGS`, which nvcc reads as if it came first on its command line: for nvcc run
    /// behind a compiler cache, whose key holds the arguments (ccache's, every one of them) but not that variable,
    /// so that a hit does not depend on how many slots were free.
    PrependFlags,
}

/// What the call lends, decided once: threads decided and a usable jobserver.
pub fn lent<'a>(decided: &'a super::model::Decided, jobserver: &'a Jobserver) -> Option<Lent<'a>> {
    let (Some(threads), Jobserver::Usable(client)) = (&decided.threads, jobserver) else { return None };
    let channel = if decided.launcher.is_some() { ThreadsIn::PrependFlags } else { ThreadsIn::Argv(0) };
    Some(Lent { threads, client, channel })
}

impl Lent<'_> {
    /// Whether the call needs a keeper for its threads now: threads that follow the build need no slot free at the
    /// start (one that frees later becomes a thread); threads taken at the start need one free now.
    pub fn now(&self) -> bool {
        self.threads.follow || self.client.has_free()
    }

    /// The memory free now, judged for this call's threads (read only when a slot is free to be taken).
    pub fn memory(&self) -> Memory {
        Memory::judge(self.threads.per_thread_mib, crate::probe::memory::free())
    }
}

/// The threads beyond nvcc's own that a call takes when nvcc starts: one a slot, as many as it may use and the memory
/// free holds (`memory_holds` threads in all). The keeper takes them; `explain` says how many it would take now.
pub fn extra_threads(most: u32, memory_holds: u32) -> u32 {
    most.min(memory_holds).saturating_sub(1)
}

/// What the memory free when nvcc starts says about its threads (read only once a slot was taken: a call that finds
/// none reads nothing): how many threads in all it holds, nvcc's first included, with why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Memory {
    Holds { threads: u32, free_mib: u64, from: &'static str },
    Short { free_mib: u64, per_thread_mib: u32, from: &'static str },
    Unknown,
}

impl Memory {
    /// Judge `free` for threads of `per_thread_mib` each.
    pub fn judge(per_thread_mib: u32, free: Option<MemoryFree>) -> Memory {
        let Some(free) = free else { return Memory::Unknown };
        let per_thread = u64::from(per_thread_mib.max(1)) * MIB;
        let threads = u32::try_from(free.bytes.saturating_sub(RESERVE) / per_thread).unwrap_or(u32::MAX);
        let free_mib = free.bytes / MIB;
        if threads < 2 {
            Memory::Short { free_mib, per_thread_mib, from: free.from }
        } else {
            Memory::Holds { threads, free_mib, from: free.from }
        }
    }

    /// The threads in all it allows (1: none more).
    pub fn threads(&self) -> u32 {
        match self {
            Memory::Holds { threads, .. } => *threads,
            Memory::Short { .. } | Memory::Unknown => 1,
        }
    }
}

impl fmt::Display for Memory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Memory::Holds { threads, free_mib, from } => {
                write!(f, "{free_mib} MiB free ({from}) holds {threads} threads, 512 MiB kept")
            }
            Memory::Short { free_mib, per_thread_mib, from } => write!(
                f,
                "{free_mib} MiB free ({from}) holds no second thread at {per_thread_mib} MiB a thread and 512 MiB kept free: no threads are taken"
            ),
            Memory::Unknown => f.write_str("the memory free to this build cannot be read: no threads are taken"),
        }
    }
}

/// How many GPU targets the call compiles, as nvcc will run them: one pipeline for each `-gencode` (the user's that
/// stay, and those the GPU step added), else one for each code of `-code`, else one (`-arch=sm_XY`, or nvcc's
/// default). `-arch=all` and `all-major` are as many as the release's own lists hold (compat-data/capabilities.toml,
/// as nvcc's `-arch=all` builds them: every platform's), and none when the release is not in the table; `-arch=native`
/// one for each kind of GPU this machine has, asked only when `native_counts`, else one.
fn targets(facts: &Facts, plan: &Changes, gpu: Option<&GpuDecision>, native_counts: bool) -> u32 {
    let inv = facts.invocation;
    let removed = |f: &crate::args::Found| plan.removed.iter().any(|r| r.found == *f);
    let users = |flag| inv.with_role(Role::GpuTarget(flag)).filter(|f| !removed(f));
    let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    let gencodes = count(users(GpuFlag::Gencode).count()).saturating_add(gpu.map_or(0, |g| g.targets));
    if gencodes > 0 {
        return gencodes;
    }
    let value = |f: &crate::args::Found| f.value.as_ref().and_then(|v| v.to_str().map(str::to_string));
    let codes = users(GpuFlag::Code).filter_map(value).map(|v| v.split(',').count()).sum::<usize>();
    if codes > 0 {
        return count(codes);
    }
    let Some(arch) = users(GpuFlag::Arch).filter_map(value).last() else { return 1 };
    match arch.as_str() {
        "all" | "all-major" => {
            let sets = facts.release.version().and_then(|r| facts.compat.capabilities.nvcc_all(r));
            sets.map_or(1, |(all, major, _)| count(if arch == "all" { all.len() } else { major.len() }))
        }
        "native" if native_counts => {
            let kinds: std::collections::BTreeSet<_> = facts.probes.gpus().unwrap_or_default().into_iter().collect();
            count(kinds.len().max(1))
        }
        _ => 1,
    }
}
