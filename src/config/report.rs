//! How a config file that does not read is reported: `path:line:column: message`, as compilers report positions,
//! the message in the file's own words (TOML's names for values, the config's keys, never a Rust type), and a hint
//! where TOML's one trap put a key into the wrong table.

use std::path::Path;

use crate::error::Error;

/// The keys of the file's top level, before its first `[table]` (`Config`'s fields, as the file spells them; a
/// test holds the list to the struct).
pub(super) fn top_level_keys() -> impl Iterator<Item = &'static str> {
    super::Key::all().filter(|k| k.table().is_none()).map(super::Key::name)
}

/// The error for a file that does not read: its position, its message in the file's words, and the help.
pub fn toml_error(e: &toml::de::Error, text: &str, path: &Path) -> Error {
    let before = e.span().map(|span| &text[..span.start.min(text.len())]);
    let position = before.map(|before| {
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        format!(":{line}:{column}")
    });
    let message = e.message().trim_end();
    let before = before.unwrap_or_default();
    // The key or table name at the error (`gpu` of a second `[gpu]`), and the key its line sets (`candidates` of
    // `candidates = "g++-11"`).
    let named = e.span().and_then(|span| text.get(span)).map(str::trim);
    let line = before.rsplit('\n').next().unwrap_or_default();
    let line_key = line.split_once('=').map(|(k, _)| k.trim());
    let (described, help) = match (message, named) {
        ("duplicate key", Some(name)) if line.trim_start().starts_with('[') => (
            format!("the table `[{name}]` is opened twice"),
            Some(format!("put all of its keys below one `[{name}]` line: TOML opens a table once")),
        ),
        ("duplicate key", Some(name)) => {
            (format!("the key `{name}` is set twice in one table"), Some("keep one of the two lines".to_string()))
        }
        _ => (in_file_words(message), None),
    };
    let help = help
        .or_else(|| top_level_key_in_a_table(message, before))
        .or_else(|| key_of_another_table(message, before))
        .or_else(|| expected_form(message, line_key, named))
        .unwrap_or_else(|| "`man nvcc-wrapper` (CONFIGURATION) lists every key and its values".to_string());
    let (path, position) = (path.to_path_buf(), position.unwrap_or_default());
    super::problems::Refused::Invalid { path, position, described, help }.into()
}

/// The config's tables, as a header opens them.
const TABLES: &[&str] = &["gpu", "host-compiler", "target", "target.host-compiler"];

/// The keys serde takes in `table` (`""`: the top level), from its own error for a key none has.
fn keys_of(table: &str) -> Vec<String> {
    let header = if table.is_empty() { String::new() } else { format!("[{table}]\n") };
    let probe = format!("{header}nvcc-wrapper-no-such-key = 0\n");
    let Err(e) = toml::from_str::<super::Config>(&probe) else { return Vec::new() };
    let message = e.message().to_string();
    let Some((_, expected)) = message.split_once(", expected ") else { return Vec::new() };
    expected.trim_start_matches("one of ").split(", ").map(|k| k.trim().trim_matches('`').to_string()).collect()
}

/// The hint for a key of another table (issue 60: `capabilities = ["8.6"]` above `[gpu]`): which table it belongs
/// in.
fn key_of_another_table(message: &str, before: &str) -> Option<String> {
    let key = message.strip_prefix("unknown field `")?.split('`').next()?;
    let here = before.lines().rev().map(str::trim).find(|l| l.starts_with('[')).map(|l| l.trim_matches(['[', ']']));
    let table = TABLES.iter().find(|t| Some(**t) != here && keys_of(t).iter().any(|k| k == key))?;
    Some(format!("`{key}` is a key of `[{table}]`: put it below a `[{table}]` line (TOML reads a key into the last table opened above it)"))
}

/// The form a key takes, where a value of the wrong kind was given (issue 60: `host-compiler = "clang++-21"`,
/// `candidates = "g++-11"`).
fn expected_form(message: &str, key: Option<&str>, value: Option<&str>) -> Option<String> {
    let key = key?;
    let (found, expected) = message.strip_prefix("invalid type: ")?.split_once(", expected ")?;
    if expected.starts_with("struct ") || expected == "a map" {
        let table = TABLES.iter().find(|t| t.rsplit('.').next() == Some(key)).copied().unwrap_or(key);
        return Some(format!(
            "`{key}` is a table: write `[{table}]` on a line of its own, and its keys below it ({})",
            keys_of(table).iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
        ));
    }
    if expected == "a sequence" && found.starts_with("string ") {
        return Some(format!("`{key}` takes an array: `{key} = [{}]`", value.unwrap_or("...")));
    }
    None
}

/// The hint for a top-level key written below a `[table]` line, which TOML reads as that table's key: `unknown
/// field` for a key of the top level, under the table that the last header before it opens.
fn top_level_key_in_a_table(message: &str, before: &str) -> Option<String> {
    let key = message.strip_prefix("unknown field `")?.split('`').next()?;
    top_level_keys().any(|k| k == key).then_some(())?;
    let table = before.lines().rev().map(str::trim).find(|l| l.starts_with('['))?;
    Some(format!(
        "`{key}` is a top-level key, and TOML reads every key below `{table}` as that table's: move the line above \
         the file's first `[table]` line"
    ))
}

/// serde's and toml's words for a value of the wrong kind, in the words of the file: `invalid type: string "four",
/// expected i64` is `the string "four" is not a whole number`. A message of any other shape is kept as it is.
fn in_file_words(message: &str) -> String {
    let wrong_kind = ["invalid type: ", "invalid value: "].iter().find_map(|p| message.strip_prefix(p));
    if let Some((found, expected)) = wrong_kind.and_then(|rest| rest.split_once(", expected ")) {
        return format!("{} is not {}", value_words(found), expected_words(expected));
    }
    if let Some((word, expected)) = message.strip_prefix("unknown variant ").and_then(|r| r.split_once(", expected ")) {
        let expected = expected.strip_prefix("one of ").unwrap_or(expected);
        return format!("{word} is not a value this key takes: it takes {expected}");
    }
    if let Some(rest) = message.strip_prefix("unknown field ") {
        return match rest.split_once(", expected ") {
            Some((key, expected)) => {
                format!("unknown key {key}; this table's keys are {}", expected.trim_start_matches("one of "))
            }
            None => format!("unknown key {rest}"),
        };
    }
    if let Some(key) = message.strip_prefix("missing field ") {
        return format!("the key {key} is missing");
    }
    message.to_string()
}

/// serde's `Unexpected` (`string "four"`, `integer `3``, `sequence`) as TOML names a value.
fn value_words(found: &str) -> String {
    let quoted = |kind: &str| found.strip_prefix(kind).map(|v| v.trim_matches('`').to_string());
    if let Some(text) = found.strip_prefix("string ") {
        return format!("the string {text}");
    }
    if let Some(number) = quoted("integer ").or_else(|| quoted("floating point ")) {
        return format!("the number {number}");
    }
    if let Some(switch) = quoted("boolean ") {
        return switch;
    }
    match found {
        "sequence" => "an array".to_string(),
        "map" => "a table".to_string(),
        other => other.to_string(),
    }
}

/// What a key takes, as serde's `expecting` says it: a Rust number type is a whole number, a sequence an array.
fn expected_words(expected: &str) -> String {
    const WHOLE: &[&str] = &["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "usize", "isize"];
    if WHOLE.contains(&expected) {
        return "a whole number".to_string();
    }
    match expected {
        "path string" | "a string" => "a string (in quotes)".to_string(),
        "a boolean" => "true or false".to_string(),
        "a sequence" => "an array".to_string(),
        "a map" => "a table".to_string(),
        other if other.starts_with("struct ") => "a table".to_string(),
        other => other.to_string(),
    }
}
