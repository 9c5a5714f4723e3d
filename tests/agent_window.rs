//! Seed 003's sliding window in the agent loop (`ptc agent
//! --window-max-messages`, `HistorySettings::with_window`) and in `ptc
//! compact`: every request within the cap, the system prompt and the
//! mission (and any developer, system or protected message) never
//! evicted, the evicted messages optionally summarized, the metrics in
//! the run result and `--json`, the warning at 80% of the cap, and the
//! report in the order things happened.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value as Json};

use ptc_lisp::agent::transcript::read_transcript;
use ptc_lisp::agent::{
    Agent, AgentConfig, ConversationMetrics, HistorySettings, Progress, ScriptedProvider,
};
use ptc_lisp::history::{summary_version, Message, Policy, Role, Trim, WindowPolicy};

use crate::util::{text, TempDir};

fn temp_dir(name: &str) -> TempDir {
    crate::util::temp_dir(&format!("window-{name}"))
}

/// `turns - 1` replies that define and print, then a return.
fn replies(turns: usize) -> Vec<String> {
    let mut out: Vec<String> = (1..turns)
        .map(|i| format!("```clojure\n(def x{i} {i})\n(println \"step {i}\")\n```"))
        .collect();
    out.push("```clojure\n(return (+ x1 x2))\n```".to_string());
    out
}

/// `ptc ARGS` run in `dir`.
fn ptc_in(dir: &Path, args: &[String]) -> Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Command::new(env!("CARGO_BIN_EXE_ptc"))
        .args(crate::util::relaxed_args(&args))
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("ptc runs")
}

/// `ptc agent` on [`replies`] for `turns` turns, with its transcript in
/// `dir`.
fn ptc_agent(dir: &Path, turns: usize, extra: &[&str]) -> Output {
    let script = dir.join("replies.json");
    std::fs::write(&script, serde_json::to_string(&replies(turns)).unwrap()).unwrap();
    let mut args: Vec<String> = ["agent", "--mission", "Add up the steps", "--llm"]
        .map(String::from)
        .to_vec();
    args.push(format!("script:{}", script.display()));
    args.extend([
        "--max-turns".into(),
        turns.to_string(),
        "--transcript".into(),
    ]);
    args.push(dir.join("transcript.jsonl").display().to_string());
    args.extend(extra.iter().map(|a| a.to_string()));
    ptc_in(dir, &args)
}

#[test]
fn agent_window_keeps_every_request_under_the_cap() {
    let dir = temp_dir("cap");
    let out = ptc_agent(
        &dir,
        14,
        &["--window-max-messages", "8", "--window-last", "4"],
    );
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(text(&out.stdout).trim(), "3");
    let entries = read_transcript(&dir.join("transcript.jsonl")).unwrap();
    assert_eq!(entries.len(), 14);
    for (i, entry) in entries.iter().enumerate() {
        let messages = &entry.messages;
        assert!(
            messages.len() <= 8,
            "request {} has {} messages",
            i + 1,
            messages.len()
        );
        assert_eq!(messages[0].role, ptc_lisp::agent::Role::System);
        assert!(messages[1].content.starts_with("Add up the steps"));
    }
    // The whole prompt until it reaches the cap, then the newest turns.
    assert_eq!(entries[3].messages.len(), 8);
    let last = &entries[13].messages;
    assert_eq!(last.len(), 8);
    let sent: String = last.iter().map(|m| m.content.as_str()).collect();
    assert!(sent.contains("(def x13 13)"));
    assert!(!sent.contains("(def x1 1)"), "the oldest turns are evicted");

    // The progress: a line per request with its size, a line per trim,
    // the warning at 80% of the cap once.
    assert_eq!(err.matches("conversation: ").count(), 14, "{err}");
    assert!(err.contains("  conversation: 8 messages (~"), "{err}");
    assert_eq!(
        err.matches("warning: conversation approaching limit (8/8 messages)")
            .count(),
        1,
        "{err}"
    );
    assert_eq!(
        err.matches("  window: 2 messages evicted, 8 kept").count(),
        10
    );
    assert!(err.contains("the window evicted 20 message(s)"), "{err}");
    // In the order things happened: the warning comes with turn 4.
    let turn4 = err.find("turn 4/14").unwrap();
    let turn5 = err.find("turn 5/14").unwrap();
    let warning = err.find("approaching limit").unwrap();
    assert!(turn4 < warning && warning < turn5, "{err}");
    let trimmed = err[turn5..].find("window: 2 messages evicted").unwrap();
    let size = err[turn5..].find("conversation: 8 messages").unwrap();
    assert!(trimmed < size, "{err}");
}

#[test]
fn agent_window_metrics_are_in_the_json_report() {
    let dir = temp_dir("json");
    let out = ptc_agent(&dir, 10, &["--window-max-messages", "8", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Json = serde_json::from_slice(&out.stdout).unwrap();
    let c = &report["conversation"];
    assert_eq!(c["max_messages"], 8);
    assert_eq!(c["message_count"], 8);
    assert_eq!(c["evicted_messages"], 12, "2 per turn from turn 5 to 10");
    assert!(c["estimated_tokens"].as_u64().unwrap() > 100);

    let out = ptc_agent(&dir, 3, &["--json"]);
    let report: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["conversation"]["max_messages"], 0);
    assert_eq!(report["conversation"]["message_count"], 6);
    let out = ptc_agent(&dir, 3, &["--json", "--no-compaction"]);
    let report: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["conversation"], Json::Null);
}

#[test]
fn agent_window_can_summarize_what_it_evicts_within_the_cap() {
    let dir = temp_dir("summarize");
    let out = ptc_agent(
        &dir,
        14,
        &[
            "--window-max-messages",
            "8",
            "--window-last",
            "3",
            "--window-summarize",
        ],
    );
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    let entries = read_transcript(&dir.join("transcript.jsonl")).unwrap();
    assert!(entries.iter().all(|e| e.messages.len() <= 8), "{err}");
    let summarized: Vec<usize> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| {
            e.messages
                .iter()
                .any(|m| m.content.starts_with("<COMPACT-SUMMARY v"))
        })
        .map(|(i, _)| i)
        .collect();
    assert!(!summarized.is_empty(), "{err}");
    // Once written, the summary stays (right after the mission) in every
    // later request.
    let first = summarized[0];
    assert_eq!(summarized, (first..14).collect::<Vec<_>>());
    for e in &entries[first..] {
        assert!(e.messages[2].content.starts_with("<COMPACT-SUMMARY v"));
    }
    assert!(err.contains("evicted messages summarized (v1)"), "{err}");
}

#[test]
fn no_compaction_and_the_window_flag_conflict() {
    let dir = temp_dir("conflict");
    let out = ptc_agent(&dir, 2, &["--window-max-messages", "8", "--no-compaction"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot be used with"));
}

/// Records the history layer's notices in order.
#[derive(Clone, Default)]
struct Notes(Arc<Mutex<Vec<String>>>);

impl Progress for Notes {
    fn turn_started(&mut self, turn: usize, _max: usize) {
        self.0.lock().unwrap().push(format!("turn {turn}"));
    }
    fn history_trimmed(&mut self, _turn: usize, trim: &Trim) {
        self.0
            .lock()
            .unwrap()
            .push(format!("trimmed {}", trim.metrics.evicted_messages));
    }
    fn history_warning(&mut self, _turn: usize, warning: &str) {
        self.0.lock().unwrap().push(format!("warning {warning}"));
    }
    fn conversation(&mut self, _turn: usize, m: &ConversationMetrics) {
        self.0
            .lock()
            .unwrap()
            .push(format!("conversation {}", m.message_count));
    }
}

#[test]
fn the_embedding_api_gets_the_window_too() {
    let model = Arc::new(ScriptedProvider::new(replies(9)));
    let settings = HistorySettings::new(Policy::default()).with_window(WindowPolicy {
        max_messages: 6,
        preserve_first_n: 1,
        preserve_last_n: 2,
        ..WindowPolicy::default()
    });
    let config = AgentConfig::new("Add up the steps")
        .with_max_turns(9)
        .with_history(settings);
    let notes = Notes::default();
    let mut agent = Agent::new(model.clone(), crate::util::session(), config)
        .unwrap()
        .with_progress(notes.clone());
    let run = agent.run();
    assert!(run.succeeded(), "{:?}", run.outcome);
    for r in model.requests() {
        assert!(r.messages.len() <= 6, "{}", r.messages.len());
        assert!(r.messages[1].content.starts_with("Add up the steps"));
    }
    let c = run.conversation.unwrap();
    assert_eq!((c.max_messages, c.message_count), (6, 6));
    assert_eq!(c.evicted_messages, 2 * 6, "turns 4 to 9 each evict 2");
    assert!(run
        .history_events
        .iter()
        .any(|e| e.name() == "window.trimmed"));
    let notes = notes.0.lock().unwrap().clone();
    let turn4 = notes.iter().position(|n| n == "turn 4").unwrap();
    assert_eq!(
        notes[turn4..turn4 + 3],
        ["turn 4", "trimmed 2", "conversation 6"]
    );
    assert_eq!(
        notes
            .iter()
            .filter(|n| n.starts_with("warning conversation approaching limit"))
            .count(),
        1
    );
}

fn compact_file(dir: &Path, lines: &[Json], extra: &[&str]) -> Output {
    let input = dir.join("in.jsonl");
    let text: Vec<String> = lines.iter().map(Json::to_string).collect();
    std::fs::write(&input, text.join("\n") + "\n").unwrap();
    let mut args = vec!["compact".to_string(), input.display().to_string()];
    args.extend(extra.iter().map(|a| a.to_string()));
    ptc_in(dir, &args)
}

#[test]
fn the_window_never_drops_a_developer_system_or_protected_message() {
    let dir = temp_dir("developer");
    let mut lines = vec![
        json!({"role": "system", "content": "You are a coding agent."}),
        json!({"role": "developer", "content": "Never push to main."}),
    ];
    for i in 0..60 {
        lines.push(json!({"role": "user", "content": format!("u{i}")}));
        if i == 10 {
            lines.push(json!({"role": "system", "content": "Mid-run rule."}));
            lines.push(json!({"role": "user", "content": "keep me", "meta": {"protected": true}}));
        }
        lines.push(json!({"role": "assistant", "content": format!("a{i}")}));
    }
    let out = compact_file(&dir, &lines, &["--window-max-messages", "50"]);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    let kept = ptc_lisp::history::parse_jsonl(&text(&out.stdout)).unwrap();
    assert_eq!(kept.len(), 50, "{err}");
    assert_eq!(kept[1].role, Role::Developer);
    assert_eq!(kept[1].text(), "Never push to main.");
    assert!(kept.iter().any(|m| m.text() == "Mid-run rule."));
    assert!(kept
        .iter()
        .any(|m| m.text() == "keep me" && m.is_protected()));
    assert_eq!(kept.last().unwrap().text(), "a59");
    // The report in the order things happened: the input, the window,
    // then the budget.
    let before = err.find("before: 124 messages").unwrap();
    let window = err
        .find("window: evicted 74 of 124 messages (max 50); 50 left")
        .unwrap();
    let budget = err.find("not compacted:").unwrap();
    assert!(before < window && window < budget, "{err}");
}

#[test]
fn a_window_summary_counts_towards_the_cap() {
    let mut history = vec![Message::system("s")];
    for i in 0..40 {
        history.push(Message::user(format!("u{i}")));
        history.push(Message::assistant(format!("a{i}")));
    }
    let mut window = ptc_lisp::history::Window::new(
        WindowPolicy {
            max_messages: 10,
            preserve_first_n: 1,
            preserve_last_n: 4,
            summarize_on_trim: true,
            summary_every_evicted: 1,
        },
        "gpt-4o",
    );
    let trim = window
        .trim_with(&history, &ptc_lisp::history::Digest)
        .unwrap();
    assert_eq!(trim.messages.len(), 10);
    assert_eq!(summary_version(&trim.messages[1]), Some(1));
    // Trimmed again as the conversation grows: still 10, one summary.
    let mut next = trim.messages.clone();
    next.push(Message::user("u40"));
    next.push(Message::assistant("a40"));
    let again = window.trim_with(&next, &ptc_lisp::history::Digest).unwrap();
    assert_eq!(again.messages.len(), 10);
    assert_eq!(
        again
            .messages
            .iter()
            .filter(|m| summary_version(m).is_some())
            .count(),
        1
    );
}
