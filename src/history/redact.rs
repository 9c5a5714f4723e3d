//! Redaction of secrets in everything the history layer exports
//! (archives, event payloads, transcripts): copy on export, so the
//! in-memory history is never changed. No I/O.
//!
//! The default patterns cover API keys of OpenAI, Anthropic, AWS, GitHub
//! and Slack, `api_key=` / `token=` / `password=` / `secret=` forms
//! (the name and separator are kept: `api_key=<REDACTED>`), bearer tokens
//! and private key blocks. They are anchored on the shape of each secret,
//! so ordinary hex ids, UUIDs and git hashes pass untouched.

use std::borrow::Cow;

use fancy_regex::{Captures, Regex};
use serde_json::Value as Json;

use super::message::Message;

/// What a secret becomes.
pub const REDACTED: &str = "<REDACTED>";

/// One pattern: a regex and how much of a match to keep (the text of
/// capture group 1, if any, stays; the rest becomes `<REDACTED>`).
#[derive(Debug, Clone)]
struct Pattern {
    name: String,
    regex: Regex,
}

/// The built-in patterns: (name, regex). Group 1, when present, is kept.
const DEFAULT_PATTERNS: &[(&str, &str)] = &[
    (
        "private-key-block",
        r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----[\s\S]*?-----END (?:[A-Z]+ )*PRIVATE KEY-----",
    ),
    ("anthropic-key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}"),
    (
        "openai-key",
        r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
    ),
    (
        "aws-access-key-id",
        r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b",
    ),
    (
        "github-token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
    ),
    ("slack-token", r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"),
    (
        "bearer-token",
        r"(?i)(\bbearer\s+)[A-Za-z0-9\-._~+/]{12,}=*",
    ),
    (
        "assignment",
        r#"(?i)(\b[\w.\-]*(?:api[_\-]?key|apikey|access[_\-]?key|secret[_\-]?key|secret|token|password|passwd|pwd|credentials?)["']?\s*[:=]\s*["']?)(?!<REDACTED>)[^\s"',;&]{3,}"#,
    ),
];

/// Replaces secrets with `<REDACTED>`.
#[derive(Debug, Clone)]
pub struct Redactor {
    patterns: Vec<Pattern>,
}

/// A user pattern that does not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("redaction pattern {pattern:?} does not compile: {message}")]
pub struct PatternError {
    pub pattern: String,
    pub message: String,
}

impl Default for Redactor {
    fn default() -> Self {
        Redactor::new(&[]).expect("the built-in patterns compile")
    }
}

impl Redactor {
    /// The built-in patterns plus `extra` (regexes; a first capture
    /// group, if any, is kept).
    pub fn new(extra: &[String]) -> Result<Redactor, PatternError> {
        let mut patterns: Vec<Pattern> = DEFAULT_PATTERNS
            .iter()
            .map(|(name, source)| Pattern {
                name: (*name).to_string(),
                regex: Regex::new(source).expect("built-in pattern"),
            })
            .collect();
        for (i, source) in extra.iter().enumerate() {
            let regex = Regex::new(source).map_err(|e| PatternError {
                pattern: source.clone(),
                message: e.to_string(),
            })?;
            patterns.push(Pattern {
                name: format!("user-{}", i + 1),
                regex,
            });
        }
        Ok(Redactor { patterns })
    }

    /// The names of the patterns, built-in first.
    pub fn pattern_names(&self) -> Vec<&str> {
        self.patterns.iter().map(|p| p.name.as_str()).collect()
    }

    /// `text` with every match replaced; borrowed when nothing matched.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for pattern in &self.patterns {
            let replaced = pattern.regex.replace_all(&out, |caps: &Captures<'_>| {
                let kept = caps.get(1).map_or("", |m| m.as_str());
                format!("{kept}{REDACTED}")
            });
            if let Cow::Owned(s) = replaced {
                out = Cow::Owned(s);
            }
        }
        out
    }

    /// True when some pattern matches `text` (outside `<REDACTED>`
    /// markers already in place).
    pub fn finds_secret(&self, text: &str) -> bool {
        self.redact(text) != text
    }

    /// A redacted copy of `message`: content, tool call arguments and
    /// unknown fields.
    pub fn message(&self, message: &Message) -> Message {
        let mut m = message.clone();
        if let Some(content) = &m.content {
            if let Cow::Owned(s) = self.redact(content) {
                m.content = Some(s);
            }
        }
        if let Some(calls) = &mut m.tool_calls {
            for call in calls.iter_mut() {
                self.json_in_place(call);
            }
        }
        for value in m.extra.values_mut() {
            self.json_in_place(value);
        }
        m
    }

    /// A redacted copy of a JSON value (every string in it).
    pub fn json(&self, value: &Json) -> Json {
        let mut v = value.clone();
        self.json_in_place(&mut v);
        v
    }

    fn json_in_place(&self, value: &mut Json) {
        match value {
            Json::String(s) => {
                if let Cow::Owned(r) = self.redact(s) {
                    *s = r;
                }
            }
            Json::Array(items) => items.iter_mut().for_each(|v| self.json_in_place(v)),
            Json::Object(map) => map.values_mut().for_each(|v| self.json_in_place(v)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_applied_before_export() {
        let r = Redactor::default();
        assert_eq!(r.redact("api_key=sk-abc123"), "api_key=<REDACTED>");
        let m = Message::user("my password: hunter22 ok");
        let copy = r.message(&m);
        assert_eq!(copy.text(), "my password: <REDACTED> ok");
        assert_eq!(
            m.text(),
            "my password: hunter22 ok",
            "the original is unchanged"
        );
    }

    #[test]
    fn user_patterns_are_added_and_checked() {
        let r = Redactor::new(&[r"(employee-)\d{6}".to_string()]).unwrap();
        assert_eq!(r.redact("id employee-123456"), "id employee-<REDACTED>");
        assert!(Redactor::new(&["(".to_string()]).is_err());
    }

    #[test]
    fn redaction_is_idempotent() {
        let r = Redactor::default();
        let once = r
            .redact("token=abcdef123456 and Bearer abcdefghijklmnop1234")
            .into_owned();
        assert_eq!(r.redact(&once), once);
        assert!(!r.finds_secret(&once));
    }
}
