//! Taking the user's options out, which happens only under a documented policy (`[gpu] arch-flags = "replace"`, and
//! `-dlto` on a device-LTO compile given `[gpu] capabilities`, which nvcc refuses next to `-gencode`),
//! and the command nvcc then sees. Every token that is not removed reaches nvcc exactly as before, in its place.
//!
//! - argv: the removed tokens are dropped by position.
//! - `NVCC_PREPEND_FLAGS` / `NVCC_APPEND_FLAGS`: the variable is set, for nvcc only, to its remaining tokens joined
//!   by single spaces. nvcc splits these variables at whitespace and keeps quotes inside the token, and the parser
//!   kept each token with its quotes, so splitting the new value gives back exactly the remaining tokens.
//! - An options file named in argv, holding a removed token at any depth: its `-optf FILE` in argv is replaced by
//!   `-optf NEW`, a file the wrapper writes with the remaining tokens of every file that occurrence names (nested
//!   files that lose tokens inlined, the others still named). It stays an options file, not argv, because options
//!   files exist to keep huge command lines (thousands of `-I`) under the kernel's argument limit, and because its
//!   words are split by nvcc's options-file rules: each is written as `args::split::options_file_word` writes it (in
//!   double quotes, backslashes doubled), which is exact since a word read from an options file holds no double
//!   quote. Files the wrapper does not need to touch stay named as they were.
//! - An options file named in an environment channel cannot be inlined there (those channels cannot carry a space
//!   inside a token), so a removal inside one is an error rather than a flag silently kept.

use std::ffi::OsString;
use std::hash::{Hash, Hasher};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;

use super::model::{positions, Changes, Message, Positions, Removal, WrittenFile};
use crate::args::{Channel, Found, Invocation, Role};
use crate::context::vars;
use crate::error::{ErrorKind, Problem, Result};

/// Remove these occurrences, for `why`. Sets the environment channels nvcc will read when one of them changes.
pub fn remove(
    plan: &mut Changes,
    inv: &Invocation,
    found: &[&Found],
    why: impl Message + Clone,
    scratch: &dyn Fn() -> PathBuf,
) -> Result<()> {
    for f in found {
        let positions = inv.positions(f);
        let text: Vec<OsString> = positions.iter().map(|&(c, i)| inv.tokens(c)[i].clone()).collect();
        let why = plan.said(why.clone());
        plan.removed.push(Removal { found: (*f).clone(), positions, tokens: text, why });
    }
    let removed = positions(&plan.removed);
    for (channel, name) in [(Channel::Prepend, vars::NVCC_PREPEND_FLAGS), (Channel::Append, vars::NVCC_APPEND_FLAGS)] {
        for optf in inv.with_role(Role::OptionsFile).filter(|f| f.at.channel == channel) {
            if let Some(file) = files_named_by(inv, optf).into_iter().find(|&i| dirty(inv, &removed, i)) {
                let path = inv.options_files[file].path.clone();
                return Err(Refused::NamedInVariable { path, variable: name }.into());
            }
        }
        if removed.iter().any(|&(c, _)| c == channel) {
            let kept: Vec<&[u8]> = kept(inv, channel, &removed).map(|t| t.as_bytes()).collect();
            plan.set_env(name, OsString::from_vec(kept.join(&b' ')));
        }
    }
    // An `-optf` in argv whose file name came from another channel spans two channels: it cannot be inlined.
    for optf in inv.with_role(Role::OptionsFile).filter(|f| f.at.channel == Channel::Argv) {
        let spans = inv.positions(optf).iter().any(|&(c, _)| c != Channel::Argv);
        if spans && files_named_by(inv, optf).into_iter().any(|i| dirty(inv, &removed, i)) {
            return Err(Refused::SplitAcrossChannels.into());
        }
    }
    // Each `-optf` in argv whose files lose a token gets a new file in their place.
    for optf in inv.with_role(Role::OptionsFile).filter(|f| f.at.channel == Channel::Argv) {
        let files = files_named_by(inv, optf);
        if !files.iter().any(|&f| dirty(inv, &removed, f)) {
            continue;
        }
        let mut contents = Vec::new();
        for word in files.into_iter().flat_map(|f| expand(inv, Channel::OptionsFile(f), &removed)) {
            contents.extend(crate::args::split::options_file_word(word.as_bytes()).expect("an options-file word"));
            contents.push(b'\n');
        }
        let mut hash = std::collections::hash_map::DefaultHasher::new();
        contents.hash(&mut hash);
        let path = scratch().join(format!("{:016x}.optf", hash.finish()));
        plan.written.retain(|w| w.replaces != *optf);
        plan.written.push(WrittenFile { replaces: optf.clone(), path, contents });
    }
    Ok(())
}

/// The tokens of a channel that nvcc will read, less those removed.
pub(super) fn remaining(inv: &Invocation, removals: &[Removal], channel: Channel) -> Vec<OsString> {
    let removed = positions(removals);
    kept(inv, channel, &removed).cloned().collect()
}

fn kept<'a>(inv: &'a Invocation, channel: Channel, removed: &'a Positions) -> impl Iterator<Item = &'a OsString> {
    inv.tokens(channel).iter().enumerate().filter(move |(i, _)| !removed.contains(&(channel, *i))).map(|(_, t)| t)
}

/// The options files an `-optf` occurrence names, in the order nvcc reads them.
fn files_named_by(inv: &Invocation, optf: &Found) -> Vec<usize> {
    (0..inv.options_files.len()).filter(|&i| inv.options_files[i].named_by == optf.at).collect()
}

/// Whether options file `file`, or one it names, loses a token.
fn dirty(inv: &Invocation, removed: &Positions, file: usize) -> bool {
    let channel = Channel::OptionsFile(file);
    removed.iter().any(|&(c, _)| c == channel)
        || (0..inv.options_files.len())
            .any(|i| inv.options_files[i].named_by.channel == channel && dirty(inv, removed, i))
}

/// A channel's tokens with removals dropped and the options files that lose tokens inlined.
fn expand(inv: &Invocation, channel: Channel, removed: &Positions) -> Vec<OsString> {
    let tokens = inv.tokens(channel);
    let optfs: Vec<&Found> = inv.with_role(Role::OptionsFile).filter(|f| f.at.channel == channel).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if removed.contains(&(channel, i)) {
            i += 1;
            continue;
        }
        if let Some(optf) = optfs.iter().find(|f| f.at.index == i) {
            let files = files_named_by(inv, optf);
            if files.iter().any(|&f| dirty(inv, removed, f)) {
                for f in files {
                    out.extend(expand(inv, Channel::OptionsFile(f), removed));
                }
                i += optf.at.tokens;
                continue;
            }
        }
        out.push(tokens[i].clone());
        i += 1;
    }
    out
}

/// Why GPU target options cannot be taken out of an options file, as data: each with a stable code (`Coded`), its
/// words once (`Display`, `help`), and the request's kind (`Problem`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// The options file at `path` is named in `variable` (`NVCC_PREPEND_FLAGS`, `NVCC_APPEND_FLAGS`).
    NamedInVariable { path: std::path::PathBuf, variable: &'static str },
    /// The options file's name is split across channels (argv and a variable).
    SplitAcrossChannels,
}

crate::error::codes!(Refused {
    NamedInVariable => "named-in-variable",
    SplitAcrossChannels => "split-across-channels",
});

/// What avoids rewriting options files altogether.
const RESPECT_OR_APPEND: &str = "set `[gpu] arch-flags = \"respect\"` or \"append\"";

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::NamedInVariable { path, variable } => write!(
                f,
                "cannot remove GPU target options from options file {}: it is named in ${variable}, where the wrapper cannot put its contents",
                crate::error::shell::path(path)
            ),
            Refused::SplitAcrossChannels => f.write_str(
                "cannot remove GPU target options from an options file whose name is split across channels",
            ),
        }
    }
}

impl Problem for Refused {
    fn kind(&self) -> ErrorKind {
        ErrorKind::Request
    }

    /// What to do about it.
    fn help(&self) -> Option<String> {
        Some(match self {
            Refused::NamedInVariable { variable, .. } => {
                format!("name the options file on the command line instead of in ${variable}, or {RESPECT_OR_APPEND}")
            }
            Refused::SplitAcrossChannels => format!("give `-optf FILE` in one place, or {RESPECT_OR_APPEND}"),
        })
    }
}
