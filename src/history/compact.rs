//! Token-budget compaction (seed 004): the pre-flight check, the trigger,
//! the keep policies reduced step by step, the rolling summary with its
//! fallbacks, and the typed error when protected content alone is too
//! big. Every decision is also an [`Event`]. No I/O.

use std::fmt;
use std::time::{Duration, Instant};

use super::count::{Breakdown, TokenCounter, REPLY_PRIMING};
use super::event::{Event, KeptCounts, Layers, PolicySnapshot};
use super::message::{Message, Role};
use super::policy::{Policy, PolicyError, Strategy};
use super::summary::{
    summary_body, summary_message, summary_version, Summarizer, SummaryError, SummaryRequest,
    DEFAULT_SUMMARY_DEADLINE,
};
use super::units::{units, StructureError, Unit};

/// Why a compaction could not produce a history within budget.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompactError {
    /// What may not be removed is bigger than the budget.
    #[error(
        "insufficient budget: protected content takes {protected_tokens} tokens \
         ({pinned_tokens} in pinned messages, {floor_tokens} in the last turn, tool exchange \
         and pending calls that are always kept) but the budget is {budget} \
         (max_context_tokens {max_context_tokens} - hard_cap_buffer {hard_cap_buffer}); {}",
        insufficient_advice(*.pinned_tokens, *.newest_turn_tokens, *.budget)
    )]
    InsufficientBudget {
        protected_tokens: usize,
        pinned_tokens: usize,
        floor_tokens: usize,
        /// The newest user turn's messages (not pinned), reply priming and
        /// tool schemas included.
        newest_turn_tokens: usize,
        budget: usize,
        max_context_tokens: usize,
        hard_cap_buffer: usize,
    },
    /// The history breaks the tool call/result pairing.
    #[error("malformed history: {0}")]
    Malformed(#[from] StructureError),
    /// The policy is out of range.
    #[error("invalid policy: {0}")]
    Policy(#[from] PolicyError),
}

/// What to change, naming the real cause: the newest turn alone over the
/// budget, or the pinned messages, or only the budget itself.
fn insufficient_advice(pinned: usize, newest_turn: usize, budget: usize) -> String {
    if newest_turn > budget {
        format!(
            "the newest turn alone takes {newest_turn} tokens, over the budget: shorten it \
             (its message or tool results), or raise max_context_tokens"
        )
    } else if pinned * 2 >= budget {
        "unprotect or shorten pinned messages, or raise max_context_tokens".into()
    } else {
        "raise max_context_tokens or lower hard_cap_buffer".into()
    }
}

impl CompactError {
    /// The `error_type` of the `compact.error` event.
    pub fn kind(&self) -> &'static str {
        match self {
            CompactError::InsufficientBudget { .. } => "InsufficientBudget",
            CompactError::Malformed(_) => "MalformedHistory",
            CompactError::Policy(_) => "InvalidPolicy",
        }
    }
}

/// What started a compaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trigger {
    /// The pre-flight check found the prompt at or over the trigger.
    Threshold,
    /// A caller asked, whatever the size; the note goes into the events
    /// and the summary.
    Manual { note: String },
}

/// What a compaction did, for reports and progress lines.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Report {
    pub before: Breakdown,
    pub after: Breakdown,
    /// Messages removed (the previous summary included).
    pub pruned: usize,
    pub kept: KeptCounts,
    pub layers: Layers,
    /// The new summary's version and tokens, if one was written.
    pub summary: Option<(u32, usize)>,
    /// Each fallback taken, in order (`retry with max_tokens 512`, ...).
    pub fallbacks: Vec<String>,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} -> {} tokens; kept {} pinned, {} recent (last {} turns, {} tool pairs); pruned {}",
            self.before.total(),
            self.after.total(),
            self.layers.pinned,
            self.layers.recent,
            self.kept.recent_turns,
            self.kept.tool_pairs,
            self.pruned,
        )?;
        if let Some((version, tokens)) = self.summary {
            write!(f, "; summary v{version} ({tokens} tokens)")?;
        }
        for fallback in &self.fallbacks {
            write!(f, "; {fallback}")?;
        }
        Ok(())
    }
}

/// The result of a pre-flight check or a compaction.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The history to send: the input unchanged, or compacted.
    pub messages: Vec<Message>,
    /// Tokens of `messages`, by section.
    pub tokens: Breakdown,
    /// Present when the history was compacted.
    pub report: Option<Report>,
}

/// Extra context a compaction passes on to its summarizer.
#[derive(Debug, Clone, Copy, Default)]
pub struct Context<'a> {
    /// Facts the host knows besides the messages (see
    /// [`SummaryRequest::state`]).
    pub state: Option<&'a str>,
}

/// A function every event is handed to as it happens.
pub type EventSink = Box<dyn FnMut(&Event) + Send>;

/// Keeps a history within a token budget. One per conversation: it
/// holds the token cache and the events not yet taken.
///
/// ```
/// use ptc_lisp::history::{Compactor, Digest, Message, Policy};
///
/// let policy = Policy { max_context_tokens: 2_000, hard_cap_buffer: 200, max_summary_tokens: 200, ..Policy::default() };
/// let mut compactor = Compactor::new("gpt-4o", policy).unwrap();
/// let mut history = vec![Message::system("You are a coding agent.")];
/// for i in 0..40 {
///     history.push(Message::user(format!("step {i}: please look at src/file_{i}.rs")));
///     history.push(Message::assistant("Done. ".repeat(20)));
/// }
/// let out = compactor.preflight(&history, &Digest).unwrap();
/// assert!(out.report.is_some() && out.tokens.total() <= 1_800);
/// assert_eq!(out.messages[0], history[0]);
/// ```
pub struct Compactor {
    policy: Policy,
    counter: TokenCounter,
    events: Vec<Event>,
    sink: Option<EventSink>,
    summary_deadline: Duration,
}

impl fmt::Debug for Compactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Compactor")
            .field("policy", &self.policy)
            .field("model", &self.counter.model_name())
            .field("events", &self.events.len())
            .finish_non_exhaustive()
    }
}

impl Compactor {
    /// A compactor for `model` under `policy` (checked).
    pub fn new(model: &str, policy: Policy) -> Result<Compactor, CompactError> {
        policy.validate("policy")?;
        Ok(Compactor {
            policy,
            counter: TokenCounter::new(model),
            events: Vec::new(),
            sink: None,
            summary_deadline: DEFAULT_SUMMARY_DEADLINE,
        })
    }

    /// Give each round's summary at most `deadline` in all (retries and
    /// fallbacks included); past it the round prunes only. The default is
    /// [`DEFAULT_SUMMARY_DEADLINE`].
    pub fn with_summary_deadline(mut self, deadline: Duration) -> Self {
        self.summary_deadline = deadline;
        self
    }

    /// The time a round's summary may take in all.
    pub fn summary_deadline(&self) -> Duration {
        self.summary_deadline
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    pub fn counter(&self) -> &TokenCounter {
        &self.counter
    }

    pub fn counter_mut(&mut self) -> &mut TokenCounter {
        &mut self.counter
    }

    /// Also hand every event to `sink` as it happens.
    pub fn with_sink(mut self, sink: impl FnMut(&Event) + Send + 'static) -> Self {
        self.sink = Some(Box::new(sink));
        self
    }

    /// The events since the last call, in order.
    pub fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    fn emit(&mut self, event: Event) {
        if let Some(sink) = &mut self.sink {
            sink(&event);
        }
        self.events.push(event);
    }

    fn snapshot(&self) -> PolicySnapshot {
        PolicySnapshot {
            trigger_pct: self.policy.trigger_pct,
            hard_cap_buffer: self.policy.hard_cap_buffer,
            strategy: self.policy.strategy,
        }
    }

    /// Tokens of a request made of `messages`, by section (also a
    /// `compact.token_estimate` event).
    pub fn estimate(&mut self, messages: &[Message]) -> Breakdown {
        let breakdown = self.counter.count(messages);
        let t_est = breakdown.total();
        let max = self.policy.max_context_tokens;
        self.emit(Event::TokenEstimate {
            model: self.counter.model_name().to_string(),
            t_est,
            max_tokens: max,
            usage_pct: t_est as f64 / max as f64,
            breakdown,
        });
        breakdown
    }

    /// The check before a model call: the history unchanged when under
    /// the trigger, compacted otherwise.
    pub fn preflight(
        &mut self,
        messages: &[Message],
        summarizer: &dyn Summarizer,
    ) -> Result<Outcome, CompactError> {
        self.preflight_with(messages, summarizer, Context::default())
    }

    /// [`Compactor::preflight`] with extra context for the summarizer.
    pub fn preflight_with(
        &mut self,
        messages: &[Message],
        summarizer: &dyn Summarizer,
        context: Context<'_>,
    ) -> Result<Outcome, CompactError> {
        let before = self.estimate(messages);
        let trigger = self.policy.trigger_tokens();
        if before.total() < trigger {
            self.emit(Event::TriggerDecision {
                triggered: false,
                reason: format!(
                    "{} tokens are below the trigger of {trigger} ({}% of {})",
                    before.total(),
                    self.policy.trigger_pct * 100.0,
                    self.policy.max_context_tokens
                ),
                policy: self.snapshot(),
                note: None,
                kept: None,
                pruned_count: None,
            });
            return Ok(Outcome {
                messages: messages.to_vec(),
                tokens: before,
                report: None,
            });
        }
        let reason = format!(
            "{} tokens reach the trigger of {trigger} ({}% of {})",
            before.total(),
            self.policy.trigger_pct * 100.0,
            self.policy.max_context_tokens
        );
        self.run(
            messages,
            before,
            Trigger::Threshold,
            reason,
            summarizer,
            context,
        )
    }

    /// Compact now, whatever the size (seed 004's `manual_compact`).
    pub fn manual_compact(
        &mut self,
        messages: &[Message],
        note: &str,
        summarizer: &dyn Summarizer,
        context: Context<'_>,
    ) -> Result<Outcome, CompactError> {
        let before = self.estimate(messages);
        let reason = format!("manual: {note}");
        let trigger = Trigger::Manual {
            note: note.to_string(),
        };
        self.run(messages, before, trigger, reason, summarizer, context)
    }

    fn fail(&mut self, error: CompactError) -> CompactError {
        self.emit(Event::error(error.kind(), error.to_string(), "none"));
        error
    }

    /// The history left as it was: the trigger decision says why
    /// (`triggered` is whether compaction started at all), and nothing is
    /// pruned.
    fn not_compacted(
        &mut self,
        messages: &[Message],
        before: Breakdown,
        triggered: bool,
        reason: String,
        note: Option<String>,
        kept: KeptCounts,
    ) -> Outcome {
        self.emit(Event::TriggerDecision {
            triggered,
            reason,
            policy: self.snapshot(),
            note,
            kept: Some(kept),
            pruned_count: Some(0),
        });
        Outcome {
            messages: messages.to_vec(),
            tokens: before,
            report: None,
        }
    }

    fn run(
        &mut self,
        messages: &[Message],
        before: Breakdown,
        trigger: Trigger,
        reason: String,
        summarizer: &dyn Summarizer,
        context: Context<'_>,
    ) -> Result<Outcome, CompactError> {
        let note = match &trigger {
            Trigger::Manual { note } => Some(note.clone()),
            Trigger::Threshold => None,
        };
        let units = units(messages).map_err(|e| self.fail(e.into()))?;
        let tokens = self.counter.per_message(messages);
        let plan = self.plan(
            messages,
            &units,
            &tokens,
            matches!(trigger, Trigger::Threshold),
        )?;
        let pruned_units: Vec<&Unit> = units
            .iter()
            .zip(&plan.keep)
            .filter(|(_, keep)| !**keep)
            .map(|(u, _)| u)
            .collect();
        let only_old_summary = pruned_units
            .iter()
            .all(|u| summary_version(&messages[u.start]).is_some());
        if only_old_summary {
            let reason =
                format!("{reason}; nothing is eligible for pruning under the keep policies");
            return Ok(self.not_compacted(messages, before, true, reason, note, plan.kept));
        }
        let pruned_count: usize = pruned_units.iter().map(|u| u.len()).sum();
        self.emit(Event::TriggerDecision {
            triggered: true,
            reason,
            policy: self.snapshot(),
            note: note.clone(),
            kept: Some(plan.kept),
            pruned_count: Some(pruned_count),
        });

        // The remainder: what the summary replaces.
        let mut previous = None;
        let mut previous_version = 0;
        let mut remainder = Vec::new();
        for u in &pruned_units {
            for m in &messages[u.start..u.end] {
                match summary_version(m) {
                    Some(v) => {
                        previous = Some(m);
                        previous_version = previous_version.max(v);
                    }
                    None => remainder.push(m.clone()),
                }
            }
        }
        // The kept messages after the last pruned tool exchange: a
        // success there resolves a pruned failure. Kept messages before a
        // pruned tool exchange are left out, so a success is never read
        // before a failure that came after it.
        let exchanges_end = pruned_units
            .iter()
            .filter(|u| {
                messages[u.start..u.end].iter().any(|m| {
                    m.role == Role::Tool
                        || m.calls_tools()
                        || m.content.tool_result_entries().next().is_some()
                })
            })
            .map(|u| u.end)
            .max()
            .unwrap_or(0);
        let later: Vec<&Message> = units
            .iter()
            .zip(&plan.keep)
            .filter(|(u, keep)| **keep && u.start >= exchanges_end)
            .flat_map(|(u, _)| &messages[u.start..u.end])
            .collect();
        let mut fallbacks = Vec::new();
        let request = SummaryRequest {
            strategy: self.policy.strategy,
            max_tokens: plan.summary_tokens,
            messages: &remainder,
            previous: previous.map(summary_body),
            state: context.state,
            note: note.as_deref(),
            later: &later,
            model: self.counter.token_model(),
        };
        let summarize_started = std::time::Instant::now();
        if plan.room_for_summary && plan.summary_tokens < self.policy.max_summary_tokens {
            fallbacks.push(format!(
                "smaller summary (max_tokens {}, all the budget leaves)",
                plan.summary_tokens
            ));
        }
        let summary = if !plan.room_for_summary {
            self.emit(Event::error(
                "NoRoomForSummary",
                "at keep_recent_turns 1 and keep_tool_io_pairs 1 only the kept messages fit the budget, with fewer than 16 tokens left for a summary",
                "pruning-only",
            ));
            fallbacks.push("pruning-only (no room for a summary)".into());
            previous = None;
            None
        } else if !meaningful(&remainder) && previous.is_none() && context.state.is_none() {
            self.emit(Event::SummarySkipped {
                reason: "the pruned messages have no text to summarize".into(),
            });
            None
        } else {
            let reserve = self.summary_reserve(messages, plan.summary_tokens);
            self.summarize(
                summarizer,
                request,
                (previous_version + 1, reserve),
                &mut fallbacks,
            )
        };
        let summary_ms = summarize_started.elapsed().as_millis() as u64;
        // Where the summary goes: where the pruned part started.
        let insert_at = pruned_units[0].start;
        let mut out = Vec::with_capacity(messages.len() - pruned_count + 1);
        let mut summary_info = None;
        let mut strategy_used = self.policy.strategy;
        let mut summary_slot = summary.map(|(text, strategy)| {
            strategy_used = strategy;
            let version = previous_version + 1;
            let tokens = self.counter.token_model().count(&text);
            summary_info = Some((version, tokens));
            summary_message(version, &text)
        });
        if summary_slot.is_none() {
            // Pruning only: the previous summary's facts are not lost.
            if let Some(old) = previous {
                summary_slot = Some(old.clone());
                fallbacks.push("previous summary kept".into());
            }
        }
        for (u, keep) in units.iter().zip(&plan.keep) {
            if u.start == insert_at {
                out.extend(summary_slot.take());
            }
            if *keep {
                out.extend_from_slice(&messages[u.start..u.end]);
            }
        }
        let after = self.counter.count(&out);
        if matches!(trigger, Trigger::Manual { .. }) && after.total() >= before.total() {
            let reason = format!(
                "manual: compacting would not lower the token count ({} -> {} tokens); the history is unchanged",
                before.total(),
                after.total()
            );
            return Ok(self.not_compacted(messages, before, false, reason, note, plan.kept));
        }
        if let Some((version, summary_tokens)) = summary_info {
            let input_tokens: usize = remainder.iter().map(|m| self.counter.message(m)).sum();
            let text = out
                .iter()
                .find(|m| summary_version(m) == Some(version))
                .map(|m| summary_body(m).to_string())
                .unwrap_or_default();
            self.emit(Event::SummaryCreated {
                strategy: strategy_used,
                fallbacks: fallbacks.clone(),
                summarizer: summarizer.name(),
                input_messages: remainder.len() + usize::from(previous.is_some()),
                input_tokens,
                summary_tokens,
                compression_ratio: if input_tokens == 0 {
                    0.0
                } else {
                    summary_tokens as f64 / input_tokens as f64
                },
                version,
                summary: text,
                duration_ms: summary_ms,
            });
        }
        let pinned = plan.pinned_messages;
        let has_summary = out.iter().any(|m| summary_version(m).is_some());
        let layers = Layers {
            pinned,
            summary: usize::from(has_summary),
            recent: out.len() - pinned - usize::from(has_summary),
        };
        self.emit(Event::PrunedMessages {
            pruned: pruned_count,
            layers,
            tokens_before: before.total(),
            tokens_after: after.total(),
            keep_recent_turns: plan.kept.recent_turns,
            keep_tool_io_pairs: plan.kept.tool_pairs,
        });
        Ok(Outcome {
            messages: out,
            tokens: after,
            report: Some(Report {
                before,
                after,
                pruned: pruned_count,
                kept: plan.kept,
                layers,
                summary: summary_info,
                fallbacks,
            }),
        })
    }

    /// Ask the summarizer, with seed 004's fallbacks: a summary over its
    /// cap, or cut at its token limit, is retried with half the tokens
    /// (twice); a refusal is retried with the brief strategy; any other
    /// failure, or the round's deadline passing, prunes only. Returns the
    /// summary and the strategy that wrote it.
    fn summarize(
        &mut self,
        summarizer: &dyn Summarizer,
        mut request: SummaryRequest<'_>,
        (version, reserve): (u32, usize),
        fallbacks: &mut Vec<String>,
    ) -> Option<(String, Strategy)> {
        let cap = request.max_tokens;
        let deadline = Instant::now() + self.summary_deadline;
        let mut retries = 0;
        loop {
            if Instant::now() >= deadline {
                let why = "the deadline passed before the next attempt";
                self.give_up(&SummaryError::DeadlineExceeded(why.into()), fallbacks);
                return None;
            }
            let too_long = match summarizer.summarize_by(&request, deadline) {
                Ok(text) => {
                    let tokens = request.model.count(&text);
                    let whole = self.counter.message(&summary_message(version, &text));
                    if tokens <= cap && whole <= reserve && !text.trim().is_empty() {
                        return Some((text, request.strategy));
                    }
                    if tokens <= cap && text.trim().is_empty() {
                        self.emit(Event::error(
                            "SummaryTooLong",
                            "the summary is empty",
                            "pruning-only",
                        ));
                        fallbacks.push("pruning-only".into());
                        return None;
                    }
                    if tokens <= cap {
                        format!(
                            "the summary message takes {whole} tokens with its header, \
                             over the {reserve} kept for it"
                        )
                    } else {
                        format!("the summary has {tokens} tokens, over the cap of {cap}")
                    }
                }
                Err(SummaryError::Truncated(why)) => why,
                Err(SummaryError::Refused(why)) if request.strategy != Strategy::Brief => {
                    self.emit(Event::error("SummaryRefused", why, "brief"));
                    fallbacks.push("brief strategy".into());
                    request.strategy = Strategy::Brief;
                    continue;
                }
                Err(error) => {
                    self.give_up(&error, fallbacks);
                    return None;
                }
            };
            if retries < 2 {
                retries += 1;
                request.max_tokens = (request.max_tokens / 2).max(1);
                let fallback = format!("retry with max_tokens {}", request.max_tokens);
                self.emit(Event::error("SummaryTooLong", too_long, &fallback));
                fallbacks.push(fallback);
                continue;
            }
            self.emit(Event::error(
                "SummaryTooLong",
                format!("{too_long}, after 2 retries"),
                "pruning-only",
            ));
            fallbacks.push("pruning-only".into());
            return None;
        }
    }

    /// The summary of this round is abandoned for `error`: prune only.
    fn give_up(&mut self, error: &SummaryError, fallbacks: &mut Vec<String>) {
        let message = match error {
            SummaryError::DeadlineExceeded(_) => format!(
                "{error} (the summary deadline is {} ms)",
                self.summary_deadline.as_millis()
            ),
            _ => error.to_string(),
        };
        self.emit(Event::error(error.kind(), message, "pruning-only"));
        fallbacks.push(match error {
            SummaryError::DeadlineExceeded(_) => "pruning-only (summary deadline)".into(),
            _ => "pruning-only".into(),
        });
    }

    /// Choose what to keep. First whole turns (a kept turn keeps its
    /// tool exchanges): `keep_recent_turns` shrinks one step at a time
    /// until the kept part plus room for the summary fits the budget; on
    /// a threshold trigger, more recent turns are then added while the
    /// prompt stays under `target_after_compaction` of the budget. When
    /// not even the last whole turn fits, tool exchanges are limited to
    /// `keep_tool_io_pairs`, which shrinks after the turns. When the
    /// budget leaves less than `max_summary_tokens`, the summary gets
    /// what is left (a smaller summary rather than none).
    fn plan(
        &mut self,
        messages: &[Message],
        units: &[Unit],
        tokens: &[usize],
        fill_to_target: bool,
    ) -> Result<Plan, CompactError> {
        let budget = self.policy.budget();
        let tools = self.counter.count(&[]).tools_schema;
        let unit_tokens: Vec<usize> = units
            .iter()
            .map(|u| tokens[u.start..u.end].iter().sum())
            .collect();
        let pinned: Vec<bool> = units
            .iter()
            .map(|u| {
                messages[u.start..u.end]
                    .iter()
                    .any(|m| m.is_protected() || self.policy.never_prunes(m.role))
            })
            .collect();
        let is_summary: Vec<bool> = units
            .iter()
            .map(|u| summary_version(&messages[u.start]).is_some())
            .collect();
        // The summary message's header and framing alone, then with a
        // full `max_summary_tokens` body (both counted exactly).
        let overhead = self.summary_reserve(messages, 0);
        let summary_reserve = self.summary_reserve(messages, self.policy.max_summary_tokens);
        let last_turn = units.last().map_or(0, |u| u.turn);
        let measure = |keep: &[bool]| -> (usize, bool) {
            let kept_tokens: usize = unit_tokens
                .iter()
                .zip(keep)
                .filter(|(_, k)| **k)
                .map(|(t, _)| t)
                .sum();
            (REPLY_PRIMING + tools + kept_tokens, keep.iter().any(|k| !k))
        };
        let full = self.policy.max_summary_tokens;
        for whole in [true, false] {
            let (mut turns, mut pairs) = (
                self.policy.keep_recent_turns,
                self.policy.keep_tool_io_pairs,
            );
            loop {
                let keep = select(units, &pinned, &is_summary, last_turn, turns, pairs, whole);
                let (base, prunes) = measure(&keep);
                let total = base + if prunes { summary_reserve } else { 0 };
                if total <= budget {
                    let mut best = (keep, turns);
                    if whole && fill_to_target && turns == self.policy.keep_recent_turns {
                        let target = self.policy.target_tokens();
                        for more in turns + 1..=last_turn {
                            let keep =
                                select(units, &pinned, &is_summary, last_turn, more, pairs, true);
                            let (base, prunes) = measure(&keep);
                            if !prunes || base + summary_reserve > target.min(budget) {
                                break;
                            }
                            best = (keep, more);
                        }
                    }
                    let (keep, turns) = best;
                    return Ok(self.plan_of(units, &pinned, keep, turns, pairs, full));
                }
                let at_floor = turns <= 1 && (whole || pairs <= 1);
                if at_floor && !whole && base <= budget {
                    // The kept part fits, with less than a full summary.
                    let left = (budget - base).saturating_sub(overhead);
                    let room = (left as f64 / self.counter.factor()).floor() as usize;
                    return Ok(self.plan_of(units, &pinned, keep, turns, pairs, room));
                }
                if turns > 1 {
                    turns -= 1;
                } else if !whole && pairs > 1 {
                    pairs -= 1;
                } else if whole {
                    break;
                } else {
                    let kept_tokens = base - tools - REPLY_PRIMING;
                    let pinned_tokens: usize = unit_tokens
                        .iter()
                        .zip(&pinned)
                        .filter(|(_, p)| **p)
                        .map(|(t, _)| t)
                        .sum();
                    let floor_tokens = kept_tokens - pinned_tokens;
                    let newest_turn_tokens = REPLY_PRIMING
                        + tools
                        + units
                            .iter()
                            .zip(&unit_tokens)
                            .zip(&pinned)
                            .filter(|((u, _), p)| u.turn == last_turn && !**p)
                            .map(|((_, t), _)| t)
                            .sum::<usize>();
                    return Err(self.fail(CompactError::InsufficientBudget {
                        protected_tokens: base,
                        pinned_tokens,
                        floor_tokens,
                        newest_turn_tokens,
                        budget,
                        max_context_tokens: self.policy.max_context_tokens,
                        hard_cap_buffer: self.policy.hard_cap_buffer,
                    }));
                }
                self.emit(Event::PolicyReduced {
                    keep_recent_turns: turns,
                    keep_tool_io_pairs: pairs,
                    tokens: total,
                    budget,
                });
            }
        }
        unreachable!("the second pass always returns")
    }

    /// The tokens kept free for the summary message: its header line and
    /// framing, counted exactly, plus `body_tokens` of body (scaled
    /// as every count is) and one token for the newline's merge. A summary
    /// whose whole message is over this is treated as too long, so the
    /// budget holds to the token.
    fn summary_reserve(&mut self, messages: &[Message], body_tokens: usize) -> usize {
        let version = messages
            .iter()
            .filter_map(summary_version)
            .max()
            .unwrap_or(0)
            + 1;
        let header = self.counter.message(&summary_message(version, ""));
        if body_tokens == 0 {
            return header + 1;
        }
        let body = (body_tokens as f64 * self.counter.factor()).ceil() as usize;
        header + body + 1
    }

    fn plan_of(
        &self,
        units: &[Unit],
        pinned: &[bool],
        keep: Vec<bool>,
        turns: usize,
        pairs: usize,
        summary_tokens: usize,
    ) -> Plan {
        let summary_tokens = summary_tokens.min(self.policy.max_summary_tokens);
        let pinned_messages = units
            .iter()
            .zip(pinned)
            .filter(|(_, p)| **p)
            .map(|(u, _)| u.len())
            .sum();
        Plan {
            keep,
            room_for_summary: summary_tokens >= MIN_SUMMARY_TOKENS,
            summary_tokens,
            pinned_messages,
            kept: KeptCounts {
                pinned: pinned_messages,
                recent_turns: turns,
                tool_pairs: pairs,
            },
        }
    }
}

struct Plan {
    /// Per unit: kept verbatim.
    keep: Vec<bool>,
    /// False when only pruning fits the budget.
    room_for_summary: bool,
    /// The summary's token cap: `max_summary_tokens`, or what the budget
    /// leaves when that is less.
    summary_tokens: usize,
    pinned_messages: usize,
    kept: KeptCounts,
}

/// The smallest summary worth writing, in tokens.
const MIN_SUMMARY_TOKENS: usize = 16;

/// Which units the keep policies keep: pinned ones, pending calls, the
/// non-tool units of the last `turns` user turns (with their tool
/// exchanges too when `whole`) and the last `pairs` tool exchanges. A previous summary is never kept by these rules (it
/// is folded into the next one).
fn select(
    units: &[Unit],
    pinned: &[bool],
    is_summary: &[bool],
    last_turn: usize,
    turns: usize,
    pairs: usize,
    whole: bool,
) -> Vec<bool> {
    let first_recent_turn = (last_turn + 1).saturating_sub(turns);
    let mut pairs_left = pairs;
    let mut keep = vec![false; units.len()];
    for (i, u) in units.iter().enumerate().rev() {
        keep[i] = if pinned[i] || u.pending {
            true
        } else if is_summary[i] {
            false
        } else if u.tool_exchange {
            let k = pairs_left > 0;
            pairs_left = pairs_left.saturating_sub(1);
            k || whole && u.turn >= first_recent_turn && u.turn > 0
        } else {
            u.turn >= first_recent_turn && u.turn > 0
        };
    }
    keep
}

/// True when some message has text or tool calls worth summarizing.
fn meaningful(messages: &[Message]) -> bool {
    messages
        .iter()
        .any(|m| !m.text().trim().is_empty() || m.calls_tools())
}
