"""Hand-written HTTP servers for testing the HTTP client: one correct baseline and many broken ones.

Each server is a `ScriptedServer` on 127.0.0.1, on a port the OS picks. Its behaviour is its `handle`
method, written against `Exchange`, which can answer JSON, stream SSE events (chunked), end a stream,
or drop the connection mid-way. Every request is recorded (`requests`), with its arrival time, and
every wait inside a server has a timeout so a failing test cannot hang.
"""

import json
import queue
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, NamedTuple, Optional

from support import WAIT
from support.http import ServerLoop

SESSION_ID = "session-1"


class Recorded(NamedTuple):
    method: str
    path: str
    headers: Dict[str, str]  # lower-case names
    body: Any  # the parsed JSON body, or None
    at: float  # time.monotonic() on arrival
    connection: int  # which TCP connection it came on (1, 2, ...)


class Exchange:
    """One request being answered by a test server."""

    def __init__(self, handler: BaseHTTPRequestHandler, record: Recorded) -> None:
        self._handler = handler
        self.method = record.method
        self.path = record.path
        self.headers = record.headers
        self.body = record.body

    @property
    def msg(self) -> Dict[str, Any]:
        return self.body if isinstance(self.body, dict) else {}

    def send(self, status: int, body: bytes = b"", content_type: Optional[str] = None,
             headers: Optional[Dict[str, str]] = None) -> None:
        h = self._handler
        h.send_response(status)
        if content_type:
            h.send_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            h.send_header(name, value)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)
        h.wfile.flush()

    def send_json(self, value: Any, status: int = 200, headers: Optional[Dict[str, str]] = None) -> None:
        self.send(status, json.dumps(value).encode(), "application/json", headers)

    def start_sse(self, headers: Optional[Dict[str, str]] = None) -> None:
        h = self._handler
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Cache-Control", "no-cache")
        h.send_header("Transfer-Encoding", "chunked")
        for name, value in (headers or {}).items():
            h.send_header(name, value)
        h.end_headers()
        h.wfile.flush()

    def write_chunk(self, data: bytes) -> None:
        self._handler.wfile.write(b"%X\r\n%s\r\n" % (len(data), data))
        self._handler.wfile.flush()

    def event(self, message: Any = None, *, id: Optional[str] = None, retry: Optional[int] = None,
              event: Optional[str] = None, data: Optional[str] = None) -> None:
        """One SSE event: ``message`` as JSON, or raw ``data`` ("" for a priming event)."""
        lines = []
        if event is not None:
            lines.append(f"event: {event}")
        if id is not None:
            lines.append(f"id: {id}")
        if retry is not None:
            lines.append(f"retry: {retry}")
        text = json.dumps(message) if message is not None else (data or "")
        lines.extend(f"data: {line}" for line in text.split("\n"))
        self.write_chunk(("\n".join(lines) + "\n\n").encode())

    def end(self) -> None:
        """End a chunked stream properly (the connection stays usable)."""
        self._handler.wfile.write(b"0\r\n\r\n")
        self._handler.wfile.flush()

    def drop(self) -> None:
        """Cut the connection without ending the response."""
        self._handler.close_connection = True
        try:
            self._handler.wfile.flush()
            self._handler.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients that hang up mid-request are what these tests are about


def result(msg: Dict[str, Any], value: Dict[str, Any]) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg.get("id"), "result": value}


def text_result(text: str) -> Dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


class ScriptedServer:
    """A threaded HTTP/1.1 server whose behaviour is `handle`; use it as a context manager."""

    path = "/mcp"

    def __init__(self) -> None:
        self.requests: List[Recorded] = []
        self.arrived: "queue.Queue[Recorded]" = queue.Queue()
        self.connections = 0
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                # Headers and body go out in separate writes: without this, Nagle holds the body back
                # until the client's delayed ACK (40 ms a response).
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                with owner._lock:
                    owner.connections += 1
                    self.connection_number = owner.connections

            def log_message(self, *args: Any) -> None:
                pass

            def _dispatch(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw
                record = Recorded(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body,
                                  time.monotonic(), self.connection_number)
                with owner._lock:
                    owner.requests.append(record)
                owner.arrived.put(record)
                try:
                    owner.handle(Exchange(self, record))
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

            do_GET = do_POST = do_DELETE = _dispatch

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self._loop = ServerLoop(self._server)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}{self.path}"

    def __enter__(self) -> "ScriptedServer":
        self._loop.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._loop.stop()

    def handle(self, ex: Exchange) -> None:
        raise NotImplementedError

    # ---- queries for tests ------------------------------------------------------------------------------
    def of(self, method: str, rpc_method: Optional[str] = None) -> List[Recorded]:
        """The recorded requests with this HTTP method (and JSON-RPC method, if given)."""
        with self._lock:
            return [r for r in self.requests if r.method == method
                    and (rpc_method is None or (isinstance(r.body, dict) and r.body.get("method") == rpc_method))]

    def wait_for(self, method: str, rpc_method: Optional[str] = None, timeout: float = WAIT) -> Recorded:
        """Wait for the first request matching (method, rpc_method), already arrived or not."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.of(method, rpc_method)
            if found:
                return found[0]
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no {method} {rpc_method or ''} request within {timeout} s")
            try:
                self.arrived.get(timeout=remaining)
            except queue.Empty:
                pass


class MCPServer(ScriptedServer):
    """A small but correct Streamable HTTP server: JSON answers, a session id, GET refused with 405.

    Subclasses change one behaviour each by overriding `answer` (requests) or `do_get`.
    """

    session_id: Optional[str] = SESSION_ID
    version = "2025-11-25"

    def handle(self, ex: Exchange) -> None:
        if ex.method == "GET":
            self.do_get(ex)
        elif ex.method == "DELETE":
            ex.send(200)
        elif "method" in ex.msg and "id" in ex.msg:
            if ex.msg["method"] == "initialize":
                self.initialize(ex)
            else:
                self.answer(ex, ex.msg)
        else:
            ex.send(202)  # notifications and responses

    def initialize(self, ex: Exchange) -> None:
        requested = ex.msg.get("params", {}).get("protocolVersion")
        version = requested if requested in ("2025-03-26", "2025-06-18", "2025-11-25") else self.version
        headers = {"MCP-Session-Id": self.session_id} if self.session_id else {}
        ex.send_json(result(ex.msg, {"protocolVersion": min(version, self.version), "capabilities": {"tools": {}},
                                     "serverInfo": {"name": type(self).__name__, "version": "1"}}), headers=headers)

    def answer(self, ex: Exchange, msg: Dict[str, Any]) -> None:
        if msg["method"] == "tools/call":
            ex.send_json(result(msg, text_result(f"echo {msg['params'].get('arguments')}")))
        elif msg["method"] == "tools/list":
            ex.send_json(result(msg, {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}))
        else:
            ex.send_json(result(msg, {}))

    def do_get(self, ex: Exchange) -> None:
        ex.send(405, b"Method Not Allowed")


class StatelessJSONServer(MCPServer):
    """No session id, JSON answers: the stateless benchmark shape."""

    session_id = None


class SSEServer(MCPServer):
    """Answers tools/call on an SSE stream: a log notification, a sampling request whose answer arrives as
    a separate POST, progress, then the response."""

    def __init__(self) -> None:
        super().__init__()
        self.client_answers: "queue.Queue[Dict[str, Any]]" = queue.Queue()

    def handle(self, ex: Exchange) -> None:
        msg = ex.msg
        if ex.method == "POST" and "method" not in msg and "id" in msg:
            self.client_answers.put(msg)  # the client's answer to our sampling request
            ex.send(202)
            return
        super().handle(ex)

    def answer(self, ex: Exchange, msg: Dict[str, Any]) -> None:
        if msg["method"] != "tools/call":
            super().answer(ex, msg)
            return
        ex.start_sse()
        ex.event({"jsonrpc": "2.0", "method": "notifications/message",
                  "params": {"level": "info", "data": "working"}})
        ex.event({"jsonrpc": "2.0", "id": "s-1", "method": "sampling/createMessage",
                  "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                             "maxTokens": 10}})
        answer = self.client_answers.get(timeout=WAIT)
        token = msg["params"].get("_meta", {}).get("progressToken")
        if token is not None:
            ex.event({"jsonrpc": "2.0", "method": "notifications/progress",
                      "params": {"progressToken": token, "progress": 1, "total": 1}})
        ex.event(result(msg, text_result(answer["result"]["content"]["text"])))
        ex.end()


class DroppingServer(MCPServer):
    """Starts an SSE answer, then cuts the connection before the response (no event ids: no resume)."""

    def answer(self, ex: Exchange, msg: Dict[str, Any]) -> None:
        if msg["method"] != "tools/call":
            super().answer(ex, msg)
            return
        ex.start_sse()
        ex.event({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}})
        ex.drop()


class BrokenChunkServer(MCPServer):
    """Starts an SSE answer, then sends bytes that are not valid chunked framing."""

    def answer(self, ex: Exchange, msg: Dict[str, Any]) -> None:
        if msg["method"] != "tools/call":
            super().answer(ex, msg)
            return
        ex.start_sse()
        ex._handler.wfile.write(b"this is not a chunk size\r\n\r\n")
        ex._handler.wfile.flush()
        ex.drop()


class WrongContentTypeServer(MCPServer):
    """Answers requests 200 with an HTML page."""

    def answer(self, ex: Exchange, msg: Dict[str, Any]) -> None:
        ex.send(200, b"<html>not MCP</html>", "text/html")


class GarbageSSEServer(MCPServer):
    """An SSE answer whose events are not JSON, ending without a response."""

    def answer(self, ex: Exchange, msg: Dict[str, Any]) -> None:
        ex.start_sse()
        ex.event(data="{this is not json")
        ex.write_chunk(b"\x00\xff garbage without a blank line")
        ex.end()


class BadJSONServer(MCPServer):
    """Answers requests with application/json that does not parse."""

    def answer(self, ex: Exchange, msg: Dict[str, Any]) -> None:
        ex.send(200, b'{"jsonrpc": "2.0", "id": ', "application/json")


class ErrorServer(MCPServer):
    """Answers tools/call with a 500 and a body explaining why."""

    def answer(self, ex: Exchange, msg: Dict[str, Any]) -> None:
        if msg["method"] == "tools/call":
            ex.send(500, b"database on fire", "text/plain")
        else:
            super().answer(ex, msg)


class SlowServer(MCPServer):
    """Takes `delay` seconds to answer tools/call (longer than the client's timeout in the tests)."""

    delay = 3.0

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()

    def answer(self, ex: Exchange, msg: Dict[str, Any]) -> None:
        if msg["method"] == "tools/call":
            self.release.wait(self.delay)
        super().answer(ex, msg)


class ExpiringServer(MCPServer):
    """Forgets the session after initialize: every later request with the session id gets 404."""

    def __init__(self) -> None:
        super().__init__()
        self.forgotten = threading.Event()

    def handle(self, ex: Exchange) -> None:
        if self.forgotten.is_set() and ex.headers.get("mcp-session-id") == self.session_id:
            ex.send(404, b"session not found", "text/plain")
            return
        super().handle(ex)


class ResumeServer(MCPServer):
    """2025-11-25 SSE polling: tools/call gets a priming event (id + retry) and the stream is closed before
    the response; the response is sent only on a GET carrying ``Last-Event-ID`` of that priming event.

    ``graceful`` ends the stream with the chunked terminator; otherwise the connection is cut.
    """

    retry = 300
    graceful = True

    def __init__(self) -> None:
        super().__init__()
        self.pending: Dict[str, Dict[str, Any]] = {}  # priming event id -> the request it belongs to
        self.closed_at: List[float] = []

    def answer(self, ex: Exchange, msg: Dict[str, Any]) -> None:
        if msg["method"] != "tools/call":
            super().answer(ex, msg)
            return
        event_id = f"stream-{msg['id']}-0"
        self.pending[event_id] = msg
        ex.start_sse()
        ex.event(id=event_id, retry=self.retry, data="")
        self.closed_at.append(time.monotonic())
        if self.graceful:
            ex.end()
        else:
            ex.drop()

    def do_get(self, ex: Exchange) -> None:
        last = ex.headers.get("last-event-id")
        if last not in self.pending:
            ex.send(405, b"no standalone stream")
            return
        msg = self.pending.pop(last)
        ex.start_sse()
        ex.event({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "resumed"}},
                 id=f"stream-{msg['id']}-1")
        ex.event(result(msg, text_result("resumed answer")), id=f"stream-{msg['id']}-2")
        ex.end()


class ListeningServer(MCPServer):
    """Offers the GET stream: sends a notification on it, then closes it with a retry; the client must
    reconnect with Last-Event-ID, after which a second notification comes and the stream stays open."""

    retry = 200

    def __init__(self) -> None:
        super().__init__()
        self.stop = threading.Event()

    def do_get(self, ex: Exchange) -> None:
        ex.start_sse()
        if ex.headers.get("last-event-id") is None:
            ex.event({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}, id="get-1", retry=self.retry)
            ex.end()
            return
        ex.event({"jsonrpc": "2.0", "method": "notifications/resources/list_changed"}, id="get-2")
        self.stop.wait(WAIT)
        ex.end()


class LegacyServer(ScriptedServer):
    """A 2024-11-05 HTTP+SSE server: POST to /mcp is refused (405); GET /mcp opens the event stream whose
    first event names the POST endpoint; answers come on the event stream."""

    def __init__(self, refuse_status: int = 405) -> None:
        super().__init__()
        self.refuse_status = refuse_status
        self.outbox: "queue.Queue[Optional[Dict[str, Any]]]" = queue.Queue()

    def handle(self, ex: Exchange) -> None:
        if ex.method == "GET" and ex.path == self.path:
            ex.start_sse()
            ex.event(event="endpoint", data="/messages?session_id=abc")
            while True:
                try:
                    msg = self.outbox.get(timeout=WAIT)
                except queue.Empty:
                    msg = None
                if msg is None:
                    ex.end()
                    return
                ex.event(msg, event="message")
        elif ex.method == "POST" and ex.path.startswith("/messages?session_id=abc"):
            ex.send(202, b"Accepted")
            msg = ex.msg
            if msg.get("method") == "initialize":
                self.outbox.put(result(msg, {"protocolVersion": "2024-11-05", "capabilities": {"tools": {}},
                                             "serverInfo": {"name": "legacy", "version": "1"}}))
            elif msg.get("method") == "tools/call":
                self.outbox.put({"jsonrpc": "2.0", "method": "notifications/message",
                                 "params": {"level": "info", "data": "legacy log"}})
                self.outbox.put(result(msg, text_result("legacy answer")))
            elif "id" in msg and "method" in msg:
                self.outbox.put(result(msg, {}))
        else:
            ex.send(self.refuse_status, b"not here")

    def __exit__(self, *exc: Any) -> None:
        self.outbox.put(None)
        super().__exit__(*exc)


class NoEndpointServer(ScriptedServer):
    """Refuses POST with 404 and answers GET with plain JSON: neither transport works."""

    def handle(self, ex: Exchange) -> None:
        if ex.method == "GET":
            ex.send_json({"error": "nothing here"})
        else:
            ex.send(404, b"no such endpoint")


# ---- revision 2026-07-28: no sessions, errors in 4xx bodies, streams that cannot be resumed -----------------
def rpc_error(msg: Dict[str, Any], code: int, message: str, data: Any = None) -> Dict[str, Any]:
    error: Dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": msg.get("id"), "error": error}


class EnvelopeServer(ScriptedServer):
    """A 2026-07-28 server: answers `server/discover`, lists two tools (``echo``; ``lookup``, read-only), and
    answers every request in JSON. Subclasses change one behaviour each by overriding `answer`."""

    version = "2026-07-28"
    TOOLS = [{"name": "echo", "inputSchema": {"type": "object"}},
             {"name": "lookup", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}}]

    def handle(self, ex: Exchange) -> None:
        msg = ex.msg
        if ex.method != "POST":
            ex.send(405, b"POST only", headers={"Allow": "POST"})
        elif "method" in msg and "id" in msg:
            self.answer(ex, msg)
        else:
            ex.send(202)

    def answer(self, ex: Exchange, msg: Dict[str, Any]) -> None:
        method = msg["method"]
        meta = {"resultType": "complete"}
        if method == "server/discover":
            ex.send_json(result(msg, {**meta, "supportedVersions": [self.version], "capabilities": {"tools": {}},
                                      "serverInfo": {"name": type(self).__name__, "version": "1"}}))
        elif method == "tools/list":
            ex.send_json(result(msg, {**meta, "tools": self.TOOLS}))
        elif method == "tools/call":
            ex.send_json(result(msg, {**meta, **text_result(f"{msg['params']['name']} ran")}))
        else:
            ex.send_json(rpc_error(msg, -32601, f"Method not found: {method}"), status=404)


class BreakingEnvelopeServer(EnvelopeServer):
    """Breaks the answer to the first request of each method named in ``breaks``: ``"sse"`` starts an SSE
    stream and cuts it before the response; ``"json"`` cuts a JSON body half-way. Later requests are answered."""

    def __init__(self, breaks: Dict[str, str]) -> None:
        super().__init__()
        self.breaks = dict(breaks)

    def answer(self, ex: Exchange, msg: Dict[str, Any]) -> None:
        with self._lock:
            how = self.breaks.pop(msg["method"], None)
        if how == "sse":
            ex.start_sse()
            ex.event({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}})
            ex.drop()
        elif how == "json":
            body = json.dumps(result(msg, {"tools": []})).encode()
            h = ex._handler
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.wfile.write(body[: len(body) // 2])
            ex.drop()
        else:
            super().answer(ex, msg)


class HoldingEnvelopeServer(EnvelopeServer):
    """Starts an SSE answer to tools/call and holds it until the client hangs up, which sets ``hung_up``."""

    def __init__(self) -> None:
        super().__init__()
        self.hung_up = threading.Event()

    def answer(self, ex: Exchange, msg: Dict[str, Any]) -> None:
        if msg["method"] != "tools/call":
            super().answer(ex, msg)
            return
        try:
            ex.start_sse()
            ex.write_chunk(b": held\n\n")
            ex._handler.connection.settimeout(WAIT)
            ex._handler.rfile.read(1)  # b"" (or an error) once the client closes its end
        except OSError:
            pass  # the client hung up before (or while) we wrote: a write fails instead
        self.hung_up.set()
        ex._handler.close_connection = True
