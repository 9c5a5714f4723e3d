//! How deep a YAML text nests, found by a linear scan before it is
//! parsed: the YAML parser behind figment (libyaml, through serde_yaml)
//! reads a whole document before its recursion limit applies, and takes
//! time quadratic in the depth of flow collections (`[[[[...`: 20,000
//! levels took 7 s), so a configuration nested past
//! [`MAX_CONFIG_DEPTH`](super::config::MAX_CONFIG_DEPTH) is refused here,
//! in one pass.
//!
//! The scan follows YAML's tokens only as far as depth needs: block
//! indentation, `-` and `?` indicators, flow brackets, quoted scalars
//! (recognized only where a scalar may start, as YAML does), block
//! scalars and comments. Where it is unsure it counts a level too many,
//! never one too few: a bracket inside a plain scalar of block context is
//! counted, which only a scalar with dozens of unbalanced brackets would
//! notice. This module does no I/O.

/// The first place where `text` nests deeper than `max` levels, as a
/// 1-based line and column; `None` when it never does.
pub(crate) fn too_deep(text: &str, max: usize) -> Option<(usize, usize)> {
    Scan::new(max).run(text)
}

/// What the scanner is inside of, across lines.
#[derive(Clone, Copy, PartialEq)]
enum Inside {
    Nothing,
    /// A `"` scalar.
    Double,
    /// A `'` scalar.
    Single,
    /// A block scalar (`|`, `>`) under a line indented this much; its
    /// content's indentation once its first line is seen.
    Block(usize, Option<usize>),
}

struct Scan {
    max: usize,
    /// The indentation of each open block node.
    indents: Vec<usize>,
    /// Open `[` and `{`.
    flow: usize,
    inside: Inside,
    /// Whether a scalar may start here (after an indicator, a key's `:`,
    /// a `,` in flow): only there does a quote open a quoted scalar.
    value_start: bool,
    /// The indentation of the line a plain scalar of block context began
    /// on, while it may go on: a line indented more continues it as text.
    plain: Option<usize>,
}

impl Scan {
    fn new(max: usize) -> Scan {
        Scan {
            max,
            indents: Vec::new(),
            flow: 0,
            inside: Inside::Nothing,
            value_start: true,
            plain: None,
        }
    }

    fn run(&mut self, text: &str) -> Option<(usize, usize)> {
        for (i, line) in text.lines().enumerate() {
            if let Some(column) = self.line(line) {
                return Some((i + 1, column + 1));
            }
        }
        None
    }

    /// Scan one line; the 0-based column where the depth is exceeded.
    fn line(&mut self, line: &str) -> Option<usize> {
        let bytes = line.as_bytes();
        let indent = bytes.iter().take_while(|&&b| b == b' ').count();
        let blank = indent == bytes.len() || bytes[indent] == b'#';
        if let Inside::Block(parent, content) = self.inside {
            if blank {
                return None;
            }
            let content = content.unwrap_or(indent);
            if indent > parent && indent >= content {
                self.inside = Inside::Block(parent, Some(content));
                return None;
            }
            self.inside = Inside::Nothing;
        }
        let mut block = self.indents.len();
        let mut at = 0;
        if self.inside == Inside::Nothing && self.flow == 0 {
            if blank {
                return None;
            }
            at = indent;
            match self.plain {
                // More text of a plain scalar: no scalar starts here.
                Some(begun) if indent > begun => self.value_start = false,
                _ => {
                    // A line of block context: it closes the nodes indented
                    // as much or more, and opens one of its own.
                    self.plain = None;
                    self.value_start = true;
                    while self.indents.last().is_some_and(|&open| open >= indent) {
                        self.indents.pop();
                    }
                    self.indents.push(indent);
                    block = self.indents.len();
                    if block > self.max {
                        return Some(indent);
                    }
                }
            }
        }
        let mut value_start = self.value_start;
        let result = self.tokens(bytes, at, indent, block, &mut value_start);
        self.value_start = value_start;
        result
    }

    /// Scan `bytes` from `at`: the tokens of one line, `block` levels
    /// deep when it starts.
    fn tokens(
        &mut self,
        bytes: &[u8],
        mut at: usize,
        indent: usize,
        mut block: usize,
        value_start: &mut bool,
    ) -> Option<usize> {
        while at < bytes.len() {
            let b = bytes[at];
            match self.inside {
                Inside::Double => {
                    match b {
                        b'\\' => at += 1,
                        b'"' => self.inside = Inside::Nothing,
                        _ => {}
                    }
                    at += 1;
                    continue;
                }
                Inside::Single => {
                    if b == b'\'' {
                        if bytes.get(at + 1) == Some(&b'\'') {
                            at += 1;
                        } else {
                            self.inside = Inside::Nothing;
                        }
                    }
                    at += 1;
                    continue;
                }
                Inside::Block(..) | Inside::Nothing => {}
            }
            let space_after = bytes.get(at + 1).is_none_or(|c| *c == b' ' || *c == b'\t');
            match b {
                b' ' | b'\t' => {}
                b'#' if at == 0 || matches!(bytes[at - 1], b' ' | b'\t') => return None,
                b'[' | b'{' => {
                    self.flow += 1;
                    if block + self.flow > self.max {
                        return Some(at);
                    }
                    *value_start = true;
                }
                b']' | b'}' => {
                    self.flow = self.flow.saturating_sub(1);
                    *value_start = false;
                }
                b',' if self.flow > 0 => *value_start = true,
                b'-' | b'?' if *value_start && self.flow == 0 && space_after => {
                    // A sequence entry or complex key: one level more.
                    block += 1;
                    if block > self.max {
                        return Some(at);
                    }
                }
                b':' if space_after || self.flow > 0 => {
                    // What came before was a key, not a plain value.
                    if self.flow == 0 {
                        self.plain = None;
                    }
                    *value_start = true;
                }
                b'"' if *value_start => {
                    self.inside = Inside::Double;
                    *value_start = false;
                }
                b'\'' if *value_start => {
                    self.inside = Inside::Single;
                    *value_start = false;
                }
                b'|' | b'>' if *value_start && self.flow == 0 => {
                    self.inside = Inside::Block(indent, None);
                    return None;
                }
                b'&' | b'!' if *value_start => {
                    // An anchor or a tag: the value comes after it.
                    while at + 1 < bytes.len() && !matches!(bytes[at + 1], b' ' | b'\t') {
                        at += 1;
                    }
                }
                _ => {
                    if *value_start && self.flow == 0 && self.plain.is_none() {
                        self.plain = Some(indent);
                    }
                    *value_start = false;
                }
            }
            at += 1;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::too_deep;

    #[test]
    fn flow_brackets_count_across_lines() {
        let deep = format!("a: {}{}", "[".repeat(40), "]".repeat(40));
        assert_eq!(too_deep(&deep, 32), Some((1, 35)));
        assert_eq!(too_deep(&deep, 41), None);
        let lines = format!("a:\n{}", "  [\n".repeat(40));
        assert_eq!(too_deep(&lines, 32).map(|(l, _)| l), Some(32));
        // Unclosed is no safer than closed.
        assert!(too_deep(&"{a: ".repeat(50), 32).is_some());
    }

    #[test]
    fn block_nesting_counts_indentation_and_entries() {
        let keys: String = (0..40)
            .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
            .collect();
        assert_eq!(too_deep(&keys, 32).map(|(l, _)| l), Some(33));
        let dashes = format!("a:\n  {}x\n", "- ".repeat(40));
        assert!(too_deep(&dashes, 32).is_some());
        // Siblings do not add up.
        let flat: String = (0..500)
            .map(|i| format!("k{i}: [1, [2, {{c: 3}}]]\n"))
            .collect();
        assert_eq!(too_deep(&flat, 8), None);
    }

    #[test]
    fn brackets_in_quotes_comments_and_block_scalars_do_not_count() {
        let text = format!(
            "a: \"{0}\"\nb: '{0}'' {0}'\nc: 1 # {0}\nd: |\n  {0}\n\n  {0}\ne: [\"x{0}\", 'y{0}']\n",
            "[".repeat(100)
        );
        assert_eq!(too_deep(&text, 8), None);
        // A quote inside a plain scalar starts nothing.
        let text = format!("a: it's\nb: {}", "[".repeat(40));
        assert!(too_deep(&text, 32).is_some());
        // A block scalar ends at a line indented less than its content.
        let text = format!("a: |\n    text\nb: {}", "[".repeat(40));
        assert!(too_deep(&text, 32).is_some());
    }

    #[test]
    fn a_real_configuration_is_shallow() {
        let text = "max_context_tokens: 8000\npolicy:\n  trigger_pct: 0.8\n  roles_never_prune: [system, developer]\nredaction:\n  patterns:\n    - '(?i)secret-[a-z0-9]{8}'\n    - \"[[:alpha:]]+\"\n";
        assert_eq!(too_deep(text, 6), None);
    }

    proptest::proptest! {
        #[test]
        fn any_text_is_scanned_without_panic(text in "[ a-z:#'\"|>&!,\\[\\]{}\\n-]{0,400}") {
            let _ = too_deep(&text, 4);
        }

        #[test]
        fn flow_nesting_is_found_exactly_past_the_limit(
            depth in 1usize..80,
            max in 2usize..40,
            open in "[\\[{]",
        ) {
            let close = if open == "[" { "]" } else { "}" };
            let text = format!("key: {}{}\n", open.repeat(depth), close.repeat(depth));
            // The key's mapping is one level, each bracket one more.
            proptest::prop_assert_eq!(too_deep(&text, max).is_some(), depth + 1 > max);
        }
    }
}
