//! The first match of a linear pattern in one pass over it: candidates
//! from the pattern's literal prefixes, each tried by a one-pass DFA
//! anchored there.
//!
//! The regex crate finds a match with groups in three passes: a forward
//! DFA to where the match ends, a reverse DFA back to where it starts, and
//! a one-pass DFA (or a slower engine) over that span for the groups. When
//! every match of a pattern starts with one of a few literals (`\[` in
//! `\[(\w+)\] ...`) and the pattern is one-pass, the candidates where a
//! match can start are found by `memchr`-like search, and the one-pass DFA
//! run from each in turn finds the match and its groups at once. The first
//! candidate that matches holds the leftmost match, and the one-pass DFA
//! gives the same match there as the regex crate (leftmost-first), so the
//! result is the same. After a few candidates that do not match, the
//! caller goes back to the regex crate, so a text full of near misses
//! costs at most a few passes more, never a quadratic search.

use std::sync::Arc;

use regex_automata::dfa::onepass;
use regex_automata::nfa::thompson;
use regex_automata::util::pool::Pool;
use regex_automata::util::prefilter::Prefilter;
use regex_automata::util::primitives::NonMaxUsize;
use regex_automata::{Anchored, Input, MatchKind, Span};
use regex_syntax::hir::Hir;

/// Candidates tried before the search goes back to the regex crate.
const MAX_MISSES: usize = 8;

/// Most memory the NFA and the one-pass DFA of a pattern on this path
/// may take, each. Compiled patterns are kept for the process (up to 256
/// of them), so this bounds what the path adds to each. A Unicode class
/// (`\p{L}`, a Unicode `\w`) takes about 0.3 MB; a pattern that needs
/// more than this is searched by the regex crate alone.
const SIZE_LIMIT: usize = 1024 * 1024;

/// Most groups (the whole match included) a pattern on this path has:
/// their positions are kept on the stack.
const MAX_GROUPS: usize = 16;

type NewCache = Box<dyn Fn() -> onepass::Cache + Send + Sync>;

/// A pattern's one-pass DFA and the prefilter for where its matches start.
pub(crate) struct Direct {
    dfa: Arc<onepass::DFA>,
    starts: Prefilter,
    caches: Pool<onepass::Cache, NewCache>,
    groups: usize,
}

impl std::fmt::Debug for Direct {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Direct")
            .field("groups", &self.groups)
            .finish_non_exhaustive()
    }
}

/// Where the first match found by [`Direct::first`] and its groups are.
pub(crate) struct Found {
    slots: [Option<NonMaxUsize>; 2 * MAX_GROUPS],
    groups: usize,
}

impl Default for Found {
    fn default() -> Self {
        Found {
            slots: [None; 2 * MAX_GROUPS],
            groups: 0,
        }
    }
}

impl Found {
    /// The number of groups, the whole match (group 0) included.
    pub(crate) fn len(&self) -> usize {
        self.groups
    }

    /// Where group `i` matched, when it took part.
    pub(crate) fn group(&self, i: usize) -> Option<std::ops::Range<usize>> {
        let start = self.slots.get(2 * i).copied().flatten()?;
        let end = self.slots.get(2 * i + 1).copied().flatten()?;
        Some(start.get()..end.get())
    }
}

/// What a search on this path came to.
pub(crate) enum Outcome {
    /// The match is in the `Found` given.
    Match,
    NoMatch,
    /// Too many candidates did not match: the regex crate is to search.
    GaveUp,
}

impl Direct {
    /// The direct path for a pattern (parsed by regex-syntax with its
    /// default settings, as the regex crate parses it), when it has one:
    /// the pattern is one-pass, has at most [`MAX_GROUPS`] groups, and
    /// each of its matches starts with one of a set of literals that a
    /// fast prefilter finds, and its compiled forms keep within
    /// [`SIZE_LIMIT`].
    pub(crate) fn build(hir: &Hir) -> Option<Direct> {
        let starts = Prefilter::from_hir_prefix(MatchKind::LeftmostFirst, hir)?;
        if !starts.is_fast() {
            return None;
        }
        let dfa = onepass::DFA::builder()
            .configure(onepass::Config::new().size_limit(Some(SIZE_LIMIT)))
            .build_from_nfa(
                thompson::Compiler::new()
                    .configure(thompson::Config::new().nfa_size_limit(Some(SIZE_LIMIT)))
                    .build_from_hir(hir)
                    .ok()?,
            )
            .ok()?;
        let groups = dfa
            .get_nfa()
            .group_info()
            .group_len(regex_automata::PatternID::ZERO);
        if groups > MAX_GROUPS || dfa.get_nfa().pattern_len() != 1 {
            return None;
        }
        let dfa = Arc::new(dfa);
        let for_caches = Arc::clone(&dfa);
        Some(Direct {
            dfa,
            starts,
            caches: Pool::new(Box::new(move || for_caches.create_cache())),
            groups,
        })
    }

    /// The first match in `text` that starts at or after `from`, put in
    /// `found`.
    pub(crate) fn first(&self, text: &str, from: usize, found: &mut Found) -> Outcome {
        found.groups = self.groups;
        let slots = &mut found.slots[..2 * self.groups];
        let mut cache = self.caches.get();
        let mut at = from;
        for _ in 0..MAX_MISSES {
            if at > text.len() {
                return Outcome::NoMatch;
            }
            let Some(candidate) = self
                .starts
                .find(text.as_bytes(), Span::from(at..text.len()))
            else {
                return Outcome::NoMatch;
            };
            let input = Input::new(text)
                .span(candidate.start..text.len())
                .anchored(Anchored::Yes);
            match self.dfa.try_search_slots(&mut cache, &input, slots) {
                Ok(Some(_)) => return Outcome::Match,
                Ok(None) => at = candidate.start + 1,
                Err(_) => return Outcome::GaveUp,
            }
        }
        Outcome::GaveUp
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(pattern: &str) -> Option<Direct> {
        Direct::build(&regex_syntax::Parser::new().parse(pattern).ok()?)
    }

    fn groups(direct: &Direct, text: &str) -> Option<Vec<Option<String>>> {
        let mut found = Found::default();
        match direct.first(text, 0, &mut found) {
            Outcome::Match => Some(
                (0..found.len())
                    .map(|i| found.group(i).map(|r| text[r].to_string()))
                    .collect(),
            ),
            Outcome::NoMatch => None,
            Outcome::GaveUp => panic!("gave up on {text:?}"),
        }
    }

    #[test]
    fn a_pattern_with_a_literal_start_finds_its_first_match_and_groups() {
        let direct = build(r"\[([a-z]+)\] n=([0-9]+)(x)?").expect("direct");
        assert_eq!(
            groups(&direct, "t [no] then [ab] n=12 [cd] n=3x"),
            Some(vec![
                Some("[ab] n=12".to_string()),
                Some("ab".to_string()),
                Some("12".to_string()),
                None
            ])
        );
        assert_eq!(groups(&direct, "[ab] n=x"), None);
        assert_eq!(groups(&direct, ""), None);
    }

    /// A small deterministic generator (xorshift): a number below `n`.
    fn pick(x: &mut u64, n: usize) -> usize {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        (*x % n as u64) as usize
    }

    /// A pattern of a literal start and a few pieces: classes, groups,
    /// repetitions, alternations and assertions over a small alphabet.
    fn pattern(x: &mut u64) -> String {
        const STARTS: [&str; 6] = [r"\[", "a", "ab", "(b|=)", r"\bab", "^a"];
        const PIECES: [&str; 16] = [
            "a",
            "b",
            "=",
            r"\]",
            r"\d",
            "[ab]",
            r"[^\]]",
            "(a)",
            "(b+)",
            "(=|0)",
            "(a)?",
            r"\d+",
            "b*",
            r"\b",
            "$",
            "(?:ab|ba)",
        ];
        let mut p = STARTS[pick(x, STARTS.len())].to_string();
        for _ in 0..pick(x, 6) {
            p.push_str(PIECES[pick(x, PIECES.len())]);
        }
        p
    }

    fn text(x: &mut u64) -> String {
        const CHARS: [char; 8] = ['a', 'b', '[', ']', '=', '0', '7', ' '];
        (0..pick(x, 40))
            .map(|_| CHARS[pick(x, CHARS.len())])
            .collect()
    }

    #[test]
    fn the_first_match_and_its_groups_are_the_regex_crates() {
        let mut x = 0x2545_f491_4f6c_dd1d;
        let (mut direct_patterns, mut matches) = (0, 0);
        for _ in 0..1500 {
            let p = pattern(&mut x);
            let oracle = regex::Regex::new(&p).expect("valid pattern");
            let Some(direct) = build(&p) else {
                continue;
            };
            direct_patterns += 1;
            for _ in 0..20 {
                let t = text(&mut x);
                let from = pick(&mut x, t.len() + 1);
                let expected = oracle.captures_at(&t, from).map(|caps| {
                    (0..caps.len())
                        .map(|i| caps.get(i).map(|m| m.range()))
                        .collect::<Vec<_>>()
                });
                let mut found = Found::default();
                let got = match direct.first(&t, from, &mut found) {
                    Outcome::Match => Some((0..found.len()).map(|i| found.group(i)).collect()),
                    Outcome::NoMatch => None,
                    Outcome::GaveUp => continue,
                };
                matches += usize::from(got.is_some());
                assert_eq!(got, expected, "{p:?} on {t:?} from {from}");
            }
        }
        assert!(
            direct_patterns > 500 && matches > 1000,
            "{direct_patterns} {matches}"
        );
    }

    #[test]
    fn patterns_without_a_literal_start_or_not_one_pass_have_no_direct_path() {
        for pattern in [r"a*", r"\w+x", r"(a|b)*a", r".*z", r"x\w*\w"] {
            assert!(build(pattern).is_none(), "{pattern}");
        }
    }

    #[test]
    fn a_pattern_whose_compiled_forms_are_over_the_limit_has_no_direct_path() {
        // A one-pass DFA of about 0.3 MB, and one of about 16 MB.
        assert!(build(r"\[(\p{L}+)\]").is_some());
        assert!(build(r"x\w{50}").is_none());
    }

    #[test]
    fn many_near_misses_send_the_search_back_to_the_regex_crate() {
        let direct = build(r"\[(\w+)\]=1").expect("direct");
        let text = "[a]=2 ".repeat(MAX_MISSES) + "[z]=1";
        assert!(matches!(
            direct.first(&text, 0, &mut Found::default()),
            Outcome::GaveUp
        ));
        let near = "[a]=2 ".repeat(MAX_MISSES - 1) + "[z]=1";
        assert_eq!(
            groups(&direct, &near),
            Some(vec![Some("[z]=1".to_string()), Some("z".to_string())])
        );
    }
}
