//! Analysis: turns spanned forms into `Expr` trees.
//!
//! It resolves every name once (locals to frame slots, closures to capture
//! lists, builtins to direct calls, everything else to run-time globals),
//! expands the derived forms (`when`, `cond`, `->`, `if-let`, ...) into core
//! ones, and checks that `recur` is only used in tail position.

mod destructure;
mod desugar;
mod locals;
mod special;

pub(crate) use special::supported as supported_special_forms;

use std::sync::Arc;

use crate::builtins::{self, Registry};
use crate::error::{Error, ErrorKind, Result, Span};
use crate::reader::{Form, FormKind};
use crate::value::{ArcStr, Map, Set, Shape, Value, SMALL_MAP_LIMIT};

use super::expr::{
    Arity, Call, CaptureFrom, Expr, Get, GlobalRef, Lambda, NativeCall, PrimCall, SelfCall,
    ShapedMap, ToolCall, ToolName,
};
use super::pattern::Pattern;
use super::prim::PrimOp;

/// Namespaces whose functions are our builtins under their plain names.
pub(crate) const CLOJURE_NAMESPACES: &[&str] = &[
    "clojure.core",
    "core",
    // The specification's regex helpers (§9.6) and Clojure's REPL
    // helpers (`clojure.repl/doc`).
    "regex",
    "clojure.repl",
    "clojure.string",
    "str",
    "string",
    "clojure.set",
    "set",
    "clojure.walk",
    "walk",
];

/// Functions of a Clojure namespace whose plain name is a different
/// builtin and that have no namespaced implementation: `clojure.set/join`
/// is a relational join (our `join` joins strings), so it must not resolve
/// to the builtin. (`clojure.string/reverse` is registered under its full
/// name.)
const SHADOWED_IN_NAMESPACE: &[(&str, &str)] = &[("set", "join")];

/// The namespace family of a Clojure namespace alias.
fn namespace_group(ns: &str) -> &'static str {
    match ns {
        "clojure.string" | "str" | "string" => "string",
        "clojure.set" | "set" => "set",
        "clojure.walk" | "walk" => "walk",
        _ => "core",
    }
}

/// Analyze a whole program. The result is the body of a zero-argument
/// arity whose frame holds the program's top-level locals.
///
/// `globals` is the user namespace the program will run in, when known:
/// a definition there shadows the builtin of the same name
/// (specification §5.13), as does a `def`/`defn`/`defonce` of it anywhere
/// in the program itself, and its `require` aliases hold. Shadowing is
/// decided here, once, so the builtin calls of programs that shadow
/// nothing stay direct calls.
/// Names looked up for every symbol analyzed (foldhash, not SipHash).
type NameSet = std::collections::HashSet<String, crate::value::FixedState>;

pub(crate) fn analyze_program(
    forms: &[Form],
    globals: Option<&crate::eval::Globals>,
    text: Option<&str>,
) -> Result<Arity> {
    let mut a = Analyzer::new();
    a.text = text.map(str::to_string);
    if let Some(g) = globals {
        a.aliases = g
            .aliases()
            .map(|(alias, ns)| (alias.to_string(), ns.to_string()))
            .collect();
    }
    let registry = a.registry;
    let mut shadowed = NameSet::default();
    collect_definitions(forms, &mut |name| {
        if registry.lookup(name).is_some() {
            shadowed.insert(name.to_string());
        }
    });
    if let Some(g) = globals {
        shadowed.extend(g.builtin_shadows().map(str::to_string));
    }
    a.shadowed = shadowed;
    a.scopes.push(FnScope::default());
    let body = a.body(forms, true)?;
    let scope = a.scopes.pop().expect("root scope");
    Ok(Arity {
        params: Vec::new(),
        reads_args: false,
        rest: None,
        self_slot: None,
        frame_size: scope.frame_size,
        body,
    })
}

pub(super) struct Analyzer {
    scopes: Vec<FnScope>,
    registry: &'static Registry,
    gensym: u32,
    /// Builtin names a user definition shadows (see `analyze_program`).
    shadowed: NameSet,
    /// `(require '[clojure.string :as s])` aliases seen so far, alias to
    /// namespace.
    aliases: Vec<(String, String)>,
    /// The program's text, when it was read from text: a definition's
    /// `source` is then its text as written, as in Clojure.
    text: Option<String>,
}

/// Call `found` with every name a `def`, `defn`, `defn-` or `defonce`
/// anywhere in `forms` defines.
fn collect_definitions(forms: &[Form], found: &mut dyn FnMut(&str)) {
    for form in forms {
        match &form.kind {
            FormKind::List(items) => {
                if let [head, name, ..] = items.as_slice() {
                    if let (FormKind::Symbol(h), FormKind::Symbol(n)) = (&head.kind, &name.kind) {
                        if matches!(h.as_str(), "def" | "defn" | "defn-" | "defonce") {
                            found(n.strip_prefix("user/").unwrap_or(n));
                        }
                    }
                }
                collect_definitions(items, found);
            }
            FormKind::Vector(items) | FormKind::Set(items) | FormKind::Map(items) => {
                collect_definitions(items, found)
            }
            FormKind::AnonFn(items) => collect_definitions(items, found),
            _ => {}
        }
    }
}

/// The analysis state of one function (or of the program itself).
#[derive(Default)]
struct FnScope {
    /// Visible locals, innermost last.
    locals: locals::Locals<Place>,
    next_slot: u32,
    frame_size: u32,
    captures: Vec<(ArcStr, CaptureFrom)>,
    /// What `recur` rebinds here, when `recur` is allowed.
    recur: Option<RecurTarget>,
    /// The slot of a named `fn`'s own name, in the arity being analyzed.
    self_slot: Option<u32>,
    /// Whether that name is used other than to call the function (as a
    /// value, or captured): only then does the slot hold the function.
    self_used: bool,
}

/// The bindings of a `loop` or the parameters of a `fn` arity, as `recur`
/// sees them.
#[derive(Clone)]
pub(super) struct RecurTarget {
    /// Number of values `recur` must pass.
    pub arity: usize,
    /// The frame slot of each value when every binding is a plain name
    /// kept in the frame: `recur` then stores its values there itself.
    pub slots: Option<Vec<u32>>,
}

impl RecurTarget {
    pub(super) fn of<'p>(patterns: impl Iterator<Item = &'p Pattern>) -> RecurTarget {
        let slots: Vec<Option<u32>> = patterns
            .map(|p| match p {
                Pattern::Bind(slot) => Some(*slot),
                _ => None,
            })
            .collect();
        RecurTarget {
            arity: slots.len(),
            slots: slots.into_iter().collect(),
        }
    }
}

enum LocalRef {
    Local(u32),
    Arg(u32),
    Capture(u32),
}

/// Where a local of the current frame lives.
#[derive(Clone, Copy, PartialEq)]
enum Place {
    /// A slot of the frame.
    Slot(u32),
    /// A parameter, read from the call's arguments (`Expr::Arg`).
    Arg(u32),
}

impl Analyzer {
    fn new() -> Self {
        Analyzer {
            scopes: Vec::new(),
            registry: builtins::registry(),
            gensym: 0,
            shadowed: NameSet::default(),
            aliases: Vec::new(),
            text: None,
        }
    }

    /// The source of a definition form: as written when the program's
    /// text is known, printed from the form otherwise.
    pub(super) fn source_of(&self, form: &Form) -> ArcStr {
        let written = self
            .text
            .as_deref()
            .and_then(|t| t.get(form.span.start..form.span.end));
        match written {
            Some(text) => ArcStr::from(text),
            None => ArcStr::from(form_text(form)),
        }
    }

    fn scope(&mut self) -> &mut FnScope {
        self.scopes.last_mut().expect("an open scope")
    }

    /// A fresh symbol no program can write (the reader never produces
    /// symbols starting with `#`).
    fn gensym(&mut self, span: Span) -> Form {
        self.gensym += 1;
        Form::new(FormKind::Symbol(format!("#g{}", self.gensym).into()), span)
    }

    /// Declare a local in the current frame and return its slot.
    fn declare(&mut self, name: &str) -> u32 {
        let scope = self.scope();
        let slot = scope.next_slot;
        scope.next_slot += 1;
        scope.frame_size = scope.frame_size.max(scope.next_slot);
        scope.locals.push(ArcStr::from(name), Place::Slot(slot));
        slot
    }

    /// Declare fixed parameter `index` of a `fn` arity: a plain name when
    /// the arity has no rest parameter is read from the call's arguments
    /// ([`Pattern::Arg`]); anything else is a pattern bound in the frame.
    fn parameter(&mut self, form: &Form, index: usize, direct: bool) -> Result<Pattern> {
        match &form.kind {
            FormKind::Symbol(name) if direct && is_plain_name(name) => {
                let index = u32::try_from(index).map_err(|_| {
                    Error::validation("A function cannot have that many parameters")
                })?;
                let scope = self.scope();
                scope
                    .locals
                    .push(ArcStr::from(name.as_str()), Place::Arg(index));
                Ok(Pattern::Arg)
            }
            _ => self.pattern(form),
        }
    }

    /// Remember how many locals are visible, to drop those declared after.
    fn mark(&mut self) -> (usize, u32) {
        let scope = self.scope();
        (scope.locals.len(), scope.next_slot)
    }

    fn release(&mut self, mark: (usize, u32)) {
        let scope = self.scope();
        scope.locals.truncate(mark.0);
        scope.next_slot = mark.1;
    }

    fn lookup(&mut self, name: &str) -> Option<LocalRef> {
        let depth = self.scopes.len() - 1;
        self.lookup_in(depth, name)
    }

    fn lookup_in(&mut self, depth: usize, name: &str) -> Option<LocalRef> {
        let scope = &mut self.scopes[depth];
        if let Some(place) = scope.locals.find(name) {
            return Some(match place {
                Place::Slot(slot) => {
                    if scope.self_slot == Some(slot) {
                        scope.self_used = true;
                    }
                    LocalRef::Local(slot)
                }
                Place::Arg(index) => LocalRef::Arg(index),
            });
        }
        if let Some(i) = scope.captures.iter().position(|(n, _)| n == name) {
            return Some(LocalRef::Capture(i as u32));
        }
        if depth == 0 {
            return None;
        }
        let from = match self.lookup_in(depth - 1, name)? {
            LocalRef::Local(s) => CaptureFrom::Local(s),
            LocalRef::Arg(i) => CaptureFrom::Arg(i),
            LocalRef::Capture(i) => CaptureFrom::Capture(i),
        };
        let captures = &mut self.scopes[depth].captures;
        captures.push((ArcStr::from(name), from));
        Some(LocalRef::Capture(captures.len() as u32 - 1))
    }

    /// Analyze a sequence of forms as an implicit `do`.
    fn body(&mut self, forms: &[Form], tail: bool) -> Result<Expr> {
        match forms {
            [] => Ok(Expr::nil()),
            [one] => self.analyze(one, tail),
            _ => {
                let mut exprs = Vec::with_capacity(forms.len());
                for (i, f) in forms.iter().enumerate() {
                    exprs.push(self.analyze(f, tail && i + 1 == forms.len())?);
                }
                Ok(Expr::Do(exprs))
            }
        }
    }

    /// Analyze one form. Nested forms grow the stack on the heap rather
    /// than overflow it, and every form counts as work for the program's
    /// meter: analysis runs under the run's deadline and interrupt flag.
    fn analyze(&mut self, form: &Form, tail: bool) -> Result<Expr> {
        if !crate::meter::work(1) {
            if let Some(e) = crate::meter::error() {
                return Err(e);
            }
        }
        crate::value::deep(|| self.analyze_inner(form, tail)).map_err(|e| e.with_span(form.span))
    }

    fn analyze_inner(&mut self, form: &Form, tail: bool) -> Result<Expr> {
        Ok(match &form.kind {
            FormKind::Nil => Expr::nil(),
            FormKind::Bool(b) => Expr::Const(Value::Bool(*b)),
            FormKind::Int(n) => Expr::Const(Value::Int(*n)),
            FormKind::Float(f) => Expr::Const(Value::Float(*f)),
            FormKind::Str(s) => Expr::Const(Value::str(s)),
            FormKind::Keyword(k) => Expr::Const(Value::keyword(k)),
            FormKind::Symbol(s) => self.symbol(s, form.span)?,
            FormKind::Vector(items) => {
                let exprs = self.analyze_all(items)?;
                constant_or(exprs, Expr::Vector, Value::vector)
            }
            FormKind::Set(items) => {
                let exprs = self.analyze_all(items)?;
                constant_or(exprs, Expr::Set, |vals| {
                    Value::set(vals.into_iter().collect::<Set>())
                })
            }
            FormKind::Map(items) => {
                let mut pairs = Vec::with_capacity(items.len() / 2);
                for kv in items.chunks(2) {
                    pairs.push((self.analyze(&kv[0], false)?, self.analyze(&kv[1], false)?));
                }
                if pairs
                    .iter()
                    .all(|(k, v)| matches!((k, v), (Expr::Const(_), Expr::Const(_))))
                {
                    let map: Map = pairs
                        .into_iter()
                        .map(|(k, v)| match (k, v) {
                            (Expr::Const(k), Expr::Const(v)) => (k, v),
                            _ => unreachable!("checked above"),
                        })
                        .collect();
                    Expr::Const(Value::map(map))
                } else {
                    shaped_map(pairs)
                }
            }
            FormKind::List(items) => match items.first() {
                None => Expr::Const(Value::list([])),
                Some(head) => self.list(head, &items[1..], form, tail)?,
            },
            FormKind::AnonFn(items) => {
                let expanded = desugar::anon_fn(items, form.span)?;
                self.analyze(&expanded, false)?
            }
            FormKind::Regex(src) => Expr::Const(builtins::compile_regex(src)?),
            FormKind::Quote(inner) => Expr::Const(quote(inner)),
            // The specification (§3.10): `#'x` is the value of `x`, as
            // the plain symbol would be; there are no first-class vars.
            FormKind::Var(name) => self.symbol(name, form.span)?,
        })
    }

    fn analyze_all(&mut self, forms: &[Form]) -> Result<Vec<Expr>> {
        forms.iter().map(|f| self.analyze(f, false)).collect()
    }

    /// Resolve a symbol in value position.
    fn symbol(&mut self, name: &str, span: Span) -> Result<Expr> {
        if let Some(local) = self.lookup(name) {
            return Ok(match local {
                LocalRef::Local(s) => Expr::Local(s),
                LocalRef::Arg(i) => Expr::Arg(i),
                LocalRef::Capture(i) => Expr::Capture(i),
            });
        }
        if special::is_special(name) {
            return Err(Error::validation(format!(
                "`{name}` is a special form and cannot be used as a value"
            )));
        }
        match name {
            "*1" => return Ok(Expr::History(1)),
            "*2" => return Ok(Expr::History(2)),
            "*3" => return Ok(Expr::History(3)),
            "*e" => return Ok(Expr::History(0)),
            "&" => {
                return Err(Error::validation(
                    "`&` is only allowed in parameter and binding vectors",
                ))
            }
            _ => {}
        }
        if name == "data" && !self.shadowed.contains(name) {
            // Appendix A: the data map as a whole is not a value.
            return Err(Error::validation("`data` is not a value: the input as a whole cannot be read")
                .with_hint("read one value with `data/KEY`, or `(data \"KEY\")` for a key that is not a symbol"));
        }
        if let Some(b) = self.registry.lookup(name) {
            if !self.shadowed.is_empty() && self.shadowed.contains(name) {
                return Ok(Expr::Global(Box::new(GlobalRef {
                    name: ArcStr::from(name),
                    fallback: true,
                    builtin: Some(&b.native),
                    span,
                })));
            }
            return Ok(Expr::Const(Value::Native(&b.native)));
        }
        if let Some(v) = self.registry.constant_lookup(name) {
            return Ok(Expr::Const(v));
        }
        if let Some((ns, local)) = split_namespace(name) {
            return self.namespaced(ns, local, name, span);
        }
        if let Some(err) = self.registry.interop_error(name) {
            return Err(err);
        }
        Ok(Expr::Global(Box::new(GlobalRef {
            name: ArcStr::from(name),
            fallback: true,
            builtin: None,
            span,
        })))
    }

    /// One `require` spec: `'clojure.string`, `'[clojure.string :as s]`
    /// (also unquoted, as inside `ns`). Records the alias for the rest of
    /// the program and pushes it on `made` (the run keeps it for later
    /// turns); a namespace we do not have is an error that says so.
    fn require(&mut self, spec: &Form, made: &mut Vec<Expr>) -> Result<()> {
        let spec = match &spec.kind {
            FormKind::Quote(inner) => inner,
            _ => spec,
        };
        let (ns, options) =
            match &spec.kind {
                FormKind::Symbol(ns) => (ns.as_str(), &[][..]),
                FormKind::Vector(items) => match items.split_first() {
                    Some((
                        Form {
                            kind: FormKind::Symbol(ns),
                            ..
                        },
                        options,
                    )) => (ns.as_str(), options),
                    _ => return Err(Error::validation(
                        "`require` takes a namespace, like `(require '[clojure.string :as str])`",
                    )
                    .with_span(spec.span)),
                },
                _ => {
                    return Err(Error::validation(
                        "`require` takes a namespace, like `(require '[clojure.string :as str])`",
                    )
                    .with_span(spec.span))
                }
            };
        if !CLOJURE_NAMESPACES.contains(&ns) && ns != "json" {
            let mut available: Vec<&str> = CLOJURE_NAMESPACES
                .iter()
                .copied()
                .filter(|n| n.contains('.'))
                .collect();
            available.sort_unstable();
            return Err(Error::new(
                ErrorKind::Undefined,
                format!("Namespace `{ns}` is not available"),
            )
            .with_hint(format!(
                "the namespaces a program can require are {} (all their functions are also available without a prefix)",
                available.join(", ")
            ))
            .with_span(spec.span));
        }
        let mut i = 0;
        while i < options.len() {
            match (&options[i].kind, options.get(i + 1).map(|f| &f.kind)) {
                (FormKind::Keyword(k), Some(FormKind::Symbol(alias))) if k == "as" => {
                    self.aliases.retain(|(a, _)| a != alias.as_str());
                    self.aliases.push((alias.to_string(), ns.to_string()));
                    made.push(Expr::Const(Value::str(alias)));
                    made.push(Expr::Const(Value::str(ns)));
                }
                // `:refer`, `:refer-macros`, `:rename`: every function is
                // already available by its plain name.
                (FormKind::Keyword(_), Some(_)) => {}
                _ => {
                    return Err(Error::validation(
                        "`require` options come in pairs, like `:as str` or `:refer [join]`",
                    )
                    .with_span(options[i].span))
                }
            }
            i += 2;
        }
        Ok(())
    }

    /// The expression of a `require` (or `ns`): nil, after recording the
    /// aliases it made in the user namespace.
    fn required(&self, made: Vec<Expr>, span: Span) -> Expr {
        match self.registry.lookup(builtins::ALIAS) {
            Some(alias) if !made.is_empty() => Expr::CallNative(Box::new(NativeCall {
                id: alias.native.id,
                args: made,
                span,
            })),
            _ => Expr::nil(),
        }
    }

    fn namespaced(&mut self, ns: &str, local: &str, full: &str, span: Span) -> Result<Expr> {
        if let Some(target) = self
            .aliases
            .iter()
            .find(|(alias, _)| alias == ns)
            .map(|(_, target)| target.clone())
        {
            if target != ns {
                return self.symbol(&format!("{target}/{local}"), span);
            }
        }
        match ns {
            "data" => Ok(Expr::Data(ArcStr::from(local), span)),
            "tool" => Ok(Expr::ToolRef(ArcStr::from(local), span)),
            "user" => Ok(Expr::Global(Box::new(GlobalRef {
                name: ArcStr::from(local),
                fallback: false,
                builtin: None,
                span,
            }))),
            _ if CLOJURE_NAMESPACES.contains(&ns) => {
                // Names that clash with core ones (`clojure.string/reverse`)
                // are registered under their full namespace.
                let qualified = canonical_namespace(ns)
                    .and_then(|c| self.registry.lookup(&format!("{c}/{local}")));
                if let Some(b) = qualified {
                    return Ok(Expr::Const(Value::Native(&b.native)));
                }
                match self.registry.lookup(local) {
                    Some(_) if SHADOWED_IN_NAMESPACE.contains(&(namespace_group(ns), local)) => {
                        Err(self.registry.not_available(ns, local))
                    }
                    Some(b) => Ok(Expr::Const(Value::Native(&b.native))),
                    None => Err(self.registry.not_available(ns, local)),
                }
            }
            _ => Err(
                Error::new(ErrorKind::Undefined, format!("`{full}` is not available"))
                    .with_hint(self.registry.interop_hint(ns)),
            ),
        }
    }

    /// True when `name` is, here, the name of the named `fn` being
    /// analyzed (not shadowed by a local).
    fn is_self_name(&mut self, name: &str) -> bool {
        let scope = self.scope();
        scope.self_slot.is_some() && scope.locals.find(name) == scope.self_slot.map(Place::Slot)
    }

    fn list(&mut self, head: &Form, args: &[Form], form: &Form, tail: bool) -> Result<Expr> {
        if let FormKind::Symbol(name) = &head.kind {
            if self.is_self_name(name) {
                let args = self.analyze_all(args)?;
                return Ok(Expr::CallSelf(Box::new(SelfCall {
                    args,
                    span: form.span,
                })));
            }
            if self.lookup(name).is_none() {
                if let Some(expr) = special::analyze(self, name, args, form, tail)? {
                    return Ok(expr);
                }
                // `(doc map)` documents `map`: a bare symbol argument of
                // the reference forms is its name (specification §9.9).
                if matches!(name.as_str(), "doc" | "dir" | "source" | "export-meta")
                    && !self.shadowed.contains(name.as_str())
                {
                    if let [Form {
                        kind: FormKind::Symbol(target),
                        span,
                    }] = args
                    {
                        if self.lookup(target).is_none() {
                            let quoted = [Form::new(FormKind::Str(target.to_string()), *span)];
                            let func = self.analyze(head, false)?;
                            let args = self.analyze_all(&quoted)?;
                            return Ok(self.call(func, args, form.span));
                        }
                    }
                }
                if name == "data" && !self.shadowed.contains("data") {
                    if let Some(b) = self.registry.lookup("data") {
                        return Ok(Expr::CallNative(Box::new(NativeCall {
                            id: b.native.id,
                            args: self.analyze_all(args)?,
                            span: form.span,
                        })));
                    }
                }
                if let Some(tool) = name.strip_prefix("tool/") {
                    let args = self.analyze_all(args)?;
                    return Ok(Expr::CallTool(Box::new(ToolCall {
                        name: ToolName::Fixed(ArcStr::from(tool)),
                        args,
                        span: form.span,
                    })));
                }
            }
        }
        let func = self.analyze(head, false)?;
        let args = self.analyze_all(args)?;
        Ok(self.call(func, args, form.span))
    }

    /// A call of `func`: direct for a builtin, a lookup for a keyword
    /// or `get` with a constant key.
    fn call(&self, func: Expr, args: Vec<Expr>, span: Span) -> Expr {
        let get = match &func {
            Expr::Const(Value::Keyword(_)) => (1..=2).contains(&args.len()),
            Expr::Const(Value::Native(n)) => {
                n.name == "get"
                    && (2..=3).contains(&args.len())
                    && matches!(args[1], Expr::Const(_))
            }
            _ => false,
        };
        if get {
            let mut args = args.into_iter();
            let target = args.next().expect("not empty");
            let key = match &func {
                Expr::Const(k @ Value::Keyword(_)) => k.clone(),
                _ => match args.next() {
                    Some(Expr::Const(k)) => k,
                    _ => unreachable!("a constant key, checked above"),
                },
            };
            return Expr::Get(Box::new(Get {
                key,
                target,
                default: args.next(),
                span,
            }));
        }
        if let Expr::Const(Value::Native(n)) = &func {
            let mut call = NativeCall {
                id: n.id,
                args,
                span,
            };
            if n.name == "take" {
                self.take_of_range(&mut call);
                self.take_of_sort(&mut call);
            }
            if n.name == "first" {
                self.first_of_sort(&mut call);
            }
            if let Some(op) = PrimOp::of_call(n.name, call.args.len()) {
                let mut args = call.args;
                let int_tree = args.iter().all(is_int_operand);
                if int_tree {
                    // Its calls are evaluated inside this one's tree.
                    for arg in &mut args {
                        if let Expr::Prim(inner) = arg {
                            inner.int_tree = false;
                        }
                    }
                }
                return Expr::Prim(Box::new(PrimCall {
                    op,
                    id: call.id,
                    args,
                    span,
                    int_tree,
                }));
            }
            return Expr::CallNative(Box::new(call));
        }
        Expr::Call(Box::new(Call { func, args, span }))
    }

    /// `(take n (range start end step))` calls one builtin that bounds a
    /// zero-step range by `n` (specification §8.1); a zero-step range
    /// anywhere else is an error.
    fn take_of_range(&self, call: &mut NativeCall) {
        let [_, Expr::CallNative(inner)] = call.args.as_slice() else {
            return;
        };
        if inner.args.len() != 3 || self.registry.get(inner.id).name != "range" {
            return;
        }
        let Some(take_range) = self.registry.lookup(builtins::TAKE_RANGE) else {
            return;
        };
        let Expr::CallNative(inner) = call.args.pop().expect("two arguments") else {
            unreachable!("matched above");
        };
        call.args.extend(inner.args);
        call.id = take_range.native.id;
    }

    /// `(take n (sort-by keyfn comp? coll))` and `(take n (sort comp?
    /// coll))` call one builtin that sorts only the first `n` items when
    /// it can (a top-n query is the usual reason to sort); the result is
    /// the same.
    fn take_of_sort(&self, call: &mut NativeCall) {
        let [_, Expr::CallNative(inner)] = call.args.as_slice() else {
            return;
        };
        let Some(fused) = self.first_of_sort_builtin(inner) else {
            return;
        };
        let Expr::CallNative(inner) = call.args.pop().expect("two arguments") else {
            unreachable!("matched above");
        };
        call.args.extend(inner.args);
        call.id = fused;
    }

    /// `(first (sort-by ...))` and `(first (sort ...))`: the sort is
    /// that of the first item only, `(take 1 ...)` as [`Self::take_of_sort`]
    /// makes it.
    fn first_of_sort(&self, call: &mut NativeCall) {
        let [Expr::CallNative(inner)] = call.args.as_mut_slice() else {
            return;
        };
        let Some(fused) = self.first_of_sort_builtin(inner) else {
            return;
        };
        inner.args.insert(0, Expr::Const(Value::Int(1)));
        inner.id = fused;
    }

    /// The builtin giving the first n items of `inner`'s sort, when
    /// `inner` is a call of `sort-by` or `sort` with a valid count of
    /// arguments.
    fn first_of_sort_builtin(&self, inner: &NativeCall) -> Option<u16> {
        let fused = match (self.registry.get(inner.id).name, inner.args.len()) {
            ("sort-by", 2..=3) => builtins::TAKE_SORTED_BY,
            ("sort", 1..=2) => builtins::TAKE_SORTED,
            _ => return None,
        };
        self.registry.lookup(fused).map(|f| f.native.id)
    }

    /// Analyze `fn` arities (already split into `(params body...)` groups).
    fn lambda(&mut self, name: Option<&str>, arities: &[(&Form, &[Form])]) -> Result<Lambda> {
        self.scopes.push(FnScope::default());
        let result = self.lambda_arities(name, arities);
        let scope = self.scopes.pop().expect("lambda scope");
        let arities = result?;
        let params_text = arities_text(
            arities
                .iter()
                .map(|(p, _)| *p)
                .collect::<Vec<_>>()
                .as_slice(),
        );
        Ok(Lambda {
            name: name.map(ArcStr::from),
            params_text: ArcStr::from(params_text),
            arities: arities.into_iter().map(|(_, a)| a).collect(),
            captures: scope.captures.into_iter().map(|(_, c)| c).collect(),
        })
    }

    fn lambda_arities<'f>(
        &mut self,
        name: Option<&str>,
        arities: &[(&'f Form, &[Form])],
    ) -> Result<Vec<(&'f Form, Arity)>> {
        let mut out = Vec::with_capacity(arities.len());
        for (params_form, body) in arities {
            let params = match &params_form.kind {
                FormKind::Vector(p) => p,
                _ => {
                    return Err(Error::validation(
                        "`fn` parameters must be a vector, like `(fn [x] ...)`",
                    )
                    .with_span(params_form.span))
                }
            };
            {
                let scope = self.scope();
                scope.locals.clear();
                scope.next_slot = 0;
                scope.frame_size = 0;
            }
            let self_slot = name.map(|n| self.declare(n));
            {
                let scope = self.scope();
                scope.self_slot = self_slot;
                scope.self_used = false;
            }
            let (fixed, rest) = destructure::split_rest(params, "parameter vector")?;
            let direct = rest.is_none();
            let mut patterns = Vec::with_capacity(fixed.len());
            for (i, p) in fixed.iter().enumerate() {
                patterns.push(self.parameter(p, i, direct)?);
            }
            let rest = rest.map(|r| self.pattern(r)).transpose()?;
            let target = RecurTarget::of(patterns.iter().chain(rest.as_ref()));
            let saved = self.scope().recur.replace(target);
            let body = self.body(body, true);
            self.scope().recur = saved;
            let body = body?;
            let frame_size = self.scope().frame_size;
            let self_slot = self_slot.filter(|_| self.scope().self_used);
            out.push((
                *params_form,
                Arity {
                    reads_args: patterns.iter().any(|p| matches!(p, Pattern::Arg)),
                    params: patterns,
                    rest,
                    self_slot,
                    frame_size,
                    body,
                },
            ));
        }
        let mut seen = Vec::new();
        for (_, a) in &out {
            let key = (a.params.len(), a.rest.is_some());
            if seen.contains(&key) {
                return Err(Error::validation(
                    "A function cannot have two arities with the same number of parameters",
                ));
            }
            seen.push(key);
        }
        if out.iter().filter(|(_, a)| a.rest.is_some()).count() > 1 {
            return Err(Error::validation(
                "A function can have at most one variadic arity",
            ));
        }
        Ok(out)
    }

    fn lambda_expr(&mut self, lambda: Lambda) -> Expr {
        Expr::Lambda(Arc::new(lambda))
    }
}

/// A map literal of computed values: when its keys are distinct
/// constants, few enough for a small map, the key list is made once here
/// and each evaluation only computes the values (no key is hashed,
/// compared or copied at run time); otherwise an entry-by-entry build.
fn shaped_map(pairs: Vec<(Expr, Expr)>) -> Expr {
    let keys: Vec<Value> = pairs
        .iter()
        .map_while(|(k, _)| match k {
            Expr::Const(k) => Some(k.clone()),
            _ => None,
        })
        .collect();
    let distinct = || keys.iter().enumerate().all(|(i, k)| !keys[..i].contains(k));
    if keys.len() != pairs.len() || keys.len() > SMALL_MAP_LIMIT || !distinct() {
        return Expr::Map(pairs);
    }
    Expr::ShapedMap(Box::new(ShapedMap {
        shape: Shape::new(keys),
        values: pairs.into_iter().map(|(_, v)| v).collect(),
    }))
}

/// A collection of constants is itself a constant.
fn constant_or(
    exprs: Vec<Expr>,
    dynamic: impl FnOnce(Vec<Expr>) -> Expr,
    build: impl FnOnce(Vec<Value>) -> Value,
) -> Expr {
    if exprs.iter().all(|e| matches!(e, Expr::Const(_))) {
        let vals = exprs
            .into_iter()
            .map(|e| match e {
                Expr::Const(v) => v,
                _ => unreachable!("checked above"),
            })
            .collect();
        Expr::Const(build(vals))
    } else {
        dynamic(exprs)
    }
}

/// The full name of a Clojure namespace alias (`str` is `clojure.string`);
/// None for the core namespaces, whose names are registered bare.
fn canonical_namespace(ns: &str) -> Option<&'static str> {
    match ns {
        "clojure.string" | "str" | "string" => Some("clojure.string"),
        "clojure.set" | "set" => Some("clojure.set"),
        "clojure.walk" | "walk" => Some("clojure.walk"),
        _ => None,
    }
}

/// `ns/name` split at the first slash; `/` itself has no namespace.
fn split_namespace(name: &str) -> Option<(&str, &str)> {
    if name == "/" {
        return None;
    }
    let (ns, local) = name.split_once('/')?;
    (!ns.is_empty() && !local.is_empty()).then_some((ns, local))
}

/// The parameter vectors of a function as source-like text.
fn arities_text(params: &[&Form]) -> String {
    let texts: Vec<String> = params.iter().map(|p| form_text(p)).collect();
    texts.join(" ")
}

/// Print a form back as source text (for parameter display and a
/// definition's `source`): the text `pr-str` gives for the quoted form,
/// written straight from the form (every `defn` of a program is printed
/// this way, so it is on the path of every compile).
pub(crate) fn form_text(form: &Form) -> String {
    let mut out = String::new();
    write_form(&mut out, form, 0);
    out
}

fn write_form(out: &mut String, form: &Form, depth: usize) {
    if depth % 16 == 15 {
        return crate::value::deep(|| write_form_inner(out, form, depth));
    }
    write_form_inner(out, form, depth)
}

fn write_form_inner(out: &mut String, form: &Form, depth: usize) {
    let items = |out: &mut String, open: &str, items: &[Form], close: &str| {
        out.push_str(open);
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                out.push(' ');
            }
            write_form(out, item, depth + 1);
        }
        out.push_str(close);
    };
    match &form.kind {
        FormKind::Nil => out.push_str("nil"),
        FormKind::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        FormKind::Int(n) => out.push_str(&n.to_string()),
        FormKind::Float(f) => crate::value::write_float(out, *f),
        FormKind::Str(s) | FormKind::Regex(s) => crate::value::write_escaped(out, s),
        FormKind::Keyword(k) => {
            out.push(':');
            out.push_str(k);
        }
        FormKind::Symbol(s) => out.push_str(s),
        FormKind::List(forms) => items(out, "(", forms, ")"),
        FormKind::Vector(forms) => items(out, "[", forms, "]"),
        FormKind::AnonFn(forms) => items(out, "(fn (", forms, "))"),
        FormKind::Quote(inner) => items(out, "(quote ", std::slice::from_ref(inner), ")"),
        FormKind::Var(name) => {
            out.push_str("#'");
            out.push_str(name);
        }
        // Sets and maps print in their value's order, after duplicates go.
        FormKind::Set(_) | FormKind::Map(_) => out.push_str(&crate::value::pr_str(&quote(form))),
    }
}

/// The value of a quoted form.
pub(crate) fn quote(form: &Form) -> Value {
    match &form.kind {
        FormKind::Nil => Value::Nil,
        FormKind::Bool(b) => Value::Bool(*b),
        FormKind::Int(n) => Value::Int(*n),
        FormKind::Float(f) => Value::Float(*f),
        FormKind::Str(s) => Value::str(s),
        FormKind::Keyword(k) => Value::keyword(k),
        FormKind::Symbol(s) => Value::Symbol(ArcStr::from(s.as_str())),
        FormKind::List(items) => Value::list(items.iter().map(quote)),
        FormKind::AnonFn(items) => Value::list(
            std::iter::once(Value::Symbol(ArcStr::from("fn")))
                .chain(std::iter::once(Value::list(items.iter().map(quote)))),
        ),
        FormKind::Vector(items) => Value::vector(items.iter().map(quote)),
        FormKind::Set(items) => Value::set(items.iter().map(quote).collect()),
        FormKind::Map(items) => Value::map(
            items
                .chunks(2)
                .map(|kv| (quote(&kv[0]), quote(&kv[1])))
                .collect(),
        ),
        FormKind::Regex(src) => Value::str(src),
        FormKind::Quote(inner) => Value::list([Value::Symbol(ArcStr::from("quote")), quote(inner)]),
        FormKind::Var(name) => Value::Var(ArcStr::from(name.as_str())),
    }
}

/// Whether `e` can be an operand of an integer tree
/// ([`PrimCall::int_tree`]): a local, parameter, captured value or integer
/// constant, or an arithmetic call that is such a tree itself.
fn is_int_operand(e: &Expr) -> bool {
    match e {
        Expr::Local(_) | Expr::Arg(_) | Expr::Capture(_) | Expr::Const(Value::Int(_)) => true,
        Expr::Prim(call) => call.int_tree && !call.op.is_comparison(),
        _ => false,
    }
}

/// Whether `name` may be bound: not namespaced (`/` alone is the
/// division function's plain name).
fn is_plain_name(name: &str) -> bool {
    name == "/" || !name.contains('/')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The direct printer writes what printing the quoted form writes.
    #[test]
    fn form_text_is_the_printed_quoted_form() {
        let source = r#"
            (defn f [{:keys [a b] :or {a 1}} & more] (str "q\"x\n" a))
            #(+ % %2) 'sym '(1 2.5 -0.0 ##Inf ##NaN) #'var #"\d+\"" \a
            [nil true false 12 -7 1e300 :kw :ns/kw tool/x] #{1 2 3} {:a [1 {:b #{}}] "k" ()}
            #{1 2 3 4 5 6 7 8 9 10 11 12} {:a 1 :b 2 :c 3 :d 4 :e 5 :f 6 :g 7 :h 8 :i 9}
        "#;
        let forms = crate::reader::read_program(source).unwrap();
        assert!(forms.len() > 10);
        for form in &forms {
            assert_eq!(form_text(form), crate::value::pr_str(&quote(form)));
        }
    }

    /// The builtins the program's outermost expression calls, outermost
    /// first.
    fn native_calls(source: &str) -> Vec<&'static str> {
        let forms = crate::reader::read_program(source).unwrap();
        let mut expr = &analyze_program(&forms, None, None).unwrap().body;
        let mut names = Vec::new();
        while let Expr::CallNative(call) = expr {
            names.push(builtins::registry().get(call.id).name);
            match call.args.last() {
                Some(last) => expr = last,
                None => break,
            }
        }
        names
    }

    #[test]
    fn a_top_n_sort_is_one_call_of_a_builtin_that_sorts_only_the_top() {
        let by = builtins::TAKE_SORTED_BY;
        let plain = builtins::TAKE_SORTED;
        for (source, calls) in [
            ("(take 2 (sort-by - [3 1 2]))", vec![by]),
            ("(take 2 (sort-by - > [3 1 2]))", vec![by]),
            ("(take 2 (sort [3 1 2]))", vec![plain]),
            ("(first (sort-by - [3 1 2]))", vec!["first", by]),
            ("(first (sort > [3 1 2]))", vec!["first", plain]),
            ("(->> [3 1 2] (sort-by -) (take 2))", vec![by]),
            // Anything else is called as written.
            (
                "(take 2 (reverse (sort [3 1 2])))",
                vec!["take", "reverse", "sort"],
            ),
            ("(last (sort [3 1 2]))", vec!["last", "sort"]),
        ] {
            assert_eq!(native_calls(source), calls, "{source}");
        }
    }
}
