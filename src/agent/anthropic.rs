//! A client for the Anthropic Messages API.
//!
//! `POST {base}/v1/messages` with `x-api-key`, `anthropic-version:
//! 2023-06-01` and `{model, system, messages, max_tokens, temperature?}`.
//! System messages are joined into the `system` field; the rest must
//! alternate between user and assistant, so consecutive messages of one
//! role are merged (joined by a blank line). The reply is the `text`
//! blocks of `content` joined, the usage `usage.input_tokens` /
//! `usage.output_tokens`; `stop_reason: "max_tokens"` marks it
//! `truncated`, `stop_reason: "refusal"` is [`ProviderError::Refused`].
//! The API takes no sampling seed: a request's `seed` is not sent.

use serde_json::{json, Value as Json};

use super::http::{join_url, wire_f32, EndpointConfig, JsonClient};
use super::message::{ChatMessage, ChatRequest, ChatResponse, Role, Usage};
use super::provider::{LlmProvider, ProviderError};

/// The Anthropic API's address.
pub const ANTHROPIC_DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The API version this client speaks.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";
/// The reply token limit when neither the request nor the config sets one.
pub const ANTHROPIC_DEFAULT_MAX_TOKENS: u32 = 4096;

/// Where and how to reach the API: `ANTHROPIC_BASE_URL` (default
/// [`ANTHROPIC_DEFAULT_BASE_URL`]) and `ANTHROPIC_API_KEY`, sent as
/// `x-api-key`; `max_tokens` defaults to [`ANTHROPIC_DEFAULT_MAX_TOKENS`].
pub type AnthropicConfig = EndpointConfig;

/// The configuration from `ANTHROPIC_BASE_URL` and `ANTHROPIC_API_KEY`.
pub fn config_from_env() -> AnthropicConfig {
    EndpointConfig::from_env("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY")
}

/// An Anthropic chat model.
pub struct AnthropicProvider {
    model: String,
    url: String,
    api_key: Option<String>,
    max_tokens: u32,
    client: JsonClient,
}

impl AnthropicProvider {
    /// A client for `model`. Fails when the official API is the target and
    /// no key is set.
    pub fn new(model: impl Into<String>, config: AnthropicConfig) -> Result<Self, ProviderError> {
        let base = config
            .base_url
            .unwrap_or_else(|| ANTHROPIC_DEFAULT_BASE_URL.to_string());
        if config.api_key.is_none() && base.trim_end_matches('/') == ANTHROPIC_DEFAULT_BASE_URL {
            return Err(ProviderError::Config(
                "The Anthropic API needs a key: set `ANTHROPIC_API_KEY`".to_string(),
            ));
        }
        Ok(AnthropicProvider {
            model: model.into(),
            url: join_url(&base, "v1/messages"),
            api_key: config.api_key,
            max_tokens: config.max_tokens.unwrap_or(ANTHROPIC_DEFAULT_MAX_TOKENS),
            client: JsonClient::new(config.http),
        })
    }

    /// The endpoint requests go to.
    pub fn url(&self) -> &str {
        &self.url
    }

    fn body(&self, request: &ChatRequest) -> Json {
        let model = request.model_or(&self.model);
        let (system, messages) = split_messages(&request.messages);
        let messages: Vec<Json> = messages
            .iter()
            .map(|m| json!({"role": m.role.as_str(), "content": m.content}))
            .collect();
        let mut body = json!({
            "model": model,
            "messages": messages,
            "max_tokens": request.max_tokens.unwrap_or(self.max_tokens),
        });
        if let Some(system) = system {
            body["system"] = json!(system);
        }
        if let Some(t) = request.temperature {
            body["temperature"] = json!(wire_f32(t));
        }
        body
    }
}

/// The system prompt (all system messages joined by a blank line) and the
/// other messages with consecutive same-role runs merged.
pub fn split_messages(messages: &[ChatMessage]) -> (Option<String>, Vec<ChatMessage>) {
    let system: Vec<&str> = messages
        .iter()
        .filter(|m| m.role == Role::System)
        .map(|m| m.content.as_str())
        .collect();
    let mut merged: Vec<ChatMessage> = Vec::new();
    for m in messages.iter().filter(|m| m.role != Role::System) {
        match merged.last_mut() {
            Some(last) if last.role == m.role => {
                last.content.push_str("\n\n");
                last.content.push_str(&m.content);
            }
            _ => merged.push(m.clone()),
        }
    }
    let system = (!system.is_empty()).then(|| system.join("\n\n"));
    (system, merged)
}

impl LlmProvider for AnthropicProvider {
    fn name(&self) -> String {
        format!("anthropic:{}", self.model)
    }

    fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, ProviderError> {
        let mut headers = vec![("anthropic-version", ANTHROPIC_VERSION.to_string())];
        if let Some(key) = &self.api_key {
            headers.push(("x-api-key", key.clone()));
        }
        let answer =
            self.client
                .post_json(&self.url, &headers, &self.body(request), request.timeout)?;
        parse_response(&answer)
    }
}

fn parse_response(answer: &Json) -> Result<ChatResponse, ProviderError> {
    let blocks = answer
        .get("content")
        .and_then(Json::as_array)
        .ok_or_else(|| ProviderError::Malformed("`content` is missing".to_string()))?;
    let content = blocks
        .iter()
        .filter(|b| b.get("type").and_then(Json::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Json::as_str))
        .collect::<Vec<_>>()
        .join("");
    let stop_reason = answer.get("stop_reason").and_then(Json::as_str);
    if stop_reason == Some("refusal") {
        return Err(ProviderError::refused(if content.trim().is_empty() {
            "the reply stopped with `stop_reason: \"refusal\"`"
        } else {
            &content
        }));
    }
    let usage = answer.get("usage").map(|u| Usage {
        input_tokens: u.get("input_tokens").and_then(Json::as_u64).unwrap_or(0),
        output_tokens: u.get("output_tokens").and_then(Json::as_u64).unwrap_or(0),
    });
    Ok(ChatResponse {
        content,
        usage,
        model: answer
            .get("model")
            .and_then(Json::as_str)
            .map(str::to_string),
        truncated: stop_reason == Some("max_tokens"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_is_split_off_and_roles_merged() {
        let (system, rest) = split_messages(&[
            ChatMessage::system("a"),
            ChatMessage::user("u1"),
            ChatMessage::user("u2"),
            ChatMessage::assistant("x"),
            ChatMessage::system("b"),
            ChatMessage::user("u3"),
        ]);
        assert_eq!(system.as_deref(), Some("a\n\nb"));
        assert_eq!(
            rest,
            vec![
                ChatMessage::user("u1\n\nu2"),
                ChatMessage::assistant("x"),
                ChatMessage::user("u3"),
            ]
        );
    }

    #[test]
    fn body_always_has_max_tokens() {
        let p = AnthropicProvider::new(
            "claude",
            AnthropicConfig {
                base_url: Some("http://127.0.0.1:1/".into()),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(p.url(), "http://127.0.0.1:1/v1/messages");
        let mut request = ChatRequest::new(vec![ChatMessage::user("hi")]);
        request.seed = Some(42);
        let b = p.body(&request);
        assert_eq!(
            b,
            json!({"model": "claude", "messages": [{"role": "user", "content": "hi"}],
                   "max_tokens": 4096})
        );
    }

    #[test]
    fn text_blocks_are_joined() {
        let r = parse_response(&json!({
            "model": "c",
            "content": [{"type": "text", "text": "a"}, {"type": "tool_use", "id": "x"},
                        {"type": "text", "text": "b"}],
            "usage": {"input_tokens": 3, "output_tokens": 1}}))
        .unwrap();
        assert_eq!(r.content, "ab");
        assert_eq!(r.usage.unwrap().input_tokens, 3);
        assert!(!r.truncated);
        let cut = parse_response(&json!({"content": [{"type": "text", "text": "a"}],
                                         "stop_reason": "max_tokens"}))
        .unwrap();
        assert!(cut.truncated);
        let refused = parse_response(&json!({"content": [], "stop_reason": "refusal"}));
        assert!(
            matches!(refused, Err(ProviderError::Refused(_))),
            "{refused:?}"
        );
        assert!(parse_response(&json!({"type": "message"})).is_err());
    }
}
