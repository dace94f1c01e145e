//! docs/reliability.md's table of bad input, run row by row: each command in a fresh sandbox, its exit code, its one
//! `nvcc-wrapper: error:` line with the message and its `help:` line, and nvcc not run. The table is the
//! documentation; this keeps it true.

use crate::support::*;

/// A markdown code span's text: `` `a` ``, ``` `` a`b `` ```.
fn code_span(cell: &str) -> &str {
    let cell = cell.trim();
    let fence = cell.len() - cell.trim_start_matches('`').len();
    assert!(fence > 0, "not a code span: {cell:?}");
    let inner = &cell[fence..cell.len() - fence];
    // One space inside a fence pads a span that starts or ends with a backtick.
    if fence > 1 {
        inner.strip_prefix(' ').unwrap_or(inner).strip_suffix(' ').unwrap_or(inner.strip_prefix(' ').unwrap_or(inner))
    } else {
        inner
    }
}

/// (command, exit code, message) of every row between the markers.
fn rows() -> Vec<(String, i32, String)> {
    table("<!-- rows:", "<!-- end of rows -->")
}

/// The rows of the table between `start` and `end`.
fn table(start: &str, end: &str) -> Vec<(String, i32, String)> {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/reliability.md")).unwrap();
    let start = doc.find(start).expect("the rows marker");
    let end = doc.find(end).expect("the end marker");
    doc[start..end]
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|line| {
            let cells: Vec<&str> = line.trim().trim_matches('|').split(" | ").collect();
            assert_eq!(cells.len(), 3, "a row has three cells: {line}");
            let code = cells[1].trim().parse().unwrap_or_else(|_| panic!("exit code in: {line}"));
            // `—`: nothing is said.
            let message = if cells[2].trim() == "—" { "—" } else { code_span(cells[2]) };
            (code_span(cells[0]).to_string(), code, message.to_string())
        })
        .collect()
}

/// The exit codes the reference documents (docs/reference/exit-codes.md, made from the code's own list).
fn documented_exit_codes() -> Vec<i32> {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/reference/exit-codes.md")).unwrap();
    let table = &doc[doc.find("# Exit codes").expect("the exit-code page")..];
    table
        .lines()
        .skip_while(|l| !l.starts_with("| code |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.trim_matches('|').split('|').next().unwrap().trim().parse().unwrap())
        .collect()
}

/// Run one row's command in a fresh sandbox, as the tables say: (output, whether nvcc ran).
fn run_row(command: &str) -> (std::process::Output, bool) {
    let sb = Sandbox::new();
    sb.write("k.cu", "__global__ void k() {}\n");
    std::os::unix::fs::symlink(WRAPPER, sb.wrapper_bin.join("nvcc-wrapper")).unwrap();
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(command)
        .env_clear()
        .env("PATH", sb.path())
        .env("FAKE_NVCC_RECORD", &sb.record)
        .env("NVCC_WRAPPER_CONFIG", &sb.config)
        .env("WRAPPER_BIN", &sb.wrapper_bin)
        .env("CUDA_BIN", &sb.cuda_bin)
        .current_dir(sb.dir.path())
        .output()
        .unwrap();
    (out, sb.ran())
}

/// Issue 26: hostile input nvcc alone would run runs through the wrapper too, with nvcc's exit code, at most one
/// warning, and the message the table gives (`—`: nothing at all on stderr).
#[test]
fn every_hostile_input_nvcc_would_run_runs_with_at_most_one_warning() {
    let rows = table("<!-- runs:", "<!-- end of runs -->");
    assert!(rows.len() >= 8, "the table lost rows: {}", rows.len());
    let mut wrong = Vec::new();
    for (command, code, message) in rows {
        let (out, ran) = run_row(&command);
        let err = stderr(&out);
        let warnings = err.lines().filter(|l| l.starts_with("nvcc-wrapper: warning: ")).count();
        let said = if message == "—" { err.is_empty() } else { err.contains(&message) };
        if out.status.code() != Some(code) || !said || warnings > 1 || !ran {
            wrong.push(format!(
                "`{command}`: exit {:?} (want {code}), nvcc ran: {ran}, {message:?} in:\n{err}",
                out.status.code()
            ));
        }
    }
    assert!(wrong.is_empty(), "{} row(s) of docs/reliability.md do not hold:\n\n{}", wrong.len(), wrong.join("\n"));
}

#[test]
fn the_table_has_every_documented_exit_code() {
    let codes: std::collections::BTreeSet<i32> = rows().iter().map(|r| r.1).collect();
    let documented = documented_exit_codes();
    assert!(documented.len() >= 13, "the exit-code table lost rows: {documented:?}");
    // 70 is a bug in the wrapper: no input is meant to produce it.
    for code in documented.into_iter().filter(|&c| c != 70) {
        assert!(codes.contains(&code), "docs/reliability.md has no row for exit code {code}");
    }
}

#[test]
fn every_bad_input_in_docs_reliability_gets_its_exit_code_and_one_error_and_help_line() {
    let rows = rows();
    assert!(rows.len() >= 30, "the table lost rows: {}", rows.len());
    let mut wrong = Vec::new();
    for (command, code, message) in rows {
        let (out, ran) = run_row(&command);
        let err = stderr(&out);
        let lines: Vec<&str> = err.lines().collect();
        let right = out.status.code() == Some(code)
            && lines.len() == 2
            && lines[0].starts_with("nvcc-wrapper: error: ")
            && lines[0].contains(&message)
            && lines[1].starts_with("help: ")
            && lines[1].len() > 10;
        if !right {
            wrong.push(format!("`{command}`: exit {:?} (want {code}), {message:?} in:\n{err}", out.status.code()));
        }
        if ran {
            wrong.push(format!("`{command}`: nvcc ran"));
        }
    }
    assert!(wrong.is_empty(), "{} row(s) of docs/reliability.md do not hold:\n\n{}", wrong.len(), wrong.join("\n"));
}

/// Issue 39, item 5: a help line suggested `nvcc-wrapper gencode --cuda-version --help`, itself an error. Every
/// command a row's `help:` line names in backticks (`nvcc-wrapper ...`, with no placeholder like `DIR` or `ARGS`)
/// runs as printed, in the row's sandbox, without a usage error (exit 2).
#[test]
fn every_command_a_help_line_names_runs_as_printed() {
    let mut tried = 0;
    let mut wrong = Vec::new();
    for (command, _, _) in rows() {
        let (out, _) = run_row(&command);
        let err = stderr(&out);
        let Some(help) = err.lines().find(|l| l.starts_with("help: ")) else { continue };
        for suggested in help.split('`').skip(1).step_by(2).filter(|c| c.starts_with("nvcc-wrapper ")) {
            let placeholder = suggested.split(' ').any(|w| w.len() > 1 && w.chars().all(|c| c.is_ascii_uppercase()));
            if placeholder {
                continue;
            }
            tried += 1;
            let (out, _) = run_row(suggested);
            if out.status.code() == Some(2) {
                wrong.push(format!("`{command}` suggests `{suggested}`, which fails:\n{}", stderr(&out)));
            }
        }
    }
    assert!(tried >= 5, "only {tried} suggested commands found");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
