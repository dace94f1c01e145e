//! Every console transcript of the README and the guide, run (issue 33: recipes that work as written). The `$`
//! commands of a ```console block run in order in a directory of their own, with the wrapper first on PATH as `nvcc` and
//! `nvcc-wrapper`, the real NVCC release the command's comment names (`# nvcc 11.8`; 13.0, the README's, otherwise)
//! next, a home of its own, and the files the pages show with `$ cat NAME` (a name in the working directory, from any
//! page: troubleshooting's calls use host-compiler's `c69.toml`; a `~/` name, in that block's home only).
//!
//! What the page shows must be what the command prints, line for line, for the lines that say what the wrapper
//! decided or refused: errors, warnings and their help; the changes (`+`, `-`, `~`, `=`), notes and `runs:` of
//! `explain` and `doctor`; every line of a `NVCC_WRAPPER_DRY_RUN=1` call, which prints the command it decided on. A
//! page's `...` line stands for lines left out, and then its lines must come in that order
//! among the printed ones. Lines that describe the machine (which config file, which nvcc and how it was found) are
//! not compared; paths are: the pages' working directories (`/tmp/h5`, `/tmp/demo`, `/src`, the home `/tmp/home`) and
//! the toolkit cache (`/root/.cache/nvcc-wrapper/toolkits`, or `$T` for short) stand for this run's, and a process id
//! in nvcc's temporary names, a byte offset and a file size for any number. A command shown with an error fails,
//! one without succeeds. Commands of other programs (`nix-instantiate`: tests/real/nix/ runs those cases) are named
//! on the runner's output, not run.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::*;

const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// The working directories and the home the pages' transcripts were made in.
const PAGE_DIRS: [&str; 3] = ["/tmp/h5", "/tmp/demo", "/src"];
const PAGE_HOME: &str = "/tmp/home";
const PAGE_TOOLKITS: [&str; 3] = ["/root/.cache/nvcc-wrapper/toolkits", "/tmp/home/.cache/nvcc-wrapper/toolkits", "$T"];

/// The lines compared: what the wrapper decided or refused.
const DECISIONS: [&str; 9] =
    ["nvcc-wrapper: ", "help: ", "  + ", "  - ", "  ~ ", "  = ", "  note: ", "  warning: ", "runs: "];

fn decision(line: &str) -> bool {
    DECISIONS.iter().any(|d| line.starts_with(d))
}

/// Programs a transcript may run to set a case up, besides the wrapper.
const SETUP: [&str; 3] = ["mkdir", "touch", "chmod"];

struct Step {
    page: PathBuf,
    line: usize,
    command: String,
    shown: Vec<String>,
    /// The `~/` files of its block, as (path under the home, text).
    home_files: Vec<(String, String)>,
}

/// A block's `$` commands with the lines shown after each.
fn commands(block: &[String]) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for line in block {
        match line.strip_prefix("$ ") {
            Some(command) => out.push((command.to_string(), Vec::new())),
            None => {
                if let Some((_, shown)) = out.last_mut() {
                    shown.push(line.clone());
                }
            }
        }
    }
    out
}

/// Every step of every transcript, and the working-directory files the pages show.
fn transcripts() -> (Vec<Step>, Vec<(String, String)>) {
    let (mut steps, mut files) = (Vec::new(), Vec::new());
    for page in recipe_pages() {
        let text = std::fs::read_to_string(Path::new(REPO).join(&page)).unwrap();
        for (line, block) in fenced_blocks(&text, "console") {
            let mut home_files = Vec::new();
            let mut block_steps = Vec::new();
            for (command, shown) in commands(&block) {
                let content = shown.iter().map(|l| format!("{l}\n")).collect::<String>();
                match command.strip_prefix("cat ") {
                    Some(name) if name.starts_with("~/") => home_files.push((name[2..].to_string(), content)),
                    Some(name) => files.push((name.to_string(), content)),
                    None => block_steps.push((command, shown)),
                }
            }
            for (command, shown) in block_steps {
                steps.push(Step { page: page.clone(), line, command, shown, home_files: home_files.clone() });
            }
        }
    }
    (steps, files)
}

/// The program a command runs, after its variable assignments.
fn program(command: &str) -> &str {
    command.split_whitespace().find(|w| !w.contains('=')).unwrap_or("")
}

/// The release a command's comment names (`# nvcc 11.8`), else the README's.
fn release(command: &str) -> &str {
    command
        .split(" #")
        .nth(1)
        .and_then(|comment| comment.split_whitespace().skip_while(|w| *w != "nvcc").nth(1))
        .map(|r| r.trim_end_matches(','))
        .filter(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        .unwrap_or("13.0")
}

/// A line as compared: the pages' places and this run's written the same way, and the numbers that differ from run to
/// run (a process id in nvcc's temporary names, a byte offset, a size) as N.
fn normal(line: &str, places: &[(&str, &str)]) -> String {
    let mut line = line.to_string();
    for (from, to) in places {
        line = line.replace(from, to);
    }
    // (marker, whether the number after it is hexadecimal)
    let markers = [("tmpxft_", true), ("byte ", false), ("the same ", false)];
    let mut out = String::new();
    let mut rest = line.as_str();
    while let Some((i, len, hex)) =
        markers.iter().filter_map(|(m, hex)| rest.find(m).map(|i| (i, m.len(), *hex))).min_by_key(|(i, _, _)| *i)
    {
        out += &rest[..i + len];
        rest = &rest[i + len..];
        let digit = |c: char| if hex { c.is_ascii_hexdigit() } else { c.is_ascii_digit() };
        let digits = rest.find(|c: char| !digit(c)).unwrap_or(rest.len());
        if digits > 0 {
            out.push('N');
            rest = &rest[digits..];
        }
    }
    out + rest
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn every_console_transcript_of_the_docs_prints_what_the_page_shows() {
    // The pages show a user without a machine's file; the commands run as the pages' user does, so one here would
    // change what they print (every other test switches it off: `isolate`).
    if std::path::Path::new("/etc/nvcc-wrapper/config.toml").exists() {
        cannot_run("the pages' transcripts show a machine without /etc/nvcc-wrapper/config.toml, and this one has it");
        return;
    }
    let (steps, files) = transcripts();
    let cache_toolkits = cache_dir().join("toolkits");
    let toolkits = cache_toolkits.to_str().unwrap();
    let (mut ran, mut other, mut differ) = (0, Vec::new(), Vec::new());
    let mut sandboxes: std::collections::HashMap<(PathBuf, usize), tempfile::TempDir> = Default::default();
    for step in &steps {
        let name = program(&step.command);
        if name != "nvcc" && name != "nvcc-wrapper" && !SETUP.contains(&name) {
            other.push(format!("{}:{} `{}`", step.page.display(), step.line, step.command));
            continue;
        }
        let Some(toolkit) = real_toolkit(release(&step.command)) else { return };
        // One directory for a block: its commands run in order, each after the one before.
        let dir = sandboxes.entry((step.page.clone(), step.line)).or_insert_with(|| {
            let dir = tempfile::tempdir().unwrap();
            let (work, bin, home) = (dir.path().join("work"), dir.path().join("bin"), dir.path().join("home"));
            for d in [&work, &bin, &home] {
                std::fs::create_dir_all(d).unwrap();
            }
            for name in ["nvcc", "nvcc-wrapper"] {
                std::os::unix::fs::symlink(WRAPPER, bin.join(name)).unwrap();
            }
            for source in ["kernel.cu", "hello.cu"] {
                std::fs::write(work.join(source), SMOKE_CU).unwrap();
            }
            let with_toolkits = |text: &str| PAGE_TOOLKITS.iter().fold(text.to_string(), |t, p| t.replace(p, toolkits));
            for (name, text) in &files {
                std::fs::write(work.join(name), with_toolkits(text)).unwrap();
            }
            for (name, text) in &step.home_files {
                let path = home.join(name);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, with_toolkits(text)).unwrap();
            }
            dir
        });
        let dir = dir.path();
        let (work, bin, home) = (dir.join("work"), dir.join("bin"), dir.join("home"));
        // The wrapper named by a page's own path (`/tmp/h5/bin/nvcc`) is this run's.
        let command =
            PAGE_DIRS.iter().fold(step.command.clone(), |c, p| c.replace(&format!("{p}/bin"), bin.to_str().unwrap()));
        let out = Command::new("bash")
            .args(["-c", &command])
            .current_dir(&work)
            .env_clear()
            .env("PATH", format!("{}:{}:/usr/bin:/bin", bin.display(), toolkit.join("bin").display()))
            .env("HOME", &home)
            .output()
            .unwrap();
        ran += 1;
        let (work_s, bin_s, home_s) =
            (work.to_str().unwrap().to_string(), bin.to_str().unwrap().to_string(), home.to_str().unwrap().to_string());
        let run_places = [
            (bin_s.as_str(), "<dir>/bin"),
            (work_s.as_str(), "<dir>"),
            (home_s.as_str(), "<home>"),
            (toolkits, "<toolkits>"),
        ];
        // The toolkits first: a page's may sit in its home (`/tmp/home/.cache/...`).
        let mut page_places: Vec<(&str, &str)> = PAGE_TOOLKITS.iter().map(|t| (*t, "<toolkits>")).collect();
        page_places.push((PAGE_HOME, "<home>"));
        let bins: Vec<String> = PAGE_DIRS.iter().map(|d| format!("{d}/bin")).collect();
        page_places.extend(bins.iter().map(|b| (b.as_str(), "<dir>/bin")));
        page_places.extend(PAGE_DIRS.iter().map(|d| (*d, "<dir>")));
        let printed = stdout(&out) + &stderr(&out);
        let dry_run = step.command.contains("NVCC_WRAPPER_DRY_RUN=1");
        let compared = |l: &&str| dry_run || decision(l);
        let got: Vec<String> = printed.lines().filter(compared).map(|l| normal(l, &run_places)).collect();
        let want: Vec<String> =
            step.shown.iter().map(String::as_str).filter(compared).map(|l| normal(l, &page_places)).collect();
        let matches = if step.shown.iter().any(|l| l == "...") {
            let mut printed = got.iter();
            want.iter().all(|w| printed.any(|g| g == w))
        } else {
            got == want
        };
        let fails = want.iter().any(|l| l.starts_with("nvcc-wrapper: error: "));
        if !matches || out.status.success() == fails {
            differ.push(format!(
                "{}:{} `{}` (nvcc {}, exit {:?}):\n  the page shows:\n    {}\n  it printed:\n    {}",
                step.page.display(),
                step.line,
                step.command,
                release(&step.command),
                out.status.code(),
                want.join("\n    "),
                printed.lines().collect::<Vec<_>>().join("\n    ")
            ));
        }
    }
    assert!(
        differ.is_empty(),
        "{} of {ran} transcript commands print something else than their page:\n{}",
        differ.len(),
        differ.join("\n")
    );
    assert!(ran >= 30, "only {ran} transcript commands found");
    let line = format!(
        "note: {ran} transcript commands of the docs ran as shown; not run here (another program's): {}\n",
        other.join(", ")
    );
    std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes()).unwrap();
}
