//! The history layer in the agent loop: a pre-flight check before every
//! model call, compaction when it triggers (the system prompt and the
//! mission message protected, the interpreter's state fed to the
//! summary), and the LLM summarizer that uses our providers.

use std::sync::{Arc, Mutex};

use super::message::{ChatMessage, ChatRequest};
use super::provider::LlmProvider;
use crate::history::recorder::Recorder;
use crate::history::{
    Carry, Compactor, Context, Digest, Event, Message, Policy, Report, Strategy, Summarizer,
    SummaryError, SummaryRequest,
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

/// Token-budget compaction for an agent run.
#[derive(Debug, Clone)]
pub struct HistorySettings {
    pub policy: Policy,
    pub summary: SummaryMode,
    /// The model whose tokenizer counts (the run's model, or the
    /// provider's name, when `None`).
    pub counting_model: Option<String>,
    /// Where events and archives of compaction rounds go, if anywhere.
    pub recorder: Option<Arc<Mutex<Recorder>>>,
}

impl HistorySettings {
    pub fn new(policy: Policy) -> Self {
        HistorySettings {
            policy,
            summary: SummaryMode::Digest,
            counting_model: None,
            recorder: None,
        }
    }
}

/// Summaries written by a model at temperature 0 with one of seed 004's
/// strategies. A reply that declines is a refusal (the compactor then
/// asks for the brief strategy); a failed call is a failure (it prunes
/// only).
pub struct LlmSummarizer {
    provider: Arc<dyn LlmProvider>,
}

impl LlmSummarizer {
    pub fn new(provider: Arc<dyn LlmProvider>) -> Self {
        LlmSummarizer { provider }
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

impl Summarizer for LlmSummarizer {
    fn name(&self) -> String {
        format!("llm:{}", self.provider.name())
    }

    fn summarize(&self, r: &SummaryRequest<'_>) -> Result<String, SummaryError> {
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
            prompt.push_str(m.text());
            for call in m.tool_call_summaries() {
                prompt.push_str(&format!("\n  call {}({})", call.name, call.arguments));
            }
            prompt.push('\n');
        }
        let request = ChatRequest {
            max_tokens: Some(r.max_tokens.min(u32::MAX as usize) as u32),
            temperature: Some(0.0),
            ..ChatRequest::new(vec![
                ChatMessage::system("You condense conversations for an agent's memory."),
                ChatMessage::user(prompt),
            ])
        };
        let reply = self
            .provider
            .complete(&request)
            .map_err(|e| SummaryError::Failed(e.to_string()))?;
        let text = reply.content.trim().to_string();
        let lower = text.to_lowercase();
        if text.is_empty() || REFUSALS.iter().any(|r| lower.starts_with(r)) {
            return Err(SummaryError::Refused(text.chars().take(200).collect()));
        }
        Ok(text)
    }
}

/// The compaction state of one run.
pub(super) struct RunHistory {
    compactor: Compactor,
    summarizer: Box<dyn Summarizer + Send>,
    carry: Carry,
    recorder: Option<Arc<Mutex<Recorder>>>,
    pub(super) reports: Vec<Report>,
    pub(super) events: Vec<Event>,
    /// The estimate of the last request sent, for calibration.
    last_estimate: usize,
}

/// Protected messages at the start of every agent prompt: the system
/// prompt and the mission (with compression, the one user message).
const PINNED: usize = 2;

impl RunHistory {
    pub(super) fn new(settings: &HistorySettings, model: &str) -> Result<RunHistory, String> {
        let model = settings.counting_model.as_deref().unwrap_or(model);
        let compactor =
            Compactor::new(model, settings.policy.clone()).map_err(|e| e.to_string())?;
        let summarizer: Box<dyn Summarizer + Send> = match &settings.summary {
            SummaryMode::Digest => Box::new(Digest),
            SummaryMode::Llm(provider) => Box::new(LlmSummarizer::new(provider.clone())),
        };
        Ok(RunHistory {
            compactor,
            summarizer,
            carry: Carry::new(PINNED),
            recorder: settings.recorder.clone(),
            reports: Vec::new(),
            events: Vec::new(),
            last_estimate: 0,
        })
    }

    /// The messages to send instead of `full`, compacting first when the
    /// pre-flight check triggers. `on_compact` hears of each compaction,
    /// `on_problem` of a failure (the uncompacted messages are sent).
    pub(super) fn prepare(
        &mut self,
        full: Vec<ChatMessage>,
        state: &dyn Fn() -> String,
        on_compact: &mut dyn FnMut(&Report),
        on_problem: &mut dyn FnMut(&str),
    ) -> Vec<ChatMessage> {
        let full: Vec<Message> = full.into_iter().map(Message::from).collect();
        let effective = self.carry.apply(&full);
        let state_text = state();
        let context = Context {
            state: (!state_text.is_empty()).then_some(state_text.as_str()),
        };
        let outcome = self
            .compactor
            .preflight_with(&effective, self.summarizer.as_ref(), context);
        let events = self.compactor.take_events();
        if let Some(recorder) = &self.recorder {
            if let Ok(mut r) = recorder.lock() {
                r.events(&events);
            }
        }
        self.events.extend(events);
        let outcome = match outcome {
            Ok(outcome) => outcome,
            Err(error) => {
                on_problem(&error.to_string());
                self.last_estimate = self.compactor.counter_mut().count(&effective).total();
                return strip(effective);
            }
        };
        self.last_estimate = outcome.tokens.total();
        if let Some(report) = &outcome.report {
            if !self.carry.absorb(full.len(), &effective, &outcome.messages) {
                on_problem("the compacted prompt cannot be carried to the next turn");
            }
            if let Some(recorder) = &self.recorder {
                if let Ok(mut r) = recorder.lock() {
                    let strategy = self.compactor.policy().strategy;
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
            on_compact(report);
            self.reports.push(report.clone());
        }
        strip(outcome.messages)
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
            ChatMessage::new(role, m.content.unwrap_or_default())
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
