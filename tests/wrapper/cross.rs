//! Cross builds as a user configures them, in front of the fake nvcc: what `[target]` and the
//! `NVCC_WRAPPER_TARGET_*` variables make nvcc receive, and the errors, with their exit codes, when a piece is missing.
//! The real builds, run under qemu-user, are tests/real/cross/.

use crate::support::*;

/// A sandbox whose toolkit has `targets/<dirs>`, with an aarch64 cross compiler recorded in `[target.host-compiler]`
/// (an empty file: recorded facts are never probed, so a probe would leave it out and fail the call).
fn cross_sandbox(target_dirs: &[&str], target: &str) -> (Sandbox, String) {
    let sb = Sandbox::new();
    for dir in target_dirs {
        std::fs::create_dir_all(sb.dir.path().join("cuda/targets").join(dir)).unwrap();
    }
    let cc = sb.write("cross/bin/aarch64-linux-gnu-g++", "");
    std::fs::set_permissions(&cc, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let text = format!(
        "reproducible = false\n{target}[target.host-compiler]\nstdenv = {{ path = \"{}\", family = \"gcc\", version = \"12.2.0\", target = \"aarch64-linux-gnu\" }}\n",
        cc.display()
    );
    std::fs::write(&sb.config, text).unwrap();
    (sb, format!("-ccbin={}", cc.display()))
}

const SBSA: &str = "[target]\nsystem = \"aarch64-linux\"\n";

#[test]
fn a_target_in_the_config_reaches_nvcc_before_the_users_arguments() {
    let (sb, ccbin) = cross_sandbox(&["sbsa-linux"], SBSA);
    sb.nvcc().args(["-c", "k.cu"]).assert().success();
    let want = [ccbin.as_str(), "--target-directory=sbsa-linux", &sb.compression(), "-c", "k.cu"];
    assert_eq!(sb.recorded().args(), want);
}

#[test]
fn the_environment_chooses_the_target_and_its_files() {
    let (sb, ccbin) = cross_sandbox(&[], "");
    let root = sb.dir.path().join("aarch64-cuda");
    sb.write("aarch64-cuda/include/cuda_runtime.h", "");
    let sysroot = sb.dir.path().join("sysroot");
    std::fs::create_dir_all(sysroot.join("usr/lib/aarch64-linux-gnu")).unwrap();
    sb.nvcc()
        .env("NVCC_WRAPPER_TARGET_SYSTEM", "aarch64-unknown-linux-gnu")
        .env("NVCC_WRAPPER_TARGET_CUDA_ROOT", &root)
        .env("NVCC_WRAPPER_TARGET_SYSROOT", &sysroot)
        .args(["k.o", "-o", "app"])
        .assert()
        .success();
    let want = [
        ccbin,
        format!("-I{}/include", root.display()),
        format!("-L{}/lib", root.display()),
        format!("-Xcompiler=--sysroot={}", sysroot.display()),
        // The multiarch directory first, then usr/lib, which exists as its parent.
        format!("-Xlinker=-rpath-link,{0}/usr/lib/aarch64-linux-gnu:{0}/usr/lib", sysroot.display()),
        sb.compression(),
        "k.o".into(),
        "-o".into(),
        "app".into(),
    ];
    assert_eq!(sb.recorded().args(), want);
}

#[test]
fn missing_pieces_are_errors_with_their_exit_codes_and_nvcc_never_runs() {
    let jetson = "[target]\nsystem = \"aarch64-linux\"\nplatform = \"jetson\"\n";
    /// (target directories in the toolkit, `[target]`, environment, exit code, words the error must say)
    type Case<'a> = (&'a [&'a str], &'a str, &'a [(&'a str, &'a str)], i32, &'a [&'a str]);
    let cases: &[Case] = &[
        // nvcc 13.0 ships no Jetson aarch64-linux and no ppc64le.
        (&["aarch64-linux"], jetson, &[], 65, &["nvcc 13.0", "aarch64-linux", "platform = \"sbsa\""]),
        (&[], SBSA, &[("NVCC_WRAPPER_TARGET_SYSTEM", "powerpc64le-linux")], 65, &["ppc64le-linux", "12.4"]),
        // No target files anywhere.
        (&[], SBSA, &[], 65, &["has no targets/sbsa-linux", "cuda-root"]),
        // A sysroot or CUDA root that is not there: the file's (78) or the variable's (64).
        (
            &["sbsa-linux"],
            "[target]\nsystem = \"aarch64-linux\"\nsysroot = \"no-such-root\"\n",
            &[],
            78,
            &["`[target] sysroot`", "no-such-root"],
        ),
        (
            &["sbsa-linux"],
            SBSA,
            &[("NVCC_WRAPPER_TARGET_SYSROOT", "/no/such/root")],
            64,
            &["$NVCC_WRAPPER_TARGET_SYSROOT", "/no/such/root"],
        ),
        (
            &[],
            SBSA,
            &[("NVCC_WRAPPER_TARGET_CUDA_ROOT", "relative/cuda")],
            64,
            &["NVCC_WRAPPER_TARGET_CUDA_ROOT", "absolute"],
        ),
        // `[target] cuda-compat` without a libcuda: the file's (78) or the variable's (64), on a compile too.
        (
            &["sbsa-linux"],
            "[target]\nsystem = \"aarch64-linux\"\ncuda-compat = \"no-compat\"\n",
            &[],
            78,
            &["`[target] cuda-compat`", "no-compat", "no libcuda.so"],
        ),
        (
            &["sbsa-linux"],
            SBSA,
            &[("NVCC_WRAPPER_TARGET_CUDA_COMPAT", "/no/compat")],
            64,
            &["$NVCC_WRAPPER_TARGET_CUDA_COMPAT"],
        ),
        (&["sbsa-linux"], SBSA, &[("NVCC_WRAPPER_TARGET_CUDA_COMPAT", "compat")], 64, &["absolute"]),
        (
            &[],
            SBSA,
            &[("NVCC_WRAPPER_TARGET_PLATFORM", "tegra")],
            64,
            &["NVCC_WRAPPER_TARGET_PLATFORM=tegra", "jetson"],
        ),
        (
            &[],
            "",
            &[("NVCC_WRAPPER_TARGET_SYSTEM", "riscv64-linux")],
            64,
            &["riscv64-linux", "$NVCC_WRAPPER_TARGET_SYSTEM"],
        ),
    ];
    for (dirs, target, env, code, words) in cases {
        let (sb, _) = cross_sandbox(dirs, target);
        let out = sb.nvcc().envs(env.iter().copied()).args(["-c", "k.cu"]).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(*code), "{target} {env:?}: {err}");
        for w in *words {
            assert!(err.contains(w), "{w:?} missing in: {err}");
        }
        assert!(err.contains("help: "), "{err}");
        assert!(!sb.ran(), "nvcc ran for {target} {env:?}");
    }
}

/// Jetson Orin with the Arm-server files on a release that builds nothing for it (13.0, issue 50): the drop-in and
/// `explain` give gencode's reason, not the target files that are missing too and would not help.
#[test]
fn a_release_that_cannot_build_the_target_is_the_reason_before_missing_files() {
    let orin = format!("{SBSA}platform = \"sbsa\"\n[gpu]\ncapabilities = [\"8.7\"]\n");
    let (sb, _) = cross_sandbox(&[], &orin);
    let reason = "nvcc 13.0 cannot build these GPU targets: 8.7 is Jetson Orin";
    let drop_in = sb.nvcc().args(["-c", "k.cu"]).output().unwrap();
    let cli = |args: &[&str]| sb.wrapper_cli().env("NVCC_WRAPPER_CONFIG", &sb.config).args(args).output().unwrap();
    let (explain, gencode) = (cli(&["explain", "--", "-c", "k.cu"]), cli(&["gencode"]));
    for (who, out) in [("drop-in", &drop_in), ("explain", &explain), ("gencode", &gencode)] {
        assert_eq!(out.status.code(), Some(65), "{who}: {}", stderr(out));
        assert!(stderr(out).contains(reason), "{who}: {}", stderr(out));
        assert!(!stderr(out).contains("targets/sbsa-linux"), "{who} blames the files: {}", stderr(out));
    }
    assert_eq!(stderr(&drop_in), stderr(&gencode), "the drop-in and gencode say it in other words");
    assert!(!sb.ran());
}

#[test]
fn doctor_and_explain_show_the_target_its_compiler_and_files() {
    let (sb, ccbin) = cross_sandbox(&["sbsa-linux"], "[target]\nsystem = \"aarch64-linux\"\nsysroot = \"sysroot\"\n");
    std::fs::create_dir_all(sb.dir.path().join("sysroot")).unwrap();
    let compiler = ccbin.trim_start_matches("-ccbin=");
    let files = sb.dir.path().join("cuda/targets/sbsa-linux");
    let sysroot = sb.dir.path().join("sysroot");
    for (command, width) in [(&["doctor"][..], 13), (&["explain", "--", "-c", "k.cu"][..], 13)] {
        let out = sb.wrapper_cli().env("NVCC_WRAPPER_CONFIG", &sb.config).args(command).output().unwrap();
        let text = stdout(&out);
        let line = |label: &str, value: String| format!("{:<width$}{value}", format!("{label}:"));
        for want in [
            line("target", "sbsa-linux (cross-compiled)".into()),
            line("compiler", compiler.to_string()),
            line("target CUDA", format!("{} (the toolkit's, by --target-directory)", files.display())),
            line("sysroot", sysroot.display().to_string()),
        ] {
            assert!(text.contains(&want), "{command:?}: {want:?} missing in:\n{text}{}", stderr(&out));
        }
    }
}

#[test]
fn target_paths_reach_nvcc_byte_for_byte_or_are_refused_by_name() {
    use std::os::unix::ffi::OsStrExt;
    // A sysroot whose name is not UTF-8 reaches the cross compiler exactly.
    let (sb, _) = cross_sandbox(&["sbsa-linux"], SBSA);
    let latin1 = sb.dir.path().join(std::ffi::OsStr::from_bytes(b"root-\xe9"));
    std::fs::create_dir_all(&latin1).unwrap();
    sb.nvcc().env("NVCC_WRAPPER_TARGET_SYSROOT", &latin1).args(["-c", "k.cu"]).assert().success();
    let mut want = b"-Xcompiler=--sysroot=".to_vec();
    want.extend_from_slice(latin1.as_os_str().as_bytes());
    assert!(sb.recorded().argv.contains(&want), "{:?}", sb.recorded().args());

    // A sysroot or cuda-compat directory with a space: nvcc would split it, so the call stops, naming it; the file's
    // setting is exit 78, the variable's 64.
    let (sb, _) = cross_sandbox(&["aarch64-linux"], "");
    // The config says 12.4: so does the toolkit.
    sb.toolkit_says("12.4.131");
    let spaced = sb.dir.path().join("my root");
    std::fs::create_dir_all(&spaced).unwrap();
    sb.write("my root/libcuda.so", "");
    let jetson = "[target]\nsystem = \"aarch64-linux\"\nplatform = \"jetson\"\n";
    let config = std::fs::read_to_string(&sb.config).unwrap().replace("reproducible = false\n", "");
    for (key, variable) in
        [("sysroot", "NVCC_WRAPPER_TARGET_SYSROOT"), ("cuda-compat", "NVCC_WRAPPER_TARGET_CUDA_COMPAT")]
    {
        let in_file = format!(
            "reproducible = false\ncuda-version = \"12.4\"\n{jetson}{key} = \"{}\"\n{config}",
            spaced.display()
        );
        std::fs::write(&sb.config, in_file).unwrap();
        let out = sb.nvcc().args(["k.o", "-o", "app"]).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(78), "{err}");
        assert!(err.contains(&format!("`[target] {key}` ('{}'", spaced.display())) && err.contains("a space"), "{err}");
        assert!(err.contains("help: ") && err.contains("symbolic link"), "{err}");
        std::fs::write(&sb.config, format!("reproducible = false\ncuda-version = \"12.4\"\n{jetson}{config}")).unwrap();
        let out = sb.nvcc().env(variable, &spaced).args(["k.o", "-o", "app"]).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(64), "{err}");
        assert!(err.contains(&format!("${variable}")) && err.contains("a space"), "{err}");
        assert!(!sb.ran(), "nvcc ran with {key} {}", spaced.display());
    }
}

/// Issue 33, item 6: a `[target.host-compiler]` table in a native build's config was silently unused. The build still
/// takes its host compiler from `[host-compiler]`, and `explain` (and `--format json`, and the debug log) now says in
/// a note that the table is not used; a cross build, or a config without the table, gets no such note.
#[test]
fn issue_33_a_target_host_compiler_in_a_native_build_is_noted_unused() {
    let sb = Sandbox::new();
    let base = std::fs::read_to_string(&sb.config).unwrap();
    let section = "[target.host-compiler]\nstdenv = \"aarch64-linux-gnu-g++\"\n";
    let config = sb.write("native.toml", &format!("{base}{section}"));
    let explain = |config: &std::path::Path, format: &str| {
        let mut cmd = sb.wrapper_cli();
        cmd.env("NVCC_WRAPPER_CONFIG", config).args(["explain", "--format", format, "--", "-c", "k.cu"]);
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    let said = "note: `[target.host-compiler]` is not used: it names the compilers for a target of another CPU, and \
                this build's target, x86_64-linux, is this machine's; the host compiler comes from `[host-compiler]`";
    let text = explain(&config, "text");
    assert!(text.contains(said), "{text}");
    assert!(text.contains(&sb.ccbin()), "the native stdenv compiler is still the one: {text}");
    let plan: serde_json::Value = serde_json::from_str(&explain(&config, "json")).unwrap();
    let notes = plan["notes"].as_array().unwrap();
    assert!(notes.iter().any(|n| n["step"] == "facts" && n["code"] == "target-host-compiler-unused"), "{notes:?}");
    // The drop-in builds as before, with the native compiler and no warning.
    let out = sb.nvcc().env("NVCC_WRAPPER_CONFIG", &config).args(["-c", "k.cu"]).output().unwrap();
    assert!(out.status.success() && warnings(&out).is_empty(), "{}", stderr(&out));
    assert!(sb.recorded().args().contains(&sb.ccbin()), "{:?}", sb.recorded().args());
    // `[target] system` naming this machine: still native, still noted.
    let named = sb.write("named.toml", &format!("{base}[target]\nsystem = \"x86_64-linux\"\n{section}"));
    assert!(explain(&named, "text").contains(said));

    // Without the table, or in a cross build, no such note.
    assert!(!explain(&sb.config, "text").contains("[target.host-compiler]` is not used"));
    let (cross, _) = cross_sandbox(&["sbsa-linux"], SBSA);
    let mut cmd = cross.wrapper_cli();
    let out = cmd.env("NVCC_WRAPPER_CONFIG", &cross.config).args(["explain", "--", "-c", "k.cu"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stdout(&out).contains("is not used"), "{}", stdout(&out));
}

#[test]
fn a_configured_cross_compiler_that_is_not_there_is_named_when_none_is_on_path() {
    let (sb, _) = cross_sandbox(&["sbsa-linux"], SBSA);
    let text = std::fs::read_to_string(&sb.config).unwrap();
    let cc = text.split('"').find(|word| word.ends_with("aarch64-linux-gnu-g++")).unwrap().to_string();
    std::fs::remove_file(&cc).unwrap();
    // PATH holds the wrapper and the toolkit only: no TRIPLE-g++ of the machine's is found instead.
    let path = std::env::join_paths([&sb.wrapper_bin, &sb.cuda_bin]).unwrap();
    let out = sb.nvcc().env("PATH", path).args(["-c", "k.cu"]).output().unwrap();
    assert_eq!(out.status.code(), Some(69), "{}", stderr(&out));
    let said = stderr(&out);
    let lines: Vec<&str> = said.lines().collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    let want = format!(
        "nvcc-wrapper: error: no host compiler for the target sbsa-linux: `[target.host-compiler] stdenv` ({cc}, from \
         {}:5) is not an executable here, and none of aarch64-linux-gnu-g++, aarch64-unknown-linux-gnu-g++ is on PATH",
        sb.config.display()
    );
    assert_eq!(lines[0], want);
    assert!(
        lines[1].starts_with("help: name a compiler for the target that is there in `[target.host-compiler] stdenv`")
    );
    assert!(!sb.ran());
}
