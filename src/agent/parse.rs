//! Finding the PTC-Lisp program in a model's reply.
//!
//! The rules, in order:
//!
//! 1. **Fenced blocks.** Markdown code fences (three or more backticks or
//!    tildes) tagged `clojure`, `clj`, `lisp`, `ptc` or `ptc-lisp` (any
//!    case), or with no tag, are eligible; blocks tagged with another
//!    language (```` ```json ````, ```` ```python ````, ...) are ignored.
//!    When a reply holds several eligible blocks, all of them are
//!    concatenated in order, separated by a newline, and run as one
//!    program: models often put definitions in one block and their use in
//!    the next, and running everything is deterministic and loses nothing.
//!    A fence that is never closed runs to the end of the reply (a reply
//!    cut off by the token limit still yields its code). Blocks with only
//!    whitespace do not count.
//! 2. **Bare code.** Failing that, a reply that starts with `(` and reads
//!    completely as PTC-Lisp forms is taken whole, provided every form but
//!    the last is a list. Prose that follows code often reads as symbols
//!    (`(+ 1 2) is the answer` is a list and four symbols), while a bare
//!    symbol or literal before the last form does nothing in a program, so
//!    a model writing code does not put one there.
//! 3. Otherwise the reply holds no program ([`extract_program`] returns
//!    `None`), and the loop should answer with [`NO_CODE_INSTRUCTION`].
//!
//! Fenced code is not checked with the reader: a syntax error in it is
//! reported back to the model like any other error. This module does no
//! I/O.

use serde::{Deserialize, Serialize};

use crate::reader::FormKind;

/// The fence tags whose blocks hold PTC-Lisp (compared case-insensitively;
/// an untagged fence counts too).
pub const PROGRAM_TAGS: [&str; 5] = ["clojure", "clj", "lisp", "ptc", "ptc-lisp"];

/// What to tell the model when its reply held no program.
pub const NO_CODE_INSTRUCTION: &str = "Your reply contained no PTC-Lisp program. \
Reply with one ```clojure code block holding the program to run next; \
call (return value) when the task is done.";

/// Which rule found the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExtractionRule {
    /// One or more fenced code blocks.
    Fenced,
    /// The whole reply was code.
    Bare,
}

impl ExtractionRule {
    pub fn as_str(self) -> &'static str {
        match self {
            ExtractionRule::Fenced => "fenced",
            ExtractionRule::Bare => "bare",
        }
    }
}

/// A program found in a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtractedProgram {
    /// The program text to run.
    pub source: String,
    pub rule: ExtractionRule,
    /// How many fenced blocks were joined (0 for bare code).
    pub blocks: usize,
}

/// Find the program in `reply` (see the module docs for the rules).
///
/// ```
/// use ptc_lisp::agent::parse::{extract_program, ExtractionRule};
///
/// let reply = "First the helper:\n```clojure\n(defn sq [x] (* x x))\n```\n\
///              Then:\n```clj\n(sq 4)\n```\n```json\n{\"not\": \"code\"}\n```";
/// let p = extract_program(reply).unwrap();
/// assert_eq!(p.source, "(defn sq [x] (* x x))\n(sq 4)");
/// assert_eq!((p.rule, p.blocks), (ExtractionRule::Fenced, 2));
///
/// assert_eq!(extract_program("(+ 1 2)").unwrap().rule, ExtractionRule::Bare);
/// assert!(extract_program("I am not sure what to do.").is_none());
/// ```
pub fn extract_program(reply: &str) -> Option<ExtractedProgram> {
    let blocks: Vec<String> = fenced_blocks(reply)
        .into_iter()
        .filter(|b| is_program_tag(&b.tag) && !b.body.trim().is_empty())
        .map(|b| b.body)
        .collect();
    if !blocks.is_empty() {
        return Some(ExtractedProgram {
            source: blocks.join("\n"),
            rule: ExtractionRule::Fenced,
            blocks: blocks.len(),
        });
    }
    let trimmed = reply.trim();
    if trimmed.starts_with('(') && reads_as_code(trimmed) {
        return Some(ExtractedProgram {
            source: trimmed.to_string(),
            rule: ExtractionRule::Bare,
            blocks: 0,
        });
    }
    None
}

/// True when `text` reads as forms, all but the last of them lists.
fn reads_as_code(text: &str) -> bool {
    match crate::reader::read_program(text) {
        Ok(forms) => match forms.split_last() {
            Some((_, init)) => init.iter().all(|f| matches!(f.kind, FormKind::List(_))),
            None => false,
        },
        Err(_) => false,
    }
}

fn is_program_tag(tag: &str) -> bool {
    tag.is_empty() || PROGRAM_TAGS.iter().any(|t| t.eq_ignore_ascii_case(tag))
}

/// A fenced block: its tag (the first word of the info string) and body.
#[derive(Debug, PartialEq)]
struct Block {
    tag: String,
    body: String,
}

/// An opening fence: its character, length and tag. Per CommonMark, the
/// info string of a backtick fence may not contain a backtick.
fn opening_fence(line: &str) -> Option<(char, usize, String)> {
    let text = line.trim_start();
    let ch = text.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = text.chars().take_while(|c| *c == ch).count();
    if len < 3 {
        return None;
    }
    let info = text[len..].trim();
    if ch == '`' && info.contains('`') {
        return None;
    }
    let tag = info.split_whitespace().next().unwrap_or("");
    Some((ch, len, tag.to_string()))
}

fn is_closing_fence(line: &str, ch: char, len: usize) -> bool {
    let text = line.trim();
    text.chars().count() >= len && text.chars().all(|c| c == ch)
}

fn fenced_blocks(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some((ch, len, tag)) = opening_fence(line) else {
            continue;
        };
        let mut body: Vec<&str> = Vec::new();
        for inner in lines.by_ref() {
            if is_closing_fence(inner, ch, len) {
                break;
            }
            body.push(inner);
        }
        blocks.push(Block {
            tag,
            body: body.join("\n"),
        });
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_need_three_marks_and_matching_close() {
        let blocks = fenced_blocks("``x``\n````clj\n```\n(inc 1)\n````\n~~~\n(dec 1)\n~~~");
        assert_eq!(
            blocks,
            vec![
                Block {
                    tag: "clj".into(),
                    body: "```\n(inc 1)".into()
                },
                Block {
                    tag: "".into(),
                    body: "(dec 1)".into()
                },
            ]
        );
    }

    #[test]
    fn info_strings_keep_only_the_first_word() {
        let blocks = fenced_blocks("```Clojure title=x\n(+ 1)\n```");
        assert_eq!(blocks[0].tag, "Clojure");
        assert!(is_program_tag(&blocks[0].tag));
    }
}
