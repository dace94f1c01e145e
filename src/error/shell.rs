//! Shell quoting for what the wrapper shows: the dry-run command (bytes, exact) and log lines (lossy text).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

/// The command as one shell line for bash, each word quoted only when needed. Exact for any bytes (no argument holds
/// NUL), and valid UTF-8.
pub fn join<'a>(words: impl IntoIterator<Item = &'a OsStr>) -> Vec<u8> {
    let mut line = Vec::new();
    for (i, word) in words.into_iter().enumerate() {
        if i > 0 {
            line.push(b' ');
        }
        quote_into(word.as_bytes(), &mut line);
    }
    line
}

/// Bytes every POSIX shell takes literally anywhere in a word (`=` and `,` included, so `-ccbin=/usr/bin/g++` and
/// `-gencode=arch=compute_86,code=sm_86` stay readable).
fn is_plain(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"_-+=,./:@%^".contains(&b)
}

/// A word as is when plain, else in single quotes (a quote inside written as `'\''`); a word with a control character
/// or bytes that are not UTF-8 in bash's `$'...'`, with those bytes as `\xHH`, so the line is plain ASCII text that
/// a terminal shows as it is and a paste gives back the same bytes (a raw CR or ESC inside quotes would redraw the
/// line, and U+FFFD in place of a byte would paste a different argument).
fn quote_into(word: &[u8], line: &mut Vec<u8>) {
    if !word.is_empty() && word.iter().all(|&b| is_plain(b)) {
        line.extend_from_slice(word);
        return;
    }
    if std::str::from_utf8(word).is_err() || word.iter().any(|b| b.is_ascii_control()) {
        line.extend_from_slice(b"$'");
        let mut rest = word;
        while !rest.is_empty() {
            // The longest valid UTF-8 run is kept as text, but for its control characters.
            let valid = match std::str::from_utf8(rest) {
                Ok(s) => s.len(),
                Err(e) => e.valid_up_to(),
            };
            for &b in &rest[..valid] {
                match b {
                    b'\\' | b'\'' => line.extend_from_slice(&[b'\\', b]),
                    b if b.is_ascii_control() => line.extend_from_slice(format!("\\x{b:02x}").as_bytes()),
                    b => line.push(b),
                }
            }
            if valid < rest.len() {
                line.extend_from_slice(format!("\\x{:02x}", rest[valid]).as_bytes());
                rest = &rest[valid + 1..];
            } else {
                rest = &[];
            }
        }
        line.push(b'\'');
        return;
    }
    line.push(b'\'');
    for &b in word {
        if b == b'\'' {
            line.extend_from_slice(b"'\\''");
        } else {
            line.push(b);
        }
    }
    line.push(b'\'');
}

/// One path as a shell reads it back (`display` of one word): what messages show, never U+FFFD.
pub fn path(path: &std::path::Path) -> String {
    display([path.as_os_str()])
}

/// `join`, as text: `join` writes only valid UTF-8, so nothing is lost.
pub fn display<'a>(words: impl IntoIterator<Item = &'a OsStr>) -> String {
    String::from_utf8_lossy(&join(words)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_what_needs_it_and_round_trips() {
        let words = ["nvcc", "-ccbin=/usr/bin/g++", "-c", "a b.cu", "", "it's", "-DX=\"1\"", "$HOME", "~x"];
        let line = display(words.iter().map(OsStr::new));
        assert!(line.starts_with("nvcc -ccbin=/usr/bin/g++ -c 'a b.cu' '' 'it'\\''s' "), "{line}");
        assert_eq!(shlex::split(&line).unwrap(), words);
    }

    #[test]
    fn control_characters_and_bytes_that_are_not_utf8_paste_back_exactly() {
        use std::os::unix::ffi::OsStrExt;
        // Issue 12: these used to show as U+FFFD, or as a raw CR or ESC inside quotes.
        let words: [&[u8]; 7] =
            [b"-DX=\xff\xfe", b"a\rb", b"a\nb", b"\x1b[31mred", b"tab\there", b"it's \\ \xc3\xa9\x80", b"\xe2\x82"];
        let line = display(words.iter().map(|w| OsStr::from_bytes(w)));
        assert!(!line.contains('\u{fffd}') && !line.chars().any(|c| c.is_control()), "{line:?}");
        // bash reads the line back into the same bytes.
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!("for w in {line}; do printf '%s\\0' \"$w\"; done"))
            .output()
            .unwrap();
        assert!(out.status.success());
        let back: Vec<&[u8]> = out.stdout.split(|&b| b == 0).filter(|w| !w.is_empty()).collect();
        assert_eq!(back, words);
    }
}
