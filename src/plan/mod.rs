//! Deciding what to change: a pure function from the parsed command line, the configuration and what is known about
//! the toolchain to a `Plan`. Nothing here touches the OS.
//!
//! A plan adds arguments before the user's (so the user's own flags still win, nvcc using the last value of a
//! repeated option) or after them, sets environment variables for nvcc, and gives a human reason for every change.
//! It edits none of the user's tokens, except that a policy the configuration states explicitly (`[gpu]
//! arch-flags = "replace"`) may remove some: `edit` owns how, and every removal carries its reason.

pub mod cross;
mod edit;
pub mod gpu;
pub mod host_compiler;
pub mod target;

use std::ffi::OsString;
use std::path::Path;

use crate::args::{Channel, Found, Invocation};
use crate::compat::Compat;
use crate::config::Loaded;
use crate::context::vars;
use crate::error::Result;
use crate::locate::RealNvcc;
use crate::probe::system::Probes;
use crate::version::Version;

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
}

impl Plan {
    /// A plan that runs nvcc with the user's arguments untouched.
    pub fn pass_through(nvcc: RealNvcc, depth: u32) -> Plan {
        Plan {
            nvcc,
            before: Vec::new(),
            after: Vec::new(),
            removed: Vec::new(),
            // Raised on every exec, so that a chain leading back to a wrapper stops (see `locate`).
            env: vec![(vars::DEPTH, (depth + 1).to_string().into())],
            notes: Vec::new(),
            warnings: Vec::new(),
            host: None,
            cross: None,
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
            args.extend(edit::argv(inv, &self.removed));
        }
        args.extend(ours(&self.after));
        args
    }

    pub fn changes_nothing(&self) -> bool {
        self.before.is_empty() && self.after.is_empty() && self.removed.is_empty()
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
}

/// Decide what to run for this invocation.
pub fn plan(inputs: Inputs) -> Result<Plan> {
    let inv = inputs.invocation;
    let mut plan = Plan::pass_through(inputs.nvcc.clone(), inputs.depth);
    if let Some(query) = inv.query_only() {
        plan.notes.push(format!("`{}` only asks nvcc for information: nothing is added", query.spelling));
        return Ok(plan);
    }
    if !inv.not_understood.is_empty() {
        plan.notes.push(format!(
            "the command line is not fully understood ({}): nothing is added, nvcc will judge it",
            inv.not_understood.join("; ")
        ));
        return Ok(plan);
    }
    let release = nvcc_release(inputs.config, inputs.probes, &inputs.nvcc.path);
    let settings = &inputs.config.config;
    let platform = target::platform_of(inputs.config, &inputs.compat.platforms)?;
    // Another CPU than the wrapper's: a cross build. (An aarch64 machine building for Jetson or for an Arm server
    // is not one: its toolkit is that platform's own.)
    let cross = (platform.nix_system != target::NATIVE_SYSTEM).then_some(platform);
    if let Some(platform) = cross {
        cross::check_shipped(platform, &release, &mut plan)?;
    } else if settings.target.system.is_some() {
        plan.notes.push(format!("the target {} is this machine's: nothing is cross-compiled", platform.name));
    }
    host_compiler::Step {
        invocation: inv,
        config: inputs.config,
        table: &inputs.compat.host_compilers,
        probes: inputs.probes,
        release: release.clone(),
        settings: if cross.is_some() { &settings.target.host_compiler } else { &settings.host_compiler },
        cross,
    }
    .decide(&mut plan)?;
    if let Some(platform) = cross {
        cross::Step {
            invocation: inv,
            config: inputs.config,
            probes: inputs.probes,
            nvcc: &inputs.nvcc.path,
            platform,
        }
        .decide(&mut plan)?;
    }
    gpu::Step { invocation: inv, config: inputs.config, compat: inputs.compat, release, platform }.decide(&mut plan)?;
    Ok(plan)
}

/// The NVCC release in use: the config's `cuda-version`, else what the real nvcc says (its toolkit's version.json,
/// else `nvcc --version`). Every step that depends on the release asks this once, through `plan`.
fn nvcc_release(config: &Loaded, probes: &dyn Probes, nvcc: &Path) -> std::result::Result<Version, String> {
    match config.config.cuda_version {
        Some(v) => Ok(v),
        None => probes.nvcc_version(nvcc),
    }
}

#[cfg(test)]
mod tests;
