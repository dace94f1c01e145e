//! Editing a dependency file as nvcc writes it (Make syntax: `target : dep \` continued over lines): the wrapper's
//! inputs are added to its first rule, so that the file still has one rule per target, which every reader takes
//! (Make, Ninja, Meson, CMake). Pure: `exec` reads and writes the file.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// `text` with `inputs` added as prerequisites at the end of its first rule; `None` when it holds no rule (then the
/// file is left as it is). A path is escaped as Make reads it: a space, `#` or `\` before one of them with a
/// backslash, `$` doubled.
pub fn add_inputs(text: &[u8], inputs: &[&Path]) -> Option<Vec<u8>> {
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
    // A rule that ends in a continuation and then the end of the file keeps its backslash-newline.
    let body_end = if end > 0 && text[end - 1] == b'\r' { end - 1 } else { end };
    let mut out = Vec::with_capacity(text.len() + 64 * inputs.len());
    out.extend_from_slice(&text[..body_end]);
    for input in inputs {
        out.extend_from_slice(b" \\\n  ");
        out.extend(escape(input));
    }
    out.extend_from_slice(&text[body_end..]);
    if end == text.len() && !out.ends_with(b"\n") {
        out.push(b'\n');
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

fn escape(path: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    for &b in path.as_os_str().as_bytes() {
        match b {
            b' ' | b'#' | b'\\' => {
                out.push(b'\\');
                out.push(b);
            }
            b'$' => out.extend_from_slice(b"$$"),
            _ => out.push(b),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add(text: &str, inputs: &[&str]) -> Option<String> {
        let paths: Vec<&Path> = inputs.iter().map(Path::new).collect();
        add_inputs(text.as_bytes(), &paths).map(|b| String::from_utf8(b).unwrap())
    }

    #[test]
    fn inputs_join_the_first_rule() {
        // As nvcc 11.8, 12.4 and 13.5 write it.
        let nvcc = "out/a.o : a.cu \\\n    /usr/include/stdc-predef.h \\\n    /usr/include/c++/12/cstdio\n";
        assert_eq!(
            add(nvcc, &["/etc/nvcc-wrapper.toml", "/usr/bin/g++-12"]).unwrap(),
            "out/a.o : a.cu \\\n    /usr/include/stdc-predef.h \\\n    /usr/include/c++/12/cstdio \\\n  /etc/nvcc-wrapper.toml \\\n  /usr/bin/g++-12\n"
        );
        // Phony targets after it (`-MP`) stay after it; a file without a final newline gets one.
        assert_eq!(add("a.o: a.cu b.h\nb.h:\n", &["/c"]).unwrap(), "a.o: a.cu b.h \\\n  /c\nb.h:\n");
        assert_eq!(add("a.o: a.cu", &["/c"]).unwrap(), "a.o: a.cu \\\n  /c\n");
        // A target with spaces (nvcc writes `-MT 'my tgt.o'` as given) keeps its spelling.
        assert_eq!(add("my tgt.o : a.cu\n", &["/c"]).unwrap(), "my tgt.o : a.cu \\\n  /c\n");
    }

    #[test]
    fn paths_are_escaped_as_make_reads_them() {
        assert_eq!(add("a.o: a.cu\n", &["/my dir/c#1$x.toml"]).unwrap(), "a.o: a.cu \\\n  /my\\ dir/c\\#1$$x.toml\n");
    }

    #[test]
    fn text_without_a_rule_is_left_alone() {
        assert_eq!(add("", &["/c"]), None);
        assert_eq!(add("# nothing here\n", &["/c"]), None);
    }
}
