//! Editing a dependency file as nvcc writes it (Make syntax: `target : dep \` continued over lines): the wrapper's
//! inputs are added to its first rule, so that the file still has one rule per target, which every reader takes
//! (Make, Ninja, Meson, CMake), and, when nvcc wrote a phony rule for every prerequisite (`-MP`), get theirs too, so
//! that a build whose config or compiler was removed does not stop on "No rule to make target". Pure: `exec` reads and
//! writes the file, and `plan` asks which paths can be written at all.
//!
//! A path is written so that GNU Make and Ninja both read back exactly its bytes (measured with GNU Make 4.3 and Ninja
//! 1.11.1 reading a file back for every byte, `tests/real/depfile.rs`): a space, `#` and `:` take a backslash before
//! them, `$` is doubled, and every other byte must be one both take as it is. Ninja ends a path at any other byte (a
//! quote, `&`, `;`, `*`, a control character ...), GNU Make takes `;` and `|` as syntax and `*`, `?`, `[` as a
//! pattern, and a backslash before a space, `#`, `:`, `$` or at the end reads back differently in one of them: such a
//! path cannot be written, and the planner leaves it out and says so.

use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Why a path cannot be written in a dependency file: its first byte (at `at`) that one of the readers would not
/// read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unwritable {
    pub byte: u8,
    pub at: usize,
}

impl fmt::Display for Unwritable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let byte = self.byte;
        let reader = if matches!(byte, b'|' | b'[') {
            "GNU Make"
        } else if byte == b'\\' {
            "GNU Make or Ninja"
        } else {
            "Ninja"
        };
        match byte {
            b'\\' => write!(f, "a backslash before a space, `#`, `:`, `$`, another backslash or the end"),
            0x20..=0x7e => write!(f, "`{}`, which {reader} would not read back", byte as char),
            _ => write!(f, "the byte 0x{byte:02x}, which {reader} would not read back"),
        }
    }
}

/// A byte both readers take as it is (Ninja's plain path bytes, less `[`, which GNU Make would take as a pattern).
fn plain(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"+,/_.~(){}%=@]!-".contains(&byte) || byte >= 0x80
}

/// The bytes to write for `path` in a dependency file, or why it cannot be written.
pub fn escape(path: &Path) -> Result<Vec<u8>, Unwritable> {
    let bytes = path.as_os_str().as_bytes();
    let mut out = Vec::with_capacity(bytes.len() + 8);
    for (at, &byte) in bytes.iter().enumerate() {
        match byte {
            b' ' | b'#' | b':' => out.extend_from_slice(&[b'\\', byte]),
            b'$' => out.extend_from_slice(b"$$"),
            b'\\' if bytes.get(at + 1).is_some_and(|&next| plain(next)) => out.push(byte),
            _ if plain(byte) => out.push(byte),
            _ => return Err(Unwritable { byte, at }),
        }
    }
    Ok(out)
}

/// `text` with `inputs` added as prerequisites at the end of its first rule and, with `phony`, a phony rule for each
/// at the end, as nvcc writes them for `-MP`; `None` when it holds no rule (then the file is left as it is). Every
/// input must be writable (`escape`): one that is not is left out.
pub fn add_inputs<P: AsRef<Path>>(text: &[u8], inputs: &[P], phony: bool) -> Option<Vec<u8>> {
    let colon = rule_colon(text)?;
    // The end of the first rule: its first newline that no backslash continues.
    let mut end = text.len();
    let mut i = colon;
    while i < text.len() {
        if text[i] == b'\n' && !(i > 0 && text[i - 1] == b'\\') {
            end = i;
            break;
        }
        i += 1;
    }
    let written: Vec<Vec<u8>> = inputs.iter().filter_map(|p| escape(p.as_ref()).ok()).collect();
    // A rule that ends in a continuation and then the end of the file keeps its backslash-newline.
    let body_end = if end > 0 && text[end - 1] == b'\r' { end - 1 } else { end };
    let mut out = Vec::with_capacity(text.len() + 80 * written.len());
    out.extend_from_slice(&text[..body_end]);
    for path in &written {
        out.extend_from_slice(b" \\\n  ");
        out.extend_from_slice(path);
    }
    out.extend_from_slice(&text[body_end..]);
    if !out.ends_with(b"\n") {
        out.push(b'\n');
    }
    if phony {
        for path in &written {
            out.push(b'\n');
            out.extend_from_slice(path);
            out.extend_from_slice(b":\n");
        }
    }
    Some(out)
}

/// Where the first rule's targets end: the first `:` that is not part of a target name (it is followed by space, a
/// newline or the end, or by nothing that a path on Linux puts there).
fn rule_colon(text: &[u8]) -> Option<usize> {
    let mut escaped = false;
    for (i, &b) in text.iter().enumerate() {
        match b {
            b'\\' => escaped = !escaped,
            b':' if !escaped => {
                let next = text.get(i + 1).copied();
                if matches!(next, None | Some(b' ' | b'\t' | b'\n' | b'\r')) {
                    return Some(i);
                }
            }
            b'\n' if !escaped => {
                // A line with no colon before its end is no rule: a comment or something else.
                if !text[..i].contains(&b':') {
                    return None;
                }
            }
            _ => escaped = false,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add(text: &str, inputs: &[&str], phony: bool) -> Option<String> {
        add_inputs(text.as_bytes(), inputs, phony).map(|b| String::from_utf8(b).unwrap())
    }

    #[test]
    fn inputs_join_the_first_rule() {
        // As nvcc 11.8, 12.4 and 13.5 write it.
        let nvcc = "out/a.o : a.cu \\\n    /usr/include/stdc-predef.h \\\n    /usr/include/c++/12/cstdio\n";
        assert_eq!(
            add(nvcc, &["/etc/nvcc-wrapper.toml", "/usr/bin/g++-12"], false).unwrap(),
            "out/a.o : a.cu \\\n    /usr/include/stdc-predef.h \\\n    /usr/include/c++/12/cstdio \\\n  /etc/nvcc-wrapper.toml \\\n  /usr/bin/g++-12\n"
        );
        // Phony targets after it (`-MP`) stay after it; a file without a final newline gets one.
        assert_eq!(add("a.o: a.cu b.h\nb.h:\n", &["/c"], false).unwrap(), "a.o: a.cu b.h \\\n  /c\nb.h:\n");
        assert_eq!(add("a.o: a.cu", &["/c"], false).unwrap(), "a.o: a.cu \\\n  /c\n");
        // A target with spaces (nvcc writes `-MT 'my tgt.o'` as given) keeps its spelling.
        assert_eq!(add("my tgt.o : a.cu\n", &["/c"], false).unwrap(), "my tgt.o : a.cu \\\n  /c\n");
    }

    #[test]
    fn with_phony_rules_each_input_gets_one_too() {
        // As nvcc 13.5 writes `-MD -MP`: a blank line before each phony rule.
        let nvcc = "k.o : k.cu \\\n    /usr/include/a.h\n\n/usr/include/a.h:\n";
        assert_eq!(
            add(nvcc, &["/etc/c.toml", "/my dir/g++"], true).unwrap(),
            "k.o : k.cu \\\n    /usr/include/a.h \\\n  /etc/c.toml \\\n  /my\\ dir/g++\n\n/usr/include/a.h:\n\n/etc/c.toml:\n\n/my\\ dir/g++:\n"
        );
    }

    #[test]
    fn paths_are_escaped_as_both_readers_read_them() {
        assert_eq!(
            add("a.o: a.cu\n", &["/my dir/c#1$x:y\\z.toml"], false).unwrap(),
            "a.o: a.cu \\\n  /my\\ dir/c\\#1$$x\\:y\\z.toml\n"
        );
        assert_eq!(
            escape(Path::new("/nix/store/abc-gcc-12.2.0/bin/g++")).unwrap(),
            b"/nix/store/abc-gcc-12.2.0/bin/g++"
        );
        let non_utf8 = std::ffi::OsStr::from_bytes(b"/d\xff/c");
        assert_eq!(escape(Path::new(non_utf8)).unwrap(), b"/d\xff/c");
    }

    #[test]
    fn a_path_one_reader_cannot_read_back_is_unwritable_and_left_out() {
        for (path, byte, at) in [
            ("/home/o'brien/c.toml", b'\'', 7),
            ("/a;b", b';', 2),
            ("/a|b", b'|', 2),
            ("/a*b", b'*', 2),
            ("/a[x]b", b'[', 2),
            ("/a\tb", b'\t', 2),
            ("/a\nb", b'\n', 2),
            ("/a\\ b", b'\\', 2),
            ("/a\\", b'\\', 2),
        ] {
            assert_eq!(escape(Path::new(path)), Err(Unwritable { byte, at }), "{path:?}");
        }
        assert_eq!(
            add("a.o: a.cu\n", &["/home/o'brien/c.toml", "/usr/bin/g++"], false).unwrap(),
            "a.o: a.cu \\\n  /usr/bin/g++\n"
        );
        assert_eq!(Unwritable { byte: b'\'', at: 7 }.to_string(), "`'`, which Ninja would not read back");
    }

    #[test]
    fn text_without_a_rule_is_left_alone() {
        assert_eq!(add("", &["/c"], false), None);
        assert_eq!(add("# nothing here\n", &["/c"], false), None);
    }
}
