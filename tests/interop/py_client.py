"""Run the interop checks with the official Python SDK's client (PyPI ``mcp``) against a server.

    .peers/py/bin/python tests/interop/py_client.py [--mode M] [--expect V] stdio -- COMMAND [ARG...]
    .peers/py/bin/python tests/interop/py_client.py [--mode M] [--expect V] streamable-http|sse URL

The SDK's results are pydantic models: each is dumped back to its wire JSON (camelCase, no nulls) and
checked by the same functions as mcplite's client (checks.py). Written against mcp 2.x.

``--mode`` is the client's ``mode``: ``auto`` (its default: probe ``server/discover`` and adopt 2026-07-28 if
the server offers it, else fall back to the ``initialize`` handshake), ``legacy`` (the handshake only) or a
modern version (adopted without a probe). ``--expect``: the protocol version the connection must end on
(default: the contract's handshake version in legacy mode, either era's otherwise). The first line out says
which version was negotiated (``NEGOTIATED 2025-11-25``), so that a silent fall-back is seen.

On 2026-07-28 the server sends no requests: it answers ``tools/call`` with an input-required result, which the
client's driver fulfils through the same sampling, elicitation and roots callbacks, retrying the call with the
answers. Log messages come only for requests that ask for them (``log_level``), and there is no
``logging/setLevel``.
"""

import sys
import warnings
from typing import Any, Dict, List

import anyio
import mcp_types as types
from checks import (
    CONTRACT, WAIT, ClientRoots, ElicitingUser, LogCollector, Report, SamplingModel, verify_elicitation,
    verify_initialize, verify_logs, verify_progress, verify_prompt, verify_prompts_list, verify_read,
    verify_resources_list, verify_roots, verify_sampling, verify_structured, verify_templates_list, verify_tools_list,
)
from mcp import Client, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.shared.exceptions import MCPDeprecationWarning

#: Where a 2026-07-28 result names the server.
SERVER_INFO_META_KEY = "io.modelcontextprotocol/serverInfo"

# Logging, sampling and roots are deprecated from 2026-07-28 on, still in that revision; the checks use them.
warnings.simplefilter("ignore", MCPDeprecationWarning)


def wire(model: Any) -> Dict[str, Any]:
    """A pydantic model as the JSON object it is on the wire."""
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


def server_for(transport: str, target: List[str]) -> Any:
    if transport == "stdio":
        return StdioServerParameters(command=target[0], args=target[1:])
    if transport == "sse":
        return sse_client(target[0], timeout=WAIT)
    return target[0]  # a URL: the SDK speaks Streamable HTTP to it


async def run(transport: str, target: List[str], mode: str, expected: List[str]) -> int:
    report = Report()
    logs, model, user, roots = LogCollector(), SamplingModel(), ElicitingUser(), ClientRoots()

    async def on_sampling(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        return types.CreateMessageResult.model_validate(model(wire(params)))

    async def on_elicitation(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult.model_validate(user(wire(params)))

    async def on_list_roots(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult.model_validate({"roots": roots()})

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs(wire(params))

    # log_level: on 2026-07-28 every request asks for its log messages at this level; no effect on the handshake.
    client = Client(server_for(transport, target), read_timeout_seconds=WAIT, sampling_callback=on_sampling,
                    elicitation_callback=on_elicitation, list_roots_callback=on_list_roots, logging_callback=on_log,
                    mode=mode, log_level=CONTRACT["modernLogLevel"])
    try:
        await client.__aenter__()
    except Exception as exc:
        report.outcome("initialize", exc)
        return 1
    report.negotiated(client.protocol_version)
    modern = client.protocol_version == CONTRACT["modernProtocolVersion"]
    try:
        async def check(name: str, body: Any) -> None:
            try:
                await body()
            except Exception as exc:
                report.outcome(name, exc)
            else:
                report.outcome(name, None)

        async def initialize() -> None:
            info = wire(client.server_info) if client.server_info is not None else None
            if info is None and mode not in ("legacy", "auto"):
                # A pinned client adopts its version without asking the server anything: ask who it is.
                raw = await client.session.send_discover(mode)
                info = (raw.get("_meta") or {}).get(SERVER_INFO_META_KEY)
            verify_initialize(client.protocol_version, info, expected)
        await check("initialize", initialize)

        async def tools_list() -> None:
            verify_tools_list([wire(tool) for tool in (await client.list_tools()).tools])
        await check("tools/list", tools_list)

        for tool in CONTRACT["structuredTools"]:
            async def call(tool: str = tool) -> None:
                verify_structured(tool, wire(await client.call_tool(tool, CONTRACT[tool]["arguments"])))
            await check(f"tools/call {tool} (structured)", call)

        async def progress() -> None:
            reports: List[Any] = []

            async def on_progress(done: float, total: Any, message: Any) -> None:
                reports.append((done, total, message))
            # Handshake: the session's level, set once (the spec forbids setLevel without the logging capability).
            # 2026-07-28: no setLevel; each request asks for its logs (log_level above).
            if not modern and client.server_capabilities.logging is not None:
                await client.set_logging_level("info")
            result = await client.call_tool("countdown", CONTRACT["countdown"]["arguments"],
                                            progress_callback=on_progress)
            verify_progress(reports, wire(result))
        await check("progress", progress)

        async def logging() -> None:
            # The log notifications are delivered on the SDK's own task; wait for them off the event loop.
            verify_logs(await anyio.to_thread.run_sync(logs.wait_for, len(CONTRACT["countdown"]["logs"])))
        await check("logging", logging)

        async def sampling() -> None:
            verify_sampling(model, wire(await client.call_tool("ask_model", CONTRACT["sampling"]["arguments"])))
        await check("sampling", sampling)

        async def elicitation() -> None:
            verify_elicitation(user, wire(await client.call_tool("ask_user", {})))
        await check("elicitation", elicitation)

        async def list_roots() -> None:
            verify_roots(roots, wire(await client.call_tool("list_roots", {})))
        await check("roots", list_roots)

        resource, template = CONTRACT["resource"], CONTRACT["template"]

        async def resources_list() -> None:
            verify_resources_list([wire(r) for r in (await client.list_resources()).resources])
        await check("resources/list", resources_list)

        async def read() -> None:
            verify_read(wire(await client.read_resource(resource["uri"])), resource["uri"], resource["text"])
        await check("resources/read", read)

        async def templates_list() -> None:
            verify_templates_list([wire(t) for t in (await client.list_resource_templates()).resource_templates])
        await check("resources/templates/list", templates_list)

        async def read_template() -> None:
            verify_read(wire(await client.read_resource(template["uri"])), template["uri"], template["text"])
        await check("resources/read (template)", read_template)

        prompt = CONTRACT["prompt"]

        async def prompts_list() -> None:
            verify_prompts_list([wire(p) for p in (await client.list_prompts()).prompts])
        await check("prompts/list", prompts_list)

        async def get_prompt() -> None:
            verify_prompt(wire(await client.get_prompt(prompt["name"], prompt["arguments"])))
        await check("prompts/get", get_prompt)
    finally:
        await client.__aexit__(None, None, None)
    return 1 if report.failed else 0


def main(argv: List[str]) -> int:
    options = {"--mode": "auto", "--expect": ""}
    while argv and argv[0] in options:
        options[argv[0]], argv = argv[1], argv[2:]
    mode = options["--mode"]
    if options["--expect"]:
        expected = [options["--expect"]]
    elif mode == "legacy":
        expected = [CONTRACT["protocolVersion"]]
    else:
        expected = [CONTRACT["protocolVersion"], CONTRACT["modernProtocolVersion"]]
    transport, target = argv[0], [arg for arg in argv[1:] if arg != "--"]
    return anyio.run(run, transport, target, mode, expected)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
