"""A tiny MCP server over stdio that misbehaves on request, for
tests/mcp_client.rs: `fake_server.py [OPTIONS] TOOL...` offers TOOLs, each of
which does what its name says when called:

  echo   answers its arguments as JSON text
  env    answers {NAME: value-or-null} for the names in its `names` argument
  cwd    answers the directory it runs in
  image  answers a text part and a 4-byte PNG image part
  fail   answers a tool error (isError) with the text "it broke"
  die    exits with status 3 without answering
  hang   writes its pid and a child's (`sleep`, in its process group) to
         ./pids, then never answers

Options: --flood (a megabyte on stderr before each answer), --mute (never
answers initialize), --stubborn (ignores SIGTERM), --pages (tools/list one
tool per page), --prefix=X (tool names get the prefix X).
"""

import json
import os
import signal
import subprocess
import sys

args = sys.argv[1:]
opts = {a for a in args if a.startswith("--")}
prefix = next((a.split("=", 1)[1] for a in opts if a.startswith("--prefix=")), "")
tools = [a for a in args if not a.startswith("--")]
if "--stubborn" in opts:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def flood():
    if "--flood" in opts:
        for _ in range(1024):
            sys.stderr.write("x" * 1023 + "\n")
        sys.stderr.flush()


def answer(id, result):
    flood()
    send({"jsonrpc": "2.0", "id": id, "result": result})


def text(t, error=False):
    return {"content": [{"type": "text", "text": t}], "isError": error}


def call(id, name, arguments):
    name = name[len(prefix):]
    if name == "echo":
        answer(id, text(json.dumps(arguments, sort_keys=True)))
    elif name == "env":
        answer(id, text(json.dumps({n: os.environ.get(n) for n in arguments["names"]}, sort_keys=True)))
    elif name == "cwd":
        answer(id, text(os.getcwd()))
    elif name == "image":
        answer(id, {"content": [{"type": "text", "text": "a dot:"},
                                {"type": "image", "mimeType": "image/png", "data": "iVBORw=="}]})
    elif name == "fail":
        answer(id, text("it broke", error=True))
    elif name == "die":
        sys.exit(3)
    elif name == "hang":
        child = subprocess.Popen(["sleep", "1000"])
        with open("pids.tmp", "w") as f:
            f.write(f"{os.getpid()} {child.pid}\n")
        os.rename("pids.tmp", "pids")
        while True:
            signal.pause()


def schema(name):
    if name == prefix + "env":
        return {"type": "object", "properties": {"names": {"type": "array"}}, "required": ["names"]}
    return {"type": "object"}


listed = [{"name": prefix + t, "description": f"the {t} tool", "inputSchema": schema(prefix + t)} for t in tools]

for line in sys.stdin:
    message = json.loads(line)
    method, id = message.get("method"), message.get("id")
    if id is None:
        continue
    if method == "initialize":
        if "--mute" in opts:
            continue
        answer(id, {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                    "serverInfo": {"name": "fake", "version": "1"}})
    elif method == "tools/list":
        if "--pages" in opts:
            at = int(message.get("params", {}).get("cursor", "0"))
            page = {"tools": listed[at:at + 1]}
            if at + 1 < len(listed):
                page["nextCursor"] = str(at + 1)
            answer(id, page)
        else:
            answer(id, {"tools": listed})
    elif method == "tools/call":
        call(id, message["params"]["name"], message["params"].get("arguments", {}))
    else:
        send({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no"}})
