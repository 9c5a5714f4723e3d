//! A compaction kept in force over a prompt that is rebuilt from scratch
//! before every model call (as the agent loop and the REPL build theirs
//! from the session's turns). No I/O.

use super::message::Message;
use super::summary::summary_version;

/// The first `pinned` messages of every rebuilt prompt are protected;
/// after them, one summary stands for the next `replaced` messages.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Carry {
    pinned: usize,
    summary: Option<Message>,
    replaced: usize,
}

impl Carry {
    /// A carry for prompts whose first `pinned` messages (a system
    /// prompt, a mission) must never be compacted.
    pub fn new(pinned: usize) -> Self {
        Carry {
            pinned,
            summary: None,
            replaced: 0,
        }
    }

    /// The summary in force, if any.
    pub fn summary(&self) -> Option<&Message> {
        self.summary.as_ref()
    }

    /// Forget every compaction (the prompt is sent whole again).
    pub fn reset(&mut self) {
        self.summary = None;
        self.replaced = 0;
    }

    /// The prompt to send for the freshly rebuilt `full` one: the pinned
    /// messages (marked protected), the summary in force, then what it
    /// does not replace.
    pub fn apply(&self, full: &[Message]) -> Vec<Message> {
        let pinned = self.pinned.min(full.len());
        let rest = (pinned + self.replaced).min(full.len());
        let mut out = Vec::with_capacity(full.len() - rest + pinned + 1);
        out.extend(full[..pinned].iter().cloned().map(Message::protected));
        out.extend(self.summary.clone());
        out.extend_from_slice(&full[rest..]);
        out
    }

    /// Take in a compaction of `effective` (what [`Carry::apply`] gave
    /// for a prompt of `full_len` messages) into `compacted`. Returns
    /// false, changing nothing, when `compacted` is not the pinned
    /// messages, at most one summary and an unchanged end of the prompt.
    pub fn absorb(
        &mut self,
        full_len: usize,
        effective: &[Message],
        compacted: &[Message],
    ) -> bool {
        let pinned = self.pinned.min(full_len);
        let rest = (pinned + self.replaced).min(full_len);
        let suffix = compacted
            .iter()
            .rev()
            .zip(effective.iter().rev())
            .take_while(|(a, b)| a == b && summary_version(a).is_none())
            .count()
            .min(full_len - rest);
        let head = &compacted[..compacted.len() - suffix];
        let summary = match head.len().checked_sub(pinned) {
            Some(0) => None,
            Some(1) if summary_version(&head[pinned]).is_some() => Some(head[pinned].clone()),
            _ => return false,
        };
        if head[..pinned] != effective[..pinned] {
            return false;
        }
        self.summary = summary;
        self.replaced = full_len - suffix - pinned;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::summary_message;

    #[test]
    fn a_compaction_stays_in_force_as_the_prompt_grows() {
        let mut full: Vec<Message> = vec![Message::system("s"), Message::user("mission")];
        for i in 0..10 {
            full.push(Message::assistant(format!("a{i}")));
            full.push(Message::user(format!("u{i}")));
        }
        let mut carry = Carry::new(2);
        let effective = carry.apply(&full);
        assert_eq!(effective.len(), full.len());
        assert!(effective[0].is_protected() && effective[1].is_protected());
        // A compaction keeping the last 4 messages.
        let mut compacted = effective[..2].to_vec();
        compacted.push(summary_message(1, "facts"));
        compacted.extend_from_slice(&effective[effective.len() - 4..]);
        assert!(carry.absorb(full.len(), &effective, &compacted));
        // The next prompt: two more messages.
        full.push(Message::assistant("a10"));
        full.push(Message::user("u10"));
        let next = carry.apply(&full);
        assert_eq!(next.len(), 2 + 1 + 6);
        assert_eq!(next[2], summary_message(1, "facts"));
        assert_eq!(next[3].text(), "a8");
        // Something else entirely is refused.
        assert!(!carry.absorb(full.len(), &next, &[Message::user("x")]));
    }
}
