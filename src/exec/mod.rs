//! The one place that starts nvcc: Unix exec, so that its exit code, signals, stdin, stdout and stderr are nvcc's
//! own; or, where the wrapper has work left after nvcc (a dependency file to complete), a child it waits for and whose
//! end it mirrors (`child`: as safe as exec, signals passed on, nothing left running when the wrapper is killed).
//! With a launcher (a compiler cache) the program is the launcher and the real nvcc its first argument. argv[0] is
//! the real nvcc's path, because nvcc finds `nvcc.profile` next to argv[0] (with a bare name it runs without its
//! profile or crashes). Files the wrapper writes for a call (rewritten options files, completed dependency files)
//! replace the old ones whole: a temporary file beside them, renamed over them.

pub mod child;
pub mod follow;
pub mod hold;
pub mod jobserver;
pub mod ledger;
pub mod lend;
pub mod problems;
pub mod procfs;
pub mod signals;

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

use crate::context::Env;
use crate::error::{Error, Result};
use crate::plan::WrittenFile;
use problems::{Program, Refused};

/// Replace this process with nvcc: argv[0] its path, exactly `env`, and the caller's dispositions of
/// `signals::OWN_WRITES` and closed standard streams (`child::spawn::Spawn::exec`). Returns only if that fails, with
/// why.
pub fn exec(nvcc: &Path, args: &[OsString], env: &Env) -> std::io::Error {
    match child::spawn::Spawn::new(nvcc, args, env) {
        Ok(command) => command.exec(),
        Err(err) => err,
    }
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

/// End the wrapper as nvcc ended: with its exit code, or by the same signal (so that make and ninja see nvcc's own
/// interrupt). A signal held back meanwhile (see `child`) then ends the wrapper by its default action.
pub fn end_as(status: std::process::ExitStatus) -> ! {
    use std::os::unix::process::ExitStatusExt;
    if let Some(signal) = status.signal() {
        signals::die_by(signal);
    }
    signals::let_held_through();
    std::process::exit(status.code().unwrap_or(1))
}

/// Add the plan's inputs to each dependency file nvcc wrote (see `depfile`); the warnings to print for those that
/// could not be completed. Only a regular file is read, to a limit: one nvcc did not write, a special file (`-MF
/// /dev/stdout`, a FIFO, a terminal) or one with no rule is left as it is, and the build has what nvcc gave it. The
/// completed file replaces nvcc's whole (a symlink's target, with its permissions), so a failure, a full disk say,
/// leaves nvcc's file as it was; one with other names (hard links) or of another user's is left as nvcc wrote it, as
/// replacing it would part it from its names or change its owner. Never an error: nvcc has succeeded, and its own
/// file still serves the build.
pub fn complete_depfiles(edit: &crate::plan::model::DepfileInputs) -> Vec<String> {
    let mut warnings = Vec::new();
    for file in &edit.depfiles {
        let text = match crate::error::bounded::read(file, crate::error::bounded::DEPFILE) {
            Ok(text) => text,
            Err(refused) => {
                if !refused.not_found() {
                    tracing::debug!("{} is left as nvcc wrote it: {refused}", crate::error::shell::path(file));
                }
                continue;
            }
        };
        let Some(completed) = crate::plan::depfile::syntax::add_inputs(&text, &edit.inputs, edit.phony) else {
            continue;
        };
        let target = std::fs::canonicalize(file).unwrap_or_else(|_| file.clone());
        let meta = std::fs::metadata(&target).ok();
        // Replaced whole, a file with other names would lose them, and one of another user's would become ours:
        // nvcc writes in place and keeps both, so such a file is left as nvcc wrote it.
        let me = nix::unistd::geteuid().as_raw();
        if let Some(why) = meta.as_ref().and_then(|m| {
            use std::os::unix::fs::MetadataExt;
            (m.nlink() > 1)
                .then_some("it has other names (hard links), which replacing it would part from it")
                .or((m.uid() != me)
                    .then_some("it belongs to another user, and replacing it would make it the wrapper's"))
        }) {
            warnings.push(format!(
                "the dependency file {} is left as nvcc wrote it ({why}): a change of the config or the host compiler will not rebuild this object",
                crate::error::shell::path(file)
            ));
            continue;
        }
        let mode = meta.map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()));
        if let Err(e) = replace_whole(&target, &completed, mode) {
            warnings.push(format!(
                "cannot add the wrapper's inputs to the dependency file {} ({e}): it lists what nvcc wrote, so a change of the config or the host compiler will not rebuild this object",
                crate::error::shell::path(file)
            ));
        }
    }
    warnings
}

/// Write `contents` to `path` whole: into a temporary file beside it (with `mode`, when given), then renamed over
/// it; the temporary file is removed when that fails.
fn replace_whole(path: &Path, contents: &[u8], mode: Option<u32>) -> std::io::Result<()> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let temporary = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&temporary);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    if let Some(mode) = mode {
        options.mode(mode & 0o777);
    }
    let written = options.open(&temporary).and_then(|mut f| {
        std::io::Write::write_all(&mut f, contents)?;
        // The umask applied at creation: the mode nvcc's file had.
        match mode {
            Some(mode) => f.set_permissions(std::fs::Permissions::from_mode(mode & 0o7777)),
            None => Ok(()),
        }
    });
    let renamed = written.and_then(|()| std::fs::rename(&temporary, path));
    if renamed.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    renamed
}

/// `E2BIG`: the arguments and environment are more than the kernel takes (`std::io::ErrorKind::ArgumentListTooLong`
/// is newer than this crate's minimum Rust).
const E2BIG: i32 = 7;

/// Whether exec failed because the command line and environment are too long for the kernel.
pub fn too_long(err: &std::io::Error) -> bool {
    err.raw_os_error() == Some(E2BIG)
}

/// The error for an nvcc that could not be started, naming where it was set when the config set it.
pub fn cannot_run(nvcc: &crate::plan::RealNvcc, err: std::io::Error) -> Error {
    let path = nvcc.path.clone();
    if too_long(&err) {
        return Refused::TooLong { path, err }.into();
    }
    let origin = match &nvcc.found_by {
        crate::plan::FoundBy::Config(origin) => Some(origin.to_string()),
        crate::plan::FoundBy::Path => None,
    };
    Refused::CannotRun { program: Program::Nvcc { origin }, path, err }.into()
}

/// Write the options files a plan rewrote, before nvcc reads them. A file already there with the same contents (the
/// name is their hash) is kept, and its time refreshed, since the sweep (`OPTIONS_FILES`) removes the ones unused for a
/// while; a new one is written to a temporary name and renamed, so a parallel build never reads half a file, and the
/// temporary file is removed when that fails. The directory is made as `dirs::prepare` says (never a home directory,
/// a private one under `/tmp`).
pub fn write_files(files: &[WrittenFile]) -> Result<()> {
    for file in files {
        let limit = file.contents.len() as u64;
        if crate::error::bounded::read(&file.path, limit).is_ok_and(|old| old == file.contents) {
            touch(&file.path);
            continue;
        }
        let dir = file.path.parent().unwrap_or(Path::new("."));
        let fail = |err| Error::from(Refused::OptionsFile { path: file.path.clone(), err });
        crate::context::dirs::prepare(dir).map_err(fail)?;
        replace_whole(&file.path, &file.contents, None).map_err(fail)?;
        crate::probe::cache::evict::now_and_then(dir, &OPTIONS_FILES);
    }
    Ok(())
}

/// How long a rewritten options file is kept after it was last used: a build that stops using one (its options file
/// changed) leaves it behind, and the next sweep removes it after this.
pub const OPTIONS_FILE_LIFETIME: std::time::Duration = std::time::Duration::from_secs(7 * 24 * 3600);

/// What the sweep of the rewritten options files removes: `HASH.optf` unused for `OPTIONS_FILE_LIFETIME`, and
/// temporary files left by a wrapper killed while writing one.
pub static OPTIONS_FILES: crate::probe::cache::evict::Rules = crate::probe::cache::evict::Rules {
    keep: OPTIONS_FILE_LIFETIME,
    is_entry: |name| {
        name.strip_suffix(".optf").is_some_and(|hash| hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()))
    },
    is_temporary: |name| name.starts_with('.') && name.ends_with(".tmp"),
};

/// Set a file's times to now (a use), ignoring failure: only the sweep reads them.
fn touch(path: &Path) {
    use nix::sys::{stat, time::TimeSpec};
    let now = TimeSpec::UTIME_NOW;
    let _ = stat::utimensat(nix::fcntl::AT_FDCWD, path, &now, &now, stat::UtimensatFlags::FollowSymlink);
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

/// Run nvcc as the user gave it, because the plan cannot be carried out (`why`, whose message says what failed),
/// saying on stderr what that drops; in a dry run, print nothing more and fail with `why`, its help included.
/// Returns only on error.
pub fn run_as_given(
    ctx: &crate::context::Context,
    plan: &crate::plan::Plan,
    depth: u32,
    why: Error,
    dry_run: bool,
) -> Error {
    if dry_run {
        return why;
    }
    crate::error::output::warning(format_args!("{}: running nvcc as given, {}", why.message, dropped(plan)));
    let err = exec_as_given(&plan.nvcc.path, &ctx.args, &ctx.env, depth);
    cannot_run(&plan.nvcc, err)
}

/// What a plan would have changed, as one clause for a warning that says it is dropped: the additions, the
/// removals, the rewritten options files and the variables it sets.
pub fn dropped(plan: &crate::plan::Plan) -> String {
    let words = |w: &[OsString]| crate::error::shell::display(w.iter().map(OsString::as_os_str));
    let mut parts = Vec::new();
    let added: Vec<OsString> =
        plan.changes.before.iter().chain(&plan.changes.after).flat_map(|a| a.args.iter().cloned()).collect();
    if !added.is_empty() {
        parts.push(format!("without adding `{}`", words(&added)));
    }
    let removed: Vec<OsString> = plan.changes.removed.iter().flat_map(|r| r.tokens.iter().cloned()).collect();
    if !removed.is_empty() {
        parts.push(format!("keeping `{}` that it would have removed", words(&removed)));
    }
    for w in &plan.changes.written {
        let name = w.replaces.value.clone().unwrap_or_default();
        parts.push(format!("reading the options file {} as it is", crate::error::shell::display([name.as_os_str()])));
    }
    for (name, _) in plan.changes.env.iter().filter(|(name, _)| *name != crate::context::vars::DEPTH) {
        parts.push(format!("with ${name} as you set it"));
    }
    if let Some(launcher) = &plan.decided.launcher {
        parts.push(format!("without the launcher {}", crate::error::shell::path(launcher)));
    }
    if parts.is_empty() {
        "without the wrapper's loop counter".to_string()
    } else {
        parts.join(", ")
    }
}
