//! The size limits applied to literals: a program cannot write a value
//! larger than one it could build (`Limits::max_collection`), so a
//! million-item vector literal or a twenty-million-character string in a
//! model's reply is an error with its location, not a value that skips
//! the limit.

use super::form::{Form, FormKind};
use crate::error::{Error, ErrorKind};

/// Check every literal of `forms` (nested ones included) against
/// `max_items`: items of a collection, characters of a string or regex.
/// The first literal over the limit is an error of kind
/// [`ErrorKind::MemoryLimit`] (`memory-exceeded`) with its span.
pub fn check_literal_sizes(forms: &[Form], max_items: usize) -> Result<(), Error> {
    // Explicit stack: literals nest up to the reader's depth limit, and
    // this must not care.
    let mut pending: Vec<&Form> = forms.iter().rev().collect();
    while let Some(form) = pending.pop() {
        let (what, count, unit, children): (&str, usize, &str, &[Form]) = match &form.kind {
            FormKind::List(items) => ("list", items.len(), "items", items),
            FormKind::Vector(items) => ("vector", items.len(), "items", items),
            FormKind::Set(items) => ("set", items.len(), "items", items),
            FormKind::AnonFn(items) => ("function", items.len(), "items", items),
            FormKind::Map(items) => ("map", items.len() / 2, "entries", items),
            // Counting characters is linear; the byte length bounds it
            // from above, so short strings are not counted at all.
            FormKind::Str(s) if s.len() > max_items => {
                ("string", s.chars().count(), "characters", &[])
            }
            FormKind::Regex(s) if s.len() > max_items => {
                ("regex", s.chars().count(), "characters", &[])
            }
            FormKind::Quote(inner) => {
                pending.push(inner);
                continue;
            }
            _ => continue,
        };
        if count > max_items {
            return Err(Error::new(
                ErrorKind::MemoryLimit,
                format!(
                    "A {what} literal of {count} {unit} is over the limit of {max_items} \
                     items or characters in one value (max_collection)"
                ),
            )
            .with_hint(
                "read large inputs from data/ or a tool instead of writing them in the program",
            )
            .with_span(form.span));
        }
        pending.extend(children.iter().rev());
    }
    Ok(())
}
