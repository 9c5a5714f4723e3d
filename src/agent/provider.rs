//! The [`LlmProvider`] trait every model backend implements, its error
//! type, and [`provider_from_spec`], which turns a command-line spec such
//! as `openai:gpt-4o-mini` into a provider.
//!
//! Providers are blocking and thread-safe; the agent loop owns retries of
//! whole turns, a provider only retries transport-level failures (see
//! [`super::http`]).

use std::path::Path;

use super::anthropic::AnthropicProvider;
use super::http::HttpOptions;
use super::message::{ChatRequest, ChatResponse};
use super::openai::OpenAiProvider;
use super::scripted::ScriptedProvider;

/// A chat model the agent loop can call.
pub trait LlmProvider: Send + Sync {
    /// A short name for transcripts and messages, e.g. `openai:gpt-4o-mini`.
    fn name(&self) -> String;
    /// Send one request and wait for the reply.
    fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, ProviderError>;
}

impl<P: LlmProvider + ?Sized> LlmProvider for Box<P> {
    fn name(&self) -> String {
        (**self).name()
    }
    fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, ProviderError> {
        (**self).complete(request)
    }
}

impl<P: LlmProvider + ?Sized> LlmProvider for std::sync::Arc<P> {
    fn name(&self) -> String {
        (**self).name()
    }
    fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, ProviderError> {
        (**self).complete(request)
    }
}

/// Why a model call failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    /// The API answered with an error status. `message` is the API's own
    /// error message (`error.message` of a JSON body), else the body text
    /// truncated to 500 characters.
    #[error("The provider answered HTTP {status}: {message}")]
    Http { status: u16, message: String },
    /// No complete answer arrived within the configured time.
    #[error("The request timed out: {0}")]
    Timeout(String),
    /// The server could not be reached or the connection broke.
    #[error("Could not reach the provider: {0}")]
    Connection(String),
    /// The answer was not the JSON the API promises (bad JSON, missing
    /// fields).
    #[error("The provider's answer is malformed: {0}")]
    Malformed(String),
    /// The model declined to answer (OpenAI's structured `refusal`,
    /// Anthropic's `stop_reason: "refusal"`); the text is its reason.
    #[error("The model refused: {0}")]
    Refused(String),
    /// Every attempt failed with a retryable error; `last` is the final one.
    #[error("Gave up after {attempts} attempts; the last error: {last}")]
    RetriesExhausted {
        attempts: u32,
        last: Box<ProviderError>,
    },
    /// A scripted provider was asked for more replies than it holds.
    #[error("The script `{script}` has no reply for call {}; it holds {}", used + 1, replies(*used))]
    ScriptExhausted { script: String, used: usize },
    /// The provider could not be set up (bad spec, missing key, bad file).
    #[error("{0}")]
    Config(String),
}

/// The most characters of a model's refusal kept in its error.
pub const REFUSAL_CHARS: usize = 2000;

impl ProviderError {
    /// A refusal, its reason cut to [`REFUSAL_CHARS`] characters: the
    /// reason comes from the provider's answer, which may be megabytes.
    pub(crate) fn refused(reason: &str) -> ProviderError {
        ProviderError::Refused(super::truncate(reason.trim(), REFUSAL_CHARS))
    }
}

fn replies(n: usize) -> String {
    if n == 1 {
        "1 reply".to_string()
    } else {
        format!("{n} replies")
    }
}

impl ProviderError {
    /// True for failures worth another attempt: HTTP 429 and 5xx, and
    /// connection failures. Timeouts are not retried: a server that does
    /// not answer in the (long) overall timeout rarely answers the next
    /// time, and retrying would multiply the wait.
    pub fn is_retryable(&self) -> bool {
        match self {
            ProviderError::Http { status, .. } => *status == 429 || *status >= 500,
            ProviderError::Connection(_) => true,
            _ => false,
        }
    }
}

/// Settings for [`provider_from_spec`]. Anything left `None` comes from the
/// provider's environment variables (`OPENAI_BASE_URL`, `OPENAI_API_KEY`,
/// `ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY`), then from the defaults.
#[derive(Clone, Default)]
pub struct ProviderOptions {
    pub base_url: Option<String>,
    pub api_key: Option<String>,
    /// The reply token limit used when a request sets none (Anthropic
    /// requires one; its default is 4096).
    pub max_tokens: Option<u32>,
    pub http: HttpOptions,
}

impl std::fmt::Debug for ProviderOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderOptions")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("max_tokens", &self.max_tokens)
            .field("http", &self.http)
            .finish()
    }
}

/// The spec prefixes [`provider_from_spec`] understands.
pub const PROVIDER_PREFIXES: [&str; 4] = ["openai", "anthropic", "script", "replay"];

/// Build a provider from a spec: `openai:MODEL` (any OpenAI-compatible
/// Chat Completions server), `anthropic:MODEL`, or `script:FILE` (replies
/// replayed from a file).
///
/// ```
/// use ptc_lisp::agent::provider::{provider_from_spec, ProviderOptions};
///
/// let options = ProviderOptions {
///     base_url: Some("http://127.0.0.1:11434/v1".into()),
///     ..Default::default()
/// };
/// let p = provider_from_spec("openai:llama3.2", options).unwrap();
/// assert_eq!(p.name(), "openai:llama3.2");
///
/// let err = provider_from_spec("gemini:pro", Default::default()).err().unwrap();
/// assert!(err.to_string().starts_with("Unknown provider `gemini`"));
/// ```
pub fn provider_from_spec(
    spec: &str,
    options: ProviderOptions,
) -> Result<Box<dyn LlmProvider>, ProviderError> {
    let usage = "write `openai:MODEL`, `anthropic:MODEL`, `script:FILE` or `replay:FILE`";
    let Some((prefix, rest)) = spec.split_once(':') else {
        return Err(ProviderError::Config(format!(
            "The provider spec `{spec}` has no prefix; {usage}"
        )));
    };
    let rest = rest.trim();
    if rest.is_empty() {
        let what = if prefix == "script" || prefix == "replay" {
            "FILE"
        } else {
            "MODEL"
        };
        return Err(ProviderError::Config(format!(
            "The provider spec `{spec}` is missing its {what}; {usage}"
        )));
    }
    match prefix {
        "openai" => {
            let mut config = super::openai::config_from_env();
            config.apply(&options);
            Ok(Box::new(OpenAiProvider::new(rest, config)?))
        }
        "anthropic" => {
            let mut config = super::anthropic::config_from_env();
            config.apply(&options);
            Ok(Box::new(AnthropicProvider::new(rest, config)?))
        }
        "script" => Ok(Box::new(ScriptedProvider::from_file(Path::new(rest))?)),
        "replay" => Ok(Box::new(super::replay::ReplayProvider::from_file(
            Path::new(rest),
        )?)),
        other => {
            let hint = match crate::error::suggest(other, PROVIDER_PREFIXES).first() {
                Some(near) => format!(" (did you mean `{near}`?)"),
                None => String::new(),
            };
            Err(ProviderError::Config(format!(
                "Unknown provider `{other}` in `{spec}`{hint}; {usage}"
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_errors_are_clear() {
        let err = |s: &str| {
            provider_from_spec(s, ProviderOptions::default())
                .err()
                .unwrap()
        };
        assert_eq!(
            err("gpt-4o").to_string(),
            "The provider spec `gpt-4o` has no prefix; write `openai:MODEL`, \
             `anthropic:MODEL`, `script:FILE` or `replay:FILE`"
        );
        assert!(err("openai:").to_string().contains("is missing its MODEL"));
        assert!(err("script: ").to_string().contains("is missing its FILE"));
        assert!(err("opena:gpt")
            .to_string()
            .contains("did you mean `openai`?"));
    }

    #[test]
    fn script_exhaustion_message_counts_replies() {
        let e = ProviderError::ScriptExhausted {
            script: "s.json".into(),
            used: 3,
        };
        assert_eq!(
            e.to_string(),
            "The script `s.json` has no reply for call 4; it holds 3 replies"
        );
        let e = ProviderError::ScriptExhausted {
            script: "s.json".into(),
            used: 1,
        };
        assert!(e.to_string().ends_with("it holds 1 reply"));
    }

    #[test]
    fn options_debug_hides_the_key() {
        let o = ProviderOptions {
            api_key: Some("sk-secret".into()),
            ..Default::default()
        };
        assert!(!format!("{o:?}").contains("sk-secret"));
    }
}
