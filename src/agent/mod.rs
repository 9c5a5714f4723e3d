//! The agent layer: what a multi-turn LLM run needs around the evaluator.
//!
//! - [`message`]: provider-neutral chat messages, requests and responses;
//! - [`provider`]: the [`LlmProvider`] trait, [`ProviderError`] and
//!   [`provider_from_spec`] (`openai:MODEL`, `anthropic:MODEL`,
//!   `script:FILE`);
//! - [`openai`], [`anthropic`]: HTTP clients over the shared transport in
//!   [`http`] (timeouts, retries, backoff);
//! - [`scripted`]: a provider that replays prepared replies;
//! - [`parse`]: finding the program in a model's reply;
//! - [`tools`]: the command-line tool manifest and command tools;
//! - [`transcript`]: the JSONL record of a run.
//!
//! This is the one layer (with the REPL and the binary) allowed to touch
//! the network, processes and files; it does so only in `http`, `tools`,
//! `scripted` (reading its file) and `transcript`. Everything else here is
//! pure.

pub mod anthropic;
pub mod http;
pub mod message;
pub mod openai;
pub mod parse;
pub mod provider;
pub mod scripted;
pub mod tools;
pub mod transcript;

pub use message::{ChatMessage, ChatRequest, ChatResponse, Role, Usage};
pub use parse::{extract_program, ExtractedProgram, ExtractionRule, NO_CODE_INSTRUCTION};
pub use provider::{provider_from_spec, LlmProvider, ProviderError, ProviderOptions};
pub use scripted::ScriptedProvider;
pub use tools::{CommandTool, ManifestError, ToolImpl, ToolManifest, ToolSpec};
pub use transcript::{TranscriptEntry, TranscriptToolCall, TranscriptWriter};

/// `text` cut to at most `max_chars` characters, with `…` marking a cut.
pub(crate) fn truncate(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn truncation_counts_characters() {
        assert_eq!(super::truncate("héllo", 2), "hé…");
        assert_eq!(super::truncate("hé", 2), "hé");
    }
}
