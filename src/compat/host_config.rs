//! Reads the newest GCC and Clang majors a real NVIDIA `include/crt/host_config.h` accepts, so the host-compiler
//! table can be checked against the toolkit in hand. Owns only the reading of the header's text; it does not
//! find the header, and it never trusts the `#error` messages: from 12.2.1 through 12.3 they say "less than 16"
//! while the `#if` above them already accepts Clang 16.
//!
//! What it reads: inside `#if !__NV_NO_HOST_COMPILER_CHECK`, every `#error` and the chain of `#if`s around it.
//! The plain GCC check is a guard comparing `__GNUC__` under no other positive `defined(...)` than `__GNUC__`;
//! the plain Clang check compares `__clang_major__` under `defined(__clang__)` (and `__GNUC__`) only. That rule
//! skips the look-alike checks NVIDIA added over the releases: Grace Clang (`defined(__GRCO_CLANG_COMPILER__)`,
//! 12.2.1+), HOS Clang (`defined(__HORIZON__)`, 12.4+, whose bound differs from plain Clang's in 13.4), xlC and
//! ICC.

use std::fmt;

use super::{Accepts, CompilerFamily as Compiler};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScanError {
    /// No `#if !__NV_NO_HOST_COMPILER_CHECK` block: not a host_config.h, or a shape this scanner does not know.
    NoCheckBlock,
    /// An `#else`/`#elif`/`#endif` without its `#if`, or an `#if` never closed (1-based line).
    Unbalanced { line: usize },
    /// The check block has no version guard for this compiler.
    Missing(Compiler),
    /// Two plain guards for the same compiler disagree: (newest accepted, line) of each.
    Conflict { compiler: Compiler, first: (u32, usize), second: (u32, usize) },
}

impl fmt::Display for ScanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScanError::NoCheckBlock => {
                f.write_str("no `#if !__NV_NO_HOST_COMPILER_CHECK` block: is this crt/host_config.h?")
            }
            ScanError::Unbalanced { line } => write!(f, "unbalanced #if/#endif at line {line}"),
            ScanError::Missing(compiler) => {
                write!(f, "no {} version check inside the host-compiler check block", compiler.name())
            }
            ScanError::Conflict { compiler, first, second } => write!(
                f,
                "{} checks disagree: newest {} at line {}, newest {} at line {}",
                compiler.name(),
                first.0,
                first.1,
                second.0,
                second.1
            ),
        }
    }
}

impl std::error::Error for ScanError {}

/// One open conditional: its condition text, the line it opened on, and whether we are in its `#else` branch.
struct Frame {
    condition: String,
    line: usize,
    in_else: bool,
}

/// The newest GCC and Clang majors the text of a `crt/host_config.h` accepts, read from its `#if` guards.
pub fn scan(header_text: &str) -> Result<Accepts, ScanError> {
    let mut stack: Vec<Frame> = Vec::new();
    let mut saw_check_block = false;
    // Each family's newest major, and the line it was read on.
    let mut found: Vec<(Compiler, (u32, usize))> = Vec::new();

    for (line, text) in logical_lines(header_text) {
        let Some(directive) = text.trim_start().strip_prefix('#') else {
            continue;
        };
        let directive = directive.trim_start();
        let (keyword, rest) = directive.split_once(char::is_whitespace).unwrap_or((directive, ""));
        let rest = rest.trim();
        let unbalanced = ScanError::Unbalanced { line };
        match keyword {
            "if" | "ifdef" | "ifndef" => {
                let condition = match keyword {
                    "ifdef" => format!("defined({rest})"),
                    "ifndef" => format!("!defined({rest})"),
                    _ => rest.to_string(),
                };
                saw_check_block |= is_check_block(&condition);
                stack.push(Frame { condition, line, in_else: false });
            }
            // An `#elif` is read as its own condition; none of NVIDIA's version errors sit under one.
            "elif" => stack.last_mut().ok_or(unbalanced)?.condition = rest.to_string(),
            "else" => stack.last_mut().ok_or(unbalanced)?.in_else = true,
            "endif" => {
                stack.pop().ok_or(unbalanced)?;
            }
            "error" => {
                let Some(start) = stack.iter().position(|f| is_check_block(&f.condition) && !f.in_else) else {
                    continue;
                };
                let Some((compiler, newest)) = classify(&stack[start + 1..]) else {
                    continue;
                };
                match found.iter().find(|(c, _)| *c == compiler) {
                    Some(&(_, first)) if first.0 != newest => {
                        return Err(ScanError::Conflict { compiler, first, second: (newest, line) });
                    }
                    Some(_) => {}
                    None => found.push((compiler, (newest, line))),
                }
            }
            _ => {}
        }
    }
    if let Some(open) = stack.first() {
        return Err(ScanError::Unbalanced { line: open.line });
    }
    if !saw_check_block {
        return Err(ScanError::NoCheckBlock);
    }
    // GCC's and Clang's checks are in every header; a family whose check a header has not is accepted in no version.
    let mut accepts = Accepts::NONE;
    for required in [Compiler::Gcc, Compiler::Clang] {
        if !found.iter().any(|(c, _)| *c == required) {
            return Err(ScanError::Missing(required));
        }
    }
    for (compiler, (newest, _)) in found {
        accepts.set(compiler, newest);
    }
    Ok(accepts)
}

fn is_check_block(condition: &str) -> bool {
    let squeezed: String = condition.chars().filter(|c| !c.is_whitespace()).collect();
    matches!(squeezed.as_str(), "!__NV_NO_HOST_COMPILER_CHECK" | "!defined(__NV_NO_HOST_COMPILER_CHECK)")
}

/// Which plain compiler check an `#error` under `frames` (outermost first, inside the check block) is, and the
/// newest major it accepts. `None` for every other error in the block.
fn classify(frames: &[Frame]) -> Option<(Compiler, u32)> {
    let guard = frames.last()?;
    if frames.iter().any(|f| f.in_else) {
        return None;
    }
    let mut positive = Vec::new();
    for frame in frames {
        positive.extend(positive_defines(&tokens(&frame.condition)));
    }
    let guard_tokens = tokens(&guard.condition);
    // A guard that also compares anything else (`__GRCO_CLANG_COMPILER__ == 1`, `__ICC`) is not the plain check.
    let plain = guard_tokens.iter().all(|t| match t {
        Token::Ident(name) => {
            matches!(name.as_str(), "__GNUC__" | "__clang_major__" | "__clang_minor__" | "defined")
                || is_defined_operand(&guard_tokens, name)
        }
        _ => true,
    });
    if !plain {
        return None;
    }
    let only = |allowed: &[&str]| positive.iter().all(|name| allowed.contains(&name.as_str()));
    if let Some(newest) = newest_accepted(&guard_tokens, Compiler::Gcc.def().version_macro) {
        if only(&["__GNUC__"]) {
            return Some((Compiler::Gcc, newest));
        }
    }
    if let Some(newest) = newest_accepted(&guard_tokens, Compiler::Clang.def().version_macro) {
        if only(&["__GNUC__", "__clang__"]) && positive.iter().any(|name| name == "__clang__") {
            return Some((Compiler::Clang, newest));
        }
    }
    None
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    Number(u64),
    Punct(String),
}

fn tokens(condition: &str) -> Vec<Token> {
    let chars: Vec<char> = condition.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_alphabetic() || c == '_' {
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Token::Ident(chars[start..i].iter().collect()));
        } else if c.is_ascii_digit() {
            while i < chars.len() && chars[i].is_ascii_alphanumeric() {
                i += 1;
            }
            let text: String = chars[start..i].iter().collect();
            let text = text.trim_end_matches(['u', 'U', 'l', 'L']);
            let value = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
                Some(hex) => u64::from_str_radix(hex, 16).ok(),
                None => text.parse().ok(),
            };
            out.push(value.map_or_else(|| Token::Punct(text.to_string()), Token::Number));
        } else {
            let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
            let op = if matches!(two.as_str(), ">=" | "<=" | "==" | "!=" | "&&" | "||") { two } else { c.to_string() };
            i += op.chars().count();
            out.push(Token::Punct(op));
        }
    }
    out
}

/// The macros a condition requires to be defined: `defined(X)` / `defined X` not directly negated by `!`.
fn positive_defines(tokens: &[Token]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, token) in tokens.iter().enumerate() {
        if *token != Token::Ident("defined".into()) {
            continue;
        }
        let negated = i > 0 && tokens[i - 1] == Token::Punct("!".into());
        let operand = match tokens.get(i + 1) {
            Some(Token::Punct(p)) if p == "(" => tokens.get(i + 2),
            other => other,
        };
        if let (false, Some(Token::Ident(name))) = (negated, operand) {
            out.push(name.clone());
        }
    }
    out
}

fn is_defined_operand(tokens: &[Token], name: &str) -> bool {
    tokens.windows(3).any(|w| {
        w[0] == Token::Ident("defined".into())
            && (w[1] == Token::Ident(name.into())
                || (w[1] == Token::Punct("(".into()) && w[2] == Token::Ident(name.into())))
    })
}

/// The newest `macro` value an error guard lets through: `M > 11` accepts 11, `M >= 15` accepts 14, and the
/// reversed forms likewise. Lower bounds (`M < 3`) and equalities are ignored. The smallest upper bound wins.
fn newest_accepted(tokens: &[Token], macro_name: &str) -> Option<u32> {
    let is_macro = |t: &Token| *t == Token::Ident(macro_name.into());
    let mut newest: Option<u64> = None;
    for w in tokens.windows(3) {
        let bound = match (&w[0], &w[1], &w[2]) {
            (m, Token::Punct(op), Token::Number(n)) if is_macro(m) => match op.as_str() {
                ">" => Some(*n),
                ">=" => n.checked_sub(1),
                _ => None,
            },
            (Token::Number(n), Token::Punct(op), m) if is_macro(m) => match op.as_str() {
                "<" => Some(*n),
                "<=" => n.checked_sub(1),
                _ => None,
            },
            _ => None,
        };
        if let Some(bound) = bound {
            newest = Some(newest.map_or(bound, |old| old.min(bound)));
        }
    }
    newest.and_then(|n| u32::try_from(n).ok())
}

/// The header as (first line number, text) per logical line: comments blanked (they may span lines, as the
/// `#endif` after the xlC check does) and backslash continuations joined.
fn logical_lines(text: &str) -> Vec<(usize, String)> {
    let mut cleaned = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_comment = false;
    while let Some(c) = chars.next() {
        if in_comment {
            if c == '*' && chars.peek() == Some(&'/') {
                chars.next();
                in_comment = false;
                cleaned.push(' ');
            } else if c == '\n' {
                cleaned.push('\n');
            }
        } else if c == '/' && chars.peek() == Some(&'*') {
            chars.next();
            in_comment = true;
        } else {
            cleaned.push(c);
        }
    }

    let mut out: Vec<(usize, String)> = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for (index, raw) in cleaned.lines().enumerate() {
        let (start, mut joined) = pending.take().unwrap_or((index + 1, String::new()));
        // `//` comments only matter on directive lines; cutting them there is enough.
        let raw = if raw.trim_start().starts_with('#') { raw.split("//").next().unwrap_or(raw) } else { raw };
        match raw.strip_suffix('\\') {
            Some(body) => {
                joined.push_str(body);
                joined.push(' ');
                pending = Some((start, joined));
            }
            None => {
                joined.push_str(raw);
                out.push((start, joined));
            }
        }
    }
    out.extend(pending);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of 11.7 to 12.2.0: one GCC and one Clang check, no HOS or Grace blocks.
    const SHAPE_11_8: &str = r#"
#if defined(__CUDACC__)
/* check host compiler version  */
#if !__NV_NO_HOST_COMPILER_CHECK

#if defined(__ICC)
#if (__ICC != 1500 && !(__ICC >= 1900 && __ICC <= 2021)) || !defined(__GNUC__) || !defined(__LP64__)
#error -- unsupported ICC configuration! Only ICC 15.0 on Linux x86_64 are supported!
#endif /* (__ICC != 1500) || !__GNUC__ */
#endif /* __ICC */

#if defined(__powerpc__)
#if defined(__ibmxl_vrm__) && !(__ibmxl_vrm__ >= 0x0d010000 && __ibmxl_vrm__ < 0x0d020000) && \
                              !(__ibmxl_vrm__ >= 0x10010000 && __ibmxl_vrm__ < 0x10020000)
#error -- unsupported xlC version! only xlC 13.1 and 16.1 are supported.
#endif /* __ibmxl_vrm__ && !(__ibmxl_vrm__ >= 0x0d010000 && __ibmxl_vrm__ < 0x0d020000) &&
                           !(__ibmxl_vrm__ >= 0x10010000 && __ibmxl_vrm__ < 0x10020000) */
#endif /* __powerpc__ */

#if defined(__GNUC__)

#if __GNUC__ > 11
#error -- unsupported GNU version! gcc versions later than 11 are not supported!
#endif /* __GNUC__ > 11 */

#if defined(__clang__) && !defined(__ibmxl_vrm__) && !defined(__ICC) && !defined(__HORIZON__) && !defined(__APPLE__)
#if (__clang_major__ >= 15) || (__clang_major__ < 3) || ((__clang_major__ == 3) &&  (__clang_minor__ < 3))
#error -- unsupported clang version! clang version must be less than 15 and greater than 3.2 .
#endif  /* (__clang_major__ >=  15) || (__clang_major__ < 3) */
#endif /* defined(__clang__) */

#endif /* __GNUC__ */

#if defined(_WIN32)
#if _MSC_VER < 1910 || _MSC_VER >= 1940
#error -- unsupported Microsoft Visual Studio version!
#elif _MSC_VER >= 1910 && _MSC_VER < 1910
#pragma message("support for this version of Microsoft Visual Studio has been deprecated!")
#endif /* _WIN32 version */
#endif /* _WIN32 */
#endif  /* !__NV_NO_HOST_COMPILER_CHECK */
#endif /* __CUDACC__ */
"#;

    /// The shape of 12.4 to 13.5: Grace Clang and HOS Clang checks beside the plain one. In 13.4 the HOS bound
    /// (>= 22) is lower than plain Clang's (>= 23), so reading the wrong block gives the wrong answer.
    const SHAPE_13_4: &str = r#"
#if !__NV_NO_HOST_COMPILER_CHECK

#if defined(__GRCO_CLANG_COMPILER__)
#if (__GRCO_CLANG_COMPILER__ == 1) && ((__clang_major__ < 16) || (__clang_major__ > 22))
#error -- unsupported Grace clang version! The version must be 16.x to 22.x.
#endif  /* (__GRCO_CLANG_COMPILER__ == 1) */
#endif /* __GRCO_CLANG_COMPILER__  */

#if defined(__INTEL_CLANG_COMPILER)
#error -- unsupported Intel ICX compiler!
#endif /* __INTEL_CLANG_COMPILER */

#if defined(__GNUC__)
#if __GNUC__ > 16
#error -- unsupported GNU version! gcc versions later than 16 are not supported!
#endif /* __GNUC__ > 16 */

#if defined(__HORIZON__)
#if (__clang_major__ >= 22) || (__clang_major__ < 3) || ((__clang_major__ == 3) &&  (__clang_minor__ < 3))
#error -- unsupported HOS clang version! The version must be must be less than 22 and greater than 3.2 .
#endif
#endif /* __HORIZON__  */

#if defined(__clang__) && !defined(__ibmxl_vrm__) && !defined(__ICC) && !defined(__HORIZON__) && !defined(__APPLE__) && !defined(__GRCO_CLANG_COMPILER__)
#if (__clang_major__ >= 23) || (__clang_major__ < 3) || ((__clang_major__ == 3) &&  (__clang_minor__ < 3))
#error -- unsupported clang version! clang version must be less than 23 and greater than 3.2 .
#endif
#endif
#endif /* __GNUC__ */
#endif  /* !__NV_NO_HOST_COMPILER_CHECK */
"#;

    #[test]
    fn reads_the_11_8_shape() {
        assert_eq!(scan(SHAPE_11_8), Ok(Accepts::of(11, 14)));
    }

    #[test]
    fn skips_hos_and_grace_clang_checks() {
        assert_eq!(scan(SHAPE_13_4), Ok(Accepts::of(16, 22)));
        // With the plain Clang block gone, the look-alikes must not stand in for it.
        let start = SHAPE_13_4.find("#if defined(__clang__)").unwrap();
        let end = SHAPE_13_4.find("#endif /* __GNUC__ */").unwrap();
        let without = format!("{}{}", &SHAPE_13_4[..start], &SHAPE_13_4[end..]);
        assert_eq!(scan(&without), Err(ScanError::Missing(Compiler::Clang)));
    }

    #[test]
    fn trusts_the_if_not_the_stale_error_text() {
        // 12.2.1 to 12.3: the text says "less than 16", the condition accepts 16.
        let header = SHAPE_11_8
            .replace("(__clang_major__ >= 15)", "(__clang_major__ >= 17)")
            .replace("__GNUC__ > 11", "__GNUC__ > 12");
        assert_eq!(scan(&header), Ok(Accepts::of(12, 16)));
    }

    #[test]
    fn reads_each_comparison_form() {
        let header = |gcc: &str, clang: &str| {
            format!(
                "#if !__NV_NO_HOST_COMPILER_CHECK\n#ifdef __GNUC__\n#if {gcc}\n#error g\n#endif\n#if defined __clang__\n#if {clang}\n#error c\n#endif\n#endif\n#endif\n#endif\n"
            )
        };
        let limits = |g, c| Ok(Accepts::of(g, c));
        assert_eq!(scan(&header("__GNUC__ >= 12", "__clang_major__ > 19")), limits(11, 19));
        assert_eq!(scan(&header("13 < __GNUC__", "20 <= __clang_major__")), limits(13, 19));
    }

    #[test]
    fn ignores_checks_outside_the_check_block() {
        let outside = "#if __GNUC__ > 11\n#error g\n#endif\n#if defined(__clang__)\n#if __clang_major__ >= 15\n#error c\n#endif\n#endif\n";
        assert_eq!(scan(outside), Err(ScanError::NoCheckBlock));
        // `-allow-unsupported-compiler` takes the #else branch: errors there are not the check.
        let in_else = format!("#if !__NV_NO_HOST_COMPILER_CHECK\n#else\n{outside}#endif\n");
        assert_eq!(scan(&in_else), Err(ScanError::Missing(Compiler::Gcc)));
    }

    #[test]
    fn reports_unbalanced_conditionals_with_a_line() {
        let unclosed = SHAPE_11_8.replacen("#endif /* __GNUC__ */", "", 1);
        assert_eq!(scan(&unclosed), Err(ScanError::Unbalanced { line: 2 }));
        assert_eq!(scan("#endif\n"), Err(ScanError::Unbalanced { line: 1 }));
    }

    #[test]
    fn reports_disagreeing_checks() {
        let twice = SHAPE_11_8.replace(
            "#endif /* __GNUC__ > 11 */",
            "#endif /* __GNUC__ > 11 */\n#if __GNUC__ > 12\n#error again\n#endif",
        );
        let err = scan(&twice).unwrap_err();
        assert!(
            matches!(err, ScanError::Conflict { compiler: Compiler::Gcc, first: (11, _), second: (12, _) }),
            "{err}"
        );
    }

    #[test]
    fn missing_gcc_check() {
        let header = SHAPE_11_8.replace("#if __GNUC__ > 11", "#if 0");
        assert_eq!(scan(&header), Err(ScanError::Missing(Compiler::Gcc)));
    }
}
