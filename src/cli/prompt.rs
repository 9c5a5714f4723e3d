//! `ptc prompt`: the exact messages `ptc agent` would send on its first
//! turn (the system prompt and the first user message), with token
//! counts, built by the same agent code without calling a model.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use ptc_lisp::agent::{Agent, AgentConfig, ScriptedProvider};
use ptc_lisp::compression::{CompressionSetting, Role};
use ptc_lisp::history::{Message, TokenCounter};

/// Where the mission comes from, for `ptc agent` and `ptc prompt`.
#[derive(Args)]
pub struct MissionArgs {
    /// The task for the model (`-`: read it from standard input)
    #[arg(
        long,
        value_name = "TEXT",
        required_unless_present = "mission_file",
        conflicts_with = "mission_file",
        allow_hyphen_values = true
    )]
    pub mission: Option<String>,
    /// Read the task for the model from a file
    #[arg(long, value_name = "FILE")]
    pub mission_file: Option<PathBuf>,
}

/// The options of `ptc prompt`: those of `ptc agent` that shape the
/// first prompt.
#[derive(Args)]
pub struct PromptArgs {
    #[command(flatten)]
    pub mission: MissionArgs,
    /// A JSON object file whose keys become `data/` values
    #[arg(long, value_name = "FILE.json")]
    pub data: Option<PathBuf>,
    /// A tool manifest (JSON or TOML) whose tools become `tool/` functions
    #[arg(long, value_name = "FILE")]
    pub tools: Option<PathBuf>,
    /// A file of definitions loaded into `user/` first, as for `ptc agent`
    #[arg(long, value_name = "FILE")]
    pub prelude: Option<PathBuf>,
    #[command(flatten)]
    pub mcp: super::mcp::McpArgs,
    /// Turns allowed, as for `ptc agent` (1: single-shot mode)
    #[arg(long, value_name = "N", default_value_t = 5,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_turns: u32,
    /// Render with compression (SingleUserCoalesced), as `ptc agent
    /// --compression`
    #[arg(long)]
    pub compression: bool,
    #[arg(
        long,
        value_name = "SIG",
        help = "The shape the return value must have, as for `ptc agent`"
    )]
    pub signature: Option<String>,
    /// The largest `--data` file read, in bytes [default: 67108864 (64 MiB)]
    #[arg(long, value_name = "N", default_value_t = ptc_lisp::input::MAX_DATA_BYTES,
          hide_default_value = true)]
    pub max_data_bytes: u64,
    /// The model whose tokenizer counts, as for `ptc compact --model`
    /// [default: gpt-4o]
    #[arg(long, value_name = "M")]
    pub model: Option<String>,
    /// Print the messages and counts as one JSON object
    #[arg(long)]
    pub json: bool,
}

/// The model `ptc prompt` counts for when `--model` is absent.
pub const DEFAULT_COUNTING_MODEL: &str = "gpt-4o";

/// Print each message under a header with its role and token count,
/// then the total. Every figure comes from the history layer's counter
/// (the one `ptc compact`, the REPL's `:tokens`/`:budget` and the agent
/// use): a message's count includes its role and framing, and the total
/// adds the reply priming.
pub fn run(args: &PromptArgs, mission: String, session: ptc_lisp::session::Session) -> ExitCode {
    let mut config = AgentConfig::new(mission)
        .with_max_turns(args.max_turns as usize)
        .with_compression(if args.compression {
            CompressionSetting::On
        } else {
            CompressionSetting::Off
        });
    config.signature = args.signature.clone();
    // Never called: only the first prompt is built.
    let provider = Arc::new(ScriptedProvider::new(Vec::new()));
    let agent = match Agent::new(provider, session, config) {
        Ok(a) => a,
        Err(e) => {
            errln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let (messages, _) = agent.next_messages();
    let model = args.model.as_deref().unwrap_or(DEFAULT_COUNTING_MODEL);
    let mut counter = TokenCounter::new(model);
    let chat: Vec<Message> = messages.iter().cloned().map(Message::from).collect();
    let per_message = counter.per_message(&chat);
    let breakdown = counter.count(&chat);
    let token_model = counter.token_model();
    let counted = if token_model.is_exact() {
        format!("{} tokens for {model}", token_model.encoding.name())
    } else {
        format!(
            "tokens for {model}, approximated from {}",
            token_model.encoding.name()
        )
    };
    let role = |r: Role| match r {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    if args.json {
        let report = serde_json::json!({
            "model": model,
            "encoding": token_model.encoding.name(),
            "exact": token_model.is_exact(),
            "messages": messages.iter().zip(&per_message).map(|(m, n)| serde_json::json!({
                "role": role(m.role),
                "content": m.content,
                "tokens": n,
            })).collect::<Vec<_>>(),
            "tokens": {
                "system": breakdown.system,
                "developer": breakdown.developer,
                "tools": breakdown.tools_schema,
                "messages": breakdown.messages,
                "total": breakdown.total(),
            },
        });
        crate::cli::out::line(&report.to_string());
        return ExitCode::SUCCESS;
    }
    let mut out = String::new();
    for (m, tokens) in messages.iter().zip(&per_message) {
        out.push_str(&format!("=== {} ({tokens} tokens) ===\n", role(m.role)));
        out.push_str(m.content.trim_end());
        out.push_str("\n\n");
    }
    out.push_str(&format!(
        "=== {} message(s), {} tokens ({counted}; each message's count includes its role and framing, the total the reply priming) ===",
        messages.len(),
        breakdown.total()
    ));
    crate::cli::out::line(&out);
    ExitCode::SUCCESS
}
