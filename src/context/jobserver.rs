//! The build's jobserver, as `MAKEFLAGS` names it: GNU make's protocol, where each byte in a pipe or FIFO is a free job
//! slot, taken by reading it and given back by writing it. nvcc alone never reads `MAKEFLAGS`, so the wrapper
//! treats what it says as a claim, and uses a jobserver only where using it cannot harm anything else the call has:
//!
//! - `--jobserver-auth=R,W` (make's pipe): only when R and W are open descriptors above the standard streams, both
//!   ends of one pipe (the same pipe inode), R open for reading and W for writing. A number that names stdin's pipe,
//!   a file, a terminal or a socket is never read or written.
//! - `--jobserver-auth=fifo:PATH` (make 4.4's FIFO, and `nvcc-wrapper jobserver`'s): PATH is opened with `O_PATH`,
//!   which runs no driver and touches nothing, and used only when that descriptor is a FIFO. A regular file, a device
//!   or a directory named there is never opened for reading or writing.
//! - Slots are read one byte at a time without waiting, from a description of the wrapper's own (the pipe or FIFO
//!   opened anew through `/proc/self/fd`), so that make's own descriptors keep their flags. Without `/proc` the pipe
//!   form cannot be read without waiting, and is not used.
//!
//! The descriptors are checked before the wrapper opens any of its own (`Context::from_process`), so a number cannot
//! name a file of the wrapper's. Which slots a call takes, and who holds them, is `exec::child`'s business.

use std::ffi::{CString, OsStr};
use std::fmt;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;

use super::Env;

/// The variables a jobserver is named in, in the order they are read: make's, then cargo's own for build scripts.
/// Where both name one, and not the same, a make runs inside cargo's build (a build script's `make -j`, which makes a
/// jobserver of its own for its rules): make's is the nearer, the one whose slots the rule was counted in, and
/// cargo's in `CARGO_MAKEFLAGS` is only inherited (issue 48).
pub const NAMED_IN: [&str; 3] = [super::vars::MAKEFLAGS, "MFLAGS", "CARGO_MAKEFLAGS"];

/// A jobserver named in the environment.
#[derive(Debug, Default)]
pub enum Jobserver {
    /// None named.
    #[default]
    None,
    Usable(Client),
    /// Named but not usable by this call, with why (GNU make 4.3 passes its pipe only to rules marked `+`; a FIFO
    /// that is gone; a claim that names something else).
    Unusable(Unusable),
}

/// Why a jobserver `MAKEFLAGS` names cannot be used by this call. An error the system gave is kept as its words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unusable {
    /// `--jobserver-auth=` with a value that is neither `R,W` nor `fifo:PATH`.
    Malformed(String),
    /// Negative descriptors: make turned its jobserver off for the command.
    TurnedOff {
        read: RawFd,
        write: RawFd,
    },
    /// A descriptor of 0 to 2.
    StandardStream {
        read: RawFd,
        write: RawFd,
    },
    /// Not open here (make 4.3 passes its pipe only to rules marked `+`).
    NotOpen(RawFd),
    /// Open, but `fstat` failed.
    NotStated {
        fd: RawFd,
        error: String,
    },
    /// Not a pipe: what it is.
    NotAPipe {
        fd: RawFd,
        is: &'static str,
    },
    /// Two pipes, not the two ends of one.
    TwoPipes {
        read: RawFd,
        write: RawFd,
    },
    NotForReading(RawFd),
    NotForWriting(RawFd),
    /// The pipe could not be opened anew without waiting on it.
    NotReopened(String),
    /// A FIFO's path, as the shell would write it, and the system's error.
    Fifo {
        path: String,
        error: String,
    },
    /// Not a FIFO: what it is.
    NotAFifo {
        path: String,
        is: &'static str,
    },
    /// Replaced while it was opened.
    FifoChanged {
        path: String,
    },
    /// A copy of the context (tests) could not duplicate the descriptor.
    NotDuplicated(String),
}

impl fmt::Display for Unusable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unusable::Malformed(value) => write!(f, "`--jobserver-auth={value}` is neither `R,W` nor `fifo:PATH`"),
            Unusable::TurnedOff { read, write } => {
                write!(f, "descriptors {read},{write}: make turned its jobserver off for this command")
            }
            Unusable::StandardStream { read, write } => {
                write!(f, "descriptors {read},{write} include a standard stream (0 to 2), which is never a jobserver")
            }
            Unusable::NotOpen(fd) => {
                write!(f, "descriptor {fd} is not open (GNU make 4.3 passes it only to rules marked `+`)")
            }
            Unusable::NotStated { fd, error } => write!(f, "descriptor {fd}: {error}"),
            Unusable::NotAPipe { fd, is } => write!(f, "descriptor {fd} is {is}, not a pipe"),
            Unusable::TwoPipes { read, write } => {
                write!(f, "descriptors {read} and {write} are not the two ends of one pipe")
            }
            Unusable::NotForReading(fd) => write!(f, "descriptor {fd} is not open for reading"),
            Unusable::NotForWriting(fd) => write!(f, "descriptor {fd} is not open for writing"),
            Unusable::NotReopened(error) => write!(f, "cannot open the pipe anew without waiting on it: {error}"),
            Unusable::Fifo { path, error } => write!(f, "fifo:{path}: {error}"),
            Unusable::NotAFifo { path, is } => write!(f, "fifo:{path} is {is}, not a FIFO"),
            Unusable::FifoChanged { path } => write!(f, "fifo:{path} changed while it was opened"),
            Unusable::NotDuplicated(error) => write!(f, "cannot duplicate its descriptor: {error}"),
        }
    }
}

/// The jobserver a call may take slots from: one descriptor of the wrapper's own, non-blocking, open for reading and
/// writing the pipe or FIFO.
#[derive(Debug)]
pub struct Client {
    fd: OwnedFd,
}

impl Clone for Jobserver {
    /// A test's copy of a context: a usable jobserver's descriptor is duplicated.
    fn clone(&self) -> Jobserver {
        match self {
            Jobserver::None => Jobserver::None,
            Jobserver::Usable(client) => match client.fd.try_clone() {
                Ok(fd) => Jobserver::Usable(Client { fd }),
                Err(e) => Jobserver::Unusable(Unusable::NotDuplicated(e.to_string())),
            },
            Jobserver::Unusable(why) => Jobserver::Unusable(why.clone()),
        }
    }
}

/// What `MAKEFLAGS` claims: the last `--jobserver-auth=` (or `--jobserver-fds=`, make 4.1's name) among its options,
/// as GNU make itself takes the last. Options end at the first word `--`: after it come variable assignments
/// (`-- CFLAGS=...`), which are not options whatever they hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    Pipe {
        read: RawFd,
        write: RawFd,
    },
    Fifo(Vec<u8>),
    /// A value that is neither form, as given.
    Malformed(String),
}

impl Claim {
    /// The claim in a `MAKEFLAGS` value, if it makes one.
    pub fn parse(makeflags: &[u8]) -> Option<Claim> {
        let mut found = None;
        for word in words(makeflags) {
            if word == b"--" {
                break;
            }
            let value =
                [&b"--jobserver-auth="[..], b"--jobserver-fds="].iter().find_map(|prefix| word.strip_prefix(*prefix));
            if let Some(value) = value {
                found = Some(value.to_vec());
            }
        }
        let value = found?;
        if let Some(path) = value.strip_prefix(b"fifo:") {
            return Some(if path.is_empty() { Claim::Malformed("fifo:".into()) } else { Claim::Fifo(path.to_vec()) });
        }
        let text = String::from_utf8_lossy(&value).into_owned();
        let pipe = text.split_once(',').and_then(|(r, w)| Some((r.parse::<RawFd>().ok()?, w.parse::<RawFd>().ok()?)));
        Some(match pipe {
            Some((read, write)) => Claim::Pipe { read, write },
            None => Claim::Malformed(text),
        })
    }
}

/// The words of a `MAKEFLAGS` value: split at blanks, where make writes a blank inside a word as `\ `.
fn words(value: &[u8]) -> Vec<Vec<u8>> {
    let mut words = Vec::new();
    let mut word = Vec::new();
    let mut bytes = value.iter().copied();
    while let Some(b) = bytes.next() {
        match b {
            b'\\' => {
                word.extend(
                    bytes.next().map_or(vec![b'\\'], |next| if next == b' ' { vec![b' '] } else { vec![b'\\', next] }),
                )
            }
            b' ' | b'\t' => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            _ => word.push(b),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

impl Jobserver {
    /// The jobserver the environment names, checked as the module header says. Only for `Context::from_process`,
    /// before the wrapper opens any descriptor of its own.
    pub(super) fn from_process(env: &Env) -> Jobserver {
        let Some(claim) = NAMED_IN.iter().find_map(|name| env.get(name).and_then(|v| Claim::parse(v.as_bytes())))
        else {
            return Jobserver::None;
        };
        match open(&claim) {
            Ok(fd) => Jobserver::Usable(Client { fd }),
            Err(why) => Jobserver::Unusable(why),
        }
    }
}

#[cfg(test)]
impl Jobserver {
    /// A usable jobserver of a new pipe, empty: what a plan's tests decide under (a plan reads only whether the
    /// build shares slots with the call).
    pub fn of_a_new_pipe() -> Jobserver {
        let mut fds = [0; 2];
        // SAFETY: pipe2 fills both descriptors; the read end is owned by the client, the write end closed at once.
        unsafe {
            assert_eq!(libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK), 0);
            libc::close(fds[1]);
            Jobserver::Usable(Client { fd: OwnedFd::from_raw_fd(fds[0]) })
        }
    }
}

/// The file type and identity of a descriptor.
fn stat(fd: RawFd) -> io::Result<libc::stat> {
    // SAFETY: fstat fully writes `st` when it succeeds; a bad descriptor is an error, not undefined behaviour.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &mut st) != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(st)
    }
}

fn is_fifo(st: &libc::stat) -> bool {
    st.st_mode & libc::S_IFMT == libc::S_IFIFO
}

/// What a descriptor is, in a few words, for why it is not used.
fn kind(st: &libc::stat) -> &'static str {
    match st.st_mode & libc::S_IFMT {
        libc::S_IFREG => "a regular file",
        libc::S_IFDIR => "a directory",
        libc::S_IFCHR => "a character device",
        libc::S_IFBLK => "a block device",
        libc::S_IFSOCK => "a socket",
        libc::S_IFLNK => "a symbolic link",
        libc::S_IFIFO => "a FIFO",
        _ => "not a pipe",
    }
}

/// Open `path` with `flags` (always close-on-exec).
fn open_path(path: &[u8], flags: libc::c_int) -> io::Result<OwnedFd> {
    let path = CString::new(path).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    // SAFETY: `path` is NUL-terminated; open returns a new descriptor that the OwnedFd then owns.
    let fd = unsafe { libc::open(path.as_ptr(), flags | libc::O_CLOEXEC | libc::O_NOCTTY) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and is owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A description of the wrapper's own, non-blocking, for reading and writing, of the pipe or FIFO `fd` is (checked
/// to be the same one, `st`); through `/proc/self/fd`, which opens the object itself, not the name it had.
fn reopen(fd: RawFd, st: &libc::stat) -> io::Result<OwnedFd> {
    let own = open_path(format!("/proc/self/fd/{fd}").as_bytes(), libc::O_RDWR | libc::O_NONBLOCK)?;
    let again = stat(own.as_raw_fd())?;
    if !is_fifo(&again) || (again.st_dev, again.st_ino) != (st.st_dev, st.st_ino) {
        return Err(io::Error::other("it changed while it was opened"));
    }
    Ok(own)
}

/// Check a claim and open the jobserver it names; why not, when it cannot be used.
fn open(claim: &Claim) -> Result<OwnedFd, Unusable> {
    match claim {
        Claim::Malformed(value) => Err(Unusable::Malformed(value.clone())),
        Claim::Pipe { read, write } => {
            let (read, write) = (*read, *write);
            if read < 0 || write < 0 {
                return Err(Unusable::TurnedOff { read, write });
            }
            if read <= 2 || write <= 2 {
                return Err(Unusable::StandardStream { read, write });
            }
            let opened = |fd: RawFd| {
                // SAFETY: F_GETFL only reads a descriptor's flags; a closed one is EBADF.
                let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
                if flags < 0 {
                    return Err(Unusable::NotOpen(fd));
                }
                let st = stat(fd).map_err(|e| Unusable::NotStated { fd, error: e.to_string() })?;
                Ok((flags & libc::O_ACCMODE, st))
            };
            let (read_mode, read_st) = opened(read)?;
            let (write_mode, write_st) = opened(write)?;
            for (fd, st) in [(read, &read_st), (write, &write_st)] {
                if !is_fifo(st) {
                    return Err(Unusable::NotAPipe { fd, is: kind(st) });
                }
            }
            if (read_st.st_dev, read_st.st_ino) != (write_st.st_dev, write_st.st_ino) {
                return Err(Unusable::TwoPipes { read, write });
            }
            if read_mode == libc::O_WRONLY {
                return Err(Unusable::NotForReading(read));
            }
            if write_mode == libc::O_RDONLY {
                return Err(Unusable::NotForWriting(write));
            }
            reopen(read, &read_st).map_err(|e| Unusable::NotReopened(e.to_string()))
        }
        Claim::Fifo(path) => {
            let shown = crate::error::shell::display([OsStr::from_bytes(path)]);
            let failed = |e: io::Error| Unusable::Fifo { path: shown.clone(), error: e.to_string() };
            // O_PATH: no open of the object itself, so a device's driver never runs and no file's time changes.
            let handle = open_path(path, libc::O_PATH).map_err(failed)?;
            let st = stat(handle.as_raw_fd()).map_err(failed)?;
            if !is_fifo(&st) {
                return Err(Unusable::NotAFifo { path: shown, is: kind(&st) });
            }
            reopen(handle.as_raw_fd(), &st).or_else(|_| {
                // Without /proc: the name, opened without waiting, and checked to be the FIFO seen above.
                let own = open_path(path, libc::O_RDWR | libc::O_NONBLOCK | libc::O_NOFOLLOW).map_err(failed)?;
                let again = stat(own.as_raw_fd()).map_err(failed)?;
                if (again.st_dev, again.st_ino) != (st.st_dev, st.st_ino) {
                    return Err(Unusable::FifoChanged { path: shown.clone() });
                }
                Ok(own)
            })
        }
    }
}

impl Client {
    /// Take one free slot without waiting: its byte, or `None` when none is free (or the jobserver cannot be read).
    pub fn try_take(&self) -> Option<u8> {
        let mut byte = 0u8;
        loop {
            // SAFETY: reads at most one byte into `byte`.
            let n = unsafe { libc::read(self.fd.as_raw_fd(), (&mut byte as *mut u8).cast(), 1) };
            if n == 1 {
                return Some(byte);
            }
            if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return None;
        }
    }

    /// Give a slot back: its byte, written without waiting. False when it could not be written (the jobserver full
    /// or gone), and the slot is lost to the build.
    pub fn give_back(&self, byte: u8) -> bool {
        loop {
            // SAFETY: writes one byte from a local.
            let n = unsafe { libc::write(self.fd.as_raw_fd(), (&byte as *const u8).cast(), 1) };
            if n == 1 {
                return true;
            }
            if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return false;
        }
    }

    /// Whether a slot is free now, seen without taking it.
    pub fn has_free(&self) -> bool {
        self.free() > 0
    }

    /// How many slots are free now, seen without taking them (for `explain`).
    pub fn free(&self) -> usize {
        let mut n: libc::c_int = 0;
        // SAFETY: FIONREAD writes the bytes waiting in the pipe into `n`.
        if unsafe { libc::ioctl(self.fd.as_raw_fd(), libc::FIONREAD, &mut n) } != 0 {
            return 0;
        }
        usize::try_from(n).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_jobserver_option_before_the_variables_is_the_claim() {
        let rows: [(&[u8], Option<Claim>); 9] = [
            (b"-j4 --jobserver-auth=3,4", Some(Claim::Pipe { read: 3, write: 4 })),
            (b" -j --jobserver-fds=5,6", Some(Claim::Pipe { read: 5, write: 6 })),
            (b"k -j8 --jobserver-auth=fifo:/tmp/GMfifo1", Some(Claim::Fifo(b"/tmp/GMfifo1".to_vec()))),
            (b"--jobserver-auth=3,4 --jobserver-auth=fifo:/tmp/f", Some(Claim::Fifo(b"/tmp/f".to_vec()))),
            (b"--jobserver-auth=fifo:/tmp/a\\ b", Some(Claim::Fifo(b"/tmp/a b".to_vec()))),
            // After `--` come variable assignments, whatever they hold.
            (b"-j4 -- CFLAGS=--jobserver-auth=0,1", None),
            (b"-j4 --jobserver-auth=7,8 -- X=--jobserver-auth=0,1", Some(Claim::Pipe { read: 7, write: 8 })),
            (b"--jobserver-auth=three", Some(Claim::Malformed("three".into()))),
            (b"-j4 --no-print-directory", None),
        ];
        for (flags, claim) in rows {
            assert_eq!(Claim::parse(flags), claim, "{}", String::from_utf8_lossy(flags));
        }
    }

    fn env(makeflags: &str) -> Env {
        [("MAKEFLAGS", makeflags)].into_iter().collect()
    }

    fn unusable(makeflags: &str) -> String {
        match Jobserver::from_process(&env(makeflags)) {
            Jobserver::Unusable(why) => why.to_string(),
            other => panic!("{makeflags}: {other:?}"),
        }
    }

    #[test]
    fn standard_streams_files_devices_and_mismatched_ends_are_never_used() {
        assert!(unusable("--jobserver-auth=0,1").contains("standard stream"));
        assert!(unusable("--jobserver-auth=-1,-1").contains("turned its jobserver off"));
        assert!(unusable("--jobserver-auth=fifo:/dev/zero").ends_with("is a character device, not a FIFO"));
        assert!(unusable("--jobserver-auth=fifo:/").ends_with("is a directory, not a FIFO"));
        assert!(unusable("--jobserver-auth=fifo:/nonexistent/slots").contains("No such file"));
        assert!(unusable("--jobserver-auth=fifo:").contains("neither"));
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("slots");
        std::fs::write(&file, "++++").unwrap();
        let before = std::fs::metadata(&file).unwrap();
        let why = unusable(&format!("--jobserver-auth=fifo:{}", file.display()));
        assert!(why.ends_with("is a regular file, not a FIFO"), "{why}");
        let after = std::fs::metadata(&file).unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"++++");
        use std::os::unix::fs::MetadataExt;
        assert_eq!((before.atime_nsec(), before.mtime_nsec()), (after.atime_nsec(), after.mtime_nsec()));
        // Two pipes' ends: each a pipe, but not one.
        let (a, b) = (pipe(), pipe());
        let why = unusable(&format!("--jobserver-auth={},{}", a.0.as_raw_fd(), b.1.as_raw_fd()));
        assert!(why.ends_with("are not the two ends of one pipe"), "{why}");
        // The ends swapped: the read end is not open for writing.
        let why = unusable(&format!("--jobserver-auth={},{}", a.1.as_raw_fd(), a.0.as_raw_fd()));
        assert!(why.contains("is not open for"), "{why}");
        // A file's descriptor.
        let f = std::fs::File::open(&file).unwrap();
        let why = unusable(&format!("--jobserver-auth={0},{0}", f.as_raw_fd()));
        assert!(why.ends_with("is a regular file, not a pipe"), "{why}");
    }

    fn pipe() -> (OwnedFd, OwnedFd) {
        let mut fds = [0; 2];
        // SAFETY: pipe2 fills both descriptors, which the OwnedFds then own.
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        // SAFETY: just made, owned by nothing else.
        unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
    }

    #[test]
    fn a_pipe_and_a_fifo_lend_their_slots_one_at_a_time_and_get_the_same_bytes_back() {
        let (read, write) = pipe();
        // SAFETY: writes three bytes from a literal.
        assert_eq!(unsafe { libc::write(write.as_raw_fd(), b"+-*".as_ptr().cast(), 3) }, 3);
        let Jobserver::Usable(client) =
            Jobserver::from_process(&env(&format!("-j4 --jobserver-auth={},{}", read.as_raw_fd(), write.as_raw_fd())))
        else {
            panic!("the pipe is not usable")
        };
        assert_eq!(client.free(), 3);
        let taken: Vec<u8> = std::iter::from_fn(|| client.try_take()).collect();
        assert_eq!(taken, b"+-*");
        assert!(!client.has_free());
        // make's own descriptor is still blocking: the wrapper read through a description of its own.
        // SAFETY: F_GETFL only reads the flags.
        assert_eq!(unsafe { libc::fcntl(read.as_raw_fd(), libc::F_GETFL) } & libc::O_NONBLOCK, 0);
        assert!(taken.iter().all(|b| client.give_back(*b)));
        assert_eq!(client.free(), 3);

        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("slots");
        let name = CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        let Jobserver::Usable(client) =
            Jobserver::from_process(&env(&format!("--jobserver-auth=fifo:{}", fifo.display())))
        else {
            panic!("the FIFO is not usable")
        };
        assert_eq!(client.try_take(), None, "an empty FIFO nobody serves lends nothing, at once");
        assert!(client.give_back(b'+'));
        assert_eq!(client.try_take(), Some(b'+'));
    }
}
