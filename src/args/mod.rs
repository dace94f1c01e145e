//! nvcc's command line as the wrapper sees it: a lossless model of what the user gave, and what we recognised in it.
//!
//! nvcc reads `NVCC_PREPEND_FLAGS`, then argv, then `NVCC_APPEND_FLAGS`, expanding options files where they are
//! named. `Invocation` keeps each channel's tokens exactly as given (bytes, order, repetition) and records, for every
//! option from the table it recognised, where it sits and how it was spelled. It never re-spells or drops a token;
//! deciding what to add is `plan`'s job.

pub mod problems;
mod queries;
pub mod split;
pub mod table;

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use crate::context::{vars, Context};
use crate::error::bounded;
use crate::error::Result;
pub use queries::Depfiles;
pub use table::{OptionSpec, Phase, Role};

/// Where a token came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Channel {
    /// `NVCC_PREPEND_FLAGS`.
    Prepend,
    Argv,
    /// `NVCC_APPEND_FLAGS`.
    Append,
    /// The options file at this index of `Invocation::options_files`.
    OptionsFile(usize),
}

impl Channel {
    /// Where the channel is, for messages.
    pub fn place(self, inv: &Invocation) -> Place {
        match self {
            Channel::Prepend => Place::Var(vars::NVCC_PREPEND_FLAGS),
            Channel::Argv => Place::CommandLine,
            Channel::Append => Place::Var(vars::NVCC_APPEND_FLAGS),
            Channel::OptionsFile(i) => Place::OptionsFile(inv.options_files[i].path.clone()),
        }
    }
}

/// Where the user gave an option, for messages: `the command line`, `$NVCC_APPEND_FLAGS`, `options file PATH`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    CommandLine,
    Var(&'static str),
    OptionsFile(PathBuf),
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Place::CommandLine => f.write_str("the command line"),
            Place::Var(var) => write!(f, "${var}"),
            Place::OptionsFile(path) => write!(f, "options file {}", crate::error::shell::path(path)),
        }
    }
}

/// Options the user gave, as found (`Invocation::given`), said as `` `-arch sm_80` in the command line,
/// `-gencode=...` in $NVCC_APPEND_FLAGS ``: kept as what they are, and rendered only when shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Given(Vec<(table::Spelled, Option<OsString>, Place)>);

impl std::fmt::Display for Given {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, (spelling, value, place)) in self.0.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            match value {
                Some(value) => write!(f, "{sep}`{spelling} {}` in {place}", value.to_string_lossy())?,
                None => write!(f, "{sep}`{spelling}` in {place}")?,
            }
        }
        Ok(())
    }
}

/// The position of a recognised option: its channel, the index of its first token, and how many tokens it spans
/// (1 for `-ccbin=g++`, 2 for `-ccbin g++`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Location {
    pub channel: Channel,
    pub index: usize,
    pub tokens: usize,
}

/// One recognised option occurrence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub spec: &'static OptionSpec,
    /// The option name as the user wrote it (`-ccbin`, `--compiler-bindir`).
    pub spelling: table::Spelled,
    pub value: Option<OsString>,
    pub at: Location,
}

/// An options file read while parsing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionsFile {
    /// As named on the command line.
    pub named: OsString,
    /// Resolved against the working directory.
    pub path: PathBuf,
    pub tokens: Vec<OsString>,
    /// Where the `-optf` option that named it is (a file named inside another file: that file's channel).
    pub named_by: Location,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Invocation {
    pub argv: Vec<OsString>,
    pub prepend: Vec<OsString>,
    pub append: Vec<OsString>,
    /// `NVCC_CCBIN`, when set and not empty: nvcc's default host compiler (13.x; ignored by 11.8).
    pub ccbin_env: Option<OsString>,
    pub options_files: Vec<OptionsFile>,
    /// Every recognised option, in the order nvcc reads them.
    pub found: Vec<Found>,
    /// Tokens that are not options: input files.
    pub inputs: Vec<OsString>,
    /// Why the wrapper could not fully understand this command line (an option missing its value, say). When not
    /// empty, the wrapper adds nothing and lets nvcc report the problem in its own words.
    pub not_understood: Vec<String>,
    /// What the user must hear even though nvcc may well run the command line as given: an options file the wrapper
    /// does not read (a pipe, a FIFO, one past the size limit), so that nothing the config asks for is applied.
    pub warnings: Vec<Unread>,
}

/// An options file the wrapper leaves to nvcc, and so applies nothing to the call: what the user is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unread {
    /// A pipe, FIFO or device: only nvcc may read it.
    NotRegular { file: String },
    /// Too large, or no longer a regular file when opened.
    Refused { file: String, why: String },
}

impl std::fmt::Display for Unread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unread::NotRegular { file } => write!(
                f,
                "options file {file} is not a regular file (a pipe, a FIFO or a device), which only nvcc may read: the wrapper adds nothing to this call and applies none of its settings (host compiler, GPU targets, `arch-flags`); write the options to a regular file to have them applied"
            ),
            Unread::Refused { file, why } => write!(
                f,
                "options file {file} is not read ({why}): the wrapper adds nothing to this call and applies none of its settings (host compiler, GPU targets, `arch-flags`)"
            ),
        }
    }
}

/// A host compiler the user chose, and through which channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostCompilerGiven<'a> {
    Option(&'a Found),
    /// `NVCC_CCBIN`.
    Env(&'a OsStr),
}

impl Invocation {
    /// Parse `argv` (the process's, or `nvcc-wrapper explain -- ARGS`) with nvcc's environment channels, as nvcc
    /// would see the command line. Reads options files; nothing else touches the OS.
    pub fn parse_args(ctx: &Context, argv: Vec<OsString>) -> Result<Invocation> {
        let mut not_understood = Vec::new();
        let mut channel = |name| {
            let Some(value) = ctx.env.get(name) else { return Vec::new() };
            let split = split::env_flags(value.as_bytes());
            if let Some(error) = split.error {
                not_understood.push(format!("${name}: {error}, which nvcc refuses"));
            }
            split.words.into_iter().map(OsString::from_vec).collect()
        };
        let mut inv = Invocation {
            prepend: channel(vars::NVCC_PREPEND_FLAGS),
            append: channel(vars::NVCC_APPEND_FLAGS),
            argv,
            ccbin_env: ctx.env.non_empty(vars::NVCC_CCBIN).map(OsStr::to_os_string),
            not_understood,
            ..Invocation::default()
        };
        // nvcc reads the three channels as one list: a value may even follow its option across a channel boundary.
        let stream: Vec<(Channel, usize, OsString)> =
            [(Channel::Prepend, &inv.prepend), (Channel::Argv, &inv.argv), (Channel::Append, &inv.append)]
                .into_iter()
                .flat_map(|(channel, tokens)| tokens.iter().enumerate().map(move |(i, t)| (channel, i, t.clone())))
                .collect();
        Scanner { cwd: &ctx.cwd, open: Vec::new(), budget: bounded::OPTIONS_FILES_PER_CALL }.scan(&mut inv, stream)?;
        Ok(inv)
    }

    /// Options with this role, in order.
    pub fn with_role(&self, role: Role) -> impl Iterator<Item = &Found> {
        self.found.iter().filter(move |f| f.spec.role == role)
    }

    /// The host compiler the user gave: the last `-ccbin`/`--compiler-bindir` (nvcc uses the last value), else
    /// `NVCC_CCBIN`.
    pub fn host_compiler(&self) -> Option<HostCompilerGiven<'_>> {
        self.with_role(Role::HostCompiler)
            .last()
            .map(HostCompilerGiven::Option)
            .or(self.ccbin_env.as_deref().map(HostCompilerGiven::Env))
    }

    /// Every GPU target option (`-arch`, `-code`, `-gencode` in any spelling or channel).
    pub fn gpu_targets(&self) -> impl Iterator<Item = &Found> {
        self.found.iter().filter(|f| matches!(f.spec.role, Role::GpuTarget(_)))
    }

    pub fn target_directory(&self) -> Option<&Found> {
        self.with_role(Role::TargetDirectory).last()
    }

    /// `--version`, `--help`, `--list-gpu-arch`, `--list-gpu-code`: nvcc prints and exits; nothing may be added.
    pub fn query_only(&self) -> Option<&Found> {
        self.with_role(Role::Query).next()
    }

    pub fn allows_unsupported_compiler(&self) -> bool {
        self.with_role(Role::AllowUnsupportedCompiler).next().is_some()
    }

    /// The phase nvcc will run to (the last phase option; compile-and-link when there is none).
    pub fn phase(&self) -> Phase {
        self.found
            .iter()
            .filter_map(|f| match f.spec.role {
                Role::Phase(p) => Some(p),
                _ => None,
            })
            .next_back()
            .unwrap_or(Phase::Link)
    }

    /// The last phase option (`-c`, `-ptx`, `-dlink` ...), if any: `phase()` says what it means, the spec which one.
    pub fn phase_option(&self) -> Option<&Found> {
        self.found.iter().rfind(|f| matches!(f.spec.role, Role::Phase(_)))
    }

    /// Every token position an occurrence spans. Usually `at.tokens` tokens from `at.index` in its channel; but a
    /// value may follow its option across a channel boundary (`NVCC_PREPEND_FLAGS=-arch` then `sm_80` in argv),
    /// and then the value is the first token of the next non-empty channel in nvcc's reading order.
    pub fn positions(&self, found: &Found) -> Vec<(Channel, usize)> {
        let at = found.at;
        let mut positions: Vec<(Channel, usize)> = (at.index..at.index + at.tokens).map(|i| (at.channel, i)).collect();
        // The scanner takes the next token as the value exactly when the whole token, with no `=`, is an option.
        let token = self.tokens(at.channel)[at.index].as_bytes();
        let separate_value =
            found.value.is_some() && at.tokens == 1 && !token.contains(&b'=') && table::lookup(token).is_some();
        if separate_value {
            const ORDER: [Channel; 3] = [Channel::Prepend, Channel::Argv, Channel::Append];
            let next = ORDER
                .iter()
                .skip_while(|c| **c != at.channel)
                .skip(1)
                .find(|c| !self.tokens(**c).is_empty())
                .map(|c| (*c, 0));
            positions.extend(next);
        }
        positions
    }

    /// The tokens of one channel.
    pub fn tokens(&self, channel: Channel) -> &[OsString] {
        match channel {
            Channel::Prepend => &self.prepend,
            Channel::Argv => &self.argv,
            Channel::Append => &self.append,
            Channel::OptionsFile(i) => &self.options_files[i].tokens,
        }
    }
}

/// How many options files nvcc keeps open at once: measured on 13.0.88, a 16th nested one fails with "Too many options
/// file opened". The wrapper reads no deeper (a chain of thousands would otherwise overflow its stack) and leaves
/// such a command line to nvcc.
pub const MAX_OPTIONS_FILE_DEPTH: usize = 15;

/// Walks a token stream, recording what it recognises and descending into options files.
struct Scanner<'a> {
    cwd: &'a Path,
    /// The chain of options files being read (device and inode, and the path as named), to refuse one that
    /// includes itself under any name.
    open: Vec<((u64, u64), PathBuf)>,
    /// How many more bytes of options files this call may read (`bounded::OPTIONS_FILES_PER_CALL` in all).
    budget: u64,
}

impl Scanner<'_> {
    fn scan(&mut self, inv: &mut Invocation, stream: Vec<(Channel, usize, OsString)>) -> Result<()> {
        let mut i = 0;
        while i < stream.len() {
            let (channel, index, ref token) = stream[i];
            i += 1;
            let bytes = token.as_bytes();
            if bytes.len() < 2 || bytes[0] != b'-' {
                inv.inputs.push(token.clone());
                continue;
            }
            let (name, glued) = match bytes.iter().position(|&b| b == b'=') {
                Some(eq) => (&bytes[..eq], Some(&bytes[eq + 1..])),
                None => (bytes, None),
            };
            let at = |tokens| Location { channel, index, tokens };
            let found = if let Some((spec, spelling)) = table::lookup(name) {
                let spelling = spec.spelled(spelling);
                match (spec.arity, glued) {
                    (table::Arity::Flag, Some(_)) => {
                        // nvcc rejects `--dryrun=x`; leave that to it.
                        inv.not_understood.push(format!("`{}` takes no value", token.to_string_lossy()));
                        continue;
                    }
                    (table::Arity::Flag, None) => Found { spec, spelling, value: None, at: at(1) },
                    (_, Some(value)) => Found { spec, spelling, value: Some(os(value)), at: at(1) },
                    (_, None) => match stream.get(i) {
                        Some((next_channel, _, value)) => {
                            i += 1;
                            let tokens = if *next_channel == channel { 2 } else { 1 };
                            Found { spec, spelling, value: Some(value.clone()), at: at(tokens) }
                        }
                        None => {
                            inv.not_understood.push(format!("`{spelling}` at the end has no value"));
                            continue;
                        }
                    },
                }
            } else if let Some((spec, value)) = table::lookup_joined(bytes) {
                Found { spec, spelling: spec.spelled(table::Spelling::Short), value: Some(os(value)), at: at(1) }
            } else {
                // Unknown to us: it passes through untouched, and nvcc judges it.
                continue;
            };
            let optf = (found.spec.role == Role::OptionsFile).then(|| found.clone());
            inv.found.push(found);
            if let Some(optf) = optf {
                self.read_options_files(inv, &optf)?;
            }
        }
        Ok(())
    }

    /// `-optf a,b` names two files; each is read and scanned where it is named.
    fn read_options_files(&mut self, inv: &mut Invocation, optf: &Found) -> Result<()> {
        let value = optf.value.as_deref().unwrap_or_default();
        let names = split::option_list(value.as_bytes());
        if let Some(error) = names.error {
            let shown = crate::error::shell::display([value]);
            inv.not_understood.push(format!("the options file list {shown}: {error}, which nvcc refuses"));
            return Ok(());
        }
        for named in names.words {
            let named = OsString::from_vec(named);
            let path = self.cwd.join(&named);
            let where_named = format!(
                "`{} {}` in {}",
                optf.spelling,
                crate::error::shell::display([value]),
                optf.at.channel.place(inv)
            );
            // A pipe (`-optf <(...)`), `/dev/stdin` or a FIFO can be read once, and only nvcc may read it: opening a
            // FIFO would even wait for a writer. Such a file is left to nvcc and the command line to nvcc's judgement,
            // and the user hears that the wrapper therefore applies nothing.
            if std::fs::metadata(&path).is_ok_and(|m| !m.is_file()) {
                let shown = crate::error::shell::path(&path);
                inv.not_understood.push(format!(
                    "options file {shown} is not a regular file (a pipe, a device or a directory): nvcc reads it itself"
                ));
                inv.warnings.push(Unread::NotRegular { file: shown });
                continue;
            }
            if self.open.len() >= MAX_OPTIONS_FILE_DEPTH {
                inv.not_understood.push(format!(
                    "options files are nested deeper than the {MAX_OPTIONS_FILE_DEPTH} nvcc reads ({} is one more)",
                    crate::error::shell::path(&path)
                ));
                return Ok(());
            }
            let (text, meta) = match bounded::read_with_metadata(&path, bounded::OPTIONS_FILE.min(self.budget)) {
                Ok(read) => read,
                // Too large to read here, or no longer a regular file: nvcc reads it, as it reads a pipe.
                Err(refused @ (bounded::Refused::TooLarge { .. } | bounded::Refused::NotRegular(_))) => {
                    let shown = crate::error::shell::path(&path);
                    let why = match refused {
                        bounded::Refused::TooLarge { .. } if self.budget < bounded::OPTIONS_FILE => format!(
                            "the options files of this call hold more than {}, the most the wrapper reads",
                            bounded::size(bounded::OPTIONS_FILES_PER_CALL)
                        ),
                        other => other.to_string(),
                    };
                    inv.not_understood.push(format!("options file {shown}: {why}: nvcc reads it itself"));
                    inv.warnings.push(Unread::Refused { file: shown, why });
                    continue;
                }
                Err(e) => {
                    let (named_by, why) = (where_named.to_string(), e.to_string());
                    return Err(problems::Refused::Unreadable { path, named_by, why }.into());
                }
            };
            self.budget -= text.len() as u64;
            let identity = {
                use std::os::unix::fs::MetadataExt;
                (meta.dev(), meta.ino())
            };
            if self.open.iter().any(|(id, _)| *id == identity) {
                let chain = self.open.iter().map(|(_, p)| p).chain([&path]).cloned().collect();
                return Err(problems::Refused::IncludesItself { path, chain }.into());
            }
            let words = split::options_file(&text);
            if let Some(error) = words.error {
                inv.not_understood
                    .push(format!("options file {}: {error}, which nvcc refuses", crate::error::shell::path(&path)));
            }
            let tokens: Vec<OsString> = words.words.into_iter().map(OsString::from_vec).collect();
            let file_index = inv.options_files.len();
            self.open.push((identity, path.clone()));
            inv.options_files.push(OptionsFile { named, path, tokens: tokens.clone(), named_by: optf.at });
            let channel = Channel::OptionsFile(file_index);
            self.scan(inv, tokens.into_iter().enumerate().map(|(i, t)| (channel, i, t)).collect())?;
            self.open.pop();
        }
        Ok(())
    }
}

fn os(bytes: &[u8]) -> OsString {
    OsString::from_vec(bytes.to_vec())
}

#[cfg(test)]
mod tests;
