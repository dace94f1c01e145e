//! The probe cache as a build meets it, in front of the fake nvcc (issue 13): without a config, the second call runs
//! no compiler and reads no toolkit file; a compiler replaced in place is probed again; no state of the cache
//! directory fails a call or changes its command; a config that records everything never reads it; the switch turns
//! it off. A real build decided from the cache alone is tests/real/probe_cache.rs.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::support::*;

/// A sandbox without a config, whose `g++` (first on PATH after the toolkit) logs every run to `g++.log` and says
/// it is `version`, and whose nvcc is a copy (so that its times are the test's own).
struct NoConfig {
    sb: Sandbox,
    cc_bin: PathBuf,
    cache: PathBuf,
}

impl NoConfig {
    fn new() -> NoConfig {
        let sb = Sandbox::new();
        let nvcc = sb.cuda_bin.join("nvcc");
        std::fs::remove_file(&nvcc).unwrap();
        std::fs::copy(fake_nvcc(), &nvcc).unwrap();
        age(&nvcc);
        let cc_bin = sb.dir.path().join("cc-bin");
        std::fs::create_dir_all(&cc_bin).unwrap();
        let cache = sb.dir.path().join("probe-cache");
        let nc = NoConfig { sb, cc_bin, cache };
        nc.install_gxx("12.2.0");
        nc
    }

    /// A GCC driver in the form Debian prints it, at `cc-bin/g++`, dated an hour back (as an installed compiler is).
    fn install_gxx(&self, version: &str) {
        let log = self.sb.dir.path().join("g++.log");
        let script = format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\ncase \"$1\" in\n--version) echo 'g++ (Debian {version}-14) {version}'; \
             echo 'Copyright (C) 2022 Free Software Foundation, Inc.';;\n-dumpfullversion) echo {version};;\n\
             -dumpmachine) echo x86_64-linux-gnu;;\nesac\n",
            log.display()
        );
        let gxx = self.cc_bin.join("g++");
        std::fs::write(&gxx, script).unwrap();
        std::fs::set_permissions(&gxx, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        age(&gxx);
    }

    /// How many times `g++` has been run.
    fn gxx_runs(&self) -> usize {
        std::fs::read_to_string(self.sb.dir.path().join("g++.log")).map_or(0, |t| t.lines().count())
    }

    /// `nvcc -c k.cu` through the wrapper, no config, dry run, debug log on: (stdout, stderr).
    fn call(&self, extra_env: &[(&str, &Path)]) -> (String, String) {
        let path = std::env::join_paths([
            self.sb.wrapper_bin.as_path(),
            self.sb.cuda_bin.as_path(),
            self.cc_bin.as_path(),
            Path::new("/usr/bin"),
            Path::new("/bin"),
        ])
        .unwrap();
        let mut cmd = self.sb.nvcc();
        cmd.env_remove("NVCC_WRAPPER_CONFIG")
            .env("PATH", path)
            .env("NVCC_WRAPPER_PROBE_CACHE_DIR", &self.cache)
            .env("NVCC_WRAPPER_DRY_RUN", "1")
            .env("NVCC_WRAPPER_LOG", "debug");
        for (name, value) in extra_env {
            cmd.env(name, value);
        }
        let out = cmd.args(["-c", "k.cu"]).output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        (stdout(&out), stderr(&out))
    }

    fn entries(&self) -> Vec<PathBuf> {
        let Ok(dir) = std::fs::read_dir(&self.cache) else { return Vec::new() };
        // `.swept` says when old entries were last cleared; it is not an entry.
        let mut found: Vec<PathBuf> = dir.map(|e| e.unwrap().path()).filter(|p| !p.ends_with(".swept")).collect();
        found.sort();
        found
    }
}

fn age(path: &Path) {
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(3600)).unwrap();
}

#[test]
fn without_a_config_the_second_call_probes_nothing() {
    let nc = NoConfig::new();
    let (first, log) = nc.call(&[]);
    assert!(first.contains(&format!("-ccbin={}", nc.cc_bin.join("g++").display())), "{first}");
    assert!(nc.gxx_runs() >= 2, "g++ is probed on the first call ({} runs)", nc.gxx_runs());
    assert!(log.contains("probe cache: compiler") && log.contains("no entry: probing it"), "{log}");
    let kinds: Vec<String> = nc
        .entries()
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().split('-').next().unwrap().into())
        .collect();
    assert_eq!(kinds, ["compiler", "nvcc"], "{:?}", nc.entries());

    let runs = nc.gxx_runs();
    let (second, log) = nc.call(&[]);
    assert_eq!(second, first, "the cache must not change the command");
    assert_eq!(nc.gxx_runs(), runs, "the second call ran g++:\n{log}");
    assert!(log.contains(&format!("probe cache: compiler {} from", nc.cc_bin.join("g++").display())), "{log}");
    assert!(log.contains("release:     13.0.88 (from the probe cache, as the toolkit's version.json said)"), "{log}");
    assert!(!log.contains("probing it"), "{log}");
}

#[test]
fn a_compiler_replaced_in_place_is_probed_again() {
    let nc = NoConfig::new();
    nc.call(&[]);
    let runs = nc.gxx_runs();
    nc.install_gxx("13.2.0");
    let (_, log) = nc.call(&[]);
    assert!(nc.gxx_runs() > runs, "the new g++ was not probed:\n{log}");
    assert!(log.contains("the file changed since it was probed"), "{log}");
    assert!(log.contains("(gcc 13.2.0)"), "the plan must use the new compiler's version:\n{log}");
}

#[test]
fn no_state_of_the_cache_fails_a_call_or_changes_it() {
    let nc = NoConfig::new();
    let (want, _) = nc.call(&[]);
    let entries = nc.entries();
    // Corrupt, then truncated, then from another version (a header the wrapper does not write).
    type Damage = fn(Vec<u8>) -> Vec<u8>;
    let damage: [(&str, Damage); 3] = [
        ("corrupt", |mut b| {
            let at = b.len() / 2;
            b[at] ^= 0x20;
            b
        }),
        ("truncated", |b| b[..b.len() - 7].to_vec()),
        ("another version", |b| {
            // Another release's header over the same key and values, with a checksum that matches.
            let text = String::from_utf8(b).unwrap();
            let body = &text[text.find('\n').unwrap() + 1..text.rfind("check ").unwrap()];
            let content = format!("nvcc-wrapper probe cache 1 (nvcc-wrapper 0.0.1)\n{body}");
            let check = content
                .bytes()
                .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
            format!("{content}check {check:016x}\n").into_bytes()
        }),
    ];
    for (what, damage) in damage {
        for entry in &entries {
            std::fs::write(entry, damage(std::fs::read(entry).unwrap())).unwrap();
        }
        let runs = nc.gxx_runs();
        let (got, log) = nc.call(&[]);
        assert_eq!(got, want, "{what}");
        assert!(nc.gxx_runs() > runs, "{what}: g++ must be probed again");
        let why = match what {
            "corrupt" => "corrupt",
            "truncated" => "truncated",
            _ => "written by another version",
        };
        assert!(
            log.contains(&format!("the entry is {why}")) || log.contains(&format!("the entry was {why}")),
            "{what}: {log}"
        );
    }
    // Entries removed, and a cache directory that cannot be created.
    std::fs::remove_dir_all(&nc.cache).unwrap();
    assert_eq!(nc.call(&[]).0, want);
    let blocked = nc.sb.write("blocked", "a file, not a directory");
    let (got, log) = nc.call(&[("NVCC_WRAPPER_PROBE_CACHE_DIR", &blocked.join("probes"))]);
    assert_eq!(got, want);
    assert!(log.contains("cannot write"), "{log}");
}

#[test]
fn a_config_that_records_everything_reads_no_cache() {
    let nc = NoConfig::new();
    let gxx = nc.cc_bin.join("g++");
    let recorded = format!(
        "nvcc = \"{}\"\ncuda-version = \"13.0\"\n[host-compiler]\nstdenv = {{ path = \"{}\", family = \"gcc\", version = \"12.2.0\" }}\n",
        nc.sb.cuda_bin.join("nvcc").display(),
        gxx.display()
    );
    let config = nc.sb.write("recorded.toml", &recorded);
    let (out, log) = nc.call(&[("NVCC_WRAPPER_CONFIG", &config)]);
    assert!(out.contains(&format!("-ccbin={}", gxx.display())), "{out}");
    assert!(!log.contains("probe cache"), "a recorded config must not consult the cache:\n{log}");
    assert!(!nc.cache.exists(), "nor create it");
    assert_eq!(nc.gxx_runs(), 0);
    // The same config less `cuda-version` needs the release, and so the cache: the check above can fail.
    let partial = nc.sb.write("partial.toml", &recorded.replace("cuda-version = \"13.0\"\n", ""));
    let (_, log) = nc.call(&[("NVCC_WRAPPER_CONFIG", &partial)]);
    assert!(log.contains("probe cache: nvcc"), "{log}");
}

#[test]
fn the_switch_turns_the_cache_off_and_home_is_the_default() {
    let nc = NoConfig::new();
    let off = Path::new("0");
    nc.call(&[("NVCC_WRAPPER_PROBE_CACHE", off)]);
    let runs = nc.gxx_runs();
    let (_, log) = nc.call(&[("NVCC_WRAPPER_PROBE_CACHE", off)]);
    assert!(nc.gxx_runs() > runs, "with the cache off every call probes");
    assert!(log.contains("probe cache off (NVCC_WRAPPER_PROBE_CACHE=0)"), "{log}");
    assert!(!nc.cache.exists());

    let out = nc.sb.nvcc().env("NVCC_WRAPPER_PROBE_CACHE", "sometimes").arg("-c").output().unwrap();
    assert_eq!(out.status.code(), Some(64), "{}", stderr(&out));
    assert!(stderr(&out).contains("NVCC_WRAPPER_PROBE_CACHE=sometimes is not a switch"));

    // Without a directory named, HOME's cache directory is used (the sandbox's env has no XDG_CACHE_HOME), when
    // HOME exists: the wrapper never creates it (issue 26).
    let home = nc.sb.dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let mut cmd = nc.sb.nvcc();
    cmd.env_remove("NVCC_WRAPPER_CONFIG").env("HOME", &home).env("NVCC_WRAPPER_DRY_RUN", "1").args(["-c", "k.cu"]);
    cmd.assert().success();
    let kept = std::fs::read_dir(home.join(".cache/nvcc-wrapper/probes")).unwrap().count();
    assert!(kept >= 1, "nothing kept under HOME");
}

/// Issue 26, "done when": 1,000 calls, four at a time (the project's machine has two cores), over a probe cache that
/// another thread keeps filling with FIFOs that no one writes, links to `/dev/zero`, truncated and oversized entries
/// and directories, renamed over the real entries while the calls read and rewrite them. Every call ends, with nvcc's
/// own exit code and the command a call over a sound cache gives nvcc.
#[test]
fn a_thousand_calls_over_a_hostile_probe_cache_all_get_nvccs_result() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    const CALLS: usize = 1000;
    const AT_ONCE: usize = 4;
    let nc = NoConfig::new();
    let path = std::env::join_paths([
        nc.sb.wrapper_bin.as_path(),
        nc.sb.cuda_bin.as_path(),
        nc.cc_bin.as_path(),
        Path::new("/usr/bin"),
        Path::new("/bin"),
    ])
    .unwrap();
    let call = |record: &Path| {
        let mut cmd = std::process::Command::new(nc.sb.wrapper_bin.join("nvcc"));
        cmd.env_clear()
            .env("PATH", &path)
            .env("FAKE_NVCC_RECORD", record)
            .env("FAKE_NVCC_EXIT", "7")
            .env("NVCC_WRAPPER_PROBE_CACHE_DIR", &nc.cache)
            .args(["-c", "k.cu"])
            .current_dir(nc.sb.dir.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let started = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() {
            if started.elapsed() > Duration::from_secs(60) {
                child.kill().unwrap();
                panic!("a call over the hostile cache hangs");
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let out = child.wait_with_output().unwrap();
        let bytes = std::fs::read(record).unwrap_or_else(|e| panic!("nvcc did not run ({e}): {}", stderr(&out)));
        let record: Record = serde_json::from_slice(&bytes).unwrap();
        (out.status.code(), record.argv, stderr(&out))
    };
    // A sound cache first: the command every call must give nvcc, and the entries to attack.
    let (code, want, _) = call(&nc.sb.dir.path().join("first.json"));
    assert_eq!(code, Some(7));
    let entries = nc.entries();
    assert!(entries.len() >= 2, "{entries:?}");
    let sound: Vec<Vec<u8>> = entries.iter().map(|e| std::fs::read(e).unwrap()).collect();

    let done = AtomicBool::new(false);
    let attacks = AtomicUsize::new(0);
    let next = AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    let records = nc.sb.dir.path().join("records");
    std::fs::create_dir(&records).unwrap();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let staging = nc.sb.dir.path().join("staging");
            let mut n = 0u64;
            while !done.load(Ordering::Relaxed) {
                for (entry, bytes) in entries.iter().zip(&sound) {
                    n += 1;
                    let temp = staging.with_extension(n.to_string());
                    match n % 5 {
                        0 => {
                            let c = std::ffi::CString::new(temp.to_str().unwrap()).unwrap();
                            // SAFETY: a valid path string.
                            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
                        }
                        1 => std::os::unix::fs::symlink("/dev/zero", &temp).unwrap(),
                        2 => std::fs::write(&temp, &bytes[..bytes.len() / 2]).unwrap(),
                        3 => std::fs::write(&temp, vec![b'x'; 100_000]).unwrap(),
                        _ => std::fs::create_dir(&temp).unwrap(),
                    }
                    // Over an entry a call may have just written; a directory cannot replace a file, so is put
                    // where the entry was removed.
                    if std::fs::rename(&temp, entry).is_err() {
                        let _ = std::fs::remove_file(entry);
                        let _ = std::fs::rename(&temp, entry);
                        let _ = std::fs::remove_dir(&temp);
                    }
                    attacks.fetch_add(1, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(1));
                // Directories left in place are cleared now and then, so that writes can succeed again.
                for entry in &entries {
                    if entry.is_dir() && n % 3 == 0 {
                        let _ = std::fs::remove_dir(entry);
                    }
                }
            }
        });
        let workers: Vec<_> = (0..AT_ONCE)
            .map(|_| {
                scope.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= CALLS {
                        break;
                    }
                    // Paced by the attacker, not by the clock: call i starts once i + 1 attacks have been made, so
                    // the calls meet the attacks however the machine schedules the threads (a loaded two-core
                    // machine once let 1,000 quick calls finish before 1,000 attacks).
                    let waiting = std::time::Instant::now();
                    while attacks.load(Ordering::Relaxed) <= i {
                        assert!(waiting.elapsed() < Duration::from_secs(60), "the attacker stopped attacking");
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    let (code, argv, err) = call(&records.join(format!("{i}.json")));
                    if code != Some(7) || argv != want {
                        failures.lock().unwrap().push(format!("call {i}: exit {code:?}, argv {argv:?}: {err}"));
                    }
                })
            })
            .collect();
        // The attacker is stopped before a worker's panic is passed on, or the scope would wait for it forever.
        let ended: Vec<_> = workers.into_iter().map(|worker| worker.join()).collect();
        done.store(true, Ordering::Relaxed);
        if let Some(panic) = ended.into_iter().find_map(Result::err) {
            std::panic::resume_unwind(panic);
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {CALLS} calls went wrong:\n{}",
        failures.len(),
        failures[..failures.len().min(5)].join("\n")
    );
}
