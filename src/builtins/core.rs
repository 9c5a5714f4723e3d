//! Shared helpers for builtins (sequence views, lookups, argument errors)
//! and the general-purpose builtins: `println`, `str`, `pr-str`,
//! `identity`, `type`, `apply`, `pmap`, `pcalls`.

use std::borrow::Cow;

use crate::error::{Error, ErrorKind};
use crate::eval::{EvalResult, Interp};
use crate::meter::metered;
use crate::value::Value;

use super::{Registry, MANY};

/// The items of anything sequential: vectors, lists, sets, maps (as
/// `[key value]` vectors), strings (as one-character strings) and nil
/// (empty). `who` names the function for the error message.
// The items are collected under the meter: a million-entry map made into
// entries stops at the deadline (the caller's result is then replaced by
// the meter's error).
pub(crate) fn seq_items(v: &Value, who: &str) -> Result<Vec<Value>, Error> {
    if let Some(text) = v.as_str() {
        return Ok(metered(text.chars()).map(Value::char).collect());
    }
    Ok(match v {
        Value::Nil => Vec::new(),
        Value::Vector(items) | Value::List(items) => metered(items.iter()).cloned().collect(),
        Value::Set(items) => metered(items.iter()).cloned().collect(),
        Value::Map(m) => metered(m.iter())
            .map(|(k, v)| Value::vector([k.clone(), v.clone()]))
            .collect(),
        other => {
            return Err(Error::type_error(format!(
                "`{who}` expected a collection, got {}",
                other.describe()
            )))
        }
    })
}

/// The items of a collection as a slice: borrowed from a vector or list
/// held as one array (no copy, no reference counting per item), collected
/// as [`seq_items`] collects them otherwise.
pub(crate) fn seq_view<'v>(v: &'v Value, who: &str) -> Result<Items<'v>, Error> {
    if let Value::Vector(items) | Value::List(items) = v {
        if let Some(slice) = items.as_slice() {
            return Ok(Items::Borrowed(slice));
        }
    }
    seq_items(v, who).map(Items::Owned)
}

/// A collection's items, borrowed or collected ([`seq_view`]).
pub(crate) enum Items<'v> {
    Borrowed(&'v [Value]),
    Owned(Vec<Value>),
}

impl std::ops::Deref for Items<'_> {
    type Target = [Value];

    fn deref(&self) -> &[Value] {
        match self {
            Items::Borrowed(s) => s,
            Items::Owned(v) => v,
        }
    }
}

/// The character of a one-character string, else `None`.
pub(crate) fn single_char(v: &Value) -> Option<char> {
    let mut chars = v.as_str()?.chars();
    let c = chars.next()?;
    chars.next().is_none().then_some(c)
}

/// `(get coll key default)`: maps with flexible keyword/string keys, sets
/// by membership, vectors and strings by index, anything else `default`.
pub(crate) fn get(coll: &Value, key: &Value, default: Value) -> Value {
    get_found(coll, key).unwrap_or(default)
}

/// The value under `key`, or None when there is none (a key present with a
/// nil value gives `Some(nil)`).
pub(crate) fn get_found(coll: &Value, key: &Value) -> Option<Value> {
    match get_ref(coll, key) {
        Ok(found) => found.cloned(),
        // A string's character is a new value.
        Err(NeedsCopy) => match (coll.as_str(), key) {
            (Some(text), Value::Int(i)) => usize::try_from(*i)
                .ok()
                .and_then(|i| text.chars().nth(i))
                .map(Value::char),
            _ => None,
        },
    }
}

/// Where `path` leads from `coll`, as `get-in` follows it: in place
/// through maps, sets and vectors, so only a value found past a string
/// (a character, a new value) is owned. `None` for a missing key (a key
/// present with a nil value gives nil).
pub(crate) fn get_in_ref<'a>(coll: &'a Value, path: &'a [Value]) -> Option<Cow<'a, Value>> {
    let mut cur = coll;
    for (i, key) in path.iter().enumerate() {
        match get_ref(cur, key) {
            Ok(Some(v)) => cur = v,
            Ok(None) => return None,
            Err(NeedsCopy) => {
                let mut owned = get_found(cur, key)?;
                for key in &path[i + 1..] {
                    owned = get_found(&owned, key)?;
                }
                return Some(Cow::Owned(owned));
            }
        }
    }
    Some(Cow::Borrowed(cur))
}

/// A lookup that [`get_ref`] cannot answer with a reference.
pub(crate) struct NeedsCopy;

/// Where `key` leads in `coll`, as [`get_found`] finds it, by reference
/// (a string's characters are not stored as values: `NeedsCopy`).
#[inline]
pub(crate) fn get_ref<'a>(coll: &'a Value, key: &'a Value) -> Result<Option<&'a Value>, NeedsCopy> {
    Ok(match coll {
        Value::Map(m) => m.get_flexible(key),
        Value::Set(s) => s.get(key),
        Value::Vector(items) | Value::List(items) => match key {
            Value::Int(i) => usize::try_from(*i).ok().and_then(|i| items.get(i)),
            _ => None,
        },
        Value::Str(_) | Value::ShortStr(_) => return Err(NeedsCopy),
        _ => None,
    })
}

/// The field `key` names in `item`, by reference, or `None` where `get`
/// would give nil. A string item has no field under a keyword or string
/// key, so its `NeedsCopy` (only an index reaches a character) is `None`
/// here too: callers pass keyword or string keys.
#[inline]
pub(crate) fn field_ref<'a>(item: &'a Value, key: &'a Value) -> Option<&'a Value> {
    get_ref(item, key).unwrap_or(None)
}

/// A type error naming the function, what it wanted and what it got.
pub(crate) fn type_error(who: &str, expected: &str, got: &Value) -> Error {
    Error::type_error(format!(
        "`{who}` expected {expected}, got {}",
        got.describe()
    ))
}

pub(crate) fn expect_int(who: &str, v: &Value) -> Result<i64, Error> {
    match v {
        Value::Int(n) => Ok(*n),
        other => Err(type_error(who, "an integer", other)),
    }
}

pub(crate) fn expect_str<'a>(who: &str, v: &'a Value) -> Result<&'a str, Error> {
    v.as_str().ok_or_else(|| type_error(who, "a string", v))
}

pub(crate) fn expect_fn(who: &str, v: &Value) -> Result<(), Error> {
    match v {
        Value::Native(_) | Value::Fn(_) | Value::Keyword(_) | Value::Map(_) | Value::Set(_) => {
            Ok(())
        }
        other => Err(type_error(who, "a function", other)),
    }
}

/// A vector result, checked against the collection-size limit.
/// Fail before an operation builds or visits as many items as `v` has
/// expanded (shared structure counted each time it occurs) when that is
/// more than `limit`; the meter's error if it stopped the count.
pub(crate) fn check_expanded(v: &Value, limit: usize, what: &str) -> EvalResult<()> {
    if crate::meter::expanded_size(v, limit).is_some() {
        return Ok(());
    }
    Err(crate::meter::error()
        .unwrap_or_else(|| {
            Error::new(
                ErrorKind::MemoryLimit,
                format!("{what} would expand its input to more than {limit} items"),
            )
            .with_hint("values that share structure can be far larger than they look; process less at once")
        })
        .into())
}

pub(crate) fn vector_result(interp: &Interp<'_>, items: Vec<Value>) -> EvalResult {
    interp.check_size(items.len())?;
    Ok(Value::vector(items))
}

/// Join values as `println` and `str` do, writing at most `limit` bytes
/// (more only by the last character). Returns the text and whether it is
/// complete.
fn joined(args: &[Value], sep: &str, readable: bool, limit: usize) -> (String, bool) {
    let mut out = String::new();
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        let complete = if readable {
            crate::value::write_pr_bounded(&mut out, a, limit)
        } else {
            crate::value::write_str_bounded(&mut out, a, limit)
        };
        if !complete {
            return (out, false);
        }
    }
    let complete = out.len() < limit;
    (out, complete)
}

/// The text of a `println`/`prn` call: only a little more than the
/// per-call truncation is ever built.
fn print_args(interp: &mut Interp<'_>, args: &[Value], readable: bool) -> EvalResult {
    let limit = interp
        .limits
        .println_truncate
        .saturating_mul(4)
        .saturating_add(4);
    let (line, _) = joined(args, " ", readable, limit);
    interp.print_line(line)?;
    Ok(Value::Nil)
}

fn println(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    print_args(interp, args, false)
}

fn prn(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    print_args(interp, args, true)
}

/// Text for `str`/`pr-str`, an error past the collection-size limit.
fn text(interp: &mut Interp<'_>, args: &[Value], sep: &str, readable: bool) -> EvalResult {
    let limit = interp.limits.max_collection.saturating_add(1);
    let (s, _) = joined(args, sep, readable, limit);
    interp.check_size(s.len())?;
    Ok(Value::from(s))
}

fn str_fn(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    text(interp, args, "", false)
}

fn pr_str_fn(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    text(interp, args, " ", true)
}

fn identity(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(args[0].clone())
}

/// The specification's type keywords (§8.7): `:number` for integers and
/// floats alike, `:vector` for lists (there is no list type), `:unknown`
/// for what it does not classify (quoted symbols, vars), nil for nil.
fn type_fn(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(match &args[0] {
        Value::Nil => Value::Nil,
        Value::Int(_) | Value::Float(_) => Value::keyword("number"),
        Value::List(_) => Value::keyword("vector"),
        Value::Symbol(_) | Value::Var(_) | Value::Reduced(_) => Value::keyword("unknown"),
        other => Value::keyword(other.type_name()),
    })
}

fn apply(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let (f, rest) = args.split_first().expect("arity checked");
    let (last, fixed) = rest.split_last().expect("arity checked");
    // `(apply f coll)` over a vector: its items are the arguments as they
    // are, no copy.
    if let (Value::Vector(_) | Value::List(_), []) = (last, fixed) {
        return interp.call(f, &seq_view(last, "apply")?);
    }
    let spread = match last {
        Value::Vector(_) | Value::List(_) | Value::Set(_) | Value::Map(_) => {
            seq_items(last, "apply")?
        }
        Value::Nil => Vec::new(),
        other => {
            return Err(type_error("apply", "a collection as its last argument", other).into())
        }
    };
    let mut all = fixed.to_vec();
    all.extend(spread);
    interp.call(f, &all)
}

/// `pmap` runs its branches one after another: results and errors are
/// what a parallel run gives, `def`s in branches are discarded and their
/// `println` output is not captured (as the specification says).
/// `pmap` runs its calls concurrently (see `Interp::call_parallel`):
/// results in order, `def`s in branches discarded, their `println` output
/// not captured, as the specification says.
///
/// With several collections f takes one item of each, stopping at the
/// shortest, as `map` does (specification §8.1).
fn pmap(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let f = &args[0];
    let calls = if args.len() == 2 {
        metered(seq_items(&args[1], "pmap")?.into_iter())
            .map(|item| (f.clone(), vec![item]))
            .collect()
    } else {
        let colls = args[1..]
            .iter()
            .map(|c| seq_items(c, "pmap"))
            .collect::<Result<Vec<_>, _>>()?;
        let n = colls.iter().map(Vec::len).min().unwrap_or(0);
        metered(0..n)
            .map(|i| (f.clone(), colls.iter().map(|c| c[i].clone()).collect()))
            .collect()
    };
    if crate::meter::tripped() {
        // The calls are not all listed: the meter's error replaces any
        // result.
        return Ok(Value::Nil);
    }
    let out = interp.call_parallel(calls, |_, e| e)?;
    vector_result(interp, out)
}

fn pcalls(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let calls = args.iter().map(|f| (f.clone(), Vec::new())).collect();
    let out = interp.call_parallel(calls, |i, e| {
        let message = format!("`pcalls` function {i} failed: {}", e.message());
        let mut reworded = Error::new(e.kind(), message);
        if let Some(span) = e.span() {
            reworded = reworded.with_span(span);
        }
        reworded
    })?;
    vector_result(interp, out)
}

/// `(data "first name")`: the input value of a key that is not a symbol
/// (`data/first name` cannot be written); also takes a keyword.
fn data(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    match args[0].as_name() {
        Some(name) => interp.data(name),
        None => Err(type_error("data", "the name of an input value (a string)", &args[0]).into()),
    }
}

pub(super) fn register(r: &mut Registry) {
    r.add("data", "[key]", 1, 1, "The input value under `key`, for keys that are not symbols (`data/first name` cannot be written); `(data \"order_items\")` is `data/order_items`. The data map as a whole is not a value. `(data \"first name\")` => the value of the JSON key \"first name\".", data);
    r.add("println", "[& xs]", 0, MANY, "Print the values separated by spaces (strings unquoted) as one output entry; returns nil. `(println \"count:\" 3)` prints `count: 3`.", println);
    r.add(
        "prn",
        "[& xs]",
        0,
        MANY,
        "Like `println` but prints values readably (strings quoted). `(prn \"a\")` prints `\"a\"`.",
        prn,
    );
    r.add("str", "[& xs]", 0, MANY, "Concatenate the values as text; nil is empty, strings unquoted. `(str \"a\" 1 :b nil)` => `\"a1:b\"`.", str_fn);
    r.add("pr-str", "[& xs]", 0, MANY, "The readable text of the values, separated by spaces. `(pr-str \"a\" [1])` => `\"\\\"a\\\" [1]\"`.", pr_str_fn);
    r.add(
        "identity",
        "[x]",
        1,
        1,
        "Return the argument. `(filter identity [1 nil 2])` => `[1 2]`.",
        identity,
    );
    r.add(
        "type",
        "[x]",
        1,
        1,
        "The type of a value as a keyword: `:number`, `:string`, `:keyword`, `:boolean`, `:vector`, `:map`, `:set`, `:function`, `:regex` (`:unknown` otherwise); nil for nil. `(type 1)` => `:number`.",
        type_fn,
    );
    r.add(
        "apply",
        "[f & args coll]",
        2,
        MANY,
        "Call f with the arguments, spreading the last (a collection). `(apply + 1 [2 3])` => `6`.",
        apply,
    );
    r.add("pmap", "[f coll & colls]", 2, MANY, "Like `map`, calling f on the items concurrently (worth it for tool calls); with several collections f takes one item of each, up to the shortest; results in order, defs inside are discarded. `(pmap + [1 2] [10 20])` => `[11 22]`.", pmap);
    r.add("pcalls", "[& fs]", 0, MANY, "Call the zero-argument functions concurrently; a vector of the results in order. `(pcalls #(+ 1 1) #(* 2 3))` => `[2 6]`.", pcalls);
}
