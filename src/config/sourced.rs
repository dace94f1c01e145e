//! Settings that carry where they came from: a key of the config file, an environment variable, a flag of the
//! wrapper's own command line, or the built-in default. A message about a setting names its origin the way the user
//! gave it, and the origin picks the exit code of a bad value (78 for the file, 64 for a variable, 2 for a flag).

use std::fmt;
use std::ops::Deref;
use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;

use crate::error::ErrorKind;

/// Where a setting's value came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Origin {
    /// Nobody set it.
    #[default]
    Default,
    /// A key of this config file (`None` until the file's path is known, right after parsing).
    File(Option<Arc<Path>>),
    /// This environment variable.
    Env(&'static str),
    /// This flag of `nvcc-wrapper`'s own command line (`--system`).
    Flag(&'static str),
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
            Origin::File(Some(path)) => f.write_str(&crate::shell::path(path)),
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

impl<T> Deref for Sourced<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

/// A value read from the config file: its origin is the file (named once loading knows the path).
impl<'de, T: Deserialize<'de>> Deserialize<'de> for Sourced<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(d).map(|value| Sourced { value, origin: Origin::File(None) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_origin_is_named_as_the_user_gave_it_with_its_exit_code() {
        let rows = [
            (Origin::Default, "the defaults", ErrorKind::Config),
            (Origin::File(Some(Arc::from(Path::new("/etc/n.toml")))), "/etc/n.toml", ErrorKind::Config),
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
}
