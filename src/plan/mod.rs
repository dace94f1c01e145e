//! Deciding what to change: a pure function from the parsed command line, the configuration and what is known about
//! the toolchain to a `Plan`. Nothing here touches the OS.
//!
//! A plan adds arguments before the user's (so the user's own flags still win, nvcc using the last value of a
//! repeated option) or after them, sets environment variables for nvcc, and gives a human reason for every change.
//! It edits none of the user's tokens, except that a documented policy may remove some (`[gpu] arch-flags =
//! "replace"`, and `-dlto` when a device-LTO compile gets the capabilities as `code=lto_XY`): `edit` owns how, and
//! every removal carries its reason.

pub mod cross;
mod cuda_compat;
mod edit;
pub mod fatbin;
pub mod gpu;
pub mod host_compiler;
pub mod launcher;
pub mod target;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::args::{Channel, Found, Invocation};
use crate::compat::{Compat, Platform, PlatformTable};
use crate::config::{Loaded, TargetConfig};
use crate::context::vars;
use crate::error::Result;
use crate::locate::RealNvcc;
use crate::probe::system::Probes;
use crate::version::Version;

/// The NVCC release in use, and where the wrapper learned it (for `explain`, `doctor` and the debug log).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Release {
    /// The version, or why it cannot be told.
    pub version: std::result::Result<Version, String>,
    /// `` `cuda-version` in the config ``, `the toolkit's version.json`, `` `nvcc --version` ``.
    pub from: &'static str,
}

impl Release {
    /// The config's `cuda-version`, else what the real nvcc says (its toolkit's version.json, else `nvcc --version`).
    pub fn of(cuda_version: Option<Version>, probes: &dyn Probes, nvcc: &Path) -> Release {
        match cuda_version {
            Some(v) => Release { version: Ok(v), from: "`cuda-version` in the config" },
            None => match probes.nvcc_version(nvcc) {
                Ok((v, from)) => Release { version: Ok(v), from },
                Err(e) => Release { version: Err(e), from: "the real nvcc" },
            },
        }
    }
}

/// Tokens of the user's that the wrapper removes (only under an explicit policy), and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removal {
    pub found: Found,
    /// Every token it spans (the option, and its value when separate).
    pub positions: Vec<(Channel, usize)>,
    /// Those tokens, as given.
    pub tokens: Vec<OsString>,
    pub reason: String,
}

/// An options file the wrapper writes for nvcc to read in place of the user's (`[gpu] arch-flags = "replace"`
/// only): what remains of the files an `-optf` in argv names once GPU targets are taken out. Its name is its
/// contents' hash, so a build reuses it from call to call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenFile {
    /// The `-optf` occurrence in argv it takes the place of.
    pub replaces: Found,
    pub path: PathBuf,
    pub contents: Vec<u8>,
}

/// Arguments the wrapper adds, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Addition {
    pub args: Vec<OsString>,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub nvcc: RealNvcc,
    /// Added before the user's arguments.
    pub before: Vec<Addition>,
    /// Added after the user's arguments.
    pub after: Vec<Addition>,
    /// The user's options taken out (`[gpu] arch-flags = "replace"` only).
    pub removed: Vec<Removal>,
    /// Options files written for nvcc in place of the user's that lost tokens (`replace` only).
    pub written: Vec<WrittenFile>,
    /// Environment variables set for nvcc.
    pub env: Vec<(&'static str, OsString)>,
    /// Decisions that changed nothing, with why (shown by `explain` and the debug log).
    pub notes: Vec<String>,
    /// Problems the user should hear about even though the call goes ahead (printed on stderr).
    pub warnings: Vec<String>,
    /// The host compiler the wrapper chose, when it chose one (for `doctor` and tests).
    pub host: Option<host_compiler::Decision>,
    /// The target, its CUDA files and sysroot, when it is another CPU (for `doctor` and tests).
    pub cross: Option<cross::Decision>,
    /// The NVCC release the decisions were made for; `None` when the call needed none (a query, say).
    pub release: Option<Release>,
    /// The compiler cache nvcc runs through (`launcher`), resolved; `None` runs nvcc directly.
    pub launcher: Option<PathBuf>,
}

impl Plan {
    /// A plan that runs nvcc with the user's arguments untouched.
    pub fn pass_through(nvcc: RealNvcc, depth: u32) -> Plan {
        Plan {
            nvcc,
            before: Vec::new(),
            after: Vec::new(),
            removed: Vec::new(),
            written: Vec::new(),
            // Raised on every exec, so that a chain leading back to a wrapper stops (see `locate`).
            env: vec![(vars::DEPTH, (depth + 1).to_string().into())],
            notes: Vec::new(),
            warnings: Vec::new(),
            host: None,
            cross: None,
            release: None,
            launcher: None,
        }
    }

    /// The arguments nvcc receives after argv[0]: ours before, the user's exactly as given (less any removals),
    /// ours after.
    pub fn command(&self, inv: &Invocation) -> Vec<OsString> {
        let ours = |adds: &[Addition]| adds.iter().flat_map(|a| a.args.clone()).collect::<Vec<_>>();
        let mut args = ours(&self.before);
        if self.removed.is_empty() {
            args.extend(inv.argv.iter().cloned());
        } else {
            args.extend(edit::argv(inv, &self.removed, &self.written));
        }
        args.extend(ours(&self.after));
        args
    }

    pub fn changes_nothing(&self) -> bool {
        self.before.is_empty() && self.after.is_empty() && self.removed.is_empty() && self.written.is_empty()
    }
}

/// Everything a plan is decided from. Only `probes` can reach the OS, and only when a decision needs it.
pub struct Inputs<'a> {
    pub invocation: &'a Invocation,
    pub config: &'a Loaded,
    pub compat: &'a Compat,
    pub probes: &'a dyn Probes,
    pub nvcc: RealNvcc,
    pub depth: u32,
    /// Where options files the plan writes go (see `WrittenFile`).
    pub scratch: &'a Path,
}

/// Decide what to run for this invocation.
pub fn plan(inputs: Inputs) -> Result<Plan> {
    let inv = inputs.invocation;
    let mut plan = Plan::pass_through(inputs.nvcc.clone(), inputs.depth);
    if let Some(query) = inv.query_only() {
        plan.notes.push(format!("`{}` only asks nvcc for information: nothing is added", query.spelling));
        return Ok(plan);
    }
    plan.warnings.extend(inv.warnings.iter().cloned());
    if !inv.not_understood.is_empty() {
        plan.notes.push(format!(
            "the command line is not fully understood ({}): nothing is added, nvcc will judge it",
            inv.not_understood.join("; ")
        ));
        return Ok(plan);
    }
    let release = Release::of(inputs.config.config.cuda_version, inputs.probes, &inputs.nvcc.path);
    let settings = &inputs.config.config;
    let named = target::Named::config(&inputs.config.source);
    let (platform, cross) =
        resolve_target(&settings.target, &named, &inputs.compat.platforms, &release.version, &mut plan.notes)?;
    host_compiler::Step {
        invocation: inv,
        table: &inputs.compat.host_compilers,
        probes: inputs.probes,
        release: release.version.clone(),
        // Each step sees its own section: the target's compilers for another CPU, the native ones otherwise.
        settings: if cross { &settings.target.host_compiler } else { &settings.host_compiler },
        cross: cross.then_some(platform),
    }
    .decide(&mut plan)?;
    if cross {
        cross::Step {
            invocation: inv,
            target: &settings.target,
            source: &inputs.config.source,
            probes: inputs.probes,
            nvcc: &inputs.nvcc.path,
            platform,
        }
        .decide(&mut plan)?;
    }
    gpu::Step {
        invocation: inv,
        scratch: inputs.scratch,
        gpu: &settings.gpu,
        compat: inputs.compat,
        release: release.version.clone(),
        platform,
        named: &named,
    }
    .decide(&mut plan)?;
    cuda_compat::Step {
        invocation: inv,
        dir: settings.target.cuda_compat.as_deref(),
        source: &inputs.config.source,
        probes: inputs.probes,
        platform,
        gpu: &settings.gpu,
        capabilities: &inputs.compat.capabilities,
    }
    .decide(&mut plan)?;
    fatbin::Step {
        invocation: inv,
        setting: settings.gpu.compress_fatbin,
        table: &inputs.compat.fatbin,
        release: release.version.clone(),
    }
    .decide(&mut plan);
    // Last, so that the note on the cache follows the decisions whose arguments it hashes.
    launcher::Step {
        invocation: inv,
        setting: settings.launcher.as_deref(),
        source: &inputs.config.source,
        probes: inputs.probes,
        release: &release.version,
        table: &inputs.compat.launchers,
    }
    .decide(&mut plan)?;
    plan.release = Some(release);
    Ok(plan)
}

/// The target platform `[target]` names, and whether it is another CPU than this machine's (a cross build; an
/// aarch64 machine building for Jetson or for an Arm server is not one: its toolkit is that platform's own). A
/// cross target must be one this release ships. Every personality that names a target goes through here.
pub fn resolve_target<'a>(
    target: &TargetConfig,
    named: &target::Named,
    platforms: &'a PlatformTable,
    release: &std::result::Result<Version, String>,
    notes: &mut Vec<String>,
) -> Result<(&'a Platform, bool)> {
    let platform = target::platform(target, platforms, named)?;
    let cross = platform.nix_system != target::NATIVE_SYSTEM;
    if cross {
        cross::check_shipped(platforms, platform, release, named, notes)?;
    } else if target.system.is_some() {
        notes.push(format!("the target {} is this machine's: nothing is cross-compiled", platform.name));
    }
    Ok((platform, cross))
}

#[cfg(test)]
mod tests;
