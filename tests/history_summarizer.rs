//! The LLM summarizer against real HTTP servers on 127.0.0.1, as
//! `ptc compact --summary llm` meets them: one that never answers (the
//! round ends at the summary deadline), replies cut at their token limit
//! (retried with half the tokens), structured refusals (retried with the
//! brief strategy), and the seed sent for deterministic summaries.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};

use ptc_lisp::agent::http::HttpOptions;
use ptc_lisp::agent::openai::{OpenAiConfig, OpenAiProvider};
use ptc_lisp::agent::LlmSummarizer;
use ptc_lisp::history::{Message, Strategy, Summarizer, SummaryError, SummaryRequest};
use ptc_lisp::tokens::TokenModel;

use crate::providers::{openai_ok, reply, Reply, TestServer};
use crate::util::{text, TempDir};

/// A server that accepts every connection and never answers; each
/// connection is let go after `hold` (so the test process does not keep
/// them forever).
fn silent_server(hold: Duration) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let until = Instant::now() + hold;
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            std::thread::spawn(move || {
                std::thread::sleep(until.saturating_duration_since(Instant::now()));
                drop(stream);
            });
            if Instant::now() >= until {
                return;
            }
        }
    });
    base
}

fn temp_dir(name: &str) -> TempDir {
    crate::util::temp_dir(&format!("summarizer-{name}"))
}

/// A coding session of 30 turns: enough to compact.
fn session(dir: &Path) -> PathBuf {
    let mut lines = vec![json!({"role": "system", "content": "You are a coding agent."})];
    for t in 0..30 {
        lines.push(json!({"role": "user", "content": format!("Step {t}: fix src/file_{t}.rs")}));
        lines.push(
            json!({"role": "assistant", "content": format!("Fixed src/file_{t}.rs. ").repeat(5)}),
        );
    }
    let path = dir.join("session.jsonl");
    let text: Vec<String> = lines.iter().map(Json::to_string).collect();
    std::fs::write(&path, text.join("\n") + "\n").unwrap();
    path
}

/// `ptc compact --summary llm --manual` of [`session`] with the summary
/// model at `base` (OpenAI-compatible unless `llm` says otherwise); the
/// events go to `events.jsonl`. Also returns the wall time.
fn compact_llm(dir: &Path, llm: &str, base: &str, extra: &[&str]) -> (Output, Duration) {
    compact_with(dir, &["--summary", "llm", "--llm", llm], base, extra)
}

/// The wall time of the same compaction with the digest (no model call):
/// what starting `ptc` and compacting cost on this machine now, however
/// loaded it is.
fn digest_time(dir: &Path) -> Duration {
    let dir = dir.join("baseline");
    std::fs::create_dir_all(&dir).unwrap();
    let (out, took) = compact_with(&dir, &["--summary", "digest"], "http://127.0.0.1:9", &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    took
}

fn compact_with(dir: &Path, summary: &[&str], base: &str, extra: &[&str]) -> (Output, Duration) {
    let input = session(dir);
    let mut command = Command::new(env!("CARGO_BIN_EXE_ptc"));
    command
        .args(["compact", input.to_str().unwrap(), "-o"])
        .arg(dir.join("out.jsonl"))
        .args(summary)
        .args(["--manual", "test", "--events"])
        .arg(dir.join("events.jsonl"))
        .args(["--max-summary-tokens", "400"])
        .args(extra)
        .env("OPENAI_BASE_URL", format!("{base}/v1"))
        .env("OPENAI_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", base)
        .env("ANTHROPIC_API_KEY", "ak-test")
        .current_dir(dir)
        .stdin(Stdio::null());
    let started = Instant::now();
    let out = command.output().expect("ptc runs");
    (out, started.elapsed())
}

fn events(dir: &Path) -> Vec<Json> {
    std::fs::read_to_string(dir.join("events.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn named<'a>(records: &'a [Json], event: &str) -> Vec<&'a Json> {
    records.iter().filter(|r| r["event"] == event).collect()
}

fn output(dir: &Path) -> Vec<Message> {
    ptc_lisp::history::parse_jsonl(&std::fs::read_to_string(dir.join("out.jsonl")).unwrap())
        .unwrap()
}

fn has_summary(messages: &[Message]) -> bool {
    messages
        .iter()
        .any(|m| ptc_lisp::history::summary_version(m).is_some())
}

/// The user prompt of a summary request the server received.
fn prompt_of(request: &Json) -> String {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_summarizer_that_never_answers_costs_at_most_the_deadline() {
    let dir = temp_dir("silent");
    let base = silent_server(Duration::from_secs(60));
    let baseline = digest_time(&dir);
    let (out, took) = compact_llm(
        &dir,
        "openai:gpt-test",
        &base,
        &["--summary-deadline-ms", "1500"],
    );
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    // The deadline over what the same compaction costs without a model
    // call, plus a margin for a loaded machine; without the deadline the
    // client would wait until the server lets go (60 s), then retry.
    let limit = baseline + Duration::from_millis(1500 + 5000);
    assert!(took < limit, "took {took:?}, the digest {baseline:?}");
    assert!(
        err.contains("fallback: pruning-only (summary deadline)"),
        "{err}"
    );
    let records = events(&dir);
    let errors = named(&records, "compact.error");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0]["error_type"], "SummaryDeadline");
    assert_eq!(errors[0]["fallback"], "pruning-only");
    assert!(
        errors[0]["message"].as_str().unwrap().contains("1500 ms"),
        "{}",
        errors[0]
    );
    assert!(named(&records, "compact.summary_created").is_empty());
    // The round still pruned.
    let pruned = named(&records, "compact.pruned_messages");
    assert!(pruned[0]["pruned"].as_u64().unwrap() > 0);
    assert!(!has_summary(&output(&dir)));
}

#[test]
fn the_deadline_is_configured_by_file_and_checked() {
    let dir = temp_dir("deadline-config");
    std::fs::write(dir.join("ptc.toml"), "[summary]\ndeadline_ms = 0\n").unwrap();
    let (out, _) = compact_llm(&dir, "openai:gpt-test", "http://127.0.0.1:9", &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("summary.deadline_ms = 0 (from ptc.toml:2) must be between 1 and 600000"),
        "{err}"
    );
}

#[test]
fn a_summarizer_that_never_answers_meets_the_deadline_in_the_library() {
    let base = silent_server(Duration::from_secs(30));
    let provider = OpenAiProvider::new(
        "gpt-test",
        OpenAiConfig {
            base_url: Some(format!("{base}/v1")),
            api_key: None,
            max_tokens: None,
            http: HttpOptions::default(),
        },
    )
    .unwrap();
    let summarizer = LlmSummarizer::new(Arc::new(provider));
    let messages = [Message::user("Fix src/lib.rs")];
    let request = SummaryRequest {
        strategy: Strategy::TaskState,
        max_tokens: 100,
        messages: &messages,
        previous: None,
        state: None,
        note: None,
        later: &[],
        model: TokenModel::for_model("gpt-4o"),
    };
    let started = Instant::now();
    let result = summarizer.summarize_by(&request, started + Duration::from_millis(400));
    let took = started.elapsed();
    assert!(
        matches!(result, Err(SummaryError::DeadlineExceeded(_))),
        "{result:?}"
    );
    assert!(took < Duration::from_secs(3), "took {took:?}");
}

fn openai_cut(content: &str) -> String {
    json!({"model": "gpt-test",
           "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                        "finish_reason": "length"}]})
    .to_string()
}

#[test]
fn a_reply_cut_at_max_tokens_is_retried_with_half_the_tokens() {
    let dir = temp_dir("length");
    let server = TestServer::start(vec![
        reply(200, openai_cut("Goal: fix the files. Decisions: src/file_")),
        reply(200, openai_ok("Goal: fix src/file_0.rs to src/file_29.rs.")),
    ]);
    let (out, _) = compact_llm(&dir, "openai:gpt-test", &server.base, &[]);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    let sent = server.requests();
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0].json()["max_tokens"], 400);
    assert_eq!(sent[1].json()["max_tokens"], 200);
    let records = events(&dir);
    let errors = named(&records, "compact.error");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0]["error_type"], "SummaryTooLong");
    assert_eq!(errors[0]["fallback"], "retry with max_tokens 200");
    let created = named(&records, "compact.summary_created");
    assert_eq!(
        created[0]["summary"],
        "Goal: fix src/file_0.rs to src/file_29.rs."
    );
    assert_eq!(
        created[0]["fallbacks"],
        json!(["retry with max_tokens 200"])
    );
    assert!(has_summary(&output(&dir)));
}

#[test]
fn replies_cut_every_time_end_in_pruning_only() {
    let dir = temp_dir("length-thrice");
    let server = TestServer::start(vec![
        reply(200, openai_cut("a")),
        reply(200, openai_cut("b")),
        reply(200, openai_cut("c")),
    ]);
    let (out, _) = compact_llm(&dir, "openai:gpt-test", &server.base, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let tokens: Vec<Json> = server
        .requests()
        .iter()
        .map(|r| r.json()["max_tokens"].clone())
        .collect();
    assert_eq!(tokens, [json!(400), json!(200), json!(100)]);
    let records = events(&dir);
    let errors = named(&records, "compact.error");
    assert_eq!(errors.last().unwrap()["fallback"], "pruning-only");
    assert!(!has_summary(&output(&dir)));
}

#[test]
fn an_anthropic_reply_stopped_at_max_tokens_is_retried_with_half_the_tokens() {
    let dir = temp_dir("anthropic-length");
    let anthropic = |text: &str, stop: &str| {
        json!({"model": "claude-test", "content": [{"type": "text", "text": text}],
               "stop_reason": stop, "usage": {"input_tokens": 10, "output_tokens": 5}})
        .to_string()
    };
    let server = TestServer::start(vec![
        reply(200, anthropic("Goal: fix the fi", "max_tokens")),
        reply(200, anthropic("Goal: fix the files.", "end_turn")),
    ]);
    let (out, _) = compact_llm(&dir, "anthropic:claude-test", &server.base, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let sent = server.requests();
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0].json()["max_tokens"], 400);
    assert_eq!(sent[1].json()["max_tokens"], 200);
    assert_eq!(
        sent[0].json().get("seed"),
        None,
        "the Messages API takes no seed"
    );
    let records = events(&dir);
    assert_eq!(
        named(&records, "compact.summary_created")[0]["summary"],
        "Goal: fix the files."
    );
}

#[test]
fn a_structured_refusal_is_retried_with_the_brief_strategy() {
    let dir = temp_dir("refusal");
    let refusal = json!({"model": "gpt-test",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": null,
                                 "refusal": "I can't help with summarizing this."}}]})
    .to_string();
    let server = TestServer::start(vec![
        reply(200, refusal),
        reply(
            200,
            openai_ok("The agent fixed thirty files; nothing is left."),
        ),
    ]);
    let (out, _) = compact_llm(&dir, "openai:gpt-test", &server.base, &[]);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    let sent = server.requests();
    assert_eq!(sent.len(), 2);
    assert!(prompt_of(&sent[0].json()).contains("task state"));
    assert!(
        prompt_of(&sent[1].json()).contains("at most five plain sentences"),
        "the retry asks for the brief strategy"
    );
    let records = events(&dir);
    let errors = named(&records, "compact.error");
    assert_eq!(errors[0]["error_type"], "SummaryRefused");
    assert_eq!(errors[0]["fallback"], "brief");
    assert!(errors[0]["message"]
        .as_str()
        .unwrap()
        .contains("I can't help with summarizing this."));
    let created = named(&records, "compact.summary_created");
    assert_eq!(created[0]["strategy"], "brief", "the strategy that ran");
    assert_eq!(created[0]["fallbacks"], json!(["brief strategy"]));
    assert!(has_summary(&output(&dir)));
}

#[test]
fn summary_requests_carry_a_seed_at_temperature_zero() {
    let dir = temp_dir("seed");
    let server = TestServer::start(vec![reply(200, openai_ok("Goal: fix the files."))]);
    let (out, _) = compact_llm(&dir, "openai:gpt-test", &server.base, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let body = server.requests()[0].json();
    assert_eq!(body["seed"], ptc_lisp::agent::SUMMARY_SEED);
    assert_eq!(body["temperature"], 0.0);
    assert_eq!(body["model"], "gpt-test");
}

#[test]
fn a_server_error_prunes_only_without_retrying_past_the_deadline() {
    let dir = temp_dir("errors");
    // Four 503s: the client retries them (backoff 0.5, 1, 2 s), but not
    // past a 1.2 s deadline.
    let server = TestServer::start((0..4).map(|_| reply(503, "busy")).collect::<Vec<Reply>>());
    let baseline = digest_time(&dir);
    let (out, took) = compact_llm(
        &dir,
        "openai:gpt-test",
        &server.base,
        &["--summary-deadline-ms", "1200"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let limit = baseline + Duration::from_millis(1200 + 5000);
    assert!(took < limit, "took {took:?}, the digest {baseline:?}");
    assert!(
        server.requests().len() < 4,
        "no retry waits past the deadline"
    );
    let records = events(&dir);
    let errors = named(&records, "compact.error");
    assert_eq!(errors.last().unwrap()["fallback"], "pruning-only");
}

#[test]
fn a_request_timeout_bounds_the_http_call_itself() {
    use ptc_lisp::agent::{ChatMessage, ChatRequest, LlmProvider, ProviderError};
    let base = silent_server(Duration::from_secs(30));
    let provider = OpenAiProvider::new(
        "gpt-test",
        OpenAiConfig {
            base_url: Some(format!("{base}/v1")),
            api_key: None,
            max_tokens: None,
            http: HttpOptions::default(),
        },
    )
    .unwrap();
    let mut request = ChatRequest::new(vec![ChatMessage::user("hi")]);
    request.timeout = Some(Duration::from_millis(300));
    let started = Instant::now();
    let result = provider.complete(&request);
    let took = started.elapsed();
    let message = match &result {
        Err(e @ ProviderError::Timeout(_)) => e.to_string(),
        other => panic!("{other:?}"),
    };
    assert!(
        message.contains("300 ms"),
        "the message gives the limit that applied: {message}"
    );
    assert!(took < Duration::from_secs(3), "took {took:?}");
}
