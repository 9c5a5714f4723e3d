//! Host tools: a name, a parsed signature, a description and a handler,
//! and the rule that turns the arguments of a call into named arguments.
//!
//! See [`bind_args`] for how call arguments reach a handler.
//!
//! This module calls handlers but does no I/O itself.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::signature::{Signature, SignatureError};
use super::typecheck::{check, type_source, Mismatch};
use crate::error::{Error, ErrorKind};
use crate::eval::ToolContext;
use crate::value::{Map, Value};

/// The function that implements a tool. It returns the tool's result, or
/// an error message for the program (and the model) to read.
pub type ToolHandler = Arc<dyn Fn(ToolArgs) -> Result<Value, String> + Send + Sync>;

/// What a prompt needs to know about a tool: no handler, serializable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub signature: Signature,
    pub description: String,
}

/// A tool registered on a session.
#[derive(Clone)]
pub struct Tool {
    pub spec: ToolSpec,
    pub handler: ToolHandler,
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("spec", &self.spec)
            .finish_non_exhaustive()
    }
}

/// Why a tool could not be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    #[error("Tool `{name}` has an invalid signature: {source}")]
    Signature {
        name: String,
        #[source]
        source: SignatureError,
    },
    #[error("Invalid tool name `{0}`: use letters, digits, `-`, `_`, `?` or `!`, starting with a letter")]
    Name(String),
    #[error("Tool `{0}` is already registered")]
    Duplicate(String),
}

impl Tool {
    /// Build a tool, parsing its signature.
    pub fn new<F>(
        name: &str,
        signature: &str,
        description: &str,
        handler: F,
    ) -> Result<Tool, ToolError>
    where
        F: Fn(ToolArgs) -> Result<Value, String> + Send + Sync + 'static,
    {
        if !valid_name(name) {
            return Err(ToolError::Name(name.to_string()));
        }
        let signature = Signature::parse(signature).map_err(|source| ToolError::Signature {
            name: name.to_string(),
            source,
        })?;
        Ok(Tool {
            spec: ToolSpec {
                name: name.to_string(),
                signature,
                description: description.trim().to_string(),
            },
            handler: Arc::new(handler),
        })
    }

    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// Bind and type-check the arguments of a call ([`bind_args`]), run
    /// the handler, and check its result against the declared return
    /// type (a mismatch is the tool's error). Panics in the handler
    /// become tool errors.
    ///
    /// The call counts against the program's time: past the deadline of
    /// `context` (or with its interrupt flag set) the handler is not
    /// called, and a handler that returns after the deadline gives the
    /// program's `timeout` error. A handler cannot be preempted; one that
    /// may run long reads [`ToolArgs::context`] (command tools do, and are
    /// killed at the deadline).
    pub fn call(&self, args: &[Value], context: &ToolContext) -> Result<Value, Error> {
        if context.expired() {
            return Err(context.timeout_error());
        }
        if context.interrupted() {
            return Err(context.interrupted_error());
        }
        let outcome = self.call_unchecked(args, context);
        if context.expired() {
            return Err(context.timeout_error());
        }
        outcome
    }

    /// [`Tool::call`] without its deadline and interrupt checks, for the
    /// evaluator, which makes them itself around every call (reading the
    /// clock once before and once after, not twice each).
    pub(crate) fn call_unchecked(
        &self,
        args: &[Value],
        context: &ToolContext,
    ) -> Result<Value, Error> {
        let mut bound = bind_args(&self.spec, args)?;
        bound.context = context.clone();
        let handler = &self.handler;
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handler(bound)));
        match outcome {
            Ok(Ok(v)) => match check(self.spec.signature.returns(), &v) {
                Ok(()) => Ok(v),
                Err(m) => Err(Error::new(
                    ErrorKind::Tool,
                    format!(
                        "Tool `{}` broke its own signature: it declares `-> {}` but returned a value that does not match ({m})",
                        self.spec.name,
                        type_source(self.spec.signature.returns())
                    ),
                )
                .with_hint(
                    "the tool is at fault, not your program: do not retry the same call; work around the tool or report the problem",
                )),
            },
            // A message that already names the tool (command tools write
            // "Tool `x` timed out ...") is not prefixed a second time.
            Ok(Err(message)) if message.starts_with(&format!("Tool `{}` ", self.spec.name)) => {
                Err(Error::new(ErrorKind::Tool, message))
            }
            Ok(Err(message)) => Err(Error::new(
                ErrorKind::Tool,
                format!("Tool `{}` failed: {message}", self.spec.name),
            )),
            Err(_) => Err(Error::new(
                ErrorKind::Tool,
                format!("Tool `{}` failed: the handler panicked", self.spec.name),
            )),
        }
    }
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_alphabetic())
        && chars.all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '?' | '!'))
}

/// The arguments a handler receives (see [`bind_args`]).
#[derive(Debug, Clone, Default)]
pub struct ToolArgs {
    named: Map,
    positional: Vec<Value>,
    context: ToolContext,
}

impl ToolArgs {
    pub fn new(named: Map, positional: Vec<Value>) -> Self {
        ToolArgs {
            named,
            positional,
            context: ToolContext::default(),
        }
    }

    /// The calling program's deadline and interrupt flag: a handler that
    /// may run long should stop by the deadline.
    pub fn context(&self) -> &ToolContext {
        &self.context
    }

    /// These arguments with the calling program's context.
    pub fn with_context(mut self, context: ToolContext) -> Self {
        self.context = context;
        self
    }

    /// The arguments by name (keyword keys for declared parameters).
    pub fn named(&self) -> &Map {
        &self.named
    }

    /// The named arguments as a map value.
    pub fn to_value(&self) -> Value {
        Value::map(self.named.clone())
    }

    /// The arguments exactly as written in the call.
    pub fn positional(&self) -> &[Value] {
        &self.positional
    }

    /// The argument called `name` (keyword or string key) as given, if
    /// given and not nil.
    pub fn value(&self, name: &str) -> Option<&Value> {
        self.named
            .get_flexible(&Value::keyword(name))
            .filter(|v| !v.is_nil())
    }

    /// The string argument `name`. The error names the argument: it is
    /// missing, or not a string. Handlers return `Result<Value, String>`,
    /// so `args.str("query")?` hands the error to the program.
    pub fn str(&self, name: &str) -> Result<&str, String> {
        let value = self.required(name)?;
        value
            .as_str()
            .ok_or_else(|| wrong_type(name, "a string", value))
    }

    /// The integer argument `name` (a float is not an integer).
    pub fn i64(&self, name: &str) -> Result<i64, String> {
        match self.required(name)? {
            Value::Int(n) => Ok(*n),
            other => Err(wrong_type(name, "an integer", other)),
        }
    }

    /// The number argument `name`, as a float (an integer is a valid
    /// float, as in signatures).
    pub fn f64(&self, name: &str) -> Result<f64, String> {
        match self.required(name)? {
            Value::Float(f) => Ok(*f),
            Value::Int(n) => Ok(*n as f64),
            other => Err(wrong_type(name, "a number", other)),
        }
    }

    /// The boolean argument `name`.
    pub fn bool(&self, name: &str) -> Result<bool, String> {
        match self.required(name)? {
            Value::Bool(b) => Ok(*b),
            other => Err(wrong_type(name, "a boolean", other)),
        }
    }

    /// The argument `name` deserialized from its JSON form (keywords as
    /// strings, sets and lists as arrays): any `T: DeserializeOwned`, such
    /// as a struct of the tool's own. A missing or nil argument is JSON
    /// `null`, so `get::<Option<T>>` reads an optional argument.
    ///
    /// ```
    /// use ptc_lisp::session::ToolArgs;
    /// use ptc_lisp::value::{Map, Value};
    ///
    /// #[derive(serde::Deserialize)]
    /// struct Range { from: i64, to: i64 }
    ///
    /// let mut named = Map::new();
    /// named.insert(Value::keyword("range"), ptc_lisp::eval::eval_str("{:from 1 :to 5}").unwrap());
    /// let args = ToolArgs::new(named, vec![]);
    /// let range: Range = args.get("range").unwrap();
    /// assert_eq!((range.from, range.to), (1, 5));
    /// assert_eq!(args.get::<Option<String>>("note").unwrap(), None);
    /// assert_eq!(
    ///     args.get::<String>("range").unwrap_err(),
    ///     "argument `range`: invalid type: map, expected a string"
    /// );
    /// ```
    pub fn get<T: serde::de::DeserializeOwned>(&self, name: &str) -> Result<T, String> {
        let json = self
            .value(name)
            .map_or(serde_json::Value::Null, crate::value::to_json);
        serde_json::from_value(json).map_err(|e| format!("argument `{name}`: {e}"))
    }

    fn required(&self, name: &str) -> Result<&Value, String> {
        self.value(name)
            .ok_or_else(|| format!("argument `{name}` is missing"))
    }
}

/// ``argument `limit` must be an integer, got string "5"``.
fn wrong_type(name: &str, expected: &str, got: &Value) -> String {
    format!(
        "argument `{name}` must be {expected}, got {}",
        super::typecheck::describe(got)
    )
}

fn tool_error(message: String, spec: &ToolSpec) -> Error {
    let names: Vec<&str> = spec
        .signature
        .params()
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    let hint = if names.is_empty() {
        format!("call it as (tool/{})", spec.name)
    } else {
        format!(
            "call it as (tool/{name} {pos}) or (tool/{name} {{{named}}})",
            name = spec.name,
            pos = names.join(" "),
            named = names
                .iter()
                .map(|n| format!(":{n} ..."))
                .collect::<Vec<_>>()
                .join(" ")
        )
    };
    Error::new(ErrorKind::Tool, message).with_hint(hint)
}

/// Apply the argument convention to the arguments of a call.
///
/// # The argument convention
///
/// The parameter called `name`, or `name` with hyphens as underscores
/// (`:max-results` names `max_results`, the tool boundary's
/// normalization, specification §9.8).
fn param_named<'p>(
    params: &'p [super::signature::Param],
    name: &str,
) -> Option<&'p super::signature::Param> {
    param_index(params, name).map(|i| &params[i])
}

/// The position of the parameter called `name` (see [`param_named`]).
fn param_index(params: &[super::signature::Param], name: &str) -> Option<usize> {
    params.iter().position(|p| p.name == name).or_else(|| {
        name.contains('-')
            .then(|| name.replace('-', "_"))
            .and_then(|n| params.iter().position(|p| p.name == n))
    })
}

/// A program may call a tool in three ways:
///
/// - **Named**: `(tool/search {:query "x" :limit 5})` — exactly one
///   argument, a map whose keys (keywords or strings) are all parameter
///   names of the signature. A tool whose signature declares no parameters
///   takes any single map as its named arguments.
/// - **Keyword pairs**: `(tool/search :query "x" :limit 5)` — the same as
///   the named call with those pairs as the map.
/// - **Positional**: `(tool/search "x" 5)` — the i-th argument binds the
///   i-th parameter of the signature.
///
/// A single map that is not a set of named arguments binds the first
/// parameter when that parameter accepts a map (`:map`, `:any` or a
/// `{...}` record); otherwise the call is rejected with a message naming
/// the unknown keys and the expected ones. More positional arguments than
/// parameters is an error, except for a tool that declares no parameters,
/// which receives whatever was passed. Required parameters (those not
/// marked `?`) must be present and not nil, and each argument given must
/// have its parameter's type (the rules of [`super::typecheck`]: an
/// integer is a valid `:float`, a float never an `:int`); a mismatch is an
/// error naming the tool, the argument and the expected type. The handler
/// receives both views: [`ToolArgs::named`] (a map
/// with the arguments by name) and [`ToolArgs::positional`] (the arguments
/// exactly as written).
pub fn bind_args(spec: &ToolSpec, args: &[Value]) -> Result<ToolArgs, Error> {
    let params = spec.signature.params();
    // `(tool/search :query "x" :limit 5)` (specification §9.5) is the
    // named call `(tool/search {:query "x" :limit 5})`: an even number of
    // arguments, every other one a keyword naming a parameter (any
    // keyword when the signature declares none).
    if args.len() >= 2 && args.len().is_multiple_of(2) {
        let pairs = args.chunks(2).all(|kv| match &kv[0] {
            Value::Keyword(k) => params.is_empty() || param_named(params, k).is_some(),
            _ => false,
        });
        if pairs {
            let map: Map = args
                .chunks(2)
                .map(|kv| (kv[0].clone(), kv[1].clone()))
                .collect();
            return bind_args(spec, &[Value::map(map)]);
        }
    }
    let positional = args.to_vec();
    if params.is_empty() {
        let named = match args {
            [Value::Map(m)] => m.clone(),
            _ => Map::new(),
        };
        return Ok(ToolArgs::new(named, positional));
    }
    let declared = |k: &Value| {
        k.as_name()
            .is_some_and(|n| param_named(params, n).is_some())
    };
    let named = match args {
        [Value::Map(m)]
            if m.keys().all(declared) && (!m.is_empty() || !params[0].ty.accepts_map()) =>
        {
            let keys = spec.signature.param_keywords();
            let mut named = Map::with_capacity(m.len());
            for (k, v) in m.iter() {
                // Every key names a parameter (`declared`).
                if let Some(i) = k.as_name().and_then(|n| param_index(params, n)) {
                    named.insert(keys[i].clone(), v.clone());
                }
            }
            named
        }
        [Value::Map(m)] if !params[0].ty.accepts_map() => {
            let unknown: Vec<String> = m
                .keys()
                .filter(|k| !declared(k))
                .map(crate::value::pr_str)
                .collect();
            let expected: Vec<String> = params.iter().map(|p| format!(":{}", p.name)).collect();
            return Err(tool_error(
                format!(
                    "Tool `{}` got unknown argument{} {}; expected {}",
                    spec.name,
                    if unknown.len() == 1 { "" } else { "s" },
                    unknown.join(", "),
                    expected.join(", ")
                ),
                spec,
            ));
        }
        _ => {
            if args.len() > params.len() {
                return Err(tool_error(
                    format!(
                        "Tool `{}` takes {} argument{}, got {}",
                        spec.name,
                        params.len(),
                        if params.len() == 1 { "" } else { "s" },
                        args.len()
                    ),
                    spec,
                ));
            }
            // By position: the i-th argument is the i-th parameter's, so
            // the checks read the arguments directly, and the map is made
            // from the signature's keywords (its shape when every
            // parameter is given), with no name allocated or looked up.
            check_bound(spec, |i| args.get(i))?;
            let keys = spec.signature.param_keywords();
            let named = match spec.signature.param_shape() {
                Some(shape) if args.len() == params.len() => {
                    Map::from_shape(shape.clone(), args.iter().cloned())
                }
                _ => {
                    let mut named = Map::with_capacity(args.len());
                    for (k, v) in keys.iter().zip(args) {
                        named.insert(k.clone(), v.clone());
                    }
                    named
                }
            };
            return Ok(ToolArgs::new(named, positional));
        }
    };
    let keys = spec.signature.param_keywords();
    check_bound(spec, |i| named.get(&keys[i]))?;
    Ok(ToolArgs::new(named, positional))
}

/// Check the bound arguments (`arg(i)` is the i-th parameter's, if
/// given): every required parameter present and not nil, then each
/// argument given against its parameter's type.
fn check_bound<'a>(spec: &ToolSpec, arg: impl Fn(usize) -> Option<&'a Value>) -> Result<(), Error> {
    let params = spec.signature.params();
    for (i, p) in params.iter().enumerate() {
        let present = arg(i).is_some_and(|v| !v.is_nil());
        if !present && !p.ty.is_optional() {
            return Err(tool_error(
                format!(
                    "Tool `{}` is missing the required argument `{}`",
                    spec.name, p.name
                ),
                spec,
            ));
        }
    }
    for (i, p) in params.iter().enumerate() {
        match arg(i) {
            Some(v) if !v.is_nil() => {
                check(&p.ty, v).map_err(|m| tool_error(argument_mismatch(spec, p, &m), spec))?
            }
            _ => {}
        }
    }
    Ok(())
}

/// ``Tool `search`: argument `limit` expected an integer, got string "5"``;
/// inside the argument, the path is joined to its name (`opts.min`,
/// `ids[2]`).
fn argument_mismatch(spec: &ToolSpec, param: &super::Param, m: &Mismatch) -> String {
    let mut at = param.name.clone();
    if !m.path.is_empty() {
        if !m.path.starts_with('[') {
            at.push('.');
        }
        at.push_str(&m.path);
    }
    match &m.actual {
        Some(actual) => format!(
            "Tool `{}`: argument `{at}` expected {}, got {actual}",
            spec.name, m.expected
        ),
        None => format!(
            "Tool `{}`: argument `{at}` is missing (expected {})",
            spec.name, m.expected
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::pr_str;

    fn spec(sig: &str) -> ToolSpec {
        Tool::new("t", sig, "", |_| Ok(Value::Nil)).unwrap().spec
    }

    fn named(sig: &str, args: &[Value]) -> String {
        match bind_args(&spec(sig), args) {
            Ok(a) => pr_str(&a.to_value()),
            Err(e) => format!("error: {}", e.message()),
        }
    }

    fn map(pairs: &[(&str, Value)]) -> Value {
        Value::map(
            pairs
                .iter()
                .map(|(k, v)| (Value::keyword(k), v.clone()))
                .collect(),
        )
    }

    #[test]
    fn positional_and_named_calls_bind_alike() {
        let sig = "(query :string, limit :int?) -> :any";
        assert_eq!(named(sig, &["x".into()]), "{:query \"x\"}");
        assert_eq!(
            named(sig, &["x".into(), 5.into()]),
            "{:query \"x\", :limit 5}"
        );
        assert_eq!(
            named(sig, &[map(&[("query", "x".into())])]),
            "{:query \"x\"}"
        );
        let string_keys = Value::map(
            [(Value::str("query"), Value::str("x"))]
                .into_iter()
                .collect(),
        );
        assert_eq!(named(sig, &[string_keys]), "{:query \"x\"}");
    }

    #[test]
    fn positional_binding_reads_the_arguments_by_name() {
        let sig = "(query :string, max-hits :int?, exact :bool?) -> :any";
        let all = bind_args(&spec(sig), &["x".into(), 5.into(), true.into()]).unwrap();
        // Every parameter given: the map has the signature's shape.
        assert!(all.named().shape().is_some());
        assert_eq!(all.str("query").unwrap(), "x");
        assert_eq!(all.i64("max-hits").unwrap(), 5);
        assert!(all.bool("exact").unwrap());
        assert_eq!(
            pr_str(&all.to_value()),
            named(
                sig,
                &[map(&[
                    ("query", "x".into()),
                    ("max-hits", 5.into()),
                    ("exact", true.into())
                ])]
            )
        );
        let some = bind_args(&spec(sig), &["x".into(), Value::Nil]).unwrap();
        assert_eq!(pr_str(&some.to_value()), "{:query \"x\", :max-hits nil}");
        assert_eq!(some.value("max-hits"), None);
        assert!(named(sig, &[5.into()]).contains("argument `query` expected a string, got"));
        assert!(
            named(sig, &[Value::Nil, "y".into()]).contains("missing the required argument `query`")
        );
        // Missing before mistyped, as for a named call.
        assert!(named(sig, &[Value::Nil, "y".into()]).contains("missing"));
    }

    #[test]
    fn a_session_records_calls_once_and_shares_them() {
        let mut session = crate::session::Session::new();
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = seen.clone();
        session
            .add_tool(
                Tool::new("echo", "(q :string, n :int?) -> :any", "", move |args| {
                    log.lock().unwrap().push(pr_str(&args.to_value()));
                    Ok(args.to_value())
                })
                .unwrap(),
            )
            .unwrap();
        let turn = session
            .eval("[(tool/echo \"a\" 1) (tool/echo {:q \"a\" :n 1}) (tool/echo :q \"b\")]")
            .clone();
        assert!(turn.success, "{:?}", turn.error());
        assert_eq!(
            *seen.lock().unwrap(),
            ["{:q \"a\", :n 1}", "{:q \"a\", :n 1}", "{:q \"b\"}"]
        );
        assert_eq!(turn.tool_calls.len(), 3);
        assert_eq!(pr_str(&turn.tool_calls[0].args[0]), "\"a\"");
        assert!(Arc::ptr_eq(
            &turn.tool_calls,
            &session.turns().last().unwrap().tool_calls
        ));
    }

    #[test]
    fn a_map_binds_a_map_parameter() {
        let sig = "(filters :map) -> :any";
        assert_eq!(
            named(sig, &[map(&[("status", "open".into())])]),
            "{:filters {:status \"open\"}}"
        );
        assert_eq!(
            named(sig, &[map(&[("filters", Value::empty_map())])]),
            "{:filters {}}"
        );
    }

    #[test]
    fn mistakes_are_explained() {
        let sig = "(query :string) -> :any";
        assert!(named(sig, &[map(&[("qeury", "x".into())])])
            .contains("unknown argument :qeury; expected :query"));
        assert!(named(sig, &["a".into(), "b".into()]).contains("takes 1 argument, got 2"));
        assert!(named(sig, &[]).contains("missing the required argument `query`"));
    }

    #[test]
    fn tools_without_parameters_take_any_map() {
        assert_eq!(named("-> :map", &[map(&[("a", 1.into())])]), "{:a 1}");
        assert_eq!(named("-> :map", &[]), "{}");
    }

    #[test]
    fn bad_names_and_signatures_are_rejected() {
        assert!(matches!(
            Tool::new("9x", "-> :any", "", |_| Ok(Value::Nil)),
            Err(ToolError::Name(_))
        ));
        let err = Tool::new("x", "(a) -> :any", "", |_| Ok(Value::Nil)).unwrap_err();
        assert!(err
            .to_string()
            .starts_with("Tool `x` has an invalid signature: Invalid signature"));
    }

    #[test]
    fn messages_naming_the_tool_are_not_prefixed_twice() {
        let tool = Tool::new("slow", "-> :any", "", |_| {
            Err("Tool `slow` timed out after 1s and was killed".to_string())
        })
        .unwrap();
        assert_eq!(
            tool.call(&[], &ToolContext::unlimited())
                .unwrap_err()
                .message(),
            "Tool `slow` timed out after 1s and was killed"
        );
        let tool = Tool::new("x", "-> :any", "", |_| Err("no rate".to_string())).unwrap();
        assert_eq!(
            tool.call(&[], &ToolContext::unlimited())
                .unwrap_err()
                .message(),
            "Tool `x` failed: no rate"
        );
    }

    #[test]
    fn a_panicking_handler_is_a_tool_error() {
        let tool = Tool::new("boom", "-> :any", "", |_| panic!("bad host")).unwrap();
        let err = tool.call(&[], &ToolContext::unlimited()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Tool);
        assert!(err.message().contains("panicked"));
    }
}
