//! nvcc's three ways of turning text into words, byte for byte. Measured on nvcc 11.8.89, 12.4.131, 13.0.88 and
//! 13.5.37 (all four alike) by generated inputs against `nvcc --dryrun`, which prints every `-D` value it was given in
//! double quotes; `tests/real/splitters.rs` replays that comparison on 12.4, 13.0 and 13.5.
//!
//! `NVCC_PREPEND_FLAGS` / `NVCC_APPEND_FLAGS` ([`env_flags`]): split at space and tab only (a newline, CR, form feed
//! or vertical tab is part of a word); a double quote groups words and stays in the word (`-DX="a b"` is one word,
//! quotes and all); inside quotes a backslash right before a double quote keeps that quote from closing the group,
//! and both stay; a backslash anywhere else is an ordinary byte, as are single quotes and `#`. An unclosed quote is
//! nvcc's error (`Stray '"' character`).
//!
//! Options files (`-optf F`, [`options_file`]): split at space, tab, newline and CR (not form feed or vertical tab); a
//! double quote groups words and is removed; a backslash is removed and makes the next byte ordinary, whatever it is
//! (`a\ b` is `a b`, `a\\b` is `a\b`), except that a backslash and a double quote are both removed (`a\"b` is `ab`);
//! spaces and tabs that begin or end a word and were not inside quotes are dropped (`\ x` is `x`), and a word left
//! with nothing and no quotes is no word; `""` is an empty word. An unclosed quote, or a backslash at the very end, is
//! nvcc's error. Single quotes and `#` are ordinary.
//!
//! The value of an option that takes a list (`-Xcompiler`, `-D`, `-optf`, `-gencode`, ... : [`option_list`]): split
//! at commas outside double quotes; a double quote groups and stays; a backslash is removed and makes the next byte
//! ordinary (`a\,b` is one item `a,b`); each item loses the spaces and tabs at its ends, and an empty item is dropped.
//! An unclosed quote or a backslash at the end is nvcc's error (`Stray '"' character`, `Stray '' character`).
//!
//! All three work on bytes: arguments need not be UTF-8.

/// Why nvcc refuses the text (it stops with `nvcc fatal : Stray ...`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitError {
    /// A double quote that is never closed.
    UnclosedQuote,
    /// A backslash with nothing after it.
    TrailingBackslash,
}

impl std::fmt::Display for SplitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SplitError::UnclosedQuote => "a double quote is never closed",
            SplitError::TrailingBackslash => "it ends in a backslash",
        })
    }
}

/// The words nvcc reads from text, or why it refuses the text. `words` holds what was read up to the error (the
/// unclosed rest as a last word), so that a caller can still show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    pub words: Vec<Vec<u8>>,
    pub error: Option<SplitError>,
}

/// Split the value of `NVCC_PREPEND_FLAGS` or `NVCC_APPEND_FLAGS` as nvcc does.
pub fn env_flags(text: &[u8]) -> Split {
    let mut words = Vec::new();
    let mut current: Option<Vec<u8>> = None;
    let mut quoted = false;
    let mut bytes = text.iter().copied().peekable();
    while let Some(b) = bytes.next() {
        if matches!(b, b' ' | b'\t') && !quoted {
            words.extend(current.take());
            continue;
        }
        let word = current.get_or_insert_with(Vec::new);
        word.push(b);
        if quoted && b == b'\\' && bytes.peek() == Some(&b'"') {
            word.push(b'"');
            bytes.next();
        } else if b == b'"' {
            quoted = !quoted;
        }
    }
    words.extend(current);
    Split { words, error: quoted.then_some(SplitError::UnclosedQuote) }
}

/// Split the contents of an nvcc options file as nvcc does.
pub fn options_file(text: &[u8]) -> Split {
    // Each byte of the word being read, and whether it was inside quotes (such bytes are never trimmed).
    let mut words = Vec::new();
    let mut current: Option<Vec<(u8, bool)>> = None;
    let mut had_quote = false;
    let mut quoted = false;
    let mut error = None;
    let finish = |word: Vec<(u8, bool)>, had_quote: bool, words: &mut Vec<Vec<u8>>| {
        let loose = |&(b, q): &(u8, bool)| !q && matches!(b, b' ' | b'\t');
        let start = word.iter().position(|c| !loose(c)).unwrap_or(word.len());
        let end = word.iter().rposition(|c| !loose(c)).map_or(start, |i| i + 1);
        if start < end || had_quote {
            words.push(word[start..end.max(start)].iter().map(|&(b, _)| b).collect());
        }
    };
    let mut bytes = text.iter().copied();
    while let Some(b) = bytes.next() {
        match b {
            b'"' => {
                quoted = !quoted;
                had_quote = true;
                current.get_or_insert_with(Vec::new);
            }
            b'\\' => match bytes.next() {
                None => {
                    error = Some(SplitError::TrailingBackslash);
                    break;
                }
                Some(b'"') => {
                    current.get_or_insert_with(Vec::new);
                }
                Some(next) => current.get_or_insert_with(Vec::new).push((next, quoted)),
            },
            b' ' | b'\t' | b'\n' | b'\r' if !quoted => {
                if let Some(word) = current.take() {
                    finish(word, had_quote, &mut words);
                }
                had_quote = false;
            }
            _ => current.get_or_insert_with(Vec::new).push((b, quoted)),
        }
    }
    if let Some(word) = current {
        finish(word, had_quote, &mut words);
    }
    if quoted && error.is_none() {
        error = Some(SplitError::UnclosedQuote);
    }
    Split { words, error }
}

/// Split the value of an option that takes a list (`-Xcompiler a,b`, `-optf a.opt,b.opt`) into its items, as nvcc
/// does.
pub fn option_list(value: &[u8]) -> Split {
    let mut items = Vec::new();
    let mut current = Vec::new();
    let mut quoted = false;
    let mut error = None;
    let finish = |item: &mut Vec<u8>, items: &mut Vec<Vec<u8>>| {
        let trimmed = trim_blanks(item);
        if !trimmed.is_empty() {
            items.push(trimmed.to_vec());
        }
        item.clear();
    };
    let mut bytes = value.iter().copied();
    while let Some(b) = bytes.next() {
        match b {
            b'\\' => match bytes.next() {
                Some(next) => current.push(next),
                None => {
                    error = Some(SplitError::TrailingBackslash);
                    break;
                }
            },
            b'"' => {
                quoted = !quoted;
                current.push(b);
            }
            b',' if !quoted => finish(&mut current, &mut items),
            _ => current.push(b),
        }
    }
    finish(&mut current, &mut items);
    if quoted && error.is_none() {
        error = Some(SplitError::UnclosedQuote);
    }
    Split { words: items, error }
}

/// Spaces and tabs off both ends (not other whitespace: nvcc keeps a CR or a newline at the end of an item).
fn trim_blanks(item: &[u8]) -> &[u8] {
    let blank = |b: &u8| matches!(b, b' ' | b'\t');
    let start = item.iter().position(|b| !blank(b)).unwrap_or(item.len());
    let end = item.iter().rposition(|b| !blank(b)).map_or(start, |i| i + 1);
    &item[start..end]
}

/// One word as an options file writes it so that nvcc reads it back exactly: in double quotes (which keep its spaces
/// and tabs, even at its ends, and make `""` an empty word), each backslash doubled. `None` for a word holding a
/// double quote, which no options file can give nvcc (`\"` is dropped); a word read from an options file never has
/// one.
pub fn options_file_word(word: &[u8]) -> Option<Vec<u8>> {
    if word.contains(&b'"') {
        return None;
    }
    let mut out = Vec::with_capacity(word.len() + 2);
    out.push(b'"');
    for &b in word {
        if b == b'\\' {
            out.push(b'\\');
        }
        out.push(b);
    }
    out.push(b'"');
    Some(out)
}

/// A byte that nvcc would not hand on unchanged inside an `-Xcompiler`, `-Xlinker` or `-Xcudafe` list the wrapper
/// adds (a path it names): nvcc splits such a list at commas, runs the compile steps that receive the items through
/// `/bin/sh` (which reads blanks, quotes, `$`, globs and the rest), and splits the link step's at blanks with no shell
/// (measured on 11.8, 12.4, 13.0 and 13.5, docs/nvcc-facts.md#what-the-host-compiler-receives-from-an--x-list), so a
/// byte that one of them reads cannot be written to suit both; a colon separates the entries of a runpath.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unpassable(pub u8);

impl std::fmt::Display for Unpassable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            b' ' => f.write_str("a space"),
            b'\t' => f.write_str("a tab"),
            b'\n' => f.write_str("a newline"),
            b if b.is_ascii_graphic() => write!(f, "`{}`", b as char),
            b => write!(f, "the byte 0x{b:02x}"),
        }
    }
}

/// What to do about a configured path that an `-X` list cannot carry.
pub const UNPASSABLE_HELP: &str =
    "name the directory by a path of letters, digits and `/._+-@%^=` (a symbolic link to it will do)";

/// The first byte of `value` that nvcc would not pass on unchanged in an `-X` list ([`Unpassable`]), or `None` when
/// every byte is a letter, a digit, one of `/._+-@%^=`, or not ASCII.
pub fn first_unpassable(value: &[u8]) -> Option<Unpassable> {
    let passes = |b: &u8| !b.is_ascii() || b.is_ascii_alphanumeric() || b"/._+-@%^=".contains(b);
    value.iter().find(|b| !passes(b)).map(|&b| Unpassable(b))
}

/// One argument: `prefix` and then `path`, byte for byte (a path that is not UTF-8 loses nothing).
pub fn joined(prefix: &str, path: &std::path::Path) -> std::ffi::OsString {
    let mut word = std::ffi::OsString::from(prefix);
    word.push(path);
    word
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(split: Split) -> Vec<String> {
        assert_eq!(split.error, None, "{split:?}");
        split.words.into_iter().map(|t| String::from_utf8(t).unwrap()).collect()
    }

    #[test]
    fn env_flags_keep_quotes_and_split_at_space_and_tab_only() {
        let rows: &[(&str, &[&str])] = &[
            ("", &[]),
            ("   ", &[]),
            ("-ccbin g++", &["-ccbin", "g++"]),
            ("  -DX=1\t-DQ=2 ", &["-DX=1", "-DQ=2"]),
            // Issue 26: nvcc 12.4, 13.0 and 13.5 split at space and tab, nothing else.
            ("-DMY1=1\r-DMY2=2 -arch=sm_80", &["-DMY1=1\r-DMY2=2", "-arch=sm_80"]),
            ("-DA\n-DB\x0c-DC\x0b-DD", &["-DA\n-DB\x0c-DC\x0b-DD"]),
            (r#"-DX="a b""#, &[r#"-DX="a b""#]),
            (r#"-DX=a"b c"d -c"#, &[r#"-DX=a"b c"d"#, "-c"]),
            ("-DX='a b'", &["-DX='a", "b'"]),
            (r"-DX=a\ b", &[r"-DX=a\", "b"]),
            // Inside quotes, \" does not close them; outside, a backslash is ordinary.
            (r#"-DX="a\" b" -c"#, &[r#"-DX="a\" b""#, "-c"]),
            (r#"-DX=a\\"b c" -c"#, &[r#"-DX=a\\"b c""#, "-c"]),
        ];
        for (text, want) in rows {
            assert_eq!(strings(env_flags(text.as_bytes())), *want, "{text:?}");
        }
        for bad in [r#"-DX="a"#, r#"-DX=a\""#, r#"-DX="a\""#, r#"-DX="a\\""#, "\""] {
            assert_eq!(env_flags(bad.as_bytes()).error, Some(SplitError::UnclosedQuote), "{bad:?}");
        }
    }

    #[test]
    fn options_files_remove_quotes_and_escapes_and_trim_loose_blanks() {
        let rows: &[(&str, &[&str])] = &[
            ("", &[]),
            ("-c\n-o out.o\r\n", &["-c", "-o", "out.o"]),
            (r#"-DX="a b""#, &["-DX=a b"]),
            (r#"-DX=a"b c"d"#, &["-DX=ab cd"]),
            (r#""-DX=a b""#, &["-DX=a b"]),
            ("-DX='a b'", &["-DX='a", "b'"]),
            (r"-DX=a\ b", &["-DX=a b"]),
            (r"-DX=a\xb", &["-DX=axb"]),
            (r"-DX=a\\b", &[r"-DX=a\b"]),
            (r#""-DB=\"p q\"""#, &["-DB=p q"]),
            (r#"-DC=a\"b -DD=x\\y"#, &["-DC=ab", r"-DD=x\y"]),
            (r"-DH=a\\\ b", &[r"-DH=a\ b"]),
            ("-DX=1 # c", &["-DX=1", "#", "c"]),
            (r#"-o """#, &["-o", ""]),
            // Form feed and vertical tab are part of a word.
            ("-DA\x0c-DB\x0b-DC", &["-DA\x0c-DB\x0b-DC"]),
            // Escaped blanks at a word's ends are dropped, quoted ones kept; a word of escaped blanks is none.
            (r"a\  \ b", &["a", "b"]),
            (r#"x "y "\  \ \ "#, &["x", "y "]),
            (r#"\ "\ ""#, &[" "]),
            ("\\\t\"\t\"x", &["\tx"]),
            (r"y\ \ x", &["y  x"]),
        ];
        for (text, want) in rows {
            assert_eq!(strings(options_file(text.as_bytes())), *want, "{text:?}");
        }
        assert_eq!(options_file(b"-DX=\"a").error, Some(SplitError::UnclosedQuote));
        assert_eq!(options_file(b"-DX=a \\").error, Some(SplitError::TrailingBackslash));
    }

    #[test]
    fn lists_split_at_commas_outside_quotes_and_drop_empty_items() {
        let rows: &[(&str, &[&str])] = &[
            ("a,b", &["a", "b"]),
            ("a,,b,", &["a", "b"]),
            (" a ,\tb\t", &["a", "b"]),
            (r#""a,b"c,d"#, &[r#""a,b"c"#, "d"]),
            (r"a\,b", &["a,b"]),
            (r"a\\,b", &[r"a\", "b"]),
            (r#"a\"b"#, &[r#"a"b"#]),
            (r#"\"a,b\""#, &[r#""a"#, r#"b""#]),
            ("a\r,b\n", &["a\r", "b\n"]),
            (r"\ a", &["a"]),
        ];
        for (text, want) in rows {
            assert_eq!(strings(option_list(text.as_bytes())), *want, "{text:?}");
        }
        assert_eq!(option_list(br#"a"b"#).error, Some(SplitError::UnclosedQuote));
        assert_eq!(option_list(br"a\").error, Some(SplitError::TrailingBackslash));
    }

    #[test]
    fn a_word_written_for_an_options_file_reads_back_the_same() {
        for word in [&b"plain"[..], b"", b" lead and trail\t", b"back\\slash\\", b"\\\\", b"\xff\r\n#'"] {
            let written = options_file_word(word).unwrap();
            assert_eq!(options_file(&written).words, vec![word.to_vec()], "{word:?}");
        }
        assert_eq!(options_file_word(b"a\"b"), None);
    }

    #[test]
    fn bytes_that_are_not_utf8_survive() {
        assert_eq!(env_flags(b"-DX=\xff\xfe -c").words, vec![b"-DX=\xff\xfe".to_vec(), b"-c".to_vec()]);
        assert_eq!(options_file(b"\"a \xff\"").words, vec![b"a \xff".to_vec()]);
        assert_eq!(option_list(b"\xff,\xfe").words, vec![b"\xff".to_vec(), b"\xfe".to_vec()]);
    }

    #[test]
    fn paths_that_pass_through_an_x_list_and_the_first_byte_that_does_not() {
        let nix = b"/nix/store/0c7c8bk4fkz1kbylw9j4kq3ivk6s4mm5-gcc-13.3.0/lib/gcc/x86_64-unknown-linux-gnu/13.3.0";
        assert_eq!(first_unpassable(nix), None);
        assert_eq!(first_unpassable("/opt/gcc-ü/lib+x@y%z^w=v".as_bytes()), None);
        assert_eq!(first_unpassable(b"/opt/\xff\xfe/lib"), None);
        let cases: [(&[u8], u8, &str); 8] = [
            (b"/opt/my gcc", b' ', "a space"),
            (b"/opt/a\tb", b'\t', "a tab"),
            (b"/opt/a,b", b',', "`,`"),
            (b"/opt/a:b", b':', "`:`"),
            (b"/opt/$HOME", b'$', "`$`"),
            (b"/opt/it's", b'\'', "`'`"),
            (b"/opt/a*", b'*', "`*`"),
            (b"/opt/\x07", 0x07, "the byte 0x07"),
        ];
        for (path, byte, said) in cases {
            assert_eq!(first_unpassable(path), Some(Unpassable(byte)), "{path:?}");
            assert_eq!(Unpassable(byte).to_string(), said);
        }
    }
}
