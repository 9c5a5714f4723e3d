//! The agent layer's offline parts: reply parsing, the scripted provider,
//! the tool manifest, command tools (real subprocesses) and transcripts.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};

use ptc_lisp::agent::parse::{extract_program, ExtractionRule, NO_CODE_INSTRUCTION};
use ptc_lisp::agent::tools::{ManifestFormat, DEFAULT_TOOL_TIMEOUT};
use ptc_lisp::agent::transcript::read_transcript;
use ptc_lisp::agent::{
    provider_from_spec, ChatMessage, ChatRequest, CommandTool, LlmProvider, ManifestError,
    ProviderError, ScriptedProvider, ToolImpl, ToolManifest, TranscriptEntry, TranscriptToolCall,
    TranscriptWriter, Usage,
};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

// ---- reply parsing ----

fn program(reply: &str) -> Option<(String, ExtractionRule)> {
    extract_program(reply).map(|p| (p.source, p.rule))
}

#[test]
fn fenced_clojure_block_is_the_program() {
    let reply =
        "I'll count the users.\n\n```clojure\n(count data/users)\n```\n\nThis returns a number.";
    assert_eq!(
        program(reply),
        Some(("(count data/users)".into(), ExtractionRule::Fenced))
    );
    for tag in ["clj", "lisp", "ptc", "CLOJURE", "ptc-lisp"] {
        let reply = format!("```{tag}\n(inc 1)\n```");
        assert_eq!(program(&reply).unwrap().0, "(inc 1)", "tag {tag}");
    }
}

#[test]
fn untagged_block_counts() {
    assert_eq!(
        program("Here:\n```\n(def x 1)\nx\n```").unwrap().0,
        "(def x 1)\nx"
    );
}

#[test]
fn several_blocks_are_concatenated_in_order() {
    let reply = "Define:\n```clojure\n(defn total [xs] (reduce + xs))\n```\n\
                 Use it:\n```\n(total [1 2 3])\n```\nDone.";
    let p = extract_program(reply).unwrap();
    assert_eq!(p.source, "(defn total [xs] (reduce + xs))\n(total [1 2 3])");
    assert_eq!(p.blocks, 2);
    assert_eq!(p.rule, ExtractionRule::Fenced);
}

#[test]
fn blocks_in_other_languages_are_ignored() {
    let reply =
        "The data looks like:\n```json\n{\"a\": 1}\n```\nSo:\n```clojure\n(:a data/x)\n```\n\
                 In Python:\n```python\nprint(1)\n```";
    assert_eq!(program(reply).unwrap().0, "(:a data/x)");
    assert_eq!(program("```json\n[1, 2]\n```"), None);
    assert_eq!(program("```python\n(1, 2)\n```"), None);
}

#[test]
fn bare_code_is_taken_whole() {
    // The last form may be an atom: the program's value.
    assert_eq!(program("(def x 1)\nx").unwrap().0, "(def x 1)\nx");
    let reply = "  (def xs (range 5))\n(reduce + xs)\n";
    assert_eq!(
        program(reply),
        Some((
            "(def xs (range 5))\n(reduce + xs)".into(),
            ExtractionRule::Bare
        ))
    );
}

#[test]
fn prose_is_no_program() {
    assert_eq!(program("I think the answer is 42."), None);
    assert_eq!(program(""), None);
    // Code after prose, or code that does not read, is not bare code.
    assert_eq!(program("The call is (+ 1 2)"), None);
    assert_eq!(program("(+ 1 2"), None);
    assert_eq!(program("(+ 1 2) is the answer, I think."), None);
    assert_eq!(program("(def total 10)\nThe total is ten."), None);
    assert_eq!(program("```clojure\n   \n```"), None);
    assert!(NO_CODE_INSTRUCTION.contains("```clojure"));
}

#[test]
fn an_unclosed_fence_runs_to_the_end() {
    assert_eq!(
        program("```clojure\n(println \"cut off\")\n(+ 1")
            .unwrap()
            .0,
        "(println \"cut off\")\n(+ 1"
    );
}

// ---- scripted provider ----

fn ask(p: &dyn LlmProvider, text: &str) -> Result<String, ProviderError> {
    p.complete(&ChatRequest::new(vec![ChatMessage::user(text)]))
        .map(|r| r.content)
}

#[test]
fn scripted_provider_replays_a_json_array_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "s.json",
        r#"["(+ 1 2)", "```clojure\n(return 3)\n```"]"#,
    );
    let spec = format!("script:{}", path.display());
    let p = provider_from_spec(&spec, Default::default()).unwrap();
    assert_eq!(p.name(), spec);
    assert_eq!(ask(&*p, "one").unwrap(), "(+ 1 2)");
    assert_eq!(ask(&*p, "two").unwrap(), "```clojure\n(return 3)\n```");
    let err = ask(&*p, "three").unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "The script `{}` has no reply for call 3; it holds 2 replies",
            path.display()
        )
    );
    assert!(matches!(
        err,
        ProviderError::ScriptExhausted { used: 2, .. }
    ));
}

#[test]
fn scripted_provider_replays_json_lines_with_usage() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "s.jsonl",
        "{\"content\": \"(def a 1)\", \"usage\": {\"input_tokens\": 10, \"output_tokens\": 4}}\n\
         \n\
         {\"content\": \"(return a)\"}\n",
    );
    let p = ScriptedProvider::from_file(&path).unwrap();
    assert_eq!(p.remaining(), 2);
    let first = p
        .complete(&ChatRequest::new(vec![ChatMessage::user("go")]))
        .unwrap();
    assert_eq!(first.content, "(def a 1)");
    assert_eq!(
        first.usage,
        Some(Usage {
            input_tokens: 10,
            output_tokens: 4
        })
    );
    let second = p.complete(&ChatRequest::default()).unwrap();
    assert_eq!(
        (second.content.as_str(), second.usage),
        ("(return a)", None)
    );
    assert_eq!(p.remaining(), 0);
    assert_eq!(p.requests()[0].messages, vec![ChatMessage::user("go")]);
}

#[test]
fn scripted_provider_records_requests_and_exhausts_in_memory() {
    let p = ScriptedProvider::new(vec!["(+ 1 1)".into()]);
    assert_eq!(ask(&p, "first").unwrap(), "(+ 1 1)");
    let err = ask(&p, "second").unwrap_err();
    assert_eq!(
        err.to_string(),
        "The script `inline` has no reply for call 2; it holds 1 reply"
    );
    let seen: Vec<String> = p
        .requests()
        .iter()
        .map(|r| r.messages[0].content.clone())
        .collect();
    assert_eq!(seen, vec!["first", "second"]);
}

#[test]
fn bad_script_files_are_config_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "bad.jsonl", "{\"content\": \"ok\"}\nnot json\n");
    let err = ScriptedProvider::from_file(&path).unwrap_err();
    assert!(matches!(err, ProviderError::Config(_)));
    assert!(
        err.to_string().starts_with(&format!(
            "The script `{}`, line 2: bad JSON",
            path.display()
        )),
        "{err}"
    );
    let missing = dir.path().join("nope.json");
    let err = ScriptedProvider::from_file(&missing).unwrap_err();
    assert!(
        err.to_string().starts_with("Could not read the script `"),
        "{err}"
    );
}

// ---- tool manifest ----

const JSON_MANIFEST: &str = r#"{"tools": {
  "search": {"signature": "(query :string) -> :string",
             "description": "Search the wiki",
             "command": ["my-search", "--json"], "timeout_ms": 5000},
  "inventory": {"signature": "-> :map", "description": "Stock levels",
                "response": {"laptop": 3, "tags": ["a", "b"]}}}}"#;

const TOML_MANIFEST: &str = r#"
[tools.search]
signature = "(query :string) -> :string"
description = "Search the wiki"
command = ["my-search", "--json"]
timeout_ms = 5000

[tools.inventory]
signature = "-> :map"
description = "Stock levels"
response = { laptop = 3, tags = ["a", "b"] }
"#;

#[test]
fn json_and_toml_manifests_load_alike() {
    let dir = tempfile::tempdir().unwrap();
    let from_json = ToolManifest::load(&write(dir.path(), "tools.json", JSON_MANIFEST)).unwrap();
    let from_toml = ToolManifest::load(&write(dir.path(), "tools.toml", TOML_MANIFEST)).unwrap();
    assert_eq!(from_json, from_toml);
    assert_eq!(
        from_json.names().collect::<Vec<_>>(),
        vec!["search", "inventory"]
    );

    let search = from_json.get("search").unwrap();
    assert_eq!(search.signature, "(query :string) -> :string");
    assert_eq!(search.description, "Search the wiki");
    match &search.implementation {
        ToolImpl::Command(c) => {
            assert_eq!(c.argv, vec!["my-search", "--json"]);
            assert_eq!(c.timeout, Duration::from_millis(5000));
        }
        other => panic!("expected a command, got {other:?}"),
    }
    let inventory = from_json.get("inventory").unwrap();
    assert_eq!(
        inventory.call(json!({})).unwrap(),
        json!({"laptop": 3, "tags": ["a", "b"]})
    );
}

#[test]
fn command_timeout_has_a_default() {
    let m = ToolManifest::parse(
        r#"{"tools": {"t": {"signature": "-> :int", "command": ["true"]}}}"#,
        "t.json",
        ManifestFormat::Json,
    )
    .unwrap();
    match &m.tools[0].implementation {
        ToolImpl::Command(c) => assert_eq!(c.timeout, DEFAULT_TOOL_TIMEOUT),
        other => panic!("{other:?}"),
    }
    assert_eq!(m.tools[0].description, "");
}

fn manifest_error(tools: Json) -> String {
    ToolManifest::from_json(&json!({ "tools": tools }), "tools.json")
        .unwrap_err()
        .to_string()
}

#[test]
fn bad_tool_declarations_name_file_tool_and_field() {
    let sig = "-> :int";
    let cases = [
        (
            json!({"search": {"signature": sig, "command": []}}),
            "tools.json: tool `search`: `command` must be a non-empty array of strings",
        ),
        (
            json!({"search": {"signature": sig, "command": ["ok", 1]}}),
            "tools.json: tool `search`: `command` must be a non-empty array of strings",
        ),
        (
            json!({"search": {"signature": sig, "command": "my-search --json"}}),
            "tools.json: tool `search`: `command` must be a non-empty array of strings",
        ),
        (
            json!({"x": {"signature": sig, "command": ["a"], "response": 1}}),
            "tools.json: tool `x`: needs either `command` or `response`, not both",
        ),
        (
            json!({"x": {"signature": sig}}),
            "tools.json: tool `x`: needs either `command` or `response`",
        ),
        (
            json!({"x": {"response": 1}}),
            "tools.json: tool `x`: `signature` is missing; write e.g. \"(query :string) -> :string\"",
        ),
        (
            json!({"x": {"signature": 3, "response": 1}}),
            "tools.json: tool `x`: `signature` must be a non-empty string",
        ),
        (
            json!({"x": {"signature": sig, "description": ["a"], "response": 1}}),
            "tools.json: tool `x`: `description` must be a string",
        ),
        (
            json!({"x": {"signature": sig, "comand": ["a"]}}),
            "tools.json: tool `x`: unknown field `comand`; did you mean `command`?",
        ),
        (
            json!({"x": {"signature": sig, "response": 1, "timeout_ms": 10}}),
            "tools.json: tool `x`: `timeout_ms` applies only to `command` tools",
        ),
        (
            json!({"x": {"signature": sig, "command": ["a"], "timeout_ms": -5}}),
            "tools.json: tool `x`: `timeout_ms` must be a whole number of milliseconds from 1 to 86400000",
        ),
        (
            json!({"x": "my-search"}),
            "tools.json: tool `x`: the declaration must be a table with `signature` and `command` or `response`",
        ),
        (
            json!({"bad name": {"signature": sig, "response": 1}}),
            "tools.json: tool `bad name`: the name must be a symbol: letters, digits, `-`, `_`, `?`, `!` and `*`, starting with a letter or `_`",
        ),
    ];
    for (tools, expected) in cases {
        assert_eq!(manifest_error(tools.clone()), expected, "for {tools}");
    }
}

#[test]
fn bad_manifest_files_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let err = |name: &str, text: &str| {
        ToolManifest::load(&write(dir.path(), name, text))
            .unwrap_err()
            .to_string()
    };
    let file = |name: &str| dir.path().join(name).display().to_string();

    let e = err("a.json", "{\"tools\": {");
    assert!(
        e.starts_with(&format!("{}: bad JSON: ", file("a.json"))),
        "{e}"
    );
    let e = err("b.toml", "[tools.x\nsignature = 1");
    assert!(
        e.starts_with(&format!("{}: bad TOML: ", file("b.toml"))),
        "{e}"
    );
    let e = err("c.json", r#"{"tool": {}}"#);
    assert_eq!(
        e,
        format!(
            "{}: unknown top-level field `tool`; a manifest is an object holding `tools`, \
             a table from tool names to declarations, and/or `mcp_servers`, a table from \
             server names to MCP server declarations",
            file("c.json")
        )
    );
    let e = err("d.json", "{}");
    assert!(
        e.starts_with(&format!("{}: `tools` is missing", file("d.json"))),
        "{e}"
    );
    let e = err("e.json", r#"{"tools": ["search"]}"#);
    assert!(
        e.starts_with(&format!("{}: `tools` must be a table", file("e.json"))),
        "{e}"
    );
    let e = err(
        "f.toml",
        "[tools.x]\nsignature = \"-> :int\"\ncommand = []\n",
    );
    assert_eq!(
        e,
        format!(
            "{}: tool `x`: `command` must be a non-empty array of strings",
            file("f.toml")
        )
    );

    let missing = dir.path().join("missing.json");
    match ToolManifest::load(&missing).unwrap_err() {
        ManifestError::Read { file, .. } => assert_eq!(file, missing.display().to_string()),
        other => panic!("{other:?}"),
    }
}

// ---- command tools (real subprocesses) ----

/// A tool running a shell script written into `dir`. Scripts run through
/// `sh` rather than being executed directly, so a script written a moment
/// ago cannot hit "text file busy" while another test thread forks.
fn script_tool(dir: &Path, name: &str, body: &str, timeout: Duration) -> CommandTool {
    let path = write(dir, &format!("{name}.sh"), &format!("#!/bin/sh\n{body}\n"));
    CommandTool::new(name, vec!["sh".into(), path.display().to_string()], timeout)
}

#[cfg(unix)]
#[test]
fn echo_tool_returns_its_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let tool = script_tool(dir.path(), "echo", "cat", Duration::from_secs(5));
    let args = json!({"query": "laptops", "limit": 3, "tags": ["a", "ü"]});
    assert_eq!(tool.call(args.clone()).unwrap(), args);
    // A program run directly, without a script.
    let cat = CommandTool::new("cat", vec!["cat".into()], Duration::from_secs(5));
    assert_eq!(cat.call(json!([1, "two"])).unwrap(), json!([1, "two"]));
}

#[cfg(unix)]
#[test]
fn tool_printing_bad_json_is_an_error_quoting_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let tool = script_tool(
        dir.path(),
        "bad",
        "echo 'Results: laptop, phone'",
        Duration::from_secs(5),
    );
    let err = tool.call(json!({})).unwrap_err();
    assert!(
        err.starts_with("Tool `bad` printed output that is not JSON ("),
        "{err}"
    );
    assert!(err.ends_with("): Results: laptop, phone"), "{err}");

    let long = script_tool(
        dir.path(),
        "long",
        "i=0; while [ $i -lt 100 ]; do printf 'xxxxxxxxxx'; i=$((i+1)); done",
        Duration::from_secs(5),
    );
    let err = long.call(json!({})).unwrap_err();
    let quoted = err.split("): ").nth(1).unwrap();
    assert_eq!(quoted.chars().count(), 201, "200 characters and `…`: {err}");

    let silent = script_tool(dir.path(), "silent", "true", Duration::from_secs(5));
    assert_eq!(
        silent.call(json!({})).unwrap_err(),
        "Tool `silent` printed nothing; a tool must print one JSON value"
    );
}

#[cfg(unix)]
#[test]
fn failing_tool_reports_exit_code_and_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let tool = script_tool(
        dir.path(),
        "broken",
        "cat > /dev/null\necho 'disk on fire' >&2\necho '{}'\nexit 3",
        Duration::from_secs(5),
    );
    assert_eq!(
        tool.call(json!({"x": 1})).unwrap_err(),
        "Tool `broken` failed with exit code 3: disk on fire"
    );
}

#[cfg(unix)]
#[test]
fn slow_tool_is_killed_at_its_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let tool = script_tool(dir.path(), "slow", "sleep 10", Duration::from_millis(200));
    let started = Instant::now();
    let err = tool.call(json!({})).unwrap_err();
    let elapsed = started.elapsed();
    assert_eq!(err, "Tool `slow` timed out after 200 ms and was killed");
    assert!(elapsed < Duration::from_secs(2), "took {elapsed:?}");
}

#[cfg(unix)]
#[test]
fn background_process_holding_output_cannot_hang_the_call() {
    let dir = tempfile::tempdir().unwrap();
    // The script exits at once, but `sleep` keeps standard output open.
    let tool = script_tool(
        dir.path(),
        "leaky",
        "echo 1\nsleep 10 &",
        Duration::from_millis(300),
    );
    let started = Instant::now();
    let err = tool.call(json!({})).unwrap_err();
    assert!(err.contains("timed out after 300 ms"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[cfg(unix)]
#[test]
fn tool_that_ignores_large_input_still_answers() {
    let dir = tempfile::tempdir().unwrap();
    let tool = script_tool(dir.path(), "deaf", "echo '[1, 2]'", Duration::from_secs(5));
    let big = json!({"blob": "x".repeat(1 << 20)});
    assert_eq!(tool.call(big).unwrap(), json!([1, 2]));
}

#[test]
fn missing_program_is_a_clear_error() {
    let tool = CommandTool::new(
        "ghost",
        vec!["/nonexistent/ptc-tool".into()],
        Duration::from_secs(1),
    );
    let err = tool.call(json!({})).unwrap_err();
    assert!(
        err.starts_with("Tool `ghost` could not start `/nonexistent/ptc-tool`: "),
        "{err}"
    );
}

// ---- transcripts ----

fn entries() -> Vec<TranscriptEntry> {
    vec![
        TranscriptEntry {
            turn: 1,
            messages: vec![
                ChatMessage::system("You write PTC-Lisp."),
                ChatMessage::user("Find laptops."),
            ],
            reply: "```clojure\n(def hits (tool/search {:query \"laptop\"}))\n```".into(),
            program: Some("(def hits (tool/search {:query \"laptop\"}))".into()),
            extraction: Some(ExtractionRule::Fenced),
            outcome: Some("value".into()),
            result: Some(Json::Null),
            error: None,
            tool_calls: vec![TranscriptToolCall {
                name: "search".into(),
                args: json!([{"query": "laptop"}]),
                result: Some(json!(["a", "b"])),
                error: None,
                duration_ms: 12,
            }],
            usage: Some(Usage {
                input_tokens: 100,
                output_tokens: 20,
            }),
        },
        TranscriptEntry {
            turn: 2,
            messages: vec![ChatMessage::user("Result: nil")],
            reply: "I'm done.".into(),
            program: None,
            extraction: None,
            outcome: Some("error".into()),
            result: None,
            error: Some("no program in the reply".into()),
            tool_calls: vec![TranscriptToolCall {
                name: "search".into(),
                args: json!([]),
                result: None,
                error: Some("Tool `search` timed out".into()),
                duration_ms: 200,
            }],
            usage: None,
        },
    ]
}

#[test]
fn transcript_lines_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    let mut writer = TranscriptWriter::create(&path).unwrap();
    let entries = entries();
    writer.write(&entries[0]).unwrap();
    // Each line is on disk as soon as it is written.
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 1);
    writer.write(&entries[1]).unwrap();
    drop(writer);

    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<Json> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["turn"], 1);
    assert_eq!(
        lines[0]["messages"][0],
        json!({"role": "system", "content": "You write PTC-Lisp."})
    );
    assert_eq!(lines[0]["result"], Json::Null);
    assert!(lines[0].get("result").is_some());
    assert!(lines[0].get("error").is_none());
    assert_eq!(
        lines[0]["tool_calls"][0],
        json!({"name": "search", "args": [{"query": "laptop"}], "result": ["a", "b"],
               "duration_ms": 12})
    );
    assert_eq!(
        lines[0]["usage"],
        json!({"input_tokens": 100, "output_tokens": 20})
    );
    assert_eq!(lines[1]["program"], Json::Null);
    assert!(lines[1].get("result").is_none());
    assert_eq!(lines[1]["error"], "no program in the reply");
    assert_eq!(lines[1]["usage"], Json::Null);
    assert!(lines[1]["tool_calls"][0].get("result").is_none());

    assert_eq!(read_transcript(&path).unwrap(), entries);
}

#[test]
fn a_transcript_replays_as_a_script() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    let mut writer = TranscriptWriter::create(&path).unwrap();
    for e in entries() {
        writer.write(&e).unwrap();
    }
    drop(writer);
    let p = ScriptedProvider::from_file(&path).unwrap();
    assert_eq!(ask(&p, "a").unwrap(), entries()[0].reply);
    assert_eq!(ask(&p, "b").unwrap(), "I'm done.");
}

/// True once process `pid` is gone or a zombie.
#[cfg(target_os = "linux")]
fn process_ended(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

#[cfg(target_os = "linux")]
#[test]
fn timeout_kills_the_processes_a_tool_started() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("child.pid");
    let tool = script_tool(
        dir.path(),
        "spawner",
        &format!("sleep 30 &\necho $! > {}\nwait", pid_file.display()),
        Duration::from_millis(300),
    );
    let err = tool.call(json!({})).unwrap_err();
    assert!(err.contains("timed out"), "{err}");
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let pid = pid.trim();
    let deadline = Instant::now() + Duration::from_secs(2);
    while !process_ended(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(process_ended(pid), "`sleep` (pid {pid}) outlived its tool");
}
