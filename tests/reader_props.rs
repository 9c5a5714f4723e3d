//! Property tests: printing a value and reading it back gives an equal
//! value.

use proptest::prelude::*;
use ptc_lisp::value::{pr_str, Map, Set, Value};

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Nil),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::Int),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::Float),
        "[a-zA-Z0-9 \\\\\"\\n\\t]{0,12}".prop_map(|s| Value::from(s.as_str())),
        "[a-z][a-z0-9?!-]{0,8}".prop_map(|s| Value::keyword(&s)),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::vector),
            prop::collection::vec((inner.clone(), inner.clone()), 0..12)
                .prop_map(|kvs| Value::map(kvs.into_iter().collect::<Map>())),
            prop::collection::vec(inner, 0..12)
                .prop_map(|xs| Value::set(xs.into_iter().collect::<Set>())),
        ]
    })
}

proptest! {
    #[test]
    fn print_then_read_round_trips(v in value()) {
        let printed = pr_str(&v);
        // A quoted form reads as the same data without evaluating it.
        let back = crate::util::eval(&format!("'{printed}")).unwrap_or_else(|e| panic!("{printed}: {e}"));
        prop_assert_eq!(&back, &v, "printed as {}", printed);
    }
}

/// Nested maps, the shape that once printed a `}` alone on a line.
fn nested_map() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        any::<i64>().prop_map(Value::Int),
        "[a-z ]{0,30}".prop_map(|s| Value::from(s.as_str())),
        "[a-z][a-z0-9-]{0,10}".prop_map(|s| Value::keyword(&s)),
        prop::collection::vec(any::<i32>().prop_map(|n| Value::Int(n.into())), 0..8)
            .prop_map(Value::vector),
    ];
    leaf.prop_recursive(5, 80, 8, |inner| {
        prop_oneof![
            prop::collection::vec(("[a-z][a-z0-9-]{0,12}", inner.clone()), 1..8).prop_map(|kvs| {
                Value::map(
                    kvs.into_iter()
                        .map(|(k, v)| (Value::keyword(&k), v))
                        .collect::<Map>(),
                )
            }),
            prop::collection::vec(inner, 0..4).prop_map(Value::vector),
        ]
    })
}

proptest! {
    /// The REPL's pretty printer at any width from 40 to 200: the text
    /// reads back as the same value, and no line holds only closing
    /// brackets (the printer never puts an opening bracket alone).
    #[test]
    fn pretty_printed_nested_maps_reread_and_keep_brackets_with_their_items(
        v in nested_map(),
        width in 40usize..=200,
    ) {
        use ptc_lisp::value::{pretty, PrettyOptions};
        let text = pretty(&v, PrettyOptions { width, max_lines: usize::MAX, max_chars: usize::MAX }).text;
        let back = crate::util::eval(&format!("'{text}")).unwrap_or_else(|e| panic!("{text}: {e}"));
        prop_assert_eq!(&back, &v, "printed as\n{}", text);
        for line in text.lines() {
            let bare = line.trim().trim_end_matches(',');
            prop_assert!(
                bare.is_empty() || !bare.chars().all(|c| "}])".contains(c)),
                "a line of closing brackets at width {}:\n{}", width, text
            );
            prop_assert!(!bare.is_empty(), "an empty line at width {}:\n{}", width, text);
        }
    }
}
