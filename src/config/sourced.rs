//! Settings that carry where they came from: a key of the config file (the file and line), an environment variable,
//! a flag of the wrapper's own command line, or the built-in default. A message about a setting names its origin the
//! way the user gave it, and the origin picks the exit code of a bad value (78 for the file, 64 for a variable, 2 for
//! a flag).
//!
//! A value read from the file gets its origin while it is read (`Sourced`'s `Deserialize`), and a path in the file
//! is made absolute against the file's directory while it is read (`in_file`), so no list of settings is kept by
//! hand to fill them in afterwards: `reading` tells both which file is being read.

use std::cell::RefCell;
use std::fmt;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;

use crate::error::ErrorKind;

/// Where a setting's value came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Origin {
    /// Nobody set it.
    #[default]
    Default,
    /// A key of a config file, where it starts (`None` only for a value read outside `reading`, as tests do).
    File(Option<At>),
    /// This environment variable.
    Env(&'static str),
    /// This flag of `nvcc-wrapper`'s own command line (`--system`).
    Flag(&'static str),
}

/// A place in a config file: the file and the line a key's value starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct At {
    pub file: Arc<Path>,
    pub line: u32,
}

/// The file being read on this thread, for `Sourced` and `in_file` to name and resolve against.
struct Reading {
    file: Arc<Path>,
    /// The byte offset where each line starts, the first at 0.
    lines: Vec<usize>,
}

thread_local! {
    static READING: RefCell<Option<Reading>> = const { RefCell::new(None) };
}

/// Run `read` (the deserialization of the file at `path` with this text) with the file known to `Sourced` and
/// `in_file`. Deserialization is synchronous, so the thread's one slot is enough; it is emptied even if `read`
/// panics.
pub fn reading<T>(path: &Path, text: &str, read: impl FnOnce() -> T) -> T {
    struct Done;
    impl Drop for Done {
        fn drop(&mut self) {
            READING.with(|r| r.borrow_mut().take());
        }
    }
    let lines = std::iter::once(0).chain(text.match_indices('\n').map(|(at, _)| at + 1)).collect();
    READING.with(|r| *r.borrow_mut() = Some(Reading { file: Arc::from(path), lines }));
    let _done = Done;
    read()
}

/// The place in the file being read of byte offset `at`.
fn at(offset: usize) -> Option<At> {
    READING.with(|r| {
        let r = r.borrow();
        let r = r.as_ref()?;
        let line = r.lines.partition_point(|&start| start <= offset);
        Some(At { file: r.file.clone(), line: u32::try_from(line).unwrap_or(u32::MAX) })
    })
}

/// A path written in the file being read, as the wrapper uses it: a relative one joined to the file's directory.
/// For a program (`program`), a bare name stays as it is, to be looked up on PATH as nvcc does with `-ccbin`.
pub fn in_file(path: PathBuf, program: bool) -> PathBuf {
    if path.is_absolute() || (program && path.components().count() == 1) {
        return path;
    }
    let dir = READING.with(|r| r.borrow().as_ref().and_then(|r| r.file.parent().map(Path::to_path_buf)));
    match dir {
        Some(dir) => dir.join(path),
        None => path,
    }
}

impl Origin {
    /// The kind of error a bad value of this origin is: a bad file exits 78, a bad variable 64, a bad flag 2.
    pub fn error_kind(&self) -> ErrorKind {
        match self {
            Origin::Env(_) => ErrorKind::Environment,
            Origin::Flag(_) => ErrorKind::Usage,
            Origin::Default | Origin::File(_) => ErrorKind::Config,
        }
    }

    /// Whether the user sets this kind of setting with the wrapper's own flags (so help lines say "pass", not
    /// "set ... in the config").
    pub fn is_flag(&self) -> bool {
        matches!(self, Origin::Flag(_))
    }
}

impl fmt::Display for Origin {
    /// `/etc/nvcc-wrapper.toml`, `$NVCC_WRAPPER_LAUNCHER`, `` `--system` ``, `the defaults`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Default => f.write_str("the defaults"),
            // Quoted as a shell reads it, so a path that is not UTF-8 shows its bytes.
            Origin::File(Some(At { file, line })) => write!(f, "{}:{line}", crate::error::shell::path(file)),
            Origin::File(None) => f.write_str("the config"),
            Origin::Env(var) => write!(f, "${var}"),
            Origin::Flag(flag) => write!(f, "`{flag}`"),
        }
    }
}

/// A setting's value and its origin. Reads as the value (`Deref`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sourced<T> {
    pub value: T,
    pub origin: Origin,
}

impl<T> Sourced<T> {
    pub fn new(value: T, origin: Origin) -> Sourced<T> {
        Sourced { value, origin }
    }
}

/// How a setting's value is written in a message about it: a path as a shell would read it, a release as it is.
pub trait Shown {
    fn shown(&self) -> String;
}

impl Shown for PathBuf {
    fn shown(&self) -> String {
        crate::error::shell::path(self)
    }
}

impl Shown for crate::compat::Version {
    fn shown(&self) -> String {
        self.to_string()
    }
}

impl<T: Shown> Sourced<T> {
    /// The setting as every message names it: `` `KEY` (VALUE, from ORIGIN) ``, or `` `KEY` (VALUE) `` where
    /// nobody set it.
    pub fn named(&self, key: super::Key) -> String {
        match &self.origin {
            Origin::Default => format!("`{key}` ({})", self.value.shown()),
            origin => format!("`{key}` ({}, from {origin})", self.value.shown()),
        }
    }

    /// An error about this setting, in the one sentence every such error has (`` `KEY` (VALUE, from ORIGIN) WHAT
    /// ``), of the kind its origin picks: 78 for the file, 64 for a variable, 2 for a flag.
    pub fn error(&self, key: super::Key, what: impl fmt::Display) -> crate::error::Error {
        self.error_of_kind(self.origin.error_kind(), key, what)
    }

    /// The same sentence, of a kind the failure picks (a configured nvcc that is not there exits 127, as a shell's).
    pub fn error_of_kind(
        &self,
        kind: crate::error::ErrorKind,
        key: super::Key,
        what: impl fmt::Display,
    ) -> crate::error::Error {
        super::problems::Refused::Setting { named: self.named(key), what: what.to_string(), kind }.into()
    }
}

impl<T> Deref for Sourced<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

/// A value read from the config file: its origin is the file and the line its value starts on.
impl<'de, T: Deserialize<'de>> Deserialize<'de> for Sourced<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let spanned = toml::Spanned::<T>::deserialize(d)?;
        let origin = Origin::File(at(spanned.span().start));
        Ok(Sourced { value: spanned.into_inner(), origin })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configured_paths_error_names_its_key_its_path_and_where_it_was_set() {
        let file = Origin::File(Some(At { file: Arc::from(Path::new("/etc/w.toml")), line: 3 }));
        let e = Sourced::new(PathBuf::from("/opt/my root"), file).error(crate::config::Key::Sysroot, "does not exist");
        assert_eq!(e.message, "`[target] sysroot` ('/opt/my root', from /etc/w.toml:3) does not exist");
        assert_eq!(e.kind, ErrorKind::Config);
        let e = Sourced::new(PathBuf::from("/x"), Origin::Env("NVCC_WRAPPER_TARGET_SYSROOT"))
            .error(crate::config::Key::Sysroot, "w");
        assert_eq!(
            (e.message.as_str(), e.kind),
            ("`[target] sysroot` (/x, from $NVCC_WRAPPER_TARGET_SYSROOT) w", ErrorKind::Environment)
        );
    }

    #[test]
    fn each_origin_is_named_as_the_user_gave_it_with_its_exit_code() {
        let rows = [
            (Origin::Default, "the defaults", ErrorKind::Config),
            (
                Origin::File(Some(At { file: Arc::from(Path::new("/etc/n.toml")), line: 3 })),
                "/etc/n.toml:3",
                ErrorKind::Config,
            ),
            (Origin::File(None), "the config", ErrorKind::Config),
            (Origin::Env("NVCC_WRAPPER_LAUNCHER"), "$NVCC_WRAPPER_LAUNCHER", ErrorKind::Environment),
            (Origin::Flag("--system"), "`--system`", ErrorKind::Usage),
        ];
        for (origin, shown, kind) in rows {
            assert_eq!(origin.to_string(), shown);
            assert_eq!(origin.error_kind(), kind, "{shown}");
            assert_eq!(origin.is_flag(), shown.starts_with('`'), "{shown}");
        }
    }

    #[test]
    fn a_value_read_from_a_file_is_named_by_its_file_and_line_and_its_paths_by_the_files_directory() {
        #[derive(Deserialize)]
        struct Two {
            a: Sourced<u32>,
            b: Sourced<Vec<u32>>,
        }
        let text = "# a comment\na = 1\n\nb = [\n  2,\n]\n";
        let two: Two = reading(Path::new("/etc/x/n.toml"), text, || toml::from_str(text).unwrap());
        let file: Arc<Path> = Arc::from(Path::new("/etc/x/n.toml"));
        assert_eq!(two.a.origin, Origin::File(Some(At { file: file.clone(), line: 2 })));
        assert_eq!(two.b.origin, Origin::File(Some(At { file, line: 4 })), "where the value starts");
        assert_eq!(*two.b, [2]);
        let resolved = reading(Path::new("/etc/x/n.toml"), "", || {
            [("bin/g++", false), ("g++-12", true), ("./g++", true), ("/usr/bin/g++", false), ("lib", false)]
                .map(|(p, program)| in_file(p.into(), program))
        });
        let want = ["/etc/x/bin/g++", "g++-12", "/etc/x/./g++", "/usr/bin/g++", "/etc/x/lib"];
        assert_eq!(resolved.map(|p| p.to_string_lossy().into_owned()), want);
        // Outside a file nothing is named or resolved.
        let bare: Two = toml::from_str("a = 1\nb = []\n").unwrap();
        assert_eq!(bare.a.origin, Origin::File(None));
        assert_eq!(in_file("bin/g++".into(), false), Path::new("bin/g++"));
    }
}
