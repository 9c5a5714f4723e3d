//! ptc-lisp: a safe Clojure subset for Programmatic Tool Calling.
#![forbid(unsafe_code)]
// `Value` holds type-erased closure code behind `Arc`; its hash and
// equality never look inside it, so values are sound hash keys.
#![allow(clippy::mutable_key_type)]
pub mod builtins;
pub mod compression;
pub mod error;
pub mod eval;
pub mod reader;
pub mod session;
pub mod tokens;
pub mod value;
