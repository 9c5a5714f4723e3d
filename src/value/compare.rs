//! Clojure's `compare`: the total-ish order used by `sort`, `sort-by`,
//! `compare`, `min-key` and friends.

use std::cmp::Ordering;

use super::Value;

/// Compare two values as Clojure's `compare` does: `nil` sorts first,
/// numbers compare numerically across integers and floats, strings,
/// keywords and symbols lexicographically, booleans `false` before `true`,
/// vectors by length and then item by item. Values of different kinds
/// cannot be compared; the error names both types.
pub fn compare(a: &Value, b: &Value) -> Result<Ordering, String> {
    use Value::*;
    Ok(match (a, b) {
        (Nil, Nil) => Ordering::Equal,
        (Nil, _) => Ordering::Less,
        (_, Nil) => Ordering::Greater,
        (Int(x), Int(y)) => x.cmp(y),
        (Int(x), Float(y)) => cmp_f64(*x as f64, *y),
        (Float(x), Int(y)) => cmp_f64(*x, *y as f64),
        (Float(x), Float(y)) => cmp_f64(*x, *y),
        (Str(x), Str(y)) | (Keyword(x), Keyword(y)) | (Symbol(x), Symbol(y)) => {
            x.as_str().cmp(y.as_str())
        }
        // UTF-8 orders as its code points do: the bytes suffice.
        (ShortStr(x), ShortStr(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Str(x), ShortStr(y)) => x.as_bytes().cmp(y.as_bytes()),
        (ShortStr(x), Str(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Bool(x), Bool(y)) => x.cmp(y),
        (Vector(x) | List(x), Vector(y) | List(y)) => match x.len().cmp(&y.len()) {
            Ordering::Equal => {
                for (p, q) in x.iter().zip(y.iter()) {
                    // Shared structure can make this exponentially long:
                    // a stopped meter ends it (its error replaces the result).
                    if !crate::meter::work(1) {
                        return Ok(Ordering::Equal);
                    }
                    let o = super::deep(|| compare(p, q))?;
                    if o != Ordering::Equal {
                        return Ok(o);
                    }
                }
                Ordering::Equal
            }
            o => o,
        },
        _ => {
            return Err(format!(
                "Cannot compare {} with {}",
                a.type_name(),
                b.type_name()
            ))
        }
    })
}

/// NaN compares equal to everything, as in Clojure's `Numbers.compare`.
fn cmp_f64(x: f64, y: f64) -> Ordering {
    x.partial_cmp(&y).unwrap_or(Ordering::Equal)
}
