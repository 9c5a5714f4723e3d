//! The archive of what compaction removed (seed 004): before each round,
//! the pre-compaction transcript and the summary, laid out as
//! `{session_id}/transcript-pre-compact-{step:03}.jsonl`,
//! `{session_id}/summary-{step:03}.json` and `{session_id}/events.jsonl`,
//! in a directory or an S3-compatible bucket. Everything is redacted on
//! the way out (copy on export). A failure is reported, never fatal.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value as Json;

use super::message::Message;
use super::redact::Redactor;
use super::trace::Sink;

/// The longest session id accepted.
pub const MAX_SESSION_ID_CHARS: usize = 128;

/// Check that `id` can name a session's folder of an archive: 1 to
/// [`MAX_SESSION_ID_CHARS`] ASCII letters, digits, `.`, `_` and `-`, not
/// starting with `.` (so never `.`, `..` or a hidden name). Anything else
/// (`../..`, a slash, a space) could file the archive outside its
/// directory or prefix, and is refused wherever the id comes from: the
/// `--session-id` flag, [`Recorder::from_config`](super::recorder::Recorder::from_config),
/// and the stores themselves ([`check_key`]).
///
/// ```
/// use ptc_lisp::history::archive::validate_session_id;
///
/// assert!(validate_session_id("run-2024.06_1").is_ok());
/// assert_eq!(
///     validate_session_id("../..").unwrap_err(),
///     "invalid session id `../..`: use 1 to 128 ASCII letters, digits, `.`, `_` and `-`, not starting with `.`"
/// );
/// ```
pub fn validate_session_id(id: &str) -> Result<(), String> {
    let valid = !id.is_empty()
        && id.len() <= MAX_SESSION_ID_CHARS
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if valid {
        return Ok(());
    }
    let shown: String = id.chars().take(MAX_SESSION_ID_CHARS).collect();
    let shown = crate::terminal::escape_controls(&shown);
    let cut = if id.chars().count() > MAX_SESSION_ID_CHARS {
        "…"
    } else {
        ""
    };
    Err(format!(
        "invalid session id `{shown}{cut}`: use 1 to {MAX_SESSION_ID_CHARS} ASCII letters, digits, `.`, `_` and `-`, not starting with `.`"
    ))
}

/// Check that an archive `key` stays inside its store: relative, with no
/// empty, `.` or `..` part. Every store checks the keys it is given, so
/// an archive of a bad session id made through the library cannot write
/// elsewhere either.
pub fn check_key(key: &str) -> Result<(), String> {
    let escapes = key.starts_with('/')
        || key.contains('\\')
        || key
            .split('/')
            .any(|part| part.is_empty() || part == "." || part == "..");
    if escapes {
        return Err(format!(
            "the archive key `{}` would leave the archive (is the session id valid?)",
            crate::terminal::escape_controls(key)
        ));
    }
    Ok(())
}

/// Where archived files go.
pub trait Store: Send {
    /// `fs` or `s3`: the `storage_adapter` of `compact.archival` events.
    fn adapter(&self) -> &'static str;
    /// Write `bytes` as the whole object `key`, atomically; returns where
    /// it went (a path or an `s3://` URL).
    fn put(&mut self, key: &str, bytes: &[u8]) -> Result<String, String>;
    /// Add `line` to the end of object `key`.
    fn append(&mut self, key: &str, line: &[u8]) -> Result<String, String>;
    /// Whether object `key` exists, so that a session archived again by
    /// a later process numbers its rounds after the earlier ones instead
    /// of overwriting them. A store that cannot tell answers `false`.
    fn exists(&mut self, _key: &str) -> Result<bool, String> {
        Ok(false)
    }
}

/// A directory: each file is written to a temporary file, flushed to
/// disk and renamed, so no reader ever sees half a file; appends are
/// flushed as written.
#[derive(Debug, Clone)]
pub struct DirStore {
    root: PathBuf,
}

impl DirStore {
    /// Files go under `root` (created when first needed).
    pub fn new(root: impl Into<PathBuf>) -> DirStore {
        DirStore { root: root.into() }
    }

    fn path_of(&self, key: &str) -> Result<PathBuf, String> {
        check_key(key)?;
        let path = self.root.join(key);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
        }
        Ok(path)
    }
}

/// Write `bytes` to `path` through a temporary file in the same
/// directory, synced before the rename.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomically_with(path, bytes, None)
}

/// [`write_atomically`], the new file given `permissions` (those of the
/// file it replaces, say) before the rename: readers see the old file or
/// the whole new one. The temporary file is created anew (never opened
/// through something already at its path).
pub fn write_atomically_with(
    path: &Path,
    bytes: &[u8],
    permissions: Option<std::fs::Permissions>,
) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        // A stale temporary file of an earlier process with this id.
        let _ = std::fs::remove_file(&tmp);
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        if let Some(p) = permissions {
            f.set_permissions(p)?;
        }
        drop(f);
        std::fs::rename(&tmp, path)?;
        // Make the rename itself durable (best effort).
        if let Ok(d) = File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

impl Store for DirStore {
    fn adapter(&self) -> &'static str {
        "fs"
    }

    fn put(&mut self, key: &str, bytes: &[u8]) -> Result<String, String> {
        let path = self.path_of(key)?;
        write_atomically(&path, bytes)
            .map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
        Ok(path.display().to_string())
    }

    fn append(&mut self, key: &str, line: &[u8]) -> Result<String, String> {
        let path = self.path_of(key)?;
        let result = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| {
                f.write_all(line)?;
                f.sync_data()
            });
        result.map_err(|e| format!("cannot append to `{}`: {e}", path.display()))?;
        Ok(path.display().to_string())
    }

    fn exists(&mut self, key: &str) -> Result<bool, String> {
        check_key(key)?;
        let path = self.root.join(key);
        path.try_exists()
            .map_err(|e| format!("cannot look for `{}`: {e}", path.display()))
    }
}

/// What `summary-{step}.json` holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SummaryRecord {
    pub session_id: String,
    pub step: u32,
    /// The summary message's version, when one was written.
    pub version: Option<u32>,
    pub strategy: String,
    pub summarizer: String,
    pub summary: Option<String>,
    pub tokens_before: usize,
    pub tokens_after: usize,
    pub pruned_messages: usize,
    pub note: Option<String>,
}

/// The archive of one session.
pub struct Archive {
    store: Box<dyn Store>,
    session_id: String,
    redactor: Option<Redactor>,
    step: u32,
    /// Whether `step` has been moved past the rounds already in the store.
    resumed: bool,
}

impl std::fmt::Debug for Archive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Archive")
            .field("adapter", &self.store.adapter())
            .field("session_id", &self.session_id)
            .field("step", &self.step)
            .finish()
    }
}

/// One file written by [`Archive::save_round`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Saved {
    pub step: u32,
    pub adapter: &'static str,
    pub location: String,
}

impl Archive {
    /// An archive of `session_id` in `store`, redacting with `redactor`
    /// (`None`: unredacted).
    pub fn new(
        store: Box<dyn Store>,
        session_id: impl Into<String>,
        redactor: Option<Redactor>,
    ) -> Archive {
        Archive {
            store,
            session_id: session_id.into(),
            redactor,
            step: 0,
            resumed: false,
        }
    }

    pub fn adapter(&self) -> &'static str {
        self.store.adapter()
    }

    /// The number of the last round saved or attempted (after the rounds
    /// an earlier process archived for this session, once one was saved).
    pub fn steps(&self) -> u32 {
        self.step
    }

    fn key(&self, name: &str) -> String {
        format!("{}/{name}", self.session_id)
    }

    fn transcript_key(&self, step: u32) -> String {
        self.key(&format!("transcript-pre-compact-{step:03}.jsonl"))
    }

    /// The number of the next round: after the rounds this archive
    /// saved, and (looked up once) after those an earlier process saved
    /// for the same session, whose transcripts are already in the store.
    fn next_step(&mut self) -> Result<u32, String> {
        if !self.resumed {
            while self.store.exists(&self.transcript_key(self.step + 1))? {
                self.step += 1;
            }
            self.resumed = true;
        }
        self.step += 1;
        Ok(self.step)
    }

    /// Save one round: the transcript before compaction, then the
    /// summary. Returns what was written, or the first failure (the
    /// transcript is written first, so a failure never leaves a summary
    /// without its transcript).
    pub fn save_round(
        &mut self,
        before: &[Message],
        summary: &SummaryRecord,
    ) -> Result<Vec<Saved>, String> {
        let step = match self.next_step() {
            Ok(step) => step,
            Err(e) => {
                // Counted all the same, so messages name the round.
                self.step += 1;
                return Err(e);
            }
        };
        let mut transcript = String::new();
        for m in before {
            let m = match &self.redactor {
                Some(r) => r.message(m),
                None => m.clone(),
            };
            transcript.push_str(&serde_json::to_string(&m).map_err(|e| e.to_string())?);
            transcript.push('\n');
        }
        let mut saved = Vec::new();
        let key = self.transcript_key(step);
        let location = self.store.put(&key, transcript.as_bytes())?;
        saved.push(Saved {
            step,
            adapter: self.store.adapter(),
            location,
        });
        let mut record = serde_json::to_value(SummaryRecord {
            step,
            session_id: self.session_id.clone(),
            ..summary.clone()
        })
        .map_err(|e| e.to_string())?;
        if let Some(r) = &self.redactor {
            record = r.json(&record);
        }
        let text = serde_json::to_string_pretty(&record).map_err(|e| e.to_string())? + "\n";
        let key = self.key(&format!("summary-{step:03}.json"));
        let location = self.store.put(&key, text.as_bytes())?;
        saved.push(Saved {
            step,
            adapter: self.store.adapter(),
            location,
        });
        Ok(saved)
    }
}

/// The archive's `events.jsonl`, as a trace sink.
pub struct ArchiveEvents {
    store: Box<dyn Store>,
    key: String,
    failed: bool,
}

impl ArchiveEvents {
    /// Events of `session_id` go to `{session_id}/events.jsonl` in `store`.
    pub fn new(store: Box<dyn Store>, session_id: &str) -> ArchiveEvents {
        ArchiveEvents {
            store,
            key: format!("{session_id}/events.jsonl"),
            failed: false,
        }
    }
}

impl Sink for ArchiveEvents {
    fn write(&mut self, record: &Json) {
        if self.failed {
            return;
        }
        let mut line = record.to_string();
        line.push('\n');
        if let Err(e) = self.store.append(&self.key, line.as_bytes()) {
            self.failed = true;
            warnln!(
                "{} cannot archive events: {e}; no more events are archived",
                super::trace::STDERR_PREFIX
            );
        }
    }
}
