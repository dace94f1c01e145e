//! `nvcc-wrapper compat`: the compatibility tables: `scan` checks a toolkit's host_config.h against them, `show`
//! says what they hold for one release, `dump` writes the built-in ones out, `nix-answers` prints what the Nix side
//! looks up in them.

use std::path::{Path, PathBuf};

use clap::Subcommand;

use crate::context::Context;
use crate::error::output;
use crate::error::{ErrorKind, Result};
use crate::prepare::Settings;

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Read a toolkit's include/crt/host_config.h and print the host-compiler row it implies; fail (exit 3) when the
    /// built-in or configured table disagrees.
    Scan {
        /// A CUDA toolkit root (holding bin/ and include/), or a header set.
        root: PathBuf,
    },
    /// Print what the tables say of one NVCC release: the host compilers it accepts and the GPU capabilities it
    /// compiles for (`compat show 12.4`).
    Show {
        /// A release, with its minor part (12.4, 13.0).
        #[arg(value_name = "RELEASE")]
        release: String,
    },
    /// Write the built-in tables, each file as the wrapper was built with it (comments on every field included),
    /// into a directory (created if missing; no file is overwritten): to read, or to edit for `compat-data`.
    Dump {
        /// The directory to write them to.
        dir: PathBuf,
    },
    /// Print the answers the Nix side looks up at evaluation time (makeNvccWrapper's answers.json), from the built-in
    /// tables: the file a Nix package of this binary must hold, byte for byte.
    NixAnswers,
}

pub fn run(ctx: &Context, command: Command) -> Result<i32> {
    match command {
        Command::Scan { root } => scan(ctx, &ctx.absolute(&root)),
        Command::Dump { dir } => dump(&ctx.absolute(&dir)),
        Command::Show { release } => show(ctx, &release),
        Command::NixAnswers => {
            output::stdout(crate::nix_answers::render(&crate::compat::Compat::built_in())).map(|()| 0)
        }
    }
}

/// The tables' answers for one release, as the config's `compat-data` (or the built-in tables) give them (issue 60:
/// "which GCC does 12.4 take" had no command).
fn show(ctx: &Context, release: &str) -> Result<i32> {
    let settings = Settings::load(ctx)?;
    let compat = &settings.compat;
    let named = format!("`compat show {release}`: {release}");
    let version = release
        .parse::<crate::compat::Version>()
        .ok()
        .filter(|v| v.has_minor() && compat.host_compilers.releases().iter().any(|r| r.nvcc.release() == v.release()))
        .ok_or_else(|| crate::plan::not_in_tables(compat, &named, ErrorKind::Usage))?;
    let row = compat.host_compilers.limits_for(version).expect("checked above");
    let capabilities: Vec<String> =
        compat.capabilities.all().iter().filter(|c| c.accepted_by(version)).map(|c| c.capability.to_string()).collect();
    output::stdout(format!(
        "nvcc {version}\n  host compilers:   {} ({})\n  GPU capabilities: {}\n",
        row.accepts().describe(),
        row.source,
        capabilities.join(" ")
    ))?;
    Ok(0)
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
        return Err(crate::probe::toolkit::Refused::NotADirectory { root: root.to_path_buf() }.into());
    }
    let scan = crate::probe::toolkit::scan(root)?;
    output::stdout(scan.row())?;
    let settings = Settings::load(ctx)?;
    scan.check(&settings.compat.host_compilers)?;
    output::stdout("# agrees with the compatibility table\n")?;
    Ok(0)
}
