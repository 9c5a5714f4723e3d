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
use std::collections::HashMap;

use super::{Fields, Reader};
use crate::value::Value;

/// Containers nested deeper than this are left to serde's path, which
/// applies its own nesting limit (128).
const MAX_DEPTH: usize = 100;

/// The top-level object's fields, as [`super::read_json_object`] gives
/// them; `None` when the text is not a well-formed object within the
/// limits.
pub(super) fn read_fields(reader: &mut Reader<'_>, text: &str) -> Option<Vec<(String, Value)>> {
    let mut scan = Scan {
        text,
        bytes: text.as_bytes(),
        at: 0,
        depth: 0,
    };
    scan.skip_space();
    if scan.next()? != b'{' {
        return None;
    }
    let mut fields: Vec<(String, Value)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    scan.skip_space();
    if scan.peek()? == b'}' {
        scan.at += 1;
    } else {
        loop {
            let key = scan.string()?.into_owned();
            scan.colon()?;
            let value = scan.value(reader)?;
            // A repeated key keeps its first position and its last value.
            match index.get(&key) {
                Some(&i) => fields[i].1 = value,
                None => {
                    index.insert(key.clone(), fields.len());
                    fields.push((key, value));
                }
            }
            if !scan.more(b'}')? {
                break;
            }
        }
    }
    scan.skip_space();
    (scan.at == scan.bytes.len()).then_some(fields)
}

/// A position in the text.
struct Scan<'t> {
    text: &'t str,
    bytes: &'t [u8],
    at: usize,
    /// Containers open around the position.
    depth: usize,
}

impl<'t> Scan<'t> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.at += 1;
        Some(b)
    }

    fn skip_space(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek() {
            self.at += 1;
        }
    }

    /// The `:` after an object key, with the space around it.
    fn colon(&mut self) -> Option<()> {
        self.skip_space();
        if self.next()? != b':' {
            return None;
        }
        self.skip_space();
        Some(())
    }

    /// After an item: true at a `,` (and the space after it), false at
    /// `close`.
    fn more(&mut self, close: u8) -> Option<bool> {
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
    fn value(&mut self, reader: &mut Reader<'_>) -> Option<Value> {
        match self.peek()? {
            b'{' => self.object(reader),
            b'[' => self.array(reader),
            b'"' => {
                let s = self.string()?;
                if reader.too_long(&s) {
                    return None;
                }
                Some(reader.shared_string(&s))
            }
            b't' => self.word(b"true", Value::Bool(true)),
            b'f' => self.word(b"false", Value::Bool(false)),
            b'n' => self.word(b"null", Value::Nil),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
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
        let mut items = Vec::new();
        self.skip_space();
        if self.peek()? == b']' {
            self.at += 1;
        } else {
            loop {
                if items.len() == reader.max_items {
                    return None;
                }
                items.push(self.value(reader)?);
                if !self.more(b']')? {
                    break;
                }
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
        self.skip_space();
        if self.peek()? == b'}' {
            self.at += 1;
        } else {
            loop {
                let key = reader.key(fields.len(), &self.string()?);
                self.colon()?;
                let value = self.value(reader)?;
                if !fields.add(key, value, reader.max_items) {
                    return None;
                }
                if !self.more(b'}')? {
                    break;
                }
            }
        }
        self.depth -= 1;
        Some(fields.into_value(reader))
    }

    /// A string literal: borrowed from the text when it has no escapes.
    fn string(&mut self) -> Option<Cow<'t, str>> {
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
    /// fraction or an exponent a float.
    fn number(&mut self) -> Option<Value> {
        let start = self.at;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.at += 1;
        }
        match self.next()? {
            b'0' => {}
            b'1'..=b'9' => self.skip_digits(),
            _ => return None,
        }
        let integer_end = self.at;
        let mut float = false;
        let mut fraction = integer_end..integer_end;
        if self.peek() == Some(b'.') {
            self.at += 1;
            float = true;
            if !self.digits() {
                return None;
            }
            fraction = integer_end + 1..self.at;
        }
        let mut exponent = false;
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            float = true;
            exponent = true;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            if !self.digits() {
                return None;
            }
        }
        let literal = &self.text[start..self.at];
        let digits = &self.bytes[start + usize::from(negative)..integer_end];
        if float {
            if !exponent {
                let fraction = &self.bytes[fraction];
                if let Some(f) = exact_decimal(digits, fraction) {
                    return Some(Value::Float(if negative { -f } else { f }));
                }
            }
            let f: f64 = literal.parse().ok()?;
            return f.is_finite().then_some(Value::Float(f));
        }
        if negative && digits == b"0" {
            // serde reads `-0` as the float -0.0.
            return Some(Value::Float(-0.0));
        }
        if digits.len() <= 18 {
            let n = digits
                .iter()
                .fold(0i64, |n, d| n * 10 + i64::from(d - b'0'));
            return Some(Value::Int(if negative { -n } else { n }));
        }
        literal.parse().ok().map(Value::Int)
    }

    fn skip_digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.at += 1;
        }
    }

    /// Skip one or more digits; false when there is none.
    fn digits(&mut self) -> bool {
        let start = self.at;
        self.skip_digits();
        self.at > start
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

/// `integer.fraction` (decimal digits) as a float, when it can be computed
/// exactly rounded in one step: its digits as an integer below 2^53 divided
/// by a power of ten up to 10^22, both exact in a double, and IEEE division
/// rounds correctly. `None` otherwise (the standard parser takes it).
fn exact_decimal(integer: &[u8], fraction: &[u8]) -> Option<f64> {
    if integer.len() + fraction.len() > 15 || fraction.len() > 22 {
        return None;
    }
    let digits = integer
        .iter()
        .chain(fraction)
        .fold(0u64, |n, d| n * 10 + u64::from(d - b'0'));
    // At most 15 digits: below 10^15 < 2^53.
    Some(digits as f64 / POWERS_OF_TEN[fraction.len()])
}

/// 10^0 to 10^22: the powers of ten a double holds exactly.
const POWERS_OF_TEN: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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

    #[test]
    fn short_decimals_are_converted_as_the_standard_parser_converts_them() {
        for text in [
            "0.1",
            "0.3",
            "654.9",
            "2328.61",
            "0.000001",
            "123456789.012345",
            "9.99999999999999",
        ] {
            let (integer, fraction) = text.split_once('.').unwrap();
            let exact = exact_decimal(integer.as_bytes(), fraction.as_bytes());
            assert_eq!(exact, Some(text.parse::<f64>().unwrap()), "{text}");
        }
        assert_eq!(exact_decimal(b"1234567890", b"1234567"), None);
        assert_eq!(exact_decimal(b"9", b"999999999999999"), None);
    }

    proptest! {
        #[test]
        fn decimals_convert_as_the_standard_parser_does(integer in "[0-9]{1,9}", fraction in "[0-9]{1,14}") {
            let text = format!("{integer}.{fraction}");
            if let Some(f) = exact_decimal(integer.as_bytes(), fraction.as_bytes()) {
                prop_assert_eq!(f, text.parse::<f64>().unwrap(), "{}", text);
            }
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
                prop::collection::vec(inner.clone(), 0..8).prop_map(J::Array),
                prop::collection::vec(("[a-e]{1,2}", inner), 0..18)
                    .prop_map(|kvs| J::Object(kvs.into_iter().collect())),
            ]
        })
    }

    fn document() -> impl Strategy<Value = String> {
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
