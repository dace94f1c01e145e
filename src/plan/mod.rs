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

/// One decision of the plan.
pub trait Step {
    /// Its name, as the debug log and `explain --format json` give it.
    const NAME: &'static str;
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

/// The steps, in the order they decide: the host compiler first (cross and GPU flags go after its `-ccbin`), threads
/// after the GPU targets they count, the cuda-compat runpath before every runpath added so far, the
/// reproducible-builds flags after the depfile and threads steps (which decide whether nvcc keeps the wrapper's pid),
/// the launcher last (it hashes what the others added).
const STEPS: &[(&str, Run)] = &[
    step::<host_compiler::HostCompiler>(),
    step::<cross::Cross>(),
    step::<gpu::Gpu>(),
    step::<threads::Threads>(),
    step::<cuda_compat::CudaCompat>(),
    step::<fatbin::Fatbin>(),
    step::<depfile::Depfile>(),
    step::<reproducible::Reproducible>(),
    step::<launcher::Launcher>(),
];

/// The steps' names, in order (as `explain --format json` gives them).
#[cfg(test)]
pub fn step_names() -> impl Iterator<Item = &'static str> {
    STEPS.iter().map(|(name, _)| *name)
}

const fn step<S: Step>() -> (&'static str, Run) {
    (S::NAME, run::<S>)
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
    for (_, step) in STEPS {
        step(&facts, inputs.config, &mut plan)?;
    }
    plan.release = Some(facts.release);
    Ok(plan)
}

#[cfg(test)]
mod tests;
