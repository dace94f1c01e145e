//! Writing what the wrapper itself prints to stdout (`explain`, `doctor`, `gencode`, `compat scan`, a dry run), and
//! the files `compat dump` writes. A
//! reader that went away (`nvcc-wrapper gencode 8.6 | head -1`) ends the command quietly and successfully, as
//! ripgrep and other command-line tools do; any other failure (a full disk) is reported as a write error, exit 74.
//! Nothing here panics, unlike `print!`.

use std::io::Write;
use std::path::PathBuf;

use super::{Error, ErrorKind, Result};

/// Write all of `bytes` to stdout and flush.
pub fn stdout(bytes: impl AsRef<[u8]>) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes.as_ref()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(Refused::ReaderLeft.into()),
        Err(err) => Err(Refused::Stdout { err }.into()),
    }
}

/// Say `line` on stderr, best effort: the wrapper's own warnings and errors never change how a call ends, so a reader
/// of stderr that went away (EPIPE), a full disk or a closed stderr leaves the call's exit status nvcc's, or the
/// wrapper's documented one (`eprintln!` would panic, and the call would end with a bug's abort).
pub fn stderr(line: impl std::fmt::Display) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Say `message` on stderr as a warning of the wrapper's (`nvcc-wrapper: warning: ...`), best effort (`stderr`).
pub fn warning(message: impl std::fmt::Display) {
    stderr(format_args!("nvcc-wrapper: warning: {message}"));
}

/// Write `bytes` to a new file at `path`: one that exists already is an error (a usage error: the user named it), never
/// overwritten.
pub fn new_file(path: &std::path::Path, bytes: impl AsRef<[u8]>) -> Result<()> {
    let path = path.to_path_buf();
    let mut file = match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Err(Refused::Exists { path }.into()),
        Err(err) => return Err(Refused::Create { path, err }.into()),
    };
    file.write_all(bytes.as_ref()).map_err(|err| Refused::Write { path, err }.into())
}

/// Write `files` (name, bytes) as new files in `dir`, all or none: every name is checked first (one that exists is a
/// usage error, and nothing is written), each is written to a temporary name, and only when all are whole are they
/// renamed into place. A failure (a full disk) removes what this call wrote.
pub fn new_files(dir: &std::path::Path, files: &[(&str, &[u8])]) -> Result<()> {
    for (name, _) in files {
        let path = dir.join(name);
        if std::fs::symlink_metadata(&path).is_ok() {
            return Err(Refused::Exists { path }.into());
        }
    }
    let temporary = |name: &str| dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let mut done: Vec<std::path::PathBuf> = Vec::new();
    let result = (|| {
        for (name, bytes) in files {
            new_file(&temporary(name), bytes)?;
            done.push(temporary(name));
        }
        for (name, _) in files {
            let path = dir.join(name);
            std::fs::rename(temporary(name), &path)
                .map_err(|err| Error::from(Refused::Rename { path: path.clone(), err }))?;
            done.retain(|d| *d != temporary(name));
            done.push(path);
        }
        Ok(())
    })();
    if result.is_err() {
        for path in &done {
            let _ = std::fs::remove_file(path);
        }
        for (name, _) in files {
            let _ = std::fs::remove_file(temporary(name));
        }
    }
    result
}

/// Make `dir` and its parents, where missing.
pub fn directory(dir: &std::path::Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|err| Refused::Directory { path: dir.to_path_buf(), err }.into())
}

/// Say `message` on stderr as `nvcc-wrapper: warning: ...`, as the drop-in says its plan's warnings, whatever
/// `NVCC_WRAPPER_LOG` holds, and only once per process however often it is asked. For what the user must hear from
/// deep inside a step (a probed program that had to be stopped); the plan's own warnings are printed by the
/// personalities.
pub fn warning_once(message: &str) {
    static SAID: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut said = SAID.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if said.iter().any(|m| m == message) {
        return;
    }
    said.push(message.to_string());
    warning(message);
}

/// What writing the wrapper's own output refuses, as data: each with a stable code (`Coded`), its words once
/// (`Display`, `help`), and its kind (`Problem`).
#[derive(Debug)]
pub enum Refused {
    /// stdout's reader went away: the command ends quietly (`ErrorKind::ClosedOutput`), and says nothing.
    ReaderLeft,
    /// stdout cannot be written.
    Stdout { err: std::io::Error },
    /// A file the command would write is there already: nothing is overwritten.
    Exists { path: PathBuf },
    /// A file cannot be created.
    Create { path: PathBuf, err: std::io::Error },
    /// A file created cannot be written whole.
    Write { path: PathBuf, err: std::io::Error },
    /// A file written whole cannot be put in its place.
    Rename { path: PathBuf, err: std::io::Error },
    /// A directory cannot be made.
    Directory { path: PathBuf, err: std::io::Error },
}

super::codes!(Refused {
    ReaderLeft => "reader-left",
    Stdout => "stdout",
    Exists => "exists",
    Create => "create",
    Write => "write",
    Rename => "rename",
    Directory => "directory",
});

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use super::shell::path as shown;
        match self {
            Refused::ReaderLeft => Ok(()),
            Refused::Stdout { err } => write!(f, "cannot write to stdout: {err}"),
            Refused::Exists { path } => write!(f, "{} already exists", shown(path)),
            Refused::Create { path, err } => write!(f, "cannot create {}: {err}", shown(path)),
            Refused::Write { path, err } | Refused::Rename { path, err } => {
                write!(f, "cannot write {}: {err}", shown(path))
            }
            Refused::Directory { path, err } => write!(f, "cannot create the directory {}: {err}", shown(path)),
        }
    }
}

impl super::Problem for Refused {
    fn kind(&self) -> ErrorKind {
        match self {
            Refused::ReaderLeft => ErrorKind::ClosedOutput,
            Refused::Exists { .. } => ErrorKind::Usage,
            _ => ErrorKind::Output,
        }
    }

    /// What to do about it (nothing, for a reader that left).
    fn help(&self) -> Option<String> {
        let help = match self {
            Refused::ReaderLeft => return None,
            Refused::Stdout { .. } => "make room on the device stdout goes to, or send the output elsewhere",
            Refused::Exists { .. } => "name a new or empty directory, or remove the file: nothing is overwritten",
            Refused::Write { .. } => "make room on its device",
            Refused::Create { .. } | Refused::Rename { .. } | Refused::Directory { .. } => {
                "name a directory you can write to"
            }
        };
        Some(help.to_string())
    }
}
