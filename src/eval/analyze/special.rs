//! Special forms: the core ones become dedicated `Expr` nodes, derived
//! ones are rewritten (see `desugar`) and analyzed again.

use crate::error::{Error, Result, Span};
use crate::reader::{Form, FormKind};
use crate::value::{ArcStr, Value, WhereOp};

use super::super::expr::{
    Case, Def, Expr, For, ForClause, Let, Recur, ToolCall, ToolName, WhereExpr,
};
use super::desugar::{self, list, sym, vector};
use super::{quote, Analyzer, RecurTarget};

const SPECIAL_FORMS: &[&str] = &[
    "quote",
    "do",
    "if",
    "if-not",
    "when",
    "when-not",
    "cond",
    "condp",
    "case",
    "let",
    "loop",
    "recur",
    "fn",
    "fn*",
    "defn",
    "defn-",
    "def",
    "defonce",
    "if-let",
    "when-let",
    "if-some",
    "when-some",
    "when-first",
    "and",
    "or",
    "->",
    "->>",
    "as->",
    "cond->",
    "cond->>",
    "some->",
    "some->>",
    "where",
    "for",
    "doseq",
    "dotimes",
    "return",
    "fail",
    "call",
    "comment",
    "ns",
    "require",
    "import",
    "try",
    "catch",
    "finally",
    "throw",
    "letfn",
    "defmacro",
    "binding",
    "set!",
    "var",
    "while",
    "lazy-seq",
    "delay",
    "future",
    "atom",
    "swap!",
    "reset!",
    "deref",
    "eval",
    "read-string",
    "slurp",
    "spit",
    "defprotocol",
    "defrecord",
    "deftype",
    "defmulti",
    "defmethod",
];

/// Names that never name a value (checked when a symbol is used as one).
pub(super) fn is_special(name: &str) -> bool {
    SPECIAL_FORMS.contains(&name)
}

/// The special forms a program can use, in a stable order: every form
/// the analyzer knows except the refused ones, the no-op namespace forms
/// (`ns`, `require`, `import`) and the `fn*` alias.
pub(crate) fn supported() -> impl Iterator<Item = &'static str> {
    SPECIAL_FORMS.iter().copied().filter(|name| {
        unsupported(name).is_none() && !matches!(*name, "ns" | "require" | "import" | "fn*")
    })
}

/// What to tell the model about forms we deliberately do not support.
fn unsupported(name: &str) -> Option<(&'static str, &'static str)> {
    Some(match name {
        "try" | "catch" | "finally" | "throw" => (
            "Exception handling (`try`/`catch`/`throw`) is not supported",
            "check values with `if`/`nil?`, or end the program with `(fail reason)`",
        ),
        "letfn" => (
            "`letfn` is not supported",
            "use `let` with `fn` values, or `defn`",
        ),
        "defmacro" => ("Macros are not supported", "write a function with `defn`"),
        "binding" | "set!" => (
            "Dynamic vars are not supported",
            "pass values as arguments or use `def`",
        ),
        "while" => (
            "`while` is not supported (there is no mutable state)",
            "use `loop`/`recur`, `doseq` or `reduce`",
        ),
        "lazy-seq" | "delay" | "future" => (
            "Lazy and deferred evaluation is not supported: all operations are eager",
            "compute the values directly",
        ),
        "atom" | "swap!" | "reset!" | "deref" => (
            "Atoms and mutable references are not supported",
            "use `def` to store a value for later turns, or `reduce`/`loop` to accumulate",
        ),
        "eval" | "read-string" => (
            "`eval` and `read-string` are not supported",
            "write the code directly",
        ),
        "slurp" | "spit" => (
            "File access is not supported",
            "use the tools under `tool/`",
        ),
        "defprotocol" | "defrecord" | "deftype" | "defmulti" | "defmethod" => (
            "Protocols, records, types and multimethods are not supported",
            "use maps and functions",
        ),
        _ => return None,
    })
}

/// Analyze `(name args...)` if `name` is a special form.
pub(super) fn analyze(
    a: &mut Analyzer,
    name: &str,
    args: &[Form],
    form: &Form,
    tail: bool,
) -> Result<Option<Expr>> {
    let span = form.span;
    if let Some((message, hint)) = unsupported(name) {
        return Err(Error::unsupported(message).with_hint(hint).with_span(span));
    }
    let expr = match name {
        "quote" => {
            let [inner] = exactly::<1>(name, args, span)?;
            Expr::Const(quote(inner))
        }
        "do" => a.body(args, tail)?,
        "comment" | "import" => Expr::nil(),
        "require" => {
            let mut made = Vec::new();
            for spec in args {
                a.require(spec, &mut made)?;
            }
            a.required(made, span)
        }
        "ns" => {
            // `(ns name (:require [clojure.string :as s]) ...)`: the
            // name is ignored, the `:require` clauses are honoured.
            let mut made = Vec::new();
            for clause in args.iter().skip(1) {
                if let FormKind::List(items) = &clause.kind {
                    if let Some((head, specs)) = items.split_first() {
                        if matches!(&head.kind, FormKind::Keyword(k) if k == "require") {
                            for spec in specs {
                                a.require(spec, &mut made)?;
                            }
                        }
                    }
                }
            }
            a.required(made, span)
        }
        "var" => match args {
            // `(var x)` is what the reader makes of `#'x`: the value of `x`.
            [Form {
                kind: FormKind::Symbol(sym),
                span: sym_span,
            }] => a.symbol(sym, *sym_span)?,
            _ => {
                return Err(
                    Error::validation("`var` takes one symbol, like `(var x)`").with_span(span)
                )
            }
        },
        "if" => {
            if !(2..=3).contains(&args.len()) {
                return Err(Error::arity(format!(
                    "`if` takes a condition, a then branch and an optional else branch, got {} forms",
                    args.len()
                ))
                .with_span(span));
            }
            let test = a.analyze(&args[0], false)?;
            let then = a.analyze(&args[1], tail)?;
            let otherwise = match args.get(2) {
                Some(f) => a.analyze(f, tail)?,
                None => Expr::nil(),
            };
            Expr::If(Box::new((test, then, otherwise)))
        }
        "if-not" => {
            if !(2..=3).contains(&args.len()) {
                return Err(Error::arity(
                    "`if-not` takes a condition, a then branch and an optional else branch",
                )
                .with_span(span));
            }
            let test = a.analyze(&args[0], false)?;
            let then = a.analyze(&args[1], tail)?;
            let otherwise = match args.get(2) {
                Some(f) => a.analyze(f, tail)?,
                None => Expr::nil(),
            };
            Expr::If(Box::new((test, otherwise, then)))
        }
        "when" | "when-not" => {
            let (test, body) = args.split_first().ok_or_else(|| {
                Error::arity(format!("`{name}` needs a condition")).with_span(span)
            })?;
            let test = a.analyze(test, false)?;
            let body = a.body(body, tail)?;
            if name == "when" {
                Expr::If(Box::new((test, body, Expr::nil())))
            } else {
                Expr::If(Box::new((test, Expr::nil(), body)))
            }
        }
        "cond" => {
            if !args.len().is_multiple_of(2) {
                return Err(Error::validation(
                    "`cond` needs pairs of test and expression; add `:else` before the default",
                )
                .with_span(span));
            }
            let mut expr = Expr::nil();
            for pair in args.chunks(2).rev() {
                let test = a.analyze(&pair[0], false)?;
                let then = a.analyze(&pair[1], tail)?;
                expr = Expr::If(Box::new((test, then, expr)));
            }
            expr
        }
        "condp" => condp(a, args, span, tail)?,
        "case" => case(a, args, span, tail)?,
        "let" | "loop" => {
            let (bindings, body) = binding_vector(name, args, span)?;
            let mark = a.mark();
            let mut pairs = Vec::with_capacity(bindings.len() / 2);
            for b in bindings.chunks(2) {
                let init = a.analyze(&b[1], false)?;
                pairs.push((a.pattern(&b[0])?, init));
            }
            let body = if name == "loop" {
                let target = super::RecurTarget::of(pairs.iter().map(|(p, _)| p));
                let saved = a.scope().recur.replace(target);
                let body = a.body(body, true);
                a.scope().recur = saved;
                body?
            } else {
                a.body(body, tail)?
            };
            a.release(mark);
            let node = Box::new(Let {
                bindings: pairs,
                body,
            });
            if name == "loop" {
                Expr::Loop(node)
            } else {
                Expr::Let(node)
            }
        }
        "recur" => {
            let expected = a.scope().recur.clone();
            match expected {
                Some(RecurTarget { arity: n, slots }) if tail => {
                    if args.len() != n {
                        return Err(Error::arity(format!(
                            "`recur` expects {n} argument{}, got {}",
                            plural(n),
                            args.len()
                        ))
                        .with_span(span));
                    }
                    Expr::Recur(Box::new(Recur {
                        args: a.analyze_all(args)?,
                        slots,
                    }))
                }
                Some(_) => {
                    return Err(Error::validation(
                        "`recur` must be in tail position (the last thing its `loop` or `fn` does)",
                    )
                    .with_span(span))
                }
                None => {
                    return Err(
                        Error::validation("`recur` is only allowed inside `loop` or `fn`")
                            .with_span(span),
                    )
                }
            }
        }
        "fn" | "fn*" => {
            let (fname, rest) = match args.first().and_then(|f| f.as_symbol()) {
                Some(n) => (Some(n), &args[1..]),
                None => (None, args),
            };
            let arities = split_arities(name, rest, span)?;
            let lambda = a.lambda(fname, &arities)?;
            a.lambda_expr(lambda)
        }
        "defn" | "defn-" => {
            let (fname, rest) = match args.split_first() {
                Some((n, rest)) => (def_name(n)?, rest),
                None => {
                    return Err(
                        Error::arity("`defn` needs a name, a parameter vector and a body")
                            .with_span(span),
                    )
                }
            };
            let (doc, rest) = match rest.split_first() {
                Some((
                    Form {
                        kind: FormKind::Str(s),
                        ..
                    },
                    more,
                )) if !more.is_empty() => (Some(ArcStr::from(s.as_str())), more),
                _ => (None, rest),
            };
            // An attribute map between the docstring and the parameters is skipped.
            let rest = match rest.split_first() {
                Some((
                    Form {
                        kind: FormKind::Map(_),
                        ..
                    },
                    more,
                )) if !more.is_empty() => more,
                _ => rest,
            };
            let arities = split_arities("defn", rest, span)?;
            let lambda = a.lambda(Some(fname), &arities)?;
            Expr::Def(Box::new(Def {
                name: ArcStr::from(fname),
                doc,
                value: a.lambda_expr(lambda),
                once: false,
                source: a.source_of(form),
            }))
        }
        "def" | "defonce" => {
            let (dname, rest) = match args.split_first() {
                Some((n, rest)) => (def_name(n)?, rest),
                None => {
                    return Err(
                        Error::arity(format!("`{name}` needs a name and a value")).with_span(span)
                    )
                }
            };
            // `(def name doc? attr-map? value)`: the attribute map (a
            // component contract, specification §9.8) is skipped.
            let (doc, value) = match rest {
                [] => (None, None),
                [v] => (None, Some(v)),
                [Form {
                    kind: FormKind::Str(s),
                    ..
                }, v]
                | [Form {
                    kind: FormKind::Str(s),
                    ..
                }, Form {
                    kind: FormKind::Map(_),
                    ..
                }, v] => (Some(ArcStr::from(s.as_str())), Some(v)),
                [Form {
                    kind: FormKind::Map(_),
                    ..
                }, v] => (None, Some(v)),
                _ => {
                    return Err(Error::arity(format!(
                        "`{name}` takes a name, an optional docstring and a value"
                    ))
                    .with_span(span))
                }
            };
            let value = match value {
                Some(v) => a.analyze(v, false)?,
                None => Expr::nil(),
            };
            Expr::Def(Box::new(Def {
                name: ArcStr::from(dname),
                doc,
                value,
                once: name == "defonce",
                source: a.source_of(form),
            }))
        }
        "if-let" | "when-let" | "if-some" | "when-some" => {
            let (bindings, body) = binding_vector(name, args, span)?;
            if bindings.len() != 2 {
                return Err(Error::validation(format!(
                    "`{name}` takes exactly one binding, like `({name} [x expr] ...)`"
                ))
                .with_span(span));
            }
            let (then, otherwise) = if name.starts_with("if") {
                if body.is_empty() || body.len() > 2 {
                    return Err(Error::arity(format!(
                        "`{name}` takes a then branch and an optional else branch"
                    ))
                    .with_span(span));
                }
                (
                    body[0].clone(),
                    body.get(1)
                        .cloned()
                        .unwrap_or(Form::new(FormKind::Nil, span)),
                )
            } else {
                let mut items = vec![sym("do", span)];
                items.extend(body.iter().cloned());
                (list(items, span), Form::new(FormKind::Nil, span))
            };
            let tmp = a.gensym(span);
            let test = if name.ends_with("some") {
                list(vec![sym("some?", span), tmp.clone()], span)
            } else {
                tmp.clone()
            };
            let inner = list(
                vec![
                    sym("let", span),
                    vector(vec![bindings[0].clone(), tmp.clone()], span),
                    then,
                ],
                span,
            );
            let rewritten = list(
                vec![
                    sym("let", span),
                    vector(vec![tmp, bindings[1].clone()], span),
                    list(vec![sym("if", span), test, inner, otherwise], span),
                ],
                span,
            );
            a.analyze(&rewritten, tail)?
        }
        "when-first" => {
            let (bindings, body) = binding_vector(name, args, span)?;
            if bindings.len() != 2 {
                return Err(
                    Error::validation("`when-first` takes exactly one binding").with_span(span)
                );
            }
            let tmp = a.gensym(span);
            let mut inner = vec![
                sym("let", span),
                vector(
                    vec![
                        bindings[0].clone(),
                        list(vec![sym("first", span), tmp.clone()], span),
                    ],
                    span,
                ),
            ];
            inner.extend(body.iter().cloned());
            let rewritten = list(
                vec![
                    sym("let", span),
                    vector(vec![tmp.clone(), bindings[1].clone()], span),
                    list(
                        vec![
                            sym("when", span),
                            list(vec![sym("seq", span), tmp], span),
                            list(inner, span),
                        ],
                        span,
                    ),
                ],
                span,
            );
            a.analyze(&rewritten, tail)?
        }
        "and" | "or" => {
            if args.is_empty() {
                let empty = if name == "and" {
                    Value::Bool(true)
                } else {
                    Value::Nil
                };
                return Ok(Some(Expr::Const(empty)));
            }
            let mut exprs = Vec::with_capacity(args.len());
            for (i, f) in args.iter().enumerate() {
                exprs.push(a.analyze(f, tail && i + 1 == args.len())?);
            }
            if exprs.len() == 1 {
                exprs.pop().expect("one expression")
            } else if name == "and" {
                Expr::And(exprs)
            } else {
                Expr::Or(exprs)
            }
        }
        "->" | "->>" if args.len() > desugar::NESTED_THREAD_STEPS => {
            // A long chain nests as deep as it is long: rebind one name
            // step by step instead, flat at any length.
            let tmp = a.gensym(span);
            let mut bindings = vec![tmp.clone(), args[0].clone()];
            for s in &args[1..] {
                bindings.push(tmp.clone());
                bindings.push(desugar::thread_step(tmp.clone(), s, name == "->>"));
            }
            let rewritten = list(vec![sym("let", span), vector(bindings, span), tmp], span);
            a.analyze(&rewritten, tail)?
        }
        "->" | "->>" => {
            let rewritten = desugar::thread(args, name == "->>", name, span)?;
            a.analyze(&rewritten, tail)?
        }
        "as->" => {
            let [init, binding, steps @ ..] = args else {
                return Err(
                    Error::arity("`as->` needs an initial value and a name").with_span(span)
                );
            };
            let mut bindings = vec![binding.clone(), init.clone()];
            for s in steps {
                bindings.push(binding.clone());
                bindings.push(s.clone());
            }
            let rewritten = list(
                vec![sym("let", span), vector(bindings, span), binding.clone()],
                span,
            );
            a.analyze(&rewritten, tail)?
        }
        "cond->" | "cond->>" | "some->" | "some->>" => {
            let last = name.ends_with(">>");
            let is_cond = name.starts_with("cond");
            let (init, steps) = args.split_first().ok_or_else(|| {
                Error::arity(format!("`{name}` needs an initial value")).with_span(span)
            })?;
            if is_cond && steps.len() % 2 != 0 {
                return Err(
                    Error::validation(format!("`{name}` needs pairs of test and form"))
                        .with_span(span),
                );
            }
            let tmp = a.gensym(span);
            let mut bindings = vec![tmp.clone(), init.clone()];
            if is_cond {
                for pair in steps.chunks(2) {
                    let step = desugar::thread_step(tmp.clone(), &pair[1], last);
                    bindings.push(tmp.clone());
                    bindings.push(list(
                        vec![sym("if", span), pair[0].clone(), step, tmp.clone()],
                        span,
                    ));
                }
            } else {
                for s in steps {
                    let step = desugar::thread_step(tmp.clone(), s, last);
                    let is_nil = list(vec![sym("nil?", span), tmp.clone()], span);
                    bindings.push(tmp.clone());
                    bindings.push(list(
                        vec![
                            sym("if", span),
                            is_nil,
                            Form::new(FormKind::Nil, span),
                            step,
                        ],
                        span,
                    ));
                }
            }
            let rewritten = list(vec![sym("let", span), vector(bindings, span), tmp], span);
            a.analyze(&rewritten, tail)?
        }
        "where" => where_form(a, args, span)?,
        "for" | "doseq" => for_form(a, name, args, span)?,
        "dotimes" => {
            let (bindings, body) = binding_vector(name, args, span)?;
            if bindings.len() != 2 {
                return Err(Error::validation(
                    "`dotimes` takes one binding, like `(dotimes [i 3] ...)`",
                )
                .with_span(span));
            }
            let range = list(vec![sym("range", span), bindings[1].clone()], span);
            let mut items = vec![
                sym("doseq", span),
                vector(vec![bindings[0].clone(), range], span),
            ];
            items.extend(body.iter().cloned());
            a.analyze(&list(items, span), tail)?
        }
        "return" | "fail" => {
            let value = match args {
                [] if name == "return" => Expr::nil(),
                [v] => a.analyze(v, false)?,
                _ => {
                    return Err(Error::arity(format!(
                        "`{name}` takes one value, like `({name} x)`"
                    ))
                    .with_span(span))
                }
            };
            if name == "return" {
                Expr::Return(Box::new(value))
            } else {
                Expr::Fail(Box::new(value))
            }
        }
        "call" => {
            let (tool, rest) = args.split_first().ok_or_else(|| {
                Error::arity("`call` needs a tool name, like `(call \"search\" {:q \"x\"})`")
                    .with_span(span)
            })?;
            let name = match &tool.kind {
                FormKind::Str(s) => ToolName::Fixed(ArcStr::from(s.as_str())),
                _ => ToolName::Computed(a.analyze(tool, false)?),
            };
            let args = a.analyze_all(rest)?;
            Expr::CallTool(Box::new(ToolCall { name, args, span }))
        }
        _ => return Ok(None),
    };
    Ok(Some(expr))
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn exactly<'f, const N: usize>(name: &str, args: &'f [Form], span: Span) -> Result<&'f [Form; N]> {
    args.try_into().map_err(|_| {
        Error::arity(format!(
            "`{name}` takes {N} argument{}, got {}",
            plural(N),
            args.len()
        ))
        .with_span(span)
    })
}

/// `(let [bindings...] body...)`: the bindings (even count) and the body.
fn binding_vector<'f>(
    name: &str,
    args: &'f [Form],
    span: Span,
) -> Result<(&'f [Form], &'f [Form])> {
    match args.split_first() {
        Some((
            Form {
                kind: FormKind::Vector(b),
                ..
            },
            body,
        )) => {
            if b.len() % 2 != 0 {
                return Err(Error::validation(format!(
                    "`{name}` requires an even number of forms in its binding vector"
                ))
                .with_span(args[0].span));
            }
            Ok((b, body))
        }
        _ => Err(Error::validation(format!(
            "`{name}` needs a binding vector, like `({name} [x 1] ...)`"
        ))
        .with_span(span)),
    }
}

fn def_name(form: &Form) -> Result<&str> {
    match &form.kind {
        FormKind::Symbol(s) if s.starts_with("data/") || s.starts_with("tool/") => {
            Err(Error::validation(format!(
            "Cannot define `{s}`: `data/` and `tool/` are read-only; define a plain name instead"
        ))
            .with_span(form.span))
        }
        FormKind::Symbol(s) if is_special(s) => Err(Error::validation(format!(
            "Cannot define `{s}`: it is a special form; choose another name"
        ))
        .with_span(form.span)),
        FormKind::Symbol(s) => Ok(s.strip_prefix("user/").unwrap_or(s)),
        _ => Err(Error::validation("Expected a name to define").with_span(form.span)),
    }
}

/// `(fn [x] body)` or `(fn ([x] body) ([x y] body))` into arity groups.
fn split_arities<'f>(
    name: &str,
    rest: &'f [Form],
    span: Span,
) -> Result<Vec<(&'f Form, &'f [Form])>> {
    match rest.first() {
        Some(
            params @ Form {
                kind: FormKind::Vector(_),
                ..
            },
        ) => Ok(vec![(params, &rest[1..])]),
        Some(Form {
            kind: FormKind::List(_),
            ..
        }) => rest
            .iter()
            .map(|f| match &f.kind {
                FormKind::List(items) => match items.split_first() {
                    Some((
                        params @ Form {
                            kind: FormKind::Vector(_),
                            ..
                        },
                        body,
                    )) => Ok((params, body)),
                    _ => Err(Error::validation(format!(
                        "Each arity of `{name}` must start with a parameter vector"
                    ))
                    .with_span(f.span)),
                },
                _ => Err(Error::validation(format!(
                    "Each arity of `{name}` must be a list like `([x] body)`"
                ))
                .with_span(f.span)),
            })
            .collect(),
        _ => Err(Error::validation(format!(
            "`{name}` needs a parameter vector, like `({name} [x] ...)`"
        ))
        .with_span(span)),
    }
}

fn condp(a: &mut Analyzer, args: &[Form], span: Span, tail: bool) -> Result<Expr> {
    let [pred, subject, clauses @ ..] = args else {
        return Err(Error::arity("`condp` needs a predicate, a value and clauses").with_span(span));
    };
    let p = a.gensym(span);
    let v = a.gensym(span);
    let mark = a.mark();
    let pred_e = a.analyze(pred, false)?;
    let p_pat = a.pattern(&p)?;
    let subject_e = a.analyze(subject, false)?;
    let v_pat = a.pattern(&v)?;
    let (pairs, default) = if clauses.len() % 2 == 1 {
        (&clauses[..clauses.len() - 1], clauses.last())
    } else {
        (clauses, None)
    };
    let mut expr = match default {
        Some(d) => a.analyze(d, tail)?,
        // The specification (§5.8): no match and no default is nil
        // (Clojure throws).
        None => Expr::nil(),
    };
    for pair in pairs.chunks(2).rev() {
        let test = a.analyze(
            &list(vec![p.clone(), pair[0].clone(), v.clone()], pair[0].span),
            false,
        )?;
        let then = a.analyze(&pair[1], tail)?;
        expr = Expr::If(Box::new((test, then, expr)));
    }
    a.release(mark);
    Ok(Expr::Let(Box::new(Let {
        bindings: vec![(p_pat, pred_e), (v_pat, subject_e)],
        body: expr,
    })))
}

fn case(a: &mut Analyzer, args: &[Form], span: Span, tail: bool) -> Result<Expr> {
    let (subject, clauses) = args
        .split_first()
        .ok_or_else(|| Error::arity("`case` needs a value and clauses").with_span(span))?;
    let subject = a.analyze(subject, false)?;
    let (pairs, default) = if clauses.len() % 2 == 1 {
        (&clauses[..clauses.len() - 1], clauses.last())
    } else {
        (clauses, None)
    };
    let mut table = Vec::new();
    // Constants seen so far: a set, so 100k clauses cost O(n), not O(n^2).
    let mut seen: std::collections::HashSet<Value, crate::value::FixedState> =
        std::collections::HashSet::default();
    let mut branches = Vec::with_capacity(pairs.len() / 2);
    for (i, pair) in pairs.chunks(2).enumerate() {
        let tests: Vec<Value> = match &pair[0].kind {
            FormKind::List(alts) => alts.iter().map(quote).collect(),
            _ => vec![quote(&pair[0])],
        };
        for t in tests {
            if !seen.insert(t.clone()) {
                return Err(Error::validation(format!(
                    "Duplicate test constant `{}` in `case`",
                    crate::value::pr_str(&t)
                ))
                .with_span(pair[0].span));
            }
            table.push((t, i));
        }
        branches.push(a.analyze(&pair[1], tail)?);
    }
    let default = default.map(|d| a.analyze(d, tail)).transpose()?;
    Ok(Expr::Case(Box::new(Case {
        subject,
        table,
        branches,
        default,
    })))
}

/// The hint of a malformed `where` form, naming the operators from
/// [`WhereOp::WRITTEN`] (made only when there is an error to show).
fn where_hint() -> String {
    let names: Vec<&str> = WhereOp::WRITTEN.iter().map(|op| op.name()).collect();
    format!(
        "Use `(where :field op value)` with op one of {}; or `(where :field)` for a truthy check",
        names.join(", ")
    )
}

fn where_form(a: &mut Analyzer, args: &[Form], span: Span) -> Result<Expr> {
    match args {
        [field] => Ok(Expr::Where(Box::new(WhereExpr {
            path: a.analyze(field, false)?,
            op: WhereOp::Truthy,
            operand: None,
        }))),
        [field, op, value] => {
            let written = match &op.kind {
                FormKind::Symbol(s) => WhereOp::from_name(s),
                _ => None,
            };
            let Some(written) = written else {
                return Err(Error::validation(format!(
                    "Unknown `where` operator `{}`",
                    super::form_text(op)
                ))
                .with_hint(where_hint())
                .with_span(op.span));
            };
            Ok(Expr::Where(Box::new(WhereExpr {
                path: a.analyze(field, false)?,
                op: written,
                operand: Some(a.analyze(value, false)?),
            })))
        }
        [_, _] => Err(Error::validation("`where` is missing its operator")
            .with_hint(where_hint())
            .with_span(span)),
        _ => Err(Error::arity(format!(
            "`where` takes 1 or 3 arguments, got {}",
            args.len()
        ))
        .with_hint(where_hint())
        .with_span(span)),
    }
}

fn for_form(a: &mut Analyzer, name: &str, args: &[Form], span: Span) -> Result<Expr> {
    let (bindings, body) = binding_vector(name, args, span)?;
    if bindings.is_empty() {
        return Err(
            Error::validation(format!("`{name}` needs at least one binding")).with_span(span),
        );
    }
    let mark = a.mark();
    let mut clauses = Vec::new();
    for pair in bindings.chunks(2) {
        match &pair[0].kind {
            FormKind::Keyword(k) if k == "when" => {
                clauses.push(ForClause::When(a.analyze(&pair[1], false)?))
            }
            FormKind::Keyword(k) if k == "while" => {
                clauses.push(ForClause::While(a.analyze(&pair[1], false)?))
            }
            FormKind::Keyword(k) if k == "let" => {
                let FormKind::Vector(lets) = &pair[1].kind else {
                    return Err(
                        Error::validation("`:let` must be followed by a binding vector")
                            .with_span(pair[1].span),
                    );
                };
                if lets.len() % 2 != 0 {
                    return Err(Error::validation("`:let` needs an even number of forms")
                        .with_span(pair[1].span));
                }
                let mut bound = Vec::new();
                for b in lets.chunks(2) {
                    let init = a.analyze(&b[1], false)?;
                    bound.push((a.pattern(&b[0])?, init));
                }
                clauses.push(ForClause::Let(bound));
            }
            FormKind::Keyword(k) => {
                return Err(Error::validation(format!(
                    "Unknown `{name}` modifier `:{k}`; use `:let`, `:when` or `:while`"
                ))
                .with_span(pair[0].span))
            }
            _ => {
                let coll = a.analyze(&pair[1], false)?;
                clauses.push(ForClause::Bind(a.pattern(&pair[0])?, coll));
            }
        }
    }
    if !matches!(clauses.first(), Some(ForClause::Bind(..))) {
        return Err(Error::validation(format!(
            "`{name}` must start with a binding, not a modifier"
        ))
        .with_span(span));
    }
    let body = if name == "for" {
        // The specification (§5.17) allows several body expressions (an
        // implicit `do`, the last value collected); Clojure takes one.
        if body.is_empty() {
            return Err(Error::arity("`for` needs a body expression").with_span(span));
        }
        a.body(body, false)?
    } else {
        a.body(body, false)?
    };
    a.release(mark);
    Ok(Expr::For(Box::new(For {
        clauses,
        body,
        collect: name == "for",
        span,
    })))
}
