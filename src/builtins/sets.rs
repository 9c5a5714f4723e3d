//! Set algebra and the relational helpers of `clojure.set` (`union`,
//! `select`, `rename-keys`, ...), plus `disj`.
//!
//! `select` and `project` are only reachable as `clojure.set/select` or
//! `set/select`, since the bare names are not in `clojure.core` either.

use crate::error::Error;
use crate::eval::{EvalResult, Interp};
use crate::meter::metered;
use crate::value::{Map, Set, Value};

use super::core::{seq_items, type_error};
use super::{Registry, MANY};

/// A set argument: nil is the empty set, and vectors and lists are read
/// as the set of their items (Clojure's set functions are equally lenient).
fn as_set(who: &str, v: &Value) -> Result<Set, Error> {
    match v {
        Value::Set(s) => Ok((**s).clone()),
        Value::Nil => Ok(Set::new()),
        Value::Vector(_) | Value::List(_) => Ok(metered(seq_items(v, who)?.into_iter()).collect()),
        other => Err(type_error(who, "a set", other)),
    }
}

fn union(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let sets = args
        .iter()
        .map(|a| as_set("union", a))
        .collect::<Result<Vec<_>, _>>()?;
    let largest = (0..sets.len()).max_by_key(|&i| sets[i].len());
    let others = |skip: usize| sets.iter().enumerate().filter(move |&(i, _)| i != skip);
    // Many items: start from a copy of the largest set's table (no
    // rehashing of its items) with room for all the others' items.
    if let Some(big) = largest {
        let room: usize = others(big).map(|(_, s)| s.len()).sum();
        if let Some(mut out) = sets[big].flat_copy_with_room(room) {
            interp.check_size(out.len())?;
            for (_, set) in others(big) {
                out.extend(metered(set.iter()).cloned());
                interp.check_size(out.len())?;
            }
            return Ok(Value::set(out));
        }
    }
    // Small sets keep their order: the items of each set in turn.
    let mut out = Set::with_capacity(largest.map_or(0, |i| sets[i].len()));
    for set in &sets {
        out.extend(metered(set.iter()).cloned());
        interp.check_size(out.len())?;
    }
    Ok(Value::set(out))
}

fn intersection(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let mut sets = args
        .iter()
        .map(|a| as_set("intersection", a))
        .collect::<Result<Vec<_>, _>>()?;
    // Walk the smallest; look the items up in the others.
    sets.sort_by_key(Set::len);
    let (smallest, others) = sets.split_first().expect("arity checked");
    // The items found, then a set sized for exactly them.
    let kept: Vec<&Value> = metered(smallest.iter())
        .filter(|item| others.iter().all(|o| o.contains(item)))
        .collect();
    Ok(Value::set(metered(kept.into_iter()).cloned().collect()))
}

fn difference(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let first = as_set("difference", &args[0])?;
    let others = args[1..]
        .iter()
        .map(|a| as_set("difference", a))
        .collect::<Result<Vec<_>, _>>()?;
    let removed: usize = others.iter().map(Set::len).sum();
    if removed < first.len() / 4 {
        // A few items out of many: remove them from (a copy of) the first.
        let mut out = first;
        for item in metered(others.iter().flat_map(|o| o.iter())) {
            out.remove(item);
        }
        return Ok(Value::set(out));
    }
    // Otherwise keep what no other set holds, in one pass, then build a
    // set sized for exactly those items.
    let kept: Vec<&Value> = metered(first.iter())
        .filter(|item| !others.iter().any(|o| o.contains(item)))
        .collect();
    Ok(Value::set(metered(kept.into_iter()).cloned().collect()))
}

fn is_subset(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let (a, b) = (as_set("subset?", &args[0])?, as_set("subset?", &args[1])?);
    let holds = metered(a.iter()).all(|x| b.contains(x));
    Ok(Value::Bool(holds))
}

fn is_superset(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let (a, b) = (
        as_set("superset?", &args[0])?,
        as_set("superset?", &args[1])?,
    );
    let holds = metered(b.iter()).all(|x| a.contains(x));
    Ok(Value::Bool(holds))
}

fn disj(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    match &args[0] {
        Value::Set(s) => {
            let mut s = (**s).clone();
            for x in &args[1..] {
                s.remove(x);
            }
            Ok(Value::set(s))
        }
        Value::Nil => Ok(Value::Nil),
        other => Err(type_error("disj", "a set", other).into()),
    }
}

fn select(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let mut out = Set::new();
    for item in as_set("select", &args[1])?.iter() {
        if interp.call_truthy(&args[0], std::slice::from_ref(item))? {
            out.insert(item.clone());
        }
    }
    Ok(Value::set(out))
}

/// The maps of a relation (a set or sequence of maps), each cut down to
/// the given keys.
fn project(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let keys = seq_items(&args[1], "project")?;
    let mut out = Set::new();
    for rel in metered(seq_items(&args[0], "project")?.into_iter()) {
        let Value::Map(m) = &rel else {
            return Err(type_error("project", "a collection of maps", &rel).into());
        };
        let cut: Map = keys
            .iter()
            .filter_map(|k| m.get(k).map(|v| (k.clone(), v.clone())))
            .collect();
        out.insert(Value::map(cut));
    }
    Ok(Value::set(out))
}

/// Keys renamed by `kmap`; a renamed key overwrites an existing one, and
/// keys missing from the map are ignored, as in Clojure.
fn rename_keys(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let m = match &args[0] {
        Value::Map(m) => m,
        Value::Nil => return Ok(Value::Nil),
        other => return Err(type_error("rename-keys", "a map", other).into()),
    };
    let Value::Map(kmap) = &args[1] else {
        return Err(type_error("rename-keys", "a map of old keys to new keys", &args[1]).into());
    };
    let mut out = m.clone();
    for old in metered(kmap.keys()) {
        out.remove(old);
    }
    for (old, new) in metered(kmap.iter()) {
        if let Some(v) = m.get(old) {
            out.insert(new.clone(), v.clone());
        }
    }
    Ok(Value::map(out))
}

fn map_invert(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    match &args[0] {
        Value::Map(m) => Ok(Value::map(
            metered(m.iter())
                .map(|(k, v)| (v.clone(), k.clone()))
                .collect(),
        )),
        Value::Nil => Ok(Value::empty_map()),
        other => Err(type_error("map-invert", "a map", other).into()),
    }
}

pub(super) fn register(r: &mut Registry) {
    r.add(
        "union",
        "[& sets]",
        0,
        MANY,
        "The items in any of the sets. `(union #{1 2} #{2 3})` => `#{1 2 3}`.",
        union,
    );
    r.add(
        "intersection",
        "[s & sets]",
        1,
        MANY,
        "The items in every set. `(intersection #{1 2} #{2 3})` => `#{2}`.",
        intersection,
    );
    r.add(
        "difference",
        "[s & sets]",
        1,
        MANY,
        "The items of s in none of the other sets. `(difference #{1 2 3} #{2})` => `#{1 3}`.",
        difference,
    );
    r.add(
        "subset?",
        "[a b]",
        2,
        2,
        "True if every item of a is in b. `(subset? #{1} #{1 2})` => `true`.",
        is_subset,
    );
    r.add(
        "superset?",
        "[a b]",
        2,
        2,
        "True if a has every item of b. `(superset? #{1 2} #{1})` => `true`.",
        is_superset,
    );
    r.add(
        "disj",
        "[s & xs]",
        1,
        MANY,
        "The set without the items. `(disj #{1 2 3} 2)` => `#{1 3}`.",
        disj,
    );
    r.add(
        "clojure.set/select",
        "[pred s]",
        2,
        2,
        "The items of the set for which pred is truthy. `(set/select odd? #{1 2 3})` => `#{1 3}`.",
        select,
    );
    r.add("clojure.set/project", "[rel ks]", 2, 2, "The set of the relation's maps, each cut to the keys. `(set/project [{:a 1 :b 2}] [:a])` => `#{{:a 1}}`.", project);
    r.add("rename-keys", "[m kmap]", 2, 2, "The map with keys renamed as kmap says. `(rename-keys {:a 1 :b 2} {:a :x})` => `{:b 2, :x 1}`.", rename_keys);
    r.add(
        "map-invert",
        "[m]",
        1,
        1,
        "The map with keys and values swapped. `(map-invert {:a 1})` => `{1 :a}`.",
        map_invert,
    );
}
