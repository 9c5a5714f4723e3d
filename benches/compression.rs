//! Rendering the compressed prompt of a 20-turn session with 40
//! definitions and 60 tool calls (target: median under 200 µs).
//!
//! Run with `cargo bench --bench compression`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use ptc_lisp::compression::{Compression, RenderContext, SingleUserCoalesced};
use ptc_lisp::session::Session;
use ptc_lisp::value::{from_json, Value};

fn session() -> Session {
    let mut s = Session::new();
    s.register_tool(
        "lookup",
        "(id :int) -> {id :int, name :string, tags [:string]}",
        "Look up a record",
        |args| {
            let id = args.i64("id").unwrap_or(0);
            Ok(from_json(&serde_json::json!({
                "id": id,
                "name": format!("record number {id} with a longer descriptive name"),
                "tags": ["alpha", "beta", "gamma", "delta"],
                "score": id as f64 * 1.5
            })))
        },
    )
    .unwrap()
    .register_tool("notify", "(to :string, body :string) -> :bool", "", |_| {
        Ok(Value::Bool(true))
    })
    .unwrap();
    s.set_data_json(&serde_json::json!({
        "records": (0..50).map(|i| serde_json::json!({"id": i, "name": format!("r{i}")})).collect::<Vec<_>>(),
        "config": {"threshold": 10, "mode": "strict"}
    }))
    .unwrap();
    for turn in 0..20 {
        let a = turn * 3;
        let program = format!(
            "(def rec-{turn} \"Record fetched in turn {turn}\" (tool/lookup {a}))\n\
             (defn score-{turn} \"Scores a record; turn {turn}\" [r] (* (:score r) {turn}))\n\
             (score-{turn} rec-{turn})\n\
             (tool/lookup {b})\n\
             (tool/notify \"ops@example.com\" \"turn {turn} done\")\n{print}",
            b = a + 1,
            print = if turn % 2 == 0 {
                format!("(println \"turn {turn}:\" (:name rec-{turn}))")
            } else {
                String::new()
            }
        );
        let t = s.eval(&program);
        assert!(t.success, "{program}: {:?}", t.error());
    }
    s
}

fn bench(c: &mut Criterion) {
    let s = session();
    assert_eq!(s.turns().len(), 20);
    assert_eq!(s.memory().len(), 40);
    assert_eq!(
        s.turns().iter().map(|t| t.tool_calls.len()).sum::<usize>(),
        60
    );
    let ctx = RenderContext::for_session(&s, "Summarize the records and notify ops", 25)
        .with_system_prompt("You write PTC-Lisp.");
    c.bench_function("single_user_coalesced_20_turns_40_defs_60_calls", |b| {
        b.iter(|| {
            SingleUserCoalesced.to_messages(
                black_box(s.turns()),
                black_box(s.memory()),
                black_box(&ctx),
            )
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
