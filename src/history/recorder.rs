//! Everything the history layer exports, set up from a [`Config`]: the
//! tracer with its sinks (events file, HTTP exporter, the archive's
//! `events.jsonl`) and the archive of each compaction round. Used alike
//! by `ptc agent`, `ptc compact`, the REPL and embedders.

use std::time::Duration;

use serde_json::json;

use super::archive::{Archive, ArchiveEvents, DirStore, Store, SummaryRecord};
use super::compact::Report;
use super::config::{Adapter, Config, Encryption};
use super::event::Event;
use super::message::Message;
use super::s3::{S3Location, S3Store, ServerSideEncryption};
use super::summary::{summary_body, summary_version};
use super::trace::{HttpSink, HttpSinkOptions, JsonlSink, Tracer, STDERR_PREFIX};

/// The exports of one session.
#[derive(Debug)]
pub struct Recorder {
    tracer: Tracer,
    archive: Option<Archive>,
}

/// Where an archive goes, as `--archive` names it: a directory or
/// `s3://bucket/prefix`.
pub fn archive_store(target: &str, config: &Config) -> Result<Box<dyn Store>, String> {
    if target.starts_with("s3://") {
        let mut location = S3Location::parse(target)?;
        if let Some(endpoint) = &config.storage.endpoint {
            location.endpoint = Some(endpoint.clone());
        }
        if std::env::var("AWS_REGION").is_err() {
            location.region = config.storage.region.clone();
        }
        location.encryption = match config.storage.encryption {
            Encryption::None => ServerSideEncryption::None,
            Encryption::SseS3 => ServerSideEncryption::S3,
            Encryption::SseKms => ServerSideEncryption::Kms(config.storage.kms_key_id.clone()),
        };
        Ok(Box::new(S3Store::new(location)?))
    } else {
        Ok(Box::new(DirStore::new(target)))
    }
}

impl Recorder {
    /// Set up the exports `config` asks for, for `session_id`. Problems
    /// opening a sink are returned; the caller decides whether they are
    /// fatal (the CLI says so and stops before running anything).
    pub fn from_config(config: &Config, session_id: &str) -> Result<Recorder, String> {
        let mut tracer = Tracer::new(session_id).with_redaction(config.redactor()?);
        if let Some(path) = &config.events.file {
            let sink = JsonlSink::open(path)
                .map_err(|e| format!("cannot open the events file `{}`: {e}", path.display()))?;
            tracer.add_sink(Box::new(sink));
        }
        if let Some(url) = &config.events.url {
            tracer.add_sink(Box::new(HttpSink::new(
                url,
                HttpSinkOptions {
                    queue: config.events.queue,
                    timeout: Duration::from_millis(config.events.timeout_ms),
                },
            )));
        }
        let target = match config.storage.adapter {
            Adapter::None => None,
            Adapter::Fs => Some(config.storage.path.display().to_string()),
            Adapter::S3 => Some(format!(
                "s3://{}/{}",
                config.storage.bucket.clone().unwrap_or_default(),
                config.storage.prefix
            )),
        };
        let archive = match target {
            None => None,
            Some(target) => {
                let events = archive_store(&target, config)?;
                tracer.add_sink(Box::new(ArchiveEvents::new(events, session_id)));
                let files = archive_store(&target, config)?;
                Some(Archive::new(files, session_id, config.redactor()?))
            }
        };
        if !config.redaction.enabled {
            // Announced now, before anything (a transcript too) is exported.
            tracer.before_export();
        } else if let Some(redactor) = tracer.redactor().filter(|_| tracer.exports()) {
            // Compiled now rather than by the first event, whose delivery
            // would wait for it.
            redactor.prepare();
        }
        Ok(Recorder { tracer, archive })
    }

    /// A recorder with only `tracer` (no archive).
    pub fn with_tracer(tracer: Tracer) -> Recorder {
        Recorder {
            tracer,
            archive: None,
        }
    }

    pub fn tracer_mut(&mut self) -> &mut Tracer {
        &mut self.tracer
    }

    pub fn session_id(&self) -> &str {
        self.tracer.session_id()
    }

    /// Emit `events` in order.
    pub fn events(&mut self, events: &[Event]) {
        for event in events {
            self.tracer.emit(event);
        }
    }

    /// Archive one compaction round: `before` as it was, and the result
    /// (`after`, with `report`). Each file written is a `compact.archival`
    /// event; a failure is a `compact.error` event and a stderr line.
    pub fn round(
        &mut self,
        before: &[Message],
        after: &[Message],
        report: &Report,
        strategy: &str,
        summarizer: &str,
        note: Option<&str>,
    ) {
        let Some(archive) = &mut self.archive else {
            return;
        };
        self.tracer.before_export();
        let summary = after.iter().find(|m| summary_version(m).is_some());
        let record = SummaryRecord {
            session_id: String::new(),
            step: 0,
            version: summary.and_then(summary_version),
            strategy: strategy.to_string(),
            summarizer: summarizer.to_string(),
            summary: summary.map(|m| summary_body(m).to_string()),
            tokens_before: report.before.total(),
            tokens_after: report.after.total(),
            pruned_messages: report.pruned,
            note: note.map(str::to_string),
        };
        match archive.save_round(before, &record) {
            Ok(saved) => {
                for s in saved {
                    self.tracer.emit_value(json!({
                        "event": "compact.archival",
                        "step": s.step,
                        "storage_adapter": s.adapter,
                        "file_path": s.location,
                    }));
                }
            }
            Err(problem) => {
                eprintln!(
                    "{STDERR_PREFIX} cannot archive compaction round {}: {problem}",
                    archive.steps()
                );
                self.tracer.emit(&Event::error(
                    "ArchiveFailed",
                    problem,
                    "compaction kept, round not archived",
                ));
            }
        }
    }

    /// Deliver what is pending (at most 2 s for the HTTP exporter).
    pub fn finish(&mut self) {
        self.tracer.flush(Duration::from_secs(2));
    }
}
