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
use crate::error::{Error, ErrorKind, Result};
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
        return Err(Error::new(ErrorKind::Usage, "`check-reproducible`: the nvcc call names no output file (`-o`)")
            .with_help("give the call's `-o FILE`, as the build does: that file is built twice and compared"));
    };
    let output = ctx.cwd.join(output);
    // Only a regular file can be compared: a device, a FIFO or a terminal is never opened (reading one could block),
    // and the builds are not run.
    if let Ok(meta) = std::fs::metadata(&output) {
        if !meta.is_file() {
            return Err(Error::new(
                ErrorKind::Usage,
                format!(
                    "`check-reproducible`: the output {} is not a regular file",
                    crate::error::shell::path(&output)
                ),
            )
            .with_help("name the call's output file (`-o FILE`), which must be a regular file, or none yet"));
        }
    }
    let me = ctx.current_exe.as_deref().ok_or_else(|| {
        Error::new(ErrorKind::Internal, "`check-reproducible`: the wrapper cannot tell its own path")
            .with_help("run it by its full path")
    })?;
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
        Some(difference) => Err(Error::new(
            ErrorKind::CheckFailed,
            format!("{shown} differs between two builds (other process ids and TMPDIRs): first {difference}"),
        )
        .with_help(
            "`nvcc-wrapper explain -- ARGS` shows the reproducible-builds flags this call gets and what no flag \
             fixes; the guide's \"Reproducible builds\" page says what each section's difference means",
        )),
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
        crate::context::dirs::prepare(&tmpdir).map_err(|e| {
            Error::new(
                ErrorKind::Output,
                format!("cannot make the temporary directory {}: {e}", crate::error::shell::path(&tmpdir)),
            )
            .with_help(crate::context::dirs::write_help(&e, base, "$TMPDIR", None))
        })?;
        env.set(vars::TMPDIR, tmpdir.as_os_str());
        let status = exec::run_and_wait(me, "nvcc".as_ref(), args, env).map_err(|e| {
            Error::new(
                ErrorKind::CannotExec,
                format!("cannot run the drop-in ({}): {e}", crate::error::shell::path(me)),
            )
            .with_help("run the check with the installed nvcc-wrapper")
        })?;
        if !status.success() {
            return Err(Error::new(
                ErrorKind::CheckFailed,
                format!("build {n} of 2 failed ({status}): nothing to compare"),
            )
            .with_help("run the same nvcc call by itself and fix what it says first"));
        }
        // Bounded, and only a regular file (a build that made the output a FIFO is not waited on).
        let bytes = crate::error::bounded::read(output, crate::error::bounded::ELF).map_err(|e| {
            Error::new(
                ErrorKind::CheckFailed,
                format!("build {n} of 2 wrote no {}: {e}", crate::error::shell::path(output)),
            )
            .with_help("`-o` must name the regular file the call writes")
        })?;
        builds.push(bytes);
    }
    let second = builds.pop().unwrap_or_default();
    Ok((builds.pop().unwrap_or_default(), second))
}
