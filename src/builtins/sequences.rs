//! More sequence functions: slicing (`take-last`, `split-at`, ...),
//! grouping (`partition-all`, `partition-by`), mapping variants (`keep`,
//! `mapcat`, `reductions`), stack-style access (`peek`, `pop`, `subvec`),
//! simple aggregates (`sum`, `avg`) and `tree-seq`.
//!
//! Like the rest of the library, every sequence result is a vector.

use crate::error::Error;
use crate::eval::{EvalResult, Interp};
use crate::value::{Set, Value};

use super::collections::{first, key_of, next, no_transducer, ordered_items, sum_values};
use super::core::{expect_int, seq_items, type_error, vector_result};
use super::{Registry, MANY};

/// A count argument; negative counts behave as zero, as in Clojure.
fn count_arg(who: &str, v: &Value) -> Result<usize, Error> {
    Ok(expect_int(who, v)?.max(0) as usize)
}

/// A size or step that must be positive (zero would never advance).
fn positive_arg(who: &str, v: &Value) -> Result<usize, Error> {
    match expect_int(who, v)? {
        n if n > 0 => Ok(n as usize),
        n => Err(Error::execution(format!(
            "`{who}` needs a positive size, got {n}"
        ))),
    }
}

/// nil for an empty result, as Clojure's seq-returning functions give.
fn vector_or_nil(interp: &Interp<'_>, items: Vec<Value>) -> EvalResult {
    if items.is_empty() {
        return Ok(Value::Nil);
    }
    vector_result(interp, items)
}

fn keep(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    no_transducer("keep", args)?;
    let mut out = Vec::new();
    for item in seq_items(&args[1], "keep")? {
        let v = interp.call(&args[0], std::slice::from_ref(&item))?;
        if !v.is_nil() {
            out.push(v);
        }
    }
    vector_result(interp, out)
}

fn keep_indexed(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let mut out = Vec::new();
    for (i, item) in seq_items(&args[1], "keep-indexed")?.into_iter().enumerate() {
        let v = interp.call(&args[0], &[Value::Int(i as i64), item])?;
        if !v.is_nil() {
            out.push(v);
        }
    }
    vector_result(interp, out)
}

fn mapcat(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    no_transducer("mapcat", args)?;
    let colls = args[1..]
        .iter()
        .map(|c| seq_items(c, "mapcat"))
        .collect::<Result<Vec<_>, _>>()?;
    let n = colls.iter().map(Vec::len).min().unwrap_or(0);
    let mut out = Vec::new();
    for i in 0..n {
        let call_args: Vec<Value> = colls.iter().map(|c| c[i].clone()).collect();
        let part = interp.call(&args[0], &call_args)?;
        out.extend(seq_items(&part, "mapcat")?);
        interp.check_size(out.len())?;
    }
    vector_result(interp, out)
}

fn partition_all(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let n = positive_arg("partition-all", &args[0])?;
    let step = match args {
        [_, step, _] => positive_arg("partition-all", step)?,
        _ => n,
    };
    let items = seq_items(args.last().expect("arity checked"), "partition-all")?;
    let mut out = Vec::new();
    let mut i = 0;
    while i < items.len() {
        let end = (i + n).min(items.len());
        out.push(Value::vector(items[i..end].iter().cloned()));
        i += step;
    }
    vector_result(interp, out)
}

fn partition_by(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let mut out = Vec::new();
    let mut group = Vec::new();
    let mut last_key: Option<Value> = None;
    for item in seq_items(&args[1], "partition-by")? {
        let k = interp.call(&args[0], std::slice::from_ref(&item))?;
        if last_key.as_ref().is_some_and(|last| *last != k) {
            out.push(Value::vector(std::mem::take(&mut group)));
        }
        last_key = Some(k);
        group.push(item);
    }
    if !group.is_empty() {
        out.push(Value::vector(group));
    }
    vector_result(interp, out)
}

fn split_at(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let n = count_arg("split-at", &args[0])?;
    let items = seq_items(&args[1], "split-at")?;
    let n = n.min(items.len());
    interp.check_size(items.len())?;
    Ok(Value::vector([
        Value::vector(items[..n].iter().cloned()),
        Value::vector(items[n..].iter().cloned()),
    ]))
}

fn split_with(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let items = seq_items(&args[1], "split-with")?;
    let mut n = items.len();
    for (i, item) in items.iter().enumerate() {
        if !interp.call_truthy(&args[0], std::slice::from_ref(item))? {
            n = i;
            break;
        }
    }
    Ok(Value::vector([
        Value::vector(items[..n].iter().cloned()),
        Value::vector(items[n..].iter().cloned()),
    ]))
}

fn take_last(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let n = count_arg("take-last", &args[0])?;
    let items = seq_items(&args[1], "take-last")?;
    let start = items.len().saturating_sub(n);
    vector_or_nil(interp, items[start..].to_vec())
}

fn drop_last(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let (n, coll) = match args {
        [coll] => (1, coll),
        [n, coll] => (count_arg("drop-last", n)?, coll),
        _ => unreachable!("arity checked"),
    };
    let mut items = seq_items(coll, "drop-last")?;
    items.truncate(items.len().saturating_sub(n));
    vector_result(interp, items)
}

fn butlast(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let mut items = ordered_items("butlast", &args[0])?;
    items.pop();
    vector_or_nil(interp, items)
}

fn take_nth(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let n = positive_arg("take-nth", &args[0])?;
    let items = seq_items(&args[1], "take-nth")?;
    vector_result(interp, items.into_iter().step_by(n).collect())
}

fn dedupe(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let mut out: Vec<Value> = Vec::new();
    for item in seq_items(&args[0], "dedupe")? {
        if out.last() != Some(&item) {
            out.push(item);
        }
    }
    vector_result(interp, out)
}

fn distinct_by(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let mut seen = Set::new();
    let mut out = Vec::new();
    for item in seq_items(&args[1], "distinct-by")? {
        let k = key_of(interp, &args[0], &item)?;
        if seen.insert(k) {
            out.push(item);
        }
    }
    vector_result(interp, out)
}

fn reductions(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let f = &args[0];
    let (mut acc, items) = match args {
        [_, init, coll] => (init.clone(), seq_items(coll, "reductions")?),
        [_, coll] => {
            let mut items = seq_items(coll, "reductions")?.into_iter();
            match items.next() {
                Some(first) => (first, items.collect()),
                None => return Ok(Value::vector([interp.call(f, &[])?])),
            }
        }
        _ => unreachable!("arity checked"),
    };
    let mut out = Vec::with_capacity(items.len() + 1);
    out.push(acc.clone());
    for item in items {
        acc = interp.call(f, &[acc, item])?;
        if let Value::Reduced(done) = &acc {
            out.push((**done).clone());
            break;
        }
        out.push(acc.clone());
    }
    vector_result(interp, out)
}

fn ffirst(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let x = first(interp, args)?;
    first(interp, &[x])
}

fn fnext(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let x = next(interp, args)?;
    first(interp, &[x])
}

fn nfirst(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let x = first(interp, args)?;
    next(interp, &[x])
}

fn nnext(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let x = next(interp, args)?;
    next(interp, &[x])
}

fn nthrest(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let n = count_arg("nthrest", &args[1])?;
    let items = seq_items(&args[0], "nthrest")?;
    vector_result(interp, items.into_iter().skip(n).collect())
}

fn nthnext(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let n = count_arg("nthnext", &args[1])?;
    let items = seq_items(&args[0], "nthnext")?;
    vector_or_nil(interp, items.into_iter().skip(n).collect())
}

/// Only the finite `(repeat n x)`: there are no infinite sequences.
fn repeat(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let [n, x] = args else {
        return Err(Error::unsupported(
            "`(repeat x)` would be an infinite sequence, which is not supported",
        )
        .with_hint("give a count: `(repeat 3 x)`")
        .into());
    };
    let n = count_arg("repeat", n)?;
    interp.check_size(n)?;
    Ok(Value::vector(std::iter::repeat_n(x.clone(), n)))
}

fn interpose(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let items = seq_items(&args[1], "interpose")?;
    let mut out = Vec::with_capacity(items.len() * 2);
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(args[0].clone());
        }
        out.push(item);
    }
    vector_result(interp, out)
}

/// An empty collection of the same kind; nil for anything else (strings
/// included), as in Clojure.
fn empty(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(match &args[0] {
        Value::Vector(_) => Value::vector([]),
        Value::List(_) => Value::list([]),
        Value::Map(_) => Value::empty_map(),
        Value::Set(_) => Value::set(Set::new()),
        _ => Value::Nil,
    })
}

/// `x` in front of the items: a list stays a list, anything else gives
/// a vector.
fn cons(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    if let Value::List(items) = &args[1] {
        let mut items = (**items).clone();
        items.push_front(args[0].clone());
        interp.check_size(items.len())?;
        return Ok(Value::List(std::sync::Arc::new(items)));
    }
    let mut out = vec![args[0].clone()];
    out.extend(seq_items(&args[1], "cons")?);
    vector_result(interp, out)
}

/// The end `conj` adds at: the last item of a vector, the first of a list.
fn peek(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(match &args[0] {
        Value::Vector(v) => v.back().cloned().unwrap_or(Value::Nil),
        Value::List(v) => v.front().cloned().unwrap_or(Value::Nil),
        Value::Nil => Value::Nil,
        other => return Err(type_error("peek", "a vector or list", other).into()),
    })
}

/// Without the item `peek` sees. Popping an empty collection gives nil
/// (the specification's choice; Clojure throws).
fn pop(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(match &args[0] {
        Value::Vector(v) if v.is_empty() => Value::Nil,
        Value::List(v) if v.is_empty() => Value::Nil,
        Value::Vector(v) => Value::from_vector(v.take(v.len() - 1)),
        Value::List(v) => Value::List(std::sync::Arc::new(v.skip(1))),
        Value::Nil => Value::Nil,
        other => return Err(type_error("pop", "a vector or list", other).into()),
    })
}

/// Indices are clamped to the vector (the specification's choice;
/// Clojure throws when they are out of range).
fn subvec(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let Value::Vector(v) = &args[0] else {
        return Err(type_error("subvec", "a vector", &args[0]).into());
    };
    let clamp = |x: i64| (x.max(0) as usize).min(v.len());
    let start = clamp(expect_int("subvec", &args[1])?);
    let end = match args.get(2) {
        Some(e) => clamp(expect_int("subvec", e)?),
        None => v.len(),
    };
    if end <= start {
        return Ok(Value::vector([]));
    }
    Ok(Value::from_vector(v.skip(start).take(end - start)))
}

fn rseq(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    match &args[0] {
        Value::Vector(v) => vector_or_nil(interp, v.iter().rev().cloned().collect()),
        Value::Nil => Ok(Value::Nil),
        other => Err(type_error("rseq", "a vector", other).into()),
    }
}

/// The numbers of a collection; nil items are skipped (as `sum-by` skips
/// nil fields), anything else non-numeric is an error.
fn numbers(who: &str, coll: &Value) -> Result<Vec<Value>, Error> {
    let mut out = Vec::new();
    for item in seq_items(coll, who)? {
        match item {
            Value::Nil => {}
            v @ (Value::Int(_) | Value::Float(_)) => out.push(v),
            other => return Err(type_error(who, "numbers", &other)),
        }
    }
    Ok(out)
}

fn sum(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    sum_values("sum", &numbers("sum", &args[0])?)
}

fn avg(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let values = numbers("avg", &args[0])?;
    if values.is_empty() {
        return Ok(Value::Nil);
    }
    let total: f64 = values
        .iter()
        .map(|v| match v {
            Value::Int(n) => *n as f64,
            Value::Float(f) => *f,
            _ => 0.0,
        })
        .sum();
    Ok(Value::Float(total / values.len() as f64))
}

fn not_every(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    for item in seq_items(&args[1], "not-every?")? {
        if !interp.call_truthy(&args[0], std::slice::from_ref(&item))? {
            return Ok(Value::Bool(true));
        }
    }
    Ok(Value::Bool(false))
}

/// Every `n`-item combination, in order (a PTC-Lisp helper, like
/// `clojure.math.combinatorics/combinations`).
fn combinations(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let items = seq_items(&args[0], "combinations")?;
    let n = expect_int("combinations", &args[1])?;
    if n < 0 {
        return Err(
            Error::execution(format!("`combinations` needs a non-negative size, got {n}")).into(),
        );
    }
    let n = n as usize;
    if n > items.len() {
        return Ok(Value::vector([]));
    }
    let mut out = Vec::new();
    let mut idx: Vec<usize> = (0..n).collect();
    loop {
        interp.tick()?;
        out.push(Value::vector(idx.iter().map(|&i| items[i].clone())));
        interp.check_size(out.len())?;
        // Advance the rightmost index that still has room to move.
        let Some(pos) = (0..n).rev().find(|&i| idx[i] < items.len() - n + i) else {
            break;
        };
        idx[pos] += 1;
        for j in pos + 1..n {
            idx[j] = idx[j - 1] + 1;
        }
    }
    vector_result(interp, out)
}

/// Depth-first, pre-order nodes of a tree. Iterative, so deep trees cost
/// heap rather than stack; every node counts as a step.
fn tree_seq(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let (is_branch, children) = (&args[0], &args[1]);
    let mut out = Vec::new();
    let mut stack = vec![args[2].clone()];
    while let Some(node) = stack.pop() {
        interp.tick()?;
        let branch = key_of(interp, is_branch, &node)?.truthy();
        if branch {
            let kids = key_of(interp, children, &node)?;
            let mut kids = seq_items(&kids, "tree-seq")?;
            kids.reverse();
            stack.extend(kids);
        }
        out.push(node);
        interp.check_size(out.len() + stack.len())?;
    }
    vector_result(interp, out)
}

pub(super) fn register(r: &mut Registry) {
    r.alias("filterv", "filter");
    r.add("keep", "[f coll]", 1, 2, "The non-nil results of (f item); false is kept. `(keep #(when (odd? %) (* % %)) [1 2 3])` => `[1 9]`.", keep);
    r.add("keep-indexed", "[f coll]", 2, 2, "The non-nil results of (f index item). `(keep-indexed #(when (odd? %1) %2) [:a :b :c :d])` => `[:b :d]`.", keep_indexed);
    r.add("mapcat", "[f coll & colls]", 1, MANY, "Map f over the items and concatenate the resulting collections. `(mapcat (fn [x] [x x]) [1 2])` => `[1 1 2 2]`.", mapcat);
    r.add("partition-all", "[n step? coll]", 2, 3, "Groups of n items (every step items), keeping an incomplete last group. `(partition-all 2 [1 2 3])` => `[[1 2] [3]]`.", partition_all);
    r.add("partition-by", "[f coll]", 2, 2, "Split into runs of items for which (f item) stays the same. `(partition-by odd? [1 1 2 3])` => `[[1 1] [2] [3]]`.", partition_by);
    r.add(
        "split-at",
        "[n coll]",
        2,
        2,
        "`[(take n coll) (drop n coll)]`. `(split-at 2 [1 2 3])` => `[[1 2] [3]]`.",
        split_at,
    );
    r.add("split-with", "[pred coll]", 2, 2, "`[(take-while pred coll) (drop-while pred coll)]`. `(split-with pos? [1 -1 2])` => `[[1] [-1 2]]`.", split_with);
    r.add(
        "take-last",
        "[n coll]",
        2,
        2,
        "The last n items, or nil if there are none. `(take-last 2 [1 2 3])` => `[2 3]`.",
        take_last,
    );
    r.add(
        "drop-last",
        "[n? coll]",
        1,
        2,
        "All but the last n items (default 1). `(drop-last [1 2 3])` => `[1 2]`.",
        drop_last,
    );
    r.add(
        "butlast",
        "[coll]",
        1,
        1,
        "All but the last item, or nil if that leaves none. `(butlast [1 2 3])` => `[1 2]`.",
        butlast,
    );
    r.add(
        "take-nth",
        "[n coll]",
        2,
        2,
        "Every nth item, starting with the first. `(take-nth 2 [1 2 3 4 5])` => `[1 3 5]`.",
        take_nth,
    );
    r.add(
        "dedupe",
        "[coll]",
        1,
        1,
        "The items without consecutive duplicates. `(dedupe [1 1 2 1])` => `[1 2 1]`.",
        dedupe,
    );
    r.add("distinct-by", "[key coll]", 2, 2, "The first item for each distinct (key item). `(distinct-by :k [{:k 1 :v 1} {:k 1 :v 2}])` => `[{:k 1, :v 1}]`.", distinct_by);
    r.add(
        "reductions",
        "[f init? coll]",
        2,
        3,
        "The intermediate values of a `reduce`. `(reductions + [1 2 3])` => `[1 3 6]`.",
        reductions,
    );
    r.add(
        "ffirst",
        "[coll]",
        1,
        1,
        "`(first (first coll))`. `(ffirst [[1 2] [3]])` => `1`.",
        ffirst,
    );
    r.add(
        "fnext",
        "[coll]",
        1,
        1,
        "`(first (next coll))`. `(fnext [1 2 3])` => `2`.",
        fnext,
    );
    r.add(
        "nfirst",
        "[coll]",
        1,
        1,
        "`(next (first coll))`. `(nfirst [[1 2] [3]])` => `[2]`.",
        nfirst,
    );
    r.add(
        "nnext",
        "[coll]",
        1,
        1,
        "`(next (next coll))`. `(nnext [1 2 3])` => `[3]`.",
        nnext,
    );
    r.add(
        "nthrest",
        "[coll n]",
        2,
        2,
        "The items after the first n. `(nthrest [1 2 3] 2)` => `[3]`.",
        nthrest,
    );
    r.add(
        "nthnext",
        "[coll n]",
        2,
        2,
        "The items after the first n, or nil if none. `(nthnext [1 2] 2)` => `nil`.",
        nthnext,
    );
    r.add(
        "repeat",
        "[n x]",
        1,
        2,
        "A vector of n copies of x (only the finite form). `(repeat 3 :a)` => `[:a :a :a]`.",
        repeat,
    );
    r.add("interpose", "[sep coll]", 2, 2, "The items with sep between each two. `(interpose \", \" [\"a\" \"b\"])` => `[\"a\" \", \" \"b\"]`.", interpose);
    r.add(
        "empty",
        "[coll]",
        1,
        1,
        "An empty collection of the same kind, or nil. `(empty {:a 1})` => `{}`.",
        empty,
    );
    r.add(
        "cons",
        "[x coll]",
        2,
        2,
        "x followed by the items of coll. `(cons 0 [1 2])` => `[0 1 2]`.",
        cons,
    );
    r.add(
        "peek",
        "[coll]",
        1,
        1,
        "The last item of a vector (first of a list), or nil. `(peek [1 2])` => `2`.",
        peek,
    );
    r.add("pop", "[coll]", 1, 1, "A vector without its last item (a list without its first); nil when empty. `(pop [1 2])` => `[1]`.", pop);
    r.add("subvec", "[v start end?]", 2, 3, "The items from start to end (exclusive), indices clamped to the vector. `(subvec [1 2 3] 1)` => `[2 3]`.", subvec);
    r.add(
        "rseq",
        "[v]",
        1,
        1,
        "The items of a vector in reverse, or nil if empty. `(rseq [1 2 3])` => `[3 2 1]`.",
        rseq,
    );
    r.add(
        "sum",
        "[coll]",
        1,
        1,
        "Sum of the numbers (nil items skipped); 0 when empty. `(sum [1 2 3])` => `6`.",
        sum,
    );
    r.add("avg", "[coll]", 1, 1, "Average of the numbers as a float (nil items skipped); nil when empty. `(avg [1 2])` => `1.5`.", avg);
    r.add(
        "not-every?",
        "[pred coll]",
        2,
        2,
        "True if pred fails for some item. `(not-every? pos? [1 -1])` => `true`.",
        not_every,
    );
    r.add(
        "combinations",
        "[coll n]",
        2,
        2,
        "Every n-item combination, in order. `(combinations [1 2 3] 2)` => `[[1 2] [1 3] [2 3]]`.",
        combinations,
    );
    r.add("tree-seq", "[branch? children root]", 3, 3, "The nodes of a tree, depth first: children of branch nodes come from (children node). `(tree-seq vector? seq [1 [2]])` => `[[1 [2]] 1 [2] 2]`.", tree_seq);
}
