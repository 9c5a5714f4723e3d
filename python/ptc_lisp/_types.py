"""Typed dicts of the ptc_lisp API (plain dicts at run time)."""

from typing import Any, Dict, List, Optional

from typing import TypedDict


class Message(TypedDict):
    """A message ``Session.render_prompt`` returns."""

    role: str
    content: str


class SummaryRequest(TypedDict):
    """What a summarizer callable passed to ``compact`` is given."""

    strategy: str
    """``task_state``, ``decision_log``, ``code_delta`` or ``brief``."""
    max_tokens: int
    """The summary's token limit."""
    messages: List[Dict[str, Any]]
    """The pruned messages, in order (never a protected one)."""
    previous: Optional[str]
    """The body of the summary this one replaces: its facts must carry over."""
    state: Optional[str]
    """Facts the host passed as ``compact(state=...)``."""
    note: Optional[str]
    """The note of a forced compaction."""
