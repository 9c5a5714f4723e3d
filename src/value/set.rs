//! Persistent sets that keep insertion order while small (up to eight
//! items), then become hash sets with a deterministic order.
//!
//! A large set starts as a flat hash table (`Flat`) that its single owner
//! grows in place: building a set (`set`, `into`, `union`, `distinct`'s
//! seen set) costs one hash-table insert per item, not a persistent-trie
//! insert. The first change made through a *shared* flat set builds, once,
//! a persistent twin (an `imbl` hash trie) that the changed copy continues
//! from, so `conj` and `disj` on shared sets stay O(log n) however often
//! they are repeated. Flat tables hash with `ItemState` (one multiply for
//! an integer); the twin and the set's own hash use `FixedState`.
//!
//! Whole-set operations avoid both per-item costs where they can: `extend`
//! (and so `collect`) inserts straight into a table the set owns, and
//! `flat_copy_with_room` copies a shared flat table outright (one table
//! clone, no rehashing) for an operation such as `union` that is about to
//! add many items to it; the persistent twin stays for repeated small
//! changes.

use std::sync::Arc;

use super::twin::Twin;

use super::item_hash::ItemState;
use super::{hash_one, FixedState, Value};

const ARRAY_SET_LIMIT: usize = 8;

type HashSet = imbl::GenericHashSet<Value, FixedState, imbl::shared_ptr::DefaultSharedPtr>;
type Table = std::collections::HashSet<Value, ItemState>;

#[derive(Clone, Debug)]
pub struct Set {
    repr: Repr,
}

#[derive(Clone, Debug)]
enum Repr {
    Array(Vec<Value>),
    Flat(Arc<Flat>),
    Hash(HashSet),
}

/// A hash table, and the persistent twin of it made on first need.
type Flat = Twin<Table, HashSet>;

/// A copy of the persistent twin of `f`, to change.
fn trie(f: &Flat) -> HashSet {
    f.persistent(|table| crate::meter::metered(table.iter()).cloned().collect())
}

impl Default for Set {
    fn default() -> Self {
        Set::new()
    }
}

impl Set {
    pub fn new() -> Self {
        Set {
            repr: Repr::Array(Vec::new()),
        }
    }

    /// An empty set that will hold about `n` items: a flat table sized
    /// for them when they are more than a small set holds.
    pub fn with_capacity(n: usize) -> Self {
        if n <= ARRAY_SET_LIMIT {
            return Set::new();
        }
        Set {
            repr: Repr::Flat(Flat::new(Table::with_capacity_and_hasher(n, ItemState))),
        }
    }

    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Array(v) => v.len(),
            Repr::Flat(f) => f.items.len(),
            Repr::Hash(h) => h.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn contains(&self, v: &Value) -> bool {
        match &self.repr {
            Repr::Array(items) => items.contains(v),
            Repr::Flat(f) => f.items.contains(v),
            Repr::Hash(h) => h.contains(v),
        }
    }

    /// `v` itself when the set holds an equal element (what calling a set
    /// as a function returns).
    pub fn get<'a>(&'a self, v: &'a Value) -> Option<&'a Value> {
        self.contains(v).then_some(v)
    }

    /// Add `v`; true when the set did not hold an equal item before.
    pub fn insert(&mut self, v: Value) -> bool {
        match &mut self.repr {
            Repr::Array(items) => {
                if items.contains(&v) {
                    return false;
                }
                if items.len() < ARRAY_SET_LIMIT {
                    items.push(v);
                } else {
                    let mut table = Table::with_capacity_and_hasher(2 * ARRAY_SET_LIMIT, ItemState);
                    table.extend(items.drain(..));
                    table.insert(v);
                    self.repr = Repr::Flat(Flat::new(table));
                }
                true
            }
            Repr::Flat(f) => match Flat::unshared(f) {
                Some(table) => table.insert(v),
                None => {
                    if f.items.contains(&v) {
                        return false;
                    }
                    let mut h = trie(f);
                    h.insert(v);
                    self.repr = Repr::Hash(h);
                    true
                }
            },
            Repr::Hash(h) => h.insert(v).is_none(),
        }
    }

    /// For a flat set (more than eight items), a copy that does not share
    /// its table, with room for `additional` more items without growing:
    /// the table itself is cloned (a copy of its memory and a
    /// reference-count bump per item, no rehashing) when it has the room,
    /// or rebuilt at the larger size. `None` for other sets.
    ///
    /// For operations that add many items at once (`union`); repeated
    /// small changes are better served by the persistent twin.
    pub fn flat_copy_with_room(&self, additional: usize) -> Option<Set> {
        let Repr::Flat(f) = &self.repr else {
            return None;
        };
        let table = &f.items;
        let table = if table.capacity() - table.len() >= additional {
            table.clone()
        } else {
            let mut bigger =
                Table::with_capacity_and_hasher(table.len().saturating_add(additional), ItemState);
            bigger.extend(table.iter().cloned());
            bigger
        };
        Some(Set {
            repr: Repr::Flat(Flat::new(table)),
        })
    }

    pub fn remove(&mut self, v: &Value) {
        match &mut self.repr {
            Repr::Array(items) => items.retain(|x| x != v),
            Repr::Flat(f) => match Flat::unshared(f) {
                Some(table) => {
                    table.remove(v);
                }
                None => {
                    if !f.items.contains(v) {
                        return;
                    }
                    let mut h = trie(f);
                    h.remove(v);
                    self.repr = Repr::Hash(h);
                }
            },
            Repr::Hash(h) => {
                h.remove(v);
            }
        }
    }

    pub fn iter(&self) -> SetIter<'_> {
        match &self.repr {
            Repr::Array(items) => SetIter::Array(items.iter()),
            Repr::Flat(f) => SetIter::Flat(f.items.iter()),
            Repr::Hash(h) => SetIter::Hash(h.iter()),
        }
    }

    pub(crate) fn unordered_hash(&self) -> u64 {
        self.iter()
            .fold(0u64, |acc, v| acc.wrapping_add(hash_one(v)))
    }
}

/// The items of a set, in its iteration order (no boxing: `next` is a
/// match the compiler can inline into the loop).
pub enum SetIter<'a> {
    Array(std::slice::Iter<'a, Value>),
    Flat(std::collections::hash_set::Iter<'a, Value>),
    Hash(imbl::hashset::Iter<'a, Value, imbl::shared_ptr::DefaultSharedPtr>),
}

impl<'a> Iterator for SetIter<'a> {
    type Item = &'a Value;

    #[inline]
    fn next(&mut self) -> Option<&'a Value> {
        match self {
            SetIter::Array(it) => it.next(),
            SetIter::Flat(it) => it.next(),
            SetIter::Hash(it) => it.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            SetIter::Array(it) => it.size_hint(),
            SetIter::Flat(it) => it.size_hint(),
            SetIter::Hash(it) => it.size_hint(),
        }
    }
}

impl Extend<Value> for Set {
    fn extend<T: IntoIterator<Item = Value>>(&mut self, iter: T) {
        let mut iter = iter.into_iter();
        loop {
            // Once the set is a table of its own, the rest go straight in
            // (no per-item check for sharing); small and persistent sets
            // take items one at a time.
            if let Repr::Flat(f) = &mut self.repr {
                if let Some(table) = Flat::unshared(f) {
                    table.extend(iter);
                    return;
                }
            }
            match iter.next() {
                Some(v) => {
                    self.insert(v);
                }
                None => return,
            }
        }
    }
}

impl FromIterator<Value> for Set {
    fn from_iter<T: IntoIterator<Item = Value>>(iter: T) -> Self {
        let iter = iter.into_iter();
        let mut s = Set::with_capacity(iter.size_hint().0);
        s.extend(iter);
        s
    }
}

impl PartialEq for Set {
    fn eq(&self, other: &Set) -> bool {
        self.len() == other.len() && self.iter().all(|v| other.contains(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(range: std::ops::Range<i64>) -> Set {
        range.map(Value::Int).collect()
    }

    #[test]
    fn a_built_set_is_flat_and_grows_in_place() {
        let s = ints(0..100);
        assert!(matches!(s.repr, Repr::Flat(_)));
        assert_eq!(s.len(), 100);
        assert!(s.contains(&Value::Int(99)) && !s.contains(&Value::Int(100)));
    }

    #[test]
    fn changing_a_shared_flat_set_leaves_the_original_alone() {
        let original = ints(0..100);
        let mut added = original.clone();
        added.insert(Value::Int(1000));
        let mut removed = original.clone();
        removed.remove(&Value::Int(5));
        assert_eq!(original.len(), 100);
        assert!(!original.contains(&Value::Int(1000)));
        assert!(original.contains(&Value::Int(5)));
        assert_eq!((added.len(), removed.len()), (101, 99));
        assert!(matches!(added.repr, Repr::Hash(_)));
        // Adding what is there, or removing what is not, changes nothing.
        let mut same = original.clone();
        same.insert(Value::Int(3));
        same.remove(&Value::Int(-1));
        assert!(matches!(same.repr, Repr::Flat(_)));
        assert_eq!(same, original);
    }

    #[test]
    fn the_persistent_twin_is_built_once_and_dropped_on_a_change_in_place() {
        let original = ints(0..50);
        for i in 0..10 {
            let mut copy = original.clone();
            copy.insert(Value::Int(100 + i));
            assert_eq!(copy.len(), 51);
        }
        let Repr::Flat(flat) = &original.repr else {
            panic!("flat")
        };
        assert!(flat.persistent.get().is_some());
        let mut owned = ints(0..50);
        let _ = owned.clone().contains(&Value::Int(1));
        owned.insert(Value::Int(7));
        let copy = {
            let mut c = owned.clone();
            c.insert(Value::Int(500));
            c
        };
        owned.insert(Value::Int(600));
        assert!(owned.contains(&Value::Int(600)) && !owned.contains(&Value::Int(500)));
        assert!(copy.contains(&Value::Int(500)) && !copy.contains(&Value::Int(600)));
    }

    #[test]
    fn a_twin_cut_short_by_the_meter_is_not_kept() {
        let original = ints(0..20_000);
        {
            let meter = crate::meter::Meter {
                started: std::time::Instant::now() - std::time::Duration::from_secs(1),
                timeout: std::time::Duration::from_millis(10),
                max_expanded: usize::MAX,
                max_memory: usize::MAX,
                interrupt: None,
            };
            let _on = meter.install();
            let mut copy = original.clone();
            copy.insert(Value::Int(-1));
            assert!(crate::meter::tripped());
            // The partial copy is discarded with the program's error.
            assert!(copy.len() < 20_001);
        }
        let Repr::Flat(flat) = &original.repr else {
            panic!("flat")
        };
        assert!(flat.persistent.get().is_none());
        let mut copy = original.clone();
        copy.insert(Value::Int(-1));
        assert_eq!(copy.len(), 20_001);
        assert!(flat.persistent.get().is_some());
    }

    #[test]
    fn equality_and_hash_ignore_the_representation() {
        let flat = ints(0..20);
        let mut hash = ints(0..19);
        let shared = hash.clone();
        hash.insert(Value::Int(19));
        assert!(matches!(hash.repr, Repr::Hash(_)));
        drop(shared);
        assert_eq!(flat, hash);
        assert_eq!(flat.unordered_hash(), hash.unordered_hash());
        let small = ints(0..3);
        let mut shrunk = ints(0..20);
        for i in 3..20 {
            shrunk.remove(&Value::Int(i));
        }
        assert_eq!(small, shrunk);
        assert_eq!(small.unordered_hash(), shrunk.unordered_hash());
    }

    #[test]
    fn insert_reports_whether_the_item_is_new_in_every_representation() {
        let mut small = ints(0..3);
        assert!(!small.insert(Value::Int(1)) && small.insert(Value::Int(3)));
        let mut flat = ints(0..20);
        assert!(!flat.insert(Value::Int(1)) && flat.insert(Value::Int(20)));
        let shared = flat.clone();
        assert!(!flat.insert(Value::Int(2)));
        assert!(flat.insert(Value::Int(21)));
        assert!(matches!(flat.repr, Repr::Hash(_)));
        assert!(!flat.insert(Value::Int(21)) && flat.insert(Value::Int(22)));
        assert_eq!((shared.len(), flat.len()), (21, 23));
    }

    #[test]
    fn extending_a_shared_set_leaves_the_original_alone() {
        let original = ints(0..20);
        let mut more = original.clone();
        more.extend((15..40).map(Value::Int));
        assert_eq!((original.len(), more.len()), (20, 40));
        assert!(!original.contains(&Value::Int(20)));
        let mut small = ints(0..5);
        small.extend((3..30).map(Value::Int));
        assert_eq!(small, ints(0..30));
        assert!(matches!(small.repr, Repr::Flat(_)));
    }

    #[test]
    fn a_flat_copy_with_room_owns_its_table() {
        assert!(ints(0..8).flat_copy_with_room(5).is_none());
        let original = ints(0..100);
        // With room to spare (a clone of the table), and without (rebuilt).
        for room in [1, 1000] {
            let mut copy = original.flat_copy_with_room(room).expect("flat");
            assert_eq!(copy, original);
            copy.extend((100..100 + room as i64).map(Value::Int));
            copy.insert(Value::Int(-1));
            copy.remove(&Value::Int(0));
            assert!(matches!(copy.repr, Repr::Flat(_)));
            assert_eq!(copy.len(), 100 + room);
            assert_eq!(original.len(), 100);
            assert!(original.contains(&Value::Int(0)) && !original.contains(&Value::Int(-1)));
            // The original's own changes still go through its twin.
            let mut changed = original.clone();
            changed.insert(Value::Int(-2));
            assert!(matches!(changed.repr, Repr::Hash(_)));
            assert!(!copy.contains(&Value::Int(-2)));
        }
    }
}
