//! Persistent maps that keep insertion order while small.
//!
//! Like Clojure's array maps, a map of up to eight entries is a plain
//! ordered list (so `(keys {:a 1 :b 2})` is `(:a :b)` and JSON objects keep
//! their field order); the ninth entry turns it into a hash map, whose
//! order is fixed by the deterministic hasher but otherwise arbitrary.
//!
//! Maps read from JSON with up to sixteen keys share their keys: the
//! objects of an array usually have the same keys in the same order, so
//! each such map holds only its values and a reference to the shared key
//! list (its `Shape`), half the memory of key-value pairs, and keeps the
//! document's field order. Adding the key that another map of the same
//! shape gained first gives a map of the shape that extension made (the
//! shape remembers it), so `(map #(assoc % :total ...) orders)` still
//! shares keys; adding any other key, or removing one, turns it into a
//! plain ordered list (a hash map past eight entries).
//!
//! As with sets (`set.rs`), a large map starts as a flat hash table that
//! its single owner fills in place (`frequencies`, `group-by`, `zipmap`,
//! `into`, JSON objects), and the first change through a shared one
//! continues from a persistent twin (an `imbl` hash trie) built once.

use std::sync::{Arc, OnceLock};

use super::twin::Twin;

use super::{hash_one, ArcStr, FixedState, Value};

const ARRAY_MAP_LIMIT: usize = 8;
/// The most entries a map keeps in insertion order when built by changes
/// (a map literal, `assoc`, `into`): past it a map is a hash map.
pub(crate) const SMALL_MAP_LIMIT: usize = ARRAY_MAP_LIMIT;
/// The most keys a shared key list ([`Shape`]) has.
pub(crate) const SHAPED_LIMIT: usize = 16;

type HashMap = imbl::GenericHashMap<Value, Value, FixedState, imbl::shared_ptr::DefaultSharedPtr>;
type Table = std::collections::HashMap<Value, Value, FixedState>;

#[derive(Clone, Debug)]
pub struct Map {
    repr: Repr,
}

#[derive(Clone, Debug)]
enum Repr {
    Array(Vec<(Value, Value)>),
    /// Values in the order of their shape's keys (at most
    /// `SHAPED_LIMIT`, distinct).
    Shaped(Arc<Shape>, Box<[Value]>),
    Flat(Arc<Flat>),
    Hash(HashMap),
}

/// The keys of maps that share them, in order.
#[derive(Debug)]
pub(crate) struct Shape {
    keys: Box<[Value]>,
    /// The address of each keyword key's name (0 for a key of another
    /// kind): keywords are interned, so most lookups are a search of
    /// this short array of integers.
    names: Box<[usize]>,
    /// The shape that the first `assoc` of a new key made from this one
    /// (this shape's keys and that key), kept for the next map of this
    /// shape that gains the same key: maps of one shape usually do
    /// (`(map #(assoc % :total ...) orders)`), and then share its keys
    /// too instead of each copying them into a list.
    next: OnceLock<(Value, Arc<Shape>)>,
}

impl Shape {
    /// A shape of at most [`SHAPED_LIMIT`] distinct keys.
    pub(crate) fn new(keys: Vec<Value>) -> Arc<Shape> {
        debug_assert!(keys.len() <= SHAPED_LIMIT);
        let names = keys
            .iter()
            .map(|k| match k {
                Value::Keyword(name) => name.as_ptr() as usize,
                _ => 0,
            })
            .collect();
        Arc::new(Shape {
            keys: keys.into_boxed_slice(),
            names,
            next: OnceLock::new(),
        })
    }

    /// The shape of this one's keys and then `key` (not among them), when
    /// it is the key this shape was first extended by: made on the first
    /// extension, `None` for any other key.
    fn extended(&self, key: &Value) -> Option<Arc<Shape>> {
        let (k, next) = self.next.get_or_init(|| {
            let mut keys = Vec::with_capacity(self.keys.len() + 1);
            keys.extend(self.keys.iter().cloned());
            keys.push(key.clone());
            (key.clone(), Shape::new(keys))
        });
        same_key(k, key).then(|| next.clone())
    }

    /// Where the keyword `name` is among the keys, found by its address
    /// (a keyword made without interning is not found here).
    #[inline]
    fn keyword_position(&self, name: &ArcStr) -> Option<usize> {
        let name = name.as_ptr() as usize;
        self.names.iter().position(|&n| n == name)
    }

    /// Where `key` is among the keys.
    #[inline]
    fn position(&self, key: &Value) -> Option<usize> {
        if let Value::Keyword(name) = key {
            if let Some(i) = self.keyword_position(name) {
                return Some(i);
            }
        }
        // A keyword made without interning, or a key of another kind.
        self.keys.iter().position(|k| k == key)
    }
}

/// Whether two keys are equal: interned keywords by their address first.
fn same_key(a: &Value, b: &Value) -> bool {
    same_keyword(a, b) || a == b
}

/// Whether `a` and `b` are one keyword allocation (interned keywords of
/// one name are): the cheap half of [`same_key`].
#[inline]
fn same_keyword(a: &Value, b: &Value) -> bool {
    matches!((a, b), (Value::Keyword(x), Value::Keyword(y)) if ArcStr::ptr_eq(x, y))
}

/// Where `key` is among `keys`. Keywords are interned: a pointer
/// comparison finds most, before any text is compared.
fn key_position<'a>(keys: impl Iterator<Item = &'a Value> + Clone, key: &Value) -> Option<usize> {
    if let Value::Keyword(_) = key {
        if let Some(i) = keys.clone().position(|k| same_keyword(k, key)) {
            return Some(i);
        }
    }
    keys.into_iter().position(|k| k == key)
}

/// Copies of `values` with the one at `at` replaced by `value` (which
/// is moved in; the old one is not copied).
fn replaced<'a, I: IntoIterator<Item = &'a Value>>(
    values: I,
    at: usize,
    value: Value,
) -> impl Iterator<Item = Value> + use<'a, I> {
    let mut value = Some(value);
    values
        .into_iter()
        .enumerate()
        .map(move |(i, v)| match i == at {
            true => value.take().unwrap_or_default(),
            false => v.clone(),
        })
}

/// A hash table, and the persistent twin of it made on first need.
type Flat = Twin<Table, HashMap>;

/// A copy of the persistent twin of `f`, to change.
fn trie(f: &Flat) -> HashMap {
    f.persistent(|table| table.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .clone()
}

impl Default for Map {
    fn default() -> Self {
        Map::new()
    }
}

impl Map {
    pub fn new() -> Self {
        Map {
            repr: Repr::Array(Vec::new()),
        }
    }

    /// An empty map with room for `n` entries while it keeps them in an
    /// array (at most the array form's limit).
    pub fn with_capacity(n: usize) -> Self {
        Map {
            repr: Repr::Array(Vec::with_capacity(n.min(ARRAY_MAP_LIMIT))),
        }
    }

    /// A map with `shape`'s keys and `values` in their order (as many).
    pub(crate) fn from_shape(shape: Arc<Shape>, values: Vec<Value>) -> Self {
        debug_assert_eq!(shape.keys.len(), values.len());
        Map {
            repr: Repr::Shaped(shape, values.into_boxed_slice()),
        }
    }

    /// A map of `entries` whose keys are known to be distinct (no
    /// duplicate check), in their order while small.
    pub(crate) fn from_distinct(entries: Vec<(Value, Value)>) -> Self {
        if entries.len() <= ARRAY_MAP_LIMIT {
            Map {
                repr: Repr::Array(entries),
            }
        } else {
            let mut table = Table::with_capacity_and_hasher(entries.len(), FixedState::default());
            table.extend(entries);
            Map {
                repr: Repr::Flat(Flat::new(table)),
            }
        }
    }

    /// The shared key list of a map read in one shape.
    pub(crate) fn shape(&self) -> Option<&Arc<Shape>> {
        match &self.repr {
            Repr::Shaped(shape, _) => Some(shape),
            _ => None,
        }
    }

    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Array(v) => v.len(),
            Repr::Shaped(_, values) => values.len(),
            Repr::Flat(f) => f.items.len(),
            Repr::Hash(h) => h.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True when [`Map::iter`] gives the entries in insertion order (a
    /// small map); false when the order is the hasher's.
    pub fn keeps_insertion_order(&self) -> bool {
        matches!(self.repr, Repr::Array(_) | Repr::Shaped(..))
    }

    pub fn get(&self, key: &Value) -> Option<&Value> {
        match &self.repr {
            Repr::Array(v) => key_position(v.iter().map(|(k, _)| k), key).map(|i| &v[i].1),
            Repr::Shaped(shape, values) => shape.position(key).map(|i| &values[i]),
            Repr::Flat(f) => f.items.get(key),
            Repr::Hash(h) => h.get(key),
        }
    }

    /// Lookup with the specification's flexible key access: a keyword key
    /// falls back to the string of its name and a string key to the
    /// keyword, when the exact key is missing.
    ///
    /// As a last resort a name with hyphens is tried with underscores
    /// instead, as keyword and as string (`:turn-summaries` finds
    /// `"turn_summaries"`, specification §7.5).
    #[inline]
    pub fn get_flexible(&self, key: &Value) -> Option<&Value> {
        // The most common lookup of all, a keyword field of a map read
        // from JSON, with no call.
        if let (Repr::Shaped(shape, values), Value::Keyword(name)) = (&self.repr, key) {
            if let Some(i) = shape.keyword_position(name) {
                return Some(&values[i]);
            }
        }
        self.get_flexible_slowly(key)
    }

    /// [`Map::get_flexible`] after its inline case missed.
    #[inline(never)]
    fn get_flexible_slowly(&self, key: &Value) -> Option<&Value> {
        self.get(key).or_else(|| match key {
            Value::Keyword(k) => self
                .get(&Value::shared_str(k))
                .or_else(|| self.get_underscored(k)),
            Value::Str(s) => self
                .get(&Value::Keyword(s.clone()))
                .or_else(|| self.get_underscored(s)),
            Value::ShortStr(s) => self
                .get(&Value::Keyword(super::ArcStr::from(s.as_str())))
                .or_else(|| self.get_underscored(s)),
            _ => None,
        })
    }

    #[cold]
    fn get_underscored(&self, name: &str) -> Option<&Value> {
        if !name.contains('-') {
            return None;
        }
        let underscored = super::ArcStr::from(name.replace('-', "_"));
        self.get(&Value::Keyword(underscored.clone()))
            .or_else(|| self.get(&Value::shared_str(&underscored)))
    }

    pub fn contains_key(&self, key: &Value) -> bool {
        self.get(key).is_some()
    }

    /// Insert or replace in place. A replaced key keeps its position.
    pub fn insert(&mut self, key: Value, value: Value) {
        if let Repr::Shaped(shape, values) = &mut self.repr {
            match shape.position(&key) {
                Some(i) => {
                    values[i] = value;
                    return;
                }
                None => self.unshape(),
            }
        }
        match &mut self.repr {
            Repr::Array(v) => {
                if let Some(slot) = v.iter_mut().find(|(k, _)| *k == key) {
                    slot.1 = value;
                } else if v.len() < ARRAY_MAP_LIMIT {
                    v.push((key, value));
                } else {
                    let mut table =
                        Table::with_capacity_and_hasher(2 * ARRAY_MAP_LIMIT, FixedState::default());
                    table.extend(v.drain(..));
                    table.insert(key, value);
                    self.repr = Repr::Flat(Flat::new(table));
                }
            }
            Repr::Flat(f) => match Flat::unshared(f) {
                Some(table) => {
                    table.insert(key, value);
                }
                None => {
                    let mut h = trie(f);
                    h.insert(key, value);
                    self.repr = Repr::Hash(h);
                }
            },
            Repr::Hash(h) => {
                h.insert(key, value);
            }
            Repr::Shaped(..) => unreachable!("unshaped above"),
        }
    }

    pub fn remove(&mut self, key: &Value) {
        if let Repr::Shaped(shape, _) = &self.repr {
            if shape.position(key).is_none() {
                return;
            }
            self.unshape();
        }
        match &mut self.repr {
            Repr::Array(v) => v.retain(|(k, _)| k != key),
            Repr::Flat(f) => match Flat::unshared(f) {
                Some(table) => {
                    table.remove(key);
                }
                None => {
                    if !f.items.contains_key(key) {
                        return;
                    }
                    let mut h = trie(f);
                    h.remove(key);
                    self.repr = Repr::Hash(h);
                }
            },
            Repr::Hash(h) => {
                h.remove(key);
            }
            Repr::Shaped(..) => unreachable!("unshaped above"),
        }
    }

    /// Turn a shaped map into a plain ordered list of its entries (which
    /// may be longer than an array map grows: the next added key turns it
    /// into a hash map).
    fn unshape(&mut self) {
        if let Repr::Shaped(shape, values) = &mut self.repr {
            let values = std::mem::take(values);
            let entries = shape.keys.iter().cloned().zip(values.into_vec()).collect();
            self.repr = Repr::Array(entries);
        }
    }

    /// Functional update: a new map with `key` set. A small map is copied
    /// once, sized for the new entry, and the value it replaces is not
    /// copied at all.
    pub fn assoc(&self, key: Value, value: Value) -> Map {
        let repr = match &self.repr {
            Repr::Shaped(shape, values) => match shape.position(&key) {
                Some(i) => Repr::Shaped(shape.clone(), replaced(values, i, value).collect()),
                None => return self.with_new_entry(key, value),
            },
            Repr::Array(entries) => match key_position(entries.iter().map(|(k, _)| k), &key) {
                Some(i) => {
                    let keys = entries.iter().map(|(k, _)| k.clone());
                    let values = entries.iter().map(|(_, v)| v);
                    Repr::Array(keys.zip(replaced(values, i, value)).collect())
                }
                None => return self.with_new_entry(key, value),
            },
            Repr::Flat(_) | Repr::Hash(_) => {
                let mut m = self.clone();
                m.insert(key, value);
                return m;
            }
        };
        Map { repr }
    }

    /// A copy of this small map (a list or shaped) with `key`, which it
    /// does not have, added: its entries copied once, straight into the
    /// form the new size takes (the table `insert` would make past eight).
    /// A shaped map that gains the key its shape was first extended by
    /// keeps sharing keys: only its values are copied.
    fn with_new_entry(&self, key: Value, value: Value) -> Map {
        let n = self.len() + 1;
        if let Repr::Shaped(shape, values) = &self.repr {
            if n <= ARRAY_MAP_LIMIT {
                if let Some(next) = shape.extended(&key) {
                    let mut grown = Vec::with_capacity(n);
                    grown.extend(values.iter().cloned());
                    grown.push(value);
                    return Map {
                        repr: Repr::Shaped(next, grown.into_boxed_slice()),
                    };
                }
            }
        }
        let entries = self
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .chain(std::iter::once((key, value)));
        if n <= ARRAY_MAP_LIMIT {
            let mut grown = Vec::with_capacity(n);
            grown.extend(entries);
            return Map {
                repr: Repr::Array(grown),
            };
        }
        let mut table = Table::with_capacity_and_hasher(2 * ARRAY_MAP_LIMIT, FixedState::default());
        table.extend(entries);
        Map {
            repr: Repr::Flat(Flat::new(table)),
        }
    }

    pub fn dissoc(&self, key: &Value) -> Map {
        let mut m = self.clone();
        m.remove(key);
        m
    }

    pub fn iter(&self) -> MapIter<'_> {
        match &self.repr {
            Repr::Array(v) => MapIter::Array(v.iter()),
            Repr::Shaped(shape, values) => MapIter::Shaped(shape.keys.iter().zip(values.iter())),
            Repr::Flat(f) => MapIter::Flat(f.items.iter()),
            Repr::Hash(h) => MapIter::Hash(h.iter()),
        }
    }

    pub fn keys(&self) -> impl Iterator<Item = &Value> {
        self.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl Iterator<Item = &Value> {
        self.iter().map(|(_, v)| v)
    }

    /// An order-independent hash of the entries, consistent with `==`.
    pub(crate) fn unordered_hash(&self) -> u64 {
        self.iter().fold(0u64, |acc, (k, v)| {
            acc.wrapping_add(hash_one(k).rotate_left(7) ^ hash_one(v))
        })
    }
}

pub enum MapIter<'a> {
    Array(std::slice::Iter<'a, (Value, Value)>),
    Shaped(std::iter::Zip<std::slice::Iter<'a, Value>, std::slice::Iter<'a, Value>>),
    Flat(std::collections::hash_map::Iter<'a, Value, Value>),
    Hash(imbl::hashmap::Iter<'a, Value, Value, imbl::shared_ptr::DefaultSharedPtr>),
}

impl<'a> Iterator for MapIter<'a> {
    type Item = (&'a Value, &'a Value);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            MapIter::Array(it) => it.next().map(|(k, v)| (k, v)),
            MapIter::Shaped(it) => it.next(),
            MapIter::Flat(it) => it.next(),
            MapIter::Hash(it) => it.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            MapIter::Array(it) => it.size_hint(),
            MapIter::Shaped(it) => it.size_hint(),
            MapIter::Flat(it) => it.size_hint(),
            MapIter::Hash(it) => it.size_hint(),
        }
    }
}

impl FromIterator<(Value, Value)> for Map {
    fn from_iter<T: IntoIterator<Item = (Value, Value)>>(iter: T) -> Self {
        let mut m = Map::new();
        for (k, v) in iter {
            m.insert(k, v);
        }
        m
    }
}

impl PartialEq for Map {
    fn eq(&self, other: &Map) -> bool {
        self.len() == other.len() && self.iter().all(|(k, v)| other.get(k) == Some(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn squares(n: i64) -> Map {
        (0..n).map(|i| (Value::Int(i), Value::Int(i * i))).collect()
    }

    #[test]
    fn shaped_maps_read_change_and_compare_like_ordered_ones() {
        let shape = Shape::new(vec![Value::keyword("a"), Value::keyword("b")]);
        let m = Map::from_shape(shape.clone(), vec![Value::Int(1), Value::Int(2)]);
        let other = Map::from_shape(shape, vec![Value::Int(1), Value::Int(2)]);
        let plain: Map = [
            (Value::keyword("a"), Value::Int(1)),
            (Value::keyword("b"), Value::Int(2)),
        ]
        .into_iter()
        .collect();
        assert_eq!(m, plain);
        assert_eq!(m, other);
        assert_eq!(m.unordered_hash(), plain.unordered_hash());
        assert!(m.keeps_insertion_order());
        assert_eq!(m.get(&Value::keyword("b")), Some(&Value::Int(2)));
        assert_eq!(m.get(&Value::str("b")), None);
        let replaced = m.assoc(Value::keyword("a"), Value::Nil);
        assert!(matches!(replaced.repr, Repr::Shaped(..)));
        assert_eq!(replaced.get(&Value::keyword("a")), Some(&Value::Nil));
        let added = m.assoc(Value::keyword("c"), Value::Int(3));
        let keys: Vec<String> = added.keys().map(crate::value::pr_str).collect();
        assert_eq!(keys, [":a", ":b", ":c"]);
        let removed = m.dissoc(&Value::keyword("a"));
        assert_eq!(removed.len(), 1);
        assert_eq!(m.dissoc(&Value::keyword("zz")), m);
        assert_eq!(
            m.get(&Value::keyword("a")),
            Some(&Value::Int(1)),
            "original unchanged"
        );
    }

    #[test]
    fn keywords_made_without_interning_find_their_keys() {
        let fresh = |name: &str| Value::Keyword(ArcStr::from(name));
        let shape = Shape::new(vec![
            Value::keyword("ab"),
            Value::keyword("cd"),
            Value::str("ef"),
        ]);
        let shaped = Map::from_shape(shape, vec![Value::Int(1), Value::Int(2), Value::Int(3)]);
        let listed: Map = [
            (Value::keyword("ab"), Value::Int(1)),
            (Value::keyword("cd"), Value::Int(2)),
            (Value::str("ef"), Value::Int(3)),
        ]
        .into_iter()
        .collect();
        let (made, interned) = (fresh("cd"), Value::keyword("cd"));
        let (Value::Keyword(made), Value::Keyword(interned)) = (&made, &interned) else {
            unreachable!()
        };
        assert!(!ArcStr::ptr_eq(made, interned), "a separate allocation");
        for m in [&shaped, &listed] {
            assert_eq!(m.get(&fresh("cd")), Some(&Value::Int(2)));
            assert_eq!(m.get(&fresh("ab")), Some(&Value::Int(1)));
            // Same length, other name; a keyword never equals a string.
            assert_eq!(m.get(&fresh("ce")), None);
            assert_eq!(m.get(&fresh("ef")), None);
            assert_eq!(m.get(&Value::str("ef")), Some(&Value::Int(3)));
            assert_eq!(m.get(&Value::str("ab")), None);
        }
    }

    #[test]
    fn assoc_on_small_maps_keeps_their_order_and_leaves_the_original_alone() {
        let kw = |i: usize| Value::keyword(&format!("k{i}"));
        let keys = |m: &Map| {
            m.keys()
                .map(crate::value::pr_str)
                .collect::<Vec<_>>()
                .join(" ")
        };
        let array: Map = (0..3).map(|i| (kw(i), Value::Int(i as i64))).collect();
        let replaced = array.assoc(kw(1), Value::str("one"));
        assert_eq!(keys(&replaced), ":k0 :k1 :k2");
        assert_eq!(replaced.get(&kw(1)), Some(&Value::str("one")));
        assert_eq!(array.get(&kw(1)), Some(&Value::Int(1)));
        let mut grown = array.clone();
        for i in 3..ARRAY_MAP_LIMIT {
            grown = grown.assoc(kw(i), Value::Int(i as i64));
            assert!(matches!(grown.repr, Repr::Array(_)));
        }
        assert_eq!(array.len(), 3);
        let hashed = grown.assoc(kw(99), Value::Nil);
        assert!(matches!(hashed.repr, Repr::Flat(_)));
        assert_eq!(
            (grown.len(), hashed.len()),
            (ARRAY_MAP_LIMIT, ARRAY_MAP_LIMIT + 1)
        );
        // A shaped map of more keys than an array map holds becomes a
        // hash map when a key is added; one within the limit an array map.
        let wide: Vec<Value> = (0..SHAPED_LIMIT).map(kw).collect();
        let values: Vec<Value> = (0..SHAPED_LIMIT as i64).map(Value::Int).collect();
        let shaped = Map::from_shape(Shape::new(wide), values);
        let added = shaped.assoc(kw(99), Value::Nil);
        assert!(matches!(added.repr, Repr::Flat(_)));
        assert_eq!(added.len(), SHAPED_LIMIT + 1);
        assert_eq!(added.get(&kw(15)), Some(&Value::Int(15)));
        let narrow = Map::from_shape(Shape::new(vec![kw(0)]), vec![Value::Int(0)]);
        let added = narrow.assoc(kw(1), Value::Int(1));
        assert!(added.keeps_insertion_order());
        assert_eq!(keys(&added), ":k0 :k1");
    }

    #[test]
    fn maps_of_one_shape_gaining_the_same_key_share_the_new_shape() {
        let kw = |name: &str| Value::keyword(name);
        let shape = Shape::new(vec![kw("id"), kw("qty")]);
        let order = |id: i64| Map::from_shape(shape.clone(), vec![Value::Int(id), Value::Int(2)]);
        let shape_of = |m: &Map| match &m.repr {
            Repr::Shaped(shape, _) => shape.clone(),
            other => panic!("not shaped: {other:?}"),
        };
        let (first, second) = (order(1), order(2));
        let a = first.assoc(kw("total"), Value::Float(9.5));
        let b = second.assoc(kw("total"), Value::Float(1.5));
        assert!(Arc::ptr_eq(&shape_of(&a), &shape_of(&b)));
        assert_eq!(
            a.iter()
                .map(|(k, v)| format!("{}={}", crate::value::pr_str(k), crate::value::pr_str(v)))
                .collect::<Vec<_>>(),
            [":id=1", ":qty=2", ":total=9.5"]
        );
        assert_eq!(b.get(&kw("total")), Some(&Value::Float(1.5)));
        assert_eq!(second.get(&kw("total")), None);
        assert_eq!(second.len(), 2);
        // Equal to the same entries in a list, in any order.
        let list: Map = [
            (kw("total"), Value::Float(1.5)),
            (kw("qty"), Value::Int(2)),
            (kw("id"), Value::Int(2)),
        ]
        .into_iter()
        .collect();
        assert_eq!(b, list);
        // Another key: a list of its own, the first extension kept.
        let c = order(3).assoc(kw("note"), Value::Nil);
        assert!(matches!(c.repr, Repr::Array(_)));
        assert_eq!(c.len(), 3);
        let d = order(4).assoc(kw("total"), Value::Nil);
        assert!(Arc::ptr_eq(&shape_of(&a), &shape_of(&d)));
        // Extensions chain, up to the size a list map keeps in order.
        let mut m = a.clone();
        for i in 3..ARRAY_MAP_LIMIT {
            m = m.assoc(kw(&format!("k{i}")), Value::Int(i as i64));
            assert!(matches!(m.repr, Repr::Shaped(..)), "{i}");
        }
        let hashed = m.assoc(kw("last"), Value::Nil);
        assert!(matches!(hashed.repr, Repr::Flat(_)));
        assert_eq!(hashed.len(), ARRAY_MAP_LIMIT + 1);
    }

    #[test]
    fn changing_a_shared_flat_map_leaves_the_original_alone() {
        let original = squares(100);
        assert!(matches!(original.repr, Repr::Flat(_)));
        let added = original.assoc(Value::Int(1000), Value::Nil);
        let replaced = original.assoc(Value::Int(3), Value::Int(-1));
        let removed = original.dissoc(&Value::Int(5));
        assert_eq!(original.len(), 100);
        assert_eq!(original.get(&Value::Int(3)), Some(&Value::Int(9)));
        assert!(original.contains_key(&Value::Int(5)));
        assert_eq!((added.len(), replaced.len(), removed.len()), (101, 100, 99));
        assert_eq!(replaced.get(&Value::Int(3)), Some(&Value::Int(-1)));
        assert!(matches!(added.repr, Repr::Hash(_)));
    }

    #[test]
    fn an_owned_flat_map_changes_in_place_and_equality_ignores_the_representation() {
        let mut owned = squares(20);
        owned.insert(Value::Int(0), Value::str("zero"));
        owned.remove(&Value::Int(19));
        assert!(matches!(owned.repr, Repr::Flat(_)));
        let mut via_trie = squares(20).assoc(Value::Int(0), Value::str("zero"));
        via_trie.remove(&Value::Int(19));
        assert!(matches!(via_trie.repr, Repr::Hash(_)));
        assert_eq!(owned, via_trie);
        assert_eq!(owned.unordered_hash(), via_trie.unordered_hash());
        let distinct = Map::from_distinct(
            (0..20)
                .map(|i| (Value::Int(i), Value::Int(i * i)))
                .collect(),
        );
        assert_eq!(distinct, squares(20));
    }
}
