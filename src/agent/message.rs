//! Provider-neutral chat messages, requests and responses: the only shapes
//! the LLM providers and the agent loop exchange.
//!
//! These are wire-level types with serde derives; they know nothing about
//! sessions or turns. Messages are `compression::Message`, so rendered
//! prompts go to a provider without conversion.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// A message of a conversation is the same type the compressor renders:
/// what the loop sends is exactly what a strategy produced.
pub use crate::compression::{Message as ChatMessage, Role};

/// Tokens a provider reports for one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl Usage {
    pub fn total(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }
}

impl std::ops::Add for Usage {
    type Output = Usage;
    fn add(self, other: Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens + other.input_tokens,
            output_tokens: self.output_tokens + other.output_tokens,
        }
    }
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        *self = *self + other;
    }
}

/// One call to a model.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The model to ask. Empty means the model the provider was created
    /// with (the `MODEL` of `openai:MODEL`).
    #[serde(default)]
    pub model: String,
    pub messages: Vec<ChatMessage>,
    /// The reply's token limit; `None` leaves it to the provider (the
    /// Anthropic client, where the field is required, uses its default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// The sampling seed, for reproducible replies. Sent to APIs that
    /// take one (OpenAI-compatible servers); the Anthropic API has none,
    /// so its client leaves it out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The longest this call may take, retries included; `None` leaves
    /// it to the client's own timeouts. Never sent.
    #[serde(skip)]
    pub timeout: Option<Duration>,
}

impl ChatRequest {
    /// A request for the provider's own model with no sampling options.
    pub fn new(messages: Vec<ChatMessage>) -> Self {
        ChatRequest {
            messages,
            ..Default::default()
        }
    }

    /// The model this request names, or `default` (the provider's own
    /// model) when it names none.
    pub fn model_or<'a>(&'a self, default: &'a str) -> &'a str {
        if self.model.is_empty() {
            default
        } else {
            &self.model
        }
    }
}

/// A model's reply.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ChatResponse {
    /// The reply text (text blocks joined, for APIs that return several).
    pub content: String,
    pub usage: Option<Usage>,
    /// The model that answered, as the API reported it.
    pub model: Option<String>,
    /// True when the reply was cut at the token limit (OpenAI's
    /// `finish_reason: "length"`, Anthropic's `stop_reason:
    /// "max_tokens"`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_serialize_lowercase() {
        let m = ChatMessage::assistant("hi");
        assert_eq!(
            serde_json::to_string(&m).unwrap(),
            r#"{"role":"assistant","content":"hi"}"#
        );
        let back: ChatMessage = serde_json::from_str(r#"{"role":"system","content":"x"}"#).unwrap();
        assert_eq!(back, ChatMessage::system("x"));
    }

    #[test]
    fn usage_adds_up() {
        let mut u = Usage {
            input_tokens: 3,
            output_tokens: 4,
        };
        u += Usage {
            input_tokens: 1,
            output_tokens: 1,
        };
        assert_eq!(u.total(), 9);
    }
}
