//! Summaries of the pruned part of a history: the [`Summarizer`] trait,
//! what a summarizer is asked, and the rolling `<COMPACT-SUMMARY vN>`
//! message that carries the answer. No I/O.

use std::time::{Duration, Instant};

use super::message::{Message, Role};
use super::policy::Strategy;
use crate::tokens::TokenModel;

/// The first characters of every summary message.
pub const SUMMARY_TAG: &str = "<COMPACT-SUMMARY v";

/// How long one round's summary may take in all, retries and fallbacks
/// included, unless configured otherwise (`summary.deadline_ms`).
pub const DEFAULT_SUMMARY_DEADLINE: Duration = Duration::from_secs(30);

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
    /// Kept messages that come after every pruned tool exchange, in
    /// order (not to be summarized): a success there resolves a pruned
    /// failure, so the summary does not list as open what a kept turn
    /// fixed. Empty when the caller keeps nothing after the pruned part.
    pub later: &'a [&'a Message],
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
    /// The reply was cut at its token limit: retried with half the
    /// tokens, as a summary over its cap is.
    #[error("the summary was cut at its token limit: {0}")]
    Truncated(String),
    /// No answer before the round's deadline: the compaction prunes only.
    #[error("no summary before the deadline: {0}")]
    DeadlineExceeded(String),
}

impl SummaryError {
    /// The `error_type` of the `compact.error` event this error makes.
    pub fn kind(&self) -> &'static str {
        match self {
            SummaryError::Refused(_) => "SummaryRefused",
            SummaryError::Failed(_) => "SummaryFailed",
            SummaryError::Truncated(_) => "SummaryTooLong",
            SummaryError::DeadlineExceeded(_) => "SummaryDeadline",
        }
    }
}

/// Writes the summary of a pruned part of a history.
pub trait Summarizer {
    /// A short name for events and reports (`digest`, `llm:gpt-4o`).
    fn name(&self) -> String;

    /// The summary body (without the `<COMPACT-SUMMARY vN>` line).
    fn summarize(&self, request: &SummaryRequest<'_>) -> Result<String, SummaryError>;

    /// [`Summarizer::summarize`], answering by `deadline` (with
    /// [`SummaryError::DeadlineExceeded`] if need be). The compactor and
    /// the window call this one. The default ignores the deadline, which
    /// suits summarizers that wait on nothing (the digest); one that
    /// calls a model must keep it.
    fn summarize_by(
        &self,
        request: &SummaryRequest<'_>,
        deadline: Instant,
    ) -> Result<String, SummaryError> {
        let _ = deadline;
        self.summarize(request)
    }
}

/// The version of a summary message (`Some(3)` for `<COMPACT-SUMMARY v3>`),
/// `None` for any other message.
pub fn summary_version(m: &Message) -> Option<u32> {
    if m.role != Role::Assistant {
        return None;
    }
    let rest = m.content.as_str()?.strip_prefix(SUMMARY_TAG)?;
    let digits = rest.split('>').next()?;
    digits.parse().ok()
}

/// The body of a summary message (what follows its first line).
pub fn summary_body(m: &Message) -> &str {
    m.content
        .as_str()
        .and_then(|t| t.split_once('\n'))
        .map_or("", |(_, body)| body)
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
