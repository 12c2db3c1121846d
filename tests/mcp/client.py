"""axe-mcp driven by the official Python MCP SDK (`pip install mcp`, 2.x) as
a real client over stdio; run by tests/mcp_sdk.rs, which checks what this
prints.

    client.py check
        Exits 0 when the SDK can be used here; prints the interpreter's
        path (not a shim's).
    client.py session MODE AXE_MCP AGENT
        One client (AXE_MCP an executable, or the http:// address of an
        axe-mcp --http): connect, list the tools, call every tool, a malformed
        call, an unknown tool, ping, close. Prints one JSON object.
    client.py writer MODE AXE_MCP AGENT ID ROUNDS NOTES
        One of many clients writing one agent's notes at once. Each round:
        NOTES remembers, a recall, then a line {"ready": round} and a wait
        for a line on stdin (the test's barrier, so that every client has
        recalled before any rewrites), then a reflect and a learn_fact.
        Prints one JSON line per round and a last {"done": ...}.

MODE is the SDK's `Client(mode=...)`: "legacy" (the initialize handshake),
"auto" (the SDK's default: a server/discover probe, falling back to
initialize), or a stateless revision such as "2026-07-28" (adopted without
a probe).

The server gets this process's whole environment (the SDK passes only
HOME, PATH and a few more unless told), so the test's XDG directories
reach it.
"""

import json
import os
import sys
import time

import anyio


def params(axe_mcp, agent):
    from mcp import StdioServerParameters

    return StdioServerParameters(
        command=axe_mcp, args=[agent], env=dict(os.environ), cwd=os.getcwd()
    )


def client(mode, axe_mcp, agent):
    from mcp import Client

    # An http:// AXE_MCP is axe-mcp --http's address: the streamable HTTP
    # transport to its endpoint for AGENT.
    if axe_mcp.startswith("http://"):
        return Client(f"{axe_mcp}/mcp/{agent}", mode=mode)
    return Client(params(axe_mcp, agent), mode=mode)


def result(r):
    """A CallToolResult as the test reads it."""
    return {
        "isError": r.is_error,
        "text": "\n".join(c.text for c in r.content if c.type == "text"),
    }


async def session(mode, axe_mcp, agent):
    from mcp import MCPError
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    out = {}
    started = time.monotonic()
    async with client(mode, axe_mcp, agent) as c:
        out["connect_seconds"] = time.monotonic() - started
        out["protocolVersion"] = c.protocol_version
        out["discovered"] = c.session.discover_result is not None
        info = c.server_info
        out["serverInfo"] = info.model_dump(mode="json", by_alias=True, exclude_none=True) if info else None
        out["instructions"] = c.instructions
        out["capabilities"] = c.server_capabilities.model_dump(mode="json", by_alias=True, exclude_none=True)
        tools = await c.list_tools()
        out["tools"] = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools.tools]
        out["nextCursor"] = tools.next_cursor
        calls = [
            ("recall_empty", "recall", {}),
            ("remember", "remember", {"content": "Ada prefers short answers."}),
            ("reflect", "reflect", {"content": "Ada prefers short answers; keep replies brief."}),
            ("learn_fact", "learn_fact", {"topic": "people", "content": "Ada maintains the deploy scripts."}),
            ("recall", "recall", {"days": 1}),
            ("search", "search_notes", {"query": "short answers", "limit": 5}),
            # Malformed: a misspelt argument, a wrong type. Tool errors.
            ("misspelt", "reflect", {"contents": "x"}),
            ("mistyped", "remember", {"content": 42}),
            # A client's own scheduling argument (Gemini CLI's): left out.
            ("scheduled", "remember", {"content": "Deploys wait for the canary.", "wait_for_previous": True}),
        ]
        out["calls"] = {}
        for key, name, arguments in calls:
            out["calls"][key] = result(await c.call_tool(name, arguments))
        # A tool that is not there: a protocol error, and the client goes on.
        try:
            r = await c.call_tool("no_such_tool", {})
            out["unknown_tool"] = {"result": result(r)}
        except MCPError as e:
            out["unknown_tool"] = {"code": e.code, "message": e.message}
        # Ping is gone from the stateless generation.
        if c.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS:
            await c.send_ping()
            out["ping"] = True
        closing = time.monotonic()
    out["close_seconds"] = time.monotonic() - closing
    print(json.dumps(out))


async def writer(mode, axe_mcp, agent, me, rounds, notes):
    def say(obj):
        print(json.dumps(obj), flush=True)

    async with client(mode, axe_mcp, agent) as c:
        for r in range(rounds):
            remembered = []
            for n in range(notes):
                res = result(await c.call_tool("remember", {"content": f"client {me} round {r} note {n}"}))
                remembered.append(res)
            await c.call_tool("recall", {})
            say({"ready": r})
            # The barrier: the test writes a line once every client is ready.
            line = await anyio.to_thread.run_sync(sys.stdin.readline)
            if not line:
                raise SystemExit("stdin ended before the round began")
            reflect = result(await c.call_tool("reflect", {"content": f"MEMORY of client {me}, round {r}."}))
            fact = result(
                await c.call_tool(
                    "learn_fact", {"topic": "shared", "content": f"Fact of client {me}, round {r}."}
                )
            )
            say({"round": r, "remember": remembered, "reflect": reflect, "learn_fact": fact})
    say({"done": me})


def main(argv):
    if argv[:1] == ["check"]:
        import mcp  # noqa: F401
        from mcp import Client  # noqa: F401  (2.x: the Client with modes)

        print(sys.executable)
        return
    if argv[:1] == ["session"] and len(argv) == 4:
        anyio.run(session, *argv[1:])
        return
    if argv[:1] == ["writer"] and len(argv) == 7:
        mode, axe_mcp, agent, me, rounds, notes = argv[1:]
        anyio.run(writer, mode, axe_mcp, agent, int(me), int(rounds), int(notes))
        return
    raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
