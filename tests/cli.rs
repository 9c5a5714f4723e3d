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
