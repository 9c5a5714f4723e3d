//! What the evaluator needs from its host: `data/` values, `tool/`
//! calls, and the user definitions that persist between programs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::{Error, ErrorKind, Result};
use crate::value::{ArcStr, Value};

/// What a tool call knows about the program that makes it: the program's
/// deadline and interrupt flag. A tool call counts against the program's
/// time limit, so a host should not let a tool run past `deadline` (a
/// command tool is killed there) and should stop waiting when the
/// interrupt flag is set. The evaluator checks both again when the call
/// returns, and then ends the program with its own `timeout` or
/// `interrupted` error, whatever the tool gave.
#[derive(Debug, Clone, Default)]
pub struct ToolContext {
    /// When the program's time limit runs out; `None` for no limit.
    pub deadline: Option<Instant>,
    /// The program's time limit, for messages.
    pub time_limit: Duration,
    /// The program's interrupt flag (Ctrl-C), if it has one.
    pub interrupt: Option<Arc<AtomicBool>>,
}

impl ToolContext {
    /// A context with no deadline and no interrupt flag.
    pub fn unlimited() -> Self {
        ToolContext::default()
    }

    /// Time left before the deadline (zero once it has passed); `None`
    /// without a deadline.
    pub fn remaining(&self) -> Option<Duration> {
        self.deadline
            .map(|d| d.saturating_duration_since(Instant::now()))
    }

    /// True once the deadline has passed.
    pub fn expired(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// True once the interrupt flag is set.
    pub fn interrupted(&self) -> bool {
        self.interrupt
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Relaxed))
    }

    /// The program's `timeout` error (the one the evaluator gives).
    pub fn timeout_error(&self) -> Error {
        Error::new(
            ErrorKind::Timeout,
            format!(
                "Program exceeded the time limit of {} ms",
                self.time_limit.as_millis()
            ),
        )
    }

    /// The program's `interrupted` error.
    pub fn interrupted_error(&self) -> Error {
        Error::new(ErrorKind::Interrupted, "Evaluation interrupted")
    }
}

/// The host of a program run. The evaluator does no I/O itself: tools are
/// reached only through this trait. Hosts are `Sync` because the branches
/// of `pmap` and `pcalls` call tools from several threads at once.
pub trait Host: Sync {
    /// The value of `data/name`.
    fn data(&self, name: &str) -> Option<Value>;
    /// True if `tool/name` exists.
    fn has_tool(&self, name: &str) -> bool;
    /// Call `tool/name` with the arguments exactly as written in the call.
    /// `context` carries the program's deadline and interrupt flag: the
    /// call should return by the deadline, or soon after the flag is set
    /// (see [`ToolContext`]).
    fn call_tool(&self, name: &str, args: &[Value], context: &ToolContext) -> Result<Value>;
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
    fn call_tool(&self, name: &str, _: &[Value], _: &ToolContext) -> Result<Value> {
        Err(Error::new(
            ErrorKind::Undefined,
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
    /// The defining form as source text (what `source` prints); `None`
    /// for definitions a host made without one.
    pub source: Option<ArcStr>,
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
    /// Namespace aliases made by `require` (`s` for `clojure.string`),
    /// kept across turns like definitions.
    aliases: imbl::Vector<(ArcStr, ArcStr)>,
    /// The defined names that are also builtins' names, kept as they are
    /// defined so that the analysis of each turn's program finds the
    /// shadowed builtins without a look at every definition.
    shadowing: imbl::Vector<ArcStr>,
}

impl Globals {
    /// The namespace an alias made by `require` stands for.
    pub fn alias(&self, name: &str) -> Option<&str> {
        self.aliases
            .iter()
            .rev()
            .find(|(a, _)| a.as_str() == name)
            .map(|(_, ns)| ns.as_str())
    }

    /// Every `require` alias, oldest first (a later one for the same name
    /// wins).
    pub fn aliases(&self) -> impl Iterator<Item = (&str, &str)> {
        self.aliases.iter().map(|(a, ns)| (a.as_str(), ns.as_str()))
    }

    pub(crate) fn set_alias(&mut self, alias: ArcStr, namespace: ArcStr) {
        if self.alias(&alias) != Some(namespace.as_str()) {
            self.aliases.push_back((alias, namespace));
        }
    }

    pub fn get(&self, name: &str) -> Option<&Definition> {
        self.defs.get(name)
    }

    /// Define or redefine. A redefined name keeps its original position.
    pub fn define(&mut self, name: ArcStr, def: Definition) {
        if self.defs.insert(name.clone(), def).is_none() {
            if crate::builtins::registry().lookup(&name).is_some() {
                self.shadowing.push_back(name.clone());
            }
            self.order.push_back(name);
        }
    }

    /// The defined names that are also names of builtins (which they
    /// shadow), in the order they were first defined.
    pub fn builtin_shadows(&self) -> impl Iterator<Item = &str> {
        self.shadowing.iter().map(ArcStr::as_str)
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

    /// Definitions from the most recent first definition back.
    pub fn iter_rev(&self) -> impl Iterator<Item = (&ArcStr, &Definition)> {
        self.order
            .iter()
            .rev()
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
            Value::Map(m) => Some(DataHost::new(m.clone())),
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
    fn call_tool(&self, name: &str, args: &[Value], context: &ToolContext) -> Result<Value> {
        NoHost.call_tool(name, args, context)
    }
    fn data_names(&self) -> Vec<String> {
        self.data
            .keys()
            .map(|k| match k.as_name() {
                Some(name) => name.to_string(),
                None => crate::value::pr_str(k),
            })
            .collect()
    }
}
