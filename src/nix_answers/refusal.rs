//! A request as Nix makes it, refused or not as the binary decides (`refusal`): the drop-in's order over the same
//! planner's functions, for tests/real/nix/answers.rs to compare with what makeNvccWrapper's compat.nix makes of the answers.

use super::{nix_build_gpus, nix_host_compiler_help, platform_of, Said};
use crate::compat::{Compat, CompilerFamily, Platform, TargetList, Version};
use crate::error::ErrorKind;
use crate::plan::gpu::{self, Against};
use crate::plan::target::{self, Named};

/// A compiler as the config records it, and as makeNvccWrapper hands it to makeNvccWrapper's compat.nix.
#[derive(Debug, Clone)]
pub struct Compiler<'a> {
    pub path: &'a str,
    /// `gcc` or `clang`.
    pub family: &'a str,
    pub version: &'a str,
}

/// The stdenv compiler and the candidates.
#[derive(Debug, Clone)]
pub struct Compilers<'a> {
    pub stdenv: Compiler<'a>,
    pub candidates: &'a [Compiler<'a>],
}

/// A request as Nix makes it (makeNvccWrapper's `compat.nix`, its `refusal`).
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// `cudaMajorMinorVersion`.
    pub release: &'a str,
    /// The target's Nix system and Nixpkgs' redist system.
    pub system: &'a str,
    pub redist: Option<&'a str>,
    /// Whether the target is another machine than the one nvcc runs on.
    pub cross: bool,
    /// `cudaCapabilities`: one word each.
    pub capabilities: &'a [String],
    pub forward_compat: bool,
    /// The host compilers, or `None` to leave them unchecked.
    pub compilers: Option<Compilers<'a>>,
}

/// What the binary refuses of `request`, in its words (naming Nix's arguments), or `None`: the release, the
/// platform, whether the release ships it (cross), the host compilers as the drop-in's host-compiler step judges
/// them, then the capabilities as its GPU step checks them.
pub fn refusal(request: &Request) -> Option<Said> {
    let compat = &Compat::built_in();
    let named = Named::nix();
    let known = request
        .release
        .parse::<Version>()
        .ok()
        .filter(|v| v.has_minor() && compat.host_compilers.limits_for(*v).is_some());
    let Some(release) = known else {
        let named = format!("`cudaMajorMinorVersion` \"{}\"", request.release);
        return Some(crate::plan::not_in_tables(compat, &named, ErrorKind::Request).into());
    };
    let platform = match platform_of(compat, request.system, request.redist, &named) {
        Ok(p) => p,
        Err(e) => return Some(e.into()),
    };
    if request.cross {
        if let Err(e) = target::check_shipped(&compat.platforms, platform, release, &named) {
            return Some(e.into());
        }
    }
    if let Some(compilers) = &request.compilers {
        if let Some(said) = host_compiler_refusal(compat, release, platform, request.cross, compilers) {
            return Some(said);
        }
    }
    let mut list = TargetList::default();
    for word in request.capabilities {
        match TargetList::parse(word) {
            Ok(parsed) => list.0.extend(parsed.0),
            Err(e) => return Some(Said { error: e.to_string(), help: String::new() }),
        }
    }
    let against = Against { compat, release: Some(release), platform: Some(platform), named: &named };
    gpu::targets_for(&list, request.forward_compat, &against, true, nix_build_gpus).err().map(Said::from)
}

/// `None` when the stdenv compiler or a candidate is one the release accepts (`Accepts::accepts`, as the drop-in
/// chooses), else the refusal naming each compiler considered, the stdenv one first, each path once.
fn host_compiler_refusal(
    compat: &Compat,
    release: Version,
    platform: &Platform,
    cross: bool,
    compilers: &Compilers,
) -> Option<Said> {
    let limits = compat.host_compilers.limits_for(release)?;
    let accepts = limits.accepts();
    let known = |c: &Compiler| crate::probe::compiler::Known {
        path: c.path.into(),
        family: CompilerFamily::from_spelling(c.family)
            .unwrap_or_else(|| panic!("a compiler family the config does not take: {}", c.family)),
        version: c.version.parse().unwrap_or_else(|e| panic!("{}: {e}", c.version)),
        target: None,
    };
    let mut considered: Vec<crate::probe::compiler::Known> = Vec::new();
    for k in std::iter::once(&compilers.stdenv).chain(compilers.candidates).map(known) {
        if !considered.iter().any(|seen| seen.path == k.path) {
            considered.push(k);
        }
    }
    if considered.iter().any(|k| accepts.accepts(k.family, k.version)) {
        return None;
    }
    let listed = considered.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(", ");
    let platform = cross.then_some(&platform.name as &dyn std::fmt::Display);
    let help = nix_host_compiler_help(&accepts.newest(CompilerFamily::Gcc), &accepts.newest(CompilerFamily::Clang));
    let release = release.release();
    Some(Said {
        error: crate::plan::host_compiler::none_usable(platform, &release, &accepts.describe(), &listed),
        help,
    })
}
