//! The history layer as users meet it: `ptc compact` on history files
//! (good and bad), and compaction inside the agent loop, through the
//! library and through `ptc agent` with a scripted model.

use crate::util::{ptc, text};
use std::sync::Arc;

use ptc_lisp::agent::{Agent, AgentConfig, HistorySettings, ScriptedProvider};
use ptc_lisp::history::{parse_jsonl, summary_version, Message, Policy, Role, TokenCounter};
use ptc_lisp::session::Session;

/// A coding session: system, protected developer note, 40 turns each
/// with a user request, two tool calls with results and an answer.
fn session_jsonl() -> String {
    let mut lines = vec![
        r#"{"role":"system","content":"You are a coding agent for acme/api."}"#.to_string(),
        r#"{"role":"developer","content":"Never push to main.","meta":{"protected":true}}"#
            .to_string(),
    ];
    let files = ["src/server.rs", "src/db/pool.rs", "tests/users.rs"];
    for t in 0..40 {
        let f = files[t % 3];
        lines.push(format!(
            r#"{{"role":"user","content":"Step {t}: look at issue #{t} in {f}. {}"}}"#,
            "More detail. ".repeat(30)
        ));
        for k in 0..2 {
            let id = format!("call_{t}_{k}");
            let unreadable = t == 3 && k == 0;
            let f = if unreadable {
                "/etc/acme/secrets.toml"
            } else {
                f
            };
            lines.push(format!(
                r#"{{"role":"assistant","content":null,"tool_calls":[{{"id":"{id}","type":"function","function":{{"name":"read_file","arguments":"{{\"path\":\"{f}\"}}"}}}}]}}"#
            ));
            let result = if unreadable {
                "error: permission denied: /etc/acme/secrets.toml".to_string()
            } else {
                "fn handler() {} ".repeat(40)
            };
            lines.push(format!(
                r#"{{"role":"tool","tool_call_id":"{id}","content":"{result}","x_vendor":7}}"#
            ));
        }
        lines.push(format!(
            r#"{{"role":"assistant","content":"Issue #{t} needs a fix in {f}."}}"#
        ));
    }
    lines.join("\n") + "\n"
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ptc-history-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn compact_cli_compacts_a_real_looking_history() {
    let dir = temp_dir("ok");
    let input = dir.join("session.jsonl");
    std::fs::write(&input, session_jsonl()).unwrap();
    let output = dir.join("out.jsonl");
    let out = ptc(
        &[
            "compact",
            input.to_str().unwrap(),
            "-o",
            output.to_str().unwrap(),
            "--max-context-tokens",
            "16000",
        ],
        None,
    );
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(out.stdout.is_empty());
    assert!(err.contains("before: 242 messages"), "{err}");
    assert!(err.contains("after:"), "{err}");
    assert!(
        err.contains("summary: <COMPACT-SUMMARY v1> by digest"),
        "{err}"
    );
    let messages = parse_jsonl(&std::fs::read_to_string(&output).unwrap()).unwrap();
    assert_eq!(messages[0].role, Role::System);
    assert!(messages[1].is_protected());
    assert_eq!(summary_version(&messages[2]), Some(1));
    let summary = messages[2].text();
    for fact in [
        "src/server.rs",
        "src/db/pool.rs",
        "tests/users.rs",
        "permission denied",
    ] {
        assert!(summary.contains(fact), "{fact} missing:\n{summary}");
    }
    let tokens = TokenCounter::new("gpt-4o").count(&messages).total();
    assert!(tokens <= 16_000 - 1_500, "{tokens}");
    // Unknown fields of kept messages are written back.
    assert!(std::fs::read_to_string(&output)
        .unwrap()
        .contains(r#""x_vendor":7"#));
}

#[test]
fn compact_cli_reads_stdin_and_writes_stdout() {
    let out = ptc(
        &["compact", "-", "--manual", "user-requested"],
        Some(&session_jsonl()),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let messages = parse_jsonl(&text(&out.stdout)).unwrap();
    assert!(messages.len() < 242);
    assert!(messages[2].text().contains("user-requested"));
}

#[test]
fn compact_cli_leaves_a_small_history_alone() {
    let input =
        "{\"role\":\"user\",\"content\":\"hi\"}\n{\"role\":\"assistant\",\"content\":\"hello\"}\n";
    let out = ptc(&["compact", "-"], Some(input));
    assert!(out.status.success());
    assert_eq!(text(&out.stdout), input);
    assert!(
        text(&out.stderr).contains("not compacted: "),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn compact_cli_names_the_line_and_field_of_bad_input() {
    let dir = temp_dir("bad");
    let output = dir.join("never.jsonl");
    let cases = [
        ("{\"role\":\"user\",\"content\":\"a\"}\n{oops\n", "line 2: invalid JSON"),
        ("{\"role\":\"robot\",\"content\":\"a\"}\n", "line 1: field `role`: unknown role \"robot\""),
        (
            "{\"role\":\"user\",\"content\":\"a\"}\n\n{\"role\":\"tool\",\"tool_call_id\":\"c9\",\"content\":\"x\"}\n",
            "line 3: a tool result without its call",
        ),
        ("{\"role\":\"user\",\"content\":{\"a\":1}}\n", "line 1: field `content`"),
    ];
    for (input, expected) in cases {
        let out = ptc(
            &["compact", "-", "-o", output.to_str().unwrap()],
            Some(input),
        );
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(expected), "expected {expected:?} in {err}");
        assert!(!output.exists(), "no output file on bad input");
    }
    let out = ptc(&["compact", "-", "--trigger-pct", "1.5"], Some(""));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr)
            .contains("policy.trigger_pct = 1.5 (from --trigger-pct) must be between 0.0 and 1.0"),
        "{}",
        text(&out.stderr)
    );
    let out = ptc(&["compact", "/no/such/file.jsonl"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot read `/no/such/file.jsonl`"));
    let out = ptc(&["compact", "-", "--summary", "llm"], Some(""));
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--summary llm needs --llm"));
}

#[test]
fn compact_cli_reports_insufficient_budget() {
    let input = format!(
        "{{\"role\":\"system\",\"content\":\"{}\"}}\n{{\"role\":\"user\",\"content\":\"hi\"}}\n",
        "rule ".repeat(3_000)
    );
    let out = ptc(
        &[
            "compact",
            "-",
            "--max-context-tokens",
            "2000",
            "--hard-cap-buffer",
            "100",
            "--max-summary-tokens",
            "100",
        ],
        Some(&input),
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("insufficient budget: protected content takes"),
        "{err}"
    );
    assert!(err.contains("raise max_context_tokens"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn compact_cli_applies_the_window_first() {
    let out = ptc(
        &[
            "compact",
            "-",
            "--window-max-messages",
            "30",
            "--window-last",
            "10",
        ],
        Some(&session_jsonl()),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let messages = parse_jsonl(&text(&out.stdout)).unwrap();
    assert!(messages.len() <= 31, "{}", messages.len());
    assert!(text(&out.stderr).contains("window: evicted"));
}

// --- The agent loop ------------------------------------------------------

/// A program whose output makes each turn's feedback about 600 tokens.
fn chatty_program(i: usize) -> String {
    format!("```clojure\n(def step{i} {i})\n(println (apply str (repeat 150 \"data{i} \")))\n```")
}

#[test]
fn synthetic_long_session_test() {
    // 3x a 6,000-token window over the run: 30 turns of ~600 tokens.
    let turns = 30;
    let mut replies: Vec<String> = (0..turns - 1).map(chatty_program).collect();
    replies.push("```clojure\n(return {:done step3})\n```".into());
    let provider = Arc::new(ScriptedProvider::new(replies));
    let policy = Policy {
        max_context_tokens: 6_000,
        hard_cap_buffer: 500,
        keep_recent_turns: 4,
        max_summary_tokens: 600,
        ..Policy::default()
    };
    let mut settings = HistorySettings::new(policy.clone());
    settings.counting_model = Some("gpt-4o".into());
    let config = AgentConfig::new("Walk through the data, then return {:done step3}.")
        .with_max_turns(turns)
        .with_history(settings);
    let mut agent = Agent::new(provider.clone(), Session::new(), config).unwrap();
    let run = agent.run();
    assert!(run.succeeded(), "{:?}", run.outcome);
    assert!(
        run.compactions.len() >= 3,
        "{} compactions",
        run.compactions.len()
    );
    let mut counter = TokenCounter::new("gpt-4o");
    let mut total_sent = 0;
    for request in provider.requests() {
        let messages: Vec<Message> = request.messages.into_iter().map(Message::from).collect();
        let tokens = counter.count(&messages).total();
        total_sent += tokens;
        assert!(tokens <= policy.budget(), "{tokens} > {}", policy.budget());
        assert_eq!(messages[0].role, Role::System);
        assert!(
            messages[1].text().starts_with("Walk through the data"),
            "the mission is protected"
        );
        assert!(
            messages
                .iter()
                .filter(|m| summary_version(m).is_some())
                .count()
                <= 1
        );
    }
    assert!(
        total_sent > 3 * 6_000,
        "the session really was 3x the window"
    );
    // The digest keeps the interpreter's state: definitions with their types.
    let last = provider.requests().pop().unwrap();
    let summary = last
        .messages
        .iter()
        .find(|m| m.content.starts_with("<COMPACT-SUMMARY v"))
        .unwrap();
    assert!(
        summary.content.contains("defined step0 : int"),
        "{}",
        summary.content
    );
    assert!(run
        .history_events
        .iter()
        .any(|e| e.name() == "compact.summary_created"));
}

#[test]
fn agent_cli_prints_one_line_per_compaction() {
    let dir = temp_dir("agent");
    let script = dir.join("replies.json");
    let mut replies: Vec<String> = (0..11).map(chatty_program).collect();
    replies.push("```clojure\n(return step2)\n```".into());
    std::fs::write(&script, serde_json::to_string(&replies).unwrap()).unwrap();
    let out = ptc(
        &[
            "agent",
            "--mission",
            "Walk through the data",
            "--llm",
            &format!("script:{}", script.display()),
            "--max-turns",
            "12",
            "--max-context-tokens",
            "5000",
            "--hard-cap-buffer",
            "500",
            "--keep-recent-turns",
            "3",
            "--max-summary-tokens",
            "500",
        ],
        None,
    );
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(text(&out.stdout).trim(), "2");
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("compacted: ")).collect();
    assert!(!lines.is_empty(), "{err}");
    assert!(
        lines[0].contains(" -> ") && lines[0].contains("tokens") && lines[0].contains("summary v1"),
        "{}",
        lines[0]
    );
    let out = ptc(
        &[
            "agent",
            "--mission",
            "x",
            "--llm",
            &format!("script:{}", script.display()),
            "--trigger-pct",
            "0",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("policy.trigger_pct = 0 (from --trigger-pct) must be"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn with_compression_the_compressed_prompt_is_counted() {
    let provider = Arc::new(ScriptedProvider::new(vec![
        "```clojure\n(def a 1)\n```".into(),
        "```clojure\n(return a)\n```".into(),
    ]));
    let mut settings = HistorySettings::new(Policy::default());
    settings.counting_model = Some("gpt-4o".into());
    let config = AgentConfig::new("Return a.")
        .with_max_turns(3)
        .with_compression(true)
        .with_history(settings);
    let mut agent = Agent::new(provider.clone(), Session::new(), config).unwrap();
    let run = agent.run();
    assert!(run.succeeded());
    let estimates: Vec<usize> = run
        .history_events
        .iter()
        .filter_map(|e| match e {
            ptc_lisp::history::Event::TokenEstimate { t_est, .. } => Some(*t_est),
            _ => None,
        })
        .collect();
    let mut counter = TokenCounter::new("gpt-4o");
    let sent: Vec<usize> = provider
        .requests()
        .into_iter()
        .map(|r| {
            assert_eq!(
                r.messages.len(),
                2,
                "system and one compressed user message"
            );
            let messages: Vec<Message> = r.messages.into_iter().map(Message::from).collect();
            counter.count(&messages).total()
        })
        .collect();
    assert_eq!(estimates, sent);
}

/// Issue 38: `ptc compact --manual` that would not lower the token count
/// says so and writes the history unchanged.
#[test]
fn compact_cli_manual_never_grows_the_history() {
    let mut input = String::from("{\"role\":\"system\",\"content\":\"s\"}\n");
    for i in 0..8 {
        input.push_str(&format!(
            "{{\"role\":\"user\",\"content\":\"q{i}\"}}\n{{\"role\":\"assistant\",\"content\":\"ok\"}}\n"
        ));
    }
    let out = ptc(&["compact", "-", "--manual", "now"], Some(&input));
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(text(&out.stdout), input);
    assert!(
        err.contains("not compacted: manual: compacting would not lower the token count"),
        "{err}"
    );
}
