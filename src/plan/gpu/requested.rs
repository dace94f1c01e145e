//! The first step: the GPU targets a call is asked to build (`[gpu] capabilities`), resolved for the release and
//! this machine and checked against the release and the target platform, before any other step looks for a compiler
//! or a target's files. A list the release cannot build for the target is wrong for the whole build, and its reason
//! is the one to hear: a missing file or compiler would not help (issue 50). The `gpu` step places what it decides.

use super::{targets_for, Against, Expansion, Note};
use crate::compat::{Item, Version};
use crate::config::{Config, GpuConfig};
use crate::error::Result;
use crate::plan::facts::Facts;
use crate::plan::model::Changes;
use crate::plan::Step;

pub struct GpuTargets;

/// The configured targets, checked, and the release they were checked against (`None`: unknown, or older than the
/// capability table).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requested {
    pub expansion: Expansion,
    pub release: Option<Version>,
}

impl Step for GpuTargets {
    const NAME: &'static str = "gpu-targets";
    type Section = GpuConfig;
    type Needs<'d> = ();
    /// What was asked, when anything was.
    type Decision = Option<Requested>;

    fn section<'c>(config: &'c Config, _: &Facts) -> &'c Self::Section {
        &config.gpu
    }

    /// Checked on every call, even one that gets nothing added: a configuration this nvcc cannot build is wrong for
    /// the whole build, and one clear error beats some calls passing and others failing.
    fn decide(facts: &Facts, gpu: &GpuConfig, _: (), plan: &mut Changes) -> Result<Option<Requested>> {
        if gpu.capabilities.is_empty() {
            return Ok(None);
        }
        let release = release_to_check(facts, plan);
        let against = Against { compat: facts.compat, release, platform: Some(facts.platform), named: &facts.named };
        let nix_build = facts.nvcc_process.nix_build;
        let expansion =
            targets_for(&gpu.capabilities, *gpu.forward_compat, &against, nix_build, || facts.probes.gpus())?;
        if gpu.capabilities.has(Item::Native) {
            plan.note(Note::NativeTargets { targets: expansion.clone() });
        }
        Ok(Some(Requested { expansion, release }))
    }
}

/// The release to check against, or `None` when it is unknown (said by the facts) or older than the table (said
/// here).
fn release_to_check(facts: &Facts, plan: &mut Changes) -> Option<Version> {
    let release = facts.release.version()?;
    let checkable = super::checkable(release, facts.compat);
    if checkable.is_none() {
        plan.note(Note::OlderThanTable { release });
    }
    checkable
}
