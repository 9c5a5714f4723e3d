//! The history layer as users meet it: `ptc compact` on history files
//! (good and bad), and compaction inside the agent loop, through the
//! library and through `ptc agent` with a scripted model.

use crate::util::{ptc, text};
use std::sync::Arc;

use ptc_lisp::agent::{Agent, AgentConfig, HistorySettings, ScriptedProvider};
use ptc_lisp::history::{parse_jsonl, summary_version, Message, Policy, Role, TokenCounter};

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
    let mut agent = Agent::new(provider.clone(), crate::util::session(), config).unwrap();
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
    let mut agent = Agent::new(provider.clone(), crate::util::session(), config).unwrap();
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

/// The header of a 1024x1024 PNG, as a data URL.
const PNG_1024: &str = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAABAAAAAQACAIAAAA=";

#[test]
fn compact_cli_keeps_content_parts_blocks_and_absent_content_verbatim() {
    let input = [
        r#"{"role":"system","content":"You read images."}"#.to_string(),
        r#"{"role":"user"}"#.to_string(),
        format!(
            r#"{{"role":"user","content":[{{"type":"text","text":"what is this?"}},{{"type":"image_url","image_url":{{"url":"{PNG_1024}","detail":"high"}}}},{{"type":"input_audio","input_audio":{{"data":"AAAA","format":"wav"}}}},{{"type":"file","file":{{"file_id":"file-1"}}}}]}}"#
        ),
        r#"{"role":"assistant","content":[{"type":"refusal","refusal":"no"}]}"#.to_string(),
        r#"{"role":"assistant","content":[{"type":"thinking","thinking":"look","signature":"s"},{"type":"tool_use","id":"toolu_1","name":"read","input":{"path":"a"}}]}"#.to_string(),
        r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"fn a() {}"}]},{"type":"image","source":{"type":"url","url":"https://x/y.png"}}]}"#.to_string(),
        r#"{"role":"assistant","content":null}"#.to_string(),
    ]
    .join("\n")
        + "\n";
    let out = ptc(&["compact", "-"], Some(&input));
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(text(&out.stdout), input, "written back as read");
    // The 1024x1024 high-detail image costs 765 tokens and the URL image
    // of unknown size 1445 (the tile formula's maximum), so the history
    // is over 2,210 tokens, and the count agrees with the library's.
    let messages = parse_jsonl(&input).unwrap();
    let total = TokenCounter::new("gpt-4o").count(&messages).total();
    assert!(total > 765 + 1445, "{total}");
    assert!(
        err.contains(&format!("7 messages, {total} tokens")),
        "{err}"
    );
}

#[test]
fn compact_cli_never_separates_anthropic_tool_use_from_its_result() {
    let mut lines = vec![r#"{"role":"system","content":"s"}"#.to_string()];
    for t in 0..30 {
        lines.push(format!(
            r#"{{"role":"user","content":"step {t} {}"}}"#,
            "word ".repeat(40)
        ));
        lines.push(format!(r#"{{"role":"assistant","content":[{{"type":"tool_use","id":"tu{t}","name":"read","input":{{"n":{t}}}}}]}}"#));
        lines.push(format!(r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"tu{t}","content":"{}"}}]}}"#, "data ".repeat(60)));
    }
    let input = lines.join("\n") + "\n";
    for args in [
        &[
            "compact",
            "-",
            "--manual",
            "now",
            "--max-context-tokens",
            "3000",
        ][..],
        &[
            "compact",
            "-",
            "--window-max-messages",
            "20",
            "--window-last",
            "7",
        ][..],
    ] {
        let out = ptc(args, Some(&input));
        assert!(out.status.success(), "{}", text(&out.stderr));
        let messages = parse_jsonl(&text(&out.stdout)).unwrap();
        assert!(messages.len() < 91, "{args:?}");
        ptc_lisp::history::units(&messages).expect("every tool_use keeps its tool_result");
        for (i, m) in messages.iter().enumerate() {
            if m.calls_tools() {
                let ids: Vec<&str> = m.tool_call_ids().collect();
                let results: Vec<&str> = messages[i + 1].tool_result_ids().collect();
                assert_eq!(ids, results, "{args:?}");
            }
        }
    }
    let orphan = format!("{}\n{}\n", lines[0], lines[3]);
    let out = ptc(&["compact", "-"], Some(&orphan));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("line 2: a tool result without its call"),
        "{}",
        text(&out.stderr)
    );
}

#[cfg(unix)]
#[test]
fn compact_cli_output_keeps_fifos_links_modes_and_devices() {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    let input = "{\"role\":\"user\",\"content\":\"hi\"}\n";
    let dir = temp_dir("out-file");
    let run =
        |out: &std::path::Path| ptc(&["compact", "-", "-o", out.to_str().unwrap()], Some(input));

    // A regular file of mode 0640: replaced whole, mode kept.
    let file = dir.join("mode.jsonl");
    std::fs::write(&file, "old contents, longer than the new ones\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    assert!(run(&file).status.success());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), input);
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o640
    );

    // A symlink: the target is written, the link stays a link.
    let target = dir.join("target.jsonl");
    std::fs::write(&target, "old\n").unwrap();
    let link = dir.join("link.jsonl");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink("target.jsonl", &link).unwrap();
    assert!(run(&link).status.success());
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), input);

    // A FIFO: written into, still a FIFO.
    let fifo = dir.join("pipe");
    let _ = std::fs::remove_file(&fifo);
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    assert!(run(&fifo).status.success());
    assert_eq!(reader.join().unwrap(), input);
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());

    // /dev/null stays a device.
    let null = std::path::Path::new("/dev/null");
    assert!(run(null).status.success());
    assert!(std::fs::metadata(null)
        .unwrap()
        .file_type()
        .is_char_device());

    // A failed write: exit 2, an error naming the file, nothing left over.
    let before: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let out = run(std::path::Path::new("/dev/full"));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("cannot write `/dev/full`"),
        "{}",
        text(&out.stderr)
    );
    let full_link = dir.join("full");
    let _ = std::fs::remove_file(&full_link);
    std::os::unix::fs::symlink("/dev/full", &full_link).unwrap();
    assert_eq!(run(&full_link).status.code(), Some(2));
    let mut after: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    after.retain(|n| n != "full");
    assert_eq!(
        before.len(),
        after.len(),
        "no temporary file left: {after:?}"
    );

    // A new path is created.
    let new = dir.join("new.jsonl");
    let _ = std::fs::remove_file(&new);
    assert!(run(&new).status.success());
    assert_eq!(std::fs::read_to_string(&new).unwrap(), input);
    let _ = std::fs::remove_dir_all(&dir);
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
