//! The fake nvcc records exactly what it was started with, or the wrapper's tests would prove nothing. (Having an
//! integration test also makes `cargo test` build the fake as a program, at target/debug/fake-nvcc, where the
//! wrapper's tests find it.)

use std::os::unix::ffi::OsStrExt;
use std::process::Command;

#[test]
fn records_argv_bytes_and_environment() {
    let dir = std::env::temp_dir().join(format!("fake-nvcc-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let record = dir.join("record.json");
    let odd = std::ffi::OsStr::from_bytes(b"-D\xff");
    let status = Command::new(env!("CARGO_BIN_EXE_fake-nvcc"))
        .args([std::ffi::OsStr::new("a b"), std::ffi::OsStr::new(""), odd])
        .env("FAKE_NVCC_RECORD", &record)
        .env("SOME_VAR", "value")
        .env("FAKE_NVCC_EXIT", "7")
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(7));
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&record).unwrap()).unwrap();
    let argv: Vec<Vec<u8>> = serde_json::from_value(json["argv"].clone()).unwrap();
    assert_eq!(argv[1..], [b"a b".to_vec(), b"".to_vec(), b"-D\xff".to_vec()]);
    assert_eq!(json["env"]["SOME_VAR"], serde_json::json!(b"value".to_vec()));
    std::fs::remove_dir_all(&dir).unwrap();
}
