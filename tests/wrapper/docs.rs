//! The documentation stays navigable: every relative Markdown link in README.md, CONTRIBUTING.md, docs/ and
//! compat-data/README.md points at a file that exists and, where it names an `#anchor` in a Markdown file, at a
//! heading of that file (as GitHub makes anchors); the README stays a front door, not a manual; and what the scripts
//! announce (sizes, durations) is what the README measured.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// The README's most lines (issue 50, item 6): what it is, the two commands, install, a first config, where next.
/// Everything longer belongs in docs/guide/.
const README_MOST_LINES: usize = 130;

/// The Markdown files whose links are checked, relative to the repository.
fn pages() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let root = Path::new(REPO);
    let mut files = vec![root.join("README.md"), root.join("CONTRIBUTING.md"), root.join("compat-data/README.md")];
    walk(&root.join("docs"), &mut files);
    files.sort();
    files.into_iter().map(|f| f.strip_prefix(root).unwrap().to_path_buf()).collect()
}

/// The lines of `text` outside fenced code blocks (```), each with its 1-based number.
fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            lines.push((i + 1, line));
        }
    }
    lines
}

/// `line` without its code spans (`...`), where a `](` is code, not a link.
fn without_code(line: &str) -> String {
    let mut out = String::new();
    for (i, part) in line.split('`').enumerate() {
        if i % 2 == 0 {
            out.push_str(part);
        }
    }
    out
}

/// The targets of the inline links `[text](target)` on one line.
fn link_targets(line: &str) -> Vec<String> {
    let line = without_code(line);
    let mut targets = Vec::new();
    let mut rest = line.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let end = after.find(')').unwrap_or(after.len());
        // A title after the target (`[a](b "t")`) is not part of it.
        targets.push(after[..end].split_whitespace().next().unwrap_or("").to_string());
        rest = &after[end..];
    }
    targets
}

/// The anchor GitHub gives a heading: lower case, punctuation other than `-` and `_` dropped, spaces made `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown file's headings; a repeated heading gets `-1`, `-2` ... as on GitHub.
fn anchors(text: &str) -> Vec<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for (_, line) in prose(text) {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = anchor(&line[hashes..]);
        let n = seen.entry(base.clone()).or_insert(0);
        out.push(if *n == 0 { base.clone() } else { format!("{base}-{n}") });
        *n += 1;
    }
    out
}

/// `base` joined with a relative `target`, `..` resolved without touching the file system.
fn resolve(base: &Path, target: &str) -> PathBuf {
    let mut path = PathBuf::new();
    for component in base.join(target).components() {
        match component {
            Component::ParentDir => {
                path.pop();
            }
            Component::CurDir => {}
            other => path.push(other),
        }
    }
    path
}

#[test]
fn github_anchors_are_made_as_github_makes_them() {
    assert_eq!(anchor(" The two commands"), "the-two-commands");
    assert_eq!(anchor("combinations.toml"), "combinationstoml");
    assert_eq!(
        anchor("Host compilers: every `host_config.h` on PyPI, scanned"),
        "host-compilers-every-host_configh-on-pypi-scanned"
    );
    assert_eq!(anchor("Jetson: cuda_compat"), "jetson-cuda_compat");
    assert_eq!(anchor("65: this nvcc cannot build the request"), "65-this-nvcc-cannot-build-the-request");
    assert_eq!(anchors("# A\n```\n# not a heading\n```\n## A\n#tag\n"), ["a", "a-1"]);
    assert_eq!(link_targets("see [a](x.md#b), `[c](y.md)` and [`d`](z.md \"t\")"), ["x.md#b", "z.md"]);
}

#[test]
fn every_relative_link_points_at_a_file_and_heading_that_exist() {
    let root = Path::new(REPO);
    let mut broken = Vec::new();
    let (mut files_checked, mut anchors_checked) = (0, 0);
    for page in pages() {
        let text = std::fs::read_to_string(root.join(&page)).unwrap();
        let dir = page.parent().unwrap();
        for (number, line) in prose(&text) {
            for target in link_targets(line) {
                if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                let (file, fragment) = match target.split_once('#') {
                    Some((file, fragment)) => (file, Some(fragment)),
                    None => (target.as_str(), None),
                };
                // `#anchor` alone is this page.
                let linked = if file.is_empty() { page.clone() } else { resolve(dir, file) };
                let at = format!("{}:{number}: {target}", page.display());
                if !root.join(&linked).exists() {
                    broken.push(format!("{at}: no file {}", linked.display()));
                    continue;
                }
                files_checked += 1;
                let Some(fragment) = fragment else { continue };
                if linked.extension() != Some(std::ffi::OsStr::new("md")) {
                    broken.push(format!("{at}: an anchor into {}, which is not Markdown", linked.display()));
                    continue;
                }
                let headings = anchors(&std::fs::read_to_string(root.join(&linked)).unwrap());
                if !headings.iter().any(|h| h == fragment) {
                    broken
                        .push(format!("{at}: no heading `#{fragment}` in {} (it has: {headings:?})", linked.display()));
                }
                anchors_checked += 1;
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    // Not vacuous: the pages link to each other, headings included.
    assert!(files_checked >= 100 && anchors_checked >= 30, "{files_checked} links, {anchors_checked} anchors");
}

#[test]
fn the_readme_stays_a_front_door() {
    let lines = std::fs::read_to_string(Path::new(REPO).join("README.md")).unwrap().lines().count();
    assert!(
        lines <= README_MOST_LINES,
        "README.md has {lines} lines, more than {README_MOST_LINES}: move the detail to a page of docs/guide/ and link it"
    );
}

/// The sizes (`105 MB`, `1.19 GB`) in `line`.
fn sizes(line: &str) -> Vec<String> {
    let words: Vec<&str> = line.split(|c: char| c.is_whitespace() || c == '(').collect();
    let unit = |w: &str| ["MB", "GB"].into_iter().find(|u| w.trim_end_matches([',', ';', ')', ':', '.']) == *u);
    let number = |w: &str| !w.is_empty() && w.parse::<f64>().is_ok();
    words.windows(2).filter_map(|w| Some(format!("{} {}", w[0], unit(w[1])?)).filter(|_| number(w[0]))).collect()
}

/// Issue 33, item 6: the scripts announced sizes that the README's measured table contradicted (the demo "about 120
/// MB", it is 105 MB; the PyPI tools "about 60 MB", 46 MB). Every size a script prints is now one of the table's, and
/// the test suite's last step says how long it takes and what cargo's "running for over 60 seconds" notices are.
#[test]
fn issue_33_scripts_announce_what_the_readme_measured() {
    let readme = std::fs::read_to_string(Path::new(REPO).join("README.md")).unwrap();
    let table: Vec<&str> = readme.lines().filter(|l| l.starts_with("| `scripts/")).collect();
    assert!(table.len() >= 2, "the README's table of downloads is gone");
    let measured: Vec<String> = table.iter().flat_map(|l| sizes(l)).collect();
    assert!(measured.contains(&"105 MB".to_string()) && measured.contains(&"46 MB".to_string()), "{measured:?}");
    let mut announced = 0;
    for entry in std::fs::read_dir(Path::new(REPO).join("scripts")).unwrap() {
        let path = entry.unwrap().path();
        if !path.extension().is_some_and(|e| e == "sh") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for line in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
            for size in sizes(line) {
                announced += 1;
                assert!(
                    measured.contains(&size),
                    "{} announces {size}, which the README's table does not: {line}",
                    path.display()
                );
            }
        }
    }
    assert!(announced >= 3, "the scripts announce {announced} sizes");

    // One number for the suite's time (issue 60, row 16: check-fresh-machine.sh said 40 minutes, the README 25).
    let minutes = |text: &str, before: &str| {
        let at = text.find(before).unwrap_or_else(|| panic!("no {before:?}"));
        text[..at].rsplit("about ").next().and_then(|n| n.trim().parse::<u32>().ok())
    };
    let fresh = std::fs::read_to_string(Path::new(REPO).join("scripts/check-fresh-machine.sh")).unwrap();
    let said = minutes(&readme, "minutes on this project's 2-core machine");
    assert!(said.is_some(), "the README says no time for the suite");
    assert_eq!(minutes(&fresh, "minutes more, so CI leaves it out"), said, "check-fresh-machine.sh --help");
    let test_sh = std::fs::read_to_string(Path::new(REPO).join("scripts/test.sh")).unwrap();
    let last_step = test_sh.lines().rfind(|l| l.starts_with("step ")).unwrap();
    assert!(last_step.contains("minutes on 2 cores") && !last_step.contains("a few minutes"), "{last_step}");
    assert!(last_step.contains("running for over 60 seconds") && last_step.contains("not a hang"), "{last_step}");
    // The same time as the README's measurement (issue 39: the step said 9 minutes where the README said 40).
    let minutes = last_step.split("about ").nth(1).and_then(|r| r.split(' ').next()).unwrap();
    let flowing = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flowing.contains(&format!("about {minutes} minutes")), "the README does not say {minutes} minutes");
}

#[test]
fn sizes_are_read_as_the_readme_writes_them() {
    assert_eq!(
        sizes("| `scripts/demo.sh` | 105 MB: the wheels (1.19 GB, and 0.3 GB) |"),
        ["105 MB", "1.19 GB", "0.3 GB"]
    );
    assert_eq!(sizes("about MB, 4 GiB, x12 MB"), Vec::<String>::new());
}

/// Every configuration the README and the guide show is one the wrapper reads (issue 33: recipes that work as
/// written). Blocks of other programs' files say so on their first line (`# scheduler.conf: sccache-dist ...`).
#[test]
fn issue_33_every_config_the_docs_show_is_read_by_the_wrapper() {
    let work = tempfile::tempdir().unwrap();
    let mut read = 0;
    for page in crate::support::recipe_pages() {
        let text = std::fs::read_to_string(Path::new(REPO).join(&page)).unwrap();
        for (line, block) in crate::support::fenced_blocks(&text, "toml") {
            if block.first().is_some_and(|l| l.starts_with("# ") && l.contains(".conf")) {
                continue;
            }
            let file = work.path().join("config.toml");
            std::fs::write(&file, block.join("\n") + "\n").unwrap();
            // `--version` only asks nvcc: the file is read and checked, nothing is probed.
            let out = std::process::Command::new(crate::support::WRAPPER)
                .args(["explain", "--", "--version"])
                .env_clear()
                .env("PATH", "/usr/bin:/bin")
                .env("NVCC_WRAPPER_CONFIG", &file)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            // A config naming an nvcc this machine lacks is still read: only an error about the file itself counts.
            assert!(
                !err.contains("invalid config file") && out.status.code() != Some(78),
                "{}:{line}: the wrapper does not read this config:\n{}\n{err}",
                page.display(),
                block.join("\n")
            );
            read += 1;
        }
    }
    assert!(read >= 6, "only {read} configs found in the docs");
}

/// Every `nvcc-wrapper gencode` example in the README and the guide prints what the page shows: gencode needs no
/// toolkit, so its examples run as written, with no configuration.
#[test]
fn issue_33_every_gencode_example_prints_what_the_docs_show() {
    let mut ran = 0;
    for page in crate::support::recipe_pages() {
        let text = std::fs::read_to_string(Path::new(REPO).join(&page)).unwrap();
        for (line, block) in crate::support::fenced_blocks(&text, "console") {
            let mut i = 0;
            while i < block.len() {
                let Some(command) = block[i].strip_prefix("$ nvcc-wrapper gencode") else {
                    i += 1;
                    continue;
                };
                let command = command.split(" #").next().unwrap();
                let args = shlex::split(command).unwrap();
                let shown: Vec<&str> =
                    block[i + 1..].iter().map(String::as_str).take_while(|l| !l.starts_with("$ ")).collect();
                let out = std::process::Command::new(crate::support::WRAPPER)
                    .arg("gencode")
                    .args(&args)
                    .env_clear()
                    .env("PATH", "/usr/bin:/bin")
                    .output()
                    .unwrap();
                let printed = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
                assert_eq!(
                    printed.lines().collect::<Vec<_>>(),
                    shown,
                    "{}:{line}: `nvcc-wrapper gencode{command}`",
                    page.display()
                );
                ran += 1;
                i += 1 + shown.len();
            }
        }
    }
    assert!(ran >= 4, "only {ran} gencode examples found in the docs");
}

/// CONTRIBUTING's map of the tests names every test file in its own tier's section (issue 51, item 1): it left out
/// ten, and a newcomer could not find what a file was for. A directory's `mod.rs` is named by its path
/// (`cross/mod.rs`): the map called it `cross.rs`, which the test, skipping `mod.rs`, let pass (issue 59).
#[test]
fn contributings_map_names_every_test_file() {
    let text = std::fs::read_to_string(Path::new(REPO).join("CONTRIBUTING.md")).unwrap();
    let section = |heading: &str| {
        let start = text.find(heading).unwrap_or_else(|| panic!("CONTRIBUTING.md has no {heading:?}"));
        let rest = &text[start + heading.len()..];
        rest[..rest.find("\n### ").unwrap_or(rest.len())].to_string()
    };
    let mut missing = Vec::new();
    for (tier, heading) in [("wrapper", "### In front of the fake nvcc"), ("real", "### Against real toolchains")] {
        let map = section(heading);
        let dir = Path::new(REPO).join("tests").join(tier);
        let mut files = Vec::new();
        let mut dirs = vec![dir.clone()];
        while let Some(d) = dirs.pop() {
            for entry in std::fs::read_dir(&d).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    files.push(path.strip_prefix(&dir).unwrap().to_string_lossy().into_owned());
                }
            }
        }
        assert!(files.len() >= 15, "tests/{tier} has {} files", files.len());
        for file in files.iter().filter(|f| *f != "main.rs") {
            let name = Path::new(file).file_name().unwrap().to_string_lossy().into_owned();
            // A `mod.rs` by its directory's path; another file by its path or its name.
            let spellings = match name.as_str() {
                "mod.rs" => vec![format!("`{file}`")],
                _ => vec![format!("`{file}`"), format!("`{name}`")],
            };
            let named = spellings.iter().any(|n| map.contains(n.as_str()));
            if !named {
                missing.push(format!("tests/{tier}/{file}"));
            }
        }
    }
    assert!(missing.is_empty(), "CONTRIBUTING.md's map of the tests leaves out: {}", missing.join(", "));
}

/// CONTRIBUTING names every room of `src/exec/`, the keeper and its guard among them (issue 60, row 17: a contributor
/// looking for the keeper found no such word there).
#[test]
fn contributing_names_every_file_of_the_exec_room() {
    let text = std::fs::read_to_string(Path::new(REPO).join("CONTRIBUTING.md")).unwrap();
    let exec = Path::new(REPO).join("src/exec");
    let mut files = Vec::new();
    for dir in [exec.clone(), exec.join("child")] {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "rs") {
                files.push(path.strip_prefix(&exec).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    assert!(files.len() >= 10, "{files:?}");
    let unnamed: Vec<&String> = files.iter().filter(|f| !text.contains(&format!("`{f}`"))).collect();
    assert!(unnamed.is_empty(), "CONTRIBUTING.md names no {unnamed:?} of src/exec/");
    assert!(
        text.contains("**keeper**") && text.contains("**guard**"),
        "CONTRIBUTING.md does not say what the keeper is"
    );
}

/// README's "A first config" shows one home (issue 60, row 10: it set `HOME=/tmp/home` and showed the toolkit
/// under `/root/.cache`): every home-relative path of its example is under the home it sets.
#[test]
fn the_readmes_first_config_shows_one_home() {
    let readme = std::fs::read_to_string(Path::new(REPO).join("README.md")).unwrap();
    let start = readme.find("## A first config").expect("the section");
    let section = &readme[start..start + readme[start..].find("\n## ").unwrap_or(readme.len() - start)];
    assert!(section.contains("`HOME=/tmp/home`"), "{section}");
    for line in section.lines().filter(|l| l.contains("/.cache/") || l.contains("/.config/") || l.contains("/.local/"))
    {
        for word in line.split([' ', '(', ')', '`']).filter(|w| w.starts_with('/')) {
            let homed = ["/.cache/", "/.config/", "/.local/"].iter().any(|d| word.contains(d));
            assert!(!homed || word.starts_with("/tmp/home/"), "another home in README's first config: {word}");
        }
    }
}
