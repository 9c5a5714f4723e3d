//! Everything `ptc` writes on standard output and standard error goes
//! through here, so that every command treats both streams alike:
//!
//! - a command's output on stdout: [`line()`] escapes control characters
//!   when stdout is a terminal (a program's `println` output and values
//!   are untrusted; see `ptc_lisp::terminal`), [`raw_line`] and [`raw`]
//!   write JSON, shell scripts and help text as they are;
//! - a failed write to stdout ends the command: quietly with status 0 for
//!   a closed pipe (`ptc config show | head -1`; the reader has what it
//!   wanted), else with `error: cannot write to standard output: ...` and
//!   status 2 (`ptc eval 1 > /dev/full`). Tools and MCP servers are killed
//!   first, as on a signal;
//! - messages on stderr ([`err`], the `errln!` macro): control characters
//!   always escaped (stderr is for people, never data), and a failed write
//!   is ignored: there is nowhere left to report it, and it must not stop
//!   the work (a closed stderr included).

use std::io::{IsTerminal, Write};
use std::sync::OnceLock;

use ptc_lisp::terminal::escape_controls;

/// Whether stdout is a terminal, asked once.
pub fn stdout_is_terminal() -> bool {
    static TERMINAL: OnceLock<bool> = OnceLock::new();
    *TERMINAL.get_or_init(|| std::io::stdout().is_terminal())
}

/// A line of output on stdout, control characters escaped on a terminal.
pub fn line(text: &str) {
    if stdout_is_terminal() {
        raw_line(&escape_controls(text));
    } else {
        raw_line(text);
    }
}

/// A line on stdout as it is (JSON, a completion script).
pub fn raw_line(text: &str) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = writeln!(out, "{text}").and_then(|()| out.flush()) {
        drop(out);
        failed(&e);
    }
}

/// Bytes on stdout as they are (help text that ends with its own newline).
pub fn raw(bytes: &[u8]) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(bytes).and_then(|()| out.flush()) {
        drop(out);
        failed(&e);
    }
}

/// A failed write to stdout: end the process as the module docs say.
pub fn failed(e: &std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        end(0);
    }
    err(&format!("error: cannot write to standard output: {e}"));
    end(2)
}

/// End the process with `code`, killing tools and MCP servers first.
pub fn end(code: i32) -> ! {
    ptc_lisp::agent::tools::kill_running_tools();
    crate::signals::exit(code)
}

/// A message line on stderr, control characters escaped; a failure is
/// ignored.
pub fn err(text: &str) {
    ptc_lisp::terminal::warn(text);
}
