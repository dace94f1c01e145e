//! The NVCC release in use, as the decisions see it: known to the tables, newer than they are, or unknown and why.
//! Found once per call by `facts` and kept in the plan (`model`), which both read this file and nothing of each other.

use std::fmt;
use std::path::Path;

use crate::compat::Compat;
use crate::compat::Version;
use crate::config::{Key, Origin, Sourced};
use crate::error::{Error, ErrorKind};
use crate::probe::system::{NvccUnknown, Probes};

/// The NVCC release in use, as far as the decisions go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Release {
    /// A release the tables describe.
    Known { version: Version, from: From },
    /// Newer than the newest release the tables describe: decided as that one.
    Newer { version: Version, from: From, newest: Version },
    /// Cannot be told: nothing is decided by release.
    Unknown { why: NvccUnknown },
}

/// A release the tables do not know, named as the user gave it (`` `--cuda-version 12.7` ``, or Nix's
/// `` `cudaMajorMinorVersion` "12.7" ``): the error, of the caller's kind, with the range that would be accepted.
pub fn not_in_tables(compat: &Compat, named: &str, kind: ErrorKind) -> Error {
    let (oldest, newest) = (compat.host_compilers.releases()[0].nvcc.release(), compat.newest_release());
    Refused::NotInTables { named: named.to_string(), oldest, newest, kind }.into()
}

/// What deciding the release refuses, as data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// `named` is not a release the tables know; they hold `oldest` to `newest`. Of the kind the caller's place
    /// gives it: a usage error on the command line, a refused request from Nix.
    NotInTables { named: String, oldest: Version, newest: Version, kind: ErrorKind },
    /// The program the config names as nvcc (at `origin`) says it is another (`why`); issue 60: `nvcc =
    /// "/usr/bin/gcc"` ran gcc with nvcc's arguments, which built nothing and exited 0.
    NotNvcc { origin: Origin, why: NvccUnknown },
}

crate::error::codes!(Refused {
    NotInTables => "not-in-tables",
    NotNvcc => "not-nvcc",
});

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::NotInTables { named, .. } => write!(f, "{named} is not an NVCC release the tables know"),
            Refused::NotNvcc { origin, why } => write!(f, "`{}` ({origin}) is not nvcc: {why}", Key::Nvcc),
        }
    }
}

impl crate::error::Problem for Refused {
    fn kind(&self) -> ErrorKind {
        match self {
            Refused::NotInTables { kind, .. } => *kind,
            Refused::NotNvcc { .. } => ErrorKind::Config,
        }
    }

    /// What to do about it.
    fn help(&self) -> Option<String> {
        Some(match self {
            Refused::NotInTables { oldest, newest, .. } => {
                format!("give a release from {oldest} to {newest}, with its minor part (12.4, 13.0)")
            }
            Refused::NotNvcc { .. } => {
                "name the `bin/nvcc` of a CUDA toolkit, or remove the key to run the first nvcc on PATH".to_string()
            }
        })
    }
}

/// Where a known release was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum From {
    /// The config's `cuda-version`, where it was set.
    Config(Origin),
    /// What the real nvcc says: `the toolkit's version.json`, `nvcc --version`.
    Nvcc(&'static str),
}

impl fmt::Display for From {
    /// `` `cuda-version` in /etc/nvcc-wrapper.toml:2 ``, `the toolkit's version.json`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            From::Config(origin) => write!(f, "`cuda-version` in {origin}"),
            From::Nvcc(how) => f.write_str(how),
        }
    }
}

/// The config's `cuda-version` says one release and the toolkit's version.json another: nvcc was upgraded under an
/// old config (issue 60). The toolkit is what runs, so its release is decided by, and the user hears it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatedDiffers {
    pub stated: Version,
    pub origin: Origin,
    pub found: Version,
}

impl fmt::Display for StatedDiffers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let StatedDiffers { stated, origin, found } = self;
        write!(
            f,
            "`cuda-version` is {stated} ({origin}), but the nvcc that runs is {found} (its toolkit's version.json): deciding for {found}; set `cuda-version = \"{}\"`, or remove it",
            found.release()
        )
    }
}

impl Release {
    /// The release every personality decides by (the drop-in, `explain`, `doctor`, `gencode`): the config's
    /// `cuda-version`, which spares a probe, unless the toolkit's version.json (read, not run) says another release;
    /// else what the real nvcc says. With what differed, when the config was overruled.
    pub fn decide(
        cuda_version: Option<&Sourced<Version>>,
        probes: &dyn Probes,
        nvcc: &Path,
        compat: &Compat,
    ) -> (Release, Option<StatedDiffers>) {
        let mut stated = cuda_version;
        let mut differs = None;
        if let Some((cuda_version, found)) = stated.zip(probes.toolkit_version(nvcc)) {
            if cuda_version.value.release() != found.release() {
                let origin = cuda_version.origin.clone();
                differs = Some(StatedDiffers { stated: cuda_version.value, origin, found });
                stated = None;
            }
        }
        (Release::of(stated, probes, nvcc, compat), differs)
    }

    /// The config's `cuda-version`, else what the real nvcc says (its toolkit's version.json, else `nvcc --version`),
    /// placed against the tables.
    fn of(cuda_version: Option<&Sourced<Version>>, probes: &dyn Probes, nvcc: &Path, compat: &Compat) -> Release {
        let (version, from) = match cuda_version {
            Some(v) => (v.value, From::Config(v.origin.clone())),
            None => match probes.nvcc_version(nvcc) {
                Ok((version, how)) => (version, From::Nvcc(how)),
                Err(why) => return Release::Unknown { why },
            },
        };
        let newest = compat.newest_release();
        if version.release() > newest.release() {
            Release::Newer { version, from, newest }
        } else {
            Release::Known { version, from }
        }
    }

    /// Whether the config's `cuda-version` says the release (nothing was probed).
    pub fn stated_by_config(&self) -> bool {
        matches!(self, Release::Known { from: From::Config(_), .. } | Release::Newer { from: From::Config(_), .. })
    }

    /// The version, when it is known (newer than the tables included).
    pub fn version(&self) -> Option<Version> {
        match self {
            Release::Known { version, .. } | Release::Newer { version, .. } => Some(*version),
            Release::Unknown { .. } => None,
        }
    }
}

impl fmt::Display for Release {
    /// `12.4.131 (from the toolkit's version.json)`, `unknown (why)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Release::Known { version, from } => write!(f, "{version} (from {from})"),
            Release::Newer { version, from, newest } => {
                write!(f, "{version} (from {from}; newer than the tables, which end at {newest})")
            }
            Release::Unknown { why } => write!(f, "unknown ({why})"),
        }
    }
}
