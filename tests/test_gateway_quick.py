"""The gateway's quick way for a tool call (`Gateway._call_later`): over stdio, in memory and the legacy HTTP+SSE
transport, a front ``tools/call`` is answered from the thread that reads the upstream's answer, and no front
thread waits for it. What it must keep from the usual way: the upstream's timeout, a cancel from the front,
the end of the front's input (every request read is answered), and a question on the way (handed to the usual
way: test_gateway's pairings).

The upstream is a real stdio process (its script written below); the front an in-memory `Client(gateway)` or
the gateway command over stdio. Every wait is bounded by WAIT.
"""

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest
from support import ROOT, WAIT, wait_until

from mcplite import Client, Gateway
from mcplite.protocol.versions import ENVELOPE_VERSIONS

FRONTS = {"handshake": "2025-11-25", "envelope": ENVELOPE_VERSIONS[0]}

#: An upstream with a tool that waits until told (or cancelled), and one that answers at once.
UPSTREAM = '''
import threading
from mcplite import Context, Server

server = Server("waiting", max_workers=64)


@server.tool
def wait(seconds: float, ctx: Context) -> str:
    """Wait, unless cancelled."""
    if ctx.cancelled.wait(seconds):
        return "cancelled"
    return f"waited {seconds:g} s"


@server.tool
def add(a: int, b: int) -> int:
    return a + b


server.run()
'''


@pytest.fixture
def upstream(tmp_path: Path) -> Dict[str, Any]:
    script = tmp_path / "waiting_server.py"
    script.write_text(UPSTREAM)
    # (PYTHONPATH: the script is outside the checkout, and mcplite need not be installed to run the tests)
    return {"command": sys.executable, "args": [str(script)], "cwd": str(ROOT), "env": {"PYTHONPATH": str(ROOT)}}


@pytest.mark.parametrize("front", sorted(FRONTS))
def test_calls_in_flight_hold_no_front_thread(upstream: Dict[str, Any], front: str) -> None:
    """Twelve calls waiting upstream, through a front pool of four threads: the usual way would hold a thread
    per call, and a thirteenth call would queue behind them until one ended."""
    with Gateway({"mcpServers": {"w": upstream}}, max_workers=4) as gateway, \
            Client(gateway, protocol_version=FRONTS[front]) as client:
        pending = [client.start_tool_call("w_wait", {"seconds": WAIT}) for _ in range(12)]
        wait_until(lambda: len(gateway.upstreams["w"].in_flight) == 12, message="the calls did not reach upstream")
        assert client.call_tool("w_add", {"a": 2, "b": 3}, timeout=WAIT / 4)["structuredContent"] == {"result": 5}
        assert len(gateway.upstreams["w"].in_flight) == 12
        for call in pending:
            call.cancel()
        wait_until(lambda: not gateway.upstreams["w"].in_flight, message="the cancels did not reach upstream")


@pytest.mark.parametrize("front", sorted(FRONTS))
def test_an_upstream_that_does_not_answer_in_time_is_an_error_result_and_is_cancelled(
        upstream: Dict[str, Any], front: str) -> None:
    with Gateway({"mcpServers": {"w": {**upstream, "timeout": 0.5}}}) as gateway, \
            Client(gateway, protocol_version=FRONTS[front]) as client:
        started = time.monotonic()
        result = client.call_tool("w_wait", {"seconds": WAIT})
        took = time.monotonic() - started
        assert result.get("isError") is True, result
        assert "timed out after 0.5 s" in result["content"][0]["text"], result
        assert "upstream 'w'" in result["content"][0]["text"], result
        assert 0.4 < took < 3.0, took
        assert not gateway.upstreams["w"].in_flight
        # A timeout of its own for each call, and the upstream still serves.
        assert client.call_tool("w_wait", {"seconds": 0.05})["content"][0]["text"] == "waited 0.05 s"
        assert client.call_tool("w_add", {"a": 1, "b": 1})["structuredContent"] == {"result": 2}


@pytest.mark.parametrize("front", sorted(FRONTS))
def test_a_cancel_in_front_reaches_the_upstream_tool(upstream: Dict[str, Any], front: str) -> None:
    with Gateway({"mcpServers": {"w": upstream}}) as gateway, \
            Client(gateway, protocol_version=FRONTS[front]) as client:
        pending = client.start_tool_call("w_wait", {"seconds": WAIT})
        wait_until(lambda: gateway.upstreams["w"].in_flight, message="the call did not reach upstream")
        started = time.monotonic()
        pending.cancel()
        wait_until(lambda: not gateway.upstreams["w"].in_flight, message="the upstream call was not cancelled")
        assert time.monotonic() - started < WAIT / 2
        assert client.call_tool("w_add", {"a": 1, "b": 2})["structuredContent"] == {"result": 3}


def test_arguments_the_schema_refuses_take_the_usual_way_and_say_why(upstream: Dict[str, Any]) -> None:
    with Gateway({"mcpServers": {"w": upstream}}) as gateway, Client(gateway) as client:
        result = client.call_tool("w_add", {"a": "one", "b": 2})
        assert result.get("isError") is True and "Invalid arguments for tool w_add" in result["content"][0]["text"]
        assert not gateway.upstreams["w"].in_flight


def test_every_request_read_is_answered_when_the_front_input_ends(upstream: Dict[str, Any], tmp_path: Path) -> None:
    """``printf requests | mcplite gateway`` answers each call, though no thread waits for them when the input
    ends: they are owed, as any request being handled is."""
    config = tmp_path / "gateway.json"
    config.write_text(json.dumps({"mcpServers": {"w": upstream}}))
    lines = [{"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "pipe", "version": "1"}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    lines += [{"jsonrpc": "2.0", "id": n, "method": "tools/call",
               "params": {"name": "w_wait", "arguments": {"seconds": 0.2 + n / 100}}} for n in range(1, 9)]
    lines += [{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "w_add",
                                                                            "arguments": {"a": 4, "b": 5}}}]
    done = subprocess.run([sys.executable, "-m", "mcplite", "gateway", str(config)], cwd=str(ROOT),
                          input="".join(json.dumps(line) + "\n" for line in lines), capture_output=True, text=True,
                          timeout=WAIT * 2)
    answers = {message["id"]: message for message in map(json.loads, done.stdout.splitlines()) if "id" in message}
    assert sorted(answers) == list(range(10)), done.stderr[-2000:]
    for n in range(1, 9):
        assert answers[n]["result"]["content"][0]["text"] == f"waited {0.2 + n / 100:g} s"
    assert answers[9]["result"]["structuredContent"] == {"result": 9}


def test_a_legacy_sse_front_takes_the_quick_way_too(upstream: Dict[str, Any]) -> None:
    """The legacy HTTP+SSE transport hands its POSTs to the session's pool (the answer goes on the SSE stream), so
    the session asks the gateway first there too: twelve calls waiting upstream hold no front thread."""
    from support.http import serving

    with Gateway({"mcpServers": {"w": upstream}}, max_workers=4) as gateway, serving(gateway) as http, \
            Client(http.url.replace("/mcp", "/sse")) as client:
        assert client.transport.transport == "sse"  # type: ignore[attr-defined]
        pending = [client.start_tool_call("w_wait", {"seconds": WAIT}) for _ in range(12)]
        wait_until(lambda: len(gateway.upstreams["w"].in_flight) == 12, message="the calls did not reach upstream")
        assert client.call_tool("w_add", {"a": 2, "b": 3}, timeout=WAIT / 4)["structuredContent"] == {"result": 5}
        for call in pending:
            call.cancel()
        wait_until(lambda: not gateway.upstreams["w"].in_flight, message="the cancels did not reach upstream")
