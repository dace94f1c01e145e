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

/// Run `program` as a child named `arg0`, with exactly `env` and the wrapper's stdin, stdout and stderr, and wait for
/// it: for `check-reproducible`, which runs the drop-in twice.
pub fn run_and_wait(
    program: &Path,
    arg0: &std::ffi::OsStr,
    args: &[OsString],
    env: &Env,
) -> std::io::Result<std::process::ExitStatus> {
    Command::new(program).arg0(arg0).args(args).env_clear().envs(env.iter()).status()
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
            Error::new(
                ErrorKind::Output,
                format!("cannot add to the dependency file {}: {e}", crate::shell::path(file)),
            )
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
                crate::shell::path(nvcc)
            ),
        )
        .with_help(
            "put arguments in an options file (`-optf FILE`, which nvcc reads itself), or shorten the environment",
        );
    }
    Error::new(ErrorKind::CannotExec, format!("cannot run the real nvcc {}: {err}", crate::shell::path(nvcc)))
        .with_help("check that it is an executable for this machine, or set `nvcc` in the config file")
}

/// The error for a launcher (`launcher`) that could not be started.
pub fn cannot_run_launcher(launcher: &Path, err: &std::io::Error) -> Error {
    Error::new(ErrorKind::CannotExec, format!("cannot run the launcher {}: {err}", crate::shell::path(launcher)))
        .with_help("check that it is an executable for this machine, or remove `launcher` from the config")
}

/// Write the options files a plan rewrote, before nvcc reads them. A file already there with the same contents (the
/// name is their hash) is kept, and its time refreshed, since the sweep (`OPTIONS_FILES`) removes the ones unused for a
/// while; a new one is written to a temporary name and renamed, so a parallel build never reads half a file, and the
/// temporary file is removed when that fails. The directory is made as `dirs::prepare` says (never a home directory,
/// a private one under `/tmp`).
pub fn write_files(files: &[WrittenFile]) -> Result<()> {
    for file in files {
        let limit = file.contents.len() as u64;
        if crate::bounded::read(&file.path, limit).is_ok_and(|old| old == file.contents) {
            touch(&file.path);
            continue;
        }
        let fail = |e: std::io::Error| {
            Error::new(
                ErrorKind::Output,
                format!("cannot write the rewritten options file {}: {e}", crate::shell::path(&file.path)),
            )
            .with_help(
                "make $XDG_CACHE_HOME (or ~/.cache) writable, or set `[gpu] arch-flags` to \"respect\" or \"append\"",
            )
        };
        let dir = file.path.parent().unwrap_or(Path::new("."));
        crate::dirs::prepare(dir).map_err(fail)?;
        let name = file.path.file_name().unwrap_or_default().to_string_lossy();
        let temporary = dir.join(format!(".{name}.{}.tmp", std::process::id()));
        let _ = std::fs::remove_file(&temporary);
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)
            .and_then(|mut f| std::io::Write::write_all(&mut f, &file.contents))
            .and_then(|()| std::fs::rename(&temporary, &file.path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&temporary);
            return Err(fail(e));
        }
        crate::evict::now_and_then(dir, &OPTIONS_FILES);
    }
    Ok(())
}

/// How long a rewritten options file is kept after it was last used: a build that stops using one (its options file
/// changed) leaves it behind, and the next sweep removes it after this.
pub const OPTIONS_FILE_LIFETIME: std::time::Duration = std::time::Duration::from_secs(7 * 24 * 3600);

/// What the sweep of the rewritten options files removes: `HASH.optf` unused for `OPTIONS_FILE_LIFETIME`, and
/// temporary files left by a wrapper killed while writing one.
pub static OPTIONS_FILES: crate::evict::Rules = crate::evict::Rules {
    keep: OPTIONS_FILE_LIFETIME,
    is_entry: |name| {
        name.strip_suffix(".optf").is_some_and(|hash| hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()))
    },
    is_temporary: |name| name.starts_with('.') && name.ends_with(".tmp"),
};

/// Set a file's times to now (a use), ignoring failure: only the sweep reads them.
fn touch(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let Ok(path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else { return };
    // SAFETY: `path` is a valid NUL-terminated string; a null `times` means "now" for both.
    unsafe { libc::utimensat(libc::AT_FDCWD, path.as_ptr(), std::ptr::null(), 0) };
}

/// Run nvcc with the user's own arguments and the environment the wrapper was given, plus its loop counter; when
/// even that is longer than the kernel takes, without the counter: exactly the call nvcc alone would have had (argv[0]
/// aside). Returns only if it cannot run.
pub fn exec_as_given(nvcc: &Path, args: &[OsString], given: &Env, depth: u32) -> std::io::Error {
    let mut env = given.clone();
    env.set(crate::context::vars::DEPTH, (depth + 1).to_string());
    let err = exec(nvcc, args, &env);
    if !too_long(&err) {
        return err;
    }
    exec(nvcc, args, given)
}

/// Run nvcc as the user gave it, because the plan cannot be carried out (`why`), saying on stderr what that drops;
/// in a dry run, print nothing more and fail with `why`. Returns only on error.
pub fn run_as_given(
    ctx: &crate::context::Context,
    plan: &crate::plan::Plan,
    depth: u32,
    why: &str,
    dry_run: bool,
) -> Error {
    if dry_run {
        return Error::new(ErrorKind::Output, why).with_help(
            "make $XDG_CACHE_HOME (or ~/.cache) writable, or set `[gpu] arch-flags` to \"respect\" or \"append\"",
        );
    }
    eprintln!("nvcc-wrapper: warning: {why}: running nvcc as given, {}", dropped(plan));
    let err = exec_as_given(&plan.nvcc.path, &ctx.args, &ctx.env, depth);
    cannot_run(&plan.nvcc.path, &err)
}

/// What a plan would have changed, as one clause for a warning that says it is dropped: the additions, the
/// removals, the rewritten options files and the variables it sets.
pub fn dropped(plan: &crate::plan::Plan) -> String {
    let words = |w: &[OsString]| crate::shell::display(w.iter().map(OsString::as_os_str));
    let mut parts = Vec::new();
    let added: Vec<OsString> = plan.before.iter().chain(&plan.after).flat_map(|a| a.args.iter().cloned()).collect();
    if !added.is_empty() {
        parts.push(format!("without adding `{}`", words(&added)));
    }
    let removed: Vec<OsString> = plan.removed.iter().flat_map(|r| r.tokens.iter().cloned()).collect();
    if !removed.is_empty() {
        parts.push(format!("keeping `{}` that it would have removed", words(&removed)));
    }
    for w in &plan.written {
        let name = w.replaces.value.clone().unwrap_or_default();
        parts.push(format!("reading the options file {} as it is", crate::shell::display([name.as_os_str()])));
    }
    for (name, _) in plan.env.iter().filter(|(name, _)| *name != crate::context::vars::DEPTH) {
        parts.push(format!("with ${name} as you set it"));
    }
    if let Some(launcher) = &plan.launcher {
        parts.push(format!("without the launcher {}", crate::shell::path(launcher)));
    }
    if parts.is_empty() {
        "without the wrapper's loop counter".to_string()
    } else {
        parts.join(", ")
    }
}
