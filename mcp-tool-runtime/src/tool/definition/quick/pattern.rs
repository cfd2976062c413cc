//! `pattern` (and the `regex` format): a regular expression of ECMA-262, as JSON Schema
//! defines it, run by `regex-lite`, which runs in time linear in the string whatever the
//! pattern. ECMA's syntax is turned into the crate's where the two differ: `.` does not match
//! a line terminator, `\s` is ECMA's whitespace (Unicode spaces with it), `\cX` is a control
//! character, `\0` is NUL, `\b` in a class is a backspace, a letter escaped that ECMA gives no
//! meaning is the letter, `[^]` is any character and `[` in a class is a `[`. `\d`, `\w` and
//! `\b` are ASCII in both. What the crate cannot run (look-around, back-references, a `\S` in a
//! class, an empty class) is [`Unsupported`]: the full validator's.

use std::fmt;

use regex_lite::Regex;

type Chars<'a> = std::iter::Peekable<std::str::Chars<'a>>;

/// A compiled pattern, and the text the schema gave.
pub(crate) struct Pattern {
    regex: Regex,
    source: String,
}

/// Why a pattern is not run here: the syntax ECMA-262 has that the crate does not, or text
/// that is no pattern at all.
#[derive(Debug)]
pub(crate) struct Unsupported(String);

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// ECMA-262's white space and line terminators, as members of a class.
const WHITE_SPACE: &str = r"\t\n\x0B\x0C\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";

/// The longest pattern compiled, in bytes.
const MAX_SOURCE: usize = 16 * 1024;

impl Pattern {
    /// Compiles the ECMA-262 pattern `source`.
    pub(crate) fn compile(source: &str) -> Result<Pattern, Unsupported> {
        if source.len() > MAX_SOURCE {
            return Err(Unsupported(format!(
                "a pattern longer than {MAX_SOURCE} bytes"
            )));
        }
        let translated = translate(source)?;
        let regex = regex_lite::RegexBuilder::new(&translated)
            .size_limit(1 << 20)
            .build()
            .map_err(|e| Unsupported(e.to_string()))?;
        Ok(Pattern {
            regex,
            source: source.to_owned(),
        })
    }

    /// Whether `s` has a match anywhere in it (JSON Schema's patterns are not anchored).
    pub(crate) fn is_match(&self, s: &str) -> bool {
        self.regex.is_match(s)
    }

    /// The pattern as the schema wrote it.
    pub(crate) fn source(&self) -> &str {
        &self.source
    }
}

/// ECMA-262's syntax in the crate's.
fn translate(source: &str) -> Result<String, Unsupported> {
    let unsupported = |what: &str| Err(Unsupported(what.to_owned()));
    let mut out = String::with_capacity(source.len() + 16);
    let mut chars = source.chars().peekable();
    let mut in_class = false;
    // Whether the class just opened (after `[` or `[^`): ECMA's `]` there closes it.
    let mut class_start = false;
    while let Some(c) = chars.next() {
        let starting = std::mem::take(&mut class_start);
        match c {
            '\\' => {
                let Some(e) = chars.next() else {
                    return unsupported("a pattern that ends in `\\`");
                };
                match e {
                    'd' | 'D' | 'w' | 'W' | 'f' | 'n' | 'r' | 't' | 'v' => {
                        out.push('\\');
                        out.push(e);
                    }
                    'b' | 'B' if !in_class => {
                        out.push('\\');
                        out.push(e);
                    }
                    'b' => out.push_str(r"\x08"),
                    's' if in_class => out.push_str(WHITE_SPACE),
                    's' => {
                        out.push('[');
                        out.push_str(WHITE_SPACE);
                        out.push(']');
                    }
                    'S' if in_class => return unsupported("`\\S` in a class"),
                    'S' => {
                        out.push_str("[^");
                        out.push_str(WHITE_SPACE);
                        out.push(']');
                    }
                    'c' => match chars.next() {
                        Some(letter) if letter.is_ascii_alphabetic() => {
                            push_code(&mut out, u32::from(letter) % 32);
                        }
                        _ => return unsupported("`\\c` without a letter"),
                    },
                    '0' if !chars.peek().is_some_and(char::is_ascii_digit) => {
                        out.push_str(r"\x00");
                    }
                    '0'..='9' | 'k' => return unsupported("a back-reference"),
                    'x' => {
                        let hex = take_hex(&mut chars, 2)
                            .ok_or_else(|| Unsupported("`\\x` without two hex digits".into()))?;
                        push_code(&mut out, hex);
                    }
                    'u' => {
                        let four = |chars: &mut Chars<'_>| {
                            take_hex(chars, 4)
                                .ok_or_else(|| Unsupported("`\\u` without four hex digits".into()))
                        };
                        let mut code = four(&mut chars)?;
                        // A pair of UTF-16 surrogates is the one character they encode.
                        if (0xD800..0xDC00).contains(&code) {
                            let mut ahead = chars.clone();
                            if ahead.next() == Some('\\') && ahead.next() == Some('u') {
                                let low = four(&mut ahead)?;
                                if (0xDC00..0xE000).contains(&low) {
                                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                                    chars = ahead;
                                }
                            }
                        }
                        push_code(&mut out, code);
                    }
                    // Any other letter escaped is the letter itself.
                    letter if letter.is_ascii_alphabetic() => out.push(letter),
                    other => push_literal(&mut out, other),
                }
            }
            '[' if in_class => out.push_str(r"\["),
            '[' => {
                in_class = true;
                class_start = true;
                out.push('[');
                if chars.peek() == Some(&'^') {
                    chars.next();
                    if chars.peek() == Some(&']') {
                        chars.next();
                        // `[^]`: any character.
                        out.push_str(r"\x{0}-\x{10FFFF}]");
                        in_class = false;
                        class_start = false;
                        continue;
                    }
                    out.push('^');
                }
            }
            ']' if in_class && starting => return unsupported("an empty class `[]`"),
            ']' if in_class => {
                in_class = false;
                out.push(']');
            }
            '&' | '~' if in_class => {
                out.push('\\');
                out.push(c);
            }
            '.' if !in_class => out.push_str(r"[^\n\r\x{2028}\x{2029}]"),
            other => out.push(other),
        }
    }
    Ok(out)
}

/// `count` hexadecimal digits, as a number.
fn take_hex(chars: &mut Chars<'_>, count: usize) -> Option<u32> {
    let mut n = 0;
    for _ in 0..count {
        n = n * 16 + chars.next()?.to_digit(16)?;
    }
    Some(n)
}

/// The character numbered `code`, escaped.
fn push_code(out: &mut String, code: u32) {
    use std::fmt::Write as _;
    let _ = write!(out, r"\x{{{code:X}}}");
}

/// `c` as itself: escaped when the crate would read it as syntax.
fn push_literal(out: &mut String, c: char) {
    if c.is_ascii_punctuation() {
        out.push('\\');
    }
    out.push(c);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, s: &str) -> bool {
        Pattern::compile(pattern).unwrap().is_match(s)
    }

    #[test]
    fn ecma_syntax_runs_as_ecma_defines_it() {
        assert!(matches("^[a-z]+$", "abc"));
        assert!(!matches("^[a-z]+$", "abC"));
        // Not anchored unless it says so.
        assert!(matches("b", "abc"));
        // `\d` and `\w` are ASCII.
        assert!(!matches(r"^\d$", "٣"));
        assert!(!matches(r"^\w$", "é"));
        // `\s` has Unicode's spaces, `\S` does not.
        assert!(matches(r"^\s$", "\u{A0}"));
        assert!(matches(r"^\s$", "\u{FEFF}"));
        assert!(!matches(r"^\S$", "\u{3000}"));
        assert!(matches(r"^[\s,]+$", " ,\u{2003}"));
        // `.` stops at every line terminator.
        assert!(!matches("^.$", "\r"));
        assert!(!matches("^.$", "\u{2028}"));
        assert!(matches("^.$", "é"));
        // Escapes.
        assert!(matches(r"^\cJ$", "\n"));
        assert!(matches(r"^\0$", "\0"));
        assert!(matches(r"^[\b]$", "\u{8}"));
        assert!(matches(r"^\x41\u00e9$", "Aé"));
        assert!(matches(r"^\uD83D\uDE00$", "\u{1F600}"));
        assert!(matches(r"^\/\-\e$", "/-e"));
        assert!(matches(r"^[^]$", "\n"));
        assert!(matches(r"^[[]$", "["));
        assert!(matches(r"^[a&&b]+$", "a&b"));
        assert!(matches(r"^(?<word>a|b)c$", "bc"));
        assert!(matches(r"\bfoo\b", "a foo b"));
    }

    #[test]
    fn what_the_crate_cannot_run_is_unsupported() {
        for pattern in [
            "(?=a)", "(?!a)", "(?<=a)", r"(a)\1", r"\k<x>", r"[\S]", "[]", "(", "a{2,1}", "\\",
            r"\c1", r"\xZ1", r"\u12",
        ] {
            assert!(Pattern::compile(pattern).is_err(), "{pattern}");
        }
        assert!(Pattern::compile(&"a".repeat(MAX_SOURCE + 1)).is_err());
    }
}
