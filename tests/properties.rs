//! Property tests: algebraic laws of the collection functions, checked on
//! random vectors of small integers and small keyword maps. The data is
//! printed into the program text with `pr_str`, so these also exercise the
//! reader on every generated value.

use proptest::prelude::*;
use ptc_lisp::value::{pr_str, Map, Value};

const CASES: u32 = 64;

fn ints() -> impl Strategy<Value = Vec<i64>> {
    prop::collection::vec(-20i64..20, 0..16)
}

fn lit(xs: &[i64]) -> String {
    pr_str(&Value::vector(xs.iter().map(|x| Value::Int(*x))))
}

/// Evaluate `src`, which must succeed.
fn run(src: &str) -> Value {
    crate::util::eval(src).unwrap_or_else(|e| panic!("`{src}` failed: {e}"))
}

/// `src` must evaluate to `true`.
fn holds(src: &str) -> Result<(), TestCaseError> {
    let v = run(src);
    prop_assert!(v == Value::Bool(true), "`{}` gave {}", src, pr_str(&v));
    Ok(())
}

fn int_vec(v: &Value) -> Vec<i64> {
    v.as_seq()
        .unwrap_or_else(|| panic!("not a sequence: {}", pr_str(v)))
        .iter()
        .map(|x| match x {
            Value::Int(n) => *n,
            other => panic!("not an integer: {}", pr_str(other)),
        })
        .collect()
}

/// Maps with keyword keys from a small pool, so keys collide often.
fn small_map() -> impl Strategy<Value = Vec<(u8, i64)>> {
    prop::collection::vec((0u8..6, -5i64..5), 0..6)
}

fn keyword(k: u8) -> Value {
    Value::keyword(&format!("k{k}"))
}

fn map_lit(entries: &[(u8, i64)]) -> (Map, String) {
    let m: Map = entries
        .iter()
        .map(|(k, v)| (keyword(*k), Value::Int(*v)))
        .collect();
    let text = pr_str(&Value::map(m.clone()));
    (m, text)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn concat_count_is_sum_of_counts(a in ints(), b in ints()) {
        let v = run(&format!("(count (concat {} {}))", lit(&a), lit(&b)));
        prop_assert_eq!(v, Value::Int((a.len() + b.len()) as i64));
        holds(&format!("(= (concat {0} {1}) (into {0} {1}))", lit(&a), lit(&b)))?;
    }

    #[test]
    fn sort_is_an_idempotent_permutation(xs in ints()) {
        let sorted = run(&format!("(sort {})", lit(&xs)));
        let mut expected = xs.clone();
        expected.sort();
        prop_assert_eq!(int_vec(&sorted), expected);
        holds(&format!("(= (sort (sort {0})) (sort {0}))", lit(&xs)))?;
        holds(&format!("(= (frequencies (sort {0})) (frequencies {0}))", lit(&xs)))?;
    }

    #[test]
    fn sort_by_is_stable(keys in prop::collection::vec(0i64..4, 0..16)) {
        // Pairs [key original-index]: equal keys must keep index order.
        let pairs: Vec<Value> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| Value::vector([Value::Int(*k), Value::Int(i as i64)]))
            .collect();
        let src = format!("(mapv second (sort-by first {}))", pr_str(&Value::vector(pairs)));
        let got = int_vec(&run(&src));
        let mut expected: Vec<usize> = (0..keys.len()).collect();
        expected.sort_by_key(|i| keys[*i]); // std's sort_by_key is stable
        let expected: Vec<i64> = expected.into_iter().map(|i| i as i64).collect();
        prop_assert_eq!(got, expected, "{}", src);
    }

    #[test]
    fn distinct_keeps_the_same_set(xs in ints()) {
        holds(&format!("(= (set (distinct {0})) (set {0}))", lit(&xs)))?;
        holds(&format!("(= (count (distinct {0})) (count (set {0})))", lit(&xs)))?;
        let mut seen = std::collections::HashSet::new();
        let first_seen: Vec<i64> = xs.iter().copied().filter(|x| seen.insert(*x)).collect();
        prop_assert_eq!(int_vec(&run(&format!("(distinct {})", lit(&xs)))), first_seen);
    }

    #[test]
    fn reverse_twice_is_identity(xs in ints()) {
        holds(&format!("(= (reverse (reverse {0})) {0})", lit(&xs)))?;
        let mut rev = xs.clone();
        rev.reverse();
        prop_assert_eq!(int_vec(&run(&format!("(vec (reverse {}))", lit(&xs)))), rev);
    }

    #[test]
    fn into_empty_vector_is_identity(xs in ints()) {
        holds(&format!("(= (into [] {0}) {0})", lit(&xs)))?;
        holds(&format!("(vector? (into [] {0}))", lit(&xs)))?;
    }

    #[test]
    fn filter_and_remove_partition_the_input(xs in ints(), t in -20i64..20) {
        holds(&format!(
            "(= (+ (count (filter even? {0})) (count (remove even? {0}))) (count {0}))",
            lit(&xs)
        ))?;
        let above = xs.iter().filter(|x| **x > t).count() as i64;
        let v = run(&format!("(count (filter #(> % {t}) {}))", lit(&xs)));
        prop_assert_eq!(v, Value::Int(above));
        holds(&format!(
            "(= (sort (concat (filter #(> % {t}) {0}) (remove #(> % {t}) {0}))) (sort {0}))",
            lit(&xs)
        ))?;
    }

    #[test]
    fn map_then_vec_equals_mapv(xs in ints()) {
        holds(&format!("(= (vec (map inc {0})) (mapv inc {0}))", lit(&xs)))?;
        let inc: Vec<i64> = xs.iter().map(|x| x + 1).collect();
        prop_assert_eq!(int_vec(&run(&format!("(mapv inc {})", lit(&xs)))), inc);
    }

    #[test]
    fn get_after_assoc_gives_the_value(entries in small_map(), k in 0u8..8, v in -5i64..5) {
        let (_, m) = map_lit(&entries);
        let key = pr_str(&keyword(k));
        holds(&format!("(= (get (assoc {m} {key} {v}) {key}) {v})"))?;
        holds(&format!("(= ((assoc {m} {key} {v}) {key}) {v})"))?;
    }

    #[test]
    fn dissoc_undoes_assoc_of_a_new_key(entries in small_map(), k in 0u8..8, v in -5i64..5) {
        let (map, m) = map_lit(&entries);
        prop_assume!(map.get(&keyword(k)).is_none());
        let key = pr_str(&keyword(k));
        holds(&format!("(= (dissoc (assoc {m} {key} {v}) {key}) {m})"))?;
        holds(&format!("(= (count (assoc {m} {key} {v})) (inc (count {m})))"))?;
    }
}

/// Numbers that sort with ties, and zeros of both signs (equal, but
/// printed apart, so a change of their order shows).
fn sortable_numbers() -> impl Strategy<Value = Vec<Value>> {
    let int = (-4i64..4).prop_map(Value::Int);
    let float = prop_oneof![
        Just(0.0),
        Just(-0.0),
        Just(1.5),
        Just(-2.25),
        Just(f64::INFINITY),
        -3.0f64..3.0,
    ]
    .prop_map(Value::Float);
    prop_oneof![
        prop::collection::vec(int.clone(), 0..24),
        prop::collection::vec(float.clone(), 0..24),
        // Mixed, and with NaN: not a total order, so the general path.
        prop::collection::vec(prop_oneof![int, float, Just(Value::Float(f64::NAN))], 0..24),
    ]
}

/// Items for `reduce`: mostly integers, some near the limits (so sums
/// and products overflow), and now and then a float, a nil or a string.
fn reducible_items() -> impl Strategy<Value = Vec<Value>> {
    let item = prop_oneof![
        8 => (-50i64..50).prop_map(Value::Int),
        2 => prop_oneof![Just(i64::MAX - 3), Just(i64::MIN + 3), Just(1i64 << 40)]
            .prop_map(Value::Int),
        1 => (-3.0f64..3.0).prop_map(Value::Float),
        1 => Just(Value::Nil),
        1 => Just(Value::str("x")),
    ];
    prop::collection::vec(item, 0..12)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    /// `reduce` with `+`, `-` or `*` (folded on machine integers while
    /// the items are integers and nothing overflows) gives the value or
    /// the error that a function calling the builtin gives.
    #[test]
    fn arithmetic_reduce_agrees_with_a_function(xs in reducible_items(), start in -5i64..5) {
        let xs_lit = pr_str(&Value::vector(xs));
        for op in ["+", "-", "*"] {
            for (fast, general) in [
                (
                    format!("(reduce {op} {start} {xs_lit})"),
                    format!("(reduce (fn [a b] ({op} a b)) {start} {xs_lit})"),
                ),
                (
                    format!("(reduce {op} {xs_lit})"),
                    format!("(reduce (fn ([] ({op})) ([a b] ({op} a b))) {xs_lit})"),
                ),
                (
                    format!("(reduce {op} 1.5 {xs_lit})"),
                    format!("(reduce (fn [a b] ({op} a b)) 1.5 {xs_lit})"),
                ),
            ] {
                // The error's place differs (the call in the function's
                // body against the `reduce`), its kind and message not.
                let show = |r: Result<Value, ptc_lisp::error::Error>| match r {
                    Ok(v) => pr_str(&v),
                    Err(e) => format!("{:?} error: {}", e.kind(), e.message()),
                };
                let got = show(crate::util::eval(&fast));
                let want = show(crate::util::eval(&general));
                prop_assert_eq!(&got, &want, "{} against {}", fast, general);
            }
        }
    }

    /// Splitting on a one-character string (cut where `memchr` finds the
    /// byte) gives what splitting on the same character as a regex gives,
    /// with and without a limit, among characters of several bytes.
    #[test]
    fn splitting_on_a_character_agrees_with_the_regex_split(
        text in "[a,é ]{0,24}",
        limit in prop::option::of(-1i64..4),
    ) {
        for sep in [",", " "] {
            let limit = limit.map_or(String::new(), |n| format!(" {n}"));
            let by_char = format!("(split \"{text}\" \"{sep}\"{limit})");
            let by_regex = format!("(split \"{text}\" #\"{sep}\"{limit})");
            let got = pr_str(&crate::util::eval(&by_char).unwrap());
            let want = pr_str(&crate::util::eval(&by_regex).unwrap());
            prop_assert_eq!(&got, &want, "{} against {}", by_char, by_regex);
        }
    }

    /// `sort` and `sort-by` in the natural order, by `:asc`/`:desc` and
    /// by `<`/`>` (sorted as machine numbers when all keys are integers
    /// or all floats) give what a comparator function gives, stably.
    #[test]
    fn numeric_sorts_agree_with_a_comparator_function(xs in sortable_numbers()) {
        let xs_lit = pr_str(&Value::vector(xs.clone()));
        let maps: Vec<Value> = xs
            .iter()
            .enumerate()
            .map(|(i, x)| {
                let m: Map = [(keyword(0), x.clone()), (keyword(1), Value::Int(i as i64))]
                    .into_iter()
                    .collect();
                Value::map(m)
            })
            .collect();
        let maps_lit = pr_str(&Value::vector(maps));
        let ascending = "#(compare %1 %2)";
        let descending = "#(compare %2 %1)";
        for (fast, general) in [
            (format!("(sort {xs_lit})"), format!("(sort {ascending} {xs_lit})")),
            (format!("(sort :asc {xs_lit})"), format!("(sort {ascending} {xs_lit})")),
            (format!("(sort :desc {xs_lit})"), format!("(sort {descending} {xs_lit})")),
            (format!("(sort > {xs_lit})"), format!("(sort {descending} {xs_lit})")),
            (format!("(sort-by :k0 {maps_lit})"), format!("(sort-by :k0 {ascending} {maps_lit})")),
            (format!("(sort-by :k0 > {maps_lit})"), format!("(sort-by :k0 {descending} {maps_lit})")),
            (format!("(sort-by :k0 < {maps_lit})"), format!("(sort-by :k0 {ascending} {maps_lit})")),
            (format!("(sort-by :k0 :desc {maps_lit})"), format!("(sort-by :k0 {descending} {maps_lit})")),
        ] {
            let (got, want) = (pr_str(&run(&fast)), pr_str(&run(&general)));
            prop_assert_eq!(&got, &want, "{} against {}", fast, general);
        }
    }
}
