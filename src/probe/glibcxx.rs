//! `GLIBCXX_x.y.z` symbol versions: which ones a libstdc++ provides, and which ones a linked program or shared
//! library needs. For the `doctor` check that the libstdc++ a link is pointed at provides everything the main
//! compiler's objects need (docs/nvcc-facts.md#sharing-libstdc-with-the-main-compiler: code built by g++-12 with
//! `-D_GLIBCXX_ASSERTIONS` needs GLIBCXX_3.4.30, which GCC 11's libstdc++ lacks).
//!
//! The version names are found by scanning the bytes for NUL-terminated `GLIBCXX_<digits and dots>` strings rather
//! than by parsing the ELF version sections: the names live in the dynamic string table, and a scan reads every ELF
//! class and byte order alike. In libstdc++ itself they are the versions it defines; in anything linked against it,
//! the versions it needs. Relocatable objects (`.o`, `.a`) carry none: their needs are only settled by the link.

use std::path::Path;

use super::{ProbeError, ProbeErrorKind};
use crate::compat::Version;

const PREFIX: &[u8] = b"GLIBCXX_";

/// Every `GLIBCXX_` version named in `bytes`, oldest first, without repeats. Names that are not versions
/// (`GLIBCXX_TUNABLES`, `GLIBCXX_DEBUG_MESSAGE_LENGTH`: environment variables libstdc++ reads) are skipped.
pub fn glibcxx_versions(bytes: &[u8]) -> Vec<Version> {
    let mut found = Vec::new();
    let mut rest = bytes;
    while let Some(at) = rest.windows(PREFIX.len()).position(|w| w == PREFIX) {
        let tail = &rest[at + PREFIX.len()..];
        let len = tail.iter().take_while(|b| b.is_ascii_digit() || **b == b'.').count();
        if tail.get(len) == Some(&0) {
            // Only ASCII digits and dots were taken, so this is valid UTF-8.
            if let Ok(version) = std::str::from_utf8(&tail[..len]).unwrap_or("").parse() {
                found.push(version);
            }
        }
        rest = &tail[len..];
    }
    found.sort();
    found.dedup();
    found
}

/// The newest `GLIBCXX_` version named in `bytes`, if any.
#[cfg(test)]
fn newest_glibcxx(bytes: &[u8]) -> Option<Version> {
    glibcxx_versions(bytes).pop()
}

/// Reads an ELF file (`libstdc++.so.6`, a program, a shared library) and lists its `GLIBCXX_` versions. Anything
/// that is not ELF is an error, so that a linker script named `libstdc++.so` is not mistaken for a library that
/// provides nothing.
pub fn read_glibcxx_versions(path: &Path) -> Result<Vec<Version>, ProbeError> {
    let bytes = crate::error::bounded::read(path, crate::error::bounded::ELF)
        .map_err(|err| ProbeError::io(path, err.into()))?;
    if !bytes.starts_with(b"\x7fELF") {
        let found = String::from_utf8_lossy(&bytes[..bytes.len().min(64)]);
        let kind = ProbeErrorKind::Unexpected { expected: "an ELF file", found: super::first_line(&found).to_string() };
        return Err(ProbeError { program: path.to_path_buf(), args: Vec::new(), kind });
    }
    Ok(glibcxx_versions(&bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::process::Command;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    #[test]
    fn finds_nul_terminated_version_names_only() {
        let bytes = b"\x7fELF\0libstdc++.so.6\0GLIBCXX_3.4.30\0GLIBCXX_3.4\0GLIBCXX_TUNABLES\0GLIBCXX_3.4.9\0\
                      CXXABI_1.3.13\0GLIBCXX_3.4.9\0xGLIBCXX_3.4.31x\0GLIBCXX_\0GLIBCXX_3.\0GLIBCXX_3.4.29";
        assert_eq!(glibcxx_versions(bytes), [v("3.4"), v("3.4.9"), v("3.4.30")]);
        assert_eq!(newest_glibcxx(bytes), Some(v("3.4.30")));
        assert_eq!(newest_glibcxx(b""), None);
    }

    #[test]
    fn rejects_what_is_not_elf() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("libstdc++.so");
        fs::write(&script, "/* GNU ld script */\nINPUT(/usr/lib64/libstdc++.so.6 -lstdc++_nonshared)\n").unwrap();
        let err = read_glibcxx_versions(&script).unwrap_err();
        assert!(err.to_string().contains("expected an ELF file, got `/* GNU ld script */`"), "{err}");
    }

    // The tests below read the libstdc++ and build programs with the real g++-12 and g++-11 (see compiler.rs).

    #[test]
    fn lists_what_the_real_libstdcxx_of_gcc_12_provides() {
        let gxx12 = which::which("g++-12").unwrap();
        let dir = crate::probe::compiler::libstdcxx_dir(&gxx12).unwrap();
        let versions = read_glibcxx_versions(&dir.join("libstdc++.so.6")).unwrap();
        // GCC 12 introduced GLIBCXX_3.4.30; a newer libstdc++ (a distribution's shared one) lists more.
        assert!(versions.contains(&v("3.4")) && versions.contains(&v("3.4.30")), "{versions:?}");
        assert!(versions.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn finds_what_a_real_program_needs() {
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join("assert.cc");
        // Bounds-checked indexing calls std::__glibcxx_assert_fail, exported from GLIBCXX_3.4.30 (GCC 12) on.
        fs::write(&source, "#include <vector>\nint main(int c, char**) { std::vector<int> v(1); return v[c]; }\n")
            .unwrap();
        for (cc, needs) in [("g++-12", "3.4.30"), ("g++-11", "3.4.29")] {
            let program = dir.path().join(cc);
            let status = Command::new(cc).arg("-D_GLIBCXX_ASSERTIONS").arg(&source).arg("-o").arg(&program).status();
            assert!(status.unwrap().success(), "{cc} failed");
            let bytes = fs::read(&program).unwrap();
            assert_eq!(newest_glibcxx(&bytes), Some(v(needs)), "{cc}");
        }
    }
}
