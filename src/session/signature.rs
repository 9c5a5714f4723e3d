//! Tool signatures: the compact type syntax a host uses to describe a
//! tool's parameters and result, e.g.
//! `(query :string, limit :int?) -> [{id :int, title :string}]`.
//!
//! Grammar (commas between items are optional, as in Clojure):
//!
//! ```text
//! signature := params "->" type | "->" type | type
//! params    := "(" [param ("," param)*] ")"
//! param     := name type
//! type      := base ["?"]                    ; `?` = optional / nullable
//! base      := ":string" | ":int" | ":float" | ":bool" | ":keyword"
//!            | ":map" | ":any" | "[" type "]" | "{" [param ("," param)*] "}"
//! name      := letter or `_`, then letters, digits, `_` or `-`
//! ```
//!
//! This module only parses and prints; it never validates values.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::value::{Shape, Value, SHAPED_LIMIT};

/// A type in a signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Type {
    String,
    Int,
    Float,
    Bool,
    Keyword,
    /// Any map (dynamic keys).
    Map,
    Any,
    /// `[t]`: a list whose items are `t`.
    List(Box<Type>),
    /// `{name :t, ...}`: a map with named fields.
    Record(Vec<Param>),
    /// `t?`: may be nil or omitted.
    Optional(Box<Type>),
}

impl Type {
    /// True if a map is an acceptable value for this type.
    pub fn accepts_map(&self) -> bool {
        match self {
            Type::Map | Type::Any | Type::Record(_) => true,
            Type::Optional(t) => t.accepts_map(),
            _ => false,
        }
    }

    pub fn is_optional(&self) -> bool {
        matches!(self, Type::Optional(_))
    }

    /// The compact form used in prompts: no colons, `name:type` fields
    /// (`[{id:int, title:string}]`, `string?`).
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.write_compact(&mut out);
        out
    }

    fn write_compact(&self, out: &mut String) {
        match self {
            Type::String => out.push_str("string"),
            Type::Int => out.push_str("int"),
            Type::Float => out.push_str("float"),
            Type::Bool => out.push_str("bool"),
            Type::Keyword => out.push_str("keyword"),
            Type::Map => out.push_str("map"),
            Type::Any => out.push_str("any"),
            Type::List(t) => {
                out.push('[');
                t.write_compact(out);
                out.push(']');
            }
            Type::Record(fields) => {
                out.push('{');
                write_params(out, fields);
                out.push('}');
            }
            Type::Optional(t) => {
                t.write_compact(out);
                out.push('?');
            }
        }
    }
}

fn write_params(out: &mut String, params: &[Param]) {
    for (i, p) in params.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&p.name);
        out.push(':');
        p.ty.write_compact(out);
    }
}

/// A named parameter or map field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    pub ty: Type,
}

/// A parsed tool signature, keeping the text it was parsed from.
#[derive(Clone)]
pub struct Signature {
    text: String,
    params: Vec<Param>,
    returns: Type,
    keys: ParamKeys,
}

/// The parameters' names as interned keywords, and the map shape of a
/// call that gives every parameter, made once when the signature is
/// parsed so that binding a call's arguments allocates no names (see
/// `bind_args`). Derived from `params`, so not part of equality.
#[derive(Clone)]
struct ParamKeys {
    keywords: Arc<[Value]>,
    /// `None` past [`SHAPED_LIMIT`] parameters (or with a repeated name,
    /// which the parser refuses today).
    shape: Option<Arc<Shape>>,
}

impl ParamKeys {
    fn new(params: &[Param]) -> ParamKeys {
        let keywords: Arc<[Value]> = params.iter().map(|p| Value::keyword(&p.name)).collect();
        let distinct = params
            .iter()
            .enumerate()
            .all(|(i, p)| params[..i].iter().all(|q| q.name != p.name));
        let shape = (!params.is_empty() && params.len() <= SHAPED_LIMIT && distinct)
            .then(|| Shape::new(keywords.to_vec()));
        ParamKeys { keywords, shape }
    }
}

impl PartialEq for Signature {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text && self.params == other.params && self.returns == other.returns
    }
}

impl Eq for Signature {}

impl fmt::Debug for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Signature")
            .field("text", &self.text)
            .field("params", &self.params)
            .field("returns", &self.returns)
            .finish()
    }
}

/// Why a signature did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Invalid signature `{text}` at character {position}: {message}")]
pub struct SignatureError {
    pub text: String,
    /// 1-based character position of the problem.
    pub position: usize,
    pub message: String,
}

impl Signature {
    /// Parse signature text.
    ///
    /// ```
    /// use ptc_lisp::session::Signature;
    /// let sig = Signature::parse("(query :string, limit :int?) -> [{id :int}]").unwrap();
    /// assert_eq!(sig.render(), "query:string, limit:int? -> [{id:int}]");
    /// assert_eq!(Signature::parse("-> :map").unwrap().params().len(), 0);
    /// ```
    pub fn parse(text: &str) -> Result<Signature, SignatureError> {
        let mut p = Parser {
            text,
            chars: text.char_indices().collect(),
            pos: 0,
            depth: 0,
        };
        p.skip_ws();
        if p.at_end() {
            return Err(
                p.error("the signature is empty; write for example `(query :string) -> :map`")
            );
        }
        let (params, returns) = if p.peek() == Some('(') {
            let params = p.params('(', ')')?;
            p.skip_ws();
            if !p.eat_str("->") {
                return Err(p.error("expected `->` and a return type after the parameters"));
            }
            (params, p.ty()?)
        } else {
            // `-> type` and a bare `type` both declare no parameters.
            p.eat_str("->");
            (Vec::new(), p.ty()?)
        };
        p.skip_ws();
        if !p.at_end() {
            return Err(p.error("unexpected text after the return type"));
        }
        Ok(Signature {
            text: text.trim().to_string(),
            keys: ParamKeys::new(&params),
            params,
            returns,
        })
    }

    /// The text the signature was parsed from (trimmed).
    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn params(&self) -> &[Param] {
        &self.params
    }

    pub fn returns(&self) -> &Type {
        &self.returns
    }

    /// The parameters' names as keywords, in order.
    pub(crate) fn param_keywords(&self) -> &[Value] {
        &self.keys.keywords
    }

    /// The shape of a named-argument map holding every parameter, in
    /// order (`None` for no parameters, more than 16, or a repeated name).
    pub(crate) fn param_shape(&self) -> Option<&Arc<Shape>> {
        self.keys.shape.as_ref()
    }

    /// The compact form shown in the `tool/` section of a prompt:
    /// `query:string, limit:int -> [string]`, or `-> map` with no
    /// parameters.
    pub fn render(&self) -> String {
        let mut out = String::new();
        write_params(&mut out, &self.params);
        if !self.params.is_empty() {
            out.push(' ');
        }
        out.push_str("-> ");
        self.returns.write_compact(&mut out);
        out
    }
}

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::str::FromStr for Signature {
    type Err = SignatureError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Signature::parse(s)
    }
}

/// Serialized as its text.
impl Serialize for Signature {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Signature {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Signature::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// Types nested deeper than this are refused: parsing, checking,
/// printing and freeing a type each recurse once per level.
pub const MAX_TYPE_DEPTH: usize = 64;

struct Parser<'a> {
    text: &'a str,
    chars: Vec<(usize, char)>,
    pos: usize,
    /// How many types enclose the one being parsed.
    depth: usize,
}

impl Parser<'_> {
    fn at_end(&self) -> bool {
        self.pos >= self.chars.len()
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).map(|c| c.1)
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(c) if c.is_whitespace() || c == ',') {
            self.pos += 1;
        }
    }

    fn eat(&mut self, c: char) -> bool {
        self.skip_ws();
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn eat_str(&mut self, s: &str) -> bool {
        self.skip_ws();
        let start = self.chars.get(self.pos).map_or(self.text.len(), |c| c.0);
        if self.text[start..].starts_with(s) {
            self.pos += s.chars().count();
            true
        } else {
            false
        }
    }

    fn error(&self, message: &str) -> SignatureError {
        SignatureError {
            text: self.text.to_string(),
            position: self.pos.min(self.chars.len()) + 1,
            message: message.to_string(),
        }
    }

    fn name(&mut self) -> Result<String, SignatureError> {
        self.skip_ws();
        let start = self.pos;
        match self.peek() {
            Some(c) if c.is_alphabetic() || c == '_' => self.pos += 1,
            _ => return Err(self.error("expected a parameter or field name")),
        }
        while matches!(self.peek(), Some(c) if c.is_alphanumeric() || c == '_' || c == '-') {
            self.pos += 1;
        }
        Ok(self.chars[start..self.pos].iter().map(|c| c.1).collect())
    }

    /// `name type` pairs up to `close`.
    fn params(&mut self, open: char, close: char) -> Result<Vec<Param>, SignatureError> {
        if !self.eat(open) {
            return Err(self.error(&format!("expected `{open}`")));
        }
        let mut params: Vec<Param> = Vec::new();
        loop {
            if self.eat(close) {
                return Ok(params);
            }
            if self.at_end() {
                return Err(self.error(&format!("expected `{close}`")));
            }
            let name = self.name()?;
            if params.iter().any(|p| p.name == name) {
                return Err(self.error(&format!("`{name}` appears twice")));
            }
            let ty = self.ty()?;
            params.push(Param { name, ty });
        }
    }

    fn ty(&mut self) -> Result<Type, SignatureError> {
        if self.depth >= MAX_TYPE_DEPTH {
            return Err(self.error(&format!("types nest deeper than {MAX_TYPE_DEPTH} levels")));
        }
        self.depth += 1;
        let ty = self.ty_here();
        self.depth -= 1;
        ty
    }

    fn ty_here(&mut self) -> Result<Type, SignatureError> {
        self.skip_ws();
        let base = match self.peek() {
            Some(':') => {
                self.pos += 1;
                let start = self.pos;
                while matches!(self.peek(), Some(c) if c.is_alphanumeric()) {
                    self.pos += 1;
                }
                let word: String = self.chars[start..self.pos].iter().map(|c| c.1).collect();
                match word.as_str() {
                    "string" => Type::String,
                    "int" => Type::Int,
                    "float" => Type::Float,
                    "bool" => Type::Bool,
                    "keyword" => Type::Keyword,
                    "map" => Type::Map,
                    "any" => Type::Any,
                    _ => {
                        self.pos = start;
                        return Err(self.error(&format!(
                            "unknown type `:{word}`; use :string, :int, :float, :bool, :keyword, :map or :any"
                        )));
                    }
                }
            }
            Some('[') => {
                self.pos += 1;
                self.skip_ws();
                if self.peek() == Some(']') {
                    return Err(self.error("a list type needs an item type, e.g. `[:any]`"));
                }
                let item = self.ty()?;
                if !self.eat(']') {
                    return Err(self.error("expected `]`"));
                }
                Type::List(Box::new(item))
            }
            Some('{') => Type::Record(self.params('{', '}')?),
            _ => {
                return Err(self.error("expected a type such as `:string`, `[:int]` or `{id :int}`"))
            }
        };
        if self.peek() == Some('?') {
            self.pos += 1;
            return Ok(Type::Optional(Box::new(base)));
        }
        Ok(base)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_forms() {
        let cases = [
            ("(query :string) -> :string", "query:string -> string"),
            (
                "(query :string, limit :int) -> [:string]",
                "query:string, limit:int -> [string]",
            ),
            ("-> :map", "-> map"),
            ("() -> :any", "-> any"),
            (
                "{count :int, items [:string]}",
                "-> {count:int, items:[string]}",
            ),
            (
                "(user {id :int, name :string}, limit :int?) -> [{order_id :int}]",
                "user:{id:int, name:string}, limit:int? -> [{order_id:int}]",
            ),
            (
                "(q :string\n opts {limit :int? sort :string?}) -> {}",
                "q:string, opts:{limit:int?, sort:string?} -> {}",
            ),
            ("[{}]", "-> [{}]"),
        ];
        for (text, rendered) in cases {
            let sig = Signature::parse(text).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(sig.render(), rendered, "{text}");
        }
    }

    #[test]
    fn rejects_bad_signatures_with_a_position() {
        for (text, fragment) in [
            ("", "empty"),
            ("(query :strin) -> :map", "unknown type `:strin`"),
            ("(query) -> :map", "expected a type"),
            ("(a :int) :map", "expected `->`"),
            ("[]", "needs an item type"),
            ("(a :int, a :int) -> :any", "appears twice"),
            ("-> :map extra", "unexpected text"),
            ("(a :int -> :map", "expected a parameter or field name"),
        ] {
            let err = Signature::parse(text).unwrap_err();
            assert!(err.to_string().contains(fragment), "{text}: {err}");
        }
    }
}
