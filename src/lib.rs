//! ptc-lisp: a safe Clojure subset for Programmatic Tool Calling.
//!
//! A model writes small programs in PTC-Lisp; this crate reads them
//! ([`reader`]), analyzes and evaluates them under strict limits ([`eval`]),
//! with the core function library in [`builtins`] and the value model in
//! [`value`]. [`session`] keeps tools, data and definitions across turns,
//! [`compression`] renders the history as the next prompt, and the
//! [`agent`] module runs the multi-turn loop with an LLM provider.
//!
//! # Evaluate an expression
//!
//! ```
//! use ptc_lisp::eval::eval_str;
//! use ptc_lisp::value::pr_str;
//!
//! let v = eval_str("(->> (range 10) (filter odd?) (map #(* % %)) (reduce +))").unwrap();
//! assert_eq!(pr_str(&v), "165");
//! ```
//!
//! # Pass data and read what the program printed
//!
//! ```
//! use ptc_lisp::eval::{self, DataHost, Globals, Program, RunOptions};
//! use ptc_lisp::value::pr_str;
//!
//! let data = serde_json::json!({"users": [{"name": "Ada", "active": true},
//!                                         {"name": "Bo", "active": false}]});
//! let host = DataHost::from_json_object(&data).unwrap();
//! let program = Program::compile(r#"
//!     (def active (filter :active data/users))
//!     (println "active users:" (count active))
//!     (mapv :name active)"#).unwrap();
//! let out = eval::run(&program, &host, &Globals::default(), RunOptions::default());
//! assert_eq!(out.prints, vec!["active users: 1".to_string()]);
//! assert_eq!(pr_str(&eval::finish(out.result).unwrap()), "[\"Ada\"]");
//! // Definitions persist in the returned user namespace.
//! assert!(out.globals.get("active").is_some());
//! ```
//!
//! # Register a tool and compress the history
//!
//! A [`session::Session`] runs each program as a turn; tools are Rust
//! closures with a signature; [`compression::SingleUserCoalesced`]
//! renders what the model sees next.
//!
//! ```
//! use ptc_lisp::compression::{Compression, RenderContext, SingleUserCoalesced};
//! use ptc_lisp::session::Session;
//! use ptc_lisp::value::Value;
//!
//! let mut session = Session::new();
//! session
//!     .register_tool("price", "(sku :string) -> :int", "Price of a product in cents", |args| {
//!         Ok(Value::Int(if args.str("sku")? == "A-1" { 1200 } else { 0 }))
//!     })
//!     .unwrap();
//! let turn = session.eval(r#"(def a1 (tool/price "A-1")) (println "A-1 costs" a1)"#);
//! assert!(turn.success);
//!
//! let ctx = RenderContext::for_session(&session, "Price product A-1", 5);
//! let (messages, stats) =
//!     SingleUserCoalesced.to_messages(session.turns(), session.memory(), &ctx);
//! let prompt = &messages.last().unwrap().content;
//! assert!(prompt.contains(";; === user/ (your prelude) ==="));
//! assert!(prompt.contains(";   price(\"A-1\")"));
//! assert!(prompt.contains("A-1 costs 1200"));
//! assert_eq!(stats.tool_calls_total, 1);
//! ```
//!
//! # Run an agent
//!
//! A model (here a scripted one) writes programs turn by turn until it
//! calls `(return value)`; definitions carry over between turns.
//!
//! ```
//! use std::sync::Arc;
//! use ptc_lisp::agent::{Agent, AgentConfig, ScriptedProvider};
//! use ptc_lisp::session::Session;
//! use ptc_lisp::value::pr_str;
//!
//! let mut session = Session::new();
//! session.set_data_json(&serde_json::json!({"scores": [7, 9, 4]})).unwrap();
//! let model = Arc::new(ScriptedProvider::new(vec![
//!     "```clojure\n(def best (apply max data/scores))\n(println best)\n```".into(),
//!     "```clojure\n(return {:best best})\n```".into(),
//! ]));
//! let config = AgentConfig::new("Find the best score").with_signature("{best :int}");
//! let run = Agent::new(model, session, config).unwrap().run();
//! assert_eq!(pr_str(run.value().unwrap()), "{:best 9}");
//! assert_eq!(run.turns.len(), 2);
//! ```
//!
//! # Errors a model can act on
//!
//! ```
//! let err = ptc_lisp::eval::eval_str("(+ 1 \"2\")").unwrap_err();
//! assert_eq!(err.code(), "type-error");
//! assert_eq!(err.message(), "`+` expected a number, got string \"2\"");
//! ```
#![forbid(unsafe_code)]
// `Value` holds type-erased closure code behind `Arc`; its hash and
// equality never look inside it, so values are sound hash keys.
#![allow(clippy::mutable_key_type)]

/// `eprintln!` for the library's messages: control characters escaped,
/// and a failed write never panics ([`terminal::warn`]).
macro_rules! warnln {
    ($($arg:tt)*) => {
        $crate::terminal::warn(&format!($($arg)*))
    };
}

pub mod agent;
pub mod builtins;
pub mod compression;
pub mod error;
pub mod eval;
pub mod heap;
pub mod history;
pub mod input;
pub mod mcp;
mod meter;
pub mod process;
pub mod reader;
pub mod repl;
pub mod session;
mod stack;
pub mod terminal;
pub mod tokens;
pub mod value;

// The README's Rust examples are compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
