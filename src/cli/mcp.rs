//! MCP on the command line: the `--mcp` option shared by `eval`, `run`,
//! `agent`, `prompt` and the REPL, the tool sources it adds to a
//! manifest's, and `ptc mcp-server`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use ptc_lisp::agent::ToolManifest;
use ptc_lisp::mcp::{McpServerConfig, McpServers};
use ptc_lisp::session::Session;

/// The `--mcp` option and its start-up limit.
#[derive(Args, Clone, Debug)]
pub struct McpArgs {
    /// Start an MCP server and make its tools `tool/` functions:
    /// 'NAME=COMMAND ARGS...' (split like a shell command line, no shell
    /// runs); 'NAME:PREFIX=...' puts PREFIX before its tool names
    /// (repeatable)
    #[arg(long = "mcp", value_name = "NAME=COMMAND")]
    pub servers: Vec<String>,
    /// How long each `--mcp` server may take to start (answer
    /// `initialize` and `tools/list`) and to answer one call, in
    /// milliseconds (a manifest's servers have their own `timeout_ms`)
    #[arg(long = "mcp-timeout-ms", value_name = "MS", default_value_t = DEFAULT_MCP_TIMEOUT_MS,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub mcp_timeout_ms: u64,
}

/// The default of `--mcp-timeout-ms`: a server that never answers its
/// `initialize` is reported after 10 s.
pub const DEFAULT_MCP_TIMEOUT_MS: u64 = 10_000;

impl Default for McpArgs {
    fn default() -> Self {
        McpArgs {
            servers: Vec::new(),
            mcp_timeout_ms: DEFAULT_MCP_TIMEOUT_MS,
        }
    }
}

/// The tools of a session: a manifest's tools and the MCP servers of the
/// manifest and of `--mcp`, started once and shared by every session
/// built from them (the REPL's `:reset` keeps its servers).
#[derive(Default)]
pub struct ToolSources {
    manifest: Option<(PathBuf, ToolManifest)>,
    servers: Option<McpServers>,
}

impl ToolSources {
    /// Read the manifest and start the MCP servers.
    pub fn load(manifest: Option<&Path>, mcp: &McpArgs) -> Result<ToolSources, String> {
        let manifest = match manifest {
            Some(path) => Some((
                path.to_path_buf(),
                ToolManifest::load(path).map_err(|e| e.to_string())?,
            )),
            None => None,
        };
        let mut configs: Vec<McpServerConfig> = manifest
            .as_ref()
            .map(|(_, m)| m.mcp_servers.clone())
            .unwrap_or_default();
        for spec in &mcp.servers {
            let mut config = McpServerConfig::parse_cli(spec)?;
            config.timeout = std::time::Duration::from_millis(mcp.mcp_timeout_ms);
            config.timeout_option = "--mcp-timeout-ms";
            configs.push(config);
        }
        let servers = if configs.is_empty() {
            None
        } else {
            Some(McpServers::start(&configs)?)
        };
        Ok(ToolSources { manifest, servers })
    }

    /// Register the manifest's tools, then the MCP servers' tools.
    pub fn register_into(&self, session: &mut Session) -> Result<(), String> {
        if let Some((path, manifest)) = &self.manifest {
            manifest
                .register_into(session)
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
        if let Some(servers) = &self.servers {
            servers.register_into(session)?;
        }
        Ok(())
    }
}

/// The options of `ptc mcp-server`.
#[derive(Args)]
pub struct McpServerArgs {
    /// A JSON object file whose keys become `data/` values
    #[arg(long, value_name = "FILE.json")]
    pub data: Option<PathBuf>,
    /// A tool manifest (JSON or TOML) whose tools (and `mcp_servers`)
    /// become `tool/` functions
    #[arg(long, value_name = "FILE")]
    pub tools: Option<PathBuf>,
    #[command(flatten)]
    pub mcp: McpArgs,
    /// A file of definitions evaluated in every new session (at start and
    /// after `reset`)
    #[arg(long, value_name = "FILE")]
    pub prelude: Option<PathBuf>,
    /// Wall-clock limit of each program, tool calls included, in
    /// milliseconds (at least 1)
    #[arg(long, value_name = "MS", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout_ms: u64,
    /// Limit on evaluation steps of each program (as for `ptc run`; at
    /// least 1) [default: 10000000]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_steps: Option<u64>,
    /// The most memory a program may allocate, in bytes [default: the
    /// session's limit]
    #[arg(long, value_name = "BYTES")]
    pub max_memory: Option<usize>,
    /// The most heap memory one session's programs may add together, in
    /// bytes (definitions persist from call to call); a program that would
    /// cross it fails with the memory error and keeps no definition
    /// [default: 2147483648 (2 GiB)]
    #[arg(long, value_name = "BYTES")]
    pub max_session_memory: Option<usize>,
    /// The largest `--data` file read, in bytes [default: 67108864 (64 MiB)]
    #[arg(long, value_name = "N", default_value_t = ptc_lisp::input::MAX_DATA_BYTES,
          hide_default_value = true)]
    pub max_data_bytes: u64,
    /// The most bytes of a printed result; longer results are cut with a
    /// marker [default: 65536]
    #[arg(long, value_name = "N", default_value_t = 64 * 1024, hide_default_value = true)]
    pub max_result_bytes: usize,
}

/// `ptc mcp-server`: start the tool sources, then serve until the client
/// closes the connection; each session (at start and after `reset`) has
/// the data, tools, prelude and limits of the options.
pub fn run(args: &McpServerArgs) -> ExitCode {
    let tools = match ToolSources::load(args.tools.as_deref(), &args.mcp) {
        Ok(t) => t,
        Err(e) => return crate::usage_error(&e),
    };
    let mut limits = crate::limits(args.timeout_ms, args.max_steps);
    if let Some(bytes) = args.max_memory {
        limits.max_memory = bytes;
    }
    if let Some(bytes) = args.max_session_memory {
        limits.max_session_memory = bytes;
    }
    let (data, max_data_bytes, prelude) =
        (args.data.clone(), args.max_data_bytes, args.prelude.clone());
    let make_session = move || {
        let mut session =
            crate::session_with(data.as_deref(), max_data_bytes, &tools, limits.clone())?;
        if let Some(path) = &prelude {
            crate::load_prelude(&mut session, path)?;
        }
        Ok(session)
    };
    let options = ptc_lisp::mcp::server::ServeOptions {
        make_session: Box::new(make_session),
        max_result_bytes: args.max_result_bytes,
    };
    match ptc_lisp::mcp::server::serve_stdio(options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            errln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
