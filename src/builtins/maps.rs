//! Map functions: lookup, update, merge, keys and values.

use std::borrow::Cow;

use crate::error::Error;
use crate::eval::{EvalResult, Interp};
use crate::meter::metered;
use crate::value::{Map, Value};

use super::core::{get, get_in_ref, seq_items, seq_view, type_error, vector_result, Items};
use super::{Registry, MANY};

fn get_fn(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(get(
        &args[0],
        &args[1],
        args.get(2).cloned().unwrap_or(Value::Nil),
    ))
}

fn path_items(who: &str, path: &Value) -> Result<Vec<Value>, Error> {
    Ok(path_view(who, path)?.to_vec())
}

fn get_in(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let default = || args.get(2).cloned().unwrap_or(Value::Nil);
    let path = path_view("get-in", &args[1])?;
    // As in Clojure, the default is for a missing key, not a nil value.
    Ok(get_in_ref(&args[0], &path).map_or_else(default, Cow::into_owned))
}

/// The keys of a path, read in place when it is a vector.
fn path_view<'v>(who: &str, path: &'v Value) -> Result<Items<'v>, Error> {
    match path {
        Value::Vector(_) | Value::List(_) | Value::Nil => seq_view(path, who),
        other => Err(type_error(who, "a vector of keys as the path", other)),
    }
}

/// Associate in a map (nil is an empty map) or a vector (index at most
/// the length).
fn assoc_one(who: &str, coll: &Value, key: Value, value: Value) -> Result<Value, Error> {
    match coll {
        Value::Map(m) => Ok(Value::map(m.assoc(key, value))),
        Value::Nil => Ok(Value::map(Map::new().assoc(key, value))),
        Value::Vector(v) => match key {
            Value::Int(i) if i >= 0 && (i as usize) <= v.len() => {
                let mut v = (**v).clone();
                if i as usize == v.len() {
                    v.push_back(value);
                } else {
                    v.set(i as usize, value);
                }
                Ok(Value::from_vector(v))
            }
            other => Err(Error::execution(format!(
                "`{who}` index {} is out of range for a vector of {} items",
                crate::value::pr_str(&other),
                v.len()
            ))),
        },
        other => Err(type_error(who, "a map or vector", other)),
    }
}

fn assoc(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    if args.len().is_multiple_of(2) {
        return Err(Error::arity("`assoc` needs a map followed by key-value pairs").into());
    }
    let mut out = args[0].clone();
    for kv in args[1..].chunks(2) {
        out = assoc_one("assoc", &out, kv[0].clone(), kv[1].clone())?;
    }
    Ok(out)
}

/// `coll` with `value` at the end of `path`, in two loops (down to find
/// the collections along the path, up to rebuild them), so a path of any
/// length (`(repeat 100000 :a)`) needs no deep recursion.
fn assoc_in_path(coll: &Value, path: &[Value], value: Value) -> Result<Value, Error> {
    let mut along: Vec<Value> = Vec::with_capacity(path.len());
    let mut cur = coll.clone();
    for key in path {
        let inner = get(&cur, key, Value::Nil);
        along.push(std::mem::replace(&mut cur, inner));
    }
    let mut new = value;
    for (outer, key) in along.iter().zip(path).rev() {
        new = assoc_one("assoc-in", outer, key.clone(), new)?;
    }
    Ok(new)
}

fn assoc_in(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let path = path_items("assoc-in", &args[1])?;
    Ok(assoc_in_path(&args[0], &path, args[2].clone())?)
}

fn update(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let old = get(&args[0], &args[1], Value::Nil);
    let mut call_args = vec![old];
    call_args.extend(args[3..].iter().cloned());
    let new = interp.call(&args[2], &call_args)?;
    Ok(assoc_one("update", &args[0], args[1].clone(), new)?)
}

fn update_in(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let path = path_items("update-in", &args[1])?;
    if path.is_empty() {
        let mut call_args = vec![args[0].clone()];
        call_args.extend(args[3..].iter().cloned());
        return interp.call(&args[2], &call_args);
    }
    let old = path
        .iter()
        .fold(args[0].clone(), |cur, k| get(&cur, k, Value::Nil));
    let mut call_args = vec![old];
    call_args.extend(args[3..].iter().cloned());
    let new = interp.call(&args[2], &call_args)?;
    Ok(assoc_in_path(&args[0], &path, new)?)
}

fn dissoc(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    match &args[0] {
        Value::Map(m) => {
            let mut m = m.clone();
            for k in &args[1..] {
                m.remove(k);
            }
            Ok(Value::map(m))
        }
        Value::Nil => Ok(Value::Nil),
        other => Err(type_error("dissoc", "a map", other).into()),
    }
}

/// The merged map may not grow past the collection-size limit (each map
/// merged is under it; the sum of many need not be).
fn merge(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let mut out: Option<Map> = None;
    for a in args {
        match a {
            Value::Nil => {}
            Value::Map(m) => match &mut out {
                None => out = Some(m.clone()),
                Some(acc) => {
                    for (k, v) in metered(m.iter()) {
                        acc.insert(k.clone(), v.clone());
                    }
                    interp.check_size(acc.len())?;
                }
            },
            other => return Err(type_error("merge", "maps", other).into()),
        }
    }
    Ok(out.map(Value::map).unwrap_or(Value::Nil))
}

fn select_keys(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let keys = seq_items(&args[1], "select-keys")?;
    let mut out = Map::new();
    if let Value::Map(m) = &args[0] {
        for k in metered(keys.into_iter()) {
            if let Some(v) = m.get_flexible(&k) {
                out.insert(k, v.clone());
            }
        }
    }
    Ok(Value::map(out))
}

fn expect_map<'a>(who: &str, v: &'a Value) -> Result<Option<&'a Map>, Error> {
    match v {
        Value::Map(m) => Ok(Some(m)),
        Value::Nil => Ok(None),
        other => Err(type_error(who, "a map", other)),
    }
}

fn keys(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    match expect_map("keys", &args[0])? {
        Some(m) if !m.is_empty() => vector_result(interp, m.keys().cloned().collect()),
        _ => Ok(Value::Nil),
    }
}

fn vals(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    match expect_map("vals", &args[0])? {
        Some(m) if !m.is_empty() => vector_result(interp, m.values().cloned().collect()),
        _ => Ok(Value::Nil),
    }
}

fn entries(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    expect_map("entries", &args[0])?;
    vector_result(interp, seq_items(&args[0], "entries")?)
}

fn update_vals(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let mut out = Map::new();
    if let Some(m) = expect_map("update-vals", &args[0])? {
        for (k, v) in metered(m.iter()) {
            out.insert(k.clone(), interp.call(&args[1], std::slice::from_ref(v))?);
        }
    }
    Ok(Value::map(out))
}

fn update_keys(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let mut out = Map::new();
    if let Some(m) = expect_map("update-keys", &args[0])? {
        for (k, v) in metered(m.iter()) {
            out.insert(interp.call(&args[1], std::slice::from_ref(k))?, v.clone());
        }
    }
    Ok(Value::map(out))
}

fn hash_map(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    if !args.len().is_multiple_of(2) {
        return Err(Error::arity("`hash-map` needs an even number of arguments").into());
    }
    Ok(Value::map(
        args.chunks(2)
            .map(|kv| (kv[0].clone(), kv[1].clone()))
            .collect(),
    ))
}

fn zipmap(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let ks = seq_items(&args[0], "zipmap")?;
    let vs = seq_items(&args[1], "zipmap")?;
    Ok(Value::map(metered(ks.into_iter().zip(vs)).collect()))
}

fn merge_with(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let (f, maps) = args.split_first().expect("arity checked");
    let mut out: Option<Map> = None;
    for a in maps {
        let Some(m) = expect_map("merge-with", a)? else {
            continue;
        };
        let Some(acc) = &mut out else {
            out = Some(m.clone());
            continue;
        };
        for (k, v) in metered(m.iter()) {
            let merged = match acc.get(k) {
                Some(old) => interp.call(f, &[old.clone(), v.clone()])?,
                None => v.clone(),
            };
            acc.insert(k.clone(), merged);
        }
        interp.check_size(acc.len())?;
    }
    Ok(out.map(Value::map).unwrap_or(Value::Nil))
}

/// `(reduce-kv f init coll)` over a map's entries or a vector's indices.
fn reduce_kv(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let f = &args[0];
    let mut acc = args[1].clone();
    match &args[2] {
        Value::Map(m) => {
            for (k, v) in m.iter() {
                acc = interp.call(f, &[acc, k.clone(), v.clone()])?;
                if let Value::Reduced(done) = &acc {
                    return Ok((**done).clone());
                }
            }
        }
        Value::Vector(items) => {
            for (i, v) in items.iter().enumerate() {
                acc = interp.call(f, &[acc, Value::Int(i as i64), v.clone()])?;
                if let Value::Reduced(done) = &acc {
                    return Ok((**done).clone());
                }
            }
        }
        Value::Nil => {}
        other => return Err(type_error("reduce-kv", "a map or vector", other).into()),
    }
    Ok(acc)
}

/// The parts of a map entry, which is a `[key value]` vector here.
fn entry_part(who: &str, v: &Value, index: usize) -> EvalResult {
    match v.as_seq() {
        Some(kv) if kv.len() == 2 => Ok(kv[index].clone()),
        _ => Err(type_error(who, "a map entry (a [key value] pair)", v).into()),
    }
}

fn key(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    entry_part("key", &args[0], 0)
}

fn val(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    entry_part("val", &args[0], 1)
}

pub(super) fn register(r: &mut Registry) {
    r.add("get", "[m key default?]", 2, 3, "The value for key (keyword and string keys match each other), or default. `(get {:a 1} :a)` => `1`.", get_fn);
    r.add(
        "get-in",
        "[m path default?]",
        2,
        3,
        "The value at a path of keys, or default. `(get-in {:a {:b 1}} [:a :b])` => `1`.",
        get_in,
    );
    r.add(
        "assoc",
        "[m k v & kvs]",
        3,
        MANY,
        "The map with keys set. `(assoc {:a 1} :b 2)` => `{:a 1, :b 2}`.",
        assoc,
    );
    r.add("assoc-in", "[m path v]", 3, 3, "The map with the value at a path set, creating maps as needed. `(assoc-in {} [:a :b] 1)` => `{:a {:b 1}}`.", assoc_in);
    r.add(
        "update",
        "[m k f & args]",
        3,
        MANY,
        "The map with (f old-value args...) at key. `(update {:n 1} :n inc)` => `{:n 2}`.",
        update,
    );
    r.add(
        "update-in",
        "[m path f & args]",
        3,
        MANY,
        "Like update, at a path. `(update-in {:a {:b 1}} [:a :b] inc)` => `{:a {:b 2}}`.",
        update_in,
    );
    r.add(
        "dissoc",
        "[m & ks]",
        1,
        MANY,
        "The map without the keys. `(dissoc {:a 1 :b 2} :b)` => `{:a 1}`.",
        dissoc,
    );
    r.add("merge", "[& maps]", 0, MANY, "Maps merged left to right, later keys win. `(merge {:a 1} {:a 2 :b 3})` => `{:a 2, :b 3}`.", merge);
    r.add("select-keys", "[m keys]", 2, 2, "A map of only the given keys that are present. `(select-keys {:a 1 :b 2} [:a])` => `{:a 1}`.", select_keys);
    r.add(
        "keys",
        "[m]",
        1,
        1,
        "The keys of a map, or nil if empty. `(keys {:a 1 :b 2})` => `[:a :b]`.",
        keys,
    );
    r.add(
        "vals",
        "[m]",
        1,
        1,
        "The values of a map, or nil if empty. `(vals {:a 1 :b 2})` => `[1 2]`.",
        vals,
    );
    r.add(
        "entries",
        "[m]",
        1,
        1,
        "The [key value] pairs of a map. `(entries {:a 1})` => `[[:a 1]]`.",
        entries,
    );
    r.add(
        "update-vals",
        "[m f]",
        2,
        2,
        "The map with f applied to every value. `(update-vals {:a 1} inc)` => `{:a 2}`.",
        update_vals,
    );
    r.add(
        "update-keys",
        "[m f]",
        2,
        2,
        "The map with f applied to every key. `(update-keys {:a 1} name)` => `{\"a\" 1}`.",
        update_keys,
    );
    r.add(
        "hash-map",
        "[& kvs]",
        0,
        MANY,
        "A map of the key-value arguments. `(hash-map :a 1)` => `{:a 1}`.",
        hash_map,
    );
    r.add(
        "zipmap",
        "[keys vals]",
        2,
        2,
        "A map pairing keys with values. `(zipmap [:a :b] [1 2])` => `{:a 1, :b 2}`.",
        zipmap,
    );
    r.alias("array-map", "hash-map");
    r.add("merge-with", "[f & maps]", 1, MANY, "Merge maps left to right, combining the values of a repeated key with (f old new). `(merge-with + {:a 1} {:a 2 :b 3})` => `{:a 3, :b 3}`.", merge_with);
    r.add("reduce-kv", "[f init coll]", 3, 3, "Reduce a map with (f acc key value), or a vector with (f acc index item). `(reduce-kv (fn [acc k v] (+ acc v)) 0 {:a 1 :b 2})` => `3`.", reduce_kv);
    r.add(
        "key",
        "[entry]",
        1,
        1,
        "The key of a map entry. `(key (first {:a 1}))` => `:a`.",
        key,
    );
    r.add(
        "val",
        "[entry]",
        1,
        1,
        "The value of a map entry. `(val (first {:a 1}))` => `1`.",
        val,
    );
}
