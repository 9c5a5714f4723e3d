#!/usr/bin/env python3
"""Benchmarks of the Python package against the Rust figures
(BENCHMARKS.md, "Python package"). Needs a release build of the
extension and tiktoken (python/requirements-bench.txt):

    maturin build --release -m python/Cargo.toml -o target/py-wheels
    python3 -m venv target/py-bench
    target/py-bench/bin/pip install -r python/requirements-bench.txt target/py-wheels/ptc_lisp-*.whl
    target/py-bench/bin/python python/benches/bench.py [--bench-dir ../shared/bench]

It prints:
- the ten workloads through `Session(data=...)` and `session.eval`: the
  median of `--repeat` evaluations of each program in one session (parse,
  analysis and evaluation, as `ptc run --stats --repeat` measures in
  process), the same with the result converted to Python, and the
  one-off conversion of the data;
- the overhead of a Python tool call: a program calling an identity tool
  in a loop, minus the same loop without the call, minus the Python
  function called from Python;
- `count_tokens` and `compact` on the 400-message, ~128k-token history
  of benches/history.rs, and tiktoken counting the same messages.

Every figure is the median of `--rounds` rounds.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import ptc_lisp


def median_ms(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def workloads(bench_dir, repeat):
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, os.path.join(bench_dir, "gen.py"), tmp], check=True,
                       stdout=subprocess.DEVNULL)
        for n in range(1, 11):
            name = f"W{n}"
            # gen.py writes W10.clj too; the others are in the bench folder.
            generated = os.path.join(tmp, f"{name}.clj")
            path = generated if os.path.exists(generated) else os.path.join(bench_dir, f"{name}.clj")
            with open(path) as f:
                program = f.read()
            with open(os.path.join(tmp, f"{name}.data.json")) as f:
                data = json.load(f)
            start = time.perf_counter()
            session = ptc_lisp.Session(data=data, timeout_ms=600_000, max_steps=10**12)
            convert_ms = (time.perf_counter() - start) * 1000
            first = session.eval(program)
            first.raise_for_error()
            eval_ms = median_ms(lambda: session.eval(program), repeat)
            value_ms = median_ms(lambda: session.eval(program).value, repeat)
            out[name] = (eval_ms, value_ms, convert_ms)
    return out


def tool_overhead(calls, inline):
    def ident(x):
        return x

    session = ptc_lisp.Session(timeout_ms=600_000, max_tool_calls=10**9, max_steps=10**12)
    session.register_tool("f", "(x :int) -> :int", ident, inline=inline)
    with_call = f"(loop [i 0 acc 0] (if (< i {calls}) (recur (inc i) (+ acc (tool/f i))) acc))"
    without = f"(loop [i 0 acc 0] (if (< i {calls}) (recur (inc i) (+ acc i)) acc))"
    session.eval(with_call).raise_for_error()
    t_with = median_ms(lambda: session.eval(with_call), 5) / calls * 1000
    t_without = median_ms(lambda: session.eval(without), 5) / calls * 1000

    def python_loop():
        acc = 0
        for i in range(calls):
            acc += ident(i)

    t_python = median_ms(python_loop, 5) / calls * 1000
    return t_with, t_without, t_python


def history_128k():
    """The history of benches/history.rs, as message dicts."""
    h = [{"role": "system", "content": "You are a coding agent for the acme/api repository. " * 20}]
    files = ["src/server.rs", "src/db/pool.rs", "tests/users.rs", "Cargo.toml"]
    i = 0
    while len(h) < 400:
        f = files[i % len(files)]
        h.append({"role": "user", "content": f"Step {i}: look at {f} for issue #{i}. "
                  + "The handler returns the wrong status code when the pool is exhausted. " * 20})
        call_id = f"call_{i}"
        h.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": "read_file", "arguments": json.dumps({"path": f}, separators=(",", ":"))}}]})
        h.append({"role": "tool", "tool_call_id": call_id,
                  "content": f"fn handler_{i}(req: Request) -> Response {{ pool.get()?.query(&req) }}\n" * 25})
        h.append({"role": "assistant", "content": f"Issue #{i}: "
                  + "the pool error must map to 503, not 500, and the retry belongs in the caller. " * 24})
        i += 1
    return h[:400]


def tiktoken_encoding():
    """o200k_base for tiktoken, from the file tiktoken-rs ships (no network)."""
    import glob
    import hashlib

    import tiktoken
    from tiktoken_ext import openai_public

    url = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
    cache = os.path.join(tempfile.gettempdir(), "ptc-tiktoken-cache")
    os.makedirs(cache, exist_ok=True)
    os.environ["TIKTOKEN_CACHE_DIR"] = cache
    target = os.path.join(cache, hashlib.sha1(url.encode()).hexdigest())
    if not os.path.exists(target):
        sources = glob.glob(os.path.expanduser("~/.cargo/registry/src/*/tiktoken-rs-*/assets/o200k_base.tiktoken"))
        if not sources:
            sys.exit("o200k_base.tiktoken not found (build the crate once: tiktoken-rs ships it)")
        with open(sources[0], "rb") as src, open(target, "wb") as dst:
            dst.write(src.read())
    return tiktoken.Encoding(**openai_public.o200k_base())


def tiktoken_count(enc, messages):
    """Chat-format tokens as the Rust counter counts them: content, tool
    calls as JSON, 3 per message, 3 priming."""
    total = 3
    for m in messages:
        total += 3
        if m.get("content"):
            total += len(enc.encode(m["content"]))
        if m.get("tool_call_id"):
            total += len(enc.encode(m["tool_call_id"]))
        for call in m.get("tool_calls") or []:
            total += len(enc.encode(json.dumps(call, separators=(",", ":"))))
    return total


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bench-dir", default=os.path.join(os.path.dirname(__file__), "../../../shared/bench"))
    parser.add_argument("--repeat", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=200_000)
    args = parser.parse_args()

    rounds = [workloads(args.bench_dir, args.repeat) for _ in range(args.rounds)]
    print("| W | eval (ms) | eval + value to Python (ms) | data to Session (ms) |")
    print("|---|---|---|---|")
    for name in rounds[0]:
        figures = [statistics.median(r[name][k] for r in rounds) for k in range(3)]
        print(f"| {name} | {figures[0]:.2f} | {figures[1]:.2f} | {figures[2]:.1f} |")

    print()
    for inline in (False, True):
        try:
            overhead = [tool_overhead(args.calls, inline) for _ in range(args.rounds)]
        except TypeError as e:
            print(f"tool call (inline): not supported by this build ({e})")
            continue
        t_with, t_without, t_python = (statistics.median(o[k] for o in overhead) for k in range(3))
        print(f"tool call ({'inline' if inline else 'tool thread'}): {t_with:.2f} us per loop step with the call, "
              f"{t_without:.3f} without, {t_python:.3f} us the Python function called from Python; "
              f"overhead {t_with - t_without - t_python:.2f} us per call")

    h = history_128k()
    b = ptc_lisp.count_tokens(h)
    enc = tiktoken_encoding()
    assert tiktoken_count(enc, h) == b.total, (tiktoken_count(enc, h), b.total)
    count_ms = statistics.median(median_ms(lambda: ptc_lisp.count_tokens(h), 20) for _ in range(args.rounds))
    tik_ms = statistics.median(median_ms(lambda: tiktoken_count(enc, h), 20) for _ in range(args.rounds))
    compact_ms = statistics.median(
        median_ms(lambda: ptc_lisp.compact(h, force=True, note="bench"), 20) for _ in range(args.rounds))
    preflight_ms = statistics.median(
        median_ms(lambda: ptc_lisp.compact(h, max_context_tokens=200_000), 20) for _ in range(args.rounds))
    print(f"\nhistory: {len(h)} messages, {b.total} tokens (tiktoken agrees)")
    print(f"count_tokens {count_ms:.2f} ms, tiktoken {tik_ms:.2f} ms, "
          f"compact (forced, digest) {compact_ms:.2f} ms, compact below the trigger {preflight_ms:.2f} ms")


if __name__ == "__main__":
    main()
