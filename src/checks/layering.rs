//! The module graph, read from the source: no import cycles between the top-level modules, imports pointing down
//! the pipe, and the OS reached only where the architecture says. A `use` that breaks a rule fails here, naming the
//! file and the import.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `src/`, except the crate root and the binary (which may reach everything).
pub(crate) fn sources() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&root, &mut files);
    files.retain(|f| {
        !matches!(f.strip_prefix(&root).unwrap().to_str(), Some("lib.rs" | "main.rs" | "checks/layering.rs"))
    });
    files.sort();
    files
}

/// The top-level module a file belongs to: `src/plan/gpu.rs` is `plan`. What the wrapper says (`error::output`) is a
/// node of its own, though it stands on the ground floor, so that the rules below can keep data and planning silent.
fn module_of(file: &Path) -> String {
    let rel = file.strip_prefix(Path::new(env!("CARGO_MANIFEST_DIR")).join("src")).unwrap();
    if rel == Path::new("error/output.rs") {
        return "output".to_string();
    }
    let first = rel.components().next().unwrap().as_os_str().to_str().unwrap();
    first.trim_end_matches(".rs").to_string()
}

/// The code of a file without its unit tests (`#[cfg(test)] mod tests` blocks, `tests.rs` files and the files of a
/// `tests/` directory beside them), which may use anything.
fn non_test_code(file: &Path) -> String {
    let in_tests = file.parent().is_some_and(|dir| dir.file_name().is_some_and(|n| n == "tests"));
    if in_tests || file.file_name().is_some_and(|n| n == "tests.rs") {
        return String::new();
    }
    let text = std::fs::read_to_string(file).unwrap();
    match text.find("#[cfg(test)]\nmod tests {") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// `crate::X` paths named in `code`, as top-level module names (`use crate::{a, b}` included); `crate::error::output`
/// as `output` (see `module_of`).
fn crate_imports(code: &str) -> BTreeSet<String> {
    let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    let mut found = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(output) = rest.strip_prefix("error::output") {
            if !output.starts_with(|c: char| c.is_alphanumeric() || c == '_') {
                found.insert("output".to_string());
                continue;
            }
        }
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            found.extend(group.split(',').map(|p| ident(p.trim())).filter(|m| !m.is_empty()));
        } else {
            found.insert(ident(rest));
        }
    }
    found.remove("");
    found
}

/// Top-level module -> the top-level modules its non-test code imports, with the file of each import.
fn graph() -> BTreeMap<String, BTreeMap<String, PathBuf>> {
    let mut edges: BTreeMap<String, BTreeMap<String, PathBuf>> = BTreeMap::new();
    for file in sources() {
        let from = module_of(&file);
        let entry = edges.entry(from.clone()).or_default();
        for to in crate_imports(&non_test_code(&file)) {
            if to != from {
                entry.entry(to).or_insert_with(|| file.clone());
            }
        }
    }
    edges
}

#[test]
fn the_reader_finds_imports_in_every_form() {
    let code = "use crate::args::Invocation;\nuse crate::{prepare, report};\nlet x = crate::probe::run();\n\
                use crate::error::output;\nuse crate::error::outputs;";
    let found = ["args", "error", "output", "prepare", "probe", "report"];
    assert_eq!(crate_imports(code), found.map(String::from).into());
    // The graph is not empty: the reader found real imports.
    assert!(graph()["plan"].contains_key("compat"));
}

#[test]
fn the_top_level_modules_have_no_import_cycle() {
    let edges = graph();
    // Depth-first search; a module met again while still on the path closes a cycle.
    fn visit(
        m: &str,
        edges: &BTreeMap<String, BTreeMap<String, PathBuf>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) {
        if done.contains(m) {
            return;
        }
        if let Some(at) = path.iter().position(|p| p == m) {
            let cycle: Vec<String> = path[at..].iter().cloned().chain([m.to_string()]).collect();
            let how: Vec<String> =
                cycle.windows(2).map(|w| format!("{} -> {} ({})", w[0], w[1], edges[&w[0]][&w[1]].display())).collect();
            panic!("import cycle: {}", how.join(", "));
        }
        path.push(m.to_string());
        for next in edges.get(m).into_iter().flat_map(|e| e.keys()) {
            visit(next, edges, path, done);
        }
        path.pop();
        done.insert(m.to_string());
    }
    let mut done = BTreeSet::new();
    for m in edges.keys() {
        visit(m, &edges, &mut Vec::new(), &mut done);
    }
}

#[test]
fn imports_point_down_the_pipe() {
    // (module, modules it must not import): data imports no configuration, probing and planning; probing imports
    // no planning; planning imports nothing that prepares, prints or runs.
    let personalities = ["cli", "pipeline", "prepare", "report", "output", "exec"];
    let rules: Vec<(&str, Vec<&str>)> = vec![
        ("compat", [&["config", "context", "probe", "plan", "args"][..], &personalities].concat()),
        // A stopped probe is said once, from deep inside a step (`output::warning_once`): probing may speak, not plan.
        ("probe", [&["plan", "config", "context", "cli", "pipeline", "prepare", "report", "exec"][..]].concat()),
        ("plan", personalities.to_vec()),
        ("args", [&["plan", "probe", "config"][..], &personalities].concat()),
        ("config", [&["plan", "probe", "args"][..], &personalities].concat()),
        // The Nix answers are the tables and the planner's own functions, written down: nothing of a call's (a
        // probed compiler's type, `probe::compiler::Known`, stands for the ones Nix names).
        ("nix_answers", [&["context", "args"][..], &personalities].concat()),
    ];
    let edges = graph();
    // Only the reference (which writes makeNvccWrapper's answers.json, in tests) and the wrapper's own command line (`compat
    // nix-answers` prints them) reach the Nix answers: no call of the drop-in does.
    for (module, imports) in &edges {
        let allowed = ["checks", "cli"].contains(&module.as_str());
        assert!(allowed || !imports.contains_key("nix_answers"), "{module} imports nix_answers");
    }
    for (module, forbidden) in rules {
        for (to, file) in &edges[module] {
            assert!(!forbidden.contains(&to.as_str()), "{module} must not import {to} ({})", file.display());
        }
    }
}

#[test]
fn only_probe_and_exec_start_programs() {
    for file in sources() {
        let module = module_of(&file);
        if module == "probe" || module == "exec" {
            continue;
        }
        let code = non_test_code(&file);
        for needle in ["Command::new", "process::Command", ".exec()"] {
            assert!(
                !code.contains(needle),
                "{} starts a program (`{needle}`): only probe and exec may",
                file.display()
            );
        }
    }
}

/// The keeper and its guard run Rust after `fork` (they allocate, they log): sound only while the wrapper has one
/// thread, the one a fork copies, so that no lock can be held by a thread the child lacks. No code of the wrapper's
/// starts another (issue 59); its tests may.
#[test]
fn the_wrapper_starts_no_thread() {
    for file in sources() {
        let code = non_test_code(&file);
        for needle in ["thread::spawn", "thread::scope", "thread::Builder", "spawn_blocking"] {
            assert!(!code.contains(needle), "{} starts a thread (`{needle}`): the wrapper forks", file.display());
        }
    }
}

/// Errors are data (issue 59): an `Error` is made only from a room's problem type, by the one `From` of
/// `error::Problem`; no call site assembles one from a message.
#[test]
fn errors_are_built_only_from_problem_types() {
    for file in sources() {
        if file.ends_with("error/mod.rs") {
            continue;
        }
        let code = non_test_code(&file);
        for needle in ["Error::new(", "Error { kind"] {
            // Not `io::Error::new` or `ProbeError::new`.
            let ours = |at: usize| !code[..at].ends_with("io::") && !code[..at].ends_with(char::is_alphanumeric);
            let built = code.match_indices(needle).any(|(at, _)| ours(at));
            assert!(
                !built,
                "{} builds an `Error` itself (`{needle}`): add a variant to the room's problem type (`error::Problem`)",
                file.display()
            );
        }
    }
}

#[test]
fn the_drop_in_reaches_no_clap_no_json_and_no_other_personality() {
    // clap parses only the wrapper's own command line (`cli`). JSON is read only from a toolkit's version.json
    // (probe/nvcc.rs: only when the release must be probed and the probe cache has no answer) and written only by
    // `cli` and `explain --format json` (report/json.rs). The drop-in's own steps import neither, nor another personality's module.
    for file in sources() {
        let module = module_of(&file);
        let code = non_test_code(&file);
        // `reference` renders the man page from clap's definition, in tests only (it is not compiled otherwise).
        if module != "cli" && module != "checks" {
            assert!(!code.contains("clap::"), "{} uses clap: only the wrapper's own command line may", file.display());
        }
        // `nix_answers` renders makeNvccWrapper's answers.json, for `reference` (in tests) and `compat nix-answers` only: no call
        // of the drop-in reaches it (imports_point_down_the_pipe).
        let json_allowed = ["cli", "checks", "nix_answers"].contains(&module.as_str());
        if !json_allowed && !file.ends_with("probe/nvcc.rs") && !file.ends_with("report/json.rs") {
            assert!(!code.contains("serde_json"), "{} uses JSON, which the drop-in must not reach", file.display());
        }
    }
    let edges = graph();
    for module in ["pipeline", "prepare", "plan", "probe", "config", "args", "exec", "context", "error"] {
        // `cli` holds every subcommand (doctor, check-reproducible, gencode ...).
        assert!(!edges[module].contains_key("cli"), "{module} imports cli");
    }
    // Not vacuous: the reader sees the drop-in's real imports and cli's clap.
    assert!(edges["pipeline"].contains_key("prepare"));
    assert!(non_test_code(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cli/mod.rs")).contains("clap::"));
}

/// The planning steps: the modules of `plan/` that implement `Step`, each a file or a directory.
fn steps() -> BTreeMap<String, Vec<PathBuf>> {
    let plan = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/plan");
    let mut steps: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for file in sources().into_iter().filter(|f| f.starts_with(&plan)) {
        let rel = file.strip_prefix(&plan).unwrap();
        let name = rel.components().next().unwrap().as_os_str().to_str().unwrap().trim_end_matches(".rs").to_string();
        steps.entry(name).or_default().push(file);
    }
    steps.retain(|_, files| files.iter().any(|f| non_test_code(f).contains("impl Step for")));
    steps
}

#[test]
fn planning_steps_never_import_each_other() {
    let steps = steps();
    // Not vacuous: the steps are found, the shared machinery is not one of them.
    for name in ["host_compiler", "cross", "gpu", "cuda_compat", "fatbin", "launcher"] {
        assert!(steps.contains_key(name), "no step {name}: {:?}", steps.keys());
    }
    assert!(!steps.contains_key("facts") && !steps.contains_key("model"));
    let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    for (step, files) in &steps {
        for file in files {
            let code = non_test_code(file);
            // `crate::plan::X`, and `super::X` from a step's own file (`super::super::X` from a file in its folder).
            let nested = file.parent().is_some_and(|d| !d.ends_with("plan"));
            let up = if nested { "super::super::" } else { "super::" };
            let mut named: Vec<String> = Vec::new();
            for prefix in ["crate::plan::", up] {
                for (at, _) in code.match_indices(prefix) {
                    let rest = &code[at + prefix.len()..];
                    match rest.strip_prefix('{') {
                        Some(group) => {
                            named.extend(group[..group.find('}').unwrap_or(0)].split(',').map(|p| ident(p.trim())))
                        }
                        None => named.push(ident(rest)),
                    }
                }
            }
            if let Some(other) = named.iter().find(|n| *n != step && steps.contains_key(*n)) {
                panic!(
                    "the step {step} imports the step {other} ({}): share a fact or an args query instead",
                    file.display()
                );
            }
        }
    }
}

#[test]
fn the_planner_reaches_the_file_system_only_through_probes() {
    let plan = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/plan");
    let files: Vec<PathBuf> = sources().into_iter().filter(|f| f.starts_with(&plan)).collect();
    assert!(files.len() >= 10, "the planner's files: {files:?}");
    for file in files {
        let code = non_test_code(&file);
        for needle in
            ["std::fs", "fs::", ".exists()", ".is_file()", ".is_dir()", "metadata(", "read_link", "canonicalize"]
        {
            assert!(
                !code.contains(needle),
                "{} asks the file system itself (`{needle}`): ask `Probes`",
                file.display()
            );
        }
    }
}

/// src/'s top holds the pipe's rooms and the pipe itself, no loose helper: a helper lives in the room it serves
/// (`error/` is the ground every room stands on: the error type, quoting, the bounded read).
#[test]
fn the_top_level_holds_only_the_pipes_rooms() {
    let rooms = [
        "args",
        "cli",
        "compat",
        "config",
        "context",
        "error",
        "exec",
        "nix_answers",
        "plan",
        "prepare",
        "probe",
        "report",
        // The checks of the source and the docs, compiled in tests only: this file and the reference pages' maker.
        "checks",
    ];
    // The pipe end to end, the crate's two roots, and this file.
    let files = ["lib.rs", "main.rs", "pipeline.rs"];
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found: Vec<String> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| !rooms.contains(&name.as_str()) && !files.contains(&name.as_str()))
        .collect();
    found.sort();
    assert!(found.is_empty(), "src/ holds {found:?}: move each into the room it serves (CONTRIBUTING.md)");
    assert!(rooms.iter().all(|r| src.join(r).is_dir()), "a room of the list is gone: take it off the list");
    // Sixteen entries at most, so that the pipe's rooms can be read at a glance (issue 59).
    assert!(rooms.len() + files.len() <= 16, "src/ holds more than 16 entries: give one room's work to another");
}

/// A test file a newcomer can find their way in: at most 800 lines (issue 51; a corpus of cases gets a harness file
/// of its own, as `tests/real/surroundings/` has).
#[test]
fn no_test_file_holds_more_than_800_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let (mut dirs, mut long) = (vec![root.clone()], Vec::new());
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let lines = std::fs::read_to_string(&path).unwrap().lines().count();
                if lines > 800 {
                    long.push(format!("{} ({lines} lines)", path.strip_prefix(&root).unwrap().display()));
                }
            }
        }
    }
    assert!(long.is_empty(), "split these test files (CONTRIBUTING.md's map of the tests): {long:?}");
}

/// A file a newcomer can hold: at most 500 lines of code before its tests (issue 48; the house style). A file that
/// is all tests (`tests.rs`, or under a `tests/` folder) is counted as tests.
#[test]
fn no_source_file_holds_more_than_500_lines_before_its_tests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut long = Vec::new();
    for file in sources() {
        let relative = file.strip_prefix(&root).unwrap();
        if relative.file_name().is_some_and(|n| n == "tests.rs")
            || relative.components().any(|c| c.as_os_str() == "tests")
        {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let code = text.lines().take_while(|l| !l.starts_with("#[cfg(test)]")).count();
        if code > 500 {
            long.push(format!("{} ({code} lines)", relative.display()));
        }
    }
    assert!(long.is_empty(), "split these into rooms of their own (CONTRIBUTING.md): {long:?}");
}
