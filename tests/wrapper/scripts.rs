//! Every script a user may run answers `--help` and `-h` with its usage and changes nothing (issue 50, item 1): run
//! with `apt-get`, `pip`, `cargo`, `curl` and the other installers made to fail loudly, a `HOME` and a cache of its
//! own, each exits 0, prints a line that names how it is run, and leaves the stand-ins unrun and both places empty.
//! And `scripts/fetch-toolkits.sh` with no target downloads nothing: its usage, exit 2.

use std::path::{Path, PathBuf};

/// The programs a script could install or download with: each a stand-in that records its call and fails.
const INSTALLERS: [&str; 10] = ["apt-get", "apt", "pip", "pip3", "cargo", "curl", "wget", "mmdebstrap", "nix", "sudo"];

/// The scripts a user may run: every file of `scripts/` itself, each an executable with its interpreter named
/// (issue 60, row 9: two modules and a sourced file there answered `--help` with nothing). What is not run by
/// itself lives in a directory of its own (`scripts/lib/`, `scripts/fetch_toolkits/`).
fn entry_points() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts");
    let mut found: Vec<PathBuf> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_file()).collect();
    for script in &found {
        let text = std::fs::read_to_string(script).unwrap_or_default();
        let mode = std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(script).unwrap().permissions());
        assert!(
            text.starts_with("#!") && mode & 0o111 != 0,
            "{} is in scripts/ but is not a program",
            script.display()
        );
    }
    found.sort();
    found
}

struct Place {
    dir: tempfile::TempDir,
}

impl Place {
    fn new() -> Place {
        let place = Place { dir: tempfile::tempdir().unwrap() };
        for sub in ["bin", "home", "cache"] {
            std::fs::create_dir(place.dir.path().join(sub)).unwrap();
        }
        for name in INSTALLERS {
            let stub = place.dir.path().join("bin").join(name);
            let log = place.dir.path().join("ran");
            std::fs::write(&stub, format!("#!/bin/sh\necho \"{name} $*\" >> '{}'\nexit 1\n", log.display())).unwrap();
            std::fs::set_permissions(&stub, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        }
        place
    }

    fn run(&self, script: &Path, args: &[&str]) -> std::process::Output {
        let python = script.extension().is_some_and(|e| e == "py");
        let mut cmd = std::process::Command::new(if python { "python3" } else { "bash" });
        if python {
            cmd.arg("-B");
        }
        let path = format!("{}:/usr/local/bin:/usr/bin:/bin", self.dir.path().join("bin").display());
        cmd.arg(script)
            .args(args)
            .env_clear()
            .env("PATH", path)
            .env("HOME", self.dir.path().join("home"))
            .env("NVCC_WRAPPER_CACHE", self.dir.path().join("cache"))
            .current_dir(self.dir.path())
            .stdin(std::process::Stdio::null());
        cmd.output().unwrap()
    }

    /// What the stand-ins were asked to do, and what was written to HOME and the cache.
    fn traces(&self) -> (String, usize) {
        let ran = std::fs::read_to_string(self.dir.path().join("ran")).unwrap_or_default();
        let written = ["home", "cache"].iter().map(|d| std::fs::read_dir(self.dir.path().join(d)).unwrap().count());
        (ran, written.sum())
    }
}

#[test]
fn every_script_answers_help_and_changes_nothing() {
    let scripts = entry_points();
    assert!(scripts.len() >= 20, "only {} scripts found", scripts.len());
    for script in &scripts {
        let name = script.file_name().unwrap().to_str().unwrap();
        for flag in ["--help", "-h"] {
            let place = Place::new();
            let out = place.run(script, &[flag]);
            let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            assert_eq!(out.status.code(), Some(0), "{name} {flag}:\n{said}");
            assert!(
                said.lines().any(|l| l.contains(name) && (l.contains("scripts/") || l.starts_with("usage:"))),
                "{name} {flag} does not say how it is run:\n{said}"
            );
            assert_eq!(place.traces(), (String::new(), 0), "{name} {flag} did something:\n{said}");
        }
    }
}

#[test]
fn fetch_toolkits_with_no_target_downloads_nothing() {
    let place = Place::new();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/fetch-toolkits.sh");
    let out = place.run(&script, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("Usage: scripts/fetch-toolkits.sh"));
    assert_eq!(place.traces(), (String::new(), 0));
}

/// A fetch that waits for another one says so, with the other's pid (issue 60, row 6: two minutes of silence on the
/// cache's lock). Here the other is a process of the test's that holds the lock as a fetch does; the waiting one is
/// ended once it has said it, before it could download anything.
#[test]
fn a_fetch_that_waits_for_another_says_for_whom() {
    use std::io::{BufRead, BufReader};
    use std::os::unix::process::CommandExt;
    let place = Place::new();
    let cache = place.dir.path().join("cache");
    let holder_code = "import fcntl, os, sys, time\nf = open(sys.argv[1], 'a+')\nfcntl.flock(f, fcntl.LOCK_EX)\nf.write(f'{os.getpid()}\\n')\nf.flush()\nprint('held', flush=True)\ntime.sleep(60)\n";
    let mut holder = std::process::Command::new("python3")
        .args(["-c", holder_code])
        .arg(cache.join(".lock"))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(holder.stdout.take().unwrap()).read_line(&mut line).unwrap();
    assert_eq!(line, "held\n");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/fetch-toolkits.sh");
    let path = format!("{}:/usr/local/bin:/usr/bin:/bin", place.dir.path().join("bin").display());
    let mut fetch = std::process::Command::new("bash")
        .arg(&script)
        .arg("13.0")
        .env_clear()
        .env("PATH", path)
        .env("HOME", place.dir.path().join("home"))
        .env("NVCC_WRAPPER_CACHE", &cache)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let said = std::sync::mpsc::channel();
    let stderr = fetch.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = said.0.send(line);
        }
    });
    let first = said.1.recv_timeout(std::time::Duration::from_secs(20));
    // SAFETY: kill takes plain integers; the fetch leads a process group of its own, and the holder is our child.
    unsafe {
        libc::kill(-(fetch.id() as i32), libc::SIGKILL);
        libc::kill(holder.id() as i32, libc::SIGKILL);
    }
    let _ = (fetch.wait(), holder.wait());
    let want =
        format!("fetch-toolkits: waiting for another fetch (pid {}) to finish with {}", holder.id(), cache.display());
    assert_eq!(first.as_deref(), Ok(want.as_str()));
    assert_eq!(place.traces().0, "", "the waiting fetch ran an installer");
}
