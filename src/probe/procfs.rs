//! The one reader of a `/proc/PID/stat` line, for the probes' watch of a program's work and for the keeper's view
//! of nvcc's processes (`exec::procfs`): the command name, in parentheses, may hold anything, spaces and `)`
//! included, so the fields are read after the last `)`.

/// The fields of a `/proc/PID/stat` line after the command name: the state (field 3), the parent, the group ...
pub fn fields_of(stat: &[u8]) -> Option<std::str::SplitAsciiWhitespace<'_>> {
    let after = &stat[stat.iter().rposition(|&b| b == b')')? + 1..];
    Some(std::str::from_utf8(after).ok()?.split_ascii_whitespace())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fields_start_after_the_last_parenthesis() {
        fn fields(line: &str) -> Option<Vec<&str>> {
            fields_of(line.as_bytes()).map(|f| f.collect())
        }
        assert_eq!(fields("4242 (we(ird) n) S 1 2"), Some(vec!["S", "1", "2"]));
        assert_eq!(fields("4242 (sh)"), Some(vec![]));
        assert_eq!(fields("4242 sh S 1"), None);
    }
}
