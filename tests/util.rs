//! Test helpers: evaluate source and compare the printed result.

use ptc_lisp::error::Error;
use ptc_lisp::eval::{self, DataHost, Globals, Limits, Program, RunOptions};
use ptc_lisp::value::{pr_str, Value};

/// Evaluate with default limits and the given JSON object as `data/`.
pub fn eval_with(src: &str, data: &str, limits: Limits) -> Result<Value, Error> {
    let json: serde_json::Value = serde_json::from_str(data).expect("test data is JSON");
    let host = DataHost::from_json_object(&json).expect("test data is an object");
    let program = Program::compile(src)?;
    let out = eval::run(
        &program,
        &host,
        &Globals::default(),
        RunOptions {
            limits,
            ..Default::default()
        },
    );
    eval::finish(out.result)
}

pub fn eval(src: &str) -> Result<Value, Error> {
    eval_with(src, "{}", Limits::default())
}

/// Assert that `src` evaluates to a value printing as `expected`.
macro_rules! assert_eval {
    ($src:expr, $expected:expr) => {{
        match $crate::util::eval($src) {
            Ok(v) => assert_eq!(ptc_lisp::value::pr_str(&v), $expected, "source: {}", $src),
            Err(e) => panic!("`{}` failed: {}", $src, e),
        }
    }};
}

/// Assert that `src` fails with an error whose code or message contains
/// `fragment`.
macro_rules! assert_fails {
    ($src:expr, $fragment:expr) => {{
        match $crate::util::eval($src) {
            Ok(v) => panic!(
                "`{}` should fail but gave {}",
                $src,
                ptc_lisp::value::pr_str(&v)
            ),
            Err(e) => {
                let text = format!("{} {}", e, e.hint().unwrap_or(""));
                assert!(
                    text.contains($fragment),
                    "`{}` failed with `{}`, expected `{}`",
                    $src,
                    text,
                    $fragment
                );
            }
        }
    }};
}

pub fn printed(v: &Value) -> String {
    pr_str(v)
}
