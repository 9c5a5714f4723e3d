//! Derived forms rewritten into core forms before analysis: `#(...)`, the
//! threading macros, `cond`, `if-let` and friends.

use crate::error::{Error, Result, Span};
use crate::reader::{Form, FormKind};

pub(super) fn sym(name: &str, span: Span) -> Form {
    Form::new(FormKind::Symbol(name.into()), span)
}

pub(super) fn list(items: Vec<Form>, span: Span) -> Form {
    Form::new(FormKind::List(items), span)
}

pub(super) fn vector(items: Vec<Form>, span: Span) -> Form {
    Form::new(FormKind::Vector(items), span)
}

/// `#(+ % %2)` -> `(fn [%1 %2] (+ %1 %2))`; `%&` becomes a rest parameter.
pub(super) fn anon_fn(items: &[Form], span: Span) -> Result<Form> {
    let mut max = 0usize;
    let mut rest = false;
    let body: Vec<Form> = items
        .iter()
        .map(|f| rename_percent(f, &mut max, &mut rest))
        .collect::<Result<_>>()?;
    let mut params: Vec<Form> = (1..=max).map(|i| sym(&format!("%{i}"), span)).collect();
    if rest {
        params.push(sym("&", span));
        params.push(sym("%&", span));
    }
    // `#(42)` is a thunk returning 42 (the specification's reading; in
    // Clojure it would call 42).
    let body = match body.as_slice() {
        [only] if is_literal(only) => only.clone(),
        _ => list(body, span),
    };
    Ok(list(
        vec![sym("fn", span), vector(params, span), body],
        span,
    ))
}

fn is_literal(form: &Form) -> bool {
    matches!(
        form.kind,
        FormKind::Nil
            | FormKind::Bool(_)
            | FormKind::Int(_)
            | FormKind::Float(_)
            | FormKind::Str(_)
            | FormKind::Keyword(_)
            | FormKind::Vector(_)
            | FormKind::Map(_)
            | FormKind::Set(_)
    )
}

fn rename_percent(form: &Form, max: &mut usize, rest: &mut bool) -> Result<Form> {
    let map_items = |items: &[Form], max: &mut usize, rest: &mut bool| {
        items
            .iter()
            .map(|f| rename_percent(f, max, rest))
            .collect::<Result<Vec<_>>>()
    };
    Ok(match &form.kind {
        FormKind::Symbol(s) if s == "%" => {
            *max = (*max).max(1);
            sym("%1", form.span)
        }
        FormKind::Symbol(s) if s == "%&" => {
            *rest = true;
            form.clone()
        }
        FormKind::Symbol(s) if s.starts_with('%') => {
            let n: usize = s[1..].parse().map_err(|_| {
                Error::validation(format!(
                    "Invalid parameter `{s}` in `#(...)`; use `%`, `%1`..`%9` or `%&`"
                ))
                .with_span(form.span)
            })?;
            if n == 0 || n > 20 {
                return Err(Error::validation(format!(
                    "Invalid parameter `{s}` in `#(...)`; numbering starts at `%1`"
                ))
                .with_span(form.span));
            }
            *max = (*max).max(n);
            form.clone()
        }
        FormKind::List(items) => Form::new(FormKind::List(map_items(items, max, rest)?), form.span),
        FormKind::Vector(items) => {
            Form::new(FormKind::Vector(map_items(items, max, rest)?), form.span)
        }
        FormKind::Map(items) => Form::new(FormKind::Map(map_items(items, max, rest)?), form.span),
        FormKind::Set(items) => Form::new(FormKind::Set(map_items(items, max, rest)?), form.span),
        FormKind::AnonFn(_) => {
            return Err(Error::validation(
                "Nested `#(...)` is not allowed; use `fn` for the inner function",
            )
            .with_span(form.span))
        }
        _ => form.clone(),
    })
}

/// One step of `->` / `->>`: put `acc` first or last into `step`.
pub(super) fn thread_step(acc: Form, step: &Form, last: bool) -> Form {
    match &step.kind {
        FormKind::List(items) if !items.is_empty() => {
            let mut new_items = Vec::with_capacity(items.len() + 1);
            new_items.push(items[0].clone());
            if last {
                new_items.extend(items[1..].iter().cloned());
                new_items.push(acc);
            } else {
                new_items.push(acc);
                new_items.extend(items[1..].iter().cloned());
            }
            list(new_items, step.span)
        }
        _ => list(vec![step.clone(), acc], step.span),
    }
}

/// Threading forms with more steps than this are rewritten as a `let`
/// that rebinds one name per step rather than as nested calls (a few
/// steps stay nested: the analyzer recognizes calls such as
/// `(take n (sort ...))` written with `->>`).
pub(super) const NESTED_THREAD_STEPS: usize = 32;

/// `(-> x f (g a))` -> `(g (f x) a)`.
pub(super) fn thread(args: &[Form], last: bool, name: &str, span: Span) -> Result<Form> {
    let (first, steps) = args
        .split_first()
        .ok_or_else(|| Error::arity(format!("`{name}` needs an initial value")).with_span(span))?;
    Ok(steps
        .iter()
        .fold(first.clone(), |acc, step| thread_step(acc, step, last)))
}
