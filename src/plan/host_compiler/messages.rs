//! What the host-compiler step says: why it passes a compiler, and what it notes or warns about.

use crate::plan::model::codes;
use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;

use crate::args::split::Unpassable;
use crate::args::table::Spelled;
use crate::args::Place;
use crate::compat::Accepts;
use crate::compat::Version;
use crate::probe::compiler::Known;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    NotInTable {
        release: Version,
    },
    Given {
        how: Named,
        value: OsString,
    },
    /// A warning: the user's compiler is one this nvcc rejects.
    GivenRejected {
        release: Version,
        accepts: Accepts,
        how: Named,
        compiler: Known,
    },
    StdenvLeftOut {
        cross: bool,
        /// A probe's own words (the compiler's error, or what it printed).
        why: String,
    },
    /// `g++` on PATH, nvcc's own default, could not be asked what it is: nothing is chosen instead.
    DefaultUnprobed {
        compiler: PathBuf,
        /// A probe's own words.
        why: String,
    },
    CandidateForAnotherMachine {
        compiler: Known,
    },
    CandidateLeftOut {
        /// A probe's own words, naming the candidate.
        why: String,
    },
    /// A warning: host LTO objects that the stdenv compiler's link will not read.
    LtoMismatch {
        /// The `-flto` word the compiler options hold, as written (`-flto=auto`, `-flto=thin`).
        lto: String,
        chosen: Known,
        stdenv: Known,
        release: Version,
        accepts: Accepts,
        cross: bool,
        section: &'static str,
    },
    /// A warning: the stdenv's libstdc++ could not be found.
    NoLibstdcxx {
        stdenv: Known,
        chosen: Known,
        /// A probe's own words.
        why: String,
    },
    /// A warning: the stdenv's libstdc++ is in a directory nvcc would not pass on unchanged.
    LibstdcxxUnpassable {
        stdenv: Known,
        chosen: Known,
        dir: PathBuf,
        byte: Unpassable,
    },
    /// The compiler chosen is the one nvcc runs by itself: why it was chosen, and nvcc's own two programs.
    NvccsOwn {
        why: Box<Reason>,
        gcc: PathBuf,
        gxx: PathBuf,
    },
    /// A warning: `$NVCC_CCBIN` that a release before 12.5 ignores, and that would break the build if passed on.
    NvccCcbinIgnored {
        value: OsString,
        why: IgnoredWhy,
        release: Version,
        first: Version,
    },
}

codes!(Note {
    NotInTable => "not-in-table",
    Given => "given",
    GivenRejected => "given-rejected",
    StdenvLeftOut => "stdenv-left-out",
    DefaultUnprobed => "default-unprobed",
    CandidateForAnotherMachine => "candidate-for-another-machine",
    CandidateLeftOut => "candidate-left-out",
    LtoMismatch => "lto-mismatch",
    NoLibstdcxx => "no-libstdcxx",
    LibstdcxxUnpassable => "libstdcxx-unpassable",
    NvccCcbinIgnored => "nvcc-ccbin-ignored",
    NvccsOwn => "nvccs-own",
});

/// How the user named the host compiler: an option, as spelled and where, or `$NVCC_CCBIN`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Named {
    Option { spelling: Spelled, place: Place },
    Env,
}

impl fmt::Display for Named {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Named::Option { spelling, place } => write!(f, "`{spelling}` in {place}"),
            Named::Env => f.write_str("$NVCC_CCBIN"),
        }
    }
}

/// Why the wrapper ignores `$NVCC_CCBIN` as the release does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IgnoredWhy {
    NamesNoProgram,
    Rejected { compiler: Known, accepts: Accepts },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    CrossStdenvUnchecked {
        compiler: Known,
    },
    /// The configured stdenv compiler, which could not be asked what it is.
    StdenvUnprobed {
        compiler: PathBuf,
        /// A probe's own words.
        why: String,
    },
    LinksObjectsOnly {
        compiler: Known,
    },
    StdenvAccepted {
        compiler: Known,
        release: Version,
        accepts: Accepts,
        cross: bool,
    },
    NewestAccepted {
        chosen: Known,
        stdenv: Option<Known>,
        release: Version,
        accepts: Accepts,
        cross: bool,
    },
    UnsupportedKept {
        compiler: Known,
        release: Version,
        accepts: Accepts,
        lto: Option<String>,
    },
    AllowUnsupported {
        section: &'static str,
    },
    NvccCcbinIgnored {
        release: Version,
        first: Version,
    },
    SharedLibstdcxx {
        chosen: Known,
        gcc_install_dir: PathBuf,
    },
}

codes!(Reason {
    CrossStdenvUnchecked => "cross-stdenv-unchecked",
    StdenvUnprobed => "stdenv-unprobed",
    LinksObjectsOnly => "links-objects-only",
    StdenvAccepted => "stdenv-accepted",
    NewestAccepted => "newest-accepted",
    UnsupportedKept => "unsupported-kept",
    AllowUnsupported => "allow-unsupported",
    NvccCcbinIgnored => "nvcc-ccbin-ignored",
    SharedLibstdcxx => "shared-libstdcxx",
});

/// "target's " for a cross build.
fn whose(cross: bool) -> &'static str {
    if cross {
        "target's "
    } else {
        ""
    }
}

impl Note {
    /// The problem of an `LtoMismatch`, as the warning or the error under `lto-mismatch = "error"` says it.
    pub fn lto_problem(&self) -> String {
        let Note::LtoMismatch { lto, chosen, stdenv, release, accepts, cross, .. } = self else { return String::new() };
        format!(
            "host LTO (`{lto}`) with {chosen}, which nvcc {release} accepts ({}), where the {}stdenv compiler is {stdenv}: the LTO bytecode of these objects will not link with {stdenv}'s",
            accepts.describe(),
            whose(*cross)
        )
    }

    /// The ways out of an `LtoMismatch`.
    pub fn lto_help(&self) -> String {
        let Note::LtoMismatch { stdenv, release, section, .. } = self else { return String::new() };
        format!(
            "take -flto out of the CUDA compiles (-Xcompiler), build with a stdenv compiler nvcc {release} accepts, or set `allow-unsupported = true` in `{section}` to compile with {stdenv} anyway"
        )
    }
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::NotInTable { release } => {
                write!(f, "nvcc {release} is not in the compatibility table: no host compiler is chosen")
            }
            Note::Given { how, value } => {
                write!(f, "the host compiler is given by {how} ({}): nothing is added", value.to_string_lossy())
            }
            Note::NvccsOwn { why, gcc, gxx } => write!(
                f,
                "{why}, and nvcc runs it by itself ({} to compile, {} to link, the same GCC, found on PATH): no `-ccbin` is added, so that nvcc's command lines stay as long as alone",
                crate::error::shell::path(gcc),
                crate::error::shell::path(gxx)
            ),
            Note::GivenRejected { release, accepts, how, compiler } => write!(
                f,
                "nvcc {release} accepts {}, and the host compiler given by {how} is {compiler}: nvcc will reject it",
                accepts.describe()
            ),
            Note::StdenvLeftOut { cross, why } => write!(f, "the {}stdenv compiler is left out: {why}", whose(*cross)),
            Note::DefaultUnprobed { compiler, why } => write!(
                f,
                "{} could not be asked what it is ({why}): no host compiler is added, and nvcc runs its own default",
                crate::error::shell::path(compiler)
            ),
            Note::CandidateForAnotherMachine { compiler } => write!(
                f,
                "candidate left out: {compiler} builds for {}, not the target",
                compiler.target.as_deref().unwrap_or("an unknown machine")
            ),
            Note::CandidateLeftOut { why } => write!(f, "candidate left out: {why}"),
            Note::LtoMismatch { section, .. } => write!(
                f,
                "{} ({}; `lto-mismatch = \"error\"` in `{section}` makes this an error)",
                self.lto_problem(),
                self.lto_help()
            ),
            Note::NoLibstdcxx { stdenv, chosen, why } => write!(
                f,
                "cannot find the libstdc++ of the stdenv compiler {stdenv} ({why}): objects it built may not link with {chosen}'s"
            ),
            Note::LibstdcxxUnpassable { stdenv, chosen, dir, byte } => write!(
                f,
                "the libstdc++ of the stdenv compiler {stdenv} is in {}, which holds {byte}: nvcc would not pass that to {chosen} unchanged in an -Xcompiler or -Xlinker list, so it is not named, and objects the stdenv compiler built may not link with {chosen}'s (the stdenv entry's `gcc-install-dir` and `libstdcxx-dir` can name the directories by paths without it: symbolic links will do)",
                crate::error::shell::path(dir)
            ),
            Note::NvccCcbinIgnored { value, why, release, first } => {
                write!(f, "$NVCC_CCBIN={} ", crate::error::shell::display([value.as_os_str()]))?;
                match why {
                    IgnoredWhy::NamesNoProgram => f.write_str("names no program")?,
                    IgnoredWhy::Rejected { compiler, accepts } => {
                        write!(f, "names {compiler}, which nvcc {release} rejects ({})", accepts.describe())?
                    }
                }
                write!(
                    f,
                    "; nvcc {release} ignores $NVCC_CCBIN (honoured from {first}), so the wrapper does too and chooses the host compiler itself"
                )
            }
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::CrossStdenvUnchecked { compiler } => write!(f, "the target's stdenv compiler {compiler}"),
            Reason::StdenvUnprobed { compiler, why } => write!(
                f,
                "the configured stdenv compiler {} could not be asked what it is ({why}): it is kept as configured, unchecked, and nvcc checks it itself",
                crate::error::shell::path(compiler)
            ),
            Reason::LinksObjectsOnly { compiler } => write!(
                f,
                "this call only links objects, which nvcc does without checking the host compiler, so the stdenv compiler {compiler} links them with its own libstdc++"
            ),
            Reason::StdenvAccepted { compiler, release, accepts, cross } => write!(
                f,
                "the {}stdenv compiler {compiler} is one nvcc {release} accepts ({})",
                whose(*cross),
                accepts.describe()
            ),
            Reason::NewestAccepted { chosen, stdenv, release, accepts, cross } => {
                let accepts = accepts.describe();
                let whose = whose(*cross);
                match stdenv {
                    Some(s) => write!(f, "nvcc {release} accepts {accepts}, not the {whose}stdenv compiler {s}"),
                    None => write!(f, "nvcc {release} accepts {accepts}, and no {whose}stdenv compiler is known"),
                }?;
                write!(f, ": {chosen} is the newest accepted")
            }
            Reason::UnsupportedKept { compiler, release, accepts, lto } => {
                write!(f, "nvcc {release} accepts {}, and ", accepts.describe())?;
                match lto {
                    Some(lto) => write!(f, "host LTO (`{lto}`) needs the stdenv compiler's bytecode")?,
                    None => f.write_str("no compiler it accepts was found")?,
                }
                write!(f, ": allow-unsupported keeps the stdenv compiler {compiler}")
            }
            Reason::AllowUnsupported { section } => write!(f, "`allow-unsupported = true` in `{section}`"),
            Reason::NvccCcbinIgnored { release, first } => {
                write!(f, "nvcc {release} ignores $NVCC_CCBIN (honoured from {first}), so the wrapper passes it on")
            }
            Reason::SharedLibstdcxx { chosen, gcc_install_dir } => write!(
                f,
                "{chosen} is not the stdenv compiler: use the stdenv's libstdc++ from {} so objects of both link and run",
                crate::error::shell::path(gcc_install_dir)
            ),
        }
    }
}
