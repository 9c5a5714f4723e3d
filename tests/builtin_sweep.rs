//! Issue 40: every registered builtin, given large inputs, stops at a
//! short time limit (its work checks the deadline as it goes). Its own
//! test binary, so that no other test of the suite runs beside it and
//! loads the machine while it measures.

use std::time::{Duration, Instant};

use ptc_lisp::builtins::registry;
use ptc_lisp::eval::Limits;
use ptc_lisp::session::Session;

/// Within twice the limit plus half a second.
fn in_time(limit_ms: u64) -> Duration {
    Duration::from_millis(2 * limit_ms + 500)
}

/// The program an entry of the builtin table is tried with, per arity:
/// each large input (a 1M-item vector, a 1M-entry map, a 1M-character
/// string) in the first and second position, beside a function or a
/// small value.
fn large_calls(name: &str, min: usize, max: Option<usize>) -> Vec<String> {
    let shapes: [&[&str]; 7] = [
        &["v"],
        &["m"],
        &["s"],
        &["identity", "v"],
        &["m", "m"],
        &["s", "\"a\""],
        &["+", "0", "v"],
    ];
    shapes
        .iter()
        .filter(|args| args.len() >= min && max.is_none_or(|m| args.len() <= m))
        .map(|args| format!("(do ({name} {}) 1)", args.join(" ")))
        .collect()
}

/// Builtins left out of the sweep, and why.
const NOT_SWEPT: &[(&str, &str)] = &[
    ("println", "prints (the output limit has its own tests)"),
    ("print", "prints"),
    ("prn", "prints"),
    ("pr", "prints"),
];

/// Every registered builtin, called on large inputs under a 200 ms limit,
/// ends (with a result or any error) within twice the limit plus half a
/// second: its work checks the deadline as it goes. A call over that is
/// run once more (a loaded machine can stall any call once); late twice,
/// it fails the test.
#[test]
fn every_builtin_on_a_large_input_stops_at_a_short_time_limit() {
    let mut session = Session::new().with_limits(Limits {
        timeout: Duration::from_secs(60),
        ..Limits::default()
    });
    let setup = session.eval(
        "(def v (vec (range 1000000)))
         (def m (zipmap v v))
         (def s (apply str (repeat 1000000 \"a\")))
         1",
    );
    assert!(setup.error().is_none(), "{:?}", setup.error());
    session.set_limits(Limits {
        timeout: Duration::from_millis(200),
        ..Limits::default()
    });
    let mut slowest = (Duration::ZERO, String::new());
    let mut late = Vec::new();
    let mut runs = 0;
    for b in registry().iter() {
        if NOT_SWEPT.iter().any(|(n, _)| *n == b.name) {
            continue;
        }
        for call in large_calls(b.name, b.min_args, b.max_args) {
            let started = Instant::now();
            session.eval(&call);
            let took = started.elapsed();
            runs += 1;
            if took > slowest.0 {
                slowest = (took, call.clone());
            }
            if took >= in_time(200) {
                let again = Instant::now();
                session.eval(&call);
                let took_again = again.elapsed();
                if took_again < in_time(200) {
                    continue;
                }
                eprintln!("late: `{call}` took {took:?}, then {took_again:?}");
                late.push(format!("`{call}` took {took:?}, then {took_again:?}"));
            }
        }
    }
    eprintln!(
        "builtin sweep: {runs} calls; slowest {:?} (`{}`)",
        slowest.0, slowest.1
    );
    assert!(runs > 300, "the sweep ran {runs} calls");
    assert!(
        late.is_empty(),
        "over twice the 200 ms limit plus 0.5 s:\n{}",
        late.join("\n")
    );
}
