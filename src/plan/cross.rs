//! Cross-compiling: what nvcc needs, besides a host compiler for the target (chosen by `host_compiler`), to build
//! for a CPU other than the one it runs on. Owns three decisions, each from `[target]` and the toolkit on disk:
//!
//! 1. Whether this NVCC release ships the target platform at all (`compat-data/platforms.toml`).
//! 2. Where the target's CUDA headers and libraries come from: `--target-directory=<dir>` when the toolkit has
//!    `TOP/targets/<dir>` (always passed, since nvcc guesses `sbsa-linux` for any aarch64 compiler, Jetson ones
//!    included), else `-I`/`-L` to `[target] cuda-root` (a Nix-style layout, where the target files are a store path
//!    of their own), else an error.
//! 3. The sysroot: `-Xcompiler=--sysroot=<S>` for every host-compiler call, and on links `-Xlinker=-rpath-link,...`
//!    with the sysroot's library directories, so that the linker finds the dependencies of the target's shared
//!    libraries there and not on the build machine.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::target::Named;
use super::{Addition, Plan};
use crate::args::{Invocation, Phase};
use crate::compat::{Platform, PlatformTable};
use crate::config::{Source, TargetConfig};
use crate::context::vars;
use crate::error::{Error, ErrorKind, Result};
use crate::probe::system::Probes;
use crate::version::Version;

/// Where the target's CUDA headers and libraries come from (for `doctor` and tests).
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
pub struct Decision {
    /// The platform's name (its directory under `targets/`).
    pub platform: String,
    pub files: TargetFiles,
    pub sysroot: Option<PathBuf>,
}

impl Decision {
    /// What `doctor` and `explain` show, as (label, value) lines: the target, the compiler for it, where its CUDA
    /// files and its system headers and libraries come from.
    pub fn lines(&self, compiler: Option<&Path>) -> Vec<(&'static str, String)> {
        let files = match &self.files {
            TargetFiles::Toolkit(dir) => format!("{} (the toolkit's, by --target-directory)", dir.display()),
            TargetFiles::CudaRoot(dir) => format!("{} (`[target] cuda-root`, by -I/-L)", dir.display()),
            TargetFiles::Given(dir) => format!("{dir} (the command line's target directory)"),
        };
        let compiler = compiler.map_or("given by the command line".into(), |c| c.display().to_string());
        let sysroot =
            self.sysroot.as_ref().map_or("none (the cross compiler's own)".into(), |s| s.display().to_string());
        vec![
            ("target", format!("{} (cross-compiled)", self.platform)),
            ("compiler", compiler),
            ("target CUDA", files),
            ("sysroot", sysroot),
        ]
    }
}

/// Fail unless this NVCC release ships the platform. An unknown release is let through (with a note): nvcc itself
/// will then say what it lacks.
pub fn check_shipped(
    platforms: &PlatformTable,
    platform: &Platform,
    release: &std::result::Result<Version, String>,
    named: &Named,
    notes: &mut Vec<String>,
) -> Result<()> {
    let release = match release {
        Ok(v) => v.release(),
        Err(e) => {
            notes.push(format!(
                "the NVCC release is unknown ({e}): whether it ships the target {} is not checked",
                platform.name
            ));
            return Ok(());
        }
    };
    if platform.shipped_in(release) {
        return Ok(());
    }
    let ranges: Vec<String> = platform
        .shipped
        .iter()
        .map(|r| match r.last_cuda {
            Some(last) => format!("{} to {}", r.first_cuda.release(), last.release()),
            None => format!("{} on", r.first_cuda.release()),
        })
        .collect();
    let mut help = format!("use an nvcc release that ships it ({})", ranges.join(", "));
    if platform.jetson {
        // The other platforms that serve Jetson parts, as compat-data/platforms.toml says (sbsa: Thor, Orin).
        let served: Vec<String> = platforms
            .jetson_served_by()
            .iter()
            .map(|s| {
                let how = match (&*s.platform, named.flags) {
                    ("sbsa-linux", true) => "`--platform sbsa`".to_string(),
                    ("sbsa-linux", false) => "`platform = \"sbsa\"`".to_string(),
                    (other, _) => format!("the target {other}"),
                };
                format!("Jetson {} from {} with {how}", s.part, s.first_cuda.release())
            })
            .collect();
        if !served.is_empty() {
            help.push_str(&format!(", or build for {}", served.join(", and ")));
        }
    }
    Err(Error::new(
        ErrorKind::Request,
        format!(
            "nvcc {release} does not build for the target {} ({}): NVIDIA ships it in {} only",
            platform.name,
            platform.nvidia_redist,
            ranges.join(", ")
        ),
    )
    .with_help(help))
}

/// What the planner knows about this call, for the cross step.
pub struct Step<'a> {
    pub invocation: &'a Invocation,
    /// `[target]`, its paths already absolute.
    pub target: &'a TargetConfig,
    /// Where those settings came from, for messages.
    pub source: &'a Source,
    pub probes: &'a dyn Probes,
    /// The real nvcc, whose toolkit root may hold the target directory.
    pub nvcc: &'a Path,
    pub platform: &'a Platform,
}

impl Step<'_> {
    /// Add the target's files and sysroot; errors when either is missing.
    pub fn decide(&self, plan: &mut Plan) -> Result<()> {
        let links = matches!(self.invocation.phase(), Phase::Link | Phase::Run);
        let files = self.target_files(links, plan)?;
        let sysroot = self.sysroot(links, plan)?;
        plan.cross = Some(Decision { platform: self.platform.name.to_string(), files, sysroot });
        Ok(())
    }

    fn target_files(&self, links: bool, plan: &mut Plan) -> Result<TargetFiles> {
        let dir = &self.platform.name;
        let cuda_root = self.cuda_root()?;
        if let Some(given) = self.invocation.target_directory() {
            let value = given.value.clone().unwrap_or_default().to_string_lossy().into_owned();
            plan.notes.push(format!(
                "the target directory is given by `{}` in {} ({value}): no target files are added",
                given.spelling,
                given.at.channel.describe(self.invocation)
            ));
            return Ok(TargetFiles::Given(value));
        }
        let root = self.probes.toolkit_root(self.nvcc);
        let in_toolkit = root.as_ref().ok().map(|r| r.join("targets").join(&**dir)).filter(|d| self.probes.exists(d));
        if let Some(in_toolkit) = in_toolkit {
            let mut reason = format!("the target {dir}: its CUDA files are in the toolkit, {}", in_toolkit.display());
            if let Some(c) = &cuda_root {
                reason.push_str(&format!(" (which nvcc prefers to `[target] cuda-root` {})", c.display()));
            }
            plan.before.push(Addition { args: vec![format!("--target-directory={dir}").into()], reason });
            return Ok(TargetFiles::Toolkit(in_toolkit));
        }
        let toolkit = match &root {
            Ok(r) => r.display().to_string(),
            Err(e) => format!("the toolkit of {} ({e})", self.nvcc.display()),
        };
        let Some(cuda_root) = cuda_root else {
            return Err(Error::new(
                ErrorKind::Request,
                format!("no CUDA files for the target {dir}: {toolkit} has no targets/{dir}, and `[target] cuda-root` is not set"),
            )
            .with_help(format!(
                "install the target's CUDA headers and libraries into {toolkit}/targets/{dir} (NVIDIA's cross packages), or set `[target] cuda-root` to a directory holding them (include/, lib/)"
            )));
        };
        let mut args: Vec<OsString> = vec![format!("-I{}", cuda_root.join("include").display()).into()];
        // CUDA 13 moved CCCL (Thrust, CUB, libcu++) into include/cccl, which nvcc adds by itself only for its own
        // target directories.
        let cccl = cuda_root.join("include/cccl");
        if self.probes.exists(&cccl) {
            args.push(format!("-isystem={}", cccl.display()).into());
        }
        if links {
            args.push(format!("-L{}", cuda_root.join("lib").display()).into());
        }
        plan.before.push(Addition {
            args,
            reason: format!(
                "the target {dir}: {toolkit} has no targets/{dir}, so its CUDA files come from `[target] cuda-root`"
            ),
        });
        Ok(TargetFiles::CudaRoot(cuda_root))
    }

    /// `[target] cuda-root`, checked whether or not it is used: a setting that names nothing is wrong for every call.
    fn cuda_root(&self) -> Result<Option<PathBuf>> {
        let Some(cuda_root) = self.target.cuda_root.clone() else { return Ok(None) };
        if !self.probes.exists(&cuda_root.join("include/cuda_runtime.h")) {
            let (kind, origin) = self.source.origin(vars::TARGET_CUDA_ROOT);
            return Err(Error::new(
                kind,
                format!("`[target] cuda-root` ({}, from {origin}) has no include/cuda_runtime.h", cuda_root.display()),
            )
            .with_help("point it at the target's CUDA headers and libraries (a directory with include/ and lib/)"));
        }
        Ok(Some(cuda_root))
    }

    fn sysroot(&self, links: bool, plan: &mut Plan) -> Result<Option<PathBuf>> {
        let Some(sysroot) = self.target.sysroot.clone() else { return Ok(None) };
        if !self.probes.exists(&sysroot) {
            let (kind, origin) = self.source.origin(vars::TARGET_SYSROOT);
            return Err(Error::new(
                kind,
                format!("`[target] sysroot` ({}, from {origin}) does not exist", sysroot.display()),
            )
            .with_help("point it at the target's root file system (with usr/include and usr/lib), or remove it to use the cross compiler's own"));
        }
        let mut args: Vec<OsString> = vec![format!("-Xcompiler=--sysroot={}", sysroot.display()).into()];
        if links {
            let dirs: Vec<String> = self
                .library_dirs(&sysroot)
                .into_iter()
                .filter(|d| self.probes.exists(d))
                .map(|d| d.display().to_string())
                .collect();
            if !dirs.is_empty() {
                args.push(format!("-Xlinker=-rpath-link,{}", dirs.join(":")).into());
            }
        }
        plan.before.push(Addition {
            args,
            reason: format!("`[target] sysroot`: the target's headers and libraries come from {}", sysroot.display()),
        });
        Ok(Some(sysroot))
    }

    /// The directories of a sysroot where the target's shared libraries live (multiarch first, as Debian has them).
    fn library_dirs(&self, sysroot: &Path) -> Vec<PathBuf> {
        let mut dirs = Vec::new();
        for base in ["lib", "usr/lib"] {
            for triple in self.platform.gnu_triples.iter() {
                dirs.push(sysroot.join(base).join(&**triple));
            }
        }
        dirs.extend(["lib64", "usr/lib64", "lib", "usr/lib"].map(|d| sysroot.join(d)));
        dirs
    }
}
