//! nix/compat.nix against the binary, over the whole table (issue 32): every release the tables know (and one they
//! do not), every target Nix can name (native and cross, Jetson and not, and systems nvcc does not build for), every
//! word of every dialect alone and every pair of capabilities, with and without forward compatibility. Nix answers
//! each request by looking nix/answers.json up; the binary answers it with the planner's own checks
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
    releases.push("12.7".into());
    let mut out = Vec::new();
    for release in &releases {
        for (system, redist, cross, pairs) in TARGETS {
            for forward_compat in [true, false] {
                let request = |capabilities: Vec<String>| Request {
                    release: release.clone(),
                    system,
                    redist,
                    cross,
                    capabilities,
                    forward_compat,
                };
                out.extend(words.iter().map(|w| request(vec![w.clone()])));
                if pairs {
                    for (i, a) in capabilities.iter().enumerate() {
                        out.extend(capabilities[i + 1..].iter().map(|b| request(vec![a.clone(), b.clone()])));
                    }
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
        serde_json::from_str(&std::fs::read_to_string(Path::new(REPO).join("nix/answers.json")).unwrap()).unwrap();
    let requests = requests(&answers);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("requests.json");
    std::fs::write(&file, serde_json::to_string(&requests).unwrap()).unwrap();
    let expr = format!(
        "let lib = import {}; compat = import {}/nix/compat.nix {{ inherit lib; }}; in \
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
    let (mut refused, mut accepted) = (0, 0);
    for (request, nix) in requests.iter().zip(said) {
        let binary = nvcc_wrapper::nix_answers::refusal(&nvcc_wrapper::nix_answers::Request {
            release: &request.release,
            system: request.system,
            redist: request.redist,
            cross: request.cross,
            capabilities: &request.capabilities,
            forward_compat: request.forward_compat,
        })
        .map(|s| Said { error: s.error, help: s.help });
        match &binary {
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
    // Not vacuous: the table is walked, and both answers occur in numbers.
    assert!(
        requests.len() > 100_000 && refused > 10_000 && accepted > 10_000,
        "{} requests: {refused} refused, {accepted} accepted",
        requests.len()
    );
    eprintln!(
        "note: nix/compat.nix and the binary agree on {} requests ({refused} refused, {accepted} accepted)",
        requests.len()
    );
}
