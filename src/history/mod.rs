//! History management for any chat-style agent loop: token budgets,
//! message windows, compaction with summaries, trace events, archive,
//! redaction and configuration (seeds 003 and 004).
//!
//! It works on plain provider message arrays and knows nothing of the
//! PTC-Lisp evaluator. The pure parts (counting, policies, compaction)
//! do no I/O; exporters (event sinks, archive) live in their own
//! submodules.
//!
//! The parts, each usable alone:
//! - [`Message`]: one OpenAI-compatible chat message type, unknown fields
//!   kept; [`parse_jsonl`] reads a history file with errors that name the
//!   line and the field.
//! - [`TokenCounter`]: per-model counts by section with a per-message cache.
//! - [`Compactor`]: seed 004's pre-flight check and compaction under a
//!   [`Policy`], with a [`Summarizer`] ([`Digest`] needs no model).
//! - [`Window`]: seed 003's sliding window under a [`WindowPolicy`].
//! - [`Event`]: every decision as a value, taken with `take_events`.
//!
//! ```
//! use ptc_lisp::history::{Compactor, Context, Digest, Message, Policy};
//!
//! let mut compactor = Compactor::new("gpt-4o", Policy { max_context_tokens: 4_000, ..Policy::default() }).unwrap();
//! let mut history = vec![Message::system("You are a careful coding agent.")];
//! for i in 0..60 {
//!     history.push(Message::user(format!("Look at src/module_{i}.rs and tell me what it does.")));
//!     history.push(Message::assistant("It parses the configuration. ".repeat(8)));
//! }
//! let out = compactor.manual_compact(&history, "user-requested", &Digest, Context::default()).unwrap();
//! assert!(out.tokens.total() <= compactor.policy().budget());
//! assert!(out.messages[1].text().starts_with("<COMPACT-SUMMARY v1>"));
//! ```

pub mod archive;
mod carry;
mod compact;
pub mod config;
mod content;
mod count;
mod digest;
pub mod event;
mod failure;
mod layout;
mod message;
mod policy;
pub mod recorder;
pub mod redact;
pub mod s3;
mod summary;
pub mod trace;
mod units;
mod window;
mod yaml_depth;

pub use carry::Carry;
pub use compact::{CompactError, Compactor, Context, EventSink, Outcome, Report, Trigger};
pub use content::{Content, ImageRates};
pub use count::{
    tools_schema_tokens, Breakdown, TokenCounter, REPLY_PRIMING, TOKENS_PER_MESSAGE,
    TOKENS_PER_NAME,
};
pub use digest::Digest;
pub use event::Event;
pub use message::{
    parse_jsonl, parse_jsonl_numbered, to_jsonl, LineError, Message, Meta, NotAnAgentMessage, Role,
    ToolCallSummary,
};
pub use policy::{Policy, PolicyError, Strategy, WindowPolicy};
pub use summary::{
    summary_body, summary_message, summary_version, Summarizer, SummaryError, SummaryRequest,
    DEFAULT_SUMMARY_DEADLINE, SUMMARY_TAG,
};
pub use units::{units, StructureError, Unit};
pub use window::{Metrics, Trim, Window};
