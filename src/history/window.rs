//! The sliding message window of seed 003: keep the first N and the last
//! N messages, evict the oldest of the middle beyond `max_messages`, and
//! optionally replace what was evicted with a rolling summary (at most
//! one per `summary_every_evicted` evicted messages). Whole units only,
//! so a tool call is never separated from its results; system, developer
//! and protected messages and pending tool calls are never evicted (they
//! count towards the cap, as the summary does). No I/O.

use std::time::{Duration, Instant};

use serde::Serialize;

use super::count::TokenCounter;
use super::event::Event;
use super::message::{Message, Role};
use super::policy::{Strategy, WindowPolicy};
use super::summary::{
    summary_body, summary_message, summary_version, Summarizer, SummaryRequest,
    DEFAULT_SUMMARY_DEADLINE,
};
use super::units::{units, StructureError};

/// Seed 003's `ConversationMetrics`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Metrics {
    /// Messages after the trim.
    pub total_messages: usize,
    /// Messages kept from the input.
    pub preserved_messages: usize,
    /// Messages evicted by this trim.
    pub evicted_messages: usize,
    /// Tokens of the messages after the trim.
    pub estimated_tokens: usize,
}

/// The result of one trim.
#[derive(Debug, Clone, PartialEq)]
pub struct Trim {
    pub messages: Vec<Message>,
    pub evicted: Vec<Message>,
    pub metrics: Metrics,
    /// Set when the preserve settings exceed `max_messages`.
    pub warning: Option<String>,
    /// The version of the summary written by this trim, if any.
    pub summary: Option<u32>,
}

/// A sliding window over one conversation. It remembers what it evicted
/// without summarizing (rate limit), so the next summary covers it.
#[derive(Debug, Clone)]
pub struct Window {
    policy: WindowPolicy,
    counter: TokenCounter,
    unsummarized: Vec<Message>,
    events: Vec<Event>,
    summary_deadline: Duration,
    /// The kinds of warning given: each is given once.
    warned: std::collections::HashSet<&'static str>,
}

impl Window {
    /// A window under `policy`, counting tokens for `model`.
    pub fn new(policy: WindowPolicy, model: &str) -> Window {
        Window {
            policy,
            counter: TokenCounter::new(model),
            unsummarized: Vec::new(),
            events: Vec::new(),
            summary_deadline: DEFAULT_SUMMARY_DEADLINE,
            warned: Default::default(),
        }
    }

    /// Give each summary of evicted messages at most `deadline`; past it
    /// the trim evicts without one.
    pub fn with_summary_deadline(mut self, deadline: Duration) -> Self {
        self.summary_deadline = deadline;
        self
    }

    pub fn policy(&self) -> &WindowPolicy {
        &self.policy
    }

    /// The events since the last call.
    pub fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    /// Tokens of `messages` as a request.
    pub fn estimate_tokens(&mut self, messages: &[Message]) -> usize {
        self.counter.count(messages).total()
    }

    /// Evict without summarizing.
    pub fn trim(&mut self, messages: &[Message]) -> Result<Trim, StructureError> {
        self.trim_inner(messages, None)
    }

    /// Evict, and when `summarize_on_trim` is set, summarize what was
    /// evicted (rate-limited; a failure falls back to plain eviction).
    pub fn trim_with(
        &mut self,
        messages: &[Message],
        summarizer: &dyn Summarizer,
    ) -> Result<Trim, StructureError> {
        self.trim_inner(messages, Some(summarizer))
    }

    fn trim_inner(
        &mut self,
        messages: &[Message],
        summarizer: Option<&dyn Summarizer>,
    ) -> Result<Trim, StructureError> {
        let units = units(messages)?;
        let max = self.policy.max_messages;
        if max == 0 || messages.len() <= max {
            let estimated_tokens = self.estimate_tokens(messages);
            return Ok(Trim {
                messages: messages.to_vec(),
                evicted: Vec::new(),
                metrics: Metrics {
                    total_messages: messages.len(),
                    preserved_messages: messages.len(),
                    evicted_messages: 0,
                    estimated_tokens,
                },
                warning: None,
                summary: None,
            });
        }
        let n = messages.len();
        // Zone boundaries, moved outwards to whole units.
        let first = self.policy.preserve_first_n.min(n);
        let head_end = units
            .iter()
            .find(|u| u.start < first && first <= u.end)
            .map_or(0, |u| u.end)
            .max(first);
        // A summary takes a place within the cap when there is or will be
        // one; the preserved tail gives way to the cap (it always keeps
        // the last unit).
        let summary_place = usize::from(
            messages[head_end..]
                .iter()
                .any(|m| summary_version(m).is_some())
                || (summarizer.is_some() && self.policy.summarize_on_trim),
        );
        let preserve_last = self.policy.preserve_last_n;
        let tail_target = preserve_last
            .min(max.saturating_sub(head_end + summary_place))
            .max(1);
        let last = n.saturating_sub(tail_target).max(head_end);
        let tail_start = units
            .iter()
            .find(|u| u.start <= last && last < u.end)
            .map_or(n, |u| u.start)
            .max(head_end);
        let (head_len, tail_len) = (head_end, n - tail_start);
        let mut warnings = Vec::new();
        if tail_target < preserve_last.min(n - head_len) {
            warnings.push(("preserve", format!(
                "preserve_first_n ({}) + preserve_last_n ({preserve_last}) reach max_messages ({max}): the last {tail_len} messages are kept",
                self.policy.preserve_first_n
            )));
        }
        // The middle: a previous summary is handled apart; units that may
        // never go (system, developer, protected, pending calls) stay and
        // take their room first; the most recent of the others fill what
        // is left.
        let middle: Vec<_> = units
            .iter()
            .filter(|u| u.start >= head_end && u.end <= tail_start)
            .collect();
        let old_summary = middle
            .iter()
            .rev()
            .map(|u| &messages[u.start])
            .find(|m| summary_version(m).is_some());
        let is_old_summary = |u: &super::units::Unit| {
            old_summary.is_some_and(|s| std::ptr::eq(s, &messages[u.start]))
        };
        let fixed: Vec<bool> = middle
            .iter()
            .map(|u| {
                !is_old_summary(u)
                    && (u.pending || messages[u.start..u.end].iter().any(never_evicted))
            })
            .collect();
        let fixed_len: usize = middle
            .iter()
            .zip(&fixed)
            .filter(|(_, f)| **f)
            .map(|(u, _)| u.len())
            .sum();
        let needed = head_len + tail_len + fixed_len + summary_place;
        if needed > max {
            warnings.push(("must stay", format!(
                "{} messages must stay ({head_len} preserved at the start, {tail_len} at the end, {fixed_len} never evicted: system, developer, protected, pending tool calls{}), over max_messages ({max})",
                needed - summary_place,
                if summary_place > 0 { ", and the summary" } else { "" },
            )));
        }
        let mut room = max.saturating_sub(needed);
        // Each kind of warning once per window, not at every trim.
        let mut warning = None;
        for (kind, text) in warnings {
            if self.warned.insert(kind) {
                self.events.push(Event::WindowWarning {
                    message: text.clone(),
                });
                warning = Some(text);
            }
        }
        let mut keep = vec![false; middle.len()];
        let mut filling = true;
        for (i, u) in middle.iter().enumerate().rev() {
            if is_old_summary(u) {
                continue;
            }
            if fixed[i] {
                keep[i] = true;
            } else if filling && u.len() <= room {
                room -= u.len();
                keep[i] = true;
            } else {
                filling = false;
            }
        }
        let mut evicted = Vec::new();
        for (u, k) in middle.iter().zip(&keep) {
            if !k && !is_old_summary(u) {
                evicted.extend_from_slice(&messages[u.start..u.end]);
            }
        }
        let mut summary = None;
        let mut summary_slot = old_summary.cloned();
        if let (Some(summarizer), true) = (summarizer, self.policy.summarize_on_trim) {
            self.unsummarized.extend(evicted.iter().cloned());
            if let Some(new) = self.summarize(summarizer, old_summary) {
                let version = old_summary.and_then(summary_version).unwrap_or(0) + 1;
                summary_slot = Some(summary_message(version, &new));
                summary = Some(version);
            }
        }
        let mut out = Vec::with_capacity(max + 1);
        out.extend_from_slice(&messages[..head_end]);
        out.extend(summary_slot);
        for (u, k) in middle.iter().zip(&keep) {
            if *k {
                out.extend_from_slice(&messages[u.start..u.end]);
            }
        }
        out.extend_from_slice(&messages[tail_start..]);
        let estimated_tokens = self.estimate_tokens(&out);
        let metrics = Metrics {
            total_messages: out.len(),
            preserved_messages: n
                - evicted.len()
                - usize::from(summary.is_some() && old_summary.is_some()),
            evicted_messages: evicted.len(),
            estimated_tokens,
        };
        self.events.push(Event::WindowTrimmed {
            total_messages: metrics.total_messages,
            preserved_messages: metrics.preserved_messages,
            evicted_messages: metrics.evicted_messages,
            estimated_tokens,
            summarized: summary.is_some(),
        });
        Ok(Trim {
            messages: out,
            evicted,
            metrics,
            warning,
            summary,
        })
    }

    /// Summarize what was evicted since the last summary, if seed 003's
    /// rules allow: enough evicted, and some meaningful text.
    fn summarize(&mut self, summarizer: &dyn Summarizer, old: Option<&Message>) -> Option<String> {
        let every = self.policy.summary_every_evicted.max(1);
        if self.unsummarized.len() < every {
            self.events.push(Event::SummarySkipped {
                reason: format!(
                    "rate limit: {} messages evicted since the last summary, fewer than {every}",
                    self.unsummarized.len()
                ),
            });
            return None;
        }
        let meaningful = self
            .unsummarized
            .iter()
            .any(|m| !m.text().trim().is_empty() || m.calls_tools());
        if !meaningful {
            self.events.push(Event::SummarySkipped {
                reason: "the evicted messages have no meaningful text".into(),
            });
            self.unsummarized.clear();
            return None;
        }
        let request = SummaryRequest {
            strategy: Strategy::TaskState,
            max_tokens: 1024,
            messages: &self.unsummarized,
            previous: old.map(summary_body),
            state: None,
            note: None,
            later: &[],
            model: self.counter.token_model(),
        };
        let deadline = Instant::now() + self.summary_deadline;
        match summarizer.summarize_by(&request, deadline) {
            Ok(text) if !text.trim().is_empty() => {
                self.unsummarized.clear();
                Some(text)
            }
            Ok(_) => {
                self.events.push(Event::error(
                    "SummaryTooLong",
                    "the summary is empty",
                    "plain eviction",
                ));
                None
            }
            Err(error) => {
                self.events.push(Event::error(
                    error.kind(),
                    error.to_string(),
                    "plain eviction",
                ));
                None
            }
        }
    }
}

/// Messages a window never evicts: system and developer messages and
/// protected ones.
fn never_evicted(m: &Message) -> bool {
    m.is_protected() || matches!(m.role, Role::System | Role::Developer)
}
