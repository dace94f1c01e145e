//! `nvcc-wrapper doctor`: everything the wrapper would rely on, checked and shown, one line per problem.
//!
//! It runs the same steps as the drop-in (config, real nvcc, release, compilers, plan) for a representative compile,
//! then checks what a plan cannot see: that the libstdc++ programs will load provides every GLIBCXX_ version the
//! stdenv compiler's objects may need.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::Path;

use crate::args::Invocation;
use crate::compat::Compat;
use crate::config;
use crate::context::{vars, Context};
use crate::error::{Error, ErrorKind, Result};
use crate::locate;
use crate::plan;
use crate::probe::glibcxx;
use crate::probe::system::{Probes, System};
use crate::shell;

/// The report (stdout) and the problems found; problems make the exit code 3.
pub fn run(ctx: &Context) -> Result<(String, Vec<String>)> {
    let mut out = String::new();
    let mut problems = Vec::new();
    let config = config::load(ctx)?;
    let shown = config.path.as_ref().map_or("none (defaults and probing)".to_string(), |p| p.display().to_string());
    let _ = writeln!(out, "config file:  {shown}");
    let compat = Compat::load(&config)?;
    let nvcc = match locate::find(ctx, &config) {
        Ok(n) => n,
        Err(e) => {
            problems.push(e.message.clone());
            return Ok((out, problems));
        }
    };
    let _ = writeln!(out, "real nvcc:    {} (found by {})", nvcc.path.display(), nvcc.found_by);
    let probes = System { path: ctx.env.get(vars::PATH).map(Into::into), cwd: ctx.cwd.clone() };
    let release = match config.config.cuda_version {
        Some(v) => Some((v, "`cuda-version` in the config")),
        None => match probes.nvcc_version(&nvcc.path) {
            Ok(v) => Some((v, "the toolkit")),
            Err(e) => {
                problems.push(format!("cannot tell the NVCC release: {e}; set `cuda-version` in the config"));
                None
            }
        },
    };
    if let Some((v, from)) = release {
        let _ = writeln!(out, "release:      {v} (from {from})");
        match compat.host_compilers.limits_for(v) {
            Some(row) => {
                let _ = writeln!(
                    out,
                    "accepts:      GCC up to {}, Clang up to {} ({})",
                    row.newest_gcc, row.newest_clang, row.source
                );
            }
            None => problems.push(format!(
                "nvcc {v} is not in the compatibility table: the wrapper cannot check host compilers for it"
            )),
        }
    }

    // The plan for a representative compile and link, exactly as the drop-in would make it.
    let args: Vec<OsString> = ["doctor.cu", "-o", "doctor"].map(OsString::from).to_vec();
    let invocation = Invocation::parse_args(ctx, args)?;
    let plan = plan::plan(plan::Inputs {
        invocation: &invocation,
        config: &config,
        compat: &compat,
        probes: &probes,
        nvcc: nvcc.clone(),
        depth: 0,
    });
    match plan {
        Ok(plan) => {
            write_target(&plan, &mut out);
            let _ = writeln!(out, "for `nvcc doctor.cu -o doctor` the wrapper adds:");
            for a in plan.before.iter().chain(&plan.after) {
                let _ = writeln!(out, "  {}  ({})", shell::display(a.args.iter().map(OsString::as_os_str)), a.reason);
            }
            for note in &plan.notes {
                let _ = writeln!(out, "  note: {note}");
            }
            problems.extend(plan.warnings.iter().cloned());
            check_libstdcxx(&probes, &plan, &mut out, &mut problems);
        }
        Err(e) => problems.push(e.message),
    }
    Ok((out, problems))
}

/// The target, and for a cross build its compiler and where its CUDA files and system libraries come from.
fn write_target(plan: &plan::Plan, out: &mut String) {
    let Some(cross) = &plan.cross else {
        let _ = writeln!(out, "target:       {} (this machine)", plan::target::NATIVE_SYSTEM);
        return;
    };
    for (label, value) in cross.lines(plan.host.as_ref().map(|h| h.compiler.as_path())) {
        let _ = writeln!(out, "{:<14}{value}", format!("{label}:"));
    }
}

/// The stdenv compiler's objects may need its newest GLIBCXX_ version; the libstdc++ that programs built through the
/// wrapper load must provide it: the stdenv's own when the wrapper pointed the link there, else the chosen compiler's.
fn check_libstdcxx(probes: &System, plan: &plan::Plan, out: &mut String, problems: &mut Vec<String>) {
    let Some(decision) = &plan.host else { return };
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
                let _ = writeln!(out, "libstdc++:    {} provides up to GLIBCXX_{p}; the stdenv compiler's objects need at most GLIBCXX_{n}", loaded_dir.display());
            }
            (Some(n), Some(p)) => problems.push(format!(
                "programs will load libstdc++ from {} (up to GLIBCXX_{p}), but objects of the stdenv compiler {} may need GLIBCXX_{n}",
                loaded_dir.display(),
                stdenv.display()
            )),
            _ => {
                let _ = writeln!(out, "libstdc++:    not checked (no readable libstdc++.so.6 in {} or {})", needed_dir.display(), loaded_dir.display());
            }
        },
        (Err(e), _) | (_, Err(e)) => {
            let _ = writeln!(out, "libstdc++:    not checked ({e})");
        }
    }
}

/// Print the report and the problems; the exit code.
pub fn main(ctx: &Context) -> Result<i32> {
    let (report, problems) = run(ctx)?;
    print!("{report}");
    if problems.is_empty() {
        println!("no problems found");
        return Ok(0);
    }
    for p in &problems {
        println!("problem: {p}");
    }
    Err(Error::new(ErrorKind::CheckFailed, format!("doctor found {} problem(s)", problems.len()))
        .with_help("each `problem:` line above says what is wrong"))
}
