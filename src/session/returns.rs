//! What each user function has returned, as the type labels the model's
//! view shows after `->` (FMT-006): one label per type, the latest of
//! that type, in the order the types were first returned, kept across
//! turns while the definition is unchanged. `-> integer | nil` rather
//! than only the type of the last call. No I/O.

use std::collections::HashMap;
use std::sync::Arc;

use crate::value::{ArcStr, Value};

/// `(type name, label)` pairs: `("vector", "vector[3]")`.
type Labels = Vec<(&'static str, String)>;

/// The return-type labels of the user functions called so far.
///
/// Memory is small by construction: a label per type a function ever
/// returned (there are fewer than twenty types), never the values.
#[derive(Debug, Clone, Default)]
pub(crate) struct ReturnTypes {
    /// Per name: the function the labels belong to (a redefinition
    /// starts afresh) and its `(type name, label)` pairs.
    by_name: HashMap<ArcStr, (Value, Labels)>,
}

impl ReturnTypes {
    /// Record what `function`, now the definition of `name`, returned in
    /// one run (the evaluator gives one value per type).
    pub(crate) fn record(&mut self, name: &ArcStr, function: &Value, values: &[Value]) {
        let slot = self
            .by_name
            .entry(name.clone())
            .or_insert_with(|| (function.clone(), Vec::new()));
        if !same_function(&slot.0, function) {
            *slot = (function.clone(), Vec::new());
        }
        for value in values {
            let kind = value.type_name();
            let label = value.type_label();
            match slot.1.iter_mut().find(|(k, _)| *k == kind) {
                Some(entry) => entry.1 = label,
                None => slot.1.push((kind, label)),
            }
        }
    }

    /// The labels of `name` while it is still `function`; empty when it
    /// was never called since it was (re)defined.
    pub(crate) fn labels(&self, name: &str, function: &Value) -> Vec<String> {
        match self.by_name.get(name) {
            Some((f, labels)) if same_function(f, function) => {
                labels.iter().map(|(_, l)| l.clone()).collect()
            }
            _ => Vec::new(),
        }
    }
}

fn same_function(a: &Value, b: &Value) -> bool {
    matches!((a, b), (Value::Fn(a), Value::Fn(b)) if Arc::ptr_eq(a, b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::eval_str;

    #[test]
    fn labels_are_a_union_by_type_with_the_latest_of_each() {
        let f = eval_str("(fn f [x] x)").unwrap();
        let g = eval_str("(fn g [x] x)").unwrap();
        let name = ArcStr::from("f");
        let mut types = ReturnTypes::default();
        assert!(types.labels("f", &f).is_empty());
        types.record(&name, &f, &[eval_str("[1 2]").unwrap(), Value::Nil]);
        types.record(&name, &f, &[Value::Int(3), eval_str("[1]").unwrap()]);
        assert_eq!(types.labels("f", &f), ["vector[1]", "nil", "integer"]);
        // A new definition under the same name starts afresh.
        assert!(types.labels("f", &g).is_empty());
        types.record(&name, &g, &[Value::Int(1)]);
        assert_eq!(types.labels("f", &g), ["integer"]);
    }
}
