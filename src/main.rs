//! The `ptc` command: argument parsing and wiring only.

/// `eprintln!` for the binary: control characters escaped, a failed write
/// ignored ([`cli::out::err`]).
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::cli::out::err(&format!($($arg)*))
    };
}

mod cli;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use ptc_lisp::eval::Limits;
use ptc_lisp::session::{Session, TurnError, TurnOutcome};
use ptc_lisp::value::pr_str;

/// The most bytes of a result `ptc eval`, `ptc run` and `ptc agent` print
/// (`--max-result-bytes`); a longer result is cut with a marker giving the
/// limit and how much more there was. Results that share structure can
/// print exponentially large.
const MAX_RESULT_BYTES: usize = 1024 * 1024;

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
    Eval(EvalCommand),
    /// Evaluate a program file and print the result in Clojure notation
    Run(RunCommand),
    /// Run a mission as a multi-turn agent: a model writes PTC-Lisp, the
    /// session runs it, until (return value), (fail reason) or the turn
    /// limit
    Agent(Box<AgentArgs>),
    /// Compact a chat history (one JSON message per line) to fit a token
    /// budget: protected messages and recent turns kept, the rest
    /// summarized
    Compact(Box<cli::compact::CompactArgs>),
    /// Show or check the history layer's configuration (`ptc.toml`,
    /// `COMPACT_*` variables)
    #[command(subcommand)]
    Config(cli::config::ConfigCommand),
    /// Print the exact messages `ptc agent` would send on its first turn
    /// (system prompt and first user message) with token counts, without
    /// calling a model
    Prompt(Box<cli::prompt::PromptArgs>),
    /// Print a shell completion script: `source <(ptc completions bash)`,
    /// `ptc completions zsh > ~/.zfunc/_ptc`, `ptc completions fish >
    /// ~/.config/fish/completions/ptc.fish`
    Completions {
        /// The shell
        shell: clap_complete::Shell,
    },
    /// Serve a PTC-Lisp session over MCP on stdio: tools `run` (a program,
    /// definitions persist across calls), `reset` and `describe`
    McpServer(Box<cli::mcp::McpServerArgs>),
}

/// `ptc eval`'s arguments.
#[derive(Args, Debug)]
struct EvalCommand {
    /// The program text, or `-` to read it from standard input (text
    /// starting with a hyphen, such as `-17`, is an expression)
    #[arg(allow_hyphen_values = true)]
    expr: String,
    #[command(flatten)]
    run: RunArgs,
    #[command(flatten)]
    output: JsonFlag,
}

/// `ptc run`'s arguments.
#[derive(Args, Debug)]
struct RunCommand {
    /// The program file (`-` for standard input)
    file: PathBuf,
    #[command(flatten)]
    run: RunArgs,
    #[command(flatten)]
    output: JsonFlag,
}

/// `--json` of `eval` and `run`.
#[derive(Args, Debug)]
struct JsonFlag {
    /// Print one JSON object on stdout: result (as JSON and in Clojure
    /// notation), printed lines, error, steps and timing (exit codes
    /// unchanged; schema in the README)
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct RunArgs {
    /// A JSON object file whose keys become `data/` values
    #[arg(long, value_name = "FILE.json")]
    data: Option<PathBuf>,
    /// A tool manifest (JSON or TOML) whose tools become `tool/` functions
    #[arg(long, value_name = "FILE")]
    tools: Option<PathBuf>,
    #[command(flatten)]
    mcp: cli::mcp::McpArgs,
    /// Wall-clock limit for the program, in milliseconds (at least 1)
    #[arg(long, value_name = "MS", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(1..))]
    timeout_ms: u64,
    /// Limit on evaluation steps: calls of user functions, loop and `for`
    /// iterations and top-level forms; builtin calls are not steps (their
    /// work is held by the time limit) (at least 1) [default: 10000000]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_steps: Option<u64>,
    /// The most heap memory the session's turns may add together, in bytes:
    /// definitions persist across the REPL's turns; a turn that would
    /// cross it fails with the memory error and keeps no definition
    /// [default: 2147483648 (2 GiB)]
    #[arg(long, value_name = "BYTES")]
    max_session_memory: Option<usize>,
    /// The largest `--data` file read, in bytes [default: 67108864 (64 MiB)]
    #[arg(long, value_name = "N", default_value_t = ptc_lisp::input::MAX_DATA_BYTES,
          hide_default_value = true)]
    max_data_bytes: u64,
    /// The most bytes of the printed result (`eval`, `run`); longer results
    /// are cut with a marker [default: 1048576 (1 MiB)]
    #[arg(long, value_name = "N", default_value_t = MAX_RESULT_BYTES, hide_default_value = true)]
    max_result_bytes: usize,
    /// A file of definitions evaluated (as a turn of its own) before the
    /// program, as the REPL's `--prelude`; a failing prelude is an error
    #[arg(long, value_name = "FILE")]
    prelude: Option<PathBuf>,
    /// Print on stderr the time of each phase (read data, parse, analyze,
    /// eval, print), the steps and the peak memory: one line, or one JSON
    /// object with `--stats=json`
    #[arg(long, value_name = "FORMAT", num_args = 0..=1, default_missing_value = "text",
          require_equals = true)]
    stats: Option<cli::stats::StatsFormat>,
    /// Evaluate the program N times in this process on the same loaded data
    /// (each run from a fresh session) and report the median evaluation
    /// time with `--stats`; the output is the last run's
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,
}

/// Counts the heap, so programs' memory limit can be enforced.
#[global_allocator]
static ALLOC: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, usize::MAX);

fn main() -> ExitCode {
    // `ptc` started again as the guard of its tools (`cli/child_guard.rs`).
    #[cfg(unix)]
    if let Some(code) = cli::child_guard::run_if_asked() {
        return code;
    }
    ptc_lisp::heap::count_with(|| ALLOC.allocated());
    // Tools and MCP servers die with `ptc`, however it ends.
    #[cfg(unix)]
    cli::child_guard::install();
    let invocation = match cli::quick_parse::eval_or_run(std::env::args_os()) {
        Some(command) => Invocation::Command(command),
        None => Invocation::from(parse_command_line()),
    };
    let code = run_command(invocation);
    // MCP servers started for the command end with it.
    ptc_lisp::mcp::shutdown_all();
    code
}

/// The command line; help and the version go to stdout through
/// `cli::out` (a failed write is an error like any output's), usage
/// errors to stderr with status 2.
fn parse_command_line() -> Cli {
    match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            let _ = e.print();
            cli::out::end(e.exit_code())
        }
        Err(e) => {
            let text = if cli::out::stdout_is_terminal() {
                e.render().ansi().to_string()
            } else {
                e.render().to_string()
            };
            cli::out::raw(text.as_bytes());
            cli::out::end(e.exit_code())
        }
    }
}

/// What the command line asks for: a subcommand, or the REPL (no
/// subcommand) with its options.
enum Invocation {
    Command(Command),
    Repl(Box<ReplArgs>),
}

impl From<Cli> for Invocation {
    fn from(cli: Cli) -> Invocation {
        match cli.command {
            Some(command) => Invocation::Command(command),
            None => Invocation::Repl(Box::new(cli.repl)),
        }
    }
}

fn run_command(invocation: Invocation) -> ExitCode {
    // SIGINT, SIGTERM, SIGHUP and SIGQUIT kill the running tools' process
    // groups (and MCP servers) before `ptc` exits. The interactive REPL keeps Ctrl-C for stopping an
    // evaluation (its own handler) and the agent writes the transcript
    // line of the interrupted turn first (`agent_command`).
    let command = match invocation {
        Invocation::Command(command) => command,
        Invocation::Repl(args) => return repl_command(*args),
    };
    match &command {
        Command::Agent(_)
        | Command::Compact(_)
        | Command::Config(_)
        | Command::Completions { .. } => {}
        Command::Eval(EvalCommand { run, .. }) | Command::Run(RunCommand { run, .. })
            if run.tools.is_none() && run.mcp.servers.is_empty() =>
        {
            // No tool can start a process: exiting is all there is to do,
            // and needs no thread (a start costs about 0.2 ms less).
            signals::exit_on(signals::INT_TERM);
        }
        Command::Eval(_) | Command::Run(_) | Command::McpServer(_) | Command::Prompt(_) => {
            // `prompt` starts the MCP servers it lists the tools of.
            signals::on_signal(signals::STOP, |_| {});
        }
    }
    match command {
        Command::Eval(EvalCommand {
            expr,
            run,
            output: JsonFlag { json },
        }) => {
            let source = if expr == "-" {
                match read_stdin() {
                    Ok(s) => s,
                    Err(e) => return failure(&e, json),
                }
            } else {
                expr
            };
            evaluate(&source, None, &run, json)
        }
        Command::Run(RunCommand {
            file,
            run,
            output: JsonFlag { json },
        }) => {
            let source = if file.as_os_str() == "-" {
                read_stdin()
            } else {
                ptc_lisp::input::read_program_file(&file)
                    .map_err(|e| e.describe(&format!("`{}`", file.display())))
            };
            match source {
                Ok(s) => evaluate(&s, Some(&file), &run, json),
                Err(e) => failure(&e, json),
            }
        }
        Command::Agent(args) => agent_command(&args),
        Command::Compact(args) => cli::compact::run(&args),
        Command::Config(command) => cli::config::run(&command),
        Command::Prompt(args) => {
            // Every message's tokens are counted.
            ptc_lisp::tokens::preload(
                args.model
                    .as_deref()
                    .unwrap_or(cli::prompt::DEFAULT_COUNTING_MODEL),
            );
            let mission = match mission_text(&args.mission) {
                Ok(m) => m,
                Err(e) => return usage_error(&e),
            };
            let tools = match cli::mcp::ToolSources::load(args.tools.as_deref(), &args.mcp) {
                Ok(t) => t,
                Err(e) => return usage_error(&e),
            };
            match session_with(
                args.data.as_deref(),
                args.max_data_bytes,
                &tools,
                Limits::default(),
            )
            .and_then(|session| with_prelude(session, args.prelude.as_deref()))
            {
                Ok(session) => cli::prompt::run(&args, mission, session),
                Err(e) => usage_error(&e),
            }
        }
        Command::McpServer(args) => cli::mcp::run(&args),
        Command::Completions { shell } => {
            use clap::CommandFactory;
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "ptc", &mut script);
            cli::out::raw(&script);
            ExitCode::SUCCESS
        }
    }
}

/// `ptc` without a subcommand: the REPL.
fn repl_command(args: ReplArgs) -> ExitCode {
    use std::io::IsTerminal;
    // At a terminal the REPL keeps Ctrl-C for stopping an evaluation (its
    // own handler); piped, SIGINT ends it as SIGTERM does.
    let signals = if std::io::stdin().is_terminal() {
        signals::STOP_BUT_INT
    } else {
        signals::STOP
    };
    signals::on_signal(signals, |_| {});
    let mut args = args;
    // The REPL runs the prelude itself (showing its errors and
    // running it again after `:reset`), not the session factory.
    let prelude = args.run.prelude.take();
    let (history, recorder) = match repl_history(&args.budget) {
        Ok(h) => h,
        Err(e) => return usage_error(&e),
    };
    let config = ptc_lisp::repl::ReplConfig {
        prelude,
        max_turns: usize::try_from(args.max_turns).unwrap_or(usize::MAX),
        mission: args.mission.clone().unwrap_or_default(),
        compression: args.compression(),
        system_prompt: ptc_lisp::agent::prompt::system_prompt(
            ptc_lisp::agent::prompt::PromptOptions {
                single_shot: args.max_turns == 1,
                signature: None,
            },
        ),
        policy: history.policy(),
        counting_model: history.model.unwrap_or_else(|| "gpt-4o".into()),
        recorder: Some(recorder.clone()),
    };
    let run = args.run;
    let tools = match cli::mcp::ToolSources::load(run.tools.as_deref(), &run.mcp) {
        Ok(t) => t,
        Err(e) => return usage_error(&e),
    };
    let code = ptc_lisp::repl::run(config, Box::new(move || build_session(&run, &tools)));
    if let Ok(mut r) = recorder.lock() {
        r.finish();
    }
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// The REPL's history-layer configuration and the recorder of its
/// `:compact` rounds. `:compact` writes digests, so `--summary llm` is
/// refused rather than ignored.
fn repl_history(
    budget: &cli::budget::BudgetArgs,
) -> Result<
    (
        ptc_lisp::history::config::Config,
        std::sync::Arc<std::sync::Mutex<ptc_lisp::history::recorder::Recorder>>,
    ),
    String,
> {
    use ptc_lisp::history::config::{Overrides, SummaryMode};
    let config = budget.load(Overrides::default())?.config;
    if config.summary.mode == SummaryMode::Llm {
        return Err(
            "the REPL's :compact writes deterministic digests; summary.mode \"llm\" is for `ptc agent` and `ptc compact`"
                .into(),
        );
    }
    let recorder =
        ptc_lisp::history::recorder::Recorder::from_config(&config, &budget.session_id())?;
    Ok((config, std::sync::Arc::new(std::sync::Mutex::new(recorder))))
}

/// Let large temporary collections reuse memory instead of each mapping
/// fresh pages.
///
/// glibc serves a request above its mmap threshold (128 KiB at start)
/// with a mapping of its own, unmapped when it is freed, and gives the
/// top of its heap back to the system once more than its trim threshold
/// (128 KiB) is free there, so every large temporary (a sorted copy, a
/// filtered vector, a set's table) pays its page faults again. Freeing a
/// mapped block raises the mmap threshold to the block's size and the
/// trim threshold to twice that (`mallopt(3)`, "dynamic mmap
/// threshold"); this block is mapped, never written and freed at once,
/// so later requests up to 16 MiB come from the heap, and up to 32 MiB
/// freed at its top stay there to be reused (BENCHMARKS.md, eleventh and
/// twelfth rounds). Called after the data is read, so that a data file
/// read whole (one that is not a regular file, or has an error to report)
/// keeps its buffer a mapping of its own, given back when the reading is
/// done. Other allocators take it as one allocation freed.
fn keep_large_blocks_on_the_heap() {
    // Just under 16 MiB: glibc raises the threshold only for a block of
    // at most its ceiling (32 MiB here), counting the block's header.
    // Address space refused (a low `ulimit -v`) is no error: nothing is
    // raised then.
    let mut block: Vec<u8> = Vec::new();
    if block.try_reserve_exact((16 << 20) - 4096).is_ok() {
        drop(std::hint::black_box(block));
    }
}

/// Program text from standard input, at most `MAX_PROGRAM_BYTES`.
fn read_stdin() -> Result<String, String> {
    ptc_lisp::input::read_text(
        std::io::stdin().lock(),
        ptc_lisp::input::MAX_PROGRAM_BYTES,
        "the program on standard input",
        "for program text",
    )
    .map_err(|e| e.describe("standard input"))
}

fn usage_error(message: &str) -> ExitCode {
    errln!("error: {message}");
    ExitCode::from(2)
}

/// A usage error; with `--json` also as the JSON object on stdout.
fn failure(message: &str, json: bool) -> ExitCode {
    if json {
        cli::out::raw_line(&cli::json_report::usage_error(message).to_string());
    }
    usage_error(message)
}

/// Read a `--data` file (at most `max_bytes` bytes, a JSON object) into
/// `data/` fields, each value within the collection limit `max_items`.
fn load_data(
    path: &Path,
    max_bytes: u64,
    max_items: usize,
) -> Result<Vec<(String, ptc_lisp::value::Value)>, String> {
    if let Some(fields) = load_data_in_chunks(path, max_bytes, max_items) {
        return Ok(fields);
    }
    // Not a regular file, over a limit, or not well-formed: read whole,
    // which says what is wrong and where.
    let bytes = ptc_lisp::input::read_file(
        path,
        max_bytes,
        &format!("the data file `{}`", path.display()),
        "for data files; --max-data-bytes raises it",
    )
    .map_err(|e| e.describe(&format!("data file `{}`", path.display())))?;
    ptc_lisp::value::read_json_object(&bytes, "data/", max_items).map_err(|e| match e {
        ptc_lisp::value::ReadError::Syntax(m) => {
            format!("data file `{}` is not valid JSON: {m}", path.display())
        }
        ptc_lisp::value::ReadError::NotAnObject(m) => format!(
            "data file `{}` must contain a JSON object (its keys become `data/` names): {m}",
            path.display()
        ),
        rule => format!("data file `{}`: {rule}", path.display()),
    })
}

/// A regular data file's fields, read a chunk at a time, so that the file
/// is never whole in memory beside its values; `None` when it must be
/// read whole.
fn load_data_in_chunks(
    path: &Path,
    max_bytes: u64,
    max_items: usize,
) -> Option<Vec<(String, ptc_lisp::value::Value)>> {
    // Looked at before it is opened: a named pipe opened and closed here
    // unread could lose what its writer sends before the whole read opens
    // it again.
    let metadata = std::fs::metadata(path).ok()?;
    if !metadata.is_file() || metadata.len() > max_bytes {
        return None;
    }
    let file = std::fs::File::open(path).ok()?;
    ptc_lisp::value::read_json_object_chunked(file, metadata.len(), max_bytes, "data/", max_items)
}

/// A session with the data, tools and prelude the options name.
fn build_session(args: &RunArgs, tools: &cli::mcp::ToolSources) -> Result<Session, String> {
    let mut limits = limits(args.timeout_ms, args.max_steps);
    if let Some(bytes) = args.max_session_memory {
        limits.max_session_memory = bytes;
    }
    let session = session_with(args.data.as_deref(), args.max_data_bytes, tools, limits)?;
    with_prelude(session, args.prelude.as_deref())
}

/// `session` with the prelude file, if any, loaded.
fn with_prelude(mut session: Session, prelude: Option<&Path>) -> Result<Session, String> {
    if let Some(path) = prelude {
        load_prelude(&mut session, path)?;
    }
    Ok(session)
}

/// Evaluate the prelude file as a turn; its failure, with the prelude's
/// line and column, is an error.
fn load_prelude(session: &mut Session, path: &Path) -> Result<(), String> {
    let text = ptc_lisp::input::read_program_file(path)
        .map_err(|e| e.describe(&format!("the prelude `{}`", path.display())))?;
    let turn = session.eval(&text);
    match &turn.outcome {
        TurnOutcome::Error { error } => {
            let at = match (error.line, error.column) {
                (Some(l), Some(c)) => format!("{}:{l}:{c}", path.display()),
                _ => path.display().to_string(),
            };
            Err(format!(
                "the prelude failed: {at}: {} ({})",
                error.message, error.code
            ))
        }
        TurnOutcome::Fail { value } => Err(format!(
            "the prelude `{}` called fail: {}",
            path.display(),
            pr_str(value)
        )),
        TurnOutcome::Value { .. } | TurnOutcome::Return { .. } => Ok(()),
    }
}

/// Program limits from the command-line options.
fn limits(timeout_ms: u64, max_steps: Option<u64>) -> Limits {
    let mut limits = Limits {
        timeout: Duration::from_millis(timeout_ms),
        ..Limits::default()
    };
    if let Some(steps) = max_steps {
        limits.max_steps = steps;
    }
    limits
}

/// A session with the given data file and tools (manifest and MCP
/// servers) loaded.
fn session_with(
    data: Option<&Path>,
    max_data_bytes: u64,
    tools: &cli::mcp::ToolSources,
    limits: Limits,
) -> Result<Session, String> {
    let mut session = Session::new().with_limits(limits);
    if let Some(path) = data {
        let max_items = session.limits().max_collection;
        session.set_data_fields(load_data(path, max_data_bytes, max_items)?);
    }
    tools.register_into(&mut session)?;
    Ok(session)
}

fn evaluate(source: &str, file: Option<&Path>, args: &RunArgs, json: bool) -> ExitCode {
    if args.stats.is_some() || args.repeat > 1 {
        return evaluate_with_stats(source, file, args, json);
    }
    let tools = match cli::mcp::ToolSources::load(args.tools.as_deref(), &args.mcp) {
        Ok(t) => t,
        Err(e) => return failure(&e, json),
    };
    let mut session = match build_session(args, &tools) {
        Ok(s) => s,
        Err(e) => return failure(&e, json),
    };
    keep_large_blocks_on_the_heap();
    let turn = session.eval(source);
    let code = report_turn(turn, source, file, args, json);
    // The process ends here: freeing the data and the result value by
    // value (a tenth of a data-heavy run) is left to the OS.
    std::mem::forget(session);
    code
}

/// `evaluate` with each phase timed apart (`--stats`), the evaluation
/// repeated `--repeat` times from fresh copies of the loaded session.
fn evaluate_with_stats(source: &str, file: Option<&Path>, args: &RunArgs, json: bool) -> ExitCode {
    use std::time::Instant;
    let mut stats = cli::stats::RunStats::default();
    let anon_before = cli::stats::anon_rss_bytes();
    let started = Instant::now();
    let tools = match cli::mcp::ToolSources::load(args.tools.as_deref(), &args.mcp) {
        Ok(t) => t,
        Err(e) => return failure(&e, json),
    };
    let loaded = match build_session(args, &tools) {
        Ok(s) => s,
        Err(e) => return failure(&e, json),
    };
    stats.read_data = started.elapsed();
    if let (Some(before), Some(after)) = (anon_before, cli::stats::anon_rss_bytes()) {
        stats.data_memory = Some(after.saturating_sub(before));
    }
    keep_large_blocks_on_the_heap();
    let compile = || {
        let started = Instant::now();
        let begun = started;
        // Reading and analysis run under the program's time limit
        // (counted from here; the run's own limit starts when it runs).
        let forms = ptc_lisp::eval::under_limits(loaded.limits(), begun, None, || {
            ptc_lisp::reader::read_program(source)
        })
        .and_then(|forms| {
            ptc_lisp::reader::check_literal_sizes(&forms, loaded.limits().max_collection)
                .map(|()| forms)
        });
        let parse = started.elapsed();
        let started = Instant::now();
        let program = forms.and_then(|forms| {
            ptc_lisp::eval::under_limits(loaded.limits(), begun, None, || {
                ptc_lisp::eval::Program::from_source_forms_for(&forms, source, loaded.globals())
            })
        });
        (program, parse, started.elapsed())
    };
    let (program, parse, analyze) = compile();
    stats.parse = parse;
    stats.analyze = analyze;
    let program = match program {
        Ok(p) => p,
        Err(e) => {
            let code = if json {
                // The program did not run: report it as a failed turn.
                let mut session = loaded.clone();
                let turn = session.record_failed_turn(source, (&e).into());
                report_turn(turn, source, file, args, json)
            } else {
                report(&(&e).into(), source, file)
            };
            print_stats(&stats, args, json);
            return code;
        }
    };
    let mut session = loaded.clone();
    for i in 0..args.repeat {
        // Each repetition parses and analyzes the program again (as an
        // interpreter's warm in-process run does), the first run's phases
        // being the ones a single run pays.
        let (program, compiled) = if i == 0 {
            (program.clone(), parse + analyze)
        } else {
            session = loaded.clone();
            let (again, parse, analyze) = compile();
            (again.unwrap_or_else(|_| program.clone()), parse + analyze)
        };
        let started = Instant::now();
        session.eval_compiled(source, program);
        let eval = started.elapsed();
        stats.evals.push(eval);
        stats.runs.push(compiled + eval);
    }
    let turn = session.turns().last().expect("a turn ran");
    stats.steps = turn.steps;
    let started = Instant::now();
    let code = report_turn(turn, source, file, args, json);
    stats.print = started.elapsed();
    print_stats(&stats, args, json);
    // As in `evaluate`: the data and the last result are left to the OS
    // (freeing W1's data by value took half a millisecond after every figure
    // was printed).
    std::mem::forget(session);
    std::mem::forget(loaded);
    code
}

/// `--stats` on stderr: JSON with `--stats=json` or `--json`.
fn print_stats(stats: &cli::stats::RunStats, args: &RunArgs, json: bool) {
    let format = match args.stats {
        _ if json => cli::stats::StatsFormat::Json,
        Some(format) => format,
        None => cli::stats::StatsFormat::Text,
    };
    errln!("{}", stats.render(format));
}

/// Print a turn's lines and result (or its error); the exit code.
fn report_turn(
    turn: &ptc_lisp::session::Turn,
    source: &str,
    file: Option<&Path>,
    args: &RunArgs,
    json: bool,
) -> ExitCode {
    if json {
        let max = args.max_result_bytes;
        let object = cli::json_report::turn(turn, file, max, &|v| result_text(v, max));
        cli::out::raw_line(&object.to_string());
        return match turn.outcome {
            TurnOutcome::Value { .. } | TurnOutcome::Return { .. } => ExitCode::SUCCESS,
            TurnOutcome::Fail { .. } | TurnOutcome::Error { .. } => ExitCode::from(1),
        };
    }
    for line in &turn.prints {
        cli::out::line(line);
    }
    match &turn.outcome {
        TurnOutcome::Value { value } | TurnOutcome::Return { value } => {
            cli::out::line(&result_text(value, args.max_result_bytes));
            ExitCode::SUCCESS
        }
        TurnOutcome::Fail { value } => {
            errln!("error: program failed: {}", pr_str(value));
            ExitCode::from(1)
        }
        TurnOutcome::Error { error } => report(error, source, file),
    }
}

/// The printed form of a result, cut at `max` bytes with a marker.
fn result_text(value: &ptc_lisp::value::Value, max: usize) -> String {
    ptc_lisp::session::report::capped_result(value, max).0
}

/// Print an error with its location, the source line and a caret.
fn report(e: &TurnError, source: &str, file: Option<&Path>) -> ExitCode {
    errln!(
        "{}",
        ptc_lisp::session::report::error_report(e, source, file)
    );
    ExitCode::from(1)
}

// ---- `ptc agent` ----

/// The options of `ptc agent`.
#[derive(Args)]
struct AgentArgs {
    #[command(flatten)]
    mission: cli::prompt::MissionArgs,
    /// The model: `openai:MODEL` (any OpenAI-compatible server),
    /// `anthropic:MODEL`, or `script:FILE` (replies replayed from a file)
    #[arg(long, value_name = "SPEC")]
    llm: String,
    /// A JSON object file whose keys become `data/` values
    #[arg(long, value_name = "FILE.json")]
    data: Option<PathBuf>,
    /// A tool manifest (JSON or TOML) whose tools become `tool/` functions
    #[arg(long, value_name = "FILE")]
    tools: Option<PathBuf>,
    /// A file of definitions evaluated into `user/` before the first turn
    /// (shown to the model in the prompt's `user/` section, not as a turn);
    /// a failing prelude is an error
    #[arg(long, value_name = "FILE")]
    prelude: Option<PathBuf>,
    #[command(flatten)]
    mcp: cli::mcp::McpArgs,
    /// Turns allowed, the first included; 1 is single-shot mode, where the
    /// program's value is the answer
    #[arg(long, value_name = "N", default_value_t = 5,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    max_turns: u32,
    /// Compress the history between turns (SingleUserCoalesced)
    #[arg(long)]
    compression: bool,
    /// With --compression: the most recent println calls shown [default: 15]
    #[arg(long, value_name = "N", requires = "compression")]
    println_limit: Option<usize>,
    /// With --compression: the most recent tool calls shown [default: 20]
    #[arg(long, value_name = "N", requires = "compression")]
    tool_call_limit: Option<usize>,
    // A `help` attribute rather than a doc comment: rustdoc would read
    // `[:string]` as a link.
    #[arg(
        long,
        value_name = "SIG",
        help = "The shape (return value) must have, e.g. \"{count :int, items [:string]}\""
    )]
    signature: Option<String>,
    /// Write one JSON line per model call: the messages sent, the reply,
    /// the program and what it gave
    #[arg(long, value_name = "FILE.jsonl")]
    transcript: Option<PathBuf>,
    /// Record every model request and its response, with the request's
    /// hash, as JSON lines; `--llm replay:FILE` answers from the file
    #[arg(long, value_name = "FILE.jsonl")]
    record: Option<PathBuf>,
    /// The provider's base URL (else OPENAI_BASE_URL / ANTHROPIC_BASE_URL),
    /// e.g. http://localhost:11434/v1 for Ollama
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// The provider's API key (else OPENAI_API_KEY / ANTHROPIC_API_KEY)
    #[arg(long, value_name = "KEY")]
    api_key: Option<String>,
    /// Time limit of one model request, in milliseconds
    #[arg(long, value_name = "MS", default_value_t = 120_000)]
    timeout_ms: u64,
    /// The reply token limit sent with each request
    #[arg(long, value_name = "N")]
    max_tokens: Option<u32>,
    /// The sampling temperature sent with each request
    #[arg(long, value_name = "T")]
    temperature: Option<f32>,
    /// Wall-clock limit of each program, tool calls included, in
    /// milliseconds (at least 1)
    #[arg(long, value_name = "MS", default_value_t = 60_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    program_timeout_ms: u64,
    /// Limit on evaluation steps of each program (as for `ptc run`; at
    /// least 1)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_steps: Option<u64>,
    /// The largest `--data` file read, in bytes [default: 67108864 (64 MiB)]
    #[arg(long, value_name = "N", default_value_t = ptc_lisp::input::MAX_DATA_BYTES,
          hide_default_value = true)]
    max_data_bytes: u64,
    /// The most bytes of the printed result; longer results are cut with a
    /// marker [default: 1048576 (1 MiB)]
    #[arg(long, value_name = "N", default_value_t = MAX_RESULT_BYTES, hide_default_value = true)]
    max_result_bytes: usize,
    #[command(flatten)]
    budget: cli::budget::BudgetArgs,
    #[command(flatten)]
    window: cli::budget::WindowArgs,
    /// Send the whole history, with no window, pre-flight token check or
    /// compaction
    #[arg(long, conflicts_with = "window_max_messages")]
    no_compaction: bool,
    /// Print no progress on standard error
    #[arg(long, short)]
    quiet: bool,
    /// Print one JSON object on stdout: outcome, result (as JSON and in
    /// Clojure notation), printed lines, last error, turns, token usage
    /// and timing (exit codes unchanged; schema in the README)
    #[arg(long)]
    json: bool,
    /// After the run, print every turn in full beside the messages the
    /// model last received, and the compression statistics (stderr)
    #[arg(long)]
    debug: bool,
}

/// Set up and run the agent; the loop itself lives in the library.
/// The mission: `--mission TEXT`, `--mission -` (standard input) or
/// `--mission-file FILE`, each at most `MAX_PROGRAM_BYTES`.
fn mission_text(args: &cli::prompt::MissionArgs) -> Result<String, String> {
    use ptc_lisp::input::{read_file_text, read_text, MAX_PROGRAM_BYTES};
    let text = match (&args.mission, &args.mission_file) {
        (Some(m), _) if m == "-" => read_text(
            std::io::stdin().lock(),
            MAX_PROGRAM_BYTES,
            "the mission on standard input",
            "for a mission",
        )
        .map_err(|e| e.describe("standard input"))?,
        (Some(m), _) => m.clone(),
        (None, Some(path)) => read_file_text(
            path,
            MAX_PROGRAM_BYTES,
            &format!("the mission file `{}`", path.display()),
            "for a mission",
        )
        .map_err(|e| e.describe(&format!("mission file `{}`", path.display())))?,
        (None, None) => {
            return Err("give the task with --mission TEXT or --mission-file FILE".into())
        }
    };
    if text.trim().is_empty() {
        return Err("the mission is empty".into());
    }
    Ok(text.trim_end().to_string())
}

fn agent_command(args: &AgentArgs) -> ExitCode {
    use ptc_lisp::agent::{provider_from_spec, Agent, AgentConfig, ProviderOptions};
    use ptc_lisp::compression::{CompressionOptions, CompressionSetting, SingleUserCoalesced};

    if !args.no_compaction {
        // The history layer counts the first prompt's tokens.
        ptc_lisp::tokens::preload(&args.llm);
    }

    let mission = match mission_text(&args.mission) {
        Ok(m) => m,
        Err(e) => return failure(&e, args.json),
    };
    let limits = limits(args.program_timeout_ms, args.max_steps);
    let tools = match cli::mcp::ToolSources::load(args.tools.as_deref(), &args.mcp) {
        Ok(t) => t,
        Err(e) => return failure(&e, args.json),
    };
    let session = match session_with(
        args.data.as_deref(),
        args.max_data_bytes,
        &tools,
        limits.clone(),
    )
    .and_then(|session| with_prelude(session, args.prelude.as_deref()))
    {
        Ok(s) => s,
        Err(e) => return failure(&e, args.json),
    };
    let mut options = ProviderOptions {
        base_url: args.base_url.clone(),
        api_key: args.api_key.clone(),
        max_tokens: args.max_tokens,
        ..ProviderOptions::default()
    };
    options.http.timeout = Duration::from_millis(args.timeout_ms.max(1));
    let provider: std::sync::Arc<dyn ptc_lisp::agent::LlmProvider> =
        match provider_from_spec(&args.llm, options) {
            Ok(p) => std::sync::Arc::from(p),
            Err(e) => return failure(&e.to_string(), args.json),
        };
    let provider: std::sync::Arc<dyn ptc_lisp::agent::LlmProvider> = match &args.record {
        None => provider,
        Some(path) => match ptc_lisp::agent::RecordingProvider::create(provider, path) {
            Ok(p) => std::sync::Arc::new(p),
            Err(e) => return failure(&e.to_string(), args.json),
        },
    };
    let session_id = args.budget.session_id();
    let loaded = match args.budget.load(args.window.overrides()) {
        Ok(l) => l,
        Err(e) => return failure(&e, args.json),
    };
    let history_config = loaded.config;
    let redactor = match history_config.redactor() {
        Ok(r) => r,
        Err(e) => return failure(&e, args.json),
    };
    let recorder =
        match ptc_lisp::history::recorder::Recorder::from_config(&history_config, &session_id) {
            Ok(r) => std::sync::Arc::new(std::sync::Mutex::new(r)),
            Err(e) => return failure(&e, args.json),
        };
    let history = if args.no_compaction {
        None
    } else {
        let mut settings = ptc_lisp::agent::HistorySettings::new(history_config.policy())
            .with_window(history_config.window.clone());
        settings.counting_model = history_config.model.clone();
        settings.recorder = Some(recorder.clone());
        settings.summary_deadline = history_config.summary_deadline();
        if history_config.summary.mode == ptc_lisp::history::config::SummaryMode::Llm {
            let summarizer = match &history_config.summary.llm {
                None => provider.clone(),
                Some(spec) => match provider_from_spec(spec, ProviderOptions::default()) {
                    Ok(p) => std::sync::Arc::from(p),
                    Err(e) => return failure(&e.to_string(), args.json),
                },
            };
            settings.summary = ptc_lisp::agent::SummaryMode::Llm(summarizer);
        }
        Some(settings)
    };
    let compression = if !args.compression {
        CompressionSetting::Off
    } else if args.println_limit.is_some() || args.tool_call_limit.is_some() {
        let defaults = CompressionOptions::default();
        CompressionSetting::strategy_with(
            SingleUserCoalesced,
            CompressionOptions {
                println_limit: args.println_limit.unwrap_or(defaults.println_limit),
                tool_call_limit: args.tool_call_limit.unwrap_or(defaults.tool_call_limit),
                ..defaults
            },
        )
    } else {
        CompressionSetting::On
    };
    let mut config = AgentConfig::new(mission)
        .with_max_turns(args.max_turns as usize)
        .with_compression(compression)
        .with_limits(limits);
    config.signature = args.signature.clone();
    config.history = history;
    config.model.max_tokens = args.max_tokens;
    config.model.temperature = args.temperature;
    let transcript = match &args.transcript {
        Some(path) => match ptc_lisp::agent::TranscriptWriter::create(path) {
            Ok(w) => Some(std::sync::Arc::new(std::sync::Mutex::new(Transcript {
                path: path.clone(),
                writer: Some(w),
                redactor,
                pending: None,
            }))),
            Err(e) => {
                let message = format!("cannot create the transcript `{}`: {e}", path.display());
                return failure(&message, args.json);
            }
        },
        None => None,
    };
    let mut session = session;
    let interrupt = session.interrupt_handle();
    let signal = std::sync::Arc::new(std::sync::atomic::AtomicI32::new(0));
    {
        // SIGINT/SIGTERM: kill the tools, stop the program, and let the
        // turn finish (its transcript line marked interrupted) before
        // exiting; a turn still waiting for the model after a second
        // gets a transcript line of what was sent.
        let (signal, transcript) = (signal.clone(), transcript.clone());
        signals::on_signal(signals::STOP, move |number| {
            signal.store(number, std::sync::atomic::Ordering::SeqCst);
            interrupt.store(true, std::sync::atomic::Ordering::SeqCst);
            std::thread::sleep(Duration::from_secs(1));
            if let Some(t) = &transcript {
                let mut t = t.lock().unwrap_or_else(|e| e.into_inner());
                t.write_interrupted_request();
                // Exit with the lock held: the main thread cannot write
                // (or exit) any more.
                signals::exit(signals::exit_code(number));
            }
        });
    }
    let agent = match Agent::new(provider, session, config) {
        Ok(a) => a,
        Err(e) => return failure(&e.to_string(), args.json),
    };
    let mut agent = agent.with_progress(CliProgress {
        quiet: args.quiet,
        transcript,
        signal: signal.clone(),
        counting_model: history_config
            .model
            .clone()
            .unwrap_or_else(|| args.llm.clone()),
        counter: None,
    });
    let run = agent.run();
    let received = signal.load(std::sync::atomic::Ordering::SeqCst);
    if received != 0 {
        signals::exit(signals::exit_code(received));
    }
    if let Ok(mut r) = recorder.lock() {
        r.finish();
    }
    if args.debug {
        errln!("{}", run.debug_view());
    }
    report_run(&run, args.quiet, args.max_result_bytes, args.json)
}

/// Print how the run ended: the value on stdout, the rest on stderr.
fn report_run(
    run: &ptc_lisp::agent::AgentRun,
    quiet: bool,
    max_result_bytes: usize,
    json: bool,
) -> ExitCode {
    use ptc_lisp::agent::AgentOutcome;

    if json {
        let object = cli::json_report::agent_run(run, max_result_bytes, &|v| {
            result_text(v, max_result_bytes)
        });
        cli::out::raw_line(&object.to_string());
        return match run.outcome {
            AgentOutcome::Returned(_) => ExitCode::SUCCESS,
            _ => ExitCode::from(1),
        };
    }
    if !quiet {
        let mut summary = format!("{} turn(s) in {:.1?}", run.turns.len(), run.duration);
        if run.usage.total() > 0 {
            summary.push_str(&format!(
                ", {} tokens in, {} out",
                run.usage.input_tokens, run.usage.output_tokens
            ));
        }
        if let Some((model, ratio)) = &run.token_calibration {
            summary.push_str(&format!(
                "; reported/estimated input tokens {ratio:.2} ({model})"
            ));
        }
        if !run.compactions.is_empty() {
            summary.push_str(&format!(", {} compaction(s)", run.compactions.len()));
        }
        if let Some(c) = run.conversation.filter(|c| c.max_messages > 0) {
            summary.push_str(&format!(
                ", the window evicted {} message(s)",
                c.evicted_messages
            ));
        }
        errln!("{summary}");
    }
    match &run.outcome {
        AgentOutcome::Returned(value) => {
            cli::out::line(&result_text(value, max_result_bytes));
            ExitCode::SUCCESS
        }
        AgentOutcome::Failed(reason) => {
            errln!("error: the mission failed: {}", pr_str(reason));
            ExitCode::from(1)
        }
        AgentOutcome::TurnLimit => {
            match run.last_error() {
                Some(e) => errln!(
                    "error: no result after {} turn(s); the last error: {}",
                    run.turns.len(),
                    e.message
                ),
                None => errln!(
                    "error: no result after {} turn(s): the model never called (return value)",
                    run.turns.len()
                ),
            }
            ExitCode::from(1)
        }
        AgentOutcome::ProviderError(e) => {
            errln!("error: the model call failed: {e}");
            ExitCode::from(1)
        }
    }
}

/// The transcript file of `ptc agent`, shared by the progress observer
/// and the signal thread.
struct Transcript {
    path: PathBuf,
    /// `None` once a write failed: the transcript stops there.
    writer: Option<ptc_lisp::agent::TranscriptWriter<std::io::BufWriter<std::fs::File>>>,
    /// Secrets are redacted from the transcript (copy on export).
    redactor: Option<ptc_lisp::history::redact::Redactor>,
    /// The turn waiting for the model and the messages sent for it.
    pending: Option<(usize, Vec<ptc_lisp::agent::ChatMessage>)>,
}

impl Transcript {
    /// Write one line (redacted unless redaction is off).
    fn write(&mut self, entry: serde_json::Value) {
        let Some(writer) = &mut self.writer else {
            return;
        };
        let entry = match &self.redactor {
            Some(r) => r.json(&entry),
            None => entry,
        };
        if let Err(e) = writer.write_json(&entry) {
            errln!(
                "warning: cannot write the transcript `{}`: {e}; it stops here",
                self.path.display()
            );
            self.writer = None;
        }
    }

    /// The line of a turn interrupted while it waited for the model:
    /// what was sent, no reply, `"interrupted": true`.
    fn write_interrupted_request(&mut self) {
        if let Some((turn, messages)) = self.pending.take() {
            self.write(serde_json::json!({
                "turn": turn,
                "messages": messages,
                "reply": "",
                "program": null,
                "tool_calls": [],
                "usage": null,
                "interrupted": true,
            }));
        }
    }
}

/// Progress on standard error, and the transcript, turn by turn.
struct CliProgress {
    quiet: bool,
    transcript: Option<std::sync::Arc<std::sync::Mutex<Transcript>>>,
    /// The signal received (SIGINT, SIGTERM), 0 for none.
    signal: std::sync::Arc<std::sync::atomic::AtomicI32>,
    /// The model whose tokenizer estimates a turn's tokens when the
    /// provider reports none (the history layer's counting model).
    counting_model: String,
    /// Made on the first estimate.
    counter: Option<ptc_lisp::history::TokenCounter>,
}

impl CliProgress {
    fn signal(&self) -> i32 {
        self.signal.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn lines(&mut self, report: &ptc_lisp::agent::TurnReport<'_>) -> String {
        let model = &self.counting_model;
        let counter = self
            .counter
            .get_or_insert_with(|| ptc_lisp::history::TokenCounter::new(model));
        progress_lines(report, counter)
    }
}

impl ptc_lisp::agent::Progress for CliProgress {
    fn turn_started(&mut self, turn: usize, max_turns: usize) {
        if self.signal() != 0 {
            signals::exit(signals::exit_code(self.signal()));
        }
        if !self.quiet {
            errln!("turn {turn}/{max_turns}");
        }
    }

    fn request_ready(&mut self, turn: usize, messages: &[ptc_lisp::agent::ChatMessage]) {
        if let Some(t) = &self.transcript {
            let mut t = t.lock().unwrap_or_else(|e| e.into_inner());
            t.pending = Some((turn, messages.to_vec()));
        }
    }

    fn turn_finished(&mut self, report: &ptc_lisp::agent::TurnReport<'_>) {
        let signal = self.signal();
        if let Some(t) = self.transcript.clone() {
            let mut t = t.lock().unwrap_or_else(|e| e.into_inner());
            t.pending = None;
            let mut entry = serde_json::to_value(report.transcript_entry()).unwrap_or_default();
            if signal != 0 {
                if let Some(fields) = entry.as_object_mut() {
                    fields.insert("interrupted".into(), serde_json::Value::Bool(true));
                }
            }
            t.write(entry);
            drop(t);
            if signal != 0 {
                if !self.quiet {
                    errln!("{}", self.lines(report).trim_end());
                }
                signals::exit(signals::exit_code(signal));
            }
        }
        if !self.quiet {
            errln!("{}", self.lines(report).trim_end());
        }
    }

    fn provider_failed(&mut self, _turn: usize, error: &ptc_lisp::agent::ProviderError) {
        if !self.quiet {
            errln!("  model call failed: {error}");
        }
    }

    fn history_compacted(&mut self, _turn: usize, report: &ptc_lisp::history::Report) {
        if !self.quiet {
            errln!("  compacted: {report}");
        }
    }

    fn history_problem(&mut self, _turn: usize, problem: &str) {
        errln!("  warning: history not compacted, sending it whole: {problem}");
    }

    fn history_trimmed(&mut self, _turn: usize, trim: &ptc_lisp::history::Trim) {
        if !self.quiet {
            let m = &trim.metrics;
            let summary = match trim.summary {
                Some(v) => format!("; evicted messages summarized (v{v})"),
                None => String::new(),
            };
            errln!(
                "  window: {} messages evicted, {} kept (~{} tokens){summary}",
                m.evicted_messages,
                m.total_messages,
                m.estimated_tokens
            );
        }
    }

    fn history_warning(&mut self, _turn: usize, warning: &str) {
        errln!("  warning: {warning}");
    }

    fn conversation(&mut self, _turn: usize, metrics: &ptc_lisp::agent::ConversationMetrics) {
        if !self.quiet && metrics.max_messages > 0 {
            errln!(
                "  conversation: {} messages (~{} tokens)",
                metrics.message_count,
                metrics.estimated_tokens
            );
        }
    }
}

/// What one turn did, indented under its `turn N/M` line. Without
/// provider usage the tokens are estimated by `counter`, the history
/// layer's count of the request (framing and reply priming included).
fn progress_lines(
    report: &ptc_lisp::agent::TurnReport<'_>,
    counter: &mut ptc_lisp::history::TokenCounter,
) -> String {
    use ptc_lisp::compression::format::{to_clojure, FormatOptions};

    let (call, turn) = (report.call, report.turn);
    let mut out = String::new();
    match &call.program {
        Some(program) => {
            // The first line of code: comments and blank lines are skipped.
            let mut lines = program
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with(';'));
            let first = lines.next().unwrap_or("");
            let more = lines.count();
            let first: String = if first.chars().count() > 100 {
                first.chars().take(99).chain(['…']).collect()
            } else {
                first.to_string()
            };
            out.push_str(&format!("  program: {first}"));
            if more > 0 {
                out.push_str(&format!("  (+{more} lines)"));
            }
            out.push('\n');
        }
        None => out.push_str("  program: none in the reply\n"),
    }
    if !turn.tool_calls.is_empty() {
        let shown: Vec<String> = turn
            .tool_calls
            .iter()
            .take(5)
            .map(|c| {
                let args: Vec<String> = c
                    .args
                    .iter()
                    .map(|a| to_clojure(a, FormatOptions::TOOL_ARGS).0)
                    .collect();
                let failed = if c.error.is_some() { " failed" } else { "" };
                format!("{}({}){failed}", c.name, args.join(" "))
            })
            .collect();
        let more = turn.tool_calls.len().saturating_sub(shown.len());
        out.push_str(&format!("  tool calls: {}", shown.join(", ")));
        if more > 0 {
            out.push_str(&format!(" +{more} more"));
        }
        out.push('\n');
    }
    match call.usage {
        Some(u) => out.push_str(&format!(
            "  tokens: {} in, {} out\n",
            u.input_tokens, u.output_tokens
        )),
        None => {
            // The provider reports no usage (a script): estimate it the
            // way the history layer counts the request.
            let sent: Vec<ptc_lisp::history::Message> = call
                .messages
                .iter()
                .cloned()
                .map(ptc_lisp::history::Message::from)
                .collect();
            let sent = counter.count(&sent).total();
            let reply = counter.token_model().count(&call.reply);
            out.push_str(&format!("  tokens: ~{sent} in, ~{reply} out (estimated)\n"));
        }
    }
    match &turn.outcome {
        TurnOutcome::Error { error } => {
            let text = error.to_string().replace('\n', "\n    ");
            out.push_str(&format!("  error: {text}\n"));
        }
        TurnOutcome::Return { value } => {
            out.push_str(&format!(
                "  returned: {}\n",
                to_clojure(value, FormatOptions::SAMPLE).0
            ));
        }
        TurnOutcome::Fail { value } => {
            out.push_str(&format!(
                "  fail: {}\n",
                to_clojure(value, FormatOptions::SAMPLE).0
            ));
        }
        TurnOutcome::Value { value } => {
            out.push_str(&format!(
                "  ok: {}\n",
                to_clojure(value, FormatOptions::SAMPLE).0
            ));
        }
    }
    out
}

// ---- the REPL (`ptc` without a subcommand) ----

/// Options of the REPL (`ptc` without a subcommand).
#[derive(Args)]
struct ReplArgs {
    #[command(flatten)]
    run: RunArgs,
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
    /// The token budget of `:budget` and `:compact`, and where their
    /// events and archives go
    #[command(flatten)]
    budget: cli::budget::BudgetArgs,
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

/// Signals: the tools' process groups are killed before `ptc` exits.
mod signals {
    use std::sync::Mutex;

    #[cfg(unix)]
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};

    /// The signals that end a command with no process of its own to
    /// clean up: it exits from the handler.
    #[cfg(unix)]
    pub const INT_TERM: &[i32] = &[SIGINT, SIGTERM];
    /// The signals that end a command that may have started tools or MCP
    /// servers: they are killed first (a hang-up and Ctrl-\ too, which
    /// would leave them running).
    #[cfg(unix)]
    pub const STOP: &[i32] = &[SIGINT, SIGTERM, SIGHUP, SIGQUIT];
    /// [`STOP`] but SIGINT, which the interactive REPL keeps for stopping
    /// an evaluation.
    #[cfg(unix)]
    pub const STOP_BUT_INT: &[i32] = &[SIGTERM, SIGHUP, SIGQUIT];
    #[cfg(not(unix))]
    pub const INT_TERM: &[i32] = &[];
    #[cfg(not(unix))]
    pub const STOP: &[i32] = &[];
    #[cfg(not(unix))]
    pub const STOP_BUT_INT: &[i32] = &[];

    /// Taken (and never given back) by the thread that ends the process,
    /// so two threads never exit at once.
    static EXIT: Mutex<()> = Mutex::new(());

    /// End the process with `code`; a second caller waits forever.
    pub fn exit(code: i32) -> ! {
        let guard = EXIT.lock();
        std::mem::forget(guard);
        std::process::exit(code)
    }

    /// The exit code for death by `signal` (130 for SIGINT, 143 for
    /// SIGTERM, 129 for SIGHUP, 131 for SIGQUIT).
    pub fn exit_code(signal: i32) -> i32 {
        128 + signal
    }

    /// On any of `signals`, exit at once with 128 + the signal's number,
    /// from the signal handler: for commands that start no process.
    pub fn exit_on(signals: &[i32]) {
        #[cfg(unix)]
        for &signal in signals {
            let always = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
            let code = exit_code(signal);
            if let Err(e) = signal_hook::flag::register_conditional_shutdown(signal, code, always) {
                errln!("warning: cannot handle signal {signal} ({e})");
            }
        }
    }

    /// On the first of `signals`: kill the running tools, run `before_exit`
    /// (on a thread of its own, never in a signal handler) and exit with
    /// 128 + the signal's number.
    pub fn on_signal(signals: &[i32], before_exit: impl FnOnce(i32) + Send + 'static) {
        if signals.is_empty() {
            return;
        }
        #[cfg(unix)]
        {
            let mut iter = match signal_hook::iterator::Signals::new(signals) {
                Ok(i) => i,
                Err(e) => {
                    errln!("warning: cannot handle signals ({e}); tools may outlive ptc");
                    return;
                }
            };
            let spawned = std::thread::Builder::new()
                .name("ptc-signals".into())
                .spawn(move || {
                    if let Some(signal) = iter.forever().next() {
                        ptc_lisp::agent::tools::kill_running_tools();
                        before_exit(signal);
                        ptc_lisp::agent::tools::kill_running_tools();
                        exit(exit_code(signal));
                    }
                });
            if let Err(e) = spawned {
                errln!("warning: cannot handle signals ({e}); tools may outlive ptc");
            }
        }
        #[cfg(not(unix))]
        let _ = before_exit;
    }
}
