//! Destructuring: binding forms (`x`, `[a & rest :as all]`,
//! `{:keys [a] :or {a 1} :as m}`) to patterns with frame slots.

use crate::error::{Error, Result};
use crate::reader::{Form, FormKind};
use crate::value::Value;

use super::super::pattern::{MapEntry, Pattern};
use super::Analyzer;

/// Split a parameter vector at `&`: the fixed part and the rest binding.
pub(super) fn split_rest<'f>(
    items: &'f [Form],
    what: &str,
) -> Result<(&'f [Form], Option<&'f Form>)> {
    match items.iter().position(|f| f.as_symbol() == Some("&")) {
        None => Ok((items, None)),
        Some(i) if i + 2 == items.len() => Ok((&items[..i], Some(&items[i + 1]))),
        Some(i) => Err(Error::validation(format!(
            "`&` in a {what} must be followed by exactly one binding"
        ))
        .with_span(items[i].span)),
    }
}

impl Analyzer {
    /// Analyze a binding form, declaring its names as locals.
    pub(super) fn pattern(&mut self, form: &Form) -> Result<Pattern> {
        match &form.kind {
            FormKind::Symbol(name) => {
                if !super::is_plain_name(name) {
                    return Err(Error::validation(format!(
                        "Cannot bind the namespaced name `{name}`; use a plain name"
                    ))
                    .with_span(form.span));
                }
                Ok(Pattern::Bind(self.declare(name)))
            }
            FormKind::Vector(items) => self.seq_pattern(items),
            FormKind::Map(items) => self.map_pattern(items),
            _ => Err(Error::validation(format!(
                "Cannot bind to `{}`: expected a name, a vector or a map pattern",
                super::form_text(form)
            ))
            .with_span(form.span)),
        }
    }

    fn seq_pattern(&mut self, items: &[Form]) -> Result<Pattern> {
        let (items, all) = match items {
            [rest @ .., kw, name] if matches!(&kw.kind, FormKind::Keyword(k) if k == "as") => {
                (rest, Some(name))
            }
            _ => (items, None),
        };
        let (fixed, rest) = split_rest(items, "binding vector")?;
        let mut patterns = Vec::with_capacity(fixed.len());
        for f in fixed {
            patterns.push(self.pattern(f)?);
        }
        let rest = rest.map(|r| self.pattern(r)).transpose()?.map(Box::new);
        let all = all.map(|f| self.bind_name(f)).transpose()?;
        Ok(Pattern::Seq {
            items: patterns,
            rest,
            all,
        })
    }

    fn bind_name(&mut self, form: &Form) -> Result<u32> {
        match &form.kind {
            FormKind::Symbol(name) => Ok(self.declare(name)),
            _ => Err(Error::validation("`:as` must be followed by a name").with_span(form.span)),
        }
    }

    fn map_pattern(&mut self, items: &[Form]) -> Result<Pattern> {
        // Defaults are analyzed before the names they default are declared.
        let mut defaults: Vec<(String, &Form)> = Vec::new();
        for kv in items.chunks(2) {
            if matches!(&kv[0].kind, FormKind::Keyword(k) if k == "or") {
                match &kv[1].kind {
                    FormKind::Map(or) => {
                        for d in or.chunks(2) {
                            let name = d[0].as_symbol().ok_or_else(|| {
                                Error::validation("`:or` keys must be names").with_span(d[0].span)
                            })?;
                            defaults.push((name.to_string(), &d[1]));
                        }
                    }
                    _ => {
                        return Err(Error::validation("`:or` must be followed by a map")
                            .with_span(kv[1].span))
                    }
                }
            }
        }
        let mut default_exprs = Vec::with_capacity(defaults.len());
        for (name, form) in &defaults {
            default_exprs.push((name.clone(), Some(self.analyze(form, false)?)));
        }
        let mut take_default = |name: &str| {
            default_exprs
                .iter_mut()
                .find(|(n, _)| n == name)
                .and_then(|(_, e)| e.take())
        };

        let mut entries = Vec::new();
        let mut all = None;
        for kv in items.chunks(2) {
            match &kv[0].kind {
                FormKind::Keyword(k) if k == "or" => {}
                FormKind::Keyword(k) if k == "as" => all = Some(self.bind_name(&kv[1])?),
                FormKind::Keyword(k) if k == "keys" || k == "strs" => {
                    let names = match &kv[1].kind {
                        FormKind::Vector(names) => names,
                        _ => {
                            return Err(Error::validation(format!(
                                "`:{k}` must be followed by a vector of names"
                            ))
                            .with_span(kv[1].span))
                        }
                    };
                    for n in names {
                        let name = match &n.kind {
                            FormKind::Symbol(s) => s.as_str(),
                            // `{:keys [:a]}` is accepted by Clojure too.
                            FormKind::Keyword(s) => s.as_str(),
                            _ => {
                                return Err(Error::validation(format!(
                                    "`:{k}` names must be symbols"
                                ))
                                .with_span(n.span))
                            }
                        };
                        let key = if k == "keys" {
                            Value::keyword(name)
                        } else {
                            Value::str(name)
                        };
                        let default = take_default(name);
                        entries.push(MapEntry {
                            pattern: Pattern::Bind(self.declare(name)),
                            key,
                            default,
                        });
                    }
                }
                FormKind::Keyword(k) => {
                    return Err(Error::validation(format!(
                        "Unsupported map destructuring option `:{k}`; use `:keys`, `:strs`, `:or` or `:as`"
                    ))
                    .with_span(kv[0].span))
                }
                _ => {
                    let key = super::quote(&kv[1]);
                    let default = kv[0].as_symbol().and_then(&mut take_default);
                    entries.push(MapEntry {
                        pattern: self.pattern(&kv[0])?,
                        key,
                        default,
                    });
                }
            }
        }
        Ok(Pattern::Map { entries, all })
    }
}
