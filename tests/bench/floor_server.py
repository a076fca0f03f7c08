"""The stdlib floor's server: the least plain Python can do to answer the benchmark's calls.

    python3 tests/bench/floor_server.py                              (JSON lines over stdin/stdout)
    python3 tests/bench/floor_server.py http PORT stateless|default  (floor_http_server.py)

It parses each JSON-RPC message, answers ``initialize`` with the revision asked for, ignores notifications
and answers ``tools/call`` with ``a + b`` as an MCP result; nothing is validated.
"""

import json
import sys
from typing import Any, Dict, Optional


def answer(message: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """The response to one message, or None for a notification."""
    if "id" not in message:
        return None
    if message["method"] == "initialize":
        result: Dict[str, Any] = {"protocolVersion": message["params"]["protocolVersion"],
                                  "capabilities": {"tools": {}}, "serverInfo": {"name": "bench-floor", "version": "0"}}
    else:
        arguments = message["params"]["arguments"]
        total = arguments["a"] + arguments["b"]
        result = {"content": [{"type": "text", "text": str(total)}], "structuredContent": {"result": total}}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def serve_stdio() -> None:
    out = sys.stdout
    for line in sys.stdin:
        response = answer(json.loads(line))
        if response is not None:
            out.write(json.dumps(response) + "\n")
            out.flush()


if __name__ == "__main__":
    if len(sys.argv) == 1:
        serve_stdio()
    else:
        # Imported only here, so that the stdio floor's start-up time and memory hold nothing of HTTP.
        from floor_http_server import serve_http
        serve_http(int(sys.argv[2]), sse=sys.argv[3] == "default")
