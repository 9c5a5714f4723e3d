//! The history layer's configuration (seed 004, "Configuration System"):
//! YAML, TOML and JSON files with the seed's keys, `COMPACT_*` variables
//! over the file, command-line flags over both, the seed's defaults, and
//! errors that name the field path, the value and where it came from.
//! Every test passes its environment explicitly (`load_with_env`), so the
//! process environment never matters, and writes files in its own
//! temporary directory.

use std::path::{Path, PathBuf};

use ptc_lisp::history::config::{self, Adapter, Config, Loaded, Overrides, ENV_VARS};
use ptc_lisp::history::{Policy, Role, Strategy};

/// A file named `name` holding `text`, in a fresh temporary directory
/// (kept alive by the returned guard).
fn file(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

fn env(vars: &[(&str, &str)]) -> Vec<(String, String)> {
    vars.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn load(path: Option<&Path>, overrides: Overrides, vars: &[(&str, &str)]) -> Loaded {
    match config::load_with_env(path, overrides, &env(vars)) {
        Ok(l) => l,
        Err(e) => panic!("the configuration should load, got:\n{e}"),
    }
}

fn load_err(path: Option<&Path>, overrides: Overrides, vars: &[(&str, &str)]) -> String {
    match config::load_with_env(path, overrides, &env(vars)) {
        Ok(l) => panic!("the configuration should be refused, got {:?}", l.config),
        Err(e) => e.to_string(),
    }
}

/// `file:line` as `source_of` writes it.
fn at(path: &Path, line: usize) -> String {
    format!("{}:{line}", path.display())
}

const YAML: &str = "\
# compact.yaml, as seed 004 describes it
model: gpt-4o
max_context_tokens: 64000
policy:
  trigger_pct: 0.8
  hard_cap_buffer: 2000
  keep_recent_turns: 5
  keep_tool_io_pairs: 3
  roles_never_prune: [system]
  strategy: decision_log
storage:
  adapter: fs
  path: /var/tmp/compact-archive
redaction:
  enabled: true
  patterns:
    - 'employee-\\d{6}'
";

const TOML: &str = r#"# ptc.toml
model = "gpt-4o"
max_context_tokens = 64000

[policy]
trigger_pct = 0.8
hard_cap_buffer = 2000
keep_recent_turns = 5
keep_tool_io_pairs = 3
roles_never_prune = ["system"]
strategy = "decision_log"

[storage]
adapter = "fs"
path = "/var/tmp/compact-archive"

[redaction]
enabled = true
patterns = ['employee-\d{6}']
"#;

const JSON: &str = r#"{
  "model": "gpt-4o",
  "max_context_tokens": 64000,
  "policy": {
    "trigger_pct": 0.8,
    "hard_cap_buffer": 2000,
    "keep_recent_turns": 5,
    "keep_tool_io_pairs": 3,
    "roles_never_prune": ["system"],
    "strategy": "decision_log"
  },
  "storage": {
    "adapter": "fs",
    "path": "/var/tmp/compact-archive"
  },
  "redaction": {
    "enabled": true,
    "patterns": ["employee-\\d{6}"]
  }
}
"#;

/// The values all three sample files hold.
fn assert_sample(c: &Config) {
    assert_eq!(c.model.as_deref(), Some("gpt-4o"));
    assert_eq!(c.max_context_tokens, 64_000);
    assert_eq!(c.policy.trigger_pct, 0.8);
    assert_eq!(c.policy.hard_cap_buffer, 2_000);
    assert_eq!(c.policy.keep_recent_turns, 5);
    assert_eq!(c.policy.keep_tool_io_pairs, 3);
    assert_eq!(c.policy.roles_never_prune, vec![Role::System]);
    assert_eq!(c.policy.strategy, Strategy::DecisionLog);
    assert_eq!(c.storage.adapter, Adapter::Fs);
    assert_eq!(c.storage.path, PathBuf::from("/var/tmp/compact-archive"));
    assert!(c.redaction.enabled);
    assert_eq!(c.redaction.patterns, vec![r"employee-\d{6}".to_string()]);
    // What the file does not set keeps its default.
    assert_eq!(
        c.policy.max_summary_tokens,
        Policy::default().max_summary_tokens
    );
    assert_eq!(c.storage.region, "us-east-1");
    // The policy built from it carries the file's numbers.
    let p = c.policy();
    assert_eq!((p.max_context_tokens, p.hard_cap_buffer), (64_000, 2_000));
    // And the user pattern is in force.
    let r = c.redactor().unwrap().expect("redaction is on");
    assert_eq!(r.redact("badge employee-123456"), "badge <REDACTED>");
}

#[test]
fn yaml_configuration_loading() {
    let (_d, path) = file("compact.yaml", YAML);
    let loaded = load(Some(&path), Overrides::default(), &[]);
    assert_sample(&loaded.config);
    assert_eq!(loaded.file.as_deref(), Some(path.as_path()));
    // Lines are 1-based and found inside nested sections.
    assert_eq!(loaded.source_of("model"), at(&path, 2));
    assert_eq!(loaded.source_of("max_context_tokens"), at(&path, 3));
    assert_eq!(loaded.source_of("policy.trigger_pct"), at(&path, 5));
    assert_eq!(loaded.source_of("policy.strategy"), at(&path, 10));
    assert_eq!(loaded.source_of("storage.path"), at(&path, 13));
    assert_eq!(loaded.source_of("redaction.patterns"), at(&path, 16));
    assert_eq!(loaded.source_of("policy.max_summary_tokens"), "default");
    // `.yml` is YAML too.
    let (_d2, yml) = file("compact.yml", YAML);
    assert_sample(&load(Some(&yml), Overrides::default(), &[]).config);
}

#[test]
fn toml_configuration_loading() {
    let (_d, path) = file("ptc.toml", TOML);
    let loaded = load(Some(&path), Overrides::default(), &[]);
    assert_sample(&loaded.config);
    assert_eq!(loaded.source_of("model"), at(&path, 2));
    assert_eq!(loaded.source_of("policy.trigger_pct"), at(&path, 6));
    assert_eq!(loaded.source_of("policy.strategy"), at(&path, 11));
    assert_eq!(loaded.source_of("storage.adapter"), at(&path, 14));
    assert_eq!(loaded.source_of("storage.path"), at(&path, 15));
    assert_eq!(loaded.source_of("redaction.enabled"), at(&path, 18));
    assert_eq!(loaded.source_of("storage.region"), "default");
}

#[test]
fn json_configuration_loading() {
    let (_d, path) = file("compact.json", JSON);
    let loaded = load(Some(&path), Overrides::default(), &[]);
    assert_sample(&loaded.config);
    assert_eq!(loaded.source_of("model"), at(&path, 2));
    assert_eq!(loaded.source_of("policy.trigger_pct"), at(&path, 5));
    assert_eq!(loaded.source_of("storage.path"), at(&path, 14));
    assert_eq!(loaded.source_of("redaction.patterns"), at(&path, 18));
}

#[test]
fn toml_dotted_keys_and_inline_tables_are_located() {
    let text = "\
max_context_tokens = 50000
policy.trigger_pct = 0.7
storage = { adapter = \"fs\", path = \"/tmp/a\" }

[redaction]
enabled = false
";
    let (_d, path) = file("dotted.toml", text);
    let loaded = load(Some(&path), Overrides::default(), &[]);
    assert_eq!(loaded.config.policy.trigger_pct, 0.7);
    assert_eq!(loaded.config.storage.adapter, Adapter::Fs);
    assert!(!loaded.config.redaction.enabled);
    assert_eq!(loaded.source_of("policy.trigger_pct"), at(&path, 2));
    assert_eq!(loaded.source_of("storage.path"), at(&path, 3));
    assert_eq!(loaded.source_of("redaction.enabled"), at(&path, 6));
}

#[test]
fn yaml_keys_are_found_in_their_own_section() {
    // `path` and `enabled` look alike in several places; each is found
    // in its section, not at the first line with that word.
    let text = "\
events:
  file: /tmp/events.jsonl   # a comment
storage:   # where archives go
  adapter: fs
  path: /tmp/archive
window:
  max_messages: 40
  preserve_last_n: 10
policy:
  keep_recent_turns: 4
";
    let (_d, path) = file("sections.yaml", text);
    let loaded = load(Some(&path), Overrides::default(), &[]);
    assert_eq!(loaded.source_of("events.file"), at(&path, 2));
    assert_eq!(loaded.source_of("storage.adapter"), at(&path, 4));
    assert_eq!(loaded.source_of("storage.path"), at(&path, 5));
    assert_eq!(loaded.source_of("window.max_messages"), at(&path, 7));
    assert_eq!(loaded.source_of("window.preserve_last_n"), at(&path, 8));
    assert_eq!(loaded.source_of("policy.keep_recent_turns"), at(&path, 10));
}

#[test]
fn environment_variable_overrides() {
    // Seed 004: the file says 0.85, COMPACT_TRIGGER_PCT says otherwise,
    // the variable wins.
    let (_d, path) = file("compact.yaml", "policy:\n  trigger_pct: 0.85\n");
    let loaded = load(
        Some(&path),
        Overrides::default(),
        &[("COMPACT_TRIGGER_PCT", "0.75")],
    );
    assert_eq!(loaded.config.policy.trigger_pct, 0.75);
    assert_eq!(
        loaded.source_of("policy.trigger_pct"),
        "COMPACT_TRIGGER_PCT"
    );
    let loaded = load(
        Some(&path),
        Overrides::default(),
        &[("COMPACT_TRIGGER_PCT", "0.9")],
    );
    assert_eq!(loaded.config.policy.trigger_pct, 0.9);
    // Without the variable the file's value stands.
    let loaded = load(Some(&path), Overrides::default(), &[]);
    assert_eq!(loaded.config.policy.trigger_pct, 0.85);
    assert_eq!(loaded.source_of("policy.trigger_pct"), at(&path, 2));
}

#[test]
fn every_documented_variable_sets_its_field() {
    let vars = [
        ("COMPACT_MODEL", "gpt-4o-mini"),
        ("COMPACT_MAX_CONTEXT_TOKENS", "32000"),
        ("COMPACT_TRIGGER_PCT", "0.6"),
        ("COMPACT_HARD_CAP_BUFFER", "1000"),
        ("COMPACT_KEEP_RECENT_TURNS", "3"),
        ("COMPACT_KEEP_TOOL_IO_PAIRS", "2"),
        ("COMPACT_ROLES_NEVER_PRUNE", "system, developer, user"),
        ("COMPACT_STRATEGY", "code_delta"),
        ("COMPACT_MAX_SUMMARY_TOKENS", "512"),
        ("COMPACT_TARGET_AFTER_COMPACTION", "0.4"),
        ("COMPACT_WINDOW_MAX_MESSAGES", "50"),
        ("COMPACT_WINDOW_SUMMARIZE_ON_TRIM", "true"),
        ("COMPACT_WINDOW_PRESERVE_FIRST_N", "2"),
        ("COMPACT_WINDOW_PRESERVE_LAST_N", "8"),
        ("COMPACT_WINDOW_SUMMARY_EVERY_EVICTED", "5"),
        ("COMPACT_SUMMARY_MODE", "llm"),
        ("COMPACT_SUMMARY_LLM", "openai:gpt-4o-mini"),
        ("COMPACT_SUMMARY_DEADLINE_MS", "5000"),
        ("COMPACT_EVENTS_FILE", "/tmp/events.jsonl"),
        ("COMPACT_EVENTS_URL", "http://localhost:9000"),
        ("COMPACT_EVENTS_QUEUE", "16"),
        ("COMPACT_EVENTS_TIMEOUT_MS", "500"),
        ("COMPACT_STORAGE_ADAPTER", "s3"),
        ("COMPACT_STORAGE_PATH", "/tmp/arch"),
        ("COMPACT_STORAGE_BUCKET", "my-bucket"),
        ("COMPACT_STORAGE_PREFIX", "sessions"),
        ("COMPACT_STORAGE_ENDPOINT", "http://localhost:9001"),
        ("COMPACT_STORAGE_REGION", "eu-west-1"),
        ("COMPACT_STORAGE_ENCRYPTION", "sse-kms"),
        ("COMPACT_STORAGE_KMS_KEY_ID", "alias/ptc-archive"),
        ("COMPACT_REDACTION_ENABLED", "false"),
        ("COMPACT_REDACTION_PATTERNS", r"(ticket-)\d+"),
    ];
    // The test covers the whole table.
    let mut names: Vec<&str> = vars.iter().map(|(k, _)| *k).collect();
    let mut documented: Vec<&str> = ENV_VARS.iter().map(|(k, _)| *k).collect();
    names.sort_unstable();
    documented.sort_unstable();
    assert_eq!(names, documented);

    let loaded = load(None, Overrides::default(), &vars);
    let c = &loaded.config;
    assert_eq!(c.model.as_deref(), Some("gpt-4o-mini"));
    assert_eq!(c.max_context_tokens, 32_000);
    assert_eq!(c.policy.trigger_pct, 0.6);
    assert_eq!(c.policy.hard_cap_buffer, 1_000);
    assert_eq!(c.policy.keep_recent_turns, 3);
    assert_eq!(c.policy.keep_tool_io_pairs, 2);
    assert_eq!(
        c.policy.roles_never_prune,
        vec![Role::System, Role::Developer, Role::User]
    );
    assert_eq!(c.policy.strategy, Strategy::CodeDelta);
    assert_eq!(c.policy.max_summary_tokens, 512);
    assert_eq!(c.policy.target_after_compaction, 0.4);
    assert_eq!(c.window.max_messages, 50);
    assert!(c.window.summarize_on_trim);
    assert_eq!(c.window.preserve_first_n, 2);
    assert_eq!(c.window.preserve_last_n, 8);
    assert_eq!(c.window.summary_every_evicted, 5);
    assert_eq!(c.summary.mode, config::SummaryMode::Llm);
    assert_eq!(c.summary.llm.as_deref(), Some("openai:gpt-4o-mini"));
    assert_eq!(c.summary.deadline_ms, 5_000);
    assert_eq!(c.events.file, Some(PathBuf::from("/tmp/events.jsonl")));
    assert_eq!(c.events.url.as_deref(), Some("http://localhost:9000"));
    assert_eq!(c.events.queue, 16);
    assert_eq!(c.events.timeout_ms, 500);
    assert_eq!(c.storage.adapter, Adapter::S3);
    assert_eq!(c.storage.path, PathBuf::from("/tmp/arch"));
    assert_eq!(c.storage.bucket.as_deref(), Some("my-bucket"));
    assert_eq!(c.storage.prefix, "sessions");
    assert_eq!(c.storage.endpoint.as_deref(), Some("http://localhost:9001"));
    assert_eq!(c.storage.region, "eu-west-1");
    assert_eq!(c.storage.encryption, config::Encryption::SseKms);
    assert_eq!(c.storage.kms_key_id.as_deref(), Some("alias/ptc-archive"));
    assert!(!c.redaction.enabled);
    assert_eq!(c.redaction.patterns, vec![r"(ticket-)\d+".to_string()]);
    // Each value reports the variable that set it.
    for (var, path) in ENV_VARS {
        assert_eq!(loaded.source_of(path), *var, "the source of {path}");
    }
}

#[test]
fn text_variables_keep_values_that_look_like_numbers() {
    // A bucket, prefix or model named with digits only is still text.
    let loaded = load(
        None,
        Overrides::default(),
        &[
            ("COMPACT_STORAGE_BUCKET", "2024"),
            ("COMPACT_STORAGE_PREFIX", "007"),
            ("COMPACT_MODEL", "1.5"),
            ("COMPACT_STORAGE_REGION", "true"),
        ],
    );
    let c = &loaded.config;
    assert_eq!(c.storage.bucket.as_deref(), Some("2024"));
    assert_eq!(c.storage.prefix, "007");
    assert_eq!(c.model.as_deref(), Some("1.5"));
    assert_eq!(c.storage.region, "true");
}

#[test]
fn sensible_defaults() {
    // Seed 004's list, then what the seed leaves open.
    let c = Config::default();
    assert_eq!(c.policy.trigger_pct, 0.85);
    assert_eq!(c.policy.hard_cap_buffer, 1_500);
    assert_eq!(c.policy.keep_recent_turns, 6);
    assert_eq!(c.policy.keep_tool_io_pairs, 4);
    assert_eq!(
        c.policy.roles_never_prune,
        vec![Role::System, Role::Developer]
    );
    assert_eq!(c.policy.strategy, Strategy::TaskState);
    // The seed's worked example: 128,000 tokens, 126,500 available.
    assert_eq!(c.max_context_tokens, 128_000);
    assert_eq!(c.policy().budget(), 126_500);
    // Redaction is on by default with no extra patterns (seed 004,
    // "Default redaction enabled").
    assert!(c.redaction.enabled);
    assert!(c.redaction.patterns.is_empty());
    assert!(c.redactor().unwrap().is_some());
    // Archives only when asked for; the seed's directory when they are.
    assert_eq!(c.storage.adapter, Adapter::None);
    assert_eq!(c.storage.path, PathBuf::from(".compact/archive"));
    // The sliding window (seed 003) is off unless configured.
    assert_eq!(c.window.max_messages, 0);
    assert_eq!(c.model, None);
    // The policy the defaults describe is the policy's own default.
    assert_eq!(c.policy(), Policy::default());

    // Loading nothing gives the same, every value from `default`. An
    // empty file stands in for "no file" so that a `ptc.toml` in the
    // working directory cannot change the answer.
    let (_d, empty) = file("empty.toml", "");
    let loaded = load(Some(&empty), Overrides::default(), &[]);
    assert_eq!(loaded.config, Config::default());
    for (path, _, source) in loaded.entries() {
        assert_eq!(source, "default", "the source of {path}");
    }
    if !Path::new(config::DEFAULT_FILE).exists() {
        let loaded = load(None, Overrides::default(), &[]);
        assert_eq!(loaded.config, Config::default());
        assert_eq!(loaded.file, None);
    }
}

#[test]
fn flags_override_environment_override_file_override_defaults() {
    let (_d, path) = file(
        "layers.toml",
        "[policy]\ntrigger_pct = 0.8\nkeep_recent_turns = 5\nkeep_tool_io_pairs = 3\n",
    );
    let vars = [
        ("COMPACT_TRIGGER_PCT", "0.7"),
        ("COMPACT_KEEP_RECENT_TURNS", "4"),
        ("UNRELATED", "x"),
    ];
    let mut flags = Overrides::default();
    flags.set("policy.trigger_pct", "--trigger-pct", 0.6);
    let loaded = load(Some(&path), flags, &vars);
    let c = &loaded.config;
    // flag > env > file > default, one field at each layer.
    assert_eq!(c.policy.trigger_pct, 0.6);
    assert_eq!(loaded.source_of("policy.trigger_pct"), "--trigger-pct");
    assert_eq!(c.policy.keep_recent_turns, 4);
    assert_eq!(
        loaded.source_of("policy.keep_recent_turns"),
        "COMPACT_KEEP_RECENT_TURNS"
    );
    assert_eq!(c.policy.keep_tool_io_pairs, 3);
    assert_eq!(loaded.source_of("policy.keep_tool_io_pairs"), at(&path, 4));
    assert_eq!(c.policy.hard_cap_buffer, 1_500);
    assert_eq!(loaded.source_of("policy.hard_cap_buffer"), "default");

    // `entries` lists every leaf with the same sources.
    let entries = loaded.entries();
    let source = |p: &str| {
        entries
            .iter()
            .find(|(path, _, _)| path == p)
            .map(|(_, value, source)| (value.clone(), source.clone()))
            .unwrap_or_else(|| panic!("no entry {p}"))
    };
    assert_eq!(
        source("policy.trigger_pct"),
        ("0.6".into(), "--trigger-pct".into())
    );
    assert_eq!(
        source("policy.keep_recent_turns"),
        ("4".into(), "COMPACT_KEEP_RECENT_TURNS".into())
    );
    assert_eq!(
        source("policy.keep_tool_io_pairs"),
        ("3".into(), at(&path, 4))
    );
    assert_eq!(
        source("policy.strategy"),
        ("\"task_state\"".into(), "default".into())
    );
    assert_eq!(
        source("policy.roles_never_prune"),
        ("[\"system\", \"developer\"]".into(), "default".into())
    );

    // A later flag for the same field wins, and is the one named.
    let mut flags = Overrides::default();
    flags.set("policy.trigger_pct", "--trigger-pct", 0.6);
    flags.set("policy.trigger_pct", "--aggressive", 0.5);
    let loaded = load(Some(&path), flags, &vars);
    assert_eq!(loaded.config.policy.trigger_pct, 0.5);
    assert_eq!(loaded.source_of("policy.trigger_pct"), "--aggressive");
}

#[test]
fn out_of_range_value_from_environment_names_field_value_and_variable() {
    let err = load_err(
        None,
        Overrides::default(),
        &[("COMPACT_TRIGGER_PCT", "1.7")],
    );
    assert!(
        err.starts_with(
            "policy.trigger_pct = 1.7 (from COMPACT_TRIGGER_PCT) must be between 0.0 and 1.0"
        ),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn out_of_range_value_from_file_names_file_and_line() {
    let (_d, path) = file(
        "compact.yaml",
        "model: gpt-4o\npolicy:\n  trigger_pct: 1.7\n",
    );
    let err = load_err(Some(&path), Overrides::default(), &[]);
    assert!(
        err.starts_with(&format!(
            "policy.trigger_pct = 1.7 (from {}) must be between 0.0 and 1.0",
            at(&path, 3)
        )),
        "{err}"
    );
    // Zero is out of range too (compaction would always trigger).
    let (_d, path) = file("zero.toml", "[policy]\ntrigger_pct = 0.0\n");
    let err = load_err(Some(&path), Overrides::default(), &[]);
    assert!(
        err.starts_with(&format!("policy.trigger_pct = 0 (from {})", at(&path, 2))),
        "{err}"
    );
}

#[test]
fn out_of_range_value_from_a_flag_names_the_flag() {
    let mut flags = Overrides::default();
    flags.set("policy.keep_recent_turns", "--keep-recent-turns", 0);
    let err = load_err(None, flags, &[]);
    assert_eq!(
        err,
        "policy.keep_recent_turns = 0 (from --keep-recent-turns) must be at least 1"
    );
}

#[test]
fn every_problem_is_reported_on_its_own_line() {
    let (_d, path) = file(
        "bad.toml",
        "max_context_tokens = 2000\n\n[policy]\nhard_cap_buffer = 5000\nkeep_tool_io_pairs = 0\n",
    );
    let err = load_err(
        Some(&path),
        Overrides::default(),
        &[("COMPACT_TRIGGER_PCT", "-1")],
    );
    let lines: Vec<&str> = err.lines().collect();
    // Three problems, each once; the summary limit, which only fails
    // because the buffer leaves no budget, is not a fourth.
    assert_eq!(lines.len(), 3, "{err}");
    assert!(
        lines.iter().any(|l| l.starts_with(
            "policy.trigger_pct = -1 (from COMPACT_TRIGGER_PCT) must be between 0.0 and 1.0"
        )),
        "{err}"
    );
    assert!(
        lines.contains(
            &format!(
                "policy.hard_cap_buffer = 5000 (from {}) must be below max_context_tokens (2000)",
                at(&path, 4)
            )
            .as_str()
        ),
        "{err}"
    );
    assert!(
        lines.contains(
            &format!(
                "policy.keep_tool_io_pairs = 0 (from {}) must be at least 1",
                at(&path, 5)
            )
            .as_str()
        ),
        "{err}"
    );
}

#[test]
fn all_mistakes_of_a_file_are_reported_in_one_run() {
    // Six mistakes of every kind: two unknown keys, a wrong type, an
    // unknown value and two values out of range.
    let (_d, path) = file(
        "six.toml",
        "max_context_token = 8000\n\n[policy]\ntrigger_pct = \"high\"\nkeep_recent_turns = 0\n\
         strategy = \"task_states\"\n\n[events]\ntimeout_ms = 0\n\n[storage]\nbuckt = \"b\"\n",
    );
    let err = load_err(Some(&path), Overrides::default(), &[]);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 6, "{err}");
    for (start, line) in [
        ("max_context_token: unknown key", 1),
        ("policy.trigger_pct:", 4),
        ("policy.keep_recent_turns = 0", 5),
        ("policy.strategy: unknown value `task_states`", 6),
        ("events.timeout_ms = 0", 9),
        ("storage.buckt: unknown key", 12),
    ] {
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with(start) && l.contains(&at(&path, line))),
            "{start} at line {line}: {err}"
        );
    }
    // Through the binary: one run, every line, exit 2.
    let out = crate::util::ptc(&["config", "check", path.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1));
    let stderr = crate::util::text(&out.stderr);
    for start in [
        "max_context_token",
        "policy.trigger_pct",
        "policy.keep_recent_turns",
        "policy.strategy",
        "events.timeout_ms",
        "storage.buckt",
    ] {
        assert!(stderr.contains(start), "{start}: {stderr}");
    }
}

#[test]
fn storage_encryption_is_checked() {
    let (_d, path) = file(
        "kms.toml",
        "[storage]\nadapter = \"s3\"\nbucket = \"b\"\nkms_key_id = \"alias/k\"\n",
    );
    let err = load_err(Some(&path), Overrides::default(), &[]);
    assert!(
        err.contains("storage.kms_key_id = \"alias/k\"")
            && err.contains("needs storage.encryption = \"sse-kms\""),
        "{err}"
    );
    let (_d, path) = file("sse.toml", "[storage]\nencryption = \"sse-c\"\n");
    let err = load_err(Some(&path), Overrides::default(), &[]);
    assert!(
        err.contains("storage.encryption: unknown value `sse-c`"),
        "{err}"
    );
    assert!(err.contains("none, sse-s3, sse-kms"), "{err}");
}

#[test]
fn unknown_key_in_a_file_names_the_path_and_suggests() {
    let (_d, path) = file("typo.yaml", "policy:\n  trigger_pc: 0.9\n");
    let err = load_err(Some(&path), Overrides::default(), &[]);
    assert!(err.contains("policy.trigger_pc"), "{err}");
    assert!(err.contains("unknown key"), "{err}");
    assert!(err.contains(&at(&path, 2)), "{err}");
    assert!(err.contains("did you mean `trigger_pct`?"), "{err}");

    let (_d, path) = file("typo.toml", "[storage]\nadapter = \"fs\"\nbuckt = \"b\"\n");
    let err = load_err(Some(&path), Overrides::default(), &[]);
    assert!(err.contains("storage.buckt"), "{err}");
    assert!(err.contains(&at(&path, 3)), "{err}");
    assert!(err.contains("did you mean `bucket`?"), "{err}");

    // At the top level.
    let (_d, path) = file("typo.json", "{\n  \"max_context_token\": 1000\n}\n");
    let err = load_err(Some(&path), Overrides::default(), &[]);
    assert!(err.contains("max_context_token:"), "{err}");
    assert!(err.contains(&at(&path, 2)), "{err}");
    assert!(err.contains("did you mean `max_context_tokens`?"), "{err}");

    // A section that does not exist.
    let (_d, path) = file("typo2.toml", "[polcy]\ntrigger_pct = 0.9\n");
    let err = load_err(Some(&path), Overrides::default(), &[]);
    assert!(err.contains("polcy"), "{err}");
    assert!(err.contains("did you mean `policy`?"), "{err}");
}

#[test]
fn unknown_environment_variable_suggests_the_documented_name() {
    let err = load_err(
        None,
        Overrides::default(),
        &[("COMPACT_TRIGER_PCT", "0.5"), ("PATH", "/usr/bin")],
    );
    assert!(
        err.contains("COMPACT_TRIGER_PCT: unknown environment variable"),
        "{err}"
    );
    assert!(err.contains("did you mean COMPACT_TRIGGER_PCT?"), "{err}");
    // Variables outside the COMPACT_ namespace are not ours to judge.
    load(
        None,
        Overrides::default(),
        &[("PATH", "/usr/bin"), ("HOME", "/root")],
    );
}

#[test]
fn wrong_type_names_the_field_and_source() {
    let (_d, path) = file("types.toml", "[policy]\ntrigger_pct = \"high\"\n");
    let err = load_err(Some(&path), Overrides::default(), &[]);
    assert!(err.starts_with("policy.trigger_pct"), "{err}");
    assert!(err.contains(&at(&path, 2)), "{err}");
    assert!(err.contains("string"), "{err}");

    let (_d, path) = file("types.yaml", "policy:\n  keep_recent_turns: many\n");
    let err = load_err(Some(&path), Overrides::default(), &[]);
    assert!(err.starts_with("policy.keep_recent_turns"), "{err}");
    assert!(err.contains(&at(&path, 2)), "{err}");

    // From the environment: the variable is named.
    let err = load_err(
        None,
        Overrides::default(),
        &[("COMPACT_TRIGGER_PCT", "high")],
    );
    assert!(err.starts_with("policy.trigger_pct"), "{err}");
    assert!(err.contains("COMPACT_TRIGGER_PCT"), "{err}");
    assert!(err.contains("\"high\""), "{err}");

    let err = load_err(
        None,
        Overrides::default(),
        &[("COMPACT_KEEP_RECENT_TURNS", "-3")],
    );
    assert!(err.starts_with("policy.keep_recent_turns"), "{err}");
    assert!(err.contains("COMPACT_KEEP_RECENT_TURNS"), "{err}");

    // An unknown enum value lists the ones allowed.
    let err = load_err(
        None,
        Overrides::default(),
        &[("COMPACT_STRATEGY", "taskstate")],
    );
    assert_eq!(
        err,
        "policy.strategy: unknown value `taskstate` (from COMPACT_STRATEGY) \
         (did you mean `task_state`?); the values allowed are \
         task_state, decision_log, code_delta, brief"
    );

    // A list element is named by its index, its source is the list's.
    let err = load_err(
        None,
        Overrides::default(),
        &[("COMPACT_ROLES_NEVER_PRUNE", "system,admin")],
    );
    assert!(
        err.starts_with(
            "policy.roles_never_prune[1]: unknown value `admin` (from COMPACT_ROLES_NEVER_PRUNE)"
        ),
        "{err}"
    );
    let (_d, path) = file(
        "roles.yaml",
        "policy:\n  roles_never_prune:\n    - system\n    - sytem\n",
    );
    let err = load_err(Some(&path), Overrides::default(), &[]);
    assert!(
        err.starts_with(&format!(
            "policy.roles_never_prune[1]: unknown value `sytem` (from {}) (did you mean `system`?)",
            at(&path, 2)
        )),
        "{err}"
    );
}

#[test]
fn malformed_file_names_the_file() {
    for (name, text) in [
        ("broken.toml", "[policy\ntrigger_pct = 0.5\n"),
        ("broken.yaml", "policy:\n  trigger_pct: [0.5\n"),
        ("broken.json", "{\"policy\": {\"trigger_pct\": 0.5}\n"),
    ] {
        let (_d, path) = file(name, text);
        let err = load_err(Some(&path), Overrides::default(), &[]);
        assert!(
            err.contains(&path.display().to_string()),
            "{name}: the error should name the file: {err}"
        );
        assert!(
            err.starts_with(&format!(
                "cannot read the configuration `{}`: ",
                path.display()
            )),
            "{name}: {err}"
        );
        assert!(
            !err.contains("from default"),
            "{name}: a parse error does not come from the defaults: {err}"
        );
    }
}

#[test]
fn unknown_file_extension_is_refused() {
    let (_d, path) = file("compact.ini", "trigger_pct=0.5\n");
    let err = load_err(Some(&path), Overrides::default(), &[]);
    assert!(err.contains("compact.ini"), "{err}");
    assert!(err.contains("unknown configuration format"), "{err}");
    assert!(err.contains(".toml, .yaml, .yml or .json"), "{err}");
    // No extension at all.
    let (_d, path) = file("compact", "trigger_pct=0.5\n");
    let err = load_err(Some(&path), Overrides::default(), &[]);
    assert!(err.contains("unknown configuration format"), "{err}");
    // Case does not matter.
    let (_d, path) = file("COMPACT.YAML", "policy:\n  trigger_pct: 0.5\n");
    assert_eq!(
        load(Some(&path), Overrides::default(), &[])
            .config
            .policy
            .trigger_pct,
        0.5
    );
}

#[test]
fn missing_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nowhere.toml");
    let err = load_err(Some(&path), Overrides::default(), &[]);
    assert!(err.contains("nowhere.toml"), "{err}");
    assert!(err.contains("no such file"), "{err}");
}

#[test]
fn bad_redaction_pattern_is_an_error_naming_redaction_patterns() {
    let (_d, path) = file(
        "redact.toml",
        "[redaction]\npatterns = ['ok-\\d+', '(unclosed']\n",
    );
    let err = load_err(Some(&path), Overrides::default(), &[]);
    assert!(err.starts_with("redaction.patterns"), "{err}");
    assert!(err.contains("(unclosed"), "{err}");
    assert!(err.contains(&at(&path, 2)), "{err}");

    let err = load_err(
        None,
        Overrides::default(),
        &[("COMPACT_REDACTION_PATTERNS", "[a-")],
    );
    assert!(err.starts_with("redaction.patterns"), "{err}");
    assert!(err.contains("COMPACT_REDACTION_PATTERNS"), "{err}");
}

#[test]
fn user_patterns_from_config_are_applied_with_the_defaults() {
    let (_d, path) = file(
        "redact.yaml",
        "redaction:\n  patterns:\n    - '(ticket-)\\d{4,}'\n    - 'ACME-[A-Z0-9]{8}'\n",
    );
    let loaded = load(Some(&path), Overrides::default(), &[]);
    let r = loaded.config.redactor().unwrap().expect("redaction is on");
    let text = "see ticket-88231 and ACME-7F3K9Q2Z; api_key=sk-abc123";
    assert_eq!(
        r.redact(text),
        "see ticket-<REDACTED> and <REDACTED>; api_key=<REDACTED>"
    );
    // Turning redaction off gives no redactor at all.
    let loaded = load(
        Some(&path),
        Overrides::default(),
        &[("COMPACT_REDACTION_ENABLED", "false")],
    );
    assert!(loaded.config.redactor().unwrap().is_none());
}
