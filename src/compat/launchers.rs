//! `compat-data/launchers.toml`: compiler caches (`launcher`) some releases of which fail by themselves with some
//! NVCC releases. Owns the row type, the lookup by launcher, launcher version and NVCC release, and the structural
//! checks. Leaving such a launcher out of a plan, and saying why, is the planner's job (`plan::launcher`).

use super::schema::{KnownBad, LauncherCall, LaunchersFile};
use super::Version;
use super::{invalid, within, CompatError, Table};
use std::borrow::Cow;

// `BUILT_IN`: compat-data/launchers.toml, compiled in by build.rs.
include!(concat!(env!("OUT_DIR"), "/launchers.rs"));

#[derive(Debug, Clone)]
pub struct LauncherTable {
    file: Cow<'static, LaunchersFile>,
}

impl Table for LauncherTable {
    type File = LaunchersFile;

    fn check(file: LaunchersFile, origin: &str) -> Result<Self, CompatError> {
        let fail = |message: String| Err(invalid(origin, message));
        for row in file.known_bad.iter() {
            let at = format!("[[known-bad]] {} {}", row.launcher, row.first_version);
            if row.launcher.is_empty() || row.launcher.contains(|c: char| c == '/' || c.is_whitespace()) {
                return fail(format!("{at}: `launcher` must be a file name, without a directory or spaces"));
            }
            if row.last_version.release() < row.first_version.release() {
                return fail(format!("{at}: last-version is before first-version"));
            }
            if row.last_cuda.is_some_and(|last| last.release() < row.first_cuda.release()) {
                return fail(format!("{at}: last-cuda is before first-cuda"));
            }
            if row.calls.as_ref().is_some_and(|calls| calls.is_empty()) {
                return fail(format!("{at}: `calls` lists no call; leave it out for every call"));
            }
            if row.why.trim().is_empty() || row.source.trim().is_empty() {
                return fail(format!("{at}: `why` and `source` must say something"));
            }
        }
        // Two rows that both hold for some launcher version, NVCC release and call would make the lookup's answer
        // depend on their order.
        for (i, a) in file.known_bad.iter().enumerate() {
            if let Some(b) = file.known_bad[i + 1..].iter().find(|b| overlap(a, b)) {
                return fail(format!(
                    "[[known-bad]] {} {} and {} {} overlap: both hold for some release of each and some call",
                    a.launcher, a.first_version, b.launcher, b.first_version
                ));
            }
        }
        Ok(LauncherTable { file: Cow::Owned(file) })
    }

    fn built_in() -> &'static Self {
        static TABLE: LauncherTable = LauncherTable { file: Cow::Borrowed(&BUILT_IN) };
        &TABLE
    }
}

impl LauncherTable {
    #[cfg(test)]
    pub fn all(&self) -> &[KnownBad] {
        &self.file.known_bad
    }

    /// Whether any row names `launcher` (a file name): only then is its version worth asking.
    pub fn names(&self, launcher: &str) -> bool {
        self.file.known_bad.iter().any(|row| row.launcher == launcher)
    }

    /// The row that says `launcher` at `version` fails with NVCC `release` in a call of the kinds `call` is (none,
    /// for a call of no kind a row names), if any.
    pub fn known_bad(
        &self,
        launcher: &str,
        version: Version,
        release: Version,
        call: &[LauncherCall],
    ) -> Option<&KnownBad> {
        self.file.known_bad.iter().find(|row| {
            row.launcher == launcher
                && within(version, row.first_version, Some(row.last_version))
                && within(release, row.first_cuda, row.last_cuda)
                && row.calls.as_ref().map_or(true, |calls| calls.iter().any(|c| call.contains(c)))
        })
    }
}

/// Whether two rows name the same launcher and share a launcher release, an NVCC release and a kind of call.
fn overlap(a: &KnownBad, b: &KnownBad) -> bool {
    let meet = |first_a: Version, last_a: Option<Version>, first_b: Version, last_b: Option<Version>| {
        within(first_a, first_b, last_b) || within(first_b, first_a, last_a)
    };
    let share_a_call = match (&a.calls, &b.calls) {
        (Some(a), Some(b)) => a.iter().any(|c| b.contains(c)),
        _ => true,
    };
    a.launcher == b.launcher
        && meet(a.first_version, Some(a.last_version), b.first_version, Some(b.last_version))
        && meet(a.first_cuda, a.last_cuda, b.first_cuda, b.last_cuda)
        && share_a_call
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    #[test]
    fn the_known_bad_table_keys_on_launcher_release_nvcc_release_and_call() {
        use LauncherCall::{DeviceLto, Fatbin};
        let known_bad = |launcher, version, release, call: &[LauncherCall]| {
            LauncherTable::built_in().known_bad(launcher, version, release, call)
        };
        // From 13.3 on, every call.
        assert!(known_bad("sccache", v("0.16.0"), v("13.5.44"), &[]).is_some());
        assert!(known_bad("sccache", v("0.16.2"), v("13.3"), &[]).is_some());
        assert!(known_bad("sccache", v("0.16.0"), v("14.0"), &[DeviceLto]).is_some());
        // 11.8 to 13.2: device-LTO compiles and -fatbin only.
        for release in ["11.8.89", "12.4.131", "13.0.88", "13.2"] {
            assert!(known_bad("sccache", v("0.16.0"), v(release), &[]).is_none(), "{release}");
            assert!(known_bad("sccache", v("0.16.0"), v(release), &[DeviceLto]).is_some(), "{release}");
            assert!(known_bad("sccache", v("0.16.0"), v(release), &[Fatbin]).is_some(), "{release}");
        }
        assert!(known_bad("sccache", v("0.16.0"), v("11.7"), &[DeviceLto]).is_none());
        assert!(known_bad("sccache", v("0.15.0"), v("13.5"), &[]).is_none());
        assert!(known_bad("sccache", v("0.17.0"), v("13.5"), &[Fatbin]).is_none());
        assert!(known_bad("ccache", v("0.16.0"), v("13.5"), &[DeviceLto, Fatbin]).is_none());
        for row in LauncherTable::built_in().all() {
            assert!(row.first_version <= row.last_version && !row.source.is_empty() && !row.why.is_empty(), "{row:?}");
        }
    }

    #[test]
    fn every_row_has_a_measured_or_reported_source() {
        let table = LauncherTable::built_in();
        assert!(!table.all().is_empty());
        for row in table.all() {
            assert!(
                row.source.starts_with("measured: ") || row.source.starts_with("reported: "),
                "{} {}: source must start with measured: or reported:",
                row.launcher,
                row.first_version
            );
        }
        // What issue 15 measured: sccache 0.16 fails from nvcc 13.3 on.
        let row = table.known_bad("sccache", v("0.16.0"), v("13.3.73"), &[]).unwrap();
        assert_eq!((row.first_cuda, row.last_cuda), (v("13.3"), None));
    }

    #[test]
    fn a_last_cuda_ends_the_range() {
        let text = "[[known-bad]]\nlauncher = \"c\"\nfirst-version = \"1.0\"\nlast-version = \"1.2\"\n\
                    first-cuda = \"12.0\"\nlast-cuda = \"12.4\"\nwhy = \"w\"\nsource = \"s\"\n";
        let table = LauncherTable::parse(text, "t.toml").unwrap();
        assert!(table.names("c") && !table.names("cc"));
        assert!(table.known_bad("c", v("1.2.9"), v("12.4.131"), &[]).is_some());
        assert!(table.known_bad("c", v("1.0"), v("12.0"), &[]).is_some());
        assert!(table.known_bad("c", v("1.1"), v("12.5"), &[]).is_none());
        assert!(table.known_bad("c", v("1.3"), v("12.2"), &[]).is_none());
        assert!(table.known_bad("c", v("0.9"), v("12.2"), &[]).is_none());
        assert!(table.known_bad("c", v("1.1"), v("11.8"), &[]).is_none());
    }

    #[test]
    fn rejects_rows_that_break_invariants() {
        let row = |launcher: &str, versions: (&str, &str), cuda: (&str, Option<&str>), why: &str, source: &str| {
            let last_cuda = cuda.1.map(|l| format!("last-cuda = \"{l}\"\n")).unwrap_or_default();
            format!(
                "[[known-bad]]\nlauncher = \"{launcher}\"\nfirst-version = \"{}\"\nlast-version = \"{}\"\n\
                 first-cuda = \"{}\"\n{last_cuda}why = \"{why}\"\nsource = \"{source}\"\n",
                versions.0, versions.1, cuda.0
            )
        };
        let good = row("sccache", ("0.16", "0.16"), ("13.3", None), "w", "s")
            + &row("sccache", ("0.17", "0.18"), ("12.0", Some("12.4")), "w", "s")
            + &row("sccache", ("0.17", "0.18"), ("12.5", None), "w", "s")
            + &row("ccache", ("0.16", "0.16"), ("13.3", None), "w", "s");
        assert!(LauncherTable::parse(&good, "t.toml").is_ok());
        // Rows for different calls of the same releases do not overlap.
        let calls = |calls: &str| {
            row("c", ("1.0", "1.0"), ("12.0", None), "w", "s").replace("why =", &format!("calls = {calls}\nwhy ="))
        };
        assert!(LauncherTable::parse(&(calls("[\"fatbin\"]") + &calls("[\"device-lto\"]")), "t.toml").is_ok());
        let cases = [
            row("", ("0.16", "0.16"), ("13.3", None), "w", "s"),
            row("bin/sccache", ("0.16", "0.16"), ("13.3", None), "w", "s"),
            row("s cache", ("0.16", "0.16"), ("13.3", None), "w", "s"),
            row("sccache", ("0.16", "0.15"), ("13.3", None), "w", "s"),
            row("sccache", ("0.16", "0.16"), ("13.3", Some("13.2")), "w", "s"),
            row("sccache", ("0.16", "0.16"), ("13.3", None), " ", "s"),
            row("sccache", ("0.16", "0.16"), ("13.3", None), "w", ""),
            // Overlapping rows for one launcher: the same releases twice, and ranges that meet at one end.
            row("sccache", ("0.16", "0.16"), ("13.3", None), "w", "s")
                + &row("sccache", ("0.16", "0.16"), ("13.3", None), "w", "s"),
            row("sccache", ("0.15", "0.16"), ("12.0", Some("13.3")), "w", "s")
                + &row("sccache", ("0.16", "0.17"), ("13.3", None), "w", "s"),
            row("sccache", ("0.16", "0.16"), ("14.0", None), "w", "s")
                + &row("sccache", ("0.14", "0.18"), ("13.0", None), "w", "s"),
            // Rows for some calls overlap a row for every call, or one another where they share a call.
            row("sccache", ("0.16", "0.16"), ("13.3", None), "w", "s")
                + &row("sccache", ("0.16", "0.16"), ("13.3", None), "w", "s")
                    .replace("why =", "calls = [\"fatbin\"]\nwhy ="),
            row("sccache", ("0.16", "0.16"), ("13.3", None), "w", "s").replace("why =", "calls = [\"fatbin\"]\nwhy =")
                + &row("sccache", ("0.16", "0.16"), ("13.3", None), "w", "s")
                    .replace("why =", "calls = [\"device-lto\", \"fatbin\"]\nwhy ="),
            // A list of no call.
            row("sccache", ("0.16", "0.16"), ("13.3", None), "w", "s").replace("why =", "calls = []\nwhy ="),
        ];
        for text in cases {
            let err = LauncherTable::parse(&text, "t.toml").unwrap_err();
            assert!(matches!(err, CompatError::Invalid { .. }), "{err}\n{text}");
        }
        // Unknown keys are syntax errors, as in every file here.
        let err = LauncherTable::parse(&good.replacen("why =", "reason =", 1), "t.toml").unwrap_err();
        assert!(matches!(err, CompatError::Syntax { .. }), "{err}");
    }
}
