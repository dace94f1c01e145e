//! The wrapper's configuration file: where it is found, what it may say, and how a bad one is reported.
//!
//! Found at `$NVCC_WRAPPER_CONFIG`, else at `<dir>/../share/nvcc-wrapper/config.toml` for the directory the wrapper
//! was started from (the `nvcc` name on PATH, symlinks kept) and then the directory of its resolved executable; else
//! there is none and the wrapper works from defaults and probing. A file that is named but cannot be read, has a
//! syntax error, an unknown key or a bad value is an error naming the file, line and column: never skipped.
//! Relative paths inside the file are relative to the file's directory.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::compat::Capability;
pub use crate::compat::CompilerFamily;
use crate::context::{vars, Context, Env};
use crate::error::{Error, ErrorKind, Result};
use crate::version::Version;

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Config {
    /// The real nvcc to run. Without it, the first `nvcc` on PATH that is not the wrapper.
    pub nvcc: Option<PathBuf>,
    /// The NVCC release (`"12.4"`), so nothing has to be probed.
    pub cuda_version: Option<Version>,
    /// A directory whose `*.toml` files replace the compatibility tables built into the binary.
    pub compat_data: Option<PathBuf>,
    /// A compiler cache (`ccache`, `sccache`: a path, or a bare name looked up on PATH) the wrapper runs nvcc
    /// through, with the final arguments, so that the cache's key covers everything the wrapper added.
    pub launcher: Option<PathBuf>,
    #[serde(default)]
    pub host_compiler: HostCompilerConfig,
    #[serde(default)]
    pub gpu: GpuConfig,
    #[serde(default)]
    pub target: TargetConfig,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct HostCompilerConfig {
    /// The main ("stdenv") C++ compiler: objects built by it must link with nvcc's.
    #[serde(default, deserialize_with = "entry_or_path")]
    pub stdenv: Option<CompilerEntry>,
    /// Other compilers the wrapper may choose from.
    #[serde(default, deserialize_with = "entries_or_paths")]
    pub candidates: Vec<CompilerEntry>,
    pub prefer: Option<CompilerFamily>,
    /// Pass `-allow-unsupported-compiler` instead of failing when no compiler is in range.
    #[serde(default)]
    pub allow_unsupported: bool,
    /// What to do when the command asks for host LTO and the compiler nvcc accepts is not the stdenv one, whose
    /// LTO bytecode the objects will not match.
    #[serde(default)]
    pub lto_mismatch: LtoMismatch,
}

/// `[host-compiler] lto-mismatch`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LtoMismatch {
    /// Build with the accepted compiler, and say why the link may fail and how to avoid it.
    #[default]
    Warn,
    /// Stop before nvcc runs (exit 69).
    Error,
}

/// A compiler, written as its path (`"/usr/bin/g++-11"`) or as a table that also records what probing would find
/// (`{ path = "...", family = "gcc", version = "11.4.0", target = "x86_64-linux-gnu" }`), so nothing is run.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct CompilerEntry {
    pub path: PathBuf,
    pub family: Option<CompilerFamily>,
    pub version: Option<Version>,
    /// The GNU triple the compiler produces code for (`-dumpmachine`).
    pub target: Option<String>,
    /// For the stdenv compiler: its GCC installation (`PREFIX/lib/gcc/TRIPLE/VERSION`), where its libstdc++ is.
    pub gcc_install_dir: Option<PathBuf>,
    /// For the stdenv compiler: the directory of the `libstdc++.so.6` its programs load.
    pub libstdcxx_dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct GpuConfig {
    /// Capabilities to build for, as in Nixpkgs' `cudaCapabilities` (`["8.6", "9.0a"]`; `"86"` and `"sm_86"` too).
    #[serde(default)]
    pub capabilities: Vec<Capability>,
    /// Also embed PTX of the newest baseline capability, for GPUs newer than the list.
    #[serde(default)]
    pub forward_compat: bool,
    #[serde(default)]
    pub arch_flags: ArchFlags,
    /// Add the flags that make this release's fatbins smallest (compat-data/fatbin.toml). Unset: on.
    pub compress_fatbin: Option<bool>,
}

/// What to do when the command line already names GPU targets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ArchFlags {
    /// Add nothing when the user or build system gave any GPU target option.
    #[default]
    Respect,
    /// Remove the user's GPU target options and add the configured ones.
    Replace,
    /// Add the configured ones as well.
    Append,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct TargetConfig {
    /// `aarch64-linux`, `powerpc64le-linux`, `x86_64-linux` (GNU triples accepted too).
    pub system: Option<String>,
    /// For aarch64: `jetson` or `sbsa`.
    pub platform: Option<TargetPlatform>,
    pub sysroot: Option<PathBuf>,
    /// The target's CUDA headers and libraries, for layouts without `TOP/targets/<dir>`.
    pub cuda_root: Option<PathBuf>,
    /// Jetson: the directory of the CUDA forward-compatibility `libcuda.so`, put first in the runpath of what nvcc
    /// links (`plan::cuda_compat`).
    pub cuda_compat: Option<PathBuf>,
    /// The compilers for the target, with the `[host-compiler]` keys (used only when the target is another CPU).
    #[serde(default)]
    pub host_compiler: HostCompilerConfig,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TargetPlatform {
    Jetson,
    Sbsa,
}

impl<'de> Deserialize<'de> for CompilerEntryOrPath {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = CompilerEntryOrPath;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a compiler path, or a table with `path` and optionally `family`, `version`, `target`")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> std::result::Result<Self::Value, E> {
                Ok(CompilerEntryOrPath(CompilerEntry::path(s)))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> std::result::Result<Self::Value, A::Error> {
                CompilerEntry::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(CompilerEntryOrPath)
            }
        }
        d.deserialize_any(V)
    }
}

impl CompilerEntry {
    /// An entry that records nothing but the path: everything else is probed.
    pub fn path(path: impl Into<PathBuf>) -> CompilerEntry {
        CompilerEntry {
            path: path.into(),
            family: None,
            version: None,
            target: None,
            gcc_install_dir: None,
            libstdcxx_dir: None,
        }
    }
}

/// The file form of a compiler entry: a plain path or a full table.
struct CompilerEntryOrPath(CompilerEntry);

fn entry_or_path<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<CompilerEntry>, D::Error> {
    Ok(Some(CompilerEntryOrPath::deserialize(d)?.0))
}

fn entries_or_paths<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Vec<CompilerEntry>, D::Error> {
    Ok(Vec::<CompilerEntryOrPath>::deserialize(d)?.into_iter().map(|e| e.0).collect())
}

/// A configuration and where its settings came from. Relative paths in the file are already resolved against its
/// directory (a bare program name such as `g++-11` stays bare, to be looked up on PATH as nvcc does with `-ccbin`),
/// so each planning step can be handed its own section and nothing else.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Loaded {
    pub config: Config,
    pub source: Source,
}

/// Where the settings came from: the file, and which of them the environment overrode.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Source {
    /// `None` when no file was found.
    pub path: Option<PathBuf>,
    /// Settings the environment overrode (`apply_env`), said in words for the debug log and `explain`.
    pub overrides: Vec<String>,
    /// The variables those settings came from, so that an error about a setting names where it came from.
    pub from_env: Vec<&'static str>,
}

impl Source {
    /// Where a setting came from, for messages: `$VAR` when the environment set it, else the config file; and the
    /// kind of error a bad value is (a bad variable exits 64, a bad file 78).
    pub fn origin(&self, var: &'static str) -> (ErrorKind, String) {
        match &self.path {
            _ if self.from_env.contains(&var) => (ErrorKind::Environment, format!("${var}")),
            Some(path) => (ErrorKind::Config, path.display().to_string()),
            None => (ErrorKind::Config, "the config".to_string()),
        }
    }
}

impl Config {
    /// Make the file's relative paths absolute against `dir`, the file's directory.
    fn resolve_paths(&mut self, dir: &Path) {
        let path = |p: &mut PathBuf| {
            if p.is_relative() {
                *p = dir.join(&*p);
            }
        };
        // A bare name is a program to look up on PATH later, as nvcc does with `-ccbin`.
        let program = |p: &mut PathBuf| {
            if p.is_relative() && p.components().count() > 1 {
                *p = dir.join(&*p);
            }
        };
        self.nvcc.as_mut().map(path);
        self.launcher.as_mut().map(program);
        self.compat_data.as_mut().map(path);
        self.target.sysroot.as_mut().map(path);
        self.target.cuda_root.as_mut().map(path);
        self.target.cuda_compat.as_mut().map(path);
        for section in [&mut self.host_compiler, &mut self.target.host_compiler] {
            for entry in section.stdenv.iter_mut().chain(section.candidates.iter_mut()) {
                program(&mut entry.path);
            }
        }
    }
}

/// Find and read the configuration for this context.
pub fn load(ctx: &Context) -> Result<Loaded> {
    let Some(path) = find(ctx) else {
        return Ok(Loaded::default());
    };
    let text = crate::bounded::read_to_string(&path, crate::bounded::CONFIG).map_err(|e| {
        Error::new(ErrorKind::Config, format!("cannot read config file {}: {e}", path.display()))
            .with_help(format!("fix the file, or unset ${} / remove the file to run without one", vars::CONFIG))
    })?;
    let config = read(&text, &path)?;
    Ok(Loaded { config, source: Source { path: Some(path), ..Source::default() } })
}

/// Apply the environment's overrides of the file's settings: `NVCC_WRAPPER_CAPABILITIES` replaces `[gpu]
/// capabilities`, `NVCC_WRAPPER_FORWARD_COMPAT` replaces `[gpu] forward-compat`, `NVCC_WRAPPER_COMPRESS_FATBIN`
/// replaces `[gpu] compress-fatbin`. Unset or empty leaves the file's value. A value the wrapper cannot read is an
/// error naming the variable, never ignored: a packager who set it means it for every nvcc call.
pub fn apply_env(loaded: &mut Loaded, env: &Env) -> Result<()> {
    if let Some(launcher) = env.non_empty(vars::LAUNCHER) {
        let shown = launcher.to_string_lossy();
        loaded.source.overrides.push(format!("`launcher` is {shown:?}, from ${}", vars::LAUNCHER));
        // As in the file: a bare name is looked up on PATH, anything else is a path from the working directory.
        loaded.config.launcher = Some(PathBuf::from(launcher));
        loaded.source.from_env.push(vars::LAUNCHER);
    }
    if let Some(value) = env.non_empty(vars::CAPABILITIES) {
        let shown = value.to_string_lossy();
        let bad = |why: String| {
            Error::new(ErrorKind::Environment, format!("{}={shown}: {why}", vars::CAPABILITIES)).with_help(format!(
                "list capabilities like `8.6;9.0a` (also `86,90a` or `sm_86 sm_90a`), or unset {} to use the config's",
                vars::CAPABILITIES
            ))
        };
        let text = value.to_str().ok_or_else(|| bad("not UTF-8".into()))?;
        let capabilities = Capability::parse_list(text).map_err(|e| bad(e.to_string()))?;
        if capabilities.is_empty() {
            return Err(bad("names no capability".into()));
        }
        loaded.source.overrides.push(format!("`[gpu] capabilities` is {text:?}, from ${}", vars::CAPABILITIES));
        loaded.config.gpu.capabilities = capabilities;
        loaded.source.from_env.push(vars::CAPABILITIES);
    }
    if let Some(on) = env.switch(vars::FORWARD_COMPAT)? {
        loaded.source.overrides.push(format!("`[gpu] forward-compat` is {on}, from ${}", vars::FORWARD_COMPAT));
        loaded.config.gpu.forward_compat = on;
        loaded.source.from_env.push(vars::FORWARD_COMPAT);
    }
    if let Some(on) = env.switch(vars::COMPRESS_FATBIN)? {
        loaded.source.overrides.push(format!("`[gpu] compress-fatbin` is {on}, from ${}", vars::COMPRESS_FATBIN));
        loaded.config.gpu.compress_fatbin = Some(on);
        loaded.source.from_env.push(vars::COMPRESS_FATBIN);
    }
    apply_target_env(loaded, env)
}

/// `NVCC_WRAPPER_TARGET_*`: each replaces its `[target]` key. Paths must be absolute, since the wrapper cannot know
/// which directory a relative one was meant against.
fn apply_target_env(loaded: &mut Loaded, env: &Env) -> Result<()> {
    let text = |name: &'static str| -> Result<Option<&str>> {
        match env.non_empty(name) {
            None => Ok(None),
            Some(value) => value.to_str().map(Some).ok_or_else(|| {
                Error::new(ErrorKind::Environment, format!("{name}={}: not UTF-8", value.to_string_lossy()))
                    .with_help(format!("unset {name} to use the config's value"))
            }),
        }
    };
    let target = &mut loaded.config.target;
    let mut said = Vec::new();
    if let Some(system) = text(vars::TARGET_SYSTEM)? {
        target.system = Some(system.to_string());
        said.push(("system", system.to_string(), vars::TARGET_SYSTEM));
    }
    if let Some(platform) = text(vars::TARGET_PLATFORM)? {
        target.platform = Some(match platform {
            "jetson" => TargetPlatform::Jetson,
            "sbsa" => TargetPlatform::Sbsa,
            _ => {
                return Err(Error::new(
                    ErrorKind::Environment,
                    format!("{}={platform}: not a target platform", vars::TARGET_PLATFORM),
                )
                .with_help(format!("use `jetson` or `sbsa`, or unset {}", vars::TARGET_PLATFORM)))
            }
        });
        said.push(("platform", platform.to_string(), vars::TARGET_PLATFORM));
    }
    for (name, key, slot) in [
        (vars::TARGET_SYSROOT, "sysroot", &mut target.sysroot),
        (vars::TARGET_CUDA_ROOT, "cuda-root", &mut target.cuda_root),
        (vars::TARGET_CUDA_COMPAT, "cuda-compat", &mut target.cuda_compat),
    ] {
        let Some(path) = env.non_empty(name) else { continue };
        if !Path::new(path).is_absolute() {
            return Err(Error::new(
                ErrorKind::Environment,
                format!("{name}={}: not an absolute path", path.to_string_lossy()),
            )
            .with_help(format!("give {name} as an absolute path, or unset it")));
        }
        *slot = Some(PathBuf::from(path));
        said.push((key, path.to_string_lossy().into_owned(), name));
    }
    for (key, value, name) in said {
        loaded.source.overrides.push(format!("`[target] {key}` is {value:?}, from ${name}"));
        loaded.source.from_env.push(name);
    }
    Ok(())
}

/// A configuration file's settings, as the file at `path` with this text says them: parsed, and its relative paths
/// made absolute against its directory.
pub fn read(text: &str, path: &Path) -> Result<Config> {
    let mut config = parse(text, path)?;
    if let Some(dir) = path.parent() {
        config.resolve_paths(dir);
    }
    Ok(config)
}

/// Parse a configuration file's text; `path` only names it in errors.
pub fn parse(text: &str, path: &Path) -> Result<Config> {
    toml::from_str(text).map_err(|e| toml_error(&e, text, path))
}

/// `path:line:column: message`, the way compilers report positions.
pub fn toml_error(e: &toml::de::Error, text: &str, path: &Path) -> Error {
    let position = e.span().map(|span| {
        let before = &text[..span.start.min(text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        format!(":{line}:{column}")
    });
    Error::new(
        ErrorKind::Config,
        format!("invalid config file {}{}: {}", path.display(), position.unwrap_or_default(), e.message().trim_end()),
    )
    .with_help("the README's configuration section lists every key and its values")
}

/// Where the configuration file is, if anywhere. `$NVCC_WRAPPER_CONFIG` wins even when the file is missing, so that
/// a wrong name is reported rather than silently replaced by another file.
fn find(ctx: &Context) -> Option<PathBuf> {
    if let Some(named) = ctx.env.non_empty(vars::CONFIG) {
        return Some(ctx.absolute(Path::new(named)));
    }
    [invoked_path(ctx), ctx.current_exe.clone()]
        .into_iter()
        .flatten()
        .filter_map(|exe| Some(exe.parent()?.join("../share/nvcc-wrapper/config.toml")))
        .find(|candidate| candidate.is_file())
}

/// The path the wrapper was started through, symlinks kept: argv[0] if it has a slash, else its PATH match.
pub fn invoked_path(ctx: &Context) -> Option<PathBuf> {
    let argv0 = Path::new(&ctx.argv0);
    if argv0.as_os_str().is_empty() {
        return None;
    }
    if argv0.components().count() > 1 {
        return Some(ctx.absolute(argv0));
    }
    which::which_in(argv0, Some(ctx.search_path()), &ctx.cwd).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_ok(text: &str) -> Config {
        parse(text, Path::new("/cfg.toml")).unwrap_or_else(|e| panic!("{e}"))
    }

    fn parse_err(text: &str) -> String {
        let e = parse(text, Path::new("/cfg.toml")).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Config);
        e.message
    }

    #[test]
    fn every_key_parses() {
        let c = parse_ok(
            r#"
nvcc = "/opt/cuda/bin/nvcc"
cuda-version = "12.4"
launcher = "ccache"
compat-data = "compat"

[host-compiler]
stdenv = { path = "/usr/bin/g++-12", family = "gcc", version = "12.2.0", target = "x86_64-linux-gnu" }
candidates = ["/usr/bin/g++-11", { path = "/usr/bin/clang++-16", family = "clang" }]
prefer = "clang"
allow-unsupported = true

[gpu]
capabilities = ["8.6", "9.0a"]
forward-compat = true
arch-flags = "replace"
compress-fatbin = false

[target]
system = "aarch64-linux"
platform = "jetson"
sysroot = "/sysroot"
cuda-root = "/nix/store/x-cuda"

[target.host-compiler]
stdenv = "aarch64-unknown-linux-gnu-g++"
candidates = [{ path = "aarch64-linux-gnu-g++-11", family = "gcc", version = "11.4.0", target = "aarch64-linux-gnu" }]
"#,
        );
        assert_eq!(c.nvcc.as_deref(), Some(Path::new("/opt/cuda/bin/nvcc")));
        assert_eq!(c.cuda_version.unwrap().to_string(), "12.4");
        assert_eq!(c.launcher.as_deref(), Some(Path::new("ccache")));
        let stdenv = c.host_compiler.stdenv.unwrap();
        assert_eq!(stdenv.version.unwrap().to_string(), "12.2.0");
        assert_eq!(c.host_compiler.candidates.len(), 2);
        assert_eq!(c.host_compiler.candidates[0].path, Path::new("/usr/bin/g++-11"));
        assert_eq!(c.host_compiler.candidates[1].family, Some(CompilerFamily::Clang));
        assert_eq!(c.host_compiler.prefer, Some(CompilerFamily::Clang));
        assert!(c.host_compiler.allow_unsupported);
        let caps: Vec<String> = c.gpu.capabilities.iter().map(|c| c.to_string()).collect();
        assert_eq!(caps, ["8.6", "9.0a"]);
        assert_eq!(c.gpu.arch_flags, ArchFlags::Replace);
        assert_eq!(c.gpu.compress_fatbin, Some(false));
        assert_eq!(c.target.platform, Some(TargetPlatform::Jetson));
        let cross = &c.target.host_compiler;
        assert_eq!(cross.stdenv.as_ref().unwrap().path, Path::new("aarch64-unknown-linux-gnu-g++"));
        assert_eq!(cross.candidates[0].target.as_deref(), Some("aarch64-linux-gnu"));
    }

    #[test]
    fn relative_paths_are_resolved_against_the_file_once_loaded() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("cfg.toml");
        std::fs::write(
            &file,
            "nvcc = \"cuda/bin/nvcc\"\ncompat-data = \"data\"\nlauncher = \"tools/sccache\"\n[host-compiler]\nstdenv = \"bin/g++\"\ncandidates = [\"g++-11\", \"/usr/bin/clang++\"]\n[target]\nsysroot = \"root\"\ncuda-root = \"/abs/cuda\"\n[target.host-compiler]\nstdenv = \"./cross/g++\"\n",
        )
        .unwrap();
        let ctx = Context {
            env: [(vars::CONFIG, file.as_os_str())].into_iter().collect(),
            cwd: "/elsewhere".into(),
            ..Context::default()
        };
        let c = load(&ctx).unwrap().config;
        let d = dir.path();
        assert_eq!(c.nvcc.unwrap(), d.join("cuda/bin/nvcc"));
        assert_eq!(c.compat_data.unwrap(), d.join("data"));
        assert_eq!(c.launcher.unwrap(), d.join("tools/sccache"));
        assert_eq!(c.host_compiler.stdenv.unwrap().path, d.join("bin/g++"));
        // A bare name is a program on PATH, as with nvcc's -ccbin; an absolute path stays as it is.
        assert_eq!(c.host_compiler.candidates[0].path, Path::new("g++-11"));
        assert_eq!(c.host_compiler.candidates[1].path, Path::new("/usr/bin/clang++"));
        assert_eq!(c.target.sysroot.unwrap(), d.join("root"));
        assert_eq!(c.target.cuda_root.unwrap(), Path::new("/abs/cuda"));
        assert_eq!(c.target.host_compiler.stdenv.unwrap().path, d.join("./cross/g++"));
    }

    #[test]
    fn empty_file_is_all_defaults() {
        assert_eq!(parse_ok(""), Config::default());
        assert_eq!(parse_ok("").gpu.arch_flags, ArchFlags::Respect);
        assert_eq!(parse_ok("").gpu.compress_fatbin, None, "unset, which means on");
    }

    #[test]
    fn unknown_keys_name_the_key_file_and_position() {
        let m = parse_err("nvcc = \"x\"\n[gpu]\ncapabilites = [\"8.6\"]\n");
        assert!(m.contains("/cfg.toml:3:1"), "{m}");
        assert!(m.contains("capabilites"), "{m}");
        let m = parse_err("[host-compiler]\ncandidates = [{ path = \"g++\", verison = \"1\" }]\n");
        assert!(m.contains("verison"), "{m}");
        let m = parse_err("[hostcompiler]\n");
        assert!(m.contains("hostcompiler"), "{m}");
    }

    #[test]
    fn bad_values_and_syntax_are_reported_with_position() {
        let m = parse_err("[gpu]\narch-flags = \"sometimes\"\n");
        assert!(m.contains(":2:14") && m.contains("sometimes"), "{m}");
        let m = parse_err("cuda-version = \"twelve\"\n");
        assert!(m.contains(":1:16") && m.contains("twelve"), "{m}");
        let m = parse_err("nvcc = \n");
        assert!(m.contains("/cfg.toml:1:"), "{m}");
        let m = parse_err("[host-compiler]\nprefer = \"icc\"\n");
        assert!(m.contains("icc"), "{m}");
        let m = parse_err("[gpu]\ncapabilities = [\"8.6\", \"9.x\"]\n");
        assert!(m.contains(":2:16") && m.contains("9.x"), "{m}");
    }

    #[test]
    fn the_environment_overrides_gpu_settings() {
        let env = |pairs: &[(&str, &str)]| pairs.iter().copied().collect::<Env>();
        let file = || Loaded {
            config: parse_ok("[gpu]\ncapabilities = [\"7.5\"]\nforward-compat = true\n"),
            ..Loaded::default()
        };
        let shown = |l: &Loaded| l.config.gpu.capabilities.iter().map(|c| c.to_string()).collect::<Vec<_>>();

        let mut l = file();
        apply_env(&mut l, &env(&[])).unwrap();
        assert_eq!((shown(&l), l.config.gpu.forward_compat), (vec!["7.5".to_string()], true));
        assert!(l.source.overrides.is_empty());
        apply_env(&mut l, &env(&[(vars::CAPABILITIES, ""), (vars::FORWARD_COMPAT, "")])).unwrap();
        assert!(l.source.overrides.is_empty(), "empty is unset");

        for text in ["8.6;9.0a", "86,90a", "sm_86 sm_90a", " 8.6 ;\t9.0a,"] {
            let mut l = file();
            apply_env(&mut l, &env(&[(vars::CAPABILITIES, text), (vars::FORWARD_COMPAT, "0")])).unwrap();
            assert_eq!(shown(&l), ["8.6", "9.0a"], "{text:?}");
            assert!(!l.config.gpu.forward_compat);
            assert_eq!(l.source.overrides.len(), 2);
        }

        for on in ["0", "1"] {
            let mut l = file();
            apply_env(&mut l, &env(&[(vars::COMPRESS_FATBIN, on)])).unwrap();
            assert_eq!(l.config.gpu.compress_fatbin, Some(on == "1"));
            assert_eq!(l.source.from_env, [vars::COMPRESS_FATBIN]);
        }
        let mut l = file();
        apply_env(&mut l, &env(&[(vars::COMPRESS_FATBIN, "")])).unwrap();
        assert_eq!(l.config.gpu.compress_fatbin, None, "empty is unset");

        for (name, value) in [
            (vars::CAPABILITIES, "8.6;nine"),
            (vars::CAPABILITIES, " ; "),
            (vars::FORWARD_COMPAT, "maybe"),
            (vars::COMPRESS_FATBIN, "smaller"),
        ] {
            let err = apply_env(&mut file(), &env(&[(name, value)])).unwrap_err();
            assert_eq!(err.kind, ErrorKind::Environment);
            assert!(err.message.contains(name) && err.message.contains(value), "{err}");
            assert!(err.help.is_some());
        }
    }

    #[test]
    fn the_environment_overrides_the_launcher() {
        let env = |pairs: &[(&str, &str)]| pairs.iter().copied().collect::<Env>();
        let file = || Loaded { config: parse_ok("launcher = \"/usr/bin/ccache\"\n"), ..Loaded::default() };
        let mut l = file();
        apply_env(&mut l, &env(&[(vars::LAUNCHER, "")])).unwrap();
        assert_eq!(l.config.launcher.as_deref(), Some(Path::new("/usr/bin/ccache")), "empty is unset");
        apply_env(&mut l, &env(&[(vars::LAUNCHER, "sccache")])).unwrap();
        assert_eq!(l.config.launcher.as_deref(), Some(Path::new("sccache")));
        assert_eq!(l.source.overrides, ["`launcher` is \"sccache\", from $NVCC_WRAPPER_LAUNCHER"]);
        assert_eq!(l.source.origin(vars::LAUNCHER).1, "$NVCC_WRAPPER_LAUNCHER");
    }

    #[test]
    fn the_environment_overrides_target_settings() {
        let env = |pairs: &[(&str, &str)]| pairs.iter().copied().collect::<Env>();
        let file = || Loaded {
            config: parse_ok("[target]\nsystem = \"powerpc64le-linux\"\nsysroot = \"/file/sysroot\"\n"),
            source: Source { path: Some("/etc/nvcc.toml".into()), ..Source::default() },
        };
        let mut l = file();
        apply_env(
            &mut l,
            &env(&[
                (vars::TARGET_SYSTEM, "aarch64-linux"),
                (vars::TARGET_PLATFORM, "jetson"),
                (vars::TARGET_SYSROOT, "/env/sysroot"),
                (vars::TARGET_CUDA_ROOT, "/env/cuda"),
            ]),
        )
        .unwrap();
        let t = &l.config.target;
        assert_eq!(t.system.as_deref(), Some("aarch64-linux"));
        assert_eq!(t.platform, Some(TargetPlatform::Jetson));
        assert_eq!(t.sysroot.as_deref(), Some(Path::new("/env/sysroot")));
        assert_eq!(t.cuda_root.as_deref(), Some(Path::new("/env/cuda")));
        assert_eq!(l.source.overrides.len(), 4);
        let origin = |var| l.source.origin(var);
        assert_eq!(origin(vars::TARGET_SYSROOT), (ErrorKind::Environment, "$NVCC_WRAPPER_TARGET_SYSROOT".into()));
        assert_eq!(origin(vars::CAPABILITIES), (ErrorKind::Config, "/etc/nvcc.toml".into()));

        let mut l = file();
        apply_env(&mut l, &env(&[(vars::TARGET_SYSROOT, "")])).unwrap();
        assert_eq!(l.config.target.sysroot.as_deref(), Some(Path::new("/file/sysroot")), "empty is unset");

        for (name, value) in
            [(vars::TARGET_PLATFORM, "tegra"), (vars::TARGET_SYSROOT, "rel/dir"), (vars::TARGET_CUDA_ROOT, "cuda")]
        {
            let err = apply_env(&mut file(), &env(&[(name, value)])).unwrap_err();
            assert_eq!(err.kind, ErrorKind::Environment);
            assert!(err.message.contains(name) && err.message.contains(value), "{err}");
        }
    }
}
