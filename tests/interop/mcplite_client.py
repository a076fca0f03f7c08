"""Run the interop checks with mcplite's client against another SDK's server.

    python3 tests/interop/mcplite_client.py [--protocol P] [--expect V] stdio -- COMMAND [ARG...]
    python3 tests/interop/mcplite_client.py [--protocol P] [--expect V] streamable-http|sse URL

run.py starts this with mcplite importable (PYTHONPATH) and reads one ``PASS``/``FAIL`` line per check, after
a ``NEGOTIATED version`` line.

``--protocol`` is the client's ``protocol_version``: ``auto`` (mcplite's default: probe ``server/discover`` and
speak 2026-07-28 where the server does, else the ``initialize`` handshake) or a revision to pin (run.py's
"(2025-11-25)" legs pin the handshake). Without it, ``INTEROP_MCPLITE_PROTOCOL`` or ``auto``. ``--expect``: the
protocol version the connection must end on (default: the contract's handshake version when pinned to a
handshake revision, either era's in auto mode).

On 2026-07-28 the peers' servers ask for sampling, elicitation and roots with ``input_required`` results,
which the client answers through the same ``sampling=``, ``elicitation=`` and ``roots=`` callbacks as the
handshake's server-to-client requests, retrying the call (`mcplite.client.input_rounds`). That revision has no
``logging/setLevel``: the level set with ``set_logging_level`` rides in each later request's ``_meta``, and
the server's log messages for that request reach ``on_log`` as on the handshake.
"""

import os
import sys
from functools import partial
from typing import Any, List, Optional, Sequence, Tuple

from checks import (
    CONTRACT, WAIT, ClientRoots, ElicitingUser, LogCollector, Report, SamplingModel, expect_equal,
    verify_elicitation, verify_initialize, verify_logs, verify_progress, verify_prompt, verify_prompts_list,
    verify_read, verify_resources_list, verify_roots, verify_sampling, verify_structured, verify_templates_list,
    verify_tools_list,
)

from mcplite import Client
from mcplite.transports.http_client import HTTPClientTransport

#: What `HTTPClientTransport.transport` must say once connected: the URL alone decides (Streamable HTTP
#: first, HTTP+SSE when the server refuses that), as for ``Client(url)``.
HTTP_MODES = {"streamable-http": "streamable", "sse": "sse"}


def connect(transport: str, target: Sequence[str], version: str,
            **callbacks: Any) -> Tuple[Client, Optional[HTTPClientTransport]]:
    """A client for ``target`` speaking ``version`` ("auto" or a revision), and its HTTP transport (None for stdio)."""
    if transport == "stdio":
        return Client.stdio(list(target), timeout=WAIT, protocol_version=version, **callbacks), None
    http = HTTPClientTransport(target[0], timeout=WAIT)
    return Client(http, timeout=WAIT, protocol_version=version, **callbacks), http


def verify_http_mode(transport: str, http: Optional[HTTPClientTransport]) -> None:
    if http is not None:
        expect_equal(http.transport, HTTP_MODES[transport], "HTTP transport in use")


def call_structured(client: Client, tool: str) -> None:
    verify_structured(tool, client.call_tool(tool, CONTRACT[tool]["arguments"]))


def expected_versions(version: str, expect: str) -> List[str]:
    """The protocol versions the connection may end on: ``--expect``'s, else what ``version`` allows."""
    if expect:
        return [expect]
    if version == "auto":
        return [CONTRACT["protocolVersion"], CONTRACT["modernProtocolVersion"]]
    return [version]


def main(argv: List[str]) -> int:
    options = {"--protocol": os.environ.get("INTEROP_MCPLITE_PROTOCOL") or "auto", "--expect": ""}
    while argv and argv[0] in options:
        options[argv[0]], argv = argv[1], argv[2:]
    version = options["--protocol"]
    expected = expected_versions(version, options["--expect"])
    transport, target = argv[0], [arg for arg in argv[1:] if arg != "--"]
    report = Report()
    logs, model, user, roots = LogCollector(), SamplingModel(), ElicitingUser(), ClientRoots()
    try:
        client, http = connect(transport, target, version, sampling=model, elicitation=user, roots=roots,
                               on_log=logs)
        client.connect()
    except Exception as exc:
        report.outcome("initialize", exc)
        return 1
    report.negotiated(client.protocol_version)
    try:
        def initialize() -> None:
            verify_initialize(client.protocol_version, client.server_info, expected)
            verify_http_mode(transport, http)
        report.run("initialize", initialize)
        report.run("tools/list", lambda: verify_tools_list(client.list_tools()))
        for tool in CONTRACT["structuredTools"]:
            report.run(f"tools/call {tool} (structured)", partial(call_structured, client, tool))

        progress: List[Tuple[float, Optional[float], Optional[str]]] = []

        def countdown() -> None:
            # Handshake: one logging/setLevel for the session, only when the server declares logging (the spec
            # forbids it otherwise). 2026-07-28: nothing is sent now; the level rides in every later request's
            # _meta, and a server sends log messages only for requests that carry one.
            if client.session.enveloped:
                client.set_logging_level(CONTRACT["modernLogLevel"])
            elif "logging" in client.server_capabilities:
                client.set_logging_level("info")
            result = client.call_tool("countdown", CONTRACT["countdown"]["arguments"],
                                      progress=lambda *update: progress.append(update))
            verify_progress(progress, result)
        report.run("progress", countdown)
        report.run("logging", lambda: verify_logs(logs.wait_for(len(CONTRACT["countdown"]["logs"]))))

        report.run("sampling",
                   lambda: verify_sampling(model, client.call_tool("ask_model", CONTRACT["sampling"]["arguments"])))
        report.run("elicitation", lambda: verify_elicitation(user, client.call_tool("ask_user", {})))
        report.run("roots", lambda: verify_roots(roots, client.call_tool("list_roots", {})))

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
