//! The `ptc` command: argument parsing and wiring only.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use ptc_lisp::error::Error;
use ptc_lisp::eval::{self, DataHost, Globals, Limits, Outcome, Program, RunOptions};
use ptc_lisp::value::{pr_str, write_pr_bounded};

/// Results that share structure can print exponentially large; the
/// printed result is cut at this size.
const MAX_RESULT_BYTES: usize = 64 * 1024 * 1024;

#[derive(Parser)]
#[command(
    name = "ptc",
    version,
    about = "PTC-Lisp: a safe Clojure subset for Programmatic Tool Calling"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Evaluate an expression and print the result in Clojure notation
    Eval {
        /// The program text, or `-` to read it from standard input
        expr: String,
        #[command(flatten)]
        run: RunArgs,
    },
    /// Evaluate a program file and print the result in Clojure notation
    Run {
        /// The program file (`-` for standard input)
        file: PathBuf,
        #[command(flatten)]
        run: RunArgs,
    },
}

#[derive(Args)]
struct RunArgs {
    /// A JSON object file whose keys become `data/` values
    #[arg(long, value_name = "FILE.json")]
    data: Option<PathBuf>,
    /// Wall-clock limit for the program, in milliseconds
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    timeout_ms: u64,
    /// Limit on evaluation steps (function calls and loop iterations)
    #[arg(long, value_name = "N")]
    max_steps: Option<u64>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Eval { expr, run }) => {
            let source = if expr == "-" {
                match read_stdin() {
                    Ok(s) => s,
                    Err(e) => return usage_error(&e),
                }
            } else {
                expr
            };
            evaluate(&source, None, &run)
        }
        Some(Command::Run { file, run }) => {
            let source = if file.as_os_str() == "-" {
                read_stdin()
            } else {
                std::fs::read_to_string(&file)
                    .map_err(|e| format!("cannot read `{}`: {e}", file.display()))
            };
            match source {
                Ok(s) => evaluate(&s, Some(&file), &run),
                Err(e) => usage_error(&e),
            }
        }
        None => {
            use clap::CommandFactory;
            let _ = Cli::command().print_help();
            ExitCode::from(2)
        }
    }
}

fn read_stdin() -> Result<String, String> {
    let mut s = String::new();
    std::io::stdin()
        .read_to_string(&mut s)
        .map_err(|e| format!("cannot read standard input: {e}"))?;
    Ok(s)
}

fn usage_error(message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(2)
}

fn load_data(path: &Path) -> Result<DataHost, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read data file `{}`: {e}", path.display()))?;
    let json: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("data file `{}` is not valid JSON: {e}", path.display()))?;
    DataHost::from_json_object(&json).ok_or_else(|| {
        format!(
            "data file `{}` must contain a JSON object (its keys become `data/` names)",
            path.display()
        )
    })
}

fn evaluate(source: &str, file: Option<&Path>, args: &RunArgs) -> ExitCode {
    let host = match &args.data {
        Some(path) => match load_data(path) {
            Ok(h) => h,
            Err(e) => return usage_error(&e),
        },
        None => DataHost::default(),
    };
    let mut limits = Limits {
        timeout: Duration::from_millis(args.timeout_ms),
        ..Limits::default()
    };
    if let Some(steps) = args.max_steps {
        limits.max_steps = steps;
    }
    let program = match Program::compile(source) {
        Ok(p) => p,
        Err(e) => return report(&e, source, file),
    };
    let out = eval::run(
        &program,
        &host,
        &Globals::default(),
        RunOptions {
            limits,
            ..RunOptions::default()
        },
    );
    for line in &out.prints {
        println!("{line}");
    }
    match out.result {
        Ok(Outcome::Value(v) | Outcome::Return(v)) => {
            let mut text = String::new();
            if !write_pr_bounded(&mut text, &v, MAX_RESULT_BYTES) {
                text.push_str(" ... (result cut at 64 MiB)");
            }
            println!("{text}");
            ExitCode::SUCCESS
        }
        Ok(Outcome::Fail(v)) => {
            eprintln!("error: program failed: {}", pr_str(&v));
            ExitCode::from(1)
        }
        Err(e) => report(&e, source, file),
    }
}

/// Print an error with its location, the source line and a caret.
fn report(e: &Error, source: &str, file: Option<&Path>) -> ExitCode {
    let location = match (file, e.span()) {
        (Some(f), Some(s)) => format!("{}:{}:{}: ", f.display(), s.line, s.column),
        (None, Some(s)) => format!("{}:{}: ", s.line, s.column),
        (Some(f), None) => format!("{}: ", f.display()),
        (None, None) => String::new(),
    };
    eprintln!("error: {location}{} ({})", e.message(), e.code());
    if let Some(span) = e.span() {
        if let Some(line) = source.lines().nth(span.line.saturating_sub(1) as usize) {
            if line.chars().count() <= 200 {
                eprintln!("  | {line}");
                eprintln!(
                    "  | {}^",
                    " ".repeat(span.column.saturating_sub(1) as usize)
                );
            }
        }
    }
    if let Some(hint) = e.hint() {
        eprintln!("hint: {hint}");
    }
    ExitCode::from(1)
}
