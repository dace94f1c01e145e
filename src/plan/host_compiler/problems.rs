//! What the host compiler step refuses, as data (`Refused`): no compiler for a cross target, none at all, none the
//! release accepts, one for another machine, an LTO mismatch the config refuses. Each has a stable code (`Coded`),
//! says itself once (`Display`, `help`) and becomes an `Error` of the host compiler's kind (`Problem`).

use std::fmt::{self, Display};

use crate::compat::Version;
use crate::error::{codes, ErrorKind, Problem};

/// The step's errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// A cross build with no compiler for `platform`: none of `names` is on PATH, and the one `key` names, if any, is
    /// left out for the reason `left_out` says; `package`: Debian's that has one.
    NoCross { platform: String, names: Vec<String>, left_out: Option<String>, package: String, key: String },
    /// Nothing at all to choose from (`target`: ` for PLATFORM` in a cross build): nothing on PATH, and what the
    /// config names (`named`, in `section`) left out; `candidates`: whether the config's candidates replace PATH's.
    /// `install`: compilers the release accepts, `stdenv`: the setting that would name one.
    NoneAtAll {
        target: String,
        release: Version,
        accepts: String,
        section: &'static str,
        named: Vec<String>,
        candidates: bool,
        install: String,
        stdenv: String,
    },
    /// None of `listed` is accepted by the release (`platform`: the cross target's).
    NoneUsable {
        platform: Option<String>,
        release: Version,
        accepts: String,
        listed: String,
        install: String,
        section: &'static str,
    },
    /// `compiler`, given by `how`, builds for `builds_for`, not for `platform` (`triple`); `fix` says what would.
    WrongMachine { how: String, compiler: String, builds_for: String, platform: String, triple: String, fix: String },
    /// The chosen compiler's LTO does not match the stdenv compiler's, and the config refuses that.
    LtoMismatch { problem: String, help: String },
}

codes!(Refused {
    NoCross => "no-cross",
    NoneAtAll => "none-at-all",
    NoneUsable => "none-usable",
    WrongMachine => "wrong-machine",
    LtoMismatch => "lto-mismatch",
});

impl Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::NoCross { platform, names, left_out, .. } => {
                write!(f, "no host compiler for the target {platform}: ")?;
                match left_out {
                    Some(why) => write!(f, "{why}, and none of {} is on PATH", names.join(", ")),
                    None => write!(f, "`[target.host-compiler]` names none and none of {} is on PATH", names.join(", ")),
                }
            }
            Refused::NoneAtAll { target, release, accepts, section, named, candidates, .. } => {
                write!(f, "no host compiler{target}: nvcc {release} accepts {accepts}, and ")?;
                match (named.is_empty(), candidates) {
                    (true, _) => write!(f, "there is no g++ or clang++ on PATH and none in `{section}`"),
                    (false, true) => write!(f, "what the config names was left out ({})", named.join(", ")),
                    (false, false) => write!(
                        f,
                        "there is no g++ or clang++ on PATH, and what the config names was left out ({})",
                        named.join(", ")
                    ),
                }
            }
            Refused::NoneUsable { platform, release, accepts, listed, .. } => {
                f.write_str(&none_usable(platform.as_ref().map(|p| p as &dyn Display), release, accepts, listed))
            }
            Refused::WrongMachine { how, compiler, builds_for, platform, triple, .. } => write!(
                f,
                "the host compiler given by {how}, {compiler}, builds for {builds_for}, not for the target {platform} ({triple})"
            ),
            Refused::LtoMismatch { problem, .. } => f.write_str(problem),
        }
    }
}

impl Problem for Refused {
    fn kind(&self) -> ErrorKind {
        ErrorKind::HostCompiler
    }

    /// What to do about it.
    fn help(&self) -> Option<String> {
        Some(match self {
            Refused::NoCross { package, key, left_out: None, .. } => {
                format!("install one ({package}, or a Nix cross stdenv's compiler) or name it in `{key}`")
            }
            Refused::NoCross { package, key, left_out: Some(_), .. } => {
                format!("name a compiler for the target that is there in `{key}`, or install one ({package})")
            }
            Refused::NoneAtAll { install, stdenv, named, .. } => format!(
                "install one (e.g. {install}), or name it in `{stdenv}` or with `-ccbin`{}",
                if named.is_empty() { "" } else { "; `nvcc-wrapper explain` says why each was left out" }
            ),
            Refused::NoneUsable { install, section, .. } => format!(
                "install one (e.g. {install}) and list it in `{section} candidates`, pass `-ccbin`, or set `allow-unsupported = true` to try the stdenv compiler anyway"
            ),
            Refused::WrongMachine { fix, .. } => fix.clone(),
            Refused::LtoMismatch { help, .. } => help.clone(),
        })
    }
}

/// `no usable host compiler[ for PLATFORM]: nvcc RELEASE accepts ACCEPTS, and none of these is: LISTED`, a function
/// over what it names so that the Nix answers render it over their placeholders.
pub fn none_usable(
    platform: Option<&dyn Display>,
    release: &dyn Display,
    accepts: &dyn Display,
    listed: &dyn Display,
) -> String {
    let target = platform.map(|p| format!(" for {p}")).unwrap_or_default();
    format!("no usable host compiler{target}: nvcc {release} accepts {accepts}, and none of these is: {listed}")
}
