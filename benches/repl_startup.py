#!/usr/bin/env python3
"""Time from spawning `ptc` on a pseudo-terminal until its first prompt.

Usage: python3 benches/repl_startup.py target/release/ptc [RUNS]
Set HIST to a history file to load one (else a fresh path is used).
"""
import os
import pty
import statistics
import subprocess
import sys
import tempfile
import time

exe = sys.argv[1]
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 100
history = os.environ.get("HIST") or os.path.join(tempfile.mkdtemp(), "history")
env = dict(os.environ, TERM="xterm", PTC_HISTORY=history)
times = []
for _ in range(runs):
    master, slave = pty.openpty()
    start = time.perf_counter()
    child = subprocess.Popen([exe], stdin=slave, stdout=slave, stderr=slave,
                             env=env, start_new_session=True)
    seen = b""
    while b"ptc> " not in seen:
        seen += os.read(master, 4096)
    times.append((time.perf_counter() - start) * 1000)
    os.write(master, b"\x04")  # Ctrl-D
    child.wait()
    os.close(master)
    os.close(slave)
print(f"spawn to first prompt, {runs} runs: median {statistics.median(times):.2f} ms, "
      f"min {min(times):.2f}, max {max(times):.2f}")
