"""The GIL is released while PTC-Lisp runs: sessions in several threads
run at once, and Python threads keep running meanwhile. Timed, with
margins for a loaded machine."""

import threading
import time

from ptc_lisp import Session

# About 0.2-0.5 s of evaluation on a debug build; the time limit is far away.
BUSY = "(loop [i 0 acc 0] (if (< i 300000) (recur (inc i) (+ acc (mod i 7))) acc))"


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def test_python_threads_run_while_a_program_evaluates():
    s = Session(timeout_ms=60_000)
    ticks = []
    done = threading.Event()

    def ticker():
        while not done.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    t = threading.Thread(target=ticker)
    t.start()
    time.sleep(0.02)
    before = len(ticks)
    start = time.perf_counter()
    turn = s.eval(BUSY)
    end = time.perf_counter()
    done.set()
    t.join()
    assert turn.success
    during = [x for x in ticks[before:] if start <= x <= end]
    # Had the GIL been held, the ticker could not have run at all during
    # the evaluation; it ticks about once a millisecond.
    assert end - start > 0.05
    assert len(during) >= 10, (len(during), end - start)


def test_sessions_in_several_threads_run_in_parallel():
    sessions = [Session(timeout_ms=60_000) for _ in range(2)]
    for s in sessions:
        s.eval(BUSY)  # warm up

    def serial():
        for s in sessions:
            s.eval(BUSY)
            s.eval(BUSY)

    def parallel():
        threads = [threading.Thread(target=lambda s=s: (s.eval(BUSY), s.eval(BUSY))) for s in sessions]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    # Two cores: ideally half the serial time, and twice the CPU time of
    # the wall time; held by the GIL, neither could happen. Up to five
    # tries, so that a burst of load elsewhere does not decide.
    seen = []
    for _ in range(5):
        cpu = time.process_time()
        wall = timed(parallel)
        cpu = time.process_time() - cpu
        ratio = wall / timed(serial)
        seen.append((round(ratio, 2), round(cpu / wall, 2)))
        if ratio < 0.8 or cpu / wall > 1.3:
            break
    else:
        raise AssertionError(f"no parallelism seen: (parallel/serial time, cpu/wall) = {seen}")


def test_tools_of_parallel_sessions_each_answer_their_own_session():
    def make(tag):
        s = Session(timeout_ms=60_000, max_tool_calls=10_000)
        s.register_tool("tag", "(i :int) -> :string", lambda i: f"{tag}-{i}")
        return s

    results = {}

    def run(tag):
        s = make(tag)
        results[tag] = s.eval("(mapv (fn [i] (tool/tag i)) (range 500))").value

    threads = [threading.Thread(target=run, args=(tag,)) for tag in "abcd"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for tag in "abcd":
        assert results[tag] == [f"{tag}-{i}" for i in range(500)]
