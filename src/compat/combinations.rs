//! `compat-data/combinations.toml`: the pairs of capabilities that a range of NVCC releases refuses together, in
//! some of the forms the wrapper writes, though it accepts each alone. Owns the row type, the rule that matches a
//! pair against the rows (compat-data/README.md, "combinations.toml") and the structural checks. What a refusal
//! means for a call is the planner's (`plan::gpu`).

use super::schema::{CombinationsFile, Form, Kind, RefusedPair, Same};
use super::Version;
use super::{invalid, within, Capability, CompatError, Table};
use std::borrow::Cow;

// `BUILT_IN`: compat-data/combinations.toml, compiled in by build.rs.
include!(concat!(env!("OUT_DIR"), "/combinations.rs"));

#[derive(Debug, Clone)]
pub struct CombinationTable {
    file: Cow<'static, CombinationsFile>,
}

/// The placeholders each template may name.
const MESSAGE_KEYS: &[&str] = &["later"];
const HELP_KEYS: &[&str] = &["a", "b", "release"];

impl Table for CombinationTable {
    type File = CombinationsFile;

    fn check(file: CombinationsFile, origin: &str) -> Result<Self, CompatError> {
        for (i, row) in file.refused_pair.iter().enumerate() {
            let fail = |what: &str| Err(invalid(origin, format!("[[refused-pair]] {}: {what}", i + 1)));
            if row.kinds.len() != 2 {
                return fail("`kinds` must name two kinds");
            }
            if row.forms.is_empty() {
                return fail("`forms` must name at least one form");
            }
            if row.last_cuda.is_some_and(|last| last.release() < row.first_cuda.release()) {
                return fail("last-cuda is before first-cuda");
            }
            if let Some(key) = unknown_placeholder(&row.message, MESSAGE_KEYS) {
                return fail(&format!("`message` names {{{key}}}, which is not one of {{later}}"));
            }
            if let Some(key) = unknown_placeholder(&row.help, HELP_KEYS) {
                return fail(&format!("`help` names {{{key}}}, which is not one of {{a}}, {{b}}, {{release}}"));
            }
        }
        Ok(CombinationTable { file: Cow::Owned(file) })
    }

    fn built_in() -> &'static Self {
        static TABLE: CombinationTable = CombinationTable { file: Cow::Borrowed(&BUILT_IN) };
        &TABLE
    }
}

/// The first `{name}` in `template` that is not one of `keys`.
fn unknown_placeholder<'t>(template: &'t str, keys: &[&str]) -> Option<&'t str> {
    template
        .split('{')
        .skip(1)
        .filter_map(|rest| rest.split_once('}').map(|(name, _)| name))
        .find(|name| !keys.contains(name))
}

/// A pair that nvcc refuses in one form, with the row that says so: `a` before `b` in the wrapper's order.
#[derive(Debug, Clone, Copy)]
pub struct Refusal<'t> {
    pub a: Capability,
    pub b: Capability,
    pub form: Form,
    pub row: &'t RefusedPair,
}

impl Refusal<'_> {
    /// nvcc's own message for it, after `nvcc fatal   : `.
    pub fn nvcc_message(&self) -> String {
        let code = match self.form {
            Form::Lto | Form::LtoPtx => self.b.lto_name(),
            Form::Gencode | Form::GencodePtx | Form::LtoLink => self.b.sm_name(),
        };
        self.row.message.replace("{later}", &code)
    }

    /// The row's help line, for the release `release` names (the release's `major.minor`, or the Nix answers'
    /// `{release}`).
    pub fn help(&self, release: &dyn std::fmt::Display) -> String {
        self.row
            .help
            .replace("{a}", &self.a.to_string())
            .replace("{b}", &self.b.to_string())
            .replace("{release}", &release.to_string())
    }
}

impl CombinationTable {
    #[cfg(test)]
    pub fn all(&self) -> &[RefusedPair] {
        &self.file.refused_pair
    }

    /// Whether `release` refuses `a` and `b` together in `form`, and by which row. The order of the two does not
    /// matter; the refusal has them in the wrapper's order.
    pub fn refuses(&self, release: Version, a: Capability, b: Capability, form: Form) -> Option<Refusal<'_>> {
        let (a, b) = if a <= b { (a, b) } else { (b, a) };
        let row = self.file.refused_pair.iter().find(|row| {
            within(release, row.first_cuda, row.last_cuda)
                && row.forms.contains(&form)
                && kinds_match(&row.kinds, Kind::of(a), Kind::of(b))
                && match row.same {
                    Same::Number => a.baseline() == b.baseline(),
                }
        })?;
        Some(Refusal { a, b, form, row })
    }

    /// The first pair of `caps` (sorted, as the wrapper writes them) that `release` refuses in `form`: the pair of
    /// the lowest number, the one nvcc names.
    pub fn first_refused(&self, release: Version, caps: &[Capability], form: Form) -> Option<Refusal<'_>> {
        caps.iter()
            .enumerate()
            .flat_map(|(i, &a)| caps[i + 1..].iter().map(move |&b| (a, b)))
            .find_map(|(a, b)| self.refuses(release, a, b, form))
    }
}

/// Whether the row's two kinds are `x` and `y`, in either order.
fn kinds_match(kinds: &[Kind], x: Kind, y: Kind) -> bool {
    matches!(kinds, [k1, k2] if (*k1 == x && *k2 == y) || (*k1 == y && *k2 == x))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    fn cap(s: &str) -> Capability {
        s.parse().unwrap()
    }

    fn refused(release: &str, a: &str, b: &str, form: Form) -> bool {
        CombinationTable::built_in().refuses(v(release), cap(a), cap(b), form).is_some()
    }

    #[test]
    fn a_baseline_and_its_family_target_are_refused_from_13_0_except_in_the_lto_compile() {
        for release in ["13.0", "13.1.115", "13.5"] {
            for (a, b) in [("10.0", "10.0f"), ("12.1f", "12.1"), ("10.3", "10.3f")] {
                for form in [Form::Gencode, Form::GencodePtx, Form::LtoLink] {
                    assert!(refused(release, a, b, form), "{release} {a} {b} {form:?}");
                }
                for form in [Form::Lto, Form::LtoPtx] {
                    assert!(!refused(release, a, b, form), "{release} {a} {b} {form:?}");
                }
            }
        }
        // Measured to build: other kinds, other numbers, releases before 13.0 (12.9 is not measured).
        for (release, a, b) in [
            ("13.5", "9.0", "9.0a"),
            ("13.5", "10.0a", "10.0f"),
            ("13.5", "10.0f", "10.3f"),
            ("13.5", "10.0", "10.3f"),
            ("13.5", "8.6", "8.6"),
            ("12.9", "10.0", "10.0f"),
        ] {
            assert!(!refused(release, a, b, Form::Gencode), "{release} {a} {b}");
        }
    }

    #[test]
    fn the_refusal_speaks_as_nvcc_and_names_the_fix() {
        let table = CombinationTable::built_in();
        let caps = [cap("8.6"), cap("10.0"), cap("10.0f"), cap("12.0"), cap("12.0f")];
        let refusal = table.first_refused(v("13.5.37"), &caps, Form::Gencode).unwrap();
        assert_eq!((refusal.a, refusal.b), (cap("10.0"), cap("10.0f")));
        assert_eq!(
            refusal.nvcc_message(),
            "The same GPU code (`sm_100f`) generated for non family-specific and family-specific GPU arch"
        );
        let help = refusal.help(&v("13.5.37").release());
        assert!(help.starts_with("keep one of 10.0 and 10.0f: nvcc 13.5 "), "{help}");
        assert!(table.first_refused(v("13.5"), &[cap("8.6"), cap("10.0f")], Form::Gencode).is_none());
    }

    #[test]
    fn rows_that_break_the_rules_are_refused_with_their_number() {
        let text =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/compat-data/combinations.toml")).unwrap();
        let broken = [
            ("kinds = [\"baseline\", \"family-specific\"]", "kinds = [\"baseline\"]", "`kinds` must name two"),
            ("forms = [\"gencode\", \"gencode-ptx\", \"lto-link\"]", "forms = []", "`forms` must name at least"),
            ("first-cuda = \"13.0\"", "first-cuda = \"13.0\"\nlast-cuda = \"12.9\"", "last-cuda is before"),
            ("{later}", "{sooner}", "`message` names {sooner}"),
            ("keep one of {a}", "keep one of {c}", "`help` names {c}"),
        ];
        for (from, to, want) in broken {
            assert!(text.contains(from), "{from}");
            let err = CombinationTable::parse(&text.replacen(from, to, 1), "c.toml").unwrap_err().to_string();
            assert!(err.starts_with("c.toml: [[refused-pair]] 1: ") && err.contains(want), "{err}");
        }
        assert!(CombinationTable::parse(&text.replacen("\"lto-link\"", "\"lto-lnk\"", 1), "c.toml").is_err());
    }
}
