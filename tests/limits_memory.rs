//! Memory, output size and silent wrong answers (issue 40): string
//! builtins that would build far past the size limit, regex functions over
//! long texts, JSON output of shared structure, the session memory limit,
//! deep results. Each repro runs the `ptc` binary under an address-space
//! limit (`prlimit`), so an unbounded allocation fails the test instead of
//! swapping the machine, and must end with the whole answer or a clear
//! error, promptly.

use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Far above what a bounded run needs, far below what the unbounded
/// ones took (several GB).
const ADDRESS_SPACE: &str = "--as=2000000000";

/// `ptc args` (stdin `input`) under the address-space limit; its output
/// and how long it took.
fn limited(args: &[&str], input: &str) -> (Output, Duration) {
    let started = Instant::now();
    let mut child = Command::new("prlimit")
        .arg(ADDRESS_SPACE)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_ptc"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("prlimit runs ptc");
    let mut stdin = child.stdin.take().expect("piped stdin");
    let input = input.to_string();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let out = child.wait_with_output().expect("ptc ends");
    writer.join().expect("stdin writer");
    (out, started.elapsed())
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `ptc eval src` under a 1 s limit: its result line, or the error.
fn eval(src: &str) -> (Result<String, String>, Duration) {
    eval_within(src, 1000)
}

/// `ptc eval src` under a limit of `ms`.
fn eval_within(src: &str, ms: u32) -> (Result<String, String>, Duration) {
    let ms = ms.to_string();
    let (out, took) = limited(&["eval", "--timeout-ms", &ms, src], "");
    let code = out.status.code();
    assert!(
        code == Some(0) || code == Some(1),
        "`{src}` ended with {:?} (no abort or panic expected)\n{}",
        out.status,
        stderr(&out)
    );
    let outcome = if code == Some(0) {
        Ok(stdout(&out).trim_end().to_string())
    } else {
        Err(stderr(&out))
    };
    (outcome, took)
}

/// `src` fails with the memory error (not the time limit: building the
/// inputs takes most of a second in a debug build on a loaded machine, so
/// the limit is 5 s), within twice its limit plus half a second.
fn assert_memory_error(src: &str) {
    let (outcome, took) = eval_within(src, 5000);
    let err = outcome.expect_err(src);
    assert!(
        err.contains("memory") || err.contains("over the limit of 1000000"),
        "`{src}`: {err}"
    );
    assert!(
        took < Duration::from_millis(10_500),
        "`{src}` took {took:?}"
    );
}

/// A string of a million characters, and a long replacement.
const LONG: &str = "(apply str (repeat 1000000 \"a\"))";

#[test]
fn string_builtins_fail_before_building_past_the_limit() {
    for src in [
        // A long replacement for each of a million matches.
        format!("(clojure.string/replace {LONG} \"a\" (apply str (repeat 6500 \"b\")))"),
        format!("(clojure.string/replace {LONG} #\"a\" (apply str (repeat 6500 \"b\")))"),
        format!("(clojure.string/replace {LONG} #\"(a{{10}})\" (apply str (repeat 650 \"$1\")))"),
        format!("(clojure.string/replace {LONG} #\"a\" (fn [_] (apply str (repeat 6500 \"b\"))))"),
        format!("(clojure.string/replace-first {LONG} \"a\" {LONG})"),
        format!("(.replace {LONG} \"a\" \"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\")"),
        format!("(.replaceAll {LONG} \"a\" \"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\")"),
        // A long separator between many items.
        "(clojure.string/join (apply str (repeat 6500 \"b\")) (range 1000000))".to_string(),
        format!("(str/join {LONG} [1 2 3])"),
        // A long escape for each character.
        format!("(clojure.string/escape {LONG} {{\\a (apply str (repeat 6500 \"b\"))}})"),
        format!("(clojure.string/escape {LONG} (fn [_] (apply str (repeat 6500 \"b\"))))"),
        // Widths that add up.
        "(apply format (apply str (repeat 100000 \"%9999s\")) (repeat 100000 1))".to_string(),
        format!("(str {LONG} {LONG})"),
        format!("(apply str (repeat 2 {LONG}))"),
        "(clojure.string/upper-case (apply str (repeat 600000 \"ß\")))".to_string(),
    ] {
        assert_memory_error(&src);
    }
}

#[test]
fn string_builtins_under_the_limit_give_the_whole_result() {
    for (src, expected) in [
        (
            "(count (clojure.string/replace (apply str (repeat 1000 \"a\")) \"a\" \"bcd\"))",
            "3000",
        ),
        (
            "(count (clojure.string/replace (apply str (repeat 100000 \"a\")) #\"(a)\" \"$1$1\"))",
            "200000",
        ),
        (
            "(clojure.string/replace \"a.b.c\" \".\" \"--\")",
            "\"a--b--c\"",
        ),
        ("(clojure.string/replace \"abc\" \"\" \"-\")", "\"-a-b-c-\""),
        (
            "(clojure.string/replace-first \"a.b.c\" \".\" \"--\")",
            "\"a--b.c\"",
        ),
        ("(clojure.string/join \", \" [1 2 3])", "\"1, 2, 3\""),
        (
            "(clojure.string/escape \"a<b\" {\\< \"&lt;\"})",
            "\"a&lt;b\"",
        ),
        ("(format \"%5s|%-3d|\" \"x\" 7)", "\"    x|7  |\""),
        ("(clojure.string/upper-case \"straße\")", "\"STRASSE\""),
    ] {
        let (outcome, _) = eval_within(src, 20_000);
        assert_eq!(outcome.as_deref(), Ok(expected), "{src}");
    }
}

/// The repro: regex functions stopped at byte 32,768 and gave a
/// partial answer.
#[test]
fn regex_functions_search_the_whole_of_a_long_text() {
    let joined = "(clojure.string/join \",\" (range 20000))";
    for (src, expected) in [
        (
            format!("(count (clojure.string/split {joined} #\",\"))"),
            "20000",
        ),
        (format!("(count (re-seq #\"\\d+\" {joined}))"), "20000"),
        (format!("(re-find #\"19999\" {joined})"), "\"19999\""),
        (
            format!("(count (clojure.string/replace {joined} #\",\" \";;\"))"),
            "128888",
        ),
        (
            format!("(count (clojure.string/replace {joined} #\"\\d+\" (fn [m] \"x\")))"),
            "39999",
        ),
        (
            format!("(some? (re-matches #\"[\\d,]+\" {joined}))"),
            "true",
        ),
        (
            format!("(count (clojure.string/split {joined} #\",\" 19999))"),
            "19999",
        ),
        (format!("(count (re-split #\",\" {joined}))"), "20000"),
        (format!("(extract \"(19999)\" {joined})"), "\"19999\""),
    ] {
        let (outcome, _) = eval_within(&src, 20_000);
        assert_eq!(outcome.as_deref(), Ok(expected), "{src}");
    }
}

/// Patterns with lookaround or backreferences search at most 2 KiB: a
/// longer text is an error naming the cap, never a search of its start.
#[test]
fn backtracking_patterns_refuse_long_texts_naming_the_cap() {
    let long = "(apply str (repeat 3000 \"ab,\"))";
    for src in [
        format!("(count (re-seq #\"a(?=b)\" {long}))"),
        format!("(re-find #\"(a)\\1\" {long})"),
        format!("(count (clojure.string/split {long} #\",(?=a)\"))"),
        format!("(clojure.string/replace {long} #\"a(?=b)\" \"x\")"),
        format!("(re-matches #\"(?:ab,)*(?=x)\" {long})"),
    ] {
        let (outcome, took) = eval(&src);
        let err = outcome.expect_err(&src);
        assert!(
            err.contains("at most") && err.contains("bytes"),
            "{src}: {err}"
        );
        assert!(took < Duration::from_millis(2500), "`{src}` took {took:?}");
    }
    // A short text is searched as before.
    let (outcome, _) = eval("(count (re-seq #\"a(?=b)\" (apply str (repeat 300 \"ab,\"))))");
    assert_eq!(outcome.as_deref(), Ok("300"));
}

/// A pattern that scans the rest of a long text at every search ends
/// with the time limit, not a partial answer.
#[test]
fn a_quadratic_search_of_a_long_text_ends_with_the_time_limit() {
    let (outcome, took) =
        eval("(count (re-seq #\"a(?:.*b)?\" (apply str (repeat 1000000 \"a\"))))");
    match outcome {
        Ok(n) => assert_eq!(n, "1000000"),
        Err(e) => assert!(e.contains("time limit"), "{e}"),
    }
    assert!(took < Duration::from_millis(2500), "took {took:?}");
}

/// `ptc mcp-server` under the address-space limit, driven by raw
/// JSON-RPC.
struct Server {
    child: std::process::Child,
    input: std::process::ChildStdin,
    output: std::io::BufReader<std::process::ChildStdout>,
}

impl Server {
    fn start(args: &[&str]) -> Server {
        let mut child = Command::new("prlimit")
            .arg(ADDRESS_SPACE)
            .arg("--")
            .arg(env!("CARGO_BIN_EXE_ptc"))
            .arg("mcp-server")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("prlimit runs ptc mcp-server");
        let input = child.stdin.take().expect("piped stdin");
        let output = std::io::BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut server = Server {
            child,
            input,
            output,
        };
        server.send(
            &serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2024-11-05", "capabilities": {},
                       "clientInfo": {"name": "test", "version": "1"}}}),
        );
        server.answer(0);
        server.send(&serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    fn send(&mut self, message: &serde_json::Value) {
        let line = format!("{message}\n");
        self.input
            .write_all(line.as_bytes())
            .expect("the server reads");
        self.input.flush().expect("the server reads");
    }

    fn answer(&mut self, id: u64) -> serde_json::Value {
        use std::io::BufRead;
        loop {
            let mut line = String::new();
            let n = self.output.read_line(&mut line).expect("the server writes");
            assert!(
                n > 0,
                "the server closed its output waiting for {id} (it died)"
            );
            let message: serde_json::Value = serde_json::from_str(&line).expect("JSON");
            if message["id"] == serde_json::json!(id) {
                return message;
            }
        }
    }

    /// `run` with `program`: the answer's text and whether it is an error.
    fn run(&mut self, id: u64, program: &str) -> (String, bool) {
        self.send(
            &serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "run", "arguments": {"program": program}}}),
        );
        let answer = self.answer(id);
        let text = answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        (text, answer["result"]["isError"] == serde_json::json!(true))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The repro (the server died at call 226 of 300): definitions
/// persist, each adding 16 MB or more; past the session memory limit a
/// call fails with the memory error, the server goes on and earlier
/// definitions stay.
#[test]
fn the_mcp_server_keeps_to_the_session_memory_limit() {
    let mut server = Server::start(&["--max-session-memory", "300000000"]);
    let mut kept = Vec::new();
    let mut refused = 0;
    for n in 1..=60u64 {
        let (text, is_error) = server.run(n, &format!("(def v{n} (vec (range 1000000)))"));
        if is_error {
            assert!(text.contains("session memory limit"), "call {n}: {text}");
            refused += 1;
        } else {
            kept.push(n);
        }
    }
    assert!(refused > 0, "60 vectors of a million items fit in 300 MB?");
    assert!(kept.len() >= 5, "only {kept:?} were kept");
    // Earlier definitions are intact, a refused one is not defined, and
    // small work goes on.
    let first = kept[0];
    assert_eq!(server.run(100, &format!("(count v{first})")).0, "1000000");
    let (text, is_error) = server.run(101, "(def small 41)");
    assert!(!is_error, "{text}");
    assert_eq!(server.run(102, "(inc small)").0, "42");
    // Redefining frees the old value: the session can go on.
    for n in kept.iter().skip(1) {
        let (text, is_error) = server.run(200 + n, &format!("(def v{n} nil)"));
        assert!(!is_error, "{text}");
    }
    let (text, is_error) = server.run(300, "(def again (vec (range 1000000)))");
    assert!(!is_error, "{text}");
}

/// The REPL alike (piped): past the limit a definition is refused with
/// the memory error, and the ones before it are kept.
#[test]
fn the_repl_keeps_to_the_session_memory_limit() {
    let mut input: String = (1..=40)
        .map(|n| format!("(def v{n} (vec (range 1000000)))\n"))
        .collect();
    input.push_str("(count v1)\n(def small 41)\n(inc small)\n");
    let (out, _) = limited(&["--max-session-memory", "300000000"], &input);
    let (stdout, stderr) = (stdout(&out), stderr(&out));
    assert!(
        stderr.contains("session memory limit"),
        "{stderr}\n--- stdout\n{stdout}"
    );
    assert!(stdout.contains("1000000"), "{stdout}");
    assert!(stdout.trim_end().ends_with("42"), "{stdout}");
}

/// `--json` of a result that shares one 1 MB string a million times (a
/// 1 TB line if expanded), or nests 5,000 deep: the result is left out
/// with `result_cut`, the text form is cut, and the process ends at once.
#[test]
fn json_output_caps_the_result_at_max_result_bytes() {
    let shared = "(let [s (apply str (repeat 1000000 \"x\")) row (vec (repeat 1000 s))] \
                  (vec (repeat 1000 row)))";
    let deep = "(loop [x [] i 0] (if (< i 5000) (recur [x] (inc i)) x))";
    for src in [shared, deep] {
        let (out, took) = limited(&["eval", "--json", "--timeout-ms", "5000", src], "");
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let line = stdout(&out);
        assert!(line.len() < 1_200_000, "a line of {} bytes", line.len());
        let o: serde_json::Value = serde_json::from_str(&line).expect("one JSON object");
        assert_eq!(o["result_cut"], serde_json::json!(true), "{src}");
        assert_eq!(o["result"], serde_json::Value::Null);
        assert_eq!(o["result_is_json"], serde_json::json!(false));
        // The text form is cut at the same cap (the deep one fits).
        let text = o["result_text"].as_str().expect("the text form");
        assert!(text.len() < 1_100_000 && (src == deep || text.contains("result cut at")));
        assert!(took < Duration::from_millis(10_500), "took {took:?}");
    }
    // A small cap cuts a small result; one under it is whole.
    let (out, _) = limited(
        &["eval", "--json", "--max-result-bytes", "10", "(range 100)"],
        "",
    );
    let o: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(o["result_cut"], serde_json::json!(true));
    let (out, _) = limited(&["eval", "--json", "[1 {:a \"b\"}]"], "");
    let o: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(o["result"], serde_json::json!([1, {"a": "b"}]));
    assert_eq!(o["result_cut"], serde_json::json!(false));
}

/// Printing a 2M-deep vector took 1.4 GB of stack grown on the heap: the
/// printer follows 100,000 levels, shows `...` deeper in a result printed
/// after the run, and stops a program that prints deeper with the depth
/// error.
#[test]
fn printing_a_deep_value_is_bounded() {
    let deep = |n: u32| format!("(loop [x [] i 0] (if (< i {n}) (recur [x] (inc i)) x))");
    let (outcome, _) = eval_within(&deep(2_000_000), 20_000);
    let text = outcome.expect("the result prints");
    assert!(
        text.len() < 300_000 && text.contains("..."),
        "{} bytes",
        text.len()
    );
    for src in [
        format!("(count (pr-str {}))", deep(200_000)),
        format!("(count (str {}))", deep(200_000)),
    ] {
        let (outcome, _) = eval_within(&src, 20_000);
        let err = outcome.expect_err(&src);
        assert!(err.contains("100000 levels deep"), "{src}: {err}");
    }
    let (outcome, _) = eval_within(&format!("(count (pr-str {}))", deep(90_000)), 20_000);
    assert_eq!(outcome.as_deref(), Ok("180002"));
}

/// `merge` and `merge-with` of maps each under the collection limit may
/// not build one over it.
#[test]
fn merge_respects_the_collection_limit() {
    let a = "(zipmap (range 600000) (range 600000))";
    let b = "(zipmap (range 600000 1200000) (range 600000))";
    for src in [
        format!("(count (merge {a} {b}))"),
        format!("(count (merge-with + {a} {b}))"),
    ] {
        let (outcome, _) = eval_within(&src, 20_000);
        let err = outcome.expect_err(&src);
        assert!(err.contains("over the limit of 1000000"), "{src}: {err}");
    }
    let (outcome, _) = eval_within("(merge-with + {:a 1} {:a 2 :b 3})", 20_000);
    assert_eq!(outcome.as_deref(), Ok("{:a 3, :b 3}"));
}

/// Smaller findings: an error quotes at most 200 characters of its input
/// (a 100,000-digit literal gave a 100 KB error); `json/parse-string` of
/// an integer past 64 bits is refused as `--data` refuses it (it became a
/// float with another value).
#[test]
fn errors_quote_input_with_a_cap_and_json_refuses_huge_integers() {
    let digits = "1".repeat(100_000);
    let (outcome, _) = eval(&digits);
    let err = outcome.expect_err("a huge literal");
    assert!(err.len() < 1000, "an error of {} bytes", err.len());
    assert!(err.contains("... (99800 more)"), "{err}");
    let (outcome, _) = eval("(json/parse-string \"{\\\"a\\\": 123456789012345678901234567890}\")");
    let err = outcome.expect_err("a huge integer");
    assert!(err.contains("beyond the 64-bit integers"), "{err}");
    let (outcome, _) = eval("(json/parse-string \"{\\\"a\\\": 12, \\\"b\\\": 1.5e30}\")");
    assert_eq!(outcome.as_deref(), Ok("{\"a\" 12, \"b\" 1.5E30}"));
}

/// A keyword made from a JSON key that is no keyword name prints as the
/// call that makes it, never as code (`{:a (println "INJECTED") b 1}`).
#[test]
fn keywords_from_json_keys_print_readably() {
    let (outcome, _) = eval(
        "(json/parse-string \"{\\\"a (println \\\\\\\"INJECTED\\\\\\\") b\\\": 1, \\\"c\\\": 2}\" true)",
    );
    assert_eq!(
        outcome.as_deref(),
        Ok("{(keyword \"a (println \\\"INJECTED\\\") b\") 1, :c 2}")
    );
}
