//! Every special form of the language, as the specification describes it.

#[test]
fn let_binds_sequentially_and_shadows() {
    assert_eval!("(let [x 10] x)", "10");
    assert_eval!("(let [x 1 y (+ x 1)] y)", "2");
    assert_eval!("(let [x 1] (let [x 2] x))", "2");
    assert_eval!("(let [x 10 y (+ x 5)] (* x y))", "150");
    assert_eval!("(let [x 10] (def saved x) (* x 2))", "20");
    assert_fails!("(let [x] x)", "even number");
    assert_fails!("(let x 1)", "binding vector");
}

#[test]
fn let_destructures_sequences() {
    assert_eval!("(let [[a b] [1 2]] (+ a b))", "3");
    assert_eval!("(let [[_ b] [1 2]] b)", "2");
    assert_eval!("(let [[a [b c]] [1 [2 3]]] (+ a b c))", "6");
    assert_eval!("(let [[x & rest] [1 2 3 4]] rest)", "[2 3 4]");
    assert_eval!(
        "(let [[a b & rest] [1 2 3 4 5]] [a b rest])",
        "[1 2 [3 4 5]]"
    );
    assert_eval!("(let [[& all] [1 2 3]] all)", "[1 2 3]");
    assert_eval!("(let [[a b :as all] [1 2 3]] [a b all])", "[1 2 [1 2 3]]");
    assert_eval!("(let [[a b] [1]] [a b])", "[1 nil]");
    assert_eval!("(let [[x & r] [1]] r)", "nil");
    assert_eval!("(let [[a b] \"hi\"] [a b])", "[\"h\" \"i\"]");
}

#[test]
fn let_destructures_maps() {
    assert_eval!(
        "(let [{:keys [name age]} {:name \"Alice\" :age 30}] name)",
        "\"Alice\""
    );
    assert_eval!(
        "(let [{:keys [name age] :or {age 0}} {:name \"Bob\"}] age)",
        "0"
    );
    assert_eval!(
        "(let [{the-name :name} {:name \"Carol\"}] the-name)",
        "\"Carol\""
    );
    assert_eval!(
        "(let [{:keys [id] :as user} {:id 123 :name \"Alice\"}] (:name user))",
        "\"Alice\""
    );
    assert_eval!("(let [{:strs [a]} {\"a\" 1}] a)", "1");
    assert_eval!("(let [{:keys [a]} nil] a)", "nil");
    assert_eval!("(let [{:keys [a]} {\"a\" 5}] a)", "5");
    assert_eval!("(let [{[x y] :pt} {:pt [1 2]}] (+ x y))", "3");
    assert_fails!("(let [{:keys [a]} 5] a)", "map pattern");
}

#[test]
fn if_and_its_variants() {
    assert_eval!("(if true \"yes\" \"no\")", "\"yes\"");
    assert_eval!("(if false \"yes\" \"no\")", "\"no\"");
    assert_eval!("(if nil 1)", "nil");
    assert_eval!("(if 0 \"truthy\" \"falsy\")", "\"truthy\"");
    assert_eval!("(if \"\" \"truthy\" \"falsy\")", "\"truthy\"");
    assert_eval!("(if [] \"truthy\" \"falsy\")", "\"truthy\"");
    assert_eval!("(if-not true \"yes\" \"no\")", "\"no\"");
    assert_eval!("(if-not false \"yes\")", "\"yes\"");
    assert_eval!("(if-not true \"yes\")", "nil");
    assert_eval!("(when (> 5 3) \"bigger\")", "\"bigger\"");
    assert_eval!("(when false \"yes\")", "nil");
    assert_eval!("(when true 1 2 3)", "3");
    assert_eval!("(when-not false \"yes\")", "\"yes\"");
    assert_eval!("(when-not true \"yes\")", "nil");
    assert_fails!("(if)", "`if` takes");
    assert_fails!("(if 1 2 3 4)", "`if` takes");
}

#[test]
fn cond_condp_and_case() {
    assert_eval!("(cond false \"a\" false \"b\" :else \"c\")", "\"c\"");
    assert_eval!("(cond false \"only\")", "nil");
    assert_eval!("(cond (> 5 3) \"yes\" :else \"no\")", "\"yes\"");
    assert_fails!("(cond true)", "pairs");
    assert_eval!("(condp = 2 1 \"one\" 2 \"two\" \"other\")", "\"two\"");
    assert_eval!("(condp = 9 1 \"one\" \"other\")", "\"other\"");
    assert_eval!("(condp < 5 10 :small 3 :big)", ":big");
    // The specification (§5.7, §5.8): no match and no default is nil.
    assert_eval!("(condp = 9 1 \"one\")", "nil");
    assert_eval!("(case 2 1 :one 2 :two :other)", ":two");
    assert_eval!("(case :b (:a :b) :ab :other)", ":ab");
    assert_eval!("(case \"x\" \"x\" 1 2)", "1");
    assert_eval!("(case 5 1 :one :default)", ":default");
    assert_eval!("(case 5 1 :one)", "nil");
    assert_fails!("(case 1 1 :a 1 :b)", "Duplicate");
}

#[test]
fn conditional_binding_forms() {
    assert_eval!("(if-let [x 0] \"truthy\" \"falsy\")", "\"truthy\"");
    assert_eval!("(if-let [x nil] \"yes\" \"no\")", "\"no\"");
    assert_eval!("(if-let [x false] \"yes\")", "nil");
    assert_eval!("(when-let [x 5] (def found x) (* x 2))", "10");
    assert_eval!("(when-let [x false] 1)", "nil");
    assert_eval!("(if-some [x false] [:some x] :none)", "[:some false]");
    assert_eval!("(if-some [x nil] [:some x] :none)", ":none");
    assert_eval!("(when-some [x 0] (inc x))", "1");
    assert_eval!("(when-first [x [7 8]] (* x 2))", "14");
    assert_eval!("(when-first [x []] :never)", "nil");
    assert_eval!("(if-let [[a b] [1 2]] (+ a b) 0)", "3");
    assert_fails!("(if-let [x 1 y 2] x)", "exactly one binding");
}

#[test]
fn do_and_top_level_sequencing() {
    assert_eval!("(do)", "nil");
    assert_eval!("(do 1 2 3)", "3");
    assert_eval!("1 2 3", "3");
    assert_eval!("(def x 10) x", "10");
    assert_eval!("(def a 1) (def b (+ a 1)) b", "2");
}

#[test]
fn def_and_defn() {
    assert_eval!("(def x 42)", "#'x");
    assert_eval!("(def x \"the answer\" 42) x", "42");
    assert_eval!("(def x 1) (def x 2) x", "2");
    assert_eval!("(defn twice [x] (* x 2))", "#'twice");
    assert_eval!("(defn twice [x] (* x 2)) (twice 21)", "42");
    assert_eval!(
        "(defn greet \"Says hello\" [name] (str \"Hello, \" name)) (greet \"Bo\")",
        "\"Hello, Bo\""
    );
    assert_eval!(
        "(def rate 0.1) (defn apply-rate [x] (* x rate)) (apply-rate 100)",
        "10.0"
    );
    assert_eval!(
        "(defn first-name [[first last]] first) (first-name [\"Alice\" \"Smith\"])",
        "\"Alice\""
    );
    assert_eval!(
        "(defn greet [{:keys [name]}] (str \"Hello \" name)) (greet {:name \"World\"})",
        "\"Hello World\""
    );
    assert_eval!("(defn process [[id {:keys [status]}]] (str id \":\" status)) (process [42 {:status \"ok\"}])", "\"42:ok\"");
    assert_eval!(
        "(defn f ([x] (f x 10)) ([x y] (+ x y))) [(f 1) (f 1 2)]",
        "[11 3]"
    );
    assert_eval!(
        "(defn f [x & more] [x more]) [(f 1) (f 1 2 3)]",
        "[[1 nil] [1 [2 3]]]"
    );
    assert_eval!(
        "(defn fact [n] (if (<= n 1) 1 (* n (fact (dec n))))) (fact 10)",
        "3628800"
    );
    assert_eval!("(defonce x 1) (defonce x 2) x", "1");
    assert_eval!(
        "(defn later [] (helper)) (defn helper [] :ok) (later)",
        ":ok"
    );
    // Definitions shadow builtins (specification §5.13).
    assert_eval!("(def map {}) map", "{}");
    assert_eval!("(defn filter [x] x) (filter 5)", "5");
    assert_eval!(
        "(defn filter [x] x) (clojure.core/filter odd? [1 2])",
        "[1]"
    );
    assert_fails!("(def data/x 1)", "read-only");
    assert_fails!("(defn f [x] x) (f 1 2)", "expects 1 argument, got 2");
}

#[test]
fn fn_and_anonymous_shorthand() {
    assert_eval!("((fn [x] (* x x)) 4)", "16");
    assert_eval!("((fn [a & rest] rest) 1 2 3)", "[2 3]");
    assert_eval!("((fn [[a b]] (+ a b)) [1 2])", "3");
    assert_eval!("((fn [{:keys [x]}] x) {:x 9})", "9");
    assert_eval!("((fn [x] (def last-input x) (* x 2)) 3)", "6");
    assert_eval!("(#(+ % 1) 1)", "2");
    assert_eval!("(#(+ %1 %2) 1 2)", "3");
    assert_eval!("(#(* % %) 5)", "25");
    assert_eval!("(#(42))", "42");
    assert_eval!("(#(vector %1 %&) 1 2 3)", "[1 [2 3]]");
    assert_eval!("(#(str %2) 1 2)", "\"2\"");
    assert_eval!(
        "((fn fact [n] (if (zero? n) 1 (* n (fact (dec n))))) 5)",
        "120"
    );
    assert_eval!("((fn ([] 0) ([x] x) ([x & r] (count r))) 1 2 3)", "2");
    assert_eval!(
        "(let [threshold 100] (filter #(> (:price %) threshold) [{:price 50} {:price 150}]))",
        "[{:price 150}]"
    );
    assert_eval!("(let [n 1 f (fn [] (let [g (fn [] n)] (g)))] (f))", "1");
    assert_eval!("(map (fn [[k v]] [v k]) {:a 1})", "[[1 :a]]");
    assert_fails!("(fn x)", "parameter vector");
    assert_fails!("((fn [x] x))", "expects 1 argument, got 0");
}

#[test]
fn closures_capture_their_environment() {
    assert_eval!("(defn adder [n] (fn [x] (+ x n))) ((adder 5) 10)", "15");
    assert_eval!(
        "(let [fs (map (fn [i] (fn [] i)) [1 2 3])] (map (fn [f] (f)) fs))",
        "[1 2 3]"
    );
    assert_eval!("(let [a 1] (let [f (fn [] a) a 2] [(f) a]))", "[1 2]");
    assert_eval!("(let [x 1] ((fn [] ((fn [] ((fn [] x)))))))", "1");
}

#[test]
fn loop_and_recur() {
    assert_eval!(
        "(loop [i 0 acc 0] (if (< i 5) (recur (inc i) (+ acc i)) acc))",
        "10"
    );
    assert_eval!(
        "((fn [n acc] (if (> n 0) (recur (dec n) (* acc n)) acc)) 5 1)",
        "120"
    );
    assert_eval!(
        "(loop [[head & tail] [1 2 3 4] sum 0] (if head (recur tail (+ sum head)) sum))",
        "10"
    );
    assert_eval!(
        "(loop [i 0] (cond (= i 3) :done :else (recur (inc i))))",
        ":done"
    );
    assert_eval!("(loop [i 0] (when (< i 3) (recur (inc i))))", "nil");
    assert_eval!("(loop [i 0] (or (> i 5) (recur (inc i))))", "true");
    assert_eval!(
        "(defn count-down [n] (if (zero? n) :done (recur (dec n)))) (count-down 100000)",
        ":done"
    );
    assert_eval!(
        "((fn [x & more] (if more (recur (first more) (next more)) x)) 1 2 3)",
        "3"
    );
    assert_fails!("(loop [i 0] (+ 1 (recur i)))", "tail position");
    assert_fails!("(recur 1)", "only allowed inside");
    assert_fails!("(loop [i 0] (recur))", "expects 1 argument, got 0");
    assert_fails!("(fn [x] (let [y (recur x)] y))", "tail position");
}

#[test]
fn threading_macros() {
    assert_eval!("(->> [1 2 3] (map inc))", "[2 3 4]");
    assert_eval!("(->> [1 2 3 4 5] (filter odd?) (take 2))", "[1 3]");
    assert_eval!("(->> [3 1 2] (sort))", "[1 2 3]");
    assert_eval!(
        "(-> {:a 1} (assoc :b 2) (assoc :c 3))",
        "{:a 1, :b 2, :c 3}"
    );
    assert_eval!("(-> {:a {:b 1}} (get-in [:a :b]))", "1");
    assert_eval!("(-> {:a 1} (update :a inc))", "{:a 2}");
    assert_eval!("(-> 5 inc (* 2))", "12");
    assert_eval!("(-> {:a 1} :a)", "1");
    assert_eval!("(as-> 1 x (+ x 1) (* x 10))", "20");
    assert_eval!("(cond-> 1 true inc false (* 100) true (* 2))", "4");
    assert_eval!("(cond->> [1 2] true (map inc))", "[2 3]");
    assert_eval!("(some-> {:a {:b 5}} :a :b inc)", "6");
    assert_eval!("(some-> {:a nil} :a :b inc)", "nil");
    assert_eval!("(some->> [1 2] (map inc) first)", "2");
}

#[test]
fn and_or_short_circuit() {
    assert_eval!("(and true true)", "true");
    assert_eval!("(and true false)", "false");
    assert_eval!("(and nil \"x\")", "nil");
    assert_eval!("(and)", "true");
    assert_eval!("(and 1 2 3)", "3");
    assert_eval!("(or false true)", "true");
    assert_eval!("(or nil false \"x\")", "\"x\"");
    assert_eval!("(or)", "nil");
    assert_eval!("(or nil false)", "false");
    assert_eval!("(and false (undefined-thing))", "false");
    assert_eval!("(or 1 (undefined-thing))", "1");
}

#[test]
fn where_predicates() {
    assert_eval!("(count (filter (where :x = 1) [{:x 1} {:x 2}]))", "1");
    assert_eval!(
        "(count (filter (where :x > 1) [{:x 1} {:x 2} {:x 3}]))",
        "2"
    );
    assert_eval!(
        "(count (filter (where :x not= 2) [{:x 1} {:x 2} {:x 3}]))",
        "2"
    );
    assert_eval!(
        "(count (filter (where :x <= 2) [{:x 1} {:x 2} {:x 3}]))",
        "2"
    );
    assert_eval!(
        "(count (filter (where [:a :b] = 1) [{:a {:b 1}} {:a {:b 2}}]))",
        "1"
    );
    // A path goes as `get-in` goes: through vectors by index, into a
    // string's characters, and to nil at a missing key or a nil.
    assert_eval!(
        "(mapv (where [:a 1 :b] = 2) [{:a [0 {:b 2}]} {:a [{:b 2}]} {:a nil} {}])",
        "[true false false false]"
    );
    assert_eval!(
        "(mapv (where [:n 1] = \\y) [{:n \"xy\"} {:n \"yx\"} {:n \"x\"}])",
        "[true false false]"
    );
    assert_eval!(
        "(mapv (where [:a :b]) [{:a {:b false}} {:a {:b 0}} {:a {}} {:a \"s\"}])",
        "[false true false false]"
    );
    assert_eval!(
        "(count (filter (where :a) [{:a 1} {:a nil} {:a false}]))",
        "1"
    );
    assert_eval!(
        "(count (filter (where :s = :a) [{:s \"a\"} {:s \"b\"}]))",
        "1"
    );
    assert_eval!(
        "(count (filter (where :s in [:a :b]) [{:s \"a\"} {:s \"c\"}]))",
        "1"
    );
    assert_eval!(
        "(count (filter (where :t includes :x) [{:t [\"x\" \"y\"]} {:t []}]))",
        "1"
    );
    assert_eval!(
        "(count (filter (where :t includes \"ell\") [{:t \"hello\"} {:t \"x\"}]))",
        "1"
    );
    // Keywords stand for their names on either side of `in` and
    // `includes`, in vectors and sets, and for a string's substring.
    assert_eval!(
        "(map :id (filter (where :s in [:a \"b\"]) [{:id 1 :s \"a\"} {:id 2 :s :b} {:id 3 :s \"c\"} {:id 4 :s 1}]))",
        "[1 2]"
    );
    assert_eval!(
        "(map :id (filter (where :s in #{\"a\" :b}) [{:id 1 :s :a} {:id 2 :s \"b\"} {:id 3}]))",
        "[1 2]"
    );
    assert_eval!(
        "(map :id (filter (where :t includes :x) [{:id 1 :t [:x]} {:id 2 :t #{\"x\"}} {:id 3 :t \"axe\"} {:id 4 :t 5} {:id 5}]))",
        "[1 2 3]"
    );
    assert_eval!("(filter (where :x = nil) [{:x nil} {:x 1}])", "[{:x nil}]");
    assert_eval!(
        "(filter (where :age > 18) [{:age 20} {} {:age \"x\"}])",
        "[{:age 20}]"
    );
    assert_eval!(
        "(filter (where :status = \"active\") [{\"status\" \"active\"}])",
        "[{\"status\" \"active\"}]"
    );
    assert_eval!(
        "(let [ids [1 2]] (count (filter (where :id in ids) [{:id 1} {:id 3}])))",
        "1"
    );
    assert_eval!(
        "(count (filter (all-of (where :a = 1) (where :b = 2)) [{:a 1 :b 2} {:a 1 :b 3}]))",
        "1"
    );
    assert_eval!(
        "(count (filter (any-of (where :a = 1) (where :a = 2)) [{:a 1} {:a 2} {:a 3}]))",
        "2"
    );
    assert_eval!(
        "(count (filter (none-of (where :a = 1)) [{:a 1} {:a 2}]))",
        "1"
    );
    assert_eval!("(count (filter (all-of) [{:a 1} {:a 2}]))", "2");
    assert_eval!("(count (filter (any-of) [{:a 1} {:a 2}]))", "0");
    assert_eval!("(count (filter (none-of) [{:a 1} {:a 2}]))", "2");
    assert_fails!("(where :status \"active\")", "missing its operator");
    assert_fails!("(where :a like 1)", "Unknown `where` operator");
}

#[test]
fn juxt_pmap_pcalls() {
    assert_eval!(
        "((juxt :name :age) {:name \"Alice\" :age 30})",
        "[\"Alice\" 30]"
    );
    assert_eval!("((juxt #(+ % 1) #(* % 2)) 5)", "[6 10]");
    assert_eval!("((juxt first last) [1 2 3])", "[1 3]");
    assert_eval!("((juxt) {:a 1})", "[]");
    assert_eval!(
        "(let [factor 10] (pmap #(* % factor) [1 2 3]))",
        "[10 20 30]"
    );
    assert_eval!("(pcalls #(+ 1 1) #(* 2 3) #(- 10 5))", "[2 6 5]");
    assert_fails!(
        "(pmap (fn [x] (def leaked x) x) [1]) leaked",
        "Undefined symbol `leaked`"
    );
}

#[test]
fn for_doseq_dotimes() {
    assert_eval!("(for [x [1 2 3]] (* x 10))", "[10 20 30]");
    assert_eval!(
        "(for [x [1 2] y [:a :b]] [x y])",
        "[[1 :a] [1 :b] [2 :a] [2 :b]]"
    );
    assert_eval!("(for [x (range 10) :when (odd? x)] x)", "[1 3 5 7 9]");
    assert_eval!("(for [x [1 2 3] :let [y (* x x)]] y)", "[1 4 9]");
    assert_eval!("(for [x [1 2 3 4 1] :while (< x 3)] x)", "[1 2]");
    assert_eval!(
        "(for [x [1 2] y [1 2 3] :while (<= y x)] [x y])",
        "[[1 1] [2 1] [2 2]]"
    );
    assert_eval!(
        "(for [[k v] {:a 1 :b 2}] (str (name k) v))",
        "[\"a1\" \"b2\"]"
    );
    assert_eval!("(doseq [x [1 2]] (println x))", "nil");
    assert_eval!("(dotimes [i 3] (println i))", "nil");
    assert_fails!("(for [:when true] 1)", "must start with a binding");
}

#[test]
fn return_and_fail_end_the_program() {
    assert_eval!("(return 42) 99", "42");
    assert_eval!(
        "(map (fn [x] (if (= x 2) (return :early) x)) [1 2 3])",
        ":early"
    );
    assert_fails!("(fail \"not found\")", "not found");
    assert_fails!("(do (fail {:reason :missing}) 1)", ":missing");
}

#[test]
fn quote_keeps_forms_as_data() {
    assert_eval!("'(1 2 3)", "(1 2 3)");
    assert_eval!("'a", "a");
    assert_eval!("(quote (+ 1 2))", "(+ 1 2)");
    assert_eval!("(= '(1 2) [1 2])", "true");
}

#[test]
fn calling_collections_and_keywords() {
    assert_eval!("(:name {:name \"Alice\"})", "\"Alice\"");
    assert_eval!("(:missing {:name \"Alice\"} \"default\")", "\"default\"");
    assert_eval!("({:name \"Alice\"} :name)", "\"Alice\"");
    assert_eval!("({} :name \"Unknown\")", "\"Unknown\"");
    assert_eval!("(#{1 2 3} 2)", "2");
    assert_eval!("(#{1 2 3} 4)", "nil");
    assert_eval!("([10 20] 1)", "20");
    assert_fails!("(5 1)", "Integer 5 is not a function");
    assert_fails!("(\"abc\" 1)", "is not a function");
}

#[test]
fn names_resolve_with_helpful_errors() {
    assert_fails!("(fliter odd? [1])", "did you mean `filter`");
    assert_fails!("undefined-name", "Undefined symbol `undefined-name`");
    assert_fails!("(clojure.string/capitalize-all \"a\")", "not available");
    assert_eval!("(clojure.string/join \",\" [1 2])", "\"1,2\"");
    assert_eval!("(str/upper-case \"a\")", "\"A\"");
    assert_eval!("(clojure.core/map inc [1])", "[2]");
    assert_eval!("Double/POSITIVE_INFINITY", "##Inf");
    assert_fails!("(try 1 (catch Exception e 2))", "not supported");
    assert_fails!("(atom 1)", "not supported");
    assert_fails!("map and", "special form");
}

#[test]
fn history_symbols_default_to_nil() {
    assert_eval!("[*1 *2 *3]", "[nil nil nil]");
}
