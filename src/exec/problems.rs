//! What the exec room cannot do, as data (`Refused`): a program it cannot start, a file it cannot write, a jobserver
//! it cannot set up or would serve in vain. Each has a stable code (`Coded`), says itself once (`Display`, `help`) and
//! becomes an `Error` of its kind (`Problem`).

use std::ffi::OsString;
use std::fmt::{self, Display};
use std::io;
use std::path::{Path, PathBuf};

use crate::config::Key;
use crate::error::codes;
use crate::error::{shell, ErrorKind, Problem};

/// What could not be started.
#[derive(Debug)]
pub enum Program {
    /// The real nvcc; `origin`: the config place that set it (`None`: found on PATH).
    Nvcc { origin: Option<String> },
    /// The config's `launcher`.
    Launcher,
    /// The build tool of `nvcc-wrapper jobserver -- TOOL`.
    BuildTool,
}

/// The room's errors.
#[derive(Debug)]
pub enum Refused {
    /// `program`, at `path`, could not be started.
    CannotRun { program: Program, path: PathBuf, err: io::Error },
    /// The real nvcc's arguments and environment, as given, are longer than the kernel takes.
    TooLong { path: PathBuf, err: io::Error },
    /// The wrapper's additions make the command longer than the kernel takes: it runs as given instead.
    AdditionsTooLong { err: io::Error },
    /// A rewritten options file cannot be written.
    OptionsFile { path: PathBuf, err: io::Error },
    /// `nvcc-wrapper jobserver` cannot make its FIFO in `base`: `what` failed.
    JobserverSetUp { what: String, base: PathBuf, err: io::Error },
    /// `nvcc-wrapper jobserver` without a command.
    NoCommand,
    /// The build tool is not found, by its path (`a_path`) or on PATH.
    NoBuildTool { given: OsString, a_path: bool },
    /// `-j jobs`, more free slots than the FIFO holds (`most`).
    TooManySlots { jobs: u32, most: usize },
    /// Ninja (at `path`) given a `-j` of its own.
    NinjaJobs { path: PathBuf, jobs: String },
    /// A Ninja (at `path`) before 1.13, which ignores a jobserver.
    OldNinja { path: PathBuf, version: (u32, u32) },
}

codes!(Refused {
    CannotRun => "cannot-run",
    TooLong => "too-long",
    AdditionsTooLong => "additions-too-long",
    OptionsFile => "options-file",
    JobserverSetUp => "jobserver-set-up",
    NoCommand => "no-command",
    NoBuildTool => "no-build-tool",
    TooManySlots => "too-many-slots",
    NinjaJobs => "ninja-jobs",
    OldNinja => "old-ninja",
});

/// What avoids rewriting options files altogether.
const ARCH_FLAGS_INSTEAD: &str = "set `[gpu] arch-flags` to \"respect\" or \"append\"";

impl Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::CannotRun { program, path, err } => {
                let path = shell::path(path);
                match program {
                    Program::Nvcc { origin: Some(origin) } => {
                        write!(f, "cannot run the real nvcc {path} (`{}` in {origin}): {err}", Key::Nvcc)
                    }
                    Program::Nvcc { origin: None } => write!(f, "cannot run the real nvcc {path}: {err}"),
                    Program::Launcher => write!(f, "cannot run the launcher {path}: {err}"),
                    Program::BuildTool => write!(f, "cannot run {path}: {err}"),
                }
            }
            Refused::TooLong { path, err } => write!(
                f,
                "cannot run the real nvcc {}: its arguments and environment are longer than the kernel takes ({err})",
                shell::path(path)
            ),
            Refused::AdditionsTooLong { err } => {
                write!(f, "with the wrapper's additions the command is longer than the kernel takes ({err})")
            }
            Refused::OptionsFile { path, err } => {
                write!(f, "cannot write the rewritten options file {}: {err}", shell::path(path))
            }
            Refused::JobserverSetUp { what, err, .. } => write!(f, "cannot set up the jobserver: {what}: {err}"),
            Refused::NoCommand => f.write_str("`nvcc-wrapper jobserver` needs a command to run"),
            Refused::NoBuildTool { given, a_path } => {
                let shown = shell::display([given.as_os_str()]);
                match a_path {
                    true => write!(f, "no program {shown}: there is no executable file at that path"),
                    false => write!(f, "no program {shown} on PATH"),
                }
            }
            Refused::TooManySlots { jobs, most } => {
                write!(f, "`-j {jobs}`: the jobserver's FIFO holds at most {most} free slots on this machine")
            }
            Refused::NinjaJobs { path, jobs } => write!(
                f,
                "{} is given `{jobs}`, and Ninja with a `-j` of its own ignores the jobserver",
                shell::path(path)
            ),
            Refused::OldNinja { path, version: (major, minor) } => write!(
                f,
                "{} is Ninja {major}.{minor}, which ignores a jobserver (Ninja 1.13 and later take part in one): it would run its own count of jobs besides the threads nvcc's calls take",
                shell::path(path)
            ),
        }
    }
}

impl Problem for Refused {
    /// What to do about it, where the wrapper can say.
    fn help(&self) -> Option<String> {
        let executable = "check that it is an executable for this machine";
        Some(match self {
            Refused::CannotRun { program: Program::Nvcc { origin: Some(origin) }, .. } => {
                format!("{executable}, or point `{}` in {origin} at one", Key::Nvcc)
            }
            Refused::CannotRun { program: Program::Nvcc { origin: None }, .. } => {
                format!("{executable}, or set `{}` in the config file", Key::Nvcc)
            }
            Refused::CannotRun { program: Program::Launcher, .. } => {
                format!("{executable}, or remove `{}` from the config", Key::Launcher)
            }
            Refused::CannotRun { program: Program::BuildTool, .. } => executable.to_string(),
            Refused::TooLong { .. } => {
                "put arguments in an options file (`-optf FILE`, which nvcc reads itself), or shorten the environment"
                    .to_string()
            }
            Refused::AdditionsTooLong { .. } => return None,
            Refused::OptionsFile { path, err } => {
                let dir = path.parent().unwrap_or(Path::new("."));
                crate::context::dirs::write_help(err, dir, "$XDG_CACHE_HOME", Some(ARCH_FLAGS_INSTEAD))
            }
            Refused::JobserverSetUp { base, err, .. } => {
                let instead = "run the build without `nvcc-wrapper jobserver`";
                crate::context::dirs::write_help(err, base, "$TMPDIR", Some(instead))
            }
            Refused::NoCommand => "usage: nvcc-wrapper jobserver -j 16 -- ninja -C build".to_string(),
            Refused::NoBuildTool { .. } => "give the build tool's name on PATH, or its path".to_string(),
            Refused::TooManySlots { most, .. } => format!("give `-j {}` or fewer", most.saturating_add(1)),
            Refused::NinjaJobs { .. } => {
                "leave `-j` out of Ninja's arguments: the jobserver's `-j N` sets how many jobs run at once".to_string()
            }
            Refused::OldNinja { .. } => "put Ninja 1.13 or later first on PATH (`pip install ninja`), or run it without `nvcc-wrapper jobserver`, as `ninja -j N`".to_string(),
        })
    }

    fn kind(&self) -> ErrorKind {
        match self {
            Refused::CannotRun { .. } | Refused::TooLong { .. } => ErrorKind::CannotExec,
            Refused::AdditionsTooLong { .. } | Refused::OptionsFile { .. } | Refused::JobserverSetUp { .. } => {
                ErrorKind::Output
            }
            Refused::NoBuildTool { .. } => ErrorKind::NotFound,
            Refused::NoCommand
            | Refused::TooManySlots { .. }
            | Refused::NinjaJobs { .. }
            | Refused::OldNinja { .. } => ErrorKind::Usage,
        }
    }
}
