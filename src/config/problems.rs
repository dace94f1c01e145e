//! What loading the configuration refuses, as data (`Refused`): a config file that cannot be read or is not valid, and
//! an environment variable that overrides a setting with a value it cannot take. Each has a stable code (`Coded`),
//! says itself once (`Display`, `help`) and is an `Error` of its kind (`Problem`). An error about one setting's
//! value (`Setting`) is built by `Sourced::error` from its typed key and its sourced value.

use std::fmt::{self, Display};
use std::path::PathBuf;

use super::places::Place;
use super::Key;
use crate::context::vars;
use crate::error::{codes, shell, ErrorKind, Problem};

/// The room's errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// The config file found at `place` cannot be read (`why`).
    Unreadable { path: PathBuf, place: Place, why: String },
    /// The config file is not valid TOML for the wrapper: `described` at `position` (`:LINE:COLUMN`, where known),
    /// and what would fix it.
    Invalid { path: PathBuf, position: String, described: String, help: String },
    /// `var`, set to `shown`, overrides `key` with a value it cannot take (`why`; `expects` says what it can).
    Override { var: &'static str, shown: String, why: String, expects: &'static str, key: Key },
    /// A setting's value that does not do (`what`), named as every such error names it (`named`: `` `KEY` (VALUE,
    /// from ORIGIN) ``, `Sourced::named`), of the kind its origin or the failure picks. The help is the caller's,
    /// which knows what the value was for.
    Setting { named: String, what: String, kind: ErrorKind },
}

codes!(Refused {
    Unreadable => "unreadable",
    Invalid => "invalid",
    Override => "override",
    Setting => "setting",
});

impl Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::Unreadable { path, why, .. } => write!(f, "cannot read config file {}: {why}", shell::path(path)),
            Refused::Invalid { path, position, described, .. } => {
                write!(f, "invalid config file {}{position}: {described}", shell::path(path))
            }
            Refused::Override { var, shown, why, .. } => write!(f, "{var}={shown}: {why}"),
            Refused::Setting { named, what, .. } => write!(f, "{named} {what}"),
        }
    }
}

impl Problem for Refused {
    fn kind(&self) -> ErrorKind {
        match self {
            Refused::Override { .. } => ErrorKind::Environment,
            Refused::Setting { kind, .. } => *kind,
            Refused::Unreadable { .. } | Refused::Invalid { .. } => ErrorKind::Config,
        }
    }

    /// What to do about it, where the room can say.
    fn help(&self) -> Option<String> {
        Some(match self {
            Refused::Unreadable { place: Place::Named, .. } => {
                format!("fix the file, or unset ${} to run without it", vars::CONFIG)
            }
            Refused::Unreadable { place, .. } => format!(
                "it is {place} configuration file: fix it, or remove it to run without it (`nvcc-wrapper doctor` lists the places read)"
            ),
            Refused::Invalid { help, .. } => help.clone(),
            Refused::Override { var, expects, key, .. } => {
                format!("give {expects}, or unset {var} to use the config's `{key}`")
            }
            Refused::Setting { .. } => return None,
        })
    }
}
