//! `compat-data/fatbin.toml`: the flags that make each NVCC release write its smallest fatbins, measured. Owns the
//! row type, the lookup by release and the structural checks. When the flags are added (which phases, what the user
//! already chose) is the planner's job (`plan::fatbin`).

use super::schema::{Compression, FatbinFile};
use super::Version;
use super::{invalid, within, CompatError, Table};
use std::borrow::Cow;

// `BUILT_IN`: compat-data/fatbin.toml, compiled in by build.rs.
include!(concat!(env!("OUT_DIR"), "/fatbin.rs"));

#[derive(Debug, Clone)]
pub struct FatbinTable {
    file: Cow<'static, FatbinFile>,
}

impl Table for FatbinTable {
    type File = FatbinFile;

    fn check(file: FatbinFile, origin: &str) -> Result<Self, CompatError> {
        let fail = |message: String| Err(invalid(origin, message));
        for row in file.compression.iter() {
            if row.last_cuda.is_some_and(|last| last.release() < row.first_cuda.release()) {
                return fail(format!("[[compression]] from {}: last-cuda is before first-cuda", row.first_cuda));
            }
            if row.flags.is_empty() || row.flags.iter().any(|f| !f.starts_with('-') || f.contains(char::is_whitespace))
            {
                return fail(format!(
                    "[[compression]] from {}: `flags` must be one or more options, each one token starting with `-`",
                    row.first_cuda
                ));
            }
        }
        for pair in file.compression.windows(2) {
            if !pair[0].last_cuda.is_some_and(|last| last.release() < pair[1].first_cuda.release()) {
                return fail("[[compression]] ranges must be in order and must not overlap".to_string());
            }
        }
        Ok(FatbinTable { file: Cow::Owned(file) })
    }

    fn built_in() -> &'static Self {
        static TABLE: FatbinTable = FatbinTable { file: Cow::Borrowed(&BUILT_IN) };
        &TABLE
    }
}

impl FatbinTable {
    #[cfg(test)]
    pub fn all(&self) -> &[Compression] {
        &self.file.compression
    }

    /// The row for NVCC release `cuda`, if the table has one.
    pub fn compression(&self, cuda: Version) -> Option<&Compression> {
        self.file.compression.iter().find(|row| within(cuda, row.first_cuda, row.last_cuda))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    fn flags(cuda: &str) -> Option<Vec<String>> {
        let row = FatbinTable::built_in().compression(v(cuda))?;
        Some(row.flags.iter().map(|f| f.to_string()).collect())
    }

    #[test]
    fn every_release_from_11_0_has_flags_and_a_measured_source() {
        for release in ["11.0", "11.8", "12.0", "12.4.131", "12.9", "13.0", "13.5.37", "14.2"] {
            assert!(flags(release).is_some(), "{release}");
        }
        assert_eq!(flags("10.2"), None);
        for row in FatbinTable::built_in().all() {
            assert!(
                row.source.starts_with("measured: ") || row.source.starts_with("reported: "),
                "{}: source must start with measured: or reported:",
                row.first_cuda
            );
        }
        // The rows chosen from docs/benchmarks.md ("Fatbin compression").
        assert_eq!(flags("12.4").unwrap(), ["-Xfatbin=-compress-all"]);
        // 11.x and 12.x have no --compress-mode: it is an unknown option there.
        for release in ["11.8", "12.9"] {
            assert!(!flags(release).unwrap().iter().any(|f| f.starts_with("--compress-mode")), "{release}");
        }
    }

    #[test]
    fn rejects_rows_that_break_invariants() {
        let row = |first: &str, last: Option<&str>, flags: &str| {
            let last = last.map(|l| format!("last-cuda = \"{l}\"\n")).unwrap_or_default();
            format!("[[compression]]\nfirst-cuda = \"{first}\"\n{last}flags = {flags}\nsource = \"x\"\n")
        };
        let good = row("11.0", Some("12.9"), "[\"-a\"]") + &row("13.0", None, "[\"-b\"]");
        assert!(FatbinTable::parse(&good, "t.toml").is_ok());
        let cases = [
            row("13.0", None, "[\"-b\"]") + &row("11.0", Some("12.9"), "[\"-a\"]"),
            row("11.0", Some("13.0"), "[\"-a\"]") + &row("13.0", None, "[\"-b\"]"),
            row("11.0", None, "[\"-a\"]") + &row("13.0", None, "[\"-b\"]"),
            row("12.0", Some("11.0"), "[\"-a\"]"),
            row("11.0", None, "[]"),
            row("11.0", None, "[\"compress\"]"),
            row("11.0", None, "[\"-a -b\"]"),
        ];
        for text in cases {
            let err = FatbinTable::parse(&text, "t.toml").unwrap_err();
            assert!(matches!(err, CompatError::Invalid { .. }), "{err}\n{text}");
        }
    }
}
