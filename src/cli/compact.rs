//! `ptc compact`: compact a chat history file (one JSON message per
//! line) under a token budget, report what was kept, pruned and
//! summarized, and write the result (`out_file`: atomically over a
//! regular file, straight into a FIFO or device).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;

use ptc_lisp::agent::{provider_from_spec, LlmSummarizer, ProviderOptions};
use ptc_lisp::history::{
    parse_jsonl_numbered, to_jsonl, units, Breakdown, Compactor, Context, Digest, Message,
    StructureError, Summarizer, Window,
};

use ptc_lisp::history::config::{Overrides, SummaryMode};
use ptc_lisp::history::recorder::Recorder;

use super::budget::{BudgetArgs, WindowArgs};

#[derive(Debug, Args)]
pub struct CompactArgs {
    /// The history: one JSON chat message per line (`-` for standard input)
    pub input: PathBuf,
    /// Where to write the compacted history (standard output if absent)
    #[arg(short, long, value_name = "OUT.jsonl")]
    pub output: Option<PathBuf>,
    /// The model whose tokenizer counts (o200k for gpt-4o and newer,
    /// cl100k for gpt-4 and gpt-3.5, an approximation for others) [default: gpt-4o]
    #[arg(long, value_name = "M")]
    pub model: Option<String>,
    #[command(flatten)]
    pub budget: BudgetArgs,
    /// Tool call/result groups kept verbatim [default: 4]
    #[arg(long, value_name = "N")]
    pub keep_tool_io_pairs: Option<usize>,
    /// The window is applied first, then the budget.
    #[command(flatten)]
    pub window: WindowArgs,
    /// The provider for `--summary llm`: `openai:MODEL`, `anthropic:MODEL`
    /// or `script:FILE`
    #[arg(long, value_name = "SPEC")]
    pub llm: Option<String>,
    /// The tool schemas sent with each request (a JSON file), counted
    /// in the budget
    #[arg(long, value_name = "FILE.json")]
    pub tools_schema: Option<PathBuf>,
    /// Compact now whatever the size, with this note (else only when the
    /// history reaches the trigger)
    #[arg(long, value_name = "NOTE")]
    pub manual: Option<String>,
    /// The largest history read, in bytes [default: 67108864 (64 MiB)]
    #[arg(long, value_name = "N", default_value_t = ptc_lisp::input::MAX_HISTORY_BYTES,
          hide_default_value = true)]
    pub max_input_bytes: u64,
}

/// Exit 2 with `message`.
fn bad_input(message: &str) -> ExitCode {
    errln!("error: {message}");
    ExitCode::from(2)
}

/// The model whose tokenizer counts when neither `--model` nor the
/// configuration names one.
const DEFAULT_MODEL: &str = "gpt-4o";

pub fn run(args: &CompactArgs) -> ExitCode {
    // Counting is the command's job: load the encoding while the input
    // is read (the configuration may name another model; that one then
    // loads on its first count).
    ptc_lisp::tokens::preload(args.model.as_deref().unwrap_or(DEFAULT_MODEL));
    let name = args.input.display().to_string();
    let text = match read_input(&args.input, args.max_input_bytes) {
        Ok(t) => t,
        Err(e) => return bad_input(&e),
    };
    let numbered = match parse_jsonl_numbered(&text) {
        Ok(m) => m,
        Err(e) => return bad_input(&format!("{name}:{e}")),
    };
    let lines: Vec<usize> = numbered.iter().map(|(l, _)| *l).collect();
    let messages: Vec<Message> = numbered.into_iter().map(|(_, m)| m).collect();
    if let Err(e) = units(&messages) {
        let line = lines[e.index()];
        let what = match &e {
            StructureError::OrphanToolResult { id, .. } => format!(
                "a tool result without its call (tool_call_id {id:?} answers no call of the assistant message before it; an Anthropic tool_result must answer a tool_use block of the assistant message right before it)"
            ),
            StructureError::MissingToolCallId { .. } => {
                "field `tool_call_id`: a tool message needs one".to_string()
            }
            StructureError::DuplicateToolCallId { id, .. } => format!(
                "two tool calls of this assistant message have the same id {id:?}; each call of a message needs its own id"
            ),
            StructureError::DuplicateToolResult { id, first, .. } => format!(
                "a second result for tool call {id:?} (line {} already answered it)",
                lines[*first]
            ),
        };
        return bad_input(&format!("{name}:line {line}: {what}"));
    }
    let mut extra = Overrides::default();
    if let Some(model) = &args.model {
        extra.set("model", "--model", model);
    }
    if let Some(n) = args.keep_tool_io_pairs {
        extra.set("policy.keep_tool_io_pairs", "--keep-tool-io-pairs", n);
    }
    if let Some(spec) = &args.llm {
        extra.set("summary.llm", "--llm", spec);
    }
    extra.extend(args.window.overrides());
    let config = match args.budget.load(extra) {
        Ok(loaded) => loaded.config,
        Err(e) => return bad_input(&e),
    };
    let summarizer: Box<dyn Summarizer> = match (config.summary.mode, &config.summary.llm) {
        (SummaryMode::Digest, _) => Box::new(Digest),
        (SummaryMode::Llm, None) => {
            return bad_input("--summary llm needs --llm SPEC (the model that writes the summary)")
        }
        (SummaryMode::Llm, Some(spec)) => {
            match provider_from_spec(spec, ProviderOptions::default()) {
                Ok(p) => Box::new(LlmSummarizer::new(Arc::from(p))),
                Err(e) => return bad_input(&e.to_string()),
            }
        }
    };
    let model = config
        .model
        .clone()
        .unwrap_or_else(|| DEFAULT_MODEL.to_string());
    let mut compactor = match Compactor::new(&model, config.policy()) {
        Ok(c) => c.with_summary_deadline(config.summary_deadline()),
        Err(e) => return bad_input(&e.to_string()),
    };
    let mut recorder = match Recorder::from_config(&config, &args.budget.session_id()) {
        Ok(r) => r,
        Err(e) => return bad_input(&e),
    };
    if let Some(path) = &args.tools_schema {
        let schema = ptc_lisp::input::read_file_text(
            path,
            ptc_lisp::input::MAX_MANIFEST_BYTES,
            &format!("the tool schemas `{}`", path.display()),
            "for a tool manifest or schema file",
        )
        .map_err(|e| e.describe(&format!("`{}`", path.display())))
        .and_then(|t| {
            serde_json::from_str::<serde_json::Value>(&t)
                .map_err(|e| format!("`{}` is not JSON: {e}", path.display()))
        });
        match schema {
            Ok(s) => compactor.counter_mut().set_tools_schema(Some(&s)),
            Err(e) => return bad_input(&e),
        }
    }
    // The report follows the order of events: the input, the window,
    // then the budget.
    let before = compactor.counter_mut().count(&messages);
    errln!("before: {}", breakdown_line(messages.len(), &before));
    let mut current = messages;
    if config.window.max_messages > 0 {
        let max = config.window.max_messages;
        let mut window = Window::new(config.window.clone(), &model)
            .with_summary_deadline(config.summary_deadline());
        let trimmed = window.trim_with(&current, summarizer.as_ref());
        recorder.events(&window.take_events());
        match trimmed {
            Ok(trim) => {
                if let Some(w) = &trim.warning {
                    errln!("warning: {w}");
                }
                if !trim.evicted.is_empty() {
                    let summary = match trim.summary {
                        Some(v) => format!(", summarized as <COMPACT-SUMMARY v{v}>"),
                        None => String::new(),
                    };
                    errln!(
                        "window: evicted {} of {} messages (max {max}); {} left, {} tokens{summary}",
                        trim.evicted.len(),
                        current.len(),
                        trim.metrics.total_messages,
                        trim.metrics.estimated_tokens,
                    );
                }
                current = trim.messages;
            }
            Err(e) => return bad_input(&e.to_string()),
        }
    }
    let outcome = match &args.manual {
        Some(note) => {
            compactor.manual_compact(&current, note, summarizer.as_ref(), Context::default())
        }
        None => compactor.preflight(&current, summarizer.as_ref()),
    };
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            recorder.events(&compactor.take_events());
            recorder.finish();
            errln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    let events = compactor.take_events();
    recorder.events(&events);
    if let Some(report) = &outcome.report {
        let strategy = events
            .iter()
            .find_map(|e| match e {
                ptc_lisp::history::Event::SummaryCreated { strategy, .. } => Some(*strategy),
                _ => None,
            })
            .unwrap_or(config.policy.strategy);
        recorder.round(
            &current,
            &outcome.messages,
            report,
            strategy.as_str(),
            &summarizer.name(),
            args.manual.as_deref(),
        );
    }
    recorder.finish();
    match &outcome.report {
        Some(report) => {
            errln!(
                "after:  {}",
                breakdown_line(outcome.messages.len(), &report.after)
            );
            errln!(
                "kept {} pinned and {} recent messages (last {} turns, {} tool pairs); pruned {}",
                report.layers.pinned,
                report.layers.recent,
                report.kept.recent_turns,
                report.kept.tool_pairs,
                report.pruned
            );
            match report.summary {
                Some((version, tokens)) => errln!(
                    "summary: <COMPACT-SUMMARY v{version}> by {}, {tokens} tokens",
                    summarizer.name()
                ),
                None => errln!("summary: none"),
            }
            for fallback in &report.fallbacks {
                errln!("fallback: {fallback}");
            }
        }
        None => {
            let reason = events.iter().rev().find_map(|e| match e {
                ptc_lisp::history::Event::TriggerDecision { reason, .. } => Some(reason.clone()),
                _ => None,
            });
            errln!(
                "not compacted: {}",
                reason.unwrap_or_else(|| "below the trigger".into())
            );
        }
    }
    let out = to_jsonl(&outcome.messages);
    match &args.output {
        Some(path) => match super::out_file::write_output(path, out.as_bytes()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => bad_input(&format!("cannot write `{}`: {e}", path.display())),
        },
        None => {
            // A failed write ends the process (`cli::out`).
            super::out::raw(out.as_bytes());
            ExitCode::SUCCESS
        }
    }
}

fn breakdown_line(messages: usize, b: &Breakdown) -> String {
    format!(
        "{messages} messages, {} tokens (system {}, developer {}, tools {}, messages {})",
        b.total(),
        b.system,
        b.developer,
        b.tools_schema,
        b.messages
    )
}

/// The history, at most `limit` bytes (`--max-input-bytes`).
fn read_input(path: &Path, limit: u64) -> Result<String, String> {
    use ptc_lisp::input::{read_file_text, read_text};
    const RAISE: &str = "for a history; --max-input-bytes raises it";
    if path.as_os_str() == "-" {
        read_text(
            std::io::stdin().lock(),
            limit,
            "the history on standard input",
            RAISE,
        )
        .map_err(|e| e.describe("standard input"))
    } else {
        read_file_text(
            path,
            limit,
            &format!("the history `{}`", path.display()),
            RAISE,
        )
        .map_err(|e| e.describe(&format!("`{}`", path.display())))
    }
}
