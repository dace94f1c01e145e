//! The probes the planner may ask for, as a trait, and the implementation that really runs programs.
//!
//! `plan` takes a `&dyn Probes` and asks only for what its rule needs (a compiler is probed only when the choice
//! depends on it), so tests answer with fixed facts and the real wrapper runs as few programs as possible.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::compiler::{Known, StdenvLibstdcxx};
use crate::version::Version;

pub trait Probes {
    /// The version of the real nvcc (its own, `12.4.131`), from the toolkit's `version.json` or `nvcc --version`,
    /// and which of the two said it.
    fn nvcc_version(&self, nvcc: &Path) -> Result<(Version, &'static str), String>;
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
}

/// Probes that run the real programs, searching `path` (the wrapper's PATH) from `cwd`.
pub struct System {
    pub path: Option<OsString>,
    pub cwd: PathBuf,
}

impl Probes for System {
    fn nvcc_version(&self, nvcc: &Path) -> Result<(Version, &'static str), String> {
        let from_json = super::nvcc::toolkit_root_of(nvcc)
            .ok()
            .and_then(|root| super::nvcc::read_version_json(&root).ok().flatten())
            .and_then(|v| v.nvcc.or(v.cuda));
        match from_json {
            Some(version) => Ok((version, "the toolkit's version.json")),
            None => super::nvcc::probe_nvcc(nvcc).map(|v| (v.full, "`nvcc --version`")).map_err(|e| e.to_string()),
        }
    }

    fn compiler(&self, path: &Path) -> Result<Known, String> {
        let info = super::compiler::probe_compiler(path).map_err(|e| e.to_string())?;
        Ok(Known { path: path.to_path_buf(), family: info.family, version: info.version, target: Some(info.target) })
    }

    fn libstdcxx(&self, path: &Path) -> Result<StdenvLibstdcxx, String> {
        Ok(StdenvLibstdcxx {
            gcc_install_dir: super::compiler::gcc_install_dir(path).map_err(|e| e.to_string())?,
            runtime_dir: super::compiler::libstdcxx_dir(path).map_err(|e| e.to_string())?,
        })
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
}

/// `g++`, `g++-12`, `clang++`, `clang++-16`: the C++ drivers nvcc can use, once any triple prefix is taken off.
fn is_compiler_name(name: &str) -> bool {
    ["g++", "clang++"].iter().any(|base| match name.strip_prefix(base) {
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
