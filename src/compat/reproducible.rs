//! `compat-data/reproducible.toml`: what makes two builds of the same sources through nvcc give different bytes,
//! release by release, and the flags that remove each cause (`[[fix]]`), or the condition under which the outputs
//! are the same all the same (`[[limit]]`). Owns the row types, the lookups by release and the structural checks;
//! which rows a call gets, and how the placeholders are filled, is the planner's (`plan::reproducible`).

use super::schema::{Call, Cause, CompilerFamily, Fix, Limit, Output, ReproducibleFile};
use super::Version;
use super::{invalid, within, CompatError, Table};
use std::borrow::Cow;

// `BUILT_IN`: compat-data/reproducible.toml, compiled in by build.rs.
include!(concat!(env!("OUT_DIR"), "/reproducible.rs"));

#[derive(Debug, Clone)]
pub struct ReproducibleTable {
    file: Cow<'static, ReproducibleFile>,
}

/// The placeholders a fix's flags may name (compat-data/README.md, "reproducible.toml").
pub const PLACEHOLDERS: [&str; 4] = ["output", "input", "tmpdir", "pid"];

impl Table for ReproducibleTable {
    type File = ReproducibleFile;

    fn check(file: ReproducibleFile, origin: &str) -> Result<Self, CompatError> {
        for (i, row) in file.fix.iter().enumerate() {
            let fail = |what: String| Err(invalid(origin, format!("[[fix]] {}: {what}", i + 1)));
            if row.last_cuda.is_some_and(|last| last.release() < row.first_cuda.release()) {
                return fail("last-cuda is before first-cuda".into());
            }
            if row.last_cuda.unwrap_or(row.first_cuda).release() > file.measured_through.release() {
                return fail(
                    "it reaches past measured-through: measure the release, then move measured-through".into(),
                );
            }
            if row.flags.is_empty() || row.calls.is_empty() || row.host_compilers.is_empty() {
                return fail("`flags`, `calls` and `host-compilers` must each name at least one".into());
            }
            for flag in row.flags.iter() {
                if !flag.starts_with('-') || flag.contains(char::is_whitespace) {
                    return fail(format!("`{flag}` is not one option token starting with `-`"));
                }
                if let Some(name) = placeholders(flag).find(|name| !PLACEHOLDERS.contains(name)) {
                    return fail(format!(
                        "`{flag}` names {{{name}}}, which is not one of {{output}}, {{input}}, {{tmpdir}}, {{pid}}"
                    ));
                }
                // nvcc's pid is the wrapper's only when the wrapper execs nvcc itself.
                if row.behind_launcher && placeholders(flag).any(|name| name == "pid") {
                    return fail(format!("`{flag}` names {{pid}}, so `behind-launcher` must be false"));
                }
            }
        }
        for (i, row) in file.limit.iter().enumerate() {
            if row.last_cuda.is_some_and(|last| last.release() < row.first_cuda.release()) {
                return Err(invalid(origin, format!("[[limit]] {}: last-cuda is before first-cuda", i + 1)));
            }
            if row.last_cuda.unwrap_or(row.first_cuda).release() > file.measured_through.release() {
                return Err(invalid(origin, format!("[[limit]] {}: it reaches past measured-through", i + 1)));
            }
        }
        Ok(ReproducibleTable { file: Cow::Owned(file) })
    }

    fn built_in() -> &'static Self {
        static TABLE: ReproducibleTable = ReproducibleTable { file: Cow::Borrowed(&BUILT_IN) };
        &TABLE
    }
}

/// The names between braces in a flag.
pub fn placeholders(flag: &str) -> impl Iterator<Item = &str> {
    flag.split('{').skip(1).filter_map(|rest| rest.split_once('}').map(|(name, _)| name))
}

impl ReproducibleTable {
    #[cfg(test)]
    pub fn all(&self) -> (&[Fix], &[Limit]) {
        (&self.file.fix, &self.file.limit)
    }

    /// The fixes measured for NVCC release `cuda`, in the file's order.
    pub fn fixes(&self, cuda: Version) -> impl Iterator<Item = &Fix> {
        self.file.fix.iter().filter(move |row| self.covers(cuda, row.first_cuda, row.last_cuda))
    }

    /// The limits that hold for NVCC release `cuda`.
    pub fn limits(&self, cuda: Version) -> impl Iterator<Item = &Limit> {
        self.file.limit.iter().filter(move |row| self.covers(cuda, row.first_cuda, row.last_cuda))
    }

    /// Whether a row's releases hold `cuda`: no `last-cuda` is through `measured-through`, never beyond it.
    fn covers(&self, cuda: Version, first: Version, last: Option<Version>) -> bool {
        within(cuda, first, Some(last.unwrap_or(self.file.measured_through)))
    }

    /// Whether any fix was measured for `cuda`: a release outside every row gets nothing.
    pub fn measured(&self, cuda: Version) -> bool {
        self.fixes(cuda).next().is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    fn table() -> &'static ReproducibleTable {
        ReproducibleTable::built_in()
    }

    fn flags(cuda: &str, cause: Cause) -> Vec<String> {
        table()
            .fixes(v(cuda))
            .filter(|f| f.cause == cause)
            .flat_map(|f| f.flags.iter().map(|x| x.to_string()))
            .collect()
    }

    #[test]
    fn every_measured_release_has_each_fix_and_no_other_release_has_any() {
        for cuda in ["11.8.89", "12.4.131", "13.0", "13.3", "13.5.37"] {
            assert!(table().measured(v(cuda)), "{cuda}");
            assert_eq!(
                flags(cuda, Cause::TemporaryNames),
                ["-objtemp", "-Xcompiler=-ffile-prefix-map={tmpdir}/tmpxft_{pid}_=tmpxft_"],
                "{cuda}"
            );
            assert_eq!(flags(cuda, Cause::ModuleId), ["-Xcudafe=--orig_src_path_name={input}"], "{cuda}");
            assert_eq!(flags(cuda, Cause::ArchiveHeader), ["-Xarchive=-D"], "{cuda}");
        }
        // Not measured: nothing, whatever a neighbour does.
        let newest = crate::compat::Compat::built_in().newest_release();
        let next = Version::new(newest.major, newest.minor + 1, 0).to_string();
        for cuda in ["11.7", "12.0", "12.5", "12.9", next.as_str(), "99.0"] {
            assert!(!table().measured(v(cuda)), "{cuda}");
            assert_eq!(table().fixes(v(cuda)).count(), 0);
        }
    }

    #[test]
    fn an_open_row_holds_through_measured_through_and_no_row_reaches_past_it() {
        let file = |through: &str, last: &str| {
            format!(
                "measured-through = \"{through}\"\nlimit = []\n[[fix]]\ncause = \"archive-header\"\nfirst-cuda = \"13.0\"\n{last}flags = [\"-Xarchive=-D\"]\ncalls = [\"lib\"]\nhost-compilers = [\"gcc\"]\nbehind-launcher = true\noutputs = [\"archive\"]\nsource = \"t\"\n"
            )
        };
        let open = ReproducibleTable::parse(&file("13.2", ""), "t.toml").unwrap();
        assert!(open.measured(v("13.2")) && !open.measured(v("13.3")), "through 13.2 and no further");
        let err = ReproducibleTable::parse(&file("13.2", "last-cuda = \"13.4\"\n"), "t.toml").unwrap_err();
        assert!(err.to_string().contains("measured-through"), "{err}");
        // The built-in file measured no release the tables do not know.
        assert!(table().file.measured_through <= crate::compat::Compat::built_in().newest_release());
    }

    #[test]
    fn the_seed_is_nvccs_own_option_only_where_nvcc_has_it() {
        assert_eq!(flags("12.4", Cause::HostRandomSeed), ["-Xcompiler=-frandom-seed={output}"]);
        assert_eq!(flags("11.8", Cause::HostRandomSeed), ["-Xcompiler=-frandom-seed={output}"]);
        assert_eq!(flags("13.0", Cause::HostRandomSeed), ["--frandom-seed={output}"]);
    }

    #[test]
    fn the_pid_map_is_for_gcc_programs_linked_in_one_call_never_behind_a_launcher() {
        for fix in table().fixes(v("13.5")).filter(|f| f.flags.iter().any(|x| x.contains("{pid}"))) {
            assert_eq!(*fix.calls, [Call::CompileAndLink]);
            assert_eq!(*fix.host_compilers, [CompilerFamily::Gcc]);
            assert!(!fix.behind_launcher);
        }
        let limits: Vec<Cause> = table().limits(v("13.5")).map(|l| l.cause).collect();
        assert!(limits.contains(&Cause::DeviceWorkingDirectory) && !limits.contains(&Cause::SourceMtime));
        assert!(table().limits(v("13.3")).any(|l| l.cause == Cause::SourceMtime));
    }

    #[test]
    fn rows_that_break_the_rules_are_refused_with_their_number() {
        let text =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/compat-data/reproducible.toml")).unwrap();
        let broken = [
            ("flags = [\"-objtemp\"]", "flags = [\"objtemp\"]", "[[fix]] 1: `objtemp` is not one option token"),
            ("flags = [\"-objtemp\"]", "flags = [\"-objtemp={where}\"]", "names {where}, which is not one of"),
            ("flags = [\"-objtemp\"]", "flags = [\"-objtemp={pid}\"]", "so `behind-launcher` must be false"),
            ("flags = [\"-objtemp\"]", "flags = []", "must each name at least one"),
            ("last-cuda = \"11.8\"", "last-cuda = \"11.7\"", "[[fix]] 1: last-cuda is before first-cuda"),
        ];
        for (from, to, want) in broken {
            assert!(text.contains(from), "{from}");
            let err = ReproducibleTable::parse(&text.replacen(from, to, 1), "r.toml").unwrap_err().to_string();
            assert!(err.starts_with("r.toml: ") && err.contains(want), "{err}");
        }
        let unknown = text.replacen("calls = [\"compile\"]", "calls = [\"assemble\"]", 1);
        assert!(ReproducibleTable::parse(&unknown, "r.toml").is_err());
    }
}
