//! nvcc-wrapper: a drop-in `nvcc`. The pipe is process state -> Invocation -> Plan -> exec.
mod probe;
mod version;

fn main() {}
