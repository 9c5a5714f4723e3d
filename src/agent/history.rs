//! The history layer in the agent loop: before every model call, seed
//! 003's sliding window (when configured), then seed 004's pre-flight
//! check and compaction when it triggers (the system prompt and the
//! mission message protected, the interpreter's state fed to the
//! summary); and the LLM summarizer that uses our providers, held to a
//! deadline.

use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::message::{ChatMessage, ChatRequest};
use super::provider::{LlmProvider, ProviderError};
use crate::history::recorder::Recorder;
use crate::history::{
    Carry, Compactor, Context, Digest, Event, Message, Policy, Report, Strategy, Summarizer,
    SummaryError, SummaryRequest, Trim, Window, WindowPolicy, DEFAULT_SUMMARY_DEADLINE,
};

/// Who writes the summaries of compacted history.
#[derive(Clone, Default)]
pub enum SummaryMode {
    /// The deterministic digest (no model call).
    #[default]
    Digest,
    /// A model, through one of our providers.
    Llm(Arc<dyn LlmProvider>),
}

impl std::fmt::Debug for SummaryMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SummaryMode::Digest => f.write_str("Digest"),
            SummaryMode::Llm(p) => write!(f, "Llm({})", p.name()),
        }
    }
}

/// Token-budget compaction, and optionally the sliding window, for an
/// agent run.
///
/// ```
/// use ptc_lisp::agent::HistorySettings;
/// use ptc_lisp::history::{Policy, WindowPolicy};
///
/// let settings = HistorySettings::new(Policy::default())
///     .with_window(WindowPolicy { max_messages: 30, ..WindowPolicy::default() });
/// assert_eq!(settings.window.max_messages, 30);
/// ```
#[derive(Debug, Clone)]
pub struct HistorySettings {
    pub policy: Policy,
    pub summary: SummaryMode,
    /// The model whose tokenizer counts (the run's model, or the
    /// provider's name, when `None`).
    pub counting_model: Option<String>,
    /// Where events and archives of compaction rounds go, if anywhere.
    pub recorder: Option<Arc<Mutex<Recorder>>>,
    /// Seed 003's sliding window, applied before the budget;
    /// `max_messages` 0 (the default here) is off. Its head is at least
    /// the system prompt and the mission, which are never evicted.
    pub window: WindowPolicy,
    /// The most a summary may take in all, retries and fallbacks
    /// included; past it the round goes on without one.
    pub summary_deadline: Duration,
}

impl HistorySettings {
    pub fn new(policy: Policy) -> Self {
        HistorySettings {
            policy,
            summary: SummaryMode::Digest,
            counting_model: None,
            recorder: None,
            window: WindowPolicy {
                max_messages: 0,
                ..WindowPolicy::default()
            },
            summary_deadline: DEFAULT_SUMMARY_DEADLINE,
        }
    }

    /// Also keep every request within `window` (seed 003).
    pub fn with_window(mut self, window: WindowPolicy) -> Self {
        self.window = window;
        self
    }
}

/// Seed 003's conversation metrics of an agent run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct ConversationMetrics {
    /// Messages in the last request sent.
    pub message_count: usize,
    /// Tokens of the last request sent, as estimated before sending.
    pub estimated_tokens: usize,
    /// Messages the window evicted over the run.
    pub evicted_messages: usize,
    /// Summaries of evicted messages the window wrote.
    pub window_summaries: usize,
    /// The window's cap (0: no window).
    pub max_messages: usize,
}

/// The sampling seed of summary requests (seed 004's deterministic
/// summaries: a fixed seed at temperature 0).
pub const SUMMARY_SEED: u64 = 42;

/// Summaries written by a model at temperature 0 and a fixed seed, with
/// one of seed 004's strategies. A reply that declines (in its text or
/// as the API's structured refusal) is a refusal, and the compactor then
/// asks for the brief strategy; a reply cut at its token limit is too
/// long (retried with half the tokens); a failed call is a failure (it
/// prunes only). With a deadline ([`Summarizer::summarize_by`]) the call
/// runs on a thread of its own, with the time left as its HTTP limit, and
/// is given up when the deadline passes, whatever the provider does.
pub struct LlmSummarizer {
    provider: Arc<dyn LlmProvider>,
    seed: Option<u64>,
}

impl LlmSummarizer {
    pub fn new(provider: Arc<dyn LlmProvider>) -> Self {
        LlmSummarizer {
            provider,
            seed: Some(SUMMARY_SEED),
        }
    }

    /// Send `seed` (or none) instead of [`SUMMARY_SEED`].
    pub fn with_seed(mut self, seed: Option<u64>) -> Self {
        self.seed = seed;
        self
    }
}

/// Instructions per strategy (our own wording of seed 004's aims).
fn instructions(strategy: Strategy) -> &'static str {
    match strategy {
        Strategy::TaskState => {
            "Write the task state of the conversation below as short sections: Goals and success \
             criteria; Key entities (identifiers, file names, branches, environments); Constraints; \
             Decisions taken, each with its reason; Open actions and blockers; Sources cited. Copy \
             every file path, identifier and unresolved error exactly."
        }
        Strategy::DecisionLog => {
            "Write a chronological ledger of the decisions in the conversation below, one line each: \
             `[step] decision :: rationale :: inputs (brief) :: outputs (brief)`. Keep the order. \
             Include nothing that is not in the messages."
        }
        Strategy::CodeDelta => {
            "Summarize the code changes in the conversation below as bullets, one per file: \
             `path: what changed (functions, APIs touched, side effects)`, then why, then the \
             follow-up actions."
        }
        Strategy::Brief => {
            "Summarize the conversation below in at most five plain sentences: the goal, what was \
             done, and what is left."
        }
    }
}

/// Openings of a reply that declines the task.
const REFUSALS: [&str; 5] = [
    "i can't",
    "i cannot",
    "i'm sorry",
    "i am sorry",
    "i am unable",
];

impl LlmSummarizer {
    /// The request for `r`: the strategy's instructions, the context and
    /// the conversation, at temperature 0 with the seed.
    fn request(&self, r: &SummaryRequest<'_>) -> ChatRequest {
        let mut prompt = String::new();
        prompt.push_str(instructions(r.strategy));
        prompt.push_str(&format!(
            "\nAnswer with the summary only, in at most {} tokens.",
            r.max_tokens
        ));
        if let Some(previous) = r.previous {
            prompt.push_str("\n\nThe summary so far (keep its facts):\n");
            prompt.push_str(previous);
        }
        if let Some(state) = r.state {
            prompt.push_str("\n\nThe interpreter's state:\n");
            prompt.push_str(state);
        }
        if let Some(note) = r.note {
            prompt.push_str(&format!("\n\nWhy now: {note}"));
        }
        prompt.push_str("\n\nThe conversation:\n");
        for m in r.messages {
            prompt.push_str(&format!("[{}] ", m.role));
            prompt.push_str(&m.text());
            for call in m.tool_call_summaries() {
                prompt.push_str(&format!("\n  call {}({})", call.name, call.arguments));
            }
            for (id, text) in m.content.tool_results() {
                prompt.push_str(&format!("\n  result of {id}: {text}"));
            }
            prompt.push('\n');
        }
        ChatRequest {
            max_tokens: Some(r.max_tokens.min(u32::MAX as usize) as u32),
            temperature: Some(0.0),
            seed: self.seed,
            ..ChatRequest::new(vec![
                ChatMessage::system("You condense conversations for an agent's memory."),
                ChatMessage::user(prompt),
            ])
        }
    }

    /// The provider's answer to `request`, or `None` when `deadline`
    /// passed first (the call is then left to end on its own thread).
    fn complete_by(
        &self,
        mut request: ChatRequest,
        deadline: Instant,
    ) -> Option<Result<super::message::ChatResponse, ProviderError>> {
        let left = deadline.checked_duration_since(Instant::now())?;
        request.timeout = Some(left);
        let (tx, rx) = mpsc::channel();
        let provider = self.provider.clone();
        let spawned = std::thread::Builder::new()
            .name("ptc-summary".into())
            .spawn(move || {
                let _ = tx.send(provider.complete(&request));
            });
        if spawned.is_err() {
            return Some(Err(ProviderError::Connection(
                "cannot start a thread for the summary call".into(),
            )));
        }
        rx.recv_timeout(left).ok()
    }

    /// The reply's summary, or why there is none.
    fn judge(
        &self,
        answer: Result<super::message::ChatResponse, ProviderError>,
        max_tokens: usize,
    ) -> Result<String, SummaryError> {
        let reply = match answer {
            Ok(reply) => reply,
            Err(ProviderError::Refused(why)) => return Err(SummaryError::Refused(why)),
            Err(e) => return Err(SummaryError::Failed(e.to_string())),
        };
        let text = reply.content.trim().to_string();
        if reply.truncated {
            return Err(SummaryError::Truncated(format!(
                "the reply stopped at max_tokens {max_tokens}"
            )));
        }
        let lower = text.to_lowercase();
        if text.is_empty() || REFUSALS.iter().any(|r| lower.starts_with(r)) {
            return Err(SummaryError::Refused(text.chars().take(200).collect()));
        }
        Ok(text)
    }
}

impl Summarizer for LlmSummarizer {
    fn name(&self) -> String {
        format!("llm:{}", self.provider.name())
    }

    fn summarize(&self, r: &SummaryRequest<'_>) -> Result<String, SummaryError> {
        let answer = self.provider.complete(&self.request(r));
        self.judge(answer, r.max_tokens)
    }

    fn summarize_by(
        &self,
        r: &SummaryRequest<'_>,
        deadline: Instant,
    ) -> Result<String, SummaryError> {
        let missed = || {
            SummaryError::DeadlineExceeded(format!(
                "`{}` gave no answer in time",
                self.provider.name()
            ))
        };
        match self.complete_by(self.request(r), deadline) {
            None => Err(missed()),
            Some(Err(_)) if Instant::now() >= deadline => Err(missed()),
            Some(answer) => self.judge(answer, r.max_tokens),
        }
    }
}

/// What [`RunHistory::prepare`] tells its caller, in the order it
/// happens.
pub(super) enum Notice<'a> {
    /// The window evicted messages.
    Trimmed(&'a Trim),
    /// The history was compacted.
    Compacted(&'a Report),
    /// Something worth a warning (the window near its cap, preserve
    /// settings over it); the request is sent.
    Warning(&'a str),
    /// A step failed; the messages it had are sent.
    Problem(&'a str),
}

/// The window and compaction state of one run.
pub(super) struct RunHistory {
    compactor: Compactor,
    window: Option<Window>,
    summarizer: Box<dyn Summarizer + Send>,
    carry: Carry,
    recorder: Option<Arc<Mutex<Recorder>>>,
    pub(super) reports: Vec<Report>,
    pub(super) events: Vec<Event>,
    pub(super) conversation: ConversationMetrics,
    /// The estimate of the last request sent, for calibration.
    last_estimate: usize,
    /// Whether the warning at 80% of the window's cap was given.
    warned_near_cap: bool,
}

/// Protected messages at the start of every agent prompt: the system
/// prompt and the mission (with compression, the one user message).
const PINNED: usize = 2;

impl RunHistory {
    pub(super) fn new(settings: &HistorySettings, model: &str) -> Result<RunHistory, String> {
        let model = settings.counting_model.as_deref().unwrap_or(model);
        let compactor = Compactor::new(model, settings.policy.clone())
            .map_err(|e| e.to_string())?
            .with_summary_deadline(settings.summary_deadline);
        let summarizer: Box<dyn Summarizer + Send> = match &settings.summary {
            SummaryMode::Digest => Box::new(Digest),
            SummaryMode::Llm(provider) => Box::new(LlmSummarizer::new(provider.clone())),
        };
        // The window's preserved head is at least the system prompt and
        // the mission, and is pinned like them, so one carry keeps both
        // the window's and the compactor's cuts in force.
        let window = (settings.window.max_messages > 0).then(|| {
            let policy = WindowPolicy {
                preserve_first_n: settings.window.preserve_first_n.max(PINNED),
                ..settings.window.clone()
            };
            Window::new(policy, model).with_summary_deadline(settings.summary_deadline)
        });
        let pinned = window
            .as_ref()
            .map_or(PINNED, |w| w.policy().preserve_first_n);
        Ok(RunHistory {
            compactor,
            window,
            summarizer,
            carry: Carry::new(pinned),
            recorder: settings.recorder.clone(),
            reports: Vec::new(),
            events: Vec::new(),
            conversation: ConversationMetrics {
                max_messages: settings.window.max_messages,
                ..ConversationMetrics::default()
            },
            last_estimate: 0,
            warned_near_cap: false,
        })
    }

    /// Hand `events` to the recorder and keep them for the run.
    fn record(&mut self, events: Vec<Event>) {
        if let Some(recorder) = &self.recorder {
            if let Ok(mut r) = recorder.lock() {
                r.events(&events);
            }
        }
        self.events.extend(events);
    }

    /// The messages to send instead of `full`: the window applied, then
    /// compacted when the pre-flight check triggers. `notify` hears of
    /// each step as it happens.
    pub(super) fn prepare(
        &mut self,
        full: Vec<ChatMessage>,
        state: &dyn Fn() -> String,
        notify: &mut dyn FnMut(Notice<'_>),
    ) -> Vec<ChatMessage> {
        let full: Vec<Message> = full.into_iter().map(Message::from).collect();
        let mut effective = self.carry.apply(&full);
        if self.window.is_some() {
            effective = self.trim(&full, effective, notify);
        }
        let state_text = state();
        let context = Context {
            state: (!state_text.is_empty()).then_some(state_text.as_str()),
        };
        let outcome = self
            .compactor
            .preflight_with(&effective, self.summarizer.as_ref(), context);
        let events = self.compactor.take_events();
        let strategy = events.iter().find_map(|e| match e {
            Event::SummaryCreated { strategy, .. } => Some(*strategy),
            _ => None,
        });
        self.record(events);
        let sent = match outcome {
            Ok(outcome) => {
                self.last_estimate = outcome.tokens.total();
                if let Some(report) = &outcome.report {
                    if !self.carry.absorb(full.len(), &effective, &outcome.messages) {
                        notify(Notice::Problem(
                            "the compacted prompt cannot be carried to the next turn",
                        ));
                    }
                    if let Some(recorder) = &self.recorder {
                        if let Ok(mut r) = recorder.lock() {
                            let strategy = strategy.unwrap_or(self.compactor.policy().strategy);
                            r.round(
                                &effective,
                                &outcome.messages,
                                report,
                                strategy.as_str(),
                                &self.summarizer.name(),
                                None,
                            );
                        }
                    }
                    notify(Notice::Compacted(report));
                    self.reports.push(report.clone());
                }
                outcome.messages
            }
            Err(error) => {
                notify(Notice::Problem(&error.to_string()));
                self.last_estimate = self.compactor.counter_mut().count(&effective).total();
                effective
            }
        };
        self.conversation.message_count = sent.len();
        self.conversation.estimated_tokens = self.last_estimate;
        self.warn_near_cap(notify);
        strip(sent)
    }

    /// Seed 003's window over `effective` (what the carry gives for
    /// `full`); what it evicts stays evicted in the next turns.
    fn trim(
        &mut self,
        full: &[Message],
        effective: Vec<Message>,
        notify: &mut dyn FnMut(Notice<'_>),
    ) -> Vec<Message> {
        let Some(window) = &mut self.window else {
            return effective;
        };
        let trimmed = window.trim_with(&effective, self.summarizer.as_ref());
        let events = window.take_events();
        self.record(events);
        let trim = match trimmed {
            Ok(trim) => trim,
            Err(e) => {
                notify(Notice::Problem(&format!("the window cannot apply: {e}")));
                return effective;
            }
        };
        if let Some(warning) = &trim.warning {
            notify(Notice::Warning(warning));
        }
        if trim.evicted.is_empty() && trim.summary.is_none() {
            return effective;
        }
        self.conversation.evicted_messages += trim.metrics.evicted_messages;
        self.conversation.window_summaries += usize::from(trim.summary.is_some());
        notify(Notice::Trimmed(&trim));
        if self.carry.absorb(full.len(), &effective, &trim.messages) {
            self.carry.apply(full)
        } else {
            notify(Notice::Warning(
                "the window's cut cannot be carried to the next turn; it is made again then",
            ));
            trim.messages
        }
    }

    /// The warning at 80% of the window's cap, once per run (seed 003).
    fn warn_near_cap(&mut self, notify: &mut dyn FnMut(Notice<'_>)) {
        let (count, max) = (
            self.conversation.message_count,
            self.conversation.max_messages,
        );
        if max == 0 || self.warned_near_cap || count * 5 < max * 4 {
            return;
        }
        self.warned_near_cap = true;
        let message = format!("conversation approaching limit ({count}/{max} messages)");
        notify(Notice::Warning(&message));
        self.record(vec![Event::WindowWarning { message }]);
    }

    /// Learn from the provider's count of the request just sent.
    pub(super) fn calibrate(&mut self, reported_input_tokens: u64) {
        let estimate = self.last_estimate;
        self.compactor
            .counter_mut()
            .calibrate(estimate, reported_input_tokens);
    }

    /// The counting model and its reported/estimated ratio, once a
    /// provider has reported usage.
    pub(super) fn calibration(&self) -> Option<(String, f64)> {
        let counter = self.compactor.counter();
        counter
            .calibration_ratio()
            .map(|r| (counter.model_name().to_string(), r))
    }
}

/// Back to the agent's own messages. The agent's history holds system,
/// user and assistant text only, and a summary is assistant text, so
/// nothing is lost; any other role would be sent as user text.
fn strip(messages: Vec<Message>) -> Vec<ChatMessage> {
    use crate::history::Role as R;
    messages
        .into_iter()
        .map(|m| {
            let role = match m.role {
                R::System => crate::compression::Role::System,
                R::Assistant => crate::compression::Role::Assistant,
                R::User | R::Developer | R::Tool => crate::compression::Role::User,
            };
            ChatMessage::new(role, m.text().to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::ScriptedProvider;
    use crate::tokens::TokenModel;

    fn request<'a>(strategy: Strategy, messages: &'a [Message]) -> SummaryRequest<'a> {
        SummaryRequest {
            strategy,
            max_tokens: 300,
            messages,
            previous: Some("earlier facts"),
            state: Some("defined total : integer"),
            note: Some("user-requested"),
            later: &[],
            model: TokenModel::for_model("gpt-4o"),
        }
    }

    #[test]
    fn llm_summaries_ask_at_temperature_zero_with_the_strategy() {
        let provider = Arc::new(ScriptedProvider::new(vec!["Goal: ship.".into()]));
        let summarizer = LlmSummarizer::new(provider.clone());
        let messages = [
            Message::user("Fix src/lib.rs"),
            Message::tool_call([("c1", "read_file", r#"{"path":"src/lib.rs"}"#)]),
            Message::tool_result("c1", "fn main() {}"),
        ];
        let text = summarizer
            .summarize(&request(Strategy::DecisionLog, &messages))
            .unwrap();
        assert_eq!(text, "Goal: ship.");
        let sent = &provider.requests()[0];
        assert_eq!(sent.temperature, Some(0.0));
        assert_eq!(sent.max_tokens, Some(300));
        let prompt = &sent.messages[1].content;
        assert!(prompt.contains("chronological ledger"), "{prompt}");
        for part in [
            "earlier facts",
            "defined total : integer",
            "user-requested",
            "[user] Fix src/lib.rs",
            "call read_file({\"path\":\"src/lib.rs\"})",
        ] {
            assert!(prompt.contains(part), "{part} missing from {prompt}");
        }
    }

    #[test]
    fn refusals_and_failures_are_told_apart() {
        let provider = Arc::new(ScriptedProvider::new(vec![
            "I'm sorry, I can't help with that.".into(),
        ]));
        let summarizer = LlmSummarizer::new(provider);
        let r = summarizer.summarize(&request(Strategy::TaskState, &[]));
        assert!(matches!(r, Err(SummaryError::Refused(_))), "{r:?}");
        let exhausted = LlmSummarizer::new(Arc::new(ScriptedProvider::new(vec![])));
        let r = exhausted.summarize(&request(Strategy::TaskState, &[]));
        assert!(matches!(r, Err(SummaryError::Failed(_))), "{r:?}");
    }
}
