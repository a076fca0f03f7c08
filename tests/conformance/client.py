"""The client the official conformance suite tests: mcplite's public `Client`, one function per scenario.

The suite runs it as ``conformance client --command "python3 tests/conformance/client.py" --scenario NAME``:
the URL of the scenario's mock server is the last argument, the scenario's name is in
``MCP_CONFORMANCE_SCENARIO``, and scenarios that need credentials get them as JSON in
``MCP_CONFORMANCE_CONTEXT``. The mock server judges what we send; we exit 0 when the scenario ran through,
1 when something failed (with the reason on stderr), 2 for a scenario this client does not know.

Authorization scenarios (``auth/...``) register here the same way, with ``@scenario("auth/...")``, once the
OAuth client exists; each receives the context's credentials.
"""

import json
import logging
import os
import sys
from typing import Any, Callable, Dict

# Run as a script from anywhere: the checkout's package comes first.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from mcplite import Client, MCPError  # noqa: E402

#: Seconds per request: below the suite's own 30 s limit, so a hang ends with our message, not a kill.
TIMEOUT = 20.0

Scenario = Callable[[str, Dict[str, Any]], None]
SCENARIOS: Dict[str, Scenario] = {}


def scenario(name: str) -> Callable[[Scenario], Scenario]:
    """Register the function that runs scenario ``name`` against a URL (with the suite's context)."""
    def register(run: Scenario) -> Scenario:
        SCENARIOS[name] = run
        return run
    return register


@scenario("initialize")
def initialize(url: str, context: Dict[str, Any]) -> None:
    """The handshake is the test: protocol version, clientInfo, then the initialized notification.

    The mock declares no capabilities, answers notifications with a JSON body and GET with 400."""
    with Client(url, timeout=TIMEOUT) as client:
        client.ping()


@scenario("tools_call")
def tools_call(url: str, context: Dict[str, Any]) -> None:
    """Call the mock's add_numbers tool (it answers over SSE)."""
    with Client(url, timeout=TIMEOUT) as client:
        client.call_tool("add_numbers", {"a": 5, "b": 3}, raise_on_error=True)


@scenario("elicitation-sep1034-client-defaults")
def elicitation_defaults(url: str, context: Dict[str, Any]) -> None:
    """Accept the mock's form, filling every field from its schema default (SEP-1034)."""
    with Client(url, timeout=TIMEOUT, elicitation=accept_with_defaults) as client:
        client.call_tool("test_client_elicitation_defaults", raise_on_error=True)


@scenario("sse-retry")
def sse_retry(url: str, context: Dict[str, Any]) -> None:
    """The mock closes the call's SSE stream after a priming event with ``retry: 500``; the transport
    must wait that long, then resume with GET and ``Last-Event-ID`` to receive the result."""
    with Client(url, timeout=TIMEOUT) as client:
        client.call_tool("test_reconnection", raise_on_error=True)


def accept_with_defaults(params: Dict[str, Any]) -> Dict[str, Any]:
    """An elicitation answer as a person who changes nothing would give: every default, accepted."""
    properties = params.get("requestedSchema", {}).get("properties", {})
    content = {name: field["default"] for name, field in properties.items() if "default" in field}
    return {"action": "accept", "content": content}


def main() -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    name = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    if len(sys.argv) < 2 or name not in SCENARIOS:
        print(f"usage: MCP_CONFORMANCE_SCENARIO=NAME {sys.argv[0]} URL "
              f"(scenario {name!r}; known: {', '.join(sorted(SCENARIOS))})", file=sys.stderr)
        return 2
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    try:
        SCENARIOS[name](sys.argv[-1], context)
    except MCPError as exc:
        print(f"{name}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
