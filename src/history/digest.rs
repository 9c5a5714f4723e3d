//! The deterministic summarizer: a digest built from the pruned messages
//! themselves (and the host's state, when given), needing no model.
//! Same input, same bytes; never over `max_tokens`. No I/O.
//!
//! A digest is a few `## Section` blocks of `- item` lines. The facts a
//! later turn cannot do without come first and are dropped last: errors
//! not yet resolved, then every file path and identifier found in the
//! pruned tool calls. A later round merges the previous digest's items
//! into its own, so facts survive any number of rounds until the cap
//! forces them out (the oldest requests and calls go first).

use std::collections::HashSet;

use serde_json::Value as Json;

use super::message::{Message, Role};
use super::policy::Strategy;
use super::summary::{Summarizer, SummaryError, SummaryRequest};

/// The deterministic, model-free summarizer (the default).
#[derive(Debug, Clone, Copy, Default)]
pub struct Digest;

/// Longest item kept, in characters.
const ITEM_CHARS: usize = 160;

const ERRORS: &str = "Unresolved errors";
const FILES: &str = "Files and identifiers";
const STATE: &str = "State";
const REQUESTS: &str = "User messages";
const CALLS: &str = "Tool calls";
const DECISIONS: &str = "Assistant conclusions";
const NOTES: &str = "Notes";

/// Words that make a tool result an error.
const ERROR_MARKERS: [&str; 7] = [
    "error",
    "failed",
    "exception",
    "traceback",
    "not found",
    "denied",
    "panic",
];

impl Summarizer for Digest {
    fn name(&self) -> String {
        "digest".into()
    }

    fn summarize(&self, request: &SummaryRequest<'_>) -> Result<String, SummaryError> {
        Ok(digest(request))
    }
}

struct Section {
    title: &'static str,
    items: Vec<String>,
    /// When not all fit, keep the last ones (else the first ones).
    keep_newest: bool,
    /// The most of `max_tokens` this section may use (the must-keep
    /// sections may use all that is left).
    share: f64,
}

fn digest(request: &SummaryRequest<'_>) -> String {
    let previous = request.previous.map(parse_previous).unwrap_or_default();
    let earlier = previous.count;
    let facts = Facts::gather(&super::redact::without_secret_values_in(request.messages));

    // Earlier items first; a repeated item counts where it last appeared.
    let merged = |title: &str, new: Vec<String>| -> Vec<String> {
        let mut items: Vec<String> = previous.section(title).to_vec();
        items.extend(new);
        items.reverse();
        let mut items = dedup(items);
        items.reverse();
        items
    };
    let mut errors: Vec<String> = previous
        .section(ERRORS)
        .iter()
        .filter(|e| {
            !facts
                .succeeded
                .iter()
                .any(|call| e.starts_with(&format!("{call} -> ")))
        })
        .cloned()
        .collect();
    errors.extend(facts.errors);
    let errors = dedup(errors);
    let state = match request.state {
        Some(state) => state
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| clip(l.trim_start_matches("- ")))
            .collect(),
        None => previous.section(STATE).to_vec(),
    };
    let brief = request.strategy == Strategy::Brief;
    let mut sections = vec![
        Section {
            title: ERRORS,
            items: errors,
            keep_newest: false,
            share: 1.0,
        },
        Section {
            title: FILES,
            items: dedup([previous.section(FILES).to_vec(), facts.identifiers].concat()),
            keep_newest: false,
            share: 1.0,
        },
        Section {
            title: STATE,
            items: state,
            keep_newest: false,
            share: 0.5,
        },
        Section {
            title: REQUESTS,
            items: merged(REQUESTS, facts.requests),
            keep_newest: true,
            share: 0.3,
        },
    ];
    if !brief {
        sections.push(Section {
            title: CALLS,
            items: merged(CALLS, facts.calls),
            keep_newest: true,
            share: 0.25,
        });
        sections.push(Section {
            title: DECISIONS,
            items: merged(DECISIONS, facts.decisions),
            keep_newest: true,
            share: 0.25,
        });
    }
    sections.push(Section {
        title: NOTES,
        items: merged(NOTES, request.note.map(clip).into_iter().collect()),
        keep_newest: true,
        share: 1.0,
    });
    let total = earlier + request.messages.len();
    let header = format!("Condensed from {total} earlier messages.");
    fit(header, sections, request)
}

/// Lay the sections out within `max_tokens`, dropping what does not fit
/// (with a marker saying how much).
fn fit(header: String, sections: Vec<Section>, request: &SummaryRequest<'_>) -> String {
    let count = |s: &str| request.model.count(s);
    let max = request.max_tokens;
    let mut out = header;
    let mut used = count(&out);
    for section in sections {
        if section.items.is_empty() {
            continue;
        }
        let title = format!("\n## {}", section.title);
        let title_cost = count(&title) + 1;
        if used + title_cost > max {
            break;
        }
        let mut taken = Vec::new();
        let cap = (max as f64 * section.share) as usize;
        let mut budget = (max - used - title_cost).min(cap.saturating_sub(title_cost));
        let order: Box<dyn Iterator<Item = &String>> = if section.keep_newest {
            Box::new(section.items.iter().rev())
        } else {
            Box::new(section.items.iter())
        };
        for item in order {
            let line = format!("\n- {item}");
            let cost = count(&line) + 1;
            if cost > budget {
                break;
            }
            budget -= cost;
            taken.push(line);
        }
        if taken.is_empty() {
            continue;
        }
        if section.keep_newest {
            taken.reverse();
        }
        let mut omitted = section.items.len() - taken.len();
        if omitted > 0 {
            let marker_cost = count("\n- (+9999 more)") + 1;
            if marker_cost > budget {
                if section.keep_newest {
                    taken.remove(0);
                } else {
                    taken.pop();
                }
                omitted += 1;
            }
            if section.keep_newest {
                taken.insert(0, format!("\n- ({omitted} earlier omitted)"));
            } else {
                taken.push(format!("\n- (+{omitted} more)"));
            }
        }
        out.push_str(&title);
        for line in taken {
            out.push_str(&line);
        }
        used = count(&out);
    }
    // Token counts of parts can differ from the count of the whole by a
    // token or two at the joins: drop lines until the whole fits.
    while count(&out) > max {
        match out.rfind('\n') {
            Some(cut) => out.truncate(cut),
            None => {
                let keep = out
                    .char_indices()
                    .nth(max.max(1))
                    .map_or(out.len(), |(i, _)| i);
                out.truncate(keep);
                while count(&out) > max && !out.is_empty() {
                    out.pop();
                }
                break;
            }
        }
    }
    out
}

/// What a run of messages says, gathered in order.
#[derive(Default)]
struct Facts {
    requests: Vec<String>,
    calls: Vec<String>,
    identifiers: Vec<String>,
    errors: Vec<String>,
    decisions: Vec<String>,
    /// Calls (`name(args)`) that succeeded in this part: earlier errors
    /// of the same call are resolved.
    succeeded: Vec<String>,
}

impl Facts {
    fn gather(messages: &[Message]) -> Facts {
        let mut facts = Facts::default();
        // Calls awaiting their result: (id, name, "name(args)").
        let mut open: Vec<(String, String, String)> = Vec::new();
        for m in messages {
            match m.role {
                Role::User => {
                    if let Some(line) = first_line(m.text()) {
                        facts.requests.push(clip(line));
                    }
                }
                Role::Assistant => {
                    for call in m.tool_call_summaries() {
                        let shown = format!("{}({})", call.name, one_line(&call.arguments));
                        facts.calls.push(clip(&shown));
                        collect_identifiers(&call.arguments, &mut facts.identifiers);
                        open.push((call.id, call.name, clip(&shown)));
                    }
                    let lines: Vec<&str> = m
                        .text()
                        .lines()
                        .map(str::trim)
                        .filter(|l| !l.is_empty() && !l.starts_with("```"))
                        .collect();
                    let tail = &lines[lines.len().saturating_sub(2)..];
                    facts.decisions.extend(tail.iter().map(|l| clip(l)));
                }
                Role::Tool => {
                    let Some(id) = &m.tool_call_id else { continue };
                    let Some(pos) = open.iter().position(|(cid, _, _)| cid == id) else {
                        continue;
                    };
                    let (_, _, shown) = open.remove(pos);
                    let text = m.text();
                    if is_error(text) {
                        let what = first_line(text).unwrap_or("error");
                        facts.errors.push(clip(&format!("{shown} -> {what}")));
                    } else {
                        // The same call succeeding later resolves its error.
                        let failed = format!("{shown} -> ");
                        facts.errors.retain(|e| !e.starts_with(&failed));
                        facts.succeeded.push(shown);
                    }
                }
                Role::System | Role::Developer => {}
            }
        }
        facts.identifiers = dedup(std::mem::take(&mut facts.identifiers));
        facts
    }
}

fn is_error(text: &str) -> bool {
    let head: String = text.chars().take(200).collect::<String>().to_lowercase();
    ERROR_MARKERS.iter().any(|m| head.contains(m))
}

/// Every string in a call's arguments that looks like a path or an
/// identifier: whole strings without spaces, and path-like words of
/// longer strings.
fn collect_identifiers(arguments: &str, out: &mut Vec<String>) {
    fn walk(value: &Json, out: &mut Vec<String>) {
        match value {
            Json::String(s) => {
                let s = s.trim();
                if s.is_empty() {
                } else if !s.contains(char::is_whitespace) {
                    out.push(clip(s));
                } else {
                    for word in s.split_whitespace() {
                        let word = word.trim_matches(|c: char| "\"'`,;()[]{}".contains(c));
                        if looks_like_path(word) {
                            out.push(clip(word));
                        }
                    }
                }
            }
            Json::Array(items) => items.iter().for_each(|v| walk(v, out)),
            Json::Object(map) => map
                .iter()
                .filter(|(k, _)| !super::redact::is_secret_key(k))
                .for_each(|(_, v)| walk(v, out)),
            _ => {}
        }
    }
    match serde_json::from_str::<Json>(arguments) {
        Ok(value) => walk(&value, out),
        Err(_) => walk(&Json::String(arguments.to_string()), out),
    }
}

fn looks_like_path(word: &str) -> bool {
    word.len() > 2
        && (word.contains('/')
            || word.rsplit_once('.').is_some_and(|(stem, ext)| {
                !stem.is_empty()
                    && (1..=8).contains(&ext.len())
                    && ext.chars().all(|c| c.is_ascii_alphanumeric())
            }))
}

fn first_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).find(|l| !l.is_empty())
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn clip(text: &str) -> String {
    let text = one_line(text);
    if text.chars().count() <= ITEM_CHARS {
        text
    } else {
        let mut s: String = text.chars().take(ITEM_CHARS - 3).collect();
        s.push_str("...");
        s
    }
}

fn dedup(items: Vec<String>) -> Vec<String> {
    let mut seen = HashSet::new();
    items
        .into_iter()
        .filter(|i| seen.insert(i.clone()))
        .collect()
}

/// A previous digest, read back: its message count and its sections.
#[derive(Default)]
struct Previous {
    count: usize,
    sections: Vec<(String, Vec<String>)>,
}

impl Previous {
    fn section(&self, title: &str) -> &[String] {
        self.sections
            .iter()
            .find(|(t, _)| t == title)
            .map_or(&[], |(_, items)| items.as_slice())
    }
}

/// Read a previous summary. A digest comes back as its sections; any
/// other text (a model's summary) becomes one note per line, so its
/// facts are kept.
fn parse_previous(body: &str) -> Previous {
    let mut previous = Previous::default();
    let mut lines = body.lines();
    let digest_header = body
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("Condensed from "))
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok());
    match digest_header {
        Some(n) => {
            previous.count = n;
            lines.next();
        }
        None => {
            let notes = body
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(clip)
                .collect();
            previous.sections.push((NOTES.to_string(), notes));
            return previous;
        }
    }
    for line in lines {
        if let Some(title) = line.strip_prefix("## ") {
            previous.sections.push((title.to_string(), Vec::new()));
        } else if let Some(item) = line.strip_prefix("- ") {
            let omitted = item.starts_with('(')
                && (item.ends_with("earlier omitted)") || item.ends_with(" more)"));
            if let (Some(last), false) = (previous.sections.last_mut(), omitted) {
                last.1.push(item.to_string());
            }
        }
    }
    previous
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::TokenModel;

    fn request<'a>(
        messages: &'a [Message],
        previous: Option<&'a str>,
        max: usize,
    ) -> SummaryRequest<'a> {
        SummaryRequest {
            strategy: Strategy::TaskState,
            max_tokens: max,
            messages,
            previous,
            state: None,
            note: None,
            model: TokenModel::for_model("gpt-4o"),
        }
    }

    fn session() -> Vec<Message> {
        vec![
            Message::user("Fix the failing test in the parser"),
            Message::tool_call([("c1", "read_file", r#"{"path":"src/parser.rs"}"#)]),
            Message::tool_result("c1", "fn parse() {}"),
            Message::tool_call([("c2", "run_tests", r#"{"filter":"parser::tests::nested"}"#)]),
            Message::tool_result("c2", "error: assertion failed at src/parser.rs:88"),
            Message::tool_call([(
                "c3",
                "grep",
                r#"{"pattern":"fn nested","dir":"src/reader"}"#,
            )]),
            Message::tool_result("c3", "Error: permission denied"),
            Message::tool_call([(
                "c4",
                "grep",
                r#"{"pattern":"fn nested","dir":"src/reader"}"#,
            )]),
            Message::tool_result("c4", "src/parser.rs:80"),
            Message::assistant("The nested case is wrong.\nI will change parse_nested next."),
        ]
    }

    #[test]
    fn digest_keeps_paths_identifiers_and_unresolved_errors() {
        let msgs = session();
        let text = Digest.summarize(&request(&msgs, None, 1000)).unwrap();
        for fact in [
            "src/parser.rs",
            "parser::tests::nested",
            "src/reader",
            "fn nested",
        ] {
            assert!(text.contains(fact), "{fact} missing from\n{text}");
        }
        assert!(text.contains("run_tests("), "{text}");
        assert!(text.contains("assertion failed"), "{text}");
        let errors = text
            .split("## Unresolved errors")
            .nth(1)
            .unwrap()
            .split("##")
            .next()
            .unwrap();
        assert!(
            !errors.contains("permission denied"),
            "the same grep succeeded later:\n{text}"
        );
        assert!(text.contains("I will change parse_nested next."));
        assert!(text.contains("Fix the failing test"));
    }

    #[test]
    fn digest_is_stable_and_bounded() {
        let msgs = session();
        let a = Digest.summarize(&request(&msgs, None, 1000)).unwrap();
        let b = Digest.summarize(&request(&msgs, None, 1000)).unwrap();
        assert_eq!(a, b);
        for max in [16, 30, 60, 100] {
            let t = Digest.summarize(&request(&msgs, None, max)).unwrap();
            let n = TokenModel::for_model("gpt-4o").count(&t);
            assert!(n <= max, "{n} > {max}:\n{t}");
        }
        let t = Digest.summarize(&request(&msgs, None, 60)).unwrap();
        assert!(t.contains("assertion failed"), "errors go first:\n{t}");
    }

    #[test]
    fn rolling_digest_keeps_earlier_facts() {
        let first = session();
        let v1 = Digest.summarize(&request(&first, None, 1000)).unwrap();
        let second = vec![
            Message::user("Now update the changelog"),
            Message::tool_call([(
                "d1",
                "write_file",
                r#"{"path":"CHANGELOG.md","text":"fixed"}"#,
            )]),
            Message::tool_result("d1", "ok"),
        ];
        let v2 = Digest
            .summarize(&request(&second, Some(&v1), 1000))
            .unwrap();
        assert!(
            v2.starts_with("Condensed from 13 earlier messages."),
            "{v2}"
        );
        for fact in [
            "src/parser.rs",
            "CHANGELOG.md",
            "assertion failed",
            "Fix the failing test",
            "update the changelog",
        ] {
            assert!(v2.contains(fact), "{fact} missing from\n{v2}");
        }
        let run_tests_fixed = vec![
            Message::tool_call([("e1", "run_tests", r#"{"filter":"parser::tests::nested"}"#)]),
            Message::tool_result("e1", "all passed"),
        ];
        let v3 = Digest
            .summarize(&request(&run_tests_fixed, Some(&v2), 1000))
            .unwrap();
        assert!(!v3.contains("assertion failed at"), "resolved later:\n{v3}");
    }
}
