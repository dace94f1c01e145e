//! The binary: set the process up, read its state once, run, exit. Everything else is in the library (see `lib.rs`).
//!
//! With glibc the entry point is C's `main`, without Rust's runtime set-up: a drop-in nvcc is started once per
//! compile, and that set-up (reading `/proc/self/maps` to place a guard below the main thread's stack, a signal stack
//! for overflows: 16 system calls, 41,000 instructions) cost 0.05 ms of each call (docs/benchmarks.md). What of it the
//! wrapper needs, `set_up_process` does. glibc hands `std::env::args` its arguments itself; elsewhere (musl) only the
//! runtime does, so there the binary keeps Rust's `main`. A stack overflow then ends the wrapper by a plain SIGSEGV,
//! without the runtime's message.
//! (The unit-test harness brings its own `main`: a test build keeps Rust's.)
#![cfg_attr(all(target_env = "gnu", not(test)), no_main)]

/// Runs before `main`, and before Rust's runtime where there is one: records how the caller left the signals and
/// standard streams the wrapper changes, then changes them (see `exec`).
#[used]
#[link_section = ".init_array"]
static SET_UP_PROCESS: extern "C" fn() = nvcc_wrapper::set_up_process;

#[cfg(all(target_env = "gnu", not(test)))]
#[no_mangle]
extern "C" fn main(_argc: std::ffi::c_int, _argv: *const *const std::ffi::c_char) -> std::ffi::c_int {
    run()
}

#[cfg(any(not(target_env = "gnu"), test))]
fn main() {
    run()
}

fn run() -> ! {
    let ctx = nvcc_wrapper::Context::from_process();
    std::process::exit(nvcc_wrapper::main_with(&ctx))
}
