//! `nvcc-wrapper gencode`: the GPU target flags for capabilities, by the drop-in's own rules, for other build
//! systems (nvcc flags, CMake's CUDA_ARCHITECTURES, PyTorch's TORCH_CUDA_ARCH_LIST, or all as JSON).

use clap::ValueEnum;

use crate::compat::Version;
use crate::compat::{Item, TargetList};
use crate::config::{Origin, Sourced, TargetConfig, TargetPlatform};
use crate::context::Context;
use crate::error::output;
use crate::error::{Error, ErrorKind, Problem, Result};
use crate::plan::{gpu, target, Release};
use crate::prepare::{self, Settings};
use crate::probe::system::{NvccUnknown, Probes as _};

/// Its arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Check against this NVCC release (12.4, 13.0.88); default: the drop-in's, the config's `cuda-version` (unless
    /// the real nvcc's toolkit says another), else the real nvcc's.
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
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Nvcc,
    Cmake,
    Torch,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum PlatformArg {
    Jetson,
    Sbsa,
}

pub fn run(ctx: &Context, args: Args) -> Result<i32> {
    let Args { cuda_version, forward_compat, format, system, platform, capabilities } = args;
    // The same preparation as the drop-in nvcc: the config with the environment's overrides, and its tables. The
    // flags take the place of the settings they name.
    let settings = Settings::load(ctx)?;
    let (config, compat) = (&settings.config.config, &settings.compat);
    let probes =
        crate::probe::system::System::new(Some(ctx.search_path().into()), ctx.cwd.clone(), prepare::probe_cache(ctx)?);
    let (list, forward_compat) = if capabilities.is_empty() {
        if config.gpu.capabilities.is_empty() {
            return Err(Refused::NoCapability { config_read: true }.into());
        }
        (config.gpu.capabilities.value.clone(), forward_compat || *config.gpu.forward_compat)
    } else {
        let mut list = TargetList::default();
        for arg in &capabilities {
            let parsed =
                TargetList::parse(arg).map_err(|e| Refused::BadCapability { arg: arg.clone(), why: e.to_string() })?;
            list.0.extend(parsed.0);
        }
        if list.is_empty() {
            return Err(Refused::NoCapability { config_read: false }.into());
        }
        (list, forward_compat)
    };
    let release = release(ctx, &settings, &probes, cuda_version, &list)?;
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
    let nix_build = crate::context::dirs::in_nix_build(&ctx.env);
    let against = gpu::Against { compat, release, platform: Some(platform), named: &named };
    let requested = gpu::requested_targets(&list, forward_compat, against, nix_build, || probes.gpus())?;
    let (expansion, release) = (requested.expansion, requested.release);
    let torch = || {
        expansion.targets().torch().map_err(|alone| Error::from(Refused::TorchPtxAlone { alone: alone.to_string() }))
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

/// The release `gencode` checks against: `--cuda-version`, else the one the drop-in would build with here
/// (`Release::decide`: the config's `cuda-version` unless the toolkit says another, else what the real nvcc it finds
/// says), so that both give the same targets for a list. `None` when none is known (an error for `all` and
/// `all-major`, which stand for the release's targets).
fn release(
    ctx: &Context,
    settings: &Settings,
    probes: &crate::probe::system::System,
    flag: Option<String>,
    list: &TargetList,
) -> Result<Option<Version>> {
    let compat = &settings.compat;
    let stated = settings.config.config.cuda_version.as_ref();
    let release = match flag {
        Some(v) => {
            let v = v.parse::<Version>().map_err(|e| Refused::BadRelease { given: v.clone(), why: e.to_string() })?;
            if !v.has_minor() || compat.host_compilers.limits_for(v).is_none() {
                return Err(crate::plan::not_in_tables(compat, &format!("`--cuda-version {v}`"), ErrorKind::Usage));
            }
            Ok(v)
        }
        // No real nvcc found: the config's `cuda-version` stands, as nothing contradicts it.
        None => match crate::prepare::locate::locate(ctx, &settings.config) {
            Err(e) => stated.map(|v| v.value).ok_or(NvccUnknown::Failed(e.message)),
            Ok(located) => {
                let (release, differs) = Release::decide(stated, probes, &located.nvcc.path, compat);
                if let Some(differs) = differs {
                    output::warning(differs);
                }
                match release {
                    Release::Unknown { why } => Err(why),
                    known => Ok(known.version().expect("a known release has a version")),
                }
            }
        },
    };
    let release = match (release, [Item::All, Item::AllMajor].into_iter().find(|w| list.has(*w))) {
        (Ok(version), _) => version,
        (Err(_), None) => return Ok(None),
        (Err(why), Some(word)) => return Err(Refused::NoRelease { word, why: why.to_string() }.into()),
    };
    Ok(Some(release))
}

/// What `gencode` refuses, as data: each with a stable code (`Coded`), its words once (`Display`, `help`), and its
/// kind (`Problem`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// No capability given (`config_read`: and the config names none).
    NoCapability { config_read: bool },
    /// A capability argument that is not one (`why`).
    BadCapability { arg: String, why: String },
    /// `--format torch` for a PTX-only target (`alone`), which TORCH_CUDA_ARCH_LIST cannot say.
    TorchPtxAlone { alone: String },
    /// `--cuda-version` that is not a version (`why`).
    BadRelease { given: String, why: String },
    /// `all` or `all-major` (`word`), and no release known (`why`).
    NoRelease { word: Item, why: String },
}

crate::error::codes!(Refused {
    NoCapability => "no-capability",
    BadCapability => "bad-capability",
    TorchPtxAlone => "torch-ptx-alone",
    BadRelease => "bad-release",
    NoRelease => "no-release",
});

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::NoCapability { config_read: true } => f.write_str("no capability given, and the config names none"),
            Refused::NoCapability { config_read: false } => f.write_str("no capability given"),
            Refused::BadCapability { arg, why } => write!(f, "the capability argument `{arg}`: {why}"),
            Refused::TorchPtxAlone { alone } => {
                write!(f, "TORCH_CUDA_ARCH_LIST has no way to say PTX of {alone} without its machine code")
            }
            Refused::BadRelease { given, why } => write!(f, "`--cuda-version {given}`: {why}"),
            Refused::NoRelease { word, why } => write!(
                f,
                "`{word}` stands for what the nvcc release builds, and none is known: no `--cuda-version`, no `cuda-version` in the config, and {why}"
            ),
        }
    }
}

impl Problem for Refused {
    fn kind(&self) -> ErrorKind {
        match self {
            Refused::TorchPtxAlone { .. } | Refused::NoRelease { .. } => ErrorKind::Request,
            _ => ErrorKind::Usage,
        }
    }

    /// What to do about it.
    fn help(&self) -> Option<String> {
        Some(match self {
            Refused::NoCapability { config_read: true } => {
                "name capabilities like 8.6 9.0a, or set `[gpu] capabilities` in the config".to_string()
            }
            Refused::NoCapability { config_read: false } | Refused::BadCapability { .. } => {
                "name capabilities like 8.6 9.0a".to_string()
            }
            Refused::TorchPtxAlone { alone } => {
                format!("add {alone} itself to the list (then `{alone}+PTX`), or use --format cmake or nvcc")
            }
            Refused::BadRelease { .. } => "give the release as --cuda-version 12.4".to_string(),
            Refused::NoRelease { .. } => {
                "give the release, as in `--cuda-version 13.0`, or put the real nvcc on PATH".to_string()
            }
        })
    }
}
