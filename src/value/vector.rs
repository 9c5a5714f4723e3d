//! The sequence behind vectors and lists: a plain array while small or
//! unshared, a persistent tree once changed while shared.
//!
//! Most vectors a program makes are small (a regex match's groups, a
//! `split` result, a map entry, a JSON object's tags). A persistent tree
//! allocates a whole 64-slot chunk (about 1 KB) for anything past a few
//! items, so small vectors are kept as an exactly sized array instead:
//! one small allocation, and changes copy at most `SMALL_MAX` items, no
//! more than the tree copies for a chunk.
//!
//! A larger vector built in one go (loaded data, `filter`, `mapv`, ...)
//! is a shared array (`Flat`): reading it is reading a slice. It is changed
//! in place while nobody else holds it; a change to one that is shared
//! goes to its persistent twin, a tree built once on first need and kept
//! with the array, so a program that keeps deriving new vectors from one
//! large vector pays for the copy once, not per change.
//! Which form a vector has is invisible to programs.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Index;
use std::sync::Arc;

use super::twin::Twin;

use super::Value;

/// The most items kept as a plain array (one tree chunk).
const SMALL_MAX: usize = 64;

type Tree = imbl::Vector<Value>;

/// An ordered sequence of values with persistent-vector semantics.
#[derive(Clone, Default)]
pub struct Vector(Repr);

#[derive(Clone)]
enum Repr {
    /// At most `SMALL_MAX` items, copied when a shared vector changes.
    Small(Vec<Value>),
    /// More than `SMALL_MAX` items, shared by clones.
    Flat(Arc<Flat>),
    /// Boxed, so that a vector (in its `Arc`) is 32 bytes, not 64.
    Tree(Box<Tree>),
}

/// A large array, and the persistent twin of it made on first need.
type Flat = Twin<Vec<Value>, Tree>;

/// A copy of the persistent twin of `f` (sharing its nodes), for a
/// change. Built whole, unmetered: the change's positions must stay
/// valid (a partial twin would make an update index past its end).
fn tree_of(f: &Flat) -> Tree {
    f.persistent_whole(|items| items.iter().cloned().collect())
}

/// The items of `f` in `range`: copied into an array of their own while
/// the persistent twin is not built and they are at most half of `f`,
/// otherwise `cut` from the twin (built now if need be). Building the
/// twin costs more than copying every item, and after it a cut costs
/// little. Copying at most half keeps a chain of cuts (`take` of a
/// `take`) within the first array's length in all; a chain that keeps
/// more (`rest` in a loop) builds the twin once and cuts from it.
fn part_of(f: &Flat, range: std::ops::Range<usize>, cut: impl FnOnce(&Tree) -> Tree) -> Vector {
    if f.persistent_if_built().is_none() && range.len() <= f.items.len() / 2 {
        return Vector::from_vec(f.items[range].to_vec());
    }
    // Built under the meter: once it trips the twin is partial (and not
    // kept), so no cut is made from it and the (discarded) result is
    // empty.
    let tree = f.persistent(|items| crate::meter::metered(items.iter()).cloned().collect());
    if crate::meter::tripped() {
        return Vector::new();
    }
    Vector(Repr::Tree(Box::new(cut(&tree))))
}

impl Default for Repr {
    fn default() -> Self {
        Repr::Small(Vec::new())
    }
}

impl Vector {
    pub fn new() -> Vector {
        Vector(Repr::Small(Vec::new()))
    }

    /// A vector of the given items, in the form their number calls for.
    pub fn from_vec(mut items: Vec<Value>) -> Vector {
        if items.len() <= SMALL_MAX {
            if items.capacity() > items.len() + items.len() / 4 {
                items.shrink_to_fit();
            }
            Vector(Repr::Small(items))
        } else {
            Vector(Repr::Flat(Flat::new(items)))
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Small(v) => v.len(),
            Repr::Flat(f) => f.items.len(),
            Repr::Tree(t) => t.len(),
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    pub fn get(&self, index: usize) -> Option<&Value> {
        match &self.0 {
            Repr::Small(v) => v.get(index),
            Repr::Flat(f) => f.items.get(index),
            Repr::Tree(t) => t.get(index),
        }
    }

    pub fn get_mut(&mut self, index: usize) -> Option<&mut Value> {
        if self.array_mut().is_some() {
            return self.array_mut().expect("checked").get_mut(index);
        }
        self.tree().get_mut(index)
    }

    pub fn front(&self) -> Option<&Value> {
        self.get(0)
    }

    pub fn head(&self) -> Option<&Value> {
        self.get(0)
    }

    pub fn back(&self) -> Option<&Value> {
        self.len().checked_sub(1).and_then(|i| self.get(i))
    }

    pub fn last(&self) -> Option<&Value> {
        self.back()
    }

    /// The items in order, when they are one array.
    pub fn as_slice(&self) -> Option<&[Value]> {
        match &self.0 {
            Repr::Small(v) => Some(v),
            Repr::Flat(f) => Some(&f.items),
            Repr::Tree(_) => None,
        }
    }

    #[inline]
    pub fn iter(&self) -> Iter<'_> {
        match &self.0 {
            Repr::Small(v) => Iter::Slice(v.iter()),
            Repr::Flat(f) => Iter::Slice(f.items.iter()),
            Repr::Tree(t) => Iter::Tree(t.iter()),
        }
    }

    pub fn iter_mut(&mut self) -> IterMut<'_> {
        if self.array_mut().is_some() {
            return IterMut::Slice(self.array_mut().expect("checked").iter_mut());
        }
        IterMut::Tree(self.tree().iter_mut())
    }

    /// The array of a small vector, or of a large one nobody else holds
    /// (its persistent twin, now stale, dropped); `None` otherwise.
    fn array_mut(&mut self) -> Option<&mut Vec<Value>> {
        match &mut self.0 {
            Repr::Small(v) => Some(v),
            Repr::Flat(f) => Flat::unshared(f),
            Repr::Tree(_) => None,
        }
    }

    /// The tree form, converting this vector first if it has another: a
    /// shared array gives its (cached) persistent twin, an unshared one
    /// its items.
    fn tree(&mut self) -> &mut Tree {
        let tree = match &mut self.0 {
            Repr::Tree(_) => None,
            Repr::Small(v) => Some(Tree::from(std::mem::take(v))),
            Repr::Flat(f) => match Arc::get_mut(f) {
                Some(flat) => Some(Tree::from(std::mem::take(&mut flat.items))),
                None => Some(tree_of(f)),
            },
        };
        if let Some(tree) = tree {
            self.0 = Repr::Tree(Box::new(tree));
        }
        match &mut self.0 {
            Repr::Tree(t) => t,
            _ => unreachable!("converted above"),
        }
    }

    /// Whether adding one item to the array form keeps it in its form:
    /// a small array stays within `SMALL_MAX`, an unshared large one can
    /// grow at its end.
    fn array_has_room(&mut self) -> bool {
        match &mut self.0 {
            Repr::Small(v) => v.len() < SMALL_MAX,
            Repr::Flat(f) => Arc::get_mut(f).is_some(),
            Repr::Tree(_) => false,
        }
    }

    pub fn push_back(&mut self, value: Value) {
        if let Repr::Small(v) = &mut self.0 {
            if v.len() == SMALL_MAX {
                // This vector is being changed, so nobody else holds it.
                self.0 = Repr::Flat(Flat::new(std::mem::take(v)));
            }
        }
        if self.array_has_room() {
            self.array_mut().expect("checked").push(value);
        } else {
            self.tree().push_back(value);
        }
    }

    pub fn push_front(&mut self, value: Value) {
        match &mut self.0 {
            Repr::Small(v) if v.len() < SMALL_MAX => v.insert(0, value),
            _ => self.tree().push_front(value),
        }
    }

    pub fn pop_back(&mut self) -> Option<Value> {
        match self.array_mut() {
            Some(v) => v.pop(),
            None => self.tree().pop_back(),
        }
    }

    pub fn pop_front(&mut self) -> Option<Value> {
        match &mut self.0 {
            Repr::Small(v) if v.is_empty() => None,
            Repr::Small(v) => Some(v.remove(0)),
            _ => self.tree().pop_front(),
        }
    }

    /// Replace the item at `index` (which must exist), returning the old one.
    pub fn set(&mut self, index: usize, value: Value) -> Value {
        match self.array_mut() {
            Some(v) => std::mem::replace(&mut v[index], value),
            None => self.tree().set(index, value),
        }
    }

    /// Insert at `index` (at most the length), shifting later items.
    pub fn insert(&mut self, index: usize, value: Value) {
        match &mut self.0 {
            Repr::Small(v) if v.len() < SMALL_MAX => v.insert(index, value),
            _ => self.tree().insert(index, value),
        }
    }

    /// Remove the item at `index` (which must exist).
    pub fn remove(&mut self, index: usize) -> Value {
        match &mut self.0 {
            Repr::Small(v) => v.remove(index),
            _ => self.tree().remove(index),
        }
    }

    /// Add `other`'s items at the end.
    pub fn append(&mut self, other: Vector) {
        let fits_small = matches!(&self.0, Repr::Small(v) if v.len() + other.len() <= SMALL_MAX);
        let grows_flat = matches!(&self.0, Repr::Flat(_)) && self.array_has_room();
        if fits_small || grows_flat {
            self.array_mut().expect("checked").extend(other);
        } else if let Repr::Tree(o) = other.0 {
            self.tree().append(*o);
        } else {
            self.tree().extend(other);
        }
    }

    /// The first `count` items (all of them if there are fewer).
    pub fn take(&self, count: usize) -> Vector {
        if count >= self.len() {
            return self.clone();
        }
        match &self.0 {
            _ if count <= SMALL_MAX => {
                Vector(Repr::Small(self.iter().take(count).cloned().collect()))
            }
            Repr::Small(_) => unreachable!("a small vector has at most SMALL_MAX items"),
            Repr::Flat(f) => part_of(f, 0..count, |t| t.take(count)),
            Repr::Tree(t) => Vector(Repr::Tree(Box::new(t.take(count)))),
        }
    }

    /// All items after the first `count`.
    pub fn skip(&self, count: usize) -> Vector {
        if count == 0 {
            return self.clone();
        }
        let rest = self.len().saturating_sub(count);
        match &self.0 {
            _ if rest <= SMALL_MAX => {
                Vector(Repr::Small(self.iter().skip(count).cloned().collect()))
            }
            Repr::Small(_) => unreachable!("a small vector has at most SMALL_MAX items"),
            Repr::Flat(f) => part_of(f, count..f.items.len(), |t| t.skip(count)),
            Repr::Tree(t) => Vector(Repr::Tree(Box::new(t.skip(count)))),
        }
    }

    pub fn truncate(&mut self, len: usize) {
        match self.array_mut() {
            Some(v) => v.truncate(len),
            None => self.tree().truncate(len),
        }
    }

    /// Keep the items for which `keep` is true.
    pub fn retain(&mut self, mut keep: impl FnMut(&Value) -> bool) {
        match self.array_mut() {
            Some(v) => v.retain(|x| keep(x)),
            None => self.tree().retain(|x| keep(x)),
        }
    }

    /// Split into the items before `index` and the rest.
    pub fn split_at(self, index: usize) -> (Vector, Vector) {
        (self.take(index), self.skip(index))
    }

    /// Keep the items before `index`; return the rest.
    pub fn split_off(&mut self, index: usize) -> Vector {
        let rest = self.skip(index);
        self.truncate(index);
        rest
    }
}

impl fmt::Debug for Vector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl PartialEq for Vector {
    fn eq(&self, other: &Vector) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Hash for Vector {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.len().hash(state);
        for item in self.iter() {
            item.hash(state);
        }
    }
}

impl Index<usize> for Vector {
    type Output = Value;

    fn index(&self, index: usize) -> &Value {
        match &self.0 {
            Repr::Small(v) => &v[index],
            Repr::Flat(f) => &f.items[index],
            Repr::Tree(t) => &t[index],
        }
    }
}

impl FromIterator<Value> for Vector {
    fn from_iter<I: IntoIterator<Item = Value>>(iter: I) -> Vector {
        Vector::from_vec(iter.into_iter().collect())
    }
}

impl From<Vec<Value>> for Vector {
    fn from(items: Vec<Value>) -> Vector {
        Vector::from_vec(items)
    }
}

impl<const N: usize> From<[Value; N]> for Vector {
    fn from(items: [Value; N]) -> Vector {
        Vector::from_vec(items.into())
    }
}

impl Extend<Value> for Vector {
    fn extend<I: IntoIterator<Item = Value>>(&mut self, iter: I) {
        for item in iter {
            self.push_back(item);
        }
    }
}

impl<'a> IntoIterator for &'a Vector {
    type Item = &'a Value;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl IntoIterator for Vector {
    type Item = Value;
    type IntoIter = IntoIter;

    fn into_iter(self) -> IntoIter {
        match self.0 {
            Repr::Small(v) => IntoIter(Owned::Array(v.into_iter())),
            Repr::Flat(f) => match Arc::try_unwrap(f) {
                Ok(flat) => IntoIter(Owned::Array(flat.items.into_iter())),
                Err(shared) => IntoIter(Owned::Shared {
                    flat: shared,
                    next: 0,
                }),
            },
            Repr::Tree(t) => IntoIter(Owned::Tree((*t).into_iter())),
        }
    }
}

/// Borrowing iterator over a [`Vector`].
#[derive(Clone)]
pub enum Iter<'a> {
    Slice(std::slice::Iter<'a, Value>),
    Tree(imbl::vector::Iter<'a, Value, imbl::shared_ptr::DefaultSharedPtr>),
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a Value;

    #[inline]
    fn next(&mut self) -> Option<&'a Value> {
        match self {
            Iter::Slice(i) => i.next(),
            Iter::Tree(i) => i.next(),
        }
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            Iter::Slice(i) => i.size_hint(),
            Iter::Tree(i) => i.size_hint(),
        }
    }

    fn nth(&mut self, n: usize) -> Option<&'a Value> {
        match self {
            Iter::Slice(i) => i.nth(n),
            Iter::Tree(i) => i.nth(n),
        }
    }

    fn fold<B, F: FnMut(B, &'a Value) -> B>(self, init: B, f: F) -> B {
        match self {
            Iter::Slice(i) => i.fold(init, f),
            Iter::Tree(i) => i.fold(init, f),
        }
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        match self {
            Iter::Slice(i) => i.next_back(),
            Iter::Tree(i) => i.next_back(),
        }
    }
}

impl ExactSizeIterator for Iter<'_> {}

/// Mutably borrowing iterator over a [`Vector`].
pub enum IterMut<'a> {
    Slice(std::slice::IterMut<'a, Value>),
    Tree(imbl::vector::IterMut<'a, Value, imbl::shared_ptr::DefaultSharedPtr>),
}

impl<'a> Iterator for IterMut<'a> {
    type Item = &'a mut Value;

    fn next(&mut self) -> Option<&'a mut Value> {
        match self {
            IterMut::Slice(i) => i.next(),
            IterMut::Tree(i) => i.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            IterMut::Slice(i) => i.size_hint(),
            IterMut::Tree(i) => i.size_hint(),
        }
    }
}

/// Owning iterator over a [`Vector`].
pub struct IntoIter(Owned);

enum Owned {
    Array(std::vec::IntoIter<Value>),
    /// A large array someone else also holds: its items, cloned.
    Shared {
        flat: Arc<Flat>,
        next: usize,
    },
    Tree(imbl::vector::ConsumingIter<Value, imbl::shared_ptr::DefaultSharedPtr>),
}

impl Iterator for IntoIter {
    type Item = Value;

    #[inline]
    fn next(&mut self) -> Option<Value> {
        match &mut self.0 {
            Owned::Array(i) => i.next(),
            Owned::Shared { flat, next } => {
                let item = flat.items.get(*next).cloned();
                *next += 1;
                item
            }
            Owned::Tree(i) => i.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.0 {
            Owned::Array(i) => i.size_hint(),
            Owned::Shared { flat, next } => {
                let left = flat.items.len().saturating_sub(*next);
                (left, Some(left))
            }
            Owned::Tree(i) => i.size_hint(),
        }
    }
}

impl ExactSizeIterator for IntoIter {}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(range: std::ops::Range<i64>) -> Vector {
        range.map(Value::Int).collect()
    }

    fn as_ints(v: &Vector) -> Vec<i64> {
        v.iter()
            .map(|x| match x {
                Value::Int(i) => *i,
                other => panic!("not an integer: {other:?}"),
            })
            .collect()
    }

    #[test]
    fn small_vectors_stay_arrays_and_grow_into_trees() {
        let mut v = ints(0..3);
        assert!(v.as_slice().is_some());
        for i in 3..200 {
            v.push_back(Value::Int(i));
        }
        assert!(matches!(v.0, Repr::Flat(_)), "grown in place");
        v.push_front(Value::Int(-1));
        assert!(v.as_slice().is_none());
        assert_eq!(as_ints(&v), (-1..200).collect::<Vec<_>>());
        assert_eq!(v[150], Value::Int(149));
    }

    #[test]
    fn the_same_operations_agree_in_both_forms() {
        for n in [0i64, 1, 5, 64, 65, 300] {
            let v = ints(0..n);
            let model: Vec<i64> = (0..n).collect();
            assert_eq!(as_ints(&v), model, "collect {n}");
            let k = (n / 3) as usize;
            assert_eq!(as_ints(&v.take(k)), model[..k], "take {n}");
            assert_eq!(as_ints(&v.skip(k)), model[k..], "skip {n}");
            let (a, b) = v.clone().split_at(k);
            assert_eq!(
                (as_ints(&a), as_ints(&b)),
                (model[..k].to_vec(), model[k..].to_vec())
            );
            let mut front = v.clone();
            front.push_front(Value::Int(-1));
            assert_eq!(front.len(), v.len() + 1);
            assert_eq!(front.front(), Some(&Value::Int(-1)));
            let mut kept = v.clone();
            kept.retain(|x| matches!(x, Value::Int(i) if i % 2 == 0));
            let evens: Vec<i64> = model.iter().copied().filter(|i| i % 2 == 0).collect();
            assert_eq!(as_ints(&kept), evens);
            let mut joined = v.clone();
            joined.append(ints(0..n));
            assert_eq!(joined.len(), 2 * v.len());
            assert_eq!(v, ints(0..n));
            assert_eq!(v.iter().rev().count(), v.len());
            assert_eq!(v.clone().into_iter().map(|_| 1).sum::<usize>(), v.len());
        }
    }

    #[test]
    fn a_large_array_changes_in_place_until_shared_then_via_its_twin() {
        let mut v = ints(0..100);
        v.push_back(Value::Int(100));
        v.set(0, Value::Int(-1));
        assert!(matches!(v.0, Repr::Flat(_)), "unshared: still an array");
        let shared = v.clone();
        let mut changed = v.clone();
        changed.push_back(Value::Int(101));
        assert!(matches!(changed.0, Repr::Tree(_)));
        let Repr::Flat(f) = &shared.0 else { panic!() };
        let twin = f.persistent.get().expect("twin built") as *const Tree;
        // Deriving again from the same shared array reuses the twin.
        let rest = shared.skip(1);
        assert_eq!(f.persistent.get().unwrap() as *const Tree, twin);
        assert_eq!(rest.len(), 100);
        assert_eq!(as_ints(&shared)[..3], [-1, 1, 2]);
        assert_eq!(as_ints(&changed).last(), Some(&101));
        assert_eq!(shared.len(), 101);
        let items: Vec<Value> = shared.clone().into_iter().collect();
        assert_eq!(items.len(), 101);
    }

    #[test]
    fn a_small_part_of_a_large_array_is_copied_a_large_part_cut_from_its_twin() {
        let v = ints(0..1000);
        let Repr::Flat(f) = &v.0 else {
            panic!("a large array")
        };
        let head = v.take(400);
        let tail = v.skip(600);
        assert!(matches!(head.0, Repr::Flat(_)), "copied: an array again");
        assert!(matches!(tail.0, Repr::Flat(_)));
        assert!(f.persistent.get().is_none(), "no twin built for a copy");
        assert_eq!(as_ints(&head), (0..400).collect::<Vec<_>>());
        assert_eq!(as_ints(&tail), (600..1000).collect::<Vec<_>>());
        // `rest` in a loop keeps almost everything: the twin is built once
        // and every later cut comes from a tree.
        let rest = v.skip(1);
        assert!(matches!(rest.0, Repr::Tree(_)));
        assert!(f.persistent.get().is_some());
        assert_eq!(as_ints(&rest.skip(1)), (2..1000).collect::<Vec<_>>());
        // Once the twin exists, even a small part comes from it.
        assert!(matches!(v.take(100).0, Repr::Tree(_)));
        assert_eq!(as_ints(&v.take(100)), (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn a_changed_clone_leaves_the_original_alone() {
        for n in [10i64, 100, 1000] {
            let original = ints(0..n);
            let mut copy = original.clone();
            copy.set(0, Value::Int(99));
            copy.push_back(Value::Int(7));
            assert_eq!(as_ints(&original), (0..n).collect::<Vec<_>>());
            assert_eq!(copy[0], Value::Int(99));
        }
    }
}
