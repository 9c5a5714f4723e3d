//! `:save`: the user namespace as a prelude file that `:load` or
//! `ptc --prelude` evaluates back.
//!
//! Data values are written as `(def name value)` with the value in
//! Clojure notation, checked to read back equal. Functions cannot be
//! printed, so their definitions are recovered from the programs of the
//! turns: the last top-level `def`/`defn` form (or one directly inside a
//! top-level `do`) that binds the name is copied verbatim. A function
//! defined any other way (inside a `let`, by a `when`, ...) is reported
//! as not saved. A copied form runs again when loaded: if it calls tools,
//! they are called again. Definitions are written in the order they were
//! last made; a value that captured an older version of a function that
//! was redefined later (`(def g (partial f 1))`, then a new `f`) is not
//! reproduced, since only the newest `f` is saved. Pure: returns text,
//! writes nothing.

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::eval::eval_str;
use crate::meter::expanded_size;
use crate::reader::{read_program, Form, FormKind};
use crate::session::Session;
use crate::value::{pr_str, Value};

/// The prelude text and what it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedPrelude {
    /// The file contents: definitions in the order they were last made.
    pub text: String,
    /// How many definitions the text holds.
    pub saved: usize,
    /// One line per definition left out, with the reason.
    pub skipped: Vec<String>,
}

/// Deeper values are quoted rather than inspected.
const MAX_INSPECT_DEPTH: usize = 256;

/// A `def`/`defn` form found in a turn's program.
struct FoundForm {
    /// (turn index, form index): where it was, to order the output.
    at: (usize, usize),
    source: String,
}

/// Render the session's `user/` definitions as loadable PTC-Lisp.
///
/// ```
/// use ptc_lisp::session::Session;
/// let mut session = Session::new();
/// session.eval("(def xs [1 2 3]) (defn total [v] (reduce + v))");
/// let saved = ptc_lisp::repl::prelude_source(&session);
/// assert!(saved.text.contains("(def xs [1 2 3])"));
/// assert!(saved.text.contains("(defn total [v] (reduce + v))"));
/// assert_eq!(saved.saved, 2);
/// ```
/// Items (shared parts counted each time) a value may have to be saved as
/// data: its printed form is at least this long.
const MAX_SAVED_ITEMS: usize = 1_000_000;

pub fn prelude_source(session: &Session) -> SavedPrelude {
    let turns = session.turns();
    let mut forms: HashMap<String, FoundForm> = HashMap::new();
    // The last successful turn that bound each name, however it did.
    let mut last_turn: HashMap<&str, usize> = HashMap::new();
    for (t, turn) in turns.iter().enumerate().filter(|(_, t)| t.success) {
        for name in &turn.defined {
            last_turn.insert(name, t);
        }
        if let Ok(read) = read_program(&turn.program) {
            let mut index = 0;
            collect_defs(&read, &turn.program, t, &mut index, &mut forms);
        }
    }

    let mut entries: Vec<((usize, usize), String)> = Vec::new();
    let mut skipped = Vec::new();
    for entry in session.memory().iter() {
        let name = entry.name.as_str();
        let defined_in = last_turn.get(name).copied().unwrap_or(0);
        if !entry.value.is_fn() && expanded_size(&entry.value, MAX_SAVED_ITEMS).is_none() {
            skipped.push(format!(
                "`{name}`: its value holds more than {MAX_SAVED_ITEMS} items once shared parts are counted each time; too large to save as data"
            ));
            continue;
        }
        let literal = if entry.value.is_fn() {
            None
        } else {
            literal(&entry.value)
        };
        if let Some(text) = literal {
            let doc = entry
                .doc
                .as_deref()
                .map(|d| format!("{} ", pr_str(&Value::str(d))))
                .unwrap_or_default();
            entries.push(((defined_in, 0), format!("(def {name} {doc}{text})")));
            continue;
        }
        match forms.get(name) {
            // A form from before a later, nested redefinition is stale.
            Some(found) if found.at.0 >= defined_in => {
                entries.push((found.at, found.source.clone()));
            }
            _ => skipped.push(format!(
                "`{name}`: its value cannot be written as data and no top-level \
                 `def`/`defn` form defines it"
            )),
        }
    }
    entries.sort_by_key(|(at, _)| *at);

    let mut text = format!(
        ";; user/ definitions saved by the ptc REPL after turn {}.\n\
         ;; Load them with `ptc --prelude FILE` or `:load FILE`.\n",
        turns.len()
    );
    for (_, source) in &entries {
        let _ = write!(text, "\n{}\n", source.trim_end());
    }
    SavedPrelude {
        text,
        saved: entries.len(),
        skipped,
    }
}

/// Record every `(def name ...)`-like form among `forms` (and inside
/// top-level `do` forms), numbering forms in reading order.
fn collect_defs(
    forms: &[Form],
    source: &str,
    turn: usize,
    index: &mut usize,
    found: &mut HashMap<String, FoundForm>,
) {
    for form in forms {
        *index += 1;
        let FormKind::List(items) = &form.kind else {
            continue;
        };
        match items.first().and_then(Form::as_symbol) {
            Some("do") => collect_defs(&items[1..], source, turn, index, found),
            Some("def" | "defn" | "defn-" | "defonce") => {
                let Some(name) = items.get(1).and_then(Form::as_symbol) else {
                    continue;
                };
                let Some(text) = source.get(form.span.start..form.span.end) else {
                    continue;
                };
                found.insert(
                    name.to_string(),
                    FoundForm {
                        at: (turn, *index),
                        source: text.to_string(),
                    },
                );
            }
            _ => {}
        }
    }
}

/// `value` as source text that evaluates back to an equal value, quoted
/// when it holds lists or symbols; `None` when there is no such text
/// (functions, NaN, ...).
fn literal(value: &Value) -> Option<String> {
    let printed = pr_str(value);
    let text = if needs_quote(value, 0) {
        format!("'{printed}")
    } else {
        printed
    };
    match eval_str(&text) {
        Ok(back) if back == *value => Some(text),
        _ => None,
    }
}

fn needs_quote(value: &Value, depth: usize) -> bool {
    if depth > MAX_INSPECT_DEPTH {
        return true;
    }
    match value {
        Value::List(_) | Value::Symbol(_) => true,
        Value::Vector(items) => items.iter().any(|v| needs_quote(v, depth + 1)),
        Value::Set(items) => items.iter().any(|v| needs_quote(v, depth + 1)),
        Value::Map(m) => m
            .iter()
            .any(|(k, v)| needs_quote(k, depth + 1) || needs_quote(v, depth + 1)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn saved(programs: &[&str]) -> SavedPrelude {
        let mut session = Session::new();
        for p in programs {
            assert!(session.eval(p).success, "{p}");
        }
        prelude_source(&session)
    }

    /// What the saved text defines, evaluated in a fresh session.
    fn reload(text: &str) -> Session {
        let mut session = Session::new();
        assert!(session.eval(text).success, "{text}");
        session
    }

    #[test]
    fn data_and_functions_round_trip() {
        let s = saved(&[
            "(def xs \"the numbers\" [1 2 3])",
            "(defn total \"Sum\" [v] (reduce + v)) (def words '(a b))",
            "(do (def m {:a (list 1 2)}) (defn twice [x] (* 2 x)))",
        ]);
        assert!(s.skipped.is_empty(), "{:?}", s.skipped);
        assert_eq!(s.saved, 5);
        assert!(s.text.contains("(def words '(a b))"), "{}", s.text);
        let mut back = reload(&s.text);
        let turn = back.eval("[(total xs) words (:a m) (twice 4)]");
        assert_eq!(pr_str(turn.result().unwrap()), "[6 (a b) (1 2) 8]");
        assert_eq!(
            back.memory().get("xs").unwrap().doc.as_deref(),
            Some("the numbers")
        );
    }

    #[test]
    fn the_last_definition_wins_and_order_follows_it() {
        let s = saved(&[
            "(defn f [x] x)",
            "(defn g [x] (f x))",
            "(defn f [x] (inc x))",
        ]);
        let f_at = s.text.find("(defn f [x] (inc x))").unwrap();
        let g_at = s.text.find("(defn g [x] (f x))").unwrap();
        assert!(g_at < f_at, "{}", s.text);
        assert!(!s.text.contains("(defn f [x] x)"));
        let mut back = reload(&s.text);
        assert_eq!(pr_str(back.eval("(g 1)").result().unwrap()), "2");
    }

    #[test]
    fn functions_defined_inside_other_forms_are_reported() {
        let s = saved(&["(let [k 2] (defn scale [x] (* k x)))"]);
        assert_eq!(s.saved, 0);
        assert!(s.skipped[0].contains("`scale`"), "{:?}", s.skipped);
    }

    #[test]
    fn failed_turns_are_ignored() {
        let mut session = Session::new();
        session.eval("(defn f [x] x)");
        assert!(!session.eval("(defn f [x] (inc x)) (+ 1 \"a\")").success);
        let text = prelude_source(&session).text;
        assert!(text.contains("(defn f [x] x)"), "{text}");
        assert!(!text.contains("inc"), "{text}");
    }
}
