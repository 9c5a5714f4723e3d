//! Turn records: what one program run did, kept whole and immutable
//! (ARC-001, DBG-001..003). Compression renders them; nothing here
//! renders or does I/O.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::serde_value;
use crate::error::Error;
use crate::eval::Globals;
use crate::value::Value;

/// One turn: the program the model wrote and everything its run produced.
///
/// Every part of a turn is a public field, read directly
/// (`turn.prints`, `turn.tool_calls`, `turn.outcome`); the few methods are
/// views computed from those fields (`result()` and `error()` look inside
/// `outcome`), never a second way to reach a stored part.
///
/// Values are serialized in the tagged JSON form of
/// [`serde_value`](crate::session::serde_value), so a turn round-trips through JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    /// 1-based position in the session.
    pub number: usize,
    /// The full program text, as run.
    pub program: String,
    /// How the run ended: a value, `return`, `fail`, or an error.
    pub outcome: TurnOutcome,
    /// True when the program ran without error (a `(fail ...)` is a
    /// successful run that ends the mission).
    pub success: bool,
    /// One entry per `println` call, in order (TRN-008, TRN-009).
    pub prints: Vec<String>,
    /// Every tool call, in order (TC-006). Shared: a copy of the turn
    /// (a host's record of it, such as the Python `Turn`) costs a
    /// reference count, not a copy of every call.
    pub tool_calls: Arc<[ToolCall]>,
    /// The user namespace after the turn (unchanged by a failed turn).
    pub memory: Memory,
    /// Names this turn bound with `def`/`defn`, in order of first binding,
    /// each once. Empty for a failed turn: its definitions were rolled back.
    pub defined: Vec<String>,
    /// Evaluation steps used.
    pub steps: u64,
    /// Wall-clock time of the run.
    pub duration: Duration,
}

impl Turn {
    /// The value the program produced (`return`, `fail` or last
    /// expression); `None` for a failed turn.
    pub fn result(&self) -> Option<&Value> {
        match &self.outcome {
            TurnOutcome::Value { value }
            | TurnOutcome::Return { value }
            | TurnOutcome::Fail { value } => Some(value),
            TurnOutcome::Error { .. } => None,
        }
    }

    /// The error of a failed turn.
    pub fn error(&self) -> Option<&TurnError> {
        match &self.outcome {
            TurnOutcome::Error { error } => Some(error),
            _ => None,
        }
    }

    /// True if the program called `(return v)`.
    pub fn returned(&self) -> bool {
        matches!(self.outcome, TurnOutcome::Return { .. })
    }

    /// True if the program called `(fail v)`.
    pub fn failed_mission(&self) -> bool {
        matches!(self.outcome, TurnOutcome::Fail { .. })
    }

    /// True if the turn printed anything (SAM-001/002 decide on this).
    pub fn printed(&self) -> bool {
        !self.prints.is_empty()
    }
}

/// How a turn's run ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TurnOutcome {
    /// The value of the last expression.
    Value {
        #[serde(with = "serde_value::value")]
        value: Value,
    },
    /// `(return v)`.
    Return {
        #[serde(with = "serde_value::value")]
        value: Value,
    },
    /// `(fail v)`.
    Fail {
        #[serde(with = "serde_value::value")]
        value: Value,
    },
    /// The program did not parse or raised an error.
    Error { error: TurnError },
}

/// The error of a failed turn, as plain data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnError {
    /// The stable error code (`type-error`, `timeout`, ...).
    pub code: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// 1-based line and column in the program, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
}

impl TurnError {
    /// An error with a code and a message, no hint and no position.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        TurnError {
            code: code.into(),
            message: message.into(),
            hint: None,
            line: None,
            column: None,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

impl From<&Error> for TurnError {
    fn from(e: &Error) -> Self {
        TurnError {
            code: e.code().to_string(),
            message: e.message().to_string(),
            hint: e.hint().map(str::to_string),
            line: e.span().map(|s| s.line),
            column: e.span().map(|s| s.column),
        }
    }
}

impl TurnError {
    /// The error as `*e` shows it: a map of `:code`, `:message` and, when
    /// known, `:line`, `:column` and `:hint`.
    pub fn to_value(&self) -> Value {
        let mut m = crate::value::Map::new();
        m.insert(Value::keyword("code"), Value::str(&self.code));
        m.insert(Value::keyword("message"), Value::str(&self.message));
        if let Some(line) = self.line {
            m.insert(Value::keyword("line"), Value::Int(i64::from(line)));
        }
        if let Some(column) = self.column {
            m.insert(Value::keyword("column"), Value::Int(i64::from(column)));
        }
        if let Some(hint) = &self.hint {
            m.insert(Value::keyword("hint"), Value::str(hint));
        }
        Value::map(m)
    }
}

impl fmt::Display for TurnError {
    /// The same text as [`Error`]'s display:
    /// `type-error at 1:5: message`, then `hint: ...` on its own line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.code)?;
        if let (Some(line), Some(column)) = (self.line, self.column) {
            write!(f, " at {line}:{column}")?;
        }
        write!(f, ": {}", self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, "\nhint: {hint}")?;
        }
        Ok(())
    }
}

/// One tool call (TC-006).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub name: String,
    /// The arguments exactly as written in the call.
    #[serde(with = "serde_value::vec")]
    pub args: Vec<Value>,
    /// The result, when the tool succeeded.
    #[serde(
        default,
        with = "serde_value::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub result: Option<Value>,
    /// The error message, when the tool failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub duration: Duration,
}

impl From<crate::eval::ToolCallRecord> for ToolCall {
    fn from(r: crate::eval::ToolCallRecord) -> Self {
        ToolCall {
            name: r.name,
            args: r.args,
            result: r.result,
            error: r.error,
            duration: r.duration,
        }
    }
}

impl From<&crate::eval::ToolCallRecord> for ToolCall {
    fn from(r: &crate::eval::ToolCallRecord) -> Self {
        ToolCall {
            name: r.name.clone(),
            args: r.args.clone(),
            result: r.result.clone(),
            error: r.error.clone(),
            duration: r.duration,
        }
    }
}

/// A snapshot of the user namespace (`user/`): definitions in the order
/// they were first made (DEF-009).
///
/// Persistent: every turn keeps its own snapshot, and a snapshot shares
/// its structure with the one it was made from, so copying it costs
/// nothing and a turn that changes k of N definitions costs O(k log N),
/// not O(N). Names are looked up through an index. Entries and names are
/// shared (`Arc`), so the nodes a change copies hold pointers, not
/// copies of the definitions: a turn's snapshot costs a few kilobytes
/// (the copied nodes) however large the definitions are.
#[derive(Debug, Clone, Default)]
pub struct Memory {
    pub entries: imbl::Vector<Arc<MemoryEntry>>,
    /// Position of each name in `entries`.
    index: imbl::HashMap<Arc<str>, usize>,
}

impl PartialEq for Memory {
    fn eq(&self, other: &Self) -> bool {
        self.entries == other.entries
    }
}

impl Serialize for Memory {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.entries.iter().map(|e| &**e))
    }
}

impl<'de> Deserialize<'de> for Memory {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let entries = Vec::<MemoryEntry>::deserialize(d)?;
        Ok(Memory::from_entries(entries))
    }
}

/// One definition in a [`Memory`] snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryEntry {
    pub name: String,
    #[serde(with = "serde_value::value")]
    pub value: Value,
    /// The docstring given to `def`/`defn`, as written (DEF-005, DEF-006).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
    /// For a function: the type labels of what its calls returned, in
    /// this or earlier turns while the definition is unchanged, one per
    /// type in the order first returned (`["integer", "nil"]`), shown as
    /// `-> integer | nil` (FMT-006). Empty when it was never called.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub return_types: Vec<String>,
}

impl Memory {
    /// A snapshot holding `entries` in order (a later entry with the
    /// name of an earlier one replaces it in place).
    pub fn from_entries(entries: impl IntoIterator<Item = MemoryEntry>) -> Memory {
        let mut memory = Memory::default();
        for entry in entries {
            memory.upsert(entry);
        }
        memory
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn get(&self, name: &str) -> Option<&MemoryEntry> {
        self.index
            .get(name)
            .and_then(|&i| self.entries.get(i))
            .map(|e| &**e)
    }

    pub fn iter(&self) -> impl Iterator<Item = &MemoryEntry> {
        self.entries.iter().map(|e| &**e)
    }

    /// Replace the entry of the same name where it stands, or append it.
    pub fn upsert(&mut self, entry: MemoryEntry) {
        match self.index.get(entry.name.as_str()) {
            Some(&i) => {
                self.entries.set(i, Arc::new(entry));
            }
            None => {
                self.index
                    .insert(Arc::from(entry.name.as_str()), self.entries.len());
                self.entries.push_back(Arc::new(entry));
            }
        }
    }

    /// A snapshot of `globals`, with the return types of each function
    /// looked up by `return_types`.
    pub fn from_globals(
        globals: &Globals,
        mut return_types: impl FnMut(&str, &Value) -> Vec<String>,
    ) -> Memory {
        Memory::from_entries(
            globals
                .iter()
                .map(|(name, def)| entry(name, def, return_types(name, &def.value))),
        )
    }

    /// This snapshot brought up to date with `globals` for the names in
    /// `changed` (defined or called since the snapshot was taken); every
    /// other entry is kept as it is. New names are appended in the order
    /// `globals` gives them, which is the order they were first defined.
    pub fn updated<'a>(
        &self,
        globals: &Globals,
        changed: impl IntoIterator<Item = &'a str>,
        mut return_types: impl FnMut(&str, &Value) -> Vec<String>,
    ) -> Memory {
        let mut memory = self.clone();
        let mut fresh: Vec<&str> = Vec::new();
        for name in changed {
            let Some(def) = globals.get(name) else {
                continue;
            };
            if memory.index.contains_key(name) {
                memory.upsert(entry(name, def, return_types(name, &def.value)));
            } else {
                fresh.push(name);
            }
        }
        if !fresh.is_empty() {
            let mut fresh: std::collections::HashSet<&str> = fresh.into_iter().collect();
            // Walk the namespace from its end: new names were defined last.
            let mut added: Vec<(&str, &crate::eval::Definition)> = Vec::new();
            for (name, def) in globals.iter_rev() {
                if fresh.is_empty() {
                    break;
                }
                if fresh.remove(name.as_str()) {
                    added.push((name.as_str(), def));
                }
            }
            for (name, def) in added.into_iter().rev() {
                memory.upsert(entry(name, def, return_types(name, &def.value)));
            }
        }
        memory
    }
}

fn entry(name: &str, def: &crate::eval::Definition, return_types: Vec<String>) -> MemoryEntry {
    MemoryEntry {
        name: name.to_string(),
        value: def.value.clone(),
        doc: def.doc.as_ref().map(|d| d.to_string()),
        return_types,
    }
}
