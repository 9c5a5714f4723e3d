//! The ten shared benchmark workloads (W1-W10), in process: for each, the
//! loading of its JSON data (`load/Wn`) and the evaluation of its program on
//! the loaded data (`eval/Wn`), the figure PEER.md gives for the reference
//! implementation.
//!
//! ```sh
//! cargo bench --bench workloads                 # all twenty
//! cargo bench --bench workloads -- eval/W8      # one
//! PTC_BENCH_DIR=/path/to/bench cargo bench --bench workloads
//! ```
//!
//! The workloads live outside this repository, in the shared benchmark
//! folder (`../shared/bench` by default, `PTC_BENCH_DIR` to choose); their
//! data is generated once into `target/bench-data` with the folder's
//! `gen.py` (Python 3, standard library only). Each result is checked
//! against the folder's `expected.json` before it is timed.

use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};

#[path = "support.rs"]
mod support;
use ptc_lisp::eval::{DataHost, Program};
use ptc_lisp::value::{pr_str, read_json_object, Map, Value};
use serde_json::Value as Json;

fn bench_dir() -> PathBuf {
    std::env::var_os("PTC_BENCH_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/bench"),
        PathBuf::from,
    )
}

/// The folder with `Wn.data.json`, generated on first use.
fn data_dir(bench: &Path) -> PathBuf {
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-data");
    if !out.join("W10.data.json").exists() {
        std::fs::create_dir_all(&out).expect("target/bench-data can be created");
        let status = std::process::Command::new("python3")
            .arg(bench.join("gen.py"))
            .arg(&out)
            .stdout(std::process::Stdio::null())
            .status()
            .expect("python3 runs the workloads' data generator");
        assert!(status.success(), "gen.py failed");
    }
    out
}

fn load(bytes: &[u8]) -> Map {
    let fields = read_json_object(bytes, "data/", usize::MAX).expect("valid workload data");
    let mut data = Map::new();
    for (k, v) in fields {
        data.insert(Value::keyword(&k), v);
    }
    data
}

/// A result in expected.json's form: keywords (keys and values) as
/// `":kw"`, string keys as they are, sets as arrays sorted by printed form.
fn canonical(v: &Value) -> Json {
    match v {
        Value::Keyword(k) => Json::String(format!(":{k}")),
        Value::Vector(items) | Value::List(items) => {
            Json::Array(items.iter().map(canonical).collect())
        }
        Value::Set(items) => {
            let mut sorted: Vec<&Value> = items.iter().collect();
            sorted.sort_by_cached_key(|v| pr_str(v));
            Json::Array(sorted.into_iter().map(canonical).collect())
        }
        Value::Map(m) => Json::Object(
            m.iter()
                .map(|(k, v)| {
                    let key = match k.as_str() {
                        Some(s) => s.to_string(),
                        None => pr_str(k),
                    };
                    (key, canonical(v))
                })
                .collect(),
        ),
        other => ptc_lisp::value::to_json(other),
    }
}

/// Equal, floats within the 1e-9 relative tolerance expected.json allows
/// for another summation order.
fn same(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) if x.is_f64() || y.is_f64() => {
            let (x, y) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0)
        }
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn benches(c: &mut Criterion) {
    let bench = bench_dir();
    if !bench.join("gen.py").exists() {
        panic!(
            "no benchmark workloads at {} (set PTC_BENCH_DIR)",
            bench.display()
        );
    }
    let data = data_dir(&bench);
    let expected: serde_json::Value =
        serde_json::from_slice(&std::fs::read(bench.join("expected.json")).expect("expected.json"))
            .expect("expected.json is JSON");
    for n in 1..=10 {
        let name = format!("W{n}");
        let program_path = if bench.join(format!("{name}.clj")).exists() {
            bench.join(format!("{name}.clj"))
        } else {
            data.join(format!("{name}.clj"))
        };
        let source = std::fs::read_to_string(&program_path).expect("the workload's program");
        let bytes = std::fs::read(data.join(format!("{name}.data.json"))).expect("its data");
        let host = DataHost::new(load(&bytes));
        let program = Program::compile(&source).expect("the workload compiles");
        let result = support::run(&program, &host);
        if let Some(want) = expected.get(&name).and_then(|e| e.get("json")) {
            assert!(
                same(&canonical(&result), want),
                "{name} gives its expected result: got {}, want {want}",
                canonical(&result)
            );
        }
        c.bench_function(&format!("load/{name}"), |b| {
            b.iter_batched(|| (), |()| load(&bytes), BatchSize::SmallInput)
        });
        c.bench_function(&format!("eval/{name}"), |b| {
            b.iter(|| support::run(&program, &host))
        });
    }
}

criterion_group! {
    name = workloads;
    config = Criterion::default()
        .sample_size(20)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_millis(500));
    targets = benches
}
criterion_main!(workloads);
