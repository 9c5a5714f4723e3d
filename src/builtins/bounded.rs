//! Strings built under the size limit: every piece is measured before it
//! is appended, so a long separator, replacement or escape can never
//! make a builtin allocate far past the limit before checking it.

use crate::error::{Error, ErrorKind};
use crate::eval::Interp;
use crate::value::Value;

/// The memory error for a string or collection of `len` items (bytes for
/// strings) over the limit of `max`.
pub(crate) fn size_error(len: usize, max: usize) -> Error {
    Error::new(
        ErrorKind::MemoryLimit,
        format!("A value grew to {len} items or characters, over the limit of {max}"),
    )
}

/// A string that refuses to grow past the collection-size limit.
pub(crate) struct Text {
    out: String,
    max: usize,
}

impl Text {
    /// An empty text under `interp`'s limit, with room for `hint` bytes
    /// (capped by the limit).
    pub(crate) fn new(interp: &Interp<'_>, hint: usize) -> Text {
        let max = interp.limits.max_collection;
        Text {
            out: String::with_capacity(hint.min(max)),
            max,
        }
    }

    /// Fail unless `more` bytes still fit.
    pub(crate) fn reserve(&self, more: usize) -> Result<(), Error> {
        let len = self.out.len().saturating_add(more);
        if len > self.max {
            return Err(size_error(len, self.max));
        }
        Ok(())
    }

    pub(crate) fn push_str(&mut self, s: &str) -> Result<(), Error> {
        self.reserve(s.len())?;
        self.out.push_str(s);
        Ok(())
    }

    pub(crate) fn push(&mut self, c: char) -> Result<(), Error> {
        self.reserve(c.len_utf8())?;
        self.out.push(c);
        Ok(())
    }

    /// Append `v` as `str` shows it; a value whose text would cross the
    /// limit is cut one byte past it and refused.
    pub(crate) fn push_value(&mut self, v: &Value) -> Result<(), Error> {
        if let Some(s) = v.as_str() {
            return self.push_str(s);
        }
        let limit = self.max.saturating_add(1);
        crate::value::write_str_bounded(&mut self.out, v, limit);
        self.reserve(0)
    }

    /// Bytes that may still be appended.
    pub(crate) fn room(&self) -> usize {
        self.max.saturating_sub(self.out.len())
    }

    /// The memory error for appending `more` bytes.
    pub(crate) fn over(&self, more: usize) -> Error {
        size_error(self.out.len().saturating_add(more), self.max)
    }

    /// The bytes held so far.
    pub(crate) fn len(&self) -> usize {
        self.out.len()
    }

    pub(crate) fn into_string(self) -> String {
        self.out
    }
}
