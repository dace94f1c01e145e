//! nvcc-wrapper: a drop-in `nvcc`. The pipe is process state -> Invocation -> Plan -> exec.
// Not wired into the pipe yet; the planner will be its first user.
#[allow(dead_code, unused_imports)]
mod compat;
mod version;

fn main() {}
