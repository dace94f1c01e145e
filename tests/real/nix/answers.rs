//! makeNvccWrapper's compat.nix against the binary, over the whole table (issue 32): every release the tables know (and one they
//! do not), every target Nix can name (native and cross, Jetson and not, and systems nvcc does not build for), every
//! word of every dialect alone, every pair of capabilities and runs of three and four, with and without forward
//! compatibility, and sets of host compilers, alone and with capabilities refused too (issue 40). Nix answers
//! each request by looking makeNvccWrapper's answers.json up; the binary answers it with the planner's own checks
//! (`nvcc_wrapper::nix_answers::refusal`); both must say the same, word for word, or nothing.

use std::process::Command;

use serde::{Deserialize, Serialize};

use super::*;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Request {
    release: String,
    system: &'static str,
    redist: Option<&'static str>,
    cross: bool,
    capabilities: Vec<String>,
    forward_compat: bool,
    compilers: Option<Compilers>,
}

#[derive(Clone, Serialize)]
struct Compiler {
    path: &'static str,
    family: &'static str,
    version: &'static str,
}

#[derive(Clone, Serialize)]
struct Compilers {
    stdenv: Compiler,
    candidates: Vec<Compiler>,
}

const fn compiler(path: &'static str, family: &'static str, version: &'static str) -> Compiler {
    Compiler { path, family, version }
}

/// Sets of host compilers: accepted by every release, by some, by none; a candidate that rescues the stdenv one; a
/// candidate that is the stdenv compiler again (named once); a version that is a bare major.
fn compiler_sets() -> Vec<Compilers> {
    let gcc = |v| compiler("/nix/store/a-gcc/bin/g++", "gcc", v);
    let old = compiler("/nix/store/b-gcc-11/bin/g++", "gcc", "11.4.0");
    let clang = |v| compiler("/nix/store/c-clang/bin/clang++", "clang", v);
    vec![
        Compilers { stdenv: gcc("9.5.0"), candidates: vec![] },
        Compilers { stdenv: gcc("12.2.0"), candidates: vec![] },
        Compilers { stdenv: gcc("15.1.0"), candidates: vec![] },
        Compilers { stdenv: gcc("99.1.0"), candidates: vec![old.clone()] },
        Compilers { stdenv: gcc("99.1.0"), candidates: vec![clang("99.0.1"), gcc("99.1.0")] },
        Compilers { stdenv: gcc("13"), candidates: vec![] },
        Compilers { stdenv: clang("17.0.6"), candidates: vec![clang("17.0.6"), clang("20.1.8")] },
        Compilers { stdenv: clang("21.1.0"), candidates: vec![old] },
    ]
}

#[derive(Debug, PartialEq, Eq, Deserialize)]
struct Said {
    error: String,
    help: String,
}

/// (Nix system, Nixpkgs' redist system, cross), and whether pairs are asked for there too.
const TARGETS: [(&str, Option<&str>, bool, bool); 8] = [
    ("x86_64-linux", None, false, true),
    ("aarch64-linux", Some("linux-aarch64"), false, true),
    ("aarch64-linux", Some("linux-sbsa"), true, true),
    ("aarch64-linux", None, true, false),
    ("aarch64-linux", Some("linux-aarch64"), true, false),
    ("powerpc64le-linux", None, true, false),
    ("x86_64-linux", Some("linux-aarch64"), false, false),
    ("riscv64-linux", None, true, false),
];

fn requests(answers: &serde_json::Value) -> Vec<Request> {
    let names = |v: &serde_json::Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    let capabilities: Vec<String> =
        answers["capabilities"].as_array().unwrap().iter().map(|c| c.as_str().unwrap().to_string()).collect();
    // Every word of every dialect, the keywords, and capabilities no table knows.
    let mut words = names(&answers["words"]);
    words.extend(["all", "all-major", "native", "9.5", "13.0"].map(String::from));
    let mut releases = names(&answers["releases"]);
    // A release the tables do not know, and one given as nvcc's full version (named by its release).
    releases.extend(["12.7".into(), "12.4.131".into()]);
    let mut out = Vec::new();
    for release in &releases {
        for (system, redist, cross, pairs) in TARGETS {
            for forward_compat in [true, false] {
                let with = |capabilities: Vec<String>, compilers: Option<Compilers>| Request {
                    release: release.clone(),
                    system,
                    redist,
                    cross,
                    capabilities,
                    forward_compat,
                    compilers,
                };
                let request = |capabilities: Vec<String>| with(capabilities, None);
                out.extend(words.iter().map(|w| request(vec![w.clone()])));
                if pairs {
                    for (i, a) in capabilities.iter().enumerate() {
                        out.extend(capabilities[i + 1..].iter().map(|b| request(vec![a.clone(), b.clone()])));
                    }
                    // Runs of three and four in the binary's order (pairs, problems and PTX together), and
                    // keywords among capabilities.
                    for run in [3, 4] {
                        out.extend(capabilities.windows(run).map(|w| request(w.to_vec())));
                    }
                    out.push(request(["all", "8.6", "9.0a"].map(String::from).to_vec()));
                    out.push(request(["8.6", "all-major", "10.0", "10.0f"].map(String::from).to_vec()));
                }
                // Host compilers: with a capability every release accepts, and with one none does (the order).
                for set in compiler_sets() {
                    out.push(with(vec!["8.6".into()], Some(set.clone())));
                    out.push(with(vec!["3.5".into(), "8.6".into()], Some(set)));
                }
            }
        }
    }
    out
}

#[test]
#[ignore = "needs Nix: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn nix_answers_every_request_of_the_whole_table_as_the_binary_does() {
    let Some(lib) = nixpkgs_lib() else { return };
    let answers: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(Path::new(REPO).join(nvcc_wrapper::nix_answers::FILE)).unwrap())
            .unwrap();
    let requests = requests(&answers);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("requests.json");
    std::fs::write(&file, serde_json::to_string(&requests).unwrap()).unwrap();
    let expr = format!(
        "let lib = import {}; compat = import {}/{MAKE_NVCC_WRAPPER}/compat.nix {{ inherit lib; }}; in \
         map compat.refusal (lib.importJSON {})",
        path_str(&lib),
        REPO,
        path_str(&file)
    );
    let mut cmd: Command = nix("nix-instantiate").unwrap();
    let said: Vec<Option<Said>> =
        serde_json::from_str(&ok(cmd.args(["--eval", "--strict", "--json", "-E", &expr]))).unwrap();
    assert_eq!(said.len(), requests.len());

    let mut differ = Vec::new();
    let (mut refused, mut accepted, mut no_compiler) = (0, 0, 0);
    for (request, nix) in requests.iter().zip(said) {
        use nvcc_wrapper::nix_answers as answers;
        let one = |c: &Compiler| answers::Compiler { path: c.path, family: c.family, version: c.version };
        let candidates: Vec<answers::Compiler> =
            request.compilers.iter().flat_map(|c| c.candidates.iter().map(one)).collect();
        let binary = answers::refusal(&answers::Request {
            release: &request.release,
            system: request.system,
            redist: request.redist,
            cross: request.cross,
            capabilities: &request.capabilities,
            forward_compat: request.forward_compat,
            compilers: request
                .compilers
                .as_ref()
                .map(|c| answers::Compilers { stdenv: one(&c.stdenv), candidates: &candidates }),
        })
        .map(|s| Said { error: s.error, help: s.help });
        match &binary {
            Some(s) if s.error.contains("host compiler") => no_compiler += 1,
            Some(_) => refused += 1,
            None => accepted += 1,
        }
        if nix != binary {
            differ.push(format!(
                "{} {} {:?} cross={} {:?} fc={}:\n  nix:    {nix:?}\n  binary: {binary:?}",
                request.release,
                request.system,
                request.redist,
                request.cross,
                request.capabilities,
                request.forward_compat
            ));
        }
    }
    assert!(
        differ.is_empty(),
        "{} of {} requests differ; the first:\n{}",
        differ.len(),
        requests.len(),
        differ[..differ.len().min(8)].join("\n")
    );
    // Not vacuous: the table is walked, and every kind of answer occurs in numbers.
    assert!(
        requests.len() > 100_000 && refused > 10_000 && accepted > 10_000 && no_compiler > 500,
        "{} requests: {refused} refused, {accepted} accepted, {no_compiler} for the host compilers",
        requests.len()
    );
    eprintln!(
        "note: makeNvccWrapper's compat.nix and the binary agree on {} requests ({refused} refused for the release, target or \
         capabilities, {no_compiler} for the host compilers, {accepted} accepted)",
        requests.len()
    );
}
