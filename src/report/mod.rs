//! The one way a plan is shown. `explain` prints these lines, `doctor` prints them for its sample call, and the
//! debug log writes each one as a log line, so the three always say the same. A personality may add lines of its
//! own after them (doctor's libstdc++ check), never change these. `json` gives the same plan as data, for build
//! tools (`explain --format json`).

pub mod json;

use std::ffi::OsString;
use std::path::Path;

use crate::config::places::State;
use crate::config::Loaded;
use crate::context::vars;
use crate::error::shell;
use crate::plan::model::{CrossDecision, TargetFiles};
use crate::plan::target::NATIVE_SYSTEM;
use crate::prepare::Prepared;

/// The column values start at.
const WIDTH: usize = 13;

/// `label:` padded to the value column, then the value.
pub fn field(label: &str, value: impl std::fmt::Display) -> String {
    format!("{:<WIDTH$}{value}", format!("{label}:"))
}

/// Every line, in order: where the settings and the real nvcc came from, the release and target, the command as
/// given, each change with its reason, the notes and warnings, and the command that runs.
pub fn lines(prepared: &Prepared) -> Vec<String> {
    lines_for(prepared, "you ran")
}

/// `lines`, the command line labelled `asked` (doctor's is a sample call, not one the user ran).
pub fn lines_for(prepared: &Prepared, asked: &str) -> Vec<String> {
    let config = &prepared.setup.settings.config;
    let plan = &prepared.plan;
    let mut out = config_lines(config);
    out.push(field("real nvcc", format!("{} (found by {})", shell::path(&plan.nvcc.path), plan.nvcc.found_by)));
    if let Some(release) = &plan.decided.release {
        out.push(field("release", release));
        match &plan.decided.cross {
            Some(cross) => out.extend(
                cross_lines(cross, plan.decided.host.as_ref().map(|h| h.compiler.as_path()))
                    .into_iter()
                    .map(|(l, v)| field(l, v)),
            ),
            None => out.push(field("target", format!("{NATIVE_SYSTEM} (this machine)"))),
        }
    }
    let user = std::iter::once(OsString::from("nvcc")).chain(prepared.invocation.argv.iter().cloned());
    out.push(field(asked, shell::display(user.collect::<Vec<_>>().iter().map(OsString::as_os_str))));
    if plan.changes_nothing() {
        out.push(field("changes", "none"));
    } else {
        out.push("changes:".into());
        for r in &plan.changes.removed {
            out.push(format!(
                "  - {} (from {}): {}",
                shell::display(r.tokens.iter().map(OsString::as_os_str)),
                r.found.at.channel.place(&prepared.invocation),
                r.why
            ));
        }
        for w in &plan.changes.written {
            let replaced = prepared
                .invocation
                .positions(&w.replaces)
                .iter()
                .map(|&(c, i)| prepared.invocation.tokens(c)[i].clone())
                .collect::<Vec<_>>();
            out.push(format!(
                "  ~ -optf {} (in place of {}): what remains of those options files, {} bytes",
                shell::path(&w.path),
                shell::display(replaced.iter().map(OsString::as_os_str)),
                w.contents.len()
            ));
        }
        for (name, value) in plan.changes.env.iter().filter(|(name, _)| *name != vars::DEPTH) {
            out.push(format!("  = {name}={} (for nvcc)", shell::display([value.as_os_str()])));
        }
        for (place, additions) in [("before", &plan.changes.before), ("after", &plan.changes.after)] {
            for a in additions {
                out.push(format!(
                    "  + {} ({place} your arguments): {}",
                    shell::display(a.args.iter().map(OsString::as_os_str)),
                    a.why
                ));
            }
        }
        if let Some(t) = &plan.decided.threads {
            let add = match t.follow {
                true => format!("--threads {} (before your arguments, following the build's job slots)", t.most),
                false => format!("--threads 2 to {} (before your arguments, as job slots are free)", t.most),
            };
            out.push(format!("  + {add}: {}", t.why));
        }
        if let Some(d) = &plan.decided.depfile {
            let inputs = shell::display(d.inputs.iter().map(|p| p.as_os_str()));
            out.push(format!("  + {inputs} (as dependencies): {}", d.why));
        }
    }
    out.extend(plan.changes.notes.iter().map(|n| format!("  note: {n}")));
    out.extend(plan.changes.warnings.iter().map(|w| format!("  warning: {w}")));
    let command = prepared.final_command();
    out.push(field("runs", shell::display(command.iter().map(OsString::as_os_str))));
    out
}

/// Which configuration file applies, the places looked at before it, and what the environment overrode.
pub fn config_lines(config: &Loaded) -> Vec<String> {
    // Paths as a shell reads them back: bytes that are not UTF-8 written out, never U+FFFD (issue 26).
    let used = config.looked_at.last().filter(|l| l.state == State::Used);
    let file = used.map_or("none (defaults and probing)".into(), |l| l.to_string());
    let mut out = vec![field("config file", file)];
    let passed = config.looked_at.iter().filter(|l| l.state != State::Used);
    out.extend(passed.map(|l| format!("  looked at: {l}")));
    if let Some(used) = used {
        out.extend(config.ignored.iter().map(|(place, path)| {
            let path = crate::error::shell::path(path);
            format!("  ignored: {path} ({place}): {} comes first, and files are never merged", used.place)
        }));
    }
    out.extend(config.overrides.iter().map(|o| format!("  override: {o}")));
    out
}

/// The lines as one text, each ending in a newline.
pub fn text(prepared: &Prepared) -> String {
    lines(prepared).into_iter().map(|l| l + "\n").collect()
}

/// `text`, the command line labelled `asked`.
pub fn text_for(prepared: &Prepared, asked: &str) -> String {
    lines_for(prepared, asked).into_iter().map(|l| l + "\n").collect()
}

/// What `doctor` and `explain` show of a cross build, as (label, value) lines: the target, the compiler for it, where
/// its CUDA files and its system headers and libraries come from.
fn cross_lines(cross: &CrossDecision, compiler: Option<&Path>) -> Vec<(&'static str, String)> {
    let files = match &cross.files {
        TargetFiles::Toolkit(dir) => {
            format!("{} (the toolkit's, by --target-directory)", crate::error::shell::path(dir))
        }
        TargetFiles::CudaRoot(dir) => format!("{} (`[target] cuda-root`, by -I/-L)", crate::error::shell::path(dir)),
        TargetFiles::Given(dir) => format!("{dir} (the command line's target directory)"),
    };
    let compiler = compiler.map_or("given by the command line".into(), crate::error::shell::path);
    let sysroot =
        cross.sysroot.as_ref().map_or("none (the cross compiler's own)".into(), |s| crate::error::shell::path(s));
    vec![
        ("target", format!("{} (cross-compiled)", cross.platform)),
        ("compiler", compiler),
        ("target CUDA", files),
        ("sysroot", sysroot),
    ]
}
