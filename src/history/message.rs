//! The one message type of the history layer: an OpenAI Chat message
//! (`role`, `content`, `tool_calls`, `tool_call_id`, `name`) plus `meta`,
//! with every unknown field kept and written back unchanged. No I/O.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

use super::content::{check_parts, Content};
use crate::compression;

/// Who a message is from, as the OpenAI Chat format names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    Developer,
    User,
    Assistant,
    Tool,
}

impl Role {
    /// Every role, in the order above.
    pub const ALL: [Role; 5] = [
        Role::System,
        Role::Developer,
        Role::User,
        Role::Assistant,
        Role::Tool,
    ];

    /// The lowercase wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::Developer => "developer",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }

    /// The role whose wire name is `name`.
    pub fn parse(name: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_str() == name)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Our annotations of a message; unknown keys are kept.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Meta {
    /// Never pruned, never altered, never given to a summarizer.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub protected: bool,
    #[serde(flatten)]
    pub extra: Map<String, Json>,
}

/// One chat message.
///
/// `tool_calls` stays raw JSON, so provider-specific fields of a call are
/// kept as they came; [`Message::tool_call_ids`] and
/// [`Message::tool_call_summaries`] read the standard ones.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    /// A string, `null` (an assistant message that only calls tools), an
    /// array of content parts or blocks, or absent: written back as read.
    #[serde(default, skip_serializing_if = "Content::is_absent")]
    pub content: Content,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Fields this type does not know, written back unchanged.
    #[serde(flatten)]
    pub extra: Map<String, Json>,
}

/// A tool call as the summaries show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCallSummary {
    pub id: String,
    pub name: String,
    /// The arguments as the model sent them (a JSON string in OpenAI's
    /// format, kept verbatim).
    pub arguments: String,
}

impl Message {
    /// A message with text content and nothing else.
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Message {
            role,
            content: Content::Text(content.into()),
            tool_calls: None,
            tool_call_id: None,
            name: None,
            meta: None,
            extra: Map::new(),
        }
    }

    pub fn system(content: impl Into<String>) -> Self {
        Message::new(Role::System, content)
    }

    pub fn developer(content: impl Into<String>) -> Self {
        Message::new(Role::Developer, content)
    }

    pub fn user(content: impl Into<String>) -> Self {
        Message::new(Role::User, content)
    }

    pub fn assistant(content: impl Into<String>) -> Self {
        Message::new(Role::Assistant, content)
    }

    /// An assistant message calling tools: each call is `(id, name,
    /// arguments)` in OpenAI's shape.
    pub fn tool_call<'a>(calls: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>) -> Self {
        let calls = calls
            .into_iter()
            .map(|(id, name, arguments)| {
                serde_json::json!({
                    "id": id,
                    "type": "function",
                    "function": {"name": name, "arguments": arguments},
                })
            })
            .collect();
        Message {
            content: Content::Null,
            tool_calls: Some(calls),
            ..Message::assistant("")
        }
    }

    /// The result of the call `id`.
    pub fn tool_result(id: impl Into<String>, content: impl Into<String>) -> Self {
        Message {
            tool_call_id: Some(id.into()),
            ..Message::new(Role::Tool, content)
        }
    }

    /// This message, marked protected.
    pub fn protected(mut self) -> Self {
        self.meta.get_or_insert_with(Meta::default).protected = true;
        self
    }

    /// True when `meta.protected` is set.
    pub fn is_protected(&self) -> bool {
        self.meta.as_ref().is_some_and(|m| m.protected)
    }

    /// The text content: the string, the text parts joined by newlines,
    /// empty for `null` or no content.
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        self.content.text()
    }

    /// True for an assistant message with at least one tool call (OpenAI
    /// `tool_calls` or Anthropic `tool_use` blocks).
    pub fn calls_tools(&self) -> bool {
        self.role == Role::Assistant
            && (self.tool_calls.as_ref().is_some_and(|c| !c.is_empty())
                || self.content.tool_uses().next().is_some())
    }

    /// The `id` of each tool call, OpenAI's then Anthropic `tool_use`
    /// blocks' (calls without one are skipped).
    pub fn tool_call_ids(&self) -> impl Iterator<Item = &str> {
        self.tool_calls
            .iter()
            .flatten()
            .filter_map(|call| call.get("id").and_then(Json::as_str))
            .chain(
                self.content
                    .tool_uses()
                    .filter_map(|b| b.get("id").and_then(Json::as_str)),
            )
    }

    /// The `tool_use_id` of each Anthropic `tool_result` block (a user
    /// message answering tool calls).
    pub fn tool_result_ids(&self) -> impl Iterator<Item = &str> {
        self.content.tool_result_ids()
    }

    /// True for a message carrying Anthropic `tool_result` blocks.
    pub fn answers_tools(&self) -> bool {
        self.role == Role::User && self.tool_result_ids().next().is_some()
    }

    /// Each tool call's id, function name and arguments.
    pub fn tool_call_summaries(&self) -> Vec<ToolCallSummary> {
        self.tool_calls
            .iter()
            .flatten()
            .map(|call| {
                let function = call.get("function");
                let text = |v: Option<&Json>| match v {
                    Some(Json::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                    None => String::new(),
                };
                ToolCallSummary {
                    id: text(call.get("id")),
                    name: text(function.and_then(|f| f.get("name"))),
                    arguments: text(function.and_then(|f| f.get("arguments"))),
                }
            })
            .chain(self.content.tool_uses().map(|block| {
                let text = |v: Option<&Json>| match v {
                    Some(Json::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                    None => String::new(),
                };
                ToolCallSummary {
                    id: text(block.get("id")),
                    name: text(block.get("name")),
                    arguments: text(block.get("input")),
                }
            }))
            .collect()
    }
}

impl From<compression::Message> for Message {
    fn from(m: compression::Message) -> Self {
        let role = match m.role {
            compression::Role::System => Role::System,
            compression::Role::User => Role::User,
            compression::Role::Assistant => Role::Assistant,
        };
        Message::new(role, m.content)
    }
}

/// Why a history message has no agent equivalent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a {role} message has no equivalent among the agent's messages (system, user, assistant with text only)")]
pub struct NotAnAgentMessage {
    pub role: Role,
}

impl TryFrom<Message> for compression::Message {
    type Error = NotAnAgentMessage;

    /// Exact for the agent's own messages (system, user and assistant
    /// text, no tool calls, no extra fields).
    fn try_from(m: Message) -> Result<Self, NotAnAgentMessage> {
        let role = match m.role {
            Role::System => compression::Role::System,
            Role::User => compression::Role::User,
            Role::Assistant if m.tool_calls.is_none() => compression::Role::Assistant,
            other => return Err(NotAnAgentMessage { role: other }),
        };
        if m.tool_call_id.is_some() || m.name.is_some() || !m.extra.is_empty() {
            return Err(NotAnAgentMessage { role: m.role });
        }
        let content = match m.content {
            Content::Text(s) => s,
            Content::Null | Content::Absent => String::new(),
            Content::Parts(_) => return Err(NotAnAgentMessage { role: m.role }),
        };
        Ok(compression::Message::new(role, content))
    }
}

/// A problem with one line of a JSON Lines history.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct LineError {
    /// 1-based line number.
    pub line: usize,
    pub message: String,
}

/// Read a history written one JSON message per line (blank lines are
/// skipped). Errors name the line and the field.
pub fn parse_jsonl(text: &str) -> Result<Vec<Message>, LineError> {
    Ok(parse_jsonl_numbered(text)?
        .into_iter()
        .map(|(_, m)| m)
        .collect())
}

/// [`parse_jsonl`], with each message's 1-based line number.
pub fn parse_jsonl_numbered(text: &str) -> Result<Vec<(usize, Message)>, LineError> {
    let mut messages = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let message = parse_line(line).map_err(|message| LineError {
            line: i + 1,
            message,
        })?;
        messages.push((i + 1, message));
    }
    Ok(messages)
}

fn parse_line(line: &str) -> Result<Message, String> {
    let value: Json = serde_json::from_str(line).map_err(|e| format!("invalid JSON: {e}"))?;
    let Json::Object(object) = &value else {
        return Err("expected a JSON object (one message per line)".into());
    };
    match object.get("role") {
        None => return Err("missing field `role`".into()),
        Some(Json::String(role)) if Role::parse(role).is_none() => {
            return Err(format!(
                "field `role`: unknown role {role:?} (expected system, developer, user, assistant or tool)"
            ))
        }
        Some(Json::String(_)) => {}
        Some(other) => return Err(format!("field `role`: expected a string, got {other}")),
    }
    match object.get("content") {
        None | Some(Json::String(_) | Json::Null) => {}
        Some(Json::Array(parts)) => check_parts(parts)?,
        Some(_) => {
            return Err(
                "field `content`: expected a string, an array of content parts or null".into(),
            )
        }
    }
    if let Some(calls) = object.get("tool_calls") {
        let Json::Array(calls) = calls else {
            return Err("field `tool_calls`: expected an array".into());
        };
        for (n, call) in calls.iter().enumerate() {
            if !call.get("id").is_some_and(Json::is_string) {
                return Err(format!("field `tool_calls[{n}].id`: expected a string"));
            }
        }
    }
    serde_json::from_value(value).map_err(|e| e.to_string())
}

/// Write messages one per line, each line ending in `\n`.
pub fn to_jsonl(messages: &[Message]) -> String {
    let mut out = String::new();
    for m in messages {
        out.push_str(&serde_json::to_string(m).expect("messages serialize"));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_fields_round_trip() {
        let line = r#"{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{\"path\":\"a.rs\"}"},"x_extra":1}],"meta":{"protected":true,"tag":"pin"},"refusal":null,"audio":{"id":"a"}}"#;
        let m = parse_jsonl(line).unwrap().remove(0);
        assert!(m.is_protected());
        assert_eq!(m.tool_call_ids().collect::<Vec<_>>(), ["c1"]);
        let back: Json = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        let original: Json = serde_json::from_str(line).unwrap();
        assert_eq!(back, original);
    }

    #[test]
    fn parts_blocks_and_absent_content_round_trip() {
        for line in [
            r#"{"role":"user"}"#,
            r#"{"role":"assistant","content":null}"#,
            r#"{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"https://x/y.png","detail":"low"}}]}"#,
            r#"{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"s"},{"type":"tool_use","id":"tu1","name":"read","input":{"path":"a"}}]}"#,
            r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu1","content":[{"type":"text","text":"ok"}]}]}"#,
        ] {
            let m = parse_jsonl(line).unwrap().remove(0);
            assert_eq!(to_jsonl(std::slice::from_ref(&m)), format!("{line}\n"));
        }
        let m = parse_jsonl(r#"{"role":"assistant","content":[{"type":"tool_use","id":"tu1","name":"read","input":{"path":"a"}}]}"#).unwrap().remove(0);
        assert!(m.calls_tools());
        assert_eq!(m.tool_call_ids().collect::<Vec<_>>(), ["tu1"]);
        assert_eq!(m.tool_call_summaries()[0].arguments, r#"{"path":"a"}"#);
    }

    #[test]
    fn agent_messages_convert_losslessly() {
        for m in [
            compression::Message::system("s"),
            compression::Message::user("u"),
            compression::Message::assistant("a"),
        ] {
            let h = Message::from(m.clone());
            assert_eq!(compression::Message::try_from(h).unwrap(), m);
        }
        assert!(compression::Message::try_from(Message::tool_result("c", "x")).is_err());
    }

    #[test]
    fn bad_lines_name_line_and_field() {
        let e = parse_jsonl("{\"role\":\"user\",\"content\":\"hi\"}\n{\"role\":\"robot\"}")
            .unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("unknown role \"robot\""), "{e}");
        let e = parse_jsonl("{oops").unwrap_err();
        assert!(e.to_string().starts_with("line 1: invalid JSON"), "{e}");
        let e = parse_jsonl(r#"{"role":"user","content":[1]}"#).unwrap_err();
        assert!(e.message.contains("`content[0]`"), "{e}");
        let e = parse_jsonl(r#"{"role":"user","content":7}"#).unwrap_err();
        assert!(e.message.contains("`content`"), "{e}");
        let e = parse_jsonl(r#"{"content":"x"}"#).unwrap_err();
        assert!(e.message.contains("missing field `role`"), "{e}");
    }
}
