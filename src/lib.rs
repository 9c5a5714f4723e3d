//! ptc-lisp: a safe Clojure subset for Programmatic Tool Calling.
//!
//! A model writes small programs in PTC-Lisp; this crate reads them
//! ([`reader`]), analyzes and evaluates them under strict limits ([`eval`]),
//! with the core function library in [`builtins`] and the value model in
//! [`value`]. The [`agent`] module holds what a multi-turn LLM run needs
//! around them: providers, reply parsing, tool manifests and transcripts.
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

pub mod agent;
pub mod builtins;
pub mod compression;
pub mod error;
pub mod eval;
pub mod reader;
pub mod repl;
pub mod session;
pub mod tokens;
pub mod value;

// The README's Rust examples are compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
