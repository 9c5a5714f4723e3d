//! The settings of the history layer, named as seed 004 (token budget)
//! and seed 003 (message window) name them, with their defaults and a
//! validation whose errors name the field path. No I/O.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::message::Role;

/// How a summary is written (seed 004's strategies).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// Goals, entities, constraints, decisions, open actions, sources.
    #[default]
    TaskState,
    /// A chronological ledger of decisions.
    DecisionLog,
    /// Diff-like bullets per file changed.
    CodeDelta,
    /// A few sentences; the fallback when a model refuses the others.
    Brief,
}

impl Strategy {
    pub const ALL: [Strategy; 4] = [
        Strategy::TaskState,
        Strategy::DecisionLog,
        Strategy::CodeDelta,
        Strategy::Brief,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::TaskState => "task_state",
            Strategy::DecisionLog => "decision_log",
            Strategy::CodeDelta => "code_delta",
            Strategy::Brief => "brief",
        }
    }

    pub fn parse(name: &str) -> Option<Strategy> {
        Strategy::ALL.into_iter().find(|s| s.as_str() == name)
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The default `target_after_compaction`: half the budget, so a
/// compaction leaves room for many turns before the next one while the
/// recent turns the agent needs stay verbatim. Measured on the fidelity
/// corpus (BENCHMARKS.md, `target_sweep`): the low end of the range
/// where a higher target still buys facts cheaply per extra compaction.
pub const DEFAULT_TARGET_AFTER_COMPACTION: f64 = 0.5;

/// Token-budget compaction settings (seed 004's `policy`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Policy {
    /// The model's context window.
    pub max_context_tokens: usize,
    /// Compact automatically once a prompt reaches this share of
    /// `max_context_tokens` (0 < p <= 1).
    pub trigger_pct: f64,
    /// Tokens kept free for the next input and tool responses:
    /// the budget is `max_context_tokens - hard_cap_buffer`.
    pub hard_cap_buffer: usize,
    /// The most recent user turns kept verbatim.
    pub keep_recent_turns: usize,
    /// The most recent tool call/result groups kept verbatim.
    pub keep_tool_io_pairs: usize,
    /// Roles whose messages are never pruned.
    pub roles_never_prune: Vec<Role>,
    /// How summaries are written.
    pub strategy: Strategy,
    /// The cap on a summary's tokens.
    pub max_summary_tokens: usize,
    /// After a compaction the prompt is filled with recent whole turns up
    /// to this share of the budget (0 < t <= 1); `keep_recent_turns` are
    /// kept even above it, while they fit the budget.
    pub target_after_compaction: f64,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            max_context_tokens: 128_000,
            trigger_pct: 0.85,
            hard_cap_buffer: 1_500,
            keep_recent_turns: 6,
            keep_tool_io_pairs: 4,
            roles_never_prune: vec![Role::System, Role::Developer],
            strategy: Strategy::TaskState,
            max_summary_tokens: 1_024,
            target_after_compaction: DEFAULT_TARGET_AFTER_COMPACTION,
        }
    }
}

/// A setting out of range; the message starts with the field path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path} {message}")]
pub struct PolicyError {
    pub path: String,
    pub message: String,
}

impl PolicyError {
    fn new(path: &str, message: impl Into<String>) -> Self {
        PolicyError {
            path: path.to_string(),
            message: message.into(),
        }
    }
}

impl Policy {
    /// `max_context_tokens - hard_cap_buffer`: what a compacted prompt
    /// may use.
    pub fn budget(&self) -> usize {
        self.max_context_tokens.saturating_sub(self.hard_cap_buffer)
    }

    /// The size a compaction fills the prompt up to with recent turns.
    pub fn target_tokens(&self) -> usize {
        (self.budget() as f64 * self.target_after_compaction).floor() as usize
    }

    /// The prompt size at which compaction triggers.
    pub fn trigger_tokens(&self) -> usize {
        (self.max_context_tokens as f64 * self.trigger_pct).floor() as usize
    }

    /// Check every field; `prefix` is the path of this policy in its
    /// configuration (`policy`, say) and starts each error's path.
    pub fn validate(&self, prefix: &str) -> Result<(), PolicyError> {
        let path = |field: &str| {
            if prefix.is_empty() {
                field.to_string()
            } else {
                format!("{prefix}.{field}")
            }
        };
        if self.max_context_tokens == 0 {
            return Err(PolicyError::new(
                &path("max_context_tokens"),
                "must be at least 1",
            ));
        }
        if !(self.trigger_pct > 0.0 && self.trigger_pct <= 1.0) {
            return Err(PolicyError::new(
                &path("trigger_pct"),
                format!("must be 0.0-1.0 (above 0), got {}", self.trigger_pct),
            ));
        }
        if self.hard_cap_buffer >= self.max_context_tokens {
            return Err(PolicyError::new(
                &path("hard_cap_buffer"),
                format!(
                    "must be below max_context_tokens ({}), got {}",
                    self.max_context_tokens, self.hard_cap_buffer
                ),
            ));
        }
        if self.keep_recent_turns == 0 {
            return Err(PolicyError::new(
                &path("keep_recent_turns"),
                "must be at least 1",
            ));
        }
        if self.keep_tool_io_pairs == 0 {
            return Err(PolicyError::new(
                &path("keep_tool_io_pairs"),
                "must be at least 1",
            ));
        }
        if !(self.target_after_compaction > 0.0 && self.target_after_compaction <= 1.0) {
            return Err(PolicyError::new(
                &path("target_after_compaction"),
                format!(
                    "must be 0.0-1.0 (above 0), got {}",
                    self.target_after_compaction
                ),
            ));
        }
        if self.max_summary_tokens < 16 {
            return Err(PolicyError::new(
                &path("max_summary_tokens"),
                format!("must be at least 16, got {}", self.max_summary_tokens),
            ));
        }
        if self.max_summary_tokens >= self.budget() {
            return Err(PolicyError::new(
                &path("max_summary_tokens"),
                format!(
                    "must be below the budget (max_context_tokens - hard_cap_buffer = {}), got {}",
                    self.budget(),
                    self.max_summary_tokens
                ),
            ));
        }
        Ok(())
    }

    /// True when `role` is never pruned under this policy.
    pub fn never_prunes(&self, role: Role) -> bool {
        self.roles_never_prune.contains(&role)
    }
}

/// Sliding-window settings (seed 003's `ConversationHistoryConfig`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WindowPolicy {
    /// The most messages kept; 0 turns the window off.
    pub max_messages: usize,
    /// Replace evicted messages with a summary.
    pub summarize_on_trim: bool,
    /// Messages at the start always kept (the initial context).
    pub preserve_first_n: usize,
    /// Messages at the end always kept.
    pub preserve_last_n: usize,
    /// At most one summary per this many evicted messages.
    pub summary_every_evicted: usize,
}

impl Default for WindowPolicy {
    fn default() -> Self {
        WindowPolicy {
            max_messages: 100,
            summarize_on_trim: false,
            preserve_first_n: 1,
            preserve_last_n: 20,
            summary_every_evicted: 10,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sensible_defaults() {
        let p = Policy::default();
        assert_eq!(p.trigger_pct, 0.85);
        assert_eq!(p.hard_cap_buffer, 1500);
        assert_eq!(p.keep_recent_turns, 6);
        assert_eq!(p.keep_tool_io_pairs, 4);
        assert_eq!(p.roles_never_prune, [Role::System, Role::Developer]);
        assert_eq!(p.strategy, Strategy::TaskState);
        assert!(p.validate("policy").is_ok());
        let w = WindowPolicy::default();
        assert_eq!(
            (w.max_messages, w.preserve_first_n, w.preserve_last_n),
            (100, 1, 20)
        );
        assert!(!w.summarize_on_trim);
    }

    #[test]
    fn validation_names_the_field_path() {
        let p = Policy {
            trigger_pct: 1.5,
            ..Policy::default()
        };
        let e = p.validate("policy").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("policy.trigger_pct must be 0.0-1.0"),
            "{e}"
        );
        let p = Policy {
            hard_cap_buffer: 200_000,
            ..Policy::default()
        };
        assert_eq!(p.validate("").unwrap_err().path, "hard_cap_buffer");
    }

    #[test]
    fn policy_reads_from_json_with_defaults() {
        let p: Policy =
            serde_json::from_str(r#"{"trigger_pct": 0.9, "strategy": "code_delta"}"#).unwrap();
        assert_eq!(p.trigger_pct, 0.9);
        assert_eq!(p.strategy, Strategy::CodeDelta);
        assert_eq!(p.keep_recent_turns, 6);
        assert!(serde_json::from_str::<Policy>(r#"{"trigger": 1}"#).is_err());
    }
}
