//! Token counts against OpenAI's tiktoken: the committed reference counts
//! (tests/tokens/tiktoken_reference.json, made by make_reference.py with
//! Python tiktoken), the prebuilt tables entry by entry, and a property
//! test of our counter against tiktoken-rs on random text.

use proptest::prelude::*;
use ptc_lisp::history::{tools_schema_tokens, Message, TokenCounter};
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
fn message_framing_matches_the_cookbook_formula_in_python() {
    let r = reference();
    for case in r["messages"].as_array().unwrap() {
        let messages: Vec<Message> = serde_json::from_value(case["messages"].clone()).unwrap();
        let mut counter = TokenCounter::new(case["model"].as_str().unwrap());
        assert_eq!(
            counter.count(&messages).total(),
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

fn ptc(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_ptc"))
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("ptc runs")
}

/// The total of `ptc compact`'s `before:` line.
fn compact_before(file: &std::path::Path, extra: &[&str]) -> usize {
    let mut args = vec![file.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = ptc(&[&["compact"], args.as_slice()].concat());
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{err}");
    let line = err
        .lines()
        .find_map(|l| l.strip_prefix("before: "))
        .unwrap_or_else(|| panic!("no before line: {err}"));
    // "N messages, T tokens (...)"
    line.split(", ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

fn write_jsonl(dir: &std::path::Path, messages: &[Json]) -> std::path::PathBuf {
    let path = dir.join("history.jsonl");
    let text: Vec<String> = messages.iter().map(Json::to_string).collect();
    std::fs::write(&path, text.join("\n") + "\n").unwrap();
    path
}

/// `ptc prompt --json`, its text form and `ptc compact` give the same
/// total for the same messages and model.
#[test]
fn prompt_and_compact_agree() {
    let dir = tempfile::tempdir().unwrap();
    for model in ["gpt-4o", "gpt-4", "claude-sonnet-4"] {
        let out = ptc(&[
            "prompt",
            "--mission",
            "Count the users named Bob",
            "--model",
            model,
            "--json",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: Json = serde_json::from_slice(&out.stdout).unwrap();
        let total = report["tokens"]["total"].as_u64().unwrap() as usize;
        let messages: Vec<Json> = report["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| serde_json::json!({"role": m["role"], "content": m["content"]}))
            .collect();
        let per_message: usize = report["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["tokens"].as_u64().unwrap() as usize)
            .sum();
        assert!(
            total > per_message,
            "{model}: the reply priming is in the total"
        );
        let file = write_jsonl(dir.path(), &messages);
        assert_eq!(compact_before(&file, &["--model", model]), total, "{model}");
        let text = ptc(&[
            "prompt",
            "--mission",
            "Count the users named Bob",
            "--model",
            model,
        ]);
        let text = String::from_utf8_lossy(&text.stdout).to_string();
        assert!(
            text.contains(&format!("message(s), {total} tokens (")),
            "{model}: {text}"
        );
    }
}

/// With tool schemas and content arrays, `ptc compact` counts what the
/// library's counter counts, and for plain text and the cookbook's
/// formulas what Python tiktoken computes.
#[test]
fn compact_counts_tools_and_content_arrays_like_the_library_and_python() {
    let r = reference();
    let dir = tempfile::tempdir().unwrap();
    let tools_case = &r["tools"][0];
    let messages_case = &r["messages"][0];
    assert_eq!(tools_case["model"], "gpt-4o");
    assert_eq!(messages_case["model"], "gpt-4o");
    let schema = dir.path().join("tools.json");
    std::fs::write(&schema, tools_case["tools"].to_string()).unwrap();
    let messages = messages_case["messages"].as_array().unwrap().clone();
    let file = write_jsonl(dir.path(), &messages);
    let python = tools_case["tokens"].as_u64().unwrap() + messages_case["tokens"].as_u64().unwrap();
    let schema_arg = ["--tools-schema", schema.to_str().unwrap()];
    assert_eq!(compact_before(&file, &schema_arg) as u64, python);

    let mut with_parts = messages.clone();
    with_parts.push(serde_json::json!({"role": "user", "content": [
        {"type": "text", "text": "What is in this picture? \u{4f60}\u{597d}"},
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.png", "detail": "low"}}
    ]}));
    with_parts.push(serde_json::json!({"role": "assistant", "content": [
        {"type": "text", "text": "A cat on a mat."}
    ]}));
    let file = write_jsonl(dir.path(), &with_parts);
    let parsed: Vec<Message> = with_parts
        .iter()
        .map(|m| serde_json::from_value(m.clone()).unwrap())
        .collect();
    let mut counter = TokenCounter::new("gpt-4o");
    counter.set_tools_schema(Some(&tools_case["tools"]));
    let library = counter.count(&parsed).total();
    assert!(
        library as u64 > python + 85,
        "the low-detail image counts 85"
    );
    assert_eq!(compact_before(&file, &schema_arg), library);
}
