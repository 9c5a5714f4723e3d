//! What `ptc` reads at its edges is bounded (issue 40): configuration
//! files (size, YAML nesting), `ptc compact`'s history from a file, a
//! device or an endless pipe, scripts replayed as a model, the REPL's
//! history file; and `ptc config show` prints values of any length. Each
//! repro ends with a clear error soon; the ones that would exhaust memory
//! run under an address-space limit (`prlimit`).

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::util::text;

/// The address space the adversarial runs get: far above what a bounded
/// read needs, far below what an unbounded one would take.
const ADDRESS_SPACE: &str = "--as=1500000000";

/// `ptc args` in `dir` under the address-space limit; its output and how
/// long it took.
fn limited(dir: &Path, args: &[&str], stdin: Stdio) -> (Output, Duration) {
    let started = Instant::now();
    let out = Command::new("prlimit")
        .arg(ADDRESS_SPACE)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_ptc"))
        .args(args)
        .current_dir(dir)
        .stdin(stdin)
        .output()
        .expect("prlimit runs ptc");
    (out, started.elapsed())
}

fn write(dir: &Path, name: &str, content: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    path.display().to_string()
}

#[test]
fn a_deeply_nested_yaml_configuration_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "flow.yaml",
            format!("policy: {}{}\n", "[".repeat(100_000), "]".repeat(100_000)),
            "at line 1 column 40",
        ),
        (
            "maps.yaml",
            format!(
                "policy: {}1{}\n",
                "{a: ".repeat(100_000),
                "}".repeat(100_000)
            ),
            "at line 1 column 133",
        ),
        (
            "open.yaml",
            format!("a: {}", "[".repeat(500_000)),
            "at line 1 column 35",
        ),
        (
            "keys.yaml",
            (0..1000)
                .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
                .collect(),
            "at line 33 column 33",
        ),
        (
            "lines.yaml",
            format!("a:\n{}", " [\n".repeat(200_000)),
            "at line 32 column 2",
        ),
    ];
    for (name, content, place) in cases {
        let file = write(dir.path(), name, &content);
        for args in [
            vec!["config", "check", file.as_str()],
            vec!["config", "show", "--config", file.as_str()],
            vec!["compact", "--config", file.as_str(), "-"],
        ] {
            let (out, took) = limited(dir.path(), &args, Stdio::null());
            let stderr = text(&out.stderr);
            assert!(took < Duration::from_secs(5), "{name}: {took:?}");
            assert!(matches!(out.status.code(), Some(1 | 2)), "{name}: {stderr}");
            assert!(
                stderr.contains(&format!(
                    "cannot read the configuration `{file}`: it nests deeper than 32 levels {place}"
                )),
                "{name} {args:?}: {stderr}"
            );
        }
    }
    // Quoted brackets, comments and block scalars are text, not nesting.
    let text_only = format!(
        "redaction:\n  patterns:\n    - \"{0}\"\n    - '{0}'\n  # {0}\nsummary:\n  llm: |\n    {0}\n",
        "[".repeat(1000)
    );
    let file = write(dir.path(), "fine.yaml", &text_only);
    let (out, _) = limited(dir.path(), &["config", "check", &file], Stdio::null());
    let stderr = text(&out.stderr);
    assert!(!stderr.contains("nests deeper"), "{stderr}");
}

#[test]
fn configuration_files_are_read_up_to_a_limit() {
    let dir = tempfile::tempdir().unwrap();
    let big = write(
        dir.path(),
        "big.toml",
        &format!("# {}\nmax_context_tokens = 9000\n", "x".repeat(2 << 20)),
    );
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero.yaml")).unwrap();
    for file in [big.as_str(), "zero.yaml"] {
        for args in [
            vec!["config", "check", file],
            vec!["eval", "1"],
            vec!["compact", "--config", file, "-"],
        ] {
            let args: Vec<&str> = if args[0] == "eval" {
                // The REPL reads the configuration too.
                vec!["--config", file]
            } else {
                args
            };
            let (out, took) = limited(dir.path(), &args, Stdio::null());
            let stderr = text(&out.stderr);
            assert!(took < Duration::from_secs(5), "{took:?}");
            assert!(matches!(out.status.code(), Some(1 | 2)), "{stderr}");
            assert!(
                stderr.contains(&format!(
                    "the configuration `{file}` is larger than the limit of 1048576 bytes (1 MiB) \
                     for a configuration file (input-limit-exceeded)"
                )),
                "{args:?}: {stderr}"
            );
        }
    }
}

#[test]
fn config_show_prints_values_of_any_length() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = "p".repeat(70_000);
    write(
        dir.path(),
        "ptc.toml",
        &format!("[storage]\nprefix = \"{prefix}\"\n"),
    );
    let (out, _) = limited(dir.path(), &["config", "show"], Stdio::null());
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let line = stdout
        .lines()
        .find(|l| l.starts_with("prefix = "))
        .expect("the prefix is shown");
    assert!(line.contains(&prefix), "{}", &line[..100]);
    assert!(
        line.ends_with("# ptc.toml:2"),
        "{}",
        &line[line.len() - 40..]
    );
    // Short values still line up.
    let short: Vec<usize> = stdout
        .lines()
        .filter(|l| l.contains("  # ") && !l.starts_with("prefix"))
        .map(|l| l.find("  # ").unwrap())
        .collect();
    assert!(short.windows(2).all(|w| w[0] == w[1]), "{stdout}");
}

#[test]
fn compact_reads_at_most_its_input_limit() {
    let dir = tempfile::tempdir().unwrap();
    let expected = "is larger than the limit of 67108864 bytes (64 MiB) for a history; \
                    --max-input-bytes raises it (input-limit-exceeded)";
    let (out, took) = limited(dir.path(), &["compact", "/dev/zero"], Stdio::null());
    assert_eq!(out.status.code(), Some(2));
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert!(
        text(&out.stderr).contains(&format!("the history `/dev/zero` {expected}")),
        "{}",
        text(&out.stderr)
    );
    // An endless standard input: `yes` writes until the pipe closes.
    let mut yes = Command::new("yes")
        .arg(r#"{"role": "user", "content": "again"}"#)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let (out, took) = limited(
        dir.path(),
        &["compact", "-"],
        Stdio::from(yes.stdout.take().unwrap()),
    );
    let _ = yes.kill();
    let _ = yes.wait();
    assert_eq!(out.status.code(), Some(2));
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert!(
        text(&out.stderr).contains(&format!("the history on standard input {expected}")),
        "{}",
        text(&out.stderr)
    );
    // The limit is a flag.
    let history = write(
        dir.path(),
        "h.jsonl",
        &"{\"role\": \"user\", \"content\": \"hello\"}\n".repeat(100),
    );
    let (out, _) = limited(
        dir.path(),
        &["compact", "--max-input-bytes", "1000", &history],
        Stdio::null(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("is larger than the limit of 1000 bytes for a history"),
        "{}",
        text(&out.stderr)
    );
    // Tool schemas are read like a manifest, at most 1 MiB.
    let (out, _) = limited(
        dir.path(),
        &["compact", "--tools-schema", "/dev/zero", &history],
        Stdio::null(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains(
            "the tool schemas `/dev/zero` is larger than the limit of 1048576 bytes (1 MiB)"
        ),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_script_model_is_read_up_to_the_history_limit() {
    let dir = tempfile::tempdir().unwrap();
    let (out, took) = limited(
        dir.path(),
        &["agent", "--llm", "script:/dev/zero", "--mission", "x"],
        Stdio::null(),
    );
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert!(matches!(out.status.code(), Some(1 | 2)));
    assert!(
        text(&out.stderr).contains(
            "The script `/dev/zero` is larger than the limit of 67108864 bytes (64 MiB) for a script"
        ),
        "{}",
        text(&out.stderr)
    );
}

#[cfg(unix)]
#[test]
fn the_repl_does_not_read_a_history_file_that_is_not_a_regular_file() {
    use expectrl::{Eof, Expect, Session};
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("history");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ptc"));
    cmd.env("PTC_HISTORY", &fifo).env("NO_COLOR", "1");
    let mut session = Session::spawn(cmd).unwrap();
    session.set_expect_timeout(Some(Duration::from_secs(30)));
    session
        .expect("is not a regular file; history is off")
        .unwrap();
    session.expect("ptc> ").unwrap();
    // Entries are not written to it either (that would block).
    session.send_line("(+ 1 2)").unwrap();
    session.expect("3").unwrap();
    session.send_line(":quit").unwrap();
    session.expect(Eof).unwrap();
}
