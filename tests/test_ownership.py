"""Nothing mcplite hands to user code is shared with another message (docs/architecture.md, "Ownership").

A handler's params, ``ctx.meta`` and its nested values, ``ctx.client_info`` and ``ctx.client_capabilities``, a
result, a notification's params, a callback's arguments: each is its own. Every test changes nested values of
what it was handed, then checks that later messages of the same connection are untouched, in both protocol eras
(2025-11-25: the handshake; 2026-07-28: every request carries the same ``_meta`` envelope), over the in-memory
transport and over a real stdio subprocess, on the server's side and on the client's.
"""

import json
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest
from support import ROOT, WAIT

from mcplite import Client

CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"
VERSION_BY_ERA = {"handshake": "2025-11-25", "envelope": "2026-07-28"}

# The server, as a module: imported here for the in-memory transport, run as a script for stdio.
SERVER = textwrap.dedent('''
    import json
    from typing import Any, Dict

    from mcplite import Context, Server

    server = Server("ownership", version="1.0")


    def snapshot(value: Any) -> Any:
        return json.loads(json.dumps(value))


    @server.tool
    def poke(ctx: Context, data: Dict[str, Any]) -> Dict[str, Any]:
        """Say what it was handed, then change every nested value of it."""
        meta, info, capabilities = ctx.meta, ctx.client_info, ctx.client_capabilities
        seen = {"data": snapshot(data), "meta": snapshot(meta), "info": snapshot(info),
                "capabilities": snapshot(capabilities)}
        ctx.log("info", {"nested": {"list": [1]}})
        data["nested"]["list"].append("poked")
        data["nested"]["added"] = True
        for value in meta.values():
            if isinstance(value, dict):
                value.clear()
                value["poked"] = True
        info["name"] = "poked"
        capabilities.clear()
        capabilities["poked"] = {}
        return seen


    if __name__ == "__main__":
        server.run()
''')


@pytest.fixture(scope="module")
def server_script(tmp_path_factory: Any) -> Path:
    path: Path = tmp_path_factory.mktemp("ownership") / "ownership_server.py"
    path.write_text(SERVER)
    return path


@pytest.fixture(params=["memory", "stdio"])
def transport(request: Any) -> str:
    return str(request.param)


@pytest.fixture(params=list(VERSION_BY_ERA))
def era(request: Any) -> str:
    return str(request.param)


def connect(kind: str, era: str, script: Path, **options: Any) -> Client:
    info = {"name": "owner", "version": "1", "nested": {"list": [1]}}
    if kind == "memory":
        namespace: Dict[str, Any] = {"__name__": "ownership_server"}
        exec(compile(SERVER, str(script), "exec"), namespace)
        return Client(namespace["server"], protocol_version=VERSION_BY_ERA[era], client_info=info, timeout=WAIT,
                      **options).connect()
    env = {"PYTHONPATH": str(ROOT)}
    return Client.stdio([sys.executable, str(script)], env=env, protocol_version=VERSION_BY_ERA[era], client_info=info,
                        timeout=WAIT, **options).connect()


@pytest.fixture
def logs() -> List[Dict[str, Any]]:
    return []


@pytest.fixture
def client(transport: str, era: str, server_script: Path, logs: List[Dict[str, Any]]) -> Iterator[Client]:
    def on_log(params: Dict[str, Any]) -> None:
        logs.append(json.loads(json.dumps(params)))
        params["data"]["nested"]["list"].append("changed by the callback")  # the next message's must not move
        params["data"]["nested"].clear()

    with connect(transport, era, server_script, on_log=on_log, elicitation=lambda params: {"action": "decline"}) \
            as client:
        client.set_logging_level("debug")
        yield client


def call(client: Client) -> Dict[str, Any]:
    return client.call_tool("poke", {"data": {"nested": {"list": [1]}}})


def test_a_handler_that_changes_what_it_was_handed_changes_no_later_request(client: Client, era: str) -> None:
    first = call(client)["structuredContent"]
    assert first["data"] == {"nested": {"list": [1]}}
    assert first["info"]["nested"] == {"list": [1]} and first["capabilities"] and "poked" not in first["capabilities"]
    if era == "envelope":  # the request's own _meta, nested values included
        assert first["meta"][CLIENT_INFO]["nested"] == {"list": [1]}
        assert "poked" not in json.dumps(first["meta"])
    for _ in range(4):  # a connection's later requests repeat the same _meta text
        assert call(client)["structuredContent"] == first


def test_a_caller_that_changes_a_result_changes_no_later_result(client: Client, era: str) -> None:
    first = call(client)
    pristine = json.loads(json.dumps(first))
    first["structuredContent"]["data"]["nested"]["list"].append("changed by the caller")
    first["content"][0]["text"] = "changed"
    if era == "envelope":
        assert first["_meta"][SERVER_INFO] == {"name": "ownership", "version": "1.0"}
        first["_meta"][SERVER_INFO]["name"] = "changed by the caller"
        first["_meta"].clear()
    for _ in range(3):
        again = call(client)
        assert again == pristine
        again["_meta" if era == "envelope" else "content"].clear()


def test_a_callback_that_changes_its_arguments_changes_no_later_notification(
        client: Client, logs: List[Dict[str, Any]]) -> None:
    for _ in range(4):
        call(client)
    assert len(logs) >= 3  # (a call's notification comes before its answer)
    for params in logs:
        assert params["data"] == {"nested": {"list": [1]}}
