//! Values as the model reads them: the type vocabulary (TYP-001..012) and
//! Clojure notation with truncation (TRN-001..005).
//!
//! Truncation rules: a collection shows at most `limit` items, then `...`;
//! the outermost truncated collection is followed by
//! ` (first M of N items)`, or ` (M of N keys shown)` for a map, so that
//! the count cannot be read as the length of a vector next to it. A string longer than `printable_limit`
//! characters is cut there and ends with `...` inside its quotes. Nested
//! collections share one budget of `printable_limit` characters: once the
//! text is that long, later items are left out as `...` (the first item of
//! the outermost collection is always shown), so a sample of deeply nested
//! data stays about one line long. Map entries are separated by `, ` as
//! `pr-str` prints them, in a stable order (see [`entries_in_order`]).
//! Pure functions, no I/O.

use std::fmt::Write;

use crate::value::{pr_str, FixedState, Map, Value};

/// How much of a value to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FormatOptions {
    /// Items shown per collection.
    pub limit: usize,
    /// Characters shown per string.
    pub printable_limit: usize,
}

impl FormatOptions {
    /// Samples of definitions and data, and tool results (TRN-002).
    pub const SAMPLE: FormatOptions = FormatOptions {
        limit: 3,
        printable_limit: 80,
    };
    /// Tool-call arguments (TRN-003).
    pub const TOOL_ARGS: FormatOptions = FormatOptions {
        limit: 3,
        printable_limit: 60,
    };
    /// No truncation.
    pub const FULL: FormatOptions = FormatOptions {
        limit: usize::MAX,
        printable_limit: usize::MAX,
    };
}

/// Nesting deeper than this prints as `...`.
const MAX_DEPTH: usize = 64;

/// `value` in Clojure notation, truncated by `opts`; the flag tells
/// whether anything was left out.
///
/// ```
/// use ptc_lisp::compression::format::{to_clojure, FormatOptions};
/// use ptc_lisp::value::Value;
/// let v = Value::vector((1..=5).map(Value::Int));
/// assert_eq!(
///     to_clojure(&v, FormatOptions::SAMPLE),
///     ("[1 2 3 ...] (first 3 of 5 items)".to_string(), true)
/// );
/// ```
pub fn to_clojure(value: &Value, opts: FormatOptions) -> (String, bool) {
    let mut out = String::new();
    let truncated = write_clojure(&mut out, value, opts);
    (out, truncated)
}

/// Append `value` to `out` as [`to_clojure`] formats it; returns whether
/// anything was left out.
pub fn write_clojure(out: &mut String, value: &Value, opts: FormatOptions) -> bool {
    let start = out.len();
    let mut w = Writer {
        out,
        opts,
        start,
        truncated: false,
    };
    let top_note = w.value(value, 0);
    match top_note {
        Some(Cut::Map { total, shown }) => {
            let _ = write!(w.out, " ({shown} of {total} keys shown)");
        }
        Some(Cut::Items { total, shown }) => {
            let _ = write!(w.out, " (first {shown} of {total} items)");
        }
        None => {}
    }
    w.truncated
}

/// How a collection was cut: `shown` of its `total` entries or items.
enum Cut {
    Items { total: usize, shown: usize },
    Map { total: usize, shown: usize },
}

struct Writer<'a> {
    out: &'a mut String,
    opts: FormatOptions,
    /// Where this value's text starts in `out`, for the shared budget.
    start: usize,
    truncated: bool,
}

impl Writer<'_> {
    /// Write one value; returns `(total, shown)` when this collection itself
    /// was cut, so the caller can add the note at the top level.
    fn value(&mut self, v: &Value, depth: usize) -> Option<Cut> {
        if depth > MAX_DEPTH {
            self.out.push_str("...");
            self.truncated = true;
            return None;
        }
        match v {
            Value::Str(s) => {
                self.string(s);
                None
            }
            Value::ShortStr(s) => {
                self.string(s);
                None
            }
            Value::Vector(items) => self.seq("[", "]", items.len(), items.iter(), depth),
            Value::List(items) => self.seq("(", ")", items.len(), items.iter(), depth),
            Value::Set(items) => self.seq("#{", "}", items.len(), items.iter(), depth),
            Value::Map(m) => {
                let mut shown = 0;
                self.out.push('{');
                for (k, v) in entries_in_order(m, self.opts.limit) {
                    if self.over_budget(shown, depth) {
                        break;
                    }
                    if shown > 0 {
                        self.out.push_str(", ");
                    }
                    self.value(k, depth + 1);
                    self.out.push(' ');
                    self.value(v, depth + 1);
                    shown += 1;
                }
                self.cut(m.len(), shown, "}")
                    .map(|(total, shown)| Cut::Map { total, shown })
            }
            other => {
                crate::value::write_pr(self.out, other);
                None
            }
        }
    }

    fn seq<'v>(
        &mut self,
        open: &str,
        close: &str,
        len: usize,
        items: impl Iterator<Item = &'v Value>,
        depth: usize,
    ) -> Option<Cut> {
        let mut shown = 0;
        self.out.push_str(open);
        for item in items.take(self.opts.limit) {
            if self.over_budget(shown, depth) {
                break;
            }
            if shown > 0 {
                self.out.push(' ');
            }
            self.value(item, depth + 1);
            shown += 1;
        }
        self.cut(len, shown, close)
            .map(|(total, shown)| Cut::Items { total, shown })
    }

    /// True when the shared budget is spent and the next item (the
    /// `shown`-th of a collection at `depth`) should be left out. The
    /// outermost collection always shows its first item.
    fn over_budget(&self, shown: usize, depth: usize) -> bool {
        (shown > 0 || depth > 0) && self.out.len() - self.start >= self.opts.printable_limit
    }

    fn cut(&mut self, len: usize, shown: usize, close: &str) -> Option<(usize, usize)> {
        if shown < len {
            self.out.push_str(if shown == 0 { "..." } else { " ..." });
            self.out.push_str(close);
            self.truncated = true;
            Some((len, shown))
        } else {
            self.out.push_str(close);
            None
        }
    }

    fn string(&mut self, s: &str) {
        let limit = self.opts.printable_limit;
        match s.char_indices().nth(limit) {
            None => crate::value::write_pr(self.out, &Value::str(s)),
            Some((cut, _)) => {
                let text = pr_str(&Value::str(&s[..cut]));
                self.out.push_str(&text[..text.len() - 1]);
                self.out.push_str("...\"");
                self.truncated = true;
            }
        }
    }
}

/// The first `limit` entries of `m` in a stable order: insertion order
/// for a small map (up to eight entries, like Clojure's array maps; a data
/// file's JSON object keeps its field order up to sixteen keys), otherwise sorted by the printed key, so
/// the same data renders the same text whatever the hasher or the order
/// the entries were added in. A large map costs one printing of each key
/// and a partial sort.
pub fn entries_in_order(m: &Map, limit: usize) -> Vec<(&Value, &Value)> {
    if m.keeps_insertion_order() {
        return m.iter().take(limit).collect();
    }
    let mut keyed: Vec<(String, &Value, &Value)> =
        m.iter().map(|(k, v)| (pr_str(k), k, v)).collect();
    if limit < keyed.len() {
        if limit == 0 {
            return Vec::new();
        }
        keyed.select_nth_unstable_by(limit - 1, |a, b| a.0.cmp(&b.0));
        keyed.truncate(limit);
    }
    keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    keyed.into_iter().map(|(_, k, v)| (k, v)).collect()
}

/// The type label of a value (TYP-001..012): `vector[3]`, `list[2]`,
/// `map[0]`, `set[2]`, `string`, `integer`, `float`, `boolean`,
/// `keyword`, `nil`, `#fn[...]`.
///
/// Vectors and lists have labels of their own, unlike TYP-001/TYP-002
/// (which call every sequence a `list`): the model writes Clojure, where
/// `[1 2 3]` is a vector, and `conj` adds to the end of one and the front
/// of the other.
pub fn type_label(value: &Value) -> String {
    value.type_label()
}

/// The sample shown after a type label (SAM-003): the first item of a
/// list or set (the label already gives the count), a map or scalar
/// itself; `None` for nil, empty collections and functions, whose label
/// says everything.
pub fn sample(value: &Value, opts: FormatOptions) -> Option<String> {
    let shown = match value {
        Value::Nil | Value::Native(_) | Value::Fn(_) => return None,
        Value::Vector(items) | Value::List(items) => items.front()?,
        Value::Set(items) => items.iter().next()?,
        Value::Map(m) if m.is_empty() => return None,
        other => other,
    };
    Some(to_clojure(shown, opts).0)
}

/// Keys shown by [`key_summary`]; the rest are counted.
const SHOWN_KEYS: usize = 12;
/// Distinct keys [`key_summary`] keeps track of.
const TRACKED_KEYS: usize = 1_000;
/// Map entries [`key_summary`] looks at before it stops scanning, so a
/// huge collection costs a bounded time on every prompt.
const KEY_VISITS: usize = 1_000_000;

/// The keys of the maps in a vector, list or set: every key that occurs,
/// in first-seen order, each followed by `(in K of N)` when not every item
/// has it, e.g. `:name :price :stock (in 3 of 7)`. At most 12 keys are
/// named (`and 5 more` counts the others). A collection so large that
/// its scan stops early says how far it got: `(first 5000 of 90000
/// items) :id :name`.
///
/// `None` when no item is a map, and when the sample says it all: every
/// item is a map with the same keys as the first, which `opts` shows
/// whole.
///
/// ```
/// use ptc_lisp::compression::format::{key_summary, FormatOptions};
/// use ptc_lisp::eval::eval_str;
/// let products = eval_str("[{:name \"a\"} {:name \"b\" :stock 2} {:name \"c\"}]").unwrap();
/// assert_eq!(
///     key_summary(&products, FormatOptions::SAMPLE).as_deref(),
///     Some(":name :stock (in 1 of 3)")
/// );
/// assert_eq!(key_summary(&eval_str("[{:a 1} {:a 2}]").unwrap(), FormatOptions::SAMPLE), None);
/// ```
pub fn key_summary(value: &Value, opts: FormatOptions) -> Option<String> {
    let (total, items): (usize, Box<dyn Iterator<Item = &Value>>) = match value {
        Value::Vector(items) | Value::List(items) => (items.len(), Box::new(items.iter())),
        Value::Set(items) => (items.len(), Box::new(items.iter())),
        _ => return None,
    };
    let mut keys: Vec<(&Value, usize)> = Vec::new();
    let mut index: std::collections::HashMap<&Value, usize, FixedState> =
        std::collections::HashMap::default();
    let mut untracked = false;
    let (mut scanned, mut maps, mut visits) = (0usize, 0usize, 0usize);
    let mut fresh: Vec<&Value> = Vec::new();
    for item in items {
        if visits >= KEY_VISITS {
            break;
        }
        scanned += 1;
        visits += 1;
        let Value::Map(m) = item else {
            continue;
        };
        maps += 1;
        visits += m.len();
        fresh.clear();
        for k in m.keys() {
            match index.get(k) {
                Some(&i) => keys[i].1 += 1,
                None => fresh.push(k),
            }
        }
        if fresh.is_empty() {
            continue;
        }
        // New keys in the map's own order where it has one, else by
        // their printed form (the order samples use).
        if !m.keeps_insertion_order() {
            fresh.sort_by_cached_key(|k| pr_str(k));
        }
        for &k in &fresh {
            if keys.len() == TRACKED_KEYS {
                untracked = true;
                break;
            }
            index.insert(k, keys.len());
            keys.push((k, 1));
        }
    }
    if maps == 0 {
        return None;
    }
    let complete = scanned == total;
    let everywhere = |count: usize| count == scanned;
    if complete && !untracked && keys.iter().all(|&(_, n)| everywhere(n)) {
        let first = match value {
            Value::Set(items) => items.iter().next(),
            Value::Vector(items) | Value::List(items) => items.front(),
            _ => None,
        };
        if let Some(first @ Value::Map(m)) = first {
            if m.len() == keys.len() && !to_clojure(first, opts).1 {
                return None;
            }
        }
    }
    let mut out = String::new();
    if !complete {
        let _ = write!(out, "(first {scanned} of {total} items) ");
    }
    for (i, (key, count)) in keys.iter().take(SHOWN_KEYS).enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let (text, _) = to_clojure(key, FormatOptions::TOOL_ARGS);
        out.push_str(&text);
        if !everywhere(*count) {
            let _ = write!(out, " (in {count} of {scanned})");
        }
    }
    let more = keys.len().saturating_sub(SHOWN_KEYS);
    if more > 0 || untracked {
        let plus = if untracked { "+" } else { "" };
        let _ = write!(out, " and {more}{plus} more");
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::eval_str;

    fn fmt(src: &str, limit: usize, printable_limit: usize) -> String {
        to_clojure(
            &eval_str(src).unwrap(),
            FormatOptions {
                limit,
                printable_limit,
            },
        )
        .0
    }

    #[test]
    fn small_values_print_like_pr_str() {
        for src in [
            "nil",
            "1.5",
            ":k",
            "[1 \"a\" {:b #{2}}]",
            "'(1 2)",
            "{:a 1, :b 2}",
        ] {
            let v = eval_str(src).unwrap();
            assert_eq!(
                to_clojure(&v, FormatOptions::SAMPLE),
                (pr_str(&v), false),
                "{src}"
            );
        }
    }

    #[test]
    fn collections_and_strings_are_cut() {
        assert_eq!(
            fmt("(range 10)", 3, 80),
            "[0 1 2 ...] (first 3 of 10 items)"
        );
        assert_eq!(fmt("'(0 1 2 3)", 3, 80), "(0 1 2 ...) (first 3 of 4 items)");
        assert!(fmt("#{1 2 3 4}", 3, 80).ends_with(" ...} (first 3 of 4 items)"));
        assert_eq!(
            fmt("{:a 1 :b 2 :c 3 :d 4}", 2, 80),
            "{:a 1, :b 2 ...} (2 of 4 keys shown)"
        );
        assert_eq!(fmt("[[1 2 3 4] 5]", 3, 80), "[[1 2 3 ...] 5]");
        assert_eq!(fmt("\"very long string here\"", 3, 10), "\"very long ...\"");
        assert_eq!(fmt("\"a\\nb\"", 3, 10), "\"a\\nb\"");
        assert_eq!(fmt("[1 2]", 0, 10), "[...] (first 0 of 2 items)");
    }

    #[test]
    fn multibyte_strings_are_cut_on_characters() {
        assert_eq!(fmt("\"ééééé\"", 3, 2), "\"éé...\"");
    }
}
