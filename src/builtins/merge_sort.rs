//! Stable sorts that stay safe with any comparison and can be stopped.
//!
//! A program's comparator can be inconsistent: `(fn [a b] true)`, an
//! order that is not transitive, or `compare` on NaN, which is equal to
//! every number (as in Clojure). The standard library's sort may panic on
//! such a comparison ("does not correctly implement a total order").
//! [`sort_by`], a merge sort, never does: with any comparison it ends
//! after O(n log n) calls and leaves a permutation of the items, and with
//! a total order it gives the same result as a stable sort.
//!
//! Both sorts tell a `keep_going` callback how many items' worth of work
//! they have done, at most a few milliseconds apart, and stop (leaving
//! the items in some order) when it answers false: the program's meter
//! then ends the run with its time limit. The standard sort itself cannot
//! be stopped part way, so [`sort_total_by`] gives it runs of [`CHUNK`]
//! items and merges them.

use std::cmp::Ordering;

/// Runs of this many items are sorted by insertion before merging.
const RUN: usize = 16;
/// Insertion-sorted runs between two calls of `keep_going`.
const RUNS_PER_CHECK: usize = 64;
/// Items the standard sort takes at once in [`sort_total_by`].
const CHUNK: usize = 1 << 16;

/// Sort `items` stably by `cmp`, any comparison. Items that `cmp` calls
/// equal keep their order.
pub(crate) fn sort_by<T>(
    items: &mut [T],
    mut cmp: impl FnMut(&T, &T) -> Ordering,
    mut keep_going: impl FnMut(usize) -> bool,
) {
    let n = items.len();
    if n < 2 {
        return;
    }
    // Sort positions, then move the items once.
    let mut order: Vec<usize> = (0..n).collect();
    let mut by_position = |a: &usize, b: &usize| cmp(&items[*a], &items[*b]);
    for (i, run) in order.chunks_mut(RUN).enumerate() {
        insertion_sort(run, &mut by_position);
        if (i + 1) % RUNS_PER_CHECK == 0 && !keep_going(RUN * RUNS_PER_CHECK) {
            return;
        }
    }
    if merge_passes(&mut order, RUN, &mut by_position, &mut keep_going) {
        permute(items, &order);
    }
}

/// Sort `items` stably by `cmp`, which must be a total order (the
/// standard library's sort runs it): runs of [`CHUNK`] items by the
/// standard sort, then merged, moving the items themselves.
pub(crate) fn sort_total_by<T: Default>(
    items: &mut [T],
    mut cmp: impl FnMut(&T, &T) -> Ordering,
    mut keep_going: impl FnMut(usize) -> bool,
) {
    for chunk in items.chunks_mut(CHUNK) {
        chunk.sort_by(&mut cmp);
        if !keep_going(chunk.len()) {
            return;
        }
    }
    merge_passes(items, CHUNK, &mut cmp, &mut keep_going);
}

/// Merge the sorted runs of `width` items into one, pair by pair; false
/// when `keep_going` stopped it.
fn merge_passes<T: Default>(
    items: &mut [T],
    mut width: usize,
    cmp: &mut impl FnMut(&T, &T) -> Ordering,
    keep_going: &mut impl FnMut(usize) -> bool,
) -> bool {
    let n = items.len();
    let mut left = Vec::new();
    while width < n {
        for start in (0..n).step_by(2 * width) {
            let mid = start + width;
            if mid >= n {
                break;
            }
            let end = (mid + width).min(n);
            merge(&mut items[start..end], mid - start, &mut left, cmp);
            if !keep_going(end - start) {
                return false;
            }
        }
        width *= 2;
    }
    true
}

/// Merge the sorted runs `run[..mid]` and `run[mid..]` in place, the
/// left item first when neither is greater (stability). Only the left run
/// is moved out (into `left`); runs already in order are left alone.
fn merge<T: Default>(
    run: &mut [T],
    mid: usize,
    left: &mut Vec<T>,
    cmp: &mut impl FnMut(&T, &T) -> Ordering,
) {
    if cmp(&run[mid - 1], &run[mid]) != Ordering::Greater {
        return;
    }
    left.clear();
    left.extend(run[..mid].iter_mut().map(std::mem::take));
    let (mut i, mut j, mut k) = (0, mid, 0);
    while i < left.len() && j < run.len() {
        let item = if cmp(&left[i], &run[j]) == Ordering::Greater {
            j += 1;
            std::mem::take(&mut run[j - 1])
        } else {
            i += 1;
            std::mem::take(&mut left[i - 1])
        };
        run[k] = item;
        k += 1;
    }
    for item in left.drain(i..) {
        run[k] = item;
        k += 1;
    }
}

fn insertion_sort<T>(run: &mut [T], cmp: &mut impl FnMut(&T, &T) -> Ordering) {
    for i in 1..run.len() {
        let mut j = i;
        while j > 0 && cmp(&run[j - 1], &run[j]) == Ordering::Greater {
            run.swap(j - 1, j);
            j -= 1;
        }
    }
}

/// Reorder `items` so that position `k` holds the item that was at
/// `order[k]` (`order` is a permutation), by following its cycles.
fn permute<T>(items: &mut [T], order: &[usize]) {
    let mut placed = vec![false; items.len()];
    for start in 0..items.len() {
        let mut k = start;
        while !placed[k] {
            placed[k] = true;
            let from = order[k];
            if from == start {
                break;
            }
            items.swap(k, from);
            k = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (xorshift).
    fn numbers(seed: u64, n: usize, modulo: u64) -> Vec<u64> {
        let mut x = seed.max(1);
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x % modulo
            })
            .collect()
    }

    #[test]
    fn sorts_stably_as_the_standard_sort() {
        for n in [0, 1, 2, 15, 16, 17, 33, 100, 1000, 4099] {
            for modulo in [3, 1000] {
                let keyed: Vec<(u64, usize)> = numbers(n as u64 + modulo, n, modulo)
                    .into_iter()
                    .enumerate()
                    .map(|(i, k)| (k, i))
                    .collect();
                let mut ours = keyed.clone();
                sort_by(&mut ours, |a, b| a.0.cmp(&b.0), |_| true);
                let mut std_sorted = keyed;
                std_sorted.sort_by_key(|a| a.0);
                assert_eq!(ours, std_sorted, "n={n} modulo={modulo}");
            }
        }
    }

    #[test]
    fn sorted_and_reversed_inputs() {
        let mut up: Vec<u32> = (0..1000).collect();
        sort_by(&mut up, u32::cmp, |_| true);
        assert_eq!(up, (0..1000).collect::<Vec<_>>());
        let mut down: Vec<u32> = (0..1000).rev().collect();
        sort_by(&mut down, u32::cmp, |_| true);
        assert_eq!(down, (0..1000).collect::<Vec<_>>());
    }

    #[test]
    fn an_inconsistent_comparison_leaves_a_permutation() {
        // The standard sort panics on 5 of these 50 (Rust 1.9x).
        for seed in 0..50u64 {
            let items: Vec<u64> = numbers(seed + 1, 33 + seed as usize * 40, 1000);
            let mut sorted = items.clone();
            sort_by(
                &mut sorted,
                |a, b| match (a * 7919 + b * 104_729 + seed).wrapping_mul(2_654_435_761) / 7 % 3 {
                    0 => Ordering::Less,
                    1 => Ordering::Equal,
                    _ => Ordering::Greater,
                },
                |_| true,
            );
            let (mut before, mut after) = (items, sorted);
            before.sort_unstable();
            after.sort_unstable();
            assert_eq!(before, after, "seed {seed}");
        }
    }

    #[test]
    fn nan_equal_to_every_number_does_not_panic() {
        // `(sort (map #(if (= 0 (mod % 3)) ##NaN (mod (* % 7919) 100))
        // (range 33)))` made the standard sort panic.
        let mut xs: Vec<f64> = (0..33)
            .map(|i| {
                if i % 3 == 0 {
                    f64::NAN
                } else {
                    f64::from(i * 7919 % 100)
                }
            })
            .collect();
        sort_by(
            &mut xs,
            |a, b| a.partial_cmp(b).unwrap_or(Ordering::Equal),
            |_| true,
        );
        assert_eq!(xs.iter().filter(|x| x.is_nan()).count(), 11);
        let mut numbers: Vec<f64> = xs.into_iter().filter(|x| !x.is_nan()).collect();
        numbers.sort_by(f64::total_cmp);
        let expected: Vec<f64> = {
            let mut e: Vec<f64> = (0..33)
                .filter(|i| i % 3 != 0)
                .map(|i| f64::from(i * 7919 % 100))
                .collect();
            e.sort_by(f64::total_cmp);
            e
        };
        assert_eq!(numbers, expected);
    }

    #[test]
    fn the_total_sort_gives_the_standard_stable_order() {
        for n in [0, 1, 100, CHUNK, CHUNK + 1, 3 * CHUNK + 17] {
            let keyed: Vec<(u64, usize)> = numbers(n as u64 + 7, n, 50)
                .into_iter()
                .enumerate()
                .map(|(i, k)| (k, i))
                .collect();
            let mut ours = keyed.clone();
            let mut work = 0;
            sort_total_by(
                &mut ours,
                |a, b| a.0.cmp(&b.0),
                |done| {
                    work += done;
                    true
                },
            );
            let mut std_sorted = keyed;
            std_sorted.sort_by_key(|a| a.0);
            assert_eq!(ours, std_sorted, "n={n}");
            assert!(n < 2 || work >= n, "n={n}: {work} reported");
        }
    }

    #[test]
    fn both_sorts_stop_when_told_and_keep_the_items() {
        let items = numbers(3, 4 * CHUNK, 1_000_000);
        for total in [false, true] {
            let mut calls = 0;
            let mut stopped = items.clone();
            let keep_going = |_| {
                calls += 1;
                calls < 3
            };
            if total {
                sort_total_by(&mut stopped, u64::cmp, keep_going);
            } else {
                sort_by(&mut stopped, u64::cmp, keep_going);
            }
            assert_eq!(calls, 3, "total: {total}");
            let (mut before, mut after) = (items.clone(), stopped);
            before.sort_unstable();
            after.sort_unstable();
            assert_eq!(before, after, "total: {total}");
        }
    }
}
