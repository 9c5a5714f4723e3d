//! The process of an MCP server: started in a process group of its own
//! with piped stdio, its standard error kept (the end of it) for messages,
//! its standard output watched for lines that cannot be JSON-RPC (which
//! the protocol layer skips silently), and killed with its whole group.

use std::pin::Pin;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncReadExt, ReadBuf};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::runtime::Runtime;

use super::McpServerConfig;

/// How much of a server's standard error is kept for messages.
const STDERR_TAIL_BYTES: usize = 2000;
/// How much of a line that is not JSON-RPC is kept for messages.
const NOISE_BYTES: usize = 200;
/// The longest message the protocol layer reads; longer lines are dropped
/// (its default, `rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH`).
const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// A started server process and what it wrote besides protocol messages.
pub(crate) struct ServerProcess {
    pub child: Child,
    /// The process id, which is also the process group id.
    pub pid: Option<u32>,
    pub stderr: Arc<Mutex<Vec<u8>>>,
    /// The first line of standard output that could not be JSON-RPC.
    pub noise: Arc<Mutex<Option<String>>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl ServerProcess {
    /// Start the server's command; returns the process and the pipes the
    /// protocol runs over.
    pub fn spawn(
        config: &McpServerConfig,
        runtime: &Runtime,
    ) -> std::io::Result<(ServerProcess, WatchedOutput, ChildStdin)> {
        let (program, args) = config
            .argv
            .split_first()
            .ok_or_else(|| std::io::Error::other("the command is empty"))?;
        let mut command = tokio::process::Command::new(program);
        command
            .args(args)
            .envs(config.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(cwd) = &config.cwd {
            // Spawning in a missing directory fails like a missing
            // command (`ENOENT`); say which it is.
            if !cwd.is_dir() {
                let what = if cwd.exists() {
                    "is not a directory"
                } else {
                    "does not exist"
                };
                return Err(std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    format!("its working directory `{}` {what}", cwd.display()),
                ));
            }
            command.current_dir(cwd);
        }
        #[cfg(unix)]
        command.process_group(0);
        // Spawning registers the child with the runtime's reactor.
        let _guard = runtime.enter();
        crate::process::starting();
        let mut child = command.spawn()?;
        let pid = child.id();
        let (Some(stdin), Some(stdout), Some(mut stderr_pipe)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(std::io::Error::other("the pipes were not set up"));
        };
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let tail = stderr.clone();
        runtime.spawn(async move {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr_pipe.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                let mut tail = lock(&tail);
                tail.extend_from_slice(&buf[..n]);
                let excess = tail.len().saturating_sub(STDERR_TAIL_BYTES);
                tail.drain(..excess);
            }
        });
        let noise = Arc::new(Mutex::new(None));
        let output = WatchedOutput {
            inner: stdout,
            noise: noise.clone(),
            line_start: Vec::new(),
            line_bytes: 0,
            at_line_start: true,
        };
        Ok((
            ServerProcess {
                child,
                pid,
                stderr,
                noise,
            },
            output,
            stdin,
        ))
    }

    /// `; it exited with code 3; it wrote output that is not JSON-RPC:
    /// ...; its standard error ends: ...` as far as known.
    pub fn notes(&mut self) -> String {
        let mut out = String::new();
        if let Ok(Some(status)) = self.child.try_wait() {
            match status.code() {
                Some(code) => out.push_str(&format!("; it exited with code {code}")),
                None => out.push_str(&format!("; it ended: {status}")),
            }
        }
        // Each stray line is told once, in the next message.
        if let Some(line) = lock(&self.noise).take() {
            out.push_str(&format!("; it wrote output that is not JSON-RPC: `{line}`"));
        }
        let tail = lock(&self.stderr);
        let text = String::from_utf8_lossy(&tail);
        let text = text.trim();
        if !text.is_empty() {
            let count = text.chars().count();
            let end: String = text.chars().skip(count.saturating_sub(500)).collect();
            let cut = if count > 500 { "…" } else { "" };
            out.push_str(&format!("; its standard error ends: {cut}{}", end.trim()));
        }
        out
    }
}

/// Kill a process group (a server and everything it started).
#[cfg(unix)]
pub(crate) fn kill_group(id: u32) {
    if let Some(group) = rustix::process::Pid::from_raw(id as i32) {
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    }
}

/// A server's standard output, passed through unchanged, noting the first
/// line that does not start like a JSON-RPC message (`{` or `[`) or is
/// too long to be read as one.
pub(crate) struct WatchedOutput {
    inner: ChildStdout,
    noise: Arc<Mutex<Option<String>>>,
    /// The beginning of the current line (at most [`NOISE_BYTES`]).
    line_start: Vec<u8>,
    /// The length of the current line so far.
    line_bytes: usize,
    at_line_start: bool,
}

impl WatchedOutput {
    fn watch(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if b == b'\n' {
                self.end_line();
                continue;
            }
            if self.line_start.len() < NOISE_BYTES {
                self.line_start.push(b);
            }
            self.line_bytes += 1;
            self.at_line_start = false;
        }
    }

    fn end_line(&mut self) {
        let text = String::from_utf8_lossy(&self.line_start);
        let text = text.trim();
        let problem = if self.line_bytes > MAX_MESSAGE_BYTES {
            Some(format!(
                "a line of {} bytes, over the {} MiB a message may have",
                self.line_bytes,
                MAX_MESSAGE_BYTES / (1024 * 1024)
            ))
        } else if !text.is_empty() && !text.starts_with(['{', '[']) {
            Some(text.to_string())
        } else {
            None
        };
        if let Some(problem) = problem {
            let mut noise = lock(&self.noise);
            if noise.is_none() {
                *noise = Some(problem);
            }
        }
        self.line_start.clear();
        self.line_bytes = 0;
        self.at_line_start = true;
    }
}

impl AsyncRead for WatchedOutput {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            let fresh = &buf.filled()[before..];
            if fresh.is_empty() && !this.at_line_start {
                // End of output in the middle of a line.
                this.end_line();
            }
            this.watch(fresh);
        }
        polled
    }
}
