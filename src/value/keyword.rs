//! Keyword names interned for the process, as Clojure interns keywords:
//! the `:price` of a program and the `price` key of every loaded JSON
//! object share one allocation, so looking a keyword up in a map usually
//! succeeds on a pointer comparison instead of comparing text.
//!
//! Names only the table still holds are dropped from time to time, so
//! keywords made at run time (`(keyword (str "k" i))`) or read from
//! ever-changing data cannot grow the table without bound.

use std::collections::HashSet;
use std::sync::Mutex;

use super::{ArcStr, FixedState};

/// The table is purged when it has grown to twice its size after the
/// last purge, and never below this size.
const MIN_PURGE_SIZE: usize = 4096;

struct Table {
    names: HashSet<ArcStr, FixedState>,
    purge_at: usize,
}

static TABLE: Mutex<Option<Table>> = Mutex::new(None);

/// The shared allocation for keyword name `name`.
pub fn intern(name: &str) -> ArcStr {
    let mut guard = TABLE.lock().unwrap_or_else(|p| p.into_inner());
    let table = guard.get_or_insert_with(|| Table {
        names: HashSet::default(),
        purge_at: MIN_PURGE_SIZE,
    });
    if let Some(found) = table.names.get(name) {
        return found.clone();
    }
    if table.names.len() >= table.purge_at {
        // Names nobody but the table refers to any more.
        table
            .names
            .retain(|n| ArcStr::strong_count(n).is_none_or(|c| c > 1));
        table.purge_at = (table.names.len() * 2).max(MIN_PURGE_SIZE);
    }
    let fresh = ArcStr::from(name);
    table.names.insert(fresh.clone());
    fresh
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_name_is_one_allocation() {
        let a = intern("interned-once");
        let b = intern("interned-once");
        assert!(ArcStr::ptr_eq(&a, &b));
        assert_eq!(a, "interned-once");
    }

    #[test]
    fn names_nobody_holds_are_purged() {
        for i in 0..3 * MIN_PURGE_SIZE {
            intern(&format!("purged-{i}"));
        }
        let kept = intern("held-through-purges");
        for i in 0..3 * MIN_PURGE_SIZE {
            intern(&format!("purged-again-{i}"));
        }
        let guard = TABLE.lock().unwrap();
        let table = guard.as_ref().unwrap();
        assert!(
            table.names.len() < 3 * MIN_PURGE_SIZE,
            "{}",
            table.names.len()
        );
        assert!(ArcStr::ptr_eq(
            table.names.get("held-through-purges").unwrap(),
            &kept
        ));
    }
}
