//! The one place that starts nvcc: Unix exec, so that its exit code, signals, stdin, stdout and stderr are nvcc's
//! own. With a launcher (a compiler cache) the program is the launcher and the real nvcc its first argument.
//! argv[0] is the real nvcc's path, because nvcc finds `nvcc.profile` next to argv[0] (with a bare name it runs
//! without its profile or crashes).

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::context::Env;
use crate::error::{Error, ErrorKind, Result};
use crate::plan::WrittenFile;

/// Whether the caller started the wrapper with SIGPIPE ignored. Rust's runtime sets SIGPIPE to ignored before
/// `main` (for its own writes), and `Command` sets it back to the default right before exec, so without this nvcc
/// would always start with the default, whatever the caller chose; `main.rs` records it from a constructor that runs
/// before the runtime.
static CALLER_IGNORES_SIGPIPE: AtomicBool = AtomicBool::new(false);

/// Record the SIGPIPE disposition the process started with. Only for the binary's constructor (see `main.rs`).
pub extern "C" fn record_caller_sigpipe() {
    // SAFETY: with a null new action, sigaction only reads the current one into `old`, which it may fully write.
    let ignored = unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGPIPE, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    };
    CALLER_IGNORES_SIGPIPE.store(ignored, Ordering::Relaxed);
}

/// Replace this process with nvcc, with the caller's SIGPIPE disposition. Returns only if that fails, with why.
pub fn exec(nvcc: &Path, args: &[OsString], env: &Env) -> std::io::Error {
    let mut command = Command::new(nvcc);
    command.arg0(nvcc).args(args).env_clear().envs(env.iter());
    if CALLER_IGNORES_SIGPIPE.load(Ordering::Relaxed) {
        // SAFETY: runs in this process right before execve, after std's reset of SIGPIPE to the default; signal()
        // is async-signal-safe and touches no memory of ours.
        unsafe {
            command.pre_exec(|| {
                libc::signal(libc::SIGPIPE, libc::SIG_IGN);
                Ok(())
            });
        }
    }
    command.exec()
}

/// `E2BIG`: the arguments and environment are more than the kernel takes (`std::io::ErrorKind::ArgumentListTooLong`
/// is newer than this crate's minimum Rust).
const E2BIG: i32 = 7;

/// Whether exec failed because the command line and environment are too long for the kernel.
pub fn too_long(err: &std::io::Error) -> bool {
    err.raw_os_error() == Some(E2BIG)
}

/// The error for an nvcc that could not be started.
pub fn cannot_run(nvcc: &Path, err: &std::io::Error) -> Error {
    if too_long(err) {
        return Error::new(
            ErrorKind::CannotExec,
            format!(
                "cannot run the real nvcc {}: its arguments and environment are longer than the kernel takes ({err})",
                nvcc.display()
            ),
        )
        .with_help(
            "put arguments in an options file (`-optf FILE`, which nvcc reads itself), or shorten the environment",
        );
    }
    Error::new(ErrorKind::CannotExec, format!("cannot run the real nvcc {}: {err}", nvcc.display()))
        .with_help("check that it is an executable for this machine, or set `nvcc` in the config file")
}

/// The error for a launcher (`launcher`) that could not be started.
pub fn cannot_run_launcher(launcher: &Path, err: &std::io::Error) -> Error {
    Error::new(ErrorKind::CannotExec, format!("cannot run the launcher {}: {err}", launcher.display()))
        .with_help("check that it is an executable for this machine, or remove `launcher` from the config")
}

/// Write the options files a plan rewrote, before nvcc reads them. A file already there with the same contents (the
/// name is their hash) is kept; a new one is written to a temporary name and renamed, so a parallel build never
/// reads half a file.
pub fn write_files(files: &[WrittenFile]) -> Result<()> {
    for file in files {
        if std::fs::read(&file.path).is_ok_and(|old| old == file.contents) {
            continue;
        }
        let fail = |e: std::io::Error| {
            Error::new(
                ErrorKind::Output,
                format!("cannot write the rewritten options file {}: {e}", file.path.display()),
            )
            .with_help(
                "make $XDG_CACHE_HOME (or ~/.cache) writable, or set `[gpu] arch-flags` to \"respect\" or \"append\"",
            )
        };
        let dir = file.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(fail)?;
        let temporary = dir.join(format!(
            ".{}.{}",
            std::process::id(),
            file.path.file_name().unwrap_or_default().to_string_lossy()
        ));
        std::fs::write(&temporary, &file.contents).map_err(fail)?;
        std::fs::rename(&temporary, &file.path).map_err(fail)?;
    }
    Ok(())
}
