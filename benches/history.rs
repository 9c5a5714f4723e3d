//! The history layer on a 400-message, ~128k-token coding session:
//! the pre-flight check with a warm cache (target: median under 1 ms),
//! a cold count, and one compaction round with the digest (target:
//! under 5 ms).
//!
//! Also redaction throughput on a megabyte of the redaction corpus
//! (`tests/redaction/`, secrets and look-alikes mixed): export redaction
//! (`Redactor::redact`) and the digest's scrub (`scrub_for_digest`).
//!
//! Run with `cargo bench --bench history` (only redaction:
//! `cargo bench --bench history -- redaction`).

use std::hint::black_box;

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ptc_lisp::agent::{Agent, AgentConfig, HistorySettings, ScriptedProvider};
use ptc_lisp::history::redact::{scrub_for_digest, Redactor};
use ptc_lisp::history::{Compactor, Context, Digest, Message, Policy, TokenCounter};
use ptc_lisp::session::Session;

/// 400 messages, about 320 tokens each: user requests, tool calls with
/// their results, and answers.
fn session() -> Vec<Message> {
    let mut h = vec![Message::system(
        "You are a coding agent for the acme/api repository. ".repeat(20),
    )];
    let files = [
        "src/server.rs",
        "src/db/pool.rs",
        "tests/users.rs",
        "Cargo.toml",
    ];
    let mut i = 0;
    while h.len() < 400 {
        let f = files[i % files.len()];
        h.push(Message::user(format!(
            "Step {i}: look at {f} for issue #{i}. {}",
            "The handler returns the wrong status code when the pool is exhausted. ".repeat(20)
        )));
        let id = format!("call_{i}");
        let args = format!("{{\"path\":\"{f}\"}}");
        h.push(Message::tool_call([(
            id.as_str(),
            "read_file",
            args.as_str(),
        )]));
        h.push(Message::tool_result(
            id,
            format!("fn handler_{i}(req: Request) -> Response {{ pool.get()?.query(&req) }}\n")
                .repeat(25),
        ));
        h.push(Message::assistant(format!(
            "Issue #{i}: {}",
            "the pool error must map to 503, not 500, and the retry belongs in the caller. "
                .repeat(24)
        )));
        i += 1;
    }
    h.truncate(400);
    h
}

fn bench(c: &mut Criterion) {
    let h = session();
    let tokens = TokenCounter::new("gpt-4o").count(&h).total();
    eprintln!("history: {} messages, {tokens} tokens", h.len());

    // A window large enough that the check does not trigger.
    let roomy = Policy {
        max_context_tokens: 200_000,
        ..Policy::default()
    };
    let mut warm = Compactor::new("gpt-4o", roomy).unwrap();
    warm.preflight(&h, &Digest).unwrap();
    c.bench_function("preflight_128k_400_messages_warm", |b| {
        b.iter(|| {
            let out = warm.preflight(black_box(&h), &Digest).unwrap();
            warm.take_events();
            out
        })
    });

    c.bench_function("count_128k_400_messages_cold", |b| {
        b.iter(|| TokenCounter::new("gpt-4o").count(black_box(&h)))
    });

    let mut compactor = Compactor::new("gpt-4o", Policy::default()).unwrap();
    c.bench_function("compact_128k_400_messages_digest", |b| {
        b.iter(|| {
            let out = compactor
                .manual_compact(black_box(&h), "bench", &Digest, Context::default())
                .unwrap();
            compactor.take_events();
            out
        })
    });
}

/// An agent run whose whole history grows past 3x a 128k window: 600
/// turns of about 750 tokens each (a program and its printed output,
/// which the full history caps per turn). Panics if any request is over
/// budget. Returns the compaction rounds and the whole history's tokens.
fn agent_session() -> (usize, usize) {
    let turns = 600;
    let mut replies: Vec<String> = (0..turns - 1)
        .map(|i| {
            format!(
                "```clojure\n(def step{i} {i})\n(println (apply str (repeat 1200 \"row{i} \")))\n```"
            )
        })
        .collect();
    replies.push("```clojure\n(return step7)\n```".into());
    let provider = Arc::new(ScriptedProvider::new(replies));
    let mut settings = HistorySettings::new(Policy::default());
    settings.counting_model = Some("gpt-4o".into());
    let config = AgentConfig::new("Print every row, then return step7.")
        .with_max_turns(turns)
        .with_history(settings);
    let mut agent = Agent::new(provider.clone(), Session::new(), config).unwrap();
    let run = agent.run();
    assert!(run.succeeded());
    let mut counter = TokenCounter::new("gpt-4o");
    for request in provider.requests() {
        let messages: Vec<Message> = request.messages.into_iter().map(Message::from).collect();
        let tokens = counter.count(&messages).total();
        assert!(
            tokens <= Policy::default().budget(),
            "{tokens} tokens over budget"
        );
    }
    // The history the model would have been sent without compaction.
    let (whole, _) = agent.next_messages();
    let whole: Vec<Message> = whole.into_iter().map(Message::from).collect();
    (run.compactions.len(), counter.count(&whole).total())
}

fn bench_agent(c: &mut Criterion) {
    let (rounds, whole) = agent_session();
    eprintln!(
        "agent session: a {whole}-token history ({:.1}x a 128k window), {rounds} compaction rounds, never over budget",
        whole as f64 / 128_000.0
    );
    let mut group = c.benchmark_group("agent");
    group.sample_size(10);
    group.bench_function("agent_session_3x_128k_window", |b| b.iter(agent_session));
    group.finish();
}

/// About 1 MiB of the redaction corpus's texts, secrets and look-alikes
/// mixed, one per line.
fn redaction_text() -> String {
    let mut unit = String::new();
    for corpus in [
        include_str!("../tests/redaction/secrets.jsonl"),
        include_str!("../tests/redaction/lookalikes.jsonl"),
    ] {
        for line in corpus.lines() {
            let record: serde_json::Value = serde_json::from_str(line).expect("corpus line");
            unit.push_str(record["text"].as_str().unwrap_or_default());
            unit.push('\n');
        }
    }
    let mut text = String::with_capacity((1 << 20) + unit.len());
    while text.len() < 1 << 20 {
        text.push_str(&unit);
    }
    text
}

fn bench_redaction(c: &mut Criterion) {
    let text = redaction_text();
    let redactor = Redactor::default();
    redactor.prepare();
    let mut group = c.benchmark_group("redaction");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("export_redact_1mib_corpus", |b| {
        b.iter(|| redactor.redact(black_box(&text)).len())
    });
    group.bench_function("digest_scrub_1mib_corpus", |b| {
        b.iter(|| scrub_for_digest(black_box(&text)).len())
    });
    group.finish();
}

criterion_group!(benches, bench, bench_agent, bench_redaction);
criterion_main!(benches);
