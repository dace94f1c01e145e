//! The entry points the fuzz targets in `fuzz/` drive (`cargo +nightly fuzz run NAME`), kept in the library so that
//! `tests/wrapper/fuzz_corpus.rs` replays the committed corpus through the very same code on stable Rust in every CI
//! run. Each takes arbitrary bytes and must return, whatever they hold: no panic, no hang, no unbounded recursion.

/// The splitters, for `tests/real/splitters.rs`, which compares them with real nvcc's own.
pub use crate::args::split;

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

use crate::args::Invocation;
use crate::compat::Version;
use crate::compat::{self, Compat};
use crate::config::{self, Loaded};
use crate::context::{vars, Context, Env};
use crate::plan;
use crate::plan::{FoundBy, RealNvcc};
use crate::probe::compiler::{Known, StdenvLibstdcxx};
use crate::probe::system::Probes;

/// A command line: words separated by NUL; a word starting with 0x01 goes to `NVCC_PREPEND_FLAGS`, 0x02 to
/// `NVCC_APPEND_FLAGS` (as text nvcc splits), any other to argv. Parsed, then planned under each `arch-flags` policy
/// with facts that need no program, as the drop-in plans.
pub fn command_line(data: &[u8]) {
    let (mut argv, mut prepend, mut append) = (Vec::new(), Vec::new(), Vec::new());
    for word in data.split(|&b| b == 0) {
        match word.first() {
            Some(1) => prepend.push(word[1..].to_vec()),
            Some(2) => append.push(word[1..].to_vec()),
            _ => argv.push(OsString::from_vec(word.to_vec())),
        }
    }
    let mut env = Env::default();
    env.set(vars::NVCC_PREPEND_FLAGS, OsString::from_vec(prepend.join(&b' ')));
    env.set(vars::NVCC_APPEND_FLAGS, OsString::from_vec(append.join(&b' ')));
    // No options file it names exists there: reading one is an error, never a file of the machine's.
    let ctx = Context { env, cwd: PathBuf::from("/nonexistent/fuzz"), ..Context::default() };
    let Ok(invocation) = Invocation::parse_args(&ctx, argv) else { return };
    let compat = Compat::built_in();
    for config in configs() {
        let inputs = plan::Inputs {
            invocation: &invocation,
            config: &config.config,
            compat: &compat,
            probes: &Known12,
            nvcc: RealNvcc { path: "/cuda/bin/nvcc".into(), found_by: FoundBy::Path },
            config_file: None,
            depth: 0,
            scratch: &|| "/nonexistent/scratch".into(),
            nvcc_process: &plan::NvccProcess::fixed(),
            jobserver: &crate::context::Jobserver::None,
            unknown_variables: &[],
        };
        if let Ok(p) = plan::plan(inputs) {
            let _ = p.command(&invocation);
        }
    }
}

/// One config per `arch-flags` policy, parsed once.
fn configs() -> &'static [Loaded] {
    static CONFIGS: std::sync::OnceLock<Vec<Loaded>> = std::sync::OnceLock::new();
    CONFIGS.get_or_init(|| {
        ["respect", "append", "replace"]
            .iter()
            .map(|policy| {
                let text = format!(
                    "cuda-version = \"13.0\"\n[gpu]\ncapabilities = [\"8.6\", \"9.0a\"]\narch-flags = \"{policy}\"\n"
                );
                Loaded {
                    config: config::parse(&text, Path::new("fuzz.toml")).expect("a valid config"),
                    ..Loaded::default()
                }
            })
            .collect()
    })
}

/// nvcc's three splitters: an options file's text, an `NVCC_*_FLAGS` value and a list option's value. A word an
/// options file gives reads back the same when the wrapper writes it into one.
pub fn splitters(data: &[u8]) {
    for word in split::options_file(data).words {
        let written = split::options_file_word(&word).expect("an options-file word holds no double quote");
        assert_eq!(split::options_file(&written).words, [word]);
    }
    let _ = split::env_flags(data);
    let _ = split::option_list(data);
}

/// A configuration file's text; and where the config's own reader of plain TOML reads it (`config::plain`), `toml`
/// must read the same config from it.
pub fn config_file(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = config::parse(&text, Path::new("/fuzz/config.toml"));
    config::plain::checked_against_toml(&text, Path::new("/fuzz/config.toml"));
}

/// A `crt/host_config.h`'s text, as `nvcc-wrapper compat scan` reads it.
pub fn host_config(data: &[u8]) {
    let _ = compat::host_config::scan(&String::from_utf8_lossy(data));
}

/// Facts of one machine, answered without running anything: g++ 12 everywhere, nvcc 13.0.
struct Known12;

impl Probes for Known12 {
    fn nvcc_version(&self, _: &Path) -> Result<(Version, &'static str), crate::probe::system::NvccUnknown> {
        Ok((Version::new(13, 0, 88), "fuzz"))
    }
    fn compiler(&self, path: &Path) -> Result<Known, String> {
        Ok(Known {
            path: path.into(),
            family: compat::CompilerFamily::Gcc,
            version: Version::new(12, 2, 0),
            target: Some("x86_64-linux-gnu".into()),
        })
    }
    fn libstdcxx(&self, _: &Path) -> Result<StdenvLibstdcxx, String> {
        Err("not probed".into())
    }
    fn resolve(&self, name: &Path) -> Option<PathBuf> {
        Some(Path::new("/usr/bin").join(name))
    }
    fn installed_compilers(&self, _: Option<&str>) -> Vec<PathBuf> {
        vec!["/usr/bin/g++".into()]
    }
    fn toolkit_root(&self, _: &Path) -> Result<PathBuf, String> {
        Ok("/cuda".into())
    }
    fn exists(&self, _: &Path) -> bool {
        false
    }
}
