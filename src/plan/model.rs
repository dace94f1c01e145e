//! What a plan is: the arguments the wrapper adds before and after the user's, the user's tokens a documented policy
//! removes, the options files it writes, the environment it sets for nvcc, and a typed reason for every change, note
//! and warning (`Changes`), and the decisions behind them (`Decided`). Steps write the changes and return their
//! decisions; `report` shows a plan; `exec` runs it. Nothing here decides anything.

use std::any::Any;
use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use super::release::Release;
use crate::args::{Channel, Found, Invocation, Unread};
use crate::compat::CompilerFamily;
use crate::config::env::UnknownVariable;
use crate::context::vars;

/// A step's own words: a reason, note or warning, typed by the step (each step has its own enums, whose `Display`
/// is the sentence `explain` prints, and whose `codes!` declares each variant's stable code). Implemented for every
/// such type.
pub trait Message: fmt::Display + fmt::Debug + Coded + Send + Sync + 'static {
    fn as_any(&self) -> &dyn Any;
}

impl<T: fmt::Display + fmt::Debug + Coded + Send + Sync + 'static> Message for T {
    fn as_any(&self) -> &dyn Any {
        self
    }
}

pub(crate) use crate::error::codes;
pub use crate::error::Coded;

// The arguments layer cannot name the planner: its warning's codes are declared here.
codes!(Unread {
    NotRegular => "not-regular",
    Refused => "refused",
});

// Nor can the settings' layer: the codes of its warning about an `NVCC_WRAPPER_*` variable no one reads.
codes!(UnknownVariable {
    Misspelt => "misspelt",
    Unknown => "unknown",
});

/// A message and the step that said it.
#[derive(Clone)]
pub struct Said {
    /// The step's name (`host-compiler`, `gpu`, ...), as `explain --format json` gives it.
    pub step: &'static str,
    message: Arc<dyn Message>,
}

impl Said {
    pub fn new(step: &'static str, message: impl Message) -> Said {
        Said { step, message: Arc::new(message) }
    }

    /// The message as its step's type, for tests and tools that match variants.
    pub fn get<T: 'static>(&self) -> Option<&T> {
        // Through the trait object: the `Arc` is a `Message` itself, and would answer for itself.
        let message: &dyn Message = &*self.message;
        message.as_any().downcast_ref()
    }

    /// A stable name for the message (`Coded`).
    pub fn code(&self) -> String {
        self.message.code().to_string()
    }
}

impl fmt::Display for Said {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.message.fmt(f)
    }
}

impl fmt::Debug for Said {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}::{:?}", self.step, self.message)
    }
}

impl PartialEq for Said {
    fn eq(&self, other: &Said) -> bool {
        self.step == other.step && format!("{:?}", self.message) == format!("{:?}", other.message)
    }
}

impl Eq for Said {}

/// Tokens of the user's that the wrapper removes (only under an explicit policy), and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removal {
    pub found: Found,
    /// Every token it spans (the option, and its value when separate).
    pub positions: Vec<(Channel, usize)>,
    /// Those tokens, as given.
    pub tokens: Vec<OsString>,
    pub why: Said,
}

/// An options file the wrapper writes for nvcc to read in place of the user's (`[gpu] arch-flags = "replace"`
/// only): what remains of the files an `-optf` in argv names once GPU targets are taken out. Its name is its
/// contents' hash, so a build reuses it from call to call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenFile {
    /// The `-optf` occurrence in argv it takes the place of.
    pub replaces: Found,
    pub path: PathBuf,
    pub contents: Vec<u8>,
}

/// Arguments the wrapper adds, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Addition {
    pub args: Vec<OsString>,
    pub why: Said,
}

/// Files added to the dependency files a call writes, after nvcc ends (`plan::depfile`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DepfileInputs {
    /// The dependency files nvcc writes.
    pub depfiles: Vec<PathBuf>,
    /// What is added to each (only paths a dependency file can hold: `depfile::escape`).
    pub inputs: Vec<PathBuf>,
    /// nvcc writes a phony rule for every prerequisite (`-MP`): the inputs get theirs.
    pub phony: bool,
    pub why: Said,
}

/// Threads for nvcc from free job slots (`plan::threads`): how many the call takes is known only when nvcc starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadsDecision {
    /// At most this many threads, the call's own one included (`--threads N`, N from 2 to `most`).
    pub most: u32,
    /// The memory each thread takes at its peak, for the release (compat-data/threads.toml): what the memory free
    /// must hold when nvcc starts (`plan::threads::Memory`).
    pub per_thread_mib: u32,
    /// Threads follow the build while nvcc runs (`threads-follow`, `exec::follow`), rather than being taken once,
    /// when it starts.
    pub follow: bool,
    pub why: Said,
}

/// The GPU targets the wrapper added (`plan::gpu`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuDecision {
    /// How many target pipelines the added flags make nvcc run (one a `-gencode`, one for `-arch=sm_XY`).
    pub targets: u32,
}

/// The host compiler the wrapper told nvcc to use, and whose libstdc++ the programs it links will load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostDecision {
    pub compiler: PathBuf,
    /// Its family: what the reproducible-builds step measures flags against.
    pub family: CompilerFamily,
    /// The stdenv compiler the choice was made against, when one is known (for `doctor`).
    pub stdenv: Option<PathBuf>,
    /// Set when the wrapper pointed the link at the stdenv's libstdc++ (this directory, by rpath).
    pub libstdcxx_dir: Option<PathBuf>,
}

/// Where a cross build's target CUDA headers and libraries come from (for `doctor` and tests).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetFiles {
    /// `TOP/targets/<dir>` of the toolkit, through `--target-directory`.
    Toolkit(PathBuf),
    /// `[target] cuda-root`, through `-I`/`-L`.
    CudaRoot(PathBuf),
    /// The command line names a target directory itself: nothing is added.
    Given(String),
}

/// The cross-build decisions of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrossDecision {
    /// The platform's name (its directory under `targets/`).
    pub platform: String,
    pub files: TargetFiles,
    pub sysroot: Option<PathBuf>,
}

/// What the wrapper changes in nvcc's call, with a reason for each change, and what it says besides: what the steps
/// write while they decide. A step sees its own changes and those of the steps before it; it never sees their
/// decisions here (those reach it as its `Step::Needs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changes {
    /// Added before the user's arguments.
    pub before: Vec<Addition>,
    /// Added after the user's arguments.
    pub after: Vec<Addition>,
    /// The user's options taken out (under a documented policy only).
    pub removed: Vec<Removal>,
    /// Options files written for nvcc in place of the user's that lost tokens (`replace` only).
    pub written: Vec<WrittenFile>,
    /// Environment variables set for nvcc.
    pub env: Vec<(&'static str, OsString)>,
    /// Decisions that changed nothing, with why (shown by `explain` and the debug log).
    pub notes: Vec<Said>,
    /// Problems the user should hear about even though the call goes ahead (printed on stderr).
    pub warnings: Vec<Said>,
    /// The step deciding now: what it says is said by it.
    step: &'static str,
    /// Every step entered, in order: what the step-order test compares with `STEP_NAMES`.
    #[cfg(test)]
    pub entered: Vec<&'static str>,
}

/// What the steps decided, each the value its step returned (`plan::run`): what `exec`, `report` and `doctor` act on
/// once planning is over. No step can reach it while planning.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Decided {
    /// The NVCC release the decisions were made for; `None` when the call needed none (a query, say).
    pub release: Option<Release>,
    /// The host compiler the wrapper chose, when it chose one.
    pub host: Option<HostDecision>,
    /// The target, its CUDA files and sysroot, when it is another CPU.
    pub cross: Option<CrossDecision>,
    /// The GPU targets the wrapper added, when it added any.
    pub gpu: Option<GpuDecision>,
    /// Threads nvcc may take from free job slots; when it takes any, the wrapper waits for nvcc to give them back.
    pub threads: Option<ThreadsDecision>,
    /// What to add to the dependency files nvcc writes; the wrapper then waits for nvcc instead of replacing itself.
    pub depfile: Option<DepfileInputs>,
    /// The compiler cache nvcc runs through (`launcher`), resolved; `None` runs nvcc directly.
    pub launcher: Option<PathBuf>,
    /// The wrapper added `-objtemp`: nvcc's temporary files are named after the output, beside it (what a killed
    /// call leaves is there, not in the temporary directory).
    pub intermediates_beside_output: bool,
}

/// A decided call: the real nvcc, what changes in its call, and the decisions behind it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub nvcc: RealNvcc,
    pub changes: Changes,
    pub decided: Decided,
}

impl Changes {
    /// No change yet: nvcc would run with the user's arguments untouched.
    pub fn new(depth: u32) -> Changes {
        Changes {
            before: Vec::new(),
            after: Vec::new(),
            removed: Vec::new(),
            written: Vec::new(),
            // Raised on every exec, so that a chain leading back to a wrapper stops (see `locate`).
            env: vec![(vars::DEPTH, (depth + 1).to_string().into())],
            notes: Vec::new(),
            warnings: Vec::new(),
            step: "plan",
            #[cfg(test)]
            entered: Vec::new(),
        }
    }

    /// From now on, what is said is said by `step`.
    pub(super) fn enter(&mut self, step: &'static str) {
        self.step = step;
        #[cfg(test)]
        self.entered.push(step);
    }

    pub fn said(&self, message: impl Message) -> Said {
        Said::new(self.step, message)
    }

    pub fn note(&mut self, message: impl Message) {
        let said = self.said(message);
        self.notes.push(said);
    }

    pub fn warn(&mut self, message: impl Message) {
        let said = self.said(message);
        self.warnings.push(said);
    }

    /// Add `args` before the user's arguments, after what earlier steps added there.
    pub fn add_before(&mut self, args: Vec<OsString>, why: impl Message) {
        let why = self.said(why);
        self.before.push(Addition { args, why });
    }

    /// Add `args` first of all, before what earlier steps added.
    pub fn add_first(&mut self, args: Vec<OsString>, why: impl Message) {
        let why = self.said(why);
        self.before.insert(0, Addition { args, why });
    }

    /// Add `args` after the user's arguments.
    pub fn add_after(&mut self, args: Vec<OsString>, why: impl Message) {
        let why = self.said(why);
        self.after.push(Addition { args, why });
    }

    /// Set an environment variable for nvcc (replacing what a step set before).
    pub fn set_env(&mut self, name: &'static str, value: OsString) {
        self.env.retain(|(n, _)| *n != name);
        self.env.push((name, value));
    }
}

impl Plan {
    /// A plan that runs nvcc with the user's arguments untouched.
    pub fn pass_through(nvcc: RealNvcc, depth: u32) -> Plan {
        Plan { nvcc, changes: Changes::new(depth), decided: Decided::default() }
    }

    #[cfg(test)]
    /// Every message of type `T` this plan holds (notes, warnings, reasons of additions and removals), in that
    /// order: what tests match.
    pub fn all_said<T: Message>(&self) -> impl Iterator<Item = &T> {
        let (c, d) = (&self.changes, &self.decided);
        let reasons = c.before.iter().chain(&c.after).map(|a| &a.why).chain(d.depfile.iter().map(|d| &d.why));
        let reasons = reasons.chain(d.threads.iter().map(|t| &t.why));
        let removals = c.removed.iter().map(|r| &r.why);
        c.notes.iter().chain(&c.warnings).chain(reasons).chain(removals).filter_map(|s| s.get::<T>())
    }

    /// The arguments nvcc receives after argv[0]: ours before, the user's exactly as given (less any removals),
    /// ours after.
    pub fn command(&self, inv: &Invocation) -> Vec<OsString> {
        let c = &self.changes;
        let ours = |adds: &[Addition]| adds.iter().flat_map(|a| a.args.clone()).collect::<Vec<_>>();
        let mut args = ours(&c.before);
        if c.removed.is_empty() {
            args.extend(inv.argv.iter().cloned());
        } else {
            args.extend(argv(inv, &c.removed, &c.written));
        }
        args.extend(ours(&c.after));
        args
    }

    pub fn changes_nothing(&self) -> bool {
        let c = &self.changes;
        c.before.is_empty()
            && c.after.is_empty()
            && c.removed.is_empty()
            && c.written.is_empty()
            && self.decided.depfile.is_none()
            && self.decided.threads.is_none()
    }
}

/// Token positions: (channel, index). Ordered, not hashed: a hash set would seed its hasher from the kernel's random
/// source, one system call more on every drop-in call.
pub(super) type Positions = std::collections::BTreeSet<(Channel, usize)>;

/// argv as nvcc will see it after the removals: removed tokens dropped, and each `-optf` whose files lost tokens
/// naming the file written in their place.
fn argv(inv: &Invocation, removals: &[Removal], written: &[WrittenFile]) -> Vec<OsString> {
    let removed = positions(removals);
    let tokens = &inv.argv;
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if removed.contains(&(Channel::Argv, i)) {
            i += 1;
            continue;
        }
        if let Some(w) = written.iter().find(|w| w.replaces.at.index == i) {
            out.push(OsString::from("-optf"));
            out.push(w.path.clone().into_os_string());
            i += w.replaces.at.tokens;
            continue;
        }
        out.push(tokens[i].clone());
        i += 1;
    }
    out
}

/// Every token position the removals take out.
pub(super) fn positions(removals: &[Removal]) -> Positions {
    removals.iter().flat_map(|r| r.positions.iter().copied()).collect()
}

/// The real nvcc and how it was found (for `explain` and the debug log).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RealNvcc {
    /// The path to exec and to pass as argv[0]: as configured or as found on PATH, symlinks kept, because nvcc
    /// reads `nvcc.profile` from the directory of argv[0] without resolving them.
    pub path: PathBuf,
    pub found_by: FoundBy,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FoundBy {
    /// The config's `nvcc`, where it was set.
    Config(crate::config::Origin),
    Path,
}

impl std::fmt::Display for FoundBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FoundBy::Config(origin) => write!(f, "`nvcc` in {origin}"),
            FoundBy::Path => f.write_str("the first nvcc on PATH that is not this wrapper"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    enum Words {
        StdenvAccepted { compiler: String },
        Plain,
    }

    codes!(Words {
        StdenvAccepted => "stdenv-accepted",
        Plain => "plain",
    });

    /// Every declared code is its variant's name in kebab case, as docs/reference/explain-json.md promises: read from
    /// the `codes!` of every file under src/ (`layering`'s list: the crate root and the binary declare none).
    #[test]
    fn every_declared_code_is_its_variant_in_kebab_case() {
        let mut declared = 0;
        for file in crate::checks::layering::sources() {
            let text = std::fs::read_to_string(&file).unwrap();
            for block in text.split("codes!(").skip(1) {
                let body = &block[..block.find("});").unwrap_or(0)];
                // One `Variant => "code",` a line (the doc comment's one-line example is not a declaration).
                for line in
                    body.lines().filter(|l| l.contains(" => \"") && l.trim().ends_with("\",") && !l.contains('{'))
                {
                    let (variant, code) = line.trim().trim_end_matches(',').split_once(" => ").unwrap();
                    let mut kebab = String::new();
                    for (i, c) in variant.chars().enumerate() {
                        if c.is_uppercase() && i > 0 {
                            kebab.push('-');
                        }
                        kebab.extend(c.to_lowercase());
                    }
                    assert_eq!(code.trim_matches('"'), kebab, "{}", file.display());
                    declared += 1;
                }
            }
        }
        assert!(declared >= 75, "found {declared} codes");
    }

    impl fmt::Display for Words {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self {
                Words::StdenvAccepted { compiler } => write!(f, "{compiler} is accepted"),
                Words::Plain => f.write_str("plain"),
            }
        }
    }

    #[test]
    fn a_message_keeps_its_type_its_step_and_a_stable_code() {
        let said = Said::new("host-compiler", Words::StdenvAccepted { compiler: "g++".into() });
        assert_eq!(said.to_string(), "g++ is accepted");
        assert_eq!(said.code(), "stdenv-accepted");
        assert!(matches!(said.get::<Words>(), Some(Words::StdenvAccepted { .. })));
        assert!(said.get::<String>().is_none());
        assert_eq!(Said::new("gpu", Words::Plain).code(), "plain");
        assert_ne!(said, Said::new("gpu", Words::StdenvAccepted { compiler: "g++".into() }), "the step counts");
    }
}
