//! The host-compiler rule, as pure functions over compilers whose family and version are known: which compiler to
//! choose (`choose`), and the flags that point another compiler at the stdenv compiler's libstdc++
//! (`libstdcxx_flags`). The step (`super`) finds the compilers and says what it chose.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::args::split::{first_unpassable, joined, Unpassable};
use crate::compat::{Accepts, CompilerFamily, Libstdcxx};
use crate::probe::compiler::{Known, StdenvLibstdcxx};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// The stdenv compiler is accepted: use it as it is.
    Stdenv(Known),
    /// Another compiler, because this nvcc does not accept the stdenv one (`stdenv` is `None` when none is known).
    Other { chosen: Known, stdenv: Option<Known> },
    /// Nothing is accepted, and the configuration allows unsupported compilers: the stdenv one, unchecked.
    Unsupported(Known),
}

/// No accepted compiler, with everything considered (for the error message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoneAccepted {
    pub considered: Vec<Known>,
}

/// Apply the rule (steps 2 to 4; step 1 is the caller's, since nothing needs choosing then).
pub fn choose(
    accepts: Accepts,
    stdenv: Option<&Known>,
    candidates: &[Known],
    prefer: Option<CompilerFamily>,
    allow_unsupported: bool,
) -> Result<Choice, NoneAccepted> {
    if let Some(s) = stdenv.filter(|s| accepts.accepts(s.family, s.version)) {
        return Ok(Choice::Stdenv(s.clone()));
    }
    let first = prefer.or(stdenv.map(|s| s.family)).unwrap_or(CompilerFamily::Gcc);
    let rank = |k: &Known| (k.family == first, k.version);
    let best = candidates.iter().filter(|k| accepts.accepts(k.family, k.version)).max_by_key(|k| rank(k));
    if let Some(chosen) = best {
        return Ok(Choice::Other { chosen: chosen.clone(), stdenv: stdenv.cloned() });
    }
    match stdenv {
        Some(s) if allow_unsupported => Ok(Choice::Unsupported(s.clone())),
        _ => {
            let mut considered: Vec<Known> = Vec::new();
            for k in stdenv.into_iter().chain(candidates) {
                if !considered.iter().any(|c| c.path == k.path) {
                    considered.push(k.clone());
                }
            }
            Err(NoneAccepted { considered })
        }
    }
}

/// Flags that make a compile or link by `chosen` use the stdenv compiler's libstdc++ (measured on nvcc 11.8 with
/// g++-11 against objects of g++-12, docs/nvcc-facts.md#sharing-libstdc-with-the-main-compiler): for GCC, its library
/// directory first on the link and an rpath to its `libstdc++.so.6`; for Clang, the stdenv's GCC installation for
/// headers and library alike (`--gcc-install-dir` from Clang 16, `--gcc-toolchain` before), plus the same rpath.
/// `-Xcompiler` options reach every host-compiler call nvcc makes, the final link included. Paths are written byte
/// for byte; a directory that an `-X` list cannot carry unchanged is the error, and no flag is made.
pub fn libstdcxx_flags(
    chosen: &Known,
    stdenv: &StdenvLibstdcxx,
    links: bool,
) -> Result<Vec<OsString>, (PathBuf, Unpassable)> {
    let in_list = |prefix: &str, dir: &Path| match first_unpassable(dir.as_os_str().as_bytes()) {
        None => Ok(joined(prefix, dir)),
        Some(byte) => Err((dir.to_path_buf(), byte)),
    };
    let mut flags = Vec::new();
    match chosen.family.def().libstdcxx {
        Libstdcxx::GccInstallation if chosen.version.major >= 16 => {
            flags.push(in_list("-Xcompiler=--gcc-install-dir=", &stdenv.gcc_install_dir)?);
        }
        Libstdcxx::GccInstallation => {
            // PREFIX/lib/gcc/TRIPLE/VERSION -> PREFIX, which is what --gcc-toolchain takes.
            let prefix = stdenv.gcc_install_dir.ancestors().nth(4).unwrap_or(&stdenv.gcc_install_dir);
            flags.push(in_list("-Xcompiler=--gcc-toolchain=", prefix)?);
        }
        // nvcc's own option, which nvcc quotes for the host compiler: any path passes.
        Libstdcxx::LibraryDir if links => flags.push(joined("-L", &stdenv.gcc_install_dir)),
        Libstdcxx::LibraryDir => {}
    }
    if links {
        flags.push(in_list("-Xlinker=-rpath,", &stdenv.runtime_dir)?);
    }
    Ok(flags)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use CompilerFamily::{Clang, Gcc};

    fn k(path: &str, family: CompilerFamily, version: &str) -> Known {
        Known { path: path.into(), family, version: version.parse().unwrap(), target: None }
    }

    const NVCC_11_8: Accepts = Accepts::of(11, 14);
    const NVCC_12_4: Accepts = Accepts::of(13, 17);

    fn all() -> Vec<Known> {
        vec![
            k("g++-11", Gcc, "11.3.0"),
            k("g++-12", Gcc, "12.2.0"),
            k("clang++-14", Clang, "14.0.6"),
            k("clang++-16", Clang, "16.0.6"),
            k("clang++-19", Clang, "19.1.7"),
        ]
    }

    fn dirs() -> StdenvLibstdcxx {
        StdenvLibstdcxx {
            gcc_install_dir: "/usr/lib/gcc/x86_64-linux-gnu/12".into(),
            runtime_dir: "/usr/lib/x86_64-linux-gnu".into(),
        }
    }

    #[test]
    fn libstdcxx_flags_per_family_and_phase() {
        let rows: &[(Known, bool, &[&str])] = &[
            (
                k("g++-11", Gcc, "11.3.0"),
                true,
                &["-L/usr/lib/gcc/x86_64-linux-gnu/12", "-Xlinker=-rpath,/usr/lib/x86_64-linux-gnu"],
            ),
            (k("g++-11", Gcc, "11.3.0"), false, &[]),
            (
                k("clang++-16", Clang, "16.0.6"),
                false,
                &["-Xcompiler=--gcc-install-dir=/usr/lib/gcc/x86_64-linux-gnu/12"],
            ),
            (
                k("clang++-14", Clang, "14.0.6"),
                true,
                &["-Xcompiler=--gcc-toolchain=/usr", "-Xlinker=-rpath,/usr/lib/x86_64-linux-gnu"],
            ),
        ];
        for (chosen, links, want) in rows {
            assert_eq!(libstdcxx_flags(chosen, &dirs(), *links).unwrap(), *want, "{chosen} links={links}");
        }
    }

    #[test]
    fn libstdcxx_flags_write_paths_exactly_and_refuse_what_an_x_list_would_change() {
        use std::os::unix::ffi::OsStringExt;
        let spaced = StdenvLibstdcxx {
            gcc_install_dir: "/opt/my gcc/lib/gcc/x/12".into(),
            runtime_dir: "/opt/my gcc/lib64".into(),
        };
        let g11 = k("g++-11", Gcc, "11.3.0");
        // A GCC compile gets nothing; a GCC link's -L is nvcc's own option, which carries a space; its rpath cannot.
        assert_eq!(libstdcxx_flags(&g11, &spaced, false), Ok(vec![]));
        assert_eq!(libstdcxx_flags(&g11, &spaced, true), Err(("/opt/my gcc/lib64".into(), Unpassable(b' '))));
        let clang = k("clang++-16", Clang, "16.0.6");
        assert_eq!(libstdcxx_flags(&clang, &spaced, false), Err(("/opt/my gcc/lib/gcc/x/12".into(), Unpassable(b' '))));
        // Bytes that are not UTF-8 pass, exactly.
        let raw = |bytes: &[u8]| PathBuf::from(OsString::from_vec(bytes.to_vec()));
        let latin1 =
            StdenvLibstdcxx { gcc_install_dir: raw(b"/opt/gcc-\xe9/12"), runtime_dir: raw(b"/opt/gcc-\xe9/lib") };
        let want = vec![
            OsString::from_vec(b"-L/opt/gcc-\xe9/12".to_vec()),
            OsString::from_vec(b"-Xlinker=-rpath,/opt/gcc-\xe9/lib".to_vec()),
        ];
        assert_eq!(libstdcxx_flags(&g11, &latin1, true), Ok(want));
    }

    #[test]
    fn stdenv_in_range_is_used_unchanged() {
        let g12 = k("g++-12", Gcc, "12.2.0");
        assert_eq!(choose(NVCC_12_4, Some(&g12), &all(), None, false), Ok(Choice::Stdenv(g12)));
    }

    #[test]
    fn out_of_range_stdenv_gets_newest_accepted_of_its_family_first() {
        let rows = [
            (NVCC_11_8, k("g++-12", Gcc, "12.2.0"), None, "g++-11"),
            (NVCC_11_8, k("clang++-19", Clang, "19.1.7"), None, "clang++-14"),
            (NVCC_12_4, k("clang++-19", Clang, "19.1.7"), None, "clang++-16"),
            (NVCC_11_8, k("g++-12", Gcc, "12.2.0"), Some(Clang), "clang++-14"),
            (NVCC_11_8, k("clang++-19", Clang, "19.1.7"), Some(Gcc), "g++-11"),
        ];
        for (accepts, stdenv, prefer, want) in rows {
            match choose(accepts, Some(&stdenv), &all(), prefer, false) {
                Ok(Choice::Other { chosen, stdenv: Some(s) }) => {
                    assert_eq!(chosen.path, PathBuf::from(want), "{stdenv} prefer {prefer:?}");
                    assert_eq!(s, stdenv);
                }
                other => panic!("{stdenv}: {other:?}"),
            }
        }
    }

    #[test]
    fn the_other_family_when_the_own_has_none_in_range() {
        let only = [k("g++-12", Gcc, "12.2.0"), k("clang++-14", Clang, "14.0.6")];
        let got = choose(NVCC_11_8, Some(&only[0]), &only, None, false).unwrap();
        assert!(matches!(got, Choice::Other { chosen, .. } if chosen.path == std::path::Path::new("clang++-14")));
    }

    #[test]
    fn nothing_in_range_is_an_error_listing_everything_or_the_escape() {
        let stdenv = k("g++-12", Gcc, "12.2.0");
        let cands = [k("clang++-19", Clang, "19.1.7")];
        let err = choose(NVCC_11_8, Some(&stdenv), &cands, None, false).unwrap_err();
        assert_eq!(err.considered, [stdenv.clone(), cands[0].clone()]);
        assert_eq!(choose(NVCC_11_8, Some(&stdenv), &cands, None, true), Ok(Choice::Unsupported(stdenv.clone())));
        assert!(choose(NVCC_11_8, None, &[], None, true).is_err());
        // The stdenv compiler listed again as a candidate is considered once.
        let err = choose(NVCC_11_8, Some(&stdenv), std::slice::from_ref(&stdenv), None, false).unwrap_err();
        assert_eq!(err.considered, [stdenv]);
    }
}
