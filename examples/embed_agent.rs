//! Embedding the agent loop: a session with a Rust closure as a tool and
//! JSON input data, a scripted model standing in for a real one, a run
//! with compression, then the result and the debug view of what the model
//! saw.
//!
//! Run with `cargo run --example embed_agent`. To use a real model, build
//! the provider with `provider_from_spec("openai:gpt-4o-mini", ...)`
//! instead of the script.

use std::sync::Arc;

use ptc_lisp::agent::{Agent, AgentConfig, AgentOutcome, ScriptedProvider};
use ptc_lisp::eval::Limits;
use ptc_lisp::session::Session;
use ptc_lisp::value::{pr_str, Value};

fn main() {
    let mut session = Session::new();
    // A tool is a closure over named arguments; its result is a value.
    session
        .register_tool(
            "exchange-rate",
            "(from :string, to :string) -> :float",
            "The exchange rate between two currencies",
            // The signature is checked before the call, and the typed
            // accessors name the argument in their errors.
            |args| match (args.str("from")?, args.str("to")?) {
                ("EUR", "USD") => Ok(Value::Float(1.08)),
                ("GBP", "USD") => Ok(Value::Float(1.27)),
                (from, to) => Err(format!("no rate from {from} to {to}")),
            },
        )
        .expect("a valid signature");
    session
        .set_data_json(&serde_json::json!({
            "invoices": [
                {"id": 1, "amount": 200, "currency": "EUR"},
                {"id": 2, "amount": 50, "currency": "GBP"},
                {"id": 3, "amount": 75, "currency": "USD"}
            ]
        }))
        .expect("an object");

    // The replies a model might give: a mistake (a currency the tool does
    // not know), its correction, and the return.
    let model = Arc::new(ScriptedProvider::new(vec![
        "```clojure\n(def rates (into {} (map (fn [c] [c (tool/exchange-rate c \"USD\")]) \
         (distinct (map :currency data/invoices)))))\n```"
            .to_string(),
        "USD needs no conversion.\n```clojure\n(defn in-usd \"Amount of an invoice in USD\" [inv]\n  \
         (if (= \"USD\" (:currency inv))\n    (:amount inv)\n    \
         (* (:amount inv) (tool/exchange-rate (:currency inv) \"USD\"))))\n\
         (def total (reduce + (map in-usd data/invoices)))\n(println \"total:\" total)\n```"
            .to_string(),
        "```clojure\n(return {:total-usd total :invoices (count data/invoices)})\n```".to_string(),
    ]));

    let config = AgentConfig::new("What do the invoices add up to in USD?")
        .with_max_turns(4)
        .with_compression(true)
        .with_signature("{total-usd :float, invoices :int}")
        .with_limits(Limits::default());
    let mut agent = Agent::new(model, session, config).expect("a valid configuration");
    let run = agent.run();

    match &run.outcome {
        AgentOutcome::Returned(value) => println!("returned: {}", pr_str(value)),
        other => println!("no result: {other:?}"),
    }
    println!(
        "turns: {}, model calls: {}\n",
        run.turns.len(),
        run.calls.len()
    );
    println!("{}", run.debug_view());
}
