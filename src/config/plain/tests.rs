//! The config's own reader against `toml`: the same `Config`, lines included, wherever it reads a file at all.

use std::path::Path;

use super::read;
use crate::config::{sourced, Config};

/// Configs as Nix writes them (makeNvccWrapper's toml.nix), as `scripts/bench.sh` records one, as a person writes
/// one by hand (comments, literal strings, arrays over lines, a table header on a table's way), and every key.
const WRITTEN: &[&str] = &[
    r#"# Written by makeNvccWrapper: what Nixpkgs knows, recorded so that nvcc-wrapper probes nothing.
# The wrapper makes every choice from these facts at each call: see `nvcc-wrapper explain -- ARGS`.
nvcc = "/nix/store/x-cuda_nvcc-12.4/bin/nvcc"
cuda-version = "12.4"

[host-compiler]
stdenv = { path = "/nix/store/x-clang-wrapper-19.1.7/bin/clang++", family = "clang", gcc-install-dir = "/nix/store/x-gcc-14.2.0/lib/gcc/x86_64-unknown-linux-gnu/14.2.0", libstdcxx-dir = "/nix/store/x-gcc-14.2.0-lib/lib", target = "x86_64-unknown-linux-gnu", version = "19.1.7" }
candidates = [{ path = "/nix/store/x-gcc-wrapper-13.3.0/bin/g++", family = "gcc", target = "x86_64-unknown-linux-gnu", version = "13.3.0" }, { path = "/nix/store/x-clang-wrapper-17.0.6/bin/clang++", family = "clang", target = "x86_64-unknown-linux-gnu", version = "17.0.6" }]

[gpu]
capabilities = ["8.6", "9.0a"]
forward-compat = true
arch-flags = "respect"

[target]
system = "aarch64-linux"
platform = "jetson"
cuda-root = "/nix/store/x-cuda-aarch64"
cuda-compat = "/nix/store/x-cuda_compat/compat"

[target.host-compiler]
stdenv = { path = "/nix/store/x-aarch64-gcc-wrapper/bin/aarch64-unknown-linux-gnu-g++", family = "gcc", version = "13.3.0" }
"#,
    "nvcc = \"/tmp/work/cuda/bin/nvcc\"\ncuda-version = \"13.0\"\n[host-compiler]\nstdenv = { path = \
     \"/usr/bin/g++-12\", family = \"gcc\", version = \"12.2.0\" }\n[gpu]\ncapabilities = [\"8.6\"]\n",
    "# By hand.\r\nnvcc = 'cuda/bin/nvcc'   # beside this file\r\nlauncher = \"ccache\"\r\nthreads = 4\r\n\
     threads-follow = false\r\ndepfile-inputs = true\r\nreproducible = false\r\ncompat-data = 'C:\\compat'\r\n\r\n\
     [target.host-compiler]\r\nprefer = \"gcc\"\r\n\r\n[host-compiler]\r\ncandidates = [\r\n  \"g++-13\",  # on PATH\r\n\
     \t'/usr/bin/clang++-17',\r\n  { path = \"/opt/gcc/bin/g++\", family = \"gcc\" },\r\n]\r\nallow-unsupported = true\r\n\
     lto-mismatch = \"error\"\r\n\r\n[gpu]\r\ncapabilities = \"8.6;9.0+PTX\"\r\ncompress-fatbin = false\r\n\
     arch-flags = 'replace'\r\nforward-compat = false\r\n",
    "[gpu]\ncapabilities = [ # the lab's cards\n    \"7.5\",\n\n    \"8.6\", \"9.0a\"  ,\n  ]\n\n[target]\n\
     system = \"powerpc64le-linux\"\nsysroot = \"sysroot\"\n",
    "threads = +2\n[host-compiler]\nstdenv = {path = \"g++\"}\ncandidates = []\n[target]\n[target.host-compiler]\n\
     candidates = [{}]\n",
    "",
    "\n# nothing but a comment\t\n",
];

/// The config blocks of the README and the guides (some are other programs' files, which neither reads as a config).
fn shown() -> Vec<String> {
    let pages = [
        include_str!("../../../README.md"),
        include_str!("../../../docs/guide/configuration.md"),
        include_str!("../../../docs/guide/caches.md"),
        include_str!("../../../docs/guide/cross.md"),
        include_str!("../../../docs/guide/gpu.md"),
    ];
    let mut blocks = Vec::new();
    for page in pages {
        for block in page.split("```toml\n").skip(1) {
            blocks.push(block.split("```").next().unwrap().to_string());
        }
    }
    assert!(blocks.len() >= 9, "the guides' config blocks: {}", blocks.len());
    blocks
}

/// Where the tests' configs are read from: an installed config's place, named in each value's origin.
const FILE: &str = "/nix/store/x-nvcc-wrapper/share/nvcc-wrapper/config.toml";

#[test]
fn every_config_written_and_shown_is_read_here_as_toml_reads_it() {
    let shown = shown();
    let mut read_here = 0;
    for text in WRITTEN.iter().copied().chain(shown.iter().map(String::as_str)) {
        // Panics where the two differ, or where this reader reads what `toml` refuses.
        let here = super::checked_against_toml(text, Path::new(FILE));
        let by_toml = toml::from_str::<Config>(text).is_ok();
        assert_eq!(here, by_toml, "a config in the form configs are written in, left to toml:\n{text}");
        read_here += usize::from(here);
    }
    assert!(read_here >= WRITTEN.len() + 4, "read here: {read_here}");
}

#[test]
fn a_value_on_its_own_line_is_named_by_that_line() {
    let config = sourced::reading(Path::new(FILE), WRITTEN[2], || read::<Config>(WRITTEN[2])).unwrap();
    let lines: Vec<String> = config
        .host_compiler
        .candidates
        .iter()
        .map(|c| c.origin.to_string().rsplit(':').next().unwrap().into())
        .collect();
    assert_eq!(lines, ["15", "16", "17"]);
}

/// What lies outside the form: each is left to `toml`, which reads it or says what is wrong.
#[test]
fn what_is_not_in_the_form_is_left_to_toml() {
    for text in [
        "nvcc = \"/opt/cuda\\u0062in/nvcc\"\n",             // an escape
        "nvcc = \"\"\"/opt/cuda/bin/nvcc\"\"\"\n",          // a multi-line string
        "nvcc = '''/opt/cuda/bin/nvcc'''\n",                // a multi-line literal string
        "gpu.capabilities = [\"8.6\"]\n",                   // a dotted key
        "\"nvcc\" = \"/opt/cuda/bin/nvcc\"\n",              // a quoted key
        "threads = 1_0\n",                                  // an underscore
        "threads = 0x10\n",                                 // another base
        "threads = 010\n",                                  // a leading zero
        "threads = 99999999999999999999\n",                 // too large
        "threads = 4.0\n",                                  // a float
        "nvcc = 1979-05-27\n",                              // a date
        "[host-compiler]\nstdenv = { path = \"g++\", }\n",  // TOML 1.1's comma after the last
        "[host-compiler]\nstdenv = {\n path = \"g++\" }\n", // TOML 1.1's new line inside
        "[ gpu ]\n",                                        // blanks inside a header
        "[[gpu]]\n",                                        // an array of tables
        "[target.host-compiler]\n[target]\n",               // a table opened on an earlier header's way
        "[gpu]\n[gpu]\n",                                   // a table twice
        "threads = 1\nthreads = 2\n",                       // a key twice
        "[host-compiler]\nstdenv = { path = \"a\", path = \"b\" }\n",
        "[target]\nhost-compiler = {}\n[target.host-compiler]\n", // a header adding to an inline table
        "nvcc = \"/opt/cuda/bin/nvcc\" x\n",                      // something after a value
        "nvcc = \"/opt/\x01cuda\"\n",                             // a control character
        "# \x7f\n",                                               // one in a comment
        "nvcc = \"/opt/cuda/bin/nvcc\"\rthreads = 1\n",           // a lone carriage return
        "threads = true\n",                                       // a value the config's type refuses
        "nvcc = \"/opt/cuda/bin/nvcc\"\nnvcc-path = \"x\"\n",     // a key the config does not know
        "[gpu]\narch-flags = \"all\"\n",                          // a variant it does not know
        "[gpu]\ncapabilities = [\"8.6\", 8]\n",
        &format!("threads = {}", "[".repeat(100_000)), // arrays in arrays, deeper than any config
    ] {
        assert!(read::<Config>(text).is_none(), "{text:?}");
    }
}

/// Each config above, changed by one character at every place (deleted, doubled, or one of TOML's own characters
/// put before it): where this reader reads the result at all, `toml` reads the same `Config` from it.
#[test]
fn a_config_changed_anywhere_is_read_here_as_toml_reads_it_or_left_to_toml() {
    const PUT: &[&str] =
        &["\"", "'", "\\", "[", "]", "{", "}", ",", "=", ".", "#", "\n", "\r", "\t", " ", "0", "-", "x", "é"];
    let (mut tried, mut read_here) = (0, 0);
    for text in WRITTEN.iter().take(5) {
        for (at, c) in text.char_indices() {
            let (before, after) = (&text[..at], &text[at + c.len_utf8()..]);
            let mut changed = vec![format!("{before}{after}"), format!("{before}{c}{c}{after}")];
            changed.extend(PUT.iter().map(|put| format!("{before}{put}{c}{after}")));
            for text in changed {
                tried += 1;
                read_here += usize::from(super::checked_against_toml(&text, Path::new("/etc/nvcc-wrapper.toml")));
            }
        }
    }
    // Not vacuous: many changes keep a config (a comment's or a string's character, a blank).
    assert!(read_here * 5 > tried, "{read_here} of {tried} read here");
}

/// The configs above changed in one to four places at random (a character deleted, a piece of TOML or a config word
/// put in, a stretch copied elsewhere): where this reader reads the result at all, `toml` reads the same `Config`.
/// `PLAIN_EDITS` and `PLAIN_SEED` run more (docs/reliability.md: 15,000,000 edits, `cargo test --release`).
#[test]
fn a_config_changed_at_random_is_read_here_as_toml_reads_it_or_left_to_toml() {
    const PUT: &[&str] = &[
        "\"",
        "'",
        "\\",
        "[",
        "]",
        "{",
        "}",
        ",",
        "=",
        ".",
        "#",
        "\n",
        "\r\n",
        "\r",
        "\t",
        " ",
        "0",
        "1",
        "+",
        "-",
        "_",
        "x",
        "é",
        "\u{1}",
        "\u{7f}",
        "true",
        "false",
        "\"\"",
        "''",
        "{}",
        "[]",
        "[gpu]",
        "[target]",
        "[host-compiler]",
        "[target.host-compiler]",
        "\n[gpu]\n",
        "threads = 3\n",
        "a = 1",
        "path",
        "family = \"gcc\"",
        "capabilities",
    ];
    // A knob of the test's own, not the wrapper's environment (which only `Context` reads).
    #[allow(clippy::disallowed_methods)]
    let number = |name: &str, default: u64| std::env::var(name).ok().and_then(|n| n.parse().ok()).unwrap_or(default);
    let (edits, mut state) = (number("PLAIN_EDITS", 20_000), number("PLAIN_SEED", 1).max(1));
    // xorshift64: the same edits on every run.
    let mut below = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let mut read_here = 0;
    for _ in 0..edits {
        let mut text = WRITTEN[below(5)].to_string();
        for _ in 0..1 + below(4) {
            let places: Vec<usize> = text.char_indices().map(|(at, _)| at).chain([text.len()]).collect();
            let at = places[below(places.len())];
            match below(3) {
                0 => {
                    if let Some(c) = text[at..].chars().next() {
                        text.replace_range(at..at + c.len_utf8(), "");
                    }
                }
                1 => text.insert_str(at, PUT[below(PUT.len())]),
                _ => {
                    let (end, to) = (places[below(places.len())], places[below(places.len())]);
                    let piece = text.get(at..end).unwrap_or_default().to_string();
                    text.insert_str(to, &piece);
                }
            }
        }
        read_here += usize::from(super::checked_against_toml(&text, Path::new("/etc/nvcc-wrapper.toml")));
    }
    // Not vacuous: about one in seven is still a config.
    assert!(read_here * 10 > edits as usize, "{read_here} of {edits} read here");
}
