//! The drop-in nvcc, end to end: process state -> Invocation -> Plan -> exec.
//!
//! `prepare` runs every step but the last, so `nvcc-wrapper explain` shows exactly what the drop-in would run.

use std::ffi::OsString;
use std::io::Write;

use tracing::debug;

use crate::args::Invocation;
use crate::compat::Compat;
use crate::config::{self, Loaded};
use crate::context::{vars, Context, Env};
use crate::error::{Error, ErrorKind, Result};
use crate::exec::exec;
use crate::locate;
use crate::plan::{self, Plan};
use crate::probe::system::System;
use crate::shell;

/// Everything decided for one call.
pub struct Prepared {
    pub config: Loaded,
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
}

/// The environment nvcc runs with: the wrapper's own, plus the plan's settings.
fn nvcc_env(ctx: &Context, plan: &Plan) -> Env {
    let mut env = ctx.env.clone();
    for (name, value) in &plan.env {
        env.set(*name, value.clone());
    }
    env
}

/// Parse, configure, locate and plan, for `args` in place of argv.
pub fn prepare(ctx: &Context, args: Vec<OsString>) -> Result<Prepared> {
    let depth = locate::depth(ctx)?;
    let mut config = config::load(ctx)?;
    config::apply_env(&mut config, &ctx.env)?;
    let invocation = Invocation::parse_args(ctx, args)?;
    let nvcc = locate::find(ctx, &config)?;
    let compat = Compat::load(&config)?;
    let probes = System { path: ctx.env.get(vars::PATH).map(Into::into), cwd: ctx.cwd.clone() };
    let plan = plan::plan(plan::Inputs {
        invocation: &invocation,
        config: &config,
        compat: &compat,
        probes: &probes,
        nvcc,
        depth,
    })?;
    Ok(Prepared { config, invocation, plan })
}

/// Run as `nvcc`: returns only on error, or with the exit code of a dry run.
pub fn run(ctx: &Context) -> Result<i32> {
    let original =
        || shell::display(std::iter::once(ctx.argv0.as_os_str()).chain(ctx.args.iter().map(OsString::as_os_str)));
    if flag(ctx, vars::DISABLE)? {
        let depth = locate::depth(ctx)?;
        let plan = Plan::pass_through(locate::find(ctx, &config::load(ctx)?)?, depth);
        debug!("{}=1: running {} with the arguments untouched", vars::DISABLE, plan.nvcc.path.display());
        return Err(exec(&plan.nvcc.path, &ctx.args, &nvcc_env(ctx, &plan)));
    }
    debug!("original command: {}", original());
    let prepared = prepare(ctx, ctx.args.clone())?;
    log_plan(&prepared);
    for warning in &prepared.plan.warnings {
        eprintln!("nvcc-wrapper: warning: {warning}");
    }
    let command = prepared.final_command();
    debug!("final command: {}", shell::display(command.iter().map(OsString::as_os_str)));
    if flag(ctx, vars::DRY_RUN)? {
        // Variables the plan changes for nvcc (a rewritten NVCC_APPEND_FLAGS, say) lead the line, as a shell would
        // take them; the loop counter is left out, since it is bookkeeping, not part of the command.
        let mut line = Vec::new();
        for (name, value) in prepared.plan.env.iter().filter(|(name, _)| *name != vars::DEPTH) {
            line.extend(format!("{name}=").as_bytes());
            line.extend(shell::join([value.as_os_str()]));
            line.push(b' ');
        }
        line.extend(shell::join(command.iter().map(OsString::as_os_str)));
        line.push(b'\n');
        std::io::stdout()
            .write_all(&line)
            .map_err(|e| Error::new(ErrorKind::Internal, format!("cannot write to stdout: {e}")))?;
        return Ok(0);
    }
    Err(exec(&prepared.plan.nvcc.path, &command[1..], &nvcc_env(ctx, &prepared.plan)))
}

fn log_plan(prepared: &Prepared) {
    match &prepared.config.path {
        Some(path) => debug!("config file: {}", path.display()),
        None => debug!("config file: none"),
    }
    for o in &prepared.config.overrides {
        debug!("{o}");
    }
    debug!("real nvcc: {} (found by {})", prepared.plan.nvcc.path.display(), prepared.plan.nvcc.found_by);
    for note in &prepared.plan.notes {
        debug!("{note}");
    }
    for r in &prepared.plan.removed {
        debug!(
            "removing {} from {}: {}",
            shell::display(r.tokens.iter().map(OsString::as_os_str)),
            r.found.at.channel.describe(&prepared.invocation),
            r.reason
        );
    }
    for (name, value) in prepared.plan.env.iter().filter(|(name, _)| *name != vars::DEPTH) {
        debug!("setting {name}={} for nvcc", shell::display([value.as_os_str()]));
    }
    for addition in prepared.plan.before.iter().chain(&prepared.plan.after) {
        debug!("adding {}: {}", shell::display(addition.args.iter().map(OsString::as_os_str)), addition.reason);
    }
}

/// A boolean switch from the environment: `1`/`true`/`yes`/`on` or `0`/`false`/`no`/`off`; unset or empty is off.
pub fn flag(ctx: &Context, name: &str) -> Result<bool> {
    Ok(ctx.env.switch(name)?.unwrap_or(false))
}
