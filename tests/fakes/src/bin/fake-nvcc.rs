//! A stand-in for nvcc in the wrapper's integration tests. It records what it was started with and behaves as told.
//!
//! - `FAKE_NVCC_RECORD=FILE`: write `{"argv": [[bytes]...], "env": {"NAME": [bytes]}}` to FILE (argv[0] included,
//!   every argument as its raw bytes, so non-UTF-8 arguments compare exactly).
//! - `FAKE_NVCC_ECHO_STDIN=1`: copy stdin to stdout.
//! - `FAKE_NVCC_STDOUT=TEXT` / `FAKE_NVCC_STDERR=TEXT`: print TEXT.
//! - `FAKE_NVCC_EXIT=N`: exit with N; `FAKE_NVCC_SIGNAL=N`: kill itself with signal N.
//! - `FAKE_NVCC_DEPFILE=TEXT`: write TEXT to the file `-MF FILE` (or `-MF=FILE`) names, as nvcc writes its dependency
//!   file.
//! - `FAKE_NVCC_FD=N`: print what can be read from its inherited file descriptor N (as a make jobserver's).
//! - `FAKE_NVCC_PID=FILE`: write its process id to FILE; `FAKE_NVCC_SLEEP=S`: then sleep S seconds (before exiting).
// A stand-in prints as the program it stands in for does.
#![allow(clippy::disallowed_macros)]
// This program is the process under test: reading its real argv and environment is its whole job.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;

fn main() {
    let argv: Vec<Vec<u8>> = std::env::args_os().map(|a| a.as_bytes().to_vec()).collect();
    let env: BTreeMap<String, Vec<u8>> =
        std::env::vars_os().map(|(k, v)| (k.to_string_lossy().into_owned(), v.as_bytes().to_vec())).collect();
    let get = |name: &str| env.get(name).map(|v| String::from_utf8_lossy(v).into_owned());

    if let Some(file) = get("FAKE_NVCC_RECORD") {
        let record = serde_json::json!({ "argv": argv, "env": env });
        std::fs::write(&file, serde_json::to_vec(&record).unwrap()).expect("cannot write FAKE_NVCC_RECORD");
    }
    if let Some(text) = get("FAKE_NVCC_DEPFILE") {
        let named = argv.iter().enumerate().find_map(|(i, a)| match a.strip_prefix(b"-MF") {
            Some(b"") => argv.get(i + 1).cloned(),
            Some(rest) => rest.strip_prefix(b"=").map(<[u8]>::to_vec),
            None => None,
        });
        if let Some(file) = named {
            std::fs::write(String::from_utf8(file).unwrap(), text).expect("cannot write the dependency file");
        }
    }
    if let Some(fd) = get("FAKE_NVCC_FD") {
        let text = std::fs::read(format!("/proc/self/fd/{fd}")).expect("FAKE_NVCC_FD is not open");
        std::io::stdout().write_all(&text).unwrap();
    }
    if let Some(file) = get("FAKE_NVCC_PID") {
        std::fs::write(&file, std::process::id().to_string()).expect("cannot write FAKE_NVCC_PID");
    }
    if let Some(seconds) = get("FAKE_NVCC_SLEEP") {
        std::thread::sleep(std::time::Duration::from_secs_f64(seconds.parse().expect("FAKE_NVCC_SLEEP: seconds")));
    }
    if get("FAKE_NVCC_ECHO_STDIN").as_deref() == Some("1") {
        let mut input = Vec::new();
        std::io::stdin().read_to_end(&mut input).unwrap();
        std::io::stdout().write_all(&input).unwrap();
    }
    if let Some(text) = get("FAKE_NVCC_STDOUT") {
        print!("{text}");
    }
    if let Some(text) = get("FAKE_NVCC_STDERR") {
        eprint!("{text}");
    }
    std::io::stdout().flush().unwrap();
    if let Some(signal) = get("FAKE_NVCC_SIGNAL") {
        let status = std::process::Command::new("kill")
            .args([format!("-{signal}"), std::process::id().to_string()])
            .status()
            .expect("cannot run kill");
        assert!(status.success());
        std::thread::sleep(std::time::Duration::from_secs(5));
    }
    std::process::exit(get("FAKE_NVCC_EXIT").map_or(0, |c| c.parse().expect("FAKE_NVCC_EXIT must be a number")));
}
