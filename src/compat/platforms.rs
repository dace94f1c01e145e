//! `compat-data/platforms.toml`: the target platforms (`targets/<name>` in a toolkit), the releases that ship each,
//! their GNU triples and Nix systems, and which Jetson parts a non-Jetson platform also serves. Owns the row types,
//! lookups by name, triple and Nix system, and the rule "may this capability be built for this platform". Finding
//! a cross compiler or a target directory on disk is not its job.

use super::schema::{CapabilityInfo, JetsonServedBy, Platform, PlatformsFile, ReleaseRange};
use super::Version;
use super::{invalid, within, CompatError, Table};
use std::borrow::Cow;

// `BUILT_IN`: compat-data/platforms.toml, compiled in by build.rs.
include!(concat!(env!("OUT_DIR"), "/platforms.rs"));

impl ReleaseRange {
    pub fn contains(&self, cuda: Version) -> bool {
        within(cuda, self.first_cuda, self.last_cuda)
    }
}

impl Platform {
    pub fn shipped_in(&self, cuda: Version) -> bool {
        self.shipped.iter().any(|range| range.contains(cuda))
    }

    /// Whether a GNU triple names this platform's CPU on Linux. Only the CPU and OS count, because vendors spell
    /// the middle differently (`aarch64-linux-gnu`, `aarch64-unknown-linux-gnu`, `aarch64-none-linux-gnu`).
    pub fn matches_triple(&self, triple: &str) -> bool {
        let cpu = |t: &str| t.split('-').next().unwrap_or_default().to_string();
        triple.contains("-linux") && self.gnu_triples.iter().any(|known| cpu(known) == cpu(triple))
    }
}

#[derive(Debug, Clone)]
pub struct PlatformTable {
    file: Cow<'static, PlatformsFile>,
}

impl Table for PlatformTable {
    type File = PlatformsFile;

    fn check(file: PlatformsFile, origin: &str) -> Result<Self, CompatError> {
        let fail = |message: String| Err(invalid(origin, message));
        for (i, platform) in file.platform.iter().enumerate() {
            let name = &platform.name;
            if file.platform[..i].iter().any(|earlier| earlier.name == *name) {
                return fail(format!("platform {name} appears twice"));
            }
            if platform.shipped.is_empty() {
                return fail(format!("{name}: shipped has no range"));
            }
            for range in platform.shipped.iter() {
                if range.last_cuda.is_some_and(|last| last.release() < range.first_cuda.release()) {
                    return fail(format!("{name}: a shipped range ends before it starts"));
                }
            }
            for pair in platform.shipped.windows(2) {
                let ends_before_next =
                    pair[0].last_cuda.is_some_and(|last| last.release() < pair[1].first_cuda.release());
                if !ends_before_next {
                    return fail(format!("{name}: shipped ranges must be in order and must not overlap"));
                }
            }
        }
        for served in file.jetson_served_by.iter() {
            match file.platform.iter().find(|p| p.name == served.platform) {
                None => return fail(format!("[[jetson-served-by]] names unknown platform {}", served.platform)),
                Some(p) if p.jetson => {
                    return fail(format!("[[jetson-served-by]] is for non-Jetson platforms, not {}", p.name))
                }
                Some(_) => {}
            }
        }
        Ok(PlatformTable { file: Cow::Owned(file) })
    }

    fn built_in() -> &'static Self {
        static TABLE: PlatformTable = PlatformTable { file: Cow::Borrowed(&BUILT_IN) };
        &TABLE
    }
}

impl PlatformTable {
    pub fn all(&self) -> &[Platform] {
        &self.file.platform
    }

    /// By target-directory name (`sbsa-linux`).
    #[cfg(test)]
    pub fn get(&self, name: &str) -> Option<&Platform> {
        self.file.platform.iter().find(|p| p.name == name)
    }

    /// Every platform for a GNU triple. aarch64 gives two (sbsa-linux and the Jetson aarch64-linux): the GPU
    /// capability decides between them, not the CPU.
    pub fn by_triple(&self, triple: &str) -> Vec<&Platform> {
        self.file.platform.iter().filter(|p| p.matches_triple(triple)).collect()
    }

    /// Every platform for a Nix system string (`aarch64-linux` gives two, as for triples).
    pub fn by_nix_system(&self, system: &str) -> Vec<&Platform> {
        self.file.platform.iter().filter(|p| p.nix_system == system).collect()
    }

    /// The `[[jetson-served-by]]` rows: which other platform serves which Jetson part from which release.
    pub fn jetson_served_by(&self) -> &[JetsonServedBy] {
        &self.file.jetson_served_by
    }

    /// Whether `platform` serves the Jetson part `part` in release `cuda` (beyond the Jetson platform itself).
    pub fn serves_jetson_part(&self, platform: &Platform, part: &str, cuda: Version) -> bool {
        if platform.jetson {
            return true;
        }
        self.file
            .jetson_served_by
            .iter()
            .any(|s| s.platform == platform.name && s.part == part && within(cuda, s.first_cuda, None))
    }

    /// Whether code for `capability` may be built for `platform` with release `cuda`. The Jetson platform takes
    /// only Jetson capabilities (its devices have no other GPU, and Nixpkgs refuses mixing); another platform
    /// takes a Jetson capability only where `[[jetson-served-by]]` says it serves that part from that release on.
    /// Whether the release accepts the capability at all is `CapabilityInfo::accepted_by`.
    pub fn allows(&self, platform: &Platform, capability: &CapabilityInfo, cuda: Version) -> bool {
        match &capability.jetson_part {
            None => !platform.jetson,
            Some(part) => self.serves_jetson_part(platform, part, cuda),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::CapabilityTable;
    use super::*;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    fn table() -> &'static PlatformTable {
        PlatformTable::built_in()
    }

    fn platform(name: &str) -> &'static Platform {
        table().get(name).unwrap_or_else(|| panic!("no platform {name}"))
    }

    fn names<'a>(platforms: impl IntoIterator<Item = &'a Platform>) -> Vec<&'a str> {
        platforms.into_iter().map(|p| &*p.name).collect()
    }

    #[test]
    fn has_the_four_targets_each_sourced() {
        assert_eq!(names(table().all().iter()), ["x86_64-linux", "sbsa-linux", "aarch64-linux", "ppc64le-linux"]);
        for p in table().all() {
            assert!(p.source.starts_with("measured: ") || p.source.starts_with("reported: "), "{}", p.name);
            assert!(!p.gnu_triples.is_empty(), "{}", p.name);
            assert!(p.shipped.iter().all(|r| r.first_cuda >= v("11.0")), "{}: the tables start at 11.0", p.name);
        }
    }

    #[test]
    fn shipped_releases_with_gaps() {
        let ships = |name: &str, cuda: &str| platform(name).shipped_in(v(cuda));
        assert!(ships("ppc64le-linux", "12.4.131") && !ships("ppc64le-linux", "12.5"));
        assert!(ships("aarch64-linux", "11.8") && ships("aarch64-linux", "12.2"));
        assert!(!ships("aarch64-linux", "12.3"), "no Jetson redist in 12.3");
        assert!(ships("aarch64-linux", "12.4") && ships("aarch64-linux", "12.9.86"));
        assert!(!ships("aarch64-linux", "13.0") && !ships("aarch64-linux", "11.7"));
        assert!(ships("sbsa-linux", "13.5") && ships("x86_64-linux", "11.0"));
    }

    #[test]
    fn lookups_by_triple_and_nix_system() {
        assert_eq!(names(table().by_triple("x86_64-unknown-linux-gnu")), ["x86_64-linux"]);
        assert_eq!(names(table().by_triple("aarch64-none-linux-gnu")), ["sbsa-linux", "aarch64-linux"]);
        assert_eq!(names(table().by_triple("powerpc64le-linux-gnu")), ["ppc64le-linux"]);
        assert!(names(table().by_triple("aarch64-apple-darwin")).is_empty());
        assert_eq!(names(table().by_nix_system("powerpc64le-linux")), ["ppc64le-linux"]);
        assert_eq!(names(table().by_nix_system("aarch64-linux")), ["sbsa-linux", "aarch64-linux"]);
        assert!(names(table().by_nix_system("aarch64-darwin")).is_empty());
    }

    #[test]
    fn jetson_capabilities_follow_the_platform_rule() {
        let caps = CapabilityTable::built_in();
        let allows = |platform_name: &str, cap: &str, cuda: &str| {
            table().allows(platform(platform_name), caps.get(cap.parse().unwrap()).unwrap(), v(cuda))
        };
        assert!(allows("aarch64-linux", "8.7", "12.4") && !allows("aarch64-linux", "8.6", "12.4"));
        assert!(!allows("x86_64-linux", "8.7", "12.4") && allows("x86_64-linux", "8.6", "12.4"));
        assert!(!allows("sbsa-linux", "8.7", "13.1") && allows("sbsa-linux", "8.7", "13.2"));
        assert!(!allows("sbsa-linux", "10.1", "12.9") && allows("sbsa-linux", "11.0a", "13.0"));
        assert!(!allows("x86_64-linux", "11.0", "13.0"), "Thor via sbsa only, not x86_64");
        assert!(!allows("sbsa-linux", "7.2", "12.9"));
    }

    #[test]
    fn jetson_served_by_names_real_parts() {
        let parts: Vec<&str> =
            CapabilityTable::built_in().all().iter().filter_map(|c| c.jetson_part.as_deref()).collect();
        for served in table().jetson_served_by().iter() {
            assert!(parts.contains(&&*served.part), "unknown Jetson part {}", served.part);
            assert!(served.source.starts_with("measured: ") || served.source.starts_with("reported: "));
        }
    }

    #[test]
    fn rejects_broken_tables() {
        let platform = |name: &str, shipped: &str| {
            format!("[[platform]]\nname = \"{name}\"\nnvidia-redist = \"r\"\ngnu-triples = [\"x-linux-gnu\"]\nnix-system = \"x-linux\"\njetson = false\nshipped = {shipped}\nsource = \"x\"\n")
        };
        let ok = platform("a", "[{ first-cuda = \"11.0\" }]");
        let cases = [
            ok.clone() + &ok,
            platform("a", "[]"),
            platform("a", "[{ first-cuda = \"12.0\", last-cuda = \"11.0\" }]"),
            platform("a", "[{ first-cuda = \"12.0\" }, { first-cuda = \"12.4\" }]"),
            ok.clone()
                + "[[jetson-served-by]]\nplatform = \"b\"\npart = \"Thor\"\nfirst-cuda = \"13.0\"\nsource = \"x\"\n",
        ];
        for text in cases {
            let text =
                if text.contains("jetson-served-by") { text } else { "jetson-served-by = []\n".to_string() + &text };
            let err = PlatformTable::parse(&text, "t.toml").unwrap_err();
            assert!(matches!(err, CompatError::Invalid { .. }), "{err}\n{text}");
        }
    }
}
