//! Fatbin compression: adding the flags that make this NVCC release write its smallest fatbins
//! (compat-data/fatbin.toml, chosen by measurement in docs/benchmarks.md), unless `[gpu] compress-fatbin = false`.
//!
//! Added only where nvcc writes a fatbin: compiling (`-c`, `-dc`, `-dw`, `-lib`, compile and link, `-run`),
//! `-fatbin`, and device links (`-dlink`, and the one a link of relocatable objects runs). Not for `-E`/`-M`/`-MM`
//! (preprocessing), nor for `-ptx`, `-cubin`, `-cuda`, `-ltoir` and `-optix-ir`, which write one image and no fatbin.
//! A link of plain objects runs no fatbinary: the flags are added and do nothing there, as nvcc 11.8 to 13.5 accept
//! them without a word. Never when the user chose any compression setting in any channel (`--no-compress`,
//! `--compress-mode`, `--concat`, or a `-compress...` option in `-Xfatbin`): that choice is theirs, and 13.x warns
//! about a `--compress-mode` given twice.

use super::{Addition, Plan};
use crate::args::{Found, Invocation, Phase, Role};
use crate::compat::FatbinTable;
use crate::version::Version;

/// What the planner knows about this call, for the fatbin step.
pub struct Step<'a> {
    pub invocation: &'a Invocation,
    /// `[gpu] compress-fatbin`: `None` (unset) is on.
    pub setting: Option<bool>,
    pub table: &'a FatbinTable,
    /// The NVCC release, or why it is unknown.
    pub release: std::result::Result<Version, String>,
}

impl Step<'_> {
    /// Add this release's compression flags, or say in a note why not.
    pub fn decide(&self, plan: &mut Plan) {
        if self.setting == Some(false) {
            plan.notes.push("`[gpu] compress-fatbin = false`: fatbins are compressed as nvcc does by default".into());
            return;
        }
        let inv = self.invocation;
        if let Some(phase) = writes_no_fatbin(inv) {
            plan.notes.push(format!("`{}` writes no fatbin: no compression flags are added", phase.spelling));
            return;
        }
        if let Some(given) = compression_given(inv) {
            let value = given.value.as_deref().map(|v| format!("={}", v.to_string_lossy())).unwrap_or_default();
            plan.notes.push(format!(
                "`{}{value}` in {} chooses the fatbin compression: nothing is added",
                given.spelling,
                given.at.channel.describe(inv)
            ));
            return;
        }
        let release = match &self.release {
            Ok(release) => *release,
            Err(e) => {
                plan.notes.push(format!("the NVCC release is unknown ({e}): no fatbin compression flags are added"));
                return;
            }
        };
        let Some(row) = self.table.compression(release) else {
            plan.notes.push(format!(
                "nvcc {} is not in the fatbin table (compat-data/fatbin.toml): no compression flags are added",
                release.release()
            ));
            return;
        };
        plan.before.push(Addition {
            args: row.flags.iter().map(|f| f.as_ref().into()).collect(),
            reason: format!(
                "`[gpu] compress-fatbin` (on unless set to false): the smallest fatbins nvcc {} writes (compat-data/fatbin.toml)",
                release.release()
            ),
        });
    }
}

/// The phase option, when the call stops before any fatbin is written.
fn writes_no_fatbin(inv: &Invocation) -> Option<&Found> {
    let option = inv.phase_option()?;
    let none = match inv.phase() {
        Phase::Preprocess => true,
        // `-fatbin` is the one device-only phase whose output is a fatbin.
        Phase::DeviceOnly => option.spec.long != "fatbin",
        Phase::Link | Phase::Compile | Phase::DeviceLink | Phase::Lib | Phase::Run => false,
    };
    none.then_some(option)
}

/// The first option in nvcc's reading order by which the user chose how fatbins are compressed.
fn compression_given(inv: &Invocation) -> Option<&Found> {
    inv.found.iter().find(|f| match f.spec.role {
        Role::FatbinCompression => true,
        Role::FatbinOptions => f.value.as_deref().is_some_and(|v| names_compression(v.as_encoded_bytes())),
        _ => false,
    })
}

/// Whether a `-Xfatbin` value (a comma-separated list, as nvcc splits every `-X` option) holds a fatbinary option
/// about compression: `-compress-all`, `--compress=false`, `-compress-mode=size`, `--concat`, in either dash count.
fn names_compression(value: &[u8]) -> bool {
    value.split(|&b| b == b',').any(|option| {
        let name = option.trim_ascii_start();
        let name = name.strip_prefix(b"--").or_else(|| name.strip_prefix(b"-")).unwrap_or(name);
        name.starts_with(b"compress") || name.starts_with(b"concat")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fatbinary_compression_options_are_told_apart_from_others() {
        for value in [
            "-compress-all",
            "--compress=false",
            "-compress=true",
            "-g,-compress-all",
            "--compress-mode=size",
            "-concat",
        ] {
            assert!(names_compression(value.as_bytes()), "{value}");
        }
        for value in ["-g", "--no-asm", "-cuda", "", "-Xcompress", "uncompressed"] {
            assert!(!names_compression(value.as_bytes()), "{value}");
        }
    }
}
