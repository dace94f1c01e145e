//! Compiles `compat-data/*.toml` into Rust statics (`$OUT_DIR/<table>.rs`, included by `src/compat/`), so that the
//! drop-in parses no TOML for its tables on every call. The TOML files stay the one source of truth; the tests in
//! `src/compat/` parse them with the wrapper's own loader (which also checks their invariants) and compare the
//! result with these statics field by field, so a mistake here fails a test rather than a build decision.
//!
//! This is a translator, not a validator: it knows the schema only well enough to spell each value as Rust, and
//! stops on anything it does not know (an unknown key, a value of the wrong type), naming the file and the row.

use std::fmt::Write as _;
use std::path::Path;

use toml::{Table, Value};

// A build script is handed its inputs by cargo in the environment; there is no Context here.
#[allow(clippy::disallowed_methods)]
fn main() {
    let out = std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR");
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    println!("cargo:rerun-if-changed=build.rs");
    for (file, emit) in [
        ("host-compilers.toml", host_compilers as fn(&Table, &Origin) -> String),
        ("capabilities.toml", capabilities),
        ("platforms.toml", platforms),
        ("fatbin.toml", fatbin),
        ("launchers.toml", launchers),
    ] {
        let path = Path::new(&manifest).join("compat-data").join(file);
        println!("cargo:rerun-if-changed={}", path.display());
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let table: Table = toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let code = emit(&table, &Origin { file, row: String::new() });
        let target = Path::new(&out).join(file.replace('-', "_").replace(".toml", ".rs"));
        std::fs::write(&target, code).unwrap_or_else(|e| panic!("cannot write {}: {e}", target.display()));
    }
}

/// Where a value comes from, for the messages of a translation that cannot go on.
struct Origin {
    file: &'static str,
    row: String,
}

impl Origin {
    fn at(&self, section: &str, index: usize) -> Origin {
        Origin { file: self.file, row: format!("[[{section}]] row {}", index + 1) }
    }

    fn fail(&self, what: &str) -> ! {
        panic!("compat-data/{}: {}: {what}", self.file, self.row)
    }
}

/// A table's rows, with every key checked against `known`.
fn rows<'a>(table: &'a Table, section: &str, origin: &Origin, known: &[&str]) -> Vec<(&'a Table, Origin)> {
    let Some(value) = table.get(section) else { origin.fail(&format!("no [[{section}]] rows")) };
    let Some(array) = value.as_array() else { origin.fail(&format!("`{section}` is not an array of tables")) };
    array
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let at = origin.at(section, i);
            let Some(row) = row.as_table() else { at.fail("not a table") };
            if let Some(key) = row.keys().find(|k| !known.contains(&k.as_str())) {
                at.fail(&format!("unknown key `{key}`"));
            }
            (row, at)
        })
        .collect()
}

fn get<'a>(row: &'a Table, key: &str, at: &Origin) -> &'a Value {
    row.get(key).unwrap_or_else(|| at.fail(&format!("`{key}` is missing")))
}

fn text(value: &Value, key: &str, at: &Origin) -> String {
    match value.as_str() {
        Some(s) => format!("Cow::Borrowed({s:?})"),
        None => at.fail(&format!("`{key}` is not a string")),
    }
}

fn str_field(row: &Table, key: &str, at: &Origin) -> String {
    text(get(row, key, at), key, at)
}

fn optional(row: &Table, key: &str, at: &Origin, spell: impl Fn(&Value, &str, &Origin) -> String) -> String {
    match row.get(key) {
        Some(value) => format!("Some({})", spell(value, key, at)),
        None => "None".to_string(),
    }
}

fn integer(row: &Table, key: &str, at: &Origin) -> String {
    match get(row, key, at).as_integer() {
        Some(n) if n >= 0 && n <= i64::from(u32::MAX) => n.to_string(),
        _ => at.fail(&format!("`{key}` is not a whole number")),
    }
}

fn boolean(row: &Table, key: &str, at: &Origin) -> String {
    match get(row, key, at).as_bool() {
        Some(b) => b.to_string(),
        None => at.fail(&format!("`{key}` is not true or false")),
    }
}

/// `"12.4"` -> `Version::major_minor(12, 4)`, `"12.2.128"` -> `Version::new(12, 2, 128)`: the parts as written, so
/// that a version prints as the file spells it.
fn version(value: &Value, key: &str, at: &Origin) -> String {
    let Some(s) = value.as_str() else { at.fail(&format!("`{key}` is not a version string")) };
    let parts: Vec<u32> =
        s.split('.').map(|p| p.parse().unwrap_or_else(|_| at.fail(&format!("`{key}` = {s:?}")))).collect();
    match parts[..] {
        [major, minor] => format!("Version::major_minor({major}, {minor})"),
        [major, minor, patch] => format!("Version::new({major}, {minor}, {patch})"),
        _ => at.fail(&format!("`{key}` = {s:?} is not major.minor or major.minor.patch")),
    }
}

fn version_field(row: &Table, key: &str, at: &Origin) -> String {
    version(get(row, key, at), key, at)
}

/// `"9.0a"` -> `Capability::new(9, 0, Some(Suffix::A))`.
fn capability(row: &Table, key: &str, at: &Origin) -> String {
    let Some(s) = get(row, key, at).as_str() else { at.fail(&format!("`{key}` is not a string")) };
    let (number, suffix) = match s.strip_suffix('a') {
        Some(n) => (n, "Some(Suffix::A)"),
        None => match s.strip_suffix('f') {
            Some(n) => (n, "Some(Suffix::F)"),
            None => (s, "None"),
        },
    };
    let parsed = number.split_once('.').and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)));
    let Some((major, minor)) = parsed else { at.fail(&format!("`{key}` = {s:?} is not a capability like 9.0a")) };
    format!("Capability::new({major}, {minor}, {suffix})")
}

fn text_list(row: &Table, key: &str, at: &Origin) -> String {
    let Some(items) = get(row, key, at).as_array() else { at.fail(&format!("`{key}` is not a list")) };
    let items: Vec<String> = items.iter().map(|item| text(item, key, at)).collect();
    format!("Cow::Borrowed(&[{}])", items.join(", "))
}

fn host_compilers(file: &Table, origin: &Origin) -> String {
    let mut code = String::from("/// `compat-data/host-compilers.toml`'s rows, written by build.rs.\n");
    code.push_str("static BUILT_IN_RELEASES: &[HostLimits] = &[\n");
    for (row, at) in rows(file, "release", origin, &["nvcc", "newest-gcc", "newest-clang", "source", "note"]) {
        writeln!(
            code,
            "    HostLimits {{ nvcc: {}, accepts: Accepts {{ newest_gcc: {}, newest_clang: {} }}, source: {}, note: {} }},",
            version_field(row, "nvcc", &at),
            integer(row, "newest-gcc", &at),
            integer(row, "newest-clang", &at),
            str_field(row, "source", &at),
            optional(row, "note", &at, text),
        )
        .unwrap();
    }
    code.push_str("];\n");
    code
}

fn capabilities(file: &Table, origin: &Origin) -> String {
    let mut code = String::from("/// `compat-data/capabilities.toml`'s rows, written by build.rs.\n");
    code.push_str("static BUILT_IN_CAPABILITIES: &[CapabilityInfo] = &[\n");
    let keys = [
        "capability",
        "architecture",
        "example-gpus",
        "kind",
        "first-cuda",
        "last-cuda",
        "jetson-part",
        "source",
        "note",
    ];
    for (row, at) in rows(file, "capability", origin, &keys) {
        let kind = match get(row, "kind", &at).as_str() {
            Some("baseline") => "Kind::Baseline",
            Some("arch-specific") => "Kind::ArchSpecific",
            Some("family-specific") => "Kind::FamilySpecific",
            _ => at.fail("`kind` is not baseline, arch-specific or family-specific"),
        };
        writeln!(
            code,
            "    CapabilityInfo {{ capability: {}, architecture: {}, example_gpus: {}, kind: {kind}, first_cuda: {}, \
             last_cuda: {}, jetson_part: {}, source: {}, note: {} }},",
            capability(row, "capability", &at),
            str_field(row, "architecture", &at),
            text_list(row, "example-gpus", &at),
            version_field(row, "first-cuda", &at),
            optional(row, "last-cuda", &at, version),
            optional(row, "jetson-part", &at, text),
            str_field(row, "source", &at),
            optional(row, "note", &at, text),
        )
        .unwrap();
    }
    code.push_str("];\n\n");
    code.push_str("static BUILT_IN_NVCC_DEFAULT_ARCH: &[DefaultArch] = &[\n");
    for (row, at) in rows(file, "nvcc-default-arch", origin, &["first-cuda", "last-cuda", "capability", "source"]) {
        writeln!(
            code,
            "    DefaultArch {{ first_cuda: {}, last_cuda: {}, capability: {}, source: {} }},",
            version_field(row, "first-cuda", &at),
            optional(row, "last-cuda", &at, version),
            capability(row, "capability", &at),
            str_field(row, "source", &at),
        )
        .unwrap();
    }
    code.push_str("];\n");
    code
}

fn platforms(file: &Table, origin: &Origin) -> String {
    let mut code = String::from("/// `compat-data/platforms.toml`'s rows, written by build.rs.\n");
    code.push_str("static BUILT_IN_PLATFORMS: &[Platform] = &[\n");
    let keys = ["name", "nvidia-redist", "gnu-triples", "nix-system", "jetson", "shipped", "source", "note"];
    for (row, at) in rows(file, "platform", origin, &keys) {
        let Some(ranges) = get(row, "shipped", &at).as_array() else { at.fail("`shipped` is not a list") };
        let ranges: Vec<String> = ranges
            .iter()
            .map(|range| {
                let Some(range) = range.as_table() else { at.fail("a `shipped` range is not a table") };
                if let Some(key) = range.keys().find(|k| !["first-cuda", "last-cuda"].contains(&k.as_str())) {
                    at.fail(&format!("unknown key `{key}` in `shipped`"));
                }
                format!(
                    "ReleaseRange {{ first_cuda: {}, last_cuda: {} }}",
                    version_field(range, "first-cuda", &at),
                    optional(range, "last-cuda", &at, version)
                )
            })
            .collect();
        writeln!(
            code,
            "    Platform {{ name: {}, nvidia_redist: {}, gnu_triples: {}, nix_system: {}, jetson: {}, \
             shipped: Cow::Borrowed(&[{}]), source: {}, note: {} }},",
            str_field(row, "name", &at),
            str_field(row, "nvidia-redist", &at),
            text_list(row, "gnu-triples", &at),
            str_field(row, "nix-system", &at),
            boolean(row, "jetson", &at),
            ranges.join(", "),
            str_field(row, "source", &at),
            optional(row, "note", &at, text),
        )
        .unwrap();
    }
    code.push_str("];\n\n");
    code.push_str("static BUILT_IN_JETSON_SERVED_BY: &[JetsonServedBy] = &[\n");
    for (row, at) in rows(file, "jetson-served-by", origin, &["platform", "part", "first-cuda", "source"]) {
        writeln!(
            code,
            "    JetsonServedBy {{ platform: {}, part: {}, first_cuda: {}, source: {} }},",
            str_field(row, "platform", &at),
            str_field(row, "part", &at),
            version_field(row, "first-cuda", &at),
            str_field(row, "source", &at),
        )
        .unwrap();
    }
    code.push_str("];\n");
    code
}

fn fatbin(file: &Table, origin: &Origin) -> String {
    let mut code = String::from("/// `compat-data/fatbin.toml`'s rows, written by build.rs.\n");
    code.push_str("static BUILT_IN_COMPRESSION: &[Compression] = &[\n");
    for (row, at) in rows(file, "compression", origin, &["first-cuda", "last-cuda", "flags", "source", "note"]) {
        writeln!(
            code,
            "    Compression {{ first_cuda: {}, last_cuda: {}, flags: {}, source: {}, note: {} }},",
            version_field(row, "first-cuda", &at),
            optional(row, "last-cuda", &at, version),
            text_list(row, "flags", &at),
            str_field(row, "source", &at),
            optional(row, "note", &at, text),
        )
        .unwrap();
    }
    code.push_str("];\n");
    code
}

fn launchers(file: &Table, origin: &Origin) -> String {
    let mut code = String::from("/// `compat-data/launchers.toml`'s rows, written by build.rs.\n");
    code.push_str("static BUILT_IN_KNOWN_BAD: &[KnownBad] = &[\n");
    let keys = ["launcher", "first-version", "last-version", "first-cuda", "last-cuda", "why", "source"];
    for (row, at) in rows(file, "known-bad", origin, &keys) {
        writeln!(
            code,
            "    KnownBad {{ launcher: {}, first_version: {}, last_version: {}, first_cuda: {}, last_cuda: {}, \
             why: {}, source: {} }},",
            str_field(row, "launcher", &at),
            version_field(row, "first-version", &at),
            version_field(row, "last-version", &at),
            version_field(row, "first-cuda", &at),
            optional(row, "last-cuda", &at, version),
            str_field(row, "why", &at),
            str_field(row, "source", &at),
        )
        .unwrap();
    }
    code.push_str("];\n");
    code
}
