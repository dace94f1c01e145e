//! Host compilers: which family and release a compiler is, which target it builds for, and where its GCC
//! installation and libstdc++ live (needed to share the main compiler's libstdc++ with an older host compiler; see
//! docs/nvcc-facts.md#sharing-libstdc-with-the-main-compiler).
//!
//! Judging whether a compiler suits an nvcc release is not done here; that belongs to the compat tables.

use std::fs;
use std::path::{Path, PathBuf};

use super::{run, ProbeError};
use crate::compat::{read_banner, Version};

const VERSION: &str = "--version";
const DUMPFULLVERSION: &str = "-dumpfullversion";
const DUMPMACHINE: &str = "-dumpmachine";
const PRINT_LIBGCC: &str = "-print-libgcc-file-name";

pub use crate::compat::CompilerFamily;

/// A compiler whose family and version are known (recorded in the config, or probed).
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
        // Quoted as a shell reads it, so a path that is not UTF-8 shows its bytes instead of U+FFFD (issue 26).
        f.write_str(&named(&crate::error::shell::path(&self.path), &self.family, &self.version))
    }
}

/// `PATH (FAMILY VERSION)`: how messages name a compiler (the Nix answers' frame names `{path}`, `{family}` and
/// `{version}`).
pub fn named(path: &dyn std::fmt::Display, family: &dyn std::fmt::Display, version: &dyn std::fmt::Display) -> String {
    format!("{path} ({family} {version})")
}

/// Where a GCC-based compiler's libstdc++ lives (probed, or recorded in the config).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StdenvLibstdcxx {
    /// The GCC installation directory, `PREFIX/lib/gcc/TRIPLE/VERSION`: holds `libstdc++.a` and a `libstdc++.so`.
    pub gcc_install_dir: PathBuf,
    /// The directory holding the `libstdc++.so.6` that programs load at run time.
    pub runtime_dir: PathBuf,
}

/// What a host compiler said about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompilerInfo {
    pub family: CompilerFamily,
    /// The release the compiler's own macros report (`__GNUC__.__GNUC_MINOR__...`, `__clang_major__...`), which is
    /// what nvcc's `host_config.h` checks. For Apple's Clang that is Apple's numbering, not LLVM's.
    pub version: Version,
    /// The target as `-dumpmachine` prints it: `x86_64-linux-gnu` from GCC, `x86_64-pc-linux-gnu` from Clang.
    pub target: String,
}

/// Reads the family and release from `--version` output.
///
/// Clang names itself on the first line (`Debian clang version 16.0.6 (15~deb12u1)`, `Apple clang version ...`).
/// GCC's first line is `<program name> (<package version>) <release>`, where the program name is whatever the driver
/// was called as and the package version is the vendor's (`(GCC)` when there is none, as on Nix); it is recognised by
/// the FSF copyright line every GCC driver prints. Other GNU programs print that line too, but no `x.y.z` release in
/// that place, so [`probe_compiler`] goes on to `-dumpfullversion` with them and fails there.
pub fn parse_version_output(out: &str) -> Result<(CompilerFamily, Version), ProbeError> {
    match read_banner(out) {
        Some((family, Some(version))) => Ok((family, version)),
        Some((_, None)) => Err(ProbeError::unexpected(&[VERSION], "a release like 12.2.0 after the name", out)),
        None => Err(ProbeError::unexpected(&[VERSION], any_banner(), out)),
    }
}

/// `a GCC or Clang version banner`: every family's, by name.
fn any_banner() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        let names: Vec<&str> = crate::compat::FAMILIES.iter().map(|f| f.name).collect();
        format!("a {} version banner", names.join(" or "))
    })
}

/// Reads `gcc -dumpfullversion` (`12.2.0`). Plain `-dumpversion` is no substitute: Debian's and Ubuntu's GCC are
/// built with `--with-gcc-major-version-only` and answer `12`. Clang does not know `-dumpfullversion`.
pub fn parse_dumpfullversion(out: &str) -> Result<Version, ProbeError> {
    out.trim().parse().map_err(|_| ProbeError::unexpected(&[DUMPFULLVERSION], "a release like 12.2.0", out))
}

/// Reads `-dumpmachine`: one target triple such as `aarch64-linux-gnu`, kept exactly as printed.
pub fn parse_dumpmachine(out: &str) -> Result<String, ProbeError> {
    let triple = out.trim();
    if triple.contains('-') && !triple.contains(char::is_whitespace) {
        Ok(triple.to_string())
    } else {
        Err(ProbeError::unexpected(&[DUMPMACHINE], "a target triple like x86_64-linux-gnu", out))
    }
}

/// Reads `-print-file-name=<name>`. The driver prints the path where it found `name`, or `name` alone when it found
/// nothing, with exit status 0 either way.
pub fn parse_print_file_name(out: &str, name: &str) -> Result<PathBuf, ProbeError> {
    printed_path(out, &format!("-print-file-name={name}"), name)
}

/// Reads `-print-libgcc-file-name`. A Clang set up with `--rtlib=compiler-rt` names its own builtins library
/// instead, which has no GCC installation beside it: that is an error here.
pub fn parse_print_libgcc_file_name(out: &str) -> Result<PathBuf, ProbeError> {
    printed_path(out, PRINT_LIBGCC, "libgcc.a")
}

fn printed_path(out: &str, arg: &str, name: &str) -> Result<PathBuf, ProbeError> {
    let path = Path::new(out.trim());
    if path.is_absolute() && path.file_name().is_some_and(|found| found == name) && !out.trim().contains('\n') {
        Ok(path.to_path_buf())
    } else {
        Err(ProbeError::unexpected(&[arg], "an absolute path to the file (the driver did not find it)", out))
    }
}

/// Runs `<cc> --version` and `<cc> -dumpmachine` (and `<cc> -dumpfullversion` for a GCC whose banner hides its
/// release). `cc` is used as given, so a wrapper script or a ccache link is probed as the build will run it.
pub fn probe_compiler(cc: &Path) -> Result<CompilerInfo, ProbeError> {
    let banner = run(cc, &[VERSION])?;
    let (family, version) = match parse_version_output(&banner) {
        Ok(found) => found,
        // A banner that hides the release: ask the family's own flag, where it has one.
        Err(err) => match read_banner(&banner).and_then(|(family, _)| Some((family, family.def().version_query?))) {
            Some((family, query)) => {
                let out = run(cc, &[query])?;
                (family, parse_dumpfullversion(&out).map_err(|e| e.with_program(cc))?)
            }
            None => return Err(err.with_program(cc)),
        },
    };
    let target = parse_dumpmachine(&run(cc, &[DUMPMACHINE])?).map_err(|e| e.with_program(cc))?;
    Ok(CompilerInfo { family, version, target })
}

/// The GCC installation directory the compiler uses (`/usr/lib/gcc/x86_64-linux-gnu/12`): the directory of its
/// `libgcc.a`, holding `crtbegin.o` and the static `libstdc++.a`. This is what Clang's `--gcc-install-dir=` takes and
/// what `-L` must name to link against this GCC's static libstdc++. For a Clang, it is the GCC installation Clang
/// chose.
///
/// The path is canonical: Clang prints `/usr/bin/../lib/gcc/...`, and a canonical path can be compared with another.
pub fn gcc_install_dir(cc: &Path) -> Result<PathBuf, ProbeError> {
    let libgcc = parse_print_libgcc_file_name(&run(cc, &[PRINT_LIBGCC])?).map_err(|e| e.with_program(cc))?;
    let dir = libgcc.parent().unwrap_or(Path::new("/"));
    fs::canonicalize(dir).map_err(|err| ProbeError::io(dir, err))
}

/// The directory holding the `libstdc++.so.6` that the compiler links against (`/usr/lib/x86_64-linux-gnu` for any
/// Debian GCC, `/nix/store/...-gcc-13.2.0-lib/lib` on Nix): the directory a `-rpath` must name so that the program
/// finds, at run time, the libstdc++ it was linked with.
///
/// Found by resolving the `libstdc++.so` the linker would pick (a symbolic link to the real library in the usual
/// layouts). Where that file is a linker script instead (Red Hat's devtoolset:
/// `INPUT(/usr/lib64/libstdc++.so.6 -lstdc++_nonshared)`), the driver is asked for `libstdc++.so.6` itself.
pub fn libstdcxx_dir(cc: &Path) -> Result<PathBuf, ProbeError> {
    let dir = resolved_dir_of(cc, "libstdc++.so")?;
    if dir.join("libstdc++.so.6").exists() {
        return Ok(dir);
    }
    resolved_dir_of(cc, "libstdc++.so.6")
}

/// The canonical directory of the file `-print-file-name=<name>` finds, after following every symbolic link.
fn resolved_dir_of(cc: &Path, name: &str) -> Result<PathBuf, ProbeError> {
    let arg = format!("-print-file-name={name}");
    let printed = parse_print_file_name(&run(cc, &[&arg])?, name).map_err(|e| e.with_program(cc))?;
    let file = fs::canonicalize(&printed).map_err(|err| ProbeError::io(&printed, err))?;
    Ok(file.parent().unwrap_or(Path::new("/")).to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::ProbeErrorKind;
    use CompilerFamily::{Clang, Gcc};

    const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/probe");

    fn fixture(name: &str) -> String {
        let path = format!("{FIXTURES}/{name}.txt");
        fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// One row per captured compiler (see tests/fixtures/probe/README.md): its `--version` banner's family and
    /// release, `-dumpmachine`, and the GCC installation directory that `-print-libgcc-file-name` and
    /// `-print-file-name=libstdc++.so` both point into. GCC rows also have `-dumpfullversion`.
    #[rustfmt::skip]
    const CAPTURED: &[(&str, CompilerFamily, &str, &str, &str)] = &[
        ("gxx-11-debian12",         Gcc,   "11.3.0", "x86_64-linux-gnu",      "/usr/lib/gcc/x86_64-linux-gnu/11"),
        ("gxx-12-debian12",         Gcc,   "12.2.0", "x86_64-linux-gnu",      "/usr/lib/gcc/x86_64-linux-gnu/12"),
        ("gxx-aarch64-debian12",    Gcc,   "12.2.0", "aarch64-linux-gnu",     "/usr/lib/gcc-cross/aarch64-linux-gnu/12"),
        ("gxx-11-aarch64-debian12", Gcc,   "11.3.0", "aarch64-linux-gnu",     "/usr/lib/gcc-cross/aarch64-linux-gnu/11"),
        ("gxx-ppc64le-debian12",    Gcc,   "12.2.0", "powerpc64le-linux-gnu", "/usr/lib/gcc-cross/powerpc64le-linux-gnu/12"),
        ("gxx-ubuntu24",            Gcc,   "13.3.0", "x86_64-linux-gnu",      "/usr/lib/gcc/x86_64-linux-gnu/13"),
        ("gxx-12-ubuntu24",         Gcc,   "12.4.0", "x86_64-linux-gnu",      "/usr/lib/gcc/x86_64-linux-gnu/12"),
        ("gxx-13-ubuntu24",         Gcc,   "13.3.0", "x86_64-linux-gnu",      "/usr/lib/gcc/x86_64-linux-gnu/13"),
        // Clang names the GCC installation it chose, through its own directory when run from /usr/bin.
        ("clang-14-debian12",       Clang, "14.0.6", "x86_64-pc-linux-gnu",   "/usr/bin/../lib/gcc/x86_64-linux-gnu/12"),
        ("clang-16-debian12",       Clang, "16.0.6", "x86_64-pc-linux-gnu",   "/usr/bin/../lib/gcc/x86_64-linux-gnu/12"),
        ("clang-19-debian12",       Clang, "19.1.7", "x86_64-pc-linux-gnu",   "/usr/lib/gcc/x86_64-linux-gnu/12"),
        ("clang-16-ubuntu24",       Clang, "16.0.6", "x86_64-pc-linux-gnu",   "/usr/bin/../lib/gcc/x86_64-linux-gnu/13"),
    ];

    #[test]
    fn parses_every_captured_compiler_output() {
        for &(stem, family, release, triple, gcc_dir) in CAPTURED {
            let (found_family, found) =
                parse_version_output(&fixture(&format!("{stem}-version"))).unwrap_or_else(|e| panic!("{stem}: {e}"));
            assert_eq!((found_family, found.to_string()), (family, release.to_string()), "{stem}");
            if family == Gcc {
                let full = parse_dumpfullversion(&fixture(&format!("{stem}-dumpfullversion"))).unwrap();
                assert_eq!(full.to_string(), release, "{stem}");
            }
            let machine = parse_dumpmachine(&fixture(&format!("{stem}-dumpmachine"))).unwrap();
            assert_eq!(machine, triple, "{stem}");
            let libgcc = parse_print_libgcc_file_name(&fixture(&format!("{stem}-print-libgcc"))).unwrap();
            assert_eq!(libgcc, Path::new(gcc_dir).join("libgcc.a"), "{stem}");
            let printed = fixture(&format!("{stem}-print-libstdcxx"));
            let libstdcxx = parse_print_file_name(&printed, "libstdc++.so").unwrap();
            assert_eq!(libstdcxx, Path::new(gcc_dir).join("libstdc++.so"), "{stem}");
        }
    }

    #[test]
    fn every_compiler_fixture_is_in_the_table() {
        for entry in fs::read_dir(FIXTURES).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            if name.ends_with(".txt") && !name.starts_with("nvcc-") {
                let known = CAPTURED.iter().any(|row| name.starts_with(&format!("{}-", row.0)));
                assert!(known, "{name} is not in CAPTURED");
            }
        }
    }

    /// First lines in shapes reported for builds not installable here, typed by hand (NOT captured): upstream GCC
    /// without a vendor string (Nix, Fedora), Red Hat, Arm's toolchain, a Debian GCC snapshot, Apple, Ubuntu 22.04,
    /// Android's NDK, and Clang built from source.
    #[test]
    fn version_banners_in_other_reported_shapes() {
        const FSF: &str = "\nCopyright (C) 2023 Free Software Foundation, Inc.\n";
        let cases = [
            (format!("g++ (GCC) 13.2.0{FSF}"), Gcc, "13.2.0"),
            (format!("g++ (GCC) 11.4.1 20230605 (Red Hat 11.4.1-2){FSF}"), Gcc, "11.4.1"),
            (
                format!("arm-none-eabi-gcc (Arm GNU Toolchain 12.2.Rel1 (Build arm-12.24)) 12.2.1 20221205{FSF}"),
                Gcc,
                "12.2.1",
            ),
            (
                format!("g++-14 (Debian 14-20240201-3) 14.0.1 20240201 (experimental) [master r14-8680]{FSF}"),
                Gcc,
                "14.0.1",
            ),
            (
                "Apple clang version 15.0.0 (clang-1500.3.9.4)\nTarget: arm64-apple-darwin23.4.0\n".into(),
                Clang,
                "15.0.0",
            ),
            ("Ubuntu clang version 14.0.0-1ubuntu1.1\nTarget: x86_64-pc-linux-gnu\n".into(), Clang, "14.0.0"),
            (
                "Android (11349228, +pgo, based on r487747e) clang version 17.0.2 (https://android.googlesource.com)\n"
                    .into(),
                Clang,
                "17.0.2",
            ),
            ("clang version 19.1.7 (https://github.com/llvm/llvm-project cd708029e0b2)\n".into(), Clang, "19.1.7"),
        ];
        for (out, family, version) in cases {
            assert_eq!(parse_version_output(&out).unwrap(), (family, version.parse().unwrap()), "{out}");
        }
    }

    #[test]
    fn a_gcc_banner_without_a_plain_release_asks_for_dumpfullversion() {
        // Debian's MinGW cross compiler prints its thread model where the release would be.
        let out = "x86_64-w64-mingw32-g++ (GCC) 10-win32 20220113\nCopyright (C) 2020 Free Software Foundation, Inc.\n";
        assert_eq!(read_banner(out), Some((Gcc, None)));
        let err = parse_version_output(out).unwrap_err();
        assert!(err.to_string().contains("got `x86_64-w64-mingw32-g++ (GCC) 10-win32 20220113`"), "{err}");
    }

    #[test]
    fn other_compilers_are_not_taken_for_gcc_or_clang() {
        let outs = [
            "Intel(R) oneAPI DPC++/C++ Compiler 2024.0.0 (2024.0.0.20231017)\nTarget: x86_64-unknown-linux-gnu\n",
            "\nnvc++ 23.7-0 64-bit target on x86-64 Linux -tp haswell \nNVIDIA Compilers and Tools\n",
            "",
        ];
        for out in outs {
            let err = parse_version_output(out).unwrap_err();
            assert!(matches!(err.kind, ProbeErrorKind::Unexpected { .. }), "{out}");
            assert!(err.to_string().contains("expected a GCC or Clang version banner"), "{err}");
        }
    }

    #[test]
    fn rejects_what_is_not_a_release_or_a_triple() {
        // What clang-14 prints for -dumpfullversion, on stderr, with exit status 1.
        for bad in ["", "12\n12.2.0\n", "clang: error: no input files\n"] {
            assert!(parse_dumpfullversion(bad).is_err(), "{bad:?}");
        }
        for bad in ["", "\n", "x86_64\n", "clang: error: no input files\n"] {
            assert!(parse_dumpmachine(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_library_the_driver_did_not_find_is_an_error() {
        // What g++-12 printed for -print-file-name=nonexistent.so (exit status 0).
        assert!(parse_print_file_name("nonexistent.so\n", "nonexistent.so").is_err());
        assert!(parse_print_libgcc_file_name(
            "/usr/lib/llvm-16/lib/clang/16/lib/linux/libclang_rt.builtins-x86_64.a\n"
        )
        .is_err());
        assert!(parse_print_file_name("", "libstdc++.so").is_err());
    }

    // The tests below run real compilers. g++-12 is on every machine this project builds on; the others are
    // installed by CI (g++-11, clang-14, clang-16, clang-19 and the Debian cross compilers).

    #[test]
    fn probes_real_compilers() {
        let cases = [
            ("g++-12", Gcc, 12, "x86_64-"),
            ("g++-11", Gcc, 11, "x86_64-"),
            ("clang++-14", Clang, 14, "x86_64-"),
            ("clang++-16", Clang, 16, "x86_64-"),
            ("clang++-19", Clang, 19, "x86_64-"),
            ("aarch64-linux-gnu-g++", Gcc, 12, "aarch64-"),
            ("aarch64-linux-gnu-g++-11", Gcc, 11, "aarch64-"),
            ("powerpc64le-linux-gnu-g++", Gcc, 12, "powerpc64le-"),
        ];
        for (name, family, major, target) in cases {
            let cc = which::which(name).unwrap_or_else(|e| panic!("{name} is not installed: {e}"));
            let info = probe_compiler(&cc).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!((info.family, info.version.major), (family, major), "{name}: {info:?}");
            assert!(info.target.starts_with(target), "{name}: {info:?}");
        }
    }

    #[test]
    fn finds_the_gcc_installation_and_libstdcxx_of_real_compilers() {
        let gxx12 = which::which("g++-12").unwrap();
        let install = gcc_install_dir(&gxx12).unwrap();
        assert!(install.ends_with("x86_64-linux-gnu/12"), "{install:?}");
        assert!(install.join("crtbegin.o").is_file(), "{install:?}");

        let lib = libstdcxx_dir(&gxx12).unwrap();
        assert!(lib.join("libstdc++.so.6").exists(), "{lib:?}");
        assert_eq!(lib, fs::canonicalize(&lib).unwrap());

        // Clang reports the GCC installation it picked, as a canonical path too.
        let clang = which::which("clang++-16").unwrap();
        let clang_install = gcc_install_dir(&clang).unwrap();
        assert!(clang_install.join("crtbegin.o").is_file(), "{clang_install:?}");
        assert_eq!(clang_install, fs::canonicalize(&clang_install).unwrap());

        // A cross compiler's libstdc++ lives with the target's libraries, not the build machine's.
        let cross = which::which("aarch64-linux-gnu-g++").unwrap();
        assert!(gcc_install_dir(&cross).unwrap().ends_with("aarch64-linux-gnu/12"));
        let cross_lib = libstdcxx_dir(&cross).unwrap();
        assert!(cross_lib.join("libstdc++.so.6").exists() && cross_lib != lib, "{cross_lib:?}");
    }

    #[test]
    fn runner_errors_name_the_compiler() {
        // clang-14 knows no -dumpfullversion: "clang: error: no input files", exit status 1.
        let clang = which::which("clang++-14").unwrap();
        let err = run(&clang, &[DUMPFULLVERSION]).unwrap_err();
        assert!(
            err.to_string().ends_with("-dumpfullversion` failed (exit status: 1): clang: error: no input files"),
            "{err}"
        );

        // GNU `true --version` prints an FSF banner with no x.y.z release, so it gets as far as -dumpfullversion.
        let err = probe_compiler(Path::new("/bin/true")).unwrap_err();
        assert!(err.to_string().starts_with("unexpected output from `/bin/true "), "{err}");
    }
}
