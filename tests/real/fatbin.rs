//! Fatbin compression against real NVCC releases (issue 14): what the wrapper adds by default makes the object
//! smaller than nvcc's own default, keeps every target's machine code and the PTX (cuobjdump), links and runs; and a
//! user's own compression choice reaches nvcc as given, with nothing added. Needs real NVCC 12.4, 13.0 and 13.5, and
//! cuobjdump.

use std::collections::BTreeSet;
use std::path::Path;

use crate::support::*;

/// A release of each row of compat-data/fatbin.toml, and the newest.
const RELEASES: &[&str] = &["12.4", "13.0", "13.5"];

/// Three targets and forward-compatible PTX: enough for several images in the fatbin, quick enough to compile.
const CAPABILITIES: &str = "7.5;8.6;9.0";

/// Every image `cuobjdump --list-elf --list-ptx` names: `sm_86` for machine code, `ptx sm_90` for PTX.
fn listed(cuobjdump: &Path, object: &Path) -> BTreeSet<String> {
    let out = std::process::Command::new(cuobjdump).args(["--list-elf", "--list-ptx"]).arg(object).output().unwrap();
    assert!(out.status.success(), "cuobjdump {}: {}", object.display(), stderr(&out));
    stdout(&out)
        .lines()
        .filter_map(|l| {
            let kind = if l.starts_with("ELF file") {
                ""
            } else if l.starts_with("PTX file") {
                "ptx "
            } else {
                return None;
            };
            let sm = l.split('.').find(|part| part.starts_with("sm_"));
            Some(format!("{kind}{}", sm.unwrap_or_else(|| panic!("cuobjdump: {l}"))))
        })
        .collect()
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).len()
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn the_default_compression_makes_smaller_objects_that_keep_every_target_and_run() {
    let Some(cuobjdump) = real_tool("cuobjdump") else { return };
    let want: BTreeSet<String> = ["sm_75", "sm_86", "sm_90", "ptx sm_90"].map(String::from).into();
    for release in RELEASES {
        let Some(root) = real_toolkit(release) else { continue };
        let sb = RealSandbox::new(&root);
        sb.write("kernels.cu", include_str!("../../examples/kernels.cu"));
        let nvcc = |compress: &str, extra: &[&str]| {
            let mut cmd = sb.nvcc();
            cmd.env("NVCC_WRAPPER_CAPABILITIES", CAPABILITIES)
                .env("NVCC_WRAPPER_FORWARD_COMPAT", "1")
                .env("NVCC_WRAPPER_COMPRESS_FATBIN", compress)
                .args(extra);
            cmd
        };
        let compile = |compress: &str, extra: &[&str], object: &str| {
            let out = nvcc(compress, extra).args(["-c", "kernels.cu", "-o", object]).output().unwrap();
            assert!(out.status.success(), "nvcc {release} {extra:?}: {}", stderr(&out));
            let object = sb.file(object);
            assert_eq!(listed(&cuobjdump, &object), want, "nvcc {release} {extra:?}: {}", object.display());
            size(&object)
        };
        // On (unset is on) against off: the wrapper's addition is the only difference.
        let compressed = compile("", &[], "on.o");
        let plain = compile("0", &[], "off.o");
        assert!(compressed < plain, "nvcc {release}: {compressed} bytes compressed, {plain} without");
        // The compressed object links and runs up to the driver probe (on a GPU machine, runs its kernels).
        nvcc("", &[]).args(["on.o", "-o", "kernels"]).assert().success();
        let run = std::process::Command::new(sb.file("kernels")).output().unwrap();
        let text = stdout(&run);
        assert!(run.status.success(), "nvcc {release}: kernels failed: {text}{}", stderr(&run));
        assert!(
            text.starts_with("kernels: built and started, no GPU") || text.starts_with("kernels: ran correctly"),
            "nvcc {release}: {text}"
        );

        // The user's own choice: as given, nothing added; nvcc builds it.
        let mut choices = vec![&["--no-compress"][..], &["-Xfatbin=-compress-all"], &["-Xfatbin", "-compress-all"]];
        if !release.starts_with("12.") {
            choices.push(&["--compress-mode=speed"]);
        }
        for choice in choices {
            let dry = nvcc("", choice).env("NVCC_WRAPPER_DRY_RUN", "1").args(["-c", "kernels.cu"]).output().unwrap();
            let line = stdout(&dry);
            assert!(dry.status.success(), "{}", stderr(&dry));
            assert!(line.contains(&format!(" {} ", choice.join(" "))), "nvcc {release} {choice:?}: {line}");
            for ours in ["--compress-mode=size", "-Xfatbin=-compress-all"] {
                let expected = usize::from(choice.join(" ") == ours);
                assert_eq!(line.matches(ours).count(), expected, "nvcc {release} {choice:?}: {line}");
            }
            let bytes = compile("", choice, "user.o");
            if choice == ["--no-compress"] {
                assert!(bytes > plain, "nvcc {release}: --no-compress gave {bytes} bytes, nvcc's default {plain}");
            }
        }
    }
}
