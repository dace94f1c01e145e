//! Writing what the wrapper itself prints to stdout (`explain`, `doctor`, `gencode`, `compat scan`, a dry run), and
//! the files `compat dump` writes. A
//! reader that went away (`nvcc-wrapper gencode 8.6 | head -1`) ends the command quietly and successfully, as
//! ripgrep and other command-line tools do; any other failure (a full disk) is reported as a write error, exit 74.
//! Nothing here panics, unlike `print!`.

use std::io::Write;

use super::{Error, ErrorKind, Result};

/// Write all of `bytes` to stdout and flush.
pub fn stdout(bytes: impl AsRef<[u8]>) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes.as_ref()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(Error::new(ErrorKind::ClosedOutput, "")),
        Err(e) => Err(Error::new(ErrorKind::Output, format!("cannot write to stdout: {e}"))
            .with_help("make room on the device stdout goes to, or send the output elsewhere")),
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
    let shown = super::shell::path(path);
    let mut file = match std::fs::OpenOptions::new().write(true).create_new(true).open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(Error::new(ErrorKind::Usage, format!("{shown} already exists"))
                .with_help("name a new or empty directory, or remove the file: nothing is overwritten"))
        }
        Err(e) => {
            return Err(Error::new(ErrorKind::Output, format!("cannot create {shown}: {e}"))
                .with_help("name a directory you can write to"))
        }
    };
    file.write_all(bytes.as_ref()).map_err(|e| {
        Error::new(ErrorKind::Output, format!("cannot write {shown}: {e}")).with_help("make room on its device")
    })
}

/// Write `files` (name, bytes) as new files in `dir`, all or none: every name is checked first (one that exists is a
/// usage error, and nothing is written), each is written to a temporary name, and only when all are whole are they
/// renamed into place. A failure (a full disk) removes what this call wrote.
pub fn new_files(dir: &std::path::Path, files: &[(&str, &[u8])]) -> Result<()> {
    for (name, _) in files {
        let path = dir.join(name);
        if std::fs::symlink_metadata(&path).is_ok() {
            return Err(Error::new(ErrorKind::Usage, format!("{} already exists", super::shell::path(&path)))
                .with_help("name a new or empty directory, or remove the file: nothing is overwritten"));
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
            std::fs::rename(temporary(name), &path).map_err(|e| {
                Error::new(ErrorKind::Output, format!("cannot write {}: {e}", super::shell::path(&path)))
                    .with_help("name a directory you can write to")
            })?;
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
    std::fs::create_dir_all(dir).map_err(|e| {
        Error::new(ErrorKind::Output, format!("cannot create the directory {}: {e}", super::shell::path(dir)))
            .with_help("name a directory you can write to")
    })
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
