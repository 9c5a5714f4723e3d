//! The nom-based reader: program text to spanned [`Form`]s.
//!
//! The grammar is LL(1): every form is chosen by its first character (and
//! the one after `#`), so the parser never backtracks. Atoms are scanned once
//! as a whole token up to the next delimiter and then classified (number,
//! `nil`/`true`/`false`, symbol), which keeps error messages about the whole
//! token ("Invalid number `1abc`") and keeps reading linear in the input.
//!
//! Leaves (atoms, strings, regexes, ...) are nom parsers over a
//! `nom_locate` span. Nesting (collections and the `'`, `#'`, `#_`
//! prefixes) is driven by an explicit stack of open frames instead of
//! recursive descent: a recursive reader needed 1.5 KB (release) to 6 KB
//! (debug) of machine stack per level, so 512 levels overflowed the 2 MB
//! stack of a spawned thread. With the stack on the heap, the depth cap
//! ([`MAX_DEPTH`]) only protects later recursive passes over the forms.
//!
//! All failures are raised as `nom::Err::Failure` carrying a [`ReadError`];
//! [`run`] is the only place where they become the crate's [`Error`].

use std::borrow::Cow;
use std::cell::Cell;

use nom::bytes::complete::{take_till, take_while};
use nom::error::{ErrorKind as NomErrorKind, ParseError};
use nom::{IResult, Input as _, Parser};
use nom_locate::LocatedSpan;

use super::{Form, FormKind};
use crate::error::{Error, Result, Span};

/// Deepest allowed nesting of collections and prefix forms (`'`, `#'`,
/// `#_`). The reader itself does not recurse, but later passes over the
/// forms (and dropping them) do, so this bounds their stack use.
pub const MAX_DEPTH: u32 = 512;

/// Whether source text is ready to evaluate (for the REPL).
#[derive(Debug, Clone, PartialEq)]
pub enum ReadStatus {
    /// The whole input reads fine (possibly as zero forms).
    Complete,
    /// The input stops inside an open collection, string or regex, or right
    /// after a prefix such as `'`: more lines should follow.
    Incomplete,
    /// The input can never become valid by appending text.
    Invalid(Error),
}

/// Read every top-level form of a program.
pub fn read_program(src: &str) -> Result<Vec<Form>> {
    run(src, program).map_err(|f| f.error)
}

/// Read exactly one form; zero forms or several are an error.
pub fn read_one(src: &str) -> Result<Form> {
    run(src, exactly_one).map_err(|f| f.error)
}

/// Classify REPL input as complete, incomplete or invalid.
pub fn read_status(src: &str) -> ReadStatus {
    match run(src, program) {
        Ok(_) => ReadStatus::Complete,
        Err(f) if f.incomplete => ReadStatus::Incomplete,
        Err(f) => ReadStatus::Invalid(f.error),
    }
}

type Input<'a> = LocatedSpan<&'a str>;
type PResult<'a, T> = IResult<Input<'a>, T, ReadError<'a>>;

/// A parse failure before conversion: where it is, how many bytes it
/// covers, and whether appending more input could fix it. The line and
/// column are only computed if the error is reported.
#[derive(Debug)]
struct ReadError<'a> {
    at: Input<'a>,
    len: usize,
    message: Cow<'static, str>,
    incomplete: bool,
}

impl<'a> ParseError<Input<'a>> for ReadError<'a> {
    // Only nom's own primitives produce these; the grammar never lets them
    // escape, but a generic message beats a panic if one ever does.
    fn from_error_kind(input: Input<'a>, _kind: NomErrorKind) -> Self {
        ReadError {
            at: input,
            len: 0,
            message: Cow::Borrowed("Unexpected input"),
            incomplete: false,
        }
    }

    fn append(_input: Input<'a>, _kind: NomErrorKind, other: Self) -> Self {
        other
    }
}

fn fail<'a, T>(at: Input<'a>, len: usize, message: impl Into<Cow<'static, str>>) -> PResult<'a, T> {
    Err(nom::Err::Failure(ReadError {
        at,
        len,
        message: message.into(),
        incomplete: false,
    }))
}

/// Like [`fail`], but more input could make the text valid.
fn fail_incomplete<'a, T>(
    at: Input<'a>,
    len: usize,
    message: impl Into<Cow<'static, str>>,
) -> PResult<'a, T> {
    Err(nom::Err::Failure(ReadError {
        at,
        len,
        message: message.into(),
        incomplete: true,
    }))
}

/// A converted failure; `incomplete` feeds [`read_status`].
struct Failure {
    error: Error,
    incomplete: bool,
}

/// Run a top-level parser over `src`, converting its failure to [`Error`].
/// This is the one place where nom errors become crate errors.
fn run<T>(
    src: &str,
    parser: for<'a> fn(Input<'a>, &Columns<'a>) -> PResult<'a, T>,
) -> std::result::Result<T, Failure> {
    let columns = Columns::new(src);
    match parser(Input::new(src), &columns) {
        Ok((_, value)) => Ok(value),
        Err(nom::Err::Error(e) | nom::Err::Failure(e)) => {
            if let Some(error) = crate::meter::tripped().then(crate::meter::error).flatten() {
                return Err(Failure {
                    error,
                    incomplete: false,
                });
            }
            let pos = columns.pos(&e.at);
            let span = Span::new(pos.offset, pos.offset + e.len, pos.line, pos.column);
            Err(Failure {
                error: Error::parse(e.message, span),
                incomplete: e.incomplete,
            })
        }
        // Only streaming parsers report this, and the grammar uses none.
        Err(nom::Err::Incomplete(_)) => {
            let pos = columns.pos(&Input::new(src).take_from(src.len()));
            Err(Failure {
                error: Error::parse(
                    "Unexpected end of input",
                    Span::new(pos.offset, pos.offset, pos.line, pos.column),
                ),
                incomplete: true,
            })
        }
    }
}

/// The start of a form: byte offset, line and character column.
#[derive(Debug, Clone, Copy)]
struct Pos {
    offset: usize,
    line: u32,
    column: u32,
}

impl Pos {
    fn span_to(self, end: &Input<'_>) -> Span {
        Span::new(self.offset, end.location_offset(), self.line, self.column)
    }
}

impl std::fmt::Display for Pos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// Character columns, computed incrementally. nom_locate can count a
/// column, but only by rescanning the line from its start, which makes a
/// long one-line program quadratic. Forms are visited in increasing offset
/// order, so remembering the last answer makes the total work linear.
struct Columns<'a> {
    src: &'a str,
    /// (byte offset, column at that offset) of the last query.
    last: Cell<(usize, u32)>,
}

impl<'a> Columns<'a> {
    fn new(src: &'a str) -> Self {
        Columns {
            src,
            last: Cell::new((0, 1)),
        }
    }

    fn pos(&self, at: &Input<'_>) -> Pos {
        let offset = at.location_offset();
        let (last_offset, last_column) = self.last.get();
        let column = match self.src.get(last_offset..offset) {
            // One pass over the bytes since the last answer: a newline
            // starts a new line, and every byte that does not continue a
            // multi-byte character is a character.
            Some(between) if offset >= last_offset => {
                between.bytes().fold(last_column, |column, b| match b {
                    b'\n' => 1,
                    _ if b & 0xC0 == 0x80 => column,
                    _ => column.saturating_add(1),
                })
            }
            // Going backwards (only error paths do): count from the line start.
            _ => {
                let before = self.src.get(..offset).unwrap_or(self.src);
                let line_start = before.rfind('\n').map_or(0, |nl| nl + 1);
                1 + char_count(&before[line_start..])
            }
        };
        self.last.set((offset, column));
        Pos {
            offset,
            line: at.location_line(),
            column,
        }
    }
}

fn char_count(s: &str) -> u32 {
    let count = if s.is_ascii() {
        s.len()
    } else {
        s.chars().count()
    };
    u32::try_from(count).unwrap_or(u32::MAX)
}

/// Whitespace per Clojure: the comma counts as whitespace.
const fn is_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | ',')
}

/// Characters that end a token (Clojure's whitespace and terminating macro
/// characters). `#`, `'` and `%` do not: `a#` and `a'` are symbols.
const fn is_delimiter(c: char) -> bool {
    is_whitespace(c)
        || matches!(
            c,
            '(' | ')' | '[' | ']' | '{' | '}' | '"' | ';' | '@' | '^' | '`' | '~' | '\\'
        )
}

/// [`is_delimiter`] by byte: every delimiter is ASCII, so no byte of a
/// multi-byte character is one.
const DELIMITERS: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 128 {
        table[b] = is_delimiter(b as u8 as char);
        b += 1;
    }
    table
};

/// Byte length of the token at the start of `s`.
fn token_len(s: &str) -> usize {
    s.bytes()
        .position(|b| DELIMITERS[usize::from(b)])
        .unwrap_or(s.len())
}

/// Skip whitespace and `;` and `#!` line comments.
fn skip_ws(mut i: Input<'_>) -> PResult<'_, ()> {
    loop {
        let (rest, _) = take_while(is_whitespace).parse(i)?;
        i = rest;
        let s = *i.fragment();
        if !(s.starts_with(';') || s.starts_with("#!")) {
            return Ok((i, ()));
        }
        let (rest, _) = take_till(|c| c == '\n').parse(i)?;
        i = rest;
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Coll {
    List,
    Vector,
    Map,
    Set,
    AnonFn,
}

impl Coll {
    fn open(self) -> &'static str {
        match self {
            Coll::List => "(",
            Coll::Vector => "[",
            Coll::Map => "{",
            Coll::Set => "#{",
            Coll::AnonFn => "#(",
        }
    }

    fn close(self) -> char {
        match self {
            Coll::List | Coll::AnonFn => ')',
            Coll::Vector => ']',
            Coll::Map | Coll::Set => '}',
        }
    }
}

/// A prefix that applies to the next form.
#[derive(Clone, Copy, PartialEq)]
enum Prefix {
    Quote,
    Var,
    Discard,
}

impl Prefix {
    fn text(self) -> &'static str {
        match self {
            Prefix::Quote => "'",
            Prefix::Var => "#'",
            Prefix::Discard => "#_",
        }
    }
}

/// Something opened and not yet finished.
enum Frame<'a> {
    Coll {
        kind: Coll,
        start: Input<'a>,
        pos: Pos,
        /// Where this collection's elements begin in the shared buffer.
        first: usize,
    },
    Prefix {
        kind: Prefix,
        start: Input<'a>,
        pos: Pos,
    },
}

/// What starts at the current position.
enum Step {
    Open(Coll),
    Prefix(Prefix),
    Close(char),
    Leaf,
}

fn step(s: &str) -> Step {
    // Every opener, closer and prefix is ASCII.
    let b = s.as_bytes();
    match (b.first(), b.get(1)) {
        (Some(b'('), _) => Step::Open(Coll::List),
        (Some(b'['), _) => Step::Open(Coll::Vector),
        (Some(b'{'), _) => Step::Open(Coll::Map),
        (Some(b'#'), Some(b'{')) => Step::Open(Coll::Set),
        (Some(b'#'), Some(b'(')) => Step::Open(Coll::AnonFn),
        (Some(b'\''), _) => Step::Prefix(Prefix::Quote),
        (Some(b'#'), Some(b'\'')) => Step::Prefix(Prefix::Var),
        (Some(b'#'), Some(b'_')) => Step::Prefix(Prefix::Discard),
        (Some(&c @ (b')' | b']' | b'}')), _) => Step::Close(char::from(c)),
        _ => Step::Leaf,
    }
}

/// Every top-level form, to the end of input.
fn program<'a>(mut i: Input<'a>, cols: &Columns<'a>) -> PResult<'a, Vec<Form>> {
    // Finished forms not yet placed: the top-level forms, then the
    // elements of each open collection in order. One shared buffer means a
    // collection's Vec is allocated once, at its exact size, when it closes.
    let mut forms: Vec<Form> = Vec::new();
    let mut stack: Vec<Frame<'a>> = Vec::new();
    // How many `#(` frames are open, to reject nesting without a scan.
    let mut open_anon_fns = 0usize;
    loop {
        // Reading counts as the program's work: under a meter (a run's
        // deadline and interrupt flag), a huge program stops here; `run`
        // reports the meter's error.
        if !crate::meter::work(1) {
            return fail(i, 0, "stopped by the program's meter");
        }
        let (rest, ()) = skip_ws(i)?;
        i = rest;
        if i.fragment().is_empty() {
            return match stack.last() {
                None => Ok((i, forms)),
                Some(Frame::Coll {
                    kind, start, pos, ..
                }) => {
                    let open = kind.open();
                    fail_incomplete(
                        *start,
                        open.len(),
                        format!("Unclosed `{open}` opened at {pos}"),
                    )
                }
                Some(Frame::Prefix { kind, start, .. }) => fail_incomplete(
                    *start,
                    kind.text().len(),
                    format!("Expected a form after `{}`, got end of input", kind.text()),
                ),
            };
        }
        let mut form = match step(i.fragment()) {
            Step::Open(kind) => {
                let open = kind.open();
                check_depth(&stack, i, open.len())?;
                if kind == Coll::AnonFn {
                    if open_anon_fns > 0 {
                        return fail(i, open.len(), "Nested `#(...)` is not allowed");
                    }
                    open_anon_fns += 1;
                }
                stack.push(Frame::Coll {
                    kind,
                    start: i,
                    pos: cols.pos(&i),
                    first: forms.len(),
                });
                i = i.take_from(open.len());
                continue;
            }
            Step::Prefix(kind) => {
                check_depth(&stack, i, kind.text().len())?;
                stack.push(Frame::Prefix {
                    kind,
                    start: i,
                    pos: cols.pos(&i),
                });
                i = i.take_from(kind.text().len());
                continue;
            }
            Step::Close(c) => match stack.pop() {
                None => return fail(i, 1, format!("Unexpected `{c}`")),
                Some(Frame::Prefix { kind, start, .. }) => {
                    return fail(
                        start,
                        kind.text().len(),
                        format!("Expected a form after `{}`, got `{c}`", kind.text()),
                    )
                }
                Some(Frame::Coll { kind, pos, .. }) if c != kind.close() => {
                    let open = kind.open();
                    return fail(
                        i,
                        1,
                        format!(
                            "Unexpected `{c}`, expected `{}` to close `{open}` opened at {pos}",
                            kind.close()
                        ),
                    );
                }
                Some(Frame::Coll {
                    kind,
                    start,
                    pos,
                    first,
                }) => {
                    let items = forms.split_off(first);
                    i = i.take_from(1);
                    let span = pos.span_to(&i);
                    let kind = match kind {
                        Coll::List => FormKind::List(items),
                        Coll::Vector => FormKind::Vector(items),
                        Coll::Set => FormKind::Set(items),
                        Coll::AnonFn => {
                            open_anon_fns -= 1;
                            FormKind::AnonFn(items)
                        }
                        Coll::Map if !items.len().is_multiple_of(2) => {
                            return fail(
                                start,
                                span.end - span.start,
                                format!(
                                    "Map literal must have an even number of forms, got {}",
                                    items.len()
                                ),
                            )
                        }
                        Coll::Map => FormKind::Map(items),
                    };
                    Form::new(kind, span)
                }
            },
            Step::Leaf => {
                let (rest, form) = leaf(i, cols)?;
                i = rest;
                form
            }
        };
        // Hand the finished form to whatever is waiting for it; prefixes
        // wrap it (or drop it) and pass it further down the stack.
        loop {
            let (kind, start, pos) = match stack.last() {
                None | Some(Frame::Coll { .. }) => {
                    forms.push(form);
                    break;
                }
                Some(Frame::Prefix { kind, start, pos }) => (*kind, *start, *pos),
            };
            stack.pop();
            form = match kind {
                Prefix::Discard => break,
                Prefix::Quote => Form::new(FormKind::Quote(Box::new(form)), pos.span_to(&i)),
                Prefix::Var => match form.kind {
                    FormKind::Symbol(name) => {
                        Form::new(FormKind::Var(name.to_string()), pos.span_to(&i))
                    }
                    _ => {
                        return fail(
                            start,
                            i.location_offset() - pos.offset,
                            "Var quote `#'` must be followed by a symbol",
                        )
                    }
                },
            };
        }
    }
}

/// Fail if opening one more frame would nest deeper than [`MAX_DEPTH`].
fn check_depth<'a>(
    stack: &[Frame<'a>],
    at: Input<'a>,
    len: usize,
) -> std::result::Result<(), nom::Err<ReadError<'a>>> {
    if stack.len() < MAX_DEPTH as usize {
        return Ok(());
    }
    Err(nom::Err::Failure(ReadError {
        at,
        len,
        message: format!("Nesting deeper than {MAX_DEPTH} levels").into(),
        incomplete: false,
    }))
}

fn exactly_one<'a>(i: Input<'a>, cols: &Columns<'a>) -> PResult<'a, Form> {
    let (rest, mut forms) = program(i, cols)?;
    if forms.len() > 1 {
        let second = forms[1].span;
        return fail(
            i.take_from(second.start),
            second.end - second.start,
            format!("Expected exactly one form, got {}", forms.len()),
        );
    }
    match forms.pop() {
        Some(form) => Ok((rest, form)),
        None => fail(rest, 0, "Expected a form, got end of input"),
    }
}

/// A form without nested forms, at a position that is not an opener,
/// closer or prefix.
fn leaf<'a>(i: Input<'a>, cols: &Columns<'a>) -> PResult<'a, Form> {
    match first_char(&i) {
        Some('"') => string(i, cols),
        Some('\\') => character(i, cols),
        Some(':') => keyword(i, cols),
        Some('#') => dispatch(i, cols),
        Some('@') => fail(i, 1, "Deref (`@`) is not supported"),
        Some('^') => fail(i, 1, "Metadata (`^`) is not supported"),
        Some('`') => fail(i, 1, "Syntax quote is not supported"),
        Some('~') => fail(i, 1, "Unquote (`~`) is not supported"),
        _ => atom(i, cols),
    }
}

fn first_char(i: &Input<'_>) -> Option<char> {
    i.fragment().chars().next()
}

/// Leaves introduced by `#` (the openers and prefixes among `#` forms are
/// handled by [`program`]).
fn dispatch<'a>(start: Input<'a>, cols: &Columns<'a>) -> PResult<'a, Form> {
    let Some(next) = start.fragment()[1..].chars().next() else {
        return fail(start, 1, "Unexpected end of input after `#`");
    };
    match next {
        '"' => regex(start, cols),
        '#' => symbolic_value(start, cols),
        '?' => fail(start, 2, "Reader conditionals (`#?`) are not supported"),
        ':' => fail(
            start,
            2,
            "Namespaced map literals such as `#:ns{...}` are not supported",
        ),
        '=' => fail(start, 2, "Read-time evaluation (`#=`) is not supported"),
        '^' => fail(start, 2, "Metadata (`#^`) is not supported"),
        c if c.is_alphabetic() => {
            let tag = &start.fragment()[1..];
            let tag = &tag[..token_len(tag)];
            fail(
                start,
                1 + tag.len(),
                format!("Tagged literals such as `#{tag}` are not supported"),
            )
        }
        c => fail(
            start,
            1 + c.len_utf8(),
            format!("Unsupported reader syntax `#{}`", c.escape_debug()),
        ),
    }
}

/// `##Inf`, `##-Inf`, `##NaN`.
fn symbolic_value<'a>(start: Input<'a>, cols: &Columns<'a>) -> PResult<'a, Form> {
    let pos = cols.pos(&start);
    let body = &start.fragment()[2..];
    let name = &body[..token_len(body)];
    let value = match name {
        "Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        "NaN" => f64::NAN,
        _ => {
            return fail(
                start,
                2 + name.len(),
                format!("Unknown symbolic value `##{name}`; expected `##Inf`, `##-Inf` or `##NaN`"),
            )
        }
    };
    let rest = start.take_from(2 + name.len());
    Ok((rest, Form::new(FormKind::Float(value), pos.span_to(&rest))))
}

/// A string literal with Clojure's escapes; literal newlines are allowed.
fn string<'a>(start: Input<'a>, cols: &Columns<'a>) -> PResult<'a, Form> {
    let pos = cols.pos(&start);
    let body = &start.fragment()[1..];
    let bytes = body.as_bytes();
    let unterminated =
        || fail_incomplete(start, 1, format!("Unterminated string starting at {pos}"));
    let mut out = String::new();
    let mut p = 0;
    loop {
        // Copy plain runs in bulk; only `"` and `\` need attention, and both
        // are ASCII so a byte search stays on character boundaries.
        let Some(k) = bytes[p..].iter().position(|&b| b == b'"' || b == b'\\') else {
            return unterminated();
        };
        out.push_str(&body[p..p + k]);
        p += k;
        if bytes[p] == b'"' {
            break;
        }
        let escape_at = p;
        let Some(e) = body[p + 1..].chars().next() else {
            return unterminated();
        };
        p += 1 + e.len_utf8();
        let bad_escape =
            |len: usize, message: String| fail(start.take_from(1 + escape_at), len, message);
        match e {
            '"' => out.push('"'),
            '\\' => out.push('\\'),
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'u' => {
                let Some(hi) = hex4(&body[p..]) else {
                    if body.len() - p < 4 && !body[p..].contains('"') {
                        return unterminated();
                    }
                    let digits: String = body[p..]
                        .chars()
                        .take(4)
                        .take_while(|&c| c != '"')
                        .collect();
                    return bad_escape(
                        2 + digits.len(),
                        format!("Invalid unicode escape `\\u{digits}` in string"),
                    );
                };
                p += 4;
                let code = if (0xD800..0xDC00).contains(&hi) {
                    // A UTF-16 surrogate pair written as two escapes.
                    match body[p..].strip_prefix("\\u").and_then(hex4) {
                        Some(lo) if (0xDC00..0xE000).contains(&lo) => {
                            p += 6;
                            0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                        }
                        _ => hi,
                    }
                } else {
                    hi
                };
                match char::from_u32(code) {
                    Some(c) => out.push(c),
                    None => {
                        return bad_escape(
                            6,
                            format!("Invalid unicode escape `\\u{hi:04X}` in string"),
                        )
                    }
                }
            }
            '0'..='7' => {
                // Up to three octal digits, as in Java and Clojure.
                let digits = 1 + body[p..]
                    .bytes()
                    .take(2)
                    .take_while(|b| (b'0'..=b'7').contains(b))
                    .count();
                let text = &body[p - 1..p - 1 + digits];
                p += digits - 1;
                let value = u32::from_str_radix(text, 8).unwrap_or(u32::MAX);
                match u8::try_from(value) {
                    Ok(byte) => out.push(char::from(byte)),
                    Err(_) => {
                        return bad_escape(
                            1 + digits,
                            format!("Octal escape `\\{text}` is out of range (max `\\377`)"),
                        )
                    }
                }
            }
            '\n' | '\r' => {
                return bad_escape(
                    1 + e.len_utf8(),
                    "A backslash cannot end a line in a string; write `\\n` for a newline"
                        .to_string(),
                )
            }
            // The specification (current revision, §3.4): a backslash
            // before any other character is kept as it is (`"a\qb"` holds
            // the two characters `\q`), so `(re-pattern "\d+")` works.
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    let rest = start.take_from(1 + p + 1);
    Ok((rest, Form::new(FormKind::Str(out), pos.span_to(&rest))))
}

/// The value of four hex digits at the start of `s`.
fn hex4(s: &str) -> Option<u32> {
    let digits = s.get(..4)?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(digits, 16).ok()
}

/// `#"..."`: the text between the quotes verbatim; `\"` does not end it.
fn regex<'a>(start: Input<'a>, cols: &Columns<'a>) -> PResult<'a, Form> {
    let pos = cols.pos(&start);
    let body = &start.fragment()[2..];
    let bytes = body.as_bytes();
    let mut p = 0;
    loop {
        match bytes.get(p) {
            None => {
                return fail_incomplete(start, 2, format!("Unterminated regex starting at {pos}"))
            }
            Some(b'"') => break,
            // Skipping one byte past a multi-byte character is harmless:
            // continuation bytes never equal `"` or `\`.
            Some(b'\\') => p += 2,
            Some(_) => p += 1,
        }
    }
    let rest = start.take_from(2 + p + 1);
    Ok((
        rest,
        Form::new(FormKind::Regex(body[..p].to_string()), pos.span_to(&rest)),
    ))
}

/// A character literal, read as a one-character string.
fn character<'a>(start: Input<'a>, cols: &Columns<'a>) -> PResult<'a, Form> {
    let pos = cols.pos(&start);
    let body = &start.fragment()[1..];
    let Some(first) = body.chars().next() else {
        return fail(start, 1, "Expected a character after `\\`");
    };
    // As in Clojure, the first character is taken whatever it is (so `\(`
    // and `\,` work) and the token then runs to the next delimiter.
    let len = first.len_utf8() + token_len(&body[first.len_utf8()..]);
    let name = &body[..len];
    let c = if len == first.len_utf8() {
        Some(first)
    } else {
        match name {
            "newline" => Some('\n'),
            "space" => Some(' '),
            "tab" => Some('\t'),
            "return" => Some('\r'),
            "backspace" => Some('\u{8}'),
            "formfeed" => Some('\u{c}'),
            _ if name.len() == 5 && name.starts_with('u') => {
                match hex4(&name[1..]).and_then(char::from_u32) {
                    Some(c) => Some(c),
                    None => {
                        return fail(
                            start,
                            1 + len,
                            format!("Invalid unicode character `\\{name}`"),
                        )
                    }
                }
            }
            _ if name.len() <= 4
                && name.starts_with('o')
                && name[1..].bytes().all(|b| (b'0'..=b'7').contains(&b)) =>
            {
                match u32::from_str_radix(&name[1..], 8) {
                    Ok(v) if v <= 0o377 => char::from_u32(v),
                    _ => {
                        return fail(
                            start,
                            1 + len,
                            format!("Octal character `\\{name}` is out of range (max `\\o377`)"),
                        )
                    }
                }
            }
            _ => None,
        }
    };
    let Some(c) = c else {
        return fail(
            start,
            1 + len,
            format!("Unknown character name `\\{}`", name.escape_debug()),
        );
    };
    let rest = start.take_from(1 + len);
    Ok((
        rest,
        Form::new(FormKind::Str(c.to_string()), pos.span_to(&rest)),
    ))
}

fn keyword<'a>(start: Input<'a>, cols: &Columns<'a>) -> PResult<'a, Form> {
    let pos = cols.pos(&start);
    let body = &start.fragment()[1..];
    let name = &body[..token_len(body)];
    let len = 1 + name.len();
    if name.is_empty() {
        return fail(start, 1, "Expected a keyword name after `:`");
    }
    if name.starts_with(':') {
        return fail(
            start,
            len,
            format!(
                "Auto-resolved keywords such as `:{name}` are not supported; write `:{}`",
                name.trim_start_matches(':')
            ),
        );
    }
    if let Some(bad) = name.chars().find(|&c| !is_symbol_char(c)) {
        return fail(
            start,
            len,
            format!(
                "Invalid character `{}` in keyword `:{}`",
                bad.escape_debug(),
                name.escape_debug()
            ),
        );
    }
    if name.starts_with('/') || name.ends_with('/') {
        return fail(start, len, format!("Invalid keyword `:{name}`"));
    }
    let rest = start.take_from(len);
    Ok((
        rest,
        Form::new(FormKind::Keyword(name.into()), pos.span_to(&rest)),
    ))
}

/// A token that is a number, `nil`, `true`, `false` or a symbol.
fn atom<'a>(start: Input<'a>, cols: &Columns<'a>) -> PResult<'a, Form> {
    let pos = cols.pos(&start);
    let text = &start.fragment()[..token_len(start.fragment())];
    let rest = start.take_from(text.len());
    match classify(text) {
        Ok(kind) => Ok((rest, Form::new(kind, pos.span_to(&rest)))),
        Err(message) => fail(start, text.len(), message),
    }
}

/// A classified token, or the message explaining why it is invalid.
type Classified = std::result::Result<FormKind, Cow<'static, str>>;

fn classify(text: &str) -> Classified {
    match text {
        "nil" => return Ok(FormKind::Nil),
        "true" => return Ok(FormKind::Bool(true)),
        "false" => return Ok(FormKind::Bool(false)),
        _ => {}
    }
    let b = text.as_bytes();
    let numeric = match b.first() {
        Some(b'+' | b'-') => b.get(1).is_some_and(u8::is_ascii_digit),
        Some(c) => c.is_ascii_digit(),
        None => false,
    };
    if numeric {
        number(text)
    } else {
        symbol(text)
    }
}

/// Clojure's symbol constituents; `#` and `'` only reach here after the
/// first character because they dispatch at the start of a form.
fn is_symbol_char(c: char) -> bool {
    c.is_alphanumeric()
        || matches!(
            c,
            '*' | '+'
                | '!'
                | '-'
                | '_'
                | '\''
                | '?'
                | '<'
                | '>'
                | '='
                | '.'
                | '/'
                | '&'
                | '%'
                | '$'
                | '#'
        )
}

fn symbol(text: &str) -> Classified {
    if let Some(bad) = text.chars().find(|&c| !is_symbol_char(c)) {
        return Err(format!(
            "Invalid character `{}` in symbol `{}`",
            bad.escape_debug(),
            text.escape_debug()
        )
        .into());
    }
    // `/` alone is division and `ns//` names it in a namespace; otherwise
    // a slash must separate two non-empty parts.
    let bad_slash =
        text != "/" && (text.starts_with('/') || (text.ends_with('/') && !text.ends_with("//")));
    if bad_slash {
        return Err(format!("Invalid symbol `{text}`").into());
    }
    Ok(FormKind::Symbol(text.into()))
}

/// Classify a token that starts like a number (a digit, or a sign and a
/// digit). Shape is checked by hand so that Rust's float parser never sees
/// (and accepts) spellings such as `inf`.
fn number(text: &str) -> Classified {
    let invalid =
        || -> Classified { Err(format!("Invalid number `{}`", crate::error::quote(text)).into()) };
    let out_of_range = || -> Classified {
        Err(format!(
            "Integer literal `{}` is out of range",
            crate::error::quote(text)
        )
        .into())
    };
    let (negative, unsigned) = match text.as_bytes()[0] {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    if let Some(hex) = unsigned
        .strip_prefix("0x")
        .or_else(|| unsigned.strip_prefix("0X"))
    {
        if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return invalid();
        }
        let Ok(magnitude) = u64::from_str_radix(hex, 16) else {
            return out_of_range();
        };
        let value = if negative {
            -i128::from(magnitude)
        } else {
            i128::from(magnitude)
        };
        return match i64::try_from(value) {
            Ok(v) => Ok(FormKind::Int(v)),
            Err(_) => out_of_range(),
        };
    }

    let b = unsigned.as_bytes();
    let digits = |mut p: usize| {
        while b.get(p).is_some_and(u8::is_ascii_digit) {
            p += 1;
        }
        p
    };
    let int_end = digits(0);
    let mut p = int_end;
    let mut is_float = false;
    if b.get(p) == Some(&b'.') {
        is_float = true;
        p = digits(p + 1);
    }
    if matches!(b.get(p), Some(b'e' | b'E')) {
        let mut q = p + 1;
        if matches!(b.get(q), Some(b'+' | b'-')) {
            q += 1;
        }
        let end = digits(q);
        if end == q {
            return invalid();
        }
        is_float = true;
        p = end;
    }
    let suffix = &unsigned[p..];
    match suffix {
        "" => {}
        "N" if !is_float => {
            return Err(format!(
                "BigInt literals such as `{text}` are not supported; integers are 64-bit"
            )
            .into())
        }
        "M" => {
            return Err(format!(
                "BigDecimal literals such as `{text}` are not supported; use a float"
            )
            .into())
        }
        _ if !is_float && is_digits_after(suffix, '/') => {
            let (num, den) = text.split_once('/').unwrap_or((text, "1"));
            return Err(format!(
                "Ratio literals such as `{text}` are not supported; use `(/ {num} {den})`"
            )
            .into());
        }
        _ if !is_float
            && (suffix.starts_with('r') || suffix.starts_with('R'))
            && suffix.len() > 1
            && suffix[1..].bytes().all(|b| b.is_ascii_alphanumeric()) =>
        {
            return Err(format!("Radix literals such as `{text}` are not supported").into())
        }
        _ => return invalid(),
    }
    if is_float {
        return match text.parse::<f64>() {
            Ok(v) => Ok(FormKind::Float(v)),
            Err(_) => invalid(),
        };
    }
    if int_end > 1 && b[0] == b'0' {
        return Err(format!(
            "Integer literal `{text}` has a leading zero; octal literals are not supported"
        )
        .into());
    }
    match text.parse::<i64>() {
        Ok(v) => Ok(FormKind::Int(v)),
        Err(_) => out_of_range(),
    }
}

/// True when `s` is `sep` followed by one or more ASCII digits.
fn is_digits_after(s: &str, sep: char) -> bool {
    s.strip_prefix(sep)
        .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}
