//! A GPU compute capability as users, Nixpkgs, CMake and nvcc spell it: `8.6`, `86`, `sm_86`, `compute_86`,
//! `9.0a`, `90a`, `sm_100f`. Owns parsing and the canonical spellings; whether a release accepts one is the
//! capability table's business.

use std::fmt;
use std::str::FromStr;

/// A capability `major.minor` with an optional variant suffix. Ordered by number, then baseline < `a` < `f`, which
/// is the order of the rows in `capabilities.toml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Capability {
    pub major: u32,
    pub minor: u32,
    pub suffix: Option<Suffix>,
}

/// The variant letters NVIDIA added after the number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Suffix {
    /// `a` (12.0+): architecture-specific; the code runs only on exactly this architecture.
    A,
    /// `f` (12.9+): family-specific; the code runs on this architecture's family (same major).
    F,
}

impl Capability {
    pub const fn new(major: u32, minor: u32, suffix: Option<Suffix>) -> Self {
        Capability { major, minor, suffix }
    }

    /// The same capability without its variant (`9.0a` -> `9.0`): the one whose PTX is forward compatible.
    pub fn baseline(self) -> Self {
        Capability { suffix: None, ..self }
    }

    /// A list of capabilities, each read as one capability whatever its dialect (`86` is 8.6), separated by `;`, `,`
    /// or blanks: for tests. Lists users write are `TargetList`s, whose words keep their dialect's meaning.
    #[cfg(test)]
    pub fn parse_list(text: &str) -> Result<Vec<Capability>, ParseCapabilityError> {
        text.split(|c: char| c == ';' || c == ',' || c.is_whitespace())
            .filter(|s| !s.is_empty())
            .map(str::parse)
            .collect()
    }

    /// Real-architecture name for `code=`: `sm_90a`.
    pub fn sm_name(self) -> String {
        format!("sm_{}", self.compact())
    }

    /// Device link-time-optimisation intermediate for `code=`: `lto_90a`.
    pub fn lto_name(self) -> String {
        format!("lto_{}", self.compact())
    }

    /// Virtual-architecture name for `arch=` and PTX: `compute_90a`.
    pub fn compute_name(self) -> String {
        format!("compute_{}", self.compact())
    }

    fn compact(self) -> String {
        format!("{}{}{}", self.major, self.minor, suffix_str(self.suffix))
    }
}

fn suffix_str(suffix: Option<Suffix>) -> &'static str {
    match suffix {
        None => "",
        Some(Suffix::A) => "a",
        Some(Suffix::F) => "f",
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}{}", self.major, self.minor, suffix_str(self.suffix))
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseCapabilityError(pub String);

impl fmt::Display for ParseCapabilityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` is not a GPU capability like 8.6, 86, sm_86, compute_90a or 10.0f", self.0)
    }
}

impl std::error::Error for ParseCapabilityError {}

impl FromStr for Capability {
    type Err = ParseCapabilityError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ParseCapabilityError(s.to_string());
        let text = s.trim();
        // Cut by bytes below: a capability is ASCII, and a word that is not would be cut inside a character.
        if !text.is_ascii() {
            return Err(err());
        }
        // `sm_`/`compute_` names never carry a dot; bare capabilities may be either `8.6` or `86`.
        let (body, prefixed) = match text.strip_prefix("sm_").or_else(|| text.strip_prefix("compute_")) {
            Some(body) => (body, true),
            None => (text, false),
        };
        let (number, suffix) = match body.as_bytes().last() {
            Some(b'a') => (&body[..body.len() - 1], Some(Suffix::A)),
            Some(b'f') => (&body[..body.len() - 1], Some(Suffix::F)),
            _ => (body, None),
        };
        // The minor is always one digit: that is what lets `100` mean 10.0 and `121` mean 12.1.
        let (major, minor) = match number.split_once('.') {
            Some(_) if prefixed => return Err(err()),
            Some(pair) => pair,
            None if number.len() >= 2 => number.split_at(number.len() - 1),
            None => return Err(err()),
        };
        let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
        if !digits(major) || !digits(minor) || minor.len() != 1 || major.starts_with('0') {
            return Err(err());
        }
        Ok(Capability { major: major.parse().map_err(|_| err())?, minor: minor.parse().map_err(|_| err())?, suffix })
    }
}

impl<'de> serde::Deserialize<'de> for Capability {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

impl serde::Serialize for Capability {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cap(s: &str) -> Capability {
        s.parse().unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn parses_every_spelling() {
        let cases = [
            ("8.6", "8.6"),
            ("86", "8.6"),
            ("sm_86", "8.6"),
            ("compute_86", "8.6"),
            ("9.0a", "9.0a"),
            ("90a", "9.0a"),
            ("sm_90a", "9.0a"),
            ("compute_90a", "9.0a"),
            ("sm_100f", "10.0f"),
            ("10.0f", "10.0f"),
            ("100", "10.0"),
            ("121", "12.1"),
            (" 11.0 ", "11.0"),
        ];
        for (text, shown) in cases {
            assert_eq!(cap(text).to_string(), shown, "{text:?}");
        }
    }

    #[test]
    fn rejects_non_capabilities() {
        for bad in [
            "",
            "8",
            "sm_",
            "sm_8.6",
            "compute_9.0a",
            "8.10",
            "8.",
            ".6",
            "x86",
            "8.6b",
            "sm_86aa",
            "086",
            "a",
            "8é",
            "90aé",
            "sm_9é",
            "é",
        ] {
            assert!(bad.parse::<Capability>().is_err(), "{bad:?} should not parse");
        }
    }

    #[test]
    fn parses_lists_with_any_separator() {
        let shown =
            |text: &str| Capability::parse_list(text).unwrap().iter().map(|c| c.to_string()).collect::<Vec<_>>();
        assert_eq!(shown("8.6;9.0a"), ["8.6", "9.0a"]);
        assert_eq!(shown("86,90a sm_100f\t8.7 ; ,"), ["8.6", "9.0a", "10.0f", "8.7"]);
        assert!(shown("  ").is_empty());
        assert_eq!(Capability::parse_list("8.6;9.x").unwrap_err(), ParseCapabilityError("9.x".into()));
    }

    #[test]
    fn names_and_baseline() {
        let c = cap("9.0a");
        assert_eq!(c.sm_name(), "sm_90a");
        assert_eq!(c.compute_name(), "compute_90a");
        assert_eq!(c.baseline(), cap("9.0"));
        assert_eq!(cap("10.3f").baseline().sm_name(), "sm_103");
    }

    #[test]
    fn orders_by_number_then_variant() {
        let mut caps: Vec<Capability> = ["10.0f", "9.0", "10.0", "9.0a", "10.0a", "12.1"].map(cap).to_vec();
        caps.sort();
        let shown: Vec<String> = caps.iter().map(|c| c.to_string()).collect();
        assert_eq!(shown, ["9.0", "9.0a", "10.0", "10.0a", "10.0f", "12.1"]);
    }
}
