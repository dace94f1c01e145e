//! GPU targets: the `gpu-targets` step (`requested`) resolves `[gpu] capabilities` and checks them against the NVCC
//! release and the target platform before any other step runs (`targets::targets_for`, the one way from a list to
//! targets); this `gpu` step adds them as `-gencode` flags and decides what to do with GPU target options the
//! command line already has (`[gpu] arch-flags`).

mod problems;
mod requested;
mod targets;

use crate::plan::model::codes;
use std::fmt;

pub use problems::{cannot_build, refused_pair, unknown_capability};
pub use requested::{requested_targets, GpuTargets, Requested};
pub use targets::{accepted_clause, forms_for, problem, resolve, targets_for, together, Against, Expansion};

use targets::{appended_refusal, pair_refused};

use super::facts::Facts;
use super::model::{Changes, GpuDecision};
use super::{edit, Step};
use crate::args::table::{GpuFlag, Spelled};
use crate::args::{Found, Given, Invocation, Phase, Role};
use crate::compat::Version;
use crate::compat::{Capability, Form};
use crate::config::{ArchFlags, Config, GpuConfig};
use crate::error::Result;

pub struct Gpu;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    /// No capabilities configured and no target given: nvcc's own default.
    NvccDefault {
        release: Version,
        default: Capability,
    },
    /// A release before the capability table begins.
    OlderThanTable {
        release: Version,
    },
    Respected {
        given: Given,
    },
    /// `-ptx`, `-cubin`, `-optix-ir` with several configured targets.
    OneFile {
        phase: Spelled,
        configured: Expansion,
    },
    /// The same, where the call then builds nvcc's default (a warning).
    OneFileBuildsDefault {
        phase: Spelled,
        configured: Expansion,
        default: Capability,
        example: Capability,
    },
    LtoOtherPhase {
        spelled: LtoAsked,
        /// The phase option, which such a call always has.
        phase: Option<Spelled>,
    },
    LtoAppendRefused {
        spelled: LtoAsked,
        given: Given,
    },
    /// Device LTO compiled and linked in one call for several targets (a warning).
    LtoOneCallSeveral {
        spelled: LtoAsked,
        configured: Expansion,
    },
    /// `native` in the list: what this machine's GPUs made it, which another machine would not.
    NativeTargets {
        targets: Expansion,
    },
}

/// How a call asks for device LTO, as messages name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LtoAsked {
    /// `-dlto`, `-lto`, as spelled.
    Flag(Spelled),
    /// Only by `code=lto_XY` in its own targets.
    Codes,
}

impl fmt::Display for LtoAsked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LtoAsked::Flag(flag) => write!(f, "`{flag}`"),
            LtoAsked::Codes => f.write_str("`code=lto_`"),
        }
    }
}

codes!(Note {
    NvccDefault => "nvcc-default",
    OlderThanTable => "older-than-table",
    Respected => "respected",
    OneFile => "one-file",
    OneFileBuildsDefault => "one-file-builds-default",
    LtoOtherPhase => "lto-other-phase",
    LtoAppendRefused => "lto-append-refused",
    LtoOneCallSeveral => "lto-one-call-several",
    NativeTargets => "native-targets",
});

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    Capabilities {
        configured: Expansion,
    },
    Appended {
        configured: Expansion,
        given: Given,
    },
    /// Why the user's targets are removed.
    Replaced {
        configured: Expansion,
    },
    InPlaceOfRemoved {
        configured: Expansion,
    },
    Lto {
        configured: Expansion,
        form: &'static str,
        spelled: LtoAsked,
    },
    /// Why `-dlto` is removed from a device-LTO compile.
    DltoNextToGencode {
        spelled: LtoAsked,
    },
}

codes!(Reason {
    Capabilities => "capabilities",
    Appended => "appended",
    Replaced => "replaced",
    InPlaceOfRemoved => "in-place-of-removed",
    Lto => "lto",
    DltoNextToGencode => "dlto-next-to-gencode",
});

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::NvccDefault { release, default } => write!(
                f,
                "no `[gpu] capabilities` and no GPU target given: nvcc {release} builds for its default, {default} ({} and {} PTX)",
                default.sm_name(),
                default.compute_name()
            ),
            Note::OlderThanTable { release } => write!(
                f,
                "nvcc {release} is older than the capability table: capabilities are checked only against the table"
            ),
            Note::Respected { given } => {
                write!(f, "GPU targets are given by {given}: nothing is added (`[gpu] arch-flags = \"respect\"`)")
            }
            Note::OneFile { phase, configured } => write!(
                f,
                "`{phase}` writes one file for one GPU target, and the configured ones are several ({configured}): no GPU targets are added or removed"
            ),
            Note::OneFileBuildsDefault { phase, configured, default, example } => write!(
                f,
                "{}; with no GPU target on the command line nvcc builds its default, {} (pass one target, such as -arch={})",
                Note::OneFile { phase: *phase, configured: configured.clone() },
                default.compute_name(),
                example.sm_name()
            ),
            Note::LtoOtherPhase { spelled, phase } => {
                match phase {
                    Some(phase) => write!(f, "{spelled} is given with `{phase}`")?,
                    None => write!(f, "{spelled} is given with a phase")?,
                }
                f.write_str(", whose output device LTO does not shape: no GPU targets are added or removed")
            }
            Note::LtoAppendRefused { spelled, given } => write!(
                f,
                "{spelled} is given with the GPU targets given by {given}, and nvcc refuses -gencode next to it: nothing is added (`[gpu] arch-flags = \"append\"`)"
            ),
            Note::LtoOneCallSeveral { spelled, configured } => write!(
                f,
                "{spelled} compiles and links in one call, where nvcc links device LTO for one GPU target only, and the configured ones are several ({configured}): nothing is added, so nvcc builds its default (compile with -dc, then link with -dlink {spelled})"
            ),
            Note::NativeTargets { targets } => write!(
                f,
                "`native` stands for this machine's GPUs (nvidia-smi), which makes the targets {targets}: another machine builds others, so the outputs are not the same from machine to machine (name the capabilities for that)"
            ),
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Capabilities { configured } => write!(f, "`[gpu] capabilities`: {configured}"),
            Reason::Appended { configured, given } => write!(
                f,
                "`[gpu] capabilities`: {configured}, added to the GPU targets given by {given} (`[gpu] arch-flags = \"append\"`)"
            ),
            Reason::Replaced { configured } => {
                write!(f, "`[gpu] arch-flags = \"replace\"`: `[gpu] capabilities` ({configured}) take its place")
            }
            Reason::InPlaceOfRemoved { configured } => {
                write!(f, "`[gpu] capabilities`: {configured} (in place of the removed GPU targets)")
            }
            Reason::Lto { configured, form, spelled } => {
                write!(f, "`[gpu] capabilities`: {configured}, as {form} ({spelled})")
            }
            Reason::DltoNextToGencode { spelled } => write!(
                f,
                "nvcc refuses {spelled} next to -gencode when it compiles; `code=lto_XY` asks for the same intermediates (device LTO with `[gpu] capabilities`)"
            ),
        }
    }
}

impl Step for Gpu {
    const NAME: &'static str = "gpu";
    type Section = GpuConfig;
    type Needs<'d> = Option<&'d Requested>;
    /// The targets it added, when it added any.
    type Decision = Option<GpuDecision>;

    fn section<'c>(config: &'c Config, _: &Facts) -> &'c Self::Section {
        &config.gpu
    }

    /// Add the requested targets (`GpuTargets`), under the `arch-flags` policy.
    fn decide(
        facts: &Facts,
        gpu: &GpuConfig,
        requested: Option<&Requested>,
        plan: &mut Changes,
    ) -> Result<Self::Decision> {
        let inv = facts.invocation;
        let Some(Requested { expansion, release }) = requested else {
            note_nvcc_default(facts, plan);
            return Ok(None);
        };
        let release = *release;
        let configured = expansion.clone();
        let given: Vec<&Found> = inv.gpu_targets().collect();
        if !given.is_empty() && *gpu.arch_flags == ArchFlags::Respect {
            plan.note(Note::Respected { given: inv.given(&given) });
            return Ok(None);
        }
        if let Some(lto) = DeviceLto::of(inv) {
            return decide_lto(facts, *gpu.arch_flags, plan, expansion, &given, lto, release);
        }
        if let Some(phase) = single_output_conflict(inv, expansion) {
            // With no target of its own the call falls back to nvcc's default architecture: say so, as it is not
            // what was configured.
            let default = given
                .is_empty()
                .then(|| facts.release.version().and_then(|r| facts.compat.capabilities.nvcc_default_arch(r)))
                .flatten();
            match default {
                Some(default) => {
                    let example = expansion.real.last().copied().unwrap_or(default);
                    plan.warn(Note::OneFileBuildsDefault { phase, configured, default, example })
                }
                None => plan.note(Note::OneFile { phase, configured }),
            }
            return Ok(None);
        }
        if *gpu.arch_flags == ArchFlags::Append {
            let form = if expansion.ptx.is_empty() { Form::Gencode } else { Form::GencodePtx };
            check_appended(facts, release, expansion, &given, form)?;
        }
        let flags: Vec<std::ffi::OsString> = expansion.gencode().into_iter().map(Into::into).collect();
        let decision = GpuDecision { targets: u32::try_from(flags.len()).unwrap_or(u32::MAX) };
        let why = match (given.is_empty(), *gpu.arch_flags) {
            (true, _) => Reason::Capabilities { configured },
            (false, ArchFlags::Append) => Reason::Appended { configured, given: inv.given(&given) },
            (false, _) => {
                edit::remove(plan, inv, &given, Reason::Replaced { configured: configured.clone() }, facts.scratch)?;
                Reason::InPlaceOfRemoved { configured }
            }
        };
        plan.add_before(flags, why);
        Ok(Some(decision))
    }
}

/// A call that asks for device link-time optimisation (see `DeviceLto`): the capabilities in the form its phase
/// takes, or a note or warning saying why nothing is added.
fn decide_lto(
    facts: &Facts,
    policy: ArchFlags,
    plan: &mut Changes,
    expansion: &Expansion,
    given: &[&Found],
    lto: DeviceLto,
    release: Option<Version>,
) -> Result<Option<GpuDecision>> {
    let inv = facts.invocation;
    let flags: Vec<&Found> = inv.with_role(Role::DeviceLto).collect();
    let spelled = flags.first().map_or(LtoAsked::Codes, |f| LtoAsked::Flag(f.spelling));
    let configured = expansion.clone();
    let append_to_given = !given.is_empty() && policy == ArchFlags::Append;
    let (args, form) = match lto {
        DeviceLto::Other => {
            let phase = inv.phase_option().map(|p| p.spelling);
            plan.note(Note::LtoOtherPhase { spelled, phase });
            return Ok(None);
        }
        DeviceLto::Link => (expansion.link_gencode(), "machine code linked from the objects' LTO intermediates"),
        // nvcc refuses `-dlto` next to `-gencode` when it compiles, so targets given by the user cannot take more:
        // appending would need the flag out and theirs reinterpreted.
        DeviceLto::Compile if append_to_given && !flags.is_empty() => {
            plan.note(Note::LtoAppendRefused { spelled, given: inv.given(given) });
            return Ok(None);
        }
        DeviceLto::Compile => (expansion.lto_gencode(), "device LTO intermediates (`code=lto_XY`)"),
        DeviceLto::CompileAndLink => match expansion.real.as_slice() {
            // nvcc's own one-target form: `-dlto -arch=sm_XY` keeps lto_XY and compute_XY, links sm_XY.
            [only] if !append_to_given => {
                (vec![format!("-arch={}", only.sm_name())], "nvcc's one-target device LTO form")
            }
            _ => {
                plan.warn(Note::LtoOneCallSeveral { spelled, configured });
                return Ok(None);
            }
        },
    };
    if append_to_given {
        let form = match lto {
            DeviceLto::Link => Form::LtoLink,
            _ if !expansion.ptx.is_empty() => Form::LtoPtx,
            _ => Form::Lto,
        };
        check_appended(facts, release, expansion, given, form)?;
    }
    if !given.is_empty() && policy == ArchFlags::Replace {
        edit::remove(plan, inv, given, Reason::Replaced { configured: configured.clone() }, facts.scratch)?;
    }
    if lto == DeviceLto::Compile && !flags.is_empty() {
        edit::remove(plan, inv, &flags, Reason::DltoNextToGencode { spelled }, facts.scratch)?;
    }
    let decision = GpuDecision { targets: u32::try_from(args.len()).unwrap_or(u32::MAX) };
    plan.add_before(args.into_iter().map(Into::into).collect(), Reason::Lto { configured, form, spelled });
    Ok(Some(decision))
}

/// Under `[gpu] arch-flags = "append"`, a configured capability that the release refuses next to a target the user
/// gave (combinations.toml) is an error before nvcc runs: nvcc alone would have built the user's targets, and the
/// fix is the config's.
fn check_appended(
    facts: &Facts,
    release: Option<Version>,
    expansion: &Expansion,
    given: &[&Found],
    form: Form,
) -> Result<()> {
    let Some(release) = release else { return Ok(()) };
    // With `-code` given, `-arch` names the virtual architecture only.
    let code_given = given.iter().any(|f| f.spec.role == Role::GpuTarget(GpuFlag::Code));
    for found in given {
        if code_given && found.spec.role == Role::GpuTarget(GpuFlag::Arch) {
            continue;
        }
        if let Some(refusal) = appended_refusal(facts.compat, release, &real_targets(found), expansion, form) {
            let what = format!("{} with {} from `[gpu] capabilities`", facts.invocation.given(&[found]), refusal.b);
            let help = format!(
                "drop {} from `[gpu] capabilities`, or set `[gpu] arch-flags = \"replace\"` (the configured targets in place of the given ones) or `\"respect\"` (the given ones alone)",
                refusal.b
            );
            return Err(pair_refused(release, &refusal, what, help).into());
        }
    }
    Ok(())
}

/// The machine-code targets a user's GPU target option names (`sm_XY`, and `lto_XY` as the same capability):
/// `-arch=sm_90`, `-code=sm_80,sm_86`, `-gencode arch=compute_90,code=[sm_90,lto_90]`. Virtual architectures,
/// `native`, `all` and anything unparsable name none, so they are never refused.
fn real_targets(found: &Found) -> Vec<Capability> {
    let Some(value) = found.value.as_deref().and_then(|v| v.to_str()) else { return Vec::new() };
    value
        .split(|c: char| matches!(c, ',' | '=' | '[' | ']' | '"' | '\'') || c.is_whitespace())
        .filter_map(|word| word.strip_prefix("sm_").or_else(|| word.strip_prefix("lto_")))
        .filter_map(|number| format!("sm_{number}").parse().ok())
        .collect()
}

/// With no capabilities configured and no GPU target given, nvcc builds its own default: say which, since a build
/// for the wrong GPU fails only when it runs ("no kernel image is available").
fn note_nvcc_default(facts: &Facts, plan: &mut Changes) {
    let inv = facts.invocation;
    if inv.gpu_targets().next().is_some() || inv.with_role(Role::DeviceLto).next().is_some() {
        return;
    }
    let Some(release) = facts.release.version() else { return };
    if let Some(default) = facts.compat.capabilities.nvcc_default_arch(release) {
        plan.note(Note::NvccDefault { release: release.release(), default });
    }
}

/// The release GPU targets are checked against: `None` for one older than the capability table begins, where
/// nothing is known to check (the drop-in says so; `gencode` passes the list as given, as the drop-in does).
pub fn checkable(release: Version, compat: &crate::compat::Compat) -> Option<Version> {
    let oldest = compat.capabilities.all().iter().map(|c| c.first_cuda).min()?;
    (release.release() >= oldest.release()).then_some(release)
}

/// How a call that asks for device link-time optimisation takes GPU targets. Measured with nvcc 12.4 and 13.0
/// (docs/nvcc-facts.md#device-link-time-optimisation): compiling with `-dlto` next to `-gencode` is refused
/// ("'-dlto' conflicts with '-gencode'"), while `code=lto_XY` stores the same intermediate; a device link takes
/// `-dlto` with `code=sm_XY` targets, and without `-dlto` fails ("LTO objects found, use -dlto"); one call that
/// compiles and links cannot name several targets (nvlink gets `--arch=lto_XY`, "not JIT-able"), only `-dlto
/// -arch=sm_XY`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DeviceLto {
    /// Sources to objects or a library (`-c`, `-dc`, `-lib`): the capabilities as `code=lto_XY`, `-dlto` out.
    Compile,
    /// A device link (`-dlink`), or a link of objects only: the capabilities as `code=sm_XY`, `-dlto` kept.
    Link,
    /// Sources compiled and linked in one call.
    CompileAndLink,
    /// Any other phase (`-E`, `-ptx`, `-ltoir`...): nothing added.
    Other,
}

impl DeviceLto {
    /// `Some` when the call asks for device LTO: `-dlto`/`-lto` anywhere, or (when compiling) given `lto_` codes.
    fn of(inv: &Invocation) -> Option<DeviceLto> {
        let shape = match inv.phase() {
            Phase::Compile | Phase::Lib => DeviceLto::Compile,
            Phase::DeviceLink => DeviceLto::Link,
            Phase::Link | Phase::Run if inv.compiles_sources() => DeviceLto::CompileAndLink,
            Phase::Link | Phase::Run => DeviceLto::Link,
            Phase::Preprocess | Phase::DeviceOnly => DeviceLto::Other,
        };
        let flag = inv.with_role(Role::DeviceLto).next().is_some();
        (flag || (inv.names_lto_codes() && shape == DeviceLto::Compile)).then_some(shape)
    }
}

/// `-ptx`, `-optix-ir` and `-cubin` write one file, and nvcc refuses them with several targets (measured on 13.0:
/// "not allowed when compiling for multiple GPU architectures" / "... code instances"). When the configured targets
/// would be several, nothing is added and nothing removed: the call keeps the targets it has. The phase option's
/// spelling when that is so.
fn single_output_conflict(inv: &Invocation, expansion: &Expansion) -> Option<Spelled> {
    let phase = inv.phase_option()?;
    let fits = match phase.spec.long {
        "ptx" | "optix-ir" => expansion.virtual_archs().len() == 1,
        "cubin" => expansion.real.len() == 1 && expansion.ptx.is_empty(),
        _ => return None,
    };
    (!fits).then_some(phase.spelling)
}
