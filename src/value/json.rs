//! The bridge between PTC-Lisp values and JSON (for `--data` files, tool
//! arguments and results, transcripts).

use serde_json::Value as Json;

use super::{print_str, ArcStr, Map, Value};

/// JSON to a value: objects become maps with keyword keys (field order
/// kept while the map is small), arrays vectors, integral numbers integers
/// (falling back to floats beyond the 64-bit range), other numbers floats.
pub fn from_json(json: &Json) -> Value {
    match json {
        Json::Null => Value::Nil,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(s) => Value::str(s),
        Json::Array(items) => Value::vector(items.iter().map(from_json)),
        Json::Object(fields) => Value::map(
            fields
                .iter()
                .map(|(k, v)| (Value::Keyword(ArcStr::from(k.as_str())), from_json(v)))
                .collect::<Map>(),
        ),
    }
}

/// Nodes a JSON conversion may produce when no program's size limit is
/// in force (writing a transcript after the run, say).
const UNMETERED_MAX_NODES: usize = 16 * 1024 * 1024;

/// A value to JSON: keywords become strings (without the colon), sets and
/// lists arrays, map keys strings (non-string keys printed with `str`),
/// non-finite floats `null`, functions and other opaque values their
/// printed form.
///
/// Shared structure is expanded by JSON, so the size is checked first:
/// inside a program, a value over the expansion limit stops the program
/// with that limit's error; outside one, a value of more than 16 Mi
/// items becomes a string saying so.
pub fn to_json(v: &Value) -> Json {
    let collection = matches!(
        v,
        Value::Vector(_) | Value::List(_) | Value::Map(_) | Value::Set(_) | Value::Reduced(_)
    );
    if collection {
        let limit = crate::meter::max_expanded().unwrap_or(UNMETERED_MAX_NODES);
        if crate::meter::expanded_size(v, limit).is_none() {
            crate::meter::trip_expanded();
            return Json::String(format!(
                "<a {} too large for JSON: more than {limit} items>",
                v.type_name()
            ));
        }
    }
    to_json_node(v)
}

/// True when [`to_json`] of `v` is faithful up to its documented mapping
/// (keywords become strings, sets and lists arrays): no functions,
/// regexes or vars, no infinite or NaN floats, and map keys that are
/// strings or keywords.
///
/// A value nested deeper than [`MAX_JSON_DEPTH`], or one that would
/// expand to more items than [`to_json`] writes, has none either. The
/// walk visits each distinct collection once, so a value that shares
/// structure (2^40 leaves in 41 nodes) is answered at once.
pub fn has_json_form(v: &Value) -> bool {
    let limit = crate::meter::max_expanded().unwrap_or(UNMETERED_MAX_NODES);
    let mut sizes = std::collections::HashMap::with_hasher(super::FixedState::default());
    json_size(v, 0, &mut sizes).is_some_and(|n| n <= limit)
}

/// Values nested deeper than this have no JSON form here: writing (and
/// freeing) a JSON tree recurses once per level, and a program can build
/// a vector two million levels deep in a fraction of a second.
pub const MAX_JSON_DEPTH: usize = 1000;

/// The number of JSON nodes `v` expands to, if it has a JSON form, at
/// nesting `depth`; `sizes` remembers the answer for each collection
/// (by address) already walked.
fn json_size(
    v: &Value,
    depth: usize,
    sizes: &mut std::collections::HashMap<usize, usize, super::FixedState>,
) -> Option<usize> {
    let address = match v {
        Value::Vector(items) | Value::List(items) => std::sync::Arc::as_ptr(items) as usize,
        Value::Set(items) => std::sync::Arc::as_ptr(items) as usize,
        Value::Map(m) => m.address(),
        Value::Reduced(inner) => {
            return (depth < MAX_JSON_DEPTH)
                .then(|| super::deep(|| json_size(inner, depth + 1, sizes)))
                .flatten()
        }
        Value::Nil
        | Value::Bool(_)
        | Value::Int(_)
        | Value::Str(_)
        | Value::ShortStr(_)
        | Value::Keyword(_)
        | Value::Symbol(_) => return Some(1),
        Value::Float(f) => return f.is_finite().then_some(1),
        Value::Native(_) | Value::Fn(_) | Value::Var(_) | Value::Regex(_) => return None,
    };
    if depth >= MAX_JSON_DEPTH {
        return None;
    }
    if let Some(&n) = sizes.get(&address) {
        return Some(n);
    }
    let add = |total: usize, n: Option<usize>| n.map(|n| total.saturating_add(n));
    let size = super::deep(|| match v {
        Value::Vector(items) | Value::List(items) => items
            .iter()
            .try_fold(1usize, |t, i| add(t, json_size(i, depth + 1, sizes))),
        Value::Set(items) => items
            .iter()
            .try_fold(1usize, |t, i| add(t, json_size(i, depth + 1, sizes))),
        Value::Map(m) => m.iter().try_fold(1usize, |t, (k, v)| {
            if !matches!(k, Value::Str(_) | Value::ShortStr(_) | Value::Keyword(_)) {
                return None;
            }
            add(t.saturating_add(1), json_size(v, depth + 1, sizes))
        }),
        _ => Some(1),
    })?;
    sizes.insert(address, size);
    Some(size)
}

fn to_json_node(v: &Value) -> Json {
    match v {
        Value::Nil => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(n) => Json::from(*n),
        Value::Float(f) => serde_json::Number::from_f64(*f)
            .map(Json::Number)
            .unwrap_or(Json::Null),
        Value::Str(s) | Value::Keyword(s) | Value::Symbol(s) => Json::String(s.to_string()),
        Value::ShortStr(s) => Json::String(s.to_string()),
        Value::Vector(items) | Value::List(items) => {
            super::deep(|| Json::Array(items.iter().map(to_json_node).collect()))
        }
        Value::Set(items) => Json::Array(items.iter().map(to_json_node).collect()),
        Value::Map(m) => super::deep(|| {
            Json::Object(
                m.iter()
                    .map(|(k, v)| (json_key(k), to_json_node(v)))
                    .collect(),
            )
        }),
        Value::Reduced(inner) => to_json_node(inner),
        Value::Native(_) | Value::Fn(_) | Value::Var(_) | Value::Regex(_) => {
            Json::String(print_str(v))
        }
    }
}

fn json_key(k: &Value) -> String {
    match k {
        Value::Str(s) | Value::Keyword(s) => s.to_string(),
        Value::ShortStr(s) => s.to_string(),
        other => print_str(other),
    }
}

/// The length in bytes of `v`'s compact JSON text (as [`to_json`] would
/// give it, to within a few bytes per number), if it is at most `max`
/// and nested at most [`MAX_JSON_DEPTH`] deep; `None` as soon as it is
/// known to be larger or deeper. Shared structure counts each time it
/// occurs, but every node visited adds at least a byte and the walk stops
/// past `max`, so it visits at most about `max` nodes, on a stack of its
/// own (any depth).
pub fn json_size_within(v: &Value, max: usize) -> Option<usize> {
    let mut total: usize = 0;
    let mut stack: Vec<(&Value, usize)> = vec![(v, 0)];
    let add = |total: &mut usize, n: usize| {
        *total = total.saturating_add(n);
        (*total <= max).then_some(())
    };
    while let Some((v, depth)) = stack.pop() {
        match v {
            Value::Nil => add(&mut total, 4)?,
            Value::Bool(_) => add(&mut total, 5)?,
            Value::Int(n) => add(&mut total, n.to_string().len())?,
            Value::Float(_) => add(&mut total, 24)?,
            Value::Str(s) | Value::Keyword(s) | Value::Symbol(s) => {
                add(&mut total, json_string_len(s))?
            }
            Value::ShortStr(s) => add(&mut total, json_string_len(s))?,
            Value::Vector(items) | Value::List(items) => {
                if depth >= MAX_JSON_DEPTH {
                    return None;
                }
                add(&mut total, 2 + items.len())?;
                stack.extend(items.iter().map(|i| (i, depth + 1)));
            }
            Value::Set(items) => {
                if depth >= MAX_JSON_DEPTH {
                    return None;
                }
                add(&mut total, 2 + items.len())?;
                stack.extend(items.iter().map(|i| (i, depth + 1)));
            }
            Value::Map(m) => {
                if depth >= MAX_JSON_DEPTH {
                    return None;
                }
                add(&mut total, 2 + 2 * m.len())?;
                for (k, item) in m.iter() {
                    let key = match k {
                        Value::Str(s) | Value::Keyword(s) => json_string_len(s),
                        Value::ShortStr(s) => json_string_len(s),
                        other => {
                            let mut text = String::new();
                            let room = max.saturating_sub(total).saturating_add(1);
                            super::write_str_bounded(&mut text, other, room);
                            json_string_len(&text)
                        }
                    };
                    add(&mut total, key)?;
                    stack.push((item, depth + 1));
                }
            }
            Value::Reduced(inner) => stack.push((inner, depth)),
            Value::Native(_) | Value::Fn(_) | Value::Var(_) | Value::Regex(_) => {
                let mut text = String::new();
                let room = max.saturating_sub(total).saturating_add(1);
                super::write_str_bounded(&mut text, v, room);
                add(&mut total, json_string_len(&text))?
            }
        }
    }
    Some(total)
}

/// Bytes of `s` as a JSON string, quotes and escapes included.
fn json_string_len(s: &str) -> usize {
    2 + s
        .bytes()
        .map(|b| match b {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
            0..=0x1f => 6,
            _ => 1,
        })
        .sum::<usize>()
}

/// [`to_json`] of `v` when its JSON text is at most `max` bytes and
/// [`MAX_JSON_DEPTH`] deep; else a string saying it was left out.
pub fn to_json_capped(v: &Value, max: usize) -> Json {
    match json_size_within(v, max) {
        Some(_) => to_json(v),
        None => Json::String(format!(
            "<a {} left out: its JSON is over {max} bytes or {MAX_JSON_DEPTH} levels deep>",
            v.type_name()
        )),
    }
}
