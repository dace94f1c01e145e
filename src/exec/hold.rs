//! Holding a program of nvcc's before it runs, where job control cannot see it (issue 57). nvcc starts under a seccomp
//! filter whose every `execve` and `execveat`, in nvcc and in everything below it, waits for an answer on a listener
//! descriptor (`SECCOMP_RET_USER_NOTIF`). A program held so sleeps in that system call: `ps` shows `S`, a shell sees a
//! running job, and when the caller's process group is orphaned (a logout, a script that exits, make killed) the
//! kernel finds nothing stopped in it and hangs nothing up, where a SIGSTOP would have it hang up the whole build. A
//! signal reaches a held program as it reaches a running one: one that ends it ends it at once; a stop (Ctrl-Z)
//! interrupts the wait, and once continued the program calls exec again and is held again.
//!
//! The filter goes into nvcc's own process, between its fork and its exec (`install`), so that only nvcc and what it
//! starts carry it, never the keeper: once they have all ended, the listener says so (`hung_up`). The listener reaches
//! the keeper over a socket (`send`, `receive`); whoever holds a copy answers. When every copy is closed, a held exec
//! and every later one fails (ENOSYS): nothing of nvcc's starts once its keeper and the keeper's guard are both gone.
//!
//! Linux 5.5 or newer (`probe::hold::check`). Where the wrapper lacks CAP_SYS_ADMIN, the kernel takes a filter only
//! from a process with `no_new_privs`: set then in nvcc's process, and inherited by what it starts, it makes a
//! set-user-ID program below nvcc run without its privileges (a compiler's tools are none).

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

use nix::unistd::Pid;

use crate::probe::hold::AUDIT_ARCH;

/// `struct seccomp_data`'s fields, as the filter reads them: the call's number, its CPU, and the two halves of its
/// first argument (little-endian: the low word first), an exec's program.
const NR: u32 = 0;
const ARCH: u32 = 4;
const FIRST_LOW: u32 = 16;
const FIRST_HIGH: u32 = 20;

/// The filter's program: `execve` and `execveat` of this CPU's own calls wait for the listener; everything else runs,
/// and so does the one exec of nvcc itself, named by the address of its program's path (`first`): the keeper starts
/// nvcc from a child that shares its memory and stops it until that exec, so the exec must not wait for the keeper.
/// After it the address space is nvcc's, where that address means nothing; an exec of nvcc's that passed a path at
/// the very same address would run unheld, beyond the slots once, never worse than that.
pub struct Filter([libc::sock_filter; 12]);

impl Filter {
    /// The program for this CPU; `None` where the wrapper knows no seccomp value for it, or it is not little-endian.
    pub fn new(first: *const libc::c_char) -> Option<Filter> {
        let arch = AUDIT_ARCH.filter(|_| cfg!(target_endian = "little"))?;
        let first = first as u64;
        let op = |code: u32, k: u32, jt: u8, jf: u8| libc::sock_filter { code: code as u16, jt, jf, k };
        let (load, equals, ret) = (
            libc::BPF_LD | libc::BPF_W | libc::BPF_ABS,
            libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K,
            libc::BPF_RET | libc::BPF_K,
        );
        // Jumps count the instructions skipped: 10 is "wait", 11 "run".
        Some(Filter([
            /* 0 */ op(load, ARCH, 0, 0),
            // Another CPU's call (a 32-bit program): runs.
            /* 1 */ op(equals, arch, 0, 9),
            /* 2 */ op(load, NR, 0, 0),
            /* 3 */ op(equals, libc::SYS_execve as u32, 2, 0),
            /* 4 */ op(equals, libc::SYS_execveat as u32, 5, 0),
            /* 5 */ op(ret, libc::SECCOMP_RET_ALLOW, 0, 0),
            /* 6 */ op(load, FIRST_LOW, 0, 0),
            /* 7 */ op(equals, first as u32, 0, 2),
            /* 8 */ op(load, FIRST_HIGH, 0, 0),
            /* 9 */ op(equals, (first >> 32) as u32, 1, 0),
            /* 10 */ op(ret, libc::SECCOMP_RET_USER_NOTIF, 0, 0),
            /* 11 */ op(ret, libc::SECCOMP_RET_ALLOW, 0, 0),
        ]))
    }
}

/// Install `filter` in this process, with a new listener: its descriptor, or the errno. For the child between fork
/// and exec: only system calls, nothing allocated. `no_new_privs` is set only where the kernel asks for it. The
/// speculation mitigations a filter turns on by default in kernels before 5.16 are left off
/// (`SECCOMP_FILTER_FLAG_SPEC_ALLOW`): the filter holds programs, it does not guard against them, and the mitigation
/// would slow every compiler below nvcc.
///
/// # Safety
/// Only in a process about to exec, which no other thread shares.
pub unsafe fn install(filter: &Filter) -> Result<RawFd, i32> {
    let program = libc::sock_fprog { len: filter.0.len() as u16, filter: filter.0.as_ptr() as *mut libc::sock_filter };
    let flags = libc::SECCOMP_FILTER_FLAG_NEW_LISTENER | libc::SECCOMP_FILTER_FLAG_SPEC_ALLOW;
    let set = || libc::syscall(libc::SYS_seccomp, libc::SECCOMP_SET_MODE_FILTER, flags, &program) as RawFd;
    let mut fd = set();
    if fd < 0 && errno() == libc::EACCES {
        libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        fd = set();
    }
    if fd < 0 {
        Err(errno())
    } else {
        Ok(fd)
    }
}

fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// A descriptor in one message over `socket` (SCM_RIGHTS), with one byte. Only system calls: for the child between
/// fork and exec. Whether it went.
///
/// # Safety
/// `socket` and `fd` are open descriptors of this process.
pub unsafe fn send(socket: RawFd, fd: RawFd) -> bool {
    let mut byte = [1u8];
    let mut iov = libc::iovec { iov_base: byte.as_mut_ptr().cast(), iov_len: 1 };
    let mut control = Control([0; 64]);
    let mut message: libc::msghdr = std::mem::zeroed();
    message.msg_iov = &mut iov;
    message.msg_iovlen = 1;
    message.msg_control = control.0.as_mut_ptr().cast();
    message.msg_controllen = libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) as _;
    let header = libc::CMSG_FIRSTHDR(&message);
    (*header).cmsg_level = libc::SOL_SOCKET;
    (*header).cmsg_type = libc::SCM_RIGHTS;
    (*header).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as _;
    std::ptr::write_unaligned(libc::CMSG_DATA(header).cast::<RawFd>(), fd);
    libc::sendmsg(socket, &message, libc::MSG_NOSIGNAL) == 1
}

/// Room for one control message, aligned as `cmsghdr`.
#[repr(C, align(8))]
struct Control([u8; 64]);

/// What the child said on the socket: a descriptor (the listener), four bytes (an errno), or nothing (it closed its
/// end: its exec succeeded, or it died).
pub enum Said {
    Descriptor(OwnedFd),
    Errno(i32),
    Closed,
}

/// The next message on `socket`: a descriptor is received closed on exec.
pub fn receive(socket: BorrowedFd) -> io::Result<Said> {
    use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags, UnixAddr};
    let mut data = [0u8; 4];
    let mut control = nix::cmsg_space!(RawFd);
    let (got, fds) = loop {
        let mut iov = [io::IoSliceMut::new(&mut data)];
        match recvmsg::<UnixAddr>(socket.as_raw_fd(), &mut iov, Some(&mut control), MsgFlags::MSG_CMSG_CLOEXEC) {
            Ok(message) => {
                let fds: Vec<RawFd> = message
                    .cmsgs()
                    .map(|all| {
                        all.flat_map(|c| match c {
                            ControlMessageOwned::ScmRights(fds) => fds,
                            _ => Vec::new(),
                        })
                        .collect()
                    })
                    .unwrap_or_default();
                break (message.bytes, fds);
            }
            Err(nix::errno::Errno::EINTR) => {}
            Err(err) => return Err(err.into()),
        }
    };
    // SAFETY: descriptors the kernel just gave this process in an SCM_RIGHTS message, which nothing else owns; the
    // child sends one, and any other is closed here, when `fds` goes.
    let mut fds: Vec<OwnedFd> = fds.into_iter().map(|fd| unsafe { OwnedFd::from_raw_fd(fd) }).collect();
    if !fds.is_empty() {
        return Ok(Said::Descriptor(fds.swap_remove(0)));
    }
    Ok(match got {
        4 => Said::Errno(i32::from_ne_bytes(data)),
        _ => Said::Closed,
    })
}

/// A system call held: its notification's id, and the process that made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held {
    pub id: u64,
    pub pid: Pid,
}

/// The listener of a filter `install` made: what is held, and the answers.
pub struct Listener {
    fd: OwnedFd,
    /// The kernel's sizes of a notification and of an answer, which may be larger than the ones the wrapper knows.
    notif: usize,
    resp: usize,
}

/// seccomp's calls that go through a buffer, each with what the kernel reads or writes there.
#[derive(Clone, Copy)]
enum Request<'a> {
    /// Fills `struct seccomp_notif_sizes` (three u16).
    Sizes,
    /// Fills a notification of the kernel's size (`.1`; the buffer zeroed).
    Receive(BorrowedFd<'a>, usize),
    /// Reads an id.
    IdValid(BorrowedFd<'a>),
    /// Reads an answer of the kernel's size (`.1`).
    Send(BorrowedFd<'a>, usize),
}

/// Make `request` with `buffer`: the errno of a failure. A buffer shorter than the request needs is a bug, and
/// panics before the kernel sees it.
fn seccomp(request: Request, buffer: &mut [u64]) -> Result<(), i32> {
    let need = match request {
        Request::Sizes => std::mem::size_of::<libc::seccomp_notif_sizes>(),
        Request::Receive(_, size) | Request::Send(_, size) => size,
        Request::IdValid(_) => 8,
    };
    assert!(buffer.len() * 8 >= need, "a seccomp request's buffer is short");
    let at = buffer.as_mut_ptr();
    // SAFETY: the buffer holds at least what the kernel reads or writes for this request (checked above), and is
    // aligned for the structs it holds (u64s); it outlives the call. nix has no seccomp.
    let done = unsafe {
        match request {
            Request::Sizes => libc::syscall(libc::SYS_seccomp, libc::SECCOMP_GET_NOTIF_SIZES, 0, at) as libc::c_int,
            Request::Receive(fd, _) => libc::ioctl(fd.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_RECV, at),
            Request::IdValid(fd) => libc::ioctl(fd.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_ID_VALID, at),
            Request::Send(fd, _) => libc::ioctl(fd.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_SEND, at),
        }
    };
    if done == 0 {
        Ok(())
    } else {
        Err(errno())
    }
}

impl Listener {
    pub fn new(fd: OwnedFd) -> Listener {
        // `struct seccomp_notif_sizes`: the kernel's sizes of a notification and of an answer, then of its data.
        let mut sizes = [0u64];
        let _ = seccomp(Request::Sizes, &mut sizes);
        let bytes = sizes[0].to_ne_bytes();
        let notif = usize::from(u16::from_ne_bytes([bytes[0], bytes[1]]));
        let resp = usize::from(u16::from_ne_bytes([bytes[2], bytes[3]]));
        let notif = notif.max(std::mem::size_of::<libc::seccomp_notif>());
        let resp = resp.max(std::mem::size_of::<libc::seccomp_notif_resp>());
        Listener { fd, notif, resp }
    }

    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// The next held call, once one waits (`None` when the one that woke the listener was interrupted meanwhile).
    pub fn next(&self) -> io::Result<Option<Held>> {
        // The kernel takes only a zeroed buffer.
        let mut buffer = vec![0u64; self.notif.div_ceil(8)];
        if let Err(errno) = seccomp(Request::Receive(self.fd(), self.notif), &mut buffer) {
            return match errno {
                libc::ENOENT | libc::EINTR => Ok(None),
                _ => Err(io::Error::from_raw_os_error(errno)),
            };
        }
        // `struct seccomp_notif` begins with its id (u64), then the pid (u32) and flags (u32).
        let pid = buffer[1].to_ne_bytes();
        let pid = u32::from_ne_bytes([pid[0], pid[1], pid[2], pid[3]]);
        Ok(Some(Held { id: buffer[0], pid: Pid::from_raw(pid as libc::pid_t) }))
    }

    /// Whether the call `id` still waits: after reading `/proc` for its pid, the pid is still the one that made it.
    pub fn waits(&self, id: u64) -> bool {
        // Linux 5.5 and 5.6 know this request by another number: there, what cannot be asked is taken as waiting.
        matches!(seccomp(Request::IdValid(self.fd()), &mut [id]), Ok(()) | Err(libc::EINVAL))
    }

    /// Let the call `id` go on as it was made. Whether it was still waiting.
    pub fn let_run(&self, id: u64) -> bool {
        // `struct seccomp_notif_resp`: id (u64), val (i64), error (i32), flags (u32); the rest, if the kernel's is
        // larger, zeros.
        let mut buffer = vec![0u64; self.resp.div_ceil(8)];
        let flags = libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32;
        let (error, flags) = (0i32.to_ne_bytes(), flags.to_ne_bytes());
        buffer[0] = id;
        buffer[2] =
            u64::from_ne_bytes([error[0], error[1], error[2], error[3], flags[0], flags[1], flags[2], flags[3]]);
        seccomp(Request::Send(self.fd(), self.resp), &mut buffer).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_jumps_stay_inside_the_program() {
        let Some(Filter(program)) = Filter::new(std::ptr::null()) else { return };
        for (at, op) in program.iter().enumerate() {
            if op.code as u32 & 0x07 == libc::BPF_JMP {
                assert!(at + 1 + (op.jt.max(op.jf) as usize) < program.len(), "instruction {at} jumps out");
            }
        }
        let rets: Vec<u32> =
            program.iter().filter(|op| op.code as u32 == libc::BPF_RET | libc::BPF_K).map(|op| op.k).collect();
        assert_eq!(rets, [libc::SECCOMP_RET_ALLOW, libc::SECCOMP_RET_USER_NOTIF, libc::SECCOMP_RET_ALLOW]);
    }
}
