//! The compilers the host-compiler rule chooses among: the stdenv compiler and the candidates, from this step's
//! section of the config (recorded facts are used as they are) or from PATH, probed only when a fact is missing;
//! and the errors that name them.

use std::path::PathBuf;

use super::messages::Note;
use super::problems::Refused;
use crate::compat::Version;
use crate::compat::{Accepts, FAMILIES};
use crate::config::{CompilerEntry, HostCompilerConfig, HostKey, Key, Origin, Sourced};
use crate::error::Error;
use crate::plan::facts::Facts;
use crate::plan::model::Changes;
use crate::probe::compiler::Known;

/// What the stdenv compiler is, as far as the wrapper can tell.
pub(super) enum Stdenv {
    Known(Known),
    /// None configured, and no `g++` on PATH.
    None,
    /// A configured name that is no program here, with why: left out, as nvcc would fail on it.
    Absent(String),
    /// A program, which could not be asked what it is (its probe failed, or was stopped), with why. `configured`:
    /// named in the config, not found on PATH.
    Unprobed {
        path: PathBuf,
        configured: bool,
        why: String,
    },
}

pub(super) struct Compilers<'a, 'f> {
    pub facts: &'a Facts<'f>,
    pub settings: &'a HostCompilerConfig,
}

impl Compilers<'_, '_> {
    /// The stdenv compiler: the config's, else `g++` on PATH (what nvcc itself runs by default), or for a cross
    /// build the first `TRIPLE-g++` on PATH; or why what it found could not be asked what it is. A configured one
    /// that builds for another machine is an error: every object of the build comes from it.
    pub fn stdenv_probed(&self) -> Result<Stdenv, Error> {
        let configured = self.settings.stdenv.is_some();
        let entry = match &self.settings.stdenv {
            Some(entry) => entry.clone(),
            None => {
                let mut names = self.default_prefixes().into_iter().map(|p| PathBuf::from(format!("{p}g++")));
                match names.find_map(|name| self.facts.probes.resolve(&name)) {
                    Some(path) => Sourced::new(CompilerEntry::path(path), Origin::Default),
                    None => return Ok(Stdenv::None),
                }
            }
        };
        let known = match self.known(&entry, HostKey::Stdenv) {
            Ok(k) => k,
            Err(why) => {
                return Ok(match self.facts.probes.resolve(&entry.path) {
                    Some(path) => Stdenv::Unprobed { path, configured, why },
                    None => Stdenv::Absent(why),
                });
            }
        };
        if self.facts.cross && !self.builds_for_target(&known) {
            let how = match &entry.origin {
                Origin::Default => format!("`{}`", self.key(HostKey::Stdenv)),
                origin => format!("`{}` in {origin}", self.key(HostKey::Stdenv)),
            };
            return Err(self.wrong_machine(
                &known,
                &how,
                "name the target's compiler there (e.g. aarch64-linux-gnu-g++ for aarch64)",
            ));
        }
        Ok(Stdenv::Known(known))
    }

    /// The candidates: the config's list, else every `g++[-N]` and `clang++[-N]` on PATH (for a cross build, those
    /// with the target's triple in front). A cross candidate for another machine is left out, with a note.
    pub fn candidates(&self, plan: &mut Changes) -> Vec<Known> {
        let configured = &self.settings.candidates;
        let entries: Vec<Sourced<CompilerEntry>> = if configured.is_empty() {
            let mut found: Vec<PathBuf> = Vec::new();
            for triple in self.triples() {
                for path in self.facts.probes.installed_compilers(triple) {
                    if !found.contains(&path) {
                        found.push(path);
                    }
                }
            }
            found.into_iter().map(|path| Sourced::new(CompilerEntry::path(path), Origin::Default)).collect()
        } else {
            configured.clone()
        };
        let mut known = Vec::new();
        for entry in &entries {
            match self.known(entry, HostKey::Candidates) {
                Ok(k) if self.facts.cross && !self.builds_for_target(&k) => {
                    plan.note(Note::CandidateForAnotherMachine { compiler: k })
                }
                Ok(k) => known.push(k),
                Err(why) => plan.note(Note::CandidateLeftOut { why }),
            }
        }
        known
    }

    /// A compiler entry with family and version: as recorded in the config, or probed. For a cross build the target
    /// machine is needed too, so an entry that does not record it is probed. One the config names (as `key` of this
    /// step's section) and that is no program here is named with the line that names it.
    fn known(&self, entry: &Sourced<CompilerEntry>, key: HostKey) -> Result<Known, String> {
        let Some(path) = self.facts.probes.resolve(&entry.path) else {
            let named = match entry.origin {
                Origin::Default => crate::error::shell::path(&entry.path),
                _ => entry.named(self.key(key)),
            };
            return Err(format!("{named} is not an executable here"));
        };
        let target_needed = self.facts.cross && entry.target.is_none();
        match (entry.family, entry.version) {
            (Some(family), Some(version)) if !target_needed => {
                Ok(Known { path, family, version, target: entry.target.clone() })
            }
            _ => self.facts.probes.compiler(&path),
        }
    }

    /// Whether a compiler builds code for the target platform (its `-dumpmachine` triple names the platform's CPU).
    pub fn builds_for_target(&self, k: &Known) -> bool {
        k.target.as_deref().is_some_and(|t| self.facts.platform.matches_triple(t))
    }

    /// The GNU triples whose compilers are looked for on PATH: none natively, the target's for a cross build.
    fn triples(&self) -> Vec<Option<&str>> {
        match self.facts.cross {
            true => self.facts.platform.gnu_triples.iter().map(|t| Some(&**t)).collect(),
            false => vec![None],
        }
    }

    /// Name prefixes of the default compilers: none natively, `TRIPLE-` for each of the target's triples.
    fn default_prefixes(&self) -> Vec<String> {
        self.triples().into_iter().map(|t| t.map(|t| format!("{t}-")).unwrap_or_default()).collect()
    }

    /// `key` of the config section the compilers come from.
    pub fn key(&self, key: HostKey) -> Key {
        Key::Host { cross: self.facts.cross, key }
    }

    /// The config section the compilers come from.
    pub fn section(&self) -> &'static str {
        if self.facts.cross {
            "[target.host-compiler]"
        } else {
            "[host-compiler]"
        }
    }

    /// A cross build with no compiler for the target at all; `left_out`: why the configured one is not used.
    pub fn no_cross_compiler(&self, left_out: Option<String>) -> Error {
        let platform = self.facts.platform;
        let names: Vec<String> = self.default_prefixes().iter().map(|p| format!("{p}g++")).collect();
        // Debian names its cross compiler packages after the triple, with `x86-64` for `x86_64`.
        let package = format!("Debian's g++-{}", platform.gnu_triples[0].replacen('_', "-", 1));
        let key = Key::Host { cross: true, key: HostKey::Stdenv }.to_string();
        Refused::NoCross { platform: platform.name.to_string(), names, left_out, package, key }.into()
    }

    /// Nothing this release accepts, among `considered` (which may be nothing at all).
    pub fn none_accepted(&self, considered: &[Known], release: Version, accepts: Accepts) -> Error {
        let (prefix, target) = match self.facts.cross {
            true => (format!("{}-", self.facts.platform.gnu_triples[0]), format!(" for {}", self.facts.platform.name)),
            false => (String::new(), String::new()),
        };
        let each: Vec<String> =
            FAMILIES.iter().map(|f| format!("{prefix}{}-{}", f.driver, accepts.newest(f.id))).collect();
        let install = each.join(" or ");
        let (section, accepts) = (self.section(), accepts.describe());
        // Nothing at all to choose from: there is nothing to allow either.
        if considered.is_empty() {
            let (stdenv, candidates) = (self.key(HostKey::Stdenv), self.key(HostKey::Candidates));
            let named: Vec<String> = (self.settings.stdenv.iter().map(|e| e.named(stdenv)))
                .chain(self.settings.candidates.iter().map(|e| e.named(candidates)))
                .collect();
            // Configured candidates replace PATH's; each compiler left out has a note `explain` shows.
            let candidates = !self.settings.candidates.is_empty();
            let stdenv = stdenv.to_string();
            return Refused::NoneAtAll { target, release, accepts, section, named, candidates, install, stdenv }.into();
        }
        let listed = considered.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(", ");
        let platform = self.facts.cross.then(|| self.facts.platform.name.to_string());
        Refused::NoneUsable { platform, release, accepts, listed, install, section }.into()
    }

    /// A compiler that builds for another machine than the target; `how` says where it was named.
    pub fn wrong_machine(&self, k: &Known, how: &str, fix: &str) -> Error {
        let platform = self.facts.platform;
        Refused::WrongMachine {
            how: how.to_string(),
            compiler: k.to_string(),
            builds_for: k.target.as_deref().unwrap_or("an unknown machine").to_string(),
            platform: platform.name.to_string(),
            triple: platform.gnu_triples[0].to_string(),
            fix: fix.to_string(),
        }
        .into()
    }
}
