//! The integration tests: one binary, one module per area.

#[macro_use]
mod util;

mod agent_loop;
mod agent_parts;
mod agent_window;
mod api;
mod builtins;
mod cli;
mod cli_json;
mod compression;
mod config_cli;
mod conformance;
mod corpus;
mod current_spec;
mod differential;
mod eval_fast_paths;
mod history;
mod history_cli;
mod history_config;
mod history_export;
mod history_props;
mod history_summarizer;
mod host_archive;
mod host_http;
mod host_inputs;
mod host_mcp;
mod host_output;
mod host_signals;
mod limits;
mod limits_bombs;
mod limits_host;
mod limits_hostile;
mod mcp;
mod properties;
mod providers;
mod reader_props;
mod readme;
mod redaction;
mod regressions;
mod repl;
mod session;
mod special_forms;
mod token_counts;
