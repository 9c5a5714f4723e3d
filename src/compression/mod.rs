//! History compression: how the turns of a session become the messages
//! of the next prompt.
//!
//! A strategy implements [`Compression`]: a pure function from the turns,
//! the user namespace and a [`RenderContext`] to messages and
//! [`CompressionStats`] (ARC-003, ARC-004). [`SingleUserCoalesced`] is the
//! default (ARC-005); custom strategies implement the same trait.
//! [`CompressionSetting`] is the `compression` option and
//! [`normalize`] turns it into a strategy with options (API-001..007);
//! [`build_messages`] picks compression or the plain full history.
//!
//! Nothing here does I/O or mutates a turn: compression happens when a
//! prompt is built, never when a turn is stored (CMP-004).
//!
//! ```
//! use ptc_lisp::compression::{build_messages, CompressionSetting, RenderContext};
//! use ptc_lisp::session::Session;
//! use ptc_lisp::value::Value;
//!
//! let mut session = Session::new();
//! session
//!     .register_tool("search", "(query :string) -> [:string]", "Search docs", |args| {
//!         Ok(Value::vector([Value::from(args.str("query").unwrap_or_default())]))
//!     })
//!     .expect("a valid signature");
//! session.set_data("limit", 3);
//! session.eval(r#"(def hits (tool/search "rust")) (println "found" (count hits))"#);
//!
//! let ctx = RenderContext::for_session(&session, "Find the docs about rust", 5);
//! let (messages, stats) =
//!     build_messages(&CompressionSetting::On, 5, session.turns(), session.memory(), &ctx);
//! assert!(messages[1].content.contains(";; Tool calls made:\n;   search(\"rust\")"));
//! assert!(messages[1].content.ends_with("Turns left: 4"));
//! assert_eq!(stats.unwrap().printlns_shown, 1);
//! ```

mod coalesced;
mod debug;

/// The namespace sections of the prompt, for `describe` of `ptc mcp-server`.
pub(crate) use coalesced::{write_data_section, write_tool_section, write_user_section};
pub mod format;
mod full;
mod state;

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::session::{Memory, Session, ToolSpec, Turn};
use crate::value::Value;

pub use coalesced::SingleUserCoalesced;
pub use debug::{debug_view, stats_box, write_turn};
pub use full::{full_history, full_history_from};
pub use state::session_state;

/// `max_turns` when none is given (SS-002).
pub const DEFAULT_MAX_TURNS: usize = 5;
/// Default of `println_limit` (API-004).
pub const DEFAULT_PRINTLN_LIMIT: usize = 15;
/// Default of `tool_call_limit` (API-005).
pub const DEFAULT_TOOL_CALL_LIMIT: usize = 20;

/// Who a message is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

impl Role {
    /// The lowercase wire name (`system`, `user`, `assistant`).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::System => "SYSTEM",
            Role::User => "USER",
            Role::Assistant => "ASSISTANT",
        })
    }
}

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

impl Message {
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Message {
            role,
            content: content.into(),
        }
    }

    pub fn system(content: impl Into<String>) -> Self {
        Message::new(Role::System, content)
    }

    pub fn user(content: impl Into<String>) -> Self {
        Message::new(Role::User, content)
    }

    pub fn assistant(content: impl Into<String>) -> Self {
        Message::new(Role::Assistant, content)
    }
}

/// Everything a strategy may use besides the turns and the namespace.
#[derive(Debug, Clone)]
pub struct RenderContext {
    /// The mission (the user's prompt); always shown first (MSG-003).
    pub mission: String,
    /// The static system prompt, passed through unchanged (MSG-006).
    pub system_prompt: String,
    pub tools: Vec<ToolSpec>,
    /// The `data/` values in their order.
    pub data: Vec<(String, Value)>,
    /// Turns remaining, counting the one being prompted for: 1 means this
    /// is the final turn. See [`turns_left`].
    pub turns_left: usize,
    pub println_limit: usize,
    pub tool_call_limit: usize,
    /// The expected return signature, if any.
    pub signature: Option<String>,
    /// Options a custom strategy understands (from
    /// [`CompressionOptions::extra`]).
    pub options: serde_json::Map<String, serde_json::Value>,
}

impl RenderContext {
    /// A context with a mission, default limits and [`DEFAULT_MAX_TURNS`]
    /// turns left.
    pub fn new(mission: impl Into<String>) -> Self {
        RenderContext {
            mission: mission.into(),
            system_prompt: String::new(),
            tools: Vec::new(),
            data: Vec::new(),
            turns_left: DEFAULT_MAX_TURNS,
            println_limit: DEFAULT_PRINTLN_LIMIT,
            tool_call_limit: DEFAULT_TOOL_CALL_LIMIT,
            signature: None,
            options: serde_json::Map::new(),
        }
    }

    /// A context with the session's tools and data, and the turns left
    /// out of `max_turns` after the session's turns so far.
    pub fn for_session(session: &Session, mission: impl Into<String>, max_turns: usize) -> Self {
        RenderContext {
            tools: session.tool_specs(),
            data: session.data().to_vec(),
            turns_left: turns_left(max_turns, session.turns().len()),
            ..RenderContext::new(mission)
        }
    }

    pub fn with_system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = prompt.into();
        self
    }

    pub fn with_turns_left(mut self, turns_left: usize) -> Self {
        self.turns_left = turns_left;
        self
    }

    pub fn with_signature(mut self, signature: impl Into<String>) -> Self {
        self.signature = Some(signature.into());
        self
    }

    /// Take the limits and extra options of `options`.
    pub fn with_options(mut self, options: &CompressionOptions) -> Self {
        self.println_limit = options.println_limit;
        self.tool_call_limit = options.tool_call_limit;
        self.options = options.extra.clone();
        self
    }
}

/// Turns remaining for the next prompt: `max_turns - taken`, never below
/// zero.
pub fn turns_left(max_turns: usize, taken: usize) -> usize {
    max_turns.saturating_sub(taken)
}

/// What a compression left out, for the debug view and usage reports.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompressionStats {
    pub enabled: bool,
    pub strategy: String,
    /// Turns coalesced into the summary message.
    pub turns_compressed: usize,
    pub tool_calls_total: usize,
    pub tool_calls_shown: usize,
    pub tool_calls_dropped: usize,
    pub printlns_total: usize,
    pub printlns_shown: usize,
    pub printlns_dropped: usize,
    /// Failed turns hidden from the model.
    pub error_turns_collapsed: usize,
}

/// A compression strategy (ARC-003).
///
/// Implementations must be pure: the same turns, memory and context give
/// the same messages and stats (ARC-004). Turn numbers come from the
/// turns, never from the message count (ARC-006).
pub trait Compression: Send + Sync {
    /// A short kebab-case name such as `single-user-coalesced`.
    fn name(&self) -> &str;

    /// Render the prompt for the next turn.
    fn to_messages(
        &self,
        turns: &[Turn],
        memory: &Memory,
        ctx: &RenderContext,
    ) -> (Vec<Message>, CompressionStats);
}

/// Options of a strategy: the two limits every strategy gets, and any
/// others a custom strategy reads from [`RenderContext::options`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CompressionOptions {
    pub println_limit: usize,
    pub tool_call_limit: usize,
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl Default for CompressionOptions {
    fn default() -> Self {
        CompressionOptions {
            println_limit: DEFAULT_PRINTLN_LIMIT,
            tool_call_limit: DEFAULT_TOOL_CALL_LIMIT,
            extra: serde_json::Map::new(),
        }
    }
}

/// The `compression` option (API-001..003, API-007).
#[derive(Clone, Default)]
pub enum CompressionSetting {
    /// Not given: off at the top level, inherited from the parent
    /// otherwise (see [`CompressionSetting::inherit`]).
    #[default]
    Unset,
    /// `false`: the full history is sent.
    Off,
    /// `true`: [`SingleUserCoalesced`] with default options.
    On,
    /// A strategy with default options.
    Strategy(Arc<dyn Compression>),
    /// A strategy with options.
    StrategyWith(Arc<dyn Compression>, CompressionOptions),
}

impl fmt::Debug for CompressionSetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompressionSetting::Unset => f.write_str("Unset"),
            CompressionSetting::Off => f.write_str("Off"),
            CompressionSetting::On => f.write_str("On"),
            CompressionSetting::Strategy(s) => write!(f, "Strategy({})", s.name()),
            CompressionSetting::StrategyWith(s, o) => {
                write!(f, "StrategyWith({}, {o:?})", s.name())
            }
        }
    }
}

impl From<bool> for CompressionSetting {
    fn from(on: bool) -> Self {
        if on {
            CompressionSetting::On
        } else {
            CompressionSetting::Off
        }
    }
}

impl From<Option<bool>> for CompressionSetting {
    fn from(on: Option<bool>) -> Self {
        on.map_or(CompressionSetting::Unset, CompressionSetting::from)
    }
}

impl CompressionSetting {
    /// A strategy with default options.
    pub fn strategy(strategy: impl Compression + 'static) -> Self {
        CompressionSetting::Strategy(Arc::new(strategy))
    }

    /// A strategy with options.
    pub fn strategy_with(
        strategy: impl Compression + 'static,
        options: CompressionOptions,
    ) -> Self {
        CompressionSetting::StrategyWith(Arc::new(strategy), options)
    }

    /// This setting, or the parent's when this one is unset (API-007).
    pub fn inherit(self, parent: &CompressionSetting) -> CompressionSetting {
        match self {
            CompressionSetting::Unset => parent.clone(),
            own => own,
        }
    }

    /// See [`normalize`].
    pub fn normalize(&self) -> Option<(Arc<dyn Compression>, CompressionOptions)> {
        normalize(self)
    }
}

/// The strategy and options a setting stands for, or `None` when
/// compression is off (API-006).
pub fn normalize(
    setting: &CompressionSetting,
) -> Option<(Arc<dyn Compression>, CompressionOptions)> {
    match setting {
        CompressionSetting::Unset | CompressionSetting::Off => None,
        CompressionSetting::On => {
            Some((Arc::new(SingleUserCoalesced), CompressionOptions::default()))
        }
        CompressionSetting::Strategy(s) => Some((s.clone(), CompressionOptions::default())),
        CompressionSetting::StrategyWith(s, o) => Some((s.clone(), o.clone())),
    }
}

/// The messages for the next prompt: compressed when the setting asks for
/// it and the run has more than one turn (SS-001), the plain full history
/// otherwise. Stats are `None` when nothing was compressed.
pub fn build_messages(
    setting: &CompressionSetting,
    max_turns: usize,
    turns: &[Turn],
    memory: &Memory,
    ctx: &RenderContext,
) -> (Vec<Message>, Option<CompressionStats>) {
    match normalize(setting) {
        Some((strategy, options)) if max_turns != 1 => {
            let ctx = ctx.clone().with_options(&options);
            let (messages, stats) = strategy.to_messages(turns, memory, &ctx);
            (messages, Some(stats))
        }
        _ => (full_history_from(turns, memory, ctx), None),
    }
}
