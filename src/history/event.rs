//! The structured events of the history layer: one value per decision
//! (seed 004's `compact.*` events plus our own for windows). Producing
//! them is pure; writing them somewhere is a sink's job.

use serde::Serialize;

use super::count::Breakdown;
use super::policy::Strategy;

/// The policy figures a trigger decision was made under.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PolicySnapshot {
    pub trigger_pct: f64,
    pub hard_cap_buffer: usize,
    pub strategy: Strategy,
}

/// What a compaction kept, by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct KeptCounts {
    /// Protected messages and messages of never-pruned roles.
    pub pinned: usize,
    /// User turns kept verbatim (after any reduction).
    pub recent_turns: usize,
    /// Tool call groups kept verbatim (after any reduction).
    pub tool_pairs: usize,
}

/// The three layers of a compacted history, in messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Layers {
    pub pinned: usize,
    pub summary: usize,
    pub recent: usize,
}

/// One decision of the history layer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event")]
pub enum Event {
    /// A pre-flight estimate of the next request.
    #[serde(rename = "compact.token_estimate")]
    TokenEstimate {
        model: String,
        t_est: usize,
        max_tokens: usize,
        usage_pct: f64,
        breakdown: Breakdown,
    },
    /// Whether this request compacts, and why.
    #[serde(rename = "compact.trigger_decision")]
    TriggerDecision {
        triggered: bool,
        reason: String,
        policy: PolicySnapshot,
        /// The note of a manual compaction.
        #[serde(skip_serializing_if = "Option::is_none")]
        note: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        kept: Option<KeptCounts>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pruned_count: Option<usize>,
    },
    /// A summary was written.
    #[serde(rename = "compact.summary_created")]
    SummaryCreated {
        /// The strategy that wrote it (`brief` after a refusal).
        strategy: Strategy,
        /// Each fallback taken before it was written, in order
        /// (`brief strategy`, `retry with max_tokens 512`).
        fallbacks: Vec<String>,
        summarizer: String,
        input_messages: usize,
        input_tokens: usize,
        summary_tokens: usize,
        compression_ratio: f64,
        version: u32,
        summary: String,
        /// How long the summarizer took (retries and fallbacks included).
        duration_ms: u64,
    },
    /// Messages were removed from the history.
    #[serde(rename = "compact.pruned_messages")]
    PrunedMessages {
        pruned: usize,
        layers: Layers,
        tokens_before: usize,
        tokens_after: usize,
        keep_recent_turns: usize,
        keep_tool_io_pairs: usize,
    },
    /// Something failed; `fallback` says what was done instead.
    #[serde(rename = "compact.error")]
    Error {
        status: &'static str,
        error_type: String,
        message: String,
        fallback: String,
    },
    /// A keep count was reduced because the history was still over budget.
    #[serde(rename = "compact.policy_reduced")]
    PolicyReduced {
        keep_recent_turns: usize,
        keep_tool_io_pairs: usize,
        tokens: usize,
        budget: usize,
    },
    /// The sliding window evicted messages (seed 003).
    #[serde(rename = "window.trimmed")]
    WindowTrimmed {
        total_messages: usize,
        preserved_messages: usize,
        evicted_messages: usize,
        estimated_tokens: usize,
        summarized: bool,
    },
    /// A summary was skipped, and why (seed 003's rate limit, or nothing
    /// meaningful to summarize).
    #[serde(rename = "window.summary_skipped")]
    SummarySkipped { reason: String },
    /// The window's preserve settings exceed its maximum.
    #[serde(rename = "window.warning")]
    WindowWarning { message: String },
}

impl Event {
    /// The event's name (`compact.token_estimate`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            Event::TokenEstimate { .. } => "compact.token_estimate",
            Event::TriggerDecision { .. } => "compact.trigger_decision",
            Event::SummaryCreated { .. } => "compact.summary_created",
            Event::PrunedMessages { .. } => "compact.pruned_messages",
            Event::Error { .. } => "compact.error",
            Event::PolicyReduced { .. } => "compact.policy_reduced",
            Event::WindowTrimmed { .. } => "window.trimmed",
            Event::SummarySkipped { .. } => "window.summary_skipped",
            Event::WindowWarning { .. } => "window.warning",
        }
    }

    pub(crate) fn error(error_type: &str, message: impl Into<String>, fallback: &str) -> Event {
        Event::Error {
            status: "error",
            error_type: error_type.to_string(),
            message: message.into(),
            fallback: fallback.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_serialize_with_their_name() {
        let e = Event::error("InsufficientBudget", "too big", "none");
        let json = serde_json::to_value(&e).unwrap();
        assert_eq!(json["event"], e.name());
        assert_eq!(json["status"], "error");
    }
}
