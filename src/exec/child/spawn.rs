//! nvcc's command, with what exec from the caller would give nvcc: the wrapper's exec (`Spawn::exec`); K's start of
//! it, `posix_spawn`, which copies no memory; or, for a call that follows the build, a child of the same kind that
//! puts the filter of `crate::exec::hold` in nvcc's process before its exec.

use std::borrow::Cow;
use std::ffi::{CStr, CString, OsString};
use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use nix::errno::Errno;
use nix::spawn::{PosixSpawnAttr, PosixSpawnFileActions, PosixSpawnFlags};
use nix::sys::signal::{SigSet, Signal};
use nix::sys::socket::{AddressFamily, SockFlag, SockType};
use nix::unistd::Pid;

use crate::context::Env;
use crate::exec::hold::{self, Filter, Listener, Said};
use crate::exec::signals::{self, FORWARDED};

/// nvcc's command, ready to start: argv[0] the program's path, exactly `env`, the caller's signal dispositions and
/// its closed standard streams.
pub(in crate::exec) struct Spawn {
    program: CString,
    args: Vec<CString>,
    /// The caller's variables as it gave them (the process's own strings), those the plan set made anew.
    env: Vec<Cow<'static, CStr>>,
    /// `args` and `env` as exec takes them, for the child of a held start, which may allocate nothing: pointers into
    /// the strings above (which never move: a `CString`'s bytes are on the heap, the process's own strings stay
    /// where they are), each list ending with a null.
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
    pub(in crate::exec) fn new(program: &Path, args: &[OsString], env: &Env) -> io::Result<Spawn> {
        let cstring = |bytes: &[u8]| CString::new(bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e));
        let program = cstring(program.as_os_str().as_bytes())?;
        let mut argv = Vec::with_capacity(args.len() + 1);
        argv.push(program.clone());
        for arg in args {
            argv.push(cstring(arg.as_bytes())?);
        }
        let env = env.for_exec().map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        Ok(Spawn::of(program, argv, env))
    }

    fn of(program: CString, args: Vec<CString>, env: Vec<Cow<'static, CStr>>) -> Spawn {
        fn pointers<C: AsRef<CStr>>(s: &[C]) -> Vec<*const libc::c_char> {
            s.iter().map(|c| c.as_ref().as_ptr()).chain([std::ptr::null()]).collect()
        }
        let (argv, envp) = (pointers(&args), pointers(&env));
        Spawn { program, args, env, argv, envp }
    }

    /// The same command run by the shell, as glibc's `execvp` (and so a shell, and the wrapper's own exec) runs a file
    /// the kernel cannot (ENOEXEC: a script without a `#!` line): `/bin/sh PROGRAM ARGS...`. `None` for the shell
    /// itself.
    fn by_the_shell(&self) -> Option<Spawn> {
        let shell = CString::from(c"/bin/sh");
        if self.program == shell {
            return None;
        }
        let args = [shell.clone(), self.program.clone()].into_iter().chain(self.args[1..].iter().cloned()).collect();
        Some(Spawn::of(shell, args, self.env.clone()))
    }

    /// Replace this process with it, the caller's dispositions of `signals::OWN_WRITES` and its closed standard streams
    /// given back first, the signal mask left as it is. Returns only if exec fails, with why, the wrapper's own footing
    /// taken again (`signals::set_up_process`).
    pub(in crate::exec) fn exec(&self) -> io::Error {
        let (ignored, closed) = signals::caller_state();
        let saved: Vec<_> = signals::OWN_WRITES
            .iter()
            .enumerate()
            .map(|(n, &signal)| {
                let action = if ignored & 1 << n != 0 { signals::Action::Ignore } else { signals::Action::Default };
                (signal, signals::set(signal, action))
            })
            .collect();
        for fd in (0..3).filter(|fd| closed & 1 << fd != 0) {
            let _ = nix::unistd::close(fd);
        }
        // As std's exec did, through glibc's execvp: a file the kernel cannot run (a script without a `#!` line) is
        // run by /bin/sh, as a shell runs it.
        let Err(errno) = nix::unistd::execvpe(&self.program, &self.args, &self.env);
        for (signal, old) in saved {
            signals::set(signal, signals::Action::Back(old));
        }
        signals::cover_closed_streams(closed);
        io::Error::from(errno)
    }

    /// Start it with `mask`, and `defaults` at their default action (K ignores them; the caller did not), in the
    /// process group of the one that starts it (K, then still in the caller's); its pid, or the errno of the failure.
    /// K's own dispositions are left as they are. A file the kernel cannot run is run by the shell, as exec runs it.
    pub(super) fn spawn(&self, mask: &SigSet, defaults: &SigSet) -> Result<Pid, i32> {
        let (_, closed) = signals::caller_state();
        let errno = |e: Errno| e as i32;
        let mut attr = PosixSpawnAttr::init().map_err(errno)?;
        attr.set_sigmask(mask).map_err(errno)?;
        attr.set_sigdefault(defaults).map_err(errno)?;
        attr.set_flags(PosixSpawnFlags::POSIX_SPAWN_SETSIGMASK | PosixSpawnFlags::POSIX_SPAWN_SETSIGDEF)
            .map_err(errno)?;
        let mut actions = PosixSpawnFileActions::init().map_err(errno)?;
        for fd in (0..3).filter(|fd| closed & 1 << fd != 0) {
            actions.add_close(fd).map_err(errno)?;
        }
        match nix::spawn::posix_spawn(self.program.as_c_str(), &actions, &attr, &self.args, &self.env) {
            Err(Errno::ENOEXEC) => self.by_the_shell().map_or(Err(libc::ENOEXEC), |sh| sh.spawn(mask, defaults)),
            started => started.map_err(errno),
        }
    }

    /// Start it as `spawn` does, held: a child that shares K's memory and stops K until its exec (as `posix_spawn`
    /// does, copying no memory) installs the filter of `crate::exec::hold`, sends its listener to K over a socket and
    /// execs nvcc, an exec the filter lets through by the address of the program's path. Every later exec of nvcc's
    /// programs waits for the listener's answer. nvcc's pid and the listener.
    pub(super) fn spawn_held(&self, mask: &SigSet, defaults: &SigSet) -> Result<(Pid, Listener), Unstarted> {
        match self.spawn_held_as_is(mask, defaults) {
            Err(Unstarted::Failed(libc::ENOEXEC)) => match self.by_the_shell() {
                Some(sh) => sh.spawn_held_as_is(mask, defaults),
                None => Err(Unstarted::Failed(libc::ENOEXEC)),
            },
            started => started,
        }
    }

    /// `spawn_held`, with no shell for a file the kernel cannot run.
    fn spawn_held_as_is(&self, mask: &SigSet, defaults: &SigSet) -> Result<(Pid, Listener), Unstarted> {
        let filter = Filter::new(self.program.as_ptr()).ok_or(Unstarted::Refused(libc::ENOSYS))?;
        let (_, closed) = signals::caller_state();
        let (ours, theirs) =
            nix::sys::socket::socketpair(AddressFamily::Unix, SockType::SeqPacket, None, SockFlag::SOCK_CLOEXEC)
                .map_err(|e| Unstarted::Refused(e as i32))?;
        // Which signals the child sets to their default action: the ones W handles (exec would reset them anyway,
        // and none may run there, on K's memory), and those K ignores for its own writes that nvcc gets at their
        // default.
        let mut to_default = [0 as libc::c_int; 64];
        let mut count = 0;
        for signal in Signal::iterator().filter(|s| FORWARDED.contains(s) || defaults.contains(*s)) {
            to_default[count] = signal as libc::c_int;
            count += 1;
        }
        let child = Child {
            spawn: self,
            mask: mask.as_ref(),
            to_default: &to_default[..count],
            closed,
            filter: &filter,
            socket: theirs.as_raw_fd(),
        };
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
        drop(theirs);
        if pid < 0 {
            return Err(Unstarted::Failed(failed));
        }
        let pid = Pid::from_raw(pid);
        // The child has exec'd or ended: what it said is on the socket, and its end is closed.
        match hold::receive(ours.as_fd()) {
            Ok(Said::Descriptor(fd)) => match hold::receive(ours.as_fd()) {
                Ok(Said::Errno(errno)) => Err(reaped(pid, Unstarted::Failed(errno))),
                _ => Ok((pid, Listener::new(fd))),
            },
            Ok(Said::Errno(errno)) => Err(reaped(pid, Unstarted::Refused(errno))),
            Ok(Said::Closed) | Err(_) => Err(reaped(pid, Unstarted::Refused(libc::EIO))),
        }
    }
}

/// The child's stack: what `held_child` needs (a message header and a few locals), with room to spare.
const CHILD_STACK: usize = 64 << 10;

/// What the child of a held start works from, made before it starts: it may allocate nothing.
struct Child<'a> {
    spawn: &'a Spawn,
    mask: &'a libc::sigset_t,
    to_default: &'a [libc::c_int],
    closed: u8,
    filter: &'a Filter,
    socket: libc::c_int,
}

/// `why`, once the child `pid` that failed has been reaped.
fn reaped(pid: Pid, why: Unstarted) -> Unstarted {
    // K's own child, which has ended or is about to.
    let _ = nix::sys::wait::waitpid(pid, None);
    why
}

/// The child of a held start (see `Spawn::spawn_held`): nvcc's dispositions and streams, the filter, its listener sent
/// to K, nvcc's mask, and exec; on a failure, its errno sent to K, and `_exit`. Only system calls, on memory made
/// before it started: it shares K's, and K waits, stopped, until it has exec'd or ended.
extern "C" fn held_child(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `Child` that `spawn_held` made and keeps alive until this child has exec'd or ended, and
    // every pointer in it (the strings of `Spawn`, the filter, the mask) with it. This child runs no other thread,
    // its signal actions and descriptors are its own (no CLONE_SIGHAND, no CLONE_FILES), and it makes only system
    // calls on that memory and on locals: no allocation, no lock, nothing of K's changed. It ends by exec or `_exit`.
    unsafe {
        let child = &*(arg as *const Child);
        let say = |errno: i32| -> ! {
            let bytes = errno.to_ne_bytes();
            libc::write(child.socket, bytes.as_ptr().cast(), bytes.len());
            libc::_exit(super::NOT_STARTED)
        };
        for &signal in child.to_default {
            libc::signal(signal, libc::SIG_DFL);
        }
        match hold::install(child.filter) {
            Ok(listener) => {
                if !hold::send(child.socket, listener) {
                    say(libc::EIO);
                }
                // Before the exec: a copy here would keep the listener alive if K died meanwhile.
                libc::close(listener);
            }
            Err(errno) => say(errno),
        }
        for fd in (0..3).filter(|fd| child.closed & 1 << fd != 0) {
            libc::close(fd);
        }
        libc::sigprocmask(libc::SIG_SETMASK, child.mask, std::ptr::null_mut());
        libc::execve(child.spawn.program.as_ptr(), child.spawn.argv.as_ptr(), child.spawn.envp.as_ptr());
        say(errno())
    }
}

fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The filter run on the kernel's own interpreter: a held start of `sh`, whose own exec runs without an answer
    /// (the filter knows it by its path's address), and whose program's exec then waits for one.
    #[test]
    fn the_first_exec_runs_and_the_next_one_waits() {
        if crate::probe::hold::check().is_err() {
            return;
        }
        let args = [OsString::from("-c"), OsString::from("exec /bin/true")];
        let env: Env = [("PATH", "/usr/bin:/bin")].into_iter().collect();
        let spawn = Spawn::new(Path::new("/bin/sh"), &args, &env).unwrap();
        let Ok((child, listener)) = spawn.spawn_held(&SigSet::empty(), &SigSet::empty()) else {
            panic!("the held start failed")
        };
        // sh's own exec of /bin/true waits, and nothing before it did.
        let held = listener.next().unwrap().expect("the second exec was not held");
        assert_eq!(held.pid, child);
        assert!(listener.waits(held.id));
        assert!(listener.let_run(held.id));
        let status = nix::sys::wait::waitpid(child, None).unwrap();
        assert_eq!(status, nix::sys::wait::WaitStatus::Exited(child, 0));
    }
}
