"""The HTTP client transport against deliberately broken servers (tests/broken_servers.py), over real
sockets on 127.0.0.1. Every wait has a timeout; the slow cases check how long failing took."""

import http.client
import queue
import re
import shutil
import socket
import ssl
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import urllib.parse
from typing import Any, Dict, List, NamedTuple

import pytest

import broken_servers as bs
from mcplite import Client, ConnectionClosed, Context, HTTPError, RequestTimeout, Server, SessionExpired
from mcplite.errors import RemoteProtocolError
from mcplite.protocol import jsonrpc
from mcplite.protocol.http_rules import Route
from mcplite.transports.http_client import HTTPClientTransport, HTTPRequest, HTTPResponse
from mcplite.transports.http_client.pool import ConnectionPool
from mcplite.transports.http_client.streamable import StreamableHTTP
from support import run_concurrently, text_of, wait_until
from support.http import ServerLoop, serving

WAIT = bs.WAIT
#: These tests read the handshake era's HTTP transport (sessions, GET streams, resuming); 2026-07-28's is in
#: test_http_client_envelope.py.
HANDSHAKE = "2025-11-25"


def sampled(params: Dict[str, Any]) -> Dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "sampled text"}, "model": "test"}


# ---- a correct server -----------------------------------------------------------------------------------
def test_json_answers_carry_session_and_version_headers():
    with bs.MCPServer() as server:
        with Client(server.url, headers={"X-Trace": "t1"}, timeout=WAIT, protocol_version=HANDSHAKE) as client:
            assert text_of(client.call_tool("echo", {"a": 1})) == "echo {'a': 1}"
            assert client.session.revision.version == "2025-11-25"
            transport = client.transport
            assert transport.session_id == bs.SESSION_ID and transport.protocol_version == "2025-11-25"
            server.wait_for("GET")  # the client asked for the GET stream (and was told 405)
        init, initialized, call = (server.of("POST", m)[0] for m in
                                   ("initialize", "notifications/initialized", "tools/call"))
        for request in (init, initialized, call):
            assert request.headers["accept"] == "application/json, text/event-stream"
            assert request.headers["content-type"] == "application/json"
            assert request.headers["x-trace"] == "t1"
        assert "mcp-session-id" not in init.headers and "mcp-protocol-version" not in init.headers
        for request in (initialized, call, server.of("GET")[0]):
            assert request.headers["mcp-session-id"] == bs.SESSION_ID
            assert request.headers["mcp-protocol-version"] == "2025-11-25"
        assert server.of("GET")[0].headers["accept"] == "text/event-stream"
        delete = server.wait_for("DELETE")
        assert delete.headers["mcp-session-id"] == bs.SESSION_ID


def test_sequential_calls_reuse_one_connection():
    with bs.StatelessJSONServer() as server:
        with Client(server.url, timeout=WAIT, protocol_version=HANDSHAKE) as client:
            for i in range(30):
                assert text_of(client.call_tool("echo", {"i": i})) == f"echo {{'i': {i}}}"
        posts = server.of("POST")
        assert len(posts) == 33  # initialize, initialized, 30 calls, and one tools/list for output schemas
        # The GET for the listening stream runs alongside the first calls and may take a second connection.
        assert len({r.connection for r in server.requests}) <= 2
        assert len({r.connection for r in posts[-20:]}) == 1
        assert all("mcp-session-id" not in r.headers for r in posts)
        assert server.of("DELETE") == []  # no session, nothing to end


def test_concurrent_calls_use_a_bounded_pool():
    with bs.StatelessJSONServer() as server:
        with Client(server.url, timeout=WAIT, protocol_version=HANDSHAKE, pool_size=2) as client:

            def work(n: int) -> None:
                for i in range(5):
                    assert text_of(client.call_tool("echo", {"n": n, "i": i})) == f"echo {{'n': {n}, 'i': {i}}}"

            run_concurrently(work, range(8))
            idle = client.transport.connections.idle_counts()
            assert idle and all(count <= 2 for count in idle.values())
        assert len(server.of("POST", "tools/call")) == 40


def test_no_version_header_for_2025_03_26():
    class OldServer(bs.MCPServer):
        version = "2025-03-26"

    with OldServer() as server:
        with Client(server.url, timeout=WAIT, protocol_version=HANDSHAKE) as client:
            client.call_tool("echo")
            assert client.session.revision.version == "2025-03-26"
        assert all("mcp-protocol-version" not in r.headers for r in server.requests)
        assert server.of("POST", "tools/call")[0].headers["mcp-session-id"] == bs.SESSION_ID


def test_sse_answer_with_server_request_log_and_progress():
    logs: "queue.Queue[Any]" = queue.Queue()
    progress: List[Any] = []
    with bs.SSEServer() as server:
        with Client(server.url, timeout=WAIT, protocol_version=HANDSHAKE, sampling=sampled, on_log=logs.put) as client:
            result = client.call_tool("echo", progress=lambda p, total, message: progress.append((p, total)))
            assert text_of(result) == "sampled text"
            assert progress == [(1, 1)]
            assert logs.get(timeout=WAIT)["data"] == "working"
        answer = [r for r in server.of("POST") if isinstance(r.body, dict) and r.body.get("id") == "s-1"]
        assert answer and answer[0].body["result"]["model"] == "test"
        assert answer[0].headers["mcp-session-id"] == bs.SESSION_ID


def test_tolerates_200_for_notifications_and_400_for_get_and_delete():
    class LaxServer(bs.MCPServer):
        def handle(self, ex: bs.Exchange) -> None:
            if ex.method in ("GET", "DELETE"):
                ex.send(400, b"bad request")
            elif "id" not in ex.msg:
                ex.send_json({"ok": True})
            else:
                super().handle(ex)

    with LaxServer() as server:
        with Client(server.url, timeout=WAIT, protocol_version=HANDSHAKE) as client:
            client.ping()
            server.wait_for("GET")
        server.wait_for("DELETE")


def test_stale_keep_alive_connection_is_replaced():
    class ClosingServer(bs.StatelessJSONServer):
        def handle(self, ex: bs.Exchange) -> None:
            super().handle(ex)
            ex._handler.close_connection = True  # closes after answering, without saying so

    with ClosingServer() as server:
        with Client(server.url, timeout=WAIT, protocol_version=HANDSHAKE) as client:
            for _ in range(3):
                client.ping()
        assert len(server.of("POST", "ping")) == 3


# ---- broken servers -------------------------------------------------------------------------------------
def test_stream_dropped_before_the_answer_fails_the_request():
    with bs.DroppingServer() as server, Client(server.url, timeout=WAIT, protocol_version=HANDSHAKE) as client:
        started = time.monotonic()
        with pytest.raises(HTTPError) as info:
            client.call_tool("echo")
        assert time.monotonic() - started < 5
        assert info.value.status == 0
        assert "no event id" in str(info.value)
        client.ping()  # the session survives one broken stream


def test_broken_chunked_framing_fails_the_request():
    with bs.BrokenChunkServer() as server, Client(server.url, timeout=WAIT, protocol_version=HANDSHAKE) as client:
        with pytest.raises(HTTPError) as info:
            client.call_tool("echo")
        assert info.value.status == 0


def http_failure(info: Any, status: int) -> Dict[str, Any]:
    """A request's HTTP failure reaches its caller as an HTTPError carrying the status and body."""
    assert isinstance(info.value, HTTPError) and info.value.status == status
    return {"status": info.value.status, "body": info.value.body}


def test_wrong_content_type_fails_the_request():
    with bs.WrongContentTypeServer() as server, Client(server.url, timeout=WAIT, protocol_version=HANDSHAKE) as client:
        with pytest.raises(HTTPError) as info:
            client.ping()
        assert http_failure(info, 200)["body"] == "<html>not MCP</html>"
        assert "text/html" in str(info.value)


def test_wrong_content_type_for_initialize_is_an_http_error():
    class HTMLServer(bs.MCPServer):
        def initialize(self, ex: bs.Exchange) -> None:
            ex.send(200, b"<html>login page</html>", "text/html")

    with HTMLServer() as server:
        with pytest.raises(HTTPError) as info:
            Client(server.url, timeout=WAIT, protocol_version=HANDSHAKE).connect()
        assert info.value.status == 200 and info.value.body == "<html>login page</html>"


def test_garbage_sse_fails_the_request_without_hanging():
    class GarbageAfterInit(bs.GarbageSSEServer):
        def answer(self, ex: bs.Exchange, msg: Dict[str, Any]) -> None:
            if msg["method"] == "tools/call":
                super().answer(ex, msg)
            else:
                bs.MCPServer.answer(self, ex, msg)

    with GarbageAfterInit() as server, Client(server.url, timeout=WAIT, protocol_version=HANDSHAKE) as client:
        started = time.monotonic()
        with pytest.raises(HTTPError) as info:
            client.call_tool("echo")
        assert info.value.status == 0
        assert time.monotonic() - started < 5


def test_json_that_does_not_parse_fails_the_request():
    with bs.BadJSONServer() as server, Client(server.url, timeout=WAIT, protocol_version=HANDSHAKE) as client:
        with pytest.raises(HTTPError) as info:
            client.ping()
        http_failure(info, 200)
        assert "does not parse" in str(info.value)


def test_server_error_carries_status_and_body():
    with bs.ErrorServer() as server, Client(server.url, timeout=WAIT, protocol_version=HANDSHAKE) as client:
        with pytest.raises(HTTPError) as info:
            client.call_tool("echo")
        assert http_failure(info, 500)["body"] == "database on fire"
        assert "HTTP 500" in str(info.value) and "database on fire" in str(info.value)
        client.ping()


def test_failed_notification_raises_http_error():
    class RefusesNotifications(bs.MCPServer):
        def handle(self, ex: bs.Exchange) -> None:
            if ex.msg.get("method") == "notifications/roots/list_changed":
                ex.send(503, b"busy", "text/plain")
            else:
                super().handle(ex)

    with RefusesNotifications() as server, Client(server.url, timeout=WAIT, protocol_version=HANDSHAKE) as client:
        with pytest.raises(HTTPError) as info:
            client.notify("notifications/roots/list_changed")
        assert info.value.status == 503 and info.value.body == "busy"


def test_silent_server_times_out_at_the_http_timeout():
    with bs.SlowServer() as server:
        with Client(server.url, timeout=0.5, protocol_version=HANDSHAKE) as client:
            started = time.monotonic()
            with pytest.raises(HTTPError) as info:
                client.call_tool("echo", timeout=WAIT)
            assert 0.4 < time.monotonic() - started < 2.5
            http_failure(info, 0)
            assert "no response within 0.5 s" in str(info.value)
            server.release.set()


def test_call_timeout_and_cancel_work_while_the_server_is_silent():
    with bs.SlowServer() as server, Client(server.url, timeout=WAIT, protocol_version=HANDSHAKE) as client:
        server.wait_for("GET")
        client.ping()  # so the call goes out on a kept-alive connection, which a stale one would be retried on
        started = time.monotonic()
        with pytest.raises(RequestTimeout):
            client.call_tool("echo", timeout=0.3)
        assert time.monotonic() - started < 2
        cancelled = server.wait_for("POST", "notifications/cancelled")
        assert cancelled.body["params"]["requestId"] == server.of("POST", "tools/call")[0].body["id"]
        pending = client.start_tool_call("echo")  # returns at once: the answer is awaited elsewhere
        assert not pending.done() and pending.cancel()
        assert client.transport.dialect.awaiting == frozenset()
        server.release.set()
        client.ping()
        assert len(server.of("POST", "tools/call")) == 2  # an interrupted POST is not sent again


def test_connection_refused_is_an_http_error():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    with pytest.raises(HTTPError) as info:
        Client(f"http://127.0.0.1:{port}/mcp", timeout=WAIT, protocol_version=HANDSHAKE).connect()
    assert info.value.status == 0


def test_expired_session_raises_and_ends_the_session():
    with bs.ExpiringServer() as server:
        client = Client(server.url, timeout=WAIT, protocol_version=HANDSHAKE).connect()
        server.forgotten.set()
        # A request learns it from its reader thread: the session ends, with SessionExpired as the reason.
        with pytest.raises(ConnectionClosed, match="start a new session"):
            client.call_tool("echo")
        reason = client.session.close_reason
        assert isinstance(reason, SessionExpired) and reason.status == 404 and reason.body == "session not found"
        with pytest.raises(ConnectionClosed):
            client.ping()
        client.close()
        assert server.of("DELETE") == []  # nothing left to delete


def test_expired_session_raises_from_a_notification():
    with bs.ExpiringServer() as server:
        client = Client(server.url, timeout=WAIT, protocol_version=HANDSHAKE).connect()
        server.forgotten.set()
        with pytest.raises(SessionExpired) as info:
            client.notify("notifications/roots/list_changed")
        assert info.value.status == 404
        assert client.session.is_closed
        client.close()


def test_invalid_session_id_is_refused():
    class BadIdServer(bs.MCPServer):
        session_id = "has space"

    with BadIdServer() as server:
        with pytest.raises(RemoteProtocolError):
            Client(server.url, timeout=WAIT, protocol_version=HANDSHAKE).connect()


# ---- resuming -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("graceful", [True, False], ids=["ended", "cut"])
def test_dropped_answer_stream_is_resumed_after_retry(graceful):
    class Server(bs.ResumeServer):
        pass

    Server.graceful = graceful
    logs: "queue.Queue[Any]" = queue.Queue()
    with Server() as server, Client(server.url, timeout=WAIT, protocol_version=HANDSHAKE, on_log=logs.put) as client:
        assert text_of(client.call_tool("echo")) == "resumed answer"
        call = server.of("POST", "tools/call")[0]
        resume = [r for r in server.of("GET") if r.headers.get("last-event-id")][0]
        assert resume.headers["last-event-id"] == f"stream-{call.body['id']}-0"
        assert resume.headers["mcp-session-id"] == bs.SESSION_ID
        delay = resume.at - server.closed_at[0]
        assert 0.25 <= delay < 0.3 + 0.4, delay  # the server's retry (300 ms), not the default
        assert logs.get(timeout=WAIT)["data"] == "resumed"


def test_refused_resume_fails_the_request_with_the_status():
    class NoResume(bs.ResumeServer):
        retry = 50

        def do_get(self, ex: bs.Exchange) -> None:
            ex.send(405, b"cannot resume here")

    with NoResume() as server, Client(server.url, timeout=WAIT, protocol_version=HANDSHAKE) as client:
        with pytest.raises(HTTPError) as info:
            client.call_tool("echo")
        assert info.value.status == 405 and info.value.body == "cannot resume here"


def test_default_retry_is_used_when_the_server_sends_none():
    class NoRetry(bs.ResumeServer):
        retry = None

    with NoRetry() as server, Client(server.url, timeout=WAIT, protocol_version=HANDSHAKE) as client:
        assert text_of(client.call_tool("echo")) == "resumed answer"
        resume = [r for r in server.of("GET") if r.headers.get("last-event-id")][0]
        assert 0.95 <= resume.at - server.closed_at[0] < 1.6


def test_get_stream_delivers_and_reconnects_with_last_event_id():
    changed: "queue.Queue[str]" = queue.Queue()
    with bs.ListeningServer() as server:
        with Client(server.url, timeout=WAIT, protocol_version=HANDSHAKE, on_list_changed=changed.put):
            assert changed.get(timeout=WAIT) == "tools"
            assert changed.get(timeout=WAIT) == "resources"
            first, second = server.of("GET")[:2]
            assert "last-event-id" not in first.headers
            assert second.headers["last-event-id"] == "get-1"
            assert second.at - first.at >= 0.2
            time.sleep(1.0)  # the open GET stream is kept, not dropped and reconnected
            assert len(server.of("GET")) == 2
            server.stop.set()


def test_session_timeout_cancels_and_stops_the_stream():
    class Silent(bs.MCPServer):
        def answer(self, ex: bs.Exchange, msg: Dict[str, Any]) -> None:
            if msg["method"] != "tools/call":
                super().answer(ex, msg)
                return
            ex.start_sse()
            ex.event(id="only-0", data="")
            self.wait_for("POST", "notifications/cancelled")
            time.sleep(0.2)  # a moment for the client to stop reading before the stream ends
            ex.end()

    with Silent() as server, Client(server.url, timeout=WAIT, protocol_version=HANDSHAKE) as client:
        with pytest.raises(RequestTimeout):
            client.call_tool("echo", timeout=0.3)
        cancelled = server.wait_for("POST", "notifications/cancelled")
        assert cancelled.body["params"]["requestId"] == server.of("POST", "tools/call")[0].body["id"]
        assert client.transport.dialect.awaiting == frozenset()
        client.ping()
    assert not [r for r in server.of("GET") if r.headers.get("last-event-id")]  # never resumed


def test_close_fails_a_request_waiting_on_a_stream():
    class Hanging(bs.MCPServer):
        def answer(self, ex: bs.Exchange, msg: Dict[str, Any]) -> None:
            if msg["method"] != "tools/call":
                super().answer(ex, msg)
                return
            ex.start_sse()
            ex.event(id="h-0", data="")
            time.sleep(WAIT / 2)

    with Hanging() as server:
        client = Client(server.url, timeout=WAIT, protocol_version=HANDSHAKE).connect()
        pending = client.start_tool_call("echo")
        server.wait_for("POST", "tools/call")
        started = time.monotonic()
        client.close()
        with pytest.raises(ConnectionClosed):
            pending.result(WAIT)
        assert time.monotonic() - started < 2
        client.close()  # idempotent


# ---- the legacy HTTP+SSE transport ----------------------------------------------------------------------
@pytest.mark.parametrize("status", [400, 404, 405])
def test_falls_back_to_http_sse(status):
    logs: "queue.Queue[Any]" = queue.Queue()
    with bs.LegacyServer(status) as server:
        with Client(server.url, timeout=WAIT, protocol_version=HANDSHAKE, on_log=logs.put) as client:
            assert client.transport.transport == "sse"
            assert client.session.revision.version == "2024-11-05"
            assert text_of(client.call_tool("echo")) == "legacy answer"
            assert logs.get(timeout=WAIT)["data"] == "legacy log"
        first = server.requests[0]
        assert (first.method, first.path, first.body["method"]) == ("POST", "/mcp", "initialize")
        assert server.requests[1].method == "GET"
        resent = server.of("POST", "initialize")[1]
        assert resent.path == "/messages?session_id=abc" and resent.body == first.body


def test_forced_sse_transport_never_posts_to_the_url():
    with bs.LegacyServer() as server:
        transport = HTTPClientTransport(server.url, timeout=WAIT, transport="sse")
        with Client(transport, protocol_version=HANDSHAKE) as client:
            client.ping()
        assert all(r.path != "/mcp" for r in server.of("POST"))


def test_forced_streamable_transport_does_not_fall_back():
    with bs.LegacyServer() as server:
        with pytest.raises(HTTPError) as info:
            transport = HTTPClientTransport(server.url, timeout=WAIT, transport="streamable")
            Client(transport, protocol_version=HANDSHAKE).connect()
        assert info.value.status == 405
        assert server.of("GET") == []


def test_failed_fallback_reports_both_failures():
    with bs.NoEndpointServer() as server:
        with pytest.raises(HTTPError) as info:
            Client(server.url, timeout=WAIT, protocol_version=HANDSHAKE).connect()
        assert info.value.status == 404
        assert "HTTP+SSE fallback failed" in str(info.value)


def test_legacy_endpoint_on_another_origin_is_refused():
    class Elsewhere(bs.LegacyServer):
        def handle(self, ex: bs.Exchange) -> None:
            if ex.method == "GET":
                ex.start_sse()
                ex.event(event="endpoint", data="http://evil.example/messages")
                ex.end()
            else:
                ex.send(405)

    with Elsewhere() as server:
        with pytest.raises(RemoteProtocolError):
            Client(HTTPClientTransport(server.url, timeout=WAIT, transport="sse"), protocol_version=HANDSHAKE).connect()


def test_legacy_stream_end_closes_the_session():
    with bs.LegacyServer() as server:
        client = Client(server.url, timeout=WAIT, protocol_version=HANDSHAKE).connect()
        server.outbox.put(None)  # the server ends its event stream
        assert client.session.closed.wait(WAIT)
        assert isinstance(client.session.close_reason, ConnectionClosed)
        client.close()


# ---- options --------------------------------------------------------------------------------------------
def test_options_are_checked():
    with pytest.raises(ValueError):
        HTTPClientTransport("ftp://host/mcp")
    with pytest.raises(ValueError):
        HTTPClientTransport("http://host/mcp", transport="websocket")


# ---- a dialect driven through its DialectHost: the route decides, the message is not read -------------------
class Host:
    """A `DialectHost` for driving a dialect without the transport: it records what the dialect hands back."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.timeout = WAIT
        self.sse_read_timeout = WAIT
        self.max_readers = 4
        self.headers = {"X-Trace": "host"}
        self.connections = ConnectionPool(ssl_context=None, cafile=None, pool_size=2, auth=None)
        self.delivered: "queue.Queue[Any]" = queue.Queue()
        self.failed: "queue.Queue[Any]" = queue.Queue()
        self.lost_with: "queue.Queue[Any]" = queue.Queue()

    def send_timeout(self) -> float:
        return self.timeout

    def deliver(self, value: Any) -> None:
        self.delivered.put(value)

    def deliver_invalid(self, exc: Any) -> None:
        self.delivered.put(exc)

    def fail(self, request_id: Any, exc: BaseException) -> None:
        self.failed.put((request_id, exc))

    def lost(self, exc: Any) -> None:
        self.lost_with.put(exc)


def send(dialect: StreamableHTTP, message: Dict[str, Any], route: Route) -> None:
    dialect.send(message, jsonrpc.encode(message).encode("utf-8"), route)


def test_a_mode_takes_the_session_steps_and_headers_from_the_route():
    initialize = jsonrpc.request(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                                   "clientInfo": {"name": "t", "version": "1"}})
    initialized = jsonrpc.notification("notifications/initialized")
    # Not the version the server answers with: the headers come from the route, never from an answer.
    version = {"MCP-Protocol-Version": "2025-06-18"}
    with bs.MCPServer() as server:
        host = Host(server.url)
        dialect = StreamableHTTP(host)
        send(dialect, initialize, Route("initialize", 1, opens_session=True))
        assert host.delivered.get_nowait()["result"]["protocolVersion"] == "2025-11-25"  # before send returned
        assert dialect.session_id == bs.SESSION_ID and dialect.protocol_version is None
        assert server.of("GET") == []  # only a route that says so starts the listening stream
        send(dialect, initialized, Route("notifications/initialized", headers=version, starts_listening=True))
        assert dialect.protocol_version == "2025-06-18"
        server.wait_for("GET")
        send(dialect, jsonrpc.request(2, "ping"), Route("ping", 2, headers=version))
        assert host.delivered.get(timeout=WAIT)["id"] == 2
        dialect.close()
        host.connections.close()
        assert host.failed.empty() and host.lost_with.empty()
        first, *later = server.requests
        assert "mcp-protocol-version" not in first.headers and "mcp-session-id" not in first.headers
        assert [r.method for r in later] == ["POST", "GET", "POST", "DELETE"]
        for request in later:
            assert request.headers["mcp-protocol-version"] == "2025-06-18"
            assert request.headers["mcp-session-id"] == bs.SESSION_ID
            assert request.headers["x-trace"] == "host"


def test_a_mode_awaits_a_request_the_route_does_not_mark_as_opening_on_a_reader():
    # A message named initialize is, for the transport, whatever its route says: here an ordinary request,
    # whose refusal goes to its caller (fail), with no fallback and no session id.
    class Refusing(bs.MCPServer):
        def initialize(self, ex: bs.Exchange) -> None:
            ex.send(405, b"no")

    with Refusing() as server:
        host = Host(server.url)
        dialect = StreamableHTTP(host)
        send(dialect, jsonrpc.request(1, "initialize", {}), Route("initialize", 1))
        request_id, error = host.failed.get(timeout=WAIT)
        assert request_id == 1 and isinstance(error, HTTPError) and error.status == 405
        assert dialect.session_id is None
        dialect.close()
        host.connections.close()


def test_cancel_stops_awaiting_one_answer_and_sends_nothing():
    with bs.SlowServer() as server:
        host = Host(server.url)
        dialect = StreamableHTTP(host)
        send(dialect, jsonrpc.request(1, "tools/call", {"name": "echo"}), Route("tools/call", 1))
        server.wait_for("POST", "tools/call")
        assert dialect.awaiting == {1}
        dialect.cancel(1)
        dialect.cancel(1)  # idempotent, and an unknown id is no error
        assert dialect.awaiting == frozenset()
        assert [r.method for r in server.requests] == ["POST"]  # the session, not the dialect, tells the server
        server.release.set()
        dialect.close()
        host.connections.close()
        assert host.failed.empty()


class TokenAuth:
    """An auth flow in the httpx style: add a token; on 401, fetch a fresh one and retry once."""

    def __init__(self) -> None:
        self.token = "stale"
        self.seen: List[HTTPResponse] = []

    def auth_flow(self, request: HTTPRequest):
        response = yield request._replace(headers={**request.headers, "Authorization": f"Bearer {self.token}"})
        self.seen.append(response)
        if response.status == 401:
            self.token = "fresh"
            yield request._replace(headers={**request.headers, "Authorization": "Bearer fresh"})


def test_auth_flow_sees_and_signs_every_request():
    class Guarded(bs.MCPServer):
        def handle(self, ex: bs.Exchange) -> None:
            if ex.headers.get("authorization") != "Bearer fresh":
                ex.send(401, b"who are you", headers={"WWW-Authenticate": 'Bearer error="invalid_token"'})
                return
            super().handle(ex)

    auth = TokenAuth()
    with Guarded() as server:
        with Client(server.url, timeout=WAIT, protocol_version=HANDSHAKE, auth=auth) as client:
            assert text_of(client.call_tool("echo")) == "echo {}"
            server.wait_for("GET")
        server.wait_for("DELETE")
        assert auth.seen[0].status == 401 and auth.seen[0].body == b"who are you"
        assert auth.seen[0].headers["www-authenticate"] == 'Bearer error="invalid_token"'
        fresh = [r for r in server.requests if r.headers.get("authorization") == "Bearer fresh"]
        assert {r.method for r in fresh} == {"POST", "GET", "DELETE"}


def test_http_proxy_from_the_environment(monkeypatch):
    with bs.MCPServer() as proxy:
        monkeypatch.setenv("http_proxy", f"http://user:pa%20ss@{proxy.url.split('/')[2]}")
        monkeypatch.delenv("no_proxy", raising=False)
        monkeypatch.delenv("NO_PROXY", raising=False)
        with Client("http://mcp.invalid:8080/mcp", timeout=WAIT, protocol_version=HANDSHAKE) as client:
            client.ping()
        first = proxy.requests[0]
        assert first.path == "http://mcp.invalid:8080/mcp"  # the absolute form a proxy needs
        assert first.headers["host"] == "mcp.invalid:8080"
        assert first.headers["proxy-authorization"] == "Basic dXNlcjpwYSBzcw=="  # user:pa ss


def test_no_proxy_is_honoured(monkeypatch):
    with bs.StatelessJSONServer() as server:
        monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")  # nothing listens there
        monkeypatch.setenv("no_proxy", "127.0.0.1")
        with Client(server.url, timeout=WAIT, protocol_version=HANDSHAKE) as client:
            client.ping()
        assert server.of("POST", "ping")[0].path == "/mcp"


# ---- TLS ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a test certificate")
    directory = tmp_path_factory.mktemp("tls")
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=mcp-test",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)
    return str(cert), str(key)


class TLSServer(bs.StatelessJSONServer):
    def __init__(self, certificate) -> None:
        super().__init__()
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*certificate)
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)

    @property
    def url(self) -> str:
        return super().url.replace("http://", "https://")


def test_https_with_a_custom_ca_file(certificate):
    with TLSServer(certificate) as server:
        with Client(server.url, timeout=WAIT, protocol_version=HANDSHAKE, cafile=certificate[0]) as client:
            client.ping()
        context = ssl.create_default_context(cafile=certificate[0])
        with Client(server.url, timeout=WAIT, protocol_version=HANDSHAKE, ssl_context=context) as client:
            client.ping()
        with pytest.raises(HTTPError) as info:
            Client(server.url, timeout=WAIT, protocol_version=HANDSHAKE).connect()
        assert info.value.status == 0 and "CERTIFICATE_VERIFY_FAILED" in str(info.value)


class TunnelProxy:
    """A CONNECT-only proxy: records each tunnel's target and relays bytes both ways."""

    def __init__(self) -> None:
        self.targets: List[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_CONNECT(self) -> None:
                owner.targets.append(self.path)
                host, port = self.path.rsplit(":", 1)
                upstream = socket.create_connection((host, int(port)), timeout=WAIT)
                self.send_response(200, "Connection established")
                self.end_headers()
                self.wfile.flush()
                relay = threading.Thread(target=_pipe, args=(upstream, self.connection), daemon=True)
                relay.start()
                _pipe(self.connection, upstream)
                relay.join(WAIT)
                self.close_connection = True

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._loop = ServerLoop(self._server)

    def __enter__(self) -> "TunnelProxy":
        self._loop.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._loop.stop()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self._server.server_address[1]}"


def _pipe(source: socket.socket, target: socket.socket) -> None:
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            target.sendall(data)
    except OSError:
        pass
    finally:
        try:
            target.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def test_https_through_a_connect_proxy(certificate, monkeypatch):
    with TLSServer(certificate) as server, TunnelProxy() as proxy:
        monkeypatch.setenv("https_proxy", f"http://{proxy.address}")
        monkeypatch.delenv("no_proxy", raising=False)
        monkeypatch.delenv("NO_PROXY", raising=False)
        with Client(server.url, timeout=WAIT, protocol_version=HANDSHAKE, cafile=certificate[0]) as client:
            client.ping()
        assert proxy.targets and proxy.targets[0] == server.url.split("/")[2]
        assert server.of("POST", "ping")



# ---- against our own HTTP server ------------------------------------------------------------------------


class RealServer(NamedTuple):
    url: str
    mcp: Server
    events: Dict[str, threading.Event]  # "started" and "cancelled", set by the wait_for_cancel tool


def fixture_server(events: Dict[str, threading.Event]) -> Server:
    server = Server("real")

    @server.tool
    def add(a: int, b: int) -> str:
        """Add."""
        return str(a + b)

    @server.tool
    def chatty(ctx: Context) -> str:
        """Log and report progress before answering."""
        ctx.info("step one")
        ctx.progress(1, 2)
        ctx.progress(2, 2)
        return "done"

    @server.tool
    def ask(ctx: Context) -> str:
        """Ask the client's model."""
        return ctx.sample("what is up?")["content"]["text"]

    @server.tool
    def polled(ctx: Context) -> str:
        """Close the POST's stream before answering: the client must resume it."""
        closed = ctx.transport_info["close_sse_stream"]()
        ctx.info("after the close")
        return f"closed early: {closed}"

    @server.tool
    def wait_for_cancel(ctx: Context) -> str:
        """Block until the client cancels."""
        events["started"].set()
        if ctx.cancelled.wait(WAIT):
            events["cancelled"].set()
        return "cancelled" if ctx.cancelled.is_set() else "not cancelled"

    return server


@pytest.fixture
def real_server():
    events = {"started": threading.Event(), "cancelled": threading.Event()}
    server = fixture_server(events)
    with serving(server, sse_retry=100) as http:
        yield RealServer(http.url, server, events)


def test_real_server_json_fast_path_and_sse_switch(real_server):
    logs: "queue.Queue[Any]" = queue.Queue()
    progress: List[Any] = []
    with Client(real_server.url, timeout=WAIT, protocol_version=HANDSHAKE, sampling=sampled, on_log=logs.put) as client:
        transport = client.transport
        assert transport.transport == "streamable" and transport.session_id
        assert text_of(client.call_tool("add", {"a": 2, "b": 3})) == "5"
        result = client.call_tool("chatty", progress=lambda p, total, message: progress.append((p, total)))
        assert text_of(result) == "done" and progress == [(1, 2), (2, 2)]
        assert logs.get(timeout=WAIT)["data"] == "step one"
        assert text_of(client.call_tool("ask")) == "sampled text"


class Watching:
    """An ``auth`` object that changes nothing and notes every request the transport makes."""

    def __init__(self) -> None:
        self.requests: List[HTTPRequest] = []

    def auth_flow(self, request: HTTPRequest):
        self.requests.append(request)
        yield request


def test_real_server_stream_closed_early_is_resumed(real_server):
    watching = Watching()
    logs: "queue.Queue[Any]" = queue.Queue()
    with Client(real_server.url, timeout=WAIT, protocol_version=HANDSHAKE, on_log=logs.put, auth=watching) as client:
        assert text_of(client.call_tool("polled")) == "closed early: True"
        assert logs.get(timeout=WAIT)["data"] == "after the close"
    resumed = [r.headers["Last-Event-ID"] for r in watching.requests if "Last-Event-ID" in r.headers]
    assert len(resumed) == 1 and resumed[0]


def test_real_server_get_stream_carries_list_changes(real_server):
    changed: "queue.Queue[str]" = queue.Queue()
    with Client(real_server.url, timeout=WAIT, protocol_version=HANDSHAKE, on_list_changed=changed.put) as client:
        wait_until(lambda: client.transport.dialect.listening)  # the GET stream is open (primed)
        real_server.mcp.add_tool(lambda: "new", name="late")
        assert changed.get(timeout=WAIT) == "tools"
        assert "late" in [tool["name"] for tool in client.list_tools()]


def test_real_server_session_ends_on_close_and_expires(real_server):
    client = Client(real_server.url, timeout=WAIT, protocol_version=HANDSHAKE).connect()
    session_id = client.transport.session_id
    other = Client(real_server.url, timeout=WAIT, protocol_version=HANDSHAKE).connect()
    client.close()  # DELETE: the server forgets the session
    assert raw_ping(real_server.url, session_id) == 404
    # The other client's session is ended behind its back: its next call finds out.
    http_delete(real_server.url, other.transport.session_id, other.transport.protocol_version)
    with pytest.raises(ConnectionClosed, match="start a new session"):
        other.call_tool("add", {"a": 1, "b": 1})
    assert isinstance(other.session.close_reason, SessionExpired)
    other.close()


def raw_ping(url: str, session_id: str) -> int:
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=WAIT)
    conn.request("POST", parts.path, b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
                 {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                  "MCP-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"})
    status = conn.getresponse().status
    conn.close()
    return status


def http_delete(url: str, session_id: str, version: str) -> None:
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=WAIT)
    conn.request("DELETE", parts.path, headers={"MCP-Session-Id": session_id, "MCP-Protocol-Version": version})
    assert conn.getresponse().status == 200
    conn.close()


@pytest.mark.parametrize("version", ["2025-03-26", "2025-06-18", "2025-11-25"])
def test_real_server_each_streamable_revision(real_server, version):
    with Client(real_server.url, timeout=WAIT, protocol_version=version) as client:
        assert client.session.revision.version == version
        assert text_of(client.call_tool("add", {"a": 1, "b": 2})) == "3"
        assert text_of(client.call_tool("chatty")) == "done"
        expected = None if version == "2025-03-26" else version
        assert client.transport.protocol_version == expected


def test_real_server_stateless_and_json_response():
    with serving(fixture_server({}), stateless=True) as http:
        with Client(http.url, timeout=WAIT, protocol_version=HANDSHAKE) as client:
            assert client.transport.session_id is None
            assert text_of(client.call_tool("add", {"a": 20, "b": 22})) == "42"
    with serving(fixture_server({}), json_response=True) as http:
        with Client(http.url, timeout=WAIT, protocol_version=HANDSHAKE) as client:
            assert text_of(client.call_tool("chatty")) == "done"


def test_real_server_legacy_endpoint_by_fallback(real_server):
    sse_url = real_server.url.replace("/mcp", "/sse")
    with Client(sse_url, timeout=WAIT, protocol_version=HANDSHAKE, sampling=sampled) as client:
        assert client.transport.transport == "sse"
        assert text_of(client.call_tool("add", {"a": 1, "b": 1})) == "2"
        assert text_of(client.call_tool("ask")) == "sampled text"


def test_real_server_concurrent_calls(real_server):
    with Client(real_server.url, timeout=WAIT, protocol_version=HANDSHAKE, sampling=sampled, pool_size=4) as client:

        def work(n: int) -> None:
            for i in range(10):
                assert text_of(client.call_tool("add", {"a": n, "b": i})) == str(n + i)
                assert text_of(client.call_tool("chatty")) == "done"
            assert text_of(client.call_tool("ask")) == "sampled text"

        run_concurrently(work, range(8), timeout=WAIT * 2)


def test_real_server_cancel_reaches_the_handler(real_server):
    with Client(real_server.url, timeout=WAIT, protocol_version=HANDSHAKE) as client:
        pending = client.start_tool_call("wait_for_cancel")
        assert real_server.events["started"].wait(WAIT)
        assert pending.cancel("changed my mind")
        assert real_server.events["cancelled"].wait(WAIT)
        assert text_of(client.call_tool("add", {"a": 1, "b": 1})) == "2"


class InvalidInitializeAnswerServer(bs.MCPServer):
    """Answers ``initialize`` with a JSON value that is no JSON-RPC message (``{}``), as a misconfigured
    proxy or authorization front end might."""

    def initialize(self, ex: bs.Exchange) -> None:
        ex.send(200, b"{}", "application/json")


def test_an_invalid_answer_to_initialize_is_an_error_not_a_deadlock() -> None:
    # Found by the reliability suite's oauth-fuzz: the client answers an invalid message with an error, and
    # that reply was sent from inside the first send, which holds the lock that chooses the transport mode:
    # the thread waited on its own lock for ever. The reply cannot go anywhere before a session exists.
    outcome: "queue.Queue[BaseException]" = queue.Queue()

    def connect(url: str) -> None:
        try:
            with Client(url, timeout=1.0, protocol_version="2025-11-25"):
                pass
        except BaseException as exc:  # noqa: BLE001  (the test inspects it)
            outcome.put(exc)

    with InvalidInitializeAnswerServer() as server:
        threading.Thread(target=connect, args=(server.url,), daemon=True).start()
        raised = outcome.get(timeout=WAIT)
    assert isinstance(raised, HTTPError) and "no response to request" in str(raised), repr(raised)


@pytest.mark.parametrize("url, reason", [
    ("http://exa mple.com/mcp", "it holds a space or a control character"),
    ("http://127.0.0.1:8000/m\tcp", "it holds a space or a control character"),
    ("http://127.0.0.1:99999/mcp", "Port out of range"),
    ("http://127.0.0.1:port/mcp", "not a usable http(s) URL"),
    ("http://[::1/mcp", "Invalid IPv6 URL"),
    ("http:///mcp", "not an http(s) URL"),
])
def test_a_url_that_cannot_be_sent_is_a_value_error_when_the_client_is_made(url: str, reason: str) -> None:
    # Before: http.client's InvalidURL (not a ValueError) or a bare "Port out of range", at the first request.
    with pytest.raises(ValueError, match=re.escape(reason)) as info:
        Client(url)
    assert repr(url) in str(info.value)
