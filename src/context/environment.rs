//! The environment the wrapper was given: a view of the process's own `NAME=VALUE` strings, in the caller's order,
//! copied nowhere. A call reads a few names and hands the rest to nvcc as they came, so neither the reading nor the
//! exec makes a copy of the variables it leaves alone (copying, sorting and rebuilding them cost a drop-in call
//! about a third of its instructions: docs/benchmarks.md).

use std::ffi::{CStr, CString, NulError, OsStr};
use std::fmt;
use std::os::unix::ffi::OsStrExt;

use crate::error::Result;

/// A snapshot of the environment, as given to the wrapper. Changes for the exec'd nvcc are made on a copy, which
/// shares every string it does not change.
#[derive(Clone, Default)]
pub struct Env {
    vars: Vec<Var>,
}

#[derive(Clone)]
struct Var {
    text: Text,
    /// The length of the name: the bytes before the `=` that ends it.
    name: usize,
}

#[derive(Clone)]
enum Text {
    /// One of the process's own strings, which live as long as the process: nothing in the wrapper changes its
    /// environment (clippy.toml forbids `set_var` and `remove_var`), and libc frees none it did not allocate.
    Given(&'static CStr),
    /// `NAME=VALUE`, set by the wrapper or built by a test; a NUL in it is refused when it is made a C string.
    Set(Box<[u8]>),
}

impl Var {
    fn bytes(&self) -> &[u8] {
        match &self.text {
            Text::Given(text) => text.to_bytes(),
            Text::Set(text) => text,
        }
    }

    fn name(&self) -> &[u8] {
        &self.bytes()[..self.name]
    }

    fn value(&self) -> &OsStr {
        OsStr::from_bytes(&self.bytes()[self.name + 1..])
    }

    /// A string of the process's environment, or `None` for one without a name and a `=`, which std's
    /// `vars_os` (and so this wrapper, before) skips as malformed. A name may begin with `=`, as glibc reads it.
    fn given(text: &'static CStr) -> Option<Var> {
        let bytes = text.to_bytes();
        let name = 1 + bytes.get(1..)?.iter().position(|&b| b == b'=')?;
        Some(Var { text: Text::Given(text), name })
    }
}

impl Env {
    /// The process's environment as it is now, read in place.
    pub(super) fn from_process() -> Env {
        extern "C" {
            static environ: *const *const std::ffi::c_char;
        }
        // SAFETY: `environ` is the process's NULL-terminated array of NUL-terminated strings. The wrapper runs no
        // other thread yet and never changes its environment, so the array is read whole, and every string it
        // points at stays where it is for the life of the process (a later `setenv` would only replace pointers in
        // the array, never free a string it did not allocate).
        let given = unsafe {
            let mut count = 0;
            while !environ.is_null() && !(*environ.add(count)).is_null() {
                count += 1;
            }
            (0..count).map(|n| CStr::from_ptr(*environ.add(n)))
        };
        // Counted first: the list is made at its size, once (a call holds no more heap than it needs).
        let mut vars = Vec::with_capacity(given.len());
        vars.extend(given.filter_map(Var::given));
        Env { vars }
    }

    /// A copy with room for `more` variables set on it without growing.
    pub fn with_room(&self, more: usize) -> Env {
        let mut vars = Vec::with_capacity(self.vars.len() + more);
        vars.extend_from_slice(&self.vars);
        Env { vars }
    }

    /// The value of `name`: its first definition, as `getenv` (and so nvcc and every program it runs) reads it.
    pub fn get(&self, name: &str) -> Option<&OsStr> {
        let name = name.as_bytes();
        self.vars.iter().find(|v| v.name == name.len() && v.name() == name).map(Var::value)
    }

    /// The value, or `None` when unset or empty: nvcc and most tools treat an empty variable as unset.
    pub fn non_empty(&self, name: &str) -> Option<&OsStr> {
        self.get(name).filter(|v| !v.is_empty())
    }

    /// A switch: `1`/`true`/`yes`/`on` or `0`/`false`/`no`/`off`; `None` when unset or empty. Anything else is an
    /// error naming the variable, since a typo must not silently turn a setting off.
    pub fn switch(&self, name: &str) -> Result<Option<bool>> {
        let Some(value) = self.non_empty(name) else {
            return Ok(None);
        };
        match value.to_str().map(str::to_ascii_lowercase).as_deref() {
            Some("1" | "true" | "yes" | "on") => Ok(Some(true)),
            Some("0" | "false" | "no" | "off") => Ok(Some(false)),
            _ => Err(super::problems::Refused::NotASwitch {
                name: name.to_string(),
                value: value.to_string_lossy().into_owned(),
            }
            .into()),
        }
    }

    /// Give `name` this value: its first definition takes it, in its place, and any later one goes (nvcc must read
    /// the value set, whichever definition it reads); a new name goes last.
    pub fn set(&mut self, name: impl AsRef<OsStr>, value: impl AsRef<OsStr>) {
        let (name, value) = (name.as_ref().as_bytes(), value.as_ref().as_bytes());
        let var = Var { text: Text::Set([name, b"=", value].concat().into_boxed_slice()), name: name.len() };
        let Some(first) = self.vars.iter().position(|v| v.name() == name) else {
            self.vars.push(var);
            return;
        };
        self.vars[first] = var;
        let mut at = 0;
        self.vars.retain(|v| {
            at += 1;
            at <= first + 1 || v.name() != name
        });
    }

    /// Every variable, in the order nvcc will be given them.
    pub fn iter(&self) -> impl Iterator<Item = (&OsStr, &OsStr)> {
        self.vars.iter().map(|v| (OsStr::from_bytes(v.name()), v.value()))
    }

    /// Every variable as exec takes it, `NAME=VALUE`: the process's own strings as they are, only those the wrapper
    /// set made anew. Fails on a NUL in a value that was set.
    pub fn for_exec(&self) -> Result<Vec<std::borrow::Cow<'static, CStr>>, NulError> {
        use std::borrow::Cow;
        // Pushed into a list of the right size: collecting results would grow it from a few entries, four times.
        let mut strings = Vec::with_capacity(self.vars.len());
        for v in &self.vars {
            strings.push(match &v.text {
                Text::Given(text) => Cow::Borrowed(*text),
                Text::Set(text) => Cow::Owned(CString::new(text.to_vec())?),
            });
        }
        Ok(strings)
    }
}

impl PartialEq for Env {
    fn eq(&self, other: &Env) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Eq for Env {}

impl fmt::Debug for Env {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// An environment made by hand (tests, and the runs `check-reproducible` starts): each pair set in turn.
impl<K: AsRef<OsStr>, V: AsRef<OsStr>> FromIterator<(K, V)> for Env {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut env = Env::default();
        for (name, value) in iter {
            env.set(name, value);
        }
        env
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn given(entries: &[&'static CStr]) -> Env {
        Env { vars: entries.iter().filter_map(|&e| Var::given(e)).collect() }
    }

    #[test]
    fn the_process_environment_is_read_in_place_in_the_callers_order() {
        let env = given(&[c"PATH=/bin", c"HOME=/root", c"malformed", c"=odd=1", c"EMPTY="]);
        let seen: Vec<_> = env.iter().map(|(n, v)| (n.to_str().unwrap(), v.to_str().unwrap())).collect();
        assert_eq!(seen, [("PATH", "/bin"), ("HOME", "/root"), ("=odd", "1"), ("EMPTY", "")]);
        assert_eq!(env.get("EMPTY"), Some(OsStr::new("")));
        assert_eq!(env.non_empty("EMPTY"), None);
        assert_eq!(env.get("PAT"), None);
        let exec = env.for_exec().unwrap();
        assert!(exec.iter().all(|c| matches!(c, std::borrow::Cow::Borrowed(_))), "nothing copied: {exec:?}");
    }

    #[test]
    fn a_name_defined_twice_reads_as_getenv_reads_it_and_setting_it_leaves_one() {
        let mut env = given(&[c"A=first", c"B=b", c"A=second"]);
        assert_eq!(env.get("A"), Some(OsStr::new("first")));
        assert_eq!(env.iter().count(), 3, "passed on as given while unchanged");
        env.set("A", "mine");
        env.set("C", "new");
        let exec: Vec<_> = env.for_exec().unwrap().iter().map(|c| c.to_str().unwrap().to_string()).collect();
        assert_eq!(exec, ["A=mine", "B=b", "C=new"]);
    }

    #[test]
    fn a_value_set_with_a_nul_is_refused_only_when_made_a_c_string() {
        let mut env = Env::default();
        env.set("X", "a\0b");
        assert_eq!(env.get("X"), Some(OsStr::new("a\0b")));
        assert!(env.for_exec().is_err());
    }
}
