//! Functions that build functions (`partial`, `comp`, `juxt`, ...), the
//! predicate combinators `all-of`/`any-of`/`none-of`, and how all of
//! them (and `where` predicates) are called.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::error::Error;
use crate::eval::{arity_error, EvalResult, Interp};
use crate::value::{compare, Function, FunctionKind, Value, WhereOp};

use super::core::{expect_fn, field_ref, get_in_ref};
use super::{Registry, MANY};

fn make(kind: FunctionKind) -> EvalResult {
    Ok(Value::Fn(Arc::new(Function::new(kind))))
}

fn check_fns(who: &str, fs: &[Value]) -> EvalResult<()> {
    for f in fs {
        expect_fn(who, f)?;
    }
    Ok(())
}

fn juxt(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    check_fns("juxt", args)?;
    make(FunctionKind::Juxt(args.to_vec()))
}

fn partial(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    expect_fn("partial", &args[0])?;
    make(FunctionKind::Partial(args[0].clone(), args[1..].to_vec()))
}

fn comp(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    check_fns("comp", args)?;
    make(FunctionKind::Comp(args.to_vec()))
}

fn complement(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    expect_fn("complement", &args[0])?;
    make(FunctionKind::Complement(args[0].clone()))
}

fn constantly(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    make(FunctionKind::Constantly(args[0].clone()))
}

fn fnil(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    expect_fn("fnil", &args[0])?;
    make(FunctionKind::Fnil(args[0].clone(), args[1..].to_vec()))
}

fn every_pred(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    check_fns("every-pred", args)?;
    make(FunctionKind::EveryPred(args.to_vec()))
}

fn some_fn(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    check_fns("some-fn", args)?;
    make(FunctionKind::SomeFn(args.to_vec()))
}

fn all_of(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    check_fns("all-of", args)?;
    make(FunctionKind::AllOf(args.to_vec()))
}

fn any_of(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    check_fns("any-of", args)?;
    make(FunctionKind::AnyOf(args.to_vec()))
}

fn none_of(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    check_fns("none-of", args)?;
    make(FunctionKind::NoneOf(args.to_vec()))
}

/// Call a function value built by one of the combinators above.
pub(crate) fn call_combinator(
    interp: &mut Interp<'_>,
    function: &Function,
    args: &[Value],
) -> EvalResult {
    match &function.kind {
        FunctionKind::Partial(f, fixed) => {
            let mut all = fixed.clone();
            all.extend_from_slice(args);
            interp.call(f, &all)
        }
        FunctionKind::Comp(fs) => {
            let Some((last, rest)) = fs.split_last() else {
                return match args {
                    [x] => Ok(x.clone()),
                    _ => Err(arity_error("`(comp)`", args.len(), "1").into()),
                };
            };
            let mut v = interp.call(last, args)?;
            for f in rest.iter().rev() {
                v = interp.call(f, std::slice::from_ref(&v))?;
            }
            Ok(v)
        }
        FunctionKind::Juxt(fs) => {
            let mut out = Vec::with_capacity(fs.len());
            for f in fs {
                out.push(interp.call(f, args)?);
            }
            Ok(Value::vector(out))
        }
        FunctionKind::Complement(f) => Ok(Value::Bool(!interp.call_truthy(f, args)?)),
        FunctionKind::Constantly(v) => Ok(v.clone()),
        FunctionKind::Fnil(f, defaults) => {
            let patched: Vec<Value> = args
                .iter()
                .enumerate()
                .map(|(i, a)| match (a, defaults.get(i)) {
                    (Value::Nil, Some(d)) => d.clone(),
                    _ => a.clone(),
                })
                .collect();
            interp.call(f, &patched)
        }
        FunctionKind::EveryPred(ps) => {
            for p in ps {
                for a in args {
                    if !interp.call_truthy(p, std::slice::from_ref(a))? {
                        return Ok(Value::Bool(false));
                    }
                }
            }
            Ok(Value::Bool(true))
        }
        FunctionKind::SomeFn(ps) => {
            // Clojure's `(or (p1 x) (p2 x) ...)`: with no truthy result it
            // returns the last falsy one (`false` stays `false`); its
            // variadic arities (over 3 predicates or 3 arguments) use
            // `some`, which gives nil.
            let mut last = Value::Nil;
            for p in ps {
                for a in args {
                    let r = interp.call(p, std::slice::from_ref(a))?;
                    if r.truthy() {
                        return Ok(r);
                    }
                    last = r;
                }
            }
            Ok(if ps.len() > 3 || args.len() > 3 {
                Value::Nil
            } else {
                last
            })
        }
        FunctionKind::AllOf(ps) => {
            for p in ps {
                if !interp.call_truthy(p, args)? {
                    return Ok(Value::Bool(false));
                }
            }
            Ok(Value::Bool(true))
        }
        FunctionKind::AnyOf(ps) => {
            for p in ps {
                if interp.call_truthy(p, args)? {
                    return Ok(Value::Bool(true));
                }
            }
            Ok(Value::Bool(false))
        }
        FunctionKind::NoneOf(ps) => {
            for p in ps {
                if interp.call_truthy(p, args)? {
                    return Ok(Value::Bool(false));
                }
            }
            Ok(Value::Bool(true))
        }
        FunctionKind::Where { path, op, operand } => {
            let [item] = args else {
                return Err(arity_error("A `where` predicate", args.len(), "1").into());
            };
            let holds = match path.as_slice() {
                // One key: the field is read in place, not copied.
                [k] => where_holds(field_ref(item, k).unwrap_or(&Value::Nil), *op, operand)?,
                // A longer path is followed in place too.
                _ => match get_in_ref(item, path) {
                    Some(field) => where_holds(&field, *op, operand)?,
                    None => where_holds(&Value::Nil, *op, operand)?,
                },
            };
            Ok(Value::Bool(holds))
        }
        FunctionKind::Closure { .. } | FunctionKind::Tool(_) => {
            unreachable!("closures and tools are called by the evaluator")
        }
    }
}

/// `=` inside `where` (also for `in` and a collection's `includes`):
/// keywords compare as their names (spec §7.1), without copying either
/// side.
fn where_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Keyword(x), Value::Keyword(y)) => x == y,
        (Value::Keyword(k), s) | (s, Value::Keyword(k)) if s.is_str() => {
            s.str_bytes() == Some(k.as_bytes())
        }
        _ => a == b,
    }
}

fn where_holds(field: &Value, op: WhereOp, operand: &Value) -> Result<bool, Error> {
    Ok(match op {
        WhereOp::Truthy => field.truthy(),
        WhereOp::Eq => where_equal(field, operand),
        WhereOp::NotEq => !where_equal(field, operand),
        WhereOp::Gt | WhereOp::Lt | WhereOp::Ge | WhereOp::Le => {
            // Mismatched or missing values are simply not matched.
            let comparable =
                (field.is_number() && operand.is_number()) || (field.is_str() && operand.is_str());
            if !comparable {
                return Ok(false);
            }
            if let (Value::Float(f), _) | (_, Value::Float(f)) = (field, operand) {
                if f.is_nan() {
                    return Ok(false);
                }
            }
            let o = compare(field, operand).map_err(Error::type_error)?;
            match op {
                WhereOp::Gt => o == Ordering::Greater,
                WhereOp::Lt => o == Ordering::Less,
                WhereOp::Ge => o != Ordering::Less,
                _ => o != Ordering::Greater,
            }
        }
        WhereOp::Includes => match (field, field.as_str()) {
            // A keyword operand stands for its name.
            (_, Some(text)) => operand.as_name().is_some_and(|sub| text.contains(sub)),
            (Value::Vector(items) | Value::List(items), _) => {
                items.iter().any(|x| where_equal(x, operand))
            }
            (Value::Set(items), _) => items.iter().any(|x| where_equal(x, operand)),
            _ => false,
        },
        WhereOp::In => match operand {
            Value::Vector(items) | Value::List(items) => {
                items.iter().any(|x| where_equal(field, x))
            }
            Value::Set(items) => items.iter().any(|x| where_equal(field, x)),
            other => {
                return Err(Error::type_error(format!(
                    "`where ... in` expects a collection of values, got {}",
                    other.describe()
                )))
            }
        },
    })
}

pub(super) fn register(r: &mut Registry) {
    r.add("juxt", "[& fs]", 0, MANY, "A function returning the vector of each f applied to its arguments. `((juxt :a :b) {:a 1 :b 2})` => `[1 2]`.", juxt);
    r.add(
        "partial",
        "[f & args]",
        1,
        MANY,
        "f with its first arguments fixed. `((partial + 10) 5)` => `15`.",
        partial,
    );
    r.add(
        "comp",
        "[& fs]",
        0,
        MANY,
        "The composition of the functions, right to left. `((comp inc inc) 1)` => `3`.",
        comp,
    );
    r.add(
        "complement",
        "[f]",
        1,
        1,
        "A function returning the logical opposite of f. `((complement even?) 3)` => `true`.",
        complement,
    );
    r.add(
        "constantly",
        "[x]",
        1,
        1,
        "A function that always returns x. `((constantly 7) 1 2)` => `7`.",
        constantly,
    );
    r.add(
        "fnil",
        "[f & defaults]",
        2,
        MANY,
        "f with nil arguments replaced by defaults. `((fnil inc 0) nil)` => `1`.",
        fnil,
    );
    r.add("every-pred", "[& ps]", 1, MANY, "A predicate true when every p holds for every argument. `((every-pred pos? even?) 4)` => `true`.", every_pred);
    r.add(
        "some-fn",
        "[& ps]",
        1,
        MANY,
        "A function returning the first truthy (p arg). `((some-fn :a :b) {:b 2})` => `2`.",
        some_fn,
    );
    r.add("all-of", "[& preds]", 0, MANY, "A predicate true when all preds hold (vacuously true). `(filter (all-of (where :a = 1) (where :b = 2)) [{:a 1 :b 2}])` => `[{:a 1, :b 2}]`.", all_of);
    r.add("any-of", "[& preds]", 0, MANY, "A predicate true when any pred holds. `(count (filter (any-of (where :a = 1) (where :a = 2)) [{:a 1} {:a 3}]))` => `1`.", any_of);
    r.add("none-of", "[& preds]", 0, MANY, "A predicate true when no pred holds. `(count (filter (none-of (where :a = 1)) [{:a 1} {:a 2}]))` => `1`.", none_of);
}
