//! Summaries of the pruned part of a history: the [`Summarizer`] trait,
//! what a summarizer is asked, and the rolling `<COMPACT-SUMMARY vN>`
//! message that carries the answer. No I/O.

use super::message::{Message, Role};
use super::policy::Strategy;
use crate::tokens::TokenModel;

/// The first characters of every summary message.
pub const SUMMARY_TAG: &str = "<COMPACT-SUMMARY v";

/// What a summarizer is asked to condense.
#[derive(Debug, Clone, Copy)]
pub struct SummaryRequest<'a> {
    pub strategy: Strategy,
    /// The summary's token limit (the policy's `max_summary_tokens`, or
    /// less on a retry).
    pub max_tokens: usize,
    /// The pruned messages, in order; never a protected one.
    pub messages: &'a [Message],
    /// The body of the summary this one replaces, if any: its facts must
    /// carry over.
    pub previous: Option<&'a str>,
    /// Facts the host knows besides the messages (for PTC-Lisp sessions,
    /// the interpreter's definitions, tool calls and failures).
    pub state: Option<&'a str>,
    /// The note of a manual compaction.
    pub note: Option<&'a str>,
    /// How the caller counts tokens, so a summarizer can keep within
    /// `max_tokens`.
    pub model: TokenModel,
}

/// Why no summary was written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SummaryError {
    /// The model declined (content policy, say): retried with `brief`.
    #[error("the summarizer refused: {0}")]
    Refused(String),
    /// The call failed (network, API error): the compaction prunes only.
    #[error("the summarizer failed: {0}")]
    Failed(String),
}

/// Writes the summary of a pruned part of a history.
pub trait Summarizer {
    /// A short name for events and reports (`digest`, `llm:gpt-4o`).
    fn name(&self) -> String;

    /// The summary body (without the `<COMPACT-SUMMARY vN>` line).
    fn summarize(&self, request: &SummaryRequest<'_>) -> Result<String, SummaryError>;
}

/// The version of a summary message (`Some(3)` for `<COMPACT-SUMMARY v3>`),
/// `None` for any other message.
pub fn summary_version(m: &Message) -> Option<u32> {
    if m.role != Role::Assistant {
        return None;
    }
    let rest = m.text().strip_prefix(SUMMARY_TAG)?;
    let digits = rest.split('>').next()?;
    digits.parse().ok()
}

/// The body of a summary message (what follows its first line).
pub fn summary_body(m: &Message) -> &str {
    m.text().split_once('\n').map_or("", |(_, body)| body)
}

/// The summary message for version `version`.
pub fn summary_message(version: u32, body: &str) -> Message {
    Message::assistant(format!("{SUMMARY_TAG}{version}>\n{body}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_messages_carry_their_version() {
        let m = summary_message(3, "facts");
        assert_eq!(summary_version(&m), Some(3));
        assert_eq!(summary_body(&m), "facts");
        assert_eq!(summary_version(&Message::user(m.text())), None);
        assert_eq!(
            summary_version(&Message::assistant("<COMPACT-SUMMARY vx>")),
            None
        );
    }
}
