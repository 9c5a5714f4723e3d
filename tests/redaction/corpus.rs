//! The labelled corpus (issue 38): `secrets.jsonl` holds realistic fake
//! secrets of every kind the built-in rules cover, `lookalikes.jsonl`
//! texts that look like secrets and are not; both are written by
//! `gen_corpus.py` beside them (deterministic). Every secret must go
//! (recall 100%), and look-alikes must pass unchanged (a precision
//! floor); both figures are printed and recorded in BENCHMARKS.md.

use ptc_lisp::history::redact::{Redactor, REDACTED};
use serde_json::Value as Json;

const SECRETS: &str = include_str!("secrets.jsonl");
const LOOKALIKES: &str = include_str!("lookalikes.jsonl");

/// The precision the rules must keep on the look-alikes.
const PRECISION_FLOOR: f64 = 0.97;

fn records(text: &str) -> Vec<Json> {
    text.lines()
        .map(|l| serde_json::from_str(l).expect("a corpus line is JSON"))
        .collect()
}

/// Every kind of secret in the corpus, with one text of it each (the
/// end-to-end tests put them in a history).
pub fn one_of_each_kind() -> Vec<(String, String, Vec<String>)> {
    let mut seen = std::collections::BTreeMap::new();
    for r in records(SECRETS) {
        let kind = r["kind"].as_str().unwrap().to_string();
        seen.entry(kind.clone()).or_insert_with(|| {
            (
                kind,
                r["text"].as_str().unwrap().to_string(),
                r["secrets"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s.as_str().unwrap().to_string())
                    .collect(),
            )
        });
    }
    seen.into_values().collect()
}

#[test]
fn corpus_recall_is_total_and_precision_above_the_floor() {
    let r = Redactor::default();
    let secrets = records(SECRETS);
    let lookalikes = records(LOOKALIKES);
    assert!(secrets.len() >= 200, "{} secrets", secrets.len());
    assert!(lookalikes.len() >= 200, "{} look-alikes", lookalikes.len());

    let mut missed = Vec::new();
    for rec in &secrets {
        let text = rec["text"].as_str().unwrap();
        let out = r.redact(text);
        let survivors: Vec<&str> = rec["secrets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap())
            .filter(|s| !s.is_empty() && out.contains(s))
            .collect();
        if !survivors.is_empty() || !out.contains(REDACTED) {
            missed.push(format!("{}: {text:?} -> {out:?}", rec["kind"]));
        }
        // A JSON text redacted as JSON loses the same secrets.
        if let Ok(value @ Json::Object(_)) = serde_json::from_str::<Json>(text) {
            let out = r.json(&value).to_string();
            for s in rec["secrets"].as_array().unwrap() {
                let s = s.as_str().unwrap();
                if !s.is_empty() && out.contains(s) {
                    missed.push(format!("{} (as JSON): {out}", rec["kind"]));
                }
            }
        }
    }
    let mut false_positives = Vec::new();
    for rec in &lookalikes {
        let text = rec["text"].as_str().unwrap();
        let out = r.redact(text);
        if out != text {
            false_positives.push(format!("{}: {text:?} -> {out:?}", rec["kind"]));
        }
    }
    let detected = secrets.len() - missed.len().min(secrets.len());
    let recall = detected as f64 / secrets.len() as f64;
    let precision = detected as f64 / (detected + false_positives.len()) as f64;
    eprintln!(
        "redaction corpus: {} secrets, {} look-alikes; recall {:.4} ({detected}/{}), \
         precision {precision:.4} ({} false positives)",
        secrets.len(),
        lookalikes.len(),
        recall,
        secrets.len(),
        false_positives.len()
    );
    for fp in &false_positives {
        eprintln!("  false positive: {fp}");
    }
    assert!(missed.is_empty(), "missed secrets:\n{}", missed.join("\n"));
    assert!(
        precision >= PRECISION_FLOOR,
        "precision {precision:.4} < {PRECISION_FLOOR}:\n{}",
        false_positives.join("\n")
    );
}
