//! A history cut into units that are kept or removed whole: a single
//! message, or an assistant message that calls tools together with all
//! of its results (OpenAI: the `tool` messages after it; Anthropic: the
//! user message right after it whose `tool_result` blocks answer its
//! `tool_use` blocks). Pair safety follows from removing only whole
//! units. No I/O.

use std::collections::{HashMap, HashSet};

use super::message::{Message, Role};

/// A run of messages kept or removed together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unit {
    /// First message (index into the history).
    pub start: usize,
    /// One past the last message.
    pub end: usize,
    /// An assistant message with tool calls, and their results.
    pub tool_exchange: bool,
    /// A tool call whose result has not arrived yet.
    pub pending: bool,
    /// The user turn this unit belongs to: 0 before the first user
    /// message, then one more at each user message.
    pub turn: usize,
}

impl Unit {
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }
}

/// A history that breaks the Chat format's pairing rules.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StructureError {
    /// A tool result with no call right before it.
    #[error("message {index}: a tool result without its call (tool_call_id {id:?} matches no call of the assistant message before it)")]
    OrphanToolResult { index: usize, id: String },
    /// A tool message without `tool_call_id`.
    #[error("message {index}: a tool result without `tool_call_id`")]
    MissingToolCallId { index: usize },
    /// An assistant message whose tool calls share an id: their results
    /// could not be told apart.
    #[error("message {index}: two tool calls of this assistant message have the same id {id:?}; each call of a message needs its own id")]
    DuplicateToolCallId { index: usize, id: String },
    /// A second result for a call of the assistant message before it.
    #[error("message {index}: a second result for tool call {id:?} (message {first} already answered it)")]
    DuplicateToolResult {
        index: usize,
        id: String,
        first: usize,
    },
}

impl StructureError {
    /// The 0-based index of the offending message.
    pub fn index(&self) -> usize {
        match self {
            StructureError::OrphanToolResult { index, .. }
            | StructureError::MissingToolCallId { index }
            | StructureError::DuplicateToolCallId { index, .. }
            | StructureError::DuplicateToolResult { index, .. } => *index,
        }
    }
}

/// Cut `messages` into units. Every tool result must directly follow
/// the assistant message that made its call (other results of the same
/// message may come between); the calls of one message have distinct
/// ids, and each is answered at most once. Ids may repeat across
/// assistant messages (some servers number each message's calls from
/// `call_0`): results pair with the calls of the message right before
/// them, never by id across the history.
pub fn units(messages: &[Message]) -> Result<Vec<Unit>, StructureError> {
    let mut out = Vec::with_capacity(messages.len());
    let mut turn = 0;
    let mut i = 0;
    while i < messages.len() {
        let m = &messages[i];
        if m.role == Role::User {
            turn += 1;
        }
        if m.answers_tools() {
            let id = m.tool_result_ids().next().unwrap_or_default();
            return Err(StructureError::OrphanToolResult {
                index: i,
                id: id.to_string(),
            });
        }
        if m.role == Role::Tool {
            return Err(match &m.tool_call_id {
                Some(id) => StructureError::OrphanToolResult {
                    index: i,
                    id: id.clone(),
                },
                None => StructureError::MissingToolCallId { index: i },
            });
        }
        if !m.calls_tools() {
            out.push(Unit {
                start: i,
                end: i + 1,
                tool_exchange: false,
                pending: false,
                turn,
            });
            i += 1;
            continue;
        }
        let mut waiting: HashSet<&str> = HashSet::new();
        if let Some(id) = m.tool_call_ids().find(|id| !waiting.insert(id)) {
            return Err(StructureError::DuplicateToolCallId {
                index: i,
                id: id.to_string(),
            });
        }
        // The calls answered so far, and where.
        let mut answered: HashMap<&str, usize> = HashMap::new();
        let mut answer = |id: &str, index: usize| -> Result<(), StructureError> {
            if let Some(call) = waiting.take(id) {
                answered.insert(call, index);
                return Ok(());
            }
            Err(match answered.get(id) {
                Some(&first) => StructureError::DuplicateToolResult {
                    index,
                    id: id.to_string(),
                    first,
                },
                None => StructureError::OrphanToolResult {
                    index,
                    id: id.to_string(),
                },
            })
        };
        let mut j = i + 1;
        if j < messages.len() && messages[j].answers_tools() {
            // Anthropic: every result of the calls comes in this one
            // user message.
            for id in messages[j].tool_result_ids() {
                answer(id, j)?;
            }
            j += 1;
        }
        while j < messages.len() && messages[j].role == Role::Tool {
            match messages[j].tool_call_id.as_deref() {
                Some(id) => answer(id, j)?,
                None => return Err(StructureError::MissingToolCallId { index: j }),
            }
            j += 1;
        }
        let waiting = waiting.len();
        out.push(Unit {
            start: i,
            end: j,
            tool_exchange: true,
            pending: waiting > 0,
            turn,
        });
        i = j;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_and_results_form_one_unit() {
        let h = [
            Message::system("s"),
            Message::user("u"),
            Message::tool_call([("a", "read", "{}"), ("b", "read", "{}")]),
            Message::tool_result("a", "1"),
            Message::tool_result("b", "2"),
            Message::assistant("done"),
            Message::tool_call([("c", "write", "{}")]),
        ];
        let u = units(&h).unwrap();
        assert_eq!(u.len(), 5);
        assert_eq!(
            (u[2].start, u[2].end, u[2].tool_exchange, u[2].pending),
            (2, 5, true, false)
        );
        assert!(u[4].pending);
        assert_eq!(u[0].turn, 0);
        assert_eq!(u[3].turn, 1);
    }

    #[test]
    fn anthropic_tool_use_and_result_form_one_unit() {
        let parse = |s: &str| crate::history::parse_jsonl(s).unwrap().remove(0);
        let h = [
            Message::user("u"),
            parse(
                r#"{"role":"assistant","content":[{"type":"text","text":"reading"},{"type":"tool_use","id":"t1","name":"read","input":{}},{"type":"tool_use","id":"t2","name":"read","input":{}}]}"#,
            ),
            parse(
                r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"1"},{"type":"tool_result","tool_use_id":"t2","content":"2"},{"type":"text","text":"go on"}]}"#,
            ),
            Message::assistant("done"),
            parse(
                r#"{"role":"assistant","content":[{"type":"tool_use","id":"t3","name":"write","input":{}}]}"#,
            ),
        ];
        let u = units(&h).unwrap();
        assert_eq!(u.len(), 4);
        assert_eq!(
            (u[1].start, u[1].end, u[1].tool_exchange, u[1].pending),
            (1, 3, true, false)
        );
        assert!(u[3].pending);
        let orphan = [Message::user("u"), h[2].clone()];
        assert_eq!(units(&orphan).unwrap_err().index(), 1);
        let wrong = [h[4].clone(), h[2].clone()];
        assert_eq!(
            units(&wrong).unwrap_err(),
            StructureError::OrphanToolResult {
                index: 1,
                id: "t1".into()
            }
        );
    }

    #[test]
    fn duplicate_ids_are_reported_as_duplicates() {
        let h = [
            Message::tool_call([("a", "f", "{}"), ("a", "g", "{}")]),
            Message::tool_result("a", "1"),
        ];
        assert_eq!(
            units(&h).unwrap_err(),
            StructureError::DuplicateToolCallId {
                index: 0,
                id: "a".into()
            }
        );
        let h = [
            Message::tool_call([("a", "f", "{}")]),
            Message::tool_result("a", "1"),
            Message::tool_result("a", "2"),
        ];
        assert_eq!(
            units(&h).unwrap_err(),
            StructureError::DuplicateToolResult {
                index: 2,
                id: "a".into(),
                first: 1
            }
        );
        // The same id in two assistant messages pairs by position.
        let h = [
            Message::tool_call([("call_0", "f", "{}")]),
            Message::tool_result("call_0", "1"),
            Message::tool_call([("call_0", "g", "{}")]),
            Message::tool_result("call_0", "2"),
        ];
        assert_eq!(units(&h).unwrap().len(), 2);
    }

    #[test]
    fn orphans_are_errors() {
        let h = [Message::user("u"), Message::tool_result("x", "1")];
        assert_eq!(
            units(&h).unwrap_err(),
            StructureError::OrphanToolResult {
                index: 1,
                id: "x".into()
            }
        );
        let h = [
            Message::tool_call([("a", "f", "{}")]),
            Message::tool_result("b", "1"),
        ];
        assert_eq!(units(&h).unwrap_err().index(), 1);
    }
}
