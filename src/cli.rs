//! The wrapper's own command line, used when it is called as `nvcc-wrapper` (any other name makes it a drop-in nvcc).
//! clap parses only this; nvcc's own arguments are never given to clap.

use std::ffi::OsString;
use std::io::Write;

use clap::{Parser, Subcommand};

use crate::context::{vars, Context};
use crate::error::{Error, ErrorKind, Result};
use crate::pipeline;
use crate::shell;

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

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the command the drop-in nvcc would run for these arguments, and why, without running it.
    Explain {
        /// nvcc's arguments, after `--` (for example: nvcc-wrapper explain -- -c kernel.cu).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<OsString>,
    },
}

pub fn run(ctx: &Context) -> Result<i32> {
    let cli = match Cli::try_parse_from(std::iter::once(ctx.argv0.clone()).chain(ctx.args.iter().cloned())) {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version are successes clap reports as errors; it prints them itself.
            let code = if e.use_stderr() { ErrorKind::Usage.exit_code() } else { 0 };
            let _ = e.print();
            return Ok(code);
        }
    };
    match cli.command {
        Command::Explain { args } => explain(ctx, args),
    }
}

fn explain(ctx: &Context, args: Vec<OsString>) -> Result<i32> {
    let prepared = pipeline::prepare(ctx, args)?;
    let plan = &prepared.plan;
    let mut out = String::new();
    let config = match &prepared.config.path {
        Some(path) => path.display().to_string(),
        None => "none".to_string(),
    };
    out += &format!("config file: {config}\n");
    for o in &prepared.config.overrides {
        out += &format!("  override: {o}\n");
    }
    out += &format!("real nvcc:   {} (found by {})\n", plan.nvcc.path.display(), plan.nvcc.found_by);
    let mut user = vec![OsString::from("nvcc")];
    user.extend(prepared.invocation.argv.iter().cloned());
    out += &format!("you ran:     {}\n", shell::display(user.iter().map(OsString::as_os_str)));
    if plan.changes_nothing() {
        out += "changes:     none\n";
    } else {
        out += "changes:\n";
        for r in &plan.removed {
            out += &format!(
                "  - {} (from {}): {}\n",
                shell::display(r.tokens.iter().map(OsString::as_os_str)),
                r.found.at.channel.describe(&prepared.invocation),
                r.reason
            );
        }
        for (name, value) in plan.env.iter().filter(|(name, _)| *name != vars::DEPTH) {
            out += &format!("  = {name}={} (for nvcc)\n", shell::display([value.as_os_str()]));
        }
        for (place, additions) in [("before", &plan.before), ("after", &plan.after)] {
            for a in additions.iter() {
                out += &format!(
                    "  + {} ({place} your arguments): {}\n",
                    shell::display(a.args.iter().map(OsString::as_os_str)),
                    a.reason
                );
            }
        }
    }
    for note in &plan.notes {
        out += &format!("  note: {note}\n");
    }
    for warning in &plan.warnings {
        out += &format!("  warning: {warning}\n");
    }
    let command = prepared.final_command();
    out += &format!("runs:        {}\n", shell::display(command.iter().map(OsString::as_os_str)));
    std::io::stdout()
        .write_all(out.as_bytes())
        .map_err(|e| Error::new(ErrorKind::Internal, format!("cannot write to stdout: {e}")))?;
    Ok(0)
}
