//! A turn's outcome as text for people and models: the error with its
//! location, source line, caret and hint, and a result printed within a
//! byte cap. Shared by the `ptc` binary and `ptc mcp-server`. No I/O.

use std::fmt::Write;
use std::path::Path;

use super::TurnError;
use crate::value::{write_pr_bounded, Value};

/// `error: FILE:LINE:COL: message (code)`, then the source line with a
/// caret under the column (for lines of at most 200 characters) and the
/// hint, one per line, without a trailing newline.
pub fn error_report(e: &TurnError, source: &str, file: Option<&Path>) -> String {
    let position = e.line.zip(e.column);
    let mut out = String::from("error: ");
    match (file, position) {
        (Some(f), Some((l, c))) => {
            let _ = write!(out, "{}:{l}:{c}: ", f.display());
        }
        (None, Some((l, c))) => {
            let _ = write!(out, "{l}:{c}: ");
        }
        (Some(f), None) => {
            let _ = write!(out, "{}: ", f.display());
        }
        (None, None) => {}
    }
    let _ = write!(out, "{} ({})", e.message, e.code);
    if let Some((line, column)) = position {
        if let Some(text) = source.lines().nth(line.saturating_sub(1) as usize) {
            if text.chars().count() <= 200 {
                let pad = " ".repeat(column.saturating_sub(1) as usize);
                let _ = write!(out, "\n  | {text}\n  | {pad}^");
            }
        }
    }
    if let Some(hint) = &e.hint {
        let _ = write!(out, "\nhint: {hint}");
    }
    out
}

/// The printed form of `value`, cut at `max` bytes with a marker giving
/// the limit and how much more there was (`... (result cut at 1048576
/// bytes; 5000 more; --max-result-bytes raises the cap)`), and whether it
/// is whole. Past the limit the printer counts up to 16 MiB more; beyond
/// that the marker says `more than N more`.
pub fn capped_result(value: &Value, max: usize) -> (String, bool) {
    const COUNTED: usize = 16 * 1024 * 1024;
    let mut text = String::new();
    let complete = write_pr_bounded(&mut text, value, max.saturating_add(COUNTED));
    if complete && text.len() <= max {
        return (text, true);
    }
    let total = text.len();
    let mut cut = max.min(total);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
    let more = total - cut;
    let more = if complete {
        format!("{more} more")
    } else {
        format!("more than {more} more")
    };
    let _ = write!(
        text,
        " ... (result cut at {max} bytes; {more}; --max-result-bytes raises the cap)"
    );
    (text, false)
}
