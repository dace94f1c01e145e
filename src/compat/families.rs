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
        version_macro: "__GNUC__",
        libstdcxx: Libstdcxx::LibraryDir,
    },
    Family {
        id: CompilerFamily::Clang,
        spelling: "clang",
        name: "Clang",
        driver: "clang++",
        version_macro: "__clang_major__",
        libstdcxx: Libstdcxx::GccInstallation,
    },
];

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
        let each: Vec<String> = FAMILIES.iter().map(|f| format!("{} up to {}", f.name, self.newest(f.id))).collect();
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
    fn what_a_release_accepts_is_said_as_before() {
        let accepts = Accepts { gcc: 11, clang: 14 };
        assert_eq!(accepts.describe(), "GCC up to 11 and Clang up to 14");
        assert!(accepts.accepts(CompilerFamily::Clang, Version::new(14, 0, 6)));
        assert!(!accepts.accepts(CompilerFamily::Gcc, Version::new(12, 1, 0)));
    }
}
