//! MCP servers as tool sources: start each server as a child process over
//! stdio, read its tools, call them for programs, and shut the servers
//! down (also on error and on Ctrl-C: see [`kill_servers`]).
//!
//! # Tool names
//!
//! A tool keeps its MCP name, after the server's prefix if it has one
//! (`prefix = "fs_"` makes `read_file` `tool/fs_read_file`); a character
//! a `tool/` name cannot hold (anything but letters, digits, `-`, `_`,
//! `?` and `!`) becomes `_`. Two servers giving the same name, or a server
//! giving the name of a manifest tool, is an error at start-up that names
//! both and says how to resolve it (a prefix).
//!
//! # Calls
//!
//! A call sends the named arguments as the JSON object `arguments` (nil
//! arguments are left out) and waits until the answer comes, the server's
//! `timeout_ms` passes, the program's deadline passes, or the program is
//! interrupted; the result becomes a value as [`super::convert`] says.
//! Every failure is a tool error naming the server: an error result, a
//! protocol error, a server that exited (quoting the end of its standard
//! error), a server that does not answer in time.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{mpsc, Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{Peer, RoleClient, RunningService, ServiceError};
use rmcp::ServiceExt;
use serde_json::Value as Json;
use tokio::runtime::Runtime;

#[cfg(unix)]
use super::child::kill_group;
use super::child::ServerProcess;
use super::{convert, schema, McpServerConfig};
use crate::eval::ToolContext;
use crate::session::{Session, ToolError};
use crate::value::{to_json, Value};

/// The longest pause between two looks at a call in flight (its answer,
/// the deadline, the interrupt flag).
const POLL: Duration = Duration::from_millis(20);
/// How long a server may take to exit after its input is closed before it
/// is killed.
const SHUTDOWN_GRACE: Duration = Duration::from_millis(1000);

/// A tool offered by a started server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpTool {
    /// The `tool/` name (prefix and MCP name).
    pub name: String,
    /// The server's name.
    pub server: String,
    /// The name the server knows it by.
    pub mcp_name: String,
    /// The signature made from its schemas ([`super::schema`]).
    pub signature: String,
    /// The doc made from its description.
    pub description: String,
}

/// Started MCP servers and their tools. Dropping it shuts them down.
pub struct McpServers {
    servers: Vec<Arc<Connection>>,
    tools: Vec<(McpTool, Arc<Connection>)>,
}

impl std::fmt::Debug for McpServers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServers")
            .field("tools", &self.tools().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// One running server.
struct Connection {
    name: String,
    timeout: Duration,
    /// The setting that gives `timeout`, for messages.
    timeout_option: &'static str,
    runtime: Arc<Runtime>,
    peer: Peer<RoleClient>,
    service: Mutex<Option<RunningService<RoleClient, ClientConfig>>>,
    process: Mutex<ServerProcess>,
}

/// Every server started and not yet shut down, for [`shutdown_all`].
static OPEN: Mutex<Vec<Weak<Connection>>> = Mutex::new(Vec::new());
/// The process groups of the servers running now, for [`kill_servers`].
static LIVE: Mutex<Vec<u32>> = Mutex::new(Vec::new());

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl McpServers {
    /// Start every server (side by side), initialize it and read its
    /// tools. A server that cannot start, does not answer within its
    /// timeout, or whose tool names collide with another's is an error
    /// naming it; the servers already started are shut down.
    pub fn start(configs: &[McpServerConfig]) -> Result<McpServers, String> {
        for (i, config) in configs.iter().enumerate() {
            if configs[..i].iter().any(|c| c.name == config.name) {
                return Err(format!(
                    "two MCP servers are named `{}`; give each its own name",
                    config.name
                ));
            }
        }
        let runtime = Arc::new(
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name("ptc-mcp")
                .enable_all()
                .build()
                .map_err(|e| format!("cannot start the MCP runtime: {e}"))?,
        );
        let started: Vec<_> = std::thread::scope(|scope| {
            let starting: Vec<_> = configs
                .iter()
                .map(|config| scope.spawn(|| Connection::start(config, &runtime)))
                .collect();
            starting
                .into_iter()
                .map(|t| {
                    t.join()
                        .unwrap_or_else(|_| Err("starting an MCP server panicked".into()))
                })
                .collect()
        });
        let mut servers = McpServers {
            servers: Vec::new(),
            tools: Vec::new(),
        };
        // Every started server is kept first, so an error below shuts
        // them all down (when `servers` is dropped).
        let mut listed_tools = Vec::new();
        let mut first_error = None;
        for result in started {
            match result {
                Ok((connection, listed)) => {
                    let connection = Arc::new(connection);
                    lock(&OPEN).push(Arc::downgrade(&connection));
                    servers.servers.push(connection.clone());
                    listed_tools.push((connection, listed));
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        if let Some(e) = first_error {
            return Err(e);
        }
        let mut names: BTreeMap<String, String> = BTreeMap::new();
        for ((connection, listed), config) in listed_tools.into_iter().zip(configs) {
            for tool in listed {
                let tool = mcp_tool(config, &tool)?;
                if let Some(other) = names.insert(tool.name.clone(), config.name.clone()) {
                    return Err(collision_between_servers(&tool, &other));
                }
                servers.tools.push((tool, connection.clone()));
            }
        }
        Ok(servers)
    }

    /// The tools of all servers, in server order and then the servers'
    /// own order.
    pub fn tools(&self) -> impl Iterator<Item = &McpTool> {
        self.tools.iter().map(|(t, _)| t)
    }

    /// Register every tool on a session. A name the session already has
    /// (a manifest tool) is an error that says how to resolve it.
    pub fn register_into(&self, session: &mut Session) -> Result<(), String> {
        for (tool, connection) in &self.tools {
            let connection = connection.clone();
            let (name, mcp_name) = (tool.name.clone(), tool.mcp_name.clone());
            // The session checks the arguments against the signature (the
            // schema's types) before this runs.
            let handler = move |args: crate::session::ToolArgs| {
                connection.call(&name, &mcp_name, &args.to_value(), args.context())
            };
            session
                .register_tool(&tool.name, &tool.signature, &tool.description, handler)
                .map_err(|e| match e {
                    ToolError::Duplicate(_) => format!(
                        "the tool `{}` of MCP server `{}` has the name of a tool already \
                         declared (in the tool manifest); give the server a prefix: \
                         --mcp '{}:PREFIX=...' or `prefix = \"...\"` in its `mcp_servers` entry",
                        tool.name, tool.server, tool.server
                    ),
                    other => format!("MCP server `{}`: {other}", tool.server),
                })?;
        }
        Ok(())
    }

    /// Close every server's input, give it a moment to exit, then kill its
    /// process group. Safe to call more than once.
    pub fn shutdown(&self) {
        shut_down(&self.servers);
    }
}

impl Drop for McpServers {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Shut down every MCP server still running (`ptc` calls this before it
/// exits).
pub fn shutdown_all() {
    let open: Vec<Arc<Connection>> = lock(&OPEN).drain(..).filter_map(|w| w.upgrade()).collect();
    shut_down(&open);
}

/// Shut servers down side by side, so each gets its grace period at once.
fn shut_down(servers: &[Arc<Connection>]) {
    std::thread::scope(|scope| {
        for server in servers {
            scope.spawn(|| server.shutdown());
        }
    });
}

/// Kill the process group of every MCP server running now, at once: the
/// process is ending on a signal. Returns how many there were.
pub fn kill_servers() -> usize {
    let live = lock(&LIVE);
    #[cfg(unix)]
    for &id in live.iter() {
        kill_group(id);
    }
    live.len()
}

fn collision_between_servers(tool: &McpTool, other: &str) -> String {
    if other == tool.server {
        format!(
            "MCP server `{}` offers two tools that are both `tool/{}` here",
            tool.server, tool.name
        )
    } else {
        format!(
            "MCP servers `{other}` and `{}` both offer a tool named `{}`; give one of them a \
             prefix: --mcp '{}:PREFIX=...' or `prefix = \"...\"` in its `mcp_servers` entry",
            tool.server, tool.name, tool.server
        )
    }
}

/// The `tool/` name, signature and doc of a listed tool.
fn mcp_tool(config: &McpServerConfig, tool: &rmcp::model::Tool) -> Result<McpTool, String> {
    let name: String = format!("{}{}", config.prefix, tool.name)
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || "-_?!".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if !name.chars().next().is_some_and(char::is_alphabetic) {
        return Err(format!(
            "MCP server `{}` offers a tool named `{}`, which cannot be a `tool/` name (it must \
             start with a letter); give the server a prefix: --mcp '{}:PREFIX=...' or \
             `prefix = \"...\"` in its `mcp_servers` entry",
            config.name, tool.name, config.name
        ));
    }
    let input = Json::Object((*tool.input_schema).clone());
    let output = tool
        .output_schema
        .as_ref()
        .map(|o| Json::Object((**o).clone()));
    Ok(McpTool {
        name,
        server: config.name.clone(),
        mcp_name: tool.name.to_string(),
        signature: schema::signature_text(&input, output.as_ref()),
        description: schema::doc_text(tool.description.as_deref(), tool.title.as_deref(), &input),
    })
}

/// Why a wait ended without an answer.
enum Stopped {
    Deadline,
    Interrupted,
    /// The task ended without an answer (it panicked).
    Lost,
}

/// Run `future` on the runtime and wait for it on this thread until
/// `deadline` or the interrupt flag of `context`. Works on any thread,
/// also one inside another runtime.
fn wait_for<T: Send + 'static>(
    runtime: &Runtime,
    future: impl Future<Output = T> + Send + 'static,
    deadline: Instant,
    context: &ToolContext,
) -> Result<T, Stopped> {
    let (tx, rx) = mpsc::channel();
    let task = runtime.spawn(async move {
        let _ = tx.send(future.await);
    });
    loop {
        if context.interrupted() {
            task.abort();
            return Err(Stopped::Interrupted);
        }
        let now = Instant::now();
        if now >= deadline {
            task.abort();
            return Err(Stopped::Deadline);
        }
        match rx.recv_timeout((deadline - now).min(POLL)) {
            Ok(value) => return Ok(value),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return Err(Stopped::Lost),
        }
    }
}

impl Connection {
    /// Spawn the server, initialize it and list its tools, all within its
    /// timeout.
    fn start(
        config: &McpServerConfig,
        runtime: &Arc<Runtime>,
    ) -> Result<(Connection, Vec<rmcp::model::Tool>), String> {
        let name = &config.name;
        let program = config.argv.first().map(String::as_str).unwrap_or_default();
        let (mut process, output, input) = ServerProcess::spawn(config, runtime)
            .map_err(|e| format!("MCP server `{name}` could not start `{program}`: {e}"))?;
        let pid = process.pid;
        if let Some(pid) = pid {
            lock(&LIVE).push(pid);
            crate::process::started(pid);
        }
        let client = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("ptc-lisp", env!("CARGO_PKG_VERSION")),
        );
        let started = wait_for(
            runtime,
            async move {
                let service = client
                    .serve((output, input))
                    .await
                    .map_err(|e| e.to_string())?;
                let tools = service
                    .peer()
                    .list_all_tools()
                    .await
                    .map_err(|e| format!("`tools/list` failed: {}", service_error(&e)));
                Ok::<_, String>((service, tools))
            },
            Instant::now() + config.timeout,
            &ToolContext::unlimited(),
        );
        let mut unstarted = |problem: String| {
            // Let the readers take what the server wrote before it died.
            std::thread::sleep(Duration::from_millis(50));
            let notes = process.notes();
            if let Some(pid) = pid {
                #[cfg(unix)]
                kill_group(pid);
                lock(&LIVE).retain(|&p| p != pid);
                crate::process::ended(pid);
            }
            let _ = process.child.start_kill();
            format!("MCP server `{name}` failed to start: {problem}{notes}")
        };
        let (service, tools) = match started {
            Ok(Ok((service, Ok(tools)))) => (service, tools),
            Ok(Ok((service, Err(problem)))) => {
                drop(service);
                return Err(unstarted(problem));
            }
            Ok(Err(problem)) => return Err(unstarted(problem)),
            Err(Stopped::Lost) => {
                return Err(unstarted("the MCP client failed while starting it".into()))
            }
            Err(_) => {
                return Err(unstarted(format!(
                    "no answer to `initialize` and `tools/list` within {} ms (raise it with {})",
                    config.timeout.as_millis(),
                    config.timeout_option
                )))
            }
        };
        Ok((
            Connection {
                name: name.clone(),
                timeout: config.timeout,
                timeout_option: config.timeout_option,
                runtime: runtime.clone(),
                peer: service.peer().clone(),
                service: Mutex::new(Some(service)),
                process: Mutex::new(process),
            },
            tools,
        ))
    }

    /// Call a tool for a program: `tool` is its `tool/` name (for
    /// messages), `mcp_name` the server's name for it.
    fn call(
        &self,
        tool: &str,
        mcp_name: &str,
        args: &Value,
        context: &ToolContext,
    ) -> Result<Value, String> {
        let server = &self.name;
        if lock(&self.service).is_none() {
            return Err(format!("MCP server `{server}` has been shut down"));
        }
        let arguments = match to_json(args) {
            Json::Object(mut fields) => {
                fields.retain(|_, v| !v.is_null());
                fields
            }
            _ => serde_json::Map::new(),
        };
        let params = CallToolRequestParams::new(mcp_name.to_string()).with_arguments(arguments);
        let own_deadline = Instant::now() + self.timeout;
        let (deadline, program_limit) = match context.deadline {
            Some(d) if d < own_deadline => (d, true),
            _ => (own_deadline, false),
        };
        let peer = self.peer.clone();
        let answer = wait_for(
            &self.runtime,
            async move { peer.call_tool(params).await },
            deadline,
            context,
        );
        match answer {
            Ok(Ok(result)) => {
                let json = serde_json::to_value(&result).unwrap_or(Json::Null);
                convert::result_value(&json).map_err(|message| {
                    format!("MCP server `{server}` reported an error: {message}")
                })
            }
            Ok(Err(e)) => Err(self.describe_failure(&e)),
            Err(Stopped::Lost) => Err(format!(
                "Tool `{tool}` (MCP server `{server}`): the MCP client failed during the call"
            )),
            Err(Stopped::Interrupted) => Err(format!(
                "Tool `{tool}` (MCP server `{server}`) was interrupted"
            )),
            Err(Stopped::Deadline) if program_limit => Err(format!(
                "Tool `{tool}` (MCP server `{server}`) was still running at the program's time \
                 limit of {} ms",
                context.time_limit.as_millis()
            )),
            Err(Stopped::Deadline) => Err(format!(
                "Tool `{tool}` got no answer from MCP server `{server}` within {} ms \
                 (its {}){}",
                self.timeout.as_millis(),
                self.timeout_option,
                self.notes()
            )),
        }
    }

    fn describe_failure(&self, e: &ServiceError) -> String {
        let server = &self.name;
        match e {
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                // Let the readers take what the server wrote before it died.
                std::thread::sleep(Duration::from_millis(50));
                format!(
                    "MCP server `{server}` is no longer running (it closed the connection){}",
                    self.notes()
                )
            }
            other => format!("MCP server `{server}`: {}", service_error(other)),
        }
    }

    /// What is known about the process: exit status, noise, standard
    /// error.
    fn notes(&self) -> String {
        let _guard = self.runtime.enter();
        lock(&self.process).notes()
    }

    fn shutdown(&self) {
        let Some(service) = lock(&self.service).take() else {
            return;
        };
        // Closing the service closes the server's input; a well-behaved
        // server exits then.
        let deadline = Instant::now() + SHUTDOWN_GRACE;
        let _ = wait_for(
            &self.runtime,
            async move {
                let _ = service.cancel().await;
            },
            deadline,
            &ToolContext::unlimited(),
        );
        let _guard = self.runtime.enter();
        let mut process = lock(&self.process);
        while Instant::now() < deadline {
            if !matches!(process.child.try_wait(), Ok(None)) {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        if let Some(pid) = process.pid {
            // Whatever is left of its process group (npx starts node, say).
            #[cfg(unix)]
            kill_group(pid);
            lock(&LIVE).retain(|&p| p != pid);
            crate::process::ended(pid);
        }
        let _ = process.child.start_kill();
        let _ = process.child.try_wait();
    }
}

/// A service error in words.
fn service_error(e: &ServiceError) -> String {
    match e {
        ServiceError::McpError(data) => {
            format!("protocol error {}: {}", data.code.0, data.message)
        }
        ServiceError::TransportClosed => "the server closed the connection".to_string(),
        other => other.to_string(),
    }
}
