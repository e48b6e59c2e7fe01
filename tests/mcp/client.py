"""A real MCP client (the official Python SDK) for tests/mcp.rs.

Usage: client.py ELICIT SERVER [ARGS...]  with the steps as JSON on stdin:
    [{"list": true} | {"tool": NAME, "arguments": {...}}, ...]
ELICIT is `none` (the client declares no elicitation capability), `accept` or `decline`.
Prints one JSON object: {"tools": [...], "results": [...], "elicitations": [messages]}.
The assertions live in tests/mcp.rs; this script only speaks the protocol.
"""

import json
import sys

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client


async def main() -> None:
    elicit, command, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    steps = json.load(sys.stdin)
    asked: list[str] = []

    async def on_elicit(context, params):
        asked.append(params.message)
        return types.ElicitResult(action=elicit, content={} if elicit == "accept" else None)

    server = StdioServerParameters(command=command, args=args, env=dict(__import__("os").environ))
    out = {"tools": None, "results": [], "elicitations": asked}
    async with stdio_client(server) as (read, write):
        callback = None if elicit == "none" else on_elicit
        async with ClientSession(read, write, elicitation_callback=callback) as session:
            init = await session.initialize()
            out["server"] = init.server_info.name
            out["protocol"] = init.protocol_version
            for step in steps:
                if step.get("list"):
                    listed = await session.list_tools()
                    out["tools"] = [t.model_dump(by_alias=True, exclude_none=True) for t in listed.tools]
                else:
                    result = await session.call_tool(step["tool"], step.get("arguments", {}))
                    out["results"].append(result.model_dump(by_alias=True, exclude_none=True))
    json.dump(out, sys.stdout)


anyio.run(main)
