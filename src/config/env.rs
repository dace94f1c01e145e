//! The environment's overrides of config keys: one table, `OVERRIDES`, of (variable, key, how a value is read). It is
//! the only place an `NVCC_WRAPPER_*` setting is interpreted, and docs/reference/environment.md is checked against
//! it. Unset or empty leaves the file's value. A value the wrapper cannot read is an error naming the variable, never
//! ignored: a packager who set it means it for every nvcc call.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::sourced::{Origin, Sourced};
use super::{Config, Key, Loaded, TargetPlatform};
use crate::compat::TargetList;
use crate::context::{vars, Env};
use crate::error::Result;

/// One config key the environment can override.
pub struct Override {
    pub var: &'static str,
    /// The key it replaces.
    pub key: Key,
    /// What a good value looks like, for the help line of a bad one.
    pub expects: &'static str,
    /// Put a (non-empty) value into the config, or say what is wrong with it.
    apply: fn(&mut Config, &OsStr, Origin) -> std::result::Result<(), String>,
}

/// Every override, in the order docs/reference/environment.md lists them.
pub const OVERRIDES: &[Override] = &[
    Override {
        var: vars::LAUNCHER,
        key: Key::Launcher,
        expects: "a compiler cache's name or path (ccache, /usr/bin/sccache)",
        // As in the file: a bare name is looked up on PATH, anything else is a path from the working directory.
        apply: |c, v, origin| {
            c.launcher = Some(Sourced::new(PathBuf::from(v), origin));
            Ok(())
        },
    },
    Override {
        var: vars::CAPABILITIES,
        key: Key::Capabilities,
        expects: "GPU targets like `8.6;9.0a` (also `8.6+PTX 9.0`, `86-real;90-virtual`, `compute_90`, `all-major`)",
        apply: |c, v, origin| {
            let capabilities = TargetList::parse(utf8(v)?).map_err(|e| e.to_string())?;
            if capabilities.is_empty() {
                return Err("names no capability".into());
            }
            c.gpu.capabilities = Sourced::new(capabilities, origin);
            Ok(())
        },
    },
    Override {
        var: vars::FORWARD_COMPAT,
        key: Key::ForwardCompat,
        expects: "1 or 0 (also true/false, yes/no, on/off)",
        apply: |c, v, origin| {
            c.gpu.forward_compat = Sourced::new(switch(v)?, origin);
            Ok(())
        },
    },
    Override {
        var: vars::COMPRESS_FATBIN,
        key: Key::CompressFatbin,
        expects: "1 or 0 (also true/false, yes/no, on/off)",
        apply: |c, v, origin| {
            c.gpu.compress_fatbin = Some(Sourced::new(switch(v)?, origin));
            Ok(())
        },
    },
    Override {
        var: vars::DEPFILE_INPUTS,
        key: Key::DepfileInputs,
        expects: "1 or 0 (also true/false, yes/no, on/off)",
        apply: |c, v, origin| {
            c.depfile_inputs = Some(Sourced::new(switch(v)?, origin));
            Ok(())
        },
    },
    Override {
        var: vars::REPRODUCIBLE,
        key: Key::Reproducible,
        expects: "1 or 0 (also true/false, yes/no, on/off)",
        apply: |c, v, origin| {
            c.reproducible = Some(Sourced::new(switch(v)?, origin));
            Ok(())
        },
    },
    Override {
        var: vars::THREADS,
        key: Key::Threads,
        expects: "a whole number from 1 (1: never more than nvcc's one thread)",
        apply: |c, v, origin| {
            let most: i64 = utf8(v)?.parse().map_err(|_| "not a whole number".to_string())?;
            c.threads = Some(Sourced::new(super::ThreadCount::try_from(most)?, origin));
            Ok(())
        },
    },
    Override {
        var: vars::THREADS_FOLLOW,
        key: Key::ThreadsFollow,
        expects: "1 or 0 (also true/false, yes/no, on/off)",
        apply: |c, v, origin| {
            c.threads_follow = Some(Sourced::new(switch(v)?, origin));
            Ok(())
        },
    },
    Override {
        var: vars::TARGET_SYSTEM,
        key: Key::System,
        expects: "a Nix system (aarch64-linux) or a GNU triple",
        apply: |c, v, origin| {
            c.target.system = Some(Sourced::new(utf8(v)?.to_string(), origin));
            Ok(())
        },
    },
    Override {
        var: vars::TARGET_PLATFORM,
        key: Key::Platform,
        expects: "`jetson` or `sbsa`",
        apply: |c, v, origin| {
            let platform = match utf8(v)? {
                "jetson" => TargetPlatform::Jetson,
                "sbsa" => TargetPlatform::Sbsa,
                _ => return Err("not a target platform".into()),
            };
            c.target.platform = Some(Sourced::new(platform, origin));
            Ok(())
        },
    },
    Override {
        var: vars::TARGET_SYSROOT,
        key: Key::Sysroot,
        expects: "an absolute path",
        apply: |c, v, origin| {
            c.target.sysroot = Some(Sourced::new(absolute(v)?, origin));
            Ok(())
        },
    },
    Override {
        var: vars::TARGET_CUDA_ROOT,
        key: Key::CudaRoot,
        expects: "an absolute path",
        apply: |c, v, origin| {
            c.target.cuda_root = Some(Sourced::new(absolute(v)?, origin));
            Ok(())
        },
    },
    Override {
        var: vars::TARGET_CUDA_COMPAT,
        key: Key::CudaCompat,
        expects: "an absolute path",
        apply: |c, v, origin| {
            c.target.cuda_compat = Some(Sourced::new(absolute(v)?, origin));
            Ok(())
        },
    },
];

/// A setting the environment overrode, for `explain` and the debug log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overridden {
    pub var: &'static str,
    pub key: Key,
    /// The value as given (lossy where it is not UTF-8; only shown).
    pub value: String,
}

impl std::fmt::Display for Overridden {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}` is {:?}, from ${}", self.key, self.value, self.var)
    }
}

/// Apply every override the environment sets, in table order.
pub fn apply(loaded: &mut Loaded, env: &Env) -> Result<()> {
    for o in OVERRIDES {
        let Some(value) = env.non_empty(o.var) else { continue };
        let shown = value.to_string_lossy();
        (o.apply)(&mut loaded.config, value, Origin::Env(o.var)).map_err(|why| super::problems::Refused::Override {
            var: o.var,
            shown: shown.to_string(),
            why,
            expects: o.expects,
            key: o.key,
        })?;
        loaded.overrides.push(Overridden { var: o.var, key: o.key, value: shown.into_owned() });
    }
    Ok(())
}

/// An `NVCC_WRAPPER_*` variable the project gives no meaning (issue 60: `NVCC_WRAPPER_CAPABILITES=8.6`, a typo, and
/// `NVCC_WRAPPER_NVCC`, a guess, were ignored silently): it changes nothing, and every personality says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnknownVariable {
    /// One letter or two from a variable the wrapper reads.
    Misspelt {
        name: String,
        meant: &'static str,
    },
    Unknown {
        name: String,
    },
}

impl UnknownVariable {
    pub fn name(&self) -> &str {
        match self {
            UnknownVariable::Misspelt { name, .. } | UnknownVariable::Unknown { name } => name,
        }
    }
}

impl std::fmt::Display for UnknownVariable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UnknownVariable::Misspelt { name, meant } => {
                write!(f, "${name} is not a variable the wrapper reads, so it changes nothing: did you mean {meant}?")
            }
            UnknownVariable::Unknown { name } => write!(
                f,
                "${name} is not a variable the wrapper reads, so it changes nothing: `man nvcc-wrapper` lists the ones it reads, and the config file's keys set the rest"
            ),
        }
    }
}

/// The `NVCC_WRAPPER_*` variables of `env` that no one reads, each with the known name it is nearest to, if one is
/// within two edits.
pub fn unknown_variables(env: &Env) -> Vec<UnknownVariable> {
    let mut unknown = Vec::new();
    for (name, _) in env.iter() {
        // The prefix first, on bytes: most of an environment is other programs' variables.
        if !name.as_encoded_bytes().starts_with(b"NVCC_WRAPPER_") {
            continue;
        }
        let Some(name) = name.to_str() else { continue };
        if vars::OWN.contains(&name) {
            continue;
        }
        let nearest = vars::OWN.iter().map(|known| (edits(name, known), *known)).min();
        unknown.push(match nearest {
            Some((distance, meant)) if distance <= 2 => UnknownVariable::Misspelt { name: name.to_string(), meant },
            _ => UnknownVariable::Unknown { name: name.to_string() },
        });
    }
    // Said in the order of their names, whatever order the caller's environment has them in.
    unknown.sort_by(|a, b| a.name().cmp(b.name()));
    unknown
}

/// The edit distance of two names (insertions, deletions and substitutions of one byte).
fn edits(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, x) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, y) in b.iter().enumerate() {
            let substituted = diagonal + usize::from(x != y);
            diagonal = row[j + 1];
            row[j + 1] = substituted.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

fn utf8(value: &OsStr) -> std::result::Result<&str, String> {
    value.to_str().ok_or_else(|| "not UTF-8".to_string())
}

/// The switches' spelling, as `Env::switch` reads the wrapper's own.
fn switch(value: &OsStr) -> std::result::Result<bool, String> {
    match utf8(value)?.to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err("not a switch".into()),
    }
}

/// Paths must be absolute: the wrapper cannot know which directory a relative one was meant against.
fn absolute(value: &OsStr) -> std::result::Result<PathBuf, String> {
    let path = Path::new(value);
    if path.is_absolute() {
        Ok(path.to_path_buf())
    } else {
        Err("not an absolute path".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ArchFlags;
    use crate::error::ErrorKind;

    fn env(pairs: &[(&str, &str)]) -> Env {
        pairs.iter().copied().collect()
    }

    fn file(text: &str) -> Loaded {
        Loaded::from_text(text, Path::new("/etc/nvcc.toml")).unwrap()
    }

    #[test]
    fn an_unknown_wrapper_variable_is_named_with_the_one_it_is_nearest_to() {
        let env = env(&[
            ("NVCC_WRAPPER_CAPABILITES", "8.6"),
            ("NVCC_WRAPPER_NVCC", "/usr/bin/nvcc"),
            (vars::CAPABILITIES, "8.6"),
            ("NVCC_PREPEND_FLAGS", "-O2"),
            ("HOME", "/h"),
        ]);
        let found = unknown_variables(&env);
        assert_eq!(
            found,
            [
                UnknownVariable::Misspelt { name: "NVCC_WRAPPER_CAPABILITES".into(), meant: vars::CAPABILITIES },
                UnknownVariable::Unknown { name: "NVCC_WRAPPER_NVCC".into() },
            ]
        );
        assert_eq!(edits("THREADS", "THREDS"), 1);
        assert_eq!(edits("", "abc"), 3);
        assert_eq!(edits("kitten", "sitting"), 3);
    }

    #[test]
    fn the_table_names_each_variable_once_and_only_wrapper_variables() {
        let mut seen: Vec<&str> = OVERRIDES.iter().map(|o| o.var).collect();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), OVERRIDES.len());
        assert!(OVERRIDES.iter().all(|o| o.var.starts_with("NVCC_WRAPPER_")));
    }

    #[test]
    fn each_override_replaces_its_key_and_records_its_origin() {
        let mut l = file("[gpu]\ncapabilities = [\"7.5\"]\nforward-compat = true\n");
        apply(&mut l, &env(&[])).unwrap();
        assert_eq!(l.config.gpu.capabilities.origin.to_string(), "/etc/nvcc.toml:2");
        assert!(l.overrides.is_empty());
        apply(&mut l, &env(&[(vars::CAPABILITIES, ""), (vars::FORWARD_COMPAT, "")])).unwrap();
        assert!(l.overrides.is_empty(), "empty is unset");

        // CMake's `86` means machine code and PTX: `86-real` is the same as `8.6` (issue 33).
        for text in ["8.6;9.0a", "86-real,90a-real", "sm_86 sm_90a", " 8.6 ;\t9.0a,"] {
            let mut l = file("[gpu]\ncapabilities = [\"7.5\"]\nforward-compat = true\n");
            apply(&mut l, &env(&[(vars::CAPABILITIES, text), (vars::FORWARD_COMPAT, "0")])).unwrap();
            let shown: Vec<String> = l.config.gpu.capabilities.0.iter().map(|c| c.to_string()).collect();
            assert_eq!(shown, ["8.6", "9.0a"], "{text:?}");
            assert!(!*l.config.gpu.forward_compat);
            assert_eq!(l.config.gpu.capabilities.origin, Origin::Env(vars::CAPABILITIES));
            assert_eq!(l.overrides.len(), 2);
            assert_eq!(
                l.overrides[0].to_string(),
                format!("`[gpu] capabilities` is {text:?}, from $NVCC_WRAPPER_CAPABILITIES")
            );
        }

        let mut l = file("launcher = \"/usr/bin/ccache\"\n[target]\nsystem = \"powerpc64le-linux\"\n");
        apply(
            &mut l,
            &env(&[
                (vars::LAUNCHER, "sccache"),
                (vars::COMPRESS_FATBIN, "off"),
                (vars::TARGET_SYSTEM, "aarch64-linux"),
                (vars::TARGET_PLATFORM, "jetson"),
                (vars::TARGET_SYSROOT, "/env/sysroot"),
                (vars::TARGET_CUDA_ROOT, "/env/cuda"),
                (vars::TARGET_CUDA_COMPAT, "/env/compat"),
            ]),
        )
        .unwrap();
        let c = &l.config;
        assert_eq!(c.launcher.as_ref().map(|l| l.value.clone()), Some(PathBuf::from("sccache")));
        assert_eq!(c.gpu.compress_fatbin.as_ref().map(|s| s.value), Some(false));
        assert_eq!(c.target.system.as_ref().unwrap().value, "aarch64-linux");
        assert_eq!(c.target.platform.as_ref().unwrap().value, TargetPlatform::Jetson);
        assert_eq!(c.target.cuda_compat.as_ref().unwrap().origin, Origin::Env(vars::TARGET_CUDA_COMPAT));
        assert_eq!(*c.gpu.arch_flags, ArchFlags::Respect, "keys without a variable keep their value");
        assert_eq!(l.overrides.len(), 7);
    }

    #[test]
    fn a_bad_value_names_the_variable_and_what_it_takes() {
        for (name, value) in [
            (vars::CAPABILITIES, "8.6;nine"),
            (vars::CAPABILITIES, " ; "),
            (vars::FORWARD_COMPAT, "maybe"),
            (vars::COMPRESS_FATBIN, "smaller"),
            (vars::TARGET_PLATFORM, "tegra"),
            (vars::TARGET_SYSROOT, "rel/dir"),
            (vars::TARGET_CUDA_ROOT, "cuda"),
            (vars::TARGET_CUDA_COMPAT, "compat"),
        ] {
            let err = apply(&mut file(""), &env(&[(name, value)])).unwrap_err();
            assert_eq!(err.kind, ErrorKind::Environment);
            assert!(err.message.starts_with(&format!("{name}={value}: ")), "{err}");
            let help = err.help.unwrap();
            assert!(help.starts_with("give ") && help.contains(&format!("or unset {name}")), "{help}");
        }
    }
}
