//! Sequence and collection functions. Sequence results are vectors (there
//! are no lazy sequences); maps and strings are seen as sequences of
//! `[key value]` pairs and of one-character strings.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use crate::error::Error;
use crate::eval::{EvalResult, Interp, PrimOp};
use crate::meter::metered;
use crate::value::{compare, FixedState, ItemState, Map, Value};

use super::core::{expect_int, field_ref, get, seq_items, seq_view, type_error, vector_result};
use super::{Registry, MANY};

fn count(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let n = match &args[0] {
        Value::Nil => 0,
        Value::Vector(v) | Value::List(v) => v.len(),
        Value::Map(m) => m.len(),
        Value::Set(s) => s.len(),
        Value::Str(s) => s.chars().count(),
        Value::ShortStr(s) => s.chars().count(),
        other => return Err(type_error("count", "a collection or string", other).into()),
    };
    Ok(Value::Int(n as i64))
}

/// Sets have no order: `first`, `nth` and friends refuse them (spec §3.9).
pub(super) fn ordered_items(who: &str, v: &Value) -> Result<Vec<Value>, Error> {
    match v {
        Value::Set(_) => Err(Error::type_error(format!(
            "`{who}` does not work on sets, which are unordered; use `(sort s)` or `(vec s)` first"
        ))),
        other => seq_items(other, who),
    }
}

pub(super) fn first(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(match &args[0] {
        Value::Vector(v) | Value::List(v) => v.front().cloned().unwrap_or(Value::Nil),
        other => ordered_items("first", other)?
            .into_iter()
            .next()
            .unwrap_or(Value::Nil),
    })
}

fn second(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    if let Value::Vector(v) | Value::List(v) = &args[0] {
        return Ok(v.get(1).cloned().unwrap_or(Value::Nil));
    }
    Ok(ordered_items("second", &args[0])?
        .into_iter()
        .nth(1)
        .unwrap_or(Value::Nil))
}

fn last(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(match &args[0] {
        Value::Vector(v) | Value::List(v) => v.back().cloned().unwrap_or(Value::Nil),
        other => ordered_items("last", other)?.pop().unwrap_or(Value::Nil),
    })
}

fn rest(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    if let Value::Vector(v) | Value::List(v) = &args[0] {
        if v.is_empty() {
            return Ok(Value::vector([]));
        }
        return Ok(Value::from_vector(v.skip(1)));
    }
    let items = ordered_items("rest", &args[0])?;
    vector_result(interp, items.into_iter().skip(1).collect())
}

pub(super) fn next(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let r = rest(interp, args)?;
    Ok(match &r {
        Value::Vector(v) if v.is_empty() => Value::Nil,
        _ => r,
    })
}

fn nth(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let i = expect_int("nth", &args[1])?;
    let default = args.get(2).cloned().unwrap_or(Value::Nil);
    match &args[0] {
        Value::Vector(_) | Value::List(_) | Value::Str(_) | Value::ShortStr(_) | Value::Nil => {
            Ok(get(&args[0], &Value::Int(i), default))
        }
        other => Err(type_error("nth", "a vector, list or string", other).into()),
    }
}

fn take(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let n = expect_int("take", &args[0])?.max(0) as usize;
    if let Value::Vector(v) | Value::List(v) = &args[1] {
        return Ok(Value::from_vector(v.take(n.min(v.len()))));
    }
    let items = ordered_items("take", &args[1])?;
    vector_result(interp, items.into_iter().take(n).collect())
}

/// `(take n (range start end step))`, which the analyzer rewrites to this
/// (the name cannot be written in a program). A zero step is Clojure's
/// endless repetition of `start` (empty when `start` is `end`), which
/// `take` bounds (specification §8.1: `(take 3 (range 1 5 0))` is
/// `[1 1 1]`); any other step is `range` followed by `take`.
fn take_range(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let n = expect_int("take", &args[0])?.max(0) as usize;
    let bounds = &args[1..];
    let zero_step = match bounds {
        [_, _, Value::Int(0)] => true,
        [_, _, Value::Float(f)] => *f == 0.0,
        _ => false,
    };
    if zero_step && bounds[0].is_number() && bounds[1].is_number() {
        if bounds[0] == bounds[1] {
            return Ok(Value::vector([]));
        }
        interp.check_size(n)?;
        return Ok(Value::vector(std::iter::repeat_n(bounds[0].clone(), n)));
    }
    let all = range(interp, bounds)?;
    take(interp, &[args[0].clone(), all])
}

fn drop(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let n = expect_int("drop", &args[0])?.max(0) as usize;
    if let Value::Vector(v) | Value::List(v) = &args[1] {
        return Ok(Value::from_vector(v.skip(n.min(v.len()))));
    }
    let items = ordered_items("drop", &args[1])?;
    vector_result(interp, items.into_iter().skip(n).collect())
}

fn take_while(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let mut out = Vec::new();
    for item in seq_items(&args[1], "take-while")? {
        if !interp.call_truthy(&args[0], std::slice::from_ref(&item))? {
            break;
        }
        out.push(item);
    }
    vector_result(interp, out)
}

fn drop_while(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let items = seq_items(&args[1], "drop-while")?;
    let mut start = items.len();
    for (i, item) in items.iter().enumerate() {
        if !interp.call_truthy(&args[0], std::slice::from_ref(item))? {
            start = i;
            break;
        }
    }
    vector_result(interp, items[start..].to_vec())
}

/// `(map f)` and friends are transducers in Clojure; without a
/// collection they are an error that says so.
pub(super) fn no_transducer(who: &str, args: &[Value]) -> EvalResult<()> {
    if args.len() > 1 {
        return Ok(());
    }
    Err(Error::unsupported(format!(
        "Transducers are not supported: `({who} f)` needs a collection argument"
    ))
    .with_hint(format!(
        "call it on the collection directly, e.g. `({who} f coll)` or `(->> coll ({who} f))`"
    ))
    .into())
}

fn filter(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    no_transducer("filter", args)?;
    let mut out = Vec::new();
    for item in seq_view(&args[1], "filter")?.iter() {
        if interp.call_truthy(&args[0], std::slice::from_ref(item))? {
            out.push(item.clone());
        }
    }
    vector_result(interp, out)
}

fn remove(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    no_transducer("remove", args)?;
    let mut out = Vec::new();
    for item in seq_view(&args[1], "remove")?.iter() {
        if !interp.call_truthy(&args[0], std::slice::from_ref(item))? {
            out.push(item.clone());
        }
    }
    vector_result(interp, out)
}

/// Clojure's associative `(find coll key)` (the current specification,
/// §8.1): the `[key value]` entry of a map, the `[index item]` of a
/// vector, nil when absent or for a nil collection. The 6da99ff0
/// predicate search `(find pred coll)` stays when the first argument is a
/// function, keyword or set, which no associative lookup takes.
fn find(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    match &args[0] {
        Value::Map(m) => {
            return Ok(match m.get(&args[1]) {
                Some(v) => Value::vector([args[1].clone(), v.clone()]),
                None => Value::Nil,
            })
        }
        Value::Vector(items) | Value::List(items) => {
            return Ok(match &args[1] {
                Value::Int(i) => usize::try_from(*i)
                    .ok()
                    .and_then(|i| items.get(i).map(|v| (i, v)))
                    .map_or(Value::Nil, |(i, v)| {
                        Value::vector([Value::Int(i as i64), v.clone()])
                    }),
                _ => Value::Nil,
            })
        }
        Value::Nil => return Ok(Value::Nil),
        Value::Native(_) | Value::Fn(_) | Value::Keyword(_) | Value::Set(_) => {}
        other => {
            return Err(type_error(
                "find",
                "a map or vector (or a predicate and a collection)",
                other,
            )
            .into())
        }
    }
    for item in seq_items(&args[1], "find")? {
        if interp.call_truthy(&args[0], std::slice::from_ref(&item))? {
            return Ok(item);
        }
    }
    Ok(Value::Nil)
}

fn map(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    no_transducer("map", args)?;
    let f = &args[0];
    if args.len() == 2 {
        let items = seq_view(&args[1], "map")?;
        let mut out = Vec::with_capacity(items.len());
        for item in items.iter() {
            out.push(interp.call(f, std::slice::from_ref(item))?);
        }
        return vector_result(interp, out);
    }
    let colls = args[1..]
        .iter()
        .map(|c| seq_items(c, "map"))
        .collect::<Result<Vec<_>, _>>()?;
    let n = colls.iter().map(Vec::len).min().unwrap_or(0);
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let call_args: Vec<Value> = colls.iter().map(|c| c[i].clone()).collect();
        out.push(interp.call(f, &call_args)?);
    }
    vector_result(interp, out)
}

fn map_indexed(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let items = seq_items(&args[1], "map-indexed")?;
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in metered(items.into_iter().enumerate()) {
        out.push(interp.call(&args[0], &[Value::Int(i as i64), item])?);
    }
    vector_result(interp, out)
}

fn reduce(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let f = &args[0];
    let items = seq_view(args.last().expect("arity checked"), "reduce")?;
    let (acc, rest) = if args.len() == 3 {
        (args[1].clone(), &items[..])
    } else {
        match items.split_first() {
            None => return interp.call(f, &[]),
            Some((first, rest)) => (first.clone(), rest),
        }
    };
    let (mut acc, rest) = integer_fold(f, acc, rest);
    for item in rest {
        acc = interp.call(f, &[acc, item.clone()])?;
        if let Value::Reduced(done) = &acc {
            return Ok((**done).clone());
        }
    }
    Ok(acc)
}

/// The start of a `reduce` with `+`, `-` or `*` over integers (`(reduce +
/// 0 xs)` is the most common reduce of all), folded on machine integers
/// with no call per item: the result so far and the items left. It stops
/// before the first item that is not an integer, and before an overflow,
/// and leaves the rest to the general loop, so results and errors are the
/// builtin's. Any other function, or an accumulator that is not an
/// integer, leaves everything to the loop.
fn integer_fold<'a>(f: &Value, acc: Value, items: &'a [Value]) -> (Value, &'a [Value]) {
    let (Value::Native(native), Value::Int(start)) = (f, &acc) else {
        return (acc, items);
    };
    let Some(op) = PrimOp::of_call(native.name, 2).filter(|op| op.is_fold()) else {
        return (acc, items);
    };
    let mut total = *start;
    let mut done = 0;
    for item in items {
        let Value::Int(n) = item else { break };
        let Some(next) = op.arith(total, *n) else {
            break;
        };
        total = next;
        done += 1;
    }
    (Value::Int(total), &items[done..])
}

fn reduced(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::Reduced(std::sync::Arc::new(args[0].clone())))
}

fn is_reduced(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(matches!(args[0], Value::Reduced(_))))
}

fn unreduced(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(match &args[0] {
        Value::Reduced(inner) => (**inner).clone(),
        other => other.clone(),
    })
}

fn ensure_reduced(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(match &args[0] {
        Value::Reduced(_) => args[0].clone(),
        other => Value::Reduced(std::sync::Arc::new(other.clone())),
    })
}

/// Sort stably with a fallible comparison; the first error wins.
///
/// `total` says the comparison is known to be a total order on these
/// items ([`known_total_order`]), and the standard library's sort is used
/// (in runs, so the meter can stop it). Otherwise (a program's
/// comparator, NaN, mixed types) it is the merge sort of `merge_sort`:
/// the standard sort can panic on such a comparison, where that one gives
/// some permutation.
fn sort_values<T: Default>(
    items: &mut [T],
    total: bool,
    mut cmp: impl FnMut(&T, &T) -> Result<Ordering, crate::eval::Flow>,
) -> EvalResult<()> {
    let mut error = None;
    let compare = |a: &T, b: &T| {
        if error.is_some() {
            return Ordering::Equal;
        }
        cmp(a, b).unwrap_or_else(|e| {
            error = Some(e);
            Ordering::Equal
        })
    };
    // Stopped by the meter, the sort leaves the items in some order and
    // the run ends with its limit error.
    if total {
        super::merge_sort::sort_total_by(items, compare, sorted_items);
    } else {
        super::merge_sort::sort_by(items, compare, sorted_items);
    }
    match error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Whether `compare` (or `<` on numbers, when `numbers_only`) is a total
/// order on `keys`: all integers, all floats without NaN, or (for
/// `compare`) all strings or all keywords. NaN is equal to every number,
/// and an integer and a float compare through `f64`, which is not
/// transitive past 2^53.
fn totally_ordered<'a>(mut keys: impl Iterator<Item = &'a Value>, numbers_only: bool) -> bool {
    let Some(first) = keys.next() else {
        return true;
    };
    match first {
        Value::Int(_) => keys.all(|k| matches!(k, Value::Int(_))),
        Value::Float(x) if !x.is_nan() => keys.all(|k| matches!(k, Value::Float(y) if !y.is_nan())),
        Value::Str(_) | Value::ShortStr(_) if !numbers_only => keys.all(Value::is_str),
        Value::Keyword(_) if !numbers_only => keys.all(|k| matches!(k, Value::Keyword(_))),
        _ => false,
    }
}

/// Whether a sort in the order `comparator` gives (the natural order when
/// there is none or it is `:asc`/`:desc`) is known to be a total order on
/// `keys`, so the standard sort may be used.
fn known_total_order<'a>(
    comparator: Option<&Value>,
    keys: impl Iterator<Item = &'a Value>,
) -> bool {
    match comparator.filter(|c| direction(c).is_none()) {
        None => totally_ordered(keys, false),
        Some(f) => numeric_comparator(f).is_some() && totally_ordered(keys, true),
    }
}

/// Tell the meter a sort has done `items` items' worth of work; false
/// when the run must stop.
fn sorted_items(items: usize) -> bool {
    crate::meter::work(u32::try_from(items).unwrap_or(u32::MAX))
}

/// Whether `order` (of `sort`, `sort-by`) puts numbers in ascending
/// (`false`) or descending (`true`) order: none (the natural order),
/// `:asc`, `:desc`, `<` or `>`. `None` for any other comparator.
fn numeric_direction(order: Option<&Value>) -> Option<bool> {
    match order {
        None => Some(false),
        Some(order) => direction(order).or_else(|| numeric_comparator(order)),
    }
}

/// The positions of the first `limit` of `keys` (fewer than all) in the
/// stable natural order, ascending or `descending`, when that order is
/// known to be total on them (all strings, all keywords, all integers or
/// all floats without NaN, see [`totally_ordered`]): picked out, then
/// sorted, equal keys told apart by position. `None` for other keys.
fn first_in_natural_order(keys: &[Value], descending: bool, limit: usize) -> Option<Vec<usize>> {
    if limit >= keys.len() || !totally_ordered(keys.iter(), false) {
        return None;
    }
    let by_place = |a: &u32, b: &u32| {
        let (x, y) = (&keys[*a as usize], &keys[*b as usize]);
        let order = compare(x, y).unwrap_or(Ordering::Equal);
        let order = if descending { order.reverse() } else { order };
        order.then(a.cmp(b))
    };
    let mut positions: Vec<u32> = (0..u32::try_from(keys.len()).ok()?).collect();
    keep_first(&mut positions, limit, by_place);
    Some(positions.into_iter().map(|i| i as usize).collect())
}

/// Keep the first `limit` of `items` in the order `by_place` gives, which
/// must tell any two items apart (a total order, equal keys told apart
/// by position, so the result is the stable order's first `limit`):
/// picked out in linear time, then only they sorted. The meter is told
/// of the work; a stopped meter leaves no items (the run ends with its
/// error).
fn keep_first<T: Default>(
    items: &mut Vec<T>,
    limit: usize,
    mut by_place: impl FnMut(&T, &T) -> Ordering,
) {
    if !sorted_items(items.len()) {
        items.clear();
        return;
    }
    if limit > 0 && limit < items.len() {
        items.select_nth_unstable_by(limit - 1, &mut by_place);
    }
    items.truncate(limit);
    super::merge_sort::sort_total_by(items, by_place, sorted_items);
}

/// The positions of the first `limit` of `keys` in stable sorted order,
/// ascending or `descending`, when every key is an integer or every key
/// is a float other than NaN: a total order, compared as machine numbers
/// with no call per comparison (the order `compare`, `<` and `>` give).
/// `None` for any other keys.
fn sorted_by_number(keys: &[Value], descending: bool, limit: usize) -> Option<Vec<usize>> {
    fn positions<K: Copy + Default + PartialOrd>(
        keys: &[Value],
        number: impl Fn(&Value) -> Option<K>,
        descending: bool,
        limit: usize,
    ) -> Option<Vec<usize>> {
        let mut keyed = Vec::with_capacity(keys.len());
        for (i, key) in keys.iter().enumerate() {
            keyed.push((number(key)?, u32::try_from(i).ok()?));
        }
        let compare = |a: &(K, u32), b: &(K, u32)| {
            let order = a.0.partial_cmp(&b.0).unwrap_or(Ordering::Equal);
            if descending {
                order.reverse()
            } else {
                order
            }
        };
        if limit < keyed.len() {
            keep_first(&mut keyed, limit, |a, b| compare(a, b).then(a.1.cmp(&b.1)));
        } else {
            super::merge_sort::sort_total_by(&mut keyed, compare, sorted_items);
        }
        Some(keyed.into_iter().map(|(_, i)| i as usize).collect())
    }
    match keys.first()? {
        Value::Int(_) => positions(
            keys,
            |k| match k {
                Value::Int(n) => Some(*n),
                _ => None,
            },
            descending,
            limit,
        ),
        Value::Float(_) => positions(
            keys,
            |k| match k {
                Value::Float(x) if !x.is_nan() => Some(*x),
                _ => None,
            },
            descending,
            limit,
        ),
        _ => None,
    }
}

/// The positions of the first `limit` of `keys` in the stable order
/// `order` gives (of `sort`, `sort-by`), when that order is known
/// without a call per comparison: numbers in any order [`sorted_by_number`]
/// takes, or keys [`first_in_natural_order`] takes. `None` otherwise.
fn positions_without_calls(
    keys: &[Value],
    order: Option<&Value>,
    limit: usize,
) -> Option<Vec<usize>> {
    if let Some(descending) = numeric_direction(order) {
        if let Some(positions) = sorted_by_number(keys, descending, limit) {
            return Some(positions);
        }
    }
    first_in_natural_order(keys, natural_direction(order)?, limit)
}

/// Whether `order` (of `sort`, `sort-by`) is the natural order, ascending
/// (`false`: none or `:asc`) or descending (`true`: `:desc`). `None` for
/// a comparator.
fn natural_direction(order: Option<&Value>) -> Option<bool> {
    match order {
        None => Some(false),
        Some(order) => direction(order),
    }
}

/// `Some(descending)` when `f` is `<` (`false`) or `>` (`true`), which
/// `by_comparator` answers for numbers without a call.
fn numeric_comparator(f: &Value) -> Option<bool> {
    match f {
        Value::Native(n) if n.name == "<" => Some(false),
        Value::Native(n) if n.name == ">" => Some(true),
        _ => None,
    }
}

fn natural(who: &'static str) -> impl FnMut(&Value, &Value) -> Result<Ordering, crate::eval::Flow> {
    move |a, b| {
        compare(a, b)
            .map_err(|m| Error::type_error(format!("`{who}` cannot sort these values: {m}")).into())
    }
}

/// A comparator given as a function: `compare`-style (a number) or a
/// boolean "less than" predicate such as `>`.
fn by_comparator<'a, 'h>(
    interp: &'a mut Interp<'h>,
    f: &'a Value,
) -> impl FnMut(&Value, &Value) -> Result<Ordering, crate::eval::Flow> + use<'a, 'h> {
    // `<` and `>` on two numbers answer without a call: the same order
    // the two calls below would give (NaN compares equal to anything).
    let numeric = numeric_comparator(f);
    move |a, b| {
        if let Some(descending) = numeric {
            if let Some(order) = numeric_order(a, b) {
                return Ok(if descending { order.reverse() } else { order });
            }
        }
        let r = interp.call(f, &[a.clone(), b.clone()])?;
        Ok(match r {
            Value::Int(n) => n.cmp(&0),
            Value::Float(x) => x.partial_cmp(&0.0).unwrap_or(Ordering::Equal),
            Value::Bool(true) => Ordering::Less,
            Value::Bool(false) | Value::Nil => {
                if interp.call_truthy(f, &[b.clone(), a.clone()])? {
                    Ordering::Greater
                } else {
                    Ordering::Equal
                }
            }
            // Clojure throws here too: any other answer would sort silently
            // in an arbitrary order.
            other => {
                return Err(Error::type_error(format!(
                    "A sort comparator must return a number (negative, zero, positive) or a boolean (less than?), got {}",
                    other.describe()
                ))
                .into())
            }
        })
    }
}

/// The order of two numbers as `<` sees them (`Equal` when neither is
/// less, NaN included); `None` when either is not a number.
fn numeric_order(a: &Value, b: &Value) -> Option<Ordering> {
    let as_f64 = |v: &Value| match v {
        Value::Int(n) => Some(*n as f64),
        Value::Float(x) => Some(*x),
        _ => None,
    };
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
        _ => Some(
            as_f64(a)?
                .partial_cmp(&as_f64(b)?)
                .unwrap_or(Ordering::Equal),
        ),
    }
}

/// `:asc` / `:desc` in place of a comparator (a PTC-Lisp extension).
fn direction(v: &Value) -> Option<bool> {
    match v {
        Value::Keyword(k) if k == "asc" => Some(false),
        Value::Keyword(k) if k == "desc" => Some(true),
        _ => None,
    }
}

fn sort(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    sort_first(interp, args, usize::MAX)
}

/// `(take n (sort comp? coll))`, which the analyzer rewrites to this:
/// [`take_sorted_by`] for `sort`.
fn take_sorted(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    take_first(interp, args, sort_first)
}

/// `(take n sorted)` where `first(interp, sort_args, limit)` gives the
/// first `limit` items of a sort on the rest of `args`.
fn take_first(
    interp: &mut Interp<'_>,
    args: &[Value],
    first: fn(&mut Interp<'_>, &[Value], usize) -> EvalResult,
) -> EvalResult {
    let Value::Int(n) = args[0] else {
        // `take`'s own error, after the sort's, as without the rewrite.
        let sorted = first(interp, &args[1..], usize::MAX)?;
        return take(interp, &[args[0].clone(), sorted]);
    };
    first(interp, &args[1..], n.max(0) as usize)
}

/// The first `limit` items of `(sort ...)` on `args`.
fn sort_first(interp: &mut Interp<'_>, args: &[Value], limit: usize) -> EvalResult {
    let coll = args.last().expect("arity checked");
    let mut items = seq_items(coll, "sort")?;
    let order = args.first().filter(|_| args.len() == 2);
    if let Some(positions) = positions_without_calls(&items, order, limit) {
        let sorted = positions.iter().map(|&i| std::mem::take(&mut items[i]));
        return vector_result(interp, sorted.collect());
    }
    let total = known_total_order(order, items.iter());
    match args {
        [_] => sort_values(&mut items, total, natural("sort"))?,
        [order, _] => match direction(order) {
            Some(desc) => {
                let mut natural = natural("sort");
                sort_values(&mut items, total, |a, b| {
                    natural(a, b).map(|o| if desc { o.reverse() } else { o })
                })?
            }
            None => sort_values(&mut items, total, by_comparator(interp, order))?,
        },
        _ => unreachable!("arity checked"),
    }
    items.truncate(limit);
    vector_result(interp, items)
}

fn sort_by(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    sort_by_first(interp, args, usize::MAX)
}

/// `(take n (sort-by keyfn order? coll))`, which the analyzer rewrites to
/// this (the name cannot be written in a program): the first `n` items
/// of `sort-by`'s order (a top-n query). When the order is known without
/// a call per comparison (see [`positions_without_calls`]), the first `n`
/// are picked out and only they are sorted; otherwise the whole
/// collection is sorted and cut. Either way the keys
/// are taken from every item, in order, as `sort-by` takes them.
fn take_sorted_by(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    take_first(interp, args, sort_by_first)
}

/// The first `limit` items of `(sort-by ...)` on `args`.
fn sort_by_first(interp: &mut Interp<'_>, args: &[Value], limit: usize) -> EvalResult {
    let keyfn = &args[0];
    let coll = args.last().expect("arity checked");
    let items = seq_view(coll, "sort-by")?;
    let mut keys = Vec::with_capacity(items.len());
    for item in items.iter() {
        keys.push(key_of(interp, keyfn, item)?);
    }
    let order = args.get(1).filter(|_| args.len() == 3);
    if let Some(positions) = positions_without_calls(&keys, order, limit) {
        let sorted = positions.iter().map(|&i| items[i].clone());
        return vector_result(interp, sorted.collect());
    }
    let mut keyed: Vec<(Value, Value)> = keys.into_iter().zip(items.iter().cloned()).collect();
    // Every order is a stable sort: `:desc` reverses the comparison, not
    // the result, so equal keys keep their input order.
    let total = known_total_order(order, keyed.iter().map(|k| &k.0));
    match order {
        Some(order) => match direction(order) {
            Some(desc) => {
                let mut natural = natural("sort-by");
                sort_values(&mut keyed, total, |a, b| {
                    natural(&a.0, &b.0).map(|o| if desc { o.reverse() } else { o })
                })?
            }
            None => {
                let cmp = order.clone();
                let mut by = by_comparator(interp, &cmp);
                sort_values(&mut keyed, total, |a, b| by(&a.0, &b.0))?
            }
        },
        None => {
            let mut natural = natural("sort-by");
            sort_values(&mut keyed, total, |a, b| natural(&a.0, &b.0))?
        }
    }
    keyed.truncate(limit);
    vector_result(interp, keyed.into_iter().map(|(_, item)| item).collect())
}

/// Apply a key function; keywords and strings use flexible map lookup.
pub(crate) fn key_of(interp: &mut Interp<'_>, keyfn: &Value, item: &Value) -> EvalResult {
    key_ref(interp, keyfn, item).map(Cow::into_owned)
}

/// [`key_of`], with a keyword's or string's field read where it is (no
/// copy, no reference count raised and dropped); a function's result is
/// its own value.
fn key_ref<'a>(
    interp: &mut Interp<'_>,
    keyfn: &'a Value,
    item: &'a Value,
) -> EvalResult<Cow<'a, Value>> {
    match keyfn {
        Value::Keyword(_) | Value::Str(_) | Value::ShortStr(_) => {
            Ok(field_ref(item, keyfn).map_or(Cow::Owned(Value::Nil), Cow::Borrowed))
        }
        f => interp.call(f, std::slice::from_ref(item)).map(Cow::Owned),
    }
}

fn reverse(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let mut items = ordered_items("reverse", &args[0])?;
    items.reverse();
    vector_result(interp, items)
}

fn distinct(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let items = seq_view(&args[0], "distinct")?;
    // The items seen so far, borrowed: one lookup per item, and no
    // reference counting for the table's copies.
    let mut seen: HashSet<&Value, ItemState> =
        HashSet::with_capacity_and_hasher(items.len(), ItemState);
    let mut out = Vec::new();
    for item in metered(items.iter()) {
        if seen.insert(item) {
            out.push(item.clone());
        }
    }
    vector_result(interp, out)
}

/// `(partition n step? pad? coll)`: with `pad`, the last incomplete group
/// is filled from it (and may stay short), as in Clojure.
fn partition(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let n = expect_int("partition", &args[0])?;
    let step = if args.len() >= 3 {
        expect_int("partition", &args[1])?
    } else {
        n
    };
    if n <= 0 || step <= 0 {
        return Err(Error::execution("`partition` needs a positive size and step").into());
    }
    let pad = match args {
        [_, _, pad, _] => Some(seq_items(pad, "partition")?),
        _ => None,
    };
    let items = seq_items(args.last().expect("arity"), "partition")?;
    let (n, step) = (n as usize, step as usize);
    let mut out = Vec::new();
    let mut i = 0;
    while i + n <= items.len() {
        out.push(Value::vector(items[i..i + n].iter().cloned()));
        i += step;
    }
    if let Some(pad) = pad {
        if i < items.len() {
            let missing = n - (items.len() - i);
            let group = items[i..].iter().chain(pad.iter().take(missing)).cloned();
            out.push(Value::vector(group));
        }
    }
    vector_result(interp, out)
}

fn conj(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let (coll, items) = args.split_first().expect("arity checked");
    let out = match coll {
        Value::Nil => Value::list(metered(items.iter().rev()).cloned()),
        Value::Vector(v) => {
            let mut v = (**v).clone();
            v.extend(metered(items.iter()).cloned());
            interp.check_size(v.len())?;
            Value::from_vector(v)
        }
        Value::List(v) => {
            let mut v = (**v).clone();
            for item in metered(items.iter()) {
                v.push_front(item.clone());
            }
            interp.check_size(v.len())?;
            Value::List(std::sync::Arc::new(v))
        }
        Value::Set(s) => {
            let mut s = (**s).clone();
            for item in metered(items.iter()) {
                s.insert(item.clone());
            }
            interp.check_size(s.len())?;
            Value::set(s)
        }
        Value::Map(m) => {
            let mut m = m.clone();
            for item in metered(items.iter()) {
                conj_entry(&mut m, item)?;
            }
            interp.check_size(m.len())?;
            Value::map(m)
        }
        other => return Err(type_error("conj", "a collection", other).into()),
    };
    Ok(out)
}

pub(super) fn conj_entry(m: &mut Map, item: &Value) -> Result<(), Error> {
    match item {
        Value::Vector(kv) if kv.len() == 2 => {
            m.insert(kv[0].clone(), kv[1].clone());
            Ok(())
        }
        Value::Map(other) => {
            for (k, v) in metered(other.iter()) {
                m.insert(k.clone(), v.clone());
            }
            Ok(())
        }
        Value::Nil => Ok(()),
        other => Err(type_error(
            "conj",
            "a [key value] vector or a map to add to a map",
            other,
        )),
    }
}

fn concat(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let mut out = crate::value::Vector::new();
    for a in args {
        match a {
            Value::Vector(v) | Value::List(v) => out.append((**v).clone()),
            other => out.extend(seq_items(other, "concat")?),
        }
        interp.check_size(out.len())?;
    }
    Ok(Value::from_vector(out))
}

fn into(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    match args {
        [] => return Ok(Value::vector([])),
        [to] => return Ok(to.clone()),
        [_, _, _] => {
            return Err(Error::unsupported(
                "Transducers are not supported, so `into` takes no transform argument",
            )
            .with_hint("transform first, then pour: `(into [] (map f coll))`")
            .into())
        }
        _ => {}
    }
    let items = seq_items(&args[1], "into")?;
    let mut all = vec![args[0].clone()];
    all.extend(items);
    match &args[0] {
        Value::Nil => vector_result(interp, all.into_iter().skip(1).collect()),
        _ => conj(interp, &all),
    }
}

fn flatten(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    fn walk(interp: &Interp<'_>, v: &Value, out: &mut Vec<Value>, depth: usize) -> EvalResult<()> {
        if depth > interp.limits.max_depth {
            return Err(Error::new(
                crate::error::ErrorKind::DepthLimit,
                "`flatten` input is nested too deeply",
            )
            .into());
        }
        match v {
            Value::Vector(items) | Value::List(items) => {
                for item in items.iter() {
                    // Empty vectors shared many times produce no items but
                    // take exponential time: the meter bounds that.
                    if !crate::meter::work(1) {
                        return Ok(());
                    }
                    walk(interp, item, out, depth + 1)?;
                }
            }
            other => {
                // Checked before the push: shared structure can expand to
                // far more items than memory holds.
                interp.check_size(out.len() + 1)?;
                out.push(other.clone());
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    match &args[0] {
        Value::Vector(_) | Value::List(_) => walk(interp, &args[0], &mut out, 0)?,
        _ => {}
    }
    vector_result(interp, out)
}

fn interleave(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let colls = args
        .iter()
        .map(|c| seq_items(c, "interleave"))
        .collect::<Result<Vec<_>, _>>()?;
    let n = colls.iter().map(Vec::len).min().unwrap_or(0);
    let mut out = Vec::with_capacity(n * colls.len());
    for i in 0..n {
        for c in &colls {
            out.push(c[i].clone());
        }
    }
    vector_result(interp, out)
}

fn zip(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let a = seq_items(&args[0], "zip")?;
    let b = seq_items(&args[1], "zip")?;
    let out = a
        .into_iter()
        .zip(b)
        .map(|(x, y)| Value::vector([x, y]))
        .collect();
    vector_result(interp, out)
}

fn seq(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let items = seq_items(&args[0], "seq")?;
    if items.is_empty() {
        return Ok(Value::Nil);
    }
    if let Value::Vector(_) | Value::List(_) = &args[0] {
        return Ok(args[0].clone());
    }
    vector_result(interp, items)
}

fn range(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    for a in args {
        if !a.is_number() {
            return Err(type_error("range", "numbers", a).into());
        }
    }
    let (start, end, step) = match args {
        [e] => (Value::Int(0), e.clone(), Value::Int(1)),
        [s, e] => (s.clone(), e.clone(), Value::Int(1)),
        [s, e, st] => (s.clone(), e.clone(), st.clone()),
        _ => unreachable!("arity checked"),
    };
    let as_f64 = |v: &Value| match v {
        Value::Int(n) => *n as f64,
        Value::Float(x) => *x,
        _ => unreachable!("checked above"),
    };
    if let (Value::Int(s), Value::Int(e), Value::Int(st)) = (&start, &end, &step) {
        // Exact integer arithmetic: no rounding through floats.
        let (s, e, st) = (*s as i128, *e as i128, *st as i128);
        if st == 0 {
            return Err(
                Error::execution("`range` with a step of zero would never end")
                    .with_hint("bound it with `take`: `(take 3 (range 1 5 0))` is `[1 1 1]`")
                    .into(),
            );
        }
        let count = if (st > 0 && s < e) || (st < 0 && s > e) {
            ((e - s).abs() + st.abs() - 1) / st.abs()
        } else {
            0
        };
        interp.check_size(usize::try_from(count).unwrap_or(usize::MAX))?;
        let out = (0..count)
            .map(|i| Value::Int((s + st * i) as i64))
            .collect();
        return vector_result(interp, out);
    }
    // As Clojure does: each item is the previous one plus step (so an
    // integer start stays an integer when the step is an integer, and
    // float steps accumulate rounding exactly as they do there).
    let (e, st) = (as_f64(&end), as_f64(&step));
    if st == 0.0 || st.is_nan() {
        return Err(
            Error::execution("`range` with a step of zero would never end")
                .with_hint("bound it with `take`: `(take 3 (range 1 5 0))` is `[1 1 1]`")
                .into(),
        );
    }
    let bound = ((e - as_f64(&start)) / st).ceil() + 1.0;
    if bound.is_nan() || bound >= usize::MAX as f64 {
        interp.check_size(usize::MAX)?;
    } else if bound > 0.0 {
        interp.check_size(bound as usize)?;
    }
    let mut out = Vec::new();
    let mut x = start;
    loop {
        let xf = as_f64(&x);
        if !((st > 0.0 && xf < e) || (st < 0.0 && xf > e)) {
            break;
        }
        let next = match (&x, &step) {
            (Value::Int(a), Value::Int(b)) => match a.checked_add(*b) {
                Some(n) => Value::Int(n),
                None => {
                    out.push(x);
                    break;
                }
            },
            _ => Value::Float(xf + st),
        };
        out.push(x);
        x = next;
    }
    vector_result(interp, out)
}

fn is_empty(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(match &args[0] {
        Value::Nil => true,
        Value::Vector(v) | Value::List(v) => v.is_empty(),
        Value::Map(m) => m.is_empty(),
        Value::Set(s) => s.is_empty(),
        Value::Str(s) => s.is_empty(),
        Value::ShortStr(s) => s.is_empty(),
        other => return Err(type_error("empty?", "a collection or string", other).into()),
    }))
}

fn not_empty(i: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(if is_empty(i, args)?.truthy() {
        Value::Nil
    } else {
        args[0].clone()
    })
}

fn some(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    for item in seq_view(&args[1], "some")?.iter() {
        let r = interp.call(&args[0], std::slice::from_ref(item))?;
        if r.truthy() {
            return Ok(r);
        }
    }
    Ok(Value::Nil)
}

fn every(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    for item in seq_view(&args[1], "every?")?.iter() {
        if !interp.call_truthy(&args[0], std::slice::from_ref(item))? {
            return Ok(Value::Bool(false));
        }
    }
    Ok(Value::Bool(true))
}

fn not_any(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(!some(interp, args)?.truthy()))
}

/// `contains?` checks keys of maps and sets, and (as the specification
/// extends it) elements of vectors and lists.
fn contains(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(match (&args[0], args[0].as_str()) {
        (Value::Map(m), _) => m.contains_key(&args[1]),
        (Value::Set(s), _) => s.contains(&args[1]),
        (Value::Vector(v) | Value::List(v), _) => v.iter().any(|x| *x == args[1]),
        (_, Some(text)) => match &args[1] {
            Value::Int(i) => *i >= 0 && (*i as usize) < text.chars().count(),
            _ => false,
        },
        (Value::Nil, _) => false,
        (other, _) => return Err(type_error("contains?", "a collection", other).into()),
    }))
}

fn group_by(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let mut groups: Vec<(Value, Vec<Value>)> = Vec::new();
    let mut index: HashMap<Value, usize, FixedState> = HashMap::default();
    for item in metered(seq_view(&args[1], "group-by")?.iter()) {
        let k = key_ref(interp, &args[0], item)?;
        match index.get(k.as_ref()) {
            Some(&i) => groups[i].1.push(item.clone()),
            None => {
                let k = k.into_owned();
                index.insert(k.clone(), groups.len());
                groups.push((k, vec![item.clone()]));
            }
        }
    }
    Ok(Value::map(
        groups
            .into_iter()
            .map(|(k, v)| (k, Value::vector(v)))
            .collect(),
    ))
}

fn frequencies(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let mut counts: Vec<(Value, i64)> = Vec::new();
    let mut index: HashMap<Value, usize, FixedState> = HashMap::default();
    for item in metered(seq_view(&args[0], "frequencies")?.iter()) {
        match index.get(item) {
            Some(&i) => counts[i].1 += 1,
            None => {
                index.insert(item.clone(), counts.len());
                counts.push((item.clone(), 1));
            }
        }
    }
    Ok(Value::map(
        counts
            .into_iter()
            .map(|(k, n)| (k, Value::Int(n)))
            .collect(),
    ))
}

/// Field values for the aggregators: nil and missing are skipped,
/// anything else non-numeric is an error (spec §11.4-11.5).
fn numeric_fields(
    interp: &mut Interp<'_>,
    who: &str,
    keyfn: &Value,
    coll: &Value,
) -> EvalResult<Vec<Value>> {
    let items = seq_view(coll, who)?;
    let mut out = Vec::with_capacity(items.len());
    for item in items.iter() {
        // The field is borrowed; only its number is copied out.
        match key_ref(interp, keyfn, item)?.as_ref() {
            Value::Nil => {}
            Value::Int(n) => out.push(Value::Int(*n)),
            Value::Float(f) => out.push(Value::Float(*f)),
            other => return Err(type_error(who, "numeric field values", other).into()),
        }
    }
    Ok(out)
}

pub(super) fn sum_values(who: &str, values: &[Value]) -> EvalResult {
    let mut int_sum: i64 = 0;
    let mut float_sum = 0.0;
    let mut any_float = false;
    for v in values {
        match v {
            Value::Int(n) => {
                int_sum = int_sum
                    .checked_add(*n)
                    .ok_or_else(|| Error::arithmetic(format!("Integer overflow in `{who}`")))?
            }
            Value::Float(f) => {
                any_float = true;
                float_sum += f
            }
            _ => unreachable!("numeric_fields filtered"),
        }
    }
    Ok(if any_float {
        Value::Float(float_sum + int_sum as f64)
    } else {
        Value::Int(int_sum)
    })
}

fn sum_by(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let values = numeric_fields(interp, "sum-by", &args[0], &args[1])?;
    sum_values("sum-by", &values)
}

fn avg_by(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let values = numeric_fields(interp, "avg-by", &args[0], &args[1])?;
    if values.is_empty() {
        return Ok(Value::Nil);
    }
    let total = values.iter().map(|v| match v {
        Value::Int(n) => *n as f64,
        Value::Float(f) => *f,
        _ => 0.0,
    });
    Ok(Value::Float(total.sum::<f64>() / values.len() as f64))
}

/// `(min-by f coll)`, or `(min-by f x y & more)` over the arguments.
fn extreme_by(interp: &mut Interp<'_>, who: &str, args: &[Value], want: Ordering) -> EvalResult {
    let view;
    let items = match args {
        [_, coll] => {
            view = seq_view(coll, who)?;
            &view[..]
        }
        [_, items @ ..] => items,
        [] => unreachable!("arity checked"),
    };
    let mut best: Option<(Cow<'_, Value>, &Value)> = None;
    for item in items {
        let k = key_ref(interp, &args[0], item)?;
        if k.is_nil() {
            continue;
        }
        let better = match &best {
            None => true,
            Some((bk, _)) => {
                compare(&k, bk).map_err(|m| Error::type_error(format!("`{who}`: {m}")))? == want
            }
        };
        if better {
            best = Some((k, item));
        }
    }
    Ok(best.map_or(Value::Nil, |(_, item)| item.clone()))
}

fn min_by(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    extreme_by(interp, "min-by", args, Ordering::Less)
}

fn max_by(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    extreme_by(interp, "max-by", args, Ordering::Greater)
}

/// Clojure's `max-key`/`min-key`: ties go to the last argument.
fn extreme_key(interp: &mut Interp<'_>, who: &str, args: &[Value], want: Ordering) -> EvalResult {
    let f = &args[0];
    let mut best = args[1].clone();
    let mut best_key = interp.call(f, std::slice::from_ref(&best))?;
    for x in &args[2..] {
        let k = interp.call(f, std::slice::from_ref(x))?;
        let o = compare(&k, &best_key).map_err(|m| Error::type_error(format!("`{who}`: {m}")))?;
        if o == want || o == Ordering::Equal {
            best = x.clone();
            best_key = k;
        }
    }
    Ok(best)
}

fn max_key(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    extreme_key(interp, "max-key", args, Ordering::Greater)
}

fn min_key(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    extreme_key(interp, "min-key", args, Ordering::Less)
}

fn pluck(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let items = seq_items(&args[1], "pluck")?;
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        out.push(key_of(interp, &args[0], &item)?);
    }
    vector_result(interp, out)
}

fn vec(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    if let Value::Vector(_) = &args[0] {
        return Ok(args[0].clone());
    }
    let items = seq_items(&args[0], "vec")?;
    vector_result(interp, items)
}

fn vector(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    vector_result(interp, args.to_vec())
}

fn list(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::list(args.iter().cloned()))
}

fn set(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::set(
        metered(seq_view(&args[0], "set")?.iter())
            .cloned()
            .collect(),
    ))
}

fn hash_set(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::set(args.iter().cloned().collect()))
}

/// Builtins the analyzer calls under names no program can write.
pub(super) fn register_internal(r: &mut Registry) {
    r.add(
        TAKE_RANGE,
        "[n start end step]",
        4,
        4,
        "`(take n (range start end step))`, with a zero step bounded by `take`.",
        take_range,
    );
    r.add(
        TAKE_SORTED_BY,
        "[n keyfn comp? coll]",
        3,
        4,
        "`(take n (sort-by keyfn comp? coll))`: the first n without sorting the rest.",
        take_sorted_by,
    );
    r.add(
        TAKE_SORTED,
        "[n comp? coll]",
        2,
        3,
        "`(take n (sort comp? coll))`: the first n without sorting the rest.",
        take_sorted,
    );
    r.add(
        ALIAS,
        "[alias ns & more]",
        2,
        super::MANY,
        "Keep the aliases a `require` made in the user namespace, for later turns.",
        record_aliases,
    );
}

/// The name of [`take_range`] (`#` never starts a symbol the reader makes).
pub(crate) const TAKE_RANGE: &str = "#take-range";

/// The name of [`take_sorted`].
pub(crate) const TAKE_SORTED: &str = "#take-sorted";

/// The name of [`take_sorted_by`].
pub(crate) const TAKE_SORTED_BY: &str = "#take-sorted-by";

/// The name of [`record_aliases`].
pub(crate) const ALIAS: &str = "#alias";

/// `(require '[clojure.string :as s])` at run time: the user namespace
/// keeps `s` for later turns (a failed turn rolls it back with the rest).
fn record_aliases(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    for pair in args.chunks(2) {
        if let [alias, ns] = pair {
            if let (Some(alias), Some(ns)) = (alias.as_str(), ns.as_str()) {
                interp.globals.set_alias(alias.into(), ns.into());
            }
        }
    }
    Ok(Value::Nil)
}

pub(super) fn register(r: &mut Registry) {
    r.add(
        "count",
        "[coll]",
        1,
        1,
        "Number of items (characters for strings, 0 for nil). `(count [1 2 3])` => `3`.",
        count,
    );
    r.add(
        "first",
        "[coll]",
        1,
        1,
        "The first item, or nil. `(first [1 2])` => `1`.",
        first,
    );
    r.add(
        "second",
        "[coll]",
        1,
        1,
        "The second item, or nil. `(second [1 2])` => `2`.",
        second,
    );
    r.add(
        "last",
        "[coll]",
        1,
        1,
        "The last item, or nil. `(last [1 2 3])` => `3`.",
        last,
    );
    r.add(
        "rest",
        "[coll]",
        1,
        1,
        "All but the first item (empty if none). `(rest [1 2 3])` => `[2 3]`.",
        rest,
    );
    r.add(
        "next",
        "[coll]",
        1,
        1,
        "All but the first item, or nil if none. `(next [1])` => `nil`.",
        next,
    );
    r.add(
        "nth",
        "[coll index default?]",
        2,
        3,
        "The item at index; nil (or default) when out of range. `(nth [1 2 3] 1)` => `2`.",
        nth,
    );
    r.add(
        "take",
        "[n coll]",
        2,
        2,
        "The first n items. `(take 2 [1 2 3])` => `[1 2]`.",
        take,
    );
    r.add(
        "drop",
        "[n coll]",
        2,
        2,
        "All but the first n items. `(drop 2 [1 2 3])` => `[3]`.",
        drop,
    );
    r.add(
        "take-while",
        "[pred coll]",
        2,
        2,
        "Items from the start while pred holds. `(take-while pos? [1 2 -1 3])` => `[1 2]`.",
        take_while,
    );
    r.add(
        "drop-while",
        "[pred coll]",
        2,
        2,
        "Items after pred first fails. `(drop-while pos? [1 -1 2])` => `[-1 2]`.",
        drop_while,
    );
    r.add("filter", "[pred coll]", 1, 2, "Items for which pred is truthy; maps give [k v] pairs. `(filter even? [1 2 3 4])` => `[2 4]`.", filter);
    r.add(
        "remove",
        "[pred coll]",
        1,
        2,
        "Items for which pred is falsy. `(remove even? [1 2 3])` => `[1 3]`.",
        remove,
    );
    r.add("find", "[coll key]", 2, 2, "The `[key value]` entry of a map, or `[index item]` of a vector, or nil when absent (Clojure's `find`). Extension: with a function, keyword or set first, `(find pred coll)` is the first item for which pred is truthy. `(find [10 20 30] 2)` => `[2 30]`.", find);
    r.add("map", "[f coll & colls]", 1, MANY, "Apply f to each item (or to items of several collections in step). `(map inc [1 2])` => `[2 3]`.", map);
    r.alias("mapv", "map");
    r.add(
        "map-indexed",
        "[f coll]",
        2,
        2,
        "Apply f to each index and item. `(map-indexed vector [:a :b])` => `[[0 :a] [1 :b]]`.",
        map_indexed,
    );
    r.add(
        "reduce",
        "[f init? coll]",
        2,
        3,
        "Fold the collection with f, from init or the first item; a `(reduced x)` result stops it with x. `(reduce + 0 [1 2 3])` => `6`.",
        reduce,
    );
    r.add("reduced", "[x]", 1, 1, "Wrap x so that `reduce` stops and returns it. `(reduce (fn [acc x] (if (> x 2) (reduced acc) (+ acc x))) 0 [1 2 3 4])` => `3`.", reduced);
    r.add(
        "reduced?",
        "[x]",
        1,
        1,
        "True if x was made by `reduced`. `(reduced? (reduced 1))` => `true`.",
        is_reduced,
    );
    r.add(
        "unreduced",
        "[x]",
        1,
        1,
        "The value inside a `reduced`, or x itself. `(unreduced (reduced 1))` => `1`.",
        unreduced,
    );
    r.add(
        "ensure-reduced",
        "[x]",
        1,
        1,
        "x wrapped by `reduced` unless it already is. `(reduced? (ensure-reduced 1))` => `true`.",
        ensure_reduced,
    );
    r.add(
        "sort",
        "[comp? coll]",
        1,
        2,
        "Sort by natural order, a comparator, or :asc/:desc. `(sort [3 1 2])` => `[1 2 3]`.",
        sort,
    );
    r.add("sort-by", "[keyfn comp? coll]", 2, 3, "Sort by (keyfn item), with an optional comparator or :asc/:desc. `(sort-by :age [{:age 3} {:age 1}])` => `[{:age 1} {:age 3}]`.", sort_by);
    r.add(
        "reverse",
        "[coll]",
        1,
        1,
        "The items in reverse order. `(reverse [1 2 3])` => `[3 2 1]`.",
        reverse,
    );
    r.add(
        "distinct",
        "[coll]",
        1,
        1,
        "The items without duplicates, first occurrence kept. `(distinct [1 2 1])` => `[1 2]`.",
        distinct,
    );
    r.add("partition", "[n step? pad? coll]", 2, 4, "Groups of n items (every step items); an incomplete last group is dropped unless a pad collection fills it. `(partition 2 [1 2 3 4 5])` => `[[1 2] [3 4]]`.", partition);
    r.add("conj", "[coll & xs]", 1, MANY, "Add items: at the end of vectors, the front of lists, into sets and maps. `(conj [1 2] 3)` => `[1 2 3]`.", conj);
    r.add(
        "concat",
        "[& colls]",
        0,
        MANY,
        "All items of the collections in order. `(concat [1] [2 3])` => `[1 2 3]`.",
        concat,
    );
    r.add("into", "[to from]", 0, 3, "Add every item of from to to (the transducer form is not supported). `(into {} [[:a 1]])` => `{:a 1}`.", into);
    r.add("flatten", "[coll]", 1, 1, "Nested vectors and lists flattened into one vector. `(flatten [[1 2] [3 [4]]])` => `[1 2 3 4]`.", flatten);
    r.add(
        "interleave",
        "[& colls]",
        0,
        MANY,
        "First items of each, then second items... `(interleave [1 2] [:a :b])` => `[1 :a 2 :b]`.",
        interleave,
    );
    r.add(
        "zip",
        "[c1 c2]",
        2,
        2,
        "Pairs of items in step. `(zip [1 2] [:a :b])` => `[[1 :a] [2 :b]]`.",
        zip,
    );
    r.add(
        "seq",
        "[coll]",
        1,
        1,
        "The items as a sequence, or nil if empty. `(seq [])` => `nil`.",
        seq,
    );
    r.add(
        "range",
        "[start? end step?]",
        1,
        3,
        "Numbers from start (0) up to, not including, end. `(range 3)` => `[0 1 2]`.",
        range,
    );
    r.add(
        "empty?",
        "[coll]",
        1,
        1,
        "True if the collection or string has no items (or is nil). `(empty? [])` => `true`.",
        is_empty,
    );
    r.add(
        "not-empty",
        "[coll]",
        1,
        1,
        "The collection, or nil if it is empty. `(not-empty [])` => `nil`.",
        not_empty,
    );
    r.add(
        "some",
        "[pred coll]",
        2,
        2,
        "The first truthy (pred item), or nil. `(some even? [1 2])` => `true`.",
        some,
    );
    r.add(
        "every?",
        "[pred coll]",
        2,
        2,
        "True if pred holds for every item. `(every? pos? [1 2])` => `true`.",
        every,
    );
    r.add(
        "not-any?",
        "[pred coll]",
        2,
        2,
        "True if pred holds for no item. `(not-any? neg? [1 2])` => `true`.",
        not_any,
    );
    r.add("contains?", "[coll key]", 2, 2, "True if a map or set has the key, or a vector has the element. `(contains? {:a 1} :a)` => `true`.", contains);
    r.add("group-by", "[f coll]", 2, 2, "A map from (f item) to the vector of items with that key. `(group-by odd? [1 2 3])` => `{true [1 3], false [2]}`.", group_by);
    r.add(
        "frequencies",
        "[coll]",
        1,
        1,
        "A map from each distinct item to its count. `(frequencies [:a :b :a])` => `{:a 2, :b 1}`.",
        frequencies,
    );
    r.add("sum-by", "[key coll]", 2, 2, "Sum of a numeric field over the items; nil or missing fields are skipped. `(sum-by :n [{:n 1} {:n 2}])` => `3`.", sum_by);
    r.add(
        "avg-by",
        "[key coll]",
        2,
        2,
        "Average of a numeric field, nil for no values. `(avg-by :n [{:n 1} {:n 2}])` => `1.5`.",
        avg_by,
    );
    r.add("min-by", "[key coll] or [key x y & more]", 2, MANY, "The item with the smallest field value (nil fields skipped). `(min-by :n [{:n 2} {:n 1}])` => `{:n 1}`.", min_by);
    r.add("max-by", "[key coll] or [key x y & more]", 2, MANY, "The item with the largest field value (nil fields skipped). `(max-by :n [{:n 2} {:n 1}])` => `{:n 2}`.", max_by);
    r.add(
        "min-key",
        "[f x & xs]",
        2,
        MANY,
        "The argument with the smallest (f x). `(min-key count \"abc\" \"a\")` => `\"a\"`.",
        min_key,
    );
    r.add(
        "max-key",
        "[f x & xs]",
        2,
        MANY,
        "The argument with the largest (f x). `(max-key count \"a\" \"abc\")` => `\"abc\"`.",
        max_key,
    );
    r.add(
        "pluck",
        "[key coll]",
        2,
        2,
        "The field value of each item. `(pluck :id [{:id 1} {:id 2}])` => `[1 2]`.",
        pluck,
    );
    r.add(
        "vec",
        "[coll]",
        1,
        1,
        "The items as a vector. `(vec #{1})` => `[1]`.",
        vec,
    );
    r.add(
        "vector",
        "[& xs]",
        0,
        MANY,
        "A vector of the arguments. `(vector 1 2)` => `[1 2]`.",
        vector,
    );
    r.add(
        "list",
        "[& xs]",
        0,
        MANY,
        "A list of the arguments. `(list 1 2)` => `(1 2)`.",
        list,
    );
    r.add(
        "set",
        "[coll]",
        1,
        1,
        "A set of the items. `(set [1 1 2])` => `#{1 2}`.",
        set,
    );
    r.add(
        "hash-set",
        "[& xs]",
        0,
        MANY,
        "A set of the arguments. `(hash-set 1 2)` => `#{1 2}`.",
        hash_set,
    );
}
