//! The platform the code is built for: the row of platforms.toml that `[target] system` and `platform` name (or
//! `gencode`'s `--system` and `--platform`). Owns reading those two settings and naming them in messages; what a
//! cross build needs besides (compilers, target directories) is not decided here.

use crate::compat::{Platform, PlatformTable};
use crate::config::{Source, TargetConfig, TargetPlatform};
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

/// How the user gave the two settings that select a target, so that a message names what they wrote, and what
/// kind of error a bad value is: config keys (exit 78), `NVCC_WRAPPER_TARGET_*` variables (64) or the wrapper's own
/// `gencode` flags (2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    pub system: String,
    pub platform: String,
    pub kind: ErrorKind,
    /// Whether help lines suggest flags (`gencode`) or config keys.
    pub flags: bool,
}

impl Named {
    /// As the drop-in reads them: from the config file, unless the environment overrode them.
    pub fn config(source: &Source) -> Named {
        let env = |var: &'static str| source.from_env.contains(&var);
        let name =
            |var: &'static str, key: &str| if env(var) { format!("${var}") } else { format!("`[target] {key}`") };
        let kind = if env(vars::TARGET_SYSTEM) || env(vars::TARGET_PLATFORM) {
            ErrorKind::Environment
        } else {
            ErrorKind::Config
        };
        Named {
            system: name(vars::TARGET_SYSTEM, "system"),
            platform: name(vars::TARGET_PLATFORM, "platform"),
            kind,
            flags: false,
        }
    }

    /// As `nvcc-wrapper gencode` takes them.
    pub fn flags() -> Named {
        Named { system: "`--system`".into(), platform: "`--platform`".into(), kind: ErrorKind::Usage, flags: true }
    }

    /// The settings that select `platform`, as this user would write them.
    pub fn settings_for(&self, platform: &Platform) -> String {
        let kind = if platform.jetson { "jetson" } else { "sbsa" };
        let shared = platform.nix_system == "aarch64-linux";
        match (self.flags, shared) {
            (true, true) => format!("`--system {} --platform {kind}`", platform.nix_system),
            (true, false) => format!("`--system {}`", platform.nix_system),
            (false, true) => format!("`[target] system = \"{}\"` and `platform = \"{kind}\"`", platform.nix_system),
            (false, false) => format!("`[target] system = \"{}\"`", platform.nix_system),
        }
    }

    /// "pass X" or "set X in the config".
    pub fn how_to_set(&self, settings: &str) -> String {
        if self.flags {
            format!("pass {settings}")
        } else {
            format!("set {settings} in the config")
        }
    }
}

/// The target platform. `system` is a Nix system (`aarch64-linux`) or a GNU triple (`aarch64-unknown-linux-gnu`);
/// unset, it is the native system, or `aarch64-linux` when `platform` is set (only aarch64 has two platforms).
/// aarch64 means the Arm-server platform (sbsa-linux) unless `platform = "jetson"`.
pub fn platform<'a>(target: &TargetConfig, table: &'a PlatformTable, named: &Named) -> Result<&'a Platform> {
    let system = match (&target.system, target.platform) {
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
        return Err(Error::new(
            named.kind,
            format!("{} is {system:?}, which is not a target nvcc builds for", named.system),
        )
        .with_help(format!("use one of {} (or a GNU triple of one)", dedup(known).join(", "))));
    }
    let want_jetson = target.platform == Some(TargetPlatform::Jetson);
    match candidates.iter().find(|p| p.jetson == want_jetson) {
        Some(p) => Ok(p),
        None => Err(Error::new(
            named.kind,
            format!(
                "{} is {:?}, which does not exist for {} {system:?}",
                named.platform,
                platform_name(target.platform),
                named.system
            ),
        )
        .with_help(format!("{} (\"jetson\" or \"sbsa\") is for aarch64-linux only", named.platform))),
    }
}

/// How the config spells a platform, for messages.
pub fn platform_name(platform: Option<TargetPlatform>) -> &'static str {
    match platform {
        Some(TargetPlatform::Jetson) => "jetson",
        Some(TargetPlatform::Sbsa) => "sbsa",
        None => "",
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
        Named::config(&Source::default())
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
        let mut loaded = crate::config::Loaded::default();
        let env: crate::context::Env = [(vars::TARGET_SYSTEM, "riscv64-linux")].into_iter().collect();
        crate::config::apply_env(&mut loaded, &env).unwrap();
        let err = platform(&loaded.config.target, table, &Named::config(&loaded.source)).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Environment);
        assert!(err.message.starts_with("$NVCC_WRAPPER_TARGET_SYSTEM is \"riscv64-linux\""), "{err}");

        // gencode's flags: exit 2, naming the flag.
        let err = platform(&target(Some("riscv64-linux"), None), table, &Named::flags()).unwrap_err();
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
        assert_eq!(Named::flags().settings_for(jetson), "`--system aarch64-linux --platform jetson`");
        assert_eq!(Named::flags().how_to_set("X"), "pass X");
    }
}
