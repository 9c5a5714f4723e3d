//! The facts of a session that a summary of compacted history must keep
//! (the digest's "State" section): definitions with their types, the
//! tool calls of the compacted turns, and each failure with the turn
//! that resolved it. No I/O.

use super::format::type_label;
use crate::session::{Memory, Turn, TurnOutcome};
use crate::value::pr_str;

/// Facts of a PTC-Lisp session the digest keeps: each definition with
/// its type, the tool calls of the compacted turns, and their failures
/// with the turn that resolved each (or "unresolved").
pub fn session_state(turns: &[Turn], memory: &Memory) -> String {
    let mut out = String::new();
    for entry in memory.iter() {
        out.push_str(&format!(
            "defined {} : {}\n",
            entry.name,
            type_label(&entry.value)
        ));
    }
    for (i, turn) in turns.iter().enumerate() {
        for call in turn.tool_calls.iter() {
            let args: Vec<String> = call.args.iter().map(pr_str).collect();
            let mut line = format!(
                "turn {} called tool/{}({})",
                turn.number,
                call.name,
                args.join(" ")
            );
            if line.chars().count() > 160 {
                line = line.chars().take(157).collect::<String>() + "...";
            }
            out.push_str(&line);
            out.push('\n');
        }
        if let TurnOutcome::Error { error } = &turn.outcome {
            let resolved = turns[i + 1..].iter().find(|t| t.success).map(|t| t.number);
            let status = match resolved {
                Some(n) => format!("resolved in turn {n}"),
                None => "unresolved".to_string(),
            };
            out.push_str(&format!(
                "turn {} failed ({}): {} - {status}\n",
                turn.number,
                error.code,
                error.message.lines().next().unwrap_or("")
            ));
        }
    }
    out
}
