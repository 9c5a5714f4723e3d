//! The Model Context Protocol in both directions, over the official Rust
//! SDK (`rmcp`):
//!
//! - [`client`]: MCP servers as tool sources. Each server named on the
//!   command line (`--mcp 'NAME=COMMAND ARGS...'`) or in a manifest's
//!   `mcp_servers` table is started as a child process over stdio, and
//!   each of its tools becomes a `tool/` function of a session;
//! - [`schema`]: a tool's JSON input schema as a PTC-Lisp signature;
//! - [`convert`]: a `tools/call` result as a PTC-Lisp value;
//! - [`server`]: a PTC-Lisp session served as an MCP server
//!   (`ptc mcp-server`); `request_limit` and `unreadable` answer the
//!   requests its protocol layer would drop or answer without an id.
//!
//! The interpreter is synchronous; the MCP layer owns a small tokio
//! runtime, and a tool call waits for its answer on the calling thread
//! until the answer comes, the server's timeout or the program's deadline
//! passes, or the program is interrupted.
//!
//! This module (with `agent`) may start processes; nothing else in the
//! library does.

mod child;
pub mod client;
pub mod convert;
mod request_limit;
pub mod schema;
pub mod server;
mod unreadable;

use std::path::PathBuf;
use std::time::Duration;

pub use client::{kill_servers, shutdown_all, McpServers};

/// How long a server may take to start and to answer one call when its
/// declaration sets no `timeout_ms`.
pub const DEFAULT_MCP_TIMEOUT: Duration = Duration::from_secs(30);

/// One MCP server to start: from `--mcp` or a manifest's `mcp_servers`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerConfig {
    /// The server's name, used in messages (`MCP server `fs` ...`).
    pub name: String,
    /// The program and its arguments (no shell is involved).
    pub argv: Vec<String>,
    /// Variables added to the inherited environment.
    pub env: Vec<(String, String)>,
    /// The working directory of the server (else ours).
    pub cwd: Option<PathBuf>,
    /// The limit on starting (initialize and `tools/list`) and on each call.
    pub timeout: Duration,
    /// The setting that gives `timeout`, named when it runs out:
    /// `timeout_ms` (a manifest's) unless a caller says otherwise.
    pub timeout_option: &'static str,
    /// Put before each of the server's tool names (`fs_` makes `read_file`
    /// `tool/fs_read_file`); empty for none.
    pub prefix: String,
}

impl McpServerConfig {
    /// Parse the argument of `--mcp`: `NAME=COMMAND ARGS...` or
    /// `NAME:PREFIX=COMMAND ARGS...`. The command line is split into
    /// words as a shell would (quotes and backslashes), but no shell runs.
    ///
    /// ```
    /// use ptc_lisp::mcp::McpServerConfig;
    /// let c = McpServerConfig::parse_cli("fs:fs_=npx -y server 'my dir'").unwrap();
    /// assert_eq!((c.name.as_str(), c.prefix.as_str()), ("fs", "fs_"));
    /// assert_eq!(c.argv, ["npx", "-y", "server", "my dir"]);
    /// ```
    pub fn parse_cli(spec: &str) -> Result<McpServerConfig, String> {
        let usage = "write --mcp 'NAME=COMMAND ARGS...' (or 'NAME:PREFIX=COMMAND ARGS...' to \
                     put PREFIX before the server's tool names)";
        let Some((head, command)) = spec.split_once('=') else {
            return Err(format!("--mcp `{spec}`: no `=`; {usage}"));
        };
        let (name, prefix) = match head.split_once(':') {
            Some((name, prefix)) => (name.trim(), prefix.trim()),
            None => (head.trim(), ""),
        };
        if !is_server_name(name) {
            return Err(format!(
                "--mcp `{spec}`: `{name}` is not a server name (letters, digits, `-` and `_`, \
                 starting with a letter); {usage}"
            ));
        }
        if !prefix.is_empty() && !is_prefix(prefix) {
            return Err(format!(
                "--mcp `{spec}`: the prefix `{prefix}` must be letters, digits, `-` and `_`, \
                 starting with a letter"
            ));
        }
        let argv = shell_words::split(command)
            .map_err(|e| format!("--mcp `{spec}`: cannot split the command line: {e}"))?;
        if argv.first().is_none_or(|p| p.is_empty()) {
            return Err(format!("--mcp `{spec}`: the command is empty; {usage}"));
        }
        Ok(McpServerConfig {
            name: name.to_string(),
            argv,
            env: Vec::new(),
            cwd: None,
            timeout: DEFAULT_MCP_TIMEOUT,
            timeout_option: "timeout_ms",
            prefix: prefix.to_string(),
        })
    }
}

/// Server names: a letter, then letters, digits, `-` and `_`.
pub fn is_server_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn is_prefix(prefix: &str) -> bool {
    is_server_name(prefix)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_specs_parse() {
        let c = McpServerConfig::parse_cli("everything=npx -y \"a b\" c").unwrap();
        assert_eq!(c.name, "everything");
        assert_eq!(c.prefix, "");
        assert_eq!(c.argv, ["npx", "-y", "a b", "c"]);
        let c = McpServerConfig::parse_cli("x=prog --opt=1").unwrap();
        assert_eq!(c.argv, ["prog", "--opt=1"]);
    }

    #[test]
    fn bad_cli_specs_are_explained() {
        for (spec, expected) in [
            ("npx server", "no `=`"),
            ("9x=prog", "is not a server name"),
            ("a:9=prog", "the prefix `9`"),
            ("a=", "the command is empty"),
            ("a=prog 'open", "cannot split"),
        ] {
            let err = McpServerConfig::parse_cli(spec).unwrap_err();
            assert!(err.contains(expected), "{spec}: {err}");
        }
    }
}
