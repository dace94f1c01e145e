//! The probe cache with a real NVCC release and a real compiler: the first call probes them, the second decides from
//! the cache alone and really builds (issue 13). The fake nvcc's tests are tests/wrapper/probe_cache.rs. Needs real
//! NVCC 13.0 and g++.

use crate::support::*;

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn nvcc_and_gxx_are_probed_once_and_the_warm_cache_builds() {
    let Some(root) = real_toolkit("13.0") else { return };
    if real_program("g++").is_none() {
        return;
    }
    let sb = RealSandbox::new(&root);
    sb.write("hello.cu", SMOKE_CU);
    let dry_run = || {
        let mut cmd = sb.nvcc();
        let out = cmd.env("NVCC_WRAPPER_DRY_RUN", "1").env("NVCC_WRAPPER_LOG", "debug").args(["-c", "hello.cu"]);
        let out = out.output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        (stdout(&out), stderr(&out))
    };
    let (first, log) = dry_run();
    assert!(log.contains("release:     13.0.88 (from the toolkit's version.json)"), "{log}");
    let (second, log) = dry_run();
    assert_eq!(second, first);
    assert!(log.contains("(from the probe cache, as the toolkit's version.json said)"), "{log}");
    assert!(log.contains("probe cache: compiler") && !log.contains("probing it"), "{log}");
    // A real compile decided from the cache alone.
    let out = sb.nvcc().env("NVCC_WRAPPER_LOG", "debug").args(["-c", "hello.cu", "-o", "hello.o"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("probing it"), "{}", stderr(&out));
    assert!(sb.file("hello.o").is_file());
}
