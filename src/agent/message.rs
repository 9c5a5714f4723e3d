//! Provider-neutral chat messages, requests and responses: the only shapes
//! the LLM providers and the agent loop exchange.
//!
//! These are wire-level types with serde derives; they know nothing about
//! sessions, turns or compression (the loop converts its own history into
//! a [`ChatRequest`]).

use serde::{Deserialize, Serialize};

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

impl Role {
    /// The lowercase wire name (`system`, `user`, `assistant`).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: Role,
    pub content: String,
}

impl ChatMessage {
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        ChatMessage {
            role,
            content: content.into(),
        }
    }

    pub fn system(content: impl Into<String>) -> Self {
        Self::new(Role::System, content)
    }

    pub fn user(content: impl Into<String>) -> Self {
        Self::new(Role::User, content)
    }

    pub fn assistant(content: impl Into<String>) -> Self {
        Self::new(Role::Assistant, content)
    }
}

impl From<crate::compression::Role> for Role {
    fn from(role: crate::compression::Role) -> Self {
        match role {
            crate::compression::Role::System => Role::System,
            crate::compression::Role::User => Role::User,
            crate::compression::Role::Assistant => Role::Assistant,
        }
    }
}

impl From<Role> for crate::compression::Role {
    fn from(role: Role) -> Self {
        match role {
            Role::System => crate::compression::Role::System,
            Role::User => crate::compression::Role::User,
            Role::Assistant => crate::compression::Role::Assistant,
        }
    }
}

/// A rendered prompt message, as sent to a provider.
impl From<crate::compression::Message> for ChatMessage {
    fn from(m: crate::compression::Message) -> Self {
        ChatMessage::new(m.role.into(), m.content)
    }
}

/// A sent message, back in the shape the debug view prints.
impl From<ChatMessage> for crate::compression::Message {
    fn from(m: ChatMessage) -> Self {
        crate::compression::Message::new(m.role.into(), m.content)
    }
}

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
}

impl ChatRequest {
    /// A request for the provider's own model with no sampling options.
    pub fn new(messages: Vec<ChatMessage>) -> Self {
        ChatRequest {
            messages,
            ..Default::default()
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
