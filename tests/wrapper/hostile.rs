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

/// A stdenv compiler that is a script around `nvcc` (which is the wrapper): probing it starts the wrapper, which
/// would probe it again, without end. Probes hand their programs the loop counter at its limit, so the inner wrapper
/// stops at once and the outer one carries on without that compiler.
#[test]
fn a_compiler_that_calls_nvcc_does_not_make_the_wrapper_recurse() {
    let sb = Sandbox::new();
    let cc = sb.write("loop/g++", "#!/bin/sh\nexec nvcc \"$@\"\n");
    std::fs::set_permissions(&cc, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let config = sb.write("loop.toml", &format!("[host-compiler]\nstdenv = \"{}\"\n", cc.display()));
    let mut cmd = sb.nvcc_process();
    cmd.env("NVCC_WRAPPER_CONFIG", &config).args(["-c", "k.cu"]);
    let child = cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    let out = wait_at_most(child, Duration::from_secs(20), "a compiler that calls nvcc");
    assert!(out.status.success(), "{}", stderr(&out));
    // The compiler could not be probed, so it is left out, and the call goes on to nvcc without it.
    let args = sb.recorded().args();
    assert_eq!(args[args.len() - 2..], ["-c", "k.cu"]);
    assert!(!args.iter().any(|a| a.contains("loop/g++")), "{args:?}");
    let explain = sb.wrapper_cli().env("NVCC_WRAPPER_CONFIG", &config).args(["explain", "--", "-c", "k.cu"]).output();
    let text = stdout(&explain.unwrap());
    assert!(text.contains("the stdenv compiler is left out: `") && text.contains("exit status: 125"), "{text}");
}

/// A compiler that never answers is stopped after the probe time limit, named, and left out.
#[test]
fn a_hung_compiler_is_stopped_and_named() {
    let sb = Sandbox::new();
    let cc = sb.write("hung/g++", "#!/bin/sh\nexec sleep 600\n");
    std::fs::set_permissions(&cc, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let config = sb.write("hung.toml", &format!("[host-compiler]\nstdenv = \"{}\"\n", cc.display()));
    let mut cmd = std::process::Command::new(WRAPPER);
    cmd.env_clear().env("PATH", sb.path()).current_dir(sb.dir.path());
    cmd.env("NVCC_WRAPPER_CONFIG", &config).args(["explain", "--", "-c", "k.cu"]);
    let child = cmd.stdout(std::process::Stdio::piped()).spawn().unwrap();
    let out = wait_at_most(child, Duration::from_secs(30), "explain with a hung compiler");
    let text = stdout(&out);
    assert!(text.contains(&format!("`{} --version` did not finish within 10 s", cc.display())), "{text}");
}

/// `explain`'s `runs:` line, pasted into bash, runs exactly the argv the drop-in gives nvcc, whatever bytes the
/// arguments hold: it used to print bytes that are not UTF-8 as U+FFFD and CR or ESC raw inside quotes.
#[test]
fn explain_pasted_into_bash_runs_exactly_what_the_drop_in_runs() {
    use std::os::unix::ffi::OsStrExt;
    let sb = Sandbox::new();
    let odd: [&[u8]; 6] = [b"-DX=\xff\xfe", b"-DCR=a\rb", b"-DNL=a\nb", b"-DESC=\x1b[31m", b"it's \\ \"q\"", b""];
    let args: Vec<&std::ffi::OsStr> = odd.iter().map(|w| std::ffi::OsStr::from_bytes(w)).collect();
    let out = sb.nvcc().args(&args).arg("-c").arg("k.cu").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let direct = sb.recorded().argv;
    std::fs::remove_file(&sb.record).unwrap();

    let mut explain = sb.wrapper_cli();
    explain.env("NVCC_WRAPPER_CONFIG", &sb.config).arg("explain").arg("--").args(&args).args(["-c", "k.cu"]);
    let text = stdout(&explain.output().unwrap());
    assert!(!text.contains('\u{fffd}') && !text.contains('\r') && !text.contains('\x1b'), "{text:?}");
    let runs = text.lines().find_map(|l| l.strip_prefix("runs:")).unwrap_or_else(|| panic!("{text}")).trim_start();
    let pasted = std::process::Command::new("bash")
        .arg("-c")
        .arg(runs)
        .env_clear()
        .env("FAKE_NVCC_RECORD", &sb.record)
        .current_dir(sb.dir.path())
        .output()
        .unwrap();
    assert!(pasted.status.success(), "{}", stderr(&pasted));
    assert_eq!(sb.recorded().argv, direct, "the pasted line ran another command");
}

/// Right at the kernel's argument limit, a call nvcc alone runs must run through the wrapper too: when its additions
/// push the command over the limit (E2BIG), it runs nvcc without them and says so. `prlimit --stack` sets the limit
/// (a quarter of the stack limit, at least 128 KiB) without a shell adding variables of its own.
#[test]
fn a_call_at_the_argument_limit_still_runs_when_the_additions_do_not_fit() {
    let Some(prlimit) = real_program("prlimit") else { return };
    let sb = Sandbox::new();
    let fake = sb.cuda_bin.join("nvcc");
    let stack = "--stack=262144:262144";
    // As the wrapper runs nvcc without additions: argv[0] its path, the sandbox's variables and the loop counter.
    let direct = |pad: usize| {
        let mut cmd = std::process::Command::new(&prlimit);
        cmd.arg(stack).arg(&fake).arg("x".repeat(pad)).args(["-c", "k.cu"]);
        cmd.env_clear().env("PATH", sb.path()).env("FAKE_NVCC_RECORD", &sb.record);
        cmd.env("NVCC_WRAPPER_CONFIG", &sb.config).env("NVCC_WRAPPER_DEPTH", "1").current_dir(sb.dir.path());
        cmd.output().unwrap().status.success()
    };
    // The longest single argument nvcc alone still gets (one argument may hold 128 KiB; the total is the limit).
    let (mut fits, mut fails) = (1usize, 131_000usize);
    assert!(direct(fits) && !direct(fails), "the limit is not where this test expects it");
    while fails - fits > 1 {
        let mid = (fits + fails) / 2;
        if direct(mid) {
            fits = mid;
        } else {
            fails = mid;
        }
    }
    let _ = std::fs::remove_file(&sb.record);
    let mut cmd = std::process::Command::new(&prlimit);
    cmd.arg(stack).arg(sb.wrapper_bin.join("nvcc")).arg("x".repeat(fits)).args(["-c", "k.cu"]);
    cmd.env_clear().env("PATH", sb.path()).env("FAKE_NVCC_RECORD", &sb.record);
    let out = cmd.env("NVCC_WRAPPER_CONFIG", &sb.config).current_dir(sb.dir.path()).output().unwrap();
    assert!(out.status.success(), "{:?}: {}", out.status, stderr(&out));
    assert!(stderr(&out).contains("longer than the kernel takes"), "{}", stderr(&out));
    assert_eq!(sb.recorded().args()[1..], ["-c", "k.cu"], "nvcc ran with the user's arguments only");
}

/// nvcc starts with the SIGPIPE disposition the wrapper's caller gave it. Rust's runtime ignores SIGPIPE before
/// `main` and std's exec sets it back to the default, so nvcc used to get the default whatever the caller chose.
#[test]
fn nvcc_starts_with_the_callers_sigpipe_disposition() {
    let sb = Sandbox::new();
    // A real nvcc's stand-in that writes its own SigIgn mask (a shell keeps what it was started with).
    let nvcc = sb.write("sig/bin/nvcc", "#!/bin/sh\ngrep '^SigIgn:' /proc/self/status > \"$SIG_RECORD\"\n");
    std::fs::set_permissions(&nvcc, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    sb.write("sig/version.json", r#"{"cuda_nvcc": {"version": "13.0.88"}}"#);
    let config = std::fs::read_to_string(&sb.config).unwrap();
    let config = sb.write("sig.toml", &format!("nvcc = \"{}\"\n{config}", nvcc.display()));
    let record = sb.dir.path().join("sigign");
    for (caller, ignored) in [("trap '' PIPE; ", true), ("", false)] {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("{caller}exec nvcc -c k.cu"))
            .env_clear()
            .env("PATH", sb.path())
            .env("NVCC_WRAPPER_CONFIG", &config)
            .env("SIG_RECORD", &record)
            .current_dir(sb.dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let line = std::fs::read_to_string(&record).unwrap();
        let mask = u64::from_str_radix(line.trim().trim_start_matches("SigIgn:").trim(), 16).unwrap();
        // SIGPIPE is signal 13: bit 12 of the mask.
        assert_eq!(mask & (1 << 12) != 0, ignored, "caller {caller:?}: nvcc's {line}");
    }
}
