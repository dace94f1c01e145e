//! The drop-in nvcc, end to end: process state -> Invocation -> Plan -> exec. The preparation is `prepare`'s, shared
//! with `explain` and `doctor`; the debug log shows the plan with `report`'s lines, the same ones `explain` prints.

use std::ffi::OsString;

use tracing::debug;

use crate::context::{vars, Context};
use crate::error::output;
use crate::error::shell;
use crate::error::Result;
use crate::exec::{self, exec};
use crate::prepare::{self, Prepared};
use crate::report;

/// Run as `nvcc`: returns only on error, or with the exit code of a dry run.
pub fn run(ctx: &Context) -> Result<i32> {
    if flag(ctx, vars::DISABLE)? {
        // Only the config's `nvcc` counts: nothing is parsed, planned or overridden.
        let located = prepare::pass_through(ctx)?;
        debug!(
            "{}=1: running {} with the arguments untouched",
            vars::DISABLE,
            crate::error::shell::path(&located.nvcc.path)
        );
        let err = exec::exec_as_given(&located.nvcc.path, &ctx.args, &ctx.env, located.depth);
        return Err(exec::cannot_run(&located.nvcc, err));
    }
    let prepared = prepare::prepare(ctx, ctx.args.clone())?;
    // nvcc alone reads no config place: what is at one and cannot be read is said, and the call goes on.
    for looked in &prepared.setup.settings.config.looked_at {
        if let crate::config::places::State::Unusable(_) = looked.state {
            output::warning(looked);
        }
    }
    if tracing::enabled!(tracing::Level::DEBUG) {
        for line in report::lines(&prepared) {
            debug!("{line}");
        }
    }
    for warning in &prepared.plan.changes.warnings {
        output::warning(warning);
    }
    let command = prepared.final_command();
    // The dry run's command names them too, so it can be run as printed. Not written, nvcc runs as given instead.
    if let Err(e) = exec::write_files(&prepared.plan.changes.written) {
        return Err(exec::run_as_given(
            ctx,
            &prepared.plan,
            prepared.setup.located.depth,
            e,
            flag(ctx, vars::DRY_RUN)?,
        ));
    }
    if flag(ctx, vars::DRY_RUN)? {
        output::stdout(dry_run_line(&prepared, &command))?;
        return Ok(0);
    }
    let nvcc = &prepared.plan.nvcc.path;
    // The launcher when there is one: it runs the real nvcc, named by its full path, with the rest.
    let program = prepared.plan.decided.launcher.as_ref().unwrap_or(nvcc);
    let env = prepared.nvcc_env(ctx);
    // Threads from job slots free when nvcc starts, as many as the memory free then holds: `--threads N` first on
    // nvcc's command line, or behind a launcher in NVCC_PREPEND_FLAGS (out of a compiler cache's key). The keeper that waits for nvcc takes them and gives them back (`exec::child`); with no slot free
    // now, there is nothing to wait for.
    let lent = || crate::plan::threads::lent(&prepared.plan.decided, &ctx.jobserver);
    let memory_holds = || {
        let memory = lent().map_or(crate::plan::threads::Memory::Unknown, |l| l.memory());
        debug!("a job slot is free; {memory}");
        memory.threads()
    };
    let lend = lent().filter(|l| l.now()).map(|l| exec::lend::Lend::new(l, &memory_holds));
    let err = if prepared.plan.decided.depfile.is_some() || lend.is_some() {
        // Work left after nvcc: wait for it, give back its slots, complete its dependency files if it succeeded,
        // end as it ended.
        match exec::child::run(program, &command[1..], &env, lend, leftovers(ctx, &prepared)) {
            Ok(status) => {
                if let Some(depfile) = prepared.plan.decided.depfile.as_ref().filter(|_| status.success()) {
                    for warning in exec::complete_depfiles(depfile) {
                        output::warning(warning);
                    }
                }
                exec::end_as(status);
            }
            Err(err) => err,
        }
    } else {
        exec(program, &command[1..], &env)
    };
    if exec::too_long(&err) {
        // The call was within the kernel's limit as given, and the wrapper's additions (its loop counter included)
        // pushed it over: run it as nvcc alone would, rather than fail a build nvcc could have run.
        let why = exec::problems::Refused::AdditionsTooLong { err }.into();
        return Err(exec::run_as_given(ctx, &prepared.plan, prepared.setup.located.depth, why, false));
    }
    match &prepared.plan.decided.launcher {
        Some(launcher) => {
            let program = exec::problems::Program::Launcher;
            Err(exec::problems::Refused::CannotRun { program, path: launcher.clone(), err }.into())
        }
        None => Err(exec::cannot_run(&prepared.plan.nvcc, err)),
    }
}

/// What to look for of nvcc's temporary files if the call fails (`exec::child::Leftovers`): none when the user keeps
/// intermediates.
fn leftovers(ctx: &Context, prepared: &Prepared) -> Option<exec::child::Leftovers> {
    let inv = &prepared.invocation;
    if inv.keeps_intermediates().is_some() {
        return None;
    }
    let tmpdir = ctx.env.non_empty(vars::TMPDIR).map_or_else(|| "/tmp".into(), |t| ctx.absolute(t.as_ref()));
    let beside = inv
        .output_file()
        .filter(|_| prepared.plan.decided.intermediates_beside_output)
        .map(|o| ctx.absolute(o.as_ref()));
    let keep = match inv.depfiles() {
        crate::args::Depfiles::Files(files) => files.iter().map(|f| ctx.absolute(f)).collect(),
        _ => Vec::new(),
    };
    Some(exec::child::Leftovers { tmpdir, beside, keep })
}

/// The command as one shell line, exact for any bytes. Variables the plan changes for nvcc (a rewritten
/// NVCC_APPEND_FLAGS, say) lead the line, as a shell would take them; the loop counter is left out, since it is
/// bookkeeping, not part of the command.
fn dry_run_line(prepared: &Prepared, command: &[OsString]) -> Vec<u8> {
    let mut line = Vec::new();
    for (name, value) in prepared.plan.changes.env.iter().filter(|(name, _)| *name != vars::DEPTH) {
        line.extend(format!("{name}=").as_bytes());
        line.extend(shell::join([value.as_os_str()]));
        line.push(b' ');
    }
    line.extend(shell::join(command.iter().map(OsString::as_os_str)));
    line.push(b'\n');
    line
}

/// A boolean switch from the environment: `1`/`true`/`yes`/`on` or `0`/`false`/`no`/`off`; unset or empty is off.
pub fn flag(ctx: &Context, name: &str) -> Result<bool> {
    Ok(ctx.env.switch(name)?.unwrap_or(false))
}
