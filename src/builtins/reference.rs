//! Renders the builtin registry as documentation: one entry for `:doc`,
//! and a compact language reference for the system prompt. Both come from
//! the registry's own docs, never from a hand-kept list.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::{Builtin, Registry};

/// The order areas appear in the reference, with their headings.
const AREAS: &[(&str, &str)] = &[
    ("collections", "Collections"),
    ("maps", "Maps"),
    ("sets", "Sets"),
    ("strings", "Strings"),
    ("regex", "Regex"),
    ("math", "Numbers"),
    ("predicates", "Predicates"),
    ("functions", "Functions"),
    ("core", "Core"),
];

impl Registry {
    /// The documentation of one builtin, as `:doc NAME` shows it:
    /// `(name params)` on the first line, then the description.
    pub fn doc(&self, name: &str) -> Option<String> {
        let b = self.lookup(name)?;
        let mut out = format!("({}{}{})", b.name, sep(b.params), strip_brackets(b.params));
        let aliases: Vec<&str> = self
            .names()
            .filter(|n| *n != b.name && self.lookup(n).is_some_and(|o| std::ptr::eq(o, b)))
            .collect();
        if !aliases.is_empty() {
            let mut aliases = aliases;
            aliases.sort_unstable();
            let _ = write!(out, "   (also: {})", aliases.join(", "));
        }
        let _ = write!(out, "\n  {}", b.doc);
        Some(out)
    }

    /// A compact reference of every builtin, grouped by area: each line is
    /// an area heading followed by `name` entries, so the model sees every
    /// available function at a small token cost.
    pub fn reference(&self) -> String {
        let mut groups: BTreeMap<&str, Vec<&Builtin>> = BTreeMap::new();
        // Refused functions exist only to explain themselves when called.
        for b in self.iter().filter(|b| b.listed()) {
            groups.entry(b.group).or_default().push(b);
        }
        let mut out = String::new();
        let known: Vec<&str> = AREAS.iter().map(|(g, _)| *g).collect();
        let extra = groups
            .keys()
            .filter(|g| !known.contains(g))
            .copied()
            .collect::<Vec<_>>();
        let ordered = AREAS
            .iter()
            .map(|(g, h)| (*g, h.to_string()))
            .chain(extra.into_iter().map(|g| (g, capitalize(g))));
        for (group, heading) in ordered {
            let Some(items) = groups.get(group) else {
                continue;
            };
            let mut names: Vec<&str> = items.iter().map(|b| b.name).collect();
            names.sort_unstable();
            let _ = writeln!(out, ";; {heading}: {}", names.join(" "));
        }
        out
    }
}

fn strip_brackets(params: &str) -> &str {
    params.trim_start_matches('[').trim_end_matches(']')
}

fn sep(params: &str) -> &'static str {
    if strip_brackets(params).is_empty() {
        ""
    } else {
        " "
    }
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use crate::builtins::registry;

    #[test]
    fn doc_shows_signature_aliases_and_example() {
        let doc = registry().doc("upper-case").unwrap();
        assert!(doc.starts_with("(upper-case s)   (also: upcase)"), "{doc}");
        assert!(doc.contains("`(upper-case \"ab\")` => `\"AB\"`"), "{doc}");
        assert!(registry().doc("no-such-fn").is_none());
    }

    #[test]
    fn reference_lists_every_builtin_once_by_area() {
        let reference = registry().reference();
        assert!(reference.starts_with(";; Collections: "), "{reference}");
        for b in registry().iter().filter(|b| b.listed()) {
            let occurrences = reference
                .split([' ', '\n'])
                .filter(|word| *word == b.name)
                .count();
            assert_eq!(occurrences, 1, "`{}` in\n{reference}", b.name);
        }
    }
}
