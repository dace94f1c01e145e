//! Questions the planning steps ask of a command line: what it links, compiles, writes and asks of the host
//! compiler. Answers come from the recognised options only; nothing here decides what to add.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::{Found, Invocation, Phase, Role};

/// Where a call's dependency file goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Depfiles {
    /// The call writes none.
    None,
    /// To standard output (`-M`, `-MM` without `-MF`).
    Stdout,
    /// These files, as nvcc names them (relative to the working directory when they are relative).
    Files(Vec<PathBuf>),
}

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

    /// Whether the user asks for device link-time optimisation: `-dlto` or `-lto` anywhere, or a GPU target that
    /// names an `lto_` code (`-gencode=arch=compute_86,code=lto_86`, `-arch=lto_86`).
    pub fn asks_device_lto(&self) -> bool {
        self.with_role(Role::DeviceLto).next().is_some() || self.names_lto_codes()
    }

    /// Whether a GPU target the user gave names an `lto_` code.
    pub fn names_lto_codes(&self) -> bool {
        self.gpu_targets().any(|f| f.value.as_deref().is_some_and(|v| v.to_string_lossy().contains("lto_")))
    }

    /// The host LTO option this call gives the host compiler (`-flto`, `-flto=auto`, `-flto=thin` ...), as the user
    /// wrote its `-Xcompiler`, unless a later `-fno-lto` turns it off. The value is a list, split as nvcc splits it.
    pub fn host_lto(&self) -> Option<String> {
        let mut found = None;
        for option in self.with_role(Role::CompilerOptions) {
            for word in words(option) {
                if word == "-flto" || word.starts_with("-flto=") {
                    found = Some(format!("{} {word}", option.spelling));
                } else if word == "-fno-lto" {
                    found = None;
                }
            }
        }
        found
    }

    /// The first option by which the user chooses where nvcc's intermediate files go (`--keep`, `--keep-dir`,
    /// `-objtemp`).
    pub fn keeps_intermediates(&self) -> Option<&Found> {
        self.with_role(Role::KeepIntermediates).next()
    }

    /// The user's own random seed: `--frandom-seed`, or `-frandom-seed` in an `-Xcompiler` list.
    pub fn random_seed(&self) -> Option<&Found> {
        self.found.iter().find(|f| match f.spec.role {
            Role::RandomSeed => true,
            Role::CompilerOptions => words(f).iter().any(|w| w.starts_with("-frandom-seed")),
            _ => false,
        })
    }

    /// The user's own `--orig_src_path_name` for cudafe++, in an `-Xcudafe` list.
    pub fn cudafe_source_name(&self) -> Option<&Found> {
        self.with_role(Role::CudafeOptions).find(|f| words(f).iter().any(|w| w.contains("orig_src_path_name")))
    }

    /// The output file (`-o`) as given: the last one, which nvcc uses.
    pub fn output_file(&self) -> Option<&OsStr> {
        self.with_role(Role::OutputFile).last().and_then(|f| f.value.as_deref())
    }

    /// The call's one CUDA source (`.cu`), when it has exactly one input and that is it, as given.
    pub fn single_cu_input(&self) -> Option<&OsStr> {
        match self.inputs.as_slice() {
            [only] if Path::new(only).extension().is_some_and(|e| e == "cu") => Some(only),
            _ => None,
        }
    }

    /// Whether the call has the option of this long name (`device-debug` for `-G`), in any spelling or channel.
    pub fn has_option(&self, long: &str) -> bool {
        self.found.iter().any(|f| f.spec.long == long)
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

    /// The dependency files this call writes, named as nvcc names them (measured on 11.8, 12.4 and 13.5): the last
    /// `-MF`; else, for `-MD`/`-MMD`, the output file (`-o`) with its last extension replaced by `.d` (`a.o` ->
    /// `a.d`, `prog` -> `prog.d`), or without `-o` each source's base name with `.d`, in `-odir` when given. `-M` and
    /// `-MM` without `-MF` write to standard output.
    pub fn depfiles(&self) -> Depfiles {
        let last = |role| self.with_role(role).last().and_then(|f| f.value.clone()).map(PathBuf::from);
        let preprocess_only = self
            .phase_option()
            .is_some_and(|p| matches!(p.spec.long, "generate-dependencies" | "generate-nonsystem-dependencies"));
        let with_compile = self.with_role(Role::DependenciesWithCompile).next().is_some();
        if !preprocess_only && !with_compile {
            return Depfiles::None;
        }
        if let Some(file) = last(Role::DependencyFile) {
            return Depfiles::Files(vec![file]);
        }
        if preprocess_only {
            return Depfiles::Stdout;
        }
        if let Some(output) = last(Role::OutputFile) {
            return Depfiles::Files(vec![output.with_extension("d")]);
        }
        let dir = last(Role::OutputDirectory).unwrap_or_default();
        let sources = self.inputs.iter().filter(|i| is_host_compiled(i));
        let files = sources.filter_map(|s| Path::new(s).file_stem()).map(|stem| dir.join(stem).with_extension("d"));
        Depfiles::Files(files.collect())
    }

    /// Options as the user gave them, for messages: `` `-arch sm_80` in the command line, `-gencode=...` in
    /// $NVCC_APPEND_FLAGS ``.
    pub fn given(&self, found: &[&Found]) -> super::Given {
        super::Given(found.iter().map(|f| (f.spelling, f.value.clone(), f.at.channel.place(self))).collect())
    }
}

/// The words of an `-X` option's value, split as nvcc splits the list. An item holding blanks is one argument to the
/// tool, which may still read it as several: each counts.
fn words(found: &Found) -> Vec<String> {
    let Some(value) = &found.value else { return Vec::new() };
    let items = super::split::option_list(value.as_encoded_bytes()).words;
    items
        .iter()
        .flat_map(|item| String::from_utf8_lossy(item).split_whitespace().map(String::from).collect::<Vec<_>>())
        .collect()
}

/// Whether a `-Xfatbin` value (a list, split as nvcc splits every `-X` option) holds a fatbinary option about
/// compression: `-compress-all`, `--compress=false`, `-compress-mode=size`, `--concat`, in either dash count.
fn names_compression(value: &[u8]) -> bool {
    super::split::option_list(value).words.iter().any(|option| {
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

    fn depfiles(args: &[&str]) -> Depfiles {
        let ctx = crate::context::Context::default();
        Invocation::parse_args(&ctx, args.iter().map(Into::into).collect()).unwrap().depfiles()
    }

    fn files(names: &[&str]) -> Depfiles {
        Depfiles::Files(names.iter().map(PathBuf::from).collect())
    }

    #[test]
    fn dependency_files_are_named_as_nvcc_names_them() {
        // Measured with nvcc 11.8.89, 12.4.131 and 13.5.37 (docs/nvcc-facts.md#dependency-files).
        let rows: &[(&[&str], Depfiles)] = &[
            (&["-c", "a.cu"], Depfiles::None),
            (&["-MD", "-MF", "deps/a.d", "-c", "a.cu", "-o", "a.o"], files(&["deps/a.d"])),
            (&["-MD", "-MF=x.d", "-MF", "y.d", "-c", "a.cu"], files(&["y.d"])),
            (&["-MMD", "-c", "a.cu", "-o", "out/a.o"], files(&["out/a.d"])),
            (&["-MD", "-c", "a.cu", "-o", "a.obj.o"], files(&["a.obj.d"])),
            (&["-MD", "a.cu", "-o", "prog"], files(&["prog.d"])),
            (&["-MD", "-c", "src/a.cu", "b.cu"], files(&["a.d", "b.d"])),
            (&["-MD", "-c", "a.cu", "-odir", "od"], files(&["od/a.d"])),
            (&["-M", "a.cu"], Depfiles::Stdout),
            (&["-MM", "-MF", "m.d", "a.cu"], files(&["m.d"])),
            // -MF without a mode that writes dependencies writes nothing.
            (&["-MF", "m.d", "-c", "a.cu"], Depfiles::None),
        ];
        for (args, want) in rows {
            assert_eq!(depfiles(args), *want, "{args:?}");
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
