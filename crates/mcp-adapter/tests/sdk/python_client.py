"""The official MCP Python SDK as a client of shiftwork-mcp (issue 29 item 1).

Usage: python_client.py MODE CALLS_JSON -- COMMAND ARGS...   (stdio: the server is started as COMMAND)
       python_client.py MODE CALLS_JSON --url URL [--token TOKEN]   (Streamable HTTP)

MODE is the SDK's connect mode: "legacy", "auto" or a protocol version ("2026-07-28"). CALLS_JSON is
a file holding [{"tool": name, "arguments": {...}}, ...]. Prints one JSON object on stdout: the
negotiated version, the tools listed, and each call's isError and structuredContent.
"""

import asyncio
import json
import sys

from mcp import Client, StdioServerParameters


async def main() -> None:
    mode, calls_path, *rest = sys.argv[1:]
    with open(calls_path, encoding="utf-8") as f:
        calls = json.load(f)
    if rest[0] == "--":
        server = StdioServerParameters(command=rest[1], args=rest[2:])
    else:
        url = rest[1]
        token = rest[3] if len(rest) > 3 and rest[2] == "--token" else None
        if token is None:
            server = url
        else:
            import httpx2

            from mcp.client.streamable_http import streamable_http_client

            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
            server = streamable_http_client(url, http_client=http)
    report = {"mode": mode, "tools": [], "calls": []}
    async with Client(server, mode=mode) as client:
        report["version"] = client.protocol_version
        listed = await client.list_tools()
        report["tools"] = [tool.name for tool in listed.tools]
        for call in calls:
            result = await client.call_tool(call["tool"], call["arguments"])
            report["calls"].append(
                {
                    "tool": call["tool"],
                    "isError": bool(result.is_error),
                    "structuredContent": result.structured_content,
                    "text": [c.text for c in result.content if getattr(c, "type", None) == "text"],
                }
            )
    print(json.dumps(report))


asyncio.run(main())
