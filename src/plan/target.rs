//! The platform the code is built for: the row of platforms.toml that `[target] system` and `platform` name. Owns
//! reading those two keys; what a cross build needs besides (compilers, target directories) is not decided here.

use crate::compat::{Platform, PlatformTable};
use crate::config::{Loaded, TargetConfig, TargetPlatform};
use crate::context::vars;
use crate::error::{Error, ErrorKind, Result};

/// The Nix system of the machine the wrapper was built for: the target when `[target]` names none.
pub const NATIVE_SYSTEM: &str = if cfg!(target_arch = "aarch64") {
    "aarch64-linux"
} else if cfg!(target_arch = "powerpc64") {
    "powerpc64le-linux"
} else {
    "x86_64-linux"
};

/// The target platform. `system` is a Nix system (`aarch64-linux`) or a GNU triple (`aarch64-unknown-linux-gnu`);
/// unset, it is the native system, or `aarch64-linux` when `platform` is set (only aarch64 has two platforms).
/// aarch64 means the Arm-server platform (sbsa-linux) unless `platform = "jetson"`.
pub fn platform<'a>(target: &TargetConfig, table: &'a PlatformTable) -> Result<&'a Platform> {
    let system = match (&target.system, target.platform) {
        (Some(system), _) => system.as_str(),
        (None, Some(_)) => "aarch64-linux",
        (None, None) => NATIVE_SYSTEM,
    };
    // As `by_nix_system`/`by_triple`, whose results cannot outlive `system`.
    let mut candidates: Vec<&'a Platform> = table.all().iter().filter(|p| p.nix_system == system).collect();
    if candidates.is_empty() {
        candidates = table.all().iter().filter(|p| p.matches_triple(system)).collect();
    }
    if candidates.is_empty() {
        let known: Vec<&str> = table.all().iter().map(|p| p.nix_system.as_str()).collect();
        return Err(Error::new(
            ErrorKind::Config,
            format!("`[target] system = {system:?}` is not a target nvcc builds for"),
        )
        .with_help(format!("use one of {} (or a GNU triple of one)", dedup(known).join(", "))));
    }
    let want_jetson = target.platform == Some(TargetPlatform::Jetson);
    match candidates.iter().find(|p| p.jetson == want_jetson) {
        Some(p) => Ok(p),
        None => Err(Error::new(
            ErrorKind::Config,
            format!(
                "`[target] platform = {:?}` does not exist for `system = {system:?}`",
                platform_name(target.platform)
            ),
        )
        .with_help("`platform` (\"jetson\" or \"sbsa\") is for `system = \"aarch64-linux\"` only")),
    }
}

/// `platform` for the loaded configuration: an error about a value the environment set names the variable and
/// exits as an environment error.
pub fn platform_of<'a>(loaded: &Loaded, table: &'a PlatformTable) -> Result<&'a Platform> {
    platform(&loaded.config.target, table).map_err(|mut e| {
        let from_env: Vec<&str> =
            [vars::TARGET_SYSTEM, vars::TARGET_PLATFORM].into_iter().filter(|v| loaded.from_env.contains(v)).collect();
        if !from_env.is_empty() {
            e.kind = ErrorKind::Environment;
            e.message = format!("{} (set by ${})", e.message, from_env.join(" and $"));
        }
        e
    })
}

/// How the config spells a platform, for messages.
pub fn platform_name(platform: Option<TargetPlatform>) -> &'static str {
    match platform {
        Some(TargetPlatform::Jetson) => "jetson",
        Some(TargetPlatform::Sbsa) => "sbsa",
        None => "",
    }
}

/// The `[target]` settings that select `platform`, as a user writes them.
pub fn settings_for(platform: &Platform) -> String {
    let kind = if platform.jetson { "jetson" } else { "sbsa" };
    let shared = platform.nix_system == "aarch64-linux";
    if shared {
        format!("`[target] system = \"{}\"` and `platform = \"{kind}\"`", platform.nix_system)
    } else {
        format!("`[target] system = \"{}\"`", platform.nix_system)
    }
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

    fn target(system: Option<&str>, platform: Option<TargetPlatform>) -> TargetConfig {
        TargetConfig { system: system.map(Into::into), platform, ..TargetConfig::default() }
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
            let got = super::platform(&target(system, platform), table).unwrap();
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

    #[test]
    fn unknown_systems_and_misplaced_platforms_are_config_errors() {
        let table = PlatformTable::built_in();
        let err = platform(&target(Some("riscv64-linux"), None), table).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Config);
        assert!(err.message.contains("riscv64-linux"), "{err}");
        assert!(err.help.unwrap().contains("aarch64-linux"));
        let err = platform(&target(Some("x86_64-linux"), Some(TargetPlatform::Jetson)), table).unwrap_err();
        assert!(err.message.contains("jetson") && err.message.contains("x86_64-linux"), "{err}");
    }

    #[test]
    fn values_from_the_environment_are_environment_errors() {
        let table = PlatformTable::built_in();
        let mut loaded = Loaded::default();
        let env: crate::context::Env = [(vars::TARGET_SYSTEM, "riscv64-linux")].into_iter().collect();
        crate::config::apply_env(&mut loaded, &env).unwrap();
        let err = platform_of(&loaded, table).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Environment);
        assert!(err.message.contains("$NVCC_WRAPPER_TARGET_SYSTEM"), "{err}");
    }

    #[test]
    fn settings_name_the_keys() {
        let table = PlatformTable::built_in();
        assert_eq!(
            settings_for(table.get("aarch64-linux").unwrap()),
            "`[target] system = \"aarch64-linux\"` and `platform = \"jetson\"`"
        );
        assert_eq!(settings_for(table.get("x86_64-linux").unwrap()), "`[target] system = \"x86_64-linux\"`");
    }
}
