//! Reading what a run starts from (`--data` files, tool manifests,
//! program text) with a size limit: never more than the limit plus one
//! byte is read, so `--data /dev/zero` is a quick, clear error instead of
//! a read that lasts until memory runs out.
//!
//! | input | default limit | raised with |
//! |---|---|---|
//! | a `--data` file | [`MAX_DATA_BYTES`] (64 MiB) | `--max-data-bytes N` |
//! | a tool manifest | [`MAX_MANIFEST_BYTES`] (1 MiB) | — |
//! | program text (a file, standard input, a prelude, `:load`) | [`MAX_PROGRAM_BYTES`] (4 MiB) | — |
//! | a chat history (`ptc compact`), a script or transcript replayed | [`MAX_HISTORY_BYTES`] (64 MiB) | `--max-input-bytes N` (`ptc compact`) |
//!
//! An input over its limit is an error of kind
//! [`ErrorKind::InputLimit`] (code
//! `input-limit-exceeded`) naming the input, the limit and its value.

use std::io::Read;
use std::path::Path;

use crate::error::{Error, ErrorKind};

/// The most bytes a `--data` file may have, unless raised.
pub const MAX_DATA_BYTES: u64 = 64 * 1024 * 1024;
/// The most bytes a tool manifest may have.
pub const MAX_MANIFEST_BYTES: u64 = 1024 * 1024;
/// The most bytes of program text read at once (a script, standard
/// input, a REPL prelude or `:load` file).
pub const MAX_PROGRAM_BYTES: u64 = 4 * 1024 * 1024;

/// The most bytes of a chat history read at once: `ptc compact`'s input,
/// a `script:` file or a transcript read back.
pub const MAX_HISTORY_BYTES: u64 = 64 * 1024 * 1024;

/// Why an input could not be read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The input is larger than its limit (nothing past the limit was
    /// read).
    #[error("{} ({})", .0.message(), .0.code())]
    TooLarge(Error),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("it is not UTF-8 text")]
    NotUtf8,
}

/// Read at most `limit` bytes of `reader`; one byte more is an error
/// naming `what` (e.g. "the data file `x.json`") and `limit_name` (the
/// limit's name, or the flag that raises it).
pub fn read_bytes(
    reader: impl Read,
    limit: u64,
    what: &str,
    limit_name: &str,
) -> Result<Vec<u8>, InputError> {
    read_bytes_sized(reader, 0, limit, what, limit_name)
}

/// [`read_bytes`] into a buffer made for `expected` bytes (a file's size),
/// so a large file is read without growing and copying the buffer.
fn read_bytes_sized(
    reader: impl Read,
    expected: u64,
    limit: u64,
    what: &str,
    limit_name: &str,
) -> Result<Vec<u8>, InputError> {
    // One byte past the limit tells a file that is too large; one past the
    // expected size lets the final read see the end without a regrowth.
    let capacity = expected.min(limit).saturating_add(1);
    let mut bytes = Vec::with_capacity(usize::try_from(capacity).unwrap_or(0));
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(InputError::TooLarge(too_large(what, limit, limit_name)));
    }
    Ok(bytes)
}

/// [`read_bytes`] as UTF-8 text.
pub fn read_text(
    reader: impl Read,
    limit: u64,
    what: &str,
    limit_name: &str,
) -> Result<String, InputError> {
    String::from_utf8(read_bytes(reader, limit, what, limit_name)?).map_err(|_| InputError::NotUtf8)
}

/// [`read_bytes`] of a file.
pub fn read_file(
    path: &Path,
    limit: u64,
    what: &str,
    limit_name: &str,
) -> Result<Vec<u8>, InputError> {
    let file = std::fs::File::open(path)?;
    let expected = file.metadata().map(|m| m.len()).unwrap_or(0);
    read_bytes_sized(file, expected, limit, what, limit_name)
}

/// [`read_text`] of a file.
pub fn read_file_text(
    path: &Path,
    limit: u64,
    what: &str,
    limit_name: &str,
) -> Result<String, InputError> {
    String::from_utf8(read_file(path, limit, what, limit_name)?).map_err(|_| InputError::NotUtf8)
}

/// A program file read with [`MAX_PROGRAM_BYTES`].
pub fn read_program_file(path: &Path) -> Result<String, InputError> {
    read_file_text(
        path,
        MAX_PROGRAM_BYTES,
        &format!("the program `{}`", path.display()),
        "for program text",
    )
}

impl InputError {
    /// `cannot read {what}: {reason}`, or for an input over its limit the
    /// message naming the limit (with the error code).
    pub fn describe(&self, what: &str) -> String {
        match self {
            InputError::TooLarge(_) => self.to_string(),
            other => format!("cannot read {what}: {other}"),
        }
    }
}

/// The error for an input over its limit.
pub fn too_large(what: &str, limit: u64, limit_name: &str) -> Error {
    // The size in larger units too, when it has one (not "12 bytes (12 bytes)").
    let size = match human_bytes(limit) {
        human if limit < 1024 => human,
        human => format!("{limit} bytes ({human})"),
    };
    Error::new(
        ErrorKind::InputLimit,
        format!("{what} is larger than the limit of {size} {limit_name}"),
    )
}

/// `64 MiB`, `1.5 KiB`, `12 bytes`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (unit, size) in UNITS {
        if n >= size {
            return if n.is_multiple_of(size) {
                format!("{} {unit}", n / size)
            } else {
                format!("{:.1} {unit}", n as f64 / size as f64)
            };
        }
    }
    format!("{n} bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_stop_one_byte_past_the_limit() {
        let endless = std::io::repeat(b'x');
        let err = read_bytes(endless, 1024, "the input", "for tests").unwrap_err();
        match err {
            InputError::TooLarge(e) => {
                assert_eq!(e.kind(), ErrorKind::InputLimit);
                assert_eq!(
                    e.message(),
                    "the input is larger than the limit of 1024 bytes (1 KiB) for tests"
                );
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(read_bytes(&b"abc"[..], 3, "x", "y").unwrap(), b"abc");
        let small = too_large("the input", 1000, "for tests");
        assert_eq!(
            small.message(),
            "the input is larger than the limit of 1000 bytes for tests"
        );
    }

    #[test]
    fn sizes_read_well() {
        assert_eq!(human_bytes(64 << 20), "64 MiB");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(12), "12 bytes");
    }
}
