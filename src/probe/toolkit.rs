//! `nvcc-wrapper compat scan ROOT`: the host-compiler row a real toolkit's own header implies, checked against the
//! table. This is how compat-data/host-compilers.toml is verified against NVIDIA's releases rather than trusted.

use std::path::{Path, PathBuf};

use crate::compat::host_config;
use crate::compat::Version;
use crate::compat::{Accepts, HostCompilerTable};
use crate::error::{ErrorKind, Result};
use crate::probe;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolkitScan {
    pub header: PathBuf,
    /// nvcc's own version, from the toolkit's `version.json` or `bin/nvcc --version`.
    pub nvcc: Version,
    pub limits: Accepts,
}

impl ToolkitScan {
    /// The row as it would be written in host-compilers.toml.
    pub fn row(&self) -> String {
        // A family the header accepts in no version has no key (a row without it means the same).
        let accepts: Vec<String> = crate::compat::FAMILIES
            .iter()
            .filter(|f| self.limits.newest(f.id) > 0)
            .map(|f| format!("{} = {}", f.spelling, self.limits.newest(f.id)))
            .collect();
        format!(
            "[[release]]\nnvcc = \"{}\"\naccepts = {{ {} }}\nsource = \"measured: {}\"\n",
            self.nvcc,
            accepts.join(", "),
            crate::error::shell::path(&self.header)
        )
    }

    /// Whether the table says the same for this nvcc; an error naming both when not.
    pub fn check(&self, table: &HostCompilerTable) -> Result<()> {
        let (nvcc, header, says) = (self.nvcc, self.header.clone(), self.limits.describe());
        let Some(row) = table.limits_for(self.nvcc) else {
            return Err(Refused::NotInTable { nvcc, says }.into());
        };
        if row.accepts() != self.limits {
            let (row, table_says) = (row.nvcc, row.accepts().describe());
            return Err(Refused::TableDiffers { nvcc, header, says, row, table_says }.into());
        }
        Ok(())
    }
}

/// Read `ROOT/include/crt/host_config.h` (or the x86_64 target's) and the toolkit's version.
pub fn scan(root: &Path) -> Result<ToolkitScan> {
    let header = ["include/crt/host_config.h", "targets/x86_64-linux/include/crt/host_config.h"]
        .iter()
        .map(|rel| root.join(rel))
        .find(|p| p.is_file())
        .ok_or_else(|| Refused::NoHeader { root: root.to_path_buf() })?;
    let text = crate::error::bounded::read_to_string(&header, crate::error::bounded::HEADER)
        .map_err(|e| Refused::Unreadable { header: header.clone(), why: e.to_string() })?;
    let limits =
        host_config::scan(&text).map_err(|e| Refused::NewLayout { header: header.clone(), why: e.to_string() })?;
    let nvcc = version_of(root)?;
    Ok(ToolkitScan { header, nvcc, limits })
}

fn version_of(root: &Path) -> Result<Version> {
    let json = probe::nvcc::read_version_json(root).map_err(|e| Refused::VersionJson { why: e.to_string() })?;
    if let Some(v) = json.and_then(|v| v.nvcc.or(v.cuda)) {
        return Ok(v);
    }
    let nvcc = root.join("bin/nvcc");
    probe::nvcc::probe_nvcc(&nvcc)
        .map(|v| v.full)
        .map_err(|e| Refused::NoRelease { root: root.to_path_buf(), why: e.to_string() }.into())
}

/// What `compat scan` refuses or finds wrong, as data: each with a stable code (`Coded`), its words once (`Display`,
/// `help`), and its kind (`Problem`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// The toolkit's nvcc is in no row of the table; its header `says`.
    NotInTable { nvcc: Version, says: String },
    /// The header `says` one thing, the table's `row` another.
    TableDiffers { nvcc: Version, header: PathBuf, says: String, row: Version, table_says: String },
    /// No `include/crt/host_config.h` under `root`.
    NoHeader { root: PathBuf },
    /// The header cannot be read (`why`).
    Unreadable { header: PathBuf, why: String },
    /// The header's host-compiler check is of a layout the scanner does not know (`why`).
    NewLayout { header: PathBuf, why: String },
    /// The toolkit's `version.json` cannot be used (`why`, which names it).
    VersionJson { why: String },
    /// Neither `version.json` nor `bin/nvcc` tells the release of the toolkit at `root`.
    NoRelease { root: PathBuf, why: String },
    /// `compat scan ROOT`: `root` is not a directory.
    NotADirectory { root: PathBuf },
}

crate::error::codes!(Refused {
    NotInTable => "not-in-table",
    TableDiffers => "table-differs",
    NoHeader => "no-header",
    Unreadable => "unreadable",
    NewLayout => "new-layout",
    VersionJson => "version-json",
    NoRelease => "no-release",
    NotADirectory => "not-a-directory",
});

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::error::shell::path;
        match self {
            Refused::NotInTable { nvcc, says } => {
                write!(f, "nvcc {nvcc} is not in the compatibility table; its header says {says}")
            }
            Refused::TableDiffers { nvcc, header, says, row, table_says } => {
                write!(f, "nvcc {nvcc}: {} says {says}, but the table's row {row} says {table_says}", path(header))
            }
            Refused::NoHeader { root } => write!(f, "{} has no include/crt/host_config.h", path(root)),
            Refused::Unreadable { header, why } => write!(f, "cannot read {}: {why}", path(header)),
            Refused::NewLayout { header, why } => {
                write!(f, "cannot read the host-compiler check in {}: {why}", path(header))
            }
            Refused::VersionJson { why } => f.write_str(why),
            Refused::NoRelease { root, why } => write!(f, "cannot tell the release of {}: {why}", path(root)),
            Refused::NotADirectory { root } => write!(f, "`compat scan {}`: no such directory", path(root)),
        }
    }
}

impl crate::error::Problem for Refused {
    fn kind(&self) -> ErrorKind {
        match self {
            Refused::NotInTable { .. } | Refused::TableDiffers { .. } => ErrorKind::CheckFailed,
            Refused::NotADirectory { .. } => ErrorKind::Usage,
            _ => ErrorKind::Request,
        }
    }

    /// What to do about it, where the wrapper can say.
    fn help(&self) -> Option<String> {
        let help = match self {
            Refused::NotInTable { .. } | Refused::TableDiffers { .. } => Some(
                "correct compat-data/host-compilers.toml from the header (the scan's row above), with its source",
            ),
            Refused::NoHeader { .. } => Some("give the root of a CUDA toolkit (the directory holding bin/ and include/), or a header set from scripts/fetch-toolkits.sh headers-X.Y"),
            Refused::NewLayout { .. } => {
                Some("this header's layout is new to the scanner: compare it with the shapes in src/compat/host_config.rs")
            }
            Refused::NoRelease { .. } => Some("a toolkit root needs version.json or a runnable bin/nvcc"),
            Refused::NotADirectory { .. } => {
                Some("give the root of a CUDA toolkit (the directory holding bin/ and include/)")
            }
            Refused::Unreadable { .. } | Refused::VersionJson { .. } => None,
        };
        help.map(str::to_string)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compat::Table;

    fn toolkit(header: &str, json: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("include/crt")).unwrap();
        std::fs::write(dir.path().join("include/crt/host_config.h"), header).unwrap();
        std::fs::write(dir.path().join("version.json"), json).unwrap();
        dir
    }

    const HEADER_11_8: &str = "#if !__NV_NO_HOST_COMPILER_CHECK\n#if defined(__GNUC__)\n#if __GNUC__ > 11\n#error -- unsupported GNU version! gcc versions later than 11 are not supported!\n#endif\n#endif\n#if defined(__clang__)\n#if (__clang_major__ >= 15) || (__clang_major__ < 3) || ((__clang_major__ == 3) &&  (__clang_minor__ < 3))\n#error -- unsupported clang version!\n#endif\n#endif\n#endif\n";

    #[test]
    fn scans_and_checks_against_the_table() {
        let dir = toolkit(HEADER_11_8, r#"{"cuda_nvcc": {"version": "11.8.89"}}"#);
        let scan = scan(dir.path()).unwrap();
        assert_eq!(scan.nvcc.to_string(), "11.8.89");
        assert_eq!((scan.limits.gcc, scan.limits.clang), (11, 14));
        assert!(scan.row().contains("nvcc = \"11.8.89\"\naccepts = { gcc = 11, clang = 14 }\n"));
        scan.check(HostCompilerTable::built_in()).unwrap();
    }

    #[test]
    fn a_disagreement_names_both() {
        let dir = toolkit(HEADER_11_8, r#"{"cuda_nvcc": {"version": "12.4.131"}}"#);
        let err = scan(dir.path()).unwrap().check(HostCompilerTable::built_in()).unwrap_err();
        assert_eq!(err.kind, ErrorKind::CheckFailed);
        assert!(
            err.message.contains("GCC up to 11 and Clang up to 14")
                && err.message.contains("GCC up to 13 and Clang up to 17"),
            "{err}"
        );
        let dir = toolkit(HEADER_11_8, r#"{"cuda_nvcc": {"version": "10.2.89"}}"#);
        assert!(scan(dir.path())
            .unwrap()
            .check(HostCompilerTable::built_in())
            .unwrap_err()
            .message
            .contains("not in the compatibility table"));
    }

    #[test]
    fn a_directory_without_the_header_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = scan(dir.path()).unwrap_err();
        assert!(err.message.contains("no include/crt/host_config.h"), "{err}");
    }
}
