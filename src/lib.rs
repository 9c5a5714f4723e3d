//! ptc-lisp: a safe Clojure subset for Programmatic Tool Calling.
#![forbid(unsafe_code)]
pub mod builtins;
pub mod error;
pub mod eval;
pub mod reader;
pub mod value;
