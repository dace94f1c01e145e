//! What the Nix side looks up (makeNvccWrapper's answers.json): the binary's own answers to every question Nix asks at evaluation
//! time, decided by the planner's functions from the built-in tables and written in the binary's words, so that
//! makeNvccWrapper's compat.nix keeps no parser, no version arithmetic and no rule of its own, only lookups.
//!
//! Nix asks: is this release known; which platform do this Nix system and redist system name; does the release
//! ship it; which host-compiler majors does the release accept, and what is said when no compiler is one; what does
//! each word of `cudaCapabilities` mean; is each capability accepted by the release and buildable for the platform,
//! and if not, why and what would fix it; in which forms does a list's build check its pairs, and which pairs does
//! the release refuse together in each. The file holds each answer, and each sentence once: as a frame (with
//! `{placeholders}`) where a sentence differs only by the values it names, rendered by the binary's own sentence
//! functions over the placeholders (`gpu::cannot_build(Some(&"{release}"), ...)`), never cut from a rendered one.
//!
//! `refusal` answers a whole request as the binary decides it, in the drop-in's order (the release, the platform,
//! whether it is shipped, the host compilers, the capabilities): tests/real/nix/answers.rs compares it with what
//! compat.nix makes of the file, over every release, platform and capability, every pair, lists of three and more,
//! and sets of host compilers. The file is rendered and compared by src/checks/reference/
//! (`NVCC_WRAPPER_UPDATE_REFERENCE=1 cargo test --lib reference` writes it anew).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::compat::Version;
use crate::compat::{Capability, Compat, Form, Item, Platform, TargetList, Targets, FAMILIES};
use crate::config::{Origin, Sourced, TargetConfig, TargetPlatform};
use crate::error::{Error, ErrorKind};
use crate::plan::gpu::{self, Against};
use crate::plan::target::{self, Named};

mod refusal;
mod render;
pub use refusal::{refusal, Compiler, Compilers, Request};
pub use render::render;

/// Where the file Nix reads lies in the repository: beside makeNvccWrapper, in the change set for Nixpkgs.
pub const FILE: &str = "nix/nixpkgs/pkgs/development/cuda-modules/packages/makeNvccWrapper/answers.json";

/// An error and its help line, as the binary prints them after `nvcc-wrapper: error: ` and `help: `.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Said {
    pub error: String,
    pub help: String,
}

impl From<Error> for Said {
    fn from(e: Error) -> Said {
        Said { error: e.message, help: e.help.unwrap_or_default() }
    }
}

/// The file: see the module header.
#[derive(Debug, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct Answers {
    pub about: &'static str,
    /// Every capability the tables know, in the binary's order: Nix sorts a list by filtering this one.
    pub capabilities: Vec<String>,
    /// The baseline of each capability with a suffix (`9.0a`: `9.0`), whose PTX forward compatibility embeds.
    pub baselines: BTreeMap<String, String>,
    /// What each word means, in every dialect the binary reads (`8.6`, `8.6+PTX`, `86`, `86-real`, `86-virtual`,
    /// `sm_86`, `compute_86`); `all` and `all-major` are the release's and platform's (`Platform::words`).
    pub words: BTreeMap<String, Meaning>,
    /// Why a release does not accept a capability, as machine code and as PTX: `not-yet` for the releases before
    /// the first that accepts it, `dropped` for those after the last (`Release::not_accepted` says which applies).
    pub capability_problems: BTreeMap<String, BTreeMap<&'static str, Problem>>,
    /// Why a platform cannot run a capability (`PlatformAnswers::refused` says where it applies).
    pub platform_problems: BTreeMap<String, BTreeMap<String, String>>,
    pub releases: BTreeMap<String, Release>,
    /// The forms a build of a list checks its pairs in, in order: `with-ptx` when the list has PTX (asked, or the
    /// forward-compatible one), else `without-ptx` (`gpu::forms_for`).
    pub forms: BTreeMap<&'static str, Vec<&'static str>>,
    /// Each pair refusal's words once, by the key the releases' `pairs` name it with; `{release}` stands for the
    /// release, here and in the next two.
    pub pair_refusals: BTreeMap<String, Said>,
    /// Each refusal of a release for a target it does not ship, once (`PlatformAnswers::shipped` names it).
    pub not_shipped: BTreeMap<String, Said>,
    /// Each help clause naming the settings that would run a capability on another platform, once
    /// (`PlatformAnswers::refused` names it).
    pub platform_helps: BTreeMap<String, String>,
    /// What is said when neither the stdenv compiler nor a candidate is one the release accepts.
    pub host_compilers: HostCompilers,
    /// Each Nix system nvcc builds for: the platform it names for a Jetson redist system and for any other.
    pub systems: BTreeMap<String, BTreeMap<&'static str, Choice>>,
    /// `{system}`: a Nix system nvcc does not build for.
    pub unknown_system: Said,
    /// `{release}`: a release the tables do not know.
    pub unknown_release: Said,
    /// `{word}`: a word of no dialect, or a capability the tables do not know.
    pub unknown_capability: String,
    /// `{release}`, `{problems}`: the error that lists each capability's problem (joined by `; `).
    pub targets_error: String,
    /// `native` in a Nix build.
    pub native: Said,
}

/// What a word asks for: machine code and PTX of these capabilities.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Meaning {
    pub sass: Vec<String>,
    pub ptx: Vec<String>,
}

impl From<&Targets> for Meaning {
    fn from(t: &Targets) -> Meaning {
        let names = |set: &std::collections::BTreeSet<Capability>| set.iter().map(|c| c.to_string()).collect();
        Meaning { sass: names(&t.sass), ptx: names(&t.ptx) }
    }
}

/// A platform's name, or why there is none.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Choice {
    Platform(String),
    Refused(Said),
}

/// A word's meaning, or why it has none here.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Word {
    Meaning(Meaning),
    Refused(Said),
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct Release {
    /// The newest major of each host-compiler family the release accepts, by its spelling (`gcc`): nvcc checks no
    /// lower bound.
    pub newest: BTreeMap<&'static str, u32>,
    /// `GCC up to 13 and Clang up to 17`.
    pub accepts: String,
    /// Each known capability the release does not accept, and which of its `capability-problems` says why.
    pub not_accepted: BTreeMap<String, &'static str>,
    /// Each form's refused pairs, in the order the binary meets them (the lower first capability first), each
    /// naming its words in `pair-refusals`.
    pub pairs: BTreeMap<&'static str, Vec<Pair>>,
    pub platforms: BTreeMap<String, PlatformAnswers>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub sass: String,
    pub ptx: String,
}

#[derive(Debug, Serialize)]
pub struct Pair {
    pub a: String,
    pub b: String,
    /// Its key in `pair-refusals`.
    pub said: String,
}

/// The frames of the host-compiler refusal.
#[derive(Debug, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct HostCompilers {
    /// `{release}`, `{accepts}` (the release's `accepts`), `{considered}`: each compiler considered (the stdenv
    /// one, then the candidates, each path once) as `compiler` says it, joined by `, `.
    pub error: String,
    /// The same for a cross build, `{platform}` the target's.
    pub error_cross: String,
    /// `{path}`, `{family}`, `{version}`: one compiler, as the config records it.
    pub compiler: String,
    /// `{newest-gcc}`, `{newest-clang}` (`{newest-SPELLING}` of each family): the release's.
    pub help: String,
}

/// What the Nix side's user can do when no compiler is one the release accepts, the newest major of GCC and of Clang
/// the release accepts named by `gcc` and `clang`: the arguments of makeNvccWrapper.
fn nix_host_compiler_help(gcc: &dyn std::fmt::Display, clang: &dyn std::fmt::Display) -> String {
    format!("give one in `extraCandidates` (a GCC up to {gcc} or a Clang up to {clang}), or a package set that has buildPackages.gcc{gcc}")
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct PlatformAnswers {
    /// Why a cross build for it cannot use this release, if it cannot: a key of `not-shipped`.
    pub shipped: Option<String>,
    /// The first clause of the help line: what the release accepts for the platform.
    pub accepted: String,
    /// Each capability the release accepts but the platform cannot run (its `platform-problems` text says why),
    /// with the key in `platform-helps` of the clause naming the settings that would run it, where some would.
    pub refused: BTreeMap<String, Option<String>>,
    /// `all` and `all-major`.
    pub words: BTreeMap<&'static str, Word>,
}

/// Forms as combinations.toml names them.
const FORMS: [(Form, &str); 5] = [
    (Form::Gencode, "gencode"),
    (Form::GencodePtx, "gencode-ptx"),
    (Form::Lto, "lto"),
    (Form::LtoPtx, "lto-ptx"),
    (Form::LtoLink, "lto-link"),
];

/// Nixpkgs' redist system of Jetson.
const JETSON_REDIST: &str = "linux-aarch64";

/// Every spelling of `cap` the list parser reads, one per dialect.
pub fn spellings(cap: Capability) -> [String; 7] {
    let compact = cap.sm_name().trim_start_matches("sm_").to_string();
    [
        cap.to_string(),
        format!("{cap}+PTX"),
        compact.clone(),
        format!("{compact}-real"),
        format!("{compact}-virtual"),
        cap.sm_name(),
        cap.compute_name(),
    ]
}

/// What the frames name the release by, for Nix to fill in.
const RELEASE: &str = "{release}";

/// This machine's GPUs, which a Nix build never asks for (`gpu::resolve` refuses `native` there first).
fn nix_build_gpus() -> Result<Vec<Capability>, String> {
    Err("a Nix build does not look at this machine's GPUs".into())
}

/// Every answer, from `compat`.
pub fn answers(compat: &Compat) -> Answers {
    let named = Named::nix();
    let mut capabilities: Vec<Capability> = compat.capabilities.all().iter().map(|i| i.capability).collect();
    capabilities.sort();
    let mut words = BTreeMap::new();
    // What each spelling of a capability stands for (its meaning, which no release changes: resolved alone).
    for &cap in &capabilities {
        for word in spellings(cap) {
            let list = TargetList::parse(&word).unwrap_or_else(|e| panic!("the parser refuses its own dialect: {e}"));
            let targets = Targets::resolve(&list, None, nix_build_gpus).expect("a capability needs no release");
            words.insert(word, Meaning::from(&targets));
        }
    }
    let mut texts = Texts::default();
    let releases = compat
        .host_compilers
        .releases()
        .iter()
        .map(|row| row.nvcc.release())
        .filter(|r| r.has_minor())
        .map(|r| (r.to_string(), release(compat, r, &capabilities, &named, &mut texts)))
        .collect();

    let mut systems: BTreeMap<String, BTreeMap<&'static str, Choice>> = BTreeMap::new();
    for p in compat.platforms.all() {
        let system = p.nix_system.to_string();
        let entry = systems.entry(system.clone()).or_default();
        for (key, redist) in [("jetson", Some(JETSON_REDIST)), ("other", None)] {
            let choice = match platform_of(compat, &system, redist, &named) {
                Ok(p) => Choice::Platform(p.name.to_string()),
                Err(e) => Choice::Refused(e.into()),
            };
            entry.insert(key, choice);
        }
    }
    let unknown_system = platform_of(compat, "{system}", None, &named).expect_err("`{system}` is no Nix system").into();
    let unknown_release =
        crate::plan::not_in_tables(compat, "`cudaMajorMinorVersion` \"{release}\"", ErrorKind::Request).into();
    let newest = compat.newest_release();
    let against = Against { compat, release: Some(newest), platform: None, named: &named };
    let native = gpu::targets_for(&TargetList(vec![Item::Native]), false, &against, true, nix_build_gpus)
        .expect_err("`native` is refused in a Nix build")
        .into();
    let forms = [("with-ptx", true), ("without-ptx", false)]
        .into_iter()
        .map(|(name, ptx)| (name, gpu::forms_for(ptx).iter().map(|f| form_name(*f)).collect()))
        .collect();
    Answers {
        about: "Made from the code by src/nix_answers/ (`NVCC_WRAPPER_UPDATE_REFERENCE=1 cargo test --lib reference`) for makeNvccWrapper's compat.nix to look up: do not edit.",
        capabilities: capabilities.iter().map(Capability::to_string).collect(),
        baselines: capabilities
            .iter()
            .filter(|c| c.suffix.is_some())
            .map(|c| (c.to_string(), c.baseline().to_string()))
            .collect(),
        words,
        capability_problems: texts.capabilities,
        platform_problems: texts.platforms,
        releases,
        systems,
        unknown_system,
        unknown_release,
        forms,
        pair_refusals: texts.pairs,
        not_shipped: texts.shipped,
        platform_helps: texts.helps,
        host_compilers: host_compilers(),
        unknown_capability: gpu::unknown_capability(&"{word}"),
        targets_error: gpu::cannot_build(Some(&"{release}"), &"{problems}"),
        native,
    }
}

/// The problem texts met so far, each kept once (a text that differs between releases would be a rule these
/// tables cannot hold: the generator stops).
#[derive(Default)]
struct Texts {
    capabilities: BTreeMap<String, BTreeMap<&'static str, Problem>>,
    platforms: BTreeMap<String, BTreeMap<String, String>>,
    pairs: BTreeMap<String, Said>,
    shipped: BTreeMap<String, Said>,
    helps: BTreeMap<String, String>,
}

/// Keep `value` once in `map`: the key it is kept under already, else `key` (`{key}, {then}` when `key` holds
/// other words).
fn once<T: PartialEq>(map: &mut BTreeMap<String, T>, key: String, then: impl std::fmt::Display, value: T) -> String {
    if let Some((kept, _)) = map.iter().find(|(_, kept)| **kept == value) {
        return kept.clone();
    }
    let key = if map.contains_key(&key) { format!("{key}, {then}") } else { key };
    assert!(!map.contains_key(&key), "{key} names two texts");
    map.insert(key.clone(), value);
    key
}

impl Texts {
    /// The key of this pair refusal's words: the first form that says them names them (`gencode 10.0 10.0f`).
    fn pair(&mut self, form: &str, refusal: &crate::compat::Refusal, release: Version) -> String {
        let said = Said {
            error: gpu::refused_pair(&RELEASE, refusal.form, &gpu::together(refusal), &refusal.nvcc_message()),
            help: refusal.help(&RELEASE),
        };
        once(&mut self.pairs, format!("{form} {} {}", refusal.a, refusal.b), release.release(), said)
    }
}

fn form_name(form: Form) -> &'static str {
    FORMS.iter().find(|(f, _)| *f == form).map(|(_, name)| *name).expect("every form is named")
}

/// The host-compiler refusal's frames: the drop-in's own sentence and compiler names, over placeholders.
fn host_compilers() -> HostCompilers {
    use crate::plan::host_compiler::none_usable;
    let error =
        |platform: Option<&dyn std::fmt::Display>| none_usable(platform, &RELEASE, &"{accepts}", &"{considered}");
    HostCompilers {
        error: error(None),
        error_cross: error(Some(&"{platform}")),
        compiler: crate::probe::compiler::named(&"{path}", &"{family}", &"{version}"),
        help: nix_host_compiler_help(&"{newest-gcc}", &"{newest-clang}"),
    }
}

fn keep<K: Ord, V: PartialEq + std::fmt::Debug>(map: &mut BTreeMap<K, V>, key: K, value: V) {
    match map.get(&key) {
        Some(kept) => assert_eq!(*kept, value, "a problem text differs between releases"),
        None => {
            map.insert(key, value);
        }
    }
}

fn release(
    compat: &Compat,
    release: Version,
    capabilities: &[Capability],
    named: &Named,
    texts: &mut Texts,
) -> Release {
    let limits = compat.host_compilers.limits_for(release).expect("a release of the table").accepts();
    let alone = Against { compat, release: Some(release), platform: None, named };
    let mut not_accepted = BTreeMap::new();
    for &cap in capabilities {
        let info = compat.capabilities.get(cap).expect("a capability of the table");
        if info.accepted_by(release) {
            continue;
        }
        let kind = if release.release() < info.first_cuda.release() { "not-yet" } else { "dropped" };
        let text = |for_ptx| gpu::problem(cap, for_ptx, &alone).expect("not accepted is a problem").to_string();
        keep(
            texts.capabilities.entry(cap.to_string()).or_default(),
            kind,
            Problem { sass: text(false), ptx: text(true) },
        );
        not_accepted.insert(cap.to_string(), kind);
    }
    let mut pairs: BTreeMap<&'static str, Vec<Pair>> = BTreeMap::new();
    for (form, name) in FORMS {
        let found =
            capabilities.iter().enumerate().flat_map(|(i, &a)| capabilities[i + 1..].iter().map(move |&b| (a, b)));
        let mut refused = Vec::new();
        for refusal in found.filter_map(|(a, b)| compat.combinations.refuses(release, a, b, form)) {
            let said = texts.pair(name, &refusal, release);
            refused.push(Pair { a: refusal.a.to_string(), b: refusal.b.to_string(), said });
        }
        pairs.insert(name, refused);
    }
    let platforms = compat
        .platforms
        .all()
        .iter()
        .map(|p| (p.name.to_string(), platform(compat, release, p, capabilities, named, texts)))
        .collect();
    Release {
        newest: FAMILIES.iter().map(|f| (f.spelling, limits.newest(f.id))).collect(),
        accepts: limits.describe(),
        not_accepted,
        pairs,
        platforms,
    }
}

fn platform(
    compat: &Compat,
    release: Version,
    platform: &Platform,
    capabilities: &[Capability],
    named: &Named,
    texts: &mut Texts,
) -> PlatformAnswers {
    let against = Against { compat, release: Some(release), platform: Some(platform), named };
    let mut refused = BTreeMap::new();
    for &cap in capabilities.iter().filter(|c| compat.capabilities.get(**c).is_some_and(|i| i.accepted_by(release))) {
        if let Some(problem) = gpu::problem(cap, false, &against) {
            keep(texts.platforms.entry(platform.name.to_string()).or_default(), cap.to_string(), problem.to_string());
            let help = problem.help_naming(&RELEASE).map(|help| {
                let key = format!("{} {cap}", platform.name);
                once(&mut texts.helps, key, release.release(), help)
            });
            refused.insert(cap.to_string(), help);
        }
    }
    // What each keyword stands for (a word's meaning, not a request's targets: resolved, never expanded or checked).
    let words = [(Item::All, "all"), (Item::AllMajor, "all-major")]
        .into_iter()
        .map(|(item, name)| {
            let list = TargetList(vec![item]);
            let word = match gpu::resolve(&list, compat, Some(release), Some(platform), true, nix_build_gpus) {
                Ok(targets) => Word::Meaning(Meaning::from(&targets)),
                Err(e) => Word::Refused(e.into()),
            };
            (name, word)
        })
        .collect();
    PlatformAnswers {
        shipped: target::not_shipped(&compat.platforms, platform, release, named).map(|refused| {
            let said = Said { error: refused.message(&RELEASE), help: refused.help };
            once(&mut texts.shipped, platform.name.to_string(), release.release(), said)
        }),
        accepted: gpu::accepted_clause(&against),
        refused,
        words,
    }
}

/// The platform a Nix system and Nixpkgs' redist system name, as the binary resolves `[target] system` and
/// `platform` (`linux-aarch64` is Jetson, `linux-sbsa` an Arm server).
fn platform_of<'c>(
    compat: &'c Compat,
    system: &str,
    redist: Option<&str>,
    named: &Named,
) -> crate::error::Result<&'c Platform> {
    let chosen = match redist {
        Some(JETSON_REDIST) => Some(TargetPlatform::Jetson),
        Some("linux-sbsa") => Some(TargetPlatform::Sbsa),
        _ => None,
    };
    let target = TargetConfig {
        system: Some(Sourced::new(system.to_string(), Origin::Default)),
        platform: chosen.map(|p| Sourced::new(p, Origin::Default)),
        ..TargetConfig::default()
    };
    target::platform(&target, &compat.platforms, named)
}

#[cfg(test)]
mod tests {
    /// Issues 32 and 40: the Nix side keeps no parser, no pattern either, in any file (nix/ at any depth, the change
    /// set for Nixpkgs included). The two that tell names apart (makeNvccWrapper's toml.nix: whether a TOML key needs
    /// quotes; nix/extend-cuda.nix: which attributes are CUDA package sets, `cudaPackages_X_Y`) do it by the names'
    /// characters.
    #[test]
    fn the_nix_side_parses_no_version_and_no_capability() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("nix");
        let mut read = 0;
        let mut dirs = vec![dir.clone()];
        while let Some(at) = dirs.pop() {
            for entry in std::fs::read_dir(&at).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                    continue;
                }
                if !path.extension().is_some_and(|e| e == "nix") {
                    continue;
                }
                let name = path.strip_prefix(&dir).unwrap().display().to_string();
                let text = std::fs::read_to_string(&path).unwrap();
                for parser in [
                    "builtins.match",
                    "lib.match",
                    "splitString",
                    "splitVersion",
                    "lib.versions",
                    "toInt",
                    "versionAtLeast",
                    "versionOlder",
                    "compareVersions",
                ] {
                    assert!(!text.contains(parser), "nix/{name} uses {parser}: look the answer up in {}", super::FILE);
                }
                read += 1;
            }
        }
        assert!(read >= 8, "read {read} files of {}", dir.display());
    }
}
