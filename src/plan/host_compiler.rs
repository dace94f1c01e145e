//! Choosing the host compiler: the rule, as a pure function over compilers whose family and version are known.
//!
//! 1. A host compiler the user gave (any spelling or channel) is used; the wrapper adds nothing and only warns when
//!    this nvcc does not accept it.
//! 2. Else the stdenv compiler, when this nvcc accepts it: no libstdc++ skew, LTO keeps working.
//! 3. Else the newest accepted candidate, of the stdenv compiler's family first, then the other family (`prefer`
//!    swaps the order).
//! 4. Else, with `allow-unsupported`, the stdenv compiler plus `-allow-unsupported-compiler`; without it, an error
//!    that names the release, the accepted range and every compiler considered.
//!
//! For a target of another CPU the same rule runs over the target's compilers (`[target.host-compiler]`, else the
//! `TRIPLE-g++[-N]` and `TRIPLE-clang++[-N]` on PATH), and every compiler, the user's included, must build for the
//! target (`-dumpmachine`): nvcc given a native compiler with a target directory fails in a way that names neither.

use std::path::{Path, PathBuf};

use super::{Addition, Plan};
use crate::args::{HostCompilerGiven, Invocation, Phase, Role};
pub use crate::compat::Accepts;
use crate::compat::{CompilerFamily, HostCompilerTable, Platform};
use crate::config::{CompilerEntry, HostCompilerConfig, LtoMismatch};
use crate::error::{Error, ErrorKind, Result};
pub use crate::probe::compiler::{Known, StdenvLibstdcxx};
use crate::probe::system::Probes;
use crate::version::Version;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// The stdenv compiler is accepted: use it as it is.
    Stdenv(Known),
    /// Another compiler, because this nvcc does not accept the stdenv one (`stdenv` is `None` when none is known).
    Other { chosen: Known, stdenv: Option<Known> },
    /// Nothing is accepted, and the configuration allows unsupported compilers: the stdenv one, unchecked.
    Unsupported(Known),
}

/// No accepted compiler, with everything considered (for the error message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoneAccepted {
    pub considered: Vec<Known>,
}

/// Apply the rule (steps 2 to 4; step 1 is the caller's, since nothing needs choosing then).
pub fn choose(
    accepts: Accepts,
    stdenv: Option<&Known>,
    candidates: &[Known],
    prefer: Option<CompilerFamily>,
    allow_unsupported: bool,
) -> Result<Choice, NoneAccepted> {
    if let Some(s) = stdenv.filter(|s| accepts.accepts(s.family, s.version)) {
        return Ok(Choice::Stdenv(s.clone()));
    }
    let first = prefer.or(stdenv.map(|s| s.family)).unwrap_or(CompilerFamily::Gcc);
    let rank = |k: &Known| (k.family == first, k.version);
    let best = candidates.iter().filter(|k| accepts.accepts(k.family, k.version)).max_by_key(|k| rank(k));
    if let Some(chosen) = best {
        return Ok(Choice::Other { chosen: chosen.clone(), stdenv: stdenv.cloned() });
    }
    match stdenv {
        Some(s) if allow_unsupported => Ok(Choice::Unsupported(s.clone())),
        _ => {
            let mut considered: Vec<Known> = Vec::new();
            for k in stdenv.into_iter().chain(candidates) {
                if !considered.iter().any(|c| c.path == k.path) {
                    considered.push(k.clone());
                }
            }
            Err(NoneAccepted { considered })
        }
    }
}

/// Flags that make a compile or link by `chosen` use the stdenv compiler's libstdc++ (measured on nvcc 11.8 with
/// g++-11 against objects of g++-12, docs/nvcc-facts.md#sharing-libstdc-with-the-main-compiler): for GCC, its library directory first on the link and an
/// rpath to its `libstdc++.so.6`; for Clang, the stdenv's GCC installation for headers and library alike
/// (`--gcc-install-dir` from Clang 16, `--gcc-toolchain` before), plus the same rpath. `-Xcompiler` options reach
/// every host-compiler call nvcc makes, the final link included.
pub fn libstdcxx_flags(chosen: &Known, stdenv: &StdenvLibstdcxx, links: bool) -> Vec<String> {
    let mut flags = Vec::new();
    match chosen.family {
        CompilerFamily::Clang if chosen.version.major >= 16 => {
            flags.push(format!("-Xcompiler=--gcc-install-dir={}", stdenv.gcc_install_dir.display()));
        }
        CompilerFamily::Clang => {
            // PREFIX/lib/gcc/TRIPLE/VERSION -> PREFIX, which is what --gcc-toolchain takes.
            let prefix = stdenv.gcc_install_dir.ancestors().nth(4).unwrap_or(&stdenv.gcc_install_dir);
            flags.push(format!("-Xcompiler=--gcc-toolchain={}", prefix.display()));
        }
        CompilerFamily::Gcc if links => flags.push(format!("-L{}", stdenv.gcc_install_dir.display())),
        CompilerFamily::Gcc => {}
    }
    if links {
        flags.push(format!("-Xlinker=-rpath,{}", stdenv.runtime_dir.display()));
    }
    flags
}

/// The host LTO option this call gives the host compiler (`-flto`, `-flto=auto`, `-flto=thin` ...), as the user
/// wrote its `-Xcompiler`, unless a later `-fno-lto` turns it off. nvcc splits an `-Xcompiler` value at commas.
pub fn host_lto(inv: &Invocation) -> Option<String> {
    let mut found = None;
    for option in inv.with_role(Role::CompilerOptions) {
        let Some(value) = &option.value else { continue };
        let value = value.to_string_lossy();
        for word in value.split(|c: char| c == ',' || c.is_whitespace()) {
            if word == "-flto" || word.starts_with("-flto=") {
                found = Some(format!("{} {word}", option.spelling));
            } else if word == "-fno-lto" {
                found = None;
            }
        }
    }
    found
}

/// Whether nvcc will run the host compiler on this input (and so check its version): sources, not objects or
/// libraries. An input with no known extension counts as a source, to be safe.
pub fn is_host_compiled(input: &std::ffi::OsStr) -> bool {
    let ext = std::path::Path::new(input).extension().and_then(|e| e.to_str()).unwrap_or("");
    !matches!(ext, "o" | "obj" | "a" | "lib" | "so" | "dylib" | "res" | "cubin" | "fatbin" | "ptx" | "ltoir")
        && !input.to_string_lossy().contains(".so.")
}

/// nvcc reads `NVCC_CCBIN` from this release on. Measured with `NVCC_CCBIN=g++-11 nvcc -dryrun`: 11.8.89 and 12.4.131
/// run `gcc`, 12.5.40 and 13.0.88 run `g++-11`.
pub const FIRST_HONOURING_NVCC_CCBIN: Version = Version::major_minor(12, 5);

/// The compiler the wrapper told nvcc to use, and whose libstdc++ the programs it links will load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub compiler: PathBuf,
    /// The stdenv compiler the choice was made against, when one is known (for `doctor`).
    pub stdenv: Option<PathBuf>,
    /// Set when the wrapper pointed the link at the stdenv's libstdc++ (this directory, by rpath).
    pub libstdcxx_dir: Option<PathBuf>,
}

/// What the planner knows about this call, for the host-compiler step.
pub struct Step<'a> {
    pub invocation: &'a Invocation,
    pub table: &'a HostCompilerTable,
    pub probes: &'a dyn Probes,
    /// The NVCC release, or why it is unknown.
    pub release: std::result::Result<Version, String>,
    /// The compilers to choose from: `[host-compiler]`, or `[target.host-compiler]` for another CPU.
    pub settings: &'a HostCompilerConfig,
    /// For a target of another CPU: the platform every compiler must build for.
    pub cross: Option<&'a Platform>,
}

impl Step<'_> {
    /// Decide the host compiler and add what nvcc needs to hear; errors only when nothing this nvcc accepts exists.
    pub fn decide(&self, plan: &mut Plan) -> Result<()> {
        let inv = self.invocation;
        let settings = self.settings;
        let limits = self.limits(plan);
        if let Some(given) = inv.host_compiler().filter(|g| !self.ignored_nvcc_ccbin(g, limits, plan)) {
            return self.check_given(&given, limits, plan);
        }
        let Some((release, accepts)) = limits else {
            return match self.cross {
                // Without the release nothing can be chosen by range, but a cross build still needs a compiler for
                // the target: the stdenv one, checked.
                Some(_) => match self.stdenv(plan)? {
                    Some(s) => {
                        ccbin(plan, &s, format!("the target's stdenv compiler {s}"));
                        Ok(())
                    }
                    None => Err(self.no_cross_compiler()),
                },
                None => Ok(()),
            };
        };
        let stdenv = self.stdenv(plan)?;

        // nvcc checks the compiler's version only when it preprocesses; a link of objects never does, so the stdenv
        // compiler itself can link them, with its own libstdc++ and no skew.
        let link_only =
            inv.phase() == Phase::Link && !inv.inputs.is_empty() && !inv.inputs.iter().any(|i| is_host_compiled(i));
        if let (true, Some(s)) = (link_only, &stdenv) {
            ccbin(plan, s, format!(
                "this call only links objects, which nvcc does without checking the host compiler, so the stdenv compiler {s} links them with its own libstdc++"
            ));
            return Ok(());
        }

        let allow = settings.allow_unsupported || inv.allows_unsupported_compiler();
        let in_range = stdenv.as_ref().is_some_and(|s| accepts.accepts(s.family, s.version));
        let candidates = if in_range { Vec::new() } else { self.candidates(plan) };
        let lto = host_lto(inv);
        let mut choice = choose(accepts, stdenv.as_ref(), &candidates, settings.prefer, allow);
        // With host LTO the stdenv compiler's bytecode is what the link reads: `allow-unsupported` keeps it even when
        // another compiler is in range (see `lto_mismatch`).
        if let (Ok(Choice::Other { stdenv: Some(s), .. }), Some(_), true) = (&choice, &lto, allow) {
            choice = Ok(Choice::Unsupported(s.clone()));
        }
        match choice {
            Ok(Choice::Stdenv(s)) => ccbin(
                plan,
                &s,
                format!(
                    "the {}stdenv compiler {s} is one nvcc {release} accepts ({})",
                    self.whose(),
                    accepts.describe()
                ),
            ),
            Ok(Choice::Other { chosen, stdenv }) => {
                let whose = self.whose();
                let why = match &stdenv {
                    Some(s) => {
                        format!("nvcc {release} accepts {}, not the {whose}stdenv compiler {s}", accepts.describe())
                    }
                    None => {
                        format!("nvcc {release} accepts {}, and no {whose}stdenv compiler is known", accepts.describe())
                    }
                };
                if let (Some(s), Some(lto)) = (&stdenv, &lto) {
                    self.lto_mismatch(&chosen, s, lto, release, accepts, plan)?;
                }
                ccbin(plan, &chosen, format!("{why}: {chosen} is the newest accepted"));
                if let Some(decision) = plan.host.as_mut() {
                    decision.stdenv = stdenv.as_ref().map(|s| s.path.clone());
                }
                if let Some(s) = stdenv {
                    self.share_libstdcxx(&chosen, &s, plan);
                }
            }
            Ok(Choice::Unsupported(s)) => {
                let why = match &lto {
                    Some(lto) => format!("host LTO (`{lto}`) needs the stdenv compiler's bytecode"),
                    None => "no compiler it accepts was found".to_string(),
                };
                ccbin(
                    plan,
                    &s,
                    format!(
                        "nvcc {release} accepts {}, and {why}: allow-unsupported keeps the stdenv compiler {s}",
                        accepts.describe()
                    ),
                );
                if !inv.allows_unsupported_compiler() {
                    plan.before.push(Addition {
                        args: vec!["-allow-unsupported-compiler".into()],
                        reason: format!("`allow-unsupported = true` in `{}`", self.section()),
                    });
                }
            }
            Err(NoneAccepted { considered }) if considered.is_empty() && self.cross.is_some() => {
                return Err(self.no_cross_compiler());
            }
            Err(NoneAccepted { considered }) => {
                let (prefix, target) = match self.cross {
                    Some(p) => (format!("{}-", p.gnu_triples[0]), format!(" for {}", p.name)),
                    None => (String::new(), String::new()),
                };
                let install = format!("{prefix}g++-{} or {prefix}clang++-{}", accepts.newest_gcc, accepts.newest_clang);
                // Nothing at all to choose from: there is nothing to allow either.
                if considered.is_empty() {
                    return Err(Error::new(
                        ErrorKind::HostCompiler,
                        format!("no host compiler{target}: nvcc {release} accepts {}, and there is no g++ or clang++ on PATH and none in `{}`", accepts.describe(), self.section()),
                    )
                    .with_help(format!("install one (e.g. {install}), or name it in `{} stdenv` or with `-ccbin`", self.section())));
                }
                let listed = considered.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(", ");
                return Err(Error::new(
                    ErrorKind::HostCompiler,
                    format!("no usable host compiler{target}: nvcc {release} accepts {}, and none of these is: {listed}", accepts.describe()),
                )
                .with_help(format!(
                    "install one (e.g. {install}) and list it in `{} candidates`, pass `-ccbin`, or set `allow-unsupported = true` to try the stdenv compiler anyway",
                    self.section()
                )));
            }
        }
        Ok(())
    }

    /// Host LTO with a compiler other than the stdenv one: GCC's LTO bytecode is read only by the GCC major that
    /// wrote it (`lto1: fatal error: bytecode stream in file 'k.o' generated with LTO version 11.3 instead of the
    /// expected 12.0`, measured), and Clang's IR by no GCC, so the stdenv compiler's link of these objects fails.
    /// The stdenv compiler is already chosen whenever nvcc accepts it (or, with host LTO, whenever `allow-unsupported`
    /// is set), and the table's limits are per major, so no candidate of the stdenv's major can be accepted when it
    /// is not: warn (one line, with the ways out), or stop under `lto-mismatch = "error"`.
    fn lto_mismatch(
        &self,
        chosen: &Known,
        stdenv: &Known,
        lto: &str,
        release: Version,
        accepts: Accepts,
        plan: &mut Plan,
    ) -> Result<()> {
        if chosen.family == stdenv.family && chosen.version.major == stdenv.version.major {
            return Ok(());
        }
        let section = self.section();
        let message = format!(
            "host LTO (`{lto}`) with {chosen}, which nvcc {release} accepts ({}), where the {}stdenv compiler is {stdenv}: the LTO bytecode of these objects will not link with {stdenv}'s",
            accepts.describe(),
            self.whose()
        );
        let help = format!(
            "take -flto out of the CUDA compiles (-Xcompiler), build with a stdenv compiler nvcc {release} accepts, or set `allow-unsupported = true` in `{section}` to compile with {stdenv} anyway"
        );
        match self.settings.lto_mismatch {
            LtoMismatch::Warn => {
                plan.warnings
                    .push(format!("{message} ({help}; `lto-mismatch = \"error\"` in `{section}` makes this an error)"));
                Ok(())
            }
            LtoMismatch::Error => Err(Error::new(ErrorKind::HostCompiler, message)
                .with_help(format!("{help}; or set `lto-mismatch = \"warn\"` in `{section}`"))),
        }
    }

    /// The NVCC release and what it accepts, or `None` (with a note) when the release cannot be told or the table
    /// does not cover it.
    fn limits(&self, plan: &mut Plan) -> Option<(Version, Accepts)> {
        let version = match &self.release {
            Ok(v) => *v,
            Err(e) => {
                // Said on stderr, not only in the log: without the release nothing is chosen or checked, and the
                // build gets whatever nvcc picks by itself.
                plan.warnings.push(format!(
                    "the NVCC release is unknown ({e}): no host compiler is chosen; set `cuda-version` in the config"
                ));
                return None;
            }
        };
        let row = match self.table.limits_for(version) {
            Some(row) => row,
            None if version > self.table.newest().nvcc => {
                let newest = self.table.newest();
                plan.notes.push(format!(
                    "nvcc {version} is newer than the compatibility table; assuming the limits of {}",
                    newest.nvcc
                ));
                newest
            }
            None => {
                plan.notes
                    .push(format!("nvcc {version} is not in the compatibility table: no host compiler is chosen"));
                return None;
            }
        };
        Some((version.release(), row.accepts))
    }

    /// A compiler the user gave is used as it is; warn when this nvcc will reject it. For a cross build it must build
    /// for the target, or nvcc would fail on the target files without saying why.
    fn check_given(
        &self,
        given: &HostCompilerGiven,
        limits: Option<(Version, Accepts)>,
        plan: &mut Plan,
    ) -> Result<()> {
        let (value, how) = match given {
            HostCompilerGiven::Option(f) => (
                f.value.clone().unwrap_or_default(),
                format!("`{}` in {}", f.spelling, f.at.channel.describe(self.invocation)),
            ),
            HostCompilerGiven::Env(v) => (v.to_os_string(), "$NVCC_CCBIN".to_string()),
        };
        // Probed only when a check needs it: a cross build, or a known release. `-ccbin` may name a directory holding
        // gcc/g++; then nvcc picks the program and there is nothing to check.
        let probed = (self.cross.is_some() || limits.is_some())
            .then(|| self.probes.resolve(Path::new(&value)))
            .flatten()
            .filter(|p| p.is_file())
            .and_then(|path| self.probes.compiler(&path).ok());
        if let (Some(platform), Some(k)) = (self.cross, &probed) {
            if !k.target.as_deref().is_some_and(|t| platform.matches_triple(t)) {
                return Err(wrong_machine(
                    k,
                    platform,
                    &how,
                    "pass a compiler for the target, or remove it so the wrapper chooses one",
                ));
            }
        }
        let Some((release, accepts)) = limits else {
            plan.notes
                .push(format!("the host compiler is given by {how} ({}): nothing is added", value.to_string_lossy()));
            return Ok(());
        };
        if matches!(given, HostCompilerGiven::Env(_)) && release < FIRST_HONOURING_NVCC_CCBIN {
            let mut arg = std::ffi::OsString::from("-ccbin=");
            arg.push(&value);
            plan.before.push(Addition {
                args: vec![arg],
                reason: format!("nvcc {release} ignores $NVCC_CCBIN (honoured from {FIRST_HONOURING_NVCC_CCBIN}), so the wrapper passes it on"),
            });
        } else {
            plan.notes
                .push(format!("the host compiler is given by {how} ({}): nothing is added", value.to_string_lossy()));
        }
        if let Some(k) = probed {
            if !accepts.accepts(k.family, k.version) && !self.invocation.allows_unsupported_compiler() {
                plan.warnings.push(format!(
                    "nvcc {release} accepts {}, and the host compiler given by {how} is {k}: nvcc will reject it",
                    accepts.describe()
                ));
            }
        }
        Ok(())
    }

    /// Whether `$NVCC_CCBIN` is to be ignored, as this release ignores it: on a release before 12.5 the wrapper passes
    /// it on as `-ccbin=` (the user meant it), but not one that names no program or a compiler this release rejects,
    /// where nvcc alone would have built with its default (issue 26: `NVCC_CCBIN=/nonexistent/g++` failed on 12.4).
    /// The wrapper then chooses the host compiler as if it were unset, and says so.
    fn ignored_nvcc_ccbin(
        &self,
        given: &HostCompilerGiven,
        limits: Option<(Version, Accepts)>,
        plan: &mut Plan,
    ) -> bool {
        let (HostCompilerGiven::Env(value), Some((release, accepts))) = (given, limits) else { return false };
        if release >= FIRST_HONOURING_NVCC_CCBIN {
            return false;
        }
        let shown = crate::shell::display([*value]);
        let why = match self.probes.resolve(Path::new(value)) {
            None if Path::new(value).is_dir() => return false,
            None => "names no program".to_string(),
            Some(path) => match self.probes.compiler(&path) {
                Ok(k) if !accepts.accepts(k.family, k.version) && !self.invocation.allows_unsupported_compiler() => {
                    format!("names {k}, which nvcc {release} rejects ({})", accepts.describe())
                }
                _ => return false,
            },
        };
        plan.warnings.push(format!(
            "$NVCC_CCBIN={shown} {why}; nvcc {release} ignores $NVCC_CCBIN (honoured from {FIRST_HONOURING_NVCC_CCBIN}), so the wrapper does too and chooses the host compiler itself"
        ));
        true
    }

    /// The stdenv compiler: the config's, else `g++` on PATH (what nvcc itself runs by default), or for a cross
    /// build the first `TRIPLE-g++` on PATH. A configured one that builds for another machine is an error: every
    /// object of the build comes from it.
    fn stdenv(&self, plan: &mut Plan) -> Result<Option<Known>> {
        let entry = match &self.settings.stdenv {
            Some(entry) => entry.clone(),
            None => {
                let mut names = self.default_prefixes().into_iter().map(|p| PathBuf::from(format!("{p}g++")));
                match names.find_map(|name| self.probes.resolve(&name)) {
                    Some(path) => CompilerEntry::path(path),
                    None => return Ok(None),
                }
            }
        };
        let known = match self.known(&entry) {
            Ok(k) => k,
            Err(e) => {
                plan.notes.push(format!("the {}stdenv compiler is left out: {e}", self.whose()));
                return Ok(None);
            }
        };
        match self.cross {
            Some(platform) if !builds_for(&known, platform) => {
                let how = format!("`{} stdenv`", self.section());
                Err(wrong_machine(
                    &known,
                    platform,
                    &how,
                    "name the target's compiler there (e.g. aarch64-linux-gnu-g++ for aarch64)",
                ))
            }
            _ => Ok(Some(known)),
        }
    }

    /// The candidates: the config's list, else every `g++[-N]` and `clang++[-N]` on PATH (for a cross build, those
    /// with the target's triple in front). A cross candidate for another machine is left out, with a note.
    fn candidates(&self, plan: &mut Plan) -> Vec<Known> {
        let configured = &self.settings.candidates;
        let entries: Vec<CompilerEntry> = if configured.is_empty() {
            let triples = self.cross.map(|p| p.gnu_triples.iter().map(|t| Some(&**t)).collect());
            let mut found: Vec<PathBuf> = Vec::new();
            for triple in triples.unwrap_or_else(|| vec![None]) {
                for path in self.probes.installed_compilers(triple) {
                    if !found.contains(&path) {
                        found.push(path);
                    }
                }
            }
            found.into_iter().map(CompilerEntry::path).collect()
        } else {
            configured.clone()
        };
        let mut known = Vec::new();
        for entry in &entries {
            match self.known(entry) {
                Ok(k) if self.cross.is_some_and(|p| !builds_for(&k, p)) => plan.notes.push(format!(
                    "candidate left out: {k} builds for {}, not the target",
                    k.target.as_deref().unwrap_or("an unknown machine")
                )),
                Ok(k) => known.push(k),
                Err(err) => plan.notes.push(format!("candidate left out: {err}")),
            }
        }
        known
    }

    /// A compiler entry with family and version: as recorded in the config, or probed. For a cross build the
    /// target machine is needed too, so an entry that does not record it is probed.
    fn known(&self, entry: &CompilerEntry) -> std::result::Result<Known, String> {
        let path = match self.probes.resolve(&entry.path) {
            Some(p) => p,
            None => return Err(format!("{} is not an executable here", entry.path.display())),
        };
        let target_needed = self.cross.is_some() && entry.target.is_none();
        match (entry.family, entry.version) {
            (Some(family), Some(version)) if !target_needed => {
                Ok(Known { path, family, version, target: entry.target.clone() })
            }
            _ => self.probes.compiler(&path),
        }
    }

    /// Name prefixes of the default compilers: none natively, `TRIPLE-` for each of the target's triples.
    fn default_prefixes(&self) -> Vec<String> {
        match self.cross {
            Some(p) => p.gnu_triples.iter().map(|t| format!("{t}-")).collect(),
            None => vec![String::new()],
        }
    }

    /// The config section the compilers come from.
    fn section(&self) -> &'static str {
        if self.cross.is_some() {
            "[target.host-compiler]"
        } else {
            "[host-compiler]"
        }
    }

    /// "target's " for a cross build, for messages.
    fn whose(&self) -> &'static str {
        if self.cross.is_some() {
            "target's "
        } else {
            ""
        }
    }

    /// A cross build with no compiler for the target at all.
    fn no_cross_compiler(&self) -> Error {
        let platform = self.cross.expect("only for cross builds");
        let names: Vec<String> = self.default_prefixes().iter().map(|p| format!("{p}g++")).collect();
        // Debian names its cross compiler packages after the triple, with `x86-64` for `x86_64`.
        let package = format!("Debian's g++-{}", platform.gnu_triples[0].replacen('_', "-", 1));
        Error::new(
            ErrorKind::HostCompiler,
            format!(
                "no host compiler for the target {}: `[target.host-compiler]` names none and none of {} is on PATH",
                platform.name,
                names.join(", ")
            ),
        )
        .with_help(format!(
            "install one ({package}, or a Nix cross stdenv's compiler) or name it in `[target.host-compiler] stdenv`"
        ))
    }

    /// Point `chosen` at the stdenv compiler's libstdc++: where this section's stdenv entry records it, else probed
    /// from the stdenv compiler. Only this step's own section counts: a cross build never sees the native one's.
    fn share_libstdcxx(&self, chosen: &Known, stdenv: &Known, plan: &mut Plan) {
        let recorded = self.settings.stdenv.as_ref().and_then(|e| {
            Some(StdenvLibstdcxx { gcc_install_dir: e.gcc_install_dir.clone()?, runtime_dir: e.libstdcxx_dir.clone()? })
        });
        let dirs = match recorded.map(Ok).unwrap_or_else(|| self.probes.libstdcxx(&stdenv.path)) {
            Ok(dirs) => dirs,
            Err(e) => {
                plan.warnings.push(format!("cannot find the libstdc++ of the stdenv compiler {stdenv} ({e}): objects it built may not link with {chosen}'s"));
                return;
            }
        };
        let links = matches!(self.invocation.phase(), Phase::Link | Phase::Run);
        let flags = libstdcxx_flags(chosen, &dirs, links);
        if let Some(decision) = plan.host.as_mut() {
            decision.libstdcxx_dir = Some(dirs.runtime_dir.clone());
        }
        if !flags.is_empty() {
            plan.before.push(Addition {
                args: flags.into_iter().map(Into::into).collect(),
                reason: format!("{chosen} is not the stdenv compiler: use the stdenv's libstdc++ from {} so objects of both link and run", dirs.gcc_install_dir.display()),
            });
        }
    }
}

fn ccbin(plan: &mut Plan, chosen: &Known, reason: String) {
    plan.host =
        Some(Decision { compiler: chosen.path.clone(), stdenv: Some(chosen.path.clone()), libstdcxx_dir: None });
    plan.before.push(ccbin_addition(&chosen.path, reason));
}

/// Whether a compiler builds code for the platform (its `-dumpmachine` triple names the platform's CPU).
fn builds_for(k: &Known, platform: &Platform) -> bool {
    k.target.as_deref().is_some_and(|t| platform.matches_triple(t))
}

/// A compiler that builds for another machine than the target; `how` says where it was named.
fn wrong_machine(k: &Known, platform: &Platform, how: &str, fix: &str) -> Error {
    Error::new(
        ErrorKind::HostCompiler,
        format!(
            "the host compiler given by {how}, {k}, builds for {}, not for the target {} ({})",
            k.target.as_deref().unwrap_or("an unknown machine"),
            platform.name,
            platform.gnu_triples[0]
        ),
    )
    .with_help(fix.to_string())
}

fn ccbin_addition(path: &Path, reason: String) -> Addition {
    let mut arg = std::ffi::OsString::from("-ccbin=");
    arg.push(path);
    Addition { args: vec![arg], reason }
}

#[cfg(test)]
mod tests {
    use super::*;
    use CompilerFamily::{Clang, Gcc};

    fn k(path: &str, family: CompilerFamily, version: &str) -> Known {
        Known { path: path.into(), family, version: version.parse().unwrap(), target: None }
    }

    const NVCC_11_8: Accepts = Accepts { newest_gcc: 11, newest_clang: 14 };
    const NVCC_12_4: Accepts = Accepts { newest_gcc: 13, newest_clang: 17 };

    fn all() -> Vec<Known> {
        vec![
            k("g++-11", Gcc, "11.3.0"),
            k("g++-12", Gcc, "12.2.0"),
            k("clang++-14", Clang, "14.0.6"),
            k("clang++-16", Clang, "16.0.6"),
            k("clang++-19", Clang, "19.1.7"),
        ]
    }

    fn dirs() -> StdenvLibstdcxx {
        StdenvLibstdcxx {
            gcc_install_dir: "/usr/lib/gcc/x86_64-linux-gnu/12".into(),
            runtime_dir: "/usr/lib/x86_64-linux-gnu".into(),
        }
    }

    #[test]
    fn libstdcxx_flags_per_family_and_phase() {
        let rows: &[(Known, bool, &[&str])] = &[
            (
                k("g++-11", Gcc, "11.3.0"),
                true,
                &["-L/usr/lib/gcc/x86_64-linux-gnu/12", "-Xlinker=-rpath,/usr/lib/x86_64-linux-gnu"],
            ),
            (k("g++-11", Gcc, "11.3.0"), false, &[]),
            (
                k("clang++-16", Clang, "16.0.6"),
                false,
                &["-Xcompiler=--gcc-install-dir=/usr/lib/gcc/x86_64-linux-gnu/12"],
            ),
            (
                k("clang++-14", Clang, "14.0.6"),
                true,
                &["-Xcompiler=--gcc-toolchain=/usr", "-Xlinker=-rpath,/usr/lib/x86_64-linux-gnu"],
            ),
        ];
        for (chosen, links, want) in rows {
            assert_eq!(libstdcxx_flags(chosen, &dirs(), *links), *want, "{chosen} links={links}");
        }
    }

    #[test]
    fn which_inputs_the_host_compiler_sees() {
        for source in ["a.cu", "b.cpp", "c.c", "d.ii", "noext"] {
            assert!(is_host_compiled(source.as_ref()), "{source}");
        }
        for object in ["a.o", "lib/x.a", "libfoo.so", "libfoo.so.1.2", "k.cubin", "k.fatbin"] {
            assert!(!is_host_compiled(object.as_ref()), "{object}");
        }
    }

    #[test]
    fn stdenv_in_range_is_used_unchanged() {
        let g12 = k("g++-12", Gcc, "12.2.0");
        assert_eq!(choose(NVCC_12_4, Some(&g12), &all(), None, false), Ok(Choice::Stdenv(g12)));
    }

    #[test]
    fn out_of_range_stdenv_gets_newest_accepted_of_its_family_first() {
        let rows = [
            (NVCC_11_8, k("g++-12", Gcc, "12.2.0"), None, "g++-11"),
            (NVCC_11_8, k("clang++-19", Clang, "19.1.7"), None, "clang++-14"),
            (NVCC_12_4, k("clang++-19", Clang, "19.1.7"), None, "clang++-16"),
            (NVCC_11_8, k("g++-12", Gcc, "12.2.0"), Some(Clang), "clang++-14"),
            (NVCC_11_8, k("clang++-19", Clang, "19.1.7"), Some(Gcc), "g++-11"),
        ];
        for (accepts, stdenv, prefer, want) in rows {
            match choose(accepts, Some(&stdenv), &all(), prefer, false) {
                Ok(Choice::Other { chosen, stdenv: Some(s) }) => {
                    assert_eq!(chosen.path, PathBuf::from(want), "{stdenv} prefer {prefer:?}");
                    assert_eq!(s, stdenv);
                }
                other => panic!("{stdenv}: {other:?}"),
            }
        }
    }

    #[test]
    fn the_other_family_when_the_own_has_none_in_range() {
        let only = [k("g++-12", Gcc, "12.2.0"), k("clang++-14", Clang, "14.0.6")];
        let got = choose(NVCC_11_8, Some(&only[0]), &only, None, false).unwrap();
        assert!(matches!(got, Choice::Other { chosen, .. } if chosen.path == std::path::Path::new("clang++-14")));
    }

    #[test]
    fn nothing_in_range_is_an_error_listing_everything_or_the_escape() {
        let stdenv = k("g++-12", Gcc, "12.2.0");
        let cands = [k("clang++-19", Clang, "19.1.7")];
        let err = choose(NVCC_11_8, Some(&stdenv), &cands, None, false).unwrap_err();
        assert_eq!(err.considered, [stdenv.clone(), cands[0].clone()]);
        assert_eq!(choose(NVCC_11_8, Some(&stdenv), &cands, None, true), Ok(Choice::Unsupported(stdenv.clone())));
        assert!(choose(NVCC_11_8, None, &[], None, true).is_err());
        // The stdenv compiler listed again as a candidate is considered once.
        let err = choose(NVCC_11_8, Some(&stdenv), std::slice::from_ref(&stdenv), None, false).unwrap_err();
        assert_eq!(err.considered, [stdenv]);
    }
}
