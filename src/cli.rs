//! The wrapper's own command line, used when it is called as `nvcc-wrapper` (any other name makes it a drop-in nvcc).
//! clap parses only this; nvcc's own arguments are never given to clap.

use std::ffi::OsString;
use std::io::Write;

use clap::{Parser, Subcommand, ValueEnum};

use crate::compat::{Capability, Compat};
use crate::config::{self, TargetConfig, TargetPlatform};
use crate::context::{vars, Context};
use crate::error::{Error, ErrorKind, Result};
use crate::pipeline;
use crate::plan::{gpu, target};
use crate::shell;
use crate::version::Version;

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
    /// Check the configuration, the real nvcc and its release, the compilers, the choice and its libstdc++.
    Doctor,
    /// The compatibility tables.
    #[command(subcommand)]
    Compat(CompatCommand),
    /// Print the GPU target flags for capabilities, by the rules the drop-in nvcc uses, for other build systems.
    ///
    /// Without --cuda-version, the capabilities are checked only against those the wrapper's table knows; with it,
    /// against what that NVCC release accepts. The Jetson rules apply only when --system or --platform is given.
    Gencode {
        /// Check against this NVCC release (12.4, 13.0.88).
        #[arg(long, value_name = "X.Y")]
        cuda_version: Option<String>,
        /// Also embed PTX of the highest capability's baseline, for newer GPUs.
        #[arg(long)]
        forward_compat: bool,
        /// nvcc: one flag per line; cmake: a CUDA_ARCHITECTURES value; json: everything.
        #[arg(long, value_enum, default_value_t = Format::Nvcc)]
        format: Format,
        /// The target system, as `[target] system` (aarch64-linux, x86_64-linux, a GNU triple).
        #[arg(long)]
        system: Option<String>,
        /// The aarch64 platform, as `[target] platform`.
        #[arg(long, value_enum)]
        platform: Option<PlatformArg>,
        /// Capabilities: 8.6, 86, sm_86, 9.0a, 10.0f; one argument may hold a list ("8.6;9.0a").
        #[arg(required = true, value_name = "CAPABILITY")]
        capabilities: Vec<String>,
    },
}

#[derive(Debug, Subcommand)]
enum CompatCommand {
    /// Read a toolkit's include/crt/host_config.h and print the host-compiler row it implies; fail (exit 3) when the
    /// built-in or configured table disagrees.
    Scan {
        /// A CUDA toolkit root (holding bin/ and include/), or a header set.
        root: std::path::PathBuf,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Nvcc,
    Cmake,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum PlatformArg {
    Jetson,
    Sbsa,
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
        Command::Doctor => crate::doctor::main(ctx),
        Command::Compat(CompatCommand::Scan { root }) => compat_scan(ctx, &ctx.absolute(&root)),
        Command::Gencode { cuda_version, forward_compat, format, system, platform, capabilities } => {
            gencode(ctx, cuda_version, forward_compat, format, system, platform, capabilities)
        }
    }
}

fn gencode(
    ctx: &Context,
    cuda_version: Option<String>,
    forward_compat: bool,
    format: Format,
    system: Option<String>,
    platform: Option<PlatformArg>,
    capabilities: Vec<String>,
) -> Result<i32> {
    let usage = |message: String, help: &str| Error::new(ErrorKind::Usage, message).with_help(help);
    let release = cuda_version
        .map(|v| v.parse::<Version>().map_err(|e| usage(e.to_string(), "give the release as --cuda-version 12.4")))
        .transpose()?;
    let mut caps = Vec::new();
    for arg in &capabilities {
        caps.extend(Capability::parse_list(arg).map_err(|e| usage(e.to_string(), "name capabilities like 8.6 9.0a"))?);
    }
    if caps.is_empty() {
        return Err(usage("no capability given".into(), "name capabilities like 8.6 9.0a"));
    }
    // The same tables as the drop-in nvcc: the built-in ones, or the config's `compat-data`.
    let compat = Compat::load(&config::load(ctx)?)?;
    let platform = if system.is_some() || platform.is_some() {
        let platform = platform.map(|p| match p {
            PlatformArg::Jetson => TargetPlatform::Jetson,
            PlatformArg::Sbsa => TargetPlatform::Sbsa,
        });
        Some(target::platform(&TargetConfig { system, platform, ..TargetConfig::default() }, &compat.platforms)?)
    } else {
        None
    };
    let expansion = gpu::expand(&caps, forward_compat);
    gpu::check(&expansion, &gpu::Against { compat: &compat, release, platform })?;
    let out = match format {
        Format::Nvcc => expansion.gencode().join("\n") + "\n",
        Format::Cmake => expansion.cmake() + "\n",
        Format::Json => {
            let value = serde_json::json!({
                "capabilities": expansion.real,
                "forward_compat": forward_compat,
                "ptx": expansion.ptx,
                "checked_against": release.map(|r| r.to_string()),
                "platform": platform.map(|p| p.name.clone()),
                "gencode": expansion.gencode(),
                "cmake": expansion.cmake(),
            });
            value.to_string() + "\n"
        }
    };
    std::io::stdout()
        .write_all(out.as_bytes())
        .map_err(|e| Error::new(ErrorKind::Internal, format!("cannot write to stdout: {e}")))?;
    Ok(0)
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
    if let Some(cross) = &plan.cross {
        for (label, value) in cross.lines(plan.host.as_ref().map(|h| h.compiler.as_path())) {
            out += &format!("{:<13}{value}\n", format!("{label}:"));
        }
    }
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

fn compat_scan(ctx: &Context, root: &std::path::Path) -> Result<i32> {
    let scan = crate::compat::toolkit::scan(root)?;
    print!("{}", scan.row());
    let config = crate::config::load(ctx)?;
    let compat = crate::compat::Compat::load(&config)?;
    scan.check(&compat.host_compilers)?;
    println!("# agrees with the compatibility table");
    Ok(0)
}
