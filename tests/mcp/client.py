"""A real MCP client (the official Python SDK) for tests/mcp.rs.

Usage: client.py MODE ELICIT SERVER [ARGS...]  with the steps as JSON on stdin.
MODE is the SDK's own connect mode: `legacy` (the initialize handshake, 2025-11-25), `auto`
(server/discover, falling back to initialize) or a pinned revision such as `2026-07-28`.
ELICIT is `none` (the client declares no elicitation capability), `accept` or `decline`.
A step is one of:
    {"list": true}
    {"tool": NAME, "arguments": {...}}    the SDK's call_tool (it answers input_required itself)
    {"tool": ..., "arguments": ..., "manual": true}    one round only: the InputRequiredResult
        itself is the result; with "state" (a literal) or "state_of" (the index of an earlier
        result whose requestState to echo) and "answer" (accept, decline, or absent: no
        inputResponses), it is a retry of that round
    {"sleep": SECONDS}
Any step may say "connection": 1 to go to a second server process started the same way.
Prints one JSON object: {"server", "protocol", "tools", "results", "elicitations"}; a request the
server answered with a JSON-RPC error is {"error": {"code", "message"}} in "results".
The assertions live in tests/mcp.rs; this script only speaks the protocol.
"""

import json
import os
import sys
from contextlib import AsyncExitStack

import anyio
from mcp import Client, StdioServerParameters, types
from mcp.shared.exceptions import MCPError


async def main() -> None:
    mode, elicit, command, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    steps = json.load(sys.stdin)
    asked: list[str] = []

    async def on_elicit(context, params):
        asked.append(params.message)
        return types.ElicitResult(action=elicit, content={} if elicit == "accept" else None)

    server = StdioServerParameters(command=command, args=args, env=dict(os.environ))
    out = {"tools": None, "results": [], "elicitations": asked}
    async with AsyncExitStack() as stack:
        clients: dict[int, Client] = {}

        async def connect(n: int) -> Client:
            if n not in clients:
                client = Client(server, mode=mode, elicitation_callback=None if elicit == "none" else on_elicit)
                clients[n] = await stack.enter_async_context(client)
            return clients[n]

        first = await connect(0)
        out["protocol"] = first.protocol_version
        info = first.session.server_info
        out["server"] = info.name if info is not None else None
        for step in steps:
            if "sleep" in step:
                await anyio.sleep(step["sleep"])
                continue
            client = await connect(step.get("connection", 0))
            if step.get("list"):
                listed = await client.session.list_tools()
                out["tools"] = [t.model_dump(by_alias=True, exclude_none=True) for t in listed.tools]
                out["listing"] = listed.model_dump(by_alias=True, exclude_none=True, exclude={"tools"})
                continue
            try:
                if step.get("manual"):
                    state = step.get("state")
                    if "state_of" in step:
                        state = out["results"][step["state_of"]]["requestState"]
                    responses = None
                    if "answer" in step:
                        content = {} if step["answer"] == "accept" else None
                        responses = {"approval": types.ElicitResult(action=step["answer"], content=content)}
                    result = await client.session.call_tool(
                        step["tool"],
                        step.get("arguments", {}),
                        input_responses=responses,
                        request_state=state,
                        allow_input_required=True,
                    )
                else:
                    result = await client.call_tool(step["tool"], step.get("arguments", {}))
                out["results"].append(result.model_dump(by_alias=True, exclude_none=True))
            except MCPError as e:
                out["results"].append({"error": {"code": e.error.code, "message": e.error.message}})
    json.dump(out, sys.stdout)


anyio.run(main)
