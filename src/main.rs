//! The `ptc` command: argument parsing and wiring only.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use ptc_lisp::agent::ToolManifest;
use ptc_lisp::eval::Limits;
use ptc_lisp::session::{Session, TurnError, TurnOutcome};
use ptc_lisp::value::{pr_str, write_pr_bounded};

/// Results that share structure can print exponentially large; the
/// printed result is cut at this size.
const MAX_RESULT_BYTES: usize = 64 * 1024 * 1024;

#[derive(Parser)]
#[command(
    name = "ptc",
    version,
    about = "PTC-Lisp: a safe Clojure subset for Programmatic Tool Calling",
    long_about = "PTC-Lisp: a safe Clojure subset for Programmatic Tool Calling.\n\n\
                  Without a subcommand, `ptc` starts the REPL (the options below are its \
                  options); with piped input it runs each form as a turn.",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    repl: ReplArgs,
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
    /// A tool manifest (JSON or TOML) whose tools become `tool/` functions
    #[arg(long, value_name = "FILE")]
    tools: Option<PathBuf>,
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
            let args = cli.repl;
            let config = ptc_lisp::repl::ReplConfig {
                prelude: args.prelude.clone(),
                max_turns: usize::try_from(args.max_turns).unwrap_or(usize::MAX),
                mission: args.mission.clone().unwrap_or_default(),
                compression: args.compression(),
            };
            let run = args.run;
            let code = ptc_lisp::repl::run(config, Box::new(move || build_session(&run)));
            ExitCode::from(u8::try_from(code).unwrap_or(1))
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

fn load_data(path: &Path) -> Result<serde_json::Value, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read data file `{}`: {e}", path.display()))?;
    let json: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("data file `{}` is not valid JSON: {e}", path.display()))?;
    if !json.is_object() {
        return Err(format!(
            "data file `{}` must contain a JSON object (its keys become `data/` names)",
            path.display()
        ));
    }
    Ok(json)
}

/// A session with the data and tools the options name.
fn build_session(args: &RunArgs) -> Result<Session, String> {
    let mut limits = Limits {
        timeout: Duration::from_millis(args.timeout_ms),
        ..Limits::default()
    };
    if let Some(steps) = args.max_steps {
        limits.max_steps = steps;
    }
    let mut session = Session::new().with_limits(limits);
    if let Some(path) = &args.data {
        let json = load_data(path)?;
        session
            .set_data_json(&json)
            .map_err(|e| e.message().to_string())?;
    }
    if let Some(path) = &args.tools {
        let manifest = ToolManifest::load(path).map_err(|e| e.to_string())?;
        manifest
            .register_into(&mut session)
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(session)
}

fn evaluate(source: &str, file: Option<&Path>, args: &RunArgs) -> ExitCode {
    let mut session = match build_session(args) {
        Ok(s) => s,
        Err(e) => return usage_error(&e),
    };
    let turn = session.eval(source);
    for line in &turn.prints {
        println!("{line}");
    }
    match &turn.outcome {
        TurnOutcome::Value { value } | TurnOutcome::Return { value } => {
            let mut text = String::new();
            if !write_pr_bounded(&mut text, value, MAX_RESULT_BYTES) {
                text.push_str(" ... (result cut at 64 MiB)");
            }
            println!("{text}");
            ExitCode::SUCCESS
        }
        TurnOutcome::Fail { value } => {
            eprintln!("error: program failed: {}", pr_str(value));
            ExitCode::from(1)
        }
        TurnOutcome::Error { error } => report(error, source, file),
    }
}

/// Print an error with its location, the source line and a caret.
fn report(e: &TurnError, source: &str, file: Option<&Path>) -> ExitCode {
    let position = e.line.zip(e.column);
    let location = match (file, position) {
        (Some(f), Some((l, c))) => format!("{}:{l}:{c}: ", f.display()),
        (None, Some((l, c))) => format!("{l}:{c}: "),
        (Some(f), None) => format!("{}: ", f.display()),
        (None, None) => String::new(),
    };
    eprintln!("error: {location}{} ({})", e.message, e.code);
    if let Some((line, column)) = position {
        if let Some(text) = source.lines().nth(line.saturating_sub(1) as usize) {
            if text.chars().count() <= 200 {
                eprintln!("  | {text}");
                eprintln!("  | {}^", " ".repeat(column.saturating_sub(1) as usize));
            }
        }
    }
    if let Some(hint) = &e.hint {
        eprintln!("hint: {hint}");
    }
    ExitCode::from(1)
}

/// Options of the REPL (`ptc` without a subcommand).
#[derive(Args)]
struct ReplArgs {
    #[command(flatten)]
    run: RunArgs,
    /// A file of definitions evaluated first, as a turn
    #[arg(long, value_name = "FILE")]
    prelude: Option<PathBuf>,
    /// The run length `:context` renders for (turns left, final turn)
    #[arg(long, value_name = "N", default_value_t = ptc_lisp::compression::DEFAULT_MAX_TURNS as u64,
          value_parser = clap::value_parser!(u64).range(1..))]
    max_turns: u64,
    /// The mission `:context` and `:tokens` render first
    #[arg(long, value_name = "TEXT")]
    mission: Option<String>,
    /// Show the full, uncompressed history in `:context`
    #[arg(long, conflicts_with_all = ["println_limit", "tool_call_limit"])]
    no_compression: bool,
    /// println calls the compressed context keeps [default: 15]
    #[arg(long, value_name = "N")]
    println_limit: Option<usize>,
    /// Tool calls the compressed context keeps [default: 20]
    #[arg(long, value_name = "N")]
    tool_call_limit: Option<usize>,
}

impl ReplArgs {
    fn compression(&self) -> ptc_lisp::compression::CompressionSetting {
        use ptc_lisp::compression::{CompressionOptions, CompressionSetting, SingleUserCoalesced};
        if self.no_compression {
            return CompressionSetting::Off;
        }
        if self.println_limit.is_none() && self.tool_call_limit.is_none() {
            return CompressionSetting::On;
        }
        let defaults = CompressionOptions::default();
        CompressionSetting::strategy_with(
            SingleUserCoalesced,
            CompressionOptions {
                println_limit: self.println_limit.unwrap_or(defaults.println_limit),
                tool_call_limit: self.tool_call_limit.unwrap_or(defaults.tool_call_limit),
                ..defaults
            },
        )
    }
}
