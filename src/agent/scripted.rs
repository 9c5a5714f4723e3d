//! A provider that replays prepared replies instead of calling a model:
//! for tests, examples, demos and reproducing a recorded run.
//!
//! A script file (`script:FILE`) is either a JSON array whose items are
//! reply strings (or objects as below), or JSON lines, one reply per
//! non-blank line: a string, or an object with a `content` string and an
//! optional `usage` (`{"input_tokens": N, "output_tokens": N}`). An object
//! may name its text `reply` instead of `content` and may carry other
//! fields, so a transcript written by the agent loop replays as a script.
//!
//! Each call takes the next reply; a call past the end fails with
//! [`ProviderError::ScriptExhausted`]. Every request received is recorded
//! and can be inspected with [`ScriptedProvider::requests`].

use std::path::Path;
use std::sync::Mutex;

use serde_json::Value as Json;

use super::message::{ChatRequest, ChatResponse, Usage};
use super::provider::{LlmProvider, ProviderError};

/// One prepared reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptedReply {
    pub content: String,
    pub usage: Option<Usage>,
}

impl From<String> for ScriptedReply {
    fn from(content: String) -> Self {
        ScriptedReply {
            content,
            usage: None,
        }
    }
}

impl From<&str> for ScriptedReply {
    fn from(content: &str) -> Self {
        ScriptedReply::from(content.to_string())
    }
}

/// Replays replies in order and records the requests it received.
#[derive(Debug)]
pub struct ScriptedProvider {
    script: String,
    replies: Vec<ScriptedReply>,
    requests: Mutex<Vec<ChatRequest>>,
}

impl ScriptedProvider {
    /// A script held in memory; its name in messages is `inline`.
    ///
    /// ```
    /// use ptc_lisp::agent::{ChatMessage, ChatRequest, LlmProvider, ScriptedProvider};
    ///
    /// let model = ScriptedProvider::new(vec!["```clojure\n(+ 1 2)\n```".to_string()]);
    /// let reply = model.complete(&ChatRequest::new(vec![ChatMessage::user("add")])).unwrap();
    /// assert!(reply.content.contains("(+ 1 2)"));
    /// assert_eq!(model.requests()[0].messages[0].content, "add");
    /// assert!(model.complete(&ChatRequest::default()).is_err());
    /// ```
    pub fn new(replies: Vec<String>) -> Self {
        Self::with_replies(
            "inline",
            replies.into_iter().map(ScriptedReply::from).collect(),
        )
    }

    /// A script of full replies; `script` names it in messages.
    pub fn with_replies(script: impl Into<String>, replies: Vec<ScriptedReply>) -> Self {
        ScriptedProvider {
            script: script.into(),
            replies,
            requests: Mutex::new(Vec::new()),
        }
    }

    /// Read a script file (see the module docs for the format).
    pub fn from_file(path: &Path) -> Result<Self, ProviderError> {
        let label = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| {
            ProviderError::Config(format!("Could not read the script `{label}`: {e}"))
        })?;
        let replies = parse_script(&text, &label)?;
        Ok(Self::with_replies(label, replies))
    }

    /// Every request received so far, in order (including one that found
    /// the script exhausted).
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.lock().clone()
    }

    /// How many calls were made.
    pub fn calls(&self) -> usize {
        self.lock().len()
    }

    /// How many replies are left.
    pub fn remaining(&self) -> usize {
        self.replies.len().saturating_sub(self.calls())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<ChatRequest>> {
        // A panic while the lock was held cannot leave the list half
        // written, so a poisoned lock is still usable.
        self.requests.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl LlmProvider for ScriptedProvider {
    fn name(&self) -> String {
        format!("script:{}", self.script)
    }

    fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, ProviderError> {
        let mut requests = self.lock();
        let index = requests.len();
        requests.push(request.clone());
        let reply = self
            .replies
            .get(index)
            .ok_or_else(|| ProviderError::ScriptExhausted {
                script: self.script.clone(),
                used: self.replies.len(),
            })?;
        Ok(ChatResponse {
            content: reply.content.clone(),
            usage: reply.usage,
            model: Some("script".to_string()),
            truncated: false,
        })
    }
}

/// Parse script text; `label` names it in errors.
pub fn parse_script(text: &str, label: &str) -> Result<Vec<ScriptedReply>, ProviderError> {
    let bad = |place: String, what: &str| {
        ProviderError::Config(format!("The script `{label}`, {place}: {what}"))
    };
    if text.trim_start().starts_with('[') {
        let items: Vec<Json> = serde_json::from_str(text)
            .map_err(|e| bad(format!("line {}", e.line()), &format!("bad JSON ({e})")))?;
        items
            .iter()
            .enumerate()
            .map(|(i, item)| reply_from_json(item).map_err(|what| bad(format!("item {i}"), &what)))
            .collect()
    } else {
        text.lines()
            .enumerate()
            .filter(|(_, line)| !line.trim().is_empty())
            .map(|(i, line)| {
                let place = || format!("line {}", i + 1);
                let item: Json = serde_json::from_str(line)
                    .map_err(|e| bad(place(), &format!("bad JSON ({e})")))?;
                reply_from_json(&item).map_err(|what| bad(place(), &what))
            })
            .collect()
    }
}

fn reply_from_json(item: &Json) -> Result<ScriptedReply, String> {
    match item {
        Json::String(s) => Ok(ScriptedReply::from(s.as_str())),
        Json::Object(fields) => {
            let content = fields
                .get("content")
                .or_else(|| fields.get("reply"))
                .and_then(Json::as_str)
                .ok_or("expected a `content` string")?;
            let usage = match fields.get("usage") {
                None | Some(Json::Null) => None,
                Some(u) => Some(
                    serde_json::from_value::<Usage>(u.clone())
                        .map_err(|e| format!("bad `usage` ({e})"))?,
                ),
            };
            Ok(ScriptedReply {
                content: content.to_string(),
                usage,
            })
        }
        _ => Err("expected a reply string or an object with a `content` string".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_and_lines_parse() {
        let r = parse_script(
            r#"["a", {"content": "b", "usage": {"input_tokens": 1, "output_tokens": 2}}]"#,
            "s",
        )
        .unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[1].usage.unwrap().output_tokens, 2);
        let r = parse_script(
            "{\"content\": \"x\"}\n\n{\"reply\": \"y\", \"turn\": 2}\n",
            "s",
        )
        .unwrap();
        assert_eq!(r[0].content, "x");
        assert_eq!(r[1].content, "y");
    }

    #[test]
    fn bad_scripts_name_the_place() {
        let e = parse_script("{\"content\": \"x\"}\n{\"text\": 1}\n", "s.jsonl").unwrap_err();
        assert_eq!(
            e.to_string(),
            "The script `s.jsonl`, line 2: expected a `content` string"
        );
        let e = parse_script("[1]", "s.json").unwrap_err();
        assert!(e
            .to_string()
            .starts_with("The script `s.json`, item 0: expected"));
    }
}
