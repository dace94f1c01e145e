//! The wrapper killed in the middle of a call where it waits for the real nvcc (a dependency file to complete): as
//! safe as exec, where nvcc is the wrapper's own process (issue 30). Needs real NVCC 13.5 and g++.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use crate::support::*;

/// A source that keeps nvcc 13.5 busy for about a second in each of its programs (cudafe++, cicc, ptxas, gcc).
const SOURCE: &str = "#include <cstdio>\ntemplate <int N> __global__ void k(float *p) {\n  float a = p[threadIdx.x];\n#pragma unroll\n  for (int i = 0; i < N; i++) a = a * 1.0001f + __sinf(a);\n  p[threadIdx.x] = a;\n}\ntemplate __global__ void k<1500>(float *);\ntemplate __global__ void k<2500>(float *);\nint main() { std::printf(\"x\\n\"); }\n";

/// A dependency file as a reader finds it: nvcc's whole (a rule whose every prerequisite exists), or none.
fn check_depfile(file: &Path, what: &str) {
    let Ok(text) = std::fs::read_to_string(file) else { return };
    assert!(text.ends_with('\n'), "{what}: {} is cut short:\n{text}", file.display());
    let (_, prerequisites) = text.split_once(" : ").unwrap_or_else(|| panic!("{what}: no rule in\n{text}"));
    let rule = prerequisites.split("\n\n").next().unwrap();
    for path in rule.split_whitespace().filter(|w| *w != "\\") {
        let base = file.parent().unwrap();
        assert!(base.join(path).exists(), "{what}: {} names {path}, which does not exist:\n{text}", file.display());
    }
}

/// A small deterministic generator (xorshift), so that a failure can be replayed from the seed it prints.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Issue 30, the kill test: SIGKILL, SIGTERM and SIGINT sent to the wrapper at random points of a dependency-file
/// call with real nvcc 13.5, a hundred times (two at once): afterwards no program of nvcc's is running, the
/// dependency file is nvcc's whole or the completed one (never cut short), and no object is written after the
/// wrapper's end. Before, SIGKILL left nvcc to init, which wrote the object up to 86 s later; SIGTERM left nvcc's
/// `cicc` or `gcc` running, as it does with nvcc alone. SIGINT sent to the wrapper alone reaches nvcc, which goes
/// on while a program of its own runs, as alone: then the object is complete before the wrapper ends.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn killing_the_wrapper_at_random_points_leaves_nothing_running_and_nothing_half_written() {
    let Some(root) = real_toolkit("13.5") else { return };
    // The length of a whole call, to spread the kills over it.
    let probe = RealSandbox::new(&root);
    probe.write("k.cu", SOURCE);
    let started = Instant::now();
    probe.nvcc().args(["-MD", "-MF", "k.d", "-c", "k.cu", "-o", "k.o"]).assert().success();
    let whole = started.elapsed();
    let seed = 0x9e37_79b9_7f4a_7c15u64 ^ SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs();
    eprintln!("a whole call takes {whole:?}; seed {seed:#x}");
    let workers: Vec<_> = (0..2u64)
        .map(|worker| {
            let root = root.clone();
            std::thread::spawn(move || {
                let sb = RealSandbox::new(&root);
                sb.write("k.cu", SOURCE);
                let mut random = Random(seed.wrapping_add(worker) | 1);
                for round in 0..50 {
                    let signal = [libc::SIGKILL, libc::SIGTERM, libc::SIGINT][(random.next() % 3) as usize];
                    let at = whole.mul_f64((random.next() % 1000) as f64 / 1000.0 * 1.1);
                    let what = format!("worker {worker}, round {round}: signal {signal} after {at:?}");
                    for file in ["k.o", "k.d"] {
                        let _ = std::fs::remove_file(sb.file(file));
                    }
                    let mut cmd = std::process::Command::new(sb.wrapper_bin.join("nvcc"));
                    cmd.args(["-MD", "-MF", "k.d", "-c", "k.cu", "-o", "k.o"])
                        .env("PATH", sb.path())
                        .env("NVCC_WRAPPER_PROBE_CACHE_DIR", sb.file("probe-cache"))
                        .env_remove("NVCC_WRAPPER_CONFIG")
                        .env_remove("NVCC_PREPEND_FLAGS")
                        .env_remove("NVCC_APPEND_FLAGS")
                        .current_dir(sb.dir.path())
                        .stderr(std::process::Stdio::null());
                    let mut wrapper = cmd.spawn().unwrap();
                    std::thread::sleep(at);
                    // SAFETY: kill takes plain integers; the wrapper is our child, not yet reaped.
                    unsafe { libc::kill(wrapper.id() as i32, signal) };
                    let status = wrapper.wait().unwrap();
                    let ended = SystemTime::now();
                    // Nothing of nvcc's may go on: what is still running now could write later.
                    let deadline = Instant::now() + Duration::from_secs(5);
                    let mut left = running_in(sb.dir.path());
                    while !left.is_empty() && Instant::now() < deadline {
                        std::thread::sleep(Duration::from_millis(20));
                        left = running_in(sb.dir.path());
                    }
                    assert!(left.is_empty(), "{what}: still running after the wrapper ended ({status:?}): {left:?}");
                    if let Ok(meta) = std::fs::metadata(sb.file("k.o")) {
                        assert!(
                            meta.modified().unwrap() <= ended,
                            "{what}: the object was written after the wrapper's end"
                        );
                    }
                    check_depfile(&sb.file("k.d"), &what);
                    if status.success() {
                        assert!(sb.file("k.o").is_file(), "{what}: exit 0 without an object");
                    } else {
                        assert!(status.signal().is_some() || status.code().is_some_and(|c| c != 0), "{what}");
                    }
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
}

/// A build in a process group that its caller left orphaned (`setsid make`, a container's first shell, some CI
/// runners): every member's parent is in the group or in another session. The kernel hangs up such a group (SIGHUP,
/// then SIGCONT) when it *becomes* orphaned while a member is stopped: nvcc alone, whose parent is in the group, never
/// makes it so. The keeper, nvcc's parent, was in another group of the same session, a link whose end with nvcc's
/// hung up the whole build (the shell, make, the stopped process), and the first CI run of stop 53 with it. Here a
/// stopped `sleep` sits in the group while a call waits for nvcc in a keeper: for a dependency file (nvcc 11.8, 12.4
/// and 13.5), with threads from make's slots, and with threads that follow the build (13.5); the script must go on
/// as with nvcc alone, the `sleep` still stopped.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn in_an_orphaned_group_nvccs_end_hangs_up_nothing_as_with_nvcc_alone() {
    let Some(setsid) = real_program("setsid") else { return };
    if real_program("g++-11").is_none() {
        return;
    }
    // g++-11: the host compiler every release here accepts, for nvcc alone.
    let targets = "-ccbin g++-11 -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_86,code=sm_86";
    let depfile = format!("nvcc {targets} -c k.cu -o k.o -MD -MF k.d");
    let calls = [
        ("11.8", "a dependency file", depfile.clone(), &[][..]),
        ("12.4", "a dependency file", depfile.clone(), &[][..]),
        ("13.5", "a dependency file", depfile, &[][..]),
        (
            "13.5",
            "threads from make's slots, taken at the start",
            "make -s -j4".to_string(),
            &[("NVCC_WRAPPER_THREADS_FOLLOW", "0")][..],
        ),
        ("13.5", "threads that follow the build (the default)", "make -s -j2".to_string(), &[][..]),
    ];
    for (release, what, call, wrapper_env) in calls {
        let Some(root) = real_toolkit(release) else { return };
        let said = |wrapper: bool| {
            let sb = RealSandbox::new(&root);
            sb.write("k.cu", SOURCE);
            sb.write("Makefile", &format!("k.o: k.cu\n\t+nvcc {targets} -c k.cu -o k.o -MD -MF k.d\n"));
            let script = format!(
                "sleep 300 & s=$!\nkill -STOP $s\n{call}\necho \"the call: $?\"\n\
                 echo \"the sleep: $(ps -o stat= -p $s | cut -c1)\"\nkill -KILL $s\n"
            );
            // The sandbox's PATH has the wrapper first: nvcc alone's is the rest.
            let path = std::env::join_paths(std::env::split_paths(&sb.path()).skip(usize::from(!wrapper))).unwrap();
            let mut cmd = assert_cmd::Command::new(&setsid);
            sb.prepare(&mut cmd);
            cmd.args(["-w", "bash", "-c", &script]).env("PATH", path);
            if wrapper {
                cmd.envs(wrapper_env.iter().copied());
            }
            let out = cmd.output().unwrap();
            (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(), stderr(&out))
        };
        let alone = said(false);
        assert_eq!(
            (alone.0, alone.1.as_str()),
            (Some(0), "the call: 0\nthe sleep: T\n"),
            "{release}, {what}, alone: {alone:?}"
        );
        let wrapper = said(true);
        assert_eq!(
            (wrapper.0, &wrapper.1),
            (alone.0, &alone.1),
            "{release}, {what}: the wrapper (left), alone (right)\n{}",
            wrapper.2
        );
    }
}
