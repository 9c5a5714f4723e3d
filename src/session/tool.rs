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
use crate::error::{Error, ErrorKind};
use crate::eval::ToolContext;
use crate::value::{ArcStr, Map, Value};

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

    /// Bind the arguments of a call and run the handler. Panics in the
    /// handler become tool errors.
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
        let mut bound = bind_args(&self.spec, args)?;
        bound.context = context.clone();
        let handler = &self.handler;
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handler(bound)));
        if context.expired() {
            return Err(context.timeout_error());
        }
        match outcome {
            Ok(Ok(v)) => Ok(v),
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

    /// The argument called `name` (keyword or string key), if given.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.named
            .get_flexible(&Value::keyword(name))
            .filter(|v| !v.is_nil())
    }

    /// The argument called `name` if it is a string.
    pub fn str(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(Value::as_str)
    }

    /// The argument called `name` if it is an integer.
    pub fn int(&self, name: &str) -> Option<i64> {
        match self.get(name) {
            Some(Value::Int(n)) => Some(*n),
            _ => None,
        }
    }
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

/// `[:a 1 :b 2]` as `{:a 1 :b 2}` when the arguments are keyword pairs
/// whose keywords all pass `accepted`.
fn keyword_pairs(args: &[Value], accepted: impl Fn(&Value) -> bool) -> Option<Map> {
    if args.len() < 2 || !args.len().is_multiple_of(2) {
        return None;
    }
    let mut named = Map::new();
    for pair in args.chunks(2) {
        match &pair[0] {
            k @ Value::Keyword(_) if accepted(k) => {
                named.insert(k.clone(), pair[1].clone());
            }
            _ => return None,
        }
    }
    Some(named)
}

fn key_name(k: &Value) -> Option<&str> {
    match k {
        Value::Keyword(s) | Value::Str(s) => Some(s),
        _ => None,
    }
}

/// Apply the argument convention to the arguments of a call.
///
/// # The argument convention
///
/// A program may call a tool in two ways:
///
/// - **Named**: `(tool/search {:query "x" :limit 5})` — exactly one
///   argument, a map whose keys (keywords or strings) are all parameter
///   names of the signature. A tool whose signature declares no parameters
///   takes any single map as its named arguments.
/// - **Positional**: `(tool/search "x" 5)` — the i-th argument binds the
///   i-th parameter of the signature.
/// - **Keyword pairs**: `(tool/search :query "x" :limit 5)` — an even
///   number of arguments whose 1st, 3rd, ... are keywords naming declared
///   parameters (any keywords for a tool that declares none) is read as
///   the map `{:query "x" :limit 5}`.
///
/// A single map that is not a set of named arguments binds the first
/// parameter when that parameter accepts a map (`:map`, `:any` or a
/// `{...}` record); otherwise the call is rejected with a message naming
/// the unknown keys and the expected ones. More positional arguments than
/// parameters is an error, except for a tool that declares no parameters,
/// which receives whatever was passed. Required parameters (those not
/// marked `?`) must be present and not nil; types are documentation and
/// are not checked. The handler receives both views: [`ToolArgs::named`] (a map
/// with the arguments by name) and [`ToolArgs::positional`] (the arguments
/// exactly as written).
pub fn bind_args(spec: &ToolSpec, args: &[Value]) -> Result<ToolArgs, Error> {
    let params = spec.signature.params();
    let positional = args.to_vec();
    let declared = |k: &Value| key_name(k).is_some_and(|n| params.iter().any(|p| p.name == n));
    let pairs = keyword_pairs(args, |k| params.is_empty() || declared(k));
    if params.is_empty() {
        let named = match (args, pairs) {
            (_, Some(pairs)) => pairs,
            ([Value::Map(m)], None) => (**m).clone(),
            _ => Map::new(),
        };
        return Ok(ToolArgs::new(named, positional));
    }
    let named = match args {
        _ if pairs.is_some() => pairs.unwrap_or_default(),
        // A map of declared names (or `{}` for a first parameter that is
        // not a map).
        [Value::Map(m)]
            if m.keys().all(declared) && (!m.is_empty() || !params[0].ty.accepts_map()) =>
        {
            let mut named = Map::new();
            for (k, v) in m.iter() {
                let name = key_name(k).unwrap_or_default();
                named.insert(Value::keyword(name), v.clone());
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
            let mut named = Map::new();
            for (p, v) in params.iter().zip(args) {
                named.insert(Value::Keyword(ArcStr::from(p.name.as_str())), v.clone());
            }
            named
        }
    };
    for p in params {
        let present = named
            .get(&Value::keyword(&p.name))
            .is_some_and(|v| !v.is_nil());
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
    Ok(ToolArgs::new(named, positional))
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
    fn keyword_pairs_are_named_arguments() {
        let sig = "(query :string, limit :int?) -> :any";
        assert_eq!(
            named(
                sig,
                &[
                    Value::keyword("query"),
                    "x".into(),
                    Value::keyword("limit"),
                    5.into()
                ]
            ),
            "{:query \"x\", :limit 5}"
        );
        assert_eq!(
            named(sig, &[Value::keyword("limit"), 5.into()]),
            "error: Tool `t` is missing the required argument `query`"
        );
        // A keyword that names no parameter is a positional argument.
        assert_eq!(
            named(
                "(order :keyword, n :int) -> :any",
                &[Value::keyword("asc"), 3.into()]
            ),
            "{:order :asc, :n 3}"
        );
        assert_eq!(named("-> :map", &[Value::keyword("a"), 1.into()]), "{:a 1}");
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
