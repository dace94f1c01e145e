//! Word splitting against real nvcc: the wrapper splits text into words exactly as real nvcc 12.4, 13.0 and 13.5 do
//! (issue 26), shown differentially on generated inputs: `NVCC_PREPEND_FLAGS`, `NVCC_APPEND_FLAGS`, options files,
//! and the values of list options (`-D`, `-Xcompiler`). Needs real NVCC 12.4, 13.0 and 13.5.
//!
//! nvcc's `--dryrun` prints the host compiler's command line, and on it every `-D` value it was given as `-D "VALUE"`
//! (a double quote inside written `\"`), in order, and every `-Xcompiler` item as it is, separated by spaces. So the
//! inputs are made of words `-DM...`: the wrapper's splitter (`args::split::env_flags` or `options_file`) cuts the
//! text into words, `args::split::option_list` cuts each value into items, and the line those items make must be the
//! line nvcc prints, byte for byte; where the wrapper's splitters find text nvcc must refuse (an unclosed quote, a
//! backslash at the end, a word that is no `-D` option), nvcc must refuse it too. The inputs are generated with
//! proptest from a fixed seed, so every run replays the same ones (and shrinks a failure to a small input).

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::sync::atomic::{AtomicUsize, Ordering};

use nvcc_wrapper::fuzzing::split;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};

use crate::support::*;

const RELEASES: [&str; 3] = ["12.4", "13.0", "13.5"];

/// Inputs per release and channel.
const CASES: u32 = 40;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Channel {
    Prepend,
    Append,
    OptionsFile,
    /// One argv word `-DM...`: only the list splitter is at work.
    ListInArgv,
    /// `-Xcompiler=VALUE` in argv.
    Xcompiler,
}

/// What nvcc did with an input: the part of its host compiler line the input makes, or its error.
type Said = Result<Vec<u8>, String>;

/// Run the real nvcc's dry run with `text` in `channel`.
fn nvcc_said(sb: &RealSandbox, channel: Channel, text: &[u8]) -> Said {
    let mut cmd = sb.real_nvcc();
    cmd.args(["--dryrun", "-E", "k.cu"]);
    let text_os = OsString::from_vec(text.to_vec());
    match channel {
        Channel::Prepend => {
            cmd.env("NVCC_PREPEND_FLAGS", &text_os).arg("-DMEND");
        }
        Channel::Append => {
            cmd.arg("-DMBEG").env("NVCC_APPEND_FLAGS", &text_os);
        }
        Channel::OptionsFile => {
            std::fs::write(sb.file("t.opt"), text).unwrap();
            cmd.args(["-DMBEG", "-optf", "t.opt", "-DMEND"]);
        }
        Channel::ListInArgv => {
            cmd.arg("-DMBEG").arg(&text_os).arg("-DMEND");
        }
        Channel::Xcompiler => {
            let mut value = OsString::from("-Xcompiler=");
            value.push(&text_os);
            cmd.arg("-Xcompiler=@B").arg(value).arg("-Xcompiler=@E");
        }
    }
    let out = cmd.output().unwrap();
    let all = [out.stderr.as_slice(), out.stdout.as_slice()].concat();
    let Some(at) = find(&all, b"#$ gcc") else {
        let text = String::from_utf8_lossy(&all);
        return Err(text.trim_end().lines().last().unwrap_or("").to_string());
    };
    let line = &all[at..];
    Ok(match channel {
        Channel::Xcompiler => {
            let start = find(line, b"@B").unwrap();
            let end = find(line, b"@E").unwrap();
            line[start..end + 2].to_vec()
        }
        _ => {
            let line = &line[..find(line, b" -D__CUDACC_VER_MAJOR__").unwrap()];
            line[find(line, b"-D \"").unwrap_or(line.len())..].to_vec()
        }
    })
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// What the wrapper's splitters say nvcc prints for the input, or why nvcc must refuse it.
fn wrapper_says(channel: Channel, text: &[u8]) -> Said {
    let words = match channel {
        Channel::Prepend | Channel::Append => split::env_flags(text),
        Channel::OptionsFile => split::options_file(text),
        Channel::ListInArgv => split::Split { words: vec![text.to_vec()], error: None },
        Channel::Xcompiler => {
            let items = split::option_list(text);
            if let Some(e) = items.error {
                return Err(e.to_string());
            }
            let mut line = b"@B".to_vec();
            for item in items.words {
                line.push(b' ');
                line.extend(item);
            }
            line.extend(b" @E");
            return Ok(line);
        }
    };
    if let Some(e) = words.error {
        return Err(e.to_string());
    }
    let mut items: Vec<Vec<u8>> = Vec::new();
    if channel != Channel::Prepend {
        items.push(b"MBEG".to_vec());
    }
    for word in &words.words {
        let Some(value) = word.strip_prefix(b"-D").filter(|v| v.starts_with(b"M")) else {
            return Err(format!("{:?} is not a -D option", String::from_utf8_lossy(word)));
        };
        let list = split::option_list(value);
        if let Some(e) = list.error {
            return Err(e.to_string());
        }
        items.extend(list.words);
    }
    if channel != Channel::Append {
        items.push(b"MEND".to_vec());
    }
    let rendered: Vec<Vec<u8>> = items
        .into_iter()
        .map(|item| {
            let mut d = b"-D \"".to_vec();
            for b in item {
                if b == b'"' {
                    d.push(b'\\');
                }
                d.push(b);
            }
            d.push(b'"');
            d
        })
        .collect();
    Ok(rendered.join(&b' '))
}

/// Text of words `-DM...` made of the bytes the splitters treat specially, and blanks of every kind between them.
fn inputs(channel: Channel) -> BoxedStrategy<Vec<u8>> {
    let piece = prop_oneof![
        4 => prop::sample::select(vec![&b"a"[..], b"b", b"=", b"#", b"'", b"\xff", b"-DM"]),
        2 => prop::sample::select(vec![&b" "[..], b"\t", b"\n", b"\r", b"\x0b", b"\x0c"]),
        1 => Just(&b"\""[..]),
        1 => Just(&b"\\"[..]),
        1 => Just(&b","[..]),
    ];
    let word = prop::collection::vec(piece, 0..8).prop_map(|pieces| {
        let mut w = b"-DM".to_vec();
        pieces.into_iter().for_each(|p| w.extend(p));
        w
    });
    let blank = prop::sample::select(vec![&b" "[..], b"\t", b"  ", b"\n", b"\r", b"\x0c", b"\x0b", b" \r\n"]);
    let words = prop::collection::vec((word, blank), 1..5).prop_map(|ws| {
        let mut text = Vec::new();
        for (w, b) in ws {
            text.extend(w);
            text.extend(b);
        }
        text
    });
    match channel {
        // A list value: the text after `-DM` of a single argv word, or an `-Xcompiler` value (no `@`, the markers).
        Channel::ListInArgv => words.boxed(),
        Channel::Xcompiler => words.prop_map(|w| w[3..].to_vec()).boxed(),
        _ => words.boxed(),
    }
}

fn differential(release: &str) {
    let Some(root) = real_toolkit(release) else { return };
    let sb = RealSandbox::new(&root);
    sb.write("k.cu", "__global__ void k() {}\n");
    for channel in [Channel::Prepend, Channel::Append, Channel::OptionsFile, Channel::ListInArgv, Channel::Xcompiler] {
        let accepted = AtomicUsize::new(0);
        let config = Config { cases: CASES, failure_persistence: None, max_shrink_iters: 200, ..Config::default() };
        let mut runner = TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
        let result = runner.run(&inputs(channel), |text| {
            let nvcc = nvcc_said(&sb, channel, &text);
            let ours = wrapper_says(channel, &text);
            let agree = match (&nvcc, &ours) {
                (Ok(a), Ok(b)) => a == b,
                (Err(_), Err(_)) => true,
                _ => false,
            };
            if nvcc.is_ok() {
                accepted.fetch_add(1, Ordering::Relaxed);
            }
            if agree {
                Ok(())
            } else {
                let show = |s: &Said| match s {
                    Ok(line) => format!("{:?}", String::from_utf8_lossy(line)),
                    Err(e) => format!("refused: {e}"),
                };
                Err(TestCaseError::fail(format!(
                    "nvcc {release}, {channel:?}, input {:?}:\n  nvcc:    {}\n  wrapper: {}",
                    OsString::from_vec(text.clone()).as_bytes().escape_ascii().to_string(),
                    show(&nvcc),
                    show(&ours)
                )))
            }
        });
        if let Err(e) = result {
            panic!("{e}");
        }
        // Not vacuous: a good share of the inputs are ones nvcc accepts, so their words were compared.
        let accepted = accepted.load(Ordering::Relaxed);
        assert!(accepted * 5 >= CASES as usize, "nvcc {release}, {channel:?}: only {accepted} of {CASES} accepted");
    }
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn the_splitters_match_nvcc_12_4() {
    differential(RELEASES[0]);
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn the_splitters_match_nvcc_13_0() {
    differential(RELEASES[1]);
}

#[test]
#[ignore = "needs real toolchains: scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn the_splitters_match_nvcc_13_5() {
    differential(RELEASES[2]);
}
