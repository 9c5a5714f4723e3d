//! Regular expressions: Java-style syntax via `fancy-regex` (lookaround
//! and backreferences included), with a backtracking limit, a pattern
//! length limit and input truncation so no pattern can hang a program.

use std::sync::Arc;

use crate::error::Error;
use crate::eval::{EvalResult, Interp};
use crate::value::{Regex, Value};

use super::core::{expect_str, type_error, vector_result};
use super::Registry;

/// Longest pattern accepted, in bytes.
const MAX_PATTERN: usize = 256;
/// Backtracking steps one match may take.
const BACKTRACK_LIMIT: usize = 100_000;
/// Only this many bytes of an input string are searched.
const MAX_INPUT: usize = 32 * 1024;

/// Compile a pattern into a regex value.
pub(crate) fn compile_regex(source: &str) -> Result<Value, Error> {
    if source.len() > MAX_PATTERN {
        return Err(Error::execution(format!(
            "Regex pattern is {} bytes long, over the limit of {MAX_PATTERN}",
            source.len()
        )));
    }
    let regex = fancy_regex::RegexBuilder::new(source)
        .backtrack_limit(BACKTRACK_LIMIT)
        .build()
        .map_err(|e| Error::execution(format!("Invalid regex `{source}`: {e}")))?;
    Ok(Value::Regex(Arc::new(Regex {
        source: source.to_string(),
        regex,
    })))
}

fn truncated(s: &str) -> &str {
    if s.len() <= MAX_INPUT {
        return s;
    }
    let mut end = MAX_INPUT;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

fn match_error(e: fancy_regex::Error) -> Error {
    Error::execution(format!("Regex evaluation stopped: {e}"))
}

fn regex_arg<'a>(who: &str, v: &'a Value) -> Result<std::borrow::Cow<'a, Regex>, Error> {
    match v {
        Value::Regex(r) => Ok(std::borrow::Cow::Borrowed(&**r)),
        Value::Str(s) => match compile_regex(s)? {
            Value::Regex(r) => Ok(std::borrow::Cow::Owned(Regex {
                source: r.source.clone(),
                regex: r.regex.clone(),
            })),
            _ => unreachable!("compile_regex returns a regex"),
        },
        other => Err(type_error(who, "a regex", other)),
    }
}

impl Clone for Regex {
    fn clone(&self) -> Self {
        Regex {
            source: self.source.clone(),
            regex: self.regex.clone(),
        }
    }
}

/// A match as Clojure returns it: the string, or a vector of the match and
/// its groups (nil for groups that did not take part).
fn match_value(caps: &fancy_regex::Captures<'_>) -> Value {
    if caps.len() == 1 {
        return Value::from(caps.get(0).map_or("", |m| m.as_str()));
    }
    Value::vector(
        (0..caps.len()).map(|i| caps.get(i).map_or(Value::Nil, |m| Value::from(m.as_str()))),
    )
}

fn re_pattern(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    match &args[0] {
        Value::Regex(_) => Ok(args[0].clone()),
        other => Ok(compile_regex(expect_str("re-pattern", other)?)?),
    }
}

fn re_find(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let re = regex_arg("re-find", &args[0])?;
    let s = truncated(expect_str("re-find", &args[1])?);
    Ok(match re.regex.captures(s).map_err(match_error)? {
        Some(caps) => match_value(&caps),
        None => Value::Nil,
    })
}

fn re_matches(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let re = regex_arg("re-matches", &args[0])?;
    let s = truncated(expect_str("re-matches", &args[1])?);
    let anchored = compile_regex(&format!("^(?:{})$", re.source))?;
    let Value::Regex(anchored) = anchored else {
        unreachable!("a regex")
    };
    Ok(match anchored.regex.captures(s).map_err(match_error)? {
        // The anchoring group is not one of the user's groups.
        Some(caps) => match_value(&caps),
        None => Value::Nil,
    })
}

fn re_seq(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let re = regex_arg("re-seq", &args[0])?;
    let s = truncated(expect_str("re-seq", &args[1])?);
    let mut out = Vec::new();
    for caps in re.regex.captures_iter(s) {
        out.push(match_value(&caps.map_err(match_error)?));
        interp.check_size(out.len())?;
    }
    if out.is_empty() {
        return Ok(Value::Nil);
    }
    vector_result(interp, out)
}

pub(crate) fn split(re: &Regex, s: &str) -> Result<Vec<Value>, Error> {
    let mut out = Vec::new();
    for part in re.regex.split(truncated(s)) {
        out.push(Value::from(part.map_err(match_error)?));
    }
    Ok(out)
}

/// Replace the first `limit` matches (all for 0); `$1` in the
/// replacement refers to groups. Text past the searched prefix is kept.
pub(crate) fn replace_n(
    re: &Regex,
    s: &str,
    limit: usize,
    replacement: &str,
) -> Result<String, Error> {
    let searched = truncated(s);
    let mut out = re
        .regex
        .try_replacen(searched, limit, replacement)
        .map_err(match_error)?
        .into_owned();
    out.push_str(&s[searched.len()..]);
    Ok(out)
}

/// Replace the first `limit` matches (all for 0) by `(str (f match))`,
/// the match given as `re-find` returns it.
pub(crate) fn replace_with_fn(
    interp: &mut Interp<'_>,
    re: &Regex,
    s: &str,
    limit: usize,
    f: &Value,
) -> EvalResult<String> {
    let searched = truncated(s);
    let mut out = String::new();
    let mut last = 0;
    for (n, caps) in re.regex.captures_iter(searched).enumerate() {
        if limit != 0 && n == limit {
            break;
        }
        let caps = caps.map_err(match_error)?;
        let whole = caps.get(0).expect("group 0 is the match");
        out.push_str(&s[last..whole.start()]);
        let replacement = interp.call(f, &[match_value(&caps)])?;
        crate::value::write_str(&mut out, &replacement);
        interp.check_size(out.len())?;
        last = whole.end();
    }
    out.push_str(&s[last..]);
    Ok(out)
}

/// Java's `String.split(regex, limit)`: at most `limit` parts, the last
/// holding the rest of the text.
pub(crate) fn splitn(re: &Regex, s: &str, limit: usize) -> Result<Vec<Value>, Error> {
    let mut out = Vec::new();
    for part in re.regex.splitn(truncated(s), limit) {
        out.push(Value::from(part.map_err(match_error)?));
    }
    Ok(out)
}

pub(super) fn register(r: &mut Registry) {
    r.add("re-pattern", "[s]", 1, 1, "Compile a string into a regex (same as `#\"...\"`). `(re-find (re-pattern \"\\\\d+\") \"ab12\")` => `\"12\"`.", re_pattern);
    r.add("re-find", "[re s]", 2, 2, "The first match: a string, or [match group1 ...] when the regex has groups; nil if none. `(re-find #\"(\\d+)-(\\d+)\" \"10-20\")` => `[\"10-20\" \"10\" \"20\"]`.", re_find);
    r.add("re-matches", "[re s]", 2, 2, "Like re-find, but the whole string must match. `(re-matches #\"\\d+\" \"123\")` => `\"123\"`.", re_matches);
    r.add("re-seq", "[re s]", 2, 2, "Every match, as re-find returns them; nil if none. `(re-seq #\"\\d\" \"a1b2\")` => `[\"1\" \"2\"]`.", re_seq);
}
