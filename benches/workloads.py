#!/usr/bin/env python3
"""Whole-process timings of the ten benchmark workloads (W1-W10).

Generates the workloads' data with their generator, then runs
`ptc run Wn.clj --data Wn.data.json` RUNS times per workload and prints a
Markdown table of medians: the whole run, and the same process with an
empty program (`nil`), whose difference from a run on an empty object is
the cost of loading the data (reported per MB). With --baseline, a second
binary is timed alike and the ratio is shown.

    python3 benches/workloads.py [--bench-dir ../shared/bench] \
        [--ptc target/release/ptc] [--baseline OTHER_PTC] [--runs 30]

The workloads (programs, generator, expected results) live outside this
repository, in the project's shared benchmark folder.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time


def median_ms(cmd, runs):
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append(time.perf_counter() - started)
        if done.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{done.stderr.decode()}")
    return statistics.median(times) * 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench-dir", default=os.path.join("..", "shared", "bench"))
    parser.add_argument("--ptc", default=os.path.join("target", "release", "ptc"))
    parser.add_argument("--baseline")
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()

    data = tempfile.mkdtemp(prefix="ptc-bench-")
    print(f"generating data into {data} ...", file=sys.stderr)
    subprocess.run(
        [sys.executable, os.path.join(args.bench_dir, "gen.py"), data],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    nil = os.path.join(data, "nil.clj")
    empty = os.path.join(data, "empty.json")
    with open(nil, "w") as f:
        f.write("nil")
    with open(empty, "w") as f:
        f.write("{}")

    binaries = [("ours", args.ptc)] + ([("baseline", args.baseline)] if args.baseline else [])
    header = "| W | data (KB) |"
    rule = "|---|---|"
    for name, _ in binaries:
        header += f" {name}: run (ms) | {name}: load (ms/MB) |"
        rule += "---|---|"
    if args.baseline:
        header += " run ratio |"
        rule += "---|"
    print(header)
    print(rule)
    start = {name: median_ms([b, "run", nil, "--data", empty], args.runs) for name, b in binaries}
    for w in range(1, 11):
        program = os.path.join(args.bench_dir, f"W{w}.clj")
        if w == 10:
            program = os.path.join(data, "W10.clj")
        json = os.path.join(data, f"W{w}.data.json")
        size = os.path.getsize(json)
        row = f"| W{w} | {size / 1000:.0f} |"
        runs = {}
        print(f"W{w} ...", file=sys.stderr)
        for name, b in binaries:
            run = median_ms([b, "run", program, "--data", json, "--timeout-ms", "60000"], args.runs)
            runs[name] = run
            if size > 100_000:
                load = median_ms([b, "run", nil, "--data", json], args.runs) - start[name]
                per_mb = f"{load / (size / 1e6):.1f}"
            else:
                per_mb = "-"
            row += f" {run:.1f} | {per_mb} |"
        if args.baseline:
            row += f" {runs['ours'] / runs['baseline']:.2f} |"
        print(row)
    for name, _ in binaries:
        print(f"\n{name}: start-up with an empty data object {start[name]:.2f} ms", file=sys.stderr)


if __name__ == "__main__":
    main()
