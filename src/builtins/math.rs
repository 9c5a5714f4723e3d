//! Arithmetic, numeric comparison and rounding.
//!
//! Integers are 64-bit and overflow is an error (as Clojure's `+`);
//! mixing an integer with a float gives a float; `/` always gives a float
//! (the specification's choice), so division by zero is `##Inf`/`##NaN`.

use std::cmp::Ordering;

use crate::error::Error;
use crate::eval::{EvalResult, Interp};
use crate::value::{compare, Value};

use super::core::type_error;
use super::{Registry, MANY};

#[derive(Clone, Copy)]
enum Num {
    I(i64),
    F(f64),
}

fn num(who: &str, v: &Value) -> Result<Num, Error> {
    match v {
        Value::Int(n) => Ok(Num::I(*n)),
        Value::Float(f) => Ok(Num::F(*f)),
        other => Err(type_error(who, "a number", other)),
    }
}

fn to_f(n: Num) -> f64 {
    match n {
        Num::I(i) => i as f64,
        Num::F(f) => f,
    }
}

fn value(n: Num) -> Value {
    match n {
        Num::I(i) => Value::Int(i),
        Num::F(f) => Value::Float(f),
    }
}

fn overflow(who: &str) -> Error {
    Error::arithmetic(format!("Integer overflow in `{who}`"))
}

fn fold(
    who: &'static str,
    args: &[Value],
    init: i64,
    int_op: fn(i64, i64) -> Option<i64>,
    float_op: fn(f64, f64) -> f64,
) -> EvalResult {
    let mut acc = Num::I(init);
    for (i, a) in args.iter().enumerate() {
        let n = num(who, a)?;
        acc = if i == 0 && args.len() > 1 {
            n
        } else {
            match (acc, n) {
                (Num::I(x), Num::I(y)) => Num::I(int_op(x, y).ok_or_else(|| overflow(who))?),
                (x, y) => Num::F(float_op(to_f(x), to_f(y))),
            }
        };
    }
    Ok(value(acc))
}

fn add(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    if let [Value::Int(a), Value::Int(b)] = args {
        return Ok(Value::Int(a.checked_add(*b).ok_or_else(|| overflow("+"))?));
    }
    fold("+", args, 0, i64::checked_add, |a, b| a + b)
}

fn mul(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    if let [Value::Int(a), Value::Int(b)] = args {
        return Ok(Value::Int(a.checked_mul(*b).ok_or_else(|| overflow("*"))?));
    }
    fold("*", args, 1, i64::checked_mul, |a, b| a * b)
}

fn sub(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    if let [Value::Int(a), Value::Int(b)] = args {
        return Ok(Value::Int(a.checked_sub(*b).ok_or_else(|| overflow("-"))?));
    }
    if let [x] = args {
        return match num("-", x)? {
            Num::I(i) => Ok(Value::Int(i.checked_neg().ok_or_else(|| overflow("-"))?)),
            Num::F(f) => Ok(Value::Float(-f)),
        };
    }
    fold("-", args, 0, i64::checked_sub, |a, b| a - b)
}

/// Always a float (specification §8.4). An integer zero divisor while
/// every operand so far is an integer is an arithmetic error, as in
/// Clojure; with a float among them, IEEE 754 gives `##Inf`, `##-Inf`
/// or `##NaN`.
fn div(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let first = num("/", &args[0])?;
    let divide_by_zero = || {
        Error::arithmetic("Divide by zero: `/` with an integer zero divisor").with_hint(
            "divide by a float, `(/ x 0.0)`, for ##Inf, or test the divisor with `zero?` first",
        )
    };
    if args.len() == 1 {
        if matches!(first, Num::I(0)) {
            return Err(divide_by_zero().into());
        }
        return Ok(Value::Float(1.0 / to_f(first)));
    }
    let mut integers = matches!(first, Num::I(_));
    let mut acc = to_f(first);
    for a in &args[1..] {
        let d = num("/", a)?;
        match d {
            Num::I(0) if integers => return Err(divide_by_zero().into()),
            Num::I(_) => {}
            Num::F(_) => integers = false,
        }
        acc /= to_f(d);
    }
    Ok(Value::Float(acc))
}

fn int_division(
    who: &'static str,
    args: &[Value],
    op: fn(i64, i64) -> Option<i64>,
    fop: fn(f64, f64) -> f64,
) -> EvalResult {
    let (a, b) = (num(who, &args[0])?, num(who, &args[1])?);
    match (a, b) {
        (Num::I(_), Num::I(0)) => {
            Err(Error::arithmetic(format!("Division by zero in `{who}`")).into())
        }
        (Num::I(x), Num::I(y)) => Ok(Value::Int(op(x, y).ok_or_else(|| overflow(who))?)),
        (x, y) => Ok(Value::Float(fop(to_f(x), to_f(y)))),
    }
}

fn mod_fn(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    int_division(
        "mod",
        args,
        |x, y| {
            x.checked_rem(y).map(|r| {
                if r != 0 && (r < 0) != (y < 0) {
                    r + y
                } else {
                    r
                }
            })
        },
        |x, y| {
            let r = x % y;
            if r != 0.0 && (r < 0.0) != (y < 0.0) {
                r + y
            } else {
                r
            }
        },
    )
}

fn rem(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    int_division("rem", args, i64::checked_rem, |x, y| x % y)
}

fn quot(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    int_division("quot", args, i64::checked_div, |x, y| (x / y).trunc())
}

fn inc(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    match num("inc", &args[0])? {
        Num::I(i) => Ok(Value::Int(i.checked_add(1).ok_or_else(|| overflow("inc"))?)),
        Num::F(f) => Ok(Value::Float(f + 1.0)),
    }
}

fn dec(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    match num("dec", &args[0])? {
        Num::I(i) => Ok(Value::Int(i.checked_sub(1).ok_or_else(|| overflow("dec"))?)),
        Num::F(f) => Ok(Value::Float(f - 1.0)),
    }
}

fn abs(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    match num("abs", &args[0])? {
        Num::I(i) => Ok(Value::Int(i.checked_abs().ok_or_else(|| overflow("abs"))?)),
        Num::F(f) => Ok(Value::Float(f.abs())),
    }
}

fn extreme(who: &str, args: &[Value], want: Ordering) -> EvalResult {
    let mut best = &args[0];
    num(who, best)?;
    for a in &args[1..] {
        // Two integers compare exactly, without the float conversion.
        if let (Value::Int(x), Value::Int(y)) = (best, a) {
            if y.cmp(x) == want {
                best = a;
            }
            continue;
        }
        let (x, y) = (num(who, best)?, num(who, a)?);
        if to_f(x).is_nan() {
            continue;
        }
        if to_f(y).is_nan() || to_f(y).partial_cmp(&to_f(x)) == Some(want) {
            best = a;
        }
    }
    Ok(best.clone())
}

fn max(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    extreme("max", args, Ordering::Greater)
}

fn min(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    extreme("min", args, Ordering::Less)
}

/// Float to integer for `floor`, `round` and friends: an error for
/// infinities and NaN, which have no integer value.
fn to_int(who: &str, f: f64) -> EvalResult {
    if !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&f) {
        return Err(Error::arithmetic(format!(
            "`{who}` cannot convert {} to an integer",
            crate::value::pr_str(&Value::Float(f))
        ))
        .into());
    }
    Ok(Value::Int(f as i64))
}

fn rounding(who: &'static str, args: &[Value], op: fn(f64) -> f64) -> EvalResult {
    match num(who, &args[0])? {
        Num::I(i) => Ok(Value::Int(i)),
        Num::F(f) => to_int(who, op(f)),
    }
}

fn floor(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    rounding("floor", args, f64::floor)
}

fn ceil(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    rounding("ceil", args, f64::ceil)
}

/// Half rounds up, as Java's `Math.round`.
fn round(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    rounding("round", args, |f| (f + 0.5).floor())
}

fn trunc(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    rounding("trunc", args, f64::trunc)
}

/// Truncates toward zero. `(int ##NaN)` is 0 (the JVM's conversion,
/// specification §8.4); an infinity is an arithmetic error. A string,
/// even of one character, is a type error, as in Clojure.
fn int(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    match num("int", &args[0])? {
        Num::F(f) if f.is_nan() => Ok(Value::Int(0)),
        _ => rounding("int", args, f64::trunc),
    }
}

fn double(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::Float(to_f(num("double", &args[0])?)))
}

fn sqrt(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::Float(to_f(num("sqrt", &args[0])?).sqrt()))
}

fn pow(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::Float(
        to_f(num("pow", &args[0])?).powf(to_f(num("pow", &args[1])?)),
    ))
}

fn eq(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(args.windows(2).all(|w| w[0] == w[1])))
}

fn not_eq(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(!args.windows(2).all(|w| w[0] == w[1])))
}

fn num_eq(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    for w in args.windows(2) {
        let (a, b) = (num("==", &w[0])?, num("==", &w[1])?);
        let same = match (a, b) {
            (Num::I(x), Num::I(y)) => x == y,
            (x, y) => to_f(x) == to_f(y),
        };
        if !same {
            return Ok(Value::Bool(false));
        }
    }
    if let [only] = args {
        num("==", only)?;
    }
    Ok(Value::Bool(true))
}

/// `<` and friends compare numbers only (spec §11.3); NaN compares false.
fn ordered(who: &'static str, args: &[Value], ok: fn(Ordering) -> bool) -> EvalResult {
    if let [Value::Int(a), Value::Int(b)] = args {
        return Ok(Value::Bool(ok(a.cmp(b))));
    }
    for a in args {
        num(who, a)?;
    }
    for w in args.windows(2) {
        let holds = match (num(who, &w[0])?, num(who, &w[1])?) {
            (Num::I(x), Num::I(y)) => ok(x.cmp(&y)),
            (x, y) => to_f(x).partial_cmp(&to_f(y)).is_some_and(ok),
        };
        if !holds {
            return Ok(Value::Bool(false));
        }
    }
    Ok(Value::Bool(true))
}

fn lt(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    ordered("<", args, |o| o == Ordering::Less)
}

fn gt(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    ordered(">", args, |o| o == Ordering::Greater)
}

fn le(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    ordered("<=", args, |o| o != Ordering::Greater)
}

fn ge(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    ordered(">=", args, |o| o != Ordering::Less)
}

fn compare_fn(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let o = compare(&args[0], &args[1]).map_err(Error::type_error)?;
    Ok(Value::Int(match o {
        Ordering::Less => -1,
        Ordering::Equal => 0,
        Ordering::Greater => 1,
    }))
}

pub(super) fn register(r: &mut Registry) {
    r.add(
        "+",
        "[& xs]",
        0,
        MANY,
        "Sum of the numbers; integers stay integers (overflow is an error). `(+ 1 2 3)` => `6`.",
        add,
    );
    r.add(
        "-",
        "[x & ys]",
        1,
        MANY,
        "Subtract ys from x, or negate x. `(- 10 3)` => `7`.",
        sub,
    );
    r.add(
        "*",
        "[& xs]",
        0,
        MANY,
        "Product of the numbers. `(* 2 3 4)` => `24`.",
        mul,
    );
    r.add(
        "/",
        "[x & ys]",
        1,
        MANY,
        "Divide; always a float. `(/ 10 4)` => `2.5`; `(/ 1.0 0)` => `##Inf`.",
        div,
    );
    r.add(
        "mod",
        "[x y]",
        2,
        2,
        "Modulus, with the sign of y. `(mod -7 3)` => `2`.",
        mod_fn,
    );
    r.add(
        "rem",
        "[x y]",
        2,
        2,
        "Remainder, with the sign of x. `(rem -7 3)` => `-1`.",
        rem,
    );
    r.add(
        "quot",
        "[x y]",
        2,
        2,
        "Integer division rounding toward zero. `(quot 7 2)` => `3`.",
        quot,
    );
    r.add("inc", "[x]", 1, 1, "x plus one. `(inc 5)` => `6`.", inc);
    r.add("dec", "[x]", 1, 1, "x minus one. `(dec 5)` => `4`.", dec);
    r.add(
        "abs",
        "[x]",
        1,
        1,
        "Absolute value. `(abs -5)` => `5`.",
        abs,
    );
    r.add(
        "max",
        "[x & ys]",
        1,
        MANY,
        "The largest number. `(max 1 5 3)` => `5`.",
        max,
    );
    r.add(
        "min",
        "[x & ys]",
        1,
        MANY,
        "The smallest number. `(min 1 5 3)` => `1`.",
        min,
    );
    r.add(
        "floor",
        "[x]",
        1,
        1,
        "Round toward negative infinity, as an integer. `(floor 3.7)` => `3`.",
        floor,
    );
    r.add(
        "ceil",
        "[x]",
        1,
        1,
        "Round toward positive infinity, as an integer. `(ceil 3.2)` => `4`.",
        ceil,
    );
    r.add(
        "round",
        "[x]",
        1,
        1,
        "Round to the nearest integer, halves up. `(round 3.5)` => `4`.",
        round,
    );
    r.add(
        "trunc",
        "[x]",
        1,
        1,
        "Drop the fraction, as an integer. `(trunc -3.7)` => `-3`.",
        trunc,
    );
    r.add(
        "int",
        "[x]",
        1,
        1,
        "Convert to an integer, truncating. `(int 3.7)` => `3`.",
        int,
    );
    r.alias("long", "int");
    // Clojure's auto-promoting variants: integers here are 64-bit, and
    // overflow is an arithmetic error either way.
    for (promoting, plain) in [
        ("+'", "+"),
        ("-'", "-"),
        ("*'", "*"),
        ("inc'", "inc"),
        ("dec'", "dec"),
    ] {
        r.alias(promoting, plain);
    }
    r.add(
        "double",
        "[x]",
        1,
        1,
        "Convert to a float. `(double 5)` => `5.0`.",
        double,
    );
    r.alias("float", "double");
    r.add(
        "sqrt",
        "[x]",
        1,
        1,
        "Square root, a float. `(sqrt 16)` => `4.0`.",
        sqrt,
    );
    r.add(
        "pow",
        "[x y]",
        2,
        2,
        "x to the power y, a float. `(pow 2 10)` => `1024.0`.",
        pow,
    );
    r.add(
        "=",
        "[x & ys]",
        1,
        MANY,
        "True if all values are equal (1 and 1.0 are not). `(= [1 2] [1 2])` => `true`.",
        eq,
    );
    r.add(
        "not=",
        "[x & ys]",
        1,
        MANY,
        "True if not all values are equal. `(not= 1 2)` => `true`.",
        not_eq,
    );
    r.add(
        "==",
        "[x & ys]",
        1,
        MANY,
        "Numeric equality across integers and floats. `(== 1 1.0)` => `true`.",
        num_eq,
    );
    r.add(
        "<",
        "[x & ys]",
        1,
        MANY,
        "Numbers in increasing order. `(< 1 2)` => `true`.",
        lt,
    );
    r.add(
        ">",
        "[x & ys]",
        1,
        MANY,
        "Numbers in decreasing order. `(> 3 2)` => `true`.",
        gt,
    );
    r.add(
        "<=",
        "[x & ys]",
        1,
        MANY,
        "Numbers in non-decreasing order. `(<= 1 1)` => `true`.",
        le,
    );
    r.add(
        ">=",
        "[x & ys]",
        1,
        MANY,
        "Numbers in non-increasing order. `(>= 3 2)` => `true`.",
        ge,
    );
    r.add("compare", "[x y]", 2, 2, "-1, 0 or 1 as x is less than, equal to or greater than y (numbers, strings, keywords, vectors). `(compare 1 2)` => `-1`.", compare_fn);
    r.constant("Double/POSITIVE_INFINITY", Value::Float(f64::INFINITY));
    r.constant("Double/NEGATIVE_INFINITY", Value::Float(f64::NEG_INFINITY));
    r.constant("Double/NaN", Value::Float(f64::NAN));
    r.constant("Math/PI", Value::Float(std::f64::consts::PI));
    r.constant("Math/E", Value::Float(std::f64::consts::E));
}
