//! Cross-compiling: what nvcc needs, besides a host compiler for the target (chosen by `host_compiler`), to build
//! for a CPU other than the one it runs on. Whether this NVCC release ships the target platform at all is a fact
//! (`target::resolve`). Owns two decisions, each from `[target]` and the toolkit on disk:
//!
//! 1. Where the target's CUDA headers and libraries come from: `--target-directory=<dir>` when the toolkit has
//!    `TOP/targets/<dir>` (always passed, since nvcc guesses `sbsa-linux` for any aarch64 compiler, Jetson ones
//!    included), else `-I`/`-L` to `[target] cuda-root` (a Nix-style layout, where the target files are a store path
//!    of their own), else an error.
//! 2. The sysroot: `-Xcompiler=--sysroot=<S>` for every host-compiler call, and on links `-Xlinker=-rpath-link,...`
//!    with the sysroot's library directories, so that the linker finds the dependencies of the target's shared
//!    libraries there and not on the build machine.

use crate::compat::Text;
use crate::plan::model::codes;
use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};

use super::facts::Facts;
use super::model::{Changes, CrossDecision, TargetFiles};
use super::Step;
use crate::args::split::joined;
use crate::args::Given;
use crate::config::{Config, Key, TargetConfig};
use crate::error::Result;

pub struct Cross;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    TargetDirectoryGiven { given: Given },
}

codes!(Note {
    TargetDirectoryGiven => "target-directory-given",
});

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// `platform`: the platform's name, its `targets/` directory.
    InToolkit {
        platform: Text,
        dir: PathBuf,
        unused_cuda_root: Option<PathBuf>,
    },
    /// `toolkit`: the toolkit's directory, or why it is not known (a probe's own words).
    FromCudaRoot {
        platform: Text,
        toolkit: String,
    },
    Sysroot {
        sysroot: PathBuf,
    },
}

codes!(Reason {
    InToolkit => "in-toolkit",
    FromCudaRoot => "from-cuda-root",
    Sysroot => "sysroot",
});

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::TargetDirectoryGiven { given } => {
                write!(f, "the target directory is given by {given}: no target files are added")
            }
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::InToolkit { platform, dir, unused_cuda_root } => {
                write!(f, "the target {platform}: its CUDA files are in the toolkit, {}", crate::error::shell::path(dir))?;
                if let Some(c) = unused_cuda_root {
                    write!(f, " (which nvcc prefers to `[target] cuda-root` {})", crate::error::shell::path(c))?;
                }
                Ok(())
            }
            Reason::FromCudaRoot { platform, toolkit } => write!(
                f,
                "the target {platform}: {toolkit} has no targets/{platform}, so its CUDA files come from `[target] cuda-root`"
            ),
            Reason::Sysroot { sysroot } => {
                write!(f, "`[target] sysroot`: the target's headers and libraries come from {}", crate::error::shell::path(sysroot))
            }
        }
    }
}

impl Step for Cross {
    const NAME: &'static str = "cross";
    /// `[target]`, its paths already absolute.
    type Section = TargetConfig;
    type Needs<'d> = ();
    /// `None` for this CPU.
    type Decision = Option<CrossDecision>;

    fn section<'c>(config: &'c Config, _: &Facts) -> &'c Self::Section {
        &config.target
    }

    /// For another CPU: add the target's files and sysroot; errors when either is missing.
    fn decide(facts: &Facts, target: &TargetConfig, _: (), plan: &mut Changes) -> Result<Option<CrossDecision>> {
        if !facts.cross {
            return Ok(None);
        }
        let files = target_files(facts, target, plan)?;
        let sysroot = sysroot(facts, target, plan)?;
        Ok(Some(CrossDecision { platform: facts.platform.name.to_string(), files, sysroot }))
    }
}

fn target_files(facts: &Facts, target: &TargetConfig, plan: &mut Changes) -> Result<TargetFiles> {
    let inv = facts.invocation;
    let dir = &facts.platform.name;
    let cuda_root = cuda_root(facts, target)?;
    if let Some(given) = inv.target_directory() {
        let value = given.value.clone().unwrap_or_default().to_string_lossy().into_owned();
        plan.note(Note::TargetDirectoryGiven { given: inv.given(&[given]) });
        return Ok(TargetFiles::Given(value));
    }
    let root = facts.probes.toolkit_root(facts.nvcc);
    let in_toolkit = root.as_ref().ok().map(|r| r.join("targets").join(&**dir)).filter(|d| facts.probes.exists(d));
    if let Some(in_toolkit) = in_toolkit {
        let why = Reason::InToolkit { platform: dir.clone(), dir: in_toolkit.clone(), unused_cuda_root: cuda_root };
        plan.add_before(vec![format!("--target-directory={dir}").into()], why);
        return Ok(TargetFiles::Toolkit(in_toolkit));
    }
    let toolkit = match &root {
        Ok(r) => crate::error::shell::path(r),
        Err(e) => format!("the toolkit of {} ({e})", crate::error::shell::path(facts.nvcc)),
    };
    let Some(cuda_root) = cuda_root else {
        return Err(super::target::Refused::NoTargetFiles { dir: dir.to_string(), toolkit }.into());
    };
    // nvcc's own options, which nvcc quotes for the host compiler: any path passes, byte for byte.
    let mut args: Vec<OsString> = vec![joined("-I", &cuda_root.join("include"))];
    // CUDA 13 moved CCCL (Thrust, CUB, libcu++) into include/cccl, which nvcc adds by itself only for its own target
    // directories.
    let cccl = cuda_root.join("include/cccl");
    if facts.probes.exists(&cccl) {
        args.push(joined("-isystem=", &cccl));
    }
    if inv.links() {
        args.push(joined("-L", &cuda_root.join("lib")));
    }
    plan.add_before(args, Reason::FromCudaRoot { platform: dir.clone(), toolkit });
    Ok(TargetFiles::CudaRoot(cuda_root))
}

/// `[target] cuda-root`, checked whether or not it is used: a setting that names nothing is wrong for every call.
fn cuda_root(facts: &Facts, target: &TargetConfig) -> Result<Option<PathBuf>> {
    let Some(cuda_root) = &target.cuda_root else { return Ok(None) };
    if !facts.probes.exists(&cuda_root.join("include/cuda_runtime.h")) {
        return Err(cuda_root
            .error(Key::CudaRoot, "has no include/cuda_runtime.h")
            .with_help("point it at the target's CUDA headers and libraries (a directory with include/ and lib/)"));
    }
    Ok(Some(cuda_root.value.clone()))
}

fn sysroot(facts: &Facts, target: &TargetConfig, plan: &mut Changes) -> Result<Option<PathBuf>> {
    let Some(sysroot) = &target.sysroot else { return Ok(None) };
    if !facts.probes.exists(sysroot) {
        return Err(sysroot.error(Key::Sysroot, "does not exist").with_help(
            "point it at the target's root file system (with usr/include and usr/lib), or remove it to use the cross compiler's own",
        ));
    }
    // Inside -X lists: checked here, so that the directories below it pass too.
    super::passable(Key::Sysroot, sysroot, "the cross compiler")?;
    let mut args: Vec<OsString> = vec![joined("-Xcompiler=--sysroot=", sysroot)];
    if facts.invocation.links() {
        let dirs: Vec<PathBuf> = library_dirs(facts, sysroot).into_iter().filter(|d| facts.probes.exists(d)).collect();
        if !dirs.is_empty() {
            let mut arg = OsString::from("-Xlinker=-rpath-link,");
            arg.push(std::env::join_paths(&dirs).expect("no colon: checked above"));
            args.push(arg);
        }
    }
    plan.add_before(args, Reason::Sysroot { sysroot: sysroot.value.clone() });
    Ok(Some(sysroot.value.clone()))
}

/// The directories of a sysroot where the target's shared libraries live (multiarch first, as Debian has them).
fn library_dirs(facts: &Facts, sysroot: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for base in ["lib", "usr/lib"] {
        for triple in facts.platform.gnu_triples.iter() {
            dirs.push(sysroot.join(base).join(&**triple));
        }
    }
    dirs.extend(["lib64", "usr/lib64", "lib", "usr/lib"].map(|d| sysroot.join(d)));
    dirs
}
