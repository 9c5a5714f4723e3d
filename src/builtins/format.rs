//! `format`: Java `String.format` directives, `%[index$][flags][width][.precision]conv`.
//!
//! Supported conversions: `s S d x X o f e E g G b B c C % n`; flags
//! `- 0 + space , ( #`. Floats are rounded half-up from their shortest
//! decimal form, as Java does (`(format "%.2f" 1.005)` is `"1.01"`).
//! Integers are accepted where a float is expected; floats are an error
//! for `%d`, as in Java.

use crate::error::Error;
use crate::eval::{EvalResult, Interp};
use crate::value::{write_str, Value};

use super::core::{expect_str, type_error};
use super::{Registry, MANY};

/// Widths and precisions above this are refused rather than padded.
const MAX_WIDTH: usize = 10_000;

const SUPPORTED: &str = "%s %d %f %.2f %e %g %x %o %b %c %% %n, with flags - 0 + , ( # and a width";

#[derive(Default)]
struct Spec {
    left: bool,
    zero: bool,
    plus: bool,
    space: bool,
    group: bool,
    paren: bool,
    alt: bool,
    width: Option<usize>,
    precision: Option<usize>,
    conv: char,
}

/// Where a directive takes its argument from.
enum ArgRef {
    Next,
    Explicit(usize),
    Previous,
    None,
}

fn format_fn(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let fmt = expect_str("format", &args[0])?;
    let out = format(fmt, &args[1..], interp.limits.max_collection)?;
    interp.check_size(out.len())?;
    Ok(Value::from(out))
}

/// `fmt` filled in with `args`; the text may grow to `max` bytes (each
/// directive is checked before it is padded, so widths cannot add up past
/// the limit).
fn format(fmt: &str, args: &[Value], max: usize) -> Result<String, Error> {
    let mut out = String::with_capacity(fmt.len());
    let mut rest = fmt;
    let mut next = 0;
    let mut previous: Option<usize> = None;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let (arg_ref, spec, len) = parse_directive(&rest[at..])?;
        let directive = &rest[at..at + len];
        rest = &rest[at + len..];
        let index = match arg_ref {
            ArgRef::None => None,
            ArgRef::Next => {
                next += 1;
                Some(next - 1)
            }
            ArgRef::Explicit(i) => Some(i),
            ArgRef::Previous => Some(previous.ok_or_else(|| {
                Error::execution(format!(
                    "`format` directive `{directive}` refers to a previous argument, but there is none"
                ))
            })?),
        };
        let arg = match index {
            None => None,
            Some(i) => Some(args.get(i).ok_or_else(|| {
                Error::execution(format!(
                    "`format` has no argument for `{directive}`: {} given",
                    args.len()
                ))
            })?),
        };
        previous = index.or(previous);
        let text = convert(&spec, arg, directive)?;
        let grown = out
            .len()
            .saturating_add(text.len().max(spec.width.unwrap_or(0)));
        if grown > max {
            return Err(super::bounded::size_error(grown, max));
        }
        pad(&mut out, &text, &spec);
    }
    out.push_str(rest);
    Ok(out)
}

/// Parse one directive at the start of `s` (which begins with `%`);
/// returns the argument reference, the spec and the directive's length.
fn parse_directive(s: &str) -> Result<(ArgRef, Spec, usize), Error> {
    let bytes = s.as_bytes();
    let mut i = 1;
    let mut spec = Spec::default();
    let mut arg_ref = ArgRef::Next;
    // An argument index: digits followed by `$`, or `<`.
    let digits_end = i + bytes[i..].iter().take_while(|b| b.is_ascii_digit()).count();
    if digits_end > i && bytes.get(digits_end) == Some(&b'$') {
        let n: usize = s[i..digits_end].parse().unwrap_or(0);
        if n == 0 {
            return Err(bad_directive(&s[..=digits_end]));
        }
        arg_ref = ArgRef::Explicit(n - 1);
        i = digits_end + 1;
    } else if bytes.get(i) == Some(&b'<') {
        arg_ref = ArgRef::Previous;
        i += 1;
    }
    while let Some(&b) = bytes.get(i) {
        match b {
            b'-' => spec.left = true,
            b'0' => spec.zero = true,
            b'+' => spec.plus = true,
            b' ' => spec.space = true,
            b',' => spec.group = true,
            b'(' => spec.paren = true,
            b'#' => spec.alt = true,
            _ => break,
        }
        i += 1;
    }
    let (width, after) = number_at(s, i)?;
    spec.width = width;
    i = after;
    if bytes.get(i) == Some(&b'.') {
        let (precision, after) = number_at(s, i + 1)?;
        spec.precision = Some(precision.ok_or_else(|| bad_directive(&s[..=i]))?);
        i = after;
    }
    let conv = s[i..].chars().next().ok_or_else(|| {
        Error::execution(format!("`format` string ends inside the directive `{s}`"))
    })?;
    spec.conv = conv;
    let len = i + conv.len_utf8();
    if matches!(conv, '%' | 'n') {
        arg_ref = ArgRef::None;
    }
    if spec.left && spec.zero || (spec.left || spec.zero) && spec.width.is_none() {
        return Err(Error::execution(format!(
            "`format` directive `{}` needs a width for the `-` or `0` flag, and cannot have both",
            &s[..len]
        )));
    }
    Ok((arg_ref, spec, len))
}

fn number_at(s: &str, start: usize) -> Result<(Option<usize>, usize), Error> {
    let end = start + s[start..].bytes().take_while(u8::is_ascii_digit).count();
    if end == start {
        return Ok((None, start));
    }
    match s[start..end].parse::<usize>() {
        Ok(n) if n <= MAX_WIDTH => Ok((Some(n), end)),
        _ => Err(Error::execution(format!(
            "`format` width or precision {} is over the limit of {MAX_WIDTH}",
            &s[start..end]
        ))),
    }
}

fn bad_directive(directive: &str) -> Error {
    Error::execution(format!("`format` cannot read the directive `{directive}`"))
        .with_hint(format!("supported: {SUPPORTED}"))
}

/// The text of one directive, before padding to the width.
fn convert(spec: &Spec, arg: Option<&Value>, directive: &str) -> Result<String, Error> {
    const NIL: &Value = &Value::Nil;
    let arg = arg.unwrap_or(NIL);
    let text = match spec.conv {
        '%' => "%".to_string(),
        'n' => "\n".to_string(),
        's' | 'S' => {
            let mut s = String::new();
            write_str(&mut s, arg);
            match spec.precision {
                Some(p) => s.chars().take(p).collect(),
                None => s,
            }
        }
        'b' | 'B' => arg.truthy().to_string(),
        'c' | 'C' => character(arg, directive)?.to_string(),
        'd' => {
            let n = integer(arg, directive)?;
            signed(spec, &group(spec, n.unsigned_abs().to_string()), n < 0)
        }
        'x' | 'X' => radix(spec, integer(arg, directive)?, 16),
        'o' => radix(spec, integer(arg, directive)?, 8),
        'f' | 'e' | 'E' | 'g' | 'G' => float_text(spec, float(arg, directive)?),
        other => {
            return Err(Error::execution(format!(
                "`format` does not support the `%{other}` conversion in `{directive}`"
            ))
            .with_hint(format!("supported: {SUPPORTED}")))
        }
    };
    Ok(if spec.conv.is_ascii_uppercase() {
        text.to_uppercase()
    } else {
        text
    })
}

fn integer(arg: &Value, directive: &str) -> Result<i64, Error> {
    match arg {
        Value::Int(n) => Ok(*n),
        other => Err(
            type_error("format", &format!("an integer for `{directive}`"), other)
                .with_hint("use `%.0f` for floats, or convert with `(int x)`"),
        ),
    }
}

fn float(arg: &Value, directive: &str) -> Result<f64, Error> {
    match arg {
        Value::Float(f) => Ok(*f),
        Value::Int(n) => Ok(*n as f64),
        other => Err(type_error(
            "format",
            &format!("a number for `{directive}`"),
            other,
        )),
    }
}

fn character(arg: &Value, directive: &str) -> Result<char, Error> {
    if let Some(c) = super::core::single_char(arg) {
        return Ok(c);
    }
    match arg {
        Value::Int(n) => u32::try_from(*n)
            .ok()
            .and_then(char::from_u32)
            .ok_or_else(|| {
                Error::execution(format!(
                    "`format` got {n} for `{directive}`, which is not a character code"
                ))
            }),
        other => Err(type_error(
            "format",
            &format!("a character for `{directive}`"),
            other,
        )),
    }
}

/// Hex and octal print negative numbers as their 64-bit two's
/// complement, as Java does for longs.
fn radix(spec: &Spec, n: i64, base: u32) -> String {
    let digits = if base == 16 {
        format!("{n:x}")
    } else {
        format!("{n:o}")
    };
    let prefix = match (spec.alt, base) {
        (false, _) => "",
        (true, 16) => "0x",
        (true, _) => "0",
    };
    format!("{prefix}{digits}")
}

/// Thousands separators in the integer digits, for the `,` flag.
fn group(spec: &Spec, digits: String) -> String {
    if !spec.group {
        return digits;
    }
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Apply the sign flags to a magnitude.
fn signed(spec: &Spec, magnitude: &str, negative: bool) -> String {
    match (negative, spec.paren) {
        (true, true) => format!("({magnitude})"),
        (true, false) => format!("-{magnitude}"),
        (false, _) if spec.plus => format!("+{magnitude}"),
        (false, _) if spec.space => format!(" {magnitude}"),
        (false, _) => magnitude.to_string(),
    }
}

fn float_text(spec: &Spec, f: f64) -> String {
    if f.is_nan() {
        return "NaN".to_string();
    }
    if f.is_infinite() {
        return signed(spec, "Infinity", f < 0.0);
    }
    let precision = spec.precision.unwrap_or(6);
    let digits = Digits::of(f.abs());
    let magnitude = match spec.conv.to_ascii_lowercase() {
        'f' => fixed(spec, &digits, precision),
        'e' => scientific(&digits, precision),
        _ => general(spec, &digits, precision.max(1)),
    };
    signed(spec, &magnitude, f.is_sign_negative() && f != 0.0)
}

/// A non-negative float as decimal digits `d1 d2 d3...` and the position
/// of the decimal point: the value is `0.d1d2d3... * 10^point`.
#[derive(Clone)]
struct Digits {
    digits: Vec<u8>,
    point: i32,
}

impl Digits {
    /// The shortest digits that read back as `f` (what Java starts from).
    fn of(f: f64) -> Digits {
        if f == 0.0 {
            return Digits {
                digits: vec![0],
                point: 1,
            };
        }
        let text = format!("{f:e}");
        let (mantissa, exp) = text.split_once('e').expect("`{:e}` has an exponent");
        let digits: Vec<u8> = mantissa
            .bytes()
            .filter(u8::is_ascii_digit)
            .map(|b| b - b'0')
            .collect();
        Digits {
            digits,
            point: exp.parse::<i32>().expect("a numeric exponent") + 1,
        }
    }

    /// Keep `keep` digits, rounding half up; may carry into a new digit.
    fn round(&self, keep: i64) -> Digits {
        let mut d = self.clone();
        if keep < 0 {
            return Digits {
                digits: vec![0],
                point: d.point,
            };
        }
        let keep = keep as usize;
        if keep >= d.digits.len() {
            d.digits.resize(keep, 0);
            return d;
        }
        let up = d.digits[keep] >= 5;
        d.digits.truncate(keep);
        if up {
            let mut i = keep;
            loop {
                if i == 0 {
                    d.digits.insert(0, 1);
                    d.point += 1;
                    break;
                }
                i -= 1;
                if d.digits[i] == 9 {
                    d.digits[i] = 0;
                } else {
                    d.digits[i] += 1;
                    break;
                }
            }
        }
        d
    }

    fn digit(&self, i: i64) -> char {
        let d = if i < 0 {
            0
        } else {
            self.digits.get(i as usize).copied().unwrap_or(0)
        };
        char::from(b'0' + d)
    }
}

fn fixed(spec: &Spec, digits: &Digits, precision: usize) -> String {
    let d = digits.round(i64::from(digits.point) + precision as i64);
    let point = i64::from(d.point);
    let int_part: String = if point <= 0 {
        "0".to_string()
    } else {
        (0..point).map(|i| d.digit(i)).collect()
    };
    let mut out = group(spec, int_part);
    if precision > 0 || spec.alt {
        out.push('.');
    }
    out.extend((0..precision as i64).map(|i| d.digit(point + i)));
    out
}

fn scientific(digits: &Digits, precision: usize) -> String {
    let d = digits.round(precision as i64 + 1);
    let exp = if d.digits.iter().all(|&x| x == 0) {
        0
    } else {
        d.point - 1
    };
    let mut out = String::new();
    out.push(d.digit(0));
    if precision > 0 {
        out.push('.');
        out.extend((1..=precision as i64).map(|i| d.digit(i)));
    }
    let sign = if exp < 0 { '-' } else { '+' };
    out.push_str(&format!("e{sign}{:02}", exp.abs()));
    out
}

/// Java's `%g`: fixed notation when the rounded value is at least 10^-4
/// and below 10^precision, scientific otherwise.
fn general(spec: &Spec, digits: &Digits, precision: usize) -> String {
    let rounded = digits.round(precision as i64);
    let zero = rounded.digits.iter().all(|&x| x == 0);
    let exp = rounded.point - 1;
    if zero || (-4..precision as i32).contains(&exp) {
        let decimals = if zero {
            precision - 1
        } else {
            (precision as i32 - 1 - exp).max(0) as usize
        };
        fixed(spec, digits, decimals)
    } else {
        scientific(digits, precision - 1)
    }
}

/// Pad to the width: spaces on the left (right with `-`), or zeros after
/// the sign with `0`.
fn pad(out: &mut String, text: &str, spec: &Spec) {
    let len = text.chars().count();
    let Some(width) = spec.width.filter(|&w| w > len) else {
        out.push_str(text);
        return;
    };
    let fill = width - len;
    let numeric = matches!(
        spec.conv,
        'd' | 'x' | 'X' | 'o' | 'f' | 'e' | 'E' | 'g' | 'G'
    );
    if spec.zero && numeric && !text.ends_with("Infinity") && text != "NaN" {
        let sign_len = text
            .find(|c: char| c.is_ascii_alphanumeric())
            .map_or(0, |i| {
                if text[i..].starts_with("0x") {
                    i + 2
                } else {
                    i
                }
            });
        out.push_str(&text[..sign_len]);
        out.extend(std::iter::repeat_n('0', fill));
        out.push_str(&text[sign_len..]);
    } else if spec.left {
        out.push_str(text);
        out.extend(std::iter::repeat_n(' ', fill));
    } else {
        out.extend(std::iter::repeat_n(' ', fill));
        out.push_str(text);
    }
}

pub(super) fn register(r: &mut Registry) {
    r.add("format", "[fmt & args]", 1, MANY, "Java-style formatting: %s %d %f %.2f %e %g %x %o %b %c %% %n with widths and the flags - 0 + , ( #; nil prints as \"\" for %s. `(format \"%s has %05.1f%%\" \"x\" 3.14159)` => `\"x has 003.1%\"`.", format_fn);
}
