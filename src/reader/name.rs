//! The text of a symbol or keyword as read: kept inside the form when it
//! is short, so reading a program and freeing its forms allocate nothing
//! for most names.

use std::fmt;

use crate::value::ShortStr;

/// A symbol's or keyword's text. Equality and hashing read the
/// text, never the form it is kept in.
#[derive(Clone)]
pub struct Name(Repr);

#[derive(Clone)]
enum Repr {
    Short(ShortStr),
    Long(Box<str>),
}

impl Name {
    /// The text.
    #[inline]
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Short(s) => s.as_str(),
            Repr::Long(s) => s,
        }
    }
}

impl From<&str> for Name {
    #[inline]
    fn from(s: &str) -> Name {
        Name(match ShortStr::new(s) {
            Some(short) => Repr::Short(short),
            None => Repr::Long(s.into()),
        })
    }
}

impl From<String> for Name {
    fn from(s: String) -> Name {
        match ShortStr::new(&s) {
            Some(short) => Name(Repr::Short(short)),
            None => Name(Repr::Long(s.into_boxed_str())),
        }
    }
}

impl std::ops::Deref for Name {
    type Target = str;
    #[inline]
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Name {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl std::borrow::Borrow<str> for Name {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for Name {
    fn eq(&self, other: &Name) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Name {}

impl PartialEq<str> for Name {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Name {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl std::hash::Hash for Name {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_long_names_hold_their_text_and_compare_by_it() {
        let short = Name::from("sort-by");
        let long = Name::from("a-rather-long-helper-name");
        assert!(matches!(short.0, Repr::Short(_)));
        assert!(matches!(long.0, Repr::Long(_)));
        assert_eq!(short, "sort-by");
        assert_eq!(long.as_str(), "a-rather-long-helper-name");
        assert_eq!(Name::from(String::from("sort-by")), short);
        assert_eq!(
            format!("{long} {short:?}"),
            "a-rather-long-helper-name \"sort-by\""
        );
        assert_eq!(std::mem::size_of::<Name>(), std::mem::size_of::<String>());
    }
}
