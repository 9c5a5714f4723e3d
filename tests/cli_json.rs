//! `--json` of `ptc eval`, `ptc run` and `ptc agent`: one JSON object on
//! stdout with the documented fields, exit codes as without it.

use serde_json::{json, Value as Json};

use crate::util::{ptc, text};

/// The one JSON object `ptc` printed on stdout.
fn object(out: &std::process::Output) -> Json {
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().count(), 1, "one line of JSON: {stdout}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[test]
fn a_value_comes_as_json_and_in_clojure_notation_with_the_printed_lines() {
    let out = ptc(
        &[
            "eval",
            "--json",
            "(do (println \"hi\") {:a [1 2.5 \"x\"] :b #{:k}})",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0));
    let o = object(&out);
    assert_eq!(o["ok"], json!(true));
    assert_eq!(o["outcome"], json!("value"));
    assert_eq!(o["result"], json!({"a": [1, 2.5, "x"], "b": ["k"]}));
    assert_eq!(o["result_is_json"], json!(true));
    assert_eq!(o["result_text"], json!("{:a [1 2.5 \"x\"], :b #{:k}}"));
    assert_eq!(o["prints"], json!(["hi"]));
    assert_eq!(o["error"], Json::Null);
    assert!(o["steps"].as_u64().unwrap() >= 1);
    assert!(o["timing_ms"]["total"].as_f64().unwrap() > 0.0);
    assert_whole_micros(&o["timing_ms"]["total"]);
}

/// A time in milliseconds is printed with at most three decimals (whole
/// microseconds), never float noise like `0.09758499999999999`.
fn assert_whole_micros(ms: &Json) {
    let printed = ms.to_string();
    let decimals = printed.split('.').nth(1).map_or(0, str::len);
    assert!(ms.is_number() && decimals <= 3, "{printed}");
}

#[test]
fn an_error_has_code_message_line_column_and_hint_and_exit_1() {
    let out = ptc(&["eval", "--json", "(+ 1\n   (foo))"], None);
    assert_eq!(out.status.code(), Some(1));
    let o = object(&out);
    assert_eq!(o["ok"], json!(false));
    assert_eq!(o["outcome"], json!("error"));
    assert_eq!(o["result"], Json::Null);
    let e = &o["error"];
    assert_eq!(e["code"], json!("undefined-error"), "{e}");
    assert!(e["message"].as_str().unwrap().contains("`foo`"), "{e}");
    assert_eq!(
        (e["line"].clone(), e["column"].clone()),
        (json!(2), json!(5))
    );
    assert!(
        e.get("hint").is_some(),
        "the hint field is always present: {e}"
    );
}

#[test]
fn parse_errors_and_fail_keep_their_exit_codes() {
    let out = ptc(&["eval", "--json", "(+ 1 2"], None);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(object(&out)["error"]["code"], json!("parse-error"));

    let out = ptc(&["eval", "--json", "(fail {:why \"no\"})"], None);
    assert_eq!(out.status.code(), Some(1));
    let o = object(&out);
    assert_eq!(o["outcome"], json!("fail"));
    assert_eq!(o["result"], json!({"why": "no"}));
}

#[test]
fn values_without_a_json_form_say_so_and_keep_their_printing() {
    for (program, printed) in [("inc", "#fn[inc]"), ("{1 2}", "{1 2}"), ("##Inf", "##Inf")] {
        let out = ptc(&["eval", "--json", program], None);
        let o = object(&out);
        assert_eq!(o["result_is_json"], json!(false), "{program}: {o}");
        assert_eq!(o["result"], Json::Null, "{program}");
        assert_eq!(o["result_text"], json!(printed), "{program}");
    }
    // nil has a JSON form: null, told apart by result_is_json.
    let o = object(&ptc(&["eval", "--json", "nil"], None));
    assert_eq!(
        (o["result"].clone(), o["result_is_json"].clone()),
        (Json::Null, json!(true))
    );
}

#[test]
fn usage_errors_are_json_too_with_exit_2() {
    let out = ptc(&["run", "--json", "/no/such/program.clj"], None);
    assert_eq!(out.status.code(), Some(2));
    let o = object(&out);
    assert_eq!(o["outcome"], json!("usage_error"));
    assert_eq!(o["error"]["code"], json!("usage"));
    assert!(text(&out.stderr).contains("/no/such/program.clj"));
}

#[test]
fn run_names_the_file_in_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.clj");
    std::fs::write(&file, "(println 1)\n(+ 1 :a)\n").unwrap();
    let out = ptc(&["run", "--json", file.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1));
    let o = object(&out);
    assert_eq!(
        o["prints"],
        json!(["1"]),
        "lines printed before the error are kept: {o}"
    );
    assert_eq!(o["error"]["file"], json!(file.to_str().unwrap()));
    assert_eq!(o["error"]["line"], json!(2));
}

#[test]
fn with_stats_the_stats_are_a_json_object_on_stderr() {
    let out = ptc(&["eval", "--json", "--stats", "(+ 1 2)"], None);
    assert_eq!(object(&out)["result"], json!(3));
    let stats: Json = serde_json::from_str(text(&out.stderr).trim()).unwrap();
    assert!(stats["phases_ms"]["eval"].is_number(), "{stats}");
    for phase in ["read_data", "parse", "analyze", "eval", "print"] {
        assert_whole_micros(&stats["phases_ms"][phase]);
    }
    for key in ["median", "min", "max"] {
        assert_whole_micros(&stats["eval_ms"][key]);
        assert_whole_micros(&stats["run_ms"][key]);
    }
}

#[test]
fn agent_json_reports_the_run() {
    let root = env!("CARGO_MANIFEST_DIR");
    let dir = format!("{root}/examples/agent");
    let out = ptc(
        &[
            "agent",
            "--json",
            "--llm",
            &format!("script:{dir}/replies.json"),
            "--data",
            &format!("{dir}/data.json"),
            "--tools",
            &format!("{dir}/tools.json"),
            "--mission",
            "Which products need reordering?",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let o = object(&out);
    assert_eq!(o["outcome"], json!("returned"));
    assert_eq!(o["result"]["value"], json!(3900));
    assert_eq!(o["turns"], json!(4));
    assert!(o["prints"].as_array().unwrap().len() >= 3, "{o}");
    assert!(o["usage"]["input_tokens"].is_number());
}

#[test]
fn agent_json_reports_the_turn_limit_with_the_last_error() {
    let dir = tempfile::tempdir().unwrap();
    let replies = dir.path().join("replies.json");
    std::fs::write(&replies, r#"["```clojure\n(undefined-thing)\n```"]"#).unwrap();
    let out = ptc(
        &[
            "agent",
            "--json",
            "--max-turns",
            "1",
            "--llm",
            &format!("script:{}", replies.display()),
            "--mission",
            "m",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let o = object(&out);
    assert_eq!(o["outcome"], json!("turn_limit"), "{o}");
    assert_eq!(o["error"]["code"], json!("undefined-error"), "{o}");
}

/// `ptc agent --prelude` and `ptc prompt --prelude`: the definitions are in
/// `user/` from the first turn, listed in the first prompt, and a failing
/// prelude stops the run before any model call.
#[test]
fn agent_prelude_definitions_reach_the_program_and_the_first_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let prelude = dir.path().join("prelude.clj");
    std::fs::write(
        &prelude,
        "(defn low? \"True below the threshold\" [n] (< n threshold))\n(def threshold 5)\n",
    )
    .unwrap();
    let replies = dir.path().join("replies.json");
    std::fs::write(
        &replies,
        r#"["```clojure\n(return (filterv low? [1 7 3]))\n```"]"#,
    )
    .unwrap();
    let transcript = dir.path().join("t.jsonl");
    let args = |extra: &[&str]| {
        let mut a: Vec<String> = vec![
            "--prelude".into(),
            prelude.display().to_string(),
            "--mission".into(),
            "Which are low?".into(),
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let agent_args = args(&[
        "--json",
        "--llm",
        &format!("script:{}", replies.display()),
        "--transcript",
        transcript.to_str().unwrap(),
    ]);
    let mut argv = vec!["agent"];
    argv.extend(agent_args.iter().map(String::as_str));
    let out = ptc(&argv, None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(object(&out)["result"], json!([1, 3]));
    // The prelude is not a turn of the run: the program was turn 1, and
    // the first prompt listed the prelude's definitions.
    let first: Json = crate::util::first_transcript_entry(&transcript);
    let sent = first.to_string();
    assert!(sent.contains("(low? [n])"), "{sent}");
    assert!(sent.contains("True below the threshold"), "{sent}");
    assert!(sent.contains("threshold"), "{sent}");

    // `ptc prompt` shows the same section.
    let prompt_args = args(&[]);
    let mut argv = vec!["prompt"];
    argv.extend(prompt_args.iter().map(String::as_str));
    let out = ptc(&argv, None);
    let shown = text(&out.stdout);
    assert!(
        shown.contains(";; === user/ (your prelude) ===\n(low? [n])"),
        "{shown}"
    );

    // A failing prelude: exit 2 with the location, no model call.
    let bad = dir.path().join("bad.clj");
    std::fs::write(&bad, "(def a 1)\n(+ a :x)\n").unwrap();
    let out = ptc(
        &[
            "agent",
            "--prelude",
            bad.to_str().unwrap(),
            "--llm",
            "openai:gpt-4o-mini",
            "--base-url",
            "http://127.0.0.1:9",
            "--mission",
            "m",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("bad.clj:2:1") && err.contains("(type-error)"),
        "{err}"
    );
    assert!(!err.contains("model call"), "{err}");
}
