//! What the build system must see: when a call writes a dependency file (`-MD`, `-MMD`, or `-M`/`-MM` with `-MF`),
//! the files the wrapper's decision rests on are added to it, so that Make and Ninja rebuild an object when its
//! decision may change: the config file and any `compat-data` override read, the real nvcc's release file (its
//! toolkit's `version.json`, else nvcc itself) when the release was learned from it, and the host compiler the
//! wrapper chose. nvcc writes the file; the wrapper adds these after nvcc ends, which needs it to wait for nvcc
//! instead of replacing itself with it (`exec::run_to_end`). The user's own dependency options are never changed.

pub mod syntax;

use crate::plan::model::codes;
use std::fmt;
use std::path::PathBuf;

use super::facts::Facts;
use super::model::{Changes, DepfileInputs, HostDecision};
use super::Step;
use crate::args::{Depfiles, Given, Role};
use crate::config::{Config, Origin, Sourced};
use crate::error::Result;
use syntax::{escape, Unwritable};

pub struct Depfile;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    TurnedOff {
        origin: Origin,
    },
    ToStdout,
    /// `--dryrun`: nvcc writes nothing, and neither does the wrapper.
    DryRun {
        option: Given,
    },
    /// An input whose path a dependency file cannot hold so that both Make and Ninja read it back.
    Unwritable {
        path: PathBuf,
        why: Unwritable,
    },
}

codes!(Note {
    TurnedOff => "turned-off",
    ToStdout => "to-stdout",
    DryRun => "dry-run",
    Unwritable => "unwritable",
});

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    Inputs { depfiles: Vec<PathBuf> },
}

codes!(Reason {
    Inputs => "inputs",
});

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::TurnedOff { origin } => write!(
                f,
                "`depfile-inputs` is false (in {origin}): the dependency file lists only what nvcc puts in it"
            ),
            Note::ToStdout => f.write_str(
                "the dependencies go to standard output (`-M`/`-MM` without `-MF`): the wrapper's inputs are not added",
            ),
            Note::DryRun { option } => write!(
                f,
                "{option} runs nothing and writes no dependency file: the wrapper adds nothing to one (a stale file stays as it is)"
            ),
            Note::Unwritable { path, why } => write!(
                f,
                "{} is not added to the dependency file: its path holds {why}, so a change of it will not rebuild this object",
                crate::error::shell::path(path)
            ),
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Inputs { depfiles } => {
                let files: Vec<String> = depfiles.iter().map(|d| crate::error::shell::path(d)).collect();
                write!(
                    f,
                    "`depfile-inputs` (on unless set to false): added to {} after nvcc ends, so that the build rebuilds when what the wrapper decided from changes",
                    files.join(", ")
                )
            }
        }
    }
}

impl Step for Depfile {
    const NAME: &'static str = "depfile";
    /// `depfile-inputs`: unset is on.
    type Section = Option<Sourced<bool>>;
    /// The host compiler the wrapper chose, if it chose one.
    type Needs<'d> = Option<&'d HostDecision>;
    /// What to add to the dependency files, when there is anything.
    type Decision = Option<DepfileInputs>;

    fn section<'c>(config: &'c Config, _: &Facts) -> &'c Self::Section {
        &config.depfile_inputs
    }

    /// From the host compiler chosen, one of the inputs.
    fn decide(
        facts: &Facts,
        setting: &Self::Section,
        host: Option<&HostDecision>,
        plan: &mut Changes,
    ) -> Result<Option<DepfileInputs>> {
        let depfiles = match facts.invocation.depfiles() {
            Depfiles::None => return Ok(None),
            Depfiles::Stdout => {
                plan.note(Note::ToStdout);
                return Ok(None);
            }
            Depfiles::Files(files) => files,
        };
        if let Some(dry) = facts.invocation.with_role(Role::DryRun).next() {
            plan.note(Note::DryRun { option: facts.invocation.given(&[dry]) });
            return Ok(None);
        }
        if let Some(Sourced { value: false, origin }) = setting {
            plan.note(Note::TurnedOff { origin: origin.clone() });
            return Ok(None);
        }
        let mut inputs: Vec<PathBuf> = facts.settings_files.clone();
        if facts.release.version().is_some() && !facts.release.stated_by_config() {
            inputs.push(release_file(facts));
        }
        // The wrapper's own choice only: a compiler the user gave is the user's to track.
        let chosen = host.filter(|_| facts.invocation.host_compiler().is_none());
        inputs.extend(chosen.map(|h| h.compiler.clone()));
        inputs.dedup();
        inputs.retain(|path| match escape(path) {
            Ok(_) => true,
            Err(why) => {
                plan.note(Note::Unwritable { path: path.clone(), why });
                false
            }
        });
        if inputs.is_empty() {
            return Ok(None);
        }
        let phony = facts.invocation.has_option("generate-dependency-targets");
        let why = plan.said(Reason::Inputs { depfiles: depfiles.clone() });
        Ok(Some(DepfileInputs { depfiles, inputs, phony, why }))
    }
}

/// The file a change of release changes: the toolkit's `version.json`, else the real nvcc.
fn release_file(facts: &Facts) -> PathBuf {
    let json = facts.probes.toolkit_root(facts.nvcc).ok().map(|root| root.join("version.json"));
    json.filter(|j| facts.probes.exists(j)).unwrap_or_else(|| facts.nvcc.to_path_buf())
}
