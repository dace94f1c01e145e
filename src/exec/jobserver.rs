//! The server side of a jobserver (the client, which every call reads from `MAKEFLAGS`, is `context::jobserver`; what a
//! call lends nvcc from it is `exec::lend`). `nvcc-wrapper jobserver -j N -- COMMAND`: a build run under a jobserver of
//! N slots that this process serves, for build tools that have none of their own to lend (Ninja, and so CMake's and
//! Meson's Ninja builds, and Nix's ninja hook). It is GNU make's protocol: a FIFO holding N-1 one-byte tokens (the
//! command's own first job needs none), named to the command's whole tree in `MAKEFLAGS` in the two forms its clients
//! read:
//!
//! `-jN --jobserver-auth=fifo:PATH --jobserver-a=R,W`
//!
//! GNU make 4.3 knows only descriptors (`R,W`) and stops at `fifo:`; Ninja 1.13 knows only the FIFO and ignores
//! descriptors; each takes the last jobserver option it recognises. make reads options with `getopt_long`, which takes
//! `--jobserver-a` as the unambiguous abbreviation of `--jobserver-auth`, while Ninja (and the wrapper's own client,
//! `context::jobserver`) match the full name only: so make 4.3 and 4.4 use R and W, which are the same FIFO opened
//! twice and passed down, and Ninja uses the FIFO by its path. One set of N slots is shared by the build tool, the
//! makes and Ninjas below it, and nvcc's threads (`plan::threads`), and the machine is never oversubscribed. Measured
//! with Debian 12's make 4.3, make 4.4 and 4.4.1, and Ninja 1.13.0 (upstream and PyPI's), each as the command and as a
//! make below Ninja.
//!
//! The FIFO is in a private directory (mode 0700) under `$TMPDIR` (else `/tmp`, and `/tmp` too when `$TMPDIR` holds a
//! blank, which `MAKEFLAGS` cannot carry), held open by this process for the build's whole run (its tokens would be
//! lost when the last process closing it went), and removed after. The command runs as the wrapper's child through
//! `child::run` (it dies with this process; signals sent here reach it).

use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::problems::{Program, Refused};
use crate::context::{vars, Context};
use crate::error::{Error, Result};

/// MAKEFLAGS for the command: `-jN --jobserver-auth=fifo:PATH --jobserver-a=R,W` (see the module's header), then
/// what the caller's MAKEFLAGS held, less any jobserver or job count of its own (that one would name another set of
/// slots).
pub fn makeflags(jobs: u32, fifo: &Path, (read, write): (i32, i32), caller: Option<&OsStr>) -> OsString {
    let mut flags = OsString::from(format!("-j{jobs} --jobserver-auth=fifo:"));
    flags.push(fifo);
    flags.push(format!(" --jobserver-a={read},{write}"));
    for word in caller.map(|c| c.as_bytes()).unwrap_or_default().split(|b| *b == b' ').filter(|w| !w.is_empty()) {
        let ours = word.starts_with(b"--jobserver-")
            || (word.starts_with(b"-j") && word[2..].iter().all(u8::is_ascii_digit))
            || word == b"-j";
        if !ours {
            flags.push(" ");
            flags.push(OsStr::from_bytes(word));
        }
    }
    flags
}

/// Run `command` under a jobserver of `jobs` slots; its exit code, or it ends the wrapper by its signal.
pub fn serve(ctx: &Context, jobs: u32, command: &[OsString]) -> Result<i32> {
    let base = ctx
        .env
        .non_empty(vars::TMPDIR)
        .filter(|t| !t.as_bytes().iter().any(|b| b.is_ascii_whitespace()))
        .map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
    let failed = |what: &str, err: std::io::Error| {
        Error::from(Refused::JobserverSetUp { what: what.to_string(), base: base.clone(), err })
    };
    let (program, args) = command.split_first().ok_or(Refused::NoCommand)?;
    let path = ctx.search_path().to_os_string();
    // which's own words (`cannot find binary path`) name neither the program nor where it was looked for.
    let program = which::which_in(program, Some(&path), &ctx.cwd).map_err(|_| Refused::NoBuildTool {
        given: program.clone(),
        a_path: Path::new(program).components().count() > 1,
    })?;
    refuse_a_ninja_that_ignores_it(&program, args)?;
    let dir = base.join(format!("nvcc-wrapper-jobserver-{}", ctx.pid));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::DirBuilder::new().mode(0o700).create(&dir).map_err(|e| failed(&crate::error::shell::path(&dir), e))?;
    let fifo = dir.join("slots");
    let result = (|| -> Result<std::process::ExitStatus> {
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRUSR | nix::sys::stat::Mode::S_IWUSR)
            .map_err(|e| failed("mkfifo", e.into()))?;
        // Read and write: never blocks on open, and keeps the tokens while the build runs.
        let mut held = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo)
            .map_err(|e| failed("opening the FIFO", e))?;
        let free = holds(&held, jobs.saturating_sub(1)).map_err(|most| Refused::TooManySlots { jobs, most })?;
        let tokens = vec![b'+'; free];
        held.write_all(&tokens).map_err(|e| failed("writing its tokens", e))?;
        // The descriptors make reads: the FIFO opened for reading and for writing (neither waits, as `held` is both
        // ends), blocking, as make's own pipe is, and left open across exec for the command's whole tree.
        let end = |flags: nix::fcntl::OFlag| -> Result<std::os::fd::OwnedFd> {
            nix::fcntl::open(&fifo, flags, nix::sys::stat::Mode::empty())
                .map_err(|e| failed("opening the FIFO for make", e.into()))
        };
        let (read, write) = (end(nix::fcntl::OFlag::O_RDONLY)?, end(nix::fcntl::OFlag::O_WRONLY)?);
        use std::os::fd::AsRawFd;
        let mut env = ctx.env.clone();
        let ends = (read.as_raw_fd(), write.as_raw_fd());
        env.set(vars::MAKEFLAGS, makeflags(jobs, &fifo, ends, ctx.env.get(vars::MAKEFLAGS)));
        tracing::debug!("jobserver: {jobs} slots in {}", crate::error::shell::path(&fifo));
        let status = super::child::run(&program, args, &env, None, None).map_err(|err| Refused::CannotRun {
            program: Program::BuildTool,
            path: program.clone(),
            err,
        })?;
        let mut left = Vec::new();
        let _ = held.read_to_end(&mut left);
        if left.len() != tokens.len() {
            tracing::debug!("jobserver: {} of {} tokens came back", left.len(), tokens.len());
        }
        Ok(status)
    })();
    let _ = std::fs::remove_file(&fifo);
    let _ = std::fs::remove_dir(&dir);
    super::end_as(result?)
}

/// Make the FIFO hold `free` tokens, one byte each: a pipe holds 64 KiB unless made larger (`F_SETPIPE_SZ`, up to
/// `/proc/sys/fs/pipe-max-size` but for root). `free` as a count, or the most it can hold.
fn holds(fifo: &std::fs::File, free: u32) -> std::result::Result<usize, usize> {
    use nix::fcntl::{fcntl, FcntlArg};
    let size = fcntl(fifo, FcntlArg::F_GETPIPE_SZ).ok().and_then(|size| usize::try_from(size).ok()).unwrap_or(0);
    if free as usize <= size {
        return Ok(free as usize);
    }
    // Fails, changing nothing, beyond the kernel's limits.
    let grown = i32::try_from(free).map_or(-1, |want| fcntl(fifo, FcntlArg::F_SETPIPE_SZ(want)).unwrap_or(-1));
    match usize::try_from(grown) {
        Ok(grown) if grown >= free as usize => Ok(free as usize),
        _ => {
            let max = std::fs::read_to_string("/proc/sys/fs/pipe-max-size").ok().and_then(|t| t.trim().parse().ok());
            Err(max.unwrap_or(size).max(size))
        }
    }
}

/// Ninja takes part in a jobserver from 1.13 on, and only without a `-j` of its own (Ninja 1.11 and 1.12 know none,
/// and with `-j` any Ninja runs that many jobs): otherwise the build would run Ninja's own count of jobs while the
/// wrapper's calls also take the slots as threads, more at once than asked. A command that is Ninja by its name
/// (`ninja`, `ninja-build`) or by the file its links lead to (`./ninja-old` made a link to Debian's) and would is
/// refused, saying why; one whose version cannot be read is run as given, and so is a program that starts Ninja
/// itself (`env ninja`, a script): what it runs cannot be known before (issue 48, decided).
fn refuse_a_ninja_that_ignores_it(program: &Path, args: &[OsString]) -> Result<()> {
    let is_ninja =
        |path: &Path| path.file_name().is_some_and(|n| n.as_bytes() == b"ninja" || n.as_bytes() == b"ninja-build");
    if !is_ninja(program) && !std::fs::canonicalize(program).is_ok_and(|target| is_ninja(&target)) {
        return Ok(());
    }
    let own_jobs = args
        .iter()
        .map(|a| a.as_bytes())
        .find(|a| a.strip_prefix(b"-j").is_some_and(|n| n.is_empty() || n.iter().all(u8::is_ascii_digit)));
    if let Some(jobs) = own_jobs {
        let jobs = String::from_utf8_lossy(jobs).into_owned();
        return Err(Refused::NinjaJobs { path: program.to_path_buf(), jobs }.into());
    }
    let Some(version) = crate::probe::ninja::version(program) else { return Ok(()) };
    if version < (1, 13) {
        return Err(Refused::OldNinja { path: program.to_path_buf(), version }.into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_commands_makeflags_name_this_jobserver_and_keep_the_callers_other_flags() {
        let fifo = Path::new("/tmp/nvcc-wrapper-jobserver-7/slots");
        assert_eq!(
            makeflags(16, fifo, (5, 6), None),
            "-j16 --jobserver-auth=fifo:/tmp/nvcc-wrapper-jobserver-7/slots --jobserver-a=5,6"
        );
        let caller = OsStr::new("k -j4 --jobserver-auth=3,4 --no-print-directory -j");
        assert_eq!(
            makeflags(8, fifo, (3, 4), Some(caller)),
            "-j8 --jobserver-auth=fifo:/tmp/nvcc-wrapper-jobserver-7/slots --jobserver-a=3,4 k --no-print-directory"
        );
        // The wrapper's own client reads the FIFO, as Ninja does: the abbreviation is make's alone.
        let claim = crate::context::jobserver::Claim::parse(makeflags(4, fifo, (3, 4), None).as_bytes());
        assert_eq!(claim, Some(crate::context::jobserver::Claim::Fifo(fifo.as_os_str().as_bytes().to_vec())));
    }
}
