//! Destructuring patterns, as analyzed from binding forms.

use crate::value::Value;

use super::expr::Expr;

#[derive(Debug)]
pub(crate) enum Pattern {
    /// Bind the whole value to a slot.
    Bind(u32),
    /// A plain-name parameter read from the call's arguments, where the
    /// caller keeps them (see `Arity::params`): nothing to bind.
    Arg,
    /// `[a b & rest :as all]`.
    Seq {
        items: Vec<Pattern>,
        rest: Option<Box<Pattern>>,
        all: Option<u32>,
    },
    /// `{:keys [a] :strs [b] x :x :or {a 1} :as m}`.
    Map {
        entries: Vec<MapEntry>,
        all: Option<u32>,
    },
}

#[derive(Debug)]
pub(crate) struct MapEntry {
    pub pattern: Pattern,
    pub key: Value,
    pub default: Option<Expr>,
}
