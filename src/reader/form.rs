//! The reader's output: forms with source spans.

use super::Name;
use crate::error::Span;

/// One form as read from source text.
#[derive(Debug, Clone, PartialEq)]
pub struct Form {
    pub kind: FormKind,
    pub span: Span,
}

/// The shapes a form can take. Character literals are read as one-character
/// strings (the specification's choice); `##Inf`, `##-Inf` and `##NaN` are
/// read as floats.
#[derive(Debug, Clone, PartialEq)]
pub enum FormKind {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    /// Keyword name without the leading colon (`:a` -> `a`, `:a/b` -> `a/b`).
    Keyword(Name),
    /// Symbol text including any namespace (`tool/search`, `str/join`, `/`).
    Symbol(Name),
    List(Vec<Form>),
    Vector(Vec<Form>),
    /// Map literal entries, flattened: `[k1, v1, k2, v2, ...]` (always even).
    Map(Vec<Form>),
    Set(Vec<Form>),
    /// `#(...)`: the elements of the list inside, unexpanded.
    AnonFn(Vec<Form>),
    /// `#"..."`: the pattern text exactly as written between the quotes.
    /// Nothing is unescaped: `\"` (which does not end the literal) stays
    /// `\"`, which regex engines read as a quote.
    Regex(String),
    /// `'x` (the quoted form).
    Quote(Box<Form>),
    /// `#'x` (the symbol name).
    Var(String),
}

impl Form {
    pub fn new(kind: FormKind, span: Span) -> Self {
        Form { kind, span }
    }

    /// The symbol name if this form is a symbol.
    pub fn as_symbol(&self) -> Option<&str> {
        match &self.kind {
            FormKind::Symbol(s) => Some(s),
            _ => None,
        }
    }
}
