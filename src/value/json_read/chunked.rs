//! JSON text read from a stream a chunk at a time, so that a large data
//! file is never whole in memory beside the values made from it: the peak
//! of a load is the values plus about one chunk, not the values plus the
//! file (unless one step, below, is longer than half a chunk).
//!
//! The direct reader ([`super::fast`]) reads the text in steps: the
//! opening of the top-level object, each key, each item of an array that
//! is a field's value (the records of a typical data file), each other
//! field value whole. A step that runs out of text before the stream ends
//! is read again on more text, its partial values dropped: one chunk
//! more, or, once the step has taken half a chunk, the whole rest of the
//! stream. So a step is read at most three times, and a long one (a large
//! string or nested object at the top level) has the rest of the file in
//! memory, as a whole read would. The values are those of the whole-text
//! reader, key and string sharing included.
//!
//! Anything the direct reader gives up on (bad text, a broken limit, text
//! that is not UTF-8, a stream over its byte limit or failing to read)
//! ends the read with `None`: the caller reads the input whole with
//! [`super::read_json_object`], which reports what is wrong and where.

use std::io::Read;

use super::fast::Scan;
use super::{Reader, TopFields};
use crate::value::Value;

/// The bytes read from the stream at a time.
const CHUNK_BYTES: usize = 64 * 1024;

/// The fields of the JSON object `source` holds, read a chunk at a time,
/// as [`super::read_json_object`] reads them from its whole text; `None`
/// when that one must read the input instead (see the module's text).
/// `len_hint` is the stream's expected length (a file's size, 0 if
/// unknown); more than `max_bytes` bytes give up.
pub fn read_json_object_chunked(
    source: impl Read,
    len_hint: u64,
    max_bytes: u64,
    prefix: &str,
    max_items: usize,
) -> Option<Vec<(String, Value)>> {
    let mut window = Window::new(source, CHUNK_BYTES, len_hint, max_bytes);
    read_fields(&mut window, &mut Reader::new(prefix, max_items))
}

/// The top-level object's fields, step by step.
fn read_fields<R: Read>(
    window: &mut Window<R>,
    reader: &mut Reader<'_>,
) -> Option<Vec<(String, Value)>> {
    let empty = window.step(0, reader, |scan, _| {
        (scan.next()? == b'{').then_some(())?;
        closes(scan, b'}')
    })?;
    let mut fields = TopFields::default();
    if !empty {
        loop {
            let (key, array) = window.step(0, reader, |scan, _| {
                let key = scan.string()?.into_owned();
                scan.colon()?;
                let array = scan.peek()? == b'[';
                scan.at += usize::from(array);
                Some((key, array))
            })?;
            let (value, more) = match array {
                true => read_array(window, reader)?,
                false => window.step(0, reader, |scan, reader| {
                    let value = scan.value(reader)?;
                    Some((value, scan.more(b'}')?))
                })?,
            };
            fields.set(key, value);
            if !more {
                break;
            }
        }
    }
    // Nothing but space may follow, to the end of the stream.
    loop {
        let at_end = window.step(0, reader, |scan, _| {
            scan.skip_space();
            Some(scan.at == scan.bytes.len())
        })?;
        if !at_end {
            return None;
        }
        if window.ended {
            return Some(fields.into_fields());
        }
        window.refill()?;
    }
}

/// A field's array, its `[` read, an item per step; and whether another
/// field follows it.
fn read_array<R: Read>(window: &mut Window<R>, reader: &mut Reader<'_>) -> Option<(Value, bool)> {
    let empty = window.step(1, reader, |scan, _| closes(scan, b']'))?;
    let mut items = Vec::new();
    if !empty {
        loop {
            if items.len() == reader.max_items {
                return None;
            }
            // The item with what follows it, so that a number cut short by
            // the end of the text is not taken for the whole number. A step
            // run again first drops what its failed run pushed.
            let count = items.len();
            let more = window.step(1, reader, |scan, reader| {
                items.truncate(count);
                scan.push_value(reader, &mut items)?;
                scan.more(b']')
            })?;
            if !more {
                break;
            }
        }
    }
    let more = window.step(0, reader, |scan, _| scan.more(b'}'))?;
    Some((Value::vector(items), more))
}

/// Whether `close` comes next, read if so: the object or array just
/// opened is empty.
fn closes(scan: &mut Scan<'_>, close: u8) -> Option<bool> {
    scan.skip_space();
    let closes = scan.peek()? == close;
    scan.at += usize::from(closes);
    Some(closes)
}

/// The text read from the stream and not yet consumed.
struct Window<R> {
    source: R,
    /// The text read so far, from the first step not yet done.
    text: String,
    /// Where the next step starts in `text`.
    at: usize,
    /// The first bytes of a character the last read split.
    carry: Vec<u8>,
    /// Whether the stream has no more bytes.
    ended: bool,
    /// The bytes read from the stream in all.
    read: u64,
    chunk: usize,
    len_hint: u64,
    max_bytes: u64,
}

impl<R: Read> Window<R> {
    fn new(source: R, chunk: usize, len_hint: u64, max_bytes: u64) -> Window<R> {
        Window {
            source,
            text: String::new(),
            at: 0,
            carry: Vec::new(),
            ended: false,
            read: 0,
            chunk,
            len_hint,
            max_bytes,
        }
    }

    /// Run `step` on the text from the current position (space skipped),
    /// `depth` containers deep, and move past what it read. A step that
    /// fails before the stream's end is run again on more text; once the
    /// stream is read to its end, its failure is final.
    fn step<T>(
        &mut self,
        depth: usize,
        reader: &mut Reader<'_>,
        mut step: impl FnMut(&mut Scan<'_>, &mut Reader<'_>) -> Option<T>,
    ) -> Option<T> {
        loop {
            let mut scan = Scan::new(&self.text, self.at, depth);
            // The space after the last step's `,` or `:` may have been
            // past the end of the text then.
            scan.skip_space();
            if let Some(done) = step(&mut scan, reader) {
                self.at = scan.at;
                return Some(done);
            }
            if self.ended {
                return None;
            }
            // The items and field values a failed step gathered for its
            // arrays and objects.
            reader.array_items.truncate(1);
            reader.field_values.clear();
            self.refill()?;
        }
    }

    /// Drop the consumed text and read more: a chunk, or the whole rest of
    /// the stream when the step in hand is already half a chunk long.
    fn refill(&mut self) -> Option<()> {
        let whole_rest = self.text.len() - self.at >= self.chunk / 2;
        self.text.drain(..self.at);
        self.at = 0;
        let mut bytes = std::mem::take(&mut self.text).into_bytes();
        bytes.append(&mut self.carry);
        let (want, room) = match whole_rest {
            true => {
                let rest = self.max_bytes.saturating_add(1).saturating_sub(self.read);
                (rest, self.len_hint.saturating_sub(self.read).min(rest))
            }
            false => (self.chunk as u64, self.chunk as u64),
        };
        bytes.try_reserve(usize::try_from(room).ok()?).ok()?;
        let got = self
            .source
            .by_ref()
            .take(want)
            .read_to_end(&mut bytes)
            .ok()? as u64;
        self.read += got;
        self.ended = got < want;
        if self.read > self.max_bytes {
            return None;
        }
        match String::from_utf8(bytes) {
            Ok(text) => self.text = text,
            // A character split by the end of the read: its first bytes
            // wait for the next one.
            Err(e) if !self.ended && e.utf8_error().error_len().is_none() => {
                let valid = e.utf8_error().valid_up_to();
                let mut bytes = e.into_bytes();
                self.carry = bytes.split_off(valid);
                self.text = String::from_utf8(bytes).ok()?;
            }
            Err(_) => return None,
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A stream that hands out at most `step` bytes per read.
    struct Trickle<'a> {
        bytes: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.bytes.len());
            buf[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            Ok(n)
        }
    }

    fn chunked(
        text: &[u8],
        chunk: usize,
        trickle: usize,
        max: usize,
    ) -> Option<Vec<(String, Value)>> {
        let source = Trickle {
            bytes: text,
            step: trickle,
        };
        let mut window = Window::new(source, chunk, text.len() as u64, u64::MAX - 1);
        read_fields(&mut window, &mut Reader::new("data/", max))
    }

    /// Read in chunks of every size from 2 to 40 bytes, `text` gives what
    /// the direct reader gives reading it whole: the same fields, or
    /// nothing (left to serde's path).
    fn agree(text: &[u8], max: usize) {
        let whole = std::str::from_utf8(text)
            .ok()
            .and_then(|text| super::super::fast::read_fields(&mut Reader::new("data/", max), text));
        for chunk in 2..=40 {
            assert_eq!(
                chunked(text, chunk, 7, max),
                whole,
                "chunk {chunk}: {:?}",
                String::from_utf8_lossy(text)
            );
        }
    }

    #[test]
    fn documents_read_in_chunks_as_they_read_whole() {
        for text in [
            r#"{}"#,
            r#"  { }  "#,
            r#"{"a": []}"#,
            r#"{"a": [1, 22, 333, -4.5e-3, true, false, null, "x"], "b": 12345}"#,
            r#"{"rows": [{"id": 1, "name": "é😀 straße"}, {"id": 2, "name": "\u00e9\ud83d\ude00"}]}"#,
            r#"{"a": {"b": [[1, 2], [3, [4, 5]]]}, "a": "again", "c": "last"}"#,
            "{\n  \"a\" : [\n    1 ,\n    2\n  ] ,\n  \"b\" : \"text with \\\" and \\\\\"\n}\n",
        ] {
            agree(text.as_bytes(), 1000);
            assert!(chunked(text.as_bytes(), 3, 1, 1000).is_some(), "{text}");
            assert!(
                chunked(text.as_bytes(), 1 << 16, 1 << 16, 1000).is_some(),
                "{text}"
            );
        }
    }

    #[test]
    fn every_failure_is_left_to_the_whole_text_reader() {
        for text in [
            "",
            "[]",
            r#"{"a": 1} x"#,
            r#"{"a": 1"#,
            r#"{"a": [1, 2"#,
            r#"{"a": [1, 2,]}"#,
            r#"{"a": 12"#,
            r#"{"a": tru}"#,
            r#"{"a": [1, 2, 3]}"#, // over a limit of 2 items
            r#"{"a": "abc"}"#,     // over a limit of 2 characters
            r#"{"a": 99999999999999999999}"#,
        ] {
            for chunk in 1..=12 {
                assert!(
                    chunked(text.as_bytes(), chunk, 5, 2).is_none(),
                    "{text} by {chunk}"
                );
            }
        }
        // Not UTF-8, whole or at the end.
        assert!(chunked(b"{\"a\": \"\xff\"}", 4, 4, 10).is_none());
        assert!(chunked(b"{\"a\": \"\xc3", 4, 4, 10).is_none());
    }

    #[test]
    fn a_stream_past_its_byte_limit_gives_up() {
        let text = br#"{"a": [1, 2, 3]}"#;
        let read = |max_bytes: u64| {
            let mut window = Window::new(&text[..], 4, 0, max_bytes);
            read_fields(&mut window, &mut Reader::new("data/", 100))
        };
        assert!(read(text.len() as u64).is_some());
        assert!(read(text.len() as u64 - 1).is_none());
    }

    #[test]
    fn a_long_value_is_read_with_the_rest_of_the_stream() {
        let long = "x".repeat(5000);
        let text = format!(r#"{{"log": "{long}", "n": [1, 2]}}"#);
        let mut window = Window::new(text.as_bytes(), 64, 0, u64::MAX - 1);
        let fields = read_fields(&mut window, &mut Reader::new("data/", 10_000)).unwrap();
        assert_eq!(fields[0].1, Value::str(&long));
        // The first chunk, then the whole rest at the long string.
        assert_eq!(window.read, text.len() as u64);
        assert!(window.ended);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn generated_documents_read_in_chunks_as_they_read_whole(
            text in super::super::fast::tests::document(),
            max in 3usize..20,
        ) {
            agree(text.as_bytes(), 1000);
            agree(text.as_bytes(), max);
        }

        #[test]
        fn damaged_documents_read_in_chunks_as_they_read_whole(
            text in super::super::fast::tests::document(),
            at in any::<prop::sample::Index>(),
            insert in "[\\[\\]{}\",:0-9eE.+\\-\\\\ tnu]{0,2}",
        ) {
            let at = at.index(text.len() + 1);
            let mut damaged = text.into_bytes();
            damaged.splice(at..at, insert.bytes());
            agree(&damaged, 1000);
        }
    }
}
