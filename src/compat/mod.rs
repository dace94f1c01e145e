//! The compatibility tables: which host compilers each NVCC release accepts, which GPU capabilities it compiles
//! for and which pairs of them it refuses together, which target platforms it ships, which flags make its fatbins
//! smallest and its outputs reproducible, and which compiler caches fail with it. Owns the schema of
//! `compat-data/*.toml`, their built-in copies, loading an override file with errors that name file, line and
//! column, the lookups the planner asks, and the scanner that reads the limits out of a real `host_config.h`. It decides nothing about a command line and touches no process
//! state: the one file it reads is the override path a caller hands it.

/// Declares the row and file types of `schema.rs` as serde types (build.rs declares the same ones its own way).
macro_rules! schema {
    ($($(#[$meta:meta])* pub struct $name:ident { $($(#[$fmeta:meta])* pub $field:ident : $ty:ty),* $(,)? })*) => {
        $(
            $(#[$meta])*
            #[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
            #[serde(deny_unknown_fields, rename_all = "kebab-case")]
            pub struct $name {
                $($(#[$fmeta])* pub $field: $ty),*
            }
        )*
    };
}

#[macro_use]
mod tables;

mod capabilities;
mod capability;
mod combinations;
mod families;
mod fatbin;
mod host_compilers;
pub mod host_config;
mod launchers;
mod platforms;
mod reproducible;
mod schema;
mod target_list;
mod threads;
mod version;

pub use capabilities::CapabilityTable;
pub use capability::{Capability, Suffix};
pub use combinations::{CombinationTable, Refusal};
pub use families::{read_banner, Accepts, CompilerFamily, Libstdcxx, FAMILIES};
pub use fatbin::FatbinTable;
pub use host_compilers::{HostCompilerTable, FIRST_HONOURING_NVCC_CCBIN};
pub use launchers::LauncherTable;
pub use platforms::PlatformTable;
pub use reproducible::{placeholders, ReproducibleTable};
pub use schema::{Call, CapabilityInfo, Cause, Fix, Form, LauncherCall, Limit, Output, Platform};
pub use target_list::{Item, TargetList, Targets, Unresolved};
pub use threads::ThreadsTable;
pub use version::Version;

use std::borrow::Cow;
use std::fmt;
use std::path::Path;

/// Text in a table row: borrowed from the binary for the built-in tables (compiled in by build.rs), owned for an
/// override file.
pub type Text = Cow<'static, str>;

/// A compatibility file that could not be used. Every variant names the file (or the built-in copy) it is about.
#[derive(Debug)]
pub enum CompatError {
    /// The override file could not be read.
    Read { path: String, error: std::io::Error },
    /// The text is not TOML, or does not fit the schema (unknown key, wrong type, bad version).
    Syntax { origin: String, position: Option<(usize, usize)>, message: String },
    /// The rows parse but break an invariant the lookups rely on (unsorted, duplicated, a range backwards).
    Invalid { origin: String, message: String },
}

impl fmt::Display for CompatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompatError::Read { path, error } => write!(f, "cannot read {path}: {error}"),
            CompatError::Syntax { origin, position: Some((line, column)), message } => {
                write!(f, "{origin}:{line}:{column}: {message}")
            }
            CompatError::Syntax { origin, position: None, message } => write!(f, "{origin}: {message}"),
            CompatError::Invalid { origin, message } => write!(f, "{origin}: {message}"),
        }
    }
}

crate::error::codes!(CompatError {
    Read => "read",
    Syntax => "syntax",
    Invalid => "invalid",
});

/// A broken override file, as the wrapper reports it: a config error naming the file.
#[derive(Debug)]
pub struct Unusable(pub CompatError);

impl fmt::Display for Unusable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid compatibility data: {}", self.0)
    }
}

impl crate::error::Coded for Unusable {
    fn code(&self) -> &'static str {
        crate::error::Coded::code(&self.0)
    }
}

impl crate::error::Problem for Unusable {
    fn kind(&self) -> crate::error::ErrorKind {
        crate::error::ErrorKind::Config
    }

    /// What to do about it: write the tables out to compare, or, for host-compilers.toml's rows in the form they had
    /// before the families had one definition (`newest-gcc`, `newest-clang`), the form they have now.
    fn help(&self) -> Option<String> {
        let old_columns =
            |message: &str| ["field `newest-gcc`", "field `newest-clang`"].iter().any(|f| message.contains(f));
        Some(match &self.0 {
            CompatError::Syntax { message, .. } if old_columns(message) => {
                "host-compilers.toml's rows now say `accepts = { gcc = N, clang = M }` for `newest-gcc = N` and \
                 `newest-clang = M`; `nvcc-wrapper compat dump DIR` writes the current form"
            }
            _ => {
                "`nvcc-wrapper compat dump DIR` writes the built-in tables, each with comments on its fields, to compare \
                 with or start from"
            }
        }
        .to_string())
    }
}

impl std::error::Error for CompatError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CompatError::Read { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// One file of compat-data/, as the wrapper holds it: the copy build.rs compiled in, or an override file parsed at
/// run time; both made of the types in `schema.rs`, and an override checked by the same rules the tests apply to
/// the built-in files.
pub(crate) trait Table: Named + Sized + Clone + 'static {
    /// What the file holds.
    type File: serde::de::DeserializeOwned;
    /// The table, once its rows pass the invariants its lookups rely on; `origin` names the file in errors.
    fn check(file: Self::File, origin: &str) -> Result<Self, CompatError>;
    /// The table compiled into the binary: no parsing at run time.
    fn built_in() -> &'static Self;
    /// Parse and check a file's text.
    fn parse(text: &str, origin: &str) -> Result<Self, CompatError> {
        Self::check(parse_toml(text, origin)?, origin)
    }
}

/// `Compat`, its built-in tables and its overrides, `FILES`, and each table's file name, from the one list
/// (`compat_tables!`, src/compat/tables.rs).
macro_rules! compat {
    ($($field:ident: $table:ident, $schema:ident, $file:literal;)*) => {
        /// The files of compat-data/, each of which a config's `compat-data` directory may hold to replace its table.
        pub const FILES: &[&str] = &[$($file,)*];

        /// Each file's text as compat-data/ holds it (comments on every field included), for `compat dump`: a
        /// config's `compat-data` directory starts from these.
        pub const BUILT_IN_FILES: &[(&str, &str)] =
            &[$(($file, include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/compat-data/", $file))),)*];

        $(impl Named for $table {
            const FILE: &'static str = $file;
        })*

        /// The tables a plan is decided with: the built-in ones, or those of the config's `compat-data` directory
        /// (each file there replaces its built-in twin; a missing file keeps the built-in one).
        #[derive(Debug, Clone)]
        pub struct Compat {
            $(pub $field: Cow<'static, $table>,)*
        }

        impl Compat {
            pub fn built_in() -> Compat {
                Compat { $($field: Cow::Borrowed($table::built_in()),)* }
            }

            /// Replace each table by its file in `dir`, where there is one.
            fn replace_from(&mut self, dir: &Path) -> Result<(), CompatError> {
                $(replace(&mut self.$field, dir)?;)*
                Ok(())
            }
        }

        /// For the test that the compiled-in tables equal the files: each file's name, and whether its parse equals
        /// the compiled-in table (`None`) or the first difference.
        #[cfg(test)]
        fn each_table_against(read: impl Fn(&str) -> String) -> Vec<(&'static str, Option<String>)> {
            let built = Compat::built_in();
            vec![$(($file, tests::difference(&$table::parse(&read($file), $file).unwrap(), &*built.$field)),)*]
        }
    };
}

/// A file of compat-data/: its name, from the one list.
pub(crate) trait Named {
    /// Its name in compat-data/ (and in a config's `compat-data` directory).
    const FILE: &'static str;
}

compat_tables!(compat);

/// Deserializes one table file. `origin` names it in errors: the override's path, or the built-in file's name.
fn parse_toml<T: serde::de::DeserializeOwned>(text: &str, origin: &str) -> Result<T, CompatError> {
    toml::from_str(text).map_err(|e| CompatError::Syntax {
        origin: origin.to_string(),
        position: e.span().map(|span| line_column(text, span.start)),
        message: e.message().trim_end().to_string(),
    })
}

/// 1-based line and column (in characters) of a byte offset, as editors count them.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

fn read(path: &Path) -> Result<String, CompatError> {
    crate::error::bounded::read_to_string(path, crate::error::bounded::TABLE)
        .map_err(|error| CompatError::Read { path: crate::error::shell::path(path), error })
}

fn invalid(origin: &str, message: String) -> CompatError {
    CompatError::Invalid { origin: origin.to_string(), message }
}

impl Compat {
    /// The newest NVCC release the tables describe (the host-compiler table's last row): a newer one is decided as
    /// this one.
    pub fn newest_release(&self) -> Version {
        self.host_compilers.newest().nvcc.release()
    }

    /// The built-in tables, each replaced by its twin in `dir` (a config's `compat-data`, already made absolute and
    /// checked to be a directory by `prepare`) when there is one. A broken override file is an error naming it.
    pub fn load(dir: Option<&Path>) -> crate::error::Result<Compat> {
        let mut compat = Compat::built_in();
        let Some(dir) = dir else {
            return Ok(compat);
        };
        compat.replace_from(dir).map_err(Unusable)?;
        Ok(compat)
    }
}

/// Replaces `table` by its file in `dir`, read and checked, when there is one.
fn replace<T: Table>(table: &mut Cow<'static, T>, dir: &Path) -> Result<(), CompatError> {
    let path = dir.join(T::FILE);
    if path.is_file() {
        *table = Cow::Owned(T::parse(&read(&path)?, &crate::error::shell::path(&path))?);
    }
    Ok(())
}

/// Whether NVCC release `cuda` lies in `first ..= last` (no `last`: open-ended). Only major.minor counts, so
/// `12.9.86` is inside a range that ends at `12.9`.
fn within(cuda: Version, first: Version, last: Option<Version>) -> bool {
    let release = cuda.release();
    release >= first.release() && last.map_or(true, |last| release <= last.release())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Row {
        name: String,
    }

    /// A file of compat-data/, read now (not when the binary was built).
    fn data_file(name: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("compat-data").join(name);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// `None` when two tables print the same, field by field (`{:#?}` shows every field, and a version's parts as
    /// written, which `==` on `Version` does not compare); else the first line that differs.
    pub(super) fn difference(parsed: &impl fmt::Debug, compiled: &impl fmt::Debug) -> Option<String> {
        let (parsed, compiled) = (format!("{parsed:#?}"), format!("{compiled:#?}"));
        if parsed == compiled {
            return None;
        }
        let mut lines = parsed.lines().zip(compiled.lines()).enumerate();
        let first =
            lines.find(|(_, (a, b))| a != b).map(|(i, (a, b))| format!("line {}: toml {a:?}, compiled {b:?}", i + 1));
        Some(first.unwrap_or_else(|| "one is a prefix of the other".to_string()))
    }

    #[test]
    fn compiled_in_tables_equal_the_toml_files() {
        // Parsed by the loader an override goes through, which also checks each table's invariants.
        for (name, diff) in each_table_against(data_file) {
            assert!(diff.is_none(), "compat-data/{name} and the table build.rs compiled in differ: {}", diff.unwrap());
        }
        let built = Compat::built_in();
        // Not vacuous: the tables are full, and compiled in (borrowed from the binary), not parsed.
        assert!(built.host_compilers.releases().len() >= 25 && built.capabilities.all().len() >= 39);
        assert!(matches!(built.platforms.all()[0].name, Cow::Borrowed("x86_64-linux")));
        assert!(matches!(built.fatbin.all()[0].source, Cow::Borrowed(_)) && built.fatbin.all().len() >= 2);
        assert!(matches!(built.launchers.all()[0].why, Cow::Borrowed(_)));
        assert!(matches!(built.combinations.all()[0].message, Cow::Borrowed(_)));
        assert!(
            matches!(built.reproducible.all().0[0].source, Cow::Borrowed(_)) && built.reproducible.all().1.len() >= 6
        );
        assert!(matches!(built.threads.all()[0].source, Cow::Borrowed(_)) && built.threads.all().len() >= 3);
    }

    #[test]
    fn the_comparison_sees_a_changed_value_or_a_version_spelled_differently() {
        let text = data_file("host-compilers.toml");
        let built = HostCompilerTable::built_in();
        let changed = HostCompilerTable::parse(&text.replacen("gcc = 9,", "gcc = 8,", 1), "t").unwrap();
        assert!(difference(&changed, built).unwrap().contains("gcc: 8"));
        // `11.0.0` == `11.0` as versions, but the row would print differently: the comparison must see it.
        let respelled =
            HostCompilerTable::parse(&text.replacen("nvcc = \"11.0\"", "nvcc = \"11.0.0\"", 1), "t").unwrap();
        assert!(difference(&respelled, built).is_some());
        let note = CapabilityTable::parse(&data_file("capabilities.toml").replacen("note = \"", "note = \"x", 1), "t");
        assert!(difference(&note.unwrap(), CapabilityTable::built_in()).is_some());
    }

    #[test]
    fn syntax_errors_name_file_line_and_column() {
        let err = parse_toml::<Row>("name = \"x\"\nnmae = \"y\"\n", "over.toml").unwrap_err();
        let shown = err.to_string();
        assert!(shown.starts_with("over.toml:2:1: "), "{shown}");
        assert!(shown.contains("nmae"), "{shown}");
    }

    #[test]
    fn counts_columns_in_characters() {
        // The closing quote is byte 7 but character 6 of its line: é takes two bytes.
        assert_eq!(line_column("a = \"é\"\nbb", 7), (1, 7));
        assert_eq!(line_column("a = \"é\"\nbb", 10), (2, 2));
        assert_eq!(line_column("x", 0), (1, 1));
    }

    #[test]
    fn ranges_compare_releases_only() {
        let v = |s: &str| s.parse::<Version>().unwrap();
        assert!(within(v("12.9.86"), v("12.8"), Some(v("12.9"))));
        assert!(within(v("12.8.61"), v("12.8"), None));
        assert!(!within(v("13.0.88"), v("12.8"), Some(v("12.9"))));
        assert!(!within(v("12.6"), v("12.8"), None));
    }
}
