//! String functions (also reachable as `clojure.string/x` and `str/x`)
//! and number parsing.

use crate::error::Error;
use crate::eval::{EvalResult, Interp};
use crate::value::{ArcStr, Value};

use super::bounded::Text;
use super::core::{expect_int, expect_str, seq_items, type_error, vector_result};
use super::Registry;

fn subs(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let s = expect_str("subs", &args[0])?;
    let chars: Vec<char> = s.chars().collect();
    let start = expect_int("subs", &args[1])?;
    let end = match args.get(2) {
        Some(e) => expect_int("subs", e)?,
        None => chars.len() as i64,
    };
    if start < 0 || end < start || end as usize > chars.len() {
        return Err(Error::execution(format!(
            "`subs` indexes {start} to {end} are out of range for a string of length {}",
            chars.len()
        ))
        .into());
    }
    let out: String = chars[start as usize..end as usize].iter().collect();
    interp.check_size(out.len())?;
    Ok(Value::from(out))
}

/// `(split s sep limit?)` with Java's `String.split` rules: a positive
/// limit caps the number of parts, zero (the default) also drops trailing
/// empty strings, a negative limit keeps them.
pub(super) fn split(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let s = expect_str("split", &args[0])?;
    let limit = match args.get(2) {
        Some(l) => expect_int("split", l)?,
        None => 0,
    };
    let cap = usize::try_from(limit).ok().filter(|&n| n > 0);
    let mut parts: Vec<Value> = match (&args[1], args[1].as_str(), cap) {
        (separator, Some(text), cap) => split_on_string(s, text, separator, cap)?,
        (Value::Regex(r), _, None) => super::regex::split(r, s, limit < 0)?,
        (Value::Regex(r), _, Some(n)) => super::regex::splitn(r, s, n)?,
        (other, _, _) => {
            return Err(type_error("split", "a string or regex separator", other).into())
        }
    };
    // As in Java, a string with no separator in it stays whole (even when
    // empty); otherwise every trailing empty part goes.
    if limit == 0 && parts.len() > 1 {
        while parts.last().and_then(Value::as_str) == Some("") && crate::meter::work(1) {
            parts.pop();
        }
    }
    vector_result(interp, parts)
}

/// `s` split on the string `separator` (whose text is `text`): into
/// characters when it is empty, else on its one character. The
/// specification (current revision, §8.3) follows Clojure: the separator
/// is a regex; a one-character string is accepted (characters are
/// one-character strings), a longer one is not.
fn split_on_string(
    s: &str,
    text: &str,
    separator: &Value,
    cap: Option<usize>,
) -> Result<Vec<Value>, Error> {
    let mut chars = text.chars();
    let Some(sep) = chars.next() else {
        return Ok(split_chars(s, cap));
    };
    if chars.next().is_some() {
        return Err(
            type_error("split", "a regex or a one-character separator", separator).with_hint(
                format!(
                    "a separator of several characters must be a regex: `(split s #\"{}\")`",
                    regex_literal(text)
                ),
            ),
        );
    }
    if let Ok(byte) = u8::try_from(sep) {
        if byte.is_ascii() {
            return Ok(split_on_byte(s, byte, cap.unwrap_or(usize::MAX)));
        }
    }
    let parts = s.matches(sep).count() + 1;
    let mut out = Vec::with_capacity(cap.map_or(parts, |n| n.min(parts)));
    match cap {
        None => out.extend(crate::meter::metered(s.split(sep)).map(Value::from)),
        Some(n) => out.extend(crate::meter::metered(s.splitn(n, sep)).map(Value::from)),
    }
    Ok(out)
}

/// `s` split on the ASCII `byte` into at most `cap` parts (the last
/// holds the rest). An ASCII byte is never inside a longer character, so
/// every cut is at a character boundary.
fn split_on_byte(s: &str, byte: u8, cap: usize) -> Vec<Value> {
    let bytes = s.as_bytes();
    // Sized once: the parts are one more than the separators. Both the
    // count and the search for each cut are vectorized (`memchr`).
    let parts = memchr::memchr_iter(byte, bytes).count() + 1;
    let mut out = Vec::with_capacity(parts.min(cap));
    let mut start = 0;
    for at in crate::meter::metered(memchr::memchr_iter(byte, bytes).take(cap.saturating_sub(1))) {
        out.push(Value::from(&s[start..at]));
        start = at + 1;
    }
    out.push(Value::from(&s[start..]));
    out
}

/// `sep` as the body of a regex literal that matches it exactly.
fn regex_literal(sep: &str) -> String {
    let mut out = String::with_capacity(sep.len());
    for c in sep.chars() {
        if "\\^$.|?*+()[]{}".contains(c) {
            out.push('\\');
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '"' => out.push_str("\\\""),
            c => out.push(c),
        }
    }
    out
}

/// Split into characters, the last part holding the rest past `cap`.
fn split_chars(s: &str, cap: Option<usize>) -> Vec<Value> {
    let cap = cap.unwrap_or(usize::MAX);
    let mut out = Vec::new();
    for (i, (at, c)) in s.char_indices().enumerate() {
        if i + 1 == cap {
            out.push(Value::from(&s[at..]));
            break;
        }
        out.push(Value::char(c));
    }
    out
}

fn split_lines(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let s = expect_str("split-lines", &args[0])?;
    let mut lines: Vec<Value> = s
        .split('\n')
        .map(|l| Value::from(l.strip_suffix('\r').unwrap_or(l)))
        .collect();
    while lines.last().and_then(Value::as_str) == Some("") && lines.len() > 1 {
        lines.pop();
    }
    vector_result(interp, lines)
}

fn join(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let (sep, coll) = match args {
        [coll] => (String::new(), coll),
        [sep, coll] => {
            let mut text = Text::new(interp, 0);
            text.push_value(sep)?;
            (text.into_string(), coll)
        }
        _ => unreachable!("arity checked"),
    };
    let items = seq_items(coll, "join")?;
    let mut out = Text::new(interp, 0);
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(&sep)?;
        }
        out.push_value(item)?;
    }
    interp.check_size(out.len())?;
    Ok(Value::from(out.into_string()))
}

fn trim(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::from(expect_str("trim", &args[0])?.trim()))
}

fn triml(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::from(expect_str("triml", &args[0])?.trim_start()))
}

fn trimr(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::from(expect_str("trimr", &args[0])?.trim_end()))
}

/// `clojure.string/replace` (3 arguments: string or regex match; string
/// or function replacement) or `clojure.core/replace` (2 arguments:
/// `(replace smap coll)`).
fn replace(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    match args {
        [smap, coll] => replace_items(interp, smap, coll),
        [s, pattern, replacement] => replace_text(interp, "replace", s, pattern, replacement, 0),
        _ => unreachable!("arity checked"),
    }
}

fn replace_first(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    replace_text(interp, "replace-first", &args[0], &args[1], &args[2], 1)
}

/// Replace the first `limit` matches (0 for all) of a string or regex,
/// the result built under the size limit.
fn replace_text(
    interp: &mut Interp<'_>,
    who: &str,
    s: &Value,
    pattern: &Value,
    replacement: &Value,
    limit: usize,
) -> EvalResult {
    let s = expect_str(who, s)?;
    let f = replacement;
    let mut out = Text::new(interp, s.len());
    match (pattern, pattern.as_str(), replacement.as_str()) {
        (_, Some(from), Some(to)) => replace_literal(s, from, to, limit, &mut out)?,
        (Value::Regex(r), _, Some(to)) => super::regex::replace_n(r, s, limit, to, &mut out)?,
        (Value::Regex(r), _, None) if f.is_fn() => {
            super::regex::replace_with_fn(interp, r, s, limit, f, &mut out)?
        }
        (_, Some(from), None) if f.is_fn() => {
            let r = super::regex::compile(&escape_regex(from))?;
            super::regex::replace_with_fn(interp, &r, s, limit, f, &mut out)?
        }
        (Value::Regex(_), _, _) | (_, Some(_), _) => {
            return Err(type_error(who, "a string or function replacement", replacement).into())
        }
        (other, _, _) => return Err(type_error(who, "a string or regex pattern", other).into()),
    }
    interp.check_size(out.len())?;
    Ok(Value::from(out.into_string()))
}

/// Replace the first `limit` (0: all) occurrences of `from` in `s` by
/// `to` (an empty `from` occurs before each character and at the end, as
/// in Java), appending to `out` under its limit.
pub(super) fn replace_literal(
    s: &str,
    from: &str,
    to: &str,
    limit: usize,
    out: &mut Text,
) -> Result<(), Error> {
    let mut last = 0;
    for (n, (at, found)) in s.match_indices(from).enumerate() {
        if limit != 0 && n == limit {
            break;
        }
        out.push_str(&s[last..at])?;
        out.push_str(to)?;
        last = at + found.len();
        if n % 4096 == 4095 && !crate::meter::work(crate::meter::CHECK_EVERY) {
            break;
        }
    }
    out.push_str(&s[last..])
}

/// A regex matching `s` literally.
fn escape_regex(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `(replace smap coll)`: items that are keys of smap replaced by their
/// values.
fn replace_items(interp: &mut Interp<'_>, smap: &Value, coll: &Value) -> EvalResult {
    let Value::Map(m) = smap else {
        return Err(type_error(
            "replace",
            "a map of replacements (or a string, pattern and replacement)",
            smap,
        )
        .into());
    };
    let out = seq_items(coll, "replace")?
        .into_iter()
        .map(|x| m.get(&x).cloned().unwrap_or(x))
        .collect();
    vector_result(interp, out)
}

/// Changing case may lengthen a text (`ß` is `SS` in upper case): the
/// result is checked against the size limit.
fn upper(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let s = expect_str("upper-case", &args[0])?;
    case_changed(interp, s, s.to_uppercase())
}

fn lower(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let s = expect_str("lower-case", &args[0])?;
    case_changed(interp, s, s.to_lowercase())
}

/// `out`, the case-changed `s`, unless it grew past the size limit.
fn case_changed(interp: &mut Interp<'_>, s: &str, out: String) -> EvalResult {
    if out.len() > s.len() {
        interp.check_size(out.chars().count())?;
    }
    Ok(Value::from(out))
}

fn starts_with(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let s = expect_str("starts-with?", &args[0])?;
    Ok(Value::Bool(
        s.starts_with(expect_str("starts-with?", &args[1])?),
    ))
}

fn ends_with(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let s = expect_str("ends-with?", &args[0])?;
    Ok(Value::Bool(
        s.ends_with(expect_str("ends-with?", &args[1])?),
    ))
}

fn includes(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let s = expect_str("includes?", &args[0])?;
    Ok(Value::Bool(s.contains(expect_str("includes?", &args[1])?)))
}

/// Clojure's `parse-long`: an optional sign and digits only; nil for
/// anything else, non-strings included (the specification's choice).
fn parse_long(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let Some(s) = args[0].as_str() else {
        return Ok(Value::Nil);
    };
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(Value::Nil);
    }
    Ok(s.parse::<i64>().map(Value::Int).unwrap_or(Value::Nil))
}

fn parse_double(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let Some(t) = args[0].as_str() else {
        return Ok(Value::Nil);
    };
    let valid = !t.is_empty()
        && t.bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E'))
        && t.bytes().any(|b| b.is_ascii_digit());
    if !valid {
        return Ok(match t {
            "NaN" => Value::Float(f64::NAN),
            "Infinity" | "+Infinity" => Value::Float(f64::INFINITY),
            "-Infinity" => Value::Float(f64::NEG_INFINITY),
            _ => Value::Nil,
        });
    }
    Ok(t.parse::<f64>().map(Value::Float).unwrap_or(Value::Nil))
}

fn name(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    match &args[0] {
        Value::Str(s) | Value::Keyword(s) | Value::Symbol(s) | Value::Var(s) => {
            Ok(Value::shared_str(s))
        }
        Value::ShortStr(_) => Ok(args[0].clone()),
        other => Err(type_error("name", "a string, keyword or symbol", other).into()),
    }
}

/// The specification (§8.4) validates the name: it starts with a letter
/// and holds only letters, digits, `-`, `_`, `?` and `!` (no `/`, no
/// spaces, no operator characters, not empty). One leading colon is
/// dropped (`(keyword ":a")` is `:a`).
fn keyword(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let text = match &args[0] {
        Value::Symbol(s) => Some(s.as_str()),
        string => string.as_str(),
    };
    match (&args[0], text) {
        (_, Some(s)) => {
            let name = s.strip_prefix(':').unwrap_or(s);
            let mut chars = name.chars();
            let valid = chars.next().is_some_and(char::is_alphabetic)
                && chars.all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '?' | '!'));
            if !valid {
                return Err(Error::type_error(format!(
                    "`keyword` cannot make a keyword of {}",
                    args[0].describe()
                ))
                .with_hint("a keyword name starts with a letter and holds only letters, digits, `-`, `_`, `?` and `!`; use the string itself as a map key")
                .into());
            }
            Ok(Value::Keyword(ArcStr::from(name)))
        }
        (Value::Keyword(_), _) => Ok(args[0].clone()),
        (Value::Nil, _) => Ok(Value::Nil),
        (other, _) => Err(type_error("keyword", "a string", other).into()),
    }
}

fn blank(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(match &args[0] {
        Value::Nil => true,
        other => expect_str("blank?", other)?.trim().is_empty(),
    }))
}

fn capitalize(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let s = expect_str("capitalize", &args[0])?;
    let mut chars = s.chars();
    Ok(Value::from(match chars.next() {
        Some(first) => first
            .to_uppercase()
            .chain(chars.as_str().to_lowercase().chars())
            .collect::<String>(),
        None => String::new(),
    }))
}

fn string_reverse(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let s = expect_str("clojure.string/reverse", &args[0])?;
    Ok(Value::from(s.chars().rev().collect::<String>()))
}

/// The byte offset of character `i`, or the length past the end.
fn byte_of_char(s: &str, i: usize) -> usize {
    s.char_indices().nth(i).map_or(s.len(), |(b, _)| b)
}

fn char_index(s: &str, byte: usize) -> Value {
    Value::Int(s[..byte].chars().count() as i64)
}

/// The text searched for by `index-of`: a string or a character.
fn needle<'a>(who: &str, v: &'a Value) -> Result<&'a str, Error> {
    v.as_str()
        .ok_or_else(|| type_error(who, "a string or character to look for", v))
}

/// `(index-of s value from?)` in characters, nil if not found. On a
/// vector or list it finds the index of an item instead.
fn index_of(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let from = match args.get(2) {
        Some(f) => expect_int("index-of", f)?.max(0) as usize,
        None => 0,
    };
    if let Value::Vector(items) | Value::List(items) = &args[0] {
        let found = items.iter().skip(from).position(|x| *x == args[1]);
        return Ok(found.map_or(Value::Nil, |i| Value::Int((i + from) as i64)));
    }
    let s = expect_str("index-of", &args[0])?;
    let value = needle("index-of", &args[1])?;
    let start = byte_of_char(s, from);
    if from > 0 && start == s.len() && !value.is_empty() {
        return Ok(Value::Nil);
    }
    Ok(s[start..]
        .find(value)
        .map_or(Value::Nil, |b| char_index(s, start + b)))
}

/// `(last-index-of s value from?)`: the last match starting at or before
/// character `from`.
fn last_index_of(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let s = expect_str("last-index-of", &args[0])?;
    let value = needle("last-index-of", &args[1])?;
    let end = match args.get(2) {
        Some(f) => {
            let from = expect_int("last-index-of", f)?;
            if from < 0 {
                return Ok(Value::Nil);
            }
            byte_of_char(s, from as usize + value.chars().count())
        }
        None => s.len(),
    };
    Ok(s[..end]
        .rfind(value)
        .map_or(Value::Nil, |b| char_index(s, b)))
}

/// `(escape s cmap)`: each character replaced by `(cmap c)` unless that
/// is nil; cmap is a map or a function.
fn escape(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let s = expect_str("escape", &args[0])?;
    let mut out = Text::new(interp, s.len());
    for c in s.chars() {
        let ch = Value::char(c);
        match interp.call(&args[1], std::slice::from_ref(&ch))? {
            Value::Nil => out.push(c)?,
            v => out.push_value(&v)?,
        }
    }
    interp.check_size(out.len())?;
    Ok(Value::from(out.into_string()))
}

fn trim_newline(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let s = expect_str("trim-newline", &args[0])?;
    Ok(Value::from(s.trim_end_matches(['\n', '\r'])))
}

/// The one-character string of a code point (characters are strings).
fn char_fn(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    match &args[0] {
        Value::Str(_) | Value::ShortStr(_) if super::core::single_char(&args[0]).is_some() => {
            Ok(args[0].clone())
        }
        Value::Int(n) => u32::try_from(*n)
            .ok()
            .and_then(char::from_u32)
            .map(Value::char)
            .ok_or_else(|| {
                Error::execution(format!("`char` got {n}, which is not a character code")).into()
            }),
        other => Err(type_error("char", "an integer code point", other).into()),
    }
}

/// `"true"` and `"false"` exactly; nil for anything else.
fn parse_boolean(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(match args[0].as_str() {
        Some("true") => Value::Bool(true),
        Some("false") => Value::Bool(false),
        _ => Value::Nil,
    })
}

pub(super) fn register(r: &mut Registry) {
    r.add(
        "subs",
        "[s start end?]",
        2,
        3,
        "The substring from start to end (exclusive). `(subs \"hello\" 1 3)` => `\"el\"`.",
        subs,
    );
    r.add("split", "[s sep limit?]", 2, 3, "Split on a regex or a one-character string separator (\"\" splits into characters; a longer string is a type error: use a regex); trailing empty parts are dropped unless a limit is given. `(split \"a,b\" \",\")` => `[\"a\" \"b\"]`.", split);
    r.add("split-lines", "[s]", 1, 1, "Split on \\n or \\r\\n; trailing empty lines dropped. `(split-lines \"a\\nb\")` => `[\"a\" \"b\"]`.", split_lines);
    r.add(
        "join",
        "[sep? coll]",
        1,
        2,
        "Join items as text with an optional separator. `(join \", \" [1 2])` => `\"1, 2\"`.",
        join,
    );
    r.add(
        "trim",
        "[s]",
        1,
        1,
        "Remove whitespace at both ends. `(trim \"  a \")` => `\"a\"`.",
        trim,
    );
    r.add(
        "triml",
        "[s]",
        1,
        1,
        "Remove whitespace at the start. `(triml \"  a \")` => `\"a \"`.",
        triml,
    );
    r.add(
        "trimr",
        "[s]",
        1,
        1,
        "Remove whitespace at the end. `(trimr \"  a \")` => `\"  a\"`.",
        trimr,
    );
    r.add("replace", "[s match replacement] or [smap coll]", 2, 3, "Replace every occurrence of a string or regex (the replacement may be a function of the match); with two arguments, Clojure's `(replace smap coll)`. `(replace \"hello\" \"l\" \"L\")` => `\"heLLo\"`.", replace);
    r.add("replace-first", "[s match replacement]", 3, 3, "Replace the first occurrence of a string or regex. `(replace-first \"aaa\" \"a\" \"b\")` => `\"baa\"`.", replace_first);
    r.add(
        "upper-case",
        "[s]",
        1,
        1,
        "The string in upper case. `(upper-case \"ab\")` => `\"AB\"`.",
        upper,
    );
    r.alias("upcase", "upper-case");
    r.add(
        "lower-case",
        "[s]",
        1,
        1,
        "The string in lower case. `(lower-case \"AB\")` => `\"ab\"`.",
        lower,
    );
    r.alias("downcase", "lower-case");
    r.add(
        "starts-with?",
        "[s prefix]",
        2,
        2,
        "True if s starts with prefix. `(starts-with? \"hello\" \"he\")` => `true`.",
        starts_with,
    );
    r.add(
        "ends-with?",
        "[s suffix]",
        2,
        2,
        "True if s ends with suffix. `(ends-with? \"hello\" \"lo\")` => `true`.",
        ends_with,
    );
    r.add(
        "includes?",
        "[s sub]",
        2,
        2,
        "True if s contains sub. `(includes? \"hello\" \"ll\")` => `true`.",
        includes,
    );
    r.add(
        "parse-long",
        "[s]",
        1,
        1,
        "The integer a string spells exactly, else nil. `(parse-long \"42\")` => `42`.",
        parse_long,
    );
    r.add(
        "parse-double",
        "[s]",
        1,
        1,
        "The float a string spells exactly, else nil. `(parse-double \"3.14\")` => `3.14`.",
        parse_double,
    );
    r.add(
        "name",
        "[x]",
        1,
        1,
        "The name of a keyword or symbol, or the string itself. `(name :a)` => `\"a\"`.",
        name,
    );
    r.add(
        "keyword",
        "[s]",
        1,
        1,
        "The keyword with this name. `(keyword \"a\")` => `:a`.",
        keyword,
    );
    r.alias("parse-int", "parse-long");
    r.add("parse-boolean", "[s]", 1, 1, "true or false for exactly \"true\" or \"false\", else nil. `(parse-boolean \"true\")` => `true`.", parse_boolean);
    r.add(
        "blank?",
        "[s]",
        1,
        1,
        "True if s is nil, empty or only whitespace. `(blank? \"  \")` => `true`.",
        blank,
    );
    r.add("capitalize", "[s]", 1, 1, "The first character in upper case, the rest in lower case. `(capitalize \"hELLO\")` => `\"Hello\"`.", capitalize);
    r.add("clojure.string/reverse", "[s]", 1, 1, "The characters of s in reverse order, as a string (bare `reverse` gives a vector). `(clojure.string/reverse \"abc\")` => `\"cba\"`.", string_reverse);
    r.add("index-of", "[s value from?]", 2, 3, "The character index of the first occurrence of value (from index from), or nil; on a vector, the index of an item. `(index-of \"hello\" \"l\")` => `2`.", index_of);
    r.add("last-index-of", "[s value from?]", 2, 3, "The character index of the last occurrence of value (starting at or before from), or nil. `(last-index-of \"hello\" \"l\")` => `3`.", last_index_of);
    r.add("escape", "[s cmap]", 2, 2, "Each character c replaced by (cmap c) when that is not nil. `(escape \"a<b\" {\"<\" \"&lt;\"})` => `\"a&lt;b\"`.", escape);
    r.add("trim-newline", "[s]", 1, 1, "Remove trailing newline and carriage-return characters. `(trim-newline \"a\\n\")` => `\"a\"`.", trim_newline);
    r.add(
        "char",
        "[n]",
        1,
        1,
        "The character (a one-character string) with this code point. `(char 97)` => `\"a\"`.",
        char_fn,
    );
}
