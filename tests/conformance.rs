//! The specification's own examples as a conformance suite.
//!
//! `tests/data/spec_examples.json` is extracted from the PTC-Lisp
//! specification (ptc_runner commit 6da99ff0) by
//! `tests/conformance/extract_spec_examples.py`. Every example of kind
//! "value" must evaluate to a value `=` to its expected text (read back
//! with our own reader), every example of kind "error" must fail.
//!
//! The tables below are the only exceptions, and they are kept honest: an
//! unlisted failure fails the test, and so does a listed example that now
//! passes. `tests/conformance/DEVIATIONS.md` is generated from the same
//! results (`UPDATE_DEVIATIONS=1 cargo test deviations_doc` rewrites it).

use ptc_lisp::eval::Limits;
use ptc_lisp::value::{pr_str, Value};
use serde::Deserialize;

/// Examples whose spec text we deliberately do not follow.
pub const DEVIATIONS: &[(&str, &str)] = &[];

/// Examples failing only because a builtin is not implemented yet (the
/// reason names it). Pruned when the builtins land.
pub const MISSING: &[(&str, &str)] = &[];

/// "value" examples that cannot be checked as written, with the reason.
/// (Examples the extractor already marks illustrative, such as `; => ...`
/// or prose like `; => filtered list`, are not repeated here.)
pub const ILLUSTRATIVE: &[(&str, &str)] = &[
    (
        "S-0194",
        "`(seq #{1 2 3})`: the spec itself says `[1 2 3] or another order`; set order is unspecified",
    ),
    (
        "S-0359",
        "`(filter pred [])` in the §11.1 table: `pred` is a placeholder, not a defined function",
    ),
];

/// Examples that need `data/` context, with the JSON object they run
/// with. At 6da99ff0 every spec example that reads `data/` or calls a
/// `tool/` has a prose or `...` result (e.g. `(filter expensive?
/// data/expenses) ; => filtered list`), so none is checkable and the table
/// is empty; it is here for examples a later spec adds.
pub const CONTEXT: &[(&str, &str)] = &[];

#[derive(Debug, Deserialize)]
pub struct Example {
    pub id: String,
    pub section: String,
    pub line: u32,
    #[allow(dead_code)]
    pub source: String,
    pub code: String,
    pub expected: String,
    pub kind: String,
    #[serde(default)]
    pub note: String,
}

pub fn examples() -> Vec<Example> {
    serde_json::from_str(include_str!("data/spec_examples.json"))
        .expect("spec_examples.json is a list of examples")
}

/// What running one example gave.
pub enum Outcome {
    Pass,
    /// The example did not behave as the spec says; the text is what we give.
    Fail(String),
    /// Not checkable (illustrative, TODO/BUG marker or listed in ILLUSTRATIVE).
    Skipped,
}

/// Read `text` as a literal value with our own reader (`quote` keeps
/// lists from being called).
pub fn read_literal(text: &str) -> Result<Value, String> {
    ptc_lisp::reader::read_one(text).map_err(|e| format!("unreadable: {e}"))?;
    crate::util::eval(&format!("(quote {text})")).map_err(|e| format!("unreadable: {e}"))
}

/// Clojure `=`, plus: a value equals an expected text it prints as
/// exactly (this covers `##NaN`, which is never `=` to itself, and
/// regexes, which compare by identity).
pub fn matches(actual: &Value, expected_text: &str) -> Result<bool, String> {
    let expected = read_literal(expected_text)?;
    Ok(*actual == expected
        || pr_str(actual) == pr_str(&expected)
        || pr_str(actual) == expected_text)
}

/// A short description of a result for reports.
pub fn describe(result: &Result<Value, ptc_lisp::error::Error>) -> String {
    match result {
        Ok(v) => {
            let s = pr_str(v);
            if s.chars().count() > 120 {
                format!("{}...", s.chars().take(120).collect::<String>())
            } else {
                s
            }
        }
        Err(e) => format!("error: {}", e.to_string().lines().next().unwrap_or("")),
    }
}

fn lookup<'a>(table: &[(&str, &'a str)], id: &str) -> Option<&'a str> {
    table.iter().find(|(i, _)| *i == id).map(|(_, r)| *r)
}

pub fn run_example(ex: &Example) -> Outcome {
    if ex.kind == "illustrative" || ex.kind == "todo" || lookup(ILLUSTRATIVE, &ex.id).is_some() {
        return Outcome::Skipped;
    }
    let data = lookup(CONTEXT, &ex.id).unwrap_or("{}");
    let result = crate::util::eval_with(&ex.code, data, Limits::default());
    match ex.kind.as_str() {
        "error" => match result {
            Err(_) => Outcome::Pass,
            Ok(_) => Outcome::Fail(describe(&result)),
        },
        "value" => match &result {
            Ok(v) => match matches(v, &ex.expected) {
                Ok(true) => Outcome::Pass,
                Ok(false) => Outcome::Fail(describe(&result)),
                Err(e) => panic!("{}: expected text `{}` is {e}", ex.id, ex.expected),
            },
            Err(_) => Outcome::Fail(describe(&result)),
        },
        other => panic!("{}: unknown kind `{other}`", ex.id),
    }
}

/// Check the exception tables against the results; returns the summary.
pub fn check_tables(
    suite: &str,
    results: &[(String, Outcome)],
    deviations: &[(&str, &str)],
    missing: &[(&str, &str)],
    show: impl Fn(&str) -> String,
) -> (usize, usize) {
    let mut problems = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (id, reason) in deviations.iter().chain(missing) {
        if !seen.insert(*id) {
            problems.push(format!("{id} is listed twice"));
        }
        if reason.trim().is_empty() {
            problems.push(format!("{id} is listed without a reason"));
        }
        match results.iter().find(|(i, _)| i == id) {
            None => problems.push(format!("{id} is listed but is not a {suite} entry")),
            Some((_, Outcome::Pass)) => problems.push(format!(
                "{id} is listed as failing but now passes; remove it from the list: {}",
                show(id)
            )),
            Some((_, Outcome::Skipped)) => {
                problems.push(format!("{id} is listed but is not checked (illustrative)"))
            }
            Some((_, Outcome::Fail(_))) => {}
        }
    }
    let mut passed = 0;
    let mut skipped = 0;
    for (id, outcome) in results {
        match outcome {
            Outcome::Pass => passed += 1,
            Outcome::Skipped => skipped += 1,
            Outcome::Fail(got) => {
                if !seen.contains(id.as_str()) {
                    problems.push(format!("{id} fails: {}\n    we give: {got}", show(id)));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{suite}: {} problem(s):\n  {}",
        problems.len(),
        problems.join("\n  ")
    );
    (passed, skipped)
}

fn show_example(ex: &Example) -> String {
    format!(
        "[{} line {}] `{}` ; => {}",
        ex.section, ex.line, ex.code, ex.expected
    )
}

pub fn run_all() -> (Vec<Example>, Vec<(String, Outcome)>) {
    let examples = examples();
    let results = examples
        .iter()
        .map(|ex| (ex.id.clone(), run_example(ex)))
        .collect();
    (examples, results)
}

#[test]
fn spec_examples() {
    let (examples, results) = run_all();
    assert!(examples.len() > 300, "too few examples: {}", examples.len());
    for (id, _) in ILLUSTRATIVE.iter().chain(CONTEXT) {
        let ex = examples.iter().find(|e| e.id == *id);
        assert!(
            ex.is_some_and(|e| e.kind == "value" || e.kind == "error"),
            "{id} is in a table but is not a checkable example"
        );
    }
    let show = |id: &str| {
        examples
            .iter()
            .find(|e| e.id == id)
            .map(show_example)
            .unwrap_or_default()
    };
    let (passed, skipped) = check_tables("spec", &results, DEVIATIONS, MISSING, show);
    println!(
        "spec examples: {passed} passed, {} deviations, {} missing, {skipped} illustrative",
        DEVIATIONS.len(),
        MISSING.len()
    );
}

/// The comparison must be able to fail: integers are not floats, order
/// matters in sequences, and values must be equal, not just similar.
#[test]
fn comparison_is_strict() {
    let check =
        |src: &str, expected: &str| matches(&crate::util::eval(src).unwrap(), expected).unwrap();
    assert!(check("(/ 10 2)", "5.0"));
    assert!(!check("(/ 10 2)", "5"));
    assert!(!check("[1 2]", "[2 1]"));
    assert!(check("[1 2]", "(1 2)"));
    assert!(check("{:a 1 :b 2}", "{:b 2, :a 1}"));
    assert!(!check("{:a 1}", "{:a 1 :b nil}"));
    assert!(!check("\"a\"", ":a"));
    assert!(!check("nil", "false"));
    assert!(check("(/ 0.0 0.0)", "##NaN"));
    assert!(!check("1.0", "##NaN"));
    assert!(read_literal("(1 2").is_err());
}

/// Escape text for a markdown table cell.
pub fn cell(s: &str) -> String {
    format!(
        "`{}`",
        s.replace('|', "\\|").replace('\n', " ").replace('`', "'")
    )
}

fn spec_deviation_table() -> String {
    let (examples, results) = run_all();
    if DEVIATIONS.is_empty() {
        return "None: every checkable example behaves as the specification says.\n".to_string();
    }
    let mut out = String::from(
        "| id | code | spec says | we give | reason |\n|----|------|-----------|---------|--------|\n",
    );
    for (id, reason) in DEVIATIONS {
        let ex = examples
            .iter()
            .find(|e| e.id == *id)
            .expect("listed id exists");
        let got = match results.iter().find(|(i, _)| i == id) {
            Some((_, Outcome::Fail(got))) => got.clone(),
            _ => "(passes)".to_string(),
        };
        let says = if ex.note.is_empty() {
            ex.expected.clone()
        } else {
            format!("{} {}", ex.expected, ex.note)
        };
        out.push_str(&format!(
            "| {} (§{}, line {}) | {} | {} | {} | {} |\n",
            id,
            ex.section.split(' ').next().unwrap_or(""),
            ex.line,
            cell(&ex.code),
            cell(&says),
            cell(&got),
            reason.replace('|', "\\|")
        ));
    }
    out
}

/// `tests/conformance/DEVIATIONS.md` must list exactly the deviations of
/// both suites as they currently behave.
#[test]
fn deviations_doc_is_current() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/DEVIATIONS.md");
    let doc = format!(
        "# Deviations\n\n\
         Generated by `UPDATE_DEVIATIONS=1 cargo test deviations_doc`; do not edit by hand.\n\
         The tables are the `DEVIATIONS` lists of `tests/conformance.rs` and\n\
         `tests/differential.rs`: behaviour we chose deliberately, with the reason.\n\
         Functions not implemented yet are listed separately (`MISSING`) and are not shown here.\n\n\
         ## Specification examples\n\n\
         Examples from the PTC-Lisp specification (ptc_runner commit 6da99ff0), extracted into\n\
         `tests/data/spec_examples.json`.\n\n{}\n\
         ## Clojure differential corpus\n\n\
         Expressions of `tests/data/clojure_corpus.txt` where we differ from Clojure 1.11\n\
         (`tests/data/clojure_expected.json`). Values are compared with `=`, so a vector where\n\
         Clojure prints a list is not a difference.\n\n{}",
        spec_deviation_table(),
        crate::differential::deviation_table()
    );
    if std::env::var_os("UPDATE_DEVIATIONS").is_some() {
        std::fs::write(&path, &doc).unwrap();
        return;
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        current == doc,
        "{} is out of date; run `UPDATE_DEVIATIONS=1 cargo test deviations_doc`",
        path.display()
    );
}
