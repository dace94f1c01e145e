//! What reading nvcc's options files refuses, as data (`Refused`): a file that cannot be read, and one that includes
//! itself. Each has a stable code (`Coded`), says itself once (`Display`, `help`) and becomes an `Error` of the options
//! file's kind (`Problem`).

use std::fmt::{self, Display};
use std::path::PathBuf;

use crate::error::{codes, shell, ErrorKind, Problem};

/// The room's errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// The options file at `path`, named by `named_by`, cannot be read (`why`).
    Unreadable { path: PathBuf, named_by: String, why: String },
    /// The options file at `path` includes itself, through `chain` (the files open, then it).
    IncludesItself { path: PathBuf, chain: Vec<PathBuf> },
}

codes!(Refused {
    Unreadable => "unreadable",
    IncludesItself => "includes-itself",
});

impl Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::Unreadable { path, why, .. } => write!(f, "cannot read options file {}: {why}", shell::path(path)),
            Refused::IncludesItself { path, chain } => {
                let chain: Vec<String> = chain.iter().map(|p| shell::path(p)).collect();
                write!(f, "options file {} includes itself: {}", shell::path(path), chain.join(" -> "))
            }
        }
    }
}

impl Problem for Refused {
    fn kind(&self) -> ErrorKind {
        ErrorKind::OptionsFile
    }

    /// What to do about it.
    fn help(&self) -> Option<String> {
        Some(match self {
            Refused::Unreadable { named_by, .. } => format!("it is named by {named_by}; create it or fix the name"),
            Refused::IncludesItself { .. } => "remove the -optf/--options-file line that closes the loop".to_string(),
        })
    }
}
