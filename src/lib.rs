//! nvcc-wrapper: a drop-in `nvcc`. Installed as `nvcc`, it runs the pipe
//!
//! ```text
//! process state  ->  Invocation  ->  Plan  ->  exec
//!   context           args            plan      exec
//! ```
//!
//! end to end in `pipeline`. Called as `nvcc-wrapper`, it is its own command line (`cli`).

pub(crate) mod args;
#[doc(hidden)]
pub use plan::{bench, fuzzing};
pub(crate) mod cli;
/// Where two builds of one file first differ (`check-reproducible`). Pure (bytes in, a place out): also what
/// tests/real/reproducible.rs names a difference with.
#[doc(hidden)]
pub use cli::compare;
pub(crate) mod compat;
pub(crate) mod config;
pub(crate) mod context;
pub(crate) mod error;
pub(crate) mod exec;
/// What makeNvccWrapper's compat.nix looks up: also what tests/real/nix/answers.rs compares its answers with.
#[doc(hidden)]
pub mod nix_answers;
pub(crate) mod pipeline;
pub(crate) mod plan;
pub(crate) mod prepare;
pub(crate) mod probe;
pub(crate) mod report;

/// The checks of the source and the docs: the module graph (`layering`) and the reference pages made from the
/// code (`reference`). Compiled in tests only.
#[cfg(test)]
mod checks;

pub use context::Context;
pub use exec::signals::set_up_process;

/// Run the wrapper in the personality its name asks for; the process exit code.
pub fn main_with(ctx: &Context) -> i32 {
    let result = context::log::init(ctx).and_then(|()| {
        if ctx.invoked_name() == "nvcc-wrapper" && !prepare::locate::started_as_launcher(ctx) {
            cli::run(ctx)
        } else {
            pipeline::run(ctx)
        }
    });
    result.unwrap_or_else(|e| {
        if e.kind != error::ErrorKind::ClosedOutput {
            crate::error::output::stderr(&e);
        }
        e.exit_code()
    })
}
