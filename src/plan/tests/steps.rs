use super::*;
use crate::plan::{check_order, steps, Decision, StepEntry};

#[test]
fn the_steps_run_in_an_order_their_declarations_allow() {
    check_order(steps()).unwrap();
    let moved = |name: &str, before: &str| -> Vec<StepEntry> {
        let mut order: Vec<StepEntry> = steps().to_vec();
        let from = order.iter().position(|s| s.name == name).unwrap();
        let step = order.remove(from);
        let to = order.iter().position(|s| s.name == before).unwrap();
        order.insert(to, step);
        order
    };
    // Each of these orders reads a decision before it is made (or while it may still change).
    for (name, before, want) in [
        ("reproducible", "launcher", "reproducible reads Launcher, which no step before it writes"),
        ("threads", "gpu", "threads reads GpuTargets, which no step before it writes"),
        ("depfile", "host-compiler", "depfile reads Host, which no step before it writes"),
        ("launcher-key", "launcher", "launcher-key reads Launcher, which no step before it writes"),
    ] {
        assert_eq!(check_order(&moved(name, before)).unwrap_err(), want);
    }
    // A decision must be final when it is read: a step that writes it again later breaks the order too.
    let mut twice: Vec<StepEntry> = steps().to_vec();
    let gpu = *twice.iter().find(|s| s.name == "gpu").unwrap();
    twice.push(gpu);
    assert_eq!(check_order(&twice).unwrap_err(), "threads reads GpuTargets, which gpu writes after it");
}

/// Where a step's code reads or writes a decision: `plan.<field>` in its files.
const FIELDS: [(&str, Decision); 7] = [
    ("plan.host", Decision::Host),
    ("plan.before", Decision::GpuTargets),
    ("plan.after", Decision::GpuTargets),
    ("plan.removed", Decision::Removed),
    ("plan.threads", Decision::Threads),
    ("plan.depfile", Decision::Depfile),
    ("plan.launcher", Decision::Launcher),
];

/// A step's source files: `src/plan/<name>.rs`, or its folder.
fn files_of(name: &str) -> Vec<std::path::PathBuf> {
    let plan = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/plan");
    let module = match name {
        "launcher-key" => "launcher".to_string(),
        other => other.replace('-', "_"),
    };
    let file = plan.join(format!("{module}.rs"));
    if file.is_file() {
        return vec![file];
    }
    std::fs::read_dir(plan.join(&module)).unwrap().map(|e| e.unwrap().path()).collect()
}

#[test]
fn each_step_declares_the_decisions_its_code_touches() {
    let mut seen = 0;
    for step in steps() {
        // Steps that share a file (launcher, launcher-key) answer for it together.
        let declared: Vec<Decision> = steps()
            .iter()
            .filter(|s| files_of(s.name) == files_of(step.name))
            .flat_map(|s| s.reads.iter().chain(s.writes))
            .copied()
            .collect();
        for file in files_of(step.name) {
            let text = std::fs::read_to_string(&file).unwrap();
            let code = text.split("#[cfg(test)]\nmod tests {").next().unwrap();
            for (field, decision) in FIELDS {
                let touches = code
                    .match_indices(field)
                    .any(|(at, _)| !code[at + field.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_'));
                if touches {
                    seen += 1;
                    assert!(
                        declared.contains(&decision),
                        "{} touches `{field}` but {} declares no {decision:?}",
                        file.display(),
                        step.name
                    );
                }
            }
        }
    }
    assert!(seen >= 10, "the scan found {seen} uses");
}

#[test]
fn the_reproducible_step_reads_the_launcher_decided_not_the_one_configured() {
    // sccache 0.16 fails by itself with nvcc 13.3 on (compat-data/launchers.toml): the launcher step leaves it out,
    // nvcc is then the wrapper's own exec, and the reproducible step names its pid as for a call without a launcher.
    let args = ["a.cu", "-o", "app"];
    let cfg = "reproducible = true\nlauncher = \"sccache\"\n";
    let probes = FakeProbes::debian("13.5.37").with_launcher("/usr/bin/sccache", "0.16.0");
    let p = plan_with(&args, &[], cfg, &probes).unwrap();
    assert!(p.launcher.is_none());
    assert!(said::<crate::plan::launcher::Note>(&p)
        .iter()
        .any(|n| matches!(n, crate::plan::launcher::Note::KnownBad { .. })));
    let names_pid = |p: &Plan| p.before.iter().flat_map(|a| &a.args).any(|a| a.to_string_lossy().contains("tmpxft_"));
    assert!(names_pid(&p), "{:?}", p.before);
    // A launcher that stays: nvcc is its child, and the pid is not the wrapper's.
    let probes = FakeProbes::debian("13.5.37").with_launcher("/usr/bin/sccache", "0.15.0");
    let p = plan_with(&args, &[], cfg, &probes).unwrap();
    assert_eq!(p.launcher.as_deref(), Some(std::path::Path::new("/usr/bin/sccache")));
    assert!(!names_pid(&p), "{:?}", p.before);
    let notes = said::<crate::plan::reproducible::Note>(&p);
    assert!(
        notes
            .iter()
            .any(|n| matches!(n, crate::plan::reproducible::Note::PidUnknown { why, .. } if why.contains("launcher"))),
        "{notes:?}"
    );
}
