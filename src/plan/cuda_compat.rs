//! The CUDA forward-compatibility library on Jetson (`[target] cuda-compat`): a newer `libcuda.so` that lets programs
//! built with a newer toolkit run on a Jetson whose driver (from its L4T release) is older. It works only if the
//! dynamic loader finds it before the driver's own `libcuda.so`, so every executable or shared library nvcc links
//! for a Jetson gets the directory as the first entry of its runpath: before any other `-rpath` the wrapper adds
//! and before the command line's own (a NixOS driver path such as `/run/opengl-driver/lib` included), and not by
//! `LD_LIBRARY_PATH`, which would reach every program the build starts. Compiles, device links and static libraries
//! get nothing; neither does a build for any other GPU.

use crate::compat::Text;
use crate::plan::model::codes;
use std::fmt;
use std::path::PathBuf;

use super::facts::Facts;
use super::model::Changes;
use super::Step;
use crate::args::split::joined;
use crate::config::{Config, Key, Sourced};
use crate::error::Result;

pub struct CudaCompat;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    NotJetson { platform: Text },
}

codes!(Note {
    NotJetson => "not-jetson",
});

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    FirstInRunpath { dir: PathBuf },
}

codes!(Reason {
    FirstInRunpath => "first-in-runpath",
});

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::NotJetson { platform } => write!(
                f,
                "`[target] cuda-compat` is set, but this build is not for a Jetson (target {platform}, and not only Jetson capabilities): its runpath is not added"
            ),
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::FirstInRunpath { dir } => write!(
                f,
                "`[target] cuda-compat`: the Jetson forward-compatibility libcuda in {} is found before the driver's",
                crate::error::shell::path(dir)
            ),
        }
    }
}

impl Step for CudaCompat {
    const NAME: &'static str = "cuda-compat";
    /// `[target] cuda-compat`, already absolute.
    type Section = Option<Sourced<PathBuf>>;
    type Needs<'d> = ();
    type Decision = ();

    fn section<'c>(config: &'c Config, _: &Facts) -> &'c Self::Section {
        &config.target.cuda_compat
    }

    /// Put the directory first in the runpath of what this call links, when it links for a Jetson.
    fn decide(facts: &Facts, dir: &Self::Section, _: (), plan: &mut Changes) -> Result<()> {
        let Some(dir) = dir else { return Ok(()) };
        // Checked on every call, as a setting that names nothing is wrong for the whole build.
        if ![dir.join("libcuda.so"), dir.join("libcuda.so.1")].iter().any(|l| facts.probes.exists(l)) {
            return Err(dir.error(Key::CudaCompat, "has no libcuda.so or libcuda.so.1").with_help(
                "point it at the directory of the cuda_compat package's libcuda.so (its lib/), or remove it",
            ));
        }
        if !facts.jetson_build {
            plan.note(Note::NotJetson { platform: facts.platform.name.clone() });
            return Ok(());
        }
        if !facts.invocation.links() {
            return Ok(());
        }
        super::passable(Key::CudaCompat, dir, "the linker")?;
        // First of the wrapper's additions, so that it also comes before the libstdc++ runpath and the user's own.
        let arg = joined("-Xlinker=-rpath,", dir);
        plan.add_first(vec![arg], Reason::FirstInRunpath { dir: dir.value.clone() });
        Ok(())
    }
}
