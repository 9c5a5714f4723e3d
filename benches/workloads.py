#!/usr/bin/env python3
"""The ten benchmark workloads (W1-W10) against the peer's figures.

Generates the workloads' data with their generator, then for each
workload measures, with the release binary:

- in process: `ptc run Wn.clj --data Wn.data.json --stats=json --repeat R`,
  the median of the R repetitions' parse + analysis + evaluation
  (`run_ms`), warm, as the peer's "run" figure is (warm, and including
  parsing);
- whole process: the median wall time of RUNS runs of
  `ptc run Wn.clj --data Wn.data.json`;
- loading: the median "read data" phase (`--stats`: reading the file and
  building its values, in the real process, so first-touch page faults
  included) of RUNS runs of an empty program on the data file, minus the
  same on `{}`, per MB; the anonymous memory reading the data added
  (`data_memory_bytes` of `--stats`: the values, the allocator's overhead
  and the reading's temporaries, not the pages of the program's code), per
  byte of the file; and the peak resident memory of that program over the
  same on `{}`, per byte of the file (code pages included: about 0.6 MB of
  the JSON reader's code, which weighs on the small files).

Each binary is measured as a copy in the temporary directory of the data
(removed at the end), which starts as the binary does once its pages
have been read back from disk: the file a linker has just written
starts about 15% slower (18 more page faults a start on
this host; BENCHMARKS.md, eighteenth round) until its pages leave the
page cache, which would weigh on the whole-process figures of a
benchmark run right after a build.

With --rounds K (default 3) all of it is measured K times over, one
workload after another in each round, and each figure is the median of
its K round figures: a burst of load from elsewhere on a shared machine
then spoils one round's figure instead of a workload's only one.

It prints the Markdown tables of BENCHMARKS.md: ours against the peer
(PEER.md: warm in-process run; JSON decode + run for the whole process),
with geometric means of the ratios. With --baseline, a second binary's
in-process and whole-process medians are shown beside ours, and its
geometric means below ours. The last line also gives the start of a
process that does nothing (`true`, a small C program), measured the same
way: the floor of every whole-process figure on the machine at hand.

    python3 benches/workloads.py [--bench-dir ../shared/bench] \
        [--ptc target/release/ptc] [--baseline OTHER_PTC] [--runs 15] [--repeat 30] \
        [--rounds 3]

The workloads (programs, generator, expected results, the peer's figures)
live outside this repository, in the project's shared benchmark folder.
"""

import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def whole_ms(cmd, runs):
    """Median wall time of `runs` runs of `cmd`, in ms."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append(time.perf_counter() - started)
        if done.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{done.stderr.decode()}")
    return statistics.median(times) * 1000


def read_data_ms(cmd, runs):
    """Median `read_data` phase of `runs` runs of `cmd`, in ms."""
    return statistics.median(stats(cmd)["phases_ms"]["read_data"] for _ in range(runs))


def stats(cmd):
    """The `--stats=json` object a run prints last on stderr."""
    done = subprocess.run(cmd + ["--stats=json"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{done.stderr.decode()}")
    return json.loads(done.stderr.decode().strip().splitlines()[-1])


def peer_figures(peer_md):
    """{W: (run_ms, decode_ms)} from PEER.md's two tables."""
    runs, decodes = {}, {}
    with open(peer_md) as f:
        for line in f:
            m = re.match(r"\| W(\d+) \| [^|]+ \| \*\*([\d.]+)\*\*", line)
            if m:
                runs[int(m.group(1))] = float(m.group(2))
                continue
            m = re.match(r"\| W(\d+) \| (<?[\d.]+) \|", line)
            if m and int(m.group(1)) not in decodes:
                text = m.group(2)
                decodes[int(m.group(1))] = 0.0 if text.startswith("<") else float(text)
    return {w: (runs[w], decodes.get(w, 0.0)) for w in runs}


def generate_data(bench_dir):
    """Generate the workloads' data into a new temporary directory."""
    data = tempfile.mkdtemp(prefix="ptc-bench-")
    print(f"generating data into {data} ...", file=sys.stderr)
    subprocess.run(
        [sys.executable, os.path.join(bench_dir, "gen.py"), data],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return data


def measured_copy(binary, directory, name):
    """A copy of `binary` in `directory`, the one measured (see the module's text)."""
    copy = os.path.join(directory, f"ptc-{name}")
    shutil.copy2(binary, copy)
    return copy


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench-dir", default=os.path.join("..", "shared", "bench"))
    parser.add_argument("--ptc", default=os.path.join("target", "release", "ptc"))
    parser.add_argument("--baseline")
    parser.add_argument("--runs", type=int, default=15, help="whole-process runs per figure")
    parser.add_argument("--repeat", type=int, default=30, help="in-process evaluations")
    parser.add_argument("--rounds", type=int, default=3, help="measurements of each figure")
    args = parser.parse_args()

    peer = peer_figures(os.path.join(args.bench_dir, "PEER.md"))
    data = generate_data(args.bench_dir)
    try:
        measure_and_print(args, peer, data)
    finally:
        # The data (about 5 MB) and the binaries' copies (tens of MB each).
        shutil.rmtree(data, ignore_errors=True)


def measure_and_print(args, peer, data):
    """Measure every round in `data` (the workloads' data) and print the tables."""
    nil = os.path.join(data, "nil.clj")
    empty = os.path.join(data, "empty.json")
    with open(nil, "w") as f:
        f.write("nil")
    with open(empty, "w") as f:
        f.write("{}")

    named = [("ours", args.ptc)] + ([("baseline", args.baseline)] if args.baseline else [])
    binaries = [(name, measured_copy(path, data, name)) for name, path in named]
    rounds = [measure(args, binaries, data, nil, empty, r) for r in range(args.rounds)]
    # Each binary's start-up, and that of `true`.
    start = {key: statistics.median(r[0][key] for r in rounds) for key in rounds[0][0]}
    rows = [median_row([r[1][i] for r in rounds]) for i in range(len(rounds[0][1]))]
    print_tables(args, peer, start, rows)


def median_row(rows):
    """The figure-by-figure median of one workload's rows of each round."""
    out = {}
    for key, value in rows[0].items():
        if isinstance(value, dict):
            out[key] = median_row([r[key] for r in rows])
        elif key in ("w", "size"):
            out[key] = value
        else:
            out[key] = statistics.median(r[key] for r in rows)
    return out


def measure(args, binaries, data, nil, empty, round_index):
    """One round: the start-up figure per binary and a row per workload."""
    start = {name: whole_ms([b, "run", nil, "--data", empty], args.runs) for name, b in binaries}
    start["true"] = whole_ms([shutil.which("true") or "/bin/true"], args.runs)
    ours = dict(binaries)["ours"]
    # The empty program on `{}`: what loading is measured against.
    empty_run = [ours, "run", nil, "--data", empty]
    empty_read = read_data_ms(empty_run, args.runs)
    empty_rss = stats(empty_run)["peak_rss_bytes"]
    rows = []
    for w in range(1, 11):
        print(f"round {round_index + 1}/{args.rounds}: W{w} ...", file=sys.stderr)
        program = os.path.join(args.bench_dir, f"W{w}.clj")
        if not os.path.exists(program):
            program = os.path.join(data, f"W{w}.clj")
        data_file = os.path.join(data, f"W{w}.data.json")
        size = os.path.getsize(data_file)
        run = [program, "--data", data_file, "--timeout-ms", "60000"]
        row = {"w": w, "size": size}
        for name, b in binaries:
            s = stats([b, "run"] + run + ["--repeat", str(args.repeat)])
            phases = s["phases_ms"]
            # A binary from before `run_ms` parsed and analyzed once, cold.
            cold = s["eval_ms"]["median"] + phases["parse"] + phases["analyze"]
            row[name] = {
                "in": s["run_ms"]["median"] if "run_ms" in s else cold,
                "whole": whole_ms([b, "run"] + run, args.runs),
            }
        if size > 100_000:
            loaded = [ours, "run", nil, "--data", data_file]
            row["load_per_mb"] = (read_data_ms(loaded, args.runs) - empty_read) / (size / 1e6)
            loaded_stats = stats(loaded)
            row["rss_ratio"] = (loaded_stats["peak_rss_bytes"] - empty_rss) / size
            if loaded_stats.get("data_memory_bytes") is not None:
                row["data_ratio"] = loaded_stats["data_memory_bytes"] / size
        rows.append(row)
    return start, rows


def print_tables(args, peer, start, rows):
    """The Markdown table of BENCHMARKS.md and the geometric means."""

    header = "| W | ours in process (ms) | peer run (ms) | ratio | ours whole process (ms) | peer decode + run (ms) | ratio | load (ms/MB) | load memory / file | peak RSS added / file |"
    if args.baseline:
        header += " baseline in process (ms) | baseline whole (ms) |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    in_ratios, whole_ratios = [], []
    baseline_in, baseline_whole = [], []
    for row in rows:
        w = row["w"]
        peer_run, peer_decode = peer[w]
        ours = row["ours"]
        in_ratio = peer_run / ours["in"]
        whole_ratio = (peer_run + peer_decode) / ours["whole"]
        in_ratios.append(in_ratio)
        whole_ratios.append(whole_ratio)
        load = f"{row['load_per_mb']:.1f}" if "load_per_mb" in row else "-"
        memory = f"{row['data_ratio']:.1f}x" if "data_ratio" in row else "-"
        rss = f"{row['rss_ratio']:.1f}x" if "rss_ratio" in row else "-"
        line = (
            f"| W{w} | {ours['in']:.2f} | {peer_run} | {in_ratio:.1f}x | {ours['whole']:.1f} | "
            f"{peer_run + peer_decode:.1f} | {whole_ratio:.1f}x | {load} | {memory} | {rss} |"
        )
        if args.baseline:
            line += f" {row['baseline']['in']:.2f} | {row['baseline']['whole']:.1f} |"
            baseline_in.append(peer_run / row["baseline"]["in"])
            baseline_whole.append((peer_run + peer_decode) / row["baseline"]["whole"])
        print(line)
    print(
        f"\nGeometric mean of the ratios: in process {geomean(in_ratios):.1f}x, "
        f"whole process {geomean(whole_ratios):.1f}x. Start-up with an empty data "
        f"object: {start['ours']:.2f} ms."
    )
    if args.baseline:
        print(
            f"The baseline: in process {geomean(baseline_in):.1f}x, whole process "
            f"{geomean(baseline_whole):.1f}x; start-up {start['baseline']:.2f} ms."
        )
    print(f"A process that does nothing (`true`) takes {start['true']:.2f} ms here.")


if __name__ == "__main__":
    main()
