//! What the evaluator needs from its host: `data/` values, `tool/`
//! calls, and the user definitions that persist between programs.

use crate::error::Result;
use crate::value::{ArcStr, Value};

/// The host of a program run. The evaluator does no I/O itself: tools are
/// reached only through this trait. Hosts are `Sync` because the branches
/// of `pmap` and `pcalls` call tools from several threads at once.
pub trait Host: Sync {
    /// The value of `data/name`.
    fn data(&self, name: &str) -> Option<Value>;
    /// True if `tool/name` exists.
    fn has_tool(&self, name: &str) -> bool;
    /// Call `tool/name` with the arguments exactly as written in the call.
    fn call_tool(&self, name: &str, args: &[Value]) -> Result<Value>;
    /// All data keys, for suggestions in error messages.
    fn data_names(&self) -> Vec<String> {
        Vec::new()
    }
    /// All tool names, for suggestions in error messages.
    fn tool_names(&self) -> Vec<String> {
        Vec::new()
    }
}

/// A host with no data and no tools.
pub struct NoHost;

impl Host for NoHost {
    fn data(&self, _: &str) -> Option<Value> {
        None
    }
    fn has_tool(&self, _: &str) -> bool {
        false
    }
    fn call_tool(&self, name: &str, _: &[Value]) -> Result<Value> {
        Err(crate::error::Error::new(
            crate::error::ErrorKind::Undefined,
            format!("Unknown tool `{name}`"),
        ))
    }
}

/// One user definition (`def` / `defn`).
#[derive(Debug, Clone)]
pub struct Definition {
    pub value: Value,
    /// The docstring, if one was given.
    pub doc: Option<ArcStr>,
}

/// The user namespace: definitions in the order they were first made.
/// Persistent, so taking a snapshot before a run (for rollback on error)
/// costs nothing.
#[derive(Debug, Clone, Default)]
pub struct Globals {
    // Looked up on every reference to a global, so a fast hasher matters;
    // iteration uses `order`, so the hasher never shows.
    defs: imbl::GenericHashMap<
        ArcStr,
        Definition,
        rustc_hash::FxBuildHasher,
        imbl::shared_ptr::DefaultSharedPtr,
    >,
    order: imbl::Vector<ArcStr>,
}

impl Globals {
    pub fn get(&self, name: &str) -> Option<&Definition> {
        self.defs.get(name)
    }

    /// Define or redefine. A redefined name keeps its original position.
    pub fn define(&mut self, name: ArcStr, def: Definition) {
        if self.defs.insert(name.clone(), def).is_none() {
            self.order.push_back(name);
        }
    }

    pub fn len(&self) -> usize {
        self.order.len()
    }

    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Definitions in definition order.
    pub fn iter(&self) -> impl Iterator<Item = (&ArcStr, &Definition)> {
        self.order
            .iter()
            .filter_map(move |n| self.defs.get(n).map(|d| (n, d)))
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.order.iter().map(|n| n.as_str())
    }
}

/// A host with fixed `data/` values and no tools (what `ptc eval --data`
/// uses).
#[derive(Debug, Clone, Default)]
pub struct DataHost {
    data: crate::value::Map,
}

impl DataHost {
    pub fn new(data: crate::value::Map) -> Self {
        DataHost { data }
    }

    /// Bind each key of a JSON object as `data/key`.
    pub fn from_json_object(json: &serde_json::Value) -> Option<Self> {
        match &crate::value::from_json(json) {
            Value::Map(m) => Some(DataHost::new((**m).clone())),
            _ => None,
        }
    }
}

impl Host for DataHost {
    fn data(&self, name: &str) -> Option<Value> {
        self.data.get(&Value::keyword(name)).cloned()
    }
    fn has_tool(&self, _: &str) -> bool {
        false
    }
    fn call_tool(&self, name: &str, args: &[Value]) -> Result<Value> {
        NoHost.call_tool(name, args)
    }
    fn data_names(&self) -> Vec<String> {
        self.data
            .keys()
            .map(|k| match k {
                Value::Keyword(s) | Value::Str(s) => s.to_string(),
                other => crate::value::pr_str(other),
            })
            .collect()
    }
}
