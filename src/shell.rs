//! Shell quoting for what the wrapper shows: the dry-run command (bytes, exact) and log lines (lossy text).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

/// The command as one shell line, each word quoted only when needed. Exact for any bytes but NUL, which no argument
/// can hold.
pub fn join<'a>(words: impl IntoIterator<Item = &'a OsStr>) -> Vec<u8> {
    let mut line = Vec::new();
    for (i, word) in words.into_iter().enumerate() {
        if i > 0 {
            line.push(b' ');
        }
        match shlex::bytes::try_quote(word.as_bytes()) {
            Ok(quoted) => line.extend_from_slice(&quoted),
            Err(_) => line.extend_from_slice(word.as_bytes()),
        }
    }
    line
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
        let words = ["nvcc", "-c", "a b.cu", "", "it's", "-DX=\"1\""];
        let line = display(words.iter().map(OsStr::new));
        assert!(line.starts_with("nvcc -c "), "{line}");
        assert_eq!(shlex::split(&line).unwrap(), words);
    }
}
