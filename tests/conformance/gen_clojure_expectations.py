#!/usr/bin/env python3
"""Run the differential corpus through real Clojure and record the results.

Usage:
    gen_clojure_expectations.py [CORPUS.txt [OUT.json]]

Defaults: tests/data/clojure_corpus.txt -> tests/data/clojure_expected.json.
Needs a `clojure` command (Debian: `apt-get install clojure`, Clojure 1.11).
CI does not run this script: the JSON it writes is committed.

Every expression runs in ONE JVM. The generated script reads each
expression with `read-string`, evaluates it with `eval` and prints it with
`pr-str`, all inside a `try`, so a compile error, a runtime error or an
error while realising a lazy result becomes the symbol `#error` (the
exception class and message are kept in `clojure_error` for reviewers).

Output: a JSON list of {"expr": ..., "clojure": "<pr-str output>"} in
corpus order (plus "clojure_error" for errors).
"""

import json
import os
import subprocess
import sys
import tempfile

DELIM = "@@@ptc-differential@@@"


def read_corpus(path):
    exprs = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            s = line.strip()
            if not s or s.startswith(";"):
                continue
            exprs.append(s)
    return exprs


def clj_string(s):
    # JSON string escapes (\" \\ \n \t \uXXXX) are valid Clojure string escapes.
    return json.dumps(s, ensure_ascii=False)


def script(exprs):
    out = [
        "(require 'clojure.string 'clojure.set 'clojure.walk 'clojure.repl)",
        "(defn ptc-run [src]",
        "  (try",
        "    (let [v (eval (read-string src))] (pr-str v))",
        "    (catch Throwable e",
        "      (str \"#error \" (.getName (class e)) \": \" (.getMessage e)))))",
        "(def ptc-exprs [",
    ]
    out += ["  " + clj_string(e) for e in exprs]
    out += [
        "])",
        "(doseq [[i src] (map-indexed vector ptc-exprs)]",
        "  (println \"%s\" i)" % DELIM,
        "  (println (ptc-run src)))",
        "(println \"%s end\")" % DELIM,
    ]
    return "\n".join(out) + "\n"


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    data = os.path.join(here, "..", "data")
    corpus = argv[1] if len(argv) > 1 else os.path.join(data, "clojure_corpus.txt")
    out_path = argv[2] if len(argv) > 2 else os.path.join(data, "clojure_expected.json")
    exprs = read_corpus(corpus)
    with tempfile.NamedTemporaryFile("w", suffix=".clj", delete=False, encoding="utf-8") as f:
        f.write(script(exprs))
        script_path = f.name
    try:
        run = subprocess.run(
            ["clojure", script_path], capture_output=True, text=True, timeout=600
        )
    finally:
        os.unlink(script_path)
    if run.returncode != 0:
        sys.stderr.write(run.stderr)
        return 1
    # Split the output at the delimiter lines.
    results = {}
    current = None
    lines = []
    for line in run.stdout.split("\n"):
        if line.startswith(DELIM):
            if current is not None:
                results[current] = "\n".join(lines).rstrip("\n")
            tag = line[len(DELIM):].strip()
            current = None if tag == "end" else int(tag)
            lines = []
        elif current is not None:
            lines.append(line)
    if len(results) != len(exprs):
        sys.stderr.write("expected %d results, got %d\n" % (len(exprs), len(results)))
        sys.stderr.write(run.stderr)
        return 1
    entries = []
    for i, e in enumerate(exprs):
        printed = results[i]
        entry = {"expr": e, "clojure": printed}
        if printed.startswith("#error "):
            entry["clojure"] = "#error"
            entry["clojure_error"] = printed[len("#error "):]
        entries.append(entry)
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(entries, f, indent=1, ensure_ascii=False)
        f.write("\n")
    errors = sum(1 for e in entries if e["clojure"] == "#error")
    sys.stderr.write(
        "%d expressions (%d #error) -> %s\n" % (len(entries), errors, os.path.normpath(out_path))
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
