//! The config's keys, each spelled once. A setting's messages (`Sourced::named`, `Sourced::error`), the variables
//! that replace a key (`env::OVERRIDES`), the reference's table of keys and where each key's value was set
//! (`Config::origin`) name a key by this type; the words (`[gpu] capabilities`) are made here alone. serde reads the
//! file by the fields' own names, and a test holds those to `Key::ALL`.

use std::fmt;

#[cfg(test)]
use super::{Config, HostCompilerConfig, Origin};

/// A key of the config file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Key {
    Nvcc,
    CudaVersion,
    CompatData,
    Launcher,
    DepfileInputs,
    Reproducible,
    Threads,
    ThreadsFollow,
    Capabilities,
    ForwardCompat,
    ArchFlags,
    CompressFatbin,
    System,
    Platform,
    Sysroot,
    CudaRoot,
    CudaCompat,
    /// A key of the host compilers' tables: `[host-compiler]` for this machine, `[target.host-compiler]` for a cross
    /// build's target.
    Host {
        cross: bool,
        key: HostKey,
    },
}

/// A key of `[host-compiler]` and `[target.host-compiler]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HostKey {
    Stdenv,
    Candidates,
    Prefer,
    AllowUnsupported,
    LtoMismatch,
}

const HOST_KEYS: [HostKey; 5] =
    [HostKey::Stdenv, HostKey::Candidates, HostKey::Prefer, HostKey::AllowUnsupported, HostKey::LtoMismatch];

impl Key {
    /// Every key, in the order the reference lists them.
    pub fn all() -> impl Iterator<Item = Key> {
        use Key::*;
        let top = [Nvcc, CudaVersion, CompatData, Launcher, DepfileInputs, Reproducible, Threads, ThreadsFollow];
        let host = |cross| HOST_KEYS.into_iter().map(move |key| Host { cross, key });
        let (gpu, target) = (
            [Capabilities, ForwardCompat, ArchFlags, CompressFatbin],
            [System, Platform, Sysroot, CudaRoot, CudaCompat],
        );
        top.into_iter().chain(host(false)).chain(gpu).chain(target).chain(host(true))
    }

    /// The table it is in: `None` for the top level, before the first `[table]`.
    pub fn table(self) -> Option<&'static str> {
        use Key::*;
        match self {
            Nvcc | CudaVersion | CompatData | Launcher | DepfileInputs | Reproducible | Threads | ThreadsFollow => None,
            Capabilities | ForwardCompat | ArchFlags | CompressFatbin => Some("gpu"),
            System | Platform | Sysroot | CudaRoot | CudaCompat => Some("target"),
            Host { cross: false, .. } => Some("host-compiler"),
            Host { cross: true, .. } => Some("target.host-compiler"),
        }
    }

    /// Its name within its table, as the file spells it.
    pub fn name(self) -> &'static str {
        use Key::*;
        match self {
            Nvcc => "nvcc",
            CudaVersion => "cuda-version",
            CompatData => "compat-data",
            Launcher => "launcher",
            DepfileInputs => "depfile-inputs",
            Reproducible => "reproducible",
            Threads => "threads",
            ThreadsFollow => "threads-follow",
            Capabilities => "capabilities",
            ForwardCompat => "forward-compat",
            ArchFlags => "arch-flags",
            CompressFatbin => "compress-fatbin",
            System => "system",
            Platform => "platform",
            Sysroot => "sysroot",
            CudaRoot => "cuda-root",
            CudaCompat => "cuda-compat",
            Host { key: HostKey::Stdenv, .. } => "stdenv",
            Host { key: HostKey::Candidates, .. } => "candidates",
            Host { key: HostKey::Prefer, .. } => "prefer",
            Host { key: HostKey::AllowUnsupported, .. } => "allow-unsupported",
            Host { key: HostKey::LtoMismatch, .. } => "lto-mismatch",
        }
    }
}

impl fmt::Display for Key {
    /// As every message names it: `nvcc`, `[gpu] capabilities`, `[target.host-compiler] stdenv`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.table() {
            None => f.write_str(self.name()),
            Some(table) => write!(f, "[{table}] {}", self.name()),
        }
    }
}

#[cfg(test)]
impl Config {
    /// Where `key`'s value was set; `None` for a key no one set that has no default (a list's first entry stands
    /// for the list). Every key has its arm: a key added without one does not compile. The reference's test holds
    /// every key to carry its file and line.
    pub fn origin(&self, key: Key) -> Option<&Origin> {
        use Key::*;
        fn set<T>(setting: &Option<super::Sourced<T>>) -> Option<&Origin> {
            setting.as_ref().map(|s| &s.origin)
        }
        fn host(h: &HostCompilerConfig, key: HostKey) -> Option<&Origin> {
            match key {
                HostKey::Stdenv => set(&h.stdenv),
                HostKey::Candidates => h.candidates.first().map(|s| &s.origin),
                HostKey::Prefer => set(&h.prefer),
                HostKey::AllowUnsupported => Some(&h.allow_unsupported.origin),
                HostKey::LtoMismatch => Some(&h.lto_mismatch.origin),
            }
        }
        let (gpu, target) = (&self.gpu, &self.target);
        match key {
            Nvcc => set(&self.nvcc),
            CudaVersion => set(&self.cuda_version),
            CompatData => set(&self.compat_data),
            Launcher => set(&self.launcher),
            DepfileInputs => set(&self.depfile_inputs),
            Reproducible => set(&self.reproducible),
            Threads => set(&self.threads),
            ThreadsFollow => set(&self.threads_follow),
            Capabilities => Some(&gpu.capabilities.origin),
            ForwardCompat => Some(&gpu.forward_compat.origin),
            ArchFlags => Some(&gpu.arch_flags.origin),
            CompressFatbin => set(&gpu.compress_fatbin),
            System => set(&target.system),
            Platform => set(&target.platform),
            Sysroot => set(&target.sysroot),
            CudaRoot => set(&target.cuda_root),
            CudaCompat => set(&target.cuda_compat),
            Host { cross: false, key } => host(&self.host_compiler, key),
            Host { cross: true, key } => host(&target.host_compiler, key),
        }
    }
}
