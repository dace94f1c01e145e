//! Evaluation: the config makeNvccWrapper writes for each case, and the wrapper's plan on it.

use super::*;

/// The directory the evaluated cases' paths point into, with host-only views of the real toolkits as `cuda_nvcc-X.Y`
/// (a store-path nvcc has no targets/ of another CPU) and, once the configs are known, empty executables for every
/// compiler they name: the wrapper must never run one, since every fact about it is recorded.
struct Evaluated {
    root: PathBuf,
    configs: serde_json::Value,
}

fn evaluated() -> Option<&'static Evaluated> {
    static EVALUATED: OnceLock<Option<Evaluated>> = OnceLock::new();
    EVALUATED
        .get_or_init(|| {
            let lib = nixpkgs_lib()?;
            let toolkits = [real_toolkit("12.4")?, real_toolkit("13.0")?];
            for name in ["jetson-12.4", "sbsa-13.0", "ppc64le-12.4"] {
                real_target_root(name)?;
            }
            let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("nix-eval");
            let _ = std::fs::remove_dir_all(&root);
            std::fs::create_dir_all(&root).unwrap();
            for toolkit in &toolkits {
                let release = toolkit.file_name().unwrap().to_str().unwrap();
                host_only_view(toolkit, &root.join(format!("cuda_nvcc-{release}")));
            }
            let cache = cache_dir();
            let configs = eval_json(
                "eval.nix",
                None,
                &[("nixpkgsLib", path_str(&lib))],
                &[("root", path_str(&root)), ("cache", path_str(&cache))],
            )?;
            for (_, text) in configs.as_object().unwrap() {
                let config: toml::Value = toml::from_str(text.as_str().unwrap()).unwrap();
                for section in [config.get("host-compiler"), config.get("target").and_then(|t| t.get("host-compiler"))]
                    .into_iter()
                    .flatten()
                {
                    let compilers = section
                        .get("stdenv")
                        .into_iter()
                        .chain(section.get("candidates").and_then(|c| c.as_array()).into_iter().flatten());
                    for compiler in compilers {
                        empty_executable(Path::new(compiler["path"].as_str().unwrap()));
                    }
                }
            }
            Some(Evaluated { root, configs })
        })
        .as_ref()
}

/// A toolkit as a Nix store path holds it: bin/ of per-file symlinks (nvcc takes its TOP from argv[0]), nvvm and the
/// host's targets/x86_64-linux, and no targets/ of another CPU.
fn host_only_view(toolkit: &Path, view: &Path) {
    std::fs::create_dir_all(view.join("bin")).unwrap();
    std::fs::create_dir_all(view.join("targets")).unwrap();
    for entry in std::fs::read_dir(toolkit.join("bin")).unwrap() {
        let entry = entry.unwrap();
        std::os::unix::fs::symlink(entry.path(), view.join("bin").join(entry.file_name())).unwrap();
    }
    std::os::unix::fs::symlink(toolkit.join("nvvm"), view.join("nvvm")).unwrap();
    std::os::unix::fs::symlink(toolkit.join("targets/x86_64-linux"), view.join("targets/x86_64-linux")).unwrap();
}

/// The case's config, with the test's directories written as ROOT and CACHE.
fn config_text(ev: &Evaluated, case: &str) -> String {
    let text = ev.configs[case].as_str().unwrap_or_else(|| panic!("no case {case}"));
    text.replace(path_str(&ev.root), "ROOT").replace(path_str(&cache_dir()), "CACHE")
}

/// `nvcc-wrapper explain -- hello.cu -o hello` on the case's config, traced: the command it would run, as words
/// with ROOT and CACHE, after checking that the wrapper executed nothing (the one execve is its own start).
fn explained(ev: &Evaluated, case: &str) -> Option<Vec<String>> {
    let strace = real_program("strace")?;
    let config = ev.root.join(format!("{case}.toml"));
    std::fs::write(&config, ev.configs[case].as_str().unwrap()).unwrap();
    let trace = ev.root.join(format!("{case}.strace"));
    let out = run(Command::new(&strace)
        .args(["-f", "-qq", "-e", "trace=execve,execveat", "-o"])
        .arg(&trace)
        .arg(WRAPPER)
        .args(["explain", "--", "hello.cu", "-o", "hello"])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("NVCC_WRAPPER_CONFIG", &config)
        .current_dir(&ev.root));
    let text = stdout(&out);
    assert!(out.status.success(), "{case}: explain failed: {text}{}", stderr(&out));
    assert!(!text.contains("warning") && stderr(&out).is_empty(), "{case}: {text}{}", stderr(&out));
    let execs = executed(&trace);
    assert_eq!(execs, [WRAPPER.to_string()], "{case}: the wrapper ran a program while planning:\n{text}");
    let runs = text.lines().find_map(|l| l.strip_prefix("runs:")).unwrap_or_else(|| panic!("{case}: {text}"));
    let shown = runs.trim().replace(path_str(&ev.root), "ROOT").replace(path_str(&cache_dir()), "CACHE");
    // explain names nvcc's process id `<pid>`: the call it describes runs under its own.
    Some(shlex::split(&shown).unwrap())
}

fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(String::from).collect()
}

const HEADER: &str = "# Written by makeNvccWrapper: what Nixpkgs knows, recorded so that nvcc-wrapper probes nothing.
# The wrapper makes every choice from these facts at each call: see `nvcc-wrapper explain -- ARGS`.
";

fn check_case(case: &str, config: &str, runs: &str) {
    let Some(ev) = evaluated() else { return };
    assert_eq!(config_text(ev, case), format!("{HEADER}{config}"), "{case}: config.toml");
    let Some(plan) = explained(ev, case) else { return };
    assert_eq!(plan, words(runs), "{case}: the command explain shows");
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn eval_native_stdenv_in_range_records_one_compiler_and_nvcc_gets_it() {
    check_case(
        "native-in-range",
        r#"nvcc = "ROOT/cuda_nvcc-12.4/bin/nvcc"
cuda-version = "12.4"

[host-compiler]
stdenv = { path = "ROOT/gcc-wrapper-13.3.0/bin/g++", family = "gcc", gcc-install-dir = "ROOT/gcc-13.3.0/lib/gcc/x86_64-unknown-linux-gnu/13.3.0", libstdcxx-dir = "ROOT/gcc-13.3.0-lib/lib", target = "x86_64-unknown-linux-gnu", version = "13.3.0" }

[gpu]
capabilities = ["8.6", "8.9"]
forward-compat = true
arch-flags = "respect"
"#,
        "ROOT/cuda_nvcc-12.4/bin/nvcc -ccbin=ROOT/gcc-wrapper-13.3.0/bin/g++ \
         -gencode=arch=compute_86,code=sm_86 -gencode=arch=compute_89,code=sm_89 \
         -gencode=arch=compute_89,code=compute_89 -Xfatbin=-compress-all \
         -Xcompiler=-ffile-prefix-map=/tmp/tmpxft_<pid>_=tmpxft_ -Xcudafe=--orig_src_path_name=hello.cu \
         -Xcompiler=-frandom-seed=hello hello.cu -o hello",
    );
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn eval_gcc_14_stdenv_with_nvcc_12_4_gets_gcc_13_and_keeps_gcc_14s_libstdcxx() {
    check_case(
        "native-stdenv-too-new",
        r#"nvcc = "ROOT/cuda_nvcc-12.4/bin/nvcc"
cuda-version = "12.4"

[host-compiler]
stdenv = { path = "ROOT/gcc-wrapper-14.2.0/bin/g++", family = "gcc", gcc-install-dir = "ROOT/gcc-14.2.0/lib/gcc/x86_64-unknown-linux-gnu/14.2.0", libstdcxx-dir = "ROOT/gcc-14.2.0-lib/lib", target = "x86_64-unknown-linux-gnu", version = "14.2.0" }
candidates = [{ path = "ROOT/gcc-wrapper-13.3.0/bin/g++", family = "gcc", target = "x86_64-unknown-linux-gnu", version = "13.3.0" }]

[gpu]
capabilities = ["8.6", "9.0a"]
forward-compat = true
arch-flags = "respect"
"#,
        "ROOT/cuda_nvcc-12.4/bin/nvcc -ccbin=ROOT/gcc-wrapper-13.3.0/bin/g++ \
         -LROOT/gcc-14.2.0/lib/gcc/x86_64-unknown-linux-gnu/14.2.0 -Xlinker=-rpath,ROOT/gcc-14.2.0-lib/lib \
         -gencode=arch=compute_86,code=sm_86 -gencode=arch=compute_90a,code=sm_90a \
         -gencode=arch=compute_90,code=compute_90 -Xfatbin=-compress-all \
         -Xcompiler=-ffile-prefix-map=/tmp/tmpxft_<pid>_=tmpxft_ -Xcudafe=--orig_src_path_name=hello.cu \
         -Xcompiler=-frandom-seed=hello hello.cu -o hello",
    );
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn eval_clang_stdenv_gets_the_clang_nvcc_accepts_with_the_gcc_install_of_its_libstdcxx() {
    check_case(
        "clang-stdenv",
        r#"nvcc = "ROOT/cuda_nvcc-12.4/bin/nvcc"
cuda-version = "12.4"

[host-compiler]
stdenv = { path = "ROOT/clang-wrapper-19.1.7/bin/clang++", family = "clang", gcc-install-dir = "ROOT/gcc-14.2.0/lib/gcc/x86_64-unknown-linux-gnu/14.2.0", libstdcxx-dir = "ROOT/gcc-14.2.0-lib/lib", target = "x86_64-unknown-linux-gnu", version = "19.1.7" }
candidates = [{ path = "ROOT/gcc-wrapper-13.3.0/bin/g++", family = "gcc", target = "x86_64-unknown-linux-gnu", version = "13.3.0" }, { path = "ROOT/clang-wrapper-17.0.6/bin/clang++", family = "clang", target = "x86_64-unknown-linux-gnu", version = "17.0.6" }]

[gpu]
capabilities = ["8.9"]
forward-compat = false
arch-flags = "respect"
"#,
        "ROOT/cuda_nvcc-12.4/bin/nvcc -ccbin=ROOT/clang-wrapper-17.0.6/bin/clang++ \
         -Xcompiler=--gcc-install-dir=ROOT/gcc-14.2.0/lib/gcc/x86_64-unknown-linux-gnu/14.2.0 \
         -Xlinker=-rpath,ROOT/gcc-14.2.0-lib/lib -gencode=arch=compute_89,code=sm_89 \
         -Xfatbin=-compress-all \
         -Xcudafe=--orig_src_path_name=hello.cu -Xcompiler=-frandom-seed=hello hello.cu -o hello",
    );
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn eval_jetson_cross_records_the_target_its_cuda_root_and_cuda_compat() {
    check_case(
        "jetson-cross",
        r#"nvcc = "ROOT/cuda_nvcc-12.4/bin/nvcc"
cuda-version = "12.4"

[gpu]
capabilities = ["8.7"]
forward-compat = true
arch-flags = "respect"

[target]
system = "aarch64-linux"
platform = "jetson"
cuda-root = "CACHE/target-roots/jetson-12.4"
cuda-compat = "CACHE/target-roots/jetson-12.4/lib/stubs"

[target.host-compiler]
stdenv = { path = "ROOT/aarch64-unknown-linux-gnu-gcc-wrapper-14.2.0/bin/aarch64-unknown-linux-gnu-g++", family = "gcc", gcc-install-dir = "ROOT/aarch64-unknown-linux-gnu-gcc-14.2.0/lib/gcc/aarch64-unknown-linux-gnu/14.2.0", libstdcxx-dir = "ROOT/aarch64-unknown-linux-gnu-gcc-14.2.0-lib/aarch64-unknown-linux-gnu/lib", target = "aarch64-unknown-linux-gnu", version = "14.2.0" }
candidates = [{ path = "ROOT/aarch64-unknown-linux-gnu-gcc-wrapper-13.3.0/bin/aarch64-unknown-linux-gnu-g++", family = "gcc", target = "aarch64-unknown-linux-gnu", version = "13.3.0" }]
"#,
        "ROOT/cuda_nvcc-12.4/bin/nvcc -Xlinker=-rpath,CACHE/target-roots/jetson-12.4/lib/stubs \
         -ccbin=ROOT/aarch64-unknown-linux-gnu-gcc-wrapper-13.3.0/bin/aarch64-unknown-linux-gnu-g++ \
         -LROOT/aarch64-unknown-linux-gnu-gcc-14.2.0/lib/gcc/aarch64-unknown-linux-gnu/14.2.0 \
         -Xlinker=-rpath,ROOT/aarch64-unknown-linux-gnu-gcc-14.2.0-lib/aarch64-unknown-linux-gnu/lib \
         -ICACHE/target-roots/jetson-12.4/include -LCACHE/target-roots/jetson-12.4/lib \
         -gencode=arch=compute_87,code=sm_87 -gencode=arch=compute_87,code=compute_87 \
         -Xfatbin=-compress-all \
         -Xcompiler=-ffile-prefix-map=/tmp/tmpxft_<pid>_=tmpxft_ -Xcudafe=--orig_src_path_name=hello.cu \
         -Xcompiler=-frandom-seed=hello hello.cu -o hello",
    );
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn eval_sbsa_cross_with_nvcc_13_0_builds_grace_hopper_and_thor() {
    check_case(
        "sbsa-cross",
        r#"nvcc = "ROOT/cuda_nvcc-13.0/bin/nvcc"
cuda-version = "13.0"

[gpu]
capabilities = ["9.0a", "11.0"]
forward-compat = true
arch-flags = "respect"

[target]
system = "aarch64-linux"
platform = "sbsa"
cuda-root = "CACHE/target-roots/sbsa-13.0"

[target.host-compiler]
stdenv = { path = "ROOT/aarch64-unknown-linux-gnu-gcc-wrapper-14.2.0/bin/aarch64-unknown-linux-gnu-g++", family = "gcc", gcc-install-dir = "ROOT/aarch64-unknown-linux-gnu-gcc-14.2.0/lib/gcc/aarch64-unknown-linux-gnu/14.2.0", libstdcxx-dir = "ROOT/aarch64-unknown-linux-gnu-gcc-14.2.0-lib/aarch64-unknown-linux-gnu/lib", target = "aarch64-unknown-linux-gnu", version = "14.2.0" }
"#,
        "ROOT/cuda_nvcc-13.0/bin/nvcc \
         -ccbin=ROOT/aarch64-unknown-linux-gnu-gcc-wrapper-14.2.0/bin/aarch64-unknown-linux-gnu-g++ \
         -ICACHE/target-roots/sbsa-13.0/include -isystem=CACHE/target-roots/sbsa-13.0/include/cccl \
         -LCACHE/target-roots/sbsa-13.0/lib \
         -gencode=arch=compute_90a,code=sm_90a -gencode=arch=compute_110,code=sm_110 \
         -gencode=arch=compute_110,code=compute_110 --compress-mode=size \
         -Xcompiler=-ffile-prefix-map=/tmp/tmpxft_<pid>_=tmpxft_ -Xcudafe=--orig_src_path_name=hello.cu \
         --frandom-seed=hello hello.cu -o hello",
    );
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn eval_ppc64le_cross_with_nvcc_12_4_gets_the_cross_gcc_13() {
    check_case(
        "ppc64le-cross",
        r#"nvcc = "ROOT/cuda_nvcc-12.4/bin/nvcc"
cuda-version = "12.4"

[gpu]
capabilities = ["7.0"]
forward-compat = true
arch-flags = "respect"

[target]
system = "powerpc64le-linux"
cuda-root = "CACHE/target-roots/ppc64le-12.4"

[target.host-compiler]
stdenv = { path = "ROOT/powerpc64le-unknown-linux-gnu-gcc-wrapper-14.2.0/bin/powerpc64le-unknown-linux-gnu-g++", family = "gcc", gcc-install-dir = "ROOT/powerpc64le-unknown-linux-gnu-gcc-14.2.0/lib/gcc/powerpc64le-unknown-linux-gnu/14.2.0", libstdcxx-dir = "ROOT/powerpc64le-unknown-linux-gnu-gcc-14.2.0-lib/powerpc64le-unknown-linux-gnu/lib", target = "powerpc64le-unknown-linux-gnu", version = "14.2.0" }
candidates = [{ path = "ROOT/powerpc64le-unknown-linux-gnu-gcc-wrapper-13.3.0/bin/powerpc64le-unknown-linux-gnu-g++", family = "gcc", target = "powerpc64le-unknown-linux-gnu", version = "13.3.0" }]
"#,
        "ROOT/cuda_nvcc-12.4/bin/nvcc \
         -ccbin=ROOT/powerpc64le-unknown-linux-gnu-gcc-wrapper-13.3.0/bin/powerpc64le-unknown-linux-gnu-g++ \
         -LROOT/powerpc64le-unknown-linux-gnu-gcc-14.2.0/lib/gcc/powerpc64le-unknown-linux-gnu/14.2.0 \
         -Xlinker=-rpath,ROOT/powerpc64le-unknown-linux-gnu-gcc-14.2.0-lib/powerpc64le-unknown-linux-gnu/lib \
         -ICACHE/target-roots/ppc64le-12.4/include -LCACHE/target-roots/ppc64le-12.4/lib \
         -gencode=arch=compute_70,code=sm_70 -gencode=arch=compute_70,code=compute_70 \
         -Xfatbin=-compress-all \
         -Xcompiler=-ffile-prefix-map=/tmp/tmpxft_<pid>_=tmpxft_ -Xcudafe=--orig_src_path_name=hello.cu \
         -Xcompiler=-frandom-seed=hello hello.cu -o hello",
    );
}
