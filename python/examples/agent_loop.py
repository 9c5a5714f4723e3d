"""A complete agent loop with ptc_lisp: the model writes PTC-Lisp, the
program runs in-process against Python tools and data, and the history is
compacted before every model call.

Offline, with a scripted fake model (no network, no key):

    python python/examples/agent_loop.py --offline

Against any OpenAI-compatible endpoint (the `openai` package; the key from
OPENAI_API_KEY):

    python python/examples/agent_loop.py --model gpt-4o-mini
    python python/examples/agent_loop.py --model llama3.1 --base-url http://localhost:11434/v1

Each turn: render the prompt exactly as `ptc agent` would
(`Session.render_prompt`), keep it within the context window
(`ptc_lisp.compact`), ask the model, and run its reply as the next turn
(`Session.eval_reply`: the program is extracted from its code blocks, a
`(return v)` is checked against the signature). The loop ends at
`(return v)`, `(fail reason)` or the last turn.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable, Dict, List, Optional, Sequence

import ptc_lisp

# A chat model: messages in, the reply's text out.
Model = Callable[[List[Dict[str, Any]]], str]

CATALOG: List[Dict[str, Any]] = [
    {"sku": "L-100", "name": "Desk lamp", "category": "lighting"},
    {"sku": "L-200", "name": "Floor lamp", "category": "lighting"},
    {"sku": "C-300", "name": "Office chair", "category": "seating"},
]
PRICES = {"L-100": 2900, "L-200": 8900, "C-300": 15900}


def search_products(query: str, limit: Optional[int] = None) -> List[Dict[str, Any]]:
    """Products whose name contains `query` (case-insensitive)."""
    hits = [p for p in CATALOG if query.lower() in p["name"].lower()]
    return hits[: limit or len(hits)]


def price_cents(sku: str) -> int:
    """The current price of a product, in cents."""
    if sku not in PRICES:
        raise KeyError(f"unknown sku {sku}")
    return PRICES[sku]


def build_session() -> ptc_lisp.Session:
    session = ptc_lisp.Session(
        data={"budget_cents": 10_000, "customer": {"name": "Ada", "tier": "gold"}},
        timeout_ms=5_000,
    )
    session.register_tool(
        "search_products",
        "(query :string, limit :int?) -> [{sku :string, name :string, category :string}]",
        search_products,
        doc="Products whose name contains the query",
    )
    session.register_tool("price_cents", "(sku :string) -> :int", price_cents, doc="Price in cents")
    return session


def openai_model(model: str, base_url: Optional[str]) -> Model:
    """A model behind any OpenAI-compatible chat completions endpoint."""
    from openai import OpenAI

    client = OpenAI(base_url=base_url)

    def complete(messages: List[Dict[str, Any]]) -> str:
        response = client.chat.completions.create(
            model=model,
            messages=messages,  # type: ignore[arg-type]
            temperature=0,
        )
        return response.choices[0].message.content or ""

    return complete


def scripted_model(replies: Sequence[str]) -> Model:
    """A fake model that answers with `replies` in order, for offline runs."""
    pending = list(replies)

    def complete(messages: List[Dict[str, Any]]) -> str:
        assert messages[0]["role"] == "system" and "PTC-Lisp" in messages[0]["content"]
        return pending.pop(0) if pending else "I have nothing more to add."

    return complete


SCRIPT = [
    "Let me look at the lamps first.\n```clojure\n"
    '(def lamps (tool/search_products "lamp"))\n'
    "(println (count lamps) \"lamps:\" (mapv :sku lamps))\n```",
    "Now the prices, against the budget.\n```clojure\n"
    "(def priced (mapv #(assoc % :price (tool/price_cents (:sku %))) lamps))\n"
    "(def affordable (filterv #(<= (:price %) data/budget_cents) priced))\n"
    "(println \"affordable:\" (mapv :name affordable))\n```",
    "```clojure\n"
    "(return {:customer (:name data/customer)\n"
    "         :choices (mapv #(select-keys % [:sku :price]) affordable)})\n```",
]

SIGNATURE = "{customer :string, choices [{sku :string, price :int}]}"


def for_the_model(messages: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The messages as a provider takes them (our `meta` annotations removed)."""
    return [{k: v for k, v in m.items() if k != "meta"} for m in messages]


def run_agent(
    mission: str,
    session: ptc_lisp.Session,
    model: Model,
    *,
    model_name: str = "gpt-4o",
    max_turns: int = 5,
    signature: Optional[str] = SIGNATURE,
    max_context_tokens: int = 16_000,
    compression: bool = False,
    log: Callable[[str], None] = print,
) -> Any:
    """Run `mission` to its end and return the value the model returned."""
    for number in range(1, max_turns + 1):
        prompt: List[Dict[str, Any]] = [
            dict(m) for m in session.render_prompt(
                mission, compression=compression, max_turns=max_turns, signature=signature
            )
        ]
        # The mission (the first user message) is never pruned.
        prompt[1]["meta"] = {"protected": True}
        kept = ptc_lisp.compact(
            prompt,
            model=model_name,
            max_context_tokens=max_context_tokens,
            policy={
                "keep_recent_turns": 1,
                "hard_cap_buffer": min(1_000, max_context_tokens // 10),
                "max_summary_tokens": min(500, max_context_tokens // 10),
            },
        )
        if kept.report is not None:
            log(f"[turn {number}] compacted: {kept.report['text']}")
        reply = model(for_the_model(kept.messages))
        turn = session.eval_reply(reply, signature=signature, max_turns=max_turns)
        log(f"[turn {number}] {kept.tokens.total} prompt tokens; program:\n{turn.program}")
        for line in turn.prints:
            log(f"  printed: {line}")
        if turn.error is not None:
            log(f"  error ({turn.error.code}): {turn.error.message}")
        elif turn.returned:
            return turn.value
        elif turn.failed:
            raise RuntimeError(f"the model gave up: {turn.value}")
    raise RuntimeError(f"no answer within {max_turns} turns")


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--offline", action="store_true", help="use a scripted fake model")
    parser.add_argument("--model", default="gpt-4o-mini", help="the model name at the endpoint")
    parser.add_argument("--base-url", default=None, help="an OpenAI-compatible endpoint")
    parser.add_argument("--max-turns", type=int, default=5)
    parser.add_argument("--compression", action="store_true", help="render the compressed prompt")
    parser.add_argument("--max-context-tokens", type=int, default=16_000, help="the model's context window")
    args = parser.parse_args(argv)
    mission = "Which lamps fit the customer's budget? Return the customer's name and each choice's sku and price."
    model = scripted_model(SCRIPT) if args.offline else openai_model(args.model, args.base_url)
    answer = run_agent(
        mission,
        build_session(),
        model,
        model_name=args.model,
        max_turns=args.max_turns,
        compression=args.compression,
        max_context_tokens=args.max_context_tokens,
    )
    print(json.dumps(answer, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
