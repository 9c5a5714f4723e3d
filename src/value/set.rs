//! Persistent sets that keep insertion order while small (up to eight
//! items), then become hash sets with a deterministic order.
//!
//! A large set starts as a flat hash table (`Flat`) that its single owner
//! grows in place: building a set (`set`, `into`, `union`, `distinct`'s
//! seen set) costs one hash-table insert per item, not a persistent-trie
//! insert. The first change made through a *shared* flat set builds, once,
//! a persistent twin (an `imbl` hash trie) that the changed copy continues
//! from, so `conj` and `disj` on shared sets stay O(log n) however often
//! they are repeated.

use std::sync::Arc;

use super::twin::Twin;

use super::{hash_one, FixedState, Value};

const ARRAY_SET_LIMIT: usize = 8;

type HashSet = imbl::GenericHashSet<Value, FixedState, imbl::shared_ptr::DefaultSharedPtr>;
type Table = std::collections::HashSet<Value, FixedState>;

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
    f.persistent(|table| table.iter().cloned().collect())
        .clone()
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
            repr: Repr::Flat(Flat::new(Table::with_capacity_and_hasher(
                n,
                FixedState::default(),
            ))),
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

    pub fn insert(&mut self, v: Value) {
        match &mut self.repr {
            Repr::Array(items) => {
                if items.contains(&v) {
                    return;
                }
                if items.len() < ARRAY_SET_LIMIT {
                    items.push(v);
                } else {
                    let mut table =
                        Table::with_capacity_and_hasher(2 * ARRAY_SET_LIMIT, FixedState::default());
                    table.extend(items.drain(..));
                    table.insert(v);
                    self.repr = Repr::Flat(Flat::new(table));
                }
            }
            Repr::Flat(f) => match Flat::unshared(f) {
                Some(table) => {
                    table.insert(v);
                }
                None => {
                    if f.items.contains(&v) {
                        return;
                    }
                    let mut h = trie(f);
                    h.insert(v);
                    self.repr = Repr::Hash(h);
                }
            },
            Repr::Hash(h) => {
                h.insert(v);
            }
        }
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

    pub fn iter(&self) -> Box<dyn Iterator<Item = &Value> + '_> {
        match &self.repr {
            Repr::Array(items) => Box::new(items.iter()),
            Repr::Flat(f) => Box::new(f.items.iter()),
            Repr::Hash(h) => Box::new(h.iter()),
        }
    }

    pub(crate) fn unordered_hash(&self) -> u64 {
        self.iter()
            .fold(0u64, |acc, v| acc.wrapping_add(hash_one(v)))
    }
}

impl FromIterator<Value> for Set {
    fn from_iter<T: IntoIterator<Item = Value>>(iter: T) -> Self {
        let iter = iter.into_iter();
        let mut s = Set::with_capacity(iter.size_hint().0);
        for v in iter {
            s.insert(v);
        }
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
}
