//! Dropping deeply nested values without recursing deeply.
//!
//! A program can build a chain of a million nested vectors, maps or
//! closures in a loop; dropping it recursively would overflow the stack
//! and abort the process. Past a fixed nesting depth, collections being
//! freed are parked on a thread-local list instead, and the outermost drop
//! frees them one by one in a loop.

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use super::{FunctionKind, Value};

/// Nested drops deeper than this are deferred.
const MAX_DROP_DEPTH: u32 = 64;

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    static PENDING: RefCell<Vec<Value>> = const { RefCell::new(Vec::new()) };
}

impl Drop for Value {
    #[inline]
    fn drop(&mut self) {
        // Scalars and strings never start a chain of drops; this check is
        // inlined so that dropping them stays as cheap as without `Drop`.
        if matches!(
            self,
            Value::Vector(_)
                | Value::List(_)
                | Value::Map(_)
                | Value::Set(_)
                | Value::Fn(_)
                | Value::Reduced(_)
        ) {
            drop_collection(self);
        }
    }
}

/// Drop a collection or function value, deferring when nested too deeply.
#[inline(never)]
fn drop_collection(value: &mut Value) {
    // A shared collection is only released: one atomic decrement, not the
    // two more `Arc::get_mut` takes to find out. (If the other owners let
    // go meanwhile, this drop frees it the usual way; its contents still
    // count their own depth, so no chain of drops recurses unbounded.)
    if !is_last_reference(value) {
        return;
    }
    let depth = DEPTH.with(Cell::get);
    if depth >= MAX_DROP_DEPTH {
        // Only a collection (or function) freed for the last time can
        // start a deep chain of drops.
        let taken = std::mem::replace(value, Value::Nil);
        PENDING.with(|p| p.borrow_mut().push(taken));
        return;
    }
    // The contents of a collection freed for the last time are moved out
    // and dropped here, inside the depth accounting; the emptied `Arc` is
    // then freed by the caller's drop glue without recursing.
    match value {
        Value::Vector(a) | Value::List(a) => {
            if let Some(vector) = Arc::get_mut(a) {
                drop_at_depth(depth, std::mem::take(vector));
            }
        }
        Value::Map(m) => m.empty_with(|contents| drop_at_depth(depth, contents)),
        Value::Set(a) => {
            if let Some(set) = Arc::get_mut(a) {
                drop_at_depth(depth, std::mem::take(set));
            }
        }
        Value::Fn(a) => {
            if let Some(function) = Arc::get_mut(a) {
                let empty = FunctionKind::Constantly(Value::Nil);
                drop_at_depth(depth, std::mem::replace(&mut function.kind, empty));
            }
        }
        Value::Reduced(a) => {
            if let Some(inner) = Arc::get_mut(a) {
                drop_at_depth(depth, std::mem::take(inner));
            }
        }
        _ => {}
    }
}

/// Whether `value` holds the last reference to its collection or function.
fn is_last_reference(value: &Value) -> bool {
    match value {
        Value::Vector(a) | Value::List(a) => Arc::strong_count(a) == 1,
        Value::Map(m) => m.is_only_holder(),
        Value::Set(a) => Arc::strong_count(a) == 1,
        Value::Fn(a) => Arc::strong_count(a) == 1,
        Value::Reduced(a) => Arc::strong_count(a) == 1,
        _ => false,
    }
}

/// Drop `contents` one level deeper than `depth`; the outermost drop
/// (depth 0) then frees everything that was deferred.
fn drop_at_depth<T>(depth: u32, contents: T) {
    DEPTH.with(|d| d.set(depth + 1));
    drop(contents);
    if depth == 0 {
        while let Some(v) = PENDING.with(|p| p.borrow_mut().pop()) {
            drop(v);
        }
    }
    DEPTH.with(|d| d.set(depth));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::{Function, Map, Set};

    #[test]
    fn dropping_a_deep_chain_does_not_overflow_a_small_stack() {
        let handle = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(|| {
                let mut v = Value::vector([]);
                let mut m = Value::empty_map();
                let mut s = Value::Nil;
                let mut f = Value::Nil;
                let mut r = Value::Nil;
                for _ in 0..200_000 {
                    v = Value::vector([v]);
                    let mut map = Map::new();
                    map.insert(Value::keyword("a"), m);
                    m = Value::map(map);
                    let mut set = Set::new();
                    set.insert(s);
                    s = Value::set(set);
                    f = Value::Fn(Arc::new(Function::new(FunctionKind::Constantly(f))));
                    r = Value::Reduced(Arc::new(r));
                }
                drop(v);
                drop(m);
                drop(s);
                drop(f);
                drop(r);
                let pending = PENDING.with(|p| p.borrow().len());
                (DEPTH.with(Cell::get), pending)
            })
            .unwrap();
        assert_eq!(handle.join().expect("no stack overflow"), (0, 0));
    }
}
