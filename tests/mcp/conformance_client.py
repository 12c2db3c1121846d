"""The client the official MCP conformance suite drives: `conformance
client --command "python3 conformance_client.py"` starts a scenario's
server and runs this with its URL last. This writes an agent naming that
server (streamable HTTP) in a world of its own, serves a scripted model
on loopback (Anthropic's wire), and runs the real `axe-run` (`AXE_RUN`)
against both. The model asks, in its first reply, for the calls the
scenario needs: the suite's own list when its context gives one
(`MCP_CONFORMANCE_CONTEXT`'s `toolCalls`), the focal tool's schema
echoed for the schema-preservation scenario, otherwise every tool axe
offered, with arguments made from each schema; its second reply ends
the run. axe's own exit status is this script's. The run's timeout is
15 s, under the 20 s the test gives the suite, and a signal to this
script stops axe too: a scenario axe cannot finish (a server waiting on
a person) holds none of its connections past the suite's timeout.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

URL = sys.argv[-1]
SCENARIO = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
CONTEXT = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")


def sample(schema):
    """An argument value for a property's schema."""
    if not isinstance(schema, dict):
        return "x"
    if "default" in schema:
        return schema["default"]
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type")
    return {"integer": 1, "number": 1.5, "boolean": True, "object": {}, "array": []}.get(
        kind, "x"
    )


def arguments(tool):
    schema = tool.get("input_schema") or {}
    props = schema.get("properties") or {}
    return {name: sample(props.get(name)) for name in schema.get("required") or []}


def calls(tools):
    """The tool calls of the first reply, as (name, input) pairs."""
    by_name = {t["name"]: t for t in tools}
    if CONTEXT.get("toolCalls"):
        return [
            (c["name"], c.get("arguments") or {})
            for c in CONTEXT["toolCalls"]
            if c["name"] in by_name
        ]
    if SCENARIO == "json-schema-2020-12-preservation":
        focal = by_name.get("json_schema_2020_12_tool")
        if focal and "json_schema_echo" in by_name:
            return [("json_schema_echo", {"schema": focal["input_schema"]})]
    return [(t["name"], arguments(t)) for t in tools]


def reply(content, stop):
    return {
        "id": "msg",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": content,
        "stop_reason": stop,
        "usage": {"input_tokens": 5, "output_tokens": 3},
    }


class Model(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        answered = any(
            isinstance(m.get("content"), list)
            and any(p.get("type") == "tool_result" for p in m["content"])
            for m in body.get("messages", [])
        )
        todo = [] if answered else calls(body.get("tools") or [])
        if todo:
            content = [
                {"type": "tool_use", "id": f"c{i}", "name": name, "input": args}
                for i, (name, args) in enumerate(todo)
            ]
            out = reply(content, "tool_use")
        else:
            out = reply([{"type": "text", "text": "done"}], "end_turn")
        data = json.dumps(out).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def main():
    model = ThreadingHTTPServer(("127.0.0.1", 0), Model)
    threading.Thread(target=model.serve_forever, daemon=True).start()
    with tempfile.TemporaryDirectory() as root:
        agents = os.path.join(root, "config", "axe", "agents")
        os.makedirs(agents)
        os.makedirs(os.path.join(root, "home"))
        with open(os.path.join(agents, "c.toml"), "w") as f:
            f.write(
                'name = "c"\nmodel = "anthropic/claude-test"\ntimeout = 15\n'
                f"workdir = {json.dumps(root)}\n"
                '[[mcp_servers]]\nname = "s"\ntransport = "streamable-http"\n'
                f"url = {json.dumps(URL)}\n"
            )
        env = {
            k: v
            for k, v in os.environ.items()
            if k in ("PATH", "LANG", "TMPDIR") or k.startswith("LC_")
        }
        env.update(
            HOME=os.path.join(root, "home"),
            XDG_CONFIG_HOME=os.path.join(root, "config"),
            XDG_DATA_HOME=os.path.join(root, "data"),
            AXE_ANTHROPIC_BASE_URL=f"http://127.0.0.1:{model.server_address[1]}",
            ANTHROPIC_API_KEY="test-key",
        )
        axe = subprocess.Popen(
            [os.environ["AXE_RUN"], "c", "-v"],
            env=env,
            cwd=root,
            stdin=subprocess.DEVNULL,
        )

        def stop(signum, _frame):
            axe.send_signal(signum)
            axe.wait()
            sys.exit(128 + signum)

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        code = axe.wait()
    model.shutdown()
    sys.exit(code)


main()
