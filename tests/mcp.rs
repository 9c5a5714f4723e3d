//! MCP both ways, against real servers: the filesystem and "everything"
//! reference servers from npm (pinned in tests/mcp/package.json, installed
//! by .ci/mcp-npm, here on first use), a tiny misbehaving server
//! (tests/mcp/misbehaving_server.py), and `ptc mcp-server` driven by raw
//! JSON-RPC over its stdio.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Output, Stdio};
use std::sync::mpsc;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use ptc_lisp::mcp::{McpServerConfig, McpServers};
use ptc_lisp::session::Session;
use serde_json::{json, Value as Json};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn under_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// The npm servers' executables folder, installed on first use; a test
/// that needs them fails when they cannot be installed.
fn npm_bin() -> Option<PathBuf> {
    static INSTALLED: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let installed = INSTALLED.get_or_init(|| {
        let bin = root().join("tests/mcp/node_modules/.bin");
        let ready = |bin: &Path| {
            bin.join("mcp-server-filesystem").is_file()
                && bin.join("mcp-server-everything").is_file()
        };
        if !ready(&bin) {
            eprintln!("installing the MCP test servers (.ci/mcp-npm) ...");
            let status = Command::new("bash")
                .arg(root().join(".ci/mcp-npm"))
                .status();
            if !matches!(status, Ok(s) if s.success()) {
                return Err(format!(".ci/mcp-npm failed: {status:?}"));
            }
        }
        if ready(&bin) {
            Ok(bin)
        } else {
            Err("node and npm are needed to install them".into())
        }
    });
    // Never a silent skip: without the servers these tests fail, saying
    // what is missing (the README's set-up names node and npm).
    match installed {
        Ok(bin) => Some(bin.clone()),
        Err(e) => panic!(
            "the MCP test servers cannot be installed (CI={}): {e}; node and npm are needed, see .ci/mcp-npm",
            under_ci()
        ),
    }
}

fn filesystem_server(dir: &Path) -> Option<String> {
    let bin = npm_bin()?;
    Some(format!(
        "{} {}",
        bin.join("mcp-server-filesystem").display(),
        dir.display()
    ))
}

fn everything_server() -> Option<String> {
    Some(format!(
        "{} stdio",
        npm_bin()?.join("mcp-server-everything").display()
    ))
}

/// The misbehaving server's command line, with a start-up mode and extra
/// tool names.
fn misbehaving(args: &str) -> String {
    format!(
        "python3 {} {args}",
        root().join("tests/mcp/misbehaving_server.py").display()
    )
}

fn ptc_in(dir: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ptc"))
        .args(crate::util::relaxed_args(args))
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start ptc");
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
    drop(input);
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A temporary folder with two files and a subfolder.
fn sample_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
    std::fs::write(dir.path().join("prices.json"), r#"{"apple": 3, "pear": 5}"#).unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    dir
}

/// True while a process with this id exists (and is not a zombie).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

fn gone_within(pid: u32, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    !alive(pid)
}

fn read_pid(file: &Path) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(text) = std::fs::read_to_string(file) {
            if let Ok(pid) = text.trim().parse() {
                return pid;
            }
        }
        assert!(Instant::now() < deadline, "no pid in {}", file.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

// ---- MCP servers as tool sources ----

#[test]
fn the_filesystem_server_answers_a_program_from_the_cli() {
    let dir = sample_dir();
    let Some(fs) = filesystem_server(Path::new(".")) else {
        return;
    };
    let program = r#"
        (->> (tool/list_directory {:path "."})
             :content
             split-lines
             (filter #(starts-with? % "[FILE]"))
             (map #(subs % 7))
             sort)"#;
    let out = ptc_in(
        dir.path(),
        &[
            "eval",
            "--timeout-ms",
            "10000",
            "--mcp",
            &format!("fs={fs}"),
            program,
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), r#"["notes.txt" "prices.json"]"#);

    // Writing goes through the server too, and a refused path is a tool
    // error naming the server.
    let program = r#"
        (tool/write_file {:path "out.txt" :content (str (count (:content (tool/read_text_file "notes.txt"))))})
        (tool/read_text_file {:path "/etc/hostname"})"#;
    let out = ptc_in(
        dir.path(),
        &[
            "eval",
            "--timeout-ms",
            "10000",
            "--mcp",
            &format!("fs={fs}"),
            program,
        ],
        None,
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out.txt")).unwrap(),
        "11"
    );
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains(
            "Tool `read_text_file` failed: MCP server `fs` reported an error: Access denied"
        ),
        "{err}"
    );
}

#[test]
fn manifest_servers_take_a_prefix_cwd_and_env() {
    let dir = sample_dir();
    let Some(bin) = npm_bin() else { return };
    let manifest = dir.path().join("tools.toml");
    std::fs::write(
        &manifest,
        format!(
            r#"
[tools.local]
signature = "-> :string"
response = "from the manifest"

[mcp_servers.files]
command = "{}"
args = ["."]
cwd = "{}"
prefix = "fs_"
timeout_ms = 20000

[mcp_servers.everything]
command = "{}"
args = ["stdio"]
env = {{ PTC_TEST_MARK = "marked" }}
"#,
            bin.join("mcp-server-filesystem").display(),
            dir.path().join("sub").display(),
            bin.join("mcp-server-everything").display()
        ),
    )
    .unwrap();
    std::fs::write(dir.path().join("sub/inner.txt"), "x").unwrap();
    let program = r#"
        [(tool/local)
         (:content (tool/fs_list_directory "."))
         (includes? (str (tool/get-env)) "marked")]"#;
    let out = ptc_in(
        dir.path(),
        &[
            "eval",
            "--timeout-ms",
            "20000",
            "--tools",
            "tools.toml",
            program,
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout).trim(),
        r#"["from the manifest" "[FILE] inner.txt" true]"#
    );
}

#[test]
fn everything_server_results_become_values() {
    let Some(everything) = everything_server() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let program = r#"
        {:sum (tool/get-sum 2 3)
         :pairs (tool/get-sum :a 1 :b 1)
         :echo (tool/echo {:message "hi"})
         :weather (tool/get-structured-content "New York")
         :image (second (tool/get-tiny-image))
         :links (count (filter map? (tool/get-resource-links {:count 2})))}"#;
    let out = ptc_in(
        dir.path(),
        &[
            "eval",
            "--timeout-ms",
            "20000",
            "--mcp",
            &format!("ev={everything}"),
            program,
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let printed = text(&out.stdout);
    assert!(
        printed.contains(r#":sum "The sum of 2 and 3 is 5.""#),
        "{printed}"
    );
    assert!(printed.contains(r#":echo "Echo: hi""#), "{printed}");
    assert!(printed.contains(":weather {:temperature "), "{printed}");
    assert!(
        printed.contains(r#":image {:type "image", :mime-type "image/png", :size "#),
        "{printed}"
    );
    assert!(printed.contains(":links 2"), "{printed}");
    assert!(!printed.contains("iVBOR"), "base64 leaked: {printed}");

    // Arguments of the wrong type are caught before the call ...
    let out = ptc_in(
        dir.path(),
        &[
            "eval",
            "--timeout-ms",
            "20000",
            "--mcp",
            &format!("ev={everything}"),
            r#"(tool/get-sum {:a "x" :b 2})"#,
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains(r#"Tool `get-sum`: argument `a` expected a number, got string "x""#),
        "{err}"
    );
    // ... and those the server rejects come back as a tool error.
    let out = ptc_in(
        dir.path(),
        &[
            "eval",
            "--timeout-ms",
            "20000",
            "--mcp",
            &format!("ev={everything}"),
            r#"(tool/get-annotated-message {:messageType "bogus"})"#,
        ],
        None,
    );
    let err = text(&out.stderr);
    assert!(
        err.contains("Tool `get-annotated-message` failed: MCP server `ev` reported an error:")
            && err.contains("messageType"),
        "{err}"
    );
    // A missing required argument is caught before the call.
    let out = ptc_in(
        dir.path(),
        &[
            "eval",
            "--timeout-ms",
            "20000",
            "--mcp",
            &format!("ev={everything}"),
            "(tool/get-sum 1)",
        ],
        None,
    );
    let err = text(&out.stderr);
    assert!(err.contains("missing the required argument `b`"), "{err}");
}

#[test]
fn schemas_become_signatures_in_the_prompt() {
    let Some(everything) = everything_server() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = ptc_in(
        dir.path(),
        &[
            "prompt",
            "--mission",
            "Add numbers",
            "--mcp",
            &format!("ev={everything}"),
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let prompt = text(&out.stdout);
    assert!(
        prompt.contains("(tool/get-sum a b)")
            && prompt.contains("; a:float, b:float -> any -- Returns the sum of two numbers"),
        "{prompt}"
    );
    assert!(
        prompt
            .contains("location:string -> {temperature:float, conditions:string, humidity:float}"),
        "{prompt}"
    );
}

#[test]
fn an_agent_uses_the_filesystem_server_and_the_transcript_records_the_calls() {
    let dir = sample_dir();
    let Some(fs) = filesystem_server(Path::new(".")) else {
        return;
    };
    let replies = json!([
        "```clojure\n(def files (->> (tool/list_directory {:path \".\"}) :content split-lines))\n(println (count (filter #(starts-with? % \"[DIR]\") files)) \"folder\")\n```",
        "```clojure\n(return (->> (tool/read_text_file {:path \"prices.json\"}) :content json/parse-string vals (reduce +)))\n```"
    ]);
    std::fs::write(dir.path().join("replies.json"), replies.to_string()).unwrap();
    let out = ptc_in(
        dir.path(),
        &[
            "agent",
            "--mission",
            "Sum the prices",
            "--llm",
            "script:replies.json",
            "--mcp",
            &format!("fs={fs}"),
            "--transcript",
            "t.jsonl",
            "--compression",
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "8");
    let transcript = std::fs::read_to_string(dir.path().join("t.jsonl")).unwrap();
    let lines: Vec<Json> = transcript
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["tool_calls"][0]["name"], "list_directory");
    assert_eq!(lines[1]["tool_calls"][0]["name"], "read_text_file");
    // The second prompt shows the first turn's call like any tool call.
    let second_prompt = lines[1]["messages"].to_string();
    assert!(
        second_prompt.contains("list_directory({:path"),
        "{second_prompt}"
    );
    assert!(second_prompt.contains("1 folder"), "{second_prompt}");
}

#[test]
fn name_collisions_are_start_up_errors_that_say_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let out = ptc_in(
        dir.path(),
        &[
            "eval",
            "--mcp",
            &format!("one={}", misbehaving("ok")),
            "--mcp",
            &format!("two={}", misbehaving("ok")),
            "1",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("MCP servers `one` and `two` both offer a tool named `echo`; give one of them a prefix: --mcp 'two:PREFIX=...'"),
        "{err}"
    );
    // With a prefix both load.
    let out = ptc_in(
        dir.path(),
        &[
            "eval",
            "--mcp",
            &format!("one={}", misbehaving("ok")),
            "--mcp",
            &format!("two:b_={}", misbehaving("ok")),
            r#"[(tool/echo "one") (tool/b_echo "two")]"#,
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), r#"["one" "two"]"#);

    std::fs::write(
        dir.path().join("tools.json"),
        r#"{"tools": {"args": {"signature": "-> :any", "response": 1}}}"#,
    )
    .unwrap();
    let out = ptc_in(
        dir.path(),
        &[
            "eval",
            "--tools",
            "tools.json",
            "--mcp",
            &format!("bad={}", misbehaving("ok")),
            "1",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("the tool `args` of MCP server `bad` has the name of a tool already declared"),
        "{err}"
    );
}

#[test]
fn misbehaving_servers_give_clear_errors_and_the_session_survives() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tools.json"),
        json!({"mcp_servers": {
            "flaky": {"command": "python3",
                      "args": [root().join("tests/mcp/misbehaving_server.py")],
                      "timeout_ms": 6000},
            "noisy": {"command": "python3",
                      "args": [root().join("tests/mcp/misbehaving_server.py"), "ok", "other"],
                      "prefix": "n_", "timeout_ms": 6000}}})
        .to_string(),
    )
    .unwrap();
    // The piped REPL runs each line as a turn of one session.
    let turns = "(tool/fail)\n(tool/protocol_error)\n(tool/hang)\n(tool/n_garbage)\n(tool/huge)\n(tool/crash)\n(tool/echo \"again\")\n(tool/n_echo \"still here\")\n(+ 1 2)\n";
    let started = Instant::now();
    let out = ptc_in(
        dir.path(),
        &["--tools", "tools.json", "--timeout-ms", "10000"],
        Some(turns),
    );
    let took = started.elapsed();
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    for expected in [
        "Tool `fail` failed: MCP server `flaky` reported an error: the frobnicator is out of order",
        "Tool `protocol_error` failed: MCP server `flaky`: protocol error -32602: bad frob level",
        "Tool `hang` got no answer from MCP server `flaky` within 6000 ms (its timeout_ms)",
        "Tool `n_garbage` got no answer from MCP server `noisy` within 6000 ms (its timeout_ms); it wrote output that is not JSON-RPC: `<html>502 Bad Gateway</html>`",
        "Tool `huge` got no answer from MCP server `flaky` within 6000 ms (its timeout_ms); it wrote output that is not JSON-RPC: `a line of 17825",
        "Tool `crash` failed: MCP server `flaky` is no longer running (it closed the connection); it exited with code 3; its standard error ends: segfault in the frobnicator",
        "Tool `echo` failed: MCP server `flaky` is no longer running",
        "\"still here\"",
        "3",
    ] {
        assert!(all.contains(expected), "missing `{expected}` in:\n{all}");
    }
    // Two calls wait out a 6 s timeout_ms each: 12 s, twice, plus 6 s to
    // start the servers on a busy machine (it took 21 s at a load of 10).
    assert!(took < Duration::from_secs(30), "took {took:?}");
}

#[test]
fn servers_that_fail_to_start_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let out = ptc_in(
        dir.path(),
        &[
            "eval",
            "--mcp",
            &format!("db={}", misbehaving("exit-at-start")),
            "1",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("MCP server `db` failed to start:")
            && err.contains("it exited with code 1")
            && err.contains("cannot open the database"),
        "{err}"
    );
    let out = ptc_in(
        dir.path(),
        &["eval", "--mcp", "x=no-such-program-here", "1"],
        None,
    );
    let err = text(&out.stderr);
    assert!(
        err.contains("MCP server `x` could not start `no-such-program-here`"),
        "{err}"
    );

    for (mode, note) in [
        ("hang-at-start", ""),
        ("garbage-at-start", "Welcome! this is not JSON-RPC"),
    ] {
        std::fs::write(
            dir.path().join("tools.json"),
            json!({"mcp_servers": {"slow": {
                "command": "python3",
                "args": [root().join("tests/mcp/misbehaving_server.py"), mode],
                "timeout_ms": 3000}}})
            .to_string(),
        )
        .unwrap();
        let started = Instant::now();
        let out = ptc_in(dir.path(), &["eval", "--tools", "tools.json", "1"], None);
        assert!(started.elapsed() < Duration::from_secs(15));
        let err = text(&out.stderr);
        assert!(
            err.contains("MCP server `slow` failed to start: no answer to `initialize` and `tools/list` within 3000 ms")
                && err.contains(note),
            "{err}"
        );
    }
    let out = ptc_in(dir.path(), &["eval", "--mcp", "fs npx server", "1"], None);
    assert!(
        text(&out.stderr).contains("no `=`"),
        "{}",
        text(&out.stderr)
    );
}

/// `--mcp` servers have a start-up limit of their own (default 10 s, not
/// the manifest's 30 s), set with `--mcp-timeout-ms` and named in the
/// error: `cat` echoes the request back and never answers it.
#[test]
fn an_mcp_server_that_never_answers_fails_at_the_mcp_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let out = ptc_in(
        dir.path(),
        &["eval", "--mcp", "x=cat", "--mcp-timeout-ms", "300", "1"],
        None,
    );
    assert!(started.elapsed() < Duration::from_secs(8));
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "MCP server `x` failed to start: no answer to `initialize` and `tools/list` \
             within 300 ms (raise it with --mcp-timeout-ms)"
        ),
        "{err}"
    );
    let help = text(&ptc_in(dir.path(), &["eval", "--help"], None).stdout);
    assert!(
        help.contains("--mcp-timeout-ms <MS>") && help.contains("[default: 10000]"),
        "{help}"
    );
}

#[test]
fn no_server_outlives_ptc() {
    let dir = tempfile::tempdir().unwrap();
    // A normal end.
    let pid_file = dir.path().join("pid1");
    let out = Command::new(env!("CARGO_BIN_EXE_ptc"))
        .args([
            "eval",
            "--mcp",
            &format!("s={}", misbehaving("ok")),
            "(tool/echo \"x\")",
        ])
        .env("PID_FILE", &pid_file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(gone_within(read_pid(&pid_file), Duration::from_secs(3)));

    // A server that ignores its closed input is killed after a grace
    // period.
    let pid_file = dir.path().join("pid3");
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_ptc"))
        .args([
            "eval",
            "--timeout-ms",
            "300",
            "--mcp",
            &format!("s={}", misbehaving("ok")),
            "(tool/sleep)",
        ])
        .env("PID_FILE", &pid_file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("time limit of 300 ms"),
        "{}",
        text(&out.stderr)
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(gone_within(read_pid(&pid_file), Duration::from_secs(3)));

    // SIGTERM while a call is waiting for a server that no longer reads.
    let pid_file = dir.path().join("pid2");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ptc"))
        .args([
            "eval",
            "--timeout-ms",
            "60000",
            "--mcp",
            &format!("s={}", misbehaving("ok")),
            "(tool/sleep)",
        ])
        .env("PID_FILE", &pid_file)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = read_pid(&pid_file);
    std::thread::sleep(Duration::from_millis(500));
    assert!(alive(server));
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let code = child.wait().unwrap();
    assert_eq!(code.code(), Some(143));
    assert!(
        gone_within(server, Duration::from_secs(3)),
        "server {server} outlived ptc"
    );
}

#[test]
fn an_interrupt_stops_a_waiting_call_at_once() {
    let config = McpServerConfig::parse_cli(&format!("s={}", misbehaving("ok"))).unwrap();
    let servers = McpServers::start(&[config]).expect("start");
    let mut session = Session::new().with_limits(ptc_lisp::eval::Limits {
        timeout: Duration::from_secs(60),
        ..Default::default()
    });
    servers.register_into(&mut session).unwrap();
    let flag = session.interrupt_handle();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        flag.store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = tx.send(());
    });
    let started = Instant::now();
    let turn = session.eval("(tool/hang)");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    rx.recv().unwrap();
    assert_eq!(turn.error().map(|e| e.code.as_str()), Some("interrupted"));
    // The server is still there for the next call.
    session
        .interrupt_handle()
        .store(false, std::sync::atomic::Ordering::SeqCst);
    let turn = session.eval("(tool/echo \"after\")");
    assert_eq!(
        turn.result().map(ptc_lisp::value::pr_str).as_deref(),
        Some("\"after\"")
    );
    servers.shutdown();
    let turn = session.eval("(tool/echo \"x\")");
    assert!(turn
        .error()
        .unwrap()
        .message
        .contains("MCP server `s` has been shut down"));
}

// ---- ptc as an MCP server ----

/// A JSON-RPC client over a child's stdio.
struct RawClient {
    child: Child,
    input: Option<ChildStdin>,
    output: BufReader<ChildStdout>,
    next_id: u64,
}

impl RawClient {
    fn start(dir: &Path, args: &[&str]) -> RawClient {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ptc"))
            .arg("mcp-server")
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start ptc mcp-server");
        let input = child.stdin.take();
        let output = BufReader::new(child.stdout.take().unwrap());
        RawClient {
            child,
            input,
            output,
            next_id: 1,
        }
    }

    fn send(&mut self, message: Json) {
        let input = self.input.as_mut().expect("input open");
        writeln!(input, "{message}").unwrap();
        input.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Json) -> Json {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            let n = self.output.read_line(&mut line).unwrap();
            assert!(n > 0, "the server closed its output waiting for {method}");
            let message: Json =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    fn call(&mut self, tool: &str, arguments: Json) -> Json {
        let answer = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        answer["result"].clone()
    }
}

fn result_text(result: &Json) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

#[test]
fn ptc_serves_a_persistent_session_over_mcp() {
    let dir = sample_dir();
    std::fs::write(
        dir.path().join("data.json"),
        r#"{"orders": [{"id": 1, "total": 30}, {"id": 2, "total": 12}]}"#,
    )
    .unwrap();
    let mut args = vec!["--data", "data.json", "--timeout-ms", "2000"];
    let fs = filesystem_server(Path::new("."));
    let mcp = fs.as_ref().map(|fs| format!("fs={fs}"));
    if let Some(mcp) = &mcp {
        args.extend(["--mcp", mcp.as_str()]);
    }
    let mut client = RawClient::start(dir.path(), &args);

    let init = client.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "raw-test", "version": "0"}}),
    );
    assert_eq!(init["result"]["serverInfo"]["name"], "ptc-lisp", "{init}");
    assert!(
        init["result"]["capabilities"]["tools"].is_object(),
        "{init}"
    );
    client.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    let tools = client.request("tools/list", json!({}));
    let tools = tools["result"]["tools"].as_array().unwrap().clone();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["run", "reset", "describe"]);
    let run_doc = tools[0]["description"].as_str().unwrap();
    assert!(run_doc.contains("data/orders  vector[2]"), "{run_doc}");
    assert!(
        run_doc.contains("Special forms:") && run_doc.contains("Functions:"),
        "{run_doc}"
    );
    if fs.is_some() {
        assert!(
            run_doc.contains("tool/list_directory  path:string -> {content:string}"),
            "{run_doc}"
        );
    }

    // Definitions persist from call to call.
    let r = client.call("run", json!({"program": "(def big (filter #(> (:total %) 20) data/orders))\n(println \"big:\" (count big))\n(count big)"}));
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(result_text(&r), "big: 1\n1");
    assert_eq!(
        r["structuredContent"],
        json!({"result": 1, "printed": ["big: 1"]})
    );
    let r = client.call("run", json!({"program": "(map :id big)"}));
    assert_eq!(result_text(&r), "[1]");
    assert_eq!(r["structuredContent"]["result"], json!([1]));

    // An error carries the CLI's message, location and hint.
    let r = client.call("run", json!({"program": "(count\n  (fliter odd? big))"}));
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(
        result_text(&r),
        "error: 2:4: Undefined symbol `fliter` (undefined-error)\n  |   (fliter odd? big))\n  |    ^\nhint: did you mean `filter`?"
    );
    // A failing program does not undo what earlier calls defined.
    let r = client.call("describe", json!({}));
    assert!(result_text(&r).contains("big"), "{r}");
    assert_eq!(r["structuredContent"]["definitions"], json!(["big"]));
    assert_eq!(
        r["structuredContent"]["data"][0],
        json!({"name": "orders", "type": "vector[2]"})
    );

    // Tools of proxied MCP servers work from programs.
    if fs.is_some() {
        let r = client.call("run", json!({"program": "(->> (tool/read_text_file {:path \"prices.json\"}) :content json/parse-string vals (reduce +))"}));
        assert_eq!(result_text(&r), "8", "{r}");
    }
    // The limits apply to every call. Each iteration does enough work
    // that the time limit, not the step limit, ends the loop however fast
    // the evaluator is.
    let r = client.call(
        "run",
        json!({"program": "(loop [i 0] (recur (reduce + i (range 1000))))"}),
    );
    assert_eq!(r["isError"], true);
    assert!(result_text(&r).contains("time limit of 2000 ms"), "{r}");

    let r = client.call("reset", json!({}));
    assert_eq!(r["isError"], false);
    let r = client.call("run", json!({"program": "big"}));
    assert_eq!(r["isError"], true);
    assert!(result_text(&r).contains("Undefined symbol `big`"), "{r}");
    let r = client.call("run", json!({}));
    assert_eq!(r["isError"], true);
    assert!(result_text(&r).contains("`run` needs `program`"), "{r}");

    // Closing the input ends the server (and the servers it started).
    drop(client.input.take());
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = client.child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "ptc mcp-server did not exit");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
}

#[test]
fn ptc_drives_ptc_mcp_server_through_its_own_mcp_client() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("data.json"), r#"{"n": 7}"#).unwrap();
    std::fs::write(dir.path().join("prelude.clj"), "(defn twice [x] (* 2 x))").unwrap();
    let server = format!(
        "inner={} mcp-server --data data.json --prelude prelude.clj",
        env!("CARGO_BIN_EXE_ptc")
    );
    let program = r#"
        [(tool/run {:program "(def m (twice data/n)) (println :m m) (inc m)"})
         (tool/run "(* m 10)")
         (:definitions (tool/describe))
         (tool/reset)
         (tool/run "(twice 1)")]"#;
    let out = ptc_in(
        dir.path(),
        &["eval", "--timeout-ms", "20000", "--mcp", &server, program],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout).trim(),
        r#"[{:result 15, :printed [":m 14"]} {:result 140, :printed []} ["twice" "m"] "The session is fresh: no definitions; tools and data as at start." {:result 2, :printed []}]"#
    );
    // An error result of the inner session is a tool error of the outer one.
    let out = ptc_in(
        dir.path(),
        &[
            "eval",
            "--timeout-ms",
            "20000",
            "--mcp",
            &server,
            r#"(tool/run "(fliter odd? [1])")"#,
        ],
        None,
    );
    let err = text(&out.stderr);
    assert!(
        err.contains(
            "Tool `run` failed: MCP server `inner` reported an error: error: 1:2: Undefined symbol `fliter`"
        ),
        "{err}"
    );
}

#[test]
fn the_repl_documents_mcp_tools() {
    let dir = tempfile::tempdir().unwrap();
    let out = ptc_in(
        dir.path(),
        &["--mcp", &format!("bad={}", misbehaving("ok"))],
        Some(":doc tool/echo\n(tool/echo :text \"pairs\")\n"),
    );
    let printed = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(
        printed.contains("tool/echo (text :string) -> :any\n  Say it back"),
        "{printed}"
    );
    assert!(printed.contains("\"pairs\""), "{printed}");
}

#[test]
fn a_cancelled_request_interrupts_its_program() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = RawClient::start(
        dir.path(),
        &["--timeout-ms", "60000", "--max-steps", "1000000000000"],
    );
    client.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "raw-test", "version": "0"}}),
    );
    client.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let id = client.next_id;
    client.next_id += 1;
    client.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                       "params": {"name": "run", "arguments": {"program": "(loop [i 0] (recur (inc i)))"}}}));
    std::thread::sleep(Duration::from_millis(300));
    let cancelled = Instant::now();
    client.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                       "params": {"requestId": id, "reason": "the user gave up"}}),
    );
    // The session runs one program at a time: the next answer comes only
    // once the loop has stopped.
    let r = client.call("run", json!({"program": "(+ 1 1)"}));
    assert_eq!(result_text(&r), "2", "{r}");
    assert!(
        cancelled.elapsed() < Duration::from_secs(5),
        "{:?}",
        cancelled.elapsed()
    );
    drop(client.input.take());
    assert!(client.child.wait().unwrap().success());
}
