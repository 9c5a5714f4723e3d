//! Whether a tool result is a failure, read from failure signals (the
//! protocol's error fields, a reported exit code, the shape of compiler,
//! test-runner and HTTP failure output), never from a word occurring in
//! the content; and what a call targets, so a later success of the same
//! tool resolves an earlier failure. No I/O.
//!
//! The resolution rule ([`resolves`]): a failure of tool `T` on target
//! `A` is fixed by a later *successful* call of `T` on target `B` when
//! 1. `B` is `A`, or broader than `A` (its words start `A`'s words:
//!    `cargo test` covers `cargo test parser::nested`; an empty target
//!    covers all); or
//! 2. `B` is a corrected retry of `A`: `A` names at least one object (a
//!    qualified name: `sales.orders`, `src/a.rs`, `deployment/payments`,
//!    `parser::tests`; see [`objects`]) and `B` names every object `A`
//!    names. A failed query of `sales.orders` followed by a different,
//!    successful query of `sales.orders` is a fix; a later success on
//!    another table is not, and neither is one on a target that names no
//!    object (`check_health payments` does not fix `check_health
//!    db-replica-2`).
//!
//! A failing call supersedes the open failures it would have fixed by
//! rule 2 (the retry failed again: its own failure is the one listed).
//! A call of another tool never resolves anything, and a failure stays
//! open when nothing later matches. Known limit: two different targets
//! that share every qualified name (`cargo test --manifest-path
//! a/Cargo.toml x` and `... y`) count as a retry of each other.

use serde_json::Value as Json;

use super::message::Message;

/// Longest failure line kept, in characters.
const LINE_CHARS: usize = 120;

/// The failure a tool result reports: `Some(line)` (the line that shows
/// it, or a description of the protocol signal), `None` for a success.
pub fn failure(result: &Message) -> Option<String> {
    let text = result.text();
    if let Some(signal) = protocol_signal(&result.extra) {
        return Some(signal_line(signal, &text));
    }
    if let Ok(Json::Object(map)) = serde_json::from_str::<Json>(text.trim()) {
        if let Some(signal) = protocol_signal(&map) {
            return Some(signal_line(signal, &text));
        }
    }
    text_failure(&text).map(clip)
}

/// A protocol field saying the call failed, described.
fn protocol_signal(fields: &serde_json::Map<String, Json>) -> Option<String> {
    for key in ["is_error", "isError"] {
        if fields.get(key) == Some(&Json::Bool(true)) {
            return Some(format!("{key}: true"));
        }
    }
    if let Some(error) = fields.get("error") {
        match error {
            Json::Null | Json::Bool(false) => {}
            Json::String(s) if s.trim().is_empty() => {}
            Json::String(s) => return Some(format!("error: {}", s.trim())),
            Json::Object(o) => {
                let message = o
                    .get("message")
                    .and_then(Json::as_str)
                    .unwrap_or("(error object)");
                return Some(format!("error: {message}"));
            }
            other => return Some(format!("error: {other}")),
        }
    }
    for key in [
        "exit_code",
        "exitCode",
        "returncode",
        "return_code",
        "status_code",
    ] {
        let Some(code) = fields.get(key).and_then(Json::as_i64) else {
            continue;
        };
        let failed = if key == "status_code" {
            code >= 400
        } else {
            code != 0
        };
        if failed {
            return Some(format!("{key} {code}"));
        }
    }
    None
}

/// A protocol signal, with the text's own failure line when it has one.
fn signal_line(signal: String, text: &str) -> String {
    match text_failure(text) {
        Some(line) => clip(line),
        None => clip(&signal),
    }
}

/// The line of `text` that reports its failure: the first line shaped
/// like a failure that names it (a diagnostic, a failed test, an
/// exception), else the first that only signals it (an exit code or an
/// HTTP status line, which say that it failed but not what).
pub fn text_failure(text: &str) -> Option<&str> {
    let mut signal = None;
    for line in text.lines() {
        let line = line.trim_end();
        if line.starts_with("Traceback (most recent call last)") {
            // The exception line at the end says more.
            let last = text
                .lines()
                .rev()
                .map(str::trim)
                .find(|l| exception_line(l));
            return Some(last.unwrap_or(line));
        }
        if failure_line(line) {
            if exit_code(line).is_some() || http_failure(line) {
                signal = signal.or(Some(line.trim()));
                continue;
            }
            return Some(line.trim());
        }
    }
    signal
}

/// One line that reports a failure by its shape.
fn failure_line(line: &str) -> bool {
    // Compiler and tool diagnostics at a line start (not indented source).
    if let Some(rest) = line.strip_prefix("error") {
        if rest.starts_with(": ") || rest.starts_with('[') && rest.contains("]: ") {
            return true;
        }
    }
    for prefix in [
        "Error: ",
        "ERROR: ",
        "ERROR ",
        "FAIL ",
        "--- FAIL: ",
        "FAILED ",
        "fatal: ",
        "npm ERR! ",
        "E   ",
    ] {
        if line.starts_with(prefix) {
            return true;
        }
    }
    if exception_line(line) {
        return true;
    }
    if line.contains(" panicked at ") && line.starts_with("thread '") {
        return true;
    }
    // Test runners: `test result: FAILED.`, `test x ... FAILED`, `FAILED (failures=2)`.
    if failed_word(line) {
        return true;
    }
    if let Some(code) = exit_code(line) {
        return code != 0;
    }
    http_failure(line)
}

/// `FAILED` as a word of its own (`test x ... FAILED`, `test result:
/// FAILED.`), not in an identifier (`Status::FAILED`, `const FAILED:`).
fn failed_word(line: &str) -> bool {
    line.match_indices("FAILED").any(|(i, _)| {
        let before = line[..i].chars().next_back();
        let after = line[i + 6..].chars().next();
        matches!(before, None | Some(' ' | '\t'))
            && matches!(after, None | Some(' ' | '.' | '(' | '!'))
    })
}

/// `ValueError: ...`, `java.io.IOException: ...` at a line start.
fn exception_line(line: &str) -> bool {
    let Some((head, _)) = line.split_once(": ") else {
        return false;
    };
    let name = head.rsplit('.').next().unwrap_or(head);
    !head.contains(char::is_whitespace)
        && name.starts_with(|c: char| c.is_ascii_uppercase())
        && (name.ends_with("Error") || name.ends_with("Exception"))
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The code of `exit code: 2`, `Exit code 1`, `exited with code 1`,
/// `Process exited with status 127` lines.
fn exit_code(line: &str) -> Option<i64> {
    let lower = line.trim().to_ascii_lowercase();
    for marker in [
        "exit code",
        "exited with code",
        "exited with status",
        "exit status",
    ] {
        if let Some(pos) = lower.find(marker) {
            let anywhere = marker.starts_with("exited");
            if !anywhere && pos > 0 && lower[..pos].trim_end() != "process" {
                continue;
            }
            let rest = lower[pos + marker.len()..].trim_start_matches([':', ' ', '=']);
            let digits: String = rest
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '-')
                .collect();
            return digits.parse().ok();
        }
    }
    None
}

/// `HTTP/1.1 404 Not Found`, `HTTP 500`, `Status: 503` lines.
fn http_failure(line: &str) -> bool {
    let line = line.trim();
    let rest = if let Some(rest) = line.strip_prefix("HTTP/") {
        rest.split_once(' ').map_or("", |(_, r)| r)
    } else if let Some(rest) = line
        .strip_prefix("HTTP ")
        .or_else(|| line.strip_prefix("Status: "))
        .or_else(|| line.strip_prefix("status: "))
    {
        rest
    } else {
        return false;
    };
    let code: String = rest.chars().take_while(char::is_ascii_digit).collect();
    code.len() == 3 && matches!(code.as_bytes()[0], b'4' | b'5')
}

/// What a call acts on: its path, command, URL or query argument when it
/// has one, else all its arguments on one line.
pub fn target(arguments: &str) -> String {
    const KEYS: [&str; 15] = [
        "path",
        "file",
        "file_path",
        "filename",
        "target",
        "command",
        "cmd",
        "args",
        "url",
        "query",
        "filter",
        "test",
        "pattern",
        "code",
        "program",
    ];
    match serde_json::from_str::<Json>(arguments) {
        Ok(Json::Object(map)) => {
            for key in KEYS {
                match map.get(key) {
                    Some(Json::String(s)) => return one_line(s),
                    Some(Json::Array(items)) => {
                        let words: Vec<String> = items
                            .iter()
                            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                            .collect();
                        return one_line(&words.join(" "));
                    }
                    _ => {}
                }
            }
            if map.is_empty() {
                String::new()
            } else {
                one_line(&Json::Object(map).to_string())
            }
        }
        Ok(Json::Null) => String::new(),
        _ => one_line(arguments),
    }
}

/// True when a success of a call on `later` resolves a failure of the
/// same tool on `failed` (the module's rule): the same or a broader
/// target, or a corrected retry ([`retries`]).
pub fn resolves(later: &str, failed: &str) -> bool {
    covers(later, failed) || retries(later, failed)
}

/// The same target or a broader one: `later`'s words start `failed`'s
/// words (`cargo test` covers `cargo test parser::nested`; an empty
/// target covers all).
pub fn covers(later: &str, failed: &str) -> bool {
    let later: Vec<&str> = later.split_whitespace().collect();
    let failed: Vec<&str> = failed.split_whitespace().collect();
    later.len() <= failed.len() && failed[..later.len()] == later[..]
}

/// A corrected retry: `failed` names at least one object and `later`
/// names every one of them.
pub fn retries(later: &str, failed: &str) -> bool {
    let wanted = objects(failed);
    if wanted.is_empty() {
        return false;
    }
    let have = objects(later);
    wanted.iter().all(|o| have.contains(o))
}

/// The objects a target names: its qualified names, words (runs of
/// letters, digits and `_ . / : -`) with a `.`, `/` or `::` inside whose
/// first part has at least two letters (`sales.orders`, `src/a.rs`,
/// `deployment/payments`, `parser::tests`; not `o.id`, `3.14`,
/// `v2.1`, nor a word without a separator).
pub fn objects(target: &str) -> Vec<&str> {
    let word_char = |c: char| c.is_ascii_alphanumeric() || "_./:-".contains(c);
    let mut out: Vec<&str> = Vec::new();
    for word in target.split(|c: char| !word_char(c)) {
        let word = word.trim_matches(|c: char| ".:/-".contains(c));
        let Some(sep) = word.find(['.', '/', ':']) else {
            continue;
        };
        let rest = &word[sep..];
        if rest.starts_with(':') && !rest.starts_with("::") {
            continue;
        }
        let letters = word[..sep]
            .chars()
            .filter(char::is_ascii_alphabetic)
            .count();
        if letters >= 2 && !out.contains(&word) {
            out.push(word);
        }
    }
    out
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn clip(text: &str) -> String {
    let text = one_line(text);
    if text.chars().count() <= LINE_CHARS {
        text
    } else {
        let mut s: String = text.chars().take(LINE_CHARS - 3).collect();
        s.push_str("...");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(text: &str) -> Message {
        Message::tool_result("c", text)
    }

    #[test]
    fn words_in_content_are_not_failures() {
        for text in [
            "src/error.rs\nsrc/lib.rs\nsrc/history/error_kind.rs",
            "src/eval/mod.rs:120:    let kind = map_error_kind(e);\nsrc/eval/error.rs:3: pub fn map_error_kind(e: &E)",
            "#[derive(Debug, thiserror::Error)]\npub enum E {\n    #[error(\"not found: {0}\")]\n    NotFound(String),\n}",
            "struct S {\n    error: String,\n}",
            "The request failed last week; the fix is in.",
            "No exception was raised; permission denied paths are skipped.",
            "test result: ok. 12 passed; 0 failed; 0 ignored",
            "HTTP/1.1 200 OK",
            "exit code: 0",
            "{\"ok\": true, \"error\": null}",
        ] {
            assert_eq!(failure(&result(text)), None, "{text}");
        }
    }

    #[test]
    fn failure_shapes_are_failures() {
        for (text, line) in [
            (
                "   Compiling x v0.1.0\nerror[E0425]: cannot find value `y` in this scope\n --> src/lib.rs:3:5",
                "error[E0425]: cannot find value `y` in this scope",
            ),
            ("warning: unused\nerror: could not compile `x`", "error: could not compile `x`"),
            ("running 3 tests\ntest a ... ok\ntest b ... FAILED\n", "test b ... FAILED"),
            (
                "Traceback (most recent call last):\n  File \"a.py\", line 1\nKeyError: 'total'",
                "KeyError: 'total'",
            ),
            ("Error: ENOENT: no such file", "Error: ENOENT: no such file"),
            ("HTTP/1.1 503 Service Unavailable", "HTTP/1.1 503 Service Unavailable"),
            ("FAILED tests/test_io.py::test_read - assert 1 == 2", "FAILED tests/test_io.py::test_read - assert 1 == 2"),
            ("thread 'main' panicked at src/main.rs:3:5:\nboom", "thread 'main' panicked at src/main.rs:3:5:"),
            ("ran it\nProcess exited with status 2", "Process exited with status 2"),
            // An exit code says that it failed; a later line says what.
            (
                "exit code: 101\nrunning 2 tests\ntest a ... ok\ntest render::pads ... FAILED\n",
                "test render::pads ... FAILED",
            ),
            ("HTTP/1.1 409 Conflict\n\nError: parcel already shipped", "Error: parcel already shipped"),
        ] {
            assert_eq!(failure(&result(text)).as_deref(), Some(line), "{text}");
        }
    }

    #[test]
    fn protocol_fields_are_failures() {
        let mut m = result("could not open the file");
        m.extra.insert("is_error".into(), Json::Bool(true));
        assert_eq!(failure(&m).as_deref(), Some("is_error: true"));
        assert_eq!(
            failure(&result(r#"{"isError": true, "content": []}"#)).as_deref(),
            Some("isError: true")
        );
        assert_eq!(
            failure(&result(r#"{"exit_code": 101, "stdout": "x"}"#)).as_deref(),
            Some("exit_code 101")
        );
        assert_eq!(
            failure(&result(r#"{"error": {"message": "rate limited"}}"#)).as_deref(),
            Some("error: rate limited")
        );
        assert_eq!(failure(&result(r#"{"exit_code": 0}"#)), None);
    }

    #[test]
    fn targets_and_resolution() {
        assert_eq!(target(r#"{"path":"src/a.rs","text":"x"}"#), "src/a.rs");
        assert_eq!(
            target(r#"{"command":"cargo  test parser"}"#),
            "cargo test parser"
        );
        assert_eq!(target("{}"), "");
        assert!(resolves("cargo test", "cargo test parser::nested"));
        assert!(resolves("src/a.rs", "src/a.rs"));
        assert!(resolves("", "anything"));
        assert!(!resolves("src/b.rs", "src/a.rs"));
        assert!(!resolves("cargo test parser::nested", "cargo test"));
    }

    #[test]
    fn objects_are_qualified_names() {
        assert_eq!(
            objects("select sum(amount_usd) from sales.orders o where o.id = 3.14"),
            ["sales.orders"]
        );
        assert_eq!(
            objects("-n shop rollout status deployment/payments --timeout=120s"),
            ["deployment/payments"]
        );
        assert_eq!(objects("src/a.rs"), ["src/a.rs"]);
        assert_eq!(
            objects("cargo test parser::nested v2.14.0"),
            ["parser::nested"]
        );
        assert!(objects("db-replica-2").is_empty());
        assert!(objects("payments").is_empty());
        assert!(objects("").is_empty());
    }

    #[test]
    fn a_corrected_retry_on_the_same_object_resolves() {
        // The data-analysis pattern: a failed query, then a corrected
        // query of the same table that succeeds.
        let failed = "select sum(amount_usd) from sales.orders where region = 'EMEA'";
        let corrected =
            "select sum(net_amount) from sales.orders where region = 'EMEA' and not is_test";
        assert!(resolves(corrected, failed));
        // A success on another table is no fix of it.
        assert!(!resolves("select * from sales.customers", failed));
        let denied = "select * from finance.fx_rates limit 5";
        assert!(!resolves(corrected, denied));
        // A target naming no object is only fixed by itself or broader.
        assert!(!resolves("payments", "db-replica-2"));
        assert!(resolves("db-replica-2", "db-replica-2"));
        // A narrower success does not fix a broader failure.
        assert!(!resolves("cargo test a::b", "cargo test"));
    }
}
