//! The wrapper's own command line, used when it is called as `nvcc-wrapper` (any other name makes it a drop-in nvcc).
//! clap parses only this; nvcc's own arguments are never given to clap.

use std::ffi::OsString;

use clap::{Parser, Subcommand, ValueEnum};

use crate::compat::{Item, TargetList};
use crate::config::{Origin, Sourced, TargetConfig, TargetPlatform};
use crate::context::Context;
use crate::error::{Error, ErrorKind, Result};
use crate::plan::{gpu, target};
use crate::prepare::Settings;
use crate::probe::system::Probes as _;
use crate::version::Version;
use crate::{output, prepare, report};

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
        /// text: lines for people; json: the plan as data for build tools (docs/reference/explain-json.md).
        #[arg(long, value_enum, default_value_t = ExplainFormat::Text)]
        format: ExplainFormat,
        /// nvcc's arguments, after `--` (for example: nvcc-wrapper explain -- -c kernel.cu).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<OsString>,
    },
    /// Check the configuration, the real nvcc and its release, the compilers, the choice and its libstdc++.
    Doctor,
    /// Build one nvcc call twice through the drop-in, each time with a TMPDIR of its own (so nvcc runs under
    /// another process id), and compare its output file: the same bytes (exit 0), or where they first differ, by
    /// ELF section or archive member (exit 3).
    CheckReproducible {
        /// nvcc's arguments, after `--`, with the output file (for example: nvcc-wrapper check-reproducible -- -c
        /// kernel.cu -o kernel.o).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
        args: Vec<OsString>,
    },
    /// Run a build under a jobserver of N job slots (GNU make's protocol, named so that make 4.3 and 4.4 and Ninja
    /// 1.13 all take part), so that the build tool and the threads nvcc takes from free slots share them: for Ninja
    /// (1.13 or later, run without -j), and so CMake's and Meson's Ninja builds. GNU make is its own jobserver: run
    /// it as `make -jN`.
    Jobserver {
        /// How many job slots (the build's jobs and nvcc's extra threads together); default: the processors this
        /// process may use.
        #[arg(short = 'j', long = "jobs", value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        jobs: Option<u32>,
        /// The build command, after `--` (for example: nvcc-wrapper jobserver -j 16 -- ninja -C build).
        #[arg(trailing_var_arg = true, required = true)]
        command: Vec<OsString>,
    },
    /// The compatibility tables.
    #[command(subcommand)]
    Compat(CompatCommand),
    /// Print the GPU target flags for capabilities, by the rules the drop-in nvcc uses, for other build systems.
    ///
    /// Without capabilities, those of the config (`[gpu] capabilities` and `forward-compat`, or their environment
    /// variables) are used. They are checked against the NVCC release as the drop-in learns it (--cuda-version, else
    /// the config's `cuda-version`, else the real nvcc's own), and against the table alone when none is known. The
    /// target is this machine's unless --system, --platform or the config's `[target]` names another.
    Gencode {
        /// Check against this NVCC release (12.4, 13.0.88); default: the config's `cuda-version`, else the real nvcc's.
        #[arg(long, value_name = "X.Y")]
        cuda_version: Option<String>,
        /// Also embed PTX of the highest capability's baseline, for newer GPUs.
        #[arg(long)]
        forward_compat: bool,
        /// nvcc: one flag per line; cmake: a CUDA_ARCHITECTURES value; torch: a TORCH_CUDA_ARCH_LIST value; json:
        /// everything.
        #[arg(long, value_enum, default_value_t = Format::Nvcc)]
        format: Format,
        /// The target system, as `[target] system` (aarch64-linux, x86_64-linux, a GNU triple).
        #[arg(long)]
        system: Option<String>,
        /// The aarch64 platform, as `[target] platform`.
        #[arg(long, value_enum)]
        platform: Option<PlatformArg>,
        /// GPU targets in any dialect: 8.6, 9.0a, 8.6+PTX, 86-real, 90-virtual, sm_86, compute_90, all, all-major,
        /// native; one argument may hold a list ("8.6;9.0a"). Default: the config's.
        #[arg(value_name = "CAPABILITY")]
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
    /// Write the built-in tables, each file as the wrapper was built with it (comments on every field included),
    /// into a directory (created if missing; no file is overwritten): to read, or to edit for `compat-data`.
    Dump {
        /// The directory to write them to.
        dir: std::path::PathBuf,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Nvcc,
    Cmake,
    Torch,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ExplainFormat {
    Text,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum PlatformArg {
    Jetson,
    Sbsa,
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
                return Err(Error::new(ErrorKind::Usage, "nvcc-wrapper compat requires a subcommand: scan or dump")
                    .with_help("`nvcc-wrapper compat --help` says what each does"));
            }
            return Err(Error::new(
                ErrorKind::Usage,
                "nvcc-wrapper requires a subcommand: explain, doctor, check-reproducible, gencode, jobserver or compat",
            )
            .with_help("`nvcc-wrapper --help` says what each does; installed as `nvcc`, the wrapper is the drop-in"));
        }
        Err(e) => return Err(usage_error(&e.render().to_string())),
    };
    match cli.command {
        Command::Explain { format, args } => explain(ctx, format, args),
        Command::Doctor => crate::doctor::main(ctx),
        Command::CheckReproducible { args } => crate::check::reproducible(ctx, args),
        Command::Compat(CompatCommand::Scan { root }) => compat_scan(ctx, &ctx.absolute(&root)),
        Command::Compat(CompatCommand::Dump { dir }) => compat_dump(&ctx.absolute(&dir)),
        Command::Jobserver { jobs, command } => {
            let jobs = jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u32));
            crate::exec::jobserver::serve(ctx, jobs, &command)
        }
        Command::Gencode { cuda_version, forward_compat, format, system, platform, capabilities } => {
            gencode(ctx, cuda_version, forward_compat, format, system, platform, capabilities)
        }
    }
}

/// clap's report of a bad command line, in the wrapper's own shape: one `nvcc-wrapper: error:` line (clap's error
/// with its indented details joined to it) and a `help:` line with the usage.
fn usage_error(rendered: &str) -> Error {
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
    let words: Vec<&str> = usage
        .as_deref()
        .unwrap_or("nvcc-wrapper")
        .split(' ')
        .take_while(|w| !w.is_empty() && !w.starts_with(['-', '<', '[']))
        .collect();
    let command = words.join(" ");
    let help = match &usage {
        Some(u) => format!("usage: {u}; `{command} --help` says more"),
        None => format!("`{command} --help` says more"),
    };
    Error::new(ErrorKind::Usage, message).with_help(help)
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
    // The same preparation as the drop-in nvcc: the config with the environment's overrides, and its tables. The
    // flags take the place of the settings they name.
    let settings = Settings::load(ctx)?;
    let (config, compat) = (&settings.config.config, &settings.compat);
    let probes =
        crate::probe::system::System::new(Some(ctx.search_path().into()), ctx.cwd.clone(), prepare::probe_cache(ctx)?);
    let (list, forward_compat) = if capabilities.is_empty() {
        if config.gpu.capabilities.is_empty() {
            return Err(usage(
                "no capability given, and the config names none".into(),
                "name capabilities like 8.6 9.0a, or set `[gpu] capabilities` in the config",
            ));
        }
        (config.gpu.capabilities.value.clone(), forward_compat || *config.gpu.forward_compat)
    } else {
        let mut list = TargetList::default();
        for arg in &capabilities {
            let parsed = TargetList::parse(arg).map_err(|e| {
                usage(format!("the capability argument `{arg}`: {e}"), "name capabilities like 8.6 9.0a")
            })?;
            list.0.extend(parsed.0);
        }
        if list.is_empty() {
            return Err(usage("no capability given".into(), "name capabilities like 8.6 9.0a"));
        }
        (list, forward_compat)
    };
    let release = gencode_release(ctx, &settings, &probes, cuda_version, &list)?;
    // The target: the flags when given (errors then name them), else the config's `[target]`, which is this
    // machine's unless it names another: the platform's own capabilities, as the drop-in builds them.
    let target = if system.is_some() || platform.is_some() {
        let flag = |name| Origin::Flag(name);
        let platform = platform.map(|p| match p {
            PlatformArg::Jetson => TargetPlatform::Jetson,
            PlatformArg::Sbsa => TargetPlatform::Sbsa,
        });
        TargetConfig {
            system: system.map(|s| Sourced::new(s, flag("--system"))),
            platform: platform.map(|p| Sourced::new(p, flag("--platform"))),
            ..TargetConfig::default()
        }
    } else {
        config.target.clone()
    };
    let named = target::Named::of(&target);
    let (platform, _) = target::resolve(&target, &named, &compat.platforms, release)?;
    let nix_build = crate::dirs::in_nix_build(&ctx.env);
    let targets = gpu::resolve(&list, compat, release, Some(platform), nix_build, || probes.gpus())?;
    let expansion = gpu::expand(&targets, forward_compat);
    gpu::check(&expansion, &gpu::Against { compat, release, platform: Some(platform), named: &named })?;
    let torch = || {
        expansion.targets().torch().map_err(|alone| {
            Error::new(
                ErrorKind::Request,
                format!("TORCH_CUDA_ARCH_LIST has no way to say PTX of {alone} without its machine code"),
            )
            .with_help(format!("add {alone} itself to the list (then `{alone}+PTX`), or use --format cmake or nvcc"))
        })
    };
    let out = match format {
        Format::Nvcc => expansion.gencode().join("\n") + "\n",
        Format::Cmake => expansion.cmake() + "\n",
        Format::Torch => torch()? + "\n",
        Format::Json => {
            let value = serde_json::json!({
                "capabilities": expansion.real,
                "forward_compat": forward_compat,
                "ptx": expansion.ptx,
                "checked_against": release.map(|r| r.to_string()),
                "platform": platform.name,
                "gencode": expansion.gencode(),
                "cmake": expansion.cmake(),
                "torch": torch().ok(),
            });
            value.to_string() + "\n"
        }
    };
    output::stdout(out)?;
    Ok(0)
}

/// The release `gencode` checks against: `--cuda-version`, else the one the drop-in would build with here (the
/// config's `cuda-version`, else what the real nvcc it finds says), so that both give the same targets for a list.
/// `None` when none is known (an error for `all` and `all-major`, which stand for the release's targets) or it is
/// older than the capability table.
fn gencode_release(
    ctx: &Context,
    settings: &Settings,
    probes: &crate::probe::system::System,
    flag: Option<String>,
    list: &TargetList,
) -> Result<Option<Version>> {
    let compat = &settings.compat;
    let release = match (flag, settings.config.config.cuda_version) {
        (Some(v), _) => {
            let usage =
                |message| Error::new(ErrorKind::Usage, message).with_help("give the release as --cuda-version 12.4");
            let v = v.parse::<Version>().map_err(|e| usage(format!("`--cuda-version {v}`: {e}")))?;
            if !v.has_minor() || compat.host_compilers.limits_for(v).is_none() {
                return Err(crate::plan::not_in_tables(compat, &format!("`--cuda-version {v}`"), ErrorKind::Usage));
            }
            v
        }
        (None, Some(v)) => v,
        (None, None) => {
            let found = crate::locate::locate(ctx, &settings.config)
                .map_err(|e| e.message)
                .and_then(|located| probes.nvcc_version(&located.nvcc.path));
            match (found, [Item::All, Item::AllMajor].into_iter().find(|w| list.has(*w))) {
                (Ok((version, _)), _) => version,
                (Err(_), None) => return Ok(None),
                (Err(why), Some(word)) => {
                    let message = format!(
                        "`{word}` stands for what the nvcc release builds, and none is known: no `--cuda-version`, no `cuda-version` in the config, and {why}"
                    );
                    let help = "give the release, as in `--cuda-version 13.0`, or put the real nvcc on PATH";
                    return Err(Error::new(ErrorKind::Request, message).with_help(help));
                }
            }
        }
    };
    Ok(gpu::checkable(release, compat))
}

fn explain(ctx: &Context, format: ExplainFormat, args: Vec<OsString>) -> Result<i32> {
    let prepared = prepare::describe(ctx, args)?;
    let now = threads_now(ctx, &prepared);
    match format {
        ExplainFormat::Text => {
            let mut text = report::text(&prepared);
            if let Some((slots, memory, threads)) = &now {
                let follow = prepared.plan.decided.threads.as_ref().filter(|t| t.follow);
                let runs = match (follow, *threads > 1) {
                    (Some(t), _) if *threads < t.most => {
                        format!("{threads} of nvcc's targets at once, and more as slots free")
                    }
                    (Some(_), _) => format!("{threads} of nvcc's targets at once"),
                    (None, true) => format!("with --threads {threads}"),
                    (None, false) => "with nvcc's one thread".to_string(),
                };
                text += &format!("now:         {slots} free job slots; {memory}: the call would run {runs}\n");
            }
            output::stdout(text)?
        }
        ExplainFormat::Json => {
            let mut plan = report::json::plan(&prepared);
            if let Some((slots, memory, threads)) = now {
                plan["threads-now"] =
                    serde_json::json!({"free-slots": slots, "memory": memory.to_string(), "threads": threads});
            }
            output::stdout(plan.to_string() + "\n")?
        }
    }
    Ok(0)
}

/// What a call that may take threads would take now: the job slots free (seen, not taken), what the memory free
/// holds, and the threads that makes. Only `explain` asks: the drop-in reads the memory only once it holds a slot.
fn threads_now(ctx: &Context, prepared: &prepare::Prepared) -> Option<(usize, crate::plan::threads::Memory, u32)> {
    let threads = prepared.plan.decided.threads.as_ref()?;
    let crate::context::Jobserver::Usable(client) = &ctx.jobserver else { return None };
    let slots = client.free();
    let memory = crate::plan::threads::Memory::judge(threads.per_thread_mib, crate::probe::memory::free());
    let extra = (threads.most - 1).min(slots as u32).min(memory.threads() - 1);
    Some((slots, memory, 1 + extra))
}

fn compat_dump(dir: &std::path::Path) -> Result<i32> {
    output::directory(dir)?;
    let files: Vec<(&str, &[u8])> = crate::compat::BUILT_IN_FILES.iter().map(|(n, t)| (*n, t.as_bytes())).collect();
    output::new_files(dir, &files)?;
    output::stdout(format!(
        "wrote {} to {}; set `compat-data = {:?}` in the config to use them\n",
        crate::compat::FILES.join(", "),
        crate::shell::path(dir),
        dir.display().to_string()
    ))?;
    Ok(0)
}

fn compat_scan(ctx: &Context, root: &std::path::Path) -> Result<i32> {
    if !root.is_dir() {
        return Err(Error::new(
            ErrorKind::Usage,
            format!("`compat scan {}`: no such directory", crate::shell::path(root)),
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
