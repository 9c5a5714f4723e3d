#!/usr/bin/env python3
"""A tiny MCP server (JSON-RPC lines on stdio) that misbehaves on request,
for the tests of ptc's MCP client (tests/mcp.rs).

Start-up modes (first argument): `ok` (default), `exit-at-start` (writes
to stderr and exits 1), `hang-at-start` (never answers `initialize`),
`garbage-at-start` (answers `initialize` with a line that is not JSON).
Further arguments name extra tools that echo their arguments (for name
collisions). With PID_FILE set, the server writes its process id there.

Tools: echo {text} (text back), args (its arguments back as JSON text),
crash (exits with code 3 in the middle of the call), hang (never
answers, goes on serving), sleep (stops serving, even reading its
input, for an hour), garbage (answers with a line that is not JSON, then
nothing), huge (answers with a 17 MiB line),
fail (an isError result), protocol_error (a JSON-RPC error).
"""
import json
import os
import sys
import time

mode = sys.argv[1] if len(sys.argv) > 1 else "ok"
extra = sys.argv[2:]

if os.environ.get("PID_FILE"):
    with open(os.environ["PID_FILE"], "w") as f:
        f.write(str(os.getpid()))

if mode == "exit-at-start":
    sys.stderr.write("cannot open the database: no such file\n")
    sys.stderr.flush()
    sys.exit(1)


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def text(s, error=False):
    return {"content": [{"type": "text", "text": s}], "isError": error}


def schema(**props):
    return {"type": "object", "properties": props, "required": list(props)}


TOOLS = [
    {"name": "echo", "description": "Say it back", "inputSchema": schema(text={"type": "string"})},
    {"name": "args", "description": "The arguments back", "inputSchema": {"type": "object"}},
    {"name": "crash", "description": "Exit mid-call", "inputSchema": {"type": "object"}},
    {"name": "hang", "description": "Never answer", "inputSchema": {"type": "object"}},
    {"name": "sleep", "description": "Stop serving", "inputSchema": {"type": "object"}},
    {"name": "garbage", "description": "Answer with noise", "inputSchema": {"type": "object"}},
    {"name": "huge", "description": "An answer over 16 MiB", "inputSchema": {"type": "object"}},
    {"name": "fail", "description": "An error result", "inputSchema": {"type": "object"}},
    {"name": "protocol_error", "description": "A JSON-RPC error", "inputSchema": {"type": "object"}},
] + [{"name": n, "description": "Extra", "inputSchema": {"type": "object"}} for n in extra]

for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    method, rid = msg.get("method"), msg.get("id")
    if rid is None:
        continue  # a notification
    if method == "initialize":
        if mode == "hang-at-start":
            continue
        if mode == "garbage-at-start":
            sys.stdout.write("Welcome! this is not JSON-RPC\n")
            sys.stdout.flush()
            continue
        version = msg.get("params", {}).get("protocolVersion", "2025-06-18")
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": version, "capabilities": {"tools": {}},
            "serverInfo": {"name": "misbehaving", "version": "0.0.1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": TOOLS}})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": rid, "result": {}})
    elif method == "tools/call":
        name = msg["params"]["name"]
        args = msg["params"].get("arguments") or {}
        if name == "echo":
            send({"jsonrpc": "2.0", "id": rid, "result": text(args.get("text", ""))})
        elif name == "crash":
            sys.stderr.write("segfault in the frobnicator\n")
            sys.stderr.flush()
            os._exit(3)
        elif name == "hang":
            pass  # never answer, but go on serving
        elif name == "sleep":
            time.sleep(3600)  # stop serving, and ignore a closed input
        elif name == "huge":
            body = json.dumps(text("x" * (17 * 1024 * 1024)))
            sys.stdout.write('{"jsonrpc": "2.0", "id": %s, "result": %s}\n' % (json.dumps(rid), body))
            sys.stdout.flush()
        elif name == "garbage":
            sys.stdout.write("<html>502 Bad Gateway</html>\n")
            sys.stdout.flush()
        elif name == "fail":
            send({"jsonrpc": "2.0", "id": rid, "result": text("the frobnicator is out of order", True)})
        elif name == "protocol_error":
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": "bad frob level"}})
        else:
            send({"jsonrpc": "2.0", "id": rid, "result": text(json.dumps(args))})
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no such method"}})
