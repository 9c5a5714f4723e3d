//! `ptc prompt`: the exact messages `ptc agent` would send on its first
//! turn (the system prompt and the first user message), with token
//! counts, built by the same agent code without calling a model.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use ptc_lisp::agent::{Agent, AgentConfig, ScriptedProvider};
use ptc_lisp::compression::{CompressionSetting, Role};
use ptc_lisp::tokens::count_tokens;

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
}

/// Print each message under a header with its role and token count
/// (`o200k_base`), then the total.
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
    let mut out = String::new();
    let mut total = 0;
    for m in &messages {
        let tokens = count_tokens(&m.content);
        total += tokens;
        let role = match m.role {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        out.push_str(&format!("=== {role} ({tokens} tokens) ===\n"));
        out.push_str(m.content.trim_end());
        out.push_str("\n\n");
    }
    out.push_str(&format!(
        "=== {} message(s), {total} tokens (o200k_base) ===",
        messages.len()
    ));
    crate::cli::out::line(&out);
    ExitCode::SUCCESS
}
