//! `describe`: a bounded summary of a value's shape (specification §8.7,
//! function reference): its type, counts, the types and examples of its
//! items or fields and, on request, of every nested path.
//!
//! Every traversal is capped (items, keys, paths, values), so a summary
//! of any input stays small; a cap that was reached is named in
//! `:caps_hit` and marks the summary `:truncated`.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use crate::eval::{EvalResult, Interp};
use crate::value::{Map, Value};

use super::core::type_error;
use super::Registry;

const MAX_DEPTH: i64 = 5;
const MAX_ROOT_ITEMS: usize = 1_000;
const MAX_MAP_KEYS: usize = 100;
const MAX_PATHS: usize = 300;
const MAX_PATH_VALUES: usize = 10_000;
const MAX_EXAMPLES: i64 = 3;
const MAX_EXAMPLE_CHARS: usize = 120;
const DISTINCT_CAP: usize = 50;

struct Options {
    depth: i64,
    paths: bool,
    sample: usize,
}

impl Options {
    fn read(v: Option<&Value>) -> Options {
        let get = |name: &str| match v {
            Some(Value::Map(m)) => m.get_flexible(&Value::keyword(name)).cloned(),
            _ => None,
        };
        let int = |name: &str, default: i64, max: i64| match get(name) {
            Some(Value::Int(n)) => n.clamp(1, max),
            _ => default,
        };
        Options {
            depth: int("depth", 1, MAX_DEPTH),
            paths: get("paths").is_some_and(|v| v.truthy()),
            sample: int("sample", MAX_EXAMPLES, MAX_EXAMPLES) as usize,
        }
    }
}

/// The type names of the summary (strings, as the specification shows
/// them: `{"map" 2}`).
fn type_name(v: &Value) -> &'static str {
    match v {
        Value::List(_) => "vector",
        Value::Symbol(_) | Value::Var(_) | Value::Reduced(_) => "unknown",
        other => other.type_name(),
    }
}

fn kw(name: &str) -> Value {
    Value::keyword(name)
}

/// Text of at most `MAX_EXAMPLE_CHARS` characters, with the full length
/// noted when cut.
fn clipped(text: &str) -> String {
    let n = text.chars().count();
    if n <= MAX_EXAMPLE_CHARS {
        return text.to_string();
    }
    let head: String = text.chars().take(MAX_EXAMPLE_CHARS).collect();
    format!("{head}...({n} chars)")
}

/// A bounded display of any value (containers and functions as text).
fn preview(v: &Value) -> String {
    let mut text = String::new();
    crate::value::write_pr_bounded(&mut text, v, MAX_EXAMPLE_CHARS * 4);
    clipped(&text)
}

/// How a map key is shown among `:keys` and in paths.
fn render_key(k: &Value) -> String {
    match k.as_str() {
        Some(s) => clipped(s),
        None => preview(k),
    }
}

/// An example as it appears in `:examples`: scalars as themselves, long
/// strings clipped, containers and functions as display text.
fn example(v: &Value) -> Value {
    match v {
        Value::Str(s) => Value::from(clipped(s)),
        Value::ShortStr(_) => v.clone(),
        Value::Nil | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Keyword(_) => {
            v.clone()
        }
        other => Value::from(preview(other)),
    }
}

fn histogram<'v>(names: impl Iterator<Item = &'v str>) -> Value {
    let mut counts: BTreeMap<&str, i64> = BTreeMap::new();
    for n in names {
        *counts.entry(n).or_default() += 1;
    }
    Value::map(
        counts
            .into_iter()
            .map(|(k, n)| (Value::str(k), Value::Int(n)))
            .collect(),
    )
}

/// Types, examples, numeric range and distinct count of some values.
fn field_summary(values: &[&Value], opts: &Options) -> Map {
    let mut out = Map::new();
    if !charge(values.len()) {
        return out;
    }
    out.insert(kw("types"), histogram(values.iter().map(|v| type_name(v))));
    let mut examples: Vec<Value> = Vec::new();
    let mut seen_examples = HashSet::new();
    for v in values {
        if examples.len() >= opts.sample {
            break;
        }
        if seen_examples.insert(preview(v)) {
            examples.push(example(v));
        }
    }
    out.insert(kw("examples"), Value::vector(examples));
    let numbers: Vec<f64> = values
        .iter()
        .filter_map(|v| match v {
            Value::Int(n) => Some(*n as f64),
            Value::Float(f) if !f.is_nan() => Some(*f),
            _ => None,
        })
        .collect();
    if !numbers.is_empty() {
        let pick = |better: fn(f64, f64) -> bool| {
            values
                .iter()
                .filter(|v| {
                    matches!(v, Value::Int(_)) || matches!(v, Value::Float(f) if !f.is_nan())
                })
                .map(|v| (*v).clone())
                .reduce(|a, b| {
                    let (x, y) = (number(&a), number(&b));
                    if better(y, x) {
                        b
                    } else {
                        a
                    }
                })
                .unwrap_or(Value::Nil)
        };
        let mut range = Map::new();
        range.insert(kw("min"), pick(|y, x| y < x));
        range.insert(kw("max"), pick(|y, x| y > x));
        out.insert(kw("range"), Value::map(range));
    }
    let mut distinct = HashSet::new();
    let mut capped = false;
    let mut any_scalar = false;
    for v in values {
        if !matches!(
            v,
            Value::Nil
                | Value::Bool(_)
                | Value::Int(_)
                | Value::Float(_)
                | Value::Str(_)
                | Value::ShortStr(_)
                | Value::Keyword(_)
        ) {
            continue;
        }
        any_scalar = true;
        let key = preview(v);
        if distinct.contains(&key) {
            continue;
        }
        if distinct.len() >= DISTINCT_CAP {
            capped = true;
            break;
        }
        distinct.insert(key);
    }
    if any_scalar {
        out.insert(kw("distinct_count"), Value::Int(distinct.len() as i64));
        if capped {
            out.insert(kw("distinct_capped"), Value::Bool(true));
        }
    }
    out
}

/// Report `items` of work to the run's meter (each may be rendered, up to
/// a few hundred bytes); false once the program must stop, and the
/// summary is then cut short (the meter's error replaces it).
fn charge(items: usize) -> bool {
    crate::meter::work(u32::try_from(items.saturating_mul(16)).unwrap_or(u32::MAX))
}

fn number(v: &Value) -> f64 {
    match v {
        Value::Int(n) => *n as f64,
        Value::Float(f) => *f,
        _ => f64::NAN,
    }
}

fn with_presence(mut summary: Map, present: usize, denominator: usize) -> Map {
    summary.insert(kw("present"), Value::Int(present as i64));
    let pct = if denominator == 0 {
        0.0
    } else {
        (present as f64 / denominator as f64 * 1000.0).round() / 10.0
    };
    summary.insert(kw("pct"), Value::Float(pct));
    summary
}

/// A map's entries in a stable order (by rendered key), at most
/// `MAX_MAP_KEYS` of them.
fn entries(m: &Map, caps: &mut BTreeSet<&'static str>) -> Vec<(Value, Value)> {
    let named = crate::meter::metered(m.iter()).map(|(k, v)| (render_key(k), (k, v)));
    first_by_name(named, caps)
        .into_iter()
        .map(|(_, (k, v))| (k.clone(), v.clone()))
        .collect()
}

/// The `MAX_MAP_KEYS` items first by name, in that order (`max_keys`
/// noted when some are left out): one metered pass over the items and a
/// partial selection, so a map of a million keys is never sorted whole.
fn first_by_name<T>(
    items: impl Iterator<Item = (String, T)>,
    caps: &mut BTreeSet<&'static str>,
) -> Vec<(String, T)> {
    let mut all: Vec<(String, T)> = items.collect();
    if crate::meter::tripped() {
        return Vec::new();
    }
    if all.len() > MAX_MAP_KEYS {
        caps.insert("max_keys");
        all.select_nth_unstable_by(MAX_MAP_KEYS, |a, b| a.0.cmp(&b.0));
        all.truncate(MAX_MAP_KEYS);
    }
    all.sort_by(|a, b| a.0.cmp(&b.0));
    all
}

fn root(value: &Value, opts: &Options, caps: &mut BTreeSet<&'static str>) -> Map {
    let mut out = Map::new();
    match value {
        Value::Map(m) => {
            let entries = entries(m, caps);
            out.insert(kw("type"), Value::str("map"));
            out.insert(kw("count"), Value::Int(m.len() as i64));
            out.insert(
                kw("key_types"),
                histogram(entries.iter().map(|(k, _)| type_name(k))),
            );
            let keys: Map = entries
                .iter()
                .map(|(k, v)| {
                    (
                        Value::from(render_key(k)),
                        Value::map(field_summary(&[v], opts)),
                    )
                })
                .collect();
            out.insert(kw("keys"), Value::map(keys));
        }
        Value::Vector(items) | Value::List(items) => {
            let capped = items.len() > MAX_ROOT_ITEMS;
            let items: Vec<&Value> = items.iter().take(MAX_ROOT_ITEMS).collect();
            out.insert(kw("type"), Value::str("vector"));
            out.insert(kw("count"), Value::Int(items.len() as i64));
            out.insert(kw("scanned"), Value::Int(items.len() as i64));
            out.insert(
                kw("item_types"),
                histogram(items.iter().map(|v| type_name(v))),
            );
            if capped {
                caps.insert("max_items");
                out.insert(kw("count_capped"), Value::Bool(true));
            }
            // Fields of the maps among the items: in how many items each
            // key is present, and a summary of its values.
            let mut fields: BTreeMap<String, (Value, Vec<&Value>, usize)> = BTreeMap::new();
            let mut key_types = Vec::new();
            let mut any_map = false;
            for item in &items {
                let Value::Map(m) = item else { continue };
                any_map = true;
                for (k, v) in m.iter().take(MAX_MAP_KEYS) {
                    let name = render_key(k);
                    if !fields.contains_key(&name) && fields.len() >= MAX_MAP_KEYS {
                        caps.insert("max_keys");
                        continue;
                    }
                    key_types.push(type_name(k));
                    let field = fields
                        .entry(name)
                        .or_insert_with(|| (k.clone(), Vec::new(), 0));
                    field.1.push(v);
                    field.2 += 1;
                }
            }
            if any_map {
                out.insert(kw("key_types"), histogram(key_types.into_iter()));
                let keys: Map = fields
                    .into_iter()
                    .map(|(name, (_, values, present))| {
                        let summary =
                            with_presence(field_summary(&values, opts), present, items.len());
                        (Value::from(name), Value::map(summary))
                    })
                    .collect();
                out.insert(kw("keys"), Value::map(keys));
            }
        }
        Value::Set(s) => {
            let items: Vec<&Value> = s.iter().take(MAX_ROOT_ITEMS).collect();
            if s.len() > MAX_ROOT_ITEMS {
                caps.insert("max_items");
            }
            out.insert(kw("type"), Value::str("set"));
            out.insert(kw("count"), Value::Int(s.len() as i64));
            out.insert(kw("scanned"), Value::Int(items.len() as i64));
            out.insert(
                kw("item_types"),
                histogram(items.iter().map(|v| type_name(v))),
            );
        }
        scalar => {
            out = field_summary(&[scalar], opts);
            out.insert(kw("type"), Value::str(type_name(scalar)));
            out.insert(kw("sample"), example(scalar));
        }
    }
    out
}

/// Values found under each dotted path (`user.email`), with the index of
/// the root item each came from.
struct Paths<'v> {
    found: BTreeMap<String, Vec<(usize, &'v Value)>>,
    values: usize,
    max_depth: i64,
}

/// Where a traversal is: map depth, the root item it came from, and how
/// many vectors deep it is.
#[derive(Clone, Copy)]
struct Place {
    depth: i64,
    root: usize,
    list_depth: i64,
}

impl<'v> Paths<'v> {
    fn collect(
        &mut self,
        value: &'v Value,
        prefix: &str,
        at: Place,
        caps: &mut BTreeSet<&'static str>,
    ) {
        match value {
            Value::Map(m) if at.depth < self.max_depth => {
                let named = crate::meter::metered(m.iter()).map(|(k, v)| (path_part(k), v));
                let keys = first_by_name(named, caps);
                for (part, child) in keys {
                    let path = if prefix.is_empty() {
                        part
                    } else {
                        format!("{prefix}.{part}")
                    };
                    if !self.found.contains_key(&path) && self.found.len() >= MAX_PATHS {
                        caps.insert("max_paths");
                        continue;
                    }
                    if self.values >= MAX_PATH_VALUES {
                        caps.insert("max_path_values");
                        continue;
                    }
                    self.values += 1;
                    self.found
                        .entry(path.clone())
                        .or_default()
                        .push((at.root, child));
                    let deeper = Place {
                        depth: at.depth + 1,
                        ..at
                    };
                    self.collect(child, &path, deeper, caps);
                }
            }
            Value::Vector(items) | Value::List(items)
                if !prefix.is_empty() && at.depth < self.max_depth =>
            {
                if at.list_depth >= MAX_DEPTH {
                    if !items.is_empty() {
                        caps.insert("max_depth");
                    }
                    return;
                }
                if items.len() > MAX_ROOT_ITEMS {
                    caps.insert("max_items");
                }
                let inside = Place {
                    list_depth: at.list_depth + 1,
                    ..at
                };
                for item in items.iter().take(MAX_ROOT_ITEMS) {
                    self.collect(item, prefix, inside, caps);
                }
            }
            _ => {}
        }
    }
}

/// A path segment: the rendered key with `\` and `.` escaped.
fn path_part(k: &Value) -> String {
    render_key(k).replace('\\', "\\\\").replace('.', "\\.")
}

fn paths(value: &Value, opts: &Options, caps: &mut BTreeSet<&'static str>) -> Value {
    let mut p = Paths {
        found: BTreeMap::new(),
        values: 0,
        max_depth: opts.depth,
    };
    let top = |root| Place {
        depth: 0,
        root,
        list_depth: 0,
    };
    let denominator = match value {
        Value::Vector(items) | Value::List(items) => {
            if items.len() > MAX_ROOT_ITEMS {
                caps.insert("max_items");
            }
            for (i, item) in items.iter().take(MAX_ROOT_ITEMS).enumerate() {
                p.collect(item, "", top(i), caps);
            }
            items.len().min(MAX_ROOT_ITEMS)
        }
        other => {
            p.collect(other, "", top(0), caps);
            1
        }
    };
    let out: Map = p
        .found
        .into_iter()
        .map(|(path, found)| {
            let values: Vec<&Value> = found.iter().map(|(_, v)| *v).collect();
            let present = found.iter().map(|(i, _)| *i).collect::<HashSet<_>>().len();
            let mut summary = with_presence(field_summary(&values, opts), present, denominator);
            if values.len() > present {
                summary.insert(kw("value_count"), Value::Int(values.len() as i64));
            }
            (Value::from(path), Value::map(summary))
        })
        .collect();
    Value::map(out)
}

fn describe(_: &mut Interp<'_>, args: &[Value]) -> EvalResult {
    if let Some(opts) = args.get(1) {
        if !matches!(opts, Value::Map(_) | Value::Nil) {
            return Err(type_error("describe", "an options map", opts).into());
        }
    }
    let opts = Options::read(args.get(1));
    let mut caps = BTreeSet::new();
    let mut out = root(&args[0], &opts, &mut caps);
    if opts.paths {
        out.insert(kw("paths"), paths(&args[0], &opts, &mut caps));
    }
    if !caps.is_empty() {
        out.insert(kw("truncated"), Value::Bool(true));
        out.insert(
            kw("caps_hit"),
            Value::vector(caps.into_iter().map(Value::str)),
        );
    }
    Ok(Value::map(out))
}

pub(super) fn register(r: &mut Registry) {
    r.add(
        "describe",
        "[x opts?]",
        1,
        2,
        "A bounded summary of a value's shape: type, count, item and key types, per-key presence, examples, numeric ranges and distinct counts; `opts` `{:paths true :depth 2 :sample 3}` adds every nested path. `(:item_types (describe [1 \"a\" 2]))` => `{\"integer\" 2, \"string\" 1}`.",
        describe,
    );
}
