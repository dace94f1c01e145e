//! The reference the user reads, made from the code it describes: the environment variables, the config keys, the
//! exit codes and the nvcc options the wrapper recognises, as the pages of docs/reference/ and the man page
//! (docs/man/nvcc-wrapper.1). The tests below render each from the code's own tables and compare it with the file, so
//! a variable, key, exit code or option added without its documentation fails a test:
//!
//! - an exit code: `exit_meaning` matches every `ErrorKind`, so a new kind does not compile without its meaning;
//! - a variable: every constant of `context::vars` must have a row in `VARIABLES` (the source is read);
//! - a config key: every key serde accepts in each table must have a row in `KEYS`, and every row's example must
//!   parse;
//! - an nvcc option: the page is the option table itself.
//!
//! `NVCC_WRAPPER_UPDATE_REFERENCE=1 cargo test --lib reference` writes the files anew. Only tests compile this module:
//! the binary carries none of it.

mod tables;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::args::table::{Arity, Role, OPTIONS};
use crate::config::OVERRIDES;
use crate::error::ErrorKind;
use tables::{exit_meaning, KeyRow, KEYS, VARIABLES};

fn repo(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

/// Markdown table cell: no `|` may break the row.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

const GENERATED: &str =
    "<!-- Made from the code by src/checks/reference/ (`NVCC_WRAPPER_UPDATE_REFERENCE=1 cargo test --lib reference`): edit the tables there, not this file. -->\n\n";

/// What a variable does: its own words, or for one that replaces a config key, the key and what it takes.
fn variable_meaning(name: &str, own: &str) -> String {
    match OVERRIDES.iter().find(|o| o.var == name) {
        Some(o) => {
            let extra = if own.is_empty() { String::new() } else { format!("; {own}") };
            format!("replaces `{}`: {} (empty: the same as unset){extra}", o.key, o.expects)
        }
        None => own.to_string(),
    }
}

fn environment_page() -> String {
    let mut page = String::from("# Environment variables\n\n");
    page += GENERATED;
    page += "Switches take `1`/`true`/`yes`/`on` or `0`/`false`/`no`/`off`; anything else is an error (exit code 64). A \
             value the wrapper cannot read is an error naming the variable, never ignored. An `NVCC_WRAPPER_*` variable \
             not in this table changes nothing, and is a warning naming the one it is nearest to.\n\n| variable | meaning |\n|---|---|\n";
    for (name, own) in VARIABLES {
        let _ = writeln!(page, "| `{name}` | {} |", cell(&variable_meaning(name, own)));
    }
    page
}

fn exit_codes_page() -> String {
    let mut page = String::from("# Exit codes\n\n");
    page += GENERATED;
    page += "When the wrapper runs nvcc, the exit code (or signal) is nvcc's own. nvcc itself uses 1 for its errors; \
             the wrapper never does, so its own failures can be told apart. Every error is one `nvcc-wrapper: error: \
             ...` line that names the file, line, value or flag at fault, and a `help:` line that says what to do.\n\n\
             | code | meaning |\n|---|---|\n";
    let mut kinds: Vec<ErrorKind> = ErrorKind::ALL.iter().copied().filter(|k| k.exit_code() != 0).collect();
    kinds.sort_by_key(|k| k.exit_code());
    for kind in kinds {
        let _ = writeln!(page, "| {} | {} |", kind.exit_code(), cell(exit_meaning(kind)));
    }
    page
}

fn config_page() -> String {
    let mut page = String::from("# Configuration keys\n\n");
    page += GENERATED;
    page += tables::PLACES;
    page += "\n\nEvery key is optional. An unknown key, a wrong type or a bad value is an error naming the file, line \
             and column (exit code 78). Relative paths are relative to the file's directory.\n\n\
             | key | type and default | meaning | variable |\n|---|---|---|---|\n";
    for KeyRow { key, kind, meaning, .. } in KEYS {
        let var = OVERRIDES.iter().find(|o| o.key == *key).map_or(String::new(), |o| format!("`{}`", o.var));
        let _ = writeln!(page, "| `{key}` | {} | {} | {var} |", cell(kind), cell(meaning));
    }
    page
}

fn options_page() -> String {
    let mut page = String::from("# nvcc options the wrapper recognises\n\n");
    page += GENERATED;
    page +=
        "The wrapper reads nvcc's command line (argv, `NVCC_PREPEND_FLAGS`, `NVCC_APPEND_FLAGS` and options files) \
             by this table, made from `nvcc --help` of 13.0. An option it does not list passes through untouched; one \
             that takes a value is listed even when the wrapper ignores it, so that the value is not read as an \
             option. A short name takes one dash, a long name two; a value follows as the next word or after `=`.\n\n\
             | long | short | value | what the wrapper does with it |\n|---|---|---|---|\n";
    for spec in OPTIONS {
        let value = match spec.arity {
            Arity::Flag => "none",
            Arity::Value => "next word or `=`",
            Arity::Joined => "next word, `=`, or glued to the short name",
        };
        let short = spec.short.map_or(String::new(), |s| format!("`-{s}`"));
        let _ = writeln!(page, "| `--{}` | {short} | {value} | {} |", spec.long, cell(role_meaning(spec.role)));
    }
    page
}

fn role_meaning(role: Role) -> &'static str {
    match role {
        Role::HostCompiler => "a host compiler you chose: the wrapper adds none",
        Role::GpuTarget(_) => "a GPU target: `[gpu] arch-flags` decides (respect, replace, append)",
        Role::TargetDirectory => "your target directory: no target files are added",
        Role::OptionsFile => "read, as nvcc reads it, and searched for the options of this table",
        Role::Query => "nvcc only prints something: nothing is added",
        Role::DryRun | Role::Verbose | Role::Machine => "passed on",
        Role::AllowUnsupportedCompiler => "your choice: the wrapper does not add it again, nor warn",
        Role::DeviceLto => "device LTO: the capabilities take the form the phase needs",
        Role::Phase(_) => "the phase, which decides what is added (fatbin flags, runpaths, GPU targets)",
        Role::CompilerOptions => "read for host LTO (`-flto`) and a random seed of yours (`-frandom-seed`)",
        Role::LinkerOptions => "passed on",
        Role::FatbinCompression => "your fatbin compression: none is added",
        Role::FatbinOptions => "read for a compression option, which is then yours",
        Role::DependenciesWithCompile => "a dependency file is written: the wrapper adds its inputs to it",
        Role::DependencyFile => "where the dependency file goes",
        Role::OutputFile => "names the dependency file when `-MF` does not, and seeds reproducible builds",
        Role::OutputDirectory => "names the dependency file when `-MF` does not",
        Role::KeepIntermediates => "your intermediate files: reproducible builds add no `-objtemp`",
        Role::RandomSeed => "your seed: reproducible builds add none",
        Role::CudafeOptions => {
            "read for a source name of yours (`--orig_src_path_name`), which reproducible builds then keep"
        }
        Role::Parallelism => "your choice of how nvcc runs its work at once: no threads are added from job slots",
        Role::Other => "its value is skipped; passed on",
    }
}

/// The man page: the name, synopsis and each command with its options from clap's definition of the command line,
/// and ENVIRONMENT, FILES and EXIT STATUS from the tables above.
fn man_page() -> String {
    let cmd = crate::cli::command();
    let man = clap_mangen::Man::new(cmd.clone());
    let mut out = Vec::new();
    man.render_title(&mut out).unwrap();
    man.render_name_section(&mut out).unwrap();
    let mut page = String::from_utf8(out).unwrap();
    page += ".SH SYNOPSIS\n\\fBnvcc\\fR [\\fINVCC ARGUMENTS\\fR]...\n.br\n\\fBnvcc\\-wrapper\\fR \\fICOMMAND\\fR [\\fIOPTIONS\\fR]\n";
    page += ".SH DESCRIPTION\nInstalled as \\fBnvcc\\fR (a link or copy named nvcc), the wrapper is a drop\\-in nvcc: for each \
             call it chooses a host compiler the real nvcc accepts that shares libstdc++ with the main (stdenv) \
             compiler, adds \\-gencode flags for the configured GPU capabilities, adds the settings of a cross build, \
             and then runs the real nvcc, whose exit status, output and signals are the call's own. Every change has a \
             reason, shown by \\fBnvcc\\-wrapper explain\\fR. Called as \\fBnvcc\\-wrapper\\fR, it runs one of the \
             commands below.\n.SH COMMANDS\n";
    // Each command, and each of a group's (`compat scan`).
    let mut commands: Vec<(String, clap::Command)> = Vec::new();
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        match sub.has_subcommands() {
            false => commands.push((format!("nvcc-wrapper {}", sub.get_name()), sub.clone())),
            true => commands.extend(
                sub.get_subcommands()
                    .filter(|s| s.get_name() != "help")
                    .map(|s| (format!("nvcc-wrapper {} {}", sub.get_name(), s.get_name()), s.clone())),
            ),
        }
    }
    for (name, sub) in &commands {
        let usage = sub.clone().render_usage().to_string();
        let usage = usage.trim_start_matches("Usage: ").replacen(sub.get_name(), name, 1);
        let _ = writeln!(
            page,
            ".TP\n\\fB{}\\fR\n{}",
            escape(&usage),
            escape(&sub.get_about().map(|a| a.to_string()).unwrap_or_default())
        );
        for arg in sub.get_arguments().filter(|a| a.get_long().is_some() && a.get_id() != "help") {
            let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
            let _ = writeln!(page, ".RS\n.TP\n\\fB{}\\fR\n{}\n.RE", option_spelling(arg), escape(&help));
        }
    }
    page += ".SH ENVIRONMENT\n";
    for (name, own) in VARIABLES {
        let _ = writeln!(page, ".TP\n\\fB{}\\fR\n{}", escape(name), escape(&variable_meaning(name, own)));
    }
    let _ = writeln!(page, ".SH CONFIGURATION\n{} The keys:", escape(tables::PLACES));
    for KeyRow { key, kind, meaning, .. } in KEYS {
        let var = OVERRIDES.iter().find(|o| o.key == *key).map_or(String::new(), |o| format!(" (variable {})", o.var));
        let _ = writeln!(
            page,
            ".TP\n\\fB{}\\fR\n{}; {}{}",
            escape(&key.to_string()),
            escape(kind),
            escape(meaning),
            escape(&var)
        );
    }
    page += ".SH FILES\n";
    for (file, what) in tables::FILES {
        let _ = writeln!(page, ".TP\n\\fI{}\\fR\n{}", escape(file), escape(what));
    }
    page += ".SH EXIT STATUS\nWhen the wrapper runs nvcc, the exit status is nvcc's own; nvcc uses 1 for its errors, \
             which the wrapper never does.\n";
    let mut kinds: Vec<ErrorKind> = ErrorKind::ALL.iter().copied().filter(|k| k.exit_code() != 0).collect();
    kinds.sort_by_key(|k| k.exit_code());
    for kind in kinds {
        let _ = writeln!(page, ".TP\n\\fB{}\\fR\n{}", kind.exit_code(), escape(exit_meaning(kind)));
    }
    page += ".SH SEE ALSO\nnvcc(1); the user guide and reference in docs/ of the source.\n";
    page
}

/// An option as a man page shows it, with its short name and its value (issue 60: `--jobs` stood without `-j <N>`):
/// `-j, --jobs <N>`, escaped for roff.
fn option_spelling(arg: &clap::Arg) -> String {
    let mut spelled = String::new();
    if let Some(short) = arg.get_short() {
        spelled += &format!("\\-{short}, ");
    }
    spelled += &format!("\\-\\-{}", escape(arg.get_long().unwrap_or_default()));
    let takes_value = arg.get_action().takes_values();
    if let (true, Some(names)) = (takes_value, arg.get_value_names()) {
        for name in names {
            spelled += &format!(" \\fI<{}>\\fB", escape(name.as_str()));
        }
    } else if takes_value {
        spelled += &format!(" \\fI<{}>\\fB", escape(&arg.get_id().as_str().to_ascii_uppercase()));
    }
    spelled
}

/// Text for roff: its backslashes and hyphens escaped, Markdown's backquotes left out.
fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('-', "\\-").replace('`', "")
}

/// The generated files and what makes each.
fn pages() -> Vec<(&'static str, String)> {
    vec![
        ("docs/reference/environment.md", environment_page()),
        ("docs/reference/exit-codes.md", exit_codes_page()),
        ("docs/reference/config.md", config_page()),
        ("docs/reference/nvcc-options.md", options_page()),
        ("docs/man/nvcc-wrapper.1", man_page()),
        (crate::nix_answers::FILE, nix_answers()),
    ]
}

/// What makeNvccWrapper's compat.nix looks up (src/nix_answers/), as `nvcc-wrapper compat nix-answers` prints it.
fn nix_answers() -> String {
    crate::nix_answers::render(&crate::compat::Compat::built_in())
}

mod tests;
