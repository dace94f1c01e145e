//! The first step: the GPU targets a call is asked to build (`[gpu] capabilities`), resolved for the release and
//! this machine and checked against the release and the target platform, before any other step looks for a compiler
//! or a target's files. A list the release cannot build for the target is wrong for the whole build, and its reason
//! is the one to hear: a missing file or compiler would not help (issue 50). The `gpu` step places what it decides.

use super::{targets_for, Against, Expansion, Note};
use crate::compat::{Capability, Item, TargetList, Version};
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
        let release = facts.release.version();
        let against = Against { compat: facts.compat, release, platform: Some(facts.platform), named: &facts.named };
        let (list, nix_build) = (&gpu.capabilities, facts.nvcc_process.nix_build);
        let requested = requested_targets(list, *gpu.forward_compat, against, nix_build, || facts.probes.gpus())?;
        // An unknown release is said by the facts; one older than the table, here.
        if let (Some(release), None) = (release, requested.release) {
            plan.note(Note::OlderThanTable { release });
        }
        if gpu.capabilities.has(Item::Native) {
            plan.note(Note::NativeTargets { targets: requested.expansion.clone() });
        }
        Ok(Some(requested))
    }
}

/// The targets `list` asks for, checked as the drop-in checks them: against the release of `against` where the
/// capability table knows it (`checkable`), else passed as given. What `GpuTargets` adds and `gencode` prints.
pub fn requested_targets(
    list: &TargetList,
    forward_compat: bool,
    against: Against,
    nix_build: bool,
    gpus: impl FnOnce() -> std::result::Result<Vec<Capability>, String>,
) -> Result<Requested> {
    let release = against.release.and_then(|r| super::checkable(r, against.compat));
    let expansion = targets_for(list, forward_compat, &Against { release, ..against }, nix_build, gpus)?;
    Ok(Requested { expansion, release })
}
