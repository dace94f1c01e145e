//! This project's tables against Nixpkgs' own (issue 58: one source of truth for the answers): every fact where what
//! `nvcc-wrapper compat show` says of a release (its newest GCC and Clang, the capabilities it compiles for) and what
//! Nixpkgs' `_cuda.db` says differ, as of the commits tests/fixtures/nixpkgs/cuda-db.toml names. Each difference is
//! recorded there with which side the real toolkits support and how that is known; a difference that appears or
//! goes away (a row added on either side) fails here until it is recorded.

// The test reads its own switch (NVCC_WRAPPER_UPDATE_REFERENCE, as the reference pages): not the wrapper's state.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeSet;

use crate::support::*;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/nixpkgs/cuda-db.toml");

/// What `compat show RELEASE` says: the newest GCC and Clang, and the capabilities.
fn ours(sb: &Sandbox, release: &str) -> (u64, u64, BTreeSet<String>) {
    let out = sb.wrapper_cli().args(["compat", "show", release]).output().unwrap();
    assert!(out.status.success(), "{release}: {}", stderr(&out));
    let text = stdout(&out);
    let line = |label: &str| text.lines().find_map(|l| l.trim().strip_prefix(label)).unwrap().trim().to_string();
    let compilers = line("host compilers:");
    let newest = |family: &str| -> u64 {
        let at = compilers.find(&format!("{family} up to ")).unwrap_or_else(|| panic!("{release}: {compilers}"));
        let rest = &compilers[at + family.len() + " up to ".len()..];
        rest.split(|c: char| !c.is_ascii_digit()).next().unwrap().parse().unwrap()
    };
    let capabilities = line("GPU capabilities:").split_whitespace().map(str::to_string).collect();
    (newest("GCC"), newest("Clang"), capabilities)
}

/// The releases of `order` in `set`, as runs of neighbours (`11.0-12.9, 13.0`), or "none".
fn runs(order: &[String], set: &BTreeSet<&str>) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut start: Option<usize> = None;
    for i in 0..=order.len() {
        let inside = i < order.len() && set.contains(order[i].as_str());
        match (inside, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                parts.push(if s == i - 1 { order[s].clone() } else { format!("{}-{}", order[s], order[i - 1]) });
                start = None;
            }
            _ => {}
        }
    }
    if parts.is_empty() {
        "none".to_string()
    } else {
        parts.join(", ")
    }
}

fn release_key(release: &str) -> (u64, u64) {
    let (major, minor) = release.split_once('.').unwrap();
    (major.parse().unwrap(), minor.parse().unwrap())
}

#[test]
fn every_difference_from_nixpkgs_tables_is_recorded_with_what_the_toolkits_say() {
    let fixture: toml::Table = toml::from_str(&std::fs::read_to_string(FIXTURE).unwrap()).unwrap();
    let sb = Sandbox::new();
    let releases = fixture["release"].as_array().unwrap();
    let order: Vec<String> = releases.iter().map(|r| r["nvcc"].as_str().unwrap().to_string()).collect();
    let mut found: Vec<(String, String, String)> = Vec::new();
    let mut accepted: Vec<(String, BTreeSet<String>)> = Vec::new();
    for row in releases {
        let release = row["nvcc"].as_str().unwrap();
        let (gcc, clang, capabilities) = ours(&sb, release);
        for (family, newest) in [("gcc", gcc), ("clang", clang)] {
            let theirs = row[family].as_array().unwrap()[1].as_integer().unwrap() as u64;
            if theirs != newest {
                found.push((format!("{release}: newest {family}"), newest.to_string(), theirs.to_string()));
            }
        }
        accepted.push((release.to_string(), capabilities));
    }
    // The oldest compiler: Nixpkgs records one for every release; this project's tables none (nvcc's headers refuse
    // only compilers too new, and a Nixpkgs package set holds none older than these).
    for family in ["gcc", "clang"] {
        let oldest: BTreeSet<i64> =
            releases.iter().map(|r| r[family].as_array().unwrap()[0].as_integer().unwrap()).collect();
        let oldest: Vec<String> = oldest.iter().map(i64::to_string).collect();
        found.push((format!("every release: oldest {family}"), "none".into(), oldest.join(", ")));
    }
    let nixpkgs_capabilities = fixture["capability"].as_array().unwrap();
    let mut every: BTreeSet<String> = accepted.iter().flat_map(|(_, c)| c.iter().cloned()).collect();
    every.extend(nixpkgs_capabilities.iter().map(|c| c["capability"].as_str().unwrap().to_string()));
    for capability in &every {
        let ours: BTreeSet<&str> =
            accepted.iter().filter(|(_, c)| c.contains(capability)).map(|(r, _)| r.as_str()).collect();
        let row = nixpkgs_capabilities.iter().find(|c| c["capability"].as_str() == Some(capability));
        let theirs: BTreeSet<&str> = match row {
            None => BTreeSet::new(),
            Some(row) => {
                let first = release_key(row["first"].as_str().unwrap());
                let last = row.get("last").map(|l| release_key(l.as_str().unwrap()));
                let within = |r: &&String| release_key(r) >= first && !matches!(last, Some(l) if release_key(r) > l);
                order.iter().filter(within).map(String::as_str).collect()
            }
        };
        if ours != theirs {
            found.push((format!("capability {capability}"), runs(&order, &ours), runs(&order, &theirs)));
        }
    }

    let recorded = fixture["disagreement"].as_array().expect("the fixture records the differences");
    let mut missing = Vec::new();
    for (about, ours, theirs) in &found {
        let entry = recorded.iter().find(|d| d["about"].as_str() == Some(about));
        let same = entry.is_some_and(|d| d["ours"].as_str() == Some(ours) && d["nixpkgs"].as_str() == Some(theirs));
        if !same {
            missing.push(format!("{{ about = {about:?}, ours = {ours:?}, nixpkgs = {theirs:?}, real = \"...\" }},"));
        }
    }
    assert!(
        missing.is_empty(),
        "differences not recorded (or recorded otherwise) in {FIXTURE}:\n{}",
        missing.join("\n")
    );
    for entry in recorded {
        let about = entry["about"].as_str().unwrap();
        assert!(found.iter().any(|(a, _, _)| a == about), "{about}: recorded, but the tables agree now");
        let real = entry.get("real").and_then(|r| r.as_str()).unwrap_or_default();
        assert!(real.len() > 20, "{about}: say which side the real toolkits support, and how that is known");
    }
}

/// One capability row of the fixture: Nixpkgs' facts.
struct Row {
    capability: String,
    first: (u64, u64),
    last: Option<(u64, u64)>,
    default_until: Option<(u64, u64)>,
    jetson: bool,
}

fn rows(fixture: &toml::Table) -> Vec<Row> {
    let key = |row: &toml::Value, name: &str| row.get(name).map(|v| release_key(v.as_str().unwrap()));
    let rows = fixture["capability"].as_array().unwrap().iter();
    rows.map(|row| Row {
        capability: row["capability"].as_str().unwrap().to_string(),
        first: key(row, "first").unwrap(),
        last: key(row, "last"),
        default_until: key(row, "default-until"),
        jetson: row.get("jetson").is_some_and(|j| j.as_bool() == Some(true)),
    })
    .collect()
}

/// Nixpkgs' `formatCapabilities`, from its documented rule (`_cuda/lib/strings.nix`): one `-gencode` of machine code
/// per capability, in the list's order, the suffix kept; with `cudaForwardCompat` (its default), PTX of the list's
/// last capability, suffix and all; the CMake string the capabilities without their dots, joined by `;`.
fn nixpkgs_flags(list: &[&str]) -> (Vec<String>, String) {
    let bare = |c: &str| c.replace('.', "");
    let mut flags: Vec<String> =
        list.iter().map(|c| format!("-gencode=arch=compute_{0},code=sm_{0}", bare(c))).collect();
    let last = bare(list.last().unwrap());
    flags.push(format!("-gencode=arch=compute_{last},code=compute_{last}"));
    (flags, list.iter().map(|c| bare(c)).collect::<Vec<_>>().join(";"))
}

/// The flag table (issue 58, item 3): for each release both tables know from 12.6, Nixpkgs' default list, the Jetson
/// lists (Orin, Xavier with Orin, Thor) and `8.6 9.0a`, Nixpkgs' `-gencode` flags and CMake string (from its rule)
/// beside the wrapper's (`gencode --forward-compat`), each difference named by the kind the page explains. The page,
/// docs/nixpkgs-flags.md, is written by this test (`NVCC_WRAPPER_UPDATE_REFERENCE=1`) and must match it; a
/// difference of no known kind fails.
#[test]
fn the_flag_table_names_every_difference_from_nixpkgs_flags() {
    let fixture: toml::Table = toml::from_str(&std::fs::read_to_string(FIXTURE).unwrap()).unwrap();
    let rows = rows(&fixture);
    let sb = Sandbox::new();
    let releases = ["12.6", "12.8", "12.9", "13.0"];
    let mut table = String::new();
    for release in releases {
        let at = release_key(release);
        let accepted = |r: &Row| r.first <= at && !matches!(r.last, Some(l) if at > l);
        let default: Vec<&str> = rows
            .iter()
            .filter(|r| accepted(r) && !r.jetson && !r.capability.ends_with(['a', 'f']))
            .filter(|r| !matches!(r.default_until, Some(u) if at > u))
            .map(|r| r.capability.as_str())
            .collect();
        let lists: [(&str, Vec<&str>, &[&str]); 5] = [
            ("Nixpkgs' default", default, &[]),
            ("Orin", vec!["8.7"], &["--system", "aarch64-linux", "--platform", "jetson"]),
            ("Xavier, Orin", vec!["7.2", "8.7"], &["--system", "aarch64-linux", "--platform", "jetson"]),
            ("Thor", vec!["11.0"], &["--system", "aarch64-linux", "--platform", "sbsa"]),
            ("8.6, 9.0a", vec!["8.6", "9.0a"], &[]),
        ];
        for (name, list, target) in lists {
            let unknown: Vec<&str> =
                list.iter().copied().filter(|c| !rows.iter().any(|r| r.capability == *c && accepted(r))).collect();
            let gencode = |format: &str| {
                let mut cmd = sb.wrapper_cli();
                cmd.args(["gencode", "--cuda-version", release, "--forward-compat", "--format", format]);
                cmd.args(target).args(&list).output().unwrap()
            };
            let (ours, ours_cmake) = (gencode("nvcc"), gencode("cmake"));
            let (theirs, theirs_cmake) = nixpkgs_flags(&list);
            let mut kinds = Vec::new();
            let (theirs_text, ours_text) = if !unknown.is_empty() {
                let why = format!("refused ({} unknown to {release})", unknown.join(", "));
                if ours.status.success() {
                    kinds.push("nixpkgs-refuses");
                    (why, stdout(&ours).lines().collect::<Vec<_>>().join(" "))
                } else {
                    kinds.push("both-refuse");
                    (why, refused(&ours))
                }
            } else if !ours.status.success() {
                kinds.push("wrapper-refuses");
                (theirs.join(" "), refused(&ours))
            } else {
                let ours: Vec<String> = stdout(&ours).lines().map(str::to_string).collect();
                let machine =
                    |flags: &[String]| flags.iter().filter(|f| f.contains("code=sm_")).cloned().collect::<Vec<_>>();
                let ptx = |flags: &[String]| {
                    flags.iter().filter(|f| f.contains("code=compute_")).cloned().collect::<Vec<_>>()
                };
                assert_eq!(machine(&ours), machine(&theirs), "{release} {name}: machine code differs, unexplained");
                if ptx(&ours) != ptx(&theirs) {
                    kinds.push("ptx-baseline");
                }
                let cmake = stdout(&ours_cmake).trim().to_string();
                if cmake != theirs_cmake {
                    kinds.push("cmake-notation");
                }
                (format!("{} / `{theirs_cmake}`", theirs.join(" ")), format!("{} / `{cmake}`", ours.join(" ")))
            };
            let kinds = if kinds.is_empty() { "none".to_string() } else { kinds.join(", ") };
            let list = list.join(" ");
            table += &format!("| {release} | {name}: `{list}` | {theirs_text} | {ours_text} | {kinds} |\n");
        }
    }
    let page = format!("{}{table}{}", FLAGS_HEAD, FLAGS_TAIL);
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/nixpkgs-flags.md");
    if std::env::var_os("NVCC_WRAPPER_UPDATE_REFERENCE").is_some_and(|v| v == "1") {
        std::fs::write(path, &page).unwrap();
    }
    let written = std::fs::read_to_string(path).unwrap_or_default();
    assert!(written == page, "{path} is not this table: NVCC_WRAPPER_UPDATE_REFERENCE=1 writes it\n{page}");
}

/// The wrapper's refusal, as a table cell: its error line.
fn refused(out: &std::process::Output) -> String {
    let err = stderr(out);
    let line = err.lines().find_map(|l| l.strip_prefix("nvcc-wrapper: error: ")).unwrap_or_else(|| panic!("{err}"));
    format!("refused: {}", line.replace('|', "\\|"))
}

const FLAGS_HEAD: &str = "# The wrapper's GPU flags beside Nixpkgs'

Written by `the_flag_table_names_every_difference_from_nixpkgs_flags` (tests/wrapper/nixpkgs_tables.rs) from
`nvcc-wrapper gencode --forward-compat` and Nixpkgs' `formatCapabilities`, as its documented rule says
(`pkgs/development/cuda-modules/_cuda/lib/strings.nix`; `cudaForwardCompat` true, its default), over Nixpkgs' own
capability table as tests/fixtures/nixpkgs/cuda-db.toml records it: for each release both tables know from 12.6, the
default list Nixpkgs derives for it, the Jetson lists and `8.6 9.0a`. Each cell holds the `-gencode` flags and the
CMake string (`CMAKE_CUDA_ARCHITECTURES`); the last column names each difference, explained below the table. The
machine code is the same wherever both build: the test fails otherwise, as on a difference of no kind below.

| release | list | Nixpkgs | nvcc-wrapper | differences |
|---|---|---|---|---|
";

const FLAGS_TAIL: &str = "
- **ptx-baseline**: forward-compatible PTX. Nixpkgs embeds the PTX of the list's last capability, suffix and all
  (`compute_90a`); PTX of an arch-specific target (`a`) or a family (`f`) runs only on that GPU or family, so it is
  no use to a newer one, which is what the PTX is there for. The wrapper embeds the PTX of the highest
  machine-code capability's baseline (`compute_90`), which every newer GPU can run (compat-data/README.md).
- **cmake-notation**: a bare number in `CMAKE_CUDA_ARCHITECTURES` asks CMake for machine code and PTX of that
  capability, so Nixpkgs' string builds PTX for every capability while its `-gencode` flags embed one; the wrapper
  writes `-real` and `-virtual` so that CMake builds exactly its `-gencode` flags.
- **wrapper-refuses**: Nixpkgs' capability table accepts the list for the release, the wrapper refuses it, with the
  reason in its cell: Orin on 13.0, whose linux-aarch64 toolkit NVIDIA does not ship (compat-data/platforms.toml);
  in Nixpkgs the missing redistributable stops it instead, which its capability table alone does not say.
- **nixpkgs-refuses**: Nixpkgs' table does not know a capability for the release, so its evaluation stops; the
  wrapper builds it (the table of differences, tests/fixtures/nixpkgs/cuda-db.toml, says which side the toolkits
  support).
- **both-refuse**: Nixpkgs' table does not know a capability for the release (its evaluation stops), nor does the
  wrapper build it.
";
