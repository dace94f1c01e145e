//! Deciding what to change: a pure function from the parsed command line, the configuration and what is known about
//! the toolchain to a `Plan`. Nothing here touches the OS.
//!
//! A plan adds arguments before the user's (so the user's own flags still win, nvcc using the last value of a
//! repeated option) or after them, sets environment variables for nvcc, and gives a human reason for every change.
//! It never edits the user's tokens.

pub mod host_compiler;

use std::ffi::OsString;

use crate::args::Invocation;
use crate::config::Loaded;
use crate::context::vars;
use crate::locate::RealNvcc;

/// Arguments the wrapper adds, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Addition {
    pub args: Vec<OsString>,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub nvcc: RealNvcc,
    /// Added before the user's arguments.
    pub before: Vec<Addition>,
    /// Added after the user's arguments.
    pub after: Vec<Addition>,
    /// Environment variables set for nvcc.
    pub env: Vec<(&'static str, OsString)>,
    /// Decisions that changed nothing, with why (shown by `explain` and the debug log).
    pub notes: Vec<String>,
}

impl Plan {
    /// A plan that runs nvcc with the user's arguments untouched.
    pub fn pass_through(nvcc: RealNvcc, depth: u32) -> Plan {
        Plan {
            nvcc,
            before: Vec::new(),
            after: Vec::new(),
            // Raised on every exec, so that a chain leading back to a wrapper stops (see `locate`).
            env: vec![(vars::DEPTH, (depth + 1).to_string().into())],
            notes: Vec::new(),
        }
    }

    /// The arguments nvcc receives after argv[0]: ours before, the user's exactly as given, ours after.
    pub fn command(&self, inv: &Invocation) -> Vec<OsString> {
        let ours = |adds: &[Addition]| adds.iter().flat_map(|a| a.args.clone()).collect::<Vec<_>>();
        let mut args = ours(&self.before);
        args.extend(inv.argv.iter().cloned());
        args.extend(ours(&self.after));
        args
    }

    pub fn changes_nothing(&self) -> bool {
        self.before.is_empty() && self.after.is_empty()
    }
}

/// Decide what to run for this invocation.
pub fn plan(inv: &Invocation, _config: &Loaded, nvcc: RealNvcc, depth: u32) -> Plan {
    let mut plan = Plan::pass_through(nvcc, depth);
    if let Some(query) = inv.query_only() {
        plan.notes.push(format!(
            "`{}` only asks nvcc for information: nothing is added",
            query.spelling
        ));
        return plan;
    }
    if !inv.not_understood.is_empty() {
        plan.notes.push(format!(
            "the command line is not fully understood ({}): nothing is added, nvcc will judge it",
            inv.not_understood.join("; ")
        ));
        return plan;
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::Context;
    use crate::locate::FoundBy;

    fn nvcc() -> RealNvcc {
        RealNvcc {
            path: "/cuda/bin/nvcc".into(),
            found_by: FoundBy::Path,
        }
    }

    fn inv(args: &[&str]) -> Invocation {
        Invocation::parse_args(
            &Context::default(),
            args.iter().map(OsString::from).collect(),
        )
        .unwrap()
    }

    #[test]
    fn user_arguments_come_through_exactly_and_depth_rises() {
        let i = inv(&["-c", "a b.cu", "", "-o", "x.o"]);
        let p = plan(&i, &Loaded::default(), nvcc(), 2);
        assert_eq!(p.command(&i), i.argv);
        assert_eq!(p.env, vec![(vars::DEPTH, OsString::from("3"))]);
    }

    #[test]
    fn additions_go_around_the_user_arguments() {
        let i = inv(&["-c", "a.cu"]);
        let mut p = plan(&i, &Loaded::default(), nvcc(), 0);
        p.before.push(Addition {
            args: vec!["-ccbin=g++-11".into()],
            reason: "r".into(),
        });
        p.after.push(Addition {
            args: vec!["-lfoo".into()],
            reason: "r".into(),
        });
        assert_eq!(p.command(&i), ["-ccbin=g++-11", "-c", "a.cu", "-lfoo"]);
    }

    #[test]
    fn query_modes_and_unclear_command_lines_get_notes_and_nothing_else() {
        for args in [&["--version"][..], &["-c", "a.cu", "-ccbin"]] {
            let p = plan(&inv(args), &Loaded::default(), nvcc(), 0);
            assert!(p.changes_nothing());
            assert_eq!(p.notes.len(), 1, "{args:?}");
        }
    }
}
