"""How the official MCP Python SDK reads JSON-RPC message lines (issue 35 item 5).

Usage: python read_messages.py < LINES

Prints one JSON array: for each line of stdin, whether the SDK's message adapter (what its
transports parse every incoming line with) accepts it.
"""

import json
import sys

from mcp_types.jsonrpc import jsonrpc_message_adapter


def accepted(line: str) -> bool:
    try:
        jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError:
        return False
    return True


print(json.dumps([accepted(line) for line in sys.stdin.read().splitlines() if line.strip()]))
