//! The compiler cache nvcc runs through (`launcher`, `$NVCC_WRAPPER_LAUNCHER`): `<launcher> <real nvcc> <final
//! arguments>`. A cache in front of the wrapper hashes the arguments the build system gave and the wrapper's binary,
//! never the wrapper's configuration, so a change of `capabilities` would get objects for the old GPUs back; behind
//! the wrapper, its key covers every argument the wrapper added.
//!
//! A launcher some release of which is known to break with some NVCC releases (compat-data/launchers.toml) is left
//! out for those, with a note: the wrapper must never be the reason a build fails, and the build then runs as it
//! would without a cache.
//!
//! Two steps: `Launcher` decides early which program runs nvcc (the reproducible-builds step reads that decision);
//! `LauncherKey` runs last and puts into the command line what the cache key must cover.

use crate::plan::model::codes;
use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};

use super::facts::Facts;
use super::model::{Changes, Decided};
use super::{edit, Step};
use crate::args::{Channel, HostCompilerGiven, Invocation, Phase};
use crate::compat::Version;
use crate::compat::{LauncherCall, Text, FIRST_HONOURING_NVCC_CCBIN};
use crate::config::{Config, Key, Origin, Sourced};
use crate::context::vars;
use crate::error::{ErrorKind, Result};

pub struct Launcher;

/// The second part: what the launcher's cache key must cover, folded into the command line once every other step
/// has added its part.
pub struct LauncherKey;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    RunsThrough {
        launcher: PathBuf,
        origin: Origin,
    },
    /// A row of compat-data/launchers.toml: the launcher by its name there, the NVCC releases it fails with (and
    /// the kinds of call, where the row names some), why and where it was seen.
    KnownBad {
        launcher: PathBuf,
        name: Text,
        version: Version,
        first_cuda: Version,
        last_cuda: Option<Version>,
        calls: Vec<LauncherCall>,
        why: Text,
        source: Text,
    },
}

codes!(Note {
    RunsThrough => "runs-through",
    KnownBad => "known-bad",
});

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// `$NVCC_CCBIN` also as `-ccbin=`, which the cache hashes.
    NvccCcbinInKey,
    /// A variable's tokens moved onto the command line.
    EnvFlagsInKey { var: &'static str },
}

codes!(Reason {
    NvccCcbinInKey => "nvcc-ccbin-in-key",
    EnvFlagsInKey => "env-flags-in-key",
});

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::RunsThrough { launcher, origin } => write!(
                f,
                "nvcc runs through {}: its cache key covers the final command",
                Sourced::new(launcher.clone(), origin.clone()).named(Key::Launcher)
            ),
            Note::KnownBad { launcher, name, version, first_cuda, last_cuda, calls, why, source } => {
                write!(
                    f,
                    "the launcher {} is left out: {name} {version} fails with nvcc ",
                    crate::error::shell::path(launcher)
                )?;
                match last_cuda {
                    Some(last) => write!(f, "{first_cuda} to {last}")?,
                    None => write!(f, "{first_cuda} and later")?,
                }
                if !calls.is_empty() {
                    let named: Vec<&str> = calls.iter().map(|c| describe(*c)).collect();
                    write!(f, " in {}", named.join(" and "))?;
                }
                write!(f, ", without the wrapper too: {why} ({source}); nvcc runs without a cache")
            }
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::NvccCcbinInKey => {
                f.write_str("$NVCC_CCBIN, also given as `-ccbin=` so that the launcher's cache key covers it")
            }
            Reason::EnvFlagsInKey { var } => {
                write!(f, "${var}, moved onto the command line so that the launcher's cache key covers it")
            }
        }
    }
}

impl Step for Launcher {
    const NAME: &'static str = "launcher";
    type Section = Option<Sourced<PathBuf>>;
    type Needs<'d> = ();
    /// The launcher nvcc runs behind, found; `None` runs nvcc directly.
    type Decision = Option<PathBuf>;

    fn section<'c>(config: &'c Config, _: &Facts) -> &'c Self::Section {
        &config.launcher
    }

    /// Find the launcher and put it in the plan, or say why nvcc runs without it. A launcher that cannot be found
    /// is an error: the user asked for a cache and would otherwise never learn that builds are not cached.
    fn decide(facts: &Facts, setting: &Self::Section, _: (), plan: &mut Changes) -> Result<Option<PathBuf>> {
        let Some(sourced) = setting else { return Ok(None) };
        let Sourced { value: setting, origin } = sourced;
        let Some(path) = facts.probes.resolve(setting) else {
            let how = if setting.components().count() > 1 { "is not an executable file" } else { "is not on PATH" };
            let elsewhere =
                if matches!(origin, Origin::Env(_)) { "" } else { " (or set NVCC_WRAPPER_LAUNCHER to another one)" };
            return Err(sourced.error_of_kind(ErrorKind::Launcher, Key::Launcher, how).with_help(format!(
                "install it or give its full path, or remove `launcher` from {origin} to run nvcc without a cache{elsewhere}"
            )));
        };
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if facts.compat.launchers.names(&name) {
            if let Some(skip) = known_bad(facts, &path, &name) {
                plan.note(skip);
                return Ok(None);
            }
        }
        plan.note(Note::RunsThrough { launcher: path.clone(), origin: origin.clone() });
        Ok(Some(path))
    }
}

impl Step for LauncherKey {
    const NAME: &'static str = "launcher-key";
    type Section = ();
    /// Every decision: what it moves must be all the others changed.
    type Needs<'d> = &'d Decided;
    type Decision = ();

    fn section<'c>(_: &'c Config, _: &Facts) -> &'c Self::Section {
        &()
    }

    /// Behind a launcher, move onto the command line what nvcc would read from elsewhere, so that the cache key
    /// covers it. Runs last, so that what it moves is everything the other steps decided.
    fn decide(facts: &Facts, _: &(), decided: &Decided, plan: &mut Changes) -> Result<()> {
        if decided.launcher.is_some() {
            fold_env_channels(facts, plan);
            pass_nvcc_ccbin(facts, plan);
        }
        Ok(())
    }
}

/// `NVCC_CCBIN` alone names the host compiler, and nvcc reads it itself (12.5 on; before, the host-compiler step
/// already passes it as `-ccbin=`): pass the same value as `-ccbin=` too, which nvcc prefers and the cache hashes
/// (ccache does not read the variable).
fn pass_nvcc_ccbin(facts: &Facts, plan: &mut Changes) {
    let Some(HostCompilerGiven::Env(value)) = facts.invocation.host_compiler() else { return };
    if !facts.release.version().is_some_and(|r| r >= FIRST_HONOURING_NVCC_CCBIN) {
        return;
    }
    let mut arg = OsString::from("-ccbin=");
    arg.push(value);
    plan.add_before(vec![arg], Reason::NvccCcbinInKey);
}

/// Move what nvcc would read from `NVCC_PREPEND_FLAGS` and `NVCC_APPEND_FLAGS` onto the command line, in the places
/// nvcc puts it (first and last), and empty the variables for nvcc: ccache does not read them, so a GPU target given
/// there would otherwise be left out of its key. nvcc sees the same tokens in the same order.
fn fold_env_channels(facts: &Facts, plan: &mut Changes) {
    for (channel, var) in [(Channel::Prepend, vars::NVCC_PREPEND_FLAGS), (Channel::Append, vars::NVCC_APPEND_FLAGS)] {
        let tokens = edit::remaining(facts.invocation, &plan.removed, channel);
        if tokens.is_empty() {
            continue;
        }
        match channel {
            Channel::Prepend => plan.add_first(tokens, Reason::EnvFlagsInKey { var }),
            _ => plan.add_after(tokens, Reason::EnvFlagsInKey { var }),
        }
        plan.set_env(var, OsString::new());
    }
}

/// The note saying why this launcher is left out for this release and call, when a row of the table says so.
fn known_bad(facts: &Facts, path: &Path, name: &str) -> Option<Note> {
    let release = facts.release.version()?;
    let version = facts.probes.launcher_version(path).ok()?;
    let kinds = call_kinds(facts.invocation);
    let row = facts.compat.launchers.known_bad(name, version, release, &kinds)?;
    let calls = row.calls.iter().flat_map(|calls| calls.iter()).filter(|c| kinds.contains(c)).copied().collect();
    Some(Note::KnownBad {
        launcher: path.to_path_buf(),
        name: row.launcher.clone(),
        version,
        first_cuda: row.first_cuda,
        last_cuda: row.last_cuda,
        calls,
        why: row.why.clone(),
        source: row.source.clone(),
    })
}

/// The kinds of call the table's rows may name that this call is.
fn call_kinds(inv: &Invocation) -> Vec<LauncherCall> {
    let fatbin = inv.phase_option().is_some_and(|p| p.spec.long == "fatbin");
    let mut kinds = Vec::new();
    if (inv.phase() == Phase::Compile || fatbin) && inv.asks_device_lto() {
        kinds.push(LauncherCall::DeviceLto);
    }
    if fatbin {
        kinds.push(LauncherCall::Fatbin);
    }
    kinds
}

fn describe(call: LauncherCall) -> &'static str {
    match call {
        LauncherCall::DeviceLto => "a compile that writes device-LTO intermediates",
        LauncherCall::Fatbin => "a `-fatbin` call",
    }
}
