//! Redaction of secrets in everything the history layer exports
//! (archives, event payloads, transcripts): copy on export, so the
//! in-memory history is never changed. No I/O.
//!
//! What is redacted (the rules, one by one, are in `rules.rs`, and
//! documented in SECURITY.md and the README):
//! - keys and tokens by their shape: OpenAI, Anthropic, Stripe, Google,
//!   AWS access key ids, GitHub, GitLab, Slack (tokens and webhook
//!   URLs), npm, PyPI, SendGrid, Hugging Face, Shopify, DigitalOcean,
//!   JSON Web Tokens, private key blocks (PEM, OpenSSH, PGP; a block cut
//!   short loses what is left of it), e-mail addresses and card numbers
//!   (Luhn-checked);
//! - values given a secret's name: `api_key=`, `token:`, `password =`,
//!   `"client_secret": "..."`, `aws_secret_access_key = ...`,
//!   `{:password "..."}`, `Cookie: ...`, `Authorization: Bearer ...` /
//!   `Basic ...`, and the password of a URL (`https://user:PASSWORD@host`).
//!   The name, the separator and any quotes stay: `api_key=<REDACTED>`.
//!   The whole value goes: a quoted one to its closing quote, one after
//!   `name: ` or `name = ` to the end of its line, one after `name=` to
//!   the next space; any of them stops early at a next `name=` pair
//!   (`token=x&page=2`). In JSON, every string under a secret's key
//!   ([`is_secret_key`]: `password`, `apiKey`, `X-Auth-Token`, ...) is
//!   redacted whole, at any depth.
//!
//! What is not: hex ids, UUIDs, git hashes and digests, base64 data, and
//! a secret with no name and no known shape (a bare AWS secret access key
//! is 40 characters of base64, like many harmless strings). The word
//! alone (`the password field is required`, `token count: 512`,
//! `max_tokens=1024`, `(let [token (tool/get-token)] ...)`) is prose or
//! code. A secret's name with a value counts wherever it is: `token: 512`
//! loses `512`, `let token = get_token();` loses `get_token();`, and a
//! secret in code (`String::from("...")`) is only caught by its shape:
//! redaction errs on the side of removing, and cannot read code.
//!
//! The digest (the deterministic summary that stays in the history)
//! reads messages without their secrets ([`without_secret_values_in`]),
//! e-mail addresses apart: they may be facts a later turn needs, and are
//! redacted when the summary is exported.

use std::borrow::Cow;
use std::sync::OnceLock;

use self::matcher::{Found, Matcher};
use self::rules::RULES;
use serde_json::Value as Json;

use super::content::Content;
use super::message::Message;

mod keys;
mod matcher;
mod rules;

/// What a secret becomes.
pub const REDACTED: &str = "<REDACTED>";

pub use self::keys::is_secret_key;

/// One pattern: a regex, how much of a match to keep (the text of
/// capture group 1, if any, stays; the rest becomes `<REDACTED>`) and
/// an optional check of a match.
#[derive(Debug, Clone)]
struct Pattern {
    name: String,
    matcher: Matcher,
    in_digest: bool,
    check: Option<rules::Check>,
}

/// The built-in patterns, compiled once per process.
fn built_in() -> &'static [Pattern] {
    static PATTERNS: OnceLock<Vec<Pattern>> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        RULES
            .iter()
            .map(|rule| Pattern {
                name: rule.name.to_string(),
                matcher: Matcher::new(&rules::expand(rule.source)).expect("built-in pattern"),
                in_digest: rule.in_digest,
                check: rule.check,
            })
            .collect()
    })
}

/// The next match of `pattern` in `text` at or after `from` that its
/// check (if any) accepts, cut to what the check accepts.
fn next_match(pattern: &Pattern, text: &str, mut from: usize) -> Option<Found> {
    loop {
        let mut found = pattern.matcher.find_from(text, from)?;
        let Some(check) = pattern.check else {
            return Some(found);
        };
        match check(&text[found.start..found.end]) {
            Some(len) if len > 0 => {
                found.end = found.start + len;
                return Some(found);
            }
            _ => from = next_char(text, found.start),
        }
    }
}

/// The index after the character at `i` (past the end when `i` is).
fn next_char(text: &str, i: usize) -> usize {
    text[i..].chars().next().map_or(i + 1, |c| i + c.len_utf8())
}

/// `text` with each match of `pattern` replaced by its first group (if
/// any) and `<REDACTED>`; `None` when nothing matched.
fn replace_all(pattern: &Pattern, text: &str) -> Option<String> {
    let mut found = next_match(pattern, text, 0)?;
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    loop {
        out.push_str(&text[copied..found.start]);
        if let Some((start, end)) = found.group {
            out.push_str(&text[start..end.min(found.end)]);
        }
        out.push_str(REDACTED);
        copied = found.end;
        match next_match(pattern, text, found.end) {
            Some(next) => found = next,
            None => break,
        }
    }
    out.push_str(&text[copied..]);
    Some(out)
}

/// `text` as the digest may copy it: without the values that a
/// secret's name introduces (`password: x`, `api_key=x`, `"token":
/// "x"`, `{:password "x"}`, `Cookie: ...`) nor secrets of a known shape
/// (keys, tokens, private key blocks, card numbers), but with e-mail
/// addresses, which may be facts a later turn needs (they are redacted
/// when the summary is exported). The digest copies pieces of what it
/// reads (a line, a word that looks like a path), and a piece of a
/// secret may no longer have the shape that export redaction finds, so
/// secrets go before anything is copied.
pub fn scrub_for_digest(text: &str) -> Cow<'_, str> {
    let mut out = Cow::Borrowed(text);
    for pattern in built_in().iter().filter(|p| p.in_digest) {
        if let Some(replaced) = replace_all(pattern, &out) {
            out = Cow::Owned(replaced);
        }
    }
    out
}

/// A tool call's arguments (JSON text, or any text) without secret
/// values: in JSON, every string or number under a secret's key (at
/// any depth: `{"auth": {"user": "a", "pass": "b"}}` keeps neither
/// string) becomes `<REDACTED>`, and other strings are scrubbed
/// ([`scrub_for_digest`]); so is other text. Borrowed when nothing changed (the text is then exactly
/// the input, formatting included).
pub fn without_secret_values(arguments: &str) -> Cow<'_, str> {
    match serde_json::from_str::<Json>(arguments) {
        Ok(mut value) if matches!(value, Json::Object(_) | Json::Array(_)) => {
            if drop_secret_values(&mut value) {
                Cow::Owned(value.to_string())
            } else {
                Cow::Borrowed(arguments)
            }
        }
        _ => scrub_for_digest(arguments),
    }
}

/// `messages` as the digest reads them: each one whose content or tool
/// call arguments hold a secret is copied without it
/// ([`without_secret_values`], [`scrub_for_digest`]), the rest of that
/// message as it was; a message with nothing to drop is borrowed, not
/// copied (most messages of a round, so a round copies only what it
/// changes).
pub fn without_secret_values_in(messages: &[Message]) -> Vec<Cow<'_, Message>> {
    messages.iter().map(without_secrets).collect()
}

/// One message of [`without_secret_values_in`].
fn without_secrets(m: &Message) -> Cow<'_, Message> {
    let text = match &m.content {
        Content::Text(content) => scrub_for_digest(content),
        _ => Cow::Borrowed(""),
    };
    let parts = matches!(m.content, Content::Parts(_));
    // Arguments as strings (the usual shape): scrubbed without a copy
    // when clean; any other shape takes the copying path.
    let mut arguments: Vec<Option<String>> = Vec::new();
    let mut other_shape = false;
    for call in m.tool_calls.iter().flatten() {
        match call.get("function").and_then(|f| f.get("arguments")) {
            Some(Json::String(s)) => arguments.push(match without_secret_values(s) {
                Cow::Owned(clean) => Some(clean),
                Cow::Borrowed(_) => None,
            }),
            Some(_) => other_shape = true,
            None => arguments.push(None),
        }
    }
    let clean = matches!(text, Cow::Borrowed(_))
        && !parts
        && !other_shape
        && arguments.iter().all(Option::is_none);
    if clean {
        return Cow::Borrowed(m);
    }
    let text = match text {
        Cow::Owned(s) => Some(s),
        Cow::Borrowed(_) => None,
    };
    let mut m = m.clone();
    match &mut m.content {
        Content::Text(content) => {
            if let Some(s) = text {
                *content = s;
            }
        }
        // Content parts and blocks: every string in them, and the
        // values of secret-named keys (a `tool_use` block's input).
        Content::Parts(parts) => {
            parts.iter_mut().for_each(|p| {
                drop_secret_values(p);
            });
        }
        Content::Absent | Content::Null => {}
    }
    let mut scrubbed = arguments.into_iter();
    for call in m.tool_calls.iter_mut().flatten() {
        if let Some(arguments) = call
            .get_mut("function")
            .and_then(|f| f.get_mut("arguments"))
        {
            match arguments {
                Json::String(s) => {
                    if let Some(Some(clean)) = scrubbed.next() {
                        *s = clean;
                    }
                }
                other => {
                    drop_secret_values(other);
                }
            }
        } else {
            scrubbed.next();
        }
    }
    Cow::Owned(m)
}

/// The JSON object or array that `text` holds, if it is one.
fn nested_json(text: &str) -> Option<Json> {
    if !text.trim_start().starts_with(['{', '[']) {
        return None;
    }
    serde_json::from_str::<Json>(text)
        .ok()
        .filter(|v| matches!(v, Json::Object(_) | Json::Array(_)))
}

/// Drops secret values in place (see [`without_secret_values`]); true
/// when something changed.
fn drop_secret_values(value: &mut Json) -> bool {
    if let Json::String(s) = value {
        if let Some(mut inner) = nested_json(s) {
            if drop_secret_values(&mut inner) {
                *s = inner.to_string();
                return true;
            }
        }
    }
    match value {
        Json::String(s) => match scrub_for_digest(s) {
            Cow::Owned(clean) => {
                *s = clean;
                true
            }
            Cow::Borrowed(_) => false,
        },
        Json::Array(items) => every(items.iter_mut(), drop_secret_values),
        Json::Object(map) => map.iter_mut().fold(false, |changed, (key, v)| {
            let dropped = if is_secret_key(key) {
                redact_under_secret_key(v, true)
            } else {
                drop_secret_values(v)
            };
            dropped || changed
        }),
        _ => false,
    }
}

/// `f` applied to every item (none skipped); true when some call was.
fn every<'a>(
    items: impl Iterator<Item = &'a mut Json>,
    mut f: impl FnMut(&mut Json) -> bool,
) -> bool {
    let mut changed = false;
    for item in items {
        changed |= f(item);
    }
    changed
}

/// Every string under a secret's key becomes `<REDACTED>` (and a number
/// right under it: `"pin": 1234` style values); numbers and flags of a
/// nested object stay (`"expires_in": 3600`). True when something
/// changed.
fn redact_under_secret_key(value: &mut Json, top: bool) -> bool {
    match value {
        Json::String(s) if !s.is_empty() && s != REDACTED => {
            *s = REDACTED.to_string();
            true
        }
        Json::Number(_) if top => {
            *value = Json::String(REDACTED.to_string());
            true
        }
        Json::Array(items) => every(items.iter_mut(), |v| redact_under_secret_key(v, top)),
        Json::Object(map) => every(map.values_mut(), |v| redact_under_secret_key(v, false)),
        _ => false,
    }
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
                in_digest: false,
                check: None,
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
        RULES
            .iter()
            .map(|rule| rule.name)
            .chain(self.extra.iter().map(|p| p.name.as_str()))
            .collect()
    }

    /// `text` with every match replaced; borrowed when nothing matched.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for pattern in built_in().iter().chain(&self.extra) {
            if let Some(replaced) = replace_all(pattern, &out) {
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
                // JSON inside a string (tool call arguments, a body
                // holding arguments): redacted as JSON, however deep,
                // where escaped quotes would hide a key from the text
                // rules.
                if let Some(mut inner) = nested_json(s) {
                    let before = inner.clone();
                    self.json_in_place(&mut inner);
                    if inner != before {
                        *s = inner.to_string();
                    }
                }
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
                v if is_secret_key(key) => {
                    redact_under_secret_key(v, true);
                    self.json_in_place(v);
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
    fn the_digest_copies_only_messages_with_a_secret() {
        let messages = [
            Message::user("Fix src/lib.rs, mail ana@example.com"),
            Message::tool_call([("c1", "read_file", r#"{"path":"src/lib.rs"}"#)]),
            Message::tool_result("c1", "fn main() {}"),
            Message::user("my password: hunter22 ok"),
            Message::tool_call([("c2", "login", r#"{"user":"ana","password":"hunter22"}"#)]),
            Message::tool_call([("c3", "run", "sk_live_4eC39HqLyjWDarjtT1zdp7dc")]),
        ];
        let read = without_secret_values_in(&messages);
        let borrowed: Vec<bool> = read.iter().map(|m| matches!(m, Cow::Borrowed(_))).collect();
        assert_eq!(borrowed, [true, true, true, false, false, false]);
        for (m, original) in read.iter().zip(&messages).skip(3) {
            let seen = format!("{} {:?}", m.text(), m.tool_call_summaries());
            assert!(
                !seen.contains("hunter22") && !seen.contains("4eC39Hq"),
                "{seen}"
            );
            assert_eq!(m.role, original.role);
        }
        // E-mail addresses stay for the digest (redacted on export).
        assert!(read[0].text().contains("ana@example.com"));
    }

    #[test]
    fn redaction_applied_before_export() {
        let r = Redactor::default();
        assert_eq!(r.redact("api_key=sk-abc123"), "api_key=<REDACTED>");
        let m = Message::user("my password: hunter22 ok");
        let copy = r.message(&m);
        assert_eq!(copy.text(), "my password: <REDACTED>");
        assert_eq!(
            m.text(),
            "my password: hunter22 ok",
            "the original is unchanged"
        );
    }

    #[test]
    fn a_value_goes_whole_never_a_word_of_it() {
        let r = Redactor::default();
        for (text, expected) in [
            ("password: X&3", "password: <REDACTED>"),
            ("password=X&3", "password=<REDACTED>"),
            (
                "password: correct horse battery staple\nnext",
                "password: <REDACTED>\nnext",
            ),
            (
                "Password = s3cr3t; with spaces\nok",
                "Password = <REDACTED>\nok",
            ),
            (
                "GET /x?token=Zk9mQ2x&page=2 HTTP/1.1",
                "GET /x?token=<REDACTED>&page=2 HTTP/1.1",
            ),
            (
                "Server=db;Pwd=Sup3r$ecret;Encrypt=yes",
                "Server=db;Pwd=<REDACTED>;Encrypt=yes",
            ),
            (
                "password: hunter2 user: ann",
                "password: <REDACTED> user: ann",
            ),
            (
                "Cookie: sid=abc123; theme=dark\nAccept: */*",
                "Cookie: <REDACTED>\nAccept: */*",
            ),
            ("{\"pass\": \"ab\"}", "{\"pass\": \"<REDACTED>\"}"),
        ] {
            assert_eq!(r.redact(text), expected, "{text}");
            assert_eq!(r.redact(expected), expected, "idempotent: {expected}");
        }
    }

    #[test]
    fn shapes_of_stripe_google_mail_and_cards() {
        let r = Redactor::default();
        for (text, expected) in [
            (
                "stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc ok",
                "stripe <REDACTED> ok",
            ),
            (
                "key AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q ok",
                "key <REDACTED> ok",
            ),
            ("mail ann.lee+x@example.co.uk.", "mail <REDACTED>."),
            (
                "card 4111 1111 1111 1111 12 items",
                "card <REDACTED> 12 items",
            ),
            ("card 4111-1111-1111-1112", "card 4111-1111-1111-1112"),
            ("amex 378282246310005.", "amex <REDACTED>."),
            (
                "https://hooks.slack.com/services/T0001/B0001/XXXXXXXXXXXXXXXX",
                "https://hooks.slack.com/services/<REDACTED>",
            ),
            ("git@github.com:org/repo.git", "git@github.com:org/repo.git"),
            ("https://ann@example.com/x", "https://ann@example.com/x"),
        ] {
            assert_eq!(r.redact(text), expected, "{text}");
        }
    }

    #[test]
    fn arguments_lose_values_under_secret_keys() {
        let args = r#"{"user":"ann","password":"X&3","auth":{"user":"a","pass":"b","ttl":60},"pin":1234,"note":"token=abc123 ok","n":2}"#;
        let clean = without_secret_values(args);
        let v: Json = serde_json::from_str(&clean).unwrap();
        assert_eq!(v["user"], "ann");
        assert_eq!(v["password"], REDACTED);
        assert_eq!(v["auth"]["user"], REDACTED);
        assert_eq!(v["auth"]["pass"], REDACTED);
        assert_eq!(v["auth"]["ttl"], 60);
        assert_eq!(v["pin"], 1234, "pin is not a secret's name");
        assert_eq!(v["note"], "token=<REDACTED> ok");
        // Nothing to drop: the very same text.
        let plain = r#"{ "path" : "src/a.rs" }"#;
        assert!(matches!(without_secret_values(plain), Cow::Borrowed(p) if p == plain));
        // Text arguments lose secrets; e-mail addresses stay for the digest.
        assert_eq!(
            without_secret_values("login --password=hunter22 ann@example.com"),
            "login --password=<REDACTED> ann@example.com"
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
        assert_eq!(r.pattern_names().len(), RULES.len() + 1);
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
