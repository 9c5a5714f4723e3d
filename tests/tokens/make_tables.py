#!/usr/bin/env python3
"""Write the prebuilt BPE tables under src/tokens/data/ from tiktoken's
`.tiktoken` rank files (base64 token, space, rank; one per line).

Usage: python3 tests/tokens/make_tables.py [DIR_WITH_TIKTOKEN_FILES]

Without an argument the files bundled by the tiktoken-rs crate in the
local cargo registry are used. Output format (`PTCBPE1`):
  8 bytes  b"PTCBPE1\\n"
  4 bytes  token count N, little-endian
  N bytes  the length of each token, in rank order (every token is 1..=255 bytes)
  ...      the tokens' bytes, concatenated in rank order
The rank of a token is its index. The test `tables_match_tiktoken_rs`
checks every entry against tiktoken-rs.
"""
import base64
import glob
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "src", "tokens", "data")


def source_dir():
    if len(sys.argv) > 1:
        return sys.argv[1]
    home = os.path.expanduser("~/.cargo/registry/src")
    found = sorted(glob.glob(os.path.join(home, "*", "tiktoken-rs-*", "assets")))
    if not found:
        sys.exit("no tiktoken-rs assets found; pass the folder holding *.tiktoken")
    return found[-1]


def main():
    src = source_dir()
    for name in ("o200k_base", "cl100k_base"):
        tokens = []
        with open(os.path.join(src, name + ".tiktoken"), "rb") as f:
            for rank, line in enumerate(f):
                token, r = line.split()
                if int(r) != rank:
                    sys.exit(f"{name}: ranks are not contiguous at line {rank + 1}")
                tokens.append(base64.b64decode(token))
        if any(not 1 <= len(t) <= 255 for t in tokens):
            sys.exit(f"{name}: a token is empty or longer than 255 bytes")
        blob = b"PTCBPE1\n" + struct.pack("<I", len(tokens))
        blob += bytes(len(t) for t in tokens) + b"".join(tokens)
        os.makedirs(OUT, exist_ok=True)
        with open(os.path.join(OUT, name + ".bin"), "wb") as f:
            f.write(blob)
        print(f"{name}: {len(tokens)} tokens, {len(blob)} bytes")


if __name__ == "__main__":
    main()
