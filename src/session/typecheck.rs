//! Whether a value has a signature's type: the check of tool arguments
//! and results (`Tool::call`) and of an agent's `(return v)`.
//!
//! The rules, per type of [`Type`]:
//!
//! - `:string`, `:int`, `:bool`, `:keyword` need exactly that kind of
//!   value: an integer is not a `:string`, and a float is not an `:int`,
//!   even a whole one (`2.0`);
//! - `:float` takes any number: an integer is a valid float (JSON and
//!   models write `3` for three);
//! - `:map` takes any map, `:any` anything (nil included);
//! - `[t]` takes a vector or a list whose every item is a `t`;
//! - `{name t, ...}` takes a map holding each field under a keyword (or
//!   string) key; other keys are allowed, so a caller may pass or return
//!   more than was asked;
//! - `t?` also takes nil, and a field of type `t?` may be absent; any
//!   other type rejects nil.
//!
//! The first mismatch found (depth first, in field and item order) is
//! reported with its path: `items[1]`, `user.name`, `[0].id`. Pure code:
//! no I/O, no evaluation.

use std::fmt;

use super::Type;
use crate::value::Value;

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
/// use ptc_lisp::session::typecheck::check;
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
    let mut seen = Seen::default();
    check_at(ty, value, &mut path, &mut seen)
}

/// The (type, collection) pairs already found to match, by address: a
/// value that shares structure (2^40 leaves in 41 nodes) is checked once
/// per distinct node, not once per occurrence.
type Seen = std::collections::HashSet<(usize, usize), crate::value::FixedState>;

fn collection_address(value: &Value) -> Option<usize> {
    match value {
        Value::Vector(items) | Value::List(items) => Some(std::sync::Arc::as_ptr(items) as usize),
        Value::Map(m) => Some(m.address()),
        _ => None,
    }
}

fn check_at(ty: &Type, value: &Value, path: &mut String, seen: &mut Seen) -> Result<(), Mismatch> {
    let key = collection_address(value).map(|a| (ty as *const Type as usize, a));
    if key.is_some_and(|k| seen.contains(&k)) {
        return Ok(());
    }
    let ok = match (ty, value) {
        (Type::Any, _) => true,
        (Type::Optional(_), Value::Nil) => true,
        (Type::Optional(inner), _) => {
            // The mismatch is at this optional value itself (then "or nil"
            // is part of what was expected), or somewhere inside it.
            let here = path.clone();
            return check_at(inner, value, path, seen).map_err(|mut m| {
                if m.path == here {
                    m.expected = expected(ty);
                }
                m
            });
        }
        (Type::String, Value::Str(_) | Value::ShortStr(_))
        | (Type::Int, Value::Int(_))
        | (Type::Float, Value::Float(_) | Value::Int(_))
        | (Type::Bool, Value::Bool(_))
        | (Type::Keyword, Value::Keyword(_))
        | (Type::Map, Value::Map(_)) => true,
        (Type::List(item), Value::Vector(items) | Value::List(items)) => {
            for (i, v) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                crate::value::deep(|| check_at(item, v, path, seen))?;
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
                    Some(v) => crate::value::deep(|| check_at(&field.ty, v, path, seen))?,
                }
                path.truncate(len);
            }
            true
        }
        _ => false,
    };
    if ok {
        if let Some(k) = key {
            seen.insert(k);
        }
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

/// A value as the feedback shows it: its type, then the value itself,
/// stopped at an element after about 60 characters with how much was
/// shown (`integer 3`, `string "abc"`, `vector [0 1 2 ...] (first 3 of 100
/// items)`).
pub(crate) fn describe(value: &Value) -> String {
    if value.is_nil() {
        return "nil".to_string();
    }
    let shown = crate::value::pretty(
        value,
        crate::value::PrettyOptions {
            width: usize::MAX / 8,
            max_lines: 1,
            max_chars: 60,
        },
    );
    // The wording of cut collections in the model's view.
    let size = match (shown.shown, value, value.as_str()) {
        (None, _, _) => String::new(),
        (Some(m), _, Some(text)) => {
            format!(" (first {m} of {} characters)", text.chars().count())
        }
        (Some(m), Value::Vector(v) | Value::List(v), _) => {
            format!(" (first {m} of {} items)", v.len())
        }
        (Some(m), Value::Set(s), _) => format!(" (first {m} of {} items)", s.len()),
        (Some(m), Value::Map(map), _) => format!(" (first {m} of {} items)", map.len()),
        (Some(_), _, _) => String::new(),
    };
    format!("{} {}{size}", value.type_name(), shown.text)
}

/// A type in the signature syntax it was written in: `{count :int, items
/// [:string]}`, `[:map]`, `:string?`.
///
/// ```
/// use ptc_lisp::session::typecheck::type_source;
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
