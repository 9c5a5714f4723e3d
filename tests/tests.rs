//! The integration tests: one binary, one module per area.

#[macro_use]
mod util;

mod agent_parts;
mod cli;
mod corpus;
mod limits;
mod providers;
mod reader_props;
mod special_forms;
