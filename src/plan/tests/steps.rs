use super::*;

#[test]
fn every_step_runs_in_the_order_explain_names_them() {
    let p = plan_with(&["-c", "a.cu", "-o", "a.o"], &[], "", &FakeProbes::debian("13.5.37")).unwrap();
    // The facts are gathered first, and say what they say as `facts`.
    assert_eq!(p.changes.entered[0], "facts");
    assert_eq!(p.changes.entered[1..], crate::plan::STEP_NAMES);
}

#[test]
fn the_reproducible_step_reads_the_launcher_decided_not_the_one_configured() {
    // sccache 0.16 fails by itself with nvcc 13.3 on (compat-data/launchers.toml): the launcher step leaves it out,
    // nvcc is then the wrapper's own exec, and the reproducible step names its pid as for a call without a launcher.
    let args = ["a.cu", "-o", "app"];
    let cfg = "reproducible = true\nlauncher = \"sccache\"\n";
    let probes = FakeProbes::debian("13.5.37").with_launcher("/usr/bin/sccache", "0.16.0");
    let p = plan_with(&args, &[], cfg, &probes).unwrap();
    assert!(p.decided.launcher.is_none());
    assert!(said::<crate::plan::launcher::Note>(&p)
        .iter()
        .any(|n| matches!(n, crate::plan::launcher::Note::KnownBad { .. })));
    let names_pid =
        |p: &Plan| p.changes.before.iter().flat_map(|a| &a.args).any(|a| a.to_string_lossy().contains("tmpxft_"));
    assert!(names_pid(&p), "{:?}", p.changes.before);
    // A launcher that stays: nvcc is its child, and the pid is not the wrapper's.
    let probes = FakeProbes::debian("13.5.37").with_launcher("/usr/bin/sccache", "0.15.0");
    let p = plan_with(&args, &[], cfg, &probes).unwrap();
    assert_eq!(p.decided.launcher.as_deref(), Some(std::path::Path::new("/usr/bin/sccache")));
    assert!(!names_pid(&p), "{:?}", p.changes.before);
    let notes = said::<crate::plan::reproducible::Note>(&p);
    assert!(
        notes
            .iter()
            .any(|n| matches!(n, crate::plan::reproducible::Note::PidUnknown { why, .. } if why.contains("launcher"))),
        "{notes:?}"
    );
}
