//! Recording model calls and answering them again without a model:
//! `ptc agent --record FILE` wraps the provider in a [`RecordingProvider`],
//! which appends one JSON line per answered request
//! (`{"hash", "request", "response"}`); `--llm replay:FILE` is a
//! [`ReplayProvider`], which answers a request with the recorded response
//! of the same hash (in recorded order when a request recurs) and never
//! touches the network.
//!
//! The hash ([`request_hash`]) covers what decides a reply: the request's
//! model, its messages (role and text), and its parameters (`max_tokens`,
//! `temperature`, `seed`). PTC-Lisp sends the tools inside the system
//! prompt, so they are part of the messages. It is FNV-1a (64 bits) over
//! a canonical JSON form: stable across runs, machines and versions of
//! this crate, not a cryptographic digest.

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value as Json};

use super::message::{ChatRequest, ChatResponse};
use super::provider::{LlmProvider, ProviderError};

/// The parts of a request that decide the reply, as canonical JSON.
fn request_json(request: &ChatRequest) -> Json {
    json!({
        "model": request.model,
        "messages": request.messages.iter()
            .map(|m| json!({"role": m.role, "content": m.content}))
            .collect::<Vec<_>>(),
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
        "seed": request.seed,
    })
}

/// The stable hash of a request (16 hex digits; see the module docs).
pub fn request_hash(request: &ChatRequest) -> String {
    hash_json(&request_json(request))
}

fn hash_json(json: &Json) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in json.to_string().bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// A provider that passes each request on and appends it and the reply to
/// a JSON Lines file. Failed calls are not recorded.
pub struct RecordingProvider {
    inner: Arc<dyn LlmProvider>,
    out: Mutex<BufWriter<File>>,
    path: PathBuf,
}

impl RecordingProvider {
    /// Record `inner`'s calls into `path` (created or truncated).
    pub fn create(inner: Arc<dyn LlmProvider>, path: &Path) -> Result<Self, ProviderError> {
        let file = File::create(path).map_err(|e| {
            ProviderError::Config(format!(
                "cannot create the recording `{}`: {e}",
                path.display()
            ))
        })?;
        Ok(RecordingProvider {
            inner,
            out: Mutex::new(BufWriter::new(file)),
            path: path.to_path_buf(),
        })
    }
}

impl LlmProvider for RecordingProvider {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, ProviderError> {
        let response = self.inner.complete(request)?;
        let request_json = request_json(request);
        let line = json!({
            "hash": hash_json(&request_json),
            "request": request_json,
            "response": response,
        });
        let mut out = self
            .out
            .lock()
            .map_err(|_| ProviderError::Config("the recording failed earlier".into()))?;
        writeln!(out, "{line}")
            .and_then(|()| out.flush())
            .map_err(|e| {
                ProviderError::Config(format!(
                    "cannot write the recording `{}`: {e}",
                    self.path.display()
                ))
            })?;
        Ok(response)
    }
}

/// One recorded request, kept to explain a miss.
struct Recorded {
    hash: String,
    messages: Vec<(String, String)>,
}

/// A provider that answers from a recording (see the module docs).
pub struct ReplayProvider {
    file: String,
    answers: Mutex<HashMap<String, VecDeque<ChatResponse>>>,
    /// How many answers each hash had, for the message when they run out.
    counts: HashMap<String, usize>,
    recorded: Vec<Recorded>,
}

impl ReplayProvider {
    /// Read a recording written by [`RecordingProvider`] (at most
    /// [`MAX_HISTORY_BYTES`](crate::input::MAX_HISTORY_BYTES)).
    pub fn from_file(path: &Path) -> Result<Self, ProviderError> {
        let file = path.display().to_string();
        let text = crate::input::read_file_text(
            path,
            crate::input::MAX_HISTORY_BYTES,
            "the recording",
            "for recordings",
        )
        .map_err(|e| ProviderError::Config(format!("replay `{file}`: {e}")))?;
        let mut answers: HashMap<String, VecDeque<ChatResponse>> = HashMap::new();
        let mut recorded = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let bad = |why: String| {
                ProviderError::Config(format!("replay `{file}`: line {}: {why}", i + 1))
            };
            let entry: Json = serde_json::from_str(line).map_err(|e| bad(e.to_string()))?;
            let request = &entry["request"];
            if !request.is_object() {
                return Err(bad("no `request` object".into()));
            }
            // The hash is computed again: a hand-edited request is found
            // by what it now says.
            let hash = hash_json(request);
            let response: ChatResponse = serde_json::from_value(entry["response"].clone())
                .map_err(|e| bad(format!("bad `response`: {e}")))?;
            let messages = request["messages"]
                .as_array()
                .map(|ms| {
                    ms.iter()
                        .map(|m| {
                            let text = |k: &str| m[k].as_str().unwrap_or_default().to_string();
                            (text("role"), text("content"))
                        })
                        .collect()
                })
                .unwrap_or_default();
            answers.entry(hash.clone()).or_default().push_back(response);
            recorded.push(Recorded { hash, messages });
        }
        let counts = answers.iter().map(|(h, q)| (h.clone(), q.len())).collect();
        Ok(ReplayProvider {
            file,
            answers: Mutex::new(answers),
            counts,
            recorded,
        })
    }

    /// Why `request` (of `hash`) has no recorded answer: the recorded
    /// request sharing the most leading messages, and the first message
    /// where they differ.
    fn miss(&self, hash: &str, request: &ChatRequest) -> String {
        let file = &self.file;
        if let Some(n) = self.counts.get(hash) {
            return format!(
                "replay `{file}`: request {hash} was recorded {n} time(s) and every answer is used"
            );
        }
        let now: Vec<(String, String)> = request
            .messages
            .iter()
            .map(|m| {
                (
                    serde_json::to_value(m.role)
                        .ok()
                        .and_then(|r| r.as_str().map(str::to_string))
                        .unwrap_or_default(),
                    m.content.clone(),
                )
            })
            .collect();
        let shared = |r: &Recorded| {
            r.messages
                .iter()
                .zip(&now)
                .take_while(|(a, b)| a == b)
                .count()
        };
        let Some(best) = self.recorded.iter().map(shared).max() else {
            return format!(
                "replay `{file}`: no recorded response for request {hash}; the recording is empty"
            );
        };
        let Some(closest) = self.recorded.iter().find(|r| shared(r) == best) else {
            return format!("replay `{file}`: no recorded response for request {hash}");
        };
        let difference = match (closest.messages.get(best), now.get(best)) {
            (Some((role, recorded)), Some((_, sent))) => format!(
                "message {} ({role}) differs at character {}: recorded `{}`, now `{}`",
                best + 1,
                first_difference(recorded, sent),
                excerpt(recorded, first_difference(recorded, sent)),
                excerpt(sent, first_difference(recorded, sent)),
            ),
            (Some(_), None) => format!(
                "the request has {} messages, the recorded one more",
                now.len()
            ),
            (None, Some(_)) => format!(
                "the request has {} messages, the recorded one {}",
                now.len(),
                closest.messages.len()
            ),
            (None, None) => "the messages are the same; the model or parameters differ".into(),
        };
        format!(
            "replay `{file}`: no recorded response for request {hash}; the closest recorded request, {}, shares {best} leading message(s): {difference}",
            closest.hash
        )
    }
}

/// The character index where `a` and `b` first differ.
fn first_difference(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}

/// Up to 40 characters of `text` from character `at`, on one line.
fn excerpt(text: &str, at: usize) -> String {
    let part: String = text.chars().skip(at).take(40).collect();
    part.replace('\n', "\\n")
}

impl LlmProvider for ReplayProvider {
    fn name(&self) -> String {
        format!("replay:{}", self.file)
    }

    fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, ProviderError> {
        let hash = request_hash(request);
        let answer = self
            .answers
            .lock()
            .ok()
            .and_then(|mut a| a.get_mut(&hash).and_then(VecDeque::pop_front));
        answer.ok_or_else(|| ProviderError::Config(self.miss(&hash, request)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::message::ChatMessage;

    #[test]
    fn the_hash_is_stable_and_covers_messages_and_parameters() {
        let a = ChatRequest::new(vec![ChatMessage::system("s"), ChatMessage::user("u")]);
        assert_eq!(request_hash(&a), request_hash(&a.clone()));
        let mut b = a.clone();
        b.temperature = Some(0.5);
        assert_ne!(request_hash(&a), request_hash(&b));
        let mut c = a.clone();
        c.messages[1] = ChatMessage::user("v");
        assert_ne!(request_hash(&a), request_hash(&c));
        // Fixed across versions: a change here breaks every recording.
        assert_eq!(request_hash(&ChatRequest::new(vec![])), "09adb04f665f6107");
    }
}
