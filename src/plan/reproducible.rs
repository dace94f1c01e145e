//! Reproducible builds: adding the flags that make this NVCC release's outputs the same bytes for the same inputs
//! (compat-data/reproducible.toml, measured release by release: docs/nvcc-facts.md#reproducible-builds), unless
//! `reproducible = false`.
//!
//! A row's flags go in only where they were measured: its releases, its kinds of call, its host-compiler families,
//! and behind a launcher only when the row allows it. Its placeholders are filled from the call: `{output}` the `-o`
//! value as given (else the one input), `{input}` the one `.cu` input as given, `{tmpdir}` nvcc's temporary
//! directory, `{pid}` nvcc's process id, which the wrapper knows only when it execs nvcc itself (not behind a
//! launcher, not when it waits for nvcc to complete a dependency file). A value nvcc would split or the host compiler
//! read as two words leaves its row out. The user stays in charge: their own `--keep`, `--keep-dir` or `-objtemp`,
//! random seed, or cudafe++ source name leaves the matching flag out, and every flag goes before their arguments, so
//! a later option of theirs wins. What no flag fixes for this call (`[[limit]]`) is said in a note; the build is
//! then unchanged by it.

use crate::plan::model::codes;
use std::ffi::OsStr;
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::facts::{ArgEdge, Facts};
use super::model::{Changes, HostDecision};
use super::Step;
use crate::args::split::{first_unpassable, Unpassable};
use crate::args::{Given, HostCompilerGiven, Phase, Role};
use crate::compat::Version;
use crate::compat::{placeholders, Call, Cause, CompilerFamily, Fix, Limit, Output, Text};
use crate::config::{Config, Origin, Sourced};
use crate::error::Result;
use crate::probe::system::OutputPlace;

pub struct Reproducible;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    TurnedOff {
        origin: Origin,
    },
    NotMeasured {
        release: Version,
    },
    /// The user chose this themselves: the flag that would do the same is left out.
    UsersOwn {
        flag: Text,
        option: Given,
    },
    /// A placeholder has no value this call can give safely.
    NoValue {
        flag: Text,
        /// Which value is missing and why, in words made where it is found missing.
        why: String,
    },
    /// The call is at the kernel's limit on arguments: its flags, which nvcc passes on, could push it over.
    ArgEdge {
        edge: ArgEdge,
    },
    /// `-objtemp` would break or change a call nvcc alone completes (or refuses) as it is.
    ObjtempUnsafe {
        /// The name and what is wrong with it, in words made where it is found.
        why: String,
    },
    /// A flag that names nvcc's pid, when nvcc will not have the wrapper's.
    PidUnknown {
        flag: Text,
        why: &'static str,
    },
    /// What no flag fixes for this call.
    Limit {
        cause: Cause,
        outputs: Vec<Output>,
        holds_when: Text,
    },
}

codes!(Note {
    TurnedOff => "turned-off",
    NotMeasured => "not-measured",
    UsersOwn => "users-own",
    NoValue => "no-value",
    ArgEdge => "arg-edge",
    ObjtempUnsafe => "objtemp-unsafe",
    PidUnknown => "pid-unknown",
    Limit => "limit",
});

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    Fix { cause: Cause, release: Version },
}

codes!(Reason {
    Fix => "fix",
});

/// What a cause is, for notes and reasons.
fn describe(cause: Cause) -> &'static str {
    match cause {
        Cause::TemporaryNames => {
            "nvcc's temporary files are named after its process id, and the names reach the output"
        }
        Cause::ModuleId => "relocatable device code's module id hashes the source's absolute path",
        Cause::HostRandomSeed => "GCC names host-LTO sections with a random suffix",
        Cause::ArchiveHeader => "an archive's members carry dates, owners and modes unless `ar` is deterministic",
        Cause::DeviceWorkingDirectory => "nvcc's device compiler writes its working directory into them",
        Cause::SourceMtime => "device line tables hold each source's modification time",
        Cause::ClangFileSymbol => "Clang names nvcc's temporary input, with its process id, in the file symbol",
        Cause::GccLtoWorkingDirectory => "GCC's host-LTO objects name the build directory",
        Cause::HostWorkingDirectory => "the host compiler writes the working directory into the debug info",
        Cause::LauncherTemporaryDirectory => "the launcher names its own random temporary directory in them",
        Cause::StdinInput => "a source read from standard input is named after a temporary file",
    }
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::TurnedOff { origin } => write!(
                f,
                "`reproducible` is false (in {origin}): nothing is added to make the outputs the same from build to build"
            ),
            Note::NotMeasured { release } => write!(
                f,
                "nvcc {release} is not in the reproducible-builds table (compat-data/reproducible.toml): nothing is added to make its outputs the same from build to build"
            ),
            Note::UsersOwn { flag, option } => write!(f, "{option} is the user's own choice: `{flag}` is not added"),
            Note::NoValue { flag, why } => write!(f, "`{flag}` is not added: {why}"),
            Note::ArgEdge { edge } => write!(
                f,
                "nothing is added to make the outputs the same from build to build: {edge}, and the flags, which nvcc passes on to its children (`-objtemp` puts the output's name in their command lines), could make one of them longer than the kernel takes"
            ),
            Note::ObjtempUnsafe { why } => write!(
                f,
                "`-objtemp` is not added: {why}, where nvcc's temporary files named after the output would make the call end otherwise than with nvcc alone"
            ),
            Note::PidUnknown { flag, why } => write!(
                f,
                "`{flag}` is not added: it names nvcc's process id, which is not the wrapper's when {why}"
            ),
            Note::Limit { cause, outputs, holds_when } => write!(
                f,
                "{} of this call may differ from build to build ({}): the same only when {holds_when}",
                outputs.iter().map(|o| output_name(*o)).collect::<Vec<_>>().join(", "),
                describe(*cause)
            ),
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Fix { cause, release } => write!(
                f,
                "`reproducible` (on unless set to false): {}, which makes two builds differ (nvcc {release}, compat-data/reproducible.toml)",
                describe(*cause)
            ),
        }
    }
}

/// The earlier decisions the reproducible-builds flags depend on.
#[derive(Debug, Clone, Copy)]
pub struct Needs<'d> {
    /// The host compiler the wrapper chose: its family is what the rows name.
    pub host: Option<&'d HostDecision>,
    /// The wrapper completes a dependency file, so it waits for nvcc rather than exec it (nvcc's pid is not its own).
    pub depfile: bool,
    /// nvcc may take threads from job slots, so the wrapper may wait for it to give them back (likewise).
    pub threads: bool,
    /// The launcher nvcc runs behind (nvcc is its child, or its server's).
    pub launcher: Option<&'d Path>,
}

impl Step for Reproducible {
    const NAME: &'static str = "reproducible";
    /// `reproducible`: unset is on.
    type Section = Option<Sourced<bool>>;
    type Needs<'d> = Needs<'d>;
    /// Whether it added `-objtemp`: nvcc's temporary files are then named after the output, beside it.
    type Decision = bool;

    fn section<'c>(config: &'c Config, _: &Facts) -> &'c Self::Section {
        &config.reproducible
    }

    /// From the host compiler chosen (whose family the rows name), and the decisions that tell whether nvcc's pid
    /// is the wrapper's.
    fn decide(facts: &Facts, setting: &Self::Section, needs: Needs, plan: &mut Changes) -> Result<bool> {
        let Some(call) = call_kind(facts) else { return Ok(false) };
        if let Some(Sourced { value: false, origin }) = setting {
            plan.note(Note::TurnedOff { origin: origin.clone() });
            return Ok(false);
        }
        // An unknown release is said once, by the facts.
        let Some(release) = facts.release.version() else { return Ok(false) };
        let table = &facts.compat.reproducible;
        if !table.measured(release) {
            plan.note(Note::NotMeasured { release: release.release() });
            return Ok(false);
        }
        if let Some(edge) = &facts.arg_edge {
            plan.note(Note::ArgEdge { edge: *edge });
            return Ok(false);
        }
        let family = family(facts, needs.host);
        let mut added: Vec<String> = Vec::new();
        let mut objtemp = false;
        for fix in table.fixes(release).filter(|fix| applies(fix, call, family)) {
            let flags = match fix_flags(facts, &needs, fix) {
                Ok(flags) => flags,
                Err(note) => {
                    plan.note(note);
                    continue;
                }
            };
            let new: Vec<String> = flags.into_iter().filter(|f| !added.contains(f)).collect();
            if !new.is_empty() {
                objtemp |= new.iter().any(|f| f == "-objtemp");
                added.extend(new.iter().cloned());
                plan.add_before(new.into_iter().map(Into::into).collect(), Reason::Fix { cause: fix.cause, release });
            }
        }
        let outputs = outputs(facts, call);
        let limits: Vec<&Limit> =
            table.limits(release).filter(|limit| holds(limit, facts, needs.launcher, &outputs, family)).collect();
        for limit in limits {
            let named = limit.outputs.iter().filter(|o| outputs.contains(o)).copied().collect();
            plan.note(Note::Limit { cause: limit.cause, outputs: named, holds_when: limit.holds_when.clone() });
        }
        Ok(objtemp)
    }
}

/// The kind of call, as the rows name them; `None` for one that writes nothing a row covers (preprocessing, a link of
/// objects).
fn call_kind(facts: &Facts) -> Option<Call> {
    let inv = facts.invocation;
    match inv.phase() {
        Phase::Compile => Some(Call::Compile),
        Phase::Lib => Some(Call::Lib),
        Phase::DeviceOnly => Some(Call::DeviceOnly),
        Phase::DeviceLink => Some(Call::DeviceLink),
        Phase::Link | Phase::Run if inv.compiles_sources() => Some(Call::CompileAndLink),
        Phase::Link | Phase::Run | Phase::Preprocess => None,
    }
}

/// The host compiler's family: the wrapper's choice, else the user's (probed), else nvcc's default `g++` on PATH;
/// `None` when it cannot be told.
fn family(facts: &Facts, host: Option<&HostDecision>) -> Option<CompilerFamily> {
    if let Some(host) = host {
        return Some(host.family);
    }
    let named = match facts.invocation.host_compiler() {
        Some(HostCompilerGiven::Option(found)) => found.value.as_deref()?,
        Some(HostCompilerGiven::Env(value)) => value,
        None => OsStr::new("g++"),
    };
    let path = facts.probes.resolve(named.as_ref())?;
    facts.probes.compiler(&path).ok().map(|known| known.family)
}

/// Whether the row was measured for this kind of call and this host compiler (any, when it lists both families).
fn applies(fix: &Fix, call: Call, family: Option<CompilerFamily>) -> bool {
    let every_family = crate::compat::FAMILIES.iter().all(|f| fix.host_compilers.contains(&f.id));
    fix.calls.contains(&call) && (every_family || family.is_some_and(|f| fix.host_compilers.contains(&f)))
}

/// The row's flags with their placeholders filled, or the note that says why they are left out.
fn fix_flags(facts: &Facts, needs: &Needs, fix: &Fix) -> std::result::Result<Vec<String>, Note> {
    let inv = facts.invocation;
    let mut flags = Vec::new();
    for flag in fix.flags.iter() {
        let users = |found: Option<&crate::args::Found>| {
            found.map(|f| Note::UsersOwn { flag: flag.clone(), option: inv.given(&[f]) })
        };
        let own = match () {
            _ if flag.as_ref() == "-objtemp" => users(inv.keeps_intermediates()),
            _ if flag.contains("frandom-seed") => users(inv.random_seed()),
            _ if flag.contains("orig_src_path_name") => users(inv.cudafe_source_name()),
            _ => None,
        };
        if let Some(note) = own {
            return Err(note);
        }
        if flag.as_ref() == "-objtemp" {
            if let Some(why) = objtemp_blocker(facts) {
                return Err(Note::ObjtempUnsafe { why });
            }
        }
        let mut filled = flag.to_string();
        for name in placeholders(flag) {
            let value = value(facts, needs, name).map_err(|why| match why {
                Missing::Pid(why) => Note::PidUnknown { flag: flag.clone(), why },
                Missing::Value(why) => Note::NoValue { flag: flag.clone(), why },
            })?;
            filled = filled.replace(&format!("{{{name}}}"), &value);
        }
        flags.push(filled);
    }
    Ok(flags)
}

/// Why `-objtemp` cannot go into this call, if it cannot. With it, nvcc names its temporary files
/// `<output>.<suffix>` beside the output instead of `$TMPDIR/tmpxft_<pid>_..._<source stem>.<suffix>`, and pastes
/// those names into `sh -c` command lines in double quotes (only `"` escaped), into fatbinary's comma-separated
/// `--image3=...,file=PATH` and into `#include` lines (measured with nvcc 11.8.89, 12.4.131 and 13.5.37,
/// docs/nvcc-facts.md#-objtemp-and-the-names-it-makes). So it is left out where:
/// - an output or input name holds `"`, `,`, `$`, a backtick, `\`, `[` (11.8's fatbinary) or a control byte: with
///   an output, the call fails or leaves its temporary files behind where nvcc alone succeeds; with an input, nvcc
///   alone fails where `-objtemp` would make it succeed, and a drop-in refuses what nvcc refuses;
/// - an output starts with `-` (nvcc reads `-a.o.cpp4.ii` as an option) or its file name is longer than 227 bytes
///   (255 less the longest suffix, `.compute_100f.cudafe1.stub.c`); an input's file name is 217 bytes or longer
///   (nvcc alone fails on its temporary name there, `-objtemp` would not);
/// - an output is not a regular file (`-o /dev/null`, where root would get nvcc's files in `/dev`) or its directory
///   does not take new files (any user but root, `/dev`).
fn objtemp_blocker(facts: &Facts) -> Option<String> {
    let inv = facts.invocation;
    let unsafe_byte = |b: &u8| b"\"$,`\\[".contains(b) || b.is_ascii_control();
    let file_name_len = |p: &Path| p.file_name().map_or(0, |n| n.len());
    for input in &inv.inputs {
        let bytes = input.as_bytes();
        if let Some(b) = bytes.iter().find(|b| unsafe_byte(b)) {
            return Some(format!(
                "the input {} holds {}",
                crate::error::shell::display([input.as_os_str()]),
                Unpassable(*b)
            ));
        }
        if file_name_len(Path::new(input)) >= 217 {
            return Some(format!(
                "the input {}'s file name is 217 bytes or longer",
                crate::error::shell::display([input.as_os_str()])
            ));
        }
    }
    let outputs: Vec<PathBuf> = match inv.output_file() {
        Some(output) => vec![PathBuf::from(output)],
        None => inv
            .inputs
            .iter()
            .filter_map(|i| Path::new(i).file_stem())
            .map(|stem| Path::new(stem).with_extension("o"))
            .collect(),
    };
    for output in &outputs {
        let bytes = output.as_os_str().as_bytes();
        // What follows the output's name, which is quoted only for a message.
        let blocker = if let Some(b) = bytes.iter().find(|b| unsafe_byte(b)) {
            format!(" holds {}", Unpassable(*b))
        } else if bytes.starts_with(b"-") {
            " starts with `-`".to_string()
        } else if file_name_len(output) > 227 {
            "'s file name is longer than 227 bytes".to_string()
        } else {
            match facts.probes.output_place(output) {
                OutputPlace::Usable => continue,
                OutputPlace::NotRegular(kind) => format!(" is {kind}"),
                OutputPlace::DirNotWritable => " is in a directory this user cannot add files to".to_string(),
            }
        };
        return Some(format!("the output {}{blocker}", crate::error::shell::path(output)));
    }
    None
}

/// Why a placeholder has no value.
enum Missing {
    Pid(&'static str),
    Value(String),
}

/// The value of placeholder `name` for this call.
fn value(facts: &Facts, needs: &Needs, name: &str) -> std::result::Result<String, Missing> {
    let inv = facts.invocation;
    let (what, value, none) = match name {
        "pid" => {
            if needs.launcher.is_some() {
                return Err(Missing::Pid("nvcc runs behind a launcher"));
            }
            if needs.depfile {
                return Err(Missing::Pid("the wrapper waits for nvcc to complete a dependency file"));
            }
            if needs.threads {
                return Err(Missing::Pid("the wrapper may wait for nvcc to give back the job slots it lends"));
            }
            return Ok(facts.nvcc_process.pid.map_or_else(|| "<pid>".to_string(), |pid| format!("{pid:08x}")));
        }
        // (what the value is, for messages; the value; why there is none)
        "tmpdir" => ("nvcc's temporary directory", Some(facts.nvcc_process.tmpdir.as_os_str()), ""),
        "input" => (
            "the call's `.cu` input",
            inv.single_cu_input(),
            "the call has more than one input, or its input is not a `.cu` source",
        ),
        "output" => {
            let one_input = inv.single_cu_input().or(match inv.inputs.as_slice() {
                [only] => Some(only.as_os_str()),
                _ => None,
            });
            let none = "the call names no output file (`-o`), and has more than one input";
            ("the call's output file", inv.output_file().or(one_input), none)
        }
        other => return Err(Missing::Value(format!("the table names {{{other}}}, which the wrapper cannot fill"))),
    };
    let Some(value) = value else {
        return Err(Missing::Value(none.to_string()));
    };
    // The value goes inside an `-X` list, which must carry it unchanged; an `=` would also split a prefix map.
    let unpassable =
        first_unpassable(value.as_bytes()).or(value.as_bytes().contains(&b'=').then_some(Unpassable(b'=')));
    let shown = || crate::error::shell::display([value]);
    match (value.to_str(), unpassable) {
        (Some(""), _) => Err(Missing::Value(format!("{what} is empty"))),
        (Some(text), None) => Ok(text.to_string()),
        (None, None) => Err(Missing::Value(format!("{what}, {}, is not UTF-8", shown()))),
        (_, Some(byte)) => Err(Missing::Value(format!(
            "{what}, {}, holds {byte}, which nvcc would not pass to the host compiler unchanged",
            shown()
        ))),
    }
}

/// The kinds of output this call writes that some limit may be about.
fn outputs(facts: &Facts, call: Call) -> Vec<Output> {
    let inv = facts.invocation;
    let mut outputs = Vec::new();
    let checks = [
        (Output::DeviceDebug, inv.has_option("device-debug")),
        (Output::LineInfo, inv.has_option("generate-line-info")),
        (Output::DeviceLto, inv.with_role(Role::DeviceLto).next().is_some()),
        (Output::HostLto, inv.host_lto().is_some()),
        (Output::HostDebug, inv.has_option("debug")),
        (Output::Executable, call == Call::CompileAndLink),
        (Output::RdcObject, inv.has_option("device-c") || inv.has_option("relocatable-device-code")),
    ];
    outputs.extend(checks.into_iter().filter(|(_, yes)| *yes).map(|(output, _)| output));
    outputs
}

/// Whether a limit is about this call: its outputs, its host compiler (any, when the family is unknown), its
/// launcher, and for a source read from standard input, such a source.
fn holds(
    limit: &Limit,
    facts: &Facts,
    launcher: Option<&Path>,
    outputs: &[Output],
    family: Option<CompilerFamily>,
) -> bool {
    let launcher = match &limit.launcher {
        None => true,
        Some(name) => launcher.and_then(Path::file_name).is_some_and(|l| l == OsStr::new(name.as_ref())),
    };
    let stdin = limit.cause != Cause::StdinInput || facts.invocation.inputs.iter().any(|i| i == "-");
    launcher
        && stdin
        && limit.outputs.iter().any(|o| outputs.contains(o))
        && family.map_or(true, |f| limit.host_compilers.contains(&f))
}

fn output_name(output: Output) -> &'static str {
    match output {
        Output::Object => "objects",
        Output::RdcObject => "relocatable device code",
        Output::DeviceLink => "device links",
        Output::Archive => "archives",
        Output::Executable => "the program",
        Output::Ptx => "PTX",
        Output::Cubin => "cubins",
        Output::Fatbin => "fatbins",
        Output::CompressedFatbin => "compressed fatbins",
        Output::DeviceLto => "device-LTO code (`-dlto`)",
        Output::HostLto => "host-LTO code (`-flto`)",
        Output::HostDebug => "host debug info (`-g`)",
        Output::DeviceDebug => "device debug info (`-G`)",
        Output::LineInfo => "line tables (`-lineinfo`)",
    }
}
