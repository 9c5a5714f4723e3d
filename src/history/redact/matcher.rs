//! A fancy regex (look-around) made fast: a plain regex without the
//! look-arounds finds where a match may start, and the fancy regex is
//! tried only there, anchored.
//!
//! Dropping a look-around (or an atomic group) only relaxes a pattern, so
//! every match of the fancy regex at position `p` is a match of the plain
//! one at `p` as well; the positions the plain regex skips cannot start a
//! match. The result is the fancy regex's own leftmost-first matches, at
//! the cost of a linear scan instead of a backtracking attempt at every
//! position of the text.

use fancy_regex::{Assertion, Expr, Regex};

/// A match: its range and the range of its first capture group, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Found {
    pub start: usize,
    pub end: usize,
    pub group: Option<(usize, usize)>,
}

impl Found {
    /// The match of `caps`, unless it is empty.
    fn non_empty(caps: &fancy_regex::Captures<'_>) -> Option<Found> {
        let whole = caps.get(0).expect("group 0");
        (whole.end() > whole.start()).then(|| Found {
            start: whole.start(),
            end: whole.end(),
            group: caps.get(1).map(|g| (g.start(), g.end())),
        })
    }
}

#[derive(Debug, Clone)]
pub(super) struct Matcher {
    /// Where a match may start (`None`: the pattern has a construct the
    /// plain engine lacks, such as a back-reference; every position is
    /// tried).
    candidates: Option<regex::Regex>,
    /// The pattern, anchored at the position it is tried at (`\G`).
    anchored: Regex,
    /// The pattern itself, for the search when there are no candidates
    /// (compiled only then: compiling is most of what a pattern costs).
    unanchored: Option<Regex>,
}

impl Matcher {
    pub fn new(source: &str) -> Result<Matcher, fancy_regex::Error> {
        // The pattern alone must parse: `a)(b` is no pattern, though
        // `\G(?:a)(b)` would be.
        let tree = Expr::parse_tree(source)?;
        let anchored = Regex::new(&format!(r"\G(?:{source})"))?;
        let candidates = relaxed(&tree.expr).and_then(|plain| regex::Regex::new(&plain).ok());
        let unanchored = match candidates {
            Some(_) => None,
            None => Some(Regex::new(source)?),
        };
        Ok(Matcher {
            candidates,
            anchored,
            unanchored,
        })
    }

    /// The leftmost non-empty match starting at or after `from`. A match
    /// the engine gives up on (its backtracking limit) counts as a match
    /// of the candidate's extent: redaction errs on the side of removing.
    pub fn find_from(&self, text: &str, mut from: usize) -> Option<Found> {
        let Some(candidates) = &self.candidates else {
            return self.search(text, from);
        };
        while from <= text.len() {
            let candidate = candidates.find_at(text, from)?;
            let start = candidate.start();
            match self.anchored.captures_from_pos(text, start) {
                Ok(Some(caps)) => {
                    if let Some(found) = Found::non_empty(&caps) {
                        return Some(found);
                    }
                }
                Ok(None) => {}
                Err(_) if candidate.end() > start => {
                    return Some(Found {
                        start,
                        end: candidate.end(),
                        group: None,
                    })
                }
                Err(_) => {}
            }
            from = next_char(text, start);
        }
        None
    }

    /// The same search without candidates: the fancy engine's own scan.
    fn search(&self, text: &str, mut from: usize) -> Option<Found> {
        let unanchored = self.unanchored.as_ref()?;
        while from <= text.len() {
            let caps = unanchored.captures_from_pos(text, from).ok()??;
            if let Some(found) = Found::non_empty(&caps) {
                return Some(found);
            }
            from = next_char(text, caps.get(0).expect("group 0").start());
        }
        None
    }
}

/// The index after the character at `i` (past the end when `i` is).
fn next_char(text: &str, i: usize) -> usize {
    text[i..].chars().next().map_or(i + 1, |c| i + c.len_utf8())
}

/// `expr` without its look-arounds and atomic groups, as a pattern for
/// the `regex` crate; `None` for what that crate cannot express.
fn relaxed(expr: &Expr) -> Option<String> {
    let mut out = String::new();
    write_relaxed(expr, &mut out)?;
    Some(out)
}

fn write_relaxed(expr: &Expr, out: &mut String) -> Option<()> {
    match expr {
        Expr::Empty | Expr::LookAround(..) => {}
        Expr::Any { newline: true } => out.push_str("(?s:.)"),
        Expr::Any { newline: false } => out.push('.'),
        Expr::Assertion(a) => out.push_str(assertion(*a)),
        Expr::Literal { val, casei } => {
            out.push_str(if *casei { "(?i:" } else { "(?:" });
            out.push_str(&regex::escape(val));
            out.push(')');
        }
        Expr::Concat(children) => {
            out.push_str("(?:");
            for child in children {
                write_relaxed(child, out)?;
            }
            out.push(')');
        }
        Expr::Alt(children) => {
            out.push_str("(?:");
            for (i, child) in children.iter().enumerate() {
                if i > 0 {
                    out.push('|');
                }
                write_relaxed(child, out)?;
            }
            out.push(')');
        }
        Expr::Group(child) | Expr::AtomicGroup(child) => {
            out.push_str("(?:");
            write_relaxed(child, out)?;
            out.push(')');
        }
        Expr::Repeat {
            child,
            lo,
            hi,
            greedy,
        } => {
            out.push_str("(?:");
            write_relaxed(child, out)?;
            out.push(')');
            match *hi {
                usize::MAX => out.push_str(&format!("{{{lo},}}")),
                hi => out.push_str(&format!("{{{lo},{hi}}}")),
            }
            if !greedy {
                out.push('?');
            }
        }
        Expr::Delegate { inner, casei, .. } => {
            out.push_str(if *casei { "(?i:" } else { "(?:" });
            out.push_str(inner);
            out.push(')');
        }
        _ => return None,
    }
    Some(())
}

fn assertion(a: Assertion) -> &'static str {
    match a {
        Assertion::StartText => r"\A",
        Assertion::EndText => r"\z",
        Assertion::StartLine { crlf: false } => "(?m:^)",
        Assertion::EndLine { crlf: false } => "(?m:$)",
        Assertion::StartLine { crlf: true } => "(?Rm:^)",
        Assertion::EndLine { crlf: true } => "(?Rm:$)",
        Assertion::WordBoundary => r"\b",
        Assertion::NotWordBoundary => r"\B",
        Assertion::LeftWordBoundary => r"\b{start}",
        Assertion::RightWordBoundary => r"\b{end}",
        Assertion::LeftWordHalfBoundary => r"\b{start-half}",
        Assertion::RightWordHalfBoundary => r"\b{end-half}",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(m: &Matcher, text: &str) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut from = 0;
        while let Some(f) = m.find_from(text, from) {
            out.push((f.start, f.end));
            from = f.end;
        }
        out
    }

    fn reference(source: &str, text: &str) -> Vec<(usize, usize)> {
        Regex::new(source)
            .unwrap()
            .find_iter(text)
            .map(|m| m.unwrap())
            .filter(|m| m.end() > m.start())
            .map(|m| (m.start(), m.end()))
            .collect()
    }

    #[test]
    fn matches_are_the_fancy_engines_own() {
        let cases = [
            (
                r"(?<![\w\-])sk-[a-z0-9]{4,}",
                "sk-abcd x-sk-abcd (sk-12345) sk-ab",
            ),
            (
                r"(?i)\btoken\s*[:=]\s*(?!<R>)\S{3,}",
                "token = <R> TOKEN: abc token=xy token:abcd",
            ),
            (
                r"(bearer\s+)(?=\S*[0-9])\S{6,}(?![:=])",
                "bearer abcdefg1 bearer abcdef1: bearer 1abcdef",
            ),
            (r"(?>a+)b|ac", "aaab aac ac"),
            (r"é+(?=x)", "ééx éé éx"),
        ];
        for (source, text) in cases {
            let m = Matcher::new(source).unwrap();
            assert!(m.candidates.is_some(), "{source} has candidates");
            assert_eq!(all(&m, text), reference(source, text), "{source}");
        }
    }

    #[test]
    fn back_references_fall_back_to_the_fancy_scan() {
        let m = Matcher::new(r"(\w)\1").unwrap();
        assert!(m.candidates.is_none());
        assert_eq!(all(&m, "abba cc"), vec![(1, 3), (5, 7)]);
    }

    #[test]
    fn empty_matches_are_skipped() {
        let m = Matcher::new(r"x*").unwrap();
        assert_eq!(all(&m, "ab xx c"), vec![(3, 5)]);
    }
}
