// The tests read the repository's files and one variable of their own, which is not the wrapper reading state.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeSet;

use super::*;
use crate::config::parse;

#[test]
fn the_reference_pages_are_made_from_the_code() {
    let update = std::env::var_os("NVCC_WRAPPER_UPDATE_REFERENCE").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    for (file, text) in pages() {
        let path = repo(file);
        if update {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &text).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            stale.push(file);
        }
    }
    assert!(
        stale.is_empty(),
        "{stale:?} differ from what the code says: run `NVCC_WRAPPER_UPDATE_REFERENCE=1 cargo test --lib reference` \
         and review the change"
    );
}

/// The names of the constants of `pub mod vars` in src/context/mod.rs.
fn variable_constants() -> BTreeSet<String> {
    let source = std::fs::read_to_string(repo("src/context/mod.rs")).unwrap();
    let start = source.find("pub mod vars {").expect("the vars module");
    let end = start + source[start..].find("\n}").unwrap();
    source[start..end]
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub const "))
        .filter_map(|l| Some(l.split('"').nth(1)?.to_string()))
        .collect()
}

#[test]
fn every_variable_has_its_row() {
    let constants = variable_constants();
    assert!(constants.len() >= 20, "the reader found {constants:?}");
    let documented: BTreeSet<String> = VARIABLES.iter().map(|(n, _)| n.to_string()).collect();
    let missing: Vec<&String> = constants.difference(&documented).collect();
    assert!(missing.is_empty(), "variables without a row in src/checks/reference/tables.rs VARIABLES: {missing:?}");
    for o in OVERRIDES {
        assert!(documented.contains(o.var), "{} replaces `{}` but has no row", o.var, o.key);
    }
    // A row without words of its own must be an override, whose words come from the table.
    for (name, own) in VARIABLES {
        assert!(!own.is_empty() || OVERRIDES.iter().any(|o| o.var == *name), "{name} has no meaning");
    }
}

#[test]
fn every_wrapper_variable_is_known_and_only_those() {
    let own: BTreeSet<String> = crate::context::vars::OWN.iter().map(|n| n.to_string()).collect();
    let constants: BTreeSet<String> =
        variable_constants().into_iter().filter(|n| n.starts_with("NVCC_WRAPPER_")).collect();
    assert_eq!(own, constants, "vars::OWN and the NVCC_WRAPPER_ constants of context::vars differ");
    assert_eq!(own.len(), crate::context::vars::OWN.len(), "a name twice in vars::OWN");
}

/// The keys serde takes in one table of the config, from its own error for a key it does not know.
fn keys_of(section: &str) -> BTreeSet<String> {
    let header = if section.is_empty() { String::new() } else { format!("[{section}]\n") };
    let err = parse(&format!("{header}zz-not-a-key = 1\n"), Path::new("/x.toml")).unwrap_err().message;
    let list = err.split("this table's keys are ").nth(1).unwrap_or_else(|| panic!("{err}"));
    list.split(", ").map(|k| k.trim().trim_matches('`').to_string()).collect()
}

#[test]
fn every_config_key_has_its_row_and_every_row_is_a_key() {
    let sections = ["", "host-compiler", "gpu", "target", "target.host-compiler"];
    let mut accepted = BTreeSet::new();
    for section in sections {
        for key in keys_of(section) {
            // A table is a section of its own, documented by its keys.
            let nested = if section.is_empty() { key.clone() } else { format!("{section}.{key}") };
            if sections.contains(&nested.as_str()) {
                continue;
            }
            accepted.insert(if section.is_empty() { key } else { format!("[{section}] {key}") });
        }
    }
    let documented: BTreeSet<String> = KEYS.iter().map(|k| k.key.to_string()).collect();
    assert_eq!(documented, accepted, "KEYS (src/checks/reference/tables.rs) and the keys the config takes differ");
    // One row a key, in the order of `config::Key::all` (the words of each key come from there alone).
    let rows: Vec<crate::config::Key> = KEYS.iter().map(|k| k.key).collect();
    assert_eq!(rows, crate::config::Key::all().collect::<Vec<_>>(), "KEYS' rows and `Key::all` differ");
    // Every row's example parses where the row says it goes.
    for k in KEYS {
        let (section, key) = (k.key.table().unwrap_or(""), k.key.name());
        let header = if section.is_empty() { String::new() } else { format!("[{section}]\n") };
        let text = format!("{header}{key} = {}\n", k.example);
        let config = parse(&text, Path::new("/x.toml"))
            .unwrap_or_else(|e| panic!("{}: example {} does not parse: {e}", k.key, k.example));
        // Every key carries where it was set (issue 51), so that a message about it can name the line.
        let line = if section.is_empty() { 1 } else { 2 };
        let at = crate::config::Origin::File(Some(crate::config::At { file: Path::new("/x.toml").into(), line }));
        assert_eq!(config.origin(k.key), Some(&at), "{}: the value does not carry its file and line", k.key);
    }
}

#[test]
fn the_man_page_has_its_sections() {
    let page = man_page();
    // An option with its short name and its value (issue 60, row 18).
    assert!(page.contains("\\fB\\-j, \\-\\-jobs \\fI<N>\\fB\\fR"), "{page}");
    for section in [".SH NAME", ".SH SYNOPSIS", ".SH ENVIRONMENT", ".SH FILES", ".SH EXIT STATUS"] {
        assert!(page.contains(section), "no {section}");
    }
    for (name, _) in VARIABLES {
        assert!(page.contains(&name.replace('-', "\\-")), "{name} is not in the man page");
    }
    assert!(page.contains("\\fB127\\fR\nno real nvcc was found"), "{page}");
}
