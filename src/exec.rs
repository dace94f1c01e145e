//! The one place that starts nvcc: Unix exec, so that its exit code, signals, stdin, stdout and stderr are nvcc's
//! own; or, where the wrapper has work left after nvcc (a dependency file to complete), a child it waits for and whose
//! end it mirrors, signals passed on. With a launcher (a compiler cache) the program is the launcher and the real nvcc its first argument.
//! argv[0] is the real nvcc's path, because nvcc finds `nvcc.profile` next to argv[0] (with a bare name it runs
//! without its profile or crashes).

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

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
    command(nvcc, args, env).exec()
}

/// nvcc's command, as exec and `run_to_end` start it: argv[0] the program's path, the environment exactly `env`, the
/// caller's SIGPIPE disposition.
fn command(nvcc: &Path, args: &[OsString], env: &Env) -> Command {
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
    command
}

/// The child `run_to_end` waits for, for the signal handler (0: none).
static CHILD: AtomicI32 = AtomicI32::new(0);

/// Signals a caller sends to stop or poke a compiler (make and ninja on an interrupt, a CI's timeout, `kill`): sent to
/// the wrapper, they are passed on to nvcc. One the terminal sends reaches nvcc by itself, since nvcc stays in the
/// wrapper's process group.
const FORWARDED: [libc::c_int; 6] =
    [libc::SIGHUP, libc::SIGINT, libc::SIGQUIT, libc::SIGTERM, libc::SIGUSR1, libc::SIGUSR2];

extern "C" fn forward(signal: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    let child = CHILD.load(Ordering::SeqCst);
    // SAFETY: the kernel hands a valid siginfo to an SA_SIGINFO handler; kill is async-signal-safe.
    unsafe {
        // The terminal's own (SI_KERNEL) has reached the whole process group, nvcc included: sending it again
        // would interrupt nvcc's cleanup.
        if child > 0 && (*info).si_code != libc::SI_KERNEL {
            libc::kill(child, signal);
        }
    }
}

/// Run nvcc as a child and wait for it, where the wrapper has work left after nvcc (completing a dependency file):
/// nvcc gets what exec would give it (argv[0], arguments, environment, SIGPIPE disposition, and the wrapper's stdin,
/// stdout, stderr, open file descriptors, a make jobserver's included, and process group), and the signals in
/// `FORWARDED` sent to the wrapper are passed on to it. How it ended, or why it could not start.
pub fn run_to_end(nvcc: &Path, args: &[OsString], env: &Env) -> std::io::Result<std::process::ExitStatus> {
    // SAFETY: sigaction with a handler that only reads an atomic and calls kill; `old` is fully written.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = forward as *const () as usize;
        action.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        for signal in FORWARDED {
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
    // Held back until the child's pid is known, so that none is lost. The child gets back the mask the wrapper had
    // (what nvcc would have had by exec), and exec resets the handlers.
    let held = forwarded_signals(libc::SIG_BLOCK);
    let mut command = command(nvcc, args, env);
    // SAFETY: runs in the child right before execve; sigprocmask is async-signal-safe and reads only a copy of the
    // mask on the child's own stack.
    unsafe {
        command.pre_exec(move || {
            libc::sigprocmask(libc::SIG_SETMASK, &held, std::ptr::null_mut());
            Ok(())
        });
    }
    let spawned = command.spawn();
    if let Ok(child) = &spawned {
        CHILD.store(child.id() as i32, Ordering::SeqCst);
    }
    // SAFETY: restores the mask saved above.
    unsafe { libc::sigprocmask(libc::SIG_SETMASK, &held, std::ptr::null_mut()) };
    let status = spawned?.wait();
    CHILD.store(0, Ordering::SeqCst);
    status
}

/// Block or unblock (`how`) the signals in `FORWARDED`; the mask before.
fn forwarded_signals(how: libc::c_int) -> libc::sigset_t {
    // SAFETY: sigset_t is plain data, set up by sigemptyset before use; sigprocmask fully writes `old`.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for signal in FORWARDED {
            libc::sigaddset(&mut set, signal);
        }
        libc::sigprocmask(how, &set, &mut old);
        old
    }
}

/// End the wrapper as nvcc ended: with its exit code, or by the same signal (so that make and ninja see nvcc's own
/// interrupt), its default action restored first.
pub fn end_as(status: std::process::ExitStatus) -> ! {
    use std::os::unix::process::ExitStatusExt;
    if let Some(signal) = status.signal() {
        // SAFETY: restoring a signal's default action and raising it in this process.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, signal);
            libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::raise(signal);
        }
        // A signal whose default is to go on (SIGCHLD, SIGWINCH): end as a shell reports one.
        std::process::exit(128 + signal);
    }
    std::process::exit(status.code().unwrap_or(1))
}

/// Add `inputs` to each dependency file nvcc wrote (see `depfile`). A file nvcc did not write, or one with no rule,
/// is left as it is: the build then has what nvcc gave it.
pub fn complete_depfiles(depfiles: &[PathBuf], inputs: &[PathBuf]) -> Result<()> {
    let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    for file in depfiles {
        let Ok(text) = std::fs::read(file) else { continue };
        let Some(completed) = crate::depfile::add_inputs(&text, &inputs) else { continue };
        std::fs::write(file, completed).map_err(|e| {
            Error::new(ErrorKind::Output, format!("cannot add to the dependency file {}: {e}", file.display()))
                .with_help("make its directory writable, or set `depfile-inputs = false` in the config")
        })?;
    }
    Ok(())
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
