//! `Session`, `Turn`, `ToolCall` and `Tool`: a PTC-Lisp session driven
//! from Python.
//!
//! `Session.eval` releases the GIL for the whole turn (reading, analysis,
//! evaluation); only a Python tool takes it again, on the session's tool
//! thread (see `tools`). A session is used by one turn at a time: a
//! second `eval` while one runs (another thread, or a tool calling back
//! into its own session) raises `PtcError` with code `session-busy`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, TryLockError};
use std::time::Duration;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use ptc_lisp::agent::{eval_reply, extract_program, prompt_messages, AgentConfig};
use ptc_lisp::compression::{CompressionSetting, Role};
use ptc_lisp::eval::Limits;
use ptc_lisp::session::{Session as LispSession, Signature, Tool as LispTool, Turn as LispTurn};
use ptc_lisp::session::{ToolCall as LispToolCall, TurnOutcome};

use crate::convert::{from_py, to_py, Options};
use crate::errors::{turn_error, PtcError};
use crate::tools::{handler, KeywordNames, ToolRunner};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Session>()?;
    m.add_class::<Turn>()?;
    m.add_class::<ToolCall>()?;
    m.add_class::<Tool>()?;
    m.add_function(wrap_pyfunction!(extract_program_py, m)?)?;
    m.add_function(wrap_pyfunction!(eval, m)?)?;
    Ok(())
}

/// A Python callable to register as `tool/NAME` (for `Session(tools=...)`).
#[pyclass(module = "ptc_lisp", frozen, from_py_object)]
#[derive(Clone)]
pub(crate) struct Tool {
    #[pyo3(get)]
    name: String,
    #[pyo3(get)]
    signature: String,
    #[pyo3(get)]
    doc: String,
    /// Called on the program's thread instead of the session's tool
    /// thread.
    #[pyo3(get)]
    inline: bool,
    func: Arc<Py<PyAny>>,
}

#[pymethods]
impl Tool {
    #[new]
    #[pyo3(signature = (name, signature, func, doc = "", *, inline = false))]
    fn new(name: String, signature: String, func: Py<PyAny>, doc: &str, inline: bool) -> Self {
        Tool {
            name,
            signature,
            doc: doc.to_string(),
            inline,
            func: Arc::new(func),
        }
    }

    #[getter]
    fn func(&self, py: Python<'_>) -> Py<PyAny> {
        self.func.clone_ref(py)
    }

    fn __repr__(&self) -> String {
        format!("Tool({:?}, {:?})", self.name, self.signature)
    }
}

/// The Rust session and the number of turns the prelude took (they are
/// not shown as history in prompts).
struct State {
    session: LispSession,
    prelude_turns: usize,
}

/// A PTC-Lisp session: tools, data and definitions that persist across
/// turns.
#[pyclass(module = "ptc_lisp")]
pub(crate) struct Session {
    state: Mutex<State>,
    options: Options,
    runner: Arc<ToolRunner>,
    interrupt: Arc<AtomicBool>,
}

fn busy() -> PyErr {
    let err = PtcError::new_err(
        "The session is busy: a turn is running (a session runs one turn at a time; a tool cannot evaluate on its own session)",
    );
    Python::attach(|py| crate::errors::with_code(err, py, "session-busy", &[]))
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

impl Session {
    /// Run `f` on the Rust session with the GIL released; a session in
    /// use by another turn is an error, not a wait.
    fn with_session<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut State) -> T + Send,
    ) -> PyResult<T> {
        py.detach(|| match self.state.try_lock() {
            Ok(mut state) => Ok(f(&mut state)),
            Err(TryLockError::WouldBlock) => Err(busy()),
            Err(TryLockError::Poisoned(p)) => Ok(f(&mut p.into_inner())),
        })
    }

    fn add_tool(&self, py: Python<'_>, tool: &Tool) -> PyResult<()> {
        // A signature that does not parse is refused by `LispTool::new`.
        let params = Signature::parse(&tool.signature)
            .map(|s| s.params().to_vec())
            .unwrap_or_default();
        let handler = handler(
            self.runner.clone(),
            tool.func.clone(),
            Arc::new(KeywordNames::new(py, &params)),
            self.options,
            tool.inline,
        );
        let built = LispTool::new(&tool.name, &tool.signature, &tool.doc, handler)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        self.with_session(py, |state| {
            state
                .session
                .add_tool(built)
                .map(|_| ())
                .map_err(|e| e.to_string())
        })?
        .map_err(PyValueError::new_err)
    }

    fn turn(&self, turn: LispTurn) -> Turn {
        Turn {
            turn: Arc::new(turn),
            options: self.options,
        }
    }
}

#[pymethods]
impl Session {
    #[new]
    #[pyo3(signature = (
        data = None,
        tools = None,
        timeout_ms = 1000,
        max_steps = 10_000_000,
        prelude = None,
        *,
        keyword_keys = false,
        max_depth = None,
        max_collection = None,
        max_tool_calls = None,
        max_output = None,
        max_memory_bytes = None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        data: Option<&Bound<'_, PyDict>>,
        tools: Option<&Bound<'_, PyAny>>,
        timeout_ms: u64,
        max_steps: u64,
        prelude: Option<&str>,
        keyword_keys: bool,
        max_depth: Option<usize>,
        max_collection: Option<usize>,
        max_tool_calls: Option<usize>,
        max_output: Option<usize>,
        max_memory_bytes: Option<usize>,
    ) -> PyResult<Self> {
        let defaults = Limits::default();
        let limits = Limits {
            timeout: Duration::from_millis(timeout_ms),
            max_steps,
            max_depth: max_depth.unwrap_or(defaults.max_depth),
            max_collection: max_collection.unwrap_or(defaults.max_collection),
            max_tool_calls: max_tool_calls.unwrap_or(defaults.max_tool_calls),
            max_output: max_output.unwrap_or(defaults.max_output),
            max_memory: max_memory_bytes.unwrap_or(defaults.max_memory),
            ..defaults
        };
        let interrupt = Arc::new(AtomicBool::new(false));
        let mut session = LispSession::new().with_limits(limits.clone());
        session.set_interrupt_handle(interrupt.clone());
        let this = Session {
            state: Mutex::new(State {
                session,
                prelude_turns: 0,
            }),
            options: Options::new(keyword_keys, &limits),
            runner: Arc::new(ToolRunner::default()),
            interrupt,
        };
        if let Some(tools) = tools {
            for tool in tools.try_iter()? {
                let tool = tool?;
                let tool = tool.cast::<Tool>().map_err(|_| {
                    pyo3::exceptions::PyTypeError::new_err(format!(
                        "tools must be ptc_lisp.Tool objects, got {}",
                        crate::convert::python_type(&tool)
                    ))
                })?;
                this.add_tool(py, tool.get())?;
            }
        }
        if let Some(data) = data {
            this.set_data(py, data)?;
        }
        if let Some(source) = prelude {
            let source = source.to_string();
            let failure = this.with_session(py, move |state| {
                let turn = state.session.eval(&source);
                let failure = turn.error().cloned();
                state.prelude_turns = state.session.turns().len();
                failure
            })?;
            if let Some(error) = failure {
                return Err(turn_error(py, &error));
            }
        }
        Ok(this)
    }

    /// Bind each key of `data` as `data/KEY` (a key set before is
    /// replaced; others stay).
    fn set_data(&self, py: Python<'_>, data: &Bound<'_, PyDict>) -> PyResult<()> {
        let mut fields = Vec::with_capacity(data.len());
        for (k, v) in data.iter() {
            let name: String = k
                .extract()
                .map_err(|_| pyo3::exceptions::PyTypeError::new_err("data keys must be strings"))?;
            let value = from_py(&v, self.options, &format!("data/{name}"))?;
            fields.push((name, value));
        }
        self.with_session(py, move |state| {
            state.session.set_data_fields(fields);
        })
    }

    /// Register `func` as `tool/NAME` with a PTC-Lisp signature.
    #[pyo3(signature = (name, signature, func, doc = "", *, inline = false))]
    fn register_tool(
        &self,
        py: Python<'_>,
        name: String,
        signature: String,
        func: Py<PyAny>,
        doc: &str,
        inline: bool,
    ) -> PyResult<()> {
        let tool = Tool::new(name, signature, func, doc, inline);
        self.add_tool(py, &tool)
    }

    /// Run `source` as the next turn.
    fn eval(&self, py: Python<'_>, source: String) -> PyResult<Turn> {
        self.interrupt.store(false, Ordering::SeqCst);
        // A copy of the turn shares its tool calls with the session's.
        let turn = self.with_session(py, move |state| state.session.eval(&source).clone())?;
        Ok(self.turn(turn))
    }

    /// Run a model's reply as the next turn, as the Rust agent does.
    #[pyo3(signature = (reply, signature = None, max_turns = 5))]
    fn eval_reply(
        &self,
        py: Python<'_>,
        reply: String,
        signature: Option<String>,
        max_turns: usize,
    ) -> PyResult<Turn> {
        let signature = signature
            .as_deref()
            .map(Signature::parse)
            .transpose()
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        self.interrupt.store(false, Ordering::SeqCst);
        let turn = self.with_session(py, move |state| {
            eval_reply(
                &mut state.session,
                &reply,
                signature.as_ref(),
                max_turns == 1,
            )
            .0
            .clone()
        })?;
        Ok(self.turn(turn))
    }

    /// The messages the Rust agent would send next.
    #[pyo3(signature = (mission, compression = true, max_turns = 5, signature = None, system_prompt = None))]
    fn render_prompt<'py>(
        &self,
        py: Python<'py>,
        mission: String,
        compression: bool,
        max_turns: usize,
        signature: Option<String>,
        system_prompt: Option<String>,
    ) -> PyResult<Bound<'py, PyList>> {
        let mut config = AgentConfig::new(mission)
            .with_max_turns(max_turns)
            .with_compression(if compression {
                CompressionSetting::On
            } else {
                CompressionSetting::Off
            });
        config.signature = signature;
        config.system_prompt = system_prompt;
        let messages = self.with_session(py, move |state| {
            prompt_messages(&state.session, &config, state.prelude_turns)
                .map(|(messages, _)| messages)
                .map_err(|e| e.to_string())
        })?;
        let messages = messages.map_err(PyValueError::new_err)?;
        let out = PyList::empty(py);
        for m in messages {
            let dict = PyDict::new(py);
            let role = match m.role {
                Role::System => "system",
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            dict.set_item("role", role)?;
            dict.set_item("content", m.content)?;
            out.append(dict)?;
        }
        Ok(out)
    }

    /// Every turn so far, oldest first (the prelude's included).
    #[getter]
    fn turns(&self, py: Python<'_>) -> PyResult<Vec<Turn>> {
        let turns = self.with_session(py, |state| state.session.turns().to_vec())?;
        Ok(turns.into_iter().map(|t| self.turn(t)).collect())
    }

    /// The names of the registered tools.
    #[getter]
    fn tool_names(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.with_session(py, |state| {
            state
                .session
                .tools()
                .iter()
                .map(|t| t.name().to_string())
                .collect()
        })
    }

    /// The `data/` names, in the order they were set.
    #[getter]
    fn data_names(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.with_session(py, |state| {
            state
                .session
                .data()
                .iter()
                .map(|(n, _)| n.clone())
                .collect()
        })
    }

    /// The value of the user definition `name`, or None.
    fn get(&self, py: Python<'_>, name: String) -> PyResult<Py<PyAny>> {
        let value = self.with_session(py, move |state| {
            state.session.globals().get(&name).map(|d| d.value.clone())
        })?;
        match value {
            Some(v) => Ok(to_py(py, &v, self.options)?.unbind()),
            None => Ok(py.None()),
        }
    }

    /// Stop the running turn (from another thread): it ends with the
    /// `interrupted` error. The flag is cleared when the next turn starts.
    fn interrupt(&self) {
        self.interrupt.store(true, Ordering::SeqCst);
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        self.with_session(py, |state| format!("{:?}", state.session))
            .unwrap_or_else(|_| "Session(<busy>)".into())
    }
}

/// The program that the agent loop would run for a model's reply (all
/// eligible fenced blocks joined), or None.
#[pyfunction]
#[pyo3(name = "extract_program")]
fn extract_program_py(reply: &str) -> Option<String> {
    extract_program(reply).map(|p| p.source)
}

/// One turn: the program, how it ended, what it printed and called.
#[pyclass(module = "ptc_lisp", frozen)]
pub(crate) struct Turn {
    turn: Arc<LispTurn>,
    options: Options,
}

#[pymethods]
impl Turn {
    /// 1-based position in the session.
    #[getter]
    fn number(&self) -> usize {
        self.turn.number
    }

    #[getter]
    fn program(&self) -> &str {
        &self.turn.program
    }

    /// True when the program ran without error.
    #[getter]
    fn success(&self) -> bool {
        self.turn.success
    }

    /// The value (last expression, `return` or `fail`); None on error.
    #[getter]
    fn value(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match self.turn.result() {
            Some(v) => Ok(to_py(py, v, self.options)?.unbind()),
            None => Ok(py.None()),
        }
    }

    /// True when the program called `(return v)`.
    #[getter]
    fn returned(&self) -> bool {
        self.turn.returned()
    }

    /// True when the program called `(fail v)`.
    #[getter]
    fn failed(&self) -> bool {
        matches!(self.turn.outcome, TurnOutcome::Fail { .. })
    }

    #[getter]
    fn prints(&self) -> Vec<String> {
        self.turn.prints.clone()
    }

    #[getter]
    fn tool_calls(&self) -> Vec<ToolCall> {
        self.turn
            .tool_calls
            .iter()
            .map(|c| ToolCall {
                call: c.clone(),
                options: self.options,
            })
            .collect()
    }

    /// Names bound with `def`/`defn` (empty for a failed turn).
    #[getter]
    fn defined(&self) -> Vec<String> {
        self.turn.defined.clone()
    }

    #[getter]
    fn steps(&self) -> u64 {
        self.turn.steps
    }

    #[getter]
    fn duration_ms(&self) -> f64 {
        millis(self.turn.duration)
    }

    /// The error as an exception instance (not raised), or None.
    #[getter]
    fn error(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.turn
            .error()
            .map(|e| turn_error(py, e).into_value(py).into_any())
    }

    /// Raise the turn's error, if it has one.
    fn raise_for_error(&self, py: Python<'_>) -> PyResult<()> {
        match self.turn.error() {
            Some(e) => Err(turn_error(py, e)),
            None => Ok(()),
        }
    }

    fn __repr__(&self) -> String {
        match self.turn.error() {
            Some(e) => format!(
                "Turn(number={}, error={:?}: {:?})",
                self.turn.number, e.code, e.message
            ),
            None => format!(
                "Turn(number={}, value={})",
                self.turn.number,
                self.turn
                    .result()
                    .map_or("nil".into(), |v| crate::convert::short_pr(v, 200))
            ),
        }
    }
}

/// One tool call of a turn.
#[pyclass(module = "ptc_lisp", frozen)]
pub(crate) struct ToolCall {
    call: LispToolCall,
    options: Options,
}

#[pymethods]
impl ToolCall {
    #[getter]
    fn name(&self) -> &str {
        &self.call.name
    }

    /// The arguments exactly as written in the call.
    #[getter]
    fn args(&self, py: Python<'_>) -> PyResult<Vec<Py<PyAny>>> {
        self.call
            .args
            .iter()
            .map(|v| to_py(py, v, self.options).map(Bound::unbind))
            .collect()
    }

    /// The result, when the tool succeeded.
    #[getter]
    fn result(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match &self.call.result {
            Some(v) => Ok(to_py(py, v, self.options)?.unbind()),
            None => Ok(py.None()),
        }
    }

    /// The error message, when the tool failed.
    #[getter]
    fn error(&self) -> Option<String> {
        self.call.error.clone()
    }

    #[getter]
    fn duration_ms(&self) -> f64 {
        millis(self.call.duration)
    }

    fn __repr__(&self) -> String {
        format!("ToolCall(name={:?})", self.call.name)
    }
}

/// Evaluate `source` in a fresh session and return its value (raising its
/// error).
#[pyfunction]
#[pyo3(signature = (source, data = None, timeout_ms = 1000))]
pub(crate) fn eval(
    py: Python<'_>,
    source: String,
    data: Option<&Bound<'_, PyDict>>,
    timeout_ms: u64,
) -> PyResult<Py<PyAny>> {
    let session = Session::new(
        py, data, None, timeout_ms, 10_000_000, None, false, None, None, None, None, None,
    )?;
    let turn = session.eval(py, source)?;
    turn.raise_for_error(py)?;
    turn.value(py)
}
