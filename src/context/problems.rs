//! What reading the process state refuses, as data (`Refused`): a variable that should be a switch or a log filter and
//! is not. Each has a stable code (`Coded`), says itself once (`Display`, `help`) and becomes an `Error` of the
//! environment's kind (`From`).

use std::fmt::{self, Display};

use super::vars;
use crate::error::{codes, ErrorKind, Problem};

/// The room's errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// `name` is set to `value`, which is not a switch.
    NotASwitch { name: String, value: String },
    /// `NVCC_WRAPPER_LOG` is set to `value`, which is not a log filter.
    NotALogFilter { value: String },
}

codes!(Refused {
    NotASwitch => "not-a-switch",
    NotALogFilter => "not-a-log-filter",
});

impl Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::NotASwitch { name, value } => write!(f, "{name}={value} is not a switch"),
            Refused::NotALogFilter { value } => write!(f, "{}={value} is not a log filter", vars::LOG),
        }
    }
}

impl Problem for Refused {
    fn kind(&self) -> ErrorKind {
        ErrorKind::Environment
    }

    /// What to do about it.
    fn help(&self) -> Option<String> {
        Some(match self {
            Refused::NotASwitch { name, .. } => {
                format!("set {name}=1 to turn it on, {name}=0 to turn it off, or unset it")
            }
            Refused::NotALogFilter { .. } => format!("use a level such as {}=debug, or unset it", vars::LOG),
        })
    }
}
