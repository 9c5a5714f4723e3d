//! The README's command examples, run: every fenced ```console block is a
//! list of `$ ` command lines (a line ending in `\` continues on the next),
//! each followed by the output it shows. Each command runs under `sh` in a
//! fresh directory holding a copy of `examples/`, with the built `ptc`
//! first on `PATH` and stderr merged into stdout, and its output must be
//! exactly the one shown.

use std::path::Path;
use std::process::Command;

/// One `$ ` command of a console block and the output shown after it.
struct Example {
    line: usize,
    command: String,
    expected: String,
}

/// The examples of every ```console block of `markdown`.
fn examples(markdown: &str) -> Vec<Example> {
    let mut out: Vec<Example> = Vec::new();
    let mut inside = false;
    let mut continued = false;
    for (i, line) in markdown.lines().enumerate() {
        if !inside {
            inside = line.trim_end() == "```console";
            continue;
        }
        if line.starts_with("```") {
            inside = false;
            continue;
        }
        if continued {
            let last = out.last_mut().expect("a continued command");
            last.command.push('\n');
            last.command.push_str(line);
            continued = line.ends_with('\\');
        } else if let Some(command) = line.strip_prefix("$ ") {
            out.push(Example {
                line: i + 1,
                command: command.to_string(),
                expected: String::new(),
            });
            continued = command.ends_with('\\');
        } else {
            let last = out
                .last_mut()
                .unwrap_or_else(|| panic!("README.md:{}: output before any `$ ` line", i + 1));
            last.expected.push_str(line);
            last.expected.push('\n');
        }
    }
    out
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn every_readme_console_example_prints_what_it_shows() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let examples = examples(&readme);
    assert!(
        examples.len() >= 5,
        "README.md has {} console examples",
        examples.len()
    );
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&root.join("examples"), &dir.path().join("examples"));
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_ptc"), bin.join("ptc")).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut failures = Vec::new();
    for example in &examples {
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(format!("exec 2>&1\n{}", example.command))
            .current_dir(dir.path())
            .env("PATH", &path);
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("COMPACT_") {
                command.env_remove(&key);
            }
        }
        let out = command.output().unwrap();
        let actual = String::from_utf8_lossy(&out.stdout);
        if actual != example.expected {
            failures.push(format!(
                "README.md:{}: `{}`\n--- shown\n{}--- printed\n{}",
                example.line, example.command, example.expected, actual
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn console_blocks_are_split_into_commands_and_output() {
    let text = "x\n```console\n$ a \\\n  b\none\n$ c\n```\n$ not\n";
    let found = examples(text);
    assert_eq!(found.len(), 2);
    assert_eq!(
        (
            found[0].line,
            found[0].command.as_str(),
            found[0].expected.as_str()
        ),
        (3, "a \\\n  b", "one\n")
    );
    assert_eq!(
        (found[1].command.as_str(), found[1].expected.as_str()),
        ("c", "")
    );
}
