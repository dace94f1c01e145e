//! A sandbox per test: the built wrapper installed as `nvcc` (a symlink, as packagers install it) first on PATH, and
//! the fake nvcc from tests/fakes as the "real" nvcc in a toolkit-shaped directory after it.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use tempfile::TempDir;

pub const WRAPPER: &str = env!("CARGO_BIN_EXE_nvcc-wrapper");

/// The fake nvcc, built by cargo next to the wrapper (the workspace's default members include tests/fakes).
pub fn fake_nvcc() -> PathBuf {
    let path = Path::new(WRAPPER).with_file_name("fake-nvcc");
    assert!(
        path.is_file(),
        "{} is missing: run `cargo test` from the workspace root so tests/fakes is built",
        path.display()
    );
    path
}

pub struct Sandbox {
    pub dir: TempDir,
    /// Holds `nvcc` -> the wrapper.
    pub wrapper_bin: PathBuf,
    /// Holds `nvcc` -> the fake (a toolkit's TOP/bin).
    pub cuda_bin: PathBuf,
    pub record: PathBuf,
}

/// What the fake nvcc was started with.
#[derive(Debug, serde::Deserialize)]
pub struct Record {
    pub argv: Vec<Vec<u8>>,
    pub env: BTreeMap<String, Vec<u8>>,
}

impl Record {
    pub fn args(&self) -> Vec<String> {
        self.argv[1..]
            .iter()
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect()
    }

    pub fn env(&self, name: &str) -> Option<String> {
        self.env
            .get(name)
            .map(|v| String::from_utf8_lossy(v).into_owned())
    }
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        let wrapper_bin = dir.path().join("wrapper/bin");
        let cuda_bin = dir.path().join("cuda/bin");
        std::fs::create_dir_all(&wrapper_bin).unwrap();
        std::fs::create_dir_all(&cuda_bin).unwrap();
        std::os::unix::fs::symlink(WRAPPER, wrapper_bin.join("nvcc")).unwrap();
        std::os::unix::fs::symlink(fake_nvcc(), cuda_bin.join("nvcc")).unwrap();
        let record = dir.path().join("record.json");
        Sandbox {
            dir,
            wrapper_bin,
            cuda_bin,
            record,
        }
    }

    pub fn path(&self) -> OsString {
        std::env::join_paths([
            &self.wrapper_bin,
            &self.cuda_bin,
            Path::new("/usr/bin"),
            Path::new("/bin"),
        ])
        .unwrap()
    }

    /// `nvcc` (the wrapper) with a clean environment: PATH, and the fake's record file.
    pub fn nvcc(&self) -> Command {
        let mut cmd = Command::new(self.wrapper_bin.join("nvcc"));
        cmd.env_clear()
            .env("PATH", self.path())
            .env("FAKE_NVCC_RECORD", &self.record)
            .current_dir(self.dir.path());
        cmd
    }

    /// `nvcc-wrapper` (the wrapper's own command line) with the same environment.
    pub fn wrapper_cli(&self) -> Command {
        let mut cmd = Command::new(WRAPPER);
        cmd.env_clear()
            .env("PATH", self.path())
            .current_dir(self.dir.path());
        cmd
    }

    pub fn recorded(&self) -> Record {
        let bytes = std::fs::read(&self.record)
            .unwrap_or_else(|e| panic!("the fake nvcc did not run ({e})"));
        serde_json::from_slice(&bytes).unwrap()
    }

    pub fn ran(&self) -> bool {
        self.record.exists()
    }

    pub fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.dir.path().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }
}

pub fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}
