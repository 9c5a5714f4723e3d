//! The multi-turn agent loop: a mission goes in, a model writes PTC-Lisp
//! turn by turn, a [`Session`] runs it against the host's tools and data,
//! and the run ends with `(return value)`, `(fail reason)` or the turn
//! limit.
//!
//! Each turn:
//!
//! 1. the prompt is built: the generated system prompt
//!    ([`super::prompt`]) and [`build_messages`] over this run's turns —
//!    the mission first (MSG-003, MSG-007), the history compressed or in
//!    full, and `Turns left: N` or, with one turn left, the final-turn
//!    line (MSG-005), stated once at the end of the last message;
//! 2. the provider is called; a provider error ends the run
//!    ([`AgentOutcome::ProviderError`]; providers retry transport
//!    failures themselves);
//! 3. the program is taken from the reply ([`extract_program`]: all
//!    ```` ```clojure ```` blocks of one reply run as one program);
//! 4. it runs as the session's next turn. `(return v)` ends the run when
//!    `v` matches the return signature (if any); `(fail reason)` ends it as
//!    failed; anything else — a plain value, an error — goes on to the
//!    next turn, and the history shows the model what happened.
//!
//! Failed turns the loop itself makes, so that the model sees them in its
//! history like any error:
//!
//! - **A reply with no program** costs a turn. It is recorded as a failed
//!   turn (code `no-code`, message [`NO_CODE_INSTRUCTION`]) whose program
//!   is the reply's text as `;;` comments (cut at 500 characters): the
//!   history shows the model what it said, as a program that does
//!   nothing, followed by the instruction.
//! - **A `(return v)` that does not match the signature** is recorded as a
//!   failed turn (code `signature-mismatch`) whose message names the path,
//!   the expected type and the value returned (see
//!   [`super::signature_check`]). Like every failed turn it is rolled
//!   back: its definitions are not kept, and the hint says so.
//!
//! **Single-shot mode** (`max_turns` 1): the program's last value is the
//! answer, `(return v)` is not needed, and compression never applies
//! (SS-001).
//!
//! The loop prints nothing: a [`Progress`] observer sees each turn (the
//! `ptc agent` command prints progress and writes the transcript from
//! it). The only I/O is the provider call.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::history::{ConversationMetrics, HistorySettings, Notice, RunHistory};
use super::message::{ChatMessage, ChatRequest, Usage};
use super::parse::{extract_program, ExtractedProgram, ExtractionRule, NO_CODE_INSTRUCTION};
use super::prompt::{system_prompt, PromptOptions};
use super::provider::{LlmProvider, ProviderError};
use super::signature_check::{check, return_mismatch, type_source};
use super::transcript::{TranscriptEntry, TranscriptToolCall};
use crate::compression::{
    build_messages, debug_view, session_state, turns_left, CompressionSetting, CompressionStats,
    Message, RenderContext, DEFAULT_MAX_TURNS,
};
use crate::eval::Limits;
use crate::history::{Event, Report, Trim};
use crate::session::{
    Session, Signature, SignatureError, Tool, ToolArgs, ToolError, Turn, TurnError, TurnOutcome,
};
use crate::value::{pr_str, to_json_capped, Value};

/// The error code of the failed turn recorded for a reply with no program.
pub const NO_CODE: &str = "no-code";

/// How much of a reply with no program its turn keeps.
const NO_CODE_REPLY_CHARS: usize = 500;

/// Sampling options passed to the provider with every call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelOptions {
    /// The model to ask; `None` means the provider's own model.
    pub model: Option<String>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
}

/// What an agent is asked to do and how. Options left `None` (or
/// [`CompressionSetting::Unset`]) take their defaults, or, for an agent
/// registered as a tool of another, the parent's values (API-007).
///
/// ```
/// use ptc_lisp::agent::AgentConfig;
///
/// let config = AgentConfig::new("Count the open tickets")
///     .with_max_turns(3)
///     .with_compression(true)
///     .with_signature("{open :int}");
/// assert_eq!(config.max_turns(), 3);
/// assert_eq!(AgentConfig::new("x").max_turns(), 5);
/// ```
#[derive(Debug, Clone, Default)]
pub struct AgentConfig {
    /// The task; it opens the first USER message and is never dropped.
    pub mission: String,
    /// Turns allowed, the first included; `None` means 5 (SS-002).
    pub max_turns: Option<usize>,
    pub compression: CompressionSetting,
    /// The shape `(return v)` must have, in signature syntax: `{count
    /// :int, items [:string]}`, `[:map]`, `:string`, or a whole tool
    /// signature `(q :string) -> :map` (its return type is used).
    pub signature: Option<String>,
    pub model: ModelOptions,
    /// Limits for every program; `None` keeps the session's own.
    pub limits: Option<Limits>,
    /// Replaces the generated system prompt.
    pub system_prompt: Option<String>,
    /// The sliding window (if configured) and token-budget compaction
    /// before every model call; `None` sends the whole history.
    pub history: Option<HistorySettings>,
}

impl AgentConfig {
    pub fn new(mission: impl Into<String>) -> Self {
        AgentConfig {
            mission: mission.into(),
            ..AgentConfig::default()
        }
    }

    pub fn with_max_turns(mut self, max_turns: usize) -> Self {
        self.max_turns = Some(max_turns);
        self
    }

    /// `true`, `false`, or a [`CompressionSetting`].
    pub fn with_compression(mut self, compression: impl Into<CompressionSetting>) -> Self {
        self.compression = compression.into();
        self
    }

    /// Compact the history before model calls under `settings`.
    pub fn with_history(mut self, settings: HistorySettings) -> Self {
        self.history = Some(settings);
        self
    }

    pub fn with_signature(mut self, signature: impl Into<String>) -> Self {
        self.signature = Some(signature.into());
        self
    }

    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model.model = Some(model.into());
        self
    }

    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.model.max_tokens = Some(max_tokens);
        self
    }

    pub fn with_temperature(mut self, temperature: f32) -> Self {
        self.model.temperature = Some(temperature);
        self
    }

    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = Some(limits);
        self
    }

    pub fn with_system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// The turns allowed: the configured number or 5.
    pub fn max_turns(&self) -> usize {
        self.max_turns.unwrap_or(DEFAULT_MAX_TURNS)
    }

    /// This configuration with every unset option taken from `parent`:
    /// max turns, compression, model options and limits (API-007). The
    /// mission, signature and system prompt are never inherited.
    pub fn inherit(mut self, parent: &AgentConfig) -> AgentConfig {
        self.max_turns = self.max_turns.or(parent.max_turns);
        self.compression = self.compression.inherit(&parent.compression);
        let own = &mut self.model;
        own.model = own.model.take().or_else(|| parent.model.model.clone());
        own.max_tokens = own.max_tokens.or(parent.model.max_tokens);
        own.temperature = own.temperature.or(parent.model.temperature);
        self.limits = self.limits.or_else(|| parent.limits.clone());
        self
    }
}

/// Why an agent could not be set up.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    #[error("The return signature is invalid: {0}")]
    Signature(#[from] SignatureError),
    #[error("`max_turns` must be at least 1")]
    NoTurns,
    #[error(transparent)]
    Tool(#[from] ToolError),
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentOutcome {
    /// `(return v)` with a value matching the signature (or, in
    /// single-shot mode, the program's value).
    Returned(Value),
    /// `(fail reason)`.
    Failed(Value),
    /// Every turn was used without a return or fail.
    TurnLimit,
    /// A model call failed; the run stopped there.
    ProviderError(ProviderError),
}

/// One call to the model and what came back.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelCall {
    /// The turn of this run it was made for, from 1.
    pub turn: usize,
    /// Everything sent, system prompt included.
    pub messages: Vec<ChatMessage>,
    pub reply: String,
    /// The program found in the reply; `None` when there was none.
    pub program: Option<String>,
    pub extraction: Option<ExtractionRule>,
    /// What the provider reported; `None` when it reports nothing.
    pub usage: Option<Usage>,
    pub duration: Duration,
}

impl ModelCall {
    /// The transcript line of this call, with what running `turn` (the
    /// turn made from its reply) gave.
    pub fn transcript_entry(&self, turn: &Turn) -> TranscriptEntry {
        let (result, error) = match &turn.outcome {
            TurnOutcome::Error { error } => (None, Some(error.to_string())),
            TurnOutcome::Value { value }
            | TurnOutcome::Return { value }
            | TurnOutcome::Fail { value } => {
                (Some(to_json_capped(value, TRANSCRIPT_VALUE_BYTES)), None)
            }
        };
        TranscriptEntry {
            turn: self.turn as u32,
            messages: self.messages.clone(),
            reply: self.reply.clone(),
            program: self.program.clone(),
            extraction: self.extraction,
            outcome: Some(outcome_name(&turn.outcome).to_string()),
            result,
            error,
            tool_calls: turn
                .tool_calls
                .iter()
                .map(|c| TranscriptToolCall {
                    name: c.name.clone(),
                    args: serde_json::Value::Array(
                        c.args
                            .iter()
                            .map(|a| to_json_capped(a, TRANSCRIPT_VALUE_BYTES))
                            .collect(),
                    ),
                    result: c
                        .result
                        .as_ref()
                        .map(|r| to_json_capped(r, TRANSCRIPT_VALUE_BYTES)),
                    error: c.error.clone(),
                    duration_ms: c.duration.as_millis() as u64,
                })
                .collect(),
            usage: self.usage,
        }
    }
}

/// The most bytes of JSON one value (a result, a tool call's arguments or
/// result) takes in a transcript line: values that share structure can
/// expand without limit (1,000 references to a 1 MB string wrote a 1 GB
/// line). A larger value is replaced by a string saying so.
pub const TRANSCRIPT_VALUE_BYTES: usize = 1024 * 1024;

fn outcome_name(outcome: &TurnOutcome) -> &'static str {
    match outcome {
        TurnOutcome::Value { .. } => "value",
        TurnOutcome::Return { .. } => "return",
        TurnOutcome::Fail { .. } => "fail",
        TurnOutcome::Error { .. } => "error",
    }
}

/// Everything a run produced.
#[derive(Debug, Clone)]
pub struct AgentRun {
    pub outcome: AgentOutcome,
    /// Every turn of this run, whole (DBG-001), whatever the prompts
    /// showed. `turns[i]` was made from the reply of `calls[i]`.
    pub turns: Vec<Turn>,
    /// Every completed model call, in order.
    pub calls: Vec<ModelCall>,
    /// The sum of the usage the provider reported.
    pub usage: Usage,
    /// The compression statistics of the last prompt sent; `None` when
    /// compression was off.
    pub compression: Option<CompressionStats>,
    /// Each compaction of the history, in order.
    pub compactions: Vec<Report>,
    /// Messages and tokens of the last request, and what the window
    /// evicted (seed 003); `None` without the history layer.
    pub conversation: Option<ConversationMetrics>,
    /// Every decision of the history layer (pre-flight estimates,
    /// triggers, summaries, errors), in order.
    pub history_events: Vec<Event>,
    /// The counting model and the running ratio of the input tokens the
    /// provider reported to our estimates (`None` without compaction or
    /// without reported usage).
    pub token_calibration: Option<(String, f64)>,
    pub duration: Duration,
}

impl AgentRun {
    /// The returned value, when the run succeeded.
    pub fn value(&self) -> Option<&Value> {
        match &self.outcome {
            AgentOutcome::Returned(v) => Some(v),
            _ => None,
        }
    }

    pub fn succeeded(&self) -> bool {
        matches!(self.outcome, AgentOutcome::Returned(_))
    }

    /// The error of the last turn, if it failed.
    pub fn last_error(&self) -> Option<&TurnError> {
        self.turns.last().and_then(Turn::error)
    }

    /// One transcript entry per model call.
    pub fn transcript(&self) -> Vec<TranscriptEntry> {
        self.calls
            .iter()
            .zip(&self.turns)
            .map(|(call, turn)| call.transcript_entry(turn))
            .collect()
    }

    /// The debug view (DBG-005): every turn in full, the messages of the
    /// last model call (what the model saw last) and the compression
    /// statistics.
    pub fn debug_view(&self) -> String {
        let messages: &[Message] = self.calls.last().map_or(&[], |c| &c.messages);
        debug_view(&self.turns, messages, self.compression.as_ref())
    }
}

/// Everything an observer learns about a finished turn.
#[derive(Debug, Clone, Copy)]
pub struct TurnReport<'a> {
    pub max_turns: usize,
    pub call: &'a ModelCall,
    pub turn: &'a Turn,
}

impl TurnReport<'_> {
    /// The transcript line of this turn.
    pub fn transcript_entry(&self) -> TranscriptEntry {
        self.call.transcript_entry(self.turn)
    }
}

/// Observes a run as it goes; every method does nothing by default. The
/// `ptc agent` command prints progress on standard error and writes its
/// transcript through this trait, so the library itself stays quiet.
pub trait Progress {
    /// Turn `turn` (from 1) of `max_turns` is about to call the model.
    fn turn_started(&mut self, _turn: usize, _max_turns: usize) {}
    /// A turn ran (or its reply held no program).
    fn turn_finished(&mut self, _report: &TurnReport<'_>) {}
    /// The request of turn `turn` is about to be sent to the model (after
    /// any compaction): `messages` is exactly what the model gets.
    fn request_ready(&mut self, _turn: usize, _messages: &[ChatMessage]) {}
    /// The model call of turn `turn` failed; the run ends.
    fn provider_failed(&mut self, _turn: usize, _error: &ProviderError) {}
    /// The history was compacted before the model call of turn `turn`.
    fn history_compacted(&mut self, _turn: usize, _report: &Report) {}
    /// The history could not be compacted before turn `turn` (0: before
    /// the run); the whole history is sent.
    fn history_problem(&mut self, _turn: usize, _problem: &str) {}
    /// The window evicted messages before the model call of turn `turn`.
    fn history_trimmed(&mut self, _turn: usize, _trim: &Trim) {}
    /// A warning of the history layer before turn `turn`: the
    /// conversation near the window's cap, preserve settings over it.
    fn history_warning(&mut self, _turn: usize, _warning: &str) {}
    /// The request of turn `turn`, as the history layer left it: its
    /// messages and tokens, and what the window evicted so far.
    fn conversation(&mut self, _turn: usize, _metrics: &ConversationMetrics) {}
}

/// The default observer: does nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Quiet;

impl Progress for Quiet {}

/// A model, a session and a configuration, ready to run.
///
/// ```
/// use std::sync::Arc;
/// use ptc_lisp::agent::{Agent, AgentConfig, ScriptedProvider};
/// use ptc_lisp::session::Session;
/// use ptc_lisp::value::pr_str;
///
/// let mut session = Session::new();
/// session.set_data("prices", ptc_lisp::value::Value::vector([3.into(), 4.into()]));
/// let model = Arc::new(ScriptedProvider::new(vec![
///     "```clojure\n(def total (reduce + data/prices))\n(println total)\n```".into(),
///     "```clojure\n(return {:total total})\n```".into(),
/// ]));
/// let config = AgentConfig::new("Add up the prices").with_signature("{total :int}");
/// let mut agent = Agent::new(model, session, config).unwrap();
/// let run = agent.run();
/// assert_eq!(pr_str(run.value().unwrap()), "{:total 7}");
/// assert_eq!(run.turns.len(), 2);
/// ```
pub struct Agent {
    provider: Arc<dyn LlmProvider>,
    session: Session,
    config: AgentConfig,
    signature: Option<Signature>,
    system_prompt: String,
    progress: Box<dyn Progress + Send>,
    /// The session's turn count when the current run started: earlier
    /// turns (a prelude, an earlier run) are not this run's history.
    run_start: usize,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("provider", &self.provider.name())
            .field("session", &self.session)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Agent {
    /// Check the configuration and apply its limits to the session.
    pub fn new(
        provider: Arc<dyn LlmProvider>,
        mut session: Session,
        config: AgentConfig,
    ) -> Result<Agent, AgentError> {
        let (system_prompt, signature) = checked_prompt(&config)?;
        if let Some(limits) = &config.limits {
            session.set_limits(limits.clone());
        }
        let run_start = session.turns().len();
        Ok(Agent {
            provider,
            session,
            config,
            signature,
            system_prompt,
            progress: Box::new(Quiet),
            run_start,
        })
    }

    /// Report each turn to `progress`.
    pub fn with_progress(mut self, progress: impl Progress + Send + 'static) -> Self {
        self.progress = Box::new(progress);
        self
    }

    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    /// The system prompt every call sends.
    pub fn system_prompt(&self) -> &str {
        &self.system_prompt
    }

    pub fn session(&self) -> &Session {
        &self.session
    }

    pub fn session_mut(&mut self) -> &mut Session {
        &mut self.session
    }

    pub fn into_session(self) -> Session {
        self.session
    }

    /// The messages the model would receive next, with the compression
    /// statistics: what [`Agent::run`] sends at the start of each turn.
    pub fn next_messages(&self) -> (Vec<Message>, Option<CompressionStats>) {
        render_next(
            &self.session,
            self.run_start,
            &self.config,
            &self.system_prompt,
            self.signature.as_ref(),
        )
    }

    /// Run the mission to its end. A second call starts a new run on the
    /// same session: the definitions carry over, the history starts
    /// afresh.
    pub fn run(&mut self) -> AgentRun {
        let started = Instant::now();
        self.run_start = self.session.turns().len();
        let max_turns = self.config.max_turns();
        let single_shot = max_turns == 1;
        let mut calls = Vec::new();
        let mut usage = Usage::default();
        let mut compression = None;
        let mut outcome = AgentOutcome::TurnLimit;
        let mut history = self.run_history();
        for number in 1..=max_turns {
            self.progress.turn_started(number, max_turns);
            let (messages, stats) = self.next_messages();
            compression = stats;
            let messages = match &mut history {
                Some(h) => self.compact(h, number, messages),
                None => messages,
            };
            let request = ChatRequest {
                model: self.config.model.model.clone().unwrap_or_default(),
                messages,
                max_tokens: self.config.model.max_tokens,
                temperature: self.config.model.temperature,
                ..ChatRequest::default()
            };
            self.progress.request_ready(number, &request.messages);
            let asked = Instant::now();
            let response = match self.provider.complete(&request) {
                Ok(response) => response,
                Err(error) => {
                    self.progress.provider_failed(number, &error);
                    outcome = AgentOutcome::ProviderError(error);
                    break;
                }
            };
            let duration = asked.elapsed();
            if let Some(u) = response.usage {
                usage += u;
                if let Some(h) = &mut history {
                    h.calibrate(u.input_tokens);
                }
            }
            let (turn, extracted) = eval_reply(
                &mut self.session,
                &response.content,
                self.signature.as_ref(),
                single_shot,
            );
            let turn = turn.clone();
            let call = ModelCall {
                turn: number,
                messages: request.messages,
                reply: response.content,
                program: extracted.as_ref().map(|p| p.source.clone()),
                extraction: extracted.as_ref().map(|p| p.rule),
                usage: response.usage,
                duration,
            };
            self.progress.turn_finished(&TurnReport {
                max_turns,
                call: &call,
                turn: &turn,
            });
            calls.push(call);
            match turn.outcome {
                TurnOutcome::Return { value } => {
                    outcome = AgentOutcome::Returned(value);
                    break;
                }
                TurnOutcome::Value { value } if single_shot => {
                    outcome = AgentOutcome::Returned(value);
                    break;
                }
                TurnOutcome::Fail { value } => {
                    outcome = AgentOutcome::Failed(value);
                    break;
                }
                _ => {}
            }
        }
        let token_calibration = history.as_ref().and_then(RunHistory::calibration);
        let conversation = history.as_ref().map(|h| h.conversation);
        let (compactions, history_events) =
            history.map_or_else(Default::default, |h| (h.reports, h.events));
        AgentRun {
            outcome,
            turns: self.session.turns()[self.run_start..].to_vec(),
            calls,
            usage,
            compression,
            compactions,
            conversation,
            history_events,
            token_calibration,
            duration: started.elapsed(),
        }
    }

    /// The compaction state of a new run, if the configuration asks for one.
    fn run_history(&mut self) -> Option<RunHistory> {
        let settings = self.config.history.as_ref()?;
        let model = self
            .config
            .model
            .model
            .clone()
            .unwrap_or_else(|| self.provider.name());
        match RunHistory::new(settings, &model) {
            Ok(h) => Some(h),
            Err(problem) => {
                self.progress.history_problem(0, &problem);
                None
            }
        }
    }

    /// The window and the pre-flight check of turn `number`: `messages`
    /// as sent, trimmed or compacted.
    fn compact(
        &mut self,
        history: &mut RunHistory,
        number: usize,
        messages: Vec<Message>,
    ) -> Vec<Message> {
        let keep = self
            .config
            .history
            .as_ref()
            .map_or(0, |s| s.policy.keep_recent_turns);
        let turns = &self.session.turns()[self.run_start..];
        let folded = &turns[..turns.len().saturating_sub(keep)];
        let memory = self.session.memory();
        let state = || session_state(folded, memory);
        let progress = &mut self.progress;
        let messages = history.prepare(messages, &state, &mut |notice| match notice {
            Notice::Trimmed(trim) => progress.history_trimmed(number, trim),
            Notice::Compacted(report) => progress.history_compacted(number, report),
            Notice::Warning(warning) => progress.history_warning(number, warning),
            Notice::Problem(problem) => progress.history_problem(number, problem),
        });
        self.progress.conversation(number, &history.conversation);
        messages
    }

    /// Turn this agent into a tool for another agent (see [`AgentTool`]);
    /// it keeps its provider, its session (as the template every call
    /// starts from) and its configuration (whose mission is the template
    /// of each call's mission).
    pub fn as_tool(
        self,
        name: impl Into<String>,
        signature: impl Into<String>,
        description: impl Into<String>,
    ) -> AgentTool {
        AgentTool {
            name: name.into(),
            signature: signature.into(),
            description: description.into(),
            provider: Some(self.provider),
            session: self.session,
            config: self.config,
        }
    }

    /// Register `tool` as `tool/NAME` of this agent's session. The
    /// sub-agent inherits every option it leaves unset from this agent's
    /// configuration (API-007), and this agent's provider when it has
    /// none of its own (then also the model name).
    pub fn add_agent_tool(&mut self, tool: AgentTool) -> Result<&mut Self, AgentError> {
        let inherits_provider = tool.provider.is_none();
        let mut config = tool.config.clone().inherit(&self.config);
        if !inherits_provider {
            config.model.model = tool.config.model.model.clone();
        }
        // The tool's signature is the contract with the caller: its
        // return type is what the sub-agent must return.
        config.signature = Some(tool.signature.clone());
        if config.max_turns() == 0 {
            return Err(AgentError::NoTurns);
        }
        Signature::parse(&tool.signature)?;
        let provider = tool.provider.unwrap_or_else(|| self.provider.clone());
        let template = tool.session;
        let name = tool.name.clone();
        let handler = move |args: ToolArgs| {
            let mut session = template.clone();
            for (key, value) in args.named().iter() {
                if let Some(k) = key.as_name() {
                    session.set_data(k, value.clone());
                }
            }
            let mut config = config.clone();
            config.mission = fill_mission(&config.mission, &args);
            let mut agent =
                Agent::new(provider.clone(), session, config).map_err(|e| e.to_string())?;
            let run = agent.run();
            match run.outcome {
                AgentOutcome::Returned(value) => Ok(value),
                AgentOutcome::Failed(reason) => {
                    Err(format!("the agent failed: {}", pr_str(&reason)))
                }
                AgentOutcome::TurnLimit => Err(match run.last_error() {
                    Some(e) => format!(
                        "the agent used its {} turns without returning; its last error: {}",
                        run.turns.len(),
                        e.message
                    ),
                    None => format!(
                        "the agent used its {} turns without returning",
                        run.turns.len()
                    ),
                }),
                AgentOutcome::ProviderError(e) => {
                    Err(format!("the agent's model call failed: {e}"))
                }
            }
        };
        let tool = Tool::new(&name, &tool.signature, &tool.description, handler)?;
        self.session.add_tool(tool)?;
        Ok(self)
    }
}

/// An agent that another agent calls as a tool: `(tool/NAME args)` runs
/// it to completion and gives back its returned value. A `(fail reason)`,
/// the turn limit or a provider error becomes a tool error the caller
/// sees.
///
/// Each call starts from a clone of the template session, with every
/// named argument bound as `data/NAME`, and with a mission made from the
/// configuration's mission by replacing each `{{NAME}}` with that
/// argument (strings as they are, other values in Clojure notation). The
/// tool's signature declares the arguments, and its return type is the
/// signature the sub-agent's `(return v)` must match. A sub-agent runs
/// quietly (no progress) and inside the caller's program, so the caller's
/// time limit must leave room for it.
///
/// ```
/// use std::sync::Arc;
/// use ptc_lisp::agent::{Agent, AgentConfig, AgentTool, ScriptedProvider};
/// use ptc_lisp::eval::Limits;
/// use ptc_lisp::session::Session;
/// use ptc_lisp::value::pr_str;
///
/// // One script serves both agents: the parent's first reply, the
/// // child's reply, then the parent's second reply.
/// let model = Arc::new(ScriptedProvider::new(vec![
///     "```clojure\n(def n (tool/double {:x 21}))\n(println n)\n```".into(),
///     "```clojure\n(return (* 2 data/x))\n```".into(),
///     "```clojure\n(return n)\n```".into(),
/// ]));
/// let parent = AgentConfig::new("Double 21").with_limits(Limits::generous());
/// let mut agent = Agent::new(model.clone(), Session::new(), parent).unwrap();
/// agent.add_agent_tool(AgentTool::new(
///     "double", "(x :int) -> :int", "Doubles a number",
///     AgentConfig::new("Double {{x}}"))).unwrap();
/// let run = agent.run();
/// assert_eq!(pr_str(run.value().unwrap()), "42");
/// assert!(model.requests()[1].messages[1].content.starts_with("Double 21"));
/// ```
pub struct AgentTool {
    name: String,
    signature: String,
    description: String,
    provider: Option<Arc<dyn LlmProvider>>,
    session: Session,
    config: AgentConfig,
}

impl std::fmt::Debug for AgentTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentTool")
            .field("name", &self.name)
            .field("signature", &self.signature)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl AgentTool {
    /// A sub-agent with an empty template session that uses the caller's
    /// provider.
    pub fn new(
        name: impl Into<String>,
        signature: impl Into<String>,
        description: impl Into<String>,
        config: AgentConfig,
    ) -> Self {
        AgentTool {
            name: name.into(),
            signature: signature.into(),
            description: description.into(),
            provider: None,
            session: Session::new(),
            config,
        }
    }

    /// Use this provider rather than the caller's.
    pub fn with_provider(mut self, provider: Arc<dyn LlmProvider>) -> Self {
        self.provider = Some(provider);
        self
    }

    /// Start every call from this session (its tools, data and
    /// definitions).
    pub fn with_session(mut self, session: Session) -> Self {
        self.session = session;
        self
    }
}

/// `template` with each `{{name}}` replaced by the argument `name`.
fn fill_mission(template: &str, args: &ToolArgs) -> String {
    let mut mission = template.to_string();
    for (key, value) in args.named().iter() {
        if let Some(k) = key.as_name() {
            let text = match value.as_str() {
                Some(s) => s.to_string(),
                None => pr_str(value),
            };
            mission = mission.replace(&format!("{{{{{k}}}}}"), &text);
        }
    }
    mission
}

/// The messages an [`Agent`] with `config` would send next, if the turns
/// of `session` from `run_start` on were its run so far: the system
/// prompt (`config.system_prompt`, or the generated one for its signature
/// and turns) and the rendered history, with the compression statistics.
/// For hosts that run the loop themselves (the Python package) and must
/// send exactly what `ptc agent` sends; [`Agent::next_messages`] is this.
///
/// ```
/// use ptc_lisp::agent::{prompt_messages, AgentConfig};
/// use ptc_lisp::session::Session;
///
/// let mut session = Session::new();
/// session.eval("(def x 41) (println (inc x))");
/// let config = AgentConfig::new("Find x").with_compression(true);
/// let (messages, _) = prompt_messages(&session, &config, 0).unwrap();
/// assert_eq!(messages.len(), 2);
/// assert!(messages[1].content.contains("Find x") && messages[1].content.contains("42"));
/// ```
pub fn prompt_messages(
    session: &Session,
    config: &AgentConfig,
    run_start: usize,
) -> Result<(Vec<Message>, Option<CompressionStats>), AgentError> {
    let (prompt, signature) = checked_prompt(config)?;
    Ok(render_next(
        session,
        run_start.min(session.turns().len()),
        config,
        &prompt,
        signature.as_ref(),
    ))
}

/// The system prompt of `config` (its own, or the generated one for its
/// signature and turns) and its parsed signature; a configuration with no
/// turns or a bad signature is an error.
fn checked_prompt(config: &AgentConfig) -> Result<(String, Option<Signature>), AgentError> {
    if config.max_turns() == 0 {
        return Err(AgentError::NoTurns);
    }
    let signature = config
        .signature
        .as_deref()
        .map(Signature::parse)
        .transpose()?;
    let prompt = match &config.system_prompt {
        Some(prompt) => prompt.clone(),
        None => system_prompt(PromptOptions {
            single_shot: config.max_turns() == 1,
            signature: signature.as_ref(),
        }),
    };
    Ok((prompt, signature))
}

fn render_next(
    session: &Session,
    run_start: usize,
    config: &AgentConfig,
    system_prompt: &str,
    signature: Option<&Signature>,
) -> (Vec<Message>, Option<CompressionStats>) {
    let max_turns = config.max_turns();
    let turns = &session.turns()[run_start..];
    let mut ctx = RenderContext::for_session(session, &config.mission, max_turns)
        .with_turns_left(turns_left(max_turns, turns.len()))
        .with_system_prompt(system_prompt.to_string());
    if let Some(sig) = signature {
        ctx = ctx.with_signature(type_source(sig.returns()));
    }
    build_messages(
        &config.compression,
        max_turns,
        turns,
        session.memory(),
        &ctx,
    )
}

/// Run a model's reply as the next turn of `session`, as the agent loop
/// does: the program extracted from its code blocks
/// ([`extract_program`]) is evaluated, a `(return v)` (or, in single-shot
/// mode, the last value) is checked against `signature` and rejected as a
/// `signature-mismatch` turn when it does not match, and a reply with no
/// program is recorded as a failed `no-code` turn. Returns the turn and
/// the program extracted, if any.
pub fn eval_reply<'s>(
    session: &'s mut Session,
    reply: &str,
    signature: Option<&Signature>,
    single_shot: bool,
) -> (&'s Turn, Option<ExtractedProgram>) {
    let extracted = extract_program(reply);
    let turn = match &extracted {
        Some(program) => session.eval_checked(&program.source, |outcome| {
            let value = match outcome {
                TurnOutcome::Return { value } => value,
                TurnOutcome::Value { value } if single_shot => value,
                _ => return Ok(()),
            };
            match signature {
                Some(sig) => check(sig.returns(), value).map_err(|m| return_mismatch(sig, &m)),
                None => Ok(()),
            }
        }),
        None => session.record_failed_turn(
            &no_code_program(reply),
            TurnError::new(NO_CODE, NO_CODE_INSTRUCTION),
        ),
    };
    (turn, extracted)
}

/// The program recorded for a reply that held none: its text as `;;`
/// comments, so the history shows what the model said and the program
/// does nothing.
fn no_code_program(reply: &str) -> String {
    let text = super::truncate(reply.trim(), NO_CODE_REPLY_CHARS);
    if text.is_empty() {
        return ";; (empty reply)".to_string();
    }
    text.lines()
        .map(|line| format!(";; {line}").trim_end().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_without_code_become_comments() {
        assert_eq!(
            no_code_program("I think\n\nthe answer is 4.\n"),
            ";; I think\n;;\n;; the answer is 4."
        );
        assert_eq!(no_code_program("  "), ";; (empty reply)");
        assert!(crate::eval::Program::compile(&no_code_program("a\n(b\n\"c")).is_ok());
    }

    #[test]
    fn missions_fill_their_placeholders() {
        let args = ToolArgs::new(
            [
                (Value::keyword("topic"), Value::str("rust")),
                (Value::keyword("n"), Value::Int(3)),
            ]
            .into_iter()
            .collect(),
            vec![],
        );
        assert_eq!(
            fill_mission("Find {{n}} facts about {{topic}} {{other}}", &args),
            "Find 3 facts about rust {{other}}"
        );
    }

    #[test]
    fn options_are_inherited_unless_set() {
        let parent = AgentConfig::new("p")
            .with_max_turns(7)
            .with_compression(true)
            .with_temperature(0.5)
            .with_model("m");
        let child = AgentConfig::new("c").with_max_turns(2).inherit(&parent);
        assert_eq!(child.max_turns(), 2);
        assert!(matches!(child.compression, CompressionSetting::On));
        assert_eq!(child.model.temperature, Some(0.5));
        assert_eq!(child.model.model.as_deref(), Some("m"));
        assert_eq!(child.mission, "c");
        let off = AgentConfig::new("c")
            .with_compression(false)
            .inherit(&parent);
        assert!(matches!(off.compression, CompressionSetting::Off));
        assert_eq!(off.max_turns(), 7);
    }
}
