//! Core-library benchmarks: grouping, sorting, strings and regexes, sets.
//!
//! Run with `cargo bench --bench library`.

use criterion::{criterion_group, criterion_main, Criterion};

#[path = "support.rs"]
mod support;
use ptc_lisp::eval::{DataHost, Program};
use ptc_lisp::value::{Map, Value};
use support::run;

fn data() -> DataHost {
    let categories = ["travel", "food", "office", "misc", "rent", "tax"];
    let orders: Vec<Value> = (0..10_000)
        .map(|i: i64| {
            let mut m = Map::new();
            m.insert(Value::keyword("id"), Value::Int(i));
            m.insert(Value::keyword("amount"), Value::Int(i * 7919 % 10_007));
            m.insert(
                Value::keyword("category"),
                Value::str(categories[i as usize % 6]),
            );
            m.insert(
                Value::keyword("name"),
                Value::from(format!("customer-{}", i * 31 % 997)),
            );
            Value::map(m)
        })
        .collect();
    let lines: Vec<String> = (0..2_000)
        .map(|i| {
            format!(
                "2026-01-{:02} INFO user={} action=login ms={}",
                i % 28 + 1,
                i % 97,
                i * 13 % 500
            )
        })
        .collect();
    let mut data = Map::new();
    data.insert(Value::keyword("orders"), Value::vector(orders));
    data.insert(Value::keyword("log"), Value::from(lines.join("\n")));
    data.insert(
        Value::keyword("a"),
        Value::vector((0..50_000).map(Value::Int)),
    );
    data.insert(
        Value::keyword("b"),
        Value::vector((25_000..75_000).map(Value::Int)),
    );
    DataHost::new(data)
}

fn benches(c: &mut Criterion) {
    let host = data();
    let cases = [
        ("group_by_10k_maps", "(count (group-by :category data/orders))"),
        ("frequencies_10k_maps", "(frequencies (map :name data/orders))"),
        ("sort_by_10k_maps", "(first (sort-by :amount data/orders))"),
        (
            "split_regex_2000_lines",
            "(->> (split-lines data/log) (keep #(re-find #\"user=(\\d+).*ms=(\\d+)\" %)) (map #(parse-long (nth % 2))) (reduce +))",
        ),
        (
            "set_ops_50k_ints",
            "(let [a (set data/a) b (set data/b)] [(count (clojure.set/union a b)) (count (clojure.set/intersection a b)) (count (clojure.set/difference a b))])",
        ),
    ];
    for (name, src) in cases {
        let program = Program::compile(src).unwrap();
        c.bench_function(name, |b| b.iter(|| run(&program, &host)));
    }
}

criterion_group! {
    name = library;
    config = Criterion::default().sample_size(20);
    targets = benches
}
criterion_main!(library);
