//! Dotted release numbers (`12.4`, `11.8.89`, `12.2.0`) shared by the NVCC release, compiler versions and the
//! compatibility tables. Owns parsing and ordering only; it knows nothing about where a version came from.

use std::fmt;
use std::str::FromStr;

/// A release number of up to three parts. Missing parts compare as zero for ordering, but are remembered so that
/// `12.4` prints as `12.4` and not `12.4.0`.
#[derive(Debug, Clone, Copy, Eq)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
    /// How many parts were written (1 to 3).
    parts: u8,
}

impl Version {
    pub const fn new(major: u32, minor: u32, patch: u32) -> Self {
        Version { major, minor, patch, parts: 3 }
    }

    pub const fn major_minor(major: u32, minor: u32) -> Self {
        Version { major, minor, patch: 0, parts: 2 }
    }

    /// Whether a minor part was written (`12.4`, not `12`).
    pub fn has_minor(self) -> bool {
        self.parts >= 2
    }

    /// The `major.minor` release this version belongs to (`11.8.89` -> `11.8`).
    pub fn release(self) -> Self {
        Version::major_minor(self.major, self.minor)
    }

    fn key(self) -> (u32, u32, u32) {
        (self.major, self.minor, self.patch)
    }
}

impl PartialEq for Version {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl std::hash::Hash for Version {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.key().hash(state)
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.parts {
            1 => write!(f, "{}", self.major),
            2 => write!(f, "{}.{}", self.major, self.minor),
            _ => write!(f, "{}.{}.{}", self.major, self.minor, self.patch),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseVersionError(pub String);

impl fmt::Display for ParseVersionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` is not a version like 12.4 or 11.8.89", self.0)
    }
}

impl std::error::Error for ParseVersionError {}

impl FromStr for Version {
    type Err = ParseVersionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ParseVersionError(s.to_string());
        let mut nums = [0u32; 3];
        let mut parts = 0u8;
        for piece in s.trim().split('.') {
            if parts == 3 || piece.is_empty() || !piece.bytes().all(|b| b.is_ascii_digit()) {
                return Err(err());
            }
            nums[parts as usize] = piece.parse().map_err(|_| err())?;
            parts += 1;
        }
        Ok(Version { major: nums[0], minor: nums[1], patch: nums[2], parts })
    }
}

impl Version {
    /// A compiler's version as its package names it (`13.2.0`, a GCC snapshot's `14.2.1.20250322`, `20.1.0-rc2`):
    /// its first numbers, up to three, and nothing after the first part that is not a number, which compilers'
    /// `__GNUC__`-style macros never report.
    pub fn of_compiler_package(s: &str) -> Result<Version, ParseVersionError> {
        let mut nums = [0u32; 3];
        let mut parts = 0u8;
        for piece in s.trim().split('.').take(3) {
            let digits: &str = &piece[..piece.bytes().take_while(u8::is_ascii_digit).count()];
            let Ok(n) = digits.parse() else { break };
            nums[parts as usize] = n;
            parts += 1;
            if digits.len() < piece.len() {
                break;
            }
        }
        if parts == 0 {
            return Err(ParseVersionError(s.to_string()));
        }
        Ok(Version { major: nums[0], minor: nums[1], patch: nums[2], parts })
    }
}

impl serde::Serialize for Version {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Version {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_compiler_packages_version_counts_its_first_numbers() {
        for (text, shown) in [
            ("13.2.0", "13.2.0"),
            ("14.2.1.20250322", "14.2.1"),
            ("20.1.0-rc2", "20.1.0"),
            ("14-20240121", "14"),
            ("12", "12"),
        ] {
            assert_eq!(Version::of_compiler_package(text).unwrap().to_string(), shown, "{text}");
        }
        for bad in ["", "gcc", ".1"] {
            assert!(Version::of_compiler_package(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn parses_and_prints_what_was_written() {
        for (text, shown) in [("12", "12"), ("12.4", "12.4"), ("11.8.89", "11.8.89"), (" 13.0 ", "13.0")] {
            assert_eq!(text.parse::<Version>().unwrap().to_string(), shown);
        }
    }

    #[test]
    fn rejects_non_versions() {
        for bad in ["", "12.", ".4", "12.x", "1.2.3.4", "v12", "-1"] {
            assert!(bad.parse::<Version>().is_err(), "{bad:?} should not parse");
        }
    }

    #[test]
    fn orders_numerically_with_missing_parts_as_zero() {
        let v = |s: &str| s.parse::<Version>().unwrap();
        assert!(v("12.10") > v("12.9"));
        assert!(v("11.8.89") > v("11.8"));
        assert_eq!(v("12.4"), v("12.4.0"));
        assert_eq!(v("11.8.89").release().to_string(), "11.8");
    }
}
