// The schema of compat-data/*.toml: every file's rows, written once. Two readers declare these types with their own
// `schema!`: the crate (src/compat/mod.rs: serde types with `deny_unknown_fields`, which the override loader parses
// into), and build.rs (the same types, which also spell themselves as Rust), which parses each file into them at
// build time and writes the compiled-in statics. So the statics and the loader cannot disagree about a key, a type
// or a default. Each type's methods and checks live in the module of its file (host_compilers.rs, ...).
//
// Only std, serde and the `Version`, `Capability` and `Text` of the module that includes this file may be named.

use std::borrow::Cow;

use super::{Capability, Text, Version};

schema! {
    /// host-compilers.toml: one `[[release]]` row per NVCC release 11.0 on, and one per patch build that changed a
    /// limit.
    pub struct HostCompilersFile {
        pub release: Cow<'static, [HostLimits]>,
    }

    /// The limits in force from nvcc version `nvcc` on.
    pub struct HostLimits {
        /// nvcc's own version (`nvcc --version`: `V12.2.128`), `major.minor` or a patch build.
        pub nvcc: Version,
        /// The newest major of each host-compiler family this release accepts.
        pub accepts: Accepts,
        pub source: Text,
        pub note: Option<Text>,
    }

    /// `accepts = { gcc = 11, clang = 14 }`: the newest major of each host-compiler family (families.rs) an NVCC
    /// release accepts, inclusive. There is no lower bound: nvcc checks none. The table's rows, the `host_config.h`
    /// scanner and the planner all speak in this one type (its methods: families.rs).
    #[derive(Copy)]
    pub struct Accepts {
        pub gcc: u32,
        pub clang: u32,
    }

    /// capabilities.toml.
    pub struct CapabilitiesFile {
        pub capability: Cow<'static, [CapabilityInfo]>,
        pub nvcc_default_arch: Cow<'static, [DefaultArch]>,
    }

    /// One capability. Release bounds are inclusive `major.minor`; no `last_cuda` means still accepted.
    pub struct CapabilityInfo {
        pub capability: Capability,
        pub architecture: Text,
        pub example_gpus: Cow<'static, [Text]>,
        pub kind: Kind,
        pub first_cuda: Version,
        pub last_cuda: Option<Version>,
        /// The Jetson module family ("Orin", "Thor"); `None` for every non-Jetson capability.
        pub jetson_part: Option<Text>,
        pub source: Text,
        pub note: Option<Text>,
    }

    /// The target nvcc compiles for when a command line names none.
    pub struct DefaultArch {
        pub first_cuda: Version,
        pub last_cuda: Option<Version>,
        pub capability: Capability,
        pub source: Text,
    }

    /// platforms.toml.
    pub struct PlatformsFile {
        pub platform: Cow<'static, [Platform]>,
        pub jetson_served_by: Cow<'static, [JetsonServedBy]>,
    }

    /// One target platform: a directory under a toolkit's `targets/`.
    pub struct Platform {
        /// The directory under `TOP/targets/`, which is also nvcc's `--target-directory` value.
        pub name: Text,
        /// The name in NVIDIA's redistributable manifests (`linux-sbsa`).
        pub nvidia_redist: Text,
        pub gnu_triples: Cow<'static, [Text]>,
        pub nix_system: Text,
        pub jetson: bool,
        /// The releases that ship this target; gaps between ranges are releases that do not.
        pub shipped: Cow<'static, [ReleaseRange]>,
        pub source: Text,
        pub note: Option<Text>,
    }

    /// NVCC releases `first_cuda ..= last_cuda` (inclusive; no `last_cuda`: still shipped).
    pub struct ReleaseRange {
        pub first_cuda: Version,
        pub last_cuda: Option<Version>,
    }

    /// A Jetson part that a non-Jetson platform also serves from some release on.
    pub struct JetsonServedBy {
        pub platform: Text,
        pub part: Text,
        pub first_cuda: Version,
        pub source: Text,
    }

    /// fatbin.toml.
    pub struct FatbinFile {
        pub compression: Cow<'static, [Compression]>,
    }

    /// The flags for one range of releases. Bounds are inclusive `major.minor`; no `last_cuda` means still current.
    pub struct Compression {
        pub first_cuda: Version,
        pub last_cuda: Option<Version>,
        /// Added to nvcc's command line as they are, each one token (`--compress-mode=size`).
        pub flags: Cow<'static, [Text]>,
        pub source: Text,
        pub note: Option<Text>,
    }

    /// threads.toml.
    pub struct ThreadsFile {
        pub threads: Cow<'static, [ThreadsRow]>,
    }

    /// What running a call's GPU targets at once (`--threads N`) costs one range of releases. Bounds are inclusive
    /// `major.minor`; no `last_cuda` means still current.
    pub struct ThreadsRow {
        pub first_cuda: Version,
        pub last_cuda: Option<Version>,
        /// The memory one more thread took at its peak, in MiB, on the heaviest source measured (the sum over nvcc's
        /// processes running at once).
        pub peak_per_thread_mib: u32,
        pub source: Text,
        pub note: Option<Text>,
    }

    /// launchers.toml.
    pub struct LaunchersFile {
        pub known_bad: Cow<'static, [KnownBad]>,
    }

    /// A launcher release range that fails with a range of NVCC releases, whatever the wrapper adds. Every bound is
    /// inclusive and compared on major and minor only (`0.16` is every 0.16.x); no `last_cuda` means still failing.
    pub struct KnownBad {
        /// The launcher's file name (`sccache`).
        pub launcher: Text,
        /// The launcher's own releases.
        pub first_version: Version,
        pub last_version: Version,
        /// The NVCC releases it fails with.
        pub first_cuda: Version,
        pub last_cuda: Option<Version>,
        /// Only for these kinds of call; absent: every call.
        pub calls: Option<Cow<'static, [LauncherCall]>>,
        pub why: Text,
        /// Where it was seen.
        pub source: Text,
    }

    /// combinations.toml.
    pub struct CombinationsFile {
        pub refused_pair: Cow<'static, [RefusedPair]>,
    }

    /// Two capabilities a range of releases refuses together, in some forms, though it accepts each alone.
    pub struct RefusedPair {
        /// The kinds of the two, one each, in either order.
        pub kinds: Cow<'static, [Kind]>,
        /// What the two share.
        pub same: Same,
        pub first_cuda: Version,
        pub last_cuda: Option<Version>,
        /// The forms in which nvcc refuses the pair; it builds it in the others.
        pub forms: Cow<'static, [Form]>,
        /// nvcc's message after `nvcc fatal   : `, `{later}` for the name of the later of the two.
        pub message: Text,
        /// The help line: `{a}` and `{b}` are the two in the wrapper's order, `{release}` the release.
        pub help: Text,
        pub source: Text,
        pub note: Option<Text>,
    }

    /// reproducible.toml.
    pub struct ReproducibleFile {
        /// The newest release measured: a row without `last_cuda` holds through it, and no further.
        pub measured_through: Version,
        pub fix: Cow<'static, [Fix]>,
        pub limit: Cow<'static, [Limit]>,
    }

    /// A cause of differing outputs, and the flags that remove it. Release bounds are inclusive `major.minor`.
    pub struct Fix {
        pub cause: Cause,
        pub first_cuda: Version,
        pub last_cuda: Option<Version>,
        /// nvcc options, each one token, with the placeholders `{output}`, `{input}`, `{tmpdir}` and `{pid}`.
        pub flags: Cow<'static, [Text]>,
        pub calls: Cow<'static, [Call]>,
        /// The host-compiler families the flags were measured with.
        pub host_compilers: Cow<'static, [CompilerFamily]>,
        /// Whether the flags may go to nvcc run behind a launcher (not when they name nvcc's pid).
        pub behind_launcher: bool,
        /// The kinds of output the flags make identical.
        pub outputs: Cow<'static, [Output]>,
        pub source: Text,
        pub note: Option<Text>,
    }

    /// A cause no flag removes: those outputs are reproducible only under `holds_when`.
    pub struct Limit {
        pub cause: Cause,
        pub first_cuda: Version,
        pub last_cuda: Option<Version>,
        /// Only behind this launcher (its file name), when given.
        pub launcher: Option<Text>,
        pub outputs: Cow<'static, [Output]>,
        pub host_compilers: Cow<'static, [CompilerFamily]>,
        pub holds_when: Text,
        pub source: Text,
        pub note: Option<Text>,
    }
}

/// What a capability's suffix makes it (capabilities.toml's `kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// No suffix: its PTX runs on every later GPU (forward compatibility).
    Baseline,
    /// `a`: only this exact architecture.
    ArchSpecific,
    /// `f`: this architecture's family.
    FamilySpecific,
}

/// What the two capabilities of a refused pair share (combinations.toml's `same`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Same {
    /// The same major and minor (`10.0` and `10.0f`).
    Number,
}

/// How a capability list reaches nvcc (combinations.toml's `forms`): the flags src/plan/gpu/ writes for one phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Form {
    /// `-gencode=arch=compute_XY,code=sm_XY` each, in a compile.
    Gencode,
    /// The same, then forward-compatible PTX.
    GencodePtx,
    /// `code=lto_XY` each, in a device-LTO compile.
    Lto,
    /// The same, then forward-compatible PTX.
    LtoPtx,
    /// `code=sm_XY` each, in the device-LTO link (`-dlink -dlto`).
    LtoLink,
}

/// What makes two builds differ (reproducible.toml's `cause`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Cause {
    /// nvcc's temporary files are named after its process id, and the host compiler writes their names.
    TemporaryNames,
    /// Relocatable device code's module id hashes the source's absolute path.
    ModuleId,
    /// GCC names host-LTO sections with a random suffix.
    HostRandomSeed,
    /// A `-lib` archive's member dates, owners and modes.
    ArchiveHeader,
    /// cicc writes its working directory into device debug info, line tables and device-LTO IR.
    DeviceWorkingDirectory,
    /// Device line tables hold each source's modification time.
    SourceMtime,
    /// Clang names its input in the file symbol whatever the prefix map.
    ClangFileSymbol,
    /// GCC's host-LTO objects name the build directory.
    GccLtoWorkingDirectory,
    /// Host debug info names the working directory (DW_AT_comp_dir).
    HostWorkingDirectory,
    /// A launcher's own temporary names.
    LauncherTemporaryDirectory,
    /// A source read from standard input is named after a temporary file.
    StdinInput,
}

/// A kind of nvcc call a launcher fails on (launchers.toml's `calls`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LauncherCall {
    /// A compile (`-c`, `-dc`, `-dw`) or `-fatbin` that writes device-LTO intermediates (`-dlto`, `-lto`,
    /// `code=lto_XY`).
    DeviceLto,
    /// `-fatbin`.
    Fatbin,
}

/// The kind of nvcc call a fix applies to (reproducible.toml's `calls`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Call {
    /// `-c`, `-dc`, `-dw`.
    Compile,
    /// Sources to a program or shared library in one call.
    CompileAndLink,
    /// `-ptx`, `-cubin`, `-fatbin` and the other device-only phases.
    DeviceOnly,
    /// `-dlink`.
    DeviceLink,
    /// `-lib`.
    Lib,
}

/// A C++ compiler family nvcc knows how to drive as its host compiler (its methods: families.rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CompilerFamily {
    Gcc,
    Clang,
}

/// A kind of output (reproducible.toml's `outputs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Output {
    Object,
    RdcObject,
    DeviceLink,
    Archive,
    Executable,
    Ptx,
    Cubin,
    Fatbin,
    CompressedFatbin,
    DeviceLto,
    HostLto,
    /// `-g`.
    HostDebug,
    /// `-G`.
    DeviceDebug,
    /// `-lineinfo`.
    LineInfo,
}
