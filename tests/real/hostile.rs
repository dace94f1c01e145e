//! Hostile or careless input against real NVCC releases: what the fake nvcc's tests in tests/wrapper/hostile.rs
//! show, checked where only the real nvcc can tell (issue 26). Needs real NVCC 12.4 and 13.5, and bash.

use std::path::Path;

use crate::cgroup::Cgroup;
use crate::support::*;

/// Item 8 with the real nvcc 12.4, which ignores `NVCC_CCBIN`: nvcc alone builds with `NVCC_CCBIN=/nonexistent/g++`,
/// and so does the wrapper now ("Failed to preprocess host compiler properties" before).
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn nvcc_12_4_builds_with_an_nvcc_ccbin_naming_no_program() {
    let Some(root) = real_toolkit("12.4") else { return };
    let sb = RealSandbox::new(&root);
    sb.write("k.cu", "__global__ void k() {}\n");
    for (how, mut nvcc) in [("nvcc alone", sb.real_nvcc()), ("the wrapper", sb.nvcc())] {
        let out = nvcc.env("NVCC_CCBIN", "/nonexistent/g++").args(["-c", "k.cu", "-o", "k.o"]).output().unwrap();
        assert!(out.status.success(), "{how}: {}", stderr(&out));
        assert!(sb.file("k.o").is_file(), "{how}");
        std::fs::remove_file(sb.file("k.o")).unwrap();
    }
}

/// Item 1 with the real nvcc 13.5: under `replace`, a pipe options file builds what nvcc alone builds (the wrapper
/// cannot read it without taking it from nvcc), and the wrapper says so.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn nvcc_13_5_a_pipe_options_file_under_replace_is_said() {
    let Some(root) = real_toolkit("13.5") else { return };
    let sb = RealSandbox::new(&root);
    sb.write("k.cu", "__global__ void k() {}\n");
    let config = sb.write("r.toml", "[gpu]\ncapabilities = [\"8.6\"]\narch-flags = \"replace\"\n");
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg("nvcc -optf <(printf -- '-arch=sm_80 -c k.cu -o k.o')")
        .env("PATH", sb.path())
        .env("NVCC_WRAPPER_CONFIG", &config)
        .env("NVCC_WRAPPER_PROBE_CACHE_DIR", sb.file("probe-cache"))
        .env_remove("NVCC_PREPEND_FLAGS")
        .env_remove("NVCC_APPEND_FLAGS")
        .current_dir(sb.dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(sb.file("k.o").is_file());
    let said = warnings(&out);
    assert!(said.len() == 1 && said[0].contains("is not a regular file"), "{}", stderr(&out));
}

/// The largest `n` in `lo..hi` for which `builds(n)`, by bisection, where `builds(lo)` holds and `builds(hi)` does not.
fn largest_that_builds(mut lo: usize, mut hi: usize, builds: impl Fn(usize) -> bool) -> usize {
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if builds(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Issue 30, item 9, with real nvcc 12.4 and 13.5: at the argument-length edge, what nvcc alone builds the wrapper
/// builds. nvcc hands all of a call's options to its children in one string (its `sh -c` lines, gcc's
/// `COLLECT_GCC_OPTIONS`), which the kernel limits to 128 KiB; `-objtemp` names the output in each temporary file's
/// name there, so with a 200-byte output the wrapper's reproducible-builds flags pushed a call nvcc alone just
/// builds past the limit (`cannot execute 'cc1plus': execv: Argument list too long`). Here the largest number of
/// 100-byte `-D` flags that nvcc alone builds with is found by bisection, and the wrapper must build with as many;
/// then, to the byte, with the longest last flag nvcc alone builds with (issue 38).
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn at_the_argument_length_edge_what_nvcc_alone_builds_the_wrapper_builds() {
    for release in ["12.4", "13.5"] {
        let Some(root) = real_toolkit(release) else { return };
        let sb = RealSandbox::new(&root);
        sb.write("k.cu", "__global__ void k(int *p) { p[0] = 1; }\n");
        std::fs::create_dir_all(sb.file("o")).unwrap();
        let output = format!("o/{}.o", "a".repeat(198));
        let config = sb.write("config.toml", "[host-compiler]\nstdenv = \"/usr/bin/g++\"\n");
        let defines = |n: usize| -> Vec<String> { (0..n).map(|i| format!("-DX{i:05}={}", "v".repeat(92))).collect() };
        let builds = |mut nvcc: assert_cmd::Command, n: usize| {
            let _ = std::fs::remove_file(sb.file(&output));
            let out = nvcc.args(["-c", "k.cu", "-o", &output]).args(defines(n)).output().unwrap();
            out.status.success() && sb.file(&output).is_file()
        };
        // nvcc alone as it runs without the wrapper: with its own `gcc` and `g++`, the compiler the config names
        // (issue 57: the wrapper then adds no `-ccbin`).
        let alone = |n| builds(sb.real_nvcc(), n);
        let (lo, hi) = (1000, 1400);
        assert!(alone(lo) && !alone(hi), "{release}: the edge is not between {lo} and {hi} flags");
        let lo = largest_that_builds(lo, hi, alone);
        let mut nvcc = sb.nvcc();
        nvcc.env("NVCC_WRAPPER_CONFIG", &config);
        assert!(builds(nvcc, lo), "{release}: nvcc alone builds with {lo} flags of 100 bytes, the wrapper does not");
        // Issue 38: to the byte. One more flag of 1 to 100 bytes: the longest nvcc alone builds with, found by
        // bisection, the wrapper must build with too (it added its fatbin flags at any distance from the edge).
        let with_tail = |mut nvcc: assert_cmd::Command, tail: usize| {
            nvcc.arg(format!("-DY={}", "t".repeat(tail)));
            builds(nvcc, lo)
        };
        let alone_tail = |tail| with_tail(sb.real_nvcc(), tail);
        let (short, long) = (0, 101);
        assert!(alone_tail(short), "{release}: nvcc alone does not build with {lo} flags and a short one");
        let short = largest_that_builds(short, long, alone_tail);
        let mut nvcc = sb.nvcc();
        nvcc.env("NVCC_WRAPPER_CONFIG", &config);
        assert!(
            with_tail(nvcc, short),
            "{release}: nvcc alone builds with {lo} flags of 100 bytes and one of {} bytes, the wrapper does not",
            short + 4
        );
        eprintln!("{release}: nvcc alone and the wrapper build with {lo} flags of 100 bytes and one of {short} + 4");
    }
}

/// A shape of flags for the edge test below: its name, the flag, and the range of counts the edge lies in.
type Shape<'a> = (&'a str, fn(usize) -> String, (usize, usize));

/// One case of the edge test below: its name, the flags' shape, the output, PATH, the wrapper's config, and the
/// `-ccbin` nvcc alone gets (none where the compiler is its own).
struct EdgeCase<'a> {
    case: &'a str,
    shape: Shape<'a>,
    output: &'a str,
    path: std::ffi::OsString,
    config: Option<&'a Path>,
    ccbin: Option<String>,
}

/// Issue 48, item 4, and issue 57, item 3, with real nvcc 12.4 and 13.5: the edge moves with the flags' shape, the
/// output's name and the host compiler's spelling, and the wrapper builds what nvcc alone builds at each. gcc's
/// `COLLECT_GCC_OPTIONS`, the one string that meets the kernel's 128 KiB first, holds each option quoted and a joined
/// value apart (`-DX1=1` as `'-D' 'X1=1' `, twice its length for short flags); `-objtemp` and the seeds repeat the
/// output's name; the `g++` driver adds an option of its own there that nvcc alone's `gcc` does not (so
/// `-ccbin=/usr/bin/g++` failed at 8,765 short flags and a 202-byte output where nvcc alone built, on 2133ec2); and
/// the compiler's path is in every `sh -c` line nvcc writes for it. For each case the largest number of flags nvcc
/// alone builds with is found by bisection, nvcc alone run as it is run without the wrapper: with no `-ccbin` where
/// the compiler is the one it runs by itself, with the same `-ccbin` where the wrapper names another. The cases: the
/// compiler nvcc runs by itself (`/usr/bin`), for each shape (many short `-DXi=1`; 100-byte `-D` flags) and output
/// (`k.o`; a 202-byte name); the same compiler first on PATH from a 200-byte directory; and a configured `g++` at a
/// 200-byte path, which nvcc alone is given too.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn the_argument_length_edge_follows_the_flags_shape_the_outputs_name_and_the_compilers_path() {
    let short: Shape = ("-DXi=1", |i| format!("-DX{i}=1"), (7000, 9800));
    let long_flags: Shape = ("100-byte -D", |i| format!("-DX{i:05}={}", "v".repeat(92)), (1000, 1400));
    let long = format!("o/{}.o", "a".repeat(198));
    for release in ["12.4", "13.5"] {
        let Some(root) = real_toolkit(release) else { return };
        let sb = RealSandbox::new(&root);
        sb.write("k.cu", "__global__ void k(int *p) { p[0] = 1; }\n");
        std::fs::create_dir_all(sb.file("o")).unwrap();
        // GCC 12 (every release here takes it) by a 200-byte directory: as nvcc's own first on PATH, or configured.
        let far = sb.file(&format!("{}/bin", "c".repeat(196)));
        std::fs::create_dir_all(&far).unwrap();
        for (name, real) in [("gcc", "/usr/bin/gcc-12"), ("g++", "/usr/bin/g++-12")] {
            std::os::unix::fs::symlink(real, far.join(name)).unwrap();
        }
        let far_first =
            std::env::join_paths(std::iter::once(far.clone()).chain(std::env::split_paths(&sb.path()))).unwrap();
        let configured =
            sb.write("far.toml", &format!("[host-compiler]\nstdenv = \"{}\"\n", far.join("g++").display()));
        let mut cases = Vec::new();
        for shape in [short, long_flags] {
            for output in ["o/k.o", long.as_str()] {
                cases.push(EdgeCase {
                    case: "nvcc's own g++",
                    shape,
                    output,
                    path: sb.path(),
                    config: None,
                    ccbin: None,
                });
            }
        }
        let case = "nvcc's own g++ by a 200-byte directory";
        cases.push(EdgeCase { case, shape: short, output: &long, path: far_first, config: None, ccbin: None });
        let ccbin = Some(format!("-ccbin={}", far.join("g++").display()));
        let case = "a configured g++ at a 200-byte path";
        cases.push(EdgeCase { case, shape: short, output: &long, path: sb.path(), config: Some(&configured), ccbin });
        for EdgeCase { case, shape: (shape, flag, (low, high)), output, path, config, ccbin } in cases {
            let builds = |mut nvcc: assert_cmd::Command, n: usize| {
                let _ = std::fs::remove_file(sb.file(output));
                nvcc.env("PATH", &path);
                let out = nvcc.args(["-c", "k.cu", "-o", output]).args((0..n).map(flag)).output().unwrap();
                out.status.success() && sb.file(output).is_file()
            };
            let alone = |n| {
                let mut nvcc = sb.real_nvcc();
                nvcc.args(&ccbin);
                builds(nvcc, n)
            };
            let (lo, hi) = (low, high);
            let what = format!("{release}, {case}, {shape}, an output of {} bytes", output.len());
            assert!(alone(lo) && !alone(hi), "{what}: the edge is not within {lo}..{hi}");
            let lo = largest_that_builds(lo, hi, alone);
            let mut nvcc = sb.nvcc();
            if let Some(config) = config {
                nvcc.env("NVCC_WRAPPER_CONFIG", config);
            }
            assert!(builds(nvcc, lo), "{what}: nvcc alone builds with {lo} flags, the wrapper does not");
            eprintln!("{what}: nvcc alone and the wrapper build with {lo} flags");
        }
    }
}

/// A host compiler slowed down by a slow disk is waited for, not left out. Under a build's load the first start of
/// `clang++` took more than the probes' 10 s, and a probe stopped then made the wrapper pick another compiler (and
/// remember that for 5 minutes). Here the stdenv compiler is a script, as Nix's cc-wrapper is, that first reads a
/// file through a throttled disk (a blkio cgroup; the file dropped from the page cache) for about 16 s, then runs the
/// real clang++-19: the probe takes over 10 s, and the wrapper keeps the compiler and says nothing. Needs real NVCC
/// 13.5, clang++-19 and root (a cgroup of its own, on the disk that holds the build's target directory).
///
/// The throttle follows the disk's readahead window: the kernel reads a file in windows of up to `read_ahead_kb`, and
/// `cat` waits, doing nothing, while the next one or two come through the throttle. On this project's machine the
/// window is 8 MiB: at 1 MiB/s `cat` sat still 8 s at a time, and under the suite's load once past the probes' 10 s
/// (stop 55's CI). A disk that slow looks hung to the probes by design (`probe::watch`); the test's disk is slow
/// in total, not in one read: two windows take at most 4 s.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn a_compiler_slowed_by_a_slow_disk_is_waited_for_and_kept() {
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::io::AsRawFd;
    let Some(root) = real_toolkit("13.5") else { return };
    let Some(clang) = real_program("clang++-19") else { return };
    // The file lives on a real disk (the target directory's), not in a tmpfs that no throttle reaches.
    let disk = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let Some(device) = whole_disk(disk.path().metadata().unwrap().dev()) else { return };
    let rate = read_rate(&device);
    let big = disk.path().join("big");
    let mut file = std::fs::File::create(&big).unwrap();
    std::io::Write::write_all(&mut file, &vec![b'x'; 16 * rate as usize]).unwrap();
    file.sync_all().unwrap();
    let Some(cgroup) = Cgroup::new(
        "blkio",
        &[("blkio.throttle.read_bps_device", format!("{device} {rate}"))],
        &[("io.max", format!("{device} rbps={rate}"))],
    ) else {
        return;
    };
    let sb = RealSandbox::new(&root);
    sb.write("k.cu", "__global__ void k(int *p) { p[0] = 1; }\n");
    let cc = sb.write(
        "slow/clang++",
        &format!("#!/bin/sh\ncat '{}' > /dev/null\nexec '{}' \"$@\"\n", big.display(), clang.display()),
    );
    std::fs::set_permissions(&cc, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let config = sb.write("slow.toml", &format!("[host-compiler]\nstdenv = \"{}\"\n", cc.display()));
    let prepare = |cmd: &mut std::process::Command| {
        cmd.env("PATH", sb.path())
            .env("NVCC_WRAPPER_CONFIG", &config)
            .env("NVCC_WRAPPER_PROBE_CACHE_DIR", sb.file("probe-cache"))
            .current_dir(sb.dir.path());
    };
    // Everything but the file in the page cache first (clang, nvcc and its tools, the wrapper), so that only the
    // file is read through the throttle: a cold clang++-19 alone reads over 100 MiB.
    let warm = sb.write("warm.toml", &format!("[host-compiler]\nstdenv = \"{}\"\n", clang.display()));
    let mut warm_up = sb.nvcc();
    warm_up.env("NVCC_WRAPPER_CONFIG", &warm).args(["-c", "k.cu", "-o", "warm.o"]).assert().success();
    // SAFETY: posix_fadvise only reads the open descriptor's number.
    let dropped = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    assert_eq!(dropped, 0, "the file could not be dropped from the page cache");
    let mut build = cgroup.wrap(Path::new("nvcc"), &["-c", "k.cu", "-o", "k.o"]);
    prepare(&mut build);
    let started = std::time::Instant::now();
    let out = build.output().unwrap();
    let took = started.elapsed();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(sb.file("k.o").is_file());
    assert!(
        took > std::time::Duration::from_secs(10),
        "the build took {took:?}: the throttled disk did not make the compiler slower than the probes' 10 s, so this \
         test shows nothing"
    );
    assert!(warnings(&out).is_empty(), "{}", stderr(&out));
    // What the call decided, from the answers it kept: the slow compiler, not another one.
    let mut explain = std::process::Command::new(WRAPPER);
    prepare(&mut explain);
    let out = explain.args(["explain", "--", "-c", "k.cu"]).output().unwrap();
    assert!(stdout(&out).contains(&format!("-ccbin={} ", cc.display())), "{}{}", stdout(&out), stderr(&out));
}

/// The `MAJOR:MINOR` of the whole disk that holds device `dev`, as cgroups name it; `None` (after a note) when `dev`
/// is no block device (a tmpfs, an overlay), which fails the test (`cannot_run`).
fn whole_disk(dev: u64) -> Option<String> {
    let sys = Path::new("/sys/dev/block").join(format!("{}:{}", libc::major(dev), libc::minor(dev)));
    let sys = if sys.join("partition").exists() { sys.join("..") } else { sys };
    match std::fs::read_to_string(sys.join("dev")) {
        Ok(found) => Some(found.trim().to_string()),
        Err(e) => {
            let what =
                format!("{} is not a block device's ({e}), so no disk can be throttled", env!("CARGO_TARGET_TMPDIR"));
            cannot_run(&what);
            None
        }
    }
}

/// The bytes a second the throttled disk of `a_compiler_slowed_by_a_slow_disk_is_waited_for_and_kept` gives: 1 MiB, or
/// half the disk's readahead window (`device` as `MAJOR:MINOR`) where that is more, so that a reader never waits more
/// than 4 s for one.
fn read_rate(device: &str) -> u64 {
    let window = Path::new("/sys/dev/block").join(device).join("queue/read_ahead_kb");
    let window = std::fs::read_to_string(&window)
        .unwrap_or_else(|e| panic!("{}: {e}", window.display()))
        .trim()
        .parse::<u64>()
        .unwrap_or_else(|e| panic!("{}: {e}", window.display()));
    (1u64 << 20).max(window * 1024 / 2)
}

/// Issue 38, item 7, with real nvcc 13.5: a stdenv compiler whose `--version` leaves a child in the background holding
/// its output was taken for hung, stopped after 10 s, and another compiler was chosen without a word. The probe ends
/// when the compiler does: the call builds at once, with that compiler.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn a_compiler_that_leaves_a_child_holding_its_output_is_kept_and_not_waited_for() {
    let Some(root) = real_toolkit("13.5") else { return };
    let sb = RealSandbox::new(&root);
    sb.write("k.cu", "__global__ void k() {}\n");
    let cc = sb.write("cc/g++", "#!/bin/sh\n/usr/bin/g++-12 \"$@\"\nstatus=$?\nsleep 30 &\nexit $status\n");
    std::fs::set_permissions(&cc, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let config = sb.write("c.toml", &format!("[host-compiler]\nstdenv = \"{}\"\n", cc.display()));
    let started = std::time::Instant::now();
    // Output to files: the compiler's background child holds whatever it was given, nvcc alone's too.
    let log = std::fs::File::create(sb.file("log")).unwrap();
    let status = std::process::Command::new(sb.wrapper_bin.join("nvcc"))
        .args(["-c", "k.cu", "-o", "k.o"])
        .env("PATH", sb.path())
        .env("NVCC_WRAPPER_CONFIG", &config)
        .env("NVCC_WRAPPER_PROBE_CACHE_DIR", sb.file("probe-cache"))
        .env("NVCC_WRAPPER_LOG", "debug")
        .env_remove("NVCC_PREPEND_FLAGS")
        .env_remove("NVCC_APPEND_FLAGS")
        .current_dir(sb.dir.path())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .status()
        .unwrap();
    let log = std::fs::read_to_string(sb.file("log")).unwrap();
    assert!(status.success(), "{log}");
    assert!(started.elapsed() < std::time::Duration::from_secs(8), "{:?}: {log}", started.elapsed());
    assert!(log.contains(&format!("+ -ccbin={} ", cc.display())), "another compiler was chosen:\n{log}");
    assert!(!log.contains("was stopped"), "{log}");
    assert!(sb.file("k.o").is_file());
}

/// Issue 38, item 7, with real nvcc 13.5 and `/proc` hidden (an empty tmpfs over it, in a mount namespace of the
/// test's): a stdenv compiler busy for 12 s before it answers was stopped as hung at 10 s, since its work could not be
/// read. Its own CPU time tells it is working: it is waited for, and kept. Needs root and `unshare`.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn without_proc_a_compiler_busy_for_12_s_is_waited_for() {
    let Some(root) = real_toolkit("13.5") else { return };
    if real_program("unshare").is_none() {
        return;
    }
    if !as_root("hiding /proc") {
        return;
    }
    let sb = RealSandbox::new(&root);
    sb.write("k.cu", "__global__ void k() {}\n");
    let busy = "end=$(($(date +%s) + 12)); while [ $(date +%s) -lt $end ]; do :; done";
    let cc = sb.write(
        "cc/g++",
        &format!("#!/bin/sh\nif [ \"$1\" = --version ]; then {busy}; fi\nexec /usr/bin/g++-12 \"$@\"\n"),
    );
    std::fs::set_permissions(&cc, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let config = sb.write("c.toml", &format!("[host-compiler]\nstdenv = \"{}\"\n", cc.display()));
    let out = std::process::Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c", "mount -t tmpfs none /proc && exec \"$@\"", "sh"])
        .arg("nvcc")
        .args(["-c", "k.cu", "-o", "k.o"])
        .env("PATH", sb.path())
        .env("NVCC_WRAPPER_CONFIG", &config)
        .env("NVCC_WRAPPER_PROBE_CACHE", "0")
        .env("NVCC_WRAPPER_LOG", "debug")
        .env_remove("NVCC_PREPEND_FLAGS")
        .env_remove("NVCC_APPEND_FLAGS")
        .current_dir(sb.dir.path())
        .output()
        .unwrap();
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert!(!log.contains("was stopped"), "{log}");
    assert!(log.contains(&format!("+ -ccbin={} ", cc.display())), "{log}");
    assert!(sb.file("k.o").is_file());
}

/// Issue 57, item 2: the wrapper, its keeper and the keeper's guard never die of their own writes. With the debug log
/// on, stderr a pipe whose reader has gone (EPIPE, and SIGPIPE by default), `/dev/full` (ENOSPC), or a file already
/// at the process's file size limit (`ulimit -f`: EFBIG, and SIGXFSZ by default), nvcc alone builds (it writes
/// nothing to stderr on success), and so must the wrapper, whether it execs nvcc or keeps it (threads that follow the
/// build, under `nvcc-wrapper jobserver -j 2`). On 2133ec2 the keeper died of SIGPIPE and the wrapper of SIGXFSZ.
/// nvcc itself still gets the caller's dispositions of both.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn the_wrappers_own_writes_end_nothing() {
    use std::os::unix::process::CommandExt;
    const LIMIT: u64 = 8 << 20;
    for (release, compiler) in [("11.8", "/usr/bin/g++-11"), ("13.5", "/usr/bin/g++-12")] {
        let Some(root) = real_toolkit(release) else { return };
        let sb = RealSandbox::new(&root);
        sb.write("k.cu", "__global__ void k(float *p) { p[threadIdx.x] *= 2.0f; }\n");
        let config = format!(
            "[host-compiler]\nstdenv = \"{compiler}\"\n[gpu]\ncapabilities = [\"7.5\", \"8.0\", \"8.6\", \"9.0\"]\n"
        );
        let config = sb.write("config.toml", &config);
        let targets = ["75", "80", "86", "90"].map(|a| format!("-gencode=arch=compute_{a},code=sm_{a}"));
        for stderr_is in ["a pipe whose reader left", "/dev/full", "a file at the size limit"] {
            for how in ["nvcc alone", "the wrapper, exec", "the wrapper, keeping nvcc"] {
                let case = format!("{release}, stderr {stderr_is}, {how}");
                let mut cmd = match how {
                    "nvcc alone" => {
                        let mut cmd = std::process::Command::new(root.join("bin/nvcc"));
                        cmd.arg(format!("-ccbin={compiler}")).args(&targets);
                        cmd
                    }
                    "the wrapper, exec" => std::process::Command::new(sb.wrapper_bin.join("nvcc")),
                    _ => {
                        let mut cmd = std::process::Command::new(WRAPPER);
                        cmd.args(["jobserver", "-j", "2", "--"]).arg(sb.wrapper_bin.join("nvcc"));
                        cmd
                    }
                };
                cmd.args(["-c", "k.cu", "-o", "k.o"])
                    .env("PATH", sb.path())
                    .env("NVCC_WRAPPER_PROBE_CACHE_DIR", sb.file("probe-cache"))
                    .env("NVCC_WRAPPER_CONFIG", &config)
                    .env("NVCC_WRAPPER_LOG", "debug")
                    .env_remove("MAKEFLAGS")
                    .env_remove("NVCC_WRAPPER_THREADS_FOLLOW")
                    .current_dir(sb.dir.path());
                let _ = std::fs::remove_file(sb.file("k.o"));
                let status = match stderr_is {
                    "a pipe whose reader left" => {
                        let mut child = cmd.stderr(std::process::Stdio::piped()).spawn().unwrap();
                        drop(child.stderr.take());
                        child.wait().unwrap()
                    }
                    "/dev/full" => {
                        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
                        cmd.stderr(full).status().unwrap()
                    }
                    _ => {
                        let log = sb.file("full.log");
                        std::fs::write(&log, vec![b'.'; LIMIT as usize]).unwrap();
                        let log = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
                        // SAFETY: setrlimit is async-signal-safe and reads a local struct.
                        unsafe {
                            cmd.pre_exec(|| {
                                let limit = libc::rlimit { rlim_cur: LIMIT, rlim_max: LIMIT };
                                libc::setrlimit(libc::RLIMIT_FSIZE, &limit);
                                Ok(())
                            });
                        }
                        cmd.stderr(log).status().unwrap()
                    }
                };
                assert!(status.success(), "{case}: {status}");
                assert!(sb.file("k.o").is_file(), "{case}: no object");
            }
        }
        eprintln!("{release}: nvcc alone and the wrapper build with stderr a pipe whose reader left, full, and at the size limit");
    }
}
