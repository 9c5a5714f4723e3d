//! Text made safe to show on a terminal. A model's program, what it
//! printed and what a tool or server answered are untrusted: shown raw,
//! an escape sequence in them moves the operator's cursor, recolors or
//! retitles the terminal, or (with `\r` and backspace) hides what was
//! written before. [`escape_controls`] writes every control character as
//! a visible escape instead: C0 controls (U+0000 to U+001F) other than
//! newline and tab, and DEL (U+007F), as `\x1b` (two hex digits); the C1
//! controls (U+0080 to U+009F, which some terminals obey like ESC
//! sequences) as `\u{9b}`. A backslash is left alone, so the escaped text
//! can be ambiguous with text that spelled out `\x1b`; it is for people
//! to read, never to be parsed back.
//!
//! [`warn`] writes a message on standard error this way. What is meant to
//! be read by programs (`--json`, JSON Lines, files) is never escaped.

use std::borrow::Cow;
use std::fmt::Write as _;

/// `text` with its control characters (except `\n` and `\t`) written as
/// visible escapes; borrowed when there are none.
///
/// ```
/// use ptc_lisp::terminal::escape_controls;
///
/// assert_eq!(escape_controls("ok\tfine\n"), "ok\tfine\n");
/// assert_eq!(escape_controls("\u{1b}[31mred\r"), "\\x1b[31mred\\x0d");
/// assert_eq!(escape_controls("\u{9b}2J"), "\\u{9b}2J");
/// ```
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if !is_unsafe(c) {
            out.push(c);
        } else if (c as u32) < 0x80 {
            let _ = write!(out, "\\x{:02x}", c as u32);
        } else {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
    Cow::Owned(out)
}

/// A control character a terminal may act on.
fn is_unsafe(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

/// Write `line` and a newline on standard error, control characters
/// escaped. A failed write is ignored: standard error is where problems
/// are told, so there is nowhere left to tell this one, and it must not
/// stop the work (a closed pipe included).
pub fn warn(line: &str) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{}", escape_controls(line));
    let _ = err.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_control_but_newline_and_tab_is_escaped() {
        for code in (0u32..0x20).chain([0x7f]).chain(0x80..0xa0) {
            let c = char::from_u32(code).unwrap();
            let shown = escape_controls(&c.to_string()).into_owned();
            if c == '\n' || c == '\t' {
                assert_eq!(shown, c.to_string());
            } else {
                assert!(shown.starts_with('\\'), "{code:#x}: {shown}");
                assert!(!shown.chars().any(char::is_control), "{code:#x}");
            }
        }
        assert_eq!(escape_controls("\u{0}\u{7f}"), "\\x00\\x7f");
        assert!(matches!(escape_controls("plain é ✓"), Cow::Borrowed(_)));
    }

    proptest::proptest! {
        #[test]
        fn nothing_a_terminal_obeys_is_left_and_safe_text_is_kept(text in "\\PC*|[\\x00-\\x{a0}]{0,40}") {
            let shown = escape_controls(&text);
            proptest::prop_assert!(!shown.chars().any(is_unsafe));
            // Only control characters change: the rest reads the same.
            let kept: String = text.chars().filter(|&c| !is_unsafe(c)).collect();
            let unescaped: String = shown.chars().filter(|c| c.is_ascii() || !c.is_control()).collect();
            proptest::prop_assert!(unescaped.len() >= kept.len());
            if !text.chars().any(is_unsafe) {
                proptest::prop_assert_eq!(shown.as_ref(), text.as_str());
            }
        }
    }
}
