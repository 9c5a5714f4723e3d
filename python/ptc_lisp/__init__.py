"""PTC-Lisp for Python: run model-written PTC-Lisp programs in-process
against Python tools and data, and keep chat histories within a token
budget.

    >>> import ptc_lisp
    >>> s = ptc_lisp.Session(data={"scores": [7, 9, 4]})
    >>> s.eval("(apply max data/scores)").value
    9

The native module ``ptc_lisp._native`` holds the implementation; its
stub (``_native.pyi``) documents every name exported here.
"""

from ._native import (
    Breakdown as Breakdown,
    CompactError as CompactError,
    CompactResult as CompactResult,
    Config as Config,
    ConfigError as ConfigError,
    EvalError as EvalError,
    Keyword as Keyword,
    LimitError as LimitError,
    Opaque as Opaque,
    ParseError as ParseError,
    PtcError as PtcError,
    Session as Session,
    SummaryRefused as SummaryRefused,
    Tool as Tool,
    ToolCall as ToolCall,
    Turn as Turn,
    __version__ as __version__,
    compact as compact,
    count_tokens as count_tokens,
    eval as eval,
    extract_program as extract_program,
    load_config as load_config,
)
from ._types import Message as Message, SummaryRequest as SummaryRequest

__all__ = [
    "Breakdown",
    "CompactError",
    "CompactResult",
    "Config",
    "ConfigError",
    "EvalError",
    "Keyword",
    "LimitError",
    "Message",
    "Opaque",
    "ParseError",
    "PtcError",
    "Session",
    "SummaryRefused",
    "SummaryRequest",
    "Tool",
    "ToolCall",
    "Turn",
    "compact",
    "count_tokens",
    "eval",
    "extract_program",
    "load_config",
]
