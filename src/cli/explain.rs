//! `nvcc-wrapper explain`: the command the drop-in would run for nvcc's arguments, and why, without running it.

use std::ffi::OsString;

use clap::ValueEnum;

use crate::context::Context;
use crate::error::output;
use crate::error::Result;
use crate::{prepare, report};

/// Its arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// text: lines for people; json: the plan as data for build tools (docs/reference/explain-json.md).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// nvcc's arguments, after `--` (for example: nvcc-wrapper explain -- -c kernel.cu).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<OsString>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
}

pub fn run(ctx: &Context, Args { format, args }: Args) -> Result<i32> {
    let prepared = prepare::describe(ctx, args)?;
    let now = threads_now(ctx, &prepared);
    match format {
        Format::Text => {
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
        Format::Json => {
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
    let lent = crate::plan::threads::lent(&prepared.plan.decided, &ctx.jobserver)?;
    let (slots, memory) = (lent.client.free(), lent.memory());
    let extra = crate::plan::threads::extra_threads(lent.threads.most, memory.threads()).min(slots as u32);
    Some((slots, memory, 1 + extra))
}
