//! The answers as the file Nix reads them: pretty JSON, each array of scalars on one line.

use super::answers;
use crate::compat::Compat;

/// The file Nix reads, makeNvccWrapper's answers.json, for these tables: what `nvcc-wrapper compat nix-answers` prints and what
/// `cargo test --lib reference` compares the file with, so that a packaged binary can check the file it is packaged
/// with (`passthru.tests.answers` of the Nix package).
pub fn render(compat: &Compat) -> String {
    inline_scalar_arrays(&serde_json::to_string_pretty(&answers(compat)).expect("the answers are JSON")) + "\n"
}

/// Pretty JSON with each array of strings or numbers on one line (`["8.6", "9.0"]`): a third of the lines.
fn inline_scalar_arrays(pretty: &str) -> String {
    let mut out = String::with_capacity(pretty.len());
    let mut lines = pretty.lines().peekable();
    while let Some(line) = lines.next() {
        if line.ends_with('[') {
            let mut items = Vec::new();
            while let Some(next) = lines.peek() {
                let item = next.trim().trim_end_matches(',');
                if item.starts_with(['[', '{', ']']) {
                    break;
                }
                items.push(item.to_string());
                lines.next();
            }
            if lines.peek().is_some_and(|l| l.trim_start().starts_with(']')) {
                let close = lines.next().unwrap().trim_start();
                out += &format!("{}{}{close}\n", line, items.join(", "));
                continue;
            }
            // Not an array of scalars: as it was.
            out += line;
            out.push('\n');
            for item in items {
                out += &format!("{item}\n");
            }
            continue;
        }
        out += line;
        out.push('\n');
    }
    out.trim_end().to_string()
}
