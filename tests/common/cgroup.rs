//! A cgroup of the test's own, for the real tests that measure or limit memory (tests/real/threads.rs, follow.rs,
//! hostile.rs, the surroundings corpus): split from support.rs, which every test binary includes.

use std::path::{Path, PathBuf};

use crate::support::cannot_run;

/// A cgroup of its own under this process's (in the v1 hierarchy of `controller`, or else the v2 one), with the
/// settings of that version written (file, value), removed when dropped; `None` (after a note) when none
/// can be made here (not root, no such controller), which fails the test (`cannot_run`).
pub struct Cgroup {
    dir: PathBuf,
}

impl Cgroup {
    pub fn new(controller: &str, v1: &[(&str, String)], v2: &[(&str, String)]) -> Option<Cgroup> {
        let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        let under_v1 = own.lines().find_map(|l| l.split_once(&format!(":{controller}:")).map(|(_, p)| p.to_string()));
        let (dir, settings) = match under_v1 {
            Some(path) => (Path::new("/sys/fs/cgroup").join(controller).join(path.trim_start_matches('/')), v1),
            None => {
                let path = own.lines().find_map(|l| l.strip_prefix("0::")).unwrap_or("/").to_string();
                (Path::new("/sys/fs/cgroup").join(path.trim_start_matches('/')), v2)
            }
        };
        // One name per cgroup of this process: tests running at once each make their own.
        static MADE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = MADE.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let dir = dir.join(format!("nvcc-wrapper-test-{}-{n}-{controller}", std::process::id()));
        let made = std::fs::create_dir(&dir)
            .and_then(|()| settings.iter().try_for_each(|(file, value)| std::fs::write(dir.join(file), value)));
        if let Err(e) = made {
            let _ = std::fs::remove_dir(&dir);
            let what = format!("cannot make a {controller} cgroup at {} ({e})", dir.display());
            cannot_run(&format!("{what}: run the tests as root"));
            return None;
        }
        Some(Cgroup { dir })
    }

    /// A file of the cgroup's (`memory.max_usage_in_bytes`, say).
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Whether it is in the v1 hierarchy (else v2), whose files have other names.
    pub fn v1(&self) -> bool {
        self.dir.starts_with("/sys/fs/cgroup/memory") || !self.dir.join("cgroup.controllers").exists()
    }

    /// `program args` run inside the cgroup: through `sh`, which moves itself in and then execs it.
    pub fn wrap(&self, program: &Path, args: &[&str]) -> std::process::Command {
        let mut cmd = std::process::Command::new("sh");
        cmd.arg("-c").arg("echo $$ > \"$0\" && exec \"$@\"").arg(self.dir.join("cgroup.procs")).arg(program).args(args);
        cmd
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        // Empty once its processes ended; a few tries, as the kernel lets go of it a little later.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}
