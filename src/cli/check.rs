//! `nvcc-wrapper check-reproducible -- ARGS`: whether one nvcc call of a user's build gives the same bytes twice.
//!
//! It runs the drop-in (this binary, as `nvcc`, with the config the wrapper reads here) on ARGS twice, one run after
//! the other, each with a `TMPDIR` of its own: so nvcc runs under another process id, names its temporary files in
//! another directory, at another time, as two builds of one package do. After each run it keeps a copy of the output
//! file (`-o`), and then compares the two: the same bytes (exit 0), or where they first differ (exit 3, with the ELF
//! section or archive member: `compare`). Another build directory is not tried: what nvcc writes of its working
//! directory is said by `explain` (the limits of docs/guide/reproducible.md).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::compare;
use crate::context::{vars, Context};
use crate::error::output;
use crate::error::{ErrorKind, Problem, Result};
use crate::{exec, prepare};

/// Its arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// nvcc's arguments, after `--`, with the output file (for example: nvcc-wrapper check-reproducible -- -c
    /// kernel.cu -o kernel.o).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
    args: Vec<OsString>,
}

pub fn run(ctx: &Context, Args { args }: Args) -> Result<i32> {
    let prepared = prepare::prepare(ctx, args.clone())?;
    let Some(output) = prepared.invocation.output_file() else {
        return Err(Refused::NoOutput.into());
    };
    let output = ctx.cwd.join(output);
    // Only a regular file can be compared: a device, a FIFO or a terminal is never opened (reading one could block),
    // and the builds are not run.
    if let Ok(meta) = std::fs::metadata(&output) {
        if !meta.is_file() {
            return Err(Refused::NotRegular { output }.into());
        }
    }
    let me = ctx.current_exe().ok_or(Refused::NoOwnPath)?;
    let mut env = ctx.env.clone();
    // The children read the config this call read, wherever it was found.
    if let Some(config) = &prepared.setup.settings.config.path {
        env.set(vars::CONFIG, config.as_os_str());
    }
    let base = crate::context::dirs::private_temporary(&ctx.env).join(format!("check-reproducible-{}", ctx.pid));
    let result = build_twice(me, &args, &mut env, &base, &output);
    let _ = std::fs::remove_dir_all(&base);
    let (first, second) = result?;
    let shown = crate::error::shell::path(&output);
    match compare::first_difference(&first, &second) {
        None => {
            output::stdout(format!(
                "reproducible: {shown} was the same {} bytes twice (built with other process ids and TMPDIRs)\n",
                first.len()
            ))?;
            Ok(0)
        }
        Some(difference) => Err(Refused::Differs { output, difference: difference.to_string() }.into()),
    }
}

/// Run the drop-in twice, each with a fresh TMPDIR under `base`; the output file's bytes after each.
fn build_twice(
    me: &Path,
    args: &[OsString],
    env: &mut crate::context::Env,
    base: &Path,
    output: &Path,
) -> Result<(Vec<u8>, Vec<u8>)> {
    let mut builds = Vec::new();
    for n in 1..=2 {
        let tmpdir: PathBuf = base.join(format!("tmp{n}"));
        crate::context::dirs::prepare(&tmpdir).map_err(|err| Refused::Temporary {
            tmpdir: tmpdir.clone(),
            base: base.to_path_buf(),
            err,
        })?;
        env.set(vars::TMPDIR, tmpdir.as_os_str());
        let status = exec::run_and_wait(me, "nvcc".as_ref(), args, env)
            .map_err(|err| Refused::CannotRun { me: me.to_path_buf(), err })?;
        if !status.success() {
            return Err(Refused::BuildFailed { n, status }.into());
        }
        // Bounded, and only a regular file (a build that made the output a FIFO is not waited on).
        let bytes = crate::error::bounded::read(output, crate::error::bounded::ELF).map_err(|e| Refused::NoFile {
            n,
            output: output.to_path_buf(),
            why: e.to_string(),
        })?;
        builds.push(bytes);
    }
    let second = builds.pop().unwrap_or_default();
    Ok((builds.pop().unwrap_or_default(), second))
}

/// What `check-reproducible` refuses or finds, as data: each with a stable code (`Coded`), its words once (`Display`,
/// `help`), and its kind (`Problem`).
#[derive(Debug)]
pub enum Refused {
    /// The call names no `-o`.
    NoOutput,
    /// The output is there, and not a regular file.
    NotRegular { output: PathBuf },
    /// The wrapper cannot tell its own path, to run the drop-in.
    NoOwnPath,
    /// A build's temporary directory cannot be made in `base`.
    Temporary { tmpdir: PathBuf, base: PathBuf, err: std::io::Error },
    /// The drop-in (`me`) cannot be started.
    CannotRun { me: PathBuf, err: std::io::Error },
    /// Build `n` of 2 failed.
    BuildFailed { n: usize, status: std::process::ExitStatus },
    /// Build `n` of 2 wrote no output (`why`).
    NoFile { n: usize, output: PathBuf, why: String },
    /// The two builds' outputs differ, first at `difference`.
    Differs { output: PathBuf, difference: String },
}

crate::error::codes!(Refused {
    NoOutput => "no-output",
    NotRegular => "not-regular",
    NoOwnPath => "no-own-path",
    Temporary => "temporary",
    CannotRun => "cannot-run",
    BuildFailed => "build-failed",
    NoFile => "no-file",
    Differs => "differs",
});

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::error::shell::path;
        match self {
            Refused::NoOutput => f.write_str("`check-reproducible`: the nvcc call names no output file (`-o`)"),
            Refused::NotRegular { output } => {
                write!(f, "`check-reproducible`: the output {} is not a regular file", path(output))
            }
            Refused::NoOwnPath => f.write_str("`check-reproducible`: the wrapper cannot tell its own path"),
            Refused::Temporary { tmpdir, err, .. } => {
                write!(f, "cannot make the temporary directory {}: {err}", path(tmpdir))
            }
            Refused::CannotRun { me, err } => write!(f, "cannot run the drop-in ({}): {err}", path(me)),
            Refused::BuildFailed { n, status } => write!(f, "build {n} of 2 failed ({status}): nothing to compare"),
            Refused::NoFile { n, output, why } => write!(f, "build {n} of 2 wrote no {}: {why}", path(output)),
            Refused::Differs { output, difference } => write!(
                f,
                "{} differs between two builds (other process ids and TMPDIRs): first {difference}",
                path(output)
            ),
        }
    }
}

impl Problem for Refused {
    /// What to do about it.
    fn help(&self) -> Option<String> {
        Some(match self {
            Refused::NoOutput => {
                "give the call's `-o FILE`, as the build does: that file is built twice and compared".to_string()
            }
            Refused::NotRegular { .. } => {
                "name the call's output file (`-o FILE`), which must be a regular file, or none yet".to_string()
            }
            Refused::NoOwnPath => "run it by its full path".to_string(),
            Refused::Temporary { base, err, .. } => crate::context::dirs::write_help(err, base, "$TMPDIR", None),
            Refused::CannotRun { .. } => "run the check with the installed nvcc-wrapper".to_string(),
            Refused::BuildFailed { .. } => "run the same nvcc call by itself and fix what it says first".to_string(),
            Refused::NoFile { .. } => "`-o` must name the regular file the call writes".to_string(),
            Refused::Differs { .. } => "`nvcc-wrapper explain -- ARGS` shows the reproducible-builds flags this call gets and what no flag fixes; the guide's \"Reproducible builds\" page says what each section's difference means".to_string(),
        })
    }

    fn kind(&self) -> ErrorKind {
        match self {
            Refused::NoOutput | Refused::NotRegular { .. } => ErrorKind::Usage,
            Refused::NoOwnPath => ErrorKind::Internal,
            Refused::Temporary { .. } => ErrorKind::Output,
            Refused::CannotRun { .. } => ErrorKind::CannotExec,
            Refused::BuildFailed { .. } | Refused::NoFile { .. } | Refused::Differs { .. } => ErrorKind::CheckFailed,
        }
    }
}
