//! Property tests of the history layer on random histories (1,000 per
//! property): protected messages are never pruned or altered, the output
//! is within budget or the error is typed, no tool call loses its result
//! or result its call, kept messages keep their order, and a history
//! compacted below the trigger is left alone by the next pre-flight.
//! Histories mix both providers' shapes: OpenAI tool calls and content
//! parts (text, images), Anthropic `tool_use`/`tool_result` blocks and
//! thinking blocks.

use proptest::prelude::*;
use ptc_lisp::history::{
    summary_version, units, CompactError, Compactor, Context, Digest, Message, Policy, Role,
    StructureError, Summarizer, SummaryError, SummaryRequest, Window, WindowPolicy,
};

const CASES: u32 = 1_000;

#[derive(Debug, Clone)]
enum Item {
    User(usize, bool),
    Assistant(usize),
    Developer(usize),
    Tools(Vec<usize>),
    /// Anthropic blocks: an assistant message with thinking, text and
    /// `tool_use` blocks, then one user message of `tool_result` blocks.
    Blocks(Vec<usize>),
    /// A user message of OpenAI content parts: text and an image.
    Parts(usize, bool),
}

fn item() -> impl Strategy<Value = Item> {
    prop_oneof![
        4 => (0usize..80, prop::bool::weighted(0.1)).prop_map(|(n, p)| Item::User(n, p)),
        4 => (0usize..80).prop_map(Item::Assistant),
        1 => (0usize..20).prop_map(Item::Developer),
        3 => prop::collection::vec(0usize..60, 1..4).prop_map(Item::Tools),
        2 => prop::collection::vec(0usize..60, 1..4).prop_map(Item::Blocks),
        1 => (0usize..40, any::<bool>()).prop_map(|(n, low)| Item::Parts(n, low)),
    ]
}

fn words(n: usize, seed: usize) -> String {
    const W: [&str; 8] = [
        "alpha",
        "src/lib.rs",
        "beta",
        "error:",
        "gamma",
        "fn parse",
        "delta",
        "ok",
    ];
    (0..n)
        .map(|i| W[(i + seed) % W.len()])
        .collect::<Vec<_>>()
        .join(" ")
}

/// A message from its JSON, as a history file would give it.
fn parse(v: serde_json::Value) -> Message {
    ptc_lisp::history::parse_jsonl(&v.to_string())
        .unwrap()
        .remove(0)
}

/// The results answering the calls of `out[pos]`: the Anthropic
/// `tool_result` blocks of the next message, or the tool messages after.
fn results_of(out: &[Message], pos: usize) -> Vec<&str> {
    match out.get(pos + 1) {
        Some(next) if next.answers_tools() => next.tool_result_ids().collect(),
        _ => out[pos + 1..]
            .iter()
            .take_while(|x| x.role == Role::Tool)
            .filter_map(|x| x.tool_call_id.as_deref())
            .collect(),
    }
}

/// A history: a system prompt, random items, maybe a pending call last.
/// In some, every message numbers its calls from 1 again (as some
/// servers do), so ids repeat across assistant messages.
fn history() -> impl Strategy<Value = Vec<Message>> {
    (
        prop::collection::vec(item(), 0..40),
        any::<bool>(),
        0usize..100,
        prop::bool::weighted(0.3),
    )
        .prop_map(|(items, pending, sys, reuse_ids)| {
            let mut h = vec![Message::system(words(sys, 1))];
            let mut id = 0;
            for (k, it) in items.into_iter().enumerate() {
                match it {
                    Item::User(n, protected) => {
                        let m = Message::user(words(n, k));
                        h.push(if protected { m.protected() } else { m });
                    }
                    Item::Assistant(n) => h.push(Message::assistant(words(n, k))),
                    Item::Developer(n) => h.push(Message::developer(words(n, k))),
                    Item::Parts(n, low) => {
                        let detail = if low { "low" } else { "auto" };
                        h.push(parse(serde_json::json!({"role": "user", "content": [
                            {"type": "text", "text": words(n, k)},
                            {"type": "image_url", "image_url": {"url": "https://example.com/a.png", "detail": detail}},
                        ]})));
                    }
                    Item::Blocks(sizes) => {
                        if reuse_ids {
                            id = 0;
                        }
                        let ids: Vec<String> = sizes
                            .iter()
                            .map(|_| {
                                id += 1;
                                format!("toolu_{id}")
                            })
                            .collect();
                        let mut blocks = vec![
                            serde_json::json!({"type": "thinking", "thinking": words(5, k), "signature": "sig"}),
                            serde_json::json!({"type": "text", "text": "Reading."}),
                        ];
                        blocks.extend(ids.iter().map(|i| serde_json::json!({"type": "tool_use", "id": i, "name": "read_file", "input": {"path": "src/a.rs"}})));
                        h.push(parse(serde_json::json!({"role": "assistant", "content": blocks})));
                        let results: Vec<_> = ids
                            .iter()
                            .zip(&sizes)
                            .map(|(i, n)| serde_json::json!({"type": "tool_result", "tool_use_id": i, "content": [{"type": "text", "text": words(*n, k)}]}))
                            .collect();
                        h.push(parse(serde_json::json!({"role": "user", "content": results})));
                    }
                    Item::Tools(sizes) => {
                        if reuse_ids {
                            id = 0;
                        }
                        let ids: Vec<String> = sizes
                            .iter()
                            .map(|_| {
                                id += 1;
                                format!("call{id}")
                            })
                            .collect();
                        let calls: Vec<(&str, &str, &str)> = ids
                            .iter()
                            .map(|i| (i.as_str(), "read_file", r#"{"path":"src/a.rs"}"#))
                            .collect();
                        h.push(Message::tool_call(calls));
                        for (i, n) in ids.iter().zip(&sizes) {
                            h.push(Message::tool_result(i.clone(), words(*n, k)));
                        }
                    }
                }
            }
            if pending {
                h.push(Message::tool_call([("pending", "run", "{}")]));
            }
            h
        })
}

fn policy() -> impl Strategy<Value = Policy> {
    (
        300usize..6_000,
        0.3f64..1.0,
        1usize..8,
        1usize..6,
        16usize..80,
    )
        .prop_map(|(max, pct, turns, pairs, summary)| Policy {
            max_context_tokens: max,
            trigger_pct: pct,
            hard_cap_buffer: max / 10,
            keep_recent_turns: turns,
            keep_tool_io_pairs: pairs,
            max_summary_tokens: summary,
            ..Policy::default()
        })
}

/// Fails every other call, so pruning-only paths are covered too.
struct Flaky(std::cell::Cell<bool>);

impl Summarizer for Flaky {
    fn name(&self) -> String {
        "flaky".into()
    }

    fn summarize(&self, r: &SummaryRequest<'_>) -> Result<String, SummaryError> {
        self.0.set(!self.0.get());
        if self.0.get() {
            Digest.summarize(r)
        } else {
            Err(SummaryError::Failed("down".into()))
        }
    }
}

fn pinned(m: &Message) -> bool {
    m.is_protected() || matches!(m.role, Role::System | Role::Developer)
}

/// `sub` (summaries left out) appears in `all` in the same order.
fn is_subsequence(sub: &[Message], all: &[Message]) -> bool {
    let mut it = all.iter();
    sub.iter()
        .filter(|m| summary_version(m).is_none())
        .all(|m| it.any(|x| x == m))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn compaction_invariants_hold(h in history(), p in policy(), flaky in any::<bool>()) {
        let budget = p.budget();
        let trigger = p.trigger_tokens();
        let mut c = Compactor::new("gpt-4o", p).unwrap();
        let summarizer: Box<dyn Summarizer> = if flaky {
            Box::new(Flaky(std::cell::Cell::new(false)))
        } else {
            Box::new(Digest)
        };
        match c.manual_compact(&h, "prop", summarizer.as_ref(), Context::default()) {
            Err(CompactError::InsufficientBudget { protected_tokens, .. }) => {
                prop_assert!(protected_tokens > budget, "{protected_tokens} <= {budget}");
            }
            Err(other) => prop_assert!(false, "unexpected error {other}"),
            Ok(out) => {
                // Within budget.
                prop_assert!(out.tokens.total() <= budget, "{} > {budget}", out.tokens.total());
                // Protected and never-pruned messages kept verbatim, in order.
                let pins_in: Vec<&Message> = h.iter().filter(|m| pinned(m)).collect();
                let pins_out: Vec<&Message> = out.messages.iter().filter(|m| pinned(m)).collect();
                prop_assert_eq!(pins_in, pins_out);
                // No orphan call or result, pending call kept, nothing starts with a result.
                prop_assert!(units(&out.messages).is_ok());
                prop_assert!(out.messages.first().is_none_or(|m| m.role != Role::Tool && !m.answers_tools()));
                if h.last().is_some_and(|m| m.tool_call_ids().any(|id| id == "pending")) {
                    prop_assert_eq!(out.messages.last(), h.last());
                }
                for m in out.messages.iter().filter(|m| m.calls_tools()) {
                    let want: Vec<&str> = m.tool_call_ids().collect();
                    let pos = out.messages.iter().position(|x| x == m).unwrap();
                    let got = results_of(&out.messages, pos);
                    if want != ["pending"] {
                        prop_assert_eq!(want, got);
                    }
                }
                // Order of kept messages unchanged; at most one summary.
                prop_assert!(is_subsequence(&out.messages, &h));
                prop_assert!(out.messages.iter().filter(|m| summary_version(m).is_some()).count() <= 1);
                // A second pre-flight under the trigger changes nothing.
                if out.tokens.total() < trigger {
                    let again = c.preflight(&out.messages, &Digest).unwrap();
                    prop_assert_eq!(again.messages, out.messages);
                }
            }
        }
    }

    /// Issue 40: a result repeated, or a call id repeated within one
    /// assistant message, is reported as a duplicate at that message
    /// (never as an orphan); ids repeated across messages are accepted.
    #[test]
    fn duplicate_ids_are_reported_as_duplicates(h in history(), pick in any::<prop::sample::Index>()) {
        prop_assert!(units(&h).is_ok());
        let exchanges: Vec<usize> = (0..h.len())
            .filter(|&i| h[i].calls_tools() && h.get(i + 1).is_some_and(|n| n.role == Role::Tool || n.answers_tools()))
            .collect();
        if exchanges.is_empty() {
            return Ok(());
        }
        let at = exchanges[pick.index(exchanges.len())];
        let id = h[at].tool_call_ids().next().unwrap().to_string();
        // The first result given twice.
        let mut twice = h.clone();
        if h[at + 1].answers_tools() {
            let mut blocks: Vec<serde_json::Value> = serde_json::from_value(
                serde_json::to_value(&h[at + 1]).unwrap()["content"].clone(),
            )
            .unwrap();
            blocks.push(blocks[0].clone());
            twice[at + 1] = parse(serde_json::json!({"role": "user", "content": blocks}));
            prop_assert_eq!(
                units(&twice).unwrap_err(),
                StructureError::DuplicateToolResult { index: at + 1, id: id.clone(), first: at + 1 }
            );
        } else {
            twice.insert(at + 2, h[at + 1].clone());
            let err = units(&twice).unwrap_err();
            prop_assert_eq!(
                err,
                StructureError::DuplicateToolResult { index: at + 2, id: id.clone(), first: at + 1 }
            );
        }
        // The first call given twice in its message.
        let mut doubled = h.clone();
        let mut call = serde_json::to_value(&h[at]).unwrap();
        if let Some(calls) = call["tool_calls"].as_array_mut() {
            calls.push(calls[0].clone());
        } else {
            let blocks = call["content"].as_array_mut().unwrap();
            let first = blocks.iter().find(|b| b["type"] == "tool_use").unwrap().clone();
            blocks.push(first);
        }
        call.as_object_mut().unwrap().retain(|_, v| !v.is_null());
        doubled[at] = parse(call);
        prop_assert_eq!(
            units(&doubled).unwrap_err(),
            StructureError::DuplicateToolCallId { index: at, id }
        );
    }

    #[test]
    fn window_invariants_hold(
        h in history(),
        max in 0usize..40,
        first in 0usize..5,
        last in 0usize..25,
        summarize in any::<bool>(),
    ) {
        let mut w = Window::new(
            WindowPolicy { max_messages: max, preserve_first_n: first, preserve_last_n: last, summarize_on_trim: summarize, summary_every_evicted: 3 },
            "gpt-4o",
        );
        let t = w.trim_with(&h, &Digest).unwrap();
        prop_assert!(units(&t.messages).is_ok(), "orphaned call or result");
        for (pos, m) in t.messages.iter().enumerate().filter(|(_, m)| m.calls_tools()) {
            if !m.tool_call_ids().any(|id| id == "pending") {
                prop_assert_eq!(m.tool_call_ids().collect::<Vec<_>>(), results_of(&t.messages, pos));
            }
        }
        prop_assert!(is_subsequence(&t.messages, &h));
        prop_assert_eq!(
            t.messages.iter().filter(|m| summary_version(m).is_none()).count() + t.evicted.len(),
            h.len()
        );
        let protected_in = h.iter().filter(|m| m.is_protected()).count();
        let protected_out = t.messages.iter().filter(|m| m.is_protected()).count();
        prop_assert_eq!(protected_in, protected_out);
        if max > 0 && h.len() > max && t.warning.is_none() {
            // Whole units may carry the window one unit (up to 4 messages)
            // past its maximum; protected messages are kept on top.
            prop_assert!(t.messages.len() <= max + 4 + protected_in + 1, "{} > {max}", t.messages.len());
        }
        if max == 0 || h.len() <= max {
            prop_assert_eq!(&t.messages, &h);
        }
    }
}

/// A small deterministic generator (xorshift), so the soak needs no
/// extra dependency and replays exactly.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// 1,000 simulated agent sessions: each step appends a user message,
/// tool calls with results of random sizes and an answer, and every
/// request goes through the pre-flight check first. No request may be
/// over the model's context (a context-limit error), and compaction must
/// never fail while the protected part is small.
#[test]
fn soak_1000_sessions_zero_context_limit_errors() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut compactions = 0;
    for session in 0..1_000 {
        let max = 3_000 + rng.below(6_000) as usize;
        let policy = Policy {
            max_context_tokens: max,
            hard_cap_buffer: max / 10,
            keep_recent_turns: 1 + rng.below(6) as usize,
            keep_tool_io_pairs: 1 + rng.below(4) as usize,
            max_summary_tokens: 100 + rng.below(200) as usize,
            ..Policy::default()
        };
        let mut c = Compactor::new("gpt-4o", policy).unwrap();
        let mut h = vec![Message::system(words(20 + rng.below(60) as usize, session))];
        let mut id = 0;
        for step in 0..25 {
            h.push(Message::user(words(5 + rng.below(60) as usize, step)));
            for _ in 0..rng.below(3) {
                id += 1;
                let call = format!("c{id}");
                h.push(Message::tool_call([(
                    call.as_str(),
                    "read_file",
                    r#"{"path":"src/x.rs"}"#,
                )]));
                h.push(Message::tool_result(
                    call,
                    words(rng.below(120) as usize, step),
                ));
            }
            let out = c.preflight(&h, &Digest).expect("compaction succeeds");
            assert!(
                out.tokens.total() <= max,
                "session {session} step {step}: {} tokens sent to a {max}-token model",
                out.tokens.total()
            );
            compactions += usize::from(out.report.is_some());
            h = out.messages;
            h.push(Message::assistant(words(5 + rng.below(80) as usize, step)));
        }
    }
    assert!(
        compactions >= 500,
        "the soak must compact often: {compactions}"
    );
}
