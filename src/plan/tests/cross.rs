use super::*;

const SBSA: &str = "[target]\nsystem = \"aarch64-linux\"\n";
const PPC: &str = "[target]\nsystem = \"powerpc64le-linux\"\n";

fn toolkit_with(dirs: &[&str]) -> Vec<String> {
    dirs.iter().map(|d| format!("/cuda/targets/{d}")).collect()
}

fn probes(nvcc: &str, targets: &[&str]) -> FakeProbes {
    let files = toolkit_with(targets);
    FakeProbes::debian(nvcc).with_files(&files.iter().map(String::as_str).collect::<Vec<_>>())
}

#[test]
fn cross_rows() {
    // (nvcc, target dirs in the toolkit, command line, config, what is added)
    type Row<'a> = (&'a str, &'a [&'a str], &'a [&'a str], &'a str, &'a [&'a str]);
    let rows: &[Row] = &[
        // The target's stdenv compiler (TRIPLE-g++, GCC 12) is accepted: it and the toolkit's target directory.
        (
            "13.0.88",
            &["sbsa-linux"],
            &["-c", "a.cu"],
            SBSA,
            &["-ccbin=/usr/bin/aarch64-linux-gnu-g++", "--target-directory=sbsa-linux"],
        ),
        // GNU triples name the system too; Jetson gets its own directory even when sbsa-linux is there.
        (
            "12.4.131",
            &["sbsa-linux", "aarch64-linux"],
            &["-c", "a.cu"],
            "[target]\nsystem = \"aarch64-unknown-linux-gnu\"\nplatform = \"jetson\"\n",
            &["-ccbin=/usr/bin/aarch64-linux-gnu-g++", "--target-directory=aarch64-linux"],
        ),
        // nvcc 11.8 takes GCC up to 11: the cross GCC 11, with the cross GCC 12's libstdc++ on links.
        (
            "11.8.89",
            &["ppc64le-linux"],
            &["a.cu", "-o", "a"],
            PPC,
            &[
                "-ccbin=/usr/bin/powerpc64le-linux-gnu-g++-11",
                "-L/usr/lib/gcc-cross/powerpc64le-linux-gnu/12",
                "-Xlinker=-rpath,/usr/powerpc64le-linux-gnu/lib",
                "--target-directory=ppc64le-linux",
            ],
        ),
        // Issue 10: a native stdenv table that records its libstdc++ is the native build's; a cross link takes
        // the target's stdenv compiler's, never a native path.
        (
            "11.8.89",
            &["ppc64le-linux"],
            &["a.cu", "-o", "a"],
            "[host-compiler]\nstdenv = { path = \"/usr/bin/g++-12\", family = \"gcc\", version = \"12.2.0\", target = \"x86_64-linux-gnu\", gcc-install-dir = \"/native/gcc/12\", libstdcxx-dir = \"/native/lib\" }\n[target]\nsystem = \"powerpc64le-linux\"\n",
            &[
                "-ccbin=/usr/bin/powerpc64le-linux-gnu-g++-11",
                "-L/usr/lib/gcc-cross/powerpc64le-linux-gnu/12",
                "-Xlinker=-rpath,/usr/powerpc64le-linux-gnu/lib",
                "--target-directory=ppc64le-linux",
            ],
        ),
        // ... while the target's own recorded table is used as it is, with nothing probed.
        (
            "11.8.89",
            &["ppc64le-linux"],
            &["a.cu", "-o", "a"],
            "[target]\nsystem = \"powerpc64le-linux\"\n[target.host-compiler]\nstdenv = { path = \"/usr/bin/powerpc64le-linux-gnu-g++\", family = \"gcc\", version = \"12.2.0\", target = \"powerpc64le-linux-gnu\", gcc-install-dir = \"/t/gcc/12\", libstdcxx-dir = \"/t/lib\" }\n",
            &[
                "-ccbin=/usr/bin/powerpc64le-linux-gnu-g++-11",
                "-L/t/gcc/12",
                "-Xlinker=-rpath,/t/lib",
                "--target-directory=ppc64le-linux",
            ],
        ),
        // The config's target compilers are used; `[host-compiler]` is for native builds only.
        (
            "13.0.88",
            &["sbsa-linux"],
            &["-c", "a.cu"],
            "[host-compiler]\nstdenv = \"/usr/bin/clang++-19\"\n[target]\nsystem = \"aarch64-linux\"\n[target.host-compiler]\nstdenv = \"aarch64-linux-gnu-g++-11\"\n",
            &["-ccbin=/usr/bin/aarch64-linux-gnu-g++-11", "--target-directory=sbsa-linux"],
        ),
        // The user's own target directory: nothing about target files is added.
        (
            "13.0.88",
            &[],
            &["-c", "a.cu", "-target-dir", "sbsa-linux"],
            SBSA,
            &["-ccbin=/usr/bin/aarch64-linux-gnu-g++"],
        ),
        // The user's own cross compiler: used, and the target directory still added.
        (
            "13.0.88",
            &["sbsa-linux"],
            &["-ccbin", "aarch64-linux-gnu-g++-12", "-c", "a.cu"],
            SBSA,
            &["--target-directory=sbsa-linux"],
        ),
        // The target of this machine is no cross build.
        ("13.0.88", &[], &["-c", "a.cu"], "[target]\nsystem = \"x86_64-linux\"\n", &["-ccbin=/usr/bin/g++"]),
    ];
    for (nvcc, targets, args, cfg, want) in rows {
        let p = plan_with(args, &[], cfg, &probes(nvcc, targets)).unwrap_or_else(|e| panic!("{args:?} {cfg}: {e}"));
        assert_eq!(added(&p), *want, "nvcc {nvcc}, {args:?}, {cfg} {:?}", p.changes.notes);
    }
}

#[test]
fn a_nix_layout_takes_the_target_files_from_cuda_root() {
    let cfg = format!("{SBSA}cuda-root = \"/store/cudart-aarch64\"\n");
    let probes = FakeProbes::debian("13.0.88")
        .with_files(&["/store/cudart-aarch64/include/cuda_runtime.h", "/store/cudart-aarch64/include/cccl"]);
    let p = plan_with(&["-c", "a.cu"], &[], &cfg, &probes).unwrap();
    assert_eq!(
        added(&p),
        [
            "-ccbin=/usr/bin/aarch64-linux-gnu-g++",
            "-I/store/cudart-aarch64/include",
            "-isystem=/store/cudart-aarch64/include/cccl"
        ]
    );
    let p = plan_with(&["a.o", "-o", "a"], &[], &cfg, &probes).unwrap();
    assert_eq!(
        added(&p)[1..],
        [
            "-I/store/cudart-aarch64/include",
            "-isystem=/store/cudart-aarch64/include/cccl",
            "-L/store/cudart-aarch64/lib"
        ]
    );
    let cross = p.decided.cross.unwrap();
    assert_eq!(cross.files, model::TargetFiles::CudaRoot("/store/cudart-aarch64".into()));
    assert_eq!(cross.platform, "sbsa-linux");
    // A relative cuda-root is the config file's directory's.
    let p = plan_with(
        &["-c", "a.cu"],
        &[],
        &format!("{SBSA}cuda-root = \"rel\"\n"),
        &FakeProbes::debian("12.4.131").with_files(&["/etc/rel/include/cuda_runtime.h"]),
    )
    .unwrap();
    assert_eq!(added(&p)[1..], ["-I/etc/rel/include"]);
    // The toolkit's own directory wins, and the reason says so.
    let probes = probes.with_files(&["/cuda/targets/sbsa-linux"]);
    let p = plan_with(&["-c", "a.cu"], &[], &cfg, &probes).unwrap();
    assert_eq!(added(&p)[1..], ["--target-directory=sbsa-linux"]);
    let Some(crate::plan::cross::Reason::InToolkit { unused_cuda_root, .. }) = p.changes.before[1].why.get() else {
        panic!("{p:?}")
    };
    assert_eq!(unused_cuda_root.as_deref(), Some(Path::new("/store/cudart-aarch64")));
}

#[test]
fn a_sysroot_reaches_every_compile_and_the_linker() {
    let cfg = format!("{SBSA}sysroot = \"/sr\"\n");
    let probes = probes("13.0.88", &["sbsa-linux"]).with_files(&["/sr", "/sr/usr/lib/aarch64-linux-gnu", "/sr/lib"]);
    let p = plan_with(&["-c", "a.cu"], &[], &cfg, &probes).unwrap();
    assert_eq!(added(&p)[2..], ["-Xcompiler=--sysroot=/sr"]);
    let p = plan_with(&["a.cu", "-o", "a"], &[], &cfg, &probes).unwrap();
    assert_eq!(
        added(&p)[2..],
        ["-Xcompiler=--sysroot=/sr", "-Xlinker=-rpath-link,/sr/usr/lib/aarch64-linux-gnu:/sr/lib"]
    );
    assert_eq!(p.decided.cross.unwrap().sysroot, Some("/sr".into()));
}

#[test]
fn paths_an_x_list_would_change_are_errors_and_others_pass_byte_for_byte() {
    // A sysroot with a space: the compile's shell and the link would both split it.
    let cfg = format!("{SBSA}sysroot = \"/my root\"\n");
    let with_root = probes("13.0.88", &["sbsa-linux"]).with_files(&["/my root"]);
    let e = plan_with(&["-c", "a.cu"], &[], &cfg, &with_root).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config);
    assert!(e.message.contains("'/my root'") && e.message.contains("a space"), "{e}");
    assert!(e.help.as_deref().is_some_and(|h| h.contains("symbolic link")), "{e:?}");
    // A CUDA root is given by nvcc's own -I and -L, which nvcc quotes: a space passes.
    let cfg = format!("{SBSA}cuda-root = \"/store/cuda root\"\n");
    let with_cuda = probes("13.0.88", &[]).with_files(&["/store/cuda root/include/cuda_runtime.h"]);
    let p = plan_with(&["a.cu", "-o", "a"], &[], &cfg, &with_cuda).unwrap();
    assert_eq!(added(&p)[1..], ["-I/store/cuda root/include", "-L/store/cuda root/lib"]);
}

fn error(
    nvcc: &str,
    targets: &[&str],
    args: &[&str],
    env: &[(&str, &str)],
    cfg: &str,
    probes_: Option<FakeProbes>,
) -> crate::error::Error {
    let probes = probes_.unwrap_or_else(|| probes(nvcc, targets));
    let i = inv(args, env);
    let mut loaded = config(cfg);
    crate::config::apply_env(&mut loaded, &i_env(env)).unwrap();
    plan_for(&i, &loaded, &probes, 0).unwrap_err()
}

fn i_env(env: &[(&str, &str)]) -> crate::context::Env {
    env.iter().copied().collect()
}

#[test]
fn platforms_a_release_does_not_ship_are_refused() {
    for (nvcc, cfg, words) in [
        ("13.0.88", PPC, &["nvcc 13.0", "ppc64le-linux", "11.0 to 12.4"][..]),
        (
            "12.3.107",
            "[target]\nplatform = \"jetson\"\n",
            &["nvcc 12.3", "aarch64-linux", "11.8 to 12.2, 12.4 to 12.9", "sbsa"],
        ),
        ("13.0.88", "[target]\nplatform = \"jetson\"\n", &["nvcc 13.0", "aarch64-linux"]),
    ] {
        let e = error(nvcc, &["ppc64le-linux", "aarch64-linux"], &["-c", "a.cu"], &[], cfg, None);
        assert_eq!(e.kind, ErrorKind::Request, "{e}");
        let text = format!("{e}");
        for w in words {
            assert!(text.contains(w), "{w:?} not in {text}");
        }
    }
}

#[test]
fn compilers_for_another_machine_are_refused_or_left_out() {
    // A configured target stdenv that builds for x86_64: an error naming it and its machine.
    let cfg = format!("{SBSA}[target.host-compiler]\nstdenv = \"/usr/bin/g++-12\"\n");
    let e = error("13.0.88", &["sbsa-linux"], &["-c", "a.cu"], &[], &cfg, None);
    assert_eq!(e.kind, ErrorKind::HostCompiler);
    assert!(
        e.message.contains("g++-12")
            && e.message.contains("x86_64-linux-gnu")
            && e.message.contains("[target.host-compiler] stdenv"),
        "{e}"
    );
    // The user's native -ccbin for a cross target: the same, naming the flag.
    let e = error("13.0.88", &["sbsa-linux"], &["-ccbin", "g++", "-c", "a.cu"], &[], SBSA, None);
    assert_eq!(e.kind, ErrorKind::HostCompiler);
    assert!(e.message.contains("`-ccbin`") && e.message.contains("sbsa-linux"), "{e}");
    // A recorded entry that says it builds for x86_64 is believed, and left out as a candidate.
    let cfg = format!("{SBSA}[target.host-compiler]\ncandidates = [{{ path = \"/usr/bin/g++-11\", family = \"gcc\", version = \"11.3.0\", target = \"x86_64-linux-gnu\" }}, \"aarch64-linux-gnu-g++-11\"]\n");
    let p = plan_with(&["-c", "a.cu"], &[], &cfg, &probes("11.8.89", &["sbsa-linux"])).unwrap();
    assert_eq!(added(&p)[0], "-ccbin=/usr/bin/aarch64-linux-gnu-g++-11");
    let left_out = said::<host_compiler::Note>(&p);
    assert!(
        matches!(&left_out[..], [host_compiler::Note::CandidateForAnotherMachine { compiler }] if compiler.path == Path::new("/usr/bin/g++-11")),
        "{left_out:?}"
    );
}

#[test]
fn no_cross_compiler_names_what_to_install() {
    let only_native = FakeProbes::debian("13.0.88").only(&["g++", "g++-12"]).with_files(&["/cuda/targets/sbsa-linux"]);
    let e = error("13.0.88", &[], &["-c", "a.cu"], &[], SBSA, Some(only_native));
    assert_eq!(e.kind, ErrorKind::HostCompiler);
    assert!(e.message.contains("aarch64-linux-gnu-g++") && e.message.contains("sbsa-linux"), "{e}");
    assert!(e.help.unwrap().contains("g++-aarch64-linux-gnu"));
    // Only GCC 12 cross compilers for nvcc 11.8: the usual range error, with cross names in the help.
    let gcc12 =
        FakeProbes::debian("11.8.89").only(&["aarch64-linux-gnu-g++"]).with_files(&["/cuda/targets/sbsa-linux"]);
    let e = error("11.8.89", &[], &["-c", "a.cu"], &[], SBSA, Some(gcc12));
    assert_eq!(e.kind, ErrorKind::HostCompiler);
    assert!(
        e.message.contains("for sbsa-linux") && e.help.as_deref().unwrap().contains("aarch64-linux-gnu-g++-11"),
        "{e}"
    );
}

#[test]
fn missing_target_files_and_sysroots_say_which_setting_to_fix() {
    let e = error("13.0.88", &[], &["-c", "a.cu"], &[], SBSA, None);
    assert_eq!(e.kind, ErrorKind::Request);
    assert!(e.message.contains("/cuda has no targets/sbsa-linux") && e.message.contains("cuda-root"), "{e}");
    let e = error("13.0.88", &[], &["-c", "a.cu"], &[], &format!("{SBSA}cuda-root = \"/nowhere\"\n"), None);
    assert_eq!(e.kind, ErrorKind::Config);
    assert!(e.message.contains("/nowhere") && e.message.contains("/etc/nvcc.toml"), "{e}");
    // Even when the toolkit's own directory would be used.
    let cfg = format!("{SBSA}cuda-root = \"/nowhere\"\n");
    let e = error("13.0.88", &["sbsa-linux"], &["-c", "a.cu"], &[], &cfg, None);
    assert_eq!(e.kind, ErrorKind::Config, "{e}");
    let e = error("13.0.88", &["sbsa-linux"], &["-c", "a.cu"], &[], &format!("{SBSA}sysroot = \"/nosysroot\"\n"), None);
    assert_eq!(e.kind, ErrorKind::Config);
    assert!(e.message.contains("`[target] sysroot`") && e.message.contains("/nosysroot"), "{e}");
    // From the environment: exit 64, naming the variable.
    let e = error("13.0.88", &["sbsa-linux"], &["-c", "a.cu"], &[(vars::TARGET_SYSROOT, "/envroot")], SBSA, None);
    assert_eq!(e.kind, ErrorKind::Environment);
    assert!(e.message.contains("$NVCC_WRAPPER_TARGET_SYSROOT") && e.message.contains("/envroot"), "{e}");
}
