//! Resource limits: every one configurable, each with its own error.

use std::time::Duration;

/// Limits applied to one program run.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// Wall-clock time for the whole program, tool calls included.
    pub timeout: Duration,
    /// Evaluation steps (function calls and loop iterations). Replaces the
    /// specification's 1,000-iteration loop cap, which is too small for
    /// real data.
    pub max_steps: u64,
    /// Depth of nested (non-tail) function calls.
    pub max_depth: usize,
    /// Items in one collection, or characters in one string.
    pub max_collection: usize,
    /// Items one operation may visit or build when it expands shared
    /// structure: walking (`postwalk`, `flatten`, `tree-seq`), JSON
    /// conversion. A vector doubled forty times is 41 values in memory
    /// but 2^40 items expanded.
    pub max_expanded: usize,
    /// Bytes of memory a program may add to what the process held when it
    /// started, checked while it runs (with the time limit). Enforced only
    /// where the embedding program gives a heap counter
    /// ([`crate::heap::count_with`]), as the `ptc` binary does.
    pub max_memory: usize,
    /// Bytes of memory a whole session (the REPL, `ptc mcp-server`, an
    /// embedding [`crate::session::Session`]) may add to what the process
    /// held before its first turn: definitions persist across turns, and
    /// each turn may add up to `max_memory`. A turn that would cross it
    /// fails with the memory error and keeps no definition; earlier ones
    /// stay. Enforced only with a heap counter, as `max_memory`.
    pub max_session_memory: usize,
    /// Total characters printed by `println` in one program.
    pub max_output: usize,
    /// Characters kept of one `println` call (TRN-011); the rest is cut
    /// and marked with `...`.
    pub println_truncate: usize,
    /// Tool calls in one program.
    pub max_tool_calls: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            timeout: Duration::from_secs(1),
            max_steps: 10_000_000,
            max_depth: 1_000,
            max_collection: 1_000_000,
            max_expanded: 8_000_000,
            max_memory: 1 << 30,
            max_session_memory: 2 << 30,
            max_output: 64 * 1024,
            println_truncate: 2_000,
            max_tool_calls: 50,
        }
    }
}

impl Limits {
    /// Limits with no practical ceiling except time, for trusted code and
    /// benchmarks.
    pub fn generous() -> Self {
        Limits {
            timeout: Duration::from_secs(3600),
            max_steps: u64::MAX,
            max_depth: 10_000,
            max_collection: usize::MAX,
            max_expanded: usize::MAX,
            max_memory: usize::MAX,
            max_session_memory: usize::MAX,
            max_output: usize::MAX,
            println_truncate: usize::MAX,
            max_tool_calls: usize::MAX,
        }
    }
}
