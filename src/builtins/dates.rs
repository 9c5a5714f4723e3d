//! The small date and time vocabulary of the specification:
//! `java.util.Date.`, `LocalDate/parse`, `Instant/parse`,
//! `Duration/between`, `System/currentTimeMillis` and the methods on
//! their results.
//!
//! There is no date type among the values, so points in time
//! (`java.util.Date`, `Instant`) are epoch milliseconds (integers),
//! durations are milliseconds, and a `LocalDate` is its ISO text
//! `"2024-01-31"`, validated. All of them compare and print as such.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::Error;
use crate::eval::{EvalResult, Interp};
use crate::value::Value;

use super::core::{expect_int, type_error};
use super::Registry;

const MS_PER_DAY: i64 = 86_400_000;

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard
/// Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day count since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// A cursor over date text.
struct Scan<'a> {
    s: &'a [u8],
    at: usize,
}

impl Scan<'_> {
    fn digits(&mut self, min: usize, max: usize) -> Option<i64> {
        let start = self.at;
        while self.at < self.s.len() && self.at - start < max && self.s[self.at].is_ascii_digit() {
            self.at += 1;
        }
        if self.at - start < min {
            return None;
        }
        std::str::from_utf8(&self.s[start..self.at])
            .ok()?
            .parse()
            .ok()
    }

    fn eat(&mut self, b: u8) -> bool {
        let hit = self.s.get(self.at) == Some(&b);
        self.at += usize::from(hit);
        hit
    }

    fn done(&self) -> bool {
        self.at == self.s.len()
    }

    /// `YYYY-MM-DD` (a year of 4 to 9 digits, signed or not: `+10000-01-01`
    /// as `LocalDate` writes it), as days since the epoch.
    fn date(&mut self) -> Option<i64> {
        let negative = self.eat(b'-');
        if !negative {
            self.eat(b'+');
        }
        let y = self.digits(4, 9)?;
        let y = if negative { -y } else { y };
        if !self.eat(b'-') {
            return None;
        }
        let m = self.digits(2, 2)?;
        if !self.eat(b'-') {
            return None;
        }
        let d = self.digits(2, 2)?;
        ((1..=12).contains(&m) && (1..=days_in_month(y, m)).contains(&d))
            .then(|| days_from_civil(y, m, d))
    }

    /// `HH:MM[:SS[.fraction]]`, as milliseconds into the day.
    fn time(&mut self) -> Option<i64> {
        let h = self.digits(2, 2)?;
        if !self.eat(b':') {
            return None;
        }
        let min = self.digits(2, 2)?;
        let mut sec = 0;
        let mut ms = 0;
        if self.eat(b':') {
            sec = self.digits(2, 2)?;
            if self.eat(b'.') || self.eat(b',') {
                let start = self.at;
                let frac = self.digits(1, 9)?;
                let len = (self.at - start) as u32;
                ms = if len >= 3 {
                    frac / 10_i64.pow(len - 3)
                } else {
                    frac * 10_i64.pow(3 - len)
                };
            }
        }
        (h < 24 && min < 60 && sec < 60).then_some(((h * 60 + min) * 60 + sec) * 1000 + ms)
    }

    /// `Z`, `±HH:MM`, `±HHMM` or `±HH`, as milliseconds east of UTC.
    fn offset(&mut self) -> Option<i64> {
        if self.eat(b'Z') {
            return Some(0);
        }
        let sign = if self.eat(b'+') {
            1
        } else if self.eat(b'-') {
            -1
        } else {
            return None;
        };
        let h = self.digits(2, 2)?;
        self.eat(b':');
        let m = if self.done() { 0 } else { self.digits(2, 2)? };
        (h < 19 && m < 60).then_some(sign * (h * 60 + m) * 60_000)
    }
}

/// Strict `YYYY-MM-DD`, as days since the epoch.
fn parse_local_date(s: &str) -> Option<i64> {
    let mut scan = Scan {
        s: s.as_bytes(),
        at: 0,
    };
    let days = scan.date()?;
    scan.done().then_some(days)
}

/// An ISO-8601 date-time; with `offset_required`, the `Z` or offset must
/// be there (as `Instant/parse` demands), otherwise UTC is assumed.
fn parse_iso_instant(s: &str, offset_required: bool) -> Result<i64, Unread> {
    let mut scan = Scan {
        s: s.as_bytes(),
        at: 0,
    };
    let days = scan.date().ok_or(Unread::Syntax)?;
    if !(scan.eat(b'T') || scan.eat(b' ')) {
        return Err(Unread::Syntax);
    }
    let ms = scan.time().ok_or(Unread::Syntax)?;
    let offset = if scan.done() && !offset_required {
        0
    } else {
        scan.offset().ok_or(Unread::Syntax)?
    };
    if !scan.done() {
        return Err(Unread::Syntax);
    }
    epoch_ms(days, ms, offset)
}

/// Why date text was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unread {
    /// Not in any accepted form.
    Syntax,
    /// A valid date, but too far from 1970 for epoch milliseconds (a
    /// 64-bit integer: about 292 million years either way).
    Range,
}

/// Epoch milliseconds of a day count, milliseconds into that day and a
/// UTC offset in milliseconds, if they fit in 64 bits.
fn epoch_ms(days: i64, ms: i64, offset: i64) -> Result<i64, Unread> {
    days.checked_mul(MS_PER_DAY)
        .and_then(|t| t.checked_add(ms))
        .and_then(|t| t.checked_sub(offset))
        .ok_or(Unread::Range)
}

/// RFC 2822 text as in mail headers: `[Wed, ]8 Jan 2026 14:30[:00] +0000`
/// (or a `GMT`/`UTC`/`UT`/`Z` zone).
fn parse_rfc2822(s: &str) -> Option<i64> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let s = match s.split_once(',') {
        Some((_, rest)) => rest.trim(),
        None => s.trim(),
    };
    let parts: Vec<&str> = s.split_whitespace().collect();
    let [day, month, year, time, zone] = parts.as_slice() else {
        return None;
    };
    let d: i64 = day.parse().ok()?;
    let m = MONTHS.iter().position(|x| x.eq_ignore_ascii_case(month))? as i64 + 1;
    let y: i64 = year.parse().ok().filter(|_| year.len() == 4)?;
    if !(1..=days_in_month(y, m)).contains(&d) {
        return None;
    }
    let mut scan = Scan {
        s: time.as_bytes(),
        at: 0,
    };
    let ms = scan.time().filter(|_| scan.done())?;
    let offset = match *zone {
        "GMT" | "UTC" | "UT" | "Z" => 0,
        z => {
            let mut scan = Scan {
                s: z.as_bytes(),
                at: 0,
            };
            scan.offset().filter(|_| scan.done())?
        }
    };
    Some(days_from_civil(y, m, d) * MS_PER_DAY + ms - offset)
}

/// Epoch milliseconds of date text: an ISO date-time (UTC when no
/// offset), a date alone (midnight UTC) or RFC 2822.
fn parse_date_text(s: &str) -> Result<i64, Unread> {
    match parse_iso_instant(s, false) {
        Err(Unread::Syntax) => match parse_local_date(s) {
            Some(days) => epoch_ms(days, 0, 0),
            None => parse_rfc2822(s).ok_or(Unread::Syntax),
        },
        read => read,
    }
}

/// The error for date text that was not read: unparsable, or out of
/// the range of epoch milliseconds.
fn unread(who: &str, s: &str, what: &str, why: Unread) -> Error {
    match why {
        Unread::Syntax => unparsable(who, s, what),
        Unread::Range => Error::arithmetic(format!(
            "`{who}`: {} is too far from 1970 for epoch milliseconds (about 292 million years either way)",
            crate::value::pr_str(&Value::str(s))
        )),
    }
}

fn format_date(days: i64) -> String {
    let (y, m, d) = civil_from_days(days);
    if (0..=9999).contains(&y) {
        format!("{y:04}-{m:02}-{d:02}")
    } else {
        format!("{y:+05}-{m:02}-{d:02}")
    }
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

fn unparsable(who: &str, s: &str, what: &str) -> Error {
    Error::execution(format!(
        "`{who}` cannot parse {} as {what}",
        crate::value::pr_str(&Value::str(s))
    ))
}

/// A point in time given to a method: epoch milliseconds, or date text.
fn millis(who: &str, v: &Value) -> Result<i64, Error> {
    if let Some(s) = v.as_str() {
        return parse_date_text(s).map_err(|why| unread(who, s, "a date", why));
    }
    match v {
        Value::Int(ms) => Ok(*ms),
        other => Err(type_error(
            who,
            "a date (epoch milliseconds, as `java.util.Date.` gives)",
            other,
        )),
    }
}

/// A `LocalDate` given to a method: its ISO text.
fn local_date(who: &str, v: &Value) -> Result<i64, Error> {
    match v.as_str() {
        Some(s) => {
            parse_local_date(s).ok_or_else(|| unparsable(who, s, "a local date (YYYY-MM-DD)"))
        }
        None => Err(type_error(who, "a local date (YYYY-MM-DD text)", v)),
    }
}

fn new_date(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    match (args.first(), args.first().and_then(Value::as_str)) {
        (None, _) => Ok(Value::Int(now_ms())),
        (Some(Value::Int(ms)), _) => Ok(Value::Int(*ms)),
        (_, Some(s)) => {
            Ok(Value::Int(parse_date_text(s).map_err(|why| {
                unread("java.util.Date.", s, "a date", why)
            })?))
        }
        (Some(other), _) => {
            Err(type_error("java.util.Date.", "epoch milliseconds or date text", other).into())
        }
    }
}

fn local_date_parse(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let days = local_date("LocalDate/parse", &args[0])?;
    Ok(Value::from(format_date(days)))
}

fn instant_parse(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    match args[0].as_str() {
        Some(s) => parse_iso_instant(s, true).map(Value::Int).map_err(|why| {
            unread(
                "Instant/parse",
                s,
                "an instant (like 2024-01-31T12:00:00Z)",
                why,
            )
            .into()
        }),
        None => Err(type_error("Instant/parse", "ISO-8601 instant text", &args[0]).into()),
    }
}

fn duration_between(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let start = millis("Duration/between", &args[0])?;
    let end = millis("Duration/between", &args[1])?;
    Ok(Value::Int(end.checked_sub(start).ok_or_else(|| {
        Error::arithmetic("Integer overflow in `Duration/between`")
    })?))
}

fn current_time_millis(_: &mut Interp<'_>, _: &[Value]) -> EvalResult {
    Ok(Value::Int(now_ms()))
}

fn get_time(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::Int(millis(".getTime", &args[0])?))
}

fn to_days(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::Int(expect_int(".toDays", &args[0])? / MS_PER_DAY))
}

fn to_millis(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::Int(expect_int(".toMillis", &args[0])?))
}

fn to_epoch_day(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::Int(local_date(".toEpochDay", &args[0])?))
}

fn shift_days(who: &str, args: &[Value], sign: i64) -> EvalResult {
    let days = local_date(who, &args[0])?;
    let n = expect_int(who, &args[1])?;
    let shifted = n
        .checked_mul(sign)
        .and_then(|n| days.checked_add(n))
        .filter(|d| (min_local_date()..=max_local_date()).contains(d))
        .ok_or_else(|| {
            Error::arithmetic(format!(
                "`{who}` would move the date past the range of dates, -999999999-01-01 to +999999999-12-31"
            ))
        })?;
    Ok(Value::from(format_date(shifted)))
}

/// The first and last day a `LocalDate` can be (as in Java), as days
/// since 1970-01-01: the years of 9 digits that date text can hold.
fn min_local_date() -> i64 {
    days_from_civil(-999_999_999, 1, 1)
}

fn max_local_date() -> i64 {
    days_from_civil(999_999_999, 12, 31)
}

fn plus_days(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    shift_days(".plusDays", args, 1)
}

fn minus_days(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    shift_days(".minusDays", args, -1)
}

/// Order two dates of the same kind: local dates by day, points in time
/// by milliseconds.
fn order(who: &str, args: &[Value]) -> Result<std::cmp::Ordering, Error> {
    let both_local = args
        .iter()
        .all(|a| a.as_str().is_some_and(|s| parse_local_date(s).is_some()));
    if both_local {
        return Ok(local_date(who, &args[0])?.cmp(&local_date(who, &args[1])?));
    }
    Ok(millis(who, &args[0])?.cmp(&millis(who, &args[1])?))
}

fn is_before(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(order(".isBefore", args)?.is_lt()))
}

fn is_after(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(order(".isAfter", args)?.is_gt()))
}

pub(super) fn register(r: &mut Registry) {
    r.add("java.util.Date.", "[ms-or-text?]", 0, 1, "A point in time as epoch milliseconds: now, the given milliseconds, or parsed ISO-8601 / RFC 2822 text (UTC unless an offset is given). `(java.util.Date. \"1970-01-02\")` => `86400000`.", new_date);
    r.alias("Date.", "java.util.Date.");
    r.add("LocalDate/parse", "[s]", 1, 1, "Validate a YYYY-MM-DD date; the date is kept as that text. `(LocalDate/parse \"2024-02-29\")` => `\"2024-02-29\"`.", local_date_parse);
    r.alias("java.time.LocalDate/parse", "LocalDate/parse");
    r.add("Instant/parse", "[s]", 1, 1, "An ISO-8601 instant with a `Z` or offset, as epoch milliseconds. `(Instant/parse \"1970-01-01T00:00:01Z\")` => `1000`.", instant_parse);
    r.alias("java.time.Instant/parse", "Instant/parse");
    r.add(
        "Duration/between",
        "[start end]",
        2,
        2,
        "The milliseconds from start to end. `(Duration/between 1000 3000)` => `2000`.",
        duration_between,
    );
    r.alias("java.time.Duration/between", "Duration/between");
    r.add(
        "System/currentTimeMillis",
        "[]",
        0,
        0,
        "The current time in epoch milliseconds. `(pos? (System/currentTimeMillis))` => `true`.",
        current_time_millis,
    );
    r.add(".getTime", "[date]", 1, 1, "The epoch milliseconds of a date (dates already are milliseconds; date text is parsed). `(.getTime (java.util.Date. 5))` => `5`.", get_time);
    r.alias(".toEpochMilli", ".getTime");
    r.alias("inst-ms", ".getTime");
    r.add(
        ".toMillis",
        "[duration]",
        1,
        1,
        "The milliseconds of a duration. `(.toMillis (Duration/between 0 1500))` => `1500`.",
        to_millis,
    );
    r.add(
        ".toDays",
        "[duration]",
        1,
        1,
        "The whole days of a duration. `(.toDays 172800000)` => `2`.",
        to_days,
    );
    r.add(
        ".toEpochDay",
        "[local-date]",
        1,
        1,
        "Days since 1970-01-01. `(.toEpochDay (LocalDate/parse \"1970-01-11\"))` => `10`.",
        to_epoch_day,
    );
    r.add(".plusDays", "[local-date n]", 2, 2, "The date n days later. `(.plusDays (LocalDate/parse \"2024-02-28\") 2)` => `\"2024-03-01\"`.", plus_days);
    r.add(".minusDays", "[local-date n]", 2, 2, "The date n days earlier. `(.minusDays (LocalDate/parse \"2024-03-01\") 1)` => `\"2024-02-29\"`.", minus_days);
    r.add(".isBefore", "[a b]", 2, 2, "True if date a is before b (two local dates, or two points in time). `(.isBefore (LocalDate/parse \"2024-01-01\") (LocalDate/parse \"2024-01-02\"))` => `true`.", is_before);
    r.alias(".before", ".isBefore");
    r.add(
        ".isAfter",
        "[a b]",
        2,
        2,
        "True if date a is after b. `(.isAfter 2000 1000)` => `true`.",
        is_after,
    );
    r.alias(".after", ".isAfter");
}
