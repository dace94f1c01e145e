//! `nvcc-wrapper compat`: the compatibility tables: `scan` checks a toolkit's host_config.h against them, `dump`
//! writes the built-in ones out.

use std::path::{Path, PathBuf};

use clap::Subcommand;

use crate::context::Context;
use crate::error::output;
use crate::error::{Error, ErrorKind, Result};
use crate::prepare::Settings;

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Read a toolkit's include/crt/host_config.h and print the host-compiler row it implies; fail (exit 3) when the
    /// built-in or configured table disagrees.
    Scan {
        /// A CUDA toolkit root (holding bin/ and include/), or a header set.
        root: PathBuf,
    },
    /// Write the built-in tables, each file as the wrapper was built with it (comments on every field included),
    /// into a directory (created if missing; no file is overwritten): to read, or to edit for `compat-data`.
    Dump {
        /// The directory to write them to.
        dir: PathBuf,
    },
}

pub fn run(ctx: &Context, command: Command) -> Result<i32> {
    match command {
        Command::Scan { root } => scan(ctx, &ctx.absolute(&root)),
        Command::Dump { dir } => dump(&ctx.absolute(&dir)),
    }
}

fn dump(dir: &Path) -> Result<i32> {
    output::directory(dir)?;
    let files: Vec<(&str, &[u8])> = crate::compat::BUILT_IN_FILES.iter().map(|(n, t)| (*n, t.as_bytes())).collect();
    output::new_files(dir, &files)?;
    output::stdout(format!(
        "wrote {} to {}; set `compat-data = {:?}` in the config to use them\n",
        crate::compat::FILES.join(", "),
        crate::error::shell::path(dir),
        dir.display().to_string()
    ))?;
    Ok(0)
}

fn scan(ctx: &Context, root: &Path) -> Result<i32> {
    if !root.is_dir() {
        return Err(Error::new(
            ErrorKind::Usage,
            format!("`compat scan {}`: no such directory", crate::error::shell::path(root)),
        )
        .with_help("give the root of a CUDA toolkit (the directory holding bin/ and include/)"));
    }
    let scan = crate::probe::toolkit::scan(root)?;
    output::stdout(scan.row())?;
    let settings = Settings::load(ctx)?;
    scan.check(&settings.compat.host_compilers)?;
    output::stdout("# agrees with the compatibility table\n")?;
    Ok(0)
}
