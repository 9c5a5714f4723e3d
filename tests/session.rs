//! Sessions: namespaces, turns, transactions. Tests are named after the
//! requirement IDs of seed 000 they check.

use std::sync::{Arc, Mutex};

use ptc_lisp::error::ErrorKind;
use ptc_lisp::eval::Limits;
use ptc_lisp::session::{Session, ToolError, Turn, TurnOutcome};
use ptc_lisp::value::{pr_str, Value};

use crate::compression::{run, shop, user};

fn ok(session: &mut Session, program: &str) -> String {
    let turn = session.eval(program);
    match turn.error() {
        Some(e) => panic!("`{program}` failed: {e}"),
        None => pr_str(turn.result().unwrap()),
    }
}

fn err(session: &mut Session, program: &str) -> (String, String) {
    let turn = session.eval(program);
    match turn.error() {
        Some(e) => (e.code.clone(), e.to_string()),
        None => panic!(
            "`{program}` should fail, gave {}",
            pr_str(turn.result().unwrap())
        ),
    }
}

/// A session with a recording `fetch-users` tool.
fn users_session() -> (Session, Arc<Mutex<Vec<String>>>) {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let seen = calls.clone();
    let mut s = crate::util::session();
    s.register_tool(
        "fetch-users",
        "(role :string) -> [{name :string}]",
        "Users with a role",
        move |args| {
            let role = args.str("role").unwrap_or_default().to_string();
            seen.lock().unwrap().push(role.clone());
            Ok(Value::vector([Value::map(
                [(Value::keyword("name"), Value::from(format!("{role}-1")))]
                    .into_iter()
                    .collect(),
            )]))
        },
    )
    .unwrap();
    (s, calls)
}

#[test]
fn ns_001_tool_namespace_calls_host_tools() {
    let (mut s, calls) = users_session();
    assert_eq!(
        ok(&mut s, "(tool/fetch-users \"admin\")"),
        "[{:name \"admin-1\"}]"
    );
    assert_eq!(*calls.lock().unwrap(), ["admin"]);
    let turn = s.turns().last().unwrap();
    assert_eq!(turn.tool_calls.len(), 1);
    assert_eq!(turn.tool_calls[0].name, "fetch-users");
    assert_eq!(pr_str(&turn.tool_calls[0].args[0]), "\"admin\"");
}

#[test]
fn ns_002_data_namespace_is_read_only_input() {
    let mut s = shop();
    assert_eq!(ok(&mut s, "(count data/products)"), "7");
    let (code, text) = err(&mut s, "(def data/products [])");
    assert_eq!(code, "validation-error", "{text}");
    assert_eq!(ok(&mut s, "(:name (first data/products))"), "\"Laptop\"");
}

#[test]
fn ns_003_user_namespace_grows_with_def_and_defn() {
    let mut s = crate::util::session();
    ok(&mut s, "(def x 1)");
    ok(&mut s, "(defn f [y] (+ x y))");
    let names: Vec<&str> = s.memory().iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["x", "f"]);
    assert_eq!(ok(&mut s, "(f 2)"), "3");
}

#[test]
fn ns_004_bare_name_falls_back_to_a_tool() {
    let (mut s, calls) = users_session();
    assert_eq!(ok(&mut s, "(count (fetch-users \"ops\"))"), "1");
    assert_eq!(*calls.lock().unwrap(), ["ops"]);
}

#[test]
fn ns_005_bare_name_falls_back_to_data() {
    let mut s = shop();
    assert_eq!(ok(&mut s, "(count products)"), "7");
}

#[test]
fn ns_006_local_definitions_take_precedence_over_fallback() {
    let mut s = shop();
    ok(&mut s, "(def products [1 2])");
    assert_eq!(ok(&mut s, "(count products)"), "2");
    let (mut s, calls) = users_session();
    ok(&mut s, "(defn fetch-users [r] [r r r])");
    assert_eq!(ok(&mut s, "(count (fetch-users \"x\"))"), "3");
    assert!(calls.lock().unwrap().is_empty());
}

#[test]
fn ns_007_ambiguous_reference_is_a_runtime_error() {
    let mut s = crate::util::session();
    s.register_tool("foo", "-> :int", "", |_| Ok(Value::Int(1)))
        .unwrap();
    s.set_data("foo", 2);
    let (code, text) = err(&mut s, "(+ foo 1)");
    assert_eq!(code, "ambiguous-reference");
    assert!(
        text.contains("`tool/foo`") && text.contains("`data/foo`"),
        "{text}"
    );
    // Explicit namespaces and local definitions resolve it.
    assert_eq!(ok(&mut s, "[(tool/foo) data/foo]"), "[1 2]");
    ok(&mut s, "(def foo 3)");
    assert_eq!(ok(&mut s, "foo"), "3");
}

#[test]
fn ns_009_explicit_namespace_bypasses_local_shadowing() {
    let mut s = shop();
    ok(&mut s, "(def products [])");
    assert_eq!(
        ok(&mut s, "[(count products) (count data/products)]"),
        "[0 7]"
    );
    let (mut s, calls) = users_session();
    ok(&mut s, "(def fetch-users [])");
    assert_eq!(ok(&mut s, "(count (tool/fetch-users \"a\"))"), "1");
    assert_eq!(calls.lock().unwrap().len(), 1);
}

#[test]
fn arc_001_turn_records_number_program_result_prints_tool_calls_memory_success() {
    let (mut s, _) = users_session();
    let program =
        "(def admins (fetch-users \"admin\"))\n(println \"got\" (count admins))\n(count admins)";
    let turn = s.eval(program).clone();
    assert_eq!(turn.number, 1);
    assert_eq!(turn.program, program);
    assert_eq!(pr_str(turn.result().unwrap()), "1");
    assert_eq!(turn.prints, ["got 1"]);
    assert_eq!(turn.tool_calls.len(), 1);
    assert_eq!(
        pr_str(turn.tool_calls[0].result.as_ref().unwrap()),
        "[{:name \"admin-1\"}]"
    );
    assert_eq!(
        turn.memory
            .get("admins")
            .map(|e| pr_str(&e.value))
            .as_deref(),
        Some("[{:name \"admin-1\"}]")
    );
    assert!(turn.success);
    assert_eq!(turn.defined, ["admins"]);
    let turn = s.eval("(first 5)");
    assert_eq!((turn.number, turn.success), (2, false));
    assert!(turn.result().is_none() && turn.error().is_some());
}

#[test]
fn arc_002_turns_are_append_only_snapshots() {
    let mut s = shop();
    ok(&mut s, "(def x 1)");
    let first: Turn = s.turns()[0].clone();
    ok(&mut s, "(def x 2)");
    err(&mut s, "(undefined-thing)");
    ok(&mut s, "(def y x)");
    assert_eq!(s.turns().len(), 4);
    assert_eq!(s.turns()[0], first, "turn 1 is not changed by later turns");
    assert_eq!(pr_str(&s.turns()[0].memory.get("x").unwrap().value), "1");
    let numbers: Vec<usize> = s.turns().iter().map(|t| t.number).collect();
    assert_eq!(numbers, [1, 2, 3, 4]);
}

#[test]
fn arc_007_session_turns_hold_the_whole_trace() {
    let mut s = shop();
    run(
        &mut s,
        &[
            (crate::compression::T1_EXPLORE, true),
            (crate::compression::T2_PRINT, true),
        ],
    );
    let turns = s.turns();
    assert_eq!(turns[0].program, crate::compression::T1_EXPLORE);
    assert_eq!(turns[0].tool_calls.len(), 2);
    assert_eq!(turns[1].prints.len(), 2);
    assert!(turns
        .iter()
        .all(|t| t.duration.as_nanos() > 0 && t.steps > 0));
}

#[test]
fn dbg_001_full_programs_are_preserved_in_turns() {
    let mut s = shop();
    let long = format!("(def xs [{}])\n(println (count xs))", "1 ".repeat(500));
    ok(&mut s, &long);
    err(&mut s, "(this is (not valid");
    assert_eq!(s.turns()[0].program, long);
    assert_eq!(s.turns()[1].program, "(this is (not valid");
    assert_eq!(s.turns()[1].error().unwrap().code, "parse-error");
}

#[test]
fn dbg_002_serialized_turn_has_the_documented_fields() {
    let mut s = shop();
    ok(
        &mut s,
        "(def n (count data/products)) (println n) (tool/get-inventory)",
    );
    let json = serde_json::to_value(&s.turns()[0]).unwrap();
    for field in [
        "number",
        "program",
        "outcome",
        "prints",
        "tool_calls",
        "memory",
        "success",
    ] {
        assert!(json.get(field).is_some(), "missing `{field}` in {json}");
    }
    assert_eq!(json["outcome"]["kind"], "value");
    assert_eq!(json["memory"][0]["name"], "n");
    assert_eq!(json["memory"][0]["value"], 7);
    assert_eq!(json["tool_calls"][0]["result"]["map"][0][0]["kw"], "Laptop");
}

#[test]
fn dbg_003_turns_round_trip_through_json() {
    let mut s = shop();
    run(
        &mut s,
        &[
            (crate::compression::T1_EXPLORE, true),
            (crate::compression::T2_PRINT, true),
            (
                "(def ks #{:a :b}) (def l '(1 2)) (def f 1.5) (return {1 [nil true]})",
                true,
            ),
            (crate::compression::T_TYPE_ERROR, false),
        ],
    );
    let text = serde_json::to_string_pretty(s.turns()).unwrap();
    let back: Vec<Turn> = serde_json::from_str(&text).unwrap();
    assert_eq!(serde_json::to_string_pretty(&back).unwrap(), text);
    // Data compares equal; functions cannot (they compare by identity).
    for (a, b) in s.turns().iter().zip(&back) {
        assert_eq!(a.program, b.program);
        assert_eq!(a.outcome, b.outcome);
        assert_eq!(a.tool_calls, b.tool_calls);
        assert_eq!(a.prints, b.prints);
        for (x, y) in a.memory.iter().zip(b.memory.iter()) {
            assert_eq!(pr_str(&x.value), pr_str(&y.value));
            if !x.value.is_fn() {
                assert_eq!(x, y);
            }
        }
    }
    assert!(matches!(back[2].outcome, TurnOutcome::Return { .. }));
    assert_eq!(back[2].memory.get("ks").unwrap().value.type_name(), "set");
    assert_eq!(back[2].memory.get("l").unwrap().value.type_name(), "list");
    // The compressed prompt is the same from the restored turns.
    let ctx = crate::compression::ctx(&s, 6);
    use ptc_lisp::compression::Compression;
    let a = ptc_lisp::compression::SingleUserCoalesced.to_messages(s.turns(), s.memory(), &ctx);
    let b = ptc_lisp::compression::SingleUserCoalesced.to_messages(&back, &back[3].memory, &ctx);
    assert_eq!(a, b);
}

#[test]
fn dbg_003_a_restored_closure_cannot_be_called_but_does_not_panic() {
    let mut s = crate::util::session();
    ok(&mut s, "(defn twice [x] (* 2 x))");
    let text = serde_json::to_string(&s.turns()[0].memory).unwrap();
    let memory: ptc_lisp::session::Memory = serde_json::from_str(&text).unwrap();
    let f = memory.get("twice").unwrap().value.clone();
    let mut other = crate::util::session();
    other.set_data("f", f);
    let (code, text) = err(&mut other, "(data/f 2)");
    assert_eq!(code, "execution-error");
    assert!(text.contains("restored from a transcript"), "{text}");
}

#[test]
fn def_001_redefinition_within_a_turn_keeps_only_the_final_value() {
    let mut s = crate::util::session();
    ok(&mut s, "(def x 1) (def x 2)");
    assert_eq!(s.memory().len(), 1);
    assert_eq!(s.turns()[0].defined, ["x"]);
    let text = user_of(&s);
    assert!(
        text.contains("\nx                                ; = integer, sample: 2\n"),
        "{text}"
    );
    assert_eq!(text.matches("\nx ").count(), 1);
}

fn user_of(s: &Session) -> String {
    user(s, 5)
}

#[test]
fn def_002_redefinition_across_turns_latest_wins() {
    let mut s = crate::util::session();
    ok(&mut s, "(def x 1)");
    ok(&mut s, "(def x \"two\")");
    assert_eq!(pr_str(&s.memory().get("x").unwrap().value), "\"two\"");
    let text = user_of(&s);
    assert!(text.contains("; = string, sample: \"two\""), "{text}");
    assert!(!text.contains("integer"), "{text}");
}

#[test]
fn def_003_def_nil_shows_nil() {
    let mut s = crate::util::session();
    ok(&mut s, "(def x nil)");
    assert!(user_of(&s).contains("\nx                                ; = nil\n"));
}

/// DEF-004 says `list[0]`; a vector is labelled `vector[0]` (see the
/// TYP-001 note in tests/compression.rs).
#[test]
fn def_004_def_empty_vector_shows_vector_0() {
    let mut s = crate::util::session();
    ok(&mut s, "(def x [])");
    assert!(user_of(&s).contains("\nx                                ; = vector[0]\n"));
}

#[test]
fn def_005_def_and_defn_both_take_docstrings() {
    let mut s = crate::util::session();
    ok(
        &mut s,
        "(def limit \"Max rows\" 10) (defn top \"First n rows\" [n] (take n [1 2 3]))",
    );
    assert_eq!(
        s.memory().get("limit").unwrap().doc.as_deref(),
        Some("Max rows")
    );
    assert_eq!(
        s.memory().get("top").unwrap().doc.as_deref(),
        Some("First n rows")
    );
    let text = user_of(&s);
    assert!(
        text.contains("limit                            ; \"Max rows\" = integer, sample: 10"),
        "{text}"
    );
    assert!(
        text.contains("(top [n])                        ; \"First n rows\""),
        "{text}"
    );
}

#[test]
fn def_006_docstrings_are_captured_at_execution_time() {
    let mut s = crate::util::session();
    ok(&mut s, "(if false (def x \"never\" 1) (def x \"taken\" 2))");
    assert_eq!(s.memory().get("x").unwrap().doc.as_deref(), Some("taken"));
    ok(&mut s, "(def x \"replaced\" 3)");
    assert_eq!(
        s.memory().get("x").unwrap().doc.as_deref(),
        Some("replaced")
    );
    // A failed turn's docstrings are rolled back with its definitions.
    err(&mut s, "(def x \"lost\" 4) (first 5)");
    assert_eq!(
        s.memory().get("x").unwrap().doc.as_deref(),
        Some("replaced")
    );
}

#[test]
fn def_007_semicolons_are_removed_from_docstrings() {
    let mut s = crate::util::session();
    ok(
        &mut s,
        "(defn f \"Adds; then ;; doubles\n  twice\" [x] (* 2 x))",
    );
    let text = user_of(&s);
    assert!(
        text.contains("(f [x])                          ; \"Adds then doubles twice\""),
        "{text}"
    );
    // The raw docstring stays in the turn record.
    assert!(s
        .memory()
        .get("f")
        .unwrap()
        .doc
        .as_deref()
        .unwrap()
        .contains(';'));
}

#[test]
fn def_008_definitions_from_all_previous_turns_are_shown() {
    let mut s = crate::util::session();
    ok(&mut s, "(def a 1)");
    ok(&mut s, "(def b 2)");
    ok(&mut s, "(def c 3)");
    let text = user_of(&s);
    for name in ["a", "b", "c"] {
        assert!(
            text.contains(&format!(
                "\n{name}                                ; = integer"
            )),
            "{text}"
        );
    }
}

#[test]
fn def_009_definitions_appear_in_order_of_definition() {
    let mut s = crate::util::session();
    ok(&mut s, "(def zeta 1) (defn alpha [] 2)");
    ok(&mut s, "(def mid 3) (def zeta 4)");
    let text = user_of(&s);
    let pos = |n: &str| text.find(n).unwrap_or_else(|| panic!("{n} in {text}"));
    assert!(
        pos("\nzeta") < pos("\n(alpha") && pos("\n(alpha") < pos("\nmid"),
        "{text}"
    );
}

#[test]
fn trn_008_each_println_call_is_captured_in_the_turn() {
    let mut s = crate::util::session();
    ok(
        &mut s,
        "(println \"a\" 1) (doseq [i [2 3]] (println i)) (println)",
    );
    assert_eq!(s.turns()[0].prints, ["a 1", "2", "3", ""]);
}

#[test]
fn trn_009_multiline_println_is_one_call() {
    let mut s = crate::util::session();
    ok(&mut s, "(println \"one\\ntwo\\nthree\")");
    assert_eq!(s.turns()[0].prints, ["one\ntwo\nthree"]);
}

#[test]
fn trn_011_println_output_is_truncated_per_call() {
    let mut s = crate::util::session();
    ok(
        &mut s,
        "(println (apply str (map (fn [_] \"x\") (range 2500)))) (println \"short\")",
    );
    let prints = &s.turns()[0].prints;
    assert_eq!(prints[0].chars().count(), 2003);
    assert!(prints[0].ends_with("x..."));
    assert_eq!(prints[1], "short");
    let mut s = Session::new().with_limits(Limits {
        println_truncate: 10,
        ..crate::util::relaxed()
    });
    ok(&mut s, "(println \"0123456789abc\")");
    assert_eq!(s.turns()[0].prints, ["0123456789..."]);
}

#[test]
fn session_a_failed_turn_changes_no_definition() {
    let mut s = crate::util::session();
    ok(&mut s, "(def x 1)");
    let (code, _) = err(&mut s, "(def x 2) (def y 3) (first 5)");
    assert_eq!(code, "type-error");
    assert_eq!(ok(&mut s, "x"), "1");
    assert!(s.memory().get("y").is_none());
    assert!(s.turns()[1].defined.is_empty());
    assert_eq!(s.turns()[1].memory, s.turns()[0].memory);
}

#[test]
fn session_star_1_2_3_hold_the_last_successful_results() {
    let mut s = crate::util::session();
    ok(&mut s, "1");
    ok(&mut s, "2");
    err(&mut s, "(first 5)");
    ok(&mut s, "3");
    assert_eq!(ok(&mut s, "[*1 *2 *3]"), "[3 2 1]");
    assert_eq!(ok(&mut s, "*1"), "[3 2 1]");
}

#[test]
fn session_star_e_holds_the_last_error() {
    let mut s = crate::util::session();
    assert_eq!(ok(&mut s, "*e"), "nil");
    err(&mut s, "(+ 1 nil)");
    assert_eq!(
        ok(&mut s, "*e"),
        r#"{:code "type-error", :message "`+` expected a number, got nil", :line 1, :column 1}"#
    );
    // Successful turns keep it; the next error replaces it.
    ok(&mut s, "(+ 1 2)");
    assert_eq!(ok(&mut s, "(:code *e)"), r#""type-error""#);
    err(&mut s, "(undefined-fn 1)");
    assert_eq!(ok(&mut s, "(:code *e)"), r#""undefined-error""#);
    // A program can read it in a parallel branch too.
    assert_eq!(
        ok(&mut s, "(first (pmap (fn [_] (:code *e)) [1]))"),
        r#""undefined-error""#
    );
}

#[test]
fn session_return_and_fail_end_the_turn_and_are_recorded() {
    let mut s = crate::util::session();
    let t = s.eval("(def x 1) (return {:ok x}) (def y 2)");
    assert!(t.success && t.returned() && !t.failed_mission());
    assert_eq!(pr_str(t.result().unwrap()), "{:ok 1}");
    let t = s.eval("(fail \"no data\")");
    assert!(t.success && t.failed_mission());
    assert!(s.memory().get("y").is_none());
}

#[test]
fn session_limits_are_configurable_per_session() {
    let mut s = Session::new().with_limits(Limits {
        max_steps: 100,
        ..crate::util::relaxed()
    });
    let (code, _) = err(&mut s, "(loop [i 0] (if (< i 1000) (recur (inc i)) i))");
    assert_eq!(code, "step-limit-exceeded");
    s.set_limits(Limits::default());
    assert_eq!(
        ok(&mut s, "(loop [i 0] (if (< i 1000) (recur (inc i)) i))"),
        "1000"
    );
}

#[test]
fn session_tool_arguments_are_positional_or_named() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let mut s = crate::util::session();
    s.register_tool(
        "search",
        "(query :string, limit :int?) -> [:string]",
        "",
        move |args| {
            log.lock()
                .unwrap()
                .push((pr_str(&args.to_value()), args.positional().len()));
            Ok(Value::vector([]))
        },
    )
    .unwrap();
    ok(&mut s, "(tool/search \"a\")");
    ok(&mut s, "(tool/search \"b\" 2)");
    ok(&mut s, "(tool/search {:query \"c\" :limit 3})");
    assert_eq!(
        *seen.lock().unwrap(),
        [
            ("{:query \"a\"}".to_string(), 1),
            ("{:query \"b\", :limit 2}".to_string(), 2),
            ("{:query \"c\", :limit 3}".to_string(), 1)
        ]
    );
    let (code, text) = err(&mut s, "(tool/search {:qeury \"d\"})");
    assert_eq!(code, "tool-error");
    assert!(
        text.contains("unknown argument :qeury; expected :query, :limit"),
        "{text}"
    );
    assert!(
        text.contains("hint: call it as (tool/search query limit)"),
        "{text}"
    );
    let (_, text) = err(&mut s, "(tool/search)");
    assert!(
        text.contains("missing the required argument `query`"),
        "{text}"
    );
}

#[test]
fn session_tool_arguments_are_checked_against_the_signature() {
    let calls = Arc::new(Mutex::new(0));
    let count = calls.clone();
    let mut s = crate::util::session();
    s.register_tool(
        "search",
        "(query :string, limit :int?, opts {min :float, tags [:keyword]}?) -> [:string]",
        "",
        move |_| {
            *count.lock().unwrap() += 1;
            Ok(Value::vector([]))
        },
    )
    .unwrap();
    // An integer is a valid :float; nil is a valid optional argument.
    ok(&mut s, "(tool/search \"a\" nil {:min 1 :tags [:x]})");
    ok(
        &mut s,
        "(tool/search {:query \"a\" :limit 5 :opts {:min 0.5 :tags []}})",
    );
    for (program, message) in [
        (
            "(tool/search 42)",
            "Tool `search`: argument `query` expected a string, got integer 42",
        ),
        (
            "(tool/search \"a\" 2.0)",
            "Tool `search`: argument `limit` expected an integer or nil, got float 2.0",
        ),
        (
            "(tool/search {:query \"a\" :limit \"5\"})",
            "Tool `search`: argument `limit` expected an integer or nil, got string \"5\"",
        ),
        (
            "(tool/search \"a\" 1 {:min \"low\" :tags []})",
            "Tool `search`: argument `opts.min` expected a number, got string \"low\"",
        ),
        (
            "(tool/search \"a\" 1 {:min 1 :tags [:a \"b\"]})",
            "Tool `search`: argument `opts.tags[1]` expected a keyword, got string \"b\"",
        ),
        (
            "(tool/search \"a\" 1 {:tags []})",
            "Tool `search`: argument `opts.min` is missing (expected a number)",
        ),
    ] {
        let (code, text) = err(&mut s, program);
        assert_eq!(code, "tool-error", "{program}");
        assert!(text.contains(message), "{program}: {text}");
        assert!(text.contains("hint: call it as (tool/search"), "{text}");
    }
    assert_eq!(
        *calls.lock().unwrap(),
        2,
        "a rejected call never reaches the handler"
    );
}

#[test]
fn session_a_tool_result_that_breaks_its_signature_is_the_tools_error() {
    let mut s = crate::util::session();
    s.register_tool("names", "-> [:string]", "", |_| {
        Ok(Value::vector([Value::from("a"), Value::Int(2)]))
    })
    .unwrap();
    s.register_tool("total", "-> :float", "", |_| Ok(Value::Int(3)))
        .unwrap();
    let (code, text) = err(&mut s, "(tool/names)");
    assert_eq!(code, "tool-error");
    assert!(
        text.contains(
            "Tool `names` broke its own signature: it declares `-> [:string]` but returned a value that does not match (at `[1]` expected a string, got integer 2)"
        ),
        "{text}"
    );
    assert!(
        text.contains("the tool is at fault, not your program"),
        "{text}"
    );
    assert_eq!(
        s.turns()[0].tool_calls[0]
            .error
            .as_deref()
            .map(|e| e.contains("broke its own signature")),
        Some(true)
    );
    // An integer where a float is declared is fine.
    ok(&mut s, "(tool/total)");
}

#[test]
fn session_tool_errors_fail_the_turn_and_are_recorded() {
    let mut s = crate::util::session();
    s.register_tool(
        "flaky",
        "-> :any",
        "",
        |_| Err("service unavailable".into()),
    )
    .unwrap();
    let (code, text) = err(&mut s, "(tool/flaky)");
    assert_eq!(code, "tool-error");
    assert!(
        text.contains("Tool `flaky` failed: service unavailable"),
        "{text}"
    );
    let call = &s.turns()[0].tool_calls[0];
    assert_eq!(
        call.error.as_deref(),
        Some("Tool `flaky` failed: service unavailable")
    );
}

#[test]
fn session_registration_errors_are_clear() {
    let mut s = crate::util::session();
    let e = s
        .register_tool("q", "(x :strng) -> :any", "", |_| Ok(Value::Nil))
        .unwrap_err();
    assert!(e.to_string().contains("unknown type `:strng`"), "{e}");
    s.register_tool("q", "-> :any", "", |_| Ok(Value::Nil))
        .unwrap();
    let e = s
        .register_tool("q", "-> :any", "", |_| Ok(Value::Nil))
        .unwrap_err();
    assert_eq!(e, ToolError::Duplicate("q".into()));
    assert_eq!(e.to_string(), "Tool `q` is already registered");
    assert_eq!(s.tools().len(), 1);
}

#[test]
fn session_data_from_json_keeps_order_and_rejects_non_objects() {
    let mut s = crate::util::session();
    s.set_data_json(&serde_json::json!({"b": 1, "a": [1, 2]}))
        .unwrap();
    let names: Vec<&str> = s.data().iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["b", "a"]);
    let e = s.set_data_json(&serde_json::json!([1])).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type);
    assert_eq!(
        e.message(),
        "Input data must be a JSON object, got an array"
    );
}

#[test]
fn session_interrupt_stops_a_running_turn() {
    let mut s = Session::new().with_limits(Limits {
        max_steps: u64::MAX,
        timeout: std::time::Duration::from_secs(30),
        ..crate::util::relaxed()
    });
    let flag = s.interrupt_handle();
    flag.store(true, std::sync::atomic::Ordering::SeqCst);
    let (code, _) = err(&mut s, "(loop [] (recur))");
    assert_eq!(code, "interrupted");
}

#[test]
fn session_tool_args_typed_accessors_name_the_argument() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let mut s = crate::util::session();
    s.register_tool(
        "book",
        "(room :string, nights :int, rate :float, late :bool?, guest {name :string}?) -> :any",
        "",
        move |args| {
            #[derive(serde::Deserialize, Debug)]
            struct Guest {
                name: String,
            }
            let guest: Option<Guest> = args.get("guest")?;
            log.lock().unwrap().push(format!(
                "{} {} {} {:?} {:?}",
                args.str("room")?,
                args.i64("nights")?,
                args.f64("rate")?,
                args.get::<Option<bool>>("late")?,
                guest.map(|g| g.name),
            ));
            // Asking for the wrong type is the handler's own mistake, and
            // the message says which argument.
            if args.str("nights").is_ok() || args.bool("rate").is_ok() {
                return Err("typed accessors must reject other types".into());
            }
            Err(args.bool("late").unwrap_err())
        },
    )
    .unwrap();
    let (_, text) = err(&mut s, "(tool/book \"12A\" 2 99)");
    assert_eq!(*seen.lock().unwrap(), ["12A 2 99 None None"]);
    assert!(text.contains("argument `late` is missing"), "{text}");
    let (_, text) = err(
        &mut s,
        "(tool/book {:room \"1\" :nights 1 :rate 1.5 :late true :guest {:name \"Ann\"}})",
    );
    assert_eq!(seen.lock().unwrap()[1], "1 1 1.5 Some(true) Some(\"Ann\")");
    assert!(text.contains("Tool `book` failed: "), "{text}");
}

#[test]
fn session_data_from_serialize_and_json_text_are_checked() {
    #[derive(serde::Serialize)]
    struct Row {
        id: u64,
        tags: Vec<&'static str>,
    }
    let mut s = crate::util::session();
    s.set_data_from(
        "rows",
        &vec![Row {
            id: 7,
            tags: vec!["a"],
        }],
    )
    .unwrap()
    .set_data_from("raw", &serde_json::json!({"k": [1, 2]}))
    .unwrap()
    .set_data_json_str(r#"{"rate": 1.5, "names": ["x", "y"]}"#)
    .unwrap();
    assert_eq!(
        ok(&mut s, "[(:id (first data/rows)) (:tags (first data/rows)) (:k data/raw) data/rate data/names]"),
        "[7 [\"a\"] [1 2] 1.5 [\"x\" \"y\"]]"
    );
    // Exact integers: beyond 64 bits is an error with the path.
    let e = s.set_data_from("big", &vec![1u64, u64::MAX]).unwrap_err();
    assert!(e.message().contains("data/big[1]"), "{}", e.message());
    // A negative literal below the 64-bit integers (serde hands it over
    // as a float) is the same error, not a rounded float.
    let e = s
        .set_data_json_str("{\"low\": [0, -9923645517640784316]}")
        .unwrap_err();
    assert!(e.message().contains("data/low[1]"), "{}", e.message());
    assert!(e.message().contains("beyond the 64-bit"), "{}", e.message());
    let e = s.set_data_json_str("{\"a\": [1,}").unwrap_err();
    assert!(e.message().contains("not valid JSON"), "{}", e.message());
    let e = s.set_data_json_str("[1]").unwrap_err();
    assert!(
        e.message().contains("must be a JSON object"),
        "{}",
        e.message()
    );
}
