//! nvcc's command as K starts it: `posix_spawn`, which copies no memory, with what exec would give nvcc.

use std::ffi::{CString, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::context::Env;

/// nvcc's command, ready for `posix_spawn` (a vfork, which copies no memory): argv[0] the program's path, exactly
/// `env`, the caller's SIGPIPE disposition and its closed standard streams, as `super::command` gives exec.
pub(super) struct Spawn {
    program: CString,
    /// Owners of the strings `argv` and `envp` point into.
    _strings: Vec<CString>,
    argv: Vec<*const libc::c_char>,
    envp: Vec<*const libc::c_char>,
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

    /// Start it with `mask`, in the process group of the one that starts it (K, then still in the caller's); its
    /// pid, or the errno of the failure.
    pub(super) fn spawn(&self, mask: &libc::sigset_t) -> Result<libc::pid_t, i32> {
        let (sigpipe_ignored, closed) = crate::exec::caller_state();
        // SAFETY: the attribute and file-action objects are initialised before use and destroyed after; every
        // pointer handed to posix_spawn points into `self`, which outlives the call; signal() changes only this
        // process's SIGPIPE disposition, which the child inherits (an ignored signal stays ignored across exec).
        unsafe {
            libc::signal(libc::SIGPIPE, if sigpipe_ignored { libc::SIG_IGN } else { libc::SIG_DFL });
            let mut attr: libc::posix_spawnattr_t = std::mem::zeroed();
            let mut actions: libc::posix_spawn_file_actions_t = std::mem::zeroed();
            libc::posix_spawnattr_init(&mut attr);
            libc::posix_spawn_file_actions_init(&mut actions);
            libc::posix_spawnattr_setsigmask(&mut attr, mask);
            libc::posix_spawnattr_setflags(&mut attr, libc::POSIX_SPAWN_SETSIGMASK as libc::c_short);
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
}
