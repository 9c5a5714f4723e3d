//! The multi-turn agent loop end to end: scripted models, real sessions,
//! command tools as real subprocesses, the messages actually sent, and the
//! `ptc agent` command (including one run against a local OpenAI-style
//! HTTP server).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value as Json};

use ptc_lisp::agent::transcript::read_transcript;
use ptc_lisp::agent::{
    system_prompt, Agent, AgentConfig, AgentOutcome, AgentRun, AgentTool, ChatRequest, Progress,
    PromptOptions, ProviderError, Role, ScriptedProvider, ToolManifest, TurnReport,
    NO_CODE_INSTRUCTION,
};
use ptc_lisp::eval::Limits;
use ptc_lisp::session::{Session, Signature};
use ptc_lisp::value::{pr_str, Value};

use crate::providers::{openai_ok, reply, TestServer};

/// A reply holding `code` in one fenced block.
fn block(code: &str) -> String {
    format!("```clojure\n{code}\n```")
}

fn model(replies: &[String]) -> Arc<ScriptedProvider> {
    Arc::new(ScriptedProvider::new(replies.to_vec()))
}

/// A session with a `search` tool and a `products` data set.
fn shop() -> Session {
    let mut session = crate::util::session();
    session
        .register_tool(
            "search",
            "(query :string) -> [:string]",
            "Search the catalogue",
            |args| {
                let q = args.str("query").unwrap_or_default().to_string();
                Ok(Value::vector([
                    Value::from(format!("{q} 1")),
                    Value::from(format!("{q} 2")),
                ]))
            },
        )
        .unwrap();
    session
        .set_data_json(&json!({"products": [{"name": "Laptop", "price": 1200},
                                            {"name": "Mouse", "price": 25}]}))
        .unwrap();
    session
}

fn run(
    session: Session,
    config: AgentConfig,
    replies: &[String],
) -> (AgentRun, Arc<ScriptedProvider>) {
    let provider = model(replies);
    let mut agent = Agent::new(provider.clone(), session, config).unwrap();
    (agent.run(), provider)
}

fn roles(request: &ChatRequest) -> Vec<Role> {
    request.messages.iter().map(|m| m.role).collect()
}

// ---- (1) several turns, definitions carried over ----

#[test]
fn definitions_carry_over_until_return() {
    let replies = [
        block("(def hits (tool/search \"laptop\"))\n(println (count hits))"),
        block("(def cheap (filter #(< (:price %) 100) data/products))"),
        block("(return {:hits (count hits) :cheap (mapv :name cheap)})"),
    ];
    let (run, provider) = run(shop(), AgentConfig::new("Find cheap things"), &replies);
    assert_eq!(
        run.outcome,
        AgentOutcome::Returned(ptc_lisp::eval::eval_str("{:hits 2 :cheap [\"Mouse\"]}").unwrap())
    );
    assert_eq!(run.turns.len(), 3);
    assert!(run.turns.iter().all(|t| t.success));
    assert_eq!(run.turns[0].tool_calls[0].name, "search");
    assert_eq!(run.calls.len(), 3);
    assert_eq!(provider.calls(), 3);
    assert_eq!(run.turns[2].memory.len(), 2, "hits and cheap persist");
    // Turn numbers of calls and turns line up.
    for (i, (call, turn)) in run.calls.iter().zip(&run.turns).enumerate() {
        assert_eq!(call.turn, i + 1);
        assert_eq!(turn.number, i + 1);
        assert_eq!(call.program.as_deref(), Some(turn.program.as_str()));
    }
}

// ---- (2) recovering from an error ----

#[test]
fn an_error_is_fed_back_and_the_model_recovers() {
    let replies = [
        block("(def total (reduce + (map :price data/prodcts)))"),
        block("(def total (reduce + (map :price data/products)))\n(return total)"),
    ];
    let (run, provider) = run(shop(), AgentConfig::new("Total price"), &replies);
    assert_eq!(run.outcome, AgentOutcome::Returned(Value::Int(1225)));
    let error = run.turns[0].error().unwrap();
    assert_eq!(error.code, "undefined-error");
    // Without compression the second request is the full exchange: the
    // failed program, then its error.
    let second = &provider.requests()[1];
    assert_eq!(
        roles(second),
        [Role::System, Role::User, Role::Assistant, Role::User]
    );
    assert!(second.messages[2].content.contains("data/prodcts"));
    let feedback = &second.messages[3].content;
    assert!(feedback.starts_with("Error: undefined-error"), "{feedback}");
    assert!(feedback.contains("prodcts"), "{feedback}");
    assert!(feedback.ends_with("Turns left: 4"), "{feedback}");
    assert_eq!(run.last_error(), None);
}

// ---- (3) the turn limit ----

#[test]
fn the_turn_limit_ends_the_run() {
    let replies = [
        block("(println \"looking\")"),
        block("(def x 1)"),
        block("(return x)"),
    ];
    let config = AgentConfig::new("Never finishes").with_max_turns(2);
    let (run, provider) = run(shop(), config, &replies);
    assert_eq!(run.outcome, AgentOutcome::TurnLimit);
    assert_eq!(run.turns.len(), 2);
    assert_eq!(provider.calls(), 2, "no call past the limit");
    let requests = provider.requests();
    assert!(requests[0].messages[1].content.ends_with("Turns left: 2"));
    let last = requests[1].messages.last().unwrap();
    assert!(
        last.content
            .ends_with("FINAL TURN - you must call (return result) or (fail reason) now."),
        "{}",
        last.content
    );
}

#[test]
fn fail_ends_the_run_as_failed() {
    let replies = [block("(fail {:reason \"no stock\"})"), block("(return 1)")];
    let (run, provider) = run(shop(), AgentConfig::new("Give up"), &replies);
    assert_eq!(
        pr_str(match &run.outcome {
            AgentOutcome::Failed(v) => v,
            other => panic!("{other:?}"),
        }),
        "{:reason \"no stock\"}"
    );
    assert_eq!(provider.calls(), 1);
    assert!(!run.succeeded());
}

// ---- (4) a return that does not match the signature ----

#[test]
fn an_invalid_return_is_rejected_then_a_valid_one_accepted() {
    let replies = [
        block("(def items [\"a\" 3])\n(return {:count 2 :items items})"),
        block("(return {:count 2 :items [\"a\" \"3\"]})"),
    ];
    let config = AgentConfig::new("List items")
        .with_signature("{count :int, items [:string]}")
        .with_compression(true);
    let (run, provider) = run(shop(), config, &replies);
    let first = &run.turns[0];
    assert!(!first.success);
    let error = first.error().unwrap();
    assert_eq!(error.code, "signature-mismatch");
    let expected = "`(return ...)` does not match the signature {count :int, items [:string]}: \
                    at `items[1]` expected a string, got integer 3";
    assert_eq!(error.message, expected);
    assert!(
        first.memory.get("items").is_none(),
        "a rejected turn is rolled back"
    );
    // The model is told exactly what was wrong.
    let second = &provider.requests()[1];
    assert_eq!(
        roles(second),
        [Role::System, Role::User, Role::Assistant, Role::User]
    );
    let feedback = &second.messages[3].content;
    assert!(
        feedback.starts_with(&format!("Error: signature-mismatch: {expected}")),
        "{feedback}"
    );
    assert!(feedback.contains("were not kept"), "{feedback}");
    assert_eq!(
        run.value().map(pr_str).as_deref(),
        Some("{:count 2, :items [\"a\" \"3\"]}")
    );
    // The expected shape is in the system prompt and in the USER message.
    assert!(second.messages[0]
        .content
        .contains("must match {count :int, items [:string]}"));
    assert!(second.messages[1]
        .content
        .contains(";; Expected return: {count :int, items [:string]}"));
}

#[test]
fn a_bad_signature_is_a_setup_error() {
    let err = Agent::new(
        model(&[]),
        crate::util::session(),
        AgentConfig::new("x").with_signature("{count :integer}"),
    )
    .unwrap_err();
    assert!(err.to_string().contains("unknown type `:integer`"), "{err}");
    let err = Agent::new(
        model(&[]),
        crate::util::session(),
        AgentConfig::new("x").with_max_turns(0),
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "`max_turns` must be at least 1");
}

// ---- (5) command tools that fail and time out ----

fn write(dir: &Path, name: &str, contents: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

#[cfg(unix)]
#[test]
fn command_tools_that_fail_or_time_out_are_turn_errors() {
    let dir = tempfile::tempdir().unwrap();
    let broken = write(
        dir.path(),
        "broken.sh",
        "#!/bin/sh\ncat > /dev/null\necho 'disk on fire' >&2\nexit 3\n",
    );
    let slow = write(dir.path(), "slow.sh", "#!/bin/sh\nsleep 5\necho 1\n");
    let ok = write(
        dir.path(),
        "ok.sh",
        "#!/bin/sh\ncat > /dev/null\necho '{\"n\": 7}'\n",
    );
    let manifest = json!({"tools": {
        "broken": {"signature": "-> :map", "command": ["sh", broken]},
        "slow": {"signature": "-> :int", "command": ["sh", slow], "timeout_ms": 300},
        "fine": {"signature": "-> :map", "command": ["sh", ok]},
    }});
    let manifest = ToolManifest::from_json(&manifest, "tools.json").unwrap();
    let mut session = crate::util::session();
    manifest.register_into(&mut session).unwrap();
    let replies = [
        block("(tool/broken)"),
        block("(tool/slow)"),
        block("(return (:n (tool/fine)))"),
    ];
    let config = AgentConfig::new("Use the tools").with_limits(Limits {
        timeout: Duration::from_secs(10),
        ..crate::util::relaxed()
    });
    let started = std::time::Instant::now();
    let (run, provider) = run(session, config, &replies);
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "the slow tool was killed"
    );
    assert_eq!(run.outcome, AgentOutcome::Returned(Value::Int(7)));

    let failed = run.turns[0].error().unwrap();
    assert_eq!(failed.code, "tool-error");
    assert!(
        failed.message == "Tool `broken` failed with exit code 3: disk on fire",
        "{}",
        failed.message
    );
    assert!(
        failed.message.contains("disk on fire"),
        "{}",
        failed.message
    );
    assert_eq!(run.turns[0].tool_calls[0].name, "broken");
    assert!(run.turns[0].tool_calls[0].error.is_some());

    let timed_out = run.turns[1].error().unwrap();
    assert_eq!(timed_out.code, "tool-error");
    assert!(
        timed_out
            .message
            .contains("timed out after 300 ms and was killed"),
        "{}",
        timed_out.message
    );
    // The model read both errors.
    let third = &provider.requests()[2];
    assert!(third.messages[3].content.contains("disk on fire"));
    assert!(third.messages[5].content.contains("timed out"));
}

// ---- (6) the messages sent, with and without compression ----

fn three_turns() -> [String; 3] {
    [
        block("(def hits (tool/search \"laptop\"))\n(println \"found\" (count hits))"),
        block("(defn top [n] (take n hits))\n(println (top 1))"),
        block("(return (top 2))"),
    ]
}

#[test]
fn with_compression_the_history_is_one_user_message() {
    let config = AgentConfig::new("Find laptops").with_compression(true);
    let (run, provider) = run(shop(), config, &three_turns());
    assert!(run.succeeded());
    let requests = provider.requests();
    let system = &requests[0].messages[0];
    assert_eq!(system.role, Role::System);
    for request in &requests {
        assert_eq!(roles(request), [Role::System, Role::User]);
        // MSG-006: one system prompt for the whole run; MSG-003/007: the
        // mission opens the USER message every time.
        assert_eq!(request.messages[0], *system);
        assert!(request.messages[1].content.starts_with("Find laptops\n\n"));
    }
    let third = &requests[2].messages[1].content;
    assert!(third.contains(";; === user/ (your prelude) ==="), "{third}");
    assert!(third.contains("(top [n])"), "{third}");
    assert!(
        third.contains(";; Tool calls made:\n;   search(\"laptop\")"),
        "{third}"
    );
    assert!(
        third.contains(";; Output:\nfound 2\n[\"laptop 1\"]"),
        "{third}"
    );
    assert!(!third.contains("(take n hits)"), "old code is not repeated");
    assert!(third.ends_with("Turns left: 3"), "{third}");
    let stats = run.compression.as_ref().unwrap();
    assert_eq!(stats.turns_compressed, 2);
    assert_eq!(stats.printlns_shown, 2);
    assert!(run.debug_view().contains("+- Compression ---"));
}

#[test]
fn without_compression_the_history_is_the_full_exchange() {
    let (run, provider) = run(shop(), AgentConfig::new("Find laptops"), &three_turns());
    assert!(run.succeeded());
    assert!(run.compression.is_none());
    let requests = provider.requests();
    assert_eq!(roles(&requests[0]), [Role::System, Role::User]);
    assert_eq!(
        roles(&requests[2]),
        [
            Role::System,
            Role::User,
            Role::Assistant,
            Role::User,
            Role::Assistant,
            Role::User
        ]
    );
    let m = &requests[2].messages;
    assert!(m[1].content.starts_with("Find laptops\n\n;; === tool/ ==="));
    assert_eq!(m[2].content, three_turns()[0]);
    assert!(
        m[3].content.starts_with(";; Output:\nfound 2"),
        "{}",
        m[3].content
    );
    assert_eq!(m[4].content, three_turns()[1]);
    assert!(m[5].content.ends_with("Turns left: 3"));
}

// ---- turns left after a failed turn ----

/// Every line of a request that states the turns left.
fn turns_left_lines(request: &ChatRequest) -> Vec<String> {
    request
        .messages
        .iter()
        .flat_map(|m| m.content.lines())
        .filter(|l| l.starts_with("Turns left") || l.starts_with("FINAL TURN"))
        .map(str::to_string)
        .collect()
}

#[test]
fn turns_left_are_stated_once_and_the_final_turn_line_means_one_turn_left() {
    const FINAL: &str = "FINAL TURN - you must call (return result) or (fail reason) now.";
    let ok_fail_return = [
        block("(def hits (tool/search \"laptop\"))\n(println (count hits))"),
        block("(def n (+ 1 \"two\"))"),
        block("(return (count (tool/search \"laptop\")))"),
    ];
    let fail_fail_return = [
        block("(def n (+ 1 \"two\"))"),
        block("(def n (count data/prodcts))"),
        block("(return (count (tool/search \"laptop\")))"),
    ];
    for replies in [&ok_fail_return, &fail_fail_return] {
        for compression in [false, true] {
            let config = AgentConfig::new("Count laptops")
                .with_max_turns(3)
                .with_compression(compression);
            let (run, provider) = run(shop(), config, replies);
            assert_eq!(run.outcome, AgentOutcome::Returned(Value::Int(2)));
            let requests = provider.requests();
            let stated: Vec<Vec<String>> = requests.iter().map(turns_left_lines).collect();
            assert_eq!(
                stated,
                [vec!["Turns left: 3"], vec!["Turns left: 2"], vec![FINAL]],
                "compression {compression}"
            );
            // Once, and at the very end of the prompt.
            for (request, lines) in requests.iter().zip(&stated) {
                let last = request.messages.last().unwrap();
                assert_eq!(last.role, Role::User);
                assert!(last.content.ends_with(&lines[0]), "{}", last.content);
            }
            // The final prompt ends with the failed turn's error.
            let last = &requests[2].messages.last().unwrap().content;
            assert!(last.starts_with("Error: "), "{last}");
        }
    }
}

// ---- (7) a reply with no code ----

#[test]
fn a_reply_without_code_costs_a_turn_and_is_answered() {
    let replies = [
        "I would search for laptops first.".to_string(),
        block("(return (count (tool/search \"laptop\")))"),
    ];
    for compression in [false, true] {
        let config = AgentConfig::new("Count laptops").with_compression(compression);
        let (run, provider) = run(shop(), config, &replies);
        assert_eq!(run.outcome, AgentOutcome::Returned(Value::Int(2)));
        assert_eq!(run.turns.len(), 2);
        assert_eq!(run.calls[0].program, None);
        let turn = &run.turns[0];
        assert_eq!(turn.error().unwrap().code, "no-code");
        assert_eq!(turn.program, ";; I would search for laptops first.");
        let second = &provider.requests()[1];
        assert_eq!(
            roles(second),
            [Role::System, Role::User, Role::Assistant, Role::User]
        );
        assert_eq!(
            second.messages[2].content,
            "```clojure\n;; I would search for laptops first.\n```"
        );
        assert!(second.messages[3].content.contains(NO_CODE_INSTRUCTION));
        assert!(second.messages[3].content.ends_with("Turns left: 4"));
    }
}

#[test]
fn several_blocks_in_one_reply_run_as_one_program() {
    let replies = [
        "First:\n```clojure\n(defn sq [x] (* x x))\n```\nThen:\n```clojure\n(return (sq 9))\n```"
            .to_string(),
    ];
    let (run, _) = run(shop(), AgentConfig::new("Square 9"), &replies);
    assert_eq!(run.outcome, AgentOutcome::Returned(Value::Int(81)));
    assert_eq!(
        run.turns[0].program,
        "(defn sq [x] (* x x))\n(return (sq 9))"
    );
}

// ---- (8) single-shot ----

#[test]
fn single_shot_takes_the_programs_value() {
    let replies = [block("(->> data/products (map :price) (reduce +))")];
    // Compression is asked for but never applies with one turn (SS-001).
    let config = AgentConfig::new("Total price")
        .with_max_turns(1)
        .with_compression(true);
    let (run, provider) = run(shop(), config, &replies);
    assert_eq!(run.outcome, AgentOutcome::Returned(Value::Int(1225)));
    assert!(run.compression.is_none());
    let request = &provider.requests()[0];
    assert_eq!(roles(request), [Role::System, Role::User]);
    assert!(request.messages[0]
        .content
        .contains("the value of the program's last expression is the answer"));
    assert!(request.messages[1]
        .content
        .ends_with("FINAL TURN - you must call (return result) or (fail reason) now."));
}

#[test]
fn single_shot_checks_the_value_against_the_signature() {
    let replies = [block("\"not a number\"")];
    let config = AgentConfig::new("Total")
        .with_max_turns(1)
        .with_signature(":int");
    let (run, _) = run(shop(), config, &replies);
    assert_eq!(run.outcome, AgentOutcome::TurnLimit);
    assert_eq!(
        run.last_error().unwrap().message,
        "`(return ...)` does not match the signature :int: expected an integer, got string \"not a number\""
    );
}

// ---- providers, progress, transcripts ----

#[test]
fn a_provider_error_ends_the_run() {
    let replies = [block("(println 1)")];
    let (run, _) = run(shop(), AgentConfig::new("x"), &replies);
    match &run.outcome {
        AgentOutcome::ProviderError(ProviderError::ScriptExhausted { used: 1, .. }) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(run.turns.len(), 1);
    assert_eq!(run.calls.len(), 1);
}

#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<String>>>);

impl Progress for Recorder {
    fn turn_started(&mut self, turn: usize, max_turns: usize) {
        self.0
            .lock()
            .unwrap()
            .push(format!("start {turn}/{max_turns}"));
    }
    fn turn_finished(&mut self, report: &TurnReport<'_>) {
        let entry = report.transcript_entry();
        self.0.lock().unwrap().push(format!(
            "done {} {} tools={} messages={}",
            report.turn.number,
            entry.outcome.unwrap(),
            report.turn.tool_calls.len(),
            entry.messages.len()
        ));
    }
}

#[test]
fn progress_sees_every_turn_and_the_transcript_matches() {
    let recorder = Recorder::default();
    let provider = model(&three_turns());
    let mut agent = Agent::new(provider.clone(), shop(), AgentConfig::new("Find laptops"))
        .unwrap()
        .with_progress(recorder.clone());
    let run = agent.run();
    assert_eq!(
        *recorder.0.lock().unwrap(),
        [
            "start 1/5",
            "done 1 value tools=1 messages=2",
            "start 2/5",
            "done 2 value tools=0 messages=4",
            "start 3/5",
            "done 3 return tools=0 messages=6",
        ]
    );
    let transcript = run.transcript();
    assert_eq!(transcript.len(), 3);
    for (entry, request) in transcript.iter().zip(provider.requests()) {
        assert_eq!(entry.messages, request.messages, "exactly what was sent");
        assert_eq!(entry.messages[0].content, agent.system_prompt());
    }
    assert_eq!(transcript[0].tool_calls[0].args, json!(["laptop"]));
    assert_eq!(
        transcript[0].tool_calls[0].result,
        Some(json!(["laptop 1", "laptop 2"]))
    );
    assert_eq!(transcript[2].result, Some(json!(["laptop 1", "laptop 2"])));
}

#[test]
fn a_second_run_keeps_definitions_but_not_history() {
    let provider = model(&[block("(def n 41)\n(return n)"), block("(return (inc n))")]);
    let mut agent = Agent::new(provider.clone(), shop(), AgentConfig::new("Count")).unwrap();
    assert!(agent.run().succeeded());
    let second = agent.run();
    assert_eq!(second.outcome, AgentOutcome::Returned(Value::Int(42)));
    assert_eq!(second.turns.len(), 1);
    assert_eq!(
        second.turns[0].number, 2,
        "session turn numbers keep counting"
    );
    assert_eq!(roles(&provider.requests()[1]), [Role::System, Role::User]);
    assert!(provider.requests()[1].messages[1]
        .content
        .ends_with("Turns left: 5"));
}

#[test]
fn the_system_prompt_can_be_replaced_and_model_options_are_sent() {
    let config = AgentConfig::new("x")
        .with_system_prompt("Only Lisp.")
        .with_model("tiny")
        .with_temperature(0.0)
        .with_max_tokens(100);
    let (_, provider) = run(shop(), config, &[block("(return 1)")]);
    let request = &provider.requests()[0];
    assert_eq!(request.messages[0].content, "Only Lisp.");
    assert_eq!(request.model, "tiny");
    assert_eq!(request.temperature, Some(0.0));
    assert_eq!(request.max_tokens, Some(100));
}

// ---- agents as tools ----

#[test]
fn an_agent_tool_inherits_options_and_returns_its_value() {
    // One script for both agents, in call order.
    let provider = model(&[
        block("(def r (tool/research {:topic \"rust\"}))\n(println r)"),
        block("(def facts [(str \"fact about \" data/topic)])\n(println facts)"),
        block("(return {:facts facts})"),
        block("(return (:facts r))"),
    ]);
    let parent = AgentConfig::new("Research rust")
        .with_compression(true)
        .with_model("big")
        .with_limits(Limits::generous());
    let mut agent = Agent::new(provider.clone(), shop(), parent).unwrap();
    agent
        .add_agent_tool(AgentTool::new(
            "research",
            "(topic :string) -> {facts [:string]}",
            "Research a topic",
            AgentConfig::new("Find facts about {{topic}}"),
        ))
        .unwrap();
    let run = agent.run();
    assert_eq!(
        run.value().map(pr_str).as_deref(),
        Some("[\"fact about rust\"]")
    );
    let requests = provider.requests();
    assert_eq!(requests.len(), 4);
    // The child's second call: compression inherited ([system, user]), the
    // mission filled in, the argument bound as data/, the model inherited,
    // and the tool's return type as the child's signature.
    let child = &requests[2];
    assert_eq!(roles(child), [Role::System, Role::User]);
    assert!(child.messages[1]
        .content
        .starts_with("Find facts about rust"));
    assert!(child.messages[1].content.contains("data/topic"));
    assert_eq!(child.model, "big");
    assert!(child.messages[0]
        .content
        .contains("must match {facts [:string]}"));
    // The parent's prompt lists the sub-agent as a tool.
    assert!(requests[0].messages[1]
        .content
        .contains("(tool/research topic)"));
}

#[test]
fn a_failing_agent_tool_is_a_tool_error_for_the_caller() {
    let child_model = model(&[block("(fail \"no sources\")")]);
    let child = Agent::new(
        child_model,
        crate::util::session(),
        AgentConfig::new("Look up {{q}}"),
    )
    .unwrap()
    .as_tool("lookup", "(q :string) -> :string", "Look something up");
    let provider = model(&[block("(tool/lookup \"x\")"), block("(return :gave-up)")]);
    let parent = AgentConfig::new("Ask").with_limits(Limits::generous());
    let mut agent = Agent::new(provider, crate::util::session(), parent).unwrap();
    agent.add_agent_tool(child).unwrap();
    let run = agent.run();
    let error = run.turns[0].error().unwrap();
    assert_eq!(error.code, "tool-error");
    assert_eq!(
        error.message,
        "Tool `lookup` failed: the agent failed: \"no sources\""
    );
    assert!(run.succeeded());
}

// ---- the `ptc agent` command ----

/// `ptc` with `args` ([`crate::util::relaxed_args`]: a generous program
/// time limit unless the test names one).
fn ptc(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ptc"));
    command
        .args(crate::util::relaxed_args(args))
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL");
    for (k, v) in envs {
        command.env(k, v);
    }
    command.output().expect("ptc runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/agent")
        .join(name)
        .display()
        .to_string()
}

const EXAMPLE_MISSION: &str = "Which products must be reordered (fewer units than \
                               data/reorder_below), and what are their remaining units worth?";

#[test]
fn cli_runs_the_offline_example() {
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("run.jsonl");
    let script = format!("script:{}", example("replies.json"));
    let signature = "{reorder [:string], value :float}";
    let out = ptc(
        &[
            "agent",
            "--mission",
            EXAMPLE_MISSION,
            "--llm",
            &script,
            "--data",
            &example("data.json"),
            "--tools",
            &example("tools.json"),
            "--compression",
            "--signature",
            signature,
            "--transcript",
            transcript.to_str().unwrap(),
        ],
        &[],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        text(&out.stdout),
        "{:reorder [\"Laptop\" \"Desk\" \"Chair\"], :value 3900}\n"
    );
    for needle in [
        "turn 1/5\n  program: (def stock (tool/stock))  (+1 lines)\n  tool calls: stock()\n",
        "turn 2/5\n",
        "  error: type-error at 1:18: `<` expected a number, got nil\n",
        "turn 4/5\n",
        "  returned: {:reorder [\"Laptop\" \"Desk\" \"Chair\"], :value 3900}\n",
        "(estimated)",
        "4 turn(s) in ",
    ] {
        assert!(stderr.contains(needle), "missing {needle:?} in\n{stderr}");
    }

    // One line per model call, the messages exactly as sent.
    let entries = read_transcript(&transcript).unwrap();
    assert_eq!(entries.len(), 4);
    let sig = Signature::parse(signature).unwrap();
    let prompt = system_prompt(PromptOptions {
        single_shot: false,
        signature: Some(&sig),
    });
    for (i, entry) in entries.iter().enumerate() {
        assert_eq!(entry.turn as usize, i + 1);
        assert_eq!(entry.messages[0].role, Role::System);
        assert_eq!(entry.messages[0].content, prompt);
        assert!(entry.messages[1].content.starts_with(EXAMPLE_MISSION));
    }
    assert_eq!(entries[0].tool_calls[0].name, "stock");
    assert_eq!(entries[1].outcome.as_deref(), Some("error"));
    assert!(entries[1]
        .error
        .as_deref()
        .unwrap()
        .contains("expected a number"));
    assert_eq!(entries[3].outcome.as_deref(), Some("return"));
    assert_eq!(
        entries[3].result,
        Some(json!({"reorder": ["Laptop", "Desk", "Chair"], "value": 3900}))
    );
    // The raw lines are JSON objects with the documented fields.
    let raw = std::fs::read_to_string(&transcript).unwrap();
    for line in raw.lines() {
        let v: Json = serde_json::from_str(line).unwrap();
        for field in [
            "turn",
            "messages",
            "reply",
            "program",
            "tool_calls",
            "usage",
        ] {
            assert!(v.get(field).is_some(), "{field} in {line}");
        }
    }
}

#[test]
fn cli_transcripts_replay_and_limits_reach_the_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first.jsonl");
    let second = dir.path().join("second.jsonl");
    let script = format!("script:{}", example("replies.json"));
    let args = |llm: &str, transcript: &Path| -> Vec<String> {
        [
            "agent",
            "--mission",
            EXAMPLE_MISSION,
            "--llm",
            llm,
            "--data",
            &example("data.json"),
            "--tools",
            &example("tools.json"),
            "--compression",
            "--println-limit",
            "1",
            "--transcript",
            transcript.to_str().unwrap(),
        ]
        .map(str::to_string)
        .to_vec()
    };
    let run = |args: Vec<String>| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        ptc(&args, &[])
    };
    let out = run(args(&script, &first));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // With --println-limit 1 the last prompt shows only the newest println.
    let entries = read_transcript(&first).unwrap();
    let last_prompt = &entries[3].messages[1].content;
    assert!(
        last_prompt.contains(
            ";; Output:\n;   ... 2 earlier println calls omitted\nvalue of the remaining units: 3900\n"
        ),
        "{last_prompt}"
    );
    assert!(!last_prompt.contains("stock: {"), "{last_prompt}");

    // The transcript replays as a script, to the same messages and value.
    let replay = format!("script:{}", first.display());
    let again = run(args(&replay, &second));
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
    assert_eq!(again.stdout, out.stdout);
    let replayed = read_transcript(&second).unwrap();
    assert_eq!(replayed.len(), entries.len());
    for (a, b) in entries.iter().zip(&replayed) {
        assert_eq!(a.messages, b.messages);
        assert_eq!(a.reply, b.reply);
    }
}

fn script(dir: &Path, replies: &[String]) -> String {
    let path = write(
        dir,
        "replies.json",
        &serde_json::to_string(replies).unwrap(),
    );
    format!("script:{}", path.display())
}

#[test]
fn cli_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let fail = script(dir.path(), &[block("(fail \"no data\")")]);
    let out = ptc(&["agent", "--mission", "m", "--llm", &fail], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(text(&out.stderr).contains("error: the mission failed: \"no data\""));

    let dir2 = tempfile::tempdir().unwrap();
    let endless = script(dir2.path(), &[block("(+ 1 2)"), block("(undefined-fn)")]);
    let out = ptc(
        &[
            "agent",
            "--mission",
            "m",
            "--llm",
            &endless,
            "--max-turns",
            "2",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(
            "error: no result after 2 turn(s); the last error: Undefined symbol `undefined-fn`"
        ),
        "{stderr}"
    );

    let dir3 = tempfile::tempdir().unwrap();
    let quiet = script(dir3.path(), &[block("(return [1 :a \"b\"])")]);
    let out = ptc(&["agent", "--mission", "m", "--llm", &quiet, "-q"], &[]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stdout), "[1 :a \"b\"]\n");
    assert_eq!(text(&out.stderr), "", "--quiet prints nothing on stderr");
}

#[test]
fn cli_usage_errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let ok = script(dir.path(), &[block("(return 1)")]);
    let bad_manifest = write(
        dir.path(),
        "tools.json",
        r#"{"tools": {"x": {"signature": "-> :map"}}}"#,
    );
    let bad_data = write(dir.path(), "data.json", "[1, 2]");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--llm", "gemini:pro"], "Unknown provider `gemini`"),
        (
            vec!["--llm", "script:/nonexistent/replies.json"],
            "Could not read the script",
        ),
        (vec!["--llm", "openai:gpt-4o-mini"], "OPENAI_API_KEY"),
        (
            vec!["--llm", &ok, "--data", "/nonexistent.json"],
            "cannot read data file",
        ),
        (
            vec!["--llm", &ok, "--data", bad_data.to_str().unwrap()],
            "must contain a JSON object",
        ),
        (
            vec!["--llm", &ok, "--tools", bad_manifest.to_str().unwrap()],
            "tool `x`",
        ),
        (
            vec!["--llm", &ok, "--signature", "{n :nope}"],
            "unknown type `:nope`",
        ),
        (vec!["--llm", &ok, "--max-turns", "0"], "--max-turns"),
        (vec!["--llm", &ok, "--println-limit", "3"], "--compression"),
        (vec!["--llm", &ok, "--no-such-flag"], "--no-such-flag"),
        (
            vec!["--llm", &ok, "--transcript", "/nonexistent/dir/t.jsonl"],
            "cannot create the transcript",
        ),
    ];
    for (extra, needle) in cases {
        let mut args = vec!["agent", "--mission", "m"];
        args.extend(extra.iter().copied());
        let out = ptc(&args, &[]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(needle),
            "{args:?}: missing {needle:?} in {stderr}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    let out = ptc(&["agent", "--llm", &ok], &[]);
    assert_eq!(out.status.code(), Some(2), "--mission is required");
}

#[test]
fn cli_talks_to_an_openai_compatible_server() {
    let server = TestServer::start(vec![
        reply(
            200,
            openai_ok(&block("(def n (count data/xs))\n(println n)")),
        ),
        reply(200, openai_ok(&block("(return (* 10 n))"))),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let data = write(dir.path(), "data.json", r#"{"xs": [1, 2, 3]}"#);
    let base = format!("{}/v1", server.base);
    let out = ptc(
        &[
            "agent",
            "--mission",
            "Count the xs, times ten",
            "--llm",
            "openai:local-model",
            "--base-url",
            &base,
            "--data",
            data.to_str().unwrap(),
            "--temperature",
            "0",
            // A turn's default limit is one second of wall time; a machine
            // busy with other builds can starve the first turn that long.
            "--program-timeout-ms",
            "20000",
        ],
        &[("OPENAI_API_KEY", "sk-test")],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(text(&out.stdout), "30\n");
    assert!(stderr.contains("  tokens: 12 in, 5 out\n"), "{stderr}");
    assert!(stderr.contains("2 turn(s) in "), "{stderr}");
    assert!(stderr.contains("24 tokens in, 10 out"), "{stderr}");

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for r in &requests {
        assert_eq!(r.method, "POST");
        assert_eq!(r.path, "/v1/chat/completions");
        assert_eq!(r.header("authorization"), Some("Bearer sk-test"));
    }
    let body = requests[1].json();
    assert_eq!(body["model"], "local-model");
    assert_eq!(body["temperature"], 0.0);
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages[0]["role"], "system");
    assert!(messages[0]["content"]
        .as_str()
        .unwrap()
        .starts_with("You complete a mission by writing programs in PTC-Lisp"));
    assert!(messages[1]["content"]
        .as_str()
        .unwrap()
        .starts_with("Count the xs, times ten"));
    assert_eq!(messages.len(), 4, "full history without --compression");
    assert!(messages[3]["content"]
        .as_str()
        .unwrap()
        .starts_with(";; Output:\n3"));
}

#[test]
fn cli_debug_shows_full_turns_beside_what_the_model_saw() {
    let script = format!("script:{}", example("replies.json"));
    let out = ptc(
        &[
            "agent",
            "--mission",
            EXAMPLE_MISSION,
            "--llm",
            &script,
            "--data",
            &example("data.json"),
            "--tools",
            &example("tools.json"),
            "--compression",
            "--quiet",
            "--debug",
        ],
        &[],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // The full history keeps the failed turn's program and error...
    assert!(
        stderr.contains("=== Full history: 4 turn(s) ==="),
        "{stderr}"
    );
    assert!(stderr.contains("--- Turn 2 (error"), "{stderr}");
    // ...beside the compressed messages and the statistics box.
    assert!(
        stderr.contains(";; === user/ (your prelude) ==="),
        "{stderr}"
    );
    assert!(stderr.contains("+- Compression"), "{stderr}");
    assert!(
        stderr.contains("Errors:       1 turn(s) collapsed"),
        "{stderr}"
    );
}
