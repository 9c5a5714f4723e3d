//! Answers for messages `ptc mcp-server` cannot read, as JSON-RPC 2.0 has
//! them. The protocol layer (rmcp) drops a line that is not JSON without
//! a word, and answers well-formed JSON that is no message (a batch, a
//! number, an object without `method`) with an Invalid Request error that
//! has no `id` at all. JSON-RPC wants a Parse error (-32700) for the
//! first and `"id": null` on both.
//!
//! - [`ParseErrors`] reads standard input on the protocol layer's behalf,
//!   passing every byte through unchanged, keeps a copy of the current
//!   line (up to the line limit), and for each line that is not JSON
//!   hands a -32700 answer with `"id": null` to the output;
//! - [`merge_output`] writes the protocol layer's output and those answers
//!   to standard output whole line by whole line, so they never
//!   interleave, and gives an error without an id `"id": null`.

use std::pin::Pin;
use std::task::{Context, Poll};

use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, ReadBuf};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

/// A reader that reports each line that is not JSON (see the module
/// docs); lines longer than `max` are left to `request_limit`.
pub(crate) struct ParseErrors<R> {
    inner: R,
    max: usize,
    /// The current line so far, while it is no longer than `max`.
    line: Vec<u8>,
    /// The current line is longer than `max`.
    long: bool,
    answers: UnboundedSender<Vec<u8>>,
}

impl<R> ParseErrors<R> {
    pub fn new(inner: R, max: usize, answers: UnboundedSender<Vec<u8>>) -> Self {
        ParseErrors {
            inner,
            max,
            line: Vec::new(),
            long: false,
            answers,
        }
    }

    /// Watch bytes just read.
    fn watch(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        while !rest.is_empty() {
            let (part, ended) = match rest.iter().position(|&b| b == b'\n') {
                Some(i) => (&rest[..i], true),
                None => (rest, false),
            };
            rest = &rest[(part.len() + usize::from(ended))..];
            // The newline counts toward the limit, as the protocol layer
            // counts it.
            if self.line.len() + part.len() + usize::from(ended) > self.max {
                self.long = true;
                self.line = Vec::new();
            } else if !self.long {
                self.line.extend_from_slice(part);
            }
            if ended {
                if !self.long {
                    if let Some(answer) = parse_error_answer(&self.line) {
                        // The output may be gone already; nothing to do then.
                        let _ = self.answers.send(answer);
                    }
                }
                self.line.clear();
                self.long = false;
            }
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for ParseErrors<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let start = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            let fresh = buf.filled()[start..].to_vec();
            this.watch(&fresh);
        }
        polled
    }
}

/// The answer to `line` (its newline removed) when it is not JSON: a
/// Parse error with `"id": null`. A blank line gets none (the protocol
/// layer skips it), nor does JSON of any shape (the protocol layer
/// answers that).
pub(crate) fn parse_error_answer(line: &[u8]) -> Option<Vec<u8>> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.trim_ascii().is_empty() {
        return None;
    }
    let error = serde_json::from_slice::<serde::de::IgnoredAny>(line).err()?;
    if !matches!(
        error.classify(),
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof
    ) {
        return None;
    }
    let answer = json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32700, "message": format!("Parse error: the message is not JSON ({error})")},
    });
    let mut bytes = answer.to_string().into_bytes();
    bytes.push(b'\n');
    Some(bytes)
}

/// The start of an error the protocol layer sends without an id.
const ERROR_WITHOUT_ID: &[u8] = br#"{"jsonrpc":"2.0","error":"#;

/// `line` with `"id":null` added when it is an error without an id.
pub(crate) fn with_null_id(line: Vec<u8>) -> Vec<u8> {
    match line.strip_prefix(ERROR_WITHOUT_ID) {
        Some(rest) => {
            let mut out = br#"{"jsonrpc":"2.0","id":null,"error":"#.to_vec();
            out.extend_from_slice(rest);
            out
        }
        None => line,
    }
}

/// Copy the protocol layer's output (`from`) and the `answers` to `out`,
/// whole lines at a time, until both have ended. A last line of the
/// protocol layer without its newline gets one.
pub(crate) async fn merge_output<R, W>(
    from: R,
    mut answers: UnboundedReceiver<Vec<u8>>,
    out: W,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut from = BufReader::new(from);
    let mut out = out;
    let mut line = Vec::new();
    let (mut from_open, mut answers_open) = (true, true);
    while from_open || answers_open {
        tokio::select! {
            // `read_until` keeps what it has read in `line` when the other
            // branch wins, and goes on from there next time.
            read = from.read_until(b'\n', &mut line), if from_open => {
                if read? == 0 {
                    from_open = false;
                    continue;
                }
                if line.last() != Some(&b'\n') {
                    // A last line cut short still ends before any answer
                    // that follows it.
                    line.push(b'\n');
                }
                out.write_all(&with_null_id(std::mem::take(&mut line))).await?;
                out.flush().await?;
            }
            answer = answers.recv(), if answers_open => match answer {
                Some(answer) => {
                    out.write_all(&answer).await?;
                    out.flush().await?;
                }
                None => answers_open = false,
            },
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer_of(line: &str) -> Option<serde_json::Value> {
        parse_error_answer(line.as_bytes()).map(|a| {
            assert_eq!(a.last(), Some(&b'\n'));
            serde_json::from_slice(&a).unwrap()
        })
    }

    #[test]
    fn text_and_broken_json_are_parse_errors_with_a_null_id() {
        for line in [
            "not json",
            "{\"jsonrpc\": \"2.0\", \"id\": 5,",
            "{} x",
            "[1,]",
        ] {
            let answer = answer_of(line).unwrap_or_else(|| panic!("{line}"));
            assert_eq!(answer["id"], serde_json::Value::Null, "{line}");
            assert!(answer.as_object().unwrap().contains_key("id"));
            assert_eq!(answer["error"]["code"], -32700, "{line}");
            let message = answer["error"]["message"].as_str().unwrap();
            assert!(
                message.starts_with("Parse error: the message is not JSON ("),
                "{message}"
            );
        }
    }

    #[test]
    fn json_of_any_shape_and_blank_lines_get_nothing_here() {
        for line in [
            "",
            "  ",
            "\r",
            "[]",
            "3",
            "{\"id\": 1}\r",
            "\u{feff}{\"id\": 1}",
        ] {
            assert!(answer_of(line).is_none(), "{line:?}");
        }
    }

    #[test]
    fn errors_without_an_id_get_a_null_one() {
        let line = br#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request"}}
"#;
        assert_eq!(
            with_null_id(line.to_vec()),
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request"}}
"#
        );
        let with_id = br#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"x"}}
"#;
        assert_eq!(with_null_id(with_id.to_vec()), with_id);
    }

    /// Everything `input` becomes read through [`ParseErrors`] in reads
    /// of `chunk` bytes, and the answers it gave.
    fn watched(input: &[u8], max: usize, chunk: usize) -> (Vec<u8>, Vec<String>) {
        use tokio::io::AsyncReadExt;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(async {
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            let mut reader = ParseErrors::new(input, max, tx);
            let mut out = Vec::new();
            let mut buf = vec![0u8; chunk];
            loop {
                let n = reader.read(&mut buf).await.unwrap();
                if n == 0 {
                    break;
                }
                out.extend_from_slice(&buf[..n]);
            }
            drop(reader);
            let mut answers = Vec::new();
            while let Some(a) = rx.recv().await {
                answers.push(String::from_utf8(a).unwrap());
            }
            (out, answers)
        })
    }

    #[test]
    fn the_reader_passes_everything_and_answers_each_bad_line_once() {
        let input = "{\"id\": 1}\nbad one\n\n{\"id\": 2}\nbad two\nlong line that is not json at all\nbad\n";
        for chunk in [1, 3, 7, 64, 4096] {
            let (out, answers) = watched(input.as_bytes(), 20, chunk);
            assert_eq!(out, input.as_bytes());
            // "long line ..." is over the limit of 20: left to the line
            // limit's own answer.
            assert_eq!(answers.len(), 3, "chunk {chunk}: {answers:?}");
            assert!(answers.iter().all(|a| a.contains("-32700")));
        }
    }

    #[test]
    fn merged_output_keeps_lines_whole() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let out = runtime.block_on(async {
            let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
            tx.send(b"{\"answer\":1}\n".to_vec()).unwrap();
            tx.send(b"{\"answer\":2}\n".to_vec()).unwrap();
            drop(tx);
            let from: &[u8] =
                b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n{\"jsonrpc\":\"2.0\",\"error\":{}}\nlast";
            let mut out = Vec::new();
            merge_output(from, rx, &mut out).await.unwrap();
            String::from_utf8(out).unwrap()
        });
        let mut lines: Vec<&str> = out.split_inclusive('\n').collect();
        lines.sort();
        assert_eq!(
            lines,
            [
                "last\n",
                "{\"answer\":1}\n",
                "{\"answer\":2}\n",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n",
                "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{}}\n",
            ]
        );
    }
}
