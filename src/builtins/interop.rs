//! Java `String` methods written as dot calls, `(.toUpperCase s)`. The
//! reader reads `.toUpperCase` as an ordinary symbol, so each method is a
//! builtin named with its leading dot.
//!
//! Indices and lengths count UTF-16 code units, as Java's do (so
//! `(.length "😀")` is 2, while `count` gives 1); not-found is -1, and
//! out-of-range indices are errors.

use crate::error::Error;
use crate::eval::{EvalResult, Interp};
use crate::value::Value;

use super::core::{expect_int, type_error};
use super::Registry;

/// The string receiver of a method.
fn receiver<'a>(method: &str, v: &'a Value) -> Result<&'a str, Error> {
    v.as_str()
        .ok_or_else(|| type_error(method, "a string receiver", v))
}

fn string_arg<'a>(method: &str, v: &'a Value) -> Result<&'a str, Error> {
    v.as_str()
        .ok_or_else(|| type_error(method, "a string argument", v))
}

fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// The byte offset of UTF-16 index `i`; an error when it is past the end
/// or splits a character in two.
fn byte_offset(method: &str, s: &str, i: i64) -> Result<usize, Error> {
    let mut units = 0i64;
    for (b, c) in s.char_indices() {
        if units == i {
            return Ok(b);
        }
        units += c.len_utf16() as i64;
        if units > i && i >= 0 {
            return Err(Error::execution(format!(
                "`{method}` index {i} falls inside a character made of two UTF-16 units"
            )));
        }
    }
    if units == i {
        return Ok(s.len());
    }
    Err(Error::execution(format!(
        "`{method}` index {i} is out of range for a string of length {units}"
    )))
}

fn utf16_index(s: &str, byte: usize) -> Value {
    Value::Int(utf16_len(&s[..byte]) as i64)
}

fn to_upper_case(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::from(
        receiver(".toUpperCase", &args[0])?.to_uppercase(),
    ))
}

fn to_lower_case(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::from(
        receiver(".toLowerCase", &args[0])?.to_lowercase(),
    ))
}

/// Java's `trim` removes every character up to the space (control
/// characters included), not Unicode whitespace.
fn trim(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let s = receiver(".trim", &args[0])?;
    Ok(Value::from(s.trim_matches(|c: char| c <= ' ')))
}

fn strip(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::from(receiver(".strip", &args[0])?.trim()))
}

fn length(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::Int(utf16_len(receiver(".length", &args[0])?) as i64))
}

fn is_empty(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(receiver(".isEmpty", &args[0])?.is_empty()))
}

fn is_blank(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(
        receiver(".isBlank", &args[0])?.trim().is_empty(),
    ))
}

fn substring(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let s = receiver(".substring", &args[0])?;
    let start = expect_int(".substring", &args[1])?;
    let end = match args.get(2) {
        Some(e) => expect_int(".substring", e)?,
        None => utf16_len(s) as i64,
    };
    if start > end {
        return Err(
            Error::execution(format!("`.substring` start {start} is after end {end}")).into(),
        );
    }
    let (from, to) = (
        byte_offset(".substring", s, start)?,
        byte_offset(".substring", s, end)?,
    );
    Ok(Value::from(&s[from..to]))
}

fn char_at(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let s = receiver(".charAt", &args[0])?;
    let i = expect_int(".charAt", &args[1])?;
    let at = byte_offset(".charAt", s, i)?;
    match s[at..].chars().next() {
        Some(c) => Ok(Value::char(c)),
        None => Err(Error::execution(format!(
            "`.charAt` index {i} is out of range for a string of length {}",
            utf16_len(s)
        ))
        .into()),
    }
}

fn index_of(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let s = receiver(".indexOf", &args[0])?;
    let needle = string_arg(".indexOf", &args[1])?;
    let from = match args.get(2) {
        Some(f) => expect_int(".indexOf", f)?.max(0),
        None => 0,
    };
    // Java clamps a start past the end; a start inside a character pair
    // moves on to the next character.
    let mut start = s.len();
    let mut units = 0i64;
    for (b, c) in s.char_indices() {
        if units >= from {
            start = b;
            break;
        }
        units += c.len_utf16() as i64;
    }
    Ok(match s[start..].find(needle) {
        Some(b) => utf16_index(s, start + b),
        None => Value::Int(-1),
    })
}

fn last_index_of(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let s = receiver(".lastIndexOf", &args[0])?;
    let needle = string_arg(".lastIndexOf", &args[1])?;
    let found = match args.get(2) {
        None => s.rfind(needle),
        Some(f) => {
            let from = expect_int(".lastIndexOf", f)?;
            s.match_indices(needle)
                .map(|(b, _)| b)
                .take_while(|&b| utf16_len(&s[..b]) as i64 <= from)
                .last()
        }
    };
    Ok(found.map_or(Value::Int(-1), |b| utf16_index(s, b)))
}

fn contains(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let s = receiver(".contains", &args[0])?;
    Ok(Value::Bool(s.contains(string_arg(".contains", &args[1])?)))
}

fn starts_with(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let s = receiver(".startsWith", &args[0])?;
    Ok(Value::Bool(
        s.starts_with(string_arg(".startsWith", &args[1])?),
    ))
}

fn ends_with(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let s = receiver(".endsWith", &args[0])?;
    Ok(Value::Bool(s.ends_with(string_arg(".endsWith", &args[1])?)))
}

/// Java's `split` takes a regex given as a string; trailing empty parts
/// are dropped unless a limit says otherwise.
fn split(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    receiver(".split", &args[0])?;
    let regex = match (&args[1], args[1].as_str()) {
        (_, Some(pattern)) => super::compile_regex(pattern)?,
        (Value::Regex(_), _) => args[1].clone(),
        (other, _) => return Err(type_error(".split", "a regex string", other).into()),
    };
    let mut call = vec![args[0].clone(), regex];
    call.extend(args.get(2).cloned());
    super::strings::split(interp, &call)
}

/// Java's `replace`: every literal occurrence.
fn replace(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let s = receiver(".replace", &args[0])?;
    let from = string_arg(".replace", &args[1])?;
    let to = string_arg(".replace", &args[2])?;
    let mut out = super::bounded::Text::new(interp, s.len());
    super::strings::replace_literal(s, from, to, 0, &mut out)?;
    interp.check_size(out.len())?;
    Ok(Value::from(out.into_string()))
}

/// Java's `replaceAll`: a regex given as a string, `$1` for groups.
fn replace_all(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let s = receiver(".replaceAll", &args[0])?;
    let re = super::regex::compile(string_arg(".replaceAll", &args[1])?)?;
    let to = string_arg(".replaceAll", &args[2])?;
    let mut out = super::bounded::Text::new(interp, s.len());
    super::regex::replace_n(&re, s, 0, to, &mut out)?;
    interp.check_size(out.len())?;
    Ok(Value::from(out.into_string()))
}

fn matches(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let s = receiver(".matches", &args[0])?;
    let pattern = string_arg(".matches", &args[1])?;
    let re = super::regex::compile(&format!("^(?:{pattern})$"))?;
    let s = super::regex::whole_text(".matches", &re, s)?;
    let found = re
        .regex
        .is_match(s)
        .map_err(|e| super::regex::match_error(&re, e))?;
    Ok(Value::Bool(found))
}

fn concat(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let s = receiver(".concat", &args[0])?;
    let out = format!("{s}{}", string_arg(".concat", &args[1])?);
    interp.check_size(out.len())?;
    Ok(Value::from(out))
}

fn equals(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(args[0] == args[1]))
}

fn equals_ignore_case(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let s = receiver(".equalsIgnoreCase", &args[0])?;
    Ok(Value::Bool(match args[1].as_str() {
        Some(t) => s.to_lowercase() == t.to_lowercase(),
        None => false,
    }))
}

/// `.toString` of any value is its `str` text; nil has no methods.
fn to_string(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    match &args[0] {
        Value::Nil => Err(Error::execution("`.toString` called on nil").into()),
        other => Ok(Value::from(crate::value::print_str(other))),
    }
}

pub(super) fn register(r: &mut Registry) {
    r.add(
        ".toUpperCase",
        "[s]",
        1,
        1,
        "Java's String.toUpperCase. `(.toUpperCase \"ab\")` => `\"AB\"`.",
        to_upper_case,
    );
    r.add(
        ".toLowerCase",
        "[s]",
        1,
        1,
        "Java's String.toLowerCase. `(.toLowerCase \"AB\")` => `\"ab\"`.",
        to_lower_case,
    );
    r.add(".trim", "[s]", 1, 1, "Java's String.trim: spaces and control characters removed at both ends. `(.trim \" a \")` => `\"a\"`.", trim);
    r.add(
        ".strip",
        "[s]",
        1,
        1,
        "Java's String.strip: whitespace removed at both ends. `(.strip \" a \")` => `\"a\"`.",
        strip,
    );
    r.add(
        ".length",
        "[s]",
        1,
        1,
        "Java's String.length, in UTF-16 units. `(.length \"abc\")` => `3`.",
        length,
    );
    r.add(
        ".isEmpty",
        "[s]",
        1,
        1,
        "True for the empty string. `(.isEmpty \"\")` => `true`.",
        is_empty,
    );
    r.add(
        ".isBlank",
        "[s]",
        1,
        1,
        "True for a string of only whitespace. `(.isBlank \" \")` => `true`.",
        is_blank,
    );
    r.add(".substring", "[s start end?]", 2, 3, "Java's String.substring (UTF-16 indices; an error when out of range). `(.substring \"hello\" 1 3)` => `\"el\"`.", substring);
    r.add(
        ".charAt",
        "[s i]",
        2,
        2,
        "The character at a UTF-16 index. `(.charAt \"abc\" 1)` => `\"b\"`.",
        char_at,
    );
    r.add(
        ".indexOf",
        "[s sub from?]",
        2,
        3,
        "Java's String.indexOf: the index of sub, or -1. `(.indexOf \"hello\" \"l\")` => `2`.",
        index_of,
    );
    r.add(".lastIndexOf", "[s sub from?]", 2, 3, "Java's String.lastIndexOf: the last index of sub, or -1. `(.lastIndexOf \"hello\" \"l\")` => `3`.", last_index_of);
    r.add(
        ".contains",
        "[s sub]",
        2,
        2,
        "True if s contains sub. `(.contains \"hello\" \"ell\")` => `true`.",
        contains,
    );
    r.add(
        ".startsWith",
        "[s prefix]",
        2,
        2,
        "True if s starts with prefix. `(.startsWith \"hello\" \"he\")` => `true`.",
        starts_with,
    );
    r.add(
        ".endsWith",
        "[s suffix]",
        2,
        2,
        "True if s ends with suffix. `(.endsWith \"hello\" \"lo\")` => `true`.",
        ends_with,
    );
    r.add(".split", "[s regex limit?]", 2, 3, "Java's String.split: the separator is a regex string. `(.split \"a1b2c\" \"\\\\d\")` => `[\"a\" \"b\" \"c\"]`.", split);
    r.add(".replace", "[s target replacement]", 3, 3, "Java's String.replace: every literal occurrence. `(.replace \"a.b.c\" \".\" \"-\")` => `\"a-b-c\"`.", replace);
    r.add(".replaceAll", "[s regex replacement]", 3, 3, "Java's String.replaceAll: a regex string, `$1` for groups. `(.replaceAll \"a1b22\" \"\\\\d+\" \"#\")` => `\"a#b#\"`.", replace_all);
    r.add(".matches", "[s regex]", 2, 2, "True if the whole string matches the regex string. `(.matches \"123\" \"\\\\d+\")` => `true`.", matches);
    r.add(
        ".concat",
        "[s other]",
        2,
        2,
        "The two strings joined. `(.concat \"ab\" \"cd\")` => `\"abcd\"`.",
        concat,
    );
    r.add(
        ".equals",
        "[x y]",
        2,
        2,
        "Equality, as `=`. `(.equals \"a\" \"a\")` => `true`.",
        equals,
    );
    r.add(
        ".equalsIgnoreCase",
        "[s other]",
        2,
        2,
        "Equality ignoring case. `(.equalsIgnoreCase \"ab\" \"AB\")` => `true`.",
        equals_ignore_case,
    );
    r.add(
        ".toString",
        "[x]",
        1,
        1,
        "The text of a value, as `str` gives it. `(.toString 42)` => `\"42\"`.",
        to_string,
    );
}
