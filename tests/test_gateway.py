"""The gateway: its configuration, names, forwarded calls in the four pairings of eras, and upstreams that fail.

Upstreams are real processes (the example servers, pinned to one era by examples/gateway/pinned_server.py);
the front is an in-memory `Client(gateway)` or real HTTP. Every wait is bounded by WAIT.
"""

import json
import os
import queue
import signal
import sys
import threading
from typing import Any, Dict, List

import pytest
from support import ROOT, WAIT, wait_until
from support.http import serving

from mcplite import Client, Gateway
from mcplite.gateway.config import ConfigError, load_config, parse_config
from mcplite.protocol.versions import ENVELOPE_VERSIONS

EVERYTHING = "examples.everything_server"


def pinned(era: str, module: str = EVERYTHING, **extra: Any) -> Dict[str, Any]:
    """A stdio upstream that speaks only ``era`` ("handshake" or "envelope")."""
    return {"command": sys.executable, "args": ["-m", "examples.gateway.pinned_server", era, module],
            "cwd": str(ROOT), **extra}


def demo(**extra: Any) -> Dict[str, Any]:
    return {"command": sys.executable, "args": ["-m", "examples.demo_server"], "cwd": str(ROOT), **extra}


def accept(params: Dict[str, Any]) -> Dict[str, Any]:
    return {"action": "accept", "content": {"username": "ada", "email": "ada@example.org"}}


FRONTS = {"handshake": "2025-11-25", "envelope": ENVELOPE_VERSIONS[0]}


# ---- configuration ---------------------------------------------------------------------------------------
def test_config_reads_both_shapes_and_the_gateway_keys(tmp_path: Any) -> None:
    path = tmp_path / "gw.json"
    path.write_text(json.dumps({"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "files", "${env:HOME_DIR}"], "env": {"TOKEN": "${SECRET}"}},
        "web": {"url": "https://example.org/mcp", "headers": {"Authorization": "Bearer ${SECRET}"},
                "prefix": "", "tools": {"allow": ["get_*"], "deny": ["get_secret"]}, "rename": {"get_page": "page"},
                "timeout": 5, "protocol_version": "2025-06-18"},
        "off": {"command": "x", "disabled": True}}}))
    config = load_config(path, environ={"HOME_DIR": "/home/ada", "SECRET": "s3"})
    files, web = config.upstreams
    assert (files.transport, files.argv, files.env, files.prefix) == \
        ("stdio", ["npx", "-y", "files", "/home/ada"], {"TOKEN": "s3"}, "files_")
    assert (web.transport, web.headers, web.timeout, web.protocol_version) == \
        ("http", {"Authorization": "Bearer s3"}, 5.0, "2025-06-18")
    assert [web.shows_tool(name) for name in ("get_page", "get_secret", "put")] == [True, False, False]
    assert web.front_name("get_page") == "page" and files.front_name("read") == "files_read"
    assert "s3" not in repr(web)  # secrets stay out of reprs
    vscode = parse_config({"servers": {"a": {"type": "sse", "url": "http://127.0.0.1:1/sse"},
                                       "b": {"type": "stdio", "command": "srv"}}})
    assert [(u.name, u.transport) for u in vscode.upstreams] == [("a", "sse"), ("b", "stdio")]


@pytest.mark.parametrize("entry, key, words", [
    ({"command": "x", "env": {"A": "${NOPE}"}}, "env", "NOPE"),
    ({"command": "x", "timeout": 0}, "timeout", "above 0"),
    ({"command": "x", "tools": {"allow": "get_*"}}, "tools", "list"),
    ({"command": "x", "prefx": "a"}, "prefx", "unknown"),
    ({"url": "ftp://x"}, "url", "http"),
    ({"command": "x", "protocol_version": "1999-01-01"}, "protocol_version", "revision"),
])
def test_a_config_error_names_the_file_the_server_and_the_key(tmp_path: Any, entry: Any, key: str,
                                                              words: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"mcpServers": {"srv": entry}}))
    with pytest.raises(ConfigError) as caught:
        load_config(path, environ={})
    message = str(caught.value)
    assert str(path) in message and "'srv'" in message and repr(key) in message and words in message


def test_a_name_served_by_two_upstreams_is_refused_at_start_naming_both() -> None:
    gateway = Gateway({"mcpServers": {"one": demo(prefix=""), "two": demo(prefix="")}})
    with pytest.raises(ConfigError, match="'one' and 'two'|'two' and 'one'"):
        gateway.start()
    assert all(upstream.state == "closed" for upstream in gateway.upstreams.values())


# ---- names and lists --------------------------------------------------------------------------------------
def test_names_are_prefixed_filtered_renamed_and_resources_keep_their_uris() -> None:
    config = {"mcpServers": {"demo": demo(), "ev": pinned("handshake", prefix="ev.", rename={"add": "sum"},
                                                          tools={"allow": ["add", "test_simple_*"]})}}
    with Gateway(config, page_size=2) as gateway, Client(gateway) as client:
        names = sorted(tool["name"] for tool in client.list_tools())  # (paginated by the front: 2 a page)
        assert names == ["demo_add", "demo_count_to", "ev.sum", "ev.test_simple_text"]
        assert client.call_tool("ev.sum", {"a": 2, "b": 3})["structuredContent"] == {"result": 5}
        assert "demo_review" in [prompt["name"] for prompt in client.list_prompts()]
        uris = [resource["uri"] for resource in client.list_resources()]
        assert "demo://python-version" in uris and "test://static-text" in uris
        assert client.read_resource("test://static-text")["contents"][0]["text"]
        assert client.read_resource("greeting://ada")["contents"][0]["text"] == "Hello, ada!"
        rows = {row["name"]: row for row in gateway.status()}
        assert rows["ev"]["revision"] == "2025-11-25" and rows["demo"]["revision"] == ENVELOPE_VERSIONS[0]


@pytest.mark.parametrize("front", sorted(FRONTS))
@pytest.mark.parametrize("upstream", ["handshake", "envelope"])
def test_a_list_change_upstream_reaches_the_front(front: str, upstream: str) -> None:
    changed: "queue.Queue[str]" = queue.Queue()
    with Gateway({"mcpServers": {"ev": pinned(upstream)}}) as gateway, \
            Client(gateway, protocol_version=FRONTS[front], on_list_changed=changed.put) as client:
        before = {tool["name"] for tool in client.list_tools()}
        client.call_tool("ev_test_trigger_tool_change")
        assert changed.get(timeout=WAIT) == "tools"
        after = wait_until(lambda: {tool["name"] for tool in client.list_tools()} - before or None)
        assert len(after) == 1 and next(iter(after)).startswith("ev_")


# ---- the four pairings: an elicitation round through the gateway -------------------------------------------
@pytest.mark.parametrize("front", sorted(FRONTS))
@pytest.mark.parametrize("upstream", ["handshake", "envelope"])
def test_an_elicitation_crosses_the_gateway_in_every_pairing_of_eras(front: str, upstream: str) -> None:
    asked: List[Dict[str, Any]] = []

    def elicit(params: Dict[str, Any]) -> Dict[str, Any]:
        asked.append(params)
        return accept(params)

    with Gateway({"mcpServers": {"ev": pinned(upstream)}}) as gateway, \
            Client(gateway, protocol_version=FRONTS[front], elicitation=elicit) as client:
        assert client.protocol_version == FRONTS[front]
        assert gateway.upstreams["ev"].revision == (FRONTS[upstream] if upstream == "envelope" else "2025-11-25")
        result = client.call_tool("ev_test_elicitation", {"message": "Who are you?"})
        assert "ada@example.org" in result["content"][0]["text"], result
        assert [params["message"] for params in asked] == ["Who are you?"]
        assert not gateway.calls._calls  # the call is over, on either side


def test_an_envelope_front_continues_the_same_upstream_call_across_its_rounds() -> None:
    """The front's retry must not start the handshake upstream's tool again: it answers the question the one
    upstream call is waiting on (test_input_required_result_request_state asks twice, in two rounds)."""
    with Gateway({"mcpServers": {"ev": pinned("handshake")}}) as gateway, \
            Client(gateway, protocol_version=FRONTS["envelope"], elicitation=accept) as client:
        first = client.call_tool("ev_test_elicitation", {"message": "Who?"}, input_required="return")
        assert first["resultType"] == "input_required"
        [key] = first["inputRequests"]
        upstream_calls = list(gateway.upstreams["ev"].in_flight)
        assert len(upstream_calls) == 1  # parked, waiting for the answer
        final = client.call_tool("ev_test_elicitation", {"message": "Who?"},
                                 input_responses={key: accept({})}, request_state=first["requestState"])
        assert "ada@example.org" in final["content"][0]["text"]
        assert gateway.upstreams["ev"].in_flight == []
        # A retry whose call is gone (another gateway process, or over) is refused, not run again.
        from mcplite import RemoteError
        with pytest.raises(RemoteError, match="no longer holds the call"):
            client.call_tool("ev_test_elicitation", {"message": "Who?"},
                             input_responses={key: accept({})}, request_state=first["requestState"])


def test_without_the_front_capability_the_upstream_question_fails_cleanly() -> None:
    with Gateway({"mcpServers": {"ev": pinned("handshake")}}) as gateway, \
            Client(gateway, protocol_version=FRONTS["handshake"]) as client:  # no elicitation callback
        result = client.call_tool("ev_test_elicitation", {"message": "Who?"})
        assert result.get("isError") is True


# ---- progress, logging, cancellation -----------------------------------------------------------------------
@pytest.mark.parametrize("upstream", ["handshake", "envelope"])
def test_progress_and_log_messages_pass_through(upstream: str) -> None:
    progress: List[Any] = []
    logs: List[Any] = []
    with Gateway({"mcpServers": {"ev": pinned(upstream)}}) as gateway, \
            Client(gateway, protocol_version=FRONTS["handshake"], on_log=logs.append) as client:
        client.set_logging_level("debug")
        client.call_tool("ev_test_tool_with_progress", progress=lambda *report: progress.append(report))
        assert [report[0] for report in progress] == [0, 50, 100]
        client.call_tool("ev_test_tool_with_logging")
        wait_until(lambda: len(logs) >= 3)
        assert [entry["data"] for entry in logs][-3:] == ["Tool execution started", "Tool processing data",
                                                         "Tool execution completed"]


def test_a_cancel_in_front_cancels_the_upstream_call() -> None:
    with Gateway({"mcpServers": {"ev": pinned("handshake")}}) as gateway, \
            Client(gateway, protocol_version=FRONTS["handshake"], elicitation=accept) as client:
        asked = threading.Event()
        upstream = gateway.upstreams["ev"]
        # The upstream tool waits for an elicitation the front never answers: a call that stays in flight.
        gateway_client = Client(gateway, protocol_version=FRONTS["handshake"],
                                elicitation=lambda params: (asked.set(), threading.Event().wait(WAIT))[1] or {})
        with gateway_client:
            pending = gateway_client.start_tool_call("ev_test_elicitation", {"message": "?"})
            assert asked.wait(WAIT)
            assert len(upstream.in_flight) == 1
            pending.cancel()
            wait_until(lambda: not upstream.in_flight, message="the upstream call was not cancelled")
        assert client.call_tool("ev_add", {"a": 1, "b": 1})["structuredContent"] == {"result": 2}


# ---- upstreams that fail -----------------------------------------------------------------------------------
def test_a_killed_upstream_is_reported_restarted_and_its_tools_come_back() -> None:
    changed: "queue.Queue[str]" = queue.Queue()
    config = {"mcpServers": {"demo": demo(), "ev": pinned("handshake")}}
    with Gateway(config, restart_delay=0.05, max_restart_delay=0.2) as gateway, \
            Client(gateway, on_list_changed=changed.put) as client:
        upstream = gateway.upstreams["demo"]
        assert client.call_tool("demo_add", {"a": 1, "b": 2})["structuredContent"] == {"result": 3}
        first = upstream.connections
        os.kill(upstream.client.transport.process.pid, signal.SIGKILL)  # type: ignore
        wait_until(lambda: upstream.connections > first, message="the upstream did not come back")
        assert changed.get(timeout=WAIT) == "tools"  # withdrawn (and added again)
        wait_until(lambda: "demo_add" in {tool["name"] for tool in client.list_tools()})
        assert client.call_tool("demo_add", {"a": 2, "b": 2})["structuredContent"] == {"result": 4}
        assert client.call_tool("ev_add", {"a": 1, "b": 1})["structuredContent"] == {"result": 2}


def test_a_call_to_an_upstream_that_dies_mid_call_is_an_error_naming_it() -> None:
    config = {"mcpServers": {"ev": pinned("handshake")}}
    with Gateway(config, restart_delay=0.05) as gateway, \
            Client(gateway, protocol_version=FRONTS["handshake"]) as client:
        upstream = gateway.upstreams["ev"]
        process = upstream.client.transport.process  # type: ignore

        def elicit(params: Dict[str, Any]) -> Dict[str, Any]:
            os.kill(process.pid, signal.SIGKILL)  # dies while its tool waits for the answer
            process.wait(WAIT)
            return accept(params)

        with Client(gateway, protocol_version=FRONTS["handshake"], elicitation=elicit) as asking:
            result = asking.call_tool("ev_test_elicitation", {"message": "?"})
        assert result.get("isError") is True
        assert "upstream 'ev'" in result["content"][0]["text"], result
        wait_until(lambda: upstream.state == "up" and upstream.connections >= 2)
        assert client.call_tool("ev_add", {"a": 1, "b": 1})["structuredContent"] == {"result": 2}


def test_an_upstream_that_will_not_start_is_reported_and_the_gateway_serves_the_others() -> None:
    config = {"mcpServers": {
        "demo": demo(),
        "broken": {"command": sys.executable, "args": ["-c", "import sys; print('no such module: x', "
                                                             "file=sys.stderr); sys.exit(2)"]}}}
    with Gateway(config, restart_delay=5, start_timeout=WAIT) as gateway, Client(gateway) as client:
        assert client.call_tool("demo_add", {"a": 1, "b": 2})["structuredContent"] == {"result": 3}
        row = {row["name"]: row for row in gateway.status()}["broken"]
        assert row["state"] == "down" and "no such module: x" in row["error"]


# ---- HTTP in front ------------------------------------------------------------------------------------------
def test_the_gateway_serves_over_http() -> None:
    with Gateway({"mcpServers": {"ev": pinned("handshake")}}) as gateway, serving(gateway) as http:
        with Client(http.url, elicitation=accept) as client:
            result = client.call_tool("ev_test_elicitation", {"message": "Who?"})
            assert "ada@example.org" in result["content"][0]["text"]


def test_the_example_configuration_runs() -> None:
    os.chdir(ROOT)  # its commands are "python3 -m examples...."
    with Gateway(ROOT / "examples" / "gateway" / "gateway.json") as gateway, \
            Client(gateway, elicitation=accept) as client:
        assert all(row["state"] == "up" for row in gateway.status()), gateway.status()
        names = {tool["name"] for tool in client.list_tools()}
        assert {"demo_add", "ev_sum", "ev_test_elicitation"} <= names and "ev_test_reconnection" not in names
        assert client.call_tool("ev_sum", {"a": 1, "b": 2})["structuredContent"] == {"result": 3}
        assert gateway.upstreams["everything"].revision == "2025-11-25"


def test_a_completion_whose_upstream_dies_meanwhile_is_an_error_naming_it(tmp_path: Any) -> None:
    asked = tmp_path / "asked"
    script = f"""
import os, threading
from mcplite import Server
server = Server("slow-completions")

@server.prompt
def city(name: str) -> str:
    return name

@server.completion(prompt="city", argument="name")
def names(value, chosen):
    open({str(asked)!r}, "w").write(str(os.getpid()))
    threading.Event().wait(60)  # killed before it answers
    return []

server.run()
"""
    config = {"mcpServers": {"slow": {"command": sys.executable, "args": ["-c", script], "cwd": str(ROOT)}}}
    with Gateway(config, restart_delay=WAIT) as gateway, Client(gateway) as client:
        result: "queue.Queue[Any]" = queue.Queue()

        def complete() -> None:
            try:
                result.put(client.complete({"type": "ref/prompt", "name": "slow_city"}, "name", "O"))
            except Exception as exc:
                result.put(exc)

        asking = threading.Thread(target=complete)
        asking.start()
        pid = int(wait_until(lambda: asked.exists() and asked.read_text()))
        os.kill(pid, signal.SIGKILL)
        asking.join(WAIT)
        assert not asking.is_alive()
        error = result.get(timeout=WAIT)
        from mcplite import RemoteError
        assert isinstance(error, RemoteError) and error.code == -32000, error
        assert "upstream 'slow' is unavailable" in error.message


@pytest.mark.parametrize("text, problem", [
    ('{"mcpServers": ' + "[" * 100000 + "]" * 100000 + "}", "nesting deeper than"),
    (b'{"mcpServers": {"\xff": {}}}', "not valid JSON"),
])
def test_a_config_file_beyond_the_json_bounds_is_a_config_error(tmp_path: Any, text: Any, problem: str) -> None:
    path = tmp_path / "gw.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(ConfigError, match=problem):
        load_config(path)
