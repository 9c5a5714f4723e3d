//! `ptc mcp-server`'s standard input, passed to the protocol layer as it
//! comes, with one addition. The protocol layer (rmcp) drops a line
//! longer than its limit unread and says nothing to the client, which
//! then waits forever for its answer. [`OversizedRequests`] watches each
//! line as it goes by, finds its top-level `id` and `method` with a small
//! streaming JSON scanner (they may come anywhere in the object), and
//! after a line over [`MAX_REQUEST_BYTES`] adds a short request of the
//! method [`TOO_LARGE_METHOD`] with that id, which the server answers with
//! an error naming the limit. The protocol layer is given the same limit,
//! so the long line itself is still dropped there, without being parsed.
//!
//! Nothing is buffered here but the id and method (each at most
//! [`MAX_FIELD_BYTES`]); a line of a notification (no id) or of anything
//! but a JSON object gets nothing added.

use std::pin::Pin;
use std::task::{Context, Poll};

use serde_json::Value as Json;
use tokio::io::{AsyncRead, ReadBuf};

/// The longest line (one JSON-RPC message, its newline included) the
/// server reads: 16 MiB, rmcp's own default. A `run` program may have at
/// most 4 MiB ([`crate::input::MAX_PROGRAM_BYTES`]), however it is
/// escaped.
pub const MAX_REQUEST_BYTES: usize = 16 * 1024 * 1024;
/// The method of the request that stands for one too large to read; its
/// params are `{"bytes": N, "method": "..."}`.
pub const TOO_LARGE_METHOD: &str = "ptc/request-too-large";
/// The most bytes of an `id` or `method` value kept.
const MAX_FIELD_BYTES: usize = 256;

/// A reader that adds a [`TOO_LARGE_METHOD`] request after each line
/// longer than `max` (see the module docs).
pub(crate) struct OversizedRequests<R> {
    inner: R,
    watch: LineWatch,
    /// A request to hand out before anything else.
    added: Vec<u8>,
    /// Bytes read past the end of a long line, not watched yet.
    rest: Vec<u8>,
}

impl<R> OversizedRequests<R> {
    pub fn new(inner: R, max: usize) -> Self {
        OversizedRequests {
            inner,
            watch: LineWatch::new(max),
            added: Vec::new(),
            rest: Vec::new(),
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for OversizedRequests<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        if !this.added.is_empty() {
            let n = this.added.len().min(buf.remaining());
            buf.put_slice(&this.added[..n]);
            this.added.drain(..n);
            return Poll::Ready(Ok(()));
        }
        if !this.rest.is_empty() {
            let n = this.rest.len().min(buf.remaining());
            let n = match this.watch.scan(&this.rest[..n]) {
                Some((end, request)) => {
                    this.added = request;
                    end
                }
                None => n,
            };
            buf.put_slice(&this.rest[..n]);
            this.rest.drain(..n);
            return Poll::Ready(Ok(()));
        }
        let start = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if let Some((end, request)) = this.watch.scan(&buf.filled()[start..]) {
                    this.rest = buf.filled()[start + end..].to_vec();
                    buf.set_filled(start + end);
                    this.added = request;
                }
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }
}

/// Which of the fields the scanner keeps a value is being read for.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Field {
    Id,
    Method,
}

/// The state of one line: its length and what the scanner knows of the
/// JSON object on it.
struct LineWatch {
    max: usize,
    /// Bytes of the line so far, its newline included.
    length: usize,
    /// Open objects and arrays.
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// The line is no object (a batch, text): nothing to find.
    ignored: bool,
    /// At depth 1, the next string is a key.
    key_next: bool,
    /// The key being read at depth 1 (a field's name, or too long).
    key: Option<Vec<u8>>,
    /// The field whose `:` comes next.
    field: Option<Field>,
    /// The value being read, and for which field.
    value: Option<(Field, Vec<u8>)>,
    id: Option<Vec<u8>>,
    method: Option<Vec<u8>>,
}

impl LineWatch {
    fn new(max: usize) -> LineWatch {
        LineWatch {
            max,
            length: 0,
            depth: 0,
            in_string: false,
            escaped: false,
            ignored: false,
            key_next: false,
            key: None,
            field: None,
            value: None,
            id: None,
            method: None,
        }
    }

    /// Watch `bytes`; at the end of the first line over the limit, the
    /// index just past its newline and the request to add after it.
    fn scan(&mut self, bytes: &[u8]) -> Option<(usize, Vec<u8>)> {
        for (i, &b) in bytes.iter().enumerate() {
            self.length += 1;
            if b == b'\n' {
                let long = self.length > self.max;
                let request = long.then(|| self.too_large_request()).flatten();
                *self = LineWatch::new(self.max);
                if long {
                    return Some((i + 1, request.unwrap_or_default()));
                }
                continue;
            }
            if !self.ignored {
                self.byte(b);
            }
        }
        None
    }

    /// The request standing for this line, when it is a request (it has
    /// an id and a method).
    fn too_large_request(&self) -> Option<Vec<u8>> {
        let id: Json = serde_json::from_slice(self.id.as_deref()?).ok()?;
        if !(id.is_string() || id.is_number()) {
            return None;
        }
        let method: Json = serde_json::from_slice(self.method.as_deref()?).ok()?;
        let mut line = serde_json::to_vec(&serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": TOO_LARGE_METHOD,
            "params": {"bytes": self.length, "method": method},
        }))
        .ok()?;
        line.push(b'\n');
        Some(line)
    }

    fn byte(&mut self, b: u8) {
        if let Some((field, value)) = &mut self.value {
            // A value at depth 1 ends at `,` or `}` outside strings.
            let ends = !self.in_string && self.depth == 1 && matches!(b, b',' | b'}');
            if ends {
                let (field, value) = (*field, std::mem::take(value));
                self.value = None;
                let text = value.trim_ascii().to_vec();
                match field {
                    Field::Id => self.id = Some(text),
                    Field::Method => self.method = Some(text),
                }
            } else if value.len() < MAX_FIELD_BYTES {
                value.push(b);
            }
        }
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                self.end_key();
            } else if let Some(key) = &mut self.key {
                if key.len() <= 8 {
                    key.push(b);
                }
            }
            return;
        }
        match b {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.key_next && self.value.is_none() {
                    self.key = Some(Vec::new());
                    self.key_next = false;
                }
            }
            b'{' | b'[' => {
                if self.depth == 0 && b == b'[' {
                    self.ignored = true;
                }
                self.depth += 1;
                if self.depth == 1 {
                    self.key_next = true;
                }
            }
            b'}' | b']' => self.depth = self.depth.saturating_sub(1),
            b',' if self.depth == 1 => self.key_next = true,
            b':' if self.depth == 1 => {
                if let Some(field) = self.field.take() {
                    self.value = Some((field, Vec::new()));
                }
            }
            b' ' | b'\t' | b'\r' => {}
            _ if self.depth == 0 => self.ignored = true,
            _ => {}
        }
    }

    /// A key string ended: remember whether it names a field to keep.
    fn end_key(&mut self) {
        if let Some(key) = self.key.take() {
            self.field = match key.as_slice() {
                b"id" => Some(Field::Id),
                b"method" => Some(Field::Method),
                _ => None,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Everything `input` becomes, read through the filter in small
    /// reads.
    fn filtered(input: &[u8], max: usize) -> String {
        String::from_utf8(filtered_in(input, max, 7)).unwrap()
    }

    #[test]
    fn short_lines_pass_unchanged() {
        let input = "{\"id\": 1, \"method\": \"ping\"}\n{\"id\": 2}\nnot json\n";
        assert_eq!(filtered(input.as_bytes(), 100), input);
    }

    #[test]
    fn a_long_request_is_followed_by_one_standing_for_it() {
        let long = format!(
            "{{\"jsonrpc\": \"2.0\", \"method\": \"tools/call\", \"params\": {{\"program\": \"{}\", \"id\": 7}}, \"id\": \"a\\\"b\"}}\n",
            "x".repeat(200)
        );
        let input = format!("{{\"id\": 1}}\n{long}{{\"id\": 3}}\n");
        let out = filtered(input.as_bytes(), 100);
        let added = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\",\"method\":\"{TOO_LARGE_METHOD}\",\"params\":{{\"bytes\":{},\"method\":\"tools/call\"}}}}\n",
            long.len()
        );
        assert_eq!(out, format!("{{\"id\": 1}}\n{long}{added}{{\"id\": 3}}\n"));
    }

    #[test]
    fn notifications_batches_and_text_get_nothing() {
        for long in [
            format!(
                "{{\"method\": \"notifications/x\", \"params\": \"{}\"}}\n",
                "x".repeat(200)
            ),
            format!("[{{\"id\": 1, \"method\": \"{}\"}}]\n", "x".repeat(200)),
            format!("{}\n", "x".repeat(200)),
            format!(
                "{{\"id\": {{\"nested\": 1}}, \"method\": \"{}\"}}\n",
                "x".repeat(200)
            ),
        ] {
            assert_eq!(filtered(long.as_bytes(), 100), long);
        }
    }

    #[test]
    fn the_limit_counts_the_newline_as_rmcp_does() {
        let line = format!("{{\"id\": 1, \"method\": \"{}\"}}\n", "m".repeat(20));
        assert_eq!(filtered(line.as_bytes(), line.len()), line);
        assert!(filtered(line.as_bytes(), line.len() - 1).len() > line.len());
    }

    /// `input` read through the filter in reads of `chunk` bytes.
    fn filtered_in(input: &[u8], max: usize, chunk: usize) -> Vec<u8> {
        use tokio::io::AsyncReadExt;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(async {
            let mut reader = OversizedRequests::new(input, max);
            let mut out = Vec::new();
            let mut buf = vec![0u8; chunk];
            loop {
                let n = reader.read(&mut buf).await.unwrap();
                if n == 0 {
                    break;
                }
                out.extend_from_slice(&buf[..n]);
            }
            out
        })
    }

    proptest::proptest! {
        #[test]
        fn lines_pass_through_whatever_the_reads_and_long_requests_get_a_stand_in(
            lines in proptest::collection::vec((0u32..1000, "[a-z ,:{}\\[\\]\"]{0,80}"), 0..12),
            chunk in 1usize..64,
        ) {
            let max = 60;
            let mut input = Vec::new();
            let mut expected = Vec::new();
            for (id, filler) in &lines {
                let line = format!("{{\"method\": \"m\", \"params\": {}, \"id\": {id}}}\n",
                    serde_json::to_string(filler).unwrap());
                input.extend_from_slice(line.as_bytes());
                expected.extend_from_slice(line.as_bytes());
                if line.len() > max {
                    let added = serde_json::json!({"jsonrpc": "2.0", "id": id,
                        "method": TOO_LARGE_METHOD,
                        "params": {"bytes": line.len(), "method": "m"}});
                    expected.extend_from_slice(format!("{added}\n").as_bytes());
                }
            }
            proptest::prop_assert_eq!(filtered_in(&input, max, chunk), expected);
        }
    }
}
