//! The bodies of `ptc` subcommands that are more than a few lines of
//! wiring, one file each, so `main.rs` stays argument parsing and dispatch.
//! Like `main.rs`, these may print and touch files; the library they call
//! does the work.

pub mod budget;
#[cfg(unix)]
pub mod child_guard;
pub mod compact;
pub mod config;
pub mod json_report;
pub mod mcp;
pub mod out;
pub mod out_file;
pub mod prompt;
pub mod quick_parse;
pub mod stats;
#[cfg(all(
    target_os = "linux",
    target_env = "gnu",
    not(target_feature = "crt-static")
))]
mod unwinder;
