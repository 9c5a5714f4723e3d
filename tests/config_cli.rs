//! The history layer's configuration as users meet it: `ptc config show`
//! and `ptc config check`, `ptc.toml` picked up from the working
//! directory, the layering of file, environment and flags in `ptc
//! compact`, the REPL's `:compact` exports, and the README's complete
//! example (the same text as `examples/ptc.toml`, and valid).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::util::text;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ptc-config-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Run `ptc` in `dir` with `env` added (and no inherited `COMPACT_*`).
fn ptc_in(dir: &Path, args: &[&str], env: &[(&str, &str)], stdin: Option<&str>) -> Output {
    use std::io::Write;
    let mut command = Command::new(env!("CARGO_BIN_EXE_ptc"));
    command
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, _) in std::env::vars() {
        if k.starts_with("COMPACT_") {
            command.env_remove(k);
        }
    }
    for (k, v) in env {
        command.env(k, v);
    }
    let mut child = command.spawn().expect("ptc runs");
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
    }
    drop(child.stdin.take());
    child.wait_with_output().unwrap()
}

fn example_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/ptc.toml")
}

/// A history of `turns` user/assistant exchanges after a system prompt.
fn history(turns: usize) -> String {
    let mut lines = vec![r#"{"role":"system","content":"You are a coding agent."}"#.to_string()];
    for t in 0..turns {
        lines.push(format!(
            r#"{{"role":"user","content":"Step {t}: {}"}}"#,
            "please look at src/lib.rs again. ".repeat(20)
        ));
        lines.push(format!(
            r#"{{"role":"assistant","content":"Done with step {t}."}}"#
        ));
    }
    lines.join("\n") + "\n"
}

#[test]
fn readme_config_example_is_the_example_file_and_valid() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let example = std::fs::read_to_string(example_path()).unwrap();
    assert!(
        readme.contains(&format!("```toml\n{example}```")),
        "the README's configuration example must be examples/ptc.toml verbatim"
    );
    let dir = temp_dir("example");
    let out = ptc_in(
        &dir,
        &["config", "check", example_path().to_str().unwrap()],
        &[],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("valid"));
}

#[test]
fn config_show_names_the_source_of_every_value() {
    let dir = temp_dir("show");
    std::fs::write(
        dir.join("ptc.toml"),
        "max_context_tokens = 64000\n\n[policy]\ntrigger_pct = 0.8\nkeep_recent_turns = 3\n",
    )
    .unwrap();
    let out = ptc_in(
        &dir,
        &["config", "show"],
        &[("COMPACT_KEEP_RECENT_TURNS", "4")],
        None,
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let line = |key: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(&format!("{key} =")))
            .unwrap_or_else(|| panic!("no `{key}` line in\n{stdout}"))
            .to_string()
    };
    assert!(line("max_context_tokens").contains("64000"));
    assert!(line("max_context_tokens").ends_with("# ptc.toml:1"));
    assert!(line("trigger_pct").contains("0.8"));
    assert!(line("trigger_pct").ends_with("# ptc.toml:4"));
    // The environment overrides the file.
    assert!(line("keep_recent_turns").contains("= 4"));
    assert!(line("keep_recent_turns").ends_with("# COMPACT_KEEP_RECENT_TURNS"));
    assert!(line("hard_cap_buffer").ends_with("# default"));
    assert!(stdout.contains("[policy]") && stdout.contains("[redaction]"));
    // The output is itself a valid configuration file.
    let shown = dir.join("shown.toml");
    std::fs::write(&shown, &stdout).unwrap();
    let out = ptc_in(&dir, &["config", "check", "shown.toml"], &[], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn config_check_reports_each_problem_with_its_source() {
    let dir = temp_dir("check");
    std::fs::write(
        dir.join("bad.yaml"),
        "max_context_tokens: 64000\npolicy:\n  trigger_pct: 1.7\n",
    )
    .unwrap();
    let out = ptc_in(&dir, &["config", "check", "bad.yaml"], &[], None);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("policy.trigger_pct = 1.7 (from bad.yaml:3) must be between 0.0 and 1.0"),
        "{err}"
    );
    let out = ptc_in(
        &dir,
        &["config", "show"],
        &[("COMPACT_TRIGGER_PCT", "1.7")],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains(
            "policy.trigger_pct = 1.7 (from COMPACT_TRIGGER_PCT) must be between 0.0 and 1.0"
        ),
        "{}",
        text(&out.stderr)
    );
    std::fs::write(dir.join("typo.toml"), "[policy]\nkeep_recent_turn = 3\n").unwrap();
    let out = ptc_in(&dir, &["config", "check", "typo.toml"], &[], None);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("policy.keep_recent_turn: unknown key (in typo.toml:2)")
            && err.contains("did you mean `keep_recent_turns`?"),
        "{err}"
    );
    let out = ptc_in(&dir, &["config", "check", "missing.toml"], &[], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("missing.toml"));
}

#[test]
fn flags_override_the_environment_which_overrides_the_file() {
    let dir = temp_dir("layers");
    std::fs::write(dir.join("in.jsonl"), history(30)).unwrap();
    std::fs::write(
        dir.join("ptc.toml"),
        "max_context_tokens = 2000\n[policy]\nhard_cap_buffer = 100\nmax_summary_tokens = 200\nkeep_recent_turns = 5\ntarget_after_compaction = 0.1\n",
    )
    .unwrap();
    let kept = |out: &Output| {
        let err = text(&out.stderr);
        assert!(out.status.success(), "{err}");
        let line = err
            .lines()
            .find(|l| l.starts_with("kept "))
            .unwrap_or_else(|| panic!("no `kept` line in {err}"))
            .to_string();
        line
    };
    // The file's budget is in force (a 2,000-token window forces a
    // compaction of this 30-turn history) with its keep_recent_turns.
    let out = ptc_in(&dir, &["compact", "in.jsonl"], &[], None);
    assert!(kept(&out).contains("last 5 turns"), "{}", kept(&out));
    // The environment overrides the file...
    let env = [("COMPACT_KEEP_RECENT_TURNS", "2")];
    let out = ptc_in(&dir, &["compact", "in.jsonl"], &env, None);
    assert!(kept(&out).contains("last 2 turns"), "{}", kept(&out));
    // ... and a flag overrides both.
    let out = ptc_in(
        &dir,
        &["compact", "in.jsonl", "--keep-recent-turns", "1"],
        &env,
        None,
    );
    assert!(kept(&out).contains("last 1 turns"), "{}", kept(&out));
    // `--config` names another file instead of ./ptc.toml.
    std::fs::write(dir.join("big.json"), r#"{"max_context_tokens": 500000}"#).unwrap();
    let out = ptc_in(
        &dir,
        &["compact", "in.jsonl", "--config", "big.json"],
        &[],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("not compacted: "),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn compact_applies_the_configured_window() {
    let dir = temp_dir("window");
    std::fs::write(dir.join("in.jsonl"), history(30)).unwrap();
    std::fs::write(
        dir.join("ptc.yaml"),
        "window:\n  max_messages: 11\n  preserve_first_n: 1\n  preserve_last_n: 4\n",
    )
    .unwrap();
    let out = ptc_in(
        &dir,
        &[
            "compact", "in.jsonl", "--config", "ptc.yaml", "--events", "ev.jsonl",
        ],
        &[],
        None,
    );
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("window: evicted 50 of 61 messages (max 11)"),
        "{err}"
    );
    let lines = text(&out.stdout).lines().count();
    assert_eq!(lines, 11);
    let events = std::fs::read_to_string(dir.join("ev.jsonl")).unwrap();
    assert!(events.contains("\"event\":\"window.trimmed\""), "{events}");
}

#[test]
fn repl_compact_exports_events_and_an_archive() {
    let dir = temp_dir("repl");
    // Enough turns that compacting lowers the token count (since issue 38
    // a manual compaction that would not is refused).
    let mut script = String::from("(def a 1)\n(println \"token=ghp_abcdefghijklmnopqrstuvwxyz0123456789AB\")\n(+ 1 2)\n(+ 2 3)\n");
    for i in 0..12 {
        script.push_str(&format!(
            "(str \"turn {i} with a few more words to make it longer\")\n"
        ));
    }
    script.push_str(":compact checkpoint\n");
    let script = script.as_str();
    let out = ptc_in(
        &dir,
        &[
            "--no-compression",
            "--keep-recent-turns",
            "1",
            "--events",
            "ev.jsonl",
            "--archive",
            "arch",
            "--session-id",
            "r1",
        ],
        &[],
        Some(script),
    );
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("compacted: "), "{err}");
    let events = std::fs::read_to_string(dir.join("ev.jsonl")).unwrap();
    let names: Vec<String> = events
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["session_id"], "r1");
            v["event"].as_str().unwrap().to_string()
        })
        .collect();
    for expected in [
        "compact.token_estimate",
        "compact.trigger_decision",
        "compact.summary_created",
        "compact.pruned_messages",
        "compact.archival",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} in {names:?}"
        );
    }
    let archive = dir.join("arch/r1");
    for file in [
        "transcript-pre-compact-001.jsonl",
        "summary-001.json",
        "events.jsonl",
    ] {
        let bytes = std::fs::read_to_string(archive.join(file)).unwrap();
        assert!(!bytes.contains("ghp_abcdef"), "{file} leaks the token");
    }
    let transcript =
        std::fs::read_to_string(archive.join("transcript-pre-compact-001.jsonl")).unwrap();
    assert!(transcript.contains("token=<REDACTED>"), "{transcript}");
    let summary = std::fs::read_to_string(archive.join("summary-001.json")).unwrap();
    assert!(summary.contains("\"note\": \"checkpoint\""), "{summary}");
}

#[test]
fn repl_refuses_llm_summaries() {
    let dir = temp_dir("repl-llm");
    let out = ptc_in(&dir, &["--summary", "llm"], &[], Some("(+ 1 2)\n"));
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("summary.mode \"llm\" is for `ptc agent`"));
}

/// The three example configurations of `examples/config/`: each passes
/// `ptc config check`, and says what its comments promise.
#[test]
fn example_configurations_are_valid() {
    use ptc_lisp::history::config::{load_with_env, Adapter, Encryption, Overrides, SummaryMode};
    let dir = temp_dir("examples");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/config");
    for name in ["minimal.toml", "production.toml", "small-context.yaml"] {
        let path = root.join(name);
        let out = ptc_in(
            &dir,
            &["config", "check", path.to_str().unwrap()],
            &[],
            None,
        );
        assert!(out.status.success(), "{name}: {}", text(&out.stderr));
        assert!(text(&out.stdout).ends_with(": valid\n"), "{name}");
        let out = ptc_in(
            &dir,
            &["config", "show", "--config", path.to_str().unwrap()],
            &[],
            None,
        );
        assert!(out.status.success(), "{name}: {}", text(&out.stderr));
    }
    let load = |name: &str| {
        load_with_env(Some(&root.join(name)), Overrides::default(), &[])
            .unwrap()
            .config
    };
    let minimal = load("minimal.toml");
    assert_eq!(minimal.max_context_tokens, 128_000);
    assert_eq!(minimal.storage.adapter, Adapter::None);

    let production = load("production.toml");
    assert_eq!(production.storage.adapter, Adapter::S3);
    assert_eq!(production.storage.encryption, Encryption::SseKms);
    assert_eq!(
        production.storage.kms_key_id.as_deref(),
        Some("alias/agent-archive")
    );
    assert_eq!(
        production.events.url.as_deref(),
        Some("https://traces.internal.example.com")
    );
    assert_eq!(production.summary.mode, SummaryMode::Llm);
    assert_eq!(production.summary.deadline_ms, 20_000);
    assert!(production.redaction.enabled);

    let small = load("small-context.yaml");
    assert_eq!(small.max_context_tokens, 8_192);
    assert_eq!(small.window.max_messages, 24);
    assert!(small.window.summarize_on_trim);
    assert_eq!(small.summary.mode, SummaryMode::Digest);
    let _ = std::fs::remove_dir_all(dir);
}

/// The small-context example in use: `ptc agent` with a scripted model
/// keeps every request within its window of 24 messages.
#[test]
fn the_small_context_example_keeps_an_agent_within_its_window() {
    let dir = temp_dir("small-context-agent");
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/config/small-context.yaml");
    let mut replies: Vec<String> = (0..29)
        .map(|i| format!("```clojure\n(def v{i} {i})\n```"))
        .collect();
    replies.push("```clojure\n(return v3)\n```".into());
    let script = dir.join("replies.json");
    std::fs::write(&script, serde_json::to_string(&replies).unwrap()).unwrap();
    let transcript = dir.join("t.jsonl");
    let out = ptc_in(
        &dir,
        &[
            "agent",
            "--config",
            config.to_str().unwrap(),
            "--mission",
            "Count",
            "--llm",
            &format!("script:{}", script.display()),
            "--max-turns",
            "30",
            "--transcript",
            transcript.to_str().unwrap(),
        ],
        &[],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let entries = ptc_lisp::agent::transcript::read_transcript(&transcript).unwrap();
    assert_eq!(entries.len(), 30);
    assert!(entries.iter().all(|e| e.messages.len() <= 24));
    assert!(entries.last().unwrap().messages[2]
        .content
        .starts_with("<COMPACT-SUMMARY v"));
    let _ = std::fs::remove_dir_all(dir);
}
