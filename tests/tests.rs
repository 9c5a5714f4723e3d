//! The integration tests: one binary, one module per area.

#[macro_use]
mod util;

mod api;
mod builtins;
mod cli;
mod compression;
mod corpus;
mod limits;
mod reader_props;
mod session;
mod special_forms;
