//! The platform the code is built for: the row of platforms.toml that `[target] system` and `platform` name (or
//! `gencode`'s `--system` and `--platform`), and whether this NVCC release ships it. Owns reading those two settings
//! and naming them in messages; what a cross build needs besides (compilers, target directories) is the steps'.

use crate::compat::Version;
use crate::compat::{Platform, PlatformTable};
use crate::config::{Origin, TargetConfig, TargetPlatform};
use crate::error::{ErrorKind, Result};

/// The Nix system of the machine the wrapper was built for: the target when `[target]` names none.
pub const NATIVE_SYSTEM: &str = if cfg!(target_arch = "aarch64") {
    "aarch64-linux"
} else if cfg!(target_arch = "powerpc64") {
    "powerpc64le-linux"
} else {
    "x86_64-linux"
};

/// How the user gave the two settings that select a target, so that a message names what they wrote, and what
/// kind of error a bad value is: config keys (exit 78), `NVCC_WRAPPER_TARGET_*` variables (64) or the wrapper's own
/// `gencode` flags (2); or, for the answers Nix looks up (makeNvccWrapper's answers.json), `makeNvccWrapper`'s arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    pub system: String,
    pub platform: String,
    pub kind: ErrorKind,
    /// Whom help lines speak to.
    pub audience: Audience,
}

/// Where a user sets what a help line suggests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    /// Config keys (or the variables that replace them).
    Config,
    /// `gencode`'s flags.
    Flags,
    /// Nix: `hostPlatform` and `hostRedistSystem`, as makeNvccWrapper and Nixpkgs' CUDA package sets take them.
    Nix,
}

impl Named {
    /// As the user gave them: config keys, `NVCC_WRAPPER_TARGET_*` variables, or `gencode`'s flags.
    pub fn of(target: &TargetConfig) -> Named {
        let system = target.system.as_ref().map(|s| &s.origin);
        let platform = target.platform.as_ref().map(|p| &p.origin);
        let name = |origin: Option<&Origin>, key: &str| match origin {
            Some(Origin::Env(var)) => format!("${var}"),
            _ => format!("`[target] {key}`"),
        };
        // The first setting that is not the file's decides the kind of error.
        let given = [system, platform].into_iter().flatten().find(|o| !matches!(o, Origin::File(_) | Origin::Default));
        if given.is_some_and(Origin::is_flag) {
            // gencode takes both as flags, given or not.
            return Named {
                system: "`--system`".into(),
                platform: "`--platform`".into(),
                kind: ErrorKind::Usage,
                audience: Audience::Flags,
            };
        }
        Named {
            system: name(system, "system"),
            platform: name(platform, "platform"),
            kind: given.map_or(ErrorKind::Config, Origin::error_kind),
            audience: Audience::Config,
        }
    }

    /// As a Nix user gives them: the target's Nix system and Nixpkgs' redist system.
    pub fn nix() -> Named {
        Named {
            system: "`hostPlatform.system`".into(),
            platform: "`hostRedistSystem`".into(),
            kind: ErrorKind::Request,
            audience: Audience::Nix,
        }
    }

    /// The settings that select `platform`, as this user would write them.
    pub fn settings_for(&self, platform: &Platform) -> String {
        let kind = if platform.jetson { "jetson" } else { "sbsa" };
        let (system, redist) = (&platform.nix_system, &platform.nvidia_redist);
        let shared = platform.nix_system == "aarch64-linux";
        match (self.audience, shared) {
            (Audience::Flags, true) => format!("`--system {system} --platform {kind}`"),
            (Audience::Flags, false) => format!("`--system {system}`"),
            (Audience::Config, true) => format!("`[target] system = \"{system}\"` and `platform = \"{kind}\"`"),
            (Audience::Config, false) => format!("`[target] system = \"{system}\"`"),
            (Audience::Nix, true) => format!("`hostPlatform` to {system} and `hostRedistSystem` to \"{redist}\""),
            (Audience::Nix, false) => format!("`hostPlatform` to {system}"),
        }
    }

    /// "pass X", "set X in the config" or "set X".
    pub fn how_to_set(&self, settings: &str) -> String {
        match self.audience {
            Audience::Flags => format!("pass {settings}"),
            Audience::Config => format!("set {settings} in the config"),
            Audience::Nix => format!("set {settings}"),
        }
    }
}

/// The target platform `[target]` names, and whether it is another CPU than this machine's (a cross build; an
/// aarch64 machine building for Jetson or for an Arm server is not one: its toolkit is that platform's own). A cross
/// target must be one this release ships (an unknown release is let through: nvcc itself will then say what it
/// lacks). Every personality that names a target goes through here.
pub fn resolve<'a>(
    target: &TargetConfig,
    named: &Named,
    platforms: &'a PlatformTable,
    release: Option<Version>,
) -> Result<(&'a Platform, bool)> {
    let platform = platform(target, platforms, named)?;
    let cross = platform.nix_system != NATIVE_SYSTEM;
    if let (true, Some(release)) = (cross, release) {
        check_shipped(platforms, platform, release, named)?;
    }
    Ok((platform, cross))
}

/// The target platform. `system` is a Nix system (`aarch64-linux`) or a GNU triple (`aarch64-unknown-linux-gnu`);
/// unset, it is the native system, or `aarch64-linux` when `platform` is set (only aarch64 has two platforms).
/// aarch64 means the Arm-server platform (sbsa-linux) unless `platform = "jetson"`.
pub fn platform<'a>(target: &TargetConfig, table: &'a PlatformTable, named: &Named) -> Result<&'a Platform> {
    let chosen = target.platform.as_ref().map(|p| p.value);
    let system = match (&target.system, chosen) {
        (Some(system), _) => system.as_str(),
        (None, Some(_)) => "aarch64-linux",
        (None, None) => NATIVE_SYSTEM,
    };
    let mut candidates = table.by_nix_system(system);
    if candidates.is_empty() {
        candidates = table.by_triple(system);
    }
    if candidates.is_empty() {
        let known: Vec<&str> = table.all().iter().map(|p| &*p.nix_system).collect();
        let known = dedup(known).into_iter().map(str::to_string).collect();
        return Err(Refused::UnknownSystem { named: named.clone(), system: system.to_string(), known }.into());
    }
    let want_jetson = chosen == Some(TargetPlatform::Jetson);
    match candidates.iter().find(|p| p.jetson == want_jetson) {
        Some(p) => Ok(p),
        None => {
            let platform = chosen.map_or("", TargetPlatform::name);
            Err(Refused::NoSuchPlatform { named: named.clone(), platform, system: system.to_string() }.into())
        }
    }
}

/// The target room's errors, as data: each with its code, its words (`Display`) and its help line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// The system setting names no platform of the table (`known`: the Nix systems that would).
    UnknownSystem { named: Named, system: String, known: Vec<String> },
    /// The platform setting names a kind the system has not.
    NoSuchPlatform { named: Named, platform: &'static str, system: String },
    /// A cross build for a platform the release does not ship.
    NotShipped { release: Version, refused: NotShipped },
    /// A cross build with no CUDA files for the target: `toolkit` (its root, or why it has none) has no
    /// `targets/DIR`, and `[target] cuda-root` is not set.
    NoTargetFiles { dir: String, toolkit: String },
}

crate::plan::model::codes!(Refused {
    UnknownSystem => "unknown-system",
    NoSuchPlatform => "no-such-platform",
    NotShipped => "not-shipped",
    NoTargetFiles => "no-target-files",
});

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::UnknownSystem { named, system, .. } => {
                write!(f, "{} is {system:?}, which is not a target nvcc builds for", named.system)
            }
            Refused::NoSuchPlatform { named, platform, system } => {
                write!(f, "{} is {platform:?}, which does not exist for {} {system:?}", named.platform, named.system)
            }
            Refused::NotShipped { release, refused } => f.write_str(&refused.message(&release.release())),
            Refused::NoTargetFiles { dir, toolkit } => write!(
                f,
                "no CUDA files for the target {dir}: {toolkit} has no targets/{dir}, and `[target] cuda-root` is not set"
            ),
        }
    }
}

impl crate::error::Problem for Refused {
    fn help(&self) -> Option<String> {
        Some(match self {
            Refused::UnknownSystem { known, .. } => format!("use one of {} (or a GNU triple of one)", known.join(", ")),
            Refused::NoSuchPlatform { named, .. } => {
                format!("{} (\"jetson\" or \"sbsa\") is for aarch64-linux only", named.platform)
            }
            Refused::NotShipped { refused, .. } => refused.help.clone(),
            Refused::NoTargetFiles { dir, toolkit } => format!(
                "install the target's CUDA headers and libraries into {toolkit}/targets/{dir} (NVIDIA's cross packages), or set `[target] cuda-root` to a directory holding them (include/, lib/)"
            ),
        })
    }

    /// The exit code's kind: that of the settings' source for a setting's value, a request's for the release.
    fn kind(&self) -> ErrorKind {
        match self {
            Refused::UnknownSystem { named, .. } | Refused::NoSuchPlatform { named, .. } => named.kind,
            Refused::NotShipped { .. } | Refused::NoTargetFiles { .. } => ErrorKind::Request,
        }
    }
}

/// Fail unless NVCC `release` ships the platform.
pub fn check_shipped(platforms: &PlatformTable, platform: &Platform, release: Version, named: &Named) -> Result<()> {
    match not_shipped(platforms, platform, release, named) {
        Some(refused) => Err(Refused::NotShipped { release, refused }.into()),
        None => Ok(()),
    }
}

/// A target platform the release does not ship, as data: the words name the release through `message`, so that
/// the Nix answers say them over `{release}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotShipped {
    /// `aarch64-linux (linux-aarch64)`: the platform and NVIDIA's name for it.
    platform: String,
    /// The releases that ship it: `12.0 to 12.9, 13.0 on`.
    ranges: String,
    /// What to do instead: a release that ships it, or another platform that serves the same Jetson parts.
    pub help: String,
}

impl NotShipped {
    /// `nvcc {release} does not build for the target ...`.
    pub fn message(&self, release: &dyn std::fmt::Display) -> String {
        format!(
            "nvcc {release} does not build for the target {}: NVIDIA ships it in {} only",
            self.platform, self.ranges
        )
    }
}

/// Why NVCC `release` does not ship the platform, if it does not.
pub fn not_shipped(
    platforms: &PlatformTable,
    platform: &Platform,
    release: Version,
    named: &Named,
) -> Option<NotShipped> {
    if platform.shipped_in(release.release()) {
        return None;
    }
    let ranges: Vec<String> = platform
        .shipped
        .iter()
        .map(|r| match r.last_cuda {
            Some(last) => format!("{} to {}", r.first_cuda.release(), last.release()),
            None => format!("{} on", r.first_cuda.release()),
        })
        .collect();
    let ranges = ranges.join(", ");
    let mut help = format!("use an nvcc release that ships it ({ranges})");
    if platform.jetson {
        // The other platforms that serve Jetson parts, as compat-data/platforms.toml says (sbsa: Thor, Orin).
        let served: Vec<String> = platforms
            .jetson_served_by()
            .iter()
            .map(|s| {
                let how = match (&*s.platform, named.audience) {
                    ("sbsa-linux", Audience::Flags) => "`--platform sbsa`".to_string(),
                    ("sbsa-linux", Audience::Config) => "`platform = \"sbsa\"`".to_string(),
                    ("sbsa-linux", Audience::Nix) => "`hostRedistSystem = \"linux-sbsa\"`".to_string(),
                    (other, _) => format!("the target {other}"),
                };
                format!("Jetson {} from {} with {how}", s.part, s.first_cuda.release())
            })
            .collect();
        if !served.is_empty() {
            help.push_str(&format!(", or build for {}", served.join(", and ")));
        }
    }
    Some(NotShipped { platform: format!("{} ({})", platform.name, platform.nvidia_redist), ranges, help })
}

fn dedup(mut names: Vec<&str>) -> Vec<&str> {
    let mut seen = Vec::new();
    names.retain(|n| {
        let fresh = !seen.contains(n);
        seen.push(n);
        fresh
    });
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compat::Table;
    use crate::config::Sourced;

    fn target(system: Option<&str>, platform: Option<TargetPlatform>) -> TargetConfig {
        let file = || Origin::File(None);
        TargetConfig {
            system: system.map(|s| Sourced::new(s.to_string(), file())),
            platform: platform.map(|p| Sourced::new(p, file())),
            ..TargetConfig::default()
        }
    }

    #[test]
    fn systems_and_platforms_resolve_to_rows() {
        use TargetPlatform::{Jetson, Sbsa};
        let table = PlatformTable::built_in();
        let rows = [
            (None, None, NATIVE_SYSTEM_ROW),
            (Some("x86_64-linux"), None, "x86_64-linux"),
            (Some("x86_64-unknown-linux-gnu"), None, "x86_64-linux"),
            (Some("aarch64-linux"), None, "sbsa-linux"),
            (Some("aarch64-linux"), Some(Sbsa), "sbsa-linux"),
            (Some("aarch64-linux"), Some(Jetson), "aarch64-linux"),
            (Some("aarch64-linux-gnu"), Some(Jetson), "aarch64-linux"),
            (None, Some(Jetson), "aarch64-linux"),
            (Some("powerpc64le-linux"), None, "ppc64le-linux"),
        ];
        for (system, platform, want) in rows {
            let got = super::platform(&target(system, platform), table, &named()).unwrap();
            assert_eq!(got.name, want, "{system:?} {platform:?}");
        }
    }

    const NATIVE_SYSTEM_ROW: &str = if cfg!(target_arch = "aarch64") {
        "sbsa-linux"
    } else if cfg!(target_arch = "powerpc64") {
        "ppc64le-linux"
    } else {
        "x86_64-linux"
    };

    fn named() -> Named {
        Named::of(&TargetConfig::default())
    }

    #[test]
    fn unknown_systems_and_misplaced_platforms_name_the_setting_they_came_from() {
        let table = PlatformTable::built_in();
        let err = platform(&target(Some("riscv64-linux"), None), table, &named()).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Config);
        assert!(err.message.starts_with("`[target] system` is \"riscv64-linux\""), "{err}");
        assert!(err.help.unwrap().contains("aarch64-linux"));
        let err = platform(&target(Some("x86_64-linux"), Some(TargetPlatform::Jetson)), table, &named()).unwrap_err();
        assert!(err.message.contains("jetson") && err.message.contains("x86_64-linux"), "{err}");

        // The environment's value: exit 64, naming the variable.
        let from = |origin: Origin| TargetConfig {
            system: Some(Sourced::new("riscv64-linux".to_string(), origin)),
            ..TargetConfig::default()
        };
        let env = from(Origin::Env("NVCC_WRAPPER_TARGET_SYSTEM"));
        let err = platform(&env, table, &Named::of(&env)).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Environment);
        assert!(err.message.starts_with("$NVCC_WRAPPER_TARGET_SYSTEM is \"riscv64-linux\""), "{err}");

        // gencode's flags: exit 2, naming the flag.
        let flags = from(Origin::Flag("--system"));
        let err = platform(&flags, table, &Named::of(&flags)).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Usage);
        assert!(err.message.starts_with("`--system` is \"riscv64-linux\""), "{err}");
    }

    #[test]
    fn settings_are_spelled_as_the_user_gives_them() {
        let table = PlatformTable::built_in();
        let jetson = table.get("aarch64-linux").unwrap();
        let x86 = table.get("x86_64-linux").unwrap();
        assert_eq!(named().settings_for(jetson), "`[target] system = \"aarch64-linux\"` and `platform = \"jetson\"`");
        assert_eq!(named().settings_for(x86), "`[target] system = \"x86_64-linux\"`");
        let flags = TargetConfig {
            system: Some(Sourced::new("aarch64-linux".to_string(), Origin::Flag("--system"))),
            ..TargetConfig::default()
        };
        assert_eq!(Named::of(&flags).settings_for(jetson), "`--system aarch64-linux --platform jetson`");
        assert_eq!(Named::of(&flags).how_to_set("X"), "pass X");
    }
}
