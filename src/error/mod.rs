//! The ground every room stands on: the wrapper's one error type, its exit codes and how it is shown; how a name is
//! quoted in what the wrapper says (`shell`); and the one safe read of a file the wrapper did not write (`bounded`).
//!
//! Every failure the wrapper itself detects becomes an `Error` with a kind (which fixes the exit code), a message that
//! names the file, line, value or flag at fault, and a `help:` line that says what to do. Exit codes are part of the
//! interface: docs/reference/exit-codes.md, made from src/checks/reference/, lists the same numbers, and a test
//! checks each one.

pub mod bounded;
pub mod output;
pub mod shell;

use std::fmt;

/// The enum and its list of every kind, written once: a kind cannot be added without being in `ALL`, which the
/// tests and the exit-code page walk.
macro_rules! error_kinds {
    ($($(#[$doc:meta])* $kind:ident,)*) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum ErrorKind {
            $($(#[$doc])* $kind,)*
        }

        impl ErrorKind {
            /// Every kind, in declaration order.
            pub const ALL: &'static [ErrorKind] = &[$(ErrorKind::$kind,)*];
        }
    };
}

error_kinds! {
    /// A check the user asked for (`compat scan`, `doctor`) found a problem.
    CheckFailed,
    /// The wrapper's own command line (`nvcc-wrapper ...`) is wrong.
    Usage,
    /// An `NVCC_WRAPPER_*` environment variable has a value the wrapper cannot use.
    Environment,
    /// The request cannot be built by this nvcc (capability, target platform).
    Request,
    /// An nvcc options file (`-optf`, `--options-file`) is missing, unreadable or includes itself.
    OptionsFile,
    /// No host compiler that this nvcc accepts could be found.
    HostCompiler,
    /// The compiler cache the config names (`launcher`) could not be found.
    Launcher,
    /// Something inside the wrapper went wrong; a bug.
    Internal,
    /// The configuration file is missing, unreadable or invalid.
    Config,
    /// The wrapper would end up running itself.
    Loop,
    /// The real nvcc was found but could not be started.
    CannotExec,
    /// What the wrapper itself prints could not be written (a full disk).
    Output,
    /// The reader of the wrapper's output went away (`| head`): not a failure, and nothing is said.
    ClosedOutput,
    /// No real nvcc was found, or no program `nvcc-wrapper jobserver` was asked to run: 127, as a shell's for a
    /// command it cannot find.
    NotFound,
}

impl ErrorKind {
    pub const fn exit_code(self) -> i32 {
        match self {
            ErrorKind::ClosedOutput => 0,
            ErrorKind::Usage => 2,
            ErrorKind::CheckFailed => 3,
            ErrorKind::Environment => 64,
            ErrorKind::Request => 65,
            ErrorKind::OptionsFile => 66,
            ErrorKind::HostCompiler => 69,
            ErrorKind::Internal => 70,
            ErrorKind::Launcher => 72,
            ErrorKind::Output => 74,
            ErrorKind::Config => 78,
            ErrorKind::Loop => 125,
            ErrorKind::CannotExec => 126,
            ErrorKind::NotFound => 127,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
    pub help: Option<String>,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A message's or a refusal's stable name, `explain --format json`'s `code`: its variant's, in kebab case
/// (`StdenvAccepted` is `stdenv-accepted`), declared beside the enum with `codes!` so that a renamed variant keeps its
/// code and a new one does not compile without one. On the ground floor, so that every room's problems have one.
pub trait Coded {
    fn code(&self) -> &'static str;
}

/// `codes!(Note { StdenvAccepted => "stdenv-accepted", ... });`: `Coded` for an enum, one code per variant (the
/// match is exhaustive).
macro_rules! codes {
    ($ty:ident { $($variant:ident => $code:literal,)* }) => {
        impl $crate::error::Coded for $ty {
            fn code(&self) -> &'static str {
                match self {
                    $($ty::$variant { .. } => $code,)*
                }
            }
        }
    };
}
pub(crate) use codes;

/// A room's problem, as data: its stable code (`Coded`), its words (`Display`), the kind of error it is (its exit
/// code), and what to do about it. Every problem becomes an `Error` the same way (`From`), and nothing else builds one
/// from a message (`checks::layering::errors_are_built_only_from_problem_types`).
pub trait Problem: Coded + fmt::Display {
    /// The kind, which gives the exit code.
    fn kind(&self) -> ErrorKind;
    /// The `help:` line, where the room can say what to do.
    fn help(&self) -> Option<String>;
}

impl<P: Problem> From<P> for Error {
    fn from(problem: P) -> Error {
        Error { kind: problem.kind(), message: problem.to_string(), help: problem.help() }
    }
}

impl Error {
    pub fn with_help(mut self, help: impl Into<String>) -> Error {
        self.help = Some(help.into());
        self
    }

    pub fn exit_code(&self) -> i32 {
        self.kind.exit_code()
    }
}

impl fmt::Display for Error {
    /// `nvcc-wrapper: error: <message>` and, when there is one, `help: <what to do>` on the next line; nothing for
    /// a closed output, which is not an error to report.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.kind == ErrorKind::ClosedOutput {
            return Ok(());
        }
        write!(f, "nvcc-wrapper: error: {}", self.message)?;
        if let Some(help) = &self.help {
            write!(f, "\nhelp: {help}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_are_distinct_and_avoid_nvccs_own() {
        let mut codes: Vec<i32> = ErrorKind::ALL.iter().map(|k| k.exit_code()).collect();
        codes.sort();
        codes.dedup();
        assert_eq!(codes.len(), ErrorKind::ALL.len(), "two kinds share an exit code");
        // 1 is nvcc's own failure code: the wrapper never uses it, so a caller can tell the two apart. 0 is only for
        // a reader that went away, which is not a failure.
        assert!(!codes.contains(&1));
        assert!(ErrorKind::ALL.iter().all(|k| (k.exit_code() == 0) == (*k == ErrorKind::ClosedOutput)));
    }

    /// The exit-code page of the reference lists every code the wrapper uses, and no other (it is made from the code:
    /// src/checks/reference/).
    #[test]
    fn every_exit_code_is_documented() {
        let doc =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/reference/exit-codes.md")).unwrap();
        let table = &doc[doc.find("# Exit codes").expect("the exit-code page")..];
        let documented: std::collections::BTreeSet<i32> = table
            .lines()
            .skip_while(|l| !l.starts_with("| code |"))
            .skip(2)
            .take_while(|l| l.starts_with('|'))
            .map(|l| l.trim_matches('|').split('|').next().unwrap().trim().parse().unwrap())
            .collect();
        let used: std::collections::BTreeSet<i32> =
            ErrorKind::ALL.iter().map(|k| k.exit_code()).filter(|&c| c != 0).collect();
        assert_eq!(documented, used, "docs/reference/exit-codes.md and ErrorKind::ALL differ");
    }

    #[test]
    fn shows_prefix_and_help_line() {
        let e =
            Error { kind: ErrorKind::Config, message: "bad key `x` in /a.toml".into(), help: Some("remove it".into()) };
        assert_eq!(e.to_string(), "nvcc-wrapper: error: bad key `x` in /a.toml\nhelp: remove it");
    }
}
