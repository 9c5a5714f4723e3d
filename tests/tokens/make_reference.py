#!/usr/bin/env python3
"""Write tests/tokens/tiktoken_reference.json: token counts computed by
OpenAI's Python `tiktoken`, which `tests/token_counts.rs` compares with our
counter (the Rust test does not need Python).

Usage:
  python3 -m venv /tmp/tk && /tmp/tk/bin/pip install tiktoken
  /tmp/tk/bin/python tests/tokens/make_reference.py [DIR_WITH_TIKTOKEN_FILES]

tiktoken downloads its rank files from openaipublic.blob.core.windows.net;
to work offline this script puts the files bundled by the tiktoken-rs crate
(the folder given, or the one in the local cargo registry) into a cache
folder under the names tiktoken looks for (the SHA-1 of the URL), and
tiktoken checks each file against the SHA-256 it expects, so a count here
is a count of the official encoding.

Three kinds of reference:
- texts: `encode_ordinary` counts in o200k_base and cl100k_base;
- tools: the function-definition formula of OpenAI's cookbook ("How to
  count tokens with tiktoken", num_tokens_for_tools), computed here with
  tiktoken;
- messages: the cookbook's per-message formula (num_tokens_from_messages).
"""
import glob
import hashlib
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"
ENCODINGS = ("o200k_base", "cl100k_base")


def prepare_cache():
    if len(sys.argv) > 1:
        src = sys.argv[1]
    else:
        found = sorted(glob.glob(os.path.expanduser(
            "~/.cargo/registry/src/*/tiktoken-rs-*/assets")))
        if not found:
            sys.exit("no tiktoken-rs assets found; pass the folder holding *.tiktoken")
        src = found[-1]
    cache = tempfile.mkdtemp(prefix="tiktoken-cache-")
    for name in ENCODINGS:
        key = hashlib.sha1(URL.format(name).encode()).hexdigest()
        shutil.copy(os.path.join(src, name + ".tiktoken"), os.path.join(cache, key))
    os.environ["TIKTOKEN_CACHE_DIR"] = cache
    return cache


TEXTS = [
    "",
    "hello world",
    "Hello, World! How's it going? I'd've thought you'LL know.",
    "The quick brown fox jumps over the lazy dog.",
    "ALLCAPS words and MixedCase TokensLikeThis and camelCaseNames",
    "(defn total [xs] (reduce + 0 (map :amount xs)))",
    "fn main() {\n    let v: Vec<u32> = (0..10).collect();\n    println!(\"{:?}\", v);\n}\n",
    "def f(x):\n\treturn x ** 2  # square\n\n\n",
    "SELECT id, name FROM users WHERE email LIKE '%@example.com' ORDER BY 2;",
    '{"role": "user", "content": [{"type": "text", "text": "hi"}]}',
    "1234567890123456789012345678901234567890",
    "3.14159265358979323846 and -0.000001e-10 and 1,000,000.00",
    "a     b\t\t\tc\n\n\n\nd \n \n e",
    " " * 300,
    "\n" * 40 + "x",
    " \t \r\n \u00a0\u2003 end",
    "caf\u00e9 na\u00efve r\u00e9sum\u00e9 \u00fcber Stra\u00dfe \u0141\u00f3d\u017a",
    "\u041f\u0440\u0438\u0432\u0435\u0442, \u043a\u0430\u043a \u0434\u0435\u043b\u0430? \u0394\u03b9\u03ac\u03b2\u03b1\u03c3\u03b5 \u03b1\u03c5\u03c4\u03cc.",
    "\u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645 \u05e9\u05dc\u05d5\u05dd \u05e2\u05d5\u05dc\u05dd",
    "\u4f60\u597d\uff0c\u4e16\u754c\uff01\u4eca\u5929\u5929\u6c14\u5f88\u597d\u3002\u6211\u4eec\u53bb\u516c\u56ed\u5427\u3002",
    "\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8\u3068\u30ab\u30bf\u30ab\u30ca\u3001\u3072\u3089\u304c\u306a\u3002",
    "\ud55c\uad6d\uc5b4 \ud14d\uc2a4\ud2b8\uc785\ub2c8\ub2e4",
    "\u0928\u092e\u0938\u094d\u0924\u0947 \u0926\u0941\u0928\u093f\u092f\u093e \u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35",
    "emoji: \U0001f600\U0001f389\U0001f44d\U0001f3fd \U0001f468\u200d\U0001f469\u200d\U0001f467 \u2764\ufe0f \U0001f1fa\U0001f1f8",
    "math: \u2200x\u2208\u211d, x\u00b2 \u2265 0; \u222b\u2080\u00b9 f(x)dx \u2248 \u2211 \u03b1\u1d62",
    "<|endoftext|> and <|fim_prefix|> are ordinary text here",
    "https://example.com/path/to/page?query=1&b=two#frag",
    "aGVsbG8gd29ybGQgdGhpcyBpcyBiYXNlNjQgZW5jb2RlZCB0ZXh0IHRoYXQgZ29lcyBvbg==" * 4,
    "x" * 500,
    "ab" * 300,
    "!!!???...,,,;;;:::---___===+++***&&&%%%$$$###@@@~~~```",
    "don't won't can't I'M YOU'RE they'Ve we'LL he'D it'S",
    "line one\r\nline two\r\n\r\nline four",
    "tab\tseparated\tvalues\t1\t2\t3\n",
    "\u00a0\u00a0non-breaking\u202fspaces\u3000ideographic",
    "a\u0301e\u0301 combining marks \u0915\u093f",
    "\u00bd \u2153 \u2160\u2161\u2162 \u0661\u0662\u0663 \u0e51\u0e52",
    "ZeroWidth\u200bJoiner\u200d",
    "//!" + " comment" * 50,
]

TOOLS = [
    [{"type": "function", "function": {
        "name": "get_current_weather",
        "description": "Get the current weather in a given location.",
        "parameters": {"type": "object", "properties": {
            "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
            "unit": {"type": "string", "description": "The unit of temperature.", "enum": ["celsius", "fahrenheit"]},
        }, "required": ["location"]}}}],
    [{"type": "function", "function": {
        "name": "read_file",
        "description": "Read a file from the workspace",
        "parameters": {"type": "object", "properties": {
            "path": {"type": "string", "description": "Path relative to the root."},
            "max_bytes": {"type": "integer", "description": "Stop after this many bytes"},
        }}}},
     {"type": "function", "function": {
        "name": "list_dir",
        "description": "List a directory.",
        "parameters": {"type": "object", "properties": {}}}},
     {"type": "function", "function": {
        "name": "search",
        "description": "Full-text search over the \u6587\u6863 index",
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string", "description": "Words to find"},
            "mode": {"type": "string", "description": "How to match", "enum": ["all", "any", "phrase"]},
            "limit": {"type": "number", "description": "At most this many hits."},
        }}}}],
]

MESSAGES = [
    [{"role": "system", "content": "You are a helpful assistant."},
     {"role": "user", "content": "What is 2 + 2?"}],
    [{"role": "system", "content": "You write PTC-Lisp."},
     {"role": "user", "name": "alice", "content": "Count the users named Bob."},
     {"role": "assistant", "content": "(count (filter #(= (:name %) \"Bob\") data/users))"},
     {"role": "user", "content": ";; Result: 3\nTurns left: 4"}],
    [{"role": "developer", "content": "Answer in French."},
     {"role": "user", "content": "\u4f60\u597d \U0001f600 caf\u00e9"}],
]


def tools_tokens(enc, tools, func_init):
    """The cookbook's num_tokens_for_tools, without the messages part."""
    prop_init, prop_key, enum_init, enum_item, func_end = 3, 3, -3, 3, 12
    n = 0
    for tool in tools:
        f = tool["function"]
        n += func_init
        desc = f.get("description", "")
        if desc.endswith("."):
            desc = desc[:-1]
        n += len(enc.encode(f["name"] + ":" + desc))
        props = f.get("parameters", {}).get("properties", {})
        if props:
            n += prop_init
            for key, prop in props.items():
                n += prop_key
                if "enum" in prop:
                    n += enum_init
                    for item in prop["enum"]:
                        n += enum_item + len(enc.encode(item))
                pdesc = prop.get("description", "")
                if pdesc.endswith("."):
                    pdesc = pdesc[:-1]
                n += len(enc.encode(f"{key}:{prop['type']}:{pdesc}"))
    if tools:
        n += func_end
    return n


def messages_tokens(enc, messages):
    """The cookbook's num_tokens_from_messages (gpt-4o / gpt-4 figures)."""
    n = 0
    for m in messages:
        n += 3
        for key, value in m.items():
            n += len(enc.encode(value))
            if key == "name":
                n += 1
    return n + 3


def main():
    cache = prepare_cache()
    import tiktoken

    encs = {name: tiktoken.get_encoding(name) for name in ENCODINGS}
    texts = [dict(text=t, **{name: len(e.encode_ordinary(t)) for name, e in encs.items()})
             for t in TEXTS]
    models = {"gpt-4o": ("o200k_base", 7), "gpt-4": ("cl100k_base", 10)}
    tools = []
    for tl in TOOLS:
        for model, (name, func_init) in models.items():
            tools.append({"model": model, "tools": tl,
                          "tokens": tools_tokens(encs[name], tl, func_init)})
    messages = []
    for ms in MESSAGES:
        for model, (name, _) in models.items():
            messages.append({"model": model, "messages": ms,
                             "tokens": messages_tokens(encs[name], ms)})
    out = {
        "generator": "tests/tokens/make_reference.py",
        "tiktoken_version": tiktoken.__version__,
        "texts": texts,
        "tools": tools,
        "messages": messages,
    }
    path = os.path.join(HERE, "tiktoken_reference.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    shutil.rmtree(cache, ignore_errors=True)
    print(f"wrote {path}: {len(texts)} texts, {len(tools)} tool sets, {len(messages)} message lists")


if __name__ == "__main__":
    main()
