//! Fuzz target: read and evaluate arbitrary text under strict limits.
//! Any panic, hang past the timeout, or stack overflow is a bug.

#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use ptc_lisp::eval::{self, Globals, Limits, NoHost, Program, RunOptions};

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let _ = ptc_lisp::reader::read_status(src);
    let Ok(program) = Program::compile(src) else {
        return;
    };
    let limits = Limits {
        timeout: Duration::from_millis(200),
        max_steps: 20_000,
        max_depth: 200,
        max_collection: 10_000,
        max_output: 10_000,
        ..Limits::default()
    };
    let out = eval::run(
        &program,
        &NoHost,
        &Globals::default(),
        RunOptions {
            limits,
            ..RunOptions::default()
        },
    );
    if let Ok(outcome) = &out.result {
        let _ = ptc_lisp::value::pr_str(outcome.value());
    }
});
