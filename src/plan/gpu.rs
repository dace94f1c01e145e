//! GPU targets: turning `[gpu] capabilities` into `-gencode` flags, checking them against the NVCC release and
//! the target platform, and deciding what to do with GPU target options the command line already has
//! (`[gpu] arch-flags`). The expansion and the check are pure functions that `nvcc-wrapper gencode` shares.
//!
//! The expansion rule:
//! - one `-gencode=arch=compute_XY,code=sm_XY` per capability, suffix kept (`compute_90a`/`sm_90a`), sorted by
//!   capability and without duplicates, always joined with `=` (ccache and sccache read a separate value as an
//!   input file);
//! - with forward compatibility, one more, `-gencode=arch=compute_N,code=compute_N`: PTX for the baseline (suffix
//!   dropped) of the highest capability, as nvcc's own `-arch=sm_90a` embeds `compute_90`. PTX of an `a` or `f`
//!   target runs only on that architecture or family, so it would not be forward compatible at all. (Nixpkgs takes
//!   the PTX from the last capability as written, suffix and all.)

use std::collections::BTreeSet;

use super::host_compiler::is_host_compiled;
use super::target::Named;
use super::{edit, Addition, Plan};
use crate::args::{Found, Invocation, Phase, Role};
use crate::compat::{Capability, CapabilityInfo, Compat, Platform};
use crate::config::{ArchFlags, GpuConfig};
use crate::error::{Error, ErrorKind, Result};
use crate::version::Version;

/// What a capability list becomes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expansion {
    /// Machine code for each, sorted, no duplicates.
    pub real: Vec<Capability>,
    /// Forward-compatible PTX: a baseline capability, when asked for.
    pub ptx: Option<Capability>,
}

/// Apply the rule (see the module header).
pub fn expand(capabilities: &[Capability], forward_compat: bool) -> Expansion {
    let real: Vec<Capability> = capabilities.iter().copied().collect::<BTreeSet<_>>().into_iter().collect();
    let ptx = if forward_compat { real.last().map(|c| c.baseline()) } else { None };
    Expansion { real, ptx }
}

impl Expansion {
    /// The nvcc flags, machine code first, then the PTX.
    pub fn gencode(&self) -> Vec<String> {
        self.flags(Capability::sm_name, true)
    }

    /// For a device-LTO compile: the intermediate (`code=lto_XY`) in place of machine code, then the PTX.
    pub fn lto_gencode(&self) -> Vec<String> {
        self.flags(Capability::lto_name, true)
    }

    /// For a device-LTO link: machine code only (nvlink makes it from the objects' intermediates; a PTX target there
    /// adds nothing, measured on 12.4 and 13.0).
    pub fn link_gencode(&self) -> Vec<String> {
        self.flags(Capability::sm_name, false)
    }

    fn flags(&self, code: fn(Capability) -> String, with_ptx: bool) -> Vec<String> {
        let real = self.real.iter().map(|c| format!("-gencode=arch={},code={}", c.compute_name(), code(*c)));
        let ptx = self.ptx.iter().filter(|_| with_ptx).map(|c| format!("-gencode=arch={0},code={0}", c.compute_name()));
        real.chain(ptx).collect()
    }

    /// CMake's `CUDA_ARCHITECTURES` value: `86-real;90a-real;90-virtual`.
    pub fn cmake(&self) -> String {
        let compact = |c: &Capability| c.sm_name().trim_start_matches("sm_").to_string();
        let real = self.real.iter().map(|c| format!("{}-real", compact(c)));
        let ptx = self.ptx.iter().map(|c| format!("{}-virtual", compact(c)));
        real.chain(ptx).collect::<Vec<_>>().join(";")
    }

    /// The virtual architectures (`arch=` values) the flags compile for.
    pub fn virtual_archs(&self) -> BTreeSet<Capability> {
        self.real.iter().chain(&self.ptx).copied().collect()
    }

    /// One line for reasons and notes: `8.6, 9.0a, with forward-compatible PTX of 9.0`.
    pub fn describe(&self) -> String {
        let list: Vec<String> = self.real.iter().map(|c| c.to_string()).collect();
        match self.ptx {
            Some(p) => format!("{}, with forward-compatible PTX of {p}", list.join(", ")),
            None => list.join(", "),
        }
    }
}

/// What the capabilities are checked against: always the table; the release and the target platform when known.
pub struct Against<'a> {
    pub compat: &'a Compat,
    pub release: Option<Version>,
    pub platform: Option<&'a Platform>,
    /// How the user gives the target settings, for the help line.
    pub named: &'a Named,
}

/// Check every capability of an expansion (the PTX one too); one error listing every problem, with what would be
/// accepted instead.
pub fn check(expansion: &Expansion, against: &Against) -> Result<()> {
    let table = &against.compat.capabilities;
    let mut problems = Vec::new();
    let mut help = Vec::new();
    let ptx = expansion.ptx.filter(|p| !expansion.real.contains(p));
    for (cap, for_ptx) in expansion.real.iter().map(|c| (*c, false)).chain(ptx.map(|p| (p, true))) {
        let what = if for_ptx { format!("{cap} (for forward-compatible PTX)") } else { cap.to_string() };
        let Some(info) = table.get(cap) else {
            problems.push(format!("{what} is not a known GPU capability"));
            continue;
        };
        if let Some(release) = against.release {
            if !info.accepted_by(release) {
                problems.push(match info.last_cuda {
                    Some(last) if release.release() > last.release() => {
                        format!("{what} was last accepted by nvcc {last}")
                    }
                    _ => format!("{what} needs nvcc {} or later", info.first_cuda),
                });
                continue;
            }
        }
        if let Some(platform) = against.platform {
            if let Some(problem) = platform_problem(against, platform, info, &mut help) {
                problems.push(problem);
            }
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    let accepted = accepted(against);
    let message = match against.release {
        Some(release) => format!("nvcc {} cannot build these GPU targets: {}", release.release(), problems.join("; ")),
        None => format!("cannot build these GPU targets: {}", problems.join("; ")),
    };
    let scope = match (against.release, against.platform) {
        (Some(r), Some(p)) => format!("nvcc {} accepts, for {}: ", r.release(), describe_platform(p)),
        (Some(r), None) => format!("nvcc {} accepts: ", r.release()),
        (None, Some(p)) => format!("known capabilities for {}: ", describe_platform(p)),
        (None, None) => "known capabilities: ".to_string(),
    };
    help.insert(0, format!("{scope}{}", if accepted.is_empty() { "none".to_string() } else { accepted.join(", ") }));
    Err(Error::new(ErrorKind::Request, message).with_help(help.join("; ")))
}

/// Why `info` cannot be built for `platform`, if it cannot; adds the `[target]` settings that would make it valid.
fn platform_problem(
    against: &Against,
    platform: &Platform,
    info: &CapabilityInfo,
    help: &mut Vec<String>,
) -> Option<String> {
    let platforms = &against.compat.platforms;
    // With the release unknown, judge as the newest releases do (the served-by rows only ever add parts).
    let release = against.release.unwrap_or(Version::new(u32::MAX, 0, 0));
    if platforms.allows(platform, info, release) {
        return None;
    }
    let cap = info.capability;
    match &info.jetson_part {
        Some(part) => {
            let valid: Vec<String> = platforms
                .all()
                .iter()
                .filter(|p| platforms.allows(p, info, release) && against.release.map_or(true, |r| p.shipped_in(r)))
                .map(|p| against.named.settings_for(p))
                .collect();
            if valid.is_empty() {
                help.push(format!("no target platform of nvcc {} serves Jetson {part}", release.release()));
            } else {
                help.push(format!("to build for Jetson {part}, {}", against.named.how_to_set(&valid.join(", or "))));
            }
            Some(format!("{cap} is Jetson {part}, which the target {} is not", describe_platform(platform)))
        }
        None => Some(format!(
            "{cap} is not a Jetson capability, and the target {} takes only Jetson capabilities",
            describe_platform(platform)
        )),
    }
}

/// What would be accepted, for the error's help line.
fn accepted(against: &Against) -> Vec<String> {
    let release = against.release.unwrap_or(Version::new(u32::MAX, 0, 0));
    against
        .compat
        .capabilities
        .all()
        .iter()
        .filter(|info| against.release.map_or(true, |r| info.accepted_by(r)))
        .filter(|info| against.platform.map_or(true, |p| against.compat.platforms.allows(p, info, release)))
        .map(|info| info.capability.to_string())
        .collect()
}

fn describe_platform(platform: &Platform) -> String {
    if platform.jetson {
        format!("{} (Jetson)", platform.name)
    } else {
        platform.name.to_string()
    }
}

/// What the planner knows about this call, for the GPU step.
pub struct Step<'a> {
    pub invocation: &'a Invocation,
    /// Where an options file rewritten under `replace` is written.
    pub scratch: &'a std::path::Path,
    pub gpu: &'a GpuConfig,
    pub compat: &'a Compat,
    /// The NVCC release, or why it is unknown.
    pub release: std::result::Result<Version, String>,
    /// The target platform, as the planner resolved it from `[target]`.
    pub platform: &'a Platform,
    /// How the target settings are spelled, for help lines.
    pub named: &'a Named,
}

impl Step<'_> {
    /// Add the configured targets, under the `arch-flags` policy; errors when they cannot be built.
    pub fn decide(&self, plan: &mut Plan) -> Result<()> {
        let inv = self.invocation;
        let gpu = self.gpu;
        if gpu.capabilities.is_empty() {
            self.note_nvcc_default(plan);
            return Ok(());
        }
        let expansion = expand(&gpu.capabilities, gpu.forward_compat);
        let release = self.release(plan);
        // Checked on every call, even one that gets nothing added: a configuration this nvcc cannot build is wrong
        // for the whole build, and one clear error beats some calls passing and others failing.
        let against = Against { compat: self.compat, release, platform: Some(self.platform), named: self.named };
        check(&expansion, &against)?;

        let given: Vec<&Found> = inv.gpu_targets().collect();
        if !given.is_empty() && gpu.arch_flags == ArchFlags::Respect {
            plan.notes.push(format!(
                "GPU targets are given by {}: nothing is added (`[gpu] arch-flags = \"respect\"`)",
                describe_given(inv, &given)
            ));
            return Ok(());
        }
        if let Some(lto) = DeviceLto::of(inv, &given) {
            return self.decide_lto(plan, &expansion, &given, lto);
        }
        if let Some(why) = single_output_conflict(inv, &expansion) {
            // With no target of its own the call falls back to nvcc's default architecture: say so, as it is not
            // what was configured.
            let fallback = given
                .is_empty()
                .then(|| self.release.as_ref().ok().and_then(|r| self.compat.capabilities.nvcc_default_arch(*r)))
                .flatten();
            match fallback {
                Some(default) => plan.warnings.push(format!(
                    "{why}; with no GPU target on the command line nvcc builds its default, {} (pass one target, such as -arch={})",
                    default.compute_name(),
                    expansion.real.last().map_or(default.sm_name(), |c| c.sm_name())
                )),
                None => plan.notes.push(why),
            }
            return Ok(());
        }
        let flags = expansion.gencode();
        let reason = match (given.is_empty(), gpu.arch_flags) {
            (true, _) => format!("`[gpu] capabilities`: {}", expansion.describe()),
            (false, ArchFlags::Append) => format!(
                "`[gpu] capabilities`: {}, added to the GPU targets given by {} (`[gpu] arch-flags = \"append\"`)",
                expansion.describe(),
                describe_given(inv, &given)
            ),
            (false, _) => {
                let why = format!(
                    "`[gpu] arch-flags = \"replace\"`: `[gpu] capabilities` ({}) take its place",
                    expansion.describe()
                );
                edit::remove(plan, inv, &given, &why, self.scratch)?;
                format!("`[gpu] capabilities`: {} (in place of the removed GPU targets)", expansion.describe())
            }
        };
        plan.before.push(Addition { args: flags.into_iter().map(Into::into).collect(), reason });
        Ok(())
    }

    /// A call that asks for device link-time optimisation (see `DeviceLto`): the capabilities in the form its phase
    /// takes, or a note or warning saying why nothing is added.
    fn decide_lto(&self, plan: &mut Plan, expansion: &Expansion, given: &[&Found], lto: DeviceLto) -> Result<()> {
        let inv = self.invocation;
        let flags: Vec<&Found> = inv.with_role(Role::DeviceLto).collect();
        let spelled = flags.first().map_or("`code=lto_`".to_string(), |f| format!("`{}`", f.spelling));
        let append_to_given = !given.is_empty() && self.gpu.arch_flags == ArchFlags::Append;
        let (args, form) = match lto {
            DeviceLto::Other => {
                plan.notes.push(format!(
                    "{spelled} is given with `{}`, whose output device LTO does not shape: no GPU targets are added or removed",
                    inv.phase_option().map_or(String::new(), |p| p.spelling.to_string())
                ));
                return Ok(());
            }
            DeviceLto::Link => (expansion.link_gencode(), "machine code linked from the objects' LTO intermediates"),
            // nvcc refuses `-dlto` next to `-gencode` when it compiles, so targets given by the user cannot take
            // more: appending would need the flag out and theirs reinterpreted.
            DeviceLto::Compile if append_to_given && !flags.is_empty() => {
                plan.notes.push(format!(
                    "{spelled} is given with the GPU targets given by {}, and nvcc refuses -gencode next to it: nothing is added (`[gpu] arch-flags = \"append\"`)",
                    describe_given(inv, given)
                ));
                return Ok(());
            }
            DeviceLto::Compile => (expansion.lto_gencode(), "device LTO intermediates (`code=lto_XY`)"),
            DeviceLto::CompileAndLink => match expansion.real.as_slice() {
                // nvcc's own one-target form: `-dlto -arch=sm_XY` keeps lto_XY and compute_XY, links sm_XY.
                [only] if !append_to_given => {
                    (vec![format!("-arch={}", only.sm_name())], "nvcc's one-target device LTO form")
                }
                _ => {
                    plan.warnings.push(format!(
                        "{spelled} compiles and links in one call, where nvcc links device LTO for one GPU target only, and the configured ones are several ({}): nothing is added, so nvcc builds its default (compile with -dc, then link with -dlink {spelled})",
                        expansion.describe()
                    ));
                    return Ok(());
                }
            },
        };
        if !given.is_empty() && self.gpu.arch_flags == ArchFlags::Replace {
            let why = format!(
                "`[gpu] arch-flags = \"replace\"`: `[gpu] capabilities` ({}) take its place",
                expansion.describe()
            );
            edit::remove(plan, inv, given, &why, self.scratch)?;
        }
        if lto == DeviceLto::Compile && !flags.is_empty() {
            let why = format!(
                "nvcc refuses {spelled} next to -gencode when it compiles; `code=lto_XY` asks for the same intermediates (device LTO with `[gpu] capabilities`)"
            );
            edit::remove(plan, inv, &flags, &why, self.scratch)?;
        }
        let reason = format!("`[gpu] capabilities`: {}, as {form} ({spelled})", expansion.describe());
        plan.before.push(Addition { args: args.into_iter().map(Into::into).collect(), reason });
        Ok(())
    }

    /// With no capabilities configured and no GPU target given, nvcc builds its own default: say which, since a
    /// build for the wrong GPU fails only when it runs ("no kernel image is available").
    fn note_nvcc_default(&self, plan: &mut Plan) {
        if self.invocation.gpu_targets().next().is_some() || self.invocation.with_role(Role::DeviceLto).next().is_some()
        {
            return;
        }
        let Ok(release) = &self.release else { return };
        if let Some(default) = self.compat.capabilities.nvcc_default_arch(*release) {
            plan.notes.push(format!(
                "no `[gpu] capabilities` and no GPU target given: nvcc {} builds for its default, {default} ({} and {} PTX)",
                release.release(),
                default.sm_name(),
                default.compute_name()
            ));
        }
    }

    /// The release to check against, or `None` (with a note) when it is unknown or older than the table.
    fn release(&self, plan: &mut Plan) -> Option<Version> {
        let oldest = self.compat.capabilities.all().iter().map(|c| c.first_cuda).min()?;
        match &self.release {
            Ok(v) if v.release() >= oldest.release() => Some(*v),
            Ok(v) => {
                plan.notes.push(format!(
                    "nvcc {v} is older than the capability table: capabilities are checked only against the table"
                ));
                None
            }
            Err(e) => {
                plan.notes.push(format!(
                    "the NVCC release is unknown ({e}): capabilities are checked only against the table; set `cuda-version` in the config"
                ));
                None
            }
        }
    }
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
    fn of(inv: &Invocation, given: &[&Found]) -> Option<DeviceLto> {
        let sources = inv.inputs.iter().any(|i| is_host_compiled(i));
        let shape = match inv.phase() {
            Phase::Compile | Phase::Lib => DeviceLto::Compile,
            Phase::DeviceLink => DeviceLto::Link,
            Phase::Link | Phase::Run if sources => DeviceLto::CompileAndLink,
            Phase::Link | Phase::Run => DeviceLto::Link,
            Phase::Preprocess | Phase::DeviceOnly => DeviceLto::Other,
        };
        let flag = inv.with_role(Role::DeviceLto).next().is_some();
        let lto_codes = given.iter().any(|f| f.value.as_deref().is_some_and(|v| v.to_string_lossy().contains("lto_")));
        (flag || (lto_codes && shape == DeviceLto::Compile)).then_some(shape)
    }
}

/// `-ptx`, `-optix-ir` and `-cubin` write one file, and nvcc refuses them with several targets (measured on 13.0:
/// "not allowed when compiling for multiple GPU architectures" / "... code instances"). When the configured
/// targets would be several, nothing is added and nothing removed: the call keeps the targets it has.
fn single_output_conflict(inv: &Invocation, expansion: &Expansion) -> Option<String> {
    let phase = inv.phase_option()?;
    let fits = match phase.spec.long {
        "ptx" | "optix-ir" => expansion.virtual_archs().len() == 1,
        "cubin" => expansion.real.len() == 1 && expansion.ptx.is_none(),
        _ => return None,
    };
    (!fits).then(|| {
        format!(
            "`{}` writes one file for one GPU target, and the configured ones are several ({}): no GPU targets are added or removed",
            phase.spelling,
            expansion.describe()
        )
    })
}

/// `` `-arch sm_80` in the command line, `-gencode=...` in $NVCC_APPEND_FLAGS ``.
fn describe_given(inv: &Invocation, given: &[&Found]) -> String {
    given
        .iter()
        .map(|f| {
            let value = f.value.as_deref().map(|v| format!(" {}", v.to_string_lossy())).unwrap_or_default();
            format!("`{}{value}` in {}", f.spelling, f.at.channel.describe(inv))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(list: &str) -> Vec<Capability> {
        Capability::parse_list(list).unwrap()
    }

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    #[test]
    fn expansion_rows() {
        // (capabilities, forward compat, flags, CMake value)
        let rows: &[(&str, bool, &[&str], &str)] = &[
            ("8.6", false, &["-gencode=arch=compute_86,code=sm_86"], "86-real"),
            (
                "8.6",
                true,
                &["-gencode=arch=compute_86,code=sm_86", "-gencode=arch=compute_86,code=compute_86"],
                "86-real;86-virtual",
            ),
            // Sorted, duplicates (in any spelling) once.
            (
                "9.0 sm_86 86 8.0",
                false,
                &[
                    "-gencode=arch=compute_80,code=sm_80",
                    "-gencode=arch=compute_86,code=sm_86",
                    "-gencode=arch=compute_90,code=sm_90",
                ],
                "80-real;86-real;90-real",
            ),
            // The PTX is the baseline of the highest capability, never an a/f one.
            (
                "9.0a;8.6",
                true,
                &[
                    "-gencode=arch=compute_86,code=sm_86",
                    "-gencode=arch=compute_90a,code=sm_90a",
                    "-gencode=arch=compute_90,code=compute_90",
                ],
                "86-real;90a-real;90-virtual",
            ),
            (
                "10.0f,12.0a,10.0a",
                true,
                &[
                    "-gencode=arch=compute_100a,code=sm_100a",
                    "-gencode=arch=compute_100f,code=sm_100f",
                    "-gencode=arch=compute_120a,code=sm_120a",
                    "-gencode=arch=compute_120,code=compute_120",
                ],
                "100a-real;100f-real;120a-real;120-virtual",
            ),
            ("9.0a", false, &["-gencode=arch=compute_90a,code=sm_90a"], "90a-real"),
        ];
        for (list, fc, flags, cmake) in rows {
            let e = expand(&caps(list), *fc);
            assert_eq!(e.gencode(), *flags, "{list} fc={fc}");
            assert_eq!(e.cmake(), *cmake, "{list} fc={fc}");
        }
        assert_eq!(expand(&[], true), Expansion { real: vec![], ptx: None });
    }

    fn check_with(list: &str, fc: bool, release: Option<&str>, platform: Option<&str>) -> Result<()> {
        let compat = Compat::built_in();
        let platform = platform.map(|p| compat.platforms.get(p).unwrap());
        let named = Named::config(&crate::config::Source::default());
        let against = Against { compat: &compat, release: release.map(v), platform, named: &named };
        check(&expand(&caps(list), fc), &against)
    }

    #[test]
    fn accepted_sets_pass() {
        let rows: &[(&str, Option<&str>, Option<&str>)] = &[
            ("8.6;9.0a", Some("12.4.131"), Some("x86_64-linux")),
            ("8.6;9.0a;10.0f;12.0a", Some("13.0"), Some("x86_64-linux")),
            ("7.0;8.6", Some("11.8"), Some("x86_64-linux")),
            ("12.1a", Some("13.5"), Some("x86_64-linux")),
            ("8.7", Some("12.4"), Some("aarch64-linux")),
            ("8.7;9.0", Some("13.2"), Some("sbsa-linux")),
            ("11.0f", Some("13.0"), Some("sbsa-linux")),
            // No release: only the table; no platform: no platform rule.
            ("3.5;8.7;12.1f", None, None),
        ];
        for (list, release, platform) in rows {
            for fc in [false, true] {
                check_with(list, fc, *release, *platform).unwrap_or_else(|e| panic!("{list} {release:?}: {e}"));
            }
        }
    }

    #[test]
    fn each_problem_is_named_with_what_is_accepted() {
        // (capabilities, release, platform, in the message, in the help)
        type Row<'a> = (&'a str, Option<&'a str>, Option<&'a str>, &'a [&'a str], &'a [&'a str]);
        let rows: &[Row] = &[
            (
                "8.6;9.0a",
                Some("11.8.89"),
                Some("x86_64-linux"),
                &["nvcc 11.8 cannot build", "9.0a needs nvcc 12.0 or later"],
                &["nvcc 11.8 accepts, for x86_64-linux: 3.5, 3.7, 5.0, 5.2, 6.0, 6.1, 7.0, 7.5, 8.0, 8.6, 8.9, 9.0"],
            ),
            ("10.1", Some("13.0"), None, &["10.1 was last accepted by nvcc 12.9"], &["nvcc 13.0 accepts: 7.5,"]),
            ("7.0;8.6", Some("13.5"), None, &["7.0 was last accepted by nvcc 12.9"], &[]),
            ("9.5", Some("13.0"), None, &["9.5 is not a known GPU capability"], &[]),
            ("9.5", None, None, &["cannot build these GPU targets: 9.5 is not"], &["known capabilities: 3.5,"]),
            (
                "8.6;8.7",
                Some("12.4"),
                Some("x86_64-linux"),
                &["8.7 is Jetson Orin, which the target x86_64-linux is not"],
                &["to build for Jetson Orin, set `[target] system = \"aarch64-linux\"` and `platform = \"jetson\"` in the config"],
            ),
            (
                "8.7",
                Some("13.2"),
                Some("x86_64-linux"),
                &["8.7 is Jetson Orin"],
                &["set `[target] system = \"aarch64-linux\"` and `platform = \"sbsa\"` in the config"],
            ),
            ("8.7", Some("13.0"), Some("x86_64-linux"), &["8.7 is Jetson Orin"], &["no target platform of nvcc 13.0 serves Jetson Orin"]),
            (
                "8.6;8.7",
                Some("12.4"),
                Some("aarch64-linux"),
                &["8.6 is not a Jetson capability, and the target aarch64-linux (Jetson) takes only Jetson capabilities"],
                &["nvcc 12.4 accepts, for aarch64-linux (Jetson): 5.3, 6.2, 7.2, 8.7"],
            ),
        ];
        for (list, release, platform, message, help) in rows {
            let err = check_with(list, false, *release, *platform).unwrap_err();
            assert_eq!(err.kind, ErrorKind::Request);
            for m in *message {
                assert!(err.message.contains(m), "{list} {release:?}: {m:?} not in {}", err.message);
            }
            let got = err.help.unwrap();
            for h in *help {
                assert!(got.contains(h), "{list} {release:?}: {h:?} not in {got}");
            }
        }
    }
}
