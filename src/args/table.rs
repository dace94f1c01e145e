//! The one table of nvcc options the wrapper knows: every spelling, whether a value follows, and what it means to us.
//!
//! Rows come from `nvcc --help` of release 13.0.88 (plus hidden ones seen in use, such as `-Xcudafe`), sorted by long
//! name. Spelling rules measured on 13.0: a short name takes exactly one dash (`-ccbin`, `-arch`, `-gencode`), a long
//! name exactly two (`--compiler-bindir`); `--ccbin`, `-compiler-bindir` and `--gencode` are "Unknown option". A value
//! follows as the next token or after `=`. Only a few one-letter options (`-I/x`, `-DX`, `-lm`, `-O3`) accept a value
//! glued on; `-o/x`, `-ccbin/x` and `-Xcompiler-W` are unknown options to nvcc.
//!
//! The table must list every option that takes a value, even ones we ignore: otherwise `-Xcompiler -v` would be read
//! as nvcc's own `-v`. Options it does not list pass through untouched.

/// How an option takes its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arity {
    /// No value (`-c`, `--dryrun`).
    Flag,
    /// A value as the next token or after `=` (`-ccbin g++`, `-ccbin=g++`).
    Value,
    /// Like `Value`, and the short name also accepts it glued on (`-I/usr/include`).
    Joined,
}

/// Which kind of GPU target option.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GpuFlag {
    Arch,
    Code,
    Gencode,
}

/// The compilation phase an option selects. With none given, nvcc compiles and links.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Compile and link to an executable (nvcc's default, and `-link`).
    Link,
    /// `-c`, `-dc`, `-dw`: object files only.
    Compile,
    /// `-E`, `-M`, `-MM`: preprocess only.
    Preprocess,
    /// `-cuda`, `-ptx`, `-cubin`, `-fatbin`, `-optix-ir`, `-ltoir`: device code or intermediate files only.
    DeviceOnly,
    /// `-dlink`: device link of relocatable device code.
    DeviceLink,
    /// `-lib`: a static library.
    Lib,
    /// `-run`: compile, link and run.
    Run,
}

/// What an option means to the wrapper.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    HostCompiler,
    GpuTarget(GpuFlag),
    TargetDirectory,
    OptionsFile,
    /// Prints something and exits: `--version`, `--help`, `--list-gpu-arch`, `--list-gpu-code`.
    Query,
    DryRun,
    Verbose,
    AllowUnsupportedCompiler,
    /// `-dlto`, `-lto`: device link-time optimisation, which nvcc refuses together with `-gencode` (13.0).
    DeviceLto,
    Machine,
    Phase(Phase),
    /// `-Xcompiler`: options for every host-compiler call, the link included.
    CompilerOptions,
    /// `-Xlinker`: options for the host linker.
    LinkerOptions,
    /// `--no-compress`, `--compress-mode`, `--concat`: the user's own choice of how fatbins are compressed.
    FatbinCompression,
    /// `-Xfatbin`: options for fatbinary, where a compression option is the user's choice too.
    FatbinOptions,
    /// `-MD`, `-MMD`: write a dependency file while compiling.
    DependenciesWithCompile,
    /// `-MF`: where the dependency file goes.
    DependencyFile,
    /// `-o`: the output file.
    OutputFile,
    /// `-odir`: the directory of the outputs nvcc names itself.
    OutputDirectory,
    /// `--keep`, `--keep-dir`, `-objtemp`: the user chooses where nvcc's intermediate files go, and what they are
    /// named.
    KeepIntermediates,
    /// `--frandom-seed`: the seed nvcc passes on to its tools and the host compiler.
    RandomSeed,
    /// `-Xcudafe`: options for cudafe++.
    CudafeOptions,
    /// `--threads`, `--split-compile`, `--split-compile-extended`, `--jobserver`: the user's own choice of how nvcc
    /// runs a call's work at once.
    Parallelism,
    /// Known, so its value is skipped correctly, but nothing the wrapper acts on.
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionSpec {
    /// Long name without dashes (`compiler-bindir`).
    pub long: &'static str,
    /// Short name without its dash (`ccbin`); some options have none, some use the long name again.
    pub short: Option<&'static str>,
    pub arity: Arity,
    pub role: Role,
}

const fn opt(long: &'static str, short: Option<&'static str>, arity: Arity, role: Role) -> OptionSpec {
    OptionSpec { long, short, arity, role }
}

use Arity::{Flag, Joined, Value};
use Role::*;

/// Sorted by `long` (byte order); a unit test checks it.
pub const OPTIONS: &[OptionSpec] = &[
    opt("Ofast-compile", Some("Ofc"), Value, Other),
    opt("Wdefault-stream-launch", Some("Wdefault-stream-launch"), Flag, Other),
    opt("Werror", Some("Werror"), Value, Other),
    opt("Wext-lambda-captures-this", Some("Wext-lambda-captures-this"), Flag, Other),
    opt("Wmissing-launch-bounds", Some("Wmissing-launch-bounds"), Flag, Other),
    opt("Wno-deprecated-declarations", Some("Wno-deprecated-declarations"), Flag, Other),
    opt("Wno-deprecated-gpu-targets", Some("Wno-deprecated-gpu-targets"), Flag, Other),
    opt("Wreorder", Some("Wreorder"), Flag, Other),
    opt("allow-unsupported-compiler", Some("allow-unsupported-compiler"), Flag, AllowUnsupportedCompiler),
    opt("archive-options", Some("Xarchive"), Value, Other),
    opt("archiver-binary", Some("arbin"), Value, Other),
    opt("augment-host-linker-script", Some("aug-hls"), Flag, Other),
    opt("brief-diagnostics", Some("brief-diag"), Value, Other),
    opt("clean-targets", Some("clean"), Flag, Other),
    opt("compile", Some("c"), Flag, Phase(Phase::Compile)),
    opt("compile-as-tools-patch", Some("astoolspatch"), Flag, Other),
    opt("compiler-bindir", Some("ccbin"), Value, HostCompiler),
    opt("compiler-options", Some("Xcompiler"), Value, CompilerOptions),
    opt("compress-mode", Some("compress-mode"), Value, FatbinCompression),
    // 13.5 (not in 13.0): "Enable concatenated fatbin entries for improved compression".
    opt("concat", Some("concat"), Flag, FatbinCompression),
    opt("cubin", Some("cubin"), Flag, Phase(Phase::DeviceOnly)),
    opt("cuda", Some("cuda"), Flag, Phase(Phase::DeviceOnly)),
    opt("cudadevrt", Some("cudadevrt"), Value, Other),
    opt("cudafe-options", Some("Xcudafe"), Value, CudafeOptions),
    opt("cudart", Some("cudart"), Value, Other),
    opt("debug", Some("g"), Flag, Other),
    opt("default-stream", Some("default-stream"), Value, Other),
    opt("define-macro", Some("D"), Joined, Other),
    opt("dependency-drive-prefix", Some("ddp"), Value, Other),
    // `--help` shows no `<file>` for it, but it takes one: `-MD -MF deps.d -c a.cu` writes deps.d (13.0.88).
    opt("dependency-output", Some("MF"), Value, DependencyFile),
    opt("dependency-target-name", Some("MT"), Value, Other),
    opt("device-c", Some("dc"), Flag, Phase(Phase::Compile)),
    opt("device-debug", Some("G"), Flag, Other),
    opt("device-entity-has-hidden-visibility", Some("device-entity-has-hidden-visibility"), Value, Other),
    opt("device-link", Some("dlink"), Flag, Phase(Phase::DeviceLink)),
    opt("device-stack-protector", Some("device-stack-protector"), Value, Other),
    opt("device-w", Some("dw"), Flag, Phase(Phase::Compile)),
    opt("diag-error", Some("diag-error"), Value, Other),
    opt("diag-suppress", Some("diag-suppress"), Value, Other),
    opt("diag-warn", Some("diag-warn"), Value, Other),
    opt("disable-warnings", Some("w"), Flag, Other),
    opt("display-error-number", Some("err-no"), Flag, Other),
    opt("dlink-time-opt", Some("dlto"), Flag, DeviceLto),
    opt("dont-use-profile", Some("noprof"), Flag, Other),
    opt("dopt", Some("dopt"), Value, Other),
    opt("drive-prefix", Some("dp"), Value, Other),
    opt("dryrun", Some("dryrun"), Flag, DryRun),
    opt("entries", Some("e"), Value, Other),
    opt("expt-extended-lambda", Some("expt-extended-lambda"), Flag, Other),
    opt("expt-relaxed-constexpr", Some("expt-relaxed-constexpr"), Flag, Other),
    opt("extended-lambda", Some("extended-lambda"), Flag, Other),
    opt("extensible-whole-program", Some("ewp"), Flag, Other),
    opt("extra-device-vectorization", Some("extra-device-vectorization"), Flag, Other),
    opt("fatbin", Some("fatbin"), Flag, Phase(Phase::DeviceOnly)),
    // Not in `nvcc --help`, but accepted by 11.8 to 13.5 in both spellings, and what Nixpkgs passes.
    opt("fatbin-options", Some("Xfatbin"), Value, FatbinOptions),
    opt("fdevice-syntax-only", Some("fdevice-syntax-only"), Flag, Other),
    opt("fdevice-time-trace", None, Value, Other),
    opt("fmad", Some("fmad"), Value, Other),
    opt("force-cl-env-setup", Some("force-cl-env-setup"), Flag, Other),
    opt("forward-unknown-opts", Some("forward-unknown-opts"), Flag, Other),
    opt("forward-unknown-to-host-compiler", Some("forward-unknown-to-host-compiler"), Flag, Other),
    opt("forward-unknown-to-host-linker", Some("forward-unknown-to-host-linker"), Flag, Other),
    opt("frandom-seed", Some("frandom-seed"), Value, RandomSeed),
    opt("ftemplate-backtrace-limit", Some("ftemplate-backtrace-limit"), Value, Other),
    opt("ftemplate-depth", Some("ftemplate-depth"), Value, Other),
    opt("ftz", Some("ftz"), Value, Other),
    opt("gen-opt-lto", Some("gen-opt-lto"), Flag, Other),
    opt("generate-code", Some("gencode"), Value, GpuTarget(GpuFlag::Gencode)),
    opt("generate-dependencies", Some("M"), Flag, Phase(Phase::Preprocess)),
    opt("generate-dependencies-with-compile", Some("MD"), Flag, DependenciesWithCompile),
    opt("generate-dependency-targets", Some("MP"), Flag, Other),
    opt("generate-line-info", Some("lineinfo"), Flag, Other),
    opt("generate-nonsystem-dependencies", Some("MM"), Flag, Phase(Phase::Preprocess)),
    opt("generate-nonsystem-dependencies-with-compile", Some("MMD"), Flag, DependenciesWithCompile),
    opt("gpu-architecture", Some("arch"), Value, GpuTarget(GpuFlag::Arch)),
    opt("gpu-code", Some("code"), Value, GpuTarget(GpuFlag::Code)),
    opt("help", Some("h"), Flag, Query),
    opt("host-linker-script", Some("hls"), Value, Other),
    opt("include-path", Some("I"), Joined, Other),
    opt("input-drive-prefix", Some("idp"), Value, Other),
    opt("jobserver", Some("jobserver"), Flag, Parallelism),
    opt("jump-table-density", Some("jtd"), Value, Other),
    opt("keep", Some("keep"), Flag, KeepIntermediates),
    opt("keep-device-functions", Some("keep-device-functions"), Flag, Other),
    opt("keep-dir", Some("keep-dir"), Value, KeepIntermediates),
    opt("lib", Some("lib"), Flag, Phase(Phase::Lib)),
    opt("libdevice-directory", Some("ldir"), Value, Other),
    opt("library", Some("l"), Joined, Other),
    opt("library-path", Some("L"), Joined, Other),
    opt("link", Some("link"), Flag, Phase(Phase::Link)),
    opt("linker-options", Some("Xlinker"), Value, LinkerOptions),
    opt("list-gpu-arch", Some("arch-ls"), Flag, Query),
    opt("list-gpu-code", Some("code-ls"), Flag, Query),
    opt("lto", Some("lto"), Flag, DeviceLto),
    opt("ltoir", Some("ltoir"), Flag, Phase(Phase::DeviceOnly)),
    opt("m64", Some("m64"), Flag, Machine),
    opt("machine", Some("m"), Value, Machine),
    opt("maxrregcount", Some("maxrregcount"), Value, Other),
    opt("no-align-double", None, Flag, Other),
    opt("no-compress", Some("no-compress"), Flag, FatbinCompression),
    opt("no-device-link", Some("nodlink"), Flag, Other),
    opt("no-display-error-number", Some("no-err-no"), Flag, Other),
    opt("no-exceptions", Some("noeh"), Flag, Other),
    opt("no-host-device-initializer-list", Some("nohdinitlist"), Flag, Other),
    opt("no-host-device-move-forward", Some("nohdmoveforward"), Flag, Other),
    opt("nvlink-options", Some("Xnvlink"), Value, Other),
    opt("objdir-as-tempdir", Some("objtemp"), Flag, KeepIntermediates),
    opt("optimization-info", Some("opt-info"), Value, Other),
    opt("optimize", Some("O"), Joined, Other),
    opt("options-file", Some("optf"), Value, OptionsFile),
    opt("optix-ir", Some("optix-ir"), Flag, Phase(Phase::DeviceOnly)),
    opt("output-directory", Some("odir"), Value, OutputDirectory),
    opt("output-file", Some("o"), Value, OutputFile),
    opt("pre-include", Some("include"), Value, Other),
    opt("prec-div", Some("prec-div"), Value, Other),
    opt("prec-sqrt", Some("prec-sqrt"), Value, Other),
    opt("preprocess", Some("E"), Flag, Phase(Phase::Preprocess)),
    opt("profile", Some("pg"), Flag, Other),
    opt("ptx", Some("ptx"), Flag, Phase(Phase::DeviceOnly)),
    opt("ptxas-options", Some("Xptxas"), Value, Other),
    opt("qpp-config", Some("qpp-config"), Flag, Other),
    opt("relocatable-device-code", Some("rdc"), Value, Other),
    opt("relocatable-link", Some("r"), Flag, Other),
    opt("relocatable-ptx", Some("reloc-ptx"), Flag, Other),
    opt("resource-usage", Some("res-usage"), Flag, Other),
    opt("restrict", Some("restrict"), Flag, Other),
    opt("run", Some("run"), Flag, Phase(Phase::Run)),
    opt("run-args", Some("run-args"), Value, Other),
    opt("sanitize", Some("sanitize"), Value, Other),
    opt("save-temps", Some("save-temps"), Flag, Other),
    opt("shared", Some("shared"), Flag, Other),
    opt("source-in-ptx", Some("src-in-ptx"), Flag, Other),
    opt("split-compile", Some("split-compile"), Value, Parallelism),
    opt("split-compile-extended", Some("split-compile-extended"), Value, Parallelism),
    opt("static-global-template-stub", Some("static-global-template-stub"), Value, Other),
    opt("std", Some("std"), Value, Other),
    opt("system-include", Some("isystem"), Value, Other),
    opt("target-directory", Some("target-dir"), Value, TargetDirectory),
    opt("threads", Some("t"), Joined, Parallelism),
    opt("time", None, Value, Other),
    opt("undefine-macro", Some("U"), Joined, Other),
    opt("use-local-env", Some("use-local-env"), Flag, Other),
    opt("use_fast_math", Some("use_fast_math"), Flag, Other),
    opt("verbose", Some("v"), Flag, Verbose),
    opt("version", Some("V"), Flag, Query),
    opt("x", Some("x"), Value, Other),
];

/// The option a single token names, with how it was spelled (`-ccbin`, `--compiler-bindir`).
/// `token` is the part before any `=`.
pub fn lookup(token: &[u8]) -> Option<(&'static OptionSpec, Spelling)> {
    if let Some(long) = token.strip_prefix(b"--") {
        let i = OPTIONS.binary_search_by(|o| o.long.as_bytes().cmp(long)).ok()?;
        return Some((&OPTIONS[i], Spelling::Long));
    }
    by_short(token.strip_prefix(b"-")?).map(|o| (o, Spelling::Short))
}

/// A one-letter option that accepts a glued value (`-I/usr/include`): the spec and the glued value.
pub fn lookup_joined(token: &[u8]) -> Option<(&'static OptionSpec, &[u8])> {
    let rest = token.strip_prefix(b"-")?;
    let (letter, value) = rest.split_at_checked(1)?;
    if value.is_empty() {
        return None;
    }
    by_short(letter).filter(|o| o.arity == Joined).map(|o| (o, value))
}

/// The option with this short name, by binary search in `BY_SHORT`: every token that starts with one dash is looked
/// up, so a scan of the whole table per token was the parser's largest cost (docs/benchmarks.md).
fn by_short(short: &[u8]) -> Option<&'static OptionSpec> {
    let (start, end) = BY_FIRST_BYTE[usize::from(*short.first()?)];
    let candidates = &BY_SHORT[usize::from(start)..usize::from(end)];
    let i = candidates.binary_search_by(|&i| short_name(i).cmp(short)).ok()?;
    Some(&OPTIONS[candidates[i]])
}

/// For each first byte, the range of `BY_SHORT` whose short names start with it (most hold one or two), so that a
/// token such as `-I/usr/include` is compared with `I` alone.
const BY_FIRST_BYTE: [(u8, u8); 256] = {
    assert!(SHORT_COUNT < 256);
    let mut ranges = [(0, 0); 256];
    let mut i = 0;
    while i < SHORT_COUNT {
        let first = match OPTIONS[BY_SHORT[i]].short {
            Some(short) => short.as_bytes()[0] as usize,
            None => 0,
        };
        if ranges[first].1 == 0 {
            ranges[first].0 = i as u8;
        }
        ranges[first].1 = i as u8 + 1;
        i += 1;
    }
    ranges
};

fn short_name(i: usize) -> &'static [u8] {
    match OPTIONS[i].short {
        Some(short) => short.as_bytes(),
        None => b"",
    }
}

/// How many options have a short name: the first `SHORT_COUNT` entries of `BY_SHORT`.
const SHORT_COUNT: usize = {
    let mut n = 0;
    let mut i = 0;
    while i < OPTIONS.len() {
        if OPTIONS[i].short.is_some() {
            n += 1;
        }
        i += 1;
    }
    n
};

/// Indices into `OPTIONS`: those with a short name first, sorted by it (bytewise), then the rest. Computed by the
/// compiler from `OPTIONS`, so there is nothing to keep in step by hand.
const BY_SHORT: [usize; OPTIONS.len()] = {
    let mut order = [0; OPTIONS.len()];
    let mut i = 0;
    while i < OPTIONS.len() {
        order[i] = i;
        i += 1;
    }
    // Insertion sort: options without a short name sort last.
    i = 1;
    while i < OPTIONS.len() {
        let mut j = i;
        while j > 0 && short_before(order[j], order[j - 1]) {
            let t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
            j -= 1;
        }
        i += 1;
    }
    order
};

/// Whether option `a` sorts before option `b` in `BY_SHORT`.
const fn short_before(a: usize, b: usize) -> bool {
    match (OPTIONS[a].short, OPTIONS[b].short) {
        (Some(a), Some(b)) => bytes_less(a.as_bytes(), b.as_bytes()),
        (Some(_), None) => true,
        _ => false,
    }
}

/// `a < b`, bytewise (the order `[u8]::cmp` uses), in a const context.
const fn bytes_less(a: &[u8], b: &[u8]) -> bool {
    let mut i = 0;
    while i < a.len() && i < b.len() {
        if a[i] != b[i] {
            return a[i] < b[i];
        }
        i += 1;
    }
    a.len() < b.len()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spelling {
    Short,
    Long,
}

impl OptionSpec {
    /// The option as written with that spelling (`-ccbin`, `--compiler-bindir`).
    pub fn spelled(&'static self, spelling: Spelling) -> Spelled {
        Spelled { spec: self, spelling }
    }
}

/// An option's name as the user wrote it, shown with its dashes (`-ccbin`, `--compiler-bindir`). Kept as the table
/// entry and the spelling rather than a string, since every option on a command line is recorded this way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spelled {
    pub spec: &'static OptionSpec,
    pub spelling: Spelling,
}

impl std::fmt::Display for Spelled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.spelling, self.spec.short) {
            (Spelling::Short, Some(short)) => write!(f, "-{short}"),
            _ => write!(f, "--{}", self.spec.long),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn sorted_by_long_name_without_duplicates() {
        for pair in OPTIONS.windows(2) {
            assert!(pair[0].long < pair[1].long, "{} must sort before {}", pair[0].long, pair[1].long);
        }
    }

    #[test]
    fn every_short_and_long_name_is_found_by_lookup() {
        for o in OPTIONS {
            assert_eq!(lookup(format!("--{}", o.long).as_bytes()).map(|(f, _)| f), Some(o));
            if let Some(short) = o.short {
                assert_eq!(lookup(format!("-{short}").as_bytes()), Some((o, Spelling::Short)), "-{short}");
            }
        }
        let shorts: Vec<&[u8]> = BY_SHORT[..SHORT_COUNT].iter().map(|&i| short_name(i)).collect();
        assert!(shorts.windows(2).all(|w| w[0] < w[1]), "BY_SHORT is sorted");
        assert!(BY_SHORT[SHORT_COUNT..].iter().all(|&i| OPTIONS[i].short.is_none()));
        for miss in [&b"-"[..], b"-zzz", b"---", b"--", b"-Iz", b"--include-pathz"] {
            assert!(lookup(miss).is_none(), "{:?}", String::from_utf8_lossy(miss));
        }
        // `-I` alone is the option, its value the next word.
        assert_eq!(lookup(b"-I").map(|(o, _)| o.long), Some("include-path"));
        assert_eq!(
            lookup_joined(b"-I/usr/include").map(|(o, v)| (o.short, v)),
            Some((Some("I"), &b"/usr/include"[..]))
        );
        assert!(lookup_joined(b"-I").is_none() && lookup_joined(b"-ccbin").is_none());
    }

    #[test]
    fn short_names_are_unique() {
        let mut seen = HashSet::new();
        for o in OPTIONS {
            if let Some(short) = o.short {
                assert!(seen.insert(short), "short name -{short} appears twice");
            }
        }
    }

    #[test]
    fn only_one_letter_short_names_glue_values() {
        for o in OPTIONS.iter().filter(|o| o.arity == Joined) {
            assert_eq!(o.short.map(str::len), Some(1), "--{} cannot take a glued value", o.long);
        }
    }

    #[test]
    fn every_spelling_we_act_on_resolves() {
        let cases: &[(&str, Role)] = &[
            ("-ccbin", HostCompiler),
            ("--compiler-bindir", HostCompiler),
            ("-arch", GpuTarget(GpuFlag::Arch)),
            ("--gpu-architecture", GpuTarget(GpuFlag::Arch)),
            ("-code", GpuTarget(GpuFlag::Code)),
            ("--gpu-code", GpuTarget(GpuFlag::Code)),
            ("-gencode", GpuTarget(GpuFlag::Gencode)),
            ("--generate-code", GpuTarget(GpuFlag::Gencode)),
            ("-target-dir", TargetDirectory),
            ("--target-directory", TargetDirectory),
            ("-optf", OptionsFile),
            ("--options-file", OptionsFile),
            ("-V", Query),
            ("--version", Query),
            ("-h", Query),
            ("--help", Query),
            ("--list-gpu-arch", Query),
            ("-arch-ls", Query),
            ("--list-gpu-code", Query),
            ("-code-ls", Query),
            ("-dryrun", DryRun),
            ("--dryrun", DryRun),
            ("-v", Verbose),
            ("-m64", Machine),
            ("-Xcompiler", CompilerOptions),
            ("-allow-unsupported-compiler", AllowUnsupportedCompiler),
            ("-c", Phase(super::Phase::Compile)),
            ("-dlto", DeviceLto),
            ("--dlink-time-opt", DeviceLto),
            ("-lto", DeviceLto),
            ("-E", Phase(super::Phase::Preprocess)),
            ("-no-compress", FatbinCompression),
            ("--compress-mode", FatbinCompression),
            ("-concat", FatbinCompression),
            ("-Xfatbin", FatbinOptions),
            ("--fatbin-options", FatbinOptions),
            ("-MD", DependenciesWithCompile),
            ("--generate-nonsystem-dependencies-with-compile", DependenciesWithCompile),
            ("-MF", DependencyFile),
            ("--dependency-output", DependencyFile),
            ("-o", OutputFile),
            ("-odir", OutputDirectory),
        ];
        for (token, role) in cases {
            let (spec, _) = lookup(token.as_bytes()).unwrap_or_else(|| panic!("{token} not found"));
            assert_eq!(spec.role, *role, "{token}");
        }
    }

    #[test]
    fn wrong_dash_counts_are_unknown_as_in_nvcc() {
        for token in ["--ccbin", "-compiler-bindir", "--gencode", "-generate-code", "--arch", "--optf", "ccbin"] {
            assert!(lookup(token.as_bytes()).is_none(), "{token} must be unknown");
        }
    }

    #[test]
    fn glued_values_only_for_one_letter_options() {
        assert_eq!(
            lookup_joined(b"-I/usr/include").map(|(o, v)| (o.long, v)),
            Some(("include-path", &b"/usr/include"[..]))
        );
        assert_eq!(lookup_joined(b"-O3").map(|(o, _)| o.long), Some("optimize"));
        assert!(lookup_joined(b"-o/tmp/x.o").is_none());
        assert!(lookup_joined(b"-ccbing++").is_none());
        assert!(lookup_joined(b"-I").is_none());
    }
}
