//! The threads step: which calls may take threads from free job slots, how many at most, and what leaves them out
//! (issue 31). The table's peak per thread is compat-data/threads.toml's.

use super::*;
use crate::config::Origin;
use crate::plan::threads::{NotFollowing, Note, Reason};
use crate::probe::memory::MemoryFree;

const FOUR: [&str; 8] = [
    "-gencode=arch=compute_80,code=sm_80",
    "-gencode=arch=compute_86,code=sm_86",
    "-gencode=arch=compute_89,code=sm_89",
    "-gencode=arch=compute_90,code=sm_90",
    "-c",
    "k.cu",
    "-o",
    "k.o",
];

fn run(args: &[&str], cfg: &str, probes: &FakeProbes, slots: &crate::context::Jobserver) -> Plan {
    plan_for_with(&inv(args, &[]), &config(cfg), probes, 0, slots).unwrap()
}

fn most(p: &Plan) -> Option<u32> {
    p.decided.threads.as_ref().map(|t| t.most)
}

fn notes(p: &Plan) -> Vec<Note> {
    said::<Note>(p)
}

#[test]
fn a_call_with_several_targets_under_a_jobserver_may_take_one_thread_a_target() {
    let probes = FakeProbes::debian("13.5.37");
    let p = run(&FOUR, "", &probes, &SHARED);
    assert_eq!(most(&p), Some(4));
    let why = said::<Reason>(&p);
    assert!(matches!(why[..], [Reason::Following { targets: 4, most: 4, origin: Origin::Default, .. }]), "{why:?}");
    assert!(p.decided.threads.as_ref().unwrap().follow);
    // The configured capabilities count as the user's do.
    let p = run(&["-c", "k.cu"], "[gpu]\ncapabilities = [\"8.6\", \"8.9\", \"9.0\"]\n", &probes, &SHARED);
    assert_eq!(most(&p), Some(3));
    // `threads` caps it.
    assert_eq!(most(&run(&FOUR, "threads = 2\n", &probes, &SHARED)), Some(2));
    // `-arch=all-major` is as many as there are.
    assert_eq!(most(&run(&["-arch=all-major", "-c", "k.cu"], "threads = 6\n", &probes, &SHARED)), Some(6));
}

/// Issue 49: threads follow the build unless `threads-follow = false`, and never behind a `launcher`, which may run
/// nvcc where the keeper cannot see it; either way the call still takes threads, at the start, and says why.
#[test]
fn threads_follow_the_build_unless_turned_off_or_behind_a_launcher() {
    let probes = FakeProbes::debian("13.5.37");
    let p = run(&FOUR, "threads-follow = false\n", &probes, &SHARED);
    let why = said::<Reason>(&p);
    assert!(
        matches!(&why[..], [Reason::FromSlots { most: 4, instead: NotFollowing::TurnedOff(Origin::File(_)), .. }]),
        "{why:?}"
    );
    assert!(!p.decided.threads.as_ref().unwrap().follow);
    let cached = FakeProbes::debian("13.5.37").with_files(&["/usr/bin/ccache"]);
    let p = run(&FOUR, "launcher = \"ccache\"\nthreads-follow = true\n", &cached, &SHARED);
    let why = said::<Reason>(&p);
    assert!(matches!(&why[..], [Reason::FromSlots { instead: NotFollowing::Launcher(_), .. }]), "{why:?}");
    assert!(!p.decided.threads.as_ref().unwrap().follow);
    let p = run(&FOUR, "threads-follow = true\n", &probes, &SHARED);
    let why = said::<Reason>(&p);
    assert!(matches!(&why[..], [Reason::Following { origin: Origin::File(_), .. }]), "{why:?}");
}

/// Issue 57: where the keeper cannot hold a program at its exec (no seccomp user notification, Linux before 5.5, a
/// `/proc` of another pid namespace), the call takes its threads at the start, whatever the setting, and says why.
#[test]
fn a_machine_that_cannot_hold_a_program_takes_threads_at_the_start() {
    use crate::probe::hold::Unheld;
    for unheld in [Unheld::NoUserNotification, Unheld::Kernel("5.4.0".into()), Unheld::Proc] {
        let mut probes = FakeProbes::debian("13.5.37");
        probes.hold = Err(unheld.clone());
        for cfg in ["", "threads-follow = true\n"] {
            let p = run(&FOUR, cfg, &probes, &SHARED);
            let why = said::<Reason>(&p);
            assert!(
                matches!(&why[..], [Reason::FromSlots { most: 4, instead: NotFollowing::Machine(u), .. }] if *u == unheld),
                "{why:?}"
            );
            assert!(!p.decided.threads.as_ref().unwrap().follow);
            let text = why[0].to_string();
            assert!(text.contains(&unheld.to_string()) && text.contains("taken at the start"), "{text}");
        }
    }
}

/// Issue 38: `-arch=all`, `all-major` and `native` counted as 4294967295 targets, so a call took every free slot, and
/// `explain` said "4294967295 GPU targets". They are as many as the release's own lists hold, and native as many
/// kinds of GPU as the machine has; never more threads than that.
#[test]
fn all_all_major_and_native_count_what_nvcc_builds() {
    let probes = FakeProbes::debian("13.5.37");
    let release = "13.5.37".parse().unwrap();
    let (all, major, _) = Compat::built_in().capabilities.nvcc_all(release).unwrap();
    for (arch, expected) in [("-arch=all", all.len()), ("-arch=all-major", major.len())] {
        let p = run(&[arch, "-c", "k.cu"], "", &probes, &SHARED);
        let expected = u32::try_from(expected).unwrap();
        assert!((2..64).contains(&expected), "{arch}: {expected}");
        assert_eq!(most(&p), Some(expected), "{arch}");
        let why = said::<Reason>(&p);
        assert!(matches!(why[..], [Reason::Following { targets, .. }] if targets == expected), "{arch}: {why:?}");
        let p = run(&[arch, "-c", "k.cu"], "", &probes, &crate::context::Jobserver::None);
        assert_eq!(notes(&p), vec![Note::NoJobserver { targets: expected }], "{arch}");
    }
    // A release the table does not know: no list to count from, so one target.
    let p = run(&["-arch=all", "-c", "k.cu"], "", &FakeProbes::debian("10.2.89"), &SHARED);
    assert_eq!(most(&p), None);
    // `native`: one a kind of GPU, asked only under a jobserver.
    let mut two = FakeProbes::debian("13.5.37");
    two.gpus = Ok(vec!["9.0".parse().unwrap(), "8.6".parse().unwrap(), "9.0".parse().unwrap()]);
    assert_eq!(most(&run(&["-arch=native", "-c", "k.cu"], "", &two, &SHARED)), Some(2));
    assert_eq!(most(&run(&["-arch=native", "-c", "k.cu"], "", &probes, &SHARED)), None);
}

/// Issue 38: `threads = 0` in the file was accepted (the environment refused it) and took every free slot.
#[test]
fn threads_0_is_refused_from_the_file_as_from_the_environment() {
    let err = crate::config::parse("threads = 0\n", Path::new("c.toml")).unwrap_err().to_string();
    assert!(err.contains("0 is not a number of threads: the least is 1"), "{err}");
    let err = crate::config::parse("threads = -3\n", Path::new("c.toml")).unwrap_err().to_string();
    assert!(err.contains("-3 is not a number of threads"), "{err}");
    assert_eq!(
        crate::config::parse("threads = 3\n", Path::new("c.toml")).unwrap().threads.map(|t| t.value.get()),
        Some(3)
    );
}

#[test]
fn one_target_the_users_own_choice_or_threads_1_take_none() {
    let probes = FakeProbes::debian("13.5.37");
    assert_eq!(most(&run(&["-arch=sm_90", "-c", "k.cu"], "", &probes, &SHARED)), None);
    assert_eq!(most(&run(&["-c", "k.cu"], "", &probes, &SHARED)), None);
    for own in [&["-t", "2"][..], &["--threads=3"], &["--split-compile", "0"], &["--jobserver"]] {
        let mut args: Vec<&str> = own.to_vec();
        args.extend(FOUR);
        let p = run(&args, "", &probes, &SHARED);
        assert_eq!(most(&p), None, "{own:?}");
        assert!(matches!(notes(&p)[..], [Note::UsersOwn { .. }]), "{own:?}: {:?}", notes(&p));
    }
    let p = run(&FOUR, "threads = 1\n", &probes, &SHARED);
    assert_eq!(most(&p), None);
    assert!(matches!(notes(&p)[..], [Note::TurnedOff { .. }]));
    // Preprocessing and a link of objects compile nothing.
    assert_eq!(most(&run(&["-E", "k.cu", "-arch=all"], "", &probes, &SHARED)), None);
    assert_eq!(most(&run(&["a.o", "b.o", "-o", "app", "-arch=all"], "", &probes, &SHARED)), None);
}

#[test]
fn without_a_usable_jobserver_or_a_measured_release_none_and_why() {
    let probes = FakeProbes::debian("13.5.37");
    let p = run(&FOUR, "", &probes, &crate::context::Jobserver::None);
    assert_eq!((most(&p), notes(&p)), (None, vec![Note::NoJobserver { targets: 4 }]));
    let why = crate::context::jobserver::Unusable::NotOpen(3);
    let p = run(&FOUR, "", &probes, &crate::context::Jobserver::Unusable(why.clone()));
    assert_eq!(notes(&p), vec![Note::JobserverUnusable { why, targets: 4 }]);
    let p = run(&FOUR, "", &FakeProbes::debian("12.6.85"), &SHARED);
    assert!(matches!(notes(&p)[..], [Note::NotMeasured { targets: 4, .. }]), "{:?}", notes(&p));
}

#[test]
fn the_memory_free_when_nvcc_starts_caps_its_threads() {
    use crate::plan::threads::Memory;
    let per_thread = Compat::built_in().threads.row("13.5.37".parse().unwrap()).unwrap().peak_per_thread_mib;
    let p = run(&FOUR, "", &FakeProbes::debian("13.5.37"), &SHARED);
    assert_eq!(p.decided.threads.as_ref().map(|t| t.per_thread_mib), Some(per_thread));
    let mib = |m: u64| m << 20;
    let free = |bytes, from| Some(MemoryFree { bytes, from });
    // 512 MiB kept, and room for three threads, nvcc's first included.
    let three = Memory::judge(per_thread, free(mib(512 + 3 * u64::from(per_thread)) + 1, "MemAvailable"));
    assert_eq!(three.threads(), 3);
    assert_eq!(
        three.to_string(),
        format!("{} MiB free (MemAvailable) holds 3 threads, 512 MiB kept", 512 + 3 * per_thread)
    );
    let short = Memory::judge(per_thread, free(mib(512 + 2 * u64::from(per_thread)) - 1, "the memory cgroup's limit"));
    assert_eq!(short.threads(), 1);
    assert!(short.to_string().contains("holds no second thread at 890 MiB a thread"), "{short}");
    assert_eq!(Memory::judge(per_thread, None).threads(), 1);
}

#[test]
fn a_call_that_may_take_threads_names_no_pid() {
    // The wrapper may wait for nvcc then: a one-call program's prefix map cannot name nvcc's pid.
    let probes = FakeProbes::debian("13.5.37");
    let args = ["-gencode=arch=compute_80,code=sm_80", "-gencode=arch=compute_90,code=sm_90", "k.cu", "-o", "app"];
    let p = run(&args, "reproducible = true\n", &probes, &SHARED);
    assert_eq!(most(&p), Some(2));
    let flags: Vec<String> =
        p.changes.before.iter().flat_map(|a| a.args.iter().map(|x| x.to_string_lossy().into_owned())).collect();
    assert!(!flags.iter().any(|f| f.contains("tmpxft_")), "{flags:?}");
    let p = run(&args, "reproducible = true\n", &probes, &crate::context::Jobserver::None);
    let flags: Vec<String> =
        p.changes.before.iter().flat_map(|a| a.args.iter().map(|x| x.to_string_lossy().into_owned())).collect();
    assert!(flags.iter().any(|f| f.contains("tmpxft_0000002a_")), "{flags:?}");
}
