"""Sessions: evaluation, turns, data, prelude, errors and prompts."""

import json
import re
import subprocess

import pytest

import ptc_lisp
from ptc_lisp import EvalError, Keyword, LimitError, ParseError, PtcError, Session


def test_eval_returns_a_turn_with_value_prints_and_steps():
    s = Session()
    t = s.eval('(println "hi" 1) (println "second\\nline") (+ 1 2)')
    assert t.success and t.value == 3 and t.error is None
    assert t.prints == ["hi 1", "second\nline"]
    assert t.steps > 0 and t.duration_ms >= 0
    assert t.number == 1 and t.program.startswith("(println")
    assert not t.returned and not t.failed


def test_definitions_persist_and_failed_turns_roll_back():
    s = Session()
    assert s.eval("(def x 41) (defn f [n] (inc n))").defined == ["x", "f"]
    assert s.eval("(f x)").value == 42
    bad = s.eval("(def x 0) (undefined-fn)")
    assert not bad.success and bad.defined == []
    assert s.get("x") == 41 and s.get("nope") is None
    assert [t.number for t in s.turns] == [1, 2, 3]


def test_return_and_fail_are_flagged():
    s = Session()
    r = s.eval("(return {:done true})")
    assert r.returned and r.value == {"done": True}
    f = s.eval('(fail "no data")')
    assert f.failed and f.success and f.value == "no data"


def test_data_is_bound_read_only_and_replaced_by_set_data():
    s = Session(data={"orders": [{"id": 1, "total": 30.5}, {"id": 2, "total": 12}], "name": "x"})
    assert s.eval("(count data/orders)").value == 2
    assert s.eval("(:total (first data/orders))").value == 30.5
    s.set_data({"name": "y", "extra": Keyword("k")})
    assert s.eval("[data/name data/extra]").value == ["y", Keyword("k")]
    assert s.data_names == ["orders", "name", "extra"]


def test_data_over_the_collection_limit_names_its_path():
    with pytest.raises(ValueError, match=r"data/xs has 11 items, over the limit of 10"):
        Session(data={"xs": list(range(11))}, max_collection=10)


def test_prelude_defines_and_its_error_raises():
    s = Session(prelude="(defn double [x] (* 2 x))")
    assert s.eval("(double 21)").value == 42
    with pytest.raises(EvalError) as info:
        Session(prelude="(+ 1 :a)")
    assert info.value.code == "type-error"


def test_error_hierarchy_and_attributes():
    s = Session(timeout_ms=200)
    parse = s.eval("(+ 1\n  (* 2")
    assert isinstance(parse.error, ParseError) and isinstance(parse.error, PtcError)
    assert parse.error.code == "parse-error" and parse.error.line is not None
    assert parse.error.column is not None
    ev = s.eval('(+ 1 "2")')
    assert isinstance(ev.error, EvalError) and ev.error.code == "type-error"
    assert ev.error.message == '`+` expected a number, got string "2"'
    und = s.eval("(fitler odd? [1 2])")
    assert und.error.code == "undefined-error" and und.error.hint == "did you mean `filter`?"
    assert (und.error.line, und.error.column) == (1, 2)
    slow = s.eval("(loop [i 0] (recur (inc i)))")
    assert isinstance(slow.error, LimitError) and slow.error.code == "timeout"
    with pytest.raises(LimitError):
        slow.raise_for_error()
    steps = Session(max_steps=1000).eval("(loop [i 0] (if (< i 100000) (recur (inc i)) i))")
    assert isinstance(steps.error, LimitError)
    assert steps.error.code == "step-limit-exceeded"
    depth = Session(max_depth=50).eval("(defn f [n] (if (= n 0) 0 (inc (f (dec n))))) (f 100)")
    assert depth.error.code == "recursion-limit-exceeded"


def test_module_eval_raises_and_returns():
    assert ptc_lisp.eval("(->> (range 10) (filter odd?) (map #(* % %)) (reduce +))") == 165
    assert ptc_lisp.eval("(count data/xs)", data={"xs": [1, 2]}) == 2
    with pytest.raises(EvalError):
        ptc_lisp.eval("(/ 1 0)")


def test_interrupt_from_another_thread_stops_the_turn():
    import threading

    s = Session(timeout_ms=30_000)
    timer = threading.Timer(0.3, s.interrupt)
    timer.start()
    t = s.eval("(loop [i 0] (recur (inc i)))")
    assert t.error.code == "interrupted" and isinstance(t.error, LimitError)
    assert s.eval("(+ 1 1)").value == 2


def test_a_session_runs_one_turn_at_a_time():
    s = Session(timeout_ms=5_000)

    def reenter() -> int:
        return s.eval("1").value

    s.register_tool("reenter", "-> :int", reenter)
    t = s.eval("(tool/reenter)")
    assert t.error.code == "tool-error"
    assert "session is busy" in t.error.message


def test_extract_program_and_eval_reply_follow_the_agent():
    assert ptc_lisp.extract_program("no code here") is None
    assert ptc_lisp.extract_program("```clojure\n(+ 1 2)\n```") == "(+ 1 2)"
    s = Session()
    t = s.eval_reply("Let me think.")
    assert t.error.code == "no-code" and t.program.startswith(";; Let me think")
    bad = s.eval_reply("```clojure\n(return {:n \"x\"})\n```", signature="{n :int}")
    assert bad.error.code == "signature-mismatch"
    ok = s.eval_reply("```clojure\n(return {:n 3})\n```", signature="{n :int}")
    assert ok.returned and ok.value == {"n": 3}
    single = Session().eval_reply("```clojure\n\"x\"\n```", signature=":int", max_turns=1)
    assert single.error.code == "signature-mismatch"


def _ptc_prompt(ptc_bin, tmp_path, mission, compression, data, extra=()):
    data_file = tmp_path / "data.json"
    data_file.write_text(json.dumps(data))
    args = [ptc_bin, "prompt", "--mission", mission, "--data", str(data_file), *extra]
    if compression:
        args.append("--compression")
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    # `=== role (N tokens) ===` lines, each followed by its content and a
    # blank line; a last `=== N message(s), ... ===` line.
    header = re.compile(r"^=== (system|user|assistant) \(\d+ tokens\) ===$", re.M)
    parts = header.split(out)
    messages = []
    for role, body in zip(parts[1::2], parts[2::2]):
        body = re.sub(r"\n*=== \d+ message\(s\), .*===\n*$", "", body)
        messages.append({"role": role, "content": body.strip("\n")})
    return messages


@pytest.mark.parametrize("compression", [True, False])
def test_render_prompt_is_what_the_rust_agent_sends(ptc_bin, tmp_path, compression):
    data = {"orders": [{"id": 1, "total": 30}], "region": "EU"}
    s = Session(data=data)
    mine = s.render_prompt("Sum the orders", compression=compression)
    theirs = _ptc_prompt(ptc_bin, tmp_path, "Sum the orders", compression, data)
    assert [m["role"] for m in mine] == [m["role"] for m in theirs]
    for a, b in zip(mine, theirs):
        assert a["content"].rstrip() == b["content"]
    signed = s.render_prompt("Sum", compression=compression, signature="{total :int}", max_turns=3)
    theirs = _ptc_prompt(
        ptc_bin, tmp_path, "Sum", compression, data, ["--signature", "{total :int}", "--max-turns", "3"]
    )
    assert [m["content"].rstrip() for m in signed] == [m["content"] for m in theirs]


def test_render_prompt_shows_the_turns_since_the_prelude():
    s = Session(prelude="(def secret 1)")
    s.eval('(def total 42) (println "total" total)')
    system, user = s.render_prompt("Find the total")
    assert system["role"] == "system" and "PTC-Lisp" in system["content"]
    assert "Find the total" in user["content"] and "total 42" in user["content"]
    assert "Turns left: 4" in user["content"]
    full = s.render_prompt("Find the total", compression=False)
    assert [m["role"] for m in full] == ["system", "user", "assistant", "user"]
    assert "(def total 42)" in full[2]["content"] and "(def secret 1)" not in full[2]["content"]
    assert s.render_prompt("x", system_prompt="You are terse.")[0]["content"] == "You are terse."


def test_the_memory_limit_holds():
    s = Session(max_memory_bytes=20_000_000, max_collection=100_000_000, timeout_ms=10_000)
    t = s.eval("(count (vec (range 3000000)))")
    assert isinstance(t.error, LimitError) and t.error.code == "memory-exceeded", t.error
    assert Session(max_collection=100_000_000, timeout_ms=10_000).eval("(count (vec (range 3000000)))").value == 3000000
