//! Every script a user may run answers `--help` and `-h` with its usage and changes nothing (issue 50, item 1): run
//! with `apt-get`, `pip`, `cargo`, `curl` and the other installers made to fail loudly, a `HOME` and a cache of its
//! own, each exits 0, prints a line that names how it is run, and leaves the stand-ins unrun and both places empty.
//! And `scripts/fetch-toolkits.sh` with no target downloads nothing: its usage, exit 2.

use std::path::{Path, PathBuf};

/// The programs a script could install or download with: each a stand-in that records its call and fails.
const INSTALLERS: [&str; 10] = ["apt-get", "apt", "pip", "pip3", "cargo", "curl", "wget", "mmdebstrap", "nix", "sudo"];

/// The scripts a user may run: every `scripts/*.sh` but the one others source, and the Python ones run by name.
fn entry_points() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_str().unwrap();
            let text = std::fs::read_to_string(p).unwrap_or_default();
            (name.ends_with(".sh") && text.starts_with("#!"))
                || (name.ends_with(".py") && text.starts_with("#!") && text.contains("__main__"))
                || name == "test_programs.py"
        })
        .collect();
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
