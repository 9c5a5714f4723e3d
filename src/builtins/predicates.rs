//! Type, numeric and logical predicates.

use crate::error::Error;
use crate::eval::{EvalResult, Interp};
use crate::value::Value;

use super::core::type_error;
use super::{Registry, MANY};

macro_rules! type_predicate {
    ($fn_name:ident, $pattern:pat) => {
        fn $fn_name(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
            Ok(Value::Bool(matches!(&args[0], $pattern)))
        }
    };
}

type_predicate!(is_nil, Value::Nil);
type_predicate!(
    is_some,
    Value::Bool(_)
        | Value::Int(_)
        | Value::Float(_)
        | Value::Str(_)
        | Value::ShortStr(_)
        | Value::Keyword(_)
        | Value::Symbol(_)
        | Value::Vector(_)
        | Value::List(_)
        | Value::Map(_)
        | Value::Set(_)
        | Value::Native(_)
        | Value::Fn(_)
        | Value::Var(_)
        | Value::Regex(_)
);
type_predicate!(is_boolean, Value::Bool(_));
type_predicate!(is_true, Value::Bool(true));
type_predicate!(is_false, Value::Bool(false));
type_predicate!(is_number, Value::Int(_) | Value::Float(_));
type_predicate!(is_int, Value::Int(_));
type_predicate!(is_float, Value::Float(_));
type_predicate!(is_string, Value::Str(_) | Value::ShortStr(_));
type_predicate!(is_keyword, Value::Keyword(_));
type_predicate!(is_symbol, Value::Symbol(_));
type_predicate!(is_vector, Value::Vector(_));
type_predicate!(is_list, Value::List(_));
type_predicate!(is_map, Value::Map(_));
type_predicate!(is_set, Value::Set(_));
type_predicate!(
    is_coll,
    Value::Vector(_) | Value::List(_) | Value::Map(_) | Value::Set(_)
);
type_predicate!(is_sequential, Value::Vector(_) | Value::List(_));
type_predicate!(is_fn, Value::Native(_) | Value::Fn(_));
type_predicate!(is_regex, Value::Regex(_));
type_predicate!(
    is_ifn,
    Value::Native(_)
        | Value::Fn(_)
        | Value::Keyword(_)
        | Value::Map(_)
        | Value::Set(_)
        | Value::Vector(_)
        | Value::Var(_)
);
// There are no lazy sequences: vectors and lists are the sequences.
type_predicate!(is_seq, Value::Vector(_) | Value::List(_));
type_predicate!(
    is_seqable,
    Value::Nil
        | Value::Vector(_)
        | Value::List(_)
        | Value::Map(_)
        | Value::Set(_)
        | Value::Str(_)
        | Value::ShortStr(_)
);
type_predicate!(is_associative, Value::Vector(_) | Value::Map(_));
type_predicate!(is_indexed, Value::Vector(_));
type_predicate!(is_reversible, Value::Vector(_));
type_predicate!(
    is_counted,
    Value::Vector(_) | Value::List(_) | Value::Map(_) | Value::Set(_)
);
type_predicate!(is_nat_int, Value::Int(0..));
type_predicate!(is_pos_int, Value::Int(1..));
type_predicate!(is_neg_int, Value::Int(..0));

fn is_char(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(super::core::single_char(&args[0]).is_some()))
}

fn boolean(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(args[0].truthy()))
}

fn not(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(!args[0].truthy()))
}

fn number(who: &str, v: &Value) -> Result<f64, Error> {
    match v {
        Value::Int(n) => Ok(*n as f64),
        Value::Float(f) => Ok(*f),
        other => Err(type_error(who, "a number", other)),
    }
}

fn integer(who: &str, v: &Value) -> Result<i64, Error> {
    match v {
        Value::Int(n) => Ok(*n),
        other => Err(type_error(who, "an integer", other)),
    }
}

fn is_zero(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(number("zero?", &args[0])? == 0.0))
}

fn is_pos(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(number("pos?", &args[0])? > 0.0))
}

fn is_neg(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(number("neg?", &args[0])? < 0.0))
}

/// The parity of an integer or a whole float (specification §8.8: `(even?
/// 4.0)` is true); None for a float with a fraction, an infinity or NaN
/// (both predicates are then false). Anything else is a type error.
fn parity(who: &str, v: &Value) -> Result<Option<i64>, Error> {
    match v {
        Value::Float(f) if f.is_finite() && f.fract() == 0.0 => Ok(Some((f % 2.0).abs() as i64)),
        Value::Float(_) => Ok(None),
        other => integer(who, other).map(|n| Some(n.rem_euclid(2))),
    }
}

fn is_even(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(parity("even?", &args[0])? == Some(0)))
}

fn is_odd(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(parity("odd?", &args[0])? == Some(1)))
}

/// For `sorted?`, `ratio?` and `decimal?`: there are no sorted
/// collections, ratios or big decimals.
fn never(_: &mut Interp<'_>, _: &[Value]) -> EvalResult {
    Ok(Value::Bool(false))
}

fn any(_: &mut Interp<'_>, _: &[Value]) -> EvalResult {
    Ok(Value::Bool(true))
}

fn is_nan(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(number("NaN?", &args[0])?.is_nan()))
}

fn is_infinite(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(number("infinite?", &args[0])?.is_infinite()))
}

fn is_distinct(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let mut seen = crate::value::Set::new();
    for a in args {
        if !seen.insert(a.clone()) {
            return Ok(Value::Bool(false));
        }
    }
    Ok(Value::Bool(true))
}

pub(super) fn register(r: &mut Registry) {
    r.add(
        "nil?",
        "[x]",
        1,
        1,
        "True if x is nil. `(nil? nil)` => `true`.",
        is_nil,
    );
    r.add(
        "some?",
        "[x]",
        1,
        1,
        "True if x is not nil. `(some? false)` => `true`.",
        is_some,
    );
    r.add(
        "boolean?",
        "[x]",
        1,
        1,
        "True for true and false. `(boolean? false)` => `true`.",
        is_boolean,
    );
    r.add(
        "true?",
        "[x]",
        1,
        1,
        "True if x is exactly true. `(true? 1)` => `false`.",
        is_true,
    );
    r.add(
        "false?",
        "[x]",
        1,
        1,
        "True if x is exactly false. `(false? nil)` => `false`.",
        is_false,
    );
    r.add(
        "number?",
        "[x]",
        1,
        1,
        "True for integers and floats. `(number? 1.5)` => `true`.",
        is_number,
    );
    r.add(
        "int?",
        "[x]",
        1,
        1,
        "True for integers. `(int? 1)` => `true`.",
        is_int,
    );
    r.alias("integer?", "int?");
    r.add(
        "float?",
        "[x]",
        1,
        1,
        "True for floats. `(float? 1.0)` => `true`.",
        is_float,
    );
    r.alias("double?", "float?");
    r.add(
        "string?",
        "[x]",
        1,
        1,
        "True for strings. `(string? \"a\")` => `true`.",
        is_string,
    );
    r.add(
        "char?",
        "[x]",
        1,
        1,
        "True for one-character strings (characters are strings). `(char? \\a)` => `true`.",
        is_char,
    );
    r.add(
        "keyword?",
        "[x]",
        1,
        1,
        "True for keywords. `(keyword? :a)` => `true`.",
        is_keyword,
    );
    r.add(
        "symbol?",
        "[x]",
        1,
        1,
        "True for (quoted) symbols. `(symbol? 'a)` => `true`.",
        is_symbol,
    );
    r.add(
        "vector?",
        "[x]",
        1,
        1,
        "True for vectors. `(vector? [1])` => `true`.",
        is_vector,
    );
    r.add(
        "list?",
        "[x]",
        1,
        1,
        "True for lists. `(list? '(1))` => `true`.",
        is_list,
    );
    r.add(
        "map?",
        "[x]",
        1,
        1,
        "True for maps. `(map? {})` => `true`.",
        is_map,
    );
    r.add(
        "set?",
        "[x]",
        1,
        1,
        "True for sets. `(set? #{1})` => `true`.",
        is_set,
    );
    r.add(
        "coll?",
        "[x]",
        1,
        1,
        "True for vectors, lists, maps and sets (not strings). `(coll? {:a 1})` => `true`.",
        is_coll,
    );
    r.add(
        "sequential?",
        "[x]",
        1,
        1,
        "True for vectors and lists. `(sequential? [1])` => `true`.",
        is_sequential,
    );
    r.add(
        "fn?",
        "[x]",
        1,
        1,
        "True for functions. `(fn? inc)` => `true`.",
        is_fn,
    );
    r.add("ifn?", "[x]", 1, 1, "True for anything that can be called: functions, keywords, maps, sets and vectors. `(ifn? :a)` => `true`.", is_ifn);
    r.add(
        "regex?",
        "[x]",
        1,
        1,
        "True for regexes. `(regex? #\"a\")` => `true`.",
        is_regex,
    );
    r.add(
        "boolean",
        "[x]",
        1,
        1,
        "False for nil and false, true for anything else. `(boolean 0)` => `true`.",
        boolean,
    );
    r.add(
        "not",
        "[x]",
        1,
        1,
        "True if x is nil or false. `(not nil)` => `true`.",
        not,
    );
    r.add(
        "zero?",
        "[x]",
        1,
        1,
        "True if the number is zero. `(zero? 0)` => `true`.",
        is_zero,
    );
    r.add(
        "pos?",
        "[x]",
        1,
        1,
        "True if the number is above zero. `(pos? 3)` => `true`.",
        is_pos,
    );
    r.add(
        "neg?",
        "[x]",
        1,
        1,
        "True if the number is below zero. `(neg? -3)` => `true`.",
        is_neg,
    );
    r.add(
        "even?",
        "[n]",
        1,
        1,
        "True if the integer is even (floats are an error). `(even? 4)` => `true`.",
        is_even,
    );
    r.add(
        "odd?",
        "[n]",
        1,
        1,
        "True if the integer is odd. `(odd? 3)` => `true`.",
        is_odd,
    );
    r.add(
        "any?",
        "[x]",
        1,
        1,
        "Always true. `(any? nil)` => `true`.",
        any,
    );
    r.add(
        "distinct?",
        "[x & ys]",
        1,
        MANY,
        "True if no two arguments are equal. `(distinct? 1 2 1)` => `false`.",
        is_distinct,
    );
    r.add("seq?", "[x]", 1, 1, "True for vectors and lists, the sequences of PTC-Lisp (there are no lazy sequences). `(seq? [1])` => `true`.", is_seq);
    r.add(
        "seqable?",
        "[x]",
        1,
        1,
        "True for what `seq` accepts: collections, strings and nil. `(seqable? \"ab\")` => `true`.",
        is_seqable,
    );
    r.add(
        "associative?",
        "[x]",
        1,
        1,
        "True for maps and vectors (what `assoc` accepts). `(associative? [1])` => `true`.",
        is_associative,
    );
    r.add(
        "indexed?",
        "[x]",
        1,
        1,
        "True for vectors. `(indexed? [1])` => `true`.",
        is_indexed,
    );
    r.add(
        "reversible?",
        "[x]",
        1,
        1,
        "True for vectors (what `rseq` accepts). `(reversible? [1])` => `true`.",
        is_reversible,
    );
    r.add(
        "counted?",
        "[x]",
        1,
        1,
        "True for vectors, lists, maps and sets. `(counted? {})` => `true`.",
        is_counted,
    );
    r.add(
        "sorted?",
        "[x]",
        1,
        1,
        "Always false: there are no sorted collections. `(sorted? [1 2])` => `false`.",
        never,
    );
    r.add(
        "map-entry?",
        "[x]",
        1,
        1,
        "Always false: a map entry is an ordinary two-item vector. `(map-entry? (first {:a 1}))` => `false`.",
        never,
    );
    r.add(
        "nat-int?",
        "[x]",
        1,
        1,
        "True for integers of zero or more. `(nat-int? 0)` => `true`.",
        is_nat_int,
    );
    r.add(
        "pos-int?",
        "[x]",
        1,
        1,
        "True for integers above zero. `(pos-int? 0)` => `false`.",
        is_pos_int,
    );
    r.add(
        "neg-int?",
        "[x]",
        1,
        1,
        "True for integers below zero. `(neg-int? -1)` => `true`.",
        is_neg_int,
    );
    r.add(
        "NaN?",
        "[x]",
        1,
        1,
        "True if the number is NaN. `(NaN? ##NaN)` => `true`.",
        is_nan,
    );
    r.add(
        "infinite?",
        "[x]",
        1,
        1,
        "True if the number is positive or negative infinity. `(infinite? ##Inf)` => `true`.",
        is_infinite,
    );
    r.add(
        "rational?",
        "[x]",
        1,
        1,
        "True for integers (there are no ratios). `(rational? 1)` => `true`.",
        is_int,
    );
    r.add(
        "ratio?",
        "[x]",
        1,
        1,
        "Always false: there are no ratios. `(ratio? 1)` => `false`.",
        never,
    );
    r.add(
        "decimal?",
        "[x]",
        1,
        1,
        "Always false: there are no big decimals. `(decimal? 1.5)` => `false`.",
        never,
    );
}
