use super::*;
use crate::plan::depfile::Note;
use crate::plan::model::DepfileInputs;

fn inputs(p: &Plan) -> Option<(Vec<String>, Vec<String>)> {
    let DepfileInputs { depfiles, inputs, .. } = p.decided.depfile.as_ref()?;
    let show = |v: &Vec<PathBuf>| v.iter().map(|p| p.display().to_string()).collect();
    Some((show(depfiles), show(inputs)))
}

#[test]
fn the_config_the_release_file_and_the_chosen_compiler_join_the_dependency_file() {
    let probes = FakeProbes::debian("13.0.88").with_files(&["/cuda/version.json"]);
    let p = plan_with(&["-MD", "-MF", "a.d", "-c", "a.cu", "-o", "a.o"], &[], "", &probes).unwrap();
    let files = ["/etc/nvcc.toml", "/cuda/version.json", "/usr/bin/g++"].map(String::from).to_vec();
    assert_eq!(inputs(&p), Some((vec!["a.d".to_string()], files)));
    assert!(!p.changes_nothing());
    // A release the config states: the config stands for it. A toolkit without version.json: nvcc itself.
    let p = plan_with(&["-MD", "-c", "a.cu"], &[], "cuda-version = \"13.0\"", &probes).unwrap();
    assert_eq!(inputs(&p).unwrap().1, ["/etc/nvcc.toml", "/usr/bin/g++"]);
    let p = plan_with(&["-MD", "-c", "a.cu"], &[], "", &FakeProbes::debian("13.0.88")).unwrap();
    assert_eq!(
        inputs(&p).unwrap(),
        (vec!["a.d".into()], vec!["/etc/nvcc.toml".into(), "/cuda/bin/nvcc".into(), "/usr/bin/g++".into()])
    );
    // The user's own compiler is the user's to track.
    let p = plan_with(&["-ccbin", "g++-12", "-MD", "-c", "a.cu"], &[], "", &probes).unwrap();
    assert_eq!(inputs(&p).unwrap().1, ["/etc/nvcc.toml", "/cuda/version.json"]);
}

#[test]
fn nothing_is_added_without_a_dependency_file_or_when_turned_off() {
    let probes = FakeProbes::debian("13.0.88");
    for args in [&["-c", "a.cu"][..], &["-MF", "a.d", "-c", "a.cu"], &["--version"]] {
        let p = plan_with(args, &[], "", &probes).unwrap();
        assert_eq!(p.decided.depfile, None, "{args:?}");
    }
    let p = plan_with(&["-M", "a.cu"], &[], "", &probes).unwrap();
    assert_eq!((p.decided.depfile.clone(), said::<Note>(&p)), (None, vec![Note::ToStdout]));
    let p = plan_with(&["-MD", "-c", "a.cu"], &[], "depfile-inputs = false", &probes).unwrap();
    assert_eq!(p.decided.depfile, None);
    assert_eq!(said::<Note>(&p), [Note::TurnedOff { origin: file_line(2) }]);
}
