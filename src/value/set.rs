//! Persistent sets that keep insertion order while small (up to eight
//! items), then become hash sets with a deterministic order.

use super::{hash_one, FixedState, Value};

const ARRAY_SET_LIMIT: usize = 8;

type HashSet = imbl::GenericHashSet<Value, FixedState, imbl::shared_ptr::DefaultSharedPtr>;

#[derive(Clone, Debug)]
pub struct Set {
    repr: Repr,
}

#[derive(Clone, Debug)]
enum Repr {
    Array(Vec<Value>),
    Hash(HashSet),
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

    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Array(v) => v.len(),
            Repr::Hash(h) => h.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn contains(&self, v: &Value) -> bool {
        match &self.repr {
            Repr::Array(items) => items.contains(v),
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
                    let mut h: HashSet = items.drain(..).collect();
                    h.insert(v);
                    self.repr = Repr::Hash(h);
                }
            }
            Repr::Hash(h) => {
                h.insert(v);
            }
        }
    }

    pub fn remove(&mut self, v: &Value) {
        match &mut self.repr {
            Repr::Array(items) => items.retain(|x| x != v),
            Repr::Hash(h) => {
                h.remove(v);
            }
        }
    }

    pub fn iter(&self) -> Box<dyn Iterator<Item = &Value> + '_> {
        match &self.repr {
            Repr::Array(items) => Box::new(items.iter()),
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
        let mut s = Set::new();
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
