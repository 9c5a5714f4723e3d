//! Core language benchmarks: reading, loops, recursion and data pipelines.
//!
//! Run with `cargo bench --bench core`.

use criterion::{criterion_group, criterion_main, Criterion};

#[path = "support.rs"]
mod support;
use ptc_lisp::eval::{DataHost, Program};
use ptc_lisp::reader;
use ptc_lisp::value::{Map, Value};
use support::run;

/// A 200-line program in the style models write.
fn program_200_lines() -> String {
    let mut src = String::new();
    for i in 0..40 {
        src.push_str(&format!(
            "(defn step-{i} [items]\n  (->> items\n       (filter (where :amount > {i}))\n       (map (fn [{{:keys [id amount]}}] {{:id id :total (* amount 1.5) :tag \"t-{i}\"}})))\n  ) ; step {i}\n"
        ));
    }
    assert_eq!(src.lines().count(), 200);
    src
}

fn orders(n: usize) -> DataHost {
    let items: Vec<Value> = (0..n)
        .map(|i| {
            let mut m = Map::new();
            m.insert(Value::keyword("id"), Value::Int(i as i64));
            m.insert(Value::keyword("amount"), Value::Int((i * 37 % 1000) as i64));
            m.insert(
                Value::keyword("category"),
                Value::str(["travel", "food", "office", "misc"][i % 4]),
            );
            m.insert(Value::keyword("active"), Value::Bool(i % 3 != 0));
            Value::map(m)
        })
        .collect();
    let mut data = Map::new();
    data.insert(Value::keyword("orders"), Value::vector(items));
    DataHost::new(data)
}

fn benches(c: &mut Criterion) {
    let src = program_200_lines();
    c.bench_function("read_200_line_program", |b| {
        b.iter(|| reader::read_program(&src).unwrap())
    });
    c.bench_function("compile_200_line_program", |b| {
        b.iter(|| Program::compile(&src).unwrap())
    });

    let empty = DataHost::default();
    let sum =
        Program::compile("(loop [i 1 acc 0] (if (<= i 1000000) (recur (inc i) (+ acc i)) acc))")
            .unwrap();
    c.bench_function("loop_recur_sum_1e6", |b| b.iter(|| run(&sum, &empty)));

    let fib =
        Program::compile("(defn fib [n] (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2))))) (fib 22)")
            .unwrap();
    c.bench_function("fib_22", |b| b.iter(|| run(&fib, &empty)));

    let host = orders(10_000);
    let pipeline = Program::compile(
        "(->> data/orders (filter :active) (map (fn [o] (* (:amount o) 2))) (reduce + 0))",
    )
    .unwrap();
    c.bench_function("filter_map_reduce_10k_maps", |b| {
        b.iter(|| run(&pipeline, &host))
    });
}

criterion_group! {
    name = core;
    config = Criterion::default().sample_size(20);
    targets = benches
}
criterion_main!(core);
