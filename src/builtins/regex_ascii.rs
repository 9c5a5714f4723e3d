//! Java's shorthand classes for the regex engine: in Java (so in Clojure)
//! `\d`, `\w` and `\s` match ASCII digits, word characters and white space
//! only, where the Rust engine would match any Unicode digit, letter or
//! space. Patterns are rewritten to the ASCII classes before compiling,
//! which also makes them much cheaper to compile (the Unicode `\w` alone
//! is hundreds of ranges).

/// What `\d`, `\w` and `\s` stand for, as class contents.
fn class_body(c: char) -> Option<&'static str> {
    match c.to_ascii_lowercase() {
        'd' => Some("0-9"),
        'w' => Some("0-9A-Za-z_"),
        's' => Some(r"\t\n\x0B\f\r "),
        _ => None,
    }
}

/// `pattern` with `\d \w \s` (and `\D \W \S` outside brackets) as ASCII
/// classes. Escapes, bracketed classes (nested ones too) and `\Q...\E`
/// quotes are followed so nothing else changes; `\D \W \S` inside
/// brackets are left as they are.
pub(crate) fn ascii_classes(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut chars = pattern.chars().peekable();
    let mut depth = 0usize; // bracket nesting
    let mut class_start = false; // just after `[` or `[^`: a `]` is literal
    while let Some(c) = chars.next() {
        let at_start = std::mem::take(&mut class_start);
        match c {
            '\\' => {
                let Some(e) = chars.next() else {
                    out.push('\\');
                    break;
                };
                if e == 'Q' {
                    // Quoted text up to `\E` (or the end) is copied as is.
                    out.push_str("\\Q");
                    let mut prev = '\0';
                    for q in chars.by_ref() {
                        out.push(q);
                        if prev == '\\' && q == 'E' {
                            break;
                        }
                        prev = q;
                    }
                    continue;
                }
                match (class_body(e), depth, e.is_ascii_uppercase()) {
                    (Some(body), 0, false) => {
                        out.push('[');
                        out.push_str(body);
                        out.push(']');
                    }
                    (Some(body), 0, true) => {
                        out.push_str("[^");
                        out.push_str(body);
                        out.push(']');
                    }
                    (Some(body), _, false) => out.push_str(body),
                    _ => {
                        out.push('\\');
                        out.push(e);
                    }
                }
            }
            '[' => {
                out.push('[');
                depth += 1;
                class_start = true;
                if chars.peek() == Some(&'^') {
                    out.push('^');
                    chars.next();
                }
            }
            ']' if depth > 0 && !at_start => {
                out.push(']');
                depth -= 1;
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::ascii_classes;

    #[test]
    fn shorthand_classes_become_ascii() {
        assert_eq!(ascii_classes(r"u\d+"), "u[0-9]+");
        assert_eq!(
            ascii_classes(r"\w+\s\S"),
            r"[0-9A-Za-z_]+[\t\n\x0B\f\r ][^\t\n\x0B\f\r ]"
        );
        assert_eq!(ascii_classes(r"[\d.\-]"), r"[0-9.\-]");
        assert_eq!(ascii_classes(r"[^\s,]"), r"[^\t\n\x0B\f\r ,]");
        assert_eq!(ascii_classes(r"[]\d]"), r"[]0-9]");
        assert_eq!(ascii_classes(r"[a[\d]]\D"), r"[a[0-9]][^0-9]");
    }

    #[test]
    fn everything_else_is_left_alone() {
        for p in [
            r"\\d",
            r"\bword\b",
            r"\Q\d\E\d",
            r"[\D]",
            r"a\",
            r"\x41\u0042\p{L}",
            "(?i)abc",
        ] {
            let out = ascii_classes(p);
            if p == r"\Q\d\E\d" {
                assert_eq!(out, r"\Q\d\E[0-9]");
            } else {
                assert_eq!(out, p);
            }
        }
    }
}
