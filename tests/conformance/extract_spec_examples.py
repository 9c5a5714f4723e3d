#!/usr/bin/env python3
"""Extract the executable examples of the PTC-Lisp specification.

Usage:
    extract_spec_examples.py --git PTC_RUNNER_GIT_DIR [REV [OUT.json]]
    extract_spec_examples.py REV SPEC.md [OUT.json]

The first form is the one-command update to a revision of the
specification: it reads docs/ptc-lisp-specification.md and, when the
revision has it, docs/function-reference.md at REV (default HEAD) of a
ptc_runner git directory (a bare one works, e.g. the `fetch` tool's
mirror) and writes tests/data/spec_examples_current.json. The second form
reads a specification file already on disk, recording REV as its
revision (default output tests/data/spec_examples_<REV>.json); it is how
the 6da99ff0 baseline was written.

The output is a JSON object: `revision` (the full commit), `documents`
(the files read) and `examples`. Specification examples have ids
S-0001..., function-reference examples R-0001....

Three notations are recognised (spec Appendix C):

1. Inside ```clojure fences, `code ; => expected` (also `;; =>`). When the
   code before the marker closes more brackets than it opens, the example
   began on an earlier line: lines are taken backwards until the brackets
   balance. A marker alone on a line (`;; => expected`) closes the
   complete form(s) on the lines just above it.
2. In section 8.3, bullets of the form "- `code` -> `expected` (note)"
   (the arrow is U+2192).
3. Markdown tables whose header has an `Expression` or `Operation` first
   column and a `Result` column.

Each example gets a kind:
  value         expected is a literal value to compare with
  error         expected says the code fails (`TYPE ERROR`, `error: ...`)
  illustrative  expected is prose or elided (`...`, `result of ...`)
  todo          the spec's `TODO` / `BUG` markers

For "value" examples, `expected` is the first complete form of the text
after the marker and any remaining text is kept in `note`
(e.g. `4 (10 - 1 - 2 - 3)` gives expected `4`, note `(10 - 1 - 2 - 3)`).

Only the Python 3 standard library is used.
"""

import json
import os
import re
import subprocess
import sys

SPEC_PATH = "docs/ptc-lisp-specification.md"
REFERENCE_PATH = "docs/function-reference.md"

OPENERS = "([{"
CLOSERS = ")]}"
ARROW = "\u2192"


class ExtractError(Exception):
    pass


def scan(text):
    """Split one line of code into (code, comment) and count brackets.

    Returns (code_part, comment_text_or_None, balance) where balance is
    openers minus closers in the code part. Strings, character literals
    and regex literals are skipped so brackets inside them do not count.
    """
    i = 0
    n = len(text)
    balance = 0
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            continue
        if c == "\\":
            # Character literal: a backslash and at least one character,
            # then any letters of a name such as \newline.
            i += 2
            while i < n and text[i].isalnum():
                i += 1
            continue
        if c == ";":
            return text[:i], text[i:], balance
        if c in OPENERS:
            balance += 1
        elif c in CLOSERS:
            balance -= 1
        i += 1
    return text, None, balance


def marker(comment):
    """The text after `=>` if the comment is an example marker."""
    if comment is None:
        return None
    body = comment.lstrip(";").strip()
    if body.startswith("=>"):
        return body[2:].strip()
    return None


def first_form(text):
    """Split text into (first complete form, rest). Raises on failure."""
    text = text.strip()
    if not text:
        raise ExtractError("empty expected value")
    i = 0
    n = len(text)
    if text.startswith("##"):
        i = 2
    elif text.startswith("#'"):
        i = 2
    elif text.startswith('#"'):
        i = 1
    if i < n and (text[i] in OPENERS or text[i] == '"' or text.startswith("#{")):
        if text.startswith("#{"):
            i = 1
        depth = 0
        while i < n:
            c = text[i]
            if c == '"':
                i += 1
                while i < n and text[i] != '"':
                    i += 2 if text[i] == "\\" else 1
                if i >= n:
                    raise ExtractError("unterminated string in %r" % text)
                if depth == 0:
                    i += 1
                    break
            elif c == "\\":
                i += 1
            elif c in OPENERS:
                depth += 1
            elif c in CLOSERS:
                depth -= 1
                if depth == 0:
                    i += 1
                    break
                if depth < 0:
                    raise ExtractError("unbalanced %r" % text)
            i += 1
        else:
            if depth != 0:
                raise ExtractError("unbalanced %r" % text)
    else:
        while i < n and not text[i].isspace() and text[i] not in ",()[]{}":
            i += 1
    return text[:i], text[i:].strip()


def classify(expected):
    """(kind, expected, note) for the text after an arrow or marker."""
    text = expected.strip()
    if text.startswith("TODO") or text.startswith("BUG"):
        return "todo", text, ""
    if re.match(r"^([A-Za-z]+ )*error\b", text, re.I):
        # `TYPE ERROR`, `ERROR (...)`, `error: ...`, `Java interop error: ...`
        return "error", text, ""
    if text.startswith("%{"):
        # The generated function reference writes an empty map the Elixir
        # way (`%{}`).
        text = text[1:]
    if "..." in text or "\u2026" in text:
        return "illustrative", text, ""
    try:
        form, note = first_form(text)
    except ExtractError:
        return "illustrative", text, ""
    is_number = re.match(r"^[+-]?\d", form) is not None
    if not is_number and re.match(r"^[A-Za-z*+!_?<>=/-]", form) and form not in ("nil", "true", "false"):
        # A bare word: prose such as `filtered list`, not a value.
        return "illustrative", text, ""
    return "value", form, note


def heading(line):
    """(level, title) of a `##` or `###` heading line, else None."""
    m = re.match(r"^(#{2,3})\s+(.*?)\s*$", line)
    if not m:
        return None
    return len(m.group(1)), m.group(2).replace("`", "")


def extract(lines, prefix):
    examples = []
    section = ""
    chapter = ""
    in_fence = False
    fence_is_clojure = False
    fence_start = 0
    table_cols = None  # (code column, result column) of the current table

    def add(line_no, code, expected, source):
        kind, exp, note = classify(expected)
        entry = {
            "section": section,
            "line": line_no,
            "source": source,
            "code": code,
            "expected": exp,
            "kind": kind,
        }
        if note:
            entry["note"] = note
        examples.append(entry)

    for idx, raw in enumerate(lines):
        line_no = idx + 1
        line = raw.rstrip("\n")
        stripped = line.strip()
        if stripped.startswith("```"):
            if in_fence:
                in_fence = False
            else:
                in_fence = True
                fence_is_clojure = stripped[3:].strip() == "clojure"
                fence_start = idx
            continue
        if in_fence:
            if not fence_is_clojure:
                continue
            code, comment, balance = scan(line)
            exp = marker(comment)
            if exp is None:
                continue
            code = code.rstrip()
            if code.strip() and balance == 0:
                add(line_no, code.strip(), exp, "marker")
                continue
            if balance > 0:
                raise ExtractError("line %d: example opens more than it closes" % line_no)
            # Multi-line: walk back until the brackets balance.
            parts = [code] if code.strip() else []
            total = balance
            j = idx - 1
            found = False
            while j > fence_start:
                prev = lines[j].rstrip("\n")
                pcode, pcomment, pbal = scan(prev)
                if marker(pcomment) is not None:
                    raise ExtractError(
                        "line %d: reached the example of line %d" % (line_no, j + 1)
                    )
                if not prev.strip():
                    if not parts:
                        # The function reference leaves a blank line
                        # between a form and its lone `;; =>` marker.
                        j -= 1
                        continue
                    if parts:
                        raise ExtractError("line %d: blank line inside example" % line_no)
                    raise ExtractError("line %d: marker without code" % line_no)
                if not pcode.strip():  # a comment-only line
                    j -= 1
                    continue
                parts.insert(0, prev.rstrip())
                total += pbal
                if total == 0:
                    found = True
                    break
                j -= 1
            if not found:
                raise ExtractError("line %d: start of example not found" % line_no)
            # Dedent by the first line's indentation.
            indent = len(parts[0]) - len(parts[0].lstrip())
            text = "\n".join(p[indent:] if p[:indent].strip() == "" else p.strip() for p in parts)
            add(line_no, text.rstrip(), exp, "marker")
            continue

        h = heading(line)
        if h is not None:
            level, title = h
            if level == 2:
                chapter = section = title
            elif re.match(r"^\d", title):
                section = title
            else:  # an unnumbered subsection, e.g. in an appendix
                section = "%s / %s" % (chapter, title)
            table_cols = None
            continue

        # Tables of expressions and results.
        if stripped.startswith("|"):
            cells = [c.strip() for c in stripped.strip("|").split("|")]
            if table_cols is None:
                if cells and cells[0] in ("Expression", "Operation") and "Result" in cells:
                    table_cols = (0, cells.index("Result"))
                continue
            if all(re.match(r"^:?-+:?$", c) for c in cells):
                continue
            code_cell = cells[table_cols[0]]
            result_cell = cells[table_cols[1]] if table_cols[1] < len(cells) else ""
            m = re.match(r"^`([^`]+)`$", code_cell)
            if not m:
                continue
            r = re.match(r"^`([^`]+)`(.*)$", result_cell)
            expected = r.group(1) + r.group(2) if r else result_cell
            add(line_no, m.group(1), expected, "table")
            continue
        table_cols = None

        # The arrow bullets of section 8.3.
        if section.startswith("8.3"):
            m = re.match(r"^- `(\(.*?\))` " + ARROW + r" `(.*?)`(.*)$", line)
            if m:
                expected = m.group(2) + (" " + m.group(3).strip() if m.group(3).strip() else "")
                add(line_no, m.group(1), expected, "arrow")
    for i, e in enumerate(examples):
        e["id"] = "%s-%04d" % (prefix, i + 1)
    keys = ["id", "section", "line", "source", "code", "expected", "kind", "note"]
    return [{k: e[k] for k in keys if k in e} for e in examples]


def git_show(git_dir, rev, path):
    """The text of `path` at `rev`, or None when the file does not exist there."""
    try:
        out = subprocess.run(
            ["git", "-C", git_dir, "show", "%s:%s" % (rev, path)],
            check=True,
            capture_output=True,
        )
    except subprocess.CalledProcessError:
        return None
    return out.stdout.decode("utf-8")


def resolve(git_dir, rev):
    out = subprocess.run(
        ["git", "-C", git_dir, "rev-parse", "--verify", rev + "^{commit}"],
        check=True,
        capture_output=True,
    )
    return out.stdout.decode().strip()


def write(out, document):
    with open(out, "w", encoding="utf-8") as f:
        json.dump(document, f, indent=1, ensure_ascii=False)
        f.write("\n")
    counts = {}
    for e in document["examples"]:
        counts[e["kind"]] = counts.get(e["kind"], 0) + 1
    summary = ", ".join("%d %s" % (v, k) for k, v in sorted(counts.items()))
    sys.stderr.write(
        "%s: %d examples (%s) -> %s\n"
        % (document["revision"][:8], len(document["examples"]), summary, os.path.normpath(out))
    )


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    data_dir = os.path.join(here, "..", "data")
    if len(argv) >= 3 and argv[1] == "--git":
        # One command for a whole revision: the specification and, when
        # the revision has one, the generated function reference.
        git_dir = argv[2]
        rev = resolve(git_dir, argv[3] if len(argv) > 3 else "HEAD")
        out = argv[4] if len(argv) > 4 else os.path.join(data_dir, "spec_examples_current.json")
        spec = git_show(git_dir, rev, SPEC_PATH)
        if spec is None:
            raise ExtractError("%s has no %s" % (rev, SPEC_PATH))
        examples = extract(spec.splitlines(True), "S")
        reference = git_show(git_dir, rev, REFERENCE_PATH)
        documents = [SPEC_PATH]
        if reference is not None:
            examples += extract(reference.splitlines(True), "R")
            documents.append(REFERENCE_PATH)
        write(out, {"revision": rev, "documents": documents, "examples": examples})
        return 0
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    rev, path = argv[1], argv[2]
    out = argv[3] if len(argv) > 3 else os.path.join(data_dir, "spec_examples_%s.json" % rev[:8])
    with open(path, encoding="utf-8") as f:
        examples = extract(f.readlines(), "S")
    write(out, {"revision": rev, "documents": [SPEC_PATH], "examples": examples})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
