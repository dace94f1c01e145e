//! The one preparation every personality shares, so that the drop-in, `explain`, `doctor` and `gencode` can never
//! disagree: the config file with the environment's overrides, the compatibility tables it names, the real nvcc
//! and the loop depth (`Setup`); then, for a command line, its `Invocation` and `Plan` (`Prepared`). The release is
//! learned inside the plan, and only when a decision needs it, so a query such as `nvcc --version` probes nothing.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::args::Invocation;
use crate::compat::Compat;
use crate::config::{self, Loaded};
use crate::context::{Context, Env};
use crate::error::Result;
use crate::locate::{self, Located};
use crate::plan::{self, Plan};
use crate::probe::system::System;

/// Everything a plan is made from, before the command line is looked at.
pub struct Setup {
    pub config: Loaded,
    pub compat: Compat,
    pub located: Located,
    pub probes: System,
    /// Where options files rewritten under `arch-flags = "replace"` are written.
    pub scratch: PathBuf,
}

impl Setup {
    /// The config file (named, or found next to the `nvcc` that was run), the environment's overrides of it, the
    /// tables, and the real nvcc.
    pub fn new(ctx: &Context) -> Result<Setup> {
        let mut config = config::load(ctx)?;
        config::apply_env(&mut config, &ctx.env)?;
        let compat = Compat::load(config.config.compat_data.as_deref())?;
        let located = locate::locate(ctx, &config)?;
        let probes = System { path: Some(ctx.search_path().into()), cwd: ctx.cwd.clone() };
        Ok(Setup { config, compat, located, probes, scratch: scratch_dir(&ctx.env) })
    }

    /// Parse `args` as nvcc's command line (with nvcc's environment channels) and decide what to run.
    pub fn prepare(self, ctx: &Context, args: Vec<OsString>) -> Result<Prepared> {
        let invocation = Invocation::parse_args(ctx, args)?;
        let plan = plan::plan(plan::Inputs {
            invocation: &invocation,
            config: &self.config,
            compat: &self.compat,
            probes: &self.probes,
            nvcc: self.located.nvcc.clone(),
            depth: self.located.depth,
            scratch: &self.scratch,
        })?;
        Ok(Prepared { setup: self, invocation, plan })
    }
}

/// Everything decided for one call.
pub struct Prepared {
    pub setup: Setup,
    pub invocation: Invocation,
    pub plan: Plan,
}

impl Prepared {
    /// The real nvcc followed by its arguments: the command that runs.
    pub fn final_command(&self) -> Vec<OsString> {
        let mut words = vec![self.plan.nvcc.path.clone().into_os_string()];
        words.extend(self.plan.command(&self.invocation));
        words
    }

    /// The environment nvcc runs with: the wrapper's own, plus the plan's settings.
    pub fn nvcc_env(&self, ctx: &Context) -> Env {
        nvcc_env(ctx, &self.plan)
    }
}

/// The environment nvcc runs with: the wrapper's own, plus what `plan` sets.
pub fn nvcc_env(ctx: &Context, plan: &Plan) -> Env {
    let mut env = ctx.env.clone();
    for (name, value) in &plan.env {
        env.set(*name, value.clone());
    }
    env
}

/// The user's cache directory for the wrapper (`$XDG_CACHE_HOME/nvcc-wrapper`, else `~/.cache/nvcc-wrapper`, else
/// one under /tmp), and in it the place for rewritten options files. nvcc splits an `-optf` value at commas, so a
/// directory whose path has one is not used.
pub fn scratch_dir(env: &Env) -> PathBuf {
    let absolute = |name: &str| env.non_empty(name).map(Path::new).filter(|p| p.is_absolute());
    let cache = absolute("XDG_CACHE_HOME")
        .map(Path::to_path_buf)
        .or_else(|| absolute("HOME").map(|home| home.join(".cache")))
        .filter(|dir| !dir.as_os_str().as_encoded_bytes().contains(&b','))
        .unwrap_or_else(|| PathBuf::from("/tmp"));
    cache.join("nvcc-wrapper/options-files")
}

/// Set up and prepare `args` in one go: what the drop-in and `explain` do.
pub fn prepare(ctx: &Context, args: Vec<OsString>) -> Result<Prepared> {
    Setup::new(ctx)?.prepare(ctx, args)
}
