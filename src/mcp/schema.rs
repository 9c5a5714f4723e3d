//! An MCP tool's JSON Schema as a PTC-Lisp signature, and its description
//! as the tool's doc.
//!
//! # The mapping
//!
//! The input schema's `properties` become the parameters: the required
//! ones first, then the optional ones (marked `?`), each group in the
//! schema's order, so a positional call fills the required ones. Types:
//!
//! | JSON Schema                          | signature          |
//! |--------------------------------------|--------------------|
//! | `string` (also with `enum`/`format`) | `:string`          |
//! | `integer`                            | `:int`             |
//! | `number`                             | `:float`           |
//! | `boolean`                            | `:bool`            |
//! | `array` with `items: T`              | `[T]` (else `[:any]`) |
//! | `object` with `properties`           | `{name T, ...}` (else `:map`) |
//! | `[T, "null"]`, `anyOf [T, null]`     | `T?`               |
//! | anything else (`anyOf`, no `type`)   | `:any`             |
//!
//! Nesting deeper than four levels is `:any`. A schema whose property
//! names are not all signature names (letters, digits, `_` and `-`)
//! declares no parameters: the tool then takes any single map, sent as
//! is. The output schema, when there is one, gives the result type;
//! otherwise the result is `:any`.
//!
//! Before a call, the session checks the arguments against the
//! signature's types (`session::typecheck`), as for every tool.

use serde_json::{Map, Value as Json};

use crate::session::Signature;

/// The deepest nesting of arrays and objects spelled out.
const MAX_DEPTH: usize = 4;
/// The longest doc kept for a tool, in characters.
pub const MAX_DOC_CHARS: usize = 1200;

/// The signature text for an input schema and an optional output schema.
/// The text always parses (see [`Signature::parse`]).
///
/// ```
/// use ptc_lisp::mcp::schema::signature_text;
/// let input = serde_json::json!({"type": "object",
///     "properties": {"tail": {"type": "integer"}, "path": {"type": "string"}},
///     "required": ["path"]});
/// assert_eq!(signature_text(&input, None), "(path :string, tail :int?) -> :any");
/// ```
pub fn signature_text(input: &Json, output: Option<&Json>) -> String {
    let returns = output.map_or(":any".to_string(), |o| type_text(o, 0));
    let params = match params_text(input) {
        Some(p) if !p.is_empty() => format!("({p}) -> {returns}"),
        _ => format!("-> {returns}"),
    };
    match Signature::parse(&params) {
        Ok(_) => params,
        // Should not happen; a tool stays callable with a map.
        Err(_) => "-> :any".to_string(),
    }
}

/// `name :type, ...` for the properties of an object schema, required
/// first; `None` when a property name cannot be a parameter name.
fn params_text(schema: &Json) -> Option<String> {
    let fields = fields_text(schema, 0)?;
    Some(fields.join(", "))
}

fn fields_text(schema: &Json, depth: usize) -> Option<Vec<String>> {
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Json::as_object)
        .unwrap_or(&empty);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Json::as_array)
        .map(|r| r.iter().filter_map(Json::as_str).collect())
        .unwrap_or_default();
    if !properties.keys().all(|k| is_param_name(k)) {
        return None;
    }
    let mut out = Vec::new();
    for want_required in [true, false] {
        for (name, prop) in properties {
            let is_required = required.contains(&name.as_str());
            if is_required != want_required {
                continue;
            }
            let mut ty = type_text(prop, depth + 1);
            if !is_required && !ty.ends_with('?') {
                ty.push('?');
            }
            out.push(format!("{name} {ty}"));
        }
    }
    Some(out)
}

/// True for names the signature grammar accepts as parameter or field
/// names.
fn is_param_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '-')
}

/// The signature type of a schema, e.g. `:string`, `[{id :int}]`, `:int?`.
fn type_text(schema: &Json, depth: usize) -> String {
    if depth > MAX_DEPTH {
        return ":any".into();
    }
    // `anyOf`/`oneOf` of one schema and `null` is that schema, nullable.
    for key in ["anyOf", "oneOf"] {
        if let Some(options) = schema.get(key).and_then(Json::as_array) {
            let non_null: Vec<&Json> = options.iter().filter(|o| !is_null_schema(o)).collect();
            return match non_null.as_slice() {
                [one] if non_null.len() < options.len() => nullable(type_text(one, depth)),
                [one] => type_text(one, depth),
                _ => ":any".into(),
            };
        }
    }
    match schema.get("type") {
        Some(Json::String(t)) => named_type(t, schema, depth),
        Some(Json::Array(types)) => {
            let names: Vec<&str> = types.iter().filter_map(Json::as_str).collect();
            let non_null: Vec<&str> = names.iter().copied().filter(|t| *t != "null").collect();
            match non_null.as_slice() {
                [one] if non_null.len() < names.len() => nullable(named_type(one, schema, depth)),
                [one] => named_type(one, schema, depth),
                _ => ":any".into(),
            }
        }
        _ if schema.get("properties").is_some() => named_type("object", schema, depth),
        _ => match schema.get("enum").and_then(Json::as_array) {
            Some(values) if !values.is_empty() && values.iter().all(Json::is_string) => {
                ":string".into()
            }
            _ => ":any".into(),
        },
    }
}

fn named_type(name: &str, schema: &Json, depth: usize) -> String {
    match name {
        "string" => ":string".into(),
        "integer" => ":int".into(),
        "number" => ":float".into(),
        "boolean" => ":bool".into(),
        "array" => match schema.get("items") {
            Some(items) if items.is_object() => format!("[{}]", type_text(items, depth + 1)),
            _ => "[:any]".into(),
        },
        "object" => match fields_text(schema, depth) {
            Some(fields) if !fields.is_empty() => format!("{{{}}}", fields.join(", ")),
            _ => ":map".into(),
        },
        _ => ":any".into(),
    }
}

fn nullable(ty: String) -> String {
    if ty.ends_with('?') || ty == ":any" {
        ty
    } else {
        ty + "?"
    }
}

fn is_null_schema(schema: &Json) -> bool {
    schema.get("type").and_then(Json::as_str) == Some("null")
}

/// The doc of an MCP tool: its description (else its title), then
/// `Arguments: name: description. ...` for the parameters that have one,
/// on one line, cut at [`MAX_DOC_CHARS`].
pub fn doc_text(description: Option<&str>, title: Option<&str>, input: &Json) -> String {
    let mut doc = description
        .or(title)
        .unwrap_or_default()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let described: Vec<String> = input
        .get("properties")
        .and_then(Json::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(name, prop)| {
            let text = prop.get("description")?.as_str()?;
            let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
            let text = text.trim_end_matches('.');
            (!text.is_empty()).then(|| format!("{name}: {text}."))
        })
        .collect();
    if !described.is_empty() {
        if !doc.is_empty() {
            doc.push(' ');
        }
        doc.push_str(&format!("Arguments: {}", described.join(" ")));
    }
    if doc.chars().count() > MAX_DOC_CHARS {
        doc = doc.chars().take(MAX_DOC_CHARS - 1).collect::<String>() + "…";
    }
    doc
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sig(input: Json) -> String {
        signature_text(&input, None)
    }

    #[test]
    fn scalar_types_map() {
        let input = json!({"type": "object", "properties": {
            "s": {"type": "string"}, "i": {"type": "integer"}, "n": {"type": "number"},
            "b": {"type": "boolean"}, "e": {"enum": ["a", "b"]}, "x": {}},
            "required": ["s", "i", "n", "b", "e", "x"]});
        assert_eq!(
            sig(input),
            "(s :string, i :int, n :float, b :bool, e :string, x :any) -> :any"
        );
    }

    #[test]
    fn required_parameters_come_first() {
        let input = json!({"properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
                           "required": ["b"]});
        assert_eq!(sig(input), "(b :int, a :string?) -> :any");
    }

    #[test]
    fn nested_and_nullable_types() {
        let input = json!({"type": "object", "properties": {
            "paths": {"type": "array", "items": {"type": "string"}},
            "edits": {"type": "array", "items": {"type": "object",
                "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}},
                "required": ["oldText"]}},
            "opt": {"type": ["integer", "null"]},
            "any_of": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "mixed": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "loose": {"type": "array"}, "obj": {"type": "object"}},
            "required": ["paths", "edits", "opt", "any_of", "mixed", "loose", "obj"]});
        assert_eq!(
            sig(input),
            "(paths [:string], edits [{oldText :string, newText :string?}], opt :int?, \
             any_of :string?, mixed :any, loose [:any], obj :map) -> :any"
        );
    }

    #[test]
    fn odd_property_names_take_any_map() {
        let input = json!({"properties": {"a.b": {"type": "string"}}});
        assert_eq!(sig(input), "-> :any");
        assert_eq!(sig(json!({"type": "object"})), "-> :any");
        assert_eq!(sig(json!({"type": "object", "properties": {}})), "-> :any");
    }

    #[test]
    fn deep_schemas_stop_at_any() {
        let mut schema = json!({"type": "string"});
        for _ in 0..10 {
            schema = json!({"type": "array", "items": schema});
        }
        let input = json!({"properties": {"deep": schema}, "required": ["deep"]});
        assert_eq!(sig(input), "(deep [[[[:any]]]]) -> :any");
    }

    #[test]
    fn output_schemas_give_the_result_type() {
        let output = json!({"type": "object", "properties": {"sum": {"type": "number"}},
                            "required": ["sum"]});
        assert_eq!(
            signature_text(&json!({"type": "object"}), Some(&output)),
            "-> {sum :float}"
        );
    }

    #[test]
    fn docs_carry_argument_descriptions() {
        let input = json!({"properties": {"path": {"type": "string",
                                                   "description": "Where\nto look"}}});
        assert_eq!(
            doc_text(Some("List a   directory."), None, &input),
            "List a directory. Arguments: path: Where to look."
        );
        assert_eq!(doc_text(None, Some("Title"), &json!({})), "Title");
        let long = "x ".repeat(2000);
        assert_eq!(
            doc_text(Some(&long), None, &json!({})).chars().count(),
            MAX_DOC_CHARS
        );
    }
}
