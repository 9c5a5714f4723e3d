//! The deterministic summarizer: a digest built from the pruned messages
//! themselves (and the host's state, when given), needing no model.
//! Same input, same bytes; never over `max_tokens`, header included.
//! No I/O.
//!
//! A digest is a header line and sections that share one token budget
//! (see `layout`): the goal (the first user request, always), the
//! constraints and decisions stated in the conversation, the requests in
//! order, every file and identifier the pruned tool calls touched
//! (grouped by directory), the tool activity, the failures still open
//! and a `Fixed:` line for those a later call resolved. Each strategy
//! orders and weighs the same facts its own way. A later round reads
//! the previous digest back and merges its facts into its own, so they
//! survive any number of rounds.

use std::collections::{BTreeMap, HashSet};

use serde_json::Value as Json;

use super::failure::{self, failure, resolves, target};
use super::layout::{lay_out, Block, Cut, Item};
use super::message::{Message, Role};
use super::policy::Strategy;
use super::summary::{Summarizer, SummaryError, SummaryRequest};

/// The deterministic, model-free summarizer (the default).
#[derive(Debug, Clone, Copy, Default)]
pub struct Digest;

/// Longest item kept, in characters.
const ITEM_CHARS: usize = 160;
/// Longest request kept, in characters.
const REQUEST_CHARS: usize = 100;
/// The most assistant conclusions kept (the newest).
const PROGRESS_ITEMS: usize = 4;
/// Longest goal kept, in characters.
const GOAL_CHARS: usize = 600;
/// The most tokens a `brief` digest uses.
const BRIEF_TOKENS: usize = 256;

const GOAL: &str = "Goal";
const CONSTRAINTS: &str = "Constraints and decisions";
const LEDGER: &str = "Decision log";
const REQUESTS: &str = "Requests";
const FILES: &str = "Files and identifiers";
const CHANGED: &str = "Files changed";
const TOOLS: &str = "Tool activity";
const UNRESOLVED: &str = "Unresolved failures";
const FIXED: &str = "Fixed";
const PROGRESS: &str = "Progress";
const NEXT: &str = "Next step";
const STATE: &str = "State";
const NOTES: &str = "Notes";

/// Tool names that change the files they are given.
const WRITERS: [&str; 10] = [
    "write", "edit", "patch", "create", "replace", "apply", "delete", "remove", "move", "rename",
];

/// Phrases that make a sentence a constraint or a decision.
const DECISION_MARKERS: [&str; 14] = [
    "don't ",
    "do not ",
    "never ",
    "must not",
    "mustn't",
    "for now",
    " instead",
    "avoid ",
    "always ",
    "decided",
    "we'll use",
    "let's use",
    "make sure",
    "only use",
];

impl Summarizer for Digest {
    fn name(&self) -> String {
        "digest".into()
    }

    fn summarize(&self, request: &SummaryRequest<'_>) -> Result<String, SummaryError> {
        Ok(digest(request))
    }
}

/// A failure still open: the tool, its target, the failure line.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Open {
    tool: String,
    target: String,
    line: String,
}

impl Open {
    fn key(&self) -> String {
        format!("{}({})", self.tool, self.target)
    }

    fn item(&self) -> String {
        clip(&format!("{} -> {}", self.key(), self.line))
    }

    /// Read back from an item of a previous digest.
    fn parse(item: &str) -> Option<Open> {
        let (key, line) = item.split_once(") -> ")?;
        let (tool, target) = key.split_once('(')?;
        Some(Open {
            tool: tool.to_string(),
            target: target.to_string(),
            line: line.to_string(),
        })
    }
}

/// Per tool: calls and the last arguments shown.
#[derive(Debug, Clone, Default)]
struct Activity {
    calls: usize,
    last: String,
}

/// Everything the digest knows, merged over rounds.
#[derive(Default)]
struct Facts {
    /// Messages and user turns condensed so far.
    messages: usize,
    turns: usize,
    goal: Option<String>,
    /// `(turn N) sentence`, in order.
    decisions: Vec<String>,
    requests: Vec<String>,
    /// Paths, in first-seen order.
    paths: Vec<String>,
    identifiers: Vec<String>,
    /// Path -> the tools that changed it, in order (code_delta).
    changed: BTreeMap<String, Vec<String>>,
    tools: BTreeMap<String, Activity>,
    /// Tool order of first use.
    tool_order: Vec<String>,
    open: Vec<Open>,
    fixed: Vec<String>,
    /// The last lines of assistant messages.
    progress: Vec<String>,
    state: Vec<String>,
    notes: Vec<String>,
}

fn digest(request: &SummaryRequest<'_>) -> String {
    let mut facts = request.previous.map(parse_previous).unwrap_or_default();
    facts.gather(&super::redact::without_secret_values_in(request.messages));
    facts.resolve_later(request.later);
    if let Some(state) = request.state {
        facts.state = state
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| clip(l.trim_start_matches("- ")))
            .collect();
    }
    if let Some(note) = request.note {
        facts.notes.push(clip(note));
    }
    facts.notes = dedup(std::mem::take(&mut facts.notes));
    let (goal, blocks) = shape(&facts, request.strategy);
    let header = format!(
        "Condensed from {} earlier messages ({} user turns).",
        facts.messages, facts.turns
    );
    let max = match request.strategy {
        Strategy::Brief => request.max_tokens.min(BRIEF_TOKENS),
        _ => request.max_tokens,
    };
    lay_out(&header, goal, blocks, max, request.model)
}

/// The sections of `strategy`, most important first, with their weights.
fn shape(facts: &Facts, strategy: Strategy) -> (Option<Block>, Vec<Block>) {
    let goal = facts
        .goal
        .as_ref()
        .map(|g| Block::new(GOAL, vec![Item::one(g.clone())], Cut::Tail, 0));
    let items = |v: &[String]| v.iter().map(Item::one).collect::<Vec<_>>();
    let plain = |d: &str| d.split_once(") ").map_or(d, |(_, s)| s).to_string();
    let constraints = Block::new(
        CONSTRAINTS,
        facts
            .decisions
            .iter()
            .map(|d| Item::one(plain(d)))
            .collect(),
        Cut::Newest,
        3,
    );
    let requests = Block::new(REQUESTS, items(&facts.requests), Cut::Middle, 2);
    let files = Block::new(FILES, file_items(facts), Cut::Tail, 3);
    let tools = Block::new(TOOLS, tool_items(facts), Cut::Tail, 1);
    let open = Block::new(
        UNRESOLVED,
        facts.open.iter().map(|o| Item::one(o.item())).collect(),
        Cut::Newest,
        3,
    );
    let mut fixed = Block::new(FIXED, items(&facts.fixed), Cut::Newest, 1);
    fixed.label = true;
    let state = Block::new(STATE, items(&facts.state), Cut::Tail, 2);
    let notes = Block::new(NOTES, items(&facts.notes), Cut::Newest, 1);
    let progress = Block::new(PROGRESS, items(&facts.progress), Cut::Newest, 2);
    let next = Block::new(NEXT, next_step(facts), Cut::Tail, 1);
    let blocks = match strategy {
        Strategy::TaskState => vec![
            constraints,
            open,
            fixed,
            files,
            progress,
            next,
            requests,
            state,
            tools,
            notes,
        ],
        Strategy::DecisionLog => {
            let mut ledger: Vec<Item> = facts.decisions.iter().map(Item::one).collect();
            if ledger.is_empty() {
                ledger = facts.progress.iter().map(Item::one).collect();
            }
            vec![
                Block::new(LEDGER, ledger, Cut::Newest, 5),
                open,
                fixed,
                requests,
                files,
                state,
                tools,
                notes,
            ]
        }
        Strategy::CodeDelta => {
            let changed: Vec<Item> = facts
                .changed
                .iter()
                .map(|(path, how)| Item::one(clip(&format!("{path}: {}", counted(how)))))
                .collect();
            vec![
                Block::new(CHANGED, changed, Cut::Tail, 5),
                open,
                fixed,
                files,
                constraints,
                tools,
                requests,
                state,
                notes,
            ]
        }
        Strategy::Brief => vec![constraints, open, fixed, files, notes],
    };
    (goal, blocks)
}

/// `edit_file x2, write_file`.
fn counted(names: &[String]) -> String {
    let mut out: Vec<(String, usize)> = Vec::new();
    for n in names {
        match out.iter_mut().find(|(m, _)| m == n) {
            Some((_, c)) => *c += 1,
            None => out.push((n.clone(), 1)),
        }
    }
    out.iter()
        .map(|(n, c)| {
            if *c > 1 {
                format!("{n} x{c}")
            } else {
                n.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Paths grouped by directory (`src/history/: digest.rs, compact.rs`),
/// then identifiers, a few per line.
fn file_items(facts: &Facts) -> Vec<Item> {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for path in &facts.paths {
        let (dir, base) = match path.rsplit_once('/') {
            Some((d, b)) if !b.is_empty() => (format!("{d}/"), b.to_string()),
            _ => (String::new(), path.clone()),
        };
        match groups.iter_mut().find(|(d, _)| *d == dir) {
            Some((_, files)) => files.push(base),
            None => groups.push((dir, vec![base])),
        }
    }
    let mut out = Vec::new();
    for (dir, files) in groups {
        for chunk in files.chunks(12) {
            let text = if dir.is_empty() {
                chunk.join(", ")
            } else {
                format!("{dir}: {}", chunk.join(", "))
            };
            out.push(Item {
                text,
                count: chunk.len(),
            });
        }
    }
    for chunk in facts.identifiers.chunks(10) {
        out.push(Item {
            text: format!("identifiers: {}", chunk.join(", ")),
            count: chunk.len(),
        });
    }
    out
}

/// `read_file x3, last: {"path":"src/a.rs"}` per tool, in order of first use.
fn tool_items(facts: &Facts) -> Vec<Item> {
    facts
        .tool_order
        .iter()
        .filter_map(|name| {
            let a = facts.tools.get(name)?;
            Some(Item::one(clip(&format!(
                "{name} x{}, last: {}",
                a.calls, a.last
            ))))
        })
        .collect()
}

/// The last thing an assistant said it would do, else the last request.
fn next_step(facts: &Facts) -> Vec<Item> {
    let planned = facts.progress.iter().rev().find(|l| {
        let l = l.to_lowercase();
        [
            "next",
            "i will",
            "i'll",
            "then ",
            "todo",
            "remaining",
            "going to",
        ]
        .iter()
        .any(|m| l.contains(m))
    });
    planned
        .or(facts.requests.last())
        .map(|l| vec![Item::one(l.clone())])
        .unwrap_or_default()
}

impl Facts {
    /// Take in one run of pruned messages, in order.
    fn gather(&mut self, messages: &[std::borrow::Cow<'_, Message>]) {
        self.messages += messages.len();
        // Calls awaiting their result: (id, name, target).
        let mut pending: Vec<(String, String, String)> = Vec::new();
        let mut seen_files: HashSet<String> = self.paths.iter().cloned().collect();
        let mut seen_ids: HashSet<String> = self.identifiers.iter().cloned().collect();
        for m in messages {
            let m: &Message = m;
            match m.role {
                Role::User => {
                    // Anthropic tool results come in user messages.
                    for (id, text, is_error) in m.content.tool_result_entries() {
                        let line = failure::text_failure(&text);
                        let failed = match (line, is_error) {
                            (Some(line), _) => Some(clip(line)),
                            (None, true) => Some("is_error: true".to_string()),
                            (None, false) => None,
                        };
                        self.result(&mut pending, id, failed, true);
                    }
                    let text = m.text();
                    let text = text.trim();
                    if text.is_empty() {
                        continue;
                    }
                    self.turns += 1;
                    let is_goal = self.goal.is_none();
                    if is_goal {
                        self.goal = Some(clip_to(text, GOAL_CHARS));
                    }
                    // The goal's first line is not repeated as a request.
                    if let (Some(line), false) = (first_line(text), is_goal) {
                        self.requests.push(clip_to(line, REQUEST_CHARS));
                    }
                    self.decisions_in(text, "user");
                }
                Role::Assistant => {
                    // Results answer the calls of the message right
                    // before them (`units`): a call left unanswered by an
                    // earlier message is not answered later, even by a
                    // result with the same id (ids may repeat across
                    // messages).
                    pending.clear();
                    for call in m.tool_call_summaries() {
                        let shown = masked_arguments(&call.arguments);
                        let entry = self.tools.entry(call.name.clone()).or_default();
                        if entry.calls == 0 {
                            self.tool_order.push(call.name.clone());
                        }
                        entry.calls += 1;
                        entry.last = clip(&shown);
                        let mut found = Vec::new();
                        collect_identifiers(&call.arguments, &mut found);
                        let writes = writes(&call.name);
                        for word in found {
                            if looks_like_path(&word) {
                                if writes {
                                    self.changed
                                        .entry(word.clone())
                                        .or_default()
                                        .push(call.name.clone());
                                }
                                if seen_files.insert(word.clone()) {
                                    self.paths.push(word);
                                }
                            } else if seen_ids.insert(word.clone()) {
                                self.identifiers.push(word);
                            }
                        }
                        pending.push((call.id, call.name, target(&call.arguments)));
                    }
                    let text = m.text();
                    let lines: Vec<&str> = text
                        .lines()
                        .map(str::trim)
                        .filter(|l| !l.is_empty() && !l.starts_with("```"))
                        .collect();
                    let tail = &lines[lines.len().saturating_sub(2)..];
                    self.progress.extend(tail.iter().map(|l| clip(l)));
                    self.decisions_in(&text, "assistant");
                }
                Role::Tool => {
                    let Some(id) = &m.tool_call_id else { continue };
                    self.result(&mut pending, id, failure(m), true);
                }
                Role::System | Role::Developer => {}
            }
        }
        self.progress = dedup(std::mem::take(&mut self.progress));
        let extra = self.progress.len().saturating_sub(PROGRESS_ITEMS);
        self.progress.drain(..extra);
        self.fixed = dedup(std::mem::take(&mut self.fixed));
        self.requests = dedup_adjacent(std::mem::take(&mut self.requests));
    }

    /// The result of the pending call `id`: a failure opens (or
    /// replaces) an entry when `open_new`; a success fixes the open
    /// failures it resolves (`failure::resolves`).
    fn result(
        &mut self,
        pending: &mut Vec<(String, String, String)>,
        id: &str,
        failed: Option<String>,
        open_new: bool,
    ) {
        let Some(pos) = pending.iter().position(|(cid, _, _)| cid == id) else {
            return;
        };
        let (_, tool, target) = pending.remove(pos);
        match failed {
            Some(line) if open_new => {
                // A failed retry supersedes what it retried.
                let open = Open { tool, target, line };
                self.open.retain(|o| {
                    o.key() != open.key()
                        && !(o.tool == open.tool && failure::retries(&open.target, &o.target))
                });
                self.open.push(open);
            }
            Some(_) => {}
            None => {
                let (fixed, still): (Vec<Open>, Vec<Open>) = std::mem::take(&mut self.open)
                    .into_iter()
                    .partition(|o| o.tool == tool && resolves(&target, &o.target));
                self.open = still;
                self.fixed.extend(fixed.iter().map(|o| clip(&o.key())));
            }
        }
    }

    /// Resolve open failures against the messages kept after the pruned
    /// part: a success there fixes what it resolves, as in the pruned
    /// part; nothing else of them is taken in (they stay in the history).
    fn resolve_later(&mut self, later: &[&Message]) {
        let mut pending: Vec<(String, String, String)> = Vec::new();
        for m in later {
            if self.open.is_empty() {
                return;
            }
            for call in m.tool_call_summaries() {
                pending.push((call.id, call.name, target(&call.arguments)));
            }
            match m.role {
                Role::User => {
                    for (id, text, is_error) in m.content.tool_result_entries() {
                        let failed = failure::text_failure(&text).is_some() || is_error;
                        self.result(&mut pending, id, failed.then(String::new), false);
                    }
                }
                Role::Tool => {
                    if let Some(id) = &m.tool_call_id {
                        self.result(&mut pending, id, failure(m), false);
                    }
                }
                _ => {}
            }
        }
    }

    /// The sentences of `text` that state a constraint or a decision.
    fn decisions_in(&mut self, text: &str, who: &str) {
        let turn = self.turns;
        for sentence in sentences(text) {
            let lower = format!(" {} ", sentence.to_lowercase());
            let lower = lower.replace('\u{2019}', "'");
            if DECISION_MARKERS.iter().any(|m| lower.contains(m)) {
                let item = clip(&format!("(turn {turn}, {who}) {sentence}"));
                if !self.decisions.iter().any(|d| d.ends_with(sentence)) {
                    self.decisions.push(item);
                }
            }
        }
    }
}

/// Sentences of prose (code blocks skipped).
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut in_code = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code || line.is_empty() {
            continue;
        }
        let mut start = 0;
        let bytes = line.as_bytes();
        for (i, b) in bytes.iter().enumerate() {
            let end =
                matches!(b, b'.' | b'!' | b'?') && bytes.get(i + 1).is_none_or(|n| *n == b' ');
            if end {
                let s = line[start..=i].trim();
                if !s.is_empty() {
                    out.push(s);
                }
                start = i + 1;
            }
        }
        let s = line[start..].trim();
        if !s.is_empty() {
            out.push(s);
        }
    }
    out
}

fn writes(tool: &str) -> bool {
    let lower = tool.to_ascii_lowercase();
    WRITERS.iter().any(|w| lower.contains(w))
}

/// The arguments on one line, values of secret-named keys replaced.
fn masked_arguments(arguments: &str) -> String {
    fn mask(value: &mut Json) {
        match value {
            Json::Object(map) => {
                for (k, v) in map.iter_mut() {
                    if super::redact::is_secret_key(k) && !v.is_null() {
                        *v = Json::String("<redacted>".into());
                    } else {
                        mask(v);
                    }
                }
            }
            Json::Array(items) => items.iter_mut().for_each(mask),
            _ => {}
        }
    }
    match serde_json::from_str::<Json>(arguments) {
        Ok(mut v) => {
            mask(&mut v);
            one_line(&v.to_string())
        }
        Err(_) => one_line(arguments),
    }
}

/// Every string in a call's arguments that looks like a path or an
/// identifier: short whole strings without spaces, and path-like words
/// of longer strings. Values of secret-named keys are skipped.
fn collect_identifiers(arguments: &str, out: &mut Vec<String>) {
    fn walk(value: &Json, out: &mut Vec<String>) {
        match value {
            Json::String(s) => {
                let s = s.trim();
                if s.is_empty() {
                } else if !s.contains(char::is_whitespace) && s.chars().count() <= 100 {
                    if looks_like_path(s) || looks_like_identifier(s) {
                        out.push(s.to_string());
                    }
                } else {
                    // Words of prose or code: a path inside a call
                    // (`read_csv('data/x.csv')`) is a word of its own.
                    for word in s.split(|c: char| c.is_whitespace() || "\"'`,;()[]{}=".contains(c))
                    {
                        let word = word.trim_matches(|c: char| ":.".contains(c));
                        if looks_like_path(word) && word.chars().count() <= 100 {
                            out.push(word.to_string());
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

/// A file path: only path characters (letters, digits, `_ - . / ~ + @`;
/// a code fragment such as `c.trim().collect` or `//!` is none), a file
/// name with a letter or digit, and a `/` or an extension.
fn looks_like_path(word: &str) -> bool {
    let base = word.rsplit('/').next().unwrap_or(word);
    word.len() > 2
        && !word.contains("://")
        && word
            .chars()
            .all(|c| c.is_alphanumeric() || "_-./~+@".contains(c))
        && base.chars().any(char::is_alphanumeric)
        && (word.contains('/')
            || word.rsplit_once('.').is_some_and(|(stem, ext)| {
                !stem.is_empty()
                    && (1..=8).contains(&ext.len())
                    && ext.chars().all(|c| c.is_ascii_alphanumeric())
                    && ext.chars().any(|c| c.is_ascii_alphabetic())
            }))
}

/// A code identifier or a name worth keeping: `parse_nested`,
/// `parser::tests::nested`, `ORD-1042`, a URL.
fn looks_like_identifier(word: &str) -> bool {
    word.len() > 2
        && (word.contains("://")
            || word.contains("::")
            || word.contains('_')
            || word.contains('-') && word.chars().any(|c| c.is_ascii_digit())
            || word.chars().any(|c| c.is_ascii_uppercase())
                && word.chars().any(|c| c.is_ascii_lowercase())
                && word.chars().all(|c| c.is_ascii_alphanumeric()))
}

fn first_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).find(|l| !l.is_empty())
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn clip(text: &str) -> String {
    clip_to(text, ITEM_CHARS)
}

fn clip_to(text: &str, max: usize) -> String {
    let text = one_line(text);
    if text.chars().count() <= max {
        text
    } else {
        let mut s: String = text.chars().take(max - 3).collect();
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

fn dedup_adjacent(mut items: Vec<String>) -> Vec<String> {
    items.dedup();
    items
}

/// Read a previous summary back into facts. A digest comes back section
/// by section; any other text (a model's summary) becomes notes, one per
/// line, so its facts are kept.
fn parse_previous(body: &str) -> Facts {
    let mut facts = Facts::default();
    let header = body
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("Condensed from "));
    let Some(header) = header else {
        facts.notes = body
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(clip)
            .collect();
        return facts;
    };
    let numbers: Vec<usize> = header
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse().ok())
        .collect();
    facts.messages = numbers.first().copied().unwrap_or(0);
    facts.turns = numbers.get(1).copied().unwrap_or(0);
    let mut title = String::new();
    for line in body.lines().skip(1) {
        if let Some(t) = line.strip_prefix("## ") {
            title = t.to_string();
            continue;
        }
        if let Some(rest) = line.strip_prefix(&format!("{FIXED}: ")) {
            facts.fixed.extend(
                rest.split("; ")
                    .filter(|s| !is_marker(s))
                    .map(str::to_string),
            );
            continue;
        }
        let Some(item) = line.strip_prefix("- ") else {
            continue;
        };
        if is_marker(item) {
            continue;
        }
        let item = item.to_string();
        match title.as_str() {
            GOAL => facts.goal = Some(item),
            CONSTRAINTS => facts.decisions.push(format!("(turn ?, -) {item}")),
            LEDGER => facts.decisions.push(item),
            REQUESTS => facts.requests.push(item),
            FILES => read_files(&item, &mut facts),
            CHANGED => {
                if let Some((path, how)) = item.split_once(": ") {
                    let tools = facts.changed.entry(path.to_string()).or_default();
                    for part in how.split(", ") {
                        let (name, n) = match part.rsplit_once(" x") {
                            Some((name, n)) => (name, n.parse().unwrap_or(1)),
                            None => (part, 1),
                        };
                        tools.extend(std::iter::repeat_n(name.to_string(), n));
                    }
                    if !facts.paths.contains(&path.to_string()) {
                        facts.paths.push(path.to_string());
                    }
                }
            }
            TOOLS => {
                if let Some((head, last)) = item.split_once(", last: ") {
                    if let Some((name, n)) = head.rsplit_once(" x") {
                        facts.tool_order.push(name.to_string());
                        facts.tools.insert(
                            name.to_string(),
                            Activity {
                                calls: n.parse().unwrap_or(1),
                                last: last.to_string(),
                            },
                        );
                    }
                }
            }
            UNRESOLVED => facts.open.extend(Open::parse(&item)),
            PROGRESS => facts.progress.push(item),
            STATE => facts.state.push(item),
            NOTES => facts.notes.push(item),
            _ => {}
        }
    }
    facts
}

/// A line of the files section, back into paths and identifiers.
fn read_files(item: &str, facts: &mut Facts) {
    if let Some(ids) = item.strip_prefix("identifiers: ") {
        facts
            .identifiers
            .extend(ids.split(", ").map(str::to_string));
    } else if let Some((dir, files)) = item.split_once("/: ") {
        facts
            .paths
            .extend(files.split(", ").map(|f| format!("{dir}/{f}")));
    } else {
        facts.paths.extend(item.split(", ").map(str::to_string));
    }
}

/// A cut marker of `layout`, not a fact.
fn is_marker(item: &str) -> bool {
    item.starts_with("(+") && item.ends_with(" more)")
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
            later: &[],
            model: TokenModel::for_model("gpt-4o"),
        }
    }

    fn section<'t>(text: &'t str, title: &str) -> &'t str {
        text.split(&format!("## {title}\n"))
            .nth(1)
            .map_or("", |rest| rest.split("\n## ").next().unwrap_or(""))
    }

    /// The items of the unresolved section (not its `Fixed:` line).
    fn listed_open(text: &str) -> String {
        section(text, UNRESOLVED)
            .lines()
            .filter(|l| l.starts_with("- "))
            .collect::<Vec<_>>()
            .join("\n")
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
            Message::user("Leave render.rs for now. Use the reader's tests instead."),
            Message::tool_call([("c5", "grep", r#"{"pattern":"map_error_kind"}"#)]),
            Message::tool_result(
                "c5",
                "src/error.rs:12: pub fn map_error_kind(e: &E) -> Kind\n#[error(\"bad {0}\")]",
            ),
            Message::tool_call([(
                "c6",
                "edit_file",
                r#"{"path":"src/reader/nested.rs","old":"unwrap()","new":"?"}"#,
            )]),
            Message::tool_result("c6", "ok"),
            Message::assistant("The nested case is wrong.\nI will change parse_nested next."),
        ]
    }

    #[test]
    fn digest_keeps_goal_decisions_files_and_real_failures() {
        let msgs = session();
        let text = Digest.summarize(&request(&msgs, None, 1000)).unwrap();
        for fact in [
            "Fix the failing test in the parser",
            "Leave render.rs for now.",
            "Use the reader's tests instead.",
            "src/: parser.rs",
            "src/reader/: nested.rs",
            "parser::tests::nested",
            "map_error_kind",
            "I will change parse_nested next.",
        ] {
            assert!(text.contains(fact), "{fact} missing from\n{text}");
        }
        let open = section(&text, UNRESOLVED);
        assert!(open.contains("assertion failed"), "{text}");
        assert!(!open.contains("permission denied"), "fixed later:\n{text}");
        assert!(!open.contains("map_error_kind"), "not a failure:\n{text}");
        assert!(text.contains("\nFixed: grep(fn nested)"), "{text}");
    }

    #[test]
    fn digest_is_stable_and_within_the_cap_for_many_caps() {
        let mut msgs = session();
        for i in 0..40 {
            msgs.push(Message::user(format!(
                "step {i}: look at src/mod_{i}/file_{i}.rs"
            )));
            msgs.push(Message::tool_call([(
                "x",
                "read_file",
                &*Box::leak(format!(r#"{{"path":"src/mod_{i}/file_{i}.rs"}}"#).into_boxed_str()),
            )]));
            msgs.push(Message::tool_result(
                "x",
                "HTTP/1.1 500 Internal Server Error",
            ));
        }
        let model = TokenModel::for_model("gpt-4o");
        for strategy in Strategy::ALL {
            for max in (16..400).step_by(29).chain([1024]) {
                let mut r = request(&msgs, None, max);
                r.strategy = strategy;
                let a = Digest.summarize(&r).unwrap();
                let b = Digest.summarize(&r).unwrap();
                assert_eq!(a, b, "not deterministic");
                let n = model.count(&a);
                assert!(n <= max, "{strategy} {n} > {max}:\n{a}");
                if max >= 120 {
                    assert!(a.contains("Fix the failing test"), "{strategy} {max}:\n{a}");
                }
            }
        }
        // A cut of the files is marked with an exact count.
        let t = Digest.summarize(&request(&msgs, None, 300)).unwrap();
        let files = section(&t, FILES);
        let shown = files.matches(".rs").count();
        let more: usize = files
            .rsplit("(+")
            .next()
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        assert_eq!(shown + more, 44, "{t}");
    }

    #[test]
    fn strategies_differ_and_each_keeps_the_goal() {
        let msgs = session();
        let mut seen = HashSet::new();
        for strategy in Strategy::ALL {
            let mut r = request(&msgs, None, 1000);
            r.strategy = strategy;
            let t = Digest.summarize(&r).unwrap();
            assert!(t.contains("Fix the failing test in the parser"), "{t}");
            assert!(seen.insert(t.clone()), "{strategy} same as another:\n{t}");
            match strategy {
                Strategy::DecisionLog => {
                    assert!(t.contains("(turn 2, user) Leave render.rs"), "{t}")
                }
                Strategy::CodeDelta => {
                    assert!(
                        t.contains("## Files changed\n- src/reader/nested.rs: edit_file"),
                        "{t}"
                    )
                }
                Strategy::TaskState => assert!(t.contains("## Next step"), "{t}"),
                Strategy::Brief => assert!(!t.contains("## Tool activity"), "{t}"),
            }
        }
    }

    #[test]
    fn kept_messages_resolve_pruned_failures() {
        let pruned = vec![
            Message::user("Roll out the fix"),
            Message::tool_call([(
                "k1",
                "kubectl",
                r#"{"args":"rollout status deployment/payments"}"#,
            )]),
            Message::tool_result(
                "k1",
                "error: deployment \"payments\" exceeded its progress deadline",
            ),
            Message::tool_call([("h1", "check_health", r#"{"target":"db-replica-2"}"#)]),
            Message::tool_result("h1", r#"{"status":"unhealthy","exit_code":2}"#),
        ];
        let kept = [
            Message::tool_call([
                (
                    "k2",
                    "kubectl",
                    r#"{"args":"rollout status deployment/payments"}"#,
                ),
                ("h2", "check_health", r#"{"target":"payments"}"#),
            ]),
            Message::tool_result("k2", "deployment \"payments\" successfully rolled out"),
            Message::tool_result("h2", r#"{"status":"healthy"}"#),
        ];
        // Without the kept messages both stay open.
        let alone = Digest.summarize(&request(&pruned, None, 1000)).unwrap();
        assert!(listed_open(&alone).contains("progress deadline"), "{alone}");
        let mut r = request(&pruned, None, 1000);
        let kept: Vec<&Message> = kept.iter().collect();
        r.later = &kept;
        let text = Digest.summarize(&r).unwrap();
        let open = listed_open(&text);
        assert!(
            !open.contains("progress deadline"),
            "fixed by a kept turn:\n{text}"
        );
        assert!(
            text.contains("\nFixed: kubectl(rollout status deployment/payments)"),
            "{text}"
        );
        // Another target of the same tool fixes nothing.
        assert!(open.contains("check_health(db-replica-2)"), "{text}");
        // A kept failure is not listed (it is in the history itself).
        let failing = [
            Message::tool_call([("x1", "sql", r#"{"query":"select * from sales.refunds"}"#)]),
            Message::tool_result("x1", r#"{"error": "permission denied"}"#),
        ];
        let failing: Vec<&Message> = failing.iter().collect();
        r.later = &failing;
        let text = Digest.summarize(&r).unwrap();
        assert!(!text.contains("sales.refunds"), "{text}");
    }

    #[test]
    fn a_corrected_query_fixes_the_failed_one_and_others_stay_open() {
        let msgs = vec![
            Message::user("Q3 revenue by month"),
            Message::tool_call([(
                "q1",
                "sql",
                r#"{"query":"select sum(amount_usd) from sales.orders"}"#,
            )]),
            Message::tool_result("q1", r#"{"error": "column \"amount_usd\" does not exist"}"#),
            Message::tool_call([(
                "q2",
                "sql",
                r#"{"query":"select * from finance.fx_rates limit 5"}"#,
            )]),
            Message::tool_result("q2", r#"{"error": "permission denied for table fx_rates"}"#),
            Message::tool_call([(
                "q3",
                "sql",
                r#"{"query":"select sum(net_amount) from sales.orders where not is_test"}"#,
            )]),
            Message::tool_result("q3", r#"{"rows": [{"sum": 4812300}]}"#),
            Message::assistant("Done."),
        ];
        let text = Digest.summarize(&request(&msgs, None, 1000)).unwrap();
        let open = listed_open(&text);
        assert!(
            !open.contains("amount_usd"),
            "a corrected retry fixed it:\n{text}"
        );
        assert!(
            text.contains("\nFixed: sql(select sum(amount_usd)"),
            "{text}"
        );
        assert!(open.contains("permission denied"), "never retried:\n{text}");
        // A retry that fails again supersedes the first failure.
        let mut again = msgs[..5].to_vec();
        again.push(Message::tool_call([(
            "q4",
            "sql",
            r#"{"query":"select sum(net) from sales.orders"}"#,
        )]));
        again.push(Message::tool_result(
            "q4",
            r#"{"error": "column \"net\" does not exist"}"#,
        ));
        let text = Digest.summarize(&request(&again, None, 1000)).unwrap();
        let open = listed_open(&text);
        assert!(
            !open.contains("amount_usd") && open.contains("sum(net)"),
            "{text}"
        );
        assert!(open.contains("permission denied"), "{text}");
    }

    #[test]
    fn secret_arguments_are_never_copied() {
        let msgs = vec![
            Message::user("Log in to the dashboard"),
            Message::tool_call([(
                "c1",
                "login",
                r#"{"user":"ana_admin","password":"X&3hunter2","api_key":"k-9f8e7d"}"#,
            )]),
            Message::tool_result("c1", "ok"),
        ];
        let t = Digest.summarize(&request(&msgs, None, 1000)).unwrap();
        assert!(!t.contains("hunter2") && !t.contains("9f8e7d"), "{t}");
        assert!(t.contains("ana_admin"), "{t}");
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
            v2.starts_with("Condensed from 18 earlier messages (3 user turns)."),
            "{v2}"
        );
        for fact in [
            "src/: parser.rs",
            "CHANGELOG.md",
            "assertion failed",
            "Fix the failing test",
            "update the changelog",
            "Leave render.rs for now.",
            "Fixed: grep(fn nested)",
        ] {
            assert!(v2.contains(fact), "{fact} missing from\n{v2}");
        }
        let run_tests_fixed = vec![
            Message::tool_call([("e1", "run_tests", r#"{}"#)]),
            Message::tool_result("e1", "test result: ok. 40 passed; 0 failed"),
        ];
        let v3 = Digest
            .summarize(&request(&run_tests_fixed, Some(&v2), 1000))
            .unwrap();
        assert!(!v3.contains("assertion failed at"), "resolved later:\n{v3}");
        assert!(v3.contains("run_tests(parser::tests::nested)"), "{v3}");
        assert_eq!(
            Digest
                .summarize(&request(&run_tests_fixed, Some(&v2), 1000))
                .unwrap(),
            v3
        );
    }
}
