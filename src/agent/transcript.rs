//! The JSONL transcript of an agent run: one line per model call, with the
//! messages sent (system prompt included), the reply, the program found in
//! it, and what running the program gave (`outcome`, `result` or `error`,
//! `tool_calls`), and the usage the provider reported.
//!
//! Each line is flushed as soon as it is written, so a run that crashes
//! keeps every earlier turn. A transcript also replays as a script (its
//! `reply` fields; see [`super::scripted`]).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value as Json;

use super::message::{ChatMessage, Usage};
use super::parse::ExtractionRule;

/// One model call and what came of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TranscriptEntry {
    /// The turn number, from 1.
    pub turn: u32,
    /// Everything sent to the model for this call.
    pub messages: Vec<ChatMessage>,
    pub reply: String,
    /// The program found in the reply, `null` when there was none.
    pub program: Option<String>,
    /// Which extraction rule found the program.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extraction: Option<ExtractionRule>,
    /// How the program ended: `value`, `return`, `fail` or `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    /// The program's value as JSON; absent when it did not run or failed
    /// (a `nil` result is `null`, which is different).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub result: Option<Json>,
    /// The error the program ended with; absent when there was none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default)]
    pub tool_calls: Vec<TranscriptToolCall>,
    pub usage: Option<Usage>,
}

/// One tool call a program made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TranscriptToolCall {
    pub name: String,
    pub args: Json,
    /// The tool's value; absent when it failed.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub result: Option<Json>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub duration_ms: u64,
}

/// A field that is present is `Some`, even when it is `null`; only an
/// absent field (through `default`) is `None`.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Json>, D::Error> {
    Json::deserialize(d).map(Some)
}

/// Writes transcript entries as JSON lines, flushing after each.
pub struct TranscriptWriter<W: Write> {
    out: W,
}

impl TranscriptWriter<BufWriter<File>> {
    /// Create (or truncate) a transcript file.
    pub fn create(path: &Path) -> std::io::Result<Self> {
        Ok(TranscriptWriter::new(BufWriter::new(File::create(path)?)))
    }
}

impl<W: Write> TranscriptWriter<W> {
    pub fn new(out: W) -> Self {
        TranscriptWriter { out }
    }

    /// Write one entry as one line and flush it.
    pub fn write(&mut self, entry: &TranscriptEntry) -> std::io::Result<()> {
        serde_json::to_writer(&mut self.out, entry)?;
        self.out.write_all(b"\n")?;
        self.out.flush()
    }

    /// Write an entry already turned into JSON (a redacted copy, say).
    pub fn write_json(&mut self, entry: &serde_json::Value) -> std::io::Result<()> {
        serde_json::to_writer(&mut self.out, entry)?;
        self.out.write_all(b"\n")?;
        self.out.flush()
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

/// Read a transcript back, one entry per non-blank line; at most
/// [`MAX_HISTORY_BYTES`](crate::input::MAX_HISTORY_BYTES).
pub fn read_transcript(path: &Path) -> std::io::Result<Vec<TranscriptEntry>> {
    let text = crate::input::read_file_text(
        path,
        crate::input::MAX_HISTORY_BYTES,
        &format!("the transcript `{}`", path.display()),
        "for a transcript",
    )
    .map_err(|e| match e {
        crate::input::InputError::Io(e) => e,
        other => std::io::Error::new(std::io::ErrorKind::InvalidData, other.to_string()),
    })?;
    let mut entries = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let entry = serde_json::from_str(line).map_err(|e| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{}: line {}: {e}", path.display(), i + 1),
            )
        })?;
        entries.push(entry);
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_results_survive_a_round_trip() {
        let entry = TranscriptEntry {
            turn: 1,
            messages: vec![ChatMessage::user("go")],
            reply: "(println 1)".into(),
            program: Some("(println 1)".into()),
            extraction: Some(ExtractionRule::Bare),
            outcome: Some("value".into()),
            result: Some(Json::Null),
            error: None,
            tool_calls: vec![],
            usage: None,
        };
        let mut w = TranscriptWriter::new(Vec::new());
        w.write(&entry).unwrap();
        let line = String::from_utf8(w.into_inner()).unwrap();
        assert!(line.contains(r#""result":null"#));
        assert!(!line.contains("\"error\""));
        let back: TranscriptEntry = serde_json::from_str(&line).unwrap();
        assert_eq!(back, entry);
    }
}
