//! The guard of `ptc`'s children: a second `ptc` process that kills every
//! tool and MCP server group still running when `ptc` ends, however it
//! ends. SIGINT, SIGTERM, SIGHUP and SIGQUIT are handled in `ptc` itself
//! (`signals` in `main.rs`); SIGKILL cannot be, and without the guard it
//! left tools running for good.
//!
//! The guard is `ptc` started again with [`GUARD_ARG`], in a process group
//! of its own (so a Ctrl-C at the terminal does not reach it), at the
//! first tool or MCP server `ptc` starts. It reads lines on its standard
//! input: `+N` when group N starts, `-N` when it has ended. Standard input
//! is a pipe only `ptc` can write to (its end is close-on-exec, so no
//! tool inherits it); when `ptc` dies the kernel closes it, the guard
//! reads the end of the file, kills the groups it still holds, and exits.
//! Whole groups go, so what a tool started in the background goes too.
//!
//! Why not the parent-death signal (`PR_SET_PDEATHSIG`) on each child:
//! setting it needs `Command::pre_exec` (unsafe), which makes the standard
//! library fork `ptc` instead of using `posix_spawn`, and a fork copies
//! the page tables of the whole heap: 30 ms per tool call with 200 MB of
//! data loaded, 160 ms with 1 GB, against 2.5 ms (ARCHITECTURE.md,
//! "Orphans"). It also kills only the child, not the processes it
//! started, and only when the thread that forked it ends. The guard costs
//! one process per run that starts tools and needs no unsafe code.

use std::collections::BTreeSet;
use std::io::{BufRead, Write};
use std::process::{ChildStdin, ExitCode, Stdio};
use std::sync::Mutex;

/// The first argument that makes `ptc` a guard (not a subcommand anyone
/// types: it is not in the help).
pub const GUARD_ARG: &str = "__guard-children";

/// Run as the guard if the command line asks for it.
pub fn run_if_asked() -> Option<ExitCode> {
    (std::env::args_os().nth(1)? == GUARD_ARG).then(guard)
}

/// Tell the guard about every child the library starts from now on.
pub fn install() {
    ptc_lisp::process::set_child_watch(Box::new(Guard(Mutex::new(State::default()))));
}

/// The guard's loop: keep the groups it is told of; at the end of its
/// input, kill those left.
fn guard() -> ExitCode {
    let mut groups = BTreeSet::new();
    for line in std::io::stdin().lock().split(b'\n') {
        let Ok(line) = line else { break };
        let Some((&sign, number)) = line.split_first() else {
            continue;
        };
        let Some(group) = std::str::from_utf8(number)
            .ok()
            .and_then(|n| n.trim().parse::<i32>().ok())
            .filter(|&n| n > 0)
        else {
            continue;
        };
        match sign {
            b'+' => groups.insert(group),
            b'-' => groups.remove(&group),
            _ => false,
        };
    }
    for group in groups
        .into_iter()
        .filter_map(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    }
    ExitCode::SUCCESS
}

/// `ptc`'s side: the pipe to the guard and the groups it was told of.
struct Guard(Mutex<State>);

#[derive(Default)]
struct State {
    /// The guard's standard input; `None` before it is started or once a
    /// write failed (it is started again at the next tool).
    pipe: Option<ChildStdin>,
    /// The groups running, to tell a guard started again.
    groups: BTreeSet<u32>,
}

impl Guard {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl State {
    /// Start the guard if it is not running, and tell it the groups.
    fn ensure_started(&mut self) {
        if self.pipe.is_some() {
            return;
        }
        let program = if cfg!(target_os = "linux") {
            std::path::PathBuf::from("/proc/self/exe")
        } else {
            match std::env::current_exe() {
                Ok(p) => p,
                Err(_) => return,
            }
        };
        let mut command = std::process::Command::new(program);
        command
            .arg(GUARD_ARG)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        {
            use std::os::unix::process::CommandExt;
            command.process_group(0);
        }
        // The guard is never waited for: it ends with `ptc`.
        let Ok(mut child) = command.spawn() else {
            return;
        };
        self.pipe = child.stdin.take();
        let lines: String = self.groups.iter().map(|g| format!("+{g}\n")).collect();
        self.send(&lines);
    }

    fn send(&mut self, lines: &str) {
        if let Some(pipe) = &mut self.pipe {
            if pipe.write_all(lines.as_bytes()).is_err() {
                self.pipe = None;
            }
        }
    }
}

impl ptc_lisp::process::ChildWatch for Guard {
    fn starting(&self) {
        self.state().ensure_started();
    }

    fn started(&self, group: u32) {
        let mut state = self.state();
        state.groups.insert(group);
        state.send(&format!("+{group}\n"));
    }

    fn ended(&self, group: u32) {
        let mut state = self.state();
        state.groups.remove(&group);
        state.send(&format!("-{group}\n"));
    }
}
