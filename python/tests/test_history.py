"""The history layer on plain message dicts: counting, compaction (with
invariants checked on random histories), summarizers, events and
configuration."""

import http.server
import json
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ptc_lisp
from ptc_lisp import CompactError, ConfigError, SummaryRefused, compact, count_tokens, load_config


# Room for a summary in a small window (the defaults are for 128k).
SMALL = {"hard_cap_buffer": 200, "max_summary_tokens": 200}


def history(turns=40, words=30):
    msgs = [{"role": "system", "content": "You are a careful coding agent."}]
    for i in range(turns):
        msgs.append({"role": "user", "content": f"Step {i}: look at src/module_{i}.rs " + "please " * words})
        msgs.append({"role": "assistant", "content": f"Module {i} parses the configuration. " * 3})
    return msgs


def test_count_tokens_by_section():
    b = count_tokens([{"role": "user", "content": "hello world"}])
    # "hello world" is 2 tokens in o200k_base, the role "user" 1; 3 framing
    # per message, 3 priming (OpenAI's cookbook formula).
    assert (b.messages, b.system, b.developer, b.tools_schema, b.total) == (9, 0, 0, 0, 9)
    b = count_tokens([{"role": "system", "content": "hello world"}, {"role": "developer", "content": "hi"}])
    # Each message: its content, its role (1 token each here) and 3 framing.
    assert b.system == 6 and b.developer == 5 and b.total == 14
    assert b.to_dict() == {"system": 6, "developer": 5, "tools_schema": 0, "messages": 3, "total": 14}
    schema = [{"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}]
    assert count_tokens([], tools=schema).tools_schema > 5
    cl100k = count_tokens([{"role": "user", "content": "héllo wörld " * 50}], model="gpt-4")
    o200k = count_tokens([{"role": "user", "content": "héllo wörld " * 50}], model="gpt-4o")
    assert cl100k.total != o200k.total


def test_count_tokens_reads_tool_calls_and_rejects_bad_messages():
    call = {"role": "assistant", "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]}
    result = {"role": "tool", "tool_call_id": "c1", "content": "a.txt b.txt"}
    assert count_tokens([call, result]).total > count_tokens([result]).total
    with pytest.raises(ValueError, match=r"messages\[1\]: missing field `role`"):
        count_tokens([{"role": "user", "content": "x"}, {"content": "y"}])
    with pytest.raises(ValueError, match=r"messages\[0\]: unknown variant `robot`"):
        count_tokens([{"role": "robot", "content": "y"}])


def test_content_parts_and_blocks_are_counted_and_kept():
    text_only = count_tokens([{"role": "user", "content": "hello world"}]).total
    low_image = {"type": "image_url", "image_url": {"url": "https://example.com/a.png", "detail": "low"}}
    parts = [{"role": "user", "content": [{"type": "text", "text": "hello world"}, low_image]}]
    # A low-detail image costs 85 tokens whatever its size (OpenAI's formula).
    assert count_tokens(parts).total >= text_only + 85
    # Anthropic blocks: tool_use / tool_result pairs, a message without content.
    msgs = [{"role": "system", "content": "You read files."}, {"role": "user"}]
    for i in range(30):
        msgs.append({"role": "user", "content": f"Step {i}: read file {i} " + "please " * 30})
        msgs.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": f"tu{i}", "name": "read", "input": {"path": f"f{i}.txt"}}]})
        msgs.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"tu{i}", "content": "data " * 40}]})
    below = compact(msgs, max_context_tokens=100_000)
    assert below.messages == msgs and "content" not in below.messages[1]
    out = compact(msgs, max_context_tokens=2_500, policy=SMALL, force=True)
    assert out.compacted
    kept = out.messages
    for i, m in enumerate(kept):
        uses = [b["id"] for b in m.get("content") or [] if isinstance(b, dict) and b.get("type") == "tool_use"]
        if uses:
            results = [b["tool_use_id"] for b in kept[i + 1]["content"] if b.get("type") == "tool_result"]
            assert results == uses
        if m in msgs:
            continue
        assert "COMPACT-SUMMARY" in str(m.get("content")), m


def test_below_the_trigger_nothing_changes():
    msgs = history(turns=2)
    out = compact(msgs, max_context_tokens=100_000)
    assert not out.compacted and out.report is None and out.messages == msgs
    assert [e["event"] for e in out.events] == ["compact.token_estimate", "compact.trigger_decision"]


def test_compaction_keeps_system_and_recent_turns_and_writes_a_summary():
    msgs = history()
    out = compact(msgs, max_context_tokens=2_000, policy={**SMALL, "keep_recent_turns": 2})
    assert out.compacted
    assert out.messages[0] == msgs[0]
    assert out.messages[1]["content"].startswith("<COMPACT-SUMMARY v1>")
    assert out.messages[-4:] == msgs[-4:]
    assert out.tokens.total <= 1_800
    r = out.report
    assert r["before"]["total"] > r["after"]["total"] and r["summary"]["version"] == 1
    assert r["pruned"] == len(msgs) - len(out.messages) + 1
    assert "compact.summary_created" in [e["event"] for e in out.events]
    assert "->" in r["text"]


def test_a_python_summarizer_is_called_and_may_refuse_or_fail():
    requests = []

    def summarize(request):
        requests.append(request)
        return f"Summary of {len(request['messages'])} messages ({request['strategy']})."

    out = compact(history(), max_context_tokens=2_000, policy=SMALL, summarizer=summarize, state="x = 1")
    assert requests and requests[0]["strategy"] == "task_state" and requests[0]["state"] == "x = 1"
    assert requests[0]["messages"][0]["role"] == "user"
    assert out.messages[1]["content"].endswith("(task_state).")

    def refuse(request):
        if request["strategy"] != "brief":
            raise SummaryRefused("not allowed")
        return "Brief summary."

    out = compact(history(), max_context_tokens=2_000, policy=SMALL, summarizer=refuse)
    assert out.messages[1]["content"].endswith("Brief summary.")
    assert any("brief" in f for f in out.report["fallbacks"])

    def broken(request):
        raise ConnectionError("model down")

    out = compact(history(), max_context_tokens=2_000, policy=SMALL, summarizer=broken)
    assert out.compacted and out.report["summary"] is None
    errors = [e for e in out.events if e["event"] == "compact.error"]
    assert errors and "ConnectionError: model down" in json.dumps(errors)


def test_forced_compaction_and_insufficient_budget():
    msgs = history(turns=12)
    out = compact(msgs, max_context_tokens=100_000, force=True, note="user asked",
                  policy={"keep_recent_turns": 2})
    assert out.compacted and len(out.messages) == 1 + 1 + 4
    assert "user asked" in json.dumps(out.events)
    huge = [{"role": "system", "content": "word " * 3000}, {"role": "user", "content": "hi"}]
    with pytest.raises(CompactError) as info:
        compact(huge, max_context_tokens=1_000, policy={"hard_cap_buffer": 100, "max_summary_tokens": 100})
    assert info.value.code == "InsufficientBudget" and "insufficient budget" in str(info.value)


def test_policy_errors_name_the_field():
    with pytest.raises(ConfigError, match="policy.trigger_pct"):
        compact(history(1), policy={"trigger_pct": 2.0})
    with pytest.raises(ConfigError, match="unknown field `keep_recent`"):
        compact(history(1), policy={"keep_recent": 2})
    with pytest.raises(CompactError) as info:
        compact([{"role": "tool", "tool_call_id": "x", "content": "orphan"}], force=True)
    assert info.value.code == "MalformedHistory"


def test_load_config_reads_files_and_names_bad_fields(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    good = tmp_path / "ptc.toml"
    good.write_text('model = "gpt-4"\nmax_context_tokens = 4000\n[policy]\nkeep_recent_turns = 2\n')
    config = load_config(good)
    assert config.model == "gpt-4" and config.max_context_tokens == 4000
    assert config.policy["keep_recent_turns"] == 2 and config.policy["max_context_tokens"] == 4000
    assert str(config.file) == str(good) and config.to_dict()["policy"]["keep_recent_turns"] == 2
    assert load_config().max_context_tokens == 4000  # ./ptc.toml
    out = compact(history(80), config=config)
    assert out.compacted and out.tokens.total <= 4000 - config.policy["hard_cap_buffer"]
    bad = tmp_path / "bad.yaml"
    bad.write_text("policy:\n  trigger_pct: 7\n  keep_recent_turns: -1\n")
    with pytest.raises(ConfigError) as info:
        load_config(bad)
    assert any("policy.keep_recent_turns" in p for p in info.value.problems), info.value.problems
    monkeypatch.setenv("COMPACT_TRIGGER_PCT", "0.5")
    assert load_config(good).policy["trigger_pct"] == 0.5
    with pytest.raises(ConfigError, match="no such file"):
        load_config(tmp_path / "missing.toml")


def test_events_go_to_a_file(tmp_path):
    path = tmp_path / "events.jsonl"
    compact(history(), max_context_tokens=2_000, policy=SMALL, events=path, session_id="s1")
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines and all(line["session_id"] == "s1" for line in lines)
    assert "compact.pruned_messages" in [line["event"] for line in lines]


def test_events_go_to_a_url():
    received = []

    class Ingest(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append((self.path, body))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Ingest)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}"
        compact(history(), max_context_tokens=2_000, policy=SMALL, events_url=url, session_id="s2")
    finally:
        server.shutdown()
    assert received and all(path == "/ingest" for path, _ in received)
    events = [json.loads(line) for _, body in received for line in body.decode().splitlines() if line.strip()]
    assert "compact.trigger_decision" in [e.get("event") for e in events]


# --- invariants on random histories ------------------------------------

words = st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta", "src/a.rs", "42", "error"]),
                 min_size=1, max_size=60).map(" ".join)


@st.composite
def histories(draw):
    msgs = []
    if draw(st.booleans()):
        msgs.append({"role": "system", "content": draw(words)})
    next_id = 0
    for _ in range(draw(st.integers(0, 25))):
        kind = draw(st.sampled_from(["user", "assistant", "tools"]))
        if kind == "tools":
            ids = [f"call_{next_id + i}" for i in range(draw(st.integers(1, 3)))]
            next_id += len(ids)
            calls = [{"id": i, "type": "function", "function": {"name": "grep", "arguments": json.dumps({"q": i})}}
                     for i in ids]
            msgs.append({"role": "assistant", "content": None, "tool_calls": calls})
            # A last group may be left pending (no results yet).
            if draw(st.integers(0, 9)) > 0:
                for i in ids:
                    msgs.append({"role": "tool", "tool_call_id": i, "content": draw(words)})
        else:
            msgs.append({"role": kind, "content": draw(words)})
    return msgs


def tool_pairs_intact(msgs):
    """Every tool result follows the assistant message that called it."""
    open_ids = set()
    for m in msgs:
        if m["role"] == "assistant" and m.get("tool_calls"):
            open_ids = {c["id"] for c in m["tool_calls"]}
        elif m["role"] == "tool":
            if m["tool_call_id"] not in open_ids:
                return False
        else:
            open_ids = set()
    return True


def is_subsequence(kept, original):
    it = iter(original)
    return all(any(k == o for o in it) for k in kept)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(), st.integers(300, 3000), st.integers(1, 4), st.integers(1, 4), st.booleans())
def test_compaction_invariants(msgs, max_tokens, keep_turns, keep_pairs, force):
    policy = {"keep_recent_turns": keep_turns, "keep_tool_io_pairs": keep_pairs,
              "hard_cap_buffer": 100, "max_summary_tokens": 100}
    try:
        out = compact(msgs, max_context_tokens=max_tokens, policy=policy, force=force)
    except CompactError as e:
        assert e.code == "InsufficientBudget"
        return
    budget = max_tokens - 100
    if not out.compacted:
        assert out.messages == msgs
        return
    assert out.tokens.total <= budget
    assert out.tokens.total == count_tokens(out.messages).total
    assert tool_pairs_intact(out.messages)
    system = [m for m in msgs if m["role"] == "system"]
    assert [m for m in out.messages if m["role"] == "system"] == system
    summaries = [m for m in out.messages if str(m.get("content") or "").startswith("<COMPACT-SUMMARY v")]
    assert len(summaries) <= 1
    kept = [m for m in out.messages if m not in summaries]
    assert is_subsequence(kept, msgs)


def test_module_exports_are_documented():
    for name in ptc_lisp.__all__:
        assert getattr(ptc_lisp, name).__doc__, name
