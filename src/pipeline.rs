//! The drop-in nvcc, end to end: process state -> Invocation -> Plan -> exec. The preparation is `prepare`'s, shared
//! with `explain` and `doctor`; the debug log shows the plan with `report`'s lines, the same ones `explain` prints.

use std::ffi::OsString;

use tracing::debug;

use crate::context::{vars, Context};
use crate::error::{Error, ErrorKind, Result};
use crate::exec::{self, exec};
use crate::output;
use crate::prepare::{self, Prepared};
use crate::report;
use crate::shell;

/// Run as `nvcc`: returns only on error, or with the exit code of a dry run.
pub fn run(ctx: &Context) -> Result<i32> {
    if flag(ctx, vars::DISABLE)? {
        // Only the config's `nvcc` counts: nothing is parsed, planned or overridden.
        let located = prepare::pass_through(ctx)?;
        debug!("{}=1: running {} with the arguments untouched", vars::DISABLE, crate::shell::path(&located.nvcc.path));
        let err = exec::exec_as_given(&located.nvcc.path, &ctx.args, &ctx.env, located.depth);
        return Err(exec::cannot_run(&located.nvcc.path, &err));
    }
    let prepared = prepare::prepare(ctx, ctx.args.clone())?;
    if tracing::enabled!(tracing::Level::DEBUG) {
        for line in report::lines(&prepared) {
            debug!("{line}");
        }
    }
    for warning in &prepared.plan.warnings {
        eprintln!("nvcc-wrapper: warning: {warning}");
    }
    let command = prepared.final_command();
    // The dry run's command names them too, so it can be run as printed. Not written, nvcc runs as given instead.
    if let Err(e) = exec::write_files(&prepared.plan.written) {
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
    let program = prepared.plan.launcher.as_ref().unwrap_or(nvcc);
    let env = prepared.nvcc_env(ctx);
    // Threads from job slots free now, as many as the memory free holds: `--threads N` right after nvcc, and the
    // wrapper waits to give the slots back.
    let mut slots = match (&prepared.plan.threads, &ctx.jobserver) {
        (Some(threads), crate::context::Jobserver::Usable(client)) => exec::take_slots(client, threads.most - 1),
        _ => Vec::new(),
    };
    if let (Some(threads), false) = (&prepared.plan.threads, slots.is_empty()) {
        let memory = crate::plan::threads::Memory::judge(threads.per_thread_mib, crate::probe::memory::free());
        debug!("{} free job slots; {memory}", slots.len());
        slots.truncate(memory.threads().saturating_sub(1) as usize);
    }
    let mut command = command;
    if !slots.is_empty() {
        let at = usize::from(prepared.plan.launcher.is_some()) + 1;
        let threads = format!("{}", slots.len() + 1);
        debug!("{} job slots taken: nvcc runs with --threads {threads}", slots.len());
        command.splice(at..at, ["--threads".into(), threads.into()]);
    }
    let err = if prepared.plan.depfile.is_some() || !slots.is_empty() {
        // Work left after nvcc: wait for it, give back its slots, complete its dependency files if it succeeded,
        // end as it ended.
        match exec::child::run(program, &command[1..], &env, slots) {
            Ok(status) => {
                if let Some(depfile) = prepared.plan.depfile.as_ref().filter(|_| status.success()) {
                    for warning in exec::complete_depfiles(depfile) {
                        eprintln!("nvcc-wrapper: warning: {warning}");
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
        let why = format!("with the wrapper's additions the command is longer than the kernel takes ({err})");
        let why = Error::new(ErrorKind::Output, why);
        return Err(exec::run_as_given(ctx, &prepared.plan, prepared.setup.located.depth, why, false));
    }
    match &prepared.plan.launcher {
        Some(launcher) => Err(exec::cannot_run_launcher(launcher, &err)),
        None => Err(exec::cannot_run(nvcc, &err)),
    }
}

/// The command as one shell line, exact for any bytes. Variables the plan changes for nvcc (a rewritten
/// NVCC_APPEND_FLAGS, say) lead the line, as a shell would take them; the loop counter is left out, since it is
/// bookkeeping, not part of the command.
fn dry_run_line(prepared: &Prepared, command: &[OsString]) -> Vec<u8> {
    let mut line = Vec::new();
    for (name, value) in prepared.plan.env.iter().filter(|(name, _)| *name != vars::DEPTH) {
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
