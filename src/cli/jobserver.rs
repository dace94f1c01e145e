//! `nvcc-wrapper jobserver -j N -- COMMAND`: run a build under a jobserver the wrapper serves (`exec::jobserver`).

use std::ffi::OsString;

use crate::context::Context;
use crate::error::Result;

/// Its arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// How many job slots (the build's jobs and nvcc's extra threads together); default: the processors this
    /// process may use.
    #[arg(short = 'j', long = "jobs", value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    jobs: Option<u32>,
    /// The build command, after `--` (for example: nvcc-wrapper jobserver -j 16 -- ninja -C build).
    #[arg(trailing_var_arg = true, required = true)]
    command: Vec<OsString>,
}

pub fn run(ctx: &Context, Args { jobs, command }: Args) -> Result<i32> {
    let jobs = jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u32));
    crate::exec::jobserver::serve(ctx, jobs, &command)
}
