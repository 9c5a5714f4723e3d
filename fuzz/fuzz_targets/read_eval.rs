//! Fuzz target: read and evaluate arbitrary text under tight limits, with
//! `data/` values that share structure (a vector doubled 40 times, a map
//! and a string built the same way) for the program to feed to builtins.
//! A panic, an abort (stack overflow, allocation failure), a run that
//! outlives its time limit by more than [`OVERRUN`], or a fuzzer timeout
//! is a bug; every other outcome, error or value, is fine.

#![no_main]

use std::alloc::System;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;
use ptc_lisp::eval::{self, DataHost, Globals, Limits, NoHost, Program, RunOptions};
use ptc_lisp::value::{write_pr_bounded, Value};

#[global_allocator]
static ALLOC: cap::Cap<System> = cap::Cap::new(System, usize::MAX);

/// The bombs, bound as `data/b`, `data/b2`, `data/m`, `data/s`, `data/n`.
const BOMBS: &str = r#"
{:b (loop [x [1] i 0] (if (< i 40) (recur [x x] (inc i)) x))
 :b2 (loop [x [1] i 0] (if (< i 40) (recur [x x] (inc i)) (assoc-in x [1 1 1] 2)))
 :m (reduce (fn [m i] {:l m :r m :i i}) {} (range 30))
 :s (apply str (repeat 20000 "ab"))
 :n (vec (repeat 1000 (vec (range 1000))))}
"#;

fn data() -> &'static DataHost {
    static DATA: OnceLock<DataHost> = OnceLock::new();
    DATA.get_or_init(|| {
        ptc_lisp::heap::count_with(|| ALLOC.allocated());
        let program = Program::compile(BOMBS).expect("the bombs read");
        let out = eval::run(
            &program,
            &NoHost,
            &Globals::default(),
            RunOptions::default(),
        );
        match eval::finish(out.result).expect("the bombs build") {
            Value::Map(ref m) => DataHost::new(m.clone()),
            other => panic!("not a map: {other:?}"),
        }
    })
}

const TIMEOUT: Duration = Duration::from_millis(200);
/// How long a run may outlast [`TIMEOUT`]. The meter reads the clock
/// between two attempts of a backtracking regex, and one attempt of the
/// worst patterns found takes about 30 ms in a release build but about a
/// second in this instrumented one (`seeds/regex_lookbehind_scans.clj`).
const OVERRUN: Duration = Duration::from_secs(3);

fuzz_target!(|bytes: &[u8]| {
    let Ok(src) = std::str::from_utf8(bytes) else {
        return;
    };
    let host = data();
    let _ = ptc_lisp::reader::read_status(src);
    let limits = Limits {
        timeout: TIMEOUT,
        max_steps: 20_000,
        max_depth: 200,
        max_collection: 10_000,
        max_expanded: 100_000,
        max_memory: 256 << 20,
        max_output: 10_000,
        ..Limits::default()
    };
    let Ok(program) = Program::compile_with_limits(src, &limits) else {
        return;
    };
    let started = Instant::now();
    let out = eval::run(
        &program,
        host,
        &Globals::default(),
        RunOptions {
            limits,
            ..RunOptions::default()
        },
    );
    let took = started.elapsed();
    assert!(
        took < TIMEOUT + OVERRUN,
        "ran {took:?} under a {TIMEOUT:?} limit"
    );
    if let Ok(outcome) = &out.result {
        let mut shown = String::new();
        write_pr_bounded(&mut shown, outcome.value(), 10_000);
    }
});
