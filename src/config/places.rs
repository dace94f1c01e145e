//! Where the configuration file is looked for, in one order, and which file applies: the first one found, whole.
//!
//! 1. `$NVCC_WRAPPER_CONFIG`: named for this call, so it wins even when missing (a wrong name is an error, not a
//!    silent fall back to another file).
//! 2. The installation's own file, `<dir>/../share/nvcc-wrapper/config.toml`, for `<dir>` the directory of the
//!    `nvcc` that was run (symlinks kept), then that of the wrapper's executable. It describes this installation's
//!    nvcc and compilers, so it comes before any file of the user's: two installations (a native one and a Jetson
//!    cross one) each keep their own, and a wrapper made by Nix, whose file is always there, never reads another.
//! 3. The user's, `$XDG_CONFIG_HOME/nvcc-wrapper/config.toml` (`~/.config` when that variable is unset, empty or
//!    relative, as the XDG base directory specification says).
//! 4. The machine's, `/etc/nvcc-wrapper/config.toml`, unless `$NVCC_WRAPPER_NO_MACHINE_CONFIG` is on (as git's
//!    `GIT_CONFIG_NOSYSTEM`: with a home of its own, a test suite or a script reads no file it did not write).
//!
//! Files are not merged: a file is a whole statement of a setup, and what `explain` shows is one file. Inside a Nix
//! build (`$NIX_BUILD_TOP`, not `nix-shell`) places 3 and 4 are not looked at: a derivation must not read files
//! outside the store. Something at a place that is not a file the wrapper can read (a dangling link, a loop, a
//! directory, a FIFO) is passed over, and said: `explain` shows it, `doctor` fails on it, the drop-in warns. Nothing
//! here reads or opens a file; `find` only asks what each candidate is.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::context::{vars, Context};

/// The machine-wide configuration file.
pub const MACHINE: &str = "/etc/nvcc-wrapper/config.toml";

/// The kinds of place, in the order they are looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// `$NVCC_WRAPPER_CONFIG`.
    Named,
    /// `<dir>/../share/nvcc-wrapper/config.toml` beside the `nvcc` that was run, or the wrapper's executable.
    Installation,
    /// `$XDG_CONFIG_HOME/nvcc-wrapper/config.toml`.
    User,
    /// `/etc/nvcc-wrapper/config.toml`.
    Machine,
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self {
            Place::Named => "named by $NVCC_WRAPPER_CONFIG",
            Place::Installation => "the installation's",
            Place::User => "the user's",
            Place::Machine => "the machine's",
        })
    }
}

/// One place and what was there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Looked {
    pub place: Place,
    pub path: PathBuf,
    pub state: State,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Nothing there.
    Missing,
    /// The file that applies.
    Used,
    /// Not looked at: a Nix build reads no user or machine file.
    NixBuild,
    /// Not looked at: `$NVCC_WRAPPER_NO_MACHINE_CONFIG` turns the machine's file off.
    SwitchedOff,
    /// Something that is not a file the wrapper can read (a dangling link, a directory, a FIFO...), with what it is:
    /// passed over, and a problem `explain` shows and `doctor` fails on. A FIFO is never opened.
    Unusable(&'static str),
}

/// What is at a path, for a config place: nothing, a regular file (through any link), or something else, said in a
/// few words. Only `stat` is asked: nothing is opened.
pub fn there(path: &Path) -> State {
    let link = match std::fs::symlink_metadata(path) {
        Ok(link) => link,
        Err(e) => {
            return match e.kind() {
                std::io::ErrorKind::NotFound => State::Missing,
                // A directory on the way that is a file: nothing can be there.
                _ if e.raw_os_error() == Some(libc::ENOTDIR) => State::Missing,
                std::io::ErrorKind::PermissionDenied => State::Unusable("in a directory the wrapper may not look into"),
                _ if e.raw_os_error() == Some(libc::ELOOP) => State::Unusable("a loop of symbolic links"),
                _ => State::Unusable("something that cannot be looked at"),
            };
        }
    };
    // Only a link is followed: for anything else the one `stat` has said all there is.
    match if link.is_symlink() { std::fs::metadata(path) } else { Ok(link) } {
        Ok(m) if m.is_file() => State::Used,
        Ok(m) => State::Unusable(kind(&m.file_type())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => State::Unusable("a symbolic link to nothing"),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => State::Unusable("a loop of symbolic links"),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            State::Unusable("a symbolic link the wrapper may not follow")
        }
        Err(_) => State::Unusable("a symbolic link that cannot be followed"),
    }
}

/// A file type in a few words.
fn kind(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

impl fmt::Display for Looked {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let path = crate::error::shell::path(&self.path);
        match self.state {
            State::Used => write!(f, "{path} ({})", self.place),
            State::Missing => write!(f, "{path} ({}): none there", self.place),
            State::NixBuild => write!(f, "{path} ({}): not read in a Nix build", self.place),
            State::SwitchedOff => write!(f, "{path} ({}): not read, ${} is on", self.place, vars::NO_MACHINE_CONFIG),
            State::Unusable(what) => {
                write!(f, "{path} ({}): {what}, not a config file the wrapper can read; passed over", self.place)
            }
        }
    }
}

/// The config files at the places after the one that applies (`looked`, as `find` gave it): each is ignored whole,
/// since files are never merged, and `explain` and `doctor` name them so that an edit there is not a mystery. None
/// in a Nix build, which reads no user or machine file.
pub fn ignored(ctx: &Context, looked: &[Looked], look: impl Fn(&Path) -> State) -> Vec<(Place, PathBuf)> {
    if !looked.last().is_some_and(|l| l.state == State::Used) || crate::context::dirs::in_nix_build(&ctx.env) {
        return Vec::new();
    }
    let off = machine_off(ctx);
    let later = candidates(ctx).skip(looked.len()).filter(|(place, _)| !(off && *place == Place::Machine));
    later.filter(|(_, path)| look(path) == State::Used).collect()
}

/// Whether `$NVCC_WRAPPER_NO_MACHINE_CONFIG` turns the machine's file off. A value that is not a switch is the
/// loading's error (`super::load`); here it leaves the file on.
fn machine_off(ctx: &Context) -> bool {
    ctx.env.switch(vars::NO_MACHINE_CONFIG).ok().flatten() == Some(true)
}

/// Every place in order, as (kind, path), each made when the search gets to it: the wrapper's own executable is
/// asked of the OS only when no file was found beside the path it was started through.
pub fn candidates(ctx: &Context) -> impl Iterator<Item = (Place, PathBuf)> + '_ {
    let named = ctx.env.non_empty(vars::CONFIG).map(|named| (Place::Named, ctx.absolute(Path::new(named))));
    let invoked = invoked_path(ctx).and_then(|exe| installation_file(&exe));
    // An installation's file once, when the invoked path and the executable are in one directory (or one is named).
    let earlier: Vec<PathBuf> = named.iter().map(|(_, p)| p.clone()).chain(invoked.clone()).collect();
    let beside_exe = std::iter::once_with(move || {
        ctx.current_exe().and_then(installation_file).filter(|path| !earlier.contains(path))
    });
    let invoked = invoked.filter(|path| named.as_ref().map_or(true, |(_, p)| p != path));
    named
        .into_iter()
        .chain(invoked.into_iter().chain(beside_exe.flatten()).map(|path| (Place::Installation, path)))
        .chain(std::iter::once_with(|| user_file(ctx)).flatten().map(|path| (Place::User, path)))
        .chain(std::iter::once((Place::Machine, PathBuf::from(MACHINE))))
}

/// The installation's config file for a wrapper at `exe`: `<dir>/../share/nvcc-wrapper/config.toml`.
fn installation_file(exe: &Path) -> Option<PathBuf> {
    Some(exe.parent()?.join("../share/nvcc-wrapper/config.toml"))
}

/// Look at the places in order, stopping at the first file found: every place looked at, the last one `Used` when a
/// file was found. A named file is `Used` whether or not it exists, so that reading it reports a wrong name. `look`
/// says what is at a path (`there`).
pub fn find(ctx: &Context, look: impl Fn(&Path) -> State) -> Vec<Looked> {
    let (nix_build, machine_off) = (crate::context::dirs::in_nix_build(&ctx.env), machine_off(ctx));
    let mut looked = Vec::new();
    for (place, path) in candidates(ctx) {
        let state = match place {
            Place::Named => State::Used,
            Place::User | Place::Machine if nix_build => State::NixBuild,
            Place::Machine if machine_off => State::SwitchedOff,
            _ => look(&path),
        };
        looked.push(Looked { place, path, state });
        if state == State::Used {
            break;
        }
    }
    looked
}

/// `$XDG_CONFIG_HOME/nvcc-wrapper/config.toml`, or `$HOME/.config/nvcc-wrapper/config.toml`; `None` without an
/// absolute home.
fn user_file(ctx: &Context) -> Option<PathBuf> {
    let absolute = |name| ctx.env.non_empty(name).map(Path::new).filter(|p| p.is_absolute());
    let base = absolute(vars::XDG_CONFIG_HOME)
        .map(Path::to_path_buf)
        .or_else(|| absolute(vars::HOME).map(|home| home.join(".config")))?;
    Some(base.join("nvcc-wrapper/config.toml"))
}

/// Files where people put a configuration by mistake, for `doctor`: each existing one with the file it was meant to
/// be. None of them is ever read.
pub fn near_misses(ctx: &Context) -> Vec<(PathBuf, PathBuf)> {
    let mut misses: Vec<(PathBuf, PathBuf)> = Vec::new();
    let mut miss = |wrong: PathBuf, right: &Path| {
        if wrong.is_file() && !misses.iter().any(|(w, _)| *w == wrong) {
            misses.push((wrong, right.to_path_buf()));
        }
    };
    for exe in [invoked_path(ctx), ctx.current_exe().map(Path::to_path_buf)].into_iter().flatten() {
        let Some(bin) = exe.parent() else { continue };
        let right = bin.join("../share/nvcc-wrapper/config.toml");
        for wrong in ["config.toml", "nvcc-wrapper.toml", "../share/nvcc-wrapper.toml", "../etc/nvcc-wrapper.toml"] {
            miss(bin.join(wrong), &right);
        }
    }
    let home = ctx.env.non_empty(vars::HOME).map(Path::new).filter(|p| p.is_absolute());
    for right in user_file(ctx).into_iter().chain([PathBuf::from(MACHINE)]) {
        let Some(dir) = right.parent() else { continue };
        let parent = dir.parent().unwrap_or(dir);
        for wrong in [parent.join("nvcc-wrapper.toml"), dir.join("nvcc-wrapper.toml"), dir.join("config")] {
            miss(wrong, &right);
        }
    }
    if let (Some(home), Some(right)) = (home, user_file(ctx)) {
        // Under a `$XDG_CONFIG_HOME` elsewhere, the usual `~/.config` file is not read either.
        for wrong in [".config/nvcc-wrapper/config.toml", ".nvcc-wrapper.toml", ".nvcc-wrapper/config.toml"] {
            if home.join(wrong) != right {
                miss(home.join(wrong), &right);
            }
        }
    }
    misses
}

/// The path the wrapper was started through, symlinks kept: argv[0] if it has a slash, else its PATH match.
pub fn invoked_path(ctx: &Context) -> Option<PathBuf> {
    let argv0 = Path::new(&ctx.argv0);
    if argv0.as_os_str().is_empty() {
        return None;
    }
    if argv0.components().count() > 1 {
        return Some(ctx.absolute(argv0));
    }
    which::which_in(argv0, Some(ctx.search_path()), &ctx.cwd).ok()
}
