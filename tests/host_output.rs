//! What every command does with its output streams (issues 39 and 40):
//! a closed pipe on stdout ends it quietly (status 0, no panic), any other
//! failed write of its output is an error with status 2, a broken stderr
//! changes nothing, and control characters from programs, models and
//! tools are escaped on a terminal (and always on stderr) but kept in
//! `--json` output, pipes and files.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::util::text;

/// Every command that prints, as `(name, args, stdin)`, each with output
/// on stdout. `dir` holds the files they read.
fn printing_commands(dir: &Path) -> Vec<(&'static str, Vec<String>, Option<String>)> {
    let root = env!("CARGO_MANIFEST_DIR");
    let replies = format!("script:{root}/examples/agent/replies.json");
    let data = format!("{root}/examples/agent/data.json");
    let tools = format!("{root}/examples/agent/tools.json");
    let program = write(
        dir,
        "p.clj",
        "(doseq [i (range 3000)] (println \"line\" i)) :done",
    );
    let history = write(
        dir,
        "h.jsonl",
        &"{\"role\": \"user\", \"content\": \"hello there\"}\n".repeat(2000),
    );
    let config = write(dir, "ptc.toml", "max_context_tokens = 9000\n");
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        (
            "eval",
            args(&["eval", "(doseq [i (range 3000)] (println i)) 1"]),
            None,
        ),
        (
            "eval --json",
            args(&["eval", "--json", "(range 30000)"]),
            None,
        ),
        ("run", args(&["run", &program]), None),
        (
            "agent",
            args(&[
                "agent",
                "--llm",
                &replies,
                "--data",
                &data,
                "--tools",
                &tools,
                "--mission",
                "Which products must be reordered?",
                "--quiet",
            ]),
            None,
        ),
        (
            "compact",
            args(&["compact", "--max-context-tokens", "10000", &history]),
            None,
        ),
        (
            "prompt",
            args(&[
                "prompt",
                "--data",
                &data,
                "--tools",
                &tools,
                "--mission",
                "Reorder?",
            ]),
            None,
        ),
        ("config show", args(&["config", "show", "--env-vars"]), None),
        ("config check", args(&["config", "check", &config]), None),
        ("completions", args(&["completions", "bash"]), None),
        ("--help", args(&["--help"]), None),
        ("eval --help", args(&["eval", "--help"]), None),
        ("--version", args(&["--version"]), None),
        (
            "repl piped",
            vec![],
            Some("(def x 1)\n(doseq [i (range 3000)] (println i))\n:env\n(+ x 1)\n".into()),
        ),
    ]
}

fn write(dir: &Path, name: &str, content: &str) -> String {
    let path: PathBuf = dir.join(name);
    std::fs::write(&path, content).unwrap();
    path.display().to_string()
}

/// Run `ptc` in `dir` with `stdout` and `stderr` as given.
fn run_with(
    dir: &Path,
    args: &[String],
    stdin: Option<&str>,
    stdout: Stdio,
    stderr: Stdio,
) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_ptc"))
        .args(args)
        .current_dir(dir)
        .env("PTC_HISTORY", "")
        .stdin(Stdio::piped())
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).unwrap();
    }
    drop(input);
    child.wait_with_output().unwrap()
}

/// A pipe whose reading end is already closed: every write fails with
/// `EPIPE`.
fn closed_pipe() -> Stdio {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    Stdio::from(writer)
}

fn dev_full() -> Stdio {
    Stdio::from(
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap(),
    )
}

/// Run every printing command with `stdout`; `check` gets its name, exit
/// code and stderr.
fn each_command(stdout: fn() -> Stdio, check: impl Fn(&str, Option<i32>, &str)) {
    let dir = tempfile::tempdir().unwrap();
    for (name, args, stdin) in printing_commands(dir.path()) {
        let out = run_with(
            dir.path(),
            &args,
            stdin.as_deref(),
            stdout(),
            Stdio::piped(),
        );
        let stderr = text(&out.stderr);
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
        check(name, out.status.code(), &stderr);
    }
}

#[test]
fn every_command_ends_quietly_when_stdout_is_a_closed_pipe() {
    each_command(closed_pipe, |name, code, stderr| {
        assert_eq!(code, Some(0), "{name}: {stderr}");
        assert!(!stderr.contains("cannot write"), "{name}: {stderr}");
    });
}

#[test]
fn a_failed_write_of_the_output_is_an_error_with_status_2() {
    each_command(dev_full, |name, code, stderr| {
        assert_eq!(code, Some(2), "{name}: {stderr}");
        assert!(
            stderr.contains("error: cannot write to standard output: No space left on device"),
            "{name}: {stderr}"
        );
    });
    let dir = tempfile::tempdir().unwrap();
    // The smallest case of issue 40.
    let out = run_with(
        dir.path(),
        &["eval".into(), "1".into()],
        None,
        dev_full(),
        Stdio::piped(),
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_broken_stderr_neither_panics_nor_changes_the_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    for stderr in [closed_pipe as fn() -> Stdio, dev_full] {
        // A failing program reports on stderr: still exit 1.
        let out = run_with(
            dir.path(),
            &args(&["eval", "(fliter odd? [1])"]),
            None,
            Stdio::piped(),
            stderr(),
        );
        assert_eq!(out.status.code(), Some(1));
        // A usage error: still exit 2.
        let out = run_with(
            dir.path(),
            &args(&["eval", "--timeout-ms", "x", "1"]),
            None,
            Stdio::piped(),
            stderr(),
        );
        assert_eq!(out.status.code(), Some(2));
        // The agent's progress goes nowhere, its result to stdout.
        let root = env!("CARGO_MANIFEST_DIR");
        let out = run_with(
            dir.path(),
            &args(&[
                "agent",
                "--llm",
                &format!("script:{root}/examples/agent/replies.json"),
                "--data",
                &format!("{root}/examples/agent/data.json"),
                "--tools",
                &format!("{root}/examples/agent/tools.json"),
                "--mission",
                "Which products must be reordered?",
            ]),
            None,
            Stdio::piped(),
            stderr(),
        );
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(
            text(&out.stdout).trim(),
            r#"{:reorder ["Laptop" "Desk" "Chair"], :value 3900}"#
        );
    }
}

/// A script whose model writes escape sequences into its program and its
/// output, and whose tool answers with some.
fn escaping_agent(dir: &Path) -> Vec<String> {
    // Raw escapes in the program text itself, as a model could write them.
    let replies = serde_json::json!([
        "```clojure\n(println \"\u{1b}]0;pwned\u{7}\u{1b}[2Jred\") \
         (def x \"\u{1b}[31m\")\n(tool/echo {:text \"\u{9b}2J\"})\n```",
        "```clojure\n(return (str \"\u{1b}[31m\" \"done\"))\n```"
    ]);
    let script = write(dir, "replies.json", &replies.to_string());
    // The tool fails (the turn with it), saying so with an escape
    // sequence.
    let echo = write(
        dir,
        "echo.sh",
        "#!/bin/sh\nprintf '\\033[5mblink' >&2\nexit 3\n",
    );
    Command::new("chmod").args(["+x", &echo]).status().unwrap();
    let tools = write(
        dir,
        "tools.json",
        &serde_json::json!({"tools": {"echo": {"signature": "(text :string) -> :map",
            "command": [echo]}}})
        .to_string(),
    );
    [
        "agent",
        "--llm",
        &format!("script:{script}"),
        "--tools",
        &tools,
        "--mission",
        "Say \u{1b}[31mhello",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

#[test]
fn the_agents_progress_escapes_control_characters() {
    let dir = tempfile::tempdir().unwrap();
    let args = escaping_agent(dir.path());
    let out = run_with(dir.path(), &args, None, Stdio::piped(), Stdio::piped());
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        !stderr.chars().any(|c| c.is_control() && c != '\n'),
        "{stderr:?}"
    );
    assert!(
        stderr.contains(r#"program: (println "\x1b]0;pwned\x07\x1b[2Jred")"#),
        "{stderr}"
    );
    assert!(stderr.contains(r"\x1b[5mblink"), "{stderr}");
    // The result is a value printed in Clojure notation (escaped by the
    // printer); piped stdout is data and otherwise left alone.
    assert_eq!(text(&out.stdout).trim(), r#""\u001b[31mdone""#);

    // `--json` keeps the text as JSON has it.
    let mut json_args = args.clone();
    json_args.push("--json".into());
    let out = run_with(dir.path(), &json_args, None, Stdio::piped(), Stdio::piped());
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["result"], "\u{1b}[31mdone");
}

/// `ptc eval program` with both streams piped.
fn eval_piped(dir: &Path, program: &str) -> Output {
    let args = ["eval".to_string(), program.to_string()];
    run_with(dir, &args, None, Stdio::piped(), Stdio::piped())
}

#[test]
fn piped_output_keeps_what_programs_print_and_errors_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let out = eval_piped(
        dir.path(),
        "(println (str \"a\" (char 27) \"[31m\" (char 9) \"b\")) (fail (str (char 27) \"[2J\"))",
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), "a\u{1b}[31m\tb\n");
    let stderr = text(&out.stderr);
    assert!(!stderr.contains('\u{1b}'), "{stderr:?}");
    assert!(
        stderr.contains(r#"program failed: "\u001b[2J""#),
        "{stderr:?}"
    );
    // A program's own text, shown under its error, is escaped too.
    let out = eval_piped(dir.path(), "(+ 1 \"\u{1b}[8m\" \n (fliter odd? [1]))");
    let stderr = text(&out.stderr);
    assert!(!stderr.contains('\u{1b}'), "{stderr:?}");
}

#[cfg(unix)]
mod terminal {
    use std::process::Command;
    use std::time::Duration;

    use expectrl::{Eof, Expect, Session};

    fn at_a_terminal(args: &[&str]) -> String {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ptc"));
        cmd.args(args).env("PTC_HISTORY", "").env("NO_COLOR", "1");
        let mut session = Session::spawn(cmd).unwrap();
        session.set_expect_timeout(Some(Duration::from_secs(30)));
        let found = session.expect(Eof).unwrap();
        let mut shown = found.before().to_vec();
        for m in found.matches() {
            shown.extend_from_slice(m);
        }
        String::from_utf8_lossy(&shown).into_owned()
    }

    #[test]
    fn what_a_program_prints_is_escaped_on_a_terminal() {
        let shown = at_a_terminal(&[
            "eval",
            "(println (str \"a\" (char 27) \"]0;title\" (char 7) (char 155) \"b\")) (keyword (str (char 27)))",
        ]);
        assert!(shown.contains(r"a\x1b]0;title\x07\u{9b}b"), "{shown:?}");
        assert!(!shown.contains('\u{1b}'), "{shown:?}");
        assert!(!shown.contains('\u{7}'), "{shown:?}");
    }

    #[test]
    fn the_repl_escapes_what_it_shows() {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ptc"));
        cmd.env("PTC_HISTORY", "").env("NO_COLOR", "1");
        let mut session = Session::spawn(cmd).unwrap();
        session.set_expect_timeout(Some(Duration::from_secs(30)));
        session.expect("ptc> ").unwrap();
        session
            .send_line("(println (str \"x\" (char 27) \"[2Jy\")) (str (char 27))")
            .unwrap();
        let found = session.expect("ptc> ").unwrap();
        let shown = String::from_utf8_lossy(found.before()).into_owned();
        assert!(shown.contains(r"x\x1b[2Jy"), "{shown:?}");
        // The result: printed by the printer as a string literal.
        assert!(shown.contains(r#""\u001b""#), "{shown:?}");
        session.send_line(":quit").unwrap();
        session.expect(Eof).unwrap();
    }
}
