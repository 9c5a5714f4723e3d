//! Redaction of secrets in everything the history layer exports
//! (archives, event payloads, transcripts): copy on export, so the
//! in-memory history is never changed. No I/O.
//!
//! What is redacted:
//! - keys and tokens by their shape: OpenAI (`sk-`, `sk-proj-`),
//!   Anthropic (`sk-ant-`), AWS access key ids (`AKIA...`), GitHub
//!   (`ghp_`, `gho_`, ..., `github_pat_`), Slack (`xoxb-`, ...), JSON Web
//!   Tokens (`eyJ...`), private key blocks (PEM, OpenSSH, PGP; a block cut
//!   short loses what is left of it);
//! - values given a secret's name: `api_key=`, `token:`, `password =`,
//!   `"client_secret": "..."`, `aws_secret_access_key = ...`,
//!   `{:password "..."}`, `Authorization: Bearer ...` / `Basic ...`, and
//!   the password of a URL (`https://user:PASSWORD@host`). The name, the
//!   separator and any quotes stay: `api_key=<REDACTED>`. In JSON values
//!   the string under such a key is redacted whole.
//!
//! What is not: hex ids, UUIDs, git hashes and digests, base64 data, and
//! a secret with no name and no known shape (a bare AWS secret access key
//! is 40 characters of base64, like many harmless strings). The word
//! alone (`the password field is required`, `token count: 512`,
//! `max_tokens=1024`, `(let [token (tool/get-token)] ...)`) is prose or
//! code. A secret's name with a value counts wherever it is: `token: 512`
//! loses `512`, `let token = get_token();` loses `get_token()`, and a
//! secret in code (`String::from("...")`) is only caught by its shape:
//! redaction errs on the side of removing, and cannot read code.

use std::borrow::Cow;
use std::sync::OnceLock;

use fancy_regex::Regex;

use self::matcher::Matcher;
use serde_json::Value as Json;

use super::content::Content;
use super::message::Message;

mod matcher;

/// What a secret becomes.
pub const REDACTED: &str = "<REDACTED>";

/// One pattern: a regex and how much of a match to keep (the text of
/// capture group 1, if any, stays; the rest becomes `<REDACTED>`).
#[derive(Debug, Clone)]
struct Pattern {
    name: String,
    matcher: Matcher,
}

/// The names of secrets, for the `name=value` patterns and JSON keys
/// (`pwd` apart: `PWD=/home/me` is a directory).
const SECRET_NAMES: &str = r"api[_\-]?key|apikey|access[_\-]?key|secret[_\-]?key|private[_\-]?key|secret|token|password|passwd|passphrase|credentials?";

/// A secret's name as written before its value (`db_password`,
/// `"api_key"`, `pwd`).
const SECRET_NAME: &str = r#"(?i:[\w.\-]*(?:{names}|pwd)(?:\\?["'])?)"#;

/// Where a secret may start: after no word character, or after a JSON
/// escape (`\n`, `\t`, `\r`: text inside a JSON string, such as tool
/// call arguments, where `\b` would see the `n` as part of a word).
const BOUNDARY: &str = r"(?:(?<!\w)|(?<=\\[nrt]))";

/// The built-in patterns: (name, regex). Group 1, when present, is kept.
/// `{names}` stands for [`SECRET_NAMES`], `{name}` for a secret's name
/// with its closing quote, `{b}` for [`BOUNDARY`].
const DEFAULT_PATTERNS: &[(&str, &str)] = &[
    (
        // A whole block, or, cut short, its header lines and base64 lines
        // (each up to a line's end, perhaps after closing punctuation:
        // `passphrase=x` after the block is no base64 line).
        "private-key-block",
        r#"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|(?:(?:\s|\\[nr])+(?:(?:[A-Za-z0-9+/]{16,}={0,2}|[A-Za-z0-9+/]+={1,2})(?=[.,;:)\]}"']*(?:\s|\\[nrt"]|$))|[A-Za-z][A-Za-z\-]*: [^\n\\]*))*)"#,
    ),
    ("anthropic-key", r"{b}sk-ant-[A-Za-z0-9_\-]{20,}"),
    (
        // Random keys have digits or capitals; `sk-learn-compatible-...`
        // has neither.
        "openai-key",
        r"{b}sk-(?:proj-|svcacct-|admin-)?(?=[A-Za-z0-9_\-]*[0-9A-Z])[A-Za-z0-9_\-]{20,}",
    ),
    (
        "aws-access-key-id",
        r"{b}(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA)[0-9A-Z]{16}\b",
    ),
    (
        "github-token",
        r"{b}(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
    ),
    ("slack-token", r"{b}xox[abposre]-[A-Za-z0-9\-]{10,}"),
    (
        "jwt",
        r"{b}eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*",
    ),
    (
        "url-password",
        r"({b}[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/?#@]+:)(?!<REDACTED>)[^\s/?#]+(?=@)",
    ),
    (
        // `{:password "hunter2"}` (Clojure, PTC-Lisp).
        "keyword-string",
        r#"((?i)(?:(?<![\w\-])|(?<=\\[nrt])):[\w.\-]*(?:{names})\s+")(?!<REDACTED>")(?:[^"\\\n]|\\.){3,}(?=")"#,
    ),
    (
        // `name=value`, `name: value`, `"name": "value"` (also with
        // escaped quotes, inside a JSON string): a quoted value up to its
        // closing quote, an unquoted one up to a space or a delimiter;
        // never another name (`token: password: x` redacts `x`, and
        // `token = "api_key": "x"` too), nor a scheme's word, bracketed
        // or not, whose token the bearer patterns take (`token = (bearer
        // x` loses `x`, not `(bearer`).
        "assignment",
        r#"((?i)\b[\w.\-]*(?:{names})(?:\\?["'])?\s*[:=]\s*(?:\\?["'])?)(?:(?<=[^\\]")(?!<REDACTED>")(?!{name}\s*[:=])(?:[^"\\\n]|\\[^"\n]){3,}(?=")|(?<=\\")(?!<REDACTED>\\")(?!{name}\s*[:=])(?:[^"\\\n]|\\[^"\n]){3,}(?=\\")|(?<=[^\\]')(?!<REDACTED>')(?!{name}\s*[:=])[^'\n]{3,}(?=')|(?!<REDACTED>)(?![(\[{<]*(?:{name}\s*[:=]|(?i:bearer|basic|digest)\s))[^\s"',;&\\]{3,})"#,
    ),
    (
        // `pwd=...`, except a directory (`PWD=/home/me`).
        "pwd-assignment",
        r#"((?i)\b[\w.\-]*pwd(?:\\?["'])?\s*[:=]\s*(?:\\?["'])?)(?!<REDACTED>)(?!{name}\s*[:=])(?![/~.])[^\s"',;&\\]{3,}"#,
    ),
    (
        // After the assignments (`Bearer api_key = x` loses `x` first).
        // A token has a digit, an inner punctuation mark or a capital
        // past its first letter (`Bearer authentication.` is prose), and
        // ends at a delimiter and is no name (`Bearer name=value` and
        // `Bearer name: value` are assignments).
        "bearer-token",
        r#"({b}(?i:bearer)\s+)(?=[A-Za-z0-9\-._~+/]*[0-9]|[A-Za-z0-9\-._~+/]*[\-._~+/][A-Za-z0-9]|[A-Za-z0-9\-._~+/]+[A-Z])[A-Za-z0-9\-._~+/]{12,}=*(?![^\s"',;&)\]}>\\])(?![:=])"#,
    ),
    (
        "authorization-header",
        r#"({b}(?i:authorization)(?:\\?["'])?\s*[:=]\s*(?:\\?["'])?(?i:basic|token|digest)\s+)(?!<REDACTED>)[A-Za-z0-9+/=._~\-]{8,}(?![^\s"',;&)\]}>\\])(?![:=])"#,
    ),
];

/// The built-in patterns, compiled once per process.
fn built_in() -> &'static [Pattern] {
    static PATTERNS: OnceLock<Vec<Pattern>> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        DEFAULT_PATTERNS
            .iter()
            .map(|(name, source)| Pattern {
                name: (*name).to_string(),
                matcher: Matcher::new(
                    &source
                        .replace("{name}", SECRET_NAME)
                        .replace("{names}", SECRET_NAMES)
                        .replace("{b}", BOUNDARY),
                )
                .expect("built-in pattern"),
            })
            .collect()
    })
}

/// `text` with each match of `matcher` replaced by its first group (if
/// any) and `<REDACTED>`; `None` when nothing matched.
fn replace_all(matcher: &Matcher, text: &str) -> Option<String> {
    let mut found = matcher.find_from(text, 0)?;
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    loop {
        out.push_str(&text[copied..found.start]);
        if let Some((start, end)) = found.group {
            out.push_str(&text[start..end]);
        }
        out.push_str(REDACTED);
        copied = found.end;
        match matcher.find_from(text, found.end) {
            Some(next) => found = next,
            None => break,
        }
    }
    out.push_str(&text[copied..]);
    Some(out)
}

/// JSON keys whose string values are secrets whatever they look like.
fn secret_key() -> &'static Regex {
    static KEY: OnceLock<Regex> = OnceLock::new();
    KEY.get_or_init(|| {
        Regex::new(&format!(r"(?i)^[\w.\-]*(?:{SECRET_NAMES}|pwd)$")).expect("built-in pattern")
    })
}

/// Replaces secrets with `<REDACTED>`.
///
/// The built-in patterns are compiled once per process, when something
/// is first redacted (compiling them takes tens of milliseconds, which a
/// session that never exports anything should not pay at start-up);
/// the user's patterns are compiled by [`Redactor::new`], so a bad one
/// is reported there.
#[derive(Debug, Clone)]
pub struct Redactor {
    extra: Vec<Pattern>,
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
        let mut patterns = Vec::with_capacity(extra.len());
        for (i, source) in extra.iter().enumerate() {
            let matcher = Matcher::new(source).map_err(|e| PatternError {
                pattern: source.clone(),
                message: e.to_string(),
            })?;
            patterns.push(Pattern {
                name: format!("user-{}", i + 1),
                matcher,
            });
        }
        Ok(Redactor { extra: patterns })
    }

    /// Compile the built-in patterns now (once per process; they are
    /// otherwise compiled by the first redaction). A host that exports
    /// calls this before its run, so that the first export does not wait.
    pub fn prepare(&self) {
        built_in();
    }

    /// The names of the patterns, built-in first.
    pub fn pattern_names(&self) -> Vec<&str> {
        DEFAULT_PATTERNS
            .iter()
            .map(|(name, _)| *name)
            .chain(self.extra.iter().map(|p| p.name.as_str()))
            .collect()
    }

    /// `text` with every match replaced; borrowed when nothing matched.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for pattern in built_in().iter().chain(&self.extra) {
            if let Some(replaced) = replace_all(&pattern.matcher, &out) {
                out = Cow::Owned(replaced);
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
        match &mut m.content {
            Content::Text(content) => {
                if let Cow::Owned(s) = self.redact(content) {
                    *content = s;
                }
            }
            Content::Parts(parts) => parts.iter_mut().for_each(|p| self.json_in_place(p)),
            Content::Null | Content::Absent => {}
        }
        if let Some(calls) = &mut m.tool_calls {
            for call in calls.iter_mut() {
                self.json_in_place(call);
            }
        }
        if let Some(meta) = &mut m.meta {
            self.object_in_place(&mut meta.extra);
        }
        self.object_in_place(&mut m.extra);
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
            Json::Object(map) => self.object_in_place(map),
            _ => {}
        }
    }

    /// The values of `map`; a string under a secret's name (`password`,
    /// `api_key`, ...) is redacted whole.
    fn object_in_place(&self, map: &mut serde_json::Map<String, Json>) {
        for (key, value) in map.iter_mut() {
            match value {
                Json::String(s)
                    if !s.is_empty()
                        && s != REDACTED
                        && secret_key().is_match(key).unwrap_or(false) =>
                {
                    *s = REDACTED.to_string();
                }
                v => self.json_in_place(v),
            }
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
    fn a_quoted_secret_name_is_a_key_not_a_value() {
        // Found by the property test: the name after `token = ` is the
        // key of the next pair, whose value is the secret.
        let r = Redactor::default();
        assert_eq!(
            r.redact(r#"token = "api_key": " ^0AAaA0" "#),
            r#"token = "api_key": "<REDACTED>" "#
        );
        assert_eq!(r.redact(r#"token = "abc123x""#), r#"token = "<REDACTED>""#);
        // Also behind an opening bracket (found the same way).
        assert_eq!(
            r.redact("token\" = (aws_secret_access_key = aa0A+a+0a0/+0000a+aA00 "),
            "token\" = (aws_secret_access_key = <REDACTED> "
        );
    }

    #[test]
    fn user_patterns_are_added_and_checked() {
        let r = Redactor::new(&[r"(employee-)\d{6}".to_string()]).unwrap();
        assert_eq!(r.redact("id employee-123456"), "id employee-<REDACTED>");
        assert!(Redactor::new(&["(".to_string()]).is_err());
        // Not a pattern on its own, though it would be inside a group.
        assert!(Redactor::new(&["a)(b".to_string()]).is_err());
        assert_eq!(
            r.pattern_names().last().copied(),
            Some("user-1"),
            "built-in names first, then the user's"
        );
        assert_eq!(r.pattern_names().len(), DEFAULT_PATTERNS.len() + 1);
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
