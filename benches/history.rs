//! The history layer on a 400-message, ~128k-token coding session:
//! the pre-flight check with a warm cache (target: median under 1 ms),
//! a cold count, and one compaction round with the digest (target:
//! under 5 ms).
//!
//! Run with `cargo bench --bench history`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use ptc_lisp::history::{Compactor, Context, Digest, Message, Policy, TokenCounter};

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

criterion_group!(benches, bench);
criterion_main!(benches);
