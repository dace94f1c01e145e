use super::*;
use proptest::prelude::*;
use std::os::unix::ffi::{OsStrExt, OsStringExt};

/// Words nvcc's command lines are made of, and arbitrary bytes (no NUL: no argument can hold one).
fn word() -> impl Strategy<Value = Vec<u8>> {
    let options = prop::sample::select(vec![
        "-c",
        "-o",
        "out.o",
        "-ccbin",
        "-ccbin=g++-11",
        "--compiler-bindir",
        "-arch",
        "-arch=sm_80",
        "sm_86",
        "-gencode",
        "arch=compute_80,code=sm_80",
        "--generate-code=arch=compute_86,code=[sm_86,compute_86]",
        "-code",
        "-Xcompiler",
        "-Wall",
        "-I/usr/include",
        "-DX=\"a b\"",
        "-DY=a,b",
        "--version",
        "-V",
        "--help",
        "--list-gpu-arch",
        "-dlto",
        "-lto",
        "-ptx",
        "-cubin",
        "-E",
        "-dlink",
        "-lib",
        "-allow-unsupported-compiler",
        "--dryrun=x",
        "-target-dir",
        "sbsa-linux",
        "",
        "-",
        "--",
        "a.cu",
        "b.o",
        "x y.cu",
        "-x",
        "cu",
    ]);
    prop_oneof![
        3 => options.prop_map(|s| s.as_bytes().to_vec()),
        1 => prop::collection::vec(1u8..=255, 0..12),
    ]
}

fn line() -> impl Strategy<Value = Vec<Vec<u8>>> {
    prop::collection::vec(word(), 0..10)
}

/// An environment channel's text: words joined by spaces, tabs or newlines, quotes and all.
fn channel() -> impl Strategy<Value = Option<Vec<u8>>> {
    prop::option::of(line().prop_map(|words| words.join(&b' ')))
}

fn context(prepend: &Option<Vec<u8>>, append: &Option<Vec<u8>>) -> Context {
    let mut env = crate::context::Env::default();
    for (name, value) in [("NVCC_PREPEND_FLAGS", prepend), ("NVCC_APPEND_FLAGS", append)] {
        if let Some(v) = value {
            env.set(name, OsString::from_vec(v.clone()));
        }
    }
    // No options file names a file that exists here.
    Context { env, cwd: "/nonexistent-dir".into(), ..Context::default() }
}

fn args(words: &[Vec<u8>]) -> Vec<OsString> {
    words.iter().map(|w| OsString::from_vec(w.clone())).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn parsing_and_planning_never_panic_and_the_users_words_reach_nvcc_exactly(
        words in line(), prepend in channel(), append in channel(), policy in 0usize..3
    ) {
        let ctx = context(&prepend, &append);
        let Ok(inv) = Invocation::parse_args(&ctx, args(&words)) else { return Ok(()) };
        let cfg = format!("[gpu]\ncapabilities = [\"8.6\"]\narch-flags = \"{}\"\n", ["respect", "append", "replace"][policy]);
        let probes = FakeProbes::debian("13.0.88");
        let Ok(p) = plan_for(&inv, &config(&cfg), &probes, 0) else { return Ok(()) };
        let command = p.command(&inv);
        let before: usize = p.changes.before.iter().map(|a| a.args.len()).sum();
        let after: usize = p.changes.after.iter().map(|a| a.args.len()).sum();
        // Ours before, theirs in the middle, ours after: the user's words, in order, less only what a
        // `replace` policy removed (options files named in argv are out of this property's reach: none exist).
        let removed: std::collections::HashSet<usize> = p.changes.removed.iter()
            .flat_map(|r| r.positions.iter().filter(|(c, _)| *c == Channel::Argv).map(|&(_, i)| i))
            .collect();
        let kept: Vec<OsString> = args(&words).into_iter().enumerate()
            .filter(|(i, _)| !removed.contains(i)).map(|(_, w)| w).collect();
        prop_assert_eq!(&command[before..command.len() - after], &kept[..]);
        // Only `replace` removes, and device LTO its compile-time flag (which nvcc refuses next to -gencode).
        let lto_flag = |r: &Removal| r.found.spec.role == crate::args::Role::DeviceLto;
        prop_assert!(policy == 2 || p.changes.removed.iter().all(lto_flag), "only replace removes");
        // Planning twice gives the same command and environment.
        let again = plan_for(&inv, &config(&cfg), &probes, 0).unwrap();
        prop_assert_eq!(again.command(&inv), command);
        prop_assert_eq!(again.changes.env, p.changes.env.clone());
        // A query gets nothing added, removed or set but the loop counter.
        if inv.query_only().is_some() {
            prop_assert!(p.changes_nothing());
            prop_assert!(p.changes.env.iter().all(|(n, _)| *n == crate::context::vars::DEPTH));
        }
    }

    #[test]
    fn a_shell_line_of_any_words_gives_back_the_same_words_in_bash(words in prop::collection::vec(prop::collection::vec(1u8..=255, 0..8), 1..5)) {
        let os: Vec<OsString> = args(&words);
        let line = crate::error::shell::display(os.iter().map(OsString::as_os_str));
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!("for w in {line}; do printf '%s\\0' \"$w\"; done"))
            .output()
            .unwrap();
        prop_assert!(out.status.success());
        let back: Vec<&[u8]> = out.stdout.split(|&b| b == 0).collect();
        let want: Vec<&[u8]> = os.iter().map(|w| w.as_bytes()).collect();
        prop_assert_eq!(&back[..back.len() - 1], &want[..]);
    }
}
