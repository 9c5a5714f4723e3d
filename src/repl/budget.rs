//! `:budget` and `:compact`: the next prompt measured against the token
//! budget, and compaction on request (kept in force for later prompts).

use std::fmt::Write as _;

use crate::compression::{self, session_state};
use crate::history::{Context, Digest, Event, Message, Outcome, Summarizer};

use super::Repl;

/// Messages at the start of every prompt that are never compacted: the
/// system prompt and the first user message (the mission, or with
/// compression the whole rendered history).
pub(super) const PINNED: usize = 2;

impl Repl {
    /// The next prompt as it would be sent: the compaction in force
    /// applied to the freshly rendered `full` prompt.
    pub(super) fn with_carry(&self, full: Vec<compression::Message>) -> Vec<compression::Message> {
        if self.carry.summary().is_none() {
            return full;
        }
        let full: Vec<Message> = full.into_iter().map(Message::from).collect();
        to_chat(self.carry.apply(&full))
    }

    /// `:budget`: the next prompt's tokens by section, against the budget
    /// and the trigger.
    pub(super) fn budget_text(&mut self) -> String {
        let prompt: Vec<Message> = self.next_prompt().into_iter().map(Message::from).collect();
        let counter = self.compactor.counter_mut();
        let b = counter.count(&prompt);
        let model = counter.token_model();
        let policy = self.compactor.policy();
        let mut out = String::new();
        let _ = writeln!(
            out,
            "next prompt: {} tokens of a {}-token budget (max_context_tokens {} - hard_cap_buffer {}); compaction triggers at {} ({}%)",
            b.total(),
            policy.budget(),
            policy.max_context_tokens,
            policy.hard_cap_buffer,
            policy.trigger_tokens(),
            policy.trigger_pct * 100.0
        );
        for (name, n) in [
            ("system", b.system),
            ("developer", b.developer),
            ("tools", b.tools_schema),
            ("messages", b.messages),
        ] {
            let _ = writeln!(out, "  {name:<10}{n:>8}");
        }
        let exactness = if model.is_exact() {
            "exact".to_string()
        } else {
            format!(
                "approximated: x{:.2} for {}",
                model.factor,
                model.family.name()
            )
        };
        let _ = write!(
            out,
            "  counted for {} ({}, {exactness})",
            self.config.counting_model,
            model.encoding.name()
        );
        if let Some(summary) = self.carry.summary() {
            let _ = write!(
                out,
                "\n  a compaction is in force: {} stands for the earliest turns",
                summary.text().lines().next().unwrap_or("")
            );
        }
        out
    }

    /// `:compact [note]`: compact the next prompt now. Returns true when
    /// it failed.
    pub(super) fn compact_now(&mut self, note: &str) -> bool {
        let note = if note.is_empty() {
            "user-requested"
        } else {
            note
        };
        let full: Vec<Message> = self
            .render_prompt()
            .into_iter()
            .map(Message::from)
            .collect();
        let effective = self.carry.apply(&full);
        let keep = self.compactor.policy().keep_recent_turns;
        let turns = self.session.turns();
        let state = session_state(
            &turns[..turns.len().saturating_sub(keep)],
            self.session.memory(),
        );
        let context = Context {
            state: (!state.is_empty()).then_some(state.as_str()),
        };
        let outcome = self
            .compactor
            .manual_compact(&effective, note, &Digest, context);
        let events = self.compactor.take_events();
        if let Some(Ok(mut recorder)) = self.config.recorder.as_ref().map(|r| r.lock()) {
            recorder.events(&events);
            if let Ok(Outcome {
                report: Some(report),
                messages,
                ..
            }) = &outcome
            {
                let strategy = self.compactor.policy().strategy;
                recorder.round(
                    &effective,
                    messages,
                    report,
                    strategy.as_str(),
                    &Digest.name(),
                    Some(note),
                );
            }
        }
        match outcome {
            Ok(outcome) => match &outcome.report {
                Some(report) if self.carry.absorb(full.len(), &effective, &outcome.messages) => {
                    self.out
                        .note(&format!("compacted: {report} (:context shows the result)"));
                    false
                }
                Some(_) => {
                    self.out.error(
                        "the compacted prompt cannot be kept for later turns; nothing changed",
                    );
                    true
                }
                None => {
                    let grows = events.iter().rev().find_map(|e| match e {
                        Event::TriggerDecision {
                            triggered: false,
                            reason,
                            ..
                        } if reason.starts_with("manual:") => Some(reason.clone()),
                        _ => None,
                    });
                    if let Some(reason) = grows {
                        self.out.note(&format!("not compacted: {reason}"));
                        return false;
                    }
                    let why = if full.len() <= PINNED {
                        "the next prompt is the system prompt and one user message, both protected (with compression on, the REPL renders every turn into that message: start it with --no-compression to compact turn by turn)"
                    } else {
                        "every turn is within the keep policies (keep_recent_turns)"
                    };
                    self.out.note(&format!("nothing to compact: {why}"));
                    false
                }
            },
            Err(e) => {
                self.out.error(&e.to_string());
                true
            }
        }
    }
}

/// The REPL's prompts hold system, user and assistant text only.
fn to_chat(messages: Vec<Message>) -> Vec<compression::Message> {
    messages
        .into_iter()
        .map(|mut m| {
            m.meta = None;
            compression::Message::try_from(m)
                .unwrap_or_else(|e| compression::Message::user(format!("({e})")))
        })
        .collect()
}
