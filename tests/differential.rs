//! Differential testing against real Clojure.
//!
//! `tests/data/clojure_corpus.txt` holds Clojure expressions;
//! `tests/conformance/gen_clojure_expectations.py` ran them through
//! Clojure 1.11 and recorded what it printed in
//! `tests/data/clojure_expected.json` (CI does not need Clojure). Each
//! expression must give a value `=` to Clojure's printed result read back
//! with our reader (so a vector stands where Clojure prints a list, and map
//! order does not matter); where Clojure threw, we must fail too.

use crate::conformance::{cell, check_tables, describe, matches, Outcome};
use serde::Deserialize;

/// Entries where we deliberately differ from Clojure, with the reason.
/// Keyed by the expression text.
pub const DEVIATIONS: &[(&str, &str)] = &[
    (
        "(nth [10 20 30] 5)",
        "spec §8.1: `nth` out of bounds gives nil (`(nth [1 2 3] 10) ; => nil`); Clojure throws",
    ),
    (
        "(nth [10 20 30] -1)",
        "spec §8.1: `nth` out of bounds gives nil (`(nth [1 2 3] 10) ; => nil`); Clojure throws",
    ),
    (
        "(contains? [10 20 30] 1)",
        "spec §8.1: `contains?` on a vector tests membership (`(contains? [\"a\" \"b\" \"c\"] \"b\") ; => true`); Clojure tests the index",
    ),
    (
        "(contains? [10 20 30] 10)",
        "spec §8.1: `contains?` on a vector tests membership (`(contains? [\"a\" \"b\" \"c\"] \"b\") ; => true`); Clojure tests the index",
    ),
    (
        "(/ 10 2)",
        "spec §8.4: `/` always returns a float (`(/ 10 2) ; => 5.0`); Clojure keeps an exact integer",
    ),
    (
        "(/ 1 4)",
        "spec §8.4: `/` always returns a float and §3.3 has no ratios; Clojure gives the ratio 1/4",
    ),
    (
        "(/ 1 3)",
        "spec §8.4: `/` always returns a float and §3.3 has no ratios; Clojure gives the ratio 1/3",
    ),
    (
        "(#(str %&) 1 2)",
        "spec §8.1: sequences are vectors (no lazy seqs), so the rest arguments print with brackets; the values are `=`",
    ),
    (
        "(pr-str (map inc [1 2]))",
        "spec §8.1: `map` returns a vector (no lazy seqs), so it prints with brackets; the values are `=`",
    ),
    (
        "(def z 5)",
        "spec §5.9: no namespaces, `def` returns `#'name` (`(def x 42) ; => #'x`); Clojure prints `#'user/z`",
    ),
    (
        "(letfn [(f [x] (* x 2))] (f 4))",
        "`letfn` is not one of the spec's special forms (§5) and is rejected as unsupported; `let` + `fn` or `defn` do the same",
    ),
    (
        "(contains? (set \"abc\") \"a\")",
        "spec §3.5: characters are single-character strings, so the set of a string's characters contains \"a\"",
    ),
    (
        "(count \"😀\")",
        "spec §3.4, §8.7: `count` of a string counts characters; Java counts UTF-16 code units (2 for this emoji)",
    ),
    (
        "(compare \"a\" \"c\")",
        "spec §8.4: `compare` returns -1, 0 or 1; Java's String.compareTo gives the character difference (-2)",
    ),
    (
        "(even? 1.0)",
        "current spec §8.8: `even?`/`odd?` accept whole floats (`(even? 4.0) ; => true`, GAP-S08); Clojure throws",
    ),
    (
        "(even? 4.0)",
        "current spec §8.8: `even?`/`odd?` accept whole floats (`(even? 4.0) ; => true`, GAP-S08); Clojure throws",
    ),
    (
        "(odd? 3.0)",
        "current spec §8.8: `even?`/`odd?` accept whole floats (`(even? 4.0) ; => true`, GAP-S08); Clojure throws",
    ),
    (
        "(even? 4.5)",
        "current spec §8.8: a float with a fraction is neither even nor odd (`(even? 4.5) ; => false`); Clojure throws",
    ),
    (
        "(case 5 1 :one)",
        "current spec §5.7: `case` with no matching clause and no default is nil (`(case :z :a 1) ; => nil`); Clojure throws",
    ),
    (
        "(case :z :a 1)",
        "current spec §5.7: `case` with no matching clause and no default is nil (`(case :z :a 1) ; => nil`); Clojure throws",
    ),
    (
        "(condp = :z :a 1 :b 2)",
        "current spec §5.8: `condp` with no matching clause and no default is nil (`(condp = :z :a 1 :b 2) ; => nil`); Clojure throws",
    ),
    (
        "(for [x [1 2 3]] (println x) (* x 10))",
        "current spec §5.17: `for` takes several body expressions (an implicit `do`, the last collected); Clojure's takes one",
    ),
    (
        "(do (def vx 42) #'vx)",
        "current spec §3.10: `#'x` is the value of `x` (`(do (def x 42) #'x) ; => 42`); there are no first-class vars",
    ),
    (
        "(do (def vy 42) [#'vy vy])",
        "current spec §3.10: `#'x` is the value of `x` (`(do (def x 42) [#'x x]) ; => [42 42]`)",
    ),
    (
        "(keyword \"\")",
        "current spec §8.4: `keyword` validates its name (`(keyword \"\") ; => ERROR`); Clojure makes the empty keyword",
    ),
    (
        "(keyword \"a/b\")",
        "current spec §8.4: `keyword` rejects `/` (`(keyword \"a/b\") ; => ERROR`, no namespaced keywords); Clojure makes :a/b",
    ),
    (
        "(keyword \"+\")",
        "current spec §8.4: `keyword` rejects operator characters (`(keyword \"+\") ; => ERROR`); Clojure makes :+",
    ),
    (
        "(type 1)",
        "current spec §8.7: `type` returns a keyword (`:number`); there are no Java classes",
    ),
    (
        "(map-entry? (first {:a 1}))",
        "current spec §8.7: `map-entry?` is always false; a map entry is an ordinary two-item vector",
    ),
    (
        "(re-split #\"\\s+\" \"a  b\")",
        "current spec §8.10: `re-split` is a PTC-Lisp function, not in Clojure",
    ),
    (
        "(extract \"ID:(\\\\d+)\" \"ID:42\")",
        "current spec §8.10: `extract` is a PTC-Lisp function, not in Clojure",
    ),
    (
        "(extract-int \"age=(\\\\d+)\" \"age=25\")",
        "current spec §8.10: `extract-int` is a PTC-Lisp function, not in Clojure",
    ),
    (
        "(describe [1 2])",
        "current spec §8.7: `describe` is a PTC-Lisp function, not in Clojure",
    ),
];

/// Entries failing only because a builtin (or an arity of one) is not
/// implemented yet; the reason names it. Keyed by the expression text.
pub const MISSING: &[(&str, &str)] = &[];

#[derive(Debug, Deserialize)]
pub struct Entry {
    pub expr: String,
    pub clojure: String,
    #[serde(default)]
    pub clojure_error: String,
}

pub fn entries() -> Vec<Entry> {
    serde_json::from_str(include_str!("data/clojure_expected.json"))
        .expect("clojure_expected.json is a list of entries")
}

/// The expressions of the corpus file, in order.
fn corpus() -> Vec<&'static str> {
    include_str!("data/clojure_corpus.txt")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with(';'))
        .collect()
}

pub fn run_entry(e: &Entry) -> Outcome {
    let result = crate::util::eval_with(&e.expr, "{}", crate::util::relaxed());
    if e.clojure == "#error" {
        return match result {
            Err(_) => Outcome::Pass,
            Ok(_) => Outcome::Fail(describe(&result)),
        };
    }
    match &result {
        Ok(v) => match matches(v, &e.clojure) {
            Ok(true) => Outcome::Pass,
            Ok(false) => Outcome::Fail(describe(&result)),
            Err(unreadable) => Outcome::Fail(format!(
                "{} (Clojure's output is {unreadable})",
                describe(&result)
            )),
        },
        Err(_) => Outcome::Fail(describe(&result)),
    }
}

pub fn run_all() -> (Vec<Entry>, Vec<(String, Outcome)>) {
    let entries = entries();
    let results = entries
        .iter()
        .map(|e| (e.expr.clone(), run_entry(e)))
        .collect();
    (entries, results)
}

#[test]
fn clojure_corpus() {
    let (entries, results) = run_all();
    let exprs: Vec<&str> = entries.iter().map(|e| e.expr.as_str()).collect();
    assert_eq!(
        exprs,
        corpus(),
        "clojure_expected.json is stale: rerun tests/conformance/gen_clojure_expectations.py"
    );
    assert!(entries.len() >= 300, "too few entries: {}", entries.len());
    let show = |expr: &str| {
        let e = entries
            .iter()
            .find(|e| e.expr == expr)
            .expect("entry exists");
        if e.clojure_error.is_empty() {
            format!("`{}`\n    Clojure: {}", e.expr, e.clojure)
        } else {
            format!("`{}`\n    Clojure: #error ({})", e.expr, e.clojure_error)
        }
    };
    let (passed, _) = check_tables("clojure corpus", &results, DEVIATIONS, MISSING, show);
    println!(
        "clojure corpus: {passed} passed, {} deviations, {} missing",
        DEVIATIONS.len(),
        MISSING.len()
    );
}

/// The markdown table of `DEVIATIONS` for `tests/conformance/DEVIATIONS.md`.
pub fn deviation_table() -> String {
    let (entries, results) = run_all();
    let mut out = String::from(
        "| expression | Clojure 1.11 gives | we give | reason |\n|------------|--------------------|---------|--------|\n",
    );
    for (expr, reason) in DEVIATIONS {
        let e = entries
            .iter()
            .find(|e| e.expr == *expr)
            .expect("listed entry exists");
        let clojure = if e.clojure_error.is_empty() {
            e.clojure.clone()
        } else {
            format!("error: {}", e.clojure_error)
        };
        let got = match results.iter().find(|(x, _)| x == expr) {
            Some((_, Outcome::Fail(got))) => got.clone(),
            _ => "(passes)".to_string(),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            cell(expr),
            cell(&clojure),
            cell(&got),
            reason.replace('|', "\\|")
        ));
    }
    out
}
