//! The CUDA forward-compatibility library on Jetson (`[target] cuda-compat`): a newer `libcuda.so` that lets programs
//! built with a newer toolkit run on a Jetson whose driver (from its L4T release) is older. It works only if the
//! dynamic loader finds it before the driver's own `libcuda.so`, so every executable or shared library nvcc links
//! for a Jetson gets the directory as the first entry of its runpath: before any other `-rpath` the wrapper adds
//! and before the command line's own (a NixOS driver path such as `/run/opengl-driver/lib` included), and not by
//! `LD_LIBRARY_PATH`, which would reach every program the build starts. Compiles, device links and static libraries
//! get nothing; neither does a build for any other GPU.

use std::path::{Path, PathBuf};

use super::{Addition, Plan};
use crate::args::{Invocation, Phase};
use crate::compat::{CapabilityTable, Platform};
use crate::config::{GpuConfig, Source};
use crate::context::vars;
use crate::error::{Error, Result};
use crate::probe::system::Probes;

/// What the planner knows about this call, for the cuda-compat step.
pub struct Step<'a> {
    pub invocation: &'a Invocation,
    /// `[target] cuda-compat`, already absolute.
    pub dir: Option<&'a Path>,
    pub source: &'a Source,
    pub probes: &'a dyn Probes,
    pub platform: &'a Platform,
    pub gpu: &'a GpuConfig,
    pub capabilities: &'a CapabilityTable,
}

impl Step<'_> {
    /// Put the directory first in the runpath of what this call links, when it links for a Jetson.
    pub fn decide(&self, plan: &mut Plan) -> Result<()> {
        let Some(dir) = self.dir else { return Ok(()) };
        // Checked on every call, as a setting that names nothing is wrong for the whole build.
        self.check(dir)?;
        if !self.for_jetson() {
            plan.notes.push(format!(
                "`[target] cuda-compat` is set, but this build is not for a Jetson (target {}, capabilities {}): its runpath is not added",
                self.platform.name,
                self.describe_capabilities()
            ));
            return Ok(());
        }
        if !matches!(self.invocation.phase(), Phase::Link | Phase::Run) {
            return Ok(());
        }
        // First of the wrapper's additions, so that it also comes before the libstdc++ runpath and the user's own.
        plan.before.insert(
            0,
            Addition {
                args: vec![format!("-Xlinker=-rpath,{}", dir.display()).into()],
                reason: format!(
                    "`[target] cuda-compat`: the Jetson forward-compatibility libcuda in {} is found before the driver's",
                    dir.display()
                ),
            },
        );
        Ok(())
    }

    /// A Jetson build: the Jetson platform, or another platform building only Jetson capabilities (Thor from 13.0
    /// and Orin from 13.2 on the unified Arm toolkit; which platform may serve which part is the GPU step's check,
    /// from compat-data/platforms.toml).
    fn for_jetson(&self) -> bool {
        let jetson = |c| self.capabilities.get(c).is_some_and(|info| info.is_jetson());
        self.platform.jetson || (!self.gpu.capabilities.is_empty() && self.gpu.capabilities.iter().all(|c| jetson(*c)))
    }

    fn describe_capabilities(&self) -> String {
        if self.gpu.capabilities.is_empty() {
            return "none configured".to_string();
        }
        self.gpu.capabilities.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(", ")
    }

    fn check(&self, dir: &Path) -> Result<()> {
        let libcuda: [PathBuf; 2] = [dir.join("libcuda.so"), dir.join("libcuda.so.1")];
        if libcuda.iter().any(|l| self.probes.exists(l)) {
            return Ok(());
        }
        let (kind, origin) = self.source.origin(vars::TARGET_CUDA_COMPAT);
        Err(Error::new(
            kind,
            format!("`[target] cuda-compat` ({}, from {origin}) has no libcuda.so or libcuda.so.1", dir.display()),
        )
        .with_help("point it at the directory of the cuda_compat package's libcuda.so (its lib/), or remove it"))
    }
}
