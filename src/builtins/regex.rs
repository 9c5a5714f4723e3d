//! Regular expressions: Java-style syntax via `fancy-regex` (lookaround
//! and backreferences included), with a backtracking limit, a pattern
//! length limit and input truncation so no pattern can hang a program.

use std::sync::Arc;

use crate::error::Error;
use crate::eval::{EvalResult, Interp};
use crate::value::{Regex, Value};

use super::bounded::Text;
use super::core::{expect_str, type_error, vector_result};
use super::regex_cost;
use super::regex_direct::{Direct, Found, Outcome};
use super::Registry;

/// Longest pattern accepted, in bytes.
const MAX_PATTERN: usize = 256;
/// Backtracking steps one attempt of a pattern on the linear engine's
/// side may take (fancy-regex wants a limit even where nothing
/// backtracks); backtracking patterns get theirs from
/// [`regex_cost::bounds`].
const LINEAR_BACKTRACK_LIMIT: usize = 10_000;
/// A pattern the linear-time engine runs searches texts of any length
/// (the meter reads the clock between searches); a backtracking pattern
/// searches texts of at most [`regex_cost::MAX_BACKTRACKING_INPUT`] bytes,
/// fewer the heavier it is, and a longer text is an error naming the cap
/// (never a search of its start only: that gave partial answers).
const ANY_LENGTH: usize = usize::MAX;

/// Compile a pattern into a regex value.
pub(crate) fn compile_regex(source: &str) -> Result<Value, Error> {
    compile(source).map(Value::Regex)
}

/// Compile a pattern, with the pattern-length and backtracking limits.
pub(crate) fn compile(source: &str) -> Result<Arc<Regex>, Error> {
    if source.len() > MAX_PATTERN {
        return Err(Error::execution(format!(
            "Regex pattern is {} bytes long, over the limit of {MAX_PATTERN}",
            source.len()
        )));
    }
    cached(source, build_regex)
}

/// Compiled patterns kept for the process, by source text.
const CACHE_ENTRIES: usize = 256;

/// The compiled regex for `source`, built once per process while the cache
/// has room: agent loops run the same patterns turn after turn, and
/// compiling one can cost more than the searches that use it. A full
/// cache starts over.
fn cached(
    source: &str,
    build: impl FnOnce(&str) -> Result<Arc<Regex>, Error>,
) -> Result<Arc<Regex>, Error> {
    type Cache = std::collections::HashMap<String, Arc<Regex>, crate::value::FixedState>;
    static CACHE: std::sync::Mutex<Option<Cache>> = std::sync::Mutex::new(None);
    let lookup = |cache: &mut Option<Cache>| cache.as_ref().and_then(|c| c.get(source).cloned());
    if let Some(hit) = lookup(&mut CACHE.lock().unwrap_or_else(|p| p.into_inner())) {
        return Ok(hit);
    }
    let regex = build(source)?;
    let mut guard = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    let cache = guard.get_or_insert_with(Cache::default);
    if cache.len() >= CACHE_ENTRIES {
        cache.clear();
    }
    cache.insert(source.to_string(), regex.clone());
    Ok(regex)
}

/// Compile a pattern whose length was checked (or derived from one that
/// was), with the bounds its cost calls for.
fn build_regex(source: &str) -> Result<Arc<Regex>, Error> {
    let build = |pattern: &str, backtrack_limit: usize| {
        fancy_regex::RegexBuilder::new(pattern)
            .backtrack_limit(backtrack_limit)
            .delegate_size_limit(COMPILED_SIZE_LIMIT)
            .build()
            .map_err(|e| compile_error(source, e))
    };
    // Java's (so Clojure's) `\d \w \s` are ASCII.
    let pattern = super::regex_ascii::ascii_classes(source);
    // A pattern the linear-time engine accepts is searched by it (fast,
    // no backtracking); any other is searched position by position, over
    // less text and with fewer steps the heavier it is.
    let linear = regex_syntax::Parser::new()
        .parse(&pattern)
        .ok()
        .filter(|_| !possessive_or_atomic(&pattern));
    let bounds = if linear.is_some() {
        None
    } else {
        Some(backtracking_bounds(source, &pattern)?)
    };
    let backtrack_limit = bounds.map_or(LINEAR_BACKTRACK_LIMIT, |b| b.backtrack_limit);
    let regex = match build(&pattern, backtrack_limit) {
        Ok(r) => r,
        // A syntax error is reported against the pattern as written (its
        // positions); finding it again is quick.
        Err(e) if pattern != source && fancy_regex::Expr::parse_tree(&pattern).is_err() => {
            return Err(build(source, backtrack_limit).err().unwrap_or(e))
        }
        Err(e) => return Err(e),
    };
    let stepped = match bounds {
        None => None,
        Some(_) => Some(build(&format!("\\G(?:{pattern})"), backtrack_limit)?),
    };
    Ok(Arc::new(Regex {
        source: source.to_string(),
        regex,
        stepped,
        linear: linear.map(Arc::new),
        direct: std::sync::OnceLock::new(),
        searched: bounds.map_or(ANY_LENGTH, |b| b.searched),
        backtrack_limit,
        whole: std::sync::OnceLock::new(),
    }))
}

/// Most memory the linear engine's compiled form of a pattern (or of one
/// piece of a backtracking pattern) may take. Compiling takes about 15 ms
/// a megabyte, and the meter cannot stop it; the regex crate's default of
/// 10 MB would let one `re-pattern` take a quarter of a second.
const COMPILED_SIZE_LIMIT: usize = 2 << 20;

/// The error for a pattern fancy-regex refused, named as written.
fn compile_error(source: &str, e: fancy_regex::Error) -> Error {
    let over_size = matches!(&e, fancy_regex::Error::CompileError(inner)
        if matches!(inner.as_ref(), fancy_regex::CompileError::InnerError(build)
            if build.size_limit().is_some()));
    if !over_size {
        return Error::execution(format!("Invalid regex `{source}`: {e}"));
    }
    Error::execution(format!(
        "Regex `{source}` is too large: compiled, it would take more than the limit of {} MB",
        COMPILED_SIZE_LIMIT >> 20
    ))
    .with_hint(
        "use smaller counts in `{n,m}` or narrower classes: `\\p{L}` stands for some 650 \
         ranges of characters, `[a-z]` for one",
    )
}

/// The bounds of a backtracking pattern, or the error for one too heavy
/// to search. A pattern that does not parse gets the tightest bounds; its
/// compilation reports the error.
fn backtracking_bounds(source: &str, pattern: &str) -> Result<regex_cost::Bounds, Error> {
    let weight = regex_cost::weight(pattern).unwrap_or(regex_cost::MAX_WEIGHT);
    regex_cost::bounds(weight).ok_or_else(|| {
        Error::execution(format!(
            "Regex `{source}` is too large for lookaround, backreferences or possessive \
             quantifiers: with its repetitions counted out it has {weight} positions, over the \
             limit of {}",
            regex_cost::MAX_WEIGHT
        ))
        .with_hint(
            "use smaller counts in `{n,m}`, or match without lookaround and test the matches \
             in code",
        )
    })
}

/// Whether `pattern` has a possessive quantifier (`a*+`, `a++`, `a?+`,
/// `a{2}+`) or an atomic group (`(?>...)`): fancy-regex runs those on its
/// backtracking engine, although the linear engine's parser accepts the
/// quantifiers (as a repetition repeated). Errs towards true: a pattern
/// taken for backtracking is only searched more carefully.
fn possessive_or_atomic(pattern: &str) -> bool {
    let chars: Vec<char> = pattern.chars().collect();
    let mut after_quantifier = false;
    let mut in_class = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if c == '\\' {
            i += 1;
            after_quantifier = false;
            continue;
        }
        if in_class {
            in_class = c != ']';
            continue;
        }
        match c {
            '[' => {
                in_class = true;
                after_quantifier = false;
            }
            '(' if chars.get(i) == Some(&'?') => {
                if chars.get(i + 1) == Some(&'>') {
                    return true;
                }
                i += 1;
                after_quantifier = false;
            }
            '+' if after_quantifier => return true,
            '*' | '+' | '?' | '}' => after_quantifier = true,
            _ => after_quantifier = false,
        }
    }
    false
}

/// Work units charged for one search attempt: at least this, the meter
/// reading the clock about every 32 attempts.
const ATTEMPT_WORK: u32 = 64;

/// Work units for an attempt that may scan the `rest` bytes after its
/// start (a backtracking attempt can read to the end of the text and back,
/// and again for each position it gives back): from a few hundred bytes
/// on, the meter reads the clock after every attempt.
fn attempt_work(rest: usize) -> u32 {
    if rest >= CLOCK_EVERY_ATTEMPT_FROM {
        return crate::meter::CHECK_EVERY;
    }
    u32::try_from(rest / 16)
        .unwrap_or(u32::MAX)
        .max(ATTEMPT_WORK)
}

/// The rest of a text, in bytes, from which each backtracking attempt
/// is followed by a reading of the clock (a few tens of nanoseconds,
/// against an attempt that may take milliseconds).
const CLOCK_EVERY_ATTEMPT_FROM: usize = 256;

/// The first match at or after `pos`. A backtracking pattern is tried at
/// each position in turn, with the meter consulted between attempts, so
/// no search can outlast the program's time limit (a stopped meter ends
/// the search with no match; its error replaces the result).
fn captures_at<'t>(
    re: &Regex,
    s: &'t str,
    pos: usize,
) -> Result<Option<fancy_regex::Captures<'t>>, Error> {
    let Some(stepped) = &re.stepped else {
        // One search may scan the whole rest of the text.
        if !crate::meter::work(attempt_work(s.len().saturating_sub(pos))) {
            return Ok(None);
        }
        return re
            .regex
            .captures_from_pos(s, pos)
            .map_err(|e| match_error(re, e));
    };
    let mut start = pos;
    while start <= s.len() {
        if !crate::meter::work(attempt_work(s.len() - start)) {
            return Ok(None);
        }
        if let Some(caps) = stepped
            .captures_from_pos(s, start)
            .map_err(|e| match_error(re, e))?
        {
            return Ok(Some(caps));
        }
        start += s[start..].chars().next().map_or(1, char::len_utf8);
    }
    Ok(None)
}

/// `s` when `re` may search all of it; a text past the length `re` may
/// search is an error naming the cap (a search of its start alone would
/// give a partial answer).
pub(crate) fn whole_text<'t>(who: &str, re: &Regex, s: &'t str) -> Result<&'t str, Error> {
    let max = re.searched;
    if s.len() <= max {
        return Ok(s);
    }
    let why = if re.stepped.is_some() {
        "patterns with lookaround, backreferences or possessive quantifiers search fewer bytes, \
         the fewer the heavier the pattern; "
    } else {
        ""
    };
    Err(Error::execution(format!(
        "`{who}` searches texts of at most {max} bytes with this pattern; this one has {}",
        s.len()
    ))
    .with_hint(format!(
        "{why}search pieces of the text (`subs`), or use a pattern without lookaround or \
         backreferences, which searches texts of any length"
    )))
}

/// The error for a search of `re` that fancy-regex gave up.
pub(crate) fn match_error(re: &Regex, e: fancy_regex::Error) -> Error {
    use fancy_regex::RuntimeError::{BacktrackLimitExceeded, StackOverflow};
    let why = match &e {
        fancy_regex::Error::RuntimeError(BacktrackLimitExceeded) => format!(
            "one attempt needed more than the {} backtracking steps this pattern may take \
             (the heavier the pattern, the fewer)",
            re.backtrack_limit
        ),
        fancy_regex::Error::RuntimeError(StackOverflow) => {
            "its backtracking stack grew past its limit".to_string()
        }
        other => other.to_string(),
    };
    Error::execution(format!("Regex search gave up: {why}")).with_hint(
        "make the pattern more specific: anchor it, or use a class such as `[^,]*` or a lazy \
         `.*?` in place of `.*`",
    )
}

fn regex_arg(who: &str, v: &Value) -> Result<Arc<Regex>, Error> {
    match (v, v.as_str()) {
        (Value::Regex(r), _) => Ok(r.clone()),
        (_, Some(s)) => compile(s),
        (other, None) => Err(type_error(who, "a regex", other)),
    }
}

impl Clone for Regex {
    fn clone(&self) -> Self {
        Regex {
            source: self.source.clone(),
            regex: self.regex.clone(),
            stepped: self.stepped.clone(),
            linear: self.linear.clone(),
            direct: self.direct.clone(),
            searched: self.searched,
            backtrack_limit: self.backtrack_limit,
            whole: self.whole.clone(),
        }
    }
}

/// A match as Clojure returns it: the string, or a vector of the match and
/// its groups (nil for groups that did not take part).
fn match_value(caps: &fancy_regex::Captures<'_>) -> Value {
    groups_value(caps.len(), |i| caps.get(i).map(|m| m.as_str()))
}

/// [`match_value`] for `len` groups (the whole match first) that `group`
/// gives.
fn groups_value<'t>(len: usize, group: impl Fn(usize) -> Option<&'t str>) -> Value {
    if len == 1 {
        return Value::from(group(0).unwrap_or(""));
    }
    Value::vector((0..len).map(|i| group(i).map_or(Value::Nil, Value::from)))
}

/// The first match in `s` and its groups, found by whichever engine the
/// pattern has.
enum FirstMatch<'t, 'f> {
    Direct(&'t str, &'f Found),
    Captures(fancy_regex::Captures<'t>),
}

impl<'t> FirstMatch<'t, '_> {
    fn len(&self) -> usize {
        match self {
            FirstMatch::Direct(_, found) => found.len(),
            FirstMatch::Captures(caps) => caps.len(),
        }
    }

    fn group(&self, i: usize) -> Option<&'t str> {
        match self {
            FirstMatch::Direct(s, found) => found.group(i).and_then(|r| s.get(r)),
            FirstMatch::Captures(caps) => caps.get(i).map(|m| m.as_str()),
        }
    }

    fn value(&self) -> Value {
        groups_value(self.len(), |i| self.group(i))
    }
}

/// The first match of `re` in `s`: in one pass when the pattern has a
/// direct path (see [`Direct`]; `found` then holds where), else through
/// [`captures_at`].
fn first_match<'t, 'f>(
    re: &Regex,
    s: &'t str,
    found: &'f mut Found,
) -> Result<Option<FirstMatch<'t, 'f>>, Error> {
    let direct = re
        .direct
        .get_or_init(|| re.linear.as_deref().and_then(Direct::build).map(Arc::new));
    if let Some(direct) = direct {
        if !crate::meter::work(ATTEMPT_WORK) {
            return Ok(None);
        }
        match direct.first(s, 0, found) {
            Outcome::Match => return Ok(Some(FirstMatch::Direct(s, found))),
            Outcome::NoMatch => return Ok(None),
            Outcome::GaveUp => {}
        }
    }
    Ok(captures_at(re, s, 0)?.map(FirstMatch::Captures))
}

fn re_pattern(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    match &args[0] {
        Value::Regex(_) => Ok(args[0].clone()),
        other => Ok(compile_regex(expect_str("re-pattern", other)?)?),
    }
}

fn re_find(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let re = regex_arg("re-find", &args[0])?;
    let s = whole_text("re-find", &re, expect_str("re-find", &args[1])?)?;
    Ok(first_match(&re, s, &mut Found::default())?.map_or(Value::Nil, |m| m.value()))
}

fn re_matches(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let re = regex_arg("re-matches", &args[0])?;
    let anchored = re
        .whole
        .get_or_init(|| build_regex(&format!("^(?:{})$", re.source)))
        .clone()?;
    let s = whole_text("re-matches", &anchored, expect_str("re-matches", &args[1])?)?;
    Ok(
        match anchored
            .regex
            .captures(s)
            .map_err(|e| match_error(&anchored, e))?
        {
            // The anchoring group is not one of the user's groups.
            Some(caps) => match_value(&caps),
            None => Value::Nil,
        },
    )
}

fn re_seq(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let re = regex_arg("re-seq", &args[0])?;
    let s = whole_text("re-seq", &re, expect_str("re-seq", &args[1])?)?;
    let mut out = Vec::new();
    let mut matches = JavaMatches::new(&re, s);
    while let Some(caps) = matches.next_match()? {
        out.push(match_value(&caps));
        interp.check_size(out.len())?;
    }
    if out.is_empty() {
        return Ok(Value::Nil);
    }
    vector_result(interp, out)
}

/// Every match with its groups, found as Java's `Matcher.find` finds them
/// (Clojure's `re-seq`, `split` and `replace` use it): each search starts
/// where the previous match ended, one character later if that match was
/// empty. Rust's iterators also skip an empty match right after a
/// non-empty one, so they found 3 matches of `#"a*"` in "baaab", not 4.
fn java_captures<'t>(re: &Regex, s: &'t str) -> Result<Vec<fancy_regex::Captures<'t>>, Error> {
    let mut out = Vec::new();
    let mut matches = JavaMatches::new(re, s);
    while let Some(caps) = matches.next_match()? {
        out.push(caps);
    }
    Ok(out)
}

/// The matches [`java_captures`] finds, one at a time: builders stop at
/// the size limit without first collecting every match.
struct JavaMatches<'r, 't> {
    re: &'r Regex,
    s: &'t str,
    pos: usize,
}

impl<'r, 't> JavaMatches<'r, 't> {
    fn new(re: &'r Regex, s: &'t str) -> Self {
        JavaMatches { re, s, pos: 0 }
    }

    fn next_match(&mut self) -> Result<Option<fancy_regex::Captures<'t>>, Error> {
        let s = self.s;
        if self.pos > s.len() {
            return Ok(None);
        }
        let Some(caps) = captures_at(self.re, s, self.pos)? else {
            self.pos = s.len() + 1;
            return Ok(None);
        };
        let m = caps.get(0).expect("group 0 takes part in every match");
        self.pos = if m.start() == m.end() {
            m.end() + s[m.end()..].chars().next().map_or(1, char::len_utf8)
        } else {
            m.end()
        };
        Ok(Some(caps))
    }
}

/// Java's `String.split(regex, limit)` for a limit of 0 (trailing empty
/// parts dropped) or negative (kept): no empty leading part for an empty
/// match at the start.
pub(crate) fn split(re: &Regex, s: &str, keep_trailing: bool) -> Result<Vec<Value>, Error> {
    let s = whole_text("split", re, s)?;
    let mut out = Vec::new();
    let mut index = 0;
    for caps in java_captures(re, s)? {
        let m = caps.get(0).expect("group 0 takes part in every match");
        if index == 0 && m.start() == 0 && m.end() == 0 {
            continue;
        }
        out.push(Value::from(&s[index..m.start()]));
        index = m.end();
    }
    if index == 0 {
        return Ok(vec![Value::from(s)]);
    }
    out.push(Value::from(&s[index..]));
    while !keep_trailing && out.last().and_then(Value::as_str) == Some("") {
        out.pop();
    }
    Ok(out)
}

/// Replace the first `limit` matches (all for 0); `$1` in the
/// replacement refers to groups. Matching follows Java (see
/// `java_captures`). The text grows under the size limit: each expansion
/// is written into the room left, and stops with the memory error there.
pub(crate) fn replace_n(
    re: &Regex,
    s: &str,
    limit: usize,
    replacement: &str,
    out: &mut Text,
) -> Result<(), Error> {
    let searched = whole_text("replace", re, s)?;
    let mut last = 0;
    let mut expansion = Vec::new();
    let mut matches = JavaMatches::new(re, searched);
    let mut n = 0;
    while let Some(caps) = matches.next_match()? {
        if limit != 0 && n == limit {
            break;
        }
        n += 1;
        let m = caps.get(0).expect("group 0 takes part in every match");
        out.push_str(&s[last..m.start()])?;
        expansion.clear();
        let room = Room {
            bytes: &mut expansion,
            left: out.room(),
        };
        if fancy_regex::Expander::default()
            .write_expansion(room, replacement, &caps)
            .is_err()
        {
            return Err(out.over(expansion.len().saturating_add(1)));
        }
        out.push_str(std::str::from_utf8(&expansion).unwrap_or_default())?;
        last = m.end();
    }
    out.push_str(&s[last..])
}

/// A writer into `bytes` that refuses to hold more than `left` bytes.
struct Room<'a> {
    bytes: &'a mut Vec<u8>,
    left: usize,
}

impl std::io::Write for Room<'_> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        if self.bytes.len().saturating_add(data.len()) > self.left {
            return Err(std::io::Error::other("over the size limit"));
        }
        self.bytes.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Replace the first `limit` matches (all for 0) by `(str (f match))`,
/// the match given as `re-find` returns it.
pub(crate) fn replace_with_fn(
    interp: &mut Interp<'_>,
    re: &Regex,
    s: &str,
    limit: usize,
    f: &Value,
    out: &mut Text,
) -> EvalResult<()> {
    let searched = whole_text("replace", re, s)?;
    let mut last = 0;
    let mut matches = JavaMatches::new(re, searched);
    let mut n = 0;
    while let Some(caps) = matches.next_match()? {
        if limit != 0 && n == limit {
            break;
        }
        n += 1;
        let whole = caps.get(0).expect("group 0 is the match");
        out.push_str(&s[last..whole.start()])?;
        let replacement = interp.call(f, &[match_value(&caps)])?;
        out.push_value(&replacement)?;
        last = whole.end();
    }
    out.push_str(&s[last..])?;
    Ok(())
}

/// Java's `String.split(regex, limit)`: at most `limit` parts, the last
/// holding the rest of the text.
pub(crate) fn splitn(re: &Regex, s: &str, limit: usize) -> Result<Vec<Value>, Error> {
    let s = whole_text("split", re, s)?;
    if re.stepped.is_some() {
        return splitn_stepped(re, s, limit);
    }
    let mut out = Vec::new();
    for part in re.regex.splitn(s, limit) {
        let part = part.map_err(|e| match_error(re, e))?;
        if !crate::meter::work(attempt_work(part.len())) {
            break;
        }
        out.push(Value::from(part));
    }
    Ok(out)
}

/// [`splitn`] for backtracking patterns, on metered searches.
fn splitn_stepped(re: &Regex, s: &str, limit: usize) -> Result<Vec<Value>, Error> {
    let mut out = Vec::new();
    let mut index = 0;
    for caps in java_captures(re, s)? {
        if limit != 0 && out.len() + 1 >= limit {
            break;
        }
        let m = caps.get(0).expect("group 0 takes part in every match");
        if m.start() == 0 && m.end() == 0 {
            continue;
        }
        out.push(Value::from(&s[index..m.start()]));
        index = m.end();
    }
    out.push(Value::from(&s[index..]));
    Ok(out)
}

/// `(re-split re s)`: the specification's regex-first `split`.
fn re_split(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let re = regex_arg("re-split", &args[0])?;
    let s = expect_str("re-split", &args[1])?;
    let parts = split(&re, s, false)?;
    vector_result(interp, parts)
}

/// Group `n` of the first match of `pattern` in `s`: None when there is
/// no match, or the group does not exist or took no part.
fn extract_group(who: &str, args: &[Value]) -> Result<Option<String>, Error> {
    let re = regex_arg(who, &args[0])?;
    let s = match &args[1] {
        Value::Nil => return Ok(None),
        other => whole_text(who, &re, expect_str(who, other)?)?,
    };
    let n = match args.get(2) {
        None | Some(Value::Nil) => 1,
        Some(n) => super::core::expect_int(who, n)?,
    };
    let Ok(n) = usize::try_from(n) else {
        return Ok(None);
    };
    Ok(first_match(&re, s, &mut Found::default())?.and_then(|m| m.group(n).map(str::to_string)))
}

/// `(extract pattern s n?)`: capture group `n` (default 1, 0 is the whole
/// match) of the first match, or nil.
fn extract(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    Ok(extract_group("extract", args)?.map_or(Value::Nil, Value::from))
}

/// `(extract-int pattern s n? default?)`: `extract`, parsed as an integer
/// (as `parse-long` parses); `default` (nil) when there is no match or
/// the group is not an integer.
fn extract_int(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let default = args.get(3).cloned().unwrap_or(Value::Nil);
    Ok(extract_group("extract-int", args)?
        .and_then(|text| {
            let digits = text.strip_prefix(['+', '-']).unwrap_or(&text);
            (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
                .then(|| text.parse::<i64>().ok())
                .flatten()
        })
        .map_or(default, Value::Int))
}

pub(super) fn register(r: &mut Registry) {
    r.add("re-split", "[re s]", 2, 2, "Split `s` on every match of the regex (a pattern string is compiled); trailing empty parts are dropped. `(re-split #\"\\s+\" \"a  b c\")` => `[\"a\" \"b\" \"c\"]`.", re_split);
    r.add("extract", "[pattern s n?]", 2, 3, "Capture group `n` (default 1; 0 is the whole match) of the first match of `pattern` (a regex or a pattern string) in `s`; nil when nothing matches. `(extract \"ID:(\\\\d+)\" \"ID:42\")` => `\"42\"`.", extract);
    r.add("extract-int", "[pattern s n? default?]", 2, 4, "Like `extract`, parsed as an integer; `default` (nil) when nothing matches or the group is not an integer. `(extract-int \"age=(\\\\d+)\" \"age=25\")` => `25`.", extract_int);
    r.add("re-pattern", "[s]", 1, 1, "Compile a string into a regex (same as `#\"...\"`). `(re-find (re-pattern \"\\\\d+\") \"ab12\")` => `\"12\"`.", re_pattern);
    r.add("re-find", "[re s]", 2, 2, "The first match: a string, or [match group1 ...] when the regex has groups; nil if none. `(re-find #\"(\\d+)-(\\d+)\" \"10-20\")` => `[\"10-20\" \"10\" \"20\"]`.", re_find);
    r.add("re-matches", "[re s]", 2, 2, "Like re-find, but the whole string must match. `(re-matches #\"\\d+\" \"123\")` => `\"123\"`.", re_matches);
    r.add("re-seq", "[re s]", 2, 2, "Every match, as re-find returns them; nil if none. `(re-seq #\"\\d\" \"a1b2\")` => `[\"1\" \"2\"]`.", re_seq);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A backtracking attempt may scan the whole rest of the text; on a
    /// long text each attempt must be enough work for the meter to read
    /// the clock (the fuzzer found 2.7 s under a 200 ms limit when every
    /// attempt counted the same).
    #[test]
    fn an_attempt_on_a_long_text_lets_the_meter_check_the_clock() {
        assert!(attempt_work(40_000) >= crate::meter::CHECK_EVERY);
        assert!(attempt_work(CLOCK_EVERY_ATTEMPT_FROM) >= crate::meter::CHECK_EVERY);
        assert_eq!(attempt_work(10), ATTEMPT_WORK);
        assert!(attempt_work(usize::MAX) >= crate::meter::CHECK_EVERY);
    }

    #[test]
    fn a_pattern_is_compiled_once_per_process_and_errors_are_not_kept() {
        let a = compile("(cached)-\\d+").unwrap();
        let b = compile("(cached)-\\d+").unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert!(compile("(unclosed").is_err());
        assert!(compile("(unclosed").is_err());
    }

    /// `re-matches` compiles the anchored pattern once per regex value, not
    /// once per call (2,000 calls took over a second), and a pattern at
    /// the length limit still anchors.
    #[test]
    fn possessive_quantifiers_and_atomic_groups_are_told_apart() {
        for (pattern, expected) in [
            ("a*+b", true),
            ("a++", true),
            ("a?+", true),
            ("a{2,3}+", true),
            ("(?>ab|a)c", true),
            (".*.*+x", true),
            ("a+b", false),
            ("a*?b", false),
            ("\\++", false),
            ("\\*+", false),
            ("[*+]+", false),
            ("(?:a)+", false),
            ("(?i)a+", false),
            ("\\d{3}-\\d+", false),
        ] {
            assert_eq!(possessive_or_atomic(pattern), expected, "{pattern}");
        }
        // Such patterns are searched one start position at a time.
        assert!(compile("x.*+y").unwrap().stepped.is_some());
        assert!(compile("x.*y").unwrap().stepped.is_none());
    }

    #[test]
    fn the_anchored_pattern_is_compiled_once_and_kept() {
        // A pattern no other test uses: compiled regexes are shared
        // through the process-wide cache.
        let re = compile("a+(b)(?:anchored-once)?").unwrap();
        assert!(re.whole.get().is_none());
        // What `re_matches` does before matching.
        let call = |s: &str| {
            let anchored = re
                .whole
                .get_or_init(|| build_regex(&format!("^(?:{})$", re.source)))
                .clone()
                .unwrap();
            anchored.regex.is_match(s).unwrap()
        };
        assert!(call("aab") && !call("aabc"));
        let first = re.whole.get().unwrap().as_ref().unwrap().clone();
        assert!(call("ab"));
        assert!(Arc::ptr_eq(
            &first,
            re.whole.get().unwrap().as_ref().unwrap()
        ));
        let longest = "a".repeat(MAX_PATTERN);
        let v = crate::eval::eval_str(&format!(
            "(re-matches (re-pattern \"{longest}\") \"{longest}\")"
        ))
        .unwrap();
        assert_eq!(v, Value::str(&longest));
    }
}
