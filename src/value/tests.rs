//! Unit tests of the value model.

use super::*;

#[test]
fn value_is_sixteen_bytes() {
    assert_eq!(std::mem::size_of::<Value>(), 16);
}

fn float(f: f64) -> String {
    pr_str(&Value::Float(f))
}

#[test]
fn floats_print_like_java() {
    assert_eq!(float(1.0), "1.0");
    assert_eq!(float(3.25), "3.25");
    assert_eq!(float(-0.5), "-0.5");
    assert_eq!(float(2.5e10), "2.5E10");
    assert_eq!(float(1.23e-4), "1.23E-4");
    assert_eq!(float(0.001), "0.001");
    assert_eq!(float(1234567.0), "1234567.0");
    assert_eq!(float(12345678.0), "1.2345678E7");
    assert_eq!(float(1e7), "1.0E7");
    assert_eq!(float(100.0), "100.0");
    assert_eq!(float(0.1 + 0.2), "0.30000000000000004");
    assert_eq!(float(f64::INFINITY), "##Inf");
    assert_eq!(float(f64::NEG_INFINITY), "##-Inf");
    assert_eq!(float(f64::NAN), "##NaN");
    assert_eq!(float(-0.0), "-0.0");
    assert_eq!(print_str(&Value::Float(f64::INFINITY)), "Infinity");
}

#[test]
fn collections_print_in_clojure_notation() {
    let m: Map = [
        (Value::keyword("a"), Value::Int(1)),
        (Value::keyword("b"), Value::str("x\"y\n")),
    ]
    .into_iter()
    .collect();
    assert_eq!(pr_str(&Value::map(m)), r#"{:a 1, :b "x\"y\n"}"#);
    let v = Value::vector([Value::Nil, Value::Bool(true), Value::list([Value::Int(1)])]);
    assert_eq!(pr_str(&v), "[nil true (1)]");
    assert_eq!(print_str(&v), "[nil true (1)]");
    assert_eq!(print_str(&Value::Nil), "");
    assert_eq!(print_str(&Value::str("a")), "a");
    let s: Set = [Value::Int(1), Value::Int(2)].into_iter().collect();
    assert_eq!(pr_str(&Value::set(s)), "#{1 2}");
}

#[test]
fn small_maps_keep_insertion_order_then_switch_to_hash() {
    let mut m = Map::new();
    for i in (0..8).rev() {
        m.insert(Value::Int(i), Value::Nil);
    }
    let keys: Vec<_> = m.keys().cloned().collect();
    assert_eq!(keys, (0..8).rev().map(Value::Int).collect::<Vec<_>>());
    m.insert(Value::Int(100), Value::Nil);
    assert_eq!(m.len(), 9);
    assert!(m.contains_key(&Value::Int(100)));
    assert!(m.contains_key(&Value::Int(3)));
    // Replacing a key keeps its position.
    let mut small = Map::new();
    small.insert(Value::keyword("a"), Value::Int(1));
    small.insert(Value::keyword("b"), Value::Int(2));
    small.insert(Value::keyword("a"), Value::Int(3));
    assert_eq!(pr_str(&Value::map(small)), "{:a 3, :b 2}");
}

#[test]
fn equality_follows_clojure() {
    assert_ne!(Value::Int(1), Value::Float(1.0));
    assert_eq!(Value::vector([Value::Int(1)]), Value::list([Value::Int(1)]));
    assert_ne!(Value::Float(f64::NAN), Value::Float(f64::NAN));
    assert_eq!(Value::Float(0.0), Value::Float(-0.0));
    assert_eq!(hash_one(&Value::Float(0.0)), hash_one(&Value::Float(-0.0)));
    let a: Map = (0..20).map(|i| (Value::Int(i), Value::Int(i))).collect();
    let b: Map = (0..20)
        .rev()
        .map(|i| (Value::Int(i), Value::Int(i)))
        .collect();
    assert_eq!(Value::map(a.clone()), Value::map(b.clone()));
    assert_eq!(hash_one(&Value::map(a)), hash_one(&Value::map(b)));
    assert_ne!(Value::str("a"), Value::keyword("a"));
}

#[test]
fn compare_orders_like_clojure() {
    use std::cmp::Ordering::*;
    assert_eq!(compare(&Value::Nil, &Value::Int(1)), Ok(Less));
    assert_eq!(compare(&Value::Int(1), &Value::Float(1.5)), Ok(Less));
    assert_eq!(compare(&Value::str("b"), &Value::str("a")), Ok(Greater));
    let short = Value::vector([Value::Int(9)]);
    let long = Value::vector([Value::Int(1), Value::Int(2)]);
    assert_eq!(compare(&short, &long), Ok(Less));
    assert!(compare(&Value::Int(1), &Value::str("a")).is_err());
}

#[test]
fn json_round_trip_keeps_field_order() {
    let json: serde_json::Value =
        serde_json::from_str(r#"{"z": 1, "a": [1.5, null, true], "m": {"k": "v"}}"#).unwrap();
    let v = from_json(&json);
    assert_eq!(pr_str(&v), r#"{:z 1, :a [1.5 nil true], :m {:k "v"}}"#);
    assert_eq!(to_json(&v), json);
}

#[test]
fn hashing_on_a_budget_keeps_equal_values_hashing_alike() {
    // Big nested values in maps built in opposite orders (one an array
    // map, one a hash map after growing): equal, so equal hashes.
    let big =
        |n: i64| Value::vector((0..5_000).map(|i| Value::vector([Value::Int(i), Value::Int(n)])));
    let a: Map = (0..12).map(|i| (Value::Int(i), big(i))).collect();
    let b: Map = (0..12).rev().map(|i| (Value::Int(i), big(i))).collect();
    assert_eq!(Value::map(a.clone()), Value::map(b.clone()));
    assert_eq!(hash_one(&Value::map(a)), hash_one(&Value::map(b)));
    // Different values still hash differently while the budget lasts.
    assert_ne!(hash_one(&big(1)), hash_one(&big(2)));
}

#[test]
fn short_strings_are_inline_and_equal_to_the_shared_form() {
    let limit = "abcdefghijklmn";
    assert_eq!(limit.len(), SHORT_MAX);
    assert!(matches!(Value::str(limit), Value::ShortStr(_)));
    assert!(matches!(Value::from(format!("{limit}o")), Value::Str(_)));
    assert!(matches!(Value::char('é'), Value::ShortStr(s) if s.as_str() == "é"));
    // An embedder may build a short string in the shared form: it is the
    // same string in every respect.
    for text in ["", "a", "closed", limit] {
        let short = Value::str(text);
        let shared = Value::Str(ArcStr::from(text));
        assert_eq!(short, shared);
        assert_eq!(shared, short);
        use std::hash::BuildHasher;
        let state = FixedState::default();
        assert_eq!(state.hash_one(&short), state.hash_one(&shared));
        assert_eq!(compare(&short, &shared), Ok(std::cmp::Ordering::Equal));
        assert_eq!(pr_str(&short), pr_str(&shared));
        assert_eq!(short.as_str(), Some(text));
        let set: Set = [shared.clone()].into_iter().collect();
        assert!(set.contains(&short));
        let map = Value::map(
            [(short.clone(), Value::Int(1))]
                .into_iter()
                .collect::<Map>(),
        );
        assert_eq!(
            map.as_map().and_then(|m| m.get(&shared)),
            Some(&Value::Int(1))
        );
    }
    assert_eq!(
        compare(
            &Value::str("b"),
            &Value::Str(ArcStr::from("abcdefghijklmnop"))
        ),
        Ok(std::cmp::Ordering::Greater)
    );
    // Compared by their bytes, strings still order by code point.
    assert_eq!(
        compare(&Value::str("é"), &Value::str("z")),
        Ok(std::cmp::Ordering::Greater)
    );
    assert_eq!(
        compare(&Value::str("ab"), &Value::str("abc")),
        Ok(std::cmp::Ordering::Less)
    );
    assert_ne!(Value::str("a"), Value::keyword("a"));
}

#[test]
fn where_operators_are_read_by_their_written_names_only() {
    for op in WhereOp::WRITTEN {
        assert_eq!(WhereOp::from_name(op.name()), Some(op));
    }
    // A field alone is a truthy test; `truthy` is not an operator to write.
    assert_eq!(WhereOp::Truthy.name(), "truthy");
    for name in ["truthy", "like", "==", "", "IN"] {
        assert_eq!(WhereOp::from_name(name), None, "{name}");
    }
}
