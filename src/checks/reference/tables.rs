//! The words of the reference: what each exit code, variable, config key and file means. The code's own tables say
//! which exist; this file says what they do, and `super::tests` checks that nothing is missing.

use crate::config::{HostKey, Key as ConfigKey};
use crate::context::vars;
use crate::error::ErrorKind;

/// What an exit code means to the user. Exhaustive: a new `ErrorKind` does not compile without its words.
pub fn exit_meaning(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::ClosedOutput => {
            "the reader of the wrapper's output went away (`| head`): not an error, nothing is said"
        }
        ErrorKind::Usage => "the wrapper's own command line (`nvcc-wrapper ...`) is wrong, a Ninja given to `nvcc-wrapper jobserver` included that would ignore the jobserver (older than 1.13, or with a `-j` of its own)",
        ErrorKind::CheckFailed => {
            "a check you asked for found problems (`compat scan` disagrees with the table, `doctor` found problems)"
        }
        ErrorKind::Environment => {
            "an `NVCC_WRAPPER_*` variable has a value the wrapper cannot use (a target, or a sysroot, CUDA root or \
             cuda-compat directory that does not exist or, for a sysroot or cuda-compat, whose path nvcc would not \
             pass on unchanged, included)"
        }
        ErrorKind::Request => {
            "the request cannot be built by this nvcc: a GPU capability it does not accept, two it refuses together \
             (compat-data/combinations.toml), a Jetson capability for a non-Jetson target (or the reverse), a target \
             platform this release does not ship, a target without CUDA files (no `TOP/targets/<dir>`, no \
             `cuda-root`), or a GPU target to `replace` inside an options file named in `NVCC_*_FLAGS`"
        }
        ErrorKind::OptionsFile => {
            "an options file (`-optf`) is missing, unreadable, or includes itself (one that is not a regular file or \
             is too large to read is left to nvcc, not an error)"
        }
        ErrorKind::HostCompiler => {
            "no host compiler that this nvcc accepts was found, or, for a cross build, none for the target at all, or \
             one (configured or given by `-ccbin`) that builds for another machine, or host LTO with a compiler other \
             than the stdenv one under `lto-mismatch = \"error\"`"
        }
        ErrorKind::Internal => "an internal error (a bug: please report it)",
        ErrorKind::Launcher => {
            "the launcher (`launcher`, `NVCC_WRAPPER_LAUNCHER`) is not on PATH or is not an executable file; nvcc is \
             not run"
        }
        ErrorKind::Output => {
            "what the wrapper itself writes (`explain`, `doctor`, `gencode`, `compat scan`, a dry run and the options \
             file a dry run rewrites) could not be written, say to a full disk (a dependency file it cannot complete \
             is a warning: nvcc's own file is kept)"
        }
        ErrorKind::Config => {
            "the configuration file is missing, unreadable (not a regular file, or larger than 1 MiB, included) or \
             invalid, or names a `sysroot` or `cuda-root` that does not exist, or a `cuda-compat` without `libcuda.so`, \
             or a `sysroot` or `cuda-compat` whose path nvcc would not pass on unchanged (a blank, comma, colon, quote \
             or shell character)"
        }
        ErrorKind::Loop => {
            "the wrapper would run itself (a loop through other builds of the wrapper, or through a host compiler that \
             calls nvcc; a `launcher` that is the wrapper)"
        }
        ErrorKind::CannotExec => "the real nvcc (or the launcher) was found but could not be started",
        ErrorKind::NotFound => "no real nvcc was found, or no program `nvcc-wrapper jobserver` was asked to run (as a shell's 127 for a command it cannot find)",
    }
}

/// Every variable the wrapper (or its scripts and tests) reads or sets, and what it does. A variable that replaces a
/// config key (`config::OVERRIDES`) gets the key and what it takes from that table; its words here only add to them.
pub const VARIABLES: &[(&str, &str)] = &[
    (vars::CONFIG, "path of the configuration file (empty: the same as unset)"),
    (
        vars::LOG,
        "a log filter: a level (`debug`, `trace`) or `target=level` directives, comma-separated (anything else is an \
         error, exit 64): log what `explain` would print for the call, on stderr as `nvcc-wrapper[DEBUG]: ...`",
    ),
    (
        vars::DRY_RUN,
        "`1`: print the final command, shell-quoted, on stdout and exit 0 without running it (preceded by \
         `NAME=value` for a variable the wrapper changes for nvcc)",
    ),
    (
        vars::DISABLE,
        "`1`: run the real nvcc with the arguments untouched; nothing is parsed or added (the config file is still \
         read for `nvcc`, and a broken one is still an error)",
    ),
    (vars::DEPTH, "set by the wrapper on every exec, to stop loops; do not set it yourself"),
    (vars::LAUNCHER, "a path or a bare name looked up on PATH"),
    (vars::CAPABILITIES, ""),
    (vars::FORWARD_COMPAT, ""),
    (vars::COMPRESS_FATBIN, "the Nix setup hook sets it to `0` for a derivation with `dontCompressFatbin`"),
    (vars::DEPFILE_INPUTS, ""),
    (vars::REPRODUCIBLE, ""),
    (vars::THREADS, ""),
    (vars::THREADS_FOLLOW, ""),
    (vars::TARGET_SYSTEM, ""),
    (vars::TARGET_PLATFORM, ""),
    (vars::TARGET_SYSROOT, ""),
    (vars::TARGET_CUDA_ROOT, ""),
    (vars::TARGET_CUDA_COMPAT, ""),
    (vars::PROBE_CACHE, "a switch for the probe cache; on when unset or empty"),
    (
        vars::PROBE_CACHE_DIR,
        "the probe cache's directory (relative: to the working directory; empty: the same as unset); default \
         `$XDG_CACHE_HOME/nvcc-wrapper/probes`, else `~/.cache/nvcc-wrapper/probes`",
    ),
    (
        vars::XDG_CACHE_HOME,
        "where the wrapper's cache directory is (`$XDG_CACHE_HOME/nvcc-wrapper`): used only when absolute and an \
         existing directory; the wrapper never creates it",
    ),
    (
        vars::XDG_CONFIG_HOME,
        "where the user's configuration file is (`$XDG_CONFIG_HOME/nvcc-wrapper/config.toml`): used only when \
         absolute, else `~/.config`",
    ),
    (
        vars::NO_MACHINE_CONFIG,
        "a switch: on, the machine's `/etc/nvcc-wrapper/config.toml` is not looked at (as git's \
         `GIT_CONFIG_NOSYSTEM`); with `XDG_CONFIG_HOME` pointed at a directory of its own, a script or a test suite \
         reads no configuration file it did not write. The test suite sets both",
    ),
    (
        vars::HOME,
        "`$HOME/.cache/nvcc-wrapper` is the cache directory when `XDG_CACHE_HOME` gives none: used only when `HOME` is \
         an existing directory, which the wrapper never creates (Nix's `/homeless-shelter`); with neither, there is no \
         probe cache. `$HOME/.config/nvcc-wrapper/config.toml` is the user's configuration file when \
         `XDG_CONFIG_HOME` gives none",
    ),
    (
        vars::NIX_BUILD_TOP,
        "read: with it set (a Nix build) and `IN_NIX_SHELL` unset, the wrapper writes only under \
         `$NIX_BUILD_TOP/.nvcc-wrapper` and reads no user or machine configuration file",
    ),
    (vars::IN_NIX_SHELL, "read: set by `nix-shell`, where the wrapper writes as outside Nix"),
    (
        vars::TMPDIR,
        "where the private directory `nvcc-wrapper-UID` goes when there is no cache directory (default `/tmp`)",
    ),
    (
        vars::NVCC_HERE,
        "read: a real nvcc sets it for every program it runs; a loop that finds it is blamed on a host compiler or \
         `-run` program that calls nvcc",
    ),
    (
        vars::MAKEFLAGS,
        "read (also as `MFLAGS`, then `CARGO_MAKEFLAGS`: make's first, the nearer where both name one): a jobserver it names (`--jobserver-auth=R,W` from GNU make's \
         `+` rules, `fifo:PATH` from make 4.4 or `nvcc-wrapper jobserver`) lends free job slots to calls with several \
         GPU targets as nvcc threads",
    ),
    (
        vars::PATH,
        "where the real nvcc and compilers are looked for; unset, `/bin:/usr/bin` (as `execvp` and `env` do), never \
         the working directory",
    ),
    (
        vars::NVCC_PREPEND_FLAGS,
        "nvcc's own: read so that what it gives counts as given (split at space and tab only, as nvcc splits it), \
         and passed on (`arch-flags = \"replace\"` takes GPU targets out of it; behind a launcher, its words move \
         onto the command line)",
    ),
    (vars::NVCC_APPEND_FLAGS, "nvcc's own, as `NVCC_PREPEND_FLAGS`"),
    (
        vars::NVCC_CCBIN,
        "nvcc's own host compiler (12.5 on): counts as given; also passed as `-ccbin=` to releases before 12.5, which \
         ignore it, unless it names no program or a compiler the release rejects: then the wrapper ignores it too, \
         with a warning, and chooses the host compiler itself",
    ),
    (
        vars::SCRIPTS_CACHE,
        "(scripts and tests) their download cache: real toolkits, tools, Nix; default `~/.cache/nvcc-wrapper`. The wrapper never reads it: its own cache is the probe cache (`NVCC_WRAPPER_PROBE_CACHE_DIR`)",
    ),
    (
        vars::SCRIPTS_SKIP_MISSING,
        "(tests) `1`: a real-toolchain test skips what this machine lacks (a toolkit, a compiler, root) instead of failing; each skip is said on stderr and counted in a line after the test binary's summary. CI never sets it",
    ),
    (
        vars::SCRIPTS_UPDATE_REFERENCE,
        "(tests) `1`: `cargo test --lib reference` writes the reference pages, the man page and makeNvccWrapper's answers.json from \
         the code instead of failing on a difference",
    ),
    (
        vars::SCRIPTS_DEBIAN_MIRROR,
        "(scripts) the Debian mirror the scripts fetch cross sysroots and Nix's installer's packages from; default \
         `http://deb.debian.org/debian`",
    ),
];

/// A config key, as the reference shows it.
pub struct KeyRow {
    pub key: ConfigKey,
    /// Its type and default, in words.
    pub kind: &'static str,
    pub meaning: &'static str,
    /// A value that parses, for the test that every row names a real key.
    pub example: &'static str,
}

/// Every key of the config file.
pub const KEYS: &[KeyRow] = &[
    KeyRow {
        key: ConfigKey::Nvcc,
        kind: "path; default: the first `nvcc` on PATH that is not the wrapper",
        meaning: "the real nvcc to run; a program that says it is another (`gcc --version`'s line) is an error \
                  naming this line",
        example: "\"/opt/cuda/bin/nvcc\"",
    },
    KeyRow {
        key: ConfigKey::CudaVersion,
        kind: "`\"12.4\"`; default: probed",
        meaning: "the NVCC release, so it need not be probed (nvcc is not run); where the toolkit's `version.json` \
                  says another release (a toolkit upgraded under an old config), the toolkit's is used, with a warning",
        example: "\"12.4\"",
    },
    KeyRow {
        key: ConfigKey::CompatData,
        kind: "path",
        meaning: "a directory whose tables replace the compatibility data built into the binary",
        example: "\"compat\"",
    },
    KeyRow {
        key: ConfigKey::Launcher,
        kind: "path, or a bare name looked up on PATH; default: none",
        meaning:
            "a compiler cache (`ccache`, `sccache`) that runs the real nvcc with the final arguments, so that its \
                  key covers what the wrapper added",
        example: "\"ccache\"",
    },
    KeyRow {
        key: ConfigKey::DepfileInputs,
        kind: "bool; default `true`",
        meaning: "add the files the wrapper decides from to the dependency file a call writes, so that Make and \
                  Ninja rebuild when they change",
        example: "true",
    },
    KeyRow {
        key: ConfigKey::Reproducible,
        kind: "bool; default `true`",
        meaning: "add the flags that make nvcc's outputs the same bytes for the same inputs, for the releases and \
                  host compilers measured (compat-data/reproducible.toml)",
        example: "true",
    },
    KeyRow {
        key: ConfigKey::Threads,
        kind: "whole number from 1; default: the call's GPU targets",
        meaning: "the most threads nvcc may run one call's GPU targets with (`--threads N`), taken without waiting \
                  from free job slots of the build's jobserver and only when the memory free holds them at the peak \
                  measured per release (compat-data/threads.toml); `1` turns it off",
        example: "4",
    },
    KeyRow {
        key: ConfigKey::ThreadsFollow,
        kind: "bool; default `true`",
        meaning: "let a call's threads follow the build while nvcc runs: nvcc gets a thread for each GPU target, no \
                  more of its work runs at once than the job slots the call holds, slots that free become threads \
                  at once and slots it no longer uses go back (docs/guide/threads.md); `false` takes them from the \
                  slots free when nvcc starts instead. Never behind a `launcher`",
        example: "false",
    },
    KeyRow {
        key: ConfigKey::Host { cross: false, key: HostKey::Stdenv },
        kind: "compiler",
        meaning: "the main C++ compiler, whose objects must link with nvcc's",
        example: "\"/usr/bin/g++-12\"",
    },
    KeyRow {
        key: ConfigKey::Host { cross: false, key: HostKey::Candidates },
        kind: "list of compilers",
        meaning: "other compilers the wrapper may choose from",
        example: "[\"/usr/bin/g++-11\"]",
    },
    KeyRow {
        key: ConfigKey::Host { cross: false, key: HostKey::Prefer },
        kind: "`\"gcc\"` / `\"clang\"`",
        meaning: "which family to pick first when the stdenv compiler is out of range",
        example: "\"clang\"",
    },
    KeyRow {
        key: ConfigKey::Host { cross: false, key: HostKey::AllowUnsupported },
        kind: "bool; default `false`",
        meaning: "pass `-allow-unsupported-compiler` instead of failing when no compiler is in range",
        example: "true",
    },
    KeyRow {
        key: ConfigKey::Host { cross: false, key: HostKey::LtoMismatch },
        kind: "`\"warn\"` (default) / `\"error\"`",
        meaning: "when a call asks for host LTO and the compiler nvcc accepts is not of the stdenv compiler's major \
                  and family: warn, or stop (exit 69)",
        example: "\"error\"",
    },
    KeyRow {
        key: ConfigKey::Capabilities,
        kind: "list, `[\"8.6\", \"9.0a\"]`, or one string holding a list; default: none",
        meaning: "GPU targets to build for, in any dialect: `8.6` (Nixpkgs' `cudaCapabilities`), `8.6+PTX` \
                  (`TORCH_CUDA_ARCH_LIST`), `86`, `86-real`, `86-virtual` (CMake), `sm_86`, `compute_86` (PTX), \
                  `-gencode=...` (nvcc), `all`, `all-major`, `native`; empty: add no GPU flags",
        example: "[\"8.6\"]",
    },
    KeyRow {
        key: ConfigKey::ForwardCompat,
        kind: "bool; default `false`",
        meaning: "also embed PTX of the highest capability's baseline, for newer GPUs",
        example: "true",
    },
    KeyRow {
        key: ConfigKey::ArchFlags,
        kind: "`\"respect\"` (default) / `\"replace\"` / `\"append\"`",
        meaning: "what to do when the command line already names GPU targets",
        example: "\"replace\"",
    },
    KeyRow {
        key: ConfigKey::CompressFatbin,
        kind: "bool; default `true`",
        meaning: "add the flags that make this release's fatbins smallest",
        example: "false",
    },
    KeyRow {
        key: ConfigKey::System,
        kind: "`\"aarch64-linux\"` / `\"powerpc64le-linux\"` / `\"x86_64-linux\"` (or a GNU triple); default: this \
               machine",
        meaning: "the machine the code is built for (`platform` alone implies `aarch64-linux`)",
        example: "\"aarch64-linux\"",
    },
    KeyRow {
        key: ConfigKey::Platform,
        kind: "`\"jetson\"` / `\"sbsa\"` (default)",
        meaning: "for aarch64: Jetson (L4T) or Arm server",
        example: "\"jetson\"",
    },
    KeyRow {
        key: ConfigKey::Sysroot,
        kind: "path of letters, digits, `/._+-@%^=` and non-ASCII bytes; default: the cross compiler's own",
        meaning: "the target's root file system: `--sysroot` for the cross compiler, its library directories as \
                  `-rpath-link` for the linker",
        example: "\"/sysroot\"",
    },
    KeyRow {
        key: ConfigKey::CudaRoot,
        kind: "path",
        meaning: "the target's CUDA headers and libraries (`include/`, `lib/`), for toolkits without \
                  `TOP/targets/<dir>` (Nix store paths)",
        example: "\"/cuda-target\"",
    },
    KeyRow {
        key: ConfigKey::CudaCompat,
        kind: "path of letters, digits, `/._+-@%^=` and non-ASCII bytes",
        meaning: "Jetson: the directory of the CUDA forward-compatibility `libcuda.so`, put first in the runpath of \
                  everything nvcc links for a Jetson",
        example: "\"/compat\"",
    },
    KeyRow {
        key: ConfigKey::Host { cross: true, key: HostKey::Stdenv },
        kind: "compiler; default: the first `TRIPLE-g++` on PATH",
        meaning: "the target's main C++ compiler (used only when the target is another CPU; in a native build, \
                  `explain` notes the table unused)",
        example: "\"aarch64-linux-gnu-g++\"",
    },
    KeyRow {
        key: ConfigKey::Host { cross: true, key: HostKey::Candidates },
        kind: "list of compilers; default: every `TRIPLE-g++[-N]`, `TRIPLE-clang++[-N]` on PATH",
        meaning: "other compilers for the target",
        example: "[\"aarch64-linux-gnu-g++-11\"]",
    },
    KeyRow {
        key: ConfigKey::Host { cross: true, key: HostKey::Prefer },
        kind: "as in `[host-compiler]`",
        meaning: "as in `[host-compiler]`, for the target",
        example: "\"gcc\"",
    },
    KeyRow {
        key: ConfigKey::Host { cross: true, key: HostKey::AllowUnsupported },
        kind: "as in `[host-compiler]`",
        meaning: "as in `[host-compiler]`, for the target",
        example: "false",
    },
    KeyRow {
        key: ConfigKey::Host { cross: true, key: HostKey::LtoMismatch },
        kind: "as in `[host-compiler]`",
        meaning: "as in `[host-compiler]`, for the target",
        example: "\"warn\"",
    },
];

/// Where the configuration file is found (src/config/places.rs), for the config page and the man page.
pub const PLACES: &str = "The configuration file is TOML, read from the first of these places that has one, whole: \
    files are never merged. 1. `$NVCC_WRAPPER_CONFIG`, named for the call (an error when it names no readable \
    file). 2. The installation's own `DIR/../share/nvcc-wrapper/config.toml`, DIR the directory of the `nvcc` you ran \
    (symlinks kept), then that of the wrapper's executable. 3. The user's `$XDG_CONFIG_HOME/nvcc-wrapper/config.toml` \
    (`~/.config/nvcc-wrapper/config.toml` when `XDG_CONFIG_HOME` is unset or relative). 4. The machine's \
    `/etc/nvcc-wrapper/config.toml`, unless `NVCC_WRAPPER_NO_MACHINE_CONFIG` is on. A Nix build (`NIX_BUILD_TOP` set, not `nix-shell`) reads neither 3 nor 4, and a \
    wrapper made by Nix always has its own file at 2. `nvcc-wrapper explain` and `doctor` say which file applies and \
    list the places looked at before it and the files of later places, ignored whole; `doctor` also names files in \
    places that are never read (`~/.config/nvcc-wrapper.toml`, a `config.toml` beside the binary).";

/// The files the wrapper reads or writes, for the man page.
pub const FILES: &[(&str, &str)] = &[
    ("$NVCC_WRAPPER_CONFIG", "the configuration file named for a call: no other is read"),
    (
        "DIR/../share/nvcc-wrapper/config.toml",
        "the installation's configuration file, read when none is named; DIR is the directory of the nvcc you ran \
         (symlinks kept), then that of the wrapper's own executable",
    ),
    (
        "$XDG_CONFIG_HOME/nvcc-wrapper/config.toml",
        "the user's configuration file (default ~/.config/nvcc-wrapper/config.toml), read when neither of the above \
         is there; never in a Nix build",
    ),
    ("/etc/nvcc-wrapper/config.toml", "the machine's configuration file, read when none of the above is there"),
    ("~/.cache/nvcc-wrapper/probes", "what probing found, kept until the program it describes changes"),
    (
        "~/.cache/nvcc-wrapper/options-files",
        "options files rewritten under `arch-flags = \"replace\"`, named after their contents",
    ),
];
