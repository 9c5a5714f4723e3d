//! Test helpers: evaluate source and compare the printed result.

use ptc_lisp::error::Error;
use ptc_lisp::eval::{self, DataHost, Globals, Limits, Program, RunOptions};
use ptc_lisp::value::{pr_str, Value};

/// Evaluate with default limits and the given JSON object as `data/`.
pub fn eval_with(src: &str, data: &str, limits: Limits) -> Result<Value, Error> {
    let json: serde_json::Value = serde_json::from_str(data).expect("test data is JSON");
    let host = DataHost::from_json_object(&json).expect("test data is an object");
    let program = Program::compile(src)?;
    let out = eval::run(
        &program,
        &host,
        &Globals::default(),
        RunOptions {
            limits,
            ..Default::default()
        },
    );
    eval::finish(out.result)
}

pub fn eval(src: &str) -> Result<Value, Error> {
    eval_with(src, "{}", relaxed())
}

/// The default limits with a generous wall-clock bound: for tests that
/// are not about the time limit, so a busy machine (or a backtrace
/// captured under `RUST_BACKTRACE=1`) cannot make them fail.
pub fn relaxed() -> Limits {
    Limits {
        timeout: std::time::Duration::from_secs(120),
        ..Limits::default()
    }
}

/// A session with [`relaxed`] limits.
pub fn session() -> ptc_lisp::session::Session {
    ptc_lisp::session::Session::new().with_limits(relaxed())
}

/// Assert that `src` evaluates to a value printing as `expected`.
macro_rules! assert_eval {
    ($src:expr, $expected:expr) => {{
        match $crate::util::eval($src) {
            Ok(v) => assert_eq!(ptc_lisp::value::pr_str(&v), $expected, "source: {}", $src),
            Err(e) => panic!("`{}` failed: {}", $src, e),
        }
    }};
}

/// Assert that `src` fails with an error whose code or message contains
/// `fragment`.
macro_rules! assert_fails {
    ($src:expr, $fragment:expr) => {{
        match $crate::util::eval($src) {
            Ok(v) => panic!(
                "`{}` should fail but gave {}",
                $src,
                ptc_lisp::value::pr_str(&v)
            ),
            Err(e) => {
                let text = format!("{} {}", e, e.hint().unwrap_or(""));
                assert!(
                    text.contains($fragment),
                    "`{}` failed with `{}`, expected `{}`",
                    $src,
                    text,
                    $fragment
                );
            }
        }
    }};
}

pub fn printed(v: &Value) -> String {
    pr_str(v)
}

/// Compare `actual` with `tests/golden/{name}`. With `UPDATE_GOLDEN=1` in
/// the environment the file is (re)written instead:
/// `UPDATE_GOLDEN=1 cargo test golden`.
pub fn assert_golden(name: &str, actual: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().expect("golden dir")).expect("create tests/golden");
        std::fs::write(&path, actual).expect("write golden file");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "missing golden file {}; run `UPDATE_GOLDEN=1 cargo test golden`",
            path.display()
        )
    });
    if actual != expected {
        let first = actual
            .lines()
            .zip(expected.lines())
            .position(|(a, e)| a != e)
            .unwrap_or_else(|| actual.lines().count().min(expected.lines().count()));
        panic!(
            "{} differs from the rendering (first difference on line {}); \
             run `UPDATE_GOLDEN=1 cargo test golden` if the change is intended\n\
             --- expected\n{expected}\n--- actual\n{actual}",
            path.display(),
            first + 1
        );
    }
}

/// `args` with a generous program time limit when they name none: for
/// `eval` and `run` `--timeout-ms 120000`, for `agent`
/// `--program-timeout-ms 120000`. The default of one second is for
/// people; a test that is not about the time limit must not fail on a
/// busy machine or while `RUST_BACKTRACE=1` resolves a backtrace. Tests
/// of the limit name theirs.
pub fn relaxed_args<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let flag = match args.first() {
        Some(&"eval") | Some(&"run") => "--timeout-ms",
        Some(&"agent") => "--program-timeout-ms",
        _ => return args.to_vec(),
    };
    if args.iter().any(|a| a.starts_with(flag)) {
        return args.to_vec();
    }
    let mut out = vec![args[0], flag, "120000"];
    out.extend_from_slice(&args[1..]);
    out
}

/// Run the `ptc` binary with `args` ([`relaxed_args`]), feeding `stdin`
/// if given.
pub fn ptc(args: &[&str], stdin: Option<&str>) -> std::process::Output {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_ptc"))
        .args(relaxed_args(args))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ptc runs");
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
    }
    drop(child.stdin.take());
    child.wait_with_output().unwrap()
}

/// Bytes of a process's output as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The first entry (one model call) of a `--transcript` JSON Lines file.
pub fn first_transcript_entry(path: &std::path::Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).expect("the transcript exists");
    let line = text.lines().next().expect("the transcript has an entry");
    serde_json::from_str(line).expect("each transcript line is JSON")
}

/// A fresh directory for one test, removed when the test passes (kept
/// for a look when it fails).
pub struct TempDir(std::path::PathBuf);

impl std::ops::Deref for TempDir {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// `ptc-NAME-PID` in the system's temporary directory, empty.
pub fn temp_dir(name: &str) -> TempDir {
    let dir = std::env::temp_dir().join(format!("ptc-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    TempDir(dir)
}
