//! Threads for nvcc from free job slots with real build tools (issue 31): GNU make 4.3 (Debian 12's, a pipe passed
//! to `+` rules), GNU make 4.4 (Debian 13's, a FIFO) and Ninja 1.13 (PyPI's, a jobserver client) each run a build of
//! three CUDA files with four GPU targets through the wrapper in front of real nvcc 13.5, as clients of a jobserver
//! the test holds: the calls take free slots as threads (following the build, the default), and the slots are all back afterwards, also when the build
//! tool is stopped by SIGINT, SIGTERM or SIGKILL, or the wrappers by SIGKILL, halfway. `nvcc-wrapper jobserver` runs Ninja the same way. And threads give
//! the same bytes as one, with nvcc 11.8, 12.4 and 13.5. Needs real NVCC 11.8, 12.4 and 13.5, make,
//! scripts/install-nix.sh's make-4.4 and scripts/install-tools.sh's ninja.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::cgroup::Cgroup;
use crate::support::*;

const KERNEL: &str = "__global__ void k(float *p) {\n  float a = p[threadIdx.x];\n#pragma unroll\n  for (int i = 0; i < 200; i++) a = a * 1.0001f + __sinf(a);\n  p[threadIdx.x] = a;\n}\n";
const CONFIG: &str =
    "[host-compiler]\nstdenv = \"/usr/bin/g++-12\"\n[gpu]\ncapabilities = [\"8.0\", \"8.6\", \"8.9\", \"9.0\"]\n";
const TOKENS: usize = 3;

/// The build tools, each a client of the test's jobserver.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Tool {
    /// Debian 12's GNU make 4.3: a pipe, passed to `+` rules only.
    Make43,
    /// Debian 13's GNU make 4.4: a FIFO.
    Make44,
    /// Ninja 1.13: a FIFO, run without `-j`.
    Ninja,
}

/// A project of CUDA files (`names`) for `tool` in a new sandbox; the command that builds it, and the sandbox.
fn project(root: &Path, tool: Tool, names: &[&str]) -> (RealSandbox, std::process::Command) {
    let sb = RealSandbox::new(root);
    for name in names {
        sb.write(&format!("{name}.cu"), KERNEL);
    }
    let config = sb.write("config.toml", CONFIG);
    let nvcc = sb.wrapper_bin.join("nvcc");
    let program = match tool {
        Tool::Make43 => PathBuf::from("make"),
        Tool::Make44 => cache_dir().join("nix/bin/make-4.4"),
        Tool::Ninja => cache_dir().join("tools/pypi/bin/ninja"),
    };
    let objects: Vec<String> = names.iter().map(|n| format!("{n}.o")).collect();
    if tool == Tool::Ninja {
        let mut text = "rule nvcc\n  command = NVCC -c $in -o $out\n".replace("NVCC", &nvcc.display().to_string());
        for name in names {
            text += &format!("build {name}.o: nvcc {name}.cu\n");
        }
        sb.write("build.ninja", &text);
    } else {
        sb.write("Makefile", &format!("all: {}\n%.o: %.cu\n\t+{} -c $< -o $@\n", objects.join(" "), nvcc.display()));
    }
    let mut cmd = std::process::Command::new(program);
    cmd.env("PATH", sb.path())
        .env("NVCC_WRAPPER_CONFIG", &config)
        .env("NVCC_WRAPPER_PROBE_CACHE_DIR", sb.file("probe-cache"))
        .env("NVCC_WRAPPER_LOG", "debug")
        .env_remove("NVCC_PREPEND_FLAGS")
        .env_remove("NVCC_APPEND_FLAGS")
        .current_dir(sb.dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    (sb, cmd)
}

/// How a build is stopped halfway: once the wrapper has taken every slot, and `at` later.
#[derive(Debug, Clone, Copy)]
enum Stop {
    /// A signal to the build tool.
    Tool(libc::c_int),
    /// SIGKILL to every wrapper the build tool runs: the build sees its compiles fail.
    Wrappers,
}

/// The children of `pid`, with their command names.
fn children_of(pid: u32) -> Vec<(i32, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<i32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        let Some(close) = stat.rfind(')') else { continue };
        let name = stat[stat.find('(').map_or(0, |i| i + 1)..close].to_string();
        if stat[close + 1..].split_whitespace().nth(1).and_then(|p| p.parse::<u32>().ok()) == Some(pid) {
            found.push((child, name));
        }
    }
    found
}

/// Whether a call's debug log says it followed the build (the default) and took a free slot for nvcc's work.
fn took_a_slot(log: &str) -> bool {
    log.contains("threads follow the build: nvcc runs with --threads 4")
        && log.contains("a job slot freed while nvcc runs")
}

/// Run `tool`'s build of `names` as a client of a jobserver of `TOKENS` free slots, stopped as `stop` says after
/// `at`. The tokens in the jobserver afterwards, and what the build printed.
fn build(root: &Path, tool: Tool, names: &[&str], stop: Option<(Stop, Duration)>) -> (usize, usize, String) {
    let (sb, mut cmd) = project(root, tool, names);
    let mut held = Held::new(sb.dir.path(), tool != Tool::Make43, TOKENS);
    held.give(&mut cmd);
    let child = cmd.spawn().unwrap();
    // The tokens out of the jobserver when the build is stopped.
    let mut out_at_stop = 0;
    if stop.is_some() {
        let deadline = Instant::now() + Duration::from_secs(60);
        while held.peek() > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    match stop {
        None => {}
        Some((Stop::Tool(signal), at)) => {
            std::thread::sleep(at);
            out_at_stop = TOKENS - held.peek();
            // SAFETY: kill takes plain integers; the build tool is our child, not yet reaped.
            unsafe { libc::kill(child.id() as i32, signal) };
        }
        Some((Stop::Wrappers, at)) => {
            std::thread::sleep(at);
            out_at_stop = TOKENS - held.peek();
            let mut stack = vec![child.id()];
            while let Some(pid) = stack.pop() {
                for (grandchild, name) in children_of(pid) {
                    if name == "nvcc" {
                        // SAFETY: as above; a wrapper of this build's.
                        unsafe { libc::kill(grandchild, libc::SIGKILL) };
                    } else {
                        stack.push(grandchild as u32);
                    }
                }
            }
        }
    }
    let out = child.wait_with_output().unwrap();
    let log = stdout(&out) + &stderr(&out);
    if stop.is_none() {
        assert!(out.status.success(), "{tool:?}: {log}");
    }
    // Whatever of the build is left (a killed make leaves its compiles running) ends before the count.
    let deadline = Instant::now() + Duration::from_secs(120);
    while !running_in(sb.dir.path()).is_empty() {
        assert!(Instant::now() < deadline, "{tool:?}: still running: {:?}", running_in(sb.dir.path()));
        std::thread::sleep(Duration::from_millis(50));
    }
    (held.count(), out_at_stop, log)
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn make_4_3_make_4_4_and_ninja_1_13_lend_free_slots_and_get_them_all_back() {
    let Some(root) = real_toolkit("13.5") else { return };
    if real_program("make").is_none() || pypi_tool("ninja").is_none() {
        return;
    }
    let Some(_) = make44() else { return };
    for tool in [Tool::Make43, Tool::Make44, Tool::Ninja] {
        // Three files: the build tool's jobs and nvcc's threads share the slots.
        let (tokens, _, log) = build(&root, tool, &["a", "b", "c"], None);
        assert_eq!(tokens, TOKENS, "{tool:?}: the slots after the build:\n{log}");
        assert!(took_a_slot(&log), "{tool:?}: no call took a slot:\n{log}");
        assert!(!log.contains("INTERNAL: Exiting with"), "{tool:?}: make counts lost tokens:\n{log}");
        // One file: the build tool runs one job on its own slot and holds no token, so every token out is the
        // wrapper's, and must come back however the build is stopped (a build tool stopped while it holds tokens of
        // its own may lose those: GNU make 4.4 does on SIGINT, any tool on SIGKILL). Stopped as soon as every token
        // is out: a call that follows the build gives back a slot its work leaves unused for 40 ms (between steps,
        // and as nvcc ends), so a later moment may find none held.
        for stop in [Stop::Tool(libc::SIGINT), Stop::Tool(libc::SIGTERM), Stop::Tool(libc::SIGKILL), Stop::Wrappers] {
            let (tokens, out, log) = build(&root, tool, &["a"], Some((stop, Duration::ZERO)));
            assert_eq!(out, TOKENS, "{tool:?}, {stop:?}: the wrapper held {out} of the slots when stopped:\n{log}");
            assert_eq!(tokens, TOKENS, "{tool:?} stopped by {stop:?}: the slots afterwards:\n{log}");
        }
    }
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn ninja_under_the_wrappers_jobserver_shares_its_slots_with_nvcc() {
    let Some(root) = real_toolkit("13.5") else { return };
    let Some(ninja) = pypi_tool("ninja") else { return };
    let (sb, _) = project(&root, Tool::Ninja, &["a", "b", "c"]);
    let mut cmd = std::process::Command::new(WRAPPER);
    cmd.args(["jobserver", "-j", "4", "--"])
        .arg(&ninja)
        .env("PATH", sb.path())
        .env("NVCC_WRAPPER_CONFIG", sb.file("config.toml"))
        .env("NVCC_WRAPPER_PROBE_CACHE_DIR", sb.file("probe-cache"))
        .env("NVCC_WRAPPER_LOG", "debug")
        .env("TMPDIR", sb.dir.path())
        .env_remove("MAKEFLAGS")
        .current_dir(sb.dir.path());
    let out = cmd.output().unwrap();
    let log = stdout(&out) + &stderr(&out);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("jobserver: 4 slots in"), "{log}");
    assert!(took_a_slot(&log), "no call took a slot:\n{log}");
    assert!(!log.contains("tokens came back"), "slots were lost:\n{log}");
    for name in ["a.o", "b.o", "c.o"] {
        assert!(sb.file(name).is_file(), "{name}");
    }
}

/// Issue 38: under `nvcc-wrapper jobserver`, GNU make 4.3 (Debian 12's) stopped at once, "invalid --jobserver-auth
/// string 'fifo:...'", as the command and as a step of a Ninja build; `-j4` (as `explain` suggests) was taken for the
/// command. make 4.3, make 4.4 and Ninja 1.13 each run a build of `+` rules through the wrapper in front of real
/// nvcc 13.5 under `nvcc-wrapper jobserver -j4`, Ninja with one step that is a make: every one builds, nvcc's calls
/// take slots as threads, and every slot comes back.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn the_jobserver_subcommand_serves_make_4_3_make_4_4_and_ninja_with_a_sub_make() {
    let Some(root) = real_toolkit("13.5") else { return };
    let (Some(make), Some(ninja)) = (real_program("make"), pypi_tool("ninja")) else { return };
    let Some(make44) = make44() else { return };
    for tool in [&make, &make44, &ninja] {
        let (sb, _) = project(&root, Tool::Make43, &["a", "b"]);
        let nvcc = sb.wrapper_bin.join("nvcc");
        sb.write("sub/c.cu", KERNEL);
        sb.write("sub/Makefile", &format!("all: c.o\n%.o: %.cu\n\t+{} -c $< -o $@\n", nvcc.display()));
        sb.write(
            "build.ninja",
            &format!(
                "rule nvcc\n  command = {} -c $in -o $out\nrule make\n  command = {} -C sub\nbuild a.o: nvcc a.cu\nbuild b.o: nvcc b.cu\nbuild sub: make\n",
                nvcc.display(),
                make.display()
            ),
        );
        let mut cmd = std::process::Command::new(WRAPPER);
        // `-j4` joined, as `explain` writes it.
        cmd.args(["jobserver", "-j4", "--"]).arg(tool);
        cmd.env("PATH", sb.path())
            .env("NVCC_WRAPPER_CONFIG", sb.file("config.toml"))
            .env("NVCC_WRAPPER_PROBE_CACHE_DIR", sb.file("probe-cache"))
            .env("NVCC_WRAPPER_LOG", "debug")
            .env("TMPDIR", sb.dir.path())
            .env_remove("MAKEFLAGS")
            .env_remove("NVCC_PREPEND_FLAGS")
            .env_remove("NVCC_APPEND_FLAGS")
            .current_dir(sb.dir.path());
        let out = cmd.output().unwrap();
        let log = stdout(&out) + &stderr(&out);
        let name = tool.file_name().unwrap().to_string_lossy();
        assert!(out.status.success(), "{name}: {log}");
        assert!(log.contains("jobserver: 4 slots in"), "{name}: {log}");
        for bad in ["invalid --jobserver-auth", "INTERNAL", "tokens came back", "jobserver unavailable"] {
            assert!(!log.contains(bad), "{name}: {bad}:\n{log}");
        }
        assert!(took_a_slot(&log), "{name}: no call took a slot:\n{log}");
        let objects: &[&str] = if tool == &ninja { &["a.o", "b.o", "sub/c.o"] } else { &["a.o", "b.o"] };
        for object in objects {
            assert!(sb.file(object).is_file(), "{name}: {object} is missing:\n{log}");
        }
    }
}

/// Issue 39, item 3: Debian 12's Ninja 1.11.1 ignores a jobserver and runs its own count of jobs, and any Ninja given
/// a `-j` of its own does too: `nvcc-wrapper jobserver` refuses both before anything runs, saying why (exit 2), and
/// runs PyPI's 1.13.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn the_jobserver_subcommand_refuses_a_ninja_that_would_ignore_it() {
    let (Some(debian), Some(pypi)) = (real_program("ninja"), pypi_tool("ninja")) else { return };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("build.ninja"), "rule touch\n  command = touch $out\nbuild ran: touch\n").unwrap();
    let serve = |ninja: &Path, args: &[&str]| {
        let mut cmd = std::process::Command::new(WRAPPER);
        cmd.args(["jobserver", "-j", "4", "--"]).arg(ninja).args(args).current_dir(dir.path());
        cmd.env("TMPDIR", dir.path()).env_remove("MAKEFLAGS").output().unwrap()
    };
    let out = serve(&debian, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(said.contains("is Ninja 1.11, which ignores a jobserver"), "{said}");
    assert!(said.contains("help: put Ninja 1.13 or later first on PATH"), "{said}");
    assert!(!dir.path().join("ran").exists(), "Ninja 1.11 ran");
    let out = serve(&pypi, &["-j8"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("is given `-j8`, and Ninja with a `-j` of its own ignores the jobserver"));
    let out = serve(&pypi, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(dir.path().join("ran").exists(), "Ninja 1.13 did not run");
}

/// Threads change how nvcc runs a call's targets, not what it writes: an object built with the slots of a jobserver
/// (`--threads 4`) is the same bytes as one built with none, for nvcc 11.8, 12.4 and 13.5; so is one built with
/// threads that follow the build (issue 41) under a jobserver of one free slot, where nvcc's work waits, stopped,
/// and is continued.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn threads_give_the_same_bytes_as_one() {
    for (release, compiler) in [("11.8", "/usr/bin/g++-11"), ("12.4", "/usr/bin/g++-12"), ("13.5", "/usr/bin/g++-12")] {
        let Some(root) = real_toolkit(release) else { return };
        let sb = RealSandbox::new(&root);
        sb.write("k.cu", KERNEL);
        let config = sb.write("config.toml", &CONFIG.replace("/usr/bin/g++-12", compiler));
        // With `jobs` slots in all (none: no jobserver), following the build or not.
        let build = |jobs: Option<&str>, follow: bool| {
            let mut cmd = if let Some(jobs) = jobs {
                let mut cmd = std::process::Command::new(WRAPPER);
                cmd.args(["jobserver", "-j", jobs, "--"]).arg(sb.wrapper_bin.join("nvcc"));
                cmd
            } else {
                std::process::Command::new(sb.wrapper_bin.join("nvcc"))
            };
            cmd.args(["-c", "k.cu", "-o", "k.o"])
                .env("PATH", sb.path())
                .env("NVCC_WRAPPER_CONFIG", &config)
                .env("NVCC_WRAPPER_PROBE_CACHE_DIR", sb.file("probe-cache"))
                .env("NVCC_WRAPPER_LOG", "debug")
                .env("TMPDIR", sb.dir.path())
                .env_remove("MAKEFLAGS")
                .current_dir(sb.dir.path());
            // Following is the default: only the other way is asked for.
            match follow {
                true => cmd.env_remove("NVCC_WRAPPER_THREADS_FOLLOW"),
                false => cmd.env("NVCC_WRAPPER_THREADS_FOLLOW", "0"),
            };
            let out = cmd.output().unwrap();
            assert!(out.status.success(), "{release}: {}", stderr(&out));
            (std::fs::read(sb.file("k.o")).unwrap(), stderr(&out))
        };
        let (one, _) = build(None, false);
        let (four, log) = build(Some("4"), false);
        assert!(log.contains("nvcc runs with --threads 4"), "{release}: {log}");
        assert!(one == four, "{release}: the object built with --threads 4 differs from the one built with one thread");
        let (followed, log) = build(Some("2"), true);
        assert!(log.contains("threads follow the build: nvcc runs with --threads 4"), "{release}: {log}");
        assert!(log.contains("job slots held waits: process"), "{release}: no work of nvcc's waited:\n{log}");
        assert!(one == followed, "{release}: the object built following the build differs from the one built alone");
    }
}

/// Issue 31: under a memory cgroup of 1.5 GiB (a Nix builder's or a CI container's limit), nvcc 13.5 with
/// `--threads 4` on a heavy source for two targets runs out of memory (two cicc of 885 MiB), while the wrapper, with
/// three free job slots, reads the cgroup's limit, takes no thread (1.5 GiB less 512 MiB kept holds one at 890 MiB)
/// and builds; so does a call whose threads follow the build (issue 41; the default). Needs real NVCC 13.5 and root (a cgroup of
/// its own).
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn under_a_memory_limit_the_wrapper_takes_no_threads_and_builds_what_t4_cannot() {
    let Some(root) = real_toolkit("13.5") else { return };
    let limit = (1536u64 << 20).to_string();
    let Some(cgroup) = Cgroup::new("memory", &[("memory.limit_in_bytes", limit.clone())], &[("memory.max", limit)])
    else {
        return;
    };
    let sb = RealSandbox::new(&root);
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/thrust-heavy.cu"), sb.file("heavy.cu")).unwrap();
    let config = sb.write(
        "config.toml",
        "[host-compiler]\nstdenv = \"/usr/bin/g++-12\"\n[gpu]\ncapabilities = [\"8.0\", \"9.0\"]\n",
    );
    let prepare = |cmd: &mut std::process::Command| {
        cmd.env("PATH", sb.path())
            .env("NVCC_WRAPPER_CONFIG", &config)
            .env("NVCC_WRAPPER_PROBE_CACHE_DIR", sb.file("probe-cache"))
            .env("NVCC_WRAPPER_LOG", "debug")
            .env("TMPDIR", sb.dir.path())
            .env_remove("MAKEFLAGS")
            .current_dir(sb.dir.path());
    };
    // nvcc alone with four threads, in the cgroup.
    let nvcc = root.join("bin/nvcc");
    let args = ["-ccbin=/usr/bin/g++-12", "-gencode=arch=compute_80,code=sm_80", "-gencode=arch=compute_90,code=sm_90"];
    let mut alone = cgroup.wrap(&nvcc, &[&args[..], &["-t", "4", "-c", "heavy.cu", "-o", "alone.o"]].concat());
    prepare(&mut alone);
    let out = alone.output().unwrap();
    assert!(!out.status.success(), "nvcc -t 4 fit in 1.5 GiB: the test no longer shows a shortage");
    // The wrapper taking its threads when nvcc starts, with three free slots, in the same cgroup.
    let mut wrapped =
        cgroup.wrap(Path::new(WRAPPER), &["jobserver", "-j", "4", "--", "nvcc", "-c", "heavy.cu", "-o", "wrapped.o"]);
    prepare(&mut wrapped);
    let out = wrapped.env("NVCC_WRAPPER_THREADS_FOLLOW", "0").output().unwrap();
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert!(sb.file("wrapped.o").is_file());
    assert!(
        log.contains("holds no second thread at 890 MiB a thread") && log.contains("the memory cgroup's limit"),
        "{log}"
    );
    assert!(!log.contains("nvcc runs with --threads"), "{log}");
    // Threads that follow the build (issue 41, the default): nvcc gets its two threads, and the second target's work waits, as
    // the memory free never holds it beside the first.
    let mut followed =
        cgroup.wrap(Path::new(WRAPPER), &["jobserver", "-j", "4", "--", "nvcc", "-c", "heavy.cu", "-o", "followed.o"]);
    prepare(&mut followed);
    let out = followed.output().unwrap();
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("threads follow the build: nvcc runs with --threads 2"), "{log}");
    assert!(log.contains("job slots held waits") && log.contains("holds no second thread at 890 MiB"), "{log}");
    assert!(!log.contains("a job slot freed while nvcc runs"), "{log}");
}
