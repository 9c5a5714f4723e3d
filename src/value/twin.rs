//! A large collection that its single owner changes in place, with a
//! persistent twin built once, on the first change through a shared
//! reference, for that change and every later one to continue from.
//! Large vectors, sets and maps (`vector.rs`, `set.rs`, `map.rs`) are
//! built this way.

use std::sync::{Arc, OnceLock};

/// `items` in their flat form, and their persistent twin once needed.
#[derive(Debug)]
pub(super) struct Twin<T, P> {
    pub(super) items: T,
    pub(super) persistent: OnceLock<P>,
}

impl<T, P> Twin<T, P> {
    pub(super) fn new(items: T) -> Arc<Self> {
        Arc::new(Twin {
            items,
            persistent: OnceLock::new(),
        })
    }

    /// The items to change in place when `this` is their only holder
    /// (the twin, now stale, is dropped); `None` when shared.
    pub(super) fn unshared(this: &mut Arc<Self>) -> Option<&mut T> {
        Arc::get_mut(this).map(|twin| {
            twin.persistent.take();
            &mut twin.items
        })
    }

    /// The persistent twin, if it has been built.
    pub(super) fn persistent_if_built(&self) -> Option<&P> {
        self.persistent.get()
    }

    /// A copy of the persistent twin, built from the items by `build` on
    /// first need. `build` meters its work ([`crate::meter::metered`]):
    /// a build the meter cut short gives a partial twin, returned for
    /// the (discarded) change at hand but never kept.
    pub(super) fn persistent(&self, build: impl FnOnce(&T) -> P) -> P
    where
        P: Clone,
    {
        if let Some(built) = self.persistent.get() {
            return built.clone();
        }
        let built = build(&self.items);
        if crate::meter::tripped() {
            return built;
        }
        self.persistent.get_or_init(|| built).clone()
    }

    /// A copy of the persistent twin, built whole (never cut short) by
    /// `build` on first need.
    pub(super) fn persistent_whole(&self, build: impl FnOnce(&T) -> P) -> P
    where
        P: Clone,
    {
        self.persistent.get_or_init(|| build(&self.items)).clone()
    }
}
