//! ptc-lisp: a safe Clojure subset for Programmatic Tool Calling.
#![forbid(unsafe_code)]
pub mod error;
pub mod reader;
pub mod value;
