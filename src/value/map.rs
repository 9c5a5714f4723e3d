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
//! A map is one reference-counted allocation: a small head (the form)
//! and, for the two ordered forms, the entries themselves right after
//! it, so a small map costs one allocation and one pointer to follow.
//! Clones share it; a change through a map that is not the only holder
//! copies it first.
//!
//! As with sets (`set.rs`), a large map starts as a flat hash table that
//! its single owner fills in place (`frequencies`, `group-by`, `zipmap`,
//! `into`, JSON objects), and the first change through a shared one
//! continues from a persistent twin (an `imbl` hash trie) built once.

use std::sync::{Arc, OnceLock};

use triomphe::{HeaderSliceWithLengthProtected, ThinArc};

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

/// A map: a handle to its one shared allocation (the size of a pointer).
/// Cloning it shares the map; changing it copies the map first unless
/// this handle is its only one.
#[derive(Clone)]
pub struct Map {
    stored: ThinArc<Head, Value>,
}

/// A map's allocation: its head and the slice of values after it.
type Stored = HeaderSliceWithLengthProtected<Head, Value>;

/// The form of a map, and what the values after it are.
#[derive(Clone, Debug)]
enum Head {
    /// The values, in the order of the shape's keys (at most
    /// `SHAPED_LIMIT`, distinct).
    Shaped(Arc<Shape>),
    /// The entries in insertion order, each key followed by its value;
    /// the first `len` pairs are the map's, any after them room for more
    /// (nil), which only a map's single holder fills.
    Array { len: usize },
    /// No values after the head.
    Flat(Arc<Flat>),
    /// No values after the head.
    Hash(Box<HashMap>),
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

/// Copies of `values` into `slots` (nil, of the same length). A map made
/// at its size, all nil, then filled in place this way gets each copy
/// written straight into its place; an iterator's items would pass
/// through the stack on their way into the allocation.
fn clone_into(slots: &mut [Value], values: &[Value]) {
    for (slot, value) in slots.iter_mut().zip(values) {
        *slot = value.clone();
    }
}

/// `items`, then nil: `total` values in all, an exactly sized sequence
/// for a map's allocation.
fn padded<I: Iterator<Item = Value>>(
    mut items: I,
    total: usize,
) -> impl ExactSizeIterator<Item = Value> {
    (0..total).map(move |_| items.next().unwrap_or_default())
}

/// The keys and values of entries, alternating, as an ordered map keeps
/// them.
struct Slots<I> {
    entries: I,
    value: Option<Value>,
}

impl<I: Iterator<Item = (Value, Value)>> Iterator for Slots<I> {
    type Item = Value;

    #[inline]
    fn next(&mut self) -> Option<Value> {
        if let Some(value) = self.value.take() {
            return Some(value);
        }
        let (key, value) = self.entries.next()?;
        self.value = Some(value);
        Some(key)
    }
}

/// A hash table, and the persistent twin of it made on first need.
type Flat = Twin<Table, HashMap>;

/// A copy of the persistent twin of `f`, to change.
fn trie(f: &Flat) -> HashMap {
    f.persistent(|table| {
        crate::meter::metered(table.iter())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    })
}

/// The map with no entries, shared by every empty map made with
/// [`Map::new`] (which therefore allocates nothing).
fn empty() -> &'static Map {
    static EMPTY: OnceLock<Map> = OnceLock::new();
    EMPTY.get_or_init(|| Map::stored(Head::Array { len: 0 }, std::iter::empty()))
}

/// The former contents of a map being emptied; dropping this drops them.
pub(super) struct Emptied<'a> {
    _head: Head,
    values: &'a mut [Value],
}

impl Drop for Emptied<'_> {
    fn drop(&mut self) {
        for v in self.values.iter_mut() {
            drop(std::mem::take(v));
        }
    }
}

impl Default for Map {
    fn default() -> Self {
        Map::new()
    }
}

impl std::fmt::Debug for Map {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Map {
    pub fn new() -> Self {
        empty().clone()
    }

    /// An empty map with room for `n` entries while it keeps them in
    /// order (at most the ordered form's limit).
    pub fn with_capacity(n: usize) -> Self {
        match n.min(ARRAY_MAP_LIMIT) {
            0 => Map::new(),
            room => Map::ordered(std::iter::empty(), 0, room),
        }
    }

    /// A map of `head` and the values after it, in one allocation.
    fn stored(head: Head, values: impl ExactSizeIterator<Item = Value>) -> Map {
        Map {
            stored: ThinArc::from_header_and_iter(head, values),
        }
    }

    /// A map of `head` and copies of `values` with the one at `at`
    /// replaced by `value` (moved in; the old one is not copied).
    fn copied(head: Head, values: &[Value], at: usize, value: Value) -> Map {
        Map::filled(head, values.len(), |slots| {
            clone_into(&mut slots[..at], &values[..at]);
            slots[at] = value;
            clone_into(&mut slots[at + 1..], &values[at + 1..]);
        })
    }

    /// A map of `head` and copies of `values`, then the `more` values
    /// (moved in).
    fn extended<const N: usize>(head: Head, values: &[Value], more: [Value; N]) -> Map {
        Map::filled(head, values.len() + N, |slots| {
            let (copies, rest) = slots.split_at_mut(values.len());
            clone_into(copies, values);
            for (slot, value) in rest.iter_mut().zip(more) {
                *slot = value;
            }
        })
    }

    /// A map of `head` and `len` values, made nil and then set by `fill`
    /// (which writes copies straight into their places, see
    /// [`clone_into`]).
    fn filled(head: Head, len: usize, fill: impl FnOnce(&mut [Value])) -> Map {
        let mut map = Map::stored(head, (0..len).map(|_| Value::Nil));
        map.change_in_place(|stored| fill(stored.slice_mut()));
        map
    }

    /// A map of `entries` in order (at most the ordered form's limit,
    /// distinct keys), with room for `room` entries in all.
    fn ordered(entries: impl Iterator<Item = (Value, Value)>, len: usize, room: usize) -> Map {
        debug_assert!(room >= len);
        let slots = Slots {
            entries,
            value: None,
        };
        Map::stored(Head::Array { len }, padded(slots, 2 * room))
    }

    /// A map with `shape`'s keys and `values` in their order (as many).
    pub(crate) fn from_shape<I>(shape: Arc<Shape>, values: I) -> Self
    where
        I: IntoIterator<Item = Value, IntoIter: ExactSizeIterator>,
    {
        let values = values.into_iter();
        debug_assert_eq!(shape.keys.len(), values.len());
        Map::stored(Head::Shaped(shape), values)
    }

    /// A map of `entries` whose keys are known to be distinct (no
    /// duplicate check), in their order while small.
    pub(crate) fn from_distinct(entries: Vec<(Value, Value)>) -> Self {
        let len = entries.len();
        if len <= ARRAY_MAP_LIMIT {
            Map::ordered(entries.into_iter(), len, len)
        } else {
            let mut table = Table::with_capacity_and_hasher(len, FixedState::default());
            table.extend(entries);
            Map::flat(table)
        }
    }

    fn flat(table: Table) -> Map {
        Map::stored(Head::Flat(Flat::new(table)), std::iter::empty())
    }

    fn hash(h: HashMap) -> Map {
        Map::stored(Head::Hash(Box::new(h)), std::iter::empty())
    }

    #[inline(always)]
    fn head(&self) -> &Head {
        &self.stored.header.header
    }

    /// The values after the head (with an ordered map's spare room).
    #[inline(always)]
    fn slice(&self) -> &[Value] {
        &self.stored.slice
    }

    /// An ordered map's entries, each key followed by its value.
    #[inline(always)]
    fn pairs(&self, len: usize) -> &[Value] {
        &self.slice()[..2 * len]
    }

    /// `change` applied to the map's allocation when this handle is its
    /// only one; `None` (and `change` not run) when it is shared.
    fn change_in_place<R>(&mut self, change: impl FnOnce(&mut Stored) -> R) -> Option<R> {
        self.stored
            .with_arc_mut(|arc| triomphe::Arc::get_mut(arc).map(change))
    }

    /// Whether this handle is the map's only one.
    pub(crate) fn is_only_holder(&self) -> bool {
        ThinArc::strong_count(&self.stored) == 1
    }

    /// Whether `a` and `b` are handles of one map.
    pub fn ptr_eq(a: &Map, b: &Map) -> bool {
        a.address() == b.address()
    }

    /// The address of the map's allocation, which its handles share.
    pub(crate) fn address(&self) -> usize {
        self.stored.heap_ptr() as usize
    }

    /// When this handle is the map's only one: the map emptied, and its
    /// former contents handed to `drop_contents` to be dropped (so that
    /// `drop.rs` can count their depth and drop deep structures without
    /// recursing).
    pub(super) fn empty_with(&mut self, drop_contents: impl FnOnce(Emptied<'_>)) {
        self.change_in_place(|stored| {
            let head = std::mem::replace(stored.header_mut(), Head::Array { len: 0 });
            drop_contents(Emptied {
                _head: head,
                values: stored.slice_mut(),
            });
        });
    }

    /// The shared key list of a map read in one shape.
    pub(crate) fn shape(&self) -> Option<&Arc<Shape>> {
        match self.head() {
            Head::Shaped(shape) => Some(shape),
            _ => None,
        }
    }

    pub fn len(&self) -> usize {
        match self.head() {
            Head::Array { len } => *len,
            Head::Shaped(_) => self.slice().len(),
            Head::Flat(f) => f.items.len(),
            Head::Hash(h) => h.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True when [`Map::iter`] gives the entries in insertion order (a
    /// small map); false when the order is the hasher's.
    pub fn keeps_insertion_order(&self) -> bool {
        matches!(self.head(), Head::Array { .. } | Head::Shaped(_))
    }

    pub fn get(&self, key: &Value) -> Option<&Value> {
        match self.head() {
            Head::Array { len } => {
                let pairs = self.pairs(*len);
                key_position(pairs.iter().step_by(2), key).map(|i| &pairs[2 * i + 1])
            }
            Head::Shaped(shape) => shape.position(key).map(|i| &self.slice()[i]),
            Head::Flat(f) => f.items.get(key),
            Head::Hash(h) => h.get(key),
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
        if let (Head::Shaped(shape), Value::Keyword(name)) = (self.head(), key) {
            if let Some(i) = shape.keyword_position(name) {
                return Some(&self.slice()[i]);
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
        if let Head::Shaped(shape) = self.head() {
            match shape.position(&key) {
                Some(i) => return self.set_slot(i, value),
                None => self.unshape(1),
            }
        }
        match self.head() {
            Head::Array { len } => {
                let len = *len;
                match key_position(self.pairs(len).iter().step_by(2), &key) {
                    Some(i) => self.set_slot(2 * i + 1, value),
                    None if len < ARRAY_MAP_LIMIT => self.push_entry(len, key, value),
                    None => {
                        let mut table = Table::with_capacity_and_hasher(
                            2 * ARRAY_MAP_LIMIT,
                            FixedState::default(),
                        );
                        table.extend(self.take_entries(len));
                        table.insert(key, value);
                        *self = Map::flat(table);
                    }
                }
            }
            Head::Flat(_) => {
                let mut entry = Some((key, value));
                // In place when both the map and its table are unshared.
                self.change_in_place(|stored| {
                    if let Head::Flat(f) = stored.header_mut() {
                        if let Some(table) = Flat::unshared(f) {
                            let (k, v) = entry.take().expect("taken once");
                            table.insert(k, v);
                        }
                    }
                });
                if let (Some((k, v)), Head::Flat(f)) = (entry, self.head()) {
                    let mut h = trie(f);
                    h.insert(k, v);
                    *self = Map::hash(h);
                }
            }
            Head::Hash(_) => {
                let mut entry = Some((key, value));
                self.change_in_place(|stored| {
                    if let Head::Hash(h) = stored.header_mut() {
                        let (k, v) = entry.take().expect("taken once");
                        h.insert(k, v);
                    }
                });
                if let (Some((k, v)), Head::Hash(h)) = (entry, self.head()) {
                    let mut h = HashMap::clone(h);
                    h.insert(k, v);
                    *self = Map::hash(h);
                }
            }
            Head::Shaped(_) => unreachable!("unshaped above"),
        }
    }

    /// Set the value in slot `at` of the slice: in place when this handle
    /// is the map's only one, else in a copy (without an ordered map's
    /// spare room).
    fn set_slot(&mut self, at: usize, value: Value) {
        let mut value = Some(value);
        self.change_in_place(|stored| {
            stored.slice_mut()[at] = value.take().expect("taken once");
        });
        if let Some(value) = value {
            let copy = match self.head() {
                Head::Array { len } => {
                    Map::copied(Head::Array { len: *len }, self.pairs(*len), at, value)
                }
                head => Map::copied(head.clone(), self.slice(), at, value),
            };
            *self = copy;
        }
    }

    /// Add an entry with a new key to an ordered map of `len` entries
    /// (fewer than its limit): into its spare room when this handle is
    /// its only one and it has some, else into a new allocation. A single
    /// holder's map grows with room to spare (it is being built); a
    /// shared one's copy is made at its exact size.
    fn push_entry(&mut self, len: usize, key: Value, value: Value) {
        let mut entry = Some((key, value));
        let has_room = 2 * (len + 1) <= self.slice().len();
        if has_room {
            self.change_in_place(|stored| {
                let (k, v) = entry.take().expect("taken once");
                let slots = &mut stored.slice_mut()[2 * len..2 * len + 2];
                slots[0] = k;
                slots[1] = v;
                *stored.header_mut() = Head::Array { len: len + 1 };
            });
        }
        let Some((key, value)) = entry else {
            return;
        };
        let mut more = Some([key, value]);
        let room = (2 * len).clamp(4, ARRAY_MAP_LIMIT).max(len + 1);
        let grown = self.change_in_place(|stored| {
            let more = more.take().expect("taken once").into_iter();
            let moved = stored.slice_mut()[..2 * len].iter_mut().map(std::mem::take);
            Map::stored(
                Head::Array { len: len + 1 },
                padded(moved.chain(more), 2 * room),
            )
        });
        *self = match (grown, more) {
            (Some(grown), _) => grown,
            (None, Some(more)) => {
                Map::extended(Head::Array { len: len + 1 }, self.pairs(len), more)
            }
            (None, None) => unreachable!("taken only in place"),
        };
    }

    /// The entries of this ordered map of `len` entries, moved out when
    /// this handle is its only one (it is about to be replaced), else
    /// copied.
    fn take_entries(&mut self, len: usize) -> std::vec::IntoIter<(Value, Value)> {
        let mut entries = Vec::with_capacity(len + 1);
        let moved = self.change_in_place(|stored| {
            let pairs = stored.slice_mut()[..2 * len].chunks_exact_mut(2);
            entries.extend(pairs.map(|p| (std::mem::take(&mut p[0]), std::mem::take(&mut p[1]))));
        });
        if moved.is_none() {
            entries.extend(self.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        entries.into_iter()
    }

    pub fn remove(&mut self, key: &Value) {
        if let Head::Shaped(shape) = self.head() {
            if shape.position(key).is_none() {
                return;
            }
            self.unshape(0);
        }
        match self.head() {
            Head::Array { len } => {
                let len = *len;
                let Some(i) = key_position(self.pairs(len).iter().step_by(2), key) else {
                    return;
                };
                let removed = self.change_in_place(|stored| {
                    let slots = &mut stored.slice_mut()[2 * i..2 * len];
                    slots.rotate_left(2);
                    let last = slots.len() - 2;
                    let gone = [
                        std::mem::take(&mut slots[last]),
                        std::mem::take(&mut slots[last + 1]),
                    ];
                    *stored.header_mut() = Head::Array { len: len - 1 };
                    gone
                });
                if removed.is_none() {
                    let pairs = self.pairs(len);
                    let kept = (0..2 * (len - 1)).map(|at| match at < 2 * i {
                        true => pairs[at].clone(),
                        false => pairs[at + 2].clone(),
                    });
                    *self = Map::stored(Head::Array { len: len - 1 }, kept);
                }
            }
            Head::Flat(_) => {
                let in_place = self.change_in_place(|stored| match stored.header_mut() {
                    Head::Flat(f) => Flat::unshared(f).map(|table| table.remove(key)),
                    _ => None,
                });
                if in_place.flatten().is_none() {
                    let Head::Flat(f) = self.head() else {
                        unreachable!("matched above")
                    };
                    if !f.items.contains_key(key) {
                        return;
                    }
                    let mut h = trie(f);
                    h.remove(key);
                    *self = Map::hash(h);
                }
            }
            Head::Hash(_) => {
                let in_place = self.change_in_place(|stored| {
                    if let Head::Hash(h) = stored.header_mut() {
                        h.remove(key);
                    }
                });
                if in_place.is_none() {
                    let Head::Hash(h) = self.head() else {
                        unreachable!("matched above")
                    };
                    if h.contains_key(key) {
                        let mut h = HashMap::clone(h);
                        h.remove(key);
                        *self = Map::hash(h);
                    }
                }
            }
            Head::Shaped(_) => unreachable!("unshaped above"),
        }
    }

    /// Turn a shaped map into a plain ordered list of its entries, with
    /// room for `more` entries (the list may be longer than an ordered
    /// map grows: the next added key turns it into a hash map).
    fn unshape(&mut self, more: usize) {
        if let Head::Shaped(shape) = self.head() {
            let shape = shape.clone();
            let len = shape.keys.len();
            let mut values = Vec::with_capacity(len);
            let moved = self.change_in_place(|stored| {
                values.extend(stored.slice_mut().iter_mut().map(std::mem::take));
            });
            if moved.is_none() {
                values.extend(self.slice().iter().cloned());
            }
            let entries = shape.keys.iter().cloned().zip(values);
            *self = Map::ordered(entries, len, len + more);
        }
    }

    /// Functional update: a new map with `key` set. A small map is copied
    /// once, sized for the new entry, and the value it replaces is not
    /// copied at all.
    pub fn assoc(&self, key: Value, value: Value) -> Map {
        match self.head() {
            Head::Shaped(shape) => match shape.position(&key) {
                Some(i) => Map::copied(Head::Shaped(shape.clone()), self.slice(), i, value),
                None => self.with_new_entry(key, value),
            },
            Head::Array { len } => {
                let pairs = self.pairs(*len);
                match key_position(pairs.iter().step_by(2), &key) {
                    Some(i) => Map::copied(Head::Array { len: *len }, pairs, 2 * i + 1, value),
                    None => self.with_new_entry(key, value),
                }
            }
            Head::Flat(_) | Head::Hash(_) => {
                let mut m = self.clone();
                m.insert(key, value);
                m
            }
        }
    }

    /// A copy of this small map (a list or shaped) with `key`, which it
    /// does not have, added: its entries copied once, straight into the
    /// form the new size takes (the table `insert` would make past eight).
    /// A shaped map that gains the key its shape was first extended by
    /// keeps sharing keys: only its values are copied.
    fn with_new_entry(&self, key: Value, value: Value) -> Map {
        let n = self.len() + 1;
        if let Head::Shaped(shape) = self.head() {
            if n <= ARRAY_MAP_LIMIT {
                if let Some(next) = shape.extended(&key) {
                    return Map::extended(Head::Shaped(next), self.slice(), [value]);
                }
            }
        }
        if let (Head::Array { len }, true) = (self.head(), n <= ARRAY_MAP_LIMIT) {
            return Map::extended(Head::Array { len: n }, self.pairs(*len), [key, value]);
        }
        let entries = self
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .chain(std::iter::once((key, value)));
        if n <= ARRAY_MAP_LIMIT {
            return Map::ordered(entries, n, n);
        }
        let mut table = Table::with_capacity_and_hasher(2 * ARRAY_MAP_LIMIT, FixedState::default());
        table.extend(entries);
        Map::flat(table)
    }

    pub fn dissoc(&self, key: &Value) -> Map {
        let mut m = self.clone();
        m.remove(key);
        m
    }

    pub fn iter(&self) -> MapIter<'_> {
        match self.head() {
            Head::Array { len } => MapIter::Array(self.pairs(*len).chunks_exact(2)),
            Head::Shaped(shape) => MapIter::Shaped(shape.keys.iter().zip(self.slice().iter())),
            Head::Flat(f) => MapIter::Flat(f.items.iter()),
            Head::Hash(h) => MapIter::Hash(h.iter()),
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
    /// An ordered map's entries: each chunk a key and its value.
    Array(std::slice::ChunksExact<'a, Value>),
    Shaped(std::iter::Zip<std::slice::Iter<'a, Value>, std::slice::Iter<'a, Value>>),
    Flat(std::collections::hash_map::Iter<'a, Value, Value>),
    Hash(imbl::hashmap::Iter<'a, Value, Value, imbl::shared_ptr::DefaultSharedPtr>),
}

impl<'a> Iterator for MapIter<'a> {
    type Item = (&'a Value, &'a Value);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            MapIter::Array(it) => it.next().map(|pair| (&pair[0], &pair[1])),
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
    /// The entries gathered first (a repeated key keeps its first place
    /// and its last value), so the map is allocated once, at its size.
    fn from_iter<T: IntoIterator<Item = (Value, Value)>>(iter: T) -> Self {
        let mut iter = iter.into_iter();
        let mut entries: Vec<(Value, Value)> =
            Vec::with_capacity(iter.size_hint().0.min(ARRAY_MAP_LIMIT));
        while let Some((k, v)) = iter.next() {
            match key_position(entries.iter().map(|(k, _)| k), &k) {
                Some(i) => entries[i].1 = v,
                None if entries.len() < ARRAY_MAP_LIMIT => entries.push((k, v)),
                None => {
                    // One entry at a time, as `insert` does, so the table
                    // grows (and orders its entries) the same way.
                    let mut table =
                        Table::with_capacity_and_hasher(2 * ARRAY_MAP_LIMIT, FixedState::default());
                    table.extend(entries);
                    table.insert(k, v);
                    for (k, v) in iter {
                        table.insert(k, v);
                    }
                    return Map::flat(table);
                }
            }
        }
        let len = entries.len();
        Map::ordered(entries.into_iter(), len, len)
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
    use proptest::prelude::*;

    /// The keyword `:k{i}`.
    fn kw(i: usize) -> Value {
        Value::keyword(&format!("k{i}"))
    }

    /// A map's entries as printed (`:k=v`), in its order.
    fn entries(m: &Map) -> Vec<String> {
        let print = crate::value::pr_str;
        m.iter()
            .map(|(k, v)| format!("{}={}", print(k), print(v)))
            .collect()
    }

    /// A map's keys as printed, in its order.
    fn keys(m: &Map) -> String {
        m.keys()
            .map(crate::value::pr_str)
            .collect::<Vec<_>>()
            .join(" ")
    }

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
        assert!(matches!(replaced.head(), Head::Shaped(_)));
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
        let array: Map = (0..3).map(|i| (kw(i), Value::Int(i as i64))).collect();
        let replaced = array.assoc(kw(1), Value::str("one"));
        assert_eq!(keys(&replaced), ":k0 :k1 :k2");
        assert_eq!(replaced.get(&kw(1)), Some(&Value::str("one")));
        assert_eq!(array.get(&kw(1)), Some(&Value::Int(1)));
        let mut grown = array.clone();
        for i in 3..ARRAY_MAP_LIMIT {
            grown = grown.assoc(kw(i), Value::Int(i as i64));
            assert!(matches!(grown.head(), Head::Array { .. }));
        }
        assert_eq!(array.len(), 3);
        let hashed = grown.assoc(kw(99), Value::Nil);
        assert!(matches!(hashed.head(), Head::Flat(_)));
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
        assert!(matches!(added.head(), Head::Flat(_)));
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
        let shape_of = |m: &Map| match m.head() {
            Head::Shaped(shape) => shape.clone(),
            other => panic!("not shaped: {other:?}"),
        };
        let (first, second) = (order(1), order(2));
        let a = first.assoc(kw("total"), Value::Float(9.5));
        let b = second.assoc(kw("total"), Value::Float(1.5));
        assert!(Arc::ptr_eq(&shape_of(&a), &shape_of(&b)));
        assert_eq!(entries(&a), [":id=1", ":qty=2", ":total=9.5"]);
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
        assert!(matches!(c.head(), Head::Array { .. }));
        assert_eq!(c.len(), 3);
        let d = order(4).assoc(kw("total"), Value::Nil);
        assert!(Arc::ptr_eq(&shape_of(&a), &shape_of(&d)));
        // Extensions chain, up to the size a list map keeps in order.
        let mut m = a.clone();
        for i in 3..ARRAY_MAP_LIMIT {
            m = m.assoc(kw(&format!("k{i}")), Value::Int(i as i64));
            assert!(matches!(m.head(), Head::Shaped(_)), "{i}");
        }
        let hashed = m.assoc(kw("last"), Value::Nil);
        assert!(matches!(hashed.head(), Head::Flat(_)));
        assert_eq!(hashed.len(), ARRAY_MAP_LIMIT + 1);
    }

    #[test]
    fn a_single_holder_changes_its_map_in_place_and_a_shared_map_is_copied_first() {
        assert_eq!(std::mem::size_of::<Map>(), std::mem::size_of::<usize>());
        let empty = Map::new();
        let mut built = Map::new();
        built.insert(kw(0), Value::Int(0));
        built.insert(kw(1), Value::Int(1));
        // Room for four once a single holder grows it: the next two
        // entries go into the same allocation.
        let address = built.address();
        built.insert(kw(2), Value::Int(2));
        built.insert(kw(3), Value::Int(3));
        assert_eq!(built.address(), address);
        for i in 4..ARRAY_MAP_LIMIT {
            built.insert(kw(i), Value::Int(i as i64));
        }
        assert!(empty.is_empty(), "the shared empty map is unchanged");
        assert!(matches!(
            built.head(),
            Head::Array {
                len: ARRAY_MAP_LIMIT
            }
        ));
        assert_eq!(keys(&built), ":k0 :k1 :k2 :k3 :k4 :k5 :k6 :k7");

        let shared = built.clone();
        built.insert(kw(0), Value::Nil);
        assert!(!Map::ptr_eq(&built, &shared), "copied before the change");
        assert_eq!(shared.get(&kw(0)), Some(&Value::Int(0)));
        assert_eq!(built.get(&kw(0)), Some(&Value::Nil));
        // Now the only holder of its copy: changed in place.
        let address = built.address();
        built.insert(kw(1), Value::Nil);
        built.remove(&kw(2));
        built.remove(&kw(99));
        assert_eq!(built.address(), address);
        assert_eq!(keys(&built), ":k0 :k1 :k3 :k4 :k5 :k6 :k7");
        built.insert(kw(2), Value::Int(2));
        assert_eq!(keys(&built), ":k0 :k1 :k3 :k4 :k5 :k6 :k7 :k2");

        let mut removed = shared.clone();
        removed.remove(&kw(3));
        assert_eq!(
            (shared.len(), removed.len()),
            (ARRAY_MAP_LIMIT, ARRAY_MAP_LIMIT - 1)
        );
        assert_eq!(shared.get(&kw(3)), Some(&Value::Int(3)));
        assert_eq!(removed.get(&kw(3)), None);

        // Spare room is no entry: a map grown with room equals, hashes
        // and iterates like one made at its size.
        let mut roomy = Map::with_capacity(6);
        roomy.insert(kw(5), Value::Int(5));
        roomy.insert(kw(6), Value::Int(6));
        let exact = Map::from_distinct(vec![(kw(5), Value::Int(5)), (kw(6), Value::Int(6))]);
        assert_eq!(roomy, exact);
        assert_eq!(roomy.unordered_hash(), exact.unordered_hash());
        assert_eq!(keys(&roomy), ":k5 :k6");
        assert_eq!(roomy.len(), 2);
        assert_eq!(roomy.get(&Value::Nil), None, "no nil key in the spare room");
    }

    #[test]
    fn a_shaped_map_changed_by_its_single_holder_keeps_the_other_shaped_maps_alone() {
        let kw = |name: &str| Value::keyword(name);
        let shape = Shape::new(vec![kw("id"), kw("qty")]);
        let first = Map::from_shape(shape.clone(), vec![Value::Int(1), Value::Int(2)]);
        let mut second = Map::from_shape(shape, vec![Value::Int(3), Value::Int(4)]);
        let address = second.address();
        second.insert(kw("qty"), Value::Int(40));
        assert_eq!(second.address(), address, "a value replaced in place");
        assert!(matches!(second.head(), Head::Shaped(_)));
        second.insert(kw("note"), Value::Nil);
        assert!(matches!(second.head(), Head::Array { len: 3 }));
        second.remove(&kw("id"));
        assert_eq!(entries(&second), [":qty=40", ":note=nil"]);
        assert_eq!(entries(&first), [":id=1", ":qty=2"]);
    }

    #[test]
    fn a_collected_map_keeps_first_places_and_last_values_like_inserts() {
        let kw = |i: i64| Value::keyword(&format!("k{i}"));
        let pairs = |n: i64| {
            (0..n)
                .chain([1, 0])
                .map(move |i| (kw(i), Value::Int(i * 10 + n)))
        };
        for n in [
            0,
            1,
            3,
            ARRAY_MAP_LIMIT as i64,
            ARRAY_MAP_LIMIT as i64 + 1,
            40,
        ] {
            let collected: Map = pairs(n).collect();
            let mut inserted = Map::new();
            for (k, v) in pairs(n) {
                inserted.insert(k, v);
            }
            assert_eq!(collected, inserted, "{n}");
            assert_eq!(collected.len(), n.max(2) as usize, "{n}");
            assert_eq!(
                collected
                    .keys()
                    .map(crate::value::pr_str)
                    .collect::<Vec<_>>(),
                inserted
                    .keys()
                    .map(crate::value::pr_str)
                    .collect::<Vec<_>>(),
                "{n}: the same order"
            );
            assert_eq!(
                collected.keeps_insertion_order(),
                n <= ARRAY_MAP_LIMIT as i64,
                "{n}"
            );
        }
        let small: Map = pairs(3).collect();
        assert_eq!(entries(&small), [":k0=3", ":k1=13", ":k2=23"]);
    }

    #[test]
    fn changing_a_shared_flat_map_leaves_the_original_alone() {
        let original = squares(100);
        assert!(matches!(original.head(), Head::Flat(_)));
        let added = original.assoc(Value::Int(1000), Value::Nil);
        let replaced = original.assoc(Value::Int(3), Value::Int(-1));
        let removed = original.dissoc(&Value::Int(5));
        assert_eq!(original.len(), 100);
        assert_eq!(original.get(&Value::Int(3)), Some(&Value::Int(9)));
        assert!(original.contains_key(&Value::Int(5)));
        assert_eq!((added.len(), replaced.len(), removed.len()), (101, 100, 99));
        assert_eq!(replaced.get(&Value::Int(3)), Some(&Value::Int(-1)));
        assert!(matches!(added.head(), Head::Hash(_)));
    }

    #[test]
    fn an_owned_flat_map_changes_in_place_and_equality_ignores_the_representation() {
        let mut owned = squares(20);
        owned.insert(Value::Int(0), Value::str("zero"));
        owned.remove(&Value::Int(19));
        assert!(matches!(owned.head(), Head::Flat(_)));
        let mut via_trie = squares(20).assoc(Value::Int(0), Value::str("zero"));
        via_trie.remove(&Value::Int(19));
        assert!(matches!(via_trie.head(), Head::Hash(_)));
        assert_eq!(owned, via_trie);
        assert_eq!(owned.unordered_hash(), via_trie.unordered_hash());
        let distinct = Map::from_distinct(
            (0..20)
                .map(|i| (Value::Int(i), Value::Int(i * i)))
                .collect(),
        );
        assert_eq!(distinct, squares(20));
    }

    /// A change to a map, and whether it goes through a shared handle.
    #[derive(Debug, Clone)]
    enum Change {
        Insert(usize, i64),
        Remove(usize),
        Assoc(usize, i64),
        Dissoc(usize),
        /// Keep a handle (and what the map holds now), to check later
        /// that no change through another handle reached it.
        Keep,
    }

    /// Twelve keys of three kinds: keywords (the shaped form's fast
    /// path), strings and integers.
    fn key_of(i: usize) -> Value {
        match i % 3 {
            0 => kw(i),
            1 => Value::str(&format!("s{i}")),
            _ => Value::Int(i as i64),
        }
    }

    fn change() -> impl Strategy<Value = Change> {
        prop_oneof![
            4 => (0..12usize, any::<i64>()).prop_map(|(k, v)| Change::Insert(k, v)),
            2 => (0..12usize).prop_map(Change::Remove),
            2 => (0..12usize, any::<i64>()).prop_map(|(k, v)| Change::Assoc(k, v)),
            1 => (0..12usize).prop_map(Change::Dissoc),
            1 => Just(Change::Keep),
        ]
    }

    /// The map holds exactly the model's entries, in its order while it
    /// keeps insertion order.
    fn holds(m: &Map, model: &[(Value, Value)]) -> Result<(), TestCaseError> {
        prop_assert_eq!(m.len(), model.len());
        for i in 0..12 {
            let k = key_of(i);
            let expected = model.iter().find(|(mk, _)| *mk == k).map(|(_, v)| v);
            prop_assert_eq!(m.get(&k), expected, "key {}", i);
        }
        if m.keeps_insertion_order() {
            let entries: Vec<(Value, Value)> =
                m.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            prop_assert_eq!(&entries[..], model);
        }
        let rebuilt: Map = model.iter().cloned().collect();
        prop_assert!(*m == rebuilt);
        prop_assert_eq!(m.unordered_hash(), rebuilt.unordered_hash());
        Ok(())
    }

    proptest! {
        /// Maps changed in place by their single holder and copied through
        /// shared handles (ordered, shaped, flat and trie forms) agree with
        /// a plain list of entries, and no change reaches another handle.
        #[test]
        fn changes_agree_with_a_list_of_entries_and_never_reach_other_handles(
            shaped in 0..4usize,
            changes in proptest::collection::vec(change(), 0..60),
        ) {
            // Start empty or shaped (keywords k0, k3, k6 from the start).
            let mut model: Vec<(Value, Value)> = (0..shaped)
                .map(|i| (key_of(3 * i), Value::Int(i as i64)))
                .collect();
            let mut m = match shaped {
                0 => Map::new(),
                _ => Map::from_shape(
                    Shape::new(model.iter().map(|(k, _)| k.clone()).collect()),
                    model.iter().map(|(_, v)| v.clone()).collect::<Vec<_>>(),
                ),
            };
            let mut kept: Vec<(Map, Vec<(Value, Value)>)> = Vec::new();
            for change in changes {
                match change {
                    Change::Insert(k, v) | Change::Assoc(k, v) => {
                        let (key, value) = (key_of(k), Value::Int(v));
                        match model.iter_mut().find(|(mk, _)| *mk == key) {
                            Some(entry) => entry.1 = value.clone(),
                            None => model.push((key.clone(), value.clone())),
                        }
                        match change {
                            Change::Insert(..) => m.insert(key, value),
                            _ => m = m.assoc(key, value),
                        }
                    }
                    Change::Remove(k) | Change::Dissoc(k) => {
                        let key = key_of(k);
                        model.retain(|(mk, _)| *mk != key);
                        match change {
                            Change::Remove(_) => m.remove(&key),
                            _ => m = m.dissoc(&key),
                        }
                    }
                    Change::Keep => kept.push((m.clone(), model.clone())),
                }
                holds(&m, &model)?;
            }
            for (handle, entries) in &kept {
                holds(handle, entries)?;
            }
        }
    }
}
