//! The evaluator's fast paths give what the general ones give: integer
//! arithmetic and comparisons computed in place, `recur` storing into its
//! slots, self calls of named functions, return values recorded cheaply,
//! map literals with constant keys built on a key list made once, and
//! lookups with a constant key (`(:k m)`, `(get m :k)`) made without a
//! call, and parameters read where the caller keeps the arguments.

use ptc_lisp::error::ErrorKind;
use ptc_lisp::eval::{self, Globals, NoHost, Program, RunOptions};
use ptc_lisp::value::pr_str;

use crate::util::eval;

fn error_of(src: &str) -> ptc_lisp::error::Error {
    match eval(src) {
        Ok(v) => panic!("`{src}` should fail, gave {}", pr_str(&v)),
        Err(e) => e,
    }
}

#[test]
fn arithmetic_on_integers_and_everything_else() {
    assert_eval!("(+ 1 2)", "3");
    assert_eval!("(+ 1 2 3)", "6");
    assert_eval!("(+ 7)", "7");
    assert_eval!("(- 7)", "-7");
    assert_eval!("(- 10 3 2)", "5");
    assert_eval!("(* 2 3 4)", "24");
    assert_eval!("(inc 41)", "42");
    assert_eval!("(dec 43)", "42");
    // Floats and mixed operands go through the builtin.
    assert_eval!("(+ 1 2.5)", "3.5");
    assert_eval!("(* 2 1.5 2)", "6.0");
    assert_eval!("(inc 1.5)", "2.5");
    assert_eval!("(- 0.5)", "-0.5");
    // More arguments than the inline forms take.
    assert_eval!("(+ 1 2 3 4 5)", "15");
}

#[test]
fn comparisons_on_integers_and_everything_else() {
    assert_eval!(
        "[(< 1 2) (> 1 2) (<= 2 2) (>= 1 2)]",
        "[true false true false]"
    );
    assert_eval!(
        "[(= 2 2) (== 2 2) (not= 2 3) (not= 2 2)]",
        "[true true true false]"
    );
    // `=` keeps integers and floats apart; `==` does not.
    assert_eval!("[(= 1 1.0) (== 1 1.0)]", "[false true]");
    assert_eval!(
        "[(= \"a\" \"a\") (= [1 2] '(1 2)) (not= :a :b)]",
        "[true true true]"
    );
    assert_eval!("[(< 1 2.5) (< 1 2 3) (< 3 2 1)]", "[true true false]");
    assert_eval!("(if (< 1 2) :yes :no)", ":yes");
    assert_eval!("(if (> 1.5 2) :yes :no)", ":no");
    assert_eval!("(if (= :a :a) :yes :no)", ":yes");
}

/// Arithmetic trees of locals, parameters, captured values and integer
/// constants are computed on machine integers first; whatever is not an
/// integer, and any overflow, gives what the general path gives. Each
/// case is compared with the same form whose leaves pass through
/// `identity` (a call, so no tree).
#[test]
fn integer_trees_give_what_the_general_path_gives() {
    let cases = [
        "(let [a 2 b 3] (+ a (* b 4) (- a)))",
        "(let [a 2 b 3] [(inc (* a b)) (dec (- a b)) (- (+ a b)) (* (+ a 1) (- b 1) 2)])",
        "(let [a 2 b 1.5] (+ a (* b 2)))",
        "(let [a 2 b 1.5] [(< (+ a 1) b) (= (* a 2) 4) (not= (- a) -2) (>= (* b 2) 3)])",
        "(let [i 3 n 5] (if (< (+ i 1) n) :yes :no))",
        "(let [i 3 n 5] (if (= (* i 2) (+ n 1)) :yes :no))",
        "(((fn [x] (fn [y] (+ x (* x y)))) 3) 4)",
        "(loop [j 0 acc 0] (if (< j 10) (recur (inc j) (+ acc (+ (* j 10) j 1))) acc))",
        "(let [a 9223372036854775807] (+ 1 (* a 2)))",
        "(let [a 9223372036854775807] (- (- a) 2))",
        "(let [a -9223372036854775808] (- a))",
        "(let [a nil] (+ (* a 2) 1))",
        "(let [a \"s\"] (< (+ a 1) 2))",
        "(let [a 2] (= (* a 2) 4.0))",
    ];
    for tree in cases {
        // The first operand of each call, when it is a name, through
        // `identity`.
        let mut general = tree.to_string();
        for op in ["+", "-", "*", "inc", "dec"] {
            for name in ["a", "b", "i", "j", "x"] {
                for end in [" ", ")"] {
                    general = general.replace(
                        &format!("({op} {name}{end}"),
                        &format!("({op} (identity {name}){end}"),
                    );
                }
            }
        }
        assert_ne!(tree, general);
        let (got, want) = (eval(tree), eval(&general));
        match (&got, &want) {
            (Ok(a), Ok(b)) => assert_eq!(pr_str(a), pr_str(b), "{tree}"),
            (Err(a), Err(b)) => {
                assert_eq!(a.kind(), b.kind(), "{tree}");
                assert_eq!(a.message(), b.message(), "{tree}");
            }
            _ => panic!("{tree}: {got:?} against {want:?}"),
        }
    }
}

#[test]
fn overflow_is_still_an_arithmetic_error() {
    for src in [
        "(+ 9223372036854775807 1)",
        "(+ 9223372036854775800 7 1)",
        "(- -9223372036854775808 1)",
        "(- -9223372036854775808)",
        "(* 4611686018427387904 2)",
        "(* 2 2 4611686018427387904)",
        "(inc 9223372036854775807)",
        "(dec -9223372036854775808)",
        "(loop [i 9223372036854775806] (recur (inc i)))",
    ] {
        let e = error_of(src);
        assert_eq!(e.kind(), ErrorKind::Arithmetic, "{src}: {e}");
        assert!(e.to_string().contains("overflow"), "{src}: {e}");
    }
}

/// Arguments and `recur` values that are integer trees are computed
/// before the general path is entered (`eval_arg`), and a loop whose body
/// is an `if` runs its test and its `recur` in place (`eval_body`): both
/// give what the general path gives, for every kind of leaf and branch.
#[test]
fn loop_bodies_and_integer_arguments_give_what_the_general_path_gives() {
    for (src, expected) in [
        // recur values: integers, floats, a ratio-free division, strings.
        (
            "(loop [i 0 x 0] (if (< i 3) (recur (inc i) (+ x i 0.5)) x))",
            "4.5",
        ),
        (
            "(loop [i 0 x 1] (if (< i 3) (recur (inc i) (* x 2)) x))",
            "8",
        ),
        (
            "(loop [i 0 s \"\"] (if (< i 2) (recur (inc i) (str s i)) s))",
            "\"01\"",
        ),
        // the recur in the else branch, a test that is no comparison.
        (
            "(loop [xs [1 2 3] n 0] (if (empty? xs) n (recur (rest xs) (+ n (first xs)))))",
            "6",
        ),
        (
            "(loop [xs [1 2 3] n 0] (if (seq xs) (recur (next xs) (+ n (first xs))) n))",
            "6",
        ),
        // an if with no else, a body that is no if, a body of several forms.
        ("(loop [i 0] (if (< i 3) (recur (inc i))))", "nil"),
        ("(loop [i 0] (when (< i 3) (recur (inc i))))", "nil"),
        ("(loop [i 0] (cond (< i 3) (recur (inc i)) :else i))", "3"),
        ("(loop [i 0] (do (if (< i 3) (recur (inc i)) i)))", "3"),
        // a comparison on floats and a comparison of a non-number.
        ("(loop [x 0.0] (if (< x 1.5) (recur (+ x 0.5)) x))", "1.5"),
        (
            "(loop [i 0] (if (= i :stop) i (recur (if (< i 2) (inc i) :stop))))",
            ":stop",
        ),
        // arguments of calls: integer trees, floats, non-numbers.
        ("(defn f [a b] [a b]) (f (+ 1 2) (* 2 3))", "[3 6]"),
        (
            "(defn g [a] a) [(g (- 10 1)) (g (+ 1 0.5)) (g (inc 1))]",
            "[9 1.5 2]",
        ),
        (
            "(defn h [n] (if (< n 2) n (+ (h (- n 1)) (h (- n 2))))) (h 15)",
            "610",
        ),
        // fn bodies that recur through recur_into.
        (
            "((fn [n acc] (if (< n 1) acc (recur (dec n) (+ acc n)))) 100 0)",
            "5050",
        ),
    ] {
        assert_eval!(src, expected);
    }
    // Errors of an argument or a recur value keep their kind and location.
    for (src, kind) in [
        (
            "(loop [i 9223372036854775806 n 0] (if (< n 5) (recur (inc i) (inc n)) i))",
            ErrorKind::Arithmetic,
        ),
        (
            "(defn f [a] a) (f (+ 9223372036854775807 1))",
            ErrorKind::Arithmetic,
        ),
        (
            "(loop [i 0 x \"a\"] (if (< i 2) (recur (inc i) (+ x 1)) x))",
            ErrorKind::Type,
        ),
        ("(loop [x \"a\"] (if (< x 2) (recur 3) x))", ErrorKind::Type),
    ] {
        let e = error_of(src);
        assert_eq!(e.kind(), kind, "{src}: {e}");
        assert!(e.span().is_some(), "{src}: {e} has no location");
    }
}

#[test]
fn type_errors_name_the_builtin_and_carry_the_location() {
    let e = error_of("(let [x 1]\n  (+ x \"a\"))");
    assert_eq!(e.kind(), ErrorKind::Type);
    assert!(e.to_string().contains('+'), "{e}");
    assert_eq!(e.span().map(|s| s.line), Some(2));
    let e = error_of("(if (< 1 :a) 1 2)");
    assert_eq!(e.kind(), ErrorKind::Type);
    assert!(e.to_string().contains('<'), "{e}");
    // An argument's own error keeps its own message.
    let e = error_of("(+ 1 (inc \"x\"))");
    assert!(e.to_string().contains("inc"), "{e}");
}

#[test]
fn a_user_definition_shadows_the_inline_forms() {
    assert_eval!("(defn inc [x] (str x \"!\")) (inc 1)", "\"1!\"");
    assert_eval!("(defn + [a b] (* a b)) (+ 3 4)", "12");
    assert_eval!("(def < >) (if (< 1 2) :lt :ge)", ":ge");
    // A local of the same name is a plain call.
    assert_eval!("(let [+ str] (+ 1 2))", "\"12\"");
}

#[test]
fn recur_rebinds_plain_names_and_patterns() {
    assert_eval!(
        "(loop [i 0 a 0 b 1 c 2] (if (< i 3) (recur (inc i) b c a) [a b c]))",
        "[0 1 2]"
    );
    assert_eval!(
        "(loop [[a b] [1 2] n 0] (if (< n 3) (recur [b (+ a b)] (inc n)) [a b n]))",
        "[5 8 3]"
    );
    assert_eval!(
        "(loop [i 0 s \"\"] (if (< i 3) (recur (inc i) (str s i)) s))",
        "\"012\""
    );
    assert_eval!(
        "((fn f [n acc] (if (zero? n) acc (recur (dec n) (* acc n)))) 10 1)",
        "3628800"
    );
    assert_eval!(
        "((fn [x & more] (if (seq more) (recur (+ x (first more)) (next more)) x)) 1 2 3 4)",
        "10"
    );
    assert_eval!("(loop [] 5)", "5");
}

#[test]
fn recur_stores_integers_over_values_of_any_kind() {
    // The slot holds a string, a map or nil between integers: an integer
    // written over an integer keeps only the number, over anything else
    // replaces the value (`set_local_int`).
    // Two bindings, so that `recur` stores each value itself; the loop
    // stops after `k` rounds, leaving each kind of value before an integer.
    for (k, expected) in ["\"start\"", "0", "{:n 1}", "nil", "3", "{:n 4}"]
        .iter()
        .enumerate()
    {
        let src = format!(
            "(loop [x \"start\" n 0] \
               (if (< n {k}) (recur (case (mod n 3) 0 n 1 {{:n n}} nil) (inc n)) x))"
        );
        assert_eval!(src.as_str(), *expected);
    }
    assert_eval!(
        "(loop [i 0 acc \"a string longer than fourteen bytes\"] \
           (if (< i 3) (recur (inc i) (if (even? i) i (str acc i))) acc))",
        "2"
    );
}

/// Every builtin that takes a predicate judges its result where the call
/// left it (`Interp::call_truthy`): only nil and false are falsy, whatever
/// kind of value the predicate returns.
#[test]
fn predicates_judge_every_kind_of_result() {
    let with_p = |form: &str| {
        format!(
            "(let [rs [nil false true 0 \"\" [] {{}} :k 1.5 \"a string longer than 14 bytes\" +] \
                   p (fn [i] (nth rs i)) \
                   xs (range (count rs))] {form})"
        )
    };
    for (form, expected) in [
        ("(filter p xs)", "[2 3 4 5 6 7 8 9 10]"),
        ("(remove p xs)", "[0 1]"),
        ("(take-while p [2 3 0 4])", "[2 3]"),
        ("(drop-while p [2 3 0 4])", "[0 4]"),
        ("(split-with p [2 3 1 4])", "[[2 3] [1 4]]"),
        ("[(every? p (range 2 11)) (every? p [2 1])]", "[true false]"),
        (
            "[(not-every? p [2 1]) (not-every? p [2 10])]",
            "[true false]",
        ),
        ("(find p [0 1 7 8])", "7"),
        ("(map (complement p) [0 1 2 10])", "[true true false false]"),
        (
            "[((every-pred p) 2 3 10) ((every-pred p) 2 1)]",
            "[true false]",
        ),
        (
            "[((all-of p) 2) ((any-of p) 1) ((none-of p) 0) ((none-of p) 6)]",
            "[true false true false]",
        ),
        ("(sort (set/select p #{0 1 5 9}))", "[5 9]"),
        ("(count (filter p (map #(mod % 11) (range 1000))))", "818"),
    ] {
        assert_eval!(with_p(form).as_str(), expected);
    }
    // A comparator that answers nil for "not less" is asked the other way
    // round, and that answer is judged the same way.
    assert_eval!("(sort (fn [a b] (when (< a b) true)) [3 1 2])", "[1 2 3]");
    // A predicate's error ends the call, with the predicate's error.
    let e = error_of("(filter (fn [i] (if (= i 3) (/ 1 0) i)) (range 5))");
    assert!(e.to_string().contains("zero"), "{e}");
}

#[test]
fn named_functions_call_themselves_and_are_values() {
    assert_eval!(
        "(defn fib [n] (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2))))) (fib 15)",
        "610"
    );
    // The name as a value and captured by an inner closure.
    assert_eval!(
        "(defn f [n] (if (zero? n) :done (f (dec n)))) [(f 5) (fn? f)]",
        "[:done true]"
    );
    assert_eval!("((fn g [x] (if (> x 0) (g (dec x)) (fn? g))) 3)", "true");
    assert_eval!(
        "(defn k [x] (map (fn [y] (if (> y 0) (k (dec y)) y)) [x])) (k 2)",
        "[[[0]]]"
    );
    // Another arity of the same function.
    assert_eval!("(defn h ([x] (h x 1)) ([x y] (+ x y))) (h 4)", "5");
    // A local of the same name shadows the function.
    assert_eval!("(defn a [x] (let [a inc] (a x))) (a 1)", "2");
    let e = error_of("(defn d [n] (d (inc n))) (d 0)");
    assert_eq!(e.kind(), ErrorKind::DepthLimit);
}

#[test]
fn parameters_read_from_the_arguments_behave_as_bound_ones() {
    let cases = [
        // Shadowed by a `let`, and shadowing the function's own name.
        ("((fn [x] (let [x (inc x)] [x (* x 10)])) 1)", "[2 20]"),
        ("((fn f [f] (inc f)) 5)", "6"),
        ("((fn f [x] (let [f (fn [y] (* y 3))] (f x))) 5)", "15"),
        // `recur` into the function: each round's values are the
        // arguments of the next, with patterns bound again.
        (
            "((fn [n acc] (if (zero? n) acc (recur (dec n) (+ acc n)))) 100 0)",
            "5050",
        ),
        (
            "((fn [[a b] n] (if (zero? n) [a b] (recur [b (+ a b)] (dec n)))) [0 1] 10)",
            "[55 89]",
        ),
        (
            "((fn [n {:keys [k]}] (if (pos? n) (recur (dec n) {:k (conj k n)}) k)) 3 {:k []})",
            "[3 2 1]",
        ),
        // A `loop` inside reads the parameter while it rebinds its own.
        (
            "((fn [n] (loop [i 0 acc 0] (if (< i n) (recur (inc i) (+ acc i)) acc))) 5)",
            "10",
        ),
        // Captured by closures, one and two levels down, and kept after
        // the call returned.
        (
            "(let [adders (map (fn [n] (fn [x] (+ x n))) [1 2 3])] (map #(% 10) adders))",
            "[11 12 13]",
        ),
        ("((((fn [a] (fn [] (fn [] a))) 7)))", "7"),
        ("(map (fn [x] (pmap #(+ x %) [1 2])) [10 20])", "[[11 12] [21 22]]"),
        // Lookups on a parameter, a capture and a local.
        (
            "(map (fn [m] [(:a m) (get m :b) (:c m :none)]) [{:a 1 :b 2}])",
            "[[1 2 :none]]",
        ),
        ("((fn [m] ((fn [] (:a m)))) {:a 4})", "4"),
        // The arguments are values: changing a copy leaves them alone.
        ("(let [v [1 2]] ((fn [x] [(conj x 3) x]) v))", "[[1 2 3] [1 2]]"),
        // A rest parameter still binds all in the frame.
        ("((fn [a & more] [a more]) 1 2 3)", "[1 [2 3]]"),
        ("(defn g ([x] (g x 1)) ([x y] (+ x y)) ([x y & z] (apply + x y z))) [(g 4) (g 1 2 3 4)]", "[5 10]"),
        // Destructured and plain parameters side by side.
        ("((fn [[_ b] c {:keys [d]}] [b c d]) [1 2] 3 {:d 4})", "[2 3 4]"),
    ];
    for (src, expected) in cases {
        assert_eval!(src, expected);
    }
    assert_fails!("((fn [x y] x) 1)", "got 1");
}

fn run(src: &str) -> eval::RunOutput {
    let program = Program::compile(src).expect("compiles");
    eval::run(
        &program,
        &NoHost,
        &Globals::default(),
        RunOptions::default(),
    )
}

#[test]
fn steps_count_calls_and_iterations_as_before() {
    // One step for the form, one per `recur`.
    let out = run("(loop [i 0] (if (< i 10) (recur (inc i)) i))");
    assert_eq!(out.steps, 11);
    // One step for each form and one per call: fib 10 makes 177 calls.
    let out = run("(defn fib [n] (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2))))) (fib 10)");
    assert_eq!(out.steps, 2 + 177);
}

#[test]
fn return_values_are_recorded_per_type_latest_first_seen_order() {
    let out = run("(defn g [x] (if (pos? x) x nil)) (g 1) (g -1) (g 5) \
         (defn f [n] (if (zero? n) :done (f (dec n)))) (f 3)");
    let returns: Vec<(String, Vec<String>)> = out
        .returns
        .iter()
        .map(|(name, values)| (name.to_string(), values.iter().map(pr_str).collect()))
        .collect();
    assert_eq!(
        returns,
        vec![
            ("f".to_string(), vec![":done".to_string()]),
            ("g".to_string(), vec!["5".to_string(), "nil".to_string()]),
        ]
    );
}

#[test]
fn map_literals_with_constant_keys_are_ordinary_maps() {
    let x = "(let [x 1 y \"s\"] ";
    let cases = [
        // Order, lookup in every form, equality with a map built otherwise.
        ("{:b x :a y}", "{:b 1, :a \"s\"}"),
        ("(keys {:b x :a y})", "[:b :a]"),
        (
            "[(:a {:a x :b y}) ({:a x :b y} :b) (get {\"k\" x 2 y} 2)]",
            "[1 \"s\" \"s\"]",
        ),
        (
            "(= {:a x :b y} (hash-map :b \"s\" :a 1) (zipmap [:a :b] [1 \"s\"]))",
            "true",
        ),
        ("(contains? #{{:a 1 :b \"s\"}} {:b y :a x})", "true"),
        // Changes: a new key, a replaced one (keeps its place), a removal,
        // and growing past the small-map size.
        ("(assoc {:a x :b y} :c 3)", "{:a 1, :b \"s\", :c 3}"),
        ("(assoc {:a x :b y} :a 2)", "{:a 2, :b \"s\"}"),
        ("(dissoc {:a x :b y} :a)", "{:b \"s\"}"),
        (
            "(count (assoc {:a x :b 2 :c 3 :d 4 :e 5 :f 6 :g 7 :h 8} :i 9))",
            "9",
        ),
        ("(update {:a x :b y} :a inc)", "{:a 2, :b \"s\"}"),
        // A repeated key keeps the last value, as before.
        ("{:a x :a y}", "{:a \"s\"}"),
        // Keys of other kinds, and a key that is computed.
        ("{1 x \"one\" y nil x}", "{1 1, \"one\" \"s\", nil 1}"),
        ("{(keyword y) x :b y}", "{:s 1, :b \"s\"}"),
    ];
    for (expr, expected) in cases {
        assert_eval!(format!("{x}{expr})").as_str(), expected);
    }
    // Each evaluation builds its own map from the shared key list.
    assert_eval!(
        "(mapv (fn [i] {:i i :sq (* i i)}) [1 2 3])",
        "[{:i 1, :sq 1} {:i 2, :sq 4} {:i 3, :sq 9}]"
    );
}

#[test]
fn lookups_with_a_constant_key_are_the_calls_they_replace() {
    let cases = [
        // A keyword as a function, and `get`, on a local, on an
        // expression, with and without a default.
        (
            "(let [m {:a 1 \"b\" 2 :c nil}] [(:a m) (:c m 5) (:z m 5) (:b m)])",
            "[1 nil 5 2]",
        ),
        (
            "[(get {:a 1} :a) (get {:a 1} :z :d) (get [10 20] 1) (get \"abc\" 1)]",
            "[1 :d 20 \"b\"]",
        ),
        ("(:a (:b {:b {:a 7}}))", "7"),
        ("((fn [p] (:price p)) {:price 3})", "3"),
        // Not a map: nil, as the call gives.
        ("[(:a nil) (:a 5) (get 5 :a :d)]", "[nil nil :d]"),
        // The specification's flexible keys.
        ("(:turn-summaries {\"turn_summaries\" 1})", "1"),
        // A user's `get` is called, not replaced.
        ("(let [get (fn [m k] :mine)] (get {:a 1} :a))", ":mine"),
    ];
    for (src, expected) in cases {
        assert_eval!(src, expected);
    }
    // The default is evaluated whether or not it is needed, as a call's
    // argument is.
    let mut session = crate::util::session();
    let turn = session.eval("[(:a {:a 1} (println \"x\")) (get {:a 1} :a (println \"y\"))]");
    assert_eq!(turn.prints, ["x", "y"]);
    // Arity errors are the call's.
    assert_fails!("(:a)", "1 or 2 arguments");
    assert_fails!("(:a {} 1 2)", "1 or 2 arguments");
    assert_fails!("(get {:a 1} :a 2 3)", "2 or 3 arguments");
    // An error in the target keeps its own location.
    let e = error_of("(let [m 1]\n  (:a (inc \"x\")))");
    assert_eq!(e.kind(), ErrorKind::Type);
    assert_eq!(e.span().map(|s| (s.line, s.column)), Some((2, 7)));
}

/// `(take n (sort-by ...))`, `(take n (sort ...))` and `(first ...)` of
/// either give what `take` or `first` of a sorted collection gives: the
/// same items in the same (stable) order, the same errors.
#[test]
fn take_of_a_sort_is_take_of_the_sorted_collection() {
    let collections = [
        "[{:k 3 :i 0} {:k 1 :i 1} {:k 3 :i 2} {:k 2 :i 3} {:k 1 :i 4} {:k 3 :i 5} {:k 0 :i 6}]",
        "[{:k 2.5 :i 0} {:k -1.0 :i 1} {:k 2.5 :i 2} {:k 0.0 :i 3} {:k -1.0 :i 4}]",
        "[{:k 1 :i 0} {:k 1.5 :i 1} {:k 1 :i 2} {:k 0 :i 3}]",
        "[{:k \"b\" :i 0} {:k \"a\" :i 1} {:k \"b\" :i 2}]",
        "[{:k 2 :i 0} {:i 1} {:k 1 :i 2}]",
        "[{:k 1 :i 0} {:k \"a\" :i 1}]",
        "[{:k ##NaN :i 0} {:k 1.0 :i 1} {:k 0.5 :i 2}]",
        "[]",
        "(mapv (fn [i] {:k (mod (* i 7) 5) :i i}) (range 300))",
        "(mapv (fn [i] {:k (* 0.5 (mod (* i 11) 7)) :i i}) (range 300))",
        "(mapv (fn [i] {:k (nth [\"pear\" \"fig\" \"apple\"] (mod (* i 7) 3)) :i i}) (range 300))",
        "(mapv (fn [i] {:k (keyword (nth [\"b\" \"c\" \"a\"] (mod (* i 5) 3))) :i i}) (range 300))",
    ];
    let orders = ["", "<", ">", ":asc", ":desc", "compare", "#(compare %2 %1)"];
    let counts = ["-1", "0", "1", "2", "3", "7", "20", "150", "\"x\"", "nil"];
    let show = |r: Result<ptc_lisp::value::Value, ptc_lisp::error::Error>| match r {
        Ok(v) => pr_str(&v),
        Err(e) => format!("error: {}", e.message()),
    };
    let mut compared = 0;
    for coll in collections {
        for order in orders {
            for n in counts {
                let sorted = format!("(sort-by :k {order} {coll})");
                let fused = format!("(take {n} {sorted})");
                let apart = format!("(let [s {sorted}] (take {n} s))");
                assert_eq!(show(eval(&fused)), show(eval(&apart)), "{fused}");
                compared += 1;
            }
            let sorted = format!("(sort-by :k {order} {coll})");
            let fused = format!("(first {sorted})");
            let apart = format!("(let [s {sorted}] (first s))");
            assert_eq!(show(eval(&fused)), show(eval(&apart)), "{fused}");
        }
    }
    assert_eq!(compared, 12 * 7 * 10);
    let numbers = [
        "[3 1 3 2 1 3 0]",
        "[2.5 -1.0 2.5 0.0 -1.0]",
        "[1 1.5 1 0]",
        "[\"b\" \"a\" \"b\"]",
        "[2 nil 1]",
        "[1 ##NaN 0.5]",
        "(mapv #(mod (* % 7) 5) (range 300))",
        "(mapv #(nth [\"pear\" \"fig\" \"apple\"] (mod % 3)) (range 300))",
        "[]",
    ];
    let orders = ["", "<", ">", "compare", "#(compare %2 %1)"];
    for coll in numbers {
        for order in orders {
            for n in counts {
                let fused = format!("(take {n} (sort {order} {coll}))");
                let apart = format!("(let [s (sort {order} {coll})] (take {n} s))");
                assert_eq!(show(eval(&fused)), show(eval(&apart)), "{fused}");
            }
            let fused = format!("(first (sort {order} {coll}))");
            let apart = format!("(let [s (sort {order} {coll})] (first s))");
            assert_eq!(show(eval(&fused)), show(eval(&apart)), "{fused}");
        }
    }
    // Ties keep their input order among the first n, ascending or not.
    assert_eval!(
        "(map :i (take 3 (sort-by :k > [{:k 1 :i 0} {:k 2 :i 1} {:k 1 :i 2} {:k 2 :i 3} {:k 1 :i 4}])))",
        "[1 3 0]"
    );
    // A key function runs on every item, as for `sort-by`: its error is
    // raised even when the item could not be among the first n.
    assert_fails!("(take 1 (sort-by #(- 10 %) [1 2 \"three\"]))", "three");
    // The first of equal keys is the earliest.
    assert_eval!(
        "(:i (first (sort-by :k > [{:k 1 :i 0} {:k 2 :i 1} {:k 2 :i 2}])))",
        "1"
    );
    // A program's own `take` is not rewritten.
    assert_eval!(
        "(defn take [n xs] :mine) (take 2 (sort-by - [1 2 3]))",
        ":mine"
    );
}
