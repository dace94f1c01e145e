//! The one way a plan is shown. `explain` prints these lines, `doctor` prints them for its sample call, and the
//! debug log writes each one as a log line, so the three always say the same. A personality may add lines of its
//! own after them (doctor's libstdc++ check), never change these.

use std::ffi::OsString;

use crate::context::vars;
use crate::plan::target::NATIVE_SYSTEM;
use crate::prepare::Prepared;
use crate::shell;

/// The column values start at.
const WIDTH: usize = 13;

/// `label:` padded to the value column, then the value.
pub fn field(label: &str, value: impl std::fmt::Display) -> String {
    format!("{:<WIDTH$}{value}", format!("{label}:"))
}

/// Every line, in order: where the settings and the real nvcc came from, the release and target, the command as
/// given, each change with its reason, the notes and warnings, and the command that runs.
pub fn lines(prepared: &Prepared) -> Vec<String> {
    let config = &prepared.setup.config;
    let plan = &prepared.plan;
    let mut out = Vec::new();
    // Paths as a shell reads them back: bytes that are not UTF-8 written out, never U+FFFD (issue 26).
    let file =
        config.source.path.as_ref().map_or("none (defaults and probing)".into(), |p| shell::display([p.as_os_str()]));
    out.push(field("config file", file));
    out.extend(config.source.overrides.iter().map(|o| format!("  override: {o}")));
    out.push(field(
        "real nvcc",
        format!("{} (found by {})", shell::display([plan.nvcc.path.as_os_str()]), plan.nvcc.found_by),
    ));
    if let Some(release) = &plan.release {
        out.push(field(
            "release",
            match &release.version {
                Ok(v) => format!("{v} (from {})", release.from),
                Err(e) => format!("unknown ({e})"),
            },
        ));
        match &plan.cross {
            Some(cross) => out.extend(
                cross.lines(plan.host.as_ref().map(|h| h.compiler.as_path())).into_iter().map(|(l, v)| field(l, v)),
            ),
            None => out.push(field("target", format!("{NATIVE_SYSTEM} (this machine)"))),
        }
    }
    let user = std::iter::once(OsString::from("nvcc")).chain(prepared.invocation.argv.iter().cloned());
    out.push(field("you ran", shell::display(user.collect::<Vec<_>>().iter().map(OsString::as_os_str))));
    if plan.changes_nothing() {
        out.push(field("changes", "none"));
    } else {
        out.push("changes:".into());
        for r in &plan.removed {
            out.push(format!(
                "  - {} (from {}): {}",
                shell::display(r.tokens.iter().map(OsString::as_os_str)),
                r.found.at.channel.describe(&prepared.invocation),
                r.reason
            ));
        }
        for w in &plan.written {
            let replaced = prepared
                .invocation
                .positions(&w.replaces)
                .iter()
                .map(|&(c, i)| prepared.invocation.tokens(c)[i].clone())
                .collect::<Vec<_>>();
            out.push(format!(
                "  ~ -optf {} (in place of {}): what remains of those options files, {} bytes",
                shell::display([w.path.as_os_str()]),
                shell::display(replaced.iter().map(OsString::as_os_str)),
                w.contents.len()
            ));
        }
        for (name, value) in plan.env.iter().filter(|(name, _)| *name != vars::DEPTH) {
            out.push(format!("  = {name}={} (for nvcc)", shell::display([value.as_os_str()])));
        }
        for (place, additions) in [("before", &plan.before), ("after", &plan.after)] {
            for a in additions {
                out.push(format!(
                    "  + {} ({place} your arguments): {}",
                    shell::display(a.args.iter().map(OsString::as_os_str)),
                    a.reason
                ));
            }
        }
    }
    out.extend(plan.notes.iter().map(|n| format!("  note: {n}")));
    out.extend(plan.warnings.iter().map(|w| format!("  warning: {w}")));
    let command = prepared.final_command();
    out.push(field("runs", shell::display(command.iter().map(OsString::as_os_str))));
    out
}

/// The lines as one text, each ending in a newline.
pub fn text(prepared: &Prepared) -> String {
    lines(prepared).into_iter().map(|l| l + "\n").collect()
}
