//! `SingleUserCoalesced`, the default strategy (ARC-005): the whole
//! history in one USER message after the SYSTEM prompt, in the
//! namespace-section format (FMT-001..018):
//!
//! ```text
//! {mission}
//!
//! ;; === tool/ ===
//! (tool/search query)              ; query:string -> [string] -- Search docs
//!
//! ;; === data/ ===
//! data/products                    ; list[7], sample: {:name "Laptop"}
//!
//! ;; === user/ (your prelude) ===
//! (top-n [n])                      ; "Best n products" -> list[3]
//! electronics                      ; = list[4], sample: {:name "Laptop"}
//!
//! ;; Tool calls made:
//! ;   search("laptops")
//!
//! ;; Output:
//! Found 4 products
//!
//! Turns left: 3
//! ```
//!
//! While the session is failing, each failed turn since the last success
//! follows as an ASSISTANT (its code) / USER (its error) pair; once a turn
//! succeeds the earlier failures collapse (ERR-001..003, CMP-002/003).
//! Pure rendering: no I/O, no state.

use std::collections::HashMap;
use std::fmt::Write;

use super::format::{sample, type_label, write_clojure, FormatOptions};
use super::{Compression, CompressionStats, Message, RenderContext};
use crate::session::{Memory, ToolCall, Turn};
use crate::value::Value;

/// The column where the `;` of an entry's comment starts.
const COMMENT_COLUMN: usize = 33;

/// The final-turn line (MSG-005).
pub const FINAL_TURN_LINE: &str =
    "FINAL TURN - you must call (return result) or (fail reason) now.";

/// The default strategy. Its limits come from the [`RenderContext`].
#[derive(Debug, Clone, Copy, Default)]
pub struct SingleUserCoalesced;

impl Compression for SingleUserCoalesced {
    fn name(&self) -> &str {
        "single-user-coalesced"
    }

    fn to_messages(
        &self,
        turns: &[Turn],
        memory: &Memory,
        ctx: &RenderContext,
    ) -> (Vec<Message>, CompressionStats) {
        // Turns up to the last success are summarized; the failed turns
        // after it stay whole.
        let split = turns.iter().rposition(|t| t.success).map_or(0, |i| i + 1);
        let (summarized, failing) = turns.split_at(split);

        let mut stats = CompressionStats {
            enabled: true,
            strategy: self.name().to_string(),
            turns_compressed: summarized.len(),
            error_turns_collapsed: summarized.iter().filter(|t| !t.success).count(),
            ..CompressionStats::default()
        };

        let mut out = String::with_capacity(4096);
        out.push_str(ctx.mission.trim_end());
        write_tool_section(&mut out, ctx);
        write_data_section(&mut out, ctx);
        write_user_section(&mut out, memory, summarized);

        if !summarized.is_empty() {
            let calls: Vec<(&Turn, &ToolCall)> = summarized
                .iter()
                .flat_map(|t| t.tool_calls.iter().map(move |c| (t, c)))
                .collect();
            stats.tool_calls_total += calls.len();
            if !calls.is_empty() {
                let skip = calls.len().saturating_sub(ctx.tool_call_limit);
                stats.tool_calls_shown += calls.len() - skip;
                section(&mut out);
                write_tool_calls(&mut out, &calls[skip..]);
            } else if !ctx.tools.is_empty() {
                section(&mut out);
                out.push_str(";; No tool calls made");
            }

            let prints: Vec<&str> = summarized
                .iter()
                .filter(|t| t.success)
                .flat_map(|t| t.prints.iter().map(String::as_str))
                .collect();
            stats.printlns_total += prints.len();
            if !prints.is_empty() {
                let skip = prints.len().saturating_sub(ctx.println_limit);
                stats.printlns_shown += prints.len() - skip;
                section(&mut out);
                write_output(&mut out, &prints[skip..]);
            }
        }

        write_signature(&mut out, ctx);
        section(&mut out);
        write_turns_left(&mut out, ctx.turns_left + failing.len());

        let mut messages = Vec::with_capacity(2 + 2 * failing.len());
        messages.push(Message::system(ctx.system_prompt.clone()));
        messages.push(Message::user(out));
        for (i, turn) in failing.iter().enumerate() {
            let left = ctx.turns_left + failing.len() - 1 - i;
            let calls: Vec<(&Turn, &ToolCall)> =
                turn.tool_calls.iter().map(|c| (turn, c)).collect();
            stats.tool_calls_total += calls.len();
            stats.tool_calls_shown += calls.len();
            let skip = turn.prints.len().saturating_sub(ctx.println_limit);
            stats.printlns_total += turn.prints.len();
            stats.printlns_shown += turn.prints.len() - skip;
            messages.push(Message::assistant(program_block(&turn.program)));
            messages.push(Message::user(failed_turn_feedback(
                turn, &calls, skip, left,
            )));
        }
        stats.tool_calls_dropped = stats.tool_calls_total - stats.tool_calls_shown;
        stats.printlns_dropped = stats.printlns_total - stats.printlns_shown;
        (messages, stats)
    }
}

/// Start a new section: a blank line after whatever came before (MSG-004).
pub(crate) fn section(out: &mut String) {
    if !out.is_empty() {
        out.push_str("\n\n");
    }
}

/// `entry`, padded so the comment's `;` lands on [`COMMENT_COLUMN`].
fn entry_line(out: &mut String, entry: &str, comment: &str) {
    out.push_str(entry);
    let width = entry.chars().count();
    let pad = COMMENT_COLUMN.saturating_sub(width).max(1);
    out.extend(std::iter::repeat_n(' ', pad));
    out.push_str("; ");
    out.push_str(comment);
}

/// Docstrings and descriptions on one comment line: `;` removed (DEF-007)
/// and line breaks turned into spaces, so the text cannot end the comment.
pub(crate) fn sanitize_comment(text: &str) -> String {
    text.replace(';', "")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// `;; === tool/ ===` (FMT-001, FMT-004).
pub(crate) fn write_tool_section(out: &mut String, ctx: &RenderContext) {
    if ctx.tools.is_empty() {
        return;
    }
    section(out);
    out.push_str(";; === tool/ ===");
    let mut entry = String::new();
    for tool in &ctx.tools {
        entry.clear();
        entry.push_str("(tool/");
        entry.push_str(&tool.name);
        for p in tool.signature.params() {
            entry.push(' ');
            entry.push_str(&p.name);
        }
        entry.push(')');
        let mut comment = tool.signature.render();
        let description = sanitize_comment(&tool.description);
        if !description.is_empty() {
            comment.push_str(" -- ");
            comment.push_str(&description);
        }
        out.push('\n');
        entry_line(out, &entry, &comment);
    }
}

/// `;; === data/ ===` (FMT-002, FMT-005, NS-008).
pub(crate) fn write_data_section(out: &mut String, ctx: &RenderContext) {
    if ctx.data.is_empty() {
        return;
    }
    section(out);
    out.push_str(";; === data/ ===");
    for (name, value) in &ctx.data {
        let mut comment = type_label(value);
        if let Some(s) = sample(value, FormatOptions::SAMPLE) {
            comment.push_str(", sample: ");
            comment.push_str(&s);
        }
        out.push('\n');
        entry_line(out, &format!("data/{name}"), &comment);
    }
}

/// `;; === user/ (your prelude) ===` (FMT-003, FMT-006..010). A value
/// shows its sample only when the turn that last defined it printed
/// nothing (SAM-001/002).
pub(crate) fn write_user_section(out: &mut String, memory: &Memory, turns: &[Turn]) {
    if memory.is_empty() {
        return;
    }
    let mut printed_when_defined: HashMap<&str, bool> = HashMap::new();
    for turn in turns.iter().filter(|t| t.success) {
        for name in &turn.defined {
            printed_when_defined.insert(name.as_str(), turn.printed());
        }
    }
    section(out);
    out.push_str(";; === user/ (your prelude) ===");
    let mut entry = String::new();
    let mut comment = String::new();
    for def in memory.iter() {
        entry.clear();
        comment.clear();
        let doc = def.doc.as_deref().map(sanitize_comment);
        let params = match &def.value {
            Value::Fn(f) => f.params(),
            _ => None,
        };
        out.push('\n');
        if let Some(params) = params {
            let _ = write!(entry, "({} {params})", def.name);
            if let Some(doc) = &doc {
                let _ = write!(comment, "\"{doc}\"");
            }
            if let Some(ret) = &def.last_return {
                if !comment.is_empty() {
                    comment.push(' ');
                }
                comment.push_str("-> ");
                comment.push_str(&type_label(ret));
            }
            if comment.is_empty() {
                out.push_str(&entry);
            } else {
                entry_line(out, &entry, &comment);
            }
        } else {
            if let Some(doc) = &doc {
                let _ = write!(comment, "\"{doc}\" ");
            }
            comment.push_str("= ");
            comment.push_str(&type_label(&def.value));
            let show_sample = !printed_when_defined
                .get(def.name.as_str())
                .copied()
                .unwrap_or(false);
            if show_sample {
                if let Some(s) = sample(&def.value, FormatOptions::SAMPLE) {
                    comment.push_str(", sample: ");
                    comment.push_str(&s);
                }
            }
            entry_line(out, &def.name, &comment);
        }
    }
}

/// `;; Tool calls made:` and one `;   name(args)` line per call
/// (FMT-011, FMT-012, TC-003). A call from a turn that printed nothing
/// whose result no `def` of that turn holds also shows ` -> result`
/// (TC-006, AMB-005); a failed call shows its error.
fn write_tool_calls(out: &mut String, calls: &[(&Turn, &ToolCall)]) {
    out.push_str(";; Tool calls made:");
    for (turn, call) in calls {
        out.push_str("\n;   ");
        out.push_str(&call.name);
        out.push('(');
        for (i, arg) in call.args.iter().enumerate() {
            if i > 0 {
                out.push(' ');
            }
            write_clojure(out, arg, FormatOptions::TOOL_ARGS);
        }
        out.push(')');
        if let Some(error) = &call.error {
            out.push_str(" -> error: ");
            out.push_str(&sanitize_comment(error));
        } else if let Some(result) = &call.result {
            if !turn.printed() && !bound_by_def(turn, result) {
                out.push_str(" -> ");
                write_clojure(out, result, FormatOptions::SAMPLE);
            }
        }
    }
}

/// True if a definition made by `turn` holds `value` (TC-005).
fn bound_by_def(turn: &Turn, value: &Value) -> bool {
    turn.success
        && turn
            .defined
            .iter()
            .any(|name| turn.memory.get(name).is_some_and(|e| e.value == *value))
}

/// `;; Output:` then each println call as printed (FMT-014, FMT-015).
fn write_output(out: &mut String, prints: &[&str]) {
    out.push_str(";; Output:");
    for p in prints {
        out.push('\n');
        out.push_str(p);
    }
}

/// The expected return signature, when the context has one.
pub(crate) fn write_signature(out: &mut String, ctx: &RenderContext) {
    if let Some(sig) = &ctx.signature {
        section(out);
        out.push_str(";; Expected return: ");
        out.push_str(&sanitize_comment(sig));
    }
}

/// `Turns left: N`, or the final-turn line when this is the last turn.
pub(crate) fn write_turns_left(out: &mut String, left: usize) {
    if left <= 1 {
        out.push_str(FINAL_TURN_LINE);
    } else {
        let _ = write!(out, "Turns left: {left}");
    }
}

/// A program as the model wrote it: a fenced code block.
pub(crate) fn program_block(program: &str) -> String {
    format!("```clojure\n{}\n```", program.trim_end())
}

/// The USER message after a failed turn: its error, the tool calls it
/// made, what it printed before failing, and the turns left (ERR-003).
pub(crate) fn failed_turn_feedback(
    turn: &Turn,
    calls: &[(&Turn, &ToolCall)],
    skip_prints: usize,
    turns_left: usize,
) -> String {
    let mut out = String::new();
    if let Some(error) = turn.error() {
        let _ = write!(out, "Error: {error}");
    }
    if !calls.is_empty() {
        section(&mut out);
        write_tool_calls(&mut out, calls);
    }
    if turn.prints.len() > skip_prints {
        let prints: Vec<&str> = turn.prints[skip_prints..]
            .iter()
            .map(String::as_str)
            .collect();
        section(&mut out);
        write_output(&mut out, &prints);
    }
    section(&mut out);
    write_turns_left(&mut out, turns_left);
    out
}
