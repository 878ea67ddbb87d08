"""The official MCP Python SDK reading shiftwork-mcp's resources and prompts (issue 35 items 2, 3).

Usage: python_resources.py MODE SUBSCRIBE TRIGGER_JSON -- COMMAND ARGS...   (stdio)
       python_resources.py MODE SUBSCRIBE TRIGGER_JSON --url URL --token TOKEN   (Streamable HTTP)

MODE is the SDK's connect mode ("legacy", "auto", "2026-07-28"). SUBSCRIBE is "yes" to follow
shiftwork://status (resources/subscribe before 2026-07-28, subscriptions/listen from it) and run the
command of TRIGGER_JSON (an argv list) once subscribed. Prints one JSON object on stdout: the version,
the resources, templates and prompts listed, each resource's text read, a prompt got, a completion,
and how long the notification of the trigger's change took.
"""

import json
import subprocess
import sys
import time

import anyio
import mcp_types as types

from mcp import Client, StdioServerParameters

STATUS = "shiftwork://status"


async def main() -> None:
    mode, subscribe, trigger_json, *rest = sys.argv[1:]
    trigger = json.loads(trigger_json)
    if rest[0] == "--":
        server = StdioServerParameters(command=rest[1], args=rest[2:])
    else:
        import httpx2

        from mcp.client.streamable_http import streamable_http_client

        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {rest[3]}"}, timeout=60)
        server = streamable_http_client(rest[1], http_client=http)
    updated = anyio.Event()

    async def on_message(message) -> None:
        notification = getattr(message, "root", message)
        if getattr(notification, "method", None) == "notifications/resources/updated":
            if str(notification.params.uri) == STATUS:
                updated.set()

    report = {"mode": mode}
    async with Client(server, mode=mode, message_handler=on_message) as client:
        report["version"] = client.protocol_version
        resources = (await client.list_resources()).resources
        report["resources"] = [str(r.uri) for r in resources]
        templates = (await client.list_resource_templates()).resource_templates
        report["templates"] = [t.uri_template for t in templates]
        report["reads"] = {}
        for uri in report["resources"] + ["shiftwork://units/U3/brief"]:
            read = await client.read_resource(uri)
            report["reads"][uri] = read.contents[0].text
        report["prompts"] = [p.name for p in (await client.list_prompts()).prompts]
        got = await client.get_prompt("hand_review", {"agent": "bob", "focus": "the parser"})
        report["prompt"] = [getattr(m.content, "text", None) or m.content.resource.uri for m in got.messages]
        report["prompt"] = [str(x) for x in report["prompt"]]
        completed = await client.complete(
            types.PromptReference(type="ref/prompt", name="start_unit"), {"name": "unit_id", "value": ""}
        )
        report["completion"] = completed.completion.values
        if subscribe == "yes":
            if client.protocol_version == "2026-07-28":
                async with client.listen(resource_subscriptions=[STATUS]) as sub:
                    await anyio.to_thread.run_sync(lambda: subprocess.run(trigger, check=True, capture_output=True))
                    ended = time.monotonic()
                    with anyio.fail_after(10):
                        async for event in sub:
                            if str(getattr(event, "uri", "")) == STATUS:
                                break
                    report["notified_ms"] = (time.monotonic() - ended) * 1000
            else:
                await client.subscribe_resource(STATUS)
                await anyio.to_thread.run_sync(lambda: subprocess.run(trigger, check=True, capture_output=True))
                ended = time.monotonic()
                with anyio.fail_after(10):
                    await updated.wait()
                report["notified_ms"] = (time.monotonic() - ended) * 1000
    print(json.dumps(report))


anyio.run(main)
