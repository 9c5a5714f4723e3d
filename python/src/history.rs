//! The history layer on plain OpenAI-style message dicts: `count_tokens`,
//! `compact` (with a Python summarizer or the deterministic digest, and
//! events to a file or URL as the CLI exports them) and `load_config`.
//!
//! Messages cross as JSON (`serde`), so every shape the Rust `Message`
//! accepts (content strings or part arrays, tool calls, unknown fields
//! kept) is accepted here. Counting and compaction run with the GIL
//! released; a Python summarizer takes it again for its call.

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use ptc_lisp::agent::{provider_from_spec, LlmSummarizer, ProviderOptions};
use ptc_lisp::history::config::{self, Config as LispConfig, Overrides, SummaryMode};
use ptc_lisp::history::recorder::Recorder;
use ptc_lisp::history::trace::new_session_id;
use ptc_lisp::history::{
    Breakdown as LispBreakdown, CompactError as LispCompactError, Compactor, Context, Digest,
    Message, Policy, Report, Summarizer, SummaryError, SummaryRequest, TokenCounter,
};

use crate::convert::{json_to_py, to_json};
use crate::errors::{config_error, with_code, CompactError, SummaryRefused};
use crate::tools::describe;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Breakdown>()?;
    m.add_class::<CompactResult>()?;
    m.add_class::<Config>()?;
    m.add_function(wrap_pyfunction!(count_tokens, m)?)?;
    m.add_function(wrap_pyfunction!(compact, m)?)?;
    m.add_function(wrap_pyfunction!(load_config, m)?)?;
    Ok(())
}

/// Tokens of a prompt by section.
#[pyclass(module = "ptc_lisp", frozen, eq)]
#[derive(Clone, PartialEq)]
pub(crate) struct Breakdown {
    inner: LispBreakdown,
}

#[pymethods]
impl Breakdown {
    /// System messages.
    #[getter]
    fn system(&self) -> usize {
        self.inner.system
    }

    /// Developer messages.
    #[getter]
    fn developer(&self) -> usize {
        self.inner.developer
    }

    /// The tool schemas sent with the request.
    #[getter]
    fn tools_schema(&self) -> usize {
        self.inner.tools_schema
    }

    /// Every other message, plus the reply priming.
    #[getter]
    fn messages(&self) -> usize {
        self.inner.messages
    }

    #[getter]
    fn total(&self) -> usize {
        self.inner.total()
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        breakdown_dict(py, &self.inner)
    }

    fn __repr__(&self) -> String {
        let b = &self.inner;
        format!(
            "Breakdown(total={}, system={}, developer={}, tools_schema={}, messages={})",
            b.total(),
            b.system,
            b.developer,
            b.tools_schema,
            b.messages
        )
    }
}

fn breakdown_dict<'py>(py: Python<'py>, b: &LispBreakdown) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("system", b.system)?;
    d.set_item("developer", b.developer)?;
    d.set_item("tools_schema", b.tools_schema)?;
    d.set_item("messages", b.messages)?;
    d.set_item("total", b.total())?;
    Ok(d)
}

/// Python message dicts as history messages; errors name the index and
/// the field.
fn messages_from(messages: &Bound<'_, PyAny>) -> PyResult<Vec<Message>> {
    let mut out = Vec::new();
    for (i, m) in messages.try_iter()?.enumerate() {
        let path = format!("messages[{i}]");
        let json = to_json(&m?, &path)?;
        let message: Message = serde_json::from_value(json)
            .map_err(|e| PyValueError::new_err(format!("{path}: {e}")))?;
        out.push(message);
    }
    Ok(out)
}

fn messages_to<'py>(py: Python<'py>, messages: &[Message]) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for m in messages {
        let json = serde_json::to_value(m).map_err(|e| PyValueError::new_err(e.to_string()))?;
        out.append(json_to_py(py, &json)?)?;
    }
    Ok(out)
}

fn tools_schema(tools: Option<&Bound<'_, PyAny>>) -> PyResult<Option<serde_json::Value>> {
    tools.map(|t| to_json(t, "tools")).transpose()
}

/// Tokens of a request made of `messages` for `model`, by section.
#[pyfunction]
#[pyo3(signature = (messages, model = "gpt-4o", tools = None))]
fn count_tokens(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
    model: &str,
    tools: Option<&Bound<'_, PyAny>>,
) -> PyResult<Breakdown> {
    let messages = messages_from(messages)?;
    let tools = tools_schema(tools)?;
    let model = model.to_string();
    let inner = py.detach(move || {
        let mut counter = TokenCounter::new(&model);
        counter.set_tools_schema(tools.as_ref());
        counter.count(&messages)
    });
    Ok(Breakdown { inner })
}

/// A Python callable as the summarizer: called with a dict describing the
/// request, it returns the summary body.
struct PySummarizer {
    func: Py<PyAny>,
    name: String,
}

impl Summarizer for PySummarizer {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn summarize(&self, request: &SummaryRequest<'_>) -> Result<String, SummaryError> {
        Python::attach(|py| {
            let call = || -> PyResult<String> {
                let r = PyDict::new(py);
                r.set_item("strategy", request.strategy.as_str())?;
                r.set_item("max_tokens", request.max_tokens)?;
                r.set_item("messages", messages_to(py, request.messages)?)?;
                r.set_item("previous", request.previous)?;
                r.set_item("state", request.state)?;
                r.set_item("note", request.note)?;
                self.func.call1(py, (r,))?.extract::<String>(py)
            };
            call().map_err(|e| {
                if e.is_instance_of::<SummaryRefused>(py) {
                    SummaryError::Refused(
                        e.value(py).str().map(|s| s.to_string()).unwrap_or_default(),
                    )
                } else {
                    SummaryError::Failed(describe(py, &e))
                }
            })
        })
    }
}

/// What `compact` did.
#[pyclass(module = "ptc_lisp", frozen)]
pub(crate) struct CompactResult {
    /// The history to send: the input unchanged, or compacted.
    #[pyo3(get)]
    messages: Py<PyList>,
    /// What the compaction did (a dict), or None when it did not compact.
    #[pyo3(get)]
    report: Py<PyAny>,
    /// Every event of the history layer, in order (dicts with `event`).
    #[pyo3(get)]
    events: Py<PyList>,
    /// Tokens of `messages`, by section.
    #[pyo3(get)]
    tokens: Breakdown,
}

#[pymethods]
impl CompactResult {
    /// True when the history was compacted.
    #[getter]
    fn compacted(&self, py: Python<'_>) -> bool {
        !self.report.is_none(py)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "CompactResult(messages={}, tokens={}, compacted={})",
            self.messages.bind(py).len(),
            self.tokens.inner.total(),
            self.compacted(py)
        )
    }
}

fn report_dict<'py>(py: Python<'py>, r: &Report) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("before", breakdown_dict(py, &r.before)?)?;
    d.set_item("after", breakdown_dict(py, &r.after)?)?;
    d.set_item("pruned", r.pruned)?;
    let json = |v: serde_json::Result<serde_json::Value>| -> PyResult<Bound<'py, PyAny>> {
        json_to_py(py, &v.map_err(|e| PyValueError::new_err(e.to_string()))?)
    };
    d.set_item("kept", json(serde_json::to_value(r.kept))?)?;
    d.set_item("layers", json(serde_json::to_value(r.layers))?)?;
    match r.summary {
        Some((version, tokens)) => {
            let s = PyDict::new(py);
            s.set_item("version", version)?;
            s.set_item("tokens", tokens)?;
            d.set_item("summary", s)?;
        }
        None => d.set_item("summary", py.None())?,
    }
    d.set_item("fallbacks", r.fallbacks.clone())?;
    d.set_item("text", r.to_string())?;
    Ok(d)
}

fn compact_error(py: Python<'_>, e: &LispCompactError) -> PyErr {
    if let LispCompactError::Policy(p) = e {
        return config_error(py, vec![p.to_string()]);
    }
    with_code(CompactError::new_err(e.to_string()), py, e.kind(), &[])
}

/// The policy: defaults, then `config`'s, then `policy` (a dict of
/// `Policy` fields), then `max_context_tokens`.
fn policy_from(
    base: Policy,
    policy: Option<&Bound<'_, PyAny>>,
    max_context_tokens: Option<usize>,
) -> PyResult<Policy> {
    let mut policy = match policy {
        None => base,
        Some(p) => {
            let mut merged =
                serde_json::to_value(&base).map_err(|e| PyValueError::new_err(e.to_string()))?;
            let given = to_json(p, "policy")?;
            let Some(given) = given.as_object() else {
                return Err(Python::attach(|py| {
                    config_error(py, vec!["policy must be a dict of policy fields".into()])
                }));
            };
            if let Some(m) = merged.as_object_mut() {
                for (k, v) in given {
                    m.insert(k.clone(), v.clone());
                }
            }
            serde_json::from_value(merged)
                .map_err(|e| Python::attach(|py| config_error(py, vec![format!("policy: {e}")])))?
        }
    };
    if let Some(max) = max_context_tokens {
        policy.max_context_tokens = max;
    }
    Ok(policy)
}

/// Keep `messages` within the token budget: compact when they reach the
/// trigger (or always, with `force`), else return them unchanged.
#[pyfunction]
#[pyo3(signature = (
    messages,
    model = None,
    max_context_tokens = None,
    policy = None,
    summarizer = None,
    *,
    force = false,
    note = "manual",
    state = None,
    tools = None,
    config = None,
    events = None,
    events_url = None,
    session_id = None,
))]
#[allow(clippy::too_many_arguments)]
fn compact(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
    model: Option<String>,
    max_context_tokens: Option<usize>,
    policy: Option<&Bound<'_, PyAny>>,
    summarizer: Option<Py<PyAny>>,
    force: bool,
    note: &str,
    state: Option<String>,
    tools: Option<&Bound<'_, PyAny>>,
    config: Option<&Config>,
    events: Option<PathBuf>,
    events_url: Option<String>,
    session_id: Option<String>,
) -> PyResult<CompactResult> {
    let messages = messages_from(messages)?;
    let tools = tools_schema(tools)?;
    let mut settings = config.map(|c| c.inner.clone()).unwrap_or_default();
    if events.is_some() {
        settings.events.file = events;
    }
    if events_url.is_some() {
        settings.events.url = events_url;
    }
    let model = model
        .or_else(|| settings.model.clone())
        .unwrap_or_else(|| "gpt-4o".to_string());
    let policy = policy_from(settings.policy(), policy, max_context_tokens)?;
    let mut compactor = Compactor::new(&model, policy).map_err(|e| compact_error(py, &e))?;
    compactor.counter_mut().set_tools_schema(tools.as_ref());
    let summarizer: Box<dyn Summarizer + Send + Sync> = match summarizer {
        Some(func) => {
            let name = func
                .bind(py)
                .getattr("__name__")
                .and_then(|n| n.extract::<String>())
                .unwrap_or_else(|_| "python".into());
            Box::new(PySummarizer {
                func,
                name: format!("python:{name}"),
            })
        }
        None => match (settings.summary.mode, &settings.summary.llm) {
            (SummaryMode::Digest, _) => Box::new(Digest),
            (SummaryMode::Llm, None) => {
                return Err(config_error(
                    py,
                    vec!["summary.llm: `summary.mode = \"llm\"` needs the model that writes the summary (or pass summarizer=)".into()],
                ))
            }
            (SummaryMode::Llm, Some(spec)) => {
                let provider = provider_from_spec(spec, ProviderOptions::default())
                    .map_err(|e| config_error(py, vec![format!("summary.llm: {e}")]))?;
                Box::new(LlmSummarizer::new(Arc::from(provider)))
            }
        },
    };
    let session_id = session_id.unwrap_or_else(new_session_id);
    let mut recorder =
        Recorder::from_config(&settings, &session_id).map_err(|e| config_error(py, vec![e]))?;
    let strategy = compactor.policy().strategy;
    let note = note.to_string();
    let outcome = py.detach(|| {
        let context = Context {
            state: state.as_deref(),
        };
        let outcome = if force {
            compactor.manual_compact(&messages, &note, summarizer.as_ref(), context)
        } else {
            compactor.preflight_with(&messages, summarizer.as_ref(), context)
        };
        let events = compactor.take_events();
        recorder.events(&events);
        if let Ok(o) = &outcome {
            if let Some(report) = &o.report {
                recorder.round(
                    &messages,
                    &o.messages,
                    report,
                    strategy.as_str(),
                    &summarizer.name(),
                    force.then_some(note.as_str()),
                );
            }
        }
        recorder.finish();
        (outcome, events)
    });
    let (outcome, events) = outcome;
    let outcome = outcome.map_err(|e| compact_error(py, &e))?;
    let event_list = PyList::empty(py);
    for e in &events {
        let json = serde_json::to_value(e).map_err(|e| PyValueError::new_err(e.to_string()))?;
        event_list.append(json_to_py(py, &json)?)?;
    }
    let report = match &outcome.report {
        Some(r) => report_dict(py, r)?.into_any().unbind(),
        None => py.None(),
    };
    Ok(CompactResult {
        messages: messages_to(py, &outcome.messages)?.unbind(),
        report,
        events: event_list.unbind(),
        tokens: Breakdown {
            inner: outcome.tokens,
        },
    })
}

/// The history layer's configuration, as `ptc` reads it.
#[pyclass(module = "ptc_lisp", frozen)]
pub(crate) struct Config {
    inner: LispConfig,
    file: Option<PathBuf>,
}

#[pymethods]
impl Config {
    /// The model whose tokenizer counts, if the configuration names one.
    #[getter]
    fn model(&self) -> Option<String> {
        self.inner.model.clone()
    }

    #[getter]
    fn max_context_tokens(&self) -> usize {
        self.inner.max_context_tokens
    }

    /// The compaction policy (a dict that `compact(policy=...)` accepts).
    #[getter]
    fn policy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let json = serde_json::to_value(self.inner.policy())
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        json_to_py(py, &json)
    }

    /// The file read, if any.
    #[getter]
    fn file(&self) -> Option<PathBuf> {
        self.file.clone()
    }

    /// Every setting, as nested dicts.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let json =
            serde_json::to_value(&self.inner).map_err(|e| PyValueError::new_err(e.to_string()))?;
        json_to_py(py, &json)
    }

    fn __repr__(&self) -> String {
        format!(
            "Config(file={:?}, model={:?}, max_context_tokens={})",
            self.file, self.inner.model, self.inner.max_context_tokens
        )
    }
}

/// Read the history configuration: defaults, then `path` (TOML, YAML or
/// JSON; `ptc.toml` in the working directory when None and it exists),
/// then `COMPACT_*` environment variables. Errors name each field path.
#[pyfunction]
#[pyo3(signature = (path = None))]
fn load_config(py: Python<'_>, path: Option<PathBuf>) -> PyResult<Config> {
    match config::load(path.as_deref(), Overrides::default()) {
        Ok(loaded) => Ok(Config {
            inner: loaded.config,
            file: loaded.file,
        }),
        Err(e) => Err(config_error(py, e.problems)),
    }
}
