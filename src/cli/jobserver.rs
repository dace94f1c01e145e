//! `nvcc-wrapper jobserver -j N -- COMMAND`: run a build under a jobserver the wrapper serves (`exec::jobserver`).

use std::ffi::OsString;

use crate::context::Context;
use crate::error::Result;

/// Its arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// How many job slots (the build's jobs and nvcc's extra threads together); default: the processors this
    /// process may use.
    #[arg(short = 'j', long = "jobs", value_name = "N", value_parser = job_slots)]
    jobs: Option<u32>,
    /// The build command, after `--` (for example: nvcc-wrapper jobserver -j 16 -- ninja -C build).
    #[arg(trailing_var_arg = true, required = true)]
    command: Vec<OsString>,
}

/// `-j N`: a whole number of slots from 1, refused in words a person reads (clap's own say `1..=4294967295`).
fn job_slots(text: &str) -> std::result::Result<u32, String> {
    match text.parse::<u64>() {
        Ok(0) => Err("a jobserver of 0 job slots runs nothing: give 1 or more".to_string()),
        Ok(n) => u32::try_from(n).map_err(|_| format!("{n} job slots are more than the most, {}", u32::MAX)),
        Err(_) => Err(format!("`{text}` is not a number of job slots: give a whole number, like 16")),
    }
}

pub fn run(ctx: &Context, Args { jobs, command }: Args) -> Result<i32> {
    let jobs = jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u32));
    crate::exec::jobserver::serve(ctx, jobs, &command)
}
