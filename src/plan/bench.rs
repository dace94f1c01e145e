//! The entry point `benches/plan.rs` measures: one drop-in call's own work, parsing nvcc's command line (options
//! files included) and planning it, with a config that records everything, so that no program runs and no PATH is
//! searched. Kept in the library, beside the code it measures, so that the crate's inside stays private.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::args::Invocation;
use crate::compat::Compat;
use crate::compat::Version;
use crate::config::Loaded;
use crate::context::Context;
use crate::plan::{self, Inputs};
use crate::plan::{FoundBy, RealNvcc};
use crate::probe::compiler::{Known, StdenvLibstdcxx};
use crate::probe::system::Probes;

/// A config and the tables, parsed once.
pub struct Planner {
    loaded: Loaded,
    compat: Compat,
}

/// Probes for a config that records everything: only the PATH lookup of the recorded compiler is asked, answered
/// without touching the disk, so that a measurement is the wrapper's own work.
struct Recorded;

impl Probes for Recorded {
    fn nvcc_version(&self, _: &Path) -> Result<(Version, &'static str), crate::probe::system::NvccUnknown> {
        Err(crate::probe::system::NvccUnknown::Failed("recorded in the config".into()))
    }
    fn compiler(&self, _: &Path) -> Result<Known, String> {
        Err("recorded in the config".into())
    }
    fn libstdcxx(&self, _: &Path) -> Result<StdenvLibstdcxx, String> {
        Err("recorded in the config".into())
    }
    fn resolve(&self, name: &Path) -> Option<PathBuf> {
        Some(name.to_path_buf())
    }
    fn installed_compilers(&self, _: Option<&str>) -> Vec<PathBuf> {
        Vec::new()
    }
    fn toolkit_root(&self, _: &Path) -> Result<PathBuf, String> {
        Err("recorded in the config".into())
    }
    fn exists(&self, _: &Path) -> bool {
        false
    }
}

impl Planner {
    /// `config`: a config file's text (it should record the release and the compilers).
    pub fn new(config: &str) -> Planner {
        let loaded = Loaded::from_text(config, Path::new("/etc/nvcc-wrapper/bench.toml")).expect("a valid config");
        Planner { loaded, compat: Compat::built_in() }
    }

    /// Parse `args` as nvcc's command line from `cwd` and plan it; how many arguments the wrapper adds.
    pub fn parse_and_plan(&self, cwd: &Path, args: &[OsString]) -> usize {
        let ctx = Context { cwd: cwd.to_path_buf(), ..Context::default() };
        let invocation = Invocation::parse_args(&ctx, args.to_vec()).expect("a command line the wrapper reads");
        let nvcc = RealNvcc {
            path: "/opt/cuda/bin/nvcc".into(),
            found_by: FoundBy::Config(crate::config::Origin::File(None)),
        };
        let plan = plan::plan(Inputs {
            invocation: &invocation,
            config: &self.loaded.config,
            compat: &self.compat,
            probes: &Recorded,
            nvcc,
            config_file: self.loaded.path.as_deref(),
            depth: 0,
            scratch: &|| "/nonexistent/scratch".into(),
            nvcc_process: &plan::NvccProcess::fixed(),
            jobserver: &crate::context::Jobserver::None,
            unknown_variables: &[],
        })
        .expect("a plan");
        plan.changes.before.iter().chain(&plan.changes.after).map(|a| a.args.len()).sum()
    }

    /// The arguments nvcc will see for `args`: the command line's, plus those read from options files.
    pub fn arguments(&self, cwd: &Path, args: &[OsString]) -> usize {
        let ctx = Context { cwd: cwd.to_path_buf(), ..Context::default() };
        let inv = Invocation::parse_args(&ctx, args.to_vec()).expect("a command line the wrapper reads");
        inv.argv.len() + inv.options_files.iter().map(|f| f.tokens.len()).sum::<usize>()
    }
}
