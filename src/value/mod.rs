//! The value model: immutable, cheaply clonable PTC-Lisp values on
//! persistent collections, with Clojure equality, hashing and ordering.
//!
//! Printing (`pr-str`, `str`) lives in `print`, the JSON bridge in `json`.
//! Nothing here evaluates code or does I/O.

mod compare;
mod drop;
mod func;
mod item_hash;
mod json;
pub(crate) mod json_read;
mod keyword;
mod map;
mod pretty;
mod print;
mod set;
mod short_str;
mod twin;
mod vector;

use std::hash::{Hash, Hasher};
use std::sync::Arc;

pub use arcstr::ArcStr;
pub use compare::compare;
pub use func::{Function, FunctionKind, NativeRef, WhereOp};
pub(crate) use item_hash::ItemState;
pub use json::{
    from_json, has_json_form, json_size_within, to_json, to_json_capped, MAX_JSON_DEPTH,
};
pub use json_read::{from_json_checked, read_json_object, read_json_object_chunked, ReadError};
pub use keyword::intern as intern_keyword;
pub use map::Map;
pub(crate) use map::{Shape, SHAPED_LIMIT, SMALL_MAP_LIMIT};
pub use pretty::{pretty, Pretty, PrettyOptions};
pub use print::{
    pr_str, print_str, write_pr, write_pr_bounded, write_str, write_str_bounded, MAX_PRINT_DEPTH,
};
pub(crate) use print::{write_escaped, write_float};
pub use set::{Set, SetIter};
pub use short_str::{ShortStr, SHORT_MAX};
pub use vector::Vector;

/// The deterministic hasher used by every hashed collection (the flat
/// tables of large sets use the equally fixed `ItemState`), so that
/// iteration order (and so printed output and rendered prompts) is the
/// same on every run.
pub type FixedState = foldhash::fast::FixedState;

/// A PTC-Lisp value. Sixteen bytes; a clone copies a scalar or a short
/// string and bumps the reference count of anything else.
#[derive(Clone, Debug, Default)]
pub enum Value {
    #[default]
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    /// Strings of more than [`SHORT_MAX`] bytes (or any string an
    /// embedder builds so). Match strings with [`Value::as_str`], which
    /// reads both forms.
    Str(ArcStr),
    /// Strings of up to [`SHORT_MAX`] bytes, kept inside the value (no
    /// allocation). Equal to a `Str` of the same text.
    ShortStr(ShortStr),
    /// Keyword name without the colon.
    Keyword(ArcStr),
    /// A symbol, only produced by `quote`.
    Symbol(ArcStr),
    Vector(Arc<Vector>),
    /// A list (from `quote` or `list`); equal to a vector with the same items.
    List(Arc<Vector>),
    /// A map: a handle to a shared map (cloning it shares the map).
    Map(Map),
    Set(Arc<Set>),
    /// A builtin function.
    Native(&'static NativeRef),
    /// A closure or a function built by a combinator (`partial`, `comp`, ...).
    Fn(Arc<Function>),
    /// A var reference `#'name`, returned by `def`.
    Var(ArcStr),
    /// A compiled regular expression.
    Regex(Arc<Regex>),
    /// `(reduced x)`: tells `reduce` and friends to stop with `x`.
    Reduced(Arc<Value>),
}

/// A compiled regex together with its source text (for printing).
#[derive(Debug)]
pub struct Regex {
    pub source: String,
    pub regex: fancy_regex::Regex,
    /// For patterns that need backtracking (lookaround, backreferences):
    /// the pattern anchored with `\G`, tried one start position at a time
    /// so the program's meter is consulted between positions.
    pub(crate) stepped: Option<fancy_regex::Regex>,
    /// Bytes of a text searched (the start of a longer one): fewer for a
    /// backtracking pattern, the fewer the heavier it is.
    pub(crate) searched: usize,
    /// Backtracking steps one attempt may take (fewer for a heavier
    /// pattern).
    pub(crate) backtrack_limit: usize,
    /// A linear pattern's parsed form (regex-syntax's), kept to build
    /// `direct` from on first need.
    pub(crate) linear: Option<Arc<regex_syntax::hir::Hir>>,
    /// For linear patterns that start with a literal and are one-pass:
    /// the first match found in one pass (`re-find`, `extract`), built
    /// on the first such search, so patterns only split or replaced with
    /// never pay for it.
    pub(crate) direct: std::sync::OnceLock<Option<Arc<crate::builtins::regex_direct::Direct>>>,
    /// The pattern anchored at both ends (`re-matches`), compiled on first
    /// use and kept with the pattern.
    pub(crate) whole: std::sync::OnceLock<Result<Arc<Regex>, crate::error::Error>>,
}

impl Value {
    /// A string value, kept inside the value when it is short.
    #[inline]
    pub fn str(s: &str) -> Value {
        match ShortStr::new(s) {
            Some(short) => Value::ShortStr(short),
            None => Value::Str(ArcStr::from(s)),
        }
    }

    /// The one-character string `c`.
    #[inline]
    pub fn char(c: char) -> Value {
        Value::ShortStr(ShortStr::from_char(c))
    }

    /// A string value from shared text: inside the value when it is
    /// short, else sharing `s`.
    #[inline]
    pub fn shared_str(s: &ArcStr) -> Value {
        match ShortStr::new(s) {
            Some(short) => Value::ShortStr(short),
            None => Value::Str(s.clone()),
        }
    }

    /// A keyword, its name interned for the process (`value::keyword`).
    pub fn keyword(s: &str) -> Value {
        Value::Keyword(keyword::intern(s))
    }

    pub fn vector(items: impl IntoIterator<Item = Value>) -> Value {
        Value::Vector(Arc::new(items.into_iter().collect()))
    }

    pub fn from_vector(v: Vector) -> Value {
        Value::Vector(Arc::new(v))
    }

    pub fn list(items: impl IntoIterator<Item = Value>) -> Value {
        Value::List(Arc::new(items.into_iter().collect()))
    }

    pub fn map(m: Map) -> Value {
        Value::Map(m)
    }

    pub fn set(s: Set) -> Value {
        Value::Set(Arc::new(s))
    }

    pub fn empty_map() -> Value {
        Value::Map(Map::new())
    }

    /// Only `nil` and `false` are falsy.
    #[inline]
    pub fn truthy(&self) -> bool {
        !matches!(self, Value::Nil | Value::Bool(false))
    }

    #[inline]
    pub fn is_nil(&self) -> bool {
        matches!(self, Value::Nil)
    }

    /// The name used for this value's type in error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Nil => "nil",
            Value::Bool(_) => "boolean",
            Value::Int(_) => "integer",
            Value::Float(_) => "float",
            Value::Str(_) | Value::ShortStr(_) => "string",
            Value::Keyword(_) => "keyword",
            Value::Symbol(_) => "symbol",
            Value::Vector(_) => "vector",
            Value::List(_) => "list",
            Value::Map(_) => "map",
            Value::Set(_) => "set",
            Value::Native(_) | Value::Fn(_) => "function",
            Value::Var(_) => "var",
            Value::Regex(_) => "regex",
            Value::Reduced(_) => "reduced",
        }
    }

    /// The type label the model's view and the REPL show (TYP-001..012):
    /// `vector[3]`, `list[2]`, `map[0]`, `set[2]`, `#fn[...]` for every
    /// function, the type name otherwise (`string`, `integer`, ...). See
    /// `compression::format::type_label`.
    pub fn type_label(&self) -> String {
        match self {
            Value::Vector(items) => format!("vector[{}]", items.len()),
            Value::List(items) => format!("list[{}]", items.len()),
            Value::Map(m) => format!("map[{}]", m.len()),
            Value::Set(s) => format!("set[{}]", s.len()),
            Value::Native(_) | Value::Fn(_) => "#fn[...]".to_string(),
            other => other.type_name().to_string(),
        }
    }

    /// A short description for error messages: the type and, for small
    /// scalars, the value itself (`string "abc"`, `integer 5`).
    pub fn describe(&self) -> String {
        match self {
            Value::Nil => "nil".to_string(),
            Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Keyword(_) => {
                format!("{} {}", self.type_name(), pr_str(self))
            }
            Value::Str(_) | Value::ShortStr(_) => match self.as_str() {
                Some(s) if s.chars().count() <= 40 => format!("string {}", pr_str(self)),
                _ => self.type_name().to_string(),
            },
            _ => self.type_name().to_string(),
        }
    }

    /// The items of a vector or list.
    pub fn as_seq(&self) -> Option<&Vector> {
        match self {
            Value::Vector(v) | Value::List(v) => Some(v),
            _ => None,
        }
    }

    /// The text of a string, in either form.
    #[inline]
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::ShortStr(s) => Some(s.as_str()),
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The bytes of a string's text, in either form, without the UTF-8
    /// check [`Value::as_str`] makes of a short one.
    #[inline]
    pub fn str_bytes(&self) -> Option<&[u8]> {
        match self {
            Value::ShortStr(s) => Some(s.as_bytes()),
            Value::Str(s) => Some(s.as_bytes()),
            _ => None,
        }
    }

    /// The text of a string (either form) or the name of a keyword.
    #[inline]
    pub fn as_name(&self) -> Option<&str> {
        match self {
            Value::Keyword(k) => Some(k),
            other => other.as_str(),
        }
    }

    /// Whether this is a string, in either form.
    #[inline]
    pub fn is_str(&self) -> bool {
        matches!(self, Value::Str(_) | Value::ShortStr(_))
    }

    pub fn as_map(&self) -> Option<&Map> {
        match self {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    pub fn is_fn(&self) -> bool {
        matches!(self, Value::Native(_) | Value::Fn(_))
    }

    pub fn is_number(&self) -> bool {
        matches!(self, Value::Int(_) | Value::Float(_))
    }
}

impl From<i64> for Value {
    fn from(n: i64) -> Self {
        Value::Int(n)
    }
}

impl From<f64> for Value {
    fn from(n: f64) -> Self {
        Value::Float(n)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::str(s)
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::str(&s)
    }
}

/// JSON as `--data` reads it ([`from_json`]): objects become maps with
/// keyword keys, arrays vectors. The direct way for a Rust tool to return
/// a map:
///
/// ```
/// use ptc_lisp::value::{pr_str, Value};
/// let v = Value::from(serde_json::json!({"title": "Rust", "hits": [1, 2]}));
/// assert_eq!(pr_str(&v), "{:title \"Rust\", :hits [1 2]}");
/// ```
impl From<serde_json::Value> for Value {
    fn from(json: serde_json::Value) -> Self {
        from_json(&json)
    }
}

impl From<&serde_json::Value> for Value {
    fn from(json: &serde_json::Value) -> Self {
        from_json(json)
    }
}

impl PartialEq for Value {
    /// Clojure's `=`: integers and floats are different categories
    /// (`(= 1 1.0)` is false), lists equal vectors with the same items,
    /// maps and sets compare by contents, functions by identity.
    #[inline]
    fn eq(&self, other: &Value) -> bool {
        // Integers (set members, ids) without a call.
        if let (Value::Int(a), Value::Int(b)) = (self, other) {
            return a == b;
        }
        self.equal_to(other)
    }
}

impl Value {
    fn equal_to(&self, other: &Value) -> bool {
        use Value::*;
        match (self, other) {
            (Nil, Nil) => true,
            (Bool(a), Bool(b)) => a == b,
            (Int(a), Int(b)) => a == b,
            (Float(a), Float(b)) => a == b,
            (ShortStr(a), ShortStr(b)) => a == b,
            (Str(a), Str(b)) | (Keyword(a), Keyword(b)) | (Symbol(a), Symbol(b)) => a == b,
            (Str(a), ShortStr(b)) | (ShortStr(b), Str(a)) => a.as_bytes() == b.as_bytes(),
            (Var(a), Var(b)) => a == b,
            (Vector(a) | List(a), Vector(b) | List(b)) => {
                Arc::ptr_eq(a, b) || equal_nodes(address(a), address(b), || a == b)
            }
            (Map(a), Map(b)) => {
                let (x, y) = (a.address(), b.address());
                x == y || equal_nodes(x, y, || a == b)
            }
            (Set(a), Set(b)) => {
                Arc::ptr_eq(a, b) || equal_nodes(address(a), address(b), || **a == **b)
            }
            (Native(a), Native(b)) => std::ptr::eq(*a, *b),
            (Fn(a), Fn(b)) => Arc::ptr_eq(a, b),
            (Regex(a), Regex(b)) => Arc::ptr_eq(a, b),
            (Reduced(a), Reduced(b)) => a == b,
            _ => false,
        }
    }
}

// NaN breaks reflexivity, exactly as in Clojure; hashed collections still
// work because NaN is simply never found again.
impl Eq for Value {}

fn address<T>(a: &Arc<T>) -> usize {
    Arc::as_ptr(a) as usize
}

/// Collection pairs one comparison visits before it starts remembering
/// the pairs it found equal.
const EQ_MEMO_AFTER: usize = 4096;

/// State of the comparison running on this thread: how deep, how many
/// collection pairs so far, and (past `EQ_MEMO_AFTER`) the pairs known
/// equal. Two separately built values that share structure internally
/// (a vector doubled sixty times) would otherwise take exponential time
/// to compare; with the memo each distinct pair is compared once.
struct EqState {
    depth: usize,
    visits: usize,
    memo: Option<rustc_hash::FxHashSet<(usize, usize)>>,
}

thread_local! {
    static EQ: std::cell::RefCell<EqState> = const {
        std::cell::RefCell::new(EqState { depth: 0, visits: 0, memo: None })
    };
}

/// Compare two collections (at addresses `a` and `b`) with `f`, using and
/// filling the memo of equal pairs once the comparison is large.
fn equal_nodes(a: usize, b: usize, f: impl FnOnce() -> bool) -> bool {
    // A stopped meter ends the comparison (its error replaces the result).
    if !crate::meter::work(1) {
        return false;
    }
    let known = EQ.with(|s| {
        let mut s = s.borrow_mut();
        s.depth += 1;
        s.visits += 1;
        if s.memo.is_none() && s.visits > EQ_MEMO_AFTER {
            s.memo = Some(rustc_hash::FxHashSet::default());
        }
        s.memo.as_ref().is_some_and(|m| m.contains(&(a, b)))
    });
    let equal = known || deep(f);
    EQ.with(|s| {
        let mut s = s.borrow_mut();
        if equal && !known {
            if let Some(memo) = &mut s.memo {
                memo.insert((a, b));
            }
        }
        s.depth -= 1;
        if s.depth == 0 {
            s.visits = 0;
            s.memo = None;
        }
    });
    equal
}

/// Nodes one top-level hash may visit. Values that share structure can
/// have astronomically many nodes (a vector doubled sixty times), so
/// hashing works on a budget: each collection splits what it has equally
/// among its children and hashes only its length when the share rounds to
/// zero. Equal values have the same shape, so they still hash alike
/// whatever the order a map or set visits its entries in.
const HASH_FUEL: usize = 1 << 16;

thread_local! {
    static FUEL: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    static HASHING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Run `f` with each of `children` children's share of the budget, or
/// return `None` when the share is zero.
fn with_child_fuel<R>(children: usize, f: impl FnOnce() -> R) -> Option<R> {
    let fuel = FUEL.with(std::cell::Cell::get);
    let share = fuel.saturating_sub(1) / children.max(1);
    if share == 0 {
        return None;
    }
    FUEL.with(|c| c.set(share));
    let result = deep(f);
    FUEL.with(|c| c.set(fuel));
    Some(result)
}

impl Hash for Value {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        // Integers, the most hashed values, without a call (`hash_node`
        // sets up a large frame for the collections it also handles).
        if let Value::Int(n) = self {
            return state.write_i64(*n);
        }
        // Scalars (most map keys) need no budget; skip the bookkeeping.
        let collection = matches!(
            self,
            Value::Vector(_) | Value::List(_) | Value::Map(_) | Value::Set(_) | Value::Reduced(_)
        );
        if !collection || HASHING.with(std::cell::Cell::get) {
            return self.hash_node(state);
        }
        // Reset even if a hasher panics, so later hashes start afresh.
        struct Done;
        impl Drop for Done {
            fn drop(&mut self) {
                HASHING.with(|h| h.set(false));
            }
        }
        HASHING.with(|h| h.set(true));
        FUEL.with(|c| c.set(HASH_FUEL));
        let _done = Done;
        self.hash_node(state);
    }
}

impl Value {
    fn hash_node<H: Hasher>(&self, state: &mut H) {
        use Value::*;
        match self {
            Nil => state.write_u8(0),
            Bool(b) => {
                state.write_u8(1);
                b.hash(state)
            }
            // One write, no type tag, as in `hash` above: an integer never
            // equals a value of another type anyway.
            Int(n) => state.write_i64(*n),
            Float(f) => {
                state.write_u8(3);
                // -0.0 equals 0.0, so both must hash alike.
                let f = if *f == 0.0 { 0.0 } else { *f };
                f.to_bits().hash(state)
            }
            // Both forms of a string hash alike: they can be equal.
            Str(s) => {
                state.write_u8(4);
                s.as_str().hash(state)
            }
            // Exactly what `str::hash` writes (stable hashers cannot
            // change `write_str`), without checking the bytes as UTF-8.
            ShortStr(s) => {
                state.write_u8(4);
                state.write(s.as_bytes());
                state.write_u8(0xff);
            }
            Keyword(s) => {
                state.write_u8(5);
                s.as_str().hash(state)
            }
            Symbol(s) => {
                state.write_u8(6);
                s.as_str().hash(state)
            }
            Vector(v) | List(v) => {
                state.write_u8(7);
                state.write_usize(v.len());
                with_child_fuel(v.len(), || {
                    for item in v.iter() {
                        // A stopped meter ends the walk (its error
                        // replaces the result).
                        if !crate::meter::work(1) {
                            break;
                        }
                        item.hash(state);
                    }
                });
            }
            Map(m) => {
                crate::meter::work(1);
                state.write_u8(8);
                state.write_usize(m.len());
                let entries = with_child_fuel(2 * m.len(), || m.unordered_hash());
                state.write_u64(entries.unwrap_or(0));
            }
            Set(s) => {
                crate::meter::work(1);
                state.write_u8(9);
                state.write_usize(s.len());
                let items = with_child_fuel(s.len(), || s.unordered_hash());
                state.write_u64(items.unwrap_or(0));
            }
            Native(n) => {
                state.write_u8(10);
                n.name.hash(state)
            }
            Fn(f) => {
                state.write_u8(11);
                (Arc::as_ptr(f) as usize).hash(state)
            }
            Var(s) => {
                state.write_u8(12);
                s.as_str().hash(state)
            }
            Regex(r) => {
                state.write_u8(13);
                r.source.hash(state)
            }
            Reduced(v) => {
                state.write_u8(14);
                with_child_fuel(1, || v.hash(state));
            }
        }
    }
}

/// Run a step of a recursive walk over nested values, growing the stack
/// on the heap when it runs low: values can nest far deeper than any
/// thread's stack allows.
#[inline]
pub(crate) fn deep<R>(f: impl FnOnce() -> R) -> R {
    crate::stack::maybe_grow(64 * 1024, 1024 * 1024, f)
}

/// Hash a single value with the fixed hasher.
pub(crate) fn hash_one(v: &Value) -> u64 {
    use std::hash::BuildHasher;
    FixedState::default().hash_one(v)
}

#[cfg(test)]
mod tests;
