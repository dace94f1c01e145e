//! Fatbin compression: adding the flags that make this NVCC release write its smallest fatbins
//! (compat-data/fatbin.toml, chosen by measurement in docs/benchmarks.md), unless `[gpu] compress-fatbin = false`.
//!
//! Added only where nvcc writes a fatbin: compiling (`-c`, `-dc`, `-dw`, `-lib`, compile and link, `-run`),
//! `-fatbin`, and device links (`-dlink`, and the one a link of relocatable objects runs). Not for `-E`/`-M`/`-MM`
//! (preprocessing), nor for `-ptx`, `-cubin`, `-cuda`, `-ltoir` and `-optix-ir`, which write one image and no fatbin.
//! A link of plain objects runs no fatbinary: the flags are added and do nothing there, as nvcc 11.8 to 13.5 accept
//! them without a word. Never when the user chose any compression setting in any channel (`--no-compress`,
//! `--compress-mode`, `--concat`, or a `-compress...` option in `-Xfatbin`): that choice is theirs, and 13.x warns
//! about a `--compress-mode` given twice.

use crate::plan::model::codes;
use std::fmt;

use super::facts::{ArgEdge, Facts};
use super::model::Changes;
use super::Step;
use crate::args::table::Spelled;
use crate::args::Given;
use crate::compat::Version;
use crate::config::{Config, Origin, Sourced};
use crate::error::Result;

pub struct Fatbin;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    TurnedOff { origin: Origin },
    NoFatbinWritten { phase: Spelled },
    UserChose { given: Given },
    NotInTable { release: Version },
    ArgEdge { edge: ArgEdge },
}

codes!(Note {
    TurnedOff => "turned-off",
    NoFatbinWritten => "no-fatbin-written",
    UserChose => "user-chose",
    NotInTable => "not-in-table",
    ArgEdge => "arg-edge",
});

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    Smallest { release: Version },
}

codes!(Reason {
    Smallest => "smallest",
});

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::TurnedOff { origin } => write!(
                f,
                "`[gpu] compress-fatbin` is false (in {origin}): fatbins are compressed as nvcc does by default"
            ),
            Note::NoFatbinWritten { phase } => write!(f, "`{phase}` writes no fatbin: no compression flags are added"),
            Note::UserChose { given } => write!(f, "{given} chooses the fatbin compression: nothing is added"),
            Note::NotInTable { release } => write!(
                f,
                "nvcc {release} is not in the fatbin table (compat-data/fatbin.toml): no compression flags are added"
            ),
            Note::ArgEdge { edge } => {
                write!(f, "no compression flags are added: {edge}, and nothing optional is added so near the limit")
            }
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Smallest { release } => write!(
                f,
                "`[gpu] compress-fatbin` (on unless set to false): the smallest fatbins nvcc {release} writes (compat-data/fatbin.toml)"
            ),
        }
    }
}

impl Step for Fatbin {
    const NAME: &'static str = "fatbin";
    /// `[gpu] compress-fatbin`: unset is on.
    type Section = Option<Sourced<bool>>;
    type Needs<'d> = ();
    type Decision = ();

    fn section<'c>(config: &'c Config, _: &Facts) -> &'c Self::Section {
        &config.gpu.compress_fatbin
    }

    /// Add this release's compression flags, or say in a note why not.
    fn decide(facts: &Facts, setting: &Self::Section, _: (), plan: &mut Changes) -> Result<()> {
        if let Some(Sourced { value: false, origin }) = setting {
            plan.note(Note::TurnedOff { origin: origin.clone() });
            return Ok(());
        }
        let inv = facts.invocation;
        if let Some(phase) = inv.writes_no_fatbin() {
            plan.note(Note::NoFatbinWritten { phase: phase.spelling });
            return Ok(());
        }
        if let Some(given) = inv.fatbin_compression() {
            plan.note(Note::UserChose { given: inv.given(&[given]) });
            return Ok(());
        }
        // An unknown release is said once, by the facts.
        let Some(release) = facts.release.version() else { return Ok(()) };
        let Some(row) = facts.compat.fatbin.compression(release) else {
            plan.note(Note::NotInTable { release: release.release() });
            return Ok(());
        };
        if let Some(edge) = facts.arg_edge {
            plan.note(Note::ArgEdge { edge });
            return Ok(());
        }
        let flags = row.flags.iter().map(|f| f.as_ref().into()).collect();
        plan.add_before(flags, Reason::Smallest { release: release.release() });
        Ok(())
    }
}
