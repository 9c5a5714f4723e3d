//! The `ptc eval` / `ptc run` contract: stdout, stderr, exit codes.

use std::process::{Command, Stdio};

use crate::util::{ptc, text};

fn temp_file(name: &str, contents: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ptc-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

#[test]
fn eval_prints_the_result_in_clojure_notation() {
    let out = ptc(&["eval", "{:a [1 2.5 \"x\"] :b nil}"], None);
    assert!(out.status.success());
    assert_eq!(text(&out.stdout), "{:a [1 2.5 \"x\"], :b nil}\n");
}

#[test]
fn eval_reads_stdin_with_dash() {
    let out = ptc(&["eval", "-"], Some("(+ 1 2)"));
    assert_eq!(text(&out.stdout), "3\n");
}

#[test]
fn errors_go_to_stderr_with_location_and_exit_1() {
    let out = ptc(&["eval", "(+ 1\n   (foo))"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = text(&out.stderr);
    assert!(
        err.starts_with("error: 2:5: Undefined symbol `foo`"),
        "{err}"
    );
    assert!(err.contains("  |     ^"), "{err}");
}

#[test]
fn parse_errors_report_line_and_column() {
    let out = ptc(&["eval", "(+ 1 2"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("1:1"), "{}", text(&out.stderr));
}

#[test]
fn run_evaluates_a_file_and_prints_println_output_first() {
    let file = temp_file("prog.clj", "(println \"hi\" 1)\n(def x 2)\n(* x 21)\n");
    let out = ptc(&["run", file.to_str().unwrap()], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "hi 1\n42\n");
}

#[test]
fn data_file_binds_keys_under_data() {
    let data = temp_file(
        "data.json",
        r#"{"expenses": [{"amount": 10, "category": "travel"}, {"amount": 5.5, "category": "food"}], "user-id": "u1"}"#,
    );
    let out = ptc(
        &[
            "eval",
            "--data",
            data.to_str().unwrap(),
            "[(sum-by :amount data/expenses) data/user-id]",
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "[15.5 \"u1\"]\n");
}

#[test]
fn bad_data_files_are_named_in_the_error() {
    let bad = temp_file("bad.json", "{not json");
    let out = ptc(&["eval", "--data", bad.to_str().unwrap(), "1"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("bad.json` is not valid JSON"),
        "{}",
        text(&out.stderr)
    );
    let array = temp_file("array.json", "[1, 2]");
    let out = ptc(&["eval", "--data", array.to_str().unwrap(), "1"], None);
    assert!(
        text(&out.stderr).contains("must contain a JSON object"),
        "{}",
        text(&out.stderr)
    );
    let out = ptc(&["eval", "--data", "/nonexistent/x.json", "1"], None);
    assert!(text(&out.stderr).contains("cannot read data file `/nonexistent/x.json`"));
}

/// A data file of many 64 KiB chunks: records and multi-byte characters
/// cut by the chunks' ends, a long string, a later field after the array.
fn large_data_file(name: &str, damage_at_record: Option<usize>) -> std::path::PathBuf {
    let records: Vec<String> = (0..6000)
        .map(|i| {
            if Some(i) == damage_at_record {
                return format!(r#"{{"id": {i}, "name": "Ré😀 {i}" "qty": {}}}"#, i % 7);
            }
            format!(r#"{{"id": {i}, "name": "Ré😀 {i}", "qty": {}}}"#, i % 7)
        })
        .collect();
    let long = "é".repeat(70_000);
    let json = format!(
        "{{\"rows\": [\n{}\n], \"long\": \"{long}\", \"after\": [1, 2, 3]}}\n",
        records.join(",\n")
    );
    assert!(json.len() > 5 * 64 * 1024);
    temp_file(name, &json)
}

#[test]
fn a_large_data_file_reads_as_a_small_one() {
    let data = large_data_file("large.json", None);
    let out = ptc(
        &[
            "eval",
            "--data",
            data.to_str().unwrap(),
            "[(count data/rows) (sum-by :qty data/rows) (:name (nth data/rows 4321)) \
             (count data/long) data/after]",
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "[6000 17997 \"Ré😀 4321\" 70000 [1 2 3]]\n"
    );
}

#[test]
fn stats_tell_the_memory_the_data_took() {
    let data = large_data_file("large-stats.json", None);
    let size = std::fs::metadata(&data).unwrap().len();
    let out = ptc(
        &[
            "eval",
            "--stats=json",
            "--data",
            data.to_str().unwrap(),
            "1",
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_str(text(&out.stderr).trim()).unwrap();
    // 6,000 maps of three values and a long string: more than the long
    // string, less than four times the file (the file is never held whole).
    let data_memory = json["data_memory_bytes"].as_u64().unwrap();
    assert!(
        data_memory > 140_000 && data_memory < 4 * size,
        "{data_memory} for {size}: {json}"
    );
}

#[test]
fn an_error_deep_in_a_large_data_file_names_its_line() {
    let data = large_data_file("large-bad.json", Some(5000));
    let out = ptc(&["eval", "--data", data.to_str().unwrap(), "1"], None);
    assert_eq!(out.status.code(), Some(2));
    // Record 5000 is on line 5002 (after the `{"rows": [` line).
    assert!(
        text(&out.stderr)
            .contains("large-bad.json` is not valid JSON: expected `,` or `}` at line 5002"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn fail_exits_1_and_return_prints_the_value() {
    let out = ptc(&["eval", "(fail \"no luck\")"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("no luck"));
    let out = ptc(&["eval", "(return [1 2]) 3"], None);
    assert_eq!(text(&out.stdout), "[1 2]\n");
}

#[test]
fn timeout_flag_is_honoured() {
    let out = ptc(&["eval", "--timeout-ms", "50", "(loop [] (recur))"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("time limit of 50 ms"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn tools_manifest_binds_tool_functions() {
    let manifest = temp_file(
        "tools.json",
        r#"{"tools": {
            "inventory": {"signature": "-> :map", "description": "Units in stock", "response": {"laptop": 3}},
            "echo": {"signature": "(text :string) -> :map", "description": "Echoes its arguments", "command": ["cat"]}}}"#,
    );
    let out = ptc(
        &[
            "eval",
            "--tools",
            manifest.to_str().unwrap(),
            "[(tool/inventory) (echo \"hi\")]",
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "[{:laptop 3} {:text \"hi\"}]\n");
}

#[test]
fn bad_tool_manifests_are_usage_errors_naming_the_tool() {
    let manifest = temp_file(
        "bad-tools.json",
        r#"{"tools": {"x": {"signature": "-> :map"}}}"#,
    );
    let out = ptc(&["eval", "--tools", manifest.to_str().unwrap(), "1"], None);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("bad-tools.json") && err.contains("tool `x`"),
        "{err}"
    );
}

#[test]
fn a_closed_stdout_pipe_ends_quietly() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ptc"))
        .args(["eval", "(vec (range 300000))"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ptc runs");
    // Read a little, then close our end, like `| head -c 10`.
    let mut first = [0u8; 10];
    std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut first).unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(&first[..3], b"[0 ");
    assert_eq!(out.status.code(), Some(0));
    assert!(
        !text(&out.stderr).contains("panicked"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn stats_time_each_phase_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("d.json");
    std::fs::write(&data, r#"{"xs": [1, 2, 3]}"#).unwrap();
    let program = dir.path().join("p.clj");
    std::fs::write(&program, "(reduce + (map inc data/xs))").unwrap();
    let (p, d) = (program.to_str().unwrap(), data.to_str().unwrap());

    let out = ptc(&["run", "--stats", p, "--data", d], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "9");
    let err = text(&out.stderr);
    for part in ["read data", "parse", "analyze", "eval", "print", "steps"] {
        assert!(err.contains(part), "`{part}` in {err}");
    }

    let out = ptc(
        &["run", "--stats=json", "--repeat", "4", p, "--data", d],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "9");
    let json: serde_json::Value = serde_json::from_str(text(&out.stderr).trim()).unwrap();
    for phase in ["read_data", "parse", "analyze", "eval", "print"] {
        assert!(json["phases_ms"][phase].as_f64().unwrap() >= 0.0, "{json}");
    }
    assert_eq!(json["eval_ms"]["runs"], 4);
    let (min, median, max) = (
        json["eval_ms"]["min"].as_f64().unwrap(),
        json["eval_ms"]["median"].as_f64().unwrap(),
        json["eval_ms"]["max"].as_f64().unwrap(),
    );
    assert!(min <= median && median <= max, "{json}");
    // Each repetition's parse + analyze + eval: never less than its eval.
    assert_eq!(json["run_ms"]["runs"], 4);
    assert!(json["run_ms"]["min"].as_f64().unwrap() >= min, "{json}");
    assert!(
        json["run_ms"]["median"].as_f64().unwrap() >= median,
        "{json}"
    );
    assert!(json["steps"].as_u64().unwrap() > 0, "{json}");
    assert!(json["peak_rss_bytes"].as_u64().unwrap() > 0, "{json}");

    // Each repetition starts from a fresh session: a definition of the
    // first run is not there in the second.
    let out = ptc(
        &["eval", "--repeat", "3", "(defonce x 0) (def x (inc x)) x"],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "1");

    let out = ptc(&["eval", "--repeat", "0", "1"], None);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn expressions_may_start_with_a_hyphen() {
    for (expr, printed) in [("-17", "-17"), ("-0.5", "-0.5"), ("(- 3)", "-3")] {
        let out = ptc(&["eval", expr], None);
        assert!(out.status.success(), "{expr}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout).trim(), printed);
    }
    // `-x` is read as a symbol, not taken for an option.
    let out = ptc(&["eval", "-x"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("Undefined symbol `-x`"),
        "{}",
        text(&out.stderr)
    );
    // `-` alone is standard input.
    let out = ptc(&["eval", "-"], Some("(* 6 7)"));
    assert_eq!(text(&out.stdout).trim(), "42");
}

#[test]
fn zero_limits_are_refused() {
    for args in [
        ["eval", "1", "--max-steps", "0"],
        ["eval", "1", "--timeout-ms", "0"],
    ] {
        let out = ptc(&args, None);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            text(&out.stderr).contains("0 is not in 1.."),
            "{}",
            text(&out.stderr)
        );
    }
}

#[test]
fn the_mission_comes_from_standard_input_or_a_file() {
    let root = env!("CARGO_MANIFEST_DIR");
    let replies = format!("script:{root}/examples/agent/replies.json");
    let data = format!("{root}/examples/agent/data.json");
    let tools = format!("{root}/examples/agent/tools.json");
    let common = ["--llm", &replies, "--data", &data, "--tools", &tools];
    let expected = r#"{:reorder ["Laptop" "Desk" "Chair"], :value 3900}"#;

    let mut args = vec!["agent", "--mission", "-"];
    args.extend(common);
    let out = ptc(&args, Some("Which products must be reordered?\n"));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), expected);

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mission.txt");
    std::fs::write(&file, "Which products must be reordered?\n").unwrap();
    let mut args = vec!["agent", "--mission-file", file.to_str().unwrap()];
    args.extend(common);
    let out = ptc(&args, None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), expected);

    let mut args = vec!["agent", "--mission", "-"];
    args.extend(common);
    let out = ptc(&args, Some("  \n"));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("the mission is empty"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn completion_scripts_for_each_shell() {
    for (shell, marker) in [
        ("bash", "complete -F _ptc"),
        ("zsh", "#compdef ptc"),
        ("fish", "complete -c ptc"),
    ] {
        let out = ptc(&["completions", shell], None);
        assert!(out.status.success(), "{shell}: {}", text(&out.stderr));
        let script = text(&out.stdout);
        assert!(script.contains(marker), "{shell}: {script}");
        // Subcommands and their options are in the script.
        for word in ["eval", "agent", "mission-file", "stats"] {
            assert!(script.contains(word), "{shell} lacks {word}");
        }
    }
    // bash accepts the script.
    let out = Command::new("bash")
        .args(["-c", "source /dev/stdin && complete -p ptc"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            let script = ptc(&["completions", "bash"], None).stdout;
            child.stdin.take().unwrap().write_all(&script)?;
            child.wait_with_output()
        })
        .unwrap();
    assert!(
        text(&out.stdout).contains("_ptc ptc"),
        "{}",
        text(&out.stdout)
    );
    let out = ptc(&["completions", "nushell"], None);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_prelude_is_loaded_before_the_program() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.clj");
    std::fs::write(&good, "(defn twice [x] (* 2 x))\n(def base 10)\n").unwrap();
    let bad = dir.path().join("bad.clj");
    std::fs::write(&bad, "(def ok 1)\n(+ 1 nil)\n").unwrap();
    let program = dir.path().join("p.clj");
    std::fs::write(&program, "(twice base)").unwrap();

    let out = ptc(
        &["eval", "(twice base)", "--prelude", good.to_str().unwrap()],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "20");
    let out = ptc(
        &[
            "run",
            program.to_str().unwrap(),
            "--prelude",
            good.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(text(&out.stdout).trim(), "20");

    // A failing prelude is an error with its file, line and column; the
    // program does not run.
    let out = ptc(
        &[
            "eval",
            "(println \"ran\")",
            "--prelude",
            bad.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("the prelude failed: ") && err.contains("bad.clj:2:1"),
        "{err}"
    );
    assert!(err.contains("(type-error)"), "{err}");
    assert!(!text(&out.stdout).contains("ran"));
}

/// `ptc prompt` prints what `ptc agent` sends on its first turn, byte for
/// byte (compared with the agent's transcript), with token counts.
#[test]
fn prompt_prints_the_first_messages_the_agent_sends() {
    let root = env!("CARGO_MANIFEST_DIR");
    let data = format!("{root}/examples/agent/data.json");
    let tools = format!("{root}/examples/agent/tools.json");
    let mission = "Which products must be reordered?";
    let out = ptc(
        &[
            "prompt",
            "--mission",
            mission,
            "--data",
            &data,
            "--tools",
            &tools,
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let printed = text(&out.stdout);

    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("t.jsonl");
    let replies = format!("script:{root}/examples/agent/replies.json");
    let out = ptc(
        &[
            "agent",
            "--mission",
            mission,
            "--data",
            &data,
            "--tools",
            &tools,
            "--llm",
            &replies,
            "--transcript",
            transcript.to_str().unwrap(),
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let first: serde_json::Value = crate::util::first_transcript_entry(&transcript);
    let sent = first["messages"].as_array().unwrap();
    assert_eq!(sent.len(), 2);
    for m in sent {
        let content = m["content"].as_str().unwrap().trim_end();
        assert!(
            printed.contains(content),
            "{} message not printed as sent",
            m["role"]
        );
        assert!(
            printed.contains(&format!("=== {} (", m["role"].as_str().unwrap())),
            "{printed}"
        );
    }
    assert!(
        printed
            .trim_end()
            .ends_with("the total the reply priming) ==="),
        "{printed}"
    );
}

/// JSON keys that are not symbols are listed in the prompt the way a
/// program reaches them, and that way works.
#[test]
fn data_keys_that_are_not_symbols_are_shown_as_they_are_reached() {
    let data = temp_file(
        "odd-keys.json",
        r#"{"first name": "Ann", "order_items": [1, 2], "say \"hi\"": 3}"#,
    );
    let data = data.to_str().unwrap();
    let out = ptc(&["prompt", "--mission", "m", "--data", data], None);
    let prompt = text(&out.stdout);
    assert!(prompt.contains("\n(data \"first name\")   "), "{prompt}");
    assert!(prompt.contains("\n(data \"say \\\"hi\\\"\")"), "{prompt}");
    assert!(prompt.contains("\ndata/order_items   "), "{prompt}");
    let out = ptc(
        &[
            "eval",
            "--data",
            data,
            r#"[(data "first name") (data "say \"hi\"") data/order-items]"#,
        ],
        None,
    );
    assert_eq!(
        text(&out.stdout),
        "[\"Ann\" 3 [1 2]]\n",
        "{}",
        text(&out.stderr)
    );
}

/// A relative `command` in a manifest is relative to the manifest's
/// directory, wherever `ptc` runs from; a missing or non-executable
/// program is reported when the manifest is loaded, before any call.
#[test]
fn manifest_commands_resolve_against_the_manifest_and_are_checked_at_load() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("tools");
    std::fs::create_dir(&tools).unwrap();
    let script = tools.join("search.sh");
    std::fs::write(&script, "#!/bin/sh\nread line\necho '[\"found\"]'\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let manifest = tools.join("tools.json");
    let write = |command: &str| {
        std::fs::write(
            &manifest,
            format!(
                r#"{{"tools": {{"search": {{"signature": "(q :string) -> [:string]",
                                         "command": ["{command}"]}}}}}}"#
            ),
        )
        .unwrap()
    };
    write("./search.sh");
    // Run from elsewhere: the filesystem root.
    let run = |program: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_ptc"))
            .current_dir("/")
            .args(["eval", "--tools", manifest.to_str().unwrap(), program])
            .output()
            .unwrap()
    };
    let out = run("(tool/search \"x\")");
    assert_eq!(text(&out.stdout), "[\"found\"]\n", "{}", text(&out.stderr));
    write("./missing.sh");
    let out = run("1");
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    let expected = format!(
        "tool `search`: `command` `./missing.sh`: {} does not exist (a relative `command` is \
         relative to the manifest's directory)",
        tools.join("./missing.sh").display()
    );
    assert!(err.contains(&expected), "{err}");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).unwrap();
    write("./search.sh");
    let err = text(&run("1").stderr);
    assert!(err.contains("search.sh is not executable"), "{err}");
}

/// `--record` then `--llm replay:` of the offline example: the replayed
/// run writes the same transcript byte for byte without the script; a
/// changed configuration that changes a request is a miss naming the
/// hash and the first differing message; a recurring request is answered
/// in recorded order.
#[test]
fn a_recorded_agent_run_replays_to_the_same_transcript() {
    let root = env!("CARGO_MANIFEST_DIR");
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).display().to_string();
    let replies = format!("script:{root}/examples/agent/replies.json");
    let data = format!("{root}/examples/agent/data.json");
    let tools = format!("{root}/examples/agent/tools.json");
    let mission = "Which products must be reordered (fewer units than data/reorder_below), \
                   and what are their remaining units worth?";
    let run = |llm: &str, extra: &[&str]| {
        let mut args = vec![
            "agent",
            "--mission",
            mission,
            "--llm",
            llm,
            "--data",
            &data,
            "--tools",
            &tools,
            "--json",
        ];
        args.extend(extra);
        ptc(&args, None)
    };
    let (recorded, record) = (path("recorded.jsonl"), path("calls.jsonl"));
    let out = run(&replies, &["--transcript", &recorded, "--record", &record]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let replay = format!("replay:{record}");
    let replayed = path("replayed.jsonl");
    let again = run(&replay, &["--transcript", &replayed]);
    assert!(again.status.success(), "{}", text(&again.stderr));
    let first = std::fs::read(&recorded).unwrap();
    assert!(!first.is_empty());
    assert_eq!(first, std::fs::read(&replayed).unwrap());
    let (a, b): (serde_json::Value, serde_json::Value) = (
        serde_json::from_slice(&out.stdout).unwrap(),
        serde_json::from_slice(&again.stdout).unwrap(),
    );
    assert_eq!(a["result"], b["result"]);
    assert_eq!(a["turns"], b["turns"]);
    // Each line holds the hash, the request and the response.
    let calls = std::fs::read_to_string(&record).unwrap();
    let line: serde_json::Value = serde_json::from_str(calls.lines().next().unwrap()).unwrap();
    assert_eq!(line["hash"].as_str().unwrap().len(), 16);
    assert!(line["request"]["messages"].is_array() && line["response"]["content"].is_string());
    // A different system prompt (the signature is part of it) misses.
    let miss = run(&replay, &["--signature", "{reorder [:string]}"]);
    assert_eq!(miss.status.code(), Some(1));
    let err = text(&miss.stderr);
    assert!(
        err.contains("replay `")
            && err.contains("no recorded response for request ")
            && err.contains("shares 0 leading message(s): message 1 (system) differs at character"),
        "{err}"
    );
    // A request recorded twice is answered in recorded order, then is a
    // miss that says so.
    use ptc_lisp::agent::{ChatRequest, LlmProvider, ReplayProvider};
    let repeated = path("repeated.jsonl");
    let first_line: serde_json::Value =
        serde_json::from_str(calls.lines().next().unwrap()).unwrap();
    let with_reply = |reply: &str| {
        let mut line = first_line.clone();
        line["response"]["content"] = serde_json::json!(reply);
        line
    };
    std::fs::write(
        &repeated,
        format!("{}\n{}\n", with_reply("one"), with_reply("two")),
    )
    .unwrap();
    let provider = ReplayProvider::from_file(std::path::Path::new(&repeated)).unwrap();
    let request: ChatRequest = serde_json::from_value(first_line["request"].clone()).unwrap();
    assert_eq!(provider.complete(&request).unwrap().content, "one");
    assert_eq!(provider.complete(&request).unwrap().content, "two");
    let used = provider.complete(&request).unwrap_err().to_string();
    assert!(
        used.contains("was recorded 2 time(s) and every answer is used"),
        "{used}"
    );
}
