//! The surroundings a build gives a call, compared with nvcc alone (issue 38). nvcc alone never reads `MAKEFLAGS`,
//! never holds a job slot and never reads a config place; the wrapper does all three, so whatever it is handed there
//! must leave the call ending as nvcc alone's does. Each case runs the same compile twice, with the same
//! surroundings: once as real nvcc alone, once through the wrapper installed as `nvcc` first on PATH, with no
//! configuration but what a user gets by default (reproducible-builds flags, fatbin compression, dependency-file
//! inputs, threads from free job slots). The outcomes must match: the exit status (or the signal), the files left in
//! the call's directory, what a watched file holds and when it was written, stdout's bytes where the case reads them,
//! the tokens in a jobserver the test holds, and, for the wrapper, no more processes left running and no more
//! temporary files than nvcc alone leaves. Each case is a test of its own for each release it runs on, in a module
//! named after the case (`surroundings::sigint_to_its_group_mid_compile::nvcc_12_4`; `scripts/test.sh
//! surroundings::sigint_to_its_group` runs it on all three); `harness` runs both sides and compares them.
//!
//! The surroundings: `MAKEFLAGS` forms, valid (make's pipe, a FIFO) and bogus (a device, stdin's own pipe, a regular
//! file, a directory, closed or mismatched descriptors, a variable after `--`); standard streams closed, full, or a
//! pipe nobody reads; SIGTERM to the call and to its process group mid-compile; a `timeout -s KILL` in a rule of GNU
//! make 4.3, GNU make 4.4 and Ninja 1.13, each a client of the test's jobserver; odd files at the user's config
//! place; `/proc` hidden; a memory cgroup; and, on 13.5, threads that follow the build (`threads-follow`) under the
//! jobserver forms, a closed stderr, signals mid-compile, `/proc` hidden and a memory cgroup. On nvcc 11.8, 12.4 and 13.5 (on 13.5 only: the build-tool cases, and the
//! bogus claims and config places, in which the release plays no part).
//!
//! Needs real NVCC 11.8, 12.4 and 13.5, g++-11 and g++-12, make, scripts/install-nix.sh's make-4.4,
//! scripts/install-tools.sh's ninja, and root for the cases that hide `/proc` (a mount namespace) or make a cgroup.

mod harness;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::*;
use harness::*;
use libc::{SIGINT, SIGKILL, SIGTERM};

/// `surrounding!(case, [nvcc_13_5, ...], Case)`: a `#[test]` for each release (`per_release!`), both sides run by
/// `harness::same_as_alone`.
macro_rules! surrounding {
    ($name:ident, [$($release:ident),+], $case:expr) => {
        crate::per_release!($name, [$($release),+], same_as_alone, $case);
    };
}

// The jobserver's forms, valid and bogus. The bogus claims are read by the wrapper alone, so on the newest release.
surrounding!(no_makeflags, [nvcc_11_8, nvcc_12_4, nvcc_13_5], compile("no MAKEFLAGS"));
surrounding!(makes_pipe, [nvcc_11_8, nvcc_12_4, nvcc_13_5], compile("make's pipe, 3 slots free").held(false));
surrounding!(make_4_4s_fifo, [nvcc_11_8, nvcc_12_4, nvcc_13_5], compile("make 4.4's FIFO, 3 slots free").held(true));
surrounding!(
    a_fifo_nobody_serves,
    [nvcc_11_8, nvcc_12_4, nvcc_13_5],
    compile("a FIFO nobody serves").claim("-j4 --jobserver-auth=fifo:{dir}/empty-fifo", Fds::Closed)
);
surrounding!(
    fifo_dev_zero_and_all_major,
    [nvcc_11_8, nvcc_12_4, nvcc_13_5],
    case("fifo:/dev/zero, -arch=all-major", &["-arch=all-major", "-c", "k.cu", "-o", "o/k.o"])
        .claim("-j16 --jobserver-auth=fifo:/dev/zero", Fds::Closed)
);
surrounding!(
    the_standard_streams_as_slots_and_the_source_on_stdin,
    [nvcc_11_8, nvcc_12_4, nvcc_13_5],
    Case {
        stdin: Stream::SourcePipe,
        read_stdout: true,
        ..case(
            "--jobserver-auth=0,1, the source on stdin's pipe, stdout a pipe",
            &[TARGETS[0], TARGETS[1], "-x", "cu", "-c", "-", "-o", "o/s.o"]
        )
        .claim("-j4 --jobserver-auth=0,1", Fds::Closed)
    }
);
surrounding!(
    fifo_names_a_regular_file,
    [nvcc_13_5],
    compile("fifo: names a regular file").claim("-j4 --jobserver-auth=fifo:{dir}/file", Fds::Closed)
);
surrounding!(
    fifo_names_a_directory,
    [nvcc_13_5],
    compile("fifo: names a directory").claim("-j4 --jobserver-auth=fifo:{dir}/o", Fds::Closed)
);
surrounding!(
    fifo_names_nothing,
    [nvcc_13_5],
    compile("fifo: names nothing").claim("-j4 --jobserver-auth=fifo:{dir}/none", Fds::Closed)
);
surrounding!(
    a_malformed_claim,
    [nvcc_13_5],
    compile("a malformed claim").claim("-j4 --jobserver-auth=three", Fds::Closed)
);
surrounding!(
    make_turned_it_off,
    [nvcc_13_5],
    compile("make turned it off (-1,-1)").claim("-j4 --jobserver-auth=-1,-1", Fds::Closed)
);
surrounding!(
    descriptors_3_and_4_closed,
    [nvcc_13_5],
    compile("3,4 closed (a rule without +)").claim("-j4 --jobserver-auth=3,4", Fds::Closed)
);
surrounding!(
    descriptors_3_and_4_a_regular_file,
    [nvcc_13_5],
    compile("3,4 a regular file").claim("-j4 --jobserver-auth=3,4", Fds::File)
);
surrounding!(
    descriptors_3_and_4_the_ends_of_two_pipes,
    [nvcc_13_5],
    compile("3,4 the ends of two pipes").claim("-j4 --jobserver-auth=3,4", Fds::TwoPipes)
);
surrounding!(
    a_claim_after_two_dashes,
    [nvcc_13_5],
    compile("a claim after --, in a variable").claim("-j4 -- X=--jobserver-auth=0,1", Fds::Closed)
);

// The standard streams: closed, full, or a pipe nobody reads.
surrounding!(
    stderr_closed,
    [nvcc_11_8, nvcc_12_4, nvcc_13_5],
    Case { stderr: Stream::Closed, ..compile("make's pipe, stderr closed").held(false) }
);
// A warning before nvcc runs (`-ptx` with two configured targets builds nvcc's default), to a stderr nobody reads;
// and the debug log to it.
surrounding!(
    a_warning_to_a_stderr_nobody_reads,
    [nvcc_11_8, nvcc_12_4, nvcc_13_5],
    Case {
        stderr: Stream::NoReader,
        wrapper_env: vec![("NVCC_WRAPPER_CAPABILITIES", "8.0;9.0")],
        ..case("a warning to a stderr nobody reads", &["-ptx", "k.cu", "-o", "o/k.ptx"])
    }
);
surrounding!(
    the_debug_log_to_a_stderr_nobody_reads,
    [nvcc_11_8, nvcc_12_4, nvcc_13_5],
    Case {
        stderr: Stream::NoReader,
        wrapper_env: vec![("NVCC_WRAPPER_LOG", "debug"), ("NVCC_WRAPPER_THREADS_FOLLOW", "0")],
        ..compile("the debug log to a stderr nobody reads").held(false)
    }
);
surrounding!(
    preprocessing_to_a_full_stdout,
    [nvcc_11_8, nvcc_12_4, nvcc_13_5],
    Case { stdout: Stream::Full, ..case("-E to a full stdout", &["-E", "k.cu"]) }
);
surrounding!(
    preprocessing_to_a_stdout_nobody_reads,
    [nvcc_11_8, nvcc_12_4, nvcc_13_5],
    Case { stdout: Stream::NoReader, ..case("-E to a stdout nobody reads", &["-E", "k.cu"]) }
);

// Odd files at the user's config place, read by the wrapper alone: on the newest release.
surrounding!(
    a_dangling_symlink_at_the_config_place,
    [nvcc_13_5],
    Case { place: Place::DanglingLink, ..compile("a dangling symlink at the user's config place") }
);
surrounding!(
    a_symlink_loop_at_the_config_place,
    [nvcc_13_5],
    Case { place: Place::LinkLoop, ..compile("a symlink loop at the user's config place") }
);
surrounding!(
    a_directory_at_the_config_place,
    [nvcc_13_5],
    Case { place: Place::Directory, ..compile("a directory at the user's config place") }
);
surrounding!(
    a_fifo_at_the_config_place,
    [nvcc_13_5],
    Case { place: Place::Fifo, ..compile("a FIFO at the user's config place") }
);

// Signals mid-compile, with threads from free slots.
surrounding!(
    sigterm_to_the_call_with_slots_free,
    [nvcc_11_8, nvcc_12_4, nvcc_13_5],
    compile("SIGTERM to the call mid-compile, 3 slots free").held(true).stopped(Stop::Process(SIGTERM), &[])
);
surrounding!(
    sigterm_to_its_group_with_slots_free,
    [nvcc_11_8, nvcc_12_4, nvcc_13_5],
    compile("SIGTERM to its group mid-compile, 3 slots free").held(true).stopped(Stop::Group(SIGTERM), &[])
);
surrounding!(
    sigint_to_its_group_with_slots_free,
    [nvcc_11_8, nvcc_12_4, nvcc_13_5],
    compile("SIGINT to its group mid-compile, 3 slots free").held(true).stopped(Stop::Group(SIGINT), &[])
);
surrounding!(
    sigkill_to_its_group_with_slots_free,
    [nvcc_11_8, nvcc_12_4, nvcc_13_5],
    compile("SIGKILL to its group mid-compile, 3 slots free").held(true).stopped(Stop::Group(SIGKILL), &[])
);
// The wrapper execs nvcc (no dependency file, no jobserver), or waits for it (a dependency file to complete) and
// takes no threads: a signal to the group must reach nvcc once, as alone, and end it the same way.
surrounding!(
    sigint_to_its_group,
    [nvcc_11_8, nvcc_12_4, nvcc_13_5],
    compile("SIGINT to its group mid-compile").stopped(Stop::Group(SIGINT), &[])
);
surrounding!(
    sigint_to_its_group_with_a_dependency_file,
    [nvcc_11_8, nvcc_12_4, nvcc_13_5],
    compile("SIGINT to its group mid-compile, -MD").stopped(Stop::Group(SIGINT), &["-MD"])
);
surrounding!(
    sigterm_to_its_group_with_a_dependency_file,
    [nvcc_11_8, nvcc_12_4, nvcc_13_5],
    compile("SIGTERM to its group mid-compile, -MD").stopped(Stop::Group(SIGTERM), &["-MD"])
);
surrounding!(
    sigterm_to_the_call_with_a_dependency_file,
    [nvcc_11_8, nvcc_12_4, nvcc_13_5],
    compile("SIGTERM to the call mid-compile, -MD").stopped(Stop::Process(SIGTERM), &["-MD"])
);
surrounding!(
    sigint_to_the_call_with_a_dependency_file,
    [nvcc_11_8, nvcc_12_4, nvcc_13_5],
    compile("SIGINT to the call mid-compile, -MD").stopped(Stop::Process(SIGINT), &["-MD"])
);
// The same under a shell that leads the group, with and without threads: only the wrapper's own handling of process
// groups differs, so on the newest release.
surrounding!(
    under_sh_sigint_to_its_group_with_a_dependency_file,
    [nvcc_13_5],
    compile("under sh: SIGINT to its group mid-compile, -MD").under_shell().stopped(Stop::Group(SIGINT), &["-MD"])
);
surrounding!(
    under_sh_sigterm_to_its_group_with_a_dependency_file,
    [nvcc_13_5],
    compile("under sh: SIGTERM to its group mid-compile, -MD").under_shell().stopped(Stop::Group(SIGTERM), &["-MD"])
);
surrounding!(
    under_sh_sigkill_to_its_group_with_slots_free,
    [nvcc_13_5],
    compile("under sh: SIGKILL to its group mid-compile, 3 slots free")
        .held(true)
        .under_shell()
        .stopped(Stop::Group(SIGKILL), &["-MD"])
);

// Threads that follow the build (issue 41, `threads-follow`): nvcc gets a thread per target and the keeper stops what
// runs beyond the slots it holds, then continues it; the same surroundings must end the same way. On the newest
// release: only the wrapper's own keeping differs.
surrounding!(
    following_makes_pipe,
    [nvcc_13_5],
    compile("following: make's pipe, 3 slots free").held(false).following()
);
surrounding!(
    following_make_4_4s_fifo,
    [nvcc_13_5],
    compile("following: make 4.4's FIFO, 3 slots free").held(true).following()
);
surrounding!(
    following_descriptors_3_and_4_closed,
    [nvcc_13_5],
    compile("following: 3,4 closed (a rule without +)").claim("-j4 --jobserver-auth=3,4", Fds::Closed).following()
);
surrounding!(
    following_stderr_closed,
    [nvcc_13_5],
    Case { stderr: Stream::Closed, ..compile("following: make's pipe, stderr closed").held(false).following() }
);
surrounding!(
    following_sigterm_to_the_call,
    [nvcc_13_5],
    compile("following: SIGTERM to the call mid-compile").held(true).following().stopped(Stop::Process(SIGTERM), &[])
);
surrounding!(
    following_sigint_to_its_group,
    [nvcc_13_5],
    compile("following: SIGINT to its group mid-compile").held(true).following().stopped(Stop::Group(SIGINT), &[])
);
surrounding!(
    following_sigkill_to_its_group,
    [nvcc_13_5],
    compile("following: SIGKILL to its group mid-compile").held(true).following().stopped(Stop::Group(SIGKILL), &[])
);
surrounding!(
    following_under_sh_sigterm_to_its_group,
    [nvcc_13_5],
    compile("following, under sh: SIGTERM to its group mid-compile")
        .held(true)
        .following()
        .under_shell()
        .stopped(Stop::Group(SIGTERM), &[])
);
surrounding!(
    following_proc_hidden,
    [nvcc_13_5],
    Case { hide_proc: true, ..compile("following: /proc hidden, a FIFO").held(true).following() }
);
surrounding!(
    following_in_a_memory_cgroup,
    [nvcc_13_5],
    Case { cgroup: true, ..compile("following: a memory cgroup of 1.5 GiB, 3 slots free").held(false).following() }
);

// `/proc` hidden (a mount namespace) and a memory cgroup: as root.
surrounding!(proc_hidden, [nvcc_11_8, nvcc_12_4, nvcc_13_5], Case { hide_proc: true, ..compile("/proc hidden") });
surrounding!(
    proc_hidden_makes_pipe,
    [nvcc_11_8, nvcc_12_4, nvcc_13_5],
    Case { hide_proc: true, ..compile("/proc hidden, make's pipe").held(false) }
);
surrounding!(
    proc_hidden_a_fifo,
    [nvcc_11_8, nvcc_12_4, nvcc_13_5],
    Case { hide_proc: true, ..compile("/proc hidden, a FIFO").held(true) }
);
surrounding!(
    in_a_memory_cgroup,
    [nvcc_11_8, nvcc_12_4, nvcc_13_5],
    Case { cgroup: true, ..compile("a memory cgroup of 1.5 GiB, 3 slots free").held(false) }
);

/// A build tool for `a_rule_that_kills_its_group_loses_no_slot`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Tool {
    /// Debian 12's GNU make 4.3, its own jobserver (`-j4`: a pipe).
    Make43,
    /// Debian 13's GNU make 4.4, its own jobserver (`-j4`: a FIFO).
    Make44,
    /// Ninja 1.13, a client of the test's jobserver (a FIFO of 3 free slots).
    Ninja,
}

/// Issue 38, item 2: `timeout -s KILL` in a rule sends SIGKILL to its whole process group, which killed the keeper that
/// held the call's slots; GNU make 4.3 then said "INTERNAL: Exiting with 1 jobserver tokens available; should be 4!"
/// and built the rest with fewer. Under make 4.3, make 4.4 and Ninja 1.13, a build whose first rule is such a
/// compile killed halfway, and whose second compiles after it, ends as with nvcc alone: the same status, no lost
/// slot (make's own count, and the test's for Ninja), nothing left running. On the newest nvcc.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn a_rule_that_kills_its_group_loses_no_slot_under_make_4_3_make_4_4_and_ninja() {
    let Some(root) = real_toolkit(releases().last().unwrap()) else { return };
    let (Some(make), Some(ninja), Some(_)) = (real_program("make"), pypi_tool("ninja"), real_program("timeout")) else {
        return;
    };
    let Some(make44) = make44() else { return };
    #[allow(clippy::disallowed_methods)]
    let system = std::env::var_os("PATH").unwrap_or_default();
    let scratch = tempfile::tempdir().unwrap();
    let heavy = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/thrust-heavy.cu");
    let gencode = TARGETS.join(" ");
    let mut failures = Vec::new();
    for tool in [Tool::Make43, Tool::Make44, Tool::Ninja] {
        let mut outcomes = Vec::new();
        for wrapper in [false, true] {
            let dir = scratch.path().join(format!("{tool:?}-{wrapper}"));
            std::fs::create_dir_all(dir.join("bin")).unwrap();
            std::fs::create_dir_all(dir.join("tmp")).unwrap();
            std::fs::write(dir.join("k.cu"), KERNEL).unwrap();
            std::fs::copy(&heavy, dir.join("heavy.cu")).unwrap();
            let mut dirs = Vec::new();
            if wrapper {
                std::os::unix::fs::symlink(WRAPPER, dir.join("bin/nvcc")).unwrap();
                dirs.push(dir.join("bin"));
            }
            dirs.push(root.join("bin"));
            dirs.extend(std::env::split_paths(&system));
            let compile =
                |source: &str, object: &str| format!("nvcc -ccbin=/usr/bin/g++-12 {gencode} -c {source} -o {object}");
            // The killed compile first; the second starts once the first holds its slots.
            let kill = format!("timeout -s KILL 4 {}", compile("heavy.cu", "h.o"));
            let later = format!("sleep 6 && {}", compile("k.cu", "k.o"));
            let mut held = None;
            let mut cmd = match tool {
                Tool::Ninja => {
                    std::fs::write(
                        dir.join("build.ninja"),
                        format!("rule kill\n  command = {kill}\nrule later\n  command = {later}\nbuild h.o: kill heavy.cu\nbuild k.o: later k.cu\n"),
                    )
                    .unwrap();
                    let mut cmd = Command::new(&ninja);
                    cmd.arg("-k0");
                    let h = Held::new(&dir, true, TOKENS);
                    h.give(&mut cmd);
                    held = Some(h);
                    cmd
                }
                Tool::Make43 | Tool::Make44 => {
                    std::fs::write(dir.join("Makefile"), format!("all: h.o k.o\nh.o:\n\t+{kill}\nk.o:\n\t+{later}\n"))
                        .unwrap();
                    let mut cmd = Command::new(if tool == Tool::Make43 { &make } else { &make44 });
                    cmd.args(["-j4", "-k"]).env_remove("MAKEFLAGS");
                    cmd
                }
            };
            cmd.current_dir(&dir)
                .env("PATH", std::env::join_paths(&dirs).unwrap())
                .env("HOME", &dir)
                .env("TMPDIR", dir.join("tmp"))
                .env("NVCC_WRAPPER_PROBE_CACHE_DIR", dir.join("probe-cache"))
                .env_remove("NVCC_PREPEND_FLAGS")
                .env_remove("NVCC_APPEND_FLAGS")
                .stdin(Stdio::null());
            isolate(&mut cmd, &dir, true);
            if wrapper {
                cmd.env("NVCC_WRAPPER_LOG", "debug");
            }
            let out = cmd.output().unwrap();
            let log = stdout(&out) + &stderr(&out);
            std::thread::sleep(Duration::from_millis(200));
            let left = running_in(&dir);
            let deadline = Instant::now() + Duration::from_secs(120);
            while !running_in(&dir).is_empty() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
            let tokens = held.as_mut().map(Held::count);
            // Taken at the start, or (the default) while nvcc ran, following the build.
            if wrapper && !log.contains("job slots taken") && !log.contains("a job slot freed while nvcc runs") {
                failures.push(format!("{tool:?}: no call of the wrapper's took a slot:\n{log}"));
            }
            outcomes.push((out.status.code(), log.contains("INTERNAL"), tokens, left, dir.join("k.o").is_file(), log));
        }
        let (alone, wrapper) = (&outcomes[0], &outcomes[1]);
        let shown = |o: &(Option<i32>, bool, Option<usize>, Vec<String>, bool, String)| {
            format!("status {:?}, lost-slot message {}, tokens {:?}, left {:?}, k.o built {}", o.0, o.1, o.2, o.3, o.4)
        };
        let same = alone.0 == wrapper.0 && !wrapper.1 && wrapper.2 == alone.2 && wrapper.3.is_empty() && wrapper.4;
        if !same || alone.1 {
            failures.push(format!(
                "{tool:?}: nvcc alone: {}; the wrapper: {}\n  the wrapper's build said:\n{}",
                shown(alone),
                shown(wrapper),
                wrapper.5
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
