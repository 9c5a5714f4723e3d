//! Token counts of a chat history by section, with a per-message cache so
//! that a pre-flight check on a growing history only counts what is new.
//! No I/O.
//!
//! This is the one source of every prompt token count the program shows
//! (`:tokens`, `:budget`, `ptc prompt`, the agent's progress lines, the
//! compaction lines and reports, events): [`TokenCounter::count`].
//!
//! Each message costs its role, its text, its tool calls (as JSON), its
//! name and a framing of [`TOKENS_PER_MESSAGE`] (one more with a
//! `name`); every request costs [`REPLY_PRIMING`] more. These are the
//! OpenAI Chat format's figures (the cookbook's `num_tokens_from_messages`,
//! checked against Python tiktoken in `tests/token_counts.rs`); for other
//! providers they are part of the estimate.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use serde::Serialize;

use super::content::{count_parts, Content, ImageRates};
use super::message::{Message, Role};
use crate::tokens::{Calibration, TokenModel};

/// Framing tokens of each message in the Chat format.
pub const TOKENS_PER_MESSAGE: usize = 3;
/// Framing tokens of a message's `name`.
pub const TOKENS_PER_NAME: usize = 1;
/// Tokens that prime the reply, once per request.
pub const REPLY_PRIMING: usize = 3;

/// Cached counts beyond this many are dropped (the cache starts over).
const CACHE_CAPACITY: usize = 1 << 16;

/// Tokens of a prompt by section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Breakdown {
    /// System messages.
    pub system: usize,
    /// Developer messages.
    pub developer: usize,
    /// The tool schemas sent with the request.
    pub tools_schema: usize,
    /// Every other message, plus the reply priming.
    pub messages: usize,
}

impl Breakdown {
    pub fn total(&self) -> usize {
        self.system + self.developer + self.tools_schema + self.messages
    }
}

/// Counts messages for one model, remembering each message's count.
#[derive(Debug, Clone)]
pub struct TokenCounter {
    model_name: String,
    model: TokenModel,
    images: ImageRates,
    calibration: Calibration,
    cache: HashMap<u64, u32, rustc_hash::FxBuildHasher>,
    tools_raw: usize,
    hits: u64,
    misses: u64,
}

impl TokenCounter {
    /// A counter for `model` (see [`TokenModel::for_model`]).
    pub fn new(model: &str) -> Self {
        TokenCounter {
            model_name: model.to_string(),
            model: TokenModel::for_model(model),
            images: ImageRates::for_model(model),
            calibration: Calibration::default(),
            cache: HashMap::default(),
            tools_raw: 0,
            hits: 0,
            misses: 0,
        }
    }

    pub fn model_name(&self) -> &str {
        &self.model_name
    }

    pub fn token_model(&self) -> TokenModel {
        self.model
    }

    /// The tool schemas sent with every request, as the provider receives
    /// them (for OpenAI, the `tools` array; Anthropic's `name`,
    /// `description`, `input_schema` objects are read alike), counted by
    /// [`tools_schema_tokens`].
    pub fn set_tools_schema(&mut self, tools: Option<&serde_json::Value>) {
        self.tools_raw = tools.map_or(0, |t| tools_schema_tokens(t, self.model));
    }

    /// The factor applied to raw encoding counts: the model's own, times
    /// the calibrated ratio for approximated models.
    pub fn factor(&self) -> f64 {
        if self.model.is_exact() {
            1.0
        } else {
            self.model.factor * self.calibration.ratio(&self.model_name).unwrap_or(1.0)
        }
    }

    fn scale(&self, raw: usize) -> usize {
        let factor = self.factor();
        if factor == 1.0 {
            raw
        } else {
            (raw as f64 * factor).ceil() as usize
        }
    }

    /// Record the input tokens a provider reported for a prompt this
    /// counter estimated at `estimated`.
    pub fn calibrate(&mut self, estimated: usize, reported: u64) {
        // The ratio is kept against uncalibrated estimates, so undo the
        // correction this estimate already carried.
        let applied = if self.model.is_exact() {
            1.0
        } else {
            self.calibration_ratio().unwrap_or(1.0)
        };
        let base = (estimated as f64 / applied).round() as usize;
        self.calibration.observe(&self.model_name, base, reported);
    }

    /// The running reported/estimated ratio, once a provider has answered.
    pub fn calibration_ratio(&self) -> Option<f64> {
        self.calibration.ratio(&self.model_name)
    }

    /// (cache hits, cache misses) so far.
    pub fn cache_stats(&self) -> (u64, u64) {
        (self.hits, self.misses)
    }

    /// Raw encoding tokens of one message, framing included.
    fn raw(&mut self, m: &Message) -> usize {
        let mut hasher = rustc_hash::FxHasher::default();
        m.role.hash(&mut hasher);
        match &m.content {
            Content::Text(s) => (1u8, s).hash(&mut hasher),
            Content::Parts(p) => {
                (2u8, serde_json::to_string(p).unwrap_or_default()).hash(&mut hasher)
            }
            Content::Null | Content::Absent => 0u8.hash(&mut hasher),
        }
        m.name.hash(&mut hasher);
        m.tool_call_id.hash(&mut hasher);
        if let Some(calls) = &m.tool_calls {
            calls.len().hash(&mut hasher);
            for call in calls {
                call.to_string().hash(&mut hasher);
            }
        }
        let key = hasher.finish();
        if let Some(&n) = self.cache.get(&key) {
            self.hits += 1;
            return n as usize;
        }
        self.misses += 1;
        let enc = self.model.encoding;
        let mut n = TOKENS_PER_MESSAGE
            + enc.count(m.role.as_str())
            + match &m.content {
                Content::Text(s) => enc.count(s),
                Content::Parts(p) => count_parts(p, self.images, &|t| enc.count(t)),
                Content::Null | Content::Absent => 0,
            };
        if let Some(name) = &m.name {
            n += TOKENS_PER_NAME + enc.count(name);
        }
        if let Some(id) = &m.tool_call_id {
            n += enc.count(id);
        }
        if let Some(calls) = &m.tool_calls {
            for call in calls {
                n += enc.count(&call.to_string());
            }
        }
        if self.cache.len() >= CACHE_CAPACITY {
            self.cache.clear();
        }
        self.cache.insert(key, n as u32);
        n
    }

    /// Tokens of one message (framing included).
    pub fn message(&mut self, m: &Message) -> usize {
        let raw = self.raw(m);
        self.scale(raw)
    }

    /// Tokens of each message (framing included), in order.
    pub fn per_message(&mut self, messages: &[Message]) -> Vec<usize> {
        messages.iter().map(|m| self.message(m)).collect()
    }

    /// Tokens of a whole request: the messages, the tool schemas and the
    /// reply priming, by section.
    pub fn count(&mut self, messages: &[Message]) -> Breakdown {
        let (mut system, mut developer, mut rest) = (0, 0, REPLY_PRIMING);
        for m in messages {
            let raw = self.raw(m);
            match m.role {
                Role::System => system += raw,
                Role::Developer => developer += raw,
                _ => rest += raw,
            }
        }
        Breakdown {
            system: self.scale(system),
            developer: self.scale(developer),
            tools_schema: self.scale(self.tools_raw),
            messages: self.scale(rest),
        }
    }
}

/// Tokens of function definitions as OpenAI bills them, by the formula
/// of OpenAI's cookbook ("How to count tokens with tiktoken",
/// `num_tokens_for_tools`): per function 7 tokens (10 for the cl100k
/// models) plus `name:description`; with parameters 3 more, and per
/// property 3 plus `name:type:description` (a trailing period dropped),
/// and for an enum -3 plus 3 and the value's tokens per item; 12 once
/// at the end. A value that is not an array of objects counts as its
/// JSON text.
pub fn tools_schema_tokens(tools: &serde_json::Value, model: TokenModel) -> usize {
    use serde_json::Value as Json;
    let enc = model.encoding;
    let Some(list) = tools.as_array() else {
        return enc.count(&tools.to_string());
    };
    if list.is_empty() {
        return 0;
    }
    let func_init = match enc {
        crate::tokens::Encoding::Cl100kBase => 10,
        crate::tokens::Encoding::O200kBase => 7,
    };
    let (prop_init, prop_key, enum_item, func_end) = (3usize, 3usize, 3usize, 12usize);
    let text = |v: Option<&Json>| match v {
        Some(Json::String(s)) => s.clone(),
        Some(Json::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    let trim = |s: String| s.strip_suffix('.').map(str::to_string).unwrap_or(s);
    let mut n = 0;
    for tool in list {
        let f = tool.get("function").unwrap_or(tool);
        n += func_init;
        n += enc.count(&format!(
            "{}:{}",
            text(f.get("name")),
            trim(text(f.get("description")))
        ));
        let params = f.get("parameters").or_else(|| f.get("input_schema"));
        let props = params
            .and_then(|p| p.get("properties"))
            .and_then(Json::as_object);
        if let Some(props) = props.filter(|p| !p.is_empty()) {
            n += prop_init;
            for (key, prop) in props {
                n += prop_key;
                if let Some(items) = prop.get("enum").and_then(Json::as_array) {
                    // enum_init is -3.
                    n = n.saturating_sub(3);
                    for item in items {
                        n += enum_item + enc.count(&text(Some(item)));
                    }
                }
                n += enc.count(&format!(
                    "{key}:{}:{}",
                    text(prop.get("type")),
                    trim(text(prop.get("description")))
                ));
            }
        }
    }
    n + func_end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_and_framing() {
        let mut c = TokenCounter::new("gpt-4o");
        let msgs = [
            Message::system("You are terse."),
            Message::developer("Answer in French."),
            Message::user("hello world"),
        ];
        let b = c.count(&msgs);
        assert_eq!(
            b.system,
            TOKENS_PER_MESSAGE + 1 + crate::tokens::count_tokens("You are terse.")
        );
        assert_eq!(b.messages, REPLY_PRIMING + TOKENS_PER_MESSAGE + 1 + 2);
        assert_eq!(b.tools_schema, 0);
        c.set_tools_schema(Some(
            &serde_json::json!([{"type": "function", "function": {"name": "read_file"}}]),
        ));
        assert!(c.count(&msgs).tools_schema > 5);
    }

    #[test]
    fn tool_schemas_follow_the_cookbook_formula() {
        let model = TokenModel::for_model("gpt-4o");
        let c = |t: &str| crate::tokens::count_tokens(t);
        let tools = serde_json::json!([{"type": "function", "function": {
        "name": "get_weather",
        "description": "Get the weather.",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string", "description": "The city."},
            "unit": {"type": "string", "enum": ["c", "f"], "description": "Unit"},
        }}}}]);
        let want = 7
            + c("get_weather:Get the weather")
            + 3
            + 3
            + c("city:string:The city")
            + 3
            + (3 + c("c"))
            + (3 + c("f"))
            - 3
            + c("unit:string:Unit")
            + 12;
        assert_eq!(tools_schema_tokens(&tools, model), want);
        assert_eq!(tools_schema_tokens(&serde_json::json!([]), model), 0);
        let mut counter = TokenCounter::new("gpt-4o");
        counter.set_tools_schema(Some(&tools));
        assert_eq!(counter.count(&[]).tools_schema, want);
    }

    #[test]
    fn repeated_counts_hit_the_cache() {
        let mut c = TokenCounter::new("gpt-4o");
        let msgs: Vec<_> = (0..10)
            .map(|i| Message::user(format!("message {i}")))
            .collect();
        let first = c.count(&msgs);
        assert_eq!(c.cache_stats(), (0, 10));
        assert_eq!(c.count(&msgs), first);
        assert_eq!(c.cache_stats(), (10, 10));
    }

    #[test]
    fn approximated_models_follow_calibration() {
        let mut c = TokenCounter::new("claude-sonnet-4");
        let msgs = [Message::user("a".repeat(400))];
        let before = c.count(&msgs).total();
        c.calibrate(before, (before as u64) * 2);
        let after = c.count(&msgs).total();
        assert!(after as f64 >= before as f64 * 1.9, "{before} -> {after}");
        assert!((c.calibration_ratio().unwrap() - 2.0).abs() < 1e-9);
        let mut exact = TokenCounter::new("gpt-4o");
        let n = exact.count(&msgs).total();
        exact.calibrate(n, n as u64 * 2);
        assert_eq!(
            exact.count(&msgs).total(),
            n,
            "exact counts are only shown a ratio"
        );
    }
}
