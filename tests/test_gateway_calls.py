"""The gateway's forwarded calls: no thread per call, every progress report, upstreams that are down or that
refuse ``subscriptions/listen``, resources two upstreams share, and what the "down" message quotes.

Upstreams are real processes (the example servers, a scripted 2026-07-28 server, mcp-server-time from .peers
when installed); the front is an in-memory `Client(gateway)`. Every wait is bounded by WAIT.
"""

import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest
from support import ROOT, WAIT, wait_until

from mcplite import Client, Gateway, RemoteError
from mcplite.gateway.config import ConfigError, parse_config

NO_LISTEN_SERVER = str(Path(__file__).parent / "fixtures" / "no_listen_server.py")
TIME_PYTHON = ROOT / ".peers" / "py" / "bin" / "python"


def pinned(era: str, module: str = "examples.everything_server", **extra: Any) -> Dict[str, Any]:
    return {"command": sys.executable, "args": ["-m", "examples.gateway.pinned_server", era, module],
            "cwd": str(ROOT), **extra}


def demo(**extra: Any) -> Dict[str, Any]:
    return {"command": sys.executable, "args": ["-m", "examples.demo_server"], "cwd": str(ROOT), **extra}


def script(source: str, **extra: Any) -> Dict[str, Any]:
    return {"command": sys.executable, "args": ["-c", source], "cwd": str(ROOT),
            "env": {"PYTHONPATH": str(ROOT)}, **extra}


# ---- a server without subscriptions/listen -------------------------------------------------------------------
def test_a_client_with_callbacks_connects_to_a_server_that_refuses_listen() -> None:
    # It declares list changes and resource subscriptions, and answers subscriptions/listen with -32601: the
    # client connects anyway, without notifications.
    with Client.stdio([sys.executable, NO_LISTEN_SERVER], on_list_changed=lambda kind: None,
                      on_resource_updated=lambda uri: None, timeout=WAIT) as client:
        assert client.protocol_version == "2026-07-28"
        assert client.call_tool("hello")["content"][0]["text"] == "hello"


def test_the_gateway_serves_an_upstream_that_refuses_listen() -> None:
    with Gateway({"mcpServers": {"nl": {"command": sys.executable, "args": [NO_LISTEN_SERVER]}}},
                 start_timeout=WAIT) as gateway, Client(gateway) as client:
        assert gateway.upstreams["nl"].state == "up", gateway.status()
        assert client.call_tool("nl_hello")["content"][0]["text"] == "hello"


def time_server() -> List[str]:
    # .ci/run installs it (tests/interop/run.py --install-python-sdk); elsewhere the test says why it skips.
    if not TIME_PYTHON.exists() or not list(TIME_PYTHON.parent.parent.glob("lib/python3*/site-packages/mcp_server_time")):
        pytest.skip("mcp-server-time is not installed in .peers/py (python3 tests/interop/run.py --install-python-sdk)")
    return [str(TIME_PYTHON), "-m", "mcp_server_time", "--local-timezone", "UTC"]


def test_mcp_server_time_connects_with_on_list_changed() -> None:
    argv = time_server()
    with Client.stdio(argv, on_list_changed=lambda kind: None, timeout=WAIT) as client:
        assert "get_current_time" in {tool["name"] for tool in client.list_tools()}


# ---- the common path: no thread per call, every progress report ------------------------------------------------
@pytest.fixture
def thread_starts() -> Iterator[List[str]]:
    started: List[str] = []
    original = threading.Thread.start

    def start(self: threading.Thread) -> None:
        started.append(self.name)
        original(self)

    threading.Thread.start = start  # type: ignore[method-assign]
    try:
        yield started
    finally:
        threading.Thread.start = original  # type: ignore[method-assign]


@pytest.mark.parametrize("upstream", ["handshake", "envelope"])
def test_a_forwarded_call_starts_no_thread(upstream: str, thread_starts: List[str]) -> None:
    with Gateway({"mcpServers": {"ev": pinned(upstream)}}) as gateway, Client(gateway) as client:
        for i in range(20):  # warm: the pools have their threads
            client.call_tool("ev_add", {"a": i, "b": 1})
        thread_starts.clear()
        for i in range(50):
            assert client.call_tool("ev_add", {"a": i, "b": 1})["structuredContent"] == {"result": i + 1}
        assert len(thread_starts) < 5, thread_starts


@pytest.mark.parametrize("upstream", ["handshake", "envelope"])
def test_every_progress_report_crosses_the_gateway(upstream: str) -> None:
    # The first report used to be lost now and then: the call's driver sent the request before the front
    # handler was there to take its reports.
    config = {"mcpServers": {"env": pinned(upstream, "examples.interop_server")}}
    with Gateway(config) as gateway, Client(gateway, protocol_version="2025-11-25") as client:
        counts = []
        for _ in range(150):
            seen: List[float] = []
            client.call_tool("env_countdown", {"steps": 3}, progress=lambda p, t, m: seen.append(p))
            counts.append(tuple(seen))
        assert set(counts) == {(1, 2, 3)}, [count for count in counts if count != (1, 2, 3)]


# ---- an upstream that is down ----------------------------------------------------------------------------------
def test_a_request_to_a_withdrawn_upstream_names_it_and_why() -> None:
    config = {"mcpServers": {"demo": demo(), "ev": pinned("handshake")}}
    with Gateway(config, restart_delay=60, max_restart_delay=60) as gateway, \
            Client(gateway, protocol_version="2025-11-25") as client:
        upstream = gateway.upstreams["demo"]
        os.kill(upstream.client.transport.process.pid, signal.SIGKILL)  # type: ignore
        wait_until(lambda: upstream.state == "down", message="the upstream was not withdrawn")
        assert "demo_add" not in {tool["name"] for tool in client.list_tools()}
        result = client.call_tool("demo_add", {"a": 1, "b": 2})
        assert result.get("isError") is True
        assert result["content"][0]["text"].startswith("upstream 'demo' is unavailable: it exited"), result
        for ask in (lambda: client.get_prompt("demo_review", {"code": "x"}),
                    lambda: client.read_resource("demo://python-version"),
                    lambda: client.read_resource("greeting://ada")):  # (a template's)
            with pytest.raises(RemoteError) as refused:
                ask()
            assert refused.value.code == -32000 and "upstream 'demo' is unavailable" in refused.value.message
        with pytest.raises(RemoteError, match="Unknown tool"):  # a name nobody served is still unknown
            client.call_tool("demo_nothing")
        assert client.call_tool("ev_add", {"a": 1, "b": 1})["structuredContent"] == {"result": 2}


NOISY = """
import sys
from mcplite import Server
server = Server("noisy")

@server.tool
def noisy() -> str:
    print("a warning about nothing", file=sys.stderr, flush=True)
    return "ok"

@server.tool
def quiet() -> str:
    return "ok"

server.run()
"""


def test_the_down_message_quotes_no_stderr_written_before_the_last_answer() -> None:
    with Gateway({"mcpServers": {"n": script(NOISY)}}, restart_delay=60, max_restart_delay=60) as gateway, \
            Client(gateway) as client:
        upstream = gateway.upstreams["n"]
        assert client.call_tool("n_noisy")["content"][0]["text"] == "ok"
        wait_until(lambda: "a warning about nothing" in upstream.stderr)
        client.call_tool("n_quiet")  # answered after the line: the line explains nothing of what follows
        os.kill(upstream.client.transport.process.pid, signal.SIGKILL)  # type: ignore
        wait_until(lambda: upstream.state == "down", message="the upstream was not withdrawn")
        (row,) = gateway.status()
        assert "it exited" in row["error"] and "a warning about nothing" not in row["error"], row


# ---- two upstreams that list one resource ---------------------------------------------------------------------
def test_two_upstreams_sharing_a_resource_are_told_what_works() -> None:
    with pytest.raises(ConfigError) as refused:
        Gateway({"mcpServers": {"a": demo(), "b": demo()}}).start()
    assert '"resources": {"deny"' in str(refused.value) and "prefix" not in str(refused.value)
    config = {"mcpServers": {"a": demo(), "b": demo(resources={"deny": ["demo://*", "greeting://*"]})}}
    with Gateway(config) as gateway, Client(gateway) as client:
        assert [resource["uri"] for resource in client.list_resources()] == ["demo://python-version"]
        assert gateway.catalog.owner_of_uri("demo://python-version") == "a"
        assert {tool["name"] for tool in client.list_tools()} >= {"a_add", "b_add"}


def test_resources_allow_and_deny_are_read_and_checked() -> None:
    config = parse_config({"mcpServers": {"s": {"command": "x", "resources": {"allow": ["file:///*"],
                                                                                "deny": ["file:///secret*"]}}}})
    (upstream,) = config.upstreams
    assert [upstream.shows_resource(uri) for uri in ("file:///a", "file:///secret.txt", "http://x")] == \
        [True, False, False]
    with pytest.raises(ConfigError, match="'resources'"):
        parse_config({"mcpServers": {"s": {"command": "x", "resources": {"allow": "file:///*"}}}})
