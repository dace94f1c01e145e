//! `compat-data/host-compilers.toml`: the newest major of each host-compiler family each NVCC release accepts. Owns the row type,
//! the release lookup (patch rows included) and the structural checks; choosing a compiler is the planner's job.

use super::schema::{Accepts, HostCompilersFile, HostLimits};
use super::Version;
use super::{invalid, CompatError, Table};
use std::borrow::Cow;

// `BUILT_IN`: compat-data/host-compilers.toml, compiled in by build.rs.
include!(concat!(env!("OUT_DIR"), "/host_compilers.rs"));

/// nvcc reads `NVCC_CCBIN` from this release on. Measured with `NVCC_CCBIN=g++-11 nvcc -dryrun`: 11.8.89 and 12.4.131
/// run `gcc`, 12.5.40 and 13.0.88 run `g++-11`.
pub const FIRST_HONOURING_NVCC_CCBIN: Version = Version::major_minor(12, 5);

impl HostLimits {
    /// What this release accepts.
    pub fn accepts(&self) -> Accepts {
        self.accepts
    }
}

#[derive(Debug, Clone)]
pub struct HostCompilerTable {
    file: Cow<'static, HostCompilersFile>,
}

impl Table for HostCompilerTable {
    type File = HostCompilersFile;

    fn check(file: HostCompilersFile, origin: &str) -> Result<Self, CompatError> {
        if file.release.is_empty() {
            return Err(invalid(origin, "no [[release]] rows".to_string()));
        }
        // The lookup walks rows in order, so they must be strictly increasing (which also rules out duplicates).
        for pair in file.release.windows(2) {
            if pair[0].nvcc >= pair[1].nvcc {
                let message = format!(
                    "[[release]] rows must be in increasing nvcc order: {} then {}",
                    pair[0].nvcc, pair[1].nvcc
                );
                return Err(invalid(origin, message));
            }
        }
        Ok(HostCompilerTable { file: Cow::Owned(file) })
    }

    fn built_in() -> &'static Self {
        static TABLE: HostCompilerTable = HostCompilerTable { file: Cow::Borrowed(&BUILT_IN) };
        &TABLE
    }
}

impl HostCompilerTable {
    pub fn releases(&self) -> &[HostLimits] {
        &self.file.release
    }

    /// The limits of nvcc version `nvcc`: the last row of the same `major.minor` release at or below it. A patch row
    /// (`12.2.128`) applies from that build on; a bare `12.2` gets the release's first row, the safe side.
    /// `None` for a release the table does not know (older, newer, or never released like 12.7): the caller decides
    /// what to do rather than this table guessing.
    pub fn limits_for(&self, nvcc: Version) -> Option<&HostLimits> {
        self.releases().iter().rev().find(|row| row.nvcc.release() == nvcc.release() && row.nvcc <= nvcc)
    }

    /// The newest row: what to assume, and say so, for an nvcc newer than the table.
    pub fn newest(&self) -> &HostLimits {
        self.releases().last().expect("parse rejects an empty table")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compat::CompilerFamily;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    fn table() -> &'static HostCompilerTable {
        HostCompilerTable::built_in()
    }

    fn limits(nvcc: &str) -> (u32, u32) {
        let row = table().limits_for(v(nvcc)).unwrap_or_else(|| panic!("no row for {nvcc}"));
        (row.accepts.gcc, row.accepts.clang)
    }

    /// Releases NVIDIA numbered but never shipped; the table must not invent rows for them.
    const NEVER_RELEASED: [&str; 1] = ["12.7"];

    #[test]
    fn has_every_release_from_11_0_to_the_newest() {
        // 11.x ended at 11.8 and 12.x at 12.9; 13.x runs to the table's newest, so a new row needs no change here.
        let newest = table().newest().nvcc.release();
        assert_eq!(newest.major, 13, "a new major release: say here where 13.x ended");
        let mut expected = Vec::new();
        for (major, last_minor) in [(11, 8), (12, 9), (13, newest.minor)] {
            for minor in 0..=last_minor {
                let release = Version::major_minor(major, minor);
                if !NEVER_RELEASED.contains(&release.to_string().as_str()) {
                    expected.push(release);
                }
            }
        }
        let mut present: Vec<Version> = table().releases().iter().map(|r| r.nvcc.release()).collect();
        present.dedup();
        assert_eq!(present, expected);
        // Each release's first row is the bare `major.minor` one, so every build of it is covered.
        for release in &expected {
            let first = table().releases().iter().find(|r| r.nvcc.release() == *release).unwrap();
            assert_eq!(first.nvcc, *release, "{release} must start with a major.minor row");
        }
    }

    #[test]
    fn limits_never_decrease_without_a_note() {
        for pair in table().releases().windows(2) {
            let (old, new) = (&pair[0], &pair[1]);
            if new.note.is_none() {
                let (old, new_) = (old.accepts(), new.accepts());
                for f in &crate::compat::FAMILIES {
                    let drops = new_.newest(f.id) < old.newest(f.id);
                    assert!(!drops, "{} limit drops at {} without a note", f.name, new.nvcc);
                }
            }
        }
    }

    #[test]
    fn every_row_says_where_it_comes_from() {
        for row in table().releases() {
            assert!(
                row.source.starts_with("measured: ") || row.source.starts_with("reported: "),
                "{}: source must start with measured: or reported:",
                row.nvcc
            );
        }
    }

    #[test]
    fn spot_checks_from_the_measured_notes() {
        assert_eq!(limits("11.8"), (11, 14));
        assert_eq!(limits("11.8.89"), (11, 14));
        assert_eq!(limits("12.0"), (12, 14));
        assert_eq!(limits("12.4"), (13, 17));
        assert_eq!(limits("12.5"), (13, 17));
        assert_eq!(limits("12.6"), (13, 18));
        assert_eq!(limits("12.8"), (14, 19));
        assert_eq!(limits("12.9.86"), (14, 19));
        assert_eq!(limits("13.0"), (15, 20));
        assert_eq!(limits("13.3"), (15, 21));
        assert_eq!(limits("13.4"), (16, 22));
        assert_eq!(limits("13.5.37"), (16, 22));
    }

    #[test]
    fn patch_rows_apply_from_their_build_on() {
        // Clang 16 arrived within 12.2: the 12.2.91 header rejects it, 12.2.128 accepts it.
        assert_eq!(limits("12.2"), (12, 15));
        assert_eq!(limits("12.2.91"), (12, 15));
        assert_eq!(limits("12.2.128"), (12, 16));
        assert_eq!(limits("12.2.140"), (12, 16));
        assert_eq!(limits("12.3"), (12, 16));
    }

    #[test]
    fn unknown_releases_have_no_limits() {
        // One past the newest row, derived, so that a new release's row needs no change here (issue 32).
        let newest = table().newest().nvcc.release();
        let next = Version::new(newest.major, newest.minor + 1, 0).to_string();
        for release in ["10.2", "12.7", next.as_str(), "99.0"] {
            assert!(table().limits_for(v(release)).is_none(), "{release}");
        }
    }

    #[test]
    fn accepts_is_inclusive() {
        let accepts = table().limits_for(v("11.8")).unwrap().accepts();
        let gcc = |s: &str| accepts.accepts(CompilerFamily::Gcc, v(s));
        let clang = |s: &str| accepts.accepts(CompilerFamily::Clang, v(s));
        assert!(gcc("11.4.0") && !gcc("12.1") && gcc("4.8"));
        assert!(clang("14.0.6") && !clang("15.0.0"));
        assert_eq!(accepts.describe(), "GCC up to 11 and Clang up to 14");
    }

    #[test]
    fn rejects_unsorted_or_duplicate_rows() {
        let row = |nvcc: &str| {
            format!("[[release]]\nnvcc = \"{nvcc}\"\naccepts = {{ gcc = 1, clang = 1 }}\nsource = \"x\"\n")
        };
        for bad in [row("12.4") + &row("12.3"), row("12.4") + &row("12.4.0")] {
            let err = HostCompilerTable::parse(&bad, "t.toml").unwrap_err();
            assert!(matches!(err, CompatError::Invalid { .. }), "{err}");
        }
        assert!(HostCompilerTable::parse("", "t.toml").is_err());
    }

    #[test]
    fn rejects_unknown_fields_with_their_position() {
        let text = "[[release]]\nnvcc = \"12.4\"\naccepts = { gcc = 13, clang = 17 }\noldest-gcc = 6\nsource = \"x\"\n";
        let err = HostCompilerTable::parse(text, "t.toml").unwrap_err().to_string();
        assert!(err.starts_with("t.toml:4:1: ") && err.contains("oldest-gcc"), "{err}");
        // A family the wrapper does not know, and one left out, are named with their line.
        let text = "[[release]]\nnvcc = \"12.4\"\naccepts = { gcc = 13, clang = 17, icc = 19 }\nsource = \"x\"\n";
        let err = HostCompilerTable::parse(text, "t.toml").unwrap_err().to_string();
        assert!(err.starts_with("t.toml:3:") && err.contains("icc"), "{err}");
        let text = "[[release]]\nnvcc = \"12.4\"\naccepts = { gcc = 13 }\nsource = \"x\"\n";
        let err = HostCompilerTable::parse(text, "t.toml").unwrap_err().to_string();
        assert!(err.starts_with("t.toml:3:") && err.contains("clang"), "{err}");
    }
}
