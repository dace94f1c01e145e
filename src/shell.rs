//! Shell quoting for what the wrapper shows: the dry-run command (bytes, exact) and log lines (lossy text).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

/// The command as one shell line, each word quoted only when needed. Exact for any bytes (no argument holds NUL).
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

/// A word as is when plain, else in single quotes (a quote inside written as `'\''`).
fn quote_into(word: &[u8], line: &mut Vec<u8>) {
    if !word.is_empty() && word.iter().all(|&b| is_plain(b)) {
        line.extend_from_slice(word);
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

/// `join`, for a log line.
pub fn display<'a>(words: impl IntoIterator<Item = &'a OsStr>) -> String {
    String::from_utf8_lossy(&join(words)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_what_needs_it_and_round_trips() {
        let words = ["nvcc", "-ccbin=/usr/bin/g++", "-c", "a b.cu", "", "it's", "-DX=\"1\"", "$HOME", "a\nb", "~x"];
        let line = display(words.iter().map(OsStr::new));
        assert!(line.starts_with("nvcc -ccbin=/usr/bin/g++ -c 'a b.cu' '' 'it'\\''s' "), "{line}");
        assert_eq!(shlex::split(&line).unwrap(), words);
    }
}
