//! The debug view: a run's full turns, the messages the model received,
//! and the compression statistics (DBG-004, DBG-005). Returns text; the
//! caller decides where it goes.

use std::fmt::Write;

use super::format::{to_clojure, FormatOptions};
use super::{CompressionStats, Message};
use crate::session::{Turn, TurnOutcome};

/// Values in the debug view: generous, but bounded so that a large data
/// set cannot bury the rest of the view.
const DEBUG_FORMAT: FormatOptions = FormatOptions {
    limit: 50,
    printable_limit: 4000,
};

const BOX_RULE: &str = "+---------------------------------------------------------+";

/// The statistics box:
///
/// ```text
/// +- Compression -------------------------------------------+
/// |   Strategy:     single-user-coalesced                   |
/// |   Turns:        9 compressed                            |
/// |   Tool calls:   20/25 shown (5 dropped)                 |
/// |   Printlns:     15/18 shown (3 dropped)                 |
/// |   Errors:       2 turn(s) collapsed                     |
/// +---------------------------------------------------------+
/// ```
///
/// A line longer than the box widens it on that line only.
pub fn stats_box(stats: &CompressionStats) -> String {
    let mut out = String::new();
    out.push_str("+- Compression -------------------------------------------+\n");
    let lines = [
        format!("Strategy:     {}", stats.strategy),
        format!("Turns:        {} compressed", stats.turns_compressed),
        format!(
            "Tool calls:   {}/{} shown ({} dropped)",
            stats.tool_calls_shown, stats.tool_calls_total, stats.tool_calls_dropped
        ),
        format!(
            "Printlns:     {}/{} shown ({} dropped)",
            stats.printlns_shown, stats.printlns_total, stats.printlns_dropped
        ),
        format!(
            "Errors:       {} turn(s) collapsed",
            stats.error_turns_collapsed
        ),
    ];
    // Inside the borders: the rule's width less its two corners, less
    // the three spaces of indentation.
    let width = BOX_RULE.chars().count() - 2 - 3;
    for line in lines {
        let _ = writeln!(out, "|   {line:<width$}|");
    }
    out.push_str(BOX_RULE);
    out
}

/// One turn in full: a `--- Turn N (status, steps, time) ---` header,
/// the whole program, its tool calls with arguments, results and
/// durations, what it printed, its result or error and what it defined.
/// Values are cut as `format` says. The REPL's `:history` uses it too.
pub fn write_turn(out: &mut String, turn: &Turn, format: FormatOptions) {
    let status = match &turn.outcome {
        TurnOutcome::Error { .. } => "error",
        TurnOutcome::Return { .. } => "returned",
        TurnOutcome::Fail { .. } => "failed (fail called)",
        TurnOutcome::Value { .. } => "ok",
    };
    let _ = writeln!(
        out,
        "--- Turn {} ({status}, {} steps, {:.1?}) ---",
        turn.number, turn.steps, turn.duration
    );
    out.push_str(turn.program.trim_end());
    out.push('\n');
    if !turn.tool_calls.is_empty() {
        out.push_str(";; tool calls:\n");
        for call in turn.tool_calls.iter() {
            let args: Vec<String> = call.args.iter().map(|a| to_clojure(a, format).0).collect();
            let outcome = match (&call.result, &call.error) {
                (_, Some(e)) => format!("error: {e}"),
                (Some(r), None) => to_clojure(r, format).0,
                (None, None) => "nil".to_string(),
            };
            let _ = writeln!(
                out,
                ";   {}({}) -> {outcome}   [{:.1?}]",
                call.name,
                args.join(" "),
                call.duration
            );
        }
    }
    if !turn.prints.is_empty() {
        out.push_str(";; printed:\n");
        for p in &turn.prints {
            out.push_str(p);
            out.push('\n');
        }
    }
    match (turn.result(), turn.error()) {
        (_, Some(e)) => {
            let _ = writeln!(out, ";; error: {e}");
        }
        (Some(v), None) => {
            let _ = writeln!(out, ";; result: {}", to_clojure(v, format).0);
        }
        (None, None) => {}
    }
    if !turn.defined.is_empty() {
        let _ = writeln!(out, ";; defined: {}", turn.defined.join(", "));
    }
}

/// Every turn (whole programs and prints; tool calls with results and
/// durations, results and errors, with values cut at 50 items per
/// collection and 4,000 characters), then the messages the model received,
/// then the statistics box when there are stats.
pub fn debug_view(
    turns: &[Turn],
    messages: &[Message],
    stats: Option<&CompressionStats>,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "=== Full history: {} turn(s) ===", turns.len());
    for turn in turns {
        out.push('\n');
        write_turn(&mut out, turn, DEBUG_FORMAT);
    }
    let _ = writeln!(
        out,
        "\n=== Messages the model received: {} ===",
        messages.len()
    );
    for m in messages {
        let _ = writeln!(out, "\n[{}]", m.role);
        out.push_str(&m.content);
        out.push('\n');
    }
    if let Some(stats) = stats {
        out.push('\n');
        out.push_str(&stats_box(stats));
        out.push('\n');
    }
    out
}
