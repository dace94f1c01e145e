//! Hostile or careless input, in front of the fake nvcc: whatever a user gives must never crash, hang or loop the
//! wrapper; when it cannot understand something, it changes nothing and lets nvcc judge (issues 12 and 26). The
//! cases only the real nvcc can judge are tests/real/hostile.rs.

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
/// stops at once and the outer one carries on. The configured compiler is not replaced by another (issue 38): it goes
/// to nvcc as configured, unchecked, and explain says why.
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
    let args = sb.recorded().args();
    assert_eq!(args[args.len() - 2..], ["-c", "k.cu"]);
    assert_eq!(args[0], format!("-ccbin={}", cc.display()), "{args:?}");
    assert_eq!(args.iter().filter(|a| a.starts_with("-ccbin")).count(), 1, "{args:?}");
    let explain = sb.wrapper_cli().env("NVCC_WRAPPER_CONFIG", &config).args(["explain", "--", "-c", "k.cu"]).output();
    let text = stdout(&explain.unwrap());
    assert!(text.contains("could not be asked what it is (`") && text.contains("exit status: 125"), "{text}");
    assert!(text.contains("it is kept as configured, unchecked"), "{text}");
}

/// A compiler that never answers is stopped once it has done nothing for the probe time limit, named, and left out.
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
    assert!(text.contains(&format!("`{} --version` did nothing for 10 s", cc.display())), "{text}");
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
/// (a quarter of the stack limit, at least 128 KiB) without a shell adding variables of its own: 512 KiB gives the
/// least limit, 128 KiB, and leaves 384 KiB of stack for the wrapper (256 KiB left 128 KiB, which a debug build
/// outgrew when every config key took its origin).
#[test]
fn a_call_at_the_argument_limit_still_runs_when_the_additions_do_not_fit() {
    // util-linux is essential on Debian: no machine the tests run on lacks it, and a skip would pass in silence.
    let prlimit = which::which("prlimit").expect("prlimit (util-linux) is not installed");
    let sb = Sandbox::new();
    let fake = sb.cuda_bin.join("nvcc");
    let stack = "--stack=524288:524288";
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

/// nvcc starts with the SIGPIPE and SIGXFSZ dispositions the wrapper's caller gave it, whether the wrapper execs it or
/// keeps it (threads from a jobserver). Rust's runtime ignores SIGPIPE before `main` and std's exec sets it back to
/// the default, so nvcc used to get the default whatever the caller chose; the wrapper, its keeper and its guard
/// ignore both for their own writes (issue 57), and must not hand that to nvcc.
#[test]
fn nvcc_starts_with_the_callers_sigpipe_and_sigxfsz_dispositions() {
    let sb = Sandbox::new();
    // A real nvcc's stand-in that writes its own SigIgn mask (a shell keeps what it was started with).
    let nvcc = sb.write("sig/bin/nvcc", "#!/bin/sh\ngrep '^SigIgn:' /proc/self/status > \"$SIG_RECORD\"\n");
    std::fs::set_permissions(&nvcc, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    sb.write("sig/version.json", r#"{"cuda_nvcc": {"version": "13.0.88"}}"#);
    let config = std::fs::read_to_string(&sb.config).unwrap();
    let config = sb.write("sig.toml", &format!("nvcc = \"{}\"\n{config}", nvcc.display()));
    let record = sb.dir.path().join("sigign");
    let kept = format!(
        "{} jobserver -j 2 -- nvcc -c k.cu -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_90,code=sm_90",
        WRAPPER
    );
    for (caller, ignored) in [("trap '' PIPE XFSZ; ", true), ("", false)] {
        for call in ["nvcc -c k.cu", kept.as_str()] {
            let _ = std::fs::remove_file(&record);
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(format!("{caller}exec {call}"))
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
            // SIGPIPE is signal 13 (bit 12 of the mask), SIGXFSZ 25 (bit 24).
            for (signal, bit) in [("SIGPIPE", 12), ("SIGXFSZ", 24)] {
                assert_eq!(mask & (1 << bit) != 0, ignored, "caller {caller:?}, {call}: nvcc's {signal} in {line}");
            }
        }
    }
}

// Issue 26: hostile input, round two. Each test below failed on cfaf97f.

/// An executable script at `relative` in the sandbox.
fn script(sb: &Sandbox, relative: &str, text: &str) -> std::path::PathBuf {
    let path = sb.write(relative, text);
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    path
}

/// The sandbox's config with `[gpu] capabilities = ["8.6"]` and `arch-flags = "replace"`.
fn replace_config(sb: &Sandbox) -> std::path::PathBuf {
    let base = std::fs::read_to_string(&sb.config).unwrap();
    sb.write("replace.toml", &format!("{base}[gpu]\ncapabilities = [\"8.6\"]\narch-flags = \"replace\"\n"))
}

/// Whether a process is gone (or a zombie, which runs nothing).
fn gone(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())) {
        Err(_) => true,
        Ok(stat) => stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

fn wait_gone(pid: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !gone(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    gone(pid)
}

/// Item 1: under `replace`, an options file the wrapper cannot read (a pipe) made it apply nothing, silently.
#[test]
fn a_policy_an_unreadable_options_file_defeats_is_said_at_the_default_level() {
    let sb = Sandbox::new();
    let config = replace_config(&sb);
    let mut cmd = std::process::Command::new("bash");
    cmd.arg("-c").arg("nvcc -optf <(printf -- '-arch=sm_80 -c k.cu')");
    cmd.env_clear().env("PATH", sb.path()).env("FAKE_NVCC_RECORD", &sb.record).env("NVCC_WRAPPER_CONFIG", &config);
    let out = cmd.current_dir(sb.dir.path()).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let said = warnings(&out);
    assert_eq!(said.len(), 1, "{}", stderr(&out));
    assert!(said[0].contains("is not a regular file") && said[0].contains("`arch-flags`"), "{}", said[0]);
    // What runs is still exactly the user's command line.
    assert_eq!(sb.recorded().args()[0], "-optf");
}

/// Item 2: a config that is a FIFO without a writer hung forever, `/dev/zero` was read until memory ran out.
#[test]
fn a_config_that_is_a_fifo_a_device_or_too_large_is_refused_at_once() {
    let sb = Sandbox::new();
    let fifo = sb.dir.path().join("config.fifo");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let big = sb.write("big.toml", &"#".repeat((1 << 20) + 1));
    for (config, says) in [
        (fifo.as_path(), "it is a FIFO or pipe, not a regular file"),
        (std::path::Path::new("/dev/zero"), "it is a character device, not a regular file"),
        (big.as_path(), "it is larger than 1 MiB, the most the wrapper reads"),
    ] {
        let mut cmd = sb.nvcc_process();
        cmd.env("NVCC_WRAPPER_CONFIG", config).args(["-c", "k.cu"]);
        let child = cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
        let out = wait_at_most(child, Duration::from_secs(10), "a hostile config");
        assert_eq!(out.status.code(), Some(78), "{}", stderr(&out));
        assert!(stderr(&out).contains("cannot read config file") && stderr(&out).contains(says), "{}", stderr(&out));
    }
    // /dev/null is an empty config, as for git.
    let out = sb.nvcc().env("NVCC_WRAPPER_CONFIG", "/dev/null").args(["-c", "k.cu"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

/// The options-file bounds: one larger than 16 MiB, or more than 64 MiB of them in one call, is left to nvcc unread,
/// with one warning.
#[test]
fn options_files_past_the_size_bounds_are_left_to_nvcc() {
    let sb = Sandbox::new();
    let line = "-DPADDING_PADDING_PADDING_PADDING_PADDING_PADDING_PADDING_PADDING=1\n";
    let big = line.repeat((16 << 20) / line.len() + 1);
    sb.write("big.opt", &big);
    let out = sb.nvcc().args(["-optf", "big.opt", "-c", "k.cu"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(sb.recorded().args(), ["-optf", "big.opt", "-c", "k.cu"], "nothing added");
    let said = warnings(&out);
    assert!(said.len() == 1 && said[0].contains("larger than 16 MiB"), "{said:?}");
    // Five times one of 15 MiB: the fifth is past the 64 MiB a call reads.
    sb.write("mid.opt", &line.repeat((15 << 20) / line.len()));
    let out = sb.nvcc().args(["-optf", "mid.opt,mid.opt,mid.opt,mid.opt,mid.opt", "-c", "k.cu"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let said = warnings(&out);
    assert!(said.len() == 1 && said[0].contains("more than 64 MiB"), "{said:?}");
}

/// Item 3: a compiler whose `--version` floods its output aborted the wrapper (a 2 GiB allocation, SIGABRT).
#[test]
fn a_compiler_that_floods_its_output_is_stopped_at_the_bound() {
    let sb = Sandbox::new();
    let cc = script(&sb, "flood/g++", "#!/bin/sh\nexec yes\n");
    let config = sb.write("flood.toml", &format!("[host-compiler]\nstdenv = \"{}\"\n", cc.display()));
    let cache = sb.dir.path().join("probe-cache");
    let mut cmd = sb.nvcc_process();
    cmd.env("NVCC_WRAPPER_CONFIG", &config).env("NVCC_WRAPPER_PROBE_CACHE_DIR", &cache).args(["-c", "k.cu"]);
    let child = cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    let out = wait_at_most(child, Duration::from_secs(20), "a compiler that floods");
    assert!(out.status.success(), "{:?}: {}", out.status, stderr(&out));
    let said = warnings(&out);
    assert_eq!(said.len(), 1, "{}", stderr(&out));
    assert!(said[0].contains(&format!("`{} --version` printed more than 1 MiB and was stopped", cc.display())));
    let text = stdout(
        &sb.wrapper_cli()
            .env("NVCC_WRAPPER_CONFIG", &config)
            .env("NVCC_WRAPPER_PROBE_CACHE_DIR", &cache)
            .args(["explain", "--", "-c", "k.cu"])
            .output()
            .unwrap(),
    );
    assert!(text.contains("printed more than 1 MiB and was stopped"), "{text}");
}

/// Item 4: a compiler hung on `--version` cost 10 s on every call, said nothing, left its children running, and was
/// never remembered.
#[test]
fn a_hung_compiler_is_killed_with_its_children_said_once_and_remembered() {
    let sb = Sandbox::new();
    let pids = sb.dir.path().join("pids");
    let cc = script(&sb, "hung/g++", &format!("#!/bin/sh\nsleep 600 &\necho $$ $! >> '{}'\nwait\n", pids.display()));
    let config = sb.write("hung.toml", &format!("[host-compiler]\nstdenv = \"{}\"\n", cc.display()));
    let cache = sb.dir.path().join("probe-cache");
    let call = || {
        let mut cmd = sb.nvcc_process();
        cmd.env("NVCC_WRAPPER_CONFIG", &config).env("NVCC_WRAPPER_PROBE_CACHE_DIR", &cache).args(["-c", "k.cu"]);
        let started = Instant::now();
        let child = cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
        (wait_at_most(child, Duration::from_secs(30), "a hung compiler"), started.elapsed())
    };
    let (first, took) = call();
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(took >= Duration::from_secs(10), "{took:?}");
    let said = warnings(&first);
    assert_eq!(said.len(), 1, "one warning at the default level: {}", stderr(&first));
    assert!(said[0].contains(&format!("`{} --version` did nothing for 10 s (no CPU time, no page read, in any process it started) and was stopped", cc.display())), "{}", said[0]);
    for pid in std::fs::read_to_string(&pids).unwrap().split_whitespace() {
        assert!(wait_gone(pid), "process {pid} of the hung probe outlived it");
    }
    // The next call does not wait again: the failure is kept for a while.
    let (second, took) = call();
    assert!(second.status.success(), "{}", stderr(&second));
    assert!(took < Duration::from_secs(5), "the hung compiler was run again: {took:?}");
    let said = warnings(&second);
    assert!(said.len() == 1 && said[0].contains("in an earlier call"), "{said:?}");
    assert_eq!(std::fs::read_to_string(&pids).unwrap().lines().count(), 1, "run once");
}

/// Item 4: SIGTERM to the wrapper while it probes left the probe and its children running.
#[test]
fn sigterm_while_probing_stops_the_probe_and_its_children() {
    let sb = Sandbox::new();
    let pids = sb.dir.path().join("pids");
    let cc = script(
        &sb,
        "hung/g++",
        &format!("#!/bin/sh\nsleep 600 &\necho $$ $! > '{0}.tmp'; mv '{0}.tmp' '{0}'\nwait\n", pids.display()),
    );
    let config = sb.write("hung.toml", &format!("[host-compiler]\nstdenv = \"{}\"\n", cc.display()));
    let mut cmd = sb.nvcc_process();
    cmd.env("NVCC_WRAPPER_CONFIG", &config).env("NVCC_WRAPPER_PROBE_CACHE", "0").args(["-c", "k.cu"]);
    let mut child = cmd.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !pids.exists() {
        assert!(Instant::now() < deadline, "the probe never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(std::process::Command::new("kill").arg(child.id().to_string()).status().unwrap().success());
    let status = child.wait().unwrap();
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(15), "{status:?}");
    for pid in std::fs::read_to_string(&pids).unwrap().split_whitespace() {
        assert!(wait_gone(pid), "process {pid} of the probe outlived the wrapper");
    }
}

/// Item 5: two copies of the wrapper (files, not links) before the real nvcc ran each other to exit 125.
#[test]
fn two_copies_of_the_wrapper_on_path_reach_the_real_nvcc() {
    let sb = Sandbox::new();
    let (a, b) = (sb.dir.path().join("a"), sb.dir.path().join("b"));
    for dir in [&a, &b] {
        std::fs::create_dir_all(dir).unwrap();
        // By `cp`: a descriptor open for writing here could leak into another test's child (ETXTBSY).
        assert!(std::process::Command::new("cp").arg(WRAPPER).arg(dir.join("nvcc")).status().unwrap().success());
    }
    let path = std::env::join_paths([&a, &b, &sb.cuda_bin, std::path::Path::new("/usr/bin")]).unwrap();
    let out = sb.nvcc().env("PATH", path).args(["-c", "k.cu"]).output().unwrap();
    assert!(out.status.success(), "{:?}: {}", out.status.code(), stderr(&out));
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    let record = sb.recorded();
    assert_eq!(record.args()[record.args().len() - 2..], ["-c", "k.cu"]);
    assert_eq!(record.env("NVCC_WRAPPER_DEPTH").as_deref(), Some("1"), "nvcc was started by one wrapper");
}

/// The largest argument that `argv0 ARG tail...` still starts with under `prlimit --stack` and `env`.
fn largest_argument(
    prlimit: &std::path::Path,
    argv0: &std::path::Path,
    tail: &[&str],
    env: &[(&str, &std::ffi::OsStr)],
    dir: &std::path::Path,
) -> usize {
    let starts = |pad: usize| {
        let mut cmd = std::process::Command::new(prlimit);
        cmd.arg("--stack=524288:524288").arg(argv0).arg("x".repeat(pad)).args(tail).env_clear();
        cmd.envs(env.iter().copied()).current_dir(dir).output().unwrap().status.success()
    };
    let (mut fits, mut fails) = (1usize, 131_000usize);
    assert!(starts(fits) && !starts(fails), "the limit is not where this test expects it");
    while fails - fits > 1 {
        let mid = (fits + fails) / 2;
        if starts(mid) {
            fits = mid;
        } else {
            fails = mid;
        }
    }
    fits
}

/// Item 6: at the kernel's limit, a call nvcc alone runs failed (126) when only the wrapper's loop counter did not
/// fit: the plan changed nothing, so there was no fallback.
#[test]
fn a_call_at_the_limit_runs_even_when_only_the_loop_counter_does_not_fit() {
    // util-linux is essential on Debian: no machine the tests run on lacks it, and a skip would pass in silence.
    let prlimit = which::which("prlimit").expect("prlimit (util-linux) is not installed");
    let sb = Sandbox::new();
    // The wrapper's path as long as the real nvcc's, so that the wrapper starts whenever nvcc alone would.
    let wrap = sb.dir.path().join("wrap/bin");
    std::fs::create_dir_all(&wrap).unwrap();
    std::os::unix::fs::symlink(WRAPPER, wrap.join("nvcc")).unwrap();
    let path = std::env::join_paths([&wrap, &sb.cuda_bin]).unwrap();
    let env = [
        ("PATH", path.as_os_str()),
        ("FAKE_NVCC_RECORD", sb.record.as_os_str()),
        ("NVCC_WRAPPER_CONFIG", sb.config.as_os_str()),
    ];
    let fits = largest_argument(&prlimit, &sb.cuda_bin.join("nvcc"), &["--version"], &env, sb.dir.path());
    let _ = std::fs::remove_file(&sb.record);
    let mut cmd = std::process::Command::new(&prlimit);
    cmd.arg("--stack=524288:524288").arg(wrap.join("nvcc")).arg("x".repeat(fits)).arg("--version").env_clear();
    let out = cmd.envs(env).current_dir(sb.dir.path()).output().unwrap();
    assert!(out.status.success(), "{:?}: {}", out.status, stderr(&out));
    let said = warnings(&out);
    assert!(said.len() == 1 && said[0].contains("longer than the kernel takes"), "{said:?}");
    assert!(said[0].contains("without the wrapper's loop counter"), "{said:?}");
    assert_eq!(sb.recorded().args()[1..], ["--version"]);
}

/// Item 6: under `replace`, the fallback ran the user's own GPU targets and said only "running nvcc without them".
#[test]
fn the_fallback_at_the_limit_names_the_decisions_it_drops() {
    // util-linux is essential on Debian: no machine the tests run on lacks it, and a skip would pass in silence.
    let prlimit = which::which("prlimit").expect("prlimit (util-linux) is not installed");
    let sb = Sandbox::new();
    let config = replace_config(&sb);
    let depth = std::ffi::OsStr::new("1");
    let env = [
        ("PATH", sb.path()),
        ("FAKE_NVCC_RECORD", sb.record.clone().into_os_string()),
        ("NVCC_WRAPPER_CONFIG", config.clone().into_os_string()),
    ];
    let mut with_depth: Vec<(&str, &std::ffi::OsStr)> = env.iter().map(|(k, v)| (*k, v.as_os_str())).collect();
    with_depth.push(("NVCC_WRAPPER_DEPTH", depth));
    let tail = ["-arch=sm_80", "-c", "k.cu"];
    let fits = largest_argument(&prlimit, &sb.cuda_bin.join("nvcc"), &tail, &with_depth, sb.dir.path());
    let _ = std::fs::remove_file(&sb.record);
    let mut cmd = std::process::Command::new(&prlimit);
    cmd.arg("--stack=524288:524288").arg(sb.wrapper_bin.join("nvcc")).arg("x".repeat(fits)).args(tail);
    let out = cmd.env_clear().envs(env.iter().cloned()).current_dir(sb.dir.path()).output().unwrap();
    assert!(out.status.success(), "{:?}: {}", out.status, stderr(&out));
    let said = warnings(&out);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(said[0].contains("keeping `-arch=sm_80` that it would have removed"), "{}", said[0]);
    assert!(
        said[0].contains("without adding `") && said[0].contains("-gencode=arch=compute_86,code=sm_86"),
        "{}",
        said[0]
    );
    assert_eq!(sb.recorded().args()[1..], tail, "nvcc ran with the user's arguments only");
}

/// Item 7: nvcc 12.4, 13.0 and 13.5 split `NVCC_*_FLAGS` at space and tab only; the wrapper also split at CR, and
/// under `replace` rewrote `-DMY1=1\r-DMY2=2` (one argument) as two. Options files keep a form feed in a word too.
#[test]
fn replace_keeps_the_words_nvcc_splits_byte_for_byte() {
    let sb = Sandbox::new();
    let config = replace_config(&sb);
    sb.write("ff.opt", "-DA=1\x0c-DB=2 -arch=sm_80 \"-DC=p\\\\q\"\n");
    let out = sb
        .nvcc()
        .env("NVCC_WRAPPER_CONFIG", &config)
        .env("NVCC_APPEND_FLAGS", "-DMY1=1\r-DMY2=2 -arch=sm_80")
        .args(["-optf", "ff.opt", "-c", "k.cu"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let record = sb.recorded();
    assert_eq!(record.env("NVCC_APPEND_FLAGS").as_deref(), Some("-DMY1=1\r-DMY2=2"));
    let args = record.args();
    let at = args.iter().position(|a| a == "-optf").unwrap();
    let rewritten = std::fs::read_to_string(&args[at + 1]).unwrap();
    assert_eq!(rewritten, "\"-DA=1\x0c-DB=2\"\n\"-DC=p\\\\q\"\n");
}

/// Item 8: nvcc 12.4 ignores `NVCC_CCBIN`; the wrapper passed `/nonexistent/g++` on as `-ccbin=` and the build
/// failed where nvcc alone built.
#[test]
fn nvcc_ccbin_naming_no_program_is_ignored_on_a_release_that_ignores_it() {
    let sb = Sandbox::new();
    sb.write("cuda/version.json", r#"{"cuda_nvcc": {"name": "CUDA NVCC", "version": "12.4.131"}}"#);
    let out = sb.nvcc().env("NVCC_CCBIN", "/nonexistent/g++").args(["-c", "k.cu"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let args = sb.recorded().args();
    assert!(!args.iter().any(|a| a.contains("/nonexistent/g++")), "{args:?}");
    assert_eq!(args[0], sb.ccbin(), "the wrapper chose the compiler, as without NVCC_CCBIN");
    let said = warnings(&out);
    assert!(said.len() == 1 && said[0].contains("$NVCC_CCBIN=/nonexistent/g++ names no program"), "{said:?}");
}

/// Item 9: `HOME=/homeless-shelter` (Nix builds) made the wrapper create that directory; `HOME=/dev/null` made the
/// call fail (74). It must never create a home, keep working when it can write no cache, and in a Nix build write
/// only in the build's own directory.
#[test]
fn the_wrapper_never_creates_a_home_and_works_without_a_cache() {
    let sb = Sandbox::new();
    let config = replace_config(&sb);
    sb.write("reg.opt", "-arch=sm_80\n");
    let tmp = sb.dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let shelter = sb.dir.path().join("homeless-shelter");
    let optf = |out: &std::process::Output| {
        assert!(out.status.success(), "{}", stderr(out));
        let args = sb.recorded().args();
        args[args.iter().position(|a| a == "-optf").unwrap() + 1].clone()
    };
    for home in [shelter.as_path(), std::path::Path::new("/dev/null")] {
        let out = sb
            .nvcc()
            .env("NVCC_WRAPPER_CONFIG", &config)
            .env("HOME", home)
            .env("TMPDIR", &tmp)
            .args(["-optf", "reg.opt", "-c", "k.cu"])
            .output()
            .unwrap();
        let written = optf(&out);
        assert!(written.starts_with(&*tmp.to_string_lossy()), "{written}");
        assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    }
    assert!(!shelter.exists(), "the wrapper created HOME");
    // In a Nix build, the build's own directory, even with a home that exists.
    let (top, home) = (sb.dir.path().join("build"), sb.dir.path().join("home"));
    std::fs::create_dir(&top).unwrap();
    std::fs::create_dir(&home).unwrap();
    let nix = |top: &std::path::Path| {
        sb.nvcc()
            .env("NVCC_WRAPPER_CONFIG", &config)
            .env("HOME", &home)
            .env("NIX_BUILD_TOP", top)
            .env("TMPDIR", top)
            .args(["-optf", "reg.opt", "-c", "k.cu"])
            .output()
            .unwrap()
    };
    let written = optf(&nix(&top));
    assert!(written.starts_with(&*top.to_string_lossy()), "{written}");
    assert_eq!(std::fs::read_dir(&home).unwrap().count(), 0, "wrote into HOME");
    // Nowhere to write: the call still runs, as given, and says what that drops.
    let blocked = sb.dir.path().join("blocked");
    std::fs::create_dir(&blocked).unwrap();
    sb.write("blocked/.nvcc-wrapper", "a file where the directory would go");
    let out = nix(&blocked);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(sb.recorded().args(), ["-optf", "reg.opt", "-c", "k.cu"]);
    let said = warnings(&out);
    assert!(said.len() == 1 && said[0].contains("keeping `-arch=sm_80` that it would have removed"), "{said:?}");
}

/// Item 10: `explain` and errors showed bytes that are not UTF-8 in paths as U+FFFD.
#[test]
fn paths_that_are_not_utf8_are_shown_exactly() {
    use std::os::unix::ffi::OsStrExt;
    let sb = Sandbox::new();
    let odd = std::ffi::OsStr::from_bytes(b"c\xff.toml");
    std::fs::copy(&sb.config, sb.dir.path().join(odd)).unwrap();
    let cuda = sb.dir.path().join(std::ffi::OsStr::from_bytes(b"cuda\xfe"));
    std::os::unix::fs::symlink(&sb.cuda_bin, &cuda).unwrap();
    let path = std::env::join_paths([&sb.wrapper_bin, &cuda, std::path::Path::new("/usr/bin")]).unwrap();
    let out = sb
        .wrapper_cli()
        .env("PATH", path)
        .env("NVCC_WRAPPER_CONFIG", sb.dir.path().join(odd))
        .args(["explain", "--", "-c", "k.cu"])
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(!text.contains('\u{fffd}'), "{text}");
    assert!(text.contains("c\\xff.toml") && text.contains("cuda\\xfe/nvcc"), "{text}");
    let missing = std::ffi::OsStr::from_bytes(b"o\xff.opt");
    let out = sb.nvcc().arg("-optf").arg(missing).args(["-c", "k.cu"]).output().unwrap();
    assert_eq!(out.status.code(), Some(66));
    assert!(!stderr(&out).contains('\u{fffd}') && stderr(&out).contains("o\\xff.opt"), "{}", stderr(&out));
    // Errors that name a configured path: an invalid config file, a launcher that is not there.
    let bad = sb.dir.path().join(std::ffi::OsStr::from_bytes(b"bad\xfd.toml"));
    std::fs::write(&bad, "cuda-version = 12\n").unwrap();
    let out = sb.nvcc().env("NVCC_WRAPPER_CONFIG", &bad).args(["-c", "k.cu"]).output().unwrap();
    assert_eq!(out.status.code(), Some(78));
    assert!(!stderr(&out).contains('\u{fffd}') && stderr(&out).contains("bad\\xfd.toml"), "{}", stderr(&out));
    let gone = sb.dir.path().join(std::ffi::OsStr::from_bytes(b"cache\xfc"));
    let out = sb.nvcc().env("NVCC_WRAPPER_LAUNCHER", &gone).args(["-c", "k.cu"]).output().unwrap();
    assert_eq!(out.status.code(), Some(72));
    assert!(!stderr(&out).contains('\u{fffd}') && stderr(&out).contains("cache\\xfc"), "{}", stderr(&out));
}

/// Item 10: a `-ccbin` script that calls nvcc again was stopped after 8 levels with a help that blamed PATH or the
/// config. A stand-in for nvcc that, like nvcc, sets `_HERE_` and runs its host compiler as a child.
#[test]
fn a_ccbin_that_calls_nvcc_again_is_blamed_for_the_loop() {
    let sb = Sandbox::new();
    std::fs::remove_file(sb.cuda_bin.join("nvcc")).unwrap();
    script(
        &sb,
        "cuda/bin/nvcc",
        "#!/bin/sh\nexport _HERE_=\"$(dirname \"$0\")\"\ncc=gcc\nfor a in \"$@\"; do case \"$a\" in -ccbin=*) cc=\"${a#-ccbin=}\";; esac; done\n\"$cc\" \"$@\"\nexit $?\n",
    );
    let looped = script(&sb, "loop/g++", "#!/bin/sh\nexec nvcc \"$@\"\n");
    let mut cmd = sb.nvcc_process();
    cmd.env("NVCC_WRAPPER_PROBE_CACHE", "0").arg(format!("-ccbin={}", looped.display())).args(["-c", "k.cu"]);
    let child = cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    let out = wait_at_most(child, Duration::from_secs(60), "a -ccbin that calls nvcc");
    assert_eq!(out.status.code(), Some(125), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("a program that the real nvcc") && err.contains("give `-ccbin` the compiler itself"), "{err}");
}

/// Item 10: a launcher that is the wrapper itself ended in a loop error (or the wrapper's usage error) that did not
/// name it.
#[test]
fn a_launcher_that_is_the_wrapper_is_named() {
    let sb = Sandbox::new();
    for launcher in ["nvcc", WRAPPER] {
        let out = sb.nvcc().env("NVCC_WRAPPER_LAUNCHER", launcher).args(["-c", "k.cu"]).output().unwrap();
        assert_eq!(out.status.code(), Some(125), "{launcher}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains(&format!("`launcher` ({launcher}, from $NVCC_WRAPPER_LAUNCHER) is this wrapper itself")),
            "{err}"
        );
        assert!(!sb.ran());
    }
}

/// Item 10: `NVCC_WRAPPER_LOG="debug "` was accepted and logged nothing.
#[test]
fn a_log_filter_with_blanks_logs() {
    let sb = Sandbox::new();
    let out = sb.nvcc().env("NVCC_WRAPPER_LOG", "debug ").args(["-c", "k.cu"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("nvcc-wrapper[DEBUG]: "), "{}", stderr(&out));
}

/// Item 10: rewritten options files piled up (126 MB for one 100 MB file), and a failed rewrite left its temporary
/// file. Unused ones go after 7 days now, and a failed rewrite leaves nothing and runs nvcc as given.
#[test]
fn rewritten_options_files_are_evicted_and_a_failed_rewrite_leaves_nothing() {
    let sb = Sandbox::new();
    let config = replace_config(&sb);
    let home = sb.dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    sb.write("reg.opt", "-arch=sm_80\n");
    let call = || {
        sb.nvcc()
            .env("NVCC_WRAPPER_CONFIG", &config)
            .env("HOME", &home)
            .args(["-optf", "reg.opt", "-c", "k.cu"])
            .output()
            .unwrap()
    };
    let out = call();
    assert!(out.status.success(), "{}", stderr(&out));
    let args = sb.recorded().args();
    let written = std::path::PathBuf::from(&args[args.iter().position(|a| a == "-optf").unwrap() + 1]);
    let dir = written.parent().unwrap().to_path_buf();
    assert_eq!(dir, home.join(".cache/nvcc-wrapper/options-files"));
    let dated = |name: &str, days: u64| {
        let path = dir.join(name);
        std::fs::write(&path, "-DOLD\n").unwrap();
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(std::time::SystemTime::now() - Duration::from_secs(days * 24 * 3600 + 60)).unwrap();
        path
    };
    let old = dated("0123456789abcdef.optf", 7);
    let recent = dated("fedcba9876543210.optf", 6);
    let stale_temporary = dated(".0123456789abcdef.optf.99.tmp", 1);
    dated(".swept", 2);
    // A new rewrite sweeps the directory (at most once a day).
    sb.write("reg.opt", "-arch=sm_80 -DNEW\n");
    assert!(call().status.success());
    assert!(!old.exists() && !stale_temporary.exists() && recent.exists(), "not swept");
    // The file a call uses cannot be written (a directory stands in its place): nothing is left behind, and nvcc
    // runs as given.
    sb.write("reg.opt", "-arch=sm_80 -DBLOCKED\n");
    let mut dry = sb.nvcc();
    dry.env("NVCC_WRAPPER_CONFIG", &config).env("HOME", &home).env("NVCC_WRAPPER_DRY_RUN", "1");
    let line = stdout(&dry.args(["-optf", "reg.opt", "-c", "k.cu"]).output().unwrap());
    let target = line.split_whitespace().skip_while(|w| *w != "-optf").nth(1).unwrap().to_string();
    std::fs::remove_file(&target).unwrap();
    std::fs::create_dir(&target).unwrap();
    std::fs::write(std::path::Path::new(&target).join("in-the-way"), "").unwrap();
    let out = call();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(sb.recorded().args(), ["-optf", "reg.opt", "-c", "k.cu"]);
    let left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.') && n != ".swept")
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

/// The environment reaches nvcc as the caller gave it: in the caller's order, a name defined twice passed on twice,
/// only the wrapper's own counter added (the wrapper reads its environment in place and hands it on; issue 59). The
/// caller is python's `execve` through ctypes, the one way here to give a program a name twice; nvcc is a script that
/// saves the block it was started with (`/proc/PID/environ`).
#[test]
fn nvcc_gets_the_callers_environment_in_its_order_a_name_twice_included() {
    let sb = Sandbox::new();
    let saved = sb.dir.path().join("environ");
    let nvcc = sb.cuda_bin.join("nvcc");
    std::fs::remove_file(&nvcc).unwrap();
    std::fs::write(&nvcc, format!("#!/bin/sh\ncat /proc/$$/environ > '{}'\n", saved.display())).unwrap();
    std::fs::set_permissions(&nvcc, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let given = [
        "ZED=named last, given first".to_string(),
        format!("PATH={}", sb.path().to_str().unwrap()),
        "TWICE=first".to_string(),
        format!("NVCC_WRAPPER_CONFIG={}", sb.config.display()),
        "NVCC_WRAPPER_NO_MACHINE_CONFIG=1".to_string(),
        "TWICE=second".to_string(),
        "AAA=".to_string(),
    ];
    let caller = "import ctypes, sys\n\
                  strings = lambda xs: (ctypes.c_char_p * (len(xs) + 1))(*[x.encode() for x in xs], None)\n\
                  wrapper, env = sys.argv[1], sys.argv[2:]\n\
                  ctypes.CDLL(None).execve(wrapper.encode(), strings([wrapper, '-c', 'k.cu']), strings(env))\n\
                  sys.exit(127)\n";
    let status = std::process::Command::new("python3")
        .args(["-c", caller])
        .arg(sb.wrapper_bin.join("nvcc"))
        .args(&given)
        .current_dir(sb.dir.path())
        .status()
        .unwrap();
    assert!(status.success(), "{status}");
    let block = std::fs::read(&saved).unwrap();
    let seen: Vec<String> =
        block.split(|&b| b == 0).filter(|s| !s.is_empty()).map(|s| String::from_utf8_lossy(s).into()).collect();
    let mut want = given.to_vec();
    want.push("NVCC_WRAPPER_DEPTH=1".to_string());
    assert_eq!(seen, want, "nvcc's environment, as it was started with it");
}
