//! Values between PTC-Lisp and Python, and Python objects as JSON.
//!
//! PTC-Lisp to Python: nil `None`, booleans, integers, floats and strings
//! as themselves, keywords as [`Keyword`], vectors and lists as `list`,
//! sets as `set`, maps as `dict` whose keyword keys are plain strings
//! (or `Keyword`s when the session keeps them). Inside a set or as a map
//! key a value must be hashable, so there a vector is a `tuple` and a set
//! a `frozenset`; a map there has no hashable form and is an error.
//! Functions, symbols, vars and regexes are [`Opaque`].
//!
//! Python to PTC-Lisp is the inverse: `dict` to a map (string keys as
//! keywords, as JSON data is read, unless the session keeps keywords),
//! `list` and `tuple` to a vector, `set` and `frozenset` to a set. Both
//! directions bound the nesting depth and, on the way out, the number of
//! values made (a value that shares structure can expand far beyond
//! memory), and the way in checks the session's collection size limit;
//! each error names the path of the offending value.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PySet, PyString, PyTuple};

use ptc_lisp::value::{pr_str, ArcStr, Map, Set, Value};

/// Deepest nesting converted in either direction (Python's own default
/// recursion limit; a value that contains itself stops here).
pub(crate) const MAX_DEPTH: usize = 1000;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Keyword>()?;
    m.add_class::<Opaque>()?;
    Ok(())
}

/// A PTC-Lisp keyword (`:name`), distinct from a string.
#[pyclass(module = "ptc_lisp", frozen, eq, hash, from_py_object)]
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) struct Keyword {
    name: String,
}

#[pymethods]
impl Keyword {
    #[new]
    fn new(name: &str) -> PyResult<Self> {
        let name = name.strip_prefix(':').unwrap_or(name);
        if name.is_empty() {
            return Err(PyValueError::new_err("a keyword needs a name"));
        }
        Ok(Keyword {
            name: name.to_string(),
        })
    }

    /// The name, without the colon.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    fn __repr__(&self) -> String {
        format!("Keyword({:?})", self.name)
    }

    fn __str__(&self) -> String {
        format!(":{}", self.name)
    }
}

/// A PTC-Lisp value with no Python form (a function, a symbol, a var, a
/// regex), shown as PTC-Lisp prints it. It cannot be passed back.
#[pyclass(module = "ptc_lisp", frozen)]
pub(crate) struct Opaque {
    kind: String,
    text: String,
}

#[pymethods]
impl Opaque {
    /// The PTC-Lisp type (`function`, `symbol`, `var`, `regex`).
    #[getter]
    fn kind(&self) -> &str {
        &self.kind
    }

    /// The value as PTC-Lisp prints it.
    #[getter]
    fn text(&self) -> &str {
        &self.text
    }

    fn __repr__(&self) -> String {
        format!("Opaque({:?}, {:?})", self.kind, self.text)
    }

    fn __str__(&self) -> String {
        self.text.clone()
    }
}

/// How maps' keys cross the boundary.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Options {
    /// Keyword keys as `Keyword` (and string keys kept as strings on the
    /// way in), instead of plain strings both ways.
    pub keyword_keys: bool,
    /// The most values one conversion to Python makes.
    pub max_values: usize,
    /// The largest collection (items) or string (characters) accepted
    /// from Python.
    pub max_collection: usize,
}

impl Options {
    pub(crate) fn new(keyword_keys: bool, limits: &ptc_lisp::eval::Limits) -> Options {
        Options {
            keyword_keys,
            max_values: limits.max_expanded,
            max_collection: limits.max_collection,
        }
    }
}

/// A conversion to Python in progress: the values made so far.
struct ToPy<'py> {
    py: Python<'py>,
    options: Options,
    made: usize,
}

/// `value` as a Python object.
pub(crate) fn to_py<'py>(
    py: Python<'py>,
    value: &Value,
    options: Options,
) -> PyResult<Bound<'py, PyAny>> {
    let mut state = ToPy {
        py,
        options,
        made: 0,
    };
    state.value(value, 0, false)
}

impl<'py> ToPy<'py> {
    fn count(&mut self) -> PyResult<()> {
        self.made += 1;
        if self.made > self.options.max_values {
            return Err(PyValueError::new_err(format!(
                "The value has more than {} items in all (shared structure expanded), the session's `max_expanded` limit",
                self.options.max_values
            )));
        }
        Ok(())
    }

    /// `hashable`: the value is a set item or a map key.
    fn value(&mut self, v: &Value, depth: usize, hashable: bool) -> PyResult<Bound<'py, PyAny>> {
        if depth > MAX_DEPTH {
            return Err(PyValueError::new_err(format!(
                "The value is nested more than {MAX_DEPTH} levels deep"
            )));
        }
        self.count()?;
        let py = self.py;
        Ok(match v {
            Value::Nil => py.None().into_bound(py),
            Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
            Value::Int(n) => n.into_pyobject(py)?.into_any(),
            Value::Float(f) => PyFloat::new(py, *f).into_any(),
            Value::Str(_) | Value::ShortStr(_) => {
                PyString::new(py, v.as_str().unwrap_or_default()).into_any()
            }
            Value::Keyword(k) => Bound::new(
                py,
                Keyword {
                    name: k.to_string(),
                },
            )?
            .into_any(),
            Value::Vector(items) | Value::List(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items.iter() {
                    out.push(self.value(item, depth + 1, hashable)?);
                }
                if hashable {
                    PyTuple::new(py, out)?.into_any()
                } else {
                    PyList::new(py, out)?.into_any()
                }
            }
            Value::Set(set) => {
                let mut out = Vec::with_capacity(set.len());
                for item in set.iter() {
                    out.push(self.value(item, depth + 1, true)?);
                }
                if hashable {
                    PyFrozenSet::new(py, out)?.into_any()
                } else {
                    PySet::new(py, out)?.into_any()
                }
            }
            Value::Map(map) => {
                if hashable {
                    return Err(PyTypeError::new_err(format!(
                        "A map inside a set or used as a map key has no hashable Python form: {}",
                        short_pr(v, 80)
                    )));
                }
                let dict = PyDict::new(py);
                for (k, item) in map.iter() {
                    let key = match k {
                        Value::Keyword(name) if !self.options.keyword_keys => {
                            self.count()?;
                            PyString::new(py, name).into_any()
                        }
                        _ => self.value(k, depth + 1, true)?,
                    };
                    dict.set_item(key, self.value(item, depth + 1, false)?)?;
                }
                dict.into_any()
            }
            Value::Reduced(inner) => return self.value(inner, depth, hashable),
            Value::Symbol(_)
            | Value::Var(_)
            | Value::Regex(_)
            | Value::Native(_)
            | Value::Fn(_) => Bound::new(
                py,
                Opaque {
                    kind: v.type_name().to_string(),
                    text: pr_str(v),
                },
            )?
            .into_any(),
        })
    }
}

/// A Python object as a PTC-Lisp value; `path` names it in errors
/// (`data/orders`, `the result of tool/search`).
pub(crate) fn from_py(obj: &Bound<'_, PyAny>, options: Options, path: &str) -> PyResult<Value> {
    let mut at = path.to_string();
    from_py_at(obj, options, &mut at, 0)
}

fn check_depth(path: &str, depth: usize) -> PyResult<()> {
    if depth > MAX_DEPTH {
        return Err(PyValueError::new_err(format!(
            "{path} is nested more than {MAX_DEPTH} levels deep (a value that contains itself?)"
        )));
    }
    Ok(())
}

/// The name of `obj`'s type (`datetime`).
pub(crate) fn python_type(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".into())
}

fn too_large(path: &str, len: usize, max: usize, what: &str) -> PyErr {
    PyValueError::new_err(format!(
        "{path} has {len} {what}, over the limit of {max} (`max_collection`)"
    ))
}

fn from_py_at(
    obj: &Bound<'_, PyAny>,
    options: Options,
    path: &mut String,
    depth: usize,
) -> PyResult<Value> {
    check_depth(path, depth)?;
    if obj.is_none() {
        return Ok(Value::Nil);
    }
    // `bool` before `int`: True is an int in Python.
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if let Ok(n) = obj.cast::<PyInt>() {
        return n.extract::<i64>().map(Value::Int).map_err(|_| {
            PyValueError::new_err(format!(
                "{path} is the integer {}, outside the 64-bit range PTC-Lisp holds",
                n.str().map(|s| s.to_string()).unwrap_or_default()
            ))
        });
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(Value::Float(f.value()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        let text = s.to_cow()?;
        if text.len() > options.max_collection && text.chars().count() > options.max_collection {
            return Err(too_large(
                path,
                text.chars().count(),
                options.max_collection,
                "characters",
            ));
        }
        return Ok(Value::str(&text));
    }
    if let Ok(k) = obj.cast::<Keyword>() {
        return Ok(Value::Keyword(ArcStr::from(k.get().name.as_str())));
    }
    if let Ok(dict) = obj.cast::<PyDict>() {
        if dict.len() > options.max_collection {
            return Err(too_large(
                path,
                dict.len(),
                options.max_collection,
                "entries",
            ));
        }
        let mut map = Map::new();
        let len = path.len();
        for (k, v) in dict.iter() {
            let key = match k.cast::<PyString>() {
                Ok(s) if !options.keyword_keys => Value::Keyword(ArcStr::from(&*s.to_cow()?)),
                _ => {
                    path.push_str(" (a key)");
                    let key = from_py_at(&k, options, path, depth + 1)?;
                    path.truncate(len);
                    key
                }
            };
            push_key(path, &key);
            let value = from_py_at(&v, options, path, depth + 1)?;
            path.truncate(len);
            map.insert(key, value);
        }
        return Ok(Value::map(map));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let len = obj.len()?;
        if len > options.max_collection {
            return Err(too_large(path, len, options.max_collection, "items"));
        }
        let mut items = Vec::with_capacity(len);
        let base = path.len();
        for (i, item) in obj.try_iter()?.enumerate() {
            path.push_str(&format!("[{i}]"));
            items.push(from_py_at(&item?, options, path, depth + 1)?);
            path.truncate(base);
        }
        return Ok(Value::vector(items));
    }
    if obj.is_instance_of::<PySet>() || obj.is_instance_of::<PyFrozenSet>() {
        let len = obj.len()?;
        if len > options.max_collection {
            return Err(too_large(path, len, options.max_collection, "items"));
        }
        let mut set = Set::new();
        let base = path.len();
        for item in obj.try_iter()? {
            path.push_str(" (an item of the set)");
            set.insert(from_py_at(&item?, options, path, depth + 1)?);
            path.truncate(base);
        }
        return Ok(Value::set(set));
    }
    if obj.is_instance_of::<Opaque>() {
        return Err(PyTypeError::new_err(format!(
            "{path} is a PTC-Lisp {} that cannot be passed back",
            obj.cast::<Opaque>()?.get().kind
        )));
    }
    let type_name = python_type(obj);
    Err(PyTypeError::new_err(format!(
        "{path} is a Python `{type_name}`, which PTC-Lisp cannot hold (use None, bool, int, float, str, Keyword, list, tuple, dict, set or frozenset)"
    )))
}

/// The printed form of `v`, cut after about `limit` bytes.
pub(crate) fn short_pr(v: &Value, limit: usize) -> String {
    let mut out = String::new();
    if !ptc_lisp::value::write_pr_bounded(&mut out, v, limit) {
        let mut end = limit.min(out.len());
        while !out.is_char_boundary(end) {
            end -= 1;
        }
        out.truncate(end);
        out.push_str("...");
    }
    out
}

/// `data/orders` + key `:id` = `data/orders.id`; other keys in brackets.
fn push_key(path: &mut String, key: &Value) {
    match key.as_name() {
        Some(name) => {
            path.push('.');
            path.push_str(name);
        }
        None => {
            path.push('[');
            path.push_str(&short_pr(key, 40));
            path.push(']');
        }
    }
}

/// A Python object as JSON (for messages, policies and tool schemas):
/// dicts with string keys, lists and tuples, strings, numbers, booleans
/// and None. `path` names the offending value in errors.
pub(crate) fn to_json(obj: &Bound<'_, PyAny>, path: &str) -> PyResult<serde_json::Value> {
    let mut at = path.to_string();
    to_json_at(obj, &mut at, 0)
}

fn to_json_at(
    obj: &Bound<'_, PyAny>,
    path: &mut String,
    depth: usize,
) -> PyResult<serde_json::Value> {
    use serde_json::Value as Json;
    check_depth(path, depth)?;
    if obj.is_none() {
        return Ok(Json::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Json::Bool(b.is_true()));
    }
    if let Ok(n) = obj.cast::<PyInt>() {
        if let Ok(i) = n.extract::<i64>() {
            return Ok(Json::from(i));
        }
        if let Ok(u) = n.extract::<u64>() {
            return Ok(Json::from(u));
        }
        return Err(PyValueError::new_err(format!(
            "{path} is an integer outside the 64-bit range"
        )));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return serde_json::Number::from_f64(f.value())
            .map(Json::Number)
            .ok_or_else(|| {
                PyValueError::new_err(format!("{path} is {}, which JSON cannot hold", f.value()))
            });
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Json::String(s.to_cow()?.into_owned()));
    }
    if let Ok(dict) = obj.cast::<PyDict>() {
        let mut out = serde_json::Map::with_capacity(dict.len());
        let base = path.len();
        for (k, v) in dict.iter() {
            let key = match k.cast::<PyString>() {
                Ok(s) => s.to_cow()?.into_owned(),
                Err(_) => {
                    return Err(PyTypeError::new_err(format!(
                        "{path} has a key that is not a string: {}",
                        k.repr().map(|r| r.to_string()).unwrap_or_default()
                    )))
                }
            };
            path.push('.');
            path.push_str(&key);
            let value = to_json_at(&v, path, depth + 1)?;
            path.truncate(base);
            out.insert(key, value);
        }
        return Ok(Json::Object(out));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let mut out = Vec::with_capacity(obj.len()?);
        let base = path.len();
        for (i, item) in obj.try_iter()?.enumerate() {
            path.push_str(&format!("[{i}]"));
            out.push(to_json_at(&item?, path, depth + 1)?);
            path.truncate(base);
        }
        return Ok(Json::Array(out));
    }
    let type_name = python_type(obj);
    Err(PyTypeError::new_err(format!(
        "{path} is a Python `{type_name}`, not a JSON value (dict, list, str, int, float, bool or None)"
    )))
}

/// JSON as Python objects (dicts keep their order).
pub(crate) fn json_to_py<'py>(
    py: Python<'py>,
    json: &serde_json::Value,
) -> PyResult<Bound<'py, PyAny>> {
    use serde_json::Value as Json;
    Ok(match json {
        Json::Null => py.None().into_bound(py),
        Json::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Json::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_pyobject(py)?.into_any(),
            (None, Some(u)) => u.into_pyobject(py)?.into_any(),
            _ => PyFloat::new(py, n.as_f64().unwrap_or(f64::NAN)).into_any(),
        },
        Json::String(s) => PyString::new(py, s).into_any(),
        Json::Array(items) => {
            let out = items
                .iter()
                .map(|i| json_to_py(py, i))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, out)?.into_any()
        }
        Json::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(k, json_to_py(py, v)?)?;
            }
            dict.into_any()
        }
    })
}
