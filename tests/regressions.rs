//! Regression tests for evaluator and builtin bugs found by the
//! conformance suites (spec examples and the Clojure differential corpus).
//! Each test is named after what broke.

/// `range` computed float items as `start + i*step` and converted every
/// item to a float when any argument was one. Clojure adds `step` to the
/// previous item: an integer start stays an integer, and rounding
/// accumulates (so `(range 0 1 0.1)` has 11 items).
#[test]
fn range_with_float_step_accumulates_like_clojure() {
    assert_eval!(
        "(range 0 1 0.1)",
        "[0 0.1 0.2 0.30000000000000004 0.4 0.5 0.6 0.7 0.7999999999999999 0.8999999999999999 0.9999999999999999]"
    );
    assert_eval!("(range 0 1 0.25)", "[0 0.25 0.5 0.75]");
    assert_eval!("(range 0.5 3)", "[0.5 1.5 2.5]");
    assert_eval!("(range 3 0 -0.5)", "[3 2.5 2.0 1.5 1.0 0.5]");
}

#[test]
fn range_keeps_integer_items_when_only_end_is_float() {
    assert_eval!("(range 1 2.5)", "[1 2]");
    assert_eval!("(range 2.5)", "[0 1 2]");
}

/// Integer ranges went through `f64`, losing precision above 2^53.
#[test]
fn range_of_large_integers_is_exact() {
    assert_eval!(
        "(range 9007199254740993 9007199254740995)",
        "[9007199254740993 9007199254740994]"
    );
    assert_eval!(
        "(range 9223372036854775806 9223372036854775807 5)",
        "[9223372036854775806]"
    );
    assert_eval!("(range 10 1 -4)", "[10 6 2]");
    assert_eval!("(range 5 2)", "[]");
    assert_fails!("(range 0 10 0)", "step of zero");
    assert_fails!("(range 0 ##Inf)", "limit");
}

/// `ifn?` was an alias of `fn?`, so it was false for keywords, maps, sets
/// and vectors, which are callable.
#[test]
fn ifn_is_true_for_keywords_maps_sets_and_vectors() {
    assert_eval!(
        "[(ifn? :a) (ifn? {}) (ifn? #{}) (ifn? []) (ifn? inc) (ifn? #(+ % 1))]",
        "[true true true true true true]"
    );
    assert_eval!("[(ifn? 1) (ifn? \"s\") (ifn? nil)]", "[false false false]");
    assert_eval!("[(fn? :a) (fn? {})]", "[false false]");
}

/// `some-fn` returned nil when no predicate matched; Clojure's is an `or`
/// and gives the last falsy result (for up to 3 predicates and arguments).
#[test]
fn some_fn_returns_last_falsy_result_like_clojure() {
    assert_eval!("((some-fn even? neg?) 3)", "false");
    assert_eval!("((some-fn :a) {:a false})", "false");
    assert_eval!("((some-fn :a) {})", "nil");
    assert_eval!("((some-fn even? neg?) -3)", "true");
    assert_eval!("((some-fn :a :b) {:b 2})", "2");
    assert_eval!("((some-fn :a :b :c :d) {:a false})", "nil");
}

/// Any `clojure.string/x` resolved to the builtin `x`, so
/// `clojure.string/reverse` silently became core `reverse` (a sequence of
/// characters instead of a string), and `clojure.set/join` became string
/// `join`. Until they are implemented they must fail; once they are, they
/// must give Clojure's results.
#[test]
fn clojure_string_reverse_does_not_resolve_to_core_reverse() {
    for src in ["(clojure.string/reverse \"abc\")", "(str/reverse \"abc\")"] {
        match crate::util::eval(src) {
            Ok(v) => assert_eq!(crate::util::printed(&v), "\"cba\"", "{src}"),
            Err(e) => assert!(e.to_string().contains("not available"), "{src}: {e}"),
        }
    }
    match crate::util::eval("(clojure.set/join #{{:a 1}} #{{:a 1 :b 2}})") {
        Ok(v) => assert_eq!(crate::util::printed(&v), "#{{:a 1, :b 2}}"),
        Err(e) => assert!(e.to_string().contains("not available"), "{e}"),
    }
    assert_eval!("(clojure.core/reverse [1 2])", "[2 1]");
    assert_eval!("(clojure.string/join \",\" [1 2])", "\"1,2\"");
}

/// `get-in` returned the default when the value at the path was nil; in
/// Clojure the default is only for a missing key.
#[test]
fn get_in_default_is_only_for_missing_keys() {
    assert_eval!("(get-in {:a {:b nil}} [:a :b] :d)", "nil");
    assert_eval!("(get-in {:a nil} [:a :b] :d)", ":d");
    assert_eval!("(get-in {:a 1} [:a :b] :d)", ":d");
    assert_eval!("(get-in {:a {:b 1}} [:a :x] :d)", ":d");
    assert_eval!("(get-in {:a {:b false}} [:a :b] :d)", "false");
    assert_eval!("(get-in {:a {:b 1}} [:a :b] :d)", "1");
}

/// Regex matching used Rust's iteration rules, which skip an empty match
/// right after a non-empty one; Clojure (Java) reports it. `re-seq`,
/// `replace` and `split` with empty-matching patterns all differed.
#[test]
fn regex_empty_matches_follow_java() {
    assert_eval!("(re-seq #\"a*\" \"baaab\")", "[\"\" \"aaa\" \"\" \"\"]");
    assert_eval!("(re-seq #\"\" \"ab\")", "[\"\" \"\" \"\"]");
    assert_eval!("(clojure.string/replace \"aaa\" #\"a*\" \"x\")", "\"xx\"");
    assert_eval!(
        "(clojure.string/replace \"héllo\" #\"\" \"-\")",
        "\"-h-é-l-l-o-\""
    );
    assert_eval!(
        "(clojure.string/replace \"x1y22\" #\"(\\d+)\" \"<$1>\")",
        "\"x<1>y<22>\""
    );
    assert_eval!("(re-seq #\"^a\" \"aaa\")", "[\"a\"]");
}

/// Splitting on a regex that matches empty at the start gave a leading
/// empty string, and a string of only separators gave `[""]`; Java's
/// `String.split` gives neither.
#[test]
fn split_on_regex_follows_java_string_split() {
    assert_eval!(
        "(clojure.string/split \"abc\" #\"\")",
        "[\"a\" \"b\" \"c\"]"
    );
    assert_eval!("(clojure.string/split \",\" #\",\")", "[]");
    assert_eval!("(clojure.string/split \",a\" #\",\")", "[\"\" \"a\"]");
    assert_eval!("(clojure.string/split \"\" #\",\")", "[\"\"]");
    assert_eval!(
        "(clojure.string/split \"a,b,,c,,\" #\",\")",
        "[\"a\" \"b\" \"\" \"c\"]"
    );
    assert_eval!(
        "(clojure.string/split \"a  b\" #\" \")",
        "[\"a\" \"\" \"b\"]"
    );
}

#[test]
fn sort_by_desc_keeps_equal_keys_in_input_order() {
    assert_eval!(
        "(sort-by :k :desc [{:k 1 :i 1} {:k 2 :i 2} {:k 1 :i 3}])",
        "[{:k 2, :i 2} {:k 1, :i 1} {:k 1, :i 3}]"
    );
    assert_eval!("(sort :desc [3 1 2])", "[3 2 1]");
}

/// The standard library's sort panics ("does not correctly implement a
/// total order") on some comparisons that are not total orders: NaN,
/// which `compare` finds equal to every number (as Clojure's does), or an
/// inconsistent comparator. Either let a program abort the process.
#[test]
fn sorting_with_nan_or_an_inconsistent_comparator_does_not_panic() {
    assert_eval!(
        "(count (sort (map #(if (= 0 (mod % 3)) ##NaN (mod (* % 7919) 100)) (range 33))))",
        "33"
    );
    assert_eval!(
        "(count (sort-by :x > (map (fn [i] {:x (if (= 1 (mod i 3)) ##NaN i)}) (range 33))))",
        "33"
    );
    // Some permutation of the items: sorting it again gives their order.
    assert_eval!(
        "(let [xs (map #(mod (* % 7919) 1000) (range 33))
               odd (sort (fn [a b] (- (mod (quot (* (+ (* a 7919) (* b 104729)) 2654435761) 7) 3) 1)) xs)]
           [(count odd) (= (sort xs) (sort odd))])",
        "[33 true]"
    );
}

#[test]
fn undefined_data_and_tool_references_carry_their_position() {
    for (src, column) in [("(+ 1 data/nope)", 6), ("(map tool/nope [1])", 6)] {
        let err = crate::util::eval(src).unwrap_err();
        let span = err.span().unwrap_or_else(|| panic!("`{src}` has no span"));
        assert_eq!((span.line, span.column), (1, column), "{src}");
    }
}
