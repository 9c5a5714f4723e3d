//! Trace events leave the process here: each [`Event`] becomes a record
//! with the session id, a timestamp and a sequence number, is redacted
//! (on by default) and handed to every [`Sink`]: a JSON Lines file, an
//! HTTP exporter posting to `{URL}/ingest` from a background thread, an
//! archive's `events.jsonl`, or an embedder's own.
//!
//! The exporter never slows the caller: records go into a bounded queue
//! (beyond it they are counted as dropped), each POST has a 2 s timeout,
//! problems are reported once per change of state on stderr with the
//! prefix `[trace]`, and at exit the queue is flushed for at most 2 s. A
//! healthy export prints nothing; a collector that is down says so once.
//!
//! The prefix is `[trace]`, not seed 004's `[Ariadne]`: the exporter
//! posts to any `/ingest` collector, so its lines name the subsystem
//! that prints them rather than one viewer (OBSERVABILITY.md).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use serde_json::{json, Value as Json};

use super::event::Event;
use super::redact::Redactor;

/// The prefix of every line the exporters print on stderr.
pub const STDERR_PREFIX: &str = "[trace]";

/// Where trace records go. Sinks get records already redacted.
pub trait Sink: Send {
    /// Take one record (a JSON object with `seq`, `ts`, `session_id`,
    /// `event` and the event's fields). Must not block for long.
    fn write(&mut self, record: &Json);
    /// Deliver what is pending, waiting at most `within`.
    fn flush(&mut self, _within: Duration) {}
}

/// Emits events as records to its sinks.
pub struct Tracer {
    session_id: String,
    seq: u64,
    sinks: Vec<Box<dyn Sink>>,
    redactor: Option<Redactor>,
    warned_unredacted: bool,
}

impl std::fmt::Debug for Tracer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tracer")
            .field("session_id", &self.session_id)
            .field("seq", &self.seq)
            .field("sinks", &self.sinks.len())
            .field("redaction", &self.redactor.is_some())
            .finish()
    }
}

/// A session id unique enough for file names: the start time in
/// milliseconds and the process id, in hex.
pub fn new_session_id() -> String {
    let ms = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!("{ms:x}-{:x}", std::process::id())
}

impl Tracer {
    /// A tracer for `session_id` with redaction by the default patterns
    /// and no sinks yet.
    pub fn new(session_id: impl Into<String>) -> Tracer {
        Tracer {
            session_id: session_id.into(),
            seq: 0,
            sinks: Vec::new(),
            redactor: Some(Redactor::default()),
            warned_unredacted: false,
        }
    }

    /// Redact with `redactor`, or not at all with `None` (a high-severity
    /// event and a stderr warning precede the first export).
    pub fn with_redaction(mut self, redactor: Option<Redactor>) -> Tracer {
        self.redactor = redactor;
        self
    }

    /// Also send records to `sink`.
    pub fn with_sink(mut self, sink: impl Sink + 'static) -> Tracer {
        self.sinks.push(Box::new(sink));
        self
    }

    /// Add a sink to a tracer already in use.
    pub fn add_sink(&mut self, sink: Box<dyn Sink>) {
        self.sinks.push(sink);
    }

    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The redactor in force (`None` when redaction is off).
    pub fn redactor(&self) -> Option<&Redactor> {
        self.redactor.as_ref()
    }

    /// True when some sink takes the records out of the process.
    pub fn exports(&self) -> bool {
        !self.sinks.is_empty()
    }

    /// Records emitted so far.
    pub fn emitted(&self) -> u64 {
        self.seq
    }

    /// Call before anything leaves the process: with redaction off, the
    /// first call emits `compact.redaction_disabled` and warns on stderr.
    pub fn before_export(&mut self) {
        if self.redactor.is_none() && !self.warned_unredacted {
            self.warned_unredacted = true;
            eprintln!("{STDERR_PREFIX} warning: redaction is off: exported events and archives may contain secrets");
            let record = self.record_of(json!({
                "event": "compact.redaction_disabled",
                "severity": "high",
                "message": "redaction is disabled; exports are written unredacted",
            }));
            self.deliver(&record);
        }
    }

    /// Emit one event; returns the record as the sinks got it.
    pub fn emit(&mut self, event: &Event) -> Json {
        let payload = serde_json::to_value(event).unwrap_or_else(
            |e| json!({"event": event.name(), "error": format!("unserializable event: {e}")}),
        );
        self.emit_value(payload)
    }

    /// Emit a record of our own (`payload` must hold an `event` name).
    pub fn emit_value(&mut self, payload: Json) -> Json {
        self.before_export();
        let record = self.record_of(payload);
        self.deliver(&record);
        record
    }

    fn record_of(&mut self, payload: Json) -> Json {
        self.seq += 1;
        let mut record = json!({
            "seq": self.seq,
            "ts": humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
            "session_id": self.session_id,
        });
        if let (Json::Object(r), Json::Object(p)) = (&mut record, payload) {
            for (k, v) in p {
                r.insert(k, v);
            }
        }
        match &self.redactor {
            Some(redactor) => redactor.json(&record),
            None => record,
        }
    }

    fn deliver(&mut self, record: &Json) {
        for sink in &mut self.sinks {
            sink.write(record);
        }
    }

    /// Flush every sink, within `within` in all.
    pub fn flush(&mut self, within: Duration) {
        let deadline = Instant::now() + within;
        for sink in &mut self.sinks {
            sink.flush(deadline.saturating_duration_since(Instant::now()));
        }
    }
}

/// Records kept in memory (for tests and embedders that inspect them).
#[derive(Debug, Clone, Default)]
pub struct MemorySink {
    pub records: Arc<std::sync::Mutex<Vec<Json>>>,
}

impl Sink for MemorySink {
    fn write(&mut self, record: &Json) {
        if let Ok(mut records) = self.records.lock() {
            records.push(record.clone());
        }
    }
}

/// One JSON line per record, flushed as written.
pub struct JsonlSink {
    out: Option<BufWriter<File>>,
    path: String,
}

impl JsonlSink {
    /// Append to `path` (created if missing).
    pub fn open(path: &Path) -> std::io::Result<JsonlSink> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(JsonlSink {
            out: Some(BufWriter::new(file)),
            path: path.display().to_string(),
        })
    }
}

impl Sink for JsonlSink {
    fn write(&mut self, record: &Json) {
        let Some(out) = &mut self.out else { return };
        let result = serde_json::to_writer(&mut *out, record)
            .map_err(std::io::Error::from)
            .and_then(|()| out.write_all(b"\n"))
            .and_then(|()| out.flush());
        if let Err(e) = result {
            eprintln!(
                "{STDERR_PREFIX} cannot write events to `{}`: {e}; no more events go there",
                self.path
            );
            self.out = None;
        }
    }
}

/// Settings of the HTTP exporter.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpSinkOptions {
    /// Records waiting to be sent beyond which new ones are dropped.
    pub queue: usize,
    /// Each POST's time limit.
    pub timeout: Duration,
}

impl Default for HttpSinkOptions {
    fn default() -> Self {
        HttpSinkOptions {
            queue: 1024,
            timeout: Duration::from_secs(2),
        }
    }
}

/// Counters of an HTTP exporter, shared with its thread.
#[derive(Debug, Default)]
pub struct HttpStats {
    pub sent: AtomicU64,
    pub failed: AtomicU64,
    pub dropped: AtomicU64,
}

/// POSTs each record as JSON to `{URL}/ingest` from a background thread.
pub struct HttpSink {
    tx: Option<SyncSender<Json>>,
    done: Receiver<()>,
    worker: Option<JoinHandle<()>>,
    stats: Arc<HttpStats>,
    endpoint: String,
    dropping: bool,
}

impl HttpSink {
    /// An exporter to `{base_url}/ingest` (a trailing `/` is ignored).
    pub fn new(base_url: &str, options: HttpSinkOptions) -> HttpSink {
        let endpoint = format!("{}/ingest", base_url.trim_end_matches('/'));
        let (tx, rx) = mpsc::sync_channel::<Json>(options.queue.max(1));
        let (done_tx, done) = mpsc::channel();
        let stats = Arc::new(HttpStats::default());
        let worker = {
            let stats = stats.clone();
            let endpoint = endpoint.clone();
            std::thread::Builder::new()
                .name("ptc-trace-export".into())
                .spawn(move || {
                    post_loop(&endpoint, rx, options.timeout, &stats);
                    let _ = done_tx.send(());
                })
                .ok()
        };
        if worker.is_none() {
            eprintln!("{STDERR_PREFIX} cannot start the event exporter thread; events to {endpoint} are dropped");
        }
        HttpSink {
            tx: worker.as_ref().map(|_| tx),
            done,
            worker,
            stats,
            endpoint,
            dropping: false,
        }
    }

    /// Sent, failed and dropped counts, shared with the worker.
    pub fn stats(&self) -> Arc<HttpStats> {
        self.stats.clone()
    }
}

fn post_loop(endpoint: &str, rx: Receiver<Json>, timeout: Duration, stats: &HttpStats) {
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(timeout))
        .user_agent(concat!("ptc-lisp/", env!("CARGO_PKG_VERSION")))
        .build()
        .new_agent();
    let mut failing = false;
    while let Ok(record) = rx.recv() {
        let body = record.to_string();
        let result = agent
            .post(endpoint)
            .header("content-type", "application/json")
            .send(body.as_str());
        let problem = match result {
            Ok(response) if response.status().is_success() => None,
            Ok(response) => Some(format!("answered HTTP {}", response.status().as_u16())),
            Err(e) => Some(e.to_string()),
        };
        match problem {
            None => {
                stats.sent.fetch_add(1, Ordering::Relaxed);
                if failing {
                    failing = false;
                    eprintln!("{STDERR_PREFIX} {endpoint} accepts events again");
                }
            }
            Some(problem) => {
                stats.failed.fetch_add(1, Ordering::Relaxed);
                if !failing {
                    failing = true;
                    eprintln!("{STDERR_PREFIX} cannot export events to {endpoint}: {problem}; the run goes on without them");
                }
            }
        }
    }
}

impl Sink for HttpSink {
    fn write(&mut self, record: &Json) {
        let Some(tx) = &self.tx else {
            self.stats.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        };
        match tx.try_send(record.clone()) {
            Ok(()) => self.dropping = false,
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                self.stats.dropped.fetch_add(1, Ordering::Relaxed);
                if !self.dropping {
                    self.dropping = true;
                    eprintln!(
                        "{STDERR_PREFIX} the queue to {} is full: dropping events until it drains",
                        self.endpoint
                    );
                }
            }
        }
    }

    /// Close the queue and wait for it to drain, at most `within`.
    fn flush(&mut self, within: Duration) {
        let Some(tx) = self.tx.take() else { return };
        drop(tx);
        match self.done.recv_timeout(within) {
            Ok(()) | Err(RecvTimeoutError::Disconnected) => {
                if let Some(worker) = self.worker.take() {
                    let _ = worker.join();
                }
            }
            Err(RecvTimeoutError::Timeout) => {
                eprintln!(
                    "{STDERR_PREFIX} gave up delivering events to {} after {within:?}",
                    self.endpoint
                );
            }
        }
        let dropped = self.stats.dropped.load(Ordering::Relaxed);
        let failed = self.stats.failed.load(Ordering::Relaxed);
        let sent = self.stats.sent.load(Ordering::Relaxed);
        // A collector that failed every time was reported once, when it
        // first failed; the tally is for mixed fortunes and drops.
        if dropped > 0 || (failed > 0 && sent > 0) {
            eprintln!(
                "{STDERR_PREFIX} {} events delivered to {}, {failed} failed, {dropped} dropped",
                self.stats.sent.load(Ordering::Relaxed),
                self.endpoint
            );
        }
    }
}

impl Drop for HttpSink {
    fn drop(&mut self) {
        self.flush(Duration::from_secs(2));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_carry_session_timestamp_and_sequence() {
        let sink = MemorySink::default();
        let records = sink.records.clone();
        let mut t = Tracer::new("s1").with_sink(sink);
        t.emit(&Event::SummarySkipped {
            reason: "api_key=sk-abcdef0123456789abcdef".into(),
        });
        t.emit(&Event::error("X", "m", "none"));
        let records = records.lock().unwrap();
        assert_eq!(records.len(), 2);
        assert_eq!(records[0]["session_id"], "s1");
        assert_eq!(records[0]["seq"], 1);
        assert_eq!(records[1]["seq"], 2);
        assert_eq!(records[0]["event"], "window.summary_skipped");
        assert!(records[0]["ts"].as_str().unwrap().ends_with('Z'));
        assert_eq!(records[0]["reason"], "api_key=<REDACTED>");
    }

    #[test]
    fn disabled_redaction_is_announced_first() {
        let sink = MemorySink::default();
        let records = sink.records.clone();
        let mut t = Tracer::new("s").with_redaction(None).with_sink(sink);
        t.emit(&Event::SummarySkipped {
            reason: "password=hunter22".into(),
        });
        let records = records.lock().unwrap();
        assert_eq!(records[0]["event"], "compact.redaction_disabled");
        assert_eq!(records[0]["severity"], "high");
        assert_eq!(records[1]["reason"], "password=hunter22");
    }
}
