//! The wrapper's configuration file: where it is found, what it may say, and how a bad one is reported.
//!
//! Found in the first of its places that has one (`places`: the named file, the installation's, the user's, the
//! machine's); else there is none and the wrapper works from defaults and probing. A file that is found but cannot
//! be read, has a syntax error, an unknown key or a bad value is an error naming the file, line and column: never
//! skipped. Relative paths inside the file are relative to the file's directory.

pub mod env;
mod key;
pub mod places;
pub(crate) mod plain;
pub mod problems;
mod report;
mod sourced;

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;

pub use crate::compat::CompilerFamily;
use crate::compat::TargetList;
use crate::compat::Version;
use crate::context::{vars, Context};
use crate::error::Result;
pub use env::Overridden;
#[cfg(test)]
pub use env::OVERRIDES;
pub use key::{HostKey, Key};
pub use report::toml_error;
#[cfg(test)]
pub use sourced::At;
pub use sourced::{Origin, Sourced};

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Config {
    /// The real nvcc to run. Without it, the first `nvcc` on PATH that is not the wrapper.
    #[serde(default, deserialize_with = "sourced_path")]
    pub nvcc: Option<Sourced<PathBuf>>,
    /// The NVCC release (`"12.4"`), so nothing has to be probed.
    pub cuda_version: Option<Sourced<Version>>,
    /// A directory whose `*.toml` files replace the compatibility tables built into the binary.
    #[serde(default, deserialize_with = "sourced_path")]
    pub compat_data: Option<Sourced<PathBuf>>,
    /// A compiler cache (`ccache`, `sccache`: a path, or a bare name looked up on PATH) the wrapper runs nvcc
    /// through, with the final arguments, so that the cache's key covers everything the wrapper added.
    #[serde(default, deserialize_with = "sourced_program")]
    pub launcher: Option<Sourced<PathBuf>>,
    /// Add what the wrapper's decision rests on (this file, the nvcc release's file, the chosen host compiler) to
    /// the dependency file a call writes, so that build systems rebuild when it changes. Unset: on.
    pub depfile_inputs: Option<Sourced<bool>>,
    /// Add the flags that make this release's outputs the same bytes for the same inputs (compat-data/
    /// reproducible.toml). Unset: on.
    pub reproducible: Option<Sourced<bool>>,
    /// The most threads nvcc may run one call's GPU targets with (`--threads N`), taken from free job slots when
    /// memory holds them. `1`: never more than nvcc's one. Unset: as many as the call has GPU targets.
    pub threads: Option<Sourced<ThreadCount>>,
    /// Let a call's threads follow the build while nvcc runs: slots that free become threads at once, and slots the
    /// call no longer uses go back (`exec::follow`). Unset: on (never behind a `launcher`).
    pub threads_follow: Option<Sourced<bool>>,
    #[serde(default)]
    pub host_compiler: HostCompilerConfig,
    #[serde(default)]
    pub gpu: GpuConfig,
    #[serde(default)]
    pub target: TargetConfig,
}

/// `threads`: a count of threads, from 1. Checked here, where the file's value and the environment's are both read
/// (`TryFrom`), so that 0 is refused whatever its origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "i64")]
pub struct ThreadCount(std::num::NonZeroU32);

impl ThreadCount {
    pub fn get(self) -> u32 {
        self.0.get()
    }
}

impl TryFrom<i64> for ThreadCount {
    type Error = String;
    fn try_from(n: i64) -> std::result::Result<ThreadCount, String> {
        match u32::try_from(n).ok().and_then(std::num::NonZeroU32::new) {
            Some(n) => Ok(ThreadCount(n)),
            None if n <= 0 => Err(format!("{n} is not a number of threads: the least is 1 (nvcc's one thread)")),
            None => Err(format!("{n} is not a number of threads: the most is {}", u32::MAX)),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct HostCompilerConfig {
    /// The main ("stdenv") C++ compiler: objects built by it must link with nvcc's.
    #[serde(default, deserialize_with = "entry_or_path")]
    pub stdenv: Option<Sourced<CompilerEntry>>,
    /// Other compilers the wrapper may choose from, each with the line it is on.
    #[serde(default, deserialize_with = "entries_or_paths")]
    pub candidates: Vec<Sourced<CompilerEntry>>,
    pub prefer: Option<Sourced<CompilerFamily>>,
    /// Pass `-allow-unsupported-compiler` instead of failing when no compiler is in range.
    #[serde(default)]
    pub allow_unsupported: Sourced<bool>,
    /// What to do when the command asks for host LTO and the compiler nvcc accepts is not the stdenv one, whose
    /// LTO bytecode the objects will not match.
    #[serde(default)]
    pub lto_mismatch: Sourced<LtoMismatch>,
}

/// `[host-compiler] lto-mismatch`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LtoMismatch {
    /// Build with the accepted compiler, and say why the link may fail and how to avoid it.
    #[default]
    Warn,
    /// Stop before nvcc runs (exit 69).
    Error,
}

impl sourced::Shown for CompilerEntry {
    fn shown(&self) -> String {
        crate::error::shell::path(&self.path)
    }
}

/// A compiler, written as its path (`"/usr/bin/g++-11"`) or as a table that also records what probing would find
/// (`{ path = "...", family = "gcc", version = "11.4.0", target = "x86_64-linux-gnu" }`), so nothing is run.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct CompilerEntry {
    #[serde(deserialize_with = "program")]
    pub path: PathBuf,
    pub family: Option<CompilerFamily>,
    /// As the compiler's package names it: its first three numbers count (`Version::of_compiler_package`).
    #[serde(default, deserialize_with = "compiler_version")]
    pub version: Option<Version>,
    /// The GNU triple the compiler produces code for (`-dumpmachine`).
    pub target: Option<String>,
    /// For the stdenv compiler: its GCC installation (`PREFIX/lib/gcc/TRIPLE/VERSION`), where its libstdc++ is.
    #[serde(default, deserialize_with = "path")]
    pub gcc_install_dir: Option<PathBuf>,
    /// For the stdenv compiler: the directory of the `libstdc++.so.6` its programs load.
    #[serde(default, deserialize_with = "path")]
    pub libstdcxx_dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct GpuConfig {
    /// GPU targets to build for, in any dialect (`compat::TargetList`): Nixpkgs' `cudaCapabilities`
    /// (`["8.6", "9.0a"]`), PyTorch's `8.6+PTX`, CMake's `86-real`, nvcc's `compute_90`, `all`, `all-major`, `native`.
    #[serde(default)]
    pub capabilities: Sourced<TargetList>,
    /// Also embed PTX of the newest baseline capability, for GPUs newer than the list.
    #[serde(default)]
    pub forward_compat: Sourced<bool>,
    #[serde(default)]
    pub arch_flags: Sourced<ArchFlags>,
    /// Add the flags that make this release's fatbins smallest (compat-data/fatbin.toml). Unset: on.
    pub compress_fatbin: Option<Sourced<bool>>,
}

/// What to do when the command line already names GPU targets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ArchFlags {
    /// Add nothing when the user or build system gave any GPU target option.
    #[default]
    Respect,
    /// Remove the user's GPU target options and add the configured ones.
    Replace,
    /// Add the configured ones as well.
    Append,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct TargetConfig {
    /// `aarch64-linux`, `powerpc64le-linux`, `x86_64-linux` (GNU triples accepted too).
    pub system: Option<Sourced<String>>,
    /// For aarch64: `jetson` or `sbsa`.
    pub platform: Option<Sourced<TargetPlatform>>,
    #[serde(default, deserialize_with = "sourced_path")]
    pub sysroot: Option<Sourced<PathBuf>>,
    /// The target's CUDA headers and libraries, for layouts without `TOP/targets/<dir>`.
    #[serde(default, deserialize_with = "sourced_path")]
    pub cuda_root: Option<Sourced<PathBuf>>,
    /// Jetson: the directory of the CUDA forward-compatibility `libcuda.so`, put first in the runpath of what nvcc
    /// links (`plan::cuda_compat`).
    #[serde(default, deserialize_with = "sourced_path")]
    pub cuda_compat: Option<Sourced<PathBuf>>,
    /// The compilers for the target, with the `[host-compiler]` keys (used only when the target is another CPU).
    #[serde(default)]
    pub host_compiler: HostCompilerConfig,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TargetPlatform {
    Jetson,
    Sbsa,
}

impl TargetPlatform {
    /// As the config spells it.
    pub fn name(self) -> &'static str {
        match self {
            TargetPlatform::Jetson => "jetson",
            TargetPlatform::Sbsa => "sbsa",
        }
    }
}

impl<'de> Deserialize<'de> for CompilerEntryOrPath {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = CompilerEntryOrPath;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a compiler path, or a table with `path` and optionally `family`, `version`, `target`")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> std::result::Result<Self::Value, E> {
                Ok(CompilerEntryOrPath(CompilerEntry::path(sourced::in_file(s.into(), true))))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> std::result::Result<Self::Value, A::Error> {
                CompilerEntry::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(CompilerEntryOrPath)
            }
        }
        d.deserialize_any(V)
    }
}

impl CompilerEntry {
    /// An entry that records nothing but the path: everything else is probed.
    pub fn path(path: impl Into<PathBuf>) -> CompilerEntry {
        CompilerEntry {
            path: path.into(),
            family: None,
            version: None,
            target: None,
            gcc_install_dir: None,
            libstdcxx_dir: None,
        }
    }
}

/// The file form of a compiler entry: a plain path or a full table.
struct CompilerEntryOrPath(CompilerEntry);

fn entry_or_path<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<Sourced<CompilerEntry>>, D::Error> {
    let Sourced { value, origin } = Sourced::<CompilerEntryOrPath>::deserialize(d)?;
    Ok(Some(Sourced::new(value.0, origin)))
}

fn entries_or_paths<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Vec<Sourced<CompilerEntry>>, D::Error> {
    let entries = Vec::<Sourced<CompilerEntryOrPath>>::deserialize(d)?;
    Ok(entries.into_iter().map(|Sourced { value, origin }| Sourced::new(value.0, origin)).collect())
}

fn compiler_version<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<Version>, D::Error> {
    let text = String::deserialize(d)?;
    Version::of_compiler_package(&text).map(Some).map_err(serde::de::Error::custom)
}

// The file's paths, made absolute against its directory while they are read (`sourced::in_file`): each path key
// names one of these at its declaration.

/// A directory or file.
fn path<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<PathBuf>, D::Error> {
    Ok(Some(sourced::in_file(PathBuf::deserialize(d)?, false)))
}

/// A program: a bare name stays bare, for PATH.
fn program<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<PathBuf, D::Error> {
    Ok(sourced::in_file(PathBuf::deserialize(d)?, true))
}

fn sourced_path<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<Sourced<PathBuf>>, D::Error> {
    let Sourced { value, origin } = Sourced::<PathBuf>::deserialize(d)?;
    Ok(Some(Sourced::new(sourced::in_file(value, false), origin)))
}

fn sourced_program<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<Sourced<PathBuf>>, D::Error> {
    let Sourced { value, origin } = Sourced::<PathBuf>::deserialize(d)?;
    Ok(Some(Sourced::new(sourced::in_file(value, true), origin)))
}

/// A configuration, the file it came from and what the environment overrode. Relative paths in the file are already
/// resolved against its directory (a bare program name such as `g++-11` stays bare, to be looked up on PATH as nvcc
/// does with `-ccbin`), and every setting that can come from elsewhere carries its origin (the file and line, once
/// read), so each planning step can be handed its own section and nothing else.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Loaded {
    /// Boxed: at 1.4 KB it would otherwise be copied through every frame from the parse to the plan, each frame
    /// pages of stack a drop-in call must fault in (docs/benchmarks.md).
    pub config: Box<Config>,
    /// `None` when no file was found.
    pub path: Option<PathBuf>,
    /// Every place looked at, in order; the last is the file read, when one was.
    pub looked_at: Vec<places::Looked>,
    /// Config files at the places after the one read: ignored whole (`places::ignored`). Found only for `explain`
    /// and `doctor` (`find_ignored`): a drop-in call never looks at the places after the one it reads.
    pub ignored: Vec<(places::Place, PathBuf)>,
    /// Settings the environment overrode, for the debug log and `explain`.
    pub overrides: Vec<Overridden>,
}

impl Loaded {
    /// Find the config files that the one read leaves ignored, for `explain` and `doctor` to name.
    pub fn find_ignored(&mut self, ctx: &Context) {
        self.ignored = places::ignored(ctx, &self.looked_at, places::there);
    }

    /// The configuration a file at `path` with this text gives.
    pub fn from_text(text: &str, path: &Path) -> Result<Loaded> {
        // Each field named: `..Loaded::default()` would build (and drop) a default config too.
        Ok(Loaded {
            config: parse(text, path)?,
            path: Some(path.to_path_buf()),
            looked_at: Vec::new(),
            ignored: Vec::new(),
            overrides: Vec::new(),
        })
    }
}

/// Apply the environment's overrides (`OVERRIDES`) to a loaded configuration.
pub fn apply_env(loaded: &mut Loaded, env: &crate::context::Env) -> Result<()> {
    env::apply(loaded, env)
}

/// Find and read the configuration for this context, with the environment's overrides.
pub fn load_with_env(ctx: &Context) -> Result<Loaded> {
    let mut loaded = load(ctx)?;
    apply_env(&mut loaded, &ctx.env)?;
    Ok(loaded)
}

/// Find and read the configuration for this context.
pub fn load(ctx: &Context) -> Result<Loaded> {
    ctx.env.switch(vars::NO_MACHINE_CONFIG)?;
    let looked_at = places::find(ctx, places::there);
    let Some(used) = looked_at.last().filter(|l| l.state == places::State::Used) else {
        return Ok(Loaded { looked_at, ..Loaded::default() });
    };
    // `find` has just found it a regular file.
    let text = crate::error::bounded::read_seen_to_string(&used.path, crate::error::bounded::CONFIG).map_err(|e| {
        problems::Refused::Unreadable { path: used.path.clone(), place: used.place, why: e.to_string() }
    })?;
    let mut loaded = Loaded::from_text(&text, &used.path)?;
    loaded.looked_at = looked_at;
    Ok(loaded)
}

/// A configuration file's settings, as the file at `path` with this text says them: each carrying its line, its
/// relative paths made absolute against the file's directory. Read by the config's own reader where the file is plain
/// TOML (`plain`: most are), else by `toml`, whose errors say what is wrong.
pub fn parse(text: &str, path: &Path) -> Result<Box<Config>> {
    sourced::reading(path, text, || plain::read(text).map_or_else(|| toml::from_str(text), Ok))
        .map_err(|e| toml_error(&e, text, path))
}

#[cfg(test)]
mod tests;
