"""Run the interop checks with mcplite's client against another SDK's server.

    python3 tests/interop/mcplite_client.py stdio -- COMMAND [ARG...]
    python3 tests/interop/mcplite_client.py streamable-http|sse URL

run.py starts this with mcplite importable (PYTHONPATH) and reads one ``PASS``/``FAIL`` line per check.

The client is pinned to the handshake era (``INTEROP_MCPLITE_PROTOCOL``, default 2025-11-25): the peers'
servers here ask for sampling and elicitation with server-to-client requests, which 2026-07-28 does not have
(py_server.py and ts_server.mjs would have to answer input-required instead). mcplite's own default, "auto",
would negotiate 2026-07-28 with the Python SDK 2.3.0's server.
"""

import os
import sys
from functools import partial
from typing import Any, List, Optional, Sequence, Tuple

from checks import (
    CONTRACT, WAIT, ElicitingUser, LogCollector, Report, SamplingModel, expect_equal, verify_elicitation,
    verify_initialize, verify_logs, verify_progress, verify_prompt, verify_prompts_list, verify_read,
    verify_resources_list, verify_sampling, verify_structured, verify_templates_list, verify_tools_list,
)

from mcplite import Client
from mcplite.transports.http_client import HTTPClientTransport

#: What `HTTPClientTransport.transport` must say once connected: the URL alone decides (Streamable HTTP
#: first, HTTP+SSE when the server refuses that), as for ``Client(url)``.
HTTP_MODES = {"streamable-http": "streamable", "sse": "sse"}


def connect(transport: str, target: Sequence[str],
            **callbacks: Any) -> Tuple[Client, Optional[HTTPClientTransport]]:
    """A client for ``target``, and its HTTP transport (None for stdio)."""
    version = os.environ.get("INTEROP_MCPLITE_PROTOCOL", "2025-11-25")
    if transport == "stdio":
        return Client.stdio(list(target), timeout=WAIT, protocol_version=version, **callbacks), None
    http = HTTPClientTransport(target[0], timeout=WAIT)
    return Client(http, timeout=WAIT, protocol_version=version, **callbacks), http


def verify_http_mode(transport: str, http: Optional[HTTPClientTransport]) -> None:
    if http is not None:
        expect_equal(http.transport, HTTP_MODES[transport], "HTTP transport in use")


def call_structured(client: Client, tool: str) -> None:
    verify_structured(tool, client.call_tool(tool, CONTRACT[tool]["arguments"]))


def main(argv: List[str]) -> int:
    transport, target = argv[0], [arg for arg in argv[1:] if arg != "--"]
    report = Report()
    logs, model, user = LogCollector(), SamplingModel(), ElicitingUser()
    try:
        client, http = connect(transport, target, sampling=model, elicitation=user, on_log=logs)
        client.connect()
    except Exception as exc:
        report.outcome("initialize", exc)
        return 1
    try:
        def initialize() -> None:
            verify_initialize(client.protocol_version, client.server_info)
            verify_http_mode(transport, http)
        report.run("initialize", initialize)
        report.run("tools/list", lambda: verify_tools_list(client.list_tools()))
        for tool in CONTRACT["structuredTools"]:
            report.run(f"tools/call {tool} (structured)", partial(call_structured, client, tool))

        progress: List[Tuple[float, Optional[float], Optional[str]]] = []

        def countdown() -> None:
            if "logging" in client.server_capabilities:  # the spec forbids setLevel otherwise
                client.set_logging_level("info")
            result = client.call_tool("countdown", CONTRACT["countdown"]["arguments"],
                                      progress=lambda *update: progress.append(update))
            verify_progress(progress, result)
        report.run("progress", countdown)
        report.run("logging", lambda: verify_logs(logs.wait_for(len(CONTRACT["countdown"]["logs"]))))

        report.run("sampling",
                   lambda: verify_sampling(model, client.call_tool("ask_model", CONTRACT["sampling"]["arguments"])))
        report.run("elicitation", lambda: verify_elicitation(user, client.call_tool("ask_user", {})))

        resource, template = CONTRACT["resource"], CONTRACT["template"]
        report.run("resources/list", lambda: verify_resources_list(client.list_resources()))
        report.run("resources/read",
                   lambda: verify_read(client.read_resource(resource["uri"]), resource["uri"], resource["text"]))
        report.run("resources/templates/list", lambda: verify_templates_list(client.list_resource_templates()))
        report.run("resources/read (template)",
                   lambda: verify_read(client.read_resource(template["uri"]), template["uri"], template["text"]))

        prompt = CONTRACT["prompt"]
        report.run("prompts/list", lambda: verify_prompts_list(client.list_prompts()))
        report.run("prompts/get", lambda: verify_prompt(client.get_prompt(prompt["name"], prompt["arguments"])))
    finally:
        client.close()
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
