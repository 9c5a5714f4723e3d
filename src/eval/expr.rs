//! The analyzed program: forms after name resolution, desugaring and
//! tail-position checking. Locals are frame slots, not names.

use std::sync::Arc;

use crate::error::Span;
use crate::value::{ArcStr, Value};

use super::pattern::Pattern;
use super::prim::PrimOp;

/// A node of the analyzed program.
#[derive(Debug)]
pub(crate) enum Expr {
    Const(Value),
    /// A slot of the current call frame.
    Local(u32),
    /// A parameter of the current call, read where the caller keeps its
    /// arguments (see [`Arity::params`]): no copy into the frame.
    Arg(u32),
    /// A value captured by the current closure.
    Capture(u32),
    /// A user definition, resolved at run time (with the `tool/` and
    /// `data/` fallback for bare names).
    Global(Box<GlobalRef>),
    /// `data/name`.
    Data(ArcStr, Span),
    /// `tool/name` used as a value.
    ToolRef(ArcStr, Span),
    /// `*1`, `*2`, `*3`; `*e` is 0.
    History(u8),
    Vector(Vec<Expr>),
    Map(Vec<(Expr, Expr)>),
    /// A map literal whose keys are distinct constants: its values, in
    /// the order of the keys, built into a map sharing one key list.
    ShapedMap(Box<ShapedMap>),
    Set(Vec<Expr>),
    If(Box<(Expr, Expr, Expr)>),
    Do(Vec<Expr>),
    Let(Box<Let>),
    Loop(Box<Let>),
    Recur(Box<Recur>),
    Lambda(Arc<Lambda>),
    Call(Box<Call>),
    /// A named `fn` calling itself by its name: the running function,
    /// with no value to look up.
    CallSelf(Box<SelfCall>),
    /// A call whose function is a builtin known at analysis time.
    CallNative(Box<NativeCall>),
    /// A call of an arithmetic or comparison builtin computed in place on
    /// integers (see `super::prim`).
    Prim(Box<PrimCall>),
    /// `(:key m)`, `(:key m default)` and `(get m key)`, `(get m key
    /// default)` with a constant key: a lookup without a call.
    Get(Box<Get>),
    CallTool(Box<ToolCall>),
    Def(Box<Def>),
    And(Vec<Expr>),
    Or(Vec<Expr>),
    Case(Box<Case>),
    Where(Box<WhereExpr>),
    For(Box<For>),
    Return(Box<Expr>),
    Fail(Box<Expr>),
}

#[derive(Debug)]
pub(crate) struct Get {
    pub key: Value,
    pub target: Expr,
    pub default: Option<Expr>,
    pub span: Span,
}

#[derive(Debug)]
pub(crate) struct ShapedMap {
    pub shape: Arc<crate::value::Shape>,
    pub values: Vec<Expr>,
}

#[derive(Debug)]
pub(crate) struct GlobalRef {
    pub name: ArcStr,
    /// False for `user/x`: never fall back to `tool/` or `data/`.
    pub fallback: bool,
    /// The builtin of the same name, when a user definition shadows one:
    /// the value while no definition exists (yet).
    pub builtin: Option<&'static crate::value::NativeRef>,
    pub span: Span,
}

#[derive(Debug)]
pub(crate) struct Let {
    pub bindings: Vec<(Pattern, Expr)>,
    pub body: Expr,
}

/// `recur` in tail position of its `loop` or `fn` arity.
#[derive(Debug)]
pub(crate) struct Recur {
    pub args: Vec<Expr>,
    /// The target's frame slot for each value, when all its bindings are
    /// plain names: the values are stored there directly. Otherwise they
    /// go to the target through `Interp::recur_values`.
    pub slots: Option<Vec<u32>>,
}

#[derive(Debug)]
pub(crate) struct Call {
    pub func: Expr,
    pub args: Vec<Expr>,
    pub span: Span,
}

#[derive(Debug)]
pub(crate) struct SelfCall {
    pub args: Vec<Expr>,
    pub span: Span,
}

#[derive(Debug)]
pub(crate) struct NativeCall {
    pub id: u16,
    pub args: Vec<Expr>,
    pub span: Span,
}

/// A builtin call with an inline integer form: `args` has one to three
/// items, as `op` allows; `id` is the builtin for everything else.
#[derive(Debug)]
pub(crate) struct PrimCall {
    pub op: PrimOp,
    pub id: u16,
    pub args: Vec<Expr>,
    pub span: Span,
    /// The outermost call of a tree of such calls whose leaves are locals,
    /// parameters, captured values and integer constants (and whose inner
    /// calls are arithmetic): tried first as machine integers, with no
    /// value made per inner call. Any leaf that is not an integer, or an
    /// overflow, leaves the call to the general path, which has no side
    /// effects to repeat.
    pub int_tree: bool,
}

#[derive(Debug)]
pub(crate) struct ToolCall {
    /// The tool name, or an expression computing it (the `call` form).
    pub name: ToolName,
    pub args: Vec<Expr>,
    pub span: Span,
}

#[derive(Debug)]
pub(crate) enum ToolName {
    Fixed(ArcStr),
    Computed(Expr),
}

#[derive(Debug)]
pub(crate) struct Def {
    pub name: ArcStr,
    pub doc: Option<ArcStr>,
    pub value: Expr,
    /// `defonce`: keep an existing definition.
    pub once: bool,
    /// The defining form as source text, for `source`.
    pub source: ArcStr,
}

#[derive(Debug)]
pub(crate) struct Case {
    pub subject: Expr,
    /// Constant test values and the index of their branch.
    pub table: Vec<(Value, usize)>,
    pub branches: Vec<Expr>,
    pub default: Option<Expr>,
}

#[derive(Debug)]
pub(crate) struct WhereExpr {
    pub path: Expr,
    pub op: crate::value::WhereOp,
    pub operand: Option<Expr>,
}

/// `for` and `doseq`: nested bindings with `:let`, `:when`, `:while`.
#[derive(Debug)]
pub(crate) struct For {
    pub clauses: Vec<ForClause>,
    pub body: Expr,
    /// `doseq` discards the body values and returns nil.
    pub collect: bool,
    pub span: Span,
}

#[derive(Debug)]
pub(crate) enum ForClause {
    Bind(Pattern, Expr),
    Let(Vec<(Pattern, Expr)>),
    When(Expr),
    While(Expr),
}

/// Compiled code of a `fn`: one or more arities and what to capture.
#[derive(Debug)]
pub(crate) struct Lambda {
    pub name: Option<ArcStr>,
    /// The parameter vectors as written, for display (`[x y]`).
    pub params_text: ArcStr,
    pub arities: Vec<Arity>,
    /// Where each captured value comes from in the creating frame.
    pub captures: Vec<CaptureFrom>,
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum CaptureFrom {
    Local(u32),
    Arg(u32),
    Capture(u32),
}

#[derive(Debug)]
pub(crate) struct Arity {
    /// One pattern per fixed parameter. Without a rest parameter, a
    /// parameter that is a plain name is [`Pattern::Arg`]: the body reads
    /// it from the call's arguments ([`Expr::Arg`]), so a call copies
    /// nothing into its frame for it (no reference count is raised and
    /// dropped per call). Patterns are destructured into the frame.
    pub params: Vec<Pattern>,
    /// Whether any of `params` is [`Pattern::Arg`]: then `recur` makes
    /// its values the next round's arguments.
    pub reads_args: bool,
    pub rest: Option<Pattern>,
    /// Slot that holds the function itself, for named `fn`s.
    pub self_slot: Option<u32>,
    pub frame_size: u32,
    pub body: Expr,
}

impl Arity {
    pub fn accepts(&self, n: usize) -> bool {
        if self.rest.is_some() {
            n >= self.params.len()
        } else {
            n == self.params.len()
        }
    }
}

/// Helper constructors used by the analyzer.
impl Expr {
    pub fn nil() -> Expr {
        Expr::Const(Value::Nil)
    }
}
