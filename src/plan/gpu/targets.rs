//! The expansion rule and the check, as pure functions over the tables: what a capability list becomes, and
//! whether an NVCC release and a target platform can build it. The drop-in's GPU step, `gencode` and the Nix side's
//! evaluation-time check all decide by these.
//!
//! The expansion rule, once a list's words are read (`compat::TargetList`: what `8.6`, `8.6+PTX`, `86-real`,
//! `compute_90` mean in their dialects) and its keywords resolved (`resolve`: `all`, `all-major`, `native`):
//! - one `-gencode=arch=compute_XY,code=sm_XY` per machine-code capability, suffix kept (`compute_90a`/`sm_90a`),
//!   sorted by capability and without duplicates, always joined with `=` (ccache and sccache read a separate value
//!   as an input file);
//! - then one `-gencode=arch=compute_XY,code=compute_XY` per PTX capability, sorted;
//! - with forward compatibility, PTX for the baseline (suffix dropped) of the highest capability too, as nvcc's own
//!   `-arch=sm_90a` embeds `compute_90`. PTX of an `a` or `f` target runs only on that architecture or family, so it
//!   would not be forward compatible at all. (Nixpkgs takes the PTX from the last capability as written, suffix and
//!   all.)
//!
//! The check: every capability must be known, accepted by the release and buildable for the target platform
//! (capabilities.toml, platforms.toml), and no two may be a pair the release refuses together in a form the build
//! may use (combinations.toml): a list is built by compiles, device-LTO compiles and device-LTO links alike, so it
//! must pass in each. Refused, never folded: NVIDIA documents no rule for which of the two a build means.

use std::collections::BTreeSet;
use std::fmt;

use crate::compat::Version;
use crate::compat::{
    Capability, CapabilityInfo, Compat, Form, Item, Platform, Refusal, TargetList, Targets, Unresolved,
};
use crate::error::{Error, Result};

use super::problems::{Problem, Refused, Target};
use crate::plan::target::Named;

/// What a capability list becomes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expansion {
    /// Machine code for each, sorted, no duplicates.
    pub real: Vec<Capability>,
    /// PTX for each, sorted, no duplicates: those the list asks for, and the forward-compatible one.
    pub ptx: Vec<Capability>,
}

/// What a list's keywords stand for: `all` and `all-major` for `release` as nvcc defines them (from the capability
/// table), less what the target platform cannot run (nvcc's `-arch=all` on x86_64 also builds Jetson's 8.7, which
/// the check would refuse), with the PTX of the newest major the platform keeps; `native` for this machine's GPUs
/// (`gpus`; refused in a Nix build, whose output must not depend on the machine that builds it). Errors name the
/// word and what to write instead.
pub fn resolve(
    list: &TargetList,
    compat: &Compat,
    release: Option<Version>,
    platform: Option<&Platform>,
    nix_build: bool,
    gpus: impl FnOnce() -> std::result::Result<Vec<Capability>, String>,
) -> Result<Targets> {
    // Only a list that names `all` or `all-major` needs the release's sets: every other call skips the table walk.
    let keywords = list.has(Item::All) || list.has(Item::AllMajor);
    let sets = release.filter(|_| keywords).and_then(|r| {
        let (all, major, _) = compat.capabilities.nvcc_all(r)?;
        let runs = |c: &Capability| {
            platform
                .map_or(true, |p| compat.capabilities.get(*c).is_some_and(|info| compat.platforms.allows(p, info, r)))
        };
        let (all, major): (Vec<_>, Vec<_>) =
            (all.into_iter().filter(runs).collect(), major.into_iter().filter(runs).collect());
        // PTX of the newest major, as nvcc embeds; for a platform with no major of its own (a Jetson), the newest.
        let ptx = major.iter().rev().find(|c| c.minor == 0).or(major.last()).or(all.last()).copied();
        Some((all, major, ptx))
    });
    let gpus = || {
        if nix_build {
            Err("this is a Nix build, whose output must not depend on the machine that builds it".into())
        } else {
            gpus()
        }
    };
    Targets::resolve(list, sets, gpus).map_err(|e| {
        let platform = || platform.map_or_else(|| "the target".to_string(), |p| p.name.to_string());
        Error::from(match e {
            Unresolved::NoRelease(word) => Refused::NeedsRelease { word },
            Unresolved::NoneOnPlatform(word) => Refused::NoneOnPlatform { word, release, platform: platform() },
            Unresolved::NoGpus(why) => Refused::NoGpus { why },
        })
    })
}

/// Apply the rule (see the module header).
pub fn expand(targets: &Targets, forward_compat: bool) -> Expansion {
    let real: Vec<Capability> = targets.sass.iter().copied().collect();
    let mut ptx = targets.ptx.clone();
    if forward_compat {
        ptx.extend(real.last().or(targets.ptx.last()).map(|c| c.baseline()));
    }
    Expansion { real, ptx: ptx.into_iter().collect() }
}

/// `expand` of a plain list of capabilities (machine code for each), for tests.
#[cfg(test)]
pub fn expand_capabilities(capabilities: &[Capability], forward_compat: bool) -> Expansion {
    let list =
        TargetList(capabilities.iter().map(|&capability| Item::One { capability, sass: true, ptx: false }).collect());
    let targets = Targets::resolve(&list, None, || Ok(Vec::new())).expect("a list without keywords resolves");
    expand(&targets, forward_compat)
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

    /// The targets again, for exports that read them back (`torch`).
    pub fn targets(&self) -> Targets {
        Targets { sass: self.real.iter().copied().collect(), ptx: self.ptx.iter().copied().collect() }
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
}

/// `8.6, 9.0a, with forward-compatible PTX of 9.0`: what the list builds, for messages.
impl fmt::Display for Expansion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |caps: &[Capability]| caps.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(", ");
        let kind = if self.ptx.iter().all(|p| p.suffix.is_none()) { "forward-compatible PTX" } else { "PTX" };
        match (self.real.is_empty(), self.ptx.is_empty()) {
            (_, true) => f.write_str(&list(&self.real)),
            (true, false) => write!(f, "{kind} of {}", list(&self.ptx)),
            (false, false) => write!(f, "{}, with {kind} of {}", list(&self.real), list(&self.ptx)),
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

/// The GPU targets a list asks for, for a release and platform (`against`): its keywords resolved (`resolve`),
/// expanded with forward-compatible PTX when asked (`expand`), and checked (`check`). The one way from a list to
/// targets: the drop-in (`GpuTargets`), `gencode` and the Nix answers all ask it.
pub fn targets_for(
    list: &TargetList,
    forward_compat: bool,
    against: &Against,
    nix_build: bool,
    gpus: impl FnOnce() -> std::result::Result<Vec<Capability>, String>,
) -> Result<Expansion> {
    let targets = resolve(list, against.compat, against.release, against.platform, nix_build, gpus)?;
    let expansion = expand(&targets, forward_compat);
    check(&expansion, against)?;
    Ok(expansion)
}

/// Check every capability of an expansion (the PTX one too), then its pairs; one error listing every problem, with
/// what would be accepted instead.
fn check(expansion: &Expansion, against: &Against) -> Result<()> {
    let ptx = expansion.ptx.iter().filter(|p| !expansion.real.contains(p));
    let targets = expansion.real.iter().map(|c| (*c, false)).chain(ptx.map(|p| (*p, true)));
    let problems: Vec<Problem> = targets.filter_map(|(cap, for_ptx)| problem(cap, for_ptx, against)).collect();
    if problems.is_empty() {
        return check_pairs(expansion, against);
    }
    // Two capabilities of one Jetson part need the same setting: say it once.
    let mut helps = vec![accepted_clause(against)];
    for help in problems.iter().filter_map(Problem::help) {
        if !helps.contains(&help) {
            helps.push(help);
        }
    }
    Err(Refused::Targets { release: against.release, problems, helps }.into())
}

/// The problem with `cap` (as machine code, or `for_ptx`), if it has one: unknown, not accepted by the release, or
/// not buildable for the target platform.
pub fn problem(cap: Capability, for_ptx: bool, against: &Against) -> Option<Problem> {
    let target = Target { capability: cap, for_ptx };
    let Some(info) = against.compat.capabilities.get(cap) else {
        return Some(Problem::Unknown { target });
    };
    if let Some(release) = against.release {
        if !info.accepted_by(release) {
            return Some(match info.last_cuda {
                Some(last) if release.release() > last.release() => Problem::Dropped { target, last },
                _ => Problem::NotYet { target, first: info.first_cuda },
            });
        }
    }
    platform_problem(against, against.platform?, info)
}

/// The forms a configured list takes on the calls of one build: compiled (with its PTX when asked), compiled for
/// device LTO, and linked from LTO intermediates.
fn forms(expansion: &Expansion) -> [Form; 3] {
    forms_for(!expansion.ptx.is_empty())
}

/// The same, for a list with PTX or without, in the order their pairs are checked.
pub fn forms_for(ptx: bool) -> [Form; 3] {
    match ptx {
        true => [Form::GencodePtx, Form::LtoLink, Form::LtoPtx],
        false => [Form::Gencode, Form::LtoLink, Form::Lto],
    }
}

/// The first pair the release refuses in a form the build may use (combinations.toml). With the release unknown,
/// nothing is refused: the tables cannot say what it does.
fn check_pairs(expansion: &Expansion, against: &Against) -> Result<()> {
    let Some(release) = against.release else { return Ok(()) };
    let table = &against.compat.combinations;
    match forms(expansion).into_iter().find_map(|form| table.first_refused(release, &expansion.real, form)) {
        Some(refusal) => Err(refused_together(release, &refusal).into()),
        None => Ok(()),
    }
}

/// Two configured capabilities the release refuses together, with the row's help.
pub fn refused_together(release: Version, refusal: &Refusal) -> Refused {
    pair_refused(release, refusal, together(refusal), refusal.help(&release.release()))
}

/// `8.9 and 9.0 together`: what a refusal of two configured capabilities names.
pub fn together(refusal: &Refusal) -> String {
    format!("{} and {} together", refusal.a, refusal.b)
}

/// A user's GPU target next to a configured capability that the release refuses with it in `form`, for
/// `[gpu] arch-flags = "append"`: the refusal with `a` the user's and `b` the configured one, which nvcc's message
/// names (measured: it names the wrapper's `-gencode` code, whatever the order).
pub fn appended_refusal<'t>(
    compat: &'t Compat,
    release: Version,
    given: &[Capability],
    expansion: &Expansion,
    form: Form,
) -> Option<Refusal<'t>> {
    given.iter().find_map(|&user| {
        expansion.real.iter().find_map(|&configured| {
            let refusal = compat.combinations.refuses(release, user, configured, form)?;
            Some(Refusal { a: user, b: configured, ..refusal })
        })
    })
}

/// The release's refusal of a pair (`what` names it), with `help`.
pub fn pair_refused(release: Version, refusal: &Refusal, what: String, help: String) -> Refused {
    Refused::Pair { release, form: refusal.form, what, nvcc: refusal.nvcc_message(), help }
}

/// Why `info` cannot be built for `platform`, if it cannot, with the `[target]` settings that would make it valid.
fn platform_problem(against: &Against, platform: &Platform, info: &CapabilityInfo) -> Option<Problem> {
    let platforms = &against.compat.platforms;
    // With the release unknown, judge as the newest releases do (the served-by rows only ever add parts).
    let release = against.release.unwrap_or(Version::new(u32::MAX, 0, 0));
    if platforms.allows(platform, info, release) {
        return None;
    }
    let capability = info.capability;
    let platform = describe_platform(platform);
    Some(match &info.jetson_part {
        Some(part) => {
            let valid: Vec<String> = platforms
                .all()
                .iter()
                .filter(|p| platforms.allows(p, info, release) && against.release.map_or(true, |r| p.shipped_in(r)))
                .map(|p| against.named.settings_for(p))
                .collect();
            let settings = (!valid.is_empty()).then(|| against.named.how_to_set(&valid.join(", or ")));
            Problem::OtherJetson { capability, part: part.to_string(), platform, release, settings }
        }
        None => Problem::NotJetson { capability, platform },
    })
}

/// What would be accepted, as the first clause of the error's help line: `nvcc 12.4 accepts, for x86_64-linux: 5.0,
/// 5.2, ...`.
pub fn accepted_clause(against: &Against) -> String {
    let release = against.release.unwrap_or(Version::new(u32::MAX, 0, 0));
    let accepted: Vec<String> = against
        .compat
        .capabilities
        .all()
        .iter()
        .filter(|info| against.release.map_or(true, |r| info.accepted_by(r)))
        .filter(|info| against.platform.map_or(true, |p| against.compat.platforms.allows(p, info, release)))
        .map(|info| info.capability.to_string())
        .collect();
    let scope = match (against.release, against.platform) {
        (Some(r), Some(p)) => format!("nvcc {} accepts, for {}: ", r.release(), describe_platform(p)),
        (Some(r), None) => format!("nvcc {} accepts: ", r.release()),
        (None, Some(p)) => format!("known capabilities for {}: ", describe_platform(p)),
        (None, None) => "known capabilities: ".to_string(),
    };
    format!("{scope}{}", if accepted.is_empty() { "none".to_string() } else { accepted.join(", ") })
}

fn describe_platform(platform: &Platform) -> String {
    if platform.jetson {
        format!("{} (Jetson)", platform.name)
    } else {
        platform.name.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

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
            let e = expand_capabilities(&caps(list), *fc);
            assert_eq!(e.gencode(), *flags, "{list} fc={fc}");
            assert_eq!(e.cmake(), *cmake, "{list} fc={fc}");
        }
        assert_eq!(expand_capabilities(&[], true), Expansion { real: vec![], ptx: vec![] });
    }

    fn check_with(list: &str, fc: bool, release: Option<&str>, platform: Option<&str>) -> Result<()> {
        let compat = Compat::built_in();
        let platform = platform.map(|p| compat.platforms.get(p).unwrap());
        let named = Named::of(&crate::config::TargetConfig::default());
        let against = Against { compat: &compat, release: release.map(v), platform, named: &named };
        check(&expand_capabilities(&caps(list), fc), &against)
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

    #[test]
    fn a_setting_two_capabilities_need_is_said_once() {
        let err = check_with("11.0;11.0f", false, Some("13.0"), Some("x86_64-linux")).unwrap_err();
        let help = err.help.unwrap();
        assert_eq!(help.matches("to build for Jetson Thor, set").count(), 1, "{help}");
    }

    #[test]
    fn pairs_are_checked_once_each_capability_passes() {
        let err = check_with("8.6;10.0f;10.0", true, Some("13.0.88"), Some("x86_64-linux")).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Request);
        assert!(err.message.starts_with("nvcc 13.0 cannot build 10.0 and 10.0f together: it refuses the pair ("));
        assert!(err.help.unwrap().starts_with("keep one of 10.0 and 10.0f: nvcc 13.0 "));
        // A capability problem speaks first; an unknown release refuses no pair.
        let err = check_with("7.0;10.0;10.0f", false, Some("13.0"), None).unwrap_err();
        assert!(err.message.contains("7.0 was last accepted"), "{}", err.message);
        check_with("10.0;10.0f", false, None, None).unwrap();
    }

    /// Every export reads back as the same targets (issue 33): `gencode --format nvcc`, `cmake` and `torch` (where
    /// torch can say it: no PTX without its machine code), parsed by the one list parser.
    mod round_trip {
        use super::*;
        use proptest::prelude::*;

        fn capability() -> impl Strategy<Value = Capability> {
            let table =
                crate::compat::Compat::built_in().capabilities.all().iter().map(|i| i.capability).collect::<Vec<_>>();
            proptest::sample::select(table)
        }

        proptest! {
            #[test]
            fn exports_parse_back_to_the_same_targets(
                sass in proptest::collection::btree_set(capability(), 0..6),
                ptx in proptest::collection::btree_set(capability(), 0..4),
            ) {
                prop_assume!(!sass.is_empty() || !ptx.is_empty());
                let expansion = expand(&Targets { sass, ptx }, false);
                let targets = expansion.targets();
                let back = |text: &str| {
                    let list = TargetList::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
                    Targets::resolve(&list, None, || Ok(Vec::new())).unwrap()
                };
                prop_assert_eq!(&back(&expansion.gencode().join(" ")), &targets);
                prop_assert_eq!(&back(&expansion.cmake()), &targets);
                match targets.torch() {
                    Ok(torch) => prop_assert_eq!(&back(&torch), &targets),
                    Err(alone) => prop_assert!(targets.ptx.contains(&alone) && !targets.sass.contains(&alone)),
                }
            }
        }
    }
}
