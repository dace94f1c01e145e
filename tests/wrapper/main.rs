//! Integration tests: the built wrapper, installed as `nvcc`, in front of a fake nvcc (quick, argument-level) and in
//! front of real NVCC releases (the proof that a real compile links and runs).

// Shared helpers: not every test module uses each of them.
#[allow(dead_code)]
mod support;

mod config_and_env;
mod cross;
mod depfile;
mod docs;
mod fatbin;
mod fuzz_corpus;
mod gpu;
mod hostile;
mod launcher;
mod nix;
mod passthrough;
mod personalities;
mod probe_cache;
mod real_caches;
mod real_cmake;
mod real_combinations;
mod real_compat;
mod real_cross;
mod real_depfile;
mod real_fatbin;
mod real_gpu;
mod real_host_compiler;
mod real_nvcc;
mod real_reproducible;
mod real_splitters;
mod reliability;
