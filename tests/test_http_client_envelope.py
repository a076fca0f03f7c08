"""The HTTP client on revision 2026-07-28: the probe and its fallbacks over HTTP, the headers of a sessionless
POST, errors that come as 4xx bodies, broken response streams (sent again, or `ResponseLost`), and
cancellation by hanging up. The servers are the scripted ones in `broken_servers` and mcplite's own.
"""

import pytest

import broken_servers as bs
from mcplite import Client, HTTPError, RemoteError, RequestTimeout, ResponseLost
from mcplite.client.era import forget_verdicts
from support import WAIT
from support.results import text_of
from support.http import serving

ENVELOPE_VERSION = "2026-07-28"


@pytest.fixture(autouse=True)
def fresh_verdicts():
    forget_verdicts()  # every test meets its server for the first time
    yield
    forget_verdicts()


def posted(server: bs.ScriptedServer) -> list:
    return [r.body.get("method") for r in server.of("POST") if isinstance(r.body, dict)]


# ---- the probe over HTTP --------------------------------------------------------------------------------
@pytest.mark.parametrize("status", [400, 404, 405])
def test_auto_falls_back_from_the_probe_to_http_sse(status):
    """A probe refused with 400/404/405 says "legacy" without choosing the transport: the initialize that
    follows is refused the same way and falls back to the HTTP+SSE transport."""
    with bs.LegacyServer(status) as server:
        with Client(server.url, timeout=WAIT) as client:
            assert client.protocol_version == "2024-11-05"
            assert client.transport.transport == "sse"
            assert text_of(client.call_tool("echo")) == "legacy answer"
        first, second = server.requests[:2]
        assert (first.method, first.body["method"]) == ("POST", "server/discover")
        assert first.headers["mcp-protocol-version"] == ENVELOPE_VERSION
        assert (second.method, second.body["method"]) == ("POST", "initialize")


class SessionfulServer(bs.MCPServer):
    """A handshake-era Streamable HTTP server that refuses any request without its session, as the official
    SDKs do: 400 with a JSON-RPC error whose id is null."""

    def answer(self, ex: bs.Exchange, msg: dict) -> None:
        if ex.headers.get("mcp-session-id") != self.session_id:
            ex.send_json({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Missing session ID"}},
                         status=400)
            return
        super().answer(ex, msg)


def test_auto_takes_a_missing_session_refusal_for_a_handshake_server():
    with SessionfulServer() as server:
        with Client(server.url, timeout=WAIT) as client:
            assert client.protocol_version == "2025-11-25"
            assert client.transport.transport == "streamable"
            assert client.transport.session_id == bs.SESSION_ID
            assert text_of(client.call_tool("echo", {"a": 1})) == "echo {'a': 1}"
        assert posted(server)[:3] == ["server/discover", "initialize", "notifications/initialized"]


def test_auto_speaks_2026_to_a_envelope_server_and_keeps_the_verdict():
    with bs.EnvelopeServer() as server:
        with Client(server.url, timeout=WAIT) as client:
            assert client.protocol_version == ENVELOPE_VERSION
            assert client.server_info["name"] == "EnvelopeServer"
            assert text_of(client.call_tool("echo")) == "echo ran"
        with Client(server.url, timeout=WAIT) as again:  # the verdict is kept for the URL: no second probe
            assert again.protocol_version == ENVELOPE_VERSION
            assert text_of(again.call_tool("echo")) == "echo ran"
        assert posted(server).count("server/discover") == 1


class ErrorOnProbeServer(bs.EnvelopeServer):
    """Answers the first probe with ``status`` (and ``body``), then behaves."""

    def __init__(self, status: int, body: object = None) -> None:
        super().__init__()
        self.first = (status, body)

    def answer(self, ex: bs.Exchange, msg: dict) -> None:
        with self._lock:
            first, self.first = self.first, None
        if first is None or msg["method"] != "server/discover":
            super().answer(ex, msg)
        elif first[1] is None:
            ex.send(first[0], b"overloaded")
        else:
            ex.send_json({**first[1], "id": msg["id"]}, status=first[0])


@pytest.mark.parametrize("status", [500, 502, 503])
def test_a_5xx_on_the_probe_is_an_error_not_a_verdict(status):
    with ErrorOnProbeServer(status) as server:
        client = Client(server.url, timeout=WAIT)
        with pytest.raises(HTTPError) as caught:
            client.connect()
        client.close()
        assert caught.value.status == status and "overloaded" in caught.value.body
        assert posted(server) == ["server/discover"]  # no initialize: a 5xx says nothing about the era
        with Client(server.url, timeout=WAIT) as client:  # and nothing was remembered: this one probes
            assert client.protocol_version == ENVELOPE_VERSION


def test_a_32022_in_a_400_is_a_correction_not_a_refusal():
    refusal = {"jsonrpc": "2.0", "error": {"code": -32022, "message": "Unsupported protocol version",
                                           "data": {"supported": [ENVELOPE_VERSION, "2025-11-25"],
                                                    "requested": ENVELOPE_VERSION}}}
    with ErrorOnProbeServer(400, refusal) as server:
        with Client(server.url, timeout=WAIT) as client:
            assert client.protocol_version == ENVELOPE_VERSION
        assert posted(server)[:2] == ["server/discover", "server/discover"]


# ---- what a 2026-07-28 POST carries -----------------------------------------------------------------------
def test_each_post_carries_its_route_headers_and_no_session():
    with bs.EnvelopeServer() as server:
        with Client(server.url, protocol_version=ENVELOPE_VERSION, timeout=WAIT, headers={"X-Trace": "t1"}) as client:
            client.list_tools()
            client.call_tool("echo", {"x": 1})
            assert client.transport.transport == "streamable"
        records = server.requests
        assert {r.method for r in records} == {"POST"}  # no GET stream, no DELETE at close
        for record in records:
            assert record.headers["mcp-protocol-version"] == ENVELOPE_VERSION
            assert "mcp-session-id" not in record.headers
            assert record.headers["x-trace"] == "t1"
            assert record.headers["mcp-method"] == record.body["method"]
            assert record.body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == ENVELOPE_VERSION
        call = server.of("POST", "tools/call")[0]
        assert call.headers["mcp-name"] == "echo"


def test_a_json_rpc_error_in_a_4xx_body_is_the_answer():
    with bs.EnvelopeServer() as server:
        with Client(server.url, protocol_version=ENVELOPE_VERSION, timeout=WAIT) as client:
            with pytest.raises(RemoteError) as caught:
                client.request("no/such/method")
            assert caught.value.code == -32601 and "no/such/method" in caught.value.message
            assert text_of(client.call_tool("echo")) == "echo ran"  # the connection is still usable


class PlainRefusalServer(bs.EnvelopeServer):
    def answer(self, ex: bs.Exchange, msg: dict) -> None:
        if msg["method"] == "tools/call":
            ex.send(400, b"bad gateway config")  # no JSON-RPC body: an HTTP failure, with its status
        elif msg["method"] == "prompts/list":  # a JSON-RPC error for another id is not our answer
            ex.send_json(bs.rpc_error({"id": "other"}, -32602, "not yours"), status=400)
        else:
            super().answer(ex, msg)


def test_a_4xx_that_is_not_our_json_rpc_error_is_an_http_error():
    with PlainRefusalServer() as server:
        with Client(server.url, protocol_version=ENVELOPE_VERSION, timeout=WAIT) as client:
            with pytest.raises(HTTPError) as caught:
                client.call_tool("echo")
            assert caught.value.status == 400 and "bad gateway config" in caught.value.body
            with pytest.raises(HTTPError) as caught:
                client.list_prompts()
            assert caught.value.status == 400


# ---- broken response streams ---------------------------------------------------------------------------
@pytest.mark.parametrize("how", ["sse", "json"])
def test_a_broken_list_is_asked_again_once_with_a_new_id(how):
    with bs.BreakingEnvelopeServer({"tools/list": how}) as server:
        with Client(server.url, protocol_version=ENVELOPE_VERSION, timeout=WAIT) as client:
            assert [tool["name"] for tool in client.list_tools()] == ["echo", "lookup"]
        first, second = server.of("POST", "tools/list")
        assert first.body["id"] != second.body["id"]


def test_a_broken_call_of_a_tool_that_may_act_is_response_lost():
    with bs.BreakingEnvelopeServer({"tools/call": "sse"}) as server:
        with Client(server.url, protocol_version=ENVELOPE_VERSION, timeout=WAIT) as client:
            client.list_tools()
            with pytest.raises(ResponseLost, match="may or may not have run"):
                client.call_tool("echo")
            assert len(server.of("POST", "tools/call")) == 1  # never sent twice
            assert text_of(client.call_tool("echo")) == "echo ran"  # the client is still usable


def test_a_broken_call_of_a_read_only_tool_is_sent_again():
    with bs.BreakingEnvelopeServer({"tools/call": "sse"}) as server:
        with Client(server.url, protocol_version=ENVELOPE_VERSION, timeout=WAIT) as client:
            client.list_tools()  # lookup is annotated readOnlyHint
            assert text_of(client.call_tool("lookup")) == "lookup ran"
        assert len(server.of("POST", "tools/call")) == 2


def test_a_broken_probe_is_sent_again():
    with bs.BreakingEnvelopeServer({"server/discover": "sse"}) as server:
        with Client(server.url, timeout=WAIT) as client:
            assert client.protocol_version == ENVELOPE_VERSION
        assert posted(server)[:2] == ["server/discover", "server/discover"]


def test_a_broken_stream_of_a_handshake_session_is_not_response_lost():
    """ResponseLost is 2026-07-28's: a handshake-era stream without event ids fails as before."""
    with bs.DroppingServer() as server:
        with Client(server.url, protocol_version="2025-11-25", timeout=WAIT) as client:
            with pytest.raises(HTTPError) as caught:
                client.call_tool("echo")
            assert not isinstance(caught.value, ResponseLost)


# ---- cancellation is hanging up ------------------------------------------------------------------------
def test_cancel_closes_the_connection_and_sends_no_notification():
    with bs.HoldingEnvelopeServer() as server:
        with Client(server.url, protocol_version=ENVELOPE_VERSION, timeout=WAIT) as client:
            pending = client.send_request("tools/call", {"name": "echo", "arguments": {}})
            server.wait_for("POST", "tools/call")
            assert pending.cancel("no longer needed")
            assert server.hung_up.wait(WAIT)
            # The notification would have been POSTed before cancel() returned: there is none.
            assert server.of("POST", "notifications/cancelled") == []


def test_a_timeout_hangs_up_too():
    with bs.HoldingEnvelopeServer() as server:
        with Client(server.url, protocol_version=ENVELOPE_VERSION, timeout=WAIT) as client:
            with pytest.raises(RequestTimeout):
                client.call_tool("echo", timeout=0.3)
            assert server.hung_up.wait(WAIT)
            assert server.of("POST", "notifications/cancelled") == []


def test_cancel_reaches_a_handler_of_mcplites_server():
    """End to end: the server notices the hang-up and sets the handler's ``ctx.cancelled``."""
    import threading

    from mcplite import Context, Server

    server = Server("cancel-me")
    started, cancelled = threading.Event(), threading.Event()

    @server.tool
    def wait_forever(ctx: Context) -> str:
        started.set()
        if ctx.cancelled.wait(WAIT):
            cancelled.set()
        return "not cancelled"

    with serving(server, keepalive_interval=0.05) as http:
        with Client(http.url, protocol_version=ENVELOPE_VERSION, timeout=WAIT) as client:
            pending = client.send_request("tools/call", {"name": "wait_forever", "arguments": {}})
            assert started.wait(WAIT)
            pending.cancel()
            assert cancelled.wait(WAIT)
