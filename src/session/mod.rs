//! Sessions: the `tool/`, `data/` and `user/` namespaces, and the
//! append-only list of turns a multi-turn run produces.
//!
//! A [`Session`] owns the host tools, the read-only input data and the
//! user definitions that persist from one turn to the next (the REPL
//! prelude). [`Session::eval`] runs one program as a transaction: on
//! success its definitions are committed and its result becomes `*1`; on
//! error nothing changes except that a failed [`Turn`] is recorded.
//!
//! This module does no I/O: tools are host closures, and rendering turns
//! into prompts belongs to `compression`.
//!
//! ```
//! use ptc_lisp::session::Session;
//! use ptc_lisp::value::Value;
//!
//! let mut session = Session::new();
//! session
//!     .register_tool("search", "(query :string) -> [:string]", "Search docs", |args| {
//!         let q = args.str("query").unwrap_or_default().to_string();
//!         Ok(Value::vector([Value::from(format!("result for {q}"))]))
//!     })
//!     .unwrap();
//! session.set_data("limit", 2);
//! let turn = session.eval(r#"(def hits (tool/search "rust")) (count hits)"#);
//! assert!(turn.success);
//! assert_eq!(ptc_lisp::value::pr_str(turn.result().unwrap()), "1");
//! assert_eq!(session.memory().entries[0].name, "hits");
//! ```

pub mod report;
mod returns;
pub mod serde_value;
mod signature;
mod tool;
mod turn;
pub mod typecheck;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use crate::error::{Error, ErrorKind, Result};
use crate::eval::{self, Globals, Host, Limits, Outcome, Program, RunOptions, ToolContext};
use crate::value::{ArcStr, Value};

pub use serde_value::{decode as decode_value, encode as encode_value};
pub use signature::{Param, Signature, SignatureError, Type};
pub use tool::{bind_args, Tool, ToolArgs, ToolError, ToolHandler, ToolSpec};
pub use turn::{Memory, MemoryEntry, ToolCall, Turn, TurnError, TurnOutcome};

/// How a program reads the input value `name`: `data/name` when that reads
/// back as the symbol, else `(data "name")` (a JSON key with a space, a
/// bracket, a quote, ...). Prompts and the REPL show data this way,
/// so every key they list can be reached as shown.
///
/// ```
/// use ptc_lisp::session::data_reference;
/// assert_eq!(data_reference("order_items"), "data/order_items");
/// assert_eq!(data_reference("first name"), r#"(data "first name")"#);
/// assert_eq!(data_reference("a(b)"), r#"(data "a(b)")"#);
/// ```
pub fn data_reference(name: &str) -> String {
    let text = format!("data/{name}");
    let is_symbol = matches!(
        crate::reader::read_program(&text).as_deref(),
        Ok([form]) if matches!(&form.kind, crate::reader::FormKind::Symbol(s) if s.as_str() == text)
    );
    if is_symbol {
        text
    } else {
        format!("(data {})", crate::value::pr_str(&Value::str(name)))
    }
}

/// A multi-turn evaluation context: tools, data, definitions and turns.
///
/// Cloning a session copies its definitions and turns and shares its tool
/// handlers (and interrupt flag): a template session can be cloned for
/// each run of a sub-agent.
#[derive(Clone, Default)]
pub struct Session {
    tools: Vec<Tool>,
    data: Vec<(String, Value)>,
    /// Position of each `data/` name in `data`.
    data_index: HashMap<String, usize>,
    limits: Limits,
    globals: Globals,
    /// `*1 *2 *3`: the results of the most recent successful turns.
    history: [Value; 3],
    /// `*e`: the error of the most recent failed turn, as a map.
    last_error: Value,
    /// The return-type labels of each user function (a redefinition
    /// drops them).
    returns: returns::ReturnTypes,
    memory: Memory,
    turns: Vec<Turn>,
    /// Turns dropped by [`Session::forget_turns`] (numbering goes on).
    forgotten: usize,
    interrupt: Option<Arc<AtomicBool>>,
    /// Heap bytes in use before the session's first turn, the base of
    /// the session memory limit (`None` until then, or without a heap
    /// counter).
    heap_base: Option<usize>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field(
                "tools",
                &self.tools.iter().map(Tool::name).collect::<Vec<_>>(),
            )
            .field(
                "data",
                &self.data.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .field("definitions", &self.globals.names().collect::<Vec<_>>())
            .field("turns", &self.turns.len())
            .finish_non_exhaustive()
    }
}

impl Session {
    /// An empty session with default limits.
    pub fn new() -> Self {
        Session::default()
    }

    /// Builder form of [`Session::set_limits`].
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The limits applied to every later turn.
    pub fn set_limits(&mut self, limits: Limits) -> &mut Self {
        self.limits = limits;
        self
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// A flag that stops the running turn when set to true (from another
    /// thread). It is shared by every later turn; clear it after use.
    pub fn interrupt_handle(&mut self) -> Arc<AtomicBool> {
        self.interrupt
            .get_or_insert_with(|| Arc::new(AtomicBool::new(false)))
            .clone()
    }

    /// Use `flag` as this session's interrupt flag (to share one flag
    /// with a session built later, as after a reset).
    pub fn set_interrupt_handle(&mut self, flag: Arc<AtomicBool>) -> &mut Self {
        self.interrupt = Some(flag);
        self
    }

    /// Register a tool callable as `tool/name`. The signature uses the
    /// syntax of [`Signature`]; a bad name or signature is an error and
    /// registers nothing. See [`bind_args`] for how the arguments of a
    /// call reach the handler.
    pub fn register_tool<F>(
        &mut self,
        name: &str,
        signature: &str,
        description: &str,
        handler: F,
    ) -> Result<&mut Self, ToolError>
    where
        F: Fn(ToolArgs) -> Result<Value, String> + Send + Sync + 'static,
    {
        let tool = Tool::new(name, signature, description, handler)?;
        self.add_tool(tool)
    }

    /// Register an already built tool.
    pub fn add_tool(&mut self, tool: Tool) -> Result<&mut Self, ToolError> {
        if self.tools.iter().any(|t| t.spec.name == tool.spec.name) {
            return Err(ToolError::Duplicate(tool.spec.name));
        }
        self.tools.push(tool);
        Ok(self)
    }

    /// Bind `data/name` (read-only to programs). Setting a name again
    /// replaces its value in place.
    pub fn set_data(&mut self, name: &str, value: impl Into<Value>) -> &mut Self {
        let value = value.into();
        match self.data_index.get(name) {
            Some(&i) => self.data[i].1 = value,
            None => {
                self.data_index.insert(name.to_string(), self.data.len());
                self.data.push((name.to_string(), value));
            }
        }
        self
    }

    /// Bind each `(name, value)` as `data/name`, in order (what
    /// [`read_json_object`](crate::value::read_json_object) gives for a
    /// JSON file).
    pub fn set_data_fields(&mut self, fields: Vec<(String, Value)>) -> &mut Self {
        self.data.reserve(fields.len());
        for (k, v) in fields {
            self.set_data(&k, v);
        }
        self
    }

    /// Bind each key of a JSON object as `data/key`, in the object's order.
    /// Data keeps to the size limit of the session's limits
    /// (`max_collection`) like values programs build: an array, object or
    /// string over it is a `memory-exceeded` error naming its path
    /// (`data/orders[3].items`) and the limit; nothing is bound then.
    pub fn set_data_json(&mut self, json: &serde_json::Value) -> Result<&mut Self> {
        if !json.is_object() {
            return Err(Error::new(
                ErrorKind::Type,
                format!(
                    "Input data must be a JSON object, got {}",
                    match json {
                        serde_json::Value::Array(_) => "an array",
                        serde_json::Value::String(_) => "a string",
                        serde_json::Value::Number(_) => "a number",
                        serde_json::Value::Bool(_) => "a boolean",
                        _ => "null",
                    }
                ),
            ));
        }
        let fields = crate::value::from_json_checked(json, "data/", self.limits.max_collection)
            .map_err(|e| match e {
                crate::value::ReadError::Rule(e) => e,
                crate::value::ReadError::Syntax(m) | crate::value::ReadError::NotAnObject(m) => {
                    Error::new(ErrorKind::Type, m)
                }
            })?;
        self.set_data_fields(fields);
        Ok(self)
    }

    /// Bind `data/name` to any serializable value, through its JSON form
    /// (a `serde_json::Value`, a struct of your own, a `Vec`, ...): objects
    /// become maps with keyword keys, arrays vectors. Checked like
    /// [`Session::set_data_json`]: an integer beyond 64 bits or a value over
    /// the size limit is an error naming its path (`data/name[3]`).
    ///
    /// ```
    /// use ptc_lisp::session::Session;
    ///
    /// #[derive(serde::Serialize)]
    /// struct Order { id: u32, total: f64 }
    ///
    /// let mut session = Session::new();
    /// session.set_data_from("orders", &vec![Order { id: 1, total: 9.5 }]).unwrap();
    /// session.set_data_from("limits", &serde_json::json!({"max": 3})).unwrap();
    /// let turn = session.eval("[(:total (first data/orders)) (:max data/limits)]");
    /// assert_eq!(ptc_lisp::value::pr_str(turn.result().unwrap()), "[9.5 3]");
    /// ```
    pub fn set_data_from<T: serde::Serialize + ?Sized>(
        &mut self,
        name: &str,
        value: &T,
    ) -> Result<&mut Self> {
        let json = serde_json::to_value(value).map_err(|e| {
            Error::new(
                ErrorKind::Type,
                format!("data/{name} has no JSON form: {e}"),
            )
        })?;
        let mut object = serde_json::Map::new();
        object.insert(name.to_string(), json);
        self.set_data_json(&serde_json::Value::Object(object))
    }

    /// Bind each key of a JSON object given as text (what `ptc --data`
    /// reads) as `data/key`, in order, with the checks of
    /// [`Session::set_data_json`]; a syntax error names its line and column.
    ///
    /// ```
    /// let mut session = ptc_lisp::session::Session::new();
    /// session.set_data_json_str(r#"{"rate": 1.08, "ids": [1, 2]}"#).unwrap();
    /// assert!(session.set_data_json_str("[1, 2]").is_err());
    /// ```
    pub fn set_data_json_str(&mut self, text: &str) -> Result<&mut Self> {
        let fields =
            crate::value::read_json_object(text.as_bytes(), "data/", self.limits.max_collection)
                .map_err(|e| match e {
                    crate::value::ReadError::Rule(e) => e,
                    crate::value::ReadError::Syntax(m) => Error::new(
                        ErrorKind::Type,
                        format!("Input data is not valid JSON: {m}"),
                    ),
                    crate::value::ReadError::NotAnObject(m) => Error::new(
                        ErrorKind::Type,
                        format!("Input data must be a JSON object: {m}"),
                    ),
                })?;
        self.set_data_fields(fields);
        Ok(self)
    }

    /// The registered tools, in registration order.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// What prompts need to know about the tools.
    pub fn tool_specs(&self) -> Vec<ToolSpec> {
        self.tools.iter().map(|t| t.spec.clone()).collect()
    }

    /// The `data/` values, in the order they were set.
    pub fn data(&self) -> &[(String, Value)] {
        &self.data
    }

    /// The user definitions as the evaluator sees them.
    pub fn globals(&self) -> &Globals {
        &self.globals
    }

    /// The user namespace now (the memory of the last turn).
    pub fn memory(&self) -> &Memory {
        &self.memory
    }

    /// Every turn so far, oldest first. Turns are never changed or
    /// removed (ARC-002).
    pub fn turns(&self) -> &[Turn] {
        &self.turns
    }

    /// Drop the recorded turns (their programs, prints, tool calls and
    /// values) and keep everything else: definitions, data, tools, `*1
    /// *2 *3` and `*e`. Later turns go on numbering after them. A host
    /// that serves one session for a long time and never renders its
    /// history (`ptc mcp-server`) calls this after each turn, so memory
    /// does not grow with every program run.
    pub fn forget_turns(&mut self) {
        self.forgotten += self.turns.len();
        self.turns = Vec::new();
    }

    fn next_turn_number(&self) -> usize {
        self.forgotten + self.turns.len() + 1
    }

    /// `*1`, `*2`, `*3` for the next turn.
    pub fn history(&self) -> &[Value; 3] {
        &self.history
    }

    /// Run one program as the next turn and record it.
    pub fn eval(&mut self, program: &str) -> &Turn {
        self.eval_checked(program, |_| Ok(()))
    }

    /// Run one program like [`Session::eval`], then let `check` accept or
    /// reject how it ended (it sees every outcome but an error). A
    /// rejected run is recorded as a failed turn with the check's error:
    /// like any failed turn it commits no definitions, but keeps its
    /// prints and tool calls. The agent loop checks `(return v)` values
    /// against a signature this way.
    ///
    /// ```
    /// use ptc_lisp::session::{Session, TurnError, TurnOutcome};
    ///
    /// let mut session = Session::new();
    /// let turn = session.eval_checked("(def x 1) (return \"one\")", |outcome| match outcome {
    ///     TurnOutcome::Return { value } if value.as_str().is_some() => Err(TurnError::new(
    ///         "signature-mismatch", "expected an integer")),
    ///     _ => Ok(()),
    /// });
    /// assert!(!turn.success);
    /// assert_eq!(turn.error().unwrap().code, "signature-mismatch");
    /// assert!(session.memory().is_empty());
    /// ```
    pub fn eval_checked(
        &mut self,
        program: &str,
        check: impl FnOnce(&TurnOutcome) -> std::result::Result<(), TurnError>,
    ) -> &Turn {
        let started = Instant::now();
        let compiled = eval::under_limits(&self.limits, started, self.interrupt.clone(), || {
            Program::compile_for(program, &self.limits, &self.globals)
        });
        self.run_turn(program, compiled, started, check)
    }

    /// Run `compiled`, the program read and analyzed from `source`
    /// beforehand (with [`Program::compile_for`] or
    /// [`Program::from_forms_for`] over [`Session::globals`], so that
    /// definitions shadow builtins), as the next turn (like [`Session::eval`]; the time
    /// limit counts from now). For hosts that time the phases apart or
    /// run one program many times.
    pub fn eval_compiled(&mut self, source: &str, compiled: Program) -> &Turn {
        self.run_turn(source, Ok(compiled), Instant::now(), |_| Ok(()))
    }

    fn run_turn(
        &mut self,
        program: &str,
        compiled: Result<Program>,
        started: Instant,
        check: impl FnOnce(&TurnOutcome) -> std::result::Result<(), TurnError>,
    ) -> &Turn {
        let number = self.next_turn_number();
        let limits = self.turn_limits();
        let session_bound = limits.max_memory < self.limits.max_memory;
        let host = SessionHost {
            tools: &self.tools,
            data: &self.data,
            data_index: &self.data_index,
        };
        let turn = match compiled {
            Err(e) => Turn {
                number,
                program: program.to_string(),
                outcome: TurnOutcome::Error { error: (&e).into() },
                success: false,
                prints: Vec::new(),
                tool_calls: Arc::from([]),
                memory: self.memory.clone(),
                defined: Vec::new(),
                steps: 0,
                duration: started.elapsed(),
            },
            Ok(compiled) => {
                let out = eval::run(
                    &compiled,
                    &host,
                    &self.globals,
                    RunOptions {
                        limits,
                        history: self.history.clone(),
                        last_error: self.last_error.clone(),
                        interrupt: self.interrupt.clone(),
                        // Reading and analyzing the program count too.
                        started: Some(started),
                    },
                );
                let tool_calls = out.tool_calls.into_iter().map(ToolCall::from).collect();
                let outcome = match out.result {
                    Ok(Outcome::Value(value)) => TurnOutcome::Value { value },
                    Ok(Outcome::Return(value)) => TurnOutcome::Return { value },
                    Ok(Outcome::Fail(value)) => TurnOutcome::Fail { value },
                    // The memory limit lowered to what the session memory
                    // limit leaves: the error names the session's.
                    Err(e)
                        if session_bound
                            && e.kind() == ErrorKind::MemoryLimit
                            && e.message().starts_with(crate::meter::HEAP_LIMIT_PREFIX) =>
                    {
                        let error = Error::new(
                            ErrorKind::MemoryLimit,
                            session_memory_message(self.limits.max_session_memory),
                        )
                        .with_hint(SESSION_MEMORY_HINT);
                        TurnOutcome::Error {
                            error: (&error).into(),
                        }
                    }
                    Err(e) => TurnOutcome::Error { error: (&e).into() },
                };
                let outcome = match outcome {
                    TurnOutcome::Error { .. } => outcome,
                    ended => match check(&ended).and_then(|()| self.session_memory_check()) {
                        Ok(()) => ended,
                        Err(error) => TurnOutcome::Error { error },
                    },
                };
                let success = !matches!(outcome, TurnOutcome::Error { .. });
                let mut defined: Vec<String> = Vec::new();
                if success {
                    self.globals = out.globals;
                    let mut called: Vec<ArcStr> = Vec::with_capacity(out.returns.len());
                    for (name, values) in out.returns {
                        if let Some(def) = self.globals.get(&name) {
                            self.returns.record(&name, &def.value, &values);
                            called.push(name);
                        }
                    }
                    // Each name once, in order of first binding (a set, so
                    // a program of N definitions costs O(N), not O(N^2)).
                    let mut seen: HashSet<&str> = HashSet::with_capacity(out.defined.len());
                    for name in &out.defined {
                        if seen.insert(name.as_str()) {
                            defined.push(name.to_string());
                        }
                    }
                    let returns = &self.returns;
                    // Only the names this turn defined or called can have
                    // changed entries.
                    let changed = defined
                        .iter()
                        .map(String::as_str)
                        .chain(called.iter().map(ArcStr::as_str));
                    self.memory = self.memory.updated(&self.globals, changed, |name, value| {
                        returns.labels(name, value)
                    });
                    if let Some(v) = turn_value(&outcome) {
                        self.history = [v, self.history[0].clone(), self.history[1].clone()];
                    }
                }
                Turn {
                    number,
                    program: program.to_string(),
                    outcome,
                    success,
                    prints: out.prints,
                    tool_calls,
                    memory: self.memory.clone(),
                    defined,
                    steps: out.steps,
                    duration: started.elapsed(),
                }
            }
        };
        if let TurnOutcome::Error { error } = &turn.outcome {
            self.last_error = error.to_value();
        }
        self.turns.push(turn);
        self.turns.last().expect("a turn was just pushed")
    }

    /// The limits of the next turn: the session's, with the memory limit
    /// lowered to what the session memory limit leaves.
    fn turn_limits(&mut self) -> Limits {
        let mut limits = self.limits.clone();
        let Some(live) = crate::heap::live_bytes() else {
            return limits;
        };
        let base = *self.heap_base.get_or_insert(live);
        let room = base
            .saturating_add(self.limits.max_session_memory)
            .saturating_sub(live);
        limits.max_memory = limits.max_memory.min(room);
        limits
    }

    /// After a turn that ended well: an error when what the session holds
    /// now (the turn's definitions and result with it) is over the session
    /// memory limit, so the turn keeps none of it.
    fn session_memory_check(&self) -> std::result::Result<(), TurnError> {
        let (Some(base), Some(live)) = (self.heap_base, crate::heap::live_bytes()) else {
            return Ok(());
        };
        let max = self.limits.max_session_memory;
        if live.saturating_sub(base) <= max {
            return Ok(());
        }
        let error = Error::new(ErrorKind::MemoryLimit, session_memory_message(max))
            .with_hint(SESSION_MEMORY_HINT);
        Err((&error).into())
    }

    /// Record a failed turn for `program` without running it: the host
    /// found nothing it could run (the agent loop uses this for a model
    /// reply that held no program). Nothing else changes.
    pub fn record_failed_turn(&mut self, program: &str, error: TurnError) -> &Turn {
        let turn = Turn {
            number: self.next_turn_number(),
            program: program.to_string(),
            outcome: TurnOutcome::Error { error },
            success: false,
            prints: Vec::new(),
            tool_calls: Arc::from([]),
            memory: self.memory.clone(),
            defined: Vec::new(),
            steps: 0,
            duration: std::time::Duration::ZERO,
        };
        self.turns.push(turn);
        self.turns.last().expect("a turn was just pushed")
    }
}

fn turn_value(outcome: &TurnOutcome) -> Option<Value> {
    match outcome {
        TurnOutcome::Value { value }
        | TurnOutcome::Return { value }
        | TurnOutcome::Fail { value } => Some(value.clone()),
        TurnOutcome::Error { .. } => None,
    }
}

/// The evaluator's view of a session: its tools and data.
struct SessionHost<'a> {
    tools: &'a [Tool],
    data: &'a [(String, Value)],
    data_index: &'a HashMap<String, usize>,
}

impl Host for SessionHost<'_> {
    fn data(&self, name: &str) -> Option<Value> {
        self.data_index.get(name).map(|&i| self.data[i].1.clone())
    }

    fn has_tool(&self, name: &str) -> bool {
        self.tools.iter().any(|t| t.spec.name == name)
    }

    fn call_tool(&self, name: &str, args: &[Value], context: &ToolContext) -> Result<Value> {
        match self.tools.iter().find(|t| t.spec.name == name) {
            // The evaluator checks the deadline and the interrupt flag
            // around the call (`Machine::call_tool`).
            Some(tool) => tool.call_unchecked(args, context),
            None => Err(Error::new(
                ErrorKind::Undefined,
                format!("Unknown tool `tool/{name}`"),
            )),
        }
    }

    fn data_names(&self) -> Vec<String> {
        self.data.iter().map(|(n, _)| n.clone()).collect()
    }

    fn tool_names(&self) -> Vec<String> {
        self.tools.iter().map(|t| t.spec.name.clone()).collect()
    }
}

/// The message of a turn stopped by the session memory limit.
pub(crate) fn session_memory_message(max: usize) -> String {
    format!(
        "The session holds more than {} MiB of memory (the session memory limit); this turn's \
         definitions were not kept",
        max >> 20
    )
}

/// What to do about the session memory limit.
pub(crate) const SESSION_MEMORY_HINT: &str =
    "redefine large values instead of defining new ones, or start a new session";
