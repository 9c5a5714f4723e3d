//! The JSON encoding of values inside turns and transcripts (DBG-003).
//!
//! Plain JSON cannot tell a keyword from a string, a list from a vector or
//! an integer-keyed map from a string-keyed one, so values are written in a
//! small tagged form that round-trips exactly:
//!
//! | value | JSON |
//! |---|---|
//! | `nil`, `true`, `42`, `1.5`, `"s"` | `null`, `true`, `42`, `1.5`, `"s"` |
//! | `[1 2]` (vector) | `[1, 2]` |
//! | `:k` | `{"kw": "k"}` |
//! | `sym` (quoted symbol) | `{"sym": "sym"}` |
//! | `(1 2)` (list) | `{"list": [1, 2]}` |
//! | `{:a 1}` | `{"map": [[{"kw": "a"}, 1]]}` (entries in order) |
//! | `#{1}` | `{"set": [1]}` |
//! | `##NaN`, `##Inf`, `##-Inf` | `{"float": "NaN"}`, `{"float": "Inf"}`, `{"float": "-Inf"}` |
//! | a builtin such as `inc` | `{"builtin": "inc"}` |
//! | any other function | `{"fn": {"name": "f", "params": "[x]"}}` |
//! | `#'x` | `{"var": "x"}` |
//! | `#"a+"` | `{"regex": "a+"}` |
//!
//! Data round-trips exactly. Functions are code, not data: a closure read
//! back prints, labels and shows its parameters as before, but calling it
//! is an error. This module does no I/O.

use std::sync::Arc;

use serde::de::{self, Deserializer};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value as Json};

use crate::value::{ArcStr, Function, FunctionKind, Map, Set, Value};

/// A closure restored from JSON: it keeps the name and parameters for
/// display, and no code.
struct RestoredCode;

/// Items (shared parts counted each time) a value may have to be
/// encoded; a larger one is recorded as `{"elided": description}`.
const MAX_ENCODED_ITEMS: usize = 16 * 1024 * 1024;

/// The tagged JSON form of a value. Values that share structure can be
/// astronomically large once expanded: one of more than 16 Mi items is
/// recorded as `{"elided": "a vector of 2 items, more than ... expanded:
/// too large to record"}`
/// (read back as that string).
pub fn encode(v: &Value) -> Json {
    let collection = matches!(
        v,
        Value::Vector(_) | Value::List(_) | Value::Map(_) | Value::Set(_) | Value::Reduced(_)
    );
    if collection && crate::meter::expanded_size(v, MAX_ENCODED_ITEMS).is_none() {
        let len = match v {
            Value::Vector(items) | Value::List(items) => items.len(),
            Value::Map(m) => m.len(),
            Value::Set(items) => items.len(),
            _ => 1,
        };
        return json!({ "elided": format!(
            "a {} of {len} items, more than {MAX_ENCODED_ITEMS} expanded: too large to record",
            v.type_name()
        ) });
    }
    encode_node(v)
}

fn encode_node(v: &Value) -> Json {
    match v {
        Value::Nil => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(n) => Json::from(*n),
        Value::Float(f) => match serde_json::Number::from_f64(*f) {
            Some(n) => Json::Number(n),
            None if f.is_nan() => json!({ "float": "NaN" }),
            None if *f > 0.0 => json!({ "float": "Inf" }),
            None => json!({ "float": "-Inf" }),
        },
        Value::Str(s) => Json::String(s.to_string()),
        Value::ShortStr(s) => Json::String(s.to_string()),
        Value::Keyword(k) => json!({ "kw": k.as_str() }),
        Value::Symbol(s) => json!({ "sym": s.as_str() }),
        Value::Vector(items) => Json::Array(items.iter().map(encode_node).collect()),
        Value::List(items) => json!({ "list": items.iter().map(encode_node).collect::<Vec<_>>() }),
        Value::Map(m) => {
            let entries: Vec<Json> = m
                .iter()
                .map(|(k, v)| Json::Array(vec![encode_node(k), encode_node(v)]))
                .collect();
            json!({ "map": entries })
        }
        Value::Set(items) => json!({ "set": items.iter().map(encode_node).collect::<Vec<_>>() }),
        Value::Native(n) => json!({ "builtin": n.name }),
        Value::Fn(f) => {
            let mut fields = serde_json::Map::new();
            fields.insert("name".into(), Json::String(f.label().to_string()));
            if let Some(params) = f.params() {
                fields.insert("params".into(), Json::String(params.to_string()));
            }
            json!({ "fn": fields })
        }
        Value::Var(name) => json!({ "var": name.as_str() }),
        Value::Regex(r) => json!({ "regex": r.source }),
        Value::Reduced(inner) => json!({ "reduced": encode_node(inner) }),
    }
}

/// Read a value back from its tagged JSON form.
pub fn decode(json: &Json) -> Result<Value, String> {
    Ok(match json {
        Json::Null => Value::Nil,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) if !n.is_f64() => Value::Int(i),
            _ => Value::Float(n.as_f64().ok_or("number out of range")?),
        },
        Json::String(s) => Value::str(s),
        Json::Array(items) => {
            Value::vector(items.iter().map(decode).collect::<Result<Vec<_>, _>>()?)
        }
        Json::Object(fields) => {
            let mut it = fields.iter();
            let (Some((tag, body)), None) = (it.next(), it.next()) else {
                return Err(format!(
                    "expected an object with one tag such as `kw` or `map`, got {} fields",
                    fields.len()
                ));
            };
            decode_tagged(tag, body)?
        }
    })
}

fn decode_tagged(tag: &str, body: &Json) -> Result<Value, String> {
    let text = || {
        body.as_str()
            .ok_or_else(|| format!("the `{tag}` tag expects a string"))
    };
    let items = || -> Result<Vec<Value>, String> {
        body.as_array()
            .ok_or_else(|| format!("the `{tag}` tag expects an array"))?
            .iter()
            .map(decode)
            .collect()
    };
    Ok(match tag {
        "kw" => Value::keyword(text()?),
        "sym" => Value::Symbol(ArcStr::from(text()?)),
        "var" => Value::Var(ArcStr::from(text()?)),
        "list" => Value::list(items()?),
        "set" => Value::set(items()?.into_iter().collect::<Set>()),
        "map" => {
            let entries = body.as_array().ok_or("the `map` tag expects an array")?;
            let mut m = Map::new();
            for e in entries {
                match e.as_array().map(Vec::as_slice) {
                    Some([k, v]) => m.insert(decode(k)?, decode(v)?),
                    _ => return Err("map entries must be `[key, value]` pairs".into()),
                }
            }
            Value::map(m)
        }
        "float" => Value::Float(match text()? {
            "NaN" => f64::NAN,
            "Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            other => return Err(format!("unknown special float `{other}`")),
        }),
        "builtin" => {
            let name = text()?;
            match crate::builtins::registry().lookup(name) {
                Some(b) => Value::Native(&b.native),
                None => restored_fn(name, None),
            }
        }
        "reduced" => Value::Reduced(std::sync::Arc::new(decode(body)?)),
        // A value too large to record stands for itself as its description.
        "elided" => Value::str(text()?),
        "fn" => {
            let name = body.get("name").and_then(Json::as_str).unwrap_or("fn");
            let params = body.get("params").and_then(Json::as_str);
            restored_fn(name, params)
        }
        "regex" => {
            let source = text()?;
            crate::builtins::compile_regex(source).map_err(|e| e.message().to_string())?
        }
        other => return Err(format!("unknown value tag `{other}`")),
    })
}

fn restored_fn(name: &str, params: Option<&str>) -> Value {
    Value::Fn(Arc::new(Function {
        name: Some(ArcStr::from(name)),
        kind: FunctionKind::Closure {
            params: ArcStr::from(params.unwrap_or("[& args]")),
            code: Box::new(RestoredCode),
        },
    }))
}

/// `#[serde(with = "value")]` for a `Value` field.
pub mod value {
    use super::*;

    pub fn serialize<S: Serializer>(v: &Value, s: S) -> Result<S::Ok, S::Error> {
        encode(v).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        decode(&Json::deserialize(d)?).map_err(de::Error::custom)
    }
}

/// `#[serde(with = "option")]` for an `Option<Value>` field.
pub mod option {
    use super::*;

    pub fn serialize<S: Serializer>(v: &Option<Value>, s: S) -> Result<S::Ok, S::Error> {
        v.as_ref().map(encode).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
        match Option::<Json>::deserialize(d)? {
            None => Ok(None),
            Some(j) => decode(&j).map(Some).map_err(de::Error::custom),
        }
    }
}

/// `#[serde(with = "vec")]` for a `Vec<Value>` field.
pub mod vec {
    use super::*;

    pub fn serialize<S: Serializer>(v: &[Value], s: S) -> Result<S::Ok, S::Error> {
        v.iter().map(encode).collect::<Vec<_>>().serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Value>, D::Error> {
        Vec::<Json>::deserialize(d)?
            .iter()
            .map(|j| decode(j).map_err(de::Error::custom))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::eval_str;
    use crate::value::pr_str;

    fn round_trip(src: &str) {
        let v = eval_str(src).unwrap();
        let text = serde_json::to_string(&encode(&v)).unwrap();
        let back = decode(&serde_json::from_str(&text).unwrap()).unwrap();
        assert_eq!(pr_str(&back), pr_str(&v), "{src} via {text}");
        assert_eq!(back, v, "{src} via {text}");
        // Vectors and lists are equal in Clojure; the encoding keeps them apart.
        assert_eq!(back.type_name(), v.type_name());
    }

    #[test]
    fn data_round_trips_exactly() {
        for src in [
            "nil",
            "true",
            "-7",
            "1.0",
            "1.5e300",
            "\"a \\\"b\\\"\"",
            ":k",
            "'sym",
            "[1 [2.0 :x] \"y\"]",
            "'(1 2)",
            "{:a 1 \"b\" [2] 3 {:c #{1 2}}}",
            "(zipmap (range 20) (range 20))",
            "##NaN",
            "##-Inf",
        ] {
            if src == "##NaN" {
                let v = eval_str(src).unwrap();
                let back = decode(&encode(&v)).unwrap();
                assert!(matches!(back, Value::Float(f) if f.is_nan()));
                continue;
            }
            round_trip(src);
        }
    }

    #[test]
    fn functions_keep_their_look_but_not_their_code() {
        let v = eval_str("(fn add [a b] (+ a b))").unwrap();
        let back = decode(&encode(&v)).unwrap();
        assert_eq!(pr_str(&back), pr_str(&v));
        let Value::Fn(f) = &back else { panic!() };
        assert_eq!(f.params(), Some("[a b]"));
        let inc = eval_str("inc").unwrap();
        assert_eq!(decode(&encode(&inc)).unwrap(), inc);
    }

    #[test]
    fn values_too_large_once_expanded_are_elided() {
        let v = eval_str("(loop [x [1] i 0] (if (< i 40) (recur [x x] (inc i)) x))").unwrap();
        let json = encode(&v);
        assert_eq!(
            json,
            serde_json::json!({"elided": "a vector of 2 items, more than 16777216 expanded: too large to record"})
        );
        assert!(
            matches!(&decode(&json).unwrap(), Value::Str(s) if s.starts_with("a vector of 2 items"))
        );
    }

    #[test]
    fn malformed_json_is_an_error_not_a_panic() {
        for text in [
            r#"{"a": 1, "b": 2}"#,
            r#"{"nope": 1}"#,
            r#"{"map": [[1]]}"#,
            r#"{"kw": 1}"#,
        ] {
            let j: Json = serde_json::from_str(text).unwrap();
            assert!(decode(&j).is_err(), "{text}");
        }
    }
}
