//! What one attempt of a backtracking pattern may cost, and the bounds
//! (text searched, backtracking steps) that keep one attempt short.
//!
//! The meter reads the clock between attempts only, so one attempt must
//! end soon on its own. Between two backtracking steps fancy-regex may
//! run forward over the whole text, and a step inside a lookaround that
//! captures runs the linear engine over the text, at a cost in the
//! pattern's size for each byte. One attempt therefore costs up to about
//! `(steps + text) * text * weight`, where the weight is the pattern's
//! size with its counted repetitions written out. The heavier the pattern,
//! the less text and the fewer steps it gets.

use fancy_regex::Expr;

/// Most work one attempt may do, in pattern positions times bytes of
/// text: at most some 20 ms in a release build.
const ATTEMPT_BUDGET: u64 = 100_000_000;
/// Most backtracking steps of one attempt, however small the pattern.
const MAX_BACKTRACK_LIMIT: usize = 10_000;
/// Most bytes a backtracking pattern searches, however small.
pub(super) const MAX_BACKTRACKING_INPUT: usize = 2 * 1024;
/// Heaviest backtracking pattern accepted: at this weight it searches
/// about 220 bytes; a heavier one is refused rather than searched over
/// less.
pub(super) const MAX_WEIGHT: usize = 1024;

/// How far a backtracking pattern searches, and how many steps one
/// attempt may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Bounds {
    /// Bytes of a text searched (its start).
    pub searched: usize,
    /// Backtracking steps one attempt may take.
    pub backtrack_limit: usize,
}

/// The bounds for a pattern of `weight`, or `None` over [`MAX_WEIGHT`].
pub(super) fn bounds(weight: usize) -> Option<Bounds> {
    if weight > MAX_WEIGHT {
        return None;
    }
    let weight = weight.max(1) as u64;
    // Spend the budget evenly on the text and the steps:
    // (steps + text) * text * weight <= budget with steps = text.
    let searched = (ATTEMPT_BUDGET / (2 * weight))
        .isqrt()
        .min(MAX_BACKTRACKING_INPUT as u64);
    let steps = (ATTEMPT_BUDGET / (searched * weight)).saturating_sub(searched);
    Some(Bounds {
        searched: searched as usize,
        backtrack_limit: usize::try_from(steps)
            .unwrap_or(usize::MAX)
            .min(MAX_BACKTRACK_LIMIT),
    })
}

/// The weight of a pattern that fancy-regex accepted: its positions with
/// counted repetitions written out (`a{3}` is 3, `(?:ab){2,5}` is 10, an
/// unbounded `x{2,}` counts `x` three times). `None` if it does not parse.
pub(super) fn weight(pattern: &str) -> Option<usize> {
    Expr::parse_tree(pattern)
        .ok()
        .map(|tree| expr_weight(&tree.expr))
}

fn expr_weight(expr: &Expr) -> usize {
    let sum = |items: &[Expr]| {
        items
            .iter()
            .fold(0usize, |total, e| total.saturating_add(expr_weight(e)))
    };
    match expr {
        Expr::Literal { val, .. } => val.chars().count().max(1),
        Expr::Delegate { inner, casei, .. } => class_weight(inner, *casei),
        Expr::Concat(items) | Expr::Alt(items) => sum(items),
        Expr::Group(inner) | Expr::AtomicGroup(inner) | Expr::LookAround(inner, _) => {
            expr_weight(inner).saturating_add(1)
        }
        Expr::Repeat { child, lo, hi, .. } => {
            let copies = if *hi == usize::MAX {
                lo.saturating_add(1)
            } else {
                *hi
            };
            expr_weight(child).saturating_mul(copies.max(1))
        }
        Expr::Conditional {
            condition,
            true_branch,
            false_branch,
        } => expr_weight(condition)
            .saturating_add(expr_weight(true_branch))
            .saturating_add(expr_weight(false_branch)),
        _ => 1,
    }
}

/// Ranges of a character class that weigh as much as one position: a
/// class is searched by walking its ranges (`\p{L}`, some 650 of them,
/// costs about six times what `.` does).
const RANGES_PER_POSITION: usize = 128;

/// The weight of a piece fancy-regex hands to the linear engine whole (a
/// character class, an escape such as `\p{L}`): one, more for a class
/// of many ranges.
fn class_weight(inner: &str, casei: bool) -> usize {
    use regex_syntax::hir::{Class, HirKind};
    let parsed = regex_syntax::ParserBuilder::new()
        .case_insensitive(casei)
        .build()
        .parse(inner);
    let ranges = match parsed.as_ref().map(|hir| hir.kind()) {
        Ok(HirKind::Class(Class::Unicode(class))) => class.ranges().len(),
        Ok(HirKind::Class(Class::Bytes(class))) => class.ranges().len(),
        _ => 0,
    };
    1 + ranges / RANGES_PER_POSITION
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counted_repetitions_are_written_out() {
        assert_eq!(weight("abc"), Some(3));
        assert_eq!(weight("a{3}"), Some(3));
        assert_eq!(weight("(?:ab){2,5}"), Some(10));
        assert_eq!(weight("x{2,}"), Some(3));
        assert_eq!(weight(".*"), Some(1));
        assert_eq!(weight("(?<=\\$)\\d+"), Some(4));
        assert_eq!(weight("(?:.{0,100}){0,100}"), Some(10_000));
        assert_eq!(weight("(?:(?:.{0,999}){0,999}){0,999}"), Some(997_002_999));
        assert_eq!(weight("(unclosed"), None);
        assert_eq!(weight("[a-z]"), Some(1));
        assert_eq!(weight("\\d+"), Some(2));
        let letters = weight("\\p{L}").unwrap();
        assert!((4..=8).contains(&letters), "{letters}");
        assert_eq!(weight("\\p{L}{10}"), Some(10 * letters));
    }

    #[test]
    fn small_patterns_keep_the_whole_bounds_and_heavier_ones_get_less() {
        let small = bounds(4).unwrap();
        assert_eq!(small.searched, MAX_BACKTRACKING_INPUT);
        assert_eq!(small.backtrack_limit, MAX_BACKTRACK_LIMIT);
        let mut last = small;
        for w in [16, 64, 190, 512, MAX_WEIGHT] {
            let b = bounds(w).unwrap();
            assert!(b.searched <= last.searched && b.backtrack_limit <= last.backtrack_limit);
            let cost = (b.backtrack_limit + b.searched) as u64 * b.searched as u64 * w as u64;
            assert!(cost <= ATTEMPT_BUDGET, "weight {w}: {b:?} costs {cost}");
            assert!(b.searched >= 200 && b.backtrack_limit >= 200, "{w}: {b:?}");
            last = b;
        }
        assert_eq!(bounds(MAX_WEIGHT + 1), None);
    }
}
