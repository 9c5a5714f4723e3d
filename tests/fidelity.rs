//! The fidelity corpus (issue 38): realistic histories compacted by the
//! digest summarizer, judged by what survives.
//!
//! Each `tests/fidelity/NAME.jsonl` is an OpenAI chat history; its sidecar
//! `NAME.facts.toml` lists three budgets (`max_context_tokens`), the facts
//! that must survive compaction, the failures that must be listed as
//! unresolved, and the fixed failures and look-alikes ("bait") that must
//! not be (format in `tests/fidelity/README.md`). Every history is
//! compacted through the public API ([`Compactor::preflight`] with
//! [`Digest`]) at each budget with each strategy, and:
//! - every fact occurs in the output (the summary and the kept messages);
//! - every unresolved failure is either still in a kept message or listed
//!   under the summary's unresolved section; no fixed failure and no bait
//!   is listed there, a pruned fixed failure's call is on the summary's
//!   fixed line, and no bait is listed as fixed either;
//! - the output is within the budget, and a rerun gives the same bytes;
//! - the summaries equal `tests/fidelity/golden/NAME.STRATEGY.txt` (all
//!   three budgets in one file).
//!
//! Regenerate the golden files after an intended change of the digest:
//! `UPDATE_GOLDEN=1 cargo test --test fidelity`, then review the diff.
//!
//! The retention table of BENCHMARKS.md (facts kept per history, budget
//! and strategy) is printed by
//! `cargo test --test fidelity retention_table -- --nocapture`.
//!
//! A fact or failure marked `known_gap = "why"` in its facts file is a
//! gap of the digest we know of: it is reported loudly on stderr but does
//! not fail the test (and a gap that now passes is reported too, so the
//! field can be removed). Facts are never deleted to make a test pass.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use ptc_lisp::history::{
    parse_jsonl, summary_body, summary_version, to_jsonl, Compactor, Digest, Message, Outcome,
    Policy, Strategy, TokenCounter,
};

/// The model whose tokenizer counts the budgets.
const MODEL: &str = "gpt-4o";

/// One history's sidecar file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Facts {
    /// What the history is, in a sentence.
    description: String,
    /// Three `max_context_tokens`, loosest first.
    budgets: Vec<usize>,
    /// The policy's `hard_cap_buffer` (default: a tenth of the budget).
    #[serde(default)]
    hard_cap_buffer: Option<usize>,
    /// The policy's `max_summary_tokens` (default: the policy's default,
    /// at most a quarter of the budget).
    #[serde(default)]
    max_summary_tokens: Option<usize>,
    #[serde(default)]
    fact: Vec<Fact>,
    #[serde(default)]
    unresolved: Vec<Failure>,
    #[serde(default)]
    fixed: Vec<Failure>,
    #[serde(default)]
    bait: Vec<Failure>,
}

/// Something a later turn needs: it must occur in the compacted output.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Fact {
    id: String,
    /// The text that must occur (case, whitespace, backticks and `*`
    /// ignored).
    text: String,
    /// Other spellings that count as well.
    #[serde(default)]
    any: Vec<String>,
    /// `path`: a file path, which may also be written grouped by
    /// directory (`src/: parse.rs, lib.rs` or `src/{parse.rs, lib.rs}`).
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    known_gap: Option<String>,
}

/// A failure (or a look-alike) named by a string that identifies it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Failure {
    id: String,
    marker: String,
    /// Why it belongs to its list, for the reader.
    #[serde(default)]
    why: Option<String>,
    /// Fixed failures: text naming the call (`cargo build`) that must be
    /// on the summary's fixed line when the failure was pruned.
    #[serde(default)]
    call: Option<String>,
    #[serde(default)]
    known_gap: Option<String>,
}

struct Case {
    name: String,
    facts: Facts,
    messages: Vec<Message>,
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fidelity")
}

fn load(name: &str) -> Case {
    let dir = corpus_dir();
    let text = std::fs::read_to_string(dir.join(format!("{name}.jsonl")))
        .unwrap_or_else(|e| panic!("{name}.jsonl: {e}"));
    let messages = parse_jsonl(&text).unwrap_or_else(|e| panic!("{name}.jsonl: {e}"));
    let facts_text = std::fs::read_to_string(dir.join(format!("{name}.facts.toml")))
        .unwrap_or_else(|e| panic!("{name}.facts.toml: {e}"));
    let facts: Facts =
        toml::from_str(&facts_text).unwrap_or_else(|e| panic!("{name}.facts.toml: {e}"));
    Case {
        name: name.to_string(),
        facts,
        messages,
    }
}

/// Every history of the corpus, by name.
fn names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(corpus_dir())
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".facts.toml").map(str::to_string)
        })
        .collect();
    names.sort();
    names
}

fn policy(facts: &Facts, budget: usize, strategy: Strategy) -> Policy {
    let defaults = Policy::default();
    Policy {
        max_context_tokens: budget,
        hard_cap_buffer: facts.hard_cap_buffer.unwrap_or(budget / 10),
        max_summary_tokens: facts
            .max_summary_tokens
            .unwrap_or(defaults.max_summary_tokens.min(budget / 4)),
        strategy,
        ..defaults
    }
}

fn compact(case: &Case, policy: &Policy) -> Result<Outcome, String> {
    let mut compactor = Compactor::new(MODEL, policy.clone()).map_err(|e| e.to_string())?;
    compactor
        .preflight(&case.messages, &Digest)
        .map_err(|e| format!("compaction failed: {e}"))
}

/// Lower case, one space for any run of whitespace, no backticks or `*`.
fn normalize(text: &str) -> String {
    let text: String = text
        .chars()
        .filter(|c| *c != '`' && *c != '*')
        .flat_map(char::to_lowercase)
        .collect();
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The text of messages as a model would see it: contents, tool names
/// and tool arguments, one normalized line per source line.
fn visible_lines(messages: &[&Message]) -> Vec<String> {
    let mut lines = Vec::new();
    for m in messages {
        let mut text = m.text().to_string();
        for call in m.tool_call_summaries() {
            text.push('\n');
            text.push_str(&call.name);
            text.push(' ');
            text.push_str(&call.arguments);
        }
        lines.extend(text.lines().map(normalize).filter(|l| !l.is_empty()));
    }
    lines
}

fn occurs(lines: &[String], needle: &str) -> bool {
    let needle = normalize(needle);
    lines.iter().any(|l| l.contains(&needle)) || lines.join(" ").contains(&needle)
}

/// A path occurs whole, or as its directory followed by its file name on
/// one line (a digest may group paths by directory).
fn path_occurs(lines: &[String], path: &str) -> bool {
    if occurs(lines, path) {
        return true;
    }
    let path = normalize(path);
    let Some((dir, base)) = path.rsplit_once('/') else {
        return false;
    };
    lines.iter().any(|l| {
        l.match_indices(dir)
            .any(|(at, _)| l[at + dir.len()..].contains(base))
    })
}

fn fact_holds(lines: &[String], fact: &Fact) -> bool {
    std::iter::once(&fact.text).chain(&fact.any).any(|t| {
        if fact.kind.as_deref() == Some("path") {
            path_occurs(lines, t)
        } else {
            occurs(lines, t)
        }
    })
}

/// The summary's sections as (normalized title, normalized body lines).
/// A `#` heading starts a section; so does a short `Label: text` line,
/// whose text is the section's one line. Under a heading, a list item
/// (`- Resolved: ...` quoted in a progress section) is an item of that
/// heading's section, not a label.
fn sections(summary: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let mut under_heading = false;
    for line in summary.lines() {
        let trimmed = line.trim();
        if let Some(title) = trimmed.strip_prefix('#') {
            out.push((normalize(title.trim_start_matches('#')), Vec::new()));
            under_heading = true;
            continue;
        }
        let bullet = trimmed.starts_with(['-', '*']);
        let bare = trimmed.trim_start_matches(['-', '*', ' ']);
        let label = if bullet && under_heading {
            None
        } else {
            bare.split_once(':')
        };
        if let Some((label, rest)) = label {
            let label = normalize(label);
            if label.len() <= 40 && failure_title(&label).is_some() {
                out.push((label, vec![normalize(rest)]));
                continue;
            }
        }
        match out.last_mut() {
            Some((_, body)) => body.push(normalize(line)),
            None => out.push((String::new(), vec![normalize(line)])),
        }
    }
    out
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Listed {
    Unresolved,
    Fixed,
}

/// Which failure list a (normalized) section title names, if any.
fn failure_title(title: &str) -> Option<Listed> {
    let unresolved = [
        "unresolved",
        "open fail",
        "open error",
        "still fail",
        "failing",
    ];
    if unresolved.iter().any(|w| title.contains(w)) {
        Some(Listed::Unresolved)
    } else if title.contains("fixed") || title.contains("resolved") {
        Some(Listed::Fixed)
    } else {
        None
    }
}

fn listed(summary: &str, which: Listed) -> Vec<String> {
    sections(summary)
        .into_iter()
        .filter(|(title, _)| failure_title(title) == Some(which))
        .flat_map(|(_, body)| body)
        .collect()
}

/// What one compaction kept and lost.
#[derive(Default)]
struct Verdict {
    facts_total: usize,
    facts_kept: usize,
    /// Problems that fail the test.
    failures: Vec<String>,
    /// Problems marked as known gaps.
    gaps: Vec<String>,
    /// Known gaps that no longer occur.
    healed: Vec<String>,
    summary: Option<String>,
    /// Tokens of the compacted history.
    tokens: usize,
}

impl Verdict {
    fn check(&mut self, ok: bool, gap: &Option<String>, what: String) {
        match (ok, gap) {
            (true, None) => {}
            (true, Some(_)) => self.healed.push(what),
            (false, None) => self.failures.push(what),
            (false, Some(why)) => self.gaps.push(format!("{what} (known gap: {why})")),
        }
    }
}

/// Compact `case` at `budget` with `strategy` and check it (a rerun too
/// when `rerun`).
fn judge(case: &Case, budget: usize, strategy: Strategy, rerun: bool) -> Verdict {
    judge_with(case, &policy(&case.facts, budget, strategy), rerun)
}

/// [`judge`] under any policy.
fn judge_with(case: &Case, policy: &Policy, rerun: bool) -> Verdict {
    let mut v = Verdict {
        facts_total: case.facts.fact.len(),
        ..Verdict::default()
    };
    let at = format!(
        "{} at {} with {}",
        case.name, policy.max_context_tokens, policy.strategy
    );
    let out = match compact(case, policy) {
        Ok(x) => x,
        Err(e) => {
            v.failures.push(format!("{at}: {e}"));
            return v;
        }
    };
    if out.report.is_none() {
        v.failures
            .push(format!("{at}: the history was not compacted"));
    }
    // Within budget, counted afresh.
    let tokens = TokenCounter::new(MODEL).count(&out.messages).total();
    v.tokens = tokens;
    if tokens > policy.budget() || out.tokens.total() > policy.budget() {
        v.failures.push(format!(
            "{at}: {tokens} tokens (reported {}) over the budget {}",
            out.tokens.total(),
            policy.budget()
        ));
    }
    // A rerun gives the same bytes.
    match rerun.then(|| compact(case, policy)) {
        None => {}
        Some(Ok(again)) if to_jsonl(&again.messages) == to_jsonl(&out.messages) => {}
        Some(_) => v
            .failures
            .push(format!("{at}: a rerun gave a different output")),
    }
    let summary = out
        .messages
        .iter()
        .find(|m| summary_version(m).is_some())
        .map(|m| summary_body(m).to_string());
    let all: Vec<&Message> = out.messages.iter().collect();
    let kept: Vec<&Message> = out
        .messages
        .iter()
        .filter(|m| summary_version(m).is_none())
        .collect();
    let all_lines = visible_lines(&all);
    let kept_lines = visible_lines(&kept);
    for fact in &case.facts.fact {
        let ok = fact_holds(&all_lines, fact);
        if ok {
            v.facts_kept += 1;
        }
        v.check(
            ok,
            &fact.known_gap,
            format!("{at}: fact `{}` ({:?}) lost", fact.id, fact.text),
        );
    }
    let text = summary.as_deref().unwrap_or("");
    let unresolved = listed(text, Listed::Unresolved);
    for f in &case.facts.unresolved {
        let ok = occurs(&kept_lines, &f.marker) || occurs(&unresolved, &f.marker);
        v.check(
            ok,
            &f.known_gap,
            format!(
                "{at}: open failure `{}` ({:?}) neither kept nor listed as unresolved",
                f.id, f.marker
            ),
        );
    }
    let fixed = listed(text, Listed::Fixed);
    for f in &case.facts.fixed {
        if let Some(call) = &f.call {
            let pruned = !occurs(&kept_lines, &f.marker);
            v.check(
                !pruned || occurs(&fixed, call),
                &f.known_gap,
                format!(
                    "{at}: fixed failure `{}` was pruned but {call:?} is not on the fixed line",
                    f.id
                ),
            );
        }
    }
    for (kind, list) in [
        ("fixed failure", &case.facts.fixed),
        ("bait", &case.facts.bait),
    ] {
        for f in list {
            let ok = !occurs(&unresolved, &f.marker);
            v.check(
                ok,
                &f.known_gap,
                format!(
                    "{at}: {kind} `{}` ({:?}) is listed as unresolved",
                    f.id, f.marker
                ),
            );
        }
    }
    // A look-alike is no failure at all: not fixed either.
    for f in &case.facts.bait {
        v.check(
            !occurs(&fixed, &f.marker),
            &f.known_gap,
            format!("{at}: bait `{}` ({:?}) is listed as fixed", f.id, f.marker),
        );
    }
    v.summary = summary;
    v
}

fn golden_path(name: &str, strategy: Strategy) -> PathBuf {
    corpus_dir()
        .join("golden")
        .join(format!("{name}.{}.txt", strategy.as_str()))
}

/// All budgets' summaries of one strategy, as the golden file holds them.
fn golden_text(case: &Case, summaries: &[(usize, Option<String>)]) -> String {
    let mut text = String::new();
    for (budget, summary) in summaries {
        let _ = writeln!(text, "=== {} max_context_tokens {budget} ===", case.name);
        match summary {
            Some(s) => {
                text.push_str(s);
                if !s.ends_with('\n') {
                    text.push('\n');
                }
            }
            None => text.push_str("(no summary)\n"),
        }
    }
    text
}

/// Check one history at every budget and strategy; panic with every
/// problem found.
fn check_history(name: &str) {
    let case = load(name);
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut failures = Vec::new();
    for strategy in Strategy::ALL {
        let mut summaries = Vec::new();
        for &budget in &case.facts.budgets {
            let v = judge(&case, budget, strategy, true);
            failures.extend(v.failures);
            for gap in &v.gaps {
                eprintln!("KNOWN GAP: {gap}");
            }
            for healed in &v.healed {
                eprintln!("KNOWN GAP NOW PASSES (remove its known_gap): {healed}");
            }
            summaries.push((budget, v.summary));
        }
        let text = golden_text(&case, &summaries);
        let path = golden_path(name, strategy);
        if update {
            std::fs::write(&path, &text).unwrap();
        } else {
            match std::fs::read_to_string(&path) {
                Ok(golden) if golden == text => {}
                Ok(_) => failures.push(format!(
                    "{name} with {strategy}: the summaries differ from {} \
                     (UPDATE_GOLDEN=1 regenerates it after an intended change)",
                    path.display()
                )),
                Err(e) => failures.push(format!(
                    "{}: {e} (UPDATE_GOLDEN=1 writes it)",
                    path.display()
                )),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} problem(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn corpus_is_complete_and_needs_compaction() {
    let names = names();
    assert!(names.len() >= 6, "{names:?}");
    for name in &names {
        let case = load(name);
        assert!(!case.facts.description.is_empty(), "{name}");
        assert_eq!(case.facts.budgets.len(), 3, "{name}: three budgets");
        assert!(
            case.facts.budgets.windows(2).all(|w| w[0] > w[1]),
            "{name}: budgets loosest first"
        );
        assert!(case.messages.len() >= 20, "{name}: tens of messages");
        let tokens = TokenCounter::new(MODEL).count(&case.messages).total();
        assert!(tokens >= 2_800, "{name}: {tokens} tokens");
        let loosest = policy(&case.facts, case.facts.budgets[0], Strategy::TaskState);
        assert!(
            tokens >= loosest.trigger_tokens(),
            "{name}: {tokens} tokens do not reach the trigger of the loosest budget"
        );
        assert!(case.facts.fact.len() >= 5, "{name}: facts");
        assert!(
            !case.facts.unresolved.is_empty() || !case.facts.fixed.is_empty(),
            "{name}: failures"
        );
        for f in case
            .facts
            .unresolved
            .iter()
            .chain(&case.facts.fixed)
            .chain(&case.facts.bait)
        {
            let lines = visible_lines(&case.messages.iter().collect::<Vec<_>>());
            assert!(
                occurs(&lines, &f.marker),
                "{name}: marker {:?} of `{}` is not in the history ({:?})",
                f.marker,
                f.id,
                f.why
            );
        }
        for fact in &case.facts.fact {
            let lines = visible_lines(&case.messages.iter().collect::<Vec<_>>());
            assert!(
                fact_holds(&lines, fact),
                "{name}: fact `{}` is not in the history",
                fact.id
            );
        }
    }
}

#[test]
fn coding_agent() {
    check_history("coding_agent");
}

#[test]
fn data_analysis() {
    check_history("data_analysis");
}

#[test]
fn support_chat() {
    check_history("support_chat");
}

#[test]
fn research_agent() {
    check_history("research_agent");
}

#[test]
fn ptc_agent() {
    check_history("ptc_agent");
}

#[test]
fn parallel_ops() {
    check_history("parallel_ops");
}

#[test]
fn every_history_has_its_own_test() {
    let tested = [
        "coding_agent",
        "data_analysis",
        "parallel_ops",
        "ptc_agent",
        "research_agent",
        "support_chat",
    ];
    assert_eq!(names(), tested);
}

/// The section helpers read headings and one-line labels.
#[test]
fn sections_are_read_from_headings_and_labels() {
    let s = "## Goal\n- fix it\n## Unresolved failures\n- run cargo test -> FAILED x\n\
             Fixed: cargo build (E0277)\n## Files\n- src/: parse.rs, lib.rs\n";
    assert_eq!(
        listed(s, Listed::Unresolved),
        ["- run cargo test -> failed x"]
    );
    assert_eq!(listed(s, Listed::Fixed), ["cargo build (e0277)"]);
    // A quoted conclusion under a heading is no label.
    let p = "## Progress\n- Resolved: p99 is back\n- Fixed: nothing here\n";
    assert!(listed(p, Listed::Fixed).is_empty());
    assert!(listed("- Fixed: cargo build", Listed::Fixed) == ["cargo build"]);
    let lines: Vec<String> = s.lines().map(normalize).collect();
    assert!(path_occurs(&lines, "src/parse.rs"));
    assert!(path_occurs(&lines, "src/lib.rs"));
    assert!(!path_occurs(&lines, "src/render.rs"));
}

/// Facts kept per history, budget and strategy (the table of
/// BENCHMARKS.md): `cargo test --test fidelity retention_table -- --nocapture`.
#[test]
fn retention_table() {
    let mut table = String::from(
        "| history | tokens | max_context_tokens | task_state | decision_log | code_delta | brief | open failures listed | fixed/bait listed as open |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    let mut totals: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for name in names() {
        let case = load(&name);
        let tokens = TokenCounter::new(MODEL).count(&case.messages).total();
        for &budget in &case.facts.budgets {
            let mut cells = Vec::new();
            let mut open_missed = 0;
            let mut wrongly_listed = 0;
            for strategy in Strategy::ALL {
                let v = judge(&case, budget, strategy, false);
                let t = totals.entry(strategy.as_str()).or_default();
                t.0 += v.facts_kept;
                t.1 += v.facts_total;
                cells.push(format!("{}/{}", v.facts_kept, v.facts_total));
                for p in v.failures.iter().chain(&v.gaps) {
                    if p.contains("neither kept nor listed") {
                        open_missed += 1;
                    } else if p.contains("is listed as unresolved") {
                        wrongly_listed += 1;
                    }
                }
            }
            let open = case.facts.unresolved.len() * Strategy::ALL.len();
            let _ = writeln!(
                table,
                "| {name} | {tokens} | {budget} | {} | {}/{open} | {wrongly_listed} |",
                cells.join(" | "),
                open - open_missed,
            );
        }
    }
    let _ = write!(table, "| all | | |");
    for strategy in Strategy::ALL {
        let (kept, total) = totals[strategy.as_str()];
        let _ = write!(
            table,
            " {kept}/{total} ({:.0}%) |",
            100.0 * kept as f64 / total.max(1) as f64
        );
    }
    table.push_str(" | |\n");
    println!("{table}");
}

/// How `target_after_compaction` trades what survives against room left
/// before the next compaction, over the whole corpus with `task_state`:
/// `cargo test --test fidelity target_sweep -- --ignored --nocapture`.
/// Prints one row per history and budget (facts kept and tokens after
/// compaction at each target, default keep policies), then the totals
/// for the default keep policies and for `keep_recent_turns = 1,
/// keep_tool_io_pairs = 1` (where the target decides how much is kept).
#[test]
#[ignore = "a measurement for BENCHMARKS.md"]
fn target_sweep() {
    const TARGETS: [f64; 5] = [0.3, 0.4, 0.5, 0.6, 0.7];
    let cases: Vec<Case> = names().iter().map(|n| load(n)).collect();
    let defaults = Policy::default();
    let keeps = [
        (defaults.keep_recent_turns, defaults.keep_tool_io_pairs),
        (1, 1),
    ];
    let mut totals = String::from(
        "| keep_recent_turns, keep_tool_io_pairs | target_after_compaction | facts kept | open failures kept or listed | prompt after / budget (mean) | rounds before the next trigger at 100 tokens a turn (mean) |\n\
         |---|---|---|---|---|---|\n",
    );
    for (turns, pairs) in keeps {
        let mut rows = format!(
            "keep_recent_turns {turns}, keep_tool_io_pairs {pairs}: facts kept, tokens after compaction\n\n| history | max_context_tokens |{}\n|---|---|{}\n",
            TARGETS.map(|t| format!(" {t} |")).concat(),
            "---|".repeat(TARGETS.len())
        );
        let mut sums = vec![(0, 0, 0, 0, 0.0, 0.0, 0); TARGETS.len()];
        for case in &cases {
            for &budget in &case.facts.budgets {
                let _ = write!(rows, "| {} | {budget} |", case.name);
                for (t, &target) in TARGETS.iter().enumerate() {
                    let policy = Policy {
                        target_after_compaction: target,
                        keep_recent_turns: turns,
                        keep_tool_io_pairs: pairs,
                        ..policy(&case.facts, budget, Strategy::TaskState)
                    };
                    let v = judge_with(case, &policy, false);
                    let _ = write!(rows, " {}/{}, {} |", v.facts_kept, v.facts_total, v.tokens);
                    let missed = v
                        .failures
                        .iter()
                        .chain(&v.gaps)
                        .filter(|p| p.contains("neither kept nor listed"))
                        .count();
                    let s = &mut sums[t];
                    s.0 += v.facts_kept;
                    s.1 += v.facts_total;
                    s.2 += case.facts.unresolved.len() - missed;
                    s.3 += case.facts.unresolved.len();
                    s.4 += v.tokens as f64 / policy.budget() as f64;
                    s.5 += policy.trigger_tokens().saturating_sub(v.tokens) as f64 / 100.0;
                    s.6 += 1;
                }
                rows.push('\n');
            }
        }
        println!("{rows}");
        for (t, s) in TARGETS.iter().zip(&sums) {
            let _ = writeln!(
                totals,
                "| {turns}, {pairs} | {t} | {}/{} ({:.1}%) | {}/{} | {:.2} | {:.1} |",
                s.0,
                s.1,
                100.0 * s.0 as f64 / s.1 as f64,
                s.2,
                s.3,
                s.4 / s.6 as f64,
                s.5 / s.6 as f64,
            );
        }
    }
    println!("{totals}");
}
