//! What the benchmark binaries share: running a compiled program.

use ptc_lisp::eval::{self, DataHost, Globals, Limits, Program, RunOptions};
use ptc_lisp::value::Value;

/// Run `program` against `host` with no practical limits.
pub fn run(program: &Program, host: &DataHost) -> Value {
    let out = eval::run(
        program,
        host,
        &Globals::default(),
        RunOptions {
            limits: Limits::generous(),
            ..RunOptions::default()
        },
    );
    eval::finish(out.result).expect("benchmark program runs")
}
