//! Short strings kept inside the value: no allocation, no reference count.
//!
//! Most strings a program makes are short: the parts of a `split`, the
//! groups of a regex match, a status or a category read from JSON. A
//! string of at most [`SHORT_MAX`] bytes is a [`Value::ShortStr`]; making,
//! copying and freeing one touches no heap. Longer strings are a
//! [`Value::Str`], one shared allocation.
//!
//! [`Value::str`] and `Value::from` pick the form. Either form may hold
//! any text (a `Str` of three bytes is still a correct string), and
//! equality, hashing and ordering read the text, never the form; the
//! short form is only the fast one.
//!
//! [`Value::ShortStr`]: super::Value::ShortStr
//! [`Value::Str`]: super::Value::Str
//! [`Value::str`]: super::Value::str

use std::fmt;

/// The longest string kept inside a value, in bytes: a value is 16 bytes,
/// one for its type and one for the length.
pub const SHORT_MAX: usize = 14;

/// The text of a short string: up to [`SHORT_MAX`] bytes of UTF-8.
#[derive(Clone, Copy)]
pub struct ShortStr {
    len: u8,
    /// The text, then zeros: every constructor fills the rest with
    /// zeros, so two short strings are equal when their lengths and
    /// whole arrays are (compared as words, with no call to `memcmp`).
    bytes: [u8; SHORT_MAX],
}

/// `text` (at most [`SHORT_MAX`] bytes) followed by zeros, gathered in a
/// register by two overlapping fixed-size loads: a copy of variable
/// length goes through `memcpy` and writes the array in pieces, which a
/// later whole load of the value then waits for.
#[inline(always)]
fn padded(text: &[u8]) -> [u8; SHORT_MAX] {
    let len = text.len();
    let word = |at: usize| u64::from_le_bytes(text[at..at + 8].try_into().unwrap_or_default());
    let half = |at: usize| u32::from_le_bytes(text[at..at + 4].try_into().unwrap_or_default());
    // The overlapping parts of the two loads hold the same bytes.
    let all: u128 = match len {
        8.. => u128::from(word(0)) | u128::from(word(len - 8)) << (8 * (len - 8)),
        4.. => u128::from(half(0)) | u128::from(half(len - 4)) << (8 * (len - 4)),
        _ => text
            .iter()
            .enumerate()
            .fold(0, |all, (i, &b)| all | u128::from(b) << (8 * i)),
    };
    let mut bytes = [0; SHORT_MAX];
    bytes.copy_from_slice(&all.to_le_bytes()[..SHORT_MAX]);
    bytes
}

impl ShortStr {
    /// The empty string.
    pub const EMPTY: ShortStr = ShortStr {
        len: 0,
        bytes: [0; SHORT_MAX],
    };

    /// `s`, if it is at most [`SHORT_MAX`] bytes long.
    #[inline]
    pub fn new(s: &str) -> Option<ShortStr> {
        let len = s.len();
        if len > SHORT_MAX {
            return None;
        }
        Some(ShortStr {
            // At most `SHORT_MAX`, checked above.
            len: len as u8,
            bytes: padded(s.as_bytes()),
        })
    }

    /// The one-character string `c` (at most four bytes, always short).
    #[inline]
    pub fn from_char(c: char) -> ShortStr {
        let mut bytes = [0; SHORT_MAX];
        let len = c.encode_utf8(&mut bytes).len();
        ShortStr {
            len: len as u8,
            bytes,
        }
    }

    /// The text. The crate has no unsafe code, so the bytes are checked
    /// as UTF-8 again (they always are: they were copied from a `&str`).
    #[inline]
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(self.as_bytes()).unwrap_or_default()
    }

    /// The text's bytes, without the UTF-8 check.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    /// The length in bytes.
    #[inline]
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl PartialEq for ShortStr {
    #[inline]
    fn eq(&self, other: &ShortStr) -> bool {
        self.len == other.len && self.bytes == other.bytes
    }
}

impl Eq for ShortStr {}

impl std::ops::Deref for ShortStr {
    type Target = str;
    #[inline]
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Debug for ShortStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for ShortStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_length_keeps_its_bytes_then_zeros() {
        let source: Vec<u8> = (1..=SHORT_MAX as u8).collect();
        for len in 0..=SHORT_MAX {
            let mut expected = [0; SHORT_MAX];
            expected[..len].copy_from_slice(&source[..len]);
            assert_eq!(padded(&source[..len]), expected, "length {len}");
        }
    }

    #[test]
    fn keeps_text_up_to_the_limit() {
        assert_eq!(ShortStr::new("").map(|s| s.len()), Some(0));
        let limit = "é".repeat(SHORT_MAX / 2);
        assert_eq!(ShortStr::new(&limit).unwrap().as_str(), limit);
        assert!(ShortStr::new(&"x".repeat(SHORT_MAX + 1)).is_none());
        assert_eq!(ShortStr::from_char('😀').as_str(), "😀");
        assert_eq!(ShortStr::new("ab"), ShortStr::new("ab"));
        assert_ne!(ShortStr::new("ab"), ShortStr::new("abc"));
    }

    #[test]
    fn equality_is_the_texts_whatever_made_them() {
        for c in ['a', 'é', '😀', '\0'] {
            assert_eq!(
                ShortStr::from_char(c),
                ShortStr::new(&c.to_string()).unwrap()
            );
        }
        // A text that ends in zero bytes is not a shorter text.
        assert_ne!(ShortStr::new("a\0"), ShortStr::new("a"));
        assert_ne!(ShortStr::new(""), ShortStr::new("\0"));
        assert_eq!(ShortStr::EMPTY, ShortStr::new("").unwrap());
        let longest = "x".repeat(SHORT_MAX);
        assert_eq!(ShortStr::new(&longest), ShortStr::new(&longest));
        assert_ne!(
            ShortStr::new(&longest),
            ShortStr::new(&format!("{}y", &longest[1..]))
        );
    }
}
