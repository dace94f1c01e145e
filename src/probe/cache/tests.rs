//! Every way an entry can be missing, damaged or out of date is probed again and never fails the call; an entry that
//! still describes its program is read instead of probing.

use super::*;
use std::cell::Cell;
use std::time::{Duration, SystemTime};

#[derive(Debug, Clone, PartialEq)]
struct Answer(String);

impl Entry for Answer {
    const KIND: &'static str = "test";

    fn fields(&self) -> Vec<(&'static str, Vec<u8>)> {
        vec![("answer", self.0.clone().into_bytes())]
    }

    fn from_fields(fields: &BTreeMap<String, Vec<u8>>) -> Option<Self> {
        text_field(fields, "answer").map(Answer)
    }
}

/// A cache directory and a "program" (any file), old enough to be cached.
struct Setup {
    dir: tempfile::TempDir,
    cache: ProbeCache,
    program: PathBuf,
    probes: Cell<u32>,
}

impl Setup {
    fn new() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let cache = ProbeCache::at(dir.path().join("cache/probes"));
        let program = dir.path().join("bin/g++");
        fs::create_dir_all(program.parent().unwrap()).unwrap();
        let setup = Setup { dir, cache, program, probes: Cell::new(0) };
        setup.rewrite("#!/bin/sh\necho 12.2.0\n");
        setup
    }

    /// Write the program's bytes in place (same inode) and date it an hour back, as an installed file would be.
    fn rewrite(&self, text: &str) {
        fs::write(&self.program, text).unwrap();
        age(&self.program, 3600);
    }

    /// Ask for the program's answer; `answer` is what probing it would say now.
    fn ask(&self, answer: &str) -> (Answer, bool) {
        self.cache
            .get_or_probe(&self.program, || {
                self.probes.set(self.probes.get() + 1);
                Ok::<_, String>(Answer(answer.to_string()))
            })
            .unwrap()
    }

    fn entry(&self) -> PathBuf {
        self.cache.dir().unwrap().join(entry_name(Answer::KIND, &self.program))
    }

    /// Why the entry on disk is not used, or `None` when it is.
    fn miss(&self) -> Option<Miss> {
        read::<Answer>(&self.entry(), &Key::of(Answer::KIND, &self.program).unwrap()).err()
    }
}

/// Set a file's modification time `seconds` back from now.
fn age(path: &Path, seconds: u64) {
    let file = fs::File::options().write(true).open(path).unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(seconds)).unwrap();
}

#[test]
fn a_missing_entry_is_probed_once_then_read_without_probing() {
    let s = Setup::new();
    assert!(matches!(s.miss(), Some(Miss::Absent)));
    assert_eq!(s.ask("gcc 12.2.0"), (Answer("gcc 12.2.0".into()), false));
    assert_eq!(s.probes.get(), 1);
    assert!(s.miss().is_none(), "the entry is written: {:?}", s.miss());
    // What probing would say now does not matter while the file is the same: the kept answer is used.
    assert_eq!(s.ask("never asked"), (Answer("gcc 12.2.0".into()), true));
    assert_eq!(s.probes.get(), 1);
    // Written atomically: no temporary file is left beside the entry (`.swept` says when old entries were cleared).
    let names: Vec<_> = fs::read_dir(s.cache.dir().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n != ".swept")
        .collect();
    assert_eq!(names, [s.entry().file_name().unwrap().to_owned()]);
}

#[test]
fn a_corrupt_entry_is_probed_again_and_replaced() {
    let s = Setup::new();
    s.ask("gcc 12.2.0");
    let mut bytes = fs::read(s.entry()).unwrap();
    let at = bytes.windows(6).position(|w| w == b"answer").unwrap();
    bytes[at + 7] = b'X'; // the value's first byte: the same length, another answer
    fs::write(s.entry(), &bytes).unwrap();
    assert!(matches!(s.miss(), Some(Miss::Corrupt)), "{:?}", s.miss());
    assert_eq!(s.ask("gcc 12.2.0"), (Answer("gcc 12.2.0".into()), false));
    assert!(s.miss().is_none(), "replaced by a good entry");

    fs::write(s.entry(), b"\x00\xffnot an entry at all\n").unwrap();
    assert!(s.miss().is_some());
    assert_eq!(s.ask("gcc 12.2.0"), (Answer("gcc 12.2.0".into()), false));
    assert_eq!(s.probes.get(), 3);
}

#[test]
fn a_truncated_entry_is_probed_again() {
    let s = Setup::new();
    s.ask("gcc 12.2.0");
    let whole = fs::read(s.entry()).unwrap();
    for keep in [0, 1, whole.len() / 2, whole.len() - 1] {
        fs::write(s.entry(), &whole[..keep]).unwrap();
        assert!(matches!(s.miss(), Some(Miss::Truncated)), "{keep} bytes: {:?}", s.miss());
        let probes = s.probes.get();
        assert_eq!(s.ask("gcc 12.2.0").0, Answer("gcc 12.2.0".into()));
        assert_eq!(s.probes.get(), probes + 1, "{keep} bytes");
    }
}

#[test]
fn an_entry_of_another_version_is_probed_again() {
    let s = Setup::new();
    s.ask("gcc 12.2.0");
    // Written by another release of the wrapper, checksum and all: only the header differs.
    let text = String::from_utf8(fs::read(s.entry()).unwrap()).unwrap();
    let body = text.split_once('\n').unwrap().1;
    let body = &body[..body.rfind("check ").unwrap()];
    let mut foreign = format!("nvcc-wrapper probe cache 1 (nvcc-wrapper 0.0.1)\n{body}").into_bytes();
    let check = format!("check {:016x}\n", fnv1a(&foreign));
    foreign.extend(check.as_bytes());
    fs::write(s.entry(), &foreign).unwrap();
    assert!(matches!(s.miss(), Some(Miss::Foreign(h)) if h.contains("0.0.1")), "{:?}", s.miss());
    assert_eq!(s.ask("gcc 13.1.0"), (Answer("gcc 13.1.0".into()), false));
    assert!(s.miss().is_none(), "overwritten in this version's format");
}

#[test]
fn an_unreadable_or_unwritable_cache_never_fails_a_probe() {
    let s = Setup::new();
    // A directory that cannot be created (a file is in the way; root may write anywhere, but not through a file).
    let blocked = s.dir.path().join("blocked");
    fs::write(&blocked, "").unwrap();
    let cache = ProbeCache::at(blocked.join("probes"));
    for _ in 0..2 {
        let (answer, cached) = cache.get_or_probe(&s.program, || Ok::<_, String>(Answer("gcc".into()))).unwrap();
        assert_eq!((answer, cached), (Answer("gcc".into()), false));
    }
    // An entry that is a directory cannot be read: probed, and the probe's answer returned all the same.
    fs::create_dir_all(s.entry()).unwrap();
    assert!(matches!(s.miss(), Some(Miss::Unreadable(_))), "{:?}", s.miss());
    assert_eq!(s.ask("gcc"), (Answer("gcc".into()), false));
    assert_eq!(s.ask("gcc"), (Answer("gcc".into()), false));
}

#[test]
fn a_program_replaced_in_place_is_probed_again() {
    let s = Setup::new();
    s.ask("gcc 12.2.0");
    // Rewritten in place, another size (an upgrade copied over it).
    s.rewrite("#!/bin/sh\necho 13.1.0 # newer\n");
    assert!(matches!(s.miss(), Some(Miss::Changed)), "{:?}", s.miss());
    assert_eq!(s.ask("gcc 13.1.0"), (Answer("gcc 13.1.0".into()), false));
    assert_eq!(s.ask("?"), (Answer("gcc 13.1.0".into()), true));

    // The same size and inode, another modification time.
    age(&s.program, 7200);
    assert!(matches!(s.miss(), Some(Miss::Changed)));
    assert_eq!(s.ask("gcc 13.1.1"), (Answer("gcc 13.1.1".into()), false));

    // Replaced by a new file of the same size and time (a package manager renames a new file over the old).
    let text = fs::read(&s.program).unwrap();
    let mtime = fs::metadata(&s.program).unwrap().modified().unwrap();
    let new = s.dir.path().join("bin/.g++.new");
    fs::write(&new, &text).unwrap();
    fs::File::options().write(true).open(&new).unwrap().set_modified(mtime).unwrap();
    fs::rename(&new, &s.program).unwrap();
    assert!(matches!(s.miss(), Some(Miss::Changed)));
    assert_eq!(s.ask("gcc 14.2.0"), (Answer("gcc 14.2.0".into()), false));
    assert_eq!(s.probes.get(), 4);
}

#[test]
fn a_link_pointed_at_another_program_is_probed_again() {
    let s = Setup::new();
    let other = s.dir.path().join("bin/clang++-16");
    fs::write(&other, "#!/bin/sh\n").unwrap();
    age(&other, 3600);
    let link = s.dir.path().join("bin/c++");
    std::os::unix::fs::symlink(&s.program, &link).unwrap();
    let ask = |answer: &str| s.cache.get_or_probe(&link, || Ok::<_, String>(Answer(answer.into()))).unwrap();
    assert_eq!(ask("gcc"), (Answer("gcc".into()), false));
    assert_eq!(ask("?"), (Answer("gcc".into()), true));
    fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(&other, &link).unwrap();
    assert_eq!(ask("clang"), (Answer("clang".into()), false));
}

#[test]
fn one_file_by_two_names_keeps_two_answers() {
    // ccache and similar tools answer by the name they were started as: g++ and clang++ links to one file.
    let s = Setup::new();
    let (gxx, clangxx) = (s.dir.path().join("bin/gxx-link"), s.dir.path().join("bin/clangxx-link"));
    std::os::unix::fs::symlink(&s.program, &gxx).unwrap();
    std::os::unix::fs::symlink(&s.program, &clangxx).unwrap();
    let ask = |p: &Path, answer: &str| s.cache.get_or_probe(p, || Ok::<_, String>(Answer(answer.into()))).unwrap();
    ask(&gxx, "gcc");
    ask(&clangxx, "clang");
    assert_eq!(ask(&gxx, "?"), (Answer("gcc".into()), true));
    assert_eq!(ask(&clangxx, "?"), (Answer("clang".into()), true));
}

#[test]
fn an_entry_for_another_program_is_not_used() {
    // Should two programs' entry names ever collide, the key inside tells them apart.
    let s = Setup::new();
    s.ask("gcc");
    let other = s.dir.path().join("bin/other");
    fs::write(&other, "#!/bin/sh\n").unwrap();
    age(&other, 3600);
    let key = Key::of(Answer::KIND, &other).unwrap();
    assert!(matches!(read::<Answer>(&s.entry(), &key), Err(Miss::Changed)));
}

#[test]
fn a_program_changed_just_now_is_probed_but_not_kept() {
    let s = Setup::new();
    fs::write(&s.program, "#!/bin/sh\n# still being installed\n").unwrap();
    s.ask("gcc");
    s.ask("gcc");
    assert_eq!(s.probes.get(), 2);
    assert!(matches!(s.miss(), Some(Miss::Absent)));
}

#[test]
fn bare_failures_are_not_kept_and_a_missing_program_is_not_an_error_of_the_cache() {
    let s = Setup::new();
    let failed = s.cache.get_or_probe(&s.program, || Err::<Answer, _>("`g++ --version` failed".to_string()));
    assert_eq!(failed.unwrap_err(), "`g++ --version` failed");
    assert!(matches!(s.miss(), Some(Miss::Absent)));
    let gone = s.dir.path().join("bin/gone");
    let answer = s.cache.get_or_probe(&gone, || Err::<Answer, _>("could not run".to_string()));
    assert_eq!(answer.unwrap_err(), "could not run");
}

fn hung() -> Failure {
    Failure { message: "`g++ --version` did not finish".into(), keep: true, stopped: true, remembered: None }
}

/// Issue 26: a hung compiler cost the whole time limit on every call. Its failure is kept, for a while, under the
/// same key as an answer.
#[test]
fn a_failure_is_kept_for_a_while_then_probed_again() {
    let s = Setup::new();
    let ask = |f: Failure| s.cache.get_or_probe::<Answer, _>(&s.program, || Err(f));
    assert_eq!(ask(hung()).unwrap_err(), hung());
    let kept = ask(Failure { message: "never asked".into(), ..hung() }).unwrap_err();
    assert_eq!((kept.message.as_str(), kept.stopped), ("`g++ --version` did not finish", true));
    assert!(kept.remembered.is_some_and(|age| age < Duration::from_secs(60)), "{kept:?}");
    // A failure that is not the program's (it could not be started) is not kept, and does not replace one.
    let not_kept = Failure { keep: false, ..hung() };
    assert!(s.cache.get_or_probe::<Answer, _>(&s.dir.path().join("bin/none"), || Err(not_kept)).is_err());
    // Written long enough ago, it is stale: probed again, and the answer replaces it.
    let text = fs::read_to_string(s.entry()).unwrap();
    let at = text.lines().find_map(|l| l.strip_prefix("at ")).unwrap().parse::<u64>().unwrap();
    let old = text.replace(&format!("at {at}\n"), &format!("at {}\n", at - FAILURE_LIFETIME.as_secs()));
    let body = &old[..old.rfind("check ").unwrap()];
    fs::write(s.entry(), format!("{body}check {:016x}\n", fnv1a(body.as_bytes()))).unwrap();
    assert!(matches!(s.miss(), Some(Miss::Expired)), "{:?}", s.miss());
    assert_eq!(s.ask("gcc 12.2.0"), (Answer("gcc 12.2.0".into()), false));
    // A failure kept for a program since changed is not used: it is probed again at once.
    s.rewrite("#!/bin/sh\nexec sleep 600\n");
    assert_eq!(ask(hung()).unwrap_err().remembered, None);
    s.rewrite("#!/bin/sh\necho fixed\n");
    assert_eq!(s.ask("gcc 13"), (Answer("gcc 13".into()), false));
}

/// Issue 26: an entry that is a FIFO with no writer, a link to /dev/zero or a huge file is a miss, at once, and is
/// replaced by a good entry.
#[test]
fn an_entry_that_is_a_fifo_a_device_or_huge_is_a_miss_and_replaced() {
    let s = Setup::new();
    fs::create_dir_all(s.cache.dir().unwrap()).unwrap();
    let started = std::time::Instant::now();
    for hostile in ["fifo", "zero", "huge"] {
        let _ = fs::remove_file(s.entry());
        match hostile {
            "fifo" => assert!(std::process::Command::new("mkfifo").arg(s.entry()).status().unwrap().success()),
            "zero" => std::os::unix::fs::symlink("/dev/zero", s.entry()).unwrap(),
            _ => fs::write(s.entry(), vec![b'x'; crate::error::bounded::CACHE_ENTRY as usize + 1]).unwrap(),
        }
        assert!(matches!(s.miss(), Some(Miss::Unreadable(_))), "{hostile}: {:?}", s.miss());
        assert_eq!(s.ask("gcc"), (Answer("gcc".into()), false), "{hostile}");
        assert!(s.miss().is_none(), "{hostile}: replaced by a good entry");
    }
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
}

/// Issue 26: the cache kept every entry forever. Entries not written for `ENTRY_LIFETIME` go when a write sweeps the
/// directory (at most once a day), other files stay.
#[test]
fn old_entries_are_swept_on_a_write() {
    let s = Setup::new();
    s.ask("gcc");
    let dir = s.cache.dir().unwrap().to_path_buf();
    let old = dir.join("compiler-0123456789abcdef");
    fs::write(&old, "old").unwrap();
    age(&old, ENTRY_LIFETIME.as_secs() + 60);
    let temporary = dir.join(".compiler-0123456789abcdef.1.2.tmp");
    fs::write(&temporary, "").unwrap();
    age(&temporary, 2 * 3600);
    let foreign = dir.join("notes.txt");
    fs::write(&foreign, "").unwrap();
    age(&foreign, ENTRY_LIFETIME.as_secs() + 60);
    // The last sweep was long ago.
    age(&dir.join(".swept"), 2 * 24 * 3600);
    s.rewrite("#!/bin/sh\necho 13\n");
    s.ask("gcc 13");
    assert!(!old.exists() && !temporary.exists(), "not swept");
    assert!(foreign.exists() && s.miss().is_none());
}

#[test]
fn an_off_cache_always_probes_and_writes_nothing() {
    let s = Setup::new();
    let off = ProbeCache::off("NVCC_WRAPPER_PROBE_CACHE=0");
    assert_eq!(off.dir(), None);
    for _ in 0..2 {
        let (_, cached) = off.get_or_probe(&s.program, || Ok::<_, String>(Answer("gcc".into()))).unwrap();
        assert!(!cached);
    }
    assert!(!s.dir.path().join("cache").exists());
}

#[test]
fn any_path_and_value_round_trips() {
    let s = Setup::new();
    let odd = s.dir.path().join("bin/we\\ird\nname é");
    fs::write(&odd, "").unwrap();
    age(&odd, 3600);
    let value = Answer("line one\nline \\two\\n".into());
    let ask = |v: &Answer| s.cache.get_or_probe(&odd, || Ok::<_, String>(v.clone())).unwrap();
    assert_eq!(ask(&value), (value.clone(), false));
    assert_eq!(ask(&Answer("?".into())), (value, true));
    assert_eq!(unescape(b"a\\\\b\\nc"), Some(b"a\\b\nc".to_vec()));
    assert_eq!(unescape(b"dangling\\"), None);
    assert_eq!(unescape(b"\\x"), None);
}
