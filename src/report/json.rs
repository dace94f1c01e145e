//! The plan as data, for build tools: `nvcc-wrapper explain --format json -- ARGS`. The schema is documented in
//! docs/reference/explain-json.md and versioned by `schema`; a field is only ever added within a version, never
//! renamed, removed or given another meaning.
//!
//! A word of a command (an argument, a path in it) is a JSON string when it is UTF-8, else `{"hex": "..."}`, its
//! bytes in hex: nvcc takes any bytes, and a tool must be able to run exactly what is shown.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use crate::config::places::{Place, State};
use serde_json::{json, Value};

use crate::plan::model::{Said, TargetFiles};
use crate::plan::Release;
use crate::prepare::Prepared;

/// The version of this schema.
pub const SCHEMA: u32 = 1;

/// The whole plan of one call.
pub fn plan(prepared: &Prepared) -> Value {
    let config = &prepared.setup.settings.config;
    let plan = &prepared.plan;
    let inv = &prepared.invocation;
    let overrides: Vec<Value> = config
        .overrides
        .iter()
        .map(|o| json!({"variable": o.var, "key": o.key.to_string(), "value": o.value}))
        .collect();
    let release = plan.decided.release.as_ref().map(|r| match r {
        Release::Known { version, from } => json!({"status": "known", "version": version.to_string(), "from": from.to_string()}),
        Release::Newer { version, from, newest } => json!({
            "status": "newer", "version": version.to_string(), "from": from.to_string(), "decided-as": newest.to_string()
        }),
        Release::Unknown { why } => json!({"status": "unknown", "why": why.to_string()}),
    });
    let host = plan.decided.host.as_ref().map(|h| {
        json!({
            "compiler": word(h.compiler.as_os_str()),
            "stdenv": h.stdenv.as_ref().map(|s| word(s.as_os_str())),
            "libstdcxx-dir": h.libstdcxx_dir.as_ref().map(|d| word(d.as_os_str())),
        })
    });
    let cross = plan.decided.cross.as_ref().map(|c| {
        let (kind, files) = match &c.files {
            TargetFiles::Toolkit(dir) => ("toolkit", word(dir.as_os_str())),
            TargetFiles::CudaRoot(dir) => ("cuda-root", word(dir.as_os_str())),
            TargetFiles::Given(dir) => ("given", Value::String(dir.clone())),
        };
        json!({
            "platform": c.platform,
            "files": {"from": kind, "path": files},
            "sysroot": c.sysroot.as_ref().map(|s| word(s.as_os_str())),
        })
    });
    let mut changes = Vec::new();
    for r in &plan.changes.removed {
        let mut change = said(&r.why);
        change["action"] = "remove".into();
        change["tokens"] = words(r.tokens.iter());
        change["from"] = r.found.at.channel.place(inv).to_string().into();
        changes.push(change);
    }
    for w in &plan.changes.written {
        let replaced = inv.positions(&w.replaces).iter().map(|&(c, i)| inv.tokens(c)[i].clone()).collect::<Vec<_>>();
        changes.push(json!({
            "action": "write-options-file",
            "path": word(w.path.as_os_str()),
            "replaces": words(replaced.iter()),
            "bytes": w.contents.len(),
        }));
    }
    for (name, value) in plan.changes.env.iter().filter(|(name, _)| *name != crate::context::vars::DEPTH) {
        changes.push(json!({"action": "set-env", "name": name, "value": word(value)}));
    }
    for (place, additions) in [("before", &plan.changes.before), ("after", &plan.changes.after)] {
        for a in additions {
            let mut change = said(&a.why);
            change["action"] = "add".into();
            change["place"] = place.into();
            change["args"] = words(a.args.iter());
            changes.push(change);
        }
    }
    if let Some(t) = &plan.decided.threads {
        let mut change = said(&t.why);
        change["action"] = "take-threads".into();
        change["most"] = t.most.into();
        change["follow"] = t.follow.into();
        changes.push(change);
    }
    if let Some(d) = &plan.decided.depfile {
        let mut change = said(&d.why);
        change["action"] = "add-dependencies".into();
        change["depfiles"] = Value::Array(d.depfiles.iter().map(|p| word(p.as_os_str())).collect());
        change["inputs"] = Value::Array(d.inputs.iter().map(|p| word(p.as_os_str())).collect());
        changes.push(change);
    }
    json!({
        "schema": SCHEMA,
        "config": {
            "file": config.path.as_ref().map(|p| word(p.as_os_str())),
            "looked-at": config.looked_at.iter().map(|l| json!({
                "path": word(l.path.as_os_str()),
                "place": match l.place {
                    Place::Named => "named",
                    Place::Installation => "installation",
                    Place::User => "user",
                    Place::Machine => "machine",
                },
                "state": match l.state {
                    State::Used => "used",
                    State::Missing => "missing",
                    State::NixBuild => "not-read-in-nix-build",
                    State::SwitchedOff => "switched-off",
                    State::Unusable(_) => "unusable",
                },
                "what": match l.state {
                    State::Unusable(what) => Some(what),
                    _ => None,
                },
            })).collect::<Vec<_>>(),
            "ignored": config.ignored.iter().map(|(_, p)| word(p.as_os_str())).collect::<Vec<_>>(),
            "overrides": overrides,
        },
        "nvcc": {"path": word(plan.nvcc.path.as_os_str()), "found-by": plan.nvcc.found_by.to_string()},
        "release": release,
        "host-compiler": host,
        "cross": cross,
        "launcher": plan.decided.launcher.as_ref().map(|l| word(l.as_os_str())),
        "ran": words(inv.argv.iter()),
        "changes": changes,
        "notes": plan.changes.notes.iter().map(said).collect::<Vec<_>>(),
        "warnings": plan.changes.warnings.iter().map(said).collect::<Vec<_>>(),
        "runs": words(prepared.final_command().iter()),
    })
}

/// A message: the step that said it, its stable code, and the sentence.
fn said(s: &Said) -> Value {
    json!({"step": s.step, "code": s.code(), "text": s.to_string()})
}

fn words<'a>(words: impl Iterator<Item = &'a std::ffi::OsString>) -> Value {
    Value::Array(words.map(|w| word(w)).collect())
}

/// A string when UTF-8, else `{"hex": ...}`.
pub fn word(word: &OsStr) -> Value {
    match word.to_str() {
        Some(s) => Value::String(s.to_string()),
        None => json!({"hex": word.as_bytes().iter().map(|b| format!("{b:02x}")).collect::<String>()}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    #[test]
    fn words_are_strings_unless_they_are_not_utf8() {
        assert_eq!(word(OsStr::new("-ccbin=/usr/bin/g++")), json!("-ccbin=/usr/bin/g++"));
        assert_eq!(word(OsStr::from_bytes(b"a\xffb")), json!({"hex": "61ff62"}));
    }

    #[test]
    fn the_schema_page_names_every_step() {
        let page = include_str!("../../docs/reference/explain-json.md");
        let row = page.lines().find(|l| l.starts_with("| `step` |")).expect("the `step` row");
        let named: Vec<&str> = row.split('`').skip(3).step_by(2).collect();
        let mut steps: Vec<&str> = vec!["facts", "plan"];
        steps.extend(crate::plan::STEP_NAMES);
        assert_eq!(named, steps, "docs/reference/explain-json.md's `step` row and the planner's steps differ");
    }
}
