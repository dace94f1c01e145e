//! The NVCC release: from `nvcc --version`, or from the toolkit's `version.json` without running anything, and where
//! the toolkit root of an `nvcc` path is.
//!
//! Deciding what a release allows is not done here; that belongs to the compat tables.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{run, ProbeError, ProbeErrorKind};
use crate::compat::Version;

const VERSION: &str = "--version";

/// What `nvcc --version` says on its `Cuda compilation tools, release 12.4, V12.4.131` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NvccVersion {
    /// `12.4`: the release the compatibility tables are keyed on.
    pub release: Version,
    /// `12.4.131`: the nvcc component's own version (`__CUDACC_VER_BUILD__` is its last part).
    pub full: Version,
}

/// Reads `nvcc --version`. The line looked for has kept its form since CUDA 7 at least; CMake parses it too.
pub fn parse_nvcc_version(out: &str) -> Result<NvccVersion, ProbeError> {
    let unexpected = || ProbeError::unexpected(&[VERSION], "a line `Cuda compilation tools, release X.Y, VX.Y.Z`", out);
    let line =
        out.lines().find_map(|l| l.trim().strip_prefix("Cuda compilation tools, release ")).ok_or_else(unexpected)?;
    let (release, full) = line.split_once(", V").ok_or_else(unexpected)?;
    let release: Version = release.parse().map_err(|_| unexpected())?;
    let full: Version = full.trim().parse().map_err(|_| unexpected())?;
    if full.release() != release {
        return Err(unexpected());
    }
    Ok(NvccVersion { release, full })
}

/// Runs `<nvcc> --version`. `nvcc` must be the path the build will run: nvcc finds its profile through it.
/// A program whose output names neither nvcc's driver nor its release line says, by its first line, what it is.
pub fn probe_nvcc(nvcc: &Path) -> Result<NvccVersion, ProbeError> {
    let out = run(nvcc, &[VERSION])?;
    parse_nvcc_version(&out).map_err(|e| {
        let says = super::first_line(&out);
        // nvcc's own words, in a banner or an error (`nvcc fatal   : Unknown option`).
        let nvccs = ["Cuda compiler driver", "Cuda compilation tools", "nvcc"].iter().any(|w| out.contains(w));
        match nvccs || says.is_empty() {
            true => e.with_program(nvcc),
            false => ProbeError::new(nvcc, &[VERSION], ProbeErrorKind::NotNvcc { says: says.to_string() }),
        }
    })
}

/// What a toolkit's `version.json` says. NVIDIA's installers (runfile, .deb/.rpm `cuda-toolkit-*` meta packages)
/// write it at the toolkit root; the PyPI wheels, the redistributable tarballs and Debian's packages have none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolkitVersions {
    /// `"cuda"`: the toolkit release, `12.4.1`. Older toolkits write a build date as the last part (11.8 wrote
    /// `11.8.20220929`), so only its major and minor parts are to be relied on.
    pub cuda: Option<Version>,
    /// `"cuda_nvcc"`: the nvcc component, `12.4.131`, the same number `nvcc --version` prints after `V`.
    pub nvcc: Option<Version>,
}

/// Reads the document `version.json` holds: `{"cuda": {"name": "CUDA SDK", "version": "12.4.1"}, "cuda_nvcc":
/// {"name": "CUDA NVCC", "version": "12.4.131"}, ...}`, one entry per installed component. Entries other than these
/// two are ignored; a document with neither is an error.
pub fn parse_version_json(text: &str) -> Result<ToolkitVersions, ProbeError> {
    #[derive(Deserialize)]
    struct Document {
        cuda: Option<Component>,
        cuda_nvcc: Option<Component>,
    }
    #[derive(Deserialize)]
    struct Component {
        version: String,
    }

    let bad = |what: String| ProbeError {
        program: PathBuf::from("version.json"),
        args: Vec::new(),
        kind: ProbeErrorKind::Unexpected {
            expected: "entries \"cuda\" or \"cuda_nvcc\" with a \"version\"",
            found: what,
        },
    };
    let doc: Document = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
    let version = |c: Option<Component>| -> Result<Option<Version>, ProbeError> {
        c.map(|c| c.version.parse().map_err(|_| bad(format!("version \"{}\"", c.version)))).transpose()
    };
    let found = ToolkitVersions { cuda: version(doc.cuda)?, nvcc: version(doc.cuda_nvcc)? };
    if found.cuda.is_none() && found.nvcc.is_none() {
        return Err(bad("neither".to_string()));
    }
    Ok(found)
}

/// Reads `<root>/version.json`; `None` when the toolkit has none (see [`ToolkitVersions`]). A file that is not a
/// regular file or is larger than `bounded::VERSION_FILE` is an error (the caller then asks nvcc itself).
pub fn read_version_json(root: &Path) -> Result<Option<ToolkitVersions>, ProbeError> {
    let path = root.join("version.json");
    match crate::error::bounded::read_to_string(&path, crate::error::bounded::VERSION_FILE) {
        Ok(text) => parse_version_json(&text).map(Some).map_err(|mut e| {
            e.program = path;
            e
        }),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(ProbeError::io(&path, err)),
    }
}

/// Whether an `nvcc.profile`'s text sets `compiler-bindir` (Nixpkgs' cuda_nvcc appends one), which nvcc takes as its
/// default host compiler's directory.
pub fn profile_names_a_compiler(profile: &str) -> bool {
    profile
        .lines()
        .any(|line| line.trim_start().strip_prefix("compiler-bindir").is_some_and(|r| r.trim_start().starts_with('=')))
}

/// The toolkit root an `nvcc` path runs from: what the upstream `nvcc.profile` calls `TOP = $(_HERE_)/..`.
///
/// nvcc takes `_HERE_` from `argv[0]` as given, without resolving a symbolic link to nvcc itself
/// (docs/nvcc-facts.md#how-nvcc-finds-itself), while the kernel resolves `$(_HERE_)/..` through any linked directory on
/// the way. So this canonicalises the directory that holds the path, never the path itself: `/usr/local/cuda/bin/nvcc`
/// with `/usr/local/cuda -> cuda-13.0` gives `/usr/local/cuda-13.0`, and a Nix tree whose `bin/nvcc` is a link into
/// another store path gives that tree's root, as nvcc would. Whether a profile sits there is not checked. Debian's own
/// nvcc is the exception: its profile names absolute paths and this root holds only `bin/` and `nvvm/`.
pub fn toolkit_root_of(nvcc: &Path) -> Result<PathBuf, ProbeError> {
    let bin = match nvcc.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        // A bare name is looked up on PATH, which is the caller's business (it holds the environment).
        _ => {
            let err = io::Error::new(io::ErrorKind::InvalidInput, "a path to nvcc is needed, not a bare name");
            return Err(ProbeError::io(nvcc, err));
        }
    };
    let bin = fs::canonicalize(bin).map_err(|err| ProbeError::io(bin, err))?;
    Ok(bin.parent().unwrap_or(Path::new("/")).to_path_buf())
}

/// The same root as `toolkit_root_of`, as `BIN/..`: the kernel resolves it as canonicalising does (through a linked
/// BIN, as nvcc reads its profile), for a file opened there on every call, without the `readlink` of each component
/// that canonicalising costs. `None` for a bare name.
pub fn toolkit_root_unresolved(nvcc: &Path) -> Option<PathBuf> {
    nvcc.parent().filter(|dir| !dir.as_os_str().is_empty()).map(|bin| bin.join(".."))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `nvcc-<version>-<source>-version.txt` fixture, checked against the version in its name.
    #[test]
    fn nvcc_version_captured_from_real_releases() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/probe");
        let mut seen = 0;
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap();
            let Some(full) = name.strip_prefix("nvcc-").and_then(|n| n.split('-').next()) else {
                continue;
            };
            let v = parse_nvcc_version(&fs::read_to_string(&path).unwrap()).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(v.full.to_string(), full, "{name}");
            assert_eq!(v.release, v.full.release(), "{name}");
            seen += 1;
        }
        assert!(seen >= 2, "the nvcc fixtures are missing");
    }

    #[test]
    fn nvcc_version_rejects_other_output() {
        for out in [
            "",
            "g++ (GCC) 13.2.0\n",
            "Cuda compilation tools, release 12.4\n",
            // A release line that disagrees with its own V number is not trusted.
            "Cuda compilation tools, release 12.4, V12.5.40\n",
        ] {
            let err = parse_nvcc_version(out).unwrap_err();
            assert!(err.to_string().starts_with("unexpected output from `--version`"), "{err}");
        }
    }

    /// No real `version.json` was reachable here (the PyPI wheels, Debian's packages and NVIDIA's `cuda-nvcc-13-0`
    /// .deb on the GPU machine have none). These documents are SYNTHETIC, typed by hand in the documented shape; the
    /// 11.8 one carries the date-style `"cuda"` version that public copies of 11.8's file show.
    #[test]
    fn version_json_in_nvidia_documented_shape() {
        let synthetic_12_4 = r#"{
   "cuda" : { "name" : "CUDA SDK", "version" : "12.4.1" },
   "cuda_cccl" : { "name" : "CUDA C++ Core Compute Libraries", "version" : "12.4.127" },
   "cuda_nvcc" : { "name" : "CUDA NVCC", "version" : "12.4.131" },
   "libcublas" : { "name" : "CUDA cuBLAS", "version" : "12.4.5.8" },
   "nvidia_driver" : { "name" : "NVIDIA Linux Driver", "version" : "550.54.15" }
}"#;
        let v = parse_version_json(synthetic_12_4).unwrap();
        assert_eq!(v.cuda.unwrap().to_string(), "12.4.1");
        assert_eq!(v.nvcc.unwrap().to_string(), "12.4.131");

        let synthetic_11_8 = r#"{"cuda": {"name": "CUDA SDK", "version": "11.8.20220929"},
                                 "cuda_nvcc": {"name": "CUDA NVCC", "version": "11.8.89"}}"#;
        let v = parse_version_json(synthetic_11_8).unwrap();
        assert_eq!(v.cuda.unwrap().release().to_string(), "11.8");
        assert_eq!(v.nvcc.unwrap().to_string(), "11.8.89");

        // The toolkits the project's own fetch script assembles carry an extra entry of another shape.
        let assembled = r#"{"cuda": {"name": "CUDA SDK", "version": "13.0.2"},
                            "cuda_nvcc": {"name": "CUDA NVCC", "version": "13.0.88"},
                            "nvcc_wrapper": {"packages": ["nvidia-cuda-nvcc==13.0.88"], "source": "pypi"}}"#;
        assert_eq!(parse_version_json(assembled).unwrap().nvcc, Some(Version::new(13, 0, 88)));

        let only_nvcc = r#"{"cuda_nvcc": {"name": "CUDA NVCC", "version": "13.0.88"}}"#;
        assert_eq!(parse_version_json(only_nvcc).unwrap().cuda, None);
    }

    #[test]
    fn version_json_errors_say_what_was_wrong() {
        let cases = [
            ("{}", "got `neither`"),
            (r#"{"cuda": {"name": "CUDA SDK"}}"#, "missing field `version`"),
            (r#"{"cuda_nvcc": {"version": "13.x"}}"#, "got `version \"13.x\"`"),
            ("CUDA Version 10.2.89\n", "expected value"),
        ];
        for (text, says) in cases {
            let err = parse_version_json(text).unwrap_err();
            assert!(err.to_string().contains(says), "{text}: {err}");
        }
    }

    #[test]
    fn reads_version_json_from_a_root() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(read_version_json(root.path()).unwrap(), None);
        fs::write(root.path().join("version.json"), r#"{"cuda": {"version": "13.0.2"}}"#).unwrap();
        assert_eq!(read_version_json(root.path()).unwrap().unwrap().cuda, Some(Version::new(13, 0, 2)));
        fs::write(root.path().join("version.json"), "{").unwrap();
        let err = read_version_json(root.path()).unwrap_err();
        assert!(err.to_string().contains(&format!("{}", root.path().join("version.json").display())), "{err}");
        // Issue 26: a version.json that is a FIFO or /dev/zero is an error at once, never a hang or a read without end.
        fs::remove_file(root.path().join("version.json")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", root.path().join("version.json")).unwrap();
        let err = read_version_json(root.path()).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
        fs::remove_file(root.path().join("version.json")).unwrap();
        fs::write(root.path().join("version.json"), vec![b' '; crate::error::bounded::VERSION_FILE as usize + 1])
            .unwrap();
        assert!(read_version_json(root.path()).unwrap_err().to_string().contains("larger than 1 MiB"));
    }

    #[cfg(unix)]
    #[test]
    fn probes_an_nvcc_that_prints_a_captured_banner() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let nvcc = root.path().join("bin/nvcc");
        fs::create_dir(root.path().join("bin")).unwrap();
        let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/probe/nvcc-13.5.37-pypi-version.txt");
        fs::write(&nvcc, format!("#!/bin/sh\ncat '{fixture}'\n")).unwrap();
        fs::set_permissions(&nvcc, fs::Permissions::from_mode(0o755)).unwrap();

        assert_eq!(probe_nvcc(&nvcc).unwrap().full, Version::new(13, 5, 37));
        let top = toolkit_root_of(&nvcc).unwrap();
        assert_eq!(top, fs::canonicalize(root.path()).unwrap());
        assert_eq!(read_version_json(&top).unwrap(), None);

        fs::write(&nvcc, "#!/bin/sh\necho 'nvcc fatal   : Unknown option'\n").unwrap();
        let err = probe_nvcc(&nvcc).unwrap_err();
        let expected = format!("unexpected output from `{} --version`", nvcc.display());
        assert!(err.to_string().starts_with(&expected), "{err}");

        // Another program named as nvcc says what it is (issue 60: gcc's banner).
        fs::write(&nvcc, "#!/bin/sh\necho 'gcc (Debian 12.2.0-14) 12.2.0'\necho 'Copyright (C) 2022'\n").unwrap();
        let err = probe_nvcc(&nvcc).unwrap_err();
        assert!(matches!(&err.kind, ProbeErrorKind::NotNvcc { says } if says == "gcc (Debian 12.2.0-14) 12.2.0"));
        let expected = format!("`{} --version` says `gcc (Debian 12.2.0-14) 12.2.0`: it is not nvcc", nvcc.display());
        assert_eq!(err.to_string(), expected);
    }

    #[cfg(unix)]
    #[test]
    fn toolkit_root_follows_linked_directories_but_not_a_linked_nvcc() {
        use std::os::unix::fs::symlink;
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("cuda-13.0");
        fs::create_dir_all(real.join("bin")).unwrap();
        fs::write(real.join("bin/nvcc"), "").unwrap();
        let real = fs::canonicalize(real).unwrap();

        // /usr/local/cuda -> cuda-13.0: the root is the real directory.
        symlink(&real, tmp.path().join("cuda")).unwrap();
        assert_eq!(toolkit_root_of(&tmp.path().join("cuda/bin/nvcc")).unwrap(), real);

        // A tree of links (Nix's symlinkJoin): nvcc still reads the profile next to the link, so the root is the tree.
        let tree = tmp.path().join("joined");
        fs::create_dir_all(tree.join("bin")).unwrap();
        symlink(real.join("bin/nvcc"), tree.join("bin/nvcc")).unwrap();
        assert_eq!(toolkit_root_of(&tree.join("bin/nvcc")).unwrap(), fs::canonicalize(&tree).unwrap());

        // BIN/.., resolved by the kernel, is the same directory, a linked BIN included (its `..` is the real one's).
        symlink(real.join("bin"), tmp.path().join("linked-bin")).unwrap();
        for nvcc in [tmp.path().join("cuda/bin/nvcc"), tree.join("bin/nvcc"), tmp.path().join("linked-bin/nvcc")] {
            let unresolved = toolkit_root_unresolved(&nvcc).unwrap();
            assert_eq!(fs::canonicalize(unresolved).unwrap(), toolkit_root_of(&nvcc).unwrap(), "{nvcc:?}");
        }
        assert_eq!(toolkit_root_unresolved(Path::new("nvcc")), None);

        for bad in [tmp.path().join("missing/bin/nvcc"), PathBuf::from("nvcc")] {
            let err = toolkit_root_of(&bad).unwrap_err();
            assert!(matches!(err.kind, ProbeErrorKind::Io(_)), "{err:?}");
        }
    }
}
