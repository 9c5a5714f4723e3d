//! A hasher for the flat tables of large sets (and other tables whose
//! order no one sees, such as `distinct`'s seen table): an integer, the
//! most common set member, hashes with one multiply; everything else
//! folds in the same way, with byte strings hashed by foldhash first.
//!
//! Like the foldhash state of the other collections it is fixed (no
//! random seed), so the iteration order of a set is the same on every
//! run. Only the tables hash with it: a set's own hash (for use inside
//! other collections) and its persistent twin use `FixedState`.

use std::hash::{BuildHasher, Hasher};

/// Odd constants from the digits of pi: a seed, and the multiplier.
const SEED: u64 = 0x243f_6a88_85a3_08d3;
const MULTIPLIER: u64 = 0x1319_8a2e_0370_7345;

/// The 128-bit product of `a` and `b`, its two halves folded together.
#[inline(always)]
fn folded_multiply(a: u64, b: u64) -> u64 {
    let full = u128::from(a) * u128::from(b);
    (full as u64) ^ ((full >> 64) as u64)
}

/// The `BuildHasher` for [`ItemHasher`].
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ItemState;

impl BuildHasher for ItemState {
    type Hasher = ItemHasher;

    #[inline(always)]
    fn build_hasher(&self) -> ItemHasher {
        ItemHasher { acc: SEED }
    }
}

/// One 64-bit accumulator; every write is folded in with a multiply.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ItemHasher {
    acc: u64,
}

impl Hasher for ItemHasher {
    #[inline(always)]
    fn write_u64(&mut self, n: u64) {
        self.acc = folded_multiply(self.acc ^ n, MULTIPLIER);
    }

    #[inline(always)]
    fn write_i64(&mut self, n: i64) {
        self.write_u64(n as u64);
    }

    #[inline(always)]
    fn write_u8(&mut self, n: u8) {
        self.write_u64(u64::from(n));
    }

    #[inline(always)]
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    #[inline(always)]
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let h = super::FixedState::default().hash_one(bytes);
        self.write_u64(h);
    }

    #[inline(always)]
    fn finish(&self) -> u64 {
        self.acc
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;

    #[test]
    fn equal_values_hash_alike_and_integers_spread() {
        let h = |v: &Value| ItemState.hash_one(v);
        assert_eq!(h(&Value::Float(0.0)), h(&Value::Float(-0.0)));
        assert_eq!(h(&Value::from("ab")), h(&Value::from("ab")));
        assert_ne!(h(&Value::from("ab")), h(&Value::Keyword("ab".into())));
        let list = Value::list([Value::Int(1), Value::Int(2)]);
        let vector = Value::vector([Value::Int(1), Value::Int(2)]);
        assert_eq!(h(&list), h(&vector));
        // Consecutive integers differ in the bits a table uses, at both ends.
        let mut low: Vec<u64> = (0..64).map(|i| h(&Value::Int(i)) & 63).collect();
        let mut high: Vec<u64> = (0..64).map(|i| h(&Value::Int(i)) >> 57).collect();
        low.sort_unstable();
        low.dedup();
        high.sort_unstable();
        high.dedup();
        assert!(low.len() > 28 && high.len() > 28, "{low:?} {high:?}");
    }
}
