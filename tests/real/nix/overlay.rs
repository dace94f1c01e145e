//! The overlay and package.nix, evaluated over stand-ins shaped as Nixpkgs'.

use super::*;

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn overlay_adds_the_wrapped_nvcc_and_step_two_makes_backend_stdenv_plain_stdenv() {
    let Some(lib) = nixpkgs_lib() else { return };
    // (Not `refusals`, which stop the evaluation.)
    let facts = |attr| eval_json("overlay.nix", Some(attr), &[("nixpkgsLib", path_str(&lib))], &[]);
    let (Some(native), Some(modules), Some(cross)) = (facts("native"), facts("nativeModules"), facts("cross")) else {
        return;
    };
    // Both shapes of Nixpkgs' `_cuda` (with `extensions`, and without: each CUDA set extended by overrideScope)
    // give the same package sets.
    assert_eq!(modules, native);
    let native = &native;
    // Step 1: the package set's values reach makeNvccWrapper: the same file as a call by hand.
    assert_eq!(native["wrapped"], native["byHand"]);
    let wrapped = native["wrapped"].as_str().unwrap();
    assert!(wrapped.contains("stdenv = { path = \"/stand-in/gcc-wrapper-14.2.0/bin/g++\""), "{wrapped}");
    assert!(wrapped.contains("candidates = [{ path = \"/stand-in/gcc-wrapper-13.3.0/bin/g++\""), "{wrapped}");
    assert!(wrapped.contains("capabilities = [\"8.6\"]"), "{wrapped}");
    assert_eq!(native["wrappedName"], "cuda_nvcc-wrapped-12.4.131");
    assert_eq!(native["packageName"], "nvcc-wrapper-0.1.0");
    // Step 1 alone changes nothing that exists.
    assert_eq!(native["step1"]["cudaNvcc"], "cuda_nvcc-12.4.131");
    assert_eq!(native["step1"]["backendStdenvCc"], "gcc-wrapper-13.3.0");
    // Step 2: backendStdenv is the stdenv (GCC 14), keeping the attributes Nixpkgs reads from it; cuda_nvcc is the
    // wrapped one, built from the unwrapped.
    let step2 = &native["step2"];
    assert_eq!(step2["backendStdenvCc"], "gcc-wrapper-14.2.0");
    assert_eq!(step2["backendStdenvIsStdenv"], true);
    assert_eq!(step2["cudaCapabilities"], serde_json::json!(["8.6"]));
    assert_eq!(step2["hasJetsonCudaCapability"], false);
    assert_eq!(step2["nvccHostCCMatchesStdenvCC"], true);
    assert_eq!(step2["cudaNvcc"], "cuda_nvcc-wrapped-12.4.131");
    assert_eq!(step2["unwrapped"], "cuda_nvcc-12.4.131");
    // Nixpkgs' own nvcc stays exactly Nixpkgs' under both steps: the same derivation as without the overlays, its
    // nvcc.profile naming Nixpkgs' backendStdenv compiler (GCC 13), not step 2's (GCC 14).
    let unwrapped = &native["unwrapped"];
    assert!(unwrapped["nixpkgs"]["drvPath"].as_str().unwrap().ends_with("-cuda_nvcc-12.4.131.drv"), "{unwrapped}");
    assert_eq!(unwrapped["step1"], unwrapped["nixpkgs"]);
    assert_eq!(unwrapped["step2"], unwrapped["nixpkgs"]);
    assert_eq!(unwrapped["nixpkgs"]["compilerBindir"], "/stand-in/gcc-wrapper-13.3.0/bin");
    assert_eq!(unwrapped["withStep2Stdenv"], "gcc-wrapper-14.2.0");
    // The example derivation: plain stdenv, the wrapped nvcc among its build tools.
    assert_eq!(native["example"]["nativeBuildInputs"], serde_json::json!(["cmake-3.30", "cuda_nvcc-wrapped-12.4.131"]));

    // A cross derivation's nativeBuildInputs get the build-host set's nvcc-wrapped: the aarch64 set's stdenv
    // compiler, capabilities and Jetson platform, and the aarch64 set's CUDA files as the target's.
    let cross = &cross;
    let wrapped = cross["wrapped"].as_str().unwrap();
    for line in [
        "[target]\nsystem = \"aarch64-linux\"\nplatform = \"jetson\"\ncuda-root = \"/stand-in/cuda-target-root-aarch64-unknown-linux-gnu-12.4\"\n",
        "capabilities = [\"8.7\"]",
        "[target.host-compiler]\nstdenv = { path = \"/stand-in/aarch64-unknown-linux-gnu-gcc-wrapper-14.2.0/bin/aarch64-unknown-linux-gnu-g++\"",
        "candidates = [{ path = \"/stand-in/aarch64-unknown-linux-gnu-gcc-wrapper-13.3.0/bin/aarch64-unknown-linux-gnu-g++\"",
    ] {
        assert!(wrapped.contains(line), "no {line:?} in:\n{wrapped}");
    }
    assert!(!wrapped.contains("\n[host-compiler]"), "{wrapped}");
    assert_eq!(cross["wrappedName"], "aarch64-unknown-linux-gnu-cuda_nvcc-wrapped-12.4.131");
    assert_eq!(
        cross["targetCudaRoot"],
        serde_json::json!(["cuda_cudart-aarch64-unknown-linux-gnu-12.4", "cuda_cccl-aarch64-unknown-linux-gnu-12.4"])
    );
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn overlay_on_a_nixpkgs_it_cannot_extend_says_what_it_needs() {
    let Some(lib) = nixpkgs_lib() else { return };
    let mut cmd = nix("nix-instantiate").unwrap();
    cmd.args(["--eval", "--strict", "overlay.nix", "-A", "unsupported", "--arg", "nixpkgsLib", path_str(&lib)]);
    let out = run(&mut cmd);
    let err = stderr(&out);
    assert!(!out.status.success(), "{}", stdout(&out));
    assert!(
        err.contains("error: nvcc-wrapper's overlay: cudaPackages_12_4 is not a scope (no `overrideScope`) and this Nixpkgs' `_cuda` has no `extensions`"),
        "{err}"
    );
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn package_nix_builds_this_crate_from_a_source_with_only_what_the_build_needs() {
    let Some(lib) = nixpkgs_lib() else { return };
    if !can_build() {
        return;
    }
    let expr = format!(
        r#"let
          lib = import {lib};
          standIn = name: {{ type = "derivation"; inherit name; outPath = "/stand-in/${{name}}"; }};
          # rustPlatform.buildRustPackage and runCommand, recording their arguments.
          p = import ../../nix/package.nix {{
            inherit lib;
            stdenv.hostPlatform = lib.systems.elaborate "x86_64-linux";
            rustPlatform.buildRustPackage = f: let a = f (a // {{ finalPackage = standIn "nvcc-wrapper-built" // {{ meta.mainProgram = "nvcc-wrapper"; }}; }}); in a;
            glibc = standIn "glibc" // {{ static = standIn "glibc-static"; }};
            file = standIn "file";
            runCommand = name: env: script: {{ inherit name script; nativeBuildInputs = map (d: d.name) env.nativeBuildInputs; }};
            installShellFiles = standIn "install-shell-files";
          }};
        in {{
          inherit (p) pname version cargoBuildFlags cargoTestFlags;
          buildInputs = map (d: d.name) p.buildInputs;
          nativeBuildInputs = map (d: d.name) p.nativeBuildInputs;
          inherit (p) postInstall;
          inherit (p.env) RUSTFLAGS;
          staticTest = p.passthru.tests.static;
          lockFile = toString p.cargoLock.lockFile;
          src = "${{p.src}}";
          meta = {{
            inherit (p.meta) description mainProgram;
            license = map (l: l.spdxId) p.meta.license;
            linux = builtins.elem "x86_64-linux" p.meta.platforms && builtins.elem "aarch64-linux" p.meta.platforms;
          }};
        }}"#,
        lib = lib.display()
    );
    // --read-write-mode: the filtered source is copied into the store, as a build would.
    let Some(mut cmd) = nix("nix-instantiate") else { return };
    let text = ok(cmd.args(["--eval", "--strict", "--json", "--read-write-mode", "-E", &expr]));
    let p: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(p["pname"], env!("CARGO_PKG_NAME"));
    assert_eq!(p["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(p["lockFile"], format!("{REPO}/Cargo.lock"));
    assert_eq!(p["cargoBuildFlags"], serde_json::json!(["--package", "nvcc-wrapper"]));
    assert_eq!(p["cargoTestFlags"], serde_json::json!(["--package", "nvcc-wrapper"]));
    // The fast binary, as the README's install line: glibc linked in, so glibc's static library is an input; the
    // flag reaches the target's crates only (buildRustPackage passes --target).
    assert_eq!(p["RUSTFLAGS"], "-C target-feature=+crt-static");
    assert_eq!(p["buildInputs"], serde_json::json!(["glibc-static"]));
    // The man page, made from the code, goes to share/man/man1 (Nixpkgs' installManPage).
    assert_eq!(p["nativeBuildInputs"], serde_json::json!(["install-shell-files"]));
    assert_eq!(p["postInstall"], "installManPage docs/man/nvcc-wrapper.1\n");
    // passthru.tests.static runs `file` on the built binary and fails unless it says static.
    let test = &p["staticTest"];
    assert_eq!(test["name"], "nvcc-wrapper-built-test-static");
    assert_eq!(test["nativeBuildInputs"], serde_json::json!(["file"]));
    let script = test["script"].as_str().unwrap();
    assert!(script.contains("exe=/stand-in/nvcc-wrapper-built/bin/nvcc-wrapper\n"), "{script}");
    assert!(script.contains("file -L \"$exe\" | tee \"$out\"\ngrep -q 'static' \"$out\"\n"), "{script}");
    assert_eq!(p["meta"]["description"], env!("CARGO_PKG_DESCRIPTION"));
    assert_eq!(p["meta"]["mainProgram"], "nvcc-wrapper");
    assert_eq!(p["meta"]["license"], serde_json::json!(["MIT", "Apache-2.0"]));
    assert_eq!(p["meta"]["linux"], true);

    let src = PathBuf::from(p["src"].as_str().unwrap());
    // lib.fileset.toSource names its store path "source".
    assert!(src.to_str().unwrap().ends_with("-source"), "{}", src.display());
    let mut kept = BTreeSet::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(&src).unwrap().to_str().unwrap().to_string();
            if path.is_dir() {
                stack.push(path);
            }
            kept.insert(rel);
        }
    }
    for wanted in [
        "Cargo.toml",
        "Cargo.lock",
        "build.rs",
        "benches/plan.rs",
        "src/main.rs",
        "src/plan/host_compiler/mod.rs",
        "compat-data/host-compilers.toml",
        "compat-data/platforms.toml",
        "tests/fakes/Cargo.toml",
        "tests/fixtures/probe",
        // Installed, and read with the reference pages by the unit tests that check them against the code.
        "docs/man/nvcc-wrapper.1",
        "docs/reference/exit-codes.md",
        "docs/reference/config.md",
    ] {
        assert!(kept.contains(wanted), "{wanted} is not in the source: {kept:?}");
    }
    for dropped in [
        "target",
        ".git",
        "README.md",
        "CONTRIBUTING.md",
        "docs/README.md",
        "docs/guide",
        "docs/nvcc-facts.md",
        "nix",
        "scripts",
        "examples",
        "fuzz",
        "benches/fatbin-load.c",
        "tests/wrapper",
        "tests/real",
        "tests/common",
        "tests/fakes/tests",
    ] {
        assert!(!kept.iter().any(|k| k == dropped || k.starts_with(&format!("{dropped}/"))), "{dropped} is kept");
    }
    // Every source file of the crate is there.
    for entry in std::fs::read_dir(Path::new(REPO).join("src")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        assert!(kept.contains(&format!("src/{name}")), "src/{name} is not in the source");
    }
}
