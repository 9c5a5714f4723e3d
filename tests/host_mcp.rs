//! `ptc mcp-server` at its edges (issue 40), driven by raw JSON-RPC over
//! its stdio: memory does not grow with the programs run, a program over
//! the 4 MiB limit is refused, a request over the 16 MiB line limit gets
//! an error response (and the server goes on); and on the client side a
//! server whose working directory is missing is reported as such.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};

use crate::util::text;

struct Server {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Server {
    fn start() -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ptc"))
            .arg("mcp-server")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        let mut server = Server {
            child,
            input,
            output,
        };
        server.send(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2024-11-05", "capabilities": {},
                       "clientInfo": {"name": "test", "version": "1"}}}));
        server.answer(&json!(0));
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    fn send(&mut self, message: &Json) {
        self.send_line(&message.to_string());
    }

    fn send_line(&mut self, line: &str) {
        self.input.write_all(line.as_bytes()).unwrap();
        self.input.write_all(b"\n").unwrap();
        self.input.flush().unwrap();
    }

    /// The next message with `id`.
    fn answer(&mut self, id: &Json) -> Json {
        loop {
            let mut line = String::new();
            let n = self.output.read_line(&mut line).unwrap();
            assert!(n > 0, "the server closed its output waiting for {id}");
            let message: Json = serde_json::from_str(&line).unwrap();
            if &message["id"] == id {
                return message;
            }
        }
    }

    /// The next message, whatever its id.
    fn next_message(&mut self) -> Json {
        let mut line = String::new();
        let n = self.output.read_line(&mut line).unwrap();
        assert!(n > 0, "the server closed its output");
        serde_json::from_str(&line).unwrap()
    }

    /// The answer to a line the server cannot take as a request: an
    /// error with `"id": null` (the key present), its code and message.
    fn unreadable(&mut self, line: &str) -> (i64, String) {
        self.send_line(line);
        let answer = self.next_message();
        assert_eq!(answer.get("id"), Some(&Json::Null), "{line}: {answer}");
        assert!(answer.get("result").is_none(), "{line}: {answer}");
        (
            answer["error"]["code"].as_i64().unwrap(),
            answer["error"]["message"].as_str().unwrap().to_string(),
        )
    }

    /// `run` with `program` as request `id`.
    fn run(&mut self, id: u64, program: &str) -> Json {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "run", "arguments": {"program": program}}}));
        self.answer(&json!(id))
    }

    /// The server's peak resident memory so far, in KiB.
    fn peak_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn text_of(answer: &Json) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

#[test]
fn programs_run_are_not_kept() {
    let mut server = Server::start();
    // Each call sends 0.9 MB of program; the session keeps what programs
    // define, not their text.
    let program = format!("(count \"{}\")", "x".repeat(900_000));
    for id in 1..=20 {
        assert_eq!(text_of(&server.run(id, &program)), "900000");
    }
    let warm = server.peak_kib();
    for id in 21..=120 {
        assert_eq!(text_of(&server.run(id, &program)), "900000");
    }
    let peak = server.peak_kib();
    // 100 more programs of 0.9 MB: 90 MB if they were kept.
    assert!(peak < warm + 30_000, "{warm} KiB -> {peak} KiB");
    // Definitions do persist, and `*1` still works.
    server.run(200, "(def kept 41)");
    assert_eq!(text_of(&server.run(201, "(inc kept)")), "42");
    assert_eq!(text_of(&server.run(202, "*1")), "42");
}

#[test]
fn a_program_over_the_limit_is_refused_and_the_server_goes_on() {
    let mut server = Server::start();
    let program = format!("(count \"{}\")", "x".repeat(5_000_000));
    let answer = server.run(1, &program);
    assert_eq!(answer["result"]["isError"], true);
    assert_eq!(
        text_of(&answer),
        "error: the program is larger than the limit of 4194304 bytes (4 MiB) for program text \
         (input-limit-exceeded)"
    );
    assert_eq!(text_of(&server.run(2, "(+ 1 2)")), "3");
}

#[test]
fn a_request_over_the_line_limit_gets_an_error_response() {
    let mut server = Server::start();
    // 40 MB of program: the request is never read, but answered.
    let program = format!("(count \"{}\")", "x".repeat(40_000_000));
    // The bound only catches a server that never answers: 40 MB pass
    // through two scanners in a debug build, on a machine that may be
    // busy.
    let started = Instant::now();
    let answer = server.run(7, &program);
    assert!(
        started.elapsed() < Duration::from_secs(120),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("the request (400001")
            && message.ends_with(
                "bytes) is larger than the limit of 16777216 bytes (16 MiB) for one message; it \
                 was not read (a `run` program may have at most 4 MiB)"
            ),
        "{message}"
    );
    // The id may come last and be a string; a notification that long
    // gets nothing, and the server still answers.
    let padding = "p".repeat(17 << 20);
    server.send_line(&format!(
        r#"{{"jsonrpc": "2.0", "method": "tools/call", "params": {{"name": "run", "arguments": {{"program": "{padding}"}}}}, "id": "late"}}"#
    ));
    let answer = server.answer(&json!("late"));
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    server.send_line(&format!(
        r#"{{"jsonrpc": "2.0", "method": "notifications/progress", "params": {{"x": "{padding}"}}}}"#
    ));
    assert_eq!(text_of(&server.run(8, "(* 6 7)")), "42");
}

#[test]
fn a_missing_working_directory_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-dir");
    let file = dir.path().join("file");
    std::fs::write(&file, "").unwrap();
    for (cwd, what) in [(&missing, "does not exist"), (&file, "is not a directory")] {
        let manifest = dir.path().join("tools.json");
        std::fs::write(
            &manifest,
            json!({"mcp_servers": {"srv": {"command": "python3", "cwd": cwd}}}).to_string(),
        )
        .unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_ptc"))
            .args(["eval", "--tools", manifest.to_str().unwrap(), "1"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains(&format!(
                "MCP server `srv` could not start `python3`: its working directory `{}` {what}",
                cwd.display()
            )),
            "{stderr}"
        );
    }
}

/// Protocol errors get JSON-RPC error codes as the MCP specification
/// has them: an unknown tool is invalid params (-32602, naming the
/// tools), an unknown method is method not found (-32601); a mistake in
/// the program or its arguments stays a tool result marked `isError`, which
/// the model can read and correct. The server goes on after each.
#[test]
fn protocol_errors_carry_the_specified_codes() {
    let mut server = Server::start();
    server.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "nope", "arguments": {}}}));
    let answer = server.answer(&json!(1));
    assert_eq!(answer["error"]["code"], json!(-32602), "{answer}");
    assert_eq!(
        answer["error"]["message"],
        json!("no tool `nope`; the tools are `run`, `reset` and `describe`")
    );
    server.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "no/such"}));
    let answer = server.answer(&json!(2));
    assert_eq!(answer["error"]["code"], json!(-32601), "{answer}");
    server.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "run", "arguments": {}}}));
    let answer = server.answer(&json!(3));
    assert_eq!(answer["result"]["isError"], json!(true), "{answer}");
    assert!(
        text_of(&answer).contains("`run` needs `program`"),
        "{answer}"
    );
    let answer = server.run(4, "(+ 1");
    assert_eq!(answer["result"]["isError"], json!(true), "{answer}");
    assert_eq!(text_of(&server.run(5, "(+ 1 2)")), "3");
}

/// Every error path of the server against JSON-RPC 2.0 and the MCP
/// specification: a line that is not JSON is a Parse error (-32700) and
/// JSON that is no request (a batch, a scalar, an object without
/// `jsonrpc`) an Invalid Request (-32600), both with `"id": null`; a
/// `tools/call` whose params do not fit (no `name`, `arguments` not an
/// object, no params) is Invalid Params (-32602) with its id, as is an
/// unknown tool; an unknown method is Method Not Found (-32601). The
/// server answers each once and goes on.
#[test]
fn every_error_path_has_its_json_rpc_code() {
    let mut server = Server::start();
    for line in [
        "not json",
        r#"{"jsonrpc": "2.0", "id": 5, "method": "ping""#,
        r#"{"jsonrpc": "2.0", "id": 6, "method": "ping"} trailing"#,
    ] {
        let (code, message) = server.unreadable(line);
        assert_eq!(code, -32700, "{line}");
        assert!(
            message.starts_with("Parse error: the message is not JSON ("),
            "{message}"
        );
    }
    for line in [
        r#"[{"jsonrpc": "2.0", "id": 8, "method": "ping"}]"#,
        "[]",
        "42",
        r#"{"id": 9, "method": "ping"}"#,
    ] {
        assert_eq!(server.unreadable(line).0, -32600, "{line}");
    }
    let bad_params = [
        json!({"arguments": {"program": "1"}}),
        json!({"name": 5}),
        json!({"name": "run", "arguments": "(+ 1 2)"}),
    ];
    for (id, params) in (10..).zip(bad_params) {
        server.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}));
        let answer = server.answer(&json!(id));
        assert_eq!(answer["error"]["code"], json!(-32602), "{answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with("invalid params of `tools/call` (")
                && message.ends_with(
                    "): it needs `name`, the tool (a string), and may have `arguments` (an object)"
                ),
            "{message}"
        );
    }
    server.send(&json!({"jsonrpc": "2.0", "id": 20, "method": "tools/call"}));
    let answer = server.answer(&json!(20));
    assert_eq!(answer["error"]["code"], json!(-32602), "{answer}");
    server.send(&json!({"jsonrpc": "2.0", "id": 21, "method": "tools/call",
        "params": {"name": "nope", "arguments": {}}}));
    assert_eq!(server.answer(&json!(21))["error"]["code"], json!(-32602));
    server.send(&json!({"jsonrpc": "2.0", "id": "m", "method": "no/such", "params": {}}));
    let answer = server.answer(&json!("m"));
    assert_eq!(answer["error"]["code"], json!(-32601), "{answer}");
    assert_eq!(
        answer["error"]["message"],
        json!("no method `no/such`; this server has `initialize`, `ping`, `tools/list` and `tools/call`")
    );
    // Blank lines are no messages: nothing comes back for them, so the
    // next answer is the ping's.
    server.send_line("");
    server.send_line("   ");
    server.send(&json!({"jsonrpc": "2.0", "id": 22, "method": "ping"}));
    let answer = server.next_message();
    assert_eq!(answer["id"], json!(22), "{answer}");
    assert_eq!(answer["result"], json!({}), "{answer}");
    assert_eq!(text_of(&server.run(23, "(+ 1 2)")), "3");
}
