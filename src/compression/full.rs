//! The plain full history, for runs without compression: every turn as
//! the model's program (ASSISTANT) and what it produced (USER). No I/O.

use super::coalesced::{
    failed_turn_feedback, program_block, section, write_data_section, write_signature,
    write_tool_section, write_turns_left, write_user_section,
};
use super::format::{write_clojure, FormatOptions};
use super::{Message, RenderContext};
use crate::session::{Memory, Turn, TurnOutcome};

/// How much of a turn's result the full history shows.
const RESULT_FORMAT: FormatOptions = FormatOptions {
    limit: 100,
    printable_limit: 2000,
};

/// `[SYSTEM, USER(mission, tools, data), then ASSISTANT(program) /
/// USER(output, result or error) per turn]`; the last message ends with
/// the turns left (stated once per prompt).
pub fn full_history(turns: &[Turn], ctx: &RenderContext) -> Vec<Message> {
    full_history_from(turns, &Memory::default(), ctx)
}

/// [`full_history`] of a run that started with definitions in `user/`
/// (a prelude, or an earlier run on the same session): the first USER
/// message also lists, in a `user/` section, those of `memory` that no
/// turn of the run (re)defined, since the model cannot see them in any
/// program it wrote.
pub fn full_history_from(turns: &[Turn], memory: &Memory, ctx: &RenderContext) -> Vec<Message> {
    let mut messages = Vec::with_capacity(2 + 2 * turns.len());
    messages.push(Message::system(ctx.system_prompt.clone()));
    let mut first = String::new();
    first.push_str(ctx.mission.trim_end());
    write_tool_section(&mut first, ctx);
    write_data_section(&mut first, ctx);
    let defined_in_run: std::collections::HashSet<&str> = turns
        .iter()
        .flat_map(|t| t.defined.iter().map(String::as_str))
        .collect();
    let prelude = Memory::from_entries(
        memory
            .iter()
            .filter(|e| !defined_in_run.contains(e.name.as_str()))
            .cloned(),
    );
    write_user_section(&mut first, &prelude, &[]);
    write_signature(&mut first, ctx);
    if turns.is_empty() {
        section(&mut first);
        write_turns_left(&mut first, ctx.turns_left);
    }
    messages.push(Message::user(first));
    for (i, turn) in turns.iter().enumerate() {
        let left = (i + 1 == turns.len()).then_some(ctx.turns_left);
        messages.push(Message::assistant(program_block(&turn.program)));
        let feedback = match &turn.outcome {
            TurnOutcome::Error { .. } => failed_turn_feedback(turn, &[], 0, left),
            TurnOutcome::Value { value }
            | TurnOutcome::Return { value }
            | TurnOutcome::Fail { value } => {
                let mut out = String::new();
                if !turn.prints.is_empty() {
                    out.push_str(";; Output:");
                    for p in &turn.prints {
                        out.push('\n');
                        out.push_str(p);
                    }
                    section(&mut out);
                }
                out.push_str(match &turn.outcome {
                    TurnOutcome::Return { .. } => ";; Returned: ",
                    TurnOutcome::Fail { .. } => ";; Failed: ",
                    _ => ";; Result: ",
                });
                write_clojure(&mut out, value, RESULT_FORMAT);
                if let Some(left) = left {
                    section(&mut out);
                    write_turns_left(&mut out, left);
                }
                out
            }
        };
        messages.push(Message::user(feedback));
    }
    messages
}
