//! Introspection (specification §9.9): `doc`, `apropos`, `dir`,
//! `source` and `export-meta`, the same answers in programs and in the
//! REPL (`:doc`, `:apropos`).
//!
//! The documentation comes from the builtin registry and from the table
//! of special forms below, each with a usage line, a description and an
//! example; user definitions (the `user/` namespace, a prelude included)
//! are this interpreter's "exports": `dir` lists them, `source` prints the
//! form that defined them. `tool/` and `data/` are never enumerated.

use std::fmt::Write as _;

use crate::eval::{EvalResult, Globals, Interp};
use crate::value::{ArcStr, Map, Value};

use super::core::type_error;
use super::{registry, Registry};

/// One special form: name, usage, what it does, and an example with its
/// result (`None` when the example ends the program, as `fail` does).
pub struct SpecialFormDoc {
    pub name: &'static str,
    pub usage: &'static str,
    pub text: &'static str,
    pub example: &'static str,
    pub result: Option<&'static str>,
}

const fn form(
    name: &'static str,
    usage: &'static str,
    text: &'static str,
    example: &'static str,
    result: Option<&'static str>,
) -> SpecialFormDoc {
    SpecialFormDoc {
        name,
        usage,
        text,
        example,
        result,
    }
}

/// Every special form a program can use (and the namespace forms).
pub const SPECIAL_FORMS: &[SpecialFormDoc] = &[
    form("def", "(def name doc? value)", "Define `name` in user/; it persists across turns and shadows a builtin of the same name. Returns the var `#'name`.", "(def x 42) (inc x)", Some("43")),
    form("defonce", "(defonce name doc? value)", "Like `def`, but keeps an existing definition (the value is then not evaluated).", "(defonce n 1) (defonce n 2) n", Some("1")),
    form("defn", "(defn name doc? [params] body...)", "Define a function in user/; also multi-arity `(defn f ([x] ...) ([x y] ...))`; shadows a builtin of the same name.", "(defn twice [x] (* 2 x)) (twice 21)", Some("42")),
    form("defn-", "(defn- name [params] body...)", "Like `defn`.", "(defn- half [x] (/ x 2)) (half 5)", Some("2.5")),
    form("fn", "(fn name? [params] body...)", "A function value; `#(* % 2)` is the short form. Parameters destructure, `& rest` collects the rest, `& {:keys [a]}` takes keyword arguments.", "((fn [x & {:keys [by]}] (* x by)) 3 :by 2)", Some("6")),
    form("let", "(let [name value ...] body...)", "Local bindings, with destructuring; the body is an implicit `do`.", "(let [[a b] [1 2] {:keys [c]} {:c 3}] (+ a b c))", Some("6")),
    form("loop", "(loop [name init ...] body...)", "A loop whose body calls `recur` with new values.", "(loop [i 0 acc 0] (if (< i 5) (recur (inc i) (+ acc i)) acc))", Some("10")),
    form("recur", "(recur args...)", "Jump back to the enclosing `loop` or `fn`, in tail position.", "((fn [n acc] (if (zero? n) acc (recur (dec n) (* acc n)))) 5 1)", Some("120")),
    form("if", "(if test then else?)", "`then` when `test` is truthy (not nil or false), else `else` (nil when absent).", "(if (> 5 3) \"bigger\" \"smaller\")", Some("\"bigger\"")),
    form("if-not", "(if-not test then else?)", "`if` with the test negated.", "(if-not (empty? [1]) :full :empty)", Some(":full")),
    form("when", "(when test body...)", "The body when `test` is truthy, else nil.", "(when (pos? 3) :yes)", Some(":yes")),
    form("when-not", "(when-not test body...)", "The body when `test` is falsy, else nil.", "(when-not (pos? 3) :yes)", Some("nil")),
    form("cond", "(cond test expr ... :else expr)", "The expr of the first truthy test; nil when none is.", "(cond (> 5 10) :big (> 5 1) :medium :else :small)", Some(":medium")),
    form("condp", "(condp pred expr test result ... default?)", "The first result whose `(pred test expr)` is truthy; nil when none is and there is no default.", "(condp = 2 1 :one 2 :two :other)", Some(":two")),
    form("case", "(case expr const result ... default?)", "The result whose constant (or list of constants) equals `expr`; nil when none does and there is no default.", "(case :b :a 1 (:b :c) 2 3)", Some("2")),
    form("if-let", "(if-let [name test] then else?)", "Bind `test` and run `then` when it is truthy, else `else`.", "(if-let [x (first [7])] (* x 2) :none)", Some("14")),
    form("when-let", "(when-let [name test] body...)", "Bind `test` and run the body when it is truthy.", "(when-let [x (get {:a 1} :a)] (inc x))", Some("2")),
    form("if-some", "(if-some [name test] then else?)", "Like `if-let`, testing for non-nil (`false` binds).", "(if-some [x false] [x] :none)", Some("[false]")),
    form("when-some", "(when-some [name test] body...)", "Like `when-let`, testing for non-nil.", "(when-some [x 0] (inc x))", Some("1")),
    form("when-first", "(when-first [name coll] body...)", "Bind the first item of a non-empty `coll` and run the body; nil for an empty one.", "(when-first [x [3 4]] (* x 10))", Some("30")),
    form("do", "(do exprs...)", "Evaluate in order; the value of the last (nil for none).", "(do (println \"hi\") 2)", Some("2")),
    form("and", "(and exprs...)", "The first falsy value, or the last; stops at the first falsy one.", "(and 1 :x nil 3)", Some("nil")),
    form("or", "(or exprs...)", "The first truthy value, or the last; stops at the first truthy one.", "(or nil false :x)", Some(":x")),
    form("quote", "(quote form) or 'form", "The form itself, unevaluated.", "(quote (1 2))", Some("(1 2)")),
    form("var", "(var name) or #'name", "The value of `name`, as the plain symbol gives it (there are no first-class vars).", "(def x 5) #'x", Some("5")),
    form("->", "(-> x forms...)", "Thread `x` as the first argument through the forms.", "(-> {:a 1} (assoc :b 2) (get :b))", Some("2")),
    form("->>", "(->> x forms...)", "Thread `x` as the last argument through the forms.", "(->> [1 2 3] (map inc) (filter even?))", Some("[2 4]")),
    form("as->", "(as-> x name forms...)", "Thread `x` through the forms as `name`, in any argument position.", "(as-> 1 x (+ x 1) (* x 10))", Some("20")),
    form("cond->", "(cond-> x test form ...)", "Thread `x` (first argument) through each form whose test is truthy.", "(cond-> 1 true inc false dec)", Some("2")),
    form("cond->>", "(cond->> x test form ...)", "`cond->` threading as the last argument.", "(cond->> 10 true (- 5))", Some("-5")),
    form("some->", "(some-> x forms...)", "`->` that stops at nil.", "(some-> {:a nil} :a inc)", Some("nil")),
    form("some->>", "(some->> x forms...)", "`->>` that stops at nil.", "(some->> [1 2] (map inc))", Some("[2 3]")),
    form("where", "(where path op? value?)", "A predicate on a map field (an extension kept from the 6da99ff0 specification).", "(filter (where :age > 18) [{:age 20} {:age 10}])", Some("[{:age 20}]")),
    form("for", "(for [x coll :when test :let [...] :while test] body...)", "A comprehension: the last body value for each combination of bindings, as a vector.", "(for [x [1 2 3] :when (odd? x)] (* x 10))", Some("[10 30]")),
    form("doseq", "(doseq [x coll] body...)", "Run the body for each item (for `println`); nil.", "(doseq [x [1 2]] (println x))", Some("nil")),
    form("dotimes", "(dotimes [i n] body...)", "Run the body n times with i from 0; nil.", "(dotimes [i 2] (println i))", Some("nil")),
    form("return", "(return value)", "End the program (and the mission) successfully with `value`.", "(do (return 42) 0)", Some("42")),
    form("fail", "(fail reason)", "End the program (and the mission) unsuccessfully with `reason`.", "(fail \"no data\")", None),
    form("call", "(call \"tool-name\" args...)", "Call a tool by a (computed) name.", "(call \"no-such-tool\")", None),
    form("comment", "(comment ...)", "Ignored; nil.", "(comment (this is not run))", Some("nil")),
    form("require", "(require '[clojure.string :as str])", "Make `str/join` and the like name `clojure.string/join` for the rest of the program; every function is also available without a prefix.", "(require '[clojure.string :as s]) (s/upper-case \"a\")", Some("\"A\"")),
    form("ns", "(ns name (:require [clojure.string :as str]))", "The name is ignored; `:require` clauses work as `require` does.", "(ns my.app (:require [clojure.string :as s])) (s/join \"-\" [1 2])", Some("\"1-2\"")),
];

/// The entry of a special form.
pub fn special_form(name: &str) -> Option<&'static SpecialFormDoc> {
    SPECIAL_FORMS.iter().find(|f| f.name == name)
}

/// The documentation of a builtin or special form as `doc` prints it: the
/// signature line, then the description with an example.
pub fn doc_text(name: &str) -> Option<String> {
    let r = registry();
    if let Some(doc) = r.lookup(name).filter(|b| b.listed()).and(r.doc(name)) {
        return Some(doc);
    }
    if let Some((ns, bare)) = name.split_once('/') {
        if crate::eval::CLOJURE_NAMESPACES.contains(&ns) {
            if let Some(doc) = r.lookup(bare).filter(|b| b.listed()).and(r.doc(bare)) {
                return Some(doc);
            }
        }
    }
    special_form(name).map(|f| {
        let mut out = format!("{}   (special form)\n  {}", f.usage, f.text);
        match f.result {
            Some(result) => {
                let _ = write!(out, " `{}` => `{result}`.", f.example);
            }
            None => {
                let _ = write!(out, " `{}`.", f.example);
            }
        }
        out
    })
}

/// The documentation of a user definition: `(name params)` or its type,
/// then the docstring.
pub fn definition_doc(globals: &Globals, name: &str) -> Option<String> {
    let name = name.strip_prefix("user/").unwrap_or(name);
    let def = globals.get(name)?;
    let mut out = match fn_params(&def.value) {
        Some(params) => format!("({name} {params})"),
        None => format!("{name} ; = {}", def.value.type_name()),
    };
    out.push_str("   (user/)");
    if let Some(doc) = &def.doc {
        let _ = write!(out, "\n  {doc}");
    }
    Some(out)
}

/// The parameter vectors of a user function, as written.
pub fn fn_params(v: &Value) -> Option<String> {
    match v {
        Value::Fn(f) => f.params().map(str::to_string),
        _ => None,
    }
}

/// Every builtin, special form and user definition whose name, signature
/// or documentation contains `query` (case-insensitive), sorted, each
/// name once. A blank query matches nothing.
pub fn apropos(query: &str, globals: &Globals) -> Vec<String> {
    let query = query.trim().to_lowercase();
    if query.is_empty() {
        return Vec::new();
    }
    let hit = |texts: &[&str]| texts.iter().any(|t| t.to_lowercase().contains(&query));
    let r = registry();
    let mut names: Vec<String> = Vec::new();
    for b in r.iter().filter(|b| b.listed()) {
        if hit(&[b.name, b.params, b.doc]) {
            names.push(b.name.to_string());
        }
    }
    for alias in r.names() {
        if alias.to_lowercase().contains(&query) {
            if let Some(b) = r.lookup(alias).filter(|b| b.listed()) {
                names.push(b.name.to_string());
            }
        }
    }
    for f in SPECIAL_FORMS {
        if hit(&[f.name, f.usage, f.text]) {
            names.push(f.name.to_string());
        }
    }
    for (name, def) in globals.iter() {
        if hit(&[name, def.doc.as_deref().unwrap_or("")]) {
            names.push(format!("user/{name}"));
        }
    }
    names.sort_unstable();
    names.dedup();
    names
}

/// The name a reference argument gives: a string, a keyword, a symbol
/// (the analyzer turns `(doc map)` into `(doc "map")`), or a builtin
/// function value.
fn reference(who: &str, v: &Value) -> Result<ArcStr, crate::error::Error> {
    match v {
        Value::Str(s) | Value::Symbol(s) | Value::Keyword(s) => Ok(s.clone()),
        Value::ShortStr(s) => Ok(ArcStr::from(s.as_str())),
        Value::Native(n) => Ok(ArcStr::from(n.name)),
        other => Err(type_error(who, "a name (a string or symbol)", other)),
    }
}

fn doc(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let name = reference("doc", &args[0])?;
    let text = definition_doc(&interp.globals, &name)
        .or_else(|| doc_text(&name))
        .unwrap_or_else(|| format!("No documentation for `{name}`"));
    for line in text.lines() {
        interp.print_line(line.to_string())?;
    }
    Ok(Value::Nil)
}

fn apropos_fn(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let query = reference("apropos", &args[0])?;
    let names = apropos(&query, &interp.globals);
    Ok(Value::vector(names.into_iter().map(Value::from)))
}

/// `(dir)`: the namespaces holding definitions (`["user"]` once anything
/// is defined); `(dir user)`: the definitions of `user`, as `user/name`.
fn dir(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let mut refs: Vec<String> = match args.first() {
        None => {
            if interp.globals.is_empty() {
                Vec::new()
            } else {
                vec!["user".to_string()]
            }
        }
        Some(ns) => {
            if reference("dir", ns)?.as_str() == "user" {
                interp
                    .globals
                    .names()
                    .map(|n| format!("user/{n}"))
                    .collect()
            } else {
                Vec::new()
            }
        }
    };
    refs.sort_unstable();
    Ok(Value::vector(refs.into_iter().map(Value::from)))
}

/// `(source name)`: prints the form that defined a user definition.
fn source(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let name = reference("source", &args[0])?;
    let bare = name.strip_prefix("user/").unwrap_or(&name);
    let text = match interp.globals.get(bare).and_then(|d| d.source.clone()) {
        Some(form) => form.to_string(),
        None => format!("no source available for `{name}`"),
    };
    for line in text.lines() {
        interp.print_line(line.to_string())?;
    }
    Ok(Value::Nil)
}

/// `(export-meta "user/f")`: a user definition's description as data, or
/// nil.
fn export_meta(interp: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    let name = reference("export-meta", &args[0])?;
    let bare = name.strip_prefix("user/").unwrap_or(&name);
    let Some(def) = interp.globals.get(bare) else {
        return Ok(Value::Nil);
    };
    let kw = Value::keyword;
    let mut m = Map::new();
    m.insert(kw("ref"), Value::from(format!("user/{bare}")));
    m.insert(kw("namespace"), Value::str("user"));
    m.insert(kw("symbol"), Value::str(bare));
    let params = fn_params(&def.value);
    m.insert(
        kw("kind"),
        Value::str(if params.is_some() {
            "function"
        } else {
            "value"
        }),
    );
    m.insert(
        kw("call"),
        match &params {
            Some(p) => {
                // One arity `[x y]` reads as the call `(f x y)`.
                let single = p
                    .strip_prefix('[')
                    .and_then(|p| p.strip_suffix(']'))
                    .filter(|p| !p.contains('[') && !p.contains(']'));
                Value::from(match single {
                    Some("") => format!("({bare})"),
                    Some(params) => format!("({bare} {params})"),
                    None => format!("({bare} {p})"),
                })
            }
            None => Value::str(bare),
        },
    );
    m.insert(
        kw("doc"),
        def.doc.as_ref().map_or(Value::Nil, Value::shared_str),
    );
    m.insert(kw("visibility"), Value::str("public"));
    Ok(Value::map(m))
}

pub(super) fn register(r: &mut Registry) {
    r.add("doc", "[name]", 1, 1, "Print the documentation of a builtin, special form or user definition (signature, description, example); returns nil. `(doc map)` also takes a string. `(doc inc)` prints `(inc x)` and its description.", doc);
    r.add("apropos", "[text]", 1, 1, "The names of the builtins, special forms and user definitions whose name or documentation contains `text` (any case), sorted. `(apropos \"upper\")` gives a vector holding `\"upper-case\"`.", apropos_fn);
    r.add("dir", "[ns?]", 0, 1, "`(dir)`: the namespaces holding definitions (`[\"user\"]` once something is defined); `(dir user)`: its definitions as `user/name`. `(dir)` => `[]`.", dir);
    r.add("source", "[name]", 1, 1, "Print the form that defined a user definition; returns nil. `(source f)` prints `(defn f [x] ...)`.", source);
    r.add("export-meta", "[name]", 1, 1, "A user definition described as data (`:ref`, `:kind`, `:call`, `:doc`, ...), or nil. `(export-meta \"user/nothing\")` => `nil`.", export_meta);
}
