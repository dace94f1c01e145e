//! Deciding what to change: a pure function from the parsed command line, the configuration and what is known about
//! the toolchain to a `Plan` (`model`). Nothing here touches the OS except through `Probes`.
//!
//! `plan()` works out the facts once (`facts`: the release, the target, ...), then runs the steps in `STEPS`. Every
//! step has one contract (`Step`): it sees the facts and its own section of the config, and adds to the plan, with a
//! typed reason for every change. Steps never import each other (`layering` checks it); what two steps need is a
//! fact, and what a step asks of the command line is a query of `args`.
//!
//! A plan adds arguments before the user's (so the user's own flags still win, nvcc using the last value of a
//! repeated option) or after them, sets environment variables for nvcc, and gives a reason for every change. It
//! edits none of the user's tokens, except that a documented policy may remove some (`[gpu] arch-flags =
//! "replace"`, and `-dlto` when a device-LTO compile gets the capabilities as `code=lto_XY`): `edit` owns how, and
//! every removal carries its reason.

pub mod cross;
pub mod cuda_compat;
pub mod depfile;
mod edit;
pub mod facts;
pub mod fatbin;
pub mod gpu;
pub mod host_compiler;
pub mod launcher;
pub mod model;
mod release;
pub mod reproducible;
pub mod target;
pub mod threads;

use crate::plan::model::codes;
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

pub use facts::{Facts, JobSlots, NvccProcess, Release};
pub use model::{Plan, WrittenFile};
pub use release::not_in_tables;

use crate::args::split::{first_unpassable, UNPASSABLE_HELP};
use crate::args::Invocation;
use crate::compat::Compat;
use crate::config::{Config, Sourced};
use crate::error::{Error, Result};
use crate::locate::RealNvcc;
use crate::probe::system::Probes;

/// What a step records in the plan for later steps to read. A step names those it writes and those it reads
/// (`Step::WRITES`, `Step::READS`); `check_order` holds `STEPS` to them, and a test holds each step's code to its
/// declarations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// The host compiler chosen (`plan.host`).
    Host,
    /// The GPU targets added (`plan.gpu`, and the flags among `plan.before`).
    GpuTargets,
    /// The user's tokens a documented policy removed (`plan.removed`).
    Removed,
    /// The job slots lent to nvcc (`plan.threads`).
    Threads,
    /// The dependency files the wrapper completes after nvcc (`plan.depfile`).
    Depfile,
    /// The launcher nvcc runs behind, if any (`plan.launcher`): the one decided, not the one configured.
    Launcher,
}

/// One decision of the plan.
pub trait Step {
    /// Its name, as the debug log and `explain --format json` give it.
    const NAME: &'static str;
    /// The decisions of earlier steps it reads: each must be written before it, and none after it.
    const READS: &'static [Decision] = &[];
    /// The decisions it records for later steps.
    const WRITES: &'static [Decision] = &[];
    /// The part of the config it decides from.
    type Section;
    /// Its section of `config` (for some steps, which one depends on the facts: the target's for a cross build).
    fn section<'c>(config: &'c Config, facts: &Facts) -> &'c Self::Section;
    /// Add to the plan what this step decides, with its reasons; an error stops the call before nvcc runs.
    fn decide(facts: &Facts, section: &Self::Section, plan: &mut Plan) -> Result<()>;
}

/// A configured path (`key`, as the reference names it) that a step puts inside an `-X` list reaching `to`: an error
/// naming the setting and the byte when nvcc would not pass it on unchanged (`args::split::first_unpassable`).
fn passable(key: &str, setting: &Sourced<PathBuf>, to: &str) -> Result<()> {
    let Some(byte) = first_unpassable(setting.as_os_str().as_bytes()) else { return Ok(()) };
    Err(Error::new(
        setting.origin.error_kind(),
        format!(
            "`{key}` ({}, from {}) holds {byte}, which nvcc would not pass to {to} unchanged",
            crate::shell::path(setting),
            setting.origin
        ),
    )
    .with_help(UNPASSABLE_HELP))
}

type Run = fn(&Facts, &Config, &mut Plan) -> Result<()>;

/// A step in `STEPS`: its name, how to run it, and what it declares (which the order check reads, in tests).
#[cfg_attr(not(test), allow(dead_code))]
#[derive(Clone, Copy)]
pub struct StepEntry {
    pub name: &'static str,
    run: Run,
    pub reads: &'static [Decision],
    pub writes: &'static [Decision],
}

/// The steps, in the order they decide: the host compiler first (cross and GPU flags go after its `-ccbin`), threads
/// after the GPU targets they count, the cuda-compat runpath before every runpath added so far, the launcher nvcc
/// runs behind before the reproducible-builds flags (which depend on it, on the depfile step and on the threads step:
/// each decides whether nvcc keeps the wrapper's pid), and the launcher's cache key last (it moves and hashes what
/// the others added). The reads and writes each step declares are checked against this order (`check_order`).
const STEPS: &[StepEntry] = &[
    step::<host_compiler::HostCompiler>(),
    step::<cross::Cross>(),
    step::<gpu::Gpu>(),
    step::<threads::Threads>(),
    step::<cuda_compat::CudaCompat>(),
    step::<fatbin::Fatbin>(),
    step::<depfile::Depfile>(),
    step::<launcher::Launcher>(),
    step::<reproducible::Reproducible>(),
    step::<launcher::LauncherKey>(),
];

/// The steps, in order.
#[cfg(test)]
pub fn steps() -> &'static [StepEntry] {
    STEPS
}

/// The steps' names, in order (as `explain --format json` gives them).
#[cfg(test)]
pub fn step_names() -> impl Iterator<Item = &'static str> {
    STEPS.iter().map(|s| s.name)
}

/// Whether `steps` run in an order their declarations allow: every decision a step reads is written by an earlier
/// step and by no later one. The first violation, in words.
#[cfg(test)]
pub fn check_order(steps: &[StepEntry]) -> std::result::Result<(), String> {
    for (at, step) in steps.iter().enumerate() {
        for read in step.reads {
            let writers = |range: &[StepEntry]| {
                range.iter().filter(|s| s.writes.contains(read)).map(|s| s.name).collect::<Vec<_>>()
            };
            if writers(&steps[..at]).is_empty() {
                return Err(format!("{} reads {read:?}, which no step before it writes", step.name));
            }
            if let Some(later) = writers(&steps[at + 1..]).first() {
                return Err(format!("{} reads {read:?}, which {later} writes after it", step.name));
            }
        }
    }
    Ok(())
}

const fn step<S: Step>() -> StepEntry {
    StepEntry { name: S::NAME, run: run::<S>, reads: S::READS, writes: S::WRITES }
}

fn run<S: Step>(facts: &Facts, config: &Config, plan: &mut Plan) -> Result<()> {
    plan.enter(S::NAME);
    S::decide(facts, S::section(config, facts), plan)
}

/// What the planner says before any step decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    Query { option: String },
    NotUnderstood { why: String },
}

codes!(Note {
    Query => "query",
    NotUnderstood => "not-understood",
});

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::Query { option } => write!(f, "`{option}` only asks nvcc for information: nothing is added"),
            Note::NotUnderstood { why } => {
                write!(f, "the command line is not fully understood ({why}): nothing is added, nvcc will judge it")
            }
        }
    }
}

/// Everything a plan is decided from. Only `probes` can reach the OS, and only when a decision needs it.
pub struct Inputs<'a> {
    pub invocation: &'a Invocation,
    pub config: &'a Config,
    pub compat: &'a Compat,
    pub probes: &'a dyn Probes,
    pub nvcc: RealNvcc,
    /// The config file the settings came from, if any.
    pub config_file: Option<&'a Path>,
    pub depth: u32,
    /// Where options files the plan writes go (see `WrittenFile`).
    pub scratch: &'a Path,
    pub nvcc_process: &'a NvccProcess,
    pub jobserver: &'a JobSlots,
}

/// Decide what to run for this invocation.
pub fn plan(inputs: Inputs) -> Result<Plan> {
    let inv = inputs.invocation;
    let mut plan = Plan::pass_through(inputs.nvcc.clone(), inputs.depth);
    // A query or a command line the wrapper does not understand gets nothing, and needs no fact (no probe).
    if let Some(query) = inv.query_only() {
        plan.note(Note::Query { option: query.spelling.to_string() });
        return Ok(plan);
    }
    for unread in &inv.warnings {
        plan.warn(unread.clone());
    }
    if !inv.not_understood.is_empty() {
        plan.note(Note::NotUnderstood { why: inv.not_understood.join("; ") });
        return Ok(plan);
    }
    let facts = Facts::gather(&inputs, &mut plan)?;
    for step in STEPS {
        (step.run)(&facts, inputs.config, &mut plan)?;
    }
    plan.release = Some(facts.release);
    Ok(plan)
}

#[cfg(test)]
mod tests;
