//! String functions (also reachable as `clojure.string/x` and `str/x`)
//! and number parsing.

use crate::error::Error;
use crate::eval::{EvalResult, Interp};
use crate::value::{ArcStr, Value};

use super::core::{char_str, expect_int, expect_str, seq_items, type_error, vector_result};
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

fn split(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let s = expect_str("split", &args[0])?;
    let parts: Vec<Value> = match &args[1] {
        Value::Str(sep) if sep.is_empty() => s.chars().map(|c| Value::Str(char_str(c))).collect(),
        Value::Str(sep) => s.split(sep.as_str()).map(Value::from).collect(),
        Value::Regex(r) => super::regex::split(r, s)?,
        other => return Err(type_error("split", "a string or regex separator", other).into()),
    };
    let mut parts = parts;
    // Like Java's String.split, trailing empty strings are dropped.
    if matches!(&args[1], Value::Regex(_)) {
        while matches!(parts.last(), Some(Value::Str(p)) if p.is_empty()) && parts.len() > 1 {
            parts.pop();
        }
    }
    vector_result(interp, parts)
}

fn split_lines(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let s = expect_str("split-lines", &args[0])?;
    let mut lines: Vec<Value> = s
        .split('\n')
        .map(|l| Value::from(l.strip_suffix('\r').unwrap_or(l)))
        .collect();
    while matches!(lines.last(), Some(Value::Str(p)) if p.is_empty()) && lines.len() > 1 {
        lines.pop();
    }
    vector_result(interp, lines)
}

fn join(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let (sep, coll) = match args {
        [coll] => (String::new(), coll),
        [sep, coll] => (crate::value::print_str(sep), coll),
        _ => unreachable!("arity checked"),
    };
    let items = seq_items(coll, "join")?;
    let mut out = String::new();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(&sep);
        }
        crate::value::write_str(&mut out, item);
    }
    interp.check_size(out.len())?;
    Ok(Value::from(out))
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

fn replace(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let s = expect_str("replace", &args[0])?;
    let out = match (&args[1], &args[2]) {
        (Value::Str(from), Value::Str(to)) => s.replace(from.as_str(), to),
        (Value::Regex(r), Value::Str(to)) => super::regex::replace_all(r, s, to)?,
        (from, _) => {
            return Err(type_error(
                "replace",
                "a string or regex pattern and a string replacement",
                from,
            )
            .into())
        }
    };
    interp.check_size(out.len())?;
    Ok(Value::from(out))
}

fn upper(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::from(
        expect_str("upper-case", &args[0])?.to_uppercase(),
    ))
}

fn lower(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::from(
        expect_str("lower-case", &args[0])?.to_lowercase(),
    ))
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
    let Value::Str(s) = &args[0] else {
        return Ok(Value::Nil);
    };
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(Value::Nil);
    }
    Ok(s.parse::<i64>().map(Value::Int).unwrap_or(Value::Nil))
}

fn parse_double(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let Value::Str(s) = &args[0] else {
        return Ok(Value::Nil);
    };
    let t = s.as_str();
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
            Ok(Value::Str(s.clone()))
        }
        other => Err(type_error("name", "a string, keyword or symbol", other).into()),
    }
}

fn keyword(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    match &args[0] {
        Value::Str(s) | Value::Symbol(s) => {
            Ok(Value::Keyword(ArcStr::from(s.trim_start_matches(':'))))
        }
        Value::Keyword(_) => Ok(args[0].clone()),
        Value::Nil => Ok(Value::Nil),
        other => Err(type_error("keyword", "a string", other).into()),
    }
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
    r.add("split", "[s sep]", 2, 2, "Split on a string or regex separator; \"\" splits into characters. `(split \"a,b\" \",\")` => `[\"a\" \"b\"]`.", split);
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
    r.add("replace", "[s match replacement]", 3, 3, "Replace every occurrence of a string or regex. `(replace \"hello\" \"l\" \"L\")` => `\"heLLo\"`.", replace);
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
}
