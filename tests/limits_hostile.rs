//! Hostile programs of issue 40 (hangs and stack overflows in the
//! interpreter): long threading forms and huge `case`/`let`/`cond` forms
//! are analyzed in linear time under the program's deadline; deep
//! threading, `for` with 20k bindings, chains of composed functions and
//! long `assoc-in` paths never overflow the stack; `--json` and signature
//! checks of shared or deep values end (every builtin given a large
//! input: tests/builtin_sweep.rs). Each repro runs the binary under an
//! address-space limit (`prlimit`) and must end cleanly (exit 0 with the
//! whole result, or exit 1 with the limit's error) within twice its limit
//! plus half a second.

use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use ptc_lisp::eval::Limits;
use ptc_lisp::session::Session;

use crate::util::text;

/// Far above what a bounded run needs, far below what a runaway takes.
const ADDRESS_SPACE: &str = "--as=6000000000";

/// `ptc eval --timeout-ms LIMIT [extra] -` with `program` on stdin, under
/// the address-space limit; its output and how long it took.
fn eval(program: &str, limit_ms: u64, extra: &[&str]) -> (Output, Duration) {
    let started = Instant::now();
    let mut child = Command::new("prlimit")
        .arg(ADDRESS_SPACE)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_ptc"))
        .args(["eval", "--timeout-ms", &limit_ms.to_string()])
        .args(extra)
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("prlimit runs ptc");
    let mut input = child.stdin.take().unwrap();
    input.write_all(program.as_bytes()).unwrap();
    drop(input);
    let out = child.wait_with_output().unwrap();
    (out, started.elapsed())
}

/// Within twice the limit plus half a second.
fn in_time(limit_ms: u64) -> Duration {
    Duration::from_millis(2 * limit_ms + 500)
}

/// `program` must print `expected`, or stop with the time limit's error,
/// within twice the limit plus half a second (a loaded debug build may be
/// slower than the limit; a release build gives the result).
fn result_or_timeout(what: &str, program: &str, limit_ms: u64, expected: &str) {
    let (out, took) = eval(program, limit_ms, &[]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    match out.status.code() {
        Some(0) => assert_eq!(stdout.trim(), expected, "{what}"),
        Some(1) => assert!(
            stderr.contains(&format!(
                "Program exceeded the time limit of {limit_ms} ms (timeout)"
            )),
            "{what}: {stderr}"
        ),
        other => panic!("{what}: exit {other:?}, stderr {stderr}"),
    }
    assert!(took < in_time(limit_ms), "{what} took {took:?}");
}

/// `program` must exit 1 with an error containing `error`, in time.
fn fails_with(what: &str, program: &str, limit_ms: u64, error: &str) {
    let (out, took) = eval(program, limit_ms, &[]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{what}: {stderr}");
    assert!(stderr.contains(error), "{what}: {stderr}");
    assert!(took < in_time(limit_ms), "{what} took {took:?}");
}

fn steps(head: &str, step: &str, n: usize) -> String {
    let mut s = String::with_capacity(n * (step.len() + 1) + 32);
    s.push_str(head);
    for _ in 0..n {
        s.push(' ');
        s.push_str(step);
    }
    s.push(')');
    s
}

#[test]
fn threading_forms_of_100k_steps_are_analyzed_in_linear_time() {
    let n = 100_000;
    let expected = (n + 1).to_string();
    for (what, program) in [
        ("some->", steps("(some-> 1", "inc", n)),
        ("some->>", steps("(some->> 1", "inc", n)),
        ("cond->", steps("(cond-> 1", "true inc", n)),
        ("cond->>", steps("(cond->> 1", "true (+ 1)", n)),
        ("as->", steps("(as-> 1 x", "(inc x)", n)),
        ("->", steps("(-> 1", "inc", n)),
        ("->>", steps("(->> 1", "(+ 1)", n)),
    ] {
        result_or_timeout(what, &program, 1000, &expected);
    }
}

#[test]
fn huge_case_cond_and_let_forms_are_analyzed_in_linear_time() {
    let n = 100_000;
    let mut case = String::from("(case 99999");
    let mut cond = String::from("(let [x 99999] (cond");
    let mut let_ = String::from("(let [a0 0");
    for i in 0..n {
        case.push_str(&format!(" {i} {}", i + 1));
        cond.push_str(&format!(" (= x {i}) {}", i + 1));
        let_.push_str(&format!(" a{} (inc a{i})", i + 1));
    }
    case.push_str(" :none)");
    cond.push_str("))");
    let_.push_str(&format!("] a{n})"));
    result_or_timeout("case", &case, 1000, "100000");
    result_or_timeout("cond", &cond, 1000, "100000");
    result_or_timeout("let", &let_, 1000, "100000");
}

/// Analysis counts toward the time limit: a program whose analysis alone
/// outlasts a short limit stops with the timeout error.
#[test]
fn analysis_runs_under_the_time_limit() {
    let program = steps("(as-> 1 x", "(inc x)", 400_000);
    let (out, took) = eval(&program, 50, &[]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("Program exceeded the time limit of 50 ms (timeout)"),
        "{stderr}"
    );
    assert!(took < in_time(50) + Duration::from_millis(500), "{took:?}");
}

#[test]
fn deep_threading_and_for_never_overflow_the_stack() {
    result_or_timeout("-> 10k", &steps("(-> 1", "inc", 10_000), 5000, "10001");
    result_or_timeout("->> 10k", &steps("(->> 1", "inc", 10_000), 5000, "10001");
    let mut for_ = String::from("(count (for [");
    for i in 0..20_000 {
        for_.push_str(&format!("x{i} [1] "));
    }
    for_.push_str("] 1))");
    result_or_timeout("for 20k bindings", &for_, 5000, "1");
}

#[test]
fn chains_of_composed_functions_count_toward_the_depth_limit() {
    let depth = "Recursion deeper than 1000 nested calls";
    fails_with("comp", "((reduce comp (repeat 30000 inc)) 0)", 5000, depth);
    for (what, wrap, start, arg) in [
        ("partial", "(partial f)", "inc", "0"),
        ("fnil", "(fnil f 0)", "inc", "0"),
        ("complement", "(complement f)", "odd?", "1"),
        ("juxt", "(juxt f)", "inc", "0"),
        ("every-pred", "(every-pred f)", "odd?", "1"),
        ("some-fn", "(some-fn f)", "odd?", "1"),
    ] {
        let program = format!("((reduce (fn [f _] {wrap}) {start} (range 10000)) {arg})");
        fails_with(what, &program, 5000, depth);
    }
    // Below the limit, a chain still runs.
    result_or_timeout(
        "comp 500",
        "((reduce comp (repeat 500 inc)) 0)",
        5000,
        "500",
    );
}

#[test]
fn long_paths_of_nested_updates_never_overflow_the_stack() {
    let path = "(repeat 100000 :a)";
    for (what, program) in [
        ("assoc-in", format!("(count (assoc-in {{}} {path} 1))")),
        (
            "update-in",
            format!("(count (update-in {{}} {path} (fnil inc 0)))"),
        ),
        (
            "get-in",
            format!("(get-in (assoc-in {{}} {path} 1) {path})"),
        ),
        (
            "pmap",
            format!("(count (pmap (fn [_] (assoc-in {{}} {path} 1)) (range 4)))"),
        ),
    ] {
        let expected = if what == "pmap" { "4" } else { "1" };
        result_or_timeout(what, &program, 10_000, expected);
    }
}

#[test]
fn json_output_of_shared_and_deep_values_ends() {
    // 2^40 leaves in 41 nodes: checked once per node, then too large.
    let bomb = "(loop [x [1] i 0] (if (< i 40) (recur [x x] (inc i)) x))";
    let mut session = Session::new().with_limits(Limits {
        timeout: Duration::from_secs(60),
        ..Limits::default()
    });
    let value = session.eval(bomb).result().unwrap().clone();
    let started = Instant::now();
    assert!(
        !ptc_lisp::value::has_json_form(&value),
        "too large for JSON"
    );
    assert!(started.elapsed() < Duration::from_secs(1));
    let small = session
        .eval("(loop [x [1] i 0] (if (< i 10) (recur [x x] (inc i)) x))")
        .result()
        .unwrap()
        .clone();
    assert!(ptc_lisp::value::has_json_form(&small));
    // Two million levels: no JSON form (writing it would recurse as deep).
    let deep = session
        .eval("(loop [v [] i 0] (if (< i 2000000) (recur [v] (inc i)) v))")
        .result()
        .unwrap()
        .clone();
    let started = Instant::now();
    assert!(!ptc_lisp::value::has_json_form(&deep));
    assert!(started.elapsed() < Duration::from_secs(1));
    // Through the binary, a deep result is shown as text (printing it
    // costs time per level, more in a debug build: a generous bound).
    let deep = "(loop [v [] i 0] (if (< i 200000) (recur [v] (inc i)) v))";
    let (out, took) = eval(deep, 20_000, &["--json"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(stdout.contains("\"result_is_json\":false"), "{stdout:.300}");
    assert!(took < Duration::from_secs(60), "{took:?}");
}

#[test]
fn signature_checks_of_shared_values_and_deep_types_end() {
    use ptc_lisp::session::typecheck::check;
    use ptc_lisp::session::Signature;
    let mut session = Session::new();
    let turn = session.eval("(loop [x [1] i 0] (if (< i 40) (recur [x x] (inc i)) x))");
    let bomb = turn.result().unwrap().clone();
    let ty = format!("{}:int{}", "[".repeat(41), "]".repeat(41));
    let sig = Signature::parse(&ty).unwrap();
    let started = Instant::now();
    assert!(check(sig.returns(), &bomb).is_ok());
    assert!(started.elapsed() < Duration::from_secs(2));
    let bad = format!("{}:string{}", "[".repeat(41), "]".repeat(41));
    let sig = Signature::parse(&bad).unwrap();
    let err = check(sig.returns(), &bomb).unwrap_err();
    assert!(err.to_string().contains("expected a string"), "{err}");
    // A type nested 100k deep is refused when parsed, not overflowed.
    let deep = format!("{}:int{}", "[".repeat(100_000), "]".repeat(100_000));
    let err = Signature::parse(&deep).unwrap_err();
    assert!(err.to_string().contains("nest deeper than 64"), "{err}");
}

/// `ptc mcp-server` survives programs that used to overflow its stack,
/// and the next call works.
#[test]
fn the_mcp_server_survives_stack_bombs() {
    use serde_json::{json, Value as Json};
    use std::io::{BufRead, BufReader};
    let mut child = Command::new(env!("CARGO_BIN_EXE_ptc"))
        .args(["mcp-server", "--timeout-ms", "5000"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start ptc mcp-server");
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap());
    let mut request = |id: u64, method: &str, params: Json| -> Json {
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(input, "{message}").unwrap();
        input.flush().unwrap();
        loop {
            let mut line = String::new();
            assert!(output.read_line(&mut line).unwrap() > 0, "server closed");
            let answer: Json = serde_json::from_str(&line).unwrap();
            if answer["id"] == json!(id) {
                return answer;
            }
        }
    };
    request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "hostile", "version": "0"}}),
    );
    let programs = [
        "((reduce comp (repeat 30000 inc)) 0)".to_string(),
        steps("(-> 1", "inc", 10_000),
        "(count (assoc-in {} (repeat 100000 :a) 1))".to_string(),
    ];
    for (i, program) in programs.iter().enumerate() {
        let answer = request(
            10 + i as u64,
            "tools/call",
            json!({"name": "run", "arguments": {"program": program}}),
        );
        assert!(answer["result"].is_object(), "{answer}");
    }
    let answer = request(
        99,
        "tools/call",
        json!({"name": "run", "arguments": {"program": "(+ 1 2)"}}),
    );
    assert_eq!(answer["result"]["content"][0]["text"], "3", "{answer}");
    let _ = child.kill();
    let _ = child.wait();
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

    /// Threading forms of any length, short (nested calls) or long (a
    /// rebound name), give the same answer as counting.
    #[test]
    fn threading_forms_of_any_length_count_their_steps(
        n in 0usize..3000,
        which in 0usize..6,
    ) {
        let (head, step) = [
            ("(-> 0", "inc"),
            ("(->> 0", "(+ 1)"),
            ("(some-> 0", "inc"),
            ("(some->> 0", "(+ 1)"),
            ("(cond-> 0", "true inc"),
            ("(as-> 0 x", "(inc x)"),
        ][which];
        let program = steps(head, step, n);
        let v = crate::util::eval(&program).unwrap();
        proptest::prop_assert_eq!(ptc_lisp::value::pr_str(&v), n.to_string());
    }
}

/// Issue 40: date methods given huge numbers or far dates end with an
/// error naming the range (exit 1), never an overflow panic (exit 101).
#[test]
fn date_methods_with_huge_arguments_fail_cleanly() {
    for (program, error) in [
        (
            "(.plusDays \"2024-01-01\" 9223372036854775807)",
            "past the range of dates",
        ),
        (
            "(.minusDays \"2024-01-01\" -9223372036854775808)",
            "past the range of dates",
        ),
        (
            "(reduce (fn [d _] (.plusDays d 100000000000)) \"2024-01-01\" (range 10))",
            "past the range of dates",
        ),
        (
            "(Instant/parse \"999999999-12-31T23:59:59Z\")",
            "too far from 1970",
        ),
        (
            "(java.util.Date. \"-999999999-01-01\")",
            "too far from 1970",
        ),
    ] {
        fails_with(program, program, 1000, error);
    }
}
