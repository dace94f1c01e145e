//! Issue 12, in front of the fake nvcc: input a hostile or careless user gives must never crash, hang or loop the
//! wrapper; when it cannot understand something, it changes nothing and lets nvcc judge.

use std::time::{Duration, Instant};

use crate::support::*;

/// Wait for a child, failing the test (and killing the child) if it runs longer than `limit`.
fn wait_at_most(mut child: std::process::Child, limit: Duration, what: &str) -> std::process::Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            child.kill().unwrap();
            panic!("{what} still runs after {limit:?}: the wrapper hangs");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_fifo_named_as_options_file_is_passed_on_unopened() {
    let sb = Sandbox::new();
    let fifo = sb.dir.path().join("flags.fifo");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    // Nobody writes the FIFO: opening it would block forever. The fake nvcc does not read it either.
    let mut cmd = sb.nvcc_process();
    cmd.args(["-optf", "flags.fifo", "-c", "k.cu"]).stdout(std::process::Stdio::piped());
    let out =
        wait_at_most(cmd.stderr(std::process::Stdio::piped()).spawn().unwrap(), Duration::from_secs(10), "-optf FIFO");
    assert!(out.status.success(), "{}", stderr(&out));
    // Nothing added: the wrapper cannot see what the file holds (a -ccbin, GPU targets), so nvcc decides alone.
    assert_eq!(sb.recorded().args(), ["-optf", "flags.fifo", "-c", "k.cu"]);
}

#[test]
fn thousands_of_nested_options_files_do_not_crash_the_wrapper() {
    let sb = Sandbox::new();
    for i in 0..7000 {
        sb.write(&format!("o/{i}.opt"), &format!("-optf o/{}.opt", i + 1));
    }
    sb.write("o/7000.opt", "-DLEAF");
    let out = sb.nvcc().args(["-optf", "o/0.opt", "-c", "k.cu"]).output().unwrap();
    assert!(out.status.success(), "{:?}: {}", out.status, stderr(&out));
    assert_eq!(sb.recorded().args(), ["-optf", "o/0.opt", "-c", "k.cu"], "a command line nvcc refuses is nvcc's");
}
