//! The history layer's configuration: one structure with seed 004's keys
//! and defaults, read in layers with figment: defaults, then a TOML, YAML
//! or JSON file (by extension), then `COMPACT_*` environment variables,
//! then command-line flags. Errors name the field path, the value, the
//! allowed range and where the value came from; unknown keys get a
//! did-you-mean. This module reads files and the environment.

use std::path::{Path, PathBuf};

use figment::providers::{Format, Json as JsonFile, Toml, Yaml};
use figment::value::{Dict, Map, Value};
use figment::{Figment, Metadata, Profile, Provider};
use serde::{Deserialize, Serialize};

use super::message::Role;
use super::policy::{Policy, Strategy, WindowPolicy};
use super::redact::Redactor;

/// Who writes summaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SummaryMode {
    #[default]
    Digest,
    Llm,
}

/// Seed 004's `policy` section (the budget's `max_context_tokens` is a
/// top-level key).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PolicySection {
    pub trigger_pct: f64,
    pub hard_cap_buffer: usize,
    pub keep_recent_turns: usize,
    pub keep_tool_io_pairs: usize,
    pub roles_never_prune: Vec<Role>,
    pub strategy: Strategy,
    pub max_summary_tokens: usize,
    pub target_after_compaction: f64,
}

impl Default for PolicySection {
    fn default() -> Self {
        let p = Policy::default();
        PolicySection {
            trigger_pct: p.trigger_pct,
            hard_cap_buffer: p.hard_cap_buffer,
            keep_recent_turns: p.keep_recent_turns,
            keep_tool_io_pairs: p.keep_tool_io_pairs,
            roles_never_prune: p.roles_never_prune,
            strategy: p.strategy,
            max_summary_tokens: p.max_summary_tokens,
            target_after_compaction: p.target_after_compaction,
        }
    }
}

/// The `summary` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SummarySection {
    pub mode: SummaryMode,
    /// The provider for `mode = "llm"` (`openai:MODEL`, ...); the agent's
    /// own model when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llm: Option<String>,
    /// The most one round's summary may take, retries and fallbacks
    /// included, in milliseconds; past it the round prunes only.
    pub deadline_ms: u64,
}

impl Default for SummarySection {
    fn default() -> Self {
        SummarySection {
            mode: SummaryMode::default(),
            llm: None,
            deadline_ms: super::summary::DEFAULT_SUMMARY_DEADLINE.as_millis() as u64,
        }
    }
}

/// The `events` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EventsSection {
    /// A JSON Lines file events are appended to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
    /// A base URL events are posted to (`{url}/ingest`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Events waiting to be posted beyond which new ones are dropped.
    pub queue: usize,
    /// Each POST's time limit, in milliseconds.
    pub timeout_ms: u64,
}

impl Default for EventsSection {
    fn default() -> Self {
        EventsSection {
            file: None,
            url: None,
            queue: 1024,
            timeout_ms: 2000,
        }
    }
}

/// Where archives go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Adapter {
    /// No archive.
    #[default]
    None,
    Fs,
    S3,
}

/// Server-side encryption of the objects the S3 archive writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Encryption {
    /// The bucket's default.
    #[default]
    None,
    /// Keys managed by S3 (`x-amz-server-side-encryption: AES256`).
    SseS3,
    /// Keys in KMS (`aws:kms`), `storage.kms_key_id` or the account's
    /// default S3 key.
    SseKms,
}

/// The `storage` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StorageSection {
    pub adapter: Adapter,
    /// The archive directory for `fs`.
    pub path: PathBuf,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bucket: Option<String>,
    pub prefix: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    pub region: String,
    /// Server-side encryption of S3 objects.
    pub encryption: Encryption,
    /// The KMS key (id, ARN or alias) for `encryption = "sse-kms"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kms_key_id: Option<String>,
}

impl Default for StorageSection {
    fn default() -> Self {
        StorageSection {
            adapter: Adapter::None,
            path: PathBuf::from(".compact/archive"),
            bucket: None,
            prefix: String::new(),
            endpoint: None,
            region: "us-east-1".into(),
            encryption: Encryption::None,
            kms_key_id: None,
        }
    }
}

/// The `redaction` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RedactionSection {
    pub enabled: bool,
    /// Extra regexes; a first capture group is kept.
    pub patterns: Vec<String>,
}

impl Default for RedactionSection {
    fn default() -> Self {
        RedactionSection {
            enabled: true,
            patterns: Vec::new(),
        }
    }
}

/// The whole configuration of the history layer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// The model whose tokenizer counts (`gpt-4o` for `ptc compact`, the
    /// run's own model for `ptc agent`, when absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    pub max_context_tokens: usize,
    pub policy: PolicySection,
    /// Seed 003's window; `max_messages = 0` (the default here) is off.
    pub window: WindowPolicy,
    pub summary: SummarySection,
    pub events: EventsSection,
    pub storage: StorageSection,
    pub redaction: RedactionSection,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            model: None,
            max_context_tokens: Policy::default().max_context_tokens,
            policy: PolicySection::default(),
            window: WindowPolicy {
                max_messages: 0,
                ..WindowPolicy::default()
            },
            summary: SummarySection::default(),
            events: EventsSection::default(),
            storage: StorageSection::default(),
            redaction: RedactionSection::default(),
        }
    }
}

impl Config {
    /// The compaction policy these settings describe.
    pub fn policy(&self) -> Policy {
        let p = &self.policy;
        Policy {
            max_context_tokens: self.max_context_tokens,
            trigger_pct: p.trigger_pct,
            hard_cap_buffer: p.hard_cap_buffer,
            keep_recent_turns: p.keep_recent_turns,
            keep_tool_io_pairs: p.keep_tool_io_pairs,
            roles_never_prune: p.roles_never_prune.clone(),
            strategy: p.strategy,
            max_summary_tokens: p.max_summary_tokens,
            target_after_compaction: p.target_after_compaction,
        }
    }

    /// How long one round's summary may take in all.
    pub fn summary_deadline(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.summary.deadline_ms)
    }

    /// The redactor these settings ask for (`None`: redaction off).
    pub fn redactor(&self) -> Result<Option<Redactor>, String> {
        if !self.redaction.enabled {
            return Ok(None);
        }
        Redactor::new(&self.redaction.patterns)
            .map(Some)
            .map_err(|e| e.to_string())
    }

    /// Range checks: (field path, value as written, what is allowed).
    fn problems(&self) -> Vec<(&'static str, String, String)> {
        let mut out = Vec::new();
        let p = &self.policy;
        if self.max_context_tokens < 100 {
            out.push((
                "max_context_tokens",
                self.max_context_tokens.to_string(),
                "must be at least 100".to_string(),
            ));
        }
        if !(p.trigger_pct > 0.0 && p.trigger_pct <= 1.0) {
            out.push((
                "policy.trigger_pct",
                p.trigger_pct.to_string(),
                "must be between 0.0 and 1.0 (above 0)".to_string(),
            ));
        }
        if p.hard_cap_buffer >= self.max_context_tokens {
            out.push((
                "policy.hard_cap_buffer",
                p.hard_cap_buffer.to_string(),
                format!(
                    "must be below max_context_tokens ({})",
                    self.max_context_tokens
                ),
            ));
        }
        if p.keep_recent_turns == 0 {
            out.push((
                "policy.keep_recent_turns",
                "0".into(),
                "must be at least 1".into(),
            ));
        }
        if p.keep_tool_io_pairs == 0 {
            out.push((
                "policy.keep_tool_io_pairs",
                "0".into(),
                "must be at least 1".into(),
            ));
        }
        if !(p.target_after_compaction > 0.0 && p.target_after_compaction <= 1.0) {
            out.push((
                "policy.target_after_compaction",
                p.target_after_compaction.to_string(),
                "must be 0.0-1.0 (above 0)".into(),
            ));
        }
        let budget = self.max_context_tokens.saturating_sub(p.hard_cap_buffer);
        // With no budget at all, the buffer's problem is the one to fix.
        if budget > 0 && (p.max_summary_tokens < 16 || p.max_summary_tokens >= budget.max(17)) {
            out.push((
                "policy.max_summary_tokens",
                p.max_summary_tokens.to_string(),
                format!("must be between 16 and the budget (max_context_tokens - hard_cap_buffer = {budget})"),
            ));
        }
        if self.events.queue == 0 {
            out.push(("events.queue", "0".into(), "must be at least 1".into()));
        }
        if !(1..=60_000).contains(&self.events.timeout_ms) {
            out.push((
                "events.timeout_ms",
                self.events.timeout_ms.to_string(),
                "must be between 1 and 60000".into(),
            ));
        }
        if let Some(url) = &self.events.url {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                out.push((
                    "events.url",
                    format!("{url:?}"),
                    "must start with http:// or https://".into(),
                ));
            }
        }
        if self.storage.adapter == Adapter::S3
            && self.storage.bucket.as_deref().is_none_or(str::is_empty)
        {
            out.push((
                "storage.bucket",
                "(none)".into(),
                "is required when storage.adapter is \"s3\"".into(),
            ));
        }
        if !(1..=600_000).contains(&self.summary.deadline_ms) {
            out.push((
                "summary.deadline_ms",
                self.summary.deadline_ms.to_string(),
                "must be between 1 and 600000".into(),
            ));
        }
        if let Some(key) = &self.storage.kms_key_id {
            if self.storage.encryption != Encryption::SseKms {
                out.push((
                    "storage.kms_key_id",
                    format!("{key:?}"),
                    "needs storage.encryption = \"sse-kms\"".into(),
                ));
            } else if key.trim().is_empty() {
                out.push((
                    "storage.kms_key_id",
                    "\"\"".into(),
                    "must name a KMS key (id, ARN or alias)".into(),
                ));
            }
        }
        if self.summary.mode == SummaryMode::Llm && self.summary.llm.as_deref() == Some("") {
            out.push((
                "summary.llm",
                "\"\"".into(),
                "must name a provider (openai:MODEL, anthropic:MODEL, script:FILE)".into(),
            ));
        }
        if let Err(e) = Redactor::new(&self.redaction.patterns) {
            out.push((
                "redaction.patterns",
                format!("{:?}", e.pattern),
                format!("must be regular expressions: {}", e.message),
            ));
        }
        out
    }
}

/// Each environment variable and the field it sets.
pub const ENV_VARS: &[(&str, &str)] = &[
    ("COMPACT_MODEL", "model"),
    ("COMPACT_MAX_CONTEXT_TOKENS", "max_context_tokens"),
    ("COMPACT_TRIGGER_PCT", "policy.trigger_pct"),
    ("COMPACT_HARD_CAP_BUFFER", "policy.hard_cap_buffer"),
    ("COMPACT_KEEP_RECENT_TURNS", "policy.keep_recent_turns"),
    ("COMPACT_KEEP_TOOL_IO_PAIRS", "policy.keep_tool_io_pairs"),
    ("COMPACT_ROLES_NEVER_PRUNE", "policy.roles_never_prune"),
    ("COMPACT_STRATEGY", "policy.strategy"),
    ("COMPACT_MAX_SUMMARY_TOKENS", "policy.max_summary_tokens"),
    (
        "COMPACT_TARGET_AFTER_COMPACTION",
        "policy.target_after_compaction",
    ),
    ("COMPACT_WINDOW_MAX_MESSAGES", "window.max_messages"),
    (
        "COMPACT_WINDOW_SUMMARIZE_ON_TRIM",
        "window.summarize_on_trim",
    ),
    ("COMPACT_WINDOW_PRESERVE_FIRST_N", "window.preserve_first_n"),
    ("COMPACT_WINDOW_PRESERVE_LAST_N", "window.preserve_last_n"),
    (
        "COMPACT_WINDOW_SUMMARY_EVERY_EVICTED",
        "window.summary_every_evicted",
    ),
    ("COMPACT_SUMMARY_MODE", "summary.mode"),
    ("COMPACT_SUMMARY_LLM", "summary.llm"),
    ("COMPACT_SUMMARY_DEADLINE_MS", "summary.deadline_ms"),
    ("COMPACT_EVENTS_FILE", "events.file"),
    ("COMPACT_EVENTS_URL", "events.url"),
    ("COMPACT_EVENTS_QUEUE", "events.queue"),
    ("COMPACT_EVENTS_TIMEOUT_MS", "events.timeout_ms"),
    ("COMPACT_STORAGE_ADAPTER", "storage.adapter"),
    ("COMPACT_STORAGE_PATH", "storage.path"),
    ("COMPACT_STORAGE_BUCKET", "storage.bucket"),
    ("COMPACT_STORAGE_PREFIX", "storage.prefix"),
    ("COMPACT_STORAGE_ENDPOINT", "storage.endpoint"),
    ("COMPACT_STORAGE_REGION", "storage.region"),
    ("COMPACT_STORAGE_ENCRYPTION", "storage.encryption"),
    ("COMPACT_STORAGE_KMS_KEY_ID", "storage.kms_key_id"),
    ("COMPACT_REDACTION_ENABLED", "redaction.enabled"),
    ("COMPACT_REDACTION_PATTERNS", "redaction.patterns"),
];

/// The fields whose values are text: their variables are taken as
/// written, never parsed as numbers or booleans.
const TEXT_PATHS: &[&str] = &[
    "model",
    "summary.llm",
    "events.file",
    "events.url",
    "storage.path",
    "storage.bucket",
    "storage.prefix",
    "storage.endpoint",
    "storage.region",
    "storage.kms_key_id",
];

/// The file read when no `--config` is given, if it exists.
pub const DEFAULT_FILE: &str = "ptc.toml";
/// The most bytes of a configuration file.
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;
/// The deepest a YAML configuration may nest (the keys are three levels
/// deep at most). TOML and JSON are read by parsers with a recursion limit
/// of their own (128) that run in linear time, so only YAML is scanned
/// for depth first.
pub const MAX_CONFIG_DEPTH: usize = 32;

/// A provider of fixed values with a name of our choosing (defaults,
/// command-line flags).
struct Named {
    name: &'static str,
    dict: Dict,
}

impl Provider for Named {
    fn metadata(&self) -> Metadata {
        Metadata::named(self.name)
    }

    fn data(&self) -> Result<Map<Profile, Dict>, figment::Error> {
        Ok(Profile::Default.collect(self.dict.clone()))
    }
}

const DEFAULTS: &str = "default";
const FLAGS: &str = "command line";

/// Command-line values, by field path (`policy.trigger_pct`), each as
/// the flag that set it and its value.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    entries: Vec<(String, String, Value)>,
}

impl Overrides {
    /// Set `path` from `flag` (`--trigger-pct`).
    pub fn set(&mut self, path: &str, flag: &str, value: impl Serialize) {
        if let Ok(v) = Value::serialize(value) {
            self.entries.push((path.to_string(), flag.to_string(), v));
        }
    }

    /// Add every entry of `other` (later entries win).
    pub fn extend(&mut self, other: Overrides) {
        self.entries.extend(other.entries);
    }

    fn dict(&self) -> Dict {
        let mut root = Dict::new();
        for (path, _, value) in &self.entries {
            insert_path(&mut root, path, value.clone());
        }
        root
    }

    fn flag_of(&self, path: &str) -> Option<&str> {
        self.entries
            .iter()
            .rev()
            .find(|(p, _, _)| p == path)
            .map(|(_, f, _)| f.as_str())
    }
}

fn insert_path(dict: &mut Dict, path: &str, value: Value) {
    match path.split_once('.') {
        None => {
            dict.insert(path.to_string(), value);
        }
        Some((head, rest)) => {
            let entry = dict
                .entry(head.to_string())
                .or_insert_with(|| Value::from(Dict::new()));
            if let Value::Dict(_, inner) = entry {
                insert_path(inner, rest, value);
            }
        }
    }
}

/// The configuration as loaded, with where each value came from.
#[derive(Debug)]
pub struct Loaded {
    pub config: Config,
    /// The file read, if any.
    pub file: Option<PathBuf>,
    /// The file's text, read once (for the lines values come from).
    text: Option<String>,
    figment: Figment,
    overrides: Overrides,
}

/// Why a configuration could not be loaded; each line names a field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .problems.join("\n"))]
pub struct ConfigError {
    pub problems: Vec<String>,
}

impl Loaded {
    /// Where the value at `path` came from: `default`, a file (with its
    /// line when it can be found), an environment variable or a flag.
    pub fn source_of(&self, path: &str) -> String {
        let file = self.file.as_deref().zip(self.text.as_deref());
        source_label(&self.figment, &self.overrides, file, path)
    }

    /// Every leaf setting as `(path, value as TOML, source)`, in the
    /// structure's order.
    pub fn entries(&self) -> Vec<(String, String, String)> {
        let mut leaves = Vec::new();
        let json = serde_json::to_value(&self.config).unwrap_or_default();
        leaves_of(&json, "", &mut leaves);
        leaves
            .into_iter()
            .map(|(path, value)| {
                let source = self.source_of(&path);
                (path, toml_value(&value), source)
            })
            .collect()
    }
}

fn leaves_of(json: &serde_json::Value, prefix: &str, out: &mut Vec<(String, serde_json::Value)>) {
    match json {
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                let path = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                leaves_of(v, &path, out);
            }
        }
        leaf => out.push((prefix.to_string(), leaf.clone())),
    }
}

fn toml_value(json: &serde_json::Value) -> String {
    match json {
        serde_json::Value::String(s) => format!("{s:?}"),
        serde_json::Value::Array(items) => {
            format!(
                "[{}]",
                items.iter().map(toml_value).collect::<Vec<_>>().join(", ")
            )
        }
        other => other.to_string(),
    }
}

/// Where `path`'s value came from; `file` is the configuration file with
/// its text.
fn source_label(
    figment: &Figment,
    overrides: &Overrides,
    file: Option<(&Path, &str)>,
    path: &str,
) -> String {
    // A list element (`policy.roles_never_prune.1`) comes from where its
    // list came from.
    let mut path = path;
    while let Some((parent, last)) = path.rsplit_once('.') {
        if !last.chars().all(|c| c.is_ascii_digit()) {
            break;
        }
        path = parent;
    }
    let Some(meta) = figment.find_metadata(path) else {
        return DEFAULTS.into();
    };
    if meta.name == FLAGS {
        return overrides.flag_of(path).unwrap_or(FLAGS).to_string();
    }
    if meta.name == DEFAULTS {
        return DEFAULTS.into();
    }
    if meta.name.contains("environment") {
        return ENV_VARS
            .iter()
            .find(|(_, p)| *p == path)
            .map_or_else(|| "environment".to_string(), |(v, _)| (*v).to_string());
    }
    match file {
        Some((file, text)) => match line_of(file, text, path) {
            Some(line) => format!("{}:{line}", file.display()),
            None => file.display().to_string(),
        },
        None => meta.name.to_string(),
    }
}

/// The line of the key that sets `path` in a config file of `text`
/// (1-based), or of the nearest enclosing key for a list element
/// (`a.b.1` is at `a.b`).
fn line_of(file: &Path, text: &str, path: &str) -> Option<usize> {
    let ext = file
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let keys = match ext.as_str() {
        "toml" => toml_keys(text),
        "yaml" | "yml" => yaml_keys(text),
        _ => {
            let mut out = Vec::new();
            flow_keys(text, &[], ':', 1, &mut out);
            out
        }
    };
    let mut path = path;
    loop {
        if let Some((_, line)) = keys.iter().find(|(p, _)| p == path) {
            return Some(*line);
        }
        path = path.rsplit_once('.')?.0;
    }
}

/// `line` without its comment (`#` outside quotes; in YAML only at the
/// start or after a space, as YAML has it).
fn strip_comment(line: &str, yaml: bool) -> &str {
    let mut quote = None;
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match quote {
            Some(q) if c == q && prev != '\\' => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '#' && (!yaml || prev.is_whitespace()) => return &line[..i],
            None => {}
        }
        prev = c;
    }
    line
}

/// The parts of a dotted key (`a."b.c".d`), unquoted.
fn key_parts(key: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut part = String::new();
    let mut quote = None;
    for c in key.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => part.push(c),
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '.' => parts.push(std::mem::take(&mut part).trim().to_string()),
            None => part.push(c),
        }
    }
    parts.push(part.trim().to_string());
    parts
}

/// Every key of a TOML file with its line: `[section]` headers, plain,
/// quoted and dotted keys, and the keys of inline tables.
fn toml_keys(text: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut section: Vec<String> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let t = strip_comment(raw, false).trim();
        if let Some(header) = t.strip_prefix('[') {
            let header = header.trim_start_matches('[');
            let header = header.split(']').next().unwrap_or("");
            section = key_parts(header);
            out.push((section.join("."), line));
            continue;
        }
        let Some(eq) = outside_quotes(t, '=') else {
            continue;
        };
        let mut path = section.clone();
        path.extend(key_parts(&t[..eq]));
        out.push((path.join("."), line));
        let value = t[eq + 1..].trim_start();
        if value.starts_with('{') {
            flow_keys(value, &path, '=', line, &mut out);
        }
    }
    out
}

/// Every key of a YAML file with its line, by indentation (block
/// mappings) and inside flow mappings (`{a: 1}`).
fn yaml_keys(text: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut open: Vec<(usize, String)> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let stripped = strip_comment(raw, true);
        let t = stripped.trim();
        if t.is_empty() || t.starts_with('-') || t.starts_with("...") {
            continue;
        }
        let indent = stripped.len() - stripped.trim_start().len();
        while open.last().is_some_and(|(n, _)| *n >= indent) {
            open.pop();
        }
        if t.starts_with('{') {
            let base: Vec<String> = open.iter().map(|(_, k)| k.clone()).collect();
            flow_keys(t, &base, ':', line, &mut out);
            continue;
        }
        let Some(colon) = yaml_colon(t) else {
            continue;
        };
        let key = key_parts(&t[..colon]).join(".");
        let mut path: Vec<String> = open.iter().map(|(_, k)| k.clone()).collect();
        path.push(key.clone());
        out.push((path.join("."), line));
        let value = t[colon + 1..].trim();
        if value.is_empty() {
            open.push((indent, key));
        } else if value.starts_with('{') {
            flow_keys(value, &path, ':', line, &mut out);
        }
    }
    out
}

/// Where a YAML key ends: the first `:` outside quotes followed by a
/// space or the end of the line.
fn yaml_colon(t: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = outside_quotes(&t[from..], ':').map(|i| i + from) {
        if t[i + 1..].is_empty() || t[i + 1..].starts_with(char::is_whitespace) {
            return Some(i);
        }
        from = i + 1;
    }
    None
}

/// The first `target` in `t` outside quotes.
fn outside_quotes(t: &str, target: char) -> Option<usize> {
    let mut quote = None;
    let mut prev = ' ';
    for (i, c) in t.char_indices() {
        match quote {
            Some(q) if c == q && prev != '\\' => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == target => return Some(i),
            None => {}
        }
        prev = c;
    }
    None
}

/// The keys of flow text (a JSON document, a TOML inline table, a YAML
/// flow mapping) under `base`, with their lines counted from `first`;
/// `sep` is what follows a key (`:` or `=`).
fn flow_keys(text: &str, base: &[String], sep: char, first: usize, out: &mut Vec<(String, usize)>) {
    // Each open container: is it an object, and did it push a key?
    let mut frames: Vec<(bool, bool)> = Vec::new();
    let mut path: Vec<String> = base.to_vec();
    let mut token = String::new();
    // The key whose value comes next, when there is one.
    let mut pending: Option<String> = None;
    let mut line = first;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\n' => line += 1,
            '"' | '\'' => {
                token.clear();
                let mut escaped = false;
                for s in chars.by_ref() {
                    if s == '\n' {
                        line += 1;
                    }
                    if escaped {
                        escaped = false;
                    } else if s == '\\' && c == '"' {
                        escaped = true;
                        continue;
                    } else if s == c {
                        break;
                    }
                    token.push(s);
                }
            }
            '{' | '[' => {
                let pushed = match pending.take() {
                    Some(key) => {
                        path.push(key);
                        true
                    }
                    None => false,
                };
                frames.push((c == '{', pushed));
                token.clear();
            }
            '}' | ']' => {
                if let Some((_, true)) = frames.pop() {
                    path.pop();
                }
                pending = None;
                token.clear();
            }
            ',' => {
                pending = None;
                token.clear();
            }
            c if c == sep
                && pending.is_none()
                && frames.last().is_some_and(|(object, _)| *object) =>
            {
                let key = std::mem::take(&mut token).trim().to_string();
                let mut full = path.clone();
                full.push(key.clone());
                out.push((full.join("."), line));
                pending = Some(key);
            }
            c if c.is_whitespace() => {}
            c => {
                if pending.is_none() {
                    token.push(c);
                }
            }
        }
    }
}

/// Read the configuration: defaults, then `file` (or `ptc.toml` in the
/// working directory if it exists), then `COMPACT_*` variables, then
/// `overrides`.
pub fn load(file: Option<&Path>, overrides: Overrides) -> Result<Loaded, ConfigError> {
    let env: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    load_with_env(file, overrides, &env)
}

/// [`load`] with the environment given as a list of variables.
pub fn load_with_env(
    file: Option<&Path>,
    overrides: Overrides,
    env: &[(String, String)],
) -> Result<Loaded, ConfigError> {
    let var = |name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let file = match file {
        Some(f) => {
            if !f.exists() {
                return Err(ConfigError {
                    problems: vec![format!(
                        "cannot read the configuration `{}`: no such file",
                        f.display()
                    )],
                });
            }
            Some(f.to_path_buf())
        }
        None => Some(PathBuf::from(DEFAULT_FILE)).filter(|p| p.exists()),
    };
    let defaults = Named {
        name: DEFAULTS,
        dict: match Value::serialize(Config::default()) {
            Ok(Value::Dict(_, d)) => d,
            _ => Dict::new(),
        },
    };
    let text = match &file {
        Some(f) => Some(read_config_file(f)?),
        None => None,
    };
    let mut figment = Figment::new().merge(defaults);
    if let (Some(f), Some(text)) = (&file, &text) {
        let ext = f
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_ascii_lowercase();
        figment = match ext.as_str() {
            "toml" => figment.merge(Toml::string(text)),
            "yaml" | "yml" => {
                if let Some((line, column)) = super::yaml_depth::too_deep(text, MAX_CONFIG_DEPTH) {
                    return Err(ConfigError {
                        problems: vec![format!(
                            "cannot read the configuration `{}`: it nests deeper than {MAX_CONFIG_DEPTH} levels at line {line} column {column}",
                            f.display()
                        )],
                    });
                }
                figment.merge(Yaml::string(text))
            }
            "json" => figment.merge(JsonFile::string(text)),
            _ => {
                return Err(ConfigError {
                    problems: vec![format!(
                        "`{}`: unknown configuration format (use .toml, .yaml, .yml or .json)",
                        f.display()
                    )],
                })
            }
        };
    }
    // Environment: only the documented names; an unknown COMPACT_ name is
    // an error.
    let mut problems = Vec::new();
    let mut env_dict = Dict::new();
    for (name, _) in env {
        if name.starts_with("COMPACT_") && !ENV_VARS.iter().any(|(v, _)| *v == name) {
            let names = ENV_VARS.iter().map(|(v, _)| *v);
            let hint = crate::error::suggest(name, names)
                .first()
                .map(|s| format!(" (did you mean {s}?)"))
                .unwrap_or_default();
            problems.push(format!("{name}: unknown environment variable{hint}"));
        }
    }
    for (name, path) in ENV_VARS {
        let Some(raw) = var(name) else { continue };
        let value = if path.ends_with("roles_never_prune") || path.ends_with("patterns") {
            let trimmed = raw.trim().trim_start_matches('[').trim_end_matches(']');
            let items: Vec<Value> = if trimmed.trim().is_empty() {
                Vec::new()
            } else if path.ends_with("patterns") {
                vec![Value::from(raw.clone())]
            } else {
                trimmed
                    .split(',')
                    .map(|s| Value::from(s.trim().to_string()))
                    .collect()
            };
            Value::from(items)
        } else if TEXT_PATHS.contains(path) {
            // Text as written: a bucket named `2024` is not a number.
            Value::from(raw.clone())
        } else {
            raw.trim()
                .parse::<Value>()
                .unwrap_or_else(|_| Value::from(raw.clone()))
        };
        insert_path(&mut env_dict, path, value);
    }
    figment = figment.merge(Named {
        name: "environment variable",
        dict: env_dict,
    });
    figment = figment.merge(Named {
        name: FLAGS,
        dict: overrides.dict(),
    });
    let source = file.as_deref().zip(text.as_deref());
    let Some(config) = extract_all(&figment, &overrides, source, &mut problems) else {
        return Err(ConfigError { problems });
    };
    for (path, value, rule) in config.problems() {
        let source = source_label(
            &figment,
            &overrides,
            file.as_deref().zip(text.as_deref()),
            path,
        );
        problems.push(format!("{path} = {value} (from {source}) {rule}"));
    }
    if !problems.is_empty() {
        return Err(ConfigError { problems });
    }
    Ok(Loaded {
        config,
        file,
        text,
        figment,
        overrides,
    })
}

/// The configuration in `figment`, with a problem in `problems` for
/// every key that cannot be read (unknown, of the wrong type, an unknown
/// value), not only the first: each bad value is set aside (its default
/// takes its place) and the rest read again, so one run reports them all
/// and the range checks still see every good value. `None` when the
/// sources themselves cannot be read (a file that does not parse).
fn extract_all(
    figment: &Figment,
    overrides: &Overrides,
    file: Option<(&Path, &str)>,
    problems: &mut Vec<String>,
) -> Option<Config> {
    let mut data: Dict = match figment.extract() {
        Ok(data) => data,
        Err(errors) => {
            for e in errors {
                problems.push(describe(&e, figment, overrides, file));
            }
            return None;
        }
    };
    // Each round sets at least one key aside, so this ends; the bound is
    // for safety.
    for _ in 0..256 {
        let errors = match Figment::from(figment::providers::Serialized::defaults(&data))
            .extract::<Config>()
        {
            Ok(config) => return Some(config),
            Err(errors) => errors,
        };
        let mut set_aside = false;
        for e in errors {
            problems.push(describe(&e, figment, overrides, file));
            set_aside |= remove_path(&mut data, &offending_path(&e));
        }
        if !set_aside {
            return None;
        }
    }
    None
}

/// The key an extraction error is about: for an unknown key the key
/// itself, for a list element the whole list.
fn offending_path(e: &figment::Error) -> Vec<String> {
    let mut path = e.path.clone();
    if let figment::error::Kind::UnknownField(field, _) = &e.kind {
        if path.last() != Some(field) {
            path.push(field.clone());
        }
    }
    if let Some(i) = path
        .iter()
        .position(|p| p.chars().all(|c| c.is_ascii_digit()))
    {
        path.truncate(i);
    }
    path
}

/// Remove the value at `path` from `dict`; false when there is none.
fn remove_path(dict: &mut Dict, path: &[String]) -> bool {
    match path {
        [] => false,
        [key] => dict.remove(key).is_some(),
        [key, rest @ ..] => match dict.get_mut(key) {
            Some(Value::Dict(_, inner)) => remove_path(inner, rest),
            _ => false,
        },
    }
}

/// A configuration file's text, at most [`MAX_CONFIG_BYTES`].
fn read_config_file(file: &Path) -> Result<String, ConfigError> {
    crate::input::read_file_text(
        file,
        MAX_CONFIG_BYTES,
        &format!("the configuration `{}`", file.display()),
        "for a configuration file",
    )
    .map_err(|e| ConfigError {
        problems: vec![e.describe(&format!("the configuration `{}`", file.display()))],
    })
}

/// A field path as messages show it: list elements as `name[1]`.
fn display_path(path: &str) -> String {
    let mut out = String::new();
    for part in path.split('.') {
        if !out.is_empty() && part.chars().all(|c| c.is_ascii_digit()) {
            out.push_str(&format!("[{part}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(part);
        }
    }
    out
}

fn describe(
    e: &figment::Error,
    figment: &Figment,
    overrides: &Overrides,
    file: Option<(&Path, &str)>,
) -> String {
    use figment::error::Kind;
    let path = e.path.join(".");
    match &e.kind {
        Kind::UnknownField(field, expected) => {
            // figment's path may or may not end with the field already.
            let full = if path.is_empty() {
                field.clone()
            } else if e.path.last() == Some(field) {
                path.clone()
            } else {
                format!("{path}.{field}")
            };
            let hint = crate::error::suggest(field, expected.iter().copied())
                .first()
                .map(|s| format!(" (did you mean `{s}`?)"))
                .unwrap_or_default();
            let source = match file {
                Some((f, text)) => match line_of(f, text, &full) {
                    Some(line) => format!("{}:{line}", f.display()),
                    None => f.display().to_string(),
                },
                None => "configuration".into(),
            };
            format!(
                "{full}: unknown key (in {source}){hint}; the keys here are {}",
                expected.join(", ")
            )
        }
        // No field: the file itself could not be read or parsed.
        kind if path.is_empty() => {
            let source = match (file, e.metadata.as_ref()) {
                (Some((f, _)), _) => f.display().to_string(),
                (None, Some(meta)) => meta.name.to_string(),
                (None, None) => "configuration".into(),
            };
            format!("cannot read the configuration `{source}`: {kind}")
        }
        Kind::UnknownVariant(found, expected) => {
            let source = source_label(figment, overrides, file, &path);
            let hint = crate::error::suggest(found, expected.iter().copied())
                .first()
                .map(|s| format!(" (did you mean `{s}`?)"))
                .unwrap_or_default();
            format!(
                "{}: unknown value `{found}` (from {source}){hint}; the values allowed are {}",
                display_path(&path),
                expected.join(", ")
            )
        }
        kind => {
            let source = source_label(figment, overrides, file, &path);
            format!("{}: {kind} (from {source})", display_path(&path))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sensible_defaults() {
        let loaded = load_with_env(
            Some(Path::new("/dev/null/none.toml")),
            Overrides::default(),
            &[],
        );
        assert!(loaded.is_err(), "a named file must exist");
        let c = Config::default();
        assert_eq!(c.policy(), Policy::default());
        assert!(c.redaction.enabled);
        assert_eq!(c.storage.adapter, Adapter::None);
    }
}
