//! Questions the planning steps ask of a command line: what it links, compiles, writes and asks of the host
//! compiler. Answers come from the recognised options only; nothing here decides what to add.

use std::ffi::OsStr;
use std::path::Path;

use super::{Found, Invocation, Phase, Role};

/// Whether nvcc will run the host compiler on this input (and so check its version): sources, not objects or
/// libraries. An input with no known extension counts as a source, to be safe.
pub fn is_host_compiled(input: &OsStr) -> bool {
    let ext = Path::new(input).extension().and_then(|e| e.to_str()).unwrap_or("");
    !matches!(ext, "o" | "obj" | "a" | "lib" | "so" | "dylib" | "res" | "cubin" | "fatbin" | "ptx" | "ltoir")
        && !input.to_string_lossy().contains(".so.")
}

impl Invocation {
    /// Whether this call ends in a host link (an executable or shared library), where runpaths and `-L` matter.
    pub fn links(&self) -> bool {
        matches!(self.phase(), Phase::Link | Phase::Run)
    }

    /// Whether any input goes through the host compiler (see `is_host_compiled`).
    pub fn compiles_sources(&self) -> bool {
        self.inputs.iter().any(|i| is_host_compiled(i))
    }

    /// A link of objects and libraries only: nvcc runs the host compiler as a linker and never checks its version.
    pub fn links_objects_only(&self) -> bool {
        self.phase() == Phase::Link && !self.inputs.is_empty() && !self.compiles_sources()
    }

    /// The host LTO option this call gives the host compiler (`-flto`, `-flto=auto`, `-flto=thin` ...), as the user
    /// wrote its `-Xcompiler`, unless a later `-fno-lto` turns it off. nvcc splits an `-Xcompiler` value at commas.
    pub fn host_lto(&self) -> Option<String> {
        let mut found = None;
        for option in self.with_role(Role::CompilerOptions) {
            let Some(value) = &option.value else { continue };
            let value = value.to_string_lossy();
            for word in value.split(|c: char| c == ',' || c.is_whitespace()) {
                if word == "-flto" || word.starts_with("-flto=") {
                    found = Some(format!("{} {word}", option.spelling));
                } else if word == "-fno-lto" {
                    found = None;
                }
            }
        }
        found
    }

    /// The phase option, when the call stops before any fatbin is written: preprocessing, and every device-only
    /// phase but `-fatbin` (`-ptx`, `-cubin`, `-cuda`, `-ltoir`, `-optix-ir` write one image and no fatbin).
    pub fn writes_no_fatbin(&self) -> Option<&Found> {
        let option = self.phase_option()?;
        let none = match self.phase() {
            Phase::Preprocess => true,
            Phase::DeviceOnly => option.spec.long != "fatbin",
            Phase::Link | Phase::Compile | Phase::DeviceLink | Phase::Lib | Phase::Run => false,
        };
        none.then_some(option)
    }

    /// The first option in nvcc's reading order by which the user chose how fatbins are compressed: a compression
    /// option of nvcc's, or one of fatbinary's in `-Xfatbin`.
    pub fn fatbin_compression(&self) -> Option<&Found> {
        self.found.iter().find(|f| match f.spec.role {
            Role::FatbinCompression => true,
            Role::FatbinOptions => f.value.as_deref().is_some_and(|v| names_compression(v.as_encoded_bytes())),
            _ => false,
        })
    }

    /// Options as the user gave them, for messages: `` `-arch sm_80` in the command line, `-gencode=...` in
    /// $NVCC_APPEND_FLAGS ``.
    pub fn describe(&self, found: &[&Found]) -> String {
        found
            .iter()
            .map(|f| {
                let value = f.value.as_deref().map(|v| format!(" {}", v.to_string_lossy())).unwrap_or_default();
                format!("`{}{value}` in {}", f.spelling, f.at.channel.describe(self))
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
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
    fn which_inputs_the_host_compiler_sees() {
        for source in ["a.cu", "b.cpp", "c.c", "d.ii", "noext"] {
            assert!(is_host_compiled(source.as_ref()), "{source}");
        }
        for object in ["a.o", "lib/x.a", "libfoo.so", "libfoo.so.1.2", "k.cubin", "k.fatbin"] {
            assert!(!is_host_compiled(object.as_ref()), "{object}");
        }
    }

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
