"""Type stubs of the native module ``ptc_lisp._native`` (re-exported by
``ptc_lisp``).

Values cross between PTC-Lisp and Python as follows:

=================  ============================================
PTC-Lisp           Python
=================  ============================================
``nil``            ``None``
``true``/``false``  ``bool``
integer (64-bit)   ``int``
float              ``float``
string             ``str``
keyword ``:a``     ``Keyword("a")``
vector, list       ``list`` (``tuple`` inside a set or a key)
set                ``set`` (``frozenset`` inside a set or a key)
map                ``dict``; keyword keys as ``str`` unless the
                   session has ``keyword_keys=True``
function, regex,   ``Opaque`` (cannot be passed back)
symbol, var
=================  ============================================

Going in, ``dict`` string keys become keywords (as JSON data does) unless
``keyword_keys=True``; ``list`` and ``tuple`` become vectors, ``set`` and
``frozenset`` sets. An ``int`` beyond 64 bits, a value nested more than
1,000 levels, a collection over the session's ``max_collection`` or an
object of another type is an error naming its path (``data/orders[3].id``).
"""

from __future__ import annotations

import os
import pathlib
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

from ._types import Message, SummaryRequest

__version__: str

class PtcError(Exception):
    """Base class of every error of ptc_lisp.

    ``code`` is the stable error code (``type-error``, ``timeout``,
    ``parse-error``, ...), ``line`` and ``column`` the 1-based position in
    the program when known, ``hint`` what to do about it, ``message`` the
    message alone.
    """

    code: str
    message: str
    line: Optional[int]
    column: Optional[int]
    hint: Optional[str]

class ParseError(PtcError):
    """The program could not be read (unbalanced brackets, a bad literal)."""

class EvalError(PtcError):
    """The program failed while it ran: a type error, an undefined name, a
    tool error (``code == "tool-error"``), a ``(return v)`` that breaks the
    signature (``signature-mismatch``), ..."""

class LimitError(PtcError):
    """The program was stopped by one of its limits: ``timeout``,
    ``step-limit-exceeded``, ``recursion-limit-exceeded``,
    ``memory-exceeded``, ``output-limit-exceeded``,
    ``tool-call-limit-exceeded`` or ``interrupted``."""

class ConfigError(PtcError):
    """A configuration, a policy or an export target is invalid.
    ``problems`` has one line per problem, each starting with the field
    path (``policy.trigger_pct``)."""

    problems: list[str]

class CompactError(PtcError):
    """A compaction could not produce a history within budget
    (``code == "InsufficientBudget"``) or the history breaks tool-call
    pairing (``MalformedHistory``)."""

    problems: list[str]

class SummaryRefused(PtcError):
    """Raise it from a summarizer to decline a request: the compaction
    retries with the ``brief`` strategy instead of pruning only."""

class Keyword:
    """A PTC-Lisp keyword (``:name``), distinct from a string.

    >>> Keyword("done") == Keyword(":done")
    True
    """

    def __init__(self, name: str) -> None: ...
    @property
    def name(self) -> str:
        """The name, without the colon."""
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

class Opaque:
    """A PTC-Lisp value with no Python form (a function, a symbol, a var,
    a regex), shown as PTC-Lisp prints it. It cannot be passed back."""

    @property
    def kind(self) -> str:
        """The PTC-Lisp type: ``function``, ``symbol``, ``var``, ``regex``."""
    @property
    def text(self) -> str:
        """The value as PTC-Lisp prints it."""

class Tool:
    """A Python callable to register as ``tool/NAME``, for
    ``Session(tools=[...])``; see ``Session.register_tool``."""

    name: str
    signature: str
    doc: str
    inline: bool
    func: Callable[..., Any]
    def __init__(
        self,
        name: str,
        signature: str,
        func: Callable[..., Any],
        doc: str = "",
        *,
        inline: bool = False,
    ) -> None: ...

class ToolCall:
    """One tool call a turn made."""

    @property
    def name(self) -> str: ...
    @property
    def args(self) -> list[Any]:
        """The arguments exactly as written in the call."""
    @property
    def result(self) -> Any:
        """The result, when the tool succeeded (else None)."""
    @property
    def error(self) -> Optional[str]:
        """The error message, when the tool failed."""
    @property
    def duration_ms(self) -> float: ...

class Turn:
    """One turn: the program, how it ended, what it printed and called.
    A failed turn changes no definition of the session."""

    @property
    def number(self) -> int:
        """1-based position in the session."""
    @property
    def program(self) -> str:
        """The program as run."""
    @property
    def success(self) -> bool:
        """True when the program ran without error (a ``(fail v)`` is a
        successful run that ends the mission)."""
    @property
    def value(self) -> Any:
        """The value of the last expression, of ``(return v)`` or of
        ``(fail v)``; None when the turn failed. Converted on each access."""
    @property
    def returned(self) -> bool:
        """True when the program called ``(return v)``."""
    @property
    def failed(self) -> bool:
        """True when the program called ``(fail v)``."""
    @property
    def prints(self) -> list[str]:
        """One entry per ``println`` call, in order."""
    @property
    def tool_calls(self) -> list[ToolCall]: ...
    @property
    def defined(self) -> list[str]:
        """Names the turn bound with ``def``/``defn`` (empty when it failed)."""
    @property
    def steps(self) -> int:
        """Evaluation steps used."""
    @property
    def duration_ms(self) -> float: ...
    @property
    def error(self) -> Optional[PtcError]:
        """The error (a ``ParseError``, ``EvalError`` or ``LimitError``
        instance, not raised), or None."""
    def raise_for_error(self) -> None:
        """Raise ``error`` if the turn has one."""

class Session:
    """A PTC-Lisp session: ``tool/`` functions, ``data/`` values and the
    definitions (``user/``) that persist from one turn to the next.

    ``eval`` releases the GIL while the program runs, so sessions in
    several threads run in parallel; a Python tool takes the GIL only for
    its own call. A session runs one turn at a time: a second ``eval``
    while one runs raises ``PtcError`` (code ``session-busy``).

    Limits: ``timeout_ms`` is the wall-clock time of a whole program, tool
    calls included; ``max_steps`` counts function calls and loop
    iterations; ``max_depth`` nested calls; ``max_collection`` the items
    of one collection (and of ``data=`` values); ``max_tool_calls`` the
    tool calls of one program; ``max_output`` the characters printed;
    ``max_memory_bytes`` the heap the extension may grow by while a
    program runs (Python's own objects are not counted; the count is
    shared by all sessions of the process).

    ``prelude`` is PTC-Lisp run first (its definitions land in ``user/``);
    an error in it raises. ``keyword_keys=True`` keeps keyword map keys as
    ``Keyword`` objects (and ``str`` keys as strings going in), so that
    values round-trip exactly.
    """

    def __init__(
        self,
        data: Optional[Mapping[str, Any]] = None,
        tools: Optional[Iterable[Tool]] = None,
        timeout_ms: int = 1000,
        max_steps: int = 10_000_000,
        prelude: Optional[str] = None,
        *,
        keyword_keys: bool = False,
        max_depth: Optional[int] = None,
        max_collection: Optional[int] = None,
        max_tool_calls: Optional[int] = None,
        max_output: Optional[int] = None,
        max_memory_bytes: Optional[int] = None,
    ) -> None: ...
    def set_data(self, data: Mapping[str, Any]) -> None:
        """Bind each key of ``data`` as ``data/KEY`` (a key set before is
        replaced, others stay)."""
    def register_tool(
        self,
        name: str,
        signature: str,
        func: Callable[..., Any],
        doc: str = "",
        *,
        inline: bool = False,
    ) -> None:
        """Register ``func`` as ``tool/NAME``.

        ``signature`` is PTC-Lisp's signature syntax:
        ``"(query :string, limit :int?) -> [{id :int}]"``. The program's
        arguments are checked against it and ``func`` is called with
        keyword arguments (``func(query="x", limit=5)``; an optional
        parameter the call left out is not passed). Its return value is
        converted and checked against the declared return type; a
        mismatch, or an exception, becomes the program's ``tool-error``
        (``Tool `search` failed: ValueError: bad query``).

        The program's time limit holds while ``func`` runs: ``func`` runs
        on the session's tool thread, and if it is still running at the
        program's deadline the turn ends at once with the ``timeout``
        error. The tool's thread is then abandoned: ``TimeoutError`` is
        raised inside it asynchronously (at its next Python bytecode; a
        call blocked in C, such as ``time.sleep`` or a socket read, sees
        it when that call returns), whatever it returns is discarded, and
        the session's next tool call starts a new thread.

        ``inline=True`` calls ``func`` on the program's own thread instead:
        no hand-over between threads (the cheapest call, for small fast
        functions), but a call that blocks cannot be cut short; the
        deadline is checked when it returns, and a late return still ends
        the turn with the ``timeout`` error.
        """
    def eval(self, source: str) -> Turn:
        """Run ``source`` as the next turn. Errors of the program are in
        ``Turn.error``; nothing is raised for them."""
    def eval_reply(
        self, reply: str, signature: Optional[str] = None, max_turns: int = 5
    ) -> Turn:
        """Run a model's reply as the next turn, exactly as the Rust agent
        does: the program is every ``clojure``/``clj``/``lisp``/untagged
        fenced block joined; a reply with none is a failed turn with code
        ``no-code``; a ``(return v)`` (with ``max_turns == 1``, the last
        value) that does not match ``signature`` is a failed
        ``signature-mismatch`` turn."""
    def render_prompt(
        self,
        mission: str,
        compression: bool = True,
        max_turns: int = 5,
        signature: Optional[str] = None,
        system_prompt: Optional[str] = None,
    ) -> list[Message]:
        """The messages the Rust agent (``ptc agent``) would send next for
        this session: the system prompt and, with ``compression``, one
        user message rendering the tools, data, definitions, tool calls,
        output and turns left (else the full history of the turns since
        the prelude). ``signature`` is the shape ``(return v)`` must have."""
    @property
    def turns(self) -> list[Turn]:
        """Every turn so far, oldest first (the prelude's included)."""
    @property
    def tool_names(self) -> list[str]: ...
    @property
    def data_names(self) -> list[str]: ...
    def get(self, name: str) -> Any:
        """The value of the user definition ``name``, or None."""
    def interrupt(self) -> None:
        """Stop the running turn (call it from another thread): the turn
        ends with the ``interrupted`` error."""

def eval(
    source: str, data: Optional[Mapping[str, Any]] = None, timeout_ms: int = 1000
) -> Any:
    """Evaluate ``source`` in a fresh session and return its value; its
    error is raised."""

def extract_program(reply: str) -> Optional[str]:
    """The program the agent would run for a model's reply, or None."""

class Breakdown:
    """Tokens of a prompt by section."""

    @property
    def system(self) -> int: ...
    @property
    def developer(self) -> int: ...
    @property
    def tools_schema(self) -> int:
        """The tool schemas sent with the request."""
    @property
    def messages(self) -> int:
        """Every other message, plus the reply priming."""
    @property
    def total(self) -> int: ...
    def to_dict(self) -> dict[str, int]: ...

class CompactResult:
    """What ``compact`` did."""

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The history to send: the input unchanged, or compacted."""
    @property
    def report(self) -> Optional[dict[str, Any]]:
        """None when nothing was compacted; else ``before``/``after``
        (breakdown dicts), ``pruned``, ``kept``, ``layers``, ``summary``
        (``{"version", "tokens"}`` or None), ``fallbacks`` and ``text``."""
    @property
    def events(self) -> list[dict[str, Any]]:
        """Every event (``compact.token_estimate``,
        ``compact.trigger_decision``, ...), as dicts with an ``event`` key."""
    @property
    def tokens(self) -> Breakdown:
        """Tokens of ``messages``."""
    @property
    def compacted(self) -> bool: ...

class Config:
    """The history layer's configuration, as ``ptc`` reads it."""

    @property
    def model(self) -> Optional[str]: ...
    @property
    def max_context_tokens(self) -> int: ...
    @property
    def policy(self) -> dict[str, Any]:
        """The compaction policy, as ``compact(policy=...)`` accepts it."""
    @property
    def file(self) -> Optional[pathlib.Path]:
        """The file read, if any."""
    def to_dict(self) -> dict[str, Any]: ...

def count_tokens(
    messages: Sequence[Mapping[str, Any]],
    model: str = "gpt-4o",
    tools: Optional[Sequence[Mapping[str, Any]]] = None,
) -> Breakdown:
    """Tokens of a request made of ``messages`` (OpenAI-style dicts:
    ``role``, ``content`` as a string or a list of parts, ``tool_calls``,
    ...) for ``model``, plus ``tools`` (the tool schemas sent with it)."""

def compact(
    messages: Sequence[Mapping[str, Any]],
    model: Optional[str] = None,
    max_context_tokens: Optional[int] = None,
    policy: Optional[Mapping[str, Any]] = None,
    summarizer: Optional[Callable[[SummaryRequest], str]] = None,
    *,
    force: bool = False,
    note: str = "manual",
    state: Optional[str] = None,
    tools: Optional[Sequence[Mapping[str, Any]]] = None,
    config: Optional[Config] = None,
    events: Optional[Union[str, os.PathLike[str]]] = None,
    events_url: Optional[str] = None,
    session_id: Optional[str] = None,
) -> CompactResult:
    """Keep ``messages`` within a token budget (seed 004), as ``ptc
    compact`` does.

    Below the trigger (``trigger_pct`` of ``max_context_tokens``) the
    messages come back unchanged; at or over it (or always, with
    ``force``) the oldest turns and tool exchanges are replaced by one
    ``<COMPACT-SUMMARY vN>`` message, never splitting a tool call from its
    result nor touching system and developer messages, and the result is
    within ``max_context_tokens - hard_cap_buffer`` or ``CompactError`` is
    raised.

    The policy is the defaults, then ``config``'s, then ``policy`` (a dict
    of fields: ``trigger_pct``, ``hard_cap_buffer``, ``keep_recent_turns``,
    ``keep_tool_io_pairs``, ``roles_never_prune``, ``strategy``,
    ``max_summary_tokens``), then ``max_context_tokens``; an unknown or
    out-of-range field raises ``ConfigError`` naming it. ``summarizer`` is
    called with a ``SummaryRequest`` and returns the summary body (raise
    ``SummaryRefused`` to decline, any other exception makes the
    compaction prune only); without one the deterministic digest writes
    it. ``state`` is extra facts for the summarizer. ``events`` (a JSON
    Lines file) and ``events_url`` (an ``/ingest`` collector) receive every
    event as ``ptc --events``/``--events-url`` send them, redacted.
    """

def load_config(path: Optional[Union[str, os.PathLike[str]]] = None) -> Config:
    """Read the history configuration: defaults, then ``path`` (TOML, YAML
    or JSON; ``ptc.toml`` in the working directory when None and it
    exists), then ``COMPACT_*`` environment variables. Raises
    ``ConfigError`` whose ``problems`` name each field path."""
