//! The one preparation every personality shares, so that the drop-in, `explain`, `doctor`, `gencode`, `compat scan`,
//! the kill switch and the E2BIG fallback can never disagree: the config file with the environment's overrides and
//! the compatibility tables it names (`Settings`); with them the real nvcc and the loop depth (`Setup`); then, for a
//! command line, its `Invocation` and `Plan` (`Prepared`). The release is learned inside the plan, and only when a
//! decision needs it, so a query such as `nvcc --version` probes nothing.

pub mod locate;
pub mod problems;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::args::Invocation;
use crate::compat::Compat;
use crate::config::{self, Loaded};
use crate::context::{vars, Context, Env};
use crate::error::Result;
use crate::plan::{self, Plan};
use crate::probe::cache::ProbeCache;
use crate::probe::system::System;
use locate::Located;

/// What every personality decides from: the config (with the environment's overrides) and the tables it names.
pub struct Settings {
    pub config: Loaded,
    pub compat: Compat,
}

impl Settings {
    /// The config file (named, or found next to the `nvcc` that was run), the environment's overrides of it, and the
    /// tables.
    pub fn load(ctx: &Context) -> Result<Settings> {
        let config = config::load_with_env(ctx)?;
        if let Some(dir) = config.config.compat_data.as_ref().filter(|d| !d.is_dir()) {
            let files = crate::compat::FILES.join(", ");
            return Err(dir
                .error(crate::config::Key::CompatData, "is not a directory")
                .with_help(format!("point it at a directory holding any of {files}")));
        }
        let compat = Compat::load(config.config.compat_data.as_deref().map(PathBuf::as_path))?;
        Ok(Settings { config, compat })
    }
}

/// Everything a plan is made from, before the command line is looked at.
pub struct Setup {
    pub settings: Settings,
    pub located: Located,
    pub probes: System,
}

impl Setup {
    /// The settings and the real nvcc.
    pub fn new(ctx: &Context) -> Result<Setup> {
        let settings = Settings::load(ctx)?;
        let located = locate::locate(ctx, &settings.config)?;
        let probes = System::new(Some(ctx.search_path().into()), ctx.cwd.clone(), probe_cache(ctx)?);
        Ok(Setup { settings, located, probes })
    }

    /// Parse `args` as nvcc's command line (with nvcc's environment channels) and decide what to run, as this process
    /// will run it.
    pub fn prepare(self, ctx: &Context, args: Vec<OsString>) -> Result<Prepared> {
        self.prepare_for(ctx, args, Some(ctx.pid))
    }

    /// The same for a call described, not run here (`explain`, `doctor`): what names nvcc's process id shows
    /// `<pid>`, not this process's.
    pub fn describe(mut self, ctx: &Context, args: Vec<OsString>) -> Result<Prepared> {
        self.settings.config.find_ignored(ctx);
        self.prepare_for(ctx, args, None)
    }

    fn prepare_for(self, ctx: &Context, args: Vec<OsString>, pid: Option<u32>) -> Result<Prepared> {
        let invocation = Invocation::parse_args(ctx, args)?;
        let tmpdir = ctx.env.non_empty(vars::TMPDIR).map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
        let nvcc_process = plan::NvccProcess {
            pid,
            tmpdir,
            given_bytes: ctx.given_bytes(),
            arg_max: ctx.arg_max,
            nix_build: crate::context::dirs::in_nix_build(&ctx.env),
        };
        let plan = plan::plan(plan::Inputs {
            invocation: &invocation,
            config: &self.settings.config.config,
            compat: &self.settings.compat,
            probes: &self.probes,
            nvcc: self.located.nvcc.clone(),
            config_file: self.settings.config.path.as_deref(),
            depth: self.located.depth,
            scratch: &|| scratch_dir(&ctx.env),
            nvcc_process: &nvcc_process,
            jobserver: &ctx.jobserver,
            unknown_variables: &config::env::unknown_variables(&ctx.env),
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
    /// The real nvcc followed by its arguments, behind the launcher when there is one: the command that runs.
    pub fn final_command(&self) -> Vec<OsString> {
        let mut words: Vec<OsString> = self.plan.decided.launcher.iter().map(|l| l.clone().into_os_string()).collect();
        words.push(self.plan.nvcc.path.clone().into_os_string());
        words.extend(self.plan.command(&self.invocation));
        words
    }

    /// The environment nvcc runs with: the wrapper's own, plus the plan's settings.
    pub fn nvcc_env(&self, ctx: &Context) -> Env {
        nvcc_env(ctx, &self.plan)
    }
}

/// What the kill switch (`NVCC_WRAPPER_DISABLE`) runs: the real nvcc the config names (or PATH's), with the user's
/// arguments untouched. Only the config file is read: no override can change which nvcc runs, and a bad one must not
/// stop the switch that exists to take the wrapper out of the way.
pub fn pass_through(ctx: &Context) -> Result<Located> {
    locate::locate(ctx, &config::load(ctx)?)
}

/// The environment nvcc runs with: the wrapper's own, plus what `plan` sets.
pub fn nvcc_env(ctx: &Context, plan: &Plan) -> Env {
    let mut env = ctx.env.with_room(plan.changes.env.len());
    for (name, value) in &plan.changes.env {
        env.set(*name, value.clone());
    }
    env
}

/// Where options files rewritten under `arch-flags = "replace"` go (`dirs::scratch`).
pub fn scratch_dir(env: &Env) -> PathBuf {
    crate::context::dirs::scratch(env)
}

/// Where probing keeps what it found: `$NVCC_WRAPPER_PROBE_CACHE_DIR`, else `probes` in the cache directory; none
/// with `NVCC_WRAPPER_PROBE_CACHE=0` or without a home. Only decided here: nothing is read or created until a probe
/// is needed, so a config that records everything never touches it.
pub fn probe_cache(ctx: &Context) -> Result<ProbeCache> {
    if ctx.env.switch(vars::PROBE_CACHE)? == Some(false) {
        let value = ctx.env.get(vars::PROBE_CACHE).unwrap_or_default().to_string_lossy();
        return Ok(ProbeCache::off(format!("{}={value}", vars::PROBE_CACHE)));
    }
    if let Some(dir) = ctx.env.non_empty(vars::PROBE_CACHE_DIR) {
        return Ok(ProbeCache::at(ctx.absolute(Path::new(dir))));
    }
    // The cache directory (`dirs::cache_base`: never a home directory that does not exist; the build's own directory
    // in a Nix build), looked for only when a probe needs it.
    let candidates = crate::context::dirs::cache_base_candidates(&ctx.env);
    let probes = candidates.into_iter().map(|(dir, base)| (dir, base.join("probes"))).collect();
    Ok(ProbeCache::in_first_existing(probes, "no XDG_CACHE_HOME and no HOME"))
}

/// Set up and prepare `args` in one go: what the drop-in does.
pub fn prepare(ctx: &Context, args: Vec<OsString>) -> Result<Prepared> {
    Setup::new(ctx)?.prepare(ctx, args)
}

/// Set up and describe `args` in one go: what `explain` does.
pub fn describe(ctx: &Context, args: Vec<OsString>) -> Result<Prepared> {
    Setup::new(ctx)?.describe(ctx, args)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache_for(vars: &[(&str, &str)]) -> Result<ProbeCache> {
        let ctx = Context { env: vars.iter().copied().collect(), cwd: PathBuf::from("/work"), ..Context::default() };
        probe_cache(&ctx)
    }

    fn dir(vars: &[(&str, &str)]) -> Option<PathBuf> {
        cache_for(vars).unwrap().dir().map(Path::to_path_buf)
    }

    #[test]
    fn the_probe_cache_lives_in_the_users_cache_directory_unless_told_otherwise() {
        // Only a home and an XDG_CACHE_HOME that exist are used (issue 26).
        let tmp = tempfile::tempdir().unwrap();
        let (u, xdg) = (tmp.path().join("u"), tmp.path().join("xdg"));
        std::fs::create_dir_all(&u).unwrap();
        std::fs::create_dir_all(&xdg).unwrap();
        let home = ("HOME", u.to_str().unwrap());
        let under_home = Some(u.join(".cache/nvcc-wrapper/probes"));
        assert_eq!(dir(&[home]), under_home);
        assert_eq!(dir(&[home, ("XDG_CACHE_HOME", xdg.to_str().unwrap())]), Some(xdg.join("nvcc-wrapper/probes")));
        // A relative XDG_CACHE_HOME is invalid by the spec and ignored.
        assert_eq!(dir(&[home, ("XDG_CACHE_HOME", "rel")]), under_home);
        assert_eq!(dir(&[home, ("NVCC_WRAPPER_PROBE_CACHE_DIR", "/c")]), Some(PathBuf::from("/c")));
        assert_eq!(dir(&[("NVCC_WRAPPER_PROBE_CACHE_DIR", "c")]), Some(PathBuf::from("/work/c")));
        assert_eq!(dir(&[home, ("NVCC_WRAPPER_PROBE_CACHE", "1")]), under_home);
        assert_eq!(dir(&[("HOME", "/homeless-shelter")]), None);
        assert_eq!(dir(&[home, ("NVCC_WRAPPER_PROBE_CACHE_DIR", "/c"), ("NVCC_WRAPPER_PROBE_CACHE", "0")]), None);
        assert_eq!(dir(&[]), None);
        let err = cache_for(&[home, ("NVCC_WRAPPER_PROBE_CACHE", "nope")]).unwrap_err();
        assert_eq!(err.kind, crate::error::ErrorKind::Environment);
        assert!(err.message.contains("NVCC_WRAPPER_PROBE_CACHE=nope"), "{err}");
    }

    #[test]
    fn the_cache_directory_is_looked_for_when_a_probe_first_needs_it() {
        let tmp = tempfile::tempdir().unwrap();
        let (u, xdg) = (tmp.path().join("u"), tmp.path().join("xdg"));
        let cache = cache_for(&[("HOME", u.to_str().unwrap()), ("XDG_CACHE_HOME", xdg.to_str().unwrap())]).unwrap();
        // Both made after the call was prepared: what it found then would be no cache at all.
        std::fs::create_dir_all(&u).unwrap();
        std::fs::create_dir_all(&xdg).unwrap();
        assert_eq!(cache.dir(), Some(xdg.join("nvcc-wrapper/probes").as_path()));
        // Found once: the answer stays, as the call's one cache directory.
        std::fs::remove_dir(&xdg).unwrap();
        assert_eq!(cache.dir(), Some(xdg.join("nvcc-wrapper/probes").as_path()));
    }
}
