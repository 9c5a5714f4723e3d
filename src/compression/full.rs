//! The plain full history, for runs without compression: every turn as
//! the model's program (ASSISTANT) and what it produced (USER). No I/O.

use super::coalesced::{
    failed_turn_feedback, program_block, section, write_data_section, write_signature,
    write_tool_section, write_turns_left,
};
use super::format::{write_clojure, FormatOptions};
use super::{Message, RenderContext};
use crate::session::{Turn, TurnOutcome};

/// How much of a turn's result the full history shows.
const RESULT_FORMAT: FormatOptions = FormatOptions {
    limit: 100,
    printable_limit: 2000,
};

/// `[SYSTEM, USER(mission, tools, data), then ASSISTANT(program) /
/// USER(output, result or error) per turn]`; the last message ends with
/// the turns left (stated once per prompt).
pub fn full_history(turns: &[Turn], ctx: &RenderContext) -> Vec<Message> {
    let mut messages = Vec::with_capacity(2 + 2 * turns.len());
    messages.push(Message::system(ctx.system_prompt.clone()));
    let mut first = String::new();
    first.push_str(ctx.mission.trim_end());
    write_tool_section(&mut first, ctx);
    write_data_section(&mut first, ctx);
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
