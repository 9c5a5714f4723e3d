//! No tool or MCP server outlives `ptc` (issue 40): SIGHUP and SIGQUIT
//! kill the tools' process groups like SIGINT and SIGTERM, and a guard
//! process kills the groups still running when `ptc` dies, so even
//! `kill -9` of `ptc` leaves none (nor what they started). Real
//! processes: the test reads their ids from files they write and watches
//! them end.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn write(dir: &Path, name: &str, content: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    path
}

/// A shell script `name` in `dir`, made executable.
fn script(dir: &Path, name: &str, content: &str) -> PathBuf {
    let path = write(dir, name, content);
    assert!(Command::new("chmod")
        .arg("+x")
        .arg(&path)
        .status()
        .unwrap()
        .success());
    path
}

/// Whether process `pid` runs (a zombie, already dead and waiting for a
/// parent to reap it, does not count).
fn running(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z') && !state.starts_with('X')
        }
        Err(_) => false,
    }
}

fn wait_until(what: &str, limit: Duration, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !ok() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The number in file `name` of `dir`, once it is there.
fn pid_in(dir: &Path, name: &str) -> i32 {
    let path = dir.join(name);
    let mut pid = 0;
    // Only a guard against a process that never starts (a busy machine
    // took more than 20 s).
    wait_until(&format!("`{name}`"), Duration::from_secs(120), || {
        pid = std::fs::read_to_string(&path)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0);
        pid > 0
    });
    pid
}

/// A manifest with a command tool `slow`: a shell that writes its id to
/// `shell.pid`, starts `sleep 300` in the background (its id in
/// `sleep.pid`, the same process group) and waits.
fn slow_tool(dir: &Path) -> PathBuf {
    let script = script(
        dir,
        "slow.sh",
        "#!/bin/sh\necho $$ > \"$(dirname \"$0\")/shell.pid\"\nsleep 300 &\necho $! > \"$(dirname \"$0\")/sleep.pid\"\nwait\necho '{}'\n",
    );
    write(
        dir,
        "tools.json",
        &serde_json::json!({"tools": {"slow": {"signature": "-> :map",
            "command": [script], "timeout_ms": 300000}}})
        .to_string(),
    )
}

/// The guard processes (`ptc __guard-children`) working in `dir`.
fn guards_in(dir: &Path) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).ok();
        if running(pid)
            && cmdline.split(|&b| b == 0).any(|a| a == b"__guard-children")
            && cwd.as_deref() == Some(dir)
        {
            found.push(pid);
        }
    }
    found
}

fn start(dir: &Path, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_ptc"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// `ptc eval program` with the tool manifest `tools`, running.
fn eval_with_tools(dir: &Path, tools: &Path, program: &str) -> Child {
    let tools = tools.to_str().unwrap();
    start(
        dir,
        &["eval", "--timeout-ms", "300000", "--tools", tools, program],
    )
}

fn signal(child: &Child, name: &str) {
    assert!(Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .unwrap()
        .success());
}

#[test]
fn sighup_and_sigquit_kill_the_tools_process_groups() {
    for (name, code) in [("HUP", 129), ("QUIT", 131)] {
        let dir = tempfile::tempdir().unwrap();
        let tools = slow_tool(dir.path());
        let mut ptc = eval_with_tools(dir.path(), &tools, "(tool/slow)");
        let (shell, sleep) = (
            pid_in(dir.path(), "shell.pid"),
            pid_in(dir.path(), "sleep.pid"),
        );
        assert!(running(shell) && running(sleep));
        assert_eq!(guards_in(&dir.path().canonicalize().unwrap()).len(), 1);
        signal(&ptc, name);
        let status = ptc.wait().unwrap();
        assert_eq!(status.code(), Some(code), "SIG{name}");
        wait_until("the tool's group to end", Duration::from_secs(10), || {
            !running(shell) && !running(sleep)
        });
        // The guard ends with `ptc`.
        wait_until("the guard to end", Duration::from_secs(10), || {
            guards_in(&dir.path().canonicalize().unwrap()).is_empty()
        });
    }
}

#[cfg(target_os = "linux")]
#[test]
fn the_guard_ends_with_a_run_that_ends_normally() {
    let dir = tempfile::tempdir().unwrap();
    let script = script(dir.path(), "t.sh", "#!/bin/sh\necho '{}'\n");
    let tools = write(
        dir.path(),
        "tools.json",
        &serde_json::json!({"tools": {"t": {"signature": "-> :map", "command": [script]}}})
            .to_string(),
    );
    let out = Command::new(env!("CARGO_BIN_EXE_ptc"))
        .args(["eval", "--tools", tools.to_str().unwrap(), "(tool/t)"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "{}");
    wait_until("the guard to end", Duration::from_secs(10), || {
        guards_in(&dir.path().canonicalize().unwrap()).is_empty()
    });
}

#[cfg(target_os = "linux")]
#[test]
fn kill_9_of_ptc_takes_its_tools_with_it() {
    for command in ["eval", "agent"] {
        let dir = tempfile::tempdir().unwrap();
        let tools = slow_tool(dir.path());
        let mut args = vec!["--tools", tools.to_str().unwrap()];
        let replies;
        match command {
            "eval" => args.extend(["eval", "--timeout-ms", "300000", "(tool/slow)"]),
            _ => {
                replies = write(dir.path(), "r.json", r#"["```clojure\n(tool/slow)\n```"]"#);
                args.extend([
                    "agent",
                    "--program-timeout-ms",
                    "300000",
                    "--mission",
                    "wait",
                    "--llm",
                ]);
                args.push(Box::leak(
                    format!("script:{}", replies.display()).into_boxed_str(),
                ));
            }
        }
        // The subcommand comes first.
        let at = args.iter().position(|a| *a == command).unwrap();
        args.rotate_left(at);
        let mut ptc = start(dir.path(), &args);
        let (shell, sleep) = (
            pid_in(dir.path(), "shell.pid"),
            pid_in(dir.path(), "sleep.pid"),
        );
        signal(&ptc, "KILL");
        ptc.wait().unwrap();
        // The tool's whole group goes: the shell and what it started.
        wait_until("the tool's group to end", Duration::from_secs(10), || {
            !running(shell) && !running(sleep)
        });
    }
}

#[cfg(target_os = "linux")]
#[test]
fn kill_9_of_ptc_takes_its_mcp_servers_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/misbehaving_server.py");
    let manifest = write(
        dir.path(),
        "tools.json",
        &serde_json::json!({"mcp_servers": {"srv": {
            "command": "python3", "args": [server, "ok"],
            "env": {"PID_FILE": dir.path().join("server.pid")},
            "timeout_ms": 300000}}})
        .to_string(),
    );
    let mut ptc = eval_with_tools(dir.path(), &manifest, "(tool/sleep)");
    let server = pid_in(dir.path(), "server.pid");
    // Well after the server started (the thread that started it is long
    // gone), it still runs.
    std::thread::sleep(Duration::from_millis(500));
    assert!(running(server));
    signal(&ptc, "KILL");
    ptc.wait().unwrap();
    wait_until("the MCP server to end", Duration::from_secs(10), || {
        !running(server)
    });
}

#[cfg(target_os = "linux")]
#[test]
fn tools_started_from_a_pmap_branch_live_until_they_answer() {
    // A branch thread ends after its call; its tool must not die with
    // it, and a tool called after it must still start.
    let dir = tempfile::tempdir().unwrap();
    let script = script(
        dir.path(),
        "echo.sh",
        "#!/bin/sh\nread line\nsleep 0.2\nprintf '{\"got\": %s}\\n' \"$line\"\n",
    );
    let tools = write(
        dir.path(),
        "tools.json",
        &serde_json::json!({"tools": {"echo": {"signature": "(n :int) -> :map",
            "command": [script]}}})
        .to_string(),
    );
    let out = Command::new(env!("CARGO_BIN_EXE_ptc"))
        .args([
            "eval",
            "--timeout-ms",
            "20000",
            "--tools",
            tools.to_str().unwrap(),
            "(vec (concat (pmap #(get-in (tool/echo %) [:got :n]) [1 2 3]) [(get-in (tool/echo 4) [:got :n])]))",
        ])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "[1 2 3 4]",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
