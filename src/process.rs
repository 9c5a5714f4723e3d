//! The processes the library starts (command tools, MCP servers), told to
//! a watch the embedding program may install ([`set_child_watch`]): just
//! before one starts, once it runs (its id, which is also its process
//! group's, as each is started in a group of its own), and once it has
//! ended and been reaped.
//!
//! `ptc` uses this to keep a guard process that kills the groups still
//! running when `ptc` dies, however it dies, SIGKILL included (the
//! binary's `cli/child_guard.rs`; ARCHITECTURE.md, "Orphans"). The
//! library itself only reports; it starts no process for this and needs
//! no unsafe code.

use std::sync::OnceLock;

/// What a watch is told of the library's child processes. Each call is
/// made on the thread that starts, reaps or kills the child, while the
/// library's own list of running children is locked, so calls for one
/// child come in order; a watch must be quick and must not start tools.
pub trait ChildWatch: Send + Sync {
    /// A child is about to be started (a watch that needs set-up of its
    /// own does it now, before there is a child to lose).
    fn starting(&self) {}
    /// Child `group` runs: its process id and its process group's id.
    fn started(&self, group: u32);
    /// Child `group` has ended and been reaped (or killed and reaped).
    fn ended(&self, group: u32);
}

static WATCH: OnceLock<Box<dyn ChildWatch>> = OnceLock::new();

/// Install `watch` for every child the library starts from now on; false
/// (and `watch` dropped) when one was installed already.
pub fn set_child_watch(watch: Box<dyn ChildWatch>) -> bool {
    WATCH.set(watch).is_ok()
}

pub(crate) fn starting() {
    if let Some(watch) = WATCH.get() {
        watch.starting();
    }
}

pub(crate) fn started(group: u32) {
    if let Some(watch) = WATCH.get() {
        watch.started(group);
    }
}

pub(crate) fn ended(group: u32) {
    if let Some(watch) = WATCH.get() {
        watch.ended(group);
    }
}
