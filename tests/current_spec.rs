//! The language of the specification's current revision (issue 16): the
//! forms and functions it added, its changed semantics, introspection,
//! and what a session adds (definitions shadowing builtins across turns,
//! keyword-pair tool calls, `data/` key fallbacks).

use ptc_lisp::session::Session;
use ptc_lisp::value::{pr_str, Value};

fn ok(s: &mut Session, program: &str) -> String {
    let turn = s.eval(program);
    match turn.result() {
        Some(v) => pr_str(v),
        None => panic!("`{program}` failed: {:?}", turn.error()),
    }
}

fn err(s: &mut Session, program: &str) -> String {
    let turn = s.eval(program);
    match turn.error() {
        Some(e) => format!("{} {}", e.message, e.hint.clone().unwrap_or_default()),
        None => panic!("`{program}` should fail, gave {:?}", turn.result()),
    }
}

#[test]
fn new_regex_functions() {
    assert_eval!("(re-split #\"\\s+\" \"a  b   c\")", "[\"a\" \"b\" \"c\"]");
    assert_eval!("(re-split \",\" \"a,b,,\")", "[\"a\" \"b\"]");
    assert_eval!("(extract \"ID:(\\\\d+)\" \"ID:42\")", "\"42\"");
    assert_eval!("(extract #\"(a)(b)?\" \"a\" 2)", "nil");
    assert_eval!("(extract \"x\" nil)", "nil");
    assert_eval!("(extract-int \"n=(-?\\\\d+)\" \"n=-7\")", "-7");
    assert_eval!("(extract-int \"n=(\\\\w+)\" \"n=abc\" 1 0)", "0");
    assert_eval!("(regex/re-find #\"\\d\" \"a1\")", "\"1\"");
    // `split` takes a regex; a separator of several characters is a type
    // error that shows the regex to write.
    assert_fails!("(split \"a--b\" \"--\")", "(split s #\"--\")");
    assert_fails!("(split \"a.b\" \"..\")", "#\"\\.\\.\"");
    assert_eval!("(split \"a,b\" \",\")", "[\"a\" \"b\"]");
}

#[test]
fn changed_semantics() {
    assert_eval!("(case :z :a 1)", "nil");
    assert_eval!("(condp = :z :a 1)", "nil");
    assert_eval!("(def x 42) [#'x (var x)]", "[42 42]");
    assert_fails!("(var nope)", "Undefined symbol `nope`");
    assert_eval!("(for [x [1 2]] (* x 2) (* x 10))", "[10 20]");
    assert_fails!("(for [x [1 2]])", "needs a body");
    assert_eval!(
        "[(even? 4.0) (odd? 3.0) (even? 4.5) (odd? ##Inf)]",
        "[true true false false]"
    );
    assert_eval!(
        "[(coll? {}) (coll? #{}) (coll? \"a\")]",
        "[true true false]"
    );
    assert_eval!("(flatten [1 #{2} {:a 3} [4]])", "[1 #{2} {:a 3} 4]");
    assert_eval!("(int ##NaN)", "0");
    assert_fails!("(int \"5\")", "`int` expected a number");
    assert_fails!("(int ##-Inf)", "arithmetic");
    assert_fails!("(/ 1 0)", "Divide by zero");
    assert_fails!("(/ 4 2 0)", "Divide by zero");
    assert_eval!("[(/ 1.0 0) (/ 1 0.0) (/ -1 0.0)]", "[##Inf ##Inf ##-Inf]");
    assert_fails!("(keyword \"a/b\")", "cannot make a keyword");
    assert_fails!("(keyword \"\")", "cannot make a keyword");
    assert_fails!("(keyword \"+\")", "cannot make a keyword");
    assert_eval!(
        "[(keyword \"ok-name?\") (keyword nil) (keyword :k)]",
        "[:ok-name? nil :k]"
    );
    assert_eval!(
        "[(type 1) (type 1.5) (type nil) (type [])]",
        "[:number :number nil :vector]"
    );
    // An unknown string escape is kept as written (§3.4).
    assert_eval!("(count \"a\\qb\")", "4");
    assert_eval!("(re-find (re-pattern \"\\d+\") \"ab12\")", "\"12\"");
}

#[test]
fn find_is_associative_with_the_predicate_form_kept() {
    assert_eval!("(find [10 20 30] 2)", "[2 30]");
    assert_eval!(
        "[(find [10 20] 5) (find [10 20] -1) (find nil :a)]",
        "[nil nil nil]"
    );
    assert_eval!("(find {:a nil} :a)", "[:a nil]");
    assert_eval!("(find even? [1 4 5])", "4");
    assert_eval!("(find :ok [{:ok false} {:ok 1}])", "{:ok 1}");
    assert_fails!("(find \"abc\" 1)", "`find` expected a map or vector");
}

#[test]
fn zero_step_range_is_bounded_by_take() {
    assert_eval!("(take 3 (range 1 5 0))", "[1 1 1]");
    assert_eval!("(->> (range 5 1 0) (take 2))", "[5 5]");
    assert_eval!("(take 3 (range 1 1 0))", "[]");
    assert_eval!("(take 2 (range 0 10 3))", "[0 3]");
    assert_fails!("(range 1 5 0)", "bound it with `take`");
    assert_fails!("(count (range 1 5 0))", "never end");
    // A huge bound is still subject to the collection limit.
    assert_fails!("(take 100000000 (range 1 5 0))", "memory");
}

#[test]
fn parallel_map_over_several_collections_and_hex_floats() {
    assert_eval!("(pmap + [1 2 3] [10 20])", "[11 22]");
    assert_eval!(
        "(pmap vector [1 2] [:a :b] [\"x\" \"y\"])",
        "[[1 :a \"x\"] [2 :b \"y\"]]"
    );
    assert_eval!("(Double/parseDouble \"0x1.8p0\")", "1.5");
    assert_eval!("(Double/parseDouble \" -0X.8P2d \")", "-2.0");
    assert_fails!("(Double/parseDouble \"0x1.8\")", "cannot parse");
}

#[test]
fn keyword_arguments_destructure() {
    assert_eval!(
        "(defn f [x & {:keys [by] :or {by 1}}] (* x by)) [(f 3 :by 2) (f 3) (f 3 {:by 4})]",
        "[6 3 12]"
    );
    assert_eval!("(let [[a & {:as opts}] [1 :k 2]] [a opts])", "[1 {:k 2}]");
    assert_fails!("((fn [& {:keys [a]}] a) :a)", "come in pairs");
}

#[test]
fn require_aliases_and_namespaces() {
    assert_eval!(
        "(require '[clojure.string :as s]) (s/join \"-\" (map s/upper-case [\"a\" \"b\"]))",
        "\"A-B\""
    );
    assert_eval!(
        "(ns app (:require [clojure.set :as set2])) (set2/union #{1} #{2})",
        "#{1 2}"
    );
    assert_eval!(
        "(require 'clojure.walk) (clojure.walk/postwalk identity [1])",
        "[1]"
    );
    assert_fails!(
        "(require '[clojure.data.json :as json])",
        "Namespace `clojure.data.json` is not available"
    );
    assert_fails!("(s/join [1])", "`s/join` is not available");
    // A session keeps the aliases for later turns; a failed turn's go.
    let mut s = crate::util::session();
    assert_eq!(ok(&mut s, "(require '[clojure.string :as st])"), "nil");
    assert_eq!(ok(&mut s, "(st/upper-case \"a\")"), "\"A\"");
    assert!(err(&mut s, "(require '[clojure.set :as cs]) (/ 1 0)").contains("Divide by zero"));
    assert!(err(&mut s, "(cs/union #{1} #{2})").contains("`cs/union` is not available"));
    assert_eq!(s.globals().alias("st"), Some("clojure.string"));
}

#[test]
fn definitions_shadow_builtins_within_a_program_and_across_turns() {
    assert_eval!("(defn avg [xs] :mine) (avg [1 2])", ":mine");
    // Before the definition runs, and when it never does, the builtin answers.
    assert_eval!("(if false (defn avg [xs] :mine)) (avg [1 3])", "2.0");
    assert_eval!(
        "(defn inc [x] (+ x 100)) [(inc 1) (clojure.core/inc 1)]",
        "[101 2]"
    );
    let mut s = crate::util::session();
    assert_eq!(ok(&mut s, "(defn avg [xs] (count xs))"), "#'avg");
    assert_eq!(ok(&mut s, "(avg [5 5 5])"), "3");
    assert_eq!(ok(&mut s, "(map avg [[1] [1 2]])"), "[1 2]");
    // Special forms and the data/ and tool/ prefixes cannot be taken.
    assert!(err(&mut s, "(def data/x 1)").contains("read-only"));
    assert!(err(&mut s, "(defn if [x] x)").contains("`if`"));
}

#[test]
fn tool_calls_take_keyword_pairs() {
    let mut s = crate::util::session();
    s.register_tool(
        "search",
        "(query :string, max_results :int?) -> :map",
        "Search",
        |args| Ok(Value::map(args.named().clone())),
    )
    .unwrap();
    assert_eq!(
        ok(&mut s, "(tool/search :query \"x\" :max_results 5)"),
        "{:query \"x\", :max_results 5}"
    );
    // Hyphens name the underscore parameter (the tool boundary's
    // normalization), in a map as in pairs.
    assert_eq!(
        ok(&mut s, "(tool/search {:query \"x\" :max-results 2})"),
        "{:query \"x\", :max_results 2}"
    );
    assert_eq!(
        ok(&mut s, "(tool/search :query \"y\" :max-results 1)"),
        "{:query \"y\", :max_results 1}"
    );
    assert_eq!(ok(&mut s, "(tool/search \"z\")"), "{:query \"z\"}");
    // Keywords that name no parameter are positional arguments (here a
    // keyword where the signature wants a string: a type error).
    assert!(err(&mut s, "(tool/search :nope 1)")
        .contains("argument `query` expected a string, got keyword :nope"));
    assert!(err(&mut s, "(tool/search :query \"x\" :max_results)").contains("takes 2 arguments"));
}

#[test]
fn data_keys_by_underscore_fallback_and_by_string() {
    let data = r#"{"order_items": [1, 2], "first name": "Ann", "2024": 5}"#;
    let eval = |src: &str| crate::util::eval_with(src, data, Default::default());
    assert_eq!(pr_str(&eval("data/order-items").unwrap()), "[1 2]");
    assert_eq!(pr_str(&eval("(data \"first name\")").unwrap()), "\"Ann\"");
    assert_eq!(pr_str(&eval("(data \"2024\")").unwrap()), "5");
    assert_eq!(pr_str(&eval("(data :order_items)").unwrap()), "[1 2]");
    let missing = eval("data/nope").unwrap_err();
    let hint = missing.hint().unwrap_or_default().to_string();
    assert!(hint.contains("`(data \"first name\")`"), "{hint}");
    assert!(hint.contains("`data/order_items`"), "{hint}");
    let whole = eval("(keys data)").unwrap_err();
    assert!(
        whole.to_string().contains("`data` is not a value"),
        "{whole}"
    );
    assert_eq!(pr_str(&eval("(let [data 1] data)").unwrap()), "1");
    // Keyword accessors fall back from hyphens to underscores too.
    assert_eval!("(:turn-summaries {\"turn_summaries\" 1})", "1");
    assert_eval!("(get-in {:a_b {:c 2}} [:a-b :c])", "2");
}

#[test]
fn describe_summarizes_shape() {
    assert_eval!(
        "(describe [{\"event\" \"turn\"} {\"event\" \"done\" \"ok\" true}])",
        "{:type \"vector\", :count 2, :scanned 2, :item_types {\"map\" 2}, :key_types {\"string\" 3}, :keys {\"event\" {:types {\"string\" 2}, :examples [\"turn\" \"done\"], :distinct_count 2, :present 2, :pct 100.0}, \"ok\" {:types {\"boolean\" 1}, :examples [true], :distinct_count 1, :present 1, :pct 50.0}}}"
    );
    assert_eval!(
        "(:range (get-in (describe {:n 4}) [:keys \":n\"]))",
        "{:min 4, :max 4}"
    );
    assert_eval!("(:sample (describe \"hi\"))", "\"hi\"");
    assert_eval!(
        "(keys (:paths (describe [{:u {:e 1}}] {:paths true :depth 2})))",
        "[\":u\" \":u.:e\"]"
    );
    assert_eval!("(:examples (get-in (describe [1 2 3 4 5]) [:keys]))", "nil");
    assert_eval!("(count (:examples (describe 1 {:sample 1})))", "1");
    // Caps bound the work and are reported.
    assert_eval!(
        "(:caps_hit (describe (vec (range 2000))))",
        "[\"max_items\"]"
    );
    assert_fails!("(describe [] 5)", "options map");
}

#[test]
fn introspection_in_programs() {
    let mut s = crate::util::session();
    let turn = s.eval("(doc map)").clone();
    assert_eq!(turn.result().map(pr_str).as_deref(), Some("nil"));
    assert!(
        turn.prints[0].starts_with("(map f coll"),
        "{:?}",
        turn.prints
    );
    assert!(turn
        .prints
        .join("\n")
        .contains("`(map inc [1 2])` => `[2 3]`"));
    let turn = s.eval("(doc \"when-let\")").clone();
    assert!(
        turn.prints[0].contains("(special form)"),
        "{:?}",
        turn.prints
    );
    let turn = s.eval("(doc no-such-thing)").clone();
    assert_eq!(turn.prints, ["No documentation for `no-such-thing`"]);
    assert_eq!(ok(&mut s, "(apropos \"  \")"), "[]");
    let found = ok(&mut s, "(apropos \"UPPER-c\")");
    assert!(found.contains("\"upper-case\""), "{found}");
    assert_eq!(ok(&mut s, "(dir)"), "[]");
    ok(
        &mut s,
        "(defn area \"Square area\" [w] (* w w)) (def unit 1)",
    );
    assert_eq!(ok(&mut s, "(dir)"), "[\"user\"]");
    assert_eq!(ok(&mut s, "(dir user)"), "[\"user/area\" \"user/unit\"]");
    assert!(ok(&mut s, "(apropos \"square\")").contains("\"user/area\""));
    let turn = s.eval("(source area) (source nothing)").clone();
    assert_eq!(
        turn.prints,
        [
            "(defn area \"Square area\" [w] (* w w))",
            "no source available for `nothing`"
        ]
    );
    let turn = s.eval("(doc area)").clone();
    assert_eq!(turn.prints, ["(area [w])   (user/)", "  Square area"]);
    assert_eq!(
        ok(&mut s, "(export-meta \"user/area\")"),
        "{:ref \"user/area\", :namespace \"user\", :symbol \"area\", :kind \"function\", :call \"(area w)\", :doc \"Square area\", :visibility \"public\"}"
    );
    assert_eq!(ok(&mut s, "(export-meta 'nothing)"), "nil");
    // They are functions: they compose.
    assert_eq!(
        ok(&mut s, "(map :kind (map export-meta (dir user)))"),
        "[\"function\" \"value\"]"
    );
}

/// Issue 14: every builtin and every special form documents itself with a
/// signature, a description and an example, and the special forms'
/// examples give what they say.
#[test]
fn every_builtin_and_special_form_has_signature_text_and_example() {
    use ptc_lisp::builtins::introspect::{doc_text, SPECIAL_FORMS};
    let registry = ptc_lisp::builtins::registry();
    for b in registry.iter().filter(|b| b.listed()) {
        let doc = doc_text(b.name).unwrap_or_else(|| panic!("`{}` has no doc", b.name));
        let (signature, text) = doc.split_once('\n').expect("a signature line and a text");
        assert!(signature.starts_with(&format!("({}", b.name)), "{doc}");
        assert!(
            text.trim().len() > 10 && text.contains("`("),
            "`{}`: {doc}",
            b.name
        );
    }
    for name in ptc_lisp::eval::special_forms() {
        let doc = doc_text(name).unwrap_or_else(|| panic!("special form `{name}` has no doc"));
        assert!(
            doc.contains("(special form)") && doc.contains("`("),
            "{doc}"
        );
    }
    for form in SPECIAL_FORMS {
        let result = crate::util::eval(form.example);
        match form.result {
            Some(expected) => match result {
                Ok(v) => assert_eq!(pr_str(&v), expected, "`{}`", form.example),
                Err(e) => panic!("`{}` failed: {e}", form.example),
            },
            None => assert!(result.is_err(), "`{}` should end the program", form.example),
        }
    }
}

/// `ptc ARGS` with `input` on a pipe (the piped REPL): exit code,
/// stdout, stderr.
fn piped(args: &[&str], input: &str) -> (i32, String, String) {
    let out = crate::util::ptc(args, Some(input));
    (
        out.status.code().unwrap_or(-1),
        crate::util::text(&out.stdout),
        crate::util::text(&out.stderr),
    )
}

#[test]
fn repl_doc_finds_tools_by_bare_name_and_apropos_lists_names() {
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("tools.json");
    std::fs::write(
        &tools,
        r#"{"tools": {"search": {"signature": "(query :string) -> [:string]", "description": "Search the docs", "response": []}}}"#,
    )
    .unwrap();
    let (code, out, err) = piped(
        &["--tools", tools.to_str().unwrap()],
        ":doc search\n:doc map\n:doc for\n:apropos upper-c\n:apropos the docs\n(defn f [x] x)\n(f 1)\n:doc f\n",
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("tool/search (query :string) -> [:string]\n  Search the docs"),
        "{out}"
    );
    assert!(out.contains("(map f coll"), "{out}");
    assert!(out.contains("(for [x coll"), "{out}");
    assert!(out.contains("\nupper-case\n"), "{out}");
    assert!(out.contains("tool/search"), "{out}");
    assert!(out.contains("(f [x])   (user/)"), "{out}");
    let (code, _, err) = piped(&[], ":apropos\n");
    assert_eq!(code, 1);
    assert!(err.contains("`:apropos` needs some text"), "{err}");
}

/// As in Clojure, `source` shows a definition as it was written, comments
/// and layout included, also in a later turn.
#[test]
fn source_shows_a_definition_as_written() {
    let mut s = crate::util::session();
    let program = "(defn area\n  \"Square area\" ;; w is the side\n  [w] (* w w))";
    ok(&mut s, &format!("{program} (def unit #{{1}})"));
    let turn = s.eval("(source area) (source unit)").clone();
    let mut expected: Vec<&str> = program.lines().collect();
    expected.push("(def unit #{1})");
    assert_eq!(turn.prints, expected);
}
