//! The change set for Nixpkgs (nix/nixpkgs/, issue 58), as Nixpkgs' CI and reviewers would meet it: each package
//! evaluates with `lib.fileset` aborting and import from derivation refused, its `meta` passes check-meta's types and
//! nixpkgs-vet's rules, its `pname` and `version` are literals (the version the checkout's), its source is fetched,
//! and no file of a package's directory names a path outside it.

use super::*;

/// Evaluate attribute `attr` of tests/nix/nixpkgs.nix as Nixpkgs' CI would (no import from derivation; the store
/// writable, so that a derivation's output read at evaluation is refused rather than missing).
fn evaluate(attr: &str) -> Option<Output> {
    let lib = nixpkgs_lib()?;
    if !can_build() {
        return None;
    }
    let mut cmd = nix("nix-instantiate")?;
    cmd.args(["--eval", "--strict", "--json", "--read-write-mode", "nixpkgs.nix", "-A", attr])
        .args(["--option", "allow-import-from-derivation", "false"])
        .args(["--arg", "nixpkgsLib", path_str(&lib)]);
    Some(run(&mut cmd))
}

fn json(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "{}{}", stdout(out), stderr(out));
    serde_json::from_str(&stdout(out)).unwrap()
}

#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn the_by_name_package_evaluates_as_nixpkgs_ci_evaluates_it() {
    let Some(out) = evaluate("byName") else { return };
    let p = json(&out);
    // A literal pname, the directory's name; a literal version, the checkout's.
    assert_eq!(p["pname"], "nvcc-wrapper");
    assert_eq!(p["version"], env!("CARGO_PKG_VERSION"));
    // A fetched source, of the release's tag: a derivation that nothing reads at evaluation (allow-import-from-
    // derivation is off here), and the crates by a hash, not a Cargo.lock read from the source.
    assert_eq!(p["srcIsDerivation"], true);
    assert_eq!(p["src"]["tag"], format!("v{}", env!("CARGO_PKG_VERSION")));
    assert_eq!(p["src"]["owner"], "nvcc-wrapper");
    assert_eq!(p["src"]["repo"], "nvcc-wrapper");
    assert!(p["cargoHash"].is_string() && p["src"]["hash"].is_string(), "{p}");
    assert_eq!(p["cargoBuildFlags"], serde_json::json!(["--package", "nvcc-wrapper"]));
    assert_eq!(p["cargoTestFlags"], serde_json::json!(["--package", "nvcc-wrapper"]));
    // What nixpkgs-vet asks of a new package since 2026.
    assert_eq!((&p["__structuredAttrs"], &p["strictDeps"]), (&serde_json::json!(true), &serde_json::json!(true)));
    // meta as check-meta (CI runs it fatal) and nixpkgs-vet want it.
    assert_eq!(p["metaProblems"], serde_json::json!([]));
    assert_eq!(p["descriptionProblems"], serde_json::json!([]));
    assert_eq!(p["homepage"], "https://github.com/nvcc-wrapper/nvcc-wrapper");
    assert_eq!(p["description"], env!("CARGO_PKG_DESCRIPTION"), "Cargo.toml and the package say the same");
    assert_eq!(p["mainProgram"], "nvcc-wrapper");
    assert_eq!(p["teams"], serde_json::json!(["CUDA"]));
    // passthru.tests: the binary is static and says its version.
    assert_eq!(p["tests"], serde_json::json!(["static"]));
    let script = p["staticTest"]["script"].as_str().unwrap();
    let version = format!("\"$exe\" --version | grep -qx 'nvcc-wrapper {}'\n", env!("CARGO_PKG_VERSION"));
    assert!(script.contains("grep -q 'static' \"$out\"\n") && script.contains(&version), "{script}");
    // The binary answers as the test expects.
    let said = std::process::Command::new(env!("CARGO_BIN_EXE_nvcc-wrapper")).arg("--version").output().unwrap();
    assert_eq!(stdout(&said).trim(), format!("nvcc-wrapper {}", env!("CARGO_PKG_VERSION")));
}

/// The checks above can fail: the same evaluation refuses the checkout's package (its source is a `lib.fileset`),
/// a read of the fetched source, the meta the package had before (homepage null), and a description worded as
/// Cargo.toml words it.
#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn nixpkgs_ci_s_rules_refuse_what_they_should() {
    let Some(out) = evaluate("checkoutSource") else { return };
    assert!(!out.status.success(), "{}", stdout(&out));
    assert!(stderr(&out).contains("lib.fileset is not available: Nixpkgs' CI evaluates with __allowFileset = false"));
    let out = evaluate("readsSource").unwrap();
    assert!(!out.status.success(), "{}", stdout(&out));
    assert!(stderr(&out).contains("because the option 'allow-import-from-derivation' is disabled"), "{}", stderr(&out));
    let refused = json(&evaluate("refused").unwrap());
    assert_eq!(
        refused["meta"],
        serde_json::json!([
            "meta.maintainer is not a key check-meta knows",
            "meta.homepage is not of the type check-meta wants"
        ])
    );
    assert_eq!(refused["description"], serde_json::json!(["it starts with an article", "it ends with punctuation"]));
}

/// The package directories of the change set: each `package.nix`'s directory under nix/nixpkgs/pkgs.
fn package_dirs() -> Vec<PathBuf> {
    let pkgs = Path::new(REPO).join("nix/nixpkgs/pkgs");
    let packages = nix_files().into_iter().filter(|f| f.starts_with(&pkgs) && f.ends_with("package.nix"));
    packages.map(|f| f.parent().unwrap().to_path_buf()).collect()
}

/// Nixpkgs' by-name rule, kept for every package of the change set: a package may name no file outside its own
/// directory. `nix-instantiate --parse` prints each path literal made absolute, so every absolute path into the
/// repository it prints must lie in the directory. And by-name's layout: `by-name/<first two letters>/<name>/`.
#[test]
#[ignore = "needs Nix and real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn no_package_of_the_change_set_names_a_file_outside_its_directory() {
    if nix_program("nix-instantiate").is_none() {
        return;
    }
    let dirs = package_dirs();
    let by_name = Path::new(REPO).join("nix/nixpkgs/pkgs/by-name/nv/nvcc-wrapper");
    assert!(dirs.contains(&by_name), "{dirs:?}");
    for dir in &dirs {
        if let Ok(rest) = dir.strip_prefix(Path::new(REPO).join("nix/nixpkgs/pkgs/by-name")) {
            let parts: Vec<&str> = rest.iter().map(|p| p.to_str().unwrap()).collect();
            assert_eq!(parts.len(), 2, "{}", dir.display());
            assert_eq!(parts[0], parts[1][..2].to_lowercase(), "by-name's shard of {}", parts[1]);
        }
        for entry in std::fs::read_dir(dir).unwrap() {
            let file = entry.unwrap().path();
            if !file.extension().is_some_and(|e| e == "nix") {
                continue;
            }
            let parsed = ok(nix("nix-instantiate").unwrap().arg("--parse").arg(&file));
            for (at, _) in parsed.match_indices(REPO) {
                let path: String =
                    parsed[at..].chars().take_while(|c| !c.is_whitespace() && !"();".contains(*c)).collect();
                assert!(
                    Path::new(&path).starts_with(dir),
                    "{} names {path}, outside its directory {}",
                    file.display(),
                    dir.display()
                );
            }
        }
    }
}
