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
