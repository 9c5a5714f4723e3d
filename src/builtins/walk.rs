//! Tree walking, as in `clojure.walk`: `walk`, `prewalk`, `postwalk`,
//! the `-replace` variants and `keywordize-keys`/`stringify-keys`.
//!
//! Collections keep their kind (a list stays a list, a set a set); map
//! entries are visited as `[key value]` vectors. Nesting deeper than the
//! recursion limit is an error rather than a stack overflow.

use std::cell::Cell;

use crate::error::{Error, ErrorKind};
use crate::eval::{EvalResult, Interp};
use crate::meter::metered;
use crate::value::{ArcStr, Map, Set, Value};

use super::collections::conj_entry;
use super::Registry;

/// What a recursive walk does at each node.
enum Walker<'a> {
    Pre(&'a Value),
    Post(&'a Value),
    /// Replace nodes that are keys of the map, before (`true`) or after
    /// visiting children.
    Replace(&'a Map, bool),
    /// Turn string map keys into keywords (`true`) or keyword keys into
    /// strings.
    Keys(bool),
}

/// The collection `v` with `f` applied to each child, or `v` itself when
/// it has no children.
fn rebuild(
    interp: &mut Interp<'_>,
    v: &Value,
    f: &mut dyn FnMut(&mut Interp<'_>, &Value) -> EvalResult,
) -> EvalResult {
    Ok(match v {
        Value::Vector(items) | Value::List(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in metered(items.iter()) {
                out.push(f(interp, item)?);
            }
            if matches!(v, Value::List(_)) {
                Value::list(out)
            } else {
                Value::vector(out)
            }
        }
        Value::Set(items) => {
            let mut out = Set::new();
            for item in metered(items.iter()) {
                out.insert(f(interp, item)?);
            }
            Value::set(out)
        }
        Value::Map(m) => {
            let mut out = Map::new();
            for (k, val) in metered(m.iter()) {
                let entry = f(interp, &Value::vector([k.clone(), val.clone()]))?;
                if !entry.is_nil() {
                    conj_entry(&mut out, &entry)?;
                }
            }
            Value::map(out)
        }
        other => other.clone(),
    })
}

fn walk_rec(
    interp: &mut Interp<'_>,
    w: &Walker<'_>,
    form: &Value,
    depth: usize,
    visited: &Cell<usize>,
) -> EvalResult {
    // Each node visited is a node built: shared structure is rebuilt once
    // per occurrence, so the count is bounded before memory is.
    visited.set(visited.get() + 1);
    if visited.get() > interp.limits.max_expanded {
        return Err(crate::meter::expanded_error(interp.limits.max_expanded).into());
    }
    if !crate::meter::work(1) {
        return Ok(Value::Nil);
    }
    if depth > interp.limits.max_depth {
        return Err(Error::new(
            ErrorKind::DepthLimit,
            format!(
                "The walked data is nested more than {} levels deep",
                interp.limits.max_depth
            ),
        )
        .into());
    }
    crate::value::deep(|| {
        let mut children = |i: &mut Interp<'_>, c: &Value| walk_rec(i, w, c, depth + 1, visited);
        match w {
            Walker::Pre(f) => {
                let x = interp.call(f, std::slice::from_ref(form))?;
                rebuild(interp, &x, &mut children)
            }
            Walker::Post(f) => {
                let y = rebuild(interp, form, &mut children)?;
                interp.call(f, &[y])
            }
            Walker::Replace(smap, true) => {
                let x = smap.get(form).cloned().unwrap_or_else(|| form.clone());
                rebuild(interp, &x, &mut children)
            }
            Walker::Replace(smap, false) => {
                let y = rebuild(interp, form, &mut children)?;
                Ok(smap.get(&y).cloned().unwrap_or(y))
            }
            Walker::Keys(to_keyword) => {
                let y = rebuild(interp, form, &mut children)?;
                Ok(rekey(&y, *to_keyword))
            }
        }
    })
}

/// A map with its string keys made keywords, or its keyword keys strings.
fn rekey(v: &Value, to_keyword: bool) -> Value {
    let Value::Map(m) = v else {
        return v.clone();
    };
    Value::map(
        metered(m.iter())
            .map(|(k, val)| {
                let k = match (k, to_keyword) {
                    (Value::Str(s), true) => Value::Keyword(ArcStr::clone(s)),
                    (Value::ShortStr(s), true) => Value::Keyword(ArcStr::from(s.as_str())),
                    (Value::Keyword(s), false) => Value::shared_str(s),
                    _ => k.clone(),
                };
                (k, val.clone())
            })
            .collect(),
    )
}

fn walk(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let (inner, outer) = (&args[0], &args[1]);
    let rebuilt = rebuild(interp, &args[2], &mut |i, c| {
        i.call(inner, std::slice::from_ref(c))
    })?;
    interp.call(outer, &[rebuilt])
}

fn prewalk(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    walk_rec(interp, &Walker::Pre(&args[0]), &args[1], 0, &Cell::new(0))
}

fn postwalk(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    walk_rec(interp, &Walker::Post(&args[0]), &args[1], 0, &Cell::new(0))
}

fn replacements<'a>(who: &str, v: &'a Value) -> Result<&'a Map, Error> {
    v.as_map()
        .ok_or_else(|| super::core::type_error(who, "a map of replacements", v))
}

fn prewalk_replace(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let smap = replacements("prewalk-replace", &args[0])?;
    walk_rec(
        interp,
        &Walker::Replace(smap, true),
        &args[1],
        0,
        &Cell::new(0),
    )
}

fn postwalk_replace(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let smap = replacements("postwalk-replace", &args[0])?;
    walk_rec(
        interp,
        &Walker::Replace(smap, false),
        &args[1],
        0,
        &Cell::new(0),
    )
}

fn keywordize_keys(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    walk_rec(interp, &Walker::Keys(true), &args[0], 0, &Cell::new(0))
}

fn stringify_keys(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    walk_rec(interp, &Walker::Keys(false), &args[0], 0, &Cell::new(0))
}

pub(super) fn register(r: &mut Registry) {
    r.add("walk", "[inner outer form]", 3, 3, "Apply inner to each child of a collection, rebuild it, and apply outer to the result. `(walk inc #(apply + %) [1 2 3])` => `9`.", walk);
    r.add("prewalk", "[f form]", 2, 2, "Replace every node by (f node), parents before their children. `(prewalk #(if (number? %) (inc %) %) [1 [2]])` => `[2 [3]]`.", prewalk);
    r.add("postwalk", "[f form]", 2, 2, "Replace every node by (f node), children before their parents. `(postwalk #(if (vector? %) (apply + %) %) [[1 2] [3]])` => `6`.", postwalk);
    r.add("prewalk-replace", "[smap form]", 2, 2, "Replace nodes that are keys of smap, top down. `(prewalk-replace {:a :b} [:a [:a]])` => `[:b [:b]]`.", prewalk_replace);
    r.add("postwalk-replace", "[smap form]", 2, 2, "Replace nodes that are keys of smap, bottom up. `(postwalk-replace {1 :one} [1 [2 1]])` => `[:one [2 :one]]`.", postwalk_replace);
    r.add("keywordize-keys", "[form]", 1, 1, "Every string map key, at any depth, made a keyword. `(keywordize-keys {\"a\" {\"b\" 1}})` => `{:a {:b 1}}`.", keywordize_keys);
    r.add("stringify-keys", "[form]", 1, 1, "Every keyword map key, at any depth, made a string. `(stringify-keys {:a 1})` => `{\"a\" 1}`.", stringify_keys);
}
