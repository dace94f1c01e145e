//! The wrapper's own command line, used when it is called as `nvcc-wrapper` (any other name makes it a drop-in nvcc).
//! clap parses only this; nvcc's own arguments are never given to clap.

mod check;
pub mod compare;
mod compat;
mod doctor;
mod explain;
mod gencode;
mod jobserver;
pub mod problems;

use clap::{Parser, Subcommand};

use crate::context::Context;
use crate::error::{Error, Result};

#[derive(Debug, Parser)]
#[command(
    name = "nvcc-wrapper",
    version,
    about = "A drop-in nvcc: install it as `nvcc`. Called as nvcc-wrapper, it explains itself."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The subcommands, each in a file of its own that holds its arguments and its run.
#[derive(Debug, Subcommand)]
enum Command {
    /// Print the command the drop-in nvcc would run for these arguments, and why, without running it.
    Explain(explain::Args),
    /// Check the configuration, the real nvcc and its release, the compilers, the choice and its libstdc++.
    Doctor,
    /// Build one nvcc call twice through the drop-in, each time with a TMPDIR of its own (so nvcc runs under
    /// another process id), and compare its output file: the same bytes (exit 0), or where they first differ, by
    /// ELF section or archive member (exit 3).
    CheckReproducible(check::Args),
    /// Run a build under a jobserver of N job slots (GNU make's protocol, named so that make 4.3 and 4.4 and Ninja
    /// 1.13 all take part), so that the build tool and the threads nvcc takes from free slots share them: for Ninja
    /// (1.13 or later, run without -j), and so CMake's and Meson's Ninja builds. GNU make is its own jobserver: run
    /// it as `make -jN`.
    Jobserver(jobserver::Args),
    /// The compatibility tables.
    #[command(subcommand)]
    Compat(compat::Command),
    /// Print the GPU target flags for capabilities, by the rules the drop-in nvcc uses, for other build systems.
    ///
    /// Without capabilities, those of the config (`[gpu] capabilities` and `forward-compat`, or their environment
    /// variables) are used. They are checked against the NVCC release as the drop-in learns it (--cuda-version, else
    /// the config's `cuda-version`, else the real nvcc's own), and against the table alone when none is known. The
    /// target is this machine's unless --system, --platform or the config's `[target]` names another.
    Gencode(gencode::Args),
}

/// The wrapper's own command line, as clap defines it (for the man page).
#[cfg(test)]
pub(crate) fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}

pub fn run(ctx: &Context) -> Result<i32> {
    let cli = match Cli::try_parse_from(std::iter::once(ctx.argv0.clone()).chain(ctx.args.iter().cloned())) {
        Ok(cli) => cli,
        // --help and --version are successes clap reports as errors; it prints them itself.
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            return Ok(0);
        }
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            // `nvcc-wrapper compat` alone names its own subcommands, not the top level's.
            if ctx.args.first().is_some_and(|a| a == "compat") {
                return Err(problems::Refused::CompatAlone.into());
            }
            // `nvcc-wrapper` alone: its help, as the help's first line promises ("called as nvcc-wrapper, it
            // explains itself"), on stdout and with success, as `--help`.
            let _ = <Cli as clap::CommandFactory>::command().print_help();
            return Ok(0);
        }
        Err(e) => return Err(usage_error(&e.render().to_string(), ctx.args.first())),
    };
    match cli.command {
        Command::Explain(args) => explain::run(ctx, args),
        Command::Doctor => doctor::main(ctx),
        Command::CheckReproducible(args) => check::run(ctx, args),
        Command::Jobserver(args) => jobserver::run(ctx, args),
        Command::Compat(command) => compat::run(ctx, command),
        Command::Gencode(args) => gencode::run(ctx, args),
    }
}

/// clap's report of a bad command line, in the wrapper's own shape: one `nvcc-wrapper: error:` line (clap's error
/// with its indented details joined to it) and a `help:` line with the usage, or, where clap gives none (a bad
/// value), the `--help` of the subcommand the call named first.
fn usage_error(rendered: &str, first: Option<&std::ffi::OsString>) -> Error {
    let mut lines = rendered.lines();
    let mut message = lines.next().unwrap_or_default().trim_start_matches("error: ").trim_end_matches(':').to_string();
    let mut usage = None;
    for line in lines {
        if let Some(u) = line.strip_prefix("Usage: ") {
            usage = Some(u.trim().to_string());
        } else if line.starts_with(' ') && usage.is_none() && !line.trim().is_empty() {
            message += &format!(": {}", line.trim());
        }
    }
    // The command's own words, before its first option or value (`nvcc-wrapper gencode`), so that the help line's
    // `--help` runs as printed.
    let subcommands = <Cli as clap::CommandFactory>::command();
    let named = first.and_then(|f| subcommands.get_subcommands().find(|s| *f == s.get_name()));
    let fallback = named.map_or("nvcc-wrapper".to_string(), |s| format!("nvcc-wrapper {}", s.get_name()));
    let words: Vec<&str> = usage
        .as_deref()
        .unwrap_or(&fallback)
        .split(' ')
        .take_while(|w| !w.is_empty() && !w.starts_with(['-', '<', '[']))
        .collect();
    let command = words.join(" ");
    problems::Refused::Usage { message, usage, command }.into()
}
