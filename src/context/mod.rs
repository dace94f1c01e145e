//! The process state the wrapper starts from: argv, environment, working directory and its own path.
//!
//! This is the only module that reads them from the OS (clippy.toml forbids `std::env` elsewhere). Every later step
//! receives a `Context`, so tests build one by hand and never touch the real environment.

use std::cell::OnceCell;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

pub mod dirs;
mod environment;
pub mod jobserver;
pub mod log;
pub mod problems;
pub use environment::Env;
pub use jobserver::Jobserver;

/// Environment variables the wrapper reads or sets. docs/reference/environment.md, made from src/checks/reference/,
/// lists the same names (a test fails on one it lacks).
pub mod vars {
    pub const CONFIG: &str = "NVCC_WRAPPER_CONFIG";
    pub const LOG: &str = "NVCC_WRAPPER_LOG";
    pub const DRY_RUN: &str = "NVCC_WRAPPER_DRY_RUN";
    pub const DISABLE: &str = "NVCC_WRAPPER_DISABLE";
    pub const DEPTH: &str = "NVCC_WRAPPER_DEPTH";
    /// Override the config's `launcher` (a compiler cache the wrapper runs nvcc through).
    pub const LAUNCHER: &str = "NVCC_WRAPPER_LAUNCHER";
    /// Override `[gpu] capabilities` (`8.6;9.0a`, `86,90a`, `sm_86 sm_90a`).
    pub const CAPABILITIES: &str = "NVCC_WRAPPER_CAPABILITIES";
    /// Override `[gpu] forward-compat` (a switch).
    pub const FORWARD_COMPAT: &str = "NVCC_WRAPPER_FORWARD_COMPAT";
    /// Override `[gpu] compress-fatbin` (a switch).
    pub const COMPRESS_FATBIN: &str = "NVCC_WRAPPER_COMPRESS_FATBIN";
    /// Override `depfile-inputs` (a switch).
    pub const DEPFILE_INPUTS: &str = "NVCC_WRAPPER_DEPFILE_INPUTS";
    /// Override `reproducible` (a switch).
    pub const REPRODUCIBLE: &str = "NVCC_WRAPPER_REPRODUCIBLE";
    /// Override `threads` (the most threads nvcc may run one call's GPU targets with).
    pub const THREADS: &str = "NVCC_WRAPPER_THREADS";
    /// Override `threads-follow` (threads taken and given back while nvcc runs).
    pub const THREADS_FOLLOW: &str = "NVCC_WRAPPER_THREADS_FOLLOW";
    /// GNU make's flags for its children, where a jobserver is named (`--jobserver-auth=R,W` or `fifo:PATH`); also
    /// read under the names `MFLAGS` and `CARGO_MAKEFLAGS`, as make and cargo pass them.
    pub const MAKEFLAGS: &str = "MAKEFLAGS";
    /// Override `[target] system`, `platform`, `sysroot`, `cuda-root` and `cuda-compat` (paths must be absolute).
    pub const TARGET_SYSTEM: &str = "NVCC_WRAPPER_TARGET_SYSTEM";
    pub const TARGET_PLATFORM: &str = "NVCC_WRAPPER_TARGET_PLATFORM";
    pub const TARGET_SYSROOT: &str = "NVCC_WRAPPER_TARGET_SYSROOT";
    pub const TARGET_CUDA_ROOT: &str = "NVCC_WRAPPER_TARGET_CUDA_ROOT";
    pub const TARGET_CUDA_COMPAT: &str = "NVCC_WRAPPER_TARGET_CUDA_COMPAT";
    /// nvcc's own channels, read so that flags given through them count as given.
    pub const NVCC_PREPEND_FLAGS: &str = "NVCC_PREPEND_FLAGS";
    pub const NVCC_APPEND_FLAGS: &str = "NVCC_APPEND_FLAGS";
    pub const NVCC_CCBIN: &str = "NVCC_CCBIN";
    pub const PATH: &str = "PATH";
    /// The probe cache: a switch (on unless `0`), and its directory (default `$XDG_CACHE_HOME/nvcc-wrapper/probes`,
    /// else `$HOME/.cache/nvcc-wrapper/probes`).
    pub const PROBE_CACHE: &str = "NVCC_WRAPPER_PROBE_CACHE";
    pub const PROBE_CACHE_DIR: &str = "NVCC_WRAPPER_PROBE_CACHE_DIR";
    pub const XDG_CACHE_HOME: &str = "XDG_CACHE_HOME";
    /// Where the user's configuration file is (`$XDG_CONFIG_HOME/nvcc-wrapper/config.toml`, else
    /// `$HOME/.config/nvcc-wrapper/config.toml`).
    pub const XDG_CONFIG_HOME: &str = "XDG_CONFIG_HOME";
    /// A switch: on, the machine's configuration file (`/etc/nvcc-wrapper/config.toml`) is not looked at.
    pub const NO_MACHINE_CONFIG: &str = "NVCC_WRAPPER_NO_MACHINE_CONFIG";
    /// The project's scripts' and tests' own: the wrapper never reads them, but knows them (`OWN`).
    pub const SCRIPTS_CACHE: &str = "NVCC_WRAPPER_CACHE";
    pub const SCRIPTS_SKIP_MISSING: &str = "NVCC_WRAPPER_SKIP_MISSING";
    pub const SCRIPTS_UPDATE_REFERENCE: &str = "NVCC_WRAPPER_UPDATE_REFERENCE";
    pub const SCRIPTS_DEBIAN_MIRROR: &str = "NVCC_WRAPPER_DEBIAN_MIRROR";

    /// Every `NVCC_WRAPPER_*` name the project gives a meaning: another is a typo or a guess, which the wrapper
    /// warns about (`config::env::unknown_variables`) rather than ignore. docs/reference/environment.md lists each.
    pub const OWN: &[&str] = &[
        CONFIG,
        LOG,
        DRY_RUN,
        DISABLE,
        DEPTH,
        LAUNCHER,
        CAPABILITIES,
        FORWARD_COMPAT,
        COMPRESS_FATBIN,
        DEPFILE_INPUTS,
        REPRODUCIBLE,
        THREADS,
        THREADS_FOLLOW,
        TARGET_SYSTEM,
        TARGET_PLATFORM,
        TARGET_SYSROOT,
        TARGET_CUDA_ROOT,
        TARGET_CUDA_COMPAT,
        PROBE_CACHE,
        PROBE_CACHE_DIR,
        NO_MACHINE_CONFIG,
        SCRIPTS_CACHE,
        SCRIPTS_SKIP_MISSING,
        SCRIPTS_UPDATE_REFERENCE,
        SCRIPTS_DEBIAN_MIRROR,
    ];
    pub const HOME: &str = "HOME";
    /// A Nix build's own directory (set by Nix's builder), and the mark of `nix-shell` (which sets both).
    pub const NIX_BUILD_TOP: &str = "NIX_BUILD_TOP";
    pub const IN_NIX_SHELL: &str = "IN_NIX_SHELL";
    pub const TMPDIR: &str = "TMPDIR";
    /// What a real nvcc sets, from its `nvcc.profile`, for every program it runs: its own directory (measured with a
    /// `-ccbin` script that records its environment, on 12.4.131 and 13.5.37).
    pub const NVCC_HERE: &str = "_HERE_";
}

/// The search path when `PATH` is unset, as glibc's `execvp` and coreutils' `env` have it.
pub const DEFAULT_PATH: &str = "/bin:/usr/bin";

#[derive(Debug, Clone)]
pub struct Context {
    /// `argv[0]` exactly as the caller gave it (a bare name, a relative or an absolute path).
    pub argv0: OsString,
    /// `argv[1..]`.
    pub args: Vec<OsString>,
    pub env: Env,
    pub cwd: PathBuf,
    /// The wrapper's own executable, symlinks resolved by the OS, asked of it on first use (`current_exe()`): empty
    /// only in the process's own context; a context made by hand has none unless it is given one.
    pub current_exe: OnceCell<Option<PathBuf>>,
    /// The file the kernel was asked to run, as the caller's `execve` named it (`AT_EXECFN`; a shell names the match
    /// it found on PATH), against the working directory; `None` in a context made by hand.
    pub executed: Option<PathBuf>,
    /// The wrapper's process id: nvcc's too when the wrapper execs it.
    pub pid: u32,
    /// The kernel's limit on a program's arguments and environment together (`sysconf(_SC_ARG_MAX)`, which follows
    /// the stack's limit); 0 when it cannot tell.
    pub arg_max: u64,
    /// The job slots a build shares (GNU make's jobserver, or `nvcc-wrapper jobserver`'s), as the environment names
    /// them.
    pub jobserver: Jobserver,
}

/// A context made by hand (tests, benchmarks): nothing in it, and no executable of its own.
impl Default for Context {
    fn default() -> Context {
        Context {
            argv0: OsString::new(),
            args: Vec::new(),
            env: Env::default(),
            cwd: PathBuf::new(),
            current_exe: OnceCell::from(None),
            executed: None,
            pid: 0,
            arg_max: 0,
            jobserver: Jobserver::default(),
        }
    }
}

impl Context {
    #[allow(clippy::disallowed_methods)]
    pub fn from_process() -> Context {
        let mut argv = std::env::args_os();
        let argv0 = argv.next().unwrap_or_default();
        let env = Env::from_process();
        // First: before anything opens a descriptor that could take the number of one MAKEFLAGS names.
        let jobserver = Jobserver::from_process(&env);
        // A deleted working directory leaves relative paths unresolvable; "." keeps them relative.
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        Context {
            argv0,
            args: argv.collect(),
            env,
            current_exe: OnceCell::new(),
            executed: executed_file().map(|file| cwd.join(file)),
            cwd,
            pid: std::process::id(),
            // SAFETY: sysconf only reads a limit.
            arg_max: u64::try_from(unsafe { libc::sysconf(libc::_SC_ARG_MAX) }).unwrap_or(0),
            jobserver,
        }
    }

    /// The wrapper's own executable, symlinks resolved (`/proc/self/exe`, else the file the kernel was asked to run,
    /// resolved); `None` when the OS cannot tell. Read on first use: a drop-in call whose config is found beside the
    /// path it was started through never needs it (a `readlink` in /proc, the costliest system call of such a call).
    pub fn current_exe(&self) -> Option<&Path> {
        let read = || {
            #[allow(clippy::disallowed_methods)]
            let exe = std::env::current_exe().ok();
            exe.or_else(|| std::fs::canonicalize(self.executed.as_ref()?).ok())
        };
        self.current_exe.get_or_init(read).as_deref()
    }

    /// What the file this process runs is: the file the kernel was asked to run (one `stat`, following links), else
    /// `current_exe()`; `None` when neither can be looked at.
    pub fn own_file(&self) -> Option<std::fs::Metadata> {
        let executed = self.executed.as_ref().and_then(|file| std::fs::metadata(file).ok());
        executed.or_else(|| std::fs::metadata(self.current_exe()?).ok())
    }

    /// The bytes of this call's arguments (argv[0] included) and environment as the kernel counts them: each string
    /// with its NUL, and a pointer to it.
    pub fn given_bytes(&self) -> u64 {
        let pointer = std::mem::size_of::<usize>() as u64;
        let args = std::iter::once(&self.argv0).chain(&self.args).map(|a| a.len() as u64 + 1 + pointer);
        let env = self.env.iter().map(|(k, v)| k.len() as u64 + v.len() as u64 + 2 + pointer);
        args.chain(env).sum::<u64>() + 2 * pointer
    }

    /// The name the wrapper was called by (`nvcc`, `nvcc-wrapper`), without its directory.
    pub fn invoked_name(&self) -> &OsStr {
        Path::new(&self.argv0).file_name().unwrap_or(&self.argv0)
    }

    /// The directories to search for programs: `PATH`, or when it is unset the default `execvp` and `env` use
    /// (`confstr(_CS_PATH)` on Linux), never the working directory, which bash alone searches then.
    pub fn search_path(&self) -> &OsStr {
        self.env.get(vars::PATH).unwrap_or(OsStr::new(DEFAULT_PATH))
    }

    /// Resolve a path the user wrote relative to the working directory.
    pub fn absolute(&self, path: &Path) -> PathBuf {
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.cwd.join(path)
        }
    }
}

/// The file the kernel was asked to run (`AT_EXECFN`: the path the caller's `execve` named), as given. It is the
/// wrapper's own file even where `/proc` cannot be read, which `current_exe` reads: without one, the wrapper would not
/// know itself on PATH and would run itself as the real nvcc.
fn executed_file() -> Option<PathBuf> {
    // SAFETY: getauxval only reads the auxiliary vector; AT_EXECFN, when present, points at a NUL-terminated string
    // the kernel put on the stack for the life of the process.
    let name = unsafe {
        let at = libc::getauxval(libc::AT_EXECFN) as *const libc::c_char;
        if at.is_null() {
            return None;
        }
        std::ffi::CStr::from_ptr(at)
    };
    Some(PathBuf::from(<OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(name.to_bytes())))
}
