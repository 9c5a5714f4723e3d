//! The quick way through well-formed JSON text: a direct reader that
//! builds values as it scans the bytes, with none of a general parser's
//! dispatch. It only accepts what serde's path would accept and read the
//! same way; at anything else (a syntax error, a broken limit, an integer
//! beyond 64 bits, deep nesting) it gives up, and the caller reads the text
//! again through serde, which reports the problem with its place.
//!
//! One deliberate difference: a fraction or exponent is converted with the
//! standard library's correctly rounded parser, where serde_json (without
//! its `float_roundtrip` feature) may be one unit in the last place off.

use std::borrow::Cow;

use super::{Fields, Reader, TopFields};
use crate::value::Value;

/// Containers nested deeper than this are left to serde's path, which
/// applies its own nesting limit (128).
const MAX_DEPTH: usize = 100;

/// Arrays of at most this many items are gathered on the reader's shared
/// stack and allocated once at their length (a vector grown one push at
/// a time reallocates at 4, 8 and 16 items, then is shrunk to fit).
const GATHERED_ITEMS: usize = 16;

/// The items of `stack` from `start` on, moved (one copy of their bytes)
/// to a vector of their exact length. `start` is never 0: the stack's
/// first slot is a placeholder, because `Vec::split_off(0)` would hand
/// over the stack's own buffer, capacity and all.
fn take_above(stack: &mut Vec<Value>, start: usize) -> Vec<Value> {
    debug_assert!(start > 0, "the placeholder stays");
    stack.split_off(start)
}

/// The top-level object's fields, as [`super::read_json_object`] gives
/// them; `None` when the text is not a well-formed object within the
/// limits.
pub(super) fn read_fields(reader: &mut Reader<'_>, text: &str) -> Option<Vec<(String, Value)>> {
    let mut scan = Scan::new(text, 0, 0);
    scan.skip_space();
    if scan.next()? != b'{' {
        return None;
    }
    let mut fields = TopFields::default();
    scan.skip_space();
    if scan.peek()? == b'}' {
        scan.at += 1;
    } else {
        loop {
            let key = scan.string()?.into_owned();
            scan.colon()?;
            let value = scan.value(reader)?;
            fields.set(key, value);
            if !scan.more(b'}')? {
                break;
            }
        }
    }
    scan.skip_space();
    (scan.at == scan.bytes.len()).then(|| fields.into_fields())
}

/// A position in the text.
pub(super) struct Scan<'t> {
    text: &'t str,
    pub(super) bytes: &'t [u8],
    pub(super) at: usize,
    /// Containers open around the position.
    depth: usize,
}

impl<'t> Scan<'t> {
    /// The scan of `text` from byte `at`, inside `depth` containers.
    pub(super) fn new(text: &'t str, at: usize, depth: usize) -> Scan<'t> {
        Scan {
            text,
            bytes: text.as_bytes(),
            at,
            depth,
        }
    }

    pub(super) fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    pub(super) fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.at += 1;
        Some(b)
    }

    pub(super) fn skip_space(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek() {
            self.at += 1;
        }
    }

    /// The `:` after an object key, with the space around it.
    pub(super) fn colon(&mut self) -> Option<()> {
        self.skip_space();
        if self.next()? != b':' {
            return None;
        }
        self.skip_space();
        Some(())
    }

    /// After an item: true at a `,` (and the space after it), false at
    /// `close`.
    pub(super) fn more(&mut self, close: u8) -> Option<bool> {
        self.skip_space();
        match self.next()? {
            b',' => {
                self.skip_space();
                Some(true)
            }
            b if b == close => Some(false),
            _ => None,
        }
    }

    /// Any value. Inlined into the loops of [`Scan::object`] and
    /// [`Scan::array`], so that only containers recurse: a scalar does
    /// not pass back through one more call's return slot.
    #[inline(always)]
    pub(super) fn value(&mut self, reader: &mut Reader<'_>) -> Option<Value> {
        match self.peek()? {
            b'{' => self.object(reader),
            b'[' => self.array(reader),
            b'"' => self.string_value(reader),
            b't' => self.word(b"true", Value::Bool(true)),
            b'f' => self.word(b"false", Value::Bool(false)),
            b'n' => self.word(b"null", Value::Nil),
            b'-' | b'0'..=b'9' => self.number().map(Number::value),
            _ => None,
        }
    }

    /// [`Scan::value`] pushed onto `out`, built in the arm that pushes it
    /// from a number or string that came back in registers. A `Value`
    /// returned through memory is written there in pieces, and the
    /// 16-byte load that moves it on waits for them (a store-forwarding
    /// stall: `perf annotate` put a third of `Scan::object`'s samples
    /// there); fewer values now pass through such a slot, though the
    /// compiler still builds some in one.
    #[inline(always)]
    pub(super) fn push_value(
        &mut self,
        reader: &mut Reader<'_>,
        out: &mut Vec<Value>,
    ) -> Option<()> {
        match self.peek()? {
            b'"' => out.push(self.string_value(reader)?),
            b'-' | b'0'..=b'9' => out.push(self.number()?.value()),
            _ => out.push(self.value(reader)?),
        }
        Some(())
    }

    /// Read a value onto the reader's stack of field values (see
    /// [`Scan::push_value`], whose three arms these repeat: one generic
    /// helper for both, taking where to push, cost the loads 0.4-1.3%
    /// more instructions).
    #[inline(always)]
    fn push_field_value(&mut self, reader: &mut Reader<'_>) -> Option<()> {
        let value = match self.peek()? {
            b'"' => self.string_value(reader)?,
            b'-' | b'0'..=b'9' => self.number()?.value(),
            _ => self.value(reader)?,
        };
        reader.field_values.push(value);
        Some(())
    }

    /// A string literal as a value, within the reader's length limit
    /// (shared with its earlier copies when it is long enough).
    #[inline(always)]
    fn string_value(&mut self, reader: &mut Reader<'_>) -> Option<Value> {
        let s = self.string()?;
        if reader.too_long(&s) {
            return None;
        }
        Some(reader.shared_string(&s))
    }

    fn word(&mut self, word: &[u8], value: Value) -> Option<Value> {
        if !self.bytes[self.at..].starts_with(word) {
            return None;
        }
        self.at += word.len();
        Some(value)
    }

    fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        self.at += 1;
        (self.depth <= MAX_DEPTH).then_some(())
    }

    #[inline(never)]
    fn array(&mut self, reader: &mut Reader<'_>) -> Option<Value> {
        self.enter()?;
        // The first items gather on the reader's shared stack, above
        // those of the arrays around this one. An array that ends within
        // `GATHERED_ITEMS` is cut off the stack at its exact length; a
        // longer one moves to a vector of its own and grows there. Two
        // loops, not one that asks per item where the item goes: that
        // branch cost the loading of W8's two long arrays 4%.
        let start = reader.array_items.len();
        self.skip_space();
        if self.peek()? == b']' {
            self.at += 1;
            self.depth -= 1;
            return Some(Value::vector(Vec::new()));
        }
        loop {
            if reader.array_items.len() - start == reader.max_items {
                return None;
            }
            let value = self.value(reader)?;
            reader.array_items.push(value);
            if !self.more(b']')? {
                self.depth -= 1;
                return Some(Value::vector(take_above(&mut reader.array_items, start)));
            }
            if reader.array_items.len() - start == GATHERED_ITEMS {
                break;
            }
        }
        let mut items = take_above(&mut reader.array_items, start);
        items.reserve(3 * GATHERED_ITEMS);
        loop {
            if items.len() == reader.max_items {
                return None;
            }
            self.push_value(reader, &mut items)?;
            if !self.more(b']')? {
                break;
            }
        }
        self.depth -= 1;
        Some(Value::vector(items))
    }

    /// An object, its keys interned and its key list shared as serde's
    /// path does it (`Node::visit_map`).
    #[inline(never)]
    fn object(&mut self, reader: &mut Reader<'_>) -> Option<Value> {
        self.enter()?;
        let mut fields = Fields::new(reader);
        // While each key is the one the template has in its place, the
        // keys are distinct (the template's are) and need no lookup.
        let mut as_template = true;
        self.skip_space();
        if self.peek()? == b'}' {
            self.at += 1;
        } else {
            loop {
                let position = fields.len(reader);
                let expected = match as_template {
                    true => {
                        let rest = &self.bytes[self.at..];
                        match reader.expected_key(self.depth, position, rest) {
                            None => reader.expected_key_of_other(self.depth, position, rest),
                            found => found,
                        }
                    }
                    false => None,
                };
                let key = match expected {
                    Some(quoted_len) => {
                        self.at += quoted_len;
                        None
                    }
                    None => {
                        if as_template {
                            as_template = false;
                            fields.leave_template(reader.template_keys(self.depth), position);
                        }
                        Some(reader.key(position, &self.string()?))
                    }
                };
                self.colon()?;
                match key {
                    None => {
                        if !fields.has_room(reader) {
                            return None;
                        }
                        self.push_field_value(reader)?;
                    }
                    Some(key) => {
                        let value = self.value(reader)?;
                        if !fields.add(reader, key, value) {
                            return None;
                        }
                    }
                }
                if !self.more(b'}')? {
                    break;
                }
            }
        }
        let value = reader.finish_object(self.depth, fields, as_template);
        self.depth -= 1;
        Some(value)
    }

    /// A string literal: borrowed from the text when it has no escapes.
    pub(super) fn string(&mut self) -> Option<Cow<'t, str>> {
        if self.next()? != b'"' {
            return None;
        }
        let start = self.at;
        self.at = start + special_byte(&self.bytes[start..])?;
        match self.next()? {
            b'"' => Some(Cow::Borrowed(&self.text[start..self.at - 1])),
            b'\\' => {
                self.at -= 1;
                self.escaped(start).map(Cow::Owned)
            }
            _ => None,
        }
    }

    /// The rest of a string literal from its first escape, which is at
    /// the position; `start` is where its text began.
    fn escaped(&mut self, start: usize) -> Option<String> {
        let mut out = String::from(&self.text[start..self.at]);
        let mut run = self.at;
        loop {
            match self.next()? {
                b'"' => {
                    out.push_str(&self.text[run..self.at - 1]);
                    return Some(out);
                }
                b'\\' => {
                    out.push_str(&self.text[run..self.at - 1]);
                    let c = match self.next()? {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => self.unicode_escape()?,
                        _ => return None,
                    };
                    out.push(c);
                    run = self.at;
                }
                0..=0x1f => return None,
                _ => {}
            }
        }
    }

    /// The character of a `\u` escape (its `\u` read), joining a
    /// surrogate pair; a lone surrogate gives up, as serde rejects it.
    fn unicode_escape(&mut self) -> Option<char> {
        let first = self.hex4()?;
        match first {
            0xD800..=0xDBFF => {
                if self.next()? != b'\\' || self.next()? != b'u' {
                    return None;
                }
                let second = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return None;
                }
                char::from_u32(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))
            }
            0xDC00..=0xDFFF => None,
            _ => char::from_u32(first),
        }
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.bytes.get(self.at..self.at + 4)?;
        let mut n = 0;
        for &d in digits {
            n = n * 16 + char::from(d).to_digit(16)?;
        }
        self.at += 4;
        Some(n)
    }

    /// A number: an integer literal within 64 bits is an integer (one
    /// past them gives up: serde's path reports it), anything with a
    /// fraction or an exponent a float. One pass gathers the digits of
    /// the integer and fraction parts as they are checked.
    fn number(&mut self) -> Option<Number> {
        let bytes = self.bytes;
        let start = self.at;
        let negative = bytes.get(start) == Some(&b'-');
        let mut at = start + usize::from(negative);
        let integer_start = at;
        // Exact while there are at most 19 digits; used only below that.
        let mut digits: u64 = 0;
        match bytes.get(at) {
            Some(b'0') => at += 1,
            Some(b'1'..=b'9') => {
                while let Some(&d @ b'0'..=b'9') = bytes.get(at) {
                    digits = digits.wrapping_mul(10).wrapping_add(u64::from(d - b'0'));
                    at += 1;
                }
            }
            _ => return None,
        }
        let integer_len = at - integer_start;
        let mut fraction_len = None;
        if bytes.get(at) == Some(&b'.') {
            at += 1;
            let fraction_start = at;
            while let Some(&d @ b'0'..=b'9') = bytes.get(at) {
                digits = digits.wrapping_mul(10).wrapping_add(u64::from(d - b'0'));
                at += 1;
            }
            if at == fraction_start {
                return None;
            }
            fraction_len = Some(at - fraction_start);
        }
        let mut exponent = false;
        if let Some(b'e' | b'E') = bytes.get(at) {
            exponent = true;
            at += 1;
            if let Some(b'+' | b'-') = bytes.get(at) {
                at += 1;
            }
            let exponent_start = at;
            while let Some(b'0'..=b'9') = bytes.get(at) {
                at += 1;
            }
            if at == exponent_start {
                return None;
            }
        }
        self.at = at;
        // Sliced only where the standard parsers are needed: slicing a
        // `str` checks both ends for character boundaries.
        let literal = || &self.text[start..at];
        match (fraction_len, exponent) {
            (None, false) if negative && integer_len == 1 && digits == 0 => {
                // serde reads `-0` as the float -0.0.
                Some(Number::float(-0.0))
            }
            (None, false) if integer_len <= 18 => {
                // At most 18 digits: below 10^18 < 2^63.
                let n = digits as i64;
                Some(Number::int(if negative { -n } else { n }))
            }
            (None, false) => literal().parse().ok().map(Number::int),
            (Some(fraction_len), false) => {
                match exact_decimal(digits, integer_len + fraction_len, fraction_len) {
                    Some(f) => Some(Number::float(if negative { -f } else { f })),
                    None => literal().parse().ok().map(Number::float),
                }
            }
            _ => {
                let f: f64 = literal().parse().ok()?;
                f.is_finite().then_some(Number::float(f))
            }
        }
    }
}

/// A number read, as a pair of scalars (returned in two registers, where a
/// [`Value`] is returned through memory): a float's bits or an integer.
#[derive(Clone, Copy)]
struct Number {
    float: bool,
    bits: u64,
}

impl Number {
    fn int(n: i64) -> Number {
        Number {
            float: false,
            bits: n as u64,
        }
    }

    fn float(f: f64) -> Number {
        Number {
            float: true,
            bits: f.to_bits(),
        }
    }

    #[inline(always)]
    fn value(self) -> Value {
        match self.float {
            true => Value::Float(f64::from_bits(self.bits)),
            false => Value::Int(self.bits as i64),
        }
    }
}

/// Where the first byte of `bytes` that ends a run of plain string text
/// is: a quote, a backslash or a control character. Eight bytes are
/// tested at a time.
fn special_byte(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut chunks = bytes.chunks_exact(8);
    let mut at = 0;
    for chunk in &mut chunks {
        let word = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        // The high bit of each byte that is zero after the XOR, or below
        // 0x20; borrows can only mark bytes after a real match, so the
        // lowest mark is a real one.
        let quote = word ^ (ONES * u64::from(b'"'));
        let backslash = word ^ (ONES * u64::from(b'\\'));
        let marks = (quote.wrapping_sub(ONES) & !quote
            | backslash.wrapping_sub(ONES) & !backslash
            | word.wrapping_sub(ONES * 0x20) & !word)
            & HIGH;
        if marks != 0 {
            return Some(at + (marks.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    let rest = chunks.remainder();
    rest.iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .map(|i| at + i)
}

/// A decimal with `digit_count` digits in all, `digits` read as one
/// integer, `fraction_len` of them after the point, as a float, when it can
/// be computed exactly rounded in one step: at most 15 digits make an
/// integer below 10^15 < 2^53, a power of ten up to 10^15 is exact too, and
/// IEEE division rounds correctly. `None` otherwise (the standard parser
/// takes it).
#[inline]
fn exact_decimal(digits: u64, digit_count: usize, fraction_len: usize) -> Option<f64> {
    (digit_count <= 15).then(|| digits as f64 / POWERS_OF_TEN[fraction_len])
}

/// 10^0 to 10^22: the powers of ten a double holds exactly.
const POWERS_OF_TEN: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::sync::Arc;

    /// The fields as serde's path reads `text`, or its error.
    fn by_serde(text: &str, max: usize) -> Result<Vec<(String, Value)>, String> {
        let mut reader = Reader::new("data/", max);
        reader.text = Some(text.as_bytes());
        super::super::read_fields(&mut reader, serde_json::Deserializer::from_str(text))
            .map_err(|e| e.to_string())
    }

    fn by_fast(text: &str, max: usize) -> Option<Vec<(String, Value)>> {
        read_fields(&mut Reader::new("data/", max), text)
    }

    /// The fast reader gives serde's values, or gives up where serde
    /// fails.
    fn agree(text: &str, max: usize) {
        match by_fast(text, max) {
            Some(fields) => assert_eq!(Ok(fields), by_serde(text, max), "{text:?}"),
            None => assert!(by_serde(text, max).is_err(), "gave up on {text:?}"),
        }
    }

    #[test]
    fn well_formed_documents_read_as_serde_reads_them() {
        for text in [
            r#"{}"#,
            r#" { "a" : [ ] , "b" : { } } "#,
            r#"{"n": [0, -0, 7, -7, 1.5, -2.25e3, 1E2, 0.5e-3, 5e+1, 123456789012345678]}"#,
            r#"{"n": [9223372036854775807, -9223372036854775808, 1.7976931348623157e308]}"#,
            r#"{"s": ["", "plain", "a\"b", "\\", "\/", "\b\f\n\r\t", "\u0041\u00e9", "\ud83d\ude00", "é😀"]}"#,
            r#"{"a\u0062c": 1, "k": {"x\ny": true, "z": false, "w": null}}"#,
            r#"{"a": 1, "b": 2, "a": 3}"#,
            r#"{"m": {"a": 1, "b": 2, "a": 3}}"#,
            r#"{"xs": [{"a": 1, "b": 2}, {"a": 3, "b": 4}, {"b": 5, "a": 6}, {"a": 7}]}"#,
            r#"{"xs": [{"a": 1, "b": 2}, {"a": 1, "a": 2}, {"a": 1, "b": 2, "a": 3}, {"a": 4}]}"#,
            r#"{"xs": [{"a": {"q": 1, "a": 2}, "x": 0}, {"a": {"q": 1, "a": 2}, "a": 3}]}"#,
            r#"{"xs": [{"a\"b": 1, "c\\d": 2, "e\u0066": 3}, {"a\"b": 4, "c\\d": 5, "ef": 6}]}"#,
            r#"{"xs": [{"ab": 1}, {"abc": 2}, {"a": 3}, {"ab": 4, "ab": 5}, {}, {"ab": 6}]}"#,
            // A prefix of the template, the template again, the template
            // and then one of its keys repeated (found only once the keys
            // the template stood for are written down).
            r#"{"xs": [{"a": 1, "b": 2, "c": 3}, {"a": 4, "b": 5}, {"a": 6, "b": 7, "c": 8}, {"a": 9, "b": 10, "c": 11, "b": 12}, {"a": 13, "c": 14, "b": 15}]}"#,
        ] {
            assert!(by_fast(text, 100).is_some(), "{text}");
            agree(text, 100);
        }
    }

    #[test]
    fn wide_objects_take_the_shared_or_the_hashed_form_as_serde_does() {
        for keys in [8, 9, 16, 17, 40] {
            let fields: Vec<String> = (0..keys).map(|i| format!("\"k{i}\": {i}")).collect();
            let object = format!("{{{}}}", fields.join(", "));
            let text = format!("{{\"xs\": [{object}, {object}]}}");
            agree(&text, 100);
            let read = by_fast(&text, 100).unwrap();
            let Value::Vector(xs) = &read[0].1 else {
                panic!()
            };
            let Value::Map(m) = &xs[1] else { panic!() };
            assert_eq!(m.len(), keys);
            assert_eq!(m.keeps_insertion_order(), keys <= 16, "{keys} keys");
        }
    }

    #[test]
    fn sibling_objects_at_one_depth_share_their_key_list() {
        let text =
            r#"{"xs": [{"a": 1, "b": {"c": 2}}, {"a": 3, "b": {"c": 4}}, {"a": 5, "b": 6}]}"#;
        agree(text, 100);
        let read = by_fast(text, 100).unwrap();
        let Value::Vector(xs) = &read[0].1 else {
            panic!()
        };
        let shape = |v: &Value| match v {
            Value::Map(m) => m.shape().cloned().unwrap(),
            _ => panic!(),
        };
        let inner = |v: &Value| match v {
            Value::Map(m) => m.get(&Value::keyword("b")).cloned().unwrap(),
            _ => panic!(),
        };
        assert!(Arc::ptr_eq(&shape(&xs[0]), &shape(&xs[1])));
        assert!(Arc::ptr_eq(&shape(&xs[1]), &shape(&xs[2])));
        assert!(Arc::ptr_eq(&shape(&inner(&xs[0])), &shape(&inner(&xs[1]))));
    }

    #[test]
    fn objects_of_two_kinds_alternating_at_one_depth_read_as_serde_reads_them() {
        for text in [
            // An order's address and its items, at one depth.
            r#"{"os": [{"c": {"ad": {"city": "A", "cc": "F"}}, "it": [{"p": 1, "q": 2}, {"p": 3, "q": 4}]}, {"c": {"ad": {"city": "B", "cc": "G"}}, "it": [{"p": 5, "q": 6}]}]}"#,
            // The other kind's first key, then keys of its own; a prefix
            // of the other kind; a third kind; the first two again.
            r#"{"xs": [{"a": 1, "b": 2}, {"c": 3}, {"a": 4, "z": 5}, {"c": 6, "d": 7}, {"a": 8}, {"e": 9}, {"a": 10, "b": 11}, {"c": 12}]}"#,
            // Keys whose text starts like the other kind's first key.
            r#"{"xs": [{"ab": 1}, {"abc": 2}, {"ab": 3}, {"abc": 4, "ab": 5}, {"a": 6}, {"abc": 7}]}"#,
            // Empty objects between them.
            r#"{"xs": [{"a": 1}, {}, {"a": 2}, {"b": 3}, {}, {"b": 4}, {"a": 5}]}"#,
            // Two kinds that share their first keys (optional fields in
            // the middle), and objects that follow one kind's first keys
            // and then the other's, or neither.
            r#"{"xs": [{"a": 1, "o": 2, "p": 3, "z": 4}, {"a": 5, "z": 6}, {"a": 7, "o": 8, "p": 9, "z": 10}, {"a": 11, "z": 12}, {"a": 13, "o": 14, "z": 15}, {"a": 16, "q": 17}, {"a": 18, "z": 19, "o": 20}]}"#,
            // The other kind has the next key, but other keys before it.
            r#"{"xs": [{"x": 1, "b": 2, "d": 3}, {"a": 4, "b": 5, "c": 6}, {"a": 7, "b": 8, "d": 9}]}"#,
        ] {
            assert!(by_fast(text, 100).is_some(), "{text}");
            agree(text, 100);
        }
    }

    #[test]
    fn anything_else_is_left_to_serde() {
        let deep = format!("{{\"d\": {}1{}}}", "[".repeat(101), "]".repeat(101));
        for text in [
            "",
            "[1]",
            "{\"a\": 1,}",
            "{\"a\": [1,]}",
            "{\"a\" 1}",
            "{\"a\": 01}",
            "{\"a\": 1.}",
            "{\"a\": .5}",
            "{\"a\": 1e}",
            "{\"a\": -}",
            "{\"a\": 1e400}",
            "{\"a\": 9223372036854775808}",
            "{\"a\": -9223372036854775809}",
            "{\"a\": -9923645517640784316}",
            "{\"a\": [1, -99236455176407843160]}",
            "{\"a\": 123456789012345678901234567890}",
            "{\"a\": \"\\ud800\"}",
            "{\"a\": \"\\udc00\"}",
            "{\"a\": \"\\x\"}",
            "{\"a\": \"tab\there\"}",
            "{\"a\": tru}",
            "{\"a\": 1} x",
            "{\"a\": 1]",
            "{\"a\": [1}}",
            "{\"a\": {\"b\": 1]}",
            "{\"a\": [1 2]}",
            "{\"a\": 1 \"b\": 2}",
            "{\"a\": \"unterminated}",
            &deep,
        ] {
            assert!(by_fast(text, 100).is_none(), "{text}");
        }
        // Over the limit: an array, an object, a string.
        for text in [
            "{\"a\": [1, 2, 3, 4]}",
            "{\"a\": {\"a\": 1, \"b\": 2, \"c\": 3, \"d\": 4}}",
            "{\"a\": \"abcd\"}",
        ] {
            assert!(by_fast(text, 3).is_none(), "{text}");
            assert!(by_serde(text, 3).is_err(), "{text}");
        }
        // Deep but within serde's own limit: serde reads it.
        assert!(by_serde(&deep, 100).is_ok());
    }

    /// The value of the number at the start of `text`, and where it ends.
    fn number_of(text: &str) -> (Option<Value>, usize) {
        let mut scan = Scan::new(text, 0, 0);
        (scan.number().map(Number::value), scan.at)
    }

    #[test]
    fn numbers_are_converted_as_the_standard_parsers_convert_them() {
        for text in [
            "0.1",
            "0.3",
            "654.9",
            "-2328.61",
            "0.000001",
            "123456789.012345",
            "9.99999999999999",
            "1234567890.1234567",
            "9.999999999999999",
            "-0.0",
            "1e2",
            "-2.5E-3",
            "0.5e+1",
        ] {
            let f: f64 = text.parse().unwrap();
            assert_eq!(
                number_of(text),
                (Some(Value::Float(f)), text.len()),
                "{text}"
            );
        }
        for text in ["0", "7", "-7", "123456789012345678", "-9223372036854775808"] {
            let n: i64 = text.parse().unwrap();
            assert_eq!(number_of(text), (Some(Value::Int(n)), text.len()), "{text}");
        }
        assert_eq!(number_of("-0"), (Some(Value::Float(-0.0)), 2));
        // A leading zero ends the number; what follows is the caller's.
        assert_eq!(number_of("01"), (Some(Value::Int(0)), 1));
        assert_eq!(number_of("9223372036854775808").0, None);
        for text in ["-", "1.", ".5", "1e", "1e+", "-x"] {
            assert_eq!(number_of(text).0, None, "{text}");
        }
    }

    proptest! {
        #[test]
        fn decimals_convert_as_the_standard_parser_does(
            sign in "-?",
            integer in "0|[1-9][0-9]{0,11}",
            fraction in "[0-9]{1,20}",
        ) {
            let text = format!("{sign}{integer}.{fraction}");
            let f: f64 = text.parse().unwrap();
            prop_assert_eq!(number_of(&text), (Some(Value::Float(f)), text.len()), "{}", text);
        }
    }

    #[test]
    fn the_scan_for_the_end_of_plain_text_finds_the_first_special_byte() {
        for (text, expected) in [
            ("", None),
            ("abc", None),
            ("abcdefghij\"", Some(10)),
            ("abcdefgh\\", Some(8)),
            ("ab\"cdefgh\"", Some(2)),
            ("é😀abcdefg\u{1}", Some(13)),
            ("\u{1f}", Some(0)),
            ("abcdefg\u{7f}\u{80}\"", Some(10)),
        ] {
            assert_eq!(special_byte(text.as_bytes()), expected, "{text:?}");
        }
    }

    fn json() -> impl Strategy<Value = serde_json::Value> {
        use serde_json::Value as J;
        let leaf = prop_oneof![
            Just(J::Null),
            any::<bool>().prop_map(J::Bool),
            any::<i64>().prop_map(J::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(J::from),
            "[a-c\"\\\\\n\t\u{1}é😀/ ]{0,12}".prop_map(J::String),
        ];
        leaf.prop_recursive(4, 64, 8, |inner| {
            prop_oneof![
                // Past `GATHERED_ITEMS`, so both ways of gathering items are read.
                prop::collection::vec(inner.clone(), 0..24).prop_map(J::Array),
                prop::collection::vec(("[a-e]{1,2}", inner), 0..18)
                    .prop_map(|kvs| J::Object(kvs.into_iter().collect())),
            ]
        })
    }

    pub(in crate::value::json_read) fn document() -> impl Strategy<Value = String> {
        (
            prop::collection::vec(("[a-e]{1,3}", json()), 0..4),
            any::<bool>(),
        )
            .prop_map(|(fields, pretty)| {
                let object = serde_json::Value::Object(fields.into_iter().collect());
                if pretty {
                    serde_json::to_string_pretty(&object).unwrap()
                } else {
                    object.to_string()
                }
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        #[test]
        fn documents_read_as_serde_reads_them(text in document(), max in 3usize..20) {
            prop_assert!(by_fast(&text, 1000).is_some(), "{}", text);
            agree(&text, 1000);
            agree(&text, max);
        }

        #[test]
        fn any_text_is_read_as_serde_reads_it(
            text in "\\{\"[ab]\": [\\[\\]{}\",:0-9eE.+\\-\\\\ \ntrufalsnu\u{e9}\u{1}]{0,40}",
        ) {
            agree(&text, 1000);
            agree(&text, 2);
        }

        #[test]
        fn damaged_documents_are_read_as_serde_reads_them(
            text in document(),
            at in any::<prop::sample::Index>(),
            cut in 0usize..4,
            insert in "[\\[\\]{}\",:0-9eE.+\\-\\\\ tnu]{0,2}",
        ) {
            let chars: Vec<char> = text.chars().collect();
            let at = at.index(chars.len() + 1);
            let end = (at + cut).min(chars.len());
            let damaged: String = chars[..at]
                .iter()
                .chain(insert.chars().collect::<Vec<_>>().iter())
                .chain(chars[end..].iter())
                .collect();
            agree(&damaged, 1000);
        }
    }
}
