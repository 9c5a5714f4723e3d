//! Bitwise operations on 64-bit integers, as `clojure.core` has them on
//! the JVM: shift counts are taken modulo 64.

use crate::error::Error;
use crate::eval::{EvalResult, Interp};
use crate::value::Value;

use super::core::expect_int;
use super::{Registry, MANY};

fn ints(who: &str, args: &[Value]) -> Result<Vec<i64>, Error> {
    args.iter().map(|a| expect_int(who, a)).collect()
}

fn fold(who: &str, args: &[Value], op: fn(i64, i64) -> i64) -> EvalResult {
    let ns = ints(who, args)?;
    Ok(Value::Int(ns[1..].iter().fold(ns[0], |acc, &n| op(acc, n))))
}

fn bit_and(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    fold("bit-and", args, |a, b| a & b)
}

fn bit_or(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    fold("bit-or", args, |a, b| a | b)
}

fn bit_xor(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    fold("bit-xor", args, |a, b| a ^ b)
}

fn bit_and_not(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    fold("bit-and-not", args, |a, b| a & !b)
}

fn bit_not(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::Int(!expect_int("bit-not", &args[0])?))
}

/// `x` and a shift count or bit index taken modulo 64.
fn pair(who: &str, args: &[Value]) -> Result<(i64, u32), Error> {
    Ok((
        expect_int(who, &args[0])?,
        (expect_int(who, &args[1])? & 63) as u32,
    ))
}

fn shift_left(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let (x, n) = pair("bit-shift-left", args)?;
    Ok(Value::Int(x.wrapping_shl(n)))
}

fn shift_right(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let (x, n) = pair("bit-shift-right", args)?;
    Ok(Value::Int(x >> n))
}

fn unsigned_shift_right(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let (x, n) = pair("unsigned-bit-shift-right", args)?;
    Ok(Value::Int(((x as u64) >> n) as i64))
}

fn bit_set(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let (x, n) = pair("bit-set", args)?;
    Ok(Value::Int(x | (1 << n)))
}

fn bit_clear(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let (x, n) = pair("bit-clear", args)?;
    Ok(Value::Int(x & !(1 << n)))
}

fn bit_flip(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let (x, n) = pair("bit-flip", args)?;
    Ok(Value::Int(x ^ (1 << n)))
}

fn bit_test(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let (x, n) = pair("bit-test", args)?;
    Ok(Value::Bool(x & (1 << n) != 0))
}

pub(super) fn register(r: &mut Registry) {
    r.add(
        "bit-and",
        "[x y & more]",
        2,
        MANY,
        "Bitwise and of integers. `(bit-and 12 10)` => `8`.",
        bit_and,
    );
    r.add(
        "bit-or",
        "[x y & more]",
        2,
        MANY,
        "Bitwise or of integers. `(bit-or 12 10)` => `14`.",
        bit_or,
    );
    r.add(
        "bit-xor",
        "[x y & more]",
        2,
        MANY,
        "Bitwise exclusive or of integers. `(bit-xor 12 10)` => `6`.",
        bit_xor,
    );
    r.add(
        "bit-and-not",
        "[x y & more]",
        2,
        MANY,
        "x with the bits of the others cleared. `(bit-and-not 15 9)` => `6`.",
        bit_and_not,
    );
    r.add(
        "bit-not",
        "[x]",
        1,
        1,
        "Bitwise complement. `(bit-not 0)` => `-1`.",
        bit_not,
    );
    r.add(
        "bit-shift-left",
        "[x n]",
        2,
        2,
        "Shift x left by n bits (n modulo 64). `(bit-shift-left 1 4)` => `16`.",
        shift_left,
    );
    r.add(
        "bit-shift-right",
        "[x n]",
        2,
        2,
        "Shift x right by n bits, keeping the sign. `(bit-shift-right 256 4)` => `16`.",
        shift_right,
    );
    r.add(
        "unsigned-bit-shift-right",
        "[x n]",
        2,
        2,
        "Shift x right by n bits, filling with zeros. `(unsigned-bit-shift-right -1 60)` => `15`.",
        unsigned_shift_right,
    );
    r.add(
        "bit-set",
        "[x n]",
        2,
        2,
        "x with bit n set. `(bit-set 0 3)` => `8`.",
        bit_set,
    );
    r.add(
        "bit-clear",
        "[x n]",
        2,
        2,
        "x with bit n cleared. `(bit-clear 15 1)` => `13`.",
        bit_clear,
    );
    r.add(
        "bit-flip",
        "[x n]",
        2,
        2,
        "x with bit n flipped. `(bit-flip 0 2)` => `4`.",
        bit_flip,
    );
    r.add(
        "bit-test",
        "[x n]",
        2,
        2,
        "True if bit n of x is set. `(bit-test 5 0)` => `true`.",
        bit_test,
    );
}
