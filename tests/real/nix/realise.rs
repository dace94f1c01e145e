//! Realisation: nix-build over this machine's real toolchains.

use super::*;

/// What tests/nix/realise.nix gets: the Nixpkgs lib, the cache, the wrapper cargo built, and the compilers' versions.
fn realise_args() -> Option<Vec<String>> {
    let lib = nixpkgs_lib()?;
    real_toolkit("11.8")?;
    real_toolkit("12.4")?;
    real_target_root("jetson-12.4")?;
    let version = |program: &str| -> Option<String> {
        let path = real_program(program)?;
        Some(ok(Command::new(path).arg("-dumpfullversion")).trim().to_string())
    };
    let args = vec![
        "--arg".into(),
        "nixpkgsLib".into(),
        path_str(&lib).into(),
        "--argstr".into(),
        "cache".into(),
        path_str(&cache_dir()).into(),
        "--argstr".into(),
        "wrapperExe".into(),
        WRAPPER.into(),
        "--argstr".into(),
        "gcc12Version".into(),
        version("g++-12")?,
        "--argstr".into(),
        "gcc11Version".into(),
        version("g++-11")?,
        "--argstr".into(),
        "crossGcc12Version".into(),
        version("aarch64-linux-gnu-g++-12")?,
    ];
    Some(args)
}

struct Realised {
    native: PathBuf,
    jetson: PathBuf,
}

/// `native` and `jetson` of tests/nix/realise.nix, built once for all tests.
fn realised() -> Option<&'static Realised> {
    static REALISED: OnceLock<Option<Realised>> = OnceLock::new();
    REALISED
        .get_or_init(|| {
            let args = realise_args()?;
            if !can_build() {
                return None;
            }
            let mut cmd = nix("nix-build")?;
            cmd.args(["realise.nix", "-A", "native", "-A", "jetson", "--no-out-link"])
                .args(["--option", "sandbox", "false", "--option", "build-users-group", ""])
                .args(&args);
            let text = ok(&mut cmd);
            let paths: Vec<PathBuf> = text.lines().map(PathBuf::from).collect();
            assert_eq!(paths.len(), 2, "{text}");
            Some(Realised { native: paths[0].clone(), jetson: paths[1].clone() })
        })
        .as_ref()
}

/// `nix-build --check` of a package's `passthru.tests.reproducible` (an object and two programs built by the wrapped
/// nvcc, natively and cross for Jetson), after building it once: Nix builds it again in another build directory, with another TMPDIR and other
/// process ids, and compares. With the wrapper's reproducible-builds flags it passes; with `reproducible = false`
/// Nix reports the output differs.
#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn nix_build_check_of_a_cuda_derivation_passes_with_reproducible_builds_and_fails_without() {
    let Some(args) = realise_args() else { return };
    if realised().is_none() {
        return;
    }
    let build = |attr: &str, check: bool| {
        let mut cmd = nix("nix-build").unwrap();
        cmd.args(["realise.nix", "-A", &format!("{attr}.passthru.tests.reproducible"), "--no-out-link"])
            .args(["--option", "sandbox", "false", "--option", "build-users-group", ""])
            .args(&args);
        if check {
            cmd.arg("--check");
        }
        run(&mut cmd)
    };
    for attr in ["native", "jetson", "native-not-reproducible"] {
        let first = build(attr, false);
        assert!(first.status.success(), "{attr}: {}", stderr(&first));
        let out = PathBuf::from(stdout(&first).trim());
        for file in ["hello.o", "hello", "hello-one-call"] {
            assert!(out.join(file).is_file(), "{attr}: no {file} in {}", out.display());
        }
        let checked = build(attr, true);
        let err = stderr(&checked);
        if attr != "native-not-reproducible" {
            assert!(checked.status.success(), "nix-build --check of {attr}: {err}");
        } else {
            assert!(!checked.status.success(), "nix-build --check of {attr} passed: the control shows nothing");
            assert!(err.contains("may not be deterministic"), "{attr}: {err}");
        }
    }
    // What makeNvccWrapper wrote: nothing for the default (on), `reproducible = false` for the control.
    let on = std::fs::read_to_string(realised().unwrap().native.join("share/nvcc-wrapper/config.toml")).unwrap();
    assert!(!on.contains("reproducible"), "{on}");
    let off = realise_eval("native-not-reproducible.configToml");
    assert!(off.as_str().unwrap().contains("\nreproducible = false\n"), "{off}");
}

/// The attribute of realise.nix, evaluated.
fn realise_eval(attr: &str) -> serde_json::Value {
    let args = realise_args().unwrap();
    let mut cmd = nix("nix-instantiate").unwrap();
    cmd.args(["--eval", "--strict", "--json", "realise.nix", "-A", attr]).args(&args);
    serde_json::from_str(&ok(&mut cmd)).unwrap()
}

/// `bin/nvcc` of a realised package compiling examples/hello.cu, traced: the first program it executes after itself
/// must be the real nvcc (so nothing was probed), with a clean environment.
fn compile_traced(package: &Path, dir: &Path, output: &str) -> Vec<String> {
    let strace = real_program("strace").unwrap();
    std::fs::write(dir.join("hello.cu"), SMOKE_CU).unwrap();
    let trace = dir.join(format!("{output}.strace"));
    let nvcc = package.join("bin/nvcc");
    let out = run(Command::new(strace)
        .args(["-f", "-qq", "-e", "trace=execve,execveat", "-o"])
        .arg(&trace)
        .arg(&nvcc)
        .args(["hello.cu", "-o", output])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .current_dir(dir));
    assert!(out.status.success(), "{} failed: {}{}", nvcc.display(), stdout(&out), stderr(&out));
    executed(&trace)
}

/// The config the package recorded: `nvcc` and the compilers' paths.
fn recorded(package: &Path) -> toml::Value {
    toml::from_str(&std::fs::read_to_string(package.join("share/nvcc-wrapper/config.toml")).unwrap()).unwrap()
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn realised_package_has_the_wrapper_as_nvcc_its_config_and_its_setup_hook() {
    let Some(r) = realised() else { return };
    let target = std::fs::read_link(r.native.join("bin/nvcc")).unwrap();
    assert!(target.ends_with("bin/nvcc-wrapper") && target.starts_with("/nix/store"), "{}", target.display());
    // The file in the store is the text evaluation gives.
    let text = std::fs::read_to_string(r.native.join("share/nvcc-wrapper/config.toml")).unwrap();
    assert_eq!(serde_json::Value::String(text), realise_eval("native.configToml"));
    // CMake's spelling of the capabilities, from the wrapper itself; the propagated real nvcc; the hook.
    let archs = std::fs::read_to_string(r.native.join("nix-support/cmake-cuda-architectures")).unwrap();
    assert_eq!(archs, "86-real;86-virtual\n");
    let nvcc = PathBuf::from(recorded(&r.native)["nvcc"].as_str().unwrap());
    let toolkit = nvcc.parent().unwrap().parent().unwrap();
    let propagated = std::fs::read_to_string(r.native.join("nix-support/propagated-build-inputs")).unwrap();
    assert_eq!(propagated.trim(), path_str(toolkit));
    let hook = std::fs::read_to_string(r.native.join("nix-support/setup-hook")).unwrap();
    assert!(hook.contains(&format!("export CUDACXX={}/bin/nvcc\n", r.native.display())), "{hook}");
    assert!(!hook.contains("@out@") && !hook.contains("@cudaToolkitRoot@"), "{hook}");
    // bin/nvcc-wrapper finds the package's config too (for explain and doctor on it), and reads no user file: a
    // wrapper made by Nix is pure, whatever the user's ~/.config holds (issue 33).
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".config/nvcc-wrapper")).unwrap();
    std::fs::write(home.path().join(".config/nvcc-wrapper/config.toml"), "[gpu]\nbogus = 1\n").unwrap();
    let shown = ok(Command::new(r.native.join("bin/nvcc-wrapper"))
        .args(["explain", "--", "-c", "k.cu"])
        .env_clear()
        .env("HOME", home.path())
        .env("PATH", "/usr/bin:/bin"));
    let found = shown.lines().find_map(|l| l.strip_prefix("config file:")).unwrap_or_else(|| panic!("{shown}"));
    let found = found.trim().strip_suffix(" (the installation's)").unwrap_or_else(|| panic!("{shown}"));
    let config = r.native.join("share/nvcc-wrapper/config.toml");
    assert_eq!(Path::new(found).canonicalize().unwrap(), config, "{shown}");
    // The user's file is named only as ignored whole (issue 39), never read.
    let named: Vec<&str> = shown.lines().filter(|l| l.contains(".config/nvcc-wrapper")).collect();
    assert!(named.len() == 1 && named[0].starts_with("  ignored: "), "{shown}");
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn nix_build_of_the_packages_passthru_tests_compiles_hello_and_runs_it_natively() {
    let Some(args) = realise_args() else { return };
    if realised().is_none() {
        return;
    }
    // What a Nixpkgs reviewer runs: `nix-build -A <package>.passthru.tests`.
    let mut cmd = nix("nix-build").unwrap();
    cmd.args(["realise.nix", "-A", "native.passthru.tests", "-A", "jetson.passthru.tests", "--no-out-link"])
        .args(["--option", "sandbox", "false", "--option", "build-users-group", ""])
        .args(&args);
    let text = ok(&mut cmd);
    let paths: Vec<&str> = text.lines().collect();
    assert_eq!(paths.len(), 6, "{text}");
    for (path, name) in paths.iter().zip([
        "-cuda_nvcc-wrapped-11.8-test-answers",
        "-cuda_nvcc-wrapped-11.8-test-hello",
        "-cuda_nvcc-wrapped-11.8-test-reproducible",
        "-aarch64-unknown-linux-gnu-cuda_nvcc-wrapped-12.4-test-answers",
        "-aarch64-unknown-linux-gnu-cuda_nvcc-wrapped-12.4-test-hello",
        "-aarch64-unknown-linux-gnu-cuda_nvcc-wrapped-12.4-test-reproducible",
    ]) {
        assert!(path.ends_with(name), "{name}:\n{text}");
    }
    // The packaged binary's answers are the file the evaluation looked up.
    let file = std::fs::read_to_string(Path::new(REPO).join(nvcc_wrapper::nix_answers::FILE)).unwrap();
    assert!(std::fs::read_to_string(paths[0]).unwrap() == file, "{}", paths[0]);
    // The native test ran the program it built; the cross one only built it.
    let ran = std::fs::read_to_string(paths[1]).unwrap();
    assert!(
        ran.starts_with("hello: built and started") || ran.starts_with("hello: ran on the GPU: 41 + 1 = 42"),
        "{ran}"
    );
    assert_eq!(std::fs::read_to_string(paths[4]).unwrap(), "");
    // The reproducible tests hold what `nix-build --check` compares (see the test after this one).
    for dir in [paths[2], paths[5]] {
        for file in ["hello.o", "hello", "hello-one-call"] {
            assert!(Path::new(dir).join(file).is_file(), "{dir}: no {file}");
        }
    }
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn realised_native_nvcc_compiles_links_and_runs_hello_with_gcc_11_and_gcc_12s_libstdcxx() {
    let Some(r) = realised() else { return };
    let dir = tempfile::tempdir().unwrap();
    let execs = compile_traced(&r.native, dir.path(), "hello");
    let config = recorded(&r.native);
    let real = config["nvcc"].as_str().unwrap();
    let candidate = config["host-compiler"]["candidates"][0]["path"].as_str().unwrap();
    assert_eq!(execs[0], r.native.join("bin/nvcc").to_str().unwrap());
    assert_eq!(execs[1], real, "the wrapper ran something before nvcc: {execs:?}");
    // nvcc then runs the candidate nvcc 11.8 accepts (GCC 11), never the stdenv's GCC 12.
    let stdenv = config["host-compiler"]["stdenv"]["path"].as_str().unwrap();
    assert!(execs.iter().any(|e| e == candidate), "{execs:?}");
    assert!(!execs.iter().any(|e| e == stdenv), "{execs:?}");
    run_smoke(&dir.path().join("hello"));
    // Linked against the stdenv's libstdc++, as recorded.
    let dynamic = ok(Command::new("readelf").arg("-d").arg(dir.path().join("hello")));
    let libstdcxx = config["host-compiler"]["stdenv"]["libstdcxx-dir"].as_str().unwrap();
    assert!(dynamic.contains(&format!("[{libstdcxx}]")), "{dynamic}");
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn realised_jetson_nvcc_cross_compiles_hello_for_aarch64_that_runs_under_qemu() {
    let Some(r) = realised() else { return };
    let (Some(qemu), Some(cuobjdump)) = (real_program("qemu-aarch64"), real_tool("cuobjdump")) else { return };
    let dir = tempfile::tempdir().unwrap();
    let execs = compile_traced(&r.jetson, dir.path(), "hello");
    let config = recorded(&r.jetson);
    assert_eq!(execs[1], config["nvcc"].as_str().unwrap(), "the wrapper ran something before nvcc: {execs:?}");
    let cross = config["target"]["host-compiler"]["stdenv"]["path"].as_str().unwrap();
    assert!(execs.iter().any(|e| e == cross), "{execs:?}");
    let program = dir.path().join("hello");
    let file = ok(Command::new("file").arg("-b").arg(&program));
    assert!(file.starts_with("ELF 64-bit") && file.contains("ARM aarch64"), "{file}");
    let out = run(Command::new(qemu).args(["-L", "/usr/aarch64-linux-gnu"]).arg(&program));
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).starts_with("hello: built and started"), "{}", stdout(&out));
    let want: BTreeSet<String> = ["sm_87".to_string(), "ptx sm_87".to_string()].into();
    assert_eq!(embedded(&cuobjdump, &program), want);
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn a_bad_capability_list_fails_instantiation_of_the_realised_cases_before_any_build() {
    let Some(args) = realise_args() else { return };
    for (attr, gencode) in [
        ("bad-jetson-on-x86_64", ["--cuda-version", "12.4", "--system", "x86_64-linux", "--forward-compat", "8.7"]),
        (
            "bad-capability-for-release",
            ["--cuda-version", "11.8", "--system", "x86_64-linux", "--forward-compat", "9.0a"],
        ),
    ] {
        let (error, help) = binary_refusal(&gencode);
        let mut cmd = nix("nix-instantiate").unwrap();
        cmd.args(["realise.nix", "-A", attr]).args(&args);
        let out = run(&mut cmd);
        let err = stderr(&out);
        assert!(!out.status.success(), "{attr} instantiated: {}", stdout(&out));
        assert!(err.contains(&format!("makeNvccWrapper: {error}\n")), "{attr}: {err}");
        let first = help.split("; ").next().unwrap();
        assert!(err.contains(&format!("help: {first}")), "{attr}: {err}");
    }
}

/// What the binary says when it refuses a request, as (error, help) without their `nvcc-wrapper: error: ` and
/// `help: ` prefixes: from `nvcc-wrapper gencode ARGS`, or from `explain` on a config.
fn binary_refusal(gencode: &[&str]) -> (String, String) {
    let out = run(Command::new(WRAPPER).arg("gencode").args(gencode).env_clear().env("PATH", "/usr/bin:/bin"));
    refusal_lines(&out)
}

fn refusal_lines(out: &Output) -> (String, String) {
    assert!(!out.status.success(), "accepted: {}", stdout(out));
    let text = stderr(out);
    let error = text.lines().find_map(|l| l.strip_prefix("nvcc-wrapper: error: ")).unwrap_or_else(|| panic!("{text}"));
    let help = text.lines().find_map(|l| l.strip_prefix("help: ")).unwrap_or_else(|| panic!("{text}"));
    (error.to_string(), help.to_string())
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn a_request_the_wrapper_refuses_fails_evaluation_with_its_words_under_both_steps() {
    let Some(lib) = nixpkgs_lib() else { return };
    let Some(toolkit) = real_toolkit("11.8") else { return };
    // The host-compiler case as the binary sees it: the config the overlay would write (nvcc 11.8, the stdenv's
    // GCC 14, no candidate), with nothing on PATH.
    let dir = tempfile::tempdir().unwrap();
    let gcc14 = dir.path().join("gcc-wrapper-14.2.0/bin/g++");
    empty_executable(&gcc14);
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "nvcc = \"{}\"\ncuda-version = \"11.8\"\n\n[host-compiler]\nstdenv = {{ path = \"{}\", family = \"gcc\", \
             target = \"x86_64-unknown-linux-gnu\", version = \"14.2.0\" }}\n\n[gpu]\ncapabilities = [\"8.6\"]\n",
            toolkit.join("bin/nvcc").display(),
            gcc14.display()
        ),
    )
    .unwrap();
    let empty = dir.path().join("empty-path");
    std::fs::create_dir(&empty).unwrap();
    let explained = run(Command::new(WRAPPER)
        .args(["explain", "--", "-c", "k.cu"])
        .env_clear()
        .env("PATH", &empty)
        .env("NVCC_WRAPPER_CONFIG", &config));
    let (compiler_error, _) = refusal_lines(&explained);
    let compiler_error = compiler_error.replace(path_str(dir.path()), "/stand-in");

    let flags = |v: &'static str, caps: &[&'static str]| -> Vec<&'static str> {
        [&["--cuda-version", v, "--system", "x86_64-linux", "--forward-compat"][..], caps].concat()
    };
    // (case of tests/nix/overlay.nix, the binary's error, its help's first clause, whether step 2's backendStdenv
    // refuses it too: the host compiler is the wrapped nvcc's to check)
    let mut cases = Vec::new();
    for (case, args) in [
        ("unknown-capability", flags("12.4", &["8.6", "9.5"])),
        ("capability-too-new", flags("11.8", &["9.0a"])),
        ("capability-dropped", flags("13.0", &["7.0", "8.6"])),
        ("jetson-on-x86_64", flags("12.4", &["8.6", "8.7"])),
        ("baseline-with-family", flags("13.0", &["8.6", "10.0f", "10.0"])),
    ] {
        let (error, help) = binary_refusal(&args);
        cases.push((case, error, help.split("; ").next().unwrap().to_string(), true));
    }
    // A release the tables do not know: the binary names its flag, Nix its argument.
    let (error, help) = binary_refusal(&["--cuda-version", "12.7", "8.6"]);
    assert!(error.starts_with("`--cuda-version 12.7` is"), "{error}");
    cases.push((
        "unknown-release",
        error.replace("`--cuda-version 12.7`", "`cudaMajorMinorVersion` \"12.7\""),
        help,
        true,
    ));
    cases.push(("host-compiler-out-of-range", compiler_error, "give one in `extraCandidates`".into(), false));

    for ((case, error, help, refused_by_backend), shape) in
        cases.iter().flat_map(|c| ["extensions", "modules"].map(|shape| (c, shape)))
    {
        // Step 2's wrapped nvcc reads the capabilities from flags, which current Nixpkgs derives from backendStdenv:
        // either may speak first, with the same words.
        let backend = "backendStdenv (nix/overlay-backend-stdenv.nix)";
        for (attr, who) in [
            ("step1", &["makeNvccWrapper"][..]),
            ("step2.cudaNvcc", &["makeNvccWrapper", backend][..]),
            ("step2.backendStdenv", &[backend][..]),
        ] {
            let mut cmd = nix("nix-instantiate").unwrap();
            cmd.args(["--eval", "--strict", "overlay.nix", "-A", &format!("refusals.{shape}.{case}.{attr}")]).args([
                "--arg",
                "nixpkgsLib",
                path_str(&lib),
            ]);
            let out = run(&mut cmd);
            let err = stderr(&out);
            if attr == "step2.backendStdenv" && !refused_by_backend {
                assert_eq!(ok(&mut cmd).trim(), "\"gcc-wrapper-14.2.0\"", "{case}: {err}");
                continue;
            }
            assert!(!out.status.success(), "{case} {attr} evaluated: {}", stdout(&out));
            assert!(
                who.iter().any(|who| err.contains(&format!("error: {who}: {error}\n"))),
                "{case} {attr}: want {error:?} in:\n{err}"
            );
            assert!(err.contains(&format!("help: {help}")), "{case} {attr}: want {help:?} in:\n{err}");
        }
    }
}

// ---------------------------------------------------------------------------------------------------------------
// The setup hook, in a shell with Nixpkgs' hook helpers stood in, and CMake through it.
// ---------------------------------------------------------------------------------------------------------------

/// Nixpkgs' helpers the hook calls (setup.sh's addToSearchPathWithCustomDelimiter and appendToVar, for variables
/// that are strings as without structuredAttrs), and the compiler step of Nixpkgs' setup-cuda-hook as it behaves:
/// skipped under dontSetupCUDAToolkitCompilers, else it fixes the host compiler.
const HOOK_HELPERS: &str = r#"
set -eu
addToSearchPathWithCustomDelimiter() { local d="$1" v="$2" dir="$3"; [[ -d $dir ]] && export "$v=${!v:+${!v}$d}$dir"; return 0; }
appendToVar() { local v="$1"; shift; declare -g "$v=${!v:+${!v} }$*"; }
preConfigureHooks=()
setupCUDAToolkitCompilers() {
    [[ -n ${dontSetupCUDAToolkitCompilers-} ]] && return 0
    appendToVar cmakeFlags "-DCMAKE_CUDA_HOST_COMPILER=/backend/bin/c++"
    export CUDAHOSTCXX=/backend/bin/c++
}
hostOffset=-1
targetOffset=0
"#;

/// Source the hook (after `before`), run the preConfigure hooks with Nixpkgs' compiler step first, and print what a
/// configure phase sees.
fn hook_env(package: &Path, before: &str) -> String {
    let script = format!(
        "{HOOK_HELPERS}{before}\nsource {hook}\npreConfigureHooks=(setupCUDAToolkitCompilers \"${{preConfigureHooks[@]}}\")\n\
         for h in \"${{preConfigureHooks[@]}}\"; do $h; done\n\
         printf 'CUDACXX=%s\\nNVCC=%s\\nCUDAToolkit_ROOT=%s\\nCUDAHOSTCXX=%s\\ncmakeFlags=%s\\nCUDAARCHS=%s\\nNVCC_PREPEND_FLAGS=%s\\n' \
           \"${{CUDACXX-}}\" \"${{NVCC-}}\" \"${{CUDAToolkit_ROOT-}}\" \"${{CUDAHOSTCXX-unset}}\" \"${{cmakeFlags-}}\" \
           \"${{CUDAARCHS-unset}}\" \"${{NVCC_PREPEND_FLAGS-}}\"\n\
         env | grep -E '^(CUDACXX|CUDAARCHS|NVCC_PREPEND_FLAGS|NVCC_WRAPPER_COMPRESS_FATBIN)=' | sort | sed 's/^/exported /'\n",
        hook = package.join("nix-support/setup-hook").display()
    );
    ok(Command::new("bash").arg("-c").arg(script).env_clear().env("PATH", "/usr/bin:/bin"))
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn setup_hook_exports_the_wrapped_nvcc_and_keeps_nixpkgs_hook_off_the_host_compiler() {
    let Some(r) = realised() else { return };
    let config = recorded(&r.native);
    let toolkit = Path::new(config["nvcc"].as_str().unwrap()).parent().unwrap().parent().unwrap();
    let nvcc = r.native.join("bin/nvcc");
    let seen = hook_env(&r.native, "");
    let want = format!(
        "CUDACXX={nvcc}\nNVCC={nvcc}\nCUDAToolkit_ROOT={root}\nCUDAHOSTCXX=unset\n\
         cmakeFlags=-DCMAKE_CUDA_ARCHITECTURES=86-real;86-virtual\nCUDAARCHS=86-real;86-virtual\n\
         NVCC_PREPEND_FLAGS=\n\
         exported CUDAARCHS=86-real;86-virtual\nexported CUDACXX={nvcc}\n",
        nvcc = nvcc.display(),
        root = toolkit.display()
    );
    assert_eq!(seen, want);

    // A derivation that names its architectures keeps them, whichever way it says them; one that opts out of
    // compression (issue 14: the wrapper compresses, the hook adds no flag) turns the wrapper's compression off.
    for before in [
        "cmakeFlags='-DFOO=1 -DCMAKE_CUDA_ARCHITECTURES=75'",
        "cmakeFlags='-DCMAKE_CUDA_ARCHITECTURES:STRING=75'",
        "cmakeFlagsArray=(-DCMAKE_CUDA_ARCHITECTURES=75)",
        "export CUDAARCHS=75",
    ] {
        let seen = hook_env(&r.native, &format!("{before}\ndontCompressFatbin=1"));
        assert!(!seen.contains("86-real"), "{before}: {seen}");
        assert!(seen.contains("NVCC_PREPEND_FLAGS=\n"), "{before}: {seen}");
        assert!(seen.contains("exported NVCC_WRAPPER_COMPRESS_FATBIN=0\n"), "{before}: {seen}");
        assert!(seen.contains("CUDAHOSTCXX=unset"), "{before}: {seen}");
    }

    // Outside nativeBuildInputs (a buildInputs entry) it does nothing, and Nixpkgs' hook is left as it was.
    let seen = hook_env(&r.native, "hostOffset=0; targetOffset=1");
    assert!(seen.starts_with("CUDACXX=\nNVCC=\nCUDAToolkit_ROOT=\nCUDAHOSTCXX=/backend/bin/c++\n"), "{seen}");
}

/// NixOS/nixpkgs#545092's drafted cuda_nvcc hook, for the host role, as it behaves where it is sourced: CUDAHOSTCXX
/// and NVCC_CCBIN exported, each as the other or the backend compiler when unset.
const DRAFT_HOOK: &str = r#"
export CUDAHOSTCXX="${CUDAHOSTCXX:-${NVCC_CCBIN:-/backend/bin/c++}}"
export NVCC_CCBIN="${NVCC_CCBIN:-$CUDAHOSTCXX}"
"#;

/// Beside the drafted hook (issue 58, item 3), sourced after this package's (the unwrapped nvcc, whose hook it is,
/// is the package's propagated input): what that hook exported is taken back at configure, with a line saying so, and
/// the wrapper chooses nvcc's host compiler; what the derivation set itself is kept, said, and the wrapper adds none.
#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn setup_hook_takes_back_the_host_compiler_the_drafted_cuda_nvcc_hook_exports() {
    let Some(r) = realised() else { return };
    let config = r.native.join("share/nvcc-wrapper/config.toml");
    let run_with = |before: &str| {
        let script = format!(
            "{HOOK_HELPERS}{before}\nsource {hook}\n{DRAFT_HOOK}\nfor h in \"${{preConfigureHooks[@]}}\"; do $h; done\n\
             printf 'CUDAHOSTCXX=%s\\nNVCC_CCBIN=%s\\n' \"${{CUDAHOSTCXX-unset}}\" \"${{NVCC_CCBIN-unset}}\"\n\
             NVCC_WRAPPER_CONFIG={config} {wrapper} explain -- -c k.cu | grep '/bin/nvcc '\n",
            hook = r.native.join("nix-support/setup-hook").display(),
            config = config.display(),
            wrapper = r.native.join("bin/nvcc-wrapper").display(),
        );
        let out = run(Command::new("bash").arg("-c").arg(script).env_clear().env("PATH", "/usr/bin:/bin"));
        assert!(out.status.success(), "{before}: {}{}", stdout(&out), stderr(&out));
        (stdout(&out), stderr(&out))
    };
    // Nothing set by the derivation: both taken back, and the wrapper's choice runs (nvcc 11.8 takes no GCC 12, the
    // stdenv's: the recorded GCC 11).
    let (seen, said) = run_with("");
    let chosen = recorded(&r.native)["host-compiler"]["candidates"][0]["path"].as_str().unwrap().to_string();
    assert!(seen.starts_with("CUDAHOSTCXX=unset\nNVCC_CCBIN=unset\n"), "{seen}");
    assert!(seen.contains(&format!(" -ccbin={chosen} ")), "{seen}");
    for var in ["CUDAHOSTCXX", "NVCC_CCBIN"] {
        let line = format!(
            "nvcc-wrapper's setup hook: {var}=/backend/bin/c++ was exported by a setup hook sourced after it (Nixpkgs' \
             cuda_nvcc's, NixOS/nixpkgs#545092): taken back, so that nvcc-wrapper chooses nvcc's host compiler; set \
             {var} in the derivation to choose one yourself\n"
        );
        assert!(said.contains(&line), "{said}");
    }
    // The derivation's own NVCC_CCBIN: kept and said; the CUDAHOSTCXX the draft made of it taken back. (nvcc 11.8
    // ignores NVCC_CCBIN, honoured from 12.5, so the wrapper still chooses, as the drop-in's own rule says.)
    let (seen, said) = run_with("export NVCC_CCBIN=/mine/bin/g++");
    assert!(seen.starts_with("CUDAHOSTCXX=unset\nNVCC_CCBIN=/mine/bin/g++\n"), "{seen}");
    assert!(seen.contains(&format!(" -ccbin={chosen} ")), "{seen}");
    let kept = "NVCC_CCBIN=/mine/bin/g++ is the derivation's: kept, as the caller's choice of host compiler";
    assert!(said.contains(kept), "{said}");
    assert!(said.contains("CUDAHOSTCXX=/mine/bin/g++ was exported by a setup hook sourced after it"), "{said}");
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn setup_hook_hands_nvcc_the_library_directories_its_archiver_and_the_drafts_fatbin_opt_out() {
    let Some(r) = realised() else { return };
    let script = format!(
        "{HOOK_HELPERS}NIX_LDFLAGS='-L/lib/a -rpath /run/x -L/lib/b'\nNIX_CUDA_DONT_COMPRESS_FATBINS=1\n\
         source {hook}\nfor h in \"${{preConfigureHooks[@]}}\"; do $h; done\n\
         printf '%s\\n' \"$NVCC_APPEND_FLAGS\" \"$NVCC_WRAPPER_COMPRESS_FATBIN\" \"$PATH\"\n",
        hook = r.jetson.join("nix-support/setup-hook").display()
    );
    let seen = ok(Command::new("bash").arg("-c").arg(script).env_clear().env("PATH", "/usr/bin:/bin"));
    let lines: Vec<&str> = seen.lines().collect();
    // The -L of NIX_LDFLAGS, for nvlink; the draft's opt-out; the package's `ar` last on PATH.
    assert_eq!(lines[0], "-L/lib/a -L/lib/b", "{seen}");
    assert_eq!(lines[1], "0", "{seen}");
    let private = r.jetson.join("libexec/nvcc-wrapper/bin");
    assert_eq!(lines[2], format!("/usr/bin:/bin:{}", private.display()), "{seen}");
    // For Jetson it is the target's (aarch64) archiver, from the cross stdenv's bintools.
    let ar = private.join("ar").canonicalize().unwrap();
    assert_eq!(ar, Path::new("/usr/bin/aarch64-linux-gnu-ar").canonicalize().unwrap());
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn a_device_library_named_only_in_nix_ldflags_links_through_the_hook() {
    let Some(r) = realised() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("libdir")).unwrap();
    std::fs::write(d.join("dev.cu"), "__device__ int twice(int x) { return 2 * x; }\n").unwrap();
    std::fs::write(
        d.join("main.cu"),
        "#include <cstdio>\nextern __device__ int twice(int);\n__global__ void k(int *v) { *v = twice(*v); }\n\
         int main() { std::printf(\"linked\\n\"); return 0; }\n",
    )
    .unwrap();
    let nvcc = r.native.join("bin/nvcc");
    ok(Command::new(&nvcc)
        .args(["-rdc=true", "-lib", "dev.cu", "-o", "libdir/libdev.a"])
        .current_dir(d)
        .env_clear()
        .env("PATH", "/usr/bin:/bin"));
    // As in a Nix build: the library's directory is in NIX_LDFLAGS, which only cc-wrapper's host link reads.
    let link = |with_hook: bool| {
        let hook = if with_hook {
            format!(
                "source {}\nfor h in \"${{preConfigureHooks[@]}}\"; do $h; done\n",
                r.native.join("nix-support/setup-hook").display()
            )
        } else {
            String::new()
        };
        let script = format!(
            "{HOOK_HELPERS}NIX_LDFLAGS=-L{libdir}\n{hook}{nvcc} -rdc=true main.cu -ldev -o main && ./main\n",
            libdir = d.join("libdir").display(),
            nvcc = nvcc.display()
        );
        run(Command::new("bash").arg("-c").arg(script).current_dir(d).env_clear().env("PATH", "/usr/bin:/bin"))
    };
    // Without the hook nvlink does not find it, and says nothing of -ldev: only the missing symbol.
    let without = link(false);
    assert!(!without.status.success(), "{}", stdout(&without));
    assert!(stderr(&without).contains("nvlink error   : Undefined reference to '_Z5twicei'"), "{}", stderr(&without));
    let with = link(true);
    assert!(with.status.success(), "{}{}", stdout(&with), stderr(&with));
    assert_eq!(stdout(&with), "linked\n");
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn cmake_builds_the_example_through_the_setup_hook_with_the_wrapped_nvcc() {
    let Some(r) = realised() else { return };
    let Some(cmake) = real_program("cmake") else { return };
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::copy(Path::new(REPO).join("nix/examples/hello-cmake/CMakeLists.txt"), src.join("CMakeLists.txt")).unwrap();
    std::fs::write(src.join("hello.cu"), SMOKE_CU).unwrap();
    // The stdenv compiler (GCC 12) as CMake's C++ compiler; nvcc 11.8 rejects it as a host compiler, so the build
    // works only if the wrapper chooses GCC 11 at every nvcc call, CMake's compiler detection included.
    let cxx = recorded(&r.native)["host-compiler"]["stdenv"]["path"].as_str().unwrap().to_string();
    let script = format!(
        "{HOOK_HELPERS}\nsource {hook}\nfor h in \"${{preConfigureHooks[@]}}\"; do $h; done\n\
         {cmake} -S {src} -B {build} $cmakeFlags -DCMAKE_CXX_COMPILER={cxx} >&2\n\
         grep -E '^CMAKE_CUDA_(COMPILER|ARCHITECTURES|HOST_COMPILER)[:=]' {build}/CMakeCache.txt\n\
         {cmake} --build {build} >&2\n",
        hook = r.native.join("nix-support/setup-hook").display(),
        cmake = cmake.display(),
        src = src.display(),
        build = dir.path().join("build").display(),
    );
    let cache = ok(Command::new("bash").arg("-c").arg(script).env_clear().env("PATH", "/usr/bin:/bin"));
    assert!(cache.contains(&format!("CMAKE_CUDA_COMPILER:FILEPATH={}/bin/nvcc", r.native.display())), "{cache}");
    assert!(cache.contains("CMAKE_CUDA_ARCHITECTURES:STRING=86-real;86-virtual"), "{cache}");
    assert!(!cache.contains("CMAKE_CUDA_HOST_COMPILER:FILEPATH=/"), "{cache}");
    run_smoke(&dir.path().join("build/hello"));
}

/// Issue 31: a derivation that sets `nvccWrapperJobserver` runs its Ninja build phase under the wrapper's jobserver
/// of `$NIX_BUILD_CORES` slots (Ninja without -j, a client of it); one that does not keeps Nixpkgs' own phase.
#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn setup_hook_runs_an_opted_in_ninja_build_under_the_wrappers_jobserver() {
    let Some(r) = realised() else { return };
    let dir = tempfile::tempdir().unwrap();
    // A stand-in `ninja` that says what it was given.
    let ninja = dir.path().join("ninja");
    std::fs::write(&ninja, "#!/bin/sh\necho \"ninja $* | MAKEFLAGS=$MAKEFLAGS\"\n").unwrap();
    std::fs::set_permissions(&ninja, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let run = |opt_in: &str| {
        let script = format!(
            "{HOOK_HELPERS}runHook() {{ :; }}\necho() {{ builtin echo \"$@\"; }}\necho_cmd() {{ :; }}\n\
             echoCmd() {{ :; }}\nbuildPhase=ninjaBuildPhase\nenableParallelBuilding=1\nNIX_BUILD_CORES=6\n\
             ninjaFlags='-v'\n{opt_in}\nsource {hook}\nfor h in \"${{preConfigureHooks[@]}}\"; do $h; done\n\
             builtin echo \"buildPhase=$buildPhase\"\n\
             [[ $buildPhase == ninjaBuildPhase ]] || \"$buildPhase\"\n",
            hook = r.native.join("nix-support/setup-hook").display()
        );
        ok(Command::new("bash")
            .arg("-c")
            .arg(script)
            .env_clear()
            .env("PATH", format!("{}:/usr/bin:/bin", dir.path().display()))
            .env("TMPDIR", dir.path()))
    };
    let seen = run("");
    assert_eq!(seen, "buildPhase=ninjaBuildPhase\n");
    let seen = run("nvccWrapperJobserver=1");
    let lines: Vec<&str> = seen.lines().collect();
    assert_eq!(lines[0], "buildPhase=nvccWrapperNinjaBuildPhase", "{seen}");
    assert!(lines[1].starts_with("ninja -v | MAKEFLAGS=-j6 --jobserver-auth=fifo:"), "{seen}");
}
