//! The history layer, scenario by scenario: seed 004 (token budget,
//! triggers, manual compaction, strategies, protected memory, pruning
//! policies, memory layers, fallbacks) and the tasks of seed 003 (the
//! sliding window and its summaries). Test names follow the scenarios.

use std::cell::{Cell, RefCell};
use std::time::Instant;

use ptc_lisp::history::{
    summary_version, CompactError, Compactor, Context, Digest, Event, Message, Policy, Role,
    Strategy, Summarizer, SummaryError, SummaryRequest, TokenCounter, Window, WindowPolicy,
};

/// (strategy, max_tokens, messages, previous summary) of one request.
type Asked = (Strategy, usize, Vec<Message>, Option<String>);

/// A summarizer that records what it was asked and answers from a script.
struct Scripted {
    replies: RefCell<Vec<Result<String, SummaryError>>>,
    asked: RefCell<Vec<Asked>>,
}

impl Scripted {
    fn new(replies: Vec<Result<String, SummaryError>>) -> Self {
        Scripted {
            replies: RefCell::new(replies),
            asked: RefCell::new(Vec::new()),
        }
    }

    fn ok(text: &str) -> Self {
        Scripted::new(vec![Ok(text.to_string()); 8])
    }
}

impl Summarizer for Scripted {
    fn name(&self) -> String {
        "scripted".into()
    }

    fn summarize(&self, r: &SummaryRequest<'_>) -> Result<String, SummaryError> {
        self.asked.borrow_mut().push((
            r.strategy,
            r.max_tokens,
            r.messages.to_vec(),
            r.previous.map(str::to_string),
        ));
        let mut replies = self.replies.borrow_mut();
        if replies.is_empty() {
            return Err(SummaryError::Failed("script exhausted".into()));
        }
        replies.remove(0)
    }
}

fn policy(max: usize) -> Policy {
    Policy {
        max_context_tokens: max,
        hard_cap_buffer: max / 20,
        max_summary_tokens: (max / 20).max(16),
        ..Policy::default()
    }
}

/// System + developer + `pairs` user/assistant pairs of about `size` words each.
fn conversation(pairs: usize, size: usize) -> Vec<Message> {
    let mut h = vec![
        Message::system("You are a coding agent. Follow the repository conventions."),
        Message::developer("Prefer small commits."),
    ];
    for i in 0..pairs {
        h.push(Message::user(format!(
            "request {i}: {}",
            "please check it ".repeat(size / 3)
        )));
        h.push(Message::assistant(format!(
            "answer {i}: {}",
            "checked and fine ".repeat(size / 3)
        )));
    }
    h
}

fn names(events: &[Event]) -> Vec<&'static str> {
    events.iter().map(Event::name).collect()
}

fn trigger_decision(events: &[Event]) -> (bool, Option<String>) {
    events
        .iter()
        .find_map(|e| match e {
            Event::TriggerDecision {
                triggered, note, ..
            } => Some((*triggered, note.clone())),
            _ => None,
        })
        .expect("a trigger decision")
}

// --- Token Budget Monitoring -------------------------------------------

#[test]
fn accurate_token_estimation_using_tiktoken() {
    let mut h = vec![
        Message::system("You are helpful."),
        Message::developer("Be brief."),
    ];
    for i in 0..10 {
        h.push(Message::user(format!("question {i} about src/lib.rs")));
        if i < 5 {
            let id = format!("call{i}");
            h.push(Message::tool_call([(
                id.as_str(),
                "read_file",
                r#"{"path":"src/lib.rs"}"#,
            )]));
            h.push(Message::tool_result(id, "fn main() {}"));
        }
        h.push(Message::assistant(format!("answer {i}")));
    }
    let mut counter = TokenCounter::new("gpt-4o");
    counter.set_tools_schema(Some(&serde_json::json!([{"type":"function","function":{"name":"read_file","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}}])));
    let started = Instant::now();
    let b = counter.count(&h);
    let cold = started.elapsed();
    assert!(
        b.system > 0 && b.developer > 0 && b.tools_schema > 0 && b.messages > 0,
        "{b:?}"
    );
    let by_message: usize = counter.per_message(&h).iter().sum();
    assert_eq!(
        b.total(),
        by_message + b.tools_schema + ptc_lisp::history::REPLY_PRIMING
    );
    // The encoding differs per model family.
    let old = TokenCounter::new("gpt-4");
    assert_ne!(old.token_model().encoding, counter.token_model().encoding);
    let started = Instant::now();
    counter.count(&h);
    assert!(
        started.elapsed() < cold.max(std::time::Duration::from_millis(10)),
        "a warm count is cheap"
    );
}

#[test]
fn budget_calculation_with_buffer_reserve() {
    let p = Policy {
        max_context_tokens: 128_000,
        hard_cap_buffer: 1_500,
        ..Policy::default()
    };
    assert_eq!(p.budget(), 126_500);
}

// --- Compaction Trigger Thresholds -------------------------------------

#[test]
fn automatic_trigger_at_85_percent_threshold() {
    let h = conversation(40, 30);
    let mut probe = TokenCounter::new("gpt-4o");
    let t = probe.count(&h).total();
    // A context in which this history is at 86%.
    let max = (t as f64 / 0.86) as usize;
    let mut c = Compactor::new("gpt-4o", policy(max)).unwrap();
    let out = c.preflight(&h, &Digest).unwrap();
    let events = c.take_events();
    assert!(trigger_decision(&events).0);
    assert!(out.report.is_some());
    assert!(out.tokens.total() <= c.policy().budget());
    assert!(out.messages.len() < h.len());
}

#[test]
fn no_trigger_below_threshold() {
    let h = conversation(40, 30);
    let t = TokenCounter::new("gpt-4o").count(&h).total();
    let max = (t as f64 / 0.75) as usize;
    let mut c = Compactor::new("gpt-4o", policy(max)).unwrap();
    let out = c.preflight(&h, &Digest).unwrap();
    let events = c.take_events();
    assert_eq!(
        names(&events),
        ["compact.token_estimate", "compact.trigger_decision"]
    );
    assert!(!trigger_decision(&events).0);
    assert_eq!(out.messages, h);
    assert!(out.report.is_none());
}

// --- Manual Compaction Command -----------------------------------------

#[test]
fn manual_compaction_via_api() {
    let h = conversation(20, 10);
    let mut c = Compactor::new("gpt-4o", Policy::default()).unwrap();
    let out = c
        .manual_compact(&h, "user-requested", &Digest, Context::default())
        .unwrap();
    let events = c.take_events();
    assert_eq!(
        trigger_decision(&events),
        (true, Some("user-requested".into()))
    );
    let report = out
        .report
        .expect("compacted although far below the trigger");
    assert_eq!(report.kept.recent_turns, 6);
    assert!(summary_version(&out.messages[2]) == Some(1));
    assert!(
        out.messages[2].text().contains("user-requested"),
        "the note reaches the summary"
    );
}

// --- Summarization Strategies ------------------------------------------

#[test]
fn task_state_summarization_for_coding_sessions() {
    let h = conversation(12, 10);
    for strategy in [
        Strategy::TaskState,
        Strategy::DecisionLog,
        Strategy::CodeDelta,
    ] {
        let s = Scripted::ok("Goal: fix the parser.");
        let mut c = Compactor::new(
            "gpt-4o",
            Policy {
                strategy,
                ..Policy::default()
            },
        )
        .unwrap();
        c.manual_compact(&h, "test", &s, Context::default())
            .unwrap();
        assert_eq!(s.asked.borrow()[0].0, strategy);
    }
    // The default summarizer is deterministic.
    let mut c = Compactor::new("gpt-4o", Policy::default()).unwrap();
    let a = c
        .manual_compact(&h, "n", &Digest, Context::default())
        .unwrap();
    let b = c
        .manual_compact(&h, "n", &Digest, Context::default())
        .unwrap();
    assert_eq!(a.messages, b.messages);
}

// --- Protected Memory --------------------------------------------------

#[test]
fn protected_message_never_pruned() {
    let mut h = conversation(20, 10);
    h[5] = Message::user("The deploy key lives in vault path secret/deploy.").protected();
    let s = Scripted::ok("summary");
    let mut c = Compactor::new("gpt-4o", Policy::default()).unwrap();
    let out = c.manual_compact(&h, "n", &s, Context::default()).unwrap();
    assert!(out.messages.contains(&h[5]));
    for (_, _, input, _) in s.asked.borrow().iter() {
        assert!(
            !input.iter().any(|m| m.is_protected()),
            "protected content reached the summarizer"
        );
    }
}

#[test]
fn role_based_protection() {
    let h = conversation(20, 10);
    let s = Scripted::ok("summary");
    let mut c = Compactor::new("gpt-4o", Policy::default()).unwrap();
    let out = c.manual_compact(&h, "n", &s, Context::default()).unwrap();
    assert_eq!(&out.messages[..2], &h[..2]);
    for (_, _, input, _) in s.asked.borrow().iter() {
        assert!(input
            .iter()
            .all(|m| m.role != Role::System && m.role != Role::Developer));
    }
}

#[test]
fn budget_exhaustion_with_protected_only_messages() {
    let mut h = vec![Message::system("rules ".repeat(3_000))];
    h.extend(conversation(5, 10).into_iter().skip(2));
    let mut c = Compactor::new("gpt-4o", policy(2_000)).unwrap();
    let err = c.preflight(&h, &Digest).unwrap_err();
    assert!(matches!(err, CompactError::InsufficientBudget { .. }));
    let text = err.to_string();
    assert!(text.contains("budget is 1900"), "{text}");
    assert!(
        text.contains("raise max_context_tokens") && text.contains("unprotect"),
        "{text}"
    );
    let events = c.take_events();
    assert!(events.iter().any(
        |e| matches!(e, Event::Error { error_type, .. } if error_type == "InsufficientBudget")
    ));
}

// --- History Pruning Policies ------------------------------------------

#[test]
fn keep_recent_turns_policy() {
    let h = conversation(20, 10);
    let s = Scripted::ok("summary");
    let mut c = Compactor::new("gpt-4o", Policy::default()).unwrap();
    let out = c.manual_compact(&h, "n", &s, Context::default()).unwrap();
    // system, developer, summary, then the last 6 pairs unchanged.
    assert_eq!(out.messages.len(), 2 + 1 + 12);
    assert_eq!(&out.messages[3..], &h[h.len() - 12..]);
    assert_eq!(
        s.asked.borrow()[0].2.len(),
        28,
        "the older 14 pairs are summarized"
    );
}

#[test]
fn keep_tool_io_pairs_policy() {
    // Since issue 38 a kept turn keeps all its tool exchanges, so the
    // exchanges limited by `keep_tool_io_pairs` are those of no kept turn
    // (here: before the first user message).
    let mut h = vec![Message::system("agent")];
    for i in 0..10 {
        let id = format!("c{i}");
        h.push(Message::tool_call([(
            id.as_str(),
            "read_file",
            r#"{"path":"a.rs"}"#,
        )]));
        h.push(Message::tool_result(id, format!("contents {i}")));
    }
    h.push(Message::user("Refactor the crate"));
    let s = Scripted::ok("summary");
    let mut c = Compactor::new("gpt-4o", Policy::default()).unwrap();
    let out = c.manual_compact(&h, "n", &s, Context::default()).unwrap();
    let kept_results: Vec<_> = out
        .messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.text().to_string())
        .collect();
    assert_eq!(
        kept_results,
        ["contents 6", "contents 7", "contents 8", "contents 9"]
    );
    assert_eq!(
        s.asked.borrow()[0].2.len(),
        12,
        "the older 6 pairs are summarized"
    );
}

#[test]
fn incremental_reduction_on_budget_overflow() {
    let h = conversation(20, 60);
    let (pinned, per_pair) = {
        let mut c = TokenCounter::new("gpt-4o");
        let pinned: usize = c.per_message(&h[..2]).iter().sum();
        (pinned, c.per_message(&h[2..4]).iter().sum::<usize>())
    };
    // Pinned messages, the reply priming and the summary's room (its
    // cap plus a message's framing, with a few tokens to spare).
    let fixed = pinned + 3 + 50 + 11;
    // Room for the pinned messages, the summary and about three pairs.
    let mut p = policy(1_000);
    p.max_summary_tokens = 50;
    p.hard_cap_buffer = 0;
    p.max_context_tokens = fixed + 3 * per_pair + per_pair / 2;
    let mut c = Compactor::new("gpt-4o", p).unwrap();
    let out = c
        .manual_compact(&h, "n", &Digest, Context::default())
        .unwrap();
    let report = out.report.unwrap();
    assert_eq!(report.kept.recent_turns, 3, "{report}");
    assert_eq!(report.kept.tool_pairs, 4);
    assert!(out.tokens.total() <= c.policy().budget());
    let reductions = c
        .take_events()
        .into_iter()
        .filter(|e| matches!(e, Event::PolicyReduced { .. }))
        .count();
    assert_eq!(reductions, 3, "6 -> 5 -> 4 -> 3");
    // Floor: turns reach 1 before pairs shrink, and (1, 1) still over is an error.
    let mut p = policy(1_000);
    p.max_summary_tokens = 50;
    p.hard_cap_buffer = 0;
    p.max_context_tokens = fixed + per_pair / 2;
    let mut c = Compactor::new("gpt-4o", p).unwrap();
    assert!(matches!(
        c.manual_compact(&h, "n", &Digest, Context::default()),
        Err(CompactError::InsufficientBudget { .. })
    ));
    let reduced: Vec<(usize, usize)> = c
        .take_events()
        .into_iter()
        .filter_map(|e| match e {
            Event::PolicyReduced {
                keep_recent_turns,
                keep_tool_io_pairs,
                ..
            } => Some((keep_recent_turns, keep_tool_io_pairs)),
            _ => None,
        })
        .collect();
    assert_eq!(reduced.first(), Some(&(5, 4)));
    assert_eq!(reduced.last(), Some(&(1, 1)));
    assert!(reduced.contains(&(1, 3)));
}

// --- Memory Layers ------------------------------------------------------

#[test]
fn three_layer_output_structure() {
    let h = conversation(20, 10);
    let mut c = Compactor::new("gpt-4o", Policy::default()).unwrap();
    let out = c
        .manual_compact(&h, "n", &Digest, Context::default())
        .unwrap();
    let roles: Vec<Role> = out.messages.iter().map(|m| m.role).collect();
    assert_eq!(
        &roles[..3],
        [Role::System, Role::Developer, Role::Assistant]
    );
    assert!(out.messages[2].text().starts_with("<COMPACT-SUMMARY v1>"));
    let layers = c.take_events().into_iter().find_map(|e| match e {
        Event::PrunedMessages { layers, .. } => Some(layers),
        _ => None,
    });
    let layers = layers.expect("a pruned_messages event");
    assert_eq!((layers.pinned, layers.summary, layers.recent), (2, 1, 12));
}

#[test]
fn rolling_session_summary_replacement() {
    let mut h = conversation(20, 10);
    let s = Scripted::new(vec![Ok("first facts".into()), Ok("second facts".into())]);
    let mut c = Compactor::new("gpt-4o", Policy::default()).unwrap();
    let once = c
        .manual_compact(&h, "1", &s, Context::default())
        .unwrap()
        .messages;
    h = once;
    h.extend(conversation(10, 10).into_iter().skip(2));
    let twice = c
        .manual_compact(&h, "2", &s, Context::default())
        .unwrap()
        .messages;
    let summaries: Vec<_> = twice.iter().filter_map(summary_version).collect();
    assert_eq!(summaries, [2], "exactly one summary, the next version");
    assert_eq!(
        s.asked.borrow()[1].3.as_deref(),
        Some("first facts"),
        "the previous summary is an input"
    );
}

// --- Failure Mode Handling ---------------------------------------------

#[test]
fn summarization_api_failure_fallback() {
    let h = conversation(20, 10);
    let s = Scripted::new(vec![Err(SummaryError::Failed("connection refused".into()))]);
    let mut c = Compactor::new("gpt-4o", Policy::default()).unwrap();
    let out = c.manual_compact(&h, "n", &s, Context::default()).unwrap();
    assert_eq!(out.messages.len(), 2 + 12, "pruned, no summary inserted");
    assert!(out.messages.iter().all(|m| summary_version(m).is_none()));
    let fallback = c.take_events().into_iter().find_map(|e| match e {
        Event::Error { fallback, .. } => Some(fallback),
        _ => None,
    });
    assert_eq!(fallback.as_deref(), Some("pruning-only"));
}

#[test]
fn summary_exceeds_budget_retry() {
    let h = conversation(20, 10);
    let long = "word ".repeat(5_000);
    let s = Scripted::new(vec![Ok(long.clone()), Ok(long.clone()), Ok("short".into())]);
    let mut c = Compactor::new("gpt-4o", Policy::default()).unwrap();
    let out = c.manual_compact(&h, "n", &s, Context::default()).unwrap();
    let asked: Vec<usize> = s.asked.borrow().iter().map(|a| a.1).collect();
    assert_eq!(asked, [1024, 512, 256]);
    assert_eq!(out.report.unwrap().summary.map(|s| s.0), Some(1));
    // Still too long after two retries: pruning only.
    let s = Scripted::new(vec![Ok(long.clone()), Ok(long.clone()), Ok(long)]);
    let out = c.manual_compact(&h, "n", &s, Context::default()).unwrap();
    assert_eq!(s.asked.borrow().len(), 3);
    assert!(out.messages.iter().all(|m| summary_version(m).is_none()));
}

#[test]
fn model_refusal_handling() {
    let h = conversation(20, 10);
    let s = Scripted::new(vec![
        Err(SummaryError::Refused("policy".into())),
        Ok("brief facts".into()),
    ]);
    let mut c = Compactor::new("gpt-4o", Policy::default()).unwrap();
    let out = c.manual_compact(&h, "n", &s, Context::default()).unwrap();
    let strategies: Vec<Strategy> = s.asked.borrow().iter().map(|a| a.0).collect();
    assert_eq!(strategies, [Strategy::TaskState, Strategy::Brief]);
    assert!(out.messages[2].text().contains("brief facts"));
    // Brief refused too: pruning only, every failure in the events.
    let s = Scripted::new(vec![
        Err(SummaryError::Refused("a".into())),
        Err(SummaryError::Refused("b".into())),
    ]);
    let out = c.manual_compact(&h, "n", &s, Context::default()).unwrap();
    assert!(out.messages.iter().all(|m| summary_version(m).is_none()));
    let errors = c
        .take_events()
        .into_iter()
        .filter(|e| matches!(e, Event::Error { .. }))
        .count();
    assert!(errors >= 2);
}

#[test]
fn a_failed_second_round_keeps_the_previous_summary() {
    let h = conversation(20, 10);
    let mut c = Compactor::new("gpt-4o", Policy::default()).unwrap();
    let mut once = c
        .manual_compact(&h, "1", &Digest, Context::default())
        .unwrap()
        .messages;
    once.extend(conversation(10, 10).into_iter().skip(2));
    let s = Scripted::new(vec![Err(SummaryError::Failed("down".into()))]);
    let twice = c
        .manual_compact(&once, "2", &s, Context::default())
        .unwrap()
        .messages;
    assert_eq!(
        twice.iter().filter_map(summary_version).collect::<Vec<_>>(),
        [1]
    );
}

// --- Integration shape: pre-flight is cheap and incremental ----------

#[test]
fn compaction_overhead_measurement() {
    let h = conversation(200, 200);
    let mut c = Compactor::new("gpt-4o", Policy::default()).unwrap();
    c.preflight(&h, &Digest).unwrap();
    let started = Instant::now();
    c.preflight(&h, &Digest).unwrap();
    // Generous for a debug build on a shared machine; the benchmark has
    // the real figure.
    assert!(started.elapsed().as_millis() < 500);
    let (hits, _) = c.counter().cache_stats();
    assert!(hits >= h.len() as u64);
}

// --- Seed 003: the sliding window --------------------------------------

fn numbered(n: usize) -> Vec<Message> {
    (0..n)
        .map(|i| {
            if i % 2 == 0 {
                Message::user(format!("m{i}"))
            } else {
                Message::assistant(format!("m{i}"))
            }
        })
        .collect()
}

fn texts(ms: &[Message]) -> Vec<String> {
    ms.iter().map(|m| m.text().to_string()).collect()
}

fn window(max: usize, first: usize, last: usize) -> Window {
    Window::new(
        WindowPolicy {
            max_messages: max,
            preserve_first_n: first,
            preserve_last_n: last,
            ..WindowPolicy::default()
        },
        "gpt-4o",
    )
}

#[test]
fn trim_returns_messages_unchanged_when_under_the_cap() {
    let h = numbered(10);
    let t = window(20, 1, 5).trim(&h).unwrap();
    assert_eq!(t.messages, h);
    assert!(t.evicted.is_empty());
}

#[test]
fn trim_preserves_first_n_and_last_n_messages() {
    let h = numbered(50);
    let t = window(10, 2, 4).trim(&h).unwrap();
    let got = texts(&t.messages);
    assert_eq!(&got[..2], ["m0", "m1"]);
    assert_eq!(&got[got.len() - 4..], ["m46", "m47", "m48", "m49"]);
    assert_eq!(t.messages.len(), 10);
}

#[test]
fn trim_evicts_oldest_middle_messages_first() {
    let h = numbered(30);
    let t = window(10, 1, 4).trim(&h).unwrap();
    assert_eq!(texts(&t.messages)[1..5], ["m21", "m22", "m23", "m24"]);
    assert_eq!(
        texts(&t.evicted),
        (1..21).map(|i| format!("m{i}")).collect::<Vec<_>>()
    );
}

#[test]
fn trim_handles_fewer_messages_than_preserve_settings() {
    let h = numbered(5);
    let mut w = window(4, 3, 3);
    let t = w.trim(&h).unwrap();
    // The cap holds: the head is kept whole, the tail gives way (it keeps
    // the last message).
    assert_eq!(texts(&t.messages), ["m0", "m1", "m2", "m4"]);
    assert!(t.warning.is_some(), "preserve settings exceed the maximum");
    // Said once, not at every trim.
    assert!(w.trim(&h).unwrap().warning.is_none());
    let events = w.take_events();
    assert!(events.iter().any(|e| e.name() == "window.warning"));
}

#[test]
fn trim_handles_exactly_at_the_cap() {
    let h = numbered(10);
    let t = window(10, 1, 3).trim(&h).unwrap();
    assert_eq!(t.messages, h);
    assert_eq!(t.metrics.evicted_messages, 0);
}

#[test]
fn trim_handles_an_empty_message_array() {
    let t = window(10, 1, 3).trim(&[]).unwrap();
    assert!(t.messages.is_empty());
    assert_eq!(t.metrics.total_messages, 0);
}

#[test]
fn estimate_tokens_is_reasonable_for_text_and_tool_messages() {
    let mut w = window(10, 1, 3);
    let text = w.estimate_tokens(&[Message::user("hello world")]);
    let call = w.estimate_tokens(&[
        Message::tool_call([("c1", "read_file", r#"{"path":"src/main.rs"}"#)]),
        Message::tool_result("c1", "fn main() {}"),
    ]);
    assert!((5..20).contains(&text), "{text}");
    assert!(call > text);
}

#[test]
fn metrics_are_correct_after_trimming() {
    let h = numbered(30);
    let mut w = window(10, 1, 4);
    let t = w.trim(&h).unwrap();
    assert_eq!(t.metrics.total_messages, 10);
    assert_eq!(t.metrics.evicted_messages, 20);
    assert_eq!(t.metrics.preserved_messages, 10);
    assert_eq!(t.metrics.estimated_tokens, w.estimate_tokens(&t.messages));
}

#[test]
fn config_defaults_are_applied_when_fields_are_omitted() {
    let p: WindowPolicy = serde_json::from_str("{}").unwrap();
    assert_eq!(p, WindowPolicy::default());
    assert_eq!(
        (p.max_messages, p.preserve_first_n, p.preserve_last_n),
        (100, 1, 20)
    );
    let p: WindowPolicy = serde_json::from_str(r#"{"max_messages": 0}"#).unwrap();
    let mut w = Window::new(p, "gpt-4o");
    assert_eq!(
        w.trim(&numbered(500)).unwrap().messages.len(),
        500,
        "0 turns the window off"
    );
}

#[test]
fn window_never_splits_a_tool_call_from_its_results() {
    let mut h = vec![Message::user("go")];
    for i in 0..20 {
        let (a, b) = (format!("a{i}"), format!("b{i}"));
        h.push(Message::tool_call([
            (a.as_str(), "f", "{}"),
            (b.as_str(), "g", "{}"),
        ]));
        h.push(Message::tool_result(a, "1"));
        h.push(Message::tool_result(b, "2"));
    }
    let t = window(10, 1, 4).trim(&h).unwrap();
    assert!(ptc_lisp::history::units(&t.messages).is_ok(), "no orphans");
    assert_ne!(t.messages[1].role, Role::Tool);
}

fn summarizing(max: usize, every: usize) -> Window {
    Window::new(
        WindowPolicy {
            max_messages: max,
            preserve_first_n: 1,
            preserve_last_n: 4,
            summarize_on_trim: true,
            summary_every_evicted: every,
        },
        "gpt-4o",
    )
}

#[test]
fn summary_replaces_evicted_messages_with_a_single_synthetic_message() {
    let h = numbered(40);
    let s = Scripted::ok("what happened");
    let t = summarizing(10, 10).trim_with(&h, &s).unwrap();
    assert_eq!(
        t.messages
            .iter()
            .filter(|m| summary_version(m).is_some())
            .count(),
        1
    );
    assert_eq!(s.asked.borrow()[0].2, t.evicted);
}

#[test]
fn summary_message_is_positioned_between_head_and_tail() {
    let h = numbered(40);
    let t = summarizing(10, 10)
        .trim_with(&h, &Scripted::ok("x"))
        .unwrap();
    assert_eq!(t.messages[0], h[0]);
    assert_eq!(summary_version(&t.messages[1]), Some(1));
    assert_eq!(t.messages.last(), h.last());
}

#[test]
fn summarization_failure_falls_back_to_plain_eviction() {
    let h = numbered(40);
    let s = Scripted::new(vec![Err(SummaryError::Failed("timeout".into()))]);
    let mut w = summarizing(10, 10);
    let t = w.trim_with(&h, &s).unwrap();
    assert!(t.summary.is_none());
    assert!(t.messages.iter().all(|m| summary_version(m).is_none()));
    assert!(!t.evicted.is_empty());
    assert!(w.take_events().iter().any(|e| e.name() == "compact.error"));
}

#[test]
fn summarization_is_skipped_when_evicted_messages_have_no_text() {
    let mut h = vec![Message::user("go")];
    for _ in 0..20 {
        h.push(Message::assistant("  "));
    }
    let s = Scripted::ok("never");
    let mut w = summarizing(6, 1);
    let t = w.trim_with(&h, &s).unwrap();
    assert!(!t.evicted.is_empty());
    assert!(s.asked.borrow().is_empty());
    assert!(w
        .take_events()
        .iter()
        .any(|e| e.name() == "window.summary_skipped"));
}

#[test]
fn rate_limiting_summarization_does_not_fire_on_every_small_trim() {
    let s = Scripted::ok("facts");
    let mut w = summarizing(10, 10);
    let mut h = numbered(12); // evicts 2
    let calls = Cell::new(0);
    for round in 0..6 {
        let t = w.trim_with(&h, &s).unwrap();
        if t.summary.is_some() {
            calls.set(calls.get() + 1);
        }
        h = t.messages;
        h.extend(numbered(2).into_iter().map(|mut m| {
            m.content = format!("r{round}").into();
            m
        }));
    }
    assert_eq!(s.asked.borrow().len(), calls.get());
    assert_eq!(
        calls.get(),
        1,
        "2 evicted per trim: one summary per 10 evicted"
    );
}

#[test]
fn summarization_prompt_receives_the_previous_summary() {
    let s = Scripted::new(vec![Ok("one".into()), Ok("two".into())]);
    let mut w = summarizing(10, 1);
    let t = w.trim_with(&numbered(30), &s).unwrap();
    let mut h = t.messages;
    h.extend(numbered(20));
    let t = w.trim_with(&h, &s).unwrap();
    assert_eq!(s.asked.borrow()[1].3.as_deref(), Some("one"));
    assert_eq!(
        t.messages
            .iter()
            .filter_map(summary_version)
            .collect::<Vec<_>>(),
        [2]
    );
}

#[test]
fn end_to_end_fifty_tool_calls_stay_within_bounds() {
    let mut w = Window::new(
        WindowPolicy {
            max_messages: 30,
            ..WindowPolicy::default()
        },
        "gpt-4o",
    );
    let mut h = vec![Message::system("agent"), Message::user("task")];
    for i in 0..50 {
        let id = format!("c{i}");
        h.push(Message::tool_call([(id.as_str(), "step", "{}")]));
        h.push(Message::tool_result(id, format!("r{i}")));
        h = w.trim(&h).unwrap().messages;
        assert!(h.len() <= 31, "{} messages", h.len());
        assert!(ptc_lisp::history::units(&h).is_ok());
    }
}

#[test]
fn insufficient_budget_names_the_newest_turn_when_it_alone_is_over() {
    let mut h = conversation(5, 10);
    h.push(Message::user("a huge paste ".repeat(3_000)));
    let mut c = Compactor::new("gpt-4o", policy(2_000)).unwrap();
    let err = c.preflight(&h, &Digest).unwrap_err();
    let CompactError::InsufficientBudget {
        newest_turn_tokens, ..
    } = err
    else {
        panic!("{err}")
    };
    assert!(newest_turn_tokens > 1_900);
    let text = err.to_string();
    assert!(
        text.contains(&format!(
            "the newest turn alone takes {newest_turn_tokens} tokens"
        )),
        "{text}"
    );
    assert!(!text.contains("unprotect"), "{text}");
}

/// Answers with exactly `request.max_tokens` tokens of text.
struct Exact;

impl Summarizer for Exact {
    fn name(&self) -> String {
        "exact".into()
    }

    fn summarize(&self, r: &SummaryRequest<'_>) -> Result<String, SummaryError> {
        let text = format!("fact{}", " fact".repeat(r.max_tokens.saturating_sub(1)));
        assert_eq!(r.model.count(&text), r.max_tokens);
        Ok(text)
    }
}

#[test]
fn the_budget_holds_to_the_token_with_the_summary_header_counted() {
    let h = conversation(30, 30);
    let mut summarized = 0;
    for max in (900..1_400).step_by(3) {
        for version in [0, 99] {
            let mut h = h.clone();
            if version > 0 {
                // A previous summary: the next header says v100.
                h.insert(2, ptc_lisp::history::summary_message(version, "old facts"));
            }
            let p = Policy {
                max_context_tokens: max,
                hard_cap_buffer: 0,
                max_summary_tokens: 60,
                keep_recent_turns: 3,
                ..Policy::default()
            };
            let mut c = Compactor::new("gpt-4o", p).unwrap();
            let out = c
                .manual_compact(&h, "n", &Exact, Context::default())
                .unwrap();
            let total = TokenCounter::new("gpt-4o").count(&out.messages).total();
            assert_eq!(total, out.tokens.total());
            assert!(total <= max, "{total} > {max} (v{})", version + 1);
            if let Some((_, body)) = out.report.unwrap().summary {
                // The body is the full cap; the header comes on top.
                assert_eq!(body, 60);
                summarized += 1;
            }
        }
    }
    assert!(summarized > 300, "{summarized} rounds with a summary");
}

/// Issue 38: a kept turn keeps its tool exchanges (the edit an assistant
/// describes stays with the description), beyond `keep_tool_io_pairs`.
#[test]
fn kept_turns_keep_their_tool_exchanges() {
    let mut history = vec![Message::system("You are a coding agent.")];
    for i in 0..30 {
        history.push(Message::user(format!(
            "turn {i}: fix the unwrap in src/m{i}.rs"
        )));
        for j in 0..3 {
            let id = format!("c{i}_{j}");
            let args = format!(r#"{{"path":"src/m{i}.rs","step":{j}}}"#);
            history.push(Message::tool_call([(
                id.as_str(),
                "edit_file",
                args.as_str(),
            )]));
            history.push(Message::tool_result(id, "ok ".repeat(20)));
        }
        history.push(Message::assistant(format!("Replaced the unwrap in m{i}.")));
    }
    let policy = Policy {
        max_context_tokens: 8_000,
        hard_cap_buffer: 500,
        keep_recent_turns: 3,
        keep_tool_io_pairs: 1,
        max_summary_tokens: 400,
        ..Policy::default()
    };
    let mut compactor = Compactor::new("gpt-4o", policy).unwrap();
    let out = compactor
        .manual_compact(&history, "test", &Digest, Context::default())
        .unwrap();
    assert!(out.report.is_some());
    let text: Vec<String> = out
        .messages
        .iter()
        .flat_map(|m| {
            let mut t = vec![m.text().to_string()];
            t.extend(m.tool_call_summaries().into_iter().map(|c| c.arguments));
            t
        })
        .collect();
    for i in 27..30 {
        assert!(text
            .iter()
            .any(|t| t == &format!("Replaced the unwrap in m{i}.")));
        for j in 0..3 {
            let args = format!(r#"{{"path":"src/m{i}.rs","step":{j}}}"#);
            assert!(text.contains(&args), "turn {i} lost its edit {j}");
        }
    }
}

/// Issue 38: on a threshold compaction, recent whole turns fill the prompt
/// up to `target_after_compaction` of the budget (more than
/// `keep_recent_turns` when they fit), and never beyond it.
#[test]
fn compaction_fills_up_to_the_target() {
    let mut history = vec![Message::system("You are a coding agent.")];
    for i in 0..200 {
        history.push(Message::user(format!("step {i}: look at src/file_{i}.rs")));
        history.push(Message::assistant(
            "It parses the configuration. ".repeat(6),
        ));
    }
    for target in [0.3, 0.5, 0.8] {
        let policy = Policy {
            max_context_tokens: 10_000,
            hard_cap_buffer: 1_000,
            keep_recent_turns: 2,
            max_summary_tokens: 300,
            target_after_compaction: target,
            ..Policy::default()
        };
        let budget = policy.budget();
        let mut compactor = Compactor::new("gpt-4o", policy.clone()).unwrap();
        let out = compactor.preflight(&history, &Digest).unwrap();
        let report = out.report.expect("compacted");
        let after = out.tokens.total();
        let goal = (budget as f64 * target) as usize;
        assert!(report.kept.recent_turns > 2, "{target}: {report}");
        // Within the target, and the next turn would not have fit.
        assert!(after <= goal, "{target}: {after} > {goal}");
        assert!(after + 120 > goal, "{target}: {after} far below {goal}");
    }
    let bad = Policy {
        target_after_compaction: 0.0,
        ..Policy::default()
    };
    assert!(bad
        .validate("policy")
        .unwrap_err()
        .to_string()
        .starts_with("policy.target_after_compaction"));
}

/// Issue 38: when the budget cannot hold a summary of the default size,
/// a smaller one is written rather than none.
#[test]
fn a_tight_budget_gets_a_smaller_summary_not_none() {
    let mut history = vec![Message::system("s")];
    for i in 0..20 {
        history.push(Message::user(format!("Please review src/part_{i}.rs")));
        history.push(Message::assistant("Reviewed. ".repeat(10)));
    }
    history.push(Message::user("Final: summarize everything. ".repeat(40)));
    let policy = Policy {
        max_context_tokens: 700,
        hard_cap_buffer: 100,
        keep_recent_turns: 1,
        keep_tool_io_pairs: 1,
        max_summary_tokens: 512,
        ..Policy::default()
    };
    let mut compactor = Compactor::new("gpt-4o", policy.clone()).unwrap();
    let out = compactor
        .manual_compact(&history, "tight", &Digest, Context::default())
        .unwrap();
    let report = out.report.expect("compacted");
    let (_, tokens) = report.summary.expect("a summary is written");
    assert!(tokens < 512, "{report}");
    assert!(out.tokens.total() <= policy.budget(), "{report}");
    assert!(
        report
            .fallbacks
            .iter()
            .any(|f| f.starts_with("smaller summary")),
        "{report}"
    );
    assert!(out.messages[1]
        .text()
        .contains("Please review src/part_0.rs"));
}

/// Issue 38: a manual compaction that would not lower the token count
/// says so and leaves the history as it was.
#[test]
fn a_manual_compaction_never_grows_the_history() {
    let mut history = vec![Message::system("s")];
    for i in 0..8 {
        history.push(Message::user(format!("q{i}")));
        history.push(Message::assistant("ok"));
    }
    let mut compactor = Compactor::new("gpt-4o", Policy::default()).unwrap();
    let before = compactor.counter_mut().count(&history).total();
    let out = compactor
        .manual_compact(&history, "now", &Digest, Context::default())
        .unwrap();
    assert!(out.report.is_none());
    assert_eq!(out.messages, history);
    assert_eq!(out.tokens.total(), before);
    let events = compactor.take_events();
    assert!(
        events.iter().any(|e| matches!(e,
            Event::TriggerDecision { triggered: false, reason, .. }
                if reason.contains("would not lower the token count"))),
        "{events:?}"
    );
    assert!(!events.iter().any(|e| matches!(
        e,
        Event::SummaryCreated { .. } | Event::PrunedMessages { .. }
    )));
}
