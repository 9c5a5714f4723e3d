//! Printing values in Clojure notation: `pr-str` (readable: strings quoted
//! and escaped) and `str` (strings raw, `nil` empty).

use std::fmt::Write;

use super::Value;

/// `(pr-str v)`: the readable representation.
pub fn pr_str(v: &Value) -> String {
    let mut out = String::new();
    write_pr(&mut out, v);
    out
}

/// `(str v)`: strings without quotes, `nil` as the empty string, every
/// other value as `pr-str` prints it (except special floats).
pub fn print_str(v: &Value) -> String {
    let mut out = String::new();
    write_str(&mut out, v);
    out
}

pub fn write_pr(out: &mut String, v: &Value) {
    write_value(out, v, 0, usize::MAX);
}

pub fn write_str(out: &mut String, v: &Value) {
    write_str_bounded(out, v, usize::MAX);
}

/// Append the readable text of `v`, stopping once `out` holds `limit`
/// bytes. Returns false if the text was cut. Values that share structure
/// can print exponentially large, so callers that do not know the size of
/// what they print use this.
pub fn write_pr_bounded(out: &mut String, v: &Value, limit: usize) -> bool {
    write_value(out, v, 0, limit);
    out.len() < limit
}

/// Like [`write_str`], stopping at `limit` bytes; false if cut.
pub fn write_str_bounded(out: &mut String, v: &Value, limit: usize) -> bool {
    match v {
        Value::Nil => {}
        Value::Str(s) => out.push_str(s),
        Value::ShortStr(s) => out.push_str(s),
        Value::Float(f) if f.is_nan() => out.push_str("NaN"),
        Value::Float(f) if f.is_infinite() => {
            out.push_str(if *f > 0.0 { "Infinity" } else { "-Infinity" })
        }
        _ => write_value(out, v, 0, limit),
    }
    out.len() < limit
}

/// Deepest nesting the printer follows: each level costs some 700 bytes
/// of (heap-grown) stack, outside the memory limit, so a 2M-deep vector
/// took 1.4 GB to print; 100,000 levels cost at most about 70 MB (and
/// 50,000-deep values, which the evaluator builds and compares safely,
/// still print). Deeper, a running program stops with the depth error; a
/// result printed after its run shows `...` there.
pub const MAX_PRINT_DEPTH: usize = 100_000;

fn write_value(out: &mut String, v: &Value, depth: usize, limit: usize) {
    if out.len() >= limit || !crate::meter::work(1) {
        return;
    }
    if depth >= MAX_PRINT_DEPTH {
        crate::meter::trip_depth();
        out.push_str("...");
        return;
    }
    if depth % 16 == 15 {
        return super::deep(|| write_value_inner(out, v, depth, limit));
    }
    write_value_inner(out, v, depth, limit)
}

fn write_value_inner(out: &mut String, v: &Value, depth: usize, limit: usize) {
    match v {
        Value::Nil => out.push_str("nil"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(n) => {
            let _ = write!(out, "{n}");
        }
        Value::Float(f) => write_float(out, *f),
        Value::Str(s) => write_escaped(out, s),
        Value::ShortStr(s) => write_escaped(out, s),
        Value::Keyword(k) if readable_keyword(k) => {
            out.push(':');
            out.push_str(k);
        }
        // A keyword made from a JSON key such as `a (println "x") b`
        // would print as code: it prints as the call that makes it.
        Value::Keyword(k) => {
            out.push_str("(keyword ");
            write_escaped(out, k);
            out.push(')');
        }
        Value::Symbol(s) => out.push_str(s),
        Value::Vector(items) => {
            write_seq(out, "[", "]", items.iter(), depth, limit);
        }
        Value::List(items) => {
            write_seq(out, "(", ")", items.iter(), depth, limit);
        }
        Value::Set(items) => {
            write_seq(out, "#{", "}", items.iter(), depth, limit);
        }
        Value::Map(m) => {
            out.push('{');
            for (i, (k, v)) in m.iter().enumerate() {
                if out.len() >= limit || crate::meter::tripped() {
                    return;
                }
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, k, depth + 1, limit);
                out.push(' ');
                write_value(out, v, depth + 1, limit);
            }
            out.push('}');
        }
        Value::Native(n) => {
            let _ = write!(out, "#fn[{}]", n.name);
        }
        Value::Fn(f) => {
            let _ = write!(out, "#fn[{}]", f.label());
        }
        Value::Var(name) => {
            out.push_str("#'");
            out.push_str(name);
        }
        Value::Reduced(inner) => {
            out.push_str("#reduced[");
            write_value(out, inner, depth + 1, limit);
            out.push(']');
        }
        Value::Regex(r) => {
            out.push_str("#\"");
            out.push_str(&r.source);
            out.push('"');
        }
    }
}

fn write_seq<'a>(
    out: &mut String,
    open: &str,
    close: &str,
    items: impl Iterator<Item = &'a Value>,
    depth: usize,
    limit: usize,
) {
    out.push_str(open);
    for (i, item) in items.enumerate() {
        // A tripped meter ends the print (its caller's result is then
        // replaced by the meter's error) without walking the rest.
        if out.len() >= limit || crate::meter::tripped() {
            return;
        }
        if i > 0 {
            out.push(' ');
        }
        write_value(out, item, depth + 1, limit);
    }
    out.push_str(close);
}

/// Whether `:k` reads back as the keyword `k`: a name with no
/// whitespace, no control characters and none of the characters that
/// end or start other forms.
fn readable_keyword(k: &str) -> bool {
    !k.is_empty()
        && !k.starts_with(':')
        && k.chars()
            .all(|c| !c.is_whitespace() && !c.is_control() && !"()[]{}\"\\;@^`~,".contains(c))
}

pub(crate) fn write_escaped(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            // Other control characters (NUL, ESC, DEL, ...) would reach a
            // terminal or a prompt raw; Clojure's reader reads them back.
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Doubles as Java's `Double.toString` prints them (which is what Clojure
/// shows): plain decimal notation for magnitudes in [1e-3, 1e7), otherwise
/// `d.dddE±n`; always at least one digit after the point.
pub(crate) fn write_float(out: &mut String, f: f64) {
    if f.is_nan() {
        out.push_str("##NaN");
        return;
    }
    if f.is_infinite() {
        out.push_str(if f > 0.0 { "##Inf" } else { "##-Inf" });
        return;
    }
    if f == 0.0 {
        out.push_str(if f.is_sign_negative() { "-0.0" } else { "0.0" });
        return;
    }
    // Rust's `{:e}` gives the shortest digits that round-trip.
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if f < 0.0 {
        out.push('-');
    }
    let abs = f.abs();
    if (1e-3..1e7).contains(&abs) {
        if exp >= 0 {
            let point = exp as usize + 1;
            if digits.len() <= point {
                out.push_str(&digits);
                out.extend(std::iter::repeat_n('0', point - digits.len()));
                out.push_str(".0");
            } else {
                out.push_str(&digits[..point]);
                out.push('.');
                out.push_str(&digits[point..]);
            }
        } else {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-exp - 1) as usize));
            out.push_str(&digits);
        }
    } else {
        out.push_str(&digits[..1]);
        out.push('.');
        if digits.len() > 1 {
            out.push_str(&digits[1..]);
        } else {
            out.push('0');
        }
        let _ = write!(out, "E{exp}");
    }
}
