//! What finding the real nvcc refuses, as data (`Refused`): no real nvcc, a loop counter that is not one, and the
//! loops that would run the wrapper again (a launcher that is the wrapper or runs it, a chain of wrappers too deep).
//! Each has a stable code (`Coded`), says itself once (`Display`, `help`) and becomes an `Error` of its kind (`Problem`).

use std::fmt::{self, Display};
use std::path::PathBuf;

use crate::config::Key;
use crate::context::vars;
use crate::error::codes;
use crate::error::{shell, ErrorKind, Problem};

/// The room's errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// No runnable `nvcc` on PATH but the wrapper (`skipped`: its copies there); `unusable`: `nvcc` files there that
    /// cannot be run.
    NoNvcc { skipped: Vec<PathBuf>, unusable: Vec<PathBuf> },
    /// `NVCC_WRAPPER_DEPTH` is not a whole number.
    BadDepth { raw: String },
    /// The wrapper started `depth` times in a chain, by a program the real nvcc (`real`) runs.
    TooDeepUnderNvcc { depth: u32, real: PathBuf },
    /// The wrapper started `depth` times in a chain of wrappers; `launcher`: the config's, named, when there is one.
    TooDeep { depth: u32, launcher: Option<String> },
    /// The launcher (`named`, set in `origin`) is this wrapper.
    LauncherIsWrapper { named: String, origin: String },
    /// The launcher (`named`, set in `origin`) runs this wrapper again instead of the real nvcc it is given.
    LauncherRunsWrapper { named: String, origin: String },
}

codes!(Refused {
    NoNvcc => "no-nvcc",
    BadDepth => "bad-depth",
    TooDeepUnderNvcc => "too-deep-under-nvcc",
    TooDeep => "too-deep",
    LauncherIsWrapper => "launcher-is-wrapper",
    LauncherRunsWrapper => "launcher-runs-wrapper",
});

/// What a launcher must do, as help lines say it.
const LAUNCHER_RUNS_ITS_COMMAND: &str = "a launcher must run the command it is given (`LAUNCHER /path/to/real/nvcc ARGS`; in a script, `exec \"$@\"`), as ccache and sccache do, never `nvcc` on PATH or the wrapper";

/// `nvcc-wrapper was started N times in a chain (NVCC_WRAPPER_DEPTH=N)`.
fn chain(f: &mut fmt::Formatter<'_>, depth: u32) -> fmt::Result {
    write!(f, "nvcc-wrapper was started {depth} times in a chain ({}={depth})", vars::DEPTH)
}

impl Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::NoNvcc { skipped, unusable } => {
                if skipped.is_empty() {
                    f.write_str("no real nvcc found: there is no runnable `nvcc` on PATH")?;
                } else {
                    let listed: Vec<String> = skipped.iter().map(|p| shell::path(p)).collect();
                    write!(
                        f,
                        "no real nvcc found: the only runnable `nvcc` on PATH is this wrapper or copies of it ({})",
                        listed.join(", ")
                    )?;
                }
                if !unusable.is_empty() {
                    let listed: Vec<String> = unusable.iter().map(|p| shell::path(p)).collect();
                    write!(f, ", and {} cannot be run (not an executable file)", listed.join(", "))?;
                }
                Ok(())
            }
            Refused::BadDepth { raw } => write!(f, "{}={raw} is not a whole number", vars::DEPTH),
            Refused::TooDeepUnderNvcc { depth, real } => {
                chain(f, *depth)?;
                let real = shell::path(real);
                write!(f, ": a program that the real nvcc {real} runs calls `nvcc` again, which is the wrapper")
            }
            Refused::TooDeep { depth, launcher } => {
                chain(f, *depth)?;
                f.write_str(": the nvcc it runs leads back to a wrapper")?;
                match launcher {
                    Some(named) => write!(f, ", or {named}, which it runs nvcc through, does"),
                    None => Ok(()),
                }
            }
            Refused::LauncherIsWrapper { named, .. } => {
                write!(f, "{named} is this wrapper itself, not a compiler cache: it would run the wrapper again")
            }
            Refused::LauncherRunsWrapper { named, .. } => write!(
                f,
                "{named} is not this wrapper but runs it again (as `nvcc-wrapper`, or as the `nvcc` on PATH) instead of the real nvcc it is given, and the wrapper would run the launcher again"
            ),
        }
    }
}

impl Problem for Refused {
    /// What to do about it.
    fn help(&self) -> Option<String> {
        Some(match self {
            Refused::NoNvcc { .. } => {
                "add the CUDA toolkit's bin directory to PATH, or set `nvcc` in the config file".to_string()
            }
            Refused::BadDepth { .. } => format!("{} is set by the wrapper itself; unset it", vars::DEPTH),
            Refused::TooDeepUnderNvcc { real, .. } => format!(
                "the host compiler (`-ccbin`, `NVCC_CCBIN`, or a compiler in the config) or a program run by `nvcc -run` must not call `nvcc`: give `-ccbin` the compiler itself, or have the script call {}",
                shell::path(real)
            ),
            Refused::TooDeep { launcher, .. } => {
                let launcher = launcher.as_ref().map_or_else(String::new, |_| format!("{LAUNCHER_RUNS_ITS_COMMAND}; "));
                format!("{launcher}point `nvcc` in the config file at the real nvcc, or put the real nvcc's directory on PATH before any copy of the wrapper")
            }
            Refused::LauncherIsWrapper { origin, .. } => {
                format!("set `{}` in {origin} to a compiler cache (ccache, sccache), or remove it", Key::Launcher)
            }
            Refused::LauncherRunsWrapper { origin, .. } => format!(
                "{LAUNCHER_RUNS_ITS_COMMAND}: make it do so, or set `{}` in {origin} to a compiler cache, or remove it",
                Key::Launcher
            ),
        })
    }

    fn kind(&self) -> ErrorKind {
        match self {
            Refused::NoNvcc { .. } => ErrorKind::NotFound,
            Refused::BadDepth { .. } => ErrorKind::Environment,
            _ => ErrorKind::Loop,
        }
    }
}
