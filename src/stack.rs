//! How much machine stack the current thread has left, and a recursion
//! step that moves onto a fresh segment on the heap when it runs low.
//!
//! Programs and values can nest deeper than any thread's stack allows, so
//! the evaluator and the walks over values ask before each level how much
//! stack remains, and `stacker` gives them a new segment when too little
//! does. `stacker` learns a thread's stack once per thread, from
//! `pthread_getattr_np`, which on the main thread reads and parses
//! `/proc/self/maps`: about 35 us of every `ptc eval` (BENCHMARKS.md).
//! On Linux the main thread's stack is known without that: its top is
//! just above the program's file name (`AT_EXECFN`, placed at the top of
//! the initial stack), and it can grow down as far as the stack size limit
//! (`RLIMIT_STACK`) allows. This module answers from those two on the main
//! thread, and asks `stacker` everywhere else: other threads, other
//! systems, and the heap segments `stacker` switched to.
//!
//! It must not answer more than the stack really has: a wrong answer is a
//! crash, not an error. So the top is rounded up to its page and the
//! answer keeps [`MARGIN`] in hand.

use std::cell::Cell;

/// Stack kept in hand below the computed end of the main thread's stack.
const MARGIN: usize = 64 * 1024;

/// The size assumed for a main-thread stack without a limit. Linux keeps
/// at least 128 MiB between such a stack and the mappings below it.
const UNLIMITED_STACK: usize = 8 * 1024 * 1024;

thread_local! {
    /// This thread's stack as (lowest usable address, top), if it is the
    /// main thread's and known; `None` otherwise.
    static MAIN_STACK: Cell<Option<(usize, usize)>> = Cell::new(main_thread_stack());
}

/// The address of a local of the caller's frame: where the stack is.
#[inline(always)]
pub(crate) fn position() -> usize {
    let marker = 0u8;
    std::ptr::addr_of!(marker) as usize
}

/// Bytes of stack left below the caller, if known.
#[inline]
pub(crate) fn remaining() -> Option<usize> {
    let here = position();
    match MAIN_STACK.with(Cell::get) {
        Some((lowest, top)) if (lowest..=top).contains(&here) => Some(here - lowest),
        _ => stacker::remaining_stack(),
    }
}

/// Run `f` here when at least `red_zone` bytes of stack are left, else on
/// a new segment of `segment` bytes (`stacker::maybe_grow`).
#[inline]
pub(crate) fn maybe_grow<R>(red_zone: usize, segment: usize, f: impl FnOnce() -> R) -> R {
    match remaining() {
        Some(left) if left >= red_zone => f(),
        _ => stacker::maybe_grow(red_zone, segment, f),
    }
}

/// The main thread's stack, when this is the main thread of a Linux
/// process: (lowest usable address, top).
#[cfg(target_os = "linux")]
fn main_thread_stack() -> Option<(usize, usize)> {
    use rustix::process::{getpid, getrlimit, Resource};
    if rustix::thread::gettid() != getpid() {
        return None;
    }
    let name = rustix::param::linux_execfn().as_ptr() as usize;
    let top = name.checked_next_multiple_of(rustix::param::page_size())?;
    let size = match getrlimit(Resource::Stack).current {
        Some(limit) => usize::try_from(limit).unwrap_or(usize::MAX),
        None => UNLIMITED_STACK,
    };
    let lowest = top.checked_sub(size)?.checked_add(MARGIN)?;
    // The stack in use must lie within it; anything else is not a stack
    // this module understands.
    (lowest..top).contains(&position()).then_some((lowest, top))
}

#[cfg(not(target_os = "linux"))]
fn main_thread_stack() -> Option<(usize, usize)> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On a spawned thread this module asks `stacker`, and both agree.
    #[test]
    fn spawned_threads_ask_stacker() {
        let (ours, theirs) = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(|| (remaining(), stacker::remaining_stack()))
            .expect("spawn")
            .join()
            .expect("join");
        let (ours, theirs) = (ours.expect("known"), theirs.expect("known"));
        assert!(ours.abs_diff(theirs) < 4096, "{ours} vs {theirs}");
        assert!(ours < 256 * 1024);
    }

    /// Deep recursion through `maybe_grow` on a small thread stack
    /// completes: the steps move to heap segments when the stack runs low.
    #[test]
    fn deep_recursion_moves_to_new_segments() {
        fn depth(n: usize) -> usize {
            maybe_grow(32 * 1024, 256 * 1024, || {
                let pad = std::hint::black_box([0u8; 512]);
                if n == 0 {
                    usize::from(pad[0])
                } else {
                    1 + depth(n - 1)
                }
            })
        }
        let got = std::thread::Builder::new()
            .stack_size(128 * 1024)
            .spawn(|| depth(20_000))
            .expect("spawn")
            .join()
            .expect("join");
        assert_eq!(got, 20_000);
    }
}
