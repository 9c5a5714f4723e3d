//! JSON in and out, under the names the specification uses (Cheshire's):
//! `json/parse-string`, `json/generate-string`, `json/parse-lines`, and
//! the `clojure.data.json` spellings `json/read-str`/`json/write-str`.
//!
//! Parsing bad text gives nil (bad data is a signal, not a crash);
//! encoding a value JSON cannot represent is an error.

use serde_json::{Map as JsonMap, Value as Json};

use crate::error::{Error, ErrorKind};
use crate::eval::{EvalResult, Interp};
use crate::value::{ArcStr, Map, Value};

use super::core::{expect_str, type_error};
use super::Registry;

/// How object keys are read: as strings (the default), keywords, or
/// through a function.
enum Keys {
    Strings,
    Keywords,
    Fn(Value),
}

/// The key option after the text: `true` (keywords), a function, or
/// `:key-fn f` as `clojure.data.json` takes it.
fn key_option(who: &str, opts: &[Value]) -> Result<Keys, Error> {
    let f = match opts {
        [] => return Ok(Keys::Strings),
        [Value::Keyword(k), f] if k == "key-fn" => f,
        [f] => f,
        _ => {
            return Err(Error::arity(format!(
                "`{who}` takes the text and an optional key option (`true`, a function, or `:key-fn f`)"
            )))
        }
    };
    Ok(match f {
        Value::Bool(true) => Keys::Keywords,
        Value::Bool(false) | Value::Nil => Keys::Strings,
        Value::Native(n) if n.name == "keyword" => Keys::Keywords,
        f if f.is_fn() => Keys::Fn(f.clone()),
        other => return Err(type_error(who, "`true` or a key function", other)),
    })
}

fn from_json(interp: &mut Interp<'_>, json: &Json, keys: &Keys) -> EvalResult {
    Ok(match json {
        Json::Null => Value::Nil,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(s) => Value::str(s),
        Json::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                out.push(from_json(interp, item, keys)?);
            }
            Value::vector(out)
        }
        Json::Object(fields) => {
            let mut out = Map::new();
            for (k, v) in fields {
                let key = match keys {
                    Keys::Strings => Value::str(k),
                    Keys::Keywords => Value::Keyword(ArcStr::from(k.as_str())),
                    Keys::Fn(f) => interp.call(f, &[Value::str(k)])?,
                };
                out.insert(key, from_json(interp, v, keys)?);
            }
            Value::map(out)
        }
    })
}

/// Parse one JSON text; nil when it is not valid JSON.
/// Integers past 64 bits are refused, as `--data` refuses them (serde
/// reads them as floats, which silently changed their value).
fn parse_text(interp: &mut Interp<'_>, text: &str, keys: &Keys) -> EvalResult {
    match serde_json::from_str::<Json>(text) {
        Ok(json) => {
            let huge = crate::value::json_read::huge_integer_literals(text.as_bytes());
            if !huge.is_empty() {
                return Err(Error::new(
                    ErrorKind::Type,
                    "JSON text has an integer beyond the 64-bit integers \
                     (-9223372036854775808 to 9223372036854775807)",
                )
                .with_hint("write it as a string or a float in the JSON to keep it")
                .into());
            }
            from_json(interp, &json, keys)
        }
        Err(_) => Ok(Value::Nil),
    }
}

fn parse_string(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let keys = key_option("json/parse-string", &args[1..])?;
    match &args[0] {
        Value::Nil => Ok(Value::Nil),
        other => {
            let text = expect_str("json/parse-string", other)?;
            parse_text(interp, text, &keys)
        }
    }
}

/// One value per non-blank line; bad lines give nil.
fn parse_lines(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let text = expect_str("json/parse-lines", &args[0])?;
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        interp.tick()?;
        out.push(parse_text(interp, line, &Keys::Strings)?);
    }
    super::core::vector_result(interp, out)
}

/// A value as JSON, refusing what JSON cannot hold: functions, non-finite
/// numbers, and map keys that are not keywords, strings or integers (or
/// that collide once written as strings).
fn to_json(interp: &Interp<'_>, v: &Value, depth: usize) -> Result<Json, Error> {
    if depth > interp.limits.max_depth {
        return Err(Error::new(
            ErrorKind::DepthLimit,
            "`json/generate-string` input is nested too deeply",
        ));
    }
    if !crate::meter::work(1) {
        return Err(crate::meter::error()
            .unwrap_or_else(|| Error::new(ErrorKind::Interrupted, "Evaluation interrupted")));
    }
    crate::value::deep(|| {
        Ok(match v {
            Value::Nil => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Int(n) => Json::from(*n),
            Value::Float(f) => serde_json::Number::from_f64(*f)
                .map(Json::Number)
                .ok_or_else(|| not_encodable(v))?,
            Value::Str(s) | Value::Keyword(s) | Value::Symbol(s) => Json::String(s.to_string()),
            Value::ShortStr(s) => Json::String(s.to_string()),
            Value::Vector(items) | Value::List(items) => Json::Array(
                items
                    .iter()
                    .map(|x| to_json(interp, x, depth + 1))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Set(items) => Json::Array(
                items
                    .iter()
                    .map(|x| to_json(interp, x, depth + 1))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Map(m) => {
                let mut out = JsonMap::new();
                for (k, x) in m.iter() {
                    let key = json_key(k)?;
                    if out.contains_key(&key) {
                        return Err(Error::type_error(format!(
                            "`json/generate-string` found two map keys that are both written as \"{key}\""
                        )));
                    }
                    out.insert(key, to_json(interp, x, depth + 1)?);
                }
                Json::Object(out)
            }
            Value::Native(_)
            | Value::Fn(_)
            | Value::Var(_)
            | Value::Regex(_)
            | Value::Reduced(_) => return Err(not_encodable(v)),
        })
    })
}

fn not_encodable(v: &Value) -> Error {
    Error::type_error(format!(
        "`json/generate-string` cannot encode {} as JSON",
        described(v)
    ))
}

/// `float ##NaN`, but `a vector` rather than a bare type name.
fn described(v: &Value) -> String {
    let d = v.describe();
    if d == v.type_name() {
        format!("a {d}")
    } else {
        d
    }
}

fn json_key(k: &Value) -> Result<String, Error> {
    if let Some(name) = k.as_name() {
        return Ok(name.to_string());
    }
    match k {
        Value::Int(n) => Ok(n.to_string()),
        other => Err(Error::type_error(format!(
            "`json/generate-string` cannot use {} as a JSON object key",
            described(other)
        ))
        .with_hint("use keyword, string or integer keys")),
    }
}

/// `(json/generate-string x opts?)`; `{:pretty true}` indents the text.
fn generate_string(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let pretty = match args.get(1) {
        None | Some(Value::Nil) => false,
        Some(Value::Map(opts)) => opts
            .get_flexible(&Value::keyword("pretty"))
            .is_some_and(Value::truthy),
        Some(other) => {
            return Err(type_error("json/generate-string", "an options map", other).into())
        }
    };
    // Every item writes at least one character, so an input that expands
    // past the string limit could only fail later, after allocating.
    super::core::check_expanded(
        &args[0],
        interp.limits.max_collection,
        "`json/generate-string`",
    )?;
    let json = to_json(interp, &args[0], 0)?;
    let text = if pretty {
        serde_json::to_string_pretty(&json)
    } else {
        serde_json::to_string(&json)
    }
    .map_err(|e| Error::execution(format!("`json/generate-string` failed: {e}")))?;
    interp.check_size(text.len())?;
    Ok(Value::from(text))
}

pub(super) fn register(r: &mut Registry) {
    r.add("json/parse-string", "[s keys?]", 1, 3, "Parse JSON text; object keys stay strings unless the second argument is `true` (keywords) or a key function; nil for invalid JSON. `(json/parse-string \"{\\\"a\\\":[1,2]}\")` => `{\"a\" [1 2]}`.", parse_string);
    r.alias("json/read-str", "json/parse-string");
    r.add("json/parse-lines", "[s]", 1, 1, "Parse each non-blank line as JSON (nil for bad lines). `(json/parse-lines \"1\\n[2]\")` => `[1 [2]]`.", parse_lines);
    r.add("json/generate-string", "[x opts?]", 1, 2, "The value as JSON text (keywords as their names; `{:pretty true}` indents). `(json/generate-string {:a [1 nil]})` => `\"{\\\"a\\\":[1,null]}\"`.", generate_string);
    r.alias("json/write-str", "json/generate-string");
}
