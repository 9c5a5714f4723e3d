"""The cost of one Python tool call, on top of the Python function itself.

    python tool_call.py cpu [--calls N] [--rounds R]
        CPU time (time.process_time) per call: a PTC-Lisp loop calling an
        identity tool N times, minus the same loop without the call, minus
        the identity function called N times from a Python loop the way a
        tool is called (a keyword argument). Median of R rounds. The tool
        thread's figure counts both threads' CPU (each side polls briefly
        for the other), so it is an upper bound.

    valgrind --tool=callgrind python tool_call.py PART [--calls N]
        One part per process, for instruction counts (load-independent):
        `with` (the loop calling the tool), `without` (the loop alone),
        `py` (the function called from Python), `py0` (the Python loop
        alone). Instructions per call of overhead:
        ((with - without) - (py - py0)) / N.
"""

import argparse
import statistics
import sys
import time

import ptc_lisp


def ident(x):
    return x


def programs(calls):
    with_call = f"(loop [i 0 acc 0] (if (< i {calls}) (recur (inc i) (+ acc (tool/f i))) acc))"
    without = f"(loop [i 0 acc 0] (if (< i {calls}) (recur (inc i) (+ acc i)) acc))"
    return with_call, without


def session(inline):
    s = ptc_lisp.Session(timeout_ms=600_000, max_tool_calls=10**9, max_steps=10**12)
    s.register_tool("f", "(x :int) -> :int", ident, inline=inline)
    return s


def py_loop(calls):
    acc = 0
    for i in range(calls):
        acc += ident(x=i)
    return acc


def py_loop0(calls):
    acc = 0
    for i in range(calls):
        acc += i
    return acc


def cpu(f):
    start = time.process_time()
    f()
    return time.process_time() - start


def run_cpu(calls, rounds):
    with_call, without = programs(calls)
    for inline in (True, False):
        s = session(inline)
        s.eval(with_call).raise_for_error()
        t_with, t_without, t_py, t_py0 = [], [], [], []
        for _ in range(rounds):
            t_with.append(cpu(lambda: s.eval(with_call)))
            t_without.append(cpu(lambda: s.eval(without)))
            t_py.append(cpu(lambda: py_loop(calls)))
            t_py0.append(cpu(lambda: py_loop0(calls)))
        us = [statistics.median(t) / calls * 1e6 for t in (t_with, t_without, t_py, t_py0)]
        overhead = us[0] - us[1] - (us[2] - us[3])
        print(
            f"{'inline' if inline else 'tool thread'}: {us[0]:.3f} us per loop step with the call, "
            f"{us[1]:.3f} without; the function from Python {us[2] - us[3]:.3f} us; "
            f"overhead {overhead:.3f} us per call (CPU time, median of {rounds})"
        )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("part", choices=["cpu", "with", "without", "py", "py0"])
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--thread", action="store_true", help="the tool thread, not inline")
    args = parser.parse_args()
    if args.part == "cpu":
        run_cpu(args.calls, args.rounds)
        return
    s = session(not args.thread)
    with_call, without = programs(args.calls)
    if args.part == "with":
        s.eval(with_call).raise_for_error()
    elif args.part == "without":
        s.eval(without).raise_for_error()
    elif args.part == "py":
        py_loop(args.calls)
    else:
        py_loop0(args.calls)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
