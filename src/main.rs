//! The binary: read the process state once, run, exit. Everything else is in the library (see `lib.rs`).

fn main() {
    let ctx = nvcc_wrapper::context::Context::from_process();
    std::process::exit(nvcc_wrapper::main_with(&ctx))
}
