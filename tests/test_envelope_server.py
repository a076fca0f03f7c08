"""Revision 2026-07-28 on the server: one `Server` serves both eras, on every transport.

The era of a stream connection (in memory, stdio) is decided by its first deciding request (MODERN.md, "The
server side on stdio and in-memory"); over HTTP every enveloped POST stands alone. Checked here: the `_meta`
ladder's answers and HTTP statuses, the shape of results (`resultType`, serverInfo, caching hints), the per-
request log level, progress only with a token, not-found resources, and cancellation by a dropped stream.
"""

import json
import subprocess
import sys
import threading
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest
from support import WAIT, Kept, RawPeer, wait_until
from support.http import serving
from support.raw_http import EnvelopeClient, RawClient, envelope

from mcplite import Context, Server
from mcplite.protocol import jsonrpc
from mcplite.protocol.versions import HANDSHAKE_VERSIONS
from mcplite.transports.memory import memory_pair

ENVELOPE_VERSION = "2026-07-28"
ALL_VERSIONS = [ENVELOPE_VERSION, *HANDSHAKE_VERSIONS]
SERVER_INFO = "io.modelcontextprotocol/serverInfo"


def make_server(**options: Any) -> Server:
    server = Server("envelope-era-test", "2.0", instructions="Be kind.", **options)
    release = threading.Event()

    @server.tool
    def add(a: int, b: int, ctx: Context) -> int:
        """Add two numbers, logging at three levels and reporting progress."""
        ctx.debug("debug line")
        ctx.info("info line")
        ctx.error("error line")
        ctx.progress(1, 2)
        return a + b

    @server.tool
    def whoami(ctx: Context) -> Dict[str, Any]:
        """What the server knows of this request's caller."""
        return {"version": ctx.protocol_version, "client": ctx.client_info, "caps": ctx.client_capabilities}

    @server.tool
    def wait_for_cancel(ctx: Context) -> str:
        """Block until the request is cancelled (or released by the test)."""
        ctx.cancelled.wait(WAIT)
        release.set()
        return "cancelled" if ctx.is_cancelled else "not cancelled"

    @server.prompt
    def whole_result() -> Dict[str, Any]:
        """A prompt that returns its whole result, with a 2026-07-28 field set by hand."""
        return {"messages": [], "resultType": "complete"}

    @server.resource("test://static")
    def static() -> str:
        return "static text"

    server.released = release  # type: ignore[attr-defined]
    return server


@pytest.fixture
def peer() -> Iterator[RawPeer]:
    ours, theirs = memory_pair()
    session = make_server().connect(theirs)
    yield RawPeer(ours)
    session.close()


def enveloped(peer: RawPeer, id: Any, method: str, params: Optional[Dict[str, Any]] = None,
           capabilities: Optional[Dict[str, Any]] = None, **meta: Any) -> Dict[str, Any]:
    return peer.request(id, method, {**(params or {}), "_meta": envelope(capabilities, **meta)})


def error_of(answer: Dict[str, Any]) -> Tuple[int, Any]:
    assert "error" in answer, answer
    return answer["error"]["code"], answer["error"].get("data")


# ---- the era of a stream connection ------------------------------------------------------------------------

def test_discover_does_not_decide_the_era(peer: RawPeer) -> None:
    result = enveloped(peer, 1, "server/discover")["result"]
    assert result["supportedVersions"] == [ENVELOPE_VERSION]  # envelope-era versions only (MODERN.md spec point 9)
    assert result["capabilities"]["tools"] == {"listChanged": True}
    assert result["instructions"] == "Be kind."
    assert result["_meta"][SERVER_INFO] == {"name": "envelope-era-test", "version": "2.0"}
    assert (result["resultType"], result["ttlMs"], result["cacheScope"]) == ("complete", 0, "private")
    # A probe that was merely slow is followed by initialize: the handshake still works.
    answer = peer.initialize()
    assert answer["result"]["protocolVersion"] == "2025-11-25"
    assert "resultType" not in answer["result"]


def test_an_enveloped_request_pins_the_connection_envelope(peer: RawPeer) -> None:
    tools = enveloped(peer, 1, "tools/list")["result"]
    assert [tool["name"] for tool in tools["tools"]][:2] == ["add", "whoami"]
    assert (tools["resultType"], tools["ttlMs"], tools["cacheScope"]) == ("complete", 0, "private")
    code, data = error_of(peer.request(2, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}))
    assert code == -32022 and data == {"supported": ALL_VERSIONS, "requested": "2025-11-25"}
    code, _ = error_of(peer.request(3, "tools/list", {}))
    assert code == -32602  # no _meta on an envelope-era connection
    for method in ("ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe", "initialize"):
        assert error_of(enveloped(peer, method, method))[0] == -32601, method
    assert error_of(enveloped(peer, 4, "no/such"))[0] == -32601


def test_a_handshake_connection_refuses_enveloped_requests(peer: RawPeer) -> None:
    peer.initialize()
    assert error_of(enveloped(peer, 1, "tools/list"))[0] == -32600
    assert error_of(peer.request(2, "server/discover", {}))[0] == -32601  # exists only enveloped
    assert "resultType" not in peer.request(3, "tools/list", {})["result"]


@pytest.mark.parametrize("meta, code", [
    (None, -32602),                                                                   # no _meta
    ({"io.modelcontextprotocol/protocolVersion": ENVELOPE_VERSION}, -32602),                    # no capabilities
    ({"io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/protocolVersion": 7}, -32602),
    ({**envelope(), "io.modelcontextprotocol/logLevel": "loud"}, -32602),
    ({**envelope(), "io.modelcontextprotocol/clientInfo": "me"}, -32602),
])
def test_the_ladder_refuses_malformed_envelopes(peer: RawPeer, meta: Any, code: int) -> None:
    params = {"_meta": meta} if meta is not None else {}
    if meta is None:  # unenveloped: only a connection already envelope-era calls that a missing _meta
        enveloped(peer, 0, "tools/list")
    assert error_of(peer.request(1, "tools/list", params))[0] == code


def test_an_unsupported_version_lists_every_version(peer: RawPeer) -> None:
    meta = {**envelope(), "io.modelcontextprotocol/protocolVersion": "v999.0.0"}
    code, data = error_of(peer.request(1, "server/discover", {"_meta": meta}))
    # What server/discover lists (the conformance suite holds data.supported to be a subset of it).
    assert code == -32022 and data == {"supported": [ENVELOPE_VERSION], "requested": "v999.0.0"}


def test_client_info_is_optional_and_per_request(peer: RawPeer) -> None:
    meta = {"io.modelcontextprotocol/protocolVersion": ENVELOPE_VERSION,
            "io.modelcontextprotocol/clientCapabilities": {}}
    assert "result" in peer.request(1, "server/discover", {"_meta": meta})
    answer = enveloped(peer, 2, "tools/call", {"name": "whoami"}, capabilities={"sampling": {}})
    assert answer["result"]["structuredContent"] == {
        "version": ENVELOPE_VERSION, "client": {"name": "raw", "version": "1"}, "caps": {"sampling": {}}}


def test_a_repeated_envelope_is_read_once_and_any_change_is_read_again(peer: RawPeer) -> None:
    # The session keeps the last verdict for an identical _meta (the common case: a client stamps the same
    # one on every request); whatever differs goes through the whole ladder again.
    for id in (1, 2, 3):
        assert enveloped(peer, id, "tools/call", {"name": "whoami"})["result"]["structuredContent"]["caps"] == {}
    answer = enveloped(peer, 4, "tools/call", {"name": "whoami"}, capabilities={"roots": {}})
    assert answer["result"]["structuredContent"]["caps"] == {"roots": {}}
    assert enveloped(peer, 5, "tools/call", {"name": "whoami"})["result"]["structuredContent"]["caps"] == {}
    assert error_of(enveloped(peer, 6, "ping"))[0] == -32601  # a removed method, the same _meta
    stale = {**envelope(), "io.modelcontextprotocol/protocolVersion": "2025-11-25"}
    assert error_of(peer.request(7, "tools/list", {"_meta": stale}))[0] == -32022
    assert error_of(peer.request(8, "tools/list", {"_meta": {**envelope(), "io.modelcontextprotocol/logLevel": 1}})
                    )[0] == -32602
    assert enveloped(peer, 9, "tools/list")["result"]["resultType"] == "complete"


def test_logs_only_at_the_requests_level_and_progress_only_with_a_token(peer: RawPeer) -> None:
    def call(id: Any, **meta: Any) -> List[Any]:
        peer.send(jsonrpc.request(id, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2},
                                                     "_meta": envelope(**meta)}))
        seen = []
        while True:
            message = peer.next()
            seen.append(message)
            if message.get("id") == id:
                assert message["result"]["structuredContent"] == {"result": 3}
                return [m["method"] + ":" + str(m["params"].get("level", "")) for m in seen if "method" in m]

    assert call(1) == []  # no logLevel: no log at all (logging.mdx); no progressToken: no progress
    assert call(2, logLevel="info") == ["notifications/message:info", "notifications/message:error"]
    assert call(3, logLevel="debug", progressToken="p") == [
        "notifications/message:debug", "notifications/message:info", "notifications/message:error",
        "notifications/progress:"]


def test_results_are_shaped_per_revision(peer: RawPeer) -> None:
    read = enveloped(peer, 1, "resources/read", {"uri": "test://static"})["result"]
    assert read["contents"][0]["text"] == "static text"
    assert (read["resultType"], read["ttlMs"], read["cacheScope"]) == ("complete", 0, "private")
    call = enveloped(peer, 2, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 2}})["result"]
    assert call["resultType"] == "complete" and "ttlMs" not in call  # tools/call is not cacheable
    assert call["_meta"][SERVER_INFO]["name"] == "envelope-era-test"
    own = enveloped(peer, 3, "prompts/get", {"name": "whole_result"})["result"]
    assert own["resultType"] == "complete" and own["_meta"][SERVER_INFO]["name"] == "envelope-era-test"


def test_results_follow_the_server_info_as_it_changes() -> None:
    """The members every result ends with are encoded once per server info, not once per result: a change
    to the info, in place or whole, shows in the next result, and an info that is not JSON fails as before."""
    server = make_server()
    ours, theirs = memory_pair()
    session = server.connect(theirs)
    peer = RawPeer(ours)

    def info(id: int) -> Any:
        answer = enveloped(peer, id, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
        return answer["result"]["_meta"][SERVER_INFO] if "result" in answer else answer["error"]["code"]

    try:
        assert info(1) == info(2) == {"name": "envelope-era-test", "version": "2.0"}
        server.info["title"] = "Envelope-era"
        assert info(3) == {"name": "envelope-era-test", "version": "2.0", "title": "Envelope-era"}
        server.info["icons"] = [{"src": "https://example.com/a.png"}]
        assert info(4)["icons"] == [{"src": "https://example.com/a.png"}]
        server.info["icons"][0]["sizes"] = ["48x48"]  # deep in the info
        assert info(5)["icons"] == [{"src": "https://example.com/a.png", "sizes": ["48x48"]}]
        server.info = {"name": "renamed", "version": "3.0"}
        assert info(6) == {"name": "renamed", "version": "3.0"}
        server.info["bad"] = float("nan")  # not JSON: the answer cannot be written, so it is an error
        assert info(7) == -32603
        del server.info["bad"]
        assert info(8) == {"name": "renamed", "version": "3.0"}
    finally:
        session.close()


def test_the_common_answer_is_made_whole_with_its_members_encoded_once() -> None:
    """A tool's answer is made with its text (`jsonrpc.result_with_members`: the members' text encoded once); a
    cacheable method's, or one whose handler set resultType or _meta itself, is shaped as a dict. Both are what
    the wire shows (the other tests read them through transports that encode them)."""
    kept = Kept()
    session = make_server().create_session(kept)
    session.start()
    try:
        for id, method, params in [(1, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}),
                                   (2, "tools/list", {}), (3, "prompts/get", {"name": "whole_result"})]:
            session.receive(jsonrpc.request(id, method, {**params, "_meta": envelope()}), inline=True)
        answers = {message["id"]: message for message in kept.sent if "id" in message}
        assert type(answers[1]) is jsonrpc.EncodedMessage
        assert type(answers[2]) is dict and type(answers[3]) is dict
        for answer in answers.values():
            assert json.loads(jsonrpc.encode(answer)) == answer
            assert answer["result"]["resultType"] == "complete"
            assert answer["result"]["_meta"][SERVER_INFO] == {"name": "envelope-era-test", "version": "2.0"}
    finally:
        session.close()


def test_handshake_results_lose_the_envelope_fields() -> None:
    ours, theirs = memory_pair()
    session = make_server().connect(theirs)
    peer = RawPeer(ours)
    try:
        peer.initialize()
        result = peer.request(1, "prompts/get", {"name": "whole_result"})["result"]
        assert result == {"messages": []}
    finally:
        session.close()


def test_a_missing_resource_is_invalid_params_with_its_uri(peer: RawPeer) -> None:
    code, data = error_of(enveloped(peer, 1, "resources/read", {"uri": "test://nothing"}))
    assert code == -32602 and data == {"uri": "test://nothing"}


def test_a_server_of_one_era() -> None:
    ours, theirs = memory_pair()
    session = Server("envelope-era-only", supported_versions=[ENVELOPE_VERSION]).connect(theirs)
    peer = RawPeer(ours)
    try:
        code, data = error_of(peer.request(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}))
        assert code == -32022 and data == {"supported": [ENVELOPE_VERSION], "requested": "2025-11-25"}
        assert enveloped(peer, 2, "server/discover")["result"]["supportedVersions"] == [ENVELOPE_VERSION]
    finally:
        session.close()
    ours, theirs = memory_pair()
    session = Server("legacy-only", supported_versions=HANDSHAKE_VERSIONS).connect(theirs)
    peer = RawPeer(ours)
    try:
        code, data = error_of(enveloped(peer, 1, "server/discover"))
        assert code == -32022 and data["supported"] == list(HANDSHAKE_VERSIONS)  # a prober falls back at once
        assert peer.initialize()["result"]["protocolVersion"] == "2025-11-25"
    finally:
        session.close()


def test_stdio_serves_both_eras(tmp_path: Any) -> None:
    script = tmp_path / "server.py"
    script.write_text("from mcplite import Server\nserver = Server('stdio-envelope-era')\n"
                      "@server.tool\ndef echo(text: str) -> str:\n    'Echo.'\n    return text\n"
                      "server.run()\n")
    lines = [jsonrpc.request(1, "server/discover", {"_meta": envelope()}),
             jsonrpc.request(2, "tools/call", {"name": "echo", "arguments": {"text": "hi"}, "_meta": envelope()}),
             jsonrpc.request(3, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})]
    completed = subprocess.run([sys.executable, str(script)], input="".join(json.dumps(m) + "\n" for m in lines),
                               capture_output=True, text=True, timeout=WAIT * 2, env=_env_with_repo())
    answers = {m["id"]: m for m in map(json.loads, completed.stdout.splitlines())}
    assert answers[1]["result"]["supportedVersions"] == [ENVELOPE_VERSION]
    assert answers[2]["result"]["content"] == [{"type": "text", "text": "hi"}]
    assert answers[3]["error"]["code"] == -32022
    assert completed.returncode == 0, completed.stderr


def test_a_handler_that_changes_its_meta_changes_no_other_request_over_stdio(tmp_path: Any) -> None:
    """A handler's `Context.meta` is a copy of its own, whatever it does to it (tests/test_ownership.py changes
    nested values too)."""
    script = tmp_path / "server.py"
    script.write_text("from typing import List\nfrom mcplite import Context, Server\nserver = Server('poke')\n"
                      "@server.tool\ndef poke_meta(ctx: Context) -> List[str]:\n    'Change _meta; say what it held.'\n"
                      "    meta = ctx.meta\n    held = sorted(meta)\n    meta.clear()\n    meta['poked'] = True\n"
                      "    return held\n"
                      "server.run()\n")
    calls = [jsonrpc.request(id, "tools/call", {"name": "poke_meta", "_meta": envelope()}) for id in range(2, 8)]
    lines = [jsonrpc.request(1, "server/discover", {"_meta": envelope()}), *calls]
    completed = subprocess.run([sys.executable, str(script)], input="".join(jsonrpc.encode(m) + "\n" for m in lines),
                               capture_output=True, text=True, timeout=WAIT * 2, env=_env_with_repo())
    answers = {m["id"]: m for m in map(json.loads, completed.stdout.splitlines())}
    for id in range(2, 8):
        assert answers[id]["result"]["structuredContent"] == {"result": sorted(envelope())}, id
    assert completed.returncode == 0, completed.stderr


def _env_with_repo() -> Dict[str, str]:
    import os

    from support import ROOT

    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


# ---- HTTP: every enveloped POST stands alone --------------------------------------------------------------

@pytest.fixture
def http_server() -> Iterator[Any]:
    server = make_server()
    with serving(server, keepalive_interval=0.2) as http:
        http.fixture_server = server
        yield http


def test_http_answers_and_statuses(http_server: Any) -> None:
    client = EnvelopeClient(http_server)
    reply = client.post(client.enveloped("server/discover"))
    assert reply.status == 200 and reply.json()["result"]["supportedVersions"] == [ENVELOPE_VERSION]
    assert "mcp-session-id" not in reply.headers  # 2026-07-28 has no sessions
    reply = client.post(client.enveloped("tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}}),
                        {"Mcp-Session-Id": "ignored"})
    assert reply.status == 200 and reply.json()["result"]["structuredContent"] == {"result": 2}
    for method, status, code in (("ping", 404, -32601), ("no/such", 404, -32601), ("initialize", 404, -32601)):
        body = client.enveloped(method)
        reply = client.post(body)
        assert (reply.status, reply.json()["error"]["code"], reply.json()["id"]) == (status, code, body["id"])
    body = client.enveloped("tools/list")
    reply = client.post(body, {"MCP-Protocol-Version": "2025-11-25"})  # the header must repeat the body
    assert (reply.status, reply.json()["error"]["code"]) == (400, -32020)
    reply = client.post(body, {"Mcp-Method": "prompts/list"})
    assert (reply.status, reply.json()["error"]["code"]) == (400, -32020)
    body = client.request("tools/list")  # the header says 2026-07-28, the body has no _meta
    reply = client.post(body)
    assert (reply.status, reply.json()["error"]["code"], reply.json()["id"]) == (400, -32602, body["id"])
    meta = {**envelope(), "io.modelcontextprotocol/protocolVersion": "v999.0.0"}
    reply = client.post(client.request("server/discover", {"_meta": meta}), {"MCP-Protocol-Version": "v999.0.0"})
    assert (reply.status, reply.json()["error"]["code"]) == (400, -32022)
    assert reply.json()["error"]["data"] == {"supported": [ENVELOPE_VERSION], "requested": "v999.0.0"}
    reply = client.post({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
                        {"MCP-Protocol-Version": ENVELOPE_VERSION})
    assert reply.status == 202


def test_http_serves_the_handshake_era_beside(http_server: Any) -> None:
    legacy = RawClient(http_server)
    legacy.initialize()
    reply = legacy.post(legacy.request("tools/list"))
    assert reply.status == 200 and "resultType" not in reply.json()["result"]
    client = EnvelopeClient(http_server)  # an envelope-era request with a legacy session's id is still envelope-era
    reply = client.post(client.enveloped("tools/list"), {"MCP-Session-Id": legacy.session_id or ""})
    assert reply.json()["result"]["resultType"] == "complete"


def test_get_and_delete_are_405_without_a_handshake_revision() -> None:
    with serving(Server("envelope-era-only", supported_versions=[ENVELOPE_VERSION])) as http:
        client = EnvelopeClient(http)
        for method in ("GET", "DELETE"):
            response = client.send(method, None, {"Accept": "text/event-stream"})
            assert response.status == 405 and response.getheader("Allow") == "POST"
            response.read()
        reply = client.post(client.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}),
                            {"MCP-Protocol-Version": "2025-11-25"})
        assert reply.json()["error"]["code"] == -32022


def test_a_dropped_stream_cancels_the_request(http_server: Any) -> None:
    client = EnvelopeClient(http_server)
    stream = client.stream(client.enveloped("tools/call", {"name": "wait_for_cancel"}))
    stream.read_raw_until(b":")  # a keep-alive comment: the handler is running and the stream is SSE
    # The request in progress (its connection busy, on a worker of the server's).
    requests_in_progress = lambda: sum(http_server._httpd._open.values())  # noqa: E731
    assert requests_in_progress() == 1
    stream.drop()
    assert http_server.fixture_server.released.wait(WAIT)  # the handler saw the cancellation and returned
    # ... and the request ended: its worker is free, its connection closed.
    assert wait_until(lambda: requests_in_progress() == 0)


def test_mcp_param_headers_are_checked_against_the_arguments() -> None:
    from typing import Optional as Opt

    from mcplite import Header

    try:
        from typing import Annotated
    except ImportError:  # Python 3.8 and older have no Annotated; 3.9 does
        pytest.skip("typing.Annotated is needed")
    server = Server("headers")

    @server.tool
    def regional(region: Annotated[Opt[str], Header("Region")] = None) -> str:
        """Answer with the region."""
        return region or "none"

    with serving(server) as http:
        client = EnvelopeClient(http)
        body = client.enveloped("tools/call", {"name": "regional", "arguments": {"region": "us-west1"}})
        assert client.post(body, {"Mcp-Param-Region": "us-west1"}).status == 200
        assert client.post(body, {"Mcp-Param-Region": "=?base64?dXMtd2VzdDE=?="}).status == 200
        for headers in ({}, {"Mcp-Param-Region": "eu"}, {"Mcp-Param-Region": "=?base64?dXMtd2VzdDE?="}):
            reply = client.post(body, headers)
            assert (reply.status, reply.json()["error"]["code"]) == (400, -32020), headers
        no_value = client.enveloped("tools/call", {"name": "regional", "arguments": {}})
        assert result_of(client.post(no_value))["content"][0]["text"] == "none"


def result_of(reply: Any) -> Dict[str, Any]:
    assert reply.status == 200, reply.body
    return reply.json()["result"]


def test_wsgi_serves_both_eras(caplog: pytest.LogCaptureFixture) -> None:
    import io
    import logging
    from wsgiref.util import setup_testing_defaults

    app = make_server().wsgi_app(threaded=True, allowed_hosts=["*"])  # setup_testing_defaults: multithread 0
    statuses: List[str] = []

    def call(body: Dict[str, Any], headers: Dict[str, str]) -> Any:
        environ: Dict[str, Any] = {"REQUEST_METHOD": "POST", "PATH_INFO": "/mcp", "wsgi.multiprocess": True,
                                   "CONTENT_TYPE": "application/json",
                                   "HTTP_ACCEPT": "application/json, text/event-stream"}
        data = json.dumps(body).encode()
        environ["CONTENT_LENGTH"] = str(len(data))
        for name, value in headers.items():
            environ["HTTP_" + name.upper().replace("-", "_")] = value
        setup_testing_defaults(environ)
        environ["wsgi.input"] = io.BytesIO(data)
        body_parts = app(environ, lambda status, response_headers, exc_info=None: statuses.append(status))
        return json.loads(b"".join(body_parts))

    with caplog.at_level(logging.WARNING, logger="mcplite"):
        answer = call({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": envelope()}},
                      {"MCP-Protocol-Version": ENVELOPE_VERSION, "Mcp-Method": "tools/list"})
    assert answer["result"]["resultType"] == "complete" and statuses[-1].startswith("200")
    # wsgi.multiprocess with a key drawn in this very process: said once, at the first request.
    assert any("state_keys" in record.getMessage() for record in caplog.records)
    answer = call({"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"_meta": envelope()}},
                  {"MCP-Protocol-Version": ENVELOPE_VERSION, "Mcp-Method": "ping"})
    assert answer["error"]["code"] == -32601 and statuses[-1].startswith("404")
    answer = call({"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "w", "version": "1"}}}, {})
    assert answer["result"]["protocolVersion"] == "2025-11-25"
    app.close()
