//! Reading a file the wrapper did not write, safely: every file it opens (the config, compatibility tables, options
//! files, probe cache entries, rewritten options files, a toolkit's `version.json`) goes through here.
//!
//! A file must be a regular file: that is checked before it is opened (a FIFO is never opened, so a writer waiting on
//! it is not disturbed), it is opened without blocking (`O_NONBLOCK`: opening a FIFO with no writer, or a device such
//! as a terminal, would otherwise wait forever) and checked again with `fstat` on the open descriptor (it may have
//! been swapped in between), and it is read to a limit: a file larger than the limit is refused before a
//! byte is read, and one that grows past it while being read is refused too (`/dev/zero` would otherwise be read
//! until memory runs out). `/dev/null` reads as an empty file, as `GIT_CONFIG=/dev/null` does for git.
//!
//! This module reads files and nothing else; each caller decides what a refusal means (an error, a cache miss, an
//! options file left to nvcc).

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

/// The largest config file the wrapper reads. Real ones are a few hundred bytes; past this it is an error (78).
pub const CONFIG: u64 = 1 << 20;
/// The largest compatibility table (`compat-data`) the wrapper reads: the built-in ones are a few KiB.
pub const TABLE: u64 = 4 << 20;
/// The largest options file the wrapper reads, and the most it reads from all the options files of one call. A
/// list of ten thousand `-I` paths is about a MiB; a larger one is left to nvcc unread (the wrapper adds nothing).
pub const OPTIONS_FILE: u64 = 16 << 20;
pub const OPTIONS_FILES_PER_CALL: u64 = 64 << 20;
/// The largest probe cache entry the wrapper reads: entries it writes are under 1 KiB; a larger one is corrupt.
pub const CACHE_ENTRY: u64 = 64 << 10;
/// The largest `version.json` the wrapper reads: NVIDIA's are about 3 KiB. A larger one is ignored.
pub const VERSION_FILE: u64 = 1 << 20;
/// The largest header `compat scan` reads (`crt/host_config.h` is about 12 KiB).
pub const HEADER: u64 = 16 << 20;
/// The largest dependency file the wrapper completes: nvcc's list a translation unit's headers, tens of KiB for a
/// large one. A larger one is left as nvcc wrote it.
pub const DEPFILE: u64 = 64 << 20;
/// The largest ELF file `doctor` scans for `GLIBCXX_` versions (a libstdc++ is a few MiB, a program may be more).
pub const ELF: u64 = 1 << 30;

/// Why a file was not read.
#[derive(Debug)]
pub enum Refused {
    /// It could not be opened or read (missing, no permission, a read error).
    Io(io::Error),
    /// It is not a regular file; the words say what it is (`a FIFO`, `a character device`, `a directory`).
    NotRegular(&'static str),
    /// It holds more than `limit` bytes.
    TooLarge { limit: u64 },
}

impl Refused {
    /// Whether the file does not exist.
    pub fn not_found(&self) -> bool {
        matches!(self, Refused::Io(e) if e.kind() == io::ErrorKind::NotFound)
    }
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Io(e) => write!(f, "{e}"),
            Refused::NotRegular(what) => write!(f, "it is {what}, not a regular file"),
            Refused::TooLarge { limit } => write!(f, "it is larger than {}, the most the wrapper reads", size(*limit)),
        }
    }
}

impl std::error::Error for Refused {}

impl From<Refused> for io::Error {
    fn from(refused: Refused) -> io::Error {
        match refused {
            Refused::Io(e) => e,
            other => io::Error::new(io::ErrorKind::InvalidData, other.to_string()),
        }
    }
}

/// `1 MiB`, `64 KiB`, `100 bytes`: a limit as the documentation writes it.
pub fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 && b % (1 << 30) == 0 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

/// A file's bytes, and its metadata from the descriptor they were read through.
pub fn read_with_metadata(path: &Path, limit: u64) -> Result<(Vec<u8>, std::fs::Metadata), Refused> {
    // Looked at before it is opened: opening a FIFO, even without blocking, would let a writer waiting on the other
    // end go ahead and then lose its reader (SIGPIPE) when the wrapper closes it, where nvcc may be the reader meant.
    let before = std::fs::metadata(path).map_err(Refused::Io)?;
    if let (Some(what), false) = (not_regular(&before), is_dev_null(&before)) {
        return Err(Refused::NotRegular(what));
    }
    read_opened(path, limit)
}

/// `read_with_metadata` for a file its caller has just found a regular file (or `/dev/null`) with a `stat` of its
/// own: opened without that first look, which it already had.
fn read_opened(path: &Path, limit: u64) -> Result<(Vec<u8>, std::fs::Metadata), Refused> {
    let mut file = open(path)?;
    let meta = file.metadata().map_err(Refused::Io)?;
    if let Some(what) = not_regular(&meta) {
        return if is_dev_null(&meta) { Ok((Vec::new(), meta)) } else { Err(Refused::NotRegular(what)) };
    }
    if meta.len() > limit {
        return Err(Refused::TooLarge { limit });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    // One byte more than the limit tells a file that grew past it from one that ends there.
    (&mut file).take(limit + 1).read_to_end(&mut bytes).map_err(Refused::Io)?;
    if bytes.len() as u64 > limit {
        return Err(Refused::TooLarge { limit });
    }
    Ok((bytes, meta))
}

/// A file's bytes, at most `limit` of them.
pub fn read(path: &Path, limit: u64) -> Result<Vec<u8>, Refused> {
    read_with_metadata(path, limit).map(|(bytes, _)| bytes)
}

/// A file's text, at most `limit` bytes, as `std::fs::read_to_string` gives it (not UTF-8 is an error).
pub fn read_to_string(path: &Path, limit: u64) -> io::Result<String> {
    text(read(path, limit)?)
}

/// `read_to_string` for a file its caller has just found a regular file, through any link, with a `stat` of its own
/// (the config, which `config::places` looks at): opened without looking again.
pub fn read_seen_to_string(path: &Path, limit: u64) -> io::Result<String> {
    text(read_opened(path, limit)?.0)
}

/// Bytes read as text, as `std::fs::read_to_string` takes them (not UTF-8 is an error).
fn text(bytes: Vec<u8>) -> io::Result<String> {
    String::from_utf8(bytes)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "stream did not contain valid UTF-8"))
}

/// Whether `a` and `b` hold the same bytes, reading each through `open` (so neither blocks) in pieces, never more
/// than both sizes. For telling a copy of a file from another file of the same size.
pub fn same_contents(a: &Path, b: &Path) -> io::Result<bool> {
    let (mut a, mut b) = (open(a)?, open(b)?);
    let (ma, mb) = (a.metadata()?, b.metadata()?);
    if not_regular(&ma).is_some() || not_regular(&mb).is_some() || ma.len() != mb.len() {
        return Ok(false);
    }
    let (mut x, mut y) = (vec![0u8; 64 << 10], vec![0u8; 64 << 10]);
    loop {
        let n = read_full(&mut a, &mut x)?;
        let m = read_full(&mut b, &mut y)?;
        if n != m || x[..n] != y[..m] {
            return Ok(false);
        }
        if n == 0 {
            return Ok(true);
        }
    }
}

/// Fill `buf` as far as the file goes.
fn read_full(file: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Open for reading without waiting: on a FIFO with no writer, a terminal or a tape, `open` itself would block.
fn open(path: &Path) -> Result<File, Refused> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(Refused::Io)
}

/// What a file that is not a regular one is, in words; `None` for a regular file.
fn not_regular(meta: &std::fs::Metadata) -> Option<&'static str> {
    let kind = meta.file_type();
    if kind.is_file() {
        None
    } else if kind.is_dir() {
        Some("a directory")
    } else if kind.is_fifo() {
        Some("a FIFO or pipe")
    } else if kind.is_char_device() {
        Some("a character device")
    } else if kind.is_block_device() {
        Some("a block device")
    } else if kind.is_socket() {
        Some("a socket")
    } else {
        Some("not a file")
    }
}

/// `/dev/null` (character device 1:3 on Linux), which reads as empty.
fn is_dev_null(meta: &std::fs::Metadata) -> bool {
    meta.file_type().is_char_device() && meta.rdev() == libc::makedev(1, 3)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn reads_a_regular_file_up_to_its_limit_and_refuses_a_larger_one() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"0123456789").unwrap();
        assert_eq!(read(&file, 10).unwrap(), b"0123456789");
        let err = read(&file, 9).unwrap_err();
        assert!(matches!(err, Refused::TooLarge { limit: 9 }), "{err:?}");
        assert_eq!(err.to_string(), "it is larger than 9 bytes, the most the wrapper reads");
        assert!(read(&dir.path().join("missing"), 10).unwrap_err().not_found());
        assert_eq!(size(16 << 20), "16 MiB");
        assert_eq!(size(64 << 10), "64 KiB");
    }

    #[test]
    fn a_fifo_without_a_writer_a_device_and_a_directory_are_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let started = Instant::now();
        for (path, what) in [
            (fifo.as_path(), "a FIFO or pipe"),
            (Path::new("/dev/zero"), "a character device"),
            (dir.path(), "a directory"),
        ] {
            match read(path, CONFIG) {
                Err(Refused::NotRegular(found)) => assert_eq!(found, what, "{}", path.display()),
                other => panic!("{}: {other:?}", path.display()),
            }
        }
        assert!(started.elapsed() < Duration::from_secs(2), "blocked: {:?}", started.elapsed());
        assert_eq!(read(Path::new("/dev/null"), CONFIG).unwrap(), b"");
        // Through a symbolic link too: what is opened is checked, not the name.
        std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero")).unwrap();
        assert!(matches!(read(&dir.path().join("zero"), CONFIG), Err(Refused::NotRegular(_))));
    }

    #[test]
    fn copies_are_told_from_other_files() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, c) = (dir.path().join("a"), dir.path().join("b"), dir.path().join("c"));
        let bytes: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&a, &bytes).unwrap();
        std::fs::write(&b, &bytes).unwrap();
        let mut other = bytes.clone();
        other[150_000] ^= 1;
        std::fs::write(&c, &other).unwrap();
        assert!(same_contents(&a, &b).unwrap());
        assert!(!same_contents(&a, &c).unwrap());
        assert!(!same_contents(&a, Path::new("/dev/null")).unwrap());
    }
}
