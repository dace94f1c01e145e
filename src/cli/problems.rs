//! What the wrapper's own command line refuses, as data (`Refused`): a command line clap rejects, `compat` without a
//! subcommand, and doctor's finding problems. Each has a stable code (`Coded`), says itself once (`Display`, `help`)
//! and is an `Error` of its kind (`Problem`). The subcommands with refusals of their own keep them beside their run
//! (`check.rs`, `gencode.rs`).

use std::fmt::{self, Display};

use crate::error::{codes, ErrorKind, Problem};

/// The room's errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// clap's report of a bad command line: its first line with its indented details joined (`message`), the usage
    /// it printed (`usage`), and the command whose `--help` says more (`command`: `nvcc-wrapper gencode`).
    Usage { message: String, usage: Option<String>, command: String },
    /// `nvcc-wrapper compat` with no subcommand.
    CompatAlone,
    /// `nvcc-wrapper doctor` found `count` problems, each on a `problem:` line of its report.
    DoctorFound { count: usize },
}

codes!(Refused {
    Usage => "usage",
    CompatAlone => "compat-alone",
    DoctorFound => "doctor-found",
});

impl Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::Usage { message, .. } => f.write_str(message),
            Refused::CompatAlone => {
                f.write_str("nvcc-wrapper compat requires a subcommand: scan, show, dump or nix-answers")
            }
            Refused::DoctorFound { count } => write!(f, "doctor found {count} problem(s)"),
        }
    }
}

impl Problem for Refused {
    fn kind(&self) -> ErrorKind {
        match self {
            Refused::DoctorFound { .. } => ErrorKind::CheckFailed,
            Refused::Usage { .. } | Refused::CompatAlone => ErrorKind::Usage,
        }
    }

    /// What to do about it.
    fn help(&self) -> Option<String> {
        Some(match self {
            Refused::Usage { usage: Some(usage), command, .. } => {
                format!("usage: {usage}; `{command} --help` says more")
            }
            Refused::Usage { usage: None, command, .. } => format!("`{command} --help` says more"),
            Refused::CompatAlone => "`nvcc-wrapper compat --help` says what each does".to_string(),
            Refused::DoctorFound { .. } => "each `problem:` line above says what is wrong".to_string(),
        })
    }
}
