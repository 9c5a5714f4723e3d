//! The specification's own examples as a conformance suite, for two
//! revisions of the PTC-Lisp specification.
//!
//! `tests/data/spec_examples_6da99ff0.json` holds the examples of the
//! revision the language was first built to (ptc_runner commit 6da99ff0);
//! `tests/data/spec_examples_current.json` those of the newest revision we
//! follow, specification and generated function reference together (the
//! revision is recorded inside the file). Both are written by
//! `tests/conformance/extract_spec_examples.py --git DIR [REV [OUT]]`.
//! Every example of kind "value" must evaluate to a value `=` to its
//! expected text (read back with our own reader), every example of kind
//! "error" must fail.
//!
//! Each revision has its own exception tables, and they are kept honest:
//! an unlisted failure fails the test, and so does a listed example that
//! now passes. The 6da99ff0 tables are keyed by example id (that file never
//! changes); the current revision's are keyed by the example's code, so
//! that updating to a newer revision keeps every entry whose example is
//! still there. `tests/conformance/DEVIATIONS.md` is generated from the
//! same results (`UPDATE_DEVIATIONS=1 cargo test deviations_doc` rewrites
//! it).

use ptc_lisp::value::{pr_str, Value};
use serde::Deserialize;

/// One revision's examples and exception tables.
pub struct Revision {
    /// How reports name it (`6da99ff0`, `current`).
    pub name: &'static str,
    pub json: &'static str,
    /// Examples whose text we deliberately do not follow.
    pub deviations: &'static [(&'static str, &'static str)],
    /// Examples failing only because a builtin is not implemented yet.
    pub missing: &'static [(&'static str, &'static str)],
    /// "value" examples that cannot be checked as written, with the
    /// reason. (Examples the extractor already marks illustrative, such as
    /// `; => ...` or prose like `; => filtered list`, are not repeated.)
    pub illustrative: &'static [(&'static str, &'static str)],
    /// Examples that need `data/` context, with the JSON object they run
    /// with.
    pub context: &'static [(&'static str, &'static str)],
}

/// The revision the language was first built to. Keyed by example id.
pub const BASELINE: Revision = Revision {
    name: "6da99ff0",
    json: include_str!("data/spec_examples_6da99ff0.json"),
    // Where the current revision contradicts this one, we follow the
    // current revision.
    deviations: &[
        (
            "S-0093",
            "the current revision (§5.13, example `(def map {}) ; => #'map`) lets definitions shadow builtins",
        ),
        (
            "S-0319",
            "the current revision (§8.8, `(even? 4.0) ; => true`) accepts whole floats in `even?`/`odd?`",
        ),
        (
            "S-0321",
            "the current revision (§8.8, `(even? 4.0) ; => true`) accepts whole floats in `even?`/`odd?`",
        ),
    ],
    missing: &[],
    illustrative: &[
        (
            "S-0194",
            "`(seq #{1 2 3})`: the spec itself says `[1 2 3] or another order`; set order is unspecified",
        ),
        (
            "S-0359",
            "`(filter pred [])` in the §11.1 table: `pred` is a placeholder, not a defined function",
        ),
    ],
    // At 6da99ff0 every spec example that reads `data/` or calls a `tool/`
    // has a prose or `...` result, so none is checkable.
    context: &[],
};

/// The newest revision we follow. Keyed by the example's code.
pub const CURRENT: Revision = Revision {
    name: "current",
    json: include_str!("data/spec_examples_current.json"),
    deviations: CURRENT_DEVIATIONS,
    missing: &[],
    illustrative: CURRENT_ILLUSTRATIVE,
    context: &[],
};

const CURRENT_DEVIATIONS: &[(&str, &str)] = &[];

const CURRENT_ILLUSTRATIVE: &[(&str, &str)] = &[(
    "(filter pred [])",
    "the §11.1 table: `pred` is a placeholder, not a defined function",
)];

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

#[derive(Debug, Deserialize)]
struct ExampleFile {
    revision: String,
    examples: Vec<Example>,
}

impl Revision {
    /// The commit the examples were extracted from, and the examples.
    pub fn load(&self) -> (String, Vec<Example>) {
        let file: ExampleFile = serde_json::from_str(self.json)
            .unwrap_or_else(|e| panic!("{}: the examples file does not parse: {e}", self.name));
        (file.revision, file.examples)
    }

    /// Whether a table entry names this example: by id for the baseline,
    /// by code for the current revision.
    fn names(&self, key: &str, ex: &Example) -> bool {
        key == ex.id || key == ex.code
    }

    fn entry<'a>(&self, table: &[(&str, &'a str)], ex: &Example) -> Option<&'a str> {
        table
            .iter()
            .find(|(key, _)| self.names(key, ex))
            .map(|(_, reason)| *reason)
    }

    /// A table re-keyed by example id (code keys resolved), for
    /// `check_tables`; a key that names no example is kept as is, so that
    /// `check_tables` reports it.
    fn by_id(
        &self,
        examples: &[Example],
        table: &'static [(&'static str, &'static str)],
    ) -> Vec<(String, &'static str)> {
        table
            .iter()
            .map(|(key, reason)| {
                let id = examples
                    .iter()
                    .find(|ex| self.names(key, ex))
                    .map_or_else(|| key.to_string(), |ex| ex.id.clone());
                (id, *reason)
            })
            .collect()
    }
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

pub fn run_example(rev: &Revision, ex: &Example) -> Outcome {
    if ex.kind == "illustrative" || ex.kind == "todo" || rev.entry(rev.illustrative, ex).is_some() {
        return Outcome::Skipped;
    }
    let data = rev.entry(rev.context, ex).unwrap_or("{}");
    let result = crate::util::eval_with(&ex.code, data, crate::util::relaxed());
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
pub fn check_tables<K: AsRef<str>>(
    suite: &str,
    results: &[(String, Outcome)],
    deviations: &[(K, &str)],
    missing: &[(K, &str)],
    show: impl Fn(&str) -> String,
) -> (usize, usize) {
    let mut problems = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (id, reason) in deviations.iter().chain(missing) {
        let id = id.as_ref();
        if !seen.insert(id) {
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

pub fn run_all(rev: &Revision) -> (Vec<Example>, Vec<(String, Outcome)>) {
    let (_, examples) = rev.load();
    let results = examples
        .iter()
        .map(|ex| (ex.id.clone(), run_example(rev, ex)))
        .collect();
    (examples, results)
}

/// Run one revision's suite and check its tables; returns the report line.
fn check_revision(rev: &Revision, min_examples: usize) -> String {
    let (revision, _) = rev.load();
    let (examples, results) = run_all(rev);
    assert!(
        examples.len() >= min_examples,
        "{}: too few examples: {}",
        rev.name,
        examples.len()
    );
    for (key, _) in rev.illustrative.iter().chain(rev.context) {
        let ex = examples.iter().find(|e| rev.names(key, e));
        assert!(
            ex.is_some_and(|e| e.kind == "value" || e.kind == "error"),
            "{}: `{key}` is in a table but is not a checkable example",
            rev.name
        );
    }
    let show = |id: &str| {
        examples
            .iter()
            .find(|e| e.id == id)
            .map(show_example)
            .unwrap_or_default()
    };
    let deviations = rev.by_id(&examples, rev.deviations);
    let missing = rev.by_id(&examples, rev.missing);
    let suite = format!("spec {} ({})", rev.name, &revision[..revision.len().min(8)]);
    let (passed, skipped) = check_tables(&suite, &results, &deviations, &missing, show);
    let checked = examples.len() - skipped;
    format!(
        "{suite}: {} examples, {checked} checkable: {passed} pass ({:.1}%), {} deviations, {} missing; {skipped} illustrative",
        examples.len(),
        100.0 * passed as f64 / checked.max(1) as f64,
        rev.deviations.len(),
        rev.missing.len()
    )
}

#[test]
fn spec_examples_6da99ff0() {
    println!("{}", check_revision(&BASELINE, 390));
}

#[test]
fn spec_examples_current() {
    println!("{}", check_revision(&CURRENT, 600));
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

fn spec_deviation_table(rev: &Revision) -> String {
    let (examples, results) = run_all(rev);
    if rev.deviations.is_empty() {
        return "None: every checkable example behaves as the specification says.\n".to_string();
    }
    let mut out = String::from(
        "| id | code | spec says | we give | reason |\n|----|------|-----------|---------|--------|\n",
    );
    for (key, reason) in rev.deviations {
        let ex = examples
            .iter()
            .find(|e| rev.names(key, e))
            .expect("listed example exists");
        let got = match results.iter().find(|(i, _)| *i == ex.id) {
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
            ex.id,
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
         ## Specification examples, current revision\n\n\
         Examples from the PTC-Lisp specification and its function reference at ptc_runner\n\
         commit {}, extracted into `tests/data/spec_examples_current.json`.\n\n{}\n\
         ## Specification examples, revision 6da99ff0\n\n\
         Examples from the PTC-Lisp specification at ptc_runner commit 6da99ff0, extracted into\n\
         `tests/data/spec_examples_6da99ff0.json`.\n\n{}\n\
         ## Clojure differential corpus\n\n\
         Expressions of `tests/data/clojure_corpus.txt` where we differ from Clojure 1.11\n\
         (`tests/data/clojure_expected.json`). Values are compared with `=`, so a vector where\n\
         Clojure prints a list is not a difference.\n\n{}",
        CURRENT.load().0,
        spec_deviation_table(&CURRENT),
        spec_deviation_table(&BASELINE),
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
