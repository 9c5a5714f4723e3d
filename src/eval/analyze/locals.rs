//! The locals visible while analyzing one function: a stack of names in
//! order of declaration, indexed by name, so looking a name up costs the
//! same with ten locals as with a hundred thousand (a `let` of 100k
//! bindings, or a long `some->` whose steps rebind one name).

use std::collections::HashMap;

use crate::value::{ArcStr, FixedState};

/// Declared locals, innermost last, with each name's places (innermost last).
pub(super) struct Locals<P: Copy> {
    order: Vec<ArcStr>,
    by_name: HashMap<ArcStr, Vec<P>, FixedState>,
}

impl<P: Copy> Default for Locals<P> {
    fn default() -> Self {
        Locals {
            order: Vec::new(),
            by_name: HashMap::default(),
        }
    }
}

impl<P: Copy> Locals<P> {
    pub(super) fn push(&mut self, name: ArcStr, place: P) {
        self.by_name.entry(name.clone()).or_default().push(place);
        self.order.push(name);
    }

    pub(super) fn len(&self) -> usize {
        self.order.len()
    }

    /// Forget the locals declared after the first `len`.
    pub(super) fn truncate(&mut self, len: usize) {
        while self.order.len() > len {
            let Some(name) = self.order.pop() else { break };
            if let Some(places) = self.by_name.get_mut(&name) {
                places.pop();
                if places.is_empty() {
                    self.by_name.remove(&name);
                }
            }
        }
    }

    pub(super) fn clear(&mut self) {
        self.order.clear();
        self.by_name.clear();
    }

    /// The innermost place of `name`, if it is a local here.
    pub(super) fn find(&self, name: &str) -> Option<P> {
        self.by_name.get(name).and_then(|p| p.last().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_innermost_declaration_wins_until_it_is_released() {
        let mut l: Locals<u32> = Locals::default();
        l.push("a".into(), 1);
        l.push("b".into(), 2);
        l.push("a".into(), 3);
        assert_eq!(l.find("a"), Some(3));
        l.truncate(2);
        assert_eq!(l.find("a"), Some(1));
        assert_eq!(l.find("b"), Some(2));
        l.truncate(0);
        assert_eq!((l.find("a"), l.len()), (None, 0));
    }
}
