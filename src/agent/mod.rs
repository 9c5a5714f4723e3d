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
//! - [`transcript`]: the JSONL record of a run;
//! - [`prompt`]: the generated system prompt;
//! - [`signature_check`]: checking a `(return v)` value against a
//!   signature, and the feedback for a mismatch;
//! - [`runner`]: the multi-turn loop ([`Agent`], [`AgentConfig`],
//!   [`AgentRun`]) and agents as tools of other agents ([`AgentTool`]).
//!
//! This is the one layer (with the REPL and the binary) allowed to touch
//! the network, processes and files; it does so only in `http`, `tools`,
//! `scripted` (reading its file) and `transcript`; `runner` reaches a
//! model only through the [`LlmProvider`] it is given. Everything else
//! here is pure.
//!
//! # One turn by hand
//!
//! The multi-turn loop builds on these parts; this is one turn of it, with
//! a scripted model and a fixed-response tool from a manifest:
//!
//! ```
//! use ptc_lisp::agent::{extract_program, ChatMessage, ChatRequest, LlmProvider,
//!                       ScriptedProvider, ToolManifest};
//! use ptc_lisp::agent::tools::ManifestFormat;
//! use ptc_lisp::error::{Error, ErrorKind};
//! use ptc_lisp::eval::{self, Globals, Host, Program, RunOptions, ToolContext};
//! use ptc_lisp::value::{from_json, pr_str, to_json, Value};
//!
//! struct Tools(ToolManifest);
//! impl Host for Tools {
//!     fn data(&self, _: &str) -> Option<Value> { None }
//!     fn has_tool(&self, name: &str) -> bool { self.0.get(name).is_some() }
//!     fn call_tool(&self, name: &str, args: &[Value], context: &ToolContext)
//!         -> Result<Value, Error> {
//!         let args = serde_json::Value::Array(args.iter().map(to_json).collect());
//!         let tool = self.0.get(name).expect("checked by has_tool");
//!         // Commands are stopped at the program's deadline.
//!         tool.call_in(args, context)
//!             .map(|v| from_json(&v))
//!             .map_err(|e| Error::new(ErrorKind::Tool, e))
//!     }
//! }
//!
//! let manifest = ToolManifest::parse(
//!     r#"{"tools": {"stock": {"signature": "-> :map", "response": {"laptop": 3, "phone": 5}}}}"#,
//!     "tools.json", ManifestFormat::Json).unwrap();
//! let model = ScriptedProvider::new(vec![
//!     "Sum the stock:\n```clojure\n(reduce + (vals (tool/stock)))\n```".to_string()]);
//!
//! let reply = model.complete(&ChatRequest::new(vec![
//!     ChatMessage::system("You write PTC-Lisp."),
//!     ChatMessage::user("How many items are in stock?")])).unwrap();
//! let found = extract_program(&reply.content).unwrap();
//! let program = Program::compile(&found.source).unwrap();
//! let out = eval::run(&program, &Tools(manifest), &Globals::default(), RunOptions::default());
//! assert_eq!(pr_str(&eval::finish(out.result).unwrap()), "8");
//! assert_eq!(out.tool_calls[0].name, "stock");
//! ```

pub mod anthropic;
pub mod history;
pub mod http;
pub mod message;
pub mod openai;
pub mod parse;
pub mod prompt;
pub mod provider;
pub mod replay;
pub mod runner;
pub mod scripted;
pub mod signature_check;
pub mod tools;
pub mod transcript;

pub use history::{ConversationMetrics, HistorySettings, LlmSummarizer, SummaryMode, SUMMARY_SEED};
pub use message::{ChatMessage, ChatRequest, ChatResponse, Role, Usage};
pub use parse::{extract_program, ExtractedProgram, ExtractionRule, NO_CODE_INSTRUCTION};
pub use prompt::{system_prompt, PromptOptions};
pub use provider::{provider_from_spec, LlmProvider, ProviderError, ProviderOptions};
pub use replay::{request_hash, RecordingProvider, ReplayProvider};
pub use runner::{
    eval_reply, prompt_messages, Agent, AgentConfig, AgentError, AgentOutcome, AgentRun, AgentTool,
    ModelCall, ModelOptions, Progress, Quiet, TurnReport,
};
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
