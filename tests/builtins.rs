//! The extended builtin library: every function added beyond the core
//! set, with the edge cases (nil, empty, strings as sequences, errors).

#[test]
fn keep_and_keep_indexed_drop_only_nil() {
    assert_eval!("(keep identity [false nil 1 2 nil 3])", "[false 1 2 3]");
    assert_eval!(
        "(keep (fn [x] (when (> x 2) (* x x))) [1 2 3 4 5])",
        "[9 16 25]"
    );
    assert_eval!("(keep identity nil)", "[]");
    assert_eval!("(keep #(when (not= % \"b\") %) \"abc\")", "[\"a\" \"c\"]");
    assert_eval!(
        "(sort (keep (fn [[k v]] (when (> v 1) k)) {:a 1 :b 2 :c 3}))",
        "[:b :c]"
    );
    assert_eval!(
        "(keep-indexed (fn [i v] (if (odd? i) v)) [:a :b :c :d])",
        "[:b :d]"
    );
    assert_eval!(
        "(keep-indexed (fn [i v] (when (even? i) v)) [10 20 30])",
        "[10 30]"
    );
}

#[test]
fn transducer_forms_are_refused_clearly() {
    assert_fails!("(into [] (map inc) [1 2])", "Transducers are not supported");
    assert_fails!("(into [] [1] [2])", "Transducers are not supported");
    assert_fails!("(filter odd?)", "needs a collection");
    assert_fails!("(transduce + 0 [1])", "Transducers are not supported");
    assert_eval!("(into)", "[]");
    assert_eval!("(into [1])", "[1]");
}

#[test]
fn mapcat_concatenates() {
    assert_eval!("(mapcat (fn [x] [x (* x 2)]) [1 2 3])", "[1 2 2 4 3 6]");
    assert_eval!("(mapcat (fn [x] (range 0 x)) [2 3 1])", "[0 1 0 1 2 0]");
    assert_eval!("(mapcat identity [[1 2] [3 4] [5]])", "[1 2 3 4 5]");
    assert_eval!("(mapcat list [1 2] [:a :b])", "[1 :a 2 :b]");
    assert_eval!("(mapcat identity [])", "[]");
    assert_fails!("(mapcat inc [1])", "expected a collection");
}

#[test]
fn filterv_is_filter() {
    assert_eval!("(filterv even? [1 2 3 4])", "[2 4]");
}

#[test]
fn partition_all_and_partition_by() {
    assert_eval!("(partition-all 2 [1 2 3])", "[[1 2] [3]]");
    assert_eval!("(partition-all 3 [1 2 3 4 5])", "[[1 2 3] [4 5]]");
    assert_eval!("(partition-all 2 1 [1 2 3])", "[[1 2] [2 3] [3]]");
    assert_eval!("(partition-all 2 [])", "[]");
    assert_eval!("(partition-all 2 \"abc\")", "[[\"a\" \"b\"] [\"c\"]]");
    assert_fails!("(partition-all 0 [1])", "positive size");
    assert_eval!("(partition-by odd? [1 1 2 2 3])", "[[1 1] [2 2] [3]]");
    assert_eval!("(partition-by identity [1 1 2 3 3])", "[[1 1] [2] [3 3]]");
    assert_eval!("(partition-by identity [])", "[]");
    assert_eval!("(partition 3 3 [0] [1 2 3 4 5])", "[[1 2 3] [4 5 0]]");
    assert_eval!("(partition 3 3 [] [1 2 3 4])", "[[1 2 3] [4]]");
}

#[test]
fn split_at_and_split_with() {
    assert_eval!("(split-at 2 [1 2 3])", "[[1 2] [3]]");
    assert_eval!("(split-at 0 [1 2 3])", "[[] [1 2 3]]");
    assert_eval!("(split-at -1 [1 2 3])", "[[] [1 2 3]]");
    assert_eval!("(split-at 5 [1 2])", "[[1 2] []]");
    assert_eval!("(split-with pos? [1 2 -1 3])", "[[1 2] [-1 3]]");
    assert_eval!("(split-with even? [2 4 5 6])", "[[2 4] [5 6]]");
    assert_eval!("(split-with even? nil)", "[[] []]");
}

#[test]
fn take_last_drop_last_butlast() {
    assert_eval!("(take-last 2 [1 2 3])", "[2 3]");
    assert_eval!("(take-last 5 [1 2])", "[1 2]");
    assert_eval!("(take-last 2 [])", "nil");
    assert_eval!("(take-last 0 [1])", "nil");
    assert_eval!("(take-last 2 \"abc\")", "[\"b\" \"c\"]");
    assert_eval!("(drop-last [1 2 3])", "[1 2]");
    assert_eval!("(drop-last 2 [1 2 3])", "[1]");
    assert_eval!("(drop-last 5 [1 2 3])", "[]");
    assert_eval!("(drop-last \"abc\")", "[\"a\" \"b\"]");
    assert_eval!("(butlast [1 2 3 4])", "[1 2 3]");
    assert_eval!("(butlast [1])", "nil");
    assert_eval!("(butlast [])", "nil");
    assert_eval!("(butlast \"ab\")", "[\"a\"]");
}

#[test]
fn take_nth_dedupe_distinct_by() {
    assert_eval!("(take-nth 2 [1 2 3 4 5])", "[1 3 5]");
    assert_eval!("(take-nth 3 [])", "[]");
    assert_fails!("(take-nth 0 [1 2])", "positive size");
    assert_eval!("(dedupe [1 1 2 3 3 2])", "[1 2 3 2]");
    assert_eval!("(dedupe \"aabcc\")", "[\"a\" \"b\" \"c\"]");
    assert_eval!("(dedupe nil)", "[]");
    assert_eval!(
        "(distinct-by first [[\"a\" 1] [\"a\" 2] [\"b\" 3]])",
        "[[\"a\" 1] [\"b\" 3]]"
    );
    assert_eval!(
        "(distinct-by :k [{:k 1 :v 1} {:k 1 :v 2} {\"k\" 2}])",
        "[{:k 1, :v 1} {\"k\" 2}]"
    );
}

#[test]
fn reductions_shows_every_step() {
    assert_eval!("(reductions + [1 2 3])", "[1 3 6]");
    assert_eval!("(reductions + 10 [1 2])", "[10 11 13]");
    assert_eval!("(reductions + [])", "[0]");
    assert_eval!("(reductions + 5 [])", "[5]");
    assert_eval!("(reductions conj [] [1 2])", "[[] [1] [1 2]]");
}

#[test]
fn first_and_next_combinations() {
    assert_eval!("(ffirst [[1 2] [3]])", "1");
    assert_eval!("(fnext [1 2 3])", "2");
    assert_eval!("(nfirst [[1 2] [3]])", "[2]");
    assert_eval!("(nnext [1 2 3 4])", "[3 4]");
    assert_eval!("(nnext [1 2])", "nil");
    assert_eval!("(ffirst nil)", "nil");
    assert_eval!("(fnext \"ab\")", "\"b\"");
}

#[test]
fn nthrest_and_nthnext() {
    assert_eval!("(nthrest [1 2 3] 2)", "[3]");
    assert_eval!("(nthrest [1 2 3] 5)", "[]");
    assert_eval!("(nthrest [1 2 3] 0)", "[1 2 3]");
    assert_eval!("(nthnext [1 2 3] 1)", "[2 3]");
    assert_eval!("(nthnext [1 2] 2)", "nil");
    assert_eval!("(nthnext nil 1)", "nil");
}

#[test]
fn repeat_is_finite_only() {
    assert_eval!("(repeat 3 :a)", "[:a :a :a]");
    assert_eval!("(repeat 0 :a)", "[]");
    assert_eval!("(repeat -1 :a)", "[]");
    assert_fails!("(repeat :a)", "infinite sequence");
    assert_fails!("(repeat :a)", "(repeat 3 x)");
    assert_fails!("(repeat 100000000 :a)", "memory-exceeded");
}

#[test]
fn interpose_empty_cons() {
    assert_eval!(
        "(interpose \", \" [\"a\" \"b\" \"c\"])",
        "[\"a\" \", \" \"b\" \", \" \"c\"]"
    );
    assert_eval!("(interpose 0 [])", "[]");
    assert_eval!("(interpose 0 [1])", "[1]");
    assert_eval!("(empty [1 2 3])", "[]");
    assert_eval!("(empty {:a 1})", "{}");
    assert_eval!("(empty #{1})", "#{}");
    assert_eval!("(empty (list 1))", "()");
    assert_eval!("(empty nil)", "nil");
    assert_eval!("(empty \"abc\")", "nil");
    assert_eval!("(cons 0 [1 2 3])", "[0 1 2 3]");
    assert_eval!("(cons 0 nil)", "[0]");
    assert_eval!("(cons 0 (list 1 2))", "(0 1 2)");
    assert_eval!("(cons \"x\" \"ab\")", "[\"x\" \"a\" \"b\"]");
    assert_fails!("(cons 1 2)", "expected a collection");
}

#[test]
fn peek_pop_subvec_rseq() {
    assert_eval!("(peek [1 2])", "2");
    assert_eval!("(peek [])", "nil");
    assert_eval!("(peek (list 1 2))", "1");
    assert_eval!("(peek nil)", "nil");
    assert_fails!("(peek #{1})", "expected a vector or list");
    assert_eval!("(pop [1 2])", "[1]");
    assert_eval!("(pop [1 2 3])", "[1 2]");
    assert_eval!("(pop [])", "nil");
    assert_eval!("(pop (list 1 2))", "(2)");
    assert_fails!("(pop \"ab\")", "expected a vector or list");
    assert_eval!("(subvec [1 2 3] 1)", "[2 3]");
    assert_eval!("(subvec [0 1 2 3 4] 1 3)", "[1 2]");
    assert_eval!("(subvec [0 1 2] 2 10)", "[2]");
    assert_eval!("(subvec [0 1 2] 2 1)", "[]");
    assert_fails!("(subvec (list 1 2) 1)", "expected a vector");
    assert_eval!("(rseq [1 2 3])", "[3 2 1]");
    assert_eval!("(rseq [])", "nil");
    assert_fails!("(rseq \"ab\")", "expected a vector");
}

#[test]
fn sum_and_avg() {
    assert_eval!("(sum [1 2 3 4 5])", "15");
    assert_eval!("(sum [])", "0");
    assert_eval!("(sum [1 2.5])", "3.5");
    assert_eval!("(sum [1 nil 2])", "3");
    assert_eval!("(sum #{1 2})", "3");
    assert_fails!("(sum [1 \"2\"])", "expected numbers");
    assert_fails!("(sum [9223372036854775807 1])", "overflow");
    assert_eval!("(avg [1 2 3 4 5])", "3.0");
    assert_eval!("(avg [10 20])", "15.0");
    assert_eval!("(avg [])", "nil");
    assert_eval!("(avg nil)", "nil");
}

#[test]
fn not_every_and_combinations() {
    assert_eval!("(not-every? pos? [1 -1])", "true");
    assert_eval!("(not-every? pos? [1 2])", "false");
    assert_eval!("(not-every? :a [{:a 1} {}])", "true");
    assert_eval!("(combinations [1 2 3] 2)", "[[1 2] [1 3] [2 3]]");
    assert_eval!(
        "(combinations [1 2 3 4] 3)",
        "[[1 2 3] [1 2 4] [1 3 4] [2 3 4]]"
    );
    assert_eval!("(combinations [1 2 3] 0)", "[[]]");
    assert_eval!("(combinations [1 2] 3)", "[]");
    assert_fails!("(combinations [1 2] -1)", "non-negative");
}

#[test]
fn tree_seq_walks_depth_first() {
    assert_eval!(
        "(tree-seq sequential? seq [[1 2] [3 [4]]])",
        "[[[1 2] [3 [4]]] [1 2] 1 2 [3 [4]] 3 [4] 4]"
    );
    assert_eval!(
        "(let [tree {:id 1 :children [{:id 2 :children []} {:id 3 :children []}]}]
           (map :id (tree-seq :children :children tree)))",
        "[1 2 3]"
    );
    assert_eval!("(tree-seq vector? seq 5)", "[5]");
}

#[test]
fn min_by_and_max_by_take_arguments_too() {
    assert_eval!("(min-by :n {:n 2} {:n 1} {:n 3})", "{:n 1}");
    assert_eval!("(max-by count \"a\" \"abc\" \"ab\")", "\"abc\"");
    assert_eval!("(min-by :n [{:n 2} {:n 1}])", "{:n 1}");
}

#[test]
fn merge_with_combines_repeated_keys() {
    assert_eval!("(merge-with + {:a 1} {:a 2})", "{:a 3}");
    assert_eval!(
        "(merge-with + {:a 1 :b 2} {:a 3 :c 4})",
        "{:a 4, :b 2, :c 4}"
    );
    assert_eval!("(merge-with + {:a 1} {:a 2} {:a 3})", "{:a 6}");
    assert_eval!("(merge-with into {:a [1]} nil {:a [2]})", "{:a [1 2]}");
    assert_eval!("(merge-with +)", "nil");
    assert_eval!("(merge-with + nil)", "nil");
    assert_fails!("(merge-with + {:a 1} [1])", "expected a map");
}

#[test]
fn reduce_kv_key_and_val() {
    assert_eval!(
        "(reduce-kv (fn [acc k v] (+ acc v)) 0 {:a 1 :b 2 :c 3})",
        "6"
    );
    assert_eval!(
        "(reduce-kv (fn [acc k v] (assoc acc k (* v 2))) {} {:a 1 :b 2})",
        "{:a 2, :b 4}"
    );
    assert_eval!("(reduce-kv (fn [acc i x] (+ acc (* i x))) 0 [5 6 7])", "20");
    assert_eval!("(reduce-kv (fn [acc k v] acc) :init nil)", ":init");
    assert_fails!("(reduce-kv + 0 #{1})", "expected a map or vector");
    assert_eval!("(key (first {:a 1}))", ":a");
    assert_eval!("(val (first {:a 1}))", "1");
    assert_eval!("(map key {:a 1 :b 2})", "[:a :b]");
    assert_fails!("(key [1 2 3])", "map entry");
    assert_eval!("(array-map :a 1)", "{:a 1}");
}

#[test]
fn set_algebra() {
    assert_eval!("(union #{1 2} #{2 3})", "#{1 2 3}");
    assert_eval!("(clojure.set/union)", "#{}");
    assert_eval!("(set/union nil #{1})", "#{1}");
    assert_eval!("(set/intersection #{1 2} #{2 3})", "#{2}");
    assert_eval!("(set/intersection #{1 2 3} #{2 3} #{3})", "#{3}");
    assert_eval!("(set/difference #{1 2 3} #{2})", "#{1 3}");
    assert_eval!("(set/difference #{1 2 3} #{2} #{3})", "#{1}");
    assert_eval!("(set/subset? #{1} #{1 2})", "true");
    assert_eval!("(set/subset? #{1 3} #{1 2})", "false");
    assert_eval!("(set/superset? #{1 2} #{1})", "true");
    assert_eval!("(set/union #{1} [2])", "#{1 2}");
    assert_fails!("(set/union #{1} 2)", "expected a set");
    assert_eval!("(disj #{1 2 3} 2)", "#{1 3}");
    assert_eval!("(disj #{1 2 3} 2 3)", "#{1}");
    assert_eval!("(disj nil 1)", "nil");
    assert_fails!("(disj [1] 1)", "expected a set");
}

#[test]
fn clojure_set_relational_helpers() {
    assert_eval!("(set/select odd? #{1 2 3})", "#{1 3}");
    assert_eval!("(clojure.set/select odd? #{1 2 3})", "#{1 3}");
    assert_fails!("(select odd? #{1})", "Undefined symbol `select`");
    assert_eval!("(set/project [{:a 1 :b 2} {:a 1 :b 3}] [:a])", "#{{:a 1}}");
    assert_eval!("(set/rename-keys {:a 1 :b 2} {:a :x})", "{:b 2, :x 1}");
    assert_eval!("(rename-keys {:a 1 :b 2} {:a :b :b :a})", "{:b 1, :a 2}");
    assert_eval!("(rename-keys {:a 1} {:z :y})", "{:a 1}");
    assert_eval!("(set/map-invert {:a 1 :b 2})", "{1 :a, 2 :b}");
    assert_fails!("(set/frobnicate #{})", "available sets functions");
}

#[test]
fn walk_functions() {
    assert_eval!("(walk inc #(apply + %) [1 2 3])", "9");
    assert_eval!("(walk identity identity [1 2 3])", "[1 2 3]");
    assert_eval!("(walk inc identity #{1 2 3})", "#{2 3 4}");
    assert_eval!("(walk inc identity (list 1 2))", "(2 3)");
    assert_eval!("(walk (fn [[k v]] [v k]) identity {:a 1})", "{1 :a}");
    assert_eval!(
        "(prewalk #(if (number? %) (inc %) %) [1 [2 3]])",
        "[2 [3 4]]"
    );
    assert_eval!(
        "(postwalk #(if (number? %) (inc %) %) [1 [2 3]])",
        "[2 [3 4]]"
    );
    assert_eval!(
        "(postwalk #(if (vector? %) (apply + %) %) [[1 2] [3 4]])",
        "10"
    );
    assert_eval!(
        "(clojure.walk/prewalk #(if (and (map? %) (:value %)) (update % :value inc) %)
                               {:value 1 :nested {:value 2}})",
        "{:value 2, :nested {:value 3}}"
    );
    assert_eval!("(postwalk identity \"abc\")", "\"abc\"");
    assert_eval!(
        "(prewalk-replace {:a :b} [:a {:a :a} #{:a}])",
        "[:b {:b :b} #{:b}]"
    );
    assert_eval!("(postwalk-replace {1 :one} [1 [2 1]])", "[:one [2 :one]]");
    assert_fails!("(prewalk-replace [1] [1])", "map of replacements");
}

#[test]
fn walk_keys_conversion() {
    assert_eval!(
        "(walk/keywordize-keys {\"a\" [{\"b\" 1}] :c 2})",
        "{:a [{:b 1}], :c 2}"
    );
    assert_eval!(
        "(clojure.walk/stringify-keys {:a {:b 1} 1 2})",
        "{\"a\" {\"b\" 1}, 1 2}"
    );
    assert_eval!("(keywordize-keys nil)", "nil");
}

#[test]
fn walks_are_bounded_by_the_depth_limit() {
    assert_fails!(
        "(postwalk identity (reduce (fn [acc _] [acc]) 1 (range 5000)))",
        "recursion-limit-exceeded"
    );
    assert_fails!(
        "(keywordize-keys (reduce (fn [acc _] [acc]) 1 (range 5000)))",
        "nested more than"
    );
    assert_eval!(
        "(loop [x (prewalk identity (reduce (fn [acc _] [acc]) 1 (range 900))) n 0]
           (if (vector? x) (recur (first x) (inc n)) [x n]))",
        "[1 900]"
    );
}

#[test]
fn string_predicates_and_case() {
    assert_eval!("(blank? \"  \")", "true");
    assert_eval!("(str/blank? \"\")", "true");
    assert_eval!("(str/blank? nil)", "true");
    assert_eval!("(str/blank? \" a \")", "false");
    assert_fails!("(blank? 1)", "expected a string");
    assert_eval!("(clojure.string/capitalize \"hELLO\")", "\"Hello\"");
    assert_eval!("(str/capitalize \"\")", "\"\"");
    assert_eval!("(str/capitalize \"élan\")", "\"Élan\"");
}

#[test]
fn string_reverse_versus_collection_reverse() {
    assert_eval!("(clojure.string/reverse \"abc\")", "\"cba\"");
    assert_eval!("(str/reverse \"héllo\")", "\"olléh\"");
    assert_eval!("(string/reverse \"ab\")", "\"ba\"");
    assert_eval!("(reverse \"abc\")", "[\"c\" \"b\" \"a\"]");
    assert_eval!("(clojure.core/reverse [1 2])", "[2 1]");
    assert_fails!("(str/reverse [1 2])", "expected a string");
}

#[test]
fn index_of_and_last_index_of() {
    assert_eval!("(str/index-of \"hello\" \"l\")", "2");
    assert_eval!("(index-of \"hello\" \"x\")", "nil");
    assert_eval!("(index-of \"hello\" \"l\" 3)", "3");
    assert_eval!("(index-of \"hello\" \"l\" 10)", "nil");
    assert_eval!("(index-of \"hello\" \"\")", "0");
    assert_eval!("(index-of \"héllo\" \"l\")", "2");
    assert_eval!("(index-of \"hello\" \\o)", "4");
    assert_eval!("(index-of [1 2 3] 2)", "1");
    assert_eval!("(index-of [1 2 3] 9)", "nil");
    assert_fails!("(index-of \"abc\" 1)", "string or character");
    assert_eval!("(str/last-index-of \"hello\" \"l\")", "3");
    assert_eval!("(last-index-of \"hello\" \"x\")", "nil");
    assert_eval!("(last-index-of \"hello\" \"l\" 2)", "2");
    assert_eval!("(last-index-of \"hello\" \"\")", "5");
    assert_eval!("(last-index-of \"aaa\" \"aa\")", "1");
    assert_eval!("(last-index-of \"aaaa\" \"aa\" 1)", "1");
    assert_eval!("(last-index-of \"hello\" \"l\" -1)", "nil");
}

#[test]
fn replace_variants() {
    assert_eval!("(str/replace \"hello\" \"l\" \"L\")", "\"heLLo\"");
    assert_eval!("(str/replace \"a1b22\" #\"\\d+\" \"#\")", "\"a#b#\"");
    assert_eval!(
        "(str/replace \"x=1\" #\"(\\w)=(\\d)\" \"$2=$1\")",
        "\"1=x\""
    );
    assert_eval!(
        "(str/replace \"a1b22\" #\"\\d+\" (fn [m] (str (* 2 (parse-long m)))))",
        "\"a2b44\""
    );
    assert_eval!(
        "(str/replace \"x=1 y=2\" #\"(\\w)=(\\d)\" (fn [[_ k v]] (str v k)))",
        "\"1x 2y\""
    );
    assert_eval!("(str/replace \"a.b.c\" \".\" (fn [m] \"-\"))", "\"a-b-c\"");
    assert_eval!("(str/replace-first \"aaa\" \"a\" \"b\")", "\"baa\"");
    assert_eval!("(str/replace-first \"a1b2\" #\"\\d\" \"#\")", "\"a#b2\"");
    assert_eval!(
        "(str/replace-first \"a1b2\" #\"\\d\" (fn [d] (str \"<\" d \">\")))",
        "\"a<1>b2\""
    );
    assert_eval!("(replace {1 :a} [1 2 1])", "[:a 2 :a]");
    assert_eval!("(replace {\"a\" \"x\"} \"abc\")", "[\"x\" \"b\" \"c\"]");
    assert_fails!("(replace [1] [1])", "expected a map of replacements");
    assert_fails!(
        "(str/replace \"a\" \"a\" 1)",
        "string or function replacement"
    );
}

#[test]
fn escape_trim_newline_char() {
    assert_eval!(
        "(str/escape \"a<b>\" {\"<\" \"&lt;\" \">\" \"&gt;\"})",
        "\"a&lt;b&gt;\""
    );
    assert_eval!("(str/escape \"abc\" #(when (= % \"b\") \"B\"))", "\"aBc\"");
    assert_eval!("(str/trim-newline \"a\\r\\n\\n\")", "\"a\"");
    assert_eval!("(str/trim-newline \"a\\n b \")", "\"a\\n b \"");
    assert_eval!("(char 97)", "\"a\"");
    assert_eval!("(char \\b)", "\"b\"");
    assert_fails!("(char -1)", "not a character code");
    // Characters are one-character strings, and `int` of a string is a
    // type error (as `(int "5")` is in Clojure).
    assert_fails!("(int (char 955))", "`int` expected a number");
}

#[test]
fn split_with_limits_follows_java() {
    assert_eval!("(str/split \"a,b,c\" #\",\" 2)", "[\"a\" \"b,c\"]");
    assert_eval!("(str/split \"a,b,,\" #\",\")", "[\"a\" \"b\"]");
    assert_eval!("(str/split \"a,b,,\" #\",\" -1)", "[\"a\" \"b\" \"\" \"\"]");
    assert_eval!("(str/split \"a,b,,\" \",\")", "[\"a\" \"b\"]");
    assert_eval!("(str/split \"a,,b\" \",\")", "[\"a\" \"\" \"b\"]");
    assert_eval!("(str/split \"\" #\",\")", "[\"\"]");
    assert_eval!("(str/split \",\" #\",\")", "[]");
    assert_eval!("(str/split \"abc\" \"\" 2)", "[\"a\" \"bc\"]");
    assert_eval!("(str/split \"a b  c\" #\"\\s+\")", "[\"a\" \"b\" \"c\"]");
}

#[test]
fn parse_helpers() {
    assert_eval!("(parse-int \"42\")", "42");
    assert_eval!("(parse-int \"x\")", "nil");
    assert_eval!("(parse-boolean \"true\")", "true");
    assert_eval!("(parse-boolean \"false\")", "false");
    assert_eval!("(parse-boolean \"TRUE\")", "nil");
    assert_eval!("(parse-boolean nil)", "nil");
}

#[test]
fn format_basics() {
    assert_eval!(
        "(format \"%s has %d items\" \"cart\" 3)",
        "\"cart has 3 items\""
    );
    assert_eval!("(format \"%.2f\" 3.14159)", "\"3.14\"");
    assert_eval!(
        "(format \"%d in hex is %x\" 255 255)",
        "\"255 in hex is ff\""
    );
    assert_eval!("(format \"%X\" 255)", "\"FF\"");
    assert_eval!("(format \"%e\" 1234.5)", "\"1.234500e+03\"");
    assert_eval!("(format \"%.3e\" 0.000123456)", "\"1.235e-04\"");
    assert_eval!("(format \"%o\" 8)", "\"10\"");
    assert_eval!("(format \"100%%\")", "\"100%\"");
    assert_eval!("(format \"a%nb\")", "\"a\\nb\"");
    assert_eval!("(format \"%s\" nil)", "\"\"");
    assert_eval!("(format \"%s and %s\" \"a\" \"b\" \"c\")", "\"a and b\"");
    assert_eval!("(format \"%s\" [1 \"a\" :k])", "\"[1 \\\"a\\\" :k]\"");
    assert_eval!("(format \"%S\" \"abc\")", "\"ABC\"");
    assert_eval!("(format \"%b %b\" nil 0)", "\"false true\"");
    assert_eval!("(format \"%c%c\" \\a 98)", "\"ab\"");
    assert_eval!("(format \"%f\" 0.1)", "\"0.100000\"");
    assert_eval!("(format \"%.2f\" 3)", "\"3.00\"");
    assert_eval!("(format \"%g\" 1234.5)", "\"1234.50\"");
    assert_eval!("(format \"%g\" 0.00001234)", "\"1.23400e-05\"");
}

#[test]
fn format_rounds_half_up_like_java() {
    assert_eval!("(format \"%.2f\" 1.005)", "\"1.01\"");
    assert_eval!("(format \"%.2f\" 0.125)", "\"0.13\"");
    assert_eval!("(format \"%.1f\" 0.15)", "\"0.2\"");
    assert_eval!("(format \"%.0f\" 2.5)", "\"3\"");
    assert_eval!("(format \"%.1f\" 9.96)", "\"10.0\"");
    assert_eval!("(format \"%.2e\" 9.999e10)", "\"1.00e+11\"");
    assert_eval!("(format \"%.2f\" -0.001)", "\"-0.00\"");
    assert_eval!("(format \"%.3f\" 1e20)", "\"100000000000000000000.000\"");
}

#[test]
fn format_widths_and_flags() {
    assert_eval!(
        "(format \"%5d|%-5s|%05d\" 42 \"ab\" -42)",
        "\"   42|ab   |-0042\""
    );
    assert_eval!("(format \"%,d\" 1234567)", "\"1,234,567\"");
    assert_eval!("(format \"%,.2f\" 1234567.891)", "\"1,234,567.89\"");
    assert_eval!("(format \"%+d % d\" 5 5)", "\"+5  5\"");
    assert_eval!("(format \"%(d\" -5)", "\"(5)\"");
    assert_eval!("(format \"%x\" -1)", "\"ffffffffffffffff\"");
    assert_eval!("(format \"%#x\" 255)", "\"0xff\"");
    assert_eval!("(format \"%08.3f\" -3.14159)", "\"-003.142\"");
    assert_eval!("(format \"%10.3s|\" \"abcdef\")", "\"       abc|\"");
    assert_eval!("(format \"%2$s %1$s\" \"a\" \"b\")", "\"b a\"");
    assert_eval!("(format \"%s %<s\" \"a\")", "\"a a\"");
    assert_eval!("(format \"%6.1f|\" ##Inf)", "\"Infinity|\"");
    assert_eval!("(format \"%f\" ##NaN)", "\"NaN\"");
}

#[test]
fn format_errors() {
    assert_fails!("(format \"%d\" ##Inf)", "an integer for `%d`");
    assert_fails!("(format \"%d\" 3.0)", "%.0f");
    assert_fails!("(format \"%q\" 1)", "does not support the `%q` conversion");
    assert_fails!("(format \"%s %s\" 1)", "no argument for `%s`");
    assert_fails!("(format \"%-08d\" 1)", "cannot have both");
    assert_fails!("(format \"%99999d\" 1)", "over the limit");
    assert_fails!("(format \"abc %\")", "ends inside the directive");
    assert_fails!("(format \"%.2f\" \"x\")", "a number for `%.2f`");
}

#[test]
fn java_math() {
    assert_eval!("(Math/abs -5)", "5");
    assert_eval!("(Math/abs -5.5)", "5.5");
    assert_eval!("(Math/pow 2 10)", "1024.0");
    assert_eval!("(Math/sqrt 16)", "4.0");
    assert_eval!("(Math/floor 2.7)", "2.0");
    assert_eval!("(Math/ceil 2.1)", "3.0");
    assert_eval!("(Math/round 2.5)", "3");
    assert_eval!("(Math/round -2.5)", "-2");
    assert_eval!("(Math/round 0.49999999999999994)", "0");
    assert_eval!("(Math/round ##NaN)", "0");
    assert_eval!("(Math/max 1 2)", "2");
    assert_eval!("(Math/max 1 2.0)", "2.0");
    assert_eval!("(Math/min 1 2)", "1");
    assert_eval!("(Math/log 1)", "0.0");
    assert_eval!("(Math/log10 100)", "2.0");
    assert_eval!("(Math/exp 0)", "1.0");
    assert_eval!("(Math/sin 0)", "0.0");
    assert_eval!("(Math/cos 0)", "1.0");
    assert_eval!("(Math/tan 0)", "0.0");
    assert_eval!("(Math/signum -3)", "-1.0");
    assert_eval!("(Math/signum 0)", "0.0");
    assert_eval!("(Math/floorDiv -7 2)", "-4");
    assert_eval!("(Math/floorMod -7 2)", "1");
    assert_eval!("(Math/hypot 3 4)", "5.0");
    assert_eval!("(Math/addExact 1 2)", "3");
    assert_fails!("(Math/addExact 9223372036854775807 1)", "overflow");
    assert_fails!("(Math/floorDiv 1 0)", "Division by zero");
    assert_fails!("(Math/sqrt \"x\")", "expected a number");
    assert_fails!("(Math/frobnicate 1)", "Math/sqrt");
    assert_eval!("(map Math/abs [-1 2])", "[1 2]");
}

/// The digits Clojure prints on the JVM (OpenJDK 17, HotSpot, x86_64)
/// for arguments where glibc's libm differs from the JVM in the last
/// place and the `libm` crate does not (fdlibm's algorithms, which are
/// Java's for `asin`, `acos`, `atan` and `atan2`, and closer to the JVM's
/// for `hypot` and `log10`), and for `exp`, `sin` and `pow`, where HotSpot
/// agrees with glibc rather than the `libm` crate.
#[test]
fn java_math_gives_the_digits_of_the_jvm() {
    for (src, jvm) in [
        ("(Math/log10 0.1487146637884056)", "-0.8276462064047129"),
        ("(Math/log10 1.3270863267522834)", "0.12289917456958364"),
        ("(Math/asin 0.5599389814121456)", "0.5943121517045686"),
        ("(Math/asin -0.6771227789471369)", "-0.7438456075058963"),
        ("(Math/acos -0.6771227789471369)", "2.314641934300793"),
        ("(Math/acos 0.612157169571335)", "0.9120105547649129"),
        ("(Math/atan -1.6940696557660289)", "-1.0375437893514738"),
        ("(Math/atan -0.7028990293382171)", "-0.6126689729146413"),
        (
            "(Math/atan2 2.612423569212881 0.6537042493440761)",
            "1.3256021055107072",
        ),
        (
            "(Math/atan2 0.4302456404904387 -0.20663905069843969)",
            "2.0185451191993433",
        ),
        (
            "(Math/hypot -0.20663905069843969 0.4302456404904387)",
            "0.4772955147857354",
        ),
        (
            "(Math/hypot 0.5142818591304987 -4.860785294487528)",
            "4.887915661070363",
        ),
        ("(Math/exp 1)", "2.718281828459045"),
        ("(Math/sin 123.456)", "-0.8039373685728239"),
        ("(Math/pow 1.1 123.4)", "128190.94483396829"),
    ] {
        assert_eval!(src, jvm);
    }
}

#[test]
fn java_parsers_raise_on_bad_text() {
    assert_eval!("(Integer/parseInt \"42\")", "42");
    assert_eval!("(Integer/parseInt \"-42\")", "-42");
    assert_eval!("(Integer/parseInt \"ff\" 16)", "255");
    assert_fails!(
        "(Integer/parseInt \"abc\")",
        "cannot parse \"abc\" as an integer"
    );
    assert_fails!("(Integer/parseInt \"abc\")", "parse-long");
    assert_fails!("(Integer/parseInt \"3000000000\")", "as an integer");
    assert_fails!("(Integer/parseInt \" 1\")", "cannot parse");
    assert_fails!("(Integer/parseInt nil)", "expected a string");
    assert_eval!("(Long/parseLong \"3000000000\")", "3000000000");
    assert_eval!("(Long/valueOf \"7\")", "7");
    assert_eval!("(Double/parseDouble \"3.14\")", "3.14");
    assert_eval!("(Double/parseDouble \" 3.5e2d \")", "350.0");
    assert_eval!("(Double/parseDouble \"-Infinity\")", "##-Inf");
    assert_fails!("(Double/parseDouble \"inf\")", "as a double");
    assert_fails!("(Double/parseDouble \"\")", "as a double");
    assert_eval!("(Boolean/parseBoolean \"TRUE\")", "true");
    assert_eval!("(Boolean/parseBoolean \"x\")", "false");
    assert_eval!("(Boolean/parseBoolean nil)", "false");
    assert_eval!("(String/valueOf nil)", "\"null\"");
    assert_eval!("(String/valueOf 42)", "\"42\"");
    assert_eval!("(Long/toString 255 16)", "\"ff\"");
    assert_eval!("(Integer/toString -255 2)", "\"-11111111\"");
}

#[test]
fn java_constants_and_characters() {
    assert_eval!("Integer/MAX_VALUE", "2147483647");
    assert_eval!("Integer/MIN_VALUE", "-2147483648");
    assert_eval!("Long/MAX_VALUE", "9223372036854775807");
    assert_eval!("Long/MIN_VALUE", "-9223372036854775808");
    assert_eval!("(> Double/MAX_VALUE 1e308)", "true");
    assert_eval!("(pos? Double/MIN_VALUE)", "true");
    assert_eval!("(Character/isDigit \\7)", "true");
    assert_eval!("(Character/isDigit \\a)", "false");
    assert_eval!("(Character/isLetter \\a)", "true");
    assert_eval!("(Character/isWhitespace \" \")", "true");
    assert_eval!("(Character/isUpperCase \\A)", "true");
    assert_eval!("(Character/toUpperCase \\a)", "\"A\"");
    assert_eval!("(Character/getNumericValue \\7)", "7");
    assert_eval!("(filter #(Character/isDigit %) \"a1b2\")", "[\"1\" \"2\"]");
    assert_fails!("(Character/isDigit \"ab\")", "expected a character");
}

#[test]
fn bitwise_operations() {
    assert_eval!("(bit-and 12 10)", "8");
    assert_eval!("(bit-or 12 10)", "14");
    assert_eval!("(bit-xor 12 10)", "6");
    assert_eval!("(bit-and 7 6 4)", "4");
    assert_eval!("(bit-and-not 15 9)", "6");
    assert_eval!("(bit-not 0)", "-1");
    assert_eval!("(bit-shift-left 1 4)", "16");
    assert_eval!("(bit-shift-left 1 64)", "1");
    assert_eval!("(bit-shift-right 256 4)", "16");
    assert_eval!("(bit-shift-right -16 2)", "-4");
    assert_eval!("(unsigned-bit-shift-right -1 60)", "15");
    assert_eval!("(bit-set 0 3)", "8");
    assert_eval!("(bit-clear 15 1)", "13");
    assert_eval!("(bit-flip 0 2)", "4");
    assert_eval!("(bit-test 5 0)", "true");
    assert_eval!("(bit-test 5 1)", "false");
    assert_fails!("(bit-and 1.0 1)", "expected an integer");
    assert_fails!("(bit-and 1)", "arity-error");
}

#[test]
fn new_predicates() {
    assert_eval!("(any? nil)", "true");
    assert_eval!("(distinct? 1 2 3)", "true");
    assert_eval!("(distinct? 1 2 1)", "false");
    assert_eval!("(distinct? 1)", "true");
    assert_eval!("(seq? [1])", "true");
    assert_eval!("(seq? (list 1))", "true");
    assert_eval!("(seq? {:a 1})", "false");
    assert_eval!("(seqable? \"ab\")", "true");
    assert_eval!("(seqable? nil)", "true");
    assert_eval!("(seqable? 1)", "false");
    assert_eval!("(associative? [1])", "true");
    assert_eval!("(associative? {})", "true");
    assert_eval!("(associative? #{})", "false");
    assert_eval!("(indexed? [1])", "true");
    assert_eval!("(indexed? {})", "false");
    assert_eval!("(reversible? [1])", "true");
    assert_eval!("(counted? #{})", "true");
    assert_eval!("(counted? \"ab\")", "false");
    assert_eval!("(sorted? [1 2])", "false");
    assert_eval!("(nat-int? 0)", "true");
    assert_eval!("(nat-int? -1)", "false");
    assert_eval!("(pos-int? 1)", "true");
    assert_eval!("(pos-int? 1.0)", "false");
    assert_eval!("(neg-int? -1)", "true");
    assert_eval!("(neg-int? \"x\")", "false");
    assert_eval!("(NaN? ##NaN)", "true");
    assert_eval!("(NaN? 1)", "false");
    assert_fails!("(NaN? \"a\")", "expected a number");
    assert_eval!("(infinite? ##-Inf)", "true");
    assert_eval!("(infinite? 1.0)", "false");
    assert_eval!("(rational? 1)", "true");
    assert_eval!("(rational? 1.5)", "false");
    assert_eval!("(ratio? 1)", "false");
    assert_eval!("(decimal? 1.5)", "false");
    assert_eval!("(ifn? :a)", "true");
    assert_eval!("(ifn? {})", "true");
    assert_eval!("(ifn? [1])", "true");
    assert_eval!("(ifn? inc)", "true");
    assert_eval!("(ifn? 1)", "false");
}

#[test]
fn string_dot_methods() {
    assert_eval!("(.toUpperCase \"abc\")", "\"ABC\"");
    assert_eval!("(.toLowerCase \"ABC\")", "\"abc\"");
    assert_eval!("(.trim \"  a \\t\")", "\"a\"");
    assert_eval!("(.strip \" a \")", "\"a\"");
    assert_eval!("(.length \"hello\")", "5");
    assert_eval!("(.isEmpty \"\")", "true");
    assert_eval!("(.isBlank \" \")", "true");
    assert_eval!("(.substring \"hello\" 2)", "\"llo\"");
    assert_eval!("(.substring \"hello\" 1 3)", "\"el\"");
    assert_eval!("(.charAt \"abc\" 1)", "\"b\"");
    assert_eval!("(.indexOf \"hello\" \"ll\")", "2");
    assert_eval!("(.indexOf \"hello\" \"x\")", "-1");
    assert_eval!("(.indexOf \"hello\" \"l\" 3)", "3");
    assert_eval!("(.lastIndexOf \"hello\" \"l\")", "3");
    assert_eval!("(.lastIndexOf \"hello\" \"l\" 2)", "2");
    assert_eval!("(.contains \"hello\" \"ell\")", "true");
    assert_eval!("(.startsWith \"hello\" \"he\")", "true");
    assert_eval!("(.endsWith \"hello\" \"lo\")", "true");
    assert_eval!("(.split \"a1b22c\" \"\\\\d+\")", "[\"a\" \"b\" \"c\"]");
    assert_eval!("(.split \"a.b\" \".\")", "[]");
    assert_eval!("(.split \"a,b,c\" \",\" 2)", "[\"a\" \"b,c\"]");
    assert_eval!("(.replace \"a.b.c\" \".\" \"-\")", "\"a-b-c\"");
    assert_eval!("(.replaceAll \"a1b22\" \"\\\\d+\" \"#\")", "\"a#b#\"");
    assert_eval!("(.matches \"123\" \"\\\\d+\")", "true");
    assert_eval!("(.matches \"123a\" \"\\\\d+\")", "false");
    assert_eval!("(.concat \"ab\" \"cd\")", "\"abcd\"");
    assert_eval!("(.equals \"a\" \"a\")", "true");
    assert_eval!("(.equalsIgnoreCase \"ab\" \"AB\")", "true");
    assert_eval!("(.toString 42)", "\"42\"");
    assert_eval!("(map .toUpperCase [\"a\" \"b\"])", "[\"A\" \"B\"]");
}

#[test]
fn string_dot_methods_use_utf16_and_raise_on_bad_indices() {
    assert_eval!("(.length \"😀a\")", "3");
    assert_eval!("(count \"😀a\")", "2");
    assert_eval!("(.substring \"😀a\" 2)", "\"a\"");
    assert_eval!("(.indexOf \"😀a\" \"a\")", "2");
    assert_fails!("(.substring \"😀a\" 1)", "inside a character");
    assert_fails!("(.substring \"hello\" 4 9)", "out of range");
    assert_fails!("(.substring \"hello\" 3 2)", "after end");
    assert_fails!("(.substring \"hello\" -1)", "out of range");
    assert_fails!("(.charAt \"abc\" 5)", "out of range");
    assert_fails!("(.indexOf 123 \"x\")", "expected a string receiver");
    assert_fails!("(.contains nil \"x\")", "expected a string receiver");
    assert_fails!("(.toString nil)", "called on nil");
}

#[test]
fn unknown_java_names_list_what_exists() {
    assert_fails!("(.foo \"x\")", "The Java method `.foo` is not supported");
    assert_fails!("(.foo \"x\")", ".toUpperCase");
    assert_fails!("(.toUppercase \"x\")", "did you mean `.toUpperCase`?");
    assert_fails!("(java.util.ArrayList.)", "java.util.Date.");
    assert_fails!("(let [f .nope] f)", "undefined-error");
}

#[test]
fn json_parse_string() {
    assert_eval!(
        "(json/parse-string \"{\\\"a\\\":[1,2.5,null,true]}\")",
        "{\"a\" [1 2.5 nil true]}"
    );
    assert_eval!("(json/parse-string \"{\\\"a\\\":1}\" true)", "{:a 1}");
    assert_eval!(
        "(json/parse-string \"{\\\"a\\\":{\\\"b\\\":1}}\" true)",
        "{:a {:b 1}}"
    );
    assert_eval!(
        "(json/parse-string \"{\\\"a\\\":1}\" (fn [k] (str k \"!\")))",
        "{\"a!\" 1}"
    );
    assert_eval!(
        "(json/read-str \"{\\\"a\\\":1}\" :key-fn keyword)",
        "{:a 1}"
    );
    assert_eval!("(json/parse-string \"[1,\\\"x\\\"]\")", "[1 \"x\"]");
    assert_eval!("(json/parse-string \"not json\")", "nil");
    assert_eval!("(json/parse-string nil)", "nil");
    assert_fails!("(json/parse-string 1)", "expected a string");
    assert_fails!("(json/parse-string \"1\" 2)", "key function");
    assert_eval!(
        "(json/parse-lines \"{\\\"a\\\":1}\\n\\nnull\\nnot json\")",
        "[{\"a\" 1} nil nil]"
    );
}

#[test]
fn json_generate_string() {
    assert_eval!(
        "(json/generate-string {:a [1 nil \"x\" :k] \"b\" #{1}})",
        "\"{\\\"a\\\":[1,null,\\\"x\\\",\\\"k\\\"],\\\"b\\\":[1]}\""
    );
    assert_eval!(
        "(json/generate-string {:max-turns 3})",
        "\"{\\\"max-turns\\\":3}\""
    );
    assert_eval!(
        "(json/generate-string {1 \"a\"})",
        "\"{\\\"1\\\":\\\"a\\\"}\""
    );
    assert_eval!("(json/write-str [1.5 true])", "\"[1.5,true]\"");
    assert_eval!(
        "(json/generate-string {:a 1} {:pretty true})",
        "\"{\\n  \\\"a\\\": 1\\n}\""
    );
    assert_eval!(
        "(json/parse-string (json/generate-string {:a [1 {:b 2}]}) true)",
        "{:a [1 {:b 2}]}"
    );
    assert_fails!(
        "(json/generate-string {[1] \"a\"})",
        "cannot use a vector as a JSON object key"
    );
    assert_fails!("(json/generate-string {1.5 \"a\"})", "JSON object key");
    assert_fails!(
        "(json/generate-string {:a 1 \"a\" 2})",
        "both written as \"a\""
    );
    assert_fails!("(json/generate-string ##NaN)", "cannot encode float ##NaN");
    assert_fails!("(json/generate-string inc)", "cannot encode a function");
    assert_fails!("(json/frobnicate 1)", "json/parse-string");
}

#[test]
fn dates_are_milliseconds_and_iso_text() {
    assert_eval!("(java.util.Date. 1700000000000)", "1700000000000");
    assert_eval!("(java.util.Date. \"1970-01-02\")", "86400000");
    assert_eval!(
        "(java.util.Date. \"2026-01-08T14:30:00Z\")",
        "1767882600000"
    );
    assert_eval!(
        "(java.util.Date. \"2026-01-08T14:30:00.123+01:00\")",
        "1767879000123"
    );
    assert_eval!("(java.util.Date. \"2026-01-08T14:30:00\")", "1767882600000");
    assert_eval!(
        "(java.util.Date. \"Wed, 8 Jan 2026 14:30:00 +0000\")",
        "1767882600000"
    );
    assert_eval!(
        "(java.util.Date. \"8 Jan 2026 14:30:00 GMT\")",
        "1767882600000"
    );
    assert_eval!("(int? (java.util.Date.))", "true");
    assert_eval!("(.getTime (java.util.Date. 5))", "5");
    assert_eval!("(.getTime \"1970-01-01T00:00:01Z\")", "1000");
    assert_eval!("(inst-ms (Date. 7))", "7");
    assert_eval!("(> (System/currentTimeMillis) 1600000000000)", "true");
    assert_fails!(
        "(java.util.Date. \"garbage\")",
        "cannot parse \"garbage\" as a date"
    );
    assert_fails!(
        "(java.util.Date. nil)",
        "expected epoch milliseconds or date text"
    );
    assert_fails!("(.getTime nil)", "expected a date");
    assert_fails!("(java.util.Date. \"2023-02-30\")", "cannot parse");
}

/// Issue 40: a date moved by a huge number of days is an error naming the
/// range, never an overflow; every date `.plusDays` gives, `.toEpochDay`
/// reads back (years past 9999 are written with a `+`, as Java does);
/// date text too far from 1970 for epoch milliseconds is an error.
#[test]
fn huge_day_counts_and_far_dates_are_clear_errors() {
    assert_eval!("(.plusDays \"2024-01-01\" 3000000)", "\"+10237-09-21\"");
    assert_eval!(
        "(.toEpochDay (.plusDays \"2024-01-01\" 3000000))",
        "3019723"
    );
    assert_eval!("(LocalDate/parse \"+10000-01-01\")", "\"+10000-01-01\"");
    assert_eval!(
        "(.toEpochDay (.minusDays \"2024-01-01\" 3000000))",
        "-2980277"
    );
    // The last and first dates there are, and one day past each.
    assert_eval!("(.plusDays \"+999999999-12-30\" 1)", "\"+999999999-12-31\"");
    assert_eval!(
        "(.toEpochDay (.plusDays \"+999999999-12-30\" 1))",
        "365241780471"
    );
    assert_eval!(
        "(.toEpochDay (.minusDays \"-999999999-01-02\" 1))",
        "-365243219162"
    );
    for program in [
        "(.plusDays \"+999999999-12-31\" 1)",
        "(.minusDays \"-999999999-01-01\" 1)",
        "(.plusDays \"2024-01-01\" 9223372036854775807)",
        "(.plusDays \"2024-01-01\" -9223372036854775808)",
        "(.minusDays \"2024-01-01\" -9223372036854775808)",
        "(.minusDays \"2024-01-01\" 9223372036854775807)",
    ] {
        assert_fails!(program, "past the range of dates");
    }
    for program in [
        "(Instant/parse \"999999999-01-01T00:00:00Z\")",
        "(Instant/parse \"-999999999-01-01T00:00:00Z\")",
        "(java.util.Date. \"999999999-01-01\")",
        "(java.util.Date. \"+999999999-01-01T10:00\")",
        "(.getTime \"999999999-12-31\")",
        "(.isBefore \"2024-01-01T00:00\" \"999999999-01-01T00:00\")",
    ] {
        assert_fails!(program, "too far from 1970 for epoch milliseconds");
    }
    // Within 292 million years, epoch milliseconds still hold it.
    assert_eval!(
        "(Instant/parse \"+200000000-01-01T00:00:00Z\")",
        "6311328232780800000"
    );
}

#[test]
fn local_dates_instants_and_durations() {
    assert_eval!("(LocalDate/parse \"2024-02-29\")", "\"2024-02-29\"");
    assert_eval!(
        "(java.time.LocalDate/parse \"2023-10-27\")",
        "\"2023-10-27\""
    );
    assert_fails!("(LocalDate/parse \"2023-02-29\")", "cannot parse");
    assert_fails!("(LocalDate/parse \"2024-01-31T10:00\")", "cannot parse");
    assert_fails!("(LocalDate/parse \"2024-1-5\")", "cannot parse");
    assert_fails!("(LocalDate/parse nil)", "expected a local date");
    assert_eval!("(.toEpochDay (LocalDate/parse \"2000-01-01\"))", "10957");
    assert_eval!("(.toEpochDay \"1969-12-31\")", "-1");
    assert_eval!(
        "(.plusDays (LocalDate/parse \"2024-02-28\") 2)",
        "\"2024-03-01\""
    );
    assert_eval!("(.minusDays \"2024-01-01\" 1)", "\"2023-12-31\"");
    assert_eval!("(.plusDays \"2024-01-01\" 366)", "\"2025-01-01\"");
    assert_eval!(
        "(.isBefore (LocalDate/parse \"2024-01-01\") (LocalDate/parse \"2024-01-02\"))",
        "true"
    );
    assert_eval!("(.isAfter \"2024-01-01\" \"2024-01-02\")", "false");
    assert_eval!("(< (compare \"2024-01-01\" \"2024-01-02\") 0)", "true");
    assert_eval!("(Instant/parse \"2026-05-18T12:00:00Z\")", "1779105600000");
    assert_eval!(
        "(java.time.Instant/parse \"1970-01-01T01:00:00+01:00\")",
        "0"
    );
    assert_fails!("(Instant/parse \"2026-05-18T12:00:00\")", "cannot parse");
    assert_fails!("(Instant/parse \"2026-05-18\")", "cannot parse");
    assert_eval!(
        "(.toDays (Duration/between (Instant/parse \"2026-05-18T12:00:00Z\")
                                    (Instant/parse \"2026-05-20T13:00:00Z\")))",
        "2"
    );
    assert_eval!("(.toMillis (java.time.Duration/between 1000 3500))", "2500");
    assert_eval!(
        "(.toEpochMilli (Instant/parse \"1970-01-01T00:00:00.250Z\"))",
        "250"
    );
    assert_eval!("(.before (java.util.Date. 1) (java.util.Date. 2))", "true");
    assert_eval!("(.after 2 1)", "true");
}

#[test]
fn unsupported_functions_explain_themselves() {
    assert_fails!("(rand)", "unsupported");
    assert_fails!("(rand-int 10)", "deterministic");
    assert_fails!("(rand-nth [1 2])", "`rand-nth` is not supported");
    assert_fails!("(shuffle [1 2])", "`shuffle` is not supported");
    assert_fails!("(Math/random)", "`Math/random` is not supported");
    assert_fails!("(take 3 (iterate inc 0))", "infinite sequence");
    assert_fails!("(take 3 (iterate inc 0))", "loop");
    assert_fails!("(cycle [1 2])", "infinite sequence");
    assert_fails!("(repeatedly 3 #(+ 1 1))", "(mapv (fn [_] (f)) (range n))");
    assert_fails!("(lazy-cat [1] [2])", "concat");
    assert_fails!("(volatile! 1)", "Mutable references");
    assert_fails!("(Thread/sleep 100)", "not supported");
}

/// Every documented example `(expr)` => `result` holds, so the docs the
/// model reads cannot drift from the behaviour.
#[test]
fn doc_examples_evaluate_as_documented() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for b in ptc_lisp::builtins::registry().iter() {
        let doc = b.doc;
        let mut rest = doc;
        while let Some(at) = rest.find("` => `") {
            let src_start = rest[..at].rfind('`').map_or(0, |i| i + 1);
            let src = &rest[src_start..at];
            let after = &rest[at + 6..];
            let expected = &after[..after.find('`').unwrap_or(after.len())];
            checked += 1;
            match crate::util::eval(src) {
                Ok(v) if ptc_lisp::value::pr_str(&v) == expected => {}
                Ok(v) => failures.push(format!(
                    "{}: {src} gave {}, doc says {expected}",
                    b.name,
                    ptc_lisp::value::pr_str(&v)
                )),
                Err(e) => failures.push(format!("{}: {src} failed: {e}", b.name)),
            }
            rest = &after[expected.len()..];
        }
    }
    assert!(checked > 300, "only {checked} examples found");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_supported_builtin_has_an_example() {
    for b in ptc_lisp::builtins::registry().iter() {
        if b.listed() {
            assert!(b.doc.contains("`("), "`{}` has no example", b.name);
        }
    }
}

/// `<` and `>` as comparators answer numbers without calls; the order is
/// the one the calls would give, and anything else still goes through them.
#[test]
fn sorting_with_less_and_greater_on_numbers() {
    for (program, expected) in [
        ("(sort > [3 1.5 2 10 -1])", "[10 3 2 1.5 -1]"),
        ("(sort < [3 1.5 2 10 -1])", "[-1 1.5 2 3 10]"),
        (
            "(sort-by :p > [{:p 1} {:p 3.5} {:p 2}])",
            "[{:p 3.5} {:p 2} {:p 1}]",
        ),
        // Equal keys keep their order (the sort is stable).
        (
            "(sort-by first > [[1 :a] [2 :b] [1 :c] [2 :d]])",
            "[[2 :b] [2 :d] [1 :a] [1 :c]]",
        ),
        (
            "(sort-by first < [[1 :a] [1.0 :b] [0 :c]])",
            "[[0 :c] [1 :a] [1.0 :b]]",
        ),
    ] {
        let v = crate::util::eval(program).unwrap_or_else(|e| panic!("{program}: {e}"));
        assert_eq!(crate::util::printed(&v), expected, "{program}");
    }
    // Not numbers: `<` itself says what is wrong, as before.
    let e = crate::util::eval("(sort < [\"b\" \"a\"])").unwrap_err();
    assert!(
        e.message().contains("`<` expected a number"),
        "{}",
        e.message()
    );
}

/// `difference` removes a few items or keeps the rest in one pass,
/// `intersection` walks the smallest set: the answers are the same.
#[test]
fn set_algebra_on_large_and_small_sets() {
    for (program, expected) in [
        ("(count (difference (set (range 100)) #{1 2 300}))", "98"),
        (
            "(count (difference (set (range 100)) (set (range 50)) #{99}))",
            "49",
        ),
        (
            "(sort (difference (set (range 20)) (set (range 2 20)) nil))",
            "[0 1]",
        ),
        (
            "(sort (intersection (set (range 100)) #{5 500 7} (set (range 6 50))))",
            "[7]",
        ),
        (
            "(count (union (set (range 50)) (set (range 25 75)) nil [100]))",
            "76",
        ),
        (
            "(= (difference (set (range 30)) #{3}) (disj (set (range 30)) 3))",
            "true",
        ),
    ] {
        let v = crate::util::eval(program).unwrap_or_else(|e| panic!("{program}: {e}"));
        assert_eq!(crate::util::printed(&v), expected, "{program}");
    }
}

/// `union` starts from a copy of the largest flat set's table (wherever
/// it is among the arguments, also a set already changed through a
/// persistent twin); the sets it was given, and later changes of the
/// result, stay apart.
#[test]
fn set_algebra_results_and_their_arguments_change_independently() {
    for (program, expected) in [
        (
            "(let [a (set (range 100)) u (union a #{200 300}) v (conj u 400)] \
             [(count a) (count u) (count v) (contains? a 200) (contains? u 400) (contains? v 400)])",
            "[100 102 103 false false true]",
        ),
        (
            "(let [a (set (range 10 20)) b (set (range 100)) u (union a b #{-1})] \
             [(count u) (count b) (contains? b -1) (= (conj b -1) u)])",
            "[101 100 false true]",
        ),
        (
            "(let [a (set (range 50)) b (conj a 100) u (union b (set (range 40 60)))] \
             [(count u) (count b) (= u (conj (set (range 60)) 100))])",
            "[61 51 true]",
        ),
        (
            "(let [s (set (range 20))] (= s (intersection s (set (range 30))) (difference s #{100})))",
            "true",
        ),
        ("(distinct [1 1.0 2 1 2.0 2 -0.0 0.0])", "[1 1.0 2 2.0 -0.0]"),
        ("(count (distinct (concat (range 1000) (range 500 1500))))", "1500"),
    ] {
        let v = crate::util::eval(program).unwrap_or_else(|e| panic!("{program}: {e}"));
        assert_eq!(crate::util::printed(&v), expected, "{program}");
    }
}

/// Integers compare exactly in `max` and `min`, also past 2^53 where
/// their float conversions are equal; `apply` spreads a vector as is.
#[test]
fn max_and_min_of_integers_are_exact() {
    assert_eval!(
        "[(apply max [9007199254740992 9007199254740993]) (apply min [9007199254740993 9007199254740992])]",
        "[9007199254740993 9007199254740992]"
    );
    assert_eval!(
        "[(max 1 2.0) (max 2.0 2) (min 2 2.0) (max 1 2.5 2)]",
        "[2.0 2.0 2 2.5]"
    );
    assert_eval!(
        "[(apply + 1 2 [3 4]) (apply str []) (apply max '(3 9 4))]",
        "[10 \"\" 9]"
    );
}

/// As in Java (so Clojure), `\d`, `\w` and `\s` are ASCII classes: an
/// Arabic-Indic digit is not a digit, `é` is not a word character and a
/// no-break space is not white space.
#[test]
fn regex_shorthand_classes_are_ascii_as_in_java() {
    assert_eval!("(re-find #\"\\d+\" \"\u{663}\u{664}5\")", "\"5\"");
    assert_eval!(
        "(re-seq #\"\\w+\" \"h\u{e9}llo w\u{f6}rld\")",
        "[\"h\" \"llo\" \"w\" \"rld\"]"
    );
    assert_eval!("(re-find #\"\\W\" \"\u{e9}\")", "\"\u{e9}\"");
    assert_eval!("(count (split \"a\u{a0}b c\" #\"\\s\"))", "2");
    assert_eval!("(re-matches #\"[\\d.]+\" \"1.5\")", "\"1.5\"");
    assert_eval!("(re-find #\"[^\\s,]+\" \" ,ab c\")", "\"ab\"");
    assert_eval!("(re-find #\"\\\\d\" \"1\\\\d\")", "\"\\\\d\"");
    // Errors name the pattern as written.
    assert_fails!("(re-pattern \"(\\\\d\")", "Invalid regex `(\\d`");
}

/// A pattern that needs backtracking (lookaround here) searches less of a
/// text the heavier it is, counted repetitions written out; one too heavy
/// to search is refused when it is compiled.
#[test]
fn heavy_backtracking_patterns_search_less_text_or_are_refused() {
    let long = "(apply str (repeat 1500 \"a\"))";
    assert_eval!(&format!("(count (re-matches #\"(?=a)a+\" {long}))"), "1500");
    assert_eval!(&format!("(count (re-matches #\"a+\" {long}))"), "1500");
    // `(?:a{0,300})+` weighs 600: 288 bytes are searched (287 by
    // `re-matches`, whose anchors weigh too).
    let heavy = "#\"(?=a)(?:a{0,300})+\"";
    assert_fails!(
        &format!("(re-matches {heavy} {long})"),
        "`re-matches` searches texts of at most 287 bytes with this pattern; this one has 1500"
    );
    // Never a search of the start only (a partial answer): an error
    // naming the cap.
    assert_fails!(
        &format!("(re-find {heavy} {long})"),
        "`re-find` searches texts of at most 288 bytes with this pattern; this one has 1500"
    );
    assert_eval!(
        "(count (re-find #\"(?:a{0,300})+\" (apply str (repeat 1500 \"a\"))))",
        "1500"
    );
    assert_fails!(
        "(re-pattern \"(?<=x)(?:a{0,300}){4}\")",
        "with its repetitions counted out it has 1202 positions, over the limit of 1024"
    );
    // Any pattern: compiling is not stopped by the time limit, so its
    // compiled size is bounded.
    assert_fails!(
        "(re-pattern \"\\\\p{L}{0,250}\")",
        "compiled, it would take more than the limit of 2 MB"
    );
    assert_eval!(
        "(re-find #\"\\p{L}{0,30}\" \"\u{e9}t\u{e9}!\")",
        "\"\u{e9}t\u{e9}\""
    );
    // A search that needs more backtracking than its pattern may take
    // says so, with the limit (weight 5: 7,717 steps).
    assert_fails!(
        "(re-find #\"(?=a)(a*)*b\" (apply str (repeat 40 \"a\")))",
        "Regex search gave up: one attempt needed more than the 7717 backtracking steps"
    );
}

#[test]
fn get_in_follows_maps_sets_vectors_and_strings() {
    assert_eval!("(get-in {:a {:b 1}} [:a :b])", "1");
    // The default is for a missing key, not for a nil value.
    assert_eval!("(get-in {:a {:b nil}} [:a :b] :d)", "nil");
    assert_eval!("(get-in {:a {:b 1}} [:a :z] :d)", ":d");
    assert_eval!("(get-in nil [:a] 5)", "5");
    assert_eval!("(get-in {:a [10 20]} [:a 1])", "20");
    assert_eval!("(get-in {:a #{:k}} [:a :k])", ":k");
    // A string's character is a new value; the path goes on from it.
    assert_eval!("(get-in {:a \"xyz\"} [:a 1])", "\"y\"");
    assert_eval!("(get-in {:a \"xyz\"} [:a 1 0])", "\"y\"");
    assert_eval!("(get-in {:a \"xyz\"} [:a 9] :d)", ":d");
    // An empty path, a list path and flexible keys.
    assert_eval!(
        "[(get-in {:a 1} []) (get-in {:a 1} nil)]",
        "[{:a 1} {:a 1}]"
    );
    assert_eval!("(get-in {:a 1} (list :a))", "1");
    assert_eval!("(get-in {\"a\" {:b 2}} [:a \"b\"])", "2");
    assert_fails!("(get-in {:a 1} :a)", "a vector of keys as the path");
}

/// A string of up to 14 bytes is kept inside the value, a longer one is
/// shared: the same operations on texts either side of that limit (and
/// on one made by joining two short ones) must agree.
#[test]
fn strings_behave_alike_either_side_of_the_inline_limit() {
    for text in ["2024-01-31 abc", "2024-01-31 abcd", "éééééé12", "éééééé123"] {
        let n = text.chars().count();
        let split = text.find(' ').map_or(4, |i| i + 1);
        let (head, tail) = text.split_at(split);
        let made = format!("(str \"{head}\" \"{tail}\")");
        assert_eval!(&format!("(= \"{text}\" {made})"), "true");
        assert_eval!(&format!("(count {made})"), n.to_string());
        assert_eval!(&format!("(string? {made})"), "true");
        assert_eval!(&format!("(contains? #{{\"{text}\"}} {made})"), "true");
        assert_eval!(&format!("(get {{\"{text}\" 1}} {made})"), "1");
        assert_eval!(&format!("(compare \"{text}\" {made})"), "0");
        assert_eval!(&format!("(empty? {made})"), "false");
        assert_eval!(&format!("(str {made})"), format!("\"{text}\""));
        assert_eval!(
            &format!("(str \"<\" {made} \">\")"),
            format!("\"<{text}>\"")
        );
        assert_eval!(&format!("(name {made})"), format!("\"{text}\""));
        assert_eval!(
            &format!("(last (seq {made}))"),
            format!("\"{}\"", text.chars().last().unwrap())
        );
        assert_eval!(&format!("(includes? {made} \"{tail}\")"), "true");
        assert_eval!(&format!("(count (frequencies [{made} \"{text}\"]))"), "1");
        assert_eval!(
            &format!("(subs {made} 0 {})", head.chars().count()),
            format!("\"{head}\"")
        );
        assert_eval!(
            &format!("(re-find #\".$\" {made})"),
            format!("\"{}\"", text.chars().last().unwrap())
        );
        assert_eval!(
            &format!("(filter (where :s = \"{text}\") [{{:s {made}}}])"),
            format!("[{{:s \"{text}\"}}]")
        );
    }
    assert_eval!("(parse-long \"12345678901234\")", "12345678901234");
    assert_eval!("(parse-long \"123456789012345\")", "123456789012345");
    assert_eval!("(parse-double \"1234567890.125\")", "1.234567890125E9");
    assert_eval!("(parse-double \"12345678901.125\")", "1.2345678901125E10");
    assert_eval!("(split \"a,,b,,\" \",\")", "[\"a\" \"\" \"b\"]");
    assert_eval!("(split-lines \"a\\n\\n\")", "[\"a\"]");
    assert_eval!("(str/split \"x1y2z\" #\"\\d\")", "[\"x\" \"y\" \"z\"]");
    assert_eval!("(keyword \"name\")", ":name");
    assert_eval!("(char? \"é\")", "true");
    assert_eval!("(.toUpperCase \"abc\")", "\"ABC\"");
    assert_eval!("(java.util.Date. \"2024-01-31\")", "1706659200000");
}
