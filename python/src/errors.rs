//! The exception hierarchy: `PtcError` and its subclasses, each carrying
//! the stable error code, the 1-based position in the program when known,
//! and the hint a model (or a person) can act on.
//!
//! `ParseError` is a program that could not be read, `LimitError` a
//! program stopped by one of its limits (time, steps, depth, memory,
//! output, tool calls), `EvalError` every other failure of a program;
//! `ConfigError` and `CompactError` belong to the history layer, and a
//! summarizer raises `SummaryRefused` to ask for the brief fallback.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

use ptc_lisp::session::TurnError;

create_exception!(
    ptc_lisp,
    PtcError,
    PyException,
    "Base class of every error of ptc_lisp; `.code`, `.line`, `.column`, `.hint`, `.message`."
);
create_exception!(
    ptc_lisp,
    ParseError,
    PtcError,
    "The program could not be read (unbalanced brackets, a bad literal)."
);
create_exception!(
    ptc_lisp,
    EvalError,
    PtcError,
    "The program failed while it ran (a type error, an undefined name, a tool error, ...)."
);
create_exception!(
    ptc_lisp,
    LimitError,
    PtcError,
    "The program was stopped by one of its limits (time, steps, depth, memory, output, tool calls)."
);
create_exception!(
    ptc_lisp,
    ConfigError,
    PtcError,
    "A configuration or policy is invalid; `.problems` lists each field path and what is wrong."
);
create_exception!(
    ptc_lisp,
    CompactError,
    PtcError,
    "A compaction could not produce a history within budget, or the history is malformed."
);
create_exception!(
    ptc_lisp,
    SummaryRefused,
    PtcError,
    "Raised by a summarizer that declines the request: the compaction retries with the brief strategy."
);

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("PtcError", py.get_type::<PtcError>())?;
    m.add("ParseError", py.get_type::<ParseError>())?;
    m.add("EvalError", py.get_type::<EvalError>())?;
    m.add("LimitError", py.get_type::<LimitError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("CompactError", py.get_type::<CompactError>())?;
    m.add("SummaryRefused", py.get_type::<SummaryRefused>())?;
    Ok(())
}

/// The codes of errors that end a program at one of its limits.
const LIMIT_CODES: [&str; 8] = [
    "timeout",
    "step-limit-exceeded",
    "recursion-limit-exceeded",
    "memory-exceeded",
    "output-limit-exceeded",
    "tool-call-limit-exceeded",
    "input-limit-exceeded",
    "interrupted",
];

/// The exception for a program's error, with its attributes set (not
/// raised: a turn holds it as `.error`).
pub(crate) fn turn_error(py: Python<'_>, error: &TurnError) -> PyErr {
    let err = if error.code == "parse-error" {
        ParseError::new_err(error.message.clone())
    } else if LIMIT_CODES.contains(&error.code.as_str()) {
        LimitError::new_err(error.message.clone())
    } else {
        EvalError::new_err(error.message.clone())
    };
    let value = err.value(py);
    // Setting attributes on a fresh exception instance cannot fail.
    let _ = value.setattr("code", &error.code);
    let _ = value.setattr("message", &error.message);
    let _ = value.setattr("line", error.line);
    let _ = value.setattr("column", error.column);
    let _ = value.setattr("hint", error.hint.as_deref());
    err
}

/// An error of the history layer (`code` names its kind) with a message.
pub(crate) fn with_code(err: PyErr, py: Python<'_>, code: &str, problems: &[String]) -> PyErr {
    let value = err.value(py);
    let message = value.str().map(|s| s.to_string()).unwrap_or_default();
    let _ = value.setattr("code", code);
    let _ = value.setattr("message", message);
    let _ = value.setattr("line", py.None());
    let _ = value.setattr("column", py.None());
    let _ = value.setattr("hint", py.None());
    let _ = value.setattr("problems", problems.to_vec());
    err
}

pub(crate) fn config_error(py: Python<'_>, problems: Vec<String>) -> PyErr {
    let err = ConfigError::new_err(problems.join("\n"));
    with_code(err, py, "invalid-config", &problems)
}
