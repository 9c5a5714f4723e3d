//! `--json` of `ptc eval`, `ptc run` and `ptc agent`: the outcome as one
//! JSON object on stdout (schema below and in the README), for scripts and
//! other programs. Exit codes are those of the plain output.
//!
//! ```text
//! {
//!   "ok": true,                    // exit code 0
//!   "outcome": "value",            // eval/run: value | return | fail | error | usage_error
//!                                  // agent: returned | failed | turn_limit | provider_error | usage_error
//!   "result": [1, 2],              // the value as JSON, or null (see "result_is_json")
//!   "result_is_json": true,        // false when the value has no faithful JSON form, or its
//!                                  // JSON is over --max-result-bytes or 1000 levels deep
//!   "result_cut": false,           // true when the JSON result was left out for that size
//!   "result_text": "[1 2]",        // the value in Clojure notation (cut at --max-result-bytes)
//!   "prints": ["..."],             // one entry per println call
//!   "error": null,                 // or {"code", "message", "line", "column", "hint", "file"}
//!   "steps": 3,                    // eval/run only
//!   "turns": 2,                    // agent only, with "usage" {"input_tokens", "output_tokens"},
//!                                  // "compactions" and "conversation" (null with --no-compaction:
//!                                  // {"message_count", "estimated_tokens", "evicted_messages",
//!                                  //  "window_summaries", "max_messages"})
//!   "timing_ms": {"total": 0.41}
//! }
//! ```

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Map as JsonMap, Value as Json};

use ptc_lisp::agent::{AgentOutcome, AgentRun};
use ptc_lisp::session::{Turn, TurnError, TurnOutcome};
use ptc_lisp::value::{has_json_form, json_size_within, to_json, Value};

/// The JSON object of one `ptc eval` / `ptc run` turn.
pub fn turn(
    turn: &Turn,
    file: Option<&Path>,
    max_result_bytes: usize,
    result_text: &dyn Fn(&Value) -> String,
) -> Json {
    let (outcome, value, error) = match &turn.outcome {
        TurnOutcome::Value { value } => ("value", Some(value), None),
        TurnOutcome::Return { value } => ("return", Some(value), None),
        TurnOutcome::Fail { value } => ("fail", Some(value), None),
        TurnOutcome::Error { error } => ("error", None, Some(error)),
    };
    let mut out = base(outcome == "value" || outcome == "return", outcome);
    put_value(&mut out, value, max_result_bytes, result_text);
    out.insert("prints".into(), json!(turn.prints));
    out.insert(
        "error".into(),
        error.map_or(Json::Null, |e| error_json(e, file)),
    );
    out.insert("steps".into(), json!(turn.steps));
    out.insert("timing_ms".into(), json!({ "total": ms(turn.duration) }));
    Json::Object(out)
}

/// The JSON object of a whole `ptc agent` run.
pub fn agent_run(
    run: &AgentRun,
    max_result_bytes: usize,
    result_text: &dyn Fn(&Value) -> String,
) -> Json {
    let (outcome, value) = match &run.outcome {
        AgentOutcome::Returned(v) => ("returned", Some(v)),
        AgentOutcome::Failed(v) => ("failed", Some(v)),
        AgentOutcome::TurnLimit => ("turn_limit", None),
        AgentOutcome::ProviderError(_) => ("provider_error", None),
    };
    let mut out = base(outcome == "returned", outcome);
    put_value(&mut out, value, max_result_bytes, result_text);
    let prints: Vec<&String> = run.turns.iter().flat_map(|t| &t.prints).collect();
    out.insert("prints".into(), json!(prints));
    let error = match &run.outcome {
        AgentOutcome::ProviderError(e) => json!({
            "code": "provider-error",
            "message": e.to_string(),
            "line": null, "column": null, "hint": null, "file": null,
        }),
        AgentOutcome::TurnLimit => run.last_error().map_or(Json::Null, |e| error_json(e, None)),
        _ => Json::Null,
    };
    out.insert("error".into(), error);
    out.insert("turns".into(), json!(run.turns.len()));
    out.insert(
        "usage".into(),
        json!({
            "input_tokens": run.usage.input_tokens,
            "output_tokens": run.usage.output_tokens,
        }),
    );
    out.insert("compactions".into(), json!(run.compactions.len()));
    out.insert("conversation".into(), json!(run.conversation));
    out.insert("timing_ms".into(), json!({ "total": ms(run.duration) }));
    Json::Object(out)
}

/// The JSON object of a usage error (bad flags, unreadable files): the
/// process exits with 2.
pub fn usage_error(message: &str) -> Json {
    let mut out = base(false, "usage_error");
    put_value(&mut out, None, 0, &|_| String::new());
    out.insert("prints".into(), json!([]));
    out.insert(
        "error".into(),
        json!({
            "code": "usage",
            "message": message,
            "line": null, "column": null, "hint": null, "file": null,
        }),
    );
    Json::Object(out)
}

fn base(ok: bool, outcome: &str) -> JsonMap<String, Json> {
    let mut out = JsonMap::new();
    out.insert("ok".into(), json!(ok));
    out.insert("outcome".into(), json!(outcome));
    out
}

/// The result as JSON, when its JSON text fits in `max` bytes (values
/// that share structure can expand without limit); else `null` with
/// `result_cut` set, and the cut text form in `result_text`.
fn put_value(
    out: &mut JsonMap<String, Json>,
    value: Option<&Value>,
    max: usize,
    result_text: &dyn Fn(&Value) -> String,
) {
    // Measured first: `has_json_form` and `to_json` then walk at most
    // `max` nodes.
    let cut = value.is_some_and(|v| json_size_within(v, max).is_none());
    let is_json = !cut && value.is_none_or(has_json_form);
    let json_value = match value {
        Some(v) if is_json => to_json(v),
        _ => Json::Null,
    };
    out.insert("result".into(), json_value);
    out.insert("result_is_json".into(), json!(is_json));
    out.insert("result_cut".into(), json!(cut));
    out.insert(
        "result_text".into(),
        value.map_or(Json::Null, |v| Json::String(result_text(v))),
    );
}

fn error_json(e: &TurnError, file: Option<&Path>) -> Json {
    json!({
        "code": e.code,
        "message": e.message,
        "line": e.line,
        "column": e.column,
        "hint": e.hint,
        "file": file.map(|f| f.display().to_string()),
    })
}

/// A duration in milliseconds, rounded to the microsecond so that JSON
/// shows `0.098`, not float noise like `0.09758499999999999`.
pub(crate) fn ms(d: Duration) -> f64 {
    round_us(d.as_secs_f64() * 1000.0)
}

/// Milliseconds rounded to three decimals (whole microseconds).
pub(crate) fn round_us(ms: f64) -> f64 {
    (ms * 1000.0).round() / 1000.0
}
