//! Width-aware printing in the style of Clojure's `pprint`, with a budget:
//! a value that fits the width prints on one line as `pr-str` would; one
//! that does not breaks its collections over lines (map entries and
//! compound elements one per line, scalars filled), indented under their
//! opening bracket. Past the budget of lines or characters, output stops
//! at an element boundary: each open collection gets a `...` and its
//! closing bracket, so the text stays balanced and no token is cut (only a
//! string longer than the whole budget is cut inside its quotes).

use super::{write_pr_bounded, Value};

/// Where the pretty printer breaks and stops.
#[derive(Debug, Clone, Copy)]
pub struct PrettyOptions {
    /// Columns of the output (the terminal's width).
    pub width: usize,
    /// Lines after which no further element is started.
    pub max_lines: usize,
    /// Characters after which no further element is started.
    pub max_chars: usize,
}

/// What [`pretty`] printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pretty {
    pub text: String,
    /// `None` when the whole value was printed; otherwise how many of the
    /// top-level value's items (elements, entries or characters) were
    /// printed, wholly or in part.
    pub shown: Option<usize>,
}

/// `value` printed within `options` (see the module docs).
pub fn pretty(value: &Value, options: PrettyOptions) -> Pretty {
    let mut p = Printer {
        out: String::new(),
        options: PrettyOptions {
            width: options.width.max(20),
            ..options
        },
        lines: 1,
        chars: 0,
        line_start: 0,
        top_shown: None,
    };
    p.value(value, 0);
    Pretty {
        text: p.out,
        shown: p.top_shown,
    }
}

struct Printer {
    out: String,
    options: PrettyOptions,
    lines: usize,
    /// Characters written so far.
    chars: usize,
    /// Byte offset where the current line starts.
    line_start: usize,
    /// Set when output stopped: the top-level value's items shown.
    top_shown: Option<usize>,
}

impl Printer {
    fn column(&self) -> usize {
        self.out[self.line_start..].chars().count()
    }

    /// No further element may start (on this line).
    fn exhausted(&self) -> bool {
        self.lines > self.options.max_lines || self.chars >= self.options.max_chars
    }

    /// A line break would pass the line budget.
    fn last_line(&self) -> bool {
        self.lines >= self.options.max_lines
    }

    fn push(&mut self, text: &str) {
        self.chars += text.chars().count();
        self.out.push_str(text);
    }

    fn newline(&mut self, indent: usize) {
        self.out.push('\n');
        self.lines += 1;
        self.chars += 1;
        self.line_start = self.out.len();
        for _ in 0..indent {
            self.out.push(' ');
        }
        self.chars += indent;
    }

    /// The one-line form of `v` if it fits in `room` characters.
    fn flat(v: &Value, room: usize) -> Option<String> {
        let mut text = String::new();
        let complete = write_pr_bounded(&mut text, v, room.saturating_mul(4).saturating_add(1));
        (complete && text.chars().count() <= room).then_some(text)
    }

    fn value(&mut self, v: &Value, depth: usize) {
        let room = self.options.width.saturating_sub(self.column());
        let budget = self.options.max_chars.saturating_sub(self.chars);
        if let Some(text) = Self::flat(v, room.min(budget)) {
            self.push(&text);
            return;
        }
        // Scalars fill the line; compound elements go one per line. (Only
        // as many items as could be shown are looked at.)
        let n = self.options.max_chars;
        super::deep(|| match v {
            Value::Vector(items) | Value::List(items) => {
                let fill = items.iter().take(n).all(|v| !is_compound(v));
                let (open, close) = if matches!(v, Value::List(_)) {
                    ("(", ")")
                } else {
                    ("[", "]")
                };
                self.sequence(open, close, items.iter(), items.len(), fill, depth)
            }
            Value::Set(items) => {
                let fill = items.iter().take(n).all(|v| !is_compound(v));
                self.sequence("#{", "}", items.iter(), items.len(), fill, depth)
            }
            Value::Map(m) => self.map(m, depth),
            Value::Reduced(inner) => self.value(inner, depth),
            _ => self.scalar(v, depth),
        });
    }

    /// A scalar wider than the line: printed whole unless it alone passes
    /// the character budget, then cut (a string keeps its closing quote).
    fn scalar(&mut self, v: &Value, depth: usize) {
        let whole_budget = self.options.max_chars;
        let budget = whole_budget.saturating_sub(self.chars);
        let mut text = String::new();
        let complete = write_pr_bounded(
            &mut text,
            v,
            whole_budget.saturating_mul(4).saturating_add(8),
        );
        if complete && text.chars().count() <= whole_budget {
            self.push(&text);
            return;
        }
        let keep: String = text.chars().take(budget.max(1)).collect();
        self.push(&keep);
        self.push(if v.is_str() { "...\"" } else { "..." });
        if depth == 0 {
            let Some(s) = v.as_str() else {
                self.top_shown = Some(0);
                return;
            };
            self.top_shown = Some(
                keep.chars()
                    .count()
                    .saturating_sub(1)
                    .min(s.chars().count()),
            );
        } else if self.top_shown.is_none() {
            self.top_shown = Some(0);
        }
    }

    fn sequence<'a>(
        &mut self,
        open: &str,
        close: &str,
        items: impl Iterator<Item = &'a Value>,
        len: usize,
        fill: bool,
        depth: usize,
    ) {
        self.push(open);
        let indent = self.column();
        for (i, item) in items.enumerate() {
            if i > 0 {
                let room = self.options.width.saturating_sub(self.column() + 1);
                match fill.then(|| Self::flat(item, room)).flatten() {
                    Some(_) => self.push(" "),
                    None if self.last_line() => {
                        self.push(" ");
                        self.stop(i, depth);
                        break;
                    }
                    None => self.newline(indent),
                }
            }
            if self.exhausted() {
                self.stop(i, depth);
                break;
            }
            self.value(item, depth + 1);
            if self.stopped_inside() {
                self.note_top(i + 1, depth);
                if i + 1 < len {
                    self.push(" ...");
                }
                break;
            }
        }
        self.push(close);
    }

    fn map(&mut self, m: &super::Map, depth: usize) {
        self.push("{");
        let indent = self.column();
        let len = m.len();
        for (i, (k, v)) in m.iter().enumerate() {
            if i > 0 {
                self.push(",");
                if self.last_line() {
                    self.push(" ");
                    self.stop(i, depth);
                    break;
                }
                self.newline(indent);
            }
            if self.exhausted() {
                self.stop(i, depth);
                break;
            }
            self.value(k, depth + 1);
            if !self.stopped_inside() {
                self.push(" ");
                if self.exhausted() {
                    self.push("...");
                    self.top_shown.get_or_insert(i);
                } else {
                    self.value(v, depth + 1);
                }
            }
            if self.stopped_inside() {
                self.note_top(i + 1, depth);
                if i + 1 < len {
                    self.push(" ...");
                }
                break;
            }
        }
        self.push("}");
    }

    /// No room for item `shown` and the rest of a collection.
    fn stop(&mut self, shown: usize, depth: usize) {
        self.push("...");
        if self.top_shown.is_none() || depth == 0 {
            self.top_shown = Some(shown);
        }
        self.mark_stopped();
    }

    fn note_top(&mut self, shown: usize, depth: usize) {
        if depth == 0 {
            self.top_shown = Some(shown);
        }
    }

    fn mark_stopped(&mut self) {
        // Exhausting the budget is what stops every enclosing collection;
        // make sure it stays exhausted.
        self.chars = self.chars.max(self.options.max_chars);
    }

    fn stopped_inside(&self) -> bool {
        self.top_shown.is_some()
    }
}

fn is_compound(v: &Value) -> bool {
    matches!(
        v,
        Value::Vector(_) | Value::List(_) | Value::Set(_) | Value::Map(_)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::eval_str;

    fn show(src: &str, width: usize, max_lines: usize) -> Pretty {
        let v = eval_str(src).unwrap();
        pretty(
            &v,
            PrettyOptions {
                width,
                max_lines,
                max_chars: 10_000,
            },
        )
    }

    #[test]
    fn values_that_fit_print_as_pr_str() {
        let p = show("{:a [1 2] :b \"x\"}", 80, 50);
        assert_eq!(p.text, "{:a [1 2], :b \"x\"}");
        assert_eq!(p.shown, None);
    }

    #[test]
    fn wide_maps_put_one_entry_per_line_aligned_under_the_brace() {
        let p = show(
            "{:name \"a long enough name\" :tags [:one :two :three] :nested {:x 1 :y 2}}",
            30,
            50,
        );
        assert_eq!(
            p.text,
            "{:name \"a long enough name\",\n :tags [:one :two :three],\n :nested {:x 1, :y 2}}"
        );
    }

    #[test]
    fn scalars_fill_lines_and_maps_in_vectors_go_one_per_line() {
        let p = show("(vec (range 30))", 24, 50);
        for line in p.text.lines() {
            assert!(line.chars().count() <= 24, "{line:?} in\n{}", p.text);
        }
        assert!(p.text.starts_with("[0 1 2 3"), "{}", p.text);
        assert_eq!(
            eval_str(&p.text).unwrap(),
            eval_str("(vec (range 30))").unwrap()
        );
        let p = show("[{:id 1 :name \"ab\"} {:id 2 :name \"cd\"}]", 20, 50);
        assert_eq!(p.text, "[{:id 1, :name \"ab\"}\n {:id 2, :name \"cd\"}]");
    }

    #[test]
    fn long_values_stop_at_an_element_boundary_and_stay_balanced() {
        let p = show("(vec (for [i (range 100)] {:id i :v [i i]}))", 30, 5);
        assert_eq!(p.text.lines().count(), 5, "{}", p.text);
        assert!(p.text.ends_with("...]"), "{}", p.text);
        let shown = p.shown.unwrap();
        assert!((4..=5).contains(&shown), "{shown}: {}", p.text);
        // Balanced and readable once the markers are removed.
        let cleaned = p.text.replace("...", "");
        let back = eval_str(&cleaned).unwrap();
        assert_eq!(
            crate::value::pr_str(&back),
            crate::value::pr_str(
                &eval_str(&format!(
                    "(vec (for [i (range {shown})] {{:id i :v [i i]}}))"
                ))
                .unwrap()
            )
        );
    }

    #[test]
    fn a_string_beyond_the_budget_is_cut_inside_its_quotes() {
        let v = eval_str("(apply str (repeat 500 \"ab\"))").unwrap();
        let p = pretty(
            &v,
            PrettyOptions {
                width: 40,
                max_lines: 50,
                max_chars: 100,
            },
        );
        assert!(p.text.starts_with("\"abab"), "{}", p.text);
        assert!(p.text.ends_with("...\""), "{}", p.text);
        assert_eq!(p.shown, Some(99));
    }
}
