//! A `tools/call` result as a PTC-Lisp value, and an error result as the
//! message the program (and the model) reads.
//!
//! # The mapping
//!
//! - `structuredContent`, when present, is the value (JSON to PTC as for
//!   command tools: objects become keyword maps);
//! - otherwise each content item becomes a value: text that parses as
//!   JSON becomes that value, other text a string; an image or audio item
//!   a map `{:type "image", :mime-type "image/png", :size 1234}` (the size
//!   of the decoded data in bytes; the base64 data itself is never kept);
//!   an embedded resource `{:type "resource", :uri ..., :mime-type ...}`
//!   with its `:text` when it is text and its `:size` when it is a blob;
//!   a resource link `{:type "resource_link", :uri ..., :name ...}`;
//! - no item is nil, one item is its value, several are a vector;
//! - `isError: true` is an error whose message is the text of the items.
//!
//! The result works on the JSON of the result, so it does not depend on
//! the SDK's types.

use serde_json::Value as Json;

use crate::value::{from_json, Map, Value};

/// The value of a `tools/call` result, or the error it reports (the text
/// of its content items, or a note that it gave none).
pub fn result_value(result: &Json) -> Result<Value, String> {
    let items = result
        .get("content")
        .and_then(Json::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    if result.get("isError").and_then(Json::as_bool) == Some(true) {
        let text: Vec<String> = items.iter().map(item_text).collect();
        let text = text.join("\n");
        return Err(if text.trim().is_empty() {
            "the tool reported an error without a message".to_string()
        } else {
            text.trim().to_string()
        });
    }
    if let Some(structured) = result.get("structuredContent") {
        return Ok(from_json(structured));
    }
    let mut values: Vec<Value> = items.iter().map(item_value).collect();
    Ok(match values.len() {
        0 => Value::Nil,
        1 => values.pop().unwrap_or(Value::Nil),
        _ => Value::vector(values),
    })
}

/// One content item as a value.
fn item_value(item: &Json) -> Value {
    let kind = item.get("type").and_then(Json::as_str).unwrap_or("");
    match kind {
        "text" => text_value(item.get("text").and_then(Json::as_str).unwrap_or("")),
        "image" | "audio" => {
            let mut m = described(kind);
            put_str(&mut m, "mime-type", item.get("mimeType"));
            put_size(&mut m, item.get("data"));
            Value::map(m)
        }
        "resource" => {
            let resource = item.get("resource").unwrap_or(&Json::Null);
            let mut m = described(kind);
            put_str(&mut m, "uri", resource.get("uri"));
            put_str(&mut m, "mime-type", resource.get("mimeType"));
            if let Some(text) = resource.get("text").and_then(Json::as_str) {
                m.insert(Value::keyword("text"), Value::str(text));
            }
            put_size(&mut m, resource.get("blob"));
            Value::map(m)
        }
        "resource_link" => {
            let mut m = described(kind);
            for (key, field) in [
                ("uri", "uri"),
                ("name", "name"),
                ("mime-type", "mimeType"),
                ("description", "description"),
            ] {
                put_str(&mut m, key, item.get(field));
            }
            if let Some(size) = item.get("size").and_then(Json::as_i64) {
                m.insert(Value::keyword("size"), Value::Int(size));
            }
            Value::map(m)
        }
        _ => {
            let mut m = described(if kind.is_empty() { "unknown" } else { kind });
            m.insert(
                Value::keyword("note"),
                Value::str("a content item of a type ptc does not read"),
            );
            Value::map(m)
        }
    }
}

/// Text that is a JSON document becomes its value; other text stays a
/// string.
fn text_value(text: &str) -> Value {
    let trimmed = text.trim();
    let looks_like_json = trimmed.starts_with(['{', '[', '"'])
        || trimmed.parse::<f64>().is_ok()
        || matches!(trimmed, "true" | "false" | "null");
    if looks_like_json {
        if let Ok(json) = serde_json::from_str::<Json>(trimmed) {
            return from_json(&json);
        }
    }
    Value::str(text)
}

/// The text of an item for an error message.
fn item_text(item: &Json) -> String {
    match item.get("text").and_then(Json::as_str) {
        Some(text) => text.to_string(),
        None => crate::value::pr_str(&item_value(item)),
    }
}

fn described(kind: &str) -> Map {
    let mut m = Map::new();
    m.insert(Value::keyword("type"), Value::str(kind));
    m
}

fn put_str(m: &mut Map, key: &str, value: Option<&Json>) {
    if let Some(s) = value.and_then(Json::as_str) {
        m.insert(Value::keyword(key), Value::str(s));
    }
}

/// The decoded size of base64 data, without decoding it.
fn put_size(m: &mut Map, data: Option<&Json>) {
    if let Some(data) = data.and_then(Json::as_str) {
        let data = data.trim_end_matches('=');
        let size = data.len() * 3 / 4;
        m.insert(
            Value::keyword("size"),
            Value::Int(i64::try_from(size).unwrap_or(i64::MAX)),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::pr_str;
    use serde_json::json;

    fn value(result: Json) -> String {
        match result_value(&result) {
            Ok(v) => pr_str(&v),
            Err(e) => format!("error: {e}"),
        }
    }

    #[test]
    fn structured_content_wins() {
        assert_eq!(
            value(json!({"content": [{"type": "text", "text": "{\"a\": 1}"}],
                         "structuredContent": {"sum": 3}})),
            "{:sum 3}"
        );
    }

    #[test]
    fn text_is_json_or_a_string() {
        assert_eq!(
            value(json!({"content": [{"type": "text", "text": "[1, 2]"}]})),
            "[1 2]"
        );
        assert_eq!(
            value(json!({"content": [{"type": "text", "text": "Echo: hi"}]})),
            "\"Echo: hi\""
        );
        assert_eq!(
            value(json!({"content": [{"type": "text", "text": "{not json"}]})),
            "\"{not json\""
        );
        assert_eq!(
            value(json!({"content": [{"type": "text", "text": " 42 "}]})),
            "42"
        );
    }

    #[test]
    fn several_items_are_a_vector_and_none_is_nil() {
        assert_eq!(
            value(json!({"content": [{"type": "text", "text": "a"},
                                     {"type": "text", "text": "b"}]})),
            "[\"a\" \"b\"]"
        );
        assert_eq!(value(json!({"content": []})), "nil");
    }

    #[test]
    fn binary_items_are_described_not_copied() {
        let v = value(json!({"content": [
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "test://1", "mimeType": "text/plain",
                                              "text": "hello"}},
            {"type": "resource", "resource": {"uri": "test://2", "blob": "AAAA"}},
            {"type": "resource_link", "uri": "file:///x", "name": "x"}]}));
        assert_eq!(
            v,
            "[{:type \"image\", :mime-type \"image/png\", :size 8} \
             {:type \"resource\", :uri \"test://1\", :mime-type \"text/plain\", :text \"hello\"} \
             {:type \"resource\", :uri \"test://2\", :size 3} \
             {:type \"resource_link\", :uri \"file:///x\", :name \"x\"}]"
        );
        assert!(!v.contains("iVBOR"));
    }

    #[test]
    fn error_results_give_their_text() {
        assert_eq!(
            value(json!({"isError": true,
                         "content": [{"type": "text", "text": "Access denied: /etc"}]})),
            "error: Access denied: /etc"
        );
        assert_eq!(
            value(json!({"isError": true, "content": []})),
            "error: the tool reported an error without a message"
        );
    }
}
