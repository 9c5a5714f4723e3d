//! Dropping deeply nested values without recursing deeply.
//!
//! A program can build a chain of a million nested vectors, maps or
//! closures in a loop; dropping it recursively would overflow the stack
//! and abort the process. Past a fixed nesting depth, collections being
//! freed are parked on a thread-local list instead, and the outermost drop
//! frees them one by one in a loop.

use std::cell::{Cell, RefCell};
use std::sync::{Arc, OnceLock};

use super::{Function, FunctionKind, Map, Set, Value, Vector};

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
    // Only a collection (or function) freed for the last time can start a
    // deep chain of drops; a shared one is just released.
    let unique = match value {
        Value::Vector(a) | Value::List(a) => Arc::strong_count(a) == 1,
        Value::Map(a) => Arc::strong_count(a) == 1,
        Value::Set(a) => Arc::strong_count(a) == 1,
        Value::Fn(a) => Arc::strong_count(a) == 1,
        Value::Reduced(a) => Arc::strong_count(a) == 1,
        _ => false,
    };
    if !unique {
        return;
    }
    let taken = std::mem::replace(value, Value::Nil);
    let depth = DEPTH.with(Cell::get);
    if depth >= MAX_DROP_DEPTH {
        PENDING.with(|p| p.borrow_mut().push(taken));
        return;
    }
    DEPTH.with(|d| d.set(depth + 1));
    drop_contents(taken);
    if depth == 0 {
        // The outermost drop frees everything that was deferred.
        while let Some(v) = PENDING.with(|p| p.borrow_mut().pop()) {
            drop_contents(v);
        }
    }
    DEPTH.with(|d| d.set(depth));
}

/// Free a value's collection. `taken` is the only reference, so the
/// contents are dropped here, inside the depth accounting of the caller.
fn drop_contents(mut taken: Value) {
    match &mut taken {
        Value::Vector(a) | Value::List(a) => {
            let inner = std::mem::replace(a, empty_vector());
            drop(inner);
        }
        Value::Map(a) => {
            let inner = std::mem::replace(a, empty_map());
            drop(inner);
        }
        Value::Set(a) => {
            let inner = std::mem::replace(a, empty_set());
            drop(inner);
        }
        Value::Fn(a) => {
            let inner = std::mem::replace(a, empty_fn());
            drop(inner);
        }
        Value::Reduced(a) => {
            let inner = std::mem::replace(a, nil_value());
            drop(inner);
        }
        _ => {}
    }
    // `taken` now holds a shared placeholder, whose drop is shallow.
}

fn empty_vector() -> Arc<Vector> {
    static EMPTY: OnceLock<Arc<Vector>> = OnceLock::new();
    EMPTY.get_or_init(|| Arc::new(Vector::new())).clone()
}

fn empty_map() -> Arc<Map> {
    static EMPTY: OnceLock<Arc<Map>> = OnceLock::new();
    EMPTY.get_or_init(|| Arc::new(Map::new())).clone()
}

fn empty_set() -> Arc<Set> {
    static EMPTY: OnceLock<Arc<Set>> = OnceLock::new();
    EMPTY.get_or_init(|| Arc::new(Set::new())).clone()
}

fn nil_value() -> Arc<Value> {
    static NIL: OnceLock<Arc<Value>> = OnceLock::new();
    NIL.get_or_init(|| Arc::new(Value::Nil)).clone()
}

fn empty_fn() -> Arc<Function> {
    static EMPTY: OnceLock<Arc<Function>> = OnceLock::new();
    EMPTY
        .get_or_init(|| Arc::new(Function::new(FunctionKind::Constantly(Value::Nil))))
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropping_a_deep_chain_does_not_overflow_a_small_stack() {
        let handle = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(|| {
                let mut v = Value::vector([]);
                let mut m = Value::empty_map();
                for _ in 0..200_000 {
                    v = Value::vector([v]);
                    let mut map = Map::new();
                    map.insert(Value::keyword("a"), m);
                    m = Value::map(map);
                }
                drop(v);
                drop(m);
                DEPTH.with(Cell::get)
            })
            .unwrap();
        assert_eq!(handle.join().expect("no stack overflow"), 0);
    }
}
