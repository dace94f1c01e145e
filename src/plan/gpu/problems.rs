//! What the GPU targets room refuses, as data: `Problem`, why one target of a list cannot be built, and `Refused`,
//! the room's error. Each has a stable code (`Coded`) and says itself once (`Display`, `help`). A sentence that
//! names the NVCC release, or a word the user wrote, is a function over what it names (`&dyn Display`), so that the
//! Nix answers render the same words over their placeholders (`{release}`, `{word}`, `{problems}`) rather than cut
//! them out of a rendered message.

use std::fmt::{self, Display};

use crate::compat::{Capability, Form, Item, Version};
use crate::error::ErrorKind;
use crate::plan::model::codes;

/// A target of a list: a capability as machine code, or as PTX only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    pub capability: Capability,
    pub for_ptx: bool,
}

/// `8.6`, or `9.0 (for PTX)`.
impl Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.for_ptx {
            true => write!(f, "{} (for PTX)", self.capability),
            false => write!(f, "{}", self.capability),
        }
    }
}

/// Why one target cannot be built: unknown, not accepted by the release, or not buildable for the target platform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// In no table.
    Unknown { target: Target },
    /// Accepted up to `last`, a release before the call's.
    Dropped { target: Target, last: Version },
    /// Accepted from `first`, a release after the call's.
    NotYet { target: Target, first: Version },
    /// A Jetson part's capability, for a target platform (named as messages describe it) that is not that part.
    /// `settings`: how to set the target platforms of `release` that would build it, none where no platform of the
    /// release serves the part.
    OtherJetson { capability: Capability, part: String, platform: String, release: Version, settings: Option<String> },
    /// Not a Jetson capability, for a Jetson target platform.
    NotJetson { capability: Capability, platform: String },
}

codes!(Problem {
    Unknown => "unknown",
    Dropped => "dropped",
    NotYet => "not-yet",
    OtherJetson => "other-jetson",
    NotJetson => "not-jetson",
});

impl Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Unknown { target } => f.write_str(&unknown_capability(target)),
            Problem::Dropped { target, last } => write!(f, "{target} was last accepted by nvcc {last}"),
            Problem::NotYet { target, first } => write!(f, "{target} needs nvcc {first} or later"),
            Problem::OtherJetson { capability, part, platform, .. } => {
                write!(f, "{capability} is Jetson {part}, which the target {platform} is not")
            }
            Problem::NotJetson { capability, platform } => write!(
                f,
                "{capability} is not a Jetson capability, and the target {platform} takes only Jetson capabilities"
            ),
        }
    }
}

impl Problem {
    /// The help clause that would fix it, where one would.
    pub fn help(&self) -> Option<String> {
        match self {
            Problem::OtherJetson { release, .. } => self.help_naming(&release.release()),
            _ => None,
        }
    }

    /// `help`, with the release named by `release`.
    pub fn help_naming(&self, release: &dyn Display) -> Option<String> {
        match self {
            Problem::OtherJetson { part, settings: Some(settings), .. } => {
                Some(format!("to build for Jetson {part}, {settings}"))
            }
            Problem::OtherJetson { part, settings: None, .. } => {
                Some(format!("no target platform of nvcc {release} serves Jetson {part}"))
            }
            _ => None,
        }
    }
}

/// `{what} is not a known GPU capability`.
pub fn unknown_capability(what: &dyn Display) -> String {
    format!("{what} is not a known GPU capability")
}

/// The room's errors: a keyword that cannot be resolved, a list with problems, a pair the release refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// `all` or `all-major` with the release unknown.
    NeedsRelease { word: Item },
    /// `all` or `all-major`, none of whose capabilities runs on the target platform.
    NoneOnPlatform { word: Item, release: Option<Version>, platform: String },
    /// `native`, and no GPU is known (`why`).
    NoGpus { why: String },
    /// Targets with problems, each said once; `helps`: what the release accepts, then each problem's own clause.
    Targets { release: Option<Version>, problems: Vec<Problem>, helps: Vec<String> },
    /// Two targets the release refuses together in `form` (combinations.toml); `what` names them, `nvcc` is nvcc's
    /// own message, `help` what would fix it.
    Pair { release: Version, form: Form, what: String, nvcc: String, help: String },
}

codes!(Refused {
    NeedsRelease => "needs-release",
    NoneOnPlatform => "none-on-platform",
    NoGpus => "no-gpus",
    Targets => "targets",
    Pair => "pair",
});

impl Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::NeedsRelease { word } => write!(
                f,
                "`{word}` in the GPU targets stands for what the nvcc release builds, and the release is not known"
            ),
            Refused::NoneOnPlatform { word, release, platform } => {
                let release = release.map_or_else(String::new, |r| format!(" {}", r.release()));
                write!(f, "`{word}` stands for what nvcc{release} builds, and none of it runs on the target {platform}")
            }
            Refused::NoGpus { why } => {
                write!(f, "`native` in the GPU targets stands for this machine's GPUs, and none is known: {why}")
            }
            Refused::Targets { release, problems, .. } => {
                let problems = problems.iter().map(Problem::to_string).collect::<Vec<_>>().join("; ");
                let release = release.map(|r| r.release());
                f.write_str(&cannot_build(release.as_ref().map(|r| r as &dyn Display), &problems))
            }
            Refused::Pair { release, form, what, nvcc, .. } => {
                f.write_str(&refused_pair(&release.release(), *form, what, nvcc))
            }
        }
    }
}

impl crate::error::Problem for Refused {
    fn kind(&self) -> ErrorKind {
        ErrorKind::Request
    }

    fn help(&self) -> Option<String> {
        Some(match self {
            Refused::NeedsRelease { .. } => "set `cuda-version` in the config (or `--cuda-version` for `nvcc-wrapper gencode`), or name the capabilities".to_string(),
            Refused::NoneOnPlatform { word: Item::AllMajor, platform, .. } => {
                format!("use `all`, or name the capabilities of {platform}'s GPUs")
            }
            Refused::NoneOnPlatform { platform, .. } => format!("name the capabilities of {platform}'s GPUs"),
            Refused::NoGpus { .. } => "name the capabilities to build for (`nvidia-smi --query-gpu=compute_cap --format=csv` on the machine that runs the code prints them)".to_string(),
            Refused::Targets { helps, .. } => helps.join("; "),
            Refused::Pair { help, .. } => help.clone(),
        })
    }
}

/// `nvcc {release} cannot build these GPU targets: {problems}` (without the release where it is not known).
pub fn cannot_build(release: Option<&dyn Display>, problems: &dyn Display) -> String {
    match release {
        Some(release) => format!("nvcc {release} cannot build these GPU targets: {problems}"),
        None => format!("cannot build these GPU targets: {problems}"),
    }
}

/// `nvcc {release} cannot build {what}: it refuses the pair ("{nvcc}")`, the verb that of the form.
pub fn refused_pair(release: &dyn Display, form: Form, what: &str, nvcc: &str) -> String {
    let doing = match form {
        Form::Gencode | Form::GencodePtx => format!("nvcc {release} cannot build {what}"),
        Form::Lto | Form::LtoPtx => format!("nvcc {release} cannot compile {what} for device LTO"),
        Form::LtoLink => format!("nvcc {release} cannot link {what} with device LTO (`-dlink -dlto`)"),
    };
    format!("{doing}: it refuses the pair (\"{nvcc}\")")
}
