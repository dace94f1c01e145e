//! Integration tests in front of the fake nvcc (tests/fakes): the built wrapper, installed as `nvcc`, checked at the
//! argument level. Quick, and needing no toolchain: none is ignored. Their twins against real toolchains are in
//! tests/real/, file for file.

// A test says what it skipped or measured on its own stderr, which cargo test captures.
#![allow(clippy::disallowed_macros)]

// Shared helpers: not every test module uses each of them.
#[allow(dead_code)]
#[path = "../common/support.rs"]
mod support;

mod config_and_env;
mod config_places;
mod cross;
mod depfile;
mod dialects;
mod docs;
mod fatbin;
mod fuzz_corpus;
mod gpu;
mod host_compiler;
mod hostile;
mod launcher;
mod layout;
mod nixpkgs_tables;
mod passthrough;
mod personalities;
mod probe_cache;
mod reliability;
mod reproducible;
mod scripts;
mod threads;
