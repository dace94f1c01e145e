//! Where the wrapper may write: the probe cache and the options files it rewrites under `arch-flags = "replace"`.
//!
//! The rules (docs/guide/files.md):
//! - **Never a home directory.** `$XDG_CACHE_HOME` or `$HOME` is used only when it is an existing directory; the
//!   wrapper creates what it needs below it (`.cache/nvcc-wrapper/...`), never the directory itself. Nix builds run
//!   with `HOME=/homeless-shelter`, a path meant never to exist, and the wrapper must not create it.
//! - **Inside a Nix build, only the build's own directory**: `$NIX_BUILD_TOP` (set by Nix's builder for `nix-build`,
//!   not for `nix-shell`), whatever `HOME` says.
//! - **Else a private temporary directory**: `$TMPDIR` (or `/tmp`)`/nvcc-wrapper-UID`, made by the wrapper with mode
//!   0700 and used only while it is a directory of this user that nobody else may write (a shared `/tmp` is not a
//!   place to leave files another user could swap before nvcc reads them).
//!
//! Nothing here is created; the writers create directories when they first write (`prepare_private`).

use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

use super::{vars, Env};

/// The wrapper's cache directory: `$NIX_BUILD_TOP/.nvcc-wrapper` in a Nix build, else `$XDG_CACHE_HOME/nvcc-wrapper`
/// (absolute, as the XDG spec requires, and existing), else `$HOME/.cache/nvcc-wrapper` (`$HOME` existing); `None`
/// without any.
pub fn cache_base(env: &Env) -> Option<PathBuf> {
    cache_base_candidates(env).into_iter().find(|(dir, _)| dir.is_dir()).map(|(_, base)| base)
}

/// What `cache_base` chooses from, before anything is looked at: in order, each directory a variable names (absolute,
/// and never `$NIX_BUILD_TOP` in `nix-shell`) with the cache directory below it; the first that exists is the one.
pub fn cache_base_candidates(env: &Env) -> Vec<(PathBuf, PathBuf)> {
    [
        (build_top_named(env), ".nvcc-wrapper"),
        (absolute(env, vars::XDG_CACHE_HOME), "nvcc-wrapper"),
        (absolute(env, vars::HOME), ".cache/nvcc-wrapper"),
    ]
    .into_iter()
    .filter_map(|(dir, below)| dir.map(|dir| (dir.to_path_buf(), dir.join(below))))
    .collect()
}

/// Where rewritten options files go: `options-files` in the cache directory, else in the private temporary directory.
/// nvcc reads an `-optf` value as a list (`args::split::option_list`), so a directory whose path a list would change
/// (a comma, a double quote, a backslash, blanks at its ends) is not used.
pub fn scratch(env: &Env) -> PathBuf {
    cache_base(env).filter(|dir| safe_in_a_list(dir)).unwrap_or_else(|| private_temporary(env)).join("options-files")
}

/// `$TMPDIR/nvcc-wrapper-UID` (`$TMPDIR` absolute, existing and safe in a list), else `/tmp/nvcc-wrapper-UID`.
pub fn private_temporary(env: &Env) -> PathBuf {
    let base = env
        .non_empty(vars::TMPDIR)
        .map(Path::new)
        .filter(|p| p.is_absolute() && p.is_dir() && safe_in_a_list(p))
        .unwrap_or(Path::new("/tmp"));
    base.join(private_name())
}

/// Make sure the directory `dir` a writer is about to write into may be written: below a private temporary directory,
/// that directory is created with mode 0700 if missing and must then be a real directory of this user that no one
/// else can write; the rest of the path is created as needed. An error says why not.
pub fn prepare(dir: &Path) -> std::io::Result<()> {
    let name = private_name();
    if let Some(private) = dir.ancestors().find(|a| a.file_name().is_some_and(|n| n == name.as_str())) {
        match std::fs::DirBuilder::new().mode(0o700).create(private) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        let meta = std::fs::symlink_metadata(private)?;
        // SAFETY: geteuid cannot fail and touches no memory.
        let me = unsafe { libc::geteuid() };
        if !meta.is_dir() || meta.uid() != me || meta.mode() & 0o022 != 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!(
                    "{} is not a directory of this user that only it may write",
                    crate::error::shell::path(private)
                ),
            ));
        }
    }
    std::fs::create_dir_all(dir)
}

/// The help line for a directory the wrapper could not write into (`dir`), fitted to why: a full file system (or a
/// used-up quota) needs room, or another place (`moved_by`, the variable that moves it); a read-only one another
/// place; anything else (permissions, a file in the way) the right to write there. `instead` is the way round it.
pub fn write_help(err: &std::io::Error, dir: &Path, moved_by: &str, instead: Option<&str>) -> String {
    let dir = crate::error::shell::path(dir);
    let mut help = match err.raw_os_error() {
        Some(libc::ENOSPC | libc::EDQUOT) => {
            format!("the file system of {dir} is full: free space on it, or point {moved_by} at another one")
        }
        Some(libc::EROFS) => format!("{dir} is on a read-only file system: point {moved_by} at a writable one"),
        _ => format!("make {dir} writable, or point {moved_by} at a directory this user may write"),
    };
    if let Some(instead) = instead {
        help.push_str(", or ");
        help.push_str(instead);
    }
    help
}

/// `nvcc-wrapper-UID`.
fn private_name() -> String {
    // SAFETY: geteuid cannot fail and touches no memory.
    format!("nvcc-wrapper-{}", unsafe { libc::geteuid() })
}

/// Whether this is a Nix build (`nix-build`; not `nix-shell`): it may read and write nothing outside the store and
/// its own directory.
pub fn in_nix_build(env: &Env) -> bool {
    nix_build_top(env).is_some()
}

/// `$NIX_BUILD_TOP` in a Nix build (not in `nix-shell`, which sets `IN_NIX_SHELL` and runs in the user's home), an
/// existing directory.
fn nix_build_top(env: &Env) -> Option<PathBuf> {
    build_top_named(env).filter(|p| p.is_dir()).map(Path::to_path_buf)
}

/// `$NIX_BUILD_TOP` as named, absolute, outside `nix-shell`; whether it exists is not looked at.
fn build_top_named(env: &Env) -> Option<&Path> {
    absolute(env, vars::NIX_BUILD_TOP).filter(|_| env.non_empty(vars::IN_NIX_SHELL).is_none())
}

/// The variable's value when it is an absolute path.
fn absolute<'a>(env: &'a Env, name: &str) -> Option<&'a Path> {
    env.non_empty(name).map(Path::new).filter(|p| p.is_absolute())
}

/// Whether nvcc reads the path back unchanged as a list item.
fn safe_in_a_list(path: &Path) -> bool {
    let bytes = path.as_os_str().as_encoded_bytes();
    !bytes.iter().any(|b| matches!(b, b',' | b'"' | b'\\'))
        && !bytes.first().is_some_and(|b| matches!(b, b' ' | b'\t'))
        && !bytes.last().is_some_and(|b| matches!(b, b' ' | b'\t'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &Path)]) -> Env {
        vars.iter().map(|(k, v)| (*k, v.as_os_str())).collect()
    }

    #[test]
    fn a_home_that_does_not_exist_is_never_used_nor_created() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir(&home).unwrap();
        assert_eq!(cache_base(&env(&[("HOME", &home)])), Some(home.join(".cache/nvcc-wrapper")));
        let shelter = dir.path().join("homeless-shelter");
        assert_eq!(cache_base(&env(&[("HOME", &shelter)])), None);
        assert_eq!(cache_base(&env(&[("HOME", Path::new("/dev/null"))])), None);
        let scratch = scratch(&env(&[("HOME", &shelter), ("TMPDIR", dir.path())]));
        assert_eq!(scratch, dir.path().join(private_name()).join("options-files"));
        assert!(!shelter.exists());
        // XDG_CACHE_HOME is used when it exists, ignored when it does not.
        let xdg = dir.path().join("xdg");
        assert_eq!(
            cache_base(&env(&[("HOME", &home), ("XDG_CACHE_HOME", &xdg)])),
            Some(home.join(".cache/nvcc-wrapper"))
        );
        std::fs::create_dir(&xdg).unwrap();
        assert_eq!(cache_base(&env(&[("HOME", &home), ("XDG_CACHE_HOME", &xdg)])), Some(xdg.join("nvcc-wrapper")));
    }

    #[test]
    fn a_nix_build_writes_only_in_its_own_directory() {
        let dir = tempfile::tempdir().unwrap();
        let (home, top) = (dir.path().join("home"), dir.path().join("build"));
        std::fs::create_dir(&home).unwrap();
        std::fs::create_dir(&top).unwrap();
        let nix = env(&[("HOME", &home), ("NIX_BUILD_TOP", &top)]);
        assert_eq!(cache_base(&nix), Some(top.join(".nvcc-wrapper")));
        assert_eq!(scratch(&nix), top.join(".nvcc-wrapper/options-files"));
        // nix-shell sets NIX_BUILD_TOP too, and IN_NIX_SHELL: the user's own cache then.
        let shell = env(&[("HOME", &home), ("NIX_BUILD_TOP", &top), ("IN_NIX_SHELL", Path::new("impure"))]);
        assert_eq!(cache_base(&shell), Some(home.join(".cache/nvcc-wrapper")));
    }

    /// Issue 33, item 6: the help for a full disk said to make the directory writable. Each errno gets its own.
    #[test]
    fn the_help_for_a_directory_not_written_fits_why() {
        let dir = Path::new("/home/u/.cache/nvcc-wrapper/options-files");
        let help = |errno| write_help(&std::io::Error::from_raw_os_error(errno), dir, "$XDG_CACHE_HOME", Some("X"));
        let full = "the file system of /home/u/.cache/nvcc-wrapper/options-files is full: free space on it, or point \
                    $XDG_CACHE_HOME at another one, or X";
        assert_eq!(help(libc::ENOSPC), full);
        assert_eq!(help(libc::EDQUOT), full);
        assert!(!help(libc::ENOSPC).contains("writable"));
        assert!(help(libc::EROFS).starts_with(&format!("{} is on a read-only file system", dir.display())));
        let denied = "make /home/u/.cache/nvcc-wrapper/options-files writable, or point $XDG_CACHE_HOME at a \
                      directory this user may write, or X";
        assert_eq!(help(libc::EACCES), denied);
        assert_eq!(help(libc::EPERM), denied);
        // An error that is no errno (a directory of another user, say) is one of rights.
        let foreign = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "not this user's");
        assert_eq!(
            write_help(&foreign, Path::new("/tmp"), "$TMPDIR", None),
            "make /tmp writable, or point $TMPDIR at a directory this user may write"
        );
    }

    #[test]
    fn the_private_directory_is_made_private_and_a_foreign_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join(private_name()).join("options-files");
        prepare(&target).unwrap();
        let mode = std::fs::metadata(dir.path().join(private_name())).unwrap().mode();
        assert_eq!(mode & 0o777, 0o700);
        // One that others may write, or a link, is not used.
        let other = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(other.path(), other.path().join(private_name())).unwrap();
        assert!(prepare(&other.path().join(private_name()).join("options-files")).is_err());
        let open = tempfile::tempdir().unwrap();
        std::fs::create_dir(open.path().join(private_name())).unwrap();
        std::fs::set_permissions(open.path().join(private_name()), std::os::unix::fs::PermissionsExt::from_mode(0o777))
            .unwrap();
        assert!(prepare(&open.path().join(private_name()).join("x")).is_err());
        assert!(!safe_in_a_list(Path::new("/tmp/a,b")) && safe_in_a_list(Path::new("/tmp/ab")));
    }
}
