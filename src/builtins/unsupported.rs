//! Clojure functions deliberately left out (randomness, infinite and
//! lazy sequences, transducers, mutable references). They are registered
//! so that a call explains why and what to write instead, rather than
//! reporting an unknown name. Forms that are macros in Clojure (`atom`,
//! `lazy-seq`, ...) are refused by the analyzer instead.

use crate::error::Error;
use crate::eval::{EvalResult, Interp};
use crate::value::Value;

use super::{Registry, MANY};

macro_rules! refuse {
    ($fn_name:ident, $message:expr, $hint:expr) => {
        fn $fn_name(_: &mut Interp<'_>, _: &[Value]) -> EvalResult {
            Err(Error::unsupported($message).with_hint($hint).into())
        }
    };
}

const RANDOM_HINT: &str = "programs must be deterministic: pick items by position (`first`, `nth`) or order them with `sort-by`";

refuse!(rand, "`rand` is not supported", RANDOM_HINT);
refuse!(rand_int, "`rand-int` is not supported", RANDOM_HINT);
refuse!(rand_nth, "`rand-nth` is not supported", RANDOM_HINT);
refuse!(shuffle, "`shuffle` is not supported", RANDOM_HINT);
refuse!(
    random_sample,
    "`random-sample` is not supported",
    RANDOM_HINT
);
refuse!(random_uuid, "`random-uuid` is not supported", RANDOM_HINT);
refuse!(math_random, "`Math/random` is not supported", RANDOM_HINT);
refuse!(
    iterate,
    "`iterate` builds an infinite sequence, which is not supported",
    "use `loop`/`recur`, or `(reductions (fn [x _] (f x)) x0 (range n))` for the first n+1 values"
);
refuse!(
    cycle,
    "`cycle` builds an infinite sequence, which is not supported",
    "index into the collection instead: `(mapv #(nth coll (mod % (count coll))) (range n))`"
);
refuse!(
    repeatedly,
    "`repeatedly` is not supported: there are no side effects to repeat",
    "for n values use `(mapv (fn [_] (f)) (range n))`"
);
refuse!(
    lazy_cat,
    "Lazy sequences are not supported: all operations are eager",
    "use `concat`"
);
refuse!(
    transducers,
    "Transducers are not supported",
    "apply the steps to the collection directly: `(reduce f init (map g coll))`"
);
refuse!(
    references,
    "Mutable references are not supported",
    "use `def` to store a value for later turns, or `reduce`/`loop` to accumulate"
);
refuse!(
    sleep,
    "`Thread/sleep` is not supported",
    "there is nothing to wait for: tool calls return their results directly"
);

pub(super) fn register(r: &mut Registry) {
    let refused: [(&'static str, super::NativeFn); 22] = [
        ("rand", rand),
        ("rand-int", rand_int),
        ("rand-nth", rand_nth),
        ("shuffle", shuffle),
        ("random-sample", random_sample),
        ("random-uuid", random_uuid),
        ("Math/random", math_random),
        ("iterate", iterate),
        ("cycle", cycle),
        ("repeatedly", repeatedly),
        ("lazy-cat", lazy_cat),
        ("transduce", transducers),
        ("eduction", transducers),
        ("ref", references),
        ("agent", references),
        ("send", references),
        ("send-off", references),
        ("promise", references),
        ("deliver", references),
        ("volatile!", references),
        ("vswap!", references),
        ("Thread/sleep", sleep),
    ];
    for (name, f) in refused {
        r.add(
            name,
            "[& args]",
            0,
            MANY,
            "Not supported; calling it explains what to use instead.",
            f,
        );
    }
    r.alias("vreset!", "vswap!");
}
