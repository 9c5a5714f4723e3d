//! The tool manifest of the command line (`--tools FILE`) and the tools it
//! declares.
//!
//! A manifest is a JSON or TOML file holding one table, `tools`, that maps
//! each tool name to its declaration:
//!
//! ```json
//! {"tools": {
//!   "search":    {"signature": "(query :string) -> :string",
//!                 "description": "Full-text search over the wiki",
//!                 "command": ["my-search", "--json"], "timeout_ms": 5000},
//!   "inventory": {"signature": "-> :map", "response": {"laptop": 3}}}}
//! ```
//!
//! Each tool has a `signature` (kept as text here; the agent loop parses
//! it), an optional `description`, and exactly one implementation: a
//! `command` (an argv array, run without a shell) or a fixed `response`
//! (any JSON). `timeout_ms` (default 30 s) applies to commands only.
//! Errors name the file, the tool and the field.
//!
//! A command tool gets its arguments as one line of JSON on standard input
//! and must print one JSON value on standard output. A non-zero exit is an
//! error that quotes standard error; a tool still running at its timeout
//! is killed (on Unix with every process it started, as it runs in a
//! process group of its own). A program named by a path with a `/` in it
//! (`./search.sh`, `bin/search`) that is relative resolves against the
//! manifest's directory when the manifest is loaded from a file, and
//! [`ToolManifest::load`] checks that it exists and is executable; a bare
//! name (`python3`) is looked up on `PATH` when the tool runs.
//!
//! A manifest may also (or only) hold `mcp_servers`, a table from server
//! names to MCP servers to start (`command`, `args`, `env`, `cwd`,
//! `timeout_ms`, `prefix`); their tools are registered by
//! [`crate::mcp::McpServers`].

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Map, Value as Json};

use crate::eval::ToolContext;

use super::http::fmt_duration;
use super::truncate;

/// How long a command tool may run when its manifest entry sets no
/// `timeout_ms`.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(30);
/// The most standard output a command tool may print.
pub const MAX_TOOL_OUTPUT: usize = 16 * 1024 * 1024;
/// How much of a tool's standard error an error message quotes.
const STDERR_QUOTE_CHARS: usize = 1000;

const TOOL_FIELDS: [&str; 5] = [
    "signature",
    "description",
    "command",
    "response",
    "timeout_ms",
];

/// Why a manifest could not be loaded. The message names the file, and
/// the tool and field where there is one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ManifestError {
    #[error("Could not read the tool manifest `{file}`: {message}")]
    Read { file: String, message: String },
    /// Not valid JSON or TOML, or not shaped like a manifest.
    #[error("{file}: {message}")]
    Invalid { file: String, message: String },
    /// One tool's declaration is wrong.
    #[error("{file}: tool `{tool}`: {message}")]
    Tool {
        file: String,
        tool: String,
        message: String,
    },
}

/// The syntax of a manifest file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ManifestFormat {
    Json,
    Toml,
}

impl ManifestFormat {
    /// `.toml` files are TOML and `.json` files JSON; any other file is
    /// JSON when its text starts with `{`, else TOML.
    pub fn detect(path: &Path, text: &str) -> Self {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("toml") => ManifestFormat::Toml,
            Some(e) if e.eq_ignore_ascii_case("json") => ManifestFormat::Json,
            _ if text.trim_start().starts_with('{') => ManifestFormat::Json,
            _ => ManifestFormat::Toml,
        }
    }
}

/// The tools of a manifest, in file order, and the MCP servers it
/// declares (in `mcp_servers`; see [`crate::mcp`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolManifest {
    pub tools: Vec<ToolSpec>,
    pub mcp_servers: Vec<crate::mcp::McpServerConfig>,
}

/// One declared tool.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    /// The signature as written, e.g. `(query :string) -> :string`.
    pub signature: String,
    /// Empty when the manifest gives none.
    pub description: String,
    pub implementation: ToolImpl,
}

/// How a tool produces its result.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolImpl {
    /// Run a program.
    Command(CommandTool),
    /// Always return this value.
    Response(Json),
}

impl ToolSpec {
    /// Call the tool with its arguments as JSON.
    pub fn call(&self, args: Json) -> Result<Json, String> {
        self.call_in(args, &ToolContext::unlimited())
    }

    /// Call the tool for a program: a command is stopped at the program's
    /// deadline or interrupt (see [`CommandTool::call_in`]).
    pub fn call_in(&self, args: Json, context: &ToolContext) -> Result<Json, String> {
        match &self.implementation {
            ToolImpl::Command(c) => c.call_in(args, context),
            ToolImpl::Response(v) => Ok(v.clone()),
        }
    }
}

impl ToolManifest {
    /// Read and check a manifest file (at most
    /// [`MAX_MANIFEST_BYTES`](crate::input::MAX_MANIFEST_BYTES)).
    pub fn load(path: &Path) -> Result<Self, ManifestError> {
        let file = path.display().to_string();
        let text = crate::input::read_file_text(
            path,
            crate::input::MAX_MANIFEST_BYTES,
            "the file",
            "for tool manifests",
        )
        .map_err(|e| ManifestError::Read {
            file: file.clone(),
            message: e.to_string(),
        })?;
        let mut manifest = Self::parse(&text, &file, ManifestFormat::detect(path, &text))?;
        let dir = std::path::absolute(path)
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf))
            .unwrap_or_default();
        manifest.resolve_commands(&dir, &file)?;
        Ok(manifest)
    }

    /// Make each command tool's relative program path (one with a `/`)
    /// relative to `dir` (the manifest's directory), and check that every
    /// program given by a path exists and is executable, so that a
    /// mistake shows at start-up, not at the first call.
    fn resolve_commands(&mut self, dir: &Path, file: &str) -> Result<(), ManifestError> {
        for tool in &mut self.tools {
            let ToolImpl::Command(command) = &mut tool.implementation else {
                continue;
            };
            let Some(program) = command.argv.first_mut() else {
                continue;
            };
            if !program.contains('/') {
                continue;
            }
            let written = program.clone();
            let path = Path::new(&written);
            let resolved = if path.is_absolute() {
                path.to_path_buf()
            } else {
                dir.join(path)
            };
            let problem = match std::fs::metadata(&resolved) {
                Err(_) => Some("does not exist"),
                Ok(meta) if !meta.is_file() => Some("is not a file"),
                Ok(meta) if !is_executable(&meta) => {
                    Some("is not executable (on Unix: chmod +x it)")
                }
                Ok(_) => None,
            };
            if let Some(problem) = problem {
                let whence = if path.is_absolute() {
                    String::new()
                } else {
                    " (a relative `command` is relative to the manifest's directory)".to_string()
                };
                return Err(ManifestError::Tool {
                    file: file.to_string(),
                    tool: tool.name.clone(),
                    message: format!(
                        "`command` `{written}`: {} {problem}{whence}",
                        resolved.display()
                    ),
                });
            }
            *program = resolved.display().to_string();
        }
        Ok(())
    }

    /// Parse and check manifest text; `file` names it in errors.
    pub fn parse(text: &str, file: &str, format: ManifestFormat) -> Result<Self, ManifestError> {
        let invalid = |message: String| ManifestError::Invalid {
            file: file.to_string(),
            message,
        };
        let json: Json = match format {
            ManifestFormat::Json => {
                serde_json::from_str(text).map_err(|e| invalid(format!("bad JSON: {e}")))?
            }
            ManifestFormat::Toml => {
                let table: toml::Table = toml::from_str(text)
                    .map_err(|e| invalid(format!("bad TOML: {}", e.to_string().trim_end())))?;
                serde_json::to_value(table).map_err(|e| invalid(format!("bad TOML: {e}")))?
            }
        };
        Self::from_json(&json, file)
    }

    /// Check a manifest that is already JSON; `file` names it in errors.
    pub fn from_json(json: &Json, file: &str) -> Result<Self, ManifestError> {
        let invalid = |message: &str| ManifestError::Invalid {
            file: file.to_string(),
            message: message.to_string(),
        };
        let shape = "a manifest is an object holding `tools`, a table from tool names to \
                     declarations, and/or `mcp_servers`, a table from server names to \
                     MCP server declarations";
        let top = json.as_object().ok_or_else(|| invalid(shape))?;
        if let Some(key) = top.keys().find(|k| *k != "tools" && *k != "mcp_servers") {
            return Err(invalid(&format!(
                "unknown top-level field `{key}`; {shape}"
            )));
        }
        let empty = Map::new();
        let tools = match top.get("tools") {
            None if top.contains_key("mcp_servers") => &empty,
            None => return Err(invalid(&format!("`tools` is missing; {shape}"))),
            Some(tools) => tools
                .as_object()
                .ok_or_else(|| invalid(&format!("`tools` must be a table; {shape}")))?,
        };
        let mcp_servers = match top.get("mcp_servers") {
            None => Vec::new(),
            Some(servers) => servers
                .as_object()
                .ok_or_else(|| invalid(&format!("`mcp_servers` must be a table; {shape}")))?
                .iter()
                .map(|(name, decl)| {
                    mcp_server(name, decl).map_err(|message| ManifestError::Invalid {
                        file: file.to_string(),
                        message: format!("MCP server `{name}`: {message}"),
                    })
                })
                .collect::<Result<_, _>>()?,
        };
        let tools = tools
            .iter()
            .map(|(name, decl)| {
                tool_spec(name, decl).map_err(|message| ManifestError::Tool {
                    file: file.to_string(),
                    tool: name.clone(),
                    message,
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(ToolManifest { tools, mcp_servers })
    }

    pub fn get(&self, name: &str) -> Option<&ToolSpec> {
        self.tools.iter().find(|t| t.name == name)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|t| t.name.as_str())
    }
}

/// Whether a file may be run: on Unix, any execute bit.
fn is_executable(meta: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        true
    }
}

/// True for names usable as `tool/NAME` in a program.
fn is_tool_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || "-_?!*".contains(c))
}

fn tool_spec(name: &str, decl: &Json) -> Result<ToolSpec, String> {
    if !is_tool_name(name) {
        return Err(
            "the name must be a symbol: letters, digits, `-`, `_`, `?`, `!` and `*`, \
                    starting with a letter or `_`"
                .to_string(),
        );
    }
    let fields: &Map<String, Json> = decl
        .as_object()
        .ok_or("the declaration must be a table with `signature` and `command` or `response`")?;
    if let Some(key) = fields.keys().find(|k| !TOOL_FIELDS.contains(&k.as_str())) {
        let hint = match crate::error::suggest(key, TOOL_FIELDS).first() {
            Some(near) => format!("did you mean `{near}`?"),
            None => format!(
                "the fields are {}",
                TOOL_FIELDS.map(|f| format!("`{f}`")).join(", ")
            ),
        };
        return Err(format!("unknown field `{key}`; {hint}"));
    }
    let signature = match fields.get("signature") {
        None => {
            return Err(
                "`signature` is missing; write e.g. \"(query :string) -> :string\"".to_string(),
            )
        }
        Some(Json::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
        Some(_) => return Err("`signature` must be a non-empty string".to_string()),
    };
    let description = match fields.get("description") {
        None => String::new(),
        Some(Json::String(s)) => s.clone(),
        Some(_) => return Err("`description` must be a string".to_string()),
    };
    let timeout = match fields.get("timeout_ms") {
        None => None,
        Some(v) => match v.as_u64() {
            Some(ms) if (1..=86_400_000).contains(&ms) => Some(Duration::from_millis(ms)),
            _ => {
                return Err(
                    "`timeout_ms` must be a whole number of milliseconds from 1 to 86400000"
                        .to_string(),
                )
            }
        },
    };
    let implementation = match (fields.get("command"), fields.get("response")) {
        (Some(_), Some(_)) => {
            return Err("needs either `command` or `response`, not both".to_string())
        }
        (None, None) => return Err("needs either `command` or `response`".to_string()),
        (None, Some(response)) => {
            if timeout.is_some() {
                return Err("`timeout_ms` applies only to `command` tools".to_string());
            }
            ToolImpl::Response(response.clone())
        }
        (Some(command), None) => {
            let argv: Option<Vec<String>> = command.as_array().and_then(|items| {
                items
                    .iter()
                    .map(|i| i.as_str().map(str::to_string))
                    .collect()
            });
            match argv {
                Some(argv) if argv.first().is_some_and(|p| !p.is_empty()) => {
                    ToolImpl::Command(CommandTool {
                        name: name.to_string(),
                        argv,
                        timeout: timeout.unwrap_or(DEFAULT_TOOL_TIMEOUT),
                    })
                }
                _ => {
                    return Err("`command` must be a non-empty array of strings".to_string());
                }
            }
        }
    };
    Ok(ToolSpec {
        name: name.to_string(),
        signature,
        description,
        implementation,
    })
}

const MCP_SERVER_FIELDS: [&str; 7] = [
    "command",
    "args",
    "env",
    "cwd",
    "timeout_ms",
    "prefix",
    "url",
];

/// One entry of `mcp_servers`: `command` (the program), `args`, `env` (a
/// table of strings added to the environment), `cwd`, `timeout_ms`
/// (start-up and each call; default 30 s) and `prefix` (put before the
/// server's tool names). `url` (the streamable HTTP transport) is not
/// supported yet and says so.
fn mcp_server(name: &str, decl: &Json) -> Result<crate::mcp::McpServerConfig, String> {
    if !crate::mcp::is_server_name(name) {
        return Err(
            "the name must be letters, digits, `-` and `_`, starting with a letter".to_string(),
        );
    }
    let fields: &Map<String, Json> = decl
        .as_object()
        .ok_or("the declaration must be a table with `command` and optional `args`")?;
    if let Some(key) = fields
        .keys()
        .find(|k| !MCP_SERVER_FIELDS.contains(&k.as_str()))
    {
        let hint = match crate::error::suggest(key, MCP_SERVER_FIELDS).first() {
            Some(near) => format!("did you mean `{near}`?"),
            None => format!(
                "the fields are {}",
                MCP_SERVER_FIELDS.map(|f| format!("`{f}`")).join(", ")
            ),
        };
        return Err(format!("unknown field `{key}`; {hint}"));
    }
    if fields.contains_key("url") {
        return Err(
            "`url` (the streamable HTTP transport) is not supported yet; start the server \
             with `command` and `args` (stdio)"
                .to_string(),
        );
    }
    let program = match fields.get("command") {
        Some(Json::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(_) => return Err("`command` must be a non-empty string (the program)".to_string()),
        None => return Err("`command` is missing (the program to start)".to_string()),
    };
    let strings = |field: &str| -> Result<Vec<String>, String> {
        match fields.get(field) {
            None => Ok(Vec::new()),
            Some(Json::Array(items)) => items
                .iter()
                .map(|i| i.as_str().map(str::to_string))
                .collect::<Option<_>>()
                .ok_or_else(|| format!("`{field}` must be an array of strings")),
            Some(_) => Err(format!("`{field}` must be an array of strings")),
        }
    };
    let mut argv = vec![program];
    argv.extend(strings("args")?);
    let env = match fields.get("env") {
        None => Vec::new(),
        Some(Json::Object(vars)) => vars
            .iter()
            .map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
            .collect::<Option<_>>()
            .ok_or("`env` must be a table of strings")?,
        Some(_) => return Err("`env` must be a table of strings".to_string()),
    };
    let cwd = match fields.get("cwd") {
        None => None,
        Some(Json::String(s)) if !s.is_empty() => Some(std::path::PathBuf::from(s)),
        Some(_) => return Err("`cwd` must be a non-empty string".to_string()),
    };
    let timeout = match fields.get("timeout_ms") {
        None => crate::mcp::DEFAULT_MCP_TIMEOUT,
        Some(v) => match v.as_u64() {
            Some(ms) if (1..=86_400_000).contains(&ms) => Duration::from_millis(ms),
            _ => {
                return Err(
                    "`timeout_ms` must be a whole number of milliseconds from 1 to 86400000"
                        .to_string(),
                )
            }
        },
    };
    let prefix = match fields.get("prefix") {
        None => String::new(),
        Some(Json::String(s)) if crate::mcp::is_server_name(s) => s.clone(),
        Some(_) => {
            return Err(
                "`prefix` must be letters, digits, `-` and `_`, starting with a letter".to_string(),
            )
        }
    };
    Ok(crate::mcp::McpServerConfig {
        name: name.to_string(),
        argv,
        env,
        cwd,
        timeout,
        timeout_option: "timeout_ms",
        prefix,
    })
}

/// A tool implemented by a program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandTool {
    /// The tool name, for messages.
    pub name: String,
    /// The program and its arguments (no shell is involved).
    pub argv: Vec<String>,
    pub timeout: Duration,
}

/// What one output reader thread collected.
struct Captured {
    stdout: bool,
    bytes: Vec<u8>,
    overflow: bool,
}

impl CommandTool {
    pub fn new(name: impl Into<String>, argv: Vec<String>, timeout: Duration) -> Self {
        CommandTool {
            name: name.into(),
            argv,
            timeout,
        }
    }

    /// Run the program: `args` goes to standard input as one line of JSON,
    /// standard output is parsed as JSON. Never blocks past the timeout.
    pub fn call(&self, args: Json) -> Result<Json, String> {
        self.call_in(args, &ToolContext::unlimited())
    }

    /// [`CommandTool::call`] for a program: the tool may run until its own
    /// timeout or the program's deadline, whichever comes first, and stops
    /// when the program's interrupt flag is set; in each case its whole
    /// process group is killed and reaped.
    pub fn call_in(&self, args: Json, context: &ToolContext) -> Result<Json, String> {
        let name = &self.name;
        let Some((program, rest)) = self.argv.split_first() else {
            return Err(format!("Tool `{name}` has an empty command"));
        };
        let mut command = Command::new(program);
        command
            .args(rest)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            command.process_group(0);
        }
        let started = Instant::now();
        let own_deadline = started + self.timeout;
        // The program's deadline wins when it comes first.
        let (deadline, program_limit) = match context.deadline {
            Some(d) if d < own_deadline => (d, true),
            _ => (own_deadline, false),
        };
        crate::process::starting();
        let child = command
            .spawn()
            .map_err(|e| format!("Tool `{name}` could not start `{program}`: {e}"))?;
        let mut child = LiveChild::register(child);
        let child = &mut child.0;

        // Input and output go through threads, so a tool that does not read
        // its input, or fills one pipe while we wait on another, cannot
        // block us.
        let mut input = serde_json::to_vec(&args).unwrap_or_else(|_| b"null".to_vec());
        input.push(b'\n');
        if let Some(mut stdin) = child.stdin.take() {
            std::thread::spawn(move || {
                // A tool may exit without reading its input; that is its
                // business, so a broken pipe is not an error here.
                let _ = stdin.write_all(&input);
            });
        }
        let (tx, rx) = mpsc::channel();
        for (stdout, pipe) in [
            (
                true,
                child
                    .stdout
                    .take()
                    .map(|p| Box::new(p) as Box<dyn Read + Send>),
            ),
            (
                false,
                child
                    .stderr
                    .take()
                    .map(|p| Box::new(p) as Box<dyn Read + Send>),
            ),
        ] {
            let Some(pipe) = pipe else { continue };
            let tx = tx.clone();
            std::thread::spawn(move || {
                let (bytes, overflow) = read_capped(pipe, MAX_TOOL_OUTPUT);
                let _ = tx.send(Captured {
                    stdout,
                    bytes,
                    overflow,
                });
            });
        }
        drop(tx);

        let stopped = || {
            if context.interrupted() {
                format!("Tool `{name}` was interrupted and killed")
            } else if program_limit {
                format!(
                    "Tool `{name}` was still running at the program's time limit of {} ms \
                     and was killed",
                    context.time_limit.as_millis()
                )
            } else {
                format!(
                    "Tool `{name}` timed out after {} and was killed",
                    fmt_duration(self.timeout)
                )
            }
        };
        let Some(status) = wait_until(child, deadline, context)
            .map_err(|e| format!("Tool `{name}` could not be waited for: {e}"))?
        else {
            kill(child);
            return Err(stopped());
        };
        let (mut stdout, mut stderr) = (None, None);
        while stdout.is_none() || stderr.is_none() {
            let now = Instant::now();
            if now >= deadline || context.interrupted() {
                // The tool exited but something it started still holds
                // its output open.
                kill(child);
                return Err(stopped());
            }
            match rx.recv_timeout((deadline - now).min(POLL)) {
                Ok(c) if c.stdout => stdout = Some(c),
                Ok(c) => stderr = Some(c),
                // Both readers are done (no more senders).
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
        }
        let stdout = stdout.map(|c| (c.bytes, c.overflow)).unwrap_or_default();
        let stderr = stderr.map(|c| c.bytes).unwrap_or_default();
        let stderr = String::from_utf8_lossy(&stderr);
        let stderr = stderr.trim();

        if !status.success() {
            let mut message = format!("Tool `{name}` {}", describe_exit(status));
            if !stderr.is_empty() {
                message.push_str(": ");
                message.push_str(&truncate(stderr, STDERR_QUOTE_CHARS));
            }
            return Err(message);
        }
        if stdout.1 {
            return Err(format!(
                "Tool `{name}` printed more than {} MiB; a tool must print one JSON value",
                MAX_TOOL_OUTPUT / (1024 * 1024)
            ));
        }
        let text = String::from_utf8_lossy(&stdout.0);
        if text.trim().is_empty() {
            return Err(format!(
                "Tool `{name}` printed nothing; a tool must print one JSON value"
            ));
        }
        serde_json::from_str(&text).map_err(|e| {
            format!(
                "Tool `{name}` printed output that is not JSON ({e}): {}",
                truncate(text.trim(), 200)
            )
        })
    }
}

/// Read everything, keeping at most `cap` bytes (the rest is drained so
/// the writer is never blocked). Returns the bytes and whether any were
/// dropped.
fn read_capped(mut pipe: impl Read, cap: usize) -> (Vec<u8>, bool) {
    let mut kept = Vec::new();
    let mut overflow = false;
    let mut buf = [0u8; 8192];
    loop {
        match pipe.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let room = cap.saturating_sub(kept.len());
                if n > room {
                    overflow = true;
                }
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    (kept, overflow)
}

/// The longest pause between two looks at a running tool (its exit, the
/// deadline, the interrupt flag).
const POLL: Duration = Duration::from_millis(20);

/// Wait for the child until `deadline` or the interrupt flag of
/// `context`; `None` means it is still running.
fn wait_until(
    child: &mut Child,
    deadline: Instant,
    context: &ToolContext,
) -> std::io::Result<Option<ExitStatus>> {
    let mut pause = Duration::from_millis(1);
    loop {
        if let Some(status) = try_reap(child)? {
            return Ok(Some(status));
        }
        let now = Instant::now();
        if now >= deadline || context.interrupted() {
            return Ok(None);
        }
        std::thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(POLL);
    }
}

/// The process ids (on Unix also the process group ids) of the command
/// tools running now, so a signal handler can kill them before `ptc`
/// exits ([`kill_running_tools`]).
static LIVE: Mutex<Vec<u32>> = Mutex::new(Vec::new());

fn live() -> std::sync::MutexGuard<'static, Vec<u32>> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// A running tool, in [`LIVE`] until it has been reaped.
struct LiveChild(Child);

/// Set by [`kill_running_tools`]: the process is ending, and a tool
/// started from now on is killed at once.
static ENDING: AtomicBool = AtomicBool::new(false);

impl LiveChild {
    fn register(mut child: Child) -> Self {
        let mut ids = live();
        if ENDING.load(Ordering::SeqCst) {
            drop(ids);
            kill(&mut child);
        } else {
            ids.push(child.id());
            crate::process::started(child.id());
        }
        LiveChild(child)
    }
}

impl Drop for LiveChild {
    /// Leaving early (a panic, an error) must not leave the tool running.
    fn drop(&mut self) {
        let id = self.0.id();
        let reaped = !live().contains(&id);
        if !reaped {
            kill(&mut self.0);
        }
    }
}

/// `try_wait`, removing the child from [`LIVE`] in the same critical
/// section as reaping it: once reaped its id may be reused, and
/// [`kill_running_tools`] must never signal a stranger.
fn try_reap(child: &mut Child) -> std::io::Result<Option<ExitStatus>> {
    let mut live = live();
    let status = child.try_wait()?;
    if status.is_some() && live.contains(&child.id()) {
        live.retain(|&id| id != child.id());
        crate::process::ended(child.id());
    }
    Ok(status)
}

/// Kill the process group of every command tool running now (with every
/// process it started), every tool started later, and every MCP server
/// ([`crate::mcp::kill_servers`]): the process is ending. `ptc` calls this when it gets SIGINT or SIGTERM, before it
/// exits. Returns how many tools were running.
pub fn kill_running_tools() -> usize {
    // MCP servers are processes of ours too.
    crate::mcp::kill_servers();
    let live = live();
    ENDING.store(true, Ordering::SeqCst);
    #[cfg(unix)]
    for &id in live.iter() {
        if let Some(group) = rustix::process::Pid::from_raw(id as i32) {
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        }
    }
    live.len()
}

/// Kill the child and, on Unix, every process in its process group, then
/// reap it.
fn kill(child: &mut Child) {
    let mut live = live();
    #[cfg(unix)]
    {
        let group = rustix::process::Pid::from_child(child);
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    }
    let _ = child.kill();
    let _ = child.wait();
    if live.contains(&child.id()) {
        live.retain(|&id| id != child.id());
        crate::process::ended(child.id());
    }
}

fn describe_exit(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("failed with exit code {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("was killed by signal {signal}");
        }
    }
    "failed".to_string()
}

impl ToolManifest {
    /// Register every tool of the manifest on a session. A tool receives
    /// its named arguments as one JSON object (`(tool/search "x")` with
    /// signature `(query :string)` sends `{"query": "x"}`), and its JSON
    /// result becomes a PTC-Lisp value (objects become keyword maps).
    pub fn register_into(&self, session: &mut crate::session::Session) -> Result<(), String> {
        for spec in &self.tools {
            let tool = spec.clone();
            let handler = move |args: crate::session::ToolArgs| {
                let json = crate::value::to_json(&args.to_value());
                tool.call_in(json, args.context())
                    .map(|result| crate::value::from_json(&result))
            };
            session
                .register_tool(&spec.name, &spec.signature, &spec.description, handler)
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_are_symbols() {
        assert!(is_tool_name("search"));
        assert!(is_tool_name("get-user_by-id?"));
        assert!(!is_tool_name("9lives"));
        assert!(!is_tool_name("a b"));
        assert!(!is_tool_name("ns/x"));
        assert!(!is_tool_name(""));
    }

    #[test]
    fn formats_are_detected() {
        let p = Path::new;
        assert_eq!(
            ManifestFormat::detect(p("t.TOML"), "{"),
            ManifestFormat::Toml
        );
        assert_eq!(
            ManifestFormat::detect(p("t.json"), "x"),
            ManifestFormat::Json
        );
        assert_eq!(ManifestFormat::detect(p("t"), " {}"), ManifestFormat::Json);
        assert_eq!(
            ManifestFormat::detect(p("t"), "[tools]"),
            ManifestFormat::Toml
        );
    }

    fn mcp_error(text: &str) -> String {
        ToolManifest::parse(text, "m.toml", ManifestFormat::Toml)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn mcp_servers_are_declared_in_the_manifest() {
        let manifest = ToolManifest::parse(
            r#"
            [mcp_servers.fs]
            command = "npx"
            args = ["-y", "server", "/data"]
            env = { A = "1" }
            cwd = "/tmp"
            timeout_ms = 500
            prefix = "fs_"
            "#,
            "m.toml",
            ManifestFormat::Toml,
        )
        .unwrap();
        assert!(manifest.tools.is_empty());
        let fs = &manifest.mcp_servers[0];
        assert_eq!(fs.name, "fs");
        assert_eq!(fs.argv, ["npx", "-y", "server", "/data"]);
        assert_eq!(fs.env, [("A".to_string(), "1".to_string())]);
        assert_eq!(fs.cwd.as_deref(), Some(Path::new("/tmp")));
        assert_eq!(fs.timeout, Duration::from_millis(500));
        assert_eq!(fs.prefix, "fs_");
    }

    #[test]
    fn mcp_server_mistakes_name_the_server_and_field() {
        for (text, expected) in [
            (
                "[mcp_servers.fs]\nargs = []",
                "MCP server `fs`: `command` is missing",
            ),
            (
                "[mcp_servers.fs]\ncomand = \"x\"",
                "unknown field `comand`; did you mean `command`?",
            ),
            (
                "[mcp_servers.web]\nurl = \"http://127.0.0.1:1/mcp\"",
                "`url` (the streamable HTTP transport) is not supported yet",
            ),
            (
                "[mcp_servers.fs]\ncommand = \"x\"\nprefix = \"9\"",
                "`prefix` must be letters",
            ),
            (
                "[mcp_servers.fs]\ncommand = \"x\"\nenv = { A = 1 }",
                "`env` must be a table of strings",
            ),
            ("[mcp_servers.\"a b\"]\ncommand = \"x\"", "the name must be"),
            ("mcp_servers = 1", "`mcp_servers` must be a table"),
            ("[other]", "unknown top-level field `other`"),
        ] {
            let err = mcp_error(text);
            assert!(err.contains(expected), "{text}: {err}");
        }
    }

    #[test]
    fn capped_reads_drain_and_flag_overflow() {
        let (kept, overflow) = read_capped(&b"abcdef"[..], 4);
        assert_eq!((kept.as_slice(), overflow), (&b"abcd"[..], true));
        let (kept, overflow) = read_capped(&b"ab"[..], 4);
        assert_eq!((kept.as_slice(), overflow), (&b"ab"[..], false));
    }
}
