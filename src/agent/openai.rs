//! A client for OpenAI-compatible Chat Completions APIs: OpenAI itself and
//! the servers that copy its wire format (Ollama, vLLM, llama.cpp server,
//! LM Studio, OpenRouter, ...).
//!
//! `POST {base_url}/chat/completions` with `{model, messages, max_tokens?,
//! temperature?, seed?}`; the reply is `choices[0].message.content`, the
//! usage `usage.prompt_tokens` / `usage.completion_tokens`. A structured
//! refusal (`message.refusal`) is [`ProviderError::Refused`]; a reply cut
//! by `finish_reason: "length"` is marked `truncated`.

use serde_json::{json, Value as Json};

use super::http::{join_url, wire_f32, EndpointConfig, JsonClient};
use super::message::{ChatRequest, ChatResponse, Usage};
use super::provider::{LlmProvider, ProviderError};

/// The OpenAI API's address.
pub const OPENAI_DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// Where and how to reach the API: `OPENAI_BASE_URL` (default
/// [`OPENAI_DEFAULT_BASE_URL`]) and `OPENAI_API_KEY`, sent as
/// `Authorization: Bearer KEY` when set (local servers need none).
pub type OpenAiConfig = EndpointConfig;

/// The configuration from `OPENAI_BASE_URL` and `OPENAI_API_KEY`.
pub fn config_from_env() -> OpenAiConfig {
    EndpointConfig::from_env("OPENAI_BASE_URL", "OPENAI_API_KEY")
}

/// An OpenAI-compatible chat model.
pub struct OpenAiProvider {
    model: String,
    url: String,
    api_key: Option<String>,
    max_tokens: Option<u32>,
    client: JsonClient,
}

impl OpenAiProvider {
    /// A client for `model`. Fails only when the official OpenAI API is the
    /// target and no key is set.
    pub fn new(model: impl Into<String>, config: OpenAiConfig) -> Result<Self, ProviderError> {
        let base = config
            .base_url
            .unwrap_or_else(|| OPENAI_DEFAULT_BASE_URL.to_string());
        if config.api_key.is_none() && base.trim_end_matches('/') == OPENAI_DEFAULT_BASE_URL {
            return Err(ProviderError::Config(
                "The OpenAI API needs a key: set `OPENAI_API_KEY` \
                 (or `OPENAI_BASE_URL` for a local server that needs none)"
                    .to_string(),
            ));
        }
        Ok(OpenAiProvider {
            model: model.into(),
            url: join_url(&base, "chat/completions"),
            api_key: config.api_key,
            max_tokens: config.max_tokens,
            client: JsonClient::new(config.http),
        })
    }

    /// The endpoint requests go to.
    pub fn url(&self) -> &str {
        &self.url
    }

    fn body(&self, request: &ChatRequest) -> Json {
        let model = request.model_or(&self.model);
        let messages: Vec<Json> = request
            .messages
            .iter()
            .map(|m| json!({"role": m.role.as_str(), "content": m.content}))
            .collect();
        let mut body = json!({"model": model, "messages": messages});
        if let Some(n) = request.max_tokens.or(self.max_tokens) {
            body["max_tokens"] = json!(n);
        }
        if let Some(t) = request.temperature {
            body["temperature"] = json!(wire_f32(t));
        }
        if let Some(seed) = request.seed {
            body["seed"] = json!(seed);
        }
        body
    }
}

impl LlmProvider for OpenAiProvider {
    fn name(&self) -> String {
        format!("openai:{}", self.model)
    }

    fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, ProviderError> {
        let mut headers = Vec::new();
        if let Some(key) = &self.api_key {
            headers.push(("authorization", format!("Bearer {key}")));
        }
        let answer =
            self.client
                .post_json(&self.url, &headers, &self.body(request), request.timeout)?;
        parse_response(&answer)
    }
}

fn parse_response(answer: &Json) -> Result<ChatResponse, ProviderError> {
    let message = answer
        .pointer("/choices/0/message")
        .ok_or_else(|| ProviderError::Malformed("`choices[0].message` is missing".to_string()))?;
    if let Some(refusal) = message.get("refusal").and_then(Json::as_str) {
        if !refusal.trim().is_empty() {
            return Err(ProviderError::refused(refusal));
        }
    }
    let content = match message.get("content") {
        Some(Json::String(s)) => s.clone(),
        // Some servers send content as a list of typed parts.
        Some(Json::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Json::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => {
            return Err(ProviderError::Malformed(
                "`choices[0].message.content` is not text".to_string(),
            ))
        }
    };
    let truncated = answer
        .pointer("/choices/0/finish_reason")
        .and_then(Json::as_str)
        == Some("length");
    let usage = answer.get("usage").map(|u| Usage {
        input_tokens: u.get("prompt_tokens").and_then(Json::as_u64).unwrap_or(0),
        output_tokens: u
            .get("completion_tokens")
            .and_then(Json::as_u64)
            .unwrap_or(0),
    });
    Ok(ChatResponse {
        content,
        usage,
        model: answer
            .get("model")
            .and_then(Json::as_str)
            .map(str::to_string),
        truncated,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::message::ChatMessage;

    fn provider() -> OpenAiProvider {
        OpenAiProvider::new(
            "m",
            OpenAiConfig {
                base_url: Some("http://127.0.0.1:1/v1/".into()),
                ..Default::default()
            },
        )
        .unwrap()
    }

    #[test]
    fn body_has_model_messages_and_options() {
        let p = provider();
        assert_eq!(p.url(), "http://127.0.0.1:1/v1/chat/completions");
        let mut r = ChatRequest::new(vec![ChatMessage::system("s"), ChatMessage::user("u")]);
        assert_eq!(
            p.body(&r),
            json!({"model": "m", "messages": [{"role": "system", "content": "s"},
                                               {"role": "user", "content": "u"}]})
        );
        r.model = "other".into();
        r.max_tokens = Some(10);
        r.temperature = Some(0.5);
        r.seed = Some(42);
        let b = p.body(&r);
        assert_eq!(b["model"], "other");
        assert_eq!(b["max_tokens"], 10);
        assert_eq!(b["temperature"], 0.5);
        assert_eq!(b["seed"], 42);
    }

    #[test]
    fn responses_parse_or_say_what_is_missing() {
        let ok = parse_response(
            &json!({"model": "m1", "choices": [{"message": {"content": "hi"}}],
                                        "usage": {"prompt_tokens": 5, "completion_tokens": 2}}),
        )
        .unwrap();
        assert_eq!(ok.content, "hi");
        assert_eq!(ok.usage.unwrap().total(), 7);
        assert_eq!(ok.model.as_deref(), Some("m1"));
        let err = parse_response(&json!({"choices": []})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "The provider's answer is malformed: `choices[0].message` is missing"
        );
        let err =
            parse_response(&json!({"choices": [{"message": {"content": null, "refusal": "no"}}]}))
                .unwrap_err();
        assert_eq!(err, ProviderError::Refused("no".into()));
        let cut = parse_response(
            &json!({"choices": [{"message": {"content": "half"}, "finish_reason": "length"}]}),
        )
        .unwrap();
        assert!(cut.truncated);
        assert!(!ok.truncated);
    }

    #[test]
    fn the_official_api_needs_a_key() {
        let err = OpenAiProvider::new("m", OpenAiConfig::default())
            .err()
            .unwrap();
        assert!(err.to_string().contains("`OPENAI_API_KEY`"));
    }
}
