//! The probes the planner may ask for, as a trait, and the implementation that really runs programs.
//!
//! `plan` takes a `&dyn Probes` and asks only for what its rule needs (a compiler is probed only when the choice
//! depends on it), so tests answer with fixed facts and the real wrapper runs as few programs as possible. What
//! `System` learns by running a compiler or nvcc goes through the probe cache (`cache`), so the next call runs
//! nothing; `plan` never sees the cache.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::cache::{self, Entry, Failure, ProbeCache};
use super::compiler::{CompilerFamily, CompilerInfo, Known, StdenvLibstdcxx};
use crate::compat::Version;

/// Why an nvcc's release cannot be told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NvccUnknown {
    /// Asked `--version`, the program said it is another one (`/usr/bin/gcc --version` says `gcc ... 12.2.0`).
    NotNvcc { command: String, says: String },
    /// Anything else, in the probe's words.
    Failed(String),
}

impl std::fmt::Display for NvccUnknown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NvccUnknown::NotNvcc { command, says } => write!(f, "`{command}` says `{says}`: it is not nvcc"),
            NvccUnknown::Failed(why) => f.write_str(why),
        }
    }
}

pub trait Probes {
    /// The version of the real nvcc (its own, `12.4.131`), from the toolkit's `version.json` or `nvcc --version`,
    /// and which of the two said it.
    fn nvcc_version(&self, nvcc: &Path) -> Result<(Version, &'static str), NvccUnknown>;
    /// What the toolkit's `version.json` says of this nvcc, read without running anything: `None` where there is
    /// none (Debian's packages, the PyPI wheels) or a probe that knows no file system.
    fn toolkit_version(&self, nvcc: &Path) -> Option<Version> {
        let _ = nvcc;
        None
    }
    /// Family, version and target of a compiler.
    fn compiler(&self, path: &Path) -> Result<Known, String>;
    /// Where a GCC-based compiler's libstdc++ lives.
    fn libstdcxx(&self, path: &Path) -> Result<StdenvLibstdcxx, String>;
    /// A program name resolved the way nvcc would (PATH), or `None`.
    fn resolve(&self, name: &Path) -> Option<PathBuf>;
    /// Host compilers installed on PATH, for hand use when the config lists none: `g++`, `g++-N`, `clang++`,
    /// `clang++-N`; with a GNU triple, the cross compilers `TRIPLE-g++`, `TRIPLE-g++-N`, `TRIPLE-clang++[-N]`.
    fn installed_compilers(&self, triple: Option<&str>) -> Vec<PathBuf>;
    /// The toolkit root (`TOP`) nvcc uses when started by this path.
    fn toolkit_root(&self, nvcc: &Path) -> Result<PathBuf, String>;
    /// Whether a file or directory exists.
    fn exists(&self, path: &Path) -> bool;
    /// Whether nvcc may put files beside an output it writes at `path` (relative to the working directory): the
    /// output is absent or a regular file, and its directory takes new files. Probes that know no file system say
    /// it may.
    fn output_place(&self, path: &Path) -> OutputPlace {
        let _ = path;
        OutputPlace::Usable
    }
    /// The release of a compiler cache the wrapper runs nvcc through (`sccache --version`). Probes that know no
    /// launcher say so, and the planner then keeps the launcher.
    fn launcher_version(&self, launcher: &Path) -> Result<Version, String> {
        Err(format!("{} was not probed", crate::error::shell::path(launcher)))
    }
    /// The compute capabilities of this machine's GPUs, for `native`; never cached (GPUs come and go with
    /// containers and `CUDA_VISIBLE_DEVICES`). Probes that know no machine see none.
    fn gpus(&self) -> Result<Vec<crate::compat::Capability>, String> {
        Err("this machine's GPUs were not probed".into())
    }
    /// The host compiler nvcc runs when it is given none: `gcc` to compile and `g++` to link, as PATH finds them;
    /// `None` where its `nvcc.profile` names a `compiler-bindir` (that directory is nvcc's default then), or PATH
    /// holds neither. Probes that know no machine know none.
    fn nvcc_default_compiler(&self, nvcc: &Path) -> Option<NvccDefault> {
        let _ = nvcc;
        None
    }
    /// Whether the keeper can hold nvcc's programs at their exec here (`super::hold`), which threads that follow the
    /// build need. Probes that know no machine were not asked.
    fn hold(&self) -> Result<(), super::hold::Unheld> {
        Err(super::hold::Unheld::NotProbed)
    }
}

/// nvcc's own host compiler: the programs it runs, by name, when given no `-ccbin` (measured with 11.8, 12.4 and 13.5:
/// `gcc` for every compile step, `g++` for the link).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NvccDefault {
    pub gcc: PathBuf,
    pub gxx: PathBuf,
}

/// Where an output goes, as far as nvcc's files beside it are concerned (`Probes::output_place`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputPlace {
    /// Absent or a regular file, in a directory that takes new files.
    Usable,
    /// Something else (`/dev/null` is a character device).
    NotRegular(&'static str),
    /// Its directory does not take new files (for this user), or does not exist.
    DirNotWritable,
}

/// Probes that run the real programs, searching `path` (the wrapper's PATH) from `cwd`, and keep what they find in
/// `cache`.
#[derive(Clone)]
pub struct System {
    pub path: Option<OsString>,
    pub cwd: PathBuf,
    pub cache: ProbeCache,
    /// The compilers this call has asked about, with the answers: two steps asking for one compiler (the host step
    /// and the reproducible step, for a compiler the user named) read its cache entry once. Ordered, not hashed (see
    /// `plan::model::Positions`).
    known: Arc<Mutex<BTreeMap<PathBuf, Result<Known, String>>>>,
}

impl System {
    pub fn new(path: Option<OsString>, cwd: PathBuf, cache: ProbeCache) -> System {
        System { path, cwd, cache, known: Arc::default() }
    }
}

impl Probes for System {
    fn nvcc_version(&self, nvcc: &Path) -> Result<(Version, &'static str), NvccUnknown> {
        let mut not_nvcc = None;
        let (found, cached) = self
            .cache
            .get_or_probe(nvcc, || match self.toolkit_version(nvcc) {
                Some(version) => Ok(NvccRelease { version, from: ReleaseSource::VersionJson }),
                None => super::nvcc::probe_nvcc(nvcc)
                    .map(|v| NvccRelease { version: v.full, from: ReleaseSource::NvccVersion })
                    .map_err(|e| {
                        if let super::ProbeErrorKind::NotNvcc { says } = &e.kind {
                            not_nvcc = Some(NvccUnknown::NotNvcc { command: e.command(), says: says.clone() });
                        }
                        failure(e)
                    }),
            })
            // The planner says an unknown release on stderr itself, with this message in it.
            .map_err(|f| not_nvcc.take().unwrap_or_else(|| NvccUnknown::Failed(described(f, false))))?;
        Ok((found.version, found.from.describe(cached)))
    }

    fn toolkit_version(&self, nvcc: &Path) -> Option<Version> {
        let versions = super::nvcc::read_version_json(&super::nvcc::toolkit_root_unresolved(nvcc)?).ok().flatten()?;
        versions.nvcc.or(versions.cuda)
    }

    fn compiler(&self, path: &Path) -> Result<Known, String> {
        let mut known = self.known.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let answer = known.entry(path.to_path_buf()).or_insert_with(|| {
            let (info, _) = self
                .cache
                .get_or_probe(path, || super::compiler::probe_compiler(path).map_err(failure))
                .map_err(|f| described(f, true))?;
            Ok(Known {
                path: path.to_path_buf(),
                family: info.family,
                version: info.version,
                target: Some(info.target),
            })
        });
        answer.clone()
    }

    fn libstdcxx(&self, path: &Path) -> Result<StdenvLibstdcxx, String> {
        let (found, _) = self
            .cache
            .get_or_probe(path, || {
                Ok(StdenvLibstdcxx {
                    gcc_install_dir: super::compiler::gcc_install_dir(path).map_err(failure)?,
                    runtime_dir: super::compiler::libstdcxx_dir(path).map_err(failure)?,
                })
            })
            .map_err(|f| described(f, true))?;
        Ok(found)
    }

    fn resolve(&self, name: &Path) -> Option<PathBuf> {
        which::which_in(name, self.path.as_ref(), &self.cwd).ok()
    }

    fn installed_compilers(&self, triple: Option<&str>) -> Vec<PathBuf> {
        let prefix = triple.map(|t| format!("{t}-")).unwrap_or_default();
        let mut found = Vec::new();
        for dir in self.path.iter().flat_map(std::env::split_paths) {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            let mut names: Vec<String> = entries
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| n.strip_prefix(prefix.as_str()).is_some_and(is_compiler_name))
                .collect();
            names.sort();
            for name in names {
                let path = dir.join(&name);
                // The first directory on PATH that has a name wins, as for the shell.
                if !found.iter().any(|p: &PathBuf| p.file_name() == path.file_name()) && is_executable(&path) {
                    found.push(path);
                }
            }
        }
        found
    }

    fn toolkit_root(&self, nvcc: &Path) -> Result<PathBuf, String> {
        super::nvcc::toolkit_root_of(nvcc).map_err(|e| e.to_string())
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn output_place(&self, path: &Path) -> OutputPlace {
        use std::os::unix::ffi::OsStrExt;
        use std::os::unix::fs::FileTypeExt;
        let path = self.cwd.join(path);
        match std::fs::metadata(&path) {
            Ok(meta) if !meta.is_file() => {
                let kind = meta.file_type();
                return OutputPlace::NotRegular(if kind.is_char_device() {
                    "a character device"
                } else if kind.is_block_device() {
                    "a block device"
                } else if kind.is_fifo() {
                    "a FIFO"
                } else if kind.is_socket() {
                    "a socket"
                } else if kind.is_dir() {
                    "a directory"
                } else {
                    "not a regular file"
                });
            }
            _ => {}
        }
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let Ok(dir) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else { return OutputPlace::DirNotWritable };
        // SAFETY: `dir` is a valid NUL-terminated string; access only reads it.
        if unsafe { libc::access(dir.as_ptr(), libc::W_OK) } == 0 {
            OutputPlace::Usable
        } else {
            OutputPlace::DirNotWritable
        }
    }

    fn gpus(&self) -> Result<Vec<crate::compat::Capability>, String> {
        let smi = self
            .resolve(Path::new("nvidia-smi"))
            .ok_or("there is no `nvidia-smi` on PATH (the NVIDIA driver's), so no GPU is visible here")?;
        super::gpus::probe(&smi).map_err(|e| e.to_string())
    }

    fn hold(&self) -> Result<(), super::hold::Unheld> {
        super::hold::check()
    }

    fn nvcc_default_compiler(&self, nvcc: &Path) -> Option<NvccDefault> {
        let profile = nvcc.parent()?.join("nvcc.profile");
        // One that cannot be read may name one: nvcc's default is not known then.
        let profile = match crate::error::bounded::read(&profile, 64 << 10) {
            Ok(text) => text,
            Err(crate::error::bounded::Refused::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(_) => return None,
        };
        if super::nvcc::profile_names_a_compiler(&String::from_utf8_lossy(&profile)) {
            return None;
        }
        Some(NvccDefault { gcc: self.resolve(Path::new("gcc"))?, gxx: self.resolve(Path::new("g++"))? })
    }

    fn launcher_version(&self, launcher: &Path) -> Result<Version, String> {
        let (found, _) = self
            .cache
            .get_or_probe(launcher, || super::launcher::probe_launcher(launcher).map(LauncherRelease).map_err(failure))
            .map_err(|f| described(f, true))?;
        Ok(found.0)
    }
}

/// A probe's error as the cache keeps it: the program's own failures are kept for a while, a failure to start it is
/// not.
fn failure(err: super::ProbeError) -> Failure {
    use super::ProbeErrorKind as Kind;
    Failure {
        message: err.to_string(),
        // Not nvcc at all: said each call, as the error it is where the config names it (`plan::facts`).
        keep: !matches!(err.kind, Kind::Io(_) | Kind::NotNvcc { .. }),
        stopped: matches!(err.kind, Kind::TimedOut(_) | Kind::TooMuchOutput(_)),
        remembered: None,
    }
}

/// A failure as the planner is told it, with when it happened if the cache kept it. A program that had to be stopped
/// costs the call up to `TIME_LIMIT` (`WORKING_LIMIT` if it kept working) and changes what the wrapper decides, so it
/// is said on stderr (`warn`), once.
fn described(failure: Failure, warn: bool) -> String {
    let mut message = failure.message;
    if let Some(age) = failure.remembered {
        message += &format!(
            " (in an earlier call {} s ago: the probe cache keeps that for {} s before running it again)",
            age.as_secs(),
            cache::FAILURE_LIFETIME.as_secs()
        );
    }
    if warn && failure.stopped {
        crate::error::output::warning_once(&format!("{message}; the wrapper goes on without its answer"));
    }
    message
}

/// A launcher's release as probed.
struct LauncherRelease(Version);

impl Entry for LauncherRelease {
    const KIND: &'static str = "launcher";

    fn fields(&self) -> Vec<(&'static str, Vec<u8>)> {
        vec![("version", self.0.to_string().into_bytes())]
    }

    fn from_fields(fields: &BTreeMap<String, Vec<u8>>) -> Option<Self> {
        Some(LauncherRelease(cache::text_field(fields, "version")?.parse().ok()?))
    }
}

/// The NVCC release as probed, and where it was read.
struct NvccRelease {
    version: Version,
    from: ReleaseSource,
}

#[derive(Clone, Copy)]
enum ReleaseSource {
    VersionJson,
    NvccVersion,
}

impl ReleaseSource {
    /// Where the release came from, for `explain`, `doctor` and the debug log.
    fn describe(self, cached: bool) -> &'static str {
        match (self, cached) {
            (ReleaseSource::VersionJson, false) => "the toolkit's version.json",
            (ReleaseSource::NvccVersion, false) => "`nvcc --version`",
            (ReleaseSource::VersionJson, true) => "the probe cache, as the toolkit's version.json said",
            (ReleaseSource::NvccVersion, true) => "the probe cache, as `nvcc --version` said",
        }
    }
}

impl Entry for NvccRelease {
    const KIND: &'static str = "nvcc";

    fn fields(&self) -> Vec<(&'static str, Vec<u8>)> {
        let from = match self.from {
            ReleaseSource::VersionJson => "version.json",
            ReleaseSource::NvccVersion => "nvcc --version",
        };
        vec![("version", self.version.to_string().into_bytes()), ("from", from.into())]
    }

    fn from_fields(fields: &BTreeMap<String, Vec<u8>>) -> Option<Self> {
        let from = match cache::text_field(fields, "from")?.as_str() {
            "version.json" => ReleaseSource::VersionJson,
            "nvcc --version" => ReleaseSource::NvccVersion,
            _ => return None,
        };
        Some(NvccRelease { version: cache::text_field(fields, "version")?.parse().ok()?, from })
    }
}

impl Entry for CompilerInfo {
    const KIND: &'static str = "compiler";

    fn fields(&self) -> Vec<(&'static str, Vec<u8>)> {
        vec![
            ("family", self.family.to_string().into_bytes()),
            ("version", self.version.to_string().into_bytes()),
            ("target", self.target.clone().into_bytes()),
        ]
    }

    fn from_fields(fields: &BTreeMap<String, Vec<u8>>) -> Option<Self> {
        let family = CompilerFamily::from_spelling(&cache::text_field(fields, "family")?)?;
        let version = cache::text_field(fields, "version")?.parse().ok()?;
        Some(CompilerInfo { family, version, target: cache::text_field(fields, "target")? })
    }
}

impl Entry for StdenvLibstdcxx {
    const KIND: &'static str = "libstdcxx";

    fn fields(&self) -> Vec<(&'static str, Vec<u8>)> {
        use std::os::unix::ffi::OsStrExt;
        vec![
            ("gcc-install-dir", self.gcc_install_dir.as_os_str().as_bytes().to_vec()),
            ("runtime-dir", self.runtime_dir.as_os_str().as_bytes().to_vec()),
        ]
    }

    fn from_fields(fields: &BTreeMap<String, Vec<u8>>) -> Option<Self> {
        Some(StdenvLibstdcxx {
            gcc_install_dir: cache::path_field(fields, "gcc-install-dir")?,
            runtime_dir: cache::path_field(fields, "runtime-dir")?,
        })
    }
}

/// `g++`, `g++-12`, `clang++`, `clang++-16`: the C++ drivers nvcc can use (each family's), once any triple prefix is
/// taken off.
fn is_compiler_name(name: &str) -> bool {
    crate::compat::FAMILIES.iter().map(|f| f.driver).any(|base| match name.strip_prefix(base) {
        Some("") => true,
        Some(rest) => {
            rest.strip_prefix('-').is_some_and(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
        }
        None => false,
    })
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiler_names() {
        for yes in ["g++", "g++-11", "clang++", "clang++-16", "g++-12.2"] {
            assert!(is_compiler_name(yes), "{yes}");
        }
        for no in ["gcc", "g++-", "aarch64-linux-gnu-g++", "clang++-format", "g++-11-old", "clang", "c++"] {
            assert!(!is_compiler_name(no), "{no}");
        }
    }
}
