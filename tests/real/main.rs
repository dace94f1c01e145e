//! Integration tests against real toolchains: the built wrapper, installed as `nvcc`, in front of real NVCC releases,
//! real compilers and cross compilers, qemu, CMake, Meson, ccache, sccache and Nix (the proof that a real compile
//! links and runs). Every test is ignored, so a plain `cargo test` counts them as ignored; `scripts/test.sh` runs
//! them (`cargo test -- --include-ignored`), and a missing toolchain fails them, or skips them where the person asked
//! (`cannot_run`: NVCC_WRAPPER_SKIP_MISSING=1), counted after the summary.
//! `tests/real/X.rs` is the twin of `tests/wrapper/X.rs` where the fake nvcc has one.

// A test says what it skipped or measured on its own stderr, which cargo test captures.
#![allow(clippy::disallowed_macros)]

// Shared helpers: not every test module uses each of them.
#[allow(dead_code)]
#[path = "../common/support.rs"]
mod support;

#[path = "../common/cgroup.rs"]
mod cgroup;

mod cicc;
mod cmake;
mod combinations;
mod compat;
mod config_places;
mod cross;
mod depfile;
mod differential;
mod fatbin;
mod follow;
mod gpu;
mod host_compiler;
mod hostile;
mod launcher;
mod meson;
mod new_user;
mod nix;
mod passthrough;
mod probe_cache;
mod reproducible;
mod sccache_dist;
mod signals;
mod skips;
mod splitters;
mod surroundings;
mod terminal;
mod threads;
mod transcripts;
