//! Probing: what the wrapper learns by asking host compilers and nvcc (`--version`, `-dumpmachine`, ...) and by
//! reading a toolkit's files. For hand use and `doctor`; the Nix package writes these facts into the config instead.
//!
//! Each submodule keeps its parsers pure (`&str` or bytes in, typed value out) and tested on outputs captured from
//! real tools (`tests/fixtures/probe/`). The few functions that run a program or read a file are thin shells around
//! them. This module must not decide anything (which compiler is acceptable is `plan`'s business), read the
//! environment, or print (the probe cache's debug log lines aside: they say why an answer was or was not reused).

pub mod cache;
pub mod compiler;
pub mod glibcxx;
pub mod launcher;
pub mod nvcc;
pub mod system;
pub mod toolkit;

use std::fmt;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// A probe that failed: the program it ran (or the file it read), the arguments, and what went wrong.
#[derive(Debug)]
pub struct ProbeError {
    /// The program run or the file read. Empty while a pure parser's error has not yet been given its program.
    pub program: PathBuf,
    /// The arguments given to `program`; empty when a file was read.
    pub args: Vec<String>,
    pub kind: ProbeErrorKind,
}

#[derive(Debug)]
pub enum ProbeErrorKind {
    /// The program could not be started, or the file could not be read or resolved.
    Io(io::Error),
    /// The program ran and failed. `first_line` is the first line it printed (stderr first).
    Failed { status: ExitStatus, first_line: String },
    /// The output did not say what we looked for.
    Unexpected { expected: &'static str, found: String },
    /// The program did not finish in time and was killed.
    TimedOut(Duration),
}

impl ProbeError {
    fn new(program: &Path, args: &[&str], kind: ProbeErrorKind) -> Self {
        ProbeError { program: program.to_path_buf(), args: args.iter().map(|a| a.to_string()).collect(), kind }
    }

    /// An error from a pure parser: it knows which arguments produced `output` but not which program printed it.
    fn unexpected(args: &[&str], expected: &'static str, output: &str) -> Self {
        let found = first_line(output).to_string();
        ProbeError::new(Path::new(""), args, ProbeErrorKind::Unexpected { expected, found })
    }

    fn io(path: &Path, err: io::Error) -> Self {
        ProbeError::new(path, &[], ProbeErrorKind::Io(err))
    }

    /// Names the program whose output a pure parser rejected.
    fn with_program(mut self, program: &Path) -> Self {
        self.program = program.to_path_buf();
        self
    }

    /// The command as a user could paste it into a shell, or the file's path.
    pub fn command(&self) -> String {
        let program = Some(self.program.as_os_str()).filter(|p| !p.is_empty());
        crate::shell::display(program.into_iter().chain(self.args.iter().map(|a| std::ffi::OsStr::new(a.as_str()))))
    }
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let command = self.command();
        match &self.kind {
            ProbeErrorKind::Io(err) if self.args.is_empty() => write!(f, "{command}: {err}"),
            ProbeErrorKind::Io(err) => write!(f, "could not run `{command}`: {err}"),
            ProbeErrorKind::Failed { status, first_line } => {
                write!(f, "`{command}` failed ({status})")?;
                if !first_line.is_empty() {
                    write!(f, ": {first_line}")?;
                }
                Ok(())
            }
            ProbeErrorKind::TimedOut(limit) => {
                write!(f, "`{command}` did not finish within {} s and was stopped", limit.as_secs())
            }
            ProbeErrorKind::Unexpected { expected, found } => {
                let source = if self.args.is_empty() { "contents of" } else { "output from" };
                write!(f, "unexpected {source} `{command}`: expected {expected}, got `{found}`")
            }
        }
    }
}

impl std::error::Error for ProbeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ProbeErrorKind::Io(err) => Some(err),
            _ => None,
        }
    }
}

/// The first non-blank line of `text`, trimmed and cut to a length fit for an error message.
fn first_line(text: &str) -> &str {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    match line.char_indices().nth(160) {
        Some((cut, _)) => &line[..cut],
        None => line,
    }
}

/// How long a probe may take. `g++ --version` takes milliseconds and `nvcc --version` a few tens; a program that
/// has not answered in this time is hung (waiting on a lock, a network file system, a terminal) and is stopped, so the
/// wrapper never hangs a build with it.
pub const TIME_LIMIT: Duration = Duration::from_secs(10);

/// What every program a probe starts is given, so that it cannot start the wrapper probing again (a "compiler" that is
/// a script around `nvcc`): the wrapper's loop counter at its limit, so such a wrapper stops at once (exit 125)
/// instead of recursing. `locate`'s tests check this names its counter and limit.
pub const LOOP_GUARD: (&str, &str) = ("NVCC_WRAPPER_DEPTH", "8");

/// Runs `program args` and returns its stdout.
///
/// No shell, and the environment is inherited (a compiler may be a Nix cc-wrapper or a ccache link that needs its
/// environment, and none of the lines we parse is translated by the locale) but for the loop guard. Stdin is closed so
/// that a program waiting for input fails instead of hanging, and a program still running after `TIME_LIMIT` is killed.
fn run(program: &Path, args: &[&str]) -> Result<String, ProbeError> {
    run_within(program, args, TIME_LIMIT)
}

fn run_within(program: &Path, args: &[&str], limit: Duration) -> Result<String, ProbeError> {
    let fail = |kind| ProbeError::new(program, args, kind);
    let mut child = Command::new(program)
        .args(args)
        .env(LOOP_GUARD.0, LOOP_GUARD.1)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|err| fail(ProbeErrorKind::Io(err)))?;
    // Both pipes are drained while waiting, so a chatty program never blocks on a full pipe.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let deadline = Instant::now() + limit;
    let mut pause = Duration::from_micros(50);
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|err| fail(ProbeErrorKind::Io(err)))? {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(fail(ProbeErrorKind::TimedOut(limit)));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(5));
    };
    let stdout = String::from_utf8_lossy(&stdout.join().unwrap_or_default()).into_owned();
    if !status.success() {
        let stderr = String::from_utf8_lossy(&stderr.join().unwrap_or_default()).into_owned();
        let said = if first_line(&stderr).is_empty() { first_line(&stdout) } else { first_line(&stderr) };
        return Err(fail(ProbeErrorKind::Failed { status, first_line: said.to_string() }));
    }
    Ok(stdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_command_and_what_it_said() {
        let err = ProbeError::unexpected(&["--version"], "a GCC or Clang version banner", "\n  icx (R) 2024.0\nmore\n")
            .with_program(Path::new("/opt/intel/bin/icx"));
        assert_eq!(
            err.to_string(),
            "unexpected output from `/opt/intel/bin/icx --version`: expected a GCC or Clang version banner, \
             got `icx (R) 2024.0`"
        );
        // Before a runner names the program, the arguments alone still say which probe it was.
        let err = ProbeError::unexpected(&["-dumpmachine"], "a target triple", "");
        assert_eq!(err.to_string(), "unexpected output from `-dumpmachine`: expected a target triple, got ``");
    }

    #[test]
    fn commands_are_shell_quoted() {
        let err = ProbeError::io(Path::new("/opt/my cuda/version.json"), io::ErrorKind::PermissionDenied.into());
        assert_eq!(err.to_string(), "'/opt/my cuda/version.json': permission denied");
    }

    #[test]
    fn a_missing_program_is_reported_as_such() {
        let err = run(Path::new("/nonexistent/g++-99"), &["--version"]).unwrap_err();
        assert!(matches!(err.kind, ProbeErrorKind::Io(_)), "{err:?}");
        assert!(err.to_string().starts_with("could not run `/nonexistent/g++-99 --version`: "), "{err}");
    }

    #[test]
    fn a_hung_program_is_stopped_and_named() {
        let started = Instant::now();
        let err = run_within(Path::new("/bin/sleep"), &["30"], Duration::from_millis(300)).unwrap_err();
        assert!(matches!(err.kind, ProbeErrorKind::TimedOut(_)), "{err:?}");
        assert!(started.elapsed() < Duration::from_secs(5), "not stopped in time: {:?}", started.elapsed());
        assert_eq!(err.to_string(), "`/bin/sleep 30` did not finish within 0 s and was stopped");
    }

    #[test]
    fn a_probed_program_gets_the_loop_guard_and_chatty_output_whole() {
        let out =
            run(Path::new("/bin/sh"), &["-c", "echo $NVCC_WRAPPER_DEPTH; head -c 300000 /dev/zero | tr '\\0' x >&2"]);
        assert_eq!(out.unwrap(), "8\n");
    }

    #[test]
    fn a_failing_program_is_reported_with_its_first_line() {
        let err = run(Path::new("/bin/sh"), &["-c", "echo; echo '  nope: no input files ' >&2; exit 3"]).unwrap_err();
        let shown = err.to_string();
        assert!(shown.starts_with("`/bin/sh -c "), "{shown}");
        assert!(shown.ends_with("` failed (exit status: 3): nope: no input files"), "{shown}");
    }
}
