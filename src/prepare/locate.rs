//! Finding the real nvcc, and making sure the wrapper never ends up running itself.
//!
//! The wrapper is usually installed as `nvcc`, often first on PATH, so the plain PATH search would find it again.
//! Candidates that are the wrapper's own executable file are skipped: the same device and inode, reached through any
//! symbolic or hard link (one `stat` each, where comparing canonical paths costs a `readlink` per path component).
//! A copy of the wrapper (another file of the same size and bytes: two installs on PATH) is skipped too; its bytes are
//! compared only when the sizes match, which a real nvcc's never does. Other wrappers that lead back to it (another
//! build of the wrapper, a script around `nvcc` given as the host compiler, a launcher that runs `nvcc` instead of
//! the real nvcc it is given) are caught by a depth counter in the environment (`NVCC_WRAPPER_DEPTH`), raised on every
//! exec; a launcher that hands the real nvcc back to the wrapper is caught at once.

use std::path::{Path, PathBuf};

use crate::config::{Key, Loaded, Sourced};
use crate::context::{vars, Context};
use crate::error::{Error, ErrorKind, Result};
use crate::plan::{FoundBy, RealNvcc};
use crate::prepare::problems::Refused;

/// How many wrappers may be stacked before the wrapper refuses to go on. A real chain is one deep (a wrapper execs
/// the real nvcc), or a few when a program nvcc runs (`nvcc -run`) calls nvcc again; a loop reaches this quickly.
pub const MAX_DEPTH: u32 = 8;

/// The real nvcc, and how deep in a chain of wrappers this one runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub nvcc: RealNvcc,
    pub depth: u32,
}

/// The way in, taken once per call: refuse a loop, then find the real nvcc.
pub fn locate(ctx: &Context, config: &Loaded) -> Result<Located> {
    let depth = depth(ctx, config.config.launcher.as_ref())?;
    let nvcc = find(ctx, config)?;
    // A wrapper runs its launcher as `<launcher> <real nvcc> <arguments>`: a wrapper started so is the launcher.
    if depth > 0 && ctx.args.first().is_some_and(|first| Path::new(first) == nvcc.path) {
        return Err(launcher_is_me(ctx, config));
    }
    Ok(Located { nvcc, depth })
}

/// Whether this process looks started by a wrapper as its launcher (`<launcher> <real nvcc> ...`, with the loop
/// counter set), whatever its name: such a call is a drop-in call, never the wrapper's own command line, so that
/// `locate` can name the launcher.
pub fn started_as_launcher(ctx: &Context) -> bool {
    ctx.env.non_empty(vars::DEPTH).is_some()
        && ctx.args.first().map(Path::new).is_some_and(|first| first.is_absolute() && first.is_file())
}

/// The error for a launcher that leads back to this wrapper (issue 26: it used to end in "started 8 times in a chain",
/// or in `nvcc-wrapper`'s usage error, without naming the launcher). The launcher may be this wrapper (a link to it,
/// or a copy), or another program that runs it again, such as a script around `nvcc-wrapper` or the `nvcc` on PATH
/// (issue 33: such a script was called "this wrapper itself"); either way it did not run the real nvcc it was given.
fn launcher_is_me(ctx: &Context, config: &Loaded) -> Error {
    let launcher = config.config.launcher.as_ref();
    let origin = launcher.map_or("the config".to_string(), |l| l.origin.to_string());
    let named = match launcher {
        Some(launcher) => launcher.named(Key::Launcher),
        None => "the launcher".to_string(),
    };
    let is_me = this_wrapper(ctx);
    let resolved = launcher.and_then(|l| which::which_in(&l.value, Some(ctx.search_path()), &ctx.cwd).ok());
    let wrapper = resolved.and_then(|p| Some(is_me(&p, &std::fs::metadata(&p).ok()?)));
    match wrapper {
        Some(false) => Refused::LauncherRunsWrapper { named, origin }.into(),
        _ => Refused::LauncherIsWrapper { named, origin }.into(),
    }
}

/// The depth this wrapper runs at (0 when not started by a wrapper), refusing to go deeper than `MAX_DEPTH`; a chain
/// too deep is blamed on `launcher` too, when one is configured (it may run `nvcc` on PATH, which is the wrapper).
pub fn depth(ctx: &Context, launcher: Option<&Sourced<PathBuf>>) -> Result<u32> {
    let Some(raw) = ctx.env.non_empty(vars::DEPTH) else {
        return Ok(0);
    };
    let digits = raw.to_str().filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()));
    let depth = digits.ok_or_else(|| Refused::BadDepth { raw: raw.to_string_lossy().into_owned() })?;
    // A number too large for any counter is a chain too deep all the same.
    let depth: u32 = depth.parse().unwrap_or(u32::MAX);
    if depth >= MAX_DEPTH {
        return Err(too_deep(ctx, depth, launcher));
    }
    Ok(depth)
}

/// The error for a chain too deep, blaming what made it. A real nvcc sets `_HERE_` (its own directory, for its
/// `nvcc.profile`) in the environment of every program it runs, so a wrapper that finds it was started, however
/// indirectly, by a program nvcc ran: a host compiler that is a script around `nvcc` (`-ccbin`, `NVCC_CCBIN`, the
/// config's), or a program given to `nvcc -run`. Without it, the chain is of wrappers running wrappers.
fn too_deep(ctx: &Context, depth: u32, launcher: Option<&Sourced<PathBuf>>) -> Error {
    match ctx.env.non_empty(vars::NVCC_HERE) {
        Some(here) => Refused::TooDeepUnderNvcc { depth, real: Path::new(here).join("nvcc") },
        None => Refused::TooDeep { depth, launcher: launcher.map(|l| l.named(Key::Launcher)) },
    }
    .into()
}

/// A test of whether a program is the wrapper's own file, or a copy of it (the same size and bytes, read only when the
/// sizes match).
fn this_wrapper(ctx: &Context) -> impl Fn(&Path, &std::fs::Metadata) -> bool + '_ {
    let me = ctx.own_file();
    move |path: &Path, m: &std::fs::Metadata| {
        me.as_ref().is_some_and(|me| {
            let copy = || {
                ctx.current_exe().is_some_and(|exe| crate::error::bounded::same_contents(exe, path).unwrap_or(false))
            };
            file_id(me) == file_id(m) || (me.len() == m.len() && copy())
        })
    }
}

/// What `nvcc` on PATH is: what a build that runs `nvcc` runs (for `doctor`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OnPath {
    /// This wrapper (a link to it, or a copy).
    Wrapper(PathBuf),
    /// Another program: the real nvcc, before any wrapper on PATH.
    Other(PathBuf),
    None,
}

/// The first runnable `nvcc` on PATH, and whether it is this wrapper.
pub fn nvcc_on_path(ctx: &Context) -> OnPath {
    let is_me = this_wrapper(ctx);
    match which::which_in("nvcc", Some(ctx.search_path()), &ctx.cwd) {
        Ok(found) if std::fs::metadata(&found).is_ok_and(|m| is_me(&found, &m)) => OnPath::Wrapper(found),
        Ok(found) => OnPath::Other(found),
        Err(_) => OnPath::None,
    }
}

/// The real nvcc: the config's `nvcc`, else the first `nvcc` on PATH that is not this wrapper.
pub fn find(ctx: &Context, config: &Loaded) -> Result<RealNvcc> {
    let is_me = this_wrapper(ctx);

    if let Some(configured) = &config.config.nvcc {
        let path = configured.value.clone();
        let Some(meta) = std::fs::metadata(&path).ok().filter(std::fs::Metadata::is_file) else {
            // Found but not a program is 126, as a shell says of a directory it is told to run (issue 48); nothing
            // there is 127.
            let (kind, what) = match path.is_dir() {
                true => (ErrorKind::CannotExec, "is a directory, not the nvcc program"),
                false => (ErrorKind::NotFound, "does not exist"),
            };
            return Err(configured.error_of_kind(kind, Key::Nvcc, what).with_help(
                "set `nvcc` to the real nvcc of a CUDA toolkit (TOP/bin/nvcc), or remove it to search PATH",
            ));
        };
        if is_me(&path, &meta) {
            return Err(configured
                .error_of_kind(ErrorKind::Loop, Key::Nvcc, "is this wrapper itself (or a copy of it)")
                .with_help("set `nvcc` to the real nvcc of a CUDA toolkit, not to the wrapper"));
        }
        return Ok(RealNvcc { path, found_by: FoundBy::Config(configured.origin.clone()) });
    }

    let search = ctx.search_path();
    let mut skipped = Vec::new();
    if let Ok(all) = which::which_in_all("nvcc", Some(search), &ctx.cwd) {
        for candidate in all {
            if std::fs::metadata(&candidate).is_ok_and(|m| is_me(&candidate, &m)) {
                skipped.push(candidate);
            } else {
                return Ok(RealNvcc { path: candidate, found_by: FoundBy::Path });
            }
        }
    }
    // `nvcc` files on PATH that cannot be run: worth naming, since they look like the answer.
    let unusable: Vec<PathBuf> = std::env::split_paths(search)
        .map(|dir| ctx.absolute(&dir).join("nvcc"))
        .filter(|p| {
            p.exists() && !skipped.iter().any(|s| s == p) && which::which_in(p, Some(search), &ctx.cwd).is_err()
        })
        .collect();
    Err(Refused::NoNvcc { skipped, unusable }.into())
}

/// What makes a file the same file: its device and inode.
fn file_id(meta: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A configured path, as the file gives it (no line: the tests read no file).
    fn in_file(path: PathBuf) -> crate::config::Sourced<PathBuf> {
        crate::config::Sourced::new(path, crate::config::Origin::File(None))
    }
    use crate::context::Env;
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;

    fn executable(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        // Each its own bytes: files of the same bytes are copies of one another.
        std::fs::write(path, format!("#!/bin/sh\n# {}\n", path.display())).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    fn ctx(path: &str, me: Option<PathBuf>, depth: Option<&str>) -> Context {
        let mut env: Env = [("PATH", path)].into_iter().collect();
        if let Some(d) = depth {
            env.set(vars::DEPTH, d);
        }
        Context { env, cwd: PathBuf::from("/"), current_exe: me.into(), ..Context::default() }
    }

    #[test]
    fn skips_the_wrapper_on_path_even_through_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let wrapper = dir.path().join("wrapper/bin/nvcc-wrapper");
        executable(&wrapper);
        std::os::unix::fs::symlink(&wrapper, dir.path().join("wrapper/bin/nvcc")).unwrap();
        let real = dir.path().join("cuda/bin/nvcc");
        executable(&real);
        let path = format!("{}:{}", dir.path().join("wrapper/bin").display(), dir.path().join("cuda/bin").display());
        let found = find(&ctx(&path, Some(wrapper.clone()), None), &Loaded::default()).unwrap();
        assert_eq!(found, RealNvcc { path: real, found_by: FoundBy::Path });

        let only_me = dir.path().join("wrapper/bin").display().to_string();
        let err = find(&ctx(&only_me, Some(wrapper), None), &Loaded::default()).unwrap_err();
        assert_eq!(err.kind, ErrorKind::NotFound);
        assert!(err.message.contains("only runnable `nvcc` on PATH is this wrapper"), "{err}");
    }

    #[test]
    fn skips_a_hard_link_of_the_wrapper_and_refuses_one_configured() {
        let dir = tempfile::tempdir().unwrap();
        let wrapper = dir.path().join("wrapper/bin/nvcc-wrapper");
        executable(&wrapper);
        std::fs::create_dir_all(dir.path().join("linked")).unwrap();
        std::fs::hard_link(&wrapper, dir.path().join("linked/nvcc")).unwrap();
        let real = dir.path().join("cuda/bin/nvcc");
        executable(&real);
        let path = format!("{}:{}", dir.path().join("linked").display(), dir.path().join("cuda/bin").display());
        let found = find(&ctx(&path, Some(wrapper.clone()), None), &Loaded::default()).unwrap();
        assert_eq!(found.path, real);
        let loaded = Loaded {
            config: Box::new(crate::config::Config {
                nvcc: Some(in_file(dir.path().join("linked/nvcc"))),
                ..Default::default()
            }),
            ..Loaded::default()
        };
        assert_eq!(find(&ctx("", Some(wrapper), None), &loaded).unwrap_err().kind, ErrorKind::Loop);
        // A copy is another file, but the same bytes (issue 26): refused too.
        std::fs::copy(&real, dir.path().join("copy")).unwrap();
        let copy = Loaded {
            config: Box::new(crate::config::Config {
                nvcc: Some(in_file(dir.path().join("copy"))),
                ..Default::default()
            }),
            ..Loaded::default()
        };
        assert_eq!(find(&ctx("", Some(real.clone()), None), &copy).unwrap_err().kind, ErrorKind::Loop);
        // Another file of the same size is not a copy.
        let mut other = std::fs::read(&real).unwrap();
        *other.last_mut().unwrap() = b'#';
        std::fs::write(dir.path().join("copy"), other).unwrap();
        assert!(find(&ctx("", Some(real), None), &copy).is_ok());
    }

    /// Issue 26: two copies of the wrapper on PATH before the real nvcc ran each other until the depth counter
    /// stopped them (exit 125). Each skips the other now.
    #[test]
    fn skips_copies_of_the_wrapper_on_path() {
        let dir = tempfile::tempdir().unwrap();
        let wrapper = dir.path().join("a/nvcc");
        std::fs::create_dir_all(dir.path().join("a")).unwrap();
        std::fs::write(&wrapper, "#!/bin/sh\n# the wrapper's bytes\n").unwrap();
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::create_dir_all(dir.path().join("b")).unwrap();
        std::fs::copy(&wrapper, dir.path().join("b/nvcc")).unwrap();
        let real = dir.path().join("cuda/bin/nvcc");
        executable(&real);
        let path = std::env::join_paths(["a", "b", "cuda/bin"].map(|d| dir.path().join(d))).unwrap();
        let path = path.to_str().unwrap();
        for me in [wrapper, dir.path().join("b/nvcc")] {
            assert_eq!(find(&ctx(path, Some(me), None), &Loaded::default()).unwrap().path, real);
        }
    }

    /// Issue 26: a `-ccbin` script that calls nvcc again was blamed on PATH or the config. A real nvcc sets `_HERE_`
    /// for what it runs, so the help names the host compiler then.
    #[test]
    fn a_chain_through_a_program_nvcc_runs_is_blamed_on_it() {
        let mut c = ctx("", None, Some("8"));
        let err = depth(&c, None).unwrap_err();
        assert!(err.help.as_deref().unwrap().contains("before any copy of the wrapper"), "{err}");
        c.env.set("_HERE_", "/opt/cuda/bin");
        let err = depth(&c, None).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Loop);
        assert!(
            err.message.contains("a program that the real nvcc /opt/cuda/bin/nvcc runs calls `nvcc` again"),
            "{err}"
        );
        assert!(err.help.as_deref().unwrap().contains("give `-ccbin` the compiler itself"), "{err}");
    }

    #[test]
    fn keeps_the_found_path_unresolved_for_nvcc_profile() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("cuda/bin/nvcc");
        executable(&real);
        std::fs::create_dir(dir.path().join("bin")).unwrap();
        std::os::unix::fs::symlink(&real, dir.path().join("bin/nvcc")).unwrap();
        let found = find(&ctx(&dir.path().join("bin").display().to_string(), None, None), &Loaded::default()).unwrap();
        assert_eq!(found.path, dir.path().join("bin/nvcc"));
    }

    #[test]
    fn config_nvcc_is_checked() {
        let dir = tempfile::tempdir().unwrap();
        executable(&dir.path().join("cuda/bin/nvcc"));
        let loaded = |nvcc: &str| Loaded {
            config: Box::new(crate::config::Config {
                nvcc: Some(in_file(dir.path().join(nvcc))),
                ..Default::default()
            }),
            path: Some(dir.path().join("config.toml")),
            ..Default::default()
        };
        let found = find(&ctx("", None, None), &loaded("cuda/bin/nvcc")).unwrap();
        assert_eq!(found.path, dir.path().join("cuda/bin/nvcc"));
        let err = find(&ctx("", None, None), &loaded("missing/nvcc")).unwrap_err();
        assert_eq!(err.kind, ErrorKind::NotFound);
        assert!(err.message.contains("missing/nvcc, from the config) does not exist"), "{err}");
        let me = dir.path().join("cuda/bin/nvcc");
        let err = find(&ctx("", Some(me), None), &loaded("cuda/bin/nvcc")).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Loop);
    }

    #[test]
    fn no_nvcc_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let err = find(&ctx(&dir.path().display().to_string(), None, None), &Loaded::default()).unwrap_err();
        assert_eq!(err.kind, ErrorKind::NotFound);
        assert!(err.message.contains("no runnable `nvcc` on PATH"));
    }

    #[test]
    fn what_stands_in_nvccs_place_is_named_for_what_it_is() {
        // Issue 12: a directory used to "not exist", and a non-executable nvcc on PATH was not mentioned at all.
        let dir = tempfile::tempdir().unwrap();
        let loaded = Loaded {
            config: Box::new(crate::config::Config { nvcc: Some(in_file("/usr".into())), ..Default::default() }),
            path: Some(dir.path().join("c.toml")),
            ..Default::default()
        };
        let err = find(&ctx("", None, None), &loaded).unwrap_err();
        assert!(err.message.starts_with("`nvcc` (/usr, from the config) is a directory"), "{err}");
        std::fs::write(dir.path().join("nvcc"), "#!/bin/sh\n").unwrap();
        let err = find(&ctx(&dir.path().display().to_string(), None, None), &Loaded::default()).unwrap_err();
        let plain = dir.path().join("nvcc").display().to_string();
        assert!(err.message.contains(&format!("{plain} cannot be run (not an executable file)")), "{err}");
    }

    #[test]
    fn with_path_unset_the_default_path_is_searched_not_the_working_directory() {
        let dir = tempfile::tempdir().unwrap();
        executable(&dir.path().join("nvcc"));
        let ctx = Context { cwd: dir.path().to_path_buf(), ..Context::default() };
        match find(&ctx, &Loaded::default()) {
            Ok(found) => assert!(found.path.starts_with("/bin") || found.path.starts_with("/usr/bin"), "{found:?}"),
            Err(err) => assert_eq!(err.kind, ErrorKind::NotFound),
        }
    }

    #[test]
    fn depth_counter() {
        assert_eq!(depth(&ctx("", None, None), None).unwrap(), 0);
        assert_eq!(depth(&ctx("", None, Some("3")), None).unwrap(), 3);
        assert_eq!(depth(&ctx("", None, Some(&MAX_DEPTH.to_string())), None).unwrap_err().kind, ErrorKind::Loop);
        assert_eq!(depth(&ctx("", None, Some("many")), None).unwrap_err().kind, ErrorKind::Environment);
        // Too large for a counter: a chain too deep, not "not a whole number".
        assert_eq!(depth(&ctx("", None, Some("999999999999")), None).unwrap_err().kind, ErrorKind::Loop);
    }
}
