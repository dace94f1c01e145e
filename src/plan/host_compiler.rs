//! Choosing the host compiler: the rule, as a pure function over compilers whose family and version are known.
//!
//! 1. A host compiler the user gave (any spelling or channel) is used; the wrapper adds nothing and only warns when
//!    this nvcc does not accept it.
//! 2. Else the stdenv compiler, when this nvcc accepts it: no libstdc++ skew, LTO keeps working.
//! 3. Else the newest accepted candidate, of the stdenv compiler's family first, then the other family (`prefer`
//!    swaps the order).
//! 4. Else, with `allow-unsupported`, the stdenv compiler plus `-allow-unsupported-compiler`; without it, an error
//!    that names the release, the accepted range and every compiler considered.

use std::path::PathBuf;

use crate::config::CompilerFamily;
use crate::version::Version;

/// A compiler whose family and version are known (from the config or from probing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Known {
    pub path: PathBuf,
    pub family: CompilerFamily,
    pub version: Version,
    /// The GNU triple it builds for, when known.
    pub target: Option<String>,
}

impl std::fmt::Display for Known {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({} {})",
            self.path.display(),
            self.family,
            self.version
        )
    }
}

/// What this nvcc accepts: the newest GCC and Clang majors, inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Accepts {
    pub newest_gcc: u32,
    pub newest_clang: u32,
}

impl Accepts {
    pub fn accepts(&self, family: CompilerFamily, version: Version) -> bool {
        version.major
            <= match family {
                CompilerFamily::Gcc => self.newest_gcc,
                CompilerFamily::Clang => self.newest_clang,
            }
    }

    pub fn describe(&self) -> String {
        format!(
            "GCC up to {} and Clang up to {}",
            self.newest_gcc, self.newest_clang
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// The stdenv compiler is accepted: use it as it is.
    Stdenv(Known),
    /// Another compiler, because this nvcc does not accept the stdenv one (`stdenv` is `None` when none is known).
    Other {
        chosen: Known,
        stdenv: Option<Known>,
    },
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
    let first = prefer
        .or(stdenv.map(|s| s.family))
        .unwrap_or(CompilerFamily::Gcc);
    let rank = |k: &Known| (k.family == first, k.version);
    let best = candidates
        .iter()
        .filter(|k| accepts.accepts(k.family, k.version))
        .max_by_key(|k| rank(k));
    if let Some(chosen) = best {
        return Ok(Choice::Other {
            chosen: chosen.clone(),
            stdenv: stdenv.cloned(),
        });
    }
    match stdenv {
        Some(s) if allow_unsupported => Ok(Choice::Unsupported(s.clone())),
        _ => Err(NoneAccepted {
            considered: stdenv.into_iter().chain(candidates).cloned().collect(),
        }),
    }
}

/// Where the stdenv compiler's libstdc++ lives (probed with the stdenv compiler, or recorded in the config).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StdenvLibstdcxx {
    /// The GCC installation directory, `PREFIX/lib/gcc/TRIPLE/VERSION`: holds `libstdc++.a` and a `libstdc++.so`.
    pub gcc_install_dir: PathBuf,
    /// The directory holding the `libstdc++.so.6` that programs load at run time.
    pub runtime_dir: PathBuf,
}

/// Flags that make a compile or link by `chosen` use the stdenv compiler's libstdc++ (measured on nvcc 11.8 with
/// g++-11 against objects of g++-12, see shared notes): for GCC, its library directory first on the link and an
/// rpath to its `libstdc++.so.6`; for Clang, the stdenv's GCC installation for headers and library alike
/// (`--gcc-install-dir` from Clang 16, `--gcc-toolchain` before), plus the same rpath. `-Xcompiler` options reach
/// every host-compiler call nvcc makes, the final link included.
pub fn libstdcxx_flags(chosen: &Known, stdenv: &StdenvLibstdcxx, links: bool) -> Vec<String> {
    let mut flags = Vec::new();
    match chosen.family {
        CompilerFamily::Clang if chosen.version.major >= 16 => {
            flags.push(format!(
                "-Xcompiler=--gcc-install-dir={}",
                stdenv.gcc_install_dir.display()
            ));
        }
        CompilerFamily::Clang => {
            // PREFIX/lib/gcc/TRIPLE/VERSION -> PREFIX, which is what --gcc-toolchain takes.
            let prefix = stdenv
                .gcc_install_dir
                .ancestors()
                .nth(4)
                .unwrap_or(&stdenv.gcc_install_dir);
            flags.push(format!("-Xcompiler=--gcc-toolchain={}", prefix.display()));
        }
        CompilerFamily::Gcc if links => {
            flags.push(format!("-L{}", stdenv.gcc_install_dir.display()))
        }
        CompilerFamily::Gcc => {}
    }
    if links {
        flags.push(format!("-Xlinker=-rpath,{}", stdenv.runtime_dir.display()));
    }
    flags
}

/// Whether nvcc will run the host compiler on this input (and so check its version): sources, not objects or
/// libraries. An input with no known extension counts as a source, to be safe.
pub fn is_host_compiled(input: &std::ffi::OsStr) -> bool {
    let ext = std::path::Path::new(input)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("");
    !matches!(
        ext,
        "o" | "obj" | "a" | "lib" | "so" | "dylib" | "res" | "cubin" | "fatbin" | "ptx" | "ltoir"
    ) && !input.to_string_lossy().contains(".so.")
}

#[cfg(test)]
mod tests {
    use super::*;
    use CompilerFamily::{Clang, Gcc};

    fn k(path: &str, family: CompilerFamily, version: &str) -> Known {
        Known {
            path: path.into(),
            family,
            version: version.parse().unwrap(),
            target: None,
        }
    }

    const NVCC_11_8: Accepts = Accepts {
        newest_gcc: 11,
        newest_clang: 14,
    };
    const NVCC_12_4: Accepts = Accepts {
        newest_gcc: 13,
        newest_clang: 17,
    };

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
                &[
                    "-L/usr/lib/gcc/x86_64-linux-gnu/12",
                    "-Xlinker=-rpath,/usr/lib/x86_64-linux-gnu",
                ],
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
                &[
                    "-Xcompiler=--gcc-toolchain=/usr",
                    "-Xlinker=-rpath,/usr/lib/x86_64-linux-gnu",
                ],
            ),
        ];
        for (chosen, links, want) in rows {
            assert_eq!(
                libstdcxx_flags(chosen, &dirs(), *links),
                *want,
                "{chosen} links={links}"
            );
        }
    }

    #[test]
    fn which_inputs_the_host_compiler_sees() {
        for source in ["a.cu", "b.cpp", "c.c", "d.ii", "noext"] {
            assert!(is_host_compiled(source.as_ref()), "{source}");
        }
        for object in [
            "a.o",
            "lib/x.a",
            "libfoo.so",
            "libfoo.so.1.2",
            "k.cubin",
            "k.fatbin",
        ] {
            assert!(!is_host_compiled(object.as_ref()), "{object}");
        }
    }

    #[test]
    fn stdenv_in_range_is_used_unchanged() {
        let g12 = k("g++-12", Gcc, "12.2.0");
        assert_eq!(
            choose(NVCC_12_4, Some(&g12), &all(), None, false),
            Ok(Choice::Stdenv(g12))
        );
    }

    #[test]
    fn out_of_range_stdenv_gets_newest_accepted_of_its_family_first() {
        let rows = [
            (NVCC_11_8, k("g++-12", Gcc, "12.2.0"), None, "g++-11"),
            (
                NVCC_11_8,
                k("clang++-19", Clang, "19.1.7"),
                None,
                "clang++-14",
            ),
            (
                NVCC_12_4,
                k("clang++-19", Clang, "19.1.7"),
                None,
                "clang++-16",
            ),
            (
                NVCC_11_8,
                k("g++-12", Gcc, "12.2.0"),
                Some(Clang),
                "clang++-14",
            ),
            (
                NVCC_11_8,
                k("clang++-19", Clang, "19.1.7"),
                Some(Gcc),
                "g++-11",
            ),
        ];
        for (accepts, stdenv, prefer, want) in rows {
            match choose(accepts, Some(&stdenv), &all(), prefer, false) {
                Ok(Choice::Other {
                    chosen,
                    stdenv: Some(s),
                }) => {
                    assert_eq!(
                        chosen.path,
                        PathBuf::from(want),
                        "{stdenv} prefer {prefer:?}"
                    );
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
        assert!(
            matches!(got, Choice::Other { chosen, .. } if chosen.path == std::path::Path::new("clang++-14"))
        );
    }

    #[test]
    fn nothing_in_range_is_an_error_listing_everything_or_the_escape() {
        let stdenv = k("g++-12", Gcc, "12.2.0");
        let cands = [k("clang++-19", Clang, "19.1.7")];
        let err = choose(NVCC_11_8, Some(&stdenv), &cands, None, false).unwrap_err();
        assert_eq!(err.considered, [stdenv.clone(), cands[0].clone()]);
        assert_eq!(
            choose(NVCC_11_8, Some(&stdenv), &cands, None, true),
            Ok(Choice::Unsupported(stdenv))
        );
        assert!(choose(NVCC_11_8, None, &[], None, true).is_err());
    }
}
