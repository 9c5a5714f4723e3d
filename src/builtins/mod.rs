//! The core function library: one table of builtins (name, arity, doc
//! with an example), filled by one `register` function per area.
//!
//! The same docs feed `:doc` in the REPL and the language reference in
//! the system prompt.

mod bitwise;
mod bounded;
mod collections;
mod combinators;
mod core;
mod dates;
mod describe;
mod format;
mod interop;
pub mod introspect;
mod java;
mod json;
mod maps;
mod math;
mod merge_sort;
mod predicates;
mod reference;
mod regex;
mod regex_ascii;
mod regex_cost;
pub(crate) mod regex_direct;
mod sequences;
mod sets;
mod strings;
mod unsupported;
mod walk;

/// Name tables hash with foldhash: they are looked up for every symbol a
/// program uses.
type HashMap<K, V> = std::collections::HashMap<K, V, crate::value::FixedState>;
use std::sync::OnceLock;

use crate::error::{Error, ErrorKind};
use crate::eval::{EvalResult, Interp};
use crate::value::{NativeRef, Value};

pub(crate) use self::core::{get, get_found, seq_items, seq_view};
pub(crate) use collections::{ALIAS, TAKE_RANGE, TAKE_SORTED, TAKE_SORTED_BY};
pub(crate) use combinators::call_combinator;
pub(crate) use regex::compile_regex;

/// The signature every builtin implements.
pub(crate) type NativeFn = fn(&mut Interp<'_>, &[Value]) -> EvalResult;

/// One builtin function.
pub struct Builtin {
    pub name: &'static str,
    /// The parameter list as shown in docs, e.g. `[f coll]`.
    pub params: &'static str,
    pub min_args: usize,
    pub max_args: Option<usize>,
    /// What it does, with a PTC-Lisp example.
    pub doc: &'static str,
    /// The area it belongs to (`collections`, `strings`, ...).
    pub group: &'static str,
    pub(crate) func: NativeFn,
    pub(crate) native: NativeRef,
}

impl Builtin {
    /// Whether docs, completion and the prompt list it: not a refused
    /// Clojure function (group `unsupported`) nor one the analyzer calls
    /// by a name programs cannot write (group `internal`).
    pub fn listed(&self) -> bool {
        self.group != "unsupported" && self.group != "internal"
    }

    /// `2`, `1 or 2`, `at least 1`.
    pub fn arity_text(&self) -> String {
        match self.max_args {
            Some(max) if max == self.min_args => max.to_string(),
            Some(max) if max == self.min_args + 1 => format!("{} or {max}", self.min_args),
            Some(max) => format!("{} to {max}", self.min_args),
            None => format!("at least {}", self.min_args),
        }
    }
}

/// Marks a variadic builtin in `Registry::add`.
pub(crate) const MANY: usize = usize::MAX;

/// All builtins and named constants.
pub struct Registry {
    builtins: Vec<Builtin>,
    by_name: HashMap<&'static str, u16>,
    constants: HashMap<&'static str, Value>,
    group: &'static str,
}

impl Registry {
    fn new() -> Self {
        Registry {
            builtins: Vec::with_capacity(400),
            by_name: HashMap::with_capacity_and_hasher(512, Default::default()),
            constants: HashMap::default(),
            group: "core",
        }
    }

    /// Register a builtin. `max` is `MANY` for variadic functions.
    pub(crate) fn add(
        &mut self,
        name: &'static str,
        params: &'static str,
        min: usize,
        max: usize,
        doc: &'static str,
        func: NativeFn,
    ) {
        let id = u16::try_from(self.builtins.len()).expect("fewer than 65536 builtins");
        let previous = self.by_name.insert(name, id);
        debug_assert!(previous.is_none(), "builtin `{name}` registered twice");
        self.builtins.push(Builtin {
            name,
            params,
            min_args: min,
            max_args: (max != MANY).then_some(max),
            doc,
            group: self.group,
            func,
            native: NativeRef { name, id },
        });
    }

    /// Another name for an already registered builtin.
    pub(crate) fn alias(&mut self, alias: &'static str, target: &'static str) {
        let id = self.by_name[target];
        self.by_name.insert(alias, id);
    }

    pub(crate) fn constant(&mut self, name: &'static str, value: Value) {
        self.constants.insert(name, value);
    }

    pub fn lookup(&self, name: &str) -> Option<&Builtin> {
        self.by_name
            .get(name)
            .map(|id| &self.builtins[*id as usize])
    }

    pub(crate) fn get(&self, id: u16) -> &Builtin {
        &self.builtins[id as usize]
    }

    /// The value of a named constant such as `Double/NaN`.
    pub fn constant_value(&self, name: &str) -> Option<Value> {
        self.constants.get(name).cloned()
    }

    pub(crate) fn constant_lookup(&self, name: &str) -> Option<Value> {
        self.constant_value(name)
    }

    /// Every name a builtin can be called by (aliases included).
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.by_name.keys().copied()
    }

    /// The builtins in registration order (no aliases).
    pub fn iter(&self) -> impl Iterator<Item = &Builtin> {
        self.builtins.iter()
    }

    /// The error for `ns/name` when `name` is not a builtin.
    pub(crate) fn not_available(&self, ns: &str, name: &str) -> Error {
        let group = match ns {
            "clojure.string" | "str" | "string" => "strings",
            "clojure.set" | "set" => "sets",
            "clojure.walk" | "walk" => "walk",
            _ => "",
        };
        let mut err = Error::new(
            ErrorKind::Undefined,
            format!("`{ns}/{name}` is not available"),
        );
        let near = crate::error::suggest(name, self.names());
        if let Some(n) = near.first() {
            err = err.with_hint(format!("did you mean `{n}`?"));
        } else if !group.is_empty() {
            // Namespace-registered names (`clojure.set/select`) are shown
            // by their local name, as the model would write them.
            let mut names: Vec<&str> = self
                .builtins
                .iter()
                .filter(|b| b.group == group)
                .map(|b| b.name.rsplit('/').next().unwrap_or(b.name))
                .collect();
            names.sort_unstable();
            err = err.with_hint(format!("available {group} functions: {}", names.join(", ")));
        }
        err
    }

    /// The error for an unknown Java-style name: `.method` (a method
    /// call) or `Class.` (a constructor); None for any other name.
    pub(crate) fn interop_error(&self, name: &str) -> Option<Error> {
        let (what, matches): (&str, fn(&str) -> bool) = if name.len() > 1 && name.starts_with('.') {
            ("method", |n| n.starts_with('.'))
        } else if name.len() > 1 && name.ends_with('.') {
            ("constructor", |n| n.ends_with('.') && n.len() > 1)
        } else {
            return None;
        };
        let mut names: Vec<&str> = self
            .by_name
            .keys()
            .copied()
            .filter(|n| matches(n))
            .collect();
        names.sort_unstable();
        let err = Error::new(
            ErrorKind::Undefined,
            format!("The Java {what} `{name}` is not supported"),
        );
        let supported = format!("supported {what}s: {}", names.join(", "));
        Some(
            match crate::error::suggest(name, names.iter().copied()).first() {
                Some(near) => err.with_hint(format!("did you mean `{near}`? {supported}")),
                None => err.with_hint(supported),
            },
        )
    }

    /// A hint for an unknown `Namespace/name` (Java interop and such).
    pub(crate) fn interop_hint(&self, ns: &str) -> String {
        let mut names: Vec<&str> = self
            .by_name
            .keys()
            .chain(self.constants.keys())
            .copied()
            .filter(|n| n.starts_with(ns) && n[ns.len()..].starts_with('/'))
            .collect();
        names.sort_unstable();
        if names.is_empty() {
            "only the `tool/`, `data/` and `user/` namespaces and the Clojure core namespaces are available".to_string()
        } else {
            format!("available: {}", names.join(", "))
        }
    }
}

/// The process-wide registry, built on first use.
pub fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let mut r = Registry::new();
        r.group = "math";
        math::register(&mut r);
        bitwise::register(&mut r);
        r.group = "java";
        java::register(&mut r);
        interop::register(&mut r);
        r.group = "predicates";
        predicates::register(&mut r);
        r.group = "collections";
        collections::register(&mut r);
        sequences::register(&mut r);
        r.group = "maps";
        maps::register(&mut r);
        r.group = "sets";
        sets::register(&mut r);
        r.group = "walk";
        walk::register(&mut r);
        r.group = "strings";
        strings::register(&mut r);
        format::register(&mut r);
        r.group = "regex";
        regex::register(&mut r);
        r.group = "dates";
        dates::register(&mut r);
        r.group = "json";
        json::register(&mut r);
        r.group = "functions";
        combinators::register(&mut r);
        r.group = "core";
        describe::register(&mut r);
        introspect::register(&mut r);
        r.group = "core";
        self::core::register(&mut r);
        // Refused names, so that a docs listing can leave them out.
        r.group = "unsupported";
        unsupported::register(&mut r);
        r.group = "internal";
        collections::register_internal(&mut r);
        r
    })
}
