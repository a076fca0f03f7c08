"""``mcplite inspect`` without a browser: the URL, the token, the Host and Origin checks, the JSON API, the event
stream, the server's questions answered through the API, and Ctrl-C leaving no process behind (issue 35).

The page itself, in headless Chromium, is tests/test_inspector_browser.py.
"""

import json
import os
import sys
from http.client import HTTPConnection
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

from support import ROOT, WAIT
from support.inspector import EVERYTHING, Inspecting, everything_over_http, inspecting, processes_marked, still_running
from support.threads import Background

STDIO = ["inspect", "--no-browser", "--", sys.executable, "-m", "mcplite", "serve", EVERYTHING]


@pytest.fixture(scope="module")
def page() -> Iterator[Inspecting]:
    with inspecting(*STDIO) as running:
        yield running


def request(page: Inspecting, method: str, path: str, body: Any = None, *, token: Optional[str] = "header",
            headers: Optional[Dict[str, str]] = None) -> Tuple[int, Dict[str, str], bytes]:
    connection = HTTPConnection("127.0.0.1", page.port, timeout=WAIT)
    sent = {"Content-Type": "application/json"}
    if token == "header":
        sent["X-Inspector-Token"] = page.token
    elif token is not None:
        sent["X-Inspector-Token"] = token
    sent.update(headers or {})
    try:
        connection.request(method, path, body=None if body is None else json.dumps(body), headers=sent)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def api(page: Inspecting, action: str, body: Any = None) -> Any:
    status, _, data = request(page, "POST", f"/api/{action}", body or {})
    assert status == 200, data
    answer = json.loads(data)
    assert "error" not in answer, answer
    return answer["result"]


def test_the_url_is_loopback_with_a_token_and_serves_the_page(page: Inspecting) -> None:
    assert page.url.startswith("http://127.0.0.1:") and len(page.token) >= 32
    status, headers, body = request(page, "GET", f"/?token={page.token}", token=None)
    assert status == 200 and b"mcplite inspector" in body
    assert page.token.encode() in body  # its own files are asked for with it
    assert "default-src 'none'" in headers["content-security-policy"]  # nothing from the network
    for name in ("app.js", "style.css"):
        assert request(page, "GET", f"/{name}?token={page.token}", token=None)[0] == 200


@pytest.mark.parametrize("method,path", [("GET", "/"), ("GET", "/app.js"), ("GET", "/events"),
                                         ("POST", "/api/info"), ("POST", "/api/call")])
@pytest.mark.parametrize("token", [None, "", "wrong-token-of-the-same-length-00000000"])
def test_no_request_without_the_token_is_served(page: Inspecting, method: str, path: str, token: Optional[str]) -> None:
    status, _, body = request(page, method, path + (f"?token={token}" if token is not None and method == "GET" else ""),
                              {"name": "add", "arguments": {"a": 1, "b": 2}} if method == "POST" else None,
                              token=token if method == "POST" else None)
    assert status == 403, body
    assert page.token.encode() not in body and b"inspector" not in body.lower().replace(b"inspect printed", b"")


@pytest.mark.parametrize("headers", [{"Host": "evil.example"}, {"Host": "127.0.0.1:1"},
                                     {"Origin": "http://evil.example"}, {"Origin": "http://127.0.0.1:1"},
                                     {"Origin": "null"}])
def test_a_wrong_host_or_origin_is_refused_even_with_the_token(page: Inspecting, headers: Dict[str, str]) -> None:
    assert request(page, "POST", "/api/info", {}, headers=headers)[0] == 403
    assert request(page, "GET", f"/?token={page.token}", token=None, headers=headers)[0] == 403


def test_the_pages_own_origin_and_localhost_are_accepted(page: Inspecting) -> None:
    for headers in ({"Origin": f"http://127.0.0.1:{page.port}"}, {"Host": f"localhost:{page.port}"}):
        assert request(page, "POST", "/api/info", {}, headers=headers)[0] == 200


def test_a_cross_site_form_post_is_refused(page: Inspecting) -> None:
    """A form of another site cannot send JSON: a text/plain body is refused (and it has no token either)."""
    status, _, _ = request(page, "POST", "/api/call", {}, headers={"Content-Type": "text/plain"})
    assert status == 415


def test_a_hostile_body_is_refused_or_answered_and_the_page_stays_usable(page: Inspecting) -> None:
    """A Content-Length that is not a number of bytes is 400 (a negative one would read to the end of the
    connection); JSON nested past the bounded reader's depth is an error answer, not a RecursionError."""
    for declared in ("-1", "abc", "1e3"):
        connection = HTTPConnection("127.0.0.1", page.port, timeout=WAIT)
        try:
            connection.putrequest("POST", "/api/ping")
            for name, value in (("Content-Type", "application/json"), ("X-Inspector-Token", page.token),
                                ("Content-Length", declared)):
                connection.putheader(name, value)
            connection.endheaders()
            assert connection.getresponse().status == 400, declared
        finally:
            connection.close()
    deep = "[" * 100_000 + "]" * 100_000
    connection = HTTPConnection("127.0.0.1", page.port, timeout=WAIT)
    try:
        connection.request("POST", "/api/ping", body=deep, headers={"Content-Type": "application/json",
                                                                    "X-Inspector-Token": page.token})
        response = connection.getresponse()
        answer = json.loads(response.read())
    finally:
        connection.close()
    assert response.status == 200 and answer["error"]["type"] != "RecursionError", answer
    api(page, "ping")  # still usable


def test_the_api_drives_the_client(page: Inspecting) -> None:
    info = api(page, "info")
    assert info["connected"] and info["serverInfo"]["name"] == "mcplite-everything"
    assert info["transport"] == "stdio" and info["protocolVersion"]
    assert "add" in [tool["name"] for tool in api(page, "list", {"kind": "tools"})]
    result = api(page, "call", {"name": "add", "arguments": {"a": 2, "b": 3}})
    assert result["structuredContent"] == {"result": 5}
    read = api(page, "read", {"uri": "test://static-text"})
    assert read["contents"][0]["text"]
    status, _, data = request(page, "POST", "/api/call", {"name": "no_such_tool"})
    assert status == 200 and "error" in json.loads(data)


def read_events(page: Inspecting, until: Any) -> Iterator[Tuple[str, Any]]:
    """The page's event stream, parsed, until ``until(event, data)`` is true."""
    from mcplite.protocol.sse import SSEParser

    connection = HTTPConnection("127.0.0.1", page.port, timeout=WAIT)
    connection.request("GET", f"/events?token={page.token}")
    response = connection.getresponse()
    assert response.status == 200 and response.getheader("Content-Type") == "text/event-stream"
    parser = SSEParser()
    try:
        while True:
            chunk = response.read1(65536)  # type: ignore[attr-defined]
            assert chunk, "the event stream ended"
            for event in parser.feed(chunk):
                data = json.loads(event.data) if event.data else None
                yield event.event, data
                if until(event.event, data):
                    return
    finally:
        connection.close()


def test_every_message_both_ways_reaches_the_event_stream(page: Inspecting) -> None:
    api(page, "call", {"name": "test_simple_text"})
    seen = []
    for event, data in read_events(page, lambda e, d: e == "wire" and d["dir"] == "recv"
                                   and "test_simple_text" not in json.dumps(d) and seen and seen[-1] == "call"):
        if event == "wire" and data["dir"] == "send" and data["message"].get("params", {}).get("name") == "test_simple_text":
            seen.append("call")
    assert seen


def test_a_servers_question_is_answered_through_the_api(page: Inspecting) -> None:
    call = Background(api, page, "call", {"name": "test_elicitation", "arguments": {"message": "who?"}})
    question = next(data for event, data in read_events(page, lambda e, d: e == "input" and d["params"].get(
        "message") == "who?") if event == "input" and data["params"].get("message") == "who?")
    assert question["method"] == "elicitation/create"
    api(page, "answer", {"id": question["id"], "result": {"action": "accept",
                                                          "content": {"username": "ann", "email": "a@b.c"}}})
    result = call.join(WAIT)
    assert "ann" in result["content"][0]["text"] and "accept" in result["content"][0]["text"]


def test_progress_and_logs_reach_the_event_stream(page: Inspecting) -> None:
    api(page, "call", {"name": "test_tool_with_progress", "callId": "p1"})
    api(page, "call", {"name": "test_tool_with_logging"})
    progress, logs = [], []
    for event, data in read_events(page, lambda e, d: len(logs) >= 3):
        if event == "progress" and data["callId"] == "p1":
            progress.append(data["progress"])
        if event == "notify" and data["method"] == "notifications/message":
            logs.append(data["params"]["data"])
    assert progress == [0, 50, 100] and "Tool execution completed" in logs


def test_ctrl_c_stops_the_page_and_the_server_process() -> None:
    running = Inspecting(*STDIO)
    marked = processes_marked(running.mark)
    assert len(marked) >= 2, "inspect and the server it started"
    assert running.stop() == 130
    assert still_running(marked) == []
    with pytest.raises(OSError):
        HTTPConnection("127.0.0.1", running.port, timeout=WAIT).request("GET", "/")


def test_over_http_the_headers_of_each_request_are_in_the_log(tmp_path: Any) -> None:
    with everything_over_http(tmp_path) as url, inspecting("inspect", "--no-browser", "--", url) as running:
        info = api(running, "info")
        assert info["transport"].startswith("http")
        api(running, "call", {"name": "add", "arguments": {"a": 1, "b": 1}})
        for event, data in read_events(running, lambda e, d: e == "wire" and "headers" in d
                                       and d["message"].get("method") == "tools/call"):
            pass
        headers = {key.lower(): value for key, value in data["headers"].items()}
        assert headers.get("mcp-method") == "tools/call" or "mcp-protocol-version" in headers


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_over_http_the_response_headers_and_the_requests_as_sent_are_in_the_log(tmp_path: Any, version: str) -> None:
    with everything_over_http(tmp_path) as url, \
            inspecting("--protocol-version", version, "inspect", "--no-browser", "--", url) as running:
        session_id = api(running, "info")["sessionId"]
        api(running, "call", {"name": "add", "arguments": {"a": 1, "b": 1}})
        seen: Dict[str, Any] = {}
        sent_ids: Dict[str, Any] = {}
        for event, data in read_events(running, lambda e, d: e == "http" and "tools/call" in sent_ids and d["key"] == sent_ids["tools/call"]):
            if event == "wire" and data["dir"] == "send" and "id" in data["message"]:
                sent_ids[data["message"]["method"]] = "request " + json.dumps(data["message"]["id"])
            if event == "http":
                seen[data["key"]] = data
        called = seen[sent_ids["tools/call"]]
        assert called["method"] == "POST" and called["status"] == 200 and "content-type" in called["response"]
        sent = {name.lower(): value for name, value in called["request"].items()}
        assert sent["mcp-protocol-version"] == version and "application/json" in sent["accept"]
        if version == "2026-07-28":  # no session; the request's method and name in headers
            assert session_id is None and sent["mcp-method"] == "tools/call" and sent["mcp-name"] == "add"
        else:
            opened = seen[sent_ids["initialize"]]  # the answer that gave the session its id
            assert opened["status"] == 200
            assert opened["response"]["mcp-session-id"] == session_id  # (in clear: the page shows it anyway)
            assert sent["mcp-session-id"] == session_id
            assert "notification notifications/initialized" in seen  # a 202, put with what it answered


def test_on_response_sees_every_http_response_and_its_failures_are_only_logged(tmp_path: Any) -> None:
    from mcplite import Client

    seen = []

    def watch(request: Any, status: int, headers: Dict[str, str]) -> None:
        seen.append((request.method, status, headers))
        raise RuntimeError("a watcher's bug")

    with everything_over_http(tmp_path) as url, Client(url, on_response=watch) as client:
        assert "5" in json.dumps(client.call_tool("add", {"a": 2, "b": 3}))
        assert [method for method, _, _ in seen].count("POST") >= 2  # discovery (or initialize), the call
        assert all(name == name.lower() for _, _, headers in seen for name in headers)
        assert seen[0][1] == 200 and seen[0][2]["content-type"] == "application/json"


def test_inspect_takes_a_server_file_and_usage_errors() -> None:
    with inspecting("inspect", "--no-browser", EVERYTHING) as running:
        assert api(running, "info")["serverInfo"]["name"] == "mcplite-everything"
        assert "serve" in api(running, "info")["target"]["words"]
    import subprocess

    from support.servers import python_env
    done = subprocess.run([sys.executable, "-m", "mcplite", "inspect", "--no-browser", EVERYTHING, "--", "x"],
                          capture_output=True, text=True, timeout=WAIT, env=python_env())
    assert done.returncode == 2 and "not both" in done.stderr


def test_sampling_is_answered_by_hand_and_roots_are_the_pages(page: Inspecting) -> None:
    call = Background(api, page, "call", {"name": "test_sampling", "arguments": {"prompt": "2+2?"}})
    question = next(data for event, data in read_events(page, lambda e, d: e == "input" and d["method"] ==
                                                        "sampling/createMessage") if event == "input"
                    and data["method"] == "sampling/createMessage")
    api(page, "answer", {"id": question["id"], "result": {"role": "assistant", "model": "a person",
                                                          "content": {"type": "text", "text": "four"},
                                                          "stopReason": "endTurn"}})
    assert "four" in call.join(WAIT)["content"][0]["text"]
    api(page, "roots", {"roots": [{"uri": "file:///tmp/project", "name": "project"}]})
    result = api(page, "call", {"name": "test_input_required_result_list_roots"})
    assert "file:///tmp/project" in result["content"][0]["text"]
    assert api(page, "info")["roots"] == [{"uri": "file:///tmp/project", "name": "project"}]


def test_a_task_is_started_polled_cancelled_and_its_result_fetched(page: Inspecting) -> None:
    result = api(page, "call", {"name": "slow_compute", "arguments": {"seconds": 0.2}, "callId": "t1", "task": True})
    assert "Computed" in result["content"][0]["text"]
    statuses = []
    for event, data in read_events(page, lambda e, d: e == "task" and d["callId"] == "t1"
                                   and d["status"] == "completed"):
        if event == "task" and data["callId"] == "t1":
            statuses.append(data["status"])
    assert statuses[0] == "working" and statuses[-1] == "completed"
    call = Background(api, page, "call", {"name": "slow_compute", "arguments": {"seconds": 30}, "callId": "t2",
                                          "task": True})
    started = next(data for event, data in read_events(page, lambda e, d: e == "task" and d["callId"] == "t2")
                   if event == "task" and data["callId"] == "t2")
    assert api(page, "task_get", {"taskId": started["taskId"]})["status"] == "working"
    assert api(page, "task_cancel", {"taskId": started["taskId"]})["status"] == "cancelled"
    with pytest.raises(AssertionError, match="cancelled"):
        call.join(WAIT)


# ---- every example server, and the reference server-everything (issue 35: "the page works against every example
# server and against @modelcontextprotocol/server-everything"): the lists the page loads, and one call -----------
EXAMPLES = ROOT / "examples"
#: Not servers, or not runnable here, and why.
NOT_INSPECTED = {
    "demo_client.py": "a client", "envelope_client.py": "a client",
    "deploy/two_processes.py": "starts two copies of deploy/app.py (inspected) for nginx",
    "deploy/redis_bus.py": "a Redis event bus for deploy/app.py: needs redis-py and a Redis server",
    "deploy/redis_store.py": "Redis task and event stores: need redis-py and a Redis server",
    "migrating/test_server.py": "the migrated server's tests",
}
#: (example, the ``inspect`` target's words, a tool, its arguments, what its result's text holds)
SERVERS = [
    ("demo_server.py", ["examples/demo_server.py"], "add", {"a": 2, "b": 3}, "5"),
    ("everything_server.py", ["examples/everything_server.py"], "add", {"a": 2, "b": 3}, "5"),
    ("http_server.py", ["examples/http_server.py"], "add", {"a": 2, "b": 3}, "5"),
    ("interop_server.py", ["examples/interop_server.py"], "echo", {"text": "hi"}, "hi"),
    ("sampling_tools.py", ["examples/sampling_tools.py"], "plan_day", {"city": "Oslo"}, "museums, by hand"),
    ("migrating/server.py", ["examples/migrating/server.py"], "add_note", {"text": "inspected"}, ""),
    ("deploy/app.py", ["examples/deploy/app.py"], "count", {"n": 3}, "3"),
    ("gateway/pinned_server.py", ["--", sys.executable, "-m", "examples.gateway.pinned_server", "handshake",
                                  "examples.demo_server"], "add", {"a": 2, "b": 3}, "5"),
    ("gateway/gateway.json", ["--", sys.executable, "-m", "mcplite", "gateway", "examples/gateway/gateway.json"],
     "demo_add", {"a": 2, "b": 3}, "5"),
]


def test_every_example_is_inspected_or_said_why_not() -> None:
    found = {str(path.relative_to(EXAMPLES)) for path in EXAMPLES.rglob("*.py") if "__pycache__" not in path.parts
             and path.name != "__init__.py"} | {"gateway/gateway.json"}
    assert found == {name for name, *_ in SERVERS} | set(NOT_INSPECTED)


def lists_load_and_one_call_works(running: Inspecting, tool: str, arguments: Dict[str, Any], expect: str) -> None:
    info = api(running, "info")
    assert info["connected"] and info["serverInfo"]["name"], info
    listed = {}
    for kind, needs in (("tools", "tools"), ("resources", "resources"), ("templates", "resources"),
                        ("prompts", "prompts")):
        if needs in info["capabilities"]:  # (as the page does: a list the server does not offer is not asked)
            listed[kind] = api(running, "list", {"kind": kind})
    assert tool in {item["name"] for item in listed["tools"]}
    call = Background(api, running, "call", {"name": tool, "arguments": arguments})

    def answered(event: str, data: Any) -> bool:  # a server that asks (sampling): answered by hand, as in the page
        if event == "wire" and data["dir"] == "recv" and "content" in (data["message"].get("result") or {}):
            return True  # (the call's answer: it asked nothing, or no more)
        if event != "input":
            return False
        assert [tool["name"] for tool in data["params"].get("tools", [])] == ["weather"]  # offered, shown
        api(running, "answer", {"id": data["id"], "result": {
            "role": "assistant", "model": "a person", "stopReason": "endTurn",
            "content": {"type": "text", "text": "museums, by hand"}}})
        return True  # (a text answer: the tool asks no more)

    if tool == "plan_day":
        for _ in read_events(running, answered):
            pass
    result = call.join(WAIT)
    assert not result.get("isError"), result
    assert expect in json.dumps(result)


@pytest.mark.parametrize("example,target,tool,arguments,expect", SERVERS, ids=[name for name, *_ in SERVERS])
def test_the_page_works_against_every_example_server(example: str, target: Any, tool: str,
                                                     arguments: Dict[str, Any], expect: str) -> None:
    with inspecting("inspect", "--no-browser", *target) as running:
        lists_load_and_one_call_works(running, tool, arguments, expect)


def server_everything() -> List[str]:
    """The command of the reference server tests/interop installs under .peers (.ci/run installs it before pytest,
    with ``tests/interop/run.py --install-python-sdk``; missing elsewhere is a skip that says how)."""
    import shutil

    peers = os.environ.get("INTEROP_PEERS_DIR") or str(ROOT / ".peers")
    index = Path(peers, "everything", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
    node = shutil.which("node")
    if node is None or not index.is_file():
        pytest.skip(f"@modelcontextprotocol/server-everything is not installed at {index} (tests/interop/run.py "
                    "installs it)" if node else "no node")
    return [node, str(index), "stdio"]


def test_the_page_works_against_the_reference_server_everything() -> None:
    with inspecting("inspect", "--no-browser", "--", *server_everything()) as running:
        lists_load_and_one_call_works(running, "echo", {"message": "inspected"}, "inspected")
