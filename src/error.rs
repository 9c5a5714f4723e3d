//! The crate's one public error type: a kind with a stable code, a message
//! written for a model to act on, and an optional source span.
//!
//! This module depends on nothing else in the crate. Internal control flow
//! (`recur`, `return`, `fail`) never appears here.

use std::fmt;

/// A position in program text. Lines and columns are 1-based; offsets are
/// byte offsets into the source string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
    pub line: u32,
    pub column: u32,
}

impl Span {
    pub fn new(start: usize, end: usize, line: u32, column: u32) -> Self {
        Span {
            start,
            end,
            line,
            column,
        }
    }
}

/// What went wrong, in categories a host or a model can branch on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The text is not valid PTC-Lisp syntax.
    Parse,
    /// The program is well-formed text but not a valid program
    /// (bad special-form shape, `recur` outside tail position, ...).
    Validation,
    /// A value had the wrong type for an operation.
    Type,
    /// Integer overflow, bad numeric conversion.
    Arithmetic,
    /// A function was called with the wrong number of arguments.
    Arity,
    /// A name that is not defined anywhere.
    Undefined,
    /// A bare name that is both a tool and a data key.
    AmbiguousReference,
    /// Any other runtime failure (index errors, bad arguments, ...).
    Execution,
    /// A host tool failed.
    Tool,
    /// The program called `(fail ...)`.
    Failed,
    /// Something the language deliberately does not support.
    Unsupported,
    /// The wall-clock limit was reached.
    Timeout,
    /// The evaluation-step budget was used up.
    StepLimit,
    /// Nesting of calls went deeper than the recursion limit.
    DepthLimit,
    /// A collection or string grew past the size limit.
    MemoryLimit,
    /// Printed output grew past its limit.
    OutputLimit,
    /// Too many tool calls in one program.
    ToolCallLimit,
    /// An input (a data file, a tool manifest, program text) is larger
    /// than its size limit.
    InputLimit,
    /// The host interrupted the evaluation (for example Ctrl-C in the REPL).
    Interrupted,
}

impl ErrorKind {
    /// A stable, kebab-case code for this kind (`type-error`, `timeout`, ...).
    pub fn code(self) -> &'static str {
        match self {
            ErrorKind::Parse => "parse-error",
            ErrorKind::Validation => "validation-error",
            ErrorKind::Type => "type-error",
            ErrorKind::Arithmetic => "arithmetic-error",
            ErrorKind::Arity => "arity-error",
            ErrorKind::Undefined => "undefined-error",
            ErrorKind::AmbiguousReference => "ambiguous-reference",
            ErrorKind::Execution => "execution-error",
            ErrorKind::Tool => "tool-error",
            ErrorKind::Failed => "fail",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Timeout => "timeout",
            ErrorKind::StepLimit => "step-limit-exceeded",
            ErrorKind::DepthLimit => "recursion-limit-exceeded",
            ErrorKind::MemoryLimit => "memory-exceeded",
            ErrorKind::OutputLimit => "output-limit-exceeded",
            ErrorKind::ToolCallLimit => "tool-call-limit-exceeded",
            ErrorKind::InputLimit => "input-limit-exceeded",
            ErrorKind::Interrupted => "interrupted",
        }
    }

    /// True for the kinds that mean a resource limit ended the program.
    pub fn is_limit(self) -> bool {
        matches!(
            self,
            ErrorKind::Timeout
                | ErrorKind::StepLimit
                | ErrorKind::DepthLimit
                | ErrorKind::MemoryLimit
                | ErrorKind::OutputLimit
                | ErrorKind::ToolCallLimit
                | ErrorKind::InputLimit
        )
    }
}

/// The error type of every fallible operation in the crate.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    span: Option<Span>,
    hint: Option<String>,
}

/// Characters of input an error message quotes ([`quote`]).
pub const QUOTE_CHARS: usize = 200;

/// Longest error message kept whole (a backstop for messages that quote
/// input without [`quote`]); longer ones are cut with `... (N more)`.
pub const MAX_MESSAGE_CHARS: usize = 4000;

/// `text` as an error message quotes it: its first [`QUOTE_CHARS`]
/// characters, then `... (N more)` (a 100,000-digit literal gave a
/// 100 KB error).
pub fn quote(text: &str) -> String {
    cut_chars(text, QUOTE_CHARS)
}

fn cut_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((at, _)) => {
            let more = text[at..].chars().count();
            format!("{}... ({more} more)", &text[..at])
        }
    }
}

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        let message: String = message.into();
        let message = if message.len() > MAX_MESSAGE_CHARS {
            cut_chars(&message, MAX_MESSAGE_CHARS)
        } else {
            message
        };
        Error {
            kind,
            message,
            span: None,
            hint: None,
        }
    }

    pub fn parse(message: impl Into<String>, span: Span) -> Self {
        Error::new(ErrorKind::Parse, message).with_span(span)
    }

    pub fn validation(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Validation, message)
    }

    pub fn type_error(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Type, message)
    }

    pub fn arity(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Arity, message)
    }

    pub fn execution(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Execution, message)
    }

    pub fn arithmetic(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Arithmetic, message)
    }

    pub fn unsupported(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Unsupported, message)
    }

    /// Attach a span unless one is already set (the innermost span wins).
    pub fn with_span(mut self, span: Span) -> Self {
        if self.span.is_none() {
            self.span = Some(span);
        }
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    pub fn code(&self) -> &'static str {
        self.kind.code()
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    pub fn span(&self) -> Option<Span> {
        self.span
    }

    pub fn hint(&self) -> Option<&str> {
        self.hint.as_deref()
    }
}

impl fmt::Display for Error {
    /// `type-error at 1:5: message` (location only when known), then the
    /// hint on its own line when there is one.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kind.code())?;
        if let Some(span) = self.span {
            write!(f, " at {}:{}", span.line, span.column)?;
        }
        write!(f, ": {}", self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, "\nhint: {hint}")?;
        }
        Ok(())
    }
}

/// The crate's result alias.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Suggest the closest of `candidates` to `name` (by edit distance), for
/// "did you mean" hints. Returns at most three names, best first.
pub fn suggest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let max = (name.chars().count() / 3).max(1);
    let mut scored: Vec<(usize, &'a str)> = candidates
        .into_iter()
        .filter_map(|c| {
            let d = edit_distance(name, c);
            (d <= max && c != name).then_some((d, c))
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(3).map(|(_, c)| c).collect()
}

fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggest_finds_near_misses() {
        assert_eq!(
            suggest("fliter", ["filter", "first", "map"]),
            vec!["filter"]
        );
        assert!(suggest("zzzzzz", ["filter"]).is_empty());
    }

    #[test]
    fn display_includes_location_and_hint() {
        let e = Error::type_error("expected a number, got a string")
            .with_span(Span::new(0, 1, 2, 5))
            .with_hint("use parse-long");
        assert_eq!(
            e.to_string(),
            "type-error at 2:5: expected a number, got a string\nhint: use parse-long"
        );
    }
}
