//! nvcc-wrapper: a drop-in `nvcc`. Installed as `nvcc`, it runs the pipe
//!
//! ```text
//! process state  ->  Invocation  ->  Plan  ->  exec
//!   context           args            plan      exec
//! ```
//!
//! end to end in `pipeline`. Called as `nvcc-wrapper`, it is its own command line (`cli`).

pub mod args;
pub mod bounded;
pub mod cli;
pub mod compat;
pub mod config;
pub mod context;
pub mod dirs;
pub mod doctor;
pub mod error;
pub mod evict;
pub mod exec;
#[doc(hidden)]
pub mod fuzzing;
pub mod locate;
pub mod log;
pub mod output;
pub mod pipeline;
pub mod plan;
pub mod prepare;
pub mod probe;
pub mod report;
pub mod shell;
pub mod version;

#[cfg(test)]
mod layering;

use context::Context;

/// Run the wrapper in the personality its name asks for; the process exit code.
pub fn main_with(ctx: &Context) -> i32 {
    let result = log::init(ctx).and_then(|()| {
        if ctx.invoked_name() == "nvcc-wrapper" && !locate::started_as_launcher(ctx) {
            cli::run(ctx)
        } else {
            pipeline::run(ctx)
        }
    });
    result.unwrap_or_else(|e| {
        if e.kind != error::ErrorKind::ClosedOutput {
            eprintln!("{e}");
        }
        e.exit_code()
    })
}
