//! Deciding what to change: a pure function from the parsed command line, the configuration and what is known about
//! the toolchain to a `Plan` (`model`). Nothing here touches the OS except through `Probes`.
//!
//! `plan()` works out the facts once (`facts`: the release, the target, ...), then runs the steps (`decide_all`).
//! Every step has one contract (`Step`): it sees the facts, its own section of the config and the earlier decisions
//! it needs, handed to it as values; it writes the call's changes (`Changes`), with a typed reason for every one, and
//! returns its decision, which the runner keeps (`Decided`) for the steps that need it and for `exec`, `report` and
//! `doctor`. Steps never import each other (`layering` checks it); what two steps need is a fact or a decision, and
//! what a step asks of the command line is a query of `args`.
//!
//! A plan adds arguments before the user's (so the user's own flags still win, nvcc using the last value of a
//! repeated option) or after them, sets environment variables for nvcc, and gives a reason for every change. It
//! edits none of the user's tokens, except that a documented policy may remove some (`[gpu] arch-flags =
//! "replace"`, and `-dlto` when a device-LTO compile gets the capabilities as `code=lto_XY`): `edit` owns how, and
//! every removal carries its reason.

#[doc(hidden)]
pub mod bench;
pub mod cross;
pub mod cuda_compat;
pub mod depfile;
mod edit;
pub mod facts;
pub mod fatbin;
#[doc(hidden)]
pub mod fuzzing;
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

pub use facts::{Facts, NvccProcess, Release};
pub use model::{Changes, Decided, FoundBy, Plan, RealNvcc, WrittenFile};
pub use release::not_in_tables;

use crate::args::split::{first_unpassable, UNPASSABLE_HELP};
use crate::args::table::Spelled;
use crate::args::Invocation;
use crate::compat::Compat;
use crate::config::{Config, Sourced};
use crate::error::Result;
use crate::probe::system::Probes;

/// One decision of the plan.
pub trait Step {
    /// Its name, as the debug log and `explain --format json` give it.
    const NAME: &'static str;
    /// The part of the config it decides from.
    type Section;
    /// The decisions of earlier steps it decides from, as values (references, or a struct of them): the runner can
    /// hand them over only once those steps have returned them, so a step that runs too early does not compile.
    type Needs<'d>;
    /// What it decides, for later steps and for `exec`, `report` and `doctor` (`Decided`).
    type Decision;
    /// Its section of `config` (for some steps, which one depends on the facts: the target's for a cross build).
    fn section<'c>(config: &'c Config, facts: &Facts) -> &'c Self::Section;
    /// Add to the call's changes what this step decides, with its reasons, and return the decision; an error stops
    /// the call before nvcc runs.
    fn decide(
        facts: &Facts,
        section: &Self::Section,
        needs: Self::Needs<'_>,
        plan: &mut Changes,
    ) -> Result<Self::Decision>;
}

/// A configured path (`key`, as the reference names it) that a step puts inside an `-X` list reaching `to`: an error
/// naming the setting and the byte when nvcc would not pass it on unchanged (`args::split::first_unpassable`).
fn passable(key: crate::config::Key, setting: &Sourced<PathBuf>, to: &str) -> Result<()> {
    let Some(byte) = first_unpassable(setting.as_os_str().as_bytes()) else { return Ok(()) };
    Err(setting
        .error(key, format!("holds {byte}, which nvcc would not pass to {to} unchanged"))
        .with_help(UNPASSABLE_HELP))
}

/// The steps' names, in the order `decide_all` runs them (as `explain --format json` gives them; a test holds the
/// two to the same order).
#[cfg(test)]
pub const STEP_NAMES: [&str; 11] = [
    gpu::GpuTargets::NAME,
    host_compiler::HostCompiler::NAME,
    cross::Cross::NAME,
    gpu::Gpu::NAME,
    threads::Threads::NAME,
    cuda_compat::CudaCompat::NAME,
    fatbin::Fatbin::NAME,
    depfile::Depfile::NAME,
    launcher::Launcher::NAME,
    reproducible::Reproducible::NAME,
    launcher::LauncherKey::NAME,
];

/// Run one step: what it says is said by it.
fn decide<S: Step>(facts: &Facts, config: &Config, needs: S::Needs<'_>, plan: &mut Changes) -> Result<S::Decision> {
    plan.enter(S::NAME);
    S::decide(facts, S::section(config, facts), needs, plan)
}

/// Every step, in order. What a step decides from another's decision is handed to it as a value, so those orders
/// follow from the code. The GPU targets asked for come first, as they add nothing: a list the release cannot build
/// for the target is the reason to hear, before a compiler or a target's files are looked for. The rest is where
/// the steps' arguments go: the host compiler first (cross and GPU flags go
/// after its `-ccbin`), the cuda-compat runpath before every runpath added so far, and the launcher's cache key last:
/// it needs every decision (`Decided`), as it moves onto the command line what nvcc would read from elsewhere.
fn decide_all(facts: &Facts, config: &Config, plan: &mut Changes) -> Result<Decided> {
    let requested = decide::<gpu::GpuTargets>(facts, config, (), plan)?;
    let host = decide::<host_compiler::HostCompiler>(facts, config, (), plan)?;
    let cross = decide::<cross::Cross>(facts, config, (), plan)?;
    let gpu = decide::<gpu::Gpu>(facts, config, requested.as_ref(), plan)?;
    let threads = decide::<threads::Threads>(facts, config, gpu.as_ref(), plan)?;
    decide::<cuda_compat::CudaCompat>(facts, config, (), plan)?;
    decide::<fatbin::Fatbin>(facts, config, (), plan)?;
    let depfile = decide::<depfile::Depfile>(facts, config, host.as_ref(), plan)?;
    let launcher = decide::<launcher::Launcher>(facts, config, (), plan)?;
    let needs = reproducible::Needs {
        host: host.as_ref(),
        depfile: depfile.is_some(),
        threads: threads.is_some(),
        launcher: launcher.as_deref(),
    };
    let intermediates_beside_output = decide::<reproducible::Reproducible>(facts, config, needs, plan)?;
    let decided = Decided {
        release: Some(facts.release.clone()),
        host,
        cross,
        gpu,
        threads,
        depfile,
        launcher,
        intermediates_beside_output,
    };
    decide::<launcher::LauncherKey>(facts, config, &decided, plan)?;
    Ok(decided)
}

/// What the planner says before any step decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    Query {
        option: Spelled,
    },
    /// `why`: the parser's own words for what it could not read.
    NotUnderstood {
        why: String,
    },
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
    /// Where options files the plan writes go (see `WrittenFile`), asked only when one is written: finding it looks at
    /// directories, which a call that writes none should not pay for.
    pub scratch: &'a dyn Fn() -> PathBuf,
    pub nvcc_process: &'a NvccProcess,
    pub jobserver: &'a crate::context::Jobserver,
    /// The `NVCC_WRAPPER_*` variables no one reads: each a warning.
    pub unknown_variables: &'a [crate::config::env::UnknownVariable],
}

/// Decide what to run for this invocation.
pub fn plan(inputs: Inputs) -> Result<Plan> {
    let inv = inputs.invocation;
    let mut plan = Plan::pass_through(inputs.nvcc.clone(), inputs.depth);
    let changes = &mut plan.changes;
    // A query or a command line the wrapper does not understand gets nothing, and needs no fact (no probe).
    if let Some(query) = inv.query_only() {
        changes.note(Note::Query { option: query.spelling });
        return Ok(plan);
    }
    for unknown in inputs.unknown_variables {
        changes.warn(unknown.clone());
    }
    for unread in &inv.warnings {
        changes.warn(unread.clone());
    }
    if !inv.not_understood.is_empty() {
        changes.note(Note::NotUnderstood { why: inv.not_understood.join("; ") });
        return Ok(plan);
    }
    let facts = Facts::gather(&inputs, changes)?;
    plan.decided = decide_all(&facts, inputs.config, changes)?;
    Ok(plan)
}

#[cfg(test)]
mod tests;
