//! Each resource limit ends the program with its own error kind.

use std::time::Duration;

use ptc_lisp::error::ErrorKind;
use ptc_lisp::eval::Limits;

use crate::util::eval_with;

fn kind_of(src: &str, limits: Limits) -> ErrorKind {
    match eval_with(src, "{}", limits) {
        Ok(v) => panic!(
            "`{src}` should hit a limit, gave {}",
            crate::util::printed(&v)
        ),
        Err(e) => e.kind(),
    }
}

#[test]
fn timeout_stops_an_endless_loop() {
    let limits = Limits {
        timeout: Duration::from_millis(50),
        max_steps: u64::MAX,
        ..Limits::default()
    };
    assert_eq!(kind_of("(loop [] (recur))", limits), ErrorKind::Timeout);
}

#[test]
fn step_budget_stops_long_work() {
    let limits = Limits {
        max_steps: 1_000,
        ..Limits::default()
    };
    assert_eq!(
        kind_of(
            "(loop [i 0] (if (< i 5000) (recur (inc i)) i))",
            limits.clone()
        ),
        ErrorKind::StepLimit
    );
    assert!(eval_with(
        "(loop [i 0] (if (< i 500) (recur (inc i)) i))",
        "{}",
        limits
    )
    .is_ok());
}

#[test]
fn default_steps_allow_a_million_iterations() {
    let v = eval_with(
        "(loop [i 0 acc 0] (if (< i 1000000) (recur (inc i) (+ acc i)) acc))",
        "{}",
        Limits {
            timeout: Duration::from_secs(60),
            ..Limits::default()
        },
    )
    .unwrap();
    assert_eq!(crate::util::printed(&v), "499999500000");
}

#[test]
fn deep_recursion_is_a_clean_error() {
    let src = "(defn down [n] (if (zero? n) 0 (inc (down (dec n))))) (down 100000)";
    assert_eq!(kind_of(src, crate::util::relaxed()), ErrorKind::DepthLimit);
    assert!(eval_with(
        "(defn down [n] (if (zero? n) 0 (inc (down (dec n))))) (down 900)",
        "{}",
        crate::util::relaxed()
    )
    .is_ok());
}

#[test]
fn deep_recursion_is_safe_on_a_small_thread_stack() {
    let handle = std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(|| {
            let limits = Limits {
                max_depth: 5_000,
                ..crate::util::relaxed()
            };
            let src = "(defn down [n] (if (zero? n) 0 (inc (down (dec n))))) (down 4000)";
            let ok = eval_with(src, "{}", limits.clone()).map(|v| crate::util::printed(&v));
            let deep = "(defn down [n] (if (zero? n) 0 (inc (down (dec n))))) (down 100000)";
            (ok, eval_with(deep, "{}", limits).map_err(|e| e.kind()))
        })
        .unwrap();
    let (ok, deep) = handle.join().expect("no stack overflow");
    assert_eq!(ok.unwrap(), "4000");
    assert_eq!(deep.unwrap_err(), ErrorKind::DepthLimit);
}

#[test]
fn collection_size_limit() {
    let limits = Limits {
        max_collection: 1_000,
        ..Limits::default()
    };
    assert_eq!(
        kind_of("(range 5000)", limits.clone()),
        ErrorKind::MemoryLimit
    );
    assert_eq!(
        kind_of(
            "(loop [v [] i 0] (if (< i 2000) (recur (conj v i) (inc i)) (count v)))",
            limits.clone()
        ),
        ErrorKind::MemoryLimit
    );
    assert_eq!(
        kind_of(
            "(loop [s \"x\" i 0] (if (< i 20) (recur (str s s) (inc i)) (count s)))",
            limits
        ),
        ErrorKind::MemoryLimit
    );
}

#[test]
fn output_limit() {
    let limits = Limits {
        max_output: 100,
        ..Limits::default()
    };
    assert_eq!(
        kind_of("(dotimes [i 100] (println \"0123456789\"))", limits),
        ErrorKind::OutputLimit
    );
}

#[test]
fn tool_call_limit_is_counted_per_program() {
    // With no tools, an unknown tool is an error before the limit applies.
    assert_eq!(
        kind_of("(tool/search {})", Limits::default()),
        ErrorKind::Undefined
    );
}

#[test]
fn integer_overflow_is_an_arithmetic_error() {
    assert_eq!(
        kind_of("(* 9223372036854775807 2)", Limits::default()),
        ErrorKind::Arithmetic
    );
    assert_eq!(
        kind_of("(inc 9223372036854775807)", Limits::default()),
        ErrorKind::Arithmetic
    );
}

#[test]
fn deeply_nested_values_are_safe_to_build_compare_print_and_drop() {
    let handle = std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(|| {
            let limits = Limits {
                timeout: Duration::from_secs(60),
                ..Limits::default()
            };
            let src = "(let [deep (fn [n] (loop [m [] i 0] (if (< i n) (recur [m] (inc i)) m)))
                             a (deep 50000) b (deep 50000)
                             chain (loop [f identity i 0] (if (< i 50000) (recur (fn [x] (f x)) (inc i)) f))
                             nested-map (loop [m {} i 0] (if (< i 50000) (recur {:a m} (inc i)) m))]
                         [(= a b) (count (set [a b])) (compare a b) (count (str nested-map)) (fn? chain)])";
            eval_with(src, "{}", limits).map(|v| crate::util::printed(&v))
        })
        .unwrap();
    let result = handle.join().expect("no stack overflow");
    assert_eq!(result.unwrap(), "[true 1 0 250002 true]");
}

#[test]
fn hashing_and_comparing_values_with_huge_shared_structure_stay_bounded() {
    // 2^60 leaves, shared: hashing every node would never finish.
    let src = "(let [v (loop [v [1] i 0] (if (< i 60) (recur [v v] (inc i)) v))
                     w (loop [v [1] i 0] (if (< i 60) (recur [v v] (inc i)) v))]
                 [(= v w) (count (set (conj (vec (range 10)) v w))) (count (frequencies (repeat 9 v)))])";
    // Not about time: a never-ending hash would still fail, at the
    // relaxed limit instead of the default second (which a busy machine
    // can use up).
    let v = eval_with(src, "{}", crate::util::relaxed()).unwrap();
    assert_eq!(crate::util::printed(&v), "[true 11 1]");
}

/// The `ptc` binary evaluates on its main thread, whose stack the
/// evaluator measures from the process's own start (`src/stack.rs`), not
/// from `/proc/self/maps`. Under stack limits from 512 KiB up, deeply
/// nested values and deep recursion must still move onto new stack
/// segments in time: a wrong measure is a crash, not an error.
#[cfg(target_os = "linux")]
#[test]
fn the_main_thread_measures_its_stack_under_any_stack_limit() {
    let program = "(let [deep (loop [m [] i 0] (if (< i 50000) (recur [m] (inc i)) m))
                         nested-map (loop [m {} i 0] (if (< i 50000) (recur {:a m} (inc i)) m))]
                     (defn down [n] (if (zero? n) 0 (inc (down (dec n)))))
                     [(= deep deep) (count (str deep)) (count (str nested-map)) (down 999)])";
    for limit in ["512", "2048", "8192", "unlimited"] {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "ulimit -s {limit} && exec \"$0\" eval --timeout-ms 120000 \"$1\""
            ))
            .arg(env!("CARGO_BIN_EXE_ptc"))
            .arg(program)
            .output()
            .expect("sh runs");
        assert!(
            out.status.success(),
            "ulimit -s {limit}: {:?}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            "[true 100002 250002 999]",
            "ulimit -s {limit}"
        );
    }
}
