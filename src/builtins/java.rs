//! The Java static members models commonly write: `Math/...`,
//! `Integer/parseInt` and the other number parsers, `Character/isDigit`
//! and friends, and the `MAX_VALUE`/`MIN_VALUE` constants.
//!
//! They keep Java's result types where PTC-Lisp has them (`Math/floor`
//! gives a float, `Math/round` an integer) and Java's strictness: the
//! Java parsers raise on bad text, unlike `parse-long`, which gives nil.

use crate::error::Error;
use crate::eval::{EvalResult, Interp};
use crate::value::Value;

use super::core::{expect_int, expect_str, type_error};
use super::Registry;

fn number(who: &str, v: &Value) -> Result<f64, Error> {
    match v {
        Value::Int(n) => Ok(*n as f64),
        Value::Float(f) => Ok(*f),
        other => Err(type_error(who, "a number", other)),
    }
}

/// `Math/x` functions of doubles that return a double.
///
/// Each one gives what Clojure on the JVM (HotSpot) gives, as closely as
/// the two sources at hand allow, measured on 3,000 random arguments per
/// function (BENCHMARKS.md, nineteenth round). Java's `asin`, `acos`,
/// `atan` and `atan2` are fdlibm's algorithms (`StrictMath`), as the
/// `libm` crate's are: they agreed with HotSpot bit for bit, where the
/// system's libm differed in 54-527 results. For `hypot` and `log10` the
/// `libm` crate is the closer of the two (58 and 22 differences against
/// 370 and 399). HotSpot's `sin`, `cos`, `tan`, `exp`, `log` and `pow`
/// are nearly correctly rounded, as glibc's are (1-15 differences against
/// 93-288 for the `libm` crate): those stay with the standard library's
/// (the system's libm).
macro_rules! math_fn {
    ($fn_name:ident, $who:literal, |$x:ident| $body:expr) => {
        fn $fn_name(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
            let $x = number($who, &args[0])?;
            Ok(Value::Float($body))
        }
    };
    ($fn_name:ident, $who:literal, |$x:ident, $y:ident| $body:expr) => {
        fn $fn_name(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
            let ($x, $y) = (number($who, &args[0])?, number($who, &args[1])?);
            Ok(Value::Float($body))
        }
    };
}

math_fn!(sqrt, "Math/sqrt", |x| x.sqrt());
math_fn!(cbrt, "Math/cbrt", |x| x.cbrt());
math_fn!(pow, "Math/pow", |x, y| x.powf(y));
math_fn!(exp, "Math/exp", |x| x.exp());
math_fn!(log, "Math/log", |x| x.ln());
math_fn!(log10, "Math/log10", |x| libm::log10(x));
math_fn!(sin, "Math/sin", |x| x.sin());
math_fn!(cos, "Math/cos", |x| x.cos());
math_fn!(tan, "Math/tan", |x| x.tan());
math_fn!(asin, "Math/asin", |x| libm::asin(x));
math_fn!(acos, "Math/acos", |x| libm::acos(x));
math_fn!(atan, "Math/atan", |x| libm::atan(x));
math_fn!(atan2, "Math/atan2", |y, x| libm::atan2(y, x));
math_fn!(hypot, "Math/hypot", |x, y| libm::hypot(x, y));
math_fn!(floor, "Math/floor", |x| x.floor());
math_fn!(ceil, "Math/ceil", |x| x.ceil());
math_fn!(rint, "Math/rint", |x| x.round_ties_even());
math_fn!(to_radians, "Math/toRadians", |x| x.to_radians());
math_fn!(to_degrees, "Math/toDegrees", |x| x.to_degrees());
math_fn!(signum, "Math/signum", |x| if x == 0.0 || x.is_nan() {
    x
} else {
    x.signum()
});

/// Integers stay integers (`Math/abs` of `Long/MIN_VALUE` wraps, as in
/// Java); floats stay floats.
fn abs(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    match &args[0] {
        Value::Int(n) => Ok(Value::Int(n.wrapping_abs())),
        other => Ok(Value::Float(number("Math/abs", other)?.abs())),
    }
}

fn extreme(who: &str, args: &[Value], pick_first: fn(f64, f64) -> bool) -> EvalResult {
    match (&args[0], &args[1]) {
        (Value::Int(a), Value::Int(b)) => Ok(Value::Int(if pick_first(*a as f64, *b as f64) {
            *a
        } else {
            *b
        })),
        (a, b) => {
            let (x, y) = (number(who, a)?, number(who, b)?);
            Ok(Value::Float(if x.is_nan() || y.is_nan() {
                f64::NAN
            } else if pick_first(x, y) {
                x
            } else {
                y
            }))
        }
    }
}

fn max(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    extreme("Math/max", args, |x, y| x >= y)
}

fn min(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    extreme("Math/min", args, |x, y| x <= y)
}

/// Java's `Math.round`: half up, NaN is 0, out-of-range values clamp.
fn round(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    match &args[0] {
        Value::Int(n) => Ok(Value::Int(*n)),
        other => {
            let x = number("Math/round", other)?;
            // Comparing the fraction avoids the rounding error of x + 0.5;
            // `as` saturates at the i64 bounds and maps NaN to 0, as Java does.
            let f = x.floor();
            Ok(Value::Int(if x - f >= 0.5 { f + 1.0 } else { f } as i64))
        }
    }
}

fn overflow(who: &str) -> Error {
    Error::arithmetic(format!("Integer overflow in `{who}`"))
}

fn int_pair(who: &str, args: &[Value]) -> Result<(i64, i64), Error> {
    Ok((expect_int(who, &args[0])?, expect_int(who, &args[1])?))
}

fn floor_div(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let (x, y) = int_pair("Math/floorDiv", args)?;
    if y == 0 {
        return Err(Error::arithmetic("Division by zero in `Math/floorDiv`").into());
    }
    let q = x.checked_div(y).ok_or_else(|| overflow("Math/floorDiv"))?;
    Ok(Value::Int(if (x % y != 0) && ((x < 0) != (y < 0)) {
        q - 1
    } else {
        q
    }))
}

fn floor_mod(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let (x, y) = int_pair("Math/floorMod", args)?;
    if y == 0 {
        return Err(Error::arithmetic("Division by zero in `Math/floorMod`").into());
    }
    let r = x.checked_rem(y).unwrap_or(0);
    Ok(Value::Int(if r != 0 && ((r < 0) != (y < 0)) {
        r + y
    } else {
        r
    }))
}

fn add_exact(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let (x, y) = int_pair("Math/addExact", args)?;
    Ok(Value::Int(
        x.checked_add(y).ok_or_else(|| overflow("Math/addExact"))?,
    ))
}

fn subtract_exact(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let (x, y) = int_pair("Math/subtractExact", args)?;
    Ok(Value::Int(
        x.checked_sub(y)
            .ok_or_else(|| overflow("Math/subtractExact"))?,
    ))
}

fn multiply_exact(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let (x, y) = int_pair("Math/multiplyExact", args)?;
    Ok(Value::Int(
        x.checked_mul(y)
            .ok_or_else(|| overflow("Math/multiplyExact"))?,
    ))
}

/// The error for text a Java parser rejects.
fn unparsable(who: &str, s: &str, what: &str) -> Error {
    Error::execution(format!(
        "`{who}` cannot parse {} as {what}",
        crate::value::pr_str(&Value::str(s))
    ))
    .with_hint("`parse-long` and `parse-double` return nil for such text instead of failing")
}

fn radix_arg(who: &str, args: &[Value]) -> Result<u32, Error> {
    match args.get(1) {
        None => Ok(10),
        Some(r) => match expect_int(who, r)? {
            r @ 2..=36 => Ok(r as u32),
            r => Err(Error::execution(format!(
                "`{who}` radix {r} is outside 2 to 36"
            ))),
        },
    }
}

/// Java's integer parsing: an optional sign and digits of the radix,
/// nothing else, within the type's range.
fn parse_integer(who: &str, args: &[Value], range: (i64, i64), what: &str) -> EvalResult {
    let s = expect_str(who, &args[0])?;
    let radix = radix_arg(who, args)?;
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    let valid = !digits.is_empty() && digits.chars().all(|c| c.is_digit(radix));
    match i64::from_str_radix(s, radix) {
        Ok(n) if valid && (range.0..=range.1).contains(&n) => Ok(Value::Int(n)),
        _ => Err(unparsable(who, s, what).into()),
    }
}

fn parse_int(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let range = (i64::from(i32::MIN), i64::from(i32::MAX));
    parse_integer("Integer/parseInt", args, range, "an integer")
}

fn parse_long(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    parse_integer("Long/parseLong", args, (i64::MIN, i64::MAX), "a long")
}

/// Java's `Double.parseDouble`: surrounding whitespace allowed, a
/// trailing `d`/`f` type suffix, `NaN` and `Infinity` spelled exactly.
fn parse_double(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let who = "Double/parseDouble";
    let s = expect_str(who, &args[0])?;
    let t = s.trim_matches(|c: char| c <= ' ');
    let unsigned = t.strip_prefix(['+', '-']).unwrap_or(t);
    let negative = t.starts_with('-');
    let special = match unsigned {
        "NaN" => Some(f64::NAN),
        "Infinity" if negative => Some(f64::NEG_INFINITY),
        "Infinity" => Some(f64::INFINITY),
        _ => None,
    };
    if let Some(f) = special {
        return Ok(Value::Float(f));
    }
    let body = t.strip_suffix(['d', 'D', 'f', 'F']).unwrap_or(t);
    if let Some(hex) = unsigned
        .strip_prefix("0x")
        .or_else(|| unsigned.strip_prefix("0X"))
    {
        let hex = hex.strip_suffix(['d', 'D', 'f', 'F']).unwrap_or(hex);
        return match hex_float(hex) {
            Some(f) if negative => Ok(Value::Float(-f)),
            Some(f) => Ok(Value::Float(f)),
            None => Err(unparsable(who, s, "a double").into()),
        };
    }
    let valid = body
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E'))
        && body.bytes().any(|b| b.is_ascii_digit());
    match body.parse::<f64>() {
        Ok(f) if valid => Ok(Value::Float(f)),
        _ => Err(unparsable(who, s, "a double").into()),
    }
}

/// The value of a Java hexadecimal float after its `0x`: hex digits with
/// an optional point, then the binary exponent Java requires (`1.8p0` is
/// 1.5, `1p-2` is 0.25).
fn hex_float(text: &str) -> Option<f64> {
    let (mantissa, exponent) = text.split_once(['p', 'P'])?;
    let exponent: i32 = {
        let digits = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        // Beyond this every double is zero or infinite anyway.
        exponent
            .parse::<i64>()
            .unwrap_or(if exponent.starts_with('-') {
                i64::MIN
            } else {
                i64::MAX
            })
            .clamp(-5000, 5000) as i32
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    // Keep the first 30 significant hex digits (120 bits, more than a
    // double holds); later integer digits only scale the value.
    let mut value: u128 = 0;
    let mut kept = 0;
    let mut scale = 0i32;
    for (i, c) in int_part.chars().chain(frac_part.chars()).enumerate() {
        let d = c.to_digit(16)?;
        let fractional = i >= int_part.len();
        if kept < 30 {
            if value != 0 || d != 0 {
                kept += 1;
            }
            value = value * 16 + u128::from(d);
            if fractional {
                scale -= 4;
            }
        } else if !fractional {
            scale += 4;
        }
    }
    Some(value as f64 * 2f64.powi((exponent + scale).clamp(-1100, 1100)))
}

/// Java's `Boolean.parseBoolean`: true only for "true" in any case.
fn parse_boolean(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    match &args[0] {
        Value::Str(s) => Ok(Value::Bool(s.eq_ignore_ascii_case("true"))),
        Value::ShortStr(s) => Ok(Value::Bool(s.eq_ignore_ascii_case("true"))),
        Value::Nil => Ok(Value::Bool(false)),
        other => Err(type_error("Boolean/parseBoolean", "a string", other).into()),
    }
}

/// Java's `String.valueOf`: like `str`, but nil is "null".
fn value_of(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(match &args[0] {
        Value::Nil => Value::str("null"),
        other => Value::from(crate::value::print_str(other)),
    })
}

fn to_string(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let n = expect_int("Long/toString", &args[0])?;
    let radix = radix_arg("Long/toString", args)?;
    let mut digits = Vec::new();
    let mut m = n.unsigned_abs();
    loop {
        let d = (m % u64::from(radix)) as u32;
        digits.push(char::from_digit(d, radix).expect("digit below radix"));
        m /= u64::from(radix);
        if m == 0 {
            break;
        }
    }
    if n < 0 {
        digits.push('-');
    }
    Ok(Value::from(digits.into_iter().rev().collect::<String>()))
}

/// The single character of a `Character/...` argument: a one-character
/// string or a code point.
fn character(who: &str, v: &Value) -> Result<char, Error> {
    let c = match v {
        Value::Str(_) | Value::ShortStr(_) => super::core::single_char(v),
        Value::Int(n) => u32::try_from(*n).ok().and_then(char::from_u32),
        _ => None,
    };
    c.ok_or_else(|| type_error(who, "a character", v))
}

macro_rules! char_test {
    ($fn_name:ident, $who:literal, |$c:ident| $body:expr) => {
        fn $fn_name(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
            let $c = character($who, &args[0])?;
            Ok(Value::Bool($body))
        }
    };
}

char_test!(is_digit, "Character/isDigit", |c| c.is_numeric());
char_test!(is_letter, "Character/isLetter", |c| c.is_alphabetic());
char_test!(is_letter_or_digit, "Character/isLetterOrDigit", |c| c
    .is_alphanumeric());
char_test!(is_whitespace, "Character/isWhitespace", |c| c
    .is_whitespace());
char_test!(is_upper, "Character/isUpperCase", |c| c.is_uppercase());
char_test!(is_lower, "Character/isLowerCase", |c| c.is_lowercase());

fn char_upper(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let c = character("Character/toUpperCase", &args[0])?;
    Ok(Value::char(c.to_uppercase().next().unwrap_or(c)))
}

fn char_lower(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let c = character("Character/toLowerCase", &args[0])?;
    Ok(Value::char(c.to_lowercase().next().unwrap_or(c)))
}

fn numeric_value(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let c = character("Character/getNumericValue", &args[0])?;
    Ok(Value::Int(c.to_digit(36).map_or(-1, i64::from)))
}

fn register_math(r: &mut Registry) {
    r.add(
        "Math/abs",
        "[x]",
        1,
        1,
        "Absolute value, keeping the type. `(Math/abs -5)` => `5`.",
        abs,
    );
    r.add(
        "Math/max",
        "[x y]",
        2,
        2,
        "The larger of two numbers. `(Math/max 1 2)` => `2`.",
        max,
    );
    r.add(
        "Math/min",
        "[x y]",
        2,
        2,
        "The smaller of two numbers. `(Math/min 1 2)` => `1`.",
        min,
    );
    r.add(
        "Math/pow",
        "[x y]",
        2,
        2,
        "x to the power y, a float. `(Math/pow 2 3)` => `8.0`.",
        pow,
    );
    r.add(
        "Math/sqrt",
        "[x]",
        1,
        1,
        "Square root, a float. `(Math/sqrt 9)` => `3.0`.",
        sqrt,
    );
    r.add(
        "Math/cbrt",
        "[x]",
        1,
        1,
        "Cube root, a float. `(Math/cbrt 27)` => `3.0`.",
        cbrt,
    );
    r.add("Math/floor", "[x]", 1, 1, "Round toward negative infinity, as a float (bare `floor` gives an integer). `(Math/floor 2.7)` => `2.0`.", floor);
    r.add(
        "Math/ceil",
        "[x]",
        1,
        1,
        "Round toward positive infinity, as a float. `(Math/ceil 2.1)` => `3.0`.",
        ceil,
    );
    r.add(
        "Math/rint",
        "[x]",
        1,
        1,
        "The nearest whole float, halves to even. `(Math/rint 2.5)` => `2.0`.",
        rint,
    );
    r.add(
        "Math/round",
        "[x]",
        1,
        1,
        "The nearest integer, halves up. `(Math/round 2.5)` => `3`.",
        round,
    );
    r.add(
        "Math/signum",
        "[x]",
        1,
        1,
        "-1.0, 0.0 or 1.0 by the sign of x. `(Math/signum -3)` => `-1.0`.",
        signum,
    );
    r.add(
        "Math/exp",
        "[x]",
        1,
        1,
        "e to the power x. `(Math/exp 0)` => `1.0`.",
        exp,
    );
    r.add(
        "Math/log",
        "[x]",
        1,
        1,
        "Natural logarithm. `(Math/log 1)` => `0.0`.",
        log,
    );
    r.add(
        "Math/log10",
        "[x]",
        1,
        1,
        "Base-10 logarithm. `(Math/log10 100)` => `2.0`.",
        log10,
    );
    r.add(
        "Math/sin",
        "[x]",
        1,
        1,
        "Sine of an angle in radians. `(Math/sin 0)` => `0.0`.",
        sin,
    );
    r.add(
        "Math/cos",
        "[x]",
        1,
        1,
        "Cosine of an angle in radians. `(Math/cos 0)` => `1.0`.",
        cos,
    );
    r.add(
        "Math/tan",
        "[x]",
        1,
        1,
        "Tangent of an angle in radians. `(Math/tan 0)` => `0.0`.",
        tan,
    );
    r.add(
        "Math/asin",
        "[x]",
        1,
        1,
        "Arc sine, in radians. `(Math/asin 0)` => `0.0`.",
        asin,
    );
    r.add(
        "Math/acos",
        "[x]",
        1,
        1,
        "Arc cosine, in radians. `(Math/acos 1)` => `0.0`.",
        acos,
    );
    r.add(
        "Math/atan",
        "[x]",
        1,
        1,
        "Arc tangent, in radians. `(Math/atan 0)` => `0.0`.",
        atan,
    );
    r.add(
        "Math/atan2",
        "[y x]",
        2,
        2,
        "The angle of the point (x, y), in radians. `(Math/atan2 0 1)` => `0.0`.",
        atan2,
    );
    r.add(
        "Math/hypot",
        "[x y]",
        2,
        2,
        "sqrt(x² + y²). `(Math/hypot 3 4)` => `5.0`.",
        hypot,
    );
    r.add(
        "Math/toRadians",
        "[deg]",
        1,
        1,
        "Degrees to radians. `(Math/toRadians 0)` => `0.0`.",
        to_radians,
    );
    r.add(
        "Math/toDegrees",
        "[rad]",
        1,
        1,
        "Radians to degrees. `(Math/toDegrees 0)` => `0.0`.",
        to_degrees,
    );
    r.add(
        "Math/floorDiv",
        "[x y]",
        2,
        2,
        "Integer division rounding toward negative infinity. `(Math/floorDiv -7 2)` => `-4`.",
        floor_div,
    );
    r.add(
        "Math/floorMod",
        "[x y]",
        2,
        2,
        "Modulus with the sign of y. `(Math/floorMod -7 2)` => `1`.",
        floor_mod,
    );
    r.add(
        "Math/addExact",
        "[x y]",
        2,
        2,
        "x + y, an error on overflow. `(Math/addExact 1 2)` => `3`.",
        add_exact,
    );
    r.add(
        "Math/subtractExact",
        "[x y]",
        2,
        2,
        "x - y, an error on overflow. `(Math/subtractExact 3 2)` => `1`.",
        subtract_exact,
    );
    r.add(
        "Math/multiplyExact",
        "[x y]",
        2,
        2,
        "x * y, an error on overflow. `(Math/multiplyExact 2 3)` => `6`.",
        multiply_exact,
    );
}

fn register_parsers(r: &mut Registry) {
    r.add("Integer/parseInt", "[s radix?]", 1, 2, "The 32-bit integer s spells; an error for anything else (`parse-long` gives nil instead). `(Integer/parseInt \"42\")` => `42`.", parse_int);
    r.alias("Integer/valueOf", "Integer/parseInt");
    r.add("Long/parseLong", "[s radix?]", 1, 2, "The 64-bit integer s spells; an error for anything else. `(Long/parseLong \"ff\" 16)` => `255`.", parse_long);
    r.alias("Long/valueOf", "Long/parseLong");
    r.add("Double/parseDouble", "[s]", 1, 1, "The float s spells (Java syntax, surrounding whitespace allowed); an error for anything else. `(Double/parseDouble \"3.14\")` => `3.14`.", parse_double);
    r.alias("Double/valueOf", "Double/parseDouble");
    r.alias("Float/parseFloat", "Double/parseDouble");
    r.add("Boolean/parseBoolean", "[s]", 1, 1, "True for \"true\" in any case, false for any other string or nil. `(Boolean/parseBoolean \"TRUE\")` => `true`.", parse_boolean);
    r.add("String/valueOf", "[x]", 1, 1, "The text of x, as `str` gives it, but \"null\" for nil. `(String/valueOf 42)` => `\"42\"`.", value_of);
    r.add(
        "Long/toString",
        "[n radix?]",
        1,
        2,
        "The digits of n in a radix (default 10). `(Long/toString 255 16)` => `\"ff\"`.",
        to_string,
    );
    r.alias("Integer/toString", "Long/toString");
}

fn register_characters(r: &mut Registry) {
    r.add(
        "Character/isDigit",
        "[c]",
        1,
        1,
        "True if the character is a digit. `(Character/isDigit \\7)` => `true`.",
        is_digit,
    );
    r.add(
        "Character/isLetter",
        "[c]",
        1,
        1,
        "True if the character is a letter. `(Character/isLetter \\a)` => `true`.",
        is_letter,
    );
    r.add(
        "Character/isLetterOrDigit",
        "[c]",
        1,
        1,
        "True for letters and digits. `(Character/isLetterOrDigit \\_)` => `false`.",
        is_letter_or_digit,
    );
    r.add(
        "Character/isWhitespace",
        "[c]",
        1,
        1,
        "True for whitespace. `(Character/isWhitespace \\space)` => `true`.",
        is_whitespace,
    );
    r.add(
        "Character/isUpperCase",
        "[c]",
        1,
        1,
        "True for upper-case letters. `(Character/isUpperCase \\A)` => `true`.",
        is_upper,
    );
    r.add(
        "Character/isLowerCase",
        "[c]",
        1,
        1,
        "True for lower-case letters. `(Character/isLowerCase \\a)` => `true`.",
        is_lower,
    );
    r.add(
        "Character/toUpperCase",
        "[c]",
        1,
        1,
        "The character in upper case. `(Character/toUpperCase \\a)` => `\"A\"`.",
        char_upper,
    );
    r.add(
        "Character/toLowerCase",
        "[c]",
        1,
        1,
        "The character in lower case. `(Character/toLowerCase \\A)` => `\"a\"`.",
        char_lower,
    );
    r.add("Character/getNumericValue", "[c]", 1, 1, "The value of a digit (letters count from 10), or -1. `(Character/getNumericValue \\7)` => `7`.", numeric_value);
}

pub(super) fn register(r: &mut Registry) {
    register_math(r);
    register_parsers(r);
    register_characters(r);
    r.constant("Integer/MAX_VALUE", Value::Int(i64::from(i32::MAX)));
    r.constant("Integer/MIN_VALUE", Value::Int(i64::from(i32::MIN)));
    r.constant("Long/MAX_VALUE", Value::Int(i64::MAX));
    r.constant("Long/MIN_VALUE", Value::Int(i64::MIN));
    r.constant("Double/MAX_VALUE", Value::Float(f64::MAX));
    r.constant("Double/MIN_VALUE", Value::Float(f64::from_bits(1)));
}
