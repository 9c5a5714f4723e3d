//! History management for any chat-style agent loop: token budgets,
//! message windows, compaction with summaries, trace events, archive,
//! redaction and configuration (seeds 003 and 004).
//!
//! It works on plain provider message arrays and knows nothing of the
//! PTC-Lisp evaluator. The pure parts (counting, policies, compaction)
//! do no I/O; exporters (event sinks, archive) live in their own
//! submodules.
