//! nvcc's two ways of turning text into arguments, as measured on nvcc 13.0.88.
//!
//! `NVCC_PREPEND_FLAGS` / `NVCC_APPEND_FLAGS`: split at whitespace; a double quote groups words but stays in the
//! token (`-DX="a b"` reaches the host compiler as `X="a b"` with the quotes); single quotes are ordinary characters.
//!
//! Options files (`-optf F`): split at whitespace; a double quote groups and is removed (`-DX=a"b c"d` is `X=ab cd`);
//! a backslash is removed and makes a following whitespace character literal (`a\ b` is `a b`, `a\xb` is `axb`), and
//! a double quote right after it is removed without grouping (`-DX=a\"b` is `X=ab`, `"-DB=\"p q\""` is `B=p q`:
//! measured on 11.8.89, 12.4.131 and 13.0.88 with a host compiler that records its argv); single quotes and `#` are
//! ordinary characters. So a token read from an options file never holds a double quote or a backslash.
//!
//! Both work on bytes: arguments need not be UTF-8.

/// Split the value of `NVCC_PREPEND_FLAGS` or `NVCC_APPEND_FLAGS` as nvcc does.
pub fn env_flags(text: &[u8]) -> Vec<Vec<u8>> {
    let mut tokens = Vec::new();
    let mut current: Option<Vec<u8>> = None;
    let mut quoted = false;
    for &b in text {
        if b.is_ascii_whitespace() && !quoted {
            tokens.extend(current.take());
            continue;
        }
        if b == b'"' {
            quoted = !quoted;
        }
        current.get_or_insert_with(Vec::new).push(b);
    }
    tokens.extend(current);
    tokens
}

/// Split the contents of an nvcc options file as nvcc does.
pub fn options_file(text: &[u8]) -> Vec<Vec<u8>> {
    let mut tokens = Vec::new();
    let mut current: Option<Vec<u8>> = None;
    let mut quoted = false;
    let mut bytes = text.iter().copied().peekable();
    while let Some(b) = bytes.next() {
        match b {
            b'"' => {
                quoted = !quoted;
                // `""` is an empty argument, so the token exists even with no bytes in it.
                current.get_or_insert_with(Vec::new);
            }
            b'\\' => match bytes.peek() {
                Some(&next) if next.is_ascii_whitespace() => {
                    bytes.next();
                    current.get_or_insert_with(Vec::new).push(next);
                }
                Some(b'"') => {
                    bytes.next();
                }
                _ => {}
            },
            _ if b.is_ascii_whitespace() && !quoted => tokens.extend(current.take()),
            _ => current.get_or_insert_with(Vec::new).push(b),
        }
    }
    tokens.extend(current);
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(tokens: Vec<Vec<u8>>) -> Vec<String> {
        tokens.into_iter().map(|t| String::from_utf8(t).unwrap()).collect()
    }

    #[test]
    fn env_flags_keep_quotes_and_group_on_them() {
        let rows: &[(&str, &[&str])] = &[
            ("", &[]),
            ("   ", &[]),
            ("-ccbin g++", &["-ccbin", "g++"]),
            ("  -DX=1\t-DQ=2\n", &["-DX=1", "-DQ=2"]),
            (r#"-DX="a b""#, &[r#"-DX="a b""#]),
            (r#"-DX=a"b c"d -c"#, &[r#"-DX=a"b c"d"#, "-c"]),
            ("-DX='a b'", &["-DX='a", "b'"]),
            (r"-DX=a\ b", &[r"-DX=a\", "b"]),
        ];
        for (text, want) in rows {
            assert_eq!(strings(env_flags(text.as_bytes())), *want, "{text:?}");
        }
    }

    #[test]
    fn options_files_remove_quotes_and_escapes() {
        let rows: &[(&str, &[&str])] = &[
            ("", &[]),
            ("-c\n-o out.o\n", &["-c", "-o", "out.o"]),
            (r#"-DX="a b""#, &["-DX=a b"]),
            (r#"-DX=a"b c"d"#, &["-DX=ab cd"]),
            (r#""-DX=a b""#, &["-DX=a b"]),
            ("-DX='a b'", &["-DX='a", "b'"]),
            (r"-DX=a\ b", &["-DX=a b"]),
            (r"-DX=a\xb", &["-DX=axb"]),
            (r"-DX=a\\b", &["-DX=ab"]),
            // A quote after a backslash is dropped and groups nothing (issue 12: nvcc reads "-DB=\"p q\"" as one word).
            (r#""-DB=\"p q\"""#, &["-DB=p q"]),
            (r#"-DC=a\"b -DD=x\\y"#, &["-DC=ab", "-DD=xy"]),
            (r#"-DE=a\"b\"c "-DF=x\"y""#, &["-DE=abc", "-DF=xy"]),
            (r"-DH=a\\\ b", &["-DH=a b"]),
            ("-DX=1 # c", &["-DX=1", "#", "c"]),
            (r#"-o """#, &["-o", ""]),
        ];
        for (text, want) in rows {
            assert_eq!(strings(options_file(text.as_bytes())), *want, "{text:?}");
        }
    }

    #[test]
    fn bytes_that_are_not_utf8_survive() {
        assert_eq!(env_flags(b"-DX=\xff\xfe -c"), vec![b"-DX=\xff\xfe".to_vec(), b"-c".to_vec()]);
        assert_eq!(options_file(b"\"a \xff\""), vec![b"a \xff".to_vec()]);
    }
}
