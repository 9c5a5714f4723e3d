//! The integration tests: one binary, one module per area.

#[macro_use]
mod util;

mod api;
mod builtins;
mod cli;
mod corpus;
mod limits;
mod reader_props;
mod special_forms;
