"""Python callables as tools: arguments, results, errors and time limits."""

import threading
import time

import pytest

from ptc_lisp import Keyword, LimitError, Session, Tool


def test_tools_get_keyword_arguments_converted_from_the_program():
    seen = []

    def search(query, limit=None):
        seen.append((query, limit))
        return [{"id": i, "title": f"{query} {i}"} for i in range(limit or 1)]

    s = Session()
    s.register_tool("search", "(query :string, limit :int?) -> [{id :int, title :string}]", search,
                    doc="Search the catalog")
    assert s.tool_names == ["search"]
    assert s.eval('(count (tool/search "lamp" 3))').value == 3
    assert s.eval('(tool/search {:query "desk"})').value == [{"id": 0, "title": "desk 0"}]
    assert s.eval('(tool/search :query "chair" :limit 2)').success
    assert seen == [("lamp", 3), ("desk", None), ("chair", 2)]
    call = s.eval('(tool/search "x" 1)').tool_calls[0]
    assert call.name == "search" and call.args == ["x", 1]
    assert call.result == [{"id": 0, "title": "x 0"}] and call.error is None
    assert call.duration_ms >= 0


def test_hyphenated_keys_name_underscored_parameters():
    s = Session()
    s.register_tool("page", "(max_results :int) -> :int", lambda max_results: max_results * 2)
    assert s.eval("(tool/page {:max-results 4})").value == 8


def test_arguments_are_checked_before_the_call():
    calls = []
    s = Session()
    s.register_tool("double", "(n :int) -> :int", lambda n: calls.append(n) or n * 2)
    t = s.eval('(tool/double "x")')
    assert t.error.code == "tool-error" and "argument `n` expected" in t.error.message
    assert calls == []


def test_results_are_checked_against_the_signature():
    s = Session()
    s.register_tool("count_words", "(text :string) -> :int", lambda text: "many")
    t = s.eval('(tool/count_words "a b")')
    assert t.error.code == "tool-error"
    assert "broke its own signature" in t.error.message
    s.register_tool("untyped", "-> :any", lambda: object())
    t = s.eval("(tool/untyped)")
    assert t.error.code == "tool-error" and "`object`" in t.error.message


def test_an_exception_becomes_the_tool_error_with_type_and_message():
    def lookup(sku):
        raise KeyError(f"no product {sku}")

    s = Session()
    s.register_tool("lookup", "(sku :string) -> :map", lookup)
    t = s.eval('(tool/lookup "A-1")')
    assert t.error.code == "tool-error"
    assert t.error.message == "Tool `lookup` failed: KeyError: 'no product A-1'"
    assert t.tool_calls[0].error == t.error.message
    s.register_tool("silent", "-> :any", lambda: (_ for _ in ()).throw(RuntimeError()))
    assert s.eval("(tool/silent)").error.message == "Tool `silent` failed: RuntimeError"


def test_the_next_turn_sees_a_tool_error_as_data():
    s = Session()
    s.register_tool("flaky", "-> :int", lambda: 1 / 0)
    assert s.eval("(tool/flaky)").error.code == "tool-error"
    t = s.eval("(:message *e)")
    assert t.success and "ZeroDivisionError: division by zero" in t.value


def test_tools_passed_to_the_constructor_and_positional_calls():
    echo = Tool("echo", "-> :any", lambda *args, **kwargs: [list(args), kwargs], doc="Echo")
    s = Session(tools=[echo])
    assert s.eval("(tool/echo 1 :a)").value == [[1, Keyword("a")], {}]
    assert s.eval("(tool/echo {:x 1})").value == [[], {"x": 1}]
    assert repr(echo) == 'Tool("echo", "-> :any")'


def test_bad_tool_definitions_are_rejected():
    s = Session()
    with pytest.raises(ValueError, match="invalid signature"):
        s.register_tool("t", "(a) -> :any", lambda a: a)
    with pytest.raises(ValueError, match="Invalid tool name"):
        s.register_tool("9t", "-> :any", lambda: 1)
    s.register_tool("t", "-> :any", lambda: 1)
    with pytest.raises(ValueError, match="already registered"):
        s.register_tool("t", "-> :any", lambda: 1)


def test_a_tool_that_blocks_past_the_limit_ends_the_turn_with_the_timeout():
    release = threading.Event()
    finished = []

    def stuck():
        try:
            release.wait(30)
        except TimeoutError:
            # Raised in this thread once `wait` returns: the turn is over.
            finished.append("timeout")
            raise
        return 1

    s = Session(timeout_ms=300)
    s.register_tool("stuck", "-> :int", stuck)
    s.register_tool("quick", "-> :int", lambda: 7)
    started = time.monotonic()
    t = s.eval("(tool/stuck)")
    elapsed = time.monotonic() - started
    assert isinstance(t.error, LimitError) and t.error.code == "timeout"
    assert elapsed < 5, elapsed
    # The session goes on with a new tool thread while the old one waits.
    assert s.eval("(tool/quick)").value == 7
    release.set()
    deadline = time.monotonic() + 10
    while not finished and time.monotonic() < deadline:
        time.sleep(0.01)
    assert finished == ["timeout"]


def test_a_tool_looping_in_python_gets_timeout_error_raised_inside_it():
    outcome = []

    def spin():
        try:
            while True:
                pass
        except TimeoutError:
            outcome.append("stopped")
            raise

    s = Session(timeout_ms=200)
    s.register_tool("spin", "-> :int", spin)
    t = s.eval("(tool/spin)")
    assert t.error.code == "timeout"
    deadline = time.monotonic() + 10
    while not outcome and time.monotonic() < deadline:
        time.sleep(0.01)
    assert outcome == ["stopped"]


def test_the_limit_counts_tool_time_across_calls():
    s = Session(timeout_ms=400)
    s.register_tool("nap", "-> :int", lambda: time.sleep(0.05) or 1)
    t = s.eval("(reduce + (map (fn [_] (tool/nap)) (range 100)))")
    assert t.error.code == "timeout"
    assert 3 <= len(t.tool_calls) < 100


def test_tool_call_limit():
    s = Session(max_tool_calls=3)
    s.register_tool("one", "-> :int", lambda: 1)
    t = s.eval("(reduce + (map (fn [_] (tool/one)) (range 5)))")
    assert t.error.code == "tool-call-limit-exceeded"


def test_inline_tools_run_on_the_programs_thread_and_meet_the_deadline_on_return():
    threads = []

    def where():
        threads.append(threading.get_ident())
        return 1

    s = Session(timeout_ms=300)
    s.register_tool("where", "-> :int", where, inline=True)
    s.register_tool("nap", "-> :int", lambda: time.sleep(0.6) or 1, inline=True)
    assert s.eval("(tool/where)").value == 1
    assert threads == [threading.get_ident()]
    started = time.monotonic()
    t = s.eval("(tool/nap)")
    # Not cut short: the call returns after its sleep, then the deadline
    # ends the turn.
    assert time.monotonic() - started >= 0.55
    assert t.error.code == "timeout"
    assert Tool("t", "-> :int", where, inline=True).inline


def test_the_interpreter_exits_cleanly_with_idle_and_abandoned_tool_threads(tmp_path):
    import subprocess
    import sys

    # Neither script imports `threading` itself: a tool thread that did so
    # first became `threading`'s main thread, and the interpreter waited
    # for it at exit (a regression).
    idle = "s.register_tool('quick', '-> :int', lambda: 1)\nassert s.eval('(tool/quick)').value == 1\n"
    abandoned = (
        "s.register_tool('slow', '-> :int', lambda: time.sleep(1.5) or 1)\n"
        "assert s.eval('(tool/slow)').error.code == 'timeout'\n"
    )
    for body in (idle, idle + abandoned, abandoned + idle):
        script = tmp_path / "exit.py"
        script.write_text("import time, ptc_lisp\ns = ptc_lisp.Session(timeout_ms=100)\n" + body + "print('done')\n")
        started = time.monotonic()
        out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert out.stdout == "done\n" and "fatal" not in out.stderr.lower(), out.stderr
        assert time.monotonic() - started < 30
