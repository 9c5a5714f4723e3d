//! How the REPL writes: results in Clojure notation (cut when long),
//! errors with a caret under their column, notes. Results and command
//! output go to stdout, errors and notes to stderr. Control characters in
//! what is shown (a program's output, its text, values) are escaped on
//! stdout when it is a terminal and always on stderr
//! ([`crate::terminal`]). A failed write to stdout is remembered
//! ([`Printer::write_failure`]) and ends the REPL after the form at hand:
//! quietly for a closed pipe, with exit status 2 otherwise. Failed writes
//! to stderr are ignored; it never panics.

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use crate::terminal::escape_controls;

use crate::session::TurnError;
use crate::value::{pretty, PrettyOptions, Value};

/// The end of the note after a cut result, interactively.
pub(super) const MORE_HINT: &str = "*1 holds it all; :more prints it all";
/// The same for piped input: the command goes on a line of its own.
pub(super) const PIPED_MORE_HINT: &str =
    "*1 holds it all; a line `:more` after the form prints it all";

/// Results longer than this many characters are cut (at an element).
pub(super) const RESULT_CHARS: usize = 2_000;
/// Results with more lines than this are cut.
pub(super) const RESULT_LINES: usize = 50;

const RED: &str = "\x1b[31m";
const YELLOW: &str = "\x1b[33m";
const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

/// Where a program came from, for error locations and the caret line.
pub(super) struct Source<'a> {
    /// The text the program is part of (the whole script in piped mode).
    pub text: &'a str,
    /// Line and column (1-based) in `text` where the program starts.
    pub line: u32,
    pub column: u32,
    /// Shown before the location, for programs read from a file.
    pub file: Option<&'a Path>,
}

impl<'a> Source<'a> {
    /// A program that is the whole of `text`.
    pub fn whole(text: &'a str) -> Self {
        Source {
            text,
            line: 1,
            column: 1,
            file: None,
        }
    }

    /// A program read from a file.
    pub fn file(text: &'a str, path: &'a Path) -> Self {
        Source {
            file: Some(path),
            ..Source::whole(text)
        }
    }
}

/// The REPL's output streams, with or without colors.
#[derive(Debug, Clone)]
pub(super) struct Printer {
    pub color: bool,
    /// The terminal's columns: wider results are pretty-printed over
    /// lines. `None`: one line (cut at an element when long).
    pub width: Option<usize>,
    /// Whether stdout is a terminal (control characters are escaped).
    terminal: bool,
    /// How the note after a cut result says to see all of it.
    pub more_hint: &'static str,
    /// The first failed write to stdout, shared by the copies of the
    /// printer (the Ctrl-C handler holds one).
    failure: Arc<OnceLock<std::io::Error>>,
}

impl Printer {
    /// A printer for stdout as it is (a terminal or not).
    pub fn new(color: bool, width: Option<usize>) -> Printer {
        use std::io::IsTerminal;
        Printer {
            color,
            width,
            terminal: std::io::stdout().is_terminal(),
            more_hint: MORE_HINT,
            failure: Arc::new(OnceLock::new()),
        }
    }

    /// The kind of the first write to stdout that failed, if one did.
    pub fn write_failure(&self) -> Option<std::io::ErrorKind> {
        self.failure.get().map(std::io::Error::kind)
    }

    /// The exit code for a failed write to stdout: 0 for a closed pipe
    /// (the reader is gone; nothing is said), 2 after saying what failed.
    pub fn failure_code(&self, kind: std::io::ErrorKind) -> i32 {
        if kind == std::io::ErrorKind::BrokenPipe {
            return 0;
        }
        if let Some(e) = self.failure.get() {
            self.error(&format!("cannot write to standard output: {e}"));
        }
        2
    }

    /// A line on stdout.
    pub fn line(&self, text: &str) {
        if self.terminal {
            self.out_line(&escape_controls(text));
        } else {
            self.out_line(text);
        }
    }

    /// `text` as it is on stdout, remembering a failure.
    fn out_line(&self, text: &str) {
        if self.failure.get().is_some() {
            return;
        }
        let mut out = std::io::stdout().lock();
        if let Err(e) = writeln!(out, "{text}").and_then(|()| out.flush()) {
            let _ = self.failure.set(e);
        }
    }

    /// A result value, cut when long.
    pub fn value(&self, value: &Value) {
        let (text, note) = result_text(value, self.width, self.more_hint);
        let text = if self.terminal {
            escape_controls(&text)
        } else {
            text.into()
        };
        match note {
            None => self.out_line(&text),
            Some(note) => self.out_line(&format!("{text} {}", self.paint(DIM, &note))),
        }
    }

    /// A line on stderr, dimmed on a terminal.
    pub fn note(&self, text: &str) {
        self.err_line(&self.paint(DIM, &escape_controls(text)));
    }

    /// `error: message` on stderr.
    pub fn error(&self, message: &str) {
        let label = self.paint(RED, "error:");
        self.err_line(&format!("{label} {}", escape_controls(message)));
    }

    /// The value of `(fail v)`.
    pub fn failed(&self, value: &Value) {
        let (text, _) = result_text(value, self.width, self.more_hint);
        let label = self.paint(YELLOW, "fail:");
        self.err_line(&format!(
            "{label} {}\n{}",
            escape_controls(&text),
            self.paint(DIM, "(fail) an agent run would end here, unsuccessfully")
        ));
    }

    /// A turn's error: location, message and code, the source line with a
    /// caret under the error column, and the hint.
    pub fn turn_error(&self, e: &TurnError, source: &Source) {
        let position = e.line.zip(e.column).map(|(line, column)| {
            let abs_line = source.line + line - 1;
            let abs_column = if line == 1 {
                source.column + column - 1
            } else {
                column
            };
            (abs_line, abs_column)
        });
        let location = match (source.file, position) {
            (Some(f), Some((l, c))) => format!("{}:{l}:{c}: ", f.display()),
            (None, Some((l, c))) => format!("{l}:{c}: "),
            (Some(f), None) => format!("{}: ", f.display()),
            (None, None) => String::new(),
        };
        let mut text = format!("{location}{} ({})", e.message, e.code);
        if let Some((line, column)) = position {
            if let Some(src) = source.text.lines().nth(line.saturating_sub(1) as usize) {
                if src.chars().count() <= 200 {
                    text.push_str(&format!("\n  | {src}\n  | {}^", caret_pad(src, column)));
                }
            }
        }
        self.error(&text);
        if let Some(hint) = &e.hint {
            self.err_line(&format!(
                "{} {}",
                self.paint(DIM, "hint:"),
                escape_controls(hint)
            ));
        }
    }

    /// `text` (escaped already) on stderr; a failure is ignored.
    fn err_line(&self, text: &str) {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{text}");
        let _ = err.flush();
    }

    fn paint(&self, color: &str, text: &str) -> String {
        if self.color {
            format!("{color}{text}{RESET}")
        } else {
            text.to_string()
        }
    }
}

/// Spaces up to `column` (1-based, in characters) of `line`, keeping tabs
/// so the caret lines up under tab-indented code.
fn caret_pad(line: &str, column: u32) -> String {
    line.chars()
        .take(column.saturating_sub(1) as usize)
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect()
}

/// A value in Clojure notation, pretty-printed to `width` (one line when
/// `None`), stopped at an element boundary after [`RESULT_CHARS`]
/// characters or [`RESULT_LINES`] lines, with a note saying how much of
/// it was shown.
pub(super) fn result_text(
    value: &Value,
    width: Option<usize>,
    more_hint: &str,
) -> (String, Option<String>) {
    let shown = pretty(
        value,
        PrettyOptions {
            width: width.unwrap_or(usize::MAX / 8),
            max_lines: RESULT_LINES,
            max_chars: RESULT_CHARS,
        },
    );
    let Some(count) = shown.shown else {
        return (shown.text, None);
    };
    // `*1` is this value: the note names it so the user can look closer.
    let of = match (value, value.as_str()) {
        (_, Some(text)) => format!("{count} of {} characters", text.chars().count()),
        (Value::Vector(v) | Value::List(v), _) => format!("{count} of {} items", v.len()),
        (Value::Map(m), _) => format!("{count} of {} entries", m.len()),
        (Value::Set(s), _) => format!("{count} of {} items", s.len()),
        _ => "part".to_string(),
    };
    let note = format!("(truncated: {of} shown; {more_hint})");
    (shown.text, Some(note))
}

/// A value in Clojure notation in full, pretty-printed to `width` (one
/// line when `None`): what `:more` prints.
pub(super) fn full_text(value: &Value, width: Option<usize>) -> String {
    pretty(
        value,
        PrettyOptions {
            width: width.unwrap_or(usize::MAX / 8),
            max_lines: usize::MAX,
            max_chars: usize::MAX,
        },
    )
    .text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::eval_str;

    #[test]
    fn short_results_are_whole() {
        let v = eval_str("[1 \"a\" {:b nil}]").unwrap();
        assert_eq!(
            result_text(&v, None, MORE_HINT),
            ("[1 \"a\" {:b nil}]".to_string(), None)
        );
    }

    #[test]
    fn long_results_are_cut_with_a_count() {
        let v = eval_str("(range 5000)").unwrap();
        let (text, note) = result_text(&v, None, MORE_HINT);
        assert!(text.ends_with(" ...]"), "{text}");
        assert!(text.chars().count() <= RESULT_CHARS + 10);
        // Cut between numbers, never inside one.
        let shown: Vec<&str> = text[1..text.len() - 5].split(' ').collect();
        for (i, n) in shown.iter().enumerate() {
            assert_eq!(n.parse::<usize>().unwrap(), i, "{text}");
        }
        assert_eq!(
            note.unwrap(),
            format!(
                "(truncated: {} of 5000 items shown; *1 holds it all; :more prints it all)",
                shown.len()
            )
        );
        assert_eq!(full_text(&v, None), crate::value::pr_str(&v));
    }

    #[test]
    fn caret_padding_keeps_tabs() {
        assert_eq!(caret_pad("\t(foo x)", 3), "\t ");
    }
}
