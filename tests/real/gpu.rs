//! GPU capabilities against real NVCC releases: what the wrapper adds is exactly what ends up in the object, checked
//! with cuobjdump (machine code and PTX, nothing more); `replace` really takes a hard-coded target list out; and a
//! capability a release cannot build is refused by the wrapper where the real nvcc would refuse it too. Needs real
//! NVCC 11.8, 12.4, 13.0 and 13.5, cuobjdump and g++-12. (Running the code on a GPU is tests/gpu/run.sh; see
//! docs/gpu-validation.md.)

use std::collections::BTreeSet;

use crate::support::*;

const KERNEL_CU: &str = "__global__ void k(int *x) { x[threadIdx.x] += 1; }\n";

/// The host compiler every release here accepts, so the host-compiler step never gets in the way.
const HOST: &str = "[host-compiler]\nstdenv = \"/usr/bin/g++-12\"\n";

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

struct Real {
    sb: RealSandbox,
    cuobjdump: std::path::PathBuf,
    release: &'static str,
}

fn real(release: &'static str) -> Option<Real> {
    let root = real_toolkit(release)?;
    let cuobjdump = real_tool("cuobjdump")?;
    real_program("g++-12")?;
    let sb = RealSandbox::new(&root);
    sb.write("k.cu", KERNEL_CU);
    sb.write("wrapper.toml", HOST);
    Some(Real { sb, cuobjdump, release })
}

impl Real {
    fn config(&self, gpu: &str) -> std::path::PathBuf {
        self.sb.write("wrapper.toml", &format!("{HOST}[gpu]\n{gpu}"))
    }

    /// `nvcc -c k.cu` through the wrapper with these capabilities; what the object embeds.
    fn compile(&self, caps: &str, forward_compat: bool, extra: &[&str]) -> BTreeSet<String> {
        let object = self.sb.file("k.o");
        let _ = std::fs::remove_file(&object);
        let out = self
            .sb
            .nvcc()
            .env("NVCC_WRAPPER_CONFIG", self.sb.file("wrapper.toml"))
            .env("NVCC_WRAPPER_CAPABILITIES", caps)
            .env("NVCC_WRAPPER_FORWARD_COMPAT", if forward_compat { "1" } else { "0" })
            .args(extra)
            .args(["-c", "k.cu", "-o", "k.o"])
            .output()
            .unwrap();
        assert!(out.status.success(), "nvcc {} {caps} fc={forward_compat} {extra:?}: {}", self.release, stderr(&out));
        embedded(&self.cuobjdump, &object)
    }
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn exactly_the_configured_code_and_ptx_are_embedded() {
    // (releases, capabilities, forward compat, what the object holds)
    type Row<'a> = (&'a [&'static str], &'a str, bool, &'a [&'a str]);
    let rows: &[Row] = &[
        (&["12.4", "13.0", "13.5"], "8.6", false, &["sm_86"]),
        (&["12.4", "13.0", "13.5"], "8.6", true, &["sm_86", "ptx sm_86"]),
        (&["12.4", "13.0", "13.5"], "9.0;sm_86;8.6", true, &["sm_86", "sm_90", "ptx sm_90"]),
        // An `a` target: its machine code, and forward-compatible PTX from its baseline only.
        (&["12.4", "13.0", "13.5"], "8.6;9.0a", false, &["sm_86", "sm_90a"]),
        (&["12.4", "13.0", "13.5"], "8.6;9.0a", true, &["sm_86", "sm_90a", "ptx sm_90"]),
        // `f` targets (12.9+): family code, PTX from the highest capability's baseline.
        (&["13.0", "13.5"], "9.0;10.0f", true, &["sm_90", "sm_100f", "ptx sm_100"]),
        (&["13.0", "13.5"], "10.0a;12.0a;12.0f", true, &["sm_100a", "sm_120a", "sm_120f", "ptx sm_120"]),
        (&["13.5"], "10.3f;10.7f;12.1a", false, &["sm_103f", "sm_107f", "sm_121a"]),
    ];
    for release in ["12.4", "13.0", "13.5"] {
        let Some(r) = real(release) else { continue };
        for (_, caps, fc, want) in rows.iter().filter(|row| row.0.contains(&release)) {
            assert_eq!(r.compile(caps, *fc, &[]), set(want), "nvcc {release} capabilities {caps} fc={fc}");
        }
    }
}

/// Each dialect's word, through the wrapper, embeds what the tool that writes it means, as nvcc alone builds it from
/// that tool's own flags (issue 33): PyTorch's `8.6+PTX` and CMake's `86` are `code=[sm_86,compute_86]`, CMake's
/// `-real`/`-virtual` one of the two, nvcc's `compute_80` is `-arch=compute_80` (PTX alone), and `all`/`all-major`
/// are `-arch=all`/`-arch=all-major` of the release, less the Jetson parts an x86_64 machine never runs.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn issue_33_each_dialect_embeds_what_nvcc_builds_for_its_tools_flags() {
    // (the wrapper's word, nvcc's own flag)
    let words: &[(&str, &str)] = &[
        ("8.6+PTX", "-gencode=arch=compute_86,code=[sm_86,compute_86]"),
        ("86", "-gencode=arch=compute_86,code=[sm_86,compute_86]"),
        ("86-real", "-gencode=arch=compute_86,code=sm_86"),
        ("86-virtual", "-gencode=arch=compute_86,code=compute_86"),
        ("compute_80", "-arch=compute_80"),
        ("all", "-arch=all"),
        ("all-major", "-arch=all-major"),
    ];
    // What `all` and `all-major` leave out on x86_64: the Jetson parts (TX1 5.3, TX2 6.2, Xavier 7.2, Orin 8.7,
    // Thor 11.0), each only where the release builds it.
    let jetson = set(&["sm_53", "sm_62", "sm_72", "sm_87", "sm_110"]);
    for (release, host) in [("11.8", "g++-11"), ("12.4", "g++-12"), ("13.0", "g++-12"), ("13.5", "g++-12")] {
        let Some(root) = real_toolkit(release) else { continue };
        // The release's own cuobjdump where it has one: 13.x's cannot read 11.8's sm_35.
        let own = Some(root.join("bin/cuobjdump")).filter(|c| c.is_file());
        let (Some(cuobjdump), Some(host)) = (own.or_else(|| real_tool("cuobjdump")), real_program(host)) else {
            continue;
        };
        let sb = RealSandbox::new(&root);
        sb.write("k.cu", KERNEL_CU);
        sb.write("wrapper.toml", &format!("[host-compiler]\nstdenv = \"{}\"\n", host.display()));
        for (word, flag) in words {
            let wrapped = sb
                .nvcc()
                .env("NVCC_WRAPPER_CONFIG", sb.file("wrapper.toml"))
                .env("NVCC_WRAPPER_CAPABILITIES", word)
                .args(["-c", "k.cu", "-o", "w.o"])
                .output()
                .unwrap();
            assert!(wrapped.status.success(), "{release} {word}: {}", stderr(&wrapped));
            let alone =
                sb.real_nvcc().arg("-ccbin").arg(&host).arg(flag).args(["-c", "k.cu", "-o", "n.o"]).output().unwrap();
            assert!(alone.status.success(), "{release} {flag}: {}", stderr(&alone));
            let (ours, nvccs) = (embedded(&cuobjdump, &sb.file("w.o")), embedded(&cuobjdump, &sb.file("n.o")));
            let want: BTreeSet<String> = if word.starts_with("all") { &nvccs - &jetson } else { nvccs.clone() };
            assert_eq!(ours, want, "nvcc {release}: `{word}` through the wrapper against `{flag}` alone ({nvccs:?})");
        }
    }
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn a_linked_program_embeds_the_same_and_runs() {
    let Some(r) = real("13.0") else { return };
    r.sb.write("smoke.cu", SMOKE_CU);
    r.sb.nvcc()
        .env("NVCC_WRAPPER_CONFIG", r.sb.file("wrapper.toml"))
        .env("NVCC_WRAPPER_CAPABILITIES", "8.6;9.0a")
        .env("NVCC_WRAPPER_FORWARD_COMPAT", "1")
        .args(["smoke.cu", "-o", "smoke"])
        .assert()
        .success();
    assert_eq!(embedded(&r.cuobjdump, &r.sb.file("smoke")), set(&["sm_86", "sm_90a", "ptx sm_90"]));
    run_smoke(&r.sb.file("smoke"));
    // Separate compilation: -dc, then -dlink and the final link, every step getting the same targets.
    for args in
        [&["-dc", "smoke.cu", "-o", "s.o"][..], &["-dlink", "s.o", "-o", "dl.o"], &["s.o", "dl.o", "-o", "smoke2"]]
    {
        r.sb.nvcc()
            .env("NVCC_WRAPPER_CONFIG", r.sb.file("wrapper.toml"))
            .env("NVCC_WRAPPER_CAPABILITIES", "8.6;9.0a")
            .args(args)
            .assert()
            .success();
    }
    assert_eq!(embedded(&r.cuobjdump, &r.sb.file("dl.o")), set(&["sm_86", "sm_90a"]));
    run_smoke(&r.sb.file("smoke2"));
}

const LTO_MAIN_CU: &str = include_str!("../../examples/device-lto/main.cu");
const LTO_SQUARE_CU: &str = include_str!("../../examples/device-lto/square.cu");

/// Issue 14: device LTO with the configured capabilities, the way a separate-compilation build asks for it: each
/// file with `-dc -dlto`, then `-dlink -dlto`, then the host link. The objects must hold the LTO intermediates of
/// exactly the configured targets (and the PTX), the device link machine code for each, and the program must run.
/// Without the wrapper's targets, the same device link gives nvcc's default architecture, which no object holds.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn device_lto_compiles_intermediates_and_links_machine_code_for_the_capabilities() {
    for (release, default) in [("12.4", "sm_52"), ("13.0", "sm_75"), ("13.5", "sm_75")] {
        let Some(r) = real(release) else { continue };
        r.sb.write("main.cu", LTO_MAIN_CU);
        r.sb.write("square.cu", LTO_SQUARE_CU);
        let nvcc = |args: &[&str]| {
            r.sb.nvcc()
                .env("NVCC_WRAPPER_CONFIG", r.sb.file("wrapper.toml"))
                .env("NVCC_WRAPPER_CAPABILITIES", "8.6;9.0a")
                .env("NVCC_WRAPPER_FORWARD_COMPAT", "1")
                .args(args)
                .assert()
                .success();
        };
        nvcc(&["-dc", "-dlto", "main.cu", "-o", "main.o"]);
        nvcc(&["-dc", "-dlto", "square.cu", "-o", "square.o"]);
        for object in ["main.o", "square.o"] {
            let want = set(&["lto sm_86", "lto sm_90a", "ptx sm_90"]);
            assert_eq!(embedded(&r.cuobjdump, &r.sb.file(object)), want, "{release} {object}");
        }
        nvcc(&["-dlink", "-dlto", "main.o", "square.o", "-o", "dlink.o"]);
        assert_eq!(embedded(&r.cuobjdump, &r.sb.file("dlink.o")), set(&["sm_86", "sm_90a"]), "{release}");
        // The host link through nvcc, with the objects only: the device link again, for the configured targets.
        nvcc(&["-dlto", "main.o", "square.o", "-o", "program"]);
        run_smoke(&r.sb.file("program"));

        // The control: the real nvcc alone links nvcc's default architecture, from no intermediate at all.
        let real_nvcc = r.sb.root.join("bin/nvcc");
        let out = std::process::Command::new(&real_nvcc)
            .current_dir(r.sb.dir.path())
            .args(["-ccbin=/usr/bin/g++-12", "-dlink", "-dlto", "main.o", "square.o", "-o", "bare.o"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{release}: {}", stderr(&out));
        assert!(stderr(&out).contains(&format!("SM Arch ('{default}') not found")), "{release}: {}", stderr(&out));
        assert_eq!(embedded(&r.cuobjdump, &r.sb.file("bare.o")), set(&[default]), "{release}");
    }
}

/// Four targets a package hard-codes, in four spellings.
const HARD_CODED: &[&str] = &[
    "-gencode",
    "arch=compute_75,code=sm_75",
    "-gencode=arch=compute_80,code=sm_80",
    "--generate-code=arch=compute_86,code=[sm_86,compute_86]",
    "--generate-code",
    "arch=compute_89,code=sm_89",
];

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn replace_takes_out_a_hard_coded_list_respect_keeps_it() {
    for release in ["12.4", "13.0", "13.5"] {
        let Some(r) = real(release) else { continue };
        // The real nvcc builds all four.
        r.sb.real_nvcc()
            .args(["-ccbin", "g++-12"])
            .args(HARD_CODED)
            .args(["-c", "k.cu", "-o", "k.o"])
            .assert()
            .success();
        let four = set(&["sm_75", "sm_80", "sm_86", "ptx sm_86", "sm_89"]);
        assert_eq!(embedded(&r.cuobjdump, &r.sb.file("k.o")), four, "{release}");

        r.config("arch-flags = \"replace\"\n");
        assert_eq!(r.compile("9.0", false, HARD_CODED), set(&["sm_90"]), "{release} replace");
        r.config("arch-flags = \"respect\"\n");
        assert_eq!(r.compile("9.0", false, HARD_CODED), four, "{release} respect");
        r.config("arch-flags = \"append\"\n");
        let mut all = four.clone();
        all.insert("sm_90".into());
        assert_eq!(r.compile("9.0", false, HARD_CODED), all, "{release} append");
    }
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn replace_reaches_into_options_files_and_env_channels() {
    let Some(r) = real("13.0") else { return };
    let cfg = r.config("arch-flags = \"replace\"\n");
    r.sb.write("targets.opt", "-gencode arch=compute_75,code=sm_75 -DFROM_FILE=1\n");
    r.sb.write(
        "k2.cu",
        "#ifndef FROM_FILE\n#error the options file lost more than its target\n#endif\n__global__ void k() {}\n",
    );
    r.sb.nvcc()
        .env("NVCC_WRAPPER_CONFIG", &cfg)
        .env("NVCC_WRAPPER_CAPABILITIES", "8.6")
        .env("NVCC_PREPEND_FLAGS", "-arch=sm_80 -DFROM_ENV=1")
        .env("NVCC_APPEND_FLAGS", "--gpu-architecture sm_89")
        .args(["-optf", "targets.opt", "-c", "k2.cu", "-o", "k2.o"])
        .assert()
        .success();
    assert_eq!(embedded(&r.cuobjdump, &r.sb.file("k2.o")), set(&["sm_86"]));
}

/// Issue 12: what remains of an options file under `replace` is read by nvcc's own options-file rules, so a word
/// that nvcc reads as one (`"-DB=\"p q\""` is `-DB=p q`) stays one; it used to be copied into argv and re-split.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn replace_keeps_every_remaining_word_of_an_options_file_as_nvcc_reads_it() {
    for release in ["12.4", "13.0"] {
        let Some(r) = real(release) else { continue };
        let cfg = r.config("arch-flags = \"replace\"\n");
        r.sb.write("words.opt", "-gencode arch=compute_75,code=sm_75\n\"-DB=\\\"p q\\\"\" -DC=a\\\"b \"-DSP=x y\"\n");
        r.sb.write(
            "words.cu",
            "#define p 40\n#define q +2\n#define ab 1\n#define x 3\n#define y *4\n\
             static_assert(B == 42 && C == 1 && SP == 12, \"the options file's words changed\");\n\
             __global__ void k() {}\n",
        );
        for (how, nvcc) in [("nvcc alone", r.sb.real_nvcc()), ("the wrapper", r.sb.nvcc())] {
            let mut nvcc = nvcc;
            let out = nvcc
                .env("NVCC_WRAPPER_CONFIG", &cfg)
                .env("NVCC_WRAPPER_CAPABILITIES", "8.6")
                .args(["-ccbin", "g++-12", "-optf", "words.opt", "-c", "words.cu", "-o", "words.o"])
                .output()
                .unwrap();
            assert!(out.status.success(), "{release}, {how}: {}", stderr(&out));
        }
        // Through the wrapper, only the configured target is embedded.
        assert_eq!(embedded(&r.cuobjdump, &r.sb.file("words.o")), set(&["sm_86"]), "{release}");
    }
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn each_release_refuses_what_it_cannot_build_before_nvcc_runs() {
    // (release, capabilities, what the wrapper says)
    let rows = [
        ("11.8", "8.6;9.0a", "9.0a needs nvcc 12.0 or later"),
        ("12.4", "10.0f", "10.0f needs nvcc 12.9 or later"),
        ("13.0", "10.1", "10.1 was last accepted by nvcc 12.9"),
        ("13.5", "10.1", "10.1 was last accepted by nvcc 12.9"),
        ("13.0", "7.0;8.6", "7.0 was last accepted by nvcc 12.9"),
        ("13.5", "7.0", "7.0 was last accepted by nvcc 12.9"),
    ];
    for (release, caps, says) in rows {
        let Some(r) = real(release) else { continue };
        let out =
            r.sb.nvcc()
                .env("NVCC_WRAPPER_CONFIG", r.sb.file("wrapper.toml"))
                .env("NVCC_WRAPPER_CAPABILITIES", caps)
                .args(["-c", "k.cu", "-o", "refused.o"])
                .output()
                .unwrap();
        assert_eq!(out.status.code(), Some(65), "{release} {caps}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(&format!("nvcc {release} cannot build")) && err.contains(says), "{err}");
        assert!(err.contains(&format!("help: nvcc {release} accepts, for x86_64-linux: ")), "{err}");
        assert!(!r.sb.file("refused.o").exists());
        // The real nvcc refuses the same capability: the table says what the release does.
        let bad = caps.split(';').find(|c| says.starts_with(c)).unwrap();
        let flag = format!("-gencode=arch=compute_{0},code=sm_{0}", bad.replace('.', ""));
        let direct =
            r.sb.real_nvcc().args(["-ccbin", "g++-12", &flag, "-c", "k.cu", "-o", "direct.o"]).output().unwrap();
        assert!(!direct.status.success(), "nvcc {release} accepted {flag}");
    }
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn jetson_orin_is_refused_for_x86_and_expands_for_jetson() {
    for release in ["12.4", "13.0"] {
        let Some(r) = real(release) else { continue };
        let out =
            r.sb.nvcc()
                .env("NVCC_WRAPPER_CONFIG", r.sb.file("wrapper.toml"))
                .env("NVCC_WRAPPER_CAPABILITIES", "8.7")
                .args(["-c", "k.cu", "-o", "orin.o"])
                .output()
                .unwrap();
        assert_eq!(out.status.code(), Some(65), "{release}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains("8.7 is Jetson Orin, which the target x86_64-linux is not"), "{err}");
        if release == "12.4" {
            assert!(err.contains("set `[target] system = \"aarch64-linux\"` and `platform = \"jetson\"`"), "{err}");
        } else {
            // 13.0 ships no Jetson target, and its Arm-server target serves Orin only from 13.2.
            assert!(err.contains("no target platform of nvcc 13.0 serves Jetson Orin"), "{err}");
        }
    }
    // For a Jetson target the expansion is plain sm_87; nvcc compiles it (a native object: the device code is the
    // same whatever the host CPU), and it embeds exactly that.
    let Some(r) = real("12.4") else { return };
    let out = assert_cmd::Command::new(WRAPPER)
        .args([
            "gencode",
            "--cuda-version",
            "12.4",
            "--system",
            "aarch64-linux",
            "--platform",
            "jetson",
            "--forward-compat",
            "8.7",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let flags: Vec<String> = stdout(&out).lines().map(String::from).collect();
    assert_eq!(flags, ["-gencode=arch=compute_87,code=sm_87", "-gencode=arch=compute_87,code=compute_87"]);
    r.sb.real_nvcc().args(["-ccbin", "g++-12"]).args(&flags).args(["-c", "k.cu", "-o", "orin.o"]).assert().success();
    assert_eq!(embedded(&r.cuobjdump, &r.sb.file("orin.o")), set(&["sm_87", "ptx sm_87"]));
}

/// What one way of asking said for a list: the GPU flags it gives, or its error (exit status and first line).
#[derive(Debug, PartialEq)]
enum Answer {
    Flags(Vec<String>),
    Refused(Option<i32>, String),
}

fn answer(out: &std::process::Output, flags: impl FnOnce(&str) -> Vec<String>) -> Answer {
    match out.status.success() {
        true => Answer::Flags(flags(&stdout(out))),
        false => Answer::Refused(out.status.code(), stderr(out).lines().next().unwrap_or("").to_string()),
    }
}

/// The `-gencode` flags the gpu step of `explain --format json` adds.
fn explained(json: &str) -> Vec<String> {
    let plan: serde_json::Value = serde_json::from_str(json).unwrap();
    let changes = plan["changes"].as_array().unwrap().iter();
    let gpu = changes.filter(|c| c["step"] == "gpu" && c["action"] == "add");
    gpu.flat_map(|c| c["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap().to_string())).collect()
}

/// The images nvcc's `--dryrun` would put in the fatbinary: `elf 86`, `ptx 90`.
fn images(dryrun: &str) -> BTreeSet<String> {
    let words = dryrun.split_whitespace().filter_map(|w| w.trim_matches('"').strip_prefix("--image3=kind="));
    words.map(|w| w.split(",file=").next().unwrap().replace(",sm=", " ")).collect()
}

/// `nvcc-wrapper gencode ARGS` in the sandbox, with `config`.
fn gencode_says(sb: &RealSandbox, config: &std::path::Path, args: &[&str]) -> Answer {
    let mut cmd = assert_cmd::Command::new(WRAPPER);
    sb.prepare(&mut cmd);
    let out = cmd.env("NVCC_WRAPPER_CONFIG", config).arg("gencode").args(args).output().unwrap();
    answer(&out, |text| text.lines().map(String::from).collect())
}

/// What `nvcc-wrapper explain` adds for `-c k.cu` with `list` as the configured capabilities, in the sandbox.
fn explain_says(sb: &RealSandbox, config: &std::path::Path, list: &str) -> Answer {
    let mut cmd = assert_cmd::Command::new(WRAPPER);
    sb.prepare(&mut cmd);
    cmd.env("NVCC_WRAPPER_CONFIG", config).env("NVCC_WRAPPER_CAPABILITIES", list);
    answer(&cmd.args(["explain", "--format", "json", "--", "-c", "k.cu"]).output().unwrap(), explained)
}

/// Issue 39: `gencode`, `explain` and the drop-in give the same GPU targets for the same list on the same machine,
/// for every dialect and for `all`, `all-major` and `native`, with each release here: `gencode` learns the release
/// from the nvcc on PATH as the drop-in does, and builds for this machine's platform unless told another. On x86_64
/// the real nvcc's `--dryrun` says what each builds (the drop-in's call, and nvcc given `gencode`'s flags), so the
/// flags are compared by what nvcc makes of them; for the cross targets (a target root each) `gencode --system
/// --platform` against `explain` with that `[target]`. A refusal is the same error from all.
#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn gencode_explain_and_the_drop_in_agree_on_each_machine() {
    const LISTS: [&str; 10] =
        ["all", "all-major", "native", "8.6;9.0a", "7.0;8.6", "86;90-virtual", "8.7", "compute_80", "7.5+PTX", "10.0f"];
    if real_program("g++-12").is_none() {
        return;
    }
    for &release in releases() {
        let Some(root) = real_toolkit(release) else { continue };
        let sb = RealSandbox::new(&root);
        sb.write("k.cu", KERNEL_CU);
        let config = sb.write("wrapper.toml", HOST);
        for list in LISTS {
            let (gencode, explain) = (gencode_says(&sb, &config, &[list]), explain_says(&sb, &config, list));
            assert_eq!(gencode, explain, "nvcc {release}, {list:?}: gencode and explain");
            let builds = (list != "10.0f" || release >= "12.9") && (list != "7.0;8.6" || release < "13");
            let builds = builds && (list != "8.6;9.0a" || release >= "12") && list != "8.7";
            // `native` builds only where a GPU is visible: all three refuse it alike elsewhere.
            if list != "native" {
                assert_eq!(matches!(gencode, Answer::Flags(_)), builds, "nvcc {release}, {list:?}: {gencode:?}");
            }
            let out = sb
                .nvcc()
                .env("NVCC_WRAPPER_CONFIG", &config)
                .env("NVCC_WRAPPER_CAPABILITIES", list)
                .args(["--dryrun", "-c", "k.cu", "-o", "k.o"])
                .output()
                .unwrap();
            let drop_in = answer(&out, |_| Vec::new());
            match (&gencode, drop_in) {
                (Answer::Flags(flags), Answer::Flags(_)) => {
                    let direct =
                        sb.real_nvcc().args(["-ccbin", "g++-12"]).args(flags).args(["--dryrun", "-c", "k.cu"]).output();
                    let direct = direct.unwrap();
                    assert!(direct.status.success(), "nvcc {release} refused {flags:?}: {}", stderr(&direct));
                    let built = images(&stderr(&out));
                    assert!(!built.is_empty(), "nvcc {release}, {list:?}: no images in {}", stderr(&out));
                    assert_eq!(built, images(&stderr(&direct)), "nvcc {release}, {list:?}: the drop-in and gencode");
                }
                (gencode, drop_in) => {
                    assert_eq!(*gencode, drop_in, "nvcc {release}, {list:?}: gencode and the drop-in")
                }
            }
        }
    }
    // The cross targets: each with its own target root, the release's toolkit and its cross compiler.
    let cross = [("sbsa-11.8", "sbsa"), ("sbsa-12.4", "sbsa"), ("sbsa-13.0", "sbsa"), ("jetson-12.4", "jetson")];
    for (name, platform) in cross {
        let release = cross_target_release(name);
        let (Some(root), Some(target_root)) = (real_toolkit(release), real_target_root(name)) else { continue };
        let sb = RealSandbox::new(&root);
        sb.write("k.cu", KERNEL_CU);
        let target = format!(
            "[target]\nsystem = \"aarch64-linux\"\nplatform = \"{platform}\"\ncuda-root = \"{}\"\n",
            target_root.display()
        );
        let config = sb.write("wrapper.toml", &format!("{HOST}{target}"));
        for list in LISTS {
            let args = ["--system", "aarch64-linux", "--platform", platform, list];
            let gencode = gencode_says(&sb, &sb.write("empty.toml", ""), &args);
            let explain = explain_says(&sb, &config, list);
            // An error may name the setting or the flag that chose the target: the same sentence otherwise.
            let said = |a: Answer| match a {
                Answer::Refused(code, line) => Answer::Refused(
                    code,
                    line.replace("`--system`", "`[target] system`").replace("`--platform`", "`[target] platform`"),
                ),
                flags => flags,
            };
            let builds = match platform {
                "jetson" => ["all", "8.7"].contains(&list),
                _ => list == "86;90-virtual" || list == "compute_80" || list == "7.5+PTX",
            };
            if builds {
                assert!(matches!(gencode, Answer::Flags(_)), "{name}, {list:?}: {gencode:?}");
            }
            assert_eq!(said(gencode), said(explain), "{name}, {list:?}: gencode and explain");
        }
    }
}
