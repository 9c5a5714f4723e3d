//! What the history layer exports (seed 004), as users meet it through
//! `ptc compact` and `ptc agent`: trace events in a JSON Lines file and
//! posted to an `/ingest` endpoint (healthy, down, stalled, failing), the
//! archive of each compaction round on disk and in an S3-compatible
//! bucket (moto), and redaction of secrets in every exported byte.

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use serde_json::{json, Value as Json};

use ptc_lisp::history::trace::{HttpSink, HttpSinkOptions, Sink};
use ptc_lisp::history::{parse_jsonl, summary_version, Message};

use crate::util::{text, TempDir};

// --- Fixtures --------------------------------------------------------------

/// An OpenAI-shaped key, and a password, that must never leave the
/// process unredacted.
const SECRET_KEY: &str = "sk-proj-Zx81kQ2mV7pL0rT5wY3nB6cD9fH4jK1s";
const SECRET_PASSWORD: &str = "Tr0ub4dor3xyzzy";
const REDACTED: &str = "<REDACTED>";

/// A coding session as in `history_cli.rs` (system, protected developer
/// note, 40 turns of a request, two tool calls with results and an
/// answer), with secrets in every request and in one tool result.
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
            r#"{{"role":"user","content":"Step {t}: use api_key={SECRET_KEY} for issue #{t} in {f}. {}"}}"#,
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
                format!(
                    "error: permission denied: /etc/acme/secrets.toml; password={SECRET_PASSWORD} rejected"
                )
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

/// Messages in [`session_jsonl`].
const SESSION_MESSAGES: usize = 242;

/// The session as an archive should hold it: every secret redacted.
fn redacted_session() -> Vec<Message> {
    let redacted = session_jsonl()
        .replace(SECRET_KEY, REDACTED)
        .replace(SECRET_PASSWORD, REDACTED);
    parse_jsonl(&redacted).unwrap()
}

/// `actual` equals `expected`, message by message (naming the first
/// difference rather than printing both histories).
fn assert_same_messages(actual: &[Message], expected: &[Message]) {
    assert_eq!(actual.len(), expected.len(), "message count");
    if let Some(i) = (0..actual.len()).find(|&i| actual[i] != expected[i]) {
        panic!(
            "message {i} differs:\n  actual:   {:?}\n  expected: {:?}",
            actual[i], expected[i]
        );
    }
}

fn temp_dir(name: &str) -> TempDir {
    crate::util::temp_dir(&format!("export-{name}"))
}

/// Run `ptc` in `dir` with extra environment variables; also returns the
/// wall time of the whole process.
fn ptc_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (Output, Duration) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ptc"));
    command
        .args(crate::util::relaxed_args(args))
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        command.env(k, v);
    }
    let start = Instant::now();
    let out = command.output().expect("ptc runs");
    (out, start.elapsed())
}

/// `ptc compact` of [`session_jsonl`] under a 16,000-token window (it
/// compacts), with `extra` flags; the compacted history goes to `out.jsonl`.
fn compact(dir: &Path, extra: &[&str], env: &[(&str, &str)]) -> Output {
    let input = dir.join("session.jsonl");
    std::fs::write(&input, session_jsonl()).unwrap();
    let output = dir.join("out.jsonl");
    let _ = std::fs::remove_file(&output);
    let mut args = vec![
        "compact",
        input.to_str().unwrap(),
        "-o",
        output.to_str().unwrap(),
        "--max-context-tokens",
        "16000",
    ];
    args.extend_from_slice(extra);
    ptc_in(dir, &args, env).0
}

/// The records of a JSON Lines events file.
fn read_records(path: &Path) -> Vec<Json> {
    let content = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    parse_records(&content)
}

fn parse_records(content: &str) -> Vec<Json> {
    content
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

fn ts_of(record: &Json) -> SystemTime {
    let ts = record["ts"]
        .as_str()
        .unwrap_or_else(|| panic!("no ts in {record}"));
    humantime::parse_rfc3339(ts).unwrap_or_else(|e| panic!("ts {ts:?} is not RFC 3339: {e}"))
}

/// Every record carries `session_id`, an RFC 3339 `ts` (never going
/// back) and `seq` 1, 2, 3, ...
fn assert_envelope(records: &[Json], session_id: &str) {
    assert!(!records.is_empty(), "no records");
    let mut last_ts = SystemTime::UNIX_EPOCH;
    for (i, r) in records.iter().enumerate() {
        assert_eq!(r["seq"], json!(i + 1), "seq of record {i}: {r}");
        assert_eq!(r["session_id"], session_id, "{r}");
        assert!(r["event"].is_string(), "{r}");
        let ts = ts_of(r);
        assert!(ts >= last_ts, "ts goes back at record {i}: {r}");
        last_ts = ts;
    }
}

fn named<'a>(records: &'a [Json], event: &str) -> Vec<&'a Json> {
    records.iter().filter(|r| r["event"] == event).collect()
}

fn the_one<'a>(records: &'a [Json], event: &str) -> &'a Json {
    let found = named(records, event);
    assert_eq!(found.len(), 1, "one {event} expected in {records:#?}");
    found[0]
}

/// No secret in `bytes` (named `what` in the message).
fn assert_no_secret(what: &str, bytes: &[u8]) {
    let s = String::from_utf8_lossy(bytes);
    for secret in [SECRET_KEY, SECRET_PASSWORD] {
        assert!(!s.contains(secret), "{what} leaks {secret}:\n{s}");
    }
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

fn trace_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("[trace]"))
        .collect()
}

/// One agent turn: defines `step{i}`, prints a secret and ~600 tokens.
fn chatty_program(i: usize) -> String {
    format!(
        "```clojure\n(def step{i} {i})\n(println \"password={SECRET_PASSWORD}\")\n(println (apply str (repeat 150 \"data{i} \")))\n```"
    )
}

/// `ptc agent` flags for a 12-turn scripted run under a 5,000-token
/// window that compacts twice and returns 2; the mission holds a secret.
fn agent_args(dir: &Path) -> Vec<String> {
    let script = dir.join("replies.json");
    let mut replies: Vec<String> = (0..11).map(chatty_program).collect();
    replies.push("```clojure\n(return step2)\n```".into());
    std::fs::write(&script, serde_json::to_string(&replies).unwrap()).unwrap();
    [
        "agent",
        "--mission",
        &format!("Walk through the data. Deploy with api_key={SECRET_KEY}"),
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
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn run_agent(dir: &Path, extra: &[&str]) -> (Output, Duration) {
    let mut args = agent_args(dir);
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    ptc_in(dir, &args, &[])
}

/// How long an exporting run may take: what the same run takes without
/// exporting, measured now (twice, plus 5 s: the flush at exit is
/// bounded at 2 s). On a quiet machine that is under 10 s, where an
/// export that blocked on each event's 2 s timeout would take over a
/// minute; on a busy one the bound grows with the run, so the load alone
/// cannot fail the test.
fn export_bound(name: &str) -> Duration {
    let dir = temp_dir(&format!("{name}-baseline"));
    let (out, baseline) = run_agent(&dir, &[]);
    assert_agent_ok(&out);
    baseline * 2 + Duration::from_secs(5)
}

/// The run succeeded with the scripted answer.
fn assert_agent_ok(out: &Output) {
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(text(&out.stdout).trim(), "2", "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // Two rounds at least (since issue 38 a round keeps recent turns up
    // to `target_after_compaction`, which may bring a third).
    assert!(
        err.lines().filter(|l| l.contains("compacted: ")).count() >= 2,
        "{err}"
    );
}

// --- Events of `ptc compact` -----------------------------------------------

/// `ptc compact` with `--events` on a history that needs compacting.
fn compact_events(name: &str) -> (TempDir, Vec<Json>, Vec<Message>) {
    let dir = temp_dir(name);
    let events = dir.join("events.jsonl");
    let out = compact(
        &dir,
        &[
            "--events",
            events.to_str().unwrap(),
            "--session-id",
            "s1",
            "--trigger-pct",
            "0.8",
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let records = read_records(&events);
    assert_envelope(&records, "s1");
    assert_no_secret("the events file", &std::fs::read(&events).unwrap());
    let compacted = parse_jsonl(&std::fs::read_to_string(dir.join("out.jsonl")).unwrap()).unwrap();
    (dir, records, compacted)
}

#[test]
fn token_estimate_event() {
    let (_, records, _) = compact_events("estimate");
    let e = the_one(&records, "compact.token_estimate");
    assert_eq!(e["seq"], 1, "the estimate comes first");
    assert_eq!(e["model"], "gpt-4o");
    assert_eq!(e["max_tokens"], 16_000);
    let t_est = e["t_est"].as_u64().unwrap();
    let b = &e["breakdown"];
    let parts: Vec<u64> = ["system", "developer", "tools_schema", "messages"]
        .iter()
        .map(|k| {
            b[k].as_u64()
                .unwrap_or_else(|| panic!("breakdown.{k} in {e}"))
        })
        .collect();
    assert_eq!(parts.iter().sum::<u64>(), t_est, "{e}");
    assert!(parts[0] > 0 && parts[1] > 0 && parts[3] > 16_000, "{e}");
    assert_eq!(parts[2], 0, "no tool schemas given");
    let pct = e["usage_pct"].as_f64().unwrap();
    assert!((pct - t_est as f64 / 16_000.0).abs() < 1e-9, "{e}");
}

#[test]
fn trigger_decision_event() {
    let (_, records, compacted) = compact_events("trigger");
    let d = the_one(&records, "compact.trigger_decision");
    assert_eq!(d["seq"], 2);
    assert_eq!(d["triggered"], true);
    let reason = d["reason"].as_str().unwrap();
    assert!(reason.contains("12800"), "80% of 16000: {reason}");
    assert_eq!(d["policy"]["trigger_pct"], 0.8);
    assert_eq!(d["policy"]["hard_cap_buffer"], 1500);
    assert_eq!(d["policy"]["strategy"], "task_state");
    let kept = &d["kept"];
    assert_eq!(kept["pinned"], 2, "system and the protected note");
    assert!(kept["recent_turns"].as_u64().unwrap() >= 1, "{d}");
    assert!(kept["tool_pairs"].as_u64().unwrap() >= 1, "{d}");
    let pruned = d["pruned_count"].as_u64().unwrap() as usize;
    assert_eq!(
        SESSION_MESSAGES - pruned + 1,
        compacted.len(),
        "pruned messages are replaced by one summary"
    );

    // Below the trigger: triggered false, with no kept counts.
    let dir = temp_dir("trigger-small");
    let events = dir.join("events.jsonl");
    std::fs::write(
        dir.join("small.jsonl"),
        "{\"role\":\"user\",\"content\":\"hi\"}\n{\"role\":\"assistant\",\"content\":\"hello\"}\n",
    )
    .unwrap();
    let (out, _) = ptc_in(
        &dir,
        &[
            "compact",
            "small.jsonl",
            "--events",
            events.to_str().unwrap(),
            "--session-id",
            "small",
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let records = read_records(&events);
    assert_envelope(&records, "small");
    let d = the_one(&records, "compact.trigger_decision");
    assert_eq!(d["triggered"], false);
    assert!(d["reason"].as_str().unwrap().contains("below"), "{d}");
    assert_eq!(d["policy"]["trigger_pct"], 0.85, "the default");
    assert!(d.get("kept").is_none() && d.get("pruned_count").is_none());
    assert!(named(&records, "compact.summary_created").is_empty());
}

#[test]
fn summary_created_event() {
    let (_, records, compacted) = compact_events("summary");
    let d = the_one(&records, "compact.trigger_decision");
    let s = the_one(&records, "compact.summary_created");
    assert_eq!(s["strategy"], "task_state");
    assert_eq!(s["summarizer"], "digest");
    assert_eq!(s["input_messages"], d["pruned_count"]);
    let summary_tokens = s["summary_tokens"].as_f64().unwrap();
    let input_tokens = s["input_tokens"].as_f64().unwrap();
    assert!(summary_tokens > 0.0 && summary_tokens <= 1024.0, "{s}");
    let ratio = s["compression_ratio"].as_f64().unwrap();
    assert!((ratio - summary_tokens / input_tokens).abs() < 1e-9, "{s}");
    assert!(ratio < 0.2, "{s}");
    // The summarizer's latency, for a timeline's duration bar.
    assert!(s["duration_ms"].as_u64().is_some(), "{s}");
    // The payload holds the summary the compacted history got.
    let body = s["summary"].as_str().unwrap();
    assert!(body.contains("src/db/pool.rs"), "{body}");
    let message = compacted
        .iter()
        .find(|m| summary_version(m).is_some())
        .unwrap();
    assert_eq!(
        summary_version(message),
        Some(s["version"].as_u64().unwrap() as u32)
    );
    // The summary holds redacted requests: the secret was seen and removed.
    assert!(body.contains(REDACTED), "{body}");
    // The digest copies no secret into the history (issue 38); the
    // kept messages are unchanged (copy on export).
    assert!(
        !message.text().contains(SECRET_KEY),
        "the digest copied a secret: {}",
        message.text()
    );
    assert!(
        compacted.iter().any(|m| m.text().contains(SECRET_KEY)),
        "redaction is copy-on-export: kept messages are unchanged"
    );

    let p = the_one(&records, "compact.pruned_messages");
    assert_eq!(p["pruned"], d["pruned_count"]);
    assert_eq!(
        p["tokens_before"],
        the_one(&records, "compact.token_estimate")["t_est"]
    );
    let layers = &p["layers"];
    let total = ["pinned", "summary", "recent"]
        .iter()
        .map(|k| layers[k].as_u64().unwrap() as usize)
        .sum::<usize>();
    assert_eq!(total, compacted.len(), "{p}");
    assert_eq!(layers["summary"], 1);
    let names: Vec<&str> = records
        .iter()
        .map(|r| r["event"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "compact.token_estimate",
            "compact.trigger_decision",
            "compact.summary_created",
            "compact.pruned_messages"
        ],
        "no archive, no archival events"
    );
}

#[test]
fn error_event_on_failure() {
    // Protected content larger than the budget: the compaction fails.
    let dir = temp_dir("error");
    let events = dir.join("events.jsonl");
    let input = format!(
        "{{\"role\":\"system\",\"content\":\"{} token={SECRET_PASSWORD}\"}}\n{{\"role\":\"user\",\"content\":\"hi\"}}\n",
        "rule ".repeat(3_000)
    );
    std::fs::write(dir.join("big.jsonl"), input).unwrap();
    let (out, _) = ptc_in(
        &dir,
        &[
            "compact",
            "big.jsonl",
            "--max-context-tokens",
            "2000",
            "--hard-cap-buffer",
            "100",
            "--max-summary-tokens",
            "100",
            "--events",
            events.to_str().unwrap(),
            "--session-id",
            "e1",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let records = read_records(&events);
    assert_envelope(&records, "e1");
    let e = the_one(&records, "compact.error");
    assert_eq!(e["status"], "error");
    assert_eq!(e["error_type"], "InsufficientBudget");
    assert!(e["message"].as_str().unwrap().contains("protected"), "{e}");
    assert!(!e["fallback"].as_str().unwrap().is_empty(), "{e}");
    assert_eq!(records.last().unwrap()["event"], "compact.error");
    assert_no_secret("the events file", &std::fs::read(&events).unwrap());
}

// --- Events of `ptc agent` -------------------------------------------------

#[test]
fn agent_events_file_records_every_decision() {
    let dir = temp_dir("agent-events");
    let events = dir.join("events.jsonl");
    let (out, _) = run_agent(&dir, &["--events", events.to_str().unwrap()]);
    assert_agent_ok(&out);
    let records = read_records(&events);
    // No --session-id: one is made up, the same on every record.
    let session = records[0]["session_id"].as_str().unwrap().to_string();
    assert!(!session.is_empty());
    assert_envelope(&records, &session);
    assert_no_secret("the events file", &std::fs::read(&events).unwrap());

    let estimates = named(&records, "compact.token_estimate");
    let decisions = named(&records, "compact.trigger_decision");
    assert_eq!(estimates.len(), 12, "one pre-flight check per model call");
    assert_eq!(decisions.len(), 12);
    // Each decision directly follows its estimate.
    for (i, r) in records.iter().enumerate() {
        if r["event"] == "compact.trigger_decision" {
            assert_eq!(records[i - 1]["event"], "compact.token_estimate", "{r}");
        }
    }
    let triggered: Vec<&&Json> = decisions
        .iter()
        .filter(|d| d["triggered"] == true)
        .collect();
    // Two rounds at least (since issue 38 a round keeps recent turns up
    // to `target_after_compaction`, which may bring a third).
    assert!(triggered.len() >= 2, "{triggered:?}");
    for d in &triggered {
        assert!(d["kept"]["pinned"].as_u64().unwrap() >= 2, "{d}");
        assert!(d["pruned_count"].as_u64().unwrap() > 0, "{d}");
    }
    let summaries = named(&records, "compact.summary_created");
    assert_eq!(summaries.len(), triggered.len());
    for (i, s) in summaries.iter().enumerate() {
        assert_eq!(s["version"], i + 1);
    }
    // The program output had a password: redacted in the summary payload.
    assert!(
        summaries
            .iter()
            .any(|s| s["summary"].as_str().unwrap().contains(REDACTED)),
        "{summaries:#?}"
    );
    assert_eq!(
        named(&records, "compact.pruned_messages").len(),
        triggered.len()
    );
    assert!(named(&records, "compact.archival").is_empty());
}

// --- The ingest endpoint ---------------------------------------------------

/// How the test ingest server answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    Ok,
    ServerError,
    /// Read the request and never answer.
    Stall,
}

/// One request the server read.
#[derive(Debug, Clone)]
struct Post {
    at: SystemTime,
    method: String,
    path: String,
    content_type: Option<String>,
    body: Vec<u8>,
}

/// A minimal HTTP/1.1 server on 127.0.0.1 recording every request; it
/// stops when dropped, and by itself after a minute.
struct Ingest {
    port: u16,
    posts: Arc<Mutex<Vec<Post>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Ingest {
    fn start(answer: Answer) -> Ingest {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let posts = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let posts = posts.clone();
            let stop = stop.clone();
            std::thread::spawn(move || {
                let deadline = Instant::now() + Duration::from_secs(60);
                let mut connections = Vec::new();
                while !stop.load(Ordering::SeqCst) && Instant::now() < deadline {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            let posts = posts.clone();
                            let stop = stop.clone();
                            connections.push(std::thread::spawn(move || {
                                serve(stream, answer, &posts, &stop, deadline)
                            }));
                        }
                        Err(e) if e.kind() == ErrorKind::WouldBlock => {
                            std::thread::sleep(Duration::from_millis(2))
                        }
                        Err(_) => break,
                    }
                }
                stop.store(true, Ordering::SeqCst);
                for c in connections {
                    let _ = c.join();
                }
            })
        };
        Ingest {
            port,
            posts,
            stop,
            thread: Some(thread),
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn posts(&self) -> Vec<Post> {
        self.posts.lock().unwrap().clone()
    }
}

impl Drop for Ingest {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Serve one connection: requests one after another (keep-alive), each
/// recorded once its body (by `Content-Length`) has arrived.
fn serve(
    mut stream: TcpStream,
    answer: Answer,
    posts: &Mutex<Vec<Post>>,
    stop: &AtomicBool,
    deadline: Instant,
) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_millis(20)));
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = [0u8; 8192];
    while !stop.load(Ordering::SeqCst) && Instant::now() < deadline {
        // Every complete request in the buffer.
        while let Some(head_end) = find(&buf, b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
            let mut lines = head.split("\r\n");
            let mut first = lines.next().unwrap_or("").split(' ');
            let method = first.next().unwrap_or("").to_string();
            let path = first.next().unwrap_or("").to_string();
            let mut length = 0;
            let mut content_type = None;
            for line in lines {
                if let Some((name, value)) = line.split_once(':') {
                    let value = value.trim();
                    match name.trim().to_ascii_lowercase().as_str() {
                        "content-length" => length = value.parse().unwrap_or(0),
                        "content-type" => content_type = Some(value.to_string()),
                        _ => {}
                    }
                }
            }
            let end = head_end + 4 + length;
            if buf.len() < end {
                break;
            }
            let body = buf[head_end + 4..end].to_vec();
            buf.drain(..end);
            posts.lock().unwrap().push(Post {
                at: SystemTime::now(),
                method,
                path,
                content_type,
                body,
            });
            let reply: &[u8] = match answer {
                Answer::Ok => b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n",
                Answer::ServerError => {
                    b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\n\r\n"
                }
                Answer::Stall => b"",
            };
            if !reply.is_empty() && stream.write_all(reply).is_err() {
                return;
            }
        }
        match stream.read(&mut chunk) {
            Ok(0) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => return,
        }
    }
}

/// A port nothing listens on (bound once, then released).
fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[test]
fn non_blocking_http_export() {
    let server = Ingest::start(Answer::Ok);
    let dir = temp_dir("ingest-ok");
    let events = dir.join("events.jsonl");
    let (out, elapsed) = run_agent(
        &dir,
        &[
            "--events-url",
            &server.url(),
            "--events",
            events.to_str().unwrap(),
            "--session-id",
            "http-1",
        ],
    );
    assert_agent_ok(&out);
    let err = text(&out.stderr);
    assert!(
        trace_lines(&err).is_empty() && !err.contains(&server.url()) && !err.contains("ingest"),
        "a healthy export is silent: {err}"
    );
    let written = read_records(&events);
    let posts = server.posts();
    for p in &posts {
        assert_eq!(p.method, "POST");
        assert_eq!(p.path, "/ingest");
        assert_eq!(
            p.content_type
                .as_deref()
                .map(str::to_ascii_lowercase)
                .as_deref(),
            Some("application/json"),
        );
        assert_no_secret("a posted event", &p.body);
    }
    let posted: Vec<Json> = posts
        .iter()
        .map(|p| serde_json::from_slice(&p.body).expect("each POST is one JSON event"))
        .collect();
    assert_envelope(&posted, "http-1");
    assert_eq!(
        posted, written,
        "every event is posted, in order, as written to the file"
    );
    for event in [
        "compact.token_estimate",
        "compact.trigger_decision",
        "compact.summary_created",
        "compact.pruned_messages",
    ] {
        assert!(!named(&posted, event).is_empty(), "{event} posted");
    }
    // Delivery latency: from the event's timestamp (millisecond precision,
    // truncated) to the server having read the whole request.
    let mut lags: Vec<Duration> = posts
        .iter()
        .zip(&posted)
        .map(|(p, r)| p.at.duration_since(ts_of(r)).unwrap_or(Duration::ZERO))
        .collect();
    lags.sort();
    let max = *lags.last().unwrap();
    let median = lags[lags.len() / 2];
    let within_200ms = lags
        .iter()
        .filter(|l| **l <= Duration::from_millis(200))
        .count();
    eprintln!(
        "non_blocking_http_export: {} events, delivery lag median {median:?}, max {max:?}, \
         {within_200ms} within 200 ms; run {elapsed:?}",
        lags.len()
    );
    assert!(max < Duration::from_secs(1), "max lag {max:?}");
    assert!(
        median <= Duration::from_millis(200),
        "median lag {median:?}"
    );
}

#[test]
fn http_export_to_a_server_that_is_down() {
    let dir = temp_dir("ingest-down");
    let url = format!("http://127.0.0.1:{}", closed_port());
    let (out, elapsed) = run_agent(&dir, &["--events-url", &url]);
    assert_agent_ok(&out);
    let err = text(&out.stderr);
    let lines = trace_lines(&err);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("cannot export events") && l.contains(&format!("{url}/ingest"))),
        "{err}"
    );
    assert_eq!(lines.len(), 1, "reported once, not once per event: {err}");
    let bound = export_bound("ingest-down");
    assert!(elapsed < bound, "{elapsed:?} (bound {bound:?})");
}

/// Seed 004, "Non-blocking tracing export", against a server that
/// accepts connections and never answers.
#[test]
fn non_blocking_tracing_export() {
    let server = Ingest::start(Answer::Stall);
    let dir = temp_dir("ingest-stall");
    let (out, elapsed) = run_agent(&dir, &["--events-url", &server.url()]);
    assert_agent_ok(&out);
    let err = text(&out.stderr);
    assert!(!trace_lines(&err).is_empty(), "{err}");
    assert!(
        err.contains("[trace] gave up delivering events"),
        "the flush at exit is bounded: {err}"
    );
    assert!(!server.posts().is_empty(), "the exporter did try");
    eprintln!("non_blocking_tracing_export: run {elapsed:?}");
    // Run + flush (2 s) + slack (`export_bound`); blocking on each POST's
    // 2 s timeout would take over a minute.
    let bound = export_bound("ingest-stall");
    assert!(elapsed < bound, "{elapsed:?} (bound {bound:?})");
}

#[test]
fn http_export_to_a_failing_server() {
    let server = Ingest::start(Answer::ServerError);
    let dir = temp_dir("ingest-500");
    let (out, elapsed) = run_agent(&dir, &["--events-url", &server.url()]);
    assert_agent_ok(&out);
    let err = text(&out.stderr);
    assert!(
        trace_lines(&err).iter().any(|l| l.contains("HTTP 500")),
        "{err}"
    );
    let posted = server.posts().len();
    assert!(posted >= 20, "every event was tried: {posted}");
    let bound = export_bound("ingest-500");
    assert!(elapsed < bound, "{elapsed:?} (bound {bound:?})");
}

#[test]
fn http_sink_drops_instead_of_blocking() {
    let server = Ingest::start(Answer::Stall);
    let mut sink = HttpSink::new(
        &server.url(),
        HttpSinkOptions {
            queue: 2,
            timeout: Duration::from_millis(500),
        },
    );
    let stats = sink.stats();
    let start = Instant::now();
    for i in 0..100 {
        sink.write(&json!({"seq": i, "event": "compact.token_estimate"}));
    }
    let writing = start.elapsed();
    assert!(writing < Duration::from_millis(100), "{writing:?}");
    let dropped = stats.dropped.load(Ordering::Relaxed);
    // At most two queued and one in flight.
    assert!((97..=98).contains(&dropped), "{dropped} dropped");
    let start = Instant::now();
    sink.flush(Duration::from_millis(300));
    let flushing = start.elapsed();
    assert!(flushing < Duration::from_secs(1), "{flushing:?}");
    assert_eq!(stats.sent.load(Ordering::Relaxed), 0);
}

// --- The archive on disk ---------------------------------------------------

#[test]
fn filesystem_storage_adapter() {
    let dir = temp_dir("archive-fs");
    let archive = dir.join("archive");
    let out = compact(
        &dir,
        &["--archive", archive.to_str().unwrap(), "--session-id", "s1"],
        &[],
    );
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(trace_lines(&err).is_empty(), "{err}");
    let session = archive.join("s1");
    let files: Vec<String> = files_under(&archive)
        .iter()
        .map(|p| p.strip_prefix(&archive).unwrap().display().to_string())
        .collect();
    assert_eq!(
        files,
        [
            "s1/events.jsonl",
            "s1/summary-001.json",
            "s1/transcript-pre-compact-001.jsonl"
        ],
        "no temporary files left"
    );
    // The transcript: the whole input, one message a line, redacted.
    let transcript =
        std::fs::read_to_string(session.join("transcript-pre-compact-001.jsonl")).unwrap();
    assert_eq!(transcript.lines().count(), SESSION_MESSAGES);
    assert_same_messages(&parse_jsonl(&transcript).unwrap(), &redacted_session());
    // The summary record.
    let summary: Json =
        serde_json::from_slice(&std::fs::read(session.join("summary-001.json")).unwrap()).unwrap();
    assert_eq!(summary["session_id"], "s1");
    assert_eq!(summary["step"], 1);
    assert_eq!(summary["strategy"], "task_state");
    assert_eq!(summary["version"], 1);
    let compacted = parse_jsonl(&std::fs::read_to_string(dir.join("out.jsonl")).unwrap()).unwrap();
    assert_eq!(
        summary["pruned_messages"],
        json!(SESSION_MESSAGES + 1 - compacted.len())
    );
    let body = summary["summary"].as_str().unwrap();
    assert!(body.contains("permission denied"), "{body}");
    let in_history = compacted
        .iter()
        .find(|m| summary_version(m).is_some())
        .unwrap()
        .text();
    assert!(
        in_history
            .replace(SECRET_KEY, REDACTED)
            .replace(SECRET_PASSWORD, REDACTED)
            .contains(body),
        "the archived summary is the one in the history, redacted"
    );
    for file in files_under(&archive) {
        let bytes = std::fs::read(&file).unwrap();
        assert_no_secret(&file.display().to_string(), &bytes);
    }
    assert!(transcript.contains(&format!("api_key={REDACTED}")));
    assert!(transcript.contains(&format!("password={REDACTED}")));
    // events.jsonl: the round's events, then one archival event per file.
    let events = read_records(&session.join("events.jsonl"));
    assert_envelope(&events, "s1");
    let names: Vec<&str> = events
        .iter()
        .map(|r| r["event"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "compact.token_estimate",
            "compact.trigger_decision",
            "compact.summary_created",
            "compact.pruned_messages",
            "compact.archival",
            "compact.archival"
        ]
    );
}

#[test]
fn audit_logging_for_all_exports() {
    let dir = temp_dir("audit");
    let archive = dir.join("archive");
    let events = dir.join("events.jsonl");
    let out = compact(
        &dir,
        &[
            "--archive",
            archive.to_str().unwrap(),
            "--session-id",
            "audit-7",
            "--events",
            events.to_str().unwrap(),
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let records = read_records(&events);
    assert_envelope(&records, "audit-7");
    let archived = read_records(&archive.join("audit-7/events.jsonl"));
    assert_eq!(archived, records, "events.jsonl holds every event");
    let audits = named(&records, "compact.archival");
    assert_eq!(audits.len(), 2, "one per file written");
    let mut paths = Vec::new();
    for a in &audits {
        assert_eq!(a["session_id"], "audit-7");
        assert_eq!(a["step"], 1);
        assert_eq!(a["storage_adapter"], "fs");
        let path = PathBuf::from(a["file_path"].as_str().unwrap());
        assert!(path.is_file(), "{a}");
        paths.push(path.file_name().unwrap().to_string_lossy().into_owned());
    }
    assert_eq!(
        paths,
        ["transcript-pre-compact-001.jsonl", "summary-001.json"]
    );
}

#[test]
fn agent_archives_each_round() {
    let dir = temp_dir("agent-archive");
    let archive = dir.join("archive");
    let (out, _) = run_agent(
        &dir,
        &[
            "--archive",
            archive.to_str().unwrap(),
            "--session-id",
            "run-1",
        ],
    );
    assert_agent_ok(&out);
    let session = archive.join("run-1");
    let files: Vec<String> = files_under(&session)
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    // One summary and one transcript per round; two rounds at least
    // (since issue 38 a round may keep more recent turns, bringing a third).
    let rounds = files.iter().filter(|f| f.starts_with("summary-")).count();
    assert!(rounds >= 2, "{files:?}");
    let mut expected = vec!["events.jsonl".to_string()];
    expected.extend((1..=rounds).map(|r| format!("summary-{r:03}.json")));
    expected.extend((1..=rounds).map(|r| format!("transcript-pre-compact-{r:03}.jsonl")));
    assert_eq!(files, expected);
    for step in 1..=rounds {
        let summary: Json = serde_json::from_slice(
            &std::fs::read(session.join(format!("summary-{step:03}.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(summary["step"], step);
        assert_eq!(summary["version"], step);
        let transcript = std::fs::read_to_string(
            session.join(format!("transcript-pre-compact-{step:03}.jsonl")),
        )
        .unwrap();
        let messages = parse_jsonl(&transcript).unwrap();
        assert!(messages[1].text().contains(&format!("api_key={REDACTED}")));
    }
    for file in files_under(&session) {
        assert_no_secret(&file.display().to_string(), &std::fs::read(&file).unwrap());
    }
    let events = read_records(&session.join("events.jsonl"));
    assert_envelope(&events, "run-1");
    let steps: Vec<&Json> = named(&events, "compact.archival")
        .iter()
        .map(|a| &a["step"])
        .collect();
    let expected: Vec<Json> = (1..=rounds).flat_map(|r| [json!(r), json!(r)]).collect();
    assert_eq!(steps, expected.iter().collect::<Vec<_>>());
}

#[test]
fn archive_rounds_continue_across_runs() {
    // `ptc compact` run twice for one session: the second run's round is
    // step 2; it does not overwrite the first.
    let dir = temp_dir("archive-again");
    let archive = dir.join("archive");
    let args = ["--archive", archive.to_str().unwrap(), "--session-id", "s1"];
    let out = compact(&dir, &args, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let session = archive.join("s1");
    let first = std::fs::read(session.join("transcript-pre-compact-001.jsonl")).unwrap();
    let first_summary = std::fs::read(session.join("summary-001.json")).unwrap();
    let out = compact(&dir, &args, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let files: Vec<String> = files_under(&session)
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        files,
        [
            "events.jsonl",
            "summary-001.json",
            "summary-002.json",
            "transcript-pre-compact-001.jsonl",
            "transcript-pre-compact-002.jsonl"
        ]
    );
    assert_eq!(
        std::fs::read(session.join("transcript-pre-compact-001.jsonl")).unwrap(),
        first
    );
    assert_eq!(
        std::fs::read(session.join("summary-001.json")).unwrap(),
        first_summary
    );
    let summary: Json =
        serde_json::from_slice(&std::fs::read(session.join("summary-002.json")).unwrap()).unwrap();
    assert_eq!(summary["step"], 2);
    // events.jsonl: both runs, each numbered from 1.
    let events = read_records(&session.join("events.jsonl"));
    assert_eq!(events.len(), 12);
    assert_envelope(&events[..6], "s1");
    assert_envelope(&events[6..], "s1");
    let audits: Vec<(&Json, &str)> = named(&events, "compact.archival")
        .iter()
        .map(|a| (&a["step"], a["file_path"].as_str().unwrap()))
        .collect();
    assert_eq!(audits.len(), 4);
    assert_eq!(audits[2].0, 2);
    assert!(audits[2].1.ends_with("transcript-pre-compact-002.jsonl"));
    assert!(audits[3].1.ends_with("summary-002.json"));
}

#[test]
fn archive_failure_is_reported_not_fatal() {
    let dir = temp_dir("archive-broken");
    // The archive "directory" is a regular file.
    let archive = dir.join("not-a-dir");
    std::fs::write(&archive, "x").unwrap();
    let events = dir.join("events.jsonl");
    let out = compact(
        &dir,
        &[
            "--archive",
            archive.to_str().unwrap(),
            "--session-id",
            "s1",
            "--events",
            events.to_str().unwrap(),
        ],
        &[],
    );
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    let lines = trace_lines(&err);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("cannot archive compaction round")),
        "{err}"
    );
    let compacted = parse_jsonl(&std::fs::read_to_string(dir.join("out.jsonl")).unwrap()).unwrap();
    assert!(compacted.len() < SESSION_MESSAGES);
    let records = read_records(&events);
    assert_envelope(&records, "s1");
    let e = the_one(&records, "compact.error");
    assert_eq!(e["status"], "error");
    assert_eq!(e["error_type"], "ArchiveFailed");
    assert!(!e["fallback"].as_str().unwrap().is_empty());
    assert!(named(&records, "compact.archival").is_empty());
    assert_eq!(std::fs::read_to_string(&archive).unwrap(), "x");
}

#[test]
fn redaction_disabled_is_announced_first() {
    let dir = temp_dir("no-redaction");
    let archive = dir.join("archive");
    let events = dir.join("events.jsonl");
    let out = compact(
        &dir,
        &[
            "--archive",
            archive.to_str().unwrap(),
            "--session-id",
            "raw",
            "--events",
            events.to_str().unwrap(),
            "--no-redaction",
        ],
        &[],
    );
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        trace_lines(&err)
            .iter()
            .any(|l| l.contains("warning") && l.contains("redaction is off")),
        "{err}"
    );
    let records = read_records(&events);
    assert_envelope(&records, "raw");
    assert_eq!(records[0]["event"], "compact.redaction_disabled");
    assert_eq!(records[0]["severity"], "high");
    assert_eq!(named(&records, "compact.redaction_disabled").len(), 1);
    assert_eq!(
        read_records(&archive.join("raw/events.jsonl"))[0]["event"],
        "compact.redaction_disabled"
    );
    // Unredacted, as asked: the archive holds the input as it was.
    let transcript =
        std::fs::read_to_string(archive.join("raw/transcript-pre-compact-001.jsonl")).unwrap();
    assert_same_messages(
        &parse_jsonl(&transcript).unwrap(),
        &parse_jsonl(&session_jsonl()).unwrap(),
    );
}

// --- The archive in S3 (moto) ----------------------------------------------

/// A moto S3 server, killed when dropped.
struct Moto {
    child: Child,
    endpoint: String,
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Where `moto_server` is: `PTC_MOTO_SERVER`, else the venv that
/// `.ci/s3-venv` installs (`target/s3-venv`), installed here on first use
/// (pinned by tests/s3/requirements.txt; about half a minute, once).
fn moto_server_path() -> PathBuf {
    match std::env::var_os("PTC_MOTO_SERVER") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => {
            let root = Path::new(env!("CARGO_MANIFEST_DIR"));
            let path = root.join("target/s3-venv/bin/moto_server");
            if !path.is_file() {
                eprintln!("installing moto_server into target/s3-venv (.ci/s3-venv) ...");
                let status = Command::new("bash").arg(root.join(".ci/s3-venv")).status();
                if !matches!(status, Ok(s) if s.success()) {
                    eprintln!(".ci/s3-venv failed: {status:?}");
                }
            }
            path
        }
    }
}

fn start_moto(log: &Path) -> Result<Moto, String> {
    let path = moto_server_path();
    if !path.is_file() {
        return Err(format!("{} not found", path.display()));
    }
    let port = closed_port();
    let child = Command::new(&path)
        .args(["-H", "127.0.0.1", "-p", &port.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).map_err(|e| e.to_string())?)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", path.display()))?;
    let mut moto = Moto {
        child,
        endpoint: format!("http://127.0.0.1:{port}"),
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(Some(status)) = moto.child.try_wait() {
            let log = std::fs::read_to_string(log).unwrap_or_default();
            return Err(format!("moto_server exited ({status}):\n{log}"));
        }
        if let Ok(response) = ureq::get(&format!("{}/", moto.endpoint)).call() {
            if response.status().is_success() {
                return Ok(moto);
            }
        }
        if Instant::now() > deadline {
            return Err("moto_server did not answer within 60 s".into());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Moto, started for the test. Never a silent skip: without it the test
/// fails, saying what is missing (the README's set-up names Python 3).
fn moto_or_skip(log: &Path) -> Option<Moto> {
    match start_moto(log) {
        Ok(m) => Some(m),
        Err(e) => panic!(
            "moto_server cannot be started: {e} (.ci/s3-venv installs it with Python 3, or set PTC_MOTO_SERVER)"
        ),
    }
}

/// Credentials of the test bucket (moto accepts any).
const AWS_KEY: &str = "AKIDTESTPTCLISP";
const AWS_SECRET: &str = "ptc-test-secret";

/// The test's own client of one bucket, signing with [`AWS_KEY`] given
/// here: `S3Store` takes credentials only from the process environment,
/// which a test must not change while other tests run on other threads.
struct TestBucket {
    bucket: rusty_s3::Bucket,
    credentials: rusty_s3::Credentials,
}

impl TestBucket {
    fn new(endpoint: &str, name: &str) -> TestBucket {
        TestBucket {
            bucket: rusty_s3::Bucket::new(
                url::Url::parse(endpoint).unwrap(),
                rusty_s3::UrlStyle::Path,
                name.to_string(),
                "us-east-1".to_string(),
            )
            .unwrap(),
            credentials: rusty_s3::Credentials::new(AWS_KEY, AWS_SECRET),
        }
    }

    fn create(&self) {
        use rusty_s3::S3Action;
        let url = self
            .bucket
            .create_bucket(&self.credentials)
            .sign(Duration::from_secs(60));
        ureq::put(url.as_str())
            .send_empty()
            .expect("bucket created");
    }

    /// The object's bytes, or the HTTP status.
    fn get(&self, key: &str) -> Result<Vec<u8>, u16> {
        use rusty_s3::S3Action;
        let url = self
            .bucket
            .get_object(Some(&self.credentials), key)
            .sign(Duration::from_secs(60));
        match ureq::get(url.as_str()).call() {
            Ok(mut r) => Ok(r.body_mut().read_to_vec().unwrap()),
            Err(ureq::Error::StatusCode(status)) => Err(status),
            Err(e) => panic!("GET {key}: {e}"),
        }
    }

    /// Every key in the bucket.
    fn keys(&self) -> Vec<String> {
        use rusty_s3::S3Action;
        let url = self
            .bucket
            .list_objects_v2(Some(&self.credentials))
            .sign(Duration::from_secs(60));
        let xml = ureq::get(url.as_str())
            .call()
            .unwrap()
            .body_mut()
            .read_to_string()
            .unwrap();
        rusty_s3::actions::ListObjectsV2::parse_response(&xml)
            .unwrap()
            .contents
            .into_iter()
            .map(|o| o.key)
            .collect()
    }
}

#[test]
fn s3_storage_adapter() {
    let dir = temp_dir("s3");
    let Some(moto) = moto_or_skip(&dir.join("moto.log")) else {
        return;
    };
    let bucket = TestBucket::new(&moto.endpoint, "ptc-archive");
    bucket.create();
    let env = [
        ("AWS_ACCESS_KEY_ID", AWS_KEY),
        ("AWS_SECRET_ACCESS_KEY", AWS_SECRET),
        ("AWS_REGION", "us-east-1"),
        ("AWS_ENDPOINT_URL", moto.endpoint.as_str()),
    ];
    let events = dir.join("events.jsonl");
    let out = compact(
        &dir,
        &[
            "--archive",
            "s3://ptc-archive/runs/2026",
            "--session-id",
            "s1",
            "--events",
            events.to_str().unwrap(),
        ],
        &env,
    );
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(trace_lines(&err).is_empty(), "{err}");
    let records = read_records(&events);
    assert_envelope(&records, "s1");
    let locations: Vec<&str> = named(&records, "compact.archival")
        .iter()
        .map(|a| {
            assert_eq!(a["storage_adapter"], "s3");
            assert_eq!(a["step"], 1);
            a["file_path"].as_str().unwrap()
        })
        .collect();
    assert_eq!(
        locations,
        [
            "s3://ptc-archive/runs/2026/s1/transcript-pre-compact-001.jsonl",
            "s3://ptc-archive/runs/2026/s1/summary-001.json"
        ]
    );
    assert_eq!(
        bucket.keys(),
        [
            "runs/2026/s1/events.jsonl",
            "runs/2026/s1/summary-001.json",
            "runs/2026/s1/transcript-pre-compact-001.jsonl"
        ]
    );
    let transcript = bucket
        .get("runs/2026/s1/transcript-pre-compact-001.jsonl")
        .unwrap();
    assert_same_messages(
        &parse_jsonl(&String::from_utf8(transcript.clone()).unwrap()).unwrap(),
        &redacted_session(),
    );
    let summary_bytes = bucket.get("runs/2026/s1/summary-001.json").unwrap();
    let summary: Json = serde_json::from_slice(&summary_bytes).unwrap();
    assert_eq!(summary["step"], 1);
    assert_eq!(summary["session_id"], "s1");
    assert_eq!(summary["strategy"], "task_state");
    assert!(summary["summary"]
        .as_str()
        .unwrap()
        .contains("src/server.rs"));
    let archived_events = bucket.get("runs/2026/s1/events.jsonl").unwrap();
    assert_eq!(
        parse_records(&String::from_utf8(archived_events.clone()).unwrap()),
        records,
        "events.jsonl holds every event"
    );
    for object in [&transcript, &summary_bytes, &archived_events] {
        assert_no_secret("an S3 object", object);
    }
    assert!(String::from_utf8_lossy(&transcript).contains(&format!("api_key={REDACTED}")));

    // The same session compacted again by another process: round 2, and
    // events.jsonl keeps the first run's events.
    let out = compact(
        &dir,
        &[
            "--archive",
            "s3://ptc-archive/runs/2026",
            "--session-id",
            "s1",
        ],
        &env,
    );
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(trace_lines(&err).is_empty(), "{err}");
    assert_eq!(
        bucket.keys(),
        [
            "runs/2026/s1/events.jsonl",
            "runs/2026/s1/summary-001.json",
            "runs/2026/s1/summary-002.json",
            "runs/2026/s1/transcript-pre-compact-001.jsonl",
            "runs/2026/s1/transcript-pre-compact-002.jsonl"
        ]
    );
    assert_eq!(
        bucket
            .get("runs/2026/s1/transcript-pre-compact-001.jsonl")
            .unwrap(),
        transcript
    );
    let summary: Json =
        serde_json::from_slice(&bucket.get("runs/2026/s1/summary-002.json").unwrap()).unwrap();
    assert_eq!(summary["step"], 2);
    let both = parse_records(
        &String::from_utf8(bucket.get("runs/2026/s1/events.jsonl").unwrap()).unwrap(),
    );
    assert_eq!(both.len(), 2 * records.len());
    assert_eq!(both[..records.len()], records[..]);
    assert_envelope(&both[records.len()..], "s1");
    assert_eq!(
        named(&both[records.len()..], "compact.archival")[0]["file_path"],
        "s3://ptc-archive/runs/2026/s1/transcript-pre-compact-002.jsonl"
    );

    // A bucket that does not exist: reported, the compaction still done.
    let out = compact(
        &dir,
        &[
            "--archive",
            "s3://no-such-bucket/x",
            "--session-id",
            "s2",
            "--events",
            events.to_str().unwrap(),
        ],
        &env,
    );
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        trace_lines(&err)
            .iter()
            .any(|l| l.contains("cannot archive compaction round")
                && l.contains("s3://no-such-bucket/x/s2/")),
        "{err}"
    );
    assert!(dir.join("out.jsonl").is_file());
    let second: Vec<Json> = read_records(&events)
        .into_iter()
        .filter(|r| r["session_id"] == "s2")
        .collect();
    assert_envelope(&second, "s2");
    assert_eq!(
        the_one(&second, "compact.error")["error_type"],
        "ArchiveFailed"
    );
    assert!(named(&second, "compact.archival").is_empty());
}

impl TestBucket {
    /// The headers of a HEAD of `key` (names lowercased).
    fn head(&self, key: &str) -> Vec<(String, String)> {
        use rusty_s3::S3Action;
        let url = self
            .bucket
            .head_object(Some(&self.credentials), key)
            .sign(Duration::from_secs(60));
        let response = ureq::head(url.as_str()).call().expect("HEAD answers");
        response
            .headers()
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_ascii_lowercase(),
                    v.to_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    }

    fn header(&self, key: &str, name: &str) -> Option<String> {
        self.head(key)
            .into_iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
    }
}

/// `ptc compact` of [`session_jsonl`] archived to `target` with a
/// clean AWS environment: HOME is `home`, no credential variables, and
/// `env` on top.
fn compact_to_s3(dir: &Path, home: &Path, config: &str, env: &[(&str, &str)]) -> Output {
    let input = dir.join("session.jsonl");
    std::fs::write(&input, session_jsonl()).unwrap();
    let config_file = dir.join("archive.toml");
    std::fs::write(&config_file, config).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_ptc"));
    command
        .args(["compact", input.to_str().unwrap(), "-o"])
        .arg(dir.join("out.jsonl"))
        .args([
            "--max-context-tokens",
            "16000",
            "--session-id",
            "s1",
            "--config",
        ])
        .arg(&config_file)
        .current_dir(dir)
        .stdin(Stdio::null());
    for var in [
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_SHARED_CREDENTIALS_FILE",
        "AWS_CONFIG_FILE",
    ] {
        command.env_remove(var);
    }
    command.env("HOME", home);
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().expect("ptc runs")
}

#[test]
fn s3_archive_encrypts_and_signs_with_the_shared_profile() {
    let dir = temp_dir("s3-sse");
    let log = dir.join("moto.log");
    let Some(moto) = moto_or_skip(&log) else {
        return;
    };
    let bucket = TestBucket::new(&moto.endpoint, "ptc-sse");
    bucket.create();
    let home = dir.join("home");
    std::fs::create_dir_all(home.join(".aws")).unwrap();
    std::fs::write(
        home.join(".aws/credentials"),
        "[default]\naws_access_key_id = AKIDDEFAULTPTC\naws_secret_access_key = s1\n\n\
         [archiver]\naws_access_key_id = AKIDPROFILEPTC\naws_secret_access_key = s2\n",
    )
    .unwrap();
    let storage = "[storage]\nadapter = \"s3\"\nbucket = \"ptc-sse\"\nprefix = \"kms\"\n\
                   encryption = \"sse-kms\"\nkms_key_id = \"alias/ptc-archive\"\n";
    let endpoint = moto.endpoint.as_str();
    let out = compact_to_s3(
        &dir,
        &home,
        storage,
        &[
            ("AWS_PROFILE", "archiver"),
            ("AWS_REGION", "us-east-1"),
            ("AWS_ENDPOINT_URL", endpoint),
        ],
    );
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(trace_lines(&err).is_empty(), "{err}");
    let key = "kms/s1/summary-001.json";
    assert_eq!(
        bucket
            .header(key, "x-amz-server-side-encryption")
            .as_deref(),
        Some("aws:kms")
    );
    let kms = bucket
        .header(key, "x-amz-server-side-encryption-aws-kms-key-id")
        .unwrap_or_default();
    assert!(kms.contains("ptc-archive"), "{kms}");
    let requests = std::fs::read_to_string(&log).unwrap();
    assert!(
        requests.contains("X-Amz-Credential=AKIDPROFILEPTC"),
        "signed with the profile's key:\n{requests}"
    );
    assert!(!requests.contains("AKIDDEFAULTPTC"));

    // SSE-S3, with the profile from a config file named by
    // AWS_CONFIG_FILE (its section is `[profile NAME]`).
    std::fs::write(
        dir.join("aws-config"),
        "[profile cfg]\nregion = us-east-1\naws_access_key_id = AKIDCONFIGPTC\naws_secret_access_key = s3\n",
    )
    .unwrap();
    let config_file = dir.join("aws-config");
    let out = compact_to_s3(
        &dir,
        &dir.join("nowhere"),
        "[storage]\nadapter = \"s3\"\nbucket = \"ptc-sse\"\nprefix = \"aes\"\nencryption = \"sse-s3\"\n",
        &[
            ("AWS_PROFILE", "cfg"),
            ("AWS_CONFIG_FILE", config_file.to_str().unwrap()),
            ("AWS_ENDPOINT_URL", endpoint),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        bucket
            .header(
                "aes/s1/transcript-pre-compact-001.jsonl",
                "x-amz-server-side-encryption"
            )
            .as_deref(),
        Some("AES256")
    );
    let requests = std::fs::read_to_string(&log).unwrap();
    assert!(
        requests.contains("X-Amz-Credential=AKIDCONFIGPTC"),
        "{requests}"
    );

    // A profile that no file has: a clear error before anything runs.
    let out = compact_to_s3(
        &dir,
        &home,
        storage,
        &[("AWS_PROFILE", "missing"), ("AWS_ENDPOINT_URL", endpoint)],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("AWS_PROFILE is `missing` but no credentials for it were found"),
        "{err}"
    );
}

// --- Every corpus secret kind, through every export (issue 38) -------------

/// A session holding one secret of every kind in the redaction corpus
/// (`tests/redaction/`): in a request, in a tool call's arguments (as
/// text and under secret-named keys) and in a tool result. Returns the
/// lines and, per kind, the strings that must not be exported; the
/// markers under secret-named keys must not reach the digest either.
fn corpus_session() -> (String, Vec<String>, Vec<String>) {
    let mut lines =
        vec![json!({"role": "system", "content": "You are an operations agent."}).to_string()];
    let mut secrets = Vec::new();
    let mut markers = Vec::new();
    for (t, (kind, text, kind_secrets)) in crate::redaction::corpus::one_of_each_kind()
        .into_iter()
        .enumerate()
    {
        let marker = format!("Mk{t}x&Q9-{}", kind.len());
        let id = format!("call_{t}");
        lines.push(json!({"role": "user", "content": format!("Step {t} ({kind}): {text}\n{}", "Context. ".repeat(40))}).to_string());
        let arguments = json!({
            "path": format!("deploy/{t}.yaml"),
            "body": text,
            "password": marker,
            "auth": {"user": "ops", "pass": marker},
            "headers": {"X-Api-Key": marker},
        })
        .to_string();
        lines.push(
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function", "function": {"name": "http_post", "arguments": arguments}}]})
                .to_string(),
        );
        lines.push(json!({"role": "tool", "tool_call_id": id, "content": format!("echo: {text}\n{}", "ok ".repeat(60))}).to_string());
        lines
            .push(json!({"role": "assistant", "content": format!("Posted step {t}.")}).to_string());
        secrets.extend(kind_secrets.into_iter().filter(|s| !s.is_empty()));
        markers.push(marker);
    }
    (lines.join("\n") + "\n", secrets, markers)
}

#[test]
fn exports_hold_no_corpus_secret() {
    let server = Ingest::start(Answer::Ok);
    let dir = temp_dir("corpus-kinds");
    let (session, secrets, markers) = corpus_session();
    assert!(secrets.len() >= 40, "{} secrets", secrets.len());
    let input = dir.join("session.jsonl");
    std::fs::write(&input, &session).unwrap();
    let events = dir.join("events.jsonl");
    let archive = dir.join("archive");
    let output = dir.join("out.jsonl");
    let (out, _) = ptc_in(
        &dir,
        &[
            "compact",
            input.to_str().unwrap(),
            "-o",
            output.to_str().unwrap(),
            "--max-context-tokens",
            "6000",
            "--events",
            events.to_str().unwrap(),
            "--events-url",
            &server.url(),
            "--archive",
            archive.to_str().unwrap(),
            "--session-id",
            "kinds",
        ],
        &[],
    );
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    // The summary files and transcript of the archive, the events file.
    let mut exported: Vec<(String, Vec<u8>)> = files_under(&archive)
        .into_iter()
        .map(|f| (f.display().to_string(), std::fs::read(&f).unwrap()))
        .collect();
    assert!(
        exported
            .iter()
            .any(|(name, _)| name.contains("summary-001.json")),
        "a summary file: {exported:?}"
    );
    exported.push(("events file".into(), std::fs::read(&events).unwrap()));
    // The posts arrive in the background: wait for the file's count.
    let written = read_records(&events).len();
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.posts().len() < written && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let posts = server.posts();
    assert_eq!(posts.len(), written, "every event is posted");
    for (i, p) in posts.iter().enumerate() {
        exported.push((format!("/ingest post {i}"), p.body.clone()));
    }
    for (what, bytes) in &exported {
        let s = String::from_utf8_lossy(bytes);
        for secret in secrets.iter().chain(&markers) {
            assert!(
                !s.contains(secret.as_str()),
                "{what} leaks `{secret}`:\n{s}"
            );
        }
    }
    // The summary in the history itself holds no value of a
    // secret-named argument.
    let compacted = parse_jsonl(&std::fs::read_to_string(&output).unwrap()).unwrap();
    let summary = compacted
        .iter()
        .find(|m| summary_version(m).is_some())
        .expect("a summary")
        .text();
    for marker in &markers {
        assert!(
            !summary.contains(marker.as_str()),
            "the digest copies `{marker}`:\n{summary}"
        );
    }
    eprintln!(
        "exports_hold_no_corpus_secret: {} secrets of every kind, {} exported documents, {} posts",
        secrets.len(),
        exported.len(),
        posts.len()
    );
}
