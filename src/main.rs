//! The binary: read the process state once, run, exit. Everything else is in the library (see `lib.rs`).

/// Runs before Rust's runtime ignores SIGPIPE and reopens closed standard streams, to learn how the caller left them
/// (see `exec`).
#[used]
#[link_section = ".init_array"]
static RECORD_CALLER_STATE: extern "C" fn() = nvcc_wrapper::record_caller_state;

fn main() {
    let ctx = nvcc_wrapper::Context::from_process();
    std::process::exit(nvcc_wrapper::main_with(&ctx))
}
