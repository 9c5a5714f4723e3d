#!/usr/bin/env python3
"""Compare two ptc binaries on the ten workloads, interleaved.

Usage: python3 benches/ab.py BEFORE AFTER [--rounds N] [--workloads W1,W4]
       [--data DIR] [--bench-dir ../shared/bench]

Each round runs every workload once with each binary in turn: the
in-process figure is `run_ms` (median of `--repeat 20`), the whole-process
figure the median wall time of five runs. The table gives the median over
rounds and the change, then the geometric means of the changes. Running
the two binaries alternately keeps a shared machine's changes of speed
out of the comparison. Without --data the workloads' data is generated
into a temporary directory (`gen.py`).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from workloads import generate_data, geomean  # noqa: E402


def command(ptc, bench, data, workload):
    args = [ptc, "run", os.path.join(bench, f"{workload}.clj")]
    path = os.path.join(data, f"{workload}.data.json")
    if os.path.exists(path):
        args += ["--data", path]
    return args


def in_process(args):
    out = subprocess.run(
        args + ["--repeat", "20", "--stats=json", "--timeout-ms", "60000"],
        capture_output=True,
        check=True,
    )
    return json.loads(out.stderr.decode().strip().splitlines()[-1])["run_ms"]["median"]


def whole_process(args, runs=5):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(args, capture_output=True, check=True)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--workloads", default=",".join(f"W{i}" for i in range(1, 11)))
    parser.add_argument("--data")
    parser.add_argument("--bench-dir", default=os.path.join("..", "shared", "bench"))
    args = parser.parse_args()

    data = args.data or generate_data(args.bench_dir)
    inside, whole = [], []
    print("| W | in process, before -> after (ms) | change | whole process (ms) | change |")
    print("|---|---|---|---|---|")
    for w in args.workloads.split(","):
        figures = {"before": ([], []), "after": ([], [])}
        for _ in range(args.rounds):
            for name in ("before", "after"):
                cmd = command(getattr(args, name), args.bench_dir, data, w)
                figures[name][0].append(in_process(cmd))
                figures[name][1].append(whole_process(cmd))
        a, b = (statistics.median(figures[n][0]) for n in ("before", "after"))
        wa, wb = (statistics.median(figures[n][1]) for n in ("before", "after"))
        inside.append(b / a)
        whole.append(wb / wa)
        print(
            f"| {w} | {a:.3f} -> {b:.3f} | {(b / a - 1) * 100:+.1f}% "
            f"| {wa:.2f} -> {wb:.2f} | {(wb / wa - 1) * 100:+.1f}% |",
            flush=True,
        )
    print(
        f"\ngeometric mean: in process {(geomean(inside) - 1) * 100:+.1f}%, "
        f"whole process {(geomean(whole) - 1) * 100:+.1f}%"
    )


if __name__ == "__main__":
    main()
