//! The wrapper as a transparent nvcc: arguments byte-exact, argv[0], exit codes, signals, stdio; finding the real
//! nvcc and refusing to loop.

use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;

use crate::support::*;

#[test]
fn every_argument_reaches_nvcc_byte_exact_and_in_order() {
    let sb = Sandbox::new();
    let odd = std::ffi::OsStr::from_bytes(b"-DNAME=\xff\xfe\x80");
    let args: Vec<&std::ffi::OsStr> = vec![
        "-c".as_ref(),
        "".as_ref(),
        "with space.cu".as_ref(),
        "-DQ=\"quoted\" 'single'".as_ref(),
        "-DNL=line1\nline2".as_ref(),
        odd,
        "-c".as_ref(),
        "--".as_ref(),
        "-Xcompiler=-O2,-g".as_ref(),
    ];
    sb.nvcc().args(&args).assert().success();
    let record = sb.recorded();
    let mut want: Vec<Vec<u8>> = vec![sb.ccbin().into_bytes(), sb.compression().into_bytes()];
    want.extend(args.iter().map(|a| a.as_bytes().to_vec()));
    assert_eq!(record.argv[1..], want[..]);
}

#[test]
fn argv0_is_the_real_nvcc_path_so_nvcc_finds_its_profile() {
    let sb = Sandbox::new();
    sb.nvcc().arg("-c").assert().success();
    assert_eq!(sb.recorded().argv[0], sb.cuda_bin.join("nvcc").as_os_str().as_bytes());
}

#[test]
fn exit_codes_and_output_are_nvccs_own() {
    for code in [1, 42] {
        let sb = Sandbox::new();
        let out = sb
            .nvcc()
            .env("FAKE_NVCC_EXIT", code.to_string())
            .env("FAKE_NVCC_STDOUT", "out from nvcc\n")
            .env("FAKE_NVCC_STDERR", "err from nvcc\n")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(code));
        assert_eq!(stdout(&out), "out from nvcc\n");
        assert_eq!(stderr(&out), "err from nvcc\n");
    }
}

#[test]
fn death_by_signal_is_nvccs_own() {
    let sb = Sandbox::new();
    let out = sb.nvcc().env("FAKE_NVCC_SIGNAL", "9").output().unwrap();
    // exec replaced the wrapper, so the caller sees nvcc's own signal, not an exit code made up by a parent.
    assert_eq!(out.status.signal(), Some(9));
}

#[test]
fn stdin_reaches_nvcc() {
    let sb = Sandbox::new();
    sb.nvcc()
        .env("FAKE_NVCC_ECHO_STDIN", "1")
        .write_stdin("int main() {}\n")
        .assert()
        .success()
        .stdout("int main() {}\n");
}

#[test]
fn quiet_on_success_and_depth_counter_raised() {
    let sb = Sandbox::new();
    sb.nvcc().args(["-c", "a.cu"]).assert().success().stdout("").stderr("");
    assert_eq!(sb.recorded().env("NVCC_WRAPPER_DEPTH").as_deref(), Some("1"));
}

#[test]
fn no_real_nvcc_is_a_clear_error() {
    let sb = Sandbox::new();
    std::fs::remove_file(sb.cuda_bin.join("nvcc")).unwrap();
    let out = sb.nvcc().arg("-c").output().unwrap();
    assert_eq!(out.status.code(), Some(127));
    let err = stderr(&out);
    assert!(
        err.starts_with("nvcc-wrapper: error: no real nvcc found: the only runnable `nvcc` on PATH is this wrapper"),
        "{err}"
    );
    assert!(err.contains("\nhelp: "), "{err}");

    let out = sb.nvcc().env("PATH", "/nonexistent").env_remove("NVCC_WRAPPER_CONFIG").arg("-c").output().unwrap();
    assert_eq!(out.status.code(), Some(127));
    assert!(stderr(&out).contains("there is no runnable `nvcc` on PATH"), "{}", stderr(&out));
}

#[test]
fn copies_of_the_wrapper_cannot_loop() {
    // Two copies (not symlinks: their canonical paths differ from each other) used to find each other as "the real
    // nvcc" until the depth counter stopped them; each knows the other for a copy now (issue 26), and with no real
    // nvcc on PATH that is what it says.
    let sb = Sandbox::new();
    std::fs::remove_file(sb.cuda_bin.join("nvcc")).unwrap();
    let first = sb.dir.path().join("copy/bin");
    std::fs::create_dir_all(&first).unwrap();
    // Copied by `cp`, not in this process: a write descriptor open here while another test thread forks would leak
    // into that child and make the copy briefly impossible to exec (ETXTBSY).
    for to in [sb.cuda_bin.join("nvcc"), first.join("nvcc")] {
        assert!(std::process::Command::new("cp").arg(WRAPPER).arg(to).status().unwrap().success());
    }
    let path =
        std::env::join_paths([&first, &sb.cuda_bin, std::path::Path::new("/usr/bin"), std::path::Path::new("/bin")])
            .unwrap();
    let out = assert_cmd::Command::new(first.join("nvcc")).env_clear().env("PATH", path).arg("-c").output().unwrap();
    assert_eq!(out.status.code(), Some(127), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("the only runnable `nvcc` on PATH is this wrapper or copies of it"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_real_nvcc_that_cannot_run_is_exit_126() {
    let sb = Sandbox::new();
    // Named by the config (PATH search would skip it): a file without the execute bit.
    sb.write("cuda-broken/bin/nvcc", "not a program");
    let config = sb.write("wrapper.toml", "nvcc = \"cuda-broken/bin/nvcc\"\n");
    // Exec, and the child that a dependency file needs (its keeper reports the failed start to the wrapper).
    for args in [&["-c"][..], &["-MD", "-MF", "k.d", "-c", "k.cu"]] {
        let out = sb.nvcc().env("NVCC_WRAPPER_CONFIG", &config).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(126), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("cannot run the real nvcc"), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("Permission denied"), "{args:?}: {}", stderr(&out));
    }
}
