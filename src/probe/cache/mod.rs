//! The probe cache: what probing a compiler or nvcc found, kept on disk so that the next call (a build makes
//! thousands) runs nothing, as ccache keeps its compiler check. One file per probed program and kind of probe, in a
//! directory the caller chooses (`prepare` reads the environment for it).
//!
//! An entry is keyed by the program's path as probed, its canonical path, and the size, modification and change
//! times, device and inode of the file it resolves to, all taken before the probe runs: a compiler replaced in place
//! or by a new file, or a link pointed elsewhere, no longer matches and is probed again (and a file replaced while
//! it is probed is probed again on the next call). The path as probed is part of the key because one program may
//! answer differently by name (`g++` and `clang++` links to one ccache binary). A file changed in the last
//! `TOO_NEW` is probed but not kept, since a second change within the same clock tick would not show in its times.
//!
//! A probe that fails because of the program (it failed, answered something else, hung or flooded its output) is
//! kept too, as a failure, for `FAILURE_LIFETIME` under the same key: a hung compiler then costs one `TIME_LIMIT`
//! every few minutes, not one on every call of a build, and a program fixed or replaced is tried again at once (its
//! key changed). A failure to start the program at all (no memory, no process slot) is never kept.
//!
//! Entries are written to a temporary file and renamed into place, so a reader sees a whole entry or none, and read
//! without locks, through `bounded` (an entry that is a FIFO, a device or larger than `bounded::CACHE_ENTRY` is a
//! miss, never a hang). A missing, unreadable, truncated, corrupt or foreign entry, or a directory that cannot be
//! written, never fails a call or changes its result: the program is probed as if there were no cache, and the debug
//! log says why. Entries not written for `ENTRY_LIFETIME` are removed (`evict`), so the directory stays small.
//! Nothing here runs a program; the caller hands over the probe to run on a miss.

pub mod evict;

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use tracing::debug;

/// The first line of every entry. A different line (another format, or another release of the wrapper, whose probes
/// may read outputs differently) makes the entry foreign: probed again and overwritten.
const HEADER: &str = concat!("nvcc-wrapper probe cache 1 (nvcc-wrapper ", env!("CARGO_PKG_VERSION"), ")");

/// A file modified this recently is not cached (see the module header).
const TOO_NEW: Duration = Duration::from_secs(2);

/// How long a kept failure is used before the program is probed again.
pub const FAILURE_LIFETIME: Duration = Duration::from_secs(5 * 60);

/// Entries not written for this long are removed when the directory is next swept (at most once a day).
pub const ENTRY_LIFETIME: Duration = Duration::from_secs(30 * 24 * 3600);

/// Why a probe failed, as the cache hands it back: what to say, and whether to keep it.
pub trait Failed: Sized {
    /// What went wrong, as a message.
    fn message(&self) -> String;
    /// Whether the failure is the program's (kept for `FAILURE_LIFETIME`), not the system's.
    fn keep(&self) -> bool;
    /// Whether the program had to be stopped (it hung, or flooded its output).
    fn stopped(&self) -> bool;
    /// The failure as read back from an entry written `age` ago.
    fn remembered(message: String, stopped: bool, age: Duration) -> Self;
}

/// A probe's failure with what the cache needs to know about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub message: String,
    pub keep: bool,
    pub stopped: bool,
    /// Set when the failure was read from the cache: how long ago it happened.
    pub remembered: Option<Duration>,
}

impl Failed for Failure {
    fn message(&self) -> String {
        self.message.clone()
    }

    fn keep(&self) -> bool {
        self.keep
    }

    fn stopped(&self) -> bool {
        self.stopped
    }

    fn remembered(message: String, stopped: bool, age: Duration) -> Self {
        Failure { message, keep: false, stopped, remembered: Some(age) }
    }
}

/// A bare message is never kept.
impl Failed for String {
    fn message(&self) -> String {
        self.clone()
    }

    fn keep(&self) -> bool {
        false
    }

    fn stopped(&self) -> bool {
        false
    }

    fn remembered(message: String, _: bool, _: Duration) -> Self {
        message
    }
}

/// Where entries live, or why there is no cache: known when made, or found on first use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeCache {
    dir: std::cell::OnceCell<Result<PathBuf, String>>,
    /// Where to look on first use: (a directory that must exist, the cache's directory then), the first that exists
    /// wins; else there is no cache, for the reason given.
    first_existing: Vec<(PathBuf, PathBuf)>,
    otherwise: &'static str,
}

/// A probe's answer that can be kept: written as `name value` lines and read back.
pub trait Entry: Sized {
    /// The kind of probe, part of the entry's file name (`compiler`, `libstdcxx`, `nvcc`).
    const KIND: &'static str;
    fn fields(&self) -> Vec<(&'static str, Vec<u8>)>;
    /// `None` when a field is missing or unreadable: the entry is then probed again.
    fn from_fields(fields: &BTreeMap<String, Vec<u8>>) -> Option<Self>;
}

/// Why a cached answer was not used.
#[derive(Debug)]
enum Miss {
    Absent,
    Unreadable(io::Error),
    Truncated,
    Corrupt,
    Foreign(String),
    Changed,
    Undecodable,
    /// A kept failure older than `FAILURE_LIFETIME`.
    Expired,
}

impl fmt::Display for Miss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Miss::Absent => f.write_str("no entry"),
            Miss::Unreadable(e) => write!(f, "the entry cannot be read ({e})"),
            Miss::Truncated => f.write_str("the entry is truncated"),
            Miss::Corrupt => f.write_str("the entry is corrupt (its checksum does not match)"),
            Miss::Foreign(header) => write!(f, "the entry was written by another version ({header:?})"),
            Miss::Changed => f.write_str("the file changed since it was probed (path, size, times or inode)"),
            Miss::Undecodable => f.write_str("the entry's values cannot be read"),
            Miss::Expired => write!(f, "the failure it keeps is older than {} s", FAILURE_LIFETIME.as_secs()),
        }
    }
}

impl ProbeCache {
    /// A cache in `dir` (created on the first write).
    pub fn at(dir: PathBuf) -> ProbeCache {
        ProbeCache { dir: Ok(dir).into(), first_existing: Vec::new(), otherwise: "" }
    }

    /// No cache; `why` is said in the debug log whenever a probe runs.
    pub fn off(why: impl Into<String>) -> ProbeCache {
        ProbeCache { dir: Err(why.into()).into(), first_existing: Vec::new(), otherwise: "" }
    }

    /// A cache in the second path of the first pair whose first path is a directory, looked for when a probe first
    /// needs the cache: a call that probes nothing (a config that records everything) looks at nothing. Without one
    /// there is no cache, for the reason `otherwise` says.
    pub fn in_first_existing(candidates: Vec<(PathBuf, PathBuf)>, otherwise: &'static str) -> ProbeCache {
        ProbeCache { dir: std::cell::OnceCell::new(), first_existing: candidates, otherwise }
    }

    /// Where entries live, found on first use.
    fn place(&self) -> &Result<PathBuf, String> {
        self.dir.get_or_init(|| {
            let found = self.first_existing.iter().find(|(dir, _)| dir.is_dir());
            found.map(|(_, cache)| cache.clone()).ok_or_else(|| self.otherwise.to_string())
        })
    }

    #[cfg(test)]
    pub fn dir(&self) -> Option<&Path> {
        self.place().as_deref().ok()
    }

    /// What `probe` finds for the program at `program`: the kept answer while the file is the one it was found for,
    /// else `probe`'s, kept for next time. The flag says whether the answer came from the cache. `probe`'s errors are
    /// returned as they are, and kept for `FAILURE_LIFETIME` when `Failed::keep` says so.
    pub fn get_or_probe<T: Entry, E: Failed>(
        &self,
        program: &Path,
        probe: impl FnOnce() -> Result<T, E>,
    ) -> Result<(T, bool), E> {
        let dir = match self.place() {
            Ok(dir) => dir,
            Err(why) => {
                debug!("probe cache off ({why}): probing {} {}", T::KIND, crate::error::shell::path(program));
                return probe().map(|v| (v, false));
            }
        };
        let key = match Key::of(T::KIND, program) {
            Ok(key) => key,
            Err(e) => {
                debug!(
                    "probe cache: cannot identify {} ({e}): probing {} without the cache",
                    crate::error::shell::path(program),
                    T::KIND
                );
                return probe().map(|v| (v, false));
            }
        };
        let file = dir.join(entry_name(T::KIND, program));
        match read(&file, &key) {
            Ok(Ok(value)) => {
                debug!(
                    "probe cache: {} {} from {}",
                    T::KIND,
                    crate::error::shell::path(program),
                    crate::error::shell::path(&file)
                );
                return Ok((value, true));
            }
            Ok(Err(kept)) => {
                debug!(
                    "probe cache: {} {}: a failure kept in {}",
                    T::KIND,
                    crate::error::shell::path(program),
                    crate::error::shell::path(&file)
                );
                return Err(E::remembered(kept.message, kept.stopped, kept.age));
            }
            Err(miss) => debug!("probe cache: {} {}: {miss}: probing it", T::KIND, crate::error::shell::path(program)),
        }
        let found = probe();
        let fields = match &found {
            Ok(value) => value.fields(),
            Err(failed) if failed.keep() => failure_fields(&failed.message(), failed.stopped()),
            Err(_) => return found.map(|v| (v, false)),
        };
        if key.too_new() {
            debug!("probe cache: {} changed in the last {TOO_NEW:?}: not kept", crate::error::shell::path(program));
        } else if let Err(e) = write(dir, &file, &encode(&key, fields)) {
            debug!("probe cache: cannot write {} ({e}): the answer is not kept", crate::error::shell::path(&file));
        } else {
            evict::now_and_then(dir, &PROBE_CACHE);
        }
        found.map(|v| (v, false))
    }
}

/// What the probe cache's sweep removes: entries (`KIND-HASH`) not written for `ENTRY_LIFETIME`, and temporary files
/// left by a wrapper that was killed while writing one.
pub static PROBE_CACHE: evict::Rules = evict::Rules {
    keep: ENTRY_LIFETIME,
    is_entry: |name| {
        name.split_once('-').is_some_and(|(kind, hash)| {
            !kind.is_empty()
                && kind.bytes().all(|b| b.is_ascii_lowercase())
                && hash.len() == 16
                && hash.bytes().all(|b| b.is_ascii_hexdigit())
        })
    },
    is_temporary: |name| name.starts_with('.') && name.ends_with(".tmp"),
};

/// The fields of a kept failure: its message, whether the program was stopped, and when it failed.
fn failure_fields(message: &str, stopped: bool) -> Vec<(&'static str, Vec<u8>)> {
    let at = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    vec![
        ("failed", message.as_bytes().to_vec()),
        ("stopped", if stopped { b"1".to_vec() } else { b"0".to_vec() }),
        ("at", at.to_string().into_bytes()),
    ]
}

/// A failure read back from an entry.
struct Kept {
    message: String,
    stopped: bool,
    age: Duration,
}

/// What identifies the probed file, as it is written in the entry.
struct Key {
    bytes: Vec<u8>,
    modified: SystemTime,
}

impl Key {
    fn of(kind: &str, program: &Path) -> io::Result<Key> {
        let meta = fs::metadata(program)?;
        let canonical = fs::canonicalize(program)?;
        let mut bytes = Vec::new();
        line(&mut bytes, "kind", kind.as_bytes());
        line(&mut bytes, "path", program.as_os_str().as_bytes());
        line(&mut bytes, "canonical", canonical.as_os_str().as_bytes());
        line(&mut bytes, "size", meta.size().to_string().as_bytes());
        line(&mut bytes, "mtime", format!("{}.{:09}", meta.mtime(), meta.mtime_nsec()).as_bytes());
        line(&mut bytes, "ctime", format!("{}.{:09}", meta.ctime(), meta.ctime_nsec()).as_bytes());
        line(&mut bytes, "file", format!("{}:{}", meta.dev(), meta.ino()).as_bytes());
        Ok(Key { bytes, modified: meta.modified()? })
    }

    fn too_new(&self) -> bool {
        SystemTime::now().duration_since(self.modified).map_or(true, |age| age < TOO_NEW)
    }
}

/// `KIND-HASH`: one entry per kind of probe and program path, so a changed program overwrites its own entry.
fn entry_name(kind: &str, program: &Path) -> String {
    let mut hashed = kind.as_bytes().to_vec();
    hashed.push(0);
    hashed.extend(program.as_os_str().as_bytes());
    format!("{kind}-{:016x}", fnv1a(&hashed))
}

/// FNV-1a, 64 bits: file names and checksums that stay the same across Rust releases (std's hasher may not).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// `name value\n`, the value's backslashes and newlines escaped so that any path fits on one line.
fn line(out: &mut Vec<u8>, name: &str, value: &[u8]) {
    out.extend(name.as_bytes());
    out.push(b' ');
    for &b in value {
        match b {
            b'\\' => out.extend(b"\\\\"),
            b'\n' => out.extend(b"\\n"),
            _ => out.push(b),
        }
    }
    out.push(b'\n');
}

fn unescape(value: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(value.len());
    let mut bytes = value.iter().copied();
    while let Some(b) = bytes.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        match bytes.next()? {
            b'\\' => out.push(b'\\'),
            b'n' => out.push(b'\n'),
            _ => return None,
        }
    }
    Some(out)
}

/// The whole entry: header, key, values (an answer's, or a kept failure's), and a checksum line over all of it.
fn encode(key: &Key, fields: Vec<(&'static str, Vec<u8>)>) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend(HEADER.as_bytes());
    out.push(b'\n');
    out.extend(&key.bytes);
    for (name, bytes) in fields {
        line(&mut out, name, &bytes);
    }
    let check = format!("check {:016x}\n", fnv1a(&out));
    out.extend(check.as_bytes());
    out
}

/// The answer an entry keeps, or the failure it keeps, or why it cannot be used.
fn read<T: Entry>(file: &Path, key: &Key) -> Result<Result<T, Kept>, Miss> {
    let bytes = match crate::error::bounded::read(file, crate::error::bounded::CACHE_ENTRY) {
        Ok(bytes) => bytes,
        Err(refused) if refused.not_found() => return Err(Miss::Absent),
        Err(refused) => return Err(Miss::Unreadable(refused.into())),
    };
    // The last line is `check <16 hex digits>\n`; anything shorter was cut off.
    let body = bytes.strip_suffix(b"\n").ok_or(Miss::Truncated)?;
    let at = body.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let check = body[at..].strip_prefix(b"check ").filter(|c| c.len() == 16).ok_or(Miss::Truncated)?;
    let check = std::str::from_utf8(check).ok().and_then(|c| u64::from_str_radix(c, 16).ok()).ok_or(Miss::Corrupt)?;
    let content = &bytes[..at];
    if fnv1a(content) != check {
        return Err(Miss::Corrupt);
    }
    let header_end = content.iter().position(|&b| b == b'\n').ok_or(Miss::Corrupt)?;
    let header = &content[..header_end];
    if header != HEADER.as_bytes() {
        return Err(Miss::Foreign(String::from_utf8_lossy(header).into_owned()));
    }
    let values = content[header_end + 1..].strip_prefix(&key.bytes[..]).ok_or(Miss::Changed)?;
    let mut fields = BTreeMap::new();
    for line in values.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let space = line.iter().position(|&b| b == b' ').ok_or(Miss::Undecodable)?;
        let name = String::from_utf8(line[..space].to_vec()).map_err(|_| Miss::Undecodable)?;
        fields.insert(name, unescape(&line[space + 1..]).ok_or(Miss::Undecodable)?);
    }
    if let Some(message) = text_field(&fields, "failed") {
        let at = text_field(&fields, "at").and_then(|a| a.parse::<u64>().ok()).ok_or(Miss::Undecodable)?;
        let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        // A failure from the future (a clock set back) is as stale as an old one.
        let age = Duration::from_secs(now.checked_sub(at).ok_or(Miss::Expired)?);
        if age >= FAILURE_LIFETIME {
            return Err(Miss::Expired);
        }
        let stopped = fields.get("stopped").is_some_and(|s| s == b"1");
        return Ok(Err(Kept { message, stopped, age }));
    }
    T::from_fields(&fields).map(Ok).ok_or(Miss::Undecodable)
}

/// Write `bytes` to `file` in `dir` atomically: a temporary file in the same directory, renamed over the entry (a
/// FIFO or a link put there in its place included). The temporary file is removed when that fails.
fn write(dir: &Path, file: &Path, bytes: &[u8]) -> io::Result<()> {
    fs::create_dir_all(dir)?;
    let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let temp = dir.join(format!(".{name}.{}.{nanos}.tmp", std::process::id()));
    // A new file only (`O_EXCL`): whatever else is found under that name (a FIFO, a link) is not written through.
    let written = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp)
        .and_then(|mut f| io::Write::write_all(&mut f, bytes))
        .and_then(|()| fs::rename(&temp, file));
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    written
}

/// A field as text, for `Entry::from_fields`.
pub fn text_field(fields: &BTreeMap<String, Vec<u8>>, name: &str) -> Option<String> {
    String::from_utf8(fields.get(name)?.clone()).ok()
}

/// A field as a path, for `Entry::from_fields`.
pub fn path_field(fields: &BTreeMap<String, Vec<u8>>, name: &str) -> Option<PathBuf> {
    Some(PathBuf::from(std::ffi::OsStr::from_bytes(fields.get(name)?)))
}

#[cfg(test)]
mod tests;
