//! Checking a `(return v)` value against the return type of a signature,
//! and the feedback a model gets when it does not match.
//!
//! The rules, per type of [`Type`]:
//!
//! - `:string`, `:int`, `:bool`, `:keyword` need exactly that kind of
//!   value; `:float` takes any number (an integer is a valid float);
//! - `:map` takes any map, `:any` anything (nil included);
//! - `[t]` takes a vector or a list whose every item is a `t`;
//! - `{name t, ...}` takes a map holding each field under a keyword (or
//!   string) key; other keys are allowed, so a model may return more than
//!   was asked;
//! - `t?` also takes nil, and a field of type `t?` may be absent; any
//!   other type rejects nil.
//!
//! The first mismatch found (depth first, in field and item order) is
//! reported with its path: `items[1]`, `user.name`, `[0].id`. Pure code:
//! no I/O, no evaluation.

use std::fmt;

use crate::compression::format::{to_clojure, FormatOptions};
use crate::session::{Signature, TurnError, Type};
use crate::value::Value;

/// The error code of a turn whose `(return v)` did not match the signature.
pub const SIGNATURE_MISMATCH: &str = "signature-mismatch";

/// Where a value first differs from its type, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// The path to the wrong part (`items[1]`, `user.name`); empty for the
    /// value itself.
    pub path: String,
    /// What was expected, with its article: `a string`, `a list`.
    pub expected: String,
    /// What was there: `integer 3`, `nil`, `vector [1 2 3]`; `None` when a
    /// required field is absent.
    pub actual: Option<String>,
}

impl fmt::Display for Mismatch {
    /// ``at `items[1]` expected a string, got integer 3``, or
    /// ``the field `count` is missing (expected an integer)``.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.actual {
            None => write!(
                f,
                "the field `{}` is missing (expected {})",
                self.path, self.expected
            ),
            Some(actual) if self.path.is_empty() => {
                write!(f, "expected {}, got {actual}", self.expected)
            }
            Some(actual) => write!(
                f,
                "at `{}` expected {}, got {actual}",
                self.path, self.expected
            ),
        }
    }
}

/// Check `value` against `ty`; the first mismatch is the error.
///
/// ```
/// use ptc_lisp::agent::signature_check::check;
/// use ptc_lisp::eval::eval_str;
/// use ptc_lisp::session::Signature;
///
/// let sig = Signature::parse("{count :int, items [:string]}").unwrap();
/// assert!(check(sig.returns(), &eval_str(r#"{:count 2 :items ["a" "b"]}"#).unwrap()).is_ok());
/// let err = check(sig.returns(), &eval_str(r#"{:count 2 :items ["a" 3]}"#).unwrap()).unwrap_err();
/// assert_eq!(err.to_string(), "at `items[1]` expected a string, got integer 3");
/// ```
pub fn check(ty: &Type, value: &Value) -> Result<(), Mismatch> {
    let mut path = String::new();
    check_at(ty, value, &mut path)
}

fn check_at(ty: &Type, value: &Value, path: &mut String) -> Result<(), Mismatch> {
    let ok = match (ty, value) {
        (Type::Any, _) => true,
        (Type::Optional(_), Value::Nil) => true,
        (Type::Optional(inner), _) => {
            return check_at(inner, value, path).map_err(|mut m| {
                if m.path == *path {
                    m.expected = expected(ty);
                }
                m
            })
        }
        (Type::String, Value::Str(_))
        | (Type::Int, Value::Int(_))
        | (Type::Float, Value::Float(_) | Value::Int(_))
        | (Type::Bool, Value::Bool(_))
        | (Type::Keyword, Value::Keyword(_))
        | (Type::Map, Value::Map(_)) => true,
        (Type::List(item), Value::Vector(items) | Value::List(items)) => {
            for (i, v) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                check_at(item, v, path)?;
                path.truncate(len);
            }
            true
        }
        (Type::Record(fields), Value::Map(map)) => {
            for field in fields {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(&field.name);
                match map.get_flexible(&Value::keyword(&field.name)) {
                    None if field.ty.is_optional() => {}
                    None => {
                        return Err(Mismatch {
                            path: path.clone(),
                            expected: expected(&field.ty),
                            actual: None,
                        })
                    }
                    Some(v) => check_at(&field.ty, v, path)?,
                }
                path.truncate(len);
            }
            true
        }
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(Mismatch {
            path: path.clone(),
            expected: expected(ty),
            actual: Some(describe(value)),
        })
    }
}

/// The expected type with its article, as the feedback names it.
fn expected(ty: &Type) -> String {
    match ty {
        Type::String => "a string".into(),
        Type::Int => "an integer".into(),
        Type::Float => "a number".into(),
        Type::Bool => "a boolean".into(),
        Type::Keyword => "a keyword".into(),
        Type::Map => "a map".into(),
        Type::Any => "any value".into(),
        // `[:t]` is "a vector of :t" in the prompt's notation (a list
        // matches it too).
        Type::List(_) => format!("a vector {}", type_source(ty)),
        Type::Record(_) => format!("a map {}", type_source(ty)),
        Type::Optional(inner) => format!("{} or nil", expected(inner)),
    }
}

/// A value as the feedback shows it: its type, then the value itself cut
/// short (`integer 3`, `string "abc"`, `vector [1 2 3 ...] (first 3 of
/// 5 items)`).
fn describe(value: &Value) -> String {
    match value {
        Value::Nil => "nil".to_string(),
        _ => format!(
            "{} {}",
            value.type_name(),
            to_clojure(value, FormatOptions::TOOL_ARGS).0
        ),
    }
}

/// A type in the signature syntax it was written in: `{count :int, items
/// [:string]}`, `[:map]`, `:string?`.
///
/// ```
/// use ptc_lisp::agent::signature_check::type_source;
/// use ptc_lisp::session::Signature;
/// let sig = Signature::parse("(q :string) -> [{id :int, tags [:keyword]?}]").unwrap();
/// assert_eq!(type_source(sig.returns()), "[{id :int, tags [:keyword]?}]");
/// ```
pub fn type_source(ty: &Type) -> String {
    let mut out = String::new();
    write_source(&mut out, ty);
    out
}

fn write_source(out: &mut String, ty: &Type) {
    match ty {
        Type::String => out.push_str(":string"),
        Type::Int => out.push_str(":int"),
        Type::Float => out.push_str(":float"),
        Type::Bool => out.push_str(":bool"),
        Type::Keyword => out.push_str(":keyword"),
        Type::Map => out.push_str(":map"),
        Type::Any => out.push_str(":any"),
        Type::List(item) => {
            out.push('[');
            write_source(out, item);
            out.push(']');
        }
        Type::Record(fields) => {
            out.push('{');
            for (i, field) in fields.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&field.name);
                out.push(' ');
                write_source(out, &field.ty);
            }
            out.push('}');
        }
        Type::Optional(inner) => {
            write_source(out, inner);
            out.push('?');
        }
    }
}

/// The failed-turn error for a `(return v)` that does not match the
/// return type of `signature`. The message names the signature, the path,
/// what was expected and what came back; the hint says the turn's
/// definitions were not kept, since a rejected turn is rolled back like
/// any failed one.
pub fn return_mismatch(signature: &Signature, mismatch: &Mismatch) -> TurnError {
    TurnError::new(
        SIGNATURE_MISMATCH,
        format!(
            "`(return ...)` does not match the signature {}: {mismatch}",
            type_source(signature.returns())
        ),
    )
    .with_hint(
        "call (return ...) again with a value of that shape; \
         the definitions of this turn were not kept",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::eval_str;

    fn mismatch(sig: &str, src: &str) -> String {
        let sig = Signature::parse(sig).unwrap();
        match check(sig.returns(), &eval_str(src).unwrap()) {
            Ok(()) => "ok".to_string(),
            Err(m) => m.to_string(),
        }
    }

    #[test]
    fn scalars_and_nil() {
        assert_eq!(mismatch(":string", "\"x\""), "ok");
        assert_eq!(
            mismatch(":string", "42"),
            "expected a string, got integer 42"
        );
        assert_eq!(mismatch(":int", "nil"), "expected an integer, got nil");
        assert_eq!(mismatch(":int?", "nil"), "ok");
        assert_eq!(mismatch(":float", "3"), "ok");
        assert_eq!(mismatch(":float", "3.5"), "ok");
        assert_eq!(mismatch(":bool", "false"), "ok");
        assert_eq!(
            mismatch(":keyword", "\"a\""),
            "expected a keyword, got string \"a\""
        );
        assert_eq!(mismatch(":any", "nil"), "ok");
    }

    #[test]
    fn long_values_are_cut_with_the_same_note_as_samples() {
        assert_eq!(
            mismatch(":int", "(vec (range 10))"),
            "expected an integer, got vector [0 1 2 ...] (first 3 of 10 items)"
        );
    }

    #[test]
    fn lists_and_records_name_the_path() {
        assert_eq!(mismatch("[:map]", "[{:a 1} {}]"), "ok");
        assert_eq!(mismatch("[:map]", "'({:a 1})"), "ok");
        assert_eq!(
            mismatch("[:map]", "[{:a 1} 2]"),
            "at `[1]` expected a map, got integer 2"
        );
        assert_eq!(
            mismatch("[:int]", "{:a 1}"),
            "expected a vector [:int], got map {:a 1}"
        );
        let sig = "{user {name :string, age :int?}, tags [:string]}";
        assert_eq!(
            mismatch(sig, "{:user {:name \"A\"} :tags [] :extra 1}"),
            "ok"
        );
        assert_eq!(
            mismatch(sig, "{:user {:name 1} :tags []}"),
            "at `user.name` expected a string, got integer 1"
        );
        assert_eq!(
            mismatch(sig, "{:user {:name \"A\" :age \"x\"} :tags []}"),
            "at `user.age` expected an integer or nil, got string \"x\""
        );
        assert_eq!(
            mismatch(sig, "{:user {:name \"A\"}}"),
            "the field `tags` is missing (expected a vector [:string])"
        );
        assert_eq!(
            mismatch("[{id :int}]", "[{:id 1} {:id \"2\"}]"),
            "at `[1].id` expected an integer, got string \"2\""
        );
        assert_eq!(
            mismatch("{n :int}", "{\"n\" 1}"),
            "ok",
            "string keys count too"
        );
    }

    #[test]
    fn long_values_are_cut() {
        let got = mismatch(":string", "(vec (range 100))");
        assert!(
            got.starts_with("expected a string, got vector [0 1 2 ...]"),
            "{got}"
        );
    }

    #[test]
    fn feedback_names_signature_path_and_values() {
        let sig = Signature::parse("{count :int, items [:string]}").unwrap();
        let m = check(
            sig.returns(),
            &eval_str("{:count 2 :items [\"a\" 3]}").unwrap(),
        )
        .unwrap_err();
        let e = return_mismatch(&sig, &m);
        assert_eq!(e.code, SIGNATURE_MISMATCH);
        assert_eq!(
            e.message,
            "`(return ...)` does not match the signature {count :int, items [:string]}: \
             at `items[1]` expected a string, got integer 3"
        );
    }
}
