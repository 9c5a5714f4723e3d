//! The Python package (`python/`): built with maturin into a virtual
//! environment under `target/` (`target/py-venv`, made by
//! `.ci/python-venv` with the pinned python/requirements-dev.txt), then
//! its pytest suite, `mypy --strict` over the examples with the package's
//! stubs, and the agent-loop example run offline.
//!
//! A test binary of its own (`cargo test --test python`), so that it never
//! runs beside the timing-sensitive tests of `tests`.
//!
//! The extension is built with the dev profile into this workspace's
//! target directory, so it reuses the library that `cargo test` has just
//! built; only PyO3 and the extension's own crate are compiled.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn venv() -> PathBuf {
    root().join("target/py-venv")
}

fn show(what: &str, out: &Output) -> String {
    format!(
        "{what}: {}\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The venv with the extension installed (built once per test run).
fn installed() -> &'static Result<PathBuf, String> {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BUILT.get_or_init(|| {
        let setup = Command::new("bash")
            .arg(root().join(".ci/python-venv"))
            .output()
            .map_err(|e| format!("cannot run .ci/python-venv: {e}"))?;
        let venv = venv();
        if !setup.status.success() || !venv.join("bin/maturin").is_file() {
            return Err(show(".ci/python-venv (needs python3 with venv)", &setup));
        }
        let path = format!(
            "{}:{}",
            venv.join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let build = Command::new(venv.join("bin/maturin"))
            .args(["develop", "--locked", "-m"])
            .arg(root().join("python/Cargo.toml"))
            .env("VIRTUAL_ENV", &venv)
            .env("PATH", path)
            .output()
            .map_err(|e| format!("cannot run maturin: {e}"))?;
        if !build.status.success() {
            return Err(show("maturin develop", &build));
        }
        // The extension should link the library this test run compiled
        // (python/Cargo.toml mirrors the test build's features of shared
        // dependencies); a second compile costs CI minutes, so say so.
        let log = String::from_utf8_lossy(&build.stderr);
        if log.contains("Compiling ptc-lisp v") {
            eprintln!(
                "note: maturin compiled the library again instead of reusing the test build's (features or environment of shared dependencies differ; compare with `cargo tree -e features`)"
            );
        }
        Ok(venv)
    })
}

fn python(venv: &Path) -> Command {
    let mut cmd = Command::new(venv.join("bin/python"));
    cmd.current_dir(root().join("python"))
        .env("PTC_BIN", env!("CARGO_BIN_EXE_ptc"))
        .env("PYTHONDONTWRITEBYTECODE", "1");
    cmd
}

fn run(mut cmd: Command, what: &str) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    assert!(out.status.success(), "{}", show(what, &out));
    out
}

#[test]
fn pytest_suite() {
    let venv = installed().as_ref().unwrap_or_else(|e| panic!("{e}"));
    let mut cmd = python(venv);
    cmd.args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]);
    let out = run(cmd, "pytest python/tests");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary = stdout.lines().last().unwrap_or_default();
    assert!(
        summary.contains(" passed") && !summary.contains("failed"),
        "{summary}"
    );
}

#[test]
fn examples_pass_mypy_strict_with_the_stubs() {
    let venv = installed().as_ref().unwrap_or_else(|e| panic!("{e}"));
    let mut cmd = python(venv);
    cmd.args([
        "-m",
        "mypy",
        "--strict",
        "--no-incremental",
        "--cache-dir",
        "/dev/null",
        "examples",
    ]);
    let out = run(cmd, "mypy --strict python/examples");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("Success"));
}

#[test]
fn agent_loop_example_runs_offline() {
    let venv = installed().as_ref().unwrap_or_else(|e| panic!("{e}"));
    let mut cmd = python(venv);
    cmd.args([
        "examples/agent_loop.py",
        "--offline",
        "--max-context-tokens",
        "1700",
    ]);
    let out = run(cmd, "python examples/agent_loop.py --offline");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("compacted:"), "{stdout}");
    let answer = stdout.find("{\n").map(|i| &stdout[i..]).unwrap_or_default();
    let answer: serde_json::Value =
        serde_json::from_str(answer).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(
        answer,
        serde_json::json!({"customer": "Ada", "choices": [
            {"sku": "L-100", "price": 2900}, {"sku": "L-200", "price": 8900}]})
    );
}
