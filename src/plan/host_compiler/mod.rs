//! Choosing the host compiler (the rule is `rule::choose`):
//!
//! 1. A host compiler the user gave (any spelling or channel) is used; the wrapper adds nothing and only warns when
//!    this nvcc does not accept it.
//! 2. Else the stdenv compiler, when this nvcc accepts it: no libstdc++ skew, LTO keeps working. One that cannot be
//!    asked what it is (its probe failed or was stopped) is never replaced: a configured one is given to nvcc as it
//!    is, unchecked, and without one nvcc runs its own default, as alone.
//! 3. Else the newest accepted candidate, of the stdenv compiler's family first, then the other family (`prefer`
//!    swaps the order).
//! 4. Else, with `allow-unsupported`, the stdenv compiler plus `-allow-unsupported-compiler`; without it, an error
//!    that names the release, the accepted range and every compiler considered.
//!
//! For a target of another CPU the same rule runs over the target's compilers (`[target.host-compiler]`, else the
//! `TRIPLE-g++[-N]` and `TRIPLE-clang++[-N]` on PATH), and every compiler, the user's included, must build for the
//! target (`-dumpmachine`): nvcc given a native compiler with a target directory fails in a way that names neither.

mod compilers;
mod messages;
pub mod problems;
pub mod rule;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use compilers::{Compilers, Stdenv};
pub use messages::{IgnoredWhy, Named, Note, Reason};
pub use problems::none_usable;
pub use rule::{choose, libstdcxx_flags, Choice, NoneAccepted};

use super::facts::{Facts, Release};
use super::model::{Changes, HostDecision};
use super::Step;
use crate::args::HostCompilerGiven;
use crate::compat::Version;
use crate::compat::{Accepts, FIRST_HONOURING_NVCC_CCBIN};
use crate::config::{Config, HostCompilerConfig, LtoMismatch};
use crate::error::Result;
use crate::probe::compiler::{CompilerFamily, Known, StdenvLibstdcxx};

pub struct HostCompiler;

impl Step for HostCompiler {
    const NAME: &'static str = "host-compiler";
    /// The compilers to choose from: `[host-compiler]`, or `[target.host-compiler]` for another CPU.
    type Section = HostCompilerConfig;
    type Needs<'d> = ();
    /// The compiler the wrapper told nvcc to use, when it chose one (not when the user gave one, or nvcc's default
    /// stays).
    type Decision = Option<HostDecision>;

    fn section<'c>(config: &'c Config, facts: &Facts) -> &'c Self::Section {
        if facts.cross {
            &config.target.host_compiler
        } else {
            &config.host_compiler
        }
    }

    /// Decide the host compiler and add what nvcc needs to hear; errors only when nothing this nvcc accepts exists.
    fn decide(facts: &Facts, settings: &HostCompilerConfig, _: (), plan: &mut Changes) -> Result<Option<HostDecision>> {
        let inv = facts.invocation;
        let compilers = Compilers { facts, settings };
        let limits = limits(facts, plan);
        if let Some(given) = inv.host_compiler().filter(|g| !ignored_nvcc_ccbin(facts, g, limits, plan)) {
            check_given(&compilers, &given, limits, plan)?;
            return Ok(None);
        }
        let Some((release, accepts)) = limits else {
            // Without the release nothing can be chosen by range, but a cross build still needs a compiler for the
            // target: the stdenv one, checked.
            if facts.cross {
                let stdenv = match compilers.stdenv_probed()? {
                    Stdenv::Known(known) => known,
                    Stdenv::None => return Err(compilers.no_cross_compiler(None)),
                    Stdenv::Absent(why) | Stdenv::Unprobed { why, .. } => {
                        return Err(compilers.no_cross_compiler(Some(why)))
                    }
                };
                return Ok(Some(ccbin(
                    facts,
                    plan,
                    &stdenv,
                    Reason::CrossStdenvUnchecked { compiler: stdenv.clone() },
                )));
            }
            return Ok(None);
        };
        // Why the configured stdenv compiler is not used, for the error of a cross build left with none.
        let mut left_out = None;
        let stdenv = match compilers.stdenv_probed()? {
            Stdenv::Known(known) => Some(known),
            Stdenv::None => None,
            Stdenv::Absent(why) => {
                left_out = Some(why.clone());
                plan.note(Note::StdenvLeftOut { cross: facts.cross, why });
                None
            }
            // Nothing is known of it, so nothing can be chosen against it: the configured compiler stays, unchecked
            // (nvcc checks it itself), and without a configured one nvcc runs its own default, as alone.
            Stdenv::Unprobed { path, configured: true, why } => {
                let mut arg = OsString::from("-ccbin=");
                arg.push(&path);
                plan.add_before(vec![arg], Reason::StdenvUnprobed { compiler: path, why });
                return Ok(None);
            }
            Stdenv::Unprobed { path, configured: false, why } => {
                plan.note(Note::DefaultUnprobed { compiler: path, why });
                return Ok(None);
            }
        };

        // nvcc checks the compiler's version only when it preprocesses; a link of objects never does, so the stdenv
        // compiler itself can link them, with its own libstdc++ and no skew.
        if let (true, Some(s)) = (inv.links_objects_only(), &stdenv) {
            return Ok(Some(ccbin(facts, plan, s, Reason::LinksObjectsOnly { compiler: s.clone() })));
        }

        let allow = *settings.allow_unsupported || inv.allows_unsupported_compiler();
        let in_range = stdenv.as_ref().is_some_and(|s| accepts.accepts(s.family, s.version));
        let candidates = if in_range { Vec::new() } else { compilers.candidates(plan) };
        let lto = inv.host_lto();
        let mut choice = choose(accepts, stdenv.as_ref(), &candidates, settings.prefer.as_deref().copied(), allow);
        // With host LTO the stdenv compiler's bytecode is what the link reads: `allow-unsupported` keeps it even when
        // another compiler is in range (see `lto_mismatch`).
        if let (Ok(Choice::Other { stdenv: Some(s), .. }), Some(_), true) = (&choice, &lto, allow) {
            choice = Ok(Choice::Unsupported(s.clone()));
        }
        let cross = facts.cross;
        match choice {
            Ok(Choice::Stdenv(s)) => Ok(Some(ccbin(
                facts,
                plan,
                &s,
                Reason::StdenvAccepted { compiler: s.clone(), release, accepts, cross },
            ))),
            Ok(Choice::Other { chosen, stdenv }) => {
                if let (Some(s), Some(lto)) = (&stdenv, &lto) {
                    lto_mismatch(&compilers, &chosen, s, lto, release, accepts, plan)?;
                }
                let why =
                    Reason::NewestAccepted { chosen: chosen.clone(), stdenv: stdenv.clone(), release, accepts, cross };
                let mut decision = ccbin(facts, plan, &chosen, why);
                decision.stdenv = stdenv.as_ref().map(|s| s.path.clone());
                if let Some(s) = stdenv {
                    decision.libstdcxx_dir = share_libstdcxx(&compilers, &chosen, &s, plan);
                }
                Ok(Some(decision))
            }
            Ok(Choice::Unsupported(s)) => {
                let why = Reason::UnsupportedKept { compiler: s.clone(), release, accepts, lto };
                let decision = ccbin(facts, plan, &s, why);
                if !inv.allows_unsupported_compiler() {
                    let section = compilers.section();
                    plan.add_before(vec!["-allow-unsupported-compiler".into()], Reason::AllowUnsupported { section });
                }
                Ok(Some(decision))
            }
            Err(NoneAccepted { considered }) if considered.is_empty() && facts.cross => {
                Err(compilers.no_cross_compiler(left_out))
            }
            Err(NoneAccepted { considered }) => Err(compilers.none_accepted(&considered, release, accepts)),
        }
    }
}

/// The NVCC release and what it accepts, or `None` when the release is unknown (said by the facts) or the table
/// does not cover it (said here). A release newer than the table is decided as the newest row.
fn limits(facts: &Facts, plan: &mut Changes) -> Option<(Version, Accepts)> {
    let table = &facts.compat.host_compilers;
    let row = match &facts.release {
        Release::Unknown { .. } => return None,
        Release::Newer { .. } => table.newest(),
        Release::Known { version, .. } => match table.limits_for(*version) {
            Some(row) => row,
            None => {
                plan.note(Note::NotInTable { release: *version });
                return None;
            }
        },
    };
    Some((facts.release.version()?.release(), row.accepts()))
}

/// Whether `$NVCC_CCBIN` is to be ignored, as this release ignores it: on a release before 12.5 the wrapper passes
/// it on as `-ccbin=` (the user meant it), but not one that names no program or a compiler this release rejects,
/// where nvcc alone would have built with its default (issue 26: `NVCC_CCBIN=/nonexistent/g++` failed on 12.4). The
/// wrapper then chooses the host compiler as if it were unset, and says so.
fn ignored_nvcc_ccbin(
    facts: &Facts,
    given: &HostCompilerGiven,
    limits: Option<(Version, Accepts)>,
    plan: &mut Changes,
) -> bool {
    let (HostCompilerGiven::Env(value), Some((release, accepts))) = (given, limits) else { return false };
    if release >= FIRST_HONOURING_NVCC_CCBIN {
        return false;
    }
    let why = match facts.probes.resolve(Path::new(value)) {
        // A directory: nvcc picks gcc/g++ from it; nothing to judge.
        None if facts.probes.exists(Path::new(value)) => return false,
        None => IgnoredWhy::NamesNoProgram,
        Some(path) => match facts.probes.compiler(&path) {
            Ok(k) if !accepts.accepts(k.family, k.version) && !facts.invocation.allows_unsupported_compiler() => {
                IgnoredWhy::Rejected { compiler: k, accepts }
            }
            _ => return false,
        },
    };
    plan.warn(Note::NvccCcbinIgnored { value: value.to_os_string(), why, release, first: FIRST_HONOURING_NVCC_CCBIN });
    true
}

/// A compiler the user gave is used as it is; warn when this nvcc will reject it. For a cross build it must build
/// for the target, or nvcc would fail on the target files without saying why.
fn check_given(
    compilers: &Compilers,
    given: &HostCompilerGiven,
    limits: Option<(Version, Accepts)>,
    plan: &mut Changes,
) -> Result<()> {
    let facts = compilers.facts;
    let (value, how) = match given {
        HostCompilerGiven::Option(f) => (
            f.value.clone().unwrap_or_default(),
            Named::Option { spelling: f.spelling, place: f.at.channel.place(facts.invocation) },
        ),
        HostCompilerGiven::Env(v) => (v.to_os_string(), Named::Env),
    };
    // Probed only when a check needs it: a cross build, or a known release. `-ccbin` may name a directory holding
    // gcc/g++ (then `resolve`, which finds files only, finds nothing): nvcc picks the program, nothing is checked.
    let probed = (facts.cross || limits.is_some())
        .then(|| facts.probes.resolve(Path::new(&value)))
        .flatten()
        .and_then(|path| facts.probes.compiler(&path).ok());
    if let (true, Some(k)) = (facts.cross, &probed) {
        if !compilers.builds_for_target(k) {
            return Err(compilers.wrong_machine(
                k,
                &how.to_string(),
                "pass a compiler for the target, or remove it so the wrapper chooses one",
            ));
        }
    }
    let Some((release, accepts)) = limits else {
        plan.note(Note::Given { how, value });
        return Ok(());
    };
    if matches!(given, HostCompilerGiven::Env(_)) && release < FIRST_HONOURING_NVCC_CCBIN {
        let mut arg = OsString::from("-ccbin=");
        arg.push(&value);
        plan.add_before(vec![arg], Reason::NvccCcbinIgnored { release, first: FIRST_HONOURING_NVCC_CCBIN });
    } else {
        plan.note(Note::Given { how: how.clone(), value });
    }
    if let Some(k) = probed {
        if !accepts.accepts(k.family, k.version) && !facts.invocation.allows_unsupported_compiler() {
            plan.warn(Note::GivenRejected { release, accepts, how, compiler: k });
        }
    }
    Ok(())
}

/// Host LTO with a compiler other than the stdenv one: GCC's LTO bytecode is read only by the GCC major that wrote it
/// (`lto1: fatal error: bytecode stream in file 'k.o' generated with LTO version 11.3 instead of the expected 12.0`,
/// measured), and Clang's IR by no GCC, so the stdenv compiler's link of these objects fails. The stdenv compiler is
/// already chosen whenever nvcc accepts it (or, with host LTO, whenever `allow-unsupported` is set), and the table's
/// limits are per major, so no candidate of the stdenv's major can be accepted when it is not: warn (one line, with
/// the ways out), or stop under `lto-mismatch = "error"`.
fn lto_mismatch(
    compilers: &Compilers,
    chosen: &Known,
    stdenv: &Known,
    lto: &str,
    release: Version,
    accepts: Accepts,
    plan: &mut Changes,
) -> Result<()> {
    if chosen.family == stdenv.family && chosen.version.major == stdenv.version.major {
        return Ok(());
    }
    let warning = Note::LtoMismatch {
        lto: lto.to_string(),
        chosen: chosen.clone(),
        stdenv: stdenv.clone(),
        release,
        accepts,
        cross: compilers.facts.cross,
        section: compilers.section(),
    };
    match *compilers.settings.lto_mismatch {
        LtoMismatch::Warn => {
            plan.warn(warning);
            Ok(())
        }
        LtoMismatch::Error => {
            let help = format!("{}; or set `lto-mismatch = \"warn\"` in `{}`", warning.lto_help(), compilers.section());
            Err(problems::Refused::LtoMismatch { problem: warning.lto_problem(), help }.into())
        }
    }
}

/// Point `chosen` at the stdenv compiler's libstdc++: where this section's stdenv entry records it, else probed from
/// the stdenv compiler. Only this step's own section counts: a cross build never sees the native one's. The directory
/// of the libstdc++ the programs then load, when the flags were added.
fn share_libstdcxx(compilers: &Compilers, chosen: &Known, stdenv: &Known, plan: &mut Changes) -> Option<PathBuf> {
    let facts = compilers.facts;
    let recorded = compilers.settings.stdenv.as_ref().and_then(|e| {
        Some(StdenvLibstdcxx { gcc_install_dir: e.gcc_install_dir.clone()?, runtime_dir: e.libstdcxx_dir.clone()? })
    });
    let dirs = match recorded.map(Ok).unwrap_or_else(|| facts.probes.libstdcxx(&stdenv.path)) {
        Ok(dirs) => dirs,
        Err(why) => {
            plan.warn(Note::NoLibstdcxx { stdenv: stdenv.clone(), chosen: chosen.clone(), why });
            return None;
        }
    };
    let flags = match libstdcxx_flags(chosen, &dirs, facts.invocation.links()) {
        Ok(flags) => flags,
        Err((dir, byte)) => {
            plan.warn(Note::LibstdcxxUnpassable { stdenv: stdenv.clone(), chosen: chosen.clone(), dir, byte });
            return None;
        }
    };
    if !flags.is_empty() {
        let why = Reason::SharedLibstdcxx { chosen: chosen.clone(), gcc_install_dir: dirs.gcc_install_dir.clone() };
        plan.add_before(flags, why);
    }
    Some(dirs.runtime_dir)
}

/// Tell nvcc to use `chosen`: the decision. Where `chosen` is the compiler nvcc runs by itself, nothing is added (the
/// shortest spelling that selects it): nvcc's command lines for the host compiler then stay exactly as long as alone,
/// which at the kernel's argument limit decides whether a call builds (issue 57: `-ccbin=/usr/bin/g++` made gcc's
/// `COLLECT_GCC_OPTIONS` longer than nvcc alone's `gcc` does, and cc1plus failed where nvcc alone built).
fn ccbin(facts: &Facts, plan: &mut Changes, chosen: &Known, why: Reason) -> HostDecision {
    match nvccs_own(facts, chosen) {
        Some(own) => plan.note(Note::NvccsOwn { why: Box::new(why), gcc: own.gcc, gxx: own.gxx }),
        None => {
            let mut arg = OsString::from("-ccbin=");
            arg.push(&chosen.path);
            plan.add_before(vec![arg], why);
        }
    }
    HostDecision {
        compiler: chosen.path.clone(),
        family: chosen.family,
        stdenv: Some(chosen.path.clone()),
        libstdcxx_dir: None,
    }
}

/// nvcc's own host compiler, where `chosen` is it: a native GCC that is the `g++` nvcc links with, beside the `gcc`
/// (nvcc's compiler for every other step) of the same release for the same target. nvcc's default comes from PATH
/// unless its `nvcc.profile` names a `compiler-bindir`; the same PATH reaches nvcc, as the wrapper changes none. A
/// compiler whose target is not known (recorded in the config, as the Nix package does) is never taken for it: that
/// would take a probe the config is there to spare.
fn nvccs_own(facts: &Facts, chosen: &Known) -> Option<crate::probe::system::NvccDefault> {
    let target = chosen.target.as_ref()?;
    if facts.cross || chosen.family != CompilerFamily::Gcc {
        return None;
    }
    let own = facts.probes.nvcc_default_compiler(facts.nvcc)?;
    if own.gxx != chosen.path || own.gcc.parent() != own.gxx.parent() {
        return None;
    }
    let gcc = facts.probes.compiler(&own.gcc).ok()?;
    let same = gcc.family == chosen.family && gcc.version == chosen.version && gcc.target.as_ref() == Some(target);
    same.then_some(own)
}
