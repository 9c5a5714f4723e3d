//! Token counts against OpenAI's tiktoken: the committed reference counts
//! (tests/tokens/tiktoken_reference.json, made by make_reference.py with
//! Python tiktoken), the prebuilt tables entry by entry, and a property
//! test of our counter against tiktoken-rs on random text.

use proptest::prelude::*;
use ptc_lisp::history::tools_schema_tokens;
use ptc_lisp::tokens::{self, Encoding, TokenModel};
use serde_json::Value as Json;

fn reference() -> Json {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/tokens/tiktoken_reference.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).expect("reference file"))
        .expect("reference JSON")
}

#[test]
fn text_counts_match_python_tiktoken() {
    let r = reference();
    let texts = r["texts"].as_array().unwrap();
    assert!(texts.len() >= 30);
    let mut wrong = Vec::new();
    for t in texts {
        let text = t["text"].as_str().unwrap();
        for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
            let want = t[enc.name()].as_u64().unwrap() as usize;
            let got = enc.count(text);
            if got != want {
                wrong.push(format!("{} {text:?}: {got} != {want}", enc.name()));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn tool_schemas_match_the_cookbook_formula_in_python() {
    let r = reference();
    for case in r["tools"].as_array().unwrap() {
        let model = TokenModel::for_model(case["model"].as_str().unwrap());
        assert_eq!(
            tools_schema_tokens(&case["tools"], model),
            case["tokens"].as_u64().unwrap() as usize,
            "{case}"
        );
    }
}

#[test]
fn tables_match_tiktoken_rs() {
    for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
        let n = tokens::table_len(enc);
        assert!(n > 100_000, "{}: {n}", enc.name());
        for rank in 0..n as u32 {
            assert_eq!(
                tokens::table_token_bytes(enc, rank).map(<[u8]>::to_vec),
                tokens::reference_token_bytes(enc, rank),
                "{} rank {rank}",
                enc.name()
            );
        }
        // One past the end is no token in either.
        assert_eq!(tokens::table_token_bytes(enc, n as u32), None);
    }
}

#[test]
fn long_pieces_match_tiktoken_rs() {
    // Pieces over the scan limit take the heap merge.
    for text in [
        " ".repeat(5000),
        "ab".repeat(2000),
        "x".repeat(3001),
        "\u{4f60}\u{597d}".repeat(700),
        "0123456789".repeat(300),
        "aGVsbG8gd29ybGQ=".repeat(200),
    ] {
        for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
            assert_eq!(
                enc.count(&text),
                tokens::reference_count(enc, &text),
                "{} {}",
                enc.name(),
                &text[..20]
            );
        }
    }
}

fn text_strategy() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-zA-Z]{1,12}",
        "[ \t\n\r]{1,6}",
        "[0-9]{1,9}",
        "[-+*/=<>(){}\\[\\];:,.!?'\"#%&|^~`@$_\\\\]{1,4}",
        "\\PC{1,6}",
        "[\u{4e00}-\u{4fff}\u{3040}-\u{30ff}\u{ac00}-\u{ad00}]{1,6}",
        "[\u{1f300}-\u{1f6ff}\u{200d}\u{fe0f}]{1,3}",
        Just("'s".to_string()),
        Just("'LL".to_string()),
        Just("<|endoftext|>".to_string()),
        "[ ]{100,300}",
        "[a-z]{130,200}",
    ];
    prop::collection::vec(piece, 0..24).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn counts_equal_tiktoken_rs(text in text_strategy()) {
        for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
            prop_assert_eq!(enc.count(&text), tokens::reference_count(enc, &text), "{}", enc.name());
        }
    }
}
