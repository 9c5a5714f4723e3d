//! The token-budget options shared by `ptc agent` and `ptc compact`
//! (seed 004's policy, defaults from the seed).

use clap::{Args, ValueEnum};

use ptc_lisp::history::Policy;

/// Who writes compaction summaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SummaryKind {
    /// A deterministic digest of the pruned messages (no model call)
    Digest,
    /// A model, through a provider (`--llm`)
    Llm,
}

#[derive(Debug, Args)]
pub struct BudgetArgs {
    /// The model's context window, in tokens
    #[arg(long, value_name = "N", default_value_t = 128_000)]
    pub max_context_tokens: usize,
    /// Compact when a prompt reaches this share of the context window
    #[arg(long, value_name = "P", default_value_t = 0.85)]
    pub trigger_pct: f64,
    /// Tokens kept free for the reply and the next input
    #[arg(long, value_name = "N", default_value_t = 1_500)]
    pub hard_cap_buffer: usize,
    /// User turns kept verbatim when compacting (reduced one at a time
    /// while over budget)
    #[arg(long, value_name = "N", default_value_t = 6)]
    pub keep_recent_turns: usize,
    /// The cap on a summary's tokens
    #[arg(long, value_name = "N", default_value_t = 1_024)]
    pub max_summary_tokens: usize,
    /// Who writes the summary of what is compacted away
    #[arg(long, value_enum, default_value_t = SummaryKind::Digest)]
    pub summary: SummaryKind,
}

impl BudgetArgs {
    /// The policy these options describe, checked.
    pub fn policy(&self) -> Result<Policy, String> {
        let policy = Policy {
            max_context_tokens: self.max_context_tokens,
            trigger_pct: self.trigger_pct,
            hard_cap_buffer: self.hard_cap_buffer,
            keep_recent_turns: self.keep_recent_turns,
            max_summary_tokens: self.max_summary_tokens,
            ..Policy::default()
        };
        policy
            .validate("")
            .map_err(|e| format!("--{}", e.to_string().replace('_', "-")))?;
        Ok(policy)
    }
}
