//! How the memory limit ([`crate::eval::Limits::max_memory`]) learns the
//! size of the heap: the program that embeds the interpreter installs a
//! counting global allocator and hands its counter here once. The crate
//! itself has no unsafe code and no allocator of its own.
//!
//! ```
//! // In the embedding binary (the `ptc` command does exactly this):
//! #[global_allocator]
//! static ALLOC: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, usize::MAX);
//!
//! fn main() {
//!     ptc_lisp::heap::count_with(|| ALLOC.allocated());
//! }
//! # main();
//! ```
//!
//! Without a counter the memory limit is not checked; the size,
//! expansion, time and step limits still bound what a program can build.
//! The count is process-wide: programs running at once in one process
//! share it.

use std::sync::OnceLock;

static COUNTER: OnceLock<fn() -> usize> = OnceLock::new();

/// Use `counter` (bytes in use on the heap) for the memory limit. Only
/// the first call takes effect; returns false for later ones.
pub fn count_with(counter: fn() -> usize) -> bool {
    COUNTER.set(counter).is_ok()
}

/// Bytes in use on the heap, if a counter was given.
pub(crate) fn live_bytes() -> Option<usize> {
    COUNTER.get().map(|count| count())
}
