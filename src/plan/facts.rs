//! What every step decides from, worked out once per call: the command line, the NVCC release (known, newer than the
//! tables, or unknown and why), the target platform and whether it is a cross build, whether the build is for a
//! Jetson, the tables, and the only door to the OS (`Probes`). A fact more than one step needs is found here, and
//! said here once (an unknown release is one warning, not one per step).

use crate::compat::Text;
use crate::plan::model::codes;
use std::fmt;
use std::path::{Path, PathBuf};

use super::model::{Changes, FoundBy};
pub use super::release::Release;
use super::target::{self, Named};
use crate::args::Invocation;
use crate::compat::Version;
use crate::compat::{Compat, Platform};
use crate::config::HostCompilerConfig;
use crate::context::Jobserver;
use crate::error::Result;
use crate::probe::system::{NvccUnknown, Probes};

/// What the facts themselves say, once. `TargetHostCompilerUnused`: `[target.host-compiler]` holds settings, but the
/// build is not a cross build, so only `[host-compiler]` counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    /// `why`: the probe's own words for why `nvcc --version` gave no release.
    ReleaseUnknown {
        why: String,
    },
    ReleaseNewer {
        version: Version,
        newest: Version,
    },
    TargetIsNative {
        platform: Text,
    },
    TargetHostCompilerUnused {
        platform: Text,
    },
    /// The config's `cuda-version` says one release, and the toolkit's version.json another: the toolkit's is used.
    StatedReleaseDiffers(super::release::StatedDiffers),
}

codes!(Note {
    ReleaseUnknown => "release-unknown",
    ReleaseNewer => "release-newer",
    TargetIsNative => "target-is-native",
    TargetHostCompilerUnused => "target-host-compiler-unused",
    StatedReleaseDiffers => "stated-release-differs",
});

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::ReleaseUnknown { why } => write!(
                f,
                "the NVCC release is unknown ({why}): no host compiler is chosen, no fatbin flags are added, and GPU targets and the target platform are checked only against the tables; set `cuda-version` in the config"
            ),
            Note::ReleaseNewer { version, newest } => write!(
                f,
                "nvcc {version} is newer than the compatibility tables: assuming what {newest}, the newest they describe, accepts"
            ),
            Note::StatedReleaseDiffers(differs) => differs.fmt(f),
            Note::TargetIsNative { platform } => {
                write!(f, "the target {platform} is this machine's: nothing is cross-compiled")
            }
            Note::TargetHostCompilerUnused { platform } => write!(
                f,
                "`[target.host-compiler]` is not used: it names the compilers for a target of another CPU, and this build's target, {platform}, is this machine's; the host compiler comes from `[host-compiler]`"
            ),
        }
    }
}

/// The facts of one call.
pub struct Facts<'a> {
    pub invocation: &'a Invocation,
    pub release: Release,
    /// The platform the code is built for (`[target]`, else this machine's).
    pub platform: &'a Platform,
    /// The target is another CPU than this machine's (an aarch64 machine building for Jetson is not a cross build:
    /// its toolkit is that platform's own).
    pub cross: bool,
    /// The build is for a Jetson: the Jetson platform, or another platform building only Jetson capabilities (Thor
    /// from 13.0 and Orin from 13.2 on the unified Arm toolkit).
    pub jetson_build: bool,
    /// How the user names the target settings, for messages.
    pub named: Named,
    /// The files the settings were read from: the config file, and the `compat-data` files that replace built-in
    /// tables.
    pub settings_files: Vec<PathBuf>,
    pub compat: &'a Compat,
    /// The only way a step reaches the OS.
    pub probes: &'a dyn Probes,
    /// The real nvcc.
    pub nvcc: &'a Path,
    /// Where options files the plan writes go, asked when one is.
    pub scratch: &'a dyn Fn() -> PathBuf,
    /// What nvcc's process will be, as far as the wrapper can tell in advance.
    pub nvcc_process: &'a NvccProcess,
    /// The jobserver the environment names: whether the build shares job slots with this call (the slots themselves
    /// are `exec`'s to take).
    pub jobserver: &'a Jobserver,
    /// The call is within reach of the kernel's argument limits (`ArgEdge`): nothing optional is added to it (no
    /// reproducible-builds flags, no fatbin compression, no threads), so that what nvcc alone builds, the wrapper
    /// builds, to the byte.
    pub arg_edge: Option<ArgEdge>,
}

/// How much the optional additions can grow the longest command line nvcc gives its children, for a call whose
/// output name is `output` bytes long and whose source name `source`: `-objtemp` names the output in each temporary
/// file's name (8 times in cicc's `sh -c` line, measured with 13.5), the seeds hold it once or twice, the source's
/// name for cudafe++ holds the source once in each of two lines, and the fatbin and threads flags some tens of bytes.
pub fn optional_growth(output: u64, source: u64) -> u64 {
    8 * output + 2 * source + 1024
}

/// The most bytes one word of the user's options takes in one string nvcc's children get: gcc's
/// `COLLECT_GCC_OPTIONS` writes each option quoted, a joined value apart (`-DX=1` as `'-D' 'X=1' `: six bytes
/// more), and nvcc's `sh -c` lines write it as `-D "X=1" ` (four more); a quote, backslash, `$` or backtick inside
/// is escaped (`'` becomes four bytes there). Measured with nvcc 12.4 and 13.5 (issue 48): 8,760 flags `-DXi=1` came
/// to 80 KiB as given and past 128 KiB in `COLLECT_GCC_OPTIONS`.
fn in_one_string(word: &std::ffi::OsStr) -> u64 {
    let bytes = word.as_encoded_bytes();
    let escaped = bytes.iter().filter(|b| matches!(b, b'\'' | b'"' | b'\\' | b'$' | b'`')).count() as u64;
    bytes.len() as u64 + 6 + 3 * escaped
}

/// What nvcc's process will be when the wrapper execs it: the wrapper's own process id (exec keeps it), the
/// directory nvcc names its temporary files in (`$TMPDIR`, `/tmp` when unset or empty), and the size of what it is
/// given against the kernel's limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NvccProcess {
    /// nvcc's process id: the wrapper's own, which nvcc takes over by exec; `None` for a call described and not run
    /// here (`explain`, `doctor`), whose `{pid}` is shown as `<pid>`.
    pub pid: Option<u32>,
    pub tmpdir: PathBuf,
    /// The call as the caller gave it: its arguments and environment as the kernel counts them (each string, its
    /// NUL and a pointer), and the kernel's limit on them (`sysconf(_SC_ARG_MAX)`).
    pub given_bytes: u64,
    pub arg_max: u64,
    /// Inside a Nix build (`NIX_BUILD_TOP`, not `nix-shell`): nothing of the machine may decide what is built.
    pub nix_build: bool,
}

impl NvccProcess {
    /// A fixed process, for the in-process benchmark and fuzz entry points: pid 4242, `/tmp`, a small call.
    pub fn fixed() -> NvccProcess {
        NvccProcess { pid: Some(4242), tmpdir: "/tmp".into(), given_bytes: 4096, arg_max: 2 << 20, nix_build: false }
    }
}

/// The kernel's limit on one string of a program's arguments or environment (`MAX_ARG_STRLEN`, 32 pages).
pub const MAX_ARG_STRLEN: u64 = 128 << 10;

/// What nvcc itself adds to its children's command lines and environments beyond the user's options, with room
/// to spare: measured at about 2.9 KiB with nvcc 13.5 (1.5 KiB of profile variables, gcc's own), more with the long
/// paths of a Nix store (docs/nvcc-facts.md#the-argument-length-edge).
const NVCC_OWN: u64 = 8 << 10;

/// A call so close to the kernel's limits on arguments that what the wrapper adds by default, growing the command
/// lines nvcc's children get, could push one past them (a build plain nvcc completes would then fail).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgEdge {
    /// The user's options (argv, `NVCC_*_FLAGS`, options files): nvcc's `sh -c` lines and gcc's
    /// `COLLECT_GCC_OPTIONS` each hold all of them in one string, which the kernel limits to 128 KiB; `options` is
    /// what they come to there (`in_one_string`).
    OneString { options: u64 },
    /// Arguments and environment together, against `ARG_MAX` (gcc's children hold the options twice).
    Total { bytes: u64, limit: u64 },
}

impl ArgEdge {
    /// Whether adding `growth` bytes (to one string, and to the whole) could cross a limit, for `inv` run as
    /// `process` describes.
    pub fn of(inv: &Invocation, process: &NvccProcess, growth: u64) -> Option<ArgEdge> {
        let words = inv.argv.iter().chain(&inv.prepend).chain(&inv.append);
        let files = inv.options_files.iter().flat_map(|f| f.tokens.iter());
        let options: u64 = words.chain(files).map(|w| in_one_string(w)).sum();
        if options + NVCC_OWN + growth > MAX_ARG_STRLEN {
            return Some(ArgEdge::OneString { options });
        }
        let bytes = process.given_bytes + options;
        if process.arg_max > 0 && bytes + NVCC_OWN + 2 * growth > process.arg_max {
            return Some(ArgEdge::Total { bytes, limit: process.arg_max });
        }
        None
    }
}

impl fmt::Display for ArgEdge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArgEdge::OneString { options } => write!(
                f,
                "the options come to {options} bytes as nvcc hands them all to its children in one string (each quoted), which the kernel limits to {MAX_ARG_STRLEN} bytes"
            ),
            ArgEdge::Total { bytes, limit } => write!(
                f,
                "the arguments and environment come to {bytes} bytes as nvcc's children get them, and the kernel takes {limit}"
            ),
        }
    }
}

impl<'a> Facts<'a> {
    /// Work out the facts, and say in `plan` what they mean for every step (an unknown release, say). Fails when the
    /// target cannot be built at all.
    pub fn gather(inputs: &'a super::Inputs, plan: &mut Changes) -> Result<Facts<'a>> {
        let super::Inputs { invocation, config, compat, probes, scratch, nvcc_process, jobserver, .. } = *inputs;
        let nvcc = inputs.nvcc.path.as_path();
        plan.enter("facts");
        let (release, differs) = Release::decide(config.cuda_version.as_ref(), probes, nvcc, compat);
        if let Some(differs) = differs {
            plan.warn(Note::StatedReleaseDiffers(differs));
        }
        match &release {
            // A program the config names as nvcc that says it is another (issue 60: `nvcc = "/usr/bin/gcc"` ran gcc
            // with nvcc's arguments, which built nothing and exited 0).
            Release::Unknown { why: why @ NvccUnknown::NotNvcc { .. } } => {
                if let FoundBy::Config(origin) = &inputs.nvcc.found_by {
                    return Err(super::release::Refused::NotNvcc { origin: origin.clone(), why: why.clone() }.into());
                }
                plan.warn(Note::ReleaseUnknown { why: why.to_string() })
            }
            Release::Unknown { why } => plan.warn(Note::ReleaseUnknown { why: why.to_string() }),
            Release::Newer { version, newest, .. } => {
                plan.note(Note::ReleaseNewer { version: *version, newest: *newest })
            }
            Release::Known { .. } => {}
        }
        let named = Named::of(&config.target);
        let (platform, cross) = target::resolve(&config.target, &named, &compat.platforms, release.version())?;
        if !cross && config.target.system.is_some() {
            plan.note(Note::TargetIsNative { platform: platform.name.clone() });
        }
        // Settings a native build never reads would otherwise look as if they chose its host compiler (issue 33).
        if !cross && config.target.host_compiler != HostCompilerConfig::default() {
            plan.note(Note::TargetHostCompilerUnused { platform: platform.name.clone() });
        }
        let capabilities = &config.gpu.capabilities;
        let jetson = |c| compat.capabilities.get(c).is_some_and(|info| info.is_jetson());
        // Only the capabilities the list names: `all` and `native` may stand for others.
        let named_only = capabilities.0.iter().all(|i| matches!(i, crate::compat::Item::One { .. }));
        let jetson_build =
            platform.jetson || (!capabilities.is_empty() && named_only && capabilities.named().all(jetson));
        let overrides = config.compat_data.iter().flat_map(|dir| crate::compat::FILES.iter().map(|f| dir.join(f)));
        let settings_files = inputs
            .config_file
            .map(Path::to_path_buf)
            .into_iter()
            .chain(overrides.filter(|f| probes.exists(f)))
            .collect();
        let output = invocation.output_file().map_or(64, |o| o.len() as u64);
        let source = invocation.inputs.iter().map(|i| i.len() as u64).max().unwrap_or(0);
        let arg_edge = ArgEdge::of(invocation, nvcc_process, optional_growth(output, source));
        Ok(Facts {
            arg_edge,
            invocation,
            release,
            platform,
            cross,
            jetson_build,
            named,
            settings_files,
            compat,
            probes,
            nvcc,
            scratch,
            nvcc_process,
            jobserver,
        })
    }
}
