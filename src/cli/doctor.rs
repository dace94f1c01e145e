//! `nvcc-wrapper doctor`: everything the wrapper would rely on, checked and shown, one line per problem.
//!
//! It runs the drop-in's own preparation (config file, environment overrides, real nvcc, release, tables, plan) for
//! a representative compile and link, in the same environment, and shows the plan with the same lines as `explain`.
//! Whatever would stop the drop-in is a problem here. Then it checks what a plan cannot see: that the libstdc++
//! programs will load provides every GLIBCXX_ version the stdenv compiler's objects may need.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::Path;

use crate::compat::Compat;
use crate::config::places;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::plan::{self, Release};
use crate::prepare::Setup;
use crate::probe::glibcxx;
use crate::probe::system::{Probes, System};
use crate::report::{self, field};

/// The call the plan is shown for.
const SAMPLE: [&str; 3] = ["doctor.cu", "-o", "doctor"];

/// The report (stdout) and the problems found; problems make the exit code 3.
pub fn run(ctx: &Context) -> Result<(String, Vec<String>)> {
    let (mut out, mut problems) = check_plan(ctx)?;
    check_config_places(ctx, &mut problems);
    check_path(ctx, &mut out, &mut problems);
    Ok((out, problems))
}

/// The drop-in's preparation for the sample call, shown as `explain` shows it, and what would stop it.
fn check_plan(ctx: &Context) -> Result<(String, Vec<String>)> {
    let mut out = String::new();
    let mut problems = Vec::new();
    let mut setup = match Setup::new(ctx) {
        Ok(setup) => setup,
        Err(e) => {
            problems.push(problem(&e));
            return Ok((out, problems));
        }
    };
    setup.settings.config.find_ignored(ctx);
    let config = &setup.settings.config;
    let mut header = report::config_lines(config);
    header.push(field(
        "real nvcc",
        format!("{} (found by {})", crate::error::shell::path(&setup.located.nvcc.path), setup.located.nvcc.found_by),
    ));
    // What a failed plan's report needs to show the release; probed only then, since a plan learns it itself.
    let (cuda_version, probes, nvcc) =
        (config.config.cuda_version.clone(), setup.probes.clone(), setup.located.nvcc.path.clone());
    let compat = setup.settings.compat.clone();
    let prepared = match setup.describe(ctx, SAMPLE.map(OsString::from).to_vec()) {
        Ok(prepared) => prepared,
        Err(e) => {
            for line in header {
                let _ = writeln!(out, "{line}");
            }
            write_release(
                &Release::decide(cuda_version.as_ref(), &probes, &nvcc, &compat).0,
                &compat,
                &mut out,
                &mut problems,
            );
            problems.push(problem(&e));
            return Ok((out, problems));
        }
    };
    out += &report::text_for(&prepared, "sample call");
    let plan = &prepared.plan;
    if let Some(release) = &plan.decided.release {
        write_release(release, &compat, &mut String::new(), &mut problems);
        if let Some(row) = release.version().and_then(|v| compat.host_compilers.limits_for(v)) {
            let _ = writeln!(out, "{}", field("accepts", format!("{} ({})", row.accepts().describe(), row.source)));
        }
    }
    // An unknown release is already a problem above.
    let own =
        plan.changes.warnings.iter().filter(|w| !matches!(w.get(), Some(plan::facts::Note::ReleaseUnknown { .. })));
    problems.extend(own.map(|w| w.to_string()));
    // A compiler the config names, or one found, that cannot be used (issue 60: `stdenv = "g++-13"`, not installed,
    // was a note in explain alone while another compiler was chosen without the stdenv's libstdc++).
    use plan::host_compiler::Note as Host;
    let left_out = plan
        .changes
        .notes
        .iter()
        .filter(|n| matches!(n.get(), Some(Host::StdenvLeftOut { .. } | Host::CandidateLeftOut { .. })));
    problems.extend(left_out.map(|n| {
        format!("{n}\n  help: install it, or name in the config a compiler that is there (`nvcc-wrapper explain` shows the one chosen)")
    }));
    check_libstdcxx(&prepared.setup.probes, plan, &mut out, &mut problems);
    Ok((out, problems))
}

/// Problems of the config places: something unreadable where a file is looked for, and files in places the wrapper
/// never reads (`~/.config/nvcc-wrapper.toml`, a `config.toml` beside the binary): whoever wrote one expects it to
/// apply. A file of a later place, ignored whole, is in the config lines (`report::config_lines`).
fn check_config_places(ctx: &Context, problems: &mut Vec<String>) {
    let looked = places::find(ctx, places::there);
    for unusable in looked.iter().filter(|l| matches!(l.state, places::State::Unusable(_))) {
        problems.push(format!(
            "{unusable}
  help: put the configuration file there, or remove what is there (`nvcc-wrapper explain` shows the places read)"
        ));
    }
    for (wrong, right) in places::near_misses(ctx) {
        problems.push(format!(
            "{} looks like a configuration file, but the wrapper never reads that place\n  help: move it to {} (`nvcc-wrapper doctor` then shows it as the config file), or remove it",
            crate::error::shell::path(&wrong),
            crate::error::shell::path(&right)
        ));
    }
}

/// What a build runs as `nvcc`: this wrapper, or else the problem, with what to change. A CUDA `bin` before the
/// wrapper's directory on PATH (a common `.bashrc` order) makes every build run the real nvcc, with nothing decided.
fn check_path(ctx: &Context, out: &mut String, problems: &mut Vec<String>) {
    match crate::prepare::locate::nvcc_on_path(ctx) {
        crate::prepare::locate::OnPath::Wrapper(found) => {
            let _ = writeln!(out, "{}", field("PATH's nvcc", format!("{} (this wrapper)", crate::error::shell::path(&found))));
        }
        crate::prepare::locate::OnPath::Other(found) => {
            let dir = found.parent().unwrap_or(Path::new("/"));
            problems.push(format!(
                "`nvcc` on PATH is {}, not this wrapper: a build that runs `nvcc` gets no host compiler, GPU targets or cross settings from it\n  help: put the directory of the wrapper's `nvcc` link before {} on PATH (in ~/.bashrc, for example: export PATH=\"$HOME/.local/bin:$PATH\"), then check that `command -v nvcc` prints that link",
                crate::error::shell::path(&found),
                crate::error::shell::path(dir)
            ));
        }
        crate::prepare::locate::OnPath::None => problems.push(
            "there is no `nvcc` on PATH: a build that runs `nvcc` finds none\n  help: install the wrapper as `nvcc` in a directory on PATH (`man nvcc-wrapper`, or the README's Install)".to_string(),
        ),
    }
}

/// A release line (when the plan could not be made) and the problems an unknown or untabled release is.
fn write_release(release: &Release, compat: &Compat, out: &mut String, problems: &mut Vec<String>) {
    match release.version() {
        Some(v) => {
            let _ = writeln!(out, "{}", field("release", release));
            if compat.host_compilers.limits_for(v).is_none() {
                problems.push(format!(
                    "nvcc {v} is not in the compatibility table: the wrapper cannot check host compilers for it"
                ));
            }
        }
        None => problems.push(format!("cannot tell the NVCC release: {release}; set `cuda-version` in the config")),
    }
}

/// An error that would stop the drop-in, as a problem: its message and what to do.
fn problem(e: &Error) -> String {
    match &e.help {
        Some(help) => format!("{}\n  help: {help}", e.message),
        None => e.message.clone(),
    }
}

/// The stdenv compiler's objects may need its newest GLIBCXX_ version; the libstdc++ that programs built through the
/// wrapper load must provide it: the stdenv's own when the wrapper pointed the link there, else the chosen compiler's.
fn check_libstdcxx(probes: &System, plan: &plan::Plan, out: &mut String, problems: &mut Vec<String>) {
    let Some(decision) = &plan.decided.host else { return };
    let Some(stdenv) = &decision.stdenv else { return };
    let needed_dir = probes.libstdcxx(stdenv).map(|d| d.runtime_dir);
    let loaded_dir = match &decision.libstdcxx_dir {
        Some(dir) => Ok(dir.clone()),
        None => probes.libstdcxx(&decision.compiler).map(|d| d.runtime_dir),
    };
    let newest =
        |dir: &Path| glibcxx::read_glibcxx_versions(&dir.join("libstdc++.so.6")).ok().and_then(|v| v.last().copied());
    match (needed_dir, loaded_dir) {
        (Ok(needed_dir), Ok(loaded_dir)) => match (newest(&needed_dir), newest(&loaded_dir)) {
            (Some(n), Some(p)) if p >= n => {
                let _ = writeln!(out, "{}", field("libstdc++", format!("{} provides up to GLIBCXX_{p}; the stdenv compiler's objects need at most GLIBCXX_{n}", crate::error::shell::path(&loaded_dir))));
            }
            (Some(n), Some(p)) => problems.push(format!(
                "programs will load libstdc++ from {} (up to GLIBCXX_{p}), but objects of the stdenv compiler {} may need GLIBCXX_{n}",
                crate::error::shell::path(&loaded_dir),
                crate::error::shell::path(stdenv)
            )),
            _ => {
                let _ = writeln!(out, "{}", field("libstdc++", format!("not checked (no readable libstdc++.so.6 in {} or {})", crate::error::shell::path(&needed_dir), crate::error::shell::path(&loaded_dir))));
            }
        },
        (Err(e), _) | (_, Err(e)) => {
            let _ = writeln!(out, "{}", field("libstdc++", format!("not checked ({e})")));
        }
    }
}

/// Print the report and the problems; the exit code.
pub fn main(ctx: &Context) -> Result<i32> {
    let (mut report, problems) = run(ctx)?;
    if problems.is_empty() {
        report += "no problems found\n";
        crate::error::output::stdout(report)?;
        return Ok(0);
    }
    for p in &problems {
        let _ = writeln!(report, "problem: {p}");
    }
    crate::error::output::stdout(report)?;
    Err(super::problems::Refused::DoctorFound { count: problems.len() }.into())
}
