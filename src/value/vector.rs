//! The sequence behind vectors and lists: a plain array while small, a
//! persistent tree once it grows.
//!
//! Most vectors a program makes are small (a regex match's groups, a
//! `split` result, a map entry, a JSON object's tags). A persistent tree
//! allocates a whole 64-slot chunk (about 1 KB) for anything past a few
//! items, so small vectors are kept as an exactly sized array instead:
//! one small allocation, and changes copy at most `SMALL_MAX` items, no
//! more than the tree copies for a chunk. Past `SMALL_MAX` items the
//! vector becomes an `imbl::Vector`, whose changes share structure.
//! Which form a vector has is invisible to programs.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Index;

use super::Value;

/// The most items kept as a plain array (one tree chunk).
const SMALL_MAX: usize = 64;

type Tree = imbl::Vector<Value>;

/// An ordered sequence of values with persistent-vector semantics.
#[derive(Clone, Default)]
pub struct Vector(Repr);

#[derive(Clone)]
enum Repr {
    Small(Vec<Value>),
    Tree(Tree),
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
            Vector(Repr::Tree(Tree::from(items)))
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Small(v) => v.len(),
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
            Repr::Tree(t) => t.get(index),
        }
    }

    pub fn get_mut(&mut self, index: usize) -> Option<&mut Value> {
        match &mut self.0 {
            Repr::Small(v) => v.get_mut(index),
            Repr::Tree(t) => t.get_mut(index),
        }
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

    /// The items in order; a slice when the vector is small.
    pub fn as_slice(&self) -> Option<&[Value]> {
        match &self.0 {
            Repr::Small(v) => Some(v),
            Repr::Tree(_) => None,
        }
    }

    #[inline]
    pub fn iter(&self) -> Iter<'_> {
        match &self.0 {
            Repr::Small(v) => Iter::Small(v.iter()),
            Repr::Tree(t) => Iter::Tree(t.iter()),
        }
    }

    pub fn iter_mut(&mut self) -> IterMut<'_> {
        match &mut self.0 {
            Repr::Small(v) => IterMut::Small(v.iter_mut()),
            Repr::Tree(t) => IterMut::Tree(t.iter_mut()),
        }
    }

    /// The tree form, converting this vector if it is still small.
    fn tree(&mut self) -> &mut Tree {
        if let Repr::Small(v) = &mut self.0 {
            let items = std::mem::take(v);
            self.0 = Repr::Tree(Tree::from(items));
        }
        match &mut self.0 {
            Repr::Tree(t) => t,
            Repr::Small(_) => unreachable!("converted above"),
        }
    }

    pub fn push_back(&mut self, value: Value) {
        match &mut self.0 {
            Repr::Small(v) if v.len() < SMALL_MAX => v.push(value),
            _ => self.tree().push_back(value),
        }
    }

    pub fn push_front(&mut self, value: Value) {
        match &mut self.0 {
            Repr::Small(v) if v.len() < SMALL_MAX => v.insert(0, value),
            _ => self.tree().push_front(value),
        }
    }

    pub fn pop_back(&mut self) -> Option<Value> {
        match &mut self.0 {
            Repr::Small(v) => v.pop(),
            Repr::Tree(t) => t.pop_back(),
        }
    }

    pub fn pop_front(&mut self) -> Option<Value> {
        match &mut self.0 {
            Repr::Small(v) if v.is_empty() => None,
            Repr::Small(v) => Some(v.remove(0)),
            Repr::Tree(t) => t.pop_front(),
        }
    }

    /// Replace the item at `index` (which must exist), returning the old one.
    pub fn set(&mut self, index: usize, value: Value) -> Value {
        match &mut self.0 {
            Repr::Small(v) => std::mem::replace(&mut v[index], value),
            Repr::Tree(t) => t.set(index, value),
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
            Repr::Tree(t) => t.remove(index),
        }
    }

    /// Add `other`'s items at the end.
    pub fn append(&mut self, other: Vector) {
        match (&mut self.0, other.0) {
            (Repr::Small(v), Repr::Small(o)) if v.len() + o.len() <= SMALL_MAX => v.extend(o),
            (_, Repr::Tree(o)) => self.tree().append(o),
            (_, Repr::Small(o)) => self.tree().extend(o),
        }
    }

    /// The first `count` items (all of them if there are fewer).
    pub fn take(&self, count: usize) -> Vector {
        match &self.0 {
            Repr::Small(v) => Vector(Repr::Small(v[..count.min(v.len())].to_vec())),
            Repr::Tree(t) if count <= SMALL_MAX => {
                Vector(Repr::Small(t.iter().take(count).cloned().collect()))
            }
            Repr::Tree(t) => Vector(Repr::Tree(t.take(count))),
        }
    }

    /// All items after the first `count`.
    pub fn skip(&self, count: usize) -> Vector {
        match &self.0 {
            Repr::Small(v) => Vector(Repr::Small(v[count.min(v.len())..].to_vec())),
            Repr::Tree(t) if t.len().saturating_sub(count) <= SMALL_MAX => {
                Vector(Repr::Small(t.iter().skip(count).cloned().collect()))
            }
            Repr::Tree(t) => Vector(Repr::Tree(t.skip(count))),
        }
    }

    pub fn truncate(&mut self, len: usize) {
        match &mut self.0 {
            Repr::Small(v) => v.truncate(len),
            Repr::Tree(t) => t.truncate(len),
        }
    }

    /// Keep the items for which `keep` is true.
    pub fn retain(&mut self, mut keep: impl FnMut(&Value) -> bool) {
        match &mut self.0 {
            Repr::Small(v) => v.retain(|x| keep(x)),
            Repr::Tree(t) => t.retain(|x| keep(x)),
        }
    }

    /// Split into the items before `index` and the rest.
    pub fn split_at(self, index: usize) -> (Vector, Vector) {
        let (left, right) = match self.0 {
            Repr::Small(mut v) => {
                let right = v.split_off(index);
                return (Vector(Repr::Small(v)), Vector(Repr::Small(right)));
            }
            Repr::Tree(t) => t.split_at(index),
        };
        (Vector(Repr::Tree(left)), Vector(Repr::Tree(right)))
    }

    /// Keep the items before `index`; return the rest.
    pub fn split_off(&mut self, index: usize) -> Vector {
        match &mut self.0 {
            Repr::Small(v) => Vector(Repr::Small(v.split_off(index))),
            Repr::Tree(t) => Vector(Repr::Tree(t.split_off(index))),
        }
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
            Repr::Small(v) => IntoIter::Small(v.into_iter()),
            Repr::Tree(t) => IntoIter::Tree(t.into_iter()),
        }
    }
}

/// Borrowing iterator over a [`Vector`].
#[derive(Clone)]
pub enum Iter<'a> {
    Small(std::slice::Iter<'a, Value>),
    Tree(imbl::vector::Iter<'a, Value, imbl::shared_ptr::DefaultSharedPtr>),
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a Value;

    #[inline]
    fn next(&mut self) -> Option<&'a Value> {
        match self {
            Iter::Small(i) => i.next(),
            Iter::Tree(i) => i.next(),
        }
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            Iter::Small(i) => i.size_hint(),
            Iter::Tree(i) => i.size_hint(),
        }
    }

    fn nth(&mut self, n: usize) -> Option<&'a Value> {
        match self {
            Iter::Small(i) => i.nth(n),
            Iter::Tree(i) => i.nth(n),
        }
    }

    fn fold<B, F: FnMut(B, &'a Value) -> B>(self, init: B, f: F) -> B {
        match self {
            Iter::Small(i) => i.fold(init, f),
            Iter::Tree(i) => i.fold(init, f),
        }
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        match self {
            Iter::Small(i) => i.next_back(),
            Iter::Tree(i) => i.next_back(),
        }
    }
}

impl ExactSizeIterator for Iter<'_> {}

/// Mutably borrowing iterator over a [`Vector`].
pub enum IterMut<'a> {
    Small(std::slice::IterMut<'a, Value>),
    Tree(imbl::vector::IterMut<'a, Value, imbl::shared_ptr::DefaultSharedPtr>),
}

impl<'a> Iterator for IterMut<'a> {
    type Item = &'a mut Value;

    fn next(&mut self) -> Option<&'a mut Value> {
        match self {
            IterMut::Small(i) => i.next(),
            IterMut::Tree(i) => i.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            IterMut::Small(i) => i.size_hint(),
            IterMut::Tree(i) => i.size_hint(),
        }
    }
}

/// Owning iterator over a [`Vector`].
pub enum IntoIter {
    Small(std::vec::IntoIter<Value>),
    Tree(imbl::vector::ConsumingIter<Value, imbl::shared_ptr::DefaultSharedPtr>),
}

impl Iterator for IntoIter {
    type Item = Value;

    #[inline]
    fn next(&mut self) -> Option<Value> {
        match self {
            IntoIter::Small(i) => i.next(),
            IntoIter::Tree(i) => i.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            IntoIter::Small(i) => i.size_hint(),
            IntoIter::Tree(i) => i.size_hint(),
        }
    }
}

impl DoubleEndedIterator for IntoIter {
    fn next_back(&mut self) -> Option<Value> {
        match self {
            IntoIter::Small(i) => i.next_back(),
            IntoIter::Tree(i) => i.next_back(),
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
        assert!(v.as_slice().is_none());
        assert_eq!(as_ints(&v), (0..200).collect::<Vec<_>>());
        assert_eq!(v[150], Value::Int(150));
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
    fn a_changed_clone_leaves_the_original_alone() {
        for n in [10i64, 100] {
            let original = ints(0..n);
            let mut copy = original.clone();
            copy.set(0, Value::Int(99));
            copy.push_back(Value::Int(7));
            assert_eq!(as_ints(&original), (0..n).collect::<Vec<_>>());
            assert_eq!(copy[0], Value::Int(99));
        }
    }
}
