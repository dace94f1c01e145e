//! The host-compiler families nvcc drives, each defined once: how the config, the tables and the probe cache spell
//! it, its proper name, the C++ driver looked for on PATH, the macro of its major version that `host_config.h`
//! compares, how one of it reaches the stdenv compiler's libstdc++, and its column in host-compilers.toml's `accepts`.
//! A new family is a variant of `CompilerFamily` (schema.rs: the tables and the config read it), its `Family` here,
//! its key in `Accepts` and the table's rows; CONTRIBUTING.md, "Where a change goes", lists the rest.

use std::fmt;

pub use super::schema::{Accepts, CompilerFamily};
use super::Version;

/// One family's facts.
#[derive(Debug)]
pub struct Family {
    pub id: CompilerFamily,
    /// How the config (`prefer = "clang"`, a compiler's `family`), the tables and the probe cache spell it.
    pub spelling: &'static str,
    /// Its proper name, for prose (`GCC up to 11`).
    pub name: &'static str,
    /// Its C++ driver (`g++`), found on PATH also as `DRIVER-N` and `TRIPLE-DRIVER[-N]`.
    pub driver: &'static str,
    /// Whether a `--version` output is this family's banner, with the release when it states a plain `x.y.z` one.
    /// The families' banners are told apart by what each alone prints (a test holds every captured one to one family).
    pub banner: fn(&str) -> Option<Option<Version>>,
    /// The flag that prints the release where the banner hides it (GCC's `-dumpfullversion`; Clang has none).
    pub version_query: Option<&'static str>,
    /// The macro of its major version that nvcc's `host_config.h` compares (`compat::host_config` reads it there).
    pub version_macro: &'static str,
    /// How one of it reaches the stdenv compiler's libstdc++ (`plan::host_compiler::rule`).
    pub libstdcxx: Libstdcxx,
}

/// How a compiler reaches the stdenv compiler's libstdc++ (a GCC's, in every Nixpkgs stdenv and Debian).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Libstdcxx {
    /// Its own driver finds its own; where it links, `-L` names the stdenv compiler's first.
    LibraryDir,
    /// It is told the GCC installation: `--gcc-install-dir` from Clang 16 on, `--gcc-toolchain` (its prefix) before.
    GccInstallation,
}

/// Every family, in the order nvcc's own checks and the wrapper's messages name them.
pub const FAMILIES: [Family; 2] = [
    Family {
        id: CompilerFamily::Gcc,
        spelling: "gcc",
        name: "GCC",
        driver: "g++",
        banner: gcc_banner,
        version_query: Some("-dumpfullversion"),
        version_macro: "__GNUC__",
        libstdcxx: Libstdcxx::LibraryDir,
    },
    Family {
        id: CompilerFamily::Clang,
        spelling: "clang",
        name: "Clang",
        driver: "clang++",
        banner: clang_banner,
        version_query: None,
        version_macro: "__clang_major__",
        libstdcxx: Libstdcxx::GccInstallation,
    },
];

/// Clang's banner: `clang version 17.0.2` anywhere in a line (Android's NDK prints `Android (<build>, ...) clang
/// version 17.0.2 (...)`; Ubuntu appends its package revision, `14.0.0-1ubuntu1.1`).
fn clang_banner(out: &str) -> Option<Option<Version>> {
    let (_, rest) = out.lines().find_map(|line| line.split_once("clang version "))?;
    let number = rest.split(|c: char| !c.is_ascii_digit() && c != '.').next().unwrap_or("");
    Some(full_version(number))
}

/// GCC's banner: recognised by the FSF copyright line every GCC driver prints (not anchored on "Copyright (C)":
/// translations may spell that part differently), and no Clang banner. Its first line is `<program name> (<package
/// version>) <release>`, where the program name is whatever the driver was called as and the package version is the
/// vendor's (`(GCC)` when there is none, as on Nix). Other GNU programs print that line too, but no `x.y.z` release
/// in that place, so the probe goes on to `-dumpfullversion` with them and fails there.
fn gcc_banner(out: &str) -> Option<Option<Version>> {
    let fsf = out.lines().any(|line| line.contains("Free Software Foundation"));
    (fsf && clang_banner(out).is_none()).then(|| gcc_release(out.lines().next().unwrap_or("")))
}

/// The release in GCC's first line, `<program> (<package version>) <release>[ <more>]`. The package version may
/// hold parentheses of its own (Arm's `(Arm GNU Toolchain 12.2.Rel1 (Build arm-12.24))`) and the release may be
/// followed by a date and more (Red Hat's `11.4.1 20230605 (Red Hat 11.4.1-2)`).
fn gcc_release(first_line: &str) -> Option<Version> {
    let open = first_line.find('(')?;
    let mut depth = 0;
    for (i, c) in first_line[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' if depth == 1 => {
                let after = &first_line[open + i + 1..];
                return full_version(after.split_whitespace().next()?);
            }
            ')' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// `text` as a version only if it is a complete `x.y.z`: a vendor string such as MinGW's `10-win32` must not pass
/// for release 10.
fn full_version(text: &str) -> Option<Version> {
    (text.split('.').count() == 3).then(|| text.parse().ok()).flatten()
}

/// The family whose banner `out` is, and the release when the banner states it.
pub fn read_banner(out: &str) -> Option<(CompilerFamily, Option<Version>)> {
    FAMILIES.iter().find_map(|f| (f.banner)(out).map(|release| (f.id, release)))
}

impl CompilerFamily {
    /// Its facts.
    pub fn def(self) -> &'static Family {
        FAMILIES.iter().find(|f| f.id == self).expect("every family has its Family")
    }

    /// The family spelled `text` (`gcc`), as the config and the probe cache write it.
    pub fn from_spelling(text: &str) -> Option<CompilerFamily> {
        FAMILIES.iter().find(|f| f.spelling == text).map(|f| f.id)
    }

    /// The family's proper name, for prose (`GCC up to 11`); `Display` gives the config's spelling (`gcc`).
    pub fn name(self) -> &'static str {
        self.def().name
    }
}

impl fmt::Display for CompilerFamily {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.def().spelling)
    }
}

impl Accepts {
    /// No family accepted: what a new family's column is where a row does not name it, and the start of every value
    /// built here by hand (the one literal of every field).
    pub const NONE: Accepts = Accepts { gcc: 0, clang: 0 };

    /// GCC up to `gcc` and Clang up to `clang`, nothing else: the tests' shorthand.
    #[cfg(test)]
    pub const fn of(gcc: u32, clang: u32) -> Accepts {
        let mut accepts = Accepts::NONE;
        accepts.gcc = gcc;
        accepts.clang = clang;
        accepts
    }

    /// Say that `family` is accepted up to `newest`.
    pub fn set(&mut self, family: CompilerFamily, newest: u32) {
        *match family {
            CompilerFamily::Gcc => &mut self.gcc,
            CompilerFamily::Clang => &mut self.clang,
        } = newest;
    }

    /// The newest major of `family` accepted.
    pub fn newest(&self, family: CompilerFamily) -> u32 {
        match family {
            CompilerFamily::Gcc => self.gcc,
            CompilerFamily::Clang => self.clang,
        }
    }

    pub fn accepts(&self, family: CompilerFamily, version: Version) -> bool {
        version.major <= self.newest(family)
    }

    /// `GCC up to 11 and Clang up to 14`.
    pub fn describe(&self) -> String {
        // A family the release accepts in no version (a new family, before the rows that name it) goes unsaid.
        let each: Vec<String> = FAMILIES
            .iter()
            .filter(|f| self.newest(f.id) > 0)
            .map(|f| format!("{} up to {}", f.name, self.newest(f.id)))
            .collect();
        match each.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
            None => String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_family_is_defined_once_and_spelled_as_serde_reads_it() {
        for (i, f) in FAMILIES.iter().enumerate() {
            assert_eq!(f.id.def().spelling, f.spelling);
            assert!(FAMILIES[..i].iter().all(|g| g.id != f.id && g.spelling != f.spelling && g.driver != f.driver));
            let read: CompilerFamily = toml::from_str::<toml::Table>(&format!("f = \"{}\"", f.spelling)).unwrap()["f"]
                .clone()
                .try_into()
                .unwrap();
            assert_eq!(read, f.id);
            assert_eq!(CompilerFamily::from_spelling(f.spelling), Some(f.id));
            assert_eq!(f.id.to_string(), f.spelling);
        }
        assert_eq!(CompilerFamily::from_spelling("icc"), None);
    }

    #[test]
    fn every_captured_banner_is_one_familys() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/probe");
        let mut read = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap().to_string();
            let Some(stem) = name.strip_suffix("-version.txt") else { continue };
            let out = std::fs::read_to_string(&path).unwrap();
            let claimed: Vec<&str> =
                FAMILIES.iter().filter(|f| (f.banner)(&out).is_some()).map(|f| f.spelling).collect();
            // nvcc's own banner (`nvcc-*`) is no host compiler's.
            let expected: &[&str] = match stem.split('-').next() {
                Some("clang") => &["clang"],
                Some("gxx") => &["gcc"],
                _ => &[],
            };
            assert_eq!(claimed, expected, "{name}");
            read += 1;
        }
        assert!(read >= 6, "only {read} banners in {}", dir.display());
    }

    #[test]
    fn what_a_release_accepts_is_said_as_before() {
        let accepts = Accepts::of(11, 14);
        assert_eq!(accepts.describe(), "GCC up to 11 and Clang up to 14");
        assert!(accepts.accepts(CompilerFamily::Clang, Version::new(14, 0, 6)));
        assert!(!accepts.accepts(CompilerFamily::Gcc, Version::new(12, 1, 0)));
    }
}
