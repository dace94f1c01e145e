//! Capability lists in every dialect (issue 33, item 3): each word means what the tool that writes it means, in
//! the config, the environment and `gencode` alike; `all` and `all-major` are nvcc's for the release in use;
//! `native` is this machine's GPUs, said not to be reproducible, refused without a GPU and in a Nix build.

use crate::support::*;

/// The `-gencode` flags the fake nvcc got for `-c k.cu` with `NVCC_WRAPPER_CAPABILITIES=list`.
fn flags_for(sb: &Sandbox, list: &str) -> Vec<String> {
    sb.nvcc().env("NVCC_WRAPPER_CAPABILITIES", list).args(["-c", "k.cu"]).assert().success();
    sb.recorded().args().into_iter().filter(|a| a.starts_with("-gencode=")).collect()
}

fn sass(cap: &str) -> String {
    format!("-gencode=arch=compute_{cap},code=sm_{cap}")
}

fn ptx(cap: &str) -> String {
    format!("-gencode=arch=compute_{cap},code=compute_{cap}")
}

#[test]
fn each_word_means_what_its_tool_means() {
    let sb = Sandbox::new();
    let rows: &[(&str, Vec<String>)] = &[
        // Nixpkgs and PyTorch: machine code; PyTorch's `+PTX` adds the PTX, space-separated lists as it writes them.
        ("8.6 9.0+PTX", vec![sass("86"), sass("90"), ptx("90")]),
        // CMake: a bare number is machine code and PTX; -real and -virtual one of them.
        ("86;89-real;90-virtual", vec![sass("86"), sass("89"), ptx("86"), ptx("90")]),
        // nvcc: `compute_80` is PTX alone, as `-arch=compute_80` embeds; `sm_86` is `code=sm_86`.
        ("compute_80,sm_86", vec![sass("86"), ptx("80")]),
        // nvcc's own flags, as conda-forge's NVCC_GENCODE holds them.
        (
            "-gencode arch=compute_75,code=sm_75 -gencode=arch=compute_90,code=[sm_90,compute_90]",
            vec![sass("75"), sass("90"), ptx("90")],
        ),
    ];
    for (list, want) in rows {
        assert_eq!(&flags_for(&sb, list), want, "{list:?}");
    }
}

#[test]
fn all_and_all_major_are_what_nvcc_builds_for_the_release_in_use() {
    // The sandbox's nvcc says 13.0.88: `nvcc -arch=all-major -dryrun` of 13.0.88 builds 75 80 90 100 110 120 and
    // PTX of 12.0 (tests/real/gpu.rs); for this x86_64 machine, less Jetson Thor's 11.0, which it never runs.
    let sb = Sandbox::new();
    let major: Vec<String> = ["75", "80", "90", "100", "120"].iter().map(|c| sass(c)).chain([ptx("120")]).collect();
    assert_eq!(flags_for(&sb, "all-major"), major);
    assert_eq!(
        flags_for(&sb, "all").len(),
        11,
        "nvcc's 12 machine codes less 8.7 and 11.0 (Jetson), and the PTX of 12.0"
    );
    // `gencode` learns the release as the drop-in does (issue 39): the same targets, in CMake's words.
    let out = sb.wrapper_cli().args(["gencode", "--format", "cmake", "all-major"]).output().unwrap();
    assert_eq!(stdout(&out), "75-real;80-real;90-real;100-real;120-real;120-virtual\n", "{}", stderr(&out));
    let out = sb.wrapper_cli().args(["gencode", "all"]).output().unwrap();
    assert_eq!(stdout(&out).lines().collect::<Vec<_>>(), flags_for(&sb, "all"));
    // With no nvcc to ask, it says how to give the release.
    let out = sb
        .wrapper_cli()
        .env("PATH", "/usr/bin:/bin")
        .args(["gencode", "--format", "cmake", "all-major"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(65));
    assert_eq!(stderr(&out), "nvcc-wrapper: error: `all-major` stands for what the nvcc release builds, and none is known: no `--cuda-version`, no `cuda-version` in the config, and no real nvcc found: there is no runnable `nvcc` on PATH\nhelp: give the release, as in `--cuda-version 13.0`, or put the real nvcc on PATH\n");
    let out = sb
        .wrapper_cli()
        .args(["gencode", "--format", "cmake", "--cuda-version", "12.4", "all-major"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "50-real;60-real;70-real;80-real;90-real;90-virtual\n");
}

#[test]
fn native_is_this_machines_gpus_and_is_said_not_to_be_reproducible() {
    let sb = Sandbox::new();
    // No nvidia-smi on PATH: no GPU visible, refused before nvcc runs.
    let out = sb.nvcc().env("NVCC_WRAPPER_CAPABILITIES", "native").args(["-c", "k.cu"]).output().unwrap();
    assert_eq!(out.status.code(), Some(65), "{}", stderr(&out));
    assert!(stderr(&out).contains("`native` in the GPU targets stands for this machine's GPUs, and none is known: there is no `nvidia-smi` on PATH"), "{}", stderr(&out));
    assert!(!sb.ran());
    // The driver's nvidia-smi, faked: two GPUs.
    sb.write("cuda/bin/nvidia-smi", "#!/bin/sh\nprintf '8.9\\n9.0\\n'\n");
    std::fs::set_permissions(sb.cuda_bin.join("nvidia-smi"), std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .unwrap();
    assert_eq!(flags_for(&sb, "native"), [sass("89"), sass("90")]);
    let out = sb
        .wrapper_cli()
        .env("NVCC_WRAPPER_CONFIG", &sb.config)
        .env("NVCC_WRAPPER_CAPABILITIES", "native")
        .args(["explain", "--", "-c", "k.cu"])
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(text.contains("  note: `native` stands for this machine's GPUs (nvidia-smi), which makes the targets 8.9, 9.0: another machine builds others"), "{text}");
    // In a Nix build, never: the output must not depend on the builder.
    let top = sb.dir.path().join("build");
    std::fs::create_dir_all(&top).unwrap();
    let out = sb
        .nvcc()
        .env("NIX_BUILD_TOP", &top)
        .env("NVCC_WRAPPER_CAPABILITIES", "native")
        .args(["-c", "k.cu"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(65));
    assert!(
        stderr(&out).contains("this is a Nix build, whose output must not depend on the machine that builds it"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_config_takes_one_list_or_an_array_and_names_a_bad_word_with_its_position() {
    let sb = Sandbox::new();
    let base = std::fs::read_to_string(&sb.config).unwrap();
    let one = sb.write("one.toml", &format!("{base}[gpu]\ncapabilities = \"8.6+PTX;90-virtual\"\n"));
    sb.nvcc().env("NVCC_WRAPPER_CONFIG", &one).args(["-c", "k.cu"]).assert().success();
    let got: Vec<String> = sb.recorded().args().into_iter().filter(|a| a.starts_with("-gencode=")).collect();
    assert_eq!(got, [sass("86"), ptx("86"), ptx("90")]);
    let bad = sb.write("bad.toml", &format!("{base}[gpu]\ncapabilities = [\"8.6\", \"ampere\"]\n"));
    let out = sb.nvcc().env("NVCC_WRAPPER_CONFIG", &bad).args(["-c", "k.cu"]).output().unwrap();
    assert_eq!(out.status.code(), Some(78));
    assert!(stderr(&out).contains("bad.toml:"), "{}", stderr(&out));
    assert!(stderr(&out).contains("`ampere` is not a GPU target: PyTorch's name is `Ampere`"), "{}", stderr(&out));
    // A word that is not ASCII is refused as any other, from the file (78) and from the variable (64): it once
    // panicked, cut inside its last character.
    let accented = sb.write("accented.toml", &format!("{base}[gpu]\ncapabilities = [\"90aé\"]\n"));
    let out = sb.nvcc().env("NVCC_WRAPPER_CONFIG", &accented).args(["-c", "k.cu"]).output().unwrap();
    assert_eq!(out.status.code(), Some(78), "{}", stderr(&out));
    assert!(stderr(&out).contains("accented.toml:") && stderr(&out).contains("`90aé`"), "{}", stderr(&out));
    let out = sb.nvcc().env("NVCC_WRAPPER_CAPABILITIES", "8é").args(["-c", "k.cu"]).output().unwrap();
    assert_eq!(out.status.code(), Some(64), "{}", stderr(&out));
    assert!(stderr(&out).contains("NVCC_WRAPPER_CAPABILITIES=8é: `8é` is not a GPU target"), "{}", stderr(&out));
}

#[test]
fn gencode_writes_every_dialect_and_each_reads_back() {
    let sb = Sandbox::new();
    let gencode = |format: &str, list: &str| {
        let out = sb.wrapper_cli().args(["gencode", "--format", format, "--", list]).output().unwrap();
        assert!(out.status.success(), "{format} {list}: {}", stderr(&out));
        stdout(&out).trim_end().to_string()
    };
    let list = "7.5 86-real 9.0+PTX";
    let cmake = gencode("cmake", list);
    assert_eq!(cmake, "75-real;86-real;90-real;90-virtual");
    let torch = gencode("torch", list);
    assert_eq!(torch, "7.5;8.6;9.0+PTX");
    let nvcc = gencode("nvcc", list).replace('\n', " ");
    for exported in [&cmake, &torch, &nvcc] {
        assert_eq!(gencode("cmake", exported), cmake, "{exported}");
    }
    // PTX of a capability without its machine code: TORCH_CUDA_ARCH_LIST has no word for it.
    let out = sb.wrapper_cli().args(["gencode", "--format", "torch", "8.6", "90-virtual"]).output().unwrap();
    assert_eq!(out.status.code(), Some(65));
    assert!(
        stderr(&out).contains("TORCH_CUDA_ARCH_LIST has no way to say PTX of 9.0 without its machine code"),
        "{}",
        stderr(&out)
    );
}
