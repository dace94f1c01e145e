//! `compat-data/capabilities.toml`: every GPU capability NVCC 11.0 and later compiles for, with the releases that
//! accept it and its Jetson part; plus what nvcc builds when given no target. Owns the row
//! types, lookups by capability and release, and the structural checks. Turning capabilities into `-gencode`
//! flags is the planner's job.

use super::schema::{CapabilitiesFile, CapabilityInfo, DefaultArch, Kind};
use super::Version;
use super::{invalid, within, Capability, CompatError, Suffix, Table};
use std::borrow::Cow;

// `BUILT_IN`: compat-data/capabilities.toml, compiled in by build.rs.
include!(concat!(env!("OUT_DIR"), "/capabilities.rs"));

impl Kind {
    pub fn of(capability: Capability) -> Kind {
        match capability.suffix {
            None => Kind::Baseline,
            Some(Suffix::A) => Kind::ArchSpecific,
            Some(Suffix::F) => Kind::FamilySpecific,
        }
    }
}

impl CapabilityInfo {
    pub fn is_jetson(&self) -> bool {
        self.jetson_part.is_some()
    }

    /// Whether NVCC release `cuda` compiles for this capability.
    pub fn accepted_by(&self, cuda: Version) -> bool {
        within(cuda, self.first_cuda, self.last_cuda)
    }
}

#[derive(Debug, Clone)]
pub struct CapabilityTable {
    file: Cow<'static, CapabilitiesFile>,
}

impl Table for CapabilityTable {
    type File = CapabilitiesFile;

    fn check(file: CapabilitiesFile, origin: &str) -> Result<Self, CompatError> {
        let fail = |message: String| Err(invalid(origin, message));
        // `get` binary-searches, so rows must be strictly increasing (no duplicates either).
        for pair in file.capability.windows(2) {
            if pair[0].capability >= pair[1].capability {
                return fail(format!(
                    "[[capability]] rows must be in increasing order: {} then {}",
                    pair[0].capability, pair[1].capability
                ));
            }
        }
        for row in file.capability.iter() {
            let cap = row.capability;
            if row.kind != Kind::of(cap) {
                return fail(format!("{cap}: kind {:?} does not match its suffix", row.kind));
            }
            if row.last_cuda.is_some_and(|last| last.release() < row.first_cuda.release()) {
                return fail(format!("{cap}: last-cuda is before first-cuda"));
            }
        }
        for pair in file.nvcc_default_arch.windows(2) {
            let ends_before_next = pair[0].last_cuda.is_some_and(|last| last.release() < pair[1].first_cuda.release());
            if !ends_before_next {
                return fail("[[nvcc-default-arch]] ranges must be in order and must not overlap".to_string());
            }
        }
        Ok(CapabilityTable { file: Cow::Owned(file) })
    }

    fn built_in() -> &'static Self {
        static TABLE: CapabilityTable = CapabilityTable { file: Cow::Borrowed(&BUILT_IN) };
        &TABLE
    }
}

impl CapabilityTable {
    /// What nvcc `cuda` builds for `-arch=all` and `-arch=all-major`, as `(all, all-major, ptx)`: every baseline
    /// capability it accepts; every major one (`X.0`) with the oldest; and with either, PTX of the newest major
    /// (measured with `nvcc -arch=all -dryrun` on 11.8, 12.4, 13.0 and 13.5: tests/real/gpu.rs). `None` for a
    /// release that accepts none.
    pub fn nvcc_all(&self, cuda: Version) -> Option<(Vec<Capability>, Vec<Capability>, Capability)> {
        let all: Vec<Capability> = self
            .all()
            .iter()
            .filter(|info| info.capability.suffix.is_none() && info.accepted_by(cuda))
            .map(|info| info.capability)
            .collect();
        let oldest = *all.first()?;
        let major: Vec<Capability> = all.iter().copied().filter(|c| c.minor == 0 || *c == oldest).collect();
        let ptx = *major.iter().rev().find(|c| c.minor == 0)?;
        Some((all, major, ptx))
    }

    pub fn all(&self) -> &[CapabilityInfo] {
        &self.file.capability
    }

    pub fn get(&self, capability: Capability) -> Option<&CapabilityInfo> {
        let index = self.file.capability.binary_search_by_key(&capability, |row| row.capability).ok()?;
        Some(&self.file.capability[index])
    }

    /// What nvcc itself compiles for when the command line names no target.
    pub fn nvcc_default_arch(&self, cuda: Version) -> Option<Capability> {
        self.file
            .nvcc_default_arch
            .iter()
            .find(|row| within(cuda, row.first_cuda, row.last_cuda))
            .map(|row| row.capability)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    fn table() -> &'static CapabilityTable {
        CapabilityTable::built_in()
    }

    fn info(cap: &str) -> &'static CapabilityInfo {
        table().get(cap.parse().unwrap()).unwrap_or_else(|| panic!("no row for {cap}"))
    }

    fn accepts(cuda: &str, cap: &str) -> bool {
        info(cap).accepted_by(v(cuda))
    }

    #[test]
    fn covers_every_baseline_from_3_5_to_12_1() {
        let baselines: Vec<String> =
            table().all().iter().filter(|r| r.kind == Kind::Baseline).map(|r| r.capability.to_string()).collect();
        let expected = [
            "3.5", "3.7", "5.0", "5.2", "5.3", "6.0", "6.1", "6.2", "7.0", "7.2", "7.5", "8.0", "8.6", "8.7", "8.8",
            "8.9", "9.0", "10.0", "10.1", "10.3", "10.7", "11.0", "12.0", "12.1",
        ];
        assert_eq!(baselines, expected);
    }

    #[test]
    fn variants_exist_only_where_nvidia_has_them() {
        let variants: Vec<String> =
            table().all().iter().filter(|r| r.kind != Kind::Baseline).map(|r| r.capability.to_string()).collect();
        let expected = [
            "9.0a", "10.0a", "10.0f", "10.1a", "10.1f", "10.3a", "10.3f", "10.7a", "10.7f", "11.0a", "11.0f", "12.0a",
            "12.0f", "12.1a", "12.1f",
        ];
        assert_eq!(variants, expected);
        for row in table().all() {
            // Every variant has its baseline, from no later release: `-arch=sm_90a` also embeds compute_90 PTX.
            if let Some(suffix) = row.capability.suffix {
                let base = info(&row.capability.baseline().to_string());
                assert!(base.first_cuda <= row.first_cuda, "{} predates its baseline", row.capability);
                let first = if suffix == Suffix::A { "12.0" } else { "12.9" };
                assert!(row.first_cuda >= v(first), "{} before {first}, when NVIDIA added the suffix", row.capability);
            }
        }
    }

    #[test]
    fn ranges_are_sane_and_sourced() {
        for row in table().all() {
            let cap = row.capability;
            assert!(row.first_cuda >= v("11.0"), "{cap}: the table starts at 11.0");
            assert!(row.first_cuda.release() == row.first_cuda, "{cap}: first-cuda is major.minor");
            assert!(row.last_cuda.map_or(true, |l| l >= row.first_cuda), "{cap}: first after last");
            assert!(!row.architecture.is_empty(), "{cap}: no architecture");
            assert!(
                row.source.starts_with("measured: ") || row.source.starts_with("reported: "),
                "{cap}: source must start with measured: or reported:"
            );
            if row.example_gpus.is_empty() {
                let why = row.note.is_some() || info(&cap.baseline().to_string()).note.is_some();
                assert!(why, "{cap}: a row without example GPUs must say why (in its note or its baseline's)");
            }
        }
    }

    #[test]
    fn spot_checks_from_the_measured_table() {
        assert!(!accepts("11.8", "9.0a"));
        assert!(accepts("12.0", "9.0a"));
        assert!(accepts("11.8", "3.5") && !accepts("12.0", "3.5"));
        assert!(accepts("12.9", "7.0") && !accepts("13.0", "7.0"));
        assert!(accepts("12.9", "5.0") && !accepts("13.0", "7.2"));
        assert!(accepts("12.8", "10.1") && !accepts("13.0", "10.1"));
        assert!(accepts("13.0", "11.0") && !accepts("12.9", "11.0"));
        assert!(!accepts("12.9", "8.8") && accepts("13.0", "8.8"));
        assert!(!accepts("13.3", "10.7") && accepts("13.4", "10.7f"));
        assert!(accepts("12.8", "12.0a") && !accepts("12.8", "12.0f") && accepts("12.9", "12.1f"));
        assert!(!accepts("12.8", "12.1") && accepts("12.9.86", "12.1"));
        assert!(!accepts("12.8", "10.3") && accepts("12.9", "10.3a"));
        assert!(accepts("13.5", "7.5") && accepts("13.5", "12.1a"));
    }

    #[test]
    fn jetson_parts() {
        let part = |cap: &str| info(cap).jetson_part.as_deref();
        assert_eq!(part("8.7"), Some("Orin"));
        assert_eq!(part("7.2"), Some("Xavier"));
        assert_eq!(part("6.2"), Some("TX2"));
        assert_eq!(part("10.1"), Some("Thor"));
        assert_eq!(part("11.0f"), Some("Thor"));
        assert_eq!(part("8.6"), None);
        assert_eq!(part("12.1"), None);
    }

    #[test]
    fn nvcc_default_arch() {
        let default = |cuda: &str| table().nvcc_default_arch(v(cuda)).map(|c| c.to_string());
        assert_eq!(default("11.8").as_deref(), Some("5.2"));
        assert_eq!(default("12.9.86").as_deref(), Some("5.2"));
        assert_eq!(default("13.0").as_deref(), Some("7.5"));
        assert_eq!(default("10.2"), None);
        // nvcc's own default must be something that release accepts.
        for release in ["11.0", "11.8", "12.0", "12.9", "13.0", "13.5"] {
            let cap = table().nvcc_default_arch(v(release)).unwrap();
            assert!(table().get(cap).unwrap().accepted_by(v(release)), "{release} defaults to {cap}");
        }
    }

    #[test]
    fn rejects_rows_that_break_invariants() {
        let row = |cap: &str, kind: &str, extra: &str| {
            format!("[[capability]]\ncapability = \"{cap}\"\narchitecture = \"X\"\nexample-gpus = []\nkind = \"{kind}\"\nfirst-cuda = \"12.0\"\nsource = \"x\"\n{extra}\n")
        };
        let tail = "[[nvcc-default-arch]]\nfirst-cuda = \"11.0\"\ncapability = \"5.2\"\nsource = \"x\"\n";
        let cases = [
            row("9.0a", "arch-specific", "") + &row("9.0", "baseline", ""),
            row("9.0", "baseline", "") + &row("9.0", "baseline", ""),
            row("9.0a", "baseline", ""),
            row("9.0", "baseline", "last-cuda = \"11.8\""),
        ];
        for case in cases {
            let text = case + tail;
            let err = CapabilityTable::parse(&text, "t.toml").unwrap_err();
            assert!(matches!(err, CompatError::Invalid { .. }), "{err}\n{text}");
        }
        assert!(CapabilityTable::parse(&(row("9.0", "baseline", "") + tail), "t.toml").is_ok());
    }
}

/// nvcc's `all` and `all-major`, as `nvcc -arch=all -dryrun` and `-arch=all-major -dryrun` listed them (11.8.89,
/// 12.4.131, 13.0.88, 13.5.37), derived from the table's rows: a new row changes them only as nvcc does.
#[cfg(test)]
mod nvcc_all {
    use super::*;

    #[test]
    fn all_and_all_major_are_nvccs_own() {
        let table = CapabilityTable::built_in();
        let compact =
            |caps: &[Capability]| caps.iter().map(|c| c.sm_name()[3..].to_string()).collect::<Vec<_>>().join(" ");
        let rows = [
            ("11.8", "35 37 50 52 53 60 61 62 70 72 75 80 86 87 89 90", "35 50 60 70 80 90", "90"),
            ("12.4", "50 52 53 60 61 62 70 72 75 80 86 87 89 90", "50 60 70 80 90", "90"),
            ("13.0", "75 80 86 87 88 89 90 100 103 110 120 121", "75 80 90 100 110 120", "120"),
            ("13.5", "75 80 86 87 88 89 90 100 103 107 110 120 121", "75 80 90 100 110 120", "120"),
        ];
        for (release, all, major, ptx) in rows {
            let (a, m, p) = table.nvcc_all(release.parse().unwrap()).unwrap();
            assert_eq!((compact(&a).as_str(), compact(&m).as_str(), &p.sm_name()[3..]), (all, major, ptx), "{release}");
        }
    }
}
