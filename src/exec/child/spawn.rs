//! nvcc's command as K starts it, with what exec would give nvcc: `posix_spawn`, which copies no memory; or, for a
//! call that follows the build, a child of the same kind that puts the filter of `crate::exec::hold` in nvcc's process
//! before its exec.

use std::ffi::{CString, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::context::Env;
use crate::exec::hold::{self, Filter, Listener, Said};

/// nvcc's command, ready to start: argv[0] the program's path, exactly `env`, the caller's signal dispositions and
/// its closed standard streams, as `super::command` gives exec.
pub(super) struct Spawn {
    program: CString,
    /// Owners of the strings `argv` and `envp` point into.
    _strings: Vec<CString>,
    argv: Vec<*const libc::c_char>,
    envp: Vec<*const libc::c_char>,
}

/// Why a held start failed.
pub(super) enum Unstarted {
    /// The kernel refused the filter (its errno): nvcc was not started, and may be, unheld.
    Refused(i32),
    /// nvcc could not be started (the errno of its exec, or of the fork).
    Failed(i32),
}

impl Spawn {
    pub(super) fn new(program: &Path, args: &[OsString], env: &Env) -> io::Result<Spawn> {
        let cstring = |bytes: &[u8]| CString::new(bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e));
        let program = cstring(program.as_os_str().as_bytes())?;
        let mut strings = vec![program.clone()];
        for arg in args {
            strings.push(cstring(arg.as_bytes())?);
        }
        let argc = strings.len();
        for (name, value) in env.iter() {
            strings.push(cstring(&[name.as_bytes(), b"=", value.as_bytes()].concat())?);
        }
        let pointers = |s: &[CString]| s.iter().map(|c| c.as_ptr()).chain([std::ptr::null()]).collect::<Vec<_>>();
        let argv = pointers(&strings[..argc]);
        let envp = pointers(&strings[argc..]);
        Ok(Spawn { program, _strings: strings, argv, envp })
    }

    /// Start it with `mask`, and `defaults` at their default action (K ignores them; the caller did not), in the
    /// process group of the one that starts it (K, then still in the caller's); its pid, or the errno of the failure.
    /// K's own dispositions are left as they are.
    pub(super) fn spawn(&self, mask: &libc::sigset_t, defaults: &libc::sigset_t) -> Result<libc::pid_t, i32> {
        let (_, closed) = crate::exec::caller_state();
        // SAFETY: the attribute and file-action objects are initialised before use and destroyed after; every
        // pointer handed to posix_spawn points into `self`, which outlives the call.
        unsafe {
            let mut attr: libc::posix_spawnattr_t = std::mem::zeroed();
            let mut actions: libc::posix_spawn_file_actions_t = std::mem::zeroed();
            libc::posix_spawnattr_init(&mut attr);
            libc::posix_spawn_file_actions_init(&mut actions);
            libc::posix_spawnattr_setsigmask(&mut attr, mask);
            libc::posix_spawnattr_setsigdefault(&mut attr, defaults);
            let flags = libc::POSIX_SPAWN_SETSIGMASK | libc::POSIX_SPAWN_SETSIGDEF;
            libc::posix_spawnattr_setflags(&mut attr, flags as libc::c_short);
            for fd in (0..3).filter(|fd| closed & 1 << fd != 0) {
                libc::posix_spawn_file_actions_addclose(&mut actions, fd);
            }
            let mut pid = 0;
            let errno = libc::posix_spawn(
                &mut pid,
                self.program.as_ptr(),
                &actions,
                &attr,
                self.argv.as_ptr() as *const *mut libc::c_char,
                self.envp.as_ptr() as *const *mut libc::c_char,
            );
            libc::posix_spawn_file_actions_destroy(&mut actions);
            libc::posix_spawnattr_destroy(&mut attr);
            if errno == 0 {
                Ok(pid)
            } else {
                Err(errno)
            }
        }
    }

    /// Start it as `spawn` does, held: a child that shares K's memory and stops K until its exec (as `posix_spawn`
    /// does, copying no memory) installs the filter of `crate::exec::hold`, sends its listener to K over a socket and
    /// execs nvcc, an exec the filter lets through by the address of the program's path. Every later exec of nvcc's
    /// programs waits for the listener's answer. nvcc's pid and the listener.
    pub(super) fn spawn_held(
        &self,
        mask: &libc::sigset_t,
        defaults: &libc::sigset_t,
    ) -> Result<(libc::pid_t, Listener), Unstarted> {
        let filter = Filter::new(self.program.as_ptr()).ok_or(Unstarted::Refused(libc::ENOSYS))?;
        let (_, closed) = crate::exec::caller_state();
        let mut pair = [0; 2];
        let kind = libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC;
        // SAFETY: socketpair fills `pair` with two new descriptors.
        if unsafe { libc::socketpair(libc::AF_UNIX, kind, 0, pair.as_mut_ptr()) } != 0 {
            return Err(Unstarted::Refused(errno()));
        }
        let [ours, theirs] = pair;
        let child = Child { spawn: self, mask, defaults, closed, filter: &filter, socket: theirs };
        let mut stack = vec![0u8; CHILD_STACK];
        // SAFETY: the stack is the child's alone (its top, aligned to 16 bytes, is inside the vector, which outlives
        // the child's use of it: CLONE_VFORK returns only once the child has exec'd or ended); the child runs only
        // system calls on `child`, which outlives it too; it has its own descriptors and signal actions (no
        // CLONE_FILES, no CLONE_SIGHAND), and ends by exec or `_exit`, never returning into K's code.
        let pid = unsafe {
            let top = (stack.as_mut_ptr().add(stack.len()) as usize & !15) as *mut libc::c_void;
            let flags = libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD;
            libc::clone(held_child, top, flags, &child as *const Child as *mut libc::c_void)
        };
        let failed = errno();
        drop(stack);
        super::close(theirs);
        if pid < 0 {
            super::close(ours);
            return Err(Unstarted::Failed(failed));
        }
        // The child has exec'd or ended: what it said is on the socket, and its end is closed.
        let started = match hold::receive(ours) {
            Ok(Said::Descriptor(fd)) => match hold::receive(ours) {
                Ok(Said::Errno(errno)) => Err(reaped(pid, Unstarted::Failed(errno))),
                _ => Ok((pid, Listener::new(fd))),
            },
            Ok(Said::Errno(errno)) => Err(reaped(pid, Unstarted::Refused(errno))),
            Ok(Said::Closed) | Err(_) => Err(reaped(pid, Unstarted::Refused(libc::EIO))),
        };
        super::close(ours);
        started
    }
}

/// The child's stack: what `held_child` needs (a message header and a few locals), with room to spare.
const CHILD_STACK: usize = 64 << 10;

/// What the child of a held start works from, made before it starts.
struct Child<'a> {
    spawn: &'a Spawn,
    mask: &'a libc::sigset_t,
    defaults: &'a libc::sigset_t,
    closed: u8,
    filter: &'a Filter,
    socket: libc::c_int,
}

/// `why`, once the child `pid` that failed has been reaped.
fn reaped(pid: libc::pid_t, why: Unstarted) -> Unstarted {
    let mut status = 0;
    // SAFETY: waits for K's own child, which has ended or is about to.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    why
}

/// The child of a held start (see `Spawn::spawn_held`): nvcc's dispositions and streams, the filter, its listener sent
/// to K, nvcc's mask, and exec; on a failure, its errno sent to K, and `_exit`. Only system calls on memory made
/// before it started: it shares K's, and K waits, stopped, until it has exec'd or ended.
extern "C" fn held_child(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `Child` that `spawn_held` made and keeps alive until this child has exec'd or ended.
    let child = unsafe { &*(arg as *const Child) };
    let say = |errno: i32| -> ! {
        let bytes = errno.to_ne_bytes();
        // SAFETY: writes four bytes from a local array to the socket K reads; then ends this child.
        unsafe {
            libc::write(child.socket, bytes.as_ptr().cast(), bytes.len());
            libc::_exit(super::NOT_STARTED)
        }
    };
    // SAFETY: signal actions are this child's own (no CLONE_SIGHAND): the handlers W set go (exec would reset them
    // anyway, and none may run here, on K's memory), and so do the dispositions K keeps for its own writes.
    unsafe {
        for signal in 1..libc::SIGRTMIN() {
            let handled = super::FORWARDED.contains(&signal);
            if handled || libc::sigismember(child.defaults, signal) == 1 {
                libc::signal(signal, libc::SIG_DFL);
            }
        }
    }
    // SAFETY: this child is about to exec and shares no thread with anything.
    match unsafe { hold::install(child.filter) } {
        Ok(listener) => {
            // SAFETY: both descriptors are this child's.
            if !unsafe { hold::send(child.socket, listener) } {
                say(libc::EIO);
            }
            // Before the exec: a copy here would keep the listener alive if K died meanwhile.
            // SAFETY: this child's own descriptor.
            unsafe { libc::close(listener) };
        }
        Err(errno) => say(errno),
    }
    // SAFETY: descriptors and the mask are this child's own; the pointers handed to execve point into `Spawn`, which
    // outlives the call.
    unsafe {
        for fd in (0..3).filter(|fd| child.closed & 1 << fd != 0) {
            libc::close(fd);
        }
        libc::sigprocmask(libc::SIG_SETMASK, child.mask, std::ptr::null_mut());
        libc::execve(child.spawn.program.as_ptr(), child.spawn.argv.as_ptr(), child.spawn.envp.as_ptr());
    }
    say(errno())
}

fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}
