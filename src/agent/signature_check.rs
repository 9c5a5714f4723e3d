//! Checking a `(return v)` value against the return type of a signature,
//! and the feedback a model gets when it does not match. The type rules
//! are those of [`crate::session::typecheck`], shared with tool calls.

pub use crate::session::typecheck::{check, type_source, Mismatch};
use crate::session::{Signature, TurnError};

/// The error code of a turn whose `(return v)` did not match the signature.
pub const SIGNATURE_MISMATCH: &str = "signature-mismatch";

/// The failed-turn error for a `(return v)` that does not match the
/// return type of `signature`. The message names the signature, the path,
/// what was expected and what came back; the hint says the turn's
/// definitions were not kept, since a rejected turn is rolled back like
/// any failed one.
pub fn return_mismatch(signature: &Signature, mismatch: &Mismatch) -> TurnError {
    TurnError::new(
        SIGNATURE_MISMATCH,
        format!(
            "`(return ...)` does not match the signature {}: {mismatch}",
            type_source(signature.returns())
        ),
    )
    .with_hint(
        "call (return ...) again with a value of that shape; \
         the definitions of this turn were not kept",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::eval_str;

    fn mismatch(sig: &str, src: &str) -> String {
        let sig = Signature::parse(sig).unwrap();
        match check(sig.returns(), &eval_str(src).unwrap()) {
            Ok(()) => "ok".to_string(),
            Err(m) => m.to_string(),
        }
    }

    #[test]
    fn scalars_and_nil() {
        assert_eq!(mismatch(":string", "\"x\""), "ok");
        assert_eq!(
            mismatch(":string", "42"),
            "expected a string, got integer 42"
        );
        assert_eq!(mismatch(":int", "nil"), "expected an integer, got nil");
        assert_eq!(mismatch(":int?", "nil"), "ok");
        assert_eq!(mismatch(":float", "3"), "ok");
        assert_eq!(mismatch(":float", "3.5"), "ok");
        assert_eq!(mismatch(":bool", "false"), "ok");
        assert_eq!(
            mismatch(":keyword", "\"a\""),
            "expected a keyword, got string \"a\""
        );
        assert_eq!(mismatch(":any", "nil"), "ok");
    }

    #[test]
    fn short_values_are_shown_whole() {
        assert_eq!(
            mismatch(":int", "(vec (range 10))"),
            "expected an integer, got vector [0 1 2 3 4 5 6 7 8 9]"
        );
    }

    #[test]
    fn lists_and_records_name_the_path() {
        assert_eq!(mismatch("[:map]", "[{:a 1} {}]"), "ok");
        assert_eq!(mismatch("[:map]", "'({:a 1})"), "ok");
        assert_eq!(
            mismatch("[:map]", "[{:a 1} 2]"),
            "at `[1]` expected a map, got integer 2"
        );
        assert_eq!(
            mismatch("[:int]", "{:a 1}"),
            "expected a vector [:int], got map {:a 1}"
        );
        let sig = "{user {name :string, age :int?}, tags [:string]}";
        assert_eq!(
            mismatch(sig, "{:user {:name \"A\"} :tags [] :extra 1}"),
            "ok"
        );
        assert_eq!(
            mismatch(sig, "{:user {:name 1} :tags []}"),
            "at `user.name` expected a string, got integer 1"
        );
        assert_eq!(
            mismatch(sig, "{:user {:name \"A\" :age \"x\"} :tags []}"),
            "at `user.age` expected an integer or nil, got string \"x\""
        );
        assert_eq!(
            mismatch(sig, "{:user {:name \"A\"}}"),
            "the field `tags` is missing (expected a vector [:string])"
        );
        assert_eq!(
            mismatch("[{id :int}]", "[{:id 1} {:id \"2\"}]"),
            "at `[1].id` expected an integer, got string \"2\""
        );
        assert_eq!(
            mismatch("{n :int}", "{\"n\" 1}"),
            "ok",
            "string keys count too"
        );
    }

    #[test]
    fn long_values_are_cut_at_an_item_with_the_note_of_samples() {
        assert_eq!(
            mismatch(":string", "(vec (range 100))"),
            "expected a string, got vector [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 ...] (first 23 of 100 items)"
        );
    }

    #[test]
    fn feedback_names_signature_path_and_values() {
        let sig = Signature::parse("{count :int, items [:string]}").unwrap();
        let m = check(
            sig.returns(),
            &eval_str("{:count 2 :items [\"a\" 3]}").unwrap(),
        )
        .unwrap_err();
        let e = return_mismatch(&sig, &m);
        assert_eq!(e.code, SIGNATURE_MISMATCH);
        assert_eq!(
            e.message,
            "`(return ...)` does not match the signature {count :int, items [:string]}: \
             at `items[1]` expected a string, got integer 3"
        );
    }
}
