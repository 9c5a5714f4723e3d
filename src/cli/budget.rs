//! The history-layer options shared by `ptc agent` and `ptc compact`:
//! the token budget (seed 004's policy), the sliding window (seed 003)
//! and the exports (events, archive, redaction), layered over the configuration file and the
//! `COMPACT_*` environment variables. A flag given wins; a flag not
//! given leaves the value to the file, the environment or the default.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use ptc_lisp::history::config::{self, Loaded, Overrides};

/// Who writes compaction summaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SummaryKind {
    /// A deterministic digest of the pruned messages (no model call)
    Digest,
    /// A model, through a provider
    Llm,
}

#[derive(Debug, Args)]
pub struct BudgetArgs {
    /// The history layer's configuration file (TOML, YAML or JSON) [default: ptc.toml if present]
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The model's context window, in tokens [default: 128000]
    #[arg(long, value_name = "N")]
    pub max_context_tokens: Option<usize>,
    /// Compact when a prompt reaches this share of the context window [default: 0.85]
    #[arg(long, value_name = "P")]
    pub trigger_pct: Option<f64>,
    /// Tokens kept free for the reply and the next input [default: 1500]
    #[arg(long, value_name = "N")]
    pub hard_cap_buffer: Option<usize>,
    /// User turns kept verbatim when compacting (reduced one at a time while over budget) [default: 6]
    #[arg(long, value_name = "N")]
    pub keep_recent_turns: Option<usize>,
    /// The cap on a summary's tokens [default: 1024]
    #[arg(long, value_name = "N")]
    pub max_summary_tokens: Option<usize>,
    /// Who writes the summary of what is compacted away [default: digest]
    #[arg(long, value_enum)]
    pub summary: Option<SummaryKind>,
    /// The most one round's summary may take, retries included, in
    /// milliseconds; past it the round prunes only [default: 30000]
    #[arg(long, value_name = "MS")]
    pub summary_deadline_ms: Option<u64>,
    /// Append every history event as a JSON line to FILE
    #[arg(long, value_name = "FILE")]
    pub events: Option<PathBuf>,
    /// POST every history event as JSON to URL/ingest (in the background)
    #[arg(long, value_name = "URL")]
    pub events_url: Option<String>,
    /// Archive each compaction round (transcript before, summary, events)
    /// under DIR/SESSION_ID/ or s3://BUCKET/PREFIX/SESSION_ID/
    #[arg(long, value_name = "DIR|s3://BUCKET/PREFIX")]
    pub archive: Option<String>,
    /// The session id events and archives are filed under [default: time and process id]
    #[arg(long, value_name = "ID")]
    pub session_id: Option<String>,
    /// Export events and archives without redacting secrets (warned about)
    #[arg(long)]
    pub no_redaction: bool,
}

impl BudgetArgs {
    /// The flags given, as configuration overrides.
    pub fn overrides(&self) -> Overrides {
        let mut o = Overrides::default();
        if let Some(v) = self.max_context_tokens {
            o.set("max_context_tokens", "--max-context-tokens", v);
        }
        if let Some(v) = self.trigger_pct {
            o.set("policy.trigger_pct", "--trigger-pct", v);
        }
        if let Some(v) = self.hard_cap_buffer {
            o.set("policy.hard_cap_buffer", "--hard-cap-buffer", v);
        }
        if let Some(v) = self.keep_recent_turns {
            o.set("policy.keep_recent_turns", "--keep-recent-turns", v);
        }
        if let Some(v) = self.max_summary_tokens {
            o.set("policy.max_summary_tokens", "--max-summary-tokens", v);
        }
        if let Some(v) = self.summary {
            let mode = match v {
                SummaryKind::Digest => "digest",
                SummaryKind::Llm => "llm",
            };
            o.set("summary.mode", "--summary", mode);
        }
        if let Some(v) = self.summary_deadline_ms {
            o.set("summary.deadline_ms", "--summary-deadline-ms", v);
        }
        if let Some(v) = &self.events {
            o.set("events.file", "--events", v);
        }
        if let Some(v) = &self.events_url {
            o.set("events.url", "--events-url", v);
        }
        if let Some(target) = &self.archive {
            match target.strip_prefix("s3://") {
                Some(rest) => {
                    let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
                    o.set("storage.adapter", "--archive", "s3");
                    o.set("storage.bucket", "--archive", bucket);
                    o.set("storage.prefix", "--archive", prefix.trim_matches('/'));
                }
                None => {
                    o.set("storage.adapter", "--archive", "fs");
                    o.set("storage.path", "--archive", target);
                }
            }
        }
        if self.no_redaction {
            o.set("redaction.enabled", "--no-redaction", false);
        }
        o
    }

    /// The configuration: defaults, file, environment, these flags.
    pub fn load(&self, extra: Overrides) -> Result<Loaded, String> {
        let mut overrides = self.overrides();
        overrides.extend(extra);
        config::load(self.config.as_deref(), overrides).map_err(|e| e.to_string())
    }

    /// The session id to file events and archives under.
    pub fn session_id(&self) -> String {
        self.session_id
            .clone()
            .unwrap_or_else(ptc_lisp::history::trace::new_session_id)
    }
}

/// Seed 003's sliding window, for `ptc agent` and `ptc compact`.
#[derive(Debug, Args)]
pub struct WindowArgs {
    /// Keep each request within N messages by evicting the oldest of the
    /// middle of the conversation (seed 003's window; 0: off) [default: 0]
    #[arg(long, value_name = "N")]
    pub window_max_messages: Option<usize>,
    /// With the window: messages at the start always kept [default: 1]
    #[arg(long, value_name = "N")]
    pub window_first: Option<usize>,
    /// With the window: messages at the end always kept [default: 20]
    #[arg(long, value_name = "N")]
    pub window_last: Option<usize>,
    /// With the window: replace what it evicts with a summary (at most
    /// one per `window.summary_every_evicted` messages evicted)
    #[arg(long)]
    pub window_summarize: bool,
}

impl WindowArgs {
    /// The flags given, as configuration overrides.
    pub fn overrides(&self) -> Overrides {
        let mut o = Overrides::default();
        if let Some(n) = self.window_max_messages {
            o.set("window.max_messages", "--window-max-messages", n);
        }
        if let Some(n) = self.window_first {
            o.set("window.preserve_first_n", "--window-first", n);
        }
        if let Some(n) = self.window_last {
            o.set("window.preserve_last_n", "--window-last", n);
        }
        if self.window_summarize {
            o.set("window.summarize_on_trim", "--window-summarize", true);
        }
        o
    }
}
