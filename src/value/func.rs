//! Function values. The value model only stores what a function *is*
//! (its name, how to print it, and the data a combinator captured); the
//! evaluator decides how to call it.

use std::any::Any;
use std::fmt;

use super::{ArcStr, Value};

/// The test a `where` predicate makes of its field: `(where :f)` is
/// `Truthy`, the others are the operators written in `(where :f op x)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WhereOp {
    Truthy,
    Eq,
    NotEq,
    Gt,
    Lt,
    Ge,
    Le,
    Includes,
    In,
}

impl WhereOp {
    /// The operators a `where` form may name, as written.
    pub const WRITTEN: [WhereOp; 8] = [
        WhereOp::Eq,
        WhereOp::NotEq,
        WhereOp::Gt,
        WhereOp::Lt,
        WhereOp::Ge,
        WhereOp::Le,
        WhereOp::Includes,
        WhereOp::In,
    ];

    /// The operator written `name` in a `where` form (`=`, `not=`, `>`,
    /// `<`, `>=`, `<=`, `includes`, `in`).
    pub fn from_name(name: &str) -> Option<WhereOp> {
        WhereOp::WRITTEN.into_iter().find(|op| op.name() == name)
    }

    /// The operator as written (`truthy` for a field alone).
    pub fn name(self) -> &'static str {
        match self {
            WhereOp::Truthy => "truthy",
            WhereOp::Eq => "=",
            WhereOp::NotEq => "not=",
            WhereOp::Gt => ">",
            WhereOp::Lt => "<",
            WhereOp::Ge => ">=",
            WhereOp::Le => "<=",
            WhereOp::Includes => "includes",
            WhereOp::In => "in",
        }
    }
}

/// A builtin function, referenced from a static table in `builtins`.
#[derive(Debug)]
pub struct NativeRef {
    pub name: &'static str,
    pub id: u16,
}

/// A function value other than a builtin.
pub struct Function {
    /// The name given by `defn` or a named `fn`, if any.
    pub name: Option<ArcStr>,
    pub kind: FunctionKind,
}

/// What a function does. Closures hold the evaluator's compiled code,
/// which this module cannot name, behind `Any`; the combinators hold the
/// values they captured as plain data.
pub enum FunctionKind {
    /// A user closure (`fn`, `defn`, `#(...)`). `params` is the text of
    /// the parameter vector(s), used for display (`[x y]`).
    Closure {
        params: ArcStr,
        code: Box<dyn Any + Send + Sync>,
    },
    Partial(Value, Vec<Value>),
    Comp(Vec<Value>),
    Juxt(Vec<Value>),
    Complement(Value),
    Constantly(Value),
    Fnil(Value, Vec<Value>),
    EveryPred(Vec<Value>),
    SomeFn(Vec<Value>),
    /// `(where path op value)`: path of keys, operator, operand.
    Where {
        path: Vec<Value>,
        op: WhereOp,
        operand: Value,
    },
    AllOf(Vec<Value>),
    AnyOf(Vec<Value>),
    NoneOf(Vec<Value>),
    /// A host tool used as a function value (`tool/search` or a bare
    /// name that falls back to a tool).
    Tool(ArcStr),
}

impl Function {
    pub fn new(kind: FunctionKind) -> Self {
        Function { name: None, kind }
    }

    /// The parameter vector text for closures (`[x y]`), if known.
    pub fn params(&self) -> Option<&str> {
        match &self.kind {
            FunctionKind::Closure { params, .. } => Some(params),
            _ => None,
        }
    }

    /// A label such as `comp` or `where`, used when printing.
    pub fn label(&self) -> &str {
        if let Some(name) = &self.name {
            return name;
        }
        match &self.kind {
            FunctionKind::Closure { .. } => "fn",
            FunctionKind::Partial(..) => "partial",
            FunctionKind::Comp(_) => "comp",
            FunctionKind::Juxt(_) => "juxt",
            FunctionKind::Complement(_) => "complement",
            FunctionKind::Constantly(_) => "constantly",
            FunctionKind::Fnil(..) => "fnil",
            FunctionKind::EveryPred(_) => "every-pred",
            FunctionKind::SomeFn(_) => "some-fn",
            FunctionKind::Where { .. } => "where",
            FunctionKind::AllOf(_) => "all-of",
            FunctionKind::AnyOf(_) => "any-of",
            FunctionKind::NoneOf(_) => "none-of",
            FunctionKind::Tool(name) => name,
        }
    }
}

impl fmt::Debug for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#fn[{}]", self.label())
    }
}
